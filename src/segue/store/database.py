"""The store's database through the driver itself (``sqlite3``, or psycopg 3 for PostgreSQL).

A command's queries go through this module, not SQLAlchemy: loading SQLAlchemy takes a quarter
of a second on a slow machine, as long as the rest of a switch's start-up together, and what
segue asks of the database is a few dozen plain statements. SQLAlchemy and Alembic are loaded
only to migrate (``segue.store.migrate``).

SQL is written once, in the portable subset both databases speak, with ``:name`` parameters
(sent to psycopg as ``%(name)s``). Values go in and come out by the kind of their column
(:mod:`segue.store.tables`): a time is an aware datetime in UTC (SQLAlchemy's text form on
SQLite, so older stores read the same), JSON is text on SQLite, a boolean is 0/1 there.

Connections are kept in a small pool, so that threads of one process (the TUI's workers) each
use a connection of their own, one at a time. A transaction is :meth:`Database.transaction`:
SQLite ``BEGIN`` (reads) or ``BEGIN IMMEDIATE`` (writes), committed when the block ends.
"""

from __future__ import annotations

import importlib.util
import json
import re
import sqlite3
import sys
import threading
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from datetime import UTC, datetime
from enum import Enum
from functools import lru_cache
from typing import Any

import orjson

from segue.model.errors import ConfigError, StoreError
from segue.store import sqlite
from segue.store.location import DatabaseUrl, describe
from segue.store.tables import TABLES, Kind, Table

__all__ = [
    "CONNECT_TIMEOUT_S",
    "BadValue",
    "Database",
    "Row",
    "Transaction",
    "driver_errors",
    "integrity_error",
    "placeholders",
]

CONNECT_TIMEOUT_S = 10  # how long to wait for a PostgreSQL server to answer
_POOL = 4  # idle connections kept
_PARAM = re.compile(r"(?<![:\w]):([A-Za-z_]\w*)")

Row = dict[str, Any]


def _common_kinds() -> dict[str, Kind]:
    """Column name → kind, for the names that have one kind in every table."""
    seen: dict[str, set[Kind]] = {}
    for table in TABLES:
        for column in table.columns:
            seen.setdefault(column.name, set()).add(column.kind)
    return {name: next(iter(kinds)) for name, kinds in seen.items() if len(kinds) == 1}


_COMMON = _common_kinds()


class Database:
    """Connections to one database, made when first needed. ``read_only`` (SQLite) never
    writes or creates a file; ``wait`` is how long a connection waits for a writer (SQLite) or
    for a lock another session holds (PostgreSQL), in seconds."""

    def __init__(self, url: DatabaseUrl, *, read_only: bool = False, wait: float) -> None:
        self.url = url
        self.backend = url.backend
        self.where = describe(url)
        self.read_only = read_only
        self.wait = wait
        self._idle: list[Any] = []
        self._lock = threading.Lock()
        if self.backend == "postgresql" and importlib.util.find_spec("psycopg") is None:
            raise ConfigError(
                f"{self.where}: a PostgreSQL store needs the psycopg driver: "
                "install segue[postgres] (pip install 'segue[postgres]')"
            )

    def connect(self) -> Any:
        """A new connection of the driver's own, set up as every other (the migrations'
        engine makes its connections with it too)."""
        if self.url.path is not None:
            return sqlite.connect(self.url.path, self.wait, read_only=self.read_only)
        import psycopg
        from psycopg.conninfo import make_conninfo

        keywords: dict[str, Any] = self.url.connection_keywords()
        keywords.setdefault("application_name", "segue")
        keywords.setdefault("connect_timeout", CONNECT_TIMEOUT_S)
        connection = psycopg.connect(make_conninfo("", **keywords))
        # (in ms, from 1: 0 would be no limit at all; up to the server's largest)
        settings = [f"SET lock_timeout = {min(max(1, int(self.wait * 1000)), 2**31 - 1)}"]
        style = connection.info.parameter_status("DateStyle") or "ISO"
        if not style.upper().startswith("ISO"):
            # psycopg reads times only in the ISO style: a server or database set to another
            # (DateStyle 'SQL, DMY') would fail every read
            settings.append("SET DateStyle = 'ISO'")
        # A lock another session holds is waited for as long as a SQLite writer waits (a switch
        # caps it: it goes on without recording), never for ever. (Set by statements: a
        # connection option would be refused by a connection pooler such as pgbouncer.)
        try:
            for setting in settings:
                connection.execute(setting)
            connection.commit()
        except BaseException:
            connection.close()
            raise
        return connection

    @contextmanager
    def transaction(self, *, write: bool = False) -> Iterator[Transaction]:
        """One transaction on a connection of the pool: committed when the block ends, rolled
        back when it raises."""
        with self._lock:
            connection = self._idle.pop() if self._idle else None
        if connection is None:
            connection = self.connect()
        sqlite_file = self.url.path is not None
        try:
            if sqlite_file:
                connection.execute("BEGIN IMMEDIATE" if write else "BEGIN")
            yield Transaction(connection, self.backend)
            connection.commit() if not sqlite_file else connection.execute("COMMIT")
        except BaseException:
            if not _rolled_back(connection, sqlite_file):
                # a connection that cannot even roll back is broken (a server restarted, a
                # failover): the idle ones are most likely broken too, and all go
                _close(connection)
                self.close()
                raise
            self._give_back(connection)
            raise
        self._give_back(connection)

    def _give_back(self, connection: Any) -> None:
        with self._lock:
            if len(self._idle) < _POOL:
                self._idle.append(connection)
                return
        _close(connection)

    def close(self) -> None:
        with self._lock:
            idle, self._idle = self._idle, []
        for connection in idle:
            _close(connection)


