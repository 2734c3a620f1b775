"""Step 6 of a switch, **write**: the prepared session published.

The session is published atomically (never over an existing file), and the turns the new file
holds are read back from the lines just written, not from the disk: the provider thread's
layout, so the next sync knows which of its turns are new. A resume writes nothing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import msgspec

from segue.formats.stamp import Stamp, stamp_file
from segue.providers import entry
from segue.switch.prepare import Prepared
from segue.threads.model import Run, TurnSlot, prompt_hash
from segue.threads.native import NativeTurn, split_native_turns
from segue.threads.reconcile import match_prompts, turns_to_layout

__all__ = ["Written", "layout_for", "write_move"]


class Written(msgspec.Struct):
    session_id: str
    path: Path
    stamp: Stamp | None
    turns: list[NativeTurn]  # the turns segue wrote (a fork: after its parent's copy)
    warnings: list[str] = msgspec.field(default_factory=list)


def write_move(prepared: Prepared, env: Mapping[str, str]) -> Written | None:
    """Publish the prepared session (None: a resume writes nothing)."""
    session = prepared.session
    if session is None:
        return None
    e = entry(session.provider)
    warnings = e.publish(session, env)
    try:
        conversation = e.read_lines(session.path, session.lines)
        turns = split_native_turns(conversation)
    except Exception as exc:  # never undo a published session over its read-back
        warnings.append(f"could not read back what was written: {exc}")
        turns = []
    return Written(session.session_id, session.path, stamp_file(session.path), turns, warnings)


def layout_for(turns: Sequence[NativeTurn], runs: Sequence[Run]) -> list[TurnSlot]:
    """Which run each written turn is: one for one when there are as many, else matched by
    prompt in order (a turn matching none is no run: a handoff's own message)."""
    if len(turns) == len(runs):
        return turns_to_layout(turns, [r.ordinal for r in runs])
    return match_prompts([prompt_hash(t.prompt) for t in turns], runs)
