"""The HTTP layer, over real loopback sockets (Hypercorn, asyncio and trio), with a trivial
protocol (tests/serve/plain.py) so that what is tested is the layer itself: routes, statuses,
the JSON error shape, the body cap, the hooks, CORS, the lifespan, SSE ids and continuation,
disconnects, and failures after a stream began."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from functools import partial
from typing import Any

import anyio
import httpx
import pytest
from starlette.applications import Starlette
from starlette.routing import Mount, Route

from reactloop import ReActLoop, StopReason, tool
from reactloop._core import Message
from reactloop._serve import RequestRejectedError, StreamContext
from reactloop._serve._app import ChatServer
from reactloop._serve._host import RunHost
from reactloop._serve._http import EventStream
from reactloop._serve._live import LiveRun
from reactloop._serve._routes import ag_ui_routes, ai_sdk_routes
from reactloop.serve import AccessRequest, CorsOptions, DisconnectPolicy, ServeOptions
from reactloop.stores import MemoryStore
from reactloop.testing import FakeTool, ScriptedModel, call, reply
from tests.serve.plain import Frame, PlainAdapter, frames, read_until
from tests.serve.server import served

pytestmark = pytest.mark.anyio

HANG = 20.0


def loop_of(*script: Any, tools: list[Any] | None = None) -> ReActLoop[Any]:
    return ReActLoop(ScriptedModel(list(script)), tools=tools or [])


def plain_app(server: ChatServer, adapter: PlainAdapter | None = None) -> Starlette:
    """The server's AG-UI route layout (POST /, /runs/{id}/events, /runs/{id}/cancel) and the
    AI SDK's (under /chat), speaking the plain protocol."""
    adapter = adapter or PlainAdapter()

    def ui_messages(messages: Sequence[Message], chat_id: str, pending: Any) -> object:
        return {"chat": chat_id, "count": len(messages), "held": len(pending)}

    routes = [
        *ag_ui_routes(server, adapter, ""),
        *ai_sdk_routes(server, adapter, "/chat", ui_messages),
    ]
    return server._app_of(routes)


@asynccontextmanager
async def client_for(app: Any) -> AsyncIterator[httpx.AsyncClient]:
    async with served(app) as url, httpx.AsyncClient(base_url=url, timeout=HANG) as client:
        yield client


def names(found: list[Frame]) -> list[str]:
    return [frame.data for frame in found if frame.event is None]


async def test_a_turn_streams_its_run_with_an_id_on_each_event() -> None:
    server = ChatServer(loop_of("Hello there."))
    async with client_for(plain_app(server)) as client:
        with anyio.fail_after(HANG):
            response = await client.post("/", json={"text": "hi", "run_id": "r1"})
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/event-stream")
    assert response.headers["x-plain-stream"] == "v1"
    found = frames(response.text)
    assert found[0] == Frame("open", "r1", None) and found[-1].event == "end"
    events = [frame for frame in found if frame.event is None]
    assert events[0].data == "RunStarted" and events[-1].data == "RunFinished"
    epoch = events[0].id.rpartition("-")[0] if events[0].id else None
    assert [frame.id for frame in events] == [f"{epoch}-{n}" for n in range(1, len(events) + 1)]


async def test_a_request_before_the_lifespan_ran_says_to_pass_it() -> None:
    server = ChatServer(loop_of("x"))
    outer = Starlette(routes=[Mount("/api", plain_app(server))])  # no lifespan=server.lifespan
    async with client_for(outer) as client:
        response = await client.post("/api/", json={"text": "hi"})
    assert response.status_code == 500
    error = response.json()["error"]
    assert error["code"] == "configuration" and "lifespan=server.lifespan" in error["message"]


async def test_a_body_over_the_cap_is_refused_with_413() -> None:
    server = ChatServer(loop_of("x"), ServeOptions(max_body_bytes=64))
    async with client_for(plain_app(server)) as client:
        response = await client.post("/", json={"text": "y" * 100})
    assert response.status_code == 413
    error = response.json()["error"]
    assert set(error) == {"code", "message", "rule"} and "64" in error["rule"]


