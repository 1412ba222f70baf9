"""State tokens: a run's records sealed into a signed string come back equal; any change to the
token, another key or an unknown version is refused with a typed error; keys never show."""

from __future__ import annotations

import base64
import hashlib
import hmac
import re
import tracemalloc
import zlib
from collections.abc import Callable, Sequence
from typing import Any

import anyio
import attrs
import orjson
import pytest
from hypothesis import given, settings

from reactloop._approval._sealing import (
    ENV_VAR,
    MAX_TOKEN_BYTES,
    SigningKeys,
    seal,
    signing_keys,
    unseal,
)
from reactloop._core._approvals import Approve
from reactloop._core._records import PhaseDataSaved, Record
from reactloop._durable._stores import MemoryStore
from reactloop._errors import ConfigurationError, ContractError, ErrorCode, ReactLoopError
from reactloop._loop._loop import ReActLoop
from reactloop._stored_errors import StateTokenError, StateTokenReason
from reactloop._tools._tool import tool
from reactloop.approval import ApprovalOptions
from reactloop.testing import ScriptedModel, call, reply
from tests.helpers.strategies import (
    ByteFlip,
    CharEdit,
    JsonEdit,
    byte_flips,
    char_edits,
    examples,
    journals,
    json_edits,
)

KEY = "current-key-0123456789abcdefghijklmnop"
OLD_KEY = b"previous-key-0123456789abcdefghijklmn"
OTHER_KEY = "someone-elses-key-0123456789abcdefghij"
AT = 1_790_000_000.5
TOKEN_SHAPE = re.compile(r"rl1\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{43}")


@tool
async def search(q: str) -> str:
    """Search the web."""
    return f"Top results for {q!r}: three pages about {q}, the first from example.com."


async def _journal(steps: int) -> tuple[Record, ...]:
    """The records a store holds for a real run of `steps` tool steps (two calls in the first)."""
    store = MemoryStore()
    first = [call("search", q="prices"), call("search", q="価格 🚀")]
    later = [call("search", q=f"question {n}") for n in range(1, steps)]
    model = ScriptedModel([reply("", *first), *later, "All done."])
    loop = ReActLoop(model, tools=[search], store=store, max_iterations=steps + 1)
    result = await loop.run("Compare the prices", user_id="u1", session_id="s1")
    return (await store.load(result.run_id)).records


def journal_of(steps: int) -> tuple[Record, ...]:
    return anyio.run(_journal, steps)


@pytest.fixture(scope="module")
def records() -> tuple[Record, ...]:
    return journal_of(3)


@pytest.fixture(scope="module")
def keys() -> SigningKeys:
    made = signing_keys(KEY)
    assert made is not None
    return made


@pytest.fixture(scope="module")
def token(records: tuple[Record, ...], keys: SigningKeys) -> str:
    return seal(records, keys, issued_at=AT)


def keys_of(value: str | bytes | Sequence[str | bytes]) -> SigningKeys:
    made = signing_keys(value)
    assert made is not None
    return made


def refused(token: object, keys: SigningKeys) -> StateTokenError:
    with pytest.raises(StateTokenError) as caught:
        unseal(token, keys)
    return caught.value


def parts(token: str) -> tuple[str, str, str]:
    version, payload, signature = token.split(".")
    return version, payload, signature


def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def payload_of(token: str) -> Any:
    payload = parts(token)[1]
    return orjson.loads(zlib.decompress(base64.urlsafe_b64decode(payload + "=" * 3)))


def signed_by(key: str | bytes, version: str, payload: str) -> str:
    """A token signed the way the loop signs one, by someone holding `key`."""
    raw = key.encode() if isinstance(key, str) else key
    derived = hmac.new(raw, b"reactloop/state-token", hashlib.sha256).digest()
    signature = hmac.new(derived, f"{version}.{payload}".encode(), hashlib.sha256).digest()
    return f"{version}.{payload}.{b64(signature)}"


def pack(document: Any) -> str:
    return b64(zlib.compress(orjson.dumps(document)))


# --- round trip --------------------------------------------------------------------------------


def test_a_real_runs_records_come_back_equal(records: tuple[Record, ...], token: str) -> None:
    keys = keys_of(KEY)
    sealed = unseal(token, keys)
    assert sealed.records == records
    assert [type(record) for record in sealed.records] == [type(record) for record in records]
    assert sealed.issued_at == AT
    assert (sealed.version, sealed.key_index) == ("rl1", 0)
    assert sealed.run_id == records[0].run_id == sealed.created.run_id  # type: ignore[union-attr]


