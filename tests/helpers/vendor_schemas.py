"""Request bodies checked against the vendors' own definitions (issue 24).

Two independent sources, so that neither is the only judge:

- the official SDKs' request types (`anthropic.types.MessageCreateParams*`,
  `openai.types.chat.CompletionCreateParams*`, `openai.types.responses.ResponseCreateParams*`),
  walked strictly by `_Walker`: every key must be a field of its TypedDict (unknown keys are
  refused at every level, which pydantic would let through for a TypedDict), required fields must
  be there, literals, unions, lists and scalars must match. The SDKs spell lists `Iterable[...]`,
  which pydantic validates lazily (never, unless consumed): the walker checks them as JSON arrays;
- for OpenAI, also the published OpenAPI description (the subsets kept in tests/fixtures/openai,
  cut by tests/fixtures/extract_openai_schema.py), with `jsonschema`, and every top-level key a
  property of the request schema.

`exempt` names the top-level fields a user added through a provider's escape hatch (`extra_body`):
those alone are left out. OpenAI-compatible servers document fields of their own on top of the
Chat Completions shape; `vendor` adds exactly those, where they are documented: DeepSeek's
`reasoning_content` on an assistant message (api-docs.deepseek.com, thinking mode: "pass back
reasoning_content" within a tool loop) and Gemini's `extra_content.google.thought_signature` on a
tool call (ai.google.dev, OpenAI compatibility: thought signatures).

The OpenAI-compatible host presets (`reactloop._providers._hosts`) are checked by the first segment
of the request's path, which their tests put before the host's own path (`/groq/openai/v1/...`):
`_HOST_FIELDS` adds what each host documents, `_HOST_REFUSES` removes what its own definition
lacks.
"""

from __future__ import annotations

import collections.abc
import functools
import inspect
import types
import typing
import warnings
from pathlib import Path
from typing import Any, Literal, TypedDict

import orjson
import pydantic
import typing_extensions
from anthropic.types import message_create_params as anthropic_params
from google.genai import types as genai
from jsonschema import Draft202012Validator, validators
from openai.types.chat import (
    ChatCompletionAssistantMessageParam,
    ChatCompletionMessageFunctionToolCallParam,
)
from openai.types.chat import completion_create_params as chat_params
from openai.types.responses import response_create_params as responses_params
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

JsonObject = dict[str, Any]
OPENAI_FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "openai"
ChatVendor = Literal[
    "openai", "deepseek", "gemini", "openrouter", "groq", "cerebras", "ollama", "vllm"
]
HOST_VENDORS: tuple[ChatVendor, ...] = (
    "openrouter",
    "groq",
    "deepseek",
    "cerebras",
    "ollama",
    "vllm",
)


class VendorSchemaError(AssertionError):
    """A request body that the vendor's own definition refuses; the message lists every problem,
    each with its JSON path."""


class _GoogleExtra(TypedDict, total=False):
    thought_signature: typing_extensions.Required[str]


class _GeminiExtraContent(TypedDict, total=False):
    google: typing_extensions.Required[_GoogleExtra]


class _OpenRouterReasoning(TypedDict, total=False):
    """openrouter.ai/docs/use-cases/reasoning-tokens: `reasoning` "one of effort, max_tokens"."""

    effort: Literal["xhigh", "high", "medium", "low", "minimal", "none"]
    max_tokens: int
    exclude: bool
    enabled: bool


class _DeepSeekThinking(TypedDict, total=False):
    """api-docs.deepseek.com/guides/thinking_mode: `thinking: {type: enabled|disabled}`."""

    type: typing_extensions.Required[Literal["enabled", "disabled"]]


