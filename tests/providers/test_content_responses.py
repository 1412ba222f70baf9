"""Content parts on the OpenAI Responses provider, over the loopback server and recorded traffic
(tests/fixtures/recorded/openai-responses, see tests/fixtures/README.md).

- decode: the recorded answers to requests carrying images decode as the API sent them.
- encode: a tool result holding a JPEG (its bytes) and a PNG (its URL) goes back as the
  recorded `function_call_output` list of `input_image` items, beside the reasoning item and the
  call, byte for byte; a user message of text and an image URL goes as recorded; the same run
  through `ReActLoop`, the tool returning the two images, sends the recorded request.
- documents and detail: PDFs, URLs and plain text as `input_file` items.
- refusals: audio, an image over 20 MiB and files over 50 MiB per request fail typed, before
  anything is sent.
- `conversation="previous_response"`: a tool result's images go once.
Every body the server receives is checked against the openai SDK's request types (conftest).
"""

from __future__ import annotations

import base64
from collections.abc import AsyncIterator
from typing import Any

import pytest

from reactloop import AudioPart, DocumentPart, ImagePart, ReActLoop, tool
from reactloop._core._messages import (
    ModelRequest,
    ModelResponse,
    ToolMessage,
    ToolSpec,
    UserMessage,
)
from reactloop._providers import OpenAIResponsesModel
from reactloop._providers._responses_content import FILES_LIMIT, IMAGE_LIMIT
from reactloop.errors import ContentTooLargeError, UnsupportedContentError
from tests.providers.conftest import API_KEY
from tests.providers.test_responses_recorded import answer, interactions, served
from tests.providers.wire_server import Request, WireServer

pytestmark = pytest.mark.anyio

IMAGES = "test_model_sees_multiple_images[openai_responses].yaml"
IMAGE_URL_INPUT = "test_openai_responses_image_url_input.yaml"
JPEG_PREFIX = "data:image/jpeg;base64,"
PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 32


@pytest.fixture
async def model(server: WireServer) -> AsyncIterator[OpenAIResponsesModel]:
    """The recorded model (gpt-5-mini) aimed at the wire server."""
    url = f"{server.url}/v1"
    async with OpenAIResponsesModel("gpt-5-mini", api_key=API_KEY, base_url=url) as responses:
        yield responses


def recorded_request(name: str, k: int) -> dict[str, Any]:
    body = interactions(name)[k]["request"]["parsed_body"]
    assert isinstance(body, dict)
    return body


def recorded_images() -> tuple[ImagePart, ImagePart]:
    """The two images of the recorded tool result: the JPEG's bytes (from its data URL) and the
    PNG's URL."""
    (_, _, _, result) = recorded_request(IMAGES, 1)["input"]
    jpeg, png = result["output"]
    assert jpeg["image_url"].startswith(JPEG_PREFIX)
    data = base64.b64decode(jpeg["image_url"].removeprefix(JPEG_PREFIX), validate=True)
    return ImagePart(data), ImagePart(url=png["image_url"])


def get_images_spec() -> ToolSpec:
    (recorded,) = recorded_request(IMAGES, 0)["tools"]
    return ToolSpec(recorded["name"], "", recorded["parameters"])


async def first_answer(server: WireServer, model: OpenAIResponsesModel) -> ModelResponse:
    """Interaction 0's answer (a reasoning item and the get_images call), decoded."""
    question = recorded_request(IMAGES, 0)["input"][0]["content"]
    request = ModelRequest((UserMessage(question),), tools=(get_images_spec(),))
    (reply, *_) = served(interactions(IMAGES)[0]["response"])
    return await answer(server, model, reply, request)


# -- decode ------------------------------------------------------------------------------------


async def decoded(server: WireServer, model: OpenAIResponsesModel, name: str, k: int) -> Any:
    """Interaction k's answer, served whole and cut at odd offsets: the same response each way."""
    request = ModelRequest((UserMessage("hi"),))
    replies = served(interactions(name)[k]["response"])
    results = [await answer(server, model, reply, request) for reply in replies]
    assert all(result == results[0] for result in results[1:])
    return results[0]


async def test_decode_the_call_for_images(server: WireServer, model: OpenAIResponsesModel) -> None:
    body = interactions(IMAGES)[0]["response"]["parsed_body"]
    reasoning, call_item = body["output"]
    response = await decoded(server, model, IMAGES, 0)
    (part,) = response.message.reasoning
    assert (part.id, part.encrypted) == (reasoning["id"], reasoning["encrypted_content"])
    (call,) = response.message.tool_calls
    assert (call.name, call.id, response.id) == ("get_images", call_item["call_id"], body["id"])


async def test_decode_the_answer_after_the_images(
    server: WireServer, model: OpenAIResponsesModel
) -> None:
    body = interactions(IMAGES)[1]["response"]["parsed_body"]
    reasoning, message = body["output"]
    response = await decoded(server, model, IMAGES, 1)
    assert response.message.reasoning[0].encrypted == reasoning["encrypted_content"]
    assert response.message.text == message["content"][0]["text"] == "Kiwi"
    assert response.usage.input_tokens == body["usage"]["input_tokens"]


