"""Batches of runs on one `PostgresStore`, `--concurrency` at a time, measured in a process of
their own and printed as one JSON line (scenario (k) runs it once per sample).

`reactloop` is whatever `sys.path` gives, so `PYTHONPATH=<a worktree>` measures an older store on
the same server in the same benchmark run; only the public API is used, so any version can be
measured. Each run is `--steps` steps of one cheap tool call, then the answer (`--steps` + 1
model calls); a first run, unmeasured, opens a connection and creates the schema.

`--count` measures round trips instead of time: the batch runs through a loopback relay that
counts the server's ReadyForQuery messages, one per Sync, the point where a client waits for
the server (statements pipelined together are one round trip, statements each awaited one
each), once at `--steps` and once at twice as many steps, so the difference is what a step
costs and the rest what a run costs besides its steps.
"""

from __future__ import annotations

import argparse
import socket
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import anyio
import orjson

from reactloop import ReActLoop, StopReason, tool
from reactloop.messages import ToolMessage
from reactloop.stores import PostgresStore
from reactloop.testing import FunctionModel, call

ANSWER = "done"


@tool
def ping(step: int) -> str:
    """The cheap tool every step calls."""
    return f"pong {step}"


def make_loop(steps: int, store: PostgresStore) -> ReActLoop[Any]:
    """`steps` steps of one `ping` call each, then the answer; the model answers at once."""

    def answer(request: Any) -> Any:
        done = sum(isinstance(message, ToolMessage) for message in request.messages)
        return call("ping", step=done) if done < steps else ANSWER

    return ReActLoop(FunctionModel(answer), tools=[ping], store=store, max_iterations=steps + 1)


async def one(loop: ReActLoop[Any]) -> float:
    """One run to its answer; its seconds."""
    started = time.perf_counter()
    result = await loop.run("go")
    if result.stop_reason is not StopReason.COMPLETED or result.output != ANSWER:
        raise RuntimeError(f"a benchmarked run ended {result.stop_reason}: {result.stop_detail}")
    return time.perf_counter() - started


async def batch(store: PostgresStore, steps: int, concurrency: int, each: int) -> dict[str, Any]:
    """`concurrency` drivers, each driving `each` runs one after the other."""
    loop = make_loop(steps, store)
    seconds: list[float] = []

    async def driver() -> None:
        for _ in range(each):
            seconds.append(await one(loop))

    started = time.perf_counter()
    async with anyio.create_task_group() as tasks:
        for _ in range(concurrency):
            tasks.start_soon(driver)
    wall = time.perf_counter() - started
    return {"wall": wall, "run_seconds": seconds, "steps_per_run": steps + 1}


class Turns:
    """Round trips seen by a relay: the server's ReadyForQuery messages, one per Sync a client
    sent and then waited on (a statement awaited alone, or a pipeline of them sent together)."""

    def __init__(self) -> None:
        self.count = 0
        self._lock = threading.Lock()

    def reader(self) -> Callable[[bytes], None]:
        """A parser of one connection's server-to-client bytes that counts its messages 'Z'."""
        pending = bytearray()
        started = False

        def heard(data: bytes) -> None:
            nonlocal started
            pending.extend(data)
            if not started:  # one-byte answers to SSL/GSS requests precede the first 'R'
                first = pending.find(b"R")
                del pending[: len(pending) if first < 0 else first]
                started = first >= 0
            ready = 0
            while len(pending) >= 5:
                size = 1 + int.from_bytes(pending[1:5], "big")
                if len(pending) < size:
                    break
                ready += pending[0] == ord("Z")
                del pending[:size]
            with self._lock:
                self.count += ready

        return heard


def _pump(source: socket.socket, sink: socket.socket, heard: Callable[[bytes], None]) -> None:
    with suppress(OSError):
        while data := source.recv(65536):
            heard(data)
            sink.sendall(data)
    for end in (source, sink):
        with suppress(OSError):
            end.shutdown(socket.SHUT_RDWR)
    source.close()  # the other way's pump closes the other end


def _ignore(data: bytes) -> None:
    """Client-to-server bytes are relayed, not counted."""


def _serve(listener: socket.socket, server: tuple[str, int], turns: Turns) -> None:
    while True:
        try:
            client, _ = listener.accept()
        except OSError:
            return
        upstream = socket.create_connection(server)
        for source, sink, heard in (
            (client, upstream, _ignore),
            (upstream, client, turns.reader()),
        ):
            source.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            threading.Thread(target=_pump, args=(source, sink, heard), daemon=True).start()


@contextmanager
def relayed(url: str) -> Iterator[tuple[str, Turns]]:
    """A URL reaching the server of `url` through a counting relay, and its count."""
    parts = urlsplit(url)
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    turns = Turns()
    server = (parts.hostname or "127.0.0.1", parts.port or 5432)
    threading.Thread(target=_serve, args=(listener, server, turns), daemon=True).start()
    user = "".join(parts.netloc.rpartition("@")[:2])
    address = f"{user}127.0.0.1:{listener.getsockname()[1]}"
    try:
        yield urlunsplit(parts._replace(netloc=address)), turns
    finally:
        listener.close()


async def timed(url: str, steps: int, concurrency: int, each: int) -> dict[str, Any]:
    """One measured batch."""
    store = PostgresStore(url)
    try:
        await one(make_loop(steps, store))  # connect and create the schema, unmeasured
        return await batch(store, steps, concurrency, each)
    finally:
        await store.aclose()


async def counted(url: str, steps: int, concurrency: int, each: int) -> dict[str, Any]:
    """Round trips of a batch at `steps` and at twice as many steps."""
    counts = []
    with relayed(url) as (through, turns):
        for length in (steps, 2 * steps):
            store = PostgresStore(through)
            await one(make_loop(length, store))  # connect first: not a run's cost
            before = turns.count
            await batch(store, length, concurrency, each)
            counts.append(turns.count - before)
            await store.aclose()
    runs = concurrency * each
    per_step = (counts[1] - counts[0]) / (runs * steps)
    return {"per_step": per_step, "per_run": counts[0] / runs - steps * per_step}


def main(argv: Sequence[str] | None = None) -> int:
    """Measure one batch (or count its round trips) and print the figures as one JSON line."""
    parser = argparse.ArgumentParser(prog="benchmarks/postgres_load.py", description=__doc__)
    parser.add_argument("--url", required=True)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--concurrency", type=int, default=1)
    parser.add_argument("--each", type=int, default=2, help="runs each driver drives in turn")
    parser.add_argument("--backend", default="asyncio", choices=("asyncio", "trio"))
    parser.add_argument("--count", action="store_true", help="count round trips, not time")
    args = parser.parse_args(argv)
    measure = counted if args.count else timed
    figures = anyio.run(
        measure, args.url, args.steps, args.concurrency, args.each, backend=args.backend
    )
    sys.stdout.write(orjson.dumps(figures).decode() + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
