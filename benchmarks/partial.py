"""`python -m benchmarks.partial`: what parsing a streamed structured answer costs per delta.

A 10 KB answer (an object holding a list of records: strings with escapes, numbers, booleans,
nested objects) is fed to `PartialJson` in about 1,000 deltas of ~10 characters, and in deltas
of one character; a 50-field object is fed in ~10-character deltas, per answer. Figures are
medians over the repeats, in microseconds (target: under 20 us per delta for the 10 KB answer).
When the `jiter` package is installed, its partial mode (which re-parses the whole text so far
at every delta) is measured alongside, as the library the choice was weighed against.
"""

from __future__ import annotations

import argparse
import importlib
import time
from collections.abc import Callable, Sequence

import orjson

from benchmarks._measure import median
from reactloop._output._partial import PartialJson

Parse = Callable[[Sequence[str]], object]


def record(n: int) -> dict[str, object]:
    """One record of the answer: a bit of every JSON kind."""
    return {
        "id": n,
        "name": f"Item {n} \u00e9\u00e8 \u201cquoted\u201d",
        "price": round(n * 1.37, 2),
        "ratio": -n * 1.5e-3,
        "in_stock": n % 2 == 0,
        "tags": ["alpha", "beta", "gamma"][: n % 3 + 1],
        "note": None if n % 4 else 'line one\nline "two" \\ end',
        "dims": {"w": n, "h": n * 2, "unit": "cm"},
    }


def answer(size: int) -> str:
    """A JSON answer of about `size` characters."""
    records: list[dict[str, object]] = []
    text = ""
    while len(text) < size:
        records.append(record(len(records)))
        text = orjson.dumps({"title": "Inventory", "items": records}).decode()
    return text


def fields(count: int) -> str:
    """An object of `count` fields, as a model answers a form: strings, numbers, flags."""
    kinds: list[object] = ["some text value", 12345, 3.25, True, None]
    return orjson.dumps({f"field_{n}": kinds[n % len(kinds)] for n in range(count)}).decode()


def deltas(text: str, width: int) -> list[str]:
    """`text` in pieces of `width` characters."""
    return [text[i : i + width] for i in range(0, len(text), width)]


def ours(growing_strings: bool) -> Parse:
    """Feed every delta to one `PartialJson`, then finish."""

    def parse(pieces: Sequence[str]) -> object:
        parser = PartialJson(growing_strings=growing_strings)
        for piece in pieces:
            parser.feed(piece)
        return parser.finish()

    return parse


def jiter_contender() -> Parse | None:
    """jiter's partial mode on the text so far at every delta (None when not installed)."""
    try:
        jiter = importlib.import_module("jiter")
    except ImportError:
        return None

    def parse(pieces: Sequence[str]) -> object:
        text = b""
        value: object = None
        for piece in pieces:
            text += piece.encode()
            value = jiter.from_json(text, partial_mode="trailing-strings")
        return value

    return parse


def contenders() -> dict[str, Parse]:
    """The parsers measured: ours in both modes, and jiter when installed."""
    found = {"PartialJson": ours(False), "PartialJson(growing_strings)": ours(True)}
    theirs = jiter_contender()
    if theirs is not None:
        found["jiter partial_mode (re-parse)"] = theirs
    return found


def timed(parse: Parse, pieces: Sequence[str], repeats: int) -> float:
    """Median seconds of one parse of all `pieces`."""
    samples = []
    for _ in range(repeats):
        started = time.perf_counter()
        parse(pieces)
        samples.append(time.perf_counter() - started)
    return median(samples)


def measure(size: int, width: int, repeats: int) -> dict[str, float]:
    """Median microseconds per delta of each contender on a `size`-character answer."""
    pieces = deltas(answer(size), width)
    return {
        name: timed(parse, pieces, repeats) / len(pieces) * 1e6
        for name, parse in contenders().items()
    }


def measure_fields(count: int, width: int, repeats: int) -> dict[str, float]:
    """Median microseconds per answer of each contender on a `count`-field object."""
    pieces = deltas(fields(count), width)
    return {name: timed(parse, pieces, repeats) * 1e6 for name, parse in contenders().items()}


def main(argv: Sequence[str] | None = None) -> int:
    """Print the figures."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.partial", description=__doc__)
    parser.add_argument("--size", type=int, default=10_000, help="answer size in characters")
    parser.add_argument("--repeats", type=int, default=30)
    args = parser.parse_args(argv)
    text = answer(args.size)
    width = max(1, len(text) // 1000)
    print(f"{len(text)} characters answer, {len(deltas(text, width))} deltas of {width}")
    for name, value in measure(args.size, width, args.repeats).items():
        print(f"  {name:<32} {value:8.2f} us/delta")
    print(f"{len(text)} characters answer, 1-character deltas")
    for name, value in measure(args.size, 1, max(3, args.repeats // 10)).items():
        print(f"  {name:<32} {value:8.2f} us/delta")
    print(f"50-field object ({len(fields(50))} characters), deltas of 10")
    for name, value in measure_fields(50, 10, args.repeats).items():
        print(f"  {name:<32} {value:8.1f} us/answer")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
