"""`GeminiModel`'s requests over the loopback server: every setting in its Gemini field, what
Gemini has no field for (or the model's family refuses) refused before anything is sent, images,
documents and audio as inline data or file URIs, thought signatures back on the part that
carried them and only to their own model family, and a Gemini history sent to another vendor
without Gemini's signatures. Each body also passes the google-genai SDK's request types (the
conftest's check)."""

from __future__ import annotations

import base64
from collections.abc import AsyncIterator, Sequence
from typing import Any

import orjson
import pytest

from reactloop._core import (
    AssistantMessage,
    AudioPart,
    CachePoint,
    CacheSettings,
    ContentPart,
    DocumentPart,
    ForcedTool,
    ImagePart,
    Message,
    ModelRequest,
    ModelSettings,
    ReasoningPart,
    ReasoningSettings,
    ResponseFormat,
    SystemMessage,
    TextPart,
    ToolCall,
    ToolChoice,
    ToolMessage,
    ToolSpec,
    UserMessage,
)
from reactloop._errors import ConfigurationError, ProviderConfigurationError
from reactloop._loop._loop import ReActLoop
from reactloop._output._spec import FINAL_TOOL, OutputStrategy
from reactloop._providers import (
    AnthropicModel,
    ContentTooLargeError,
    GeminiModel,
    ModelProfile,
    OpenAIModel,
    OpenAIResponsesModel,
    UnsupportedContentError,
    model_from_string,
)
from reactloop._providers._gemini_content import RAW_LIMIT, SKIP_SIGNATURE
from tests.helpers.images import gif_header, png
from tests.providers.conftest import API_KEY
from tests.providers.recorded import Deltas
from tests.providers.render_gemini import answer_parts, gemini_json, gemini_stream
from tests.providers.test_output import ANSWER as FORECAST
from tests.providers.test_output import STRATEGIES, Forecast, scripted, structured
from tests.providers.wire_server import WireServer, json_reply, sse_reply

pytestmark = pytest.mark.anyio

JsonObject = dict[str, Any]
ANSWER: JsonObject = {
    "candidates": [
        {"content": {"role": "model", "parts": [{"text": "ok"}]}, "finishReason": "STOP"}
    ],
    "usageMetadata": {"promptTokenCount": 3, "candidatesTokenCount": 1, "totalTokenCount": 4},
    "modelVersion": "gemini-2.5-flash",
}
WEATHER = ToolSpec("weather", "The weather in a city.", {"type": "object", "properties": {}})
HI = (UserMessage("hi"),)
SIG = "RXBZSUNwa0lBWExJMm54bA=="


async def sent(
    server: WireServer, model: GeminiModel, request: ModelRequest, *, stream: bool = False
) -> JsonObject:
    """The body `model` sends for `request` (answered with a one-word reply)."""
    if stream:
        server.reply_with(sse_reply([b"data: " + orjson.dumps(ANSWER) + b"\r\n\r\n"]))
        await model.stream(request, Deltas())
    else:
        server.reply_with(json_reply(ANSWER))
        await model.request(request)
    body: JsonObject = server.requests[-1].json()
    return body


@pytest.fixture
async def flash(server: WireServer) -> AsyncIterator[GeminiModel]:
    async with GeminiModel("gemini-2.5-flash", api_key=API_KEY, base_url=server.url) as model:
        yield model


@pytest.fixture
async def pro3(server: WireServer) -> AsyncIterator[GeminiModel]:
    async with GeminiModel("gemini-3-pro-preview", api_key=API_KEY, base_url=server.url) as model:
        yield model


def settings(**given: Any) -> ModelRequest:
    return ModelRequest(HI, settings=ModelSettings(**given))


def thinking(**given: Any) -> ModelRequest:
    return settings(reasoning=ReasoningSettings(**given))


# -- the request line, the key, the escape hatches ----------------------------------------------


