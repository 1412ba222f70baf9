"""The README's Python examples run as written (in order, in one namespace)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import anyio
import pytest

README = Path(__file__).resolve().parents[1] / "README.md"


def python_blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), re.DOTALL)


def test_readme_examples_run(capsys: pytest.CaptureFixture[str]) -> None:
    namespace: dict[str, Any] = {}
    for block in python_blocks():
        exec(compile(block, str(README), "exec"), namespace)
    anyio.run(namespace["test_calls_over_the_cap_get_an_error"])
    out = capsys.readouterr().out
    assert "Sunny and 21°C. completed ('get_weather',)" in out
    assert "RunFinished" in out
