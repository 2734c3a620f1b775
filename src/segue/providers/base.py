"""What segue asks of a provider: the one interface every registry entry implements.

A provider is a coding-agent CLI whose sessions segue reads and writes. Its entry knows where the
CLI keeps its sessions, how to read one into the neutral model, what it can take as a switch
target and how to write it, the model and window the user's CLI would run, and the command that
resumes a session. Everything else in segue is written against this interface; adding a provider
means one package under ``formats/`` and one entry here.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from segue.budget import TargetProfile
from segue.conversation import Conversation, Item, Provider
from segue.formats.atomic import NativeSession
from segue.session_info import SessionInfo

if TYPE_CHECKING:
    import psutil

__all__ = ["Env", "NativeSession", "ProviderEntry", "RunningSession"]

Env = Mapping[str, str]


@dataclass(frozen=True, slots=True)
class RunningSession:
    """What a running CLI process is working on, as its provider tells it."""

    session_id: str | None  # None: the CLI has not chosen one yet
    path: Path | None  # the session file, None while it does not exist (no prompt sent yet)
    env_home: dict[str, str]  # the variables that chose the CLI's home (HOME, ...)
    busy: bool = False  # the CLI itself says a turn is running
    launcher_pid: int | None = None  # a launcher that exits with it (Codex's node wrapper)


class ProviderEntry(ABC):
    """One provider, as the rest of segue sees it."""

    provider: ClassVar[Provider]
    label: ClassVar[str]  # the product's name, for people ("Claude Code")
    command: ClassVar[str]  # the CLI's executable name

    # -- finding ------------------------------------------------------------------------------

    @abstractmethod
    def session_files(self, env: Env) -> Iterator[Path]:
        """Every session file of this provider on the machine (subagent transcripts and other
        files that belong to a session are not listed on their own)."""

    @abstractmethod
    def session_files_for(self, cwd: str, env: Env) -> Iterator[Path]:
        """The files that may be sessions of working directory ``cwd`` (a real path). A superset
        is fine: the listing checks each file's own cwd."""

    @abstractmethod
    def recognises(self, path: Path, head: bytes) -> bool:
        """Whether this provider wrote ``path``, judged by its name and its first bytes."""

    @abstractmethod
    def session_id(self, path: Path) -> str:
        """The session id a file is known by (what ``--resume`` takes)."""

    # -- reading ------------------------------------------------------------------------------

    @abstractmethod
    def read(self, path: Path) -> Conversation:
        """The whole session in the neutral model. Never writes to ``path``."""

    @abstractmethod
    def peek(self, path: Path) -> SessionInfo:
        """A listing row, reading only the parts of the file a row needs."""

    @abstractmethod
    def outline(self, path: Path) -> Iterator[str]:
        """One short line per native record of a file: what a person sees of its layout."""

    # -- as a switch target -------------------------------------------------------------------

    @abstractmethod
    def target_profile(self, env: Env, cwd: str | None = None) -> TargetProfile:
        """The model, window and auto-compaction point of the user's CLI, as configured for a
        session in ``cwd`` (project settings apply there). Raises
        :class:`segue.errors.ConfigError` for a config file it cannot use."""

    @abstractmethod
    def select(self, items: Sequence[Item]) -> list[Item]:
        """The items this provider can take as a target, in order."""

    @abstractmethod
    def prepare(self, items: Sequence[Item], *, cwd: str, env: Env, now: datetime) -> NativeSession:
        """The native session for ``items``, not yet written. Raises
        :class:`segue.errors.SwitchError` when it cannot be written."""

    @abstractmethod
    def publish(self, session: NativeSession, env: Env) -> list[str]:
        """Put a prepared session in place atomically (never over an existing file) and do any
        registration the CLI needs to find it. Returns warnings about steps after the file was
        in place, which never undo it."""

    @abstractmethod
    def resume_argv(self, session_id: str) -> list[str]:
        """The command that continues a session interactively."""

    # -- running agents -----------------------------------------------------------------------

    @abstractmethod
    def running_session(self, process: psutil.Process) -> RunningSession | None:
        """The session a running process of this provider's CLI works on, read from the files
        the process itself uses (its own environment chooses them); None when the process is
        not this provider's agent. May raise :class:`psutil.Error` (a process gone or not
        ours), which the caller treats as "not an agent"."""
