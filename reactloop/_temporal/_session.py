"""`SessionWorkflow`: a session's turns, one at a time. Turns arrive by signal (signal-with-start
starts the workflow for a new session); each runs as a child `RunWorkflow` whose history is the
transcript so far, so no two turns of a session interleave and each sees the ones before it.
The workflow continues as new after a turn when Temporal suggests it, when its history holds
the loop's `HistoryLimits.continue_after` events, or every `TURNS_PER_RUN` turns, with the
transcript and the turns still queued, so its history stays small."""

from __future__ import annotations

from attrs import evolve, frozen
from temporalio import workflow
from temporalio.common import WorkflowIDReusePolicy
from temporalio.exceptions import ChildWorkflowError, WorkflowAlreadyStartedError

from reactloop._durable import replay
from reactloop._temporal._contracts import (
    WORKFLOW_RUN,
    WORKFLOW_SESSION,
    RunRequest,
    run_workflow_id,
)
from reactloop._temporal._payloads import decode, encode, encode_messages
from reactloop._temporal._workflow import decode_outcome, registered

TURNS_PER_RUN = 20
"""Turns one session workflow run serves before it continues as new."""


@frozen
class SessionStart:
    """A session workflow's input: the loop, the session, its transcript so far (encoded
    messages, None for a new session) and the turns already queued (encoded `RunRequest`s)."""

    loop: str
    session_id: str
    transcript: bytes | None = None
    queued: tuple[bytes, ...] = ()


@workflow.defn(name=WORKFLOW_SESSION, sandboxed=False)
class SessionWorkflow:
    """Serves a session's turns in the order they arrive, each a child run workflow."""

    def __init__(self) -> None:
        self._queued: list[bytes] = []

    @workflow.run
    async def run(self, data: bytes) -> None:
        """Serve turns until the workflow continues as new (it never ends by itself)."""
        start = decode(data, SessionStart)
        self._queued[:0] = start.queued
        transcript, served = start.transcript, 0
        while True:
            await workflow.wait_condition(lambda: bool(self._queued))
            turn = decode(self._queued.pop(0), RunRequest)
            transcript = await _turn(evolve(turn, history=transcript))
            served += 1
            if served >= TURNS_PER_RUN or _long(start.loop):
                await workflow.wait_condition(workflow.all_handlers_finished)
                rest = tuple(self._queued)
                workflow.continue_as_new(encode(evolve(start, transcript=transcript, queued=rest)))

    @workflow.signal(name="turn")
    def turn(self, data: bytes) -> None:
        """A new turn (an encoded `RunRequest`): it runs after the turns before it."""
        self._queued.append(data)


def _long(loop: str) -> bool:
    """Whether the session's history is long enough to continue as new (the loop's limits)."""
    info = workflow.info()
    suggested = info.is_continue_as_new_suggested()
    return registered(loop).history.long(info.get_current_history_length(), suggested)


async def _turn(request: RunRequest) -> bytes | None:
    """Run one turn as a child run workflow; the transcript it leaves (its messages, which
    begin with the history it was given); a turn whose workflow failed leaves it as it was, and
    so does a turn whose run id names a run already (queued twice: it runs once)."""
    try:
        journal: bytes = await workflow.execute_child_workflow(
            WORKFLOW_RUN,
            encode(request),
            id=run_workflow_id(request.loop, request.run_id),
            result_type=bytes,
            id_reuse_policy=WorkflowIDReusePolicy.REJECT_DUPLICATE,
        )
    except (ChildWorkflowError, WorkflowAlreadyStartedError):
        return request.history
    return encode_messages(replay(decode_outcome(journal)[0]).stored.messages)