_CHAT_BODIES = (
    chat_params.CompletionCreateParamsStreaming,
    chat_params.CompletionCreateParamsNonStreaming,
)
_HOST_FIELDS: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {
    # top-level fields, assistant-message fields
    "openrouter": (
        {"reasoning": _OpenRouterReasoning},
        {"reasoning": str | None, "reasoning_details": list[dict[str, Any]]},
    ),
    # groq-python (2026-08) CompletionCreateParams / ChatCompletionAssistantMessageParam
    "groq": (
        {"reasoning_format": Literal["hidden", "raw", "parsed"]},
        {"reasoning": str | None},
    ),
    "deepseek": ({"thinking": _DeepSeekThinking}, {"reasoning_content": str | None}),
    # inference-docs.cerebras.ai/capabilities/reasoning: reasoning_format
    "cerebras": ({"reasoning_format": Literal["parsed", "raw", "hidden", "none"]}, {}),
}
_HOST_REFUSES = {"groq": {"stream_options"}}
"""Top-level fields of OpenAI's request that a host's own definition lacks (groq-python 2026-08:
no `stream_options`; Groq sends a stream's usage in `x_groq.usage`)."""


_SEQUENCES = {
    list,
    collections.abc.Iterable,
    collections.abc.Sequence,
    collections.abc.Collection,
}
_MAPPINGS = {dict, collections.abc.Mapping}
_WRAPPERS = {
    typing_extensions.Required,
    typing_extensions.NotRequired,
    typing_extensions.ReadOnly,
    typing.Required,
    typing.NotRequired,
}


def _unwrap(annotation: Any) -> tuple[Any, bool | None, str | None]:
    """The annotation without Required/NotRequired/Annotated; whether it said required; the wire
    name an SDK `PropertyInfo(alias=...)` gives it."""
    required: bool | None = None
    alias: str | None = None
    while True:
        origin = typing_extensions.get_origin(annotation)
        if origin in _WRAPPERS:
            required = origin in (typing_extensions.Required, typing.Required)
            annotation = typing_extensions.get_args(annotation)[0]
        elif origin is typing_extensions.Annotated:
            for meta in annotation.__metadata__:
                alias = getattr(meta, "alias", None) or alias
            annotation = annotation.__origin__
        else:
            return annotation, required, alias


@functools.cache
def _fields(cls: type) -> dict[str, tuple[Any, bool]]:
    """A TypedDict's fields by wire name: (annotation, required), its bases' included."""
    fields: dict[str, tuple[Any, bool]] = {}
    inherited: set[str] = set()
    for base in getattr(cls, "__orig_bases__", ()):
        if typing_extensions.is_typeddict(base):
            fields.update(_fields(base))
            inherited |= set(base.__annotations__)
    hints = typing_extensions.get_type_hints(cls, include_extras=True)
    total = cls.__dict__.get("__total__", True)
    # A TypedDict's __annotations__ holds its bases' too (with their own totality): skip those.
    for name in set(inspect.get_annotations(cls)) - inherited:
        annotation, required, alias = _unwrap(hints[name])
        fields[alias or name] = (annotation, total if required is None else required)
    return fields


def _literal_key(cls: type, key: str) -> tuple[object, ...] | None:
    """The values a TypedDict's `key` (`type`, `role`) is fixed to, if it is a Literal."""
    entry = _fields(cls).get(key)
    if entry is None or typing_extensions.get_origin(entry[0]) is not Literal:
        return None
    return typing_extensions.get_args(entry[0])


def _json_kind(value: object) -> str:
    names = {bool: "boolean", int: "integer", float: "number", str: "string", list: "array"}
    return "null" if value is None else names.get(type(value), "object")


