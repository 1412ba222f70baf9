"""State tokens carry content parts inline, up to their cap; past it, pausing without a store
says a store is needed, and the run's parts are never dropped or cut."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings

from reactloop._approval._sealing import MAX_TOKEN_BYTES, seal, signing_keys, unseal
from reactloop._core._approvals import Approve
from reactloop._core._messages import ToolCall, UserMessage
from reactloop._core._parts import ImagePart, TextPart
from reactloop._core._records import Record
from reactloop._durable._stores import MemoryStore
from reactloop._loop._loop import ReActLoop
from reactloop._stored_errors import StateTokenError, StateTokenReason
from reactloop._tools._tool import tool
from reactloop.approval import ApprovalOptions
from reactloop.testing import ScriptedModel
from tests.helpers.strategies import examples, journals_with_parts

KEY = "a state key of at least thirty-two bytes"
AT = 1_700_000_000.0


def png(size: int) -> bytes:
    return b"\x89PNG\r\n\x1a\n" + random.Random(size).randbytes(size - 8)


@settings(max_examples=examples(60), deadline=None)
@given(journal=journals_with_parts())
def test_a_token_carries_any_parts_unchanged(journal: list[Record]) -> None:
    keys = signing_keys(KEY)
    assert keys is not None
    assert unseal(seal(journal, keys, issued_at=AT), keys).records == tuple(journal)


@tool(requires_approval=True)
def send(to: str) -> str:
    """Send the picture."""
    return f"sent to {to}"


def question(image: bytes) -> UserMessage:
    return UserMessage(parts=[TextPart("Send this to Ann"), ImagePart(image)])


def script() -> ScriptedModel:
    return ScriptedModel([ToolCall("send", '{"to": "ann"}', "c1"), "sent"])


@pytest.mark.anyio
async def test_an_image_under_the_cap_travels_in_the_token_and_is_sent_again() -> None:
    image = png(300_000)
    approval = ApprovalOptions(state_key=KEY)
    paused = await ReActLoop(script(), tools=[send], approval=approval).run(question(image))
    assert paused.state is not None and len(paused.state) < MAX_TOKEN_BYTES
    model = ScriptedModel(["sent"])
    later = ReActLoop(model, tools=[send], approval=approval)
    done = await later.resume(state=paused.state, decisions={"c1": Approve()})
    assert done.output == "sent"
    assert model.requests[0].messages[0] == question(image)


@pytest.mark.anyio
async def test_an_image_over_the_cap_says_a_store_is_needed_and_a_store_keeps_it() -> None:
    image = png(MAX_TOKEN_BYTES)  # base64 inside, random: the token outgrows the cap
    approval = ApprovalOptions(state_key=KEY)
    model = script()
    with pytest.raises(StateTokenError) as caught:
        await ReActLoop(model, tools=[send], approval=approval).run(question(image))
    assert caught.value.reason is StateTokenReason.TOO_LARGE
    assert "store=" in str(caught.value) and "max_state_token_bytes" in str(caught.value)
    store = MemoryStore()  # a store instead: the run is resumed by id, no token needed
    kept = ReActLoop(script(), tools=[send], store=store)
    paused = await kept.run(question(image))
    assert paused.pending and len(store._blobs) == 1  # kept once, by digest
    resumed = await kept.resume(paused.run_id, decisions={"c1": Approve()})
    assert resumed.output == "sent"
    assert (await store.load(paused.run_id)).created.input_message() == question(image)


@pytest.mark.anyio
async def test_with_a_store_the_token_refers_to_the_stored_content_and_stays_small() -> None:
    image = png(MAX_TOKEN_BYTES)  # would be too large inline
    approval = ApprovalOptions(state_key=KEY)
    store = MemoryStore()
    paused = await ReActLoop(script(), tools=[send], approval=approval, store=store).run(
        question(image)
    )
    assert paused.state is not None and len(paused.state) < 10_000
    model = ScriptedModel(["sent"])
    later = ReActLoop(model, tools=[send], approval=approval, store=store)
    done = await later.resume(state=paused.state, decisions={"c1": Approve()})
    assert done.output == "sent" and model.requests[0].messages[0] == question(image)


@pytest.mark.anyio
async def test_a_by_reference_token_without_its_store_is_refused_naming_the_store() -> None:
    approval = ApprovalOptions(state_key=KEY)
    store = MemoryStore()
    loop = ReActLoop(script(), tools=[send], approval=approval, store=store)
    paused = await loop.run(question(png(1_000)))
    storeless = ReActLoop(ScriptedModel(["never"]), tools=[send], approval=approval)
    with pytest.raises(StateTokenError) as caught:
        await storeless.resume(state=paused.state, decisions={"c1": Approve()})
    assert caught.value.reason is StateTokenReason.UNREADABLE
    assert "sha256:" in str(caught.value) and "given that store" in str(caught.value)
