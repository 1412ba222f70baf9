"""The ways to run a loop: to the end (`run`), in the background (`start`), as a stream of
events (`stream`), and again from a store or a state token (`resume`, `resume_stream`). Each
prepares a run and hands it to the orchestrator's `drive`, the one code path of them all."""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import Any, Generic, Unpack

from reactloop._core import Message, OutputT, RunResult, unwrap_single_error
from reactloop._loop._agent_tool import DEFAULT_MAX_DEPTH, AgentTool, agent_tool
from reactloop._loop._handle import Drive, RunHandle, RunStream, open_handle, open_stream
from reactloop._loop._lifecycle import Departure, LoopResources, RunInput, start_run
from reactloop._loop._resume import Resumed, ResumeOptions, resume_any
from reactloop._loop._run import LoopConfig, Run
from reactloop._loop._run_ids import existing_run
from reactloop._stored_errors import RunExistsError
from reactloop._validate import checked_arguments


class RunEntryPoints(LoopResources, Generic[OutputT]):
    """What a program calls on a loop; `ReActLoop` adds the orchestration (`drive`)."""

    @abstractmethod
    async def drive(self, run: Run, departure: Departure | None = None) -> RunResult[Any]:
        """Execute a prepared run to its end."""

    async def run(
        self, text: RunInput, *, history: Sequence[Message] = (), **context: Any
    ) -> RunResult[OutputT]:
        """Run to the end and return the result. `text` is the user's input: a string, a
        `UserMessage`, or a list of parts (`["What is this?", ImagePart(...)]`); `context` takes
        deps, user_id, session_id, and `run_id` (a stored run of that id is resumed, or
        `if_exists="error"` refuses it)."""
        begun = await begin(self.config, text, history, context)
        if isinstance(begun, Resumed):
            return begun.result or await self._complete(begun.run)
        return await self._complete(begun)

    async def resume(
        self, run_id: str | None = None, **options: Unpack[ResumeOptions]
    ) -> RunResult[OutputT]:
        """Continue a stored run by id, or a paused run from its `state=` token, with `decisions=`
        for its held calls and `deps=` (never stored); a finished run gives its stored result."""
        resumed = await resume_any(self.config, run_id, options)
        return resumed.result or await self._complete(resumed.run)

    async def _complete(self, run: Run) -> RunResult[OutputT]:
        with run.journal, unwrap_single_error():
            result = await self.drive(run)
        return raise_if_strict(self.config, result)

    @asynccontextmanager
    async def start(
        self, text: RunInput, *, history: Sequence[Message] = (), **context: Any
    ) -> AsyncIterator[RunHandle[OutputT]]:
        """Run in the background of this block: `handle.interrupt()`, `await handle.result()`;
        a `run_id` naming a stored run gives that run, as `run()` does."""
        run, drive = await self._begin(text, history, context)
        with run.journal:
            async with open_handle(run, drive) as handle:
                yield handle

    @asynccontextmanager
    async def stream(
        self, text: RunInput, *, history: Sequence[Message] = (), **context: Any
    ) -> AsyncIterator[RunStream[OutputT]]:
        """A new run, yielding typed events; `await events.result()` gives its `RunResult`.

        Leaving the block before the run ended (break, return, an exception) ends the run with
        `StopReason.STREAM_CLOSED`; the block's own exception comes out as itself.
        """
        run, drive = await self._begin(text, history, context)
        with run.journal:
            async with open_stream(run, drive) as events:
                yield events

    async def _begin(
        self, text: RunInput, history: Sequence[Message], context: dict[str, Any]
    ) -> tuple[Run, Drive]:
        """A new run and how to drive it; or the stored run a caller-chosen `run_id` names, and
        how to go on with it (driven on, or its stored end replayed when it finished)."""
        begun = await begin(self.config, text, history, context)
        if not isinstance(begun, Resumed):
            return begun, self.drive
        return begun.run, self.drive if begun.result is None else begun.replay_result

    @checked_arguments
    def as_tool(
        self,
        *,
        name: str,
        description: str,
        max_depth: int = DEFAULT_MAX_DEPTH,
        timeout: float | None = None,
    ) -> AgentTool:
        """This loop as a tool of another loop: each call runs it on the task the model gives
        (`{"input": ...}`) and answers with the run's output. `max_depth` bounds how many runs
        deep agent tools may nest; `timeout` (seconds) takes the calling loop's default if None.
        """
        return agent_tool(
            self, name=name, description=description, max_depth=max_depth, timeout=timeout
        )

    @asynccontextmanager
    async def resume_stream(
        self, run_id: str | None = None, **options: Unpack[ResumeOptions]
    ) -> AsyncIterator[RunStream[OutputT]]:
        """`resume()` as a stream of events, like `stream()`; a finished run streams its end."""
        resumed = await resume_any(self.config, run_id, options)
        drive = self.drive if resumed.result is None else resumed.replay_result
        with resumed.run.journal:
            async with open_stream(resumed.run, drive) as events:
                yield events


def raise_if_strict(config: LoopConfig, result: RunResult[Any]) -> RunResult[Any]:
    """In strict mode a failed run raises its error instead of returning it."""
    if config.strict and result.error is not None:
        raise result.error
    return result


async def begin(
    config: LoopConfig, text: RunInput, history: Sequence[Message], context: Mapping[str, Any]
) -> Run | Resumed:
    """A new run, or the stored run a caller-chosen `run_id` names. Two callers starting one
    id at once: the store lets one create it (`RunExistsError` for the other), and the other
    gets that run as if it had been stored before (whose driver then has it: a conflict)."""
    resumed = await existing_run(config, context)
    if resumed is not None:
        return resumed
    try:
        return await start_run(config, text, history=history, context=context)
    except RunExistsError:
        resumed = await existing_run(config, context)  # if_exists="error" raises it again
        if resumed is None:
            raise
        return resumed
