"""Alembic's environment for segue's store: run on the connection segue hands over.

segue runs the migrations itself (``segue.store.migrate``), inside its own transaction and
lock; there is no ``alembic.ini`` at run time. ``segue_testbed.migration`` uses this file too,
to write a new migration.
"""

from __future__ import annotations

from typing import Any, Literal

from alembic import context
from alembic.autogenerate.api import AutogenContext
from sqlalchemy.engine import Connection

from segue.store.migrate import VERSION_TABLE
from segue.store.schema import UtcDateTime, metadata


def render_item(kind: str, obj: Any, autogen: AutogenContext) -> str | Literal[False]:
    """A new migration spells segue's column types in plain SQLAlchemy: a migration must not
    change when segue's code does."""
    if kind == "type" and isinstance(obj, UtcDateTime):
        return "sa.DateTime(timezone=True)"
    return False


def run(connection: Connection) -> None:
    context.configure(
        connection=connection,
        target_metadata=metadata,
        version_table=VERSION_TABLE,
        render_as_batch=True,  # ALTER TABLE on SQLite goes through copy-and-move
        compare_type=True,
        render_item=render_item,
    )
    with context.begin_transaction():
        context.run_migrations()


connection = context.config.attributes.get("connection")
if not isinstance(connection, Connection):
    raise RuntimeError("segue's migrations run on a connection given by segue.store.migrate")
run(connection)
