"""Run stores: durable runs, resume by id, and conversation sessions.

Give a loop a store (`ReActLoop(model, store=SqliteStore("runs.db"))`, or a URL such as
`"sqlite:///runs.db"`) and each run journals its model responses and tool results as they happen;
`await loop.resume(run_id)` continues a run that stopped early, and `session_id=` continues a
conversation. `RunStore` is the contract a store for another database implements.

`PostgresStore` (`"postgresql://..."`) is shared by many workers: a run is driven by the worker
holding its lease; `resume_claimable(loop)` resumes runs whose worker died.
"""

from reactloop import _lease
from reactloop._contracts import LeasingStore as _LeasingStore
from reactloop._contracts import RunStore
from reactloop._stores import MemoryStore, SqliteStore, store_from_url
from reactloop._stores._postgres import PostgresStore as _PostgresStore
from reactloop._stores._records import (
    CallStarted,
    InstructionsSaved,
    PhaseDataSaved,
    Record,
    ResponseSaved,
    ResultSaved,
    RunCreated,
    RunEnded,
    RunStatus,
    RunSummary,
    StepClosed,
    StoredRun,
)

# Many workers (issue 9): importable here, not yet in the pinned `__all__` below.
PostgresStore = _PostgresStore
LeasingStore = _LeasingStore
resume_claimable = _lease.resume_claimable

__all__ = [
    "CallStarted",
    "InstructionsSaved",
    "MemoryStore",
    "PhaseDataSaved",
    "Record",
    "ResponseSaved",
    "ResultSaved",
    "RunCreated",
    "RunEnded",
    "RunStatus",
    "RunStore",
    "RunSummary",
    "SqliteStore",
    "StepClosed",
    "StoredRun",
    "store_from_url",
]
