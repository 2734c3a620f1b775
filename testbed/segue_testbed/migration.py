"""Write the next migration of segue's store from the tables in ``segue.store.schema``.

    uv run python -m segue_testbed.migration "thread graph"

A scratch SQLite database is migrated to the current head; Alembic compares it with
``segue.store.schema`` and writes ``src/segue/store/migrations/versions/r<NNNN>_<slug>.py``
(revision NNNN, after the current head) with the operations that make up the difference. Read
it, complete it (data moves, anything Alembic cannot see), then run ``ruff format`` and the
store tests (which check the migrated schema against ``schema.py`` on SQLite and PostgreSQL).
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from alembic import command

from segue.store.database import Database
from segue.store.engine import make_engine
from segue.store.location import database_url
from segue.store.migrate import alembic_config, head_revision, upgrade


def write_migration(message: str) -> Path:
    with tempfile.TemporaryDirectory() as scratch:
        url = database_url(f"sqlite:///{scratch}/scratch.db")
        db = Database(url, wait=60)
        # through the scripts: a store made in one step would have tables.py's change already
        upgrade(db, "scratch", create=False)
        db.close()
        engine = make_engine(db.connect, db.backend)
        try:
            with engine.begin() as connection:
                number = f"{int(head_revision()) + 1:04d}"
                script = command.revision(
                    alembic_config(connection), message=message, autogenerate=True, rev_id=number
                )
        finally:
            engine.dispose()
    assert script is not None and not isinstance(script, list)
    return Path(script.path)


def main(argv: list[str]) -> None:
    if not argv:
        raise SystemExit(__doc__)
    print(write_migration(" ".join(argv)))


if __name__ == "__main__":
    main(sys.argv[1:])
