"""``segue usage`` from recorded session files: the windows the newest sessions report, which
provider is exhausted, the window that blocks, and the JSON a script reads."""

from __future__ import annotations

import os
import shutil
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest

from segue.cli.documents import usage_to_json
from segue.model.conversation import Provider
from segue.running.usage import ProviderUsage, exhausted_providers, read_usage
from segue_testbed.fixtures import all_fixtures

FIXTURES = {f.name: f for f in all_fixtures()}
WINDOW_KEYS = {"name", "minutes", "used_percent", "resets_at", "scope", "source", "observed_at"}
PROVIDER_KEYS = {"provider", "exhausted", "blocking", "suggestion", "windows", "notes"}


def make_home(tmp_path: Path, *names: str) -> dict[str, str]:
    """A scratch HOME holding the named fixtures' sessions, later names modified later (the
    newest file is the last one named)."""
    home = tmp_path / "home"
    stamp = time.time() - 3600
    for name in names:
        before = set(home.rglob("*.jsonl")) if home.exists() else set()
        shutil.copytree(FIXTURES[name].home, home, dirs_exist_ok=True)
        for path in set(home.rglob("*.jsonl")) - before:
            os.utime(path, (stamp, stamp))
        stamp += 60
    return {
        "HOME": str(home),
        "PATH": "/nonexistent",
        "SEGUE_STATE_DIR": str(tmp_path / "state"),
    }


def one(usages: list[ProviderUsage], provider: Provider) -> ProviderUsage:
    (usage,) = [u for u in usages if u.provider is provider]
    return usage


