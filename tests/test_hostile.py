"""Hostile input, broken machines, secrets: never a traceback, a hang, lost data or a half
switch (issue 7).

Every case starts from the files the real CLIs wrote (``tests/fixtures``); the only hand-made
native values are the corruptions under test, each derived from a real record (a field's type
swapped, a real line copied with another id).
"""

from __future__ import annotations

import hashlib
import io
import os
import shutil
import sqlite3
import stat
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
from rich.console import Console

import segue.cli.app
import segue.cli.render
from segue.cli.app import main
from segue.cli.render import print_conversation
from segue.formats.jsonl import OVERLONG, LineReport, bounded_lines, iter_records_in, tail_lines
from segue.model.conversation import Compaction, Provider
from segue.model.errors import SegueError, SessionError, SwitchError
from segue.providers.sessions import find_session, list_sessions, read_session
from segue.switch import plan_switch, state_dir, switch_session
from segue.transforms.budget import TargetProfile
from segue.transforms.secrets import marker
from segue.transforms.shrink import MARKER_TRIGGER
from segue_testbed.fixtures import Fixture, all_fixtures
from tests.segue_cli import segue as run_segue
from tests.test_readers import without_opaque_data

FIXTURES = {f.name: f for f in all_fixtures()}
CLI_ENV_DROP = ("CLAUDE_", "CODEX_", "SEGUE_", "ANTHROPIC_")


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def copy_home(name: str, home: Path) -> tuple[Fixture, Path]:
    fixture = FIXTURES[name]
    shutil.copytree(fixture.home, home, dirs_exist_ok=True)
    return fixture, home / str(fixture.spec["transcript"]).removeprefix("home/")


def env_for(tmp: Path, home: Path) -> dict[str, str]:
    return {"HOME": str(home), "SEGUE_STATE_DIR": str(tmp / "state")}


def records(path: Path) -> list[dict[str, Any]]:
    return [orjson.loads(line) for line in path.read_bytes().splitlines() if line.strip()]


def rewrite(path: Path, edit: Callable[[list[dict[str, Any]]], object]) -> None:
    recs = records(path)
    edit(recs)
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in recs))


