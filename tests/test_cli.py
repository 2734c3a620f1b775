"""The ``segue`` command as a user runs it, on a scratch HOME holding every recorded fixture."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from datetime import UTC, datetime
from functools import partial
from pathlib import Path

import orjson
import pytest

from segue_testbed.fixtures import all_fixtures
from segue_testbed.generate import add_to_first_prompt
from tests.segue_cli import segue as run_segue

FIXTURES = all_fixtures()


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("home")
    for fixture in FIXTURES:
        shutil.copytree(fixture.home, root, dirs_exist_ok=True)
    return root


def segue(home: Path, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CLAUDE_", "CODEX_"))}
    env["HOME"] = str(home)
    return run_segue(list(args), env, cwd=cwd or home, timeout=120)


def test_sessions_all_json_lists_every_fixture(home: Path) -> None:
    result = segue(home, "sessions", "--all", "--json")
    assert result.returncode == 0, result.stderr
    listed = orjson.loads(result.stdout)
    assert listed["problems"] == []
    rows = {(row["provider"], row["id"]): row for row in listed["sessions"]}
    assert len(rows) == len(listed["sessions"]), "a session is listed twice"
    assert len(rows) == len(FIXTURES)
    for fixture in FIXTURES:
        row = rows[(fixture.provider, fixture.spec["session_id"])]
        assert row["cwd"] == fixture.spec["cwd"]
        assert row["state"] == fixture.spec["state"], fixture.name
        reset = fixture.spec.get("reset_at")
        expected = (
            datetime.fromtimestamp(reset, UTC).isoformat().replace("+00:00", "Z") if reset else None
        )
        assert row["reset_at"] == expected, fixture.name
        assert Path(row["path"]).is_file()
        assert row["size"] == Path(row["path"]).stat().st_size
    limited = [r for r in rows.values() if r["state"] == "limit"]
    assert limited, "the rate-limited fixtures must be listed as limit"


def test_sessions_default_is_the_current_directory(home: Path) -> None:
    fixture = next(f for f in FIXTURES if f.name == "codex-multi_turn")
    cwd = Path(fixture.spec["cwd"])
    cwd.mkdir(parents=True, exist_ok=True)
    result = segue(home, "sessions", "--json", cwd=cwd)
    assert result.returncode == 0, result.stderr
    rows = orjson.loads(result.stdout)["sessions"]
    assert [(r["provider"], r["id"]) for r in rows] == [("codex", fixture.spec["session_id"])]
    by_flag = segue(home, "sessions", "--json", "--cwd", str(cwd))
    assert orjson.loads(by_flag.stdout)["sessions"] == rows


def test_sessions_human_output(home: Path) -> None:
    result = segue(home, "sessions", "--all", "--provider", "claude")
    assert result.returncode == 0, result.stderr
    claude = [f for f in FIXTURES if f.provider == "claude"]
    for fixture in claude:
        assert fixture.spec["session_id"] in result.stdout
    assert "codex" not in result.stdout.split("\n", 1)[1]


def test_show_by_prefix_json(home: Path) -> None:
    fixture = next(f for f in FIXTURES if f.name == "claude-tool_cycle")
    result = segue(home, "show", fixture.spec["session_id"][:13], "--json")
    assert result.returncode == 0, result.stderr
    doc = orjson.loads(result.stdout)
    assert doc["meta"]["id"] == fixture.spec["session_id"]
    kinds = [item["kind"] for item in doc["items"]]
    assert "tool_call" in kinds and "tool_result" in kinds
    prompts = [i["text"] for i in doc["items"] if i["kind"] == "user" and i["origin"] == "typed"]
    assert prompts == fixture.spec["prompts"]
    assert all(isinstance(i["line"], int) and i["file"] for i in doc["items"])


def test_show_human_output_shows_errors_and_compactions(home: Path) -> None:
    limited = next(f for f in FIXTURES if f.name == "claude-rate_limited")
    out = segue(home, "show", limited.spec["session_id"]).stdout
    assert "usage_limit" in out and "resets" in out
    compacted = next(f for f in FIXTURES if f.name == "claude-compact")
    out = segue(home, "show", compacted.spec["session_id"]).stdout
    assert "compaction (portable" in out


def test_show_unknown_session_is_a_clear_error(home: Path) -> None:
    result = segue(home, "show", "no-such-session")
    assert result.returncode == 1
    assert "no session matches 'no-such-session'" in result.stderr


def test_show_ambiguous_prefix_is_a_clear_error(home: Path) -> None:
    codex_ids = [f.spec["session_id"] for f in FIXTURES if f.provider == "codex"]
    prefix = os.path.commonprefix(codex_ids)  # noqa: RUF071 (a character prefix is meant)
    if not prefix:
        pytest.skip("the recorded ids share no prefix")
    result = segue(home, "show", prefix)
    assert result.returncode == 1
    assert "matches several sessions" in result.stderr


def _command_lines() -> list[list[str]]:
    """Every command's words (``["switch"]``, ``["thread", "show"]``)."""
    from segue.cli.app import app
    from segue.cli.grammar import Group

    lines: list[list[str]] = []

    def walk(group: Group, words: list[str]) -> None:
        for name in list(group.entries):
            entry = group.entry(name)
            if isinstance(entry, Group):
                walk(entry, [*words, name])
            else:
                lines.append([*words, name])

    walk(app, [])
    return lines