def _rolled_back(connection: Any, sqlite_file: bool) -> bool:
    try:
        if sqlite_file:
            if connection.in_transaction:
                connection.execute("ROLLBACK")
        else:
            connection.rollback()
    except Exception:
        return False
    return True


def _close(connection: Any) -> None:
    with suppress(Exception):
        connection.close()


class Transaction:
    """Statements inside one transaction. Parameters are ``:name``; a value is converted by
    its column's kind where the statement says which table it is of."""

    def __init__(self, connection: Any, backend: str) -> None:
        self._connection = connection
        self.backend = backend
        self._postgres = backend == "postgresql"
        self._decode = _decode_pg if self._postgres else _decode_sqlite

    def execute(self, sql: str, params: Mapping[str, Any] | None = None) -> Any:
        """The driver's cursor, the statement run."""
        if self._postgres:
            return self._connection.cursor().execute(_pg(sql), _plain(params or {}))
        return self._connection.execute(sql, _plain(params or {}))

    def insert(self, table: Table, rows: Row | Sequence[Row]) -> None:
        """Insert one row or several, each given by column name (missing columns: NULL)."""
        many = [rows] if isinstance(rows, dict) else list(rows)
        if not many:
            return
        names = [c for c in table.names if any(c in row for row in many)]
        sql = (
            f"INSERT INTO {table.name} ({', '.join(names)}) "
            f"VALUES ({', '.join(':' + n for n in names)})"
        )
        values = [
            {n: _encode(table.kinds[n], row.get(n), self._postgres) for n in names} for row in many
        ]
        if self._postgres:
            with self._connection.cursor() as cursor:
                cursor.executemany(_pg(sql), values)
        else:
            self._connection.executemany(sql, values)

    def rows(
        self,
        sql: str,
        params: Mapping[str, Any] | None = None,
        kinds: Mapping[str, Kind] | None = None,
    ) -> list[Row]:
        """Every row as a dict by column name, each column decoded by its kind: ``kinds`` (a
        :class:`Table`'s), else the kind of the columns of that name in every table."""
        cursor = self.execute(sql, params)
        names = [d[0] for d in cursor.description]
        decode = self._decode
        kinds = _COMMON if kinds is None else kinds
        # SQLite keeps whatever a hand edit wrote into a cell: every column is checked there
        typed = self._postgres  # (PostgreSQL's columns hold their own types)
        decoded = [
            (i, kind)
            for i, n in enumerate(names)
            if (kind := kinds.get(n, "text")) != "text" or not typed
        ]
        out: list[Row] = []
        for values in cursor.fetchall():
            if decoded:
                values = list(values)
                for i, kind in decoded:
                    values[i] = decode(kind, values[i])
            out.append(dict(zip(names, values, strict=True)))
        return out

    def tuples(
        self,
        sql: str,
        params: Mapping[str, Any] | None = None,
        kinds: Sequence[Kind] | None = None,
    ) -> list[tuple[Any, ...]]:
        """Every row as a tuple: as the driver gives it, or each column decoded by its kind in
        ``kinds`` (in the order of the columns)."""
        found = self.execute(sql, params).fetchall()
        if kinds is None:
            return [tuple(r) for r in found]
        decode = self._decode
        return [tuple(decode(k, v) for k, v in zip(kinds, r, strict=True)) for r in found]

    def scalar(self, sql: str, params: Mapping[str, Any] | None = None) -> Any:
        """The first column of the first row (None: no row)."""
        found = self.tuples(sql, params)
        return found[0][0] if found else None

    def table_exists(self, name: str) -> bool:
        if self._postgres:
            sql = (
                "SELECT 1 FROM information_schema.tables "
                "WHERE table_schema = current_schema() AND table_name = :name"
            )
        else:
            sql = "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = :name"
        return bool(self.tuples(sql, {"name": name}))


