"""segue's store, on a SQLite file and on a real PostgreSQL server: migrations, the batch API,
and every way opening it can fail (one line, never a traceback)."""

from __future__ import annotations

import re
import socket
import sqlite3
import stat
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import orjson
import pytest
import sqlalchemy as sa
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from msgspec.structs import replace

import segue
from segue.cli.documents import batch_to_json
from segue.model.conversation import Provider
from segue.model.errors import StoreError
from segue.store import AgentResult, Store, database_url, head_revision, open_store
from segue.store.migrate import MIGRATIONS, VERSION_TABLE, alembic_config, revisions
from segue.store.schema import metadata
from segue_testbed.postgres import PostgresServer
from tests.test_store_schema import migrate_through_the_scripts


@pytest.fixture
def store(database_url: str) -> Iterator[Store]:
    with open_store(database_url) as opened:
        yield opened


def _versions(url: str) -> list[str]:
    engine = sa.create_engine(url)
    try:
        with engine.connect() as connection:
            return list(
                connection.execute(sa.text(f"SELECT version_num FROM {VERSION_TABLE}")).scalars()
            )
    finally:
        engine.dispose()


# migrations


def test_a_new_store_is_migrated_to_the_head(database_url: str) -> None:
    with open_store(database_url) as store:
        assert store.schema_revision() == head_revision() == revisions()[-1]
    engine = sa.create_engine(database_url)
    tables = set(sa.inspect(engine).get_table_names())
    engine.dispose()
    assert {"batches", "batch_agents", VERSION_TABLE} <= tables
    assert _versions(database_url) == [head_revision()]


