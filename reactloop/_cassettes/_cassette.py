"""Cassettes: a run's model interactions and tool results, kept as a readable JSON file.

A cassette is made from a stored run (`Cassette.from_stored`) or recorded live (`RecordingModel`,
in `_cassette_models.py`), and replayed in a test by `ReplayModel`, which checks each request the
run makes against the recorded one. Requests are kept in a normalized view: what is compared.

Every request repeats the transcript, so a file keeps each distinct image, document or audio
once: a `blobs` table (digest to base64) that the parts refer to (format version 2, adr/0028).
"""

from __future__ import annotations

import base64
import binascii
import difflib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs
import orjson
from attrs import field, frozen
from cattrs import transform_error
from cattrs.preconf.orjson import make_converter
from cattrs.strategies import configure_tagged_union

from reactloop._cassettes._tools import serve
from reactloop._core import (
    AssistantMessage,
    ForcedTool,
    InstructionsSaved,
    Message,
    ModelRequest,
    ModelResponse,
    ResponseSaved,
    ResultSaved,
    RunResult,
    RunStore,
    StopReason,
    StoredRun,
    Tool,
    ToolChoice,
    ToolResult,
    UserMessage,
)
from reactloop._durable import (
    blobs_apart,
    blobs_from,
    digest_of,
    keep_call_ids,
    keep_content_parts,
    keep_message_layout,
    keep_sub_runs_apart,
    missing_blob,
)
from reactloop._errors import ConfigurationError
from reactloop._loop import message as checked_message
from reactloop._stored_errors import CassetteFormatError, CassetteMismatchError
from reactloop._unicode import dumps
from reactloop._validate import instance, sequence_of

CASSETTE_VERSION = 2
"""The version of the cassette file layout (2: content parts' bytes in a `blobs` table, each
once); `Cassette.load` reads `CASSETTE_VERSIONS`."""
CASSETTE_VERSIONS = (1, 2)

_converter = make_converter(omit_if_default=True)
keep_content_parts(_converter)
keep_sub_runs_apart(_converter)
keep_call_ids(_converter)
keep_message_layout(_converter)
configure_tagged_union(Message, _converter, tag_name="type")


def _is_input(kind: object) -> bool:  # `Cassette.input`: text, or a message of parts
    return kind == (str | UserMessage)


_converter.register_unstructure_hook_func(
    _is_input, lambda v: v if isinstance(v, str) else _converter.unstructure(v, UserMessage)
)
_converter.register_structure_hook_func(
    _is_input, lambda v, _: v if isinstance(v, str) else _converter.structure(v, UserMessage)
)
_FILE_OPTIONS = orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS | orjson.OPT_APPEND_NEWLINE

_CAPS = frozenset(
    {
        StopReason.MAX_ITERATIONS,
        StopReason.MAX_TOOL_CALLS,
        StopReason.TOKEN_BUDGET,
        StopReason.TIME_BUDGET,
        StopReason.CONDITION,
    }
)
"""Stop reasons whose last model call may have been the tool-less one a cap makes."""


def choice_text(choice: ToolChoice | ForcedTool) -> str:
    """A tool choice as the cassette writes it: auto, none, required, or tool:NAME."""
    return f"tool:{choice.name}" if isinstance(choice, ForcedTool) else choice.value


