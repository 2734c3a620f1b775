"""``segue watch`` on recorded sessions: what a pass sees and does, what it records, the quiet
period, the way back, a pass that finds nothing, one watch per store, and SIGTERM."""

from __future__ import annotations

import hashlib
import shutil
import signal
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import orjson
import pytest

from segue.watch import Mode, WatchPolicy, watch_pass
from segue_testbed.fixtures import all_fixtures
from tests.segue_cli import segue

FIXTURES = all_fixtures()
BOTH = datetime(2026, 11, 29, 21, 0, tzinfo=UTC)  # Claude's recorded limit and Codex's, both live
CODEX_ONLY = datetime(2026, 11, 30, 9, 0, tzinfo=UTC)  # Claude's reset (22:51) has passed
RESET = datetime(2030, 3, 18, 0, 0, tzinfo=UTC)  # Codex's recorded window has reset too
TWO = ("claude", "codex")  # a home of these two (Copilot's watch has a test of its own)
OFFLINE = WatchPolicy(move=Mode.AUTO, returns=Mode.AUTO, remote=False, relaunch=False)


def _home(
    tmp_path: Path, scenarios: set[str] | None = None, providers: tuple[str, ...] = TWO
) -> dict[str, str]:
    root = tmp_path / "home"
    root.mkdir(parents=True)
    for fixture in FIXTURES:
        if fixture.provider not in providers:
            continue
        if scenarios is None or fixture.spec["scenario"] in scenarios:
            shutil.copytree(fixture.home, root, dirs_exist_ok=True)
            Path(fixture.spec["cwd"]).mkdir(parents=True, exist_ok=True)
    return {
        "HOME": str(root),
        "SEGUE_STATE_DIR": str(tmp_path / "state"),
        "SEGUE_DATA_DIR": str(tmp_path / "data"),
        "PATH": "/usr/bin:/bin",
    }


def _parked_codex() -> set[str]:
    return {
        f.spec["session_id"]
        for f in FIXTURES
        if f.provider == "codex" and f.spec["scenario"] in {"stuck_agent", "usage_limited"}
    }


def test_a_pass_waits_moves_keeps_quiet_and_brings_the_batch_back(tmp_path: Path) -> None:
    env = _home(tmp_path)
    both = watch_pass(OFFLINE, env=env, now=BOTH, agents=[])
    assert [e.kind for e in both] == ["waiting"]
    assert "both exhausted: nothing moves" in both[0].detail
    assert both[0].reset_at == datetime(2026, 11, 29, 22, 51, tzinfo=UTC)  # the earliest
    assert watch_pass(OFFLINE, env=env, now=BOTH, agents=[]) == []  # unchanged: not again

    moved = watch_pass(OFFLINE, env=env, now=CODEX_ONLY, agents=[])
    assert [e.kind for e in moved] == ["exhausted", "moved"]
    batch = moved[1]
    assert batch.provider is not None and batch.provider.value == "codex"
    assert set(batch.sessions) == _parked_codex() and batch.batch_id
    assert batch.reset_at is not None and batch.reset_at.year == 2030
    # a minute later: the same sessions do not move again, and nothing new is recorded
    assert watch_pass(OFFLINE, env=env, now=CODEX_ONLY + timedelta(minutes=1), agents=[]) == []

    back = watch_pass(OFFLINE, env=env, now=RESET, agents=[])
    assert [e.kind for e in back] == ["returned"]
    assert back[0].returns_batch == batch.batch_id and back[0].batch_id != batch.batch_id
    assert watch_pass(OFFLINE, env=env, now=RESET + timedelta(hours=1), agents=[]) == []

    recorded = segue(["batches", "--json"], env)
    assert recorded.returncode == 0
    listed = {b["batch"]: b["watch"] for b in orjson.loads(recorded.stdout)["batches"]}
    assert listed == {batch.batch_id: "moved", back[0].batch_id: "returned"}


def test_ask_moves_only_when_the_user_says_yes_and_records_the_answer(tmp_path: Path) -> None:
    env = _home(tmp_path)
    policy = WatchPolicy(move=Mode.ASK, returns=Mode.NEVER, remote=False, relaunch=False)
    questions: list[str] = []

    def no(question: str) -> bool:
        questions.append(question)
        return False

    declined = watch_pass(policy, env=env, now=CODEX_ONLY, agents=[], ask=no)
    assert [e.kind for e in declined] == ["exhausted", "move_declined"]
    assert "codex → claude" in questions[0] and "Would switch" in questions[0]
    # not asked again about the same sessions while this limit lasts
    assert watch_pass(policy, env=env, now=CODEX_ONLY, agents=[], ask=no) == []
    assert len(questions) == 1
    # a yes moves them
    yes = WatchPolicy(move=Mode.ASK, returns=Mode.NEVER, remote=False, relaunch=False)
    moved = watch_pass(yes, env=_home(tmp_path / "again"), now=CODEX_ONLY, agents=[],
                       ask=lambda q: True)  # fmt: skip
    assert [e.kind for e in moved] == ["exhausted", "moved"]
    assert watch_pass(policy, env=env, now=RESET, agents=[]) == []  # --return never


