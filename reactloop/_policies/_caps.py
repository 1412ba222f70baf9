"""What reaching a cap does, and how repeating the same call is met: the policies the
iteration guards and the tool phase apply."""

from __future__ import annotations

import enum

from attrs import frozen

from reactloop._errors import ConfigurationError
from reactloop._validate import checked_arguments, integer


class CapPolicy(enum.StrEnum):
    """What reaching a cap does: one last model call without tools (default), or stop at once."""

    FINAL_CALL = "final_call"
    STOP_NOW = "stop_now"


@checked_arguments
@frozen
class RepetitionPolicy:
    """Same tool, same arguments, many times in a row: nudge the model, then stop the run."""

    nudge_after: int = 3
    stop_after: int = 5

    def __attrs_post_init__(self) -> None:
        integer("RepetitionPolicy.nudge_after", self.nudge_after)
        integer("RepetitionPolicy.stop_after", self.stop_after)
        if self.stop_after < self.nudge_after:
            raise ConfigurationError.invalid(
                "RepetitionPolicy.stop_after",
                self.stop_after,
                f">= nudge_after ({self.nudge_after})",
            )
