"""A summary written by Codex, run headless: ``codex exec --ephemeral -s read-only`` in a scratch
folder, its last message written to a file there (``-o``). The read-only sandbox means it can
change nothing; ``--ephemeral`` means no rollout of its own appears."""

from __future__ import annotations

import tempfile
from collections.abc import Mapping
from pathlib import Path

from segue.providers.headless import run_headless

SUMMARY_TIMEOUT = 300.0


def summarize(executable: str, prompt: str, env: Mapping[str, str]) -> tuple[str | None, str]:
    """``(the answer, what happened)``; the answer is None when there is none. Never raises."""
    with tempfile.TemporaryDirectory(prefix="segue-summary-") as scratch:
        answer = Path(scratch) / "answer.md"
        argv = [
            executable,
            "exec",
            "--ephemeral",
            "--sandbox",
            "read-only",
            "--skip-git-repo-check",
            "--color",
            "never",
            "--output-last-message",
            str(answer),
            prompt,
        ]
        run = run_headless(argv, cwd=scratch, env=env, timeout=SUMMARY_TIMEOUT)
        try:
            text = answer.read_text(errors="replace") if answer.is_file() else None
        except OSError:
            text = None
    if isinstance(run, str):
        return None, run
    if run.returncode != 0 or not text:
        detail = (run.stderr or run.stdout).strip().splitlines()
        return None, f"codex gave no answer (exit {run.returncode})" + (
            f": {detail[-1][:300]}" if detail else ""
        )
    return text, "written by Codex"
