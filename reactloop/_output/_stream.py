"""Partial structured answers while a model call streams: which deltas carry the answer (the
final-answer call's arguments, or the text), fed to an incremental partial-JSON parser."""

from __future__ import annotations

from typing import Any

from reactloop._core import ModelDelta, TextDelta, ToolCallDelta
from reactloop._errors import PartialJsonError
from reactloop._output._partial import UNCHANGED, PartialJson
from reactloop._output._schema import WRAPPER_KEY
from reactloop._output._spec import FINAL_TOOL, Output, OutputStrategy

NOTHING: Any = UNCHANGED


class PartialAnswers:
    """Feeds one model call's deltas; `feed` gives the answer so far, or `NOTHING` new.

    A delta that makes the JSON invalid ends the partials (the whole answer is still checked,
    and sent back, when the call ends); partials never fail a run.
    """

    def __init__(self, output: Output) -> None:
        self._output = output
        self._parser: PartialJson | None = PartialJson(
            fences=output.strategy is OutputStrategy.PROMPTED
        )
        self._call: int | None = None  # the index of the final-answer call (TOOL)
        self._wrapped = output.spec.wrapped and output.strategy is not OutputStrategy.PROMPTED

    def feed(self, delta: ModelDelta) -> Any:
        """The partial answer after `delta`, or `NOTHING`."""
        piece = self._piece(delta)
        if not piece or self._parser is None:
            return NOTHING
        try:
            partial = self._parser.feed(piece)
        except PartialJsonError:
            self._parser = None
            return NOTHING
        if partial is UNCHANGED or not self._wrapped:
            return partial
        if isinstance(partial, dict) and WRAPPER_KEY in partial:
            return partial[WRAPPER_KEY]
        return NOTHING

    def _piece(self, delta: ModelDelta) -> str:
        if isinstance(delta, TextDelta):
            return "" if self._output.strategy is OutputStrategy.TOOL else delta.text
        if not isinstance(delta, ToolCallDelta) or self._output.strategy is not OutputStrategy.TOOL:
            return ""
        if delta.name == FINAL_TOOL:
            self._call = delta.index
        return delta.arguments_delta if delta.index == self._call else ""
