"""Read a session file of either provider into a :class:`Conversation`."""

from __future__ import annotations

from pathlib import Path

from segue.conversation import Conversation, Provider


class SessionError(Exception):
    """A session could not be found or read."""


def detect_provider(path: Path) -> Provider:
    """Which CLI wrote a session file: by its name, else by its first record."""
    if path.name.startswith("rollout-"):
        return Provider.CODEX
    try:
        with path.open("rb") as f:
            head = f.read(4096)
    except OSError as exc:
        raise SessionError(f"{path}: cannot read: {exc.strerror}") from exc
    if b'"type":"session_meta"' in head or b'"type": "session_meta"' in head:
        return Provider.CODEX
    return Provider.CLAUDE


def read_session(path: Path, provider: Provider | None = None) -> Conversation:
    """Read a session file. Never writes to it."""
    if not path.is_file():
        raise SessionError(f"{path}: no such session file")
    provider = provider or detect_provider(path)
    if provider is Provider.CODEX:
        from segue.formats.codex.reader import read_session as read_codex

        return read_codex(path)
    from segue.formats.claude.reader import read_session as read_claude

    return read_claude(path)