async def test_the_key_goes_as_x_goog_api_key_to_the_model_path(
    server: WireServer, flash: GeminiModel
) -> None:
    await sent(server, flash, ModelRequest(HI))
    await sent(server, flash, ModelRequest(HI), stream=True)
    plain, streamed = server.requests
    assert plain.path == "/v1beta/models/gemini-2.5-flash:generateContent"
    assert streamed.path == "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse"
    assert plain.headers["x-goog-api-key"] == API_KEY
    assert "authorization" not in plain.headers
    assert (
        plain.json()
        == streamed.json()
        == {"contents": [{"role": "user", "parts": [{"text": "hi"}]}]}
    )


async def test_extra_headers_and_extra_body_are_sent(server: WireServer) -> None:
    extra = {
        "safetySettings": [{"category": "HARM_CATEGORY_HARASSMENT", "threshold": "BLOCK_NONE"}]
    }
    async with GeminiModel(
        "models/gemini-2.5-flash", api_key=API_KEY, base_url=server.url,
        extra_headers={"x-team": "a"}, extra_body=extra,
    ) as model:  # fmt: skip
        body = await sent(server, model, ModelRequest(HI))
    assert body["safetySettings"] == extra["safetySettings"]
    assert server.requests[0].headers["x-team"] == "a"
    assert server.requests[0].path == "/v1beta/models/gemini-2.5-flash:generateContent"


async def test_a_base_url_query_follows_the_streaming_paths_own(server: WireServer) -> None:
    url = f"{server.url}/proxy?tenant=a"
    async with GeminiModel("gemini-2.5-flash", api_key=API_KEY, base_url=url) as model:
        await sent(server, model, ModelRequest(HI), stream=True)
        await sent(server, model, ModelRequest(HI))
    assert [request.path for request in server.requests] == [
        "/proxy/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse&tenant=a",
        "/proxy/v1beta/models/gemini-2.5-flash:generateContent?tenant=a",
    ]


def test_extra_body_may_not_name_a_field_reactloop_sets() -> None:
    with pytest.raises(ConfigurationError, match="generationConfig"):
        GeminiModel("gemini-2.5-flash", api_key="k", extra_body={"generationConfig": {}})