async def test_a_body_crossing_the_cap_is_refused_before_the_rest_is_sent() -> None:
    server = ChatServer(loop_of("x"), ServeOptions(max_body_bytes=64))
    head = b"POST / HTTP/1.1\r\nhost: x\r\ntransfer-encoding: chunked\r\n\r\n"
    first = b"80\r\n" + b"y" * 128 + b"\r\n"  # one chunk of 128 bytes; the body never ends
    async with served(plain_app(server)) as url:
        host, port = url.removeprefix("http://").split(":")
        with anyio.fail_after(HANG):
            async with await anyio.connect_tcp(host, int(port)) as stream:
                await stream.send(head + first)
                answer = b"".join([chunk async for chunk in stream])  # the server closes
    assert answer.startswith(b"HTTP/1.1 413 ") and b'"rule"' in answer


async def test_a_malformed_body_is_a_400_in_the_json_error_shape() -> None:
    server = ChatServer(loop_of("x"))
    async with client_for(plain_app(server)) as client:
        response = await client.post("/", content=b"{not json")
    assert response.status_code == 400
    assert response.json() == {
        "error": {"code": "invalid_request", "message": "not JSON", "rule": "a JSON object"}
    }


async def test_a_request_the_identify_hook_names_no_one_for_is_a_401() -> None:
    def identify(headers: Any) -> str | None:
        return str(headers["x-user"]) if "x-user" in headers else None

    server = ChatServer(loop_of("x"), ServeOptions(identify=identify))
    async with client_for(plain_app(server)) as client:
        response = await client.post("/", json={"text": "hi"})
    assert response.status_code == 401
    assert response.json()["error"]["code"] == "authentication"


async def test_an_async_identify_hook_names_the_user_the_authorize_hook_is_asked_about() -> None:
    asked: list[AccessRequest] = []

    async def identify(headers: Any) -> str | None:
        return str(headers["x-user"]) if "x-user" in headers else None

    def authorize(request: AccessRequest) -> bool:
        asked.append(request)
        return request.user_id == "ada"

    server = ChatServer(loop_of("x"), ServeOptions(identify=identify, authorize=authorize))
    async with client_for(plain_app(server)) as client:
        refused = await client.post("/", json={"text": "hi"}, headers={"x-user": "bob"})
    assert refused.status_code == 403 and refused.json()["error"]["code"] == "authentication"
    assert asked and asked[0].user_id == "bob" and asked[0].headers["x-user"] == "bob"


async def test_cors_preflight_allows_the_configured_origin_only() -> None:
    cors = CorsOptions(allow_origins=("https://app.example",))
    server = ChatServer(loop_of("x"), ServeOptions(cors=cors))
    preflight = {
        "access-control-request-method": "POST",
        "access-control-request-headers": "content-type",
    }
    async with client_for(plain_app(server)) as client:
        allowed = await client.options("/", headers={"origin": "https://app.example", **preflight})
        other = await client.options("/", headers={"origin": "https://evil.example", **preflight})
    assert allowed.status_code == 200
    assert allowed.headers["access-control-allow-origin"] == "https://app.example"
    assert other.status_code == 400 and "access-control-allow-origin" not in other.headers


async def test_a_failure_before_the_stream_is_a_500_without_its_details(
    caplog: pytest.LogCaptureFixture,
) -> None:
    class Broken(PlainAdapter):
        def read_turn(self, body: bytes, *, has_store: bool) -> Any:
            raise RuntimeError("db password=hunter2 at /srv/secret.py")

    server = ChatServer(loop_of("x"))
    with caplog.at_level(logging.ERROR, logger="reactloop.serve"):
        async with client_for(plain_app(server, Broken())) as client:
            response = await client.post("/", json={"text": "hi"})
    assert response.status_code == 500
    assert "hunter2" not in response.text and "Traceback" not in response.text
    assert response.json()["error"]["code"] == "internal_error"
    assert any("hunter2" in str(record.exc_info) for record in caplog.records)