def cli(
    home: Path,
    *args: str,
    tmp: Path | None = None,
    timeout: float = 120,
    cwd: Path | None = None,
    **extra: str,
) -> subprocess.CompletedProcess[str]:
    """The installed command as a user runs it (a fresh process: a hang fails the test)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(CLI_ENV_DROP)}
    env.update(HOME=str(home), **extra)
    if tmp is not None:
        env["SEGUE_STATE_DIR"] = str(tmp / "state")
    return run_segue(list(args), env, timeout=timeout, cwd=cwd)


def no_traceback(run: subprocess.CompletedProcess[str]) -> None:
    assert "Traceback" not in run.stderr and "internal error" not in run.stderr, run.stderr
    assert "Traceback" not in run.stdout


# --------------------------------------------------------------------------- hangs and memory


def test_a_fifo_named_like_a_rollout_is_a_reported_skip(tmp_path: Path) -> None:
    fixture, source = copy_home("codex-multi_turn", tmp_path / "home")
    fifo = source.with_name(
        "rollout-2026-11-29T20-53-18-01a22915-0000-7000-8000-000000000000.jsonl"
    )
    os.mkfifo(fifo)
    run = cli(tmp_path / "home", "sessions", "--all", "--json", timeout=60)
    no_traceback(run)
    doc = orjson.loads(run.stdout)
    assert [row["id"] for row in doc["sessions"]] == [fixture.spec["session_id"]]
    assert any(str(fifo) in p and "FIFO" in p for p in doc["problems"])
    shown = cli(tmp_path / "home", "show", str(fifo), timeout=60)
    assert shown.returncode == 1 and "FIFO" in shown.stderr and str(fifo) in shown.stderr
    # the usage and the fleet read past it: one note, the others still read
    usage = cli(tmp_path / "home", "usage", "--offline", timeout=60)
    no_traceback(usage)
    assert usage.returncode == 0 and "FIFO" in usage.stdout, usage.stdout + usage.stderr
    fleet = cli(tmp_path / "home", "switch", "--from", "codex", "--dry-run", timeout=60)
    no_traceback(fleet)
    assert fleet.returncode == 0, fleet.stderr


def test_a_fifo_as_a_subagent_transcript_does_not_hang_show_or_switch(tmp_path: Path) -> None:
    fixture, source = copy_home("claude-subagent", tmp_path / "home")
    subagents = source.with_suffix("") / "subagents"
    fifo = subagents / "agent-a000000000000000f.jsonl"
    os.mkfifo(fifo)
    (subagents / "agent-a000000000000000d.jsonl").mkdir()  # a folder named like one
    (subagents / "agent-a0000000000000001.jsonl").symlink_to(tmp_path / "gone")  # dangling
    sid = fixture.spec["session_id"]
    shown = cli(tmp_path / "home", "show", sid, timeout=60)
    no_traceback(shown)
    assert shown.returncode == 0
    assert "FIFO" in shown.stdout and "a directory" in shown.stdout and "gone" not in shown.stderr
    conversation = read_session(source)
    assert len(conversation.sidechains) == 1  # the real one is still read
    assert sum("subagent transcript skipped" in n for n in conversation.notes) == 3
    switched = cli(tmp_path / "home", "switch", sid, "--dry-run", tmp=tmp_path, timeout=60)
    no_traceback(switched)
    assert switched.returncode == 0


def test_a_dev_zero_link_named_like_a_rollout_is_refused(tmp_path: Path) -> None:
    _, source = copy_home("codex-chat", tmp_path / "home")
    link = source.with_name(
        "rollout-2026-11-29T20-53-18-01a22915-0000-7000-8000-00000000000a.jsonl"
    )
    link.symlink_to("/dev/zero")
    listing = list_sessions(env={"HOME": str(tmp_path / "home")})
    assert any(str(link) in p and "character device" in p for p in listing.problems)
    with pytest.raises(SessionError, match="character device"):
        read_session(link, Provider.CODEX)


def test_a_huge_unterminated_last_line_is_read_past_in_linear_time(tmp_path: Path) -> None:
    """200 MB of an unfinished append: the listing reads the row from the rest (this took 86 s
    with a quadratic tail read)."""
    fixture, source = copy_home("claude-multi_turn", tmp_path / "home")
    with source.open("ab") as f:
        f.write(b'{"parentUuid":"' + b"x" * (200 << 20))
    run = cli(tmp_path / "home", "sessions", "--all", "--json", timeout=60)
    no_traceback(run)
    (row,) = orjson.loads(run.stdout)["sessions"]
    assert row["id"] == fixture.spec["session_id"]
    assert row["turns"] == len(fixture.spec["prompts"])
    assert tail_lines(source) == []  # the line is over the bound: not held in memory


def test_an_overlong_line_is_skipped_and_reported_not_held() -> None:
    fixture = FIXTURES["codex-chat"]
    lines = fixture.transcript.read_bytes().splitlines(keepends=True)
    limit = max(map(len, lines)) + 10
    data = b"".join(lines[:2]) + b"{" + b"y" * 3 * limit + b"\n" + b"".join(lines[2:])
    report = LineReport()
    got = list(iter_records_in(bounded_lines(io.BytesIO(data), limit=limit), "f", report))
    assert [n for n, _ in got] == [n for n in range(1, len(lines) + 2) if n != 3]
    assert [(s.line, "longer than" in s.reason) for s in report.skipped] == [(3, True)]
    assert list(bounded_lines(io.BytesIO(b"z" * 3000), limit=1000)) == [OVERLONG]


# --------------------------------------------------------------------------- tracebacks


def _first(recs: list[dict[str, Any]], test: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
    return next(r for r in recs if test(r))


WRONG_TYPES: dict[str, tuple[str, Callable[[list[dict[str, Any]]], object]]] = {
    "claude type is a list": (
        "claude-tool_cycle",
        lambda rs: _first(rs, lambda r: r.get("type") == "assistant").update(type=[]),
    ),
    "claude message is a number": (
        "claude-tool_cycle",
        lambda rs: _first(rs, lambda r: r.get("type") == "user").update(message=5),
    ),
    "claude timestamps are numbers": (
        "claude-multi_turn",
        lambda rs: [r.update(timestamp=1764450000) for r in rs if "timestamp" in r],
    ),
    "claude cwd is a number": (
        "claude-multi_turn",
        lambda rs: [r.update(cwd=5) for r in rs if "cwd" in r],
    ),
    "codex payload type is an object": (
        "codex-reasoning",
        lambda rs: _first(rs, lambda r: r.get("type") == "response_item")["payload"].update(
            type={"x": 1}
        ),
    ),
    "codex reasoning summary is a number": (
        "codex-reasoning",
        lambda rs: _first(
            rs,
            lambda r: r.get("type") == "response_item" and r["payload"].get("type") == "reasoning",
        )["payload"].update(summary=5),
    ),
    "codex used_percent is a string": (
        "codex-usage_limited",
        lambda rs: [
            w.update(used_percent="100")
            for r in rs
            if r.get("type") == "event_msg" and r["payload"].get("type") == "token_count"
            for w in (r["payload"].get("rate_limits") or {}).values()
            if isinstance(w, dict)
        ],
    ),
    "codex cwd is a number": (
        "codex-multi_turn",
        lambda rs: _first(rs, lambda r: r.get("type") == "session_meta")["payload"].update(cwd=5),
    ),
}


@pytest.mark.parametrize("case", sorted(WRONG_TYPES), ids=str)
def test_valid_json_with_wrong_types_never_crashes(case: str, tmp_path: Path) -> None:
    name, edit = WRONG_TYPES[case]
    _fixture, source = copy_home(name, tmp_path / "home")
    rewrite(source, edit)
    _, other = copy_home(
        "codex-chat" if name.startswith("claude") else "claude-chat", tmp_path / "home"
    )
    env = env_for(tmp_path, tmp_path / "home")
    before = sha256(source)
    listing = list_sessions(env=env)
    assert listing.problems == []
    assert {r.path for r in listing.sessions} == {
        str(source),
        str(other),
    }  # one bad line: the rest still listed
    row = next(r for r in listing.sessions if r.path == str(source))
    conversation = read_session(source)
    assert read_session(source, opaque_data=False) == without_opaque_data(conversation)
    out = io.StringIO()
    print_conversation(Console(file=out, width=120), conversation)
    assert row.turns == out.getvalue().count("── turn ") - out.getvalue().count("rolled back")
    outcomes = []
    for dry_run in (True, False):
        try:
            switch_session(str(source), dry_run=dry_run, env=env)
            outcomes.append("ok")
        except SwitchError as exc:
            assert "\n" not in str(exc) and str(source) in str(exc)
            outcomes.append(type(exc).__name__)
    assert outcomes[0] == outcomes[1]
    if "cwd" in case:
        assert outcomes == ["SwitchError", "SwitchError"]  # refused before writing
    assert sha256(source) == before


_USER = (
    '{"type":"user","uuid":"u1","parentUuid":null,"sessionId":"s","timestamp":'
    '"2025-01-01T00:00:00Z","cwd":"/a","gitBranch":"main","message":{"role":"user",'
    '"content":"hi"}}'
)
_NEXT = '{"type":"user","uuid":"u2","parentUuid":"p1","message":{"role":"user","content":"go"}}'
# Records only an Opaque item can come of, a field the index or the item reads holding a list or
# an object (found by an adversarial review of the lean read: each read differently from the
# whole read, the chain cut elsewhere or the item named otherwise).
LEAN_CASES = {
    "type is a list": [_USER, '{"type":["x"],"uuid":"m1"}'],
    "subtype is an object": [
        _USER,
        '{"type":"progress","subtype":{"a":1},"uuid":"p1","parentUuid":"u1"}',
        _NEXT,
    ],
    "isSidechain is a list": [
        _USER,
        '{"type":"progress","isSidechain":[1],"uuid":"p1","parentUuid":"u1"}',
        _NEXT,
    ],
    "parentUuid is a list on a boundary": [
        _USER,
        '{"type":"assistant","uuid":"a1","parentUuid":"u1","message":{"role":"assistant",'
        '"model":"claude-x","content":[{"type":"text","text":"ok"}]}}',
        '{"type":"progress","subtype":"compact_boundary","parentUuid":[1],'
        '"logicalParentUuid":"a1","uuid":"p1"}',
        _NEXT,
    ],
}


@pytest.mark.parametrize("case", sorted(LEAN_CASES), ids=str)
def test_a_lean_read_of_wrong_typed_records_is_the_whole_read(case: str, tmp_path: Path) -> None:
    source = tmp_path / "00000000-0000-4000-8000-000000000001.jsonl"
    source.write_text("\n".join(LEAN_CASES[case]) + "\n")
    whole = read_session(source, Provider.CLAUDE)
    assert read_session(source, Provider.CLAUDE, opaque_data=False) == without_opaque_data(whole)


def _as_nobody(fn: Callable[[], Any]) -> Any:
    """Run ``fn`` in a forked child as the unprivileged user ``nobody`` (the suite runs as
    root, which reads any folder); its result comes back as JSON."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child
        os.close(read_end)
        try:
            os.setgroups([])
            os.setgid(65534)
            os.setuid(65534)
            payload = {"ok": fn()}
        except BaseException as exc:
            payload = {"error": f"{type(exc).__name__}: {exc}"}
        os.write(write_end, orjson.dumps(payload))
        os._exit(0)
    os.close(write_end)
    chunks = []
    while chunk := os.read(read_end, 1 << 16):
        chunks.append(chunk)
    os.close(read_end)
    os.waitpid(pid, 0)
    return orjson.loads(b"".join(chunks))


