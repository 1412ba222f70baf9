"""Signed state tokens: a paused run's journal records sealed into one opaque string and back.

Without a store, a paused run travels through the client as a token (`rl1.<payload>.<signature>`,
base64url): the payload is the zlib-compressed JSON of the records (the store codec's layout) and
the signature an HMAC-SHA256 over the version and payload, checked before anything is decoded.
Tokens are signed, not encrypted. The first of the loop's keys signs, any of them verifies (key
rotation). See adr/0012-signed-state-tokens.md.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import math
import os
import re
import zlib
from collections.abc import Sequence
from contextlib import nullcontext
from typing import Any, TypeAlias

import orjson
from attrs import field, frozen

from reactloop._core import SCHEMA_VERSION, Record, RunCreated
from reactloop._durable import (
    blobs_apart,
    blobs_from,
    dump_json,
    missing_blob,
    structure_records,
    unstructure_records,
)
from reactloop._errors import ConfigurationError, ContractError
from reactloop._stored_errors import StateTokenError, StateTokenReason

VERSION = "rl1"
"""The token layout this module writes; `VERSIONS` are those it reads."""
VERSIONS = (VERSION,)
ENV_VAR = "REACTLOOP_STATE_KEY"
"""Where the loop finds its state keys when none are given: comma-separated, the first signs."""
MIN_KEY_BYTES = 32
MAX_TOKEN_BYTES = 1 << 20
"""The default cap on a token's length (`max_state_token_bytes`): 1 MiB, some 600 times a
10-step run's token (1.6 kB); a bigger one is refused before anything in it is decoded."""
MIN_TOKEN_BYTES = 1024
"""The least `max_state_token_bytes` may be (a one-step run's token is some 700 bytes)."""
INFLATION = 32
"""How many times its token's length a payload may inflate to (JSON compresses 3-10 times)."""
OPTION = "state_key"
_KEY_RULE = (
    f"a key of at least {MIN_KEY_BYTES} bytes (str or bytes; e.g. secrets.token_urlsafe(32)), "
    "or a non-empty list of them of which the first signs and any verifies"
)
_CONTEXT = b"reactloop/state-token"  # each key is used through a key derived for tokens alone
_SIGNATURE_BYTES = hashlib.sha256().digest_size
_BASE64URL = re.compile(r"[A-Za-z0-9_-]+")
_LOOKS_VERSIONED = re.compile(r"rl[0-9]{1,6}")
_PROBLEM_CHARACTERS = 200


class _Key:
    """One key, as used for tokens alone (derived from the given key with a fixed context); its
    repr and `attrs.asdict` never show it, and it compares in constant time."""

    __slots__ = ("_mac", "_secret")

    def __init__(self, key: bytes) -> None:
        self._secret = hmac.new(key, _CONTEXT, hashlib.sha256).digest()
        self._mac = hmac.new(self._secret, digestmod=hashlib.sha256)

    def __repr__(self) -> str:
        return "<key not shown>"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, _Key):
            return NotImplemented
        return hmac.compare_digest(self._secret, other._secret)

    def __hash__(self) -> int:
        return hash(self._secret)

    def signature(self, message: bytes) -> bytes:
        """The HMAC-SHA256 of `message` under this key."""
        mac = self._mac.copy()
        mac.update(message)
        return mac.digest()


@frozen(repr=False)
class SigningKeys:
    """The keys that sign and verify state tokens: the first signs, every one verifies.

    Built by `signing_keys`, which checks them; it never shows them (its repr gives how many).
    """

    _keys: tuple[_Key, ...] = field(alias="keys")

    def __repr__(self) -> str:
        count = len(self._keys)
        return f"SigningKeys(<{count} key{'s' if count > 1 else ''}, not shown>)"

    @classmethod
    def of(cls, keys: Sequence[bytes]) -> SigningKeys:
        """The signing keys for these raw keys (already checked), in order."""
        return cls(tuple(_Key(key) for key in keys))

    def sign(self, message: bytes) -> bytes:
        """The signature of `message` with the first (current) key."""
        return self._keys[0].signature(message)

    def verifying_key(self, message: bytes, signature: bytes) -> int | None:
        """The index of the first key that made `signature` of `message`; None when none did.
        Every key is tried, each compared in constant time."""
        found = None
        for index, key in enumerate(self._keys):
            if hmac.compare_digest(key.signature(message), signature) and found is None:
                found = index
        return found

    @property
    def count(self) -> int:
        """How many keys verify (the first of them signs)."""
        return len(self._keys)


