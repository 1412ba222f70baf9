"""Errors about stored runs: resuming them, their sessions and leases, the decisions and state
tokens of paused runs, and recorded runs (cassettes). Part of the one tree under `ReactLoopError`
(see `reactloop._errors`)."""

from __future__ import annotations

import enum
from collections.abc import Sequence

from reactloop._errors import ConfigurationError, ErrorCode, ReactLoopError, show


class RunNotFoundError(ReactLoopError):
    """No stored run has this id (resume, load or delete by id)."""

    code = ErrorCode.CONFIGURATION

    def __init__(self, run_id: str) -> None:
        super().__init__(f"no stored run has the id {run_id!r}")
        self.run_id = run_id


class MissingToolError(ReactLoopError):
    """A run is resumed with a loop that lacks tools the run called: its calls could not run."""

    code = ErrorCode.CONFIGURATION

    def __init__(self, run_id: str, missing: Sequence[str], available: Sequence[str]) -> None:
        known = ", ".join(sorted(available)) or "none"
        super().__init__(
            f"run {run_id} cannot be resumed: it used the tools {sorted(missing)!r}, which this "
            f"loop does not have (its tools: {known}); resume it with a loop that has them"
        )
        self.run_id = run_id
        self.missing = tuple(missing)


class RunInProgressError(ReactLoopError):
    """A run is resumed while this process still drives it (a run has one driver at a time)."""

    code = ErrorCode.CONFLICT

    def __init__(self, run_id: str) -> None:
        super().__init__(
            f"run {run_id} is in progress in this process: a run is driven by one caller at a "
            "time; await its result instead of resuming it"
        )
        self.run_id = run_id


class RunExistsError(ReactLoopError):
    """A run started with a caller-chosen `run_id` that a stored run has already, and
    `if_exists="error"`: a run id names one run."""

    code = ErrorCode.CONFLICT

    def __init__(self, run_id: str) -> None:
        super().__init__(
            f"run_id {run_id!r} names a stored run already: a run id names one run, and "
            "if_exists='error' refuses a second; resume it, or leave if_exists at 'resume'"
        )
        self.run_id = run_id


class SessionBusyError(ReactLoopError):
    """A second run of a session started while the first is in progress or paused for decisions
    (`paused_run`): turns never interleave."""

    code = ErrorCode.CONFLICT

    def __init__(self, session_id: str, paused_run: str | None = None) -> None:
        if paused_run is None:
            why = "already has a run in progress: a session runs one turn at a time; wait for "
            why += "that run's result and start the next turn then"
        else:
            why = f"has a paused run ({paused_run}) waiting for decisions: a session runs one "
            why += "turn at a time; resume it (or delete it) before the next turn"
        super().__init__(f"session {session_id!r} {why}")
        self.session_id = session_id
        self.paused_run = paused_run


class LeaseHeldError(ReactLoopError):
    """Another worker holds the run's lease (a shared PostgreSQL store): one driver at a time."""

    code = ErrorCode.CONFLICT

    def __init__(self, run_id: str, owner: str, seconds_left: float) -> None:
        super().__init__(
            f"run {run_id} is leased by worker {owner!r} for {seconds_left:.1f} s more: a run is "
            "driven by one worker at a time; it can be claimed once that lease expires"
        )
        self.run_id = run_id
        self.owner = owner
        self.seconds_left = seconds_left


class LeaseLostError(ReactLoopError):
    """This worker no longer holds the run's lease (it stalled past it, another worker took the
    run over, or the run ended elsewhere): nothing more was written, and the run stopped here
    before any new model or tool call. `discarded` names calls whose tool had already run when
    the lease was lost: their results were kept out of the journal."""

    code = ErrorCode.CONFLICT

    def __init__(
        self, run_id: str, worker_id: str, holder: str | None, discarded: Sequence[str] = ()
    ) -> None:
        now = "no worker holds it now" if holder is None else f"now leased by worker {holder!r}"
        kept = f"; results kept out of the journal: {', '.join(discarded)}" if discarded else ""
        super().__init__(
            f"run {run_id}: worker {worker_id!r} lost its lease ({now}): a run is driven by one "
            f"worker at a time, so this worker stopped writing and calling{kept}"
        )
        self.run_id = run_id
        self.worker_id = worker_id
        self.holder = holder
        self.discarded = tuple(discarded)


class DecisionError(ConfigurationError):
    """A decision given to `resume()` cannot apply: an unknown call, the wrong kind of decision
    for how the call is held, or edited arguments the tool's schema refuses. Nothing ran."""

    def __init__(self, call_id: str, value: object, rule: str, problem: str = "") -> None:
        option = f"decisions[{call_id!r}]"
        detail = f" ({problem})" if problem else ""
        super().__init__(
            f"{option} must be {rule}, got {show(value)}{detail}; nothing was run",
            option=option,
            value=value,
            rule=rule,
        )
        self.call_id = call_id