@frozen
class RecordedRequest:
    """The part of a model request a replay compares: instructions, messages, the offered
    tools' names and the tool choice. None for `tools` or `tool_choice` means not known (a
    request rebuilt from a journal), and that part is not compared."""

    messages: tuple[Message, ...]
    instructions: str | None = None
    tools: tuple[str, ...] | None = ()
    tool_choice: str | None = ToolChoice.AUTO.value

    @classmethod
    def of(cls, request: ModelRequest) -> RecordedRequest:
        """The normalized view of a real request."""
        names = tuple(spec.name for spec in request.tools)
        return cls(request.messages, request.instructions, names, choice_text(request.tool_choice))

    def accepts(self, actual: RecordedRequest, start: int = 0) -> bool:
        """Whether `actual` is this recorded request as far as the recording knows it, its
        messages compared from `start` on (the earlier ones being known to agree)."""
        return (
            actual.messages[start:] == self.messages[start:]
            and actual.instructions == self.instructions
            and (self.tools is None or actual.tools == self.tools)
            and (self.tool_choice is None or actual.tool_choice == self.tool_choice)
        )

    def as_known_by(self, recorded: RecordedRequest) -> RecordedRequest:
        """This request without the parts the recorded one does not know (for the diff)."""
        tools = None if recorded.tools is None else self.tools
        choice = None if recorded.tool_choice is None else self.tool_choice
        return attrs.evolve(self, tools=tools, tool_choice=choice)


@frozen
class Interaction:
    """One model call: the request as sent (normalized) and the response as received."""

    request: RecordedRequest
    response: ModelResponse


@frozen
class Cassette:
    """A recorded run: its input and history, its model interactions in order, and its tool
    results by call id. `save` and `load` keep it as pretty-printed JSON with sorted keys, so
    that a cassette reads and diffs well in version control.

    Replay it with `ReplayModel(cassette)` and `await loop.run(cassette.input,
    history=cassette.history)`; `recorded_tools(tools)` serves the recorded tool results.
    `input` is the user's text, or their `UserMessage` when it held images, documents or audio.
    """

    input: str | UserMessage
    interactions: tuple[Interaction, ...]
    history: tuple[Message, ...] = ()
    tool_results: Mapping[str, ToolResult] = field(factory=dict, hash=False)
    version: int = CASSETTE_VERSION

    def save(self, path: str | Path) -> None:
        """Write the cassette as JSON to `path` (replacing the file)."""
        Path(path).write_bytes(self.to_json())

    def to_json(self) -> bytes:
        """The cassette's file content: indented JSON, keys sorted, the version always written;
        each distinct content part's bytes once, in `blobs` (base64 by digest)."""
        with blobs_apart() as blobs:
            data = _converter.unstructure(self, Cassette)
        data["version"] = CASSETTE_VERSION
        if blobs:
            data["blobs"] = {digest: _b64(blob) for digest, blob in blobs.items()}
        return dumps(data, where="a cassette", option=_FILE_OPTIONS)

    @classmethod
    def load(cls, path: str | Path) -> Cassette:
        """Read a cassette file; a file that is not a cassette of this version is a
        `CassetteFormatError` naming it (an unreadable file is an `OSError`, as usual)."""
        return cls.from_json(Path(path).read_bytes(), source=str(path))

    @classmethod
    def from_json(cls, data: bytes | str, *, source: str = "(bytes)") -> Cassette:
        """Read a cassette from its JSON text; see `load`."""
        try:
            value: Any = orjson.loads(data)
        except orjson.JSONDecodeError as exc:
            raise CassetteFormatError(source, f"it is not JSON ({exc})") from None
        if not isinstance(value, dict):
            raise CassetteFormatError(source, "it is not a JSON object")
        version = value.get("version")
        if version not in CASSETTE_VERSIONS or type(version) is not int:
            known = ", ".join(map(str, CASSETTE_VERSIONS))
            problem = f"its format version is {version!r}; this reactloop reads {known}"
            raise CassetteFormatError(source, problem)
        blobs = _read_blobs(value.pop("blobs", {}), source)
        value["version"] = CASSETTE_VERSION  # read as the current layout (a superset of 1)
        try:
            with blobs_from(blobs):
                return _interned(_converter.structure(value, Cassette))
        except Exception as exc:
            missing = missing_blob(exc)
            problems = str(missing) if missing else "; ".join(transform_error(exc, path="file"))
            raise CassetteFormatError(
                source, f"its layout is not a cassette's: {problems}"
            ) from None

    @classmethod
    async def from_store(cls, store: RunStore, run_id: str) -> Cassette:
        """The cassette of the run `run_id` of `store`, a session's earlier turns included: the
        few lines that turn a production run into a regression test."""
        if not isinstance(store, RunStore):
            raise ConfigurationError.invalid("Cassette.from_store(store)", store, "a RunStore")
        stored = await store.load(run_id)
        session = stored.created.session_id
        earlier = () if session is None else await store.session_history(session, before=run_id)
        return cls.from_stored(stored, earlier=earlier)

    @classmethod
    def from_stored(cls, stored: StoredRun, *, earlier: Sequence[Message] = ()) -> Cassette:
        """The cassette of a stored run (`await store.load(run_id)`), requests rebuilt from its
        journal: the transcript up to each step and the instructions as they stood then.

        The journal keeps tool names, not specs, so the names are compared. A run that ended on
        a cap may have made its last call without tools: that call's tools are not compared.
        `earlier` are a session's earlier turns (`store.session_history(session_id,
        before=run_id)`; `from_store` reads them): they lead every request and the history.
        """
        instance("Cassette.from_stored(stored)", stored, StoredRun, "a StoredRun")
        return _from_journal(stored, sequence_of("earlier", earlier, checked_message, "messages"))

    @classmethod
    def from_result(cls, interactions: Sequence[Interaction], result: RunResult) -> Cassette:
        """A cassette of recorded interactions, with the run's input, history and tool results
        taken from its result (what `RecordingModel.cassette` builds)."""
        first = next((s.response.message for s in result.steps if s.response is not None), None)
        history, said = _opening(result.messages, first)
        results = [r for step in result.steps for r in step.tool_results]
        return cls(said, tuple(interactions), history, _by_call(results))

    def recorded_tools(self, tools: Sequence[Tool]) -> list[Tool]:
        """`tools` (same names and specs) answering each call with its recorded result instead
        of running, matched by name and arguments in recorded order. A call with no recorded result
        left gets an error result (`UnrecordedCallError`). Call it anew for each replay."""
        responses = [interaction.response for interaction in self.interactions]
        return serve(responses, self.tool_results, tools)


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def _read_blobs(table: object, source: str) -> dict[str, bytes]:
    """A file's `blobs` table as bytes by digest, each checked against its digest."""
    if not isinstance(table, dict):
        raise CassetteFormatError(source, "its blobs are not an object of digest to base64")
    blobs: dict[str, bytes] = {}
    for digest, text in table.items():
        try:
            data = base64.b64decode(text, validate=True)
        except (binascii.Error, ValueError, TypeError):
            raise CassetteFormatError(source, f"its blob {digest} is not base64") from None
        if digest_of(data) != digest:
            problem = f"its blob {digest} holds other bytes (their digest is {digest_of(data)})"
            raise CassetteFormatError(source, problem)
        blobs[digest] = data
    return blobs


