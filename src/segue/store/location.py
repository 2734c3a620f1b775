"""Where segue's database is: which URL, and the folder of the default SQLite file.

The URL comes from the caller, else ``$SEGUE_DATABASE_URL``, else a SQLite file
``segue.db`` in segue's data folder (``$SEGUE_DATA_DIR``, else the platform's user data
folder). ``postgres://`` and ``postgresql://`` mean PostgreSQL through psycopg 3.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from urllib.parse import parse_qsl, quote, unquote, unquote_plus

import msgspec

from segue.model.errors import StoreError
from segue.support.places import data_dir

__all__ = ["DatabaseUrl", "data_dir", "database_url", "describe", "store_wait"]

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
_SCHEME = re.compile(r"([\w+]+)://(.*)", re.DOTALL)
_SQLITE_OPTIONS = ("timeout",)


class DatabaseUrl(msgspec.Struct, frozen=True):
    """A database URL as segue reads it (SQLAlchemy's spelling, without loading SQLAlchemy).

    ``drivername`` is ``sqlite`` or ``postgresql+psycopg``; ``rest`` is everything after
    ``://`` (password included); ``path`` is a SQLite file (None: in memory, or PostgreSQL)."""

    drivername: str
    rest: str
    path: Path | None = None
    query: tuple[tuple[str, str], ...] = ()

    @property
    def backend(self) -> str:
        """``sqlite`` or ``postgresql``."""
        return self.drivername.partition("+")[0]

    def option(self, name: str) -> str | None:
        """The last value of query option ``name``."""
        values = [v for k, v in self.query if k == name]
        return values[-1] if values else None

    def connection_keywords(self) -> dict[str, str]:
        """A PostgreSQL URL as libpq's keywords (psycopg quotes each): the user and password
        taken whole, whatever they hold (a ``/``, ``#``, ``?`` or a ``%`` that encodes
        nothing), every host and port of a list, the database, and the query's options (which
        win over the URL's parts, as libpq has it) but ``timeout``, which is segue's."""
        user, password, after = _split_login(self.rest)
        hosts, _, database = after.partition("?")[0].partition("/")
        keywords: dict[str, str] = {}
        if user:
            keywords["user"] = user
        if password:  # (an empty one is none: libpq then asks its password file)
            keywords["password"] = password
        names, ports = [], []
        for part in hosts.split(",") if hosts else ():
            name, port = _host_port(part)
            names.append(unquote(name))
            ports.append(port)
        if any(names):
            keywords["host"] = ",".join(names)
        if any(ports):
            keywords["port"] = ",".join(ports)
        if database:
            keywords["dbname"] = unquote(database)
        keywords.update((k, v) for k, v in self.query if k != "timeout")  # (segue's, not libpq's)
        return keywords

    def __str__(self) -> str:
        return describe(self)

    def __repr__(self) -> str:  # (never the password, in a traceback or a log either)
        return f"DatabaseUrl({describe(self)!r})"


def store_wait(env: Mapping[str, str]) -> float:
    """How long a switch or a fleet waits for another writer of the store, in seconds
    (``$SEGUE_STORE_WAIT``, else a few): it goes on without recording rather than wait."""
    try:
        wait = float(env.get(WAIT_VARIABLE, "") or WAIT_S)
    except ValueError:
        return WAIT_S
    return wait if 0 <= wait < 3600 else WAIT_S


def database_url(url: str | None = None, env: Mapping[str, str] | None = None) -> DatabaseUrl:
    """The database to use, with its driver spelled out (``sqlite`` or ``postgresql+psycopg``).

    Raises :class:`StoreError` for text that is not a URL or names another kind of database.
    """
    env = os.environ if env is None else env
    source = "the database URL"
    if url is None and env.get(URL_VARIABLE):
        url, source = env[URL_VARIABLE], URL_VARIABLE
    if url is None:
        return DatabaseUrl("sqlite", "", data_dir(env) / FILE_NAME)
    parsed = _SCHEME.fullmatch(url.strip())
    if parsed is None:
        raise StoreError(
            f"{source} is not a database URL (expected sqlite:///path/segue.db or "
            "postgresql://user@host/database)"
        )
    scheme, rest = parsed.groups()
    driver = _DRIVERS.get(scheme.lower())
    if driver is None:
        raise StoreError(
            f"{source} is a {scheme}:// URL; segue's store is SQLite "
            "(sqlite:///path) or PostgreSQL through psycopg 3 (postgresql://…)"
        )
    if driver == "sqlite":
        found = _sqlite_url(source, url, rest)
    else:
        query = _split_login(rest)[2].partition("?")[2]
        found = DatabaseUrl(driver, rest, None, tuple(parse_qsl(query, keep_blank_values=True)))
    _check_timeout(source, found)
    return found


def _sqlite_url(source: str, url: str, rest: str) -> DatabaseUrl:
    where, _, query_text = rest.partition("?")
    _, slash, database = where.partition("/")  # sqlite://host/db: SQLite has no host
    query = tuple(parse_qsl(query_text, keep_blank_values=True))
    if not slash or database in ("", ":memory:") or "mode=memory" in url:
        raise StoreError(
            f"{source} names an in-memory SQLite database, which keeps nothing once segue exits: "
            "give a file (sqlite:///path/segue.db)"
        )
    for name, _ in query:
        if name not in _SQLITE_OPTIONS:
            raise StoreError(
                f"{source} has ?{name}=, not an option segue knows for SQLite (only ?timeout=N)"
            )
    return DatabaseUrl("sqlite", rest, Path(unquote(database)).expanduser(), query)


def _check_timeout(source: str, parsed: DatabaseUrl) -> None:
    """``?timeout=N``, segue's own option on either database (how long a connection waits for
    another writer, or a lock): a number of seconds, or the URL is refused."""
    text = parsed.option("timeout")
    try:
        good = text is None or 0 <= float(text) < 1e9
    except ValueError:
        good = False
    if not good:
        raise StoreError(
            f"{source}: timeout={text!r} is not a number of seconds (e.g. ?timeout=30)"
        )


def describe(url: DatabaseUrl) -> str:
    """The database as a message names it: the SQLite file, or the URL with every password in it
    shown as ``***`` (the login's, and any query option whose name holds ``password``, whatever
    its case: libpq's ``password`` and ``sslpassword``). A connection string or URL given as the
    database name or an option's value (libpq expands a ``dbname`` that holds one) has its
    passwords hidden the same way. Every place that shows the store names it through this."""
    if url.path is not None:
        return str(url.path)
    if url.backend == "sqlite":
        return "the in-memory SQLite database"
    user, password, after = _split_login(url.rest)
    place, mark, query = after.partition("?")
    hosts, slash, database = place.partition("/")
    shown = hosts + slash + _shown_value(database, unquote)
    if mark:
        shown += mark + "&".join(_shown_option(option) for option in query.split("&"))
    if user is None:
        return f"{url.backend}://{shown}"
    login = quote(user, safe="") + (":***" if password is not None else "")
    return f"{url.backend}://{login}@{shown}"


# a password in a libpq connection string ("host=h password='x y'"), and a URL's login
_CONNINFO_PASSWORD = re.compile(r"(?i)([\w.-]*password\s*=\s*)('(?:[^'\\]|\\.)*'?|\S*)")
_URL_LOGIN = re.compile(r"(?i)([a-z][\w+.-]*://[^\s:/?#@]*:)\S*@")


def _shown_option(option: str) -> str:
    name, equals, value = option.partition("=")
    if "password" in unquote_plus(name).lower():
        return f"{name}{equals}***" if equals else name
    return name + equals + _shown_value(value, unquote_plus)


def _shown_value(value: str, decode: Callable[[str], str]) -> str:
    """``value`` as it is, or, when it holds a connection string or URL with a password, that
    text decoded with its passwords as ``***``."""
    text = decode(value)
    hidden = _CONNINFO_PASSWORD.sub(r"\1***", _URL_LOGIN.sub(r"\1***@", text))
    return value if hidden == text else quote(hidden, safe=" '=:/@*,;")


def _split_login(rest: str) -> tuple[str | None, str | None, str]:
    """(user, password, the rest) of what follows ``postgresql://``: the login ends at the last
    ``@`` (a password may hold anything else); both are percent-decoded, as SQLAlchemy did."""
    login, sign, after = rest.rpartition("@")
    if not sign:
        return None, None, rest
    user, colon, password = login.partition(":")
    return unquote(user), unquote(password) if colon else None, after


def _host_port(part: str) -> tuple[str, str]:
    """``host:port``, ``[v6 address]:port`` or a bare host."""
    if part.startswith("["):
        name, _, port = part[1:].partition("]")
        return name, port.removeprefix(":")
    name, _, port = part.partition(":")
    return name, port