@pytest.fixture
def open_tmp() -> Iterator[Path]:
    """A scratch folder an unprivileged user can reach (pytest's own is root's alone)."""
    folder = Path(tempfile.mkdtemp(prefix="segue-hostile-"))
    folder.chmod(0o755)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def test_unreadable_folders_are_reported_as_a_normal_user(open_tmp: Path) -> None:
    home = open_tmp / "home"
    _, claude = copy_home("claude-chat", home)
    _, codex = copy_home("codex-chat", home)
    copy_home("claude-multi_turn", home)
    copy_home("codex-multi_turn", home)
    other_day = codex.parent.parent / "28"  # a day folder of its own
    other_day.mkdir()
    codex = codex.rename(other_day / codex.name)
    for path in [home, *home.rglob("*")]:
        os.chown(path, 65534, 65534, follow_symlinks=False)
    claude.parent.chmod(0)
    other_day.chmod(0)
    env = {"HOME": str(home), "SEGUE_STATE_DIR": str(open_tmp / "state")}
    segue.cli.render.print_sessions  # noqa: B018 (imported before privileges are dropped)

    def listing() -> dict[str, Any]:
        done = list_sessions(env=env)
        found = find_session(FIXTURES["claude-multi_turn"].spec["session_id"], env)
        return {
            "ids": sorted(r.id for r in done.sessions),
            "problems": done.problems,
            "found": str(found[1]),
        }

    result = _as_nobody(listing)
    assert "ok" in result, result
    ok = result["ok"]
    assert ok["ids"] == sorted(
        FIXTURES[n].spec["session_id"] for n in ("claude-multi_turn", "codex-multi_turn")
    )
    assert len(ok["problems"]) == 2
    assert all("Permission denied" in p for p in ok["problems"])


