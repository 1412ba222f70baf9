"""Gemini 3's `thinkingLevel` takes only Gemini's levels (google-genai 3.6.1 `ThinkingLevel`:
minimal, low, medium, high, xhigh), also on a Gemini 3 family no profile lists (which takes
every effort): an effort with no level is refused before anything is sent, over loopback."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from reactloop._core import ModelRequest, ModelSettings, ReasoningEffort, UserMessage
from reactloop._core._settings import ReasoningSettings
from reactloop._errors import ProviderConfigurationError
from reactloop._providers import GeminiModel
from tests.providers.render_gemini import gemini_answer
from tests.providers.wire_server import WireServer, json_reply

pytestmark = pytest.mark.anyio

UNLISTED = "gemini-3.5-flash"  # a Gemini 3 family of no listed levels


@pytest.fixture
async def unlisted(server: WireServer) -> AsyncIterator[GeminiModel]:
    async with GeminiModel(UNLISTED, api_key="k-SECRET-0123456789", base_url=server.url) as m:
        yield m


def asking(effort: ReasoningEffort) -> ModelRequest:
    settings = ModelSettings(reasoning=ReasoningSettings(effort=effort))
    return ModelRequest((UserMessage("hi"),), settings=settings)


@pytest.mark.parametrize("effort", [ReasoningEffort.NONE, ReasoningEffort.MAX])
async def test_an_effort_with_no_thinking_level_is_refused_before_sending(
    server: WireServer, unlisted: GeminiModel, effort: ReasoningEffort
) -> None:
    with pytest.raises(ProviderConfigurationError) as caught:
        await unlisted.request(asking(effort))
    assert caught.value.option == "ModelSettings.reasoning.effort"
    assert "thinking levels" in str(caught.value) and repr(effort.value) in str(caught.value)
    assert server.requests == []


@pytest.mark.parametrize("effort", [ReasoningEffort.MINIMAL, ReasoningEffort.XHIGH])
async def test_a_thinking_level_goes_as_it_is_named(
    server: WireServer, unlisted: GeminiModel, effort: ReasoningEffort
) -> None:
    server.reply_with(json_reply(gemini_answer("ok")))
    await unlisted.request(asking(effort))
    config = server.requests[0].json()["generationConfig"]
    assert config == {"thinkingConfig": {"thinkingLevel": effort.value}}
