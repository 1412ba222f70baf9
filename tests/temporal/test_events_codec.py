"""The events codec between a workflow and its caller: every event class reads back as it was
written (errors as their own reactloop class with their fields, others as a `RemoteError`
naming theirs; a top-level `RunFinished` as the result its journal position stands for)."""

from __future__ import annotations

from typing import Any

import attrs
from hypothesis import given, settings
from hypothesis import strategies as st

from reactloop._core import Event, RunFinished, RunResult
from reactloop._temporal._events import decode_events, encode_events, unstructure_event
from reactloop.errors import (
    ErrorCode,
    LeaseLostError,
    ReactLoopError,
    RemoteError,
    ToolTimeoutError,
)
from reactloop.events import HookFailed, RunFailed
from tests.helpers.strategies import events, examples, run_results


def _plain(value: object) -> object:
    """A value as comparable data: attrs classes by kind and every field; a reactloop error by
    class, code, message and fields; any other exception as the `RemoteError` it reads back
    as (the class it names, code unknown, its message)."""
    if isinstance(value, RemoteError):
        return ("error", value.kind, value.code, value.message)
    if isinstance(value, BaseException):
        kind = f"{type(value).__module__}:{type(value).__qualname__}"
        if not isinstance(value, ReactLoopError):
            return ("error", kind, ErrorCode.UNKNOWN, str(value))
        fields = {k: _plain(v) for k, v in vars(value).items() if k != "message"}
        return ("error", kind, value.code, str(value), fields)
    if attrs.has(type(value)):
        fields = attrs.fields(type(value))  # type: ignore[arg-type]
        return (type(value).__name__, {f.name: _plain(getattr(value, f.name)) for f in fields})
    if isinstance(value, tuple | list):
        return [_plain(item) for item in value]
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    return value


def _no_results(length: int) -> RunResult[Any]:
    raise AssertionError(f"a nested event asked for the journal's result at {length}")


@settings(max_examples=examples(100))
@given(st.lists(events, max_size=6))
def test_every_event_reads_back_as_it_was_written(given_events: list[Event]) -> None:
    data = encode_events([unstructure_event(event, 0) for event in given_events if not _top(event)])
    expected = [_plain(event) for event in given_events if not _top(event)]
    assert [_plain(event) for event in decode_events(data, _no_results)] == expected


def _top(event: Event) -> bool:
    return isinstance(event, RunFinished)


@settings(max_examples=examples(50))
@given(run_results, st.integers(0, 10**6))
def test_a_runs_own_run_finished_carries_the_result_its_journal_position_stands_for(
    result: RunResult[Any], length: int
) -> None:
    asked: list[int] = []

    def result_at(at: int) -> RunResult[Any]:
        asked.append(at)
        return result

    value = unstructure_event(RunFinished(result), length)
    (read,) = decode_events(encode_events([value]), result_at)
    assert isinstance(read, RunFinished) and read.result is result and asked == [length]
    assert "result" not in value  # the journal holds it; the buffer only its position


def _again(event: Event) -> Event:
    (read,) = decode_events(encode_events([unstructure_event(event, 0)]), _no_results)
    return read


def test_a_reactloop_error_keeps_its_class_and_fields_and_any_other_is_named() -> None:
    lost = LeaseLostError("r1", "w1", "w2", ("call_1",))
    failed = _again(RunFailed(lost))
    assert isinstance(failed, RunFailed) and type(failed.error) is LeaseLostError
    assert failed.error.holder == "w2"
    assert list(failed.error.discarded) == ["call_1"]  # its fields as JSON has them
    assert str(failed.error) == str(lost) and failed.error.code is lost.code
    timeout = ToolTimeoutError("lookup", 2.5)
    hook = _again(HookFailed("h", "p", timeout))
    assert isinstance(hook, HookFailed) and type(hook.error) is ToolTimeoutError
    other = _again(HookFailed("h", "p", KeyError("k")))
    assert isinstance(other, HookFailed) and isinstance(other.error, RemoteError)
    assert other.error.kind == "builtins:KeyError" and other.error.message == "'k'"
