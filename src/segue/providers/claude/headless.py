"""What Claude Code does headless for segue.

Its own compaction of a session (``claude -p /compact --resume``): Claude Code 2.1.328 appends a
``compact_boundary`` and its summary to the same transcript. A failed compaction (its summary
request hit a limit) still exits 0: what decides is whether a new portable compaction landed in
the file (a limit text is never taken for a summary).

A summary (``claude -p <prompt> --tools "" --no-session-persistence --output-format json``, in a
scratch folder): no tools means it can read and change nothing; no session persistence means no
session file of its own appears.
"""

from __future__ import annotations

import tempfile
from collections.abc import Mapping
from pathlib import Path

import orjson

from segue.formats.claude.reader import read_session
from segue.model.conversation import Compaction, CompactionState
from segue.providers.headless import run_headless

COMPACT_TIMEOUT = 600.0
SUMMARY_TIMEOUT = 300.0


def compact(
    executable: str, path: Path, session_id: str, cwd: str, env: Mapping[str, str]
) -> tuple[bool, str]:
    """Run Claude's compaction on a session; ``(done, what happened)``. Never raises."""
    before = _portable_compactions(path)
    argv = [executable, "-p", "/compact", "--resume", session_id, "--output-format", "json"]
    run = run_headless(argv, cwd=cwd, env=env, timeout=COMPACT_TIMEOUT)
    if isinstance(run, str):
        return False, f"claude /compact: {run}"
    after = _portable_compactions(path)
    if after > before:
        return True, "compacted by Claude Code"
    detail = (run.stdout or run.stderr).strip().splitlines()
    return False, f"claude /compact did not compact (exit {run.returncode}): " + (
        detail[-1][:300] if detail else "no output"
    )


def _portable_compactions(path: Path) -> int:
    try:
        conversation = read_session(path, with_subagents=False)
    except OSError:
        return 0
    return sum(
        1
        for item in conversation.items
        if isinstance(item, Compaction) and item.state is CompactionState.PORTABLE
    )


def summarize(executable: str, prompt: str, env: Mapping[str, str]) -> tuple[str | None, str]:
    """``(the answer, what happened)``; the answer is None when there is none. Never raises."""
    argv = [
        executable,
        "-p",
        prompt,
        "--tools",
        "",
        "--no-session-persistence",
        "--output-format",
        "json",
    ]
    with tempfile.TemporaryDirectory(prefix="segue-summary-") as scratch:
        run = run_headless(argv, cwd=scratch, env=env, timeout=SUMMARY_TIMEOUT)
    if isinstance(run, str):
        return None, run
    try:
        reply = orjson.loads(run.stdout)
    except orjson.JSONDecodeError:
        reply = None
    if not isinstance(reply, dict):
        detail = (run.stderr or run.stdout).strip().splitlines()
        return None, f"claude gave no answer (exit {run.returncode})" + (
            f": {detail[-1][:300]}" if detail else ""
        )
    text = reply.get("result")
    if reply.get("is_error") or run.returncode != 0 or not isinstance(text, str):
        shown = text[:300] if isinstance(text, str) else "no result"
        return None, f"claude failed (exit {run.returncode}): {shown}"
    return text, "written by Claude Code"
