"""What the benchmarks report: one `Figure` per measured quantity, with its target."""

from __future__ import annotations

import enum
from typing import Any

from attrs import frozen


class Measure(enum.StrEnum):
    """What a target limits: reactloop's own value, or its ratio to the hand-written loop."""

    VALUE = "value"
    RATIO = "ratio"


@frozen
class Target:
    """An upper limit on a figure's value or ratio (a benchmark goal, not a test assertion)."""

    limit: float
    of: Measure = Measure.VALUE

    def describe(self, unit: str) -> str:
        """The target as the table shows it, e.g. `<= 2x` or `<= 10 us`."""
        if self.of is Measure.RATIO:
            return f"<= {self.limit:g}x"
        separator = "" if unit == "x" else " "
        return f"<= {self.limit:g}{separator}{unit}".rstrip()


@frozen
class Figure:
    """One measured quantity: reactloop's median and the hand-written loop's, when it has one.

    `reactloop` is None when the scenario was skipped; `note` then says why. A `difference` (the
    cost one option adds: two timings subtracted) can be zero or below when noise outweighs it.
    """

    scenario: str
    metric: str
    unit: str
    reactloop: float | None
    handwritten: float | None = None
    target: Target | None = None
    note: str = ""
    difference: bool = False

    @property
    def ratio(self) -> float | None:
        """reactloop's value over the hand-written loop's."""
        if self.reactloop is None or not self.handwritten:
            return None
        return self.reactloop / self.handwritten

    @property
    def met(self) -> bool | None:
        """Whether the target is met; None without a target or a figure."""
        if self.target is None or self.reactloop is None:
            return None
        measured = self.ratio if self.target.of is Measure.RATIO else self.reactloop
        return None if measured is None else measured <= self.target.limit

    def to_json(self) -> dict[str, Any]:
        """The figure with its ratio and verdict, for results.json."""
        target = self.target
        return {
            "scenario": self.scenario,
            "metric": self.metric,
            "unit": self.unit,
            "reactloop": self.reactloop,
            "handwritten": self.handwritten,
            "ratio": self.ratio,
            "target": None if target is None else {"limit": target.limit, "of": target.of.value},
            "met": self.met,
            "note": self.note,
        }
