"""Where segue's database is: which URL, and the folder of the default SQLite file.

The URL comes from the caller, else ``$SEGUE_DATABASE_URL``, else a SQLite file
``segue.db`` in segue's data folder (``$SEGUE_DATA_DIR``, else the platform's user data
folder). ``postgres://`` and ``postgresql://`` mean PostgreSQL through psycopg 3.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import ArgumentError

from segue.model.errors import StoreError
from segue.support.places import data_dir

__all__ = ["data_dir", "database_url", "describe", "sqlite_path", "store_wait"]

URL_VARIABLE = "SEGUE_DATABASE_URL"
FILE_NAME = "segue.db"
WAIT_VARIABLE = "SEGUE_STORE_WAIT"
WAIT_S = 3.0  # how long a switch or a fleet waits for another writer of the store, at most

_DRIVERS = {
    "sqlite": "sqlite",
    "sqlite+pysqlite": "sqlite",
    "postgres": "postgresql+psycopg",
    "postgresql": "postgresql+psycopg",
    "postgresql+psycopg": "postgresql+psycopg",
}


def store_wait(env: Mapping[str, str]) -> float:
    """How long a switch or a fleet waits for another writer of the store, in seconds
    (``$SEGUE_STORE_WAIT``, else a few): it goes on without recording rather than wait."""
    try:
        wait = float(env.get(WAIT_VARIABLE, "") or WAIT_S)
    except ValueError:
        return WAIT_S
    return wait if 0 <= wait < 3600 else WAIT_S


def database_url(url: str | None = None, env: Mapping[str, str] | None = None) -> URL:
    """The database to use, with its driver spelled out (``sqlite`` or ``postgresql+psycopg``).

    Raises :class:`StoreError` for text that is not a URL or names another kind of database.
    """
    env = os.environ if env is None else env
    source = "the database URL"
    if url is None and env.get(URL_VARIABLE):
        url, source = env[URL_VARIABLE], URL_VARIABLE
    if url is None:
        return URL.create("sqlite", database=str(data_dir(env) / FILE_NAME))
    try:
        parsed = make_url(url.strip())
    except ArgumentError:
        raise StoreError(
            f"{source} is not a database URL (expected sqlite:///path/segue.db or "
            "postgresql://user@host/database)"
        ) from None
    driver = _DRIVERS.get(parsed.drivername)
    if driver is None:
        raise StoreError(
            f"{source} is a {parsed.drivername}:// URL; segue's store is SQLite "
            "(sqlite:///path) or PostgreSQL through psycopg 3 (postgresql://…)"
        )
    parsed = parsed.set(drivername=driver)
    if driver == "sqlite" and parsed.database and parsed.database.startswith("~"):
        parsed = parsed.set(database=str(Path(parsed.database).expanduser()))
    if driver == "sqlite" and (sqlite_path(parsed) is None or "mode=memory" in url):
        raise StoreError(
            f"{source} names an in-memory SQLite database, which keeps nothing once segue exits: "
            "give a file (sqlite:///path/segue.db)"
        )
    if driver == "sqlite" and "timeout" in parsed.query:
        value = parsed.query["timeout"]
        text = value if isinstance(value, str) else ",".join(value)
        try:
            seconds = float(text)
        except ValueError:
            seconds = -1.0
        if not 0 <= seconds < 1e9:
            raise StoreError(
                f"{source}: timeout={text!r} is not a number of seconds (e.g. ?timeout=30)"
            )
    return parsed


def sqlite_path(url: URL) -> Path | None:
    """The file of a SQLite URL, or None for an in-memory database (or another backend)."""
    if url.get_backend_name() != "sqlite" or url.database in (None, "", ":memory:"):
        return None
    return Path(url.database)


def describe(url: URL) -> str:
    """The database as a message names it: the SQLite file, or the URL without its password."""
    path = sqlite_path(url)
    if path is not None:
        return str(path)
    if url.get_backend_name() == "sqlite":
        return "the in-memory SQLite database"
    return url.set(drivername=url.get_backend_name()).render_as_string(hide_password=True)