def test_the_model_strings_pick_gemini_with_its_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("GEMINI_API_KEY", "GOOGLE_API_KEY", "GEMINI_BASE_URL", "GOOGLE_GEMINI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(ConfigurationError, match="GEMINI_API_KEY or GOOGLE_API_KEY"):
        model_from_string("google:gemini-2.5-flash")
    monkeypatch.setenv("GOOGLE_API_KEY", "g-key")
    monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", "http://127.0.0.1:9/gem")
    model = model_from_string("gemini:gemini-3-pro-preview")
    assert isinstance(model, GeminiModel)
    assert (model.model, model.provider, model.base_url) == (
        "gemini-3-pro-preview", "google", "http://127.0.0.1:9/gem",
    )  # fmt: skip
    monkeypatch.setenv("GEMINI_BASE_URL", "http://127.0.0.1:9/first")
    first = model_from_string("google:gemini-2.5-pro")
    assert isinstance(first, GeminiModel) and first.base_url == "http://127.0.0.1:9/first"


# -- settings -----------------------------------------------------------------------------------


async def test_every_sampling_setting_goes_in_generation_config(
    server: WireServer, flash: GeminiModel
) -> None:
    request = settings(
        max_output_tokens=300, temperature=0.2, top_p=0.9, seed=7, stop_sequences=["END"]
    )
    body = await sent(server, flash, request)
    assert body["generationConfig"] == {
        "maxOutputTokens": 300, "temperature": 0.2, "topP": 0.9, "seed": 7,
        "stopSequences": ["END"],
    }  # fmt: skip


async def test_structured_output_is_a_json_mime_type_and_schema(
    server: WireServer, flash: GeminiModel, pro3: GeminiModel
) -> None:
    schema = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
    body = await sent(
        server, flash, settings(response_format=ResponseFormat("json_schema", schema=schema))
    )
    assert body["generationConfig"] == {
        "responseMimeType": "application/json", "responseJsonSchema": schema,
    }  # fmt: skip
    body = await sent(server, flash, settings(response_format=ResponseFormat("json_object")))
    assert body["generationConfig"] == {"responseMimeType": "application/json"}
    assert pro3.supports_native_output and pro3.strict_output_schema(schema) == schema
    assert not flash.supports_native_output  # Gemini 2.5: no JSON format beside functions


@pytest.mark.parametrize(
    ("model", "reasoning", "config"),
    [
        ("gemini-2.5-flash", {"budget_tokens": 2048}, {"thinkingBudget": 2048}),
        ("gemini-2.5-flash", {"effort": "none"}, {"thinkingBudget": 0}),
        ("gemini-2.5-pro", {"budget_tokens": 512, "summary": "auto"},
         {"thinkingBudget": 512, "includeThoughts": True}),
        ("gemini-3-pro-preview", {"effort": "low"}, {"thinkingLevel": "low"}),
        ("gemini-3-flash-preview", {"effort": "minimal", "summary": "auto"},
         {"thinkingLevel": "minimal", "includeThoughts": True}),
        ("gemini-3.5-flash", {"effort": "medium"}, {"thinkingLevel": "medium"}),
    ],
)  # fmt: skip
async def test_reasoning_settings_become_the_familys_thinking_config(
    server: WireServer, model: str, reasoning: JsonObject, config: JsonObject
) -> None:
    async with GeminiModel(model, api_key=API_KEY, base_url=server.url) as gemini:
        body = await sent(server, gemini, thinking(**reasoning))
    assert body["generationConfig"] == {"thinkingConfig": config}


REFUSED_SETTINGS = [
    ("gemini-3-pro-preview", thinking(budget_tokens=1024), "budget_tokens"),
    ("gemini-3-pro-preview", thinking(effort="medium"), "'low', 'high'"),
    ("gemini-3-pro-preview", thinking(effort="none"), "effort"),
    ("gemini-2.5-pro", thinking(effort="high"), "none"),
    ("gemini-2.5-flash", thinking(effort="none", budget_tokens=100), "not both"),
    ("gemini-2.0-flash", thinking(summary="auto"), "does not think"),
    ("gemini-2.5-flash", settings(service_tier="flex"), "service tier"),
    ("gemini-2.5-flash", settings(parallel_tool_calls=False), "one tool at a time"),
]


@pytest.mark.parametrize(("model", "request_", "rule"), REFUSED_SETTINGS)
async def test_what_gemini_does_not_take_is_refused_before_sending(
    server: WireServer, model: str, request_: ModelRequest, rule: str
) -> None:
    async with GeminiModel(model, api_key=API_KEY, base_url=server.url) as gemini:
        with pytest.raises(ProviderConfigurationError, match=rule):
            gemini.check_settings(request_.settings)
        with pytest.raises(ProviderConfigurationError, match=rule):
            await gemini.request(request_)
    assert server.requests == []


async def test_a_profile_without_sampling_refuses_a_temperature(server: WireServer) -> None:
    async with GeminiModel(
        "gemini-3-pro-preview", api_key=API_KEY, base_url=server.url,
        profile=ModelProfile(sampling=False),
    ) as model:  # fmt: skip
        with pytest.raises(ProviderConfigurationError, match="temperature"):
            await model.request(settings(temperature=0.5))
    assert server.requests == []


async def test_caching_needs_nothing_on_the_wire(server: WireServer, flash: GeminiModel) -> None:
    """Gemini caches implicitly: cache settings and a CachePoint send nothing."""
    message = UserMessage(parts=["long prefix", CachePoint(), "question"])
    request = ModelRequest((message,), settings=ModelSettings(cache=CacheSettings(ttl="1h")))
    body = await sent(server, flash, request)
    assert body == {
        "contents": [{"role": "user", "parts": [{"text": "long prefix"}, {"text": "question"}]}]
    }


# -- tools, system instruction --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("choice", "config"),
    [
        (ToolChoice.AUTO, None),
        (ToolChoice.REQUIRED, {"mode": "ANY"}),
        (ToolChoice.NONE, {"mode": "NONE"}),
        (ForcedTool("weather"), {"mode": "ANY", "allowedFunctionNames": ["weather"]}),
    ],
)
async def test_tools_are_function_declarations_and_the_choice_a_calling_mode(
    server: WireServer,
    flash: GeminiModel,
    choice: ToolChoice | ForcedTool,
    config: JsonObject | None,
) -> None:
    body = await sent(server, flash, ModelRequest(HI, tools=(WEATHER,), tool_choice=choice))
    declaration = {
        "name": "weather", "description": "The weather in a city.",
        "parametersJsonSchema": {"type": "object", "properties": {}},
    }  # fmt: skip
    assert body["tools"] == [{"functionDeclarations": [declaration]}]
    assert body.get("toolConfig") == (None if config is None else {"functionCallingConfig": config})
    assert flash.takes_forced_tool_choice(
        ModelSettings(reasoning=ReasoningSettings(budget_tokens=100))
    )