def test_every_command_has_its_help(capsys: pytest.CaptureFixture[str]) -> None:
    """A command's parser is built only when a line names it: each one's help is built here,
    so a parameter the grammar cannot read fails this test, not a user."""
    from segue.cli.app import app

    lines = _command_lines()
    assert {"switch", "run", "rollback", "fork", "watch", "tui"} <= {w[-1] for w in lines}
    for words in lines:
        with pytest.raises(SystemExit) as ended:
            app.parse([*words, "--help"])
        out = capsys.readouterr().out
        assert ended.value.code == 0, words
        assert out.startswith(f"usage: segue {' '.join(words)}"), out
    with pytest.raises(SystemExit) as ended:
        app.parse(["--help"])
    listing = capsys.readouterr().out
    assert ended.value.code == 0
    assert all(f"  {w[0]} " in listing for w in lines), listing


def test_a_wrong_command_line_is_one_line_naming_the_help(home: Path) -> None:
    bare = segue(home)
    assert bare.returncode == 2 and "commands:" in bare.stdout and "switch" in bare.stdout
    for args, says in (
        (["swich"], "'swich' is not a command of segue; did you mean switch or watch?"),
        (["thread", "lst"], "'lst' is not a command of segue thread; did you mean list?"),
        (["--to", "codex"], "--to is not a command of segue: options go after the command"),
        (["switch", "x", "--bogus"], "unrecognized arguments: --bogus (segue switch --help)"),
        (["switch", "x", "--to", "gemini"], "argument --to: 'gemini' is not one of claude, codex"),
        (["switch", "x", "--arrival-compact", "soon"], "'soon' is not one of auto, on, off"),
        (["rollback", "--to-run", "two"], "argument --to-run: 'two' is not a whole number"),
        (["show"], "the following arguments are required: SESSION (segue show --help)"),
        (["run", "--thread", "t", "--version"], "goes after --: segue run -- PROMPT"),
        (["switch", "x", "--exec", "--dry-run"], "--dry-run writes none"),
    ):
        done = segue(home, *args)
        assert done.returncode == 2, (args, done.stderr)
        assert done.stderr.count("\n") == 1 and says in done.stderr, (args, done.stderr)
        as_json = segue(home, *args, "--json")
        assert as_json.returncode == 2 and as_json.stderr == "", (args, as_json.stderr)
        assert orjson.loads(as_json.stdout)["exit_code"] == 2
    # a program asks for a document; --exec would hand its terminal to a CLI after it
    done = segue(home, "switch", "x", "--exec", "--json")
    assert (
        done.returncode == 2 and "--exec hands this terminal" in orjson.loads(done.stdout)["error"]
    )


def test_the_version_is_the_installed_one(home: Path) -> None:
    from importlib.metadata import version

    done = segue(home, "--version")
    assert done.returncode == 0 and done.stdout == f"segue {version('segue')}\n", done
    for line in (["--version", "--json"], ["--json", "--version"]):
        done = segue(home, *line)
        assert done.returncode == 0 and orjson.loads(done.stdout) == {"version": version("segue")}