def _key_error(rule: str, found: str) -> ConfigurationError:
    """The error for a wrong key: names the option and the rule, says what was found but never
    the key."""
    message = f"{OPTION} must be {rule}; got {found} (keys are never shown)"
    return ConfigurationError(message, option=OPTION, value=found, rule=rule)


def _one_key(value: object, where: str) -> bytes:
    if isinstance(value, str):
        key = value.encode("utf-8", "surrogatepass")
    elif isinstance(value, bytes | bytearray):
        key = bytes(value)
    else:
        raise _key_error(_KEY_RULE, f"{where}{_a(type(value).__name__)}")
    if len(key) < MIN_KEY_BYTES:
        rule = f"at least {MIN_KEY_BYTES} bytes long (a random key, e.g. secrets.token_urlsafe(32))"
        raise _key_error(rule, f"{where}a key of {len(key)} bytes")
    return key


def _a(noun: str) -> str:
    """The noun with its indefinite article ("an int", "a str")."""
    return f"{'an' if noun[:1].lower() in 'aeiou' else 'a'} {noun}"


def _keys_given(value: object) -> list[bytes]:
    if isinstance(value, str | bytes | bytearray):
        return [_one_key(value, "")]
    if not isinstance(value, Sequence):
        raise _key_error(_KEY_RULE, _a(type(value).__name__))
    if not value:
        raise _key_error(_KEY_RULE, f"an empty {type(value).__name__}")
    return [_one_key(key, f"at index {index}: ") for index, key in enumerate(value)]


def _keys_from_environment(text: str) -> list[bytes]:
    entries = [entry.strip() for entry in text.split(",")]
    if not all(entries):
        rule = f"{_KEY_RULE}; in {ENV_VAR}, comma-separated keys with no empty entry"
        raise _key_error(rule, f"an empty entry in {ENV_VAR}")
    where = f"{ENV_VAR} entry "
    return [_one_key(entry, f"{where}{index}: ") for index, entry in enumerate(entries)]


StateKey: TypeAlias = str | bytes | Sequence[str | bytes] | SigningKeys | None
"""What `state_key=` takes: one key, keys (the first signs, all verify), or None (the env var)."""


def signing_keys(value: StateKey | object) -> SigningKeys | None:
    """The loop's state keys: those given (one key, or a list whose first signs and whose others
    still verify), else those of the `REACTLOOP_STATE_KEY` environment variable (comma-separated,
    blanks around each stripped), else None. A str key counts as its UTF-8 bytes.

    A key shorter than 32 bytes, an empty list or a wrong type is a `ConfigurationError` naming
    `state_key` and the rule; it never quotes a key.
    """
    if isinstance(value, SigningKeys):
        return value
    if value is not None:
        return SigningKeys.of(_keys_given(value))
    text = os.environ.get(ENV_VAR, "")
    return SigningKeys.of(_keys_from_environment(text)) if text.strip() else None


@frozen
class Sealed:
    """What a verified state token holds: the paused run's records (its `RunCreated` first), when
    the token was issued (epoch seconds, the issuer's clock), its version, and which key verified
    it (`key_index` 0 is the current key; more means an older one, so re-seal with the current)."""

    records: tuple[Record, ...]
    issued_at: float
    version: str = VERSION
    key_index: int = 0

    @property
    def created(self) -> RunCreated:
        """The run's first record: its input, instructions, tools and id."""
        first = self.records[0]
        assert isinstance(first, RunCreated)
        return first

    @property
    def run_id(self) -> str:
        """The id of the paused run."""
        return self.created.run_id


