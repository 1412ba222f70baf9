"""MCP tools without a server: offered names, filters, approval, argument schemas, results as
text or content parts; and the servers' options, checked at construction."""

from __future__ import annotations

import base64
import subprocess
import sys
from typing import Any, cast

import mcp_types
import pytest

from reactloop._errors import ConfigurationError, ContractError, ToolsetError
from reactloop._schema import compile_input
from reactloop._tools._mcp._connection import Connection
from reactloop._tools._mcp._servers import MCPServerHTTP, MCPServerStdio, ServerRestartPolicy
from reactloop._tools._mcp._tools import (
    MAX_NAME,
    chosen,
    needs_approval,
    offered_name,
    result_text,
    result_value,
)
from reactloop.messages import AudioPart, DocumentPart, ImagePart, TextPart
from tests.helpers.images import png
from tests.helpers.mcp_helpers import ROOT


def _tool(name: str, description: str = "") -> mcp_types.Tool:
    return mcp_types.Tool(name=name, description=description, input_schema={"type": "object"})


def test_a_valid_name_is_kept_and_a_prefix_goes_first() -> None:
    assert offered_name("get_time", None) == "get_time"
    assert offered_name("get_time", "clock") == "clock_get_time"


def test_characters_a_model_api_refuses_become_underscores() -> None:
    assert offered_name("files.read/v2", None) == "files_read_v2"


def test_a_long_name_is_cut_to_64_characters_and_stays_unique() -> None:
    first, second = offered_name("a" * 70 + "x", "p"), offered_name("a" * 70 + "y", "p")
    assert len(first) == len(second) == MAX_NAME
    assert first != second
    assert first.startswith("p_aaaa")


def test_a_name_filter_uses_the_servers_names() -> None:
    assert chosen(_tool("echo"), frozenset({"echo"}))
    assert not chosen(_tool("fail"), frozenset({"echo"}))
    assert chosen(_tool("fail"), None)


def test_a_predicate_filter_sees_the_sdk_tool() -> None:
    def readable(tool: mcp_types.Tool) -> bool:
        return "read" in (tool.description or "")

    assert chosen(_tool("a", "reads files"), readable)
    assert not chosen(_tool("b", "writes files"), readable)


def test_approval_is_all_or_the_named_tools() -> None:
    assert needs_approval("pay", True)
    assert not needs_approval("pay", False)
    assert needs_approval("pay", frozenset({"pay"}))
    assert not needs_approval("look", frozenset({"pay"}))


def test_a_schema_the_validator_cannot_compile_leaves_checking_to_the_server() -> None:
    convert = compile_input({"$ref": "https://example.com/schema.json"})
    assert convert({"anything": 1}, "") == {"anything": 1}


def _result(*blocks: Any, structured: Any = None, error: bool = False) -> mcp_types.CallToolResult:
    return mcp_types.CallToolResult(
        content=list(blocks), structured_content=structured, is_error=error
    )


def _b64(size: int) -> str:
    return base64.b64encode(bytes(size)).decode()


def test_structured_content_wins_over_text() -> None:
    result = _result(mcp_types.TextContent(text="{ pretty }"), structured={"a": 1})
    assert result_text(result) == '{"a":1}'


def test_text_parts_are_joined_by_newlines() -> None:
    parts = [mcp_types.TextContent(text="one"), mcp_types.TextContent(text="two")]
    assert result_text(_result(*parts)) == "one\ntwo"


def _blob(mime: str, data: bytes, uri: str = "file:///docs/a.bin") -> mcp_types.EmbeddedResource:
    encoded = base64.b64encode(data).decode()
    return mcp_types.EmbeddedResource(
        resource=mcp_types.BlobResourceContents(uri=uri, blob=encoded, mime_type=mime)
    )


def _image(data: bytes, mime: str = "image/png") -> mcp_types.ImageContent:
    return mcp_types.ImageContent(data=base64.b64encode(data).decode(), mime_type=mime)


def _audio(mime: str, size: int = 300) -> mcp_types.AudioContent:
    return mcp_types.AudioContent(data=_b64(size), mime_type=mime)


