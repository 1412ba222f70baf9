"""Content parts on the Anthropic Messages API, over the loopback wire server.

Recorded traffic (tests/fixtures/recorded/anthropic, see tests/fixtures/README.md): a tool that
returned two images (one base64 JPEG, one URL) and a plain-text document input; each answer
decodes, and the conversation rebuilt from parts makes reactloop send what the vendor accepted
(`anthropic_view`). Then the block shapes of each part, the parts Anthropic cannot take (audio,
other types) and the ones over its documented sizes, refused before anything is sent, on the
plain and the streamed path alike (they share one body builder)."""

from __future__ import annotations

import base64
from collections.abc import AsyncIterator, Sequence
from typing import Any

import orjson
import pytest

from reactloop._core import (
    AssistantMessage,
    AudioPart,
    ContentPart,
    DocumentPart,
    ImagePart,
    Message,
    ModelRequest,
    ModelResponse,
    ToolCall,
    ToolMessage,
    ToolSpec,
    UserMessage,
)
from reactloop._loop._loop import ReActLoop
from reactloop._providers import AnthropicModel
from reactloop._providers._anthropic_content import (
    IMAGE_LIMIT,
    MAX_IMAGE_BASE64,
    PDF_LIMIT,
)
from reactloop.errors import ContentTooLargeError, UnsupportedContentError
from tests.providers.conftest import API_KEY
from tests.providers.recorded import (
    ODD_OFFSETS,
    Deltas,
    anthropic,
    anthropic_parts,
    anthropic_view,
    stream_bytes,
)
from tests.providers.wire_server import Reply, WireServer, json_reply, split_at, sse_reply

pytestmark = pytest.mark.anyio

IMAGES = "test_model_sees_multiple_images[anthropic]"
TEXT_DOCUMENT = "test_text_document_as_binary_content_input"
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
PDF_BYTES = b"%PDF-1.4\n1 0 obj\n<<>>\nendobj\ntrailer\n<<>>\n%%EOF\n"
PDF_URL = "https://example.com/report.pdf"
NO_ARGUMENTS = {"type": "object", "properties": {}, "additionalProperties": False}


@pytest.fixture
async def sonnet(server: WireServer) -> AsyncIterator[AnthropicModel]:
    async with AnthropicModel("claude-sonnet-4-5", api_key=API_KEY, base_url=server.url) as model:
        yield model


def sent(server: WireServer, index: int = -1) -> dict[str, Any]:
    return anthropic_view(server.requests[index].json())


def recorded(interaction: dict[str, Any]) -> dict[str, Any]:
    return anthropic_view(interaction["request"]["parsed_body"])


def answer_of(interaction: dict[str, Any]) -> dict[str, Any]:
    body = interaction["response"]["parsed_body"]
    assert isinstance(body, dict)
    return body


async def check_decoded(
    server: WireServer, model: AnthropicModel, interaction: dict[str, Any]
) -> ModelResponse:
    """The recorded answer, served whole and cut at odd byte offsets, decodes to its blocks."""
    body = answer_of(interaction)
    raw = orjson.dumps(body)
    whole = json_reply(body)
    cut = Reply(200, tuple(split_at(raw, [n for n in ODD_OFFSETS if n < len(raw)])), whole.headers)
    answers = []
    for reply in (whole, cut):
        server.reply_with(reply)
        answers.append(await model.request(ModelRequest((UserMessage("Hello"),))))
    for answer in answers:
        assert answer.message.parts == anthropic_parts(body["content"], model.model)
    return answers[0]


def recorded_images(interaction: dict[str, Any]) -> list[ImagePart]:
    """The two images of the recorded tool result as a tool returns them: the JPEG's bytes
    (decoded from the request the vendor accepted) and the URL image."""
    turn = interaction["request"]["parsed_body"]["messages"][2]
    (result,) = turn["content"]
    jpeg, url = (block["source"] for block in result["content"])
    return [ImagePart(base64.b64decode(jpeg["data"])), ImagePart(url=url["url"])]


