"""Copilot CLI as a provider: its reader against the CLI's own event schema, its limits, its hooks
and its agents, with the real CLI of the test bed."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import orjson
import psutil
import pytest

from segue.formats.copilot.reader import MAPPED, read_lines
from segue.model.conversation import (
    AssistantMessage,
    ErrorKind,
    ErrorNotice,
    Opaque,
    Provider,
    Reasoning,
    ToolResult,
    UserMessage,
)
from segue.model.session_info import SessionState
from segue.model.times import parse_iso
from segue.providers import entry
from segue.providers.base import ProviderEntry
from segue.providers.hooks import HookKind
from segue.providers.sessions import read_session
from segue_testbed.copilot_cli import COPILOT_VERSION, CopilotHome, copilot_bin, shared_cache
from segue_testbed.fixtures import Fixture, all_fixtures
from segue_testbed.standin.anthropic import RateLimited, Stall, Text
from segue_testbed.standin.server import StandIn

COPILOT = [f for f in all_fixtures() if f.provider == "copilot"]


def copilot() -> ProviderEntry:
    return entry(Provider("copilot"))


def fixture(name: str) -> Fixture:
    return next(f for f in COPILOT if f.spec["scenario"] == name)


# --- the schema the CLI ships ------------------------------------------------------------------


def _schema() -> dict[str, Any]:
    """The event schema of the pinned CLI, which it unpacks on its first run."""
    env = {"HOME": os.environ.get("HOME", "/tmp"), "XDG_CACHE_HOME": str(shared_cache())}
    env["PATH"] = os.environ["PATH"]
    subprocess.run([str(copilot_bin()), "--version"], env=env, capture_output=True, check=True)
    found = sorted(
        shared_cache().glob(f"copilot/pkg/*/{COPILOT_VERSION}/schemas/session-events.schema.json")
    )
    assert found, "the CLI did not unpack its schema"
    schema: dict[str, Any] = orjson.loads(found[0].read_bytes())
    return schema


def _resolve(schema: dict[str, Any], node: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in node:
        node = schema["definitions"][node["$ref"].rsplit("/", 1)[-1]]
    return node


def _sample(schema: dict[str, Any], node: dict[str, Any], depth: int = 0) -> Any:
    """A value of a schema node: its required fields, each with the first value it allows."""
    node = _resolve(schema, node)
    for union in ("anyOf", "oneOf"):
        if union in node:
            return _sample(schema, node[union][0], depth + 1)
    if "const" in node:
        return node["const"]
    if "enum" in node:
        return node["enum"][0]
    kind = node.get("type")
    kind = kind[0] if isinstance(kind, list) else kind
    if kind == "object" or "properties" in node:
        if depth > 6:
            return {}
        props = node.get("properties", {})
        return {
            k: _sample(schema, props[k], depth + 1) for k in node.get("required", []) if k in props
        }
    return {"array": [], "string": "x", "integer": 1, "number": 1, "boolean": False}.get(str(kind))


def persisted_events(schema: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Every event type the CLI writes to its log (not the ephemeral ones), with its schema."""
    out = {}
    for variant in _resolve(schema, schema)["anyOf"]:
        variant = _resolve(schema, variant)
        props = variant["properties"]
        ephemeral = _resolve(schema, props.get("ephemeral", {})).get("const") is True
        if not ephemeral:
            out[props["type"]["const"]] = variant
    return out


@pytest.mark.realcli
def test_every_event_the_cli_writes_is_mapped_or_kept_opaque(tmp_path: Path) -> None:
    schema = _schema()
    events = persisted_events(schema)
    assert len(events) > 50 and "session.error" in events
    missing = MAPPED - set(events)
    assert not missing, f"mapped events the schema no longer has: {missing}"
    path = tmp_path / "state" / "6b0a6c64-0000-4000-8000-000000000000" / "events.jsonl"
    for kind, variant in sorted(events.items()):
        event = _sample(schema, variant)
        event.update(type=kind, id="e1", timestamp="2026-12-03T10:00:00.000Z", parentId=None)
        conversation = read_lines(path, [orjson.dumps(event) + b"\n"])
        assert conversation.skipped == [], kind
        opaque = [i for i in conversation.items if isinstance(i, Opaque)]
        if kind in MAPPED - {"session.start", "session.resume", "session.model_change"}:
            assert not opaque or kind == "tool.execution_complete", kind
        else:
            assert [i.native_kind for i in opaque] == [kind]


