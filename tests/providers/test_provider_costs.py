"""The new providers of issue 27 are priced like the old ones: a loop with genai-prices' table and a
`CostBudget` builds for each of them and puts each call's cost on its usage, asked under the
provider id genai-prices gives the vendor ("google", "azure", "openrouter", "groq", "deepseek",
"cerebras") and the model the call ran (an Azure deployment by the model it runs); a self-hosted
preset is priced by a table of one's own; a cost the host reported (OpenRouter) is what it billed
and wins over the table's estimate."""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal
from typing import Any

import pytest

from reactloop import ReActLoop, Usage
from reactloop.costs import CostOptions, GenAIPrices, ModelPrice, Prices, cost_of
from reactloop.errors import ConfigurationError
from reactloop.providers import (
    AzureOpenAIModel,
    AzureOpenAIResponsesModel,
    GeminiModel,
    OpenAIModel,
)
from reactloop.stopping import CostBudget
from tests.providers.harnesses_hosts import path_of
from tests.providers.render import openai_json
from tests.providers.render_gemini import gemini_answer
from tests.providers.render_responses import responses_json
from tests.providers.wire_server import WireServer, json_reply

pytestmark = pytest.mark.anyio

KEY = "sk-test-SECRET-0123456789abcdef"
BUDGET = CostBudget(Decimal(5))
HttpModel = GeminiModel | AzureOpenAIModel | AzureOpenAIResponsesModel | OpenAIModel
Build = Callable[[str], HttpModel]


def _host(name: str, model: str) -> Build:
    return lambda url: OpenAIModel(model, host=name, api_key=KEY, base_url=url + path_of(name))


# (how to build it at the server's URL, its answer, the genai-prices key its calls are priced by)
PRICED: dict[str, tuple[Build, Any, tuple[str, str]]] = {
    "gemini": (
        lambda url: GeminiModel("gemini-2.5-flash", api_key=KEY, base_url=url),
        gemini_answer("ok"),
        ("google", "gemini-2.5-flash"),
    ),
    "azure": (
        lambda url: AzureOpenAIModel("prod-chat", model="gpt-4.1", endpoint=url, api_key=KEY),
        openai_json("ok"),
        ("azure", "gpt-4.1"),
    ),
    "azure-responses": (
        lambda url: AzureOpenAIResponsesModel(
            "prod-reasoning", model="o4-mini", endpoint=url, api_key=KEY
        ),
        responses_json("ok"),
        ("azure", "o4-mini"),
    ),
    "groq": (
        _host("groq", "openai/gpt-oss-120b"),
        openai_json("ok"),
        ("groq", "openai/gpt-oss-120b"),
    ),
    "deepseek": (
        _host("deepseek", "deepseek-chat"),
        openai_json("ok"),
        ("deepseek", "deepseek-chat"),
    ),
    "cerebras": (
        _host("cerebras", "gpt-oss-120b"),
        openai_json("ok"),
        ("cerebras", "gpt-oss-120b"),
    ),
    "openrouter": (
        _host("openrouter", "anthropic/claude-sonnet-4.5"),
        openai_json("ok"),
        ("openrouter", "anthropic/claude-sonnet-4.5"),
    ),
}


@pytest.mark.parametrize("name", list(PRICED))
async def test_a_cost_budget_runs_on_each_new_provider_priced_as_its_vendor(
    server: WireServer, name: str
) -> None:
    build, answer, (vendor, model_id) = PRICED[name]
    server.reply_with(json_reply(answer))
    prices = GenAIPrices()
    async with build(server.url) as model:
        loop = ReActLoop(model, stop_when=BUDGET, cost=CostOptions(prices=prices))
        result = await loop.run("hi")
    expected = prices.price(vendor, model_id)
    assert expected is not None and result.usage.cost is not None
    assert result.usage.cost == cost_of(result.usage, expected) > 0


async def test_an_azure_deployment_is_never_priced_by_its_own_name(server: WireServer) -> None:
    table = Prices({"gpt-4.1": ModelPrice(input=2, output=8)})
    server.reply_with(json_reply(openai_json("ok")))
    async with AzureOpenAIModel(
        "gpt-4o-renamed", model="gpt-4.1", endpoint=server.url, api_key=KEY
    ) as azure:
        result = await ReActLoop(azure, cost=CostOptions(prices=table)).run("hi")
    assert result.usage.cost == (10 * Decimal(2) + 5 * Decimal(8)) / 1_000_000


async def test_a_local_preset_needs_a_table_of_ones_own_for_a_budget(server: WireServer) -> None:
    url = server.url + path_of("ollama")
    async with OpenAIModel("qwen3:8b", host="ollama", base_url=url) as local:
        with pytest.raises(ConfigurationError, match=r"ollama model 'qwen3:8b' has no price"):
            ReActLoop(local, stop_when=BUDGET, cost=CostOptions(prices=GenAIPrices()))
        free = Prices({"qwen3": ModelPrice(input=0, output=0)})
        server.reply_with(json_reply(openai_json("ok")))
        result = await ReActLoop(local, stop_when=BUDGET, cost=CostOptions(prices=free)).run("hi")
    assert result.usage.cost == 0


@pytest.mark.parametrize("table", [None, GenAIPrices()], ids=["no table", "genai-prices"])
async def test_openrouters_reported_cost_is_the_calls_cost_table_or_not(
    server: WireServer, table: GenAIPrices | None
) -> None:
    body = openai_json("ok")
    body["usage"] |= {"cost": 0.00078}
    server.reply_with(json_reply(body))
    cost = None if table is None else CostOptions(prices=table)
    async with _host("openrouter", "anthropic/claude-sonnet-4.5")(server.url) as model:
        result = await ReActLoop(model, cost=cost).run("hi")
    assert result.usage.cost == result.steps[0].usage.cost == Decimal("0.00078")
    assert result.usage == Usage(10, 5, cost=Decimal("0.00078"))
