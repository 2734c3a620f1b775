"""Claude's usage from its OAuth usage endpoint (the stand-in's lane serves the answer Claude
Code 2.1.328 rendered) and from Claude Code's own cache, as ``segue usage`` reads them."""

from __future__ import annotations

import copy
import socket
import stat
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import orjson
import pytest

from segue.model.conversation import Provider
from segue.providers.claude.usage import usage_url
from segue.running.usage import ProviderUsage, read_usage
from segue_testbed.standin.accounts import serve_claude_usage
from segue_testbed.standin.server import Lane, StandIn

ANSWER: dict[str, Any] = orjson.loads(
    (Path(__file__).parent / "fixtures/usage/claude_oauth_usage.json").read_bytes()
)
NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
TOKEN = "sk-ant-oat01-segue-test-token"


def claude_env(tmp_path: Path, url: str, *, token: str | None = TOKEN) -> dict[str, str]:
    config = tmp_path / "home/.claude"
    config.mkdir(parents=True)
    if token is not None:
        creds = {
            "claudeAiOauth": {
                "accessToken": token,
                "refreshToken": "sk-ant-ort01-segue",
                "expiresAt": int(time.time() * 1000) + 3_600_000,
                "scopes": ["user:inference", "user:profile"],
                "subscriptionType": "max",
            }
        }
        (config / ".credentials.json").write_bytes(orjson.dumps(creds))
    return {
        "HOME": str(tmp_path / "home"),
        "CLAUDE_CONFIG_DIR": str(config),
        "SEGUE_CLAUDE_USAGE_URL": url,
        "SEGUE_STATE_DIR": str(tmp_path / "state"),
        "PATH": "/nonexistent",
    }


def claude(env: dict[str, str], now: datetime = NOW, remote: bool = True) -> ProviderUsage:
    (usage,) = read_usage(env, now=now, remote=remote, providers=[Provider.CLAUDE])
    return usage


def usage_requests(lane: Lane) -> list[Any]:
    return [r for r in lane.requests if r.path.startswith("/api/oauth/usage")]


def test_windows_from_the_endpoint_and_a_family_limit(standin: StandIn, tmp_path: Path) -> None:
    lane = standin.lane()
    serve_claude_usage(lane, ANSWER)
    usage = claude(claude_env(tmp_path, lane.base_url))
    (request,) = usage_requests(lane)
    assert request.method == "GET"
    assert request.headers["authorization"] == f"Bearer {TOKEN}"
    assert request.headers["anthropic-beta"] == "oauth-2025-04-20"
    by_name = {w.name: w for w in usage.windows}
    assert {n: (w.minutes, w.used_percent, w.scope) for n, w in by_name.items()} == {
        "five_hour": (300, 42.0, "all"),
        "seven_day": (10080, 77.0, "all"),
        "seven_day_opus": (10080, 100.0, "opus"),
        "seven_day_sonnet": (10080, 12.0, "sonnet"),
    }
    assert by_name["five_hour"].resets_at == datetime(2026, 12, 1, 2, 0, tzinfo=UTC)
    assert by_name["five_hour"].observed_at == NOW
    assert (by_name["five_hour"].source or "").startswith("usage endpoint: ")
    # only Opus is used up: switch model, not provider
    assert not usage.exhausted
    assert usage.blocking == by_name["seven_day_opus"]
    assert usage.suggestion == "claude --model sonnet (or /model sonnet inside Claude Code)"
    assert usage.notes == []


def test_an_all_models_window_at_100_is_exhaustion(standin: StandIn, tmp_path: Path) -> None:
    lane = standin.lane()
    answer = copy.deepcopy(ANSWER)
    answer["seven_day"]["utilization"] = 100.0
    serve_claude_usage(lane, answer)
    usage = claude(claude_env(tmp_path, lane.base_url))
    assert usage.exhausted
    assert usage.blocking is not None and usage.blocking.name == "seven_day"
    assert usage.suggestion is None


def test_the_answer_is_cached_for_a_minute(standin: StandIn, tmp_path: Path) -> None:
    lane = standin.lane()
    serve_claude_usage(lane, ANSWER)
    env = claude_env(tmp_path, lane.base_url)
    claude(env)
    again = claude(env, NOW + timedelta(seconds=30))
    assert len(usage_requests(lane)) == 1
    assert all((w.source or "").startswith("usage endpoint (cached): ") for w in again.windows)
    assert {w.observed_at for w in again.windows} == {NOW}
    (cache,) = (tmp_path / "state").rglob("*.json")
    assert stat.S_IMODE(cache.stat().st_mode) == 0o600
    assert TOKEN not in cache.read_text()
    claude(env, NOW + timedelta(seconds=61))
    assert len(usage_requests(lane)) == 2


