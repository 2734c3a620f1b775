"""What Codex does headless for segue.

Its own compaction of a session, run through its app-server (``codex exec resume <id>
/compact`` would only send "/compact" as a message). The compaction lands in the same rollout;
what decides is whether a new compaction is there afterwards.

A summary (``codex exec --ephemeral -s read-only``, in a scratch folder), its last message
written to a file there (``-o``). The read-only sandbox means it can change nothing;
``--ephemeral`` means no rollout of its own appears.
"""

from __future__ import annotations

import tempfile
from collections.abc import Mapping
from pathlib import Path

from segue.formats.codex.reader import read_session
from segue.model.conversation import Compaction, CompactionState
from segue.providers.codex.app_server import AppServerError, compact_thread
from segue.providers.headless import run_headless

COMPACT_TIMEOUT = 600.0
SUMMARY_TIMEOUT = 300.0


def compact(
    executable: str, path: Path, session_id: str, cwd: str, env: Mapping[str, str]
) -> tuple[bool, str]:
    """Run Codex's compaction on a thread; ``(done, what happened)``. Never raises."""
    before = _compactions(path)
    try:
        status = compact_thread(
            [executable, "app-server"], session_id, cwd=cwd, env=env, timeout=COMPACT_TIMEOUT
        )
    except AppServerError as exc:
        return False, f"codex did not compact: {exc}"
    if _compactions(path) > before and status == "completed":
        return True, "compacted by Codex"
    return False, f"codex did not compact (turn {status})"


def _compactions(path: Path) -> int:
    try:
        conversation = read_session(path)
    except OSError:
        return 0
    return sum(
        1
        for item in conversation.items
        if isinstance(item, Compaction) and item.state is not CompactionState.REJECTED
    )


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
