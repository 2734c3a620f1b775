"""A listing row from the few parts of a session file a row needs.

Each provider's ``peek`` reads a file's head (id, cwd, first prompt), its tail (state, model,
last update) and the lines a byte scan finds that can be prompts, titles or rollbacks, with its
own reader; this module turns those partial reads into a :class:`SessionInfo`.
"""

from __future__ import annotations

from pathlib import Path

from segue.model.conversation import Conversation, Provider
from segue.model.session_info import SessionInfo
from segue.transforms.effective import active_prompts
from segue.transforms.state import session_state
from segue.transforms.turns import prompts

__all__ = ["session_info"]


def session_info(
    path: Path,
    provider: Provider,
    *,
    size: int,
    head: Conversation,
    tail: Conversation,
    scanned: Conversation,
) -> SessionInfo:
    """The row for ``path``: ``head`` and ``tail`` are its first and last lines read as a
    session, ``scanned`` the lines that can be prompts (and titles)."""
    typed = active_prompts(scanned.items)
    state, reset_at = session_state(tail.items)
    first = _first_prompt(head) or (typed[0].text if typed else None)
    return SessionInfo(
        provider=provider,
        id=head.meta.id,
        path=str(path),
        cwd=head.meta.cwd or tail.meta.cwd,
        title=scanned.meta.title or tail.meta.title,
        first_prompt=one_line(first),
        model=tail.meta.model or head.meta.model,
        updated=tail.meta.updated or head.meta.updated,
        size=size,
        turns=len(typed),
        state=state,
        reset_at=reset_at,
    )


def _first_prompt(conversation: Conversation) -> str | None:
    for item in prompts(conversation.items):
        if item.text.strip():
            return item.text
    return None


def one_line(text: str | None, limit: int = 200) -> str | None:
    """``text`` on one line, at most ``limit`` characters."""
    if text is None:
        return None
    flat = " ".join(text.split())
    if len(flat) <= limit:
        return flat
    cut = flat[: limit - 1]
    space = cut.rfind(" ")
    # at a word boundary when there is one: a key or token is then shown whole (and masked by a
    # renderer that masks secrets) or not at all, never a recognisable part of it
    return (cut[:space] if space > 0 else cut) + "…"
