"""Alembic's environment for segue's store: run on the connection segue hands over.

segue runs the migrations itself (``segue.store.migrate``), inside its own transaction and
lock; there is no ``alembic.ini`` at run time. ``segue_testbed.migration`` uses this file too,
to write a new migration.
"""

from __future__ import annotations

from alembic import context
from sqlalchemy.engine import Connection

from segue.store.migrate import VERSION_TABLE
from segue.store.schema import metadata


def run(connection: Connection) -> None:
    context.configure(
        connection=connection,
        target_metadata=metadata,
        version_table=VERSION_TABLE,
        render_as_batch=True,  # ALTER TABLE on SQLite goes through copy-and-move
        compare_type=True,
    )
    with context.begin_transaction():
        context.run_migrations()


connection = context.config.attributes.get("connection")
if not isinstance(connection, Connection):
    raise RuntimeError("segue's migrations run on a connection given by segue.store.migrate")
run(connection)
