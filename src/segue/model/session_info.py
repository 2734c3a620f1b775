"""A session at a glance: one row of ``segue sessions``. Pure data."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum

import msgspec

from segue.model.conversation import Provider

__all__ = ["SessionInfo", "SessionState"]


class SessionState(StrEnum):
    """What a session is doing now (worked out by :func:`segue.transforms.state.session_state`)."""

    IDLE = "idle"  # the last turn finished
    WORKING = "working"  # the last turn has not finished (or the CLI is still running it)
    LIMIT = "limit"  # the last thing that happened is a rate-limit / usage-limit error


class SessionInfo(msgspec.Struct):
    provider: Provider
    id: str
    path: str
    cwd: str | None
    title: str | None
    first_prompt: str | None
    model: str | None
    updated: str | None
    size: int
    turns: int  # typed prompts in the active history, as ``segue show`` numbers them
    state: SessionState
    reset_at: datetime | None = None

    @property
    def label(self) -> str:
        """The title, else the first prompt, on one line."""
        text = self.title or self.first_prompt or ""
        return " ".join(text.split())
