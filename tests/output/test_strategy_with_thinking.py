"""The structured-output strategy reads the loop's settings: a model that refuses a forced tool
choice only with thinking on (Anthropic) gets the forced final-answer tool without thinking, and
the schema in the prompt with it."""

from __future__ import annotations

import attrs
import pytest

from reactloop import ModelSettings, ReActLoop
from reactloop._output._spec import build_output
from reactloop.models import ReasoningSettings
from reactloop.output import OutputStrategy
from reactloop.providers import AnthropicModel, model_profile

THINKING = ModelSettings(max_output_tokens=8000, reasoning=ReasoningSettings(budget_tokens=2048))
NO_NATIVE = attrs.evolve(model_profile("claude-sonnet-4-5"), native_output=False)


@attrs.frozen
class Answer:
    city: str


@pytest.mark.parametrize(
    ("settings", "strategy", "forcing"),
    [(None, OutputStrategy.TOOL, True), (ModelSettings(), OutputStrategy.TOOL, True),
     (THINKING, OutputStrategy.PROMPTED, False)],
)  # fmt: skip
def test_auto_never_forces_the_final_tool_on_a_model_thinking_with_these_settings(
    settings: ModelSettings | None, strategy: OutputStrategy, forcing: bool
) -> None:
    claude = AnthropicModel("claude-sonnet-4-5", api_key="k", profile=NO_NATIVE)
    output = build_output(Answer, claude, settings=settings)
    assert (output.strategy, output.can_force) == (strategy, forcing)


def test_a_loop_reads_its_settings_for_the_strategy() -> None:
    claude = AnthropicModel("claude-sonnet-4-5", api_key="k", profile=NO_NATIVE)
    thinking = ReActLoop(claude, output_type=Answer, settings=THINKING)
    plain = ReActLoop(claude, output_type=Answer)
    assert thinking.config.output is not None and plain.config.output is not None
    assert thinking.config.output.strategy is OutputStrategy.PROMPTED
    assert plain.config.output.strategy is OutputStrategy.TOOL
    derived = thinking.with_output(Answer).config.output
    assert derived is not None and derived.strategy is OutputStrategy.PROMPTED
