"""What the serving pieces agree on: a protocol request read into a `ChatTurn` (protocol-neutral),
the `StreamEncoder` each protocol implements to turn a run's events into its SSE frames, the
access check (`AccessRequest`, `Action`) the user's hook answers, and the `RunBackend` a server
drives runs with (a `ReActLoop`, or a loop run elsewhere: on Temporal, `TemporalLoop.served`)."""

from __future__ import annotations

import enum
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from typing import TYPE_CHECKING, Any, Protocol, Unpack

from attrs import field, frozen

from reactloop._core import ContentPart, Decision, Event, Message, RunResult, RunStore
from reactloop._loop import ResumeOptions

if TYPE_CHECKING:
    from reactloop._telemetry._otel import Tracing


class Action(enum.StrEnum):
    """What a request wants to do to a run or session: what the `authorize` hook is asked."""

    START = "start"  # start a run (a new turn of a session)
    READ = "read"  # stream a run's events, reconnect to it, read a session's messages
    APPROVE = "approve"  # answer a paused run's held calls
    CANCEL = "cancel"  # stop a run


@frozen
class AccessRequest:
    """One question to the `authorize` hook: may `user_id` do `action` to this run or session?
    `owner` is the user who started the run (None when it has none or there is no run yet);
    `headers` are the HTTP request's, lower-cased names."""

    user_id: str
    action: Action
    session_id: str | None = None
    run_id: str | None = None
    owner: str | None = None
    headers: Mapping[str, str] = field(factory=dict)


@frozen
class ChatTurn:
    """What one protocol request asks of the server, whatever the protocol.

    `session_id` is the conversation (the AI SDK's chat id, AG-UI's thread id); `run_id` the
    caller-chosen id of the run (a retried request names the same run: it starts once);
    `content` the new user turn (empty when the request only answers held calls); `decisions`
    the answers to held calls, by call id; `history` the earlier turns the client posted, already
    validated to the subset a client may supply (used only when the server has no store: with
    one, the journal is the truth); `client_run_id` the protocol's own id for this stream when
    it differs from the run's (AG-UI names each resume a new run).
    """

    session_id: str | None
    run_id: str | None
    content: tuple[str | ContentPart, ...] = ()
    decisions: Mapping[str, Decision] = field(factory=dict)
    history: tuple[Message, ...] = ()
    client_run_id: str | None = None


@frozen
class StreamContext:
    """What an encoder knows of the stream it writes: the run it carries, its session, and the
    protocol's own ids for this stream (AG-UI's thread and run ids; the AI SDK's message id).

    `continued` is True when the stream goes on with a message the client already shows (a run
    resumed by the client's decisions: the AI SDK appends the rest to the same assistant
    message), so the encoder does not show again the step and calls the client already has.
    """

    run_id: str
    session_id: str | None = None
    client_run_id: str | None = None
    message_id: str | None = None
    continued: bool = False


class StreamEncoder(Protocol):
    """One protocol's SSE writer for one response: stateful (open text parts, tool calls), and
    deterministic, so feeding it the same events again gives the same frames (a reconnect
    replays events into a fresh encoder and sends only what follows the client's last id)."""

    media_type: str
    headers: Mapping[str, str]

    def opening(self) -> bytes:
        """The frames a stream starts with; may be empty. Called before any event for a fresh
        stream, and for a continuation (`Last-Event-ID`) AFTER the encoder was fed the events
        the client already has, and sent: AG-UI's client checks each response as a whole run,
        so a continuation restates RUN_STARTED and re-opens what those events left open."""

    def encode(self, event: Event, event_id: str | None) -> bytes:
        """The frames for one event, the last of them carrying `id: event_id` when given; empty
        when the protocol shows nothing of it."""

    def failure(self, message: str, code: str) -> bytes:
        """The protocol's error form for a run or request that failed (no traceback, no secret)."""

    def closing(self) -> bytes:
        """The frames that end the stream (the AI SDK's `[DONE]`); may be empty."""


class ProtocolAdapter(Protocol):
    """One wire protocol, as the HTTP layer uses it: read a request body into a `ChatTurn`, and
    make the encoder of a response. Implemented by the AI SDK and AG-UI modules."""

    name: str

    def read_turn(self, body: bytes, *, has_store: bool) -> ChatTurn:
        """The turn a request body asks for; `MalformedRequestError` naming the rule it broke.
        With a store only the new user turn and the answers to held calls are taken (the journal
        is the truth); without one, `history` is the validated subset a client may supply."""

    def encoder(self, context: StreamContext) -> StreamEncoder:
        """A fresh encoder for one response carrying `context.run_id`."""


class ServedStream(Protocol):
    """One run's events as a server streams them (`RunStream` is one): in order, ending with
    the run's end or pause; `interrupt()` asks the run to stop, its later events still come."""

    @property
    def run_id(self) -> str:
        """The run's id."""

    def interrupt(self, message: str | None = None) -> None:
        """Stop the run at its next safe point; `message` becomes its output if given."""

    def __aiter__(self) -> AsyncIterator[Event]:
        """The events in order."""

    async def result(self) -> RunResult[Any]:
        """The run's result once the stream ended."""


class BackendConfig(Protocol):
    """What a server reads of its backend's configuration: the store its runs are journaled in
    (None: none; the server then keeps paused runs' tokens itself) and its telemetry."""

    @property
    def store(self) -> RunStore | None:
        """The run store a server reads runs, sessions and held calls from."""

    @property
    def tracing(self) -> Tracing | None:
        """The telemetry a server's request spans use; None for none."""


class RunBackend(Protocol):
    """What `ChatServer` drives runs with: a `ReActLoop`, or any backend with the same run
    handle contract (a loop on Temporal: `TemporalLoop.served(client, task_queue=...)`), so
    one server serves runs wherever they are driven."""

    @property
    def config(self) -> BackendConfig:
        """Its store and telemetry."""

    def stream(
        self, text: Any, *, history: Sequence[Message] = (), **context: Any
    ) -> AbstractAsyncContextManager[ServedStream]:
        """Start a run (`run_id`, `session_id`, `user_id` in `context`) and stream it."""

    def resume_stream(
        self, run_id: str | None = None, **options: Unpack[ResumeOptions]
    ) -> AbstractAsyncContextManager[ServedStream]:
        """Resume a paused run with `decisions` (or follow a run on) and stream the rest."""
