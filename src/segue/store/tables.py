"""The tables, as plain data: every column's name, kind and constraints; the one description of
the schema.

The queries (``segue.store.database``) read and write rows by these kinds; a new database is
made from them in one step (``segue.store.ddl``), and the migrations' SQLAlchemy metadata
(``segue.store.schema``) is built from them. Tests check that a database migrated to the head
has exactly these tables, and exactly the schema of one made in one step (column order and
constraint names included), so none of them can drift apart. A column a migration adds goes
at the end of its table, where ``ALTER TABLE … ADD COLUMN`` puts it. Kinds are portable:
text, integers, booleans, times in UTC (``timestamptz`` on PostgreSQL, SQLAlchemy's text form
on SQLite), JSON (text on SQLite).
"""

from __future__ import annotations

from typing import Literal

import msgspec
from msgspec.structs import force_setattr

__all__ = [
    "NAMING",
    "TABLES",
    "Column",
    "Kind",
    "Table",
    "app_threads",
    "batch_agents",
    "batches",
    "checkpoints",
    "context_handoffs",
    "context_transfers",
    "decisions",
    "provider_thread_revisions",
    "provider_threads",
    "rollbacks",
    "runs",
    "watch_events",
]

Kind = Literal["text", "int", "bool", "time", "json"]

# The names of constraints and indexes (SQLAlchemy's naming convention: the migrations refer to
# them, SQLite's batch mode needs them, and a new database made in one step has the same).
NAMING = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


class Column(msgspec.Struct, frozen=True):
    name: str
    kind: Kind = "text"
    nullable: bool = True
    primary_key: bool = False
    references: str | None = None  # "table.column"
    unique: bool = False


class Table(msgspec.Struct, frozen=True):
    name: str
    columns: tuple[Column, ...]
    indexes: tuple[tuple[str, ...], ...] = ()
    kinds: dict[str, Kind] = msgspec.field(default_factory=dict)  # by name: set from columns

    def __post_init__(self) -> None:
        force_setattr(self, "kinds", {c.name: c.kind for c in self.columns})

    def __hash__(self) -> int:  # (``kinds`` is made from the columns: a table is its columns)
        return hash((self.name, self.columns, self.indexes))

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(c.name for c in self.columns)


def _key(name: str, kind: Kind = "text", references: str | None = None) -> Column:
    return Column(name, kind, nullable=False, primary_key=True, references=references)


def _required(name: str, kind: Kind = "text", references: str | None = None) -> Column:
    return Column(name, kind, nullable=False, references=references)


def _of_thread(name: str, *columns: Column) -> Table:
    """A table of records about one app thread, found by it: ``id`` and ``thread_id`` first."""
    thread_id = _required("thread_id", references="app_threads.id")
    return Table(name, (_key("id"), thread_id, *columns), indexes=(("thread_id",),))


batches = Table(
    "batches",
    (
        _key("id"),  # UUIDv7: sorts by creation time
        _required("created_at", "time"),
        Column("from_provider"),  # None: agents of several providers
        Column("to_provider"),  # None: each agent to its own target (a --return)
        Column("selection", "json"),  # how the agents were chosen
        Column("options", "json"),  # the switch options the batch ran with
        Column("planned", "int"),  # how many agents were selected
        _required("host"),
        _required("pid", "int"),
        _required("segue_version"),
    ),
    indexes=(("created_at",),),
)

batch_agents = Table(
    "batch_agents",
    (
        _key("batch_id", references="batches.id"),
        _key("ordinal", "int"),  # the agent's place in the selection
        _required("source_provider"),
        _required("source_session"),
        Column("source_path"),
        Column("cwd"),
        Column("pane"),  # the tmux pane it ran in
        Column("pid", "int"),
        Column("state"),  # idle / working / limit when it was selected
        Column("skipped"),  # why it was not switched
        Column("error"),  # why its switch failed
        Column("target_provider"),
        Column("target_session"),
        Column("target_path"),
        Column("label"),  # the plan's label: native / raw / shrunk
        Column("switch", "json"),  # earlier versions' whole `segue switch --json`: not written
        _required("first_provider"),  # where a --return takes it back to
        _required("first_session"),
        _required("recorded_at", "time"),
        # since 0004
        Column("strategy"),  # how the switch moved the app thread
        Column("summary"),  # the plan's one-line summary
        Column("resume_command"),
        Column("warnings", "json"),  # what the switch warned of
    ),
    indexes=(("target_provider", "target_session"),),
)

# --------------------------------------------------------------------------- the thread graph
# Append-only: a row is never changed. Mutable state lives in numbered revisions (the highest
# ``version`` of a key is current) or in rows that name the row they supersede (a successor
# exists: the older row is superseded; a unique index allows one successor only).

app_threads = Table(
    "app_threads",
    (
        _key("id"),  # UUIDv7
        _required("created_at", "time"),
        Column("title"),
        Column("cwd"),
        Column("parent_thread_id", references="app_threads.id"),  # lineage: forked from
        Column("parent_run_ordinal", "int"),  # the source point of that fork
        Column("parent_checkpoint_id"),  # the checkpoint its workspace was made from
    ),
)

provider_threads = _of_thread(
    "provider_threads",  # (its id: UUIDv7)
    _required("provider"),
    _required("created_at", "time"),
    _required("origin"),  # adopted / switch / fork
)

