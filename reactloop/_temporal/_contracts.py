"""What the workflow and the activities exchange, and the names that tie them together.

Every activity argument and result is `bytes` (Temporal's default converter passes bytes as
they are), encoded by `_payloads` with reactloop's own codec; these frozen classes are what the
bytes hold. Activity names derive from the loop's stable `name`, so a worker of any version of
the code finds the activities a running workflow asks for.
"""

from __future__ import annotations

from typing import Any

from attrs import frozen

WORKFLOW_RUN = "reactloop.run"  # the workflow that drives one run
WORKFLOW_SESSION = "reactloop.session"  # the workflow that serves a session's turns one at a time


def model_activity(name: str) -> str:
    """The activity that makes one model call for the loop named `name`."""
    return f"{name}.model"


def tool_activity(name: str) -> str:
    """The activity that runs one tool call (any tool of the loop, MCP ones included)."""
    return f"{name}.tool"


def toolsets_activity(name: str) -> str:
    """The activity that lists the loop's toolsets' tools (MCP servers) for a step."""
    return f"{name}.toolsets"


def mirror_activity(name: str) -> str:
    """The activity that appends a run's new journal records to the loop's mirror store."""
    return f"{name}.mirror"


def run_workflow_id(name: str, run_id: str) -> str:
    """The workflow id of a run: known before it starts, one workflow per run id."""
    return f"reactloop:{name}:{run_id}"


def session_workflow_id(name: str, session_id: str) -> str:
    """The workflow id of a session's turn queue."""
    return f"reactloop:{name}:session:{session_id}"


@frozen
class RunInfo:
    """What a worker-side `deps_factory` learns of the run it builds deps for."""

    loop: str
    run_id: str
    user_id: str | None = None
    session_id: str | None = None


@frozen
class ModelCall:
    """One model call: the encoded `ModelRequest`, and whether the loop asked for a stream."""

    loop: str
    run_id: str
    request: bytes
    stream: bool


@frozen
class ModelAnswer:
    """A model call's outcome: the encoded `ModelResponse` and the deltas streamed before it,
    in order (replayed to the loop's `on_delta` in the workflow)."""

    response: bytes
    deltas: bytes


@frozen
class ToolInput:
    """One tool call: the tool's name, the validated arguments (JSON), and the run's ids."""

    loop: str
    tool: str
    arguments: bytes
    run_id: str
    call_id: str
    user_id: str | None = None
    session_id: str | None = None


@frozen
class ToolOutcome:
    """A tool call's outcome: its value (JSON, or encoded content parts), or the exception it
    raised (type name and message), never both. A tool's exception is a tool result, so the
    activity itself succeeds; only infrastructure failures fail it."""

    value: Any = None
    parts: bytes | None = None
    error_type: str | None = None
    error_message: str | None = None


@frozen
class RunRequest:
    """A run workflow's input: the loop's name, the user's input (encoded message) and ids, and
    the earlier transcript of its session (encoded messages), if any; `carried` is what an
    execution that continued as new hands the next (`_limits.carry`: journal, events)."""

    loop: str
    run_id: str
    text: bytes
    user_id: str | None = None
    session_id: str | None = None
    history: bytes | None = None
    carried: bytes | None = None


@frozen
class MirrorBatch:
    """A run's journal records to copy to the loop's mirror store: `records` (encoded) are the
    journal's from position `after` on, so a retried copy skips the ones the mirror has;
    `session_id` the session of a turn (the workflow's loop gets its transcript as history)."""

    loop: str
    run_id: str
    after: int
    records: bytes
    session_id: str | None = None