def test_once_with_json_prints_one_event_a_line_and_a_pass_with_nothing_writes_nothing(
    tmp_path: Path,
) -> None:
    env = _home(tmp_path / "a")
    done = segue(["watch", "--once", "--offline", "--auto", "--no-relaunch", "--json"], env)
    assert done.returncode == 0, done.stderr
    events = [orjson.loads(line) for line in done.stdout.splitlines()]
    assert [e["event"] for e in events] == ["exhausted", "moved"]  # Codex's limit is 2030's
    assert set(events[1]["sessions"]) == _parked_codex()
    asked = segue(["watch", "--once", "--offline", "--json"], _home(tmp_path / "b"))
    assert [orjson.loads(line)["event"] for line in asked.stdout.splitlines()] == [
        "exhausted",
        "move_declined",  # no terminal to ask on
    ]

    quiet = _home(tmp_path / "c", {"multi_turn"})
    before = _tree(tmp_path / "c")
    nothing = segue(["watch", "--once", "--offline", "--json"], quiet)
    assert nothing.returncode == 0 and nothing.stdout == ""
    assert _tree(tmp_path / "c") == before  # no store, no state folder, HOME as it was


def _tree(root: Path) -> str:
    h = hashlib.sha256()
    for path in sorted(root.rglob("*")):
        h.update(str(path.relative_to(root)).encode())
        if path.is_file():
            h.update(path.read_bytes())
    return h.hexdigest()


