"""A session's runs read a page at a time (`SessionTurnsStore.session_turns`, adr/0034).

A new turn reads the session newest first and stops once its context window is full, so the
cost of a turn does not grow with the session's age. The SQL here uses each store's index on
(session id, position): a page is one range scan from the newest end, whatever the session's
length. Decoding a journal is most of a page's cost, and the next turn reads nearly the same
runs, so each store keeps the turns it decoded (`TurnCache`) and reads again only the journals
that changed since.
"""

from __future__ import annotations

import sqlite3
import weakref
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeAlias

from reactloop._core import SessionTurn
from reactloop._durable._codec import decode
from reactloop._durable._replay import replay
from reactloop._durable._sqlite_blobs import run_journal

if TYPE_CHECKING:
    import psycopg

_LAST = 9223372036854775807  # the largest position: "before no run" reads to the newest
CACHED_TURNS = 1024  # decoded turns a store keeps (a few KB each)

Stamp: TypeAlias = tuple[int, int]
"""A run's journal as of one read: the run's position and its last record's number. A journal
only grows, and a run deleted and created again gets a new position, so an equal stamp means
the same records."""
Journal: TypeAlias = tuple[list[bytes], dict[str, bytes]]  # record bodies, and their blobs
Known = Callable[[str, Stamp], SessionTurn | None]  # a run's turn decoded at that stamp
Found = SessionTurn | Journal  # a run's turn decoded before, or its journal to decode


class TurnCache:
    """Session turns decoded before, by run id, with the stamp of the journal they came from;
    the least recently used go first once `size` are kept."""

    def __init__(self, size: int = CACHED_TURNS) -> None:
        self.size = size
        self._turns: dict[str, tuple[Stamp, SessionTurn]] = {}

    def cached(self, run_id: str, stamp: Stamp) -> SessionTurn | None:
        """The run's turn if it was decoded from the journal as of `stamp` (called from a worker
        thread: one dict lookup; the turn is held from then on, even if evicted meanwhile)."""
        kept = self._turns.get(run_id)
        return kept[1] if kept is not None and kept[0] == stamp else None

    def turn(self, run_id: str, stamp: Stamp, found: Found) -> SessionTurn:
        """The run's turn: `found` if it was cached (now the most recently used), else decoded
        from the journal `found` and kept."""
        kept = self._turns.pop(run_id, None)
        if isinstance(found, SessionTurn):
            if kept is not None:
                self._turns[run_id] = kept
            return found
        made = turn_of(*found)
        self._turns[run_id] = (stamp, made)
        while len(self._turns) > self.size:
            del self._turns[next(iter(self._turns))]
        return made


_CACHES: weakref.WeakKeyDictionary[object, TurnCache] = weakref.WeakKeyDictionary()


def cache_of(store: object) -> TurnCache:
    """The store object's cache of decoded turns (made on first use, gone with the store)."""
    cache = _CACHES.get(store)
    if cache is None:
        cache = _CACHES[store] = TurnCache()
    return cache


def turn_of(bodies: Sequence[bytes], blobs: dict[str, bytes]) -> SessionTurn:
    """One run's journal read as a session turn: its messages and "always" decisions."""
    replayed = replay([decode(body, blobs) for body in bodies])
    stored = replayed.stored
    return SessionTurn(stored.run_id, stored.status, stored.messages, replayed.session_wide)


def _page_order(oldest: bool) -> str:
    return "ASC" if oldest else "DESC"


def sqlite_turns(
    connection: sqlite3.Connection,
    page: tuple[str, str | None, int, bool],
    known: Known,
) -> list[tuple[str, Stamp, Found]]:
    """One page of a session's runs (`page`: session id, `before`, limit, oldest first), in page
    order: each run's id, stamp, and the turn `known` decoded at that stamp, else its journal."""
    session_id, before, limit, oldest = page
    rows = connection.execute(
        "SELECT run_id, position, (SELECT MAX(seq) FROM records AS r WHERE r.run_id = runs.run_id)"
        " FROM runs WHERE session_id = ? AND position < COALESCE("
        f"(SELECT position FROM runs WHERE run_id = ?), {_LAST})"
        f" ORDER BY position {_page_order(oldest)} LIMIT ?",
        (session_id, before, limit),
    ).fetchall()
    read: list[tuple[str, Stamp, Found]] = []
    for run_id, position, last in rows:
        stamp = (position, last or 0)
        found = known(run_id, stamp) or run_journal(connection, run_id)
        if isinstance(found, SessionTurn) or found[0]:  # no records: deleted since the page
            read.append((run_id, stamp, found))
    return read


def postgres_turns(
    connection: psycopg.Connection[Any],
    keys: tuple[bytes, bytes | None],
    page: tuple[int, bool],
    known: Known,
) -> list[tuple[str, Stamp, Found]]:
    """One page of a session's runs (`keys`: the session's and `before`'s, as stored; `page`:
    limit, oldest first), as `sqlite_turns` gives it: one round trip for the page, and when a
    journal changed, one for the journals and one for their blobs."""
    limit, oldest = page
    rows = connection.execute(
        "SELECT run_id, position, (SELECT max(seq) FROM reactloop_records AS r"
        " WHERE r.run_id = p.run_id) FROM reactloop_runs AS p WHERE session_id = %s AND position"
        f" < coalesce((SELECT position FROM reactloop_runs WHERE run_id = %s), {_LAST})"
        f" ORDER BY position {_page_order(oldest)} LIMIT %s",
        (*keys, limit),
    ).fetchall()
    stamped = [(bytes(key).decode("utf-8", "surrogatepass"), (pos, last or 0), bytes(key))
               for key, pos, last in rows]  # fmt: skip
    cached = {key: known(run_id, stamp) for run_id, stamp, key in stamped}
    wanted = [key for key, turn in cached.items() if turn is None]
    journals = _postgres_journals(connection, wanted) if wanted else {}
    return [
        (run_id, stamp, found)
        for run_id, stamp, key in stamped
        if (found := cached[key] or journals.get(key))  # None: deleted since the page was read
    ]


def _postgres_journals(
    connection: psycopg.Connection[Any], keys: list[bytes]
) -> dict[bytes, Journal]:
    """The journals of the runs `keys`, each with the blobs the page's runs refer to."""
    rows = connection.execute(
        "SELECT run_id, body FROM reactloop_records WHERE run_id = ANY(%s) ORDER BY run_id, seq",
        (keys,),
    ).fetchall()
    grouped: dict[bytes, list[bytes]] = {}
    for key, body in rows:
        grouped.setdefault(bytes(key), []).append(bytes(body))
    found = connection.execute(
        "SELECT DISTINCT b.digest, b.data FROM reactloop_run_blobs AS r"
        " JOIN reactloop_blobs AS b ON b.digest = r.digest WHERE r.run_id = ANY(%s)",
        (keys,),
    ).fetchall()
    blobs = {digest: bytes(data) for digest, data in found}
    return {key: (bodies, blobs) for key, bodies in grouped.items()}