@pytest.mark.parametrize(
    ("where", "content"),
    [(".codex/config.toml", b"model = [unclosed\n"), (".claude/settings.json", b"{nope")],
    ids=["config.toml", "settings.json"],
)
def test_a_malformed_config_is_one_line_naming_it(
    where: str, content: bytes, tmp_path: Path
) -> None:
    name = "claude-chat" if where.startswith(".codex") else "codex-chat"
    fixture, _ = copy_home(name, tmp_path / "home")
    config = tmp_path / "home" / where
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_bytes(content)
    run = cli(tmp_path / "home", "switch", fixture.spec["session_id"], "--dry-run", tmp=tmp_path)
    no_traceback(run)
    assert run.returncode == 1
    assert run.stderr.count("\n") == 1 and str(config) in run.stderr
    as_json = cli(tmp_path / "home", "switch", fixture.spec["session_id"], "--json", tmp=tmp_path)
    no_traceback(as_json)
    doc = orjson.loads(as_json.stdout)
    assert doc["exit_code"] == 1 and str(config) in doc["error"]
    config.unlink()
    os.mkfifo(config)  # named like the config but a FIFO: refused, not waited on
    fifo = cli(
        tmp_path / "home",
        "switch",
        fixture.spec["session_id"],
        "--dry-run",
        tmp=tmp_path,
        timeout=60,
    )
    assert fifo.returncode == 1 and "FIFO" in fifo.stderr


def test_stderr_is_not_hard_wrapped(tmp_path: Path) -> None:
    missing = "x" * 150
    run = cli(tmp_path, "show", missing, COLUMNS="40")
    assert run.returncode == 1
    assert run.stderr.count("\n") == 1 and missing in run.stderr