async def test_instructions_and_system_messages_join_in_the_system_instruction(
    server: WireServer, flash: GeminiModel
) -> None:
    messages: tuple[Message, ...] = (
        SystemMessage("Be brief."),
        UserMessage("hi"),
        SystemMessage("In French."),
    )
    body = await sent(server, flash, ModelRequest(messages, instructions="You help."))
    assert body["systemInstruction"] == {
        "parts": [{"text": "You help.\n\nBe brief.\n\nIn French."}]
    }
    assert body["contents"] == [{"role": "user", "parts": [{"text": "hi"}]}]


async def test_results_of_parallel_calls_share_one_user_turn(
    server: WireServer, flash: GeminiModel
) -> None:
    oslo, rome = (
        ToolCall("weather", '{"city": "Oslo"}', "c1"),
        ToolCall("weather", '{"city": "Rome"}', "c2"),
    )
    calls = AssistantMessage(tool_calls=[oslo, rome])
    history = (
        *HI, calls, ToolMessage("c1", "weather", "rain"),
        ToolMessage("c2", "weather", "no such city", is_error=True),
    )  # fmt: skip
    body = await sent(server, flash, ModelRequest(history, tools=(WEATHER,)))
    model_turn, results = body["contents"][1:]
    assert [part["functionCall"]["args"] for part in model_turn["parts"]] == [
        {"city": "Oslo"}, {"city": "Rome"},
    ]  # fmt: skip
    assert model_turn["parts"][0]["thoughtSignature"] == SKIP_SIGNATURE
    assert "thoughtSignature" not in model_turn["parts"][1]
    assert results == {"role": "user", "parts": [
        {"functionResponse": {"name": "weather", "id": "c1", "response": {"output": "rain"}}},
        {"functionResponse": {"name": "weather", "id": "c2",
                              "response": {"error": "no such city"}}},
    ]}  # fmt: skip


# -- content parts --------------------------------------------------------------------------------

PICTURE = png(4, 4)
PDF = b"%PDF-1.4 a small document"


async def test_images_documents_and_audio_go_inline_or_by_uri(
    server: WireServer, flash: GeminiModel
) -> None:
    parts: list[ContentPart | str] = [
        "Compare:",
        ImagePart(PICTURE),
        ImagePart(url="https://example.com/cat.jpg", media_type="image/jpeg"),
        DocumentPart(PDF),
        DocumentPart(url="https://example.com/paper.pdf"),
        DocumentPart(text="Plain notes.", title="notes.txt"),
        AudioPart(b"ID3 audio", "mp3"),
    ]
    body = await sent(server, flash, ModelRequest((UserMessage(parts=parts),)))
    b64 = base64.b64encode
    assert body["contents"][0]["parts"] == [
        {"text": "Compare:"},
        {"inlineData": {"mimeType": "image/png", "data": b64(PICTURE).decode()}},
        {"fileData": {"fileUri": "https://example.com/cat.jpg", "mimeType": "image/jpeg"}},
        {"inlineData": {"mimeType": "application/pdf", "data": b64(PDF).decode()}},
        {"fileData": {"fileUri": "https://example.com/paper.pdf", "mimeType": "application/pdf"}},
        {"text": "notes.txt\n\nPlain notes."},
        {"inlineData": {"mimeType": "audio/mp3", "data": b64(b"ID3 audio").decode()}},
    ]


