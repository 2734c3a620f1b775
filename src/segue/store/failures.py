"""Database failures as one line a person can act on (a :class:`StoreError`), never a traceback.

Every call into the database goes through :func:`guarded`. The message names the database (the
SQLite file, or the URL without its password) and says what went wrong in words: not
reachable, locked by another process, not a SQLite database, refused by the server.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager

from sqlalchemy import exc

from segue.errors import StoreError

__all__ = ["explain", "guarded"]

_SQLITE_HINTS = (
    ("database is locked", "locked by another process for too long; try again when it is done"),
    ("file is not a database", "not a SQLite database, or it is corrupt"),
    ("malformed", "the database file is corrupt"),
    ("unable to open database file", "cannot open the database file"),
    ("readonly database", "the database file is read-only"),
    ("disk i/o error", "a disk I/O error"),
)


@contextmanager
def guarded(where: str, doing: str) -> Iterator[None]:
    """Run a database step; turn what the driver raises into :class:`StoreError`."""
    try:
        yield
    except StoreError:
        raise
    except (exc.SQLAlchemyError, sqlite3.Error, OSError) as error:
        raise StoreError(f"{where}: {doing}: {explain(error)}") from None


def explain(error: BaseException) -> str:
    """What went wrong, in one line."""
    original = getattr(error, "orig", None) or error
    text = " ".join(str(original).split()) or type(original).__name__
    lowered = text.lower()
    if isinstance(original, sqlite3.Error):
        for needle, hint in _SQLITE_HINTS:
            if needle in lowered:
                return hint
    if isinstance(error, exc.OperationalError | exc.InterfaceError) and (
        "connection" in lowered or "connect" in lowered
    ):
        return f"the server cannot be reached ({_first_clause(text)})"
    if isinstance(original, OSError) and original.strerror:
        return original.strerror
    return _first_clause(text)


def _first_clause(text: str) -> str:
    """The driver's message without its SQL echo and background links."""
    for marker in (" [SQL:", " (Background on this error"):
        text = text.split(marker, 1)[0]
    return text.strip()