def test_a_full_disk_leaves_no_file_behind(tmp_path: Path) -> None:
    """RLIMIT_FSIZE makes every write past a few bytes fail (as a full disk does): a clear error
    naming the target, no session file, no temporary one."""
    fixture, _source = copy_home("codex-multi_turn", tmp_path / "home")
    (tmp_path / "state").mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(CLI_ENV_DROP)}
    env.update(HOME=str(tmp_path / "home"), SEGUE_STATE_DIR=str(tmp_path / "state"))

    def small_files() -> None:
        import resource

        resource.setrlimit(resource.RLIMIT_FSIZE, (2000, 2000))

    run = subprocess.run(
        [sys.executable, "-m", "segue", "switch", fixture.spec["session_id"], "--to", "claude"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        preexec_fn=small_files,
        check=False,
    )
    no_traceback(run)
    assert run.returncode == 1 and "cannot write the new session" in run.stderr
    projects = tmp_path / "home" / ".claude" / "projects"
    assert not [p for p in projects.rglob("*") if p.is_file()] if projects.exists() else True


def test_a_read_only_target_folder_is_a_clear_error(open_tmp: Path) -> None:
    fixture, _ = copy_home("claude-chat", open_tmp / "home")
    home = open_tmp / "home"
    for path in [home, *home.rglob("*")]:
        os.chown(path, 65534, 65534, follow_symlinks=False)
    (home / ".codex").mkdir()
    os.chown(home / ".codex", 65534, 65534)
    (home / ".codex").chmod(0o555)  # the target's home: not writable, even for its owner
    env = {"HOME": str(home), "SEGUE_STATE_DIR": str(open_tmp / "state")}
    (open_tmp / "state").mkdir()
    os.chown(open_tmp / "state", 65534, 65534)

    def switch() -> str:
        try:
            switch_session(fixture.spec["session_id"], env=env)
        except SegueError as exc:
            return f"{type(exc).__name__}: {exc}"
        return "switched"

    result = _as_nobody(switch)
    assert result["ok"].startswith("SwitchError:") and str(home / ".codex") in result["ok"]
    assert not list((home / ".codex").rglob("*"))


def _state_db(home: Path) -> Path:
    return home / ".codex" / "state_5.sqlite"


def test_a_corrupt_codex_state_database_keeps_the_session_and_says_so(tmp_path: Path) -> None:
    fixture, _ = copy_home("claude-chat", tmp_path / "home")
    db = _state_db(tmp_path / "home")
    db.parent.mkdir(parents=True)
    db.write_bytes(b"this is not a database" * 100)
    result = switch_session(fixture.spec["session_id"], env=env_for(tmp_path, tmp_path / "home"))
    assert result.path is not None and result.path.is_file()  # kept, resumable by id
    assert len(result.warnings) == 1 and str(db) in result.warnings[0]
    assert result.resume_command.endswith(f"codex resume {result.session_id}")


def test_a_locked_codex_state_database_is_a_warning_not_a_hang(tmp_path: Path) -> None:
    fixture, _ = copy_home("claude-chat", tmp_path / "home")
    db = _state_db(tmp_path / "home")
    db.parent.mkdir(parents=True)
    holder = sqlite3.connect(db)
    holder.execute("CREATE TABLE backfill_state (status TEXT, last_watermark TEXT)")
    holder.commit()
    holder.execute("BEGIN EXCLUSIVE")
    try:
        result = switch_session(
            fixture.spec["session_id"], env=env_for(tmp_path, tmp_path / "home")
        )
    finally:
        holder.rollback()
        holder.close()
    assert result.path is not None and result.path.is_file()
    assert len(result.warnings) == 1 and "locked" in result.warnings[0]


# --------------------------------------------------------------------------- half switches


def test_exec_with_a_missing_cwd_refuses_before_writing(tmp_path: Path) -> None:
    fixture, source = copy_home("codex-chat", tmp_path / "home")
    gone = str(tmp_path / "gone")
    rewrite(
        source,
        lambda rs: _first(rs, lambda r: r.get("type") == "session_meta")["payload"].update(
            cwd=gone
        ),
    )
    run = cli(tmp_path / "home", "switch", fixture.spec["session_id"], "--exec", tmp=tmp_path)
    no_traceback(run)
    assert run.returncode == 1 and "does not exist" in run.stderr
    assert not (tmp_path / "home" / ".claude").exists()


def test_exec_and_the_resume_command_run_the_cli_the_user_named(tmp_path: Path) -> None:
    """``$SEGUE_CLAUDE_BIN`` names the user's Claude Code: the printed resume command and
    ``--exec`` run it, with the new session, from the session's folder."""
    fixture, _ = copy_home("codex-chat", tmp_path / "home")
    Path(fixture.spec["cwd"]).mkdir(parents=True, exist_ok=True)
    seen = tmp_path / "argv.txt"
    program = tmp_path / "bin" / "my claude"
    program.parent.mkdir()
    program.write_text(f'#!/bin/sh\nprintf "%s\\n" "$PWD" "$@" > "{seen}"\n')
    program.chmod(0o755)
    shown = cli(
        tmp_path / "home", "switch", fixture.spec["session_id"], "--to", "claude", "--json",
        tmp=tmp_path, SEGUE_CLAUDE_BIN=str(program),
    )  # fmt: skip
    no_traceback(shown)
    doc = orjson.loads(shown.stdout)
    assert doc["resume_command"].endswith(f"&& '{program}' --resume {doc['session_id']}")
    run = cli(
        tmp_path / "home", "switch", fixture.spec["session_id"], "--to", "claude", "--clean",
        "--exec", tmp=tmp_path, SEGUE_CLAUDE_BIN=str(program),
    )  # fmt: skip
    no_traceback(run)
    assert run.returncode == 0, run.stderr
    cwd, *argv = seen.read_text().splitlines()
    assert argv[0] == "--resume" and argv[1] != doc["session_id"] and len(argv) == 2
    assert Path(cwd).resolve() == Path(fixture.spec["cwd"]).resolve()
    # a relative path is the user's, from where they ran segue, not from the session's folder
    seen.unlink()
    relative = cli(
        tmp_path / "home", "switch", fixture.spec["session_id"], "--to", "claude", "--clean",
        "--exec", tmp=tmp_path, SEGUE_CLAUDE_BIN=str(Path("bin") / "my claude"), cwd=tmp_path,
    )  # fmt: skip
    no_traceback(relative)
    assert relative.returncode == 0, relative.stderr
    assert seen.read_text().splitlines()[1] == "--resume"


@pytest.mark.parametrize(
    "name", ["codex-payload-role-assistant", "codex-sequence-tool-cycle"], ids=str
)
def test_a_dry_run_fails_exactly_when_the_switch_would(name: str, tmp_path: Path) -> None:
    """A Codex history with no prompt (only a reply, or only a tool cycle) cannot become a
    Claude session: the dry run says so too, and nothing is written."""
    from tests.test_wild import ENTRIES, place

    wild = next(e for e in ENTRIES if e.case == name)
    path = place(wild, tmp_path / "home")
    env = env_for(tmp_path, tmp_path / "home")
    for dry_run in (True, False):
        with pytest.raises(SwitchError):
            switch_session(str(path), Provider.CLAUDE, dry_run=dry_run, env=env)
    assert not (tmp_path / "home" / ".claude").exists()


# --------------------------------------------------------------------------- identity and paths


def test_a_rollout_whose_recorded_id_differs_from_its_name(tmp_path: Path) -> None:
    fixture, source = copy_home("codex-multi_turn", tmp_path / "home")
    renamed_id = "01a22915-0000-7000-8000-0000000000aa"
    renamed = source.with_name(source.name.replace(fixture.spec["session_id"], renamed_id))
    source.rename(renamed)
    env = env_for(tmp_path, tmp_path / "home")
    (row,) = list_sessions(env=env).sessions
    assert row.id == renamed_id
    assert find_session(renamed_id, env)[1] == renamed
    assert find_session(fixture.spec["session_id"], env)[1] == renamed  # the recorded spelling
    assert read_session(renamed).meta.id == renamed_id
    result = switch_session(fixture.spec["session_id"][:18], env=env, dry_run=True)
    assert result.source.meta.id == renamed_id


def test_codex_generation_files_are_one_session(tmp_path: Path) -> None:
    fixture, _ = copy_home("codex-rollback", tmp_path / "home")
    env = env_for(tmp_path, tmp_path / "home")
    (row,) = list_sessions(env=env).sessions
    assert row.id == fixture.spec["session_id"]
    _, path = find_session(row.id, env)
    assert Path(row.path) == path and "_" in path.name  # the newest generation file


def _shown_turns(path: Path) -> int:
    out = io.StringIO()
    print_conversation(Console(file=out, width=200), read_session(path))
    text = out.getvalue()
    return text.count("── turn ") - text.count("── turn (rolled back")


@pytest.mark.parametrize("name", sorted(FIXTURES), ids=str)
def test_listing_turns_equal_the_turns_show_numbers(name: str, tmp_path: Path) -> None:
    _, _source = copy_home(name, tmp_path / "home")
    rows = list_sessions(env=env_for(tmp_path, tmp_path / "home")).sessions
    row = next(r for r in rows if r.id == FIXTURES[name].spec["session_id"])
    assert row.turns == _shown_turns(Path(row.path))


def test_turns_of_a_rewound_claude_branch_are_not_counted(tmp_path: Path) -> None:
    """A rewind leaves the abandoned branch in the file: copies of two real prompt lines hung
    off the first record, before the active leaf is named again."""
    fixture, source = copy_home("claude-multi_turn", tmp_path / "home")
    recs = records(source)
    prompts = [
        r for r in recs if r.get("type") == "user" and isinstance(r["message"]["content"], str)
    ]
    root = next(r for r in recs if r.get("parentUuid") is None and "uuid" in r)
    branch = []
    parent = root["uuid"]
    for n, prompt in enumerate(prompts[:2]):
        copy = {**prompt, "uuid": f"00000000-0000-4000-8000-00000000000{n}", "parentUuid": parent}
        branch.append(copy)
        parent = copy["uuid"]
    leaf = [r for r in recs if r.get("type") == "last-prompt"][-1]
    source.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in [*recs, *branch, leaf]))
    (row,) = list_sessions(env=env_for(tmp_path, tmp_path / "home")).sessions
    assert row.turns == len(fixture.spec["prompts"]) == _shown_turns(source)