async def test_a_failure_after_the_stream_began_is_the_protocols_error_frame() -> None:
    server = ChatServer(loop_of("Hello."))
    async with client_for(plain_app(server, PlainAdapter(fail_on="StepStarted"))) as client:
        response = await client.post("/", json={"text": "hi"})
    assert response.status_code == 200
    found = frames(response.text)
    assert names(found)[0] == "RunStarted" and "StepStarted" not in names(found)
    assert "RunFinished" not in names(found)
    assert found[-2].event == "error" and found[-2].data.startswith("internal_error: ")
    assert "hunter2" not in response.text and found[-1].event == "end"


async def test_last_event_id_continues_after_the_event_the_client_has() -> None:
    server = ChatServer(loop_of("Hello there."))
    async with client_for(plain_app(server)) as client:
        first = frames((await client.post("/", json={"text": "hi", "run_id": "r2"})).text)
        events = [frame for frame in first if frame.event is None]
        third = events[2].id
        assert third is not None
        again = await client.get("/runs/r2/events", headers={"last-event-id": third})
    rest = frames(again.text)
    assert rest[0].event == "open"  # restated, for clients that check each response whole
    assert [frame.id for frame in rest if frame.event is None] == [f.id for f in events[3:]]


async def test_a_last_event_id_of_another_epoch_starts_from_the_beginning() -> None:
    server = ChatServer(loop_of("Hello there."))
    async with client_for(plain_app(server)) as client:
        first = frames((await client.post("/", json={"text": "hi", "run_id": "r3"})).text)
        again = await client.get("/runs/r3/events", headers={"last-event-id": "0000-2"})
    assert names(frames(again.text)) == names(first)


async def test_a_reposted_turn_with_last_event_id_is_a_reconnect_not_a_second_run() -> None:
    tool = FakeTool("lookup", result="42")
    server = ChatServer(loop_of(reply("", call("lookup")), "Done.", tools=[tool]))
    async with client_for(plain_app(server)) as client:
        first = frames((await client.post("/", json={"text": "hi", "run_id": "r4"})).text)
        second_id = [frame.id for frame in first if frame.event is None][1]
        assert second_id is not None
        again = await client.post(
            "/", json={"text": "hi", "run_id": "r4"}, headers={"last-event-id": second_id}
        )
    rest = [frame for frame in frames(again.text) if frame.event is None]
    assert rest[-1].data == "RunFinished" and len(rest) == len(names(first)) - 2
    assert len(tool.calls) == 1


async def test_an_unknown_run_is_a_404() -> None:
    server = ChatServer(loop_of("x"))
    async with client_for(plain_app(server)) as client:
        response = await client.get("/runs/nope/events")
    assert response.status_code == 404 and response.json()["error"]["rule"]


async def test_the_ai_sdk_resume_of_a_session_with_nothing_streaming_is_204() -> None:
    server = ChatServer(loop_of("x"))
    async with client_for(plain_app(server)) as client:
        response = await client.get("/chat/c1/stream")
    assert response.status_code == 204


async def test_a_client_that_goes_away_is_detached_as_disconnected_and_its_run_stops() -> None:
    gate = anyio.Event()
    tool = FakeTool("slow", gate=gate)
    loop = loop_of(reply("", call("slow")), "never", tools=[tool])
    server = ChatServer(loop, ServeOptions(on_disconnect=DisconnectPolicy.INTERRUPT))
    detached: list[bool] = []
    left = anyio.Event()
    detach = server.host.detach

    def recording(live: Any, *, disconnected: bool) -> None:
        detached.append(disconnected)
        detach(live, disconnected=disconnected)
        left.set()

    server.host.detach = recording  # type: ignore[method-assign]
    async with client_for(plain_app(server)) as client:
        with anyio.fail_after(HANG):
            async with client.stream("POST", "/", json={"text": "hi", "run_id": "r5"}) as r:
                await read_until(r, "data: ToolCallStarted")  # the tool runs: drop the connection
            await left.wait()
            gate.set()
            after = frames((await client.get("/runs/r5/events")).text)
    assert detached[0] is True  # then False: the GET that read the rest
    assert "RunFinished" in names(after) and len(tool.calls) == 1
    live = await server.host.find("r5", "anonymous", {})
    assert live is not None and live.result is not None
    assert live.result.stop_reason is StopReason.INTERRUPTED


