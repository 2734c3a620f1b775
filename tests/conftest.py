"""Shared test fixtures."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from segue_testbed.postgres import PostgresServer, PostgresUnavailable, start_postgres
from segue_testbed.standin.server import StandIn


@pytest.fixture(scope="session")
def standin() -> Iterator[StandIn]:
    """One stand-in model server per test process; each test opens its own lane on it."""
    with StandIn() as server:
        yield server


def _in_ci() -> bool:
    return os.environ.get("CI", "").lower() not in ("", "0", "false", "no")


@pytest.fixture(scope="session")
def postgres() -> Iterator[PostgresServer]:
    """A private PostgreSQL server per test process, started on first use.

    Without server binaries the PostgreSQL tests fail in CI ($CI set) and are skipped elsewhere.
    """
    try:
        server = start_postgres()
    except PostgresUnavailable as why:
        if _in_ci():
            pytest.fail(f"PostgreSQL tests cannot run in CI: {why}")
        pytest.skip(f"no PostgreSQL server on this machine: {why}")
    with server:
        yield server


@pytest.fixture(params=["sqlite", "postgresql"])
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A new, empty store's URL: a SQLite file, and a database on the private PostgreSQL."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'store' / 'segue.db'}"
    server: PostgresServer = request.getfixturevalue("postgres")
    return server.create_database()
