"""A switched session loads in the target CLI's *interactive* TUI, driven on a pseudo-terminal.

The other real-CLI tests resume in print mode (``claude -p --resume``, ``codex exec resume``);
these start the TUIs the way a person does (``claude --resume <id>``, ``codex resume <id>``, and
``segue switch --exec`` handing over to ``claude``), type a prompt, and check that the model
request the stand-in receives carries the switched history and that the reply is drawn.

What the TUIs need to start offline without a dialog:

* Claude Code: onboarding done, the folder trusted and bypass mode accepted (``ClaudeHome``
  writes these), plus ``customApiKeyResponses.approved`` holding the API key's last 20
  characters; otherwise it asks "Detected a custom API key ... use this API key?", defaulting
  to *No*, and then never calls the model.
* Codex: ``[projects."<cwd>"] trust_level = "trusted"`` (else a "Trust this folder?" dialog),
  ``[notice.model_migrations] "gpt-5.5" = "gpt-6-sol"`` (else a "Meet GPT-6 Sol" model upgrade
  dialog), ``[tui] screen_reader_detection_done = true``, and ``--no-daemon``: by default the TUI
  starts a background app-server daemon in a session of its own (it outlives the test's process
  group) with a control socket shared under ``/tmp/codex-daemon-<uid>``.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest

from segue.model.conversation import Provider
from segue.switch import Switch, switch_session
from segue_testbed.claude_cli import API_KEY, ClaudeHome, claude_bin
from segue_testbed.codex_cli import CodexHome, codex_bin
from segue_testbed.fixtures import Fixture, all_fixtures
from segue_testbed.oracle import (
    atoms_from_claude_request,
    atoms_from_codex_request,
    atoms_from_history,
)
from segue_testbed.standin.anthropic import Text, side_request_kind
from segue_testbed.standin.openai import Text as CodexText
from segue_testbed.standin.openai import request_kind
from segue_testbed.standin.server import Lane, StandIn
from segue_testbed.terminal import Terminal

pytestmark = pytest.mark.realcli

PROMPT = "Say the agreed word."
REPLY = "MARKER-TUI"
START = 25.0  # seconds for a TUI to come up
ANSWER = 15.0  # seconds for a typed prompt to reach the stand-in and the reply to be drawn


def fixture_named(name: str) -> Fixture:
    return next(f for f in all_fixtures() if f.name == name)


def offline_claude(root: Path, lane: Lane, cwd: Path) -> ClaudeHome:
    home = ClaudeHome(root, lane)
    home.trust(cwd)
    path = home.config_dir / ".claude.json"
    config = orjson.loads(path.read_bytes())
    config["customApiKeyResponses"] = {"approved": [API_KEY[-20:]], "rejected": []}
    path.write_bytes(orjson.dumps(config))
    return home


def offline_codex(root: Path, lane: Lane, cwd: Path) -> CodexHome:
    home = CodexHome(root, lane)
    config = home.codex_home / "config.toml"
    config.write_text(
        config.read_text()
        + f'\n[projects.{orjson.dumps(str(cwd)).decode()}]\ntrust_level = "trusted"\n'
        + "\n[tui]\nscreen_reader_detection_done = true\n"
        + f'\n[notice.model_migrations]\n"{home.model}" = "gpt-6-sol"\n'
    )
    return home


def switched(fixture: Fixture, to: Provider, home: Path, root: Path) -> tuple[Switch, Path]:
    shutil.copytree(fixture.home, home, dirs_exist_ok=True)
    cwd = Path(fixture.spec["cwd"])
    cwd.mkdir(parents=True, exist_ok=True)
    env = {"HOME": str(home), "SEGUE_STATE_DIR": str(root / "state")}
    result = switch_session(fixture.spec["session_id"], to, env=env)
    assert result.session_id is not None
    return result, cwd


def claude_turn(lane: Lane) -> dict[str, Any] | None:
    """The main-loop model request that carries the typed prompt, once it arrived."""
    for request in lane.requests_for("anthropic"):
        if side_request_kind(request) is None and PROMPT in orjson.dumps(request.body).decode():
            body: dict[str, Any] = request.body
            return body
    return None


def codex_turn(lane: Lane) -> dict[str, Any] | None:
    for request in lane.requests_for("openai"):
        if request_kind(request) == "turn" and PROMPT in orjson.dumps(request.body).decode():
            body: dict[str, Any] = request.body
            return body
    return None


def ask(term: Terminal, ready: list[str], sent: Any) -> dict[str, Any]:
    """Wait for the TUI, type the prompt and Enter; the request it sent, after the reply shows."""
    for text in ready:
        term.wait_for(text, START)
    term.input_ready()
    typed = term.mark()
    term.type(PROMPT)
    # echoed: the keys reached the input box (drawn in order, maybe with a status line redrawn
    # between two keys; the request the stand-in receives checks the prompt arrived whole)
    term.wait_for(lambda: term.screen_has_scattered(PROMPT, since=typed), 10)
    after = term.mark()
    term.send("\r")
    term.wait_for(lambda: sent() is not None, ANSWER)
    term.wait_for(REPLY, ANSWER, since=after)
    body: dict[str, Any] = sent()
    return body


def assert_history(result: Switch, fixture: Fixture, sent_prompts: list[str]) -> None:
    ours = atoms_from_history(result.plan.items)
    assert [p for p in sent_prompts if p not in ours.summaries] == ours.prompts
    carried = [p for p in fixture.spec["prompts"] if p in ours.prompts]
    assert carried, "the switched session carries none of the fixture's prompts"
    assert all(p in sent_prompts for p in carried)


def test_codex_session_resumes_in_the_claude_tui(standin: StandIn, tmp_path: Path) -> None:
    fixture = fixture_named("codex-stuck_agent")
    lane = standin.lane()
    cwd = Path(fixture.spec["cwd"])
    claude = offline_claude(tmp_path, lane, cwd)
    result, cwd = switched(fixture, Provider.CLAUDE, claude.home, tmp_path)
    lane.script("anthropic", Text(REPLY))
    argv = [str(claude_bin()), "--resume", str(result.session_id), "--dangerously-skip-permissions"]
    with Terminal(argv, cwd=cwd, env=claude.env()) as term:
        body = ask(
            term, ["bypass permissions on", fixture.spec["prompts"][-1]], lambda: claude_turn(lane)
        )
        assert term.screen_has(fixture.spec["prompts"][-1])  # the history is drawn
    sent = atoms_from_claude_request(body, PROMPT)
    assert_history(result, fixture, sent.prompts)
    assert sent.replies == atoms_from_history(result.plan.items).replies


def test_claude_session_resumes_in_the_codex_tui(standin: StandIn, tmp_path: Path) -> None:
    fixture = fixture_named("claude-tool_cycle")
    lane = standin.lane()
    cwd = Path(fixture.spec["cwd"])
    codex = offline_codex(tmp_path, lane, cwd)
    result, cwd = switched(fixture, Provider.CODEX, codex.home, tmp_path)
    lane.script("openai", CodexText(REPLY))
    argv = [str(codex_bin()), "resume", "--no-daemon", str(result.session_id)]
    with Terminal(argv, cwd=cwd, env=codex.env()) as term:
        body = ask(term, [fixture.spec["prompts"][-1], "? for shortcuts"], lambda: codex_turn(lane))
        assert term.screen_has(fixture.spec["prompts"][-1])
    sent = atoms_from_codex_request(body, PROMPT)
    assert_history(result, fixture, sent.prompts)
    assert sent.replies == atoms_from_history(result.plan.items).replies


def test_switch_exec_hands_over_to_the_claude_tui(standin: StandIn, tmp_path: Path) -> None:
    fixture = fixture_named("codex-stuck_agent")
    lane = standin.lane()
    cwd = Path(fixture.spec["cwd"])
    cwd.mkdir(parents=True, exist_ok=True)
    claude = offline_claude(tmp_path, lane, cwd)
    shutil.copytree(fixture.home, claude.home, dirs_exist_ok=True)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "claude").symlink_to(claude_bin())
    (bin_dir / "codex").symlink_to(codex_bin())
    env = claude.env({"SEGUE_STATE_DIR": str(tmp_path / "state")})
    env["PATH"] = f"{bin_dir}{os.pathsep}{env['PATH']}"
    planned = switch_session(fixture.spec["session_id"], Provider.CLAUDE, dry_run=True, env=env)
    lane.script("anthropic", Text(REPLY))
    argv = [sys.executable, "-m", "segue", "switch", fixture.spec["session_id"]]
    with Terminal([*argv, "--to", "claude", "--exec"], cwd=tmp_path, env=env) as term:
        term.wait_for("continue it with:", START)
        handed_over = term.mark()
        new_ids = [p.stem for p in claude.transcripts()]
        assert len(new_ids) == 1, new_ids
        assert term.screen_has(f"claude --resume {new_ids[0]}")
        # the same process is now Claude Code, on the new session, in the session's folder
        term.wait_for(fixture.spec["prompts"][-1], START, since=handed_over)
        body = ask(term, ["for agents"], lambda: claude_turn(lane))
        # the process segue started is the same one, now running the CLI on the new session
        assert term.proc.poll() is None
        cmdline = Path(f"/proc/{term.proc.pid}/cmdline")
        if cmdline.exists():
            argv_now = cmdline.read_bytes().decode().split("\0")
            assert "--resume" in argv_now and new_ids[0] in argv_now, argv_now
    sent = atoms_from_claude_request(body, PROMPT)
    assert_history(planned, fixture, sent.prompts)
    assert sent.replies == atoms_from_history(planned.plan.items).replies
