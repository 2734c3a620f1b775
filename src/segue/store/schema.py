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
    Boolean,
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

__all__ = [
    "NAMING",
    "UtcDateTime",
    "app_threads",
    "batch_agents",
    "batches",
    "checkpoints",
    "context_handoffs",
    "context_transfers",
    "decisions",
    "metadata",
    "provider_thread_revisions",
    "provider_threads",
    "rollbacks",
    "runs",
    "watch_events",
]

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
    Column("label", Text),  # the plan's label: native / raw / shrunk
    Column("strategy", Text),  # how the switch moved the app thread
    Column("summary", Text),  # the plan's one-line summary
    Column("resume_command", Text),
    Column("warnings", _json()),  # what the switch warned of
    Column("switch", _json()),  # earlier versions' whole `segue switch --json`: not written
    Column("first_provider", Text, nullable=False),  # where a --return takes it back to
    Column("first_session", Text, nullable=False),
    Column("recorded_at", UtcDateTime, nullable=False),
    Index(None, "target_provider", "target_session"),
)

# --------------------------------------------------------------------------- the thread graph
# Append-only: a row is never changed. Mutable state lives in numbered revisions (the highest
# ``version`` of a key is current) or in rows that name the row they supersede (a successor
# exists: the older row is superseded; a unique index allows one successor only).

app_threads = Table(
    "app_threads",
    metadata,
    Column("id", Text, primary_key=True),  # UUIDv7
    Column("created_at", UtcDateTime, nullable=False),
    Column("title", Text),
    Column("cwd", Text),
    Column("parent_thread_id", Text, ForeignKey("app_threads.id")),  # lineage: forked from
    Column("parent_run_ordinal", Integer),  # the source point of that fork
    Column("parent_checkpoint_id", Text),  # the checkpoint its workspace was made from
)

provider_threads = Table(
    "provider_threads",
    metadata,
    Column("id", Text, primary_key=True),  # UUIDv7
    Column("thread_id", Text, ForeignKey("app_threads.id"), nullable=False),
    Column("provider", Text, nullable=False),
    Column("created_at", UtcDateTime, nullable=False),
    Column("origin", Text, nullable=False),  # adopted / switch / fork
    Index(None, "thread_id"),
)

provider_thread_revisions = Table(
    "provider_thread_revisions",
    metadata,
    Column("provider_thread_id", Text, ForeignKey("provider_threads.id"), primary_key=True),
    Column("version", Integer, primary_key=True),  # 1, 2, …: the highest is current
    Column("native_id", Text, nullable=False),  # the id the CLI resumes it by
    Column("path", Text, nullable=False),  # its current file
    Column("native_turns", Integer, nullable=False),  # native turns accounted for
    Column("status", Text, nullable=False),  # active / stale / divergent / rolled_back
    Column("reason", Text),  # why this revision was recorded
    Column("model", Text),
    Column("recorded_at", UtcDateTime, nullable=False),
    Column("stamp", _json()),  # the file as segue last saw it (segue.formats.stamp)
    Column("turns", _json()),  # its turns then: [[prompt hash, run ordinal or null], …]
    Column("former", _json()),  # files it continued from: [{path, stamp, turns}, …]
    Index(None, "native_id"),
)

runs = Table(
    "runs",
    metadata,
    Column("thread_id", Text, ForeignKey("app_threads.id"), primary_key=True),
    Column("ordinal", Integer, primary_key=True),  # 1, 2, … within the app thread
    Column("version", Integer, primary_key=True),  # a later status is a new version
    Column("provider", Text, nullable=False),
    Column("provider_thread_id", Text, ForeignKey("provider_threads.id"), nullable=False),
    Column("native_turn", Integer, nullable=False),  # its place among the native turns, from 1
    Column("handoff_id", Text),  # the handoff it started with
    # completed / working / failed / rolled_back / divergent
    Column("status", Text, nullable=False),
    Column("prompt", Text, nullable=False),
    Column("started_at", UtcDateTime),
    Column("ended_at", UtcDateTime),
    Column("recorded_at", UtcDateTime, nullable=False),
    Column("note", Text),  # why it failed, or why it is not on the thread's line
)

context_transfers = Table(
    "context_transfers",
    metadata,
    Column("id", Text, primary_key=True),
    Column("thread_id", Text, ForeignKey("app_threads.id"), nullable=False),
    Column("type", Text, nullable=False),  # switch / fork / return
    Column("source_provider_thread_id", Text, ForeignKey("provider_threads.id")),
    Column("target_provider_thread_id", Text, ForeignKey("provider_threads.id")),
    Column("source_run_ordinal", Integer),  # the source point
    Column("resolution", Text, nullable=False),  # the strategy it was resolved with
    Column("status", Text, nullable=False),  # pending / done / failed
    Column("supersedes", Text, ForeignKey("context_transfers.id"), unique=True),
    Column("created_at", UtcDateTime, nullable=False),
    Index(None, "thread_id"),
)

