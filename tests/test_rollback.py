"""``segue rollback`` with the real CLIs: the seed's example (Codex runs 1-2, Claude 3-4, Codex
5; back to 3), the files byte for byte, the graph, what each CLI is sent next, and the undo."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import orjson
import pytest

from segue.model.conversation import Provider
from segue_testbed.standin.anthropic import Reply as ClaudeReply
from segue_testbed.standin.anthropic import Text as ClaudeText
from segue_testbed.standin.anthropic import ToolUse
from segue_testbed.standin.openai import FunctionCall, request_kind
from segue_testbed.standin.openai import Text as CodexText
from segue_testbed.standin.server import StandIn
from tests.segue_cli import segue, segue_json
from tests.test_checkpoints import both_clis, git, new_repo, user_state
from tests.test_restore import files_of
from tests.test_switch import history_texts_sent

pytestmark = pytest.mark.realcli


def test_the_seeds_rollback_files_graph_next_requests_and_undo(
    standin: StandIn, tmp_path: Path
) -> None:
    lane, codex, claude, env = both_clis(standin, tmp_path)
    repo = new_repo(tmp_path / "work", {"base.txt": "base\n"}, claude)

    def on_codex(n: int, cmd: str) -> None:
        lane.script("openai", FunctionCall("exec_command", {"cmd": cmd}), CodexText(f"CODEX-{n}"))

    def on_claude(n: int, cmd: str) -> None:
        lane.script(
            "anthropic",
            ClaudeReply((ToolUse("Bash", {"command": cmd}),)),
            ClaudeText(f"CLAUDE-{n}"),
        )

    def run(n: int, provider: str) -> dict[str, Any]:
        done = segue_json(
            ["run", "--thread", thread, "--provider", provider, f"PROMPT-{n}", "--json"],
            env,
            cwd=repo,
        )
        assert done["status"] == "completed" and done["run"] == n, done
        return done

    on_codex(1, "printf 'one\\n' > one.txt")
    assert codex.exec("PROMPT-1", cwd=repo).returncode == 0
    thread = codex.only_session_id()
    on_codex(2, "printf 'two\\n' > two.txt && printf 'base, changed\\n' > base.txt")
    thread = run(2, "codex")["thread"]
    on_claude(3, "printf 'three\\n' > three.txt && rm one.txt")
    run(3, "claude")
    at_three = files_of(repo)
    on_claude(4, "printf 'four\\n' > four.txt && printf 'three, changed\\n' > three.txt")
    run(4, "claude")
    on_codex(5, "printf 'five\\n' > five.txt && rm two.txt")
    fifth = run(5, "codex")
    assert fifth["move"]["strategy"] == "delta_into_existing"
    # the handoff of runs 3-4 into Codex names the workspace's checkpoint of run 4
    graph = segue_json(["thread", "show", thread, "--json"], env)
    marks = segue_json(["checkpoints", thread, "--json"], env)["checkpoints"]
    (given,) = [
        h for pt in graph["provider_threads"] for h in pt["handoffs"] if h["covers"] == [3, 4]
    ]
    assert given["checkpoint"] == next(c["id"] for c in marks if c["run"] == 4)
    (repo / "typed-by-hand.txt").write_text("after run 5, no checkpoint\n")
    after_five = files_of(repo)
    mine = {k: v for k, v in user_state(repo).items() if k not in ("files", "status")}

    preview = segue_json(["rollback", thread, "--to-run", "3", "--dry-run", "--json"], env)
    assert files_of(repo) == after_five  # a dry run changes nothing
    assert preview["runs_rolled_back"] == [4, 5]
    assert {(a["path"], a["action"]) for a in preview["on_disk"]} == {
        ("three.txt", "restore"),
        ("four.txt", "remove"),
        ("five.txt", "remove"),
        ("two.txt", "recreate"),
        ("typed-by-hand.txt", "remove"),
    }
    assert [a["path"] for a in preview["not_in_a_checkpoint"]] == ["typed-by-hand.txt"]
    refused = segue(["rollback", thread, "--to-run", "3", "--json"], env)
    assert refused.returncode == 1 and "--yes" in orjson.loads(refused.stdout)["error"]

    done = segue_json(["rollback", thread, "--to-run", "3", "--yes", "--json"], env)
    assert done["failed"] == [] and done["exit_code"] == 0
    assert files_of(repo) == at_three
    assert {k: v for k, v in user_state(repo).items() if k not in ("files", "status")} == mine
    shown = segue_json(["thread", "show", thread, "--json"], env)
    statuses = {r["ordinal"]: r["status"] for r in shown["runs"]}
    assert statuses == {1: "completed", 2: "completed", 3: "completed", 4: "rolled_back",
                        5: "rolled_back"}  # fmt: skip
    # the handoff of runs 3-4 into Codex is superseded; both old sessions are divergent, and each
    # provider has a new session at run 3
    into_codex = [
        h for pt in shown["provider_threads"] if pt["provider"] == "codex" for h in pt["handoffs"]
    ]
    assert all(h["covers"][1] <= 3 for h in into_codex)
    old = [pt for pt in shown["provider_threads"] if pt["native_runs"]]
    assert {pt["provider"]: pt["status"] for pt in old} == {
        "codex": "divergent",
        "claude": "divergent",
    }
    assert {s["provider"] for s in done["sessions"] if s["session_id"]} == {"codex", "claude"}

    # what either CLI is sent next holds runs 1..3 and nothing after
    for provider in (Provider.CLAUDE, Provider.CODEX):
        api = "anthropic" if provider is Provider.CLAUDE else "openai"
        seen = len(lane.requests_for(api))
        if provider is Provider.CLAUDE:
            lane.script("anthropic", ClaudeText("CLAUDE-6"))
        else:
            lane.script("openai", CodexText("CODEX-6"))
        after = segue_json(
            ["run", "--thread", thread, "--provider", provider.value, "PROMPT-6", "--json"],
            env,
            cwd=repo,
        )
        assert after["status"] == "completed", after
        requests = [
            r for r in lane.requests_for(api)[seen:]
            if api == "anthropic" or request_kind(r) == "turn"
        ]  # fmt: skip
        sent = " ".join(history_texts_sent(provider, requests[-1].body))
        for n in (1, 2, 3):
            assert f"PROMPT-{n}" in sent, (provider, n)
        for gone in ("PROMPT-4", "PROMPT-5", "CLAUDE-4", "CODEX-5", "four.txt", "five.txt"):
            assert gone not in sent, (provider, gone)

    # undo: the folder as it was before the rollback (the hand-typed file included); the thread
    # went on after it (runs 6 and 7), so its runs stay as they are, and it says so
    (repo / "three.txt").write_text("edited after the rollback\n")
    undone = segue_json(["rollback", thread, "--undo", "--yes", "--json"], env)
    assert undone["failed"] == []
    assert files_of(repo) == after_five
    assert any("went on after the rollback" in n for n in undone["notes"])
    shown = segue_json(["thread", "show", thread, "--json"], env)
    assert {r["ordinal"]: r["status"] for r in shown["runs"]}[4] == "rolled_back"


def test_a_fork_gets_its_files_at_run_n_and_its_provider_at_its_first_run(
    standin: StandIn, tmp_path: Path
) -> None:
    lane, codex, claude, env = both_clis(standin, tmp_path)
    repo = new_repo(tmp_path / "work", {"base.txt": "base\n"}, claude)
    lane.script(
        "openai", FunctionCall("exec_command", {"cmd": "printf '1\\n' > one.txt"}), CodexText("C1")
    )
    assert codex.exec("PROMPT-1", cwd=repo).returncode == 0
    thread = codex.only_session_id()
    lane.script(
        "openai", FunctionCall("exec_command", {"cmd": "printf '2\\n' > two.txt"}), CodexText("C2")
    )
    two = segue_json(["run", "--thread", thread, "PROMPT-2", "--json"], env, cwd=repo)
    thread = two["thread"]
    at_two = files_of(repo)
    lane.script(
        "anthropic",
        ClaudeReply((ToolUse("Bash", {"command": "printf '3\\n' > three.txt && rm one.txt"}),)),
        ClaudeText("L3"),
    )
    segue_json(["run", "--thread", thread, "--provider", "claude", "PROMPT-3", "--json"], env,
               cwd=repo)  # fmt: skip
    mine = {k: v for k, v in user_state(repo).items() if k not in ("files", "status")}

    forked = segue_json(["fork", thread, "--at-run", "2", "--json"], env, cwd=repo)
    folder = Path(forked["folder"])
    assert forked["worktree"] and folder == tmp_path / "work-fork-2"
    assert files_of(folder) == at_two
    assert {k: v for k, v in user_state(repo).items() if k not in ("files", "status")} == mine
    assert git(repo, "rev-parse", "--abbrev-ref", "HEAD").strip() == "main"
    shown = segue_json(["thread", "show", forked["thread"], "--json"], env)
    assert shown["parent"]["thread"] == thread and shown["parent"]["run"] == 2
    assert shown["runs"] == [] and shown["provider_threads"] == []  # no provider chosen yet
    parent = segue_json(["thread", "show", thread, "--json"], env)
    assert [f["thread"] for f in parent["forks"]] == [forked["thread"]]

    # its first run on Codex: a native fork of the Codex session, cut at run 2
    seen = len(lane.requests_for("openai"))
    lane.script("openai", CodexText("FORKED"))
    first = segue_json(
        ["run", "--thread", forked["thread"], "--provider", "codex", "FORK-PROMPT", "--json"],
        env,
        cwd=folder,
    )
    assert first["status"] == "completed" and first["run"] == 3, first
    assert any("native fork" in w for w in first["warnings"])
    (request,) = [r for r in lane.requests_for("openai")[seen:] if request_kind(r) == "turn"]
    sent = " ".join(history_texts_sent(Provider.CODEX, request.body))
    assert "PROMPT-1" in sent and "PROMPT-2" in sent and "FORK-PROMPT" in sent
    assert "PROMPT-3" not in sent and "L3" not in sent
    assert str(folder) in sent  # it runs in the fork's folder
    # a fork at run 3 run on Codex, which never ran 3: a portable projection
    other = segue_json(["fork", thread, "--at-run", "3", "--json"], env, cwd=repo)
    seen = len(lane.requests_for("openai"))
    lane.script("openai", CodexText("FORKED-3"))
    again = segue_json(
        ["run", "--thread", other["thread"], "--provider", "codex", "FORK-3", "--json"],
        env,
        cwd=Path(other["folder"]),
    )
    assert any("portable" in w for w in again["warnings"]), again
    (request,) = [r for r in lane.requests_for("openai")[seen:] if request_kind(r) == "turn"]
    sent = " ".join(history_texts_sent(Provider.CODEX, request.body))
    assert all(p in sent for p in ("PROMPT-1", "PROMPT-2", "PROMPT-3", "L3", "FORK-3"))
    assert files_of(Path(other["folder"])) == files_of(repo)


def test_a_rollback_killed_at_any_point_is_undone_to_the_folder_as_it_was(
    standin: StandIn, tmp_path: Path
) -> None:
    lane, codex, _claude, env = both_clis(standin, tmp_path)
    repo = tmp_path / "work"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    lane.script("openai", FunctionCall("exec_command", {"cmd": "true"}), CodexText("one"))
    assert codex.exec("PROMPT-1", cwd=repo).returncode == 0
    session = codex.only_session_id()
    thread = segue_json(["checkpoint", session, "--exact", "--json"], env, cwd=repo)["thread"]
    make = "mkdir -p d && for i in $(seq 4000); do echo $i > d/f$i.txt; done"
    lane.script("openai", FunctionCall("exec_command", {"cmd": make}), CodexText("two"))
    done = segue_json(["run", "--thread", thread, "PROMPT-2", "--json"], env, cwd=repo)
    assert done["status"] == "completed"
    before = files_of(repo)
    assert len(before) == 4000

    # killed before it does anything, just after it starts, and while it removes the files (the
    # folder is watched: killed when that many of the 4000 are left)
    folder = repo / "d"
    interrupted = 0
    for delay, left in ((0.05, None), (0.3, None), (None, 3500), (None, 2000), (None, 300)):
        child = subprocess.Popen(
            [sys.executable, "-m", "segue", "rollback", thread, "--to-run", "1", "--yes"],
            env=env,
            cwd=repo,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        if left is None:
            time.sleep(delay or 0.0)
        else:
            while child.poll() is None and len(os.listdir(folder)) > left:
                time.sleep(0.001)
        child.send_signal(signal.SIGKILL)
        child.wait()
        interrupted += 0 < len(os.listdir(folder)) < len(before) if folder.exists() else 0
        shown = segue_json(["thread", "show", thread, "--json"], env)
        if any(r["in_force"] and r["undoes"] is None for r in shown["rollbacks"]):
            segue_json(["rollback", thread, "--undo", "--yes", "--json"], env, cwd=repo)
        assert files_of(repo) == before, (delay, left)
        shown = segue_json(["thread", "show", thread, "--json"], env)
        assert [r["status"] for r in shown["runs"]] == ["completed", "completed"], (delay, left)
    assert interrupted >= 2, "the kills did not land while the files were being removed"