def test_a_token_is_url_safe_text(token: str) -> None:
    assert TOKEN_SHAPE.fullmatch(token)


def test_every_prefix_of_a_journal_from_its_creation_round_trips(
    records: tuple[Record, ...], keys: SigningKeys
) -> None:
    for end in range(1, len(records) + 1):
        assert unseal(seal(records[:end], keys, issued_at=AT), keys).records == records[:end]


@settings(max_examples=examples(100), deadline=None)
@given(journal=journals())
def test_any_journal_round_trips(journal: list[Record]) -> None:
    keys = keys_of(KEY)
    assert unseal(seal(journal, keys, issued_at=AT), keys).records == tuple(journal)


def test_a_50_step_runs_token_stays_under_8_kb(keys: SigningKeys) -> None:
    journal = journal_of(50)
    token = seal(journal, keys, issued_at=AT)
    assert len(token) < 8_000  # measured: 5.2 kB for 204 records (36 kB of JSON)
    assert unseal(token, keys).records == journal


# --- tampering ---------------------------------------------------------------------------------


@settings(max_examples=examples(400), deadline=None)
@given(edit=char_edits)
def test_any_edited_character_is_refused(token: str, edit: CharEdit) -> None:
    refused(edit.apply(token), keys_of(KEY))


@settings(max_examples=examples(400), deadline=None)
@given(flip=byte_flips)
def test_any_flipped_byte_is_refused(token: str, flip: ByteFlip) -> None:
    refused(flip.apply(token), keys_of(KEY))


@settings(max_examples=examples(200), deadline=None)
@given(edit=json_edits)
def test_a_changed_payload_without_the_key_is_refused_as_altered(
    token: str, edit: JsonEdit
) -> None:
    version, _, signature = parts(token)
    changed = pack(edit.apply(payload_of(token)))
    error = refused(f"{version}.{changed}.{signature}", keys_of(KEY))
    assert error.reason is StateTokenReason.BAD_SIGNATURE
    forged = refused(signed_by(OTHER_KEY, version, changed), keys_of(KEY))
    assert forged.reason is StateTokenReason.BAD_SIGNATURE


def test_each_part_of_the_run_state_is_covered_by_the_signature(token: str) -> None:
    document = payload_of(token)
    version, _, signature = parts(token)
    for index in range(len(document["records"])):
        changed = deep_copy(document)
        changed["records"][index]["~"] = 1
        error = refused(f"{version}.{pack(changed)}.{signature}", keys_of(KEY))
        assert error.reason is StateTokenReason.BAD_SIGNATURE


def deep_copy(document: Any) -> Any:
    copied: Any = orjson.loads(orjson.dumps(document))
    return copied


def test_a_token_signed_with_another_key_is_refused(records: tuple[Record, ...]) -> None:
    token = seal(records, keys_of(OTHER_KEY), issued_at=AT)
    error = refused(token, keys_of(KEY))
    assert error.reason is StateTokenReason.BAD_SIGNATURE
    assert "altered, or signed with another key" in str(error)


def test_the_signature_is_checked_before_the_payload_is_read() -> None:
    garbage = b64(b"not zlib, not json")
    error = refused(signed_by(OTHER_KEY, "rl1", garbage), keys_of(KEY))
    assert error.reason is StateTokenReason.BAD_SIGNATURE


def test_a_signature_whose_unused_bits_differ_is_refused(token: str) -> None:
    version, payload, signature = parts(token)
    last = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".index(signature[-1])
    sibling = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"[last ^ 1]
    error = refused(f"{version}.{payload}.{signature[:-1]}{sibling}", keys_of(KEY))
    assert error.reason is StateTokenReason.MALFORMED


# --- versions, payloads, garbage ---------------------------------------------------------------


def test_an_unknown_version_signed_with_the_right_key_is_refused_as_unknown(token: str) -> None:
    _, payload, _ = parts(token)
    error = refused(signed_by(KEY, "rl2", payload), keys_of(KEY))
    assert error.reason is StateTokenReason.UNKNOWN_VERSION
    assert "'rl2'" in str(error)
    assert "rl1" in str(error)


