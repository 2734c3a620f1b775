"""Connections to the store's database, set up the same way every time.

SQLite: the file is created 0600 in folders created 0700; every connection runs in WAL mode
with ``synchronous=NORMAL``, foreign keys on, and a busy timeout long enough that several
processes writing at once wait for each other instead of failing. segue begins SQLite
transactions itself (``BEGIN`` for reads, ``BEGIN IMMEDIATE`` for writes, which takes the write
lock up front, so a transaction never fails half-way on a lock it cannot upgrade). SQLite
answers the switch to WAL with "database is locked" at once, without its busy handler, while
another connection switches the same new file (or writes it before it is in WAL): that step
waits and tries again, for as long as segue's default busy timeout.

PostgreSQL: psycopg 3, with a connect timeout so an unreachable server fails instead of hanging.
"""

from __future__ import annotations

import importlib.util
import os
import sqlite3
import time
from pathlib import Path
from typing import Any
from urllib.parse import quote

from sqlalchemy import create_engine, event
from sqlalchemy.engine import URL, Connection, Engine
from sqlalchemy.pool import ConnectionPoolEntry, StaticPool

from segue.model.errors import ConfigError, StoreError
from segue.store.location import describe, sqlite_path

__all__ = ["BUSY_TIMEOUT_S", "CONNECT_TIMEOUT_S", "WRITE", "StoreAbsent", "make_engine"]

BUSY_TIMEOUT_S = 60  # how long a SQLite writer waits for another one (default)
CONNECT_TIMEOUT_S = 10  # how long to wait for a PostgreSQL server to answer
WRITE = "segue_write"  # execution option: this transaction will write


def make_engine(url: URL, *, read_only: bool = False, busy_timeout: float | None = None) -> Engine:
    """An engine for ``url`` (as :func:`segue.store.location.database_url` spells it).
    ``read_only`` opens an existing SQLite file without ever writing to it or creating it (nor
    its folders); ``busy_timeout`` is how long a SQLite connection waits for another writer."""
    if url.get_backend_name() == "sqlite":
        return _sqlite_engine(url, read_only, busy_timeout)
    if importlib.util.find_spec("psycopg") is None:
        raise ConfigError(
            f"{describe(url)}: a PostgreSQL store needs the psycopg driver: "
            "install segue[postgres] (pip install 'segue[postgres]')"
        )
    args: dict[str, Any] = {"application_name": "segue"}
    if "connect_timeout" not in url.query:
        args["connect_timeout"] = CONNECT_TIMEOUT_S
    return create_engine(url, connect_args=args, pool_pre_ping=False)


def _sqlite_engine(url: URL, read_only: bool, busy_timeout: float | None) -> Engine:
    path = sqlite_path(url)
    # sqlite3's timeout is SQLite's busy timeout: a URL's ?timeout=N, else a minute; a caller
    # that must not wait long (a switch) caps it
    wait = float(str(url.query.get("timeout", BUSY_TIMEOUT_S)))
    if busy_timeout is not None:
        wait = min(wait, busy_timeout)
    url = url.difference_update_query(["timeout"])
    waits: dict[str, Any] = {"timeout": wait}
    if path is None:  # in memory: one connection, or every connection is another database
        engine = create_engine(url, poolclass=StaticPool)
    elif read_only:
        if not path.is_file():
            raise StoreAbsent(f"{path}: no store yet")
        # a WAL file in use is read through (it holds the newest records); with none, the file is
        # read as it is, so that opening it creates no -wal or -shm file beside it
        live = Path(f"{path}-wal").exists() and Path(f"{path}-shm").exists()
        target = f"file:{quote(str(path.resolve()))}?" + ("mode=ro" if live else "immutable=1")
        engine = create_engine(
            "sqlite://", creator=lambda: sqlite3.connect(target, uri=True, **waits)
        )
        event.listen(engine, "connect", _sqlite_connect_read_only)
        event.listen(engine, "begin", _sqlite_begin)
        return engine
    else:
        _create_file(path)
        engine = create_engine(url, connect_args=waits)
    event.listen(engine, "connect", _sqlite_connect)
    event.listen(engine, "begin", _sqlite_begin)
    return engine


class StoreAbsent(StoreError):
    """There is no store to read yet (a dry run opens none)."""


def _sqlite_connect_read_only(dbapi: sqlite3.Connection, record: ConnectionPoolEntry) -> None:
    dbapi.isolation_level = None
    dbapi.execute("PRAGMA query_only = ON")


def _create_file(path: Path) -> None:
    """The database file, 0600, in folders that are 0700 where segue creates them."""
    if path.is_file():
        return
    try:
        missing = [p for p in (path.parent, *path.parent.parents) if not p.exists()]
        for folder in reversed(missing):
            folder.mkdir(mode=0o700, exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        os.close(fd)
    except OSError as exc:
        raise StoreError(f"{path}: cannot create segue's database: {exc.strerror}") from None


def _sqlite_connect(dbapi: sqlite3.Connection, record: ConnectionPoolEntry) -> None:
    dbapi.isolation_level = None  # no implicit transactions: _sqlite_begin starts them
    mode = _journal_mode_wal(dbapi)
    if mode is not None and str(mode[0]).lower() not in ("wal", "memory"):
        raise sqlite3.OperationalError(f"cannot use write-ahead logging (journal mode {mode[0]})")
    dbapi.execute("PRAGMA synchronous = NORMAL")
    dbapi.execute("PRAGMA foreign_keys = ON")


def _journal_mode_wal(dbapi: sqlite3.Connection) -> Any:
    """Switch to WAL (a no-op once the file is in WAL); the mode the file is in now."""
    deadline = time.monotonic() + _busy_timeout(dbapi)
    pause = 0.005
    while True:
        try:
            return dbapi.execute("PRAGMA journal_mode = WAL").fetchone()
        except sqlite3.OperationalError as error:
            if "database is locked" not in str(error) or time.monotonic() >= deadline:
                raise
        time.sleep(pause)
        pause = min(pause * 2, 0.25)


def _busy_timeout(dbapi: sqlite3.Connection) -> float:
    try:
        row = dbapi.execute("PRAGMA busy_timeout").fetchone()
        return float(row[0]) / 1000 if row else BUSY_TIMEOUT_S
    except sqlite3.Error:
        return BUSY_TIMEOUT_S


def _sqlite_begin(connection: Connection) -> None:
    write = connection.get_execution_options().get(WRITE, False)
    connection.exec_driver_sql("BEGIN IMMEDIATE" if write else "BEGIN")
