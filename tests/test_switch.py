"""``segue switch``: every recorded session, both directions, proven by the real target CLI."""

from __future__ import annotations

import hashlib
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import orjson
import pytest

from segue.model.conversation import Compaction, ErrorNotice, Provider, ToolCall, ToolKind
from segue.model.errors import SwitchError, SwitchLocked
from segue.providers.sessions import read_session
from segue.switch import session_lock, switch_session
from segue.transforms.budget import TargetProfile
from segue.transforms.plan import Label
from segue.transforms.shrink import MARKER_TRIGGER
from segue_testbed.fixtures import Fixture, all_fixtures
from segue_testbed.oracle import (
    atoms_from_claude_request,
    atoms_from_codex_request,
    atoms_from_history,
)
from segue_testbed.standin.server import Lane, StandIn
from segue_testbed.tokenizers import count_tokens

FIXTURES = all_fixtures()
MARKER = "Reply with the word MARKER and nothing else."


def other(provider: str) -> Provider:
    return Provider.CODEX if provider == "claude" else Provider.CLAUDE


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


class Target:
    """A scratch home for the target CLI, holding a copy of the source session too."""

    def __init__(self, provider: Provider, root: Path, lane: Lane, codex_config: str = "") -> None:
        self.provider = provider
        self.lane = lane
        if provider is Provider.CLAUDE:
            from segue_testbed.claude_cli import ClaudeHome

            self.claude = ClaudeHome(root, lane)
            self.home = self.claude.home
        else:
            from segue_testbed.codex_cli import CodexHome

            self.codex = CodexHome(root, lane)
            self.home = self.codex.home
            config = self.codex.codex_home / "config.toml"
            config.write_text(codex_config + config.read_text())  # top-level keys go first
        self.env = {"HOME": str(self.home), "SEGUE_STATE_DIR": str(root / "state")}

    def resume(
        self, session_id: str, cwd: Path, env: dict[str, str] | None = None
    ) -> tuple[Any, dict[str, Any]]:
        """Resume with the marker prompt; the run and the first model request it sent."""
        if self.provider is Provider.CLAUDE:
            from segue_testbed.standin.anthropic import Text

            self.lane.script("anthropic", Text("MARKER"))
            run = self.claude.run(MARKER, cwd=cwd, resume=session_id, env=env)
            return run, self.claude.model_requests()[0].body
        from segue_testbed.standin.openai import Text as CodexText
        from segue_testbed.standin.openai import request_kind

        self.lane.script("openai", CodexText("MARKER"))
        ran = self.codex.exec(MARKER, cwd=cwd, resume=session_id, env=env)
        turns = [r.body for r in self.lane.requests_for("openai") if request_kind(r) == "turn"]
        return ran, turns[0]

    def atoms(self, body: dict[str, Any]) -> Any:
        if self.provider is Provider.CLAUDE:
            return atoms_from_claude_request(body, MARKER)
        return atoms_from_codex_request(body, MARKER)


def history_chars_sent(provider: Provider, body: dict[str, Any]) -> int:
    history = body["messages"] if provider is Provider.CLAUDE else body["input"]
    return len(orjson.dumps(history))


