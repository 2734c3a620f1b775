"""Shared test fixtures."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from segue_testbed.postgres import PostgresServer, PostgresUnavailable, start_postgres
from segue_testbed.standin.server import StandIn

# What the tests' own git commands run with, whatever the machine's git configuration (a user's
# name and email, a system-wide gitconfig) or the lack of it: no global or system configuration,
# and an identity of the tests' own (a new machine has none, and ``git merge`` or ``commit``
# then stops before doing anything). segue's own git drops every ``GIT_*`` variable and names
# itself; the real CLIs run in scratch homes with environments built from nothing.
TEST_GIT_ENV = {
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_AUTHOR_NAME": "segue tests",
    "GIT_AUTHOR_EMAIL": "tests@segue.invalid",
    "GIT_COMMITTER_NAME": "segue tests",
    "GIT_COMMITTER_EMAIL": "tests@segue.invalid",
}


@pytest.fixture(scope="session", autouse=True)
def tests_git_config(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Every test's git: an empty global configuration (a file, so that ``git config
    --global`` still has somewhere to write), none of the system's, and the tests' identity."""
    empty = tmp_path_factory.mktemp("git-config") / "gitconfig"
    empty.write_bytes(b"")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("GIT_CONFIG_GLOBAL", str(empty))
        for name, value in TEST_GIT_ENV.items():
            patch.setenv(name, value)
        yield


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