def _fits(value: object, annotation: Any) -> bool:
    """Whether `value`'s JSON kind is one `annotation` can take (to pick among a union's members
    the ones worth checking, so that a problem is reported inside the member that fits)."""
    annotation = _unwrap(annotation)[0]
    origin = typing_extensions.get_origin(annotation)
    if annotation in (Any, object):
        return True
    if origin in (typing.Union, types.UnionType):
        return any(_fits(value, option) for option in typing_extensions.get_args(annotation))
    if origin is Literal:
        return any(type(value) is type(option) for option in typing_extensions.get_args(annotation))
    if isinstance(value, list):
        return origin in _SEQUENCES or annotation in _SEQUENCES
    if isinstance(value, dict):
        mapping = origin in _MAPPINGS or annotation in _MAPPINGS
        return mapping or typing_extensions.is_typeddict(annotation)
    containers = (*_SEQUENCES, *_MAPPINGS)
    return not (typing_extensions.is_typeddict(annotation) or (origin or annotation) in containers)


class _Walker:
    """Checks a JSON value against an SDK annotation; `extra` adds fields to some TypedDicts (the
    documented extensions of a compatible vendor)."""

    def __init__(self, extra: dict[type, dict[str, Any]] | None = None) -> None:
        self.extra = extra or {}

    def check(self, value: object, annotation: Any, path: str) -> list[str]:
        annotation = _unwrap(annotation)[0]
        origin = typing_extensions.get_origin(annotation)
        if annotation in (Any, object):
            return []
        if annotation is None or annotation is types.NoneType:
            return [] if value is None else [f"{path}: expected null, got {_json_kind(value)}"]
        if origin is Literal:
            return self._literal(value, typing_extensions.get_args(annotation), path)
        if origin in (typing.Union, types.UnionType):
            return self._union(value, typing_extensions.get_args(annotation), path)
        if typing_extensions.is_typeddict(annotation):
            return self._typed_dict(value, annotation, path)
        if origin in _SEQUENCES or annotation in _SEQUENCES:
            return self._array(value, typing_extensions.get_args(annotation), path)
        if origin in _MAPPINGS or annotation in _MAPPINGS:
            return self._mapping(value, typing_extensions.get_args(annotation), path)
        return self._scalar(value, origin if isinstance(origin, type) else annotation, path)

    def _scalar(self, value: object, annotation: Any, path: str) -> list[str]:
        if annotation is float:
            ok = isinstance(value, int | float) and not isinstance(value, bool)
        elif annotation is int:
            ok = isinstance(value, int) and not isinstance(value, bool)
        elif annotation in (str, bool):
            ok = isinstance(value, annotation)
        elif isinstance(annotation, type):
            ok = False  # a response model, bytes, a file: nothing a JSON body carries
        else:
            raise TypeError(f"{path}: the walker does not know the annotation {annotation!r}")
        name = getattr(annotation, "__name__", repr(annotation))
        return [] if ok else [f"{path}: expected {name}, got {_json_kind(value)} {value!r:.60}"]

    @staticmethod
    def _literal(value: object, allowed: tuple[object, ...], path: str) -> list[str]:
        if any(type(value) is type(option) and value == option for option in allowed):
            return []
        return [f"{path}: {value!r:.60} is not one of {list(allowed)}"]

    def _array(self, value: object, args: tuple[Any, ...], path: str) -> list[str]:
        if not isinstance(value, list):
            return [f"{path}: expected an array, got {_json_kind(value)}"]
        item = args[0] if args else Any
        return [
            p for i, element in enumerate(value) for p in self.check(element, item, f"{path}[{i}]")
        ]

    def _mapping(self, value: object, args: tuple[Any, ...], path: str) -> list[str]:
        if not isinstance(value, dict):
            return [f"{path}: expected an object, got {_json_kind(value)}"]
        item = args[1] if len(args) == 2 else Any
        return [p for key, sub in value.items() for p in self.check(sub, item, f"{path}.{key}")]

    def _typed_dict(self, value: object, cls: type, path: str) -> list[str]:
        if not isinstance(value, dict):
            return [f"{path}: expected an object ({cls.__name__}), got {_json_kind(value)}"]
        fields = _fields(cls) | {k: (a, False) for k, a in self.extra.get(cls, {}).items()}
        problems = [
            f"{path}.{key}: unknown field of {cls.__name__}" for key in value if key not in fields
        ]
        for key, (annotation, required) in fields.items():
            if key in value:
                problems += self.check(value[key], annotation, f"{path}.{key}")
            elif required:
                problems.append(f"{path}.{key}: required by {cls.__name__}, missing")
        return problems

    def _union(self, value: object, options: tuple[Any, ...], path: str) -> list[str]:
        options = tuple(_unwrap(option)[0] for option in options if _fits(value, option))
        candidates = self._discriminated(value, options)
        if not candidates:
            return [f"{path}: no member of the union takes this value: {value!r:.120}"]
        outcomes = [self.check(value, option, path) for option in candidates]
        if any(not outcome for outcome in outcomes):
            return []
        best = min(outcomes, key=len)
        return (
            best
            if len(candidates) == 1
            else [f"(closest of {len(candidates)}) {best[0]}", *best[1:]]
        )

    @staticmethod
    def _discriminated(value: object, options: tuple[Any, ...]) -> tuple[Any, ...]:
        """The options a JSON object's `type` (else `role`) leaves, when TypedDicts pin it."""
        if not isinstance(value, dict):
            return options
        for key in ("type", "role"):
            if key not in value:
                continue
            pinned = [
                option
                for option in options
                if typing_extensions.is_typeddict(option)
                and (fixed := _literal_key(option, key)) is not None
                and value[key] in fixed
            ]
            if pinned:  # the TypedDicts pinned to this value, and the open mappings
                loose = [option for option in options if not typing_extensions.is_typeddict(option)]
                return (*pinned, *loose)
        return options


