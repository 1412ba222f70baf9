"""`CostOptions` (the loop's `cost=` group) and `Pricing`: which (provider, model) a model answers
with, and the cost put on each call's usage when the loop has a price table."""

from __future__ import annotations

from attrs import evolve, field, frozen

from reactloop._core import Model, ModelResponse, Usage
from reactloop._costs._prices import ModelPrice, PriceTable, cost_of
from reactloop._errors import ConfigurationError
from reactloop._validate import checked_arguments, fail

PriceKey = tuple[str, str]
"""(provider, model id), as a `PriceTable` is asked."""


@checked_arguments
@frozen
class CostOptions:
    """What a loop's calls cost: `cost=CostOptions(prices=GenAIPrices())` puts `Usage.cost` on
    every step and run; without it, costs are not computed (None: unknown) and a `CostBudget`
    is refused when the loop is built."""

    prices: PriceTable

    def __attrs_post_init__(self) -> None:
        if not isinstance(self.prices, PriceTable) or isinstance(self.prices, type):
            fail("CostOptions.prices", self.prices, "a PriceTable (an object with price())")


def price_keys(model: object) -> tuple[PriceKey, ...] | None:
    """Every (provider, model) `model` may answer with: its `price_keys()` when it has one (a
    fallback model lists its models), else its `provider` and `model` names (an HTTP model);
    None when it names neither (a scripted or wrapped model: its price cannot be known)."""
    listed = getattr(model, "price_keys", None)
    if callable(listed):
        keys = listed()
        return None if keys is None else tuple(keys)
    provider, name = getattr(model, "provider", None), getattr(model, "model", None)
    if isinstance(provider, str) and isinstance(name, str):
        return ((provider, name),)
    return None


def _answered_by(model: object, response: ModelResponse) -> PriceKey | None:
    """The (provider, model) that gave `response`: the model's `price_key(response)` when it
    has one (a fallback model says which of its models answered), else its only key."""
    chosen = getattr(model, "price_key", None)
    if callable(chosen):
        key = chosen(response)
        return None if key is None else (str(key[0]), str(key[1]))
    keys = price_keys(model)
    return keys[0] if keys is not None and len(keys) == 1 else None


def _unpriced(key: PriceKey | None, model: object, table: PriceTable) -> ConfigurationError:
    who = repr(model) if key is None else f"{key[0]} model {key[1]!r}"
    why = "names no provider and model" if key is None else f"has no price in {table!r}"
    return ConfigurationError(
        f"a CostBudget needs the price of every model the loop may call: {who} {why}",
        option="stop_when",
        value=who,
        rule="a CostBudget only with models whose price is known",
    )


@frozen
class Pricing:
    """The loop's price table at run time: looks each (provider, model) up once, and puts the
    cost on a call's usage; `required` (a cost budget is set) makes an unknown price an error."""

    table: PriceTable
    required: bool = False
    _found: dict[PriceKey, ModelPrice | None] = field(factory=dict, init=False, eq=False)

    def lookup(self, key: PriceKey) -> ModelPrice | None:
        """The table's price for `key`, asked once per loop."""
        if key not in self._found:
            self._found[key] = self.table.price(*key)
        return self._found[key]

    def check(self, model: Model) -> None:
        """Refuse a model whose price is unknown when a budget needs it (when the loop is built,
        for every model it lists)."""
        if not self.required:
            return
        keys = price_keys(model)
        if keys is None:
            raise _unpriced(None, model, self.table)
        for key in keys:
            if self.lookup(key) is None:
                raise _unpriced(key, model, self.table)

    def priced(self, model: Model, response: ModelResponse, spent: Usage) -> Usage:
        """`spent` with its cost (None when the answering model's price is unknown; with a
        budget, that is a `ConfigurationError`: a fallback model first chosen without a price).
        A cost the provider reported (OpenRouter's `usage.cost`) is what it billed, and stays."""
        if spent.cost is not None:
            return spent
        key = _answered_by(model, response)
        price = None if key is None else self.lookup(key)
        if price is None:
            if self.required:
                raise _unpriced(key, model, self.table)
            return spent
        return evolve(spent, cost=cost_of(spent, price))


def pricing_for(options: CostOptions | None, budgeted: bool, model: Model) -> Pricing | None:
    """The loop's pricing (None without `cost=`: no cost is computed), checked when the loop is
    built: a cost budget needs a price table and the price of every model the loop lists."""
    if options is None:
        if budgeted:
            raise ConfigurationError(
                "a CostBudget needs the loop's price table: give cost=CostOptions(prices=...)",
                option="cost",
                value=None,
                rule="a CostOptions when stop_when holds a CostBudget",
            )
        return None
    pricing = Pricing(options.prices, budgeted)
    pricing.check(model)
    return pricing
