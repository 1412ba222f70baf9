"""Durable runs: the journal a run writes, replaying it, the record codec, the stores
(memory, SQLite, PostgreSQL), their leases and fencing. Published by `reactloop.stores`.

What other packages may use is imported here; the rest is private to the package."""

from reactloop._durable._codec import (
    dump_json,
    keep_call_ids,
    keep_content_parts,
    keep_costs,
    keep_message_layout,
    keep_sub_runs_apart,
    structure_records,
    unstructure_records,
    value_json,
)
from reactloop._durable._journal import NULL_JOURNAL, Journal, NullJournal
from reactloop._durable._lease import acquire, leased, leases, let_go, release
from reactloop._durable._leases import StoreTimeouts
from reactloop._durable._parts import blobs_apart, blobs_from, digest_of, missing_blob
from reactloop._durable._postgres import PostgresStore
from reactloop._durable._replay import Replayed, replay, resume_state
from reactloop._durable._stores import MemoryStore, SqliteStore, Store, from_url, store_from_url

__all__ = [
    "NULL_JOURNAL",
    "Journal",
    "MemoryStore",
    "NullJournal",
    "PostgresStore",
    "Replayed",
    "SqliteStore",
    "Store",
    "StoreTimeouts",
    "acquire",
    "blobs_apart",
    "blobs_from",
    "digest_of",
    "dump_json",
    "from_url",
    "keep_call_ids",
    "keep_content_parts",
    "keep_costs",
    "keep_message_layout",
    "keep_sub_runs_apart",
    "leased",
    "leases",
    "let_go",
    "missing_blob",
    "release",
    "replay",
    "resume_state",
    "store_from_url",
    "structure_records",
    "unstructure_records",
    "value_json",
]