async def test_a_tool_results_image_goes_inside_the_response_on_gemini_3(
    server: WireServer, pro3: GeminiModel, flash: GeminiModel
) -> None:
    """Gemini 3 takes multimodal function responses (`functionResponse.parts`); earlier
    models get the image as a user part right after the response."""
    call = AssistantMessage(tool_calls=[ToolCall("screenshot", "{}", "c1")])
    result = ToolMessage("c1", "screenshot", parts=["Here it is.", ImagePart(PICTURE)])
    request = ModelRequest((*HI, call, result))
    inline = {
        "inlineData": {
            "mimeType": "image/png",
            "data": base64.b64encode(PICTURE).decode(),
        }
    }
    response = {"name": "screenshot", "id": "c1", "response": {"output": "Here it is."}}
    on_3 = (await sent(server, pro3, request))["contents"][2]["parts"]
    assert on_3 == [{"functionResponse": {**response, "parts": [inline]}}]
    on_2_5 = (await sent(server, flash, request))["contents"][2]["parts"]
    assert on_2_5 == [{"functionResponse": response}, inline]


async def test_a_url_without_a_media_type_gets_one_from_its_extension(
    server: WireServer, flash: GeminiModel
) -> None:
    parts = [ImagePart(url="https://example.com/a/cat.png?size=2"), ImagePart(url="gs://b/blob")]
    body = await sent(server, flash, ModelRequest((UserMessage(parts=parts),)))
    assert body["contents"][0]["parts"] == [
        {
            "fileData": {
                "fileUri": "https://example.com/a/cat.png?size=2",
                "mimeType": "image/png",
            }
        },
        {"fileData": {"fileUri": "gs://b/blob"}},
    ]


async def test_a_tool_results_text_document_follows_the_response(
    server: WireServer, pro3: GeminiModel
) -> None:
    """`functionResponse.parts` take no text: a text document goes as a text part after it."""
    call = AssistantMessage(tool_calls=[ToolCall("read", "{}", "c1")])
    result = ToolMessage("c1", "read", parts=[DocumentPart(PDF), DocumentPart(text="Notes.")])
    body = await sent(server, pro3, ModelRequest((*HI, call, result)))
    response, notes = body["contents"][2]["parts"]
    assert [list(part) for part in response["functionResponse"]["parts"]] == [["inlineData"]]
    assert notes == {"text": "Notes."}


UNSUPPORTED = [
    (ImagePart(gif_header(2, 2)), "image/gif"),
    (DocumentPart(b"PK\x03\x04", media_type="application/vnd.openxmlformats"), "openxmlformats"),
    (AudioPart(b"webm", "webm"), "not webm"),
]


@pytest.mark.parametrize(("part", "why"), UNSUPPORTED)
async def test_a_part_gemini_cannot_take_is_refused_before_sending(
    server: WireServer, flash: GeminiModel, part: Any, why: str
) -> None:
    with pytest.raises(UnsupportedContentError, match=why) as caught:
        await flash.request(ModelRequest((UserMessage(parts=["look", part]),)))
    assert caught.value.where == "a user message"
    assert server.requests == []