@pytest.mark.parametrize(
    ("document", "problem"),
    [
        ([], "not an object"),
        ({"schema": 1, "issued_at": AT}, "not an object"),
        ({"schema": 2, "issued_at": AT, "records": []}, "schema 2"),
        ({"schema": 1, "issued_at": "now", "records": []}, "issued_at"),
        ({"schema": 1, "issued_at": AT, "records": []}, "RunCreated"),
        ({"schema": 1, "issued_at": AT, "records": [{"type": "Nope"}]}, ""),
    ],
)
def test_a_correctly_signed_payload_that_cannot_be_read_is_refused(
    document: Any, problem: str
) -> None:
    error = refused(signed_by(KEY, "rl1", pack(document)), keys_of(KEY))
    assert error.reason is StateTokenReason.UNREADABLE
    assert problem in str(error)


def test_a_correctly_signed_payload_that_is_not_compressed_json_is_refused() -> None:
    for payload in ("A", b64(b"plain"), b64(zlib.compress(b"{not json"))):
        error = refused(signed_by(KEY, "rl1", payload), keys_of(KEY))
        assert error.reason is StateTokenReason.UNREADABLE


GARBAGE: list[object] = [
    None,
    0,
    1.5,
    True,
    b"rl1.abc.def",
    bytearray(b"x"),
    [],
    {"token": "x"},
    object(),
    "",
    ".",
    "..",
    "rl1",
    "rl1.",
    "rl1..",
    "rl1.abc",
    "rl1.abc.",
    "rl1..abc",
    "rl1.a.b.c",
    "rl1.abc.def",
    "rl1.abc=.def",
    "rl1.a b.c",
    "rl1.ab+/.cd",
    "RL1.abc.def",
    "v1.abc.def",
    "rl1.é.x",
    "\x00",
    "x" * 10_000_000,
    "rl1." + "A" * 10_000_000 + "." + "A" * 43,
]


@pytest.mark.parametrize("garbage", GARBAGE, ids=lambda value: type(value).__name__)
def test_garbage_is_refused_as_malformed_unsigned_or_too_large(garbage: object) -> None:
    error = refused(garbage, keys_of(KEY))
    if isinstance(garbage, str) and len(garbage) > MAX_TOKEN_BYTES:
        assert error.reason is StateTokenReason.TOO_LARGE
    else:
        assert error.reason in (StateTokenReason.MALFORMED, StateTokenReason.BAD_SIGNATURE)
    assert len(str(error)) < 400


def _peak_bytes(work: Callable[[], object]) -> int:
    """The most memory Python held at once while `work` ran (what it kept aside)."""
    tracemalloc.start()
    try:
        work()
    except StateTokenError:
        pass
    finally:
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    return peak


def test_a_huge_token_is_refused_by_its_size_before_anything_is_decoded() -> None:
    keys = keys_of(KEY)
    huge = "rl1." + "A" * 200_000_000 + "." + b64(bytes(32))  # 200 MB, of the token's form
    error = refused(huge, keys)
    assert error.reason is StateTokenReason.TOO_LARGE
    assert f"{len(huge)} characters" in str(error) and f"cap of {MAX_TOKEN_BYTES}" in str(error)
    assert _peak_bytes(lambda: unseal(huge, keys)) < 1_000_000  # nothing copied, split or decoded


def _bomb(inflated: int) -> str:
    """A payload of `inflated` zero bytes, zlib-compressed (a thousandth of it), in base64url."""
    packer, chunk = zlib.compressobj(9), bytes(1 << 20)
    packed = b"".join(packer.compress(chunk) for _ in range(inflated >> 20)) + packer.flush()
    return b64(packed)


def test_a_signed_zip_bomb_is_refused_before_it_inflates_fully() -> None:
    cap, inflated = 128 * 1024, 64 << 20  # the payload would inflate to 64 MB; the bound is 4 MB
    keys = keys_of(KEY)
    signed = f"rl1.{_bomb(inflated)}"
    bomb = f"{signed}.{b64(keys.sign(signed.encode()))}"
    assert len(bomb) <= cap  # small enough to pass the size check: the inflation bound refuses it
    with pytest.raises(StateTokenError) as caught:
        unseal(bomb, keys, max_bytes=cap)
    assert caught.value.reason is StateTokenReason.TOO_LARGE
    assert f"inflates past {cap * 32} bytes" in str(caught.value)
    assert _peak_bytes(lambda: unseal(bomb, keys, max_bytes=cap)) < inflated // 4