def history_texts_sent(provider: Provider, body: dict[str, Any]) -> list[str]:
    """Every model-visible text of a request's history: messages, tool calls and outputs."""
    texts: list[str] = []
    for entry in body["messages"] if provider is Provider.CLAUDE else body["input"]:
        content = entry.get("content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        for block in blocks if isinstance(blocks, list) else []:
            if block.get("type") == "tool_use":
                texts.append(f"{block['name']} {orjson.dumps(block['input']).decode()}")
            elif block.get("type") == "tool_result":
                inner = block.get("content")
                parts = [{"text": inner}] if isinstance(inner, str) else inner or []
                texts += [p["text"] for p in parts if isinstance(p.get("text"), str)]
            elif isinstance(block.get("text"), str):
                texts.append(block["text"])
        if entry.get("type") == "function_call":
            texts.append(f"{entry['name']} {entry['arguments']}")
        elif entry.get("type") == "function_call_output":
            output = entry.get("output")
            texts.append(output if isinstance(output, str) else orjson.dumps(output).decode())
    return texts


def tokens_sent(profile: TargetProfile, body: dict[str, Any]) -> int:
    """What the request's history really costs the target: its tokenizer's count (the test
    bed's), times the profile's safety factor."""
    counted = count_tokens(history_texts_sent(profile.provider, body))
    real = sum(c.o200k if profile.tokenizer.name == "o200k" else c.claude for c in counted)
    return int(real * profile.tokenizer_factor)


def request_texts(provider: Provider, body: dict[str, Any]) -> list[str]:
    """Every text the request carries as history (any role)."""
    texts: list[str] = []
    entries = body["messages"] if provider is Provider.CLAUDE else body["input"]
    for entry in entries:
        content = entry.get("content")
        if isinstance(content, str):
            texts.append(content)
        elif isinstance(content, list):
            texts.extend(b["text"] for b in content if isinstance(b.get("text"), str))
    return texts


def native_calls(provider: Provider, body: dict[str, Any]) -> int:
    if provider is Provider.CLAUDE:
        return sum(
            1
            for m in body["messages"]
            if isinstance(m.get("content"), list)
            for b in m["content"]
            if b.get("type") == "tool_use"
        )
    return sum(1 for i in body["input"] if i.get("type") == "function_call")


@pytest.mark.realcli
@pytest.mark.parametrize("fixture", FIXTURES, ids=lambda f: f.name)
def test_switch_then_the_real_target_resumes_it(
    fixture: Fixture, standin: StandIn, tmp_path: Path
) -> None:
    to = other(fixture.provider)
    target = Target(to, tmp_path, standin.lane())
    shutil.copytree(fixture.home, target.home, dirs_exist_ok=True)
    source = target.home / str(fixture.spec["transcript"]).removeprefix("home/")
    before, fixture_before = sha256(source), sha256(fixture.transcript)
    cwd = Path(fixture.spec["cwd"])
    cwd.mkdir(parents=True, exist_ok=True)

    result = switch_session(fixture.spec["session_id"], to, env=target.env)

    assert sha256(source) == before and sha256(fixture.transcript) == fixture_before
    assert result.path is not None and result.path.is_file()
    assert result.path.stat().st_mode & 0o777 == 0o600
    run, body = target.resume(str(result.session_id), cwd)
    assert run.returncode == 0, run.stderr[-2000:]
    assert "MARKER" in run.stdout
    sent = target.atoms(body)
    ours = atoms_from_history(result.plan.items)
    narrated = tuple(f"[{c.name}" for c in result.plan.items if isinstance(c, ToolCall))
    assert [r for r in sent.replies if not r.startswith(narrated)] == ours.replies
    assert [p for p in sent.prompts if p not in ours.summaries] == ours.prompts
    shell_calls = [
        i for i in result.plan.items if isinstance(i, ToolCall) and i.tool is ToolKind.SHELL
    ]
    assert native_calls(to, body) >= len(shell_calls)
    history = orjson.dumps(body["messages"] if to is Provider.CLAUDE else body["input"]).decode()
    assert "encrypted_content" not in history and '"signature"' not in history
    for notice in read_session(source).of(ErrorNotice):
        assert notice.message not in sent.replies
    if fixture.spec["compactions"] and result.plan.label is not Label.RAW_HISTORY:
        assert ours.summaries, "the portable summary must reach the target"
    assert result.plan.fits
    assert tokens_sent(result.plan.target, body) <= result.plan.target.context_window


def _large_source(provider: Provider, home: Path, copies_mb: float) -> tuple[str, Path, str]:
    """A multi-turn source of recorded turns, bigger than the target's budget."""
    from segue_testbed.generate import write_large_session

    if provider is Provider.CODEX:
        folder = home / ".codex" / "sessions" / "2026" / "11" / "29"
    else:
        fx = next(f for f in FIXTURES if f.name == "claude-large")
        folder = (home / str(fx.spec["transcript"]).removeprefix("home/")).parent
    folder.mkdir(parents=True, exist_ok=True)
    path, _ = write_large_session(provider, folder, copies_mb)
    conv = read_session(path)
    assert conv.skipped == []
    return conv.meta.id, path, str(conv.meta.cwd)


@pytest.mark.realcli
@pytest.mark.parametrize("source_provider", [Provider.CODEX, Provider.CLAUDE])
def test_a_source_larger_than_the_target_window_is_shrunk_and_fits(
    source_provider: Provider, standin: StandIn, tmp_path: Path
) -> None:
    to = other(source_provider.value)
    # small target windows, set the way a user would: Claude's env, Codex's config.toml
    codex_config = "model_auto_compact_token_limit = 40000\n"
    target = Target(to, tmp_path, standin.lane(), codex_config=codex_config)
    cli_env = {"CLAUDE_CODE_AUTO_COMPACT_WINDOW": "100000"} if to is Provider.CLAUDE else {}
    target.env.update(cli_env)
    session_id, source, cwd_text = _large_source(source_provider, target.home, 2.5)
    before = sha256(source)
    cwd = Path(cwd_text)
    cwd.mkdir(parents=True, exist_ok=True)

    result = switch_session(session_id, to, env=target.env)

    assert sha256(source) == before
    plan = result.plan
    assert plan.label is Label.SHRUNK
    assert plan.shrink is not None and plan.shrink.removed_anything
    assert plan.fits and plan.chars_after < plan.chars_before
    run, body = target.resume(str(result.session_id), cwd, env=cli_env)
    assert run.returncode == 0, run.stderr[-2000:]
    assert "MARKER" in run.stdout
    # the target's first request fits its window
    assert tokens_sent(plan.target, body) <= plan.target.context_window
    # the last turn is intact: its prompt and its reply reached the target
    source_atoms = atoms_from_history(read_session(source).items)
    sent = target.atoms(body)
    assert source_atoms.prompts[-1] in sent.prompts
    assert source_atoms.replies[-1] == sent.replies[-1]
    # dropped turns are listed in the index the ladder put in their place, and it reached the
    # target (Claude: the summary carrier; Codex: a developer message)
    if plan.shrink.dropped_turns:
        markers = [
            i for i in plan.items if isinstance(i, Compaction) and i.trigger == MARKER_TRIGGER
        ]
        assert len(markers) == 1
        index = [line for line in markers[0].summary.splitlines() if line.startswith("- ")]
        assert len(index) == plan.shrink.indexed_prompts == min(plan.shrink.dropped_turns, 40)
        assert all(line[2:] in source_atoms.prompts for line in index)
        assert any(markers[0].summary in text for text in request_texts(to, body))


def _copy_fixture(name: str, home: Path) -> tuple[Fixture, Path]:
    fixture = next(f for f in FIXTURES if f.name == name)
    shutil.copytree(fixture.home, home, dirs_exist_ok=True)
    return fixture, home / str(fixture.spec["transcript"]).removeprefix("home/")


def test_dry_run_writes_nothing(tmp_path: Path) -> None:
    fixture, _ = _copy_fixture("codex-stuck_agent", tmp_path / "home")
    env = {"HOME": str(tmp_path / "home"), "SEGUE_STATE_DIR": str(tmp_path / "state")}
    before = sorted(p for p in (tmp_path / "home").rglob("*"))
    result = switch_session(fixture.spec["session_id"][:13], Provider.CLAUDE, dry_run=True, env=env)
    assert result.path is None and result.session_id is None
    assert sorted(p for p in (tmp_path / "home").rglob("*")) == before
    assert result.plan.items


def test_a_second_switch_of_the_same_session_waits_then_says_who_holds_it(
    tmp_path: Path,
) -> None:
    fixture, _ = _copy_fixture("claude-tool_cycle", tmp_path / "home")
    env = {
        "HOME": str(tmp_path / "home"),
        "SEGUE_STATE_DIR": str(tmp_path / "state"),
        "SEGUE_LOCK_WAIT": "0.3",
    }
    held, release = threading.Event(), threading.Event()

    def other_switch() -> None:  # another switch of the same session, holding its lock
        with session_lock(Provider.CLAUDE, fixture.spec["session_id"], env):
            held.set()
            release.wait(30)

    holder = threading.Thread(target=other_switch)
    holder.start()
    try:
        assert held.wait(30)
        started = time.monotonic()
        with pytest.raises(SwitchLocked, match=rf"already running \(pid {os.getpid()}"):
            switch_session(fixture.spec["session_id"], Provider.CODEX, env=env)
        assert 0.25 <= time.monotonic() - started < 10  # it waited, a bounded time
    finally:
        release.set()
        holder.join()
    # once the first is done, the switch goes through
    assert switch_session(fixture.spec["session_id"], Provider.CODEX, env=env).path is not None


def test_switching_to_the_same_provider_is_refused(tmp_path: Path) -> None:
    fixture, _ = _copy_fixture("claude-chat", tmp_path / "home")
    env = {"HOME": str(tmp_path / "home"), "SEGUE_STATE_DIR": str(tmp_path / "state")}
    with pytest.raises(SwitchError, match="already a claude session"):
        switch_session(fixture.spec["session_id"], Provider.CLAUDE, env=env)


def test_a_malformed_line_is_reported_and_the_rest_switched(tmp_path: Path) -> None:
    fixture, source = _copy_fixture("codex-multi_turn", tmp_path / "home")
    lines = source.read_bytes().splitlines(keepends=True)
    lines.insert(5, b'{"timestamp": "broken\n')  # hand-made garbage: a test of rejection
    source.write_bytes(b"".join(lines))
    env = {"HOME": str(tmp_path / "home"), "SEGUE_STATE_DIR": str(tmp_path / "state")}
    result = switch_session(str(source), Provider.CLAUDE, env=env)
    assert [(s.file, s.line) for s in result.source.skipped] == [(str(source), 6)]
    assert atoms_from_history(result.plan.items).prompts == fixture.spec["prompts"]


def test_a_source_with_nothing_to_carry_writes_nothing(tmp_path: Path) -> None:
    _, source = _copy_fixture("codex-chat", tmp_path / "home")
    source.write_bytes(b"garbage\n" * 3)  # hand-made garbage: a test of rejection
    env = {"HOME": str(tmp_path / "home"), "SEGUE_STATE_DIR": str(tmp_path / "state")}
    with pytest.raises(SwitchError):
        switch_session(str(source), Provider.CLAUDE, env=env)
    assert not (tmp_path / "home" / ".claude" / "projects").exists()


def _segue(env: dict[str, str], *args: str) -> subprocess.Popen[bytes]:
    full = {**{k: v for k, v in os.environ.items() if not k.startswith(("CLAUDE", "CODEX"))}}
    full.update(env)
    return subprocess.Popen(
        [sys.executable, "-m", "segue", *args],
        env=full,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


def test_killing_a_switch_leaves_no_target_and_no_lock(tmp_path: Path) -> None:
    from segue_testbed.generate import write_large_session

    home = tmp_path / "home"
    folder = home / ".codex" / "sessions" / "2026" / "11" / "29"
    folder.mkdir(parents=True)
    source, _ = write_large_session(Provider.CODEX, folder, 40)
    before = sha256(source)
    env = {"HOME": str(home), "SEGUE_STATE_DIR": str(tmp_path / "state")}
    projects = home / ".claude" / "projects"
    # how long a whole switch takes here, to kill the next ones at points inside it
    started = time.monotonic()
    probe = _segue(env, "switch", str(source), "--to", "claude", "--dry-run")
    assert probe.wait(timeout=120) == 0
    span = time.monotonic() - started
    for fraction in (0.2, 0.5, 0.8, 0.95):
        proc = _segue(env, "switch", str(source), "--to", "claude")
        time.sleep(span * fraction)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=60)
        for written in projects.rglob("*.jsonl") if projects.exists() else []:
            # whatever is under a session name is a complete session
            records = [orjson.loads(line) for line in written.read_bytes().splitlines()]
            assert records[-1]["type"] == "last-prompt"
    retry = _segue(env, "switch", str(source), "--to", "claude", "--json")
    out, err = retry.communicate(timeout=120)
    assert retry.returncode == 0, err.decode()[-2000:]
    doc = orjson.loads(out)
    assert Path(doc["path"]).is_file()
    assert not list(projects.rglob(".segue-*.partial")), "a partial file was left behind"
    assert sha256(source) == before


def test_switch_cli_json_and_human(tmp_path: Path) -> None:
    fixture, _ = _copy_fixture("codex-stuck_agent", tmp_path / "home")
    env = {"HOME": str(tmp_path / "home"), "SEGUE_STATE_DIR": str(tmp_path / "state")}
    proc = _segue(
        env, "switch", fixture.spec["session_id"], "--to", "claude", "--dry-run", "--json"
    )
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err.decode()
    doc = orjson.loads(out)
    assert doc["dry_run"] is True and doc["path"] is None
    assert doc["label"] in ("native", "raw", "shrunk") and doc["summary"].startswith(doc["label"])
    assert doc["strategy"] == doc["label"]  # the deprecated name of the plan's label
    assert doc["thread"]["strategy"] in ("full_into_new", "no_handoff")  # the thread move's
    assert doc["target"]["provider"] == "claude"
    human = _segue(env, "switch", fixture.spec["session_id"], "--to", "claude")
    out, err = human.communicate(timeout=60)
    assert human.returncode == 0, err.decode()
    text = out.decode()
    assert "continue it with:" in text and "claude --resume" in text
    assert fixture.spec["cwd"] in text


def test_demo_runs_for_a_new_user(tmp_path: Path) -> None:
    proc = _segue({"HOME": str(tmp_path / "nobody")}, "demo", "--home", str(tmp_path / "demo"))
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err.decode()
    text = out.decode()
    assert "limit until" in text  # the bundled session is stuck on its usage limit
    assert "compact_boundary" in text and "claude --resume" in text
    assert not (tmp_path / "nobody").exists(), "the demo touched the real home"


def test_bundled_demo_session_is_the_recorded_fixture() -> None:
    from segue.demo import bundled_session

    root, about = bundled_session()
    fixture = next(f for f in FIXTURES if f.name == "codex-stuck_agent")
    bundled = root / str(about["transcript"])
    assert bundled.read_bytes() == fixture.transcript.read_bytes()


def test_an_unfinished_turn_is_noted(tmp_path: Path) -> None:
    fixture, _ = _copy_fixture("claude-interrupted", tmp_path / "home")
    env = {"HOME": str(tmp_path / "home"), "SEGUE_STATE_DIR": str(tmp_path / "state")}
    result = switch_session(fixture.spec["session_id"], Provider.CODEX, env=env, dry_run=True)
    assert any("had not finished" in note for note in result.plan.notes)


def test_the_target_defaults_to_the_other_provider(tmp_path: Path) -> None:
    fixture, _ = _copy_fixture("claude-chat", tmp_path / "home")
    env = {"HOME": str(tmp_path / "home"), "SEGUE_STATE_DIR": str(tmp_path / "state")}
    result = switch_session(fixture.spec["session_id"], env=env, dry_run=True)
    assert result.target is Provider.CODEX
