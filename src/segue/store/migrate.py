"""Versioned migrations (Alembic), applied when a store is opened; a new store made in one step.

The scripts are ``migrations/versions/r<NNNN>_<name>.py``, shipped in the package and run on
segue's own connection; the applied revision is in the table ``segue_schema_version``. Several
processes may open a store at once: a change runs under the database's write lock (SQLite's
``BEGIN IMMEDIATE``; PostgreSQL's transaction-scoped advisory lock), so one of them makes or
migrates it and the others find the schema at the head.

A new database is not taken through every migration: it gets the head's tables in one
transaction, from :mod:`segue.store.tables` (``segue.store.ddl``), stamped at the head, as a
later segue finds it and migrates it on. Only a database at an older revision loads Alembic
and SQLAlchemy (half a second on a slow machine, more than the rest of a command). Opening a
store that is at the head reads one row: the head is the highest revision number among the
script files, a convention a test enforces.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING

from segue.model.errors import StoreError
from segue.store import ddl
from segue.store.database import Database, Transaction

if TYPE_CHECKING:
    from alembic.config import Config
    from sqlalchemy.engine import Connection

__all__ = [
    "MIGRATIONS",
    "VERSION_TABLE",
    "alembic_config",
    "check_current",
    "current_revision",
    "head_revision",
    "revisions",
    "upgrade",
]

MIGRATIONS = Path(__file__).resolve().parent / "migrations"
VERSION_TABLE = "segue_schema_version"
_SCRIPT = re.compile(r"r(\d{4})_\w+\.py")
_ADVISORY_KEY = 0x5E6E_0001  # PostgreSQL advisory lock: "segue migrates"


def alembic_config(connection: Connection | None = None) -> Config:
    """Alembic's configuration for segue's migrations, without an ``alembic.ini``."""
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    config.set_main_option("file_template", "r%%(rev)s_%%(slug)s")
    config.attributes["connection"] = connection
    return config


def revisions() -> list[str]:
    """The revisions this segue has, oldest first: ``r0001_batches.py`` is revision ``0001``."""
    found = (_SCRIPT.fullmatch(p.name) for p in (MIGRATIONS / "versions").iterdir())
    return sorted(match.group(1) for match in found if match)


def head_revision() -> str:
    """The newest migration this segue has."""
    return revisions()[-1]


def current_revision(tx: Transaction) -> str | None:
    """The revision a database is at (None: a new database). A version table that says
    nothing usable (no row, or an empty one) beside segue's tables is :class:`StoreError`: no
    one can tell which migrations it has."""
    if not tx.table_exists(VERSION_TABLE):
        return None
    rows = tx.tuples(f"SELECT version_num FROM {VERSION_TABLE}")
    named = sorted(str(r[0]).strip() for r in rows if r[0] is not None and str(r[0]).strip())
    if not named:
        if tx.table_exists("batches") or tx.table_exists("app_threads"):
            raise StoreError(
                f"its schema version ({VERSION_TABLE}) is empty, so which migrations it has "
                "cannot be told; restore it from a backup, or move the file away to start anew"
            )
        return None
    return ",".join(named)  # one row, unless someone branched the history


def _revision(tx: Transaction, where: str) -> str | None:
    """:func:`current_revision`, refused in a line naming the database where it says nothing
    usable or is newer than this segue knows."""
    try:
        current = current_revision(tx)
    except StoreError as error:
        raise StoreError(f"{where}: {error}") from None
    if current is not None and current not in revisions():
        raise StoreError(
            f"{where}: the database is at schema revision {current}, newer than this segue "
            f"knows (its newest is {head_revision()}): upgrade segue"
        )
    return current


def check_current(db: Database, where: str) -> None:
    """Refuse (without writing) a database this segue would have to migrate first."""
    with db.transaction() as tx:
        current = _revision(tx, where)
    if current != head_revision():
        raise StoreError(
            f"{where}: the store is at schema revision {current or 'none'}; this segue "
            f"reads {head_revision()} (any command that records upgrades it)"
        )


def upgrade(db: Database, where: str, *, create: bool = True) -> None:
    """Bring the database to the head revision; a no-op (one read) when it is there. A new
    database is made at the head in one step (``create=False``: through every migration, as
    the tests compare)."""
    with db.transaction() as tx:
        current = _revision(tx, where)
    if current is None and create:
        current = _create(db, where)
    if current == head_revision():
        return
    from segue.store.engine import WRITE, make_engine

    engine = make_engine(db.connect, db.backend)
    try:
        with engine.execution_options(**{WRITE: True}).begin() as connection:
            tx = Transaction(connection.connection.driver_connection, connection.dialect.name)
            if _locked_revision(tx, where) != head_revision():  # (else another process did it)
                from alembic import command

                command.upgrade(alembic_config(connection), "head")
    finally:
        engine.dispose()


def _locked_revision(tx: Transaction, where: str) -> str | None:
    """The revision, read under the lock that makes or migrates the schema (SQLite: the write
    lock the transaction holds; PostgreSQL: an advisory one, until the transaction ends)."""
    if tx.backend == "postgresql":
        tx.execute("SELECT pg_advisory_xact_lock(:key)", {"key": _ADVISORY_KEY})
    return _revision(tx, where)


def _create(db: Database, where: str) -> str:
    """Make a new database's schema at the head and stamp it there, in one transaction under
    the write lock; the revision it is at after (another process's may have made or migrated
    it meanwhile: then it is left as it is)."""
    with db.transaction(write=True) as tx:
        current = _locked_revision(tx, where)
        if current is not None:
            return current
        if not tx.table_exists(VERSION_TABLE):
            tx.execute(ddl.version_table_statement(VERSION_TABLE))
        for statement in ddl.create_statements(tx.backend):
            tx.execute(statement)
        head = head_revision()
        tx.execute(f"INSERT INTO {VERSION_TABLE} (version_num) VALUES (:head)", {"head": head})
        return head