def test_reopening_keeps_the_data_and_loads_no_alembic_nor_sqlalchemy(database_url: str) -> None:
    with open_store(database_url) as store:
        batch = store.create_batch(Provider.CODEX, Provider.CLAUDE)
    probe = (
        "import sys; from segue.store import open_store; "
        f"s = open_store({database_url!r}); "
        "print(s.schema_revision(), [b.id for b in s.list_batches()], "
        "'alembic' in sys.modules or 'sqlalchemy' in sys.modules)"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split(" ", 1) == [head_revision(), f"['{batch.id}'] False\n"]
    assert _versions(database_url) == [head_revision()]


def test_opening_a_new_file_another_connection_is_writing_waits_for_it(tmp_path: Path) -> None:
    # SQLite refuses the switch to WAL at once, busy timeout or not, while another connection
    # writes the file in its first journal mode (as when a fleet's parallel switches create
    # the store together); opening waits instead of failing
    path = tmp_path / "segue.db"
    writer = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    writer.execute("BEGIN IMMEDIATE")
    writer.execute("CREATE TABLE someone_elses (x)")
    releaser = threading.Timer(0.5, writer.execute, ["COMMIT"])
    releaser.start()
    try:
        with open_store(f"sqlite:///{path}") as opened:
            assert opened.list_batches() == []
    finally:
        releaser.join()
        writer.close()
    with sqlite3.connect(path) as check:
        assert check.execute("PRAGMA journal_mode").fetchone() == ("wal",)


@pytest.mark.parametrize("made", ["in one step", "through every migration"])
def test_the_migrated_schema_is_the_schema_the_code_queries(database_url: str, made: str) -> None:
    if made == "in one step":
        open_store(database_url).close()
    else:
        migrate_through_the_scripts(database_url)
    engine = sa.create_engine(database_url)
    with engine.connect() as connection:
        context = MigrationContext.configure(
            connection, opts={"compare_type": True, "version_table": VERSION_TABLE}
        )
        assert compare_metadata(context, metadata) == []
    engine.dispose()


def test_migration_scripts_form_one_numbered_line() -> None:
    """rNNNN_name.py holds revision NNNN, after revision NNNN-1: the store finds the head
    without loading Alembic, and a new script that breaks the line fails here."""
    scripts = ScriptDirectory.from_config(alembic_config())
    assert scripts.get_heads() == [head_revision()]
    files = sorted(p.name for p in (MIGRATIONS / "versions").glob("*.py") if p.stem != "__init__")
    assert [name[1:5] for name in files] == revisions()
    expected_down = None
    for number in revisions():
        script = scripts.get_revision(number)
        assert script is not None and script.down_revision == expected_down, number
        expected_down = number


def test_a_database_from_a_newer_segue_is_refused(database_url: str) -> None:
    open_store(database_url).close()
    engine = sa.create_engine(database_url)
    with engine.begin() as connection:
        connection.execute(sa.text(f"UPDATE {VERSION_TABLE} SET version_num = '9999'"))
    engine.dispose()
    with pytest.raises(StoreError, match=r"schema revision 9999, newer than this segue.*upgrade"):
        open_store(database_url)


def test_a_switch_document_an_earlier_version_recorded_is_still_shown(database_url: str) -> None:
    """Revision 0003 kept a switched agent's whole ``segue switch --json`` document; back at
    0003 and upgraded again, the row reads back with it, its typed fields taken from it."""
    from alembic import command

    batches, batch_agents = metadata.tables["batches"], metadata.tables["batch_agents"]

    open_store(database_url).close()
    engine = sa.create_engine(database_url)
    at = datetime(2026, 11, 1, 10, tzinfo=UTC)
    document = {
        "session_id": "t-1", "strategy": "raw", "notes": ["kept"], "summary": "raw: 1 dropped",
        "resume_command": "cd -- /src && claude --resume t-1", "warnings": ["w"],
        "thread": {"strategy": "full_into_new"},
    }  # fmt: skip
    with engine.begin() as connection:
        command.downgrade(alembic_config(connection), "0003")
        connection.execute(
            batches.insert().values(
                id="b-old", created_at=at, from_provider="codex", to_provider="claude",
                host="an-older-host", pid=1, segue_version="0.1.0",
            )
        )  # fmt: skip
        connection.execute(
            batch_agents.insert().values(
                batch_id="b-old", ordinal=0, source_provider="codex", source_session="s-1",
                target_provider=Provider.CLAUDE, target_session="t-1", label="raw", switch=document,
                first_provider=Provider.CODEX, first_session="s-1", recorded_at=at,
            )
        )  # fmt: skip
    engine.dispose()
    with open_store(database_url) as store:
        assert store.schema_revision() == head_revision()
        batch = store.get_batch("b-old")
    (agent,) = batch.agents
    assert agent.result.switch == document
    # the typed fields it did not have are read from it
    assert (agent.result.summary, agent.result.strategy, agent.result.warnings) == (
        "raw: 1 dropped", "full_into_new", ("w",),
    )  # fmt: skip
    assert agent.result.resume_command == "cd -- /src && claude --resume t-1"
    shown = batch_to_json(batch)["agents"][0]
    assert shown["switch"] == document and shown["thread_strategy"] == "full_into_new"


# the batch API


def test_a_batch_and_its_agents_round_trip(database_url: str, tmp_path: Path) -> None:
    conversation = segue.Conversation(
        meta=segue.SessionMeta(segue.Provider.CODEX, "src-1", "", cwd=str(tmp_path)),
        items=[
            segue.UserMessage("Say hello — ünïcode.", segue.Provenance("memory", 1)),
            segue.AssistantMessage("Hello.", segue.Provenance("memory", 2)),
        ],
    )
    switched = segue.switch_conversation(
        conversation, segue.Provider.CLAUDE, env={"HOME": str(tmp_path)}
    )
    before = datetime.now(UTC)
    with open_store(database_url) as store:
        header = store.create_batch(
            Provider.CODEX,
            Provider.CLAUDE,
            selection={"state": ["limit"], "cwd": str(tmp_path)},
            options={"dry_run": False},
            planned=3,
        )
        done = AgentResult(
            0, Provider.CODEX, "src-1", path="/x/rollout.jsonl", cwd=str(tmp_path), pane="%3",
            pid=4242, state="limit", target_provider=Provider.CLAUDE,
            target_session=switched.session_id, target_path=str(switched.path),
            label=switched.plan.label.value, summary=switched.plan.loss_line,
            resume_command=switched.resume_command, warnings=("a warning",),
        )  # fmt: skip
        skipped = AgentResult(
            1, Provider.CODEX, "src-2", state="working", skipped="a turn is running"
        )
        failed = AgentResult(
            2, Provider.CODEX, "src-3", state="limit", error="cannot read the file"
        )
        for result in (failed, done, skipped):  # recorded as they finish, in any order
            store.add_agent(header.id, result)
    with open_store(database_url) as store:
        batch = store.get_batch(header.id)
    assert batch.header == header
    assert before - timedelta(seconds=1) <= header.created_at <= datetime.now(UTC)
    assert header.created_at.tzinfo is UTC and batch.header.created_at.tzinfo is UTC
    assert [a.result.ordinal for a in batch.agents] == [0, 1, 2]
    first = batch.agents[0].result
    assert (first.target_provider, first.target_session, first.label) == (
        "claude",
        switched.session_id,
        "native",
    )
    assert first.target_path == str(switched.path)
    assert first.switch is None and first == replace(
        done, first_provider=Provider.CODEX, first_session="src-1"
    )
    assert (first.first_provider, first.first_session) == ("codex", "src-1")
    assert batch.agents[1].result == AgentResult(
        1, Provider.CODEX, "src-2", state="working", skipped="a turn is running",
        first_provider=Provider.CODEX, first_session="src-2",
    )  # fmt: skip
    assert [a.outcome for a in batch.agents] == ["native", "skipped", "failed"]
    assert batch.tally == {"native": 1, "skipped": 1, "failed": 1}
    doc = batch_to_json(batch)
    assert {"batch", "from", "to", "created_at", "agents"} <= doc.keys()
    assert (doc["batch"], doc["from"], doc["to"]) == (header.id, "codex", "claude")
    issue_shape = {"session", "provider", "cwd", "pane", "state", "skipped", "error", "switch"}
    assert issue_shape <= doc["agents"][0].keys()
    assert doc["agents"][0]["switch"]["session_id"] == switched.session_id
    assert doc["agents"][0]["resume_command"] == switched.resume_command
    assert doc["agents"][0]["warnings"] == ["a warning"]
    assert doc["agents"][1]["skipped"] == "a turn is running" and doc["agents"][1]["switch"] is None


def test_batches_are_listed_newest_first_with_their_tally(store: Store) -> None:
    assert store.list_batches() == []
    first = store.create_batch(Provider.CODEX, Provider.CLAUDE, planned=10)
    labels = ["native"] * 5 + ["raw"] * 3 + ["shrunk"]
    for n, label in enumerate(labels):
        store.add_agent(first.id, AgentResult(n, Provider.CODEX, f"s{n}", label=label))
    store.add_agent(first.id, AgentResult(9, Provider.CODEX, "s9", skipped="working"))
    second = store.create_batch(Provider.CLAUDE, Provider.CODEX)
    store.add_agent(second.id, AgentResult(0, Provider.CLAUDE, "c0", error="the target exists"))
    empty = store.create_batch(None, None)
    listed = store.list_batches()
    assert [b.id for b in listed] == [empty.id, second.id, first.id]
    assert listed[2].tally_line == "5 native, 3 raw, 1 shrunk, 1 skipped"
    assert (listed[2].agents, listed[2].planned) == (10, 10)
    assert listed[1].tally == {"failed": 1}
    assert (listed[0].agents, listed[0].tally_line) == (0, "no agents")
    assert [b.id for b in store.list_batches(limit=2)] == [empty.id, second.id]
    assert store.list_batches(limit=2)[1].tally == {"failed": 1}


def test_a_batch_is_found_by_a_unique_prefix(store: Store) -> None:
    ids = [store.create_batch(Provider.CODEX, Provider.CLAUDE).id for _ in range(3)]
    for batch_id in ids:
        assert store.find_batch(batch_id).id == batch_id
        assert store.find_batch(batch_id.upper()).id == batch_id
        unique = next(
            batch_id[:n] for n in range(1, 37) if sum(i.startswith(batch_id[:n]) for i in ids) == 1
        )
        assert store.find_batch(unique).id == batch_id
    shared = ids[0][:8]  # created within the same minute: the time part is shared
    with pytest.raises(StoreError) as ambiguous:
        store.find_batch(shared)
    message = str(ambiguous.value)
    assert "ambiguous" in message and "\n" not in message
    assert all(batch_id in message for batch_id in ids)
    for nothing in ("ffffffff", "%", "_", "", "01a2' OR '1'='1"):
        with pytest.raises(StoreError, match="no batch"):
            store.find_batch(nothing)


def test_an_agent_is_recorded_once(store: Store) -> None:
    batch = store.create_batch(Provider.CODEX, Provider.CLAUDE)
    store.add_agent(batch.id, AgentResult(0, Provider.CODEX, "a", label="native"))
    with pytest.raises(StoreError, match=r"already has agent #0"):
        store.add_agent(batch.id, AgentResult(0, Provider.CODEX, "b", error="later"))
    (agent,) = store.get_batch(batch.id).agents
    assert (agent.result.session, agent.result.label, agent.result.error) == ("a", "native", None)
    with pytest.raises(StoreError, match="no batch nope"):
        store.add_agent("nope", AgentResult(1, Provider.CODEX, "a"))
    with pytest.raises(StoreError, match="no batch"):
        store.get_batch("nope")


def test_an_agent_remembers_the_session_it_started_as(store: Store) -> None:
    """What ``segue switch --return`` needs: however often it moved, where it began."""
    out = store.create_batch(Provider.CODEX, Provider.CLAUDE)
    store.add_agent(
        out.id,
        AgentResult(
            0,
            Provider.CODEX,
            "c1",
            target_provider=Provider.CLAUDE,
            target_session="k1",
            label="raw",
        ),
    )
    back = store.create_batch(Provider.CLAUDE, Provider.CODEX)
    store.add_agent(
        back.id,
        AgentResult(
            0,
            Provider.CLAUDE,
            "k1",
            target_provider=Provider.CODEX,
            target_session="c2",
            label="raw",
        ),
    )
    again = store.create_batch(Provider.CODEX, Provider.CLAUDE)
    store.add_agent(again.id, AgentResult(0, Provider.CODEX, "c2", skipped="idle"))
    store.add_agent(again.id, AgentResult(1, Provider.CODEX, "c9"))
    store.add_agent(
        again.id,
        AgentResult(2, Provider.CODEX, "c7", first_provider=Provider.CLAUDE, first_session="k0"),
    )
    firsts = [
        (a.result.first_provider, a.result.first_session)
        for b in (back, again)
        for a in store.get_batch(b.id).agents
    ]
    assert firsts == [("codex", "c1"), ("codex", "c1"), ("codex", "c9"), ("claude", "k0")]


# where the store is, and how opening it fails


def test_the_default_store_is_private_in_the_data_folder(tmp_path: Path) -> None:
    data = tmp_path / "a" / "b"
    with open_store(env={"SEGUE_DATA_DIR": str(data)}) as store:
        store.create_batch(Provider.CODEX, Provider.CLAUDE)
        assert store.where == str(data / "segue.db")
        assert store.backend == "sqlite"
    for folder in (tmp_path / "a", data):
        assert stat.S_IMODE(folder.stat().st_mode) == 0o700, folder
    assert stat.S_IMODE((data / "segue.db").stat().st_mode) == 0o600
    journal = sqlite3.connect(data / "segue.db").execute("PRAGMA journal_mode").fetchone()
    assert journal == ("wal",)


def test_the_url_comes_from_the_argument_then_the_environment(tmp_path: Path) -> None:
    env = {
        "SEGUE_DATABASE_URL": f"sqlite:///{tmp_path / 'env.db'}",
        "SEGUE_DATA_DIR": "/nonexistent",
    }
    with open_store(env=env) as store:
        assert store.where == str(tmp_path / "env.db")
    with open_store(f"sqlite:///{tmp_path / 'arg.db'}", env=env) as store:
        assert store.where == str(tmp_path / "arg.db")
    for spelling in ("postgres://u@h/db", "postgresql://u@h/db", "postgresql+psycopg://u@h/db"):
        assert database_url(spelling).drivername == "postgresql+psycopg"
        assert database_url(spelling).backend == "postgresql"


def test_postgres_urls_without_the_driver_name_reach_the_server(postgres: PostgresServer) -> None:
    url = postgres.create_database()
    plain = url.replace("postgresql+psycopg://", "postgres://")
    with open_store(plain) as store:
        assert store.backend == "postgresql"
        assert store.schema_revision() == head_revision()
        assert "psycopg" not in store.where


@pytest.mark.parametrize(
    ("url", "says"),
    [
        ("not a url", "not a database URL"),
        ("mysql://root@localhost/segue", "is a mysql:// URL"),
        ("postgresql+psycopg2://u@h/db", "is a postgresql+psycopg2:// URL"),
        ("sqlite:///tmp/segue.db?mode=ro", "has ?mode=, not an option segue knows for SQLite"),
        ("sqlite:///:memory:", "names an in-memory SQLite database"),
    ],
)
def test_a_bad_url_is_one_line(url: str, says: str) -> None:
    with pytest.raises(StoreError, match=re.escape(says)) as failed:
        open_store(env={"SEGUE_DATABASE_URL": url})
    assert "\n" not in str(failed.value)
    assert str(failed.value).startswith("SEGUE_DATABASE_URL ")


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_an_unreachable_server_is_one_line_without_the_password() -> None:
    url = f"postgresql://segue:hunter2@127.0.0.1:{_closed_port()}/segue"
    started = time.monotonic()
    with pytest.raises(StoreError) as failed:
        open_store(url)
    message = str(failed.value)
    assert message.startswith(f"postgresql://segue:***@127.0.0.1:{url.split(':')[3]}")
    assert (
        "cannot connect: Connection refused" in message
        and "hunter2" not in message
        and "\n" not in message
    )
    assert time.monotonic() - started < 30


def test_a_missing_database_on_a_real_server_is_one_line(postgres: PostgresServer) -> None:
    with pytest.raises(
        StoreError, match=r'the server refused the connection: database "nope" does not exist$'
    ) as failed:
        open_store(postgres.url("nope"))
    assert "\n" not in str(failed.value)


def test_a_corrupt_sqlite_file_is_one_line(tmp_path: Path) -> None:
    path = tmp_path / "segue.db"
    path.write_bytes(b"this is not a database, it is a shopping list\n" * 200)
    with pytest.raises(StoreError) as failed:
        open_store(f"sqlite:///{path}")
    assert str(failed.value) == (
        f"{path}: cannot open segue's database: not a SQLite database, or it is corrupt"
    )
    assert path.read_bytes().startswith(b"this is not a database")  # left as it was


def test_a_locked_sqlite_file_is_one_line_and_readers_are_not_blocked(tmp_path: Path) -> None:
    path = tmp_path / "segue.db"
    with open_store(f"sqlite:///{path}") as store:
        store.create_batch(Provider.CODEX, Provider.CLAUDE)
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sqlite3, sys, time\n"
            f"c = sqlite3.connect({str(path)!r}, isolation_level=None)\n"
            "c.execute('BEGIN IMMEDIATE'); print('locked', flush=True); sys.stdin.read()",
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "locked\n"
        with open_store(f"sqlite:///{path}?timeout=0.5") as store:
            assert len(store.list_batches()) == 1  # WAL: reading while another process writes
            with pytest.raises(StoreError) as failed:
                store.create_batch(Provider.CODEX, Provider.CLAUDE)
    finally:
        holder.communicate("", timeout=30)
    assert str(failed.value) == (
        f"{path}: cannot record the batch: locked by another process for too long; "
        "try again when it is done"
    )
    with open_store(f"sqlite:///{path}") as store:
        assert len(store.list_batches()) == 1


def test_times_of_any_year_read_back_and_one_out_of_range_is_one_line(database_url: str) -> None:
    """A time is stored as SQLAlchemy stored it (the year padded to four digits, so year 999
    reads back and sorts); a time before the first UTC day is refused in one line."""
    from datetime import timezone

    from segue.threads import ThreadStore
    from tests.thread_records import NewRun, add_provider_thread, record_runs

    with open_store(database_url) as store:
        threads = ThreadStore(store)
        thread = threads.create_thread(title="t", cwd="/src")
        pt = add_provider_thread(
            store, thread.id, provider=Provider.CODEX, origin="adopted", native_id="n-1",
            path="/p", native_turns=2, model=None,
        )  # fmt: skip
        early, late = datetime(999, 11, 29, 20, 51, tzinfo=UTC), datetime(2026, 1, 1, tzinfo=UTC)
        record_runs(store, thread.id, [NewRun(pt, 1, "a", started_at=early, ended_at=late)])
        (run,) = threads.graph(thread.id).runs
        assert (run.started_at, run.ended_at) == (early, late)
        too_early = datetime(1, 1, 1, 0, 30, tzinfo=timezone(timedelta(hours=1)))
        with pytest.raises(StoreError, match=r"cannot record runs .*out of range$") as failed:
            record_runs(store, thread.id, [NewRun(pt, 2, "b", started_at=too_early)])
        assert "\n" not in str(failed.value)
        assert len(threads.graph(thread.id).runs) == 1


@pytest.mark.parametrize(
    ("url", "keywords", "shown"),
    [
        (
            "postgresql://segue:pa/ss#w?rd@db.internal:5433/segue?sslmode=require",
            {"user": "segue", "password": "pa/ss#w?rd", "host": "db.internal", "port": "5433",
             "dbname": "segue", "sslmode": "require"},
            "postgresql://segue:***@db.internal:5433/segue?sslmode=require",
        ),
        (
            "postgres://u:p%40ss%25zz@[2001:db8::1]/d%20b",
            {"user": "u", "password": "p@ss%zz", "host": "2001:db8::1", "dbname": "d b"},
            "postgresql://u:***@[2001:db8::1]/d%20b",
        ),
        (
            "postgresql://u@h1:5432,h2:5433/db?connect_timeout=3",
            {"user": "u", "host": "h1,h2", "port": "5432,5433", "dbname": "db",
             "connect_timeout": "3"},
            "postgresql://u@h1:5432,h2:5433/db?connect_timeout=3",
        ),
        ("postgresql:///db?host=/var/run/postgresql", {"dbname": "db",
         "host": "/var/run/postgresql"}, "postgresql:///db?host=/var/run/postgresql"),
        # segue's own option (how long a lock is waited for), not libpq's
        ("postgresql://u@h/db?timeout=5&sslmode=require", {"user": "u", "host": "h",
         "dbname": "db", "sslmode": "require"}, "postgresql://u@h/db?timeout=5&sslmode=require"),
    ],
)  # fmt: skip
def test_a_postgres_url_reaches_libpq_whole_and_its_password_is_never_shown(
    url: str, keywords: dict[str, str], shown: str
) -> None:
    parsed = database_url(url)
    assert parsed.connection_keywords() == keywords
    assert str(parsed) == shown
    if "password" in keywords:
        assert keywords["password"] not in str(parsed)


@pytest.mark.parametrize("value", ["abc", "-1", "inf", "nan", "1e12"])
def test_a_timeout_that_is_no_number_of_seconds_is_one_line_on_either_database(value: str) -> None:
    for url in (
        f"sqlite:////tmp/x/segue.db?timeout={value}",
        f"postgresql://u@h/d?timeout={value}",
    ):
        with pytest.raises(StoreError, match="is not a number of seconds"):
            database_url(url)


def test_a_read_only_open_through_a_link_reads_what_is_still_in_the_wal(tmp_path: Path) -> None:
    """SQLite keeps the WAL beside the file a link points to: a dry run through a linked store
    still sees the records another process has not yet folded into the file."""
    real = tmp_path / "real" / "segue.db"
    with open_store(f"sqlite:///{real}") as store:
        store.create_batch(Provider.CODEX, Provider.CLAUDE)
    link = tmp_path / "data" / "segue.db"
    link.parent.mkdir()
    link.symlink_to(real)
    holder = sqlite3.connect(real)  # a reader in a transaction keeps the WAL as it is
    holder.execute("BEGIN")
    holder.execute("SELECT count(*) FROM batches").fetchone()
    try:
        with open_store(f"sqlite:///{real}") as store:
            store.create_batch(Provider.CODEX, Provider.CLAUDE)
        assert Path(f"{real}-wal").stat().st_size > 0
        with open_store(f"sqlite:///{link}", read_only=True) as store:
            assert len(store.list_batches()) == 2
    finally:
        holder.close()


def test_after_a_server_restart_one_command_fails_and_the_next_reconnects(
    postgres: PostgresServer,
) -> None:
    """Every connection of the pool is lost when the server ends them (a restart, a failover):
    the first use says so in one line, and drops the idle ones with it, so the next works."""
    import psycopg

    url = postgres.create_database()
    with open_store(url) as store:
        barrier = threading.Barrier(3)

        def hold() -> None:  # three connections at once: three in the pool afterwards
            with store.reading("hold"):
                barrier.wait(timeout=30)

        holders = [threading.Thread(target=hold) for _ in range(3)]
        for t in holders:
            t.start()
        for t in holders:
            t.join()
        with psycopg.connect(url.replace("postgresql+psycopg://", "postgresql://")) as admin:
            admin.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                "WHERE application_name = 'segue' AND pid <> pg_backend_pid()"
            )
        with pytest.raises(StoreError, match="cannot list batches: terminating connection"):
            store.list_batches()
        assert store.list_batches() == []


