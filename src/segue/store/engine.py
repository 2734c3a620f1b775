"""A SQLAlchemy engine on the store, for the migrations only (Alembic runs on SQLAlchemy).

Its connections are the store's own (``segue.store.database``: the same URL read the same way,
the same set-up), and on SQLite a transaction that will write (execution option :data:`WRITE`)
begins with ``BEGIN IMMEDIATE``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sqlalchemy import create_engine, event
from sqlalchemy.engine import Connection, Engine

__all__ = ["WRITE", "make_engine"]

WRITE = "segue_write"  # execution option: this transaction will write


def make_engine(connect: Callable[[], Any], backend: str) -> Engine:
    """An engine whose connections ``connect`` makes (the store's own: the same file or server,
    set up the same way), for ``backend`` (``sqlite`` or ``postgresql``)."""
    if backend == "postgresql":
        return create_engine("postgresql+psycopg://", creator=connect)
    engine = create_engine("sqlite://", creator=connect)
    event.listen(engine, "begin", _sqlite_begin)
    return engine


def _sqlite_begin(connection: Connection) -> None:
    write = connection.get_execution_options().get(WRITE, False)
    connection.exec_driver_sql("BEGIN IMMEDIATE" if write else "BEGIN")
