"""What a switch did: the plan it carried out, the session it wrote or resumes, and how it moved
its app thread (a dry run: what it would do, nothing written). What carrying out a dry run
needs is its :class:`~segue.switch.pipeline.Preview`, never part of this result."""

from __future__ import annotations

import shlex
from pathlib import Path

import msgspec

from segue.model.conversation import Conversation, Provider
from segue.providers import entry
from segue.transforms.plan import Plan

__all__ = ["Switch", "ThreadMove"]


class ThreadMove(msgspec.Struct, frozen=True):
    """How a switch moved its app thread (``segue switch --json`` → ``"thread"``)."""

    thread_id: str
    strategy: str
    reason: str
    provider_thread: str | None  # the target's provider thread after the move
    handoff_id: str | None = None
    covers: tuple[int, int] | None = None
    form: str | None = None
    created_by_provider: Provider | None = None  # who wrote a summary handoff (None: segue)
    recorded: bool = True  # False: a dry run, or a store that could not record it


class Switch(msgspec.Struct):
    """A switch as it was made: written or resumed (a dry run: neither, ``dry_run``)."""

    source: Conversation
    source_path: Path | None  # None for a conversation that was never a file
    target: Provider
    plan: Plan
    cwd: str
    session_id: str | None = None  # the session to continue (None for a dry run)
    path: Path | None = None
    # what the user must know: never fatal
    warnings: list[str] = msgspec.field(default_factory=list)
    thread: ThreadMove | None = None
    written: bool = False  # whether it wrote a new session (no_handoff resumes one as it is)
    dry_run: bool = False
    program: str | None = None  # the target's CLI as the user runs it (None: its command)

    @property
    def resume_argv(self) -> list[str]:
        assert self.session_id is not None
        target = entry(self.target)
        return [self.program or target.command, *target.resume_args(self.session_id)]

    @property
    def resume_command(self) -> str:
        return f"cd -- {shlex.quote(self.cwd)} && {shlex.join(self.resume_argv)}"