async def test_inline_data_over_20_mb_in_all_is_refused(
    server: WireServer, flash: GeminiModel
) -> None:
    """The 20 MB limit is on the request's inline data (base64), so parts that each fit can
    still be too much together."""
    half = DocumentPart(b"%PDF" + bytes(RAW_LIMIT // 2))
    with pytest.raises(ContentTooLargeError, match=r"15,728,640 .* earlier inline data"):
        await flash.request(ModelRequest((UserMessage(parts=[half, half]),)))
    with pytest.raises(ContentTooLargeError):
        await flash.request(
            ModelRequest((UserMessage(parts=[DocumentPart(bytes(RAW_LIMIT + 1))]),))
        )
    assert server.requests == []


# -- thought signatures ---------------------------------------------------------------------------


def signed(
    text: str = "", signature: str | None = SIG, model: str = "gemini-3-pro-preview"
) -> ReasoningPart:
    return ReasoningPart(text, signature=signature, provider="google", model=model)


async def test_signatures_go_back_on_the_part_that_carried_them(
    server: WireServer, pro3: GeminiModel
) -> None:
    answer = AssistantMessage(parts=[
        signed("I should check the weather.", "VGhvdWdodA=="),
        signed(), TextPart("Let me look."),
        signed(signature="Q2FsbA=="), ToolCall("weather", "{}", "c1"),
        ToolCall("weather", '{"city": "Rome"}', "c2"),
    ])  # fmt: skip
    history = (
        *HI,
        answer,
        ToolMessage("c1", "weather", "sun"),
        ToolMessage("c2", "weather", "rain"),
    )
    body = await sent(server, pro3, ModelRequest(history, tools=(WEATHER,)))
    assert body["contents"][1]["parts"] == [
        {
            "text": "I should check the weather.",
            "thought": True,
            "thoughtSignature": "VGhvdWdodA==",
        },
        {"text": "Let me look.", "thoughtSignature": SIG},
        {
            "functionCall": {"name": "weather", "args": {}, "id": "c1"},
            "thoughtSignature": "Q2FsbA==",
        },
        {"functionCall": {"name": "weather", "args": {"city": "Rome"}, "id": "c2"}},
    ]


async def test_a_signature_on_the_answers_last_part_is_kept(
    server: WireServer, pro3: GeminiModel
) -> None:
    answer = AssistantMessage(parts=[TextPart("Paris."), signed()])
    body = await sent(server, pro3, ModelRequest((*HI, answer, UserMessage("And Rome?"))))
    assert body["contents"][1]["parts"] == [
        {"text": "Paris."},
        {"text": "", "thoughtSignature": SIG},
    ]


async def test_another_familys_signature_is_not_sent(server: WireServer, pro3: GeminiModel) -> None:
    """A signature Gemini 2.5 made means nothing to Gemini 3: left out, and the call gets the
    placeholder; reasoning of another provider is never sent."""
    answer = AssistantMessage(parts=[
        signed(model="gemini-2.5-flash"),
        ReasoningPart("OpenAI", encrypted="gAAAA", provider="openai-responses", model="gpt-5"),
        ToolCall("weather", "{}", "c1"),
    ])  # fmt: skip
    history = (*HI, answer, ToolMessage("c1", "weather", "sun"))
    body = await sent(server, pro3, ModelRequest(history, tools=(WEATHER,)))
    assert body["contents"][1]["parts"] == [
        {
            "functionCall": {"name": "weather", "args": {}, "id": "c1"},
            "thoughtSignature": SKIP_SIGNATURE,
        }
    ]


async def test_an_answer_of_only_reasoning_is_left_out(
    server: WireServer, pro3: GeminiModel
) -> None:
    history = (*HI, AssistantMessage(parts=[signed("thinking...")]), UserMessage("go on"))
    body = await sent(server, pro3, ModelRequest(history))
    assert body["contents"] == [{"role": "user", "parts": [{"text": "hi"}, {"text": "go on"}]}]


GEMINI_HISTORY: tuple[Message, ...] = (
    UserMessage("weather?"),
    AssistantMessage(parts=[signed(), ToolCall("weather", "{}", "c1")]),
    ToolMessage("c1", "weather", "sun"),
)


async def test_a_gemini_history_goes_to_anthropic_without_its_signatures(
    server: WireServer,
) -> None:
    server.reply_with(json_reply({
        "id": "m1", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
        "content": [{"type": "text", "text": "ok"}], "stop_reason": "end_turn",
        "usage": {"input_tokens": 1, "output_tokens": 1},
    }))  # fmt: skip
    async with AnthropicModel("claude-sonnet-4-5", api_key=API_KEY, base_url=server.url) as model:
        await model.request(ModelRequest(GEMINI_HISTORY, tools=(WEATHER,)))
    body = server.requests[0].json()
    assert [block["type"] for block in body["messages"][1]["content"]] == ["tool_use"]
    assert SIG.encode() not in server.requests[0].body


async def test_a_gemini_history_goes_to_openai_without_its_signatures(server: WireServer) -> None:
    server.reply_with(json_reply({
        "id": "c", "object": "chat.completion", "created": 1, "model": "gpt-4o",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "ok"},
                     "finish_reason": "stop"}],
    }))  # fmt: skip
    url = f"{server.url}/v1"
    async with OpenAIModel("gpt-4o", api_key=API_KEY, base_url=url) as model:
        await model.request(ModelRequest(GEMINI_HISTORY, tools=(WEATHER,)))
    server.reply_with(json_reply({
        "id": "r", "object": "response", "created_at": 1, "model": "gpt-5", "status": "completed",
        "output": [{"type": "message", "id": "m", "role": "assistant", "status": "completed",
                    "content": [{"type": "output_text", "text": "ok", "annotations": []}]}],
    }))  # fmt: skip
    async with OpenAIResponsesModel("gpt-5", api_key=API_KEY, base_url=url) as model:
        await model.request(ModelRequest(GEMINI_HISTORY, tools=(WEATHER,)))
    chat, responses = (request.json() for request in server.requests)
    assert "extra_content" not in chat["messages"][1]["tool_calls"][0]
    assert [item["type"] for item in responses["input"][1:]] == [
        "function_call",
        "function_call_output",
    ]
    assert all(SIG.encode() not in request.body for request in server.requests)