async def test_a_server_mounted_in_a_starlette_app_answers_under_its_mount() -> None:
    server = ChatServer(loop_of("Mounted."))
    app = Starlette(routes=[Mount("/ag-ui", server.ag_ui())], lifespan=server.lifespan)
    ag_ui = {
        "threadId": "t",
        "runId": "m1",
        "messages": [{"id": "u", "role": "user", "content": "hi"}],
    }
    async with client_for(app) as client:
        response = await client.post("/ag-ui/", json=ag_ui)
        replay = await client.get("/ag-ui/runs/m1/events")
    assert response.status_code == 200 and '"RUN_FINISHED"' in response.text
    assert replay.status_code == 200 and '"RUN_FINISHED"' in replay.text


class Gated:
    """A tool that says when it started, then waits to be let go; counts its calls."""

    def __init__(self) -> None:
        self.started = anyio.Event()
        self.gate = anyio.Event()
        self.calls = 0

        @tool
        async def slow() -> str:
            """Waits for the test."""
            self.calls += 1
            self.started.set()
            await self.gate.wait()
            return "done"

        self.tool = slow


@pytest.mark.parametrize("path", ["/runs/r6/cancel", "/chat/s6/cancel"])
async def test_a_cancel_stops_the_run_and_its_stream_ends(path: str) -> None:
    gated = Gated()
    server = ChatServer(loop_of(reply("", call("slow")), "never", tools=[gated.tool]))
    body = {"text": "hi", "run_id": "r6", "session_id": "s6"}
    streamed: list[str] = []
    async with client_for(plain_app(server)) as client, anyio.create_task_group() as group:

        async def stream() -> None:
            streamed.extend(names(frames((await client.post("/", json=body)).text)))

        group.start_soon(stream)
        with anyio.fail_after(HANG):
            await gated.started.wait()
            cancel = await client.post(path)
            gated.gate.set()
    live = await server.host.find("r6", "anonymous", {})
    assert cancel.status_code == 204 and streamed[-1] == "RunFinished" and gated.calls == 1
    assert live is not None and live.result is not None
    assert live.result.stop_reason is StopReason.INTERRUPTED


async def test_a_cancel_of_an_unknown_run_is_a_404() -> None:
    server = ChatServer(loop_of("x"))
    async with client_for(plain_app(server)) as client:
        response = await client.post("/runs/nope/cancel")
    assert response.status_code == 404


async def test_a_sessions_messages_are_read_for_its_owner_only() -> None:
    loop = ReActLoop(ScriptedModel(["First answer."]), store=MemoryStore())
    options = ServeOptions(identify=lambda headers: headers.get("x-user"))
    server = ChatServer(loop, options)
    body = {"text": "hi", "run_id": "r7", "session_id": "s7"}
    async with client_for(plain_app(server)) as client:
        await client.post("/", json=body, headers={"x-user": "ada"})
        mine = await client.get("/chat/s7/messages", headers={"x-user": "ada"})
        theirs = await client.get("/chat/s7/messages", headers={"x-user": "bob"})
    assert mine.json() == {"chat": "s7", "count": 2, "held": 0}
    assert theirs.status_code == 403


