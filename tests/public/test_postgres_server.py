"""The test server helper: missing PostgreSQL binaries fail the suite in CI, skip it elsewhere."""

from __future__ import annotations

import pytest

from tests.helpers.postgres_server import in_ci, unavailable


@pytest.fixture
def outside_ci(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.delenv("REACTLOOP_CI", raising=False)


@pytest.mark.usefixtures("outside_ci")
@pytest.mark.parametrize(("name", "value"), [("CI", "true"), ("REACTLOOP_CI", "1")])
def test_missing_binaries_fail_in_ci(
    monkeypatch: pytest.MonkeyPatch, name: str, value: str
) -> None:
    monkeypatch.setenv(name, value)
    assert in_ci()
    with pytest.raises(pytest.fail.Exception, match="apt-get install postgresql"):
        unavailable()


@pytest.mark.usefixtures("outside_ci")
def test_missing_binaries_skip_elsewhere_saying_how_to_install_them() -> None:
    assert not in_ci()
    with pytest.raises(pytest.skip.Exception, match="apt-get install postgresql"):
        unavailable()
