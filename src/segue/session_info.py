"""A session at a glance: one row of ``segue sessions``. Pure data."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from segue.conversation import Provider
from segue.transforms.state import SessionState

__all__ = ["SessionInfo"]


@dataclass(slots=True)
class SessionInfo:
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