def test_the_lock_never_follows_a_planted_link(tmp_path: Path) -> None:
    fixture, _ = copy_home("claude-chat", tmp_path / "home")
    env = env_for(tmp_path, tmp_path / "home")
    victim = tmp_path / "victim"
    victim.write_text("precious")
    locks = state_dir(env) / "locks"
    locks.mkdir(parents=True)
    (locks / f"claude-{fixture.spec['session_id']}.lock").symlink_to(victim)
    switch_session(fixture.spec["session_id"], env=env, dry_run=True)
    with pytest.raises(SwitchError, match="cannot create the switch lock"):
        switch_session(fixture.spec["session_id"], env=env)
    assert victim.read_text() == "precious"
    assert not (tmp_path / "home" / ".codex").exists()
    # a folder of locks that is itself a link is refused too
    shutil.rmtree(locks)
    other = tmp_path / "elsewhere"
    other.mkdir()
    locks.symlink_to(other)
    with pytest.raises(SwitchError, match="cannot use the folder"):
        switch_session(fixture.spec["session_id"], env=env)
    assert list(other.iterdir()) == []


def test_lock_folders_are_private_and_a_dry_run_creates_none(tmp_path: Path) -> None:
    fixture, _ = copy_home("claude-chat", tmp_path / "home")
    env = env_for(tmp_path, tmp_path / "home")
    switch_session(fixture.spec["session_id"], env=env, dry_run=True)
    assert not state_dir(env).exists()
    result = switch_session(fixture.spec["session_id"], env=env)
    for folder in (state_dir(env), state_dir(env) / "locks"):
        assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    (lock,) = (state_dir(env) / "locks").iterdir()
    assert stat.S_IMODE(lock.stat().st_mode) == 0o600
    assert result.path is not None and stat.S_IMODE(result.path.stat().st_mode) == 0o600


