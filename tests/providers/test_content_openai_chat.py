"""Content parts on the Chat Completions provider, over the loopback server and recorded traffic
(tests/fixtures/recorded/openai-chat, see tests/fixtures/README.md).

- decode: the recorded answers to requests carrying images, a PDF and audio decode as sent, whole
  and cut at odd byte offsets.
- encode: a user message with a PDF or an mp3 clip (the bytes taken from the recorded request)
  is the recorded request exactly; a tool returning images sends the recorded shape (a `tool`
  message of text, then one user message with a text before each image), the same roles, order
  and image payloads (the labels' wording is ours); the same through `ReActLoop`.
- refusals: what the API cannot take, or takes at a smaller size, fails typed before anything
  is sent.
Every body the server receives is checked against the openai SDK's request types (conftest).
"""

from __future__ import annotations

import base64
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest

from reactloop import AudioPart, DocumentPart, ImagePart, ReActLoop, tool
from reactloop._core import BinaryPart
from reactloop._core._messages import (
    AssistantMessage,
    Message,
    ModelRequest,
    ModelResponse,
    ToolCall,
    ToolMessage,
    ToolSpec,
    UserMessage,
)
from reactloop._providers import OpenAIModel
from reactloop._providers._chat_content import AUDIO_LIMIT, FILE_LIMIT, IMAGE_LIMIT
from reactloop.errors import ContentTooLargeError, UnsupportedContentError
from tests.providers.conftest import API_KEY
from tests.providers.recorded import RECORDED, interactions
from tests.providers.test_reasoning_openai_chat import json_two_ways
from tests.providers.wire_server import WireServer, json_reply

pytestmark = pytest.mark.anyio

IMAGE_URL_TOOL = "test_image_url_tool_response"
IMAGES = "test_model_sees_multiple_images[openai_chat]"
PDF_INPUT = "test_document_as_binary_content_input"
PDF_WITH_TOOL = "test_document_as_binary_content_input_with_tool"
AUDIO_INPUT = "test_audio_as_binary_content_input"
CASSETTES = (IMAGE_URL_TOOL, IMAGES, PDF_INPUT, PDF_WITH_TOOL, AUDIO_INPUT)
PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 32
PDF_PREFIX = "data:application/pdf;base64,"
JPEG_PREFIX = "data:image/jpeg;base64,"


def recorded(name: str) -> list[dict[str, Any]]:
    return interactions(RECORDED / "openai-chat" / f"{name}.yaml")


def request_of(name: str, k: int) -> dict[str, Any]:
    body = recorded(name)[k]["request"]["parsed_body"]
    assert isinstance(body, dict)
    return body


def response_of(name: str, k: int) -> dict[str, Any]:
    body = recorded(name)[k]["response"]["parsed_body"]
    assert isinstance(body, dict)
    return body


@pytest.fixture
async def chat(server: WireServer) -> AsyncIterator[OpenAIModel]:
    """gpt-4o, the model of most recordings, aimed at the wire server."""
    async with OpenAIModel("gpt-4o", api_key=API_KEY, base_url=f"{server.url}/v1") as model:
        yield model


def spec_of(name: str) -> ToolSpec:
    (recorded_tool,) = request_of(name, 0)["tools"]
    function = recorded_tool["function"]
    return ToolSpec(function["name"], function["description"], function["parameters"])


def question_of(name: str) -> str:
    """The recorded user question (a string, or the text part of a one-part array)."""
    content = request_of(name, 0)["messages"][0]["content"]
    if isinstance(content, str):
        return content
    return str(content[0]["text"])


async def sent_for(server: WireServer, model: OpenAIModel, *messages: Message) -> dict[str, Any]:
    """The body a request of these messages sends (answered by a recorded reply)."""
    server.reply_with(json_reply(response_of(PDF_INPUT, 0)))
    await model.request(ModelRequest(messages))
    return server.requests[-1].json()


