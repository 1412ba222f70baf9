"""The events a workflow's run emits, as the caller receives them: every reactloop event class
written as JSON tagged by its class name (`type`), with reactloop's own codec for messages,
parts, tool results and steps, so it reads back equal.

Two things are not values: an exception inside an event (`RunFailed`, `HookFailed`,
`ModelSwitched`, `ToolResultDiscarded`, a `Stop` decision) is carried as its class, code,
message and plain fields, and rebuilt as the same reactloop error class when this process has
it loaded (else a `RemoteError` naming it); a top-level `RunFinished` is carried as the length
of the run's journal when it was emitted, and the caller rebuilds its result from that journal
(the same `RunResult` its `result()` gives). `OutputStreamed.partial` is JSON already.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import orjson
from cattrs.preconf.orjson import make_converter
from cattrs.strategies import configure_tagged_union

from reactloop._core import (
    AgentCall,
    Decision,
    Event,
    Message,
    NestedEvent,
    PhaseDecision,
    RunFinished,
    RunResult,
)
from reactloop._durable import (
    dump_json,
    keep_call_ids,
    keep_content_parts,
    keep_costs,
    keep_message_layout,
    keep_sub_runs_apart,
)
from reactloop._errors import ErrorCode, ModelError, ReactLoopError
from reactloop._stored_errors import UnreadableRunError
from reactloop._temporal._errors import RemoteError
from reactloop._temporal._payloads import loaded_subclass

_EVENT: Any = Event  # the union, as cattrs takes it

ResultAt = Callable[[int], RunResult[Any]]
"""The run's result as its journal's first `n` records leave it (a `RunFinished`'s)."""

_TAG = "type"
RUN_FINISHED_AT = "journal"  # a top-level RunFinished: the journal's length when emitted

_converter = make_converter(omit_if_default=True)
keep_costs(_converter)  # first: the generated hooks of classes holding a Usage use it
keep_content_parts(_converter)
keep_sub_runs_apart(_converter)
keep_call_ids(_converter)
keep_message_layout(_converter)
configure_tagged_union(Message, _converter, tag_name=_TAG)
configure_tagged_union(Decision, _converter, tag_name=_TAG)


def _is_error(kind: object) -> bool:
    return isinstance(kind, type) and issubclass(kind, BaseException)


def _plain(value: object) -> bool:
    try:
        orjson.dumps(value)
    except TypeError:
        return False
    return True


def carry_error(error: BaseException) -> dict[str, Any]:
    """An exception as an event carries it: its class (`module:qualname`), code, message and
    its fields that are JSON already."""
    kind = type(error)
    message = getattr(error, "message", None)
    message = message if isinstance(message, str) else str(error)
    fields = {k: v for k, v in vars(error).items() if k not in ("message", "code") and _plain(v)}
    code = getattr(error, "code", None)
    return {
        "class": f"{kind.__module__}:{kind.__qualname__}",
        "code": None if code is None else str(code),
        "message": message,
        "fields": fields,
    }


def rebuild_error(value: dict[str, Any], wanted: type[BaseException] = Exception) -> Exception:
    """The exception `carry_error` wrote: its own reactloop class when loaded here, with its
    code, message and fields; else a `RemoteError` naming the class (a `ModelError` where the
    event needs one)."""
    name, message = value["class"], value["message"]
    code = None if value.get("code") is None else ErrorCode(value["code"])
    kind = loaded_subclass(ReactLoopError, name)
    if kind is None:
        if issubclass(ModelError, wanted) and wanted is not Exception:
            kind = ModelError
        else:
            return RemoteError(name, message, code)
    error = kind.__new__(kind)
    Exception.__init__(error, message)
    error.message = message
    vars(error).update(value.get("fields", {}))
    if code is not None and code != kind.code:
        error.code = code
    return error


def _nested(event: NestedEvent) -> dict[str, Any]:
    path = _converter.unstructure(event.path, tuple[AgentCall, ...])
    return {"path": path, "event": _converter.unstructure(event.event, Event)}


def _read_nested(value: dict[str, Any], _: object) -> NestedEvent:
    path = _converter.structure(value["path"], tuple[AgentCall, ...])
    return NestedEvent(path, _converter.structure(value["event"], _EVENT))


def _finished(event: RunFinished) -> dict[str, Any]:  # a sub-run's: its result in full
    return {"result": _converter.unstructure(event.result, RunResult[Any])}


def _read_finished(value: dict[str, Any], _: object) -> RunFinished:
    return RunFinished(_converter.structure(value["result"], RunResult[Any]))


_converter.register_unstructure_hook_func(_is_error, carry_error)
_converter.register_structure_hook_func(_is_error, rebuild_error)
_converter.register_unstructure_hook(NestedEvent, _nested)
_converter.register_structure_hook(NestedEvent, _read_nested)
_converter.register_unstructure_hook(RunFinished, _finished)
_converter.register_structure_hook(RunFinished, _read_finished)
configure_tagged_union(PhaseDecision, _converter, tag_name=_TAG)
configure_tagged_union(Event, _converter, tag_name=_TAG)


def unstructure_event(event: Event, journal: int) -> Any:
    """One event as JSON-ready values; a `RunFinished` as `journal` (the length of the run's
    journal when it was emitted), whose result the caller rebuilds from it."""
    if isinstance(event, RunFinished):
        return {_TAG: RunFinished.__name__, RUN_FINISHED_AT: journal}
    return _converter.unstructure(event, Event)


def encode_events(events: Sequence[Any]) -> bytes:
    """Events `unstructure_event` gave, as the workflow hands them out."""
    return dump_json(list(events))


def decode_events(data: bytes, result_at: ResultAt) -> list[Event]:
    """The events `encode_events` wrote; a `RunFinished`'s result is `result_at(journal)`."""
    try:
        values = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        raise UnreadableRunError(f"a Temporal payload of events cannot be read: {exc}") from exc
    return [structure_event(value, result_at) for value in values]


def structure_event(value: Any, result_at: ResultAt) -> Event:
    """One event `unstructure_event` gave."""
    if isinstance(value, dict) and RUN_FINISHED_AT in value:
        return RunFinished(result_at(value[RUN_FINISHED_AT]))
    try:
        event: Event = _converter.structure(value, _EVENT)
    except Exception as exc:
        raise UnreadableRunError(f"a Temporal payload of an event cannot be read: {exc}") from exc
    return event
