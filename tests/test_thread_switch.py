"""The seed's example through ``segue switch``, with the real CLIs and the stand-in.

Run 1 on Codex (C1), ``segue switch`` to Claude Code (a new L1, the handoff covering run 1),
runs 2-3 typed in Claude Code, ``segue switch`` back to Codex: C1's own thread is resumed
through a native fork holding its records byte for byte (its encrypted reasoning included) and
then runs 2-3 as native items; run 4 goes there. Switching again with no new run resumes the
session as it is; ``--clean`` asks for a new one.
"""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import orjson
import pytest

from segue_testbed.claude_cli import ClaudeHome
from segue_testbed.codex_cli import CodexHome
from segue_testbed.fixtures import all_fixtures
from segue_testbed.standin.anthropic import Text as ClaudeText
from segue_testbed.standin.openai import Text as CodexText
from segue_testbed.standin.openai import request_kind
from segue_testbed.standin.server import StandIn
from tests.segue_cli import segue_json

pytestmark = pytest.mark.realcli

BY_NAME = {f.name: f for f in all_fixtures()}
PROMPT = "Reply with the word MARKER and nothing else."


def test_the_seeds_example_through_segue_switch(standin: StandIn, tmp_path: Path) -> None:
    fixture = BY_NAME["codex-reasoning"]
    lane = standin.lane()
    codex, claude = CodexHome(tmp_path, lane), ClaudeHome(tmp_path, lane)
    env = {
        **codex.env(),
        **claude.env(),
        "SEGUE_STATE_DIR": str(tmp_path / "state"),
        "SEGUE_DATA_DIR": str(tmp_path / "data"),
    }
    shutil.copytree(fixture.home, codex.home, dirs_exist_ok=True)
    c1 = fixture.spec["session_id"]
    c1_file = codex.home / fixture.transcript.relative_to(fixture.home)
    c1_sha = hashlib.sha256(c1_file.read_bytes()).hexdigest()
    cwd = Path(fixture.spec["cwd"])
    cwd.mkdir(parents=True, exist_ok=True)

    # to Claude: a new provider thread, the handoff covering run 1
    there = segue_json(["switch", c1, "--to", "claude", "--json"], env)
    assert there["thread"]["strategy"] == "full_into_new"
    assert there["thread"]["handoff"]["covers"] == [1, 1]
    assert there["thread"]["handoff"]["form"] == "native_items"
    l1 = there["session_id"]
    thread = there["thread"]["id"]

    # runs 2-3 typed in Claude Code itself
    prompts = ["Name a prime above 90.", "And one above 100?"]
    for prompt, answer in zip(prompts, ["97.", "101."], strict=True):
        lane.script("anthropic", ClaudeText(answer))
        ran = claude.run(prompt, cwd=cwd, resume=l1)
        assert ran.returncode == 0, ran.stderr[-2000:]

    # back to Codex: a delta into C1's own thread, as a native fork
    back = segue_json(["switch", l1, "--to", "codex", "--json"], env)
    move = back["thread"]
    assert (move["id"], move["strategy"]) == (thread, "delta_into_existing")
    assert move["handoff"]["covers"] == [2, 3] and move["handoff"]["form"] == "native_items"
    fork = back["session_id"]
    assert fork != c1
    lane.script("openai", CodexText("MARKER"))
    ran_codex = codex.exec(PROMPT, cwd=cwd, resume=fork)
    assert ran_codex.returncode == 0, ran_codex.stderr[-2000:]
    (request,) = [r.body for r in lane.requests_for("openai") if request_kind(r) == "turn"]
    sent = orjson.dumps(request["input"]).decode()
    blob = next(
        orjson.loads(line)["payload"]["encrypted_content"]
        for line in c1_file.read_bytes().splitlines()
        if b'"encrypted_content"' in line and b'"response_item"' in line
    )
    marks = [blob, fixture.spec["replies"][-1], prompts[0], "97.", prompts[1], "101.", PROMPT]
    positions = [sent.index(mark) for mark in marks]
    assert positions == sorted(positions)  # C1's own history, then runs 2-3, then run 4
    assert sent.count(fixture.spec["prompts"][0]) == 1  # run 1 is not carried again
    assert hashlib.sha256(c1_file.read_bytes()).hexdigest() == c1_sha

    # the seed's coverage table
    shown = segue_json(["thread", "show", thread, "--json"], env)
    assert [(r["ordinal"], r["provider"]) for r in shown["runs"]] == [
        (1, "codex"),
        (2, "claude"),
        (3, "claude"),
        (4, "codex"),
    ]
    by_provider = {pt["provider"]: pt for pt in shown["provider_threads"]}
    codex_pt, claude_pt = by_provider["codex"], by_provider["claude"]
    assert codex_pt["native_runs"] == [1, 4] and codex_pt["native_id"] == fork
    assert [(h["covers"], h["form"]) for h in codex_pt["handoffs"]] == [([2, 3], "native_items")]
    assert codex_pt["handoffs"][0]["items"] > 0 and codex_pt["handoffs"][0]["target_run"] == 4
    assert claude_pt["native_runs"] == [2, 3]
    assert [h["covers"] for h in claude_pt["handoffs"]] == [[1, 1]]

    # Claude missed run 4: a delta again; with --clean, a new session instead
    clean = segue_json(["switch", fork, "--to", "claude", "--clean", "--dry-run", "--json"], env)
    assert clean["thread"]["strategy"] == "full_into_new"
    assert "clean" in clean["thread"]["reason"]


def test_a_switch_with_no_new_run_resumes_the_session_as_it_is(
    standin: StandIn, tmp_path: Path
) -> None:
    fixture = BY_NAME["codex-multi_turn"]
    lane = standin.lane()
    codex, claude = CodexHome(tmp_path, lane), ClaudeHome(tmp_path, lane)
    env = {
        **codex.env(),
        **claude.env(),
        "SEGUE_STATE_DIR": str(tmp_path / "state"),
        "SEGUE_DATA_DIR": str(tmp_path / "data"),
    }
    shutil.copytree(fixture.home, codex.home, dirs_exist_ok=True)
    Path(fixture.spec["cwd"]).mkdir(parents=True, exist_ok=True)
    there = segue_json(["switch", fixture.spec["session_id"], "--to", "claude", "--json"], env)
    before = sorted(p for p in codex.home.rglob("*.jsonl"))

    back = segue_json(["switch", there["session_id"], "--to", "codex", "--json"], env)

    assert back["thread"]["strategy"] == "no_handoff"
    assert back["session_id"] == fixture.spec["session_id"]  # C1 itself, resumed as it is
    assert sorted(p for p in codex.home.rglob("*.jsonl")) == before  # nothing written
    assert back["resume_command"].endswith(f"codex resume {fixture.spec['session_id']}")
