"""Codex's own compaction of a session, run through its app-server (``codex exec resume <id>
/compact`` would only send "/compact" as a message). The compaction lands in the same rollout;
what decides is whether a new compaction is there afterwards."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from segue.formats.codex.reader import read_session
from segue.model.conversation import Compaction, CompactionState
from segue.providers.codex.app_server import AppServerError, compact_thread

COMPACT_TIMEOUT = 600.0


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
