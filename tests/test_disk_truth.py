"""The files are the truth: every switch checks the graph against the sessions on disk.

Recorded sessions (the fixtures) in scratch homes; each case changes a file behind segue's back
the way a user, a CLI or a cleanup would (deleted, moved, emptied, truncated, replaced by a FIFO
or a folder, appended, changed in place, typed into on both sides), then switches again through
the library (``segue.switch_session``, what ``segue switch`` runs) or the command itself. An
instrumented reader counts how often each session file is parsed.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import sqlite3
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest

from segue.model.conversation import Conversation, Provider
from segue.providers.claude import ClaudeCode
from segue.providers.codex import Codex
from segue.store import open_store
from segue.switch import Switch, switch_session
from segue.threads import ProviderThreadStatus, RunStatus, ThreadStore
from segue_testbed.fixtures import Fixture, all_fixtures
from segue_testbed.generate import append_turn
from segue_testbed.postgres import PostgresServer
from tests.segue_cli import segue

BY_NAME = {f.name: f for f in all_fixtures()}


def _home(tmp_path: Path, name: str) -> tuple[Fixture, Path, dict[str, str]]:
    fixture = BY_NAME[name]
    home = tmp_path / "home"
    shutil.copytree(fixture.home, home, dirs_exist_ok=True)
    Path(fixture.spec["cwd"]).mkdir(parents=True, exist_ok=True)
    # the models the fixtures were recorded with, as this user's CLIs are configured
    (home / ".codex").mkdir(exist_ok=True)
    (home / ".codex" / "config.toml").write_text('model = "gpt-5.5"\n')
    env = {
        "HOME": str(home),
        "PATH": "/usr/bin:/bin",
        "ANTHROPIC_MODEL": "claude-sonnet-5-5",
        "SEGUE_STATE_DIR": str(tmp_path / "state"),
        "SEGUE_DATA_DIR": str(tmp_path / "data"),
        "SEGUE_LOCK_WAIT": "20",
    }
    return fixture, home / fixture.transcript.relative_to(fixture.home), env


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> Iterator[Counter[str]]:
    """How often each session file is parsed (both readers, instrumented)."""
    counts: Counter[str] = Counter()
    for cls in (ClaudeCode, Codex):
        original: Callable[..., Conversation] = cls.read

        def counting(
            path: Path, _read: Callable[..., Conversation] = original, **options: bool
        ) -> Conversation:
            counts[str(Path(path).resolve())] += 1
            return _read(path, **options)

        monkeypatch.setattr(cls, "read", staticmethod(counting))
    yield counts


def _graph(env: dict[str, str], thread_id: str) -> Any:
    with open_store(env=env) as store:
        return ThreadStore(store).graph(thread_id)


def _moved(switch: Switch) -> Any:
    assert switch.thread is not None
    return switch.thread


@contextlib.contextmanager
def _store_cannot_record(message: str = "database or disk is full") -> Iterator[None]:
    """While it lasts, every attempt to record into the store fails as a full disk makes it."""
    import importlib

    from segue.model.errors import StoreError

    def full(*args: Any, **kwargs: Any) -> None:
        raise StoreError(message)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(importlib.import_module("segue.threads.syncing"), "record_outcome", full)
        yield


# -- read once -----------------------------------------------------------------------------------


def test_each_file_is_read_at_most_once_and_an_unchanged_one_not_at_all(
    tmp_path: Path, reads: Counter[str]
) -> None:
    _, source, env = _home(tmp_path, "claude-multi_turn")
    first = switch_session(str(source), Provider.CODEX, env=env)
    assert first.path is not None and _moved(first).strategy == "full_into_new"
    assert reads == Counter({str(source.resolve()): 1})  # the new session is read back in memory

    reads.clear()
    again = switch_session(str(source), Provider.CODEX, env=env)
    assert _moved(again).strategy == "no_handoff" and again.path == first.path
    assert reads == Counter({str(source.resolve()): 1})  # the target is unchanged: not read

    reads.clear()
    append_turn(Provider.CODEX, first.path)  # a recorded turn, as if typed in Codex
    back = switch_session(str(first.path), Provider.CLAUDE, env=env)
    assert _moved(back).strategy == "delta_into_existing"
    assert all(n == 1 for n in reads.values()), reads
    assert str(first.path.resolve()) in reads


# -- a target that is no longer what segue wrote --------------------------------------------------


def _break(path: Path, how: str) -> None:
    if how == "deleted":
        path.unlink()
    elif how == "emptied":
        path.write_bytes(b"")
    elif how == "truncated":
        data = path.read_bytes()
        path.write_bytes(data[: len(data) // 2])
    elif how == "fifo":
        path.unlink()
        os.mkfifo(path)
    elif how == "folder":
        path.unlink()
        path.mkdir()
    elif how == "dangling link":
        path.unlink()
        path.symlink_to(path.with_name("nowhere.jsonl"))


@pytest.mark.parametrize(
    ("how", "says"),
    [
        ("deleted", "no longer exists"),
        ("emptied", "is empty"),
        ("truncated", "changed in place"),
        ("fifo", "not a regular file"),
        ("folder", "is a directory"),
        ("dangling link", "dangling link"),
    ],
)
def test_a_target_that_is_gone_or_broken_is_never_resumed(
    tmp_path: Path, how: str, says: str
) -> None:
    _, source, env = _home(tmp_path, "claude-multi_turn")
    first = switch_session(str(source), Provider.CODEX, env=env)
    assert first.path is not None
    _break(first.path, how)

    again = switch_session(str(source), Provider.CODEX, env=env)

    move = _moved(again)
    assert move.strategy == "full_into_new" and says in move.reason
    assert again.written and again.path is not None and again.path != first.path
    assert again.path.is_file() and any(says in w for w in again.warnings)
    status = {pt.native_id: pt.status for pt in _graph(env, move.thread_id).provider_threads}
    broken = ProviderThreadStatus.DIVERGENT if how == "truncated" else ProviderThreadStatus.MISSING
    assert status[str(first.session_id)] is broken
    assert status[str(again.session_id)] is ProviderThreadStatus.ACTIVE


def test_the_command_never_hangs_or_names_a_file_that_is_gone(tmp_path: Path) -> None:
    _, source, env = _home(tmp_path, "claude-multi_turn")
    first = switch_session(str(source), Provider.CODEX, env=env)
    assert first.path is not None
    _break(first.path, "fifo")
    for args in (["switch", str(source), "--json"], ["thread", "show", str(source), "--json"]):
        done = segue(args, env, timeout=60)
        assert done.returncode == 0, done.stderr
        assert "Traceback" not in done.stderr
    doc = orjson.loads(segue(["switch", str(source), "--json"], env, timeout=60).stdout)
    assert doc["thread"]["strategy"] == "no_handoff"  # the new session, not the FIFO
    assert doc["path"] != str(first.path)


def test_a_moved_target_is_followed(tmp_path: Path) -> None:
    _, source, env = _home(tmp_path, "codex-multi_turn")
    first = switch_session(str(source), Provider.CLAUDE, env=env)
    assert first.path is not None
    elsewhere = first.path.parent.parent / "-another-project" / first.path.name
    elsewhere.parent.mkdir()
    first.path.rename(elsewhere)

    again = switch_session(str(source), Provider.CLAUDE, env=env)

    assert _moved(again).strategy == "no_handoff"
    assert again.path == elsewhere and not again.written
    assert any("moved from" in w for w in again.warnings)


def test_a_return_after_the_first_session_was_deleted_writes_a_new_one(tmp_path: Path) -> None:
    _, source, env = _home(tmp_path, "codex-multi_turn")
    there = switch_session(str(source), Provider.CLAUDE, env=env)
    assert there.path is not None
    source.unlink()

    back = switch_session(str(there.path), Provider.CODEX, env=env)

    move = _moved(back)
    assert move.strategy == "full_into_new" and "no longer exists" in move.reason
    assert back.written and back.path is not None and back.path.is_file()
    assert back.session_id != BY_NAME["codex-multi_turn"].spec["session_id"]


# -- what the CLIs add, and what nobody should -------------------------------------------------


def test_a_turn_typed_in_the_target_becomes_a_run_and_goes_back_as_a_delta(tmp_path: Path) -> None:
    fixture, source, env = _home(tmp_path, "claude-multi_turn")
    there = switch_session(str(source), Provider.CODEX, env=env)
    assert there.path is not None
    runs = len(fixture.spec["prompts"])
    append_turn(Provider.CODEX, there.path)

    back = switch_session(str(there.path), Provider.CLAUDE, env=env)

    move = _moved(back)
    assert move.strategy == "delta_into_existing" and move.covers == (runs + 1, runs + 1)
    assert back.written and back.path is not None and back.path != source
    graph = _graph(env, move.thread_id)
    assert [r.provider for r in graph.live_runs] == ["claude"] * runs + ["codex"]
    claude = next(pt for pt in graph.provider_threads if pt.provider == "claude")
    assert claude.native_id == back.session_id and claude.native_runs == tuple(range(1, runs + 1))
    assert [h.covers for h in claude.handoffs] == [(runs + 1, runs + 1)]


def test_a_source_changed_in_place_goes_on_as_a_thread_of_its_own(tmp_path: Path) -> None:
    _, source, env = _home(tmp_path, "claude-multi_turn")
    there = switch_session(str(source), Provider.CODEX, env=env)
    assert there.path is not None and there.thread is not None
    data = there.path.read_bytes()
    there.path.write_bytes(data.replace(b'"type":"session_meta"', b'"type":"session_meta" ', 1))
    # the bytes segue saw are no longer there: a rewrite, not anything a CLI does

    again = switch_session(str(there.path), Provider.CLAUDE, env=env)

    move = _moved(again)
    assert move.thread_id != there.thread.thread_id  # a new thread, forked from the old one
    assert any("changed in place" in w for w in again.warnings)
    old = _graph(env, there.thread.thread_id)
    codex = next(pt for pt in old.provider_threads if pt.provider == "codex")
    assert codex.status is ProviderThreadStatus.DIVERGENT
    with open_store(env=env) as store:
        forked = ThreadStore(store).graph(move.thread_id)
    assert forked.thread.parent_thread_id == there.thread.thread_id


def test_work_typed_into_both_sides_is_not_merged_into_an_order_that_never_happened(
    tmp_path: Path,
) -> None:
    fixture, source, env = _home(tmp_path, "claude-multi_turn")
    there = switch_session(str(source), Provider.CODEX, env=env)
    assert there.path is not None and there.thread is not None
    runs = len(fixture.spec["prompts"])
    append_turn(Provider.CODEX, there.path)  # typed in Codex, then (later) in Claude too
    append_turn(Provider.CLAUDE, source)

    result = segue(["thread", "show", there.thread.thread_id, "--json"], env, timeout=60)
    assert result.returncode == 0, result.stderr
    doc = orjson.loads(result.stdout)
    first, second = doc["runs"][runs:]  # in the order they started, whichever side that was
    assert {first["provider"], second["provider"]} == {"claude", "codex"}
    assert first["status"] == "completed" and second["status"] == "divergent"
    assert "parallel work" in (second["note"] or "")
    off = next(pt for pt in doc["provider_threads"] if pt["provider"] == second["provider"])
    assert off["status"] == "divergent" and "never saw" in off["reason"]
    assert any("parallel work" in note for note in doc["notes"])

    # the thread's line goes on in Codex; back to Claude is a new session, never the divergent one
    back = switch_session(str(there.path), Provider.CLAUDE, env=env)
    assert _moved(back).strategy == "full_into_new" and back.path != source


def test_work_typed_into_the_parent_of_a_fork_is_followed(tmp_path: Path) -> None:
    fixture, source, env = _home(tmp_path, "claude-multi_turn")
    there = switch_session(str(source), Provider.CODEX, env=env)
    assert there.path is not None
    append_turn(Provider.CODEX, there.path)
    back = switch_session(str(there.path), Provider.CLAUDE, env=env)
    assert _moved(back).strategy == "delta_into_existing"
    append_turn(Provider.CLAUDE, source)  # typed into the session the fork was made from

    done = segue(["thread", "show", str(there.path), "--json"], env, timeout=60)
    doc = orjson.loads(done.stdout)
    last = doc["runs"][-1]
    assert last["provider"] == "claude" and last["status"] == "divergent"
    assert str(source) in last["note"]
    live = [r for r in doc["runs"] if r["status"] == "completed"]
    assert len(live) == len(fixture.spec["prompts"]) + 1
    # switching that file now: its own history goes on, forked at the last run both share
    forked = switch_session(str(source), Provider.CODEX, env=env)
    graph = _graph(env, _moved(forked).thread_id)
    assert graph.thread.parent_thread_id == doc["id"]
    assert graph.thread.parent_run_ordinal == len(fixture.spec["prompts"])


# -- dry runs -----------------------------------------------------------------------------------


def _tree(root: Path) -> dict[str, tuple[int, int]]:
    if not root.exists():
        return {}
    return {str(p): (p.stat().st_size, p.stat().st_mtime_ns) for p in sorted(root.rglob("*"))}


def test_a_dry_run_writes_nothing_at_all(tmp_path: Path) -> None:
    _, source, env = _home(tmp_path, "claude-multi_turn")
    preview = switch_session(str(source), Provider.CODEX, env=env, dry_run=True)
    assert preview.dry_run and not preview.written and preview.path is None
    assert preview.thread is not None and preview.thread.strategy == "full_into_new"
    assert not (tmp_path / "data").exists() and not (tmp_path / "state").exists()
    assert not (tmp_path / "home" / ".codex" / "sessions").exists()

    first = switch_session(str(source), Provider.CODEX, env=env)
    assert first.path is not None
    append_turn(Provider.CODEX, first.path)
    before = {**_tree(tmp_path / "data"), **_tree(tmp_path / "state"), **_tree(tmp_path / "home")}
    for _ in range(2):
        back = switch_session(str(first.path), Provider.CLAUDE, env=env, dry_run=True)
        assert back.thread is not None and back.thread.strategy == "delta_into_existing"
        done = segue(["switch", str(first.path), "--dry-run", "--json"], env, timeout=60)
        assert orjson.loads(done.stdout)["dry_run"] is True
    after = {**_tree(tmp_path / "data"), **_tree(tmp_path / "state"), **_tree(tmp_path / "home")}
    assert after == before


# -- concurrency ---------------------------------------------------------------------------------


def test_switches_of_one_session_at_once_write_one_session(tmp_path: Path) -> None:
    from concurrent.futures import ThreadPoolExecutor

    _, source, env = _home(tmp_path, "claude-multi_turn")
    with ThreadPoolExecutor(3) as pool:
        runs = list(pool.map(lambda _: segue(["switch", str(source), "--json"], env), range(3)))
    docs = [orjson.loads(r.stdout) for r in runs]
    assert all(r.returncode == 0 for r in runs), [r.stderr for r in runs]
    assert len({d["session_id"] for d in docs}) == 1
    assert sorted(d["thread"]["strategy"] for d in docs) == [
        "full_into_new",
        "no_handoff",
        "no_handoff",
    ]
    assert len(list((tmp_path / "home" / ".codex").rglob("rollout-*.jsonl"))) == 1


def test_two_returns_at_once_leave_one_fork(tmp_path: Path) -> None:
    from concurrent.futures import ThreadPoolExecutor

    _, source, env = _home(tmp_path, "claude-multi_turn")
    there = switch_session(str(source), Provider.CODEX, env=env)
    assert there.path is not None
    append_turn(Provider.CODEX, there.path)
    claude_dir = source.parent
    before = set(claude_dir.iterdir())
    with ThreadPoolExecutor(2) as pool:
        runs = list(pool.map(lambda _: segue(["switch", str(there.path), "--json"], env), "ab"))
    docs = [orjson.loads(r.stdout) for r in runs]
    assert sorted(d["thread"]["strategy"] for d in docs) == ["delta_into_existing", "no_handoff"]
    assert len(set(claude_dir.iterdir()) - before) == 1  # one fork, and both resume it
    assert len({d["session_id"] for d in docs}) == 1


# -- the store never blocks a switch -------------------------------------------------------------


def _lock_store(path: Path) -> sqlite3.Connection:
    holder = sqlite3.connect(path, isolation_level=None, timeout=0)
    holder.execute("PRAGMA locking_mode = EXCLUSIVE")
    holder.execute("BEGIN EXCLUSIVE")
    holder.execute("SELECT count(*) FROM app_threads").fetchall()
    return holder


def _switch_while_the_store_is_locked(tmp_path: Path, source: Path, env: dict[str, str]) -> Switch:
    """A switch to Codex made while another process holds the store locked (a store that has
    the thread): made, and kept in the journal."""
    env["SEGUE_STORE_WAIT"] = "0.5"
    segue(["thread", "adopt", str(source)], env)
    holder = _lock_store(tmp_path / "data" / "segue.db")
    try:
        return switch_session(str(source), Provider.CODEX, env=env)
    finally:
        holder.close()


def test_a_locked_store_leaves_the_switch_made_and_nothing_is_written_twice(
    tmp_path: Path,
) -> None:
    import time

    _, source, env = _home(tmp_path, "claude-multi_turn")
    env["SEGUE_STORE_WAIT"] = "0.5"
    segue(["thread", "adopt", str(source)], env)  # the store exists, with the thread in it
    holder = _lock_store(tmp_path / "data" / "segue.db")
    try:
        started = time.monotonic()
        first = switch_session(str(source), Provider.CODEX, env=env)
        assert time.monotonic() - started < 15
        assert first.written and first.path is not None and first.path.is_file()
        assert first.thread is not None and not first.thread.recorded
        assert any("not recorded" in w and "journal" in w for w in first.warnings)
        again = switch_session(str(source), Provider.CODEX, env=env)  # the store still locked
        assert not again.written and again.path == first.path
    finally:
        holder.close()
    shown = segue(["thread", "show", str(source), "--json"], env)
    doc = orjson.loads(shown.stdout)
    codex = [pt for pt in doc["provider_threads"] if pt["provider"] == "codex"]
    assert [pt["native_id"] for pt in codex] == [first.session_id]  # adopted, once
    assert not list((tmp_path / "state" / "journal").glob("*.json"))
    last = switch_session(str(source), Provider.CODEX, env=env)
    assert _moved(last).strategy == "no_handoff" and last.path == first.path


def test_a_postgresql_store_locked_by_another_session_leaves_the_switch_made(
    tmp_path: Path, postgres: PostgresServer
) -> None:
    """Another session holds the tables locked (a long migration, a psql left in a
    transaction): the switch waits for the lock no longer than for a locked SQLite file, and is
    made with its one warning (it waited for ever)."""
    import time

    import psycopg

    _, source, env = _home(tmp_path, "claude-multi_turn")
    env["SEGUE_DATABASE_URL"] = url = postgres.create_database()
    env["SEGUE_STORE_WAIT"] = "0.5"
    first = switch_session(str(source), Provider.CODEX, env=env)
    assert first.thread is not None and first.thread.recorded
    holder = psycopg.connect(url.replace("postgresql+psycopg://", "postgresql://"))
    try:
        holder.execute("LOCK TABLE app_threads, runs IN ACCESS EXCLUSIVE MODE")
        started = time.monotonic()
        again = switch_session(str(source), Provider.CODEX, env=env)
        assert time.monotonic() - started < 15
    finally:
        holder.close()
    assert again.thread is not None and not again.thread.recorded
    (warning,) = [w for w in again.warnings if "lock timeout" in w and "not recorded" in w]
    assert "LINE 1" not in warning and "SELECT" not in warning  # the server's words, not SQL


@pytest.mark.parametrize(
    ("damage", "says"),
    [
        ("UPDATE segue_schema_version SET version_num = ''", "schema version"),
        ("UPDATE segue_schema_version SET version_num = '9999'", "newer than this segue"),
    ],
)
def test_an_unusable_store_is_one_warning_and_the_switch_is_made(
    tmp_path: Path, damage: str, says: str
) -> None:
    _, source, env = _home(tmp_path, "claude-multi_turn")
    segue(["thread", "adopt", str(source)], env)
    with sqlite3.connect(tmp_path / "data" / "segue.db") as db:
        db.execute(damage)
    done = segue(["switch", str(source), "--json"], env)
    assert done.returncode == 0, done.stderr
    doc = orjson.loads(done.stdout)
    assert doc["path"] and Path(doc["path"]).is_file()
    assert [w for w in doc["warnings"] if says in w and "not recorded" in w]
    listed = segue(["thread", "list"], env)
    assert listed.returncode == 1 and says in listed.stderr and "Traceback" not in listed.stderr


def test_values_this_segue_does_not_know_are_read_as_unknown(tmp_path: Path) -> None:
    _, source, env = _home(tmp_path, "claude-multi_turn")
    first = switch_session(str(source), Provider.CODEX, env=env)
    assert first.thread is not None
    with sqlite3.connect(tmp_path / "data" / "segue.db") as db:
        db.execute("UPDATE provider_thread_revisions SET status = 'frozen'")
        db.execute("UPDATE runs SET status = 'archived' WHERE ordinal = 2")
        db.execute("UPDATE context_handoffs SET form = 'telepathy', strategy = 'osmosis'")
    for args in (["switch", str(source), "--json"], ["thread", "show", str(source), "--json"]):
        done = segue(args, env)
        assert done.returncode == 0, done.stderr
    doc = orjson.loads(segue(["thread", "show", str(source), "--json"], env).stdout)
    assert {r["status"] for r in doc["runs"]} >= {"unknown"}
    again = orjson.loads(segue(["switch", str(source), "--json"], env).stdout)
    assert again["thread"]["strategy"] in ("no_handoff", "full_into_new")


def test_an_in_memory_store_is_refused(tmp_path: Path) -> None:
    _, source, env = _home(tmp_path, "claude-multi_turn")
    env["SEGUE_DATABASE_URL"] = "sqlite://"
    listed = segue(["thread", "list"], env)
    assert listed.returncode == 1 and "in-memory" in listed.stderr
    done = segue(["switch", str(source), "--json"], env)
    doc = orjson.loads(done.stdout)
    assert done.returncode == 0 and doc["path"]
    assert any("in-memory" in w for w in doc["warnings"])


# -- says what it does ---------------------------------------------------------------------------


def test_redaction_reaches_the_delta_and_what_the_store_keeps(tmp_path: Path) -> None:
    from segue.transforms.secrets import marker
    from tests.test_hostile import KEYS

    _, source, env = _home(tmp_path, "claude-multi_turn")
    there = switch_session(str(source), Provider.CODEX, env=env)
    assert there.path is not None
    append_turn(Provider.CODEX, there.path)
    key = KEYS["aws_key"]
    data = there.path.read_bytes().splitlines(keepends=True)
    last_prompt = max(
        i for i, line in enumerate(data) if b'"user_message"' in line or b'"role":"user"' in line
    )
    record = orjson.loads(data[last_prompt])
    _plant_in(record, key)
    data[last_prompt] = orjson.dumps(record) + b"\n"
    there.path.write_bytes(b"".join(data))  # a planted key: a test of redaction

    back = switch_session(str(there.path), Provider.CLAUDE, env=env, redact_secrets=True)

    assert back.path is not None and _moved(back).strategy in (
        "delta_into_existing",
        "full_into_new",
    )
    written = back.path.read_text()
    assert key not in written and marker("aws_key") in written
    assert back.plan.secrets.get("aws_key") and back.plan.secrets_redacted
    with sqlite3.connect(tmp_path / "data" / "segue.db") as db:
        kept = " ".join(str(row) for row in db.execute("SELECT items, text FROM context_handoffs"))
    assert key not in kept


def _plant_in(record: dict[str, Any], key: str) -> None:
    payload = record.get("payload", {})
    if isinstance(payload.get("message"), str):
        payload["message"] += f" {key}"
    for part in payload.get("content", []) or []:
        if isinstance(part, dict) and isinstance(part.get("text"), str):
            part["text"] += f" {key}"


def test_every_option_is_checked_the_same_way_in_both_modes(tmp_path: Path) -> None:
    _, source, env = _home(tmp_path, "claude-multi_turn")
    for args in (
        ["switch", str(source), "--arrival-compact", "bogus"],
        ["switch", "--from", "claude", "--arrival-compact", "bogus"],
        ["switch", str(source), "--summary-by", "nobody"],
        ["switch", "--from", "claude", "--summary-by", "nobody"],
        ["switch", str(source), "--exec", "--dry-run"],
    ):
        done = segue(args, env)
        assert done.returncode == 2, (args, done.stderr)
        assert "Traceback" not in done.stderr
    assert not (tmp_path / "home" / ".codex" / "sessions").exists()


def test_a_rolled_back_run_is_never_carried(tmp_path: Path) -> None:
    """Codex's own rollback (a generation file, recorded by its CLI) in the session a thread
    started from: the runs it undid are rolled back, and the switch carries only the rest."""
    fixture, _, env = _home(tmp_path, "codex-rollback")
    switched = switch_session(fixture.spec["session_id"], Provider.CLAUDE, env=env)
    assert switched.path is not None
    carried = switched.path.read_text()
    for prompt in fixture.spec["rolled_back_prompts"]:
        assert prompt not in carried
    graph = _graph(env, _moved(switched).thread_id)
    assert all(r.prompt not in fixture.spec["rolled_back_prompts"] for r in graph.live_runs)
    assert all(r.status is not RunStatus.ROLLED_BACK for r in graph.live_runs)


def test_a_store_that_fails_after_the_session_is_written_never_loses_it(tmp_path: Path) -> None:
    """The disk fills up between writing the session and recording it: the switch is made, it
    says so in one warning with the command that continues it, and the next switch records
    what was written instead of writing another session."""
    _, source, env = _home(tmp_path, "claude-multi_turn")
    with _store_cannot_record(f"{tmp_path / 'data' / 'segue.db'}: database or disk is full"):
        first = switch_session(str(source), Provider.CODEX, env=env)
    assert first.written and first.path is not None and first.path.is_file()
    assert first.resume_command.endswith(f"codex resume {first.session_id}")
    assert [w for w in first.warnings if "disk is full" in w and "journal" in w]
    assert len(list((tmp_path / "state" / "journal").glob("*.json"))) == 1

    again = switch_session(str(source), Provider.CODEX, env=env)
    assert _moved(again).strategy == "no_handoff" and again.path == first.path
    assert not list((tmp_path / "state" / "journal").glob("*.json"))
    assert len(list((tmp_path / "home" / ".codex").rglob("rollout-*.jsonl"))) == 1


def _plant_last_claude_prompt(path: Path, key: str) -> None:
    """A key pasted into the last typed prompt of a Claude transcript (a test of redaction)."""
    lines = path.read_bytes().splitlines(keepends=True)
    for i in range(len(lines) - 1, -1, -1):
        record = orjson.loads(lines[i])
        content = record.get("message", {}).get("content") if record.get("type") == "user" else None
        if isinstance(content, str) and not content.startswith("<"):
            record["message"]["content"] = f"{content} {key}"
            lines[i] = orjson.dumps(record) + b"\n"
            break
    path.write_bytes(b"".join(lines))


def test_redaction_reaches_a_summary_handoff(tmp_path: Path) -> None:
    """A delta too big for the target's budget goes as a summary: segue's summary never holds a
    detected secret, with or without --redact-secrets, nor does what the store keeps."""
    from segue.transforms.secrets import marker
    from tests.test_hostile import KEYS

    _, source, env = _home(tmp_path, "codex-multi_turn")
    there = switch_session(str(source), Provider.CLAUDE, env=env)
    assert there.path is not None
    append_turn(Provider.CLAUDE, there.path)
    key = KEYS["github_token"]
    _plant_last_claude_prompt(there.path, key)
    config = tmp_path / "home" / ".codex" / "config.toml"
    config.write_text("model_auto_compact_token_limit = 10\n" + config.read_text())

    back = switch_session(str(there.path), Provider.CODEX, env=env)

    move = _moved(back)
    assert move.strategy == "delta_into_existing" and move.form == "summary"
    assert back.path is not None
    written = back.path.read_text()
    assert key not in written and marker("github_token") in written
    with sqlite3.connect(tmp_path / "data" / "segue.db") as db:
        kept = " ".join(str(row) for row in db.execute("SELECT items, text FROM context_handoffs"))
    assert key not in kept and marker("github_token") in kept


def test_redaction_reaches_a_fleet_switch(tmp_path: Path) -> None:
    from segue.fleet.batch import plan_fleet, run_fleet
    from segue.transforms.secrets import marker
    from tests.test_hostile import KEYS

    fixture, source, env = _home(tmp_path, "claude-multi_turn")
    key = KEYS["aws_key"]
    _plant_last_claude_prompt(source, key)
    plan = plan_fleet(
        Provider.CLAUDE,
        sessions=[fixture.spec["session_id"]],
        env=env,
        agents=[],
        redact_secrets=True,
    )
    result = run_fleet(plan, env=env, record=False)
    (outcome,) = result.outcomes
    assert outcome.switch is not None and outcome.switch.path is not None
    written = outcome.switch.path.read_text()
    assert key not in written and marker("aws_key") in written


# -- what a careless user and a hostile machine do (found by an adversarial pass) ---------------


@pytest.mark.parametrize("what", ["fifo", "/dev/zero"])
def test_a_config_or_journal_that_is_no_regular_file_never_hangs(tmp_path: Path, what: str) -> None:
    _, source, env = _home(tmp_path, "claude-multi_turn")
    bad = tmp_path / "bad.toml"
    if what == "fifo":
        os.mkfifo(bad)
    else:
        bad.symlink_to(what)
    done = segue(["switch", str(source), "--dry-run", "--json"], {**env, "SEGUE_CONFIG": str(bad)})
    assert done.returncode == 1 and str(bad) in orjson.loads(done.stdout)["error"]
    journal = tmp_path / "state" / "journal"
    journal.mkdir(parents=True)
    (journal / "stuck.json").symlink_to(bad) if what != "fifo" else os.mkfifo(journal / "x.json")
    for args in (["thread", "list"], ["switch", str(source), "--json"]):
        ran = segue(args, env, timeout=60)
        assert ran.returncode == 0, ran.stderr


def test_a_bad_store_url_is_one_line_and_creates_nothing(tmp_path: Path) -> None:
    _, source, env = _home(tmp_path, "claude-multi_turn")
    env["SEGUE_DATABASE_URL"] = f"sqlite:///{tmp_path / 'x.db'}?timeout=abc"
    listed = segue(["thread", "list"], env)
    assert listed.returncode == 1 and "timeout='abc'" in listed.stderr
    done = segue(["switch", str(source), "--json"], env)
    assert done.returncode == 0 and orjson.loads(done.stdout)["path"]  # the switch is made
    assert not (tmp_path / "x.db").exists()


def test_a_run_on_a_missing_cli_writes_nothing(tmp_path: Path) -> None:
    fixture, source, env = _home(tmp_path, "claude-multi_turn")
    env["SEGUE_CODEX_BIN"] = str(tmp_path / "no-such-codex")
    env["PATH"] = str(tmp_path / "empty-path")
    segue(["thread", "adopt", str(source)], env)
    done = segue(["run", "--thread", str(fixture.spec["session_id"]), "--provider", "codex",
                  "--json", "hi"], env)  # fmt: skip
    assert done.returncode == 1 and "not installed" in orjson.loads(done.stdout)["error"]
    assert not list((tmp_path / "home" / ".codex").rglob("rollout-*.jsonl"))
    empty = segue(["run", "--thread", "", "hello"], env)
    assert empty.returncode == 1 and "empty" in empty.stderr


def test_a_prompt_that_is_a_list_item_keeps_the_options_after_it() -> None:
    from segue.cli.app import app

    _, values = app.parse(["run", "--thread", "t", "- a list item", "--json"])
    assert (values["prompt"], values["thread"], values["as_json"]) == ("- a list item", "t", True)
    _, values = app.parse(["run", "--thread", "- odd id", "go"])
    assert (values["prompt"], values["thread"]) == ("go", "- odd id")
    _, values = app.parse(["run", "--json", "--", "--version"])
    assert (values["prompt"], values["as_json"]) == ("--version", True)
    _, values = app.parse(["run", "-"])
    assert values["prompt"] == "-"


def test_dry_runs_of_a_return_create_no_store(tmp_path: Path) -> None:
    _, _, env = _home(tmp_path, "claude-multi_turn")
    plain = ["switch", "--return", "--dry-run"]
    for args in (plain, [*plain, "--json"]):
        done = segue(args, env)
        assert done.returncode == 1 and "no batch" in (done.stdout + done.stderr)
    assert not (tmp_path / "data").exists()


def test_a_fleet_waits_for_a_locked_store_no_longer_than_a_switch(tmp_path: Path) -> None:
    import time

    _, source, env = _home(tmp_path, "claude-multi_turn")
    env["SEGUE_STORE_WAIT"] = "0.5"
    segue(["thread", "adopt", str(source)], env)
    holder = _lock_store(tmp_path / "data" / "segue.db")
    try:
        started = time.monotonic()
        done = segue(["switch", "--from", "claude", "--all", "--yes", "--json"], env)
        took = time.monotonic() - started
    finally:
        holder.close()
    doc = orjson.loads(done.stdout)
    assert took < 30 and doc["agents"] and all(a["switch"] for a in doc["agents"])
    assert any("not recorded" in note for note in doc["notes"])
    preview = orjson.loads(segue(["switch", "--from", "claude", "--all", "--dry-run",
                                  "--json"], env).stdout)  # fmt: skip
    assert {"tally", "summary", "notes"} <= set(preview)


def test_a_dry_run_sees_a_switch_the_journal_keeps(tmp_path: Path) -> None:
    _, source, env = _home(tmp_path, "claude-multi_turn")
    first = _switch_while_the_store_is_locked(tmp_path, source, env)
    assert first.thread is not None and not first.thread.recorded
    preview = switch_session(str(source), Provider.CODEX, env=env, dry_run=True)
    assert _moved(preview).strategy == "no_handoff" and preview.session_id == first.session_id
    real = switch_session(str(source), Provider.CODEX, env=env)
    assert _moved(real).strategy == "no_handoff" and real.path == first.path


def test_a_moved_codex_session_is_followed_and_said(tmp_path: Path) -> None:
    _, source, env = _home(tmp_path, "claude-multi_turn")
    there = switch_session(str(source), Provider.CODEX, env=env)
    assert there.path is not None
    day = "02" if there.path.parent.name != "02" else "03"  # another day's folder than today's
    elsewhere = there.path.parent.parent / day / there.path.name
    elsewhere.parent.mkdir()
    there.path.rename(elsewhere)
    doc = orjson.loads(segue(["thread", "show", str(source), "--json"], env).stdout)
    assert any("moved from" in note for note in doc["notes"])
    codex = next(pt for pt in doc["provider_threads"] if pt["provider"] == "codex")
    assert codex["path"] == str(elsewhere) and codex["status"] == "active"


def _claude_rewind(source: Path, keep_turns: int) -> None:
    """Claude Code's rewind, as it writes one: a new branch after turn ``keep_turns`` of the
    same file, then a recorded turn on it."""
    from segue_testbed.generate import claude_rewind_point

    append_turn(Provider.CLAUDE, source, after=claude_rewind_point(source, keep_turns))


def test_a_session_written_after_a_rewind_is_resumed_as_it_is(tmp_path: Path) -> None:
    fixture, source, env = _home(tmp_path, "claude-multi_turn")
    first = switch_session(str(source), Provider.CODEX, env=env)
    _claude_rewind(source, len(fixture.spec["prompts"]) - 1)
    second = switch_session(str(source), Provider.CODEX, env=env)
    assert _moved(second).strategy == "full_into_new" and "rolled back" in _moved(second).reason
    third = switch_session(str(source), Provider.CODEX, env=env)
    assert _moved(third).strategy == "no_handoff" and third.path == second.path
    assert first.path != second.path


def test_a_journaled_switch_of_a_forked_thread_is_recorded_in_that_thread(
    tmp_path: Path,
) -> None:
    _, source, env = _home(tmp_path, "claude-multi_turn")
    there = switch_session(str(source), Provider.CODEX, env=env)
    assert there.path is not None and there.thread is not None
    data = there.path.read_bytes()
    there.path.write_bytes(data.replace(b'"type":"session_meta"', b'"type":"session_meta" ', 1))
    with _store_cannot_record():
        forked = switch_session(str(there.path), Provider.CLAUDE, env=env)  # journaled
    assert forked.thread is not None and not forked.thread.recorded
    assert forked.thread.thread_id != there.thread.thread_id

    again = switch_session(str(there.path), Provider.CLAUDE, env=env)  # replays, then decides
    assert _moved(again).strategy == "no_handoff" and again.path == forked.path
    graph = _graph(env, forked.thread.thread_id)
    assert graph.thread.parent_thread_id == there.thread.thread_id
    assert forked.session_id in {pt.native_id for pt in graph.provider_threads}


def test_the_journal_is_recorded_once_whoever_replays_it(tmp_path: Path) -> None:
    from concurrent.futures import ThreadPoolExecutor

    _, source, env = _home(tmp_path, "claude-multi_turn")
    first = _switch_while_the_store_is_locked(tmp_path, source, env)
    with ThreadPoolExecutor(3) as pool:
        done = list(pool.map(lambda _: segue(["thread", "list", "--json"], env), range(3)))
    assert all(d.returncode == 0 for d in done)
    doc = orjson.loads(segue(["thread", "show", str(source), "--json"], env).stdout)
    holders = [pt for pt in doc["provider_threads"] if pt["native_id"] == first.session_id]
    assert len(holders) == 1


def test_a_provider_this_segue_does_not_know_is_no_internal_error(tmp_path: Path) -> None:
    _, source, env = _home(tmp_path, "claude-multi_turn")
    switch_session(str(source), Provider.CODEX, env=env)
    with sqlite3.connect(tmp_path / "data" / "segue.db") as db:
        db.execute("UPDATE provider_threads SET provider = 'gemini' WHERE provider = 'codex'")
        db.execute("UPDATE runs SET provider = 'gemini' WHERE provider = 'codex'")
    for args in (
        ["switch", str(source), "--json"],
        ["thread", "show", str(source), "--json"],
        ["run", "--thread", str(source), "--json", "hi"],
    ):
        done = segue(args, env)
        assert "internal error" not in done.stdout + done.stderr, args
        assert "Traceback" not in done.stderr


FIXTURE_MODELS = {"claude-multi_turn": "claude-sonnet-5-5"}  # the others ran claude-opus-5-5


@pytest.mark.parametrize("name", sorted(BY_NAME))
def test_every_recorded_session_is_written_once_and_resumed_after(
    tmp_path: Path, name: str
) -> None:
    """What the first switch wrote is what the next sync reads: a second switch resumes it, the
    way back resumes the first session, and nothing is taken for a rewind or new work."""
    fixture, source, env = _home(tmp_path, name)
    env["ANTHROPIC_MODEL"] = FIXTURE_MODELS.get(name, "claude-opus-5-5")
    back_to = Provider(fixture.provider)
    to = Provider.CLAUDE if back_to is Provider.CODEX else Provider.CODEX
    first = switch_session(str(source), to, env=env)
    assert first.written and first.path is not None
    again = switch_session(str(source), to, env=env)
    back = switch_session(str(first.path), back_to, env=env)
    assert (_moved(again).strategy, again.path, again.warnings) == ("no_handoff", first.path, [])
    assert (_moved(back).strategy, back.warnings) == ("no_handoff", [])
    graph = _graph(env, _moved(first).thread_id)
    assert {pt.status for pt in graph.provider_threads} == {ProviderThreadStatus.ACTIVE}


def test_a_journaled_return_is_recorded_as_the_fork_of_the_session_it_left(
    tmp_path: Path,
) -> None:
    _, source, env = _home(tmp_path, "claude-multi_turn")
    there = switch_session(str(source), Provider.CODEX, env=env)
    assert there.path is not None and there.thread is not None
    append_turn(Provider.CODEX, there.path)  # one run typed in Codex
    with _store_cannot_record():
        back = switch_session(str(there.path), Provider.CLAUDE, env=env)  # a fork, journaled
    assert _moved(back).strategy == "delta_into_existing" and not _moved(back).recorded
    again = switch_session(str(there.path), Provider.CLAUDE, env=env)  # replays, then decides
    assert _moved(again).strategy == "no_handoff" and again.path == back.path
    graph = _graph(env, there.thread.thread_id)
    claude = [pt for pt in graph.provider_threads if pt.provider == "claude"]
    assert [pt.native_id for pt in claude] == [back.session_id]  # the fork, not a second thread
    assert [f.path for f in claude[0].former] == [str(source)]
    assert graph.handoffs[-1].to_provider_thread_id == claude[0].id
    last = max(r.ordinal for r in graph.runs)
    assert graph.handoffs[-1].covers == (last, last)


@pytest.mark.parametrize("name", ["", "gemini cli", "\x00"], ids=["empty", "unknown", "control"])
def test_a_store_that_names_a_provider_garbled_or_unknown_is_a_note(
    tmp_path: Path, name: str
) -> None:
    """A provider thread whose provider the store garbles (edited behind segue's back) is a
    provider this segue does not know: the thread shows with a note, the session is switched
    afresh, and nothing is an internal error."""
    _, source, env = _home(tmp_path, "claude-multi_turn")
    there = segue(["switch", str(source), "--to", "codex", "--json"], env)
    assert there.returncode == 0, there.stderr
    thread_id = orjson.loads(there.stdout)["thread"]["id"]
    with contextlib.closing(sqlite3.connect(tmp_path / "data" / "segue.db")) as db:
        db.execute("UPDATE provider_threads SET provider = ? WHERE provider = 'codex'", (name,))
        db.commit()
    shown = segue(["thread", "show", thread_id, "--json"], env)
    assert shown.returncode == 0, shown.stderr
    assert any("does not know the provider" in n for n in orjson.loads(shown.stdout)["notes"])
    again = segue(["switch", str(source), "--to", "codex", "--json"], env)
    assert again.returncode == 0 and "internal error" not in again.stdout + again.stderr
    assert orjson.loads(again.stdout)["thread"]["strategy"] == "full_into_new"


def test_a_checkpoint_that_fails_unforeseen_after_the_write_still_leaves_the_switch_recorded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The checkpoint of a return is taken beside the copy; a bug that stops it once the fork
    is published is a warning, and the fork is the thread's (never a file segue forgot)."""
    import segue.threads.checkpoints as checkpoints

    _, source, env = _home(tmp_path, "claude-multi_turn")
    there = switch_session(str(source), Provider.CODEX, env=env)
    assert there.path is not None
    append_turn(Provider.CODEX, there.path)

    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("the checkpoint broke")

    monkeypatch.setattr(checkpoints, "take_checkpoint", broken)
    back = switch_session(str(there.path), Provider.CLAUDE, env=env)
    assert _moved(back).strategy == "delta_into_existing" and back.path is not None
    assert any("no checkpoint: internal error: RuntimeError" in w for w in back.warnings)
    again = switch_session(str(there.path), Provider.CLAUDE, env=env)
    assert _moved(again).strategy == "no_handoff" and again.path == back.path  # recorded