def test_a_token_over_the_cap_is_never_issued(
    records: tuple[Record, ...], keys: SigningKeys
) -> None:
    size = len(seal(records, keys, issued_at=AT))
    assert unseal(seal(records, keys, issued_at=AT, max_bytes=size), keys).records == records
    with pytest.raises(StateTokenError) as caught:
        seal(records, keys, issued_at=AT, max_bytes=size - 1)
    assert caught.value.reason is StateTokenReason.TOO_LARGE
    assert f"{size} bytes" in str(caught.value) and f"cap of {size - 1}" in str(caught.value)


LONG_REQUEST = "Delete Ann's account; tickets " + " ".join(
    str(n * 7919 % 10007) for n in range(600)
)


@pytest.mark.anyio
async def test_a_loop_refuses_a_token_over_its_max_state_token_bytes() -> None:
    @tool(requires_approval=True)
    def delete_account(user: str) -> str:
        """Delete a user's account."""
        return f"deleted {user}"

    first = ReActLoop(
        ScriptedModel([call("delete_account", user="ann")]),
        tools=[delete_account],
        approval=ApprovalOptions(state_key=KEY),
    )
    paused = await first.run(LONG_REQUEST)
    assert paused.state is not None and 1024 < len(paused.state) < MAX_TOKEN_BYTES
    model = ScriptedModel([call("delete_account", user="ann")])
    small = ReActLoop(
        model,
        tools=[delete_account],
        approval=ApprovalOptions(state_key=KEY, max_state_token_bytes=1024),
    )
    with pytest.raises(StateTokenError) as caught:
        await small.resume(state=paused.state, decisions={paused.pending[0].call_id: Approve()})
    assert caught.value.reason is StateTokenReason.TOO_LARGE
    assert f"{len(paused.state)} characters, over the cap of 1024" in str(caught.value)
    assert not model.requests  # refused before the run went on
    with pytest.raises(StateTokenError, match=r"over the cap of 1024 \(max_state_token_bytes\)"):
        await small.run(LONG_REQUEST)  # it would pause with a token it could not read back


def test_a_refused_token_is_a_reactloop_error_with_its_own_code() -> None:
    error = refused(42, keys_of(KEY))
    assert isinstance(error, ReactLoopError)
    assert error.code is ErrorCode.INVALID_STATE
    assert "got int, not a str" in str(error)


@pytest.mark.parametrize("reason", list(StateTokenReason))
def test_every_reason_names_its_rule_in_the_message(reason: StateTokenReason) -> None:
    error = StateTokenError(reason, "what was found")
    assert error.rule
    assert str(error) == f"state token refused ({reason}): {error.rule}; what was found"


# --- sealing -----------------------------------------------------------------------------------


def test_sealing_needs_the_runs_creation_record_first(records: tuple[Record, ...]) -> None:
    keys = keys_of(KEY)
    with pytest.raises(ContractError, match="RunCreated record first"):
        seal(records[1:], keys, issued_at=AT)
    with pytest.raises(ContractError, match="RunCreated record first"):
        seal((), keys, issued_at=AT)


@pytest.mark.parametrize("when", [float("nan"), float("inf")])
def test_sealing_needs_a_finite_issue_time(records: tuple[Record, ...], when: float) -> None:
    with pytest.raises(ContractError, match="issued_at"):
        seal(records, keys_of(KEY), issued_at=when)


def test_phase_data_that_is_not_json_cannot_be_sealed(records: tuple[Record, ...]) -> None:
    with pytest.raises(ContractError, match="phase data"):
        seal((records[0], PhaseDataSaved({"x": object()})), keys_of(KEY), issued_at=AT)


def test_sealing_is_deterministic(records: tuple[Record, ...], keys: SigningKeys) -> None:
    assert seal(records, keys, issued_at=AT) == seal(records, keys, issued_at=AT)
    assert seal(records, keys, issued_at=AT) != seal(records, keys, issued_at=AT + 1)


# --- keys --------------------------------------------------------------------------------------


def test_with_no_key_given_the_environment_gives_them(
    monkeypatch: pytest.MonkeyPatch, records: tuple[Record, ...]
) -> None:
    monkeypatch.delenv(ENV_VAR, raising=False)
    assert signing_keys(None) is None
    monkeypatch.setenv(ENV_VAR, "  ")
    assert signing_keys(None) is None
    monkeypatch.setenv(ENV_VAR, f" {KEY}\n")
    token = seal(records, keys_of(KEY), issued_at=AT)
    from_environment = signing_keys(None)
    assert from_environment is not None
    assert unseal(token, from_environment).key_index == 0


