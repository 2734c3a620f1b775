"""The listing cache that ``segue tui`` and ``segue watch`` keep between runs: a session file
unchanged since (size, time, inode) is not read again, one that changed is, and a cache that is
broken, foreign or hand-edited is never believed."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import orjson
import pytest

from segue.providers import all_entries
from segue.providers.sessions import CACHE_FILE, list_sessions, remembered_peeks
from segue_testbed.fixtures import all_fixtures
from tests.segue_cli import segue
from tests.test_fleet import home

__all__ = ["home"]  # every recorded session of both providers in one scratch home

FIXTURES = [f for f in all_fixtures() if f.provider != "copilot"]  # the home test_fleet makes


@pytest.fixture
def peeks(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[Path]]:
    """Every session file a listing reads."""
    read: list[Path] = []
    for e in all_entries():
        bound = e.peek

        def counted(path: Path, bound: Callable[[Path], object] = bound) -> object:
            read.append(Path(path))
            return bound(path)

        monkeypatch.setattr(e, "peek", counted)
    yield read


def listed(env: dict[str, str]) -> dict[str, tuple[int, int]]:
    with remembered_peeks(env, persist=True):
        listing = list_sessions(None, None, env)
    assert not listing.problems
    rows = listing.sessions
    return {r.id: (r.size, r.turns) for r in rows}


def test_a_second_run_reads_only_what_changed(home: dict[str, str], peeks: list[Path]) -> None:
    first = listed(home)
    assert len(peeks) >= len(FIXTURES) and first
    cache = Path(home["SEGUE_STATE_DIR"]) / CACHE_FILE
    assert cache.is_file() and oct(cache.stat().st_mode & 0o777) == "0o600"

    peeks.clear()
    assert listed(home) == first
    assert peeks == []  # nothing changed: nothing read

    # a session its CLI appended to is read again, and the listing says what it holds now
    fixture = next(f for f in FIXTURES if f.provider == "claude" and "multi" in f.name)
    path = Path(home["HOME"]) / str(fixture.spec["transcript"]).removeprefix("home/")
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join(lines) + lines[-1])
    peeks.clear()
    again = listed(home)
    assert peeks == [path]
    assert again[fixture.spec["session_id"]][0] == path.stat().st_size

    # a session that is gone is gone from the listing (and from the cache)
    path.unlink()
    assert fixture.spec["session_id"] not in listed(home)
    kept = orjson.loads(cache.read_bytes())["rows"]
    assert str(path) not in {row[0] for row in kept}


def _this_key() -> str:
    from segue.providers.sessions import _cache_key

    return _cache_key()


@pytest.mark.parametrize(
    "content",
    [
        b"not json at all",
        b'{"key": "0.0.1/1", "rows": []}',  # another segue's
        b"[1, 2, 3]",
        b"",
        b'{"key": "KEY", "rows": 5}',
        b'{"key": "KEY", "rows": true}',
        b'{"key": "KEY", "rows": {"a": 1}}',
    ],
)
def test_a_cache_that_is_not_this_segues_is_not_believed(
    home: dict[str, str], peeks: list[Path], content: bytes
) -> None:
    truth = listed(home)
    cache = Path(home["SEGUE_STATE_DIR"]) / CACHE_FILE
    cache.write_bytes(content.replace(b"KEY", _this_key().encode()))
    peeks.clear()
    assert listed(home) == truth
    assert len(peeks) >= len(FIXTURES)  # every file read again


def test_a_hand_edited_row_is_read_again_from_its_file(
    home: dict[str, str], peeks: list[Path]
) -> None:
    truth = listed(home)
    cache = Path(home["SEGUE_STATE_DIR"]) / CACHE_FILE
    document = orjson.loads(cache.read_bytes())
    rows = document["rows"]
    edited = [rows[0][0], rows[1][0], rows[2][0], rows[3][0]]
    rows[0][11] = "a lot"  # the size, not a number
    rows[1][4] = None  # an id that is not one
    rows[2] = ["short"]
    rows[3][-1] = "2026-12-01T00:00:00"  # a reset time with no zone
    cache.write_bytes(orjson.dumps(document))
    peeks.clear()
    assert listed(home) == truth
    assert sorted(str(p) for p in peeks) == sorted(edited)


def _one_loop(env: dict[str, str]) -> int:
    """``segue watch``'s loop, stopped after its first pass."""
    from segue.watch import Mode, WatchPolicy, watch

    stop = threading.Event()
    timer = threading.Timer(1.0, stop.set)  # (a pass with nothing new emits nothing)
    timer.start()
    policy = WatchPolicy(move=Mode.ASK, returns=Mode.NEVER, remote=False, relaunch=False)
    try:
        return watch(policy, interval=0.05, env=env, emit=lambda event: stop.set(), stop=stop)
    finally:
        timer.cancel()


