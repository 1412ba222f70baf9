"""What a run costs in money: the price-table contract (`PriceTable`, `ModelPrice`), your own
prices (`Prices`) or the genai-prices database (`GenAIPrices`, `pip install 'reactloop[prices]'`),
the loop's `CostOptions` (`cost=CostOptions(prices=...)` puts `Usage.cost` on every step and run)
and `cost_of`. The `CostBudget` stop condition is in `reactloop.stopping`."""

from reactloop._core import publish
from reactloop._costs import CostOptions, GenAIPrices, ModelPrice, Prices, PriceTable, cost_of

__all__ = ["CostOptions", "GenAIPrices", "ModelPrice", "PriceTable", "Prices", "cost_of"]

publish(__name__, globals())
