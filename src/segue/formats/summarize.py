"""Summaries for the session listing, reading only the parts of a file the listing needs:
the head (id, cwd, first prompt), the tail (state, model, last update), and a byte scan for the
lines that count as prompts (only those lines are parsed)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from segue.conversation import Conversation, Provider, UserMessage
from segue.formats.jsonl import head_lines, matching_lines, tail_lines
from segue.summary import SessionSummary
from segue.transforms.effective import apply_rollbacks
from segue.transforms.state import session_state
from segue.transforms.turns import prompts

Reader = Callable[..., Conversation]


def summarize(path: Path, provider: Provider) -> SessionSummary:
    if provider is Provider.CODEX:
        from segue.formats.codex.reader import read_lines as read_codex

        return _summarize(
            path,
            provider,
            read_codex,
            prompt_needles=(b'"role":"user"', b'"thread_rolled_back"', b'"thread_name_updated"'),
            prompt_reject=(),
            title_needles=(),
        )
    from segue.formats.claude.reader import read_lines as read_claude

    return _summarize(
        path,
        provider,
        read_claude,
        prompt_needles=(b'"type":"user"',),
        prompt_reject=(b'"tool_use_id"', b'"isCompactSummary":true', b'"isSidechain":true'),
        title_needles=(b'"type":"custom-title"', b'"type":"ai-title"', b'"type":"summary"'),
    )


def _summarize(
    path: Path,
    provider: Provider,
    read: Reader,
    *,
    prompt_needles: tuple[bytes, ...],
    prompt_reject: tuple[bytes, ...],
    title_needles: tuple[bytes, ...],
) -> SessionSummary:
    size = path.stat().st_size
    head = read(path, head_lines(path))
    if "history_base" in head.meta.extra:
        # A later generation of a rolled-back Codex thread: its history starts in another file.
        from segue.session import read_session

        full = read_session(path, provider)
        head = tail = scanned = full
    else:
        tail = read(path, tail_lines(path))
        candidates = matching_lines(path, prompt_needles, prompt_reject)
        if provider is Provider.CLAUDE:
            extra = matching_lines(path, title_needles)
            scanned = read(path, candidates + extra, follow_chain=False)
        else:
            scanned = read(path, candidates)
    typed = prompts(apply_rollbacks(scanned.items))
    state, reset_at = session_state(tail.items)
    first = _first_prompt(head) or (typed[0].text if typed else None)
    return SessionSummary(
        provider=provider,
        id=head.meta.id,
        path=str(path),
        cwd=head.meta.cwd or tail.meta.cwd,
        title=scanned.meta.title or tail.meta.title,
        first_prompt=_one_line(first),
        model=tail.meta.model or head.meta.model,
        updated=tail.meta.updated or head.meta.updated,
        size=size,
        turns=len(typed),
        state=state,
        reset_at=reset_at,
    )


def _first_prompt(conversation: Conversation) -> str | None:
    for item in prompts(conversation.items):
        if isinstance(item, UserMessage) and item.text.strip():
            return item.text
    return None


def _one_line(text: str | None, limit: int = 200) -> str | None:
    if text is None:
        return None
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"
