"""Extras load only when used: a fresh interpreter that imports reactloop and runs a loop over a
scripted model (a tool call, then the answer) loads no module of any optional dependency."""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from importlib import metadata
from pathlib import Path

import orjson

ROOT = Path(__file__).resolve().parents[2]

RUN = """
import sys

import anyio
import orjson

from reactloop import ReActLoop, tool
from reactloop.testing import ScriptedModel, call


@tool
async def echo(n: int) -> str:
    '''Say the number.

    Args:
        n: Any number.
    '''
    return f"ok {n}"


loop = ReActLoop(ScriptedModel([call("echo", n=1), "done"]), tools=[echo])
result = anyio.run(loop.run, "go", backend="asyncio")
assert result.output == "done", result
sys.stdout.write(orjson.dumps(sorted({name.split(".")[0] for name in sys.modules})).decode())
"""


def _distribution(requirement: str) -> str:
    """The normalized distribution name of a requirement such as `psycopg[binary]>=3.2`."""
    name = re.match(r"[A-Za-z0-9._-]+", requirement)
    assert name is not None, requirement
    return re.sub(r"[-_.]+", "-", name.group()).lower()


def _extras_modules() -> set[str]:
    """The top-level modules of every optional dependency in pyproject (that is not also a
    dependency), by the installed distributions' metadata, or by their name when not installed."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    required = {_distribution(r) for r in project["dependencies"]}
    optional = {_distribution(r) for group in project["optional-dependencies"].values()
                for r in group} - required - {"reactloop"}  # fmt: skip
    modules: dict[str, set[str]] = {}
    for module, distributions in metadata.packages_distributions().items():
        for distribution in distributions:
            modules.setdefault(_distribution(distribution), set()).add(module)
    return {m for d in optional for m in modules.get(d, {d.replace("-", "_")})}


def test_importing_reactloop_and_running_a_loop_loads_no_extra() -> None:
    extras = _extras_modules()
    assert {"psycopg", "rich", "mcp", "opentelemetry", "starlette", "temporalio"} <= extras
    ran = subprocess.run(
        [sys.executable, "-c", RUN], cwd=ROOT, capture_output=True, text=True, check=False
    )
    assert ran.returncode == 0, ran.stderr
    loaded = set(orjson.loads(ran.stdout))
    assert {"reactloop", "anyio"} <= loaded
    assert sorted(loaded & extras) == []


def test_a_provider_loaded_on_first_use_is_published_by_the_top_level() -> None:
    code = (
        "import sys, reactloop.providers as providers\n"
        "assert 'httpx' in sys.modules\n"
        "assert providers.AnthropicModel.__module__ == 'reactloop', providers.AnthropicModel\n"
        "assert providers.GeminiModel.__module__ == 'reactloop.providers', providers.GeminiModel\n"
    )
    subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True)
