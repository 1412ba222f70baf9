"""Whether each request of a run extends the previous one: the prefix a prompt cache can reuse.

A provider's prompt cache matches a request's longest prefix seen before. A request that only
appends messages to the previous one keeps that prefix; a chunk dropped by the context window,
changed instructions or tools, or messages rewritten by `prepare_step`, a hook or a phase break
it. `PrefixWatch` names what broke it, so a run can count what costs it cache reads.
"""

from __future__ import annotations

from attrs import define

from reactloop._core import Message, ModelRequest, ToolSpec

TRIMMED = "trimmed"  # the context window dropped a chunk of history
INSTRUCTIONS = "instructions"  # the instructions (system prompt) changed
TOOLS = "tools"  # the tools offered changed
MESSAGES = "messages"  # earlier messages changed otherwise (prepare_step, a hook, a phase)


@define
class PrefixWatch:
    """The last request a run sent (what the next one is compared with) and the context
    window's drop count then."""

    messages: tuple[Message, ...] | None = None
    instructions: str | None = None
    tools: tuple[ToolSpec, ...] = ()
    drops: int = 0

    def observe(self, request: ModelRequest, drops: int) -> tuple[str, ...]:
        """Why `request` does not extend the last request (empty when it does, or is the
        first); `drops` is the context window's chunk-drop count so far.

        Messages are compared by identity first (tuple equality, in C): a run's transcript
        only grows, so the usual check is one pass over the same objects.
        """
        previous = self.messages
        breaks: tuple[str, ...] = ()
        if previous is not None:
            breaks = self._breaks(request, previous, drops)
        self.messages, self.drops = request.messages, drops
        self.instructions, self.tools = request.instructions, request.tools
        return breaks

    def _breaks(
        self, request: ModelRequest, previous: tuple[Message, ...], drops: int
    ) -> tuple[str, ...]:
        breaks: list[str] = []
        if request.instructions != self.instructions:
            breaks.append(INSTRUCTIONS)
        if request.tools is not self.tools and request.tools != self.tools:
            breaks.append(TOOLS)
        messages = request.messages
        if len(messages) < len(previous) or messages[: len(previous)] != previous:
            breaks.append(TRIMMED if drops != self.drops else MESSAGES)
        return tuple(breaks)