def test_one_watch_a_store_and_sigterm_ends_it_between_passes(tmp_path: Path) -> None:
    env = _home(tmp_path, {"multi_turn"})
    (tmp_path / "state").mkdir()
    child = subprocess.Popen(
        [sys.executable, "-m", "segue", "watch", "--offline", "--interval", "0.2"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 30
        while not list((tmp_path / "state").glob("watch-*.lock")):
            assert time.monotonic() < deadline and child.poll() is None
            time.sleep(0.05)
        time.sleep(0.5)
        second = segue(["watch", "--once", "--offline"], env)
        assert second.returncode == 1
        assert "already running" in second.stderr and f"pid {child.pid}" in second.stderr
    finally:
        child.send_signal(signal.SIGTERM)
        _out, err = child.communicate(timeout=30)
    assert child.returncode == 0, err


@pytest.mark.parametrize("args", [["--return", "bogus"], ["--auto", "--ask"], ["--interval", "0"]])
def test_a_wrong_option_is_one_line(tmp_path: Path, args: list[str]) -> None:
    done = segue(["watch", "--once", "--offline", *args], _home(tmp_path, {"multi_turn"}))
    assert done.returncode == 2 and done.stderr.startswith("segue: ")
    assert len(done.stderr.strip().splitlines()) == 1


def test_a_limit_noted_by_a_hook_wakes_the_loop_before_its_interval(tmp_path: Path) -> None:
    env = _home(tmp_path, {"multi_turn"})
    state = tmp_path / "state"
    state.mkdir()
    child = subprocess.Popen(
        [sys.executable, "-m", "segue", "watch", "--offline", "--interval", "120", "--json"],
        env={**env, "PYTHONUNBUFFERED": "1"},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 30
        while not list(state.glob("watch-*.lock")):
            assert time.monotonic() < deadline and child.poll() is None
            time.sleep(0.05)
        time.sleep(1.5)  # its first pass is done: the next is two minutes away
        # the Codex fixture that hit its limit appears, and a hook notes a limit
        for fixture in FIXTURES:
            if fixture.provider == "codex" and fixture.spec["scenario"] == "usage_limited":
                shutil.copytree(fixture.home, env["HOME"], dirs_exist_ok=True)
        (state / "signals.jsonl").write_text('{"provider": "codex", "kind": "limit"}\n')
        noted = time.monotonic()
        assert child.stdout is not None
        line = child.stdout.readline()
        assert orjson.loads(line)["event"] == "exhausted"
        assert time.monotonic() - noted < 30  # within the poll, not the two-minute interval
    finally:
        child.send_signal(signal.SIGTERM)
        child.communicate(timeout=30)
    assert child.returncode == 0


def test_sigterm_in_the_middle_of_a_pass_lets_the_pass_finish_its_switches(tmp_path: Path) -> None:
    env = _home(tmp_path)
    (tmp_path / "state").mkdir()
    child = subprocess.Popen(
        [sys.executable, "-m", "segue", "watch", "--auto", "--offline", "--no-relaunch",
         "--interval", "60", "--json"],
        env={**env, "PYTHONUNBUFFERED": "1"},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )  # fmt: skip
    deadline = time.monotonic() + 60
    while not (tmp_path / "data" / "segue.db").exists():  # made by the pass's first switch
        assert time.monotonic() < deadline and child.poll() is None
        time.sleep(0.01)
    child.send_signal(signal.SIGTERM)  # in the middle of the pass's switches
    out, err = child.communicate(timeout=120)
    assert child.returncode == 0, err
    events = [orjson.loads(line) for line in out.splitlines()]
    assert [e["event"] for e in events] == ["exhausted", "moved"]
    (batch,) = orjson.loads(segue(["batches", "--json"], env).stdout)["batches"]
    shown = orjson.loads(segue(["batches", batch["batch"], "--json"], env).stdout)
    assert len(shown["agents"]) == len(_parked_codex())
    assert all(a["target"] and Path(a["target"]["path"]).is_file() for a in shown["agents"])


def test_ask_on_a_terminal_shows_the_plan_and_one_key_decides(tmp_path: Path) -> None:
    from segue_testbed.terminal import Terminal

    env = _home(tmp_path)
    argv = [sys.executable, "-m", "segue", "watch", "--once", "--offline", "--no-relaunch"]
    with Terminal(argv, cwd=tmp_path, env=env) as term:
        term.wait_for("Go ahead? [y/N]", 60)
        assert term.screen_has("codex → claude") and term.screen_has("Would switch")
        time.sleep(0.5)  # (a key typed before the prompt reads it stays in the line's buffer)
        term.send("y")
        term.wait_for("moved codex", 60)
        term.proc.wait(timeout=60)
    assert term.proc.returncode == 0
    (batch,) = orjson.loads(segue(["batches", "--json"], env).stdout)["batches"]
    assert batch["watch"] == "moved"


def test_a_provider_flapping_below_its_limit_before_the_reset_does_not_bounce_the_fleet(
    tmp_path: Path,
) -> None:
    env = _home(tmp_path)
    moved = watch_pass(OFFLINE, env=env, now=CODEX_ONLY, agents=[])
    assert [e.kind for e in moved] == ["exhausted", "moved"]
    # the limited Codex sessions' records vanish (the usage source now says Codex is fine), but
    # the window the batch hit resets only in 2030: nothing comes back, nothing moves
    for fixture in FIXTURES:
        if fixture.provider == "codex" and fixture.spec["scenario"] in {
            "stuck_agent",
            "usage_limited",
        }:
            (Path(env["HOME"]) / fixture.transcript.relative_to(fixture.home)).unlink()
    later = CODEX_ONLY + timedelta(hours=1)
    assert watch_pass(OFFLINE, env=env, now=later, agents=[]) == []


def test_a_batch_brought_back_by_hand_is_not_brought_back_again(tmp_path: Path) -> None:
    env = _home(tmp_path)
    moved = watch_pass(OFFLINE, env=env, now=CODEX_ONLY, agents=[])
    batch = moved[1].batch_id
    assert batch is not None
    by_hand = segue(
        ["switch", "--return", batch, "--yes", "--force", "--json"], env
    )  # (Codex: exhausted until 2030)
    assert by_hand.returncode == 0, by_hand.stderr
    assert watch_pass(OFFLINE, env=env, now=RESET, agents=[]) == []
    assert len(orjson.loads(segue(["batches", "--json"], env).stdout)["batches"]) == 2


def test_an_agent_working_at_the_return_comes_back_at_a_later_pass(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import os

    import segue.fleet.batch as fleet
    from segue.model.conversation import Provider
    from segue.running.agents import Agent, AgentState
    from segue.store import open_store

    env = _home(tmp_path)
    moved = watch_pass(OFFLINE, env=env, now=CODEX_ONLY, agents=[])
    assert moved[1].batch_id is not None
    with open_store(env=env) as store:
        first = store.get_batch(moved[1].batch_id).agents[0].result
    assert first.target_session and first.target_path
    busy = Agent(Provider.CLAUDE, os.getpid(), first.target_session, Path(first.target_path),
                 first.cwd, None, AgentState.WORKING, None, ["claude"], {})  # fmt: skip
    monkeypatch.setattr(fleet, "_running_agents", lambda env: [busy])
    back = watch_pass(OFFLINE, env=env, now=RESET, agents=[])
    assert [e.kind for e in back] == ["returned"] and len(back[0].sessions) == 1
    assert first.target_session not in back[0].sessions  # it was in the middle of a turn
    monkeypatch.setattr(fleet, "_running_agents", lambda env: [])  # its turn has ended
    later = watch_pass(OFFLINE, env=env, now=RESET + timedelta(hours=1), agents=[])
    assert [(e.kind, e.sessions) for e in later] == [("returned", (first.target_session,))]
    assert watch_pass(OFFLINE, env=env, now=RESET + timedelta(hours=2), agents=[]) == []


def test_sigterm_while_asking_is_a_no_and_ends_the_watch(tmp_path: Path) -> None:
    from segue_testbed.terminal import Terminal

    env = _home(tmp_path)
    argv = [sys.executable, "-m", "segue", "watch", "--offline", "--no-relaunch"]
    with Terminal(argv, cwd=tmp_path, env=env) as term:
        term.wait_for("Go ahead? [y/N]", 60)
        time.sleep(0.3)
        term.proc.send_signal(signal.SIGTERM)
        term.proc.wait(timeout=30)
    assert term.proc.returncode == 0
    assert orjson.loads(segue(["batches", "--json"], env).stdout)["batches"] == []


def test_redact_secrets_reaches_what_the_watch_moves_and_brings_back(tmp_path: Path) -> None:
    from msgspec.structs import replace

    from segue.model.conversation import Provider
    from segue.transforms.secrets import marker
    from segue_testbed.generate import append_turn
    from tests.test_disk_truth import _plant_last_claude_prompt
    from tests.test_hostile import KEYS

    env = _home(tmp_path)
    policy = replace(OFFLINE, redact_secrets=True)
    moved = watch_pass(policy, env=env, now=CODEX_ONLY, agents=[])
    assert [e.kind for e in moved] == ["exhausted", "moved"]
    shown = orjson.loads(segue(["batches", str(moved[1].batch_id), "--json"], env).stdout)
    # on Claude Code, a turn whose prompt holds a key
    there = Path(shown["agents"][0]["target"]["path"])
    append_turn(Provider.CLAUDE, there)
    key = KEYS["aws_key"]
    _plant_last_claude_prompt(there, key)

    back = watch_pass(policy, env=env, now=RESET, agents=[])
    assert [e.kind for e in back] == ["returned"]
    returned = orjson.loads(segue(["batches", str(back[0].batch_id), "--json"], env).stdout)
    paths = [Path(a["target"]["path"]) for a in returned["agents"] if a["target"]]
    written = "".join(p.read_text() for p in paths)
    assert key not in written and marker("aws_key") in written
    # the command line takes the option, and the unit it prints keeps it
    unit = segue(["watch", "--redact-secrets", "--print-unit"], env)
    assert unit.returncode == 0 and "--redact-secrets" in unit.stdout


def _unit_lines(unit: str) -> list[str]:
    """The unit's settings, without its comments."""
    return [line for line in unit.splitlines() if not line.startswith("#")]


def _systemd_verify(unit: str, folder: Path) -> None:
    """systemd's own reading of ``unit``, where this machine has systemd-analyze: a specifier
    it does not know, a program it cannot find or a line it cannot parse fails it."""
    analyze = shutil.which("systemd-analyze")
    if analyze is None:
        return
    path = folder / "segue-watch.service"
    path.write_text(unit)
    done = subprocess.run(
        [analyze, "verify", "--man=no", str(path)], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr


def test_the_printed_unit_never_holds_the_database_url_and_names_the_file_it_is_read_from(
    tmp_path: Path,
) -> None:
    env = _home(tmp_path, set())
    url = "postgresql://segue:hunter2@db.internal/segue?sslpassword=k3y"
    env["SEGUE_DATABASE_URL"] = url
    printed = segue(["watch", "--auto", "--print-unit"], env)
    assert printed.returncode == 0, printed.stderr
    unit = printed.stdout
    assert "hunter2" not in unit and "k3y" not in unit and "db.internal" not in unit, unit
    assert not any("SEGUE_DATABASE_URL" in line for line in _unit_lines(unit)), unit
    env_file = Path(env["HOME"]) / ".config" / "segue" / "watch.env"
    # no "-": without the file the service fails to start, never watches another store
    assert f"EnvironmentFile={env_file}" in _unit_lines(unit), unit
    assert "# " in unit and "chmod 600" in unit
    # the other variables are still there
    assert f'Environment="SEGUE_DATA_DIR={env["SEGUE_DATA_DIR"]}"' in unit or (
        f"Environment=SEGUE_DATA_DIR={env['SEGUE_DATA_DIR']}" in unit
    ), unit
    # beside it, once (on stderr: the unit goes to a file): where to put the URL
    assert printed.stderr.count("\n") == 1 and str(env_file) in printed.stderr, printed.stderr
    assert "hunter2" not in printed.stderr
    _systemd_verify(unit, tmp_path)
    env_file.parent.mkdir(parents=True)
    env_file.write_text(f"SEGUE_DATABASE_URL={url}\n")
    env_file.chmod(0o600)
    again = segue(["watch", "--auto", "--print-unit"], env)
    assert again.returncode == 0 and again.stdout == unit and again.stderr == "", again.stderr
    # no URL set: no file to read, nothing said
    del env["SEGUE_DATABASE_URL"]
    plain = segue(["watch", "--auto", "--print-unit"], env)
    assert "EnvironmentFile" not in plain.stdout and plain.stderr == ""


def test_the_printed_unit_escapes_percent_dollar_and_quotes_paths_as_systemd_reads_them(
    tmp_path: Path,
) -> None:
    env = _home(tmp_path, set())
    env["SEGUE_DATA_DIR"] = str(tmp_path / "data 100%h")
    under = tmp_path / "work 50%z $HOME;x"
    printed = segue(["watch", "--print-unit", "--under", str(under)], env)
    assert printed.returncode == 0, printed.stderr
    settings = _unit_lines(printed.stdout)
    (start,) = [line for line in settings if line.startswith("ExecStart=")]
    written = str(under).replace("%", "%%").replace("$", "$$")
    assert f'--under "{written}"' in start, start
    (data,) = [line for line in settings if "SEGUE_DATA_DIR" in line]
    assert data == f'Environment="SEGUE_DATA_DIR={tmp_path}/data 100%%h"', data
    for line in settings:  # every % a %% (systemd expands %h, %z fails the unit)
        assert "%" not in line.replace("%%", ""), line
    _systemd_verify(printed.stdout, tmp_path)


def test_a_program_in_a_folder_with_a_percent_a_space_or_a_dollar_is_run_by_the_unit(
    tmp_path: Path,
) -> None:
    from segue.model.errors import SegueError
    from segue.watch import systemd_unit

    folder = tmp_path / "py 100%z $HOME;x"
    folder.mkdir()
    program = folder / "python"
    program.symlink_to(sys.executable)
    unit = systemd_unit([str(program), "-m", "segue", "watch", ";", 'a "b" \\c'], {})
    (start,) = [line for line in unit.splitlines() if line.startswith("ExecStart=")]
    # the program's path as it is but its %; systemd substitutes no variable in it
    assert start == (
        f'ExecStart="{str(program).replace("%", "%%")}" -m segue watch \\; "a \\"b\\" \\\\c"'
    ), start
    _systemd_verify(unit, tmp_path)
    for bad in ("/opt/it's/python", "/opt/a\nb/python", "/opt/a\\b/python"):
        with pytest.raises(SegueError, match="systemd runs no program"):
            systemd_unit([bad, "-m", "segue", "watch"], {})


def test_with_claude_and_codex_exhausted_the_fleets_move_to_copilot(tmp_path: Path) -> None:
    env = _home(tmp_path, providers=(*TWO, "copilot"))
    for limited in (tmp_path / "home" / ".copilot" / "session-state").glob("*/events.jsonl"):
        if b'"session.error"' in limited.read_bytes():
            shutil.rmtree(limited.parent)  # Copilot itself is not limited here
    events = watch_pass(OFFLINE, env=env, now=BOTH, agents=[])
    assert [e.kind for e in events].count("moved") == 2  # claude's fleet and codex's
    assert "waiting" not in [e.kind for e in events]
    recorded = orjson.loads(segue(["batches", "--json"], env).stdout)["batches"]
    assert {(b["from"], b["to"]) for b in recorded} == {("claude", "copilot"), ("codex", "copilot")}
    written = list((tmp_path / "home" / ".copilot" / "session-state").glob("*/events.jsonl"))
    assert len(written) > len([f for f in FIXTURES if f.provider == "copilot"]) - 1