def test_words_after_double_dash_and_dash_prompts_are_arguments() -> None:
    from segue.cli.app import app
    from segue.cli.grammar import UsageError

    def values(*args: str) -> dict[str, object]:
        return app.parse(list(args))[1]

    assert values("run", "-h is this help?")["prompt"] == "-h is this help?"
    assert values("run", "--json", "--", "--version")["prompt"] == "--version"
    assert values("show", "X", "--json", "--") == {**values("show", "X", "--json")}
    assert values("switch", "A", "--dry-run", "--", "-B")["sessions"] == ["A", "-B"]
    assert values("switch", "A", "--to", "codex", "B", "--", "C")["sessions"] == ["A", "B", "C"]
    assert values("rollback", "T", "--to-run", "3", "--")["to_run"] == 3
    assert values("run", "--thread", "- odd id", "go")["thread"] == "- odd id"
    # an option given its value in the same word is still the option, spaces and all
    assert values("run", "--thread=a b", "go")["thread"] == "a b"
    assert values("sessions", "--cwd=/tmp/my dir")["cwd"] == Path("/tmp/my dir")
    assert values("agents", "-S/tmp/my sock")["sockets"] == ["/tmp/my sock"]
    assert values("run", "--version now")["prompt"] == "--version now"
    options = values("watch", "--interval", "-1e3")["options"]
    assert getattr(options, "interval", None) == -1000.0  # (refused by watch)
    assert values("rollback", "--to-run", "-1")["to_run"] == -1
    # the stand-ins cannot meet a word a user types (a control character is just a word)
    assert values("switch", "\x010", "--", "foo")["sessions"] == ["\x010", "foo"]
    for args, says in (
        (["run", "--thread", "--", "x"], "argument --thread: expected one argument"),
        (["rollback", "--to-run", "- 3"], "'- 3' is not a whole number"),
        (["sessions", "-a b"], "unrecognized arguments: -a b"),
    ):
        with pytest.raises(UsageError, match=says):
            app.parse(args)