# -- decode ------------------------------------------------------------------------------------


def expected_calls(message: dict[str, Any]) -> list[tuple[str, str, str]]:
    return [
        (call["function"]["name"], call["function"]["arguments"], call["id"])
        for call in message.get("tool_calls") or []
    ]


@pytest.mark.parametrize("name", CASSETTES)
async def test_recorded_answers_decode_whole_and_cut(
    server: WireServer, chat: OpenAIModel, name: str
) -> None:
    for k, interaction in enumerate(recorded(name)):
        body = response_of(name, k)
        message = body["choices"][0]["message"]
        for reply in json_two_ways(body):
            server.reply_with(reply)
            answer = await chat.request(ModelRequest((UserMessage("hi"),)))
            assert answer.message.text == (message["content"] or ""), interaction["request"]
            calls = [(c.name, c.arguments, c.id) for c in answer.message.tool_calls]
            assert calls == expected_calls(message)
            assert (answer.id, answer.usage.input_tokens) == (
                body["id"], body["usage"]["prompt_tokens"],
            )  # fmt: skip


# -- encode: user messages ---------------------------------------------------------------------


def recorded_pdf(name: str) -> tuple[str, bytes, str]:
    """The recorded question, the PDF's bytes (from its data URL) and its file name."""
    text, file = request_of(name, 0)["messages"][0]["content"]
    assert file["file"]["file_data"].startswith(PDF_PREFIX)
    data = base64.b64decode(file["file"]["file_data"].removeprefix(PDF_PREFIX), validate=True)
    return text["text"], data, file["file"]["filename"]


async def test_a_pdf_in_a_user_message_is_the_recorded_request(
    server: WireServer, chat: OpenAIModel
) -> None:
    question, pdf, filename = recorded_pdf(PDF_INPUT)
    message = UserMessage(parts=[question, DocumentPart(pdf, title=filename)])
    ours = await sent_for(server, chat, message)
    assert ours["messages"] == request_of(PDF_INPUT, 0)["messages"]


async def test_an_mp3_clip_in_a_user_message_is_the_recorded_request(server: WireServer) -> None:
    theirs = request_of(AUDIO_INPUT, 0)
    text, audio = theirs["messages"][0]["content"]
    clip = base64.b64decode(audio["input_audio"]["data"], validate=True)
    message = UserMessage(parts=[text["text"], AudioPart(clip, audio["input_audio"]["format"])])
    url = f"{server.url}/v1"
    async with OpenAIModel(theirs["model"], api_key=API_KEY, base_url=url) as listener:
        ours = await sent_for(server, listener, message)
    assert (ours["model"], ours["messages"]) == (theirs["model"], theirs["messages"])


async def test_a_pdf_then_a_tool_loop_is_the_recorded_conversation(
    server: WireServer, chat: OpenAIModel
) -> None:
    question, pdf, filename = recorded_pdf(PDF_WITH_TOOL)
    user = UserMessage(parts=[question, DocumentPart(pdf, title=filename)])
    spec = spec_of(PDF_WITH_TOOL)
    server.reply_with(json_reply(response_of(PDF_WITH_TOOL, 0)))
    answered = await chat.request(ModelRequest((user,), tools=(spec,)))
    (call,) = answered.message.tool_calls
    result = ToolMessage(call.id, call.name, "DUMMY PDF FILE")
    server.reply_with(json_reply(response_of(PDF_WITH_TOOL, 1)))
    await chat.request(ModelRequest((user, answered.message, result), tools=(spec,)))
    for k in (0, 1):
        assert (
            server.requests[-2 + k].json()["messages"] == request_of(PDF_WITH_TOOL, k)["messages"]
        )


# -- encode: tool results ----------------------------------------------------------------------


def payload(part: dict[str, Any]) -> Any:
    """What must be sent exactly: an image's or file's payload; a text's wording may differ."""
    return None if part["type"] == "text" else part[part["type"]]