def png(size: int) -> bytes:
    """Bytes of `size` that read as a PNG (its signature, then padding)."""
    return PNG_SIGNATURE + b"\0" * (size - len(PNG_SIGNATURE))


def blocks_sent(server: WireServer, index: int = -1) -> list[dict[str, Any]]:
    """The content blocks of the last turn of a request the server received."""
    content = server.requests[index].json()["messages"][-1]["content"]
    assert isinstance(content, list)
    return content


async def send(model: AnthropicModel, messages: Sequence[Message], *, stream: bool = False) -> None:
    request = ModelRequest(tuple(messages))
    if stream:
        await model.stream(request, Deltas())
    else:
        await model.request(request)


def stream_reply() -> Reply:
    (interaction,) = anthropic("test_anthropic_model_thinking_part_stream")
    return sse_reply([stream_bytes(interaction)])


# -- recorded: decode --------------------------------------------------------------------------


async def test_the_recorded_image_loop_answers_decode(
    server: WireServer, sonnet: AnthropicModel
) -> None:
    first, second = anthropic(IMAGES)
    asked = await check_decoded(server, sonnet, first)
    (call,) = asked.message.tool_calls
    assert (call.name, call.id) == ("get_images", "toolu_01JPiYRg5YH3kq9zwgCtaZLh")
    answered = await check_decoded(server, sonnet, second)
    assert answered.message.text == "Kiwi"


async def test_the_recorded_text_document_answer_decodes(
    server: WireServer, sonnet: AnthropicModel
) -> None:
    (interaction,) = anthropic(TEXT_DOCUMENT)
    answer = await check_decoded(server, sonnet, interaction)
    assert answer.message.text == 'The text file says "Dummy TXT file".'


# -- recorded: encode --------------------------------------------------------------------------


async def test_a_text_document_is_sent_as_recorded(
    server: WireServer, sonnet: AnthropicModel
) -> None:
    (interaction,) = anthropic(TEXT_DOCUMENT)
    server.reply_with(json_reply(answer_of(interaction)))
    said = UserMessage(
        parts=["What does this text file say?", DocumentPart(text="Dummy TXT file\n")]
    )
    await send(sonnet, [said])
    assert sent(server) == recorded(interaction)


async def test_images_in_a_tool_result_are_sent_as_recorded(
    server: WireServer, sonnet: AnthropicModel
) -> None:
    """The conversation rebuilt (the prompt, the recorded tool use, a result holding the two
    images as the recording has them): the next request is the one the vendor accepted."""
    first, second = anthropic(IMAGES)
    server.reply_with(json_reply(answer_of(second)))
    prompt = first["request"]["parsed_body"]["messages"][0]["content"][0]["text"]
    (use,) = answer_of(first)["content"]
    history = (
        UserMessage(prompt),
        AssistantMessage(tool_calls=[ToolCall(use["name"], "{}", use["id"])]),
        ToolMessage(use["id"], use["name"], parts=recorded_images(second)),
    )
    tools = (ToolSpec("get_images", "", NO_ARGUMENTS),)
    await sonnet.request(ModelRequest(history, tools=tools))
    assert sent(server) == recorded(second)


async def test_a_tool_returning_images_runs_the_recorded_loop(
    server: WireServer, sonnet: AnthropicModel
) -> None:
    """End to end: a `ReActLoop` whose tool returns the two images sends both requests as
    recorded and ends with the recorded answer."""
    first, second = anthropic(IMAGES)
    server.reply_with(json_reply(answer_of(first)), json_reply(answer_of(second)))
    images = recorded_images(second)

    def get_images() -> list[ImagePart]:
        """The images to look at."""
        return images

    loop = ReActLoop(sonnet, tools=[get_images])
    result = await loop.run(first["request"]["parsed_body"]["messages"][0]["content"][0]["text"])
    assert result.output == "Kiwi"
    assert (sent(server, 0), sent(server, 1)) == (recorded(first), recorded(second))


# -- block shapes ------------------------------------------------------------------------------