def test_no_output_to_write_to_is_a_status_not_a_traceback(home: Path, tmp_path: Path) -> None:
    """stdout closed at start, or a full disk behind it: one line on stderr and status 1; the
    hooks, with no stdin or no stderr, still exit 0."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CLAUDE_", "CODEX_"))}
    env["HOME"] = str(home)
    command = [sys.executable, "-m", "segue"]
    for args in (["--version"], ["sessions", "--all"], ["sessions", "--all", "--json"]):
        closed = subprocess.run(
            [*command, *args], env=env, capture_output=False, stderr=subprocess.PIPE,
            preexec_fn=partial(os.close, 1), timeout=120,
        )  # fmt: skip
        assert closed.returncode == 1, (args, closed.stderr)
        assert closed.stderr.decode().count("\n") == 1 and b"Traceback" not in closed.stderr
        with open("/dev/full", "wb") as full:
            done = subprocess.run(
                [*command, *args], env=env, stdout=full, stderr=subprocess.PIPE, timeout=120
            )
        assert done.returncode == 1 and b"cannot write the output" in done.stderr, done.stderr
    for args in (["run", "--help"], ["show", "nope", "--json"], ["watch", "--print-unit"]):
        with open("/dev/full", "wb") as full:
            done = subprocess.run(
                [*command, *args], env=env, stdout=full, stderr=subprocess.PIPE, timeout=120
            )
        assert done.returncode == 1 and done.stderr.count(b"\n") == 1, (args, done.stderr)
        assert b"Traceback" not in done.stderr and b"Exception ignored" not in done.stderr
    for closing in (0, 2):
        hook = subprocess.run(
            [*command, "hook", "claude", "stop"], env=env, stdout=subprocess.PIPE,
            preexec_fn=partial(os.close, closing), timeout=120,
        )  # fmt: skip
        assert hook.returncode == 0 and hook.stdout == b""


def test_a_name_that_is_not_utf8_is_escaped_in_the_json_error(home: Path) -> None:
    env = {**os.environ, "HOME": str(home)}
    for args in (
        [b"thread", b"show", b"\xff", b"--json"],
        [b"run", b"--thread", b"\xff", b"x", b"--json"],
    ):
        done = subprocess.run(
            [sys.executable, "-m", "segue", *args], env=env, capture_output=True, timeout=120
        )
        assert done.returncode == 1 and done.stderr == b"", done.stderr
        assert "\\xff" in orjson.loads(done.stdout)["error"]


def test_a_wrong_rollback_or_fork_line_is_a_usage_error(home: Path) -> None:
    """Before any thread is looked for: the same status, and one line naming what is wrong."""
    for args, says in (
        (["rollback", "--files-only", "--context-only", "--to-run", "1"], "exclude each other"),
        (["rollback"], "give --to-run N"),
        (["rollback", "--to-run", "0"], "--to-run takes a run's number, from 1 (not 0)"),
        (["rollback", "nowhere", "--to-run", "-2"], "from 1 (not -2)"),
        (["fork"], "give --at-run N"),
        (["fork", "--at-run", "0"], "--at-run takes a run's number, from 1 (not 0)"),
    ):
        done = segue(home, *args)
        assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
        assert says in done.stderr


def test_an_error_never_sends_a_control_character_to_the_terminal(
    home: Path, tmp_path: Path
) -> None:
    """A file name holding an escape sequence (or any control character) is named with it
    written out: a hostile name cannot recolour, retitle or clear the user's terminal."""
    named = tmp_path / "x\x1b]0;owned\x07\x1b[2J\x9b31m.jsonl"
    named.write_text("hello\n")
    done = segue(home, "show", str(named))
    assert done.returncode == 1 and done.stderr.count("\n") == 1
    assert not any(c in done.stderr for c in "\x1b\x07\x9b"), done.stderr
    assert "x\\x1b]0;owned\\x07\\x1b[2J\\x9b31m.jsonl" in done.stderr


def test_a_terminal_that_cannot_show_a_character_gets_an_escape_not_an_error(
    home: Path,
) -> None:
    """Under an ASCII-only output encoding, every command that prints non-ASCII text (a
    transcript's punctuation, the listing's ellipses) still prints all of it."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CLAUDE_", "CODEX_"))}
    env.update(HOME=str(home), PYTHONIOENCODING="ascii:strict")
    shown = next(f for f in FIXTURES if f.provider == "claude")
    out = b""
    for args in (["show", str(shown.transcript)], ["sessions"], ["thread", "list"]):
        done = subprocess.run(
            [sys.executable, "-m", "segue", *args], env=env, capture_output=True, timeout=120
        )
        assert done.returncode == 0, (args, done.stderr)
        assert b"internal error" not in done.stderr and done.stdout.isascii(), args
        out += done.stdout
    assert b"\\xb7" in out  # the show's "·", written out


def test_what_a_transcript_holds_never_drives_the_terminal(tmp_path: Path) -> None:
    """A title, a prompt and a tool's output holding escape sequences (a recoloured terminal,
    a new window title, the screen cleared, the clipboard written: OSC 52) are printed with
    each control character written out, in the listing and in show; tabs and lines stay."""
    chat = next(f for f in FIXTURES if f.name == "claude-chat")
    shutil.copytree(chat.home, tmp_path, dirs_exist_ok=True)
    (transcript,) = tmp_path.rglob(f"{chat.spec['session_id']}.jsonl")
    hostile = "\x1b]0;owned\x07\x1b[2J\x1b]52;c;ZXZpbA==\x07\x9b31m"
    add_to_first_prompt(transcript, f"\tsee {hostile} here :smile: [bold]")
    for args in (["sessions", "--all"], ["show", str(transcript)]):
        done = segue(tmp_path, *args)
        assert done.returncode == 0, done.stderr
        assert not any(c in done.stdout + done.stderr for c in "\x1b\x07\x9b"), args
        assert "\\x1b]0;owned" in done.stdout, args  # (rich drops the BEL itself)
        assert "here :smile: [bold]" in done.stdout, args  # no emoji code, no markup
