"""Errors of running loops on Temporal: each names the rule that was broken and the value that
broke it. Part of the one tree under `ReactLoopError`; a refused decision is reactloop's own
`DecisionError`, raised to the caller as a local `resume()` would."""

from __future__ import annotations

from reactloop._errors import ConfigurationError, ErrorCode, ReactLoopError

INSTALL = "pip install 'reactloop[temporal]'"


class TemporalRunError(ReactLoopError):
    """A run on Temporal could not be started, reached or read: `run_id` names it."""

    def __init__(self, message: str, run_id: str | None = None) -> None:
        super().__init__(message)
        self.run_id = run_id


class TemporalNotInstalledError(ConfigurationError):
    """The `temporal` extra is missing: Temporal's Python SDK (temporalio) cannot be imported."""

    def __init__(self, missing: str) -> None:
        super().__init__(
            f"running loops on Temporal needs the temporalio package ({INSTALL}); "
            f"importing {missing!r} failed"
        )


class UnknownLoopError(TemporalRunError):
    """A workflow names a loop no worker in this process registered (`temporal_worker(...,
    loops=[...])` must list a `TemporalLoop` of that name)."""

    code = ErrorCode.CONFIGURATION

    def __init__(self, name: str, known: list[str]) -> None:
        listed = ", ".join(sorted(known)) or "none"
        super().__init__(
            f"the loop named {name!r} must be registered with temporal_worker(loops=[...]) "
            f"in this worker; registered: {listed}"
        )
        self.name = name


class RunFailedError(TemporalRunError):
    """The run's workflow failed, timed out or was cancelled or terminated, so it has no
    result: `reason` is what Temporal reported."""

    def __init__(self, run_id: str, reason: str) -> None:
        super().__init__(f"the run {run_id!r} has no result: its workflow {reason}", run_id)
        self.reason = reason


class RunNotPausedError(TemporalRunError):
    """Decisions were given to a run that holds no calls (it has not paused yet, or it ended)."""

    code = ErrorCode.CONFLICT

    def __init__(self, run_id: str, reason: str) -> None:
        super().__init__(
            f"decisions need a paused run holding calls; the run {run_id!r} {reason}", run_id
        )


class PayloadTooLargeError(TemporalRunError):
    """What an activity would put in the workflow's history is over the loop's payload budget
    (`ActivityOptions.max_payload_bytes`, under Temporal's 2 MB a payload): `size` is its
    length in bytes, `limit` the budget. A tool's is its error result, a model's its error."""

    LIMIT = 2 * 1024 * 1024  # Temporal refuses a payload over this (and warns from 512 KB)

    def __init__(self, what: str, size: int, run_id: str | None = None, limit: int = LIMIT) -> None:
        super().__init__(
            f"{what} must be at most {limit} bytes to enter the workflow's history "
            f"(Temporal refuses payloads over {self.LIMIT} bytes); it was {size} bytes",
            run_id,
        )
        self.what = what
        self.size = size
        self.limit = limit


class HistoryLimitError(TemporalRunError):
    """A run's workflow history grew past the loop's limit (`HistoryLimits.fail_after` events)
    while the run was driving between steps, where it cannot continue as new without changing
    its result (it does at its pauses): the workflow fails with this instead of running on to
    Temporal's own limit, where Temporal terminates it without a word. `length` is the
    history's length in events, `limit` the limit."""

    def __init__(self, length: int, run_id: str | None = None, limit: int = 50_000) -> None:
        super().__init__(
            f"a run's workflow history must stay under {limit} events between its pauses "
            f"(it continues as new only at a pause); it reached {length}",
            run_id,
        )
        self.length = length
        self.limit = limit


class RemoteError(ReactLoopError):
    """An exception an event of a run on Temporal carries whose class this process cannot
    rebuild (not a reactloop error, or one of a module not loaded here): `kind` names the
    original class (`module:qualname`), `code` and the message are the original's."""

    def __init__(self, kind: str, message: str, code: ErrorCode | None = None) -> None:
        super().__init__(message)
        self.kind = kind
        if code is not None:
            self.code = code
