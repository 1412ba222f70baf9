"""`ModelPrice`, the `PriceTable` contract, a user's own table (`Prices`), and `cost_of`: the money
one call's usage cost at a model's prices."""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal
from typing import Protocol, runtime_checkable

from attrs import field, frozen

from reactloop._core import Usage
from reactloop._validate import checked_arguments, fail, instance, integer, text

MILLION = Decimal(1_000_000)


def _money(option: str, value: object) -> Decimal:
    """A price as a `Decimal`: a Decimal, int or float (read from its shortest text), >= 0."""
    if isinstance(value, bool) or not isinstance(value, Decimal | int | float):
        fail(option, value, "a Decimal, int or float")
    price = value if isinstance(value, Decimal) else Decimal(str(value))
    if not price.is_finite() or price < 0:
        fail(option, value, "a finite number >= 0")
    return price


def _input(value: Decimal | float) -> Decimal:
    return _money("ModelPrice.input", value)


def _output(value: Decimal | float) -> Decimal:
    return _money("ModelPrice.output", value)


def _optional(name: str, value: Decimal | float | None) -> Decimal | None:
    return None if value is None else _money(f"ModelPrice.{name}", value)


def _cache_read(value: Decimal | float | None) -> Decimal | None:
    return _optional("cache_read", value)


def _cache_write(value: Decimal | float | None) -> Decimal | None:
    return _optional("cache_write", value)


def _cache_write_1h(value: Decimal | float | None) -> Decimal | None:
    return _optional("cache_write_1h", value)


@checked_arguments
@frozen
class ModelPrice:
    """A model's prices in dollars per million tokens: `input` (uncached input), `output`,
    `cache_read` (None: billed as input), `cache_write` (5-minute writes; None: as input) and
    `cache_write_1h` (one-hour writes; None: as `cache_write`). `long_context` is a threshold and
    the prices that apply to the whole call when its input tokens exceed it (None: no tier)."""

    input: Decimal = field(converter=_input)
    output: Decimal = field(converter=_output)
    cache_read: Decimal | None = field(default=None, converter=_cache_read)
    cache_write: Decimal | None = field(default=None, converter=_cache_write)
    cache_write_1h: Decimal | None = field(default=None, converter=_cache_write_1h)
    long_context: tuple[int, ModelPrice] | None = None

    def __attrs_post_init__(self) -> None:
        if self.long_context is not None:
            pair = self.long_context
            if not isinstance(pair, tuple) or len(pair) != 2:
                fail("ModelPrice.long_context", pair, "a (threshold, ModelPrice) pair")
            integer("ModelPrice.long_context[0]", pair[0])
            instance("ModelPrice.long_context[1]", pair[1], ModelPrice, "a ModelPrice")


def cost_of(usage: Usage, price: ModelPrice) -> Decimal:
    """What `usage` cost at `price`, in dollars: each kind of token at its own price."""
    if price.long_context is not None and usage.input_tokens > price.long_context[0]:
        price = price.long_context[1]
    cache_write = price.input if price.cache_write is None else price.cache_write
    write_1h = cache_write if price.cache_write_1h is None else price.cache_write_1h
    read = price.input if price.cache_read is None else price.cache_read
    written_5m = max(0, usage.cache_write_tokens - usage.cache_write_1h_tokens)
    per_million = (
        usage.uncached_input_tokens * price.input
        + usage.cache_read_tokens * read
        + written_5m * cache_write
        + usage.cache_write_1h_tokens * write_1h
        + usage.output_tokens * price.output
    )
    return per_million / MILLION


@runtime_checkable
class PriceTable(Protocol):
    """Where a loop finds a model's prices: None when the table does not know the model (its
    calls' cost is then unknown, never zero)."""

    def price(self, provider: str, model: str) -> ModelPrice | None:
        """The prices of `model` served by `provider` (e.g. "anthropic", "claude-sonnet-4-5")."""
        ...


def _table(value: Mapping[str, ModelPrice]) -> dict[str, ModelPrice]:
    if not isinstance(value, Mapping):
        fail("Prices.table", value, "a mapping of model ids (or prefixes) to ModelPrice")
    return dict(value)


@checked_arguments
@frozen
class Prices:
    """A user's own price table: model ids, or id prefixes (the longest that matches wins), to
    their `ModelPrice`, whichever the provider:
    `Prices({"gpt-4o": ModelPrice(input=2.5, output=10, cache_read=1.25)})`."""

    table: Mapping[str, ModelPrice] = field(converter=_table)

    def __attrs_post_init__(self) -> None:
        for key, value in self.table.items():
            text("Prices.table key", key)
            instance(f"Prices.table[{key!r}]", value, ModelPrice, "a ModelPrice")

    def price(self, provider: str, model: str) -> ModelPrice | None:
        """The entry for the model id, else for its longest prefix in the table, else None."""
        found = self.table.get(model)
        if found is not None:
            return found
        prefixes = [key for key in self.table if model.startswith(key)]
        return self.table[max(prefixes, key=len)] if prefixes else None
