"""The ```python blocks of a Markdown file (the README, a docs page), each run and type-checked
on its own, as a user who copies one block would.

Each block runs in a fresh namespace and is type-checked as its own module: every name it uses
must be defined or imported in it. After a block runs, its `async def main()` is run, and so are
its `test_*` functions (async ones on asyncio and trio, Temporal's on asyncio alone; a
parametrized one once per case, as pytest would). Errors point at the file's lines.
"""

from __future__ import annotations

import ast
import functools
import inspect
import re
import subprocess
import sys
import types
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import anyio
import pytest
from attrs import frozen

PROJECT = Path(__file__).resolve().parents[2]
FENCE = re.compile(r"^```(?:python|py)[ \t]*\n(.*?)^```[ \t]*$", re.DOTALL | re.MULTILINE)
BACKENDS = ("asyncio", "trio")


@frozen
class Block:
    """One fenced Python block: the file it is in, its position there and its code."""

    path: Path
    number: int
    line: int  # the file's line of the block's first line of code
    code: str

    @property
    def where(self) -> str:
        """The file, relative to the project (README.md, docs/tools.md)."""
        return self.path.relative_to(PROJECT).as_posix()

    @property
    def module(self) -> str:
        """The block's module name when it is type-checked: unique across files."""
        stem = re.sub(r"\W", "_", self.path.relative_to(PROJECT).with_suffix("").as_posix())
        return f"{stem.lower()}_block_{self.number:02d}"

    def entry_points(self) -> list[str]:
        """Top-level `main` and `test_*` functions, which the test calls after running the block."""
        return [
            node.name
            for node in ast.parse(self.code).body
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
            and (node.name == "main" or node.name.startswith("test_"))
        ]

    def is_async(self) -> bool:
        """True when an entry point is a coroutine function (run on each backend)."""
        return any(
            isinstance(node, ast.AsyncFunctionDef) and node.name in self.entry_points()
            for node in ast.parse(self.code).body
        )

    def asyncio_only(self) -> bool:
        """True when the block uses Temporal, whose SDK runs on asyncio alone (ADR-0033)."""
        return (
            re.search(r"^\s*(from|import) (temporalio|reactloop\.temporal)\b", self.code, re.M)
            is not None
        )

    def private_imports(self) -> list[str]:
        """Modules of reactloop the block imports that are private (a part starting with `_`)."""
        names: list[str] = []
        for node in ast.walk(ast.parse(self.code)):
            if isinstance(node, ast.Import):
                names += [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module is not None:
                names += [node.module, *(f"{node.module}.{alias.name}" for alias in node.names)]
        return [
            name
            for name in names
            if name.split(".")[0] == "reactloop"
            and any(part.startswith("_") and part != "__version__" for part in name.split("."))
        ]


def blocks_of(path: Path) -> list[Block]:
    text = path.read_text(encoding="utf-8")
    return [
        Block(path, number, text.count("\n", 0, match.start(1)) + 1, match.group(1))
        for number, match in enumerate(FENCE.finditer(text), start=1)
    ]


def runs(blocks: Iterable[Block]) -> list[Any]:
    """pytest params: each block once, or once per backend when it has a coroutine to run."""
    return [
        pytest.param(
            block, backend, id=f"{block.where}-block{block.number}-line{block.line}-{backend}"
        )
        for block in blocks
        for backend in _backends(block)
    ]


def _backends(block: Block) -> tuple[str, ...]:
    """Where the block runs: each backend for a coroutine, asyncio alone for Temporal's."""
    if not block.is_async():
        return ("sync",)
    return ("asyncio",) if block.asyncio_only() else BACKENDS


def run_block(block: Block, backend: str) -> None:
    """Run the block as a fresh module, then its entry points; tracebacks show file lines.

    The module is in `sys.modules` while it runs, as a copied script's would be, so that what
    looks a class's annotations up by its module (`typing.get_type_hints`) finds them."""
    padded = "\n" * (block.line - 1) + block.code
    module = types.ModuleType(block.module)
    namespace: dict[str, Any] = module.__dict__
    sys.modules[block.module] = module
    try:
        exec(compile(padded, str(block.path), "exec"), namespace)
        for name in block.entry_points():
            _call(namespace[name], backend, namespace)
    finally:
        del sys.modules[block.module]


def _marked_anyio(function: Callable[..., Any], namespace: dict[str, Any]) -> bool:
    """True when pytest would run this coroutine test: it, or its module, has the anyio mark."""
    marks = [*getattr(function, "pytestmark", []), *_as_list(namespace.get("pytestmark", []))]
    return any(getattr(mark, "name", None) == "anyio" for mark in marks)


def _as_list(marks: Any) -> list[Any]:
    return list(marks) if isinstance(marks, list | tuple) else [marks]


def _parameter_sets(function: Callable[..., Any]) -> list[dict[str, Any]]:
    """The arguments a test's `@pytest.mark.parametrize` marks give it, one set per case (one
    empty set for a test without them), as pytest would call it."""
    sets: list[dict[str, Any]] = [{}]
    for mark in _as_list(getattr(function, "pytestmark", [])):
        if getattr(mark, "name", None) != "parametrize":
            continue
        names, values = mark.args[0], mark.args[1]
        names = [n.strip() for n in names.split(",")] if isinstance(names, str) else list(names)
        cases = [dict(zip(names, v, strict=True)) if len(names) > 1 else {names[0]: v}
                 for v in values]  # fmt: skip
        sets = [{**given, **case} for given in sets for case in cases]
    return sets


def _call(function: Callable[..., Any], backend: str, namespace: dict[str, Any]) -> None:
    name = function.__name__
    for arguments in _parameter_sets(function):
        taken = set(inspect.signature(function).parameters)
        assert taken == set(arguments), f"{name} takes arguments its parametrize marks do not give"
        if inspect.iscoroutinefunction(function):
            if name.startswith("test_"):
                assert _marked_anyio(function, namespace), f"{name} needs @pytest.mark.anyio"
            anyio.run(functools.partial(function, **arguments), backend=backend)
        else:
            function(**arguments)


def mypy_strict(blocks: list[Block], folder: Path, cache: Path | None) -> tuple[bool, str]:
    """Type-check every block as its own module with `mypy --strict`: (passed, the report with
    each error at its file's line)."""
    files = {}
    for block in blocks:
        path = folder / f"{block.module}.py"
        path.write_text(block.code, encoding="utf-8")
        files[path.name] = block
    (folder / "mypy.ini").write_text("[mypy]\nstrict = True\n")
    cache_args = ["--cache-dir", str(cache)] if cache is not None else ["--no-incremental"]
    command = [sys.executable, "-m", "mypy", *cache_args, *files]
    checked = subprocess.run(command, cwd=folder, capture_output=True, text=True, check=False)
    report = re.sub(
        r"^(\w+_block_\d+\.py):(\d+):",
        lambda m: f"{files[m.group(1)].where}:{files[m.group(1)].line + int(m.group(2)) - 1}:",
        checked.stdout,
        flags=re.MULTILINE,
    )
    return checked.returncode == 0, report + checked.stderr


def cache_dir(config: pytest.Config, name: str) -> Path | None:
    """A mypy cache kept between test runs (pytest's cache), unless the cache plugin is off."""
    cache = getattr(config, "cache", None)
    return None if cache is None else Path(cache.mkdir(name))