def structure(messages: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    """Roles and order, the call a tool message answers, each content's part kinds in order with
    the non-text payloads, and the tool calls."""
    shaped = []
    for message in messages:
        content = message.get("content")
        parts = content if isinstance(content, list) else [{"type": "text", "text": content}]
        shaped.append((
            message["role"], message.get("tool_call_id"), message.get("tool_calls"),
            [(part["type"], payload(part)) for part in parts],
        ))  # fmt: skip
    return shaped


def recorded_images() -> list[ImagePart]:
    """The images of the recorded tool result: the JPEG's bytes (from its data URL) and the
    PNG's URL."""
    *_, attachments = request_of(IMAGES, 1)["messages"]
    _, jpeg, _, png = attachments["content"]
    assert jpeg["image_url"]["url"].startswith(JPEG_PREFIX)
    data = base64.b64decode(jpeg["image_url"]["url"].removeprefix(JPEG_PREFIX), validate=True)
    return [ImagePart(data), ImagePart(url=png["image_url"]["url"])]


@pytest.fixture
async def mini(server: WireServer) -> AsyncIterator[OpenAIModel]:
    """gpt-5-mini, the model of the several-images recording."""
    async with OpenAIModel("gpt-5-mini", api_key=API_KEY, base_url=f"{server.url}/v1") as model:
        yield model


async def first_answer(server: WireServer, model: OpenAIModel, name: str) -> ModelResponse:
    server.reply_with(json_reply(response_of(name, 0)))
    return await model.request(
        ModelRequest((UserMessage(question_of(name)),), tools=(spec_of(name),))
    )


async def test_images_a_tool_returned_go_in_a_user_message_after_its_result(
    server: WireServer, mini: OpenAIModel
) -> None:
    answered = await first_answer(server, mini, IMAGES)
    (call,) = answered.message.tool_calls
    result = ToolMessage(call.id, call.name, parts=recorded_images())
    history = (UserMessage(question_of(IMAGES)), answered.message, result)
    server.reply_with(json_reply(response_of(IMAGES, 1)))
    await mini.request(ModelRequest(history, tools=(spec_of(IMAGES),)))
    ours, theirs = server.requests[-1].json()["messages"], request_of(IMAGES, 1)["messages"]
    assert structure(ours) == structure(theirs)
    assert ours[0] == theirs[0]
    assert ours[2]["content"] == "[image 1, image 2 follow]"
    labels = [part["text"] for part in ours[3]["content"] if part["type"] == "text"]
    assert labels == [f"Tool result of get_images ({call.id}), image {n}:" for n in (1, 2)]


async def test_an_image_url_a_tool_returned_has_the_recorded_shape(
    server: WireServer, chat: OpenAIModel
) -> None:
    theirs = request_of(IMAGE_URL_TOOL, 1)["messages"]
    (_, image) = theirs[3]["content"]
    answered = await first_answer(server, chat, IMAGE_URL_TOOL)
    (call,) = answered.message.tool_calls
    result = ToolMessage(call.id, call.name, parts=[ImagePart(url=image["image_url"]["url"])])
    history = (UserMessage(question_of(IMAGE_URL_TOOL)), answered.message, result)
    server.reply_with(json_reply(response_of(IMAGE_URL_TOOL, 1)))
    await chat.request(ModelRequest(history, tools=(spec_of(IMAGE_URL_TOOL),)))
    ours = server.requests[-1].json()["messages"]
    # By design: a user message of text alone goes as a string (the recording sent one part).
    assert structure(ours) == structure(theirs)
    assert ours[2]["content"] == "[image 1 follows]"


async def test_a_tool_returning_images_through_react_loop_sends_the_recorded_shape(
    server: WireServer, mini: OpenAIModel
) -> None:
    jpeg, png = recorded_images()

    @tool
    def get_images() -> list[ImagePart]:
        """Images to look at."""
        return [jpeg, png]

    server.reply_with(*(json_reply(response_of(IMAGES, k)) for k in (0, 1)))
    result = await ReActLoop(mini, tools=[get_images]).run(question_of(IMAGES))
    assert result.output == "Kiwi"
    ours = server.requests[1].json()["messages"]
    assert structure(ours) == structure(request_of(IMAGES, 1)["messages"])


def parallel_history() -> tuple[Message, ...]:
    calls = [ToolCall("look", "{}", "call_a"), ToolCall("read", "{}", "call_b")]
    return (
        UserMessage("Look and read."),
        AssistantMessage(tool_calls=calls),
        ToolMessage("call_a", "look", parts=["A cat.", ImagePart(PNG, detail="high")]),
        ToolMessage("call_b", "read", parts=[DocumentPart(b"%PDF-1.7 x", title="r.pdf")]),
        UserMessage("Thanks."),
    )


async def test_parallel_results_come_first_then_one_user_message_with_their_parts(
    server: WireServer, chat: OpenAIModel
) -> None:
    messages = (await sent_for(server, chat, *parallel_history()))["messages"]
    assert [(m["role"], m.get("tool_call_id")) for m in messages] == [
        ("user", None), ("assistant", None), ("tool", "call_a"), ("tool", "call_b"),
        ("user", None), ("user", None),
    ]  # fmt: skip
    assert [messages[2]["content"], messages[3]["content"]] == ["A cat.", "[document 1 follows]"]
    png = f"data:image/png;base64,{base64.b64encode(PNG).decode()}"
    pdf = f"{PDF_PREFIX}{base64.b64encode(b'%PDF-1.7 x').decode()}"
    assert messages[4]["content"] == [
        {"type": "text", "text": "Tool result of look (call_a), image 1:"},
        {"type": "image_url", "image_url": {"url": png, "detail": "high"}},
        {"type": "text", "text": "Tool result of read (call_b), document 1:"},
        {"type": "file", "file": {"file_data": pdf, "filename": "r.pdf"}},
    ]
    assert messages[5] == {"role": "user", "content": "Thanks."}


# -- encode: other parts -----------------------------------------------------------------------


async def test_a_text_document_is_a_text_part_under_its_title(
    server: WireServer, chat: OpenAIModel
) -> None:
    parts: list[str | DocumentPart] = [
        "Summarise.", DocumentPart(text="Café ☕ notes", title="notes.txt"),
        DocumentPart(text="untitled"),
    ]  # fmt: skip
    (message,) = (await sent_for(server, chat, UserMessage(parts=parts)))["messages"]
    assert message["content"] == [
        {"type": "text", "text": "Summarise."},
        {"type": "text", "text": "Document: notes.txt\nCafé ☕ notes"},
        {"type": "text", "text": "untitled"},
    ]


async def test_text_only_parts_go_as_one_string(server: WireServer, chat: OpenAIModel) -> None:
    (message,) = (await sent_for(server, chat, UserMessage(parts=["Hello, ", "world."])))[
        "messages"
    ]
    assert message == {"role": "user", "content": "Hello, world."}


async def test_an_openai_compatible_server_gets_the_same_parts(server: WireServer) -> None:
    url = f"{server.url}/v1"
    async with OpenAIModel("deepseek-chat", api_key="k", base_url=url, provider="deepseek") as ds:
        body = await sent_for(
            server, ds, UserMessage(parts=["What?", ImagePart(url="https://x/a.png")])
        )
    assert body["messages"][0]["content"][1] == {
        "type": "image_url", "image_url": {"url": "https://x/a.png"},
    }  # fmt: skip


# -- refusals: typed, nothing sent -------------------------------------------------------------


async def refused(server: WireServer, model: OpenAIModel, *messages: Message) -> Exception:
    """The error a request of these messages raises; the server must have received nothing."""
    with pytest.raises((UnsupportedContentError, ContentTooLargeError)) as caught:
        await model.request(ModelRequest(messages))
    assert server.requests == []
    return caught.value


async def test_a_document_url_is_refused(server: WireServer, chat: OpenAIModel) -> None:
    part = DocumentPart(url="https://example.com/a.pdf")
    error = await refused(server, chat, UserMessage(parts=["Read.", part]))
    assert isinstance(error, UnsupportedContentError)
    assert error.where == "a user message" and "https://example.com/a.pdf" in error.part
    assert "file_data" in str(error)


@pytest.mark.parametrize("audio_format", ["flac", "ogg", "m4a", "webm", "aac", "pcm16"])
async def test_audio_other_than_wav_and_mp3_is_refused(
    server: WireServer, chat: OpenAIModel, audio_format: str
) -> None:
    error = await refused(server, chat, UserMessage(parts=["Hear.", AudioPart(b"x", audio_format)]))
    assert isinstance(error, UnsupportedContentError) and audio_format in str(error)


async def test_a_part_refused_in_a_tool_result_says_so(
    server: WireServer, chat: OpenAIModel
) -> None:
    history = (
        UserMessage("Fetch."),
        AssistantMessage(tool_calls=[ToolCall("fetch", "{}", "call_1")]),
        ToolMessage("call_1", "fetch", parts=[DocumentPart(url="https://example.com/b.pdf")]),
    )
    error = await refused(server, chat, *history)
    assert isinstance(error, UnsupportedContentError) and error.where == "a tool result"


async def test_a_document_neither_pdf_nor_text_is_refused(
    server: WireServer, chat: OpenAIModel
) -> None:
    docx = DocumentPart(b"PK\x03\x04", media_type="application/vnd.ms-word")
    error = await refused(server, chat, UserMessage(parts=["Read.", docx]))
    assert isinstance(error, UnsupportedContentError)


OVER: dict[str, tuple[Callable[[], BinaryPart], int]] = {
    "image": (lambda: ImagePart(PNG + b"\x00" * (IMAGE_LIMIT - len(PNG) + 1)), 20 * 1024 * 1024),
    "audio": (lambda: AudioPart(b"\x00" * (AUDIO_LIMIT + 1), "wav"), 25 * 1024 * 1024),
    "pdf": (lambda: DocumentPart(b"%PDF" + b"\x00" * (FILE_LIMIT - 3)), 50 * 1024 * 1024),
}
"""A part one byte over each documented limit (made when the test runs), and the limit."""


@pytest.mark.parametrize("kind", sorted(OVER))
async def test_a_part_over_its_limit_is_refused(
    server: WireServer, chat: OpenAIModel, kind: str
) -> None:
    make, limit = OVER[kind]
    error = await refused(server, chat, UserMessage(parts=["Here.", make()]))
    assert isinstance(error, ContentTooLargeError)
    assert (error.size, error.limit) == (limit + 1, limit)


async def test_files_over_the_limit_together_are_refused(
    server: WireServer, chat: OpenAIModel
) -> None:
    half = FILE_LIMIT // 2 + 1  # each under the limit, the two together over it
    first = UserMessage(parts=["One.", DocumentPart(b"%PDF" + b"\x00" * (half - 4))])
    second = UserMessage(parts=["Two.", DocumentPart(b"%PDF" + b"\x01" * (half - 4), title="b")])
    error = await refused(server, chat, first, AssistantMessage("Ok."), second)
    assert isinstance(error, ContentTooLargeError)
    assert (error.size, error.limit) == (
        2 * half,
        FILE_LIMIT,
    ) and "(with the request's" in error.part


async def test_an_image_alone_is_a_user_message(server: WireServer, chat: OpenAIModel) -> None:
    """A user message with no text but an image carries something: it is sent, not refused."""
    (message,) = (await sent_for(server, chat, UserMessage(parts=[ImagePart(PNG)])))["messages"]
    assert [part["type"] for part in message["content"]] == ["image_url"]
