"""Run stores: durable runs, resume by id, and conversation sessions.

Give a loop a store (`ReActLoop(model, store=SqliteStore("runs.db"))`, or a URL such as
`"sqlite:///runs.db"`) and each run journals its model responses and tool results as they happen;
`await loop.resume(run_id)` continues a run that stopped early, and `session_id=` continues a
conversation. `RunStore` is the contract a store for another database implements;
`SessionTurnsStore` adds reading a session a page at a time, newest first, so that a turn with
a context window reads only what the window keeps (the stores here implement both).

`PostgresStore` (`"postgresql://..."`) is shared by many workers: a run is driven by the worker
holding its lease; `resume_claimable(loop)` resumes runs whose worker died, and parks a run it
cannot resume (`RunStatus.PARKED`) until `unpark_run(store, run_id)` hands it back.
"""

from reactloop._core import (
    CallsHeld,
    CallStarted,
    DecisionsSaved,
    InstructionsSaved,
    LeasingStore,
    PhaseDataSaved,
    Record,
    ResponseSaved,
    ResultSaved,
    RunCreated,
    RunEnded,
    RunParked,
    RunStatus,
    RunStore,
    RunSummary,
    RunUnparked,
    SessionTurn,
    SessionTurnsStore,
    StepClosed,
    StoredRun,
    SubRunLinked,
    publish,
)
from reactloop._durable import (
    MemoryStore,
    PostgresStore,
    SqliteStore,
    StoreTimeouts,
    store_from_url,
)
from reactloop._loop import ResumeOptions, resume_claimable, unpark_run

__all__ = [
    "CallStarted",
    "CallsHeld",
    "DecisionsSaved",
    "InstructionsSaved",
    "LeasingStore",
    "MemoryStore",
    "PhaseDataSaved",
    "PostgresStore",
    "Record",
    "ResponseSaved",
    "ResultSaved",
    "ResumeOptions",
    "RunCreated",
    "RunEnded",
    "RunParked",
    "RunStatus",
    "RunStore",
    "RunSummary",
    "RunUnparked",
    "SessionTurn",
    "SessionTurnsStore",
    "SqliteStore",
    "StepClosed",
    "StoreTimeouts",
    "StoredRun",
    "SubRunLinked",
    "resume_claimable",
    "store_from_url",
    "unpark_run",
]

publish(__name__, globals())
