"""The trace page's data: steps on one time axis, model call times derived, tool calls side by
side; an export file read back; the page self-contained with the data safely inline."""

from __future__ import annotations

import orjson
import pytest
from attrs import evolve

from reactloop._cli._trace import read_export, steps_of, stored_trace, write_trace
from reactloop._core._decisions import StopReason
from reactloop._core._messages import AssistantMessage, ModelResponse, ToolCall, Usage
from reactloop._core._records import RunCreated, RunEnded
from reactloop._core._state import Step, ToolResult
from reactloop._durable._replay import replay
from reactloop._errors import ConfigurationError


def step(index: int, started_at: float, duration: float, *tools: float) -> Step:
    calls = tuple(ToolCall("t", "{}", f"c{index}{i}") for i in range(len(tools)))
    results = tuple(
        ToolResult(f"c{index}{i}", "t", "ok", duration=took) for i, took in enumerate(tools)
    )
    response = ModelResponse(AssistantMessage("", calls))
    return Step(index, response, results, Usage(3, 2), started_at, duration)


def test_a_model_call_lasts_until_its_tools_start_which_run_side_by_side() -> None:
    [laid] = steps_of([step(1, 100.0, 3.0, 1.0, 2.0)])
    assert laid["start"] == 0.0
    assert (laid["model"]["start"], laid["model"]["duration"]) == (0.0, 1.0)
    assert [(t["start"], t["duration"], t["lane"]) for t in laid["tools"]] == [
        (1.0, 1.0, 0),
        (1.0, 2.0, 1),
    ]


def test_a_step_names_the_fallback_model_that_answered_it_and_only_then() -> None:
    plain = step(1, 0.0, 1.0)
    assert plain.response is not None
    switched = Step(2, evolve(plain.response, answered_by="openai:gpt-4o"), (), Usage(), 1.0, 1.0)
    laid = steps_of([plain, switched])
    assert "answered_by" not in laid[0]["model"]
    assert laid[1]["model"]["answered_by"] == "openai:gpt-4o"


def test_steps_keep_their_gaps_and_a_clock_that_went_back_continues_after() -> None:
    laid = steps_of([step(1, 10.0, 1.0), step(2, 12.0, 1.0), step(3, 0.5, 1.0)])
    assert [item["start"] for item in laid] == [0.0, 2.0, 3.0]


def test_an_export_of_a_newer_schema_is_refused() -> None:
    data = orjson.dumps({"format": "reactloop.run", "schema_version": 999, "records": []})
    with pytest.raises(ConfigurationError, match="schema version"):
        read_export(data, "new.json")


@pytest.mark.parametrize("data", [b"not json", b"[]", b'{"format": "reactloop.run"}'])
def test_a_file_that_is_no_export_is_a_configuration_error(data: bytes) -> None:
    with pytest.raises(ConfigurationError, match="runs export"):
        read_export(data, "x.json")


def test_the_data_cannot_close_its_script_early() -> None:
    created = RunCreated("r1", "</script><script>alert(1)</script>", None, (), 0.0)
    ended = RunEnded(StopReason.COMPLETED, "", "done", Usage(), 1.0)
    page = write_trace(stored_trace(replay([created, ended]).stored))
    assert page.count("</script>") == 2  # the page's own two scripts
    assert "<script src" not in page and "http" not in page.split("<script", 1)[1]