context_handoffs = Table(
    "context_handoffs",
    metadata,
    Column("id", Text, primary_key=True),
    Column("transfer_id", Text, ForeignKey("context_transfers.id")),
    Column("thread_id", Text, ForeignKey("app_threads.id"), nullable=False),
    Column("target_run_ordinal", Integer),  # the run that consumes it
    Column("from_provider_threads", _json(), nullable=False),  # [provider thread id]
    Column("to_provider_thread_id", Text, ForeignKey("provider_threads.id"), nullable=False),
    Column("covers_from", Integer, nullable=False),
    Column("covers_to", Integer, nullable=False),
    Column("strategy", Text, nullable=False),
    Column("form", Text, nullable=False),  # native_items / summary
    Column("text", Text),  # the summary
    Column("items", _json()),  # the neutral items carried natively
    Column("status", Text, nullable=False),  # pending / ready / failed (superseded: computed)
    Column("created_by_provider", Text),  # None: segue's own deterministic summarizer
    Column("supersedes", Text, ForeignKey("context_handoffs.id"), unique=True),
    Column("created_at", UtcDateTime, nullable=False),
    Column("checkpoint_id", Text),  # the workspace's latest checkpoint when it was made
    Index(None, "thread_id"),
)

decisions = Table(
    "decisions",
    metadata,
    Column("id", Text, primary_key=True),
    Column("thread_id", Text, ForeignKey("app_threads.id"), nullable=False),
    Column("target_provider", Text, nullable=False),
    Column("strategy", Text, nullable=False),
    Column("form", Text),
    Column("reason", Text, nullable=False),
    Column("provider_thread_id", Text, ForeignKey("provider_threads.id")),
    Column("covers_from", Integer),
    Column("covers_to", Integer),
    Column("inputs", _json()),  # the options and facts it was decided on
    Column("created_at", UtcDateTime, nullable=False),
    Index(None, "thread_id"),
)

checkpoints = Table(
    "checkpoints",
    metadata,
    Column("id", Text, primary_key=True),  # UUIDv7
    Column("thread_id", Text, ForeignKey("app_threads.id"), nullable=False),
    Column("run_ordinal", Integer, nullable=False),  # the run whose end it is
    Column("kind", Text, nullable=False),  # exact / approximate / safety
    Column("provider", Text),  # the provider of that run
    Column("folder", Text, nullable=False),  # the workspace snapshotted
    Column("repository", Text, nullable=False),  # the git dir that holds the commit
    Column("private", Boolean, nullable=False),  # a private repository in segue's data folder
    Column("ref", Text, nullable=False),  # refs/segue/…
    Column("commit_id", Text, nullable=False),
    Column("tree_id", Text, nullable=False),
    Column("base", Text, nullable=False),  # what its files are counted against
    Column("files", _json()),  # [[path, status, added, removed], …]
    Column("skipped", _json()),  # [[path, reason], …]: left out of the snapshot
    Column("created_at", UtcDateTime, nullable=False),
    Index(None, "thread_id"),
)

rollbacks = Table(
    "rollbacks",
    metadata,
    Column("id", Text, primary_key=True),  # UUIDv7
    Column("thread_id", Text, ForeignKey("app_threads.id"), nullable=False),
    Column("to_run", Integer, nullable=False),  # the runs after it were rolled back
    Column("scope", Text, nullable=False),  # files+context / files / context
    Column("safety_checkpoint_id", Text, ForeignKey("checkpoints.id")),  # the folder before
    Column("target_checkpoint_id", Text, ForeignKey("checkpoints.id")),  # the one restored
    Column("runs", _json()),  # [[ordinal, status before], …]: rolled back by it
    Column("provider_threads", _json()),  # [[id, status before], …]: made divergent by it
    Column("handoffs", _json()),  # [id, …]: superseded by it
    Column("undoes", Text, ForeignKey("rollbacks.id"), unique=True),  # an undo names its rollback
    Column("note", Text),
    Column("created_at", UtcDateTime, nullable=False),
    Index(None, "thread_id"),
)

watch_events = Table(
    "watch_events",
    metadata,
    Column("id", Text, primary_key=True),  # UUIDv7
    Column("at", UtcDateTime, nullable=False),
    # exhausted / waiting / family_limit / moved / move_declined / move_failed / return_offered /
    # returned / return_declined
    Column("kind", Text, nullable=False),
    Column("provider", Text),  # the provider it is about
    Column("batch_id", Text, ForeignKey("batches.id")),  # the batch moved or returned
    Column("reset_at", UtcDateTime),  # when the blocking window resets
    Column("sessions", _json()),  # the sessions it concerns
    Column("detail", Text),  # the reason, for people
    Column("host", Text, nullable=False),
    Column("pid", Integer, nullable=False),
    Index(None, "at"),
)
