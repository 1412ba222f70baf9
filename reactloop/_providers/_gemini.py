"""`GeminiModel`: the native Gemini API (`generateContent`, and `streamGenerateContent` over SSE).

The request (`encode_request`): `contents` from `_gemini_content`, the instructions and any
`SystemMessage` joined in `systemInstruction`, tools as `functionDeclarations` whose
`parametersJsonSchema` is the tool's JSON schema as it is, `toolConfig.functionCallingConfig`
for a tool choice other than AUTO, and `generationConfig` for the settings that are set
(thinking as `thinkingConfig`: a budget on Gemini 2.5, a level on Gemini 3). Settings Gemini has
no field for (a service tier, `parallel_tool_calls=False`) are refused before anything is sent;
`candidateCount` is never sent (one answer per call), and `topK` has no `ModelSettings` field.
Caching needs nothing: Gemini caches repeated prefixes implicitly (explicit `cachedContent`
names are not managed here; `extra_body` can send one). The answers are read by
`_gemini_decode` (whole) and `_gemini_stream` (SSE).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any, assert_never
from urllib.parse import quote

import httpx

from reactloop._core import (
    DeltaSink,
    ForcedTool,
    JsonObject,
    ModelRequest,
    ModelResponse,
    ModelSettings,
    ReasoningEffort,
    ResponseFormat,
    ResponseFormatKind,
    ToolChoice,
)
from reactloop._errors import ConfigurationError, ProviderConfigurationError
from reactloop._providers._auth import AuthScheme, Secret, resolve_key
from reactloop._providers._base import HttpModel
from reactloop._providers._gemini_content import Contents, encode_contents
from reactloop._providers._gemini_decode import decode_response
from reactloop._providers._gemini_stream import GeminiStream
from reactloop._providers._http import DEFAULT_IDLE_TIMEOUT, HttpChannel
from reactloop._providers._options import check_base_url, check_extra_body, check_http_options
from reactloop._providers._profiles import (
    ModelProfile,
    check_profile,
    check_sampling,
    model_family,
)
from reactloop._providers._reasoning import check_effort, refuse
from reactloop._providers._wire import check_history, wire_ids
from reactloop._redact import redacted
from reactloop._validate import checked_arguments

__all__ = ["GEMINI_BASE_URL", "GeminiModel", "encode_request", "paths"]

GEMINI_BASE_URL = "https://generativelanguage.googleapis.com"
KEY_ENV = ("GEMINI_API_KEY", "GOOGLE_API_KEY")
URL_ENV = ("GEMINI_BASE_URL", "GOOGLE_GEMINI_BASE_URL")
SAMPLING = "takes no sampling parameters (its profile says so)"
LEVELS = frozenset({"minimal", "low", "medium", "high", "xhigh"})
"""`ThinkingConfig.thinkingLevel`'s values (google-genai 3.6.1 `ThinkingLevel`, lowercase as
Google's REST examples send them): no level turns thinking off, none is above "xhigh"."""
OWNED = frozenset({"contents", "systemInstruction", "tools", "toolConfig", "generationConfig"})
"""The body fields reactloop sets: an `extra_body` may not name them (`safetySettings`,
`cachedContent` and the like stay open)."""


def paths(model: str) -> tuple[str, str]:
    """The plain and streaming paths of a model (`models/` in its name is taken as given)."""
    name = quote(model.removeprefix("models/"), safe="-._~")
    base = f"/v1beta/models/{name}"
    return f"{base}:generateContent", f"{base}:streamGenerateContent?alt=sse"


def media_in_results(model: str) -> bool:
    """Gemini 3 takes a tool result's images and documents inside `functionResponse.parts`
    (function calling guide, "Multimodal function responses"); earlier models get them as user
    parts after the response."""
    return model_family(model).startswith("gemini-3")


def _config_error(provider: str, option: str, value: object, rule: str) -> Exception:
    return ProviderConfigurationError(
        f"{option} must be {rule}, got {value!r}",
        provider=provider,
        option=option,
        value=value,
        rule=rule,
    )


def _tool_config(choice: ToolChoice | ForcedTool) -> JsonObject | None:
    """`functionCallingConfig`; None for AUTO (Gemini's default, left unsaid)."""
    match choice:
        case ForcedTool():
            config: JsonObject = {"mode": "ANY", "allowedFunctionNames": [choice.name]}
        case ToolChoice.AUTO:
            return None
        case ToolChoice.REQUIRED:
            config = {"mode": "ANY"}
        case ToolChoice.NONE:
            config = {"mode": "NONE"}
        case _:
            assert_never(choice)
    return {"functionCallingConfig": config}


