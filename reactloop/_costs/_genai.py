"""`GenAIPrices`: the `PriceTable` over the maintained genai-prices database (the `prices` extra),
imported when the adapter is built so `import reactloop` never needs it."""

from __future__ import annotations

import importlib
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

from reactloop._costs._prices import ModelPrice
from reactloop._errors import ConfigurationError

_FIELDS = {
    "input": "input_mtok",
    "output": "output_mtok",
    "cache_read": "cache_read_mtok",
    "cache_write": "cache_write_mtok",
    "cache_write_1h": "cache_write_1h_mtok",
}


def _snapshot() -> Any:
    """genai-prices' bundled price data, or the error that says how to install it."""
    try:
        data_snapshot = importlib.import_module("genai_prices.data_snapshot")
    except ImportError as missing:
        raise ConfigurationError(
            "GenAIPrices needs the genai-prices package: pip install 'reactloop[prices]'",
            option="GenAIPrices",
            value=None,
            rule="the prices extra installed",
        ) from missing
    return data_snapshot.get_snapshot()


def _base(value: object) -> Decimal | None:
    """A flat price, or a tiered price's base (the long-context tier is read apart)."""
    return value if value is None or isinstance(value, Decimal) else getattr(value, "base", None)


def _tier(value: object) -> tuple[int, Decimal] | None:
    tiers = getattr(value, "tiers", None)
    return (tiers[0].start, tiers[0].price) if tiers else None


def _model_price(
    prices: dict[str, Decimal | None], long_context: tuple[int, ModelPrice] | None = None
) -> ModelPrice | None:
    """A `ModelPrice` from the five prices by name; None without an input or output price."""
    given, made = prices["input"], prices["output"]
    if given is None or made is None:
        return None
    return ModelPrice(
        given, made, prices["cache_read"], prices["cache_write"], prices["cache_write_1h"],
        long_context,
    )  # fmt: skip


def _convert(prices: Any) -> ModelPrice | None:
    """genai-prices' prices of one model as a `ModelPrice` (None without input/output prices);
    its first tier, when every tiered field starts at the same threshold, as `long_context`."""
    values = {name: getattr(prices, key, None) for name, key in _FIELDS.items()}
    base = {name: _base(value) for name, value in values.items()}
    tiers = {name: tier for name, value in values.items() if (tier := _tier(value)) is not None}
    starts = {start for start, _ in tiers.values()}
    high = None
    if len(starts) == 1:
        high = _model_price(
            {name: tiers[name][1] if name in tiers else base[name] for name in base}
        )
    return _model_price(base, None if high is None else (starts.pop(), high))


class GenAIPrices:
    """Prices from genai-prices (`pip install 'reactloop[prices]'`): its bundled snapshot, the
    prices in force at `at` (default: when asked). Provider names are genai-prices' ids:
    "anthropic", "openai" ("openai-responses" read as OpenAI by its matching rules), "google"
    (`GeminiModel`), "azure" (both Azure classes, by the model a deployment runs), "openrouter",
    "groq", "deepseek", "cerebras"; Ollama and vLLM models have no price here."""

    def __init__(self, at: datetime | None = None) -> None:
        self._snapshot = _snapshot()
        self._at = at

    def __repr__(self) -> str:
        return "GenAIPrices()" if self._at is None else f"GenAIPrices(at={self._at!r})"

    def price(self, provider: str, model: str) -> ModelPrice | None:
        """The model's prices, or None when genai-prices knows no such provider or model."""
        try:
            _, info = self._snapshot.find_provider_model(model, None, provider, None)
        except LookupError:
            return None
        return _convert(info.get_prices(self._at or datetime.now(UTC)))
