"""A planning phase that runs once, before the first reasoning step.

It asks the run's model for a short plan (without tools) and appends the plan to the run's
instructions, so every later step sees it. `ask_model` makes the call under the loop's rules
(retries, timeout, telemetry) and counts its tokens (before the first step they land in
`RunResult.setup_usage`).
Insert it with
`ReActLoop(..., start_phases=[*default_start_phases(), PlanningPhase()])`.
"""

from __future__ import annotations

from attrs import frozen

from reactloop import UserMessage
from reactloop.models import ModelRequest
from reactloop.phases import PhaseDecision, Proceed, Run, ask_model

PLANNER_PROMPT = "Write a short numbered plan (at most 3 steps) for answering the user's request."


@frozen
class PlanningPhase:
    """Asks the model for a plan once and keeps it in the instructions."""

    prompt: str = PLANNER_PROMPT

    async def __call__(self, run: Run) -> PhaseDecision:
        """Add the model's plan to the run's instructions, then proceed."""
        state = run.state
        request = ModelRequest(
            messages=(*state.messages, UserMessage(self.prompt)), instructions=state.instructions
        )
        response = await ask_model(run, request)
        plan = response.message.text.strip()
        state.phase_data["plan"] = plan  # kept (and restored on resume) when the loop has a store
        state.instructions = f"{state.instructions or ''}\n\nPlan:\n{plan}".strip()
        return Proceed()