@pytest.mark.parametrize("ref", ["", "  "], ids=["empty", "blank"])
def test_an_empty_id_picks_nothing(ref: str, tmp_path: Path) -> None:
    copy_home("claude-chat", tmp_path / "home")
    with pytest.raises(SessionError, match="empty"):
        find_session(ref, env_for(tmp_path, tmp_path / "home"))


def test_a_cwd_starting_with_a_dash_and_a_relative_cwd(tmp_path: Path) -> None:
    fixture, source = copy_home("codex-chat", tmp_path / "home")
    env = env_for(tmp_path, tmp_path / "home")

    def with_cwd(cwd: str) -> None:
        rewrite(
            source,
            lambda rs: _first(rs, lambda r: r.get("type") == "session_meta")["payload"].update(
                cwd=cwd
            ),
        )

    dashed = tmp_path / "-rf"
    dashed.mkdir()
    with_cwd(str(dashed))
    result = switch_session(fixture.spec["session_id"], env=env)
    assert result.resume_command.startswith(f"cd -- {dashed} && claude --resume ")
    with_cwd("-rf")
    with pytest.raises(SwitchError, match="not an absolute path"):
        switch_session(fixture.spec["session_id"], env=env, dry_run=True)


# --------------------------------------------------------------------------- secrets

KEYS = {  # well-formed shapes, made up here: what a user might paste
    "anthropic_api_key": "sk-ant-api03-" + "Q7" * 46 + "AA",
    "openai_api_key": "sk-proj-" + "a1" * 12 + "T3BlbkFJ" + "Zb" * 12,
    "aws_key": "AKIA" + "QWERTYUIOPASDFGH",
    "github_token": "ghp_" + "k9" * 18,
    "private_key": "-----BEGIN OPENSSH PRIVATE KEY-----\n"
    + "b3BlbnNzaC1rZXk=\n" * 3
    + "-----END OPENSSH PRIVATE KEY-----",
}


def _plant(source: Path) -> None:
    """Every key into the first prompt, and the private key into a tool output as well."""

    def edit(rs: list[dict[str, Any]]) -> None:
        prompt = _first(
            rs, lambda r: r.get("type") == "user" and isinstance(r["message"]["content"], str)
        )
        prompt["message"]["content"] += "\n" + "\n".join(KEYS.values())
        result = _first(
            rs,
            lambda r: (
                r.get("type") == "user"
                and isinstance(r["message"]["content"], list)
                and r["message"]["content"][0].get("type") == "tool_result"
            ),
        )
        block = result["message"]["content"][0]
        block["content"] = f"{block['content']}\n{KEYS['private_key']}"

    rewrite(source, edit)


