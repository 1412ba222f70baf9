"""A reflection phase that runs after the tools and may ask for another pass or stop.

When every tool call of a step failed, it adds a note asking the model to reconsider and starts the
next iteration at once; after `max_failed_steps` such steps in a row it stops the run with a typed
reason. Insert it with `ReActLoop(..., phases=[*default_phases(), ReflectionPhase()])`.
"""

from __future__ import annotations

from collections.abc import Sequence

from attrs import frozen

from reactloop import StopReason, SystemMessage
from reactloop.phases import NextIteration, PhaseDecision, Proceed, Run, Step, Stop, ToolResult


def _all_failed(results: Sequence[ToolResult]) -> bool:
    return bool(results) and all(result.is_error for result in results)


def failed_streak(steps: Sequence[Step]) -> int:
    """How many of the most recent steps had only failed tool calls."""
    streak = 0
    for step in reversed(steps):
        if not _all_failed(step.tool_results):
            break
        streak += 1
    return streak


@frozen
class ReflectionPhase:
    """After tools: reflect on failures, ask for another pass, or give up."""

    max_failed_steps: int = 2

    async def __call__(self, run: Run) -> PhaseDecision:
        """Proceed on success; on a failed step add a reflection note or stop."""
        draft = run.state.current
        if draft is None or not _all_failed(draft.tool_results):
            return Proceed()
        streak = 1 + failed_streak(run.state.steps)
        if streak >= self.max_failed_steps:
            detail = f"reflection: {streak} steps in a row had only failed tool calls"
            return Stop(StopReason.CONDITION, detail)
        names = ", ".join(sorted({r.name for r in draft.tool_results}))
        note = f"Reflection: every tool call failed ({names}). Read the errors; change approach."
        run.state.messages.append(SystemMessage(note))
        return NextIteration()