def placeholders(prefix: str, values: Iterable[Any]) -> tuple[str, dict[str, Any]]:
    """``:p0, :p1, …`` for an ``IN (…)`` list, and their parameters."""
    params = {f"{prefix}{i}": v for i, v in enumerate(values)}
    return ", ".join(f":{name}" for name in params) or "NULL", params


@lru_cache(maxsize=256)
def _pg(sql: str) -> str:
    return _PARAM.sub(r"%(\1)s", sql.replace("%", "%%"))


def _plain(params: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v.value if isinstance(v, Enum) else v for k, v in params.items()}


def _utc(value: datetime) -> datetime:
    if value.tzinfo is None:
        raise ValueError("segue's store takes aware datetimes only")
    try:
        return value.astimezone(UTC)
    except OverflowError:  # 0001-01-01T00:30+01:00: before the first UTC day
        raise BadValue(f"the time {value.isoformat()} is out of range") from None


def _encode(kind: Kind, value: Any, postgres: bool) -> Any:
    if value is None:
        return None
    if isinstance(value, Enum):
        return value.value
    if kind == "time":
        utc = _utc(value)
        # SQLAlchemy's form on SQLite (a year below 1000 too: isoformat pads it, strftime not)
        return utc if postgres else utc.replace(tzinfo=None).isoformat(" ", "microseconds")
    if kind == "json":
        if postgres:
            from psycopg.types.json import Json

            return Json(value, dumps=_json_text)
        return _json_text(value)
    if kind == "bool" and not postgres:
        return int(bool(value))
    return value


def _json_text(value: Any) -> str:
    try:
        return orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS).decode()
    except TypeError:  # what orjson cannot spell (an integer beyond 64 bits): the slow way
        return json.dumps(value, default=str)


def _decode_sqlite(kind: Kind, value: Any) -> Any:
    if value is None:
        return None
    if kind == "time":
        return _time(value)
    if kind == "json":
        try:
            return orjson.loads(value)
        except (orjson.JSONDecodeError, TypeError):
            return _json_value(value)
    if kind == "bool":
        return bool(value)
    if kind == "int":
        return value if type(value) is int else _integer(value)
    if type(value) is bytes:  # a BLOB where text belongs: its text, as far as it is UTF-8
        return value.decode("utf-8", "replace")
    return value if type(value) is str else str(value)


def _integer(value: Any) -> int:
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        return int(value)
    raise BadValue(f"a recorded number is not a whole number: {str(value)[:40]!r}")


def _json_value(text: Any) -> Any:
    """What orjson refuses that Python's json reads (NaN, a lone surrogate), else nothing: a
    hand-edited cell is read as empty, never a crash."""
    try:
        return json.loads(text)
    except (ValueError, TypeError, RecursionError):
        return None


def _decode_pg(kind: Kind, value: Any) -> Any:
    return _in_utc(value) if kind == "time" and isinstance(value, datetime) else value


def _time(value: Any) -> datetime:
    try:
        parsed = datetime.fromisoformat(str(value))
    except ValueError:
        raise BadValue(f"a recorded time is not a time: {str(value)[:40]!r}") from None
    return _in_utc(parsed)


def _in_utc(value: datetime) -> datetime:
    """A time read back, in UTC (one without a zone was written in UTC)."""
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


class BadValue(StoreError):
    """A cell holds what its column's kind cannot be (a hand edit)."""


def driver_errors() -> tuple[type[BaseException], ...]:
    """What the drivers (and SQLAlchemy, when migrating) raise, of those loaded."""
    found: list[type[BaseException]] = [sqlite3.Error, OSError]
    psycopg = sys.modules.get("psycopg")
    if psycopg is not None:
        found.append(psycopg.Error)
    exc = sys.modules.get("sqlalchemy.exc")
    if exc is not None:
        found.append(exc.SQLAlchemyError)
    return tuple(found)


def integrity_error(error: BaseException) -> bool:
    """A constraint refused the statement (a key recorded twice)."""
    if isinstance(error, sqlite3.IntegrityError):
        return True
    psycopg = sys.modules.get("psycopg")
    return psycopg is not None and isinstance(error, psycopg.IntegrityError)
