"""The tables as the code queries them (SQLAlchemy Core).

The database itself is made by the migrations in ``migrations/versions``; a test checks that
a database migrated to the head has exactly these tables, so the two cannot drift apart. Types
are portable: text, integers, times in UTC (``timestamptz`` on PostgreSQL), JSON (text on
SQLite).
"""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy import (
    JSON,
    Column,
    DateTime,
    Dialect,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    Table,
    Text,
)
from sqlalchemy.types import TypeDecorator

__all__ = ["NAMING", "UtcDateTime", "batch_agents", "batches", "metadata"]

# Constraint names the migrations can refer to (SQLite's batch mode needs them).
NAMING = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}

metadata = MetaData(naming_convention=NAMING)


class UtcDateTime(TypeDecorator[datetime]):
    """An aware datetime, stored in UTC and read back in UTC on every backend."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError("segue's store takes aware datetimes only")
        return value.astimezone(UTC)

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def _json() -> JSON:
    return JSON(none_as_null=True)


batches = Table(
    "batches",
    metadata,
    Column("id", Text, primary_key=True),  # UUIDv7: sorts by creation time
    Column("created_at", UtcDateTime, nullable=False),
    Column("from_provider", Text),  # None: agents of several providers
    Column("to_provider", Text),  # None: each agent to its own target (a --return)
    Column("selection", _json()),  # how the agents were chosen
    Column("options", _json()),  # the switch options the batch ran with
    Column("planned", Integer),  # how many agents were selected
    Column("host", Text, nullable=False),
    Column("pid", Integer, nullable=False),
    Column("segue_version", Text, nullable=False),
    Index(None, "created_at"),
)

batch_agents = Table(
    "batch_agents",
    metadata,
    Column("batch_id", Text, ForeignKey("batches.id"), primary_key=True),
    Column("ordinal", Integer, primary_key=True),  # the agent's place in the selection
    Column("source_provider", Text, nullable=False),
    Column("source_session", Text, nullable=False),
    Column("source_path", Text),
    Column("cwd", Text),
    Column("pane", Text),  # the tmux pane it ran in
    Column("pid", Integer),
    Column("state", Text),  # idle / working / limit when it was selected
    Column("skipped", Text),  # why it was not switched
    Column("error", Text),  # why its switch failed
    Column("target_provider", Text),
    Column("target_session", Text),
    Column("target_path", Text),
    Column("label", Text),  # native / raw / shrunk
    Column("switch", _json()),  # the `segue switch --json` document
    Column("first_provider", Text, nullable=False),  # where a --return takes it back to
    Column("first_session", Text, nullable=False),
    Column("recorded_at", UtcDateTime, nullable=False),
    Index(None, "target_provider", "target_session"),
)
