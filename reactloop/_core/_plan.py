"""What one model call will use (`StepPlan`), and the hook that may change it per step."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from attrs import frozen

from reactloop._core._contracts import Model, Tool
from reactloop._core._messages import ForcedTool, Message, ToolChoice

if TYPE_CHECKING:
    from reactloop._loop import Run


@frozen
class StepPlan:
    """What one model call will use; `prepare_step` may return a changed copy for this step only."""

    model: Model
    tools: tuple[Tool, ...]
    tool_choice: ToolChoice | ForcedTool
    messages: tuple[Message, ...]
    instructions: str | None


PrepareStep = Callable[["Run", StepPlan], StepPlan | Awaitable[StepPlan]]
