"""A throwaway PostgreSQL cluster for the tests: Debian's binaries, a temp dir, a loopback port.

initdb refuses to run as root, so under root (CI) the cluster is owned and run by `nobody`. The
binaries missing is a failure in CI (`CI` or `REACTLOOP_CI` set) and a skip elsewhere, with how
to install them.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import NoReturn

import psycopg
import pytest

INSTALL = "apt-get install postgresql (Debian/Ubuntu), then run the tests again"
USER = "reactloop"
_CLUSTERS: dict[str, list[str]] = {}
"""Each running cluster's URL and the pg_ctl command line that controls it (`restart`)."""


def in_ci() -> bool:
    """True when the suite runs in CI, where nothing may be skipped."""
    return bool(os.environ.get("CI")) or os.environ.get("REACTLOOP_CI") == "1"


def binaries() -> Path | None:
    """The newest PostgreSQL bin folder Debian installed, if any."""
    found = sorted(
        glob.glob("/usr/lib/postgresql/*/bin/initdb"),
        key=lambda path: int(Path(path).parent.parent.name),
    )
    return Path(found[-1]).parent if found else None


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def _as_owner(command: list[str]) -> list[str]:
    """The command run as `nobody` when we are root (initdb and postgres refuse root)."""
    return ["runuser", "-u", "nobody", "--", *command] if os.geteuid() == 0 else command


def _run(command: list[str]) -> None:
    done = subprocess.run(_as_owner(command), capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"{command[0]} failed ({done.returncode}): {done.stderr[-2000:]}")


def unavailable() -> NoReturn:
    """Fail (in CI) or skip (elsewhere): the PostgreSQL binaries are not installed."""
    message = f"PostgreSQL server binaries not found in /usr/lib/postgresql/*/bin: {INSTALL}"
    if in_ci():
        pytest.fail(message)
    pytest.skip(message)


@contextmanager
def throwaway_cluster(bin_dir: Path) -> Iterator[str]:
    """Create and start a cluster in a temp dir; yield its URL; stop and remove it after."""
    root = os.geteuid() == 0
    # as root, in /tmp: `nobody` must reach the folder, and TMPDIR may be private to root
    folder = Path(tempfile.mkdtemp(prefix="reactloop-pg-", dir="/tmp" if root else None))
    if root:
        nobody = pwd.getpwnam("nobody")
        os.chown(folder, nobody.pw_uid, nobody.pw_gid)
    data, port = folder / "data", free_port()
    try:
        _run([str(bin_dir / "initdb"), "-D", str(data), "-U", USER, "--auth=trust", "-E", "UTF8"])
        options = f"-p {port} -k {folder} -c listen_addresses=127.0.0.1 -c fsync=off"
        _run([str(bin_dir / "pg_ctl"), "-D", str(data), "-o", options, "-w", "-l",
              str(folder / "log"), "start"])  # fmt: skip
        url = f"postgresql://{USER}@127.0.0.1:{port}/postgres"
        _CLUSTERS[url] = [str(bin_dir / "pg_ctl"), "-D", str(data), "-o", options, "-w", "-l",
                          str(folder / "log")]  # fmt: skip
        try:
            yield url
        finally:
            _CLUSTERS.pop(url, None)
            _run([str(bin_dir / "pg_ctl"), "-D", str(data), "-m", "immediate", "-w", "stop"])
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def fresh_schema(url: str) -> str:
    """A URL whose connections work in a new, empty schema (one per test: no shared state)."""
    name = f"t_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(url, autocommit=True) as connection:
        connection.execute(f"CREATE SCHEMA {name}")
    return f"{url}?options=-csearch_path%3D{name}"


def expire(url: str, run_id: str, owner: str | None = None) -> None:
    """The run's lease runs out, as when its worker (`owner`, if given) died and stopped
    renewing it."""
    with psycopg.connect(url) as connection:
        connection.execute(
            "UPDATE reactloop_runs SET lease_expires = now() - interval '1 second',"
            " lease_owner = coalesce(%s, lease_owner) WHERE run_id = %s",
            (owner, run_id.encode()),
        )


def restart(url: str) -> None:
    """Restart the server a test URL points into (fast shutdown: every connection is cut)."""
    server = url.partition("?")[0]
    _run([*_CLUSTERS[server], "-m", "fast", "restart"])


def backend_pids(url: str, worker_id: str) -> list[int]:
    """The server processes serving a store's connections (found by its application name)."""
    with psycopg.connect(url, autocommit=True) as connection:
        rows = connection.execute(
            "SELECT pid FROM pg_stat_activity WHERE application_name = %s",
            (f"reactloop:{worker_id}"[:63],),
        ).fetchall()
    return [int(row[0]) for row in rows]


def terminate(url: str, worker_id: str) -> int:
    """Cut a store's connections from the server side (as an operator's pg_terminate_backend)."""
    pids = backend_pids(url, worker_id)
    with psycopg.connect(url, autocommit=True) as connection:
        for pid in pids:
            connection.execute("SELECT pg_terminate_backend(%s)", (pid,))
    return len(pids)
