"""Database failures as one line a person can act on (a :class:`StoreError`), never a traceback.

Every call into the database goes through :func:`guarded`. The message names the database (the
SQLite file, or the URL without its password) and says what went wrong in words: not
reachable, locked by another process, not a SQLite database, refused by the server.
"""

from __future__ import annotations

import re
import sqlite3
import sys
from collections.abc import Iterator
from contextlib import contextmanager

from segue.model.errors import StoreError
from segue.store.database import BadValue, driver_errors

__all__ = ["explain", "guarded"]

_SQLITE_HINTS = (
    ("database is locked", "locked by another process for too long; try again when it is done"),
    ("file is not a database", "not a SQLite database, or it is corrupt"),
    ("malformed", "the database file is corrupt"),
    ("unable to open database file", "cannot open the database file"),
    ("readonly database", "the database file is read-only"),
    ("disk i/o error", "a disk I/O error"),
)

# psycopg's "connection failed: connection to server at "h" (ip), port 5432 failed: <why>"
_PG_CONNECT = re.compile(
    r'(?:connection failed: )?connection to server (?:at "[^"]*"(?: \([^)]*\))?, port \d+|'
    r'on socket "[^"]*") failed: '
)


_PG_POINTER = re.compile(r"LINE \d+: ")


@contextmanager
def guarded(where: str, doing: str) -> Iterator[None]:
    """Run a database step; turn what the driver raises into :class:`StoreError`."""
    try:
        yield
    except BadValue as error:
        raise StoreError(f"{where}: {doing}: {error}") from None
    except StoreError:
        raise
    except Exception as error:
        if not isinstance(error, driver_errors()):
            raise
        raise StoreError(f"{where}: {doing}: {explain(error)}") from None


def explain(error: BaseException) -> str:
    """What went wrong, in one line."""
    original = getattr(error, "orig", None) or error
    lines = (" ".join(line.split()) for line in str(original).splitlines())
    # (PostgreSQL's pointer into the statement, "LINE 1: SELECT …" and its "^", says nothing)
    said = [line for line in lines if line and line != "^" and not _PG_POINTER.match(line)]
    text = "; ".join(said) or type(original).__name__
    lowered = text.lower()
    if isinstance(original, sqlite3.Error):
        for needle, hint in _SQLITE_HINTS:
            if needle in lowered:
                return hint
    psycopg = sys.modules.get("psycopg")
    if psycopg is not None and isinstance(
        original, psycopg.OperationalError | psycopg.InterfaceError
    ):
        connecting = _PG_CONNECT.match(text)
        if connecting:
            why = text[connecting.end() :]
            if why.startswith("FATAL:"):
                return f"the server refused the connection: {why.removeprefix('FATAL:').strip()}"
            return f"cannot connect: {why}"
        if lowered.startswith("failed to resolve host"):
            return f"cannot connect: {text}"
    if isinstance(original, OSError) and original.strerror:
        return original.strerror
    for marker in (" [SQL:", " (Background on this error"):  # (SQLAlchemy's, when migrating)
        text = text.split(marker, 1)[0]
    return text.strip()
