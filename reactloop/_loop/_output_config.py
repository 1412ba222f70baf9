"""What a loop's structured output adds to its configuration: the request settings of a native
output, the final-answer tool among the loop's tools, and the OutputPhase its phases need."""

from __future__ import annotations

from collections.abc import Sequence

from reactloop._core import ModelSettings, Phase, Tool
from reactloop._errors import ConfigurationError
from reactloop._loop._run import LoopConfig
from reactloop._output import Output
from reactloop._phases import OutputPhase


def request_settings(output: Output | None, settings: ModelSettings) -> ModelSettings | None:
    """The settings every request carries, computed once: with a NATIVE output's format."""
    return None if output is None else output.settings(settings)


def offer_final_tool(tools: dict[str, Tool], output: Output | None) -> None:
    """With the TOOL strategy the final-answer tool is one of the loop's tools."""
    final = None if output is None else output.tool
    if final is None:
        return
    if final.name in tools:
        rule = f"a name other than {final.name!r}, which the final-answer tool of output_type uses"
        raise ConfigurationError.invalid("tools", final.name, rule)
    tools[final.name] = final


def check_output_phase(config: LoopConfig, phases: Sequence[Phase]) -> None:
    """A loop with `output_type` needs an `OutputPhase` among its phases to check the answer."""
    if config.output is None or any(isinstance(phase, OutputPhase) for phase in phases):
        return
    rule = "a sequence with OutputPhase() (before ToolPhase) when output_type is given"
    raise ConfigurationError.invalid("phases", phases, rule)
