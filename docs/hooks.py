"""mkdocs hooks for the reactloop site (named in mkdocs.yml; not a page of the site).

`<!-- adr-list -->` on a page becomes a list of every decision record in adr/ (docs/adr links
to it), titled by each record's first heading, so a new ADR appears without editing the page.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

MARKER = "<!-- adr-list -->"
ADR = Path(__file__).resolve().parents[1] / "adr"


def on_page_markdown(markdown: str, page: Any, **_: Any) -> str:
    """Expand the ADR list marker; links are relative to the page (design.md sits beside adr/)."""
    if MARKER not in markdown:
        return markdown
    folder = Path(page.file.src_uri).parent
    depth = len(folder.parts)
    prefix = "../" * depth + "adr/"
    return markdown.replace(MARKER, "\n".join(_entries(prefix)))


def _entries(prefix: str) -> list[str]:
    entries = []
    for path in sorted(ADR.glob("[0-9]*.md")):
        lines = path.read_text(encoding="utf-8").splitlines()
        title = next((line.lstrip("# ").strip() for line in lines if line.startswith("# ")), "")
        entries.append(f"- [{title or path.stem}]({prefix}{path.name})")
    return entries
