"""Conformance harnesses of the Azure OpenAI providers: Azure speaks the Chat Completions and
Responses wire formats (the harnesses of tests/providers/harnesses.py render the answers) at its
own URLs (`{endpoint}/openai/v1/...`, or `/openai/deployments/{deployment}/...?api-version=` for
a dated version) with the `api-key` header, and answers errors in its own bodies (Azure's
documented 401 and 429, `InternalServerError` and `ServiceUnavailable` codes)."""

from __future__ import annotations

from typing import Any

from reactloop._providers import AzureOpenAIModel, AzureOpenAIResponsesModel
from reactloop.testing import ErrorKind, ScriptedError, WireReply, json_reply
from tests.providers.harnesses import (
    API_KEY,
    FULL,
    NO_REASONING,
    ChatHarness,
    ResponsesHarness,
    retry_headers,
)

JsonObject = dict[str, Any]
AZURE_ERRORS: dict[ErrorKind, JsonObject] = {
    ErrorKind.RATE_LIMITED: {
        "code": "429",
        "message": "Requests to the ChatCompletions_Create Operation under Azure OpenAI API"
        " version 2024-10-21 have exceeded token rate limit of your current OpenAI S0 pricing"
        " tier. Please retry after 7 seconds.",
    },
    ErrorKind.AUTHENTICATION: {
        "code": "401",
        "message": "Access denied due to invalid subscription key or wrong API endpoint. Make sure"
        " to provide a valid key for an active subscription and use a correct regional API"
        " endpoint for your resource.",
    },
    ErrorKind.SERVER_ERROR: {
        "code": "InternalServerError",
        "message": "The service is temporarily unable to process your request. Please try again"
        " later.",
    },
    ErrorKind.UNAVAILABLE: {
        "code": "ServiceUnavailable",
        "message": "The service is temporarily unavailable. Please try again later.",
    },
    ErrorKind.CONTEXT_TOO_LONG: {
        "message": "This model's maximum context length is 128000 tokens. However, your"
        " messages resulted in 130000 tokens. Please reduce the length of the messages.",
        "type": "invalid_request_error",
        "param": "messages",
        "code": "context_length_exceeded",
    },
}


async def entra_token() -> str:
    """A Microsoft Entra ID token, as an async token provider hands one out."""
    return "entra-token-0123456789"


def azure_error(error: ScriptedError) -> WireReply:
    """Azure's body for the failure (the retry-after header on a rate limit)."""
    return json_reply({"error": AZURE_ERRORS[error.kind]}, error.status, retry_headers(error))


class AzureChatHarness(ChatHarness):
    """`AzureOpenAIModel`: a gpt-4o deployment, on the v1 API or a dated `api_version`, with
    the api-key header or (`entra=True`) an async Entra ID token provider."""

    def __init__(self, api_version: str | None = None, *, entra: bool = False) -> None:
        super().__init__("azure", "gpt-4o", "", NO_REASONING)
        self.api_version, self.entra = api_version, entra

    def build(self, base_url: str, *, idle_timeout: float) -> Any:
        credential: dict[str, Any] = (
            {"token_provider": entra_token} if self.entra else {"api_key": API_KEY}
        )
        return AzureOpenAIModel(
            "prod-chat", model="gpt-4o", endpoint=base_url, api_version=self.api_version,
            idle_timeout=idle_timeout, **credential,
        )  # fmt: skip

    def render_error(self, error: ScriptedError) -> WireReply:
        if error.kind is ErrorKind.MALFORMED:
            return super().render_error(error)
        return azure_error(error)


class AzureResponsesHarness(ResponsesHarness):
    """`AzureOpenAIResponsesModel`: a gpt-5 deployment (stateless: encrypted reasoning back)."""

    name = "azure-responses"
    features = FULL

    def build(self, base_url: str, *, idle_timeout: float) -> Any:
        return AzureOpenAIResponsesModel(
            "prod-reasoner", model="gpt-5", endpoint=base_url, api_key=API_KEY,
            idle_timeout=idle_timeout,
        )  # fmt: skip

    def render_error(self, error: ScriptedError) -> WireReply:
        if error.kind is ErrorKind.MALFORMED:
            return super().render_error(error)
        return azure_error(error)