# The OpenAPI document states alternatives that overlap as `oneOf` (a user message in Responses
# `input` is both an `EasyInputMessage` and an `InputMessage`), which JSON Schema reads as "exactly
# one": recorded requests the API accepted fail that reading. The API takes any one of them, so
# `oneOf` is checked as `anyOf`: still every alternative checked, none invented.
_AnyOfOne = validators.extend(  # type: ignore[no-untyped-call]  # untyped in the stubs
    Draft202012Validator, {"oneOf": Draft202012Validator.VALIDATORS["anyOf"]}
)


# Required fields of the document that the API does not require in a request, each with the
# recorded request that shows it (shared/fixtures/wire/recorded, a 200 from the API): an assistant
# message sent back as input holds `output_text` parts without the `logprobs` the document requires
# of output (openai-responses/test_openai_responses_model_thinking_part.yaml, request 1).
_NOT_REQUIRED_IN_REQUESTS = {"OutputTextContent": {"logprobs"}}


class _OpenApiRequest:
    """One request schema of the OpenAPI subset, its refs resolved through a registry."""

    ROOT = "urn:openai-openapi"

    def __init__(self, path: Path, name: str) -> None:
        document = orjson.loads(path.read_bytes())
        for relaxed, fields in _NOT_REQUIRED_IN_REQUESTS.items():
            if relaxed in document["components"]["schemas"]:
                target = document["components"]["schemas"][relaxed]
                target["required"] = [f for f in target.get("required", []) if f not in fields]
        resource = Resource.from_contents(document, default_specification=DRAFT202012)
        registry: Registry[Any] = Registry().with_resource(self.ROOT, resource)
        schema = {"$ref": f"{self.ROOT}#/components/schemas/{name}"}
        self.validator = _AnyOfOne(schema, registry=registry)
        self.schemas: JsonObject = document["components"]["schemas"]
        self.known = self._properties(self.schemas[name])
        self.name = name

    def _properties(self, schema: JsonObject) -> set[str]:
        names = set(schema.get("properties", {}))
        for part in schema.get("allOf", []):
            target = self.schemas[part["$ref"].rsplit("/", 1)[-1]] if "$ref" in part else part
            names |= self._properties(target)
        return names

    def problems(self, body: JsonObject) -> list[str]:
        found = [
            f"OpenAPI {self.name} at /{'/'.join(map(str, e.absolute_path))}: {e.message:.300}"
            for e in self.validator.iter_errors(body)
        ]
        found += [
            f"OpenAPI {self.name}: unknown top-level field {key!r}"
            for key in body
            if key not in self.known
        ]
        return found


