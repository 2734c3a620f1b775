"""The tables of :mod:`segue.store.tables` as SQLAlchemy metadata, for the migrations.

A new database is made in one step without SQLAlchemy (``segue.store.ddl``); an existing one
is brought to the head by the migrations in ``migrations/versions``, which compare against
this metadata when a new one is written. A test checks that a database migrated to the head
has exactly these tables. Only migrating (and the tests) loads SQLAlchemy: the queries a
command runs go through ``segue.store.database``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sqlalchemy import (
    JSON,
    Boolean,
    Column,
    DateTime,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    Table,
    Text,
)
from sqlalchemy.types import TypeEngine

from segue.store import tables
from segue.store.tables import NAMING, Kind

__all__ = ["NAMING", "metadata"]

# Constraint names the migrations can refer to (SQLite's batch mode needs them).
metadata = MetaData(naming_convention=NAMING)


_TYPES: dict[Kind, Callable[[], TypeEngine[Any]]] = {
    "text": Text,
    "int": Integer,
    "bool": Boolean,
    "time": lambda: DateTime(timezone=True),  # (UTC: the queries write and read it so)
    "json": lambda: JSON(none_as_null=True),
}


def _table(table: tables.Table) -> Table:
    columns = [
        Column(
            c.name,
            _TYPES[c.kind](),
            *([ForeignKey(c.references)] if c.references else []),
            primary_key=c.primary_key,
            nullable=c.nullable,
            unique=c.unique or None,
        )
        for c in table.columns
    ]
    return Table(table.name, metadata, *columns, *(Index(None, *i) for i in table.indexes))


for _spec in tables.TABLES:
    _table(_spec)
