"""The command line takes every model string `model_from_string` does: its help names each
provider prefix, and a host preset's string runs an agent against a (loopback) server."""

from __future__ import annotations

import re

import pytest

from reactloop._providers._registry import AZURE_FORMS, PROVIDERS
from tests.cli.test_cli import cli
from tests.helpers.cli_model import Turn, fake_model


def test_the_model_options_help_names_every_provider_prefix() -> None:
    done = cli("run", "--help")
    assert done.returncode == 0, done.stderr
    said = re.sub(r"-\s+", "-", done.stdout)  # argparse wraps the help, even at a hyphen
    named = set(re.findall(r"[a-z][a-z-]*", said))
    assert {*PROVIDERS, *AZURE_FORMS} <= named, {*PROVIDERS, *AZURE_FORMS} - named


@pytest.mark.parametrize("preset", ["vllm", "ollama"])
def test_a_host_presets_model_string_runs_an_agent(preset: str) -> None:
    with fake_model([Turn("Hello from the host.")]) as fake:
        url = fake.model.partition("@")[2]
        spec = f"vllm:fake@{url}" if preset == "vllm" else "ollama:fake"
        done = cli("run", "--model", spec, "--plain", "hi", env={"OLLAMA_BASE_URL": url})
        assert done.returncode == 0, done.stderr
        assert "Hello from the host." in done.stdout
        assert fake.requests[0]["model"] == "fake"
