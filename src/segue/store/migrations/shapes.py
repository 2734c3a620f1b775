"""The table shape the migrations repeat, spelled once: its columns, then a foreign key per
column that refers to another table's ``id``, its primary key and a unique column, each named
as ``segue.store.tables.NAMING`` names them, and its indexes. What a migration ran must never
change: a later migration that needs another shape spells it itself, never edits this."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa
from alembic import op

__all__ = ["create_table"]


def create_table(
    name: str,
    *columns: sa.Column[Any],
    key: Sequence[str] = ("id",),
    refers: dict[str, str] | None = None,
    unique: str | None = None,
    indexes: Sequence[Sequence[str]] = (),
) -> None:
    """``CREATE TABLE`` with ``columns``; ``refers``: column → the table whose ``id`` it
    refers to (the foreign keys in this order); then ``CREATE INDEX`` for each of ``indexes``."""
    constraints: list[sa.Constraint] = [
        sa.ForeignKeyConstraint(
            [column], [f"{referred}.id"], name=op.f(f"fk_{name}_{column}_{referred}")
        )
        for column, referred in (refers or {}).items()
    ]
    constraints.append(sa.PrimaryKeyConstraint(*key, name=op.f(f"pk_{name}")))
    if unique is not None:
        constraints.append(sa.UniqueConstraint(unique, name=op.f(f"uq_{name}_{unique}")))
    op.create_table(name, *columns, *constraints)
    for index in indexes:
        op.create_index(op.f(f"ix_{name}_{index[0]}"), name, list(index), unique=False)
