"""`OpenAIResponsesModel`: the OpenAI Responses API (`POST /responses`), the one OpenAI API that
returns reasoning items.

Stateless by default (`store: false`): the whole history goes with each request, reasoning items
with their encrypted content (see `_responses_wire`). With `conversation="previous_response"` the
vendor stores each response (`store: true`) and a request sends only the messages after the last
answer, with `previous_response_id`: less to send, but the conversation then lives with the
vendor, and a run resumed elsewhere from reactloop's journal sends its whole history again.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from typing import Any

import httpx

from reactloop._core import (
    AssistantMessage,
    DeltaSink,
    JsonObject,
    ModelRequest,
    ModelResponse,
)
from reactloop._providers._base import HttpModel
from reactloop._providers._http import DEFAULT_IDLE_TIMEOUT
from reactloop._providers._http_errors import error_detail, stream_error
from reactloop._providers._openai import openai_channel
from reactloop._providers._options import (
    check_extra_body,
    check_http_options,
)
from reactloop._providers._profiles import ModelProfile
from reactloop._providers._responses_decode import (
    Decoded,
    decode_finish,
    decode_output,
    decode_usage,
    finished_parts,
)
from reactloop._providers._responses_stream import ResponsesStream
from reactloop._providers._responses_wire import OWNED, Encoding, ItemMemory, encode_request
from reactloop._providers._wire import required_list, text
from reactloop._redact import redacted
from reactloop._schema import strict_schema_openai
from reactloop._validate import checked_arguments, member

PATH = "/responses"


class ResponsesConversation(enum.StrEnum):
    """How a Responses conversation is carried: all of it in each request (`stateless`, the
    default, nothing stored by the vendor), or chained with `previous_response_id`
    (`previous_response`, each response stored by the vendor)."""

    STATELESS = "stateless"
    PREVIOUS_RESPONSE = "previous_response"


def decode_response(provider: str, model: str, body: JsonObject) -> tuple[ModelResponse, Decoded]:
    """A whole `response` object as a neutral response, and its decoded output (item ids)."""
    if "error" in body and "output" not in body and "status" not in body:
        raise stream_error(provider, error_detail(body), None)
    output = required_list(provider, body, "output", "Responses `response`")
    decoded = decode_output(provider, model, output)
    finish = decode_finish(provider, body, decoded)
    message = AssistantMessage(parts=finished_parts(decoded, finish), refusal=decoded.refusal)
    usage = decode_usage(body.get("usage"))
    response = ModelResponse(message, usage, finish, text(body, "model"), text(body, "id"))
    return response, decoded


@checked_arguments
class OpenAIResponsesModel(HttpModel):
    """A model served over the OpenAI Responses API.

    The key comes from `api_key` or `OPENAI_API_KEY`; the base URL from `base_url`,
    `OPENAI_BASE_URL`, or OpenAI's. `conversation` picks how the history travels
    (`ResponsesConversation`: "stateless", the default, or "previous_response"). `profile`
    overrides what the model is taken to accept (default: its family's, see `model_profile`).
    The instance remembers the vendor ids of the items it received (bounded), which the API
    wants back beside reasoning items. Close it with `aclose()` or `async with`.
    """

    def __init__(
        self,
        model: str,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        provider: str = "openai-responses",
        conversation: ResponsesConversation | str = ResponsesConversation.STATELESS,
        idle_timeout: float | None = DEFAULT_IDLE_TIMEOUT,
        http_client: httpx.AsyncClient | None = None,
        extra_headers: dict[str, str] | None = None,
        extra_body: Mapping[str, Any] | None = None,
        profile: ModelProfile | None = None,
    ) -> None:
        owner = "OpenAIResponsesModel"
        check_http_options(
            owner, model=model, api_key=api_key, base_url=base_url, provider=provider,
            idle_timeout=idle_timeout, http_client=http_client, extra_headers=extra_headers,
        )  # fmt: skip
        self.model = model
        self._use_profile(owner, profile, model)
        self.conversation = member(f"{owner}.conversation", conversation, ResponsesConversation)
        self.extra_body = check_extra_body(owner, extra_body, OWNED)
        self.memory = ItemMemory()
        self._channel = openai_channel(
            owner, provider, model, api_key=api_key, base_url=base_url,
            http_client=http_client, idle_timeout=idle_timeout, extra_headers=extra_headers,
        )  # fmt: skip

    def strict_output_schema(self, schema: JsonObject) -> JsonObject:
        """A structured output's schema as this provider's strict mode takes it."""
        return strict_schema_openai(schema)

    def __repr__(self) -> str:
        return f"OpenAIResponsesModel(model={self.model!r}, base_url={redacted(self.base_url)!r})"

    def _body(self, request: ModelRequest, *, stream: bool) -> JsonObject:
        store = self.conversation is ResponsesConversation.PREVIOUS_RESPONSE
        how = Encoding(self.provider, self.model, self.memory, store)
        body = encode_request(request, how, stream=stream, profile=self.profile)
        return self.extra_body.apply(body)

    def _answer(self, body: JsonObject) -> ModelResponse:
        response, decoded = decode_response(self.provider, self.model, body)
        self.memory.learn(decoded, response.id, response.message)
        return response

    async def request(self, request: ModelRequest) -> ModelResponse:
        """One plain call: the whole response at once."""
        body = self._body(request, stream=False)
        return self._answer(await self._channel.post_json(PATH, body))

    async def stream(self, request: ModelRequest, on_delta: DeltaSink) -> ModelResponse:
        """One streamed call: deltas go to `on_delta`, the assembled response is returned."""
        accumulator = ResponsesStream(self.provider, on_delta)
        await self._channel.post_stream(PATH, self._body(request, stream=True), accumulator.handle)
        return self._answer(accumulator.response())
