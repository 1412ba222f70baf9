"""Every Python block of the README runs as written and passes `mypy --strict`, each on its own.

A user copies one block, so each block runs in a fresh namespace and is type-checked as its own
module: every name it uses must be defined or imported in it. After a block runs, its
`async def main()` is run, and so are its `test_*` functions (async ones on asyncio and trio).
Errors point at README lines.
"""

from __future__ import annotations

import ast
import inspect
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from attrs import frozen

README = Path(__file__).resolve().parents[1] / "README.md"
FENCE = re.compile(r"^```(?:python|py)[ \t]*\n(.*?)^```[ \t]*$", re.DOTALL | re.MULTILINE)
BACKENDS = ("asyncio", "trio")


@frozen
class Block:
    """One fenced Python block: its position in the README and its code."""

    number: int
    line: int  # README line of the block's first line of code
    code: str

    @property
    def module(self) -> str:
        """The block's module name when it is type-checked."""
        return f"readme_block_{self.number:02d}"

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


def readme_blocks() -> list[Block]:
    text = README.read_text(encoding="utf-8")
    return [
        Block(number, text.count("\n", 0, match.start(1)) + 1, match.group(1))
        for number, match in enumerate(FENCE.finditer(text), start=1)
    ]


BLOCKS = readme_blocks()
RUNS = [
    pytest.param(block, backend, id=f"block{block.number}-line{block.line}-{backend}")
    for block in BLOCKS
    for backend in (BACKENDS if block.is_async() else ("sync",))
]


def test_the_readme_has_python_blocks() -> None:
    assert len(BLOCKS) >= 3, "the README's ```python blocks were not found"


def _marked_anyio(function: Callable[..., Any], namespace: dict[str, Any]) -> bool:
    """True when pytest would run this coroutine test: it, or its module, has the anyio mark."""
    marks = [*getattr(function, "pytestmark", []), *_as_list(namespace.get("pytestmark", []))]
    return any(getattr(mark, "name", None) == "anyio" for mark in marks)


def _as_list(marks: Any) -> list[Any]:
    return list(marks) if isinstance(marks, list | tuple) else [marks]


def _call(function: Callable[..., Any], backend: str, namespace: dict[str, Any]) -> None:
    name = function.__name__
    assert not inspect.signature(function).parameters, f"{name} takes arguments"
    if inspect.iscoroutinefunction(function):
        if name.startswith("test_"):
            assert _marked_anyio(function, namespace), f"{name} needs @pytest.mark.anyio"
        anyio.run(function, backend=backend)
    else:
        function()


@pytest.mark.parametrize(("block", "backend"), RUNS)
def test_a_readme_block_runs_on_its_own(block: Block, backend: str) -> None:
    padded = "\n" * (block.line - 1) + block.code  # tracebacks show README line numbers
    namespace: dict[str, Any] = {"__name__": block.module}
    exec(compile(padded, str(README), "exec"), namespace)
    for name in block.entry_points():
        _call(namespace[name], backend, namespace)


@pytest.mark.slow
def test_every_readme_block_passes_mypy_strict(
    tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    files = {}
    for block in BLOCKS:
        path = tmp_path / f"{block.module}.py"
        path.write_text(block.code, encoding="utf-8")
        files[path.name] = block
    (tmp_path / "mypy.ini").write_text("[mypy]\nstrict = True\n")
    cache = _cache_dir(request.config, "mypy-readme")
    cache_args = ["--cache-dir", str(cache)] if cache is not None else ["--no-incremental"]
    command = [sys.executable, "-m", "mypy", *cache_args, *files]
    checked = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, check=False)
    report = re.sub(
        r"^(readme_block_\d+\.py):(\d+):",
        lambda m: f"README.md:{files[m.group(1)].line + int(m.group(2)) - 1}:",
        checked.stdout,
        flags=re.MULTILINE,
    )
    assert checked.returncode == 0, report + checked.stderr


def _cache_dir(config: pytest.Config, name: str) -> Path | None:
    """A mypy cache kept between test runs (pytest's cache), unless the cache plugin is off."""
    cache = getattr(config, "cache", None)
    return None if cache is None else Path(cache.mkdir(name))
