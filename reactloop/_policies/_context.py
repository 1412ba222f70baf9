"""Fitting a conversation into the model's context window by dropping whole units, oldest first.

Budget = context window - instructions - tool schemas - reserved output tokens. Before each model
call the conversation is cut into units (see `message_units`); when it is over budget, droppable
units are removed oldest first until it fits: old turns before the current user message first,
then the oldest steps after it. A tool call and its results always share a unit, so no trim can
separate them, and a conversation that fits is passed through untouched.

Across a run's steps the tracker drops in chunks (`ContextWindow.drop_to`): once over budget, it
drops down to a low-water mark and keeps those messages dropped, so the following requests only
append until the next drop and a provider's prompt cache keeps matching their prefix.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from attrs import Factory, define, field, frozen

from reactloop._core import (
    AssistantMessage,
    Message,
    SystemMessage,
    ToolMessage,
    ToolSpec,
    UserMessage,
    pair_calls,
)
from reactloop._errors import ConfigurationError, ContextTooLongError
from reactloop._policies._tokens import (
    DEFAULT_ESTIMATOR,
    TokenEstimator,
    TokenLedger,
    tool_spec_tokens,
)
from reactloop._validate import checked_arguments, fail, integer, number

logger = logging.getLogger("reactloop")


@frozen
class ContextBudget:
    """How many tokens one request's messages may take, and where the rest of the window went."""

    window: int
    instructions: int = 0
    tools: int = 0
    reserved_output: int = 0

    @property
    def tokens(self) -> int:
        """Tokens left for the messages."""
        return self.window - self.instructions - self.tools - self.reserved_output

    def describe(self) -> str:
        """The budget and how it was computed, for error messages."""
        return (
            f"{self.tokens} tokens (context window {self.window} - instructions "
            f"{self.instructions} - tools {self.tools} - reserved output {self.reserved_output})"
        )


@frozen
class Unit:
    """Messages `start` to `stop` (exclusive), kept or dropped together; pinned units never drop."""

    start: int
    stop: int
    pinned: bool


def _group_starts(messages: Sequence[Message], current: int) -> list[int]:
    """Where turns (before `current`) and steps (after it) begin, before merging linked ones."""
    lead = 0
    while lead < len(messages) and isinstance(messages[lead], SystemMessage):
        lead += 1
    starts = {0, lead, current, current + 1}
    for index in range(lead, len(messages)):
        kind = UserMessage if index < current else AssistantMessage
        if isinstance(messages[index], kind):
            starts.add(index)
    return sorted(start for start in starts if 0 <= start < len(messages))


def _linked_boundaries(messages: Sequence[Message]) -> list[bool]:
    """For each position, whether a call before it has its result at or after it."""
    depth = [0] * (len(messages) + 1)
    for call_index, result_index in pair_calls(messages).links:
        depth[call_index + 1] += 1
        depth[result_index + 1] -= 1
    linked: list[bool] = []
    running = 0
    for delta in depth[:-1]:
        running += delta
        linked.append(running > 0)
    return linked


def _current_user_index(messages: Sequence[Message]) -> int:
    for index in range(len(messages) - 1, -1, -1):
        if isinstance(messages[index], UserMessage):
            return index
    return -1


def message_units(messages: Sequence[Message]) -> list[Unit]:
    """Cut a conversation into units that are kept or dropped whole.

    The current user message is the last `UserMessage`. The units are:

    - the leading system messages (pinned);
    - before the current user message, one unit per turn: a user message and everything up to the
      next user message (messages before the first user message form a turn of their own);
    - the current user message (pinned);
    - after it, one unit per step: an assistant message and what follows up to the next assistant
      message, that is the results of its tool calls; the newest unit is pinned, as the next
      model call answers it.

    Units that a tool call and one of its results would straddle are merged, so a call and its
    results are always kept or dropped together; a merged unit is pinned if any part was.
    """
    if not messages:
        return []
    current = _current_user_index(messages)
    linked = _linked_boundaries(messages)
    starts = [start for start in _group_starts(messages, current) if not linked[start]]
    stops = [*starts[1:], len(messages)]
    last = len(starts) - 1
    units: list[Unit] = []
    for position, (start, stop) in enumerate(zip(starts, stops, strict=True)):
        leading = isinstance(messages[start], SystemMessage) and start == 0
        pinned = leading or start <= current < stop or position == last
        if start > current and not pinned:
            pinned = _reasons(messages[start:stop])
        units.append(Unit(start, stop, pinned))
    return units


def _reasons(messages: Sequence[Message]) -> bool:
    """True when an answer among `messages` carries reasoning."""
    return any(isinstance(m, AssistantMessage) and m.reasoning for m in messages)


