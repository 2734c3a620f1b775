"""A new store is made in one step, at the head, without Alembic or SQLAlchemy: with exactly the
schema a store migrated from the first revision has (on SQLite and PostgreSQL), stamped so that
Alembic and a later segue find it at the head, and refused in one line where it cannot be."""

from __future__ import annotations

import os
import re
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from alembic import command
from alembic.runtime.migration import MigrationContext

from segue.model.conversation import Provider
from segue.model.errors import StoreError
from segue.store import head_revision, migrate, open_store
from segue.store.database import Database
from segue.store.engine import WRITE, make_engine
from segue.store.location import database_url as parse_url
from segue.store.migrate import MIGRATIONS, VERSION_TABLE, alembic_config
from segue.store.tables import NAMING, TABLES


def migrate_through_the_scripts(url: str, to: str = "head") -> None:
    """Run the migrations from the first to ``to`` through Alembic, as an older store was made."""
    db = Database(parse_url(url), wait=60)
    engine = make_engine(db.connect, db.backend)
    try:
        with engine.execution_options(**{WRITE: True}).begin() as connection:
            command.upgrade(alembic_config(connection), to)
    finally:
        engine.dispose()
        db.close()


def schema_of(url: str) -> dict[str, Any]:
    """Everything the database says about its tables, normalised only where the order means
    nothing (foreign keys; indexes are listed by name): columns in order with their types,
    NOT NULL and key positions, constraints and indexes with their names."""
    engine = sa.create_engine(url)
    try:
        with engine.connect() as connection:
            if engine.dialect.name == "sqlite":
                found = _sqlite_schema(connection)
            else:
                found = _postgres_schema(connection)
        inspector = sa.inspect(engine)
        names = {}
        for name in sorted(inspector.get_table_names()):
            names[name] = {
                "pk": inspector.get_pk_constraint(name),
                "fk": sorted(
                    (
                        fk["name"],
                        tuple(fk["constrained_columns"]),
                        fk["referred_table"],
                        tuple(fk["referred_columns"]),
                    )
                    for fk in inspector.get_foreign_keys(name)
                ),
                "uq": sorted(
                    (uq["name"], tuple(uq["column_names"]))
                    for uq in inspector.get_unique_constraints(name)
                ),
                "ix": sorted(
                    (ix["name"], tuple(map(str, ix["column_names"])), ix["unique"])
                    for ix in inspector.get_indexes(name)
                ),
            }
    finally:
        engine.dispose()
    return {"database": found, "names": names}


