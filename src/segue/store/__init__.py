"""segue's store: one database for the batches of fleet switches and the thread graph.

SQLite in WAL mode by default (``segue.db`` in segue's data folder), or PostgreSQL
(``$SEGUE_DATABASE_URL``) for agents on several machines; the schema is versioned by Alembic
migrations that run when the store is opened (a new store gets the newest schema in one step,
without them)::

    from segue import Provider
    from segue.store import AgentResult, open_store

    with open_store() as store:
        batch = store.create_batch(Provider.CODEX, Provider.CLAUDE, planned=1)
        store.add_agent(batch.id, AgentResult(0, Provider.CODEX, "01a22915-…", label="native"))
        for row in store.list_batches():
            print(row.id, row.tally_line)

Records are added, never changed. Every failure is a :class:`segue.model.errors.StoreError` with one
line naming the database.
"""

from segue.store.location import database_url
from segue.store.migrate import head_revision
from segue.store.records import AgentResult
from segue.store.store import Store, open_store

__all__ = ["AgentResult", "Store", "database_url", "head_revision", "open_store"]