def _too_long(budget: ContextBudget, needed: int) -> ContextTooLongError:
    return ContextTooLongError(
        f"the conversation cannot fit the context budget of {budget.describe()}: the messages "
        f"that are never dropped (leading system messages, the current user message, the "
        f"newest step and the current turn's steps that carry reasoning) need {needed} tokens",
        budget=budget.tokens,
        needed=needed,
    )


def _dropped_units(units: list[Unit], costs: Sequence[int], excess: int) -> list[Unit]:
    """The oldest droppable units whose costs together reach `excess`."""
    dropped: list[Unit] = []
    freed = 0
    for unit in units:
        if freed >= excess:
            break
        if not unit.pinned:
            dropped.append(unit)
            freed += sum(costs[unit.start : unit.stop])
    return dropped


def trim(
    messages: Sequence[Message], costs: Sequence[int], budget: ContextBudget
) -> tuple[Message, ...]:
    """The conversation with the fewest oldest units dropped that fits `budget`.

    `costs` are the messages' tokens, aligned with `messages`. A conversation that fits comes back
    unchanged; one whose pinned units alone exceed the budget raises `ContextTooLongError`.
    """
    kept = messages if isinstance(messages, tuple) else tuple(messages)
    excess = sum(costs) - budget.tokens
    if excess <= 0:
        return kept
    units = message_units(messages)
    needed = sum(sum(costs[unit.start : unit.stop]) for unit in units if unit.pinned)
    if needed > budget.tokens:
        raise _too_long(budget, needed)
    dropped = _dropped_units(units, costs, excess)
    gone = {index for unit in dropped for index in range(unit.start, unit.stop)}
    logger.debug("context trimmed: dropped %d of %d messages", len(gone), len(messages))
    return tuple(message for index, message in enumerate(messages) if index not in gone)


def _positive(_: object, __: object, value: int) -> None:
    integer("ContextWindow.max_tokens", value)


def _valid_drop_to(_: object, __: object, value: float) -> None:
    rule = "a finite number > 0 and <= 1 (the share of the budget a chunk drop leaves)"
    if number("ContextWindow.drop_to", value) > 1:
        fail("ContextWindow.drop_to", value, rule)


def _valid_estimator(_: object, __: object, value: object) -> None:
    if not isinstance(value, TokenEstimator):
        rule = "an object with count_text and count_message (a TokenEstimator)"
        raise ConfigurationError.invalid("ContextWindow.estimator", value, rule)


@checked_arguments
@frozen
class ContextWindow:
    """A model's context window and how much of it to keep free for the answer.

    `estimator` counts tokens (the script-aware heuristic by default; plug an exact tokenizer).
    `drop_to`: when a run's conversation outgrows the budget, whole units are dropped until it
    takes at most this share of the budget, and stay dropped, so the next requests extend this
    one (a stable prefix for prompt caching); 1.0 drops just enough, afresh before every request.
    Use `tracker()` once per run and its `fit` before each model call.
    """

    max_tokens: int = field(validator=_positive)
    reserved_output: int = 4096
    estimator: TokenEstimator = field(default=DEFAULT_ESTIMATOR, validator=_valid_estimator)
    drop_to: float = field(default=0.7, validator=_valid_drop_to)

    def __attrs_post_init__(self) -> None:
        integer("ContextWindow.reserved_output", self.reserved_output, minimum=0)
        if self.reserved_output >= self.max_tokens:
            raise ConfigurationError.invalid(
                "ContextWindow.reserved_output",
                self.reserved_output,
                f"below max_tokens ({self.max_tokens})",
            )

    def budget(
        self, instructions: str | None = None, tools: Sequence[ToolSpec] = ()
    ) -> ContextBudget:
        """The budget for the messages of a request with these instructions and tools."""
        estimator = self.estimator
        fixed = estimator.count_message(SystemMessage(instructions)) if instructions else 0
        tools_tokens = tool_spec_tokens(estimator, tools)
        return ContextBudget(self.max_tokens, fixed, tools_tokens, self.reserved_output)

    def tracker(self) -> ContextTracker:
        """A fresh per-run tracker, which remembers each message's tokens between steps."""
        return ContextTracker(self, TokenLedger(self.estimator))

    def fit(
        self,
        messages: Sequence[Message],
        instructions: str | None = None,
        tools: Sequence[ToolSpec] = (),
    ) -> tuple[Message, ...]:
        """`messages` trimmed to fit, estimating every message (use a tracker across steps)."""
        return self.tracker().fit(messages, instructions, tools)


