"""A session turn with a context window reads only the turns the window can keep (adr/0034): the
model is sent exactly what a read of the whole session would give it, pairs of calls and results
never split, and a store without `session_turns` is still read whole."""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reactloop._core._contracts import RunStore
from reactloop._core._messages import (
    AssistantMessage,
    Message,
    ModelRequest,
    ModelResponse,
    SystemMessage,
    ToolCall,
    ToolMessage,
    UserMessage,
)
from reactloop._core._records import (
    RunStatus,
    SessionTurn,
)
from reactloop._core._repair import pair_calls, repair_history
from reactloop._durable._stores import MemoryStore, SqliteStore, Store
from reactloop._errors import ContextTooLongError
from reactloop._loop._loop import ReActLoop
from reactloop._loop._sessions import read_session
from reactloop._policies._context import ContextWindow
from reactloop._stored_errors import SessionBusyError
from reactloop.approval import Approve, DecisionScope
from reactloop.testing import FakeTool, FunctionModel, reply
from tests.helpers.stored_sessions import Turn, WholeRead, write_session

pytestmark = pytest.mark.anyio


class CountingStore(WholeRead):
    """A store that reads by pages, counting the runs it reads."""

    def __init__(self, inner: Store) -> None:
        super().__init__(inner)
        self.paged = inner
        self.read = 0

    async def session_turns(
        self, session_id: str, *, before: str | None = None, limit: int = 100, oldest: bool = False
    ) -> list[SessionTurn]:
        page = await self.paged.session_turns(session_id, before=before, limit=limit, oldest=oldest)
        self.read += len(page)
        return page


def long_turns(count: int) -> list[Turn]:
    """Turns of varied sizes, some with tool calls."""
    return [
        Turn(
            f"question {i} " + "word " * (i % 9 * 6),
            tuple("r" * (i % 5 * 40) for _ in range(i % 3)),
        )
        for i in range(count)
    ]


def scripted(seen: list[tuple[Message, ...]]) -> FunctionModel:
    """A model that looks a question up once, then answers; it records what it is sent."""

    def respond(request: ModelRequest) -> ModelResponse:
        seen.append(request.messages)
        last = request.messages[-1]
        if isinstance(last, UserMessage):
            return reply("", ToolCall("lookup", '{"q": 1}', id=f"call-{last.text}"))
        return reply(f"answer {len(seen)} " + "text " * 30)

    return FunctionModel(respond)


async def three_turns(store: RunStore, session: str, window: ContextWindow) -> list[Any]:
    seen: list[tuple[Message, ...]] = []
    lookup = FakeTool("lookup", result="found " * 25)
    loop = ReActLoop(
        scripted(seen), tools=[lookup], store=store, context_window=window, instructions="Be brief."
    )
    for text in ("next one", "and another", "last"):
        await loop.run(text, session_id=session)
    return seen


@pytest.mark.parametrize("drop_to", [0.7, 1.0])
async def test_a_turn_sends_what_a_whole_read_would_and_reads_fewer_runs(
    any_store: Store, drop_to: float
) -> None:
    await write_session(any_store, "paged", long_turns(60), "p")
    await write_session(any_store, "whole", long_turns(60), "w")
    window = ContextWindow(800, reserved_output=100, drop_to=drop_to)
    counting = CountingStore(any_store)
    paged = await three_turns(counting, "paged", window)
    whole = await three_turns(WholeRead(any_store), "whole", window)
    assert paged == whole and len(paged) == 6
    assert 3 <= counting.read < 3 * 30  # each turn read far fewer than the session's 60+ runs


async def test_without_a_window_the_whole_session_is_read(any_store: Store) -> None:
    await write_session(any_store, "s", long_turns(30))
    before = await any_store.session_history("s")
    seen: list[tuple[Message, ...]] = []
    counting = CountingStore(any_store)
    loop = ReActLoop(scripted(seen), tools=[FakeTool("lookup")], store=counting)
    await loop.run("next", session_id="s")
    assert seen[0] == (*before, UserMessage("next")) and counting.read == 0


async def test_a_short_session_is_read_whole(any_store: Store) -> None:
    await write_session(any_store, "s", long_turns(4))
    read = await read_session(any_store, "s", ContextWindow(100_000))
    assert read is not None and list(read.history) == await any_store.session_history("s")


async def test_the_read_never_begins_with_a_result_whose_call_was_not_read(
    any_store: Store,
) -> None:
    await write_session(any_store, "s", [*long_turns(3), Turn("asks", open_call=True)], "a")
    answer = ToolMessage("t3-open", "lookup", "r " * 400)  # a hand-written run may hold it
    later = Turn("later", history=(UserMessage("about that"), answer))
    await write_session(any_store, "s", [later, *long_turns(2)], "b")
    read = await read_session(any_store, "s", ContextWindow(100, reserved_output=10))
    assert read is not None and read.history[0] == UserMessage("asks")
    assert pair_calls(read.history).orphans == ()


