"""A SQLAlchemy engine on the store, for the migrations only (Alembic runs on SQLAlchemy).

Its SQLite connections are set up as every other (``segue.store.sqlite``), and a transaction
that will write (execution option :data:`WRITE`) begins with ``BEGIN IMMEDIATE``.
PostgreSQL: psycopg 3, with a connect timeout so an unreachable server fails instead of hanging.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import create_engine, event
from sqlalchemy.engine import Connection, Engine

from segue.store import sqlite
from segue.store.location import DatabaseUrl

__all__ = ["WRITE", "make_engine"]

WRITE = "segue_write"  # execution option: this transaction will write


def make_engine(url: DatabaseUrl, wait: float, connect_args: dict[str, Any]) -> Engine:
    """An engine for ``url``: a SQLite connection waits ``wait`` seconds for another writer;
    ``connect_args`` are psycopg's."""
    path = url.path
    if path is None:
        return create_engine(url.sqlalchemy(), connect_args=connect_args, pool_pre_ping=False)
    engine = create_engine("sqlite://", creator=lambda: sqlite.connect(path, wait, read_only=False))
    event.listen(engine, "begin", _sqlite_begin)
    return engine


def _sqlite_begin(connection: Connection) -> None:
    write = connection.get_execution_options().get(WRITE, False)
    connection.exec_driver_sql("BEGIN IMMEDIATE" if write else "BEGIN")