def at(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


def test_codex_usage_limit_in_the_newest_rollout_is_exhaustion(tmp_path: Path) -> None:
    env = make_home(tmp_path, "codex-rate_limit_headers", "codex-usage_limited")
    usages = read_usage(env, now=at("2026-11-30T12:00:00"), providers=[Provider.CODEX])
    codex = one(usages, Provider.CODEX)
    assert codex.exhausted
    assert exhausted_providers(usages) == [Provider.CODEX]
    blocking = codex.blocking
    assert blocking is not None
    assert (blocking.name, blocking.minutes, blocking.used_percent) == ("five_hour", 300, 100.0)
    assert blocking.resets_at == datetime.fromtimestamp(1900000000, UTC)
    assert blocking.scope == "all"
    assert blocking.source is not None and blocking.source.startswith("session file: ")
    assert "rollout-" in blocking.source
    assert blocking.observed_at is not None and blocking.observed_at.date().isoformat() == (
        "2026-11-29"
    )
    # the weekly window the earlier rollout reported is kept: told apart by its length
    weekly = [w for w in codex.windows if w.minutes == 10080]
    assert [w.name for w in weekly] == ["weekly"]
    assert codex.suggestion is None


def test_codex_windows_by_length_and_the_fullest_one(tmp_path: Path) -> None:
    env = make_home(tmp_path, "codex-rate_limit_headers")
    codex = one(read_usage(env, now=at("2026-11-30T12:00:00"), remote=False), Provider.CODEX)
    assert not codex.exhausted
    by_name = {w.name: w for w in codex.windows}
    assert set(by_name) == {"five_hour", "weekly"}
    assert (by_name["five_hour"].used_percent, by_name["weekly"].used_percent) == (87.0, 31.5)
    assert codex.blocking == by_name["five_hour"]  # the most restrictive: 87% used


def test_a_window_that_has_reset_is_gone(tmp_path: Path) -> None:
    env = make_home(tmp_path, "claude-rate_limited")
    before = one(read_usage(env, now=at("2026-11-29T21:00:00")), Provider.CLAUDE)
    assert before.exhausted
    assert before.blocking is not None and before.blocking.name == "five_hour"
    assert before.blocking.resets_at == datetime.fromtimestamp(1795992660, UTC)
    after = one(read_usage(env, now=at("2026-11-29T23:00:00")), Provider.CLAUDE)
    assert not after.exhausted
    assert after.windows == [] and after.blocking is None


def test_a_limit_notice_without_a_window_is_live_until_a_reply(tmp_path: Path) -> None:
    """Claude's failed /compact records only a text notice (no window). Cut right after that
    notice, as the file was when the limit hit, it is a live signal; in the whole recording a
    later turn got a reply, so it is not."""
    env = make_home(tmp_path, "claude-compact_failed")
    (path,) = Path(env["HOME"]).rglob("*.jsonl")
    whole = one(read_usage(env, now=at("2026-11-29T22:00:00")), Provider.CLAUDE)
    assert not whole.exhausted and whole.blocking is None
    lines = path.read_bytes().splitlines(keepends=True)
    notice = next(i for i, line in enumerate(lines) if b"Error during compaction" in line)
    path.write_bytes(b"".join(lines[: notice + 1]))
    claude = one(read_usage(env, now=at("2026-11-29T22:00:00")), Provider.CLAUDE)
    assert claude.exhausted
    assert claude.blocking is not None
    assert claude.blocking.used_percent == 100.0
    assert claude.blocking.resets_at == at("2026-11-29T23:23:00")
    assert claude.blocking.source is not None and f"{path}:" in claude.blocking.source
    later = one(read_usage(env, now=at("2026-11-29T23:30:00")), Provider.CLAUDE)
    assert not later.exhausted  # its reset time has passed


def test_json_shape(tmp_path: Path) -> None:
    env = make_home(tmp_path, "codex-usage_limited", "claude-rate_limited")
    usages = read_usage(env, now=at("2026-11-29T21:00:00"))
    doc = usage_to_json(usages)
    assert set(doc) == {"providers"}
    assert {p["provider"] for p in doc["providers"]} == {"claude", "codex", "copilot"}
    for row in doc["providers"]:
        assert set(row) == PROVIDER_KEYS
        if row["provider"] == "copilot":  # no session of it here: nothing known, not exhausted
            assert (row["exhausted"], row["blocking"], row["windows"]) == (False, None, [])
            continue
        assert row["exhausted"] is True
        assert set(row["blocking"]) == WINDOW_KEYS
        for window in row["windows"]:
            assert set(window) == WINDOW_KEYS
            assert window["resets_at"].endswith("Z") and window["observed_at"].endswith("Z")
    claude = next(p for p in doc["providers"] if p["provider"] == "claude")
    assert claude["blocking"]["resets_at"] == "2026-11-29T22:51:00Z"
    assert claude["blocking"]["scope"] == "all"


def test_no_sessions_no_login_is_quiet(tmp_path: Path) -> None:
    env = {"HOME": str(tmp_path), "PATH": "/nonexistent", "SEGUE_STATE_DIR": str(tmp_path / "s")}
    usages = read_usage(env)
    assert {u.provider for u in usages} == {Provider.CLAUDE, Provider.CODEX, Provider("copilot")}
    for usage in usages:
        assert not usage.exhausted and usage.windows == [] and usage.blocking is None
        assert usage.notes  # the sources that could not answer say so, quietly


@pytest.mark.parametrize("garbage", [b"", b"\x00\xff not json\n", b'{"type":"assistant"'])
def test_a_broken_newest_file_does_not_break_usage(tmp_path: Path, garbage: bytes) -> None:
    env = make_home(tmp_path, "codex-usage_limited")
    broken = Path(env["HOME"]) / ".codex/sessions/2026/11/30/rollout-2026-11-30T10-00-00-x.jsonl"
    broken.parent.mkdir(parents=True)
    broken.write_bytes(garbage)
    codex = one(read_usage(env, now=at("2026-11-30T12:00:00"), remote=False), Provider.CODEX)
    assert codex.exhausted  # the older file still counts


def test_usage_is_fast_with_many_sessions(tmp_path: Path) -> None:
    env = make_home(tmp_path, "codex-usage_limited", "claude-rate_limited")
    home = Path(env["HOME"])
    for source in list(home.rglob("*.jsonl")):
        for n in range(500):
            copy = source.with_name(source.name.replace(source.stem[-4:], f"{n:04d}"))
            shutil.copyfile(source, copy)
            os.utime(copy, (1e9 + n, 1e9 + n))
    started = time.monotonic()
    read_usage(env, now=at("2026-11-30T12:00:00"), remote=False)
    assert time.monotonic() - started < 2.0