async def test_user_parts_go_as_blocks_in_their_order(
    server: WireServer, sonnet: AnthropicModel
) -> None:
    server.reply_with(json_reply(answer_of(anthropic(TEXT_DOCUMENT)[0])))
    image = png(64)
    said = UserMessage(parts=[
        "Compare these.", ImagePart(image), ImagePart(url="https://example.com/a.webp"),
        DocumentPart(PDF_BYTES, title="report.pdf"), DocumentPart(url=PDF_URL),
        DocumentPart(text="Plain notes.", title="notes.txt"), "  ", "Thanks.",
    ])  # fmt: skip
    await send(sonnet, [said])
    pdf = base64.b64encode(PDF_BYTES).decode()
    assert blocks_sent(server) == [
        {"type": "text", "text": "Compare these."},
        {"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                     "data": base64.b64encode(image).decode()}},
        {"type": "image", "source": {"type": "url", "url": "https://example.com/a.webp"}},
        {"type": "document", "title": "report.pdf",
         "source": {"type": "base64", "media_type": "application/pdf", "data": pdf}},
        {"type": "document", "source": {"type": "url", "url": PDF_URL}},
        {"type": "document", "title": "notes.txt",
         "source": {"type": "text", "media_type": "text/plain", "data": "Plain notes."}},
        {"type": "text", "text": "Thanks."},
    ]  # fmt: skip


async def test_text_bytes_go_as_a_plain_text_document(
    server: WireServer, sonnet: AnthropicModel
) -> None:
    server.reply_with(json_reply(answer_of(anthropic(TEXT_DOCUMENT)[0])))
    notes = DocumentPart("Grüße, 世界\n".encode(), media_type="text/markdown")
    await send(sonnet, [UserMessage(parts=["Read this.", notes])])
    source = {"type": "text", "media_type": "text/plain", "data": "Grüße, 世界\n"}
    assert blocks_sent(server)[1] == {"type": "document", "source": source}


async def test_a_failed_tool_result_keeps_its_parts_and_is_error(
    server: WireServer, sonnet: AnthropicModel
) -> None:
    server.reply_with(json_reply(answer_of(anthropic(TEXT_DOCUMENT)[0])))
    call = ToolCall("screenshot", "{}", "toolu_1")
    image = png(32)
    history = (
        UserMessage("Take a screenshot."),
        AssistantMessage(tool_calls=[call]),
        ToolMessage("toolu_1", "screenshot", is_error=True,
                    parts=["The page did not load; what it showed:", ImagePart(image),
                           DocumentPart(PDF_BYTES)]),
    )  # fmt: skip
    await send(sonnet, history)
    (result,) = blocks_sent(server)
    assert result == {
        "type": "tool_result", "tool_use_id": "toolu_1", "is_error": True,
        "content": [
            {"type": "text", "text": "The page did not load; what it showed:"},
            {"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                         "data": base64.b64encode(image).decode()}},
            {"type": "document", "source": {"type": "base64", "media_type": "application/pdf",
                                            "data": base64.b64encode(PDF_BYTES).decode()}},
        ],
    }  # fmt: skip


async def test_a_plain_tool_result_is_sent_as_before(
    server: WireServer, sonnet: AnthropicModel
) -> None:
    server.reply_with(json_reply(answer_of(anthropic(TEXT_DOCUMENT)[0])))
    history = (
        UserMessage("What time is it?"),
        AssistantMessage(tool_calls=[ToolCall("clock", "{}", "toolu_2")]),
        ToolMessage("toolu_2", "clock", "12:00"),
    )
    await send(sonnet, history)
    assert blocks_sent(server) == [
        {"type": "tool_result", "tool_use_id": "toolu_2", "content": "12:00"}
    ]


@pytest.mark.parametrize("stream", [False, True], ids=["request", "stream"])
async def test_the_streamed_path_sends_the_same_blocks(
    server: WireServer, sonnet: AnthropicModel, stream: bool
) -> None:
    server.reply_with(stream_reply() if stream else json_reply(answer_of(anthropic(IMAGES)[1])))
    said = UserMessage(parts=["What is this?", ImagePart(png(16)), DocumentPart(url=PDF_URL)])
    await send(sonnet, [said], stream=stream)
    body = server.requests[-1].json()
    assert body.get("stream", False) is stream
    assert [block["type"] for block in blocks_sent(server)] == ["text", "image", "document"]


# -- refused before sending --------------------------------------------------------------------


def _with_part(part: ContentPart, where: str) -> tuple[Message, ...]:
    """A history holding `part` in a user message, or in a tool result."""
    if where == "a user message":
        return (UserMessage(parts=["Look.", part]),)
    call = ToolCall("fetch", "{}", "toolu_3")
    return (
        UserMessage("Fetch it."),
        AssistantMessage(tool_calls=[call]),
        ToolMessage("toolu_3", "fetch", parts=["Here.", part]),
    )


WHERE = ["a user message", "a tool result"]
PATHS = pytest.mark.parametrize("stream", [False, True], ids=["request", "stream"])


@PATHS
@pytest.mark.parametrize("where", WHERE)
async def test_audio_is_refused_and_nothing_sent(
    server: WireServer, sonnet: AnthropicModel, where: str, stream: bool
) -> None:
    audio = AudioPart(b"RIFF\0\0\0\0WAVE", "wav")
    with pytest.raises(UnsupportedContentError) as raised:
        await send(sonnet, _with_part(audio, where), stream=stream)
    assert (raised.value.provider, raised.value.where) == ("anthropic", where)
    assert "audio wav" in str(raised.value)
    assert server.requests == []


UNSUPPORTED: dict[str, ContentPart] = {
    "bmp image": ImagePart(b"BM" + b"\0" * 30, media_type="image/bmp"),
    "word document": DocumentPart(b"PK\3\4", media_type="application/msword"),
    "text document by url": DocumentPart(url="https://example.com/a.txt", media_type="text/plain"),
    "text bytes not utf-8": DocumentPart(b"\xff\xfe\xfa", media_type="text/plain"),
}


@pytest.mark.parametrize("where", WHERE)
@pytest.mark.parametrize("name", sorted(UNSUPPORTED))
async def test_a_part_anthropic_cannot_read_is_refused(
    server: WireServer, sonnet: AnthropicModel, name: str, where: str
) -> None:
    with pytest.raises(UnsupportedContentError) as raised:
        await send(sonnet, _with_part(UNSUPPORTED[name], where))
    assert raised.value.where == where
    assert server.requests == []


@PATHS
@pytest.mark.parametrize("where", WHERE)
async def test_an_image_over_five_megabytes_in_base64_is_refused(
    server: WireServer, sonnet: AnthropicModel, where: str, stream: bool
) -> None:
    with pytest.raises(ContentTooLargeError) as raised:
        await send(sonnet, _with_part(ImagePart(png(IMAGE_LIMIT + 1)), where), stream=stream)
    assert (raised.value.size, raised.value.limit) == (IMAGE_LIMIT + 1, IMAGE_LIMIT)
    assert server.requests == []


async def test_an_image_at_the_limit_is_sent_within_five_megabytes(
    server: WireServer, sonnet: AnthropicModel
) -> None:
    server.reply_with(json_reply(answer_of(anthropic(IMAGES)[1])))
    await send(sonnet, _with_part(ImagePart(png(IMAGE_LIMIT)), "a user message"))
    (_, image) = blocks_sent(server)
    assert len(image["source"]["data"]) == MAX_IMAGE_BASE64


async def test_a_pdf_over_the_request_limit_is_refused(
    server: WireServer, sonnet: AnthropicModel
) -> None:
    pdf = DocumentPart(PDF_BYTES + b"\0" * (PDF_LIMIT + 1 - len(PDF_BYTES)))
    with pytest.raises(ContentTooLargeError) as raised:
        await send(sonnet, _with_part(pdf, "a tool result"))
    assert (raised.value.size, raised.value.limit) == (PDF_LIMIT + 1, PDF_LIMIT)
    assert "application/pdf" in str(raised.value)
    assert server.requests == []
