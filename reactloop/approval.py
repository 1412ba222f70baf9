"""Human in the loop: calls that wait for a person's approval or for an outside runner.

Mark a tool `@tool(requires_approval=True)` (or `external=True` for a tool run elsewhere), or
give the loop an `ApprovalPolicy`. A step with held calls runs the others, then the run pauses
(`result.paused`, `result.pending`); resume it with a decision per held call:
`await loop.resume(run_id, decisions={call_id: Approve()})`.
"""

from reactloop._approval import ApprovalCheck, ApprovalOptions, ApprovalPolicy
from reactloop._core import (
    Approve,
    Decision,
    DecisionLike,
    DecisionScope,
    Deny,
    Edit,
    ExternalFailure,
    ExternalResult,
    HoldKind,
    PendingCall,
    publish,
)

__all__ = [
    "ApprovalCheck",
    "ApprovalOptions",
    "ApprovalPolicy",
    "Approve",
    "Decision",
    "DecisionLike",
    "DecisionScope",
    "Deny",
    "Edit",
    "ExternalFailure",
    "ExternalResult",
    "HoldKind",
    "PendingCall",
]

publish(__name__, globals())