def encode_tools(request: ModelRequest) -> JsonObject:
    """`tools` (one `functionDeclarations` list) and `toolConfig`; nothing without tools."""
    if not request.tools:
        return {}
    declarations = [
        {
            "name": spec.name,
            "description": spec.description,
            "parametersJsonSchema": spec.parameters,
        }
        for spec in request.tools
    ]
    body: JsonObject = {"tools": [{"functionDeclarations": declarations}]}
    config = _tool_config(request.tool_choice)
    if config is not None:
        body["toolConfig"] = config
    return body


def encode_output(response_format: ResponseFormat | None) -> JsonObject:
    """`responseMimeType` (and `responseJsonSchema` for a schema) of `generationConfig`."""
    if response_format is None:
        return {}
    match response_format.kind:
        case ResponseFormatKind.TEXT:
            return {}
        case ResponseFormatKind.JSON_OBJECT:
            return {"responseMimeType": "application/json"}
        case ResponseFormatKind.JSON_SCHEMA:
            schema = response_format.schema
            return {"responseMimeType": "application/json", "responseJsonSchema": schema}
        case _:
            assert_never(response_format.kind)


def thinking_config(
    provider: str, model: str, settings: ModelSettings, profile: ModelProfile
) -> JsonObject:
    """`thinkingConfig`: a budget as `thinkingBudget` (Gemini 2.5), an effort as
    `thinkingLevel` (Gemini 3; "none" is a budget of 0 where the profile takes it), a summary
    as `includeThoughts`; what the profile refuses is refused here."""
    reasoning = settings.reasoning
    if reasoning is None:
        return {}
    config: JsonObject = {}
    if reasoning.budget_tokens is not None:
        if not profile.thinking_budget:
            rule = "None (the model thinks by level: set ReasoningSettings.effort)"
            raise refuse(provider, model, "budget_tokens", reasoning.budget_tokens, rule)
        config["thinkingBudget"] = reasoning.budget_tokens
    effort = reasoning.effort
    if effort is not None:
        check_effort(provider, model, effort, profile)
        _no_budget_beside(provider, model, config)
        if effort is ReasoningEffort.NONE and profile.thinking_budget:
            config["thinkingBudget"] = 0
        else:
            config["thinkingLevel"] = _level(provider, model, effort)
    if reasoning.summary is not None:
        if not profile.thinking:
            rule = "None (the model does not think: its profile says so)"
            raise refuse(provider, model, "summary", reasoning.summary, rule)
        config["includeThoughts"] = True
    return {"thinkingConfig": config} if config else {}


def _level(provider: str, model: str, effort: ReasoningEffort) -> str:
    """The effort as a `thinkingLevel`: only Gemini's levels, whatever the profile allows (a
    model of a family not listed has every effort, but no level "none" or "max" exists)."""
    if effort.value not in LEVELS:
        levels = ", ".join(sorted(LEVELS))
        rule = f"one of Gemini's thinking levels ({levels}): thinkingLevel has no {effort.value!r}"
        raise refuse(provider, model, "effort", effort, rule)
    return effort.value


def _no_budget_beside(provider: str, model: str, config: JsonObject) -> None:
    """Gemini refuses a budget and a level in one request (and a budget beside "none")."""
    if "thinkingBudget" in config:
        rule = "None when an effort is set (Gemini takes a thinking budget or a level, not both)"
        raise refuse(provider, model, "budget_tokens", config["thinkingBudget"], rule)


def _refused(provider: str, settings: ModelSettings) -> None:
    """Settings Gemini has no field for, refused rather than dropped."""
    if settings.service_tier is not None:
        rule = f"None for {provider} (generateContent takes no service tier)"
        raise _config_error(provider, "ModelSettings.service_tier", settings.service_tier, rule)
    if settings.parallel_tool_calls is False:
        rule = f"None or True for {provider} (Gemini cannot be told to call one tool at a time)"
        raise _config_error(provider, "ModelSettings.parallel_tool_calls", False, rule)


def generation_config(
    provider: str, model: str, settings: ModelSettings, profile: ModelProfile
) -> JsonObject:
    """`generationConfig` for the settings that are set (never `candidateCount`: one answer)."""
    _refused(provider, settings)
    check_sampling(provider, model, settings, profile, SAMPLING)
    config: JsonObject = {}
    for key, value in (
        ("maxOutputTokens", settings.max_output_tokens),
        ("temperature", settings.temperature),
        ("topP", settings.top_p),
        ("seed", settings.seed),
    ):
        if value is not None:
            config[key] = value
    if settings.stop_sequences:
        config["stopSequences"] = list(settings.stop_sequences)
    config.update(encode_output(settings.response_format))
    config.update(thinking_config(provider, model, settings, profile))
    return config