def _text(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _too_large(detail: str) -> StateTokenError:
    return StateTokenError(StateTokenReason.TOO_LARGE, detail)


def seal(
    records: Sequence[Record],
    keys: SigningKeys,
    *,
    issued_at: float,
    max_bytes: int = MAX_TOKEN_BYTES,
    by_reference: bool = False,
) -> str:
    """The records as a signed token, `rl1.<payload>.<signature>` (base64url, no padding).

    The records must start with the run's `RunCreated`; phase data that is not JSON is a
    `ContractError`, as in a store. Content parts travel inline (base64), or, `by_reference` (a
    run kept in a store, which the token is checked against), as their digests (adr/0028). A
    token `unseal` would refuse as too large (over `max_bytes`, or inflating past
    `INFLATION` times that) is never issued: `StateTokenError` (`too_large`), whose message says
    a store (`store=...`) keeps such runs.
    """
    if not records or not isinstance(records[0], RunCreated):
        rule = "a state token seals a run's records, its RunCreated record first"
        raise ContractError("seal", rule, records[:1])
    if not math.isfinite(issued_at):
        raise ContractError("seal", "issued_at is a finite time in epoch seconds", issued_at)
    with blobs_apart() if by_reference else nullcontext():
        values = unstructure_records(records)
    document = {"schema": SCHEMA_VERSION, "issued_at": float(issued_at), "records": values}
    text = dump_json(document)
    signed = f"{VERSION}.{_text(zlib.compress(text))}"
    token = f"{signed}.{_text(keys.sign(signed.encode('ascii')))}"
    if len(token) > max_bytes or len(text) > max_bytes * INFLATION:
        raise _too_large(
            f"this run's token would be {len(token)} bytes ({len(text)} inflated), over the cap of"
            f" {max_bytes} (max_state_token_bytes): a token carries the run's images, documents"
            " and audio inline, so keep such runs in a store (store=SqliteStore(...) or a URL,"
            " which keeps each content once), or raise the cap"
        )
    return token


def _malformed(detail: str) -> StateTokenError:
    return StateTokenError(StateTokenReason.MALFORMED, detail)


def _base64url(part: str, what: str) -> str:
    if _BASE64URL.fullmatch(part) is None:
        raise _malformed(f"its {what} is not base64url text")
    return part


def _decoded(part: str, what: str) -> bytes:
    """The bytes of one base64url part; only the canonical text of those bytes is accepted (so
    that no two texts stand for one token: a signature's unused low bits cannot vary)."""
    try:
        data = base64.urlsafe_b64decode(_base64url(part, what) + "=" * (-len(part) % 4))
    except (binascii.Error, ValueError):
        raise _malformed(f"its {what} is not base64url text") from None
    if _text(data) != part:
        raise _malformed(f"its {what} is not base64url text as issued")
    return data


def _split(token: object, max_bytes: int) -> tuple[str, str, bytes]:
    """The token's signed text, payload text and signature; checks the size (first, before
    anything is copied or decoded), the shape and the version."""
    if not isinstance(token, str):
        raise _malformed(f"got {type(token).__name__}, not a str")
    if len(token) > max_bytes:
        raise _too_large(f"got {len(token)} characters, over the cap of {max_bytes}")
    version, dot, rest = token.partition(".")
    if not dot:
        raise _malformed(f"got a str of {len(token)} characters with no '.'")
    if version not in VERSIONS:
        if _LOOKS_VERSIONED.fullmatch(version) is None:
            raise _malformed("it does not start with a reactloop token version such as 'rl1.'")
        known = ", ".join(VERSIONS)
        detail = f"its version is {version!r}; this reactloop reads {known}"
        raise StateTokenError(StateTokenReason.UNKNOWN_VERSION, detail)
    payload, dot, signature = rest.partition(".")
    if not dot:
        raise _malformed(f"a {version} token has 3 '.'-separated parts")
    signature_bytes = _decoded(signature, "signature")
    if len(signature_bytes) != _SIGNATURE_BYTES:
        raise _malformed(f"its signature is not {_SIGNATURE_BYTES} bytes")
    _base64url(payload, "payload")
    return f"{version}.{payload}", payload, signature_bytes


def _inflated(data: bytes, limit: int) -> bytes:
    """`data` decompressed, never to more than `limit` bytes: a payload that would inflate past
    it (a zip bomb) is refused as soon as the bound is reached."""
    inflater = zlib.decompressobj()
    text = inflater.decompress(data, limit)
    if inflater.unconsumed_tail or (not inflater.eof and inflater.decompress(b"", 1)):
        raise _too_large(f"its payload inflates past {limit} bytes")
    if not inflater.eof:
        raise zlib.error("the compressed payload is incomplete")
    return text


def _document(payload: str, limit: int) -> tuple[list[Any], float]:
    """The record values and issue time of a verified payload; anything unreadable raises."""
    padded = payload + "=" * (-len(payload) % 4)
    value: Any = orjson.loads(_inflated(base64.urlsafe_b64decode(padded), limit))
    if not isinstance(value, dict) or not isinstance(value.get("records"), list):
        raise TypeError("the payload is not an object with a list of records")
    schema, issued_at = value.get("schema"), value.get("issued_at")
    if not isinstance(schema, int) or schema > SCHEMA_VERSION:
        newest = SCHEMA_VERSION
        raise ValueError(f"its records are of schema {schema!r}; this reactloop reads <= {newest}")
    if not isinstance(issued_at, float):
        raise TypeError(f"issued_at is {type(issued_at).__name__}, not a float")
    records: list[Any] = value["records"]
    first = records[0] if records else None
    if not isinstance(first, dict) or not isinstance(first.get("run_id"), str):
        raise ValueError("its records do not start with the run's RunCreated record")
    return records, issued_at


def _records(values: list[Any]) -> tuple[Record, ...]:
    """The records of a token's values; parts kept by reference cannot be read without their
    run's store."""
    try:
        with blobs_from({}):
            records = structure_records(values)
    except Exception as exc:
        missing = missing_blob(exc)
        if missing is None:
            raise
        detail = (
            f"it refers to content kept in its run's store ({missing.digest}): resume it with a"
            " loop given that store"
        )
        raise StateTokenError(StateTokenReason.UNREADABLE, detail) from exc
    if not isinstance(records[0], RunCreated):
        raise ValueError("its records do not start with the run's RunCreated record")
    return records


@frozen
class Opened:
    """A verified token's record values, not yet read as records: enough to find its run in a
    store and compare it with the stored run (whose content a by-reference token lacks)."""

    values: list[Any] = field(eq=False)
    issued_at: float
    key_index: int

    @property
    def run_id(self) -> str:
        """The id of the paused run."""
        run_id: str = self.values[0]["run_id"]
        return run_id

    def matches(self, records: Sequence[Record]) -> bool:
        """True when `records` (a stored run) are the records this token sealed. A token of a
        run in a store is sealed by reference (`with_state`), and a run without parts reads the
        same either way, so one comparison by reference decides."""
        with blobs_apart():
            stored = orjson.loads(dump_json(unstructure_records(records)))
        return bool(stored == self.values)


def open_token(token: object, keys: SigningKeys, *, max_bytes: int = MAX_TOKEN_BYTES) -> Opened:
    """A token's record values, once its size, shape, version and signature are checked (in
    that order, nothing decoded before the signature matches, nothing longer than `max_bytes`
    even split); any failure is a `StateTokenError` whose `reason` says which check failed."""
    signed, payload, signature = _split(token, max_bytes)
    key_index = keys.verifying_key(signed.encode("ascii"), signature)
    if key_index is None:
        detail = "the signature does not match: the token was altered, or signed with another key"
        raise StateTokenError(StateTokenReason.BAD_SIGNATURE, detail)
    try:
        values, issued_at = _document(payload, max_bytes * INFLATION)
    except StateTokenError:
        raise
    except Exception as exc:
        raise _unreadable(exc) from exc
    return Opened(values, issued_at, key_index)


def _unreadable(exc: Exception) -> StateTokenError:
    problem = str(exc)[:_PROBLEM_CHARACTERS]
    detail = f"its payload cannot be read: {type(exc).__name__}: {problem}"
    return StateTokenError(StateTokenReason.UNREADABLE, detail)


def unseal(token: object, keys: SigningKeys, *, max_bytes: int = MAX_TOKEN_BYTES) -> Sealed:
    """The records a token sealed, once it is verified (`open_token`); any failure is a
    `StateTokenError` whose `reason` says which check failed."""
    opened = open_token(token, keys, max_bytes=max_bytes)
    try:
        records = _records(opened.values)
    except StateTokenError:
        raise
    except Exception as exc:
        raise _unreadable(exc) from exc
    return Sealed(records, opened.issued_at, VERSION, opened.key_index)
