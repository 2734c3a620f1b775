"""SQLite files and connections, set up the same way every time (with or without SQLAlchemy).

The file is created 0600 in folders created 0700; every connection runs in WAL mode with
``synchronous=NORMAL``, foreign keys on, and a busy timeout long enough that several processes
writing at once wait for each other instead of failing. segue begins transactions itself
(``BEGIN`` for reads, ``BEGIN IMMEDIATE`` for writes, which takes the write lock up front, so a
transaction never fails half-way on a lock it cannot upgrade). SQLite answers the switch to WAL
with "database is locked" at once, without its busy handler, while another connection switches
the same new file (or writes it before it is in WAL): that step waits and tries again, for as
long as the connection's busy timeout.

A read-only connection never writes, nor creates a file: a WAL file in use is read through (it
holds the newest records); with none, the file is read as it is, so that opening it creates no
``-wal`` or ``-shm`` file beside it.
"""

from __future__ import annotations

import os
import sqlite3
import time
from pathlib import Path
from typing import Any
from urllib.parse import quote

from segue.model.errors import StoreError

__all__ = ["BUSY_TIMEOUT_S", "connect"]

BUSY_TIMEOUT_S = 60  # how long a SQLite writer waits for another one (default)


def connect(path: Path, wait: float, *, read_only: bool) -> sqlite3.Connection:
    """A connection to ``path`` (created first unless ``read_only``), set up, outside any
    transaction, usable from any thread (one at a time)."""
    if read_only:
        target, uri = _read_only_target(path), True
    else:
        _create_file(path)
        target, uri = str(path), False
    connection = sqlite3.connect(  # (no implicit transactions: segue begins them)
        target, timeout=wait, isolation_level=None, check_same_thread=False, uri=uri
    )
    try:
        if read_only:
            connection.execute("PRAGMA query_only = ON")
        else:
            mode = _journal_mode_wal(connection, wait)
            if mode is not None and str(mode[0]).lower() not in ("wal", "memory"):
                raise sqlite3.OperationalError(
                    f"cannot use write-ahead logging (journal mode {mode[0]})"
                )
            connection.execute("PRAGMA synchronous = NORMAL")
            connection.execute("PRAGMA foreign_keys = ON")
    except BaseException:
        connection.close()
        raise
    return connection


def _read_only_target(path: Path) -> str:
    real = path.resolve()  # SQLite keeps the WAL beside the file a link points to
    live = Path(f"{real}-wal").exists() and Path(f"{real}-shm").exists()
    return f"file:{quote(str(real))}?" + ("mode=ro" if live else "immutable=1")


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


def _journal_mode_wal(connection: sqlite3.Connection, wait: float) -> Any:
    """Switch to WAL (a no-op once the file is in WAL), trying again for as long as the
    connection waits for a lock; the mode the file is in now."""
    deadline = time.monotonic() + wait
    pause = 0.005
    while True:
        try:
            return connection.execute("PRAGMA journal_mode = WAL").fetchone()
        except sqlite3.OperationalError as error:
            if "database is locked" not in str(error) or time.monotonic() >= deadline:
                raise
        time.sleep(pause)
        pause = min(pause * 2, 0.25)
