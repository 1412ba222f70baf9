"""`Rig`: reactloop and the hand-written loop set up side by side over the same script and tool."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence

from attrs import frozen

from benchmarks import _handwritten as handwritten
from benchmarks._fakes import FINAL_TEXT, InstantModel, Script, ToolFn, as_tool
from benchmarks._measure import Contender
from reactloop import ContextWindow, Message, ReActLoop, RunResult, StopReason
from reactloop.models import ToolSpec

PROMPT = "go"
REACTLOOP = "reactloop"
HANDWRITTEN = "handwritten"


class IncompleteRunError(RuntimeError):
    """A benchmarked run did not end the way the script says; its timing would mean nothing."""


def expect_completed(result: RunResult, expected: str = FINAL_TEXT) -> None:
    """Fail unless the run completed with the scripted answer."""
    if result.stop_reason is not StopReason.COMPLETED or result.output != expected:
        raise IncompleteRunError(
            f"reactloop run ended with {result.stop_reason.value} ({result.stop_detail!r}), "
            f"output {result.output!r}; expected a completed run answering {expected!r}"
        )


def expect_answer(text: str, expected: str = FINAL_TEXT) -> None:
    """Fail unless the hand-written run answered with the scripted text."""
    if text != expected:
        raise IncompleteRunError(f"hand-written run answered {text!r}, expected {expected!r}")


@frozen
class Rig:
    """Both loops, each over its own copy of one script (so their stamps stay apart)."""

    loop: ReActLoop
    ours: Script
    theirs: Script
    model: InstantModel
    tools: dict[str, ToolFn]
    specs: tuple[ToolSpec, ...]

    @classmethod
    def build(
        cls, make_script: Callable[[], Script], fn: ToolFn, window: ContextWindow | None = None
    ) -> Rig:
        """A reactloop with `fn` as its tool and enough iterations, and the hand-written side.

        With `window`, reactloop also budgets every request against that context window.
        """
        ours, theirs = make_script(), make_script()
        loop = ReActLoop(
            InstantModel(ours),
            tools=[as_tool(fn)],
            max_iterations=ours.steps + 1,
            context_window=window,
        )
        specs = (as_tool(fn).spec,)
        return cls(loop, ours, theirs, InstantModel(theirs), {fn.__name__: fn}, specs)

    async def run_ours(self, history: Sequence[Message] = ()) -> None:
        """One reactloop run to the scripted answer."""
        expect_completed(await self.loop.run(PROMPT, history=history), self.final_text)

    async def run_theirs(self, history: Sequence[Message] = ()) -> None:
        """One hand-written run to the scripted answer."""
        text = await handwritten.run(self.model, self.tools, self.specs, PROMPT, history=history)
        expect_answer(text, self.final_text)

    @property
    def final_text(self) -> str:
        """The answer that ends a run of this script."""
        return "x" * self.ours.deltas if self.ours.deltas else FINAL_TEXT

    def stamped(self, history: Sequence[Message] = ()) -> dict[str, Contender[list[float]]]:
        """One run per side, each sample being the model-call stamps of that run."""
        return {
            REACTLOOP: _stamps_of(self.ours, lambda: self.run_ours(history)),
            HANDWRITTEN: _stamps_of(self.theirs, lambda: self.run_theirs(history)),
        }


def _stamps_of(script: Script, go: Callable[[], Awaitable[None]]) -> Contender[list[float]]:
    async def sample() -> list[float]:
        script.stamps = []
        await go()
        return script.stamps

    return sample
