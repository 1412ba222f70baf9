"""What a run costs in money: the price-table contract (`PriceTable`, `ModelPrice`), a user's own
table (`Prices`), the adapter over the genai-prices database (`GenAIPrices`, the `prices`
extra), the arithmetic from a call's `Usage` to its cost, and the loop's `CostOptions` with the
checks a cost budget needs (every model it may answer with has a price). Published by
`reactloop.costs`; the `CostBudget` stop condition lives with the others in `_policies`.

What other packages may use is imported here; the rest is private to the package."""

from reactloop._costs._genai import GenAIPrices
from reactloop._costs._prices import ModelPrice, Prices, PriceTable, cost_of
from reactloop._costs._pricing import CostOptions, Pricing, price_keys, pricing_for

__all__ = [
    "CostOptions",
    "GenAIPrices",
    "ModelPrice",
    "PriceTable",
    "Prices",
    "Pricing",
    "cost_of",
    "price_keys",
    "pricing_for",
]