async def test_decode_the_answer_to_an_image_url(
    server: WireServer, model: OpenAIResponsesModel
) -> None:
    (item,) = interactions(IMAGE_URL_INPUT)[0]["response"]["parsed_body"]["output"]
    response = await decoded(server, model, IMAGE_URL_INPUT, 0)
    assert response.message.text == item["content"][0]["text"]


# -- encode ------------------------------------------------------------------------------------


async def test_encode_a_tool_result_of_images_as_the_api_accepted_it(
    server: WireServer, model: OpenAIResponsesModel
) -> None:
    recorded_next = recorded_request(IMAGES, 1)
    answered = await first_answer(server, model)
    (call,) = answered.message.tool_calls
    question = UserMessage(recorded_next["input"][0]["content"])
    result = ToolMessage(call.id, call.name, parts=recorded_images())
    server.reply_with(*served(interactions(IMAGES)[1]["response"]))
    await model.request(
        ModelRequest((question, answered.message, result), tools=(get_images_spec(),))
    )
    ours = server.requests[-1].json()
    assert ours["input"] == recorded_next["input"]  # reasoning, call and the two images
    for key in ("model", "include", "tool_choice"):
        assert ours[key] == recorded_next[key]


async def test_encode_a_user_message_with_an_image_url_as_the_api_accepted_it(
    server: WireServer,
) -> None:
    recorded = recorded_request(IMAGE_URL_INPUT, 0)
    (message,) = recorded["input"]
    text, image = message["content"]
    parts = [text["text"], ImagePart(url=image["image_url"])]
    url = f"{server.url}/v1"
    async with OpenAIResponsesModel("gpt-4o", api_key=API_KEY, base_url=url) as gpt4o:
        server.reply_with(*served(interactions(IMAGE_URL_INPUT)[0]["response"]))
        await gpt4o.request(ModelRequest((UserMessage(parts=parts),)))
    ours = server.requests[-1].json()
    assert (ours["input"], ours["model"]) == (recorded["input"], recorded["model"])
    # By design: no `instructions` when there are none (the recorded client sent "").
    assert "instructions" not in ours and recorded["instructions"] == ""


async def test_a_tool_returning_images_through_react_loop_sends_the_recorded_request(
    server: WireServer, model: OpenAIResponsesModel
) -> None:
    jpeg, png = recorded_images()

    @tool
    def get_images() -> list[ImagePart]:
        """Images to look at."""
        return [jpeg, png]

    server.reply_with(*(served(interactions(IMAGES)[k]["response"])[0] for k in (0, 1)))
    result = await ReActLoop(model, tools=[get_images]).run(
        recorded_request(IMAGES, 0)["input"][0]["content"]
    )
    assert result.output == "Kiwi"
    assert server.requests[1].json()["input"] == recorded_request(IMAGES, 1)["input"]


# -- documents and detail ----------------------------------------------------------------------


async def user_input(server: WireServer, model: OpenAIResponsesModel, *parts: Any) -> Any:
    """The `content` of the user message a request of these parts sends."""
    server.reply_with(*served(interactions(IMAGE_URL_INPUT)[0]["response"]))
    await model.request(ModelRequest((UserMessage(parts=parts),)))
    (message,) = server.requests[-1].json()["input"]
    assert message["role"] == "user"
    return message["content"]


def data_url(media_type: str, data: bytes) -> str:
    return f"data:{media_type};base64,{base64.b64encode(data).decode()}"


async def test_documents_go_as_input_files(server: WireServer, model: OpenAIResponsesModel) -> None:
    pdf = b"%PDF-1.4 tiny"
    content = await user_input(
        server,
        model,
        "Read these.",
        DocumentPart(pdf, title="report.pdf"),
        DocumentPart(url="https://example.com/a.pdf"),
        DocumentPart(text="Notes: café ☕", title="notes.txt"),
    )
    assert content == [
        {"type": "input_text", "text": "Read these."},
        {"type": "input_file", "file_data": data_url("application/pdf", pdf),
         "filename": "report.pdf"},
        {"type": "input_file", "file_url": "https://example.com/a.pdf"},
        {"type": "input_file", "file_data": data_url("text/plain", "Notes: café ☕".encode()),
         "filename": "notes.txt"},
    ]  # fmt: skip


async def test_an_image_keeps_its_detail_and_bytes_go_as_a_data_url(
    server: WireServer, model: OpenAIResponsesModel
) -> None:
    content = await user_input(server, model, ImagePart(PNG, detail="low"), "What is it?")
    assert content == [
        {"type": "input_image", "image_url": data_url("image/png", PNG), "detail": "low"},
        {"type": "input_text", "text": "What is it?"},
    ]


async def test_an_image_alone_goes_as_a_list_of_one_item(
    server: WireServer, model: OpenAIResponsesModel
) -> None:
    content = await user_input(server, model, ImagePart(url="https://example.com/cat.png"))
    assert content == [
        {"type": "input_image", "image_url": "https://example.com/cat.png", "detail": "auto"}
    ]


