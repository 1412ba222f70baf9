"""`AzureOpenAIModel` and `AzureOpenAIResponsesModel`: the Chat Completions and Responses providers
on Azure OpenAI, with Azure's endpoint, deployment naming, API version and authentication.

URLs (Microsoft Learn, "Azure OpenAI in Azure AI Foundry Models v1 API" and "API version
lifecycle"): by default the v1 API, `{endpoint}/openai/v1/chat/completions` and
`{endpoint}/openai/v1/responses` with the deployment as the body's `model` and no api-version;
with a dated `api_version`, `{endpoint}/openai/deployments/{deployment}/chat/completions?
api-version=...` and `{endpoint}/openai/responses?api-version=...`. Authentication: the `api-key`
header, or a Microsoft Entra ID bearer token from `token_provider`, asked for on every request.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import quote, urlsplit

import httpx

from reactloop._core import DeltaSink, JsonObject, ModelRequest, ModelResponse
from reactloop._errors import ConfigurationError
from reactloop._providers._auth import AuthScheme, TokenProvider, TokenSource, resolve_key
from reactloop._providers._azure_filters import (
    AzureChannel,
    AzureChatStream,
    answered,
    choice_verdicts,
)
from reactloop._providers._base import HttpModel
from reactloop._providers._chat_decode import decode_completion
from reactloop._providers._http import DEFAULT_IDLE_TIMEOUT
from reactloop._providers._openai import (
    OWNED,
    PATH,
    InstructionsRole,
    MaxTokensField,
    OpenAIModel,
    OpenAIOptions,
)
from reactloop._providers._options import check_extra_body, check_http_options
from reactloop._providers._profiles import ModelProfile
from reactloop._providers._responses import OpenAIResponsesModel, ResponsesConversation
from reactloop._providers._responses_wire import OWNED as RESPONSES_OWNED
from reactloop._providers._responses_wire import ItemMemory
from reactloop._redact import redacted
from reactloop._validate import boolean, checked_arguments, member, optional_text, text

ENDPOINT_ENV = "AZURE_OPENAI_ENDPOINT"
KEY_ENV = "AZURE_OPENAI_API_KEY"
API_VERSION_ENV = "OPENAI_API_VERSION"  # the variable the openai SDK's AzureOpenAI reads
PRICED_AS = "azure"
"""The provider a price table is asked for (genai-prices' id of Azure), whichever protocol."""
V1 = "v1"
_DATED = re.compile(r"^\d{4}-\d{2}-\d{2}(-preview)?$")
VERSION_RULE = "None or 'v1' (the v1 API), or a dated version such as '2024-10-21'"
ENDPOINT_RULE = (
    "the resource's https:// URL without a path to the API, such as"
    " 'https://RESOURCE.openai.azure.com' (set endpoint= or AZURE_OPENAI_ENDPOINT)"
)


def _endpoint(owner: str, endpoint: str | None) -> str:
    """The resource's URL: `endpoint`, else `AZURE_OPENAI_ENDPOINT`; no `/openai` path, query or
    fragment (reactloop adds the API's path itself)."""
    optional_text(f"{owner}.endpoint", endpoint)
    url = endpoint if endpoint is not None else os.environ.get(ENDPOINT_ENV, "")
    parts = urlsplit(url)
    good = (
        parts.scheme in ("http", "https")
        and bool(parts.netloc)
        and not parts.query
        and not parts.fragment
        and "/openai" not in parts.path
    )
    if not good:
        raise ConfigurationError.invalid(f"{owner}.endpoint", redacted(url), ENDPOINT_RULE)
    return url.rstrip("/")


def _api_version(owner: str, api_version: str | None) -> str:
    """`api_version`, else `OPENAI_API_VERSION`, else `v1`; checked."""
    version = api_version if api_version is not None else os.environ.get(API_VERSION_ENV) or V1
    if version != V1 and not _DATED.match(version):
        option = f"{owner}.api_version" if api_version is not None else API_VERSION_ENV
        raise ConfigurationError.invalid(option, version, VERSION_RULE)
    return version


def azure_base_url(endpoint: str, version: str, deployment: str, *, responses: bool) -> str:
    """The base URL the protocol's path (`/chat/completions`, `/responses`) is appended to."""
    if version == V1:
        return f"{endpoint}/openai/v1"
    query = f"?api-version={quote(version, safe='')}"
    if responses:
        return f"{endpoint}/openai{query}"
    return f"{endpoint}/openai/deployments/{quote(deployment, safe='')}{query}"


def azure_channel(
    owner: str,
    provider: str,
    deployment: str,
    *,
    endpoint: str | None,
    api_version: str | None,
    api_key: str | None,
    token_provider: TokenProvider | None,
    http_client: httpx.AsyncClient | None,
    idle_timeout: float | None,
    extra_headers: dict[str, str] | None,
    responses: bool,
) -> AzureChannel:
    """The channel of one deployment: its URL, and exactly one credential (an `api-key`, from
    `api_key` or `AZURE_OPENAI_API_KEY`, or a `token_provider`'s bearer tokens)."""
    optional_text(f"{owner}.api_version", api_version)
    version = _api_version(owner, api_version)
    url = azure_base_url(_endpoint(owner, endpoint), version, deployment, responses=responses)
    headers = {"content-type": "application/json", **(extra_headers or {})}
    if token_provider is not None:
        tokens = _token_source(owner, provider, api_key, token_provider)
        return AzureChannel(
            provider, url, headers, secret=None, auth=AuthScheme.BEARER,
            client=http_client, idle_timeout=idle_timeout, tokens=tokens,
        )  # fmt: skip
    secret = resolve_key(api_key, KEY_ENV)
    if secret is None:
        raise ConfigurationError(
            f"{owner} for deployment {deployment!r} needs a credential: pass api_key= (or set"
            f" {KEY_ENV}) or token_provider= (a callable returning a Microsoft Entra ID token)",
            option=f"{owner}.api_key",
            rule="exactly one of api_key and token_provider",
        )
    return AzureChannel(
        provider, url, headers, secret=secret, auth=AuthScheme.API_KEY,
        client=http_client, idle_timeout=idle_timeout,
    )  # fmt: skip


def _token_source(
    owner: str, provider: str, api_key: str | None, token_provider: object
) -> TokenSource:
    if not callable(token_provider):
        rule = "a callable returning a bearer token (sync or async), or None"
        raise ConfigurationError.invalid(f"{owner}.token_provider", token_provider, rule)
    if api_key is not None:
        rule = "exactly one of api_key and token_provider"
        raise ConfigurationError(
            f"{owner} got both api_key and token_provider: pass {rule}",
            option=f"{owner}.token_provider",
            rule=rule,
        )
    return TokenSource(provider, token_provider)


def _family(owner: str, deployment: str, model: str | None) -> str:
    """The model id the profile is picked by: `model`, else the deployment's name."""
    text(f"{owner}.deployment", deployment)
    optional_text(f"{owner}.model", model)
    return model if model is not None else deployment


class _Deployment(HttpModel):
    """What both Azure classes share: the deployment (sent as the body's `model`), the model
    family it runs (its profile and its prices), and how it shows itself."""

    model: str
    deployment: str
    family: str

    def _deploy(
        self,
        owner: str,
        deployment: str,
        model: str | None,
        *,
        provider: str,
        api_key: str | None,
        idle_timeout: float | None,
        http_client: httpx.AsyncClient | None,
        extra_headers: dict[str, str] | None,
        profile: ModelProfile | None,
    ) -> None:
        """Check the options both classes take and set the deployment, family and profile."""
        family = _family(owner, deployment, model)
        check_http_options(
            owner, model=deployment, api_key=api_key, base_url=None, provider=provider,
            idle_timeout=idle_timeout, http_client=http_client, extra_headers=extra_headers,
        )  # fmt: skip
        self.model, self.deployment, self.family = deployment, deployment, family
        self._use_profile(owner, profile, family)

    def __repr__(self) -> str:
        url = redacted(self.base_url)
        return f"{type(self).__name__}(deployment={self.deployment!r}, base_url={url!r})"

    def price_keys(self) -> tuple[tuple[str, str], ...]:
        """Priced as Azure's `model` (the family the deployment runs): a deployment's own name
        is yours, and no price table knows it."""
        return ((PRICED_AS, self.family),)


@checked_arguments
class AzureOpenAIModel(_Deployment, OpenAIModel):
    """A deployment of Azure OpenAI over Chat Completions.

    `deployment` is the deployment's name (sent as the body's `model`); `model` the model family
    it runs (`"gpt-4.1"`, `"o4-mini"`), which picks its `ModelProfile` (default: the deployment's
    name). `endpoint` is the resource's URL (or `AZURE_OPENAI_ENDPOINT`); `api_version` None (or
    `OPENAI_API_VERSION`, else the v1 API) or a dated version. Exactly one credential: `api_key`
    (or `AZURE_OPENAI_API_KEY`), or `token_provider`, a callable (sync or async) returning a
    Microsoft Entra ID token, asked for on every request. The content filter's refusals are a
    `ContentFilteredError` (an answer cut before anything was said too; a partial one finishes
    with `FinishReason.CONTENT_FILTER`).
    """

    def __init__(
        self,
        deployment: str,
        *,
        model: str | None = None,
        endpoint: str | None = None,
        api_version: str | None = None,
        api_key: str | None = None,
        token_provider: TokenProvider | None = None,
        provider: str = "azure",
        instructions_role: InstructionsRole = InstructionsRole.SYSTEM,
        max_tokens_field: MaxTokensField = MaxTokensField.MAX_COMPLETION_TOKENS,
        include_usage: bool = True,
        idle_timeout: float | None = DEFAULT_IDLE_TIMEOUT,
        http_client: httpx.AsyncClient | None = None,
        extra_headers: dict[str, str] | None = None,
        extra_body: Mapping[str, Any] | None = None,
        profile: ModelProfile | None = None,
    ) -> None:
        owner = "AzureOpenAIModel"
        self._deploy(
            owner, deployment, model, provider=provider, api_key=api_key,
            idle_timeout=idle_timeout, http_client=http_client, extra_headers=extra_headers,
            profile=profile,
        )  # fmt: skip
        self.options = OpenAIOptions(
            member(f"{owner}.instructions_role", instructions_role, InstructionsRole),
            member(f"{owner}.max_tokens_field", max_tokens_field, MaxTokensField),
            boolean(f"{owner}.include_usage", include_usage),
        )
        self.extra_body = check_extra_body(owner, extra_body, OWNED)
        self._channel = azure_channel(
            owner, provider, deployment, endpoint=endpoint, api_version=api_version,
            api_key=api_key, token_provider=token_provider, http_client=http_client,
            idle_timeout=idle_timeout, extra_headers=extra_headers, responses=False,
        )  # fmt: skip

    async def request(self, request: ModelRequest) -> ModelResponse:
        """One plain call: the whole response at once."""
        body = self._body(request, stream=False)
        answer = await self._channel.post_json(PATH, self.extra_body.apply(body))
        response = decode_completion(self.provider, answer, self.model)
        return answered(self.provider, response, choice_verdicts(answer))

    async def stream(self, request: ModelRequest, on_delta: DeltaSink) -> ModelResponse:
        """One streamed call: deltas go to `on_delta`, the assembled response is returned."""
        body = self._body(request, stream=True)
        accumulator = AzureChatStream(self.provider, on_delta, self.model)
        await self._channel.post_stream(PATH, self.extra_body.apply(body), accumulator.handle)
        return answered(self.provider, accumulator.response(), accumulator.verdicts)


@checked_arguments
class AzureOpenAIResponsesModel(_Deployment, OpenAIResponsesModel):
    """A deployment of Azure OpenAI over the Responses API: the options of `AzureOpenAIModel`
    (deployment, model family, endpoint, API version, one credential) and of
    `OpenAIResponsesModel` (`conversation`). A prompt the content filter refuses is a
    `ContentFilteredError`; so is an answer it cut (`incomplete_details.reason:
    "content_filter"`) before anything was said."""

    def __init__(
        self,
        deployment: str,
        *,
        model: str | None = None,
        endpoint: str | None = None,
        api_version: str | None = None,
        api_key: str | None = None,
        token_provider: TokenProvider | None = None,
        provider: str = "azure-responses",
        conversation: ResponsesConversation | str = ResponsesConversation.STATELESS,
        idle_timeout: float | None = DEFAULT_IDLE_TIMEOUT,
        http_client: httpx.AsyncClient | None = None,
        extra_headers: dict[str, str] | None = None,
        extra_body: Mapping[str, Any] | None = None,
        profile: ModelProfile | None = None,
    ) -> None:
        owner = "AzureOpenAIResponsesModel"
        self._deploy(
            owner, deployment, model, provider=provider, api_key=api_key,
            idle_timeout=idle_timeout, http_client=http_client, extra_headers=extra_headers,
            profile=profile,
        )  # fmt: skip
        self.conversation = member(f"{owner}.conversation", conversation, ResponsesConversation)
        self.extra_body = check_extra_body(owner, extra_body, RESPONSES_OWNED)
        self.memory = ItemMemory()
        self._channel = azure_channel(
            owner, provider, deployment, endpoint=endpoint, api_version=api_version,
            api_key=api_key, token_provider=token_provider, http_client=http_client,
            idle_timeout=idle_timeout, extra_headers=extra_headers, responses=True,
        )  # fmt: skip

    def _answer(self, body: JsonObject) -> ModelResponse:
        said = "status incomplete, incomplete_details.reason content_filter"
        return answered(self.provider, super()._answer(body), (), said)