@functools.cache
def _openapi(file: str, name: str) -> _OpenApiRequest:
    return _OpenApiRequest(OPENAI_FIXTURES / file, name)


def _raise(what: str, problems: list[str]) -> None:
    if problems:
        listed = "\n  ".join(problems)
        raise VendorSchemaError(f"{what} refuses this request body:\n  {listed}")


def _without(body: JsonObject, exempt: collections.abc.Set[str]) -> JsonObject:
    return {key: value for key, value in body.items() if key not in exempt}


def check_anthropic_body(body: JsonObject, exempt: collections.abc.Set[str] = frozenset()) -> None:
    """Raise `VendorSchemaError` unless `body` is a `MessageCreateParams` of the anthropic SDK."""
    kind = (
        anthropic_params.MessageCreateParamsStreaming
        if body.get("stream") is True
        else anthropic_params.MessageCreateParamsNonStreaming
    )
    _raise(f"anthropic SDK {kind.__name__}", _Walker().check(_without(body, exempt), kind, "$"))


def _chat_extensions(vendor: ChatVendor) -> dict[type, dict[str, Any]]:
    if vendor in _HOST_FIELDS:
        top, assistant = _HOST_FIELDS[vendor]
        return {cls: top for cls in _CHAT_BODIES} | {ChatCompletionAssistantMessageParam: assistant}
    if vendor == "deepseek":
        return {ChatCompletionAssistantMessageParam: {"reasoning_content": str | None}}
    if vendor == "gemini":
        return {ChatCompletionMessageFunctionToolCallParam: {"extra_content": _GeminiExtraContent}}
    return {}


def check_openai_chat_body(
    body: JsonObject,
    exempt: collections.abc.Set[str] = frozenset(),
    vendor: ChatVendor = "openai",
) -> None:
    """Raise `VendorSchemaError` unless `body` is a `CompletionCreateParams` of the openai SDK (with
    `vendor`'s documented fields) and a `CreateChatCompletionRequest` of the OpenAPI document."""
    kind = (
        chat_params.CompletionCreateParamsStreaming
        if body.get("stream") is True
        else chat_params.CompletionCreateParamsNonStreaming
    )
    checked = _without(body, exempt)
    problems = _Walker(_chat_extensions(vendor)).check(checked, kind, "$")
    problems += [f"$.{key}: not a field of {vendor}'s request" for key in
                 _HOST_REFUSES.get(vendor, set()) & set(checked)]  # fmt: skip
    own = _HOST_FIELDS.get(vendor, ({}, {}))[0]
    problems += _openapi(
        "create_chat_completion_request.json", "CreateChatCompletionRequest"
    ).problems(_without(checked, set(own)))
    _raise(f"openai SDK {kind.__name__} / OpenAPI", problems)


def check_openai_responses_body(
    body: JsonObject, exempt: collections.abc.Set[str] = frozenset()
) -> None:
    """Raise `VendorSchemaError` unless `body` is a `ResponseCreateParams` of the openai SDK and a
    `CreateResponse` of the OpenAPI document."""
    kind = (
        responses_params.ResponseCreateParamsStreaming
        if body.get("stream") is True
        else responses_params.ResponseCreateParamsNonStreaming
    )
    checked = _without(body, exempt)
    problems = _Walker().check(checked, kind, "$")
    problems += _openapi("create_response.json", "CreateResponse").problems(checked)
    _raise(f"openai SDK {kind.__name__} / OpenAPI", problems)