async def test_text_only_parts_go_as_one_string(
    server: WireServer, model: OpenAIResponsesModel
) -> None:
    assert await user_input(server, model, "Hello, ", "world.") == "Hello, world."


async def test_a_document_in_a_tool_result_goes_in_its_output_list(
    server: WireServer, model: OpenAIResponsesModel
) -> None:
    answered = await first_answer(server, model)
    (call,) = answered.message.tool_calls
    pdf = b"%PDF-1.7 result"
    result = ToolMessage(call.id, call.name, parts=["Found:", DocumentPart(pdf)])
    server.reply_with(*served(interactions(IMAGES)[1]["response"]))
    await model.request(ModelRequest((UserMessage("Find it."), answered.message, result)))
    output = server.requests[-1].json()["input"][-1]["output"]
    assert output == [
        {"type": "input_text", "text": "Found:"},
        {"type": "input_file", "file_data": data_url("application/pdf", pdf),
         "filename": "document.pdf"},
    ]  # fmt: skip


# -- refusals: typed, nothing sent -------------------------------------------------------------


async def refused(server: WireServer, model: OpenAIResponsesModel, *messages: Any) -> Exception:
    """The error a request of these messages raises; the server must have received nothing."""
    with pytest.raises((UnsupportedContentError, ContentTooLargeError)) as caught:
        await model.request(ModelRequest(tuple(messages)))
    assert server.requests == []
    return caught.value


async def test_audio_in_a_user_message_is_refused(
    server: WireServer, model: OpenAIResponsesModel
) -> None:
    error = await refused(server, model, UserMessage(parts=["Hear.", AudioPart(b"RIFF", "wav")]))
    assert isinstance(error, UnsupportedContentError)
    assert error.where == "a user message" and error.part == "audio wav, 4 bytes"


async def test_audio_in_a_tool_result_is_refused(
    server: WireServer, model: OpenAIResponsesModel
) -> None:
    answered = await first_answer(server, model)
    server.requests.clear()
    (call,) = answered.message.tool_calls
    result = ToolMessage(call.id, call.name, parts=[AudioPart(b"ID3", "mp3")])
    error = await refused(server, model, UserMessage("Play."), answered.message, result)
    assert isinstance(error, UnsupportedContentError) and error.where == "a tool result"


async def test_an_image_over_the_limit_is_refused(
    server: WireServer, model: OpenAIResponsesModel
) -> None:
    big = ImagePart(PNG + b"\x00" * (IMAGE_LIMIT - len(PNG) + 1))
    error = await refused(server, model, UserMessage(parts=["Look.", big]))
    assert isinstance(error, ContentTooLargeError)
    assert (error.size, error.limit) == (IMAGE_LIMIT + 1, 20 * 1024 * 1024)


async def test_an_image_at_the_limit_is_sent(
    server: WireServer, model: OpenAIResponsesModel
) -> None:
    at_limit = ImagePart(PNG + b"\x00" * (IMAGE_LIMIT - len(PNG)))
    content = await user_input(server, model, "Look.", at_limit)
    assert content[1]["image_url"].startswith("data:image/png;base64,")


async def test_files_over_the_request_limit_together_are_refused(
    server: WireServer, model: OpenAIResponsesModel
) -> None:
    half = FILES_LIMIT // 2 + 1  # each under the limit, the two together over it
    first = UserMessage(parts=["One.", DocumentPart(b"%PDF" + b"\x00" * (half - 4))])
    second = UserMessage(parts=["Two.", DocumentPart(text="x" * half, title="b.txt")])
    error = await refused(server, model, first, second)
    assert isinstance(error, ContentTooLargeError)
    assert (error.size, error.limit) == (2 * half, 50 * 1024 * 1024)
    assert "b.txt" in error.part


# -- previous_response mode --------------------------------------------------------------------


def sent_images(request: Request) -> int:
    return request.body.count(b'"input_image"')


async def test_previous_response_mode_sends_a_tool_results_images_once(server: WireServer) -> None:
    url = f"{server.url}/v1"
    async with OpenAIResponsesModel(
        "gpt-5-mini", api_key=API_KEY, base_url=url, conversation="previous_response"
    ) as chained:
        answered = await first_answer(server, chained)
        (call,) = answered.message.tool_calls
        history = (
            UserMessage(recorded_request(IMAGES, 0)["input"][0]["content"]),
            answered.message,
            ToolMessage(call.id, call.name, parts=recorded_images()),
        )
        server.reply_with(*served(interactions(IMAGES)[1]["response"]))
        last = await chained.request(ModelRequest(history, tools=(get_images_spec(),)))
        await chained.request(ModelRequest((*history, last.message, UserMessage("Sure?"))))
    _, with_images, after = (request.json() for request in server.requests)
    (result,) = with_images["input"]
    assert result["output"] == recorded_request(IMAGES, 1)["input"][-1]["output"]
    assert with_images["previous_response_id"] == answered.id
    assert after["input"] == [{"role": "user", "content": "Sure?"}]
    assert after["previous_response_id"] == last.id
    assert [sent_images(request) for request in server.requests] == [0, 2, 0]
