"""Provider test fixtures: the loopback wire server and a model of each provider aimed at it."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from reactloop._providers import AnthropicModel, OpenAIModel
from tests.providers.protocol import OpenAIRequestSchema
from tests.providers.wire_server import WireServer

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
WIRE = FIXTURES / "wire"
OPENAPI = FIXTURES / "openai" / "create_chat_completion_request.json"
API_KEY = "sk-test-SECRET-0123456789abcdef"


@pytest.fixture
async def server() -> AsyncIterator[WireServer]:
    """A wire server running in the test's task group."""
    async with WireServer.running() as running:
        yield running


@pytest.fixture
async def openai(server: WireServer) -> AsyncIterator[OpenAIModel]:
    """An OpenAI model talking to the wire server."""
    async with OpenAIModel("gpt-4o", api_key=API_KEY, base_url=f"{server.url}/v1") as model:
        yield model


@pytest.fixture
async def anthropic(server: WireServer) -> AsyncIterator[AnthropicModel]:
    """An Anthropic model talking to the wire server."""
    async with AnthropicModel("claude-sonnet-4-5", api_key=API_KEY, base_url=server.url) as model:
        yield model


@pytest.fixture(scope="session")
def openai_schema() -> OpenAIRequestSchema:
    """The published request schema (the subset kept in tests/fixtures/openai)."""
    return OpenAIRequestSchema(OPENAPI)
