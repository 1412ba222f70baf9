"""Serving runs on Temporal with `ChatServer`: `TemporalLoop.served(client, task_queue=...)` is a
`RunBackend` (the contract a `ReActLoop` meets), so the AI SDK's and AG-UI's endpoints start,
stream, approve and reconnect to runs that Temporal workers drive.

The server reads runs, sessions and held calls from the loop's mirror (`_mirror`: whole at
each pause and end), and streams a run's events from its workflow's journal as they come.
Answers to held calls are the workflow's checked update, so a call approved twice (two tabs,
two servers) runs once: the second answer is refused by the workflow and follows the run.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

import anyio
from attrs import frozen
from temporalio.client import Client
from temporalio.exceptions import WorkflowAlreadyStartedError
from temporalio.service import RPCError, RPCStatusCode

from reactloop._core import Event, Message, Record, RunEnded, RunFinished, RunResult, RunStore
from reactloop._durable import replay
from reactloop._errors import ConfigurationError
from reactloop._serve._replay import JournalReader
from reactloop._stored_errors import RunInProgressError
from reactloop._temporal._errors import RunNotPausedError
from reactloop._validate import text

if TYPE_CHECKING:
    from reactloop._temporal._client import TemporalLoop, TemporalRun

POLL = 0.05
"""Seconds between two reads of a running run's journal."""


@frozen
class ServedConfig:
    """What a server reads of a loop on Temporal: its mirror as the store, no telemetry of its
    own (spans are the workers')."""

    store: RunStore
    tracing: None = None


class TemporalStream:
    """A run's events read from its workflow's journal as it grows (a `ServedStream`): from its
    start, or (`known`: the journal at a pause) from the resume on; `interrupt()` signals the
    workflow from the reading task."""

    def __init__(self, run: TemporalRun, known: Sequence[Record] = ()) -> None:
        self._run = run
        self._known = list(known)
        self._stop: tuple[str | None] | None = None
        self._sent = False
        self._result: RunResult[Any] | None = None

    @property
    def run_id(self) -> str:
        """The run's id."""
        return self._run.run_id

    def interrupt(self, message: str | None = None) -> None:
        """Stop the run (the signal goes with the next read); `message` becomes its output."""
        self._stop = (message,)

    async def __aiter__(self) -> AsyncIterator[Event]:
        """The events after `known`, up to the run's next end (or pause)."""
        records, reader = list(self._known), JournalReader()
        if records:
            reader.read(replay(records).stored, hold_end=True)  # the server has these events
        base = len(records)
        while True:
            await self._signal()
            new, at_end = await self._run.records(len(records))
            records.extend(new)
            done = at_end and len(records) > base and isinstance(records[-1], RunEnded)
            if new or done:
                for event in reader.read(replay(records).stored, hold_end=not done):
                    if isinstance(event, RunFinished):
                        self._result = event.result
                    yield event
            if done:
                return
            await anyio.sleep(POLL)

    async def _signal(self) -> None:
        """Send the interrupt asked for, once; a run that ended first is left as it ended (as
        a local run's interrupt after its end does nothing)."""
        if self._stop is not None and not self._sent:
            self._sent = True
            try:
                await self._run.interrupt(self._stop[0])
            except RPCError as error:
                if error.status is not RPCStatusCode.NOT_FOUND:  # the workflow completed
                    raise

    async def result(self) -> RunResult[Any]:
        """The result the stream ended with (reading the rest first if it was not read)."""
        if self._result is None:
            async for _ in self:
                pass
        assert self._result is not None, "a stream read to its end has its result"
        return self._result


class ServedLoop:
    """A loop on Temporal as `ChatServer` drives it (`RunBackend`): runs start on `task_queue`
    through `client`, decisions are the workflow's update; the mirror is the server's store."""

    def __init__(self, loop: TemporalLoop, client: Client, task_queue: str) -> None:
        if loop.mirror is None:
            rule = "a TemporalLoop with a mirror (mirror=store): the server reads runs from it"
            raise ConfigurationError.invalid("TemporalLoop.served", loop, rule)
        self.loop = loop
        self.client = client
        self.task_queue = text("task_queue", task_queue)
        self.config = ServedConfig(loop.mirror)

    def __repr__(self) -> str:
        return f"ServedLoop({self.loop.name!r}, task_queue={self.task_queue!r})"

    @asynccontextmanager
    async def stream(
        self, text: Any, *, history: Sequence[Message] = (), **context: Any
    ) -> AsyncIterator[TemporalStream]:
        """Start a run (`run_id`, `session_id`, `user_id`) and stream it; a run id already
        started (a retried request, another server) streams that run."""
        if history:
            rule = "empty: a session's turns are the history of a loop on Temporal"
            raise ConfigurationError.invalid("history", history, rule)
        run_id = context.get("run_id")
        try:
            run = await self.loop.start(
                self.client,
                text,
                task_queue=self.task_queue,
                run_id=run_id,
                session_id=context.get("session_id"),
                user_id=context.get("user_id"),
            )
        except WorkflowAlreadyStartedError:
            run = self.loop.get(self.client, str(run_id))
        yield TemporalStream(run)

    @asynccontextmanager
    async def resume_stream(
        self, run_id: str | None = None, **options: Any
    ) -> AsyncIterator[TemporalStream]:
        """Answer a paused run's held calls (`decisions`) and stream what follows; without
        decisions, follow the run on from its journal as it stands."""
        if run_id is None:
            rule = "a run id: runs on Temporal are resumed by id (a paused run's token is unused)"
            raise ConfigurationError.invalid("run_id", options.get("state"), rule)
        run = self.loop.get(self.client, run_id)
        known, _ = await run.records()
        decisions: Mapping[str, Any] = options.get("decisions") or {}
        if decisions:
            try:
                await run.decide(decisions)
            except RunNotPausedError:  # another answer resumed it first: follow it instead
                raise RunInProgressError(run_id) from None
        yield TemporalStream(run, known)