def test_an_image_becomes_an_image_part_of_its_decoded_bytes() -> None:
    picture = png(4, 3)
    value = result_value(_result(mcp_types.TextContent(text="see"), _image(picture)))
    assert value == [TextPart("see"), ImagePart(picture, media_type="image/png")]


@pytest.mark.parametrize(
    ("mime", "audio_format"),
    [("audio/wav", "wav"), ("audio/x-wav", "wav"), ("audio/mpeg", "mp3"), ("audio/ogg", "ogg"),
     ("audio/flac", "flac"), ("audio/mp4", "m4a"), ("audio/webm", "webm"), ("audio/aac", "aac")],
)  # fmt: skip
def test_audio_becomes_an_audio_part_of_the_format_its_media_type_names(
    mime: str, audio_format: str
) -> None:
    assert result_value(_result(_audio(mime))) == [AudioPart(bytes(300), audio_format)]


def test_audio_of_a_type_no_part_takes_stays_a_note_that_says_so() -> None:
    value = result_text(_result(_audio("audio/x-tracker")))
    assert value == "[audio/x-tracker, 300 bytes, not shown: no content part takes this media type]"


def test_an_embedded_pdf_becomes_a_document_part_named_by_its_uri() -> None:
    value = result_value(_result(_blob("application/pdf", b"%PDF-1.4", "file:///d/report.pdf")))
    assert value == [DocumentPart(b"%PDF-1.4", media_type="application/pdf", title="report.pdf")]


def test_an_embedded_image_becomes_an_image_part() -> None:
    picture = png(2, 2)
    value = result_value(_result(_blob("image/png", picture)))
    assert value == [ImagePart(picture, media_type="image/png")]


@pytest.mark.parametrize(
    ("block", "shown"),
    [
        (
            _blob("application/zip", bytes(2_000)),
            "[resource file:///docs/a.bin, application/zip, 2 kB, not shown",
        ),
        (_image(bytes(10), "image/svg+xml"), "[image/svg+xml, 10 bytes, not shown"),
        (
            mcp_types.ImageContent(data="not base64!", mime_type="image/png"),
            "[image/png, 11 bytes, not shown: its data is not valid base64]",
        ),
        (
            mcp_types.ResourceLink(uri="file:///notes.md", name="notes"),
            "[resource link file:///notes.md (notes), not fetched]",
        ),
    ],
)  # fmt: skip
def test_content_no_part_takes_becomes_a_note(block: Any, shown: str) -> None:
    value = result_value(_result(block))
    assert isinstance(value, str) and value.startswith(shown)


def test_text_only_results_stay_text_even_with_a_link() -> None:
    link = mcp_types.ResourceLink(uri="file:///a", name="a")
    assert result_value(_result(mcp_types.TextContent(text="one"), link)) == (
        "one\n[resource link file:///a (a), not fetched]"
    )


def test_structured_content_goes_first_in_place_of_the_text_beside_an_image() -> None:
    picture = png(2, 2)
    blocks = (mcp_types.TextContent(text='{"a": 1}'), _image(picture))
    value = result_value(_result(*blocks, structured={"a": 1}))
    assert value == [TextPart('{"a":1}'), ImagePart(picture, media_type="image/png")]


def test_text_blocks_between_parts_are_joined_by_newlines() -> None:
    picture = png(2, 2)
    blocks = [mcp_types.TextContent(text=t) for t in ("one", "two")]
    value = result_value(_result(*blocks, _image(picture), mcp_types.TextContent(text="three")))
    assert value == [TextPart("one\ntwo"), ImagePart(picture), TextPart("three")]


def test_an_error_results_image_is_described_in_its_text() -> None:
    assert result_text(_result(_image(png(2, 2)))).startswith("[image image/png, ")


def test_an_embedded_text_resource_is_read_as_text() -> None:
    resource = mcp_types.TextResourceContents(uri="file:///a.txt", text="the notes")
    assert result_text(_result(mcp_types.EmbeddedResource(resource=resource))) == "the notes"


def _stdio(**options: Any) -> MCPServerStdio:
    return MCPServerStdio("server", **options)


def _http(**options: Any) -> MCPServerHTTP:
    return MCPServerHTTP("http://127.0.0.1:1/mcp", **options)


