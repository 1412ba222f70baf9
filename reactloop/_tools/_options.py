"""`ToolSelection`: which of a loop's tools each step offers (`tool_selection=`)."""

from __future__ import annotations

from attrs import frozen

from reactloop._core import ToolSelector
from reactloop._validate import checked_arguments, optional_function, optional_integer


@checked_arguments
@frozen
class ToolSelection:
    """The tools offered each step, when a loop has more than a request should carry:
    `tool_selection=ToolSelection(...)`.

    Every field is optional:

    - `selector` (None): a `ToolSelector`, a function of the run and the tools returning the
      ones to offer, best first (async or not); None with `max_tools` ranks with
      `RelevanceSelector()`.
    - `max_tools` (None): at most this many tools offered per request (None: no cap).

    With neither, every tool is offered at every step (the default). The final-answer tool of a
    structured output is always offered.
    """

    selector: ToolSelector | None = None
    max_tools: int | None = None

    def __attrs_post_init__(self) -> None:
        optional_function("ToolSelection.selector", self.selector, 2)
        optional_integer("ToolSelection.max_tools", self.max_tools)
