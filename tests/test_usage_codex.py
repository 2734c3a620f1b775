"""Codex's usage from the real ``codex app-server`` (the pinned 0.169.0) with a ChatGPT login
in a scratch CODEX_HOME, asking a stand-in lane for ``/backend-api/wham/usage`` (the answer it
decoded in the issue 9 research)."""

from __future__ import annotations

import copy
import shutil
import socket
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson
import pytest

from segue.model.conversation import Provider
from segue.running.usage import ProviderUsage, read_usage
from segue_testbed.codex_cli import CodexHome, codex_bin
from segue_testbed.standin.accounts import chatgpt_base_url, serve_chatgpt_usage
from segue_testbed.standin.server import Lane, StandIn

pytestmark = pytest.mark.realcli

ANSWER: dict[str, Any] = orjson.loads(
    (Path(__file__).parent / "fixtures/usage/chatgpt_wham_usage.json").read_bytes()
)
NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


def codex_env(home: CodexHome, base_url: str) -> dict[str, str]:
    return home.env(
        {
            "SEGUE_CODEX_BIN": str(codex_bin()),
            "SEGUE_CODEX_CHATGPT_BASE_URL": base_url,
            "SEGUE_STATE_DIR": str(home.root / "state"),
        }
    )


def codex(env: dict[str, str]) -> ProviderUsage:
    (usage,) = read_usage(env, now=NOW, providers=[Provider.CODEX])
    return usage


def usage_requests(lane: Lane) -> list[Any]:
    return [r for r in lane.requests if r.path.endswith("/wham/usage")]


def test_windows_from_the_app_server(standin: StandIn, tmp_path: Path) -> None:
    lane = standin.lane()
    serve_chatgpt_usage(lane, ANSWER)
    home = CodexHome(tmp_path, lane)
    auth = home.sign_in_chatgpt()
    started = time.monotonic()
    usage = codex(codex_env(home, chatgpt_base_url(lane)))
    assert time.monotonic() - started < 5.5
    (request,) = usage_requests(lane)
    assert request.headers["authorization"] == f"Bearer {auth['tokens']['access_token']}"
    by_name = {w.name: w for w in usage.windows}
    assert {n: (w.minutes, w.used_percent, w.scope) for n, w in by_name.items()} == {
        "five_hour": (300, 42.0, "all"),
        "weekly": (10080, 77.0, "all"),
        "bengalfox.five_hour": (300, 5.0, "bengalfox"),
    }
    assert by_name["weekly"].resets_at == datetime.fromtimestamp(1796149615, UTC)
    assert (by_name["weekly"].source or "").startswith("codex app-server: ")
    assert by_name["weekly"].observed_at == NOW
    assert not usage.exhausted and usage.notes == []
    assert usage.blocking == by_name["weekly"]


def test_windows_are_told_apart_by_length_not_slot(standin: StandIn, tmp_path: Path) -> None:
    lane = standin.lane()
    answer = copy.deepcopy(ANSWER)
    rate_limit = answer["rate_limit"]
    rate_limit["primary_window"] = rate_limit.pop("secondary_window")  # weekly, as primary
    rate_limit["primary_window"]["used_percent"] = 100
    rate_limit["limit_reached"] = True
    del answer["additional_rate_limits"]
    serve_chatgpt_usage(lane, answer)
    home = CodexHome(tmp_path, lane)
    home.sign_in_chatgpt()
    usage = codex(codex_env(home, chatgpt_base_url(lane)))
    (weekly,) = usage.windows
    assert (weekly.name, weekly.minutes, weekly.used_percent) == ("weekly", 10080, 100.0)
    assert usage.exhausted and usage.blocking == weekly


def test_a_family_limit_suggests_another_model(standin: StandIn, tmp_path: Path) -> None:
    lane = standin.lane()
    answer = copy.deepcopy(ANSWER)
    answer["additional_rate_limits"][0]["rate_limit"]["primary_window"]["used_percent"] = 100
    serve_chatgpt_usage(lane, answer)
    home = CodexHome(tmp_path, lane)
    home.sign_in_chatgpt()
    usage = codex(codex_env(home, chatgpt_base_url(lane)))
    assert not usage.exhausted
    assert usage.blocking is not None and usage.blocking.scope == "bengalfox"
    assert usage.suggestion == f"codex -m {home.model}"


def test_an_api_key_login_is_a_quiet_note(standin: StandIn, tmp_path: Path) -> None:
    lane = standin.lane()
    serve_chatgpt_usage(lane, ANSWER)
    home = CodexHome(tmp_path, lane)
    home.sign_in_api_key()
    usage = codex(codex_env(home, chatgpt_base_url(lane)))
    assert usage.windows == [] and not usage.exhausted
    assert usage_requests(lane) == []
    (note,) = usage.notes
    assert "chatgpt authentication required" in note


def test_an_unreachable_backend_is_a_quiet_note(standin: StandIn, tmp_path: Path) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    home = CodexHome(tmp_path, standin.lane())
    home.sign_in_chatgpt()
    usage = codex(codex_env(home, f"http://127.0.0.1:{port}/backend-api/"))
    assert usage.windows == []
    (note,) = usage.notes
    assert note.startswith("codex app-server: ")


def test_a_codex_that_never_answers_is_ended_in_time(tmp_path: Path) -> None:
    sleeper = tmp_path / "codex"
    sleeper.write_text(f"#!/bin/sh\nexec {shutil.which('sleep')} 60\n")
    sleeper.chmod(0o755)
    env = {"HOME": str(tmp_path), "PATH": "/nonexistent", "SEGUE_CODEX_BIN": str(sleeper)}
    started = time.monotonic()
    usage = codex(env)
    assert time.monotonic() - started < 8
    assert usage.notes == ["codex app-server: no answer in time"]


def test_no_codex_is_a_quiet_note(tmp_path: Path) -> None:
    usage = codex({"HOME": str(tmp_path), "PATH": str(tmp_path)})
    assert usage.notes == ["codex is not on PATH; its app-server was not asked"]