def _validator(schema: dict[str, Any]) -> Any:
    from jsonschema import Draft7Validator  # type: ignore[import-untyped]

    return Draft7Validator(schema)


@pytest.mark.realcli
def test_what_segue_writes_is_what_the_cli_schema_allows(tmp_path: Path) -> None:
    """Every session segue writes for Copilot, from every recorded session of every provider,
    and a fork of each Copilot one, holds only events the CLI's schema allows (the CLI refuses
    a log with one it does not: "Session file is corrupted")."""
    validator = _validator(_schema())
    now = datetime.now(UTC)
    written = []
    for fx in all_fixtures():
        items = read_session(fx.transcript).items
        session = copilot().prepare(items, cwd=fx.spec["cwd"], env={"HOME": str(tmp_path)}, now=now)
        written += session.lines
        if fx.provider == "copilot":
            fork = copilot().fork(
                fx.transcript, items[-6:], "the runs you missed", cwd="/", env={}, now=now
            )
            written += fork.lines
    assert len(written) > 100
    for line in written:
        event = orjson.loads(line)
        errors = [e.message for e in validator.iter_errors(event)]
        assert not errors, (event["type"], errors[:3])


# --- what the reader takes from the recorded sessions -------------------------------------------


def test_a_session_refused_by_a_429_is_limited_with_its_reset() -> None:
    fx = fixture("rate_limited")
    conversation = read_session(fx.transcript)
    error = conversation.of(ErrorNotice)[-1]
    assert error.error_kind is ErrorKind.USAGE_LIMIT
    said = parse_iso(error.timestamp)
    assert said is not None and error.reset_at == said + timedelta(seconds=2733)
    row = copilot().peek(fx.transcript)
    assert row.state is SessionState.LIMIT and row.reset_at == error.reset_at
    reading = copilot().usage({"HOME": str(fx.home)}, remote=False, now=said)
    assert reading.signal is not None and reading.signal.resets_at == error.reset_at


def test_reasoning_bound_to_the_session_is_kept_private() -> None:
    conversation = read_session(fixture("thinking").transcript)
    (reasoning,) = conversation.of(Reasoning)
    assert reasoning.text == fixture("thinking").spec["thinking"][0]
    assert reasoning.private and not reasoning.portable


# --- the CLI's hooks ----------------------------------------------------------------------------


@pytest.mark.realcli
def test_segues_hook_file_runs_at_a_turns_end_and_at_a_limit(
    standin: StandIn, tmp_path: Path
) -> None:
    lane = standin.lane()
    home = CopilotHome(tmp_path, lane)
    env = home.env() | {"SEGUE_STATE_DIR": str(tmp_path / "state")}
    log = tmp_path / "hook.log"
    recorder = ["sh", "-c", f'cat >> {log}; echo " $0 $*" >> {log}', "segue", "hook", "copilot"]
    change = copilot().install_hooks(env, recorder)
    assert change is not None and change.changed
    again = copilot().install_hooks(env, recorder)
    assert again is not None and not again.changed
    cwd = tmp_path / "proj"
    cwd.mkdir()
    lane.script("anthropic", Text("hi"))
    home.run("hello", cwd=cwd).check()
    lane.script("anthropic", RateLimited(subscriber=False, message="try again in 2 hours"))
    assert home.run("more", cwd=cwd, resume=home.only_session_id()).returncode == 1
    deadline = time.monotonic() + 60  # (the hooks go on in the background)
    while (
        not log.exists() or log.read_text().count(" segue hook") < 2
    ) and time.monotonic() < deadline:
        time.sleep(0.2)
    ran = log.read_text()
    stop = next(line for line in ran.splitlines() if line.endswith("agentStop"))
    error = next(line for line in ran.splitlines() if line.endswith("errorOccurred"))
    seen = copilot().hook_event(["agentStop"], stop.rsplit(" segue", 1)[0].encode())
    assert seen.kind is HookKind.TURN_END and seen.session_id == home.only_session_id()
    assert seen.transcript == str(home.events_for(home.only_session_id()))
    failed = copilot().hook_event(["errorOccurred"], error.rsplit(" segue", 1)[0].encode())
    assert failed.kind is HookKind.LIMIT and "2 hours" in (failed.message or "")
    gone = copilot().uninstall_hooks(env)
    assert gone is not None and gone.changed
    assert not (home.copilot_home / "hooks" / "segue.json").exists()