def _interned(cassette: Cassette) -> Cassette:
    """The cassette with equal messages as one object, as a run's requests share them: a
    replay then finds each request's earlier messages by identity (see `ReplayModel`)."""
    seen: dict[Message, Message] = {}

    def share(messages: tuple[Message, ...]) -> tuple[Message, ...]:
        return tuple(seen.setdefault(message, message) for message in messages)

    interactions = tuple(
        attrs.evolve(i, request=attrs.evolve(i.request, messages=share(i.request.messages)))
        for i in cassette.interactions
    )
    return attrs.evolve(cassette, interactions=interactions, history=share(cassette.history))


def _opening(
    messages: Sequence[Message], first_response: AssistantMessage | None
) -> tuple[tuple[Message, ...], str | UserMessage]:
    """The history and the input of a run's transcript: what came before its first answer."""
    end = len(messages) if first_response is None else _index(messages, first_response)
    head = list(messages[:end])
    for at in range(len(head) - 1, -1, -1):
        message = head[at]
        if isinstance(message, UserMessage):
            return tuple(head[:at]), message.text if message.is_plain else message
    return tuple(head), ""


def _index(messages: Sequence[Message], message: Message, start: int = 0) -> int:
    for at in range(start, len(messages)):
        if messages[at] == message:
            return at
    return len(messages)


