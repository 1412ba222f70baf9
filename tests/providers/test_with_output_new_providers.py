"""`loop.with_output(SomeAttrsClass)` on issue 27's providers, as a user writes it: a loop built
without an output type ends typed for some runs (AUTO's pick for the provider, the request in its
vendor's form), and an explicit NATIVE a model's profile refuses fails where `with_output` is
called."""

from __future__ import annotations

import pytest

from reactloop import ReActLoop
from reactloop.errors import ConfigurationError
from reactloop.output import OutputOptions, OutputStrategy
from reactloop.providers import OpenAIModel
from tests.providers.test_output import Forecast, get_weather
from tests.providers.test_output_new_providers import (
    AUTO_PICKS,
    CHECKS,
    KEY,
    PROTOCOL,
    PROVIDERS,
    ask,
    scripted,
)
from tests.providers.wire_server import WireServer

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "streamed"])
@pytest.mark.parametrize("name", list(PROVIDERS))
async def test_with_output_ends_typed_in_the_strategy_auto_picks(
    server: WireServer, name: str, stream: bool
) -> None:
    picked = AUTO_PICKS[name]
    server.handler = scripted(PROTOCOL[name], picked)
    async with PROVIDERS[name](server.url) as model:
        plain = ReActLoop(model, tools=[get_weather])
        typed = plain.with_output(Forecast)
        assert typed.config.output is not None and typed.config.output.strategy is picked
        assert await ask(typed, stream) == Forecast("Paris", 18)
    CHECKS[PROTOCOL[name]](picked, server.requests[-1].json())


async def test_with_output_native_on_a_preset_without_it_is_refused_there(
    server: WireServer,
) -> None:
    url = f"{server.url}/openrouter/api/v1"
    async with OpenAIModel("openai/gpt-4o", host="openrouter", api_key=KEY, base_url=url) as model:
        loop = ReActLoop(model)
        native = OutputOptions(strategy=OutputStrategy.NATIVE)
        with pytest.raises(ConfigurationError, match="native_output=False") as caught:
            loop.with_output(Forecast, output=native)
        assert caught.value.option == "output_strategy"
    assert server.requests == []
