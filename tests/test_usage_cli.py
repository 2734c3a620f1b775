"""``segue usage`` as a user runs it: a block per provider, or JSON; never a traceback."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
from pathlib import Path

import orjson
import pytest

from segue_testbed.fixtures import all_fixtures
from segue_testbed.standin.accounts import serve_claude_usage
from segue_testbed.standin.server import StandIn
from tests.segue_cli import segue as run_segue

FIXTURES = {f.name: f for f in all_fixtures()}
ANSWER = orjson.loads(
    (Path(__file__).parent / "fixtures/usage/claude_oauth_usage.json").read_bytes()
)


def make_home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    shutil.copytree(FIXTURES["codex-usage_limited"].home, home, dirs_exist_ok=True)
    (home / ".claude").mkdir()
    return home


def segue(home: Path, *args: str, **extra: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CLAUDE_", "CODEX_", "SEGUE_"))}
    env.update(HOME=str(home), PATH="/usr/bin:/bin", TZ="UTC", SEGUE_STATE_DIR=str(home / "st"))
    env.update(extra)
    return run_segue(["usage", *args], env, timeout=60)


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_usage_shows_the_blocking_window(tmp_path: Path) -> None:
    result = segue(make_home(tmp_path))
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    headline = next(line for line in lines if line.startswith("codex"))
    assert "exhausted — blocked by the 5-hour limit until 2030-03-17 17:46 UTC (in " in headline
    assert any(
        "5-hour" in line and "100% used" in line and "session file" in line for line in lines
    )
    assert any(line.startswith("claude") and " ok" in line for line in lines)
    assert "Traceback" not in result.stdout + result.stderr


def test_usage_json(tmp_path: Path) -> None:
    result = segue(make_home(tmp_path), "--json")
    assert result.returncode == 0, result.stderr
    doc = orjson.loads(result.stdout)
    codex = next(p for p in doc["providers"] if p["provider"] == "codex")
    assert codex["exhausted"] is True
    assert codex["blocking"]["name"] == "five_hour"
    assert codex["blocking"]["resets_at"] == "2030-03-17T17:46:40Z"


def test_usage_from_the_endpoint_and_offline(standin: StandIn, tmp_path: Path) -> None:
    lane = standin.lane()
    serve_claude_usage(lane, ANSWER)
    home = make_home(tmp_path)
    creds = {"claudeAiOauth": {"accessToken": "sk-ant-oat01-cli", "scopes": ["user:profile"]}}
    (home / ".claude/.credentials.json").write_bytes(orjson.dumps(creds))
    result = segue(home, SEGUE_CLAUDE_USAGE_URL=lane.base_url)
    assert result.returncode == 0, result.stderr
    assert "switch model instead: claude --model sonnet" in result.stdout
    assert "usage endpoint just now" in result.stdout
    cached = segue(home, SEGUE_CLAUDE_USAGE_URL=lane.base_url)
    assert "usage endpoint (cached) just now" in cached.stdout
    offline = segue(home, "--offline", "--json", SEGUE_CLAUDE_USAGE_URL=lane.base_url)
    claude = next(p for p in orjson.loads(offline.stdout)["providers"] if p["provider"] == "claude")
    assert claude["windows"] == []
    assert len([r for r in lane.requests if r.path == "/api/oauth/usage"]) == 1


@pytest.mark.parametrize("as_json", [False, True])
def test_a_broken_credentials_file_and_no_network(tmp_path: Path, as_json: bool) -> None:
    home = make_home(tmp_path)
    (home / ".claude/.credentials.json").write_bytes(b"\x00{broken")
    args = ["--json"] if as_json else []
    result = segue(home, *args, SEGUE_CLAUDE_USAGE_URL=f"http://127.0.0.1:{closed_port()}")
    assert result.returncode == 0
    assert "Traceback" not in result.stdout + result.stderr
    if as_json:
        claude = next(
            p for p in orjson.loads(result.stdout)["providers"] if p["provider"] == "claude"
        )
        assert any(".credentials.json: not JSON" in note for note in claude["notes"])
    else:
        assert ".credentials.json: not JSON" in result.stdout


def test_a_bad_option_is_one_json_line(tmp_path: Path) -> None:
    result = segue(make_home(tmp_path), "--json", "--bogus")
    assert result.returncode == 2
    assert set(orjson.loads(result.stdout)) == {"error", "exit_code"}