# -- structured output in a loop ------------------------------------------------------------------


def gemini_answer(text: str = "", calls: Sequence[ToolCall] = ()) -> JsonObject:
    return gemini_json(answer_parts(text, calls))


def gemini_answer_stream(text: str = "", calls: Sequence[ToolCall] = ()) -> list[bytes]:
    return gemini_stream(answer_parts(text, calls))


@pytest.mark.parametrize("strategy", STRATEGIES)
async def test_each_output_strategy_ends_with_the_typed_answer(
    server: WireServer, pro3: GeminiModel, strategy: OutputStrategy
) -> None:
    """NATIVE is `responseJsonSchema` (what AUTO picks), TOOL a forced final-answer function,
    PROMPTED the schema in the system instruction."""
    server.handler = scripted(strategy, gemini_answer_stream, gemini_answer, [FORECAST])
    assert await structured(pro3, strategy, stream=False) == Forecast("Paris", 18)  # type: ignore[arg-type]
    body = server.requests[-1].json()
    config = body.get("generationConfig", {})
    names = [d["name"] for tool in body["tools"] for d in tool["functionDeclarations"]]
    native = strategy is OutputStrategy.NATIVE
    assert (config.get("responseMimeType") == "application/json") is native
    assert ("celsius" in config.get("responseJsonSchema", {}).get("properties", {})) is native
    assert (FINAL_TOOL in names) is (strategy is OutputStrategy.TOOL)
    system = str(body.get("systemInstruction", ""))
    assert ('"celsius"' in system) is (strategy is OutputStrategy.PROMPTED)
    assert ReActLoop(pro3, output_type=Forecast).config.output.strategy is OutputStrategy.NATIVE  # type: ignore[union-attr]