provider_thread_revisions = Table(
    "provider_thread_revisions",
    (
        _key("provider_thread_id", references="provider_threads.id"),
        _key("version", "int"),  # 1, 2, …: the highest is current
        _required("native_id"),  # the id the CLI resumes it by
        _required("path"),  # its current file
        _required("native_turns", "int"),  # native turns accounted for
        _required("status"),  # active / stale / divergent / rolled_back
        Column("reason"),  # why this revision was recorded
        Column("model"),
        _required("recorded_at", "time"),
        Column("stamp", "json"),  # the file as segue last saw it (segue.formats.stamp)
        Column("turns", "json"),  # its turns then: [[prompt hash, run ordinal or null], …]
        Column("former", "json"),  # files it continued from: [{path, stamp, turns}, …]
    ),
    indexes=(("native_id",),),
)

runs = Table(
    "runs",
    (
        _key("thread_id", references="app_threads.id"),
        _key("ordinal", "int"),  # 1, 2, … within the app thread
        _key("version", "int"),  # a later status is a new version
        _required("provider"),
        _required("provider_thread_id", references="provider_threads.id"),
        _required("native_turn", "int"),  # its place among the native turns, from 1
        Column("handoff_id"),  # the handoff it started with
        _required("status"),  # completed / working / failed / rolled_back / divergent
        _required("prompt"),
        Column("started_at", "time"),
        Column("ended_at", "time"),
        _required("recorded_at", "time"),
        Column("note"),  # why it failed, or why it is not on the thread's line
    ),
)

context_transfers = _of_thread(
    "context_transfers",
    _required("type"),  # switch / fork / return
    Column("source_provider_thread_id", references="provider_threads.id"),
    Column("target_provider_thread_id", references="provider_threads.id"),
    Column("source_run_ordinal", "int"),  # the source point
    _required("resolution"),  # the strategy it was resolved with
    _required("status"),  # pending / done / failed
    Column("supersedes", references="context_transfers.id", unique=True),
    _required("created_at", "time"),
)

context_handoffs = Table(
    "context_handoffs",
    (
        _key("id"),
        Column("transfer_id", references="context_transfers.id"),
        _required("thread_id", references="app_threads.id"),
        Column("target_run_ordinal", "int"),  # the run that consumes it
        _required("from_provider_threads", "json"),  # [provider thread id]
        _required("to_provider_thread_id", references="provider_threads.id"),
        _required("covers_from", "int"),
        _required("covers_to", "int"),
        _required("strategy"),
        _required("form"),  # native_items / summary
        Column("text"),  # the summary
        Column("items", "json"),  # the neutral items carried natively
        _required("status"),  # pending / ready / failed (superseded: computed)
        Column("created_by_provider"),  # None: segue's own deterministic summarizer
        Column("supersedes", references="context_handoffs.id", unique=True),
        _required("created_at", "time"),
        Column("checkpoint_id"),  # the workspace's latest checkpoint when it was made
    ),
    indexes=(("thread_id",),),
)

decisions = _of_thread(
    "decisions",
    _required("target_provider"),
    _required("strategy"),
    Column("form"),
    _required("reason"),
    Column("provider_thread_id", references="provider_threads.id"),
    Column("covers_from", "int"),
    Column("covers_to", "int"),
    Column("inputs", "json"),  # the options and facts it was decided on
    _required("created_at", "time"),
)

checkpoints = _of_thread(
    "checkpoints",  # (its id: UUIDv7)
    _required("run_ordinal", "int"),  # the run whose end it is
    _required("kind"),  # exact / approximate / safety
    Column("provider"),  # the provider of that run
    _required("folder"),  # the workspace snapshotted
    _required("repository"),  # the git dir that holds the commit
    _required("private", "bool"),  # a private repository in segue's data folder
    _required("ref"),  # refs/segue/…
    _required("commit_id"),
    _required("tree_id"),
    _required("base"),  # what its files are counted against
    Column("files", "json"),  # [[path, status, added, removed], …]
    Column("skipped", "json"),  # [[path, reason], …]: left out of the snapshot
    _required("created_at", "time"),
)

rollbacks = _of_thread(
    "rollbacks",  # (its id: UUIDv7)
    _required("to_run", "int"),  # the runs after it were rolled back
    _required("scope"),  # files+context / files / context
    Column("safety_checkpoint_id", references="checkpoints.id"),  # the folder before
    Column("target_checkpoint_id", references="checkpoints.id"),  # the one restored
    Column("runs", "json"),  # [[ordinal, status before], …]: rolled back by it
    Column("provider_threads", "json"),  # [[id, status before], …]: made divergent by it
    Column("handoffs", "json"),  # [id, …]: superseded by it
    Column("undoes", references="rollbacks.id", unique=True),  # an undo names its rollback
    Column("note"),
    _required("created_at", "time"),
)

watch_events = Table(
    "watch_events",
    (
        _key("id"),  # UUIDv7
        _required("at", "time"),
        # exhausted / waiting / family_limit / moved / move_declined / move_failed /
        # return_offered / returned / return_declined
        _required("kind"),
        Column("provider"),  # the provider it is about
        Column("batch_id", references="batches.id"),  # the batch moved or returned
        Column("reset_at", "time"),  # when the blocking window resets
        Column("sessions", "json"),  # the sessions it concerns
        Column("detail"),  # the reason, for people
        _required("host"),
        _required("pid", "int"),
    ),
    indexes=(("at",),),
)

TABLES = (
    batches,
    batch_agents,
    app_threads,
    provider_threads,
    provider_thread_revisions,
    runs,
    context_transfers,
    context_handoffs,
    decisions,
    checkpoints,
    rollbacks,
    watch_events,
)