# --- the agents scan ----------------------------------------------------------------------------


@pytest.mark.realcli
def test_a_running_copilot_is_found_with_its_session(standin: StandIn, tmp_path: Path) -> None:
    lane = standin.lane()
    home = CopilotHome(tmp_path, lane)
    cwd = tmp_path / "proj"
    cwd.mkdir()
    lane.script("anthropic", Stall(seconds=30))
    proc = subprocess.Popen(
        home.args("wait for me"),
        cwd=cwd,
        env=home.env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        found = None
        deadline = time.monotonic() + 30
        while found is None and time.monotonic() < deadline:
            for child in psutil.Process(proc.pid).children(recursive=True):
                try:
                    found = copilot().running_session(child) or found
                except psutil.Error:
                    continue
            time.sleep(0.2)
        assert found is not None
        (folder,) = [p for p in home.state_dir.iterdir() if not p.name.startswith(".")]
        assert found.session_id == folder.name
        assert found.path in (None, home.events_for(folder.name))
        assert found.launcher_pid == proc.pid
        assert copilot().running_session(psutil.Process(proc.pid)) is None  # the node launcher
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


# --- a return: a native fork with the missed runs -----------------------------------------------


def _messages(home: CopilotHome) -> list[dict[str, Any]]:
    body = home.model_requests()[0].body  # type: ignore[attr-defined]
    out = []
    for message in body["messages"]:
        content = message["content"]
        if isinstance(content, list):
            content = [{k: v for k, v in b.items() if k != "cache_control"} for b in content]
        out.append({**message, "content": content})
    return out


@pytest.mark.realcli
@pytest.mark.parametrize("handoff", [None, "While you were away: the tests were fixed."])
def test_copilot_resumes_a_fork_with_the_parent_then_the_delta(
    handoff: str | None, standin: StandIn, tmp_path: Path
) -> None:
    fx = fixture("thinking")
    cwd = Path(fx.spec["cwd"])
    cwd.mkdir(parents=True, exist_ok=True)
    baseline = CopilotHome(tmp_path / "baseline", standin.lane())
    shutil.copytree(fx.home, baseline.home, dirs_exist_ok=True)
    baseline.lane.script("anthropic", Text("MARKER"))
    baseline.run("Reply MARKER.", cwd=cwd, resume=fx.spec["session_id"]).check()
    parent_part = _messages(baseline)[:-1]  # all but the new prompt

    home = CopilotHome(tmp_path / "fork", standin.lane())
    shutil.copytree(fx.home, home.home, dirs_exist_ok=True)
    parent = home.events_for(fx.spec["session_id"])
    before = parent.read_bytes()
    delta_fx = next(f for f in all_fixtures() if f.name == "codex-tool_cycle")
    delta = read_session(delta_fx.transcript).items
    env = home.env()
    session = copilot().fork(parent, delta, handoff, cwd=str(cwd), env=env, now=datetime.now(UTC))
    copilot().publish(session, env)
    assert parent.read_bytes() == before and session.path.parent.parent == parent.parent.parent

    home.lane.script("anthropic", Text("MARKER"))
    ran = home.run("Reply MARKER.", cwd=cwd, resume=session.session_id)
    assert ran.returncode == 0, ran.stderr[-2000:]
    assert parent.read_bytes() == before
    sent = _messages(home)
    assert sent[: len(parent_part)] == parent_part  # the parent as its own resume sends it
    signature = "c2VndWUtc3RhbmRpbi1zaWduYXR1cmU="
    assert signature in orjson.dumps(parent_part).decode()  # its reasoning, in its own session
    rest = orjson.dumps(sent[len(parent_part) :]).decode()
    marks = [handoff] if handoff else []
    for item in copilot().select(delta):
        if isinstance(item, UserMessage | AssistantMessage):
            marks.append(item.text)
        elif isinstance(item, ToolResult):
            marks.append(item.output.strip().splitlines()[0])
    positions = [rest.index(orjson.dumps(m).decode()[1:-1]) for m in marks]
    assert positions == sorted(positions) and len(positions) >= 4
