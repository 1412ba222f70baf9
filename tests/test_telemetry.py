"""`Telemetry`: checked when made; the otel extra named when missing; no import without it."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import pytest

from reactloop import ReActLoop
from reactloop._telemetry import Telemetry
from reactloop.errors import ConfigurationError
from reactloop.testing import ScriptedModel


@pytest.mark.parametrize(
    ("option", "value"),
    [
        ("tracer_provider", "global"),
        ("meter_provider", object()),
        ("phase_spans", "yes"),
        ("record_content", 1),
        ("agent_name", 7),
    ],
)
def test_a_wrong_setting_is_refused_naming_it(option: str, value: Any) -> None:
    with pytest.raises(ConfigurationError) as caught:
        Telemetry(**{option: value})
    assert f"Telemetry.{option}" in str(caught.value)


def test_the_option_takes_a_telemetry_only() -> None:
    with pytest.raises(ConfigurationError, match="telemetry"):
        ReActLoop(ScriptedModel(["hi"]), telemetry=True)  # type: ignore[call-overload]


def test_without_the_api_turning_it_on_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "opentelemetry.trace", None)
    with pytest.raises(ConfigurationError, match=r"reactloop\[otel\]"):
        Telemetry()


def test_a_loop_without_telemetry_carries_no_tracing() -> None:
    assert ReActLoop(ScriptedModel(["hi"])).config.tracing is None


def test_importing_reactloop_imports_no_opentelemetry() -> None:
    code = (
        "import sys, reactloop, reactloop.telemetry\n"
        "loaded = [m for m in sys.modules if m.startswith('opentelemetry')]\n"
        "assert not loaded, loaded\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
