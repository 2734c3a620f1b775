"""A session at a glance: what ``segue sessions`` lists. Pure data."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from segue.conversation import Provider
from segue.transforms.state import SessionState


@dataclass(slots=True)
class SessionSummary:
    provider: Provider
    id: str
    path: str
    cwd: str | None
    title: str | None
    first_prompt: str | None
    model: str | None
    updated: str | None
    size: int
    turns: int
    state: SessionState
    reset_at: datetime | None = None

    @property
    def label(self) -> str:
        """The title, else the first prompt on one line."""
        text = self.title or self.first_prompt or ""
        return " ".join(text.split())

    def to_json(self) -> dict[str, Any]:
        return {
            "provider": self.provider.value,
            "id": self.id,
            "cwd": self.cwd,
            "path": self.path,
            "title": self.title,
            "first_prompt": self.first_prompt,
            "model": self.model,
            "updated": self.updated,
            "size": self.size,
            "turns": self.turns,
            "state": self.state.value,
            "reset_at": self.reset_at.isoformat().replace("+00:00", "Z") if self.reset_at else None,
        }