def _sqlite_schema(connection: sa.Connection) -> dict[str, Any]:
    def pragma(sql: str) -> list[tuple[Any, ...]]:
        return [tuple(r) for r in connection.exec_driver_sql(sql)]

    tables = [
        r[0] for r in pragma("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
    ]
    out: dict[str, Any] = {}
    for table in tables:
        fks: dict[int, list[tuple[Any, ...]]] = {}
        for fk_id, seq, referred, column, to, on_update, on_delete, match in pragma(
            f"PRAGMA foreign_key_list({table})"
        ):
            fks.setdefault(fk_id, []).append(
                (seq, referred, column, to, on_update, on_delete, match)
            )
        out[table] = {
            "columns": pragma(f"PRAGMA table_info({table})"),
            "indexes": sorted(
                (name, unique, origin, partial, pragma(f"PRAGMA index_info({name})"))
                for _, name, unique, origin, partial in pragma(f"PRAGMA index_list({table})")
            ),
            "foreign_keys": sorted(sorted(rows) for rows in fks.values()),
        }
    return out


def _postgres_schema(connection: sa.Connection) -> dict[str, Any]:
    def rows(sql: str) -> list[tuple[Any, ...]]:
        return [tuple(r) for r in connection.exec_driver_sql(sql)]

    return {
        "columns": rows(
            "SELECT table_name, ordinal_position, column_name, data_type, is_nullable, "
            "column_default, character_maximum_length FROM information_schema.columns "
            "WHERE table_schema = current_schema() ORDER BY table_name, ordinal_position"
        ),
        # (NOT NULL shows as a CHECK named by object ids: it is in the columns)
        "constraints": rows(
            "SELECT tc.table_name, tc.constraint_name, tc.constraint_type, "
            "pg_get_constraintdef(c.oid), c.condeferrable, c.confupdtype, c.confdeltype "
            "FROM information_schema.table_constraints tc JOIN pg_constraint c "
            "ON c.conname = tc.constraint_name "
            "AND c.connamespace = current_schema()::regnamespace "
            "WHERE tc.table_schema = current_schema() AND tc.constraint_type <> 'CHECK' "
            "ORDER BY tc.table_name, tc.constraint_name"
        ),
        "indexes": rows(
            "SELECT tablename, indexname, indexdef FROM pg_indexes "
            "WHERE schemaname = current_schema() ORDER BY tablename, indexname"
        ),
    }


def made_in_one_step(url: str) -> str:
    open_store(url).close()
    return url


def another_new_store(url: str, request: pytest.FixtureRequest, name: str) -> str:
    """A new store's URL beside ``url``: a file in the same folder, a database on the same
    server."""
    if url.startswith("sqlite"):
        return f"sqlite:///{Path(sa.make_url(url).database or '').parent / name / 'segue.db'}"
    return str(request.getfixturevalue("postgres").create_database())


def test_a_store_made_in_one_step_has_exactly_the_schema_of_one_migrated_from_the_first(
    database_url: str, request: pytest.FixtureRequest
) -> None:
    migrated = another_new_store(database_url, request, "migrated")
    migrate_through_the_scripts(migrated)
    made = schema_of(made_in_one_step(database_url))
    assert made == schema_of(migrated)
    assert set(made["names"]) == {t.name for t in TABLES} | {VERSION_TABLE}
    with open_store(database_url) as store:
        assert store.schema_revision() == head_revision()


@pytest.mark.parametrize(
    "wrong",
    [
        {"time": ("TIMESTAMP", "TIMESTAMP WITHOUT TIME ZONE")},
        {"uq": "%(table_name)s_%(column_0_name)s_key"},
    ],
)
def test_the_comparison_tells_a_type_or_a_name_apart(
    database_url: str,
    request: pytest.FixtureRequest,
    monkeypatch: pytest.MonkeyPatch,
    wrong: dict[str, Any],
) -> None:
    """The comparison above can fail: a store made with one type or one name wrong differs."""
    from segue.store import ddl

    if "time" in wrong:
        monkeypatch.setitem(ddl._TYPES["sqlite"], "time", wrong["time"][0])
        monkeypatch.setitem(ddl._TYPES["postgresql"], "time", wrong["time"][1])
    else:
        monkeypatch.setattr(ddl, "NAMING", {**NAMING, **wrong})
    made_in_one_step(database_url)
    monkeypatch.undo()
    right = made_in_one_step(another_new_store(database_url, request, "right"))
    assert schema_of(database_url) != schema_of(right)


def test_a_new_store_loads_neither_alembic_nor_sqlalchemy(database_url: str) -> None:
    probe = (
        "import sys; from segue.store import open_store; "
        f"s = open_store({database_url!r}); print(s.schema_revision(), s.list_batches(), "
        "sorted(m for m in ('alembic', 'sqlalchemy') if m in sys.modules))"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"{head_revision()} [] []\n"


def test_the_first_command_on_a_machine_loads_neither_alembic_nor_sqlalchemy(
    tmp_path: Path,
) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SEGUE_")}
    env.update(HOME=str(tmp_path), SEGUE_DATA_DIR=str(tmp_path / "data"))
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "segue", "batches"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert (tmp_path / "data" / "segue.db").is_file()  # it made the store
    loaded = {
        line.rsplit("|", 1)[-1].strip()
        for line in done.stderr.splitlines()
        if line.startswith("import time:")
    }
    assert "segue.store.ddl" in loaded
    assert not {"alembic", "sqlalchemy"} & loaded


def test_a_store_made_in_one_step_is_at_the_head_and_a_later_segue_migrates_it(
    database_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    made_in_one_step(database_url)
    engine = sa.create_engine(database_url)
    with engine.connect() as connection:
        context = MigrationContext.configure(connection, opts={"version_table": VERSION_TABLE})
        assert context.get_current_heads() == (head_revision(),)
    engine.dispose()
    open_store(database_url, read_only=True).close()  # check_current: at the head
    # a later segue: one more migration, which needs the constraints' and indexes' names
    later = tmp_path / "later-migrations"
    shutil.copytree(MIGRATIONS, later, ignore=shutil.ignore_patterns("__pycache__"))
    head = head_revision()
    newer = f"{int(head) + 1:04d}"
    (later / "versions" / f"r{newer}_later.py").write_text(
        f'''"""A later segue's migration."""
import sqlalchemy as sa
from alembic import op

revision = "{newer}"
down_revision = "{head}"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("rollbacks") as batch_op:
        batch_op.drop_constraint("uq_rollbacks_undoes", type_="unique")
        batch_op.drop_constraint("fk_rollbacks_undoes_rollbacks", type_="foreignkey")
        batch_op.drop_index("ix_rollbacks_thread_id")
        batch_op.add_column(sa.Column("later", sa.Text(), nullable=True))


def downgrade() -> None:
    raise NotImplementedError
'''
    )
    monkeypatch.setattr(migrate, "MIGRATIONS", later)
    with pytest.raises(StoreError, match=f"at schema revision {head}; this segue reads {newer}"):
        open_store(database_url, read_only=True)
    with open_store(database_url) as store:
        assert store.schema_revision() == newer
    engine = sa.create_engine(database_url)
    inspector = sa.inspect(engine)
    assert inspector.get_unique_constraints("rollbacks") == []
    assert "fk_rollbacks_undoes_rollbacks" not in {
        fk["name"] for fk in inspector.get_foreign_keys("rollbacks")
    }
    assert inspector.get_indexes("rollbacks") == []
    assert "later" in {c["name"] for c in inspector.get_columns("rollbacks")}
    engine.dispose()


def test_a_store_at_an_older_revision_is_migrated_not_made_anew(
    database_url: str, request: pytest.FixtureRequest
) -> None:
    migrate_through_the_scripts(database_url, "0004")
    engine = sa.create_engine(database_url)
    with engine.begin() as connection:
        connection.exec_driver_sql(
            "INSERT INTO batches (id, created_at, host, pid, segue_version) "
            "VALUES ('b-0004', '2026-01-02 03:04:05.000000', 'h', 1, '0.1')"
        )
    engine.dispose()
    with open_store(database_url) as store:
        assert store.schema_revision() == head_revision()
        assert [b.id for b in store.list_batches()] == ["b-0004"]
    made = made_in_one_step(another_new_store(database_url, request, "made"))
    assert schema_of(database_url) == schema_of(made)


def test_an_empty_version_table_without_segue_tables_is_a_new_store(database_url: str) -> None:
    if database_url.startswith("sqlite"):
        Path(sa.make_url(database_url).database or "").parent.mkdir()
    engine = sa.create_engine(database_url)
    with engine.begin() as connection:
        connection.exec_driver_sql(
            f"CREATE TABLE {VERSION_TABLE} (version_num VARCHAR(32) NOT NULL, "
            f"CONSTRAINT {VERSION_TABLE}_pkc PRIMARY KEY (version_num))"
        )
    engine.dispose()
    with open_store(database_url) as store:
        assert store.schema_revision() == head_revision()
        store.create_batch(Provider.CODEX, Provider.CLAUDE)


def test_an_empty_version_table_beside_the_tables_is_refused_in_one_line(
    database_url: str,
) -> None:
    made_in_one_step(database_url)
    engine = sa.create_engine(database_url)
    with engine.begin() as connection:
        connection.exec_driver_sql(f"DELETE FROM {VERSION_TABLE}")
    engine.dispose()
    for read_only in (False, True):
        with pytest.raises(StoreError) as refused:
            open_store(database_url, read_only=read_only)
        assert f"its schema version ({VERSION_TABLE}) is empty" in str(refused.value)
        assert "\n" not in str(refused.value)


def test_a_new_store_another_process_holds_locked_is_refused_in_one_line(tmp_path: Path) -> None:
    path = tmp_path / "segue.db"
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sqlite3, sys\n"
            f"c = sqlite3.connect({str(path)!r}, isolation_level=None)\n"
            "c.execute('PRAGMA journal_mode = WAL')\n"
            "c.execute('BEGIN IMMEDIATE'); print('locked', flush=True); sys.stdin.read()",
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "locked\n"
        with pytest.raises(StoreError) as failed:
            open_store(f"sqlite:///{path}?timeout=0.5")
    finally:
        holder.communicate("", timeout=30)
    assert str(failed.value) == (
        f"{path}: cannot open segue's database: locked by another process for too long; "
        "try again when it is done"
    )
    with open_store(f"sqlite:///{path}") as store:  # and once it is free, it is made
        assert store.schema_revision() == head_revision()
    with sqlite3.connect(path) as check:
        assert check.execute(f"SELECT version_num FROM {VERSION_TABLE}").fetchall() == [
            (head_revision(),)
        ]


def test_a_new_migration_is_written_against_the_scripts_head_not_a_store_made_in_one_step(
    tmp_path: Path,
) -> None:
    """``segue_testbed.migration`` compares tables.py with a store at the scripts' head: one
    made in one step would have the new column already, and the migration would be empty."""
    migrations = tmp_path / "migrations"
    shutil.copytree(MIGRATIONS, migrations, ignore=shutil.ignore_patterns("__pycache__"))
    probe = f"""
from segue.store import tables
from segue.store.tables import Column, Table
old = tables.watch_events
new = Table(old.name, (*old.columns, Column("added_later")), old.indexes)
tables.TABLES = tuple(new if t is old else t for t in tables.TABLES)
from segue.store import ddl  # (loaded with segue.store: it took TABLES before the edit)
ddl.TABLES = tables.TABLES
from pathlib import Path
from segue.store import migrate
migrate.MIGRATIONS = Path({str(migrations)!r})
from segue_testbed.migration import write_migration
print(write_migration("added later").read_text())
"""
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert re.search(r"add_column\(sa\.Column\(['\"]added_later['\"]", done.stdout)