@frozen
class _Sent:
    """A chunked fit: its input, what it kept and their tokens. The next input that only
    appends a step (no new user message, results only for calls it makes) keeps the same and
    appends, while it fits: O(new messages) instead of re-cutting the whole conversation."""

    given: tuple[Message, ...]
    kept: tuple[Message, ...]
    tokens: int

    def extended(
        self, messages: Sequence[Message], costs: Sequence[int], budget: ContextBudget
    ) -> _Sent | None:
        """This fit extended by the messages appended since, or None when the fast path does
        not apply (the caller then cuts the conversation into units again)."""
        given = self.given
        size = len(given)
        if len(messages) < size or tuple(messages[:size]) != given:
            return None
        added = tuple(messages[size:])
        tokens = self.tokens + sum(costs[size:])
        if tokens > budget.tokens or not _self_contained(added):
            return None
        return _Sent(given + added, self.kept + added, tokens)


def _self_contained(added: Sequence[Message]) -> bool:
    """No user message (a new turn re-cuts the units) and no result for an earlier call."""
    calls: set[str] = set()
    for message in added:
        if isinstance(message, UserMessage):
            return False
        if isinstance(message, AssistantMessage):
            calls.update(call.id for call in message.tool_calls)
        elif isinstance(message, ToolMessage) and message.call_id not in calls:
            return False
    return True


@define
class ContextTracker:
    """One run's token bookkeeping: each message is estimated once, and the budget is cached.

    When the conversation already fits, `fit` costs O(new messages) estimates. It remembers the
    messages it dropped (by identity), so later requests drop them again and only append; `drops`
    counts the chunk drops so far (each one changes the request's prefix).
    """

    window: ContextWindow
    ledger: TokenLedger
    _budget_key: tuple[str | None, tuple[ToolSpec, ...]] | None = None
    _budget: ContextBudget | None = None
    _gone: dict[int, Message] = Factory(dict)  # dropped messages by id (held, so ids stay theirs)
    _last: _Sent | None = None  # the last chunked fit, which the next may extend
    drops: int = 0

    def budget(self, instructions: str | None, tools: Sequence[ToolSpec]) -> ContextBudget:
        """The window's budget for these instructions and tools; recomputed when they change."""
        key = (instructions, tuple(tools))
        if self._budget is None or key != self._budget_key:
            self._budget_key = key
            self._budget = self.window.budget(instructions, tools)
        return self._budget

    def fit(
        self,
        messages: Sequence[Message],
        instructions: str | None = None,
        tools: Sequence[ToolSpec] = (),
    ) -> tuple[Message, ...]:
        """The messages to send: unchanged if they fit and nothing was dropped yet; else without
        the messages dropped before, and, when still over budget, a further chunk (see `trim`
        for `drop_to=1.0`)."""
        total = self.ledger.sync(messages)
        budget = self.budget(instructions, tools)
        if not self._gone and total <= budget.tokens:
            return messages if isinstance(messages, tuple) else tuple(messages)
        if self.window.drop_to >= 1:
            return trim(messages, self.ledger.costs, budget)
        last = self._last
        if last is not None:
            self._last = last.extended(messages, self.ledger.costs, budget)
            if self._last is not None:
                return self._last.kept
        return self._chunked(messages, total, budget)

    def _chunked(
        self, messages: Sequence[Message], total: int, budget: ContextBudget
    ) -> tuple[Message, ...]:
        """Drop the units holding messages dropped before; over budget, drop the oldest others
        down to the low-water mark (`drop_to` of the budget)."""
        costs = self.ledger.costs
        units = message_units(messages)
        needed = sum(sum(costs[unit.start : unit.stop]) for unit in units if unit.pinned)
        if needed > budget.tokens:
            raise _too_long(budget, needed)
        gone = [unit for unit in units if not unit.pinned and self._held(messages, unit)]
        clean = not any(unit.pinned and self._held(messages, unit) for unit in units)
        kept = total - sum(sum(costs[unit.start : unit.stop]) for unit in gone)
        if kept > budget.tokens:
            low_water = int(budget.tokens * self.window.drop_to)
            for unit in units:
                if kept <= low_water:
                    break
                if not unit.pinned and unit not in gone:
                    gone.append(unit)
                    kept -= sum(costs[unit.start : unit.stop])
        fitted = self._without(messages, gone)
        self._last = _Sent(tuple(messages), fitted, kept) if clean else None
        return fitted

    def _held(self, messages: Sequence[Message], unit: Unit) -> bool:
        """Whether a message of `unit` was dropped before."""
        return any(id(message) in self._gone for message in messages[unit.start : unit.stop])

    def _without(self, messages: Sequence[Message], gone: list[Unit]) -> tuple[Message, ...]:
        """`messages` without the `gone` units, remembered as dropped (a new drop is counted)."""
        before = len(self._gone)
        removed = {index for unit in gone for index in range(unit.start, unit.stop)}
        for index in removed:
            self._gone[id(messages[index])] = messages[index]
        if len(self._gone) > before:
            self.drops += 1
            logger.debug("context trimmed: dropped %d of %d messages", len(removed), len(messages))
        return tuple(message for index, message in enumerate(messages) if index not in removed)
