"""Which calls a person must approve: `ApprovalPolicy` decides per call from an `ApprovalCheck`
(the call, its validated arguments, the run's context, the tool's own flag), and sets deadlines."""

from __future__ import annotations

import inspect
import time
from collections.abc import Awaitable, Callable
from typing import Any, TypeAlias

from attrs import frozen

from reactloop._core import RunContext, ToolCall
from reactloop._errors import ContractError
from reactloop._validate import checked_arguments, function, optional_function, optional_number


@frozen
class ApprovalCheck:
    """What an approval policy sees of one call: the call, its validated arguments, the run's
    context, and whether the tool itself requires approval."""

    call: ToolCall
    arguments: dict[str, Any]
    context: RunContext[Any]
    tool_requires_approval: bool


PolicyAnswer: TypeAlias = bool | str | None
NeedsApproval: TypeAlias = Callable[[ApprovalCheck], PolicyAnswer | Awaitable[PolicyAnswer]]


@checked_arguments
@frozen
class ApprovalPolicy:
    """A loop's rules for approvals.

    `needs_approval(check)` decides per call: True or a reason (str) holds it, False lets it run,
    None leaves it to the tool (`@tool(requires_approval=True)`). `expire_after` seconds after a
    run pauses, its undecided calls are denied when it is resumed; `wall_clock` tells the time
    (epoch seconds; inject one in tests).
    """

    needs_approval: NeedsApproval | None = None
    expire_after: float | None = None
    wall_clock: Callable[[], float] = time.time

    def __attrs_post_init__(self) -> None:
        optional_function("ApprovalPolicy.needs_approval", self.needs_approval, 1)
        optional_number("ApprovalPolicy.expire_after", self.expire_after)
        function("ApprovalPolicy.wall_clock", self.wall_clock, 0)

    async def hold_reason(self, check: ApprovalCheck) -> str | None:
        """Why this call must wait for approval, or None when it may run."""
        answer: object = None
        if self.needs_approval is not None:
            answer = self.needs_approval(check)
            if inspect.isawaitable(answer):
                answer = await answer
        if answer is None:
            answer = check.tool_requires_approval
        return _reason(check.call.name, answer)

    def deadline(self) -> float | None:
        """When calls held now expire (epoch seconds), if they do."""
        if self.expire_after is None:
            return None
        return self.wall_clock() + self.expire_after


def _reason(tool: str, answer: object) -> str | None:
    if answer is True:
        return f"{tool!r} requires approval"
    if answer is False:
        return None
    if isinstance(answer, str) and answer.strip():
        return answer
    rule = "an approval policy returns True, False, None or a reason (a non-empty str)"
    raise ContractError("ApprovalPolicy.needs_approval", rule, answer)


DEFAULT_POLICY = ApprovalPolicy()
