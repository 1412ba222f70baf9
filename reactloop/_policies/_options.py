"""`Limits`: the loop's caps, timeouts and concurrency in one options object (`limits=`)."""

from __future__ import annotations

from attrs import field, frozen

from reactloop._errors import ConfigurationError
from reactloop._policies._caps import CapPolicy, RepetitionPolicy
from reactloop._policies._limits import RunLimiter
from reactloop._validate import (
    checked_arguments,
    integer,
    member,
    optional_instance,
    optional_integer,
    optional_number,
)


@checked_arguments
@frozen
class Limits:
    """How far and how long a loop's runs may go, and how much runs at once: `limits=Limits(...)`.

    Every field is optional:

    - `max_tool_calls` (None): stop a run after this many tool calls (None: no cap).
    - `on_cap` (`CapPolicy.FINAL_CALL`): what reaching a cap does: one last model call without
      tools, or `STOP_NOW`; its string value (`"stop_now"`) is accepted.
    - `tool_timeout` (None): seconds per tool call (a tool's own `timeout` wins).
    - `model_timeout` (None): seconds per model call (each retry has its own).
    - `run_timeout` (None): seconds for the whole run.
    - `max_concurrency` (None): tool calls of one step running at once (None: unlimited).
    - `max_result_chars` (20,000): longer tool results are cut, with a marker.
    - `max_concurrent_runs` (None): runs of this loop executing at once (None: unlimited).
    - `run_limiter` (None): a `RunLimiter` shared with other loops, instead of
      `max_concurrent_runs` (not both).
    - `repetition` (`RepetitionPolicy()`: nudge after 3 identical calls in a row, stop after 5;
      None: never).
    """

    max_tool_calls: int | None = None
    on_cap: CapPolicy = CapPolicy.FINAL_CALL
    tool_timeout: float | None = None
    model_timeout: float | None = None
    run_timeout: float | None = None
    max_concurrency: int | None = None
    max_result_chars: int = 20_000
    max_concurrent_runs: int | None = None
    run_limiter: RunLimiter | None = field(default=None, eq=False)
    repetition: RepetitionPolicy | None = RepetitionPolicy()

    def __attrs_post_init__(self) -> None:
        optional_integer("Limits.max_tool_calls", self.max_tool_calls)
        object.__setattr__(self, "on_cap", member("Limits.on_cap", self.on_cap, CapPolicy))
        for name in ("tool_timeout", "model_timeout", "run_timeout"):
            optional_number(f"Limits.{name}", getattr(self, name))
        optional_integer("Limits.max_concurrency", self.max_concurrency)
        integer("Limits.max_result_chars", self.max_result_chars)
        optional_integer("Limits.max_concurrent_runs", self.max_concurrent_runs)
        optional_instance("Limits.run_limiter", self.run_limiter, RunLimiter, "a RunLimiter")
        rule = "a RepetitionPolicy"
        optional_instance("Limits.repetition", self.repetition, RepetitionPolicy, rule)
        if self.max_concurrent_runs is not None and self.run_limiter is not None:
            raise ConfigurationError(
                "give max_concurrent_runs or run_limiter, not both",
                option="Limits.max_concurrent_runs",
                value=self.max_concurrent_runs,
                rule="not given together with run_limiter",
            )