def test_a_postgres_database_with_another_date_style_is_read(postgres: PostgresServer) -> None:
    """psycopg parses times only in PostgreSQL's ISO style: segue asks for it, whatever the
    database's own DateStyle."""
    import psycopg

    url = postgres.create_database()
    plain = url.replace("postgresql+psycopg://", "postgresql://")
    name = plain.rsplit("/", 1)[1]
    with psycopg.connect(plain, autocommit=True) as admin:
        admin.execute(f"ALTER DATABASE {name} SET DateStyle = 'SQL, DMY'")
    with open_store(url) as store:
        batch = store.create_batch(Provider.CODEX, Provider.CLAUDE)
        assert [b.created_at for b in store.list_batches()] == [batch.created_at]


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("postgresql://u@h/db?password=hunter2&sslmode=require",
         "postgresql://u@h/db?password=***&sslmode=require"),
        # libpq's names, any case, percent-encoded, and any option whose name holds "password"
        ("postgresql://u@h/db?PassWord=hunter2", "postgresql://u@h/db?PassWord=***"),
        ("postgresql://u@h/db?sslpassword=hunter2", "postgresql://u@h/db?sslpassword=***"),
        ("postgresql://u@h/db?pass%77ord=hunter2", "postgresql://u@h/db?pass%77ord=***"),
        ("postgresql://u@h/db?my_password=hunter2&x=1", "postgresql://u@h/db?my_password=***&x=1"),
        ("postgresql://u:hunter2@h/db?password=hunter2",
         "postgresql://u:***@h/db?password=***"),
        # a connection string or URL where libpq reads one (a dbname that holds one)
        ("postgresql://h/db?dbname=host%3Dx%20password%3Dhunter2",
         "postgresql://h/db?dbname=host=x password=***"),
        ("postgresql://h/user%3Du%20password%3D'hunter2'", "postgresql://h/user=u password=***"),
        ("postgresql://h/db?dbname=postgresql%3A%2F%2Fu%3Ahunter2%40h2%2Fx",
         "postgresql://h/db?dbname=postgresql://u:***@h2/x"),
    ],
)  # fmt: skip
def test_a_password_anywhere_in_the_url_is_never_shown(url: str, shown: str) -> None:
    parsed = database_url(url)
    assert str(parsed) == shown
    assert "hunter2" not in repr(parsed) and "hunter2" not in repr([parsed])
    assert "hunter2" in str(parsed.connection_keywords())  # (libpq still gets it)


def test_a_password_in_the_query_is_never_shown_by_a_real_server_or_a_command(
    postgres: PostgresServer, tmp_path: Path
) -> None:
    """The store as an error names it: the library's, and a command's (text and --json)."""
    from tests.segue_cli import segue as run_segue

    url = postgres.url("nope") + "?password=hunter2&sslpassword=k3y"
    with pytest.raises(StoreError) as failed:
        open_store(url)
    message = str(failed.value)
    assert message.endswith(
        f"@127.0.0.1:{postgres.port}/nope?password=***&sslpassword=***: cannot open segue's "
        'database: the server refused the connection: database "nope" does not exist'
    ), message
    assert "hunter2" not in message and "k3y" not in message
    env = {"HOME": str(tmp_path), "PATH": "/usr/bin:/bin", "SEGUE_DATABASE_URL": url}
    text = run_segue(["thread", "list"], env)
    assert text.returncode == 1 and text.stderr == f"segue: {message}\n", text.stderr
    json = run_segue(["thread", "list", "--json"], env)
    assert json.returncode == 1 and orjson.loads(json.stdout)["error"] == message, json.stdout