def _chat_vendor(body: JsonObject, route: str = "") -> ChatVendor:
    """The compatible vendor a Chat Completions body is for: a host preset's by the first segment
    of its path, else by its model id."""
    first = route.lstrip("/").split("/", 1)[0]
    host = next((vendor for vendor in HOST_VENDORS if vendor == first), None)
    if host is not None:
        return host
    model = body.get("model")
    if isinstance(model, str) and model.startswith("deepseek"):
        return "deepseek"
    if isinstance(model, str) and model.startswith("gemini"):
        return "gemini"
    return "openai"


_GEMINI_FIELDS: dict[str, Any] = {
    "contents": list[genai.Content],
    "systemInstruction": genai.Content,
    "tools": list[genai.Tool],
    "toolConfig": genai.ToolConfig,
    "generationConfig": genai.GenerationConfig,
    "safetySettings": list[genai.SafetySetting],
    "cachedContent": str,
}
"""The top-level fields of a Gemini `generateContent` body and the google-genai (3.6.1) types
that judge them: pydantic models that forbid unknown fields, read from JSON so that bytes fields
(`thoughtSignature`, `inlineData.data`) must be base64."""
GEMINI_ROUTES = (":generateContent", ":streamGenerateContent")


@functools.cache
def _gemini_adapter(key: str) -> pydantic.TypeAdapter[Any]:
    return pydantic.TypeAdapter(_GEMINI_FIELDS[key])


def check_gemini_body(body: JsonObject, exempt: collections.abc.Set[str] = frozenset()) -> None:
    """Raise `VendorSchemaError` unless each field of `body` is what the google-genai SDK's
    request types take (`Content`, `Tool`, `ToolConfig`, `GenerationConfig`), and no other
    top-level field is there."""
    problems: list[str] = []
    for key, value in _without(body, exempt).items():
        if key not in _GEMINI_FIELDS:
            problems.append(f"$.{key}: unknown top-level field of a generateContent request")
            continue
        problems += _gemini_problems(key, value)
    _raise("google-genai SDK request types", problems)


def _gemini_problems(key: str, value: object) -> list[str]:
    """What the SDK's type for `key` refuses in `value`. Its enums only warn about a value they
    do not know (`UserWarning: X is not a valid Mode`) and take it: a refusal here."""
    with warnings.catch_warnings(record=True) as warned:
        warnings.simplefilter("always")
        try:
            _gemini_adapter(key).validate_json(orjson.dumps(value))
        except pydantic.ValidationError as error:
            return [f"$.{key}.{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in error.errors()]
    return [f"$.{key}: {warning.message}" for warning in warned]


def wire_problems(
    path: str, raw: bytes, exempt: collections.abc.Set[str] = frozenset()
) -> list[str]:
    """What the vendor's own definition refuses in a request sent to `path` (empty: none, or not a
    path of the four APIs): `/v1/messages` Anthropic, `/chat/completions` OpenAI Chat Completions
    (DeepSeek's or Gemini's by the model id), `/responses` OpenAI Responses, `:generateContent`
    and `:streamGenerateContent` Gemini."""
    route = path.split("?", 1)[0].rstrip("/")
    gemini = route.endswith(GEMINI_ROUTES)
    if not (gemini or route.endswith(("/v1/messages", "/chat/completions", "/responses"))):
        return []
    try:
        body = orjson.loads(raw)
    except orjson.JSONDecodeError as error:
        return [f"POST {route}: the body is not JSON ({error})"]
    if not isinstance(body, dict):
        return [f"POST {route}: the body is not a JSON object"]
    try:
        if gemini:
            check_gemini_body(body, exempt)
        elif route.endswith("/v1/messages"):
            check_anthropic_body(body, exempt)
        elif route.endswith("/chat/completions"):
            check_openai_chat_body(body, exempt, _chat_vendor(body, route))
        else:
            check_openai_responses_body(body, exempt)
    except VendorSchemaError as error:
        return [f"POST {route}: {error}"]
    return []
