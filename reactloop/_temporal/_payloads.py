"""The bytes the workflow and its activities exchange: model requests and responses, deltas,
messages, decisions, content parts, model errors and the `_contracts` classes, written with
reactloop's own codec (the journal's layout of messages and parts) so they read back equal.

Temporal passes `bytes` through as they are; what they hold is reactloop's to read, and a
payload that cannot be read is an `UnreadableRunError` naming what was expected.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from decimal import Decimal
from typing import Any, TypeVar

import orjson
from cattrs.preconf.orjson import make_converter
from cattrs.strategies import configure_tagged_union

from reactloop._core import (
    ContentPart,
    Decision,
    ForcedTool,
    Message,
    ModelDelta,
    ModelRequest,
    ModelResponse,
    ToolChoice,
)
from reactloop._durable import (
    keep_call_ids,
    keep_content_parts,
    keep_message_layout,
    keep_sub_runs_apart,
)
from reactloop._errors import ErrorCode, ModelError
from reactloop._stored_errors import UnreadableRunError
from reactloop._unicode import dumps

T = TypeVar("T")
E = TypeVar("E", bound=BaseException)

Parts = tuple[ContentPart, ...]
Choice = ToolChoice | ForcedTool

_converter = make_converter(omit_if_default=True)
_converter.register_unstructure_hook(Decimal, str)  # a cost keeps its exact digits
_converter.register_structure_hook(Decimal, lambda v, _: Decimal(str(v)))
keep_content_parts(_converter)
keep_sub_runs_apart(_converter)
keep_call_ids(_converter)
keep_message_layout(_converter)
configure_tagged_union(Message, _converter, tag_name="type")
configure_tagged_union(Decision, _converter, tag_name="type")
configure_tagged_union(ModelDelta, _converter, tag_name="type")


def _is_choice(kind: object) -> bool:  # a union of an enum and a class: no tag to dispatch on
    return kind == Choice


def _choice(value: Choice) -> Any:
    return {"tool": value.name} if isinstance(value, ForcedTool) else value.value


def _read_choice(value: Any) -> Choice:
    return ForcedTool(value["tool"]) if isinstance(value, dict) else ToolChoice(value)


_converter.register_unstructure_hook_func(_is_choice, _choice)
_converter.register_structure_hook_func(_is_choice, lambda v, _: _read_choice(v))

_OPTIONS = orjson.OPT_NON_STR_KEYS


def _dump(value: Any, kind: Any) -> bytes:
    return dumps(_converter.unstructure(value, kind), where="a Temporal payload", option=_OPTIONS)


def _load(data: bytes, kind: Any, what: str) -> Any:
    try:
        return _converter.structure(orjson.loads(data), kind)
    except Exception as exc:
        raise UnreadableRunError(
            f"a Temporal payload holding {what} cannot be read: {exc}"
        ) from exc


def encode(value: object) -> bytes:
    """One of the `_contracts` classes (or any attrs value the codec knows) as bytes."""
    return _dump(value, type(value))


def decode(data: bytes, kind: type[T]) -> T:
    """The `kind` value `encode` wrote."""
    value: T = _load(data, kind, kind.__name__)
    return value


def encode_request(request: ModelRequest) -> bytes:
    """A model request: messages, instructions, tool specs, tool choice and settings."""
    return _dump(request, ModelRequest)


def decode_request(data: bytes) -> ModelRequest:
    """The model request `encode_request` wrote."""
    request: ModelRequest = _load(data, ModelRequest, "a model request")
    return request


def encode_response(response: ModelResponse) -> bytes:
    """A model response: its message (call ids kept), usage, finish reason and ids."""
    return _dump(response, ModelResponse)


def decode_response(data: bytes) -> ModelResponse:
    """The model response `encode_response` wrote."""
    response: ModelResponse = _load(data, ModelResponse, "a model response")
    return response


def encode_deltas(deltas: Sequence[ModelDelta]) -> bytes:
    """Streamed deltas, in order."""
    return _dump(list(deltas), list[ModelDelta])


def decode_deltas(data: bytes) -> list[ModelDelta]:
    """The deltas `encode_deltas` wrote."""
    deltas: list[ModelDelta] = _load(data, list[ModelDelta], "model deltas")
    return deltas


def encode_messages(messages: Sequence[Message]) -> bytes:
    """A transcript, in the journal's layout of messages."""
    return _dump(list(messages), list[Message])


def decode_messages(data: bytes) -> tuple[Message, ...]:
    """The messages `encode_messages` wrote."""
    messages: list[Message] = _load(data, list[Message], "messages")
    return tuple(messages)


def encode_decisions(decisions: Mapping[str, Decision]) -> bytes:
    """Decisions on held calls, by call id."""
    return _dump(dict(decisions), dict[str, Decision])


def decode_decisions(data: bytes) -> dict[str, Decision]:
    """The decisions `encode_decisions` wrote."""
    decisions: dict[str, Decision] = _load(data, dict[str, Decision], "decisions")
    return decisions


def encode_parts(parts: Sequence[ContentPart]) -> bytes:
    """Content parts (a tool's images, documents, audio and text), bytes kept as base64."""
    return _dump(tuple(parts), Parts)


def decode_parts(data: bytes) -> Parts:
    """The content parts `encode_parts` wrote."""
    parts: Parts = _load(data, Parts, "content parts")
    return parts


def _shown(value: object) -> bool:
    try:
        orjson.dumps(value)
    except TypeError:
        return False
    return True


def encode_error(error: ModelError) -> bytes:
    """A model error: its class (module and name), message and fields (status, provider,
    retry_after, should_retry, attempts, notes and a subclass's own), so that the workflow
    raises the same error the model raised on the worker."""
    kind = type(error)
    fields = {k: v for k, v in vars(error).items() if k != "message" and _shown(v)}
    body = {"class": f"{kind.__module__}:{kind.__qualname__}", "message": error.message}
    return orjson.dumps({**body, "fields": fields})


def decode_error(data: bytes) -> ModelError:
    """The model error `encode_error` wrote: its own class when this process has it loaded
    (a `ModelError` otherwise), with every field it had."""
    try:
        body = orjson.loads(data)
        kind = loaded_subclass(ModelError, body["class"]) or ModelError
        error = kind.__new__(kind)
        Exception.__init__(error, body["message"])
        error.message = body["message"]
        fields = dict(body["fields"])
    except Exception as exc:
        raise UnreadableRunError(
            f"a Temporal payload holding a model error cannot be read: {exc}"
        ) from exc
    if "code" in fields:
        fields["code"] = ErrorCode(fields["code"])
    vars(error).update(fields)
    return error


def loaded_subclass(base: type[E], name: str) -> type[E] | None:
    """The loaded subclass of `base` (or `base`) named `module:qualname`, by walking the classes
    already loaded: never an import, so a payload cannot name code to load."""
    pending: list[type[E]] = [base]
    while pending:
        kind = pending.pop()
        if f"{kind.__module__}:{kind.__qualname__}" == name:
            return kind
        pending.extend(kind.__subclasses__())
    return None
