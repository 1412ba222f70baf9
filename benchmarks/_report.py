"""The results as a table (plain or Markdown) and as JSON (benchmarks/results.json)."""

from __future__ import annotations

import os
import platform
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import Any

import attrs
import orjson
from attrs import AttrsInstance

from benchmarks._figures import Figure

HEADERS = ("", "scenario", "reactloop", "hand-written", "ratio", "target", "met")
PACKAGES = ("reactloop", "anyio", "attrs", "orjson", "trio")


def number(value: float | None) -> str:
    """A figure with about three significant digits, thousands separated."""
    if value is None:
        return "-"
    if abs(value) >= 100:
        return f"{value:,.0f}"
    if abs(value) >= 10:
        return f"{value:.1f}"
    if abs(value) >= 1:
        return f"{value:.2f}"
    return f"{value:.3g}"


def _verdict(figure: Figure) -> str:
    if figure.reactloop is None:
        return figure.note or "skipped"
    met = figure.met
    return "" if met is None else ("yes" if met else "NO")


def row(figure: Figure) -> tuple[str, ...]:
    """One table row: scenario letter, metric with unit, figures, ratio, target, verdict."""
    unit = f" ({figure.unit})" if figure.unit else ""
    ratio = figure.ratio
    return (
        figure.scenario,
        f"{figure.metric}{unit}",
        number(figure.reactloop),
        number(figure.handwritten),
        "-" if ratio is None else f"{ratio:.2f}x",
        "" if figure.target is None else figure.target.describe(figure.unit),
        _verdict(figure),
    )


def table(figures: Sequence[Figure]) -> str:
    """An aligned plain-text table."""
    rows = [HEADERS, *(row(figure) for figure in figures)]
    widths = [max(len(cells[i]) for cells in rows) for i in range(len(HEADERS))]
    lines = ["  ".join(cell.ljust(width) for cell, width in zip(cells, widths, strict=True))
             for cells in rows]  # fmt: skip
    lines.insert(1, "  ".join("-" * width for width in widths))
    return "\n".join(line.rstrip() for line in lines)


def markdown(figures: Sequence[Figure]) -> str:
    """The same table in Markdown, for the README."""
    rows = [HEADERS, tuple("---" for _ in HEADERS), *(row(figure) for figure in figures)]
    return "\n".join("| " + " | ".join(cells) + " |" for cells in rows)


def _version(package: str) -> str | None:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return None


def machine(load_before: tuple[float, float, float]) -> dict[str, Any]:
    """Where the figures were taken, and how busy the machine was (1, 5, 15-minute loads)."""
    return {
        "cpus": os.cpu_count(),
        "load_average_before": load_before,
        "load_average_after": os.getloadavg(),
        "platform": platform.platform(),
        "python": platform.python_version(),
        "implementation": platform.python_implementation(),
        "packages": {name: _version(name) for name in PACKAGES},
    }


def document(
    sizes: AttrsInstance,
    runs: Mapping[str, list[dict[str, Any]]],
    load_before: tuple[float, float, float],
) -> dict[str, Any]:
    """The JSON document: machine, sizes, and each backend's figures."""
    return {
        "generated": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": machine(load_before),
        "sizes": attrs.asdict(sizes),
        "runs": dict(runs),
    }


def write_json(path: Path, doc: Mapping[str, Any]) -> None:
    """Write the document, indented, with a final newline."""
    path.write_bytes(orjson.dumps(doc, option=orjson.OPT_INDENT_2) + b"\n")