def test_planted_secrets_are_counted_redacted_and_masked(tmp_path: Path) -> None:
    fixture, source = copy_home("claude-tool_cycle", tmp_path / "home")
    _plant(source)
    env = env_for(tmp_path, tmp_path / "home")
    sid = fixture.spec["session_id"]
    expected = {kind: 1 for kind in KEYS} | {"private_key": 2}
    dry = cli(tmp_path / "home", "switch", sid, "--dry-run", "--json", tmp=tmp_path)
    assert orjson.loads(dry.stdout)["secrets"] == expected
    human = cli(tmp_path / "home", "switch", sid, "--dry-run", tmp=tmp_path)
    assert "secrets  6 found (1 anthropic_api_key, 1 aws_key, 1 github_token," in human.stdout
    # carried as is without the flag, replaced with it
    plain = switch_session(sid, env=env)
    assert plain.path is not None and KEYS["aws_key"] in plain.path.read_text()
    redacted = cli(tmp_path / "home", "switch", sid, "--redact-secrets", "--json", tmp=tmp_path)
    doc = orjson.loads(redacted.stdout)
    assert doc["secrets"] == expected and doc["secrets_redacted"] is True
    written = Path(doc["path"]).read_text()
    for kind, key in KEYS.items():
        assert key.splitlines()[1 if kind == "private_key" else 0] not in written, kind
        assert marker(kind) in written
    # show and sessions mask them unless asked; --json keeps the data
    for args in (("show", sid), ("sessions", "--all")):
        masked = cli(tmp_path / "home", *args).stdout
        assert KEYS["anthropic_api_key"] not in masked and marker("anthropic_api_key") in masked
        assert "b3BlbnNzaC1rZXk=" not in masked
        shown = cli(tmp_path / "home", *args, "--show-secrets").stdout
        assert KEYS["anthropic_api_key"][:60] in shown
    assert KEYS["aws_key"] in cli(tmp_path / "home", "show", sid, "--json").stdout


def test_segue_own_summary_is_always_redacted(tmp_path: Path) -> None:
    """The index of dropped prompts the shrink ladder writes quotes prompts: its secrets are
    replaced even without --redact-secrets."""
    _fixture, source = copy_home("claude-multi_turn", tmp_path / "home")
    _plant_first_prompt_only(source)
    conversation = read_session(source)
    profile = TargetProfile(Provider.CODEX, "m", 2_000, 1_000, "a tiny window")
    plan = plan_switch(conversation, Provider.CODEX, profile=profile)
    own = [i for i in plan.items if isinstance(i, Compaction) and i.trigger == MARKER_TRIGGER]
    assert own, plan.loss_line
    key = KEYS["anthropic_api_key"]
    assert key[:20] not in own[0].summary and marker("anthropic_api_key") in own[0].summary
    assert not plan.secrets_redacted


def _plant_first_prompt_only(source: Path) -> None:
    """The first prompt quotes a key, then goes on and on: too big to carry, and cut short in
    the index of dropped prompts right inside the key."""
    text = "Upload the logs. " * 8 + "Use " + KEYS["anthropic_api_key"] + ". Then wait. " * 300
    rewrite(
        source,
        lambda rs: _first(
            rs, lambda r: r.get("type") == "user" and isinstance(r["message"]["content"], str)
        )["message"].update(content=text),
    )


def test_json_errors_and_every_command_through_one_handler(tmp_path: Path) -> None:
    for args in (("show", "nope"), ("switch", "nope"), ("sessions", "--cwd", "/x", "--all")):
        run = cli(tmp_path, *args, "--json")
        no_traceback(run)
        doc = orjson.loads(run.stdout)
        assert set(doc) == {"error", "exit_code"} and doc["exit_code"] == run.returncode


def test_in_process_main_reports_not_raises(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    with pytest.raises(SystemExit) as done:
        main(["show", ""])
    assert done.value.code == 1
    assert "empty" in capsys.readouterr().err
    assert segue.cli.app.app is not None


def test_no_home_at_all_is_one_line_and_an_agent_of_no_home_is_nobody_s(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """No HOME, and a user the system does not know (a container's arbitrary uid)."""
    from pathlib import Path

    from segue.formats.homes import cli_home
    from segue.model.conversation import Provider
    from segue.model.errors import ConfigError
    from segue.running.agents import Agent, AgentState, in_home

    def unknown() -> Path:
        raise RuntimeError("Could not determine home directory.")

    monkeypatch.setattr(Path, "home", staticmethod(unknown))
    with pytest.raises(ConfigError, match=r"no home folder: .*set HOME or \$CODEX_HOME"):
        cli_home({}, "CODEX_HOME", ".codex")
    agent = Agent(Provider.CODEX, 1, None, None, None, None, AgentState.IDLE, None, [], {})
    assert in_home(agent, {}) is False
