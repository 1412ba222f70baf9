"""Provider test fixtures: the loopback wire server and a model of each provider aimed at it."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from reactloop._providers import AnthropicModel, OpenAIModel
from tests.providers.protocol import OpenAIRequestSchema
from tests.providers.wire_server import WireServer

SHARED = Path(os.environ.get("REACTLOOP_SHARED") or Path(__file__).resolve().parents[3] / "shared")
WIRE = SHARED / "fixtures" / "wire"
OPENAPI = SHARED / "ref" / "openai-openapi.yaml"

if not WIRE.is_dir():
    raise pytest.UsageError(
        f"the recorded wire fixtures are missing: expected {WIRE} (the project's shared/ folder "
        "beside the checkout, or set REACTLOOP_SHARED to its path)"
    )
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
    """The published request schema; the test skips when the reference file is absent."""
    if not OPENAPI.exists():
        pytest.skip(f"the OpenAI OpenAPI description is not at {OPENAPI}")
    return OpenAIRequestSchema(OPENAPI)