def encode_request(
    request: ModelRequest,
    model: str,
    *,
    provider: str = "google",
    profile: ModelProfile | None = None,
) -> JsonObject:
    """The `generateContent` body for a neutral request (the streaming form takes the same)."""
    check_history(provider, request.messages)
    profile = check_profile(provider, profile, model)
    config = generation_config(provider, model, request.settings, profile)
    how = Contents(provider, model, media_in_results(model))
    system, contents = encode_contents(wire_ids(request.messages), how)
    body: JsonObject = {"contents": contents}
    prompt = [text for text in (request.instructions, *system) if text]
    if prompt:
        body["systemInstruction"] = {"parts": [{"text": "\n\n".join(prompt)}]}
    body.update(encode_tools(request))
    if config:
        body["generationConfig"] = config
    return body


def _key(api_key: str | None) -> Secret | None:
    """The explicit key, else `GEMINI_API_KEY`, else `GOOGLE_API_KEY`."""
    if api_key is not None:
        return resolve_key(api_key, KEY_ENV[0])
    return resolve_key(None, KEY_ENV[0]) or resolve_key(None, KEY_ENV[1])


def _base_url(base_url: str | None) -> str:
    found = (os.environ.get(name) for name in URL_ENV)
    return base_url or next((url for url in found if url), GEMINI_BASE_URL)


@checked_arguments
class GeminiModel(HttpModel):
    """A Gemini model over Google's native Gemini API (`generateContent`).

    The key comes from `api_key`, `GEMINI_API_KEY` or `GOOGLE_API_KEY` (sent as
    `x-goog-api-key`); the base URL from `base_url`, `GEMINI_BASE_URL`,
    `GOOGLE_GEMINI_BASE_URL`, or Google's. `profile` overrides what the model is taken to accept
    (default: its family's, see `model_profile`). Thought signatures go back on the parts that
    carried them. Close it with `aclose()` or `async with`.
    """

    def __init__(
        self,
        model: str,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        provider: str = "google",
        idle_timeout: float | None = DEFAULT_IDLE_TIMEOUT,
        http_client: httpx.AsyncClient | None = None,
        extra_headers: dict[str, str] | None = None,
        extra_body: Mapping[str, Any] | None = None,
        profile: ModelProfile | None = None,
    ) -> None:
        owner = "GeminiModel"
        check_http_options(
            owner, model=model, api_key=api_key, base_url=base_url, provider=provider,
            idle_timeout=idle_timeout, http_client=http_client, extra_headers=extra_headers,
        )  # fmt: skip
        self.model = model
        self._use_profile(owner, profile, model)  # native output: responseJsonSchema
        self.extra_body = check_extra_body(owner, extra_body, OWNED)
        self._path, self._stream_path = paths(model)
        secret = _key(api_key)
        if secret is None:
            raise ConfigurationError(
                f"{provider} model {model!r} needs an API key: pass api_key= or set"
                f" {' or '.join(KEY_ENV)}"
            )
        url = check_base_url(owner, _base_url(base_url))
        headers = {"content-type": "application/json", **(extra_headers or {})}
        self._channel = HttpChannel(
            provider, url, headers, secret=secret, auth=AuthScheme.GOOG_API_KEY,
            client=http_client, idle_timeout=idle_timeout,
        )  # fmt: skip

    def takes_forced_tool_choice(self, settings: ModelSettings) -> bool:
        """Whether a request with these settings may force a tool (Gemini's mode ANY, thinking
        or not): the profile's `forced_tool_choice`."""
        return self.supports_forced_tool_choice

    def strict_output_schema(self, schema: JsonObject) -> JsonObject:
        """A structured output's schema as `responseJsonSchema` takes it: as it is. Gemini reads
        a JSON Schema subset (types, `properties`, `required`, `additionalProperties`, `enum`,
        `format`, bounds, `items`/`prefixItems`, `anyOf`, `$ref`/`$defs`; structured output
        guide) and does not enforce keywords outside it (`oneOf`, `allOf`, `not`), so nothing is
        rewritten; a schema too deep or too large for Gemini is its 400, typed."""
        return schema

    def __repr__(self) -> str:
        return f"GeminiModel(model={self.model!r}, base_url={redacted(self.base_url)!r})"

    def _body(self, request: ModelRequest, *, stream: bool) -> JsonObject:
        body = encode_request(request, self.model, provider=self.provider, profile=self.profile)
        return self.extra_body.apply(body)

    async def request(self, request: ModelRequest) -> ModelResponse:
        """One plain call: the whole response at once."""
        answer = await self._channel.post_json(self._path, self._body(request, stream=False))
        return decode_response(self.provider, answer, self.model)

    async def stream(self, request: ModelRequest, on_delta: DeltaSink) -> ModelResponse:
        """One streamed call: deltas go to `on_delta`, the assembled response is returned."""
        accumulator = GeminiStream(self.provider, on_delta, self.model)
        body = self._body(request, stream=True)
        await self._channel.post_stream(self._stream_path, body, accumulator.handle)
        return accumulator.response()