class StoreError(ReactLoopError):
    """The run store failed (I/O, a locked or corrupt file) or holds data it cannot read."""

    code = ErrorCode.STORE

    def __init__(self, message: str) -> None:
        super().__init__(message)


class UnreadableRunError(StoreError):
    """A stored run's journal cannot be read (a corrupt record, a record of an unknown kind or
    one a newer reactloop wrote, a journal not starting with `RunCreated`): reading it again
    gives the same error, so a worker parks the run instead of retrying it."""


class StateTokenReason(enum.StrEnum):
    """Which check a state token failed (`StateTokenError.reason`): safe to switch on and log."""

    MALFORMED = "malformed"  # not a str, or not of the form `<version>.<payload>.<signature>`
    UNKNOWN_VERSION = "unknown_version"  # a version this reactloop cannot read (or verify)
    BAD_SIGNATURE = "bad_signature"  # altered, or signed with a key the loop does not hold
    UNREADABLE = "unreadable"  # signed by a held key, but its payload cannot be read
    TOO_LARGE = "too_large"  # longer than max_state_token_bytes, or inflating past its bound
    STALE = "stale"  # genuine, but the run's stored state moved on: an old token replayed


_TOKEN_RULES = {
    StateTokenReason.MALFORMED: (
        "a state token is a str '<version>.<payload>.<signature>' (base64url) as the loop issued it"
    ),
    StateTokenReason.UNKNOWN_VERSION: "a state token must be of a version this reactloop reads",
    StateTokenReason.BAD_SIGNATURE: (
        "a state token must come back exactly as issued, signed with one of the loop's state keys"
    ),
    StateTokenReason.UNREADABLE: (
        "a correctly signed state token must hold records this reactloop reads"
    ),
    StateTokenReason.STALE: "a state token resumes the run only from the state it was issued for",
    StateTokenReason.TOO_LARGE: (
        "a state token is at most max_state_token_bytes long, and its payload inflates to at most"
        " 32 times that"
    ),
}


class StateTokenError(ReactLoopError):
    """A paused run's state token was refused before anything in it was used.

    `reason` says which check failed (a `StateTokenReason`), `rule` the rule it broke and
    `detail` what was found; neither the message nor any attribute holds a key, and an unsigned
    payload is never quoted.
    """

    code = ErrorCode.INVALID_STATE

    def __init__(self, reason: StateTokenReason, detail: str) -> None:
        rule = _TOKEN_RULES[reason]
        super().__init__(f"state token refused ({reason}): {rule}; {detail}")
        self.reason = reason
        self.rule = rule
        self.detail = detail


class CassetteError(ReactLoopError):
    """A recorded run (a cassette) cannot be read, or its replay departed from the recording.

    None of these is a `ModelError`, so a replay that departs is never retried: the run fails at
    once with the error as `result.error` (raised by `run()` under `strict=True`).
    """

    code = ErrorCode.CONFIGURATION


class CassetteFormatError(CassetteError):
    """A file is not a cassette this version can read: broken JSON, a wrong layout, or another
    format version; `source` names the file, `problem` says what is wrong."""

    def __init__(self, source: str, problem: str) -> None:
        super().__init__(f"cassette {source} cannot be read: {problem}")
        self.source = source
        self.problem = problem


class CassetteMismatchError(CassetteError):
    """A replayed model request differs from the recorded one: `index` is the interaction
    (counting from 0), `diff` a unified diff of the two requests (recorded, then actual)."""

    def __init__(self, index: int, recorded: int, diff: str) -> None:
        super().__init__(
            f"replayed request differs from the recording at interaction {index} (counting "
            f"from 0, of {recorded} recorded); - recorded, + actual:\n{diff}"
        )
        self.index = index
        self.recorded = recorded
        self.diff = diff


class CassetteExhaustedError(CassetteError):
    """The replayed run asked the model more often than the recording did."""

    def __init__(self, recorded: int) -> None:
        super().__init__(
            f"replayed run made a model request past the end of the recording: all {recorded} "
            "recorded interactions were used"
        )
        self.recorded = recorded


class UnrecordedCallError(CassetteError):
    """A tool served from a recording was called with a name and arguments it has no (more)
    recorded results for; the model reads it as the call's error result."""

    def __init__(self, tool_name: str, arguments: str) -> None:
        super().__init__(
            f"tool call {tool_name}({arguments}) is not in the recording (or was recorded fewer "
            "times): served tools only return recorded results"
        )
        self.tool_name = tool_name
        self.arguments = arguments


class RecordedToolError(CassetteError):
    """A tool failure served from a recording; its message is the recorded one, so the model
    reads the same error result as in the recorded run."""
