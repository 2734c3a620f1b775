"""``segue thread adopt|list|show`` as a user runs them."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import orjson

from segue_testbed.fixtures import all_fixtures
from segue_testbed.generate import add_to_first_prompt
from tests.segue_cli import segue as run_segue

BY_NAME = {f.name: f for f in all_fixtures()}


def _env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SEGUE_")}
    env["HOME"] = str(tmp_path / "home")
    env["CODEX_HOME"] = str(tmp_path / "home" / ".codex")
    env["CLAUDE_CONFIG_DIR"] = str(tmp_path / "home" / ".claude")
    env["SEGUE_DATA_DIR"] = str(tmp_path / "data")
    return env


def segue(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``segue thread ARGS`` in a scratch home."""
    return run_segue(["thread", *args], _env(tmp_path), cwd=tmp_path, timeout=120)


def _json(done: subprocess.CompletedProcess[str]) -> Any:
    assert done.returncode == 0, done.stderr
    return orjson.loads(done.stdout)


def test_adopt_list_and_show(tmp_path: Path) -> None:
    codex, claude = BY_NAME["codex-multi_turn"], BY_NAME["claude-tool_cycle"]
    for fixture in (codex, claude):
        shutil.copytree(fixture.home, tmp_path / "home", dirs_exist_ok=True)
    assert _json(segue(tmp_path, "list", "--json")) == {"threads": []}
    empty = segue(tmp_path, "list")
    assert (empty.returncode, empty.stderr) == (0, "")
    assert "No threads yet" in empty.stdout

    adopted = _json(segue(tmp_path, "adopt", codex.spec["session_id"][:13], "--json"))
    assert [r["prompt"] for r in adopted["runs"]] == codex.spec["prompts"]
    (pt,) = adopted["provider_threads"]
    assert pt["native_id"] == codex.spec["session_id"] and pt["status"] == "active"
    assert pt["native_runs"] == list(range(1, len(codex.spec["prompts"]) + 1))
    assert pt["handoffs"] == []
    assert all(r["provider_thread"] == pt["id"] and r["handoff"] is None for r in adopted["runs"])
    other = _json(segue(tmp_path, "adopt", claude.spec["session_id"], "--json"))
    again = _json(segue(tmp_path, "adopt", codex.spec["session_id"], "--json"))
    assert again["id"] == adopted["id"]

    listed = _json(segue(tmp_path, "list", "--json"))["threads"]
    assert [t["id"] for t in listed] == [other["id"], adopted["id"]]
    assert [(t["runs"], t["providers"]) for t in listed] == [
        (len(claude.spec["prompts"]), ["claude"]),
        (len(codex.spec["prompts"]), ["codex"]),
    ]
    human = segue(tmp_path, "list")
    assert adopted["id"] in human.stdout and other["id"] in human.stdout

    # by the thread's id prefix, or by the session it holds
    shown = _json(segue(tmp_path, "show", adopted["id"][:30], "--json"))
    assert shown["runs"] == adopted["runs"] and shown["notes"] == []
    by_session = _json(segue(tmp_path, "show", claude.spec["session_id"][:8], "--json"))
    assert by_session["id"] == other["id"]
    table = segue(tmp_path, "show", adopted["id"])
    assert table.returncode == 0, table.stderr
    n = len(codex.spec["prompts"])
    assert n > 1 and f"C1 native runs: 1-{n}" in table.stdout and "C1 handoffs: -" in table.stdout
    assert codex.spec["prompts"][0][:40] in table.stdout
    claude_table = segue(tmp_path, "show", other["id"])
    assert "L1 native runs: 1" in claude_table.stdout and "C1" not in claude_table.stdout


def test_errors_are_one_line(tmp_path: Path) -> None:
    missing = segue(tmp_path, "show", "0123abcd")
    assert missing.returncode == 1 and missing.stdout == ""
    assert missing.stderr.count("\n") == 1 and "no thread 0123abcd" in missing.stderr
    as_json = segue(tmp_path, "adopt", "no-such-session", "--json")
    assert as_json.returncode == 1
    assert "no session matches 'no-such-session'" in orjson.loads(as_json.stdout)["error"]
    # segue run names a thread or a session: neither is there
    ran = run_segue(["run", "--thread", "0123abcd", "hi", "--json"], _env(tmp_path), cwd=tmp_path)
    assert ran.returncode == 1
    error = orjson.loads(ran.stdout)["error"]
    assert error.startswith("no thread 0123abcd, and no session matches '0123abcd'")
    empty = run_segue(["run", "--thread", "0123abcd", "  ", "--json"], _env(tmp_path), cwd=tmp_path)
    assert orjson.loads(empty.stdout)["error"] == "give a prompt to run (got an empty one)"


def test_a_secret_in_a_prompt_is_masked_where_threads_are_shown(tmp_path: Path) -> None:
    """A token pasted into the first prompt: the thread's label keeps it masked (masked before
    it is cut: a cut token is no longer found), and ``thread list``/``show`` print the prompt
    masked, as ``segue sessions`` does; the runs' JSON keeps the prompt as typed."""
    chat = BY_NAME["claude-chat"]
    shutil.copytree(chat.home, tmp_path / "home", dirs_exist_ok=True)
    (transcript,) = (tmp_path / "home").rglob(f"{chat.spec['session_id']}.jsonl")
    token = "ghp_" + "A1b2C3d4" * 4 + "E5f6"  # the shape of a classic GitHub token, made up
    add_to_first_prompt(transcript, f" (use {token})")
    adopted = _json(segue(tmp_path, "adopt", chat.spec["session_id"], "--json"))
    assert token in adopted["runs"][0]["prompt"]
    assert "A1b2C3d4" not in (adopted["title"] or "")
    for args in (["list"], ["show", adopted["id"]]):
        done = segue(tmp_path, *args)
        assert done.returncode == 0 and "A1b2C3d4" not in done.stdout, done.stdout
        assert "[secret redacted" in done.stdout


def test_fork_into_an_empty_folder_name_is_refused_and_nothing_is_forked(tmp_path: Path) -> None:
    """``--into ""`` is a mistake, not the default folder: one line, status 2, no fork."""
    codex = BY_NAME["codex-multi_turn"]
    shutil.copytree(codex.home, tmp_path / "home", dirs_exist_ok=True)
    Path(codex.spec["cwd"]).mkdir(parents=True, exist_ok=True)
    adopted = _json(segue(tmp_path, "adopt", codex.spec["session_id"], "--json"))
    last = len(adopted["runs"])
    default = Path(f"{codex.spec['cwd']}-fork-{last}")
    existed = default.exists()
    for into in ("", "  "):
        for json in ([], ["--json"]):
            done = run_segue(
                ["fork", adopted["id"], "--at-run", str(last), "--into", into, *json],
                _env(tmp_path),
                cwd=tmp_path,
            )
            assert done.returncode == 2, done.stdout + done.stderr
            said = orjson.loads(done.stdout)["error"] if json else done.stderr
            assert "--into needs a folder" in said and said.strip().count("\n") == 0, said
    assert [t["id"] for t in _json(segue(tmp_path, "list", "--json"))["threads"]] == [adopted["id"]]
    assert default.exists() == existed