def test_the_last_answer_stands_in_for_an_hour_when_the_endpoint_fails(
    standin: StandIn, tmp_path: Path
) -> None:
    lane = standin.lane()
    serve_claude_usage(lane, ANSWER)
    env = claude_env(tmp_path, lane.base_url)
    claude(env)
    serve_claude_usage(lane, {}, 500)
    later = claude(env, NOW + timedelta(minutes=20))
    assert len(usage_requests(lane)) == 2
    assert {w.observed_at for w in later.windows} == {NOW}  # shown with its real age
    assert later.notes and "HTTP 500" in later.notes[0]
    assert claude(env, NOW + timedelta(minutes=61)).windows == []


def test_offline_is_a_quiet_note(tmp_path: Path) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    started = time.monotonic()
    usage = claude(claude_env(tmp_path, f"http://127.0.0.1:{port}"))
    assert time.monotonic() - started < 3.5
    assert usage.windows == [] and not usage.exhausted
    (note,) = usage.notes
    assert "unreachable" in note


@pytest.mark.parametrize("status", [401, 429, 500])
def test_an_http_error_is_a_quiet_note(standin: StandIn, tmp_path: Path, status: int) -> None:
    lane = standin.lane()
    serve_claude_usage(lane, {"error": {"type": "error"}}, status)
    usage = claude(claude_env(tmp_path, lane.base_url))
    assert usage.windows == []
    (note,) = usage.notes
    assert note.startswith(f"Claude usage endpoint {lane.base_url}/api/oauth/usage: HTTP {status}")


def test_no_login_no_request(standin: StandIn, tmp_path: Path) -> None:
    lane = standin.lane()
    serve_claude_usage(lane, ANSWER)
    usage = claude(claude_env(tmp_path, lane.base_url, token=None))
    assert usage_requests(lane) == []
    assert usage.windows == []
    assert "no Claude login" in usage.notes[0]


@pytest.mark.parametrize("content", [b"", b"{not json", b"[]", b'{"claudeAiOauth": {}}'])
def test_a_broken_credentials_file_no_request(
    standin: StandIn, tmp_path: Path, content: bytes
) -> None:
    lane = standin.lane()
    serve_claude_usage(lane, ANSWER)
    env = claude_env(tmp_path, lane.base_url)
    Path(env["CLAUDE_CONFIG_DIR"], ".credentials.json").write_bytes(content)
    usage = claude(env)
    assert usage_requests(lane) == []
    assert usage.windows == [] and len(usage.notes) == 1


def test_offline_mode_asks_nothing(standin: StandIn, tmp_path: Path) -> None:
    lane = standin.lane()
    serve_claude_usage(lane, ANSWER)
    usage = claude(claude_env(tmp_path, lane.base_url), remote=False)
    assert usage_requests(lane) == [] and usage.windows == []


def test_claude_codes_own_cache_when_fresh(tmp_path: Path) -> None:
    env = claude_env(tmp_path, "http://127.0.0.1:9", token=None)
    config = Path(env["CLAUDE_CONFIG_DIR"], ".claude.json")
    fetched = NOW - timedelta(minutes=10)
    config.write_bytes(
        orjson.dumps(
            {
                "oauthAccount": {"accountUuid": "acct-1"},
                "cachedUsageUtilization": {
                    "fetchedAtMs": int(fetched.timestamp() * 1000),
                    "accountUuid": "acct-1",
                    "utilization": ANSWER,
                },
            }
        )
    )
    usage = claude(env, remote=False)
    assert {w.name for w in usage.windows} >= {"five_hour", "seven_day", "seven_day_opus"}
    assert all((w.source or "").startswith("Claude Code's cache: ") for w in usage.windows)
    assert {w.observed_at for w in usage.windows} == {fetched}
    stale = claude(env, NOW + timedelta(hours=2), remote=False)
    assert stale.windows == []


def test_the_url_override_takes_a_base_or_a_full_url() -> None:
    assert usage_url({}) == "https://api.anthropic.com/api/oauth/usage"
    assert usage_url({"SEGUE_CLAUDE_USAGE_URL": "http://h:1/x/"}) == "http://h:1/x/api/oauth/usage"
    full = "http://h:1/api/oauth/usage"
    assert usage_url({"SEGUE_CLAUDE_USAGE_URL": full}) == full
