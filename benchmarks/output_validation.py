"""`python -m benchmarks.output_validation`: what checking one structured output costs.

The output is a dataclass of 50 fields (strings, integers, numbers, booleans, Literals, lists of
strings, optional fields with defaults, a nested object). Measured per output, in microseconds
(median of `--repeats` batches of `--number` outputs each):
- convert: `OutputSpec.convert` of the already parsed JSON (validation and building the class);
- parse + convert: `OutputSpec.parse` of the JSON text (orjson, then the above);
- strict answer: `convert` of the answer a strict provider sends (optional fields as null);
- raw schema: the same schema given as a raw JSON schema (validated, the parsed JSON kept).
"""

from __future__ import annotations

import argparse
import dataclasses
import time
from collections.abc import Callable, Sequence
from typing import Any, Literal

import orjson

from benchmarks._measure import median
from reactloop._output._schema import OutputSpec


@dataclasses.dataclass
class Address:
    """The nested object."""

    city: str
    zip: str | None = None


_KINDS: list[tuple[type[Any] | Any, Any, Any]] = [
    (str, "text value", dataclasses.MISSING),
    (int, 42, dataclasses.MISSING),
    (float, 3.5, dataclasses.MISSING),
    (bool, True, dataclasses.MISSING),
    (Literal["low", "mid", "high"], "mid", dataclasses.MISSING),
    (list[str], ["a", "b", "c"], dataclasses.MISSING),
    (int | None, None, None),
    (str, "kept", "default"),
]


def wide_class(fields: int = 50) -> tuple[type[Any], dict[str, Any]]:
    """A dataclass of `fields` fields (the last a nested `Address`) and a valid JSON value."""
    spec: list[tuple[str, Any, Any]] = []
    value: dict[str, Any] = {}
    for index in range(fields - 1):
        annotation, example, default = _KINDS[index % len(_KINDS)]
        name = f"f{index:02d}"
        field = (
            dataclasses.field()
            if default is dataclasses.MISSING
            else dataclasses.field(default=default)
        )
        spec.append((name, annotation, field))
        value[name] = example
    spec.sort(key=lambda item: item[2].default is not dataclasses.MISSING)
    spec.append(("address", Address | None, dataclasses.field(default=None)))
    value["address"] = {"city": "Lyon", "zip": "69001"}
    return dataclasses.make_dataclass("Wide", spec), value


def _strict_form(value: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    """The value with every optional field present, as null when left at its default."""
    optional = set(schema["properties"]) - set(schema["required"])
    return {name: (None if name in optional else v) for name, v in value.items()}


def _per_output(work: Callable[[], object], number: int, repeats: int) -> float:
    samples = []
    for _ in range(repeats):
        started = time.perf_counter()
        for _ in range(number):
            work()
        samples.append((time.perf_counter() - started) / number)
    return median(samples) * 1e6


def measure(fields: int = 50, number: int = 200, repeats: int = 15) -> dict[str, float]:
    """Median microseconds per output of each way of checking it."""
    cls, value = wide_class(fields)
    spec = OutputSpec.of(cls)
    raw = OutputSpec.of(spec.schema)
    text = orjson.dumps(value)
    strict = _strict_form(value, spec.schema)
    assert spec.convert(value) == spec.parse(text)
    assert raw.convert(value) == value
    return {
        "convert": _per_output(lambda: spec.convert(value), number, repeats),
        "parse + convert": _per_output(lambda: spec.parse(text), number, repeats),
        "strict answer": _per_output(lambda: spec.convert(strict), number, repeats),
        "raw schema": _per_output(lambda: raw.convert(value), number, repeats),
    }


def main(argv: Sequence[str] | None = None) -> int:
    """Print the figures."""
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.output_validation", description=__doc__
    )
    parser.add_argument("--fields", type=int, default=50)
    parser.add_argument("--number", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=15)
    args = parser.parse_args(argv)
    for name, micros in measure(args.fields, args.number, args.repeats).items():
        print(f"{args.fields} fields  {name:<16} {micros:8.1f} us/output")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
