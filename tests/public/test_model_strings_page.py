"""docs/providers.md's table of model strings names every prefix `model_from_string` takes, and
each row's string, with its variables set, builds the provider the row names."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from reactloop._providers._registry import AZURE_FORMS, PROVIDERS
from reactloop.providers import model_from_string

PAGE = Path(__file__).resolve().parents[2] / "docs" / "providers.md"
ROW = re.compile(r"^\| `(?P<prefix>[a-z-]+):(?P<rest>[^`]*)`(?P<also>[^|]*)\| (?P<what>[^|]+)\|")
ENVIRONMENT = {
    "OPENAI_API_KEY": "sk",
    "ANTHROPIC_API_KEY": "sk",
    "GEMINI_API_KEY": "AIza",
    "AZURE_OPENAI_ENDPOINT": "https://r.openai.azure.com",
    "AZURE_OPENAI_API_KEY": "k",
    "OPENROUTER_API_KEY": "k",
    "GROQ_API_KEY": "k",
    "DEEPSEEK_API_KEY": "k",
    "CEREBRAS_API_KEY": "k",
}


def _rows() -> dict[str, re.Match[str]]:
    """The first table's rows by their model string's prefix (`(or `gemini:`)` counts too)."""
    rows: dict[str, re.Match[str]] = {}
    for line in PAGE.read_text(encoding="utf-8").split("\n\n## ")[0].splitlines():
        if (match := ROW.match(line)) is not None:
            rows[match["prefix"]] = match
            for also in re.findall(r"`([a-z-]+):`", match["also"]):
                rows[also] = match
    return rows


@pytest.mark.parametrize("prefix", [*PROVIDERS, *AZURE_FORMS])
def test_every_prefix_has_its_row(prefix: str) -> None:
    assert prefix in _rows()


@pytest.mark.parametrize("prefix", [*PROVIDERS, *AZURE_FORMS])
def test_each_rows_string_builds_the_provider_it_names(
    prefix: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, value in ENVIRONMENT.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("OPENAI_API_VERSION", raising=False)
    row = _rows()[prefix]
    rest = row["rest"].replace("BASE_URL", "http://127.0.0.1:8000/v1")
    model = model_from_string(f"{prefix}:{rest}")
    named = re.findall(r"`(\w+Model)", row["what"])
    hosted = re.search(r'host="(\w+)"', row["what"])
    provider = getattr(model, "provider", None)
    if named:
        assert type(model).__name__ == named[0]
    else:  # a row that names no class names its vendor: the provider's own name
        assert provider == prefix
    if hosted is not None:
        assert provider == hosted[1]
