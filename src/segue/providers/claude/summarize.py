"""A summary written by Claude Code, run headless: ``claude -p <prompt> --tools ""
--no-session-persistence --output-format json`` in a scratch folder. No tools means it can
read and change nothing; no session persistence means no session file of its own appears."""

from __future__ import annotations

import tempfile
from collections.abc import Mapping

import orjson

from segue.providers.headless import run_headless

SUMMARY_TIMEOUT = 300.0


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
