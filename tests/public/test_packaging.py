"""The built wheel is a typed package: a user program type-checks with `mypy --strict` against it.

The wheel is built from this tree (no network: `pip wheel --no-build-isolation`, hatchling comes
with the dev extra) and installed into a throwaway virtual environment, away from the source tree,
so that mypy sees reactloop as an installed third-party package (PEP 561: typed only with
`py.typed`). The dependencies come from the running environment through a `.pth` file.
"""

from __future__ import annotations

import os
import site
import subprocess
import sys
import textwrap
import zipfile
from pathlib import Path

import pytest
from attrs import frozen

import reactloop

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.slow

USER_PROGRAM = '''
"""A user's program, type-checked with mypy --strict against the installed wheel, then run."""

from collections.abc import Coroutine
from dataclasses import dataclass
from typing import Any, Literal, assert_type

import anyio

from reactloop import Event, ReActLoop, RunResult, StopReason, tool
from reactloop.events import RunFinished, TextStreamed
from reactloop.testing import ScriptedModel, call, reply


@tool
async def get_weather(city: str, units: Literal["c", "f"] = "c") -> str:
    """Current weather for a city.

    Args:
        city: City name.
        units: Temperature units.
    """
    return f"{city}: 21 {units}"


@dataclass
class Trip:
    city: str
    days: int


@tool(timeout=5)
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


async def misuse() -> None:
    """Never called: each line must be an error, or its (then unused) ignore is one."""
    add("one", 2)  # type: ignore[arg-type]
    wrong: str = add(1, 2)  # type: ignore[assignment]
    assert_type(get_weather("Paris"), Coroutine[Any, Any, str])  # type: ignore[unused-coroutine]
    await get_weather("Paris", units="kelvin")  # type: ignore[arg-type]


async def main() -> None:
    assert_type(add(1, 2), int)
    assert_type(await get_weather("Oslo"), str)
    model = ScriptedModel([reply("", call("get_weather", city="Paris")), "Sunny.", "Again sunny."])
    loop = ReActLoop(model, tools=[get_weather, add], instructions="You are a travel assistant.")
    result = await loop.run("Weather in Paris?")
    assert_type(result, RunResult)
    output: str | None = result.output
    used: tuple[str, ...] = result.tools_used
    assert result.stop_reason is StopReason.COMPLETED and used == ("get_weather",)
    texts: list[str] = []
    finals: list[RunResult] = []
    async with loop.stream("And tomorrow?") as events:
        async for event in events:
            assert_type(event, Event)
            match event:
                case TextStreamed(text=text):
                    texts.append(text)
                case RunFinished(result=final):
                    finals.append(final)
    assert "".join(texts) == "Again sunny." and finals[0].output == "Again sunny."
    trip = ScriptedModel([call("final_answer", city="Oslo", days=3)] * 2)
    planner = ReActLoop(trip, output_type=Trip)
    planned = await planner.run("Plan a trip")
    assert_type(planned, RunResult[Trip])
    assert_type(planned.output, Trip | None)
    assert planned.output == Trip("Oslo", 3)
    async with planner.stream("Plan another") as planning:
        async for _ in planning:
            pass
        streamed_plan = await planning.result()
    assert_type(streamed_plan.output, Trip | None)
    print("user program:", output, "".join(texts), planned.output.days)


anyio.run(main)
'''


@frozen
class Installed:
    """A wheel built from this tree and the throwaway environment it is installed in."""

    wheel: Path
    python: Path
    site_packages: Path
    workdir: Path


def _run(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "MYPYPATH")}
    return subprocess.run(
        [str(arg) for arg in args], cwd=cwd, env=env, capture_output=True, text=True, check=False
    )


def _ok(process: subprocess.CompletedProcess[str]) -> str:
    assert process.returncode == 0, f"{process.args}\n{process.stdout}\n{process.stderr}"
    return process.stdout


def _pip(*args: str | Path, cwd: Path) -> str:
    """pip of the running environment, offline."""
    return _ok(_run(sys.executable, "-m", "pip", *args, "--no-deps", "--no-index", cwd=cwd))


def _build_wheel(dist: Path) -> Path:
    _pip("wheel", "--no-build-isolation", "--wheel-dir", dist, ROOT, cwd=dist)
    (wheel,) = dist.glob("reactloop-*.whl")
    return wheel


def _make_environment(base: Path, wheel: Path) -> tuple[Path, Path]:
    """A bare venv holding only the wheel; the running environment's site dirs give its deps."""
    venv = base / "venv"
    _ok(_run(sys.executable, "-m", "venv", "--without-pip", venv, cwd=base))
    python = venv / "bin" / "python"
    purelib = "import sysconfig; print(sysconfig.get_paths()['purelib'])"
    site_packages = Path(_ok(_run(python, "-c", purelib, cwd=base)).strip())
    _pip("install", "--target", site_packages, wheel, cwd=base)
    dependencies = [*site.getsitepackages(), site.getusersitepackages()]
    (site_packages / "_dependencies.pth").write_text("\n".join(dependencies) + "\n")
    return python, site_packages


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Installed:
    base = tmp_path_factory.mktemp("wheel")
    dist, workdir = base / "dist", base / "user"
    dist.mkdir()
    workdir.mkdir()
    wheel = _build_wheel(dist)
    python, site_packages = _make_environment(base, wheel)
    return Installed(wheel, python, site_packages, workdir)


def test_the_wheel_ships_the_type_marker(installed: Installed) -> None:
    with zipfile.ZipFile(installed.wheel) as archive:
        assert "reactloop/py.typed" in archive.namelist()


def test_the_installed_package_is_the_wheel_and_versions_agree(installed: Installed) -> None:
    probe = (
        "import importlib.metadata, reactloop; "
        "print(reactloop.__file__); print(reactloop.__version__); "
        "print(importlib.metadata.version('reactloop'))"
    )
    printed = _ok(_run(installed.python, "-c", probe, cwd=installed.workdir))
    location, version, metadata = printed.split()
    assert Path(location).is_relative_to(installed.site_packages)
    assert version == metadata == reactloop.__version__
    assert installed.wheel.name.startswith(f"reactloop-{reactloop.__version__}-")


def test_python_m_reactloop_prints_the_version(installed: Installed) -> None:
    out = _ok(_run(installed.python, "-m", "reactloop", cwd=installed.workdir))
    assert f"reactloop {reactloop.__version__}" in out
    assert "python -m reactloop.examples.demo" in out


def test_a_user_program_type_checks_and_runs_against_the_wheel(
    installed: Installed, request: pytest.FixtureRequest
) -> None:
    program = installed.workdir / "app.py"
    program.write_text(textwrap.dedent(USER_PROGRAM).lstrip(), encoding="utf-8")
    (installed.workdir / "mypy.ini").write_text("[mypy]\nstrict = True\n")
    cache = _cache_dir(request.config, "mypy-wheel")
    cache_args = ("--cache-dir", cache) if cache is not None else ("--no-incremental",)
    mypy = (sys.executable, "-m", "mypy", "--python-executable", installed.python, *cache_args)
    checked = _run(*mypy, program, cwd=installed.workdir)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    ran = _ok(_run(installed.python, program, cwd=installed.workdir))
    assert "user program: Sunny. Again sunny." in ran


def _cache_dir(config: pytest.Config, name: str) -> Path | None:
    """A mypy cache kept between test runs (pytest's cache), unless the cache plugin is off."""
    cache = getattr(config, "cache", None)
    return None if cache is None else Path(cache.mkdir(name))