def test_watch_keeps_the_cache_and_one_it_cannot_write_is_no_error(
    home: dict[str, str],
) -> None:
    cache = Path(home["SEGUE_STATE_DIR"]) / CACHE_FILE
    once = segue(["watch", "--once", "--offline", "--return", "never", "--json"], home)
    assert once.returncode == 0, once.stderr
    assert not cache.exists()  # one pass keeps nothing for a next one
    assert _one_loop(home) >= 1
    assert cache.is_file()  # the loop does
    cache.unlink()
    cache.mkdir()  # neither read nor replaced: the loop goes on all the same
    assert _one_loop(home) >= 1
    assert cache.is_dir()


def test_segue_sessions_keeps_the_cache_and_one_folder_keeps_the_rest_of_it(
    home: dict[str, str],
) -> None:
    cache = Path(home["SEGUE_STATE_DIR"]) / CACHE_FILE

    def sessions(*args: str) -> list[dict[str, object]]:
        done = segue(["sessions", *args, "--json"], home)
        assert done.returncode == 0, done.stderr
        return list(orjson.loads(done.stdout)["sessions"])

    everything = sessions("--all")
    assert cache.is_file()
    cached = {row[0] for row in orjson.loads(cache.read_bytes())["rows"]}
    assert len(cached) >= len(everything)
    assert sessions("--all") == everything  # from the cache, the same document

    # the sessions of one folder: the cache keeps the others' rows too
    fixture = next(f for f in FIXTURES if f.provider == "codex" and "multi" in f.name)
    one = sessions("--cwd", str(fixture.spec["cwd"]))
    assert one and len(one) < len(everything)
    assert {row[0] for row in orjson.loads(cache.read_bytes())["rows"]} == cached

    # appended by its CLI: the listing says what the file holds now
    path = Path(home["HOME"]) / str(fixture.spec["transcript"]).removeprefix("home/")
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join(lines) + lines[-1])
    (now,) = [s for s in sessions("--all") if s["path"] == str(path)]
    assert now["size"] == path.stat().st_size


def test_a_row_is_read_again_when_a_file_it_came_from_changed_even_with_its_time_put_back(
    home: dict[str, str], peeks: list[Path]
) -> None:
    import os

    listed(home)
    # a later generation of a rolled-back Codex thread: its row comes from its earlier file too
    later = next(f for f in FIXTURES if f.name == "codex-rollback")
    path = Path(home["HOME"]) / str(later.spec["transcript"]).removeprefix("home/")
    earlier = sorted(p for p in path.parent.glob("rollout-*.jsonl") if p != path)
    assert earlier, "the rollback fixture keeps its earlier generation beside it"
    for p in earlier:
        p.unlink()  # pruned by age: the newer file is left as it was
    peeks.clear()
    without = listed(home)
    assert path in peeks
    cache = Path(home["SEGUE_STATE_DIR"]) / CACHE_FILE
    cache.unlink()
    assert listed(home) == without  # what a listing with no cache says

    # rewritten in place with its length and its time kept: its ctime says it changed
    chat = next(f for f in FIXTURES if f.name == "claude-chat")
    path = Path(home["HOME"]) / str(chat.spec["transcript"]).removeprefix("home/")
    before = path.stat()
    data = path.read_bytes()
    path.write_bytes(data.replace(b"haiku", b"HAIKU"))
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    peeks.clear()
    listed(home)
    assert path in peeks