@pytest.mark.parametrize(
    ("make", "options", "option"),
    [
        (_stdio, {"prefix": "has space"}, "MCPServerStdio.prefix"),
        (_stdio, {"prefix": "p" * 33}, "MCPServerStdio.prefix"),
        (_stdio, {"args": "--flag"}, "MCPServerStdio.args"),
        (_stdio, {"args": [1]}, "MCPServerStdio.args"),
        (_stdio, {"env": {"A": 1}}, "MCPServerStdio.env"),
        (_stdio, {"cwd": 3}, "MCPServerStdio.cwd"),
        (_stdio, {"timeout": 0}, "MCPServerStdio.timeout"),
        (_stdio, {"connect_timeout": None}, "MCPServerStdio.connect_timeout"),
        (_stdio, {"restart": 2}, "MCPServerStdio.restart"),
        (_stdio, {"tool_filter": "echo"}, "MCPServerStdio.tool_filter"),
        (_stdio, {"tool_filter": [1]}, "MCPServerStdio.tool_filter"),
        (_stdio, {"requires_approval": "echo"}, "MCPServerStdio.requires_approval"),
        (_stdio, {"name": ""}, "MCPServerStdio.name"),
        (_http, {"headers": {"X": None}}, "MCPServerHTTP.headers"),
        (_http, {"timeout": -1}, "MCPServerHTTP.timeout"),
        (_http, {"prefix": 5}, "MCPServerHTTP.prefix"),
    ],
)
def test_each_option_is_checked_at_construction(make: Any, options: Any, option: str) -> None:
    with pytest.raises(ConfigurationError) as caught:
        make(**options)
    assert caught.value.option == option
    assert caught.value.rule


@pytest.mark.parametrize("value", ["", 5, ["python"]])
def test_the_command_is_a_non_empty_string(value: Any) -> None:
    with pytest.raises(ConfigurationError, match=r"MCPServerStdio\.command"):
        MCPServerStdio(value)


@pytest.mark.parametrize("value", ["ftp://host/mcp", "127.0.0.1:8000", None])
def test_the_url_is_http_or_https(value: Any) -> None:
    with pytest.raises(ConfigurationError, match=r"MCPServerHTTP\.url"):
        MCPServerHTTP(value)


def test_an_unknown_option_is_named() -> None:
    with pytest.raises(ConfigurationError, match="'prefx'"):
        MCPServerStdio("server", prefx="x")  # type: ignore[call-arg]


def test_restart_policy_counts_from_zero() -> None:
    assert ServerRestartPolicy(max_restarts=0).max_restarts == 0
    with pytest.raises(ConfigurationError, match="max_restarts"):
        ServerRestartPolicy(max_restarts=-1)


def test_the_default_name_is_the_command_or_the_url() -> None:
    assert MCPServerStdio("/usr/bin/mcp-server-time").name == "mcp-server-time"
    assert _http().name == "http://127.0.0.1:1/mcp"


_WITHOUT_SDK = """
import sys
sys.modules["mcp"] = None
import reactloop, reactloop._tools._mcp._servers
from reactloop._errors import ConfigurationError, ContractError, ToolsetError
try:
    reactloop._tools._mcp._servers.MCPServerStdio("mcp-server-time")
except ConfigurationError as error:
    print(error)
"""


def test_without_the_extra_reactloop_imports_and_a_server_says_how_to_install_it() -> None:
    done = subprocess.run(
        [sys.executable, "-c", _WITHOUT_SDK], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert "pip install 'reactloop[mcp]'" in done.stdout


def test_two_server_tools_offered_under_one_name_are_refused() -> None:
    connection = Connection(_stdio(), cast(Any, None))
    with pytest.raises(ToolsetError, match=r"'a\.b' and 'a/b' are both offered as 'a_b'"):
        connection._wrap([_tool("a.b"), _tool("a/b")])


def test_a_tool_filter_that_raises_breaks_its_contract() -> None:
    def broken(tool: mcp_types.Tool) -> bool:
        raise KeyError(tool.name)

    connection = Connection(_stdio(tool_filter=broken), cast(Any, None))
    with pytest.raises(ContractError, match="tool_filter") as caught:
        connection._wrap([_tool("echo")])
    assert isinstance(caught.value.__cause__, KeyError)
