"""Token estimation: a script-aware default, a protocol for exact tokenizers, a per-run ledger.

The default needs no tokenizer download and errs on the generous side for scripts that byte-pair
tokenizers split finely: about 4 characters per token for Latin text, 1.5 for CJK, Hangul and kana,
1 token per emoji and 3 characters per token for every other script. The `TokenLedger` estimates
each message once and keeps a running total, so budgeting a step costs O(new messages).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Protocol, assert_never, runtime_checkable

import orjson
from attrs import Factory, define, field, frozen

from reactloop._core import (
    AssistantMessage,
    Message,
    SystemMessage,
    ToolMessage,
    ToolSpec,
    UserMessage,
)
from reactloop._validate import checked_arguments, function, integer

# Weights in twelfths of a token per character, so mixed text sums exactly in integers.
_LATIN_WEIGHT = 3  # 1/4 token
_CJK_WEIGHT = 8  # 1/1.5 token
_EMOJI_WEIGHT = 12  # 1 token
_OTHER_WEIGHT = 4  # 1/3 token
_TWELFTHS = 12

_ZERO_WIDTH = re.compile("[\u200b-\u200f\ufe00-\ufe0f\U000e0000-\U000e007f]")
_LATIN = re.compile("[\x00-\u024f\u1e00-\u1eff\u2000-\u200a\u2010-\u206f]")
_CJK = re.compile(
    "[\u1100-\u11ff\u2e80-\u2fdf\u3000-\u33ff\u3400-\u4dbf\u4e00-\u9fff\ua960-\ua97f"
    "\uac00-\ud7ff\uf900-\ufaff\ufe30-\ufe4f\uff00-\uffef\U0001b000-\U0001b16f"
    "\U00020000-\U0003ffff]"
)
_EMOJI = re.compile("[\u2300-\u23ff\u2600-\u27bf\u2b00-\u2bff\U0001f000-\U0001faff]")


def _count(pattern: re.Pattern[str], text: str) -> int:
    return pattern.subn("", text)[1]


def estimate_text_tokens(text: str) -> int:
    """The default, script-aware estimate of how many tokens `text` is (0 for empty text).

    Joiners and variation selectors inside emoji sequences count nothing; the sum is rounded up.
    """
    if text.isascii():
        return -(-len(text) // 4)
    zero = _count(_ZERO_WIDTH, text)
    latin = _count(_LATIN, text)
    cjk = _count(_CJK, text)
    emoji = _count(_EMOJI, text)
    other = len(text) - zero - latin - cjk - emoji
    twelfths = (
        latin * _LATIN_WEIGHT + cjk * _CJK_WEIGHT + emoji * _EMOJI_WEIGHT + other * _OTHER_WEIGHT
    )
    return -(-twelfths // _TWELFTHS)


@runtime_checkable
class TokenEstimator(Protocol):
    """Counts tokens; implement it to plug an exact tokenizer into the context budget."""

    def count_text(self, text: str) -> int:
        """Tokens of a bare text (instructions, tool schemas)."""
        ...

    def count_message(self, message: Message) -> int:
        """Tokens one message takes in a request, including its framing overhead."""
        ...


def _non_negative(_: object, attribute: object, value: int) -> None:
    name = getattr(attribute, "name", "value")
    integer(f"MessageTokenEstimator.{name}", value, minimum=0)


def _counter(_: object, __: object, value: Callable[[str], int]) -> None:
    function("MessageTokenEstimator.count", value, 1)


@checked_arguments
@frozen
class MessageTokenEstimator:
    """Estimates messages from a text counter: texts, tool-call names, ids and arguments, results.

    `count_text` defaults to the script-aware heuristic; pass an exact tokenizer's counter (for
    example `lambda text: len(encoding.encode(text))`) to count exactly. `message_overhead` is
    added once per message (role and framing) and `tool_call_overhead` once per tool call.
    """

    count: Callable[[str], int] = field(default=estimate_text_tokens, validator=_counter)
    message_overhead: int = field(default=4, validator=_non_negative)
    tool_call_overhead: int = field(default=3, validator=_non_negative)

    def count_text(self, text: str) -> int:
        """Tokens of a bare text."""
        return self.count(text) if text else 0

    def count_message(self, message: Message) -> int:
        """Tokens of one message, framing included."""
        return self.message_overhead + self._content_tokens(message)

    def _content_tokens(self, message: Message) -> int:
        count = self.count_text
        if isinstance(message, SystemMessage | UserMessage):
            return count(message.text)
        if isinstance(message, ToolMessage):
            return count(message.text) + count(message.name) + count(message.call_id)
        if isinstance(message, AssistantMessage):
            calls = sum(
                self.tool_call_overhead + count(call.name) + count(call.arguments) + count(call.id)
                for call in message.tool_calls
            )
            thought = sum(count(part.readable) for part in message.reasoning)
            return count(message.text) + count(message.refusal or "") + calls + thought
        assert_never(message)


DEFAULT_ESTIMATOR = MessageTokenEstimator()
"""The script-aware heuristic with the default overheads."""


def tool_spec_tokens(estimator: TokenEstimator, tools: Sequence[ToolSpec]) -> int:
    """Tokens the offered tools' names, descriptions and JSON schemas take in a request."""
    return sum(
        estimator.count_text(tool.name)
        + estimator.count_text(tool.description)
        + estimator.count_text(orjson.dumps(tool.parameters).decode())
        for tool in tools
    )


@define
class TokenLedger:
    """Per-message costs of one run's transcript, aligned with the list last given to `sync`.

    Each message is estimated once. When the new list extends the last one (the same messages
    first, as a run's transcript grows), only the new messages are estimated and the running total
    grows by theirs; otherwise known message objects keep their cost and only unknown ones are
    estimated.
    """

    estimator: TokenEstimator = DEFAULT_ESTIMATOR
    _messages: tuple[Message, ...] = ()
    _costs: list[int] = Factory(list)
    _total: int = 0

    @property
    def total(self) -> int:
        """Tokens of all messages of the list last synced."""
        return self._total

    @property
    def costs(self) -> Sequence[int]:
        """Each message's tokens, aligned with the list last synced."""
        return self._costs

    def sync(self, messages: Sequence[Message]) -> int:
        """Align the ledger with `messages` and return their total tokens."""
        seen = self._messages
        current = tuple(messages)
        # Tuple equality compares identical items by identity, in C: a fast check for a run's
        # transcript, which only grows. An equal message replacing one costs the same anyway.
        if len(current) >= len(seen) and current[: len(seen)] == seen:
            costs = [self.estimator.count_message(message) for message in current[len(seen) :]]
            self._costs.extend(costs)
            self._total += sum(costs)
        else:
            self._rebuild(current)
        self._messages = current
        return self._total

    def _rebuild(self, messages: tuple[Message, ...]) -> None:
        # The old tuple still holds every known message, so their ids cannot be reused meanwhile.
        pairs = zip(self._messages, self._costs, strict=True)
        known = {id(message): cost for message, cost in pairs}
        costs: list[int] = []
        for message in messages:
            cost = known.get(id(message))
            costs.append(self.estimator.count_message(message) if cost is None else cost)
        self._costs = costs
        self._total = sum(costs)