def _from_journal(stored: StoredRun, earlier: tuple[Message, ...]) -> Cassette:
    """Walk the journal: each saved response is one interaction; the instructions and tool
    results are read as they were recorded."""
    created = stored.created
    names = tuple(created.tool_names)
    saved = [record for record in stored.records if isinstance(record, ResponseSaved)]
    capped = stored.ended is not None and stored.ended.stop_reason in _CAPS
    instructions, cursor = created.instructions, len(created.history) + 1
    interactions: list[Interaction] = []
    for record in stored.records:
        if isinstance(record, InstructionsSaved):
            instructions = record.instructions
        elif isinstance(record, ResponseSaved):
            at = _index(stored.messages, record.response.message, cursor)
            unknown = capped and record is saved[-1]
            tools = None if unknown else names
            choice = None if unknown else choice_text(ToolChoice.AUTO if names else ToolChoice.NONE)
            messages = (*earlier, *stored.messages[:at])
            request = RecordedRequest(messages, instructions, tools, choice)
            interactions.append(Interaction(request, record.response))
            cursor = at + 1
    history = (*earlier, *created.history)
    said = created.input_message() if created.input_parts else created.input
    return Cassette(said, tuple(interactions), history, _journal_results(stored))


def _journal_results(stored: StoredRun) -> dict[str, ToolResult]:
    """Tool results as the tools returned them (a replay runs the hooks again), and the final
    ones of calls that never ran (refused, settled)."""
    results = [r for step in stored.steps for r in step.tool_results]
    results.extend(record.result for record in stored.records if isinstance(record, ResultSaved))
    return _by_call(results)


def _by_call(results: Sequence[ToolResult]) -> dict[str, ToolResult]:
    """Results by call id (a later one wins), without their durations: a file recorded again
    differs only where the run did."""
    return {r.call_id: attrs.evolve(r, duration=0.0) for r in results}


def describe(request: RecordedRequest) -> list[str]:
    """The request as readable lines: one field a line, multi-line text on lines of its own;
    bytes as their digest and size (two different images differ there)."""
    with blobs_apart():
        data = _converter.unstructure(request, RecordedRequest)
    lines = [
        *_lines("instructions", request.instructions, ""),
        *_lines("tools", "(not recorded)" if request.tools is None else list(request.tools), ""),
        *_lines("tool_choice", request.tool_choice or "(not recorded)", ""),
        "messages:",
    ]
    for number, message in enumerate(data.get("messages", [])):
        kind = message.pop("type")
        lines.append(f"  [{number}] {kind}:")
        for key, value in message.items():
            lines.extend(_lines(key, value, "    "))
    return lines


def _lines(key: str, value: object, pad: str) -> list[str]:
    if isinstance(value, str) and "\n" in value:
        return [f"{pad}{key}: |", *(f"{pad}  {line}" for line in value.split("\n"))]
    if isinstance(value, list) and any(isinstance(item, dict) for item in value):
        out = [f"{pad}{key}:"]
        for number, item in enumerate(value):
            out.extend(_lines(f"[{number}]", item, pad + "  "))
        return out
    if isinstance(value, dict):
        out = [f"{pad}{key}:"]
        for name, item in value.items():
            out.extend(_lines(name, item, pad + "  "))
        return out
    return [f"{pad}{key}: {orjson.dumps(value).decode()}"]


def mismatch(index: int, recorded: Interaction, count: int, actual: RecordedRequest) -> None:
    """Raise the `CassetteMismatchError` of interaction `index` unless `actual` (as far as the
    recording knows it) equals the recorded request."""
    if recorded.request.accepts(actual):
        return
    diff = difflib.unified_diff(
        describe(recorded.request),
        describe(actual.as_known_by(recorded.request)),
        f"recorded request {index}",
        f"actual request {index}",
        lineterm="",
    )
    raise CassetteMismatchError(index, count, "\n".join(diff))