async def test_the_ai_sdk_resume_of_a_streaming_session_is_its_run_from_the_start() -> None:
    gated = Gated()
    server = ChatServer(loop_of(reply("", call("slow")), "Done.", tools=[gated.tool]))
    body = {"text": "hi", "run_id": "r8", "session_id": "s8"}
    async with client_for(plain_app(server)) as client, anyio.create_task_group() as group:
        group.start_soon(partial(client.post, "/", json=body))  # a tab, which then reloads
        with anyio.fail_after(HANG):
            await gated.started.wait()
            async with client.stream("GET", "/chat/s8/stream") as resumed:
                gated.gate.set()
                text = (await resumed.aread()).decode()
    found = frames(text)
    assert found[0] == Frame("open", "r8", None)
    assert names(found)[0] == "RunStarted" and names(found)[-1] == "RunFinished"


@pytest.mark.parametrize("suffix", ["²", "99999", "-1", "", "1.5", " 2"])
async def test_a_last_event_id_that_names_no_event_here_starts_from_the_beginning(
    suffix: str,
) -> None:
    server = ChatServer(loop_of("Hello there."))
    async with client_for(plain_app(server)) as client:
        first = frames((await client.post("/", json={"text": "hi", "run_id": "r9"})).text)
        epoch = str(first[1].id).rpartition("-")[0]
        last = f"{epoch}-{suffix}".encode("latin-1")  # as a header carries it: '²' is one byte
        again = await client.get("/runs/r9/events", headers={b"last-event-id": last})
    assert again.status_code == 200 and names(frames(again.text)) == names(first)


async def test_an_identify_hook_answering_something_else_than_a_user_id_is_a_500(
    caplog: pytest.LogCaptureFixture,
) -> None:
    server = ChatServer(loop_of("x"), ServeOptions(identify=lambda headers: 42))  # type: ignore[arg-type,return-value]
    with caplog.at_level(logging.ERROR, logger="reactloop.serve"):
        async with client_for(plain_app(server)) as client:
            response = await client.post("/", json={"text": "hi"})
    assert response.status_code == 500 and response.json()["error"]["code"] == "internal_error"
    assert any("ServeOptions.identify" in str(record.exc_info) for record in caplog.records)


async def test_a_streamed_response_carries_the_protocols_headers_each_once() -> None:
    server = ChatServer(loop_of("Hi."))
    message = {"id": "u", "role": "user", "parts": [{"type": "text", "text": "hi"}]}
    async with client_for(server.asgi()) as client:
        response = await client.post("/api/chat", json={"id": "c", "messages": [message]})
    assert response.status_code == 200 and response.text.endswith("data: [DONE]\n\n")
    assert response.headers["x-vercel-ai-ui-message-stream"] == "v1"
    assert response.headers.get_list("cache-control") == ["no-cache"]


class Streaming:
    """An ASGI app streaming one given LiveRun with the plain encoder."""

    def __init__(self, host: RunHost, live: LiveRun) -> None:
        self.host, self.live = host, live

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        encoder = PlainAdapter().encoder(StreamContext(run_id=self.live.run_id))
        await EventStream(self.host, self.live, encoder)(scope, receive, send)


@pytest.mark.parametrize(
    ("error", "shown"),
    [
        (RequestRejectedError("session s1 is busy", rule="one run at a time", status=409),
         "invalid_request: session s1 is busy"),
        (RuntimeError("driver broke: password=hunter2"), "internal_error: the server failed"),
    ],
)  # fmt: skip
async def test_a_run_that_ended_without_its_end_is_the_protocols_error_frame(
    error: Exception, shown: str
) -> None:
    live = LiveRun("r10")
    live.end(0.0, error)
    host = RunHost(loop_of("x"))
    app = Starlette(routes=[Route("/", Streaming(host, live))])
    async with client_for(app) as client:
        response = await client.get("/")
    found = frames(response.text)
    assert found[-2].event == "error" and found[-2].data.startswith(shown)
    assert "hunter2" not in response.text and live.subscribers == 0