def test_the_environment_lists_keys_comma_separated_the_first_signing(
    monkeypatch: pytest.MonkeyPatch, records: tuple[Record, ...]
) -> None:
    monkeypatch.setenv(ENV_VAR, f"{KEY}, {OLD_KEY.decode()}")
    keys = signing_keys(None)
    assert keys is not None and keys.count == 2
    old = seal(records, keys_of(OLD_KEY), issued_at=AT)
    assert unseal(old, keys).key_index == 1
    assert unseal(seal(records, keys, issued_at=AT), keys_of(KEY)).key_index == 0


def test_rotated_keys_verify_old_tokens_and_sign_with_the_new(records: tuple[Record, ...]) -> None:
    old = seal(records, keys_of(OLD_KEY), issued_at=AT)
    rotated = keys_of([KEY, OLD_KEY])
    sealed = unseal(old, rotated)
    assert (sealed.records, sealed.key_index) == (records, 1)
    new = seal(records, rotated, issued_at=AT)
    assert unseal(new, keys_of(KEY)).key_index == 0
    assert refused(new, keys_of(OLD_KEY)).reason is StateTokenReason.BAD_SIGNATURE
    assert refused(old, keys_of(KEY)).reason is StateTokenReason.BAD_SIGNATURE


def test_a_str_key_is_its_utf8_bytes_and_built_keys_pass_through() -> None:
    keys = keys_of(KEY)
    assert keys_of(KEY.encode()) == keys == keys_of([KEY])
    assert signing_keys(keys) is keys
    assert keys_of("ключ" * 4).count == 1  # 32 bytes in UTF-8, 16 characters


SHORT_SECRET = "hunter2-short-secret"


@pytest.mark.parametrize(
    ("value", "found"),
    [
        (SHORT_SECRET, "a key of 20 bytes"),
        (SHORT_SECRET.encode(), "a key of 20 bytes"),
        ([KEY, SHORT_SECRET], "at index 1: a key of 20 bytes"),
        ([], "an empty list"),
        ((), "an empty tuple"),
        (12345678901234567890123456789012345, "an int"),
        ({KEY}, "a set"),
        ({KEY: KEY}, "a dict"),
        ([KEY, 7], "at index 1: an int"),
        ([None], "at index 0: a NoneType"),
    ],
)
def test_a_wrong_key_is_a_configuration_error_that_never_shows_it(
    value: object, found: str
) -> None:
    with pytest.raises(ConfigurationError) as caught:
        signing_keys(value)
    error = caught.value
    assert error.option == "state_key"
    assert error.rule is not None and error.rule in str(error)
    assert found in str(error)
    shown = f"{error} {error!r} {error.args} {error.value} {error.rule} {vars(error)}"
    for secret in (KEY, SHORT_SECRET, "1234567890123456789012345678901"):
        assert secret not in shown


@pytest.mark.parametrize("value", [",", f"{KEY},", f"{KEY},,{KEY}", f" ,{KEY}"])
def test_an_empty_entry_in_the_environment_is_a_configuration_error(
    monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    monkeypatch.setenv(ENV_VAR, value)
    with pytest.raises(ConfigurationError, match=f"empty entry in {ENV_VAR}") as caught:
        signing_keys(None)
    assert KEY not in str(caught.value)


def test_a_short_key_in_the_environment_is_a_configuration_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(ENV_VAR, f"{KEY},{SHORT_SECRET}")
    with pytest.raises(ConfigurationError, match=f"{ENV_VAR} entry 1: a key of 20") as caught:
        signing_keys(None)
    assert caught.value.option == "state_key"
    assert SHORT_SECRET not in str(caught.value)


def test_keys_never_show_in_reprs_or_refusals(token: str) -> None:
    keys = keys_of([KEY, OLD_KEY])
    shown = f"{keys!r} {keys} {attrs.asdict(keys)}"
    assert "not shown" in repr(attrs.asdict(keys))
    assert "2 keys" in repr(keys)
    errors = [refused(token + "x", keys), refused(signed_by(OTHER_KEY, "rl1", "abc"), keys)]
    shown += " ".join(f"{error} {error!r} {vars(error)}" for error in errors)
    for secret in (KEY, OLD_KEY.decode(), OTHER_KEY):
        assert secret not in shown
