"""A `FallbackModel` under telemetry: each of its models gets its own `chat` spans, named by
`reactloop.fallback.model`, so a switch shows in the trace as a failed span then an answer."""

from __future__ import annotations

import pytest

from reactloop import ReActLoop, RetryPolicy
from reactloop.errors import ProviderUnavailableError
from reactloop.models import ModelRequest, ModelResponse
from reactloop.providers import FallbackModel
from reactloop.testing import FunctionModel, ScriptedModel
from tests.telemetry.test_otel import Traces

pytestmark = pytest.mark.anyio


def down(request: ModelRequest) -> ModelResponse:
    raise ProviderUnavailableError("overloaded", status=529, provider="anthropic")


async def test_each_fallback_model_has_its_own_chat_spans() -> None:
    traces = Traces()
    chain = FallbackModel([FunctionModel(down), ScriptedModel(["fine"])])
    loop = ReActLoop(chain, retry=RetryPolicy.never(), telemetry=traces.telemetry())
    result = await loop.run("hi")
    assert result.output == "fine"
    chats = [span for span in traces.spans if span.name.startswith("chat")]
    tried = [(span.attributes or {}).get("reactloop.fallback.model") for span in chats]
    assert tried == ["FunctionModel", "ScriptedModel"]
    assert (chats[0].attributes or {}).get("error.type") == "provider_unavailable"
