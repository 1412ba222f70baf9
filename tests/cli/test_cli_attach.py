"""`reactloop run --attach FILE`: the question goes with images, documents and audio."""

from __future__ import annotations

import base64
from pathlib import Path

from tests.cli.test_cli import assert_error_line, cli
from tests.helpers.cli_model import Turn, fake_model

PNG = b"\x89PNG\r\n\x1a\n" + b"chart" * 10


def test_attached_files_reach_the_model_after_the_question(tmp_path: Path) -> None:
    (tmp_path / "chart.png").write_bytes(PNG)
    (tmp_path / "notes.txt").write_text("Q3 was slow.", encoding="utf-8")
    with fake_model([Turn("A rising chart.")]) as fake:
        done = cli(
            "run", "--model", fake.model, "--attach", str(tmp_path / "chart.png"),
            "--attach", str(tmp_path / "notes.txt"), "what does this show?",
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        content = fake.requests[0]["messages"][-1]["content"]
    assert content[0] == {"type": "text", "text": "what does this show?"}
    assert content[1]["image_url"]["url"] == "data:image/png;base64," + base64.b64encode(
        PNG
    ).decode("ascii")
    assert "Q3 was slow." in content[2]["text"]


def test_a_file_that_cannot_be_attached_is_one_error_line(tmp_path: Path) -> None:
    (tmp_path / "tool.exe").write_bytes(b"MZ")
    model = "openai-compatible:m@http://127.0.0.1:9/v1"
    for path in (tmp_path / "missing.png", tmp_path / "tool.exe"):
        done = cli("run", "--model", model, "--attach", str(path), "look")
        assert_error_line(done, "--attach", path.name)