async def test_the_sessions_leading_system_messages_are_read(any_store: Store) -> None:
    rules = SystemMessage("Always answer in French.")
    await write_session(any_store, "s", [Turn("hello", history=(rules,)), *long_turns(40)])
    read = await read_session(any_store, "s", ContextWindow(400, reserved_output=10))
    assert read is not None and read.history[0] == rules
    assert len(read.history) < len(await any_store.session_history("s"))


async def test_a_store_without_session_turns_still_serves_sessions(any_store: Store) -> None:
    seen: list[tuple[Message, ...]] = []
    store = WholeRead(any_store)
    loop = ReActLoop(
        scripted(seen),
        tools=[FakeTool("lookup")],
        store=store,
        context_window=ContextWindow(50_000),
    )
    await loop.run("first", session_id="s")
    await loop.run("second", session_id="s")
    assert seen[2][0] == UserMessage("first") and seen[2][-1] == UserMessage("second")


async def test_a_paused_newest_run_still_keeps_the_next_turn_out(any_store: Store) -> None:
    pay = FakeTool("pay", requires_approval=True)
    model = FunctionModel(lambda request: reply("", ToolCall("pay", "{}")))
    loop = ReActLoop(model, tools=[pay], store=any_store, context_window=ContextWindow(50_000))
    paused = await loop.run("first", session_id="s")
    assert paused.paused
    with pytest.raises(SessionBusyError, match=paused.run_id):
        await loop.run("second", session_id="s")


async def test_a_session_wide_approval_reaches_the_next_turn_read_by_pages(
    any_store: Store,
) -> None:
    pay = FakeTool("pay", requires_approval=True)

    def respond(request: ModelRequest) -> ModelResponse:
        return (
            reply("paid")
            if isinstance(request.messages[-1], ToolMessage)
            else reply("", ToolCall("pay", "{}"))
        )

    loop = ReActLoop(
        FunctionModel(respond), tools=[pay], store=any_store, context_window=ContextWindow(50_000)
    )
    paused = await loop.run("first", session_id="s")
    always = Approve(always=DecisionScope.SESSION)
    await loop.resume(paused.run_id, decisions={paused.pending[0].call_id: always})
    second = await loop.run("second", session_id="s")
    assert not second.paused and len(pay.calls) == 2
    assert (await any_store.list_runs(session_id="s"))[0].status is RunStatus.FINISHED


sizes = st.integers(min_value=0, max_value=120)
turns = st.lists(
    st.builds(
        lambda text, results, answer: Turn(
            "q " + "w " * text, tuple("r " * n for n in results), "a " * answer
        ),
        sizes,
        st.lists(sizes, max_size=3),
        sizes,
    ),
    min_size=1,
    max_size=25,
)


def fitted(window: ContextWindow, history: Sequence[Message]) -> list[tuple[Message, ...] | str]:
    """What the window sends for a new turn on `history`, for its first request and the next."""
    tracker = window.tracker()
    messages = [*repair_history(history).messages, UserMessage("now " * 20)]
    sent: list[tuple[Message, ...] | str] = []
    call = ToolCall("lookup", "{}", id="now-call")
    for step in range(2):
        try:
            sent.append(tracker.fit(messages, "Be brief."))
        except ContextTooLongError as error:
            sent.append(error.message)
        if step == 0:
            messages += [AssistantMessage("", [call]), ToolMessage("now-call", "lookup", "x " * 80)]
    return sent


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    session=turns,
    window=st.integers(min_value=60, max_value=2000),
    drop_to=st.sampled_from([0.3, 0.7, 1.0]),
    lead=st.booleans(),
)
async def test_what_the_window_keeps_of_a_read_is_what_it_keeps_of_the_whole(
    session: list[Turn], window: int, drop_to: float, lead: bool
) -> None:
    if lead:
        session[0] = Turn(
            session[0].text, session[0].results, history=(SystemMessage("rules " * 8),)
        )
    store = MemoryStore()
    await write_session(store, "s", session)
    context = ContextWindow(window, reserved_output=20, drop_to=drop_to)
    read = await read_session(store, "s", context)
    assert read is not None
    assert fitted(context, read.history) == fitted(context, await store.session_history("s"))


async def test_a_session_stored_by_version_0_1_takes_a_turn_read_by_pages(
    tmp_path: Path,
) -> None:
    path = tmp_path / "runs.db"
    shutil.copy(Path(__file__).parent.parent / "fixtures" / "stores" / "runs-v1.db", path)
    store = SqliteStore(path)
    earlier = await store.session_history("sample")
    seen: list[tuple[Message, ...]] = []
    loop = ReActLoop(scripted(seen), tools=[FakeTool("search")], store=store,
                     context_window=ContextWindow(50_000))  # fmt: skip
    await loop.run("again", session_id="sample")
    assert seen[0] == (*repair_history(earlier).messages, UserMessage("again"))
    await store.aclose()
