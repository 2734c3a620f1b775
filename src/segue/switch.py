"""The switch transaction: one session of an exhausted provider becomes a native session of the
other provider, and the source provider is never asked for anything.

read the source (never written) → plan (portable history, what the target can carry, the shrink
ladder) → write the target file atomically (never over an existing file) → tell the user the
exact command that continues it. A lock per source session refuses a second switch of the same
session while one runs; it is an ``flock``, so a killed switch leaves nothing that blocks a retry.
"""

from __future__ import annotations

import fcntl
import os
import shlex
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from platformdirs import user_state_dir

from segue.budget import TargetProfile, target_profile
from segue.conversation import Conversation, Item, Provider
from segue.listing import find_session, session_id_of
from segue.session import SessionError, read_session
from segue.transforms.plan import Plan, Select, plan_switch
from segue.transforms.shrink import Unfittable
from segue.transforms.state import SessionState, session_state


class SwitchError(Exception):
    """The switch cannot be done; nothing was written."""


class SwitchLocked(SwitchError):
    """Another switch of the same session is running."""


@dataclass(slots=True)
class Switch:
    """A planned (and, unless it was a dry run, written) switch."""

    source: Conversation
    source_path: Path
    target: Provider
    plan: Plan
    cwd: str
    session_id: str | None = None  # None for a dry run
    path: Path | None = None

    @property
    def resume_argv(self) -> list[str]:
        assert self.session_id is not None
        if self.target is Provider.CODEX:
            return ["codex", "resume", self.session_id]
        return ["claude", "--resume", self.session_id]

    @property
    def resume_command(self) -> str:
        return f"cd {shlex.quote(self.cwd)} && {shlex.join(self.resume_argv)}"


def state_dir(env: Mapping[str, str] | None = None) -> Path:
    env = os.environ if env is None else env
    override = env.get("SEGUE_STATE_DIR")
    return Path(override) if override else Path(user_state_dir("segue"))


@contextmanager
def session_lock(
    provider: Provider, session_id: str, env: Mapping[str, str] | None = None
) -> Iterator[None]:
    """Hold the switch lock of one source session, or raise :class:`SwitchLocked`."""
    folder = state_dir(env) / "locks"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{provider.value}-{session_id}.lock"
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 32, 0).decode(errors="replace").strip() or "another process"
            raise SwitchLocked(
                f"a switch of {provider.value} session {session_id} is already running "
                f"(pid {holder})"
            ) from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, str(os.getpid()).encode(), 0)
        yield
    finally:
        os.close(fd)  # closing releases the lock; the file stays, harmless and reusable


def switch_session(
    ref: str,
    to: Provider | None = None,
    *,
    dry_run: bool = False,
    env: Mapping[str, str] | None = None,
    profile: TargetProfile | None = None,
    now: datetime | None = None,
) -> Switch:
    """Switch the session ``ref`` (an id, a unique id prefix or a path) to provider ``to``
    (default: the other provider)."""
    env = dict(os.environ) if env is None else dict(env)
    try:
        provider, path = find_session(ref, env)
    except SessionError as exc:
        raise SwitchError(str(exc)) from None
    if to is None:
        to = Provider.CLAUDE if provider is Provider.CODEX else Provider.CODEX
    if provider is to:
        raise SwitchError(f"{path} is already a {to.value} session")
    with session_lock(provider, session_id_of(provider, path), env):
        source = read_session(path, provider)
        return _switch(source, path, to, dry_run=dry_run, env=env, profile=profile, now=now)


def _switch(
    source: Conversation,
    path: Path,
    to: Provider,
    *,
    dry_run: bool,
    env: Mapping[str, str],
    profile: TargetProfile | None,
    now: datetime | None,
) -> Switch:
    cwd = source.meta.cwd
    if not cwd:
        raise SwitchError(f"{path}: the session records no working directory")
    target = profile or target_profile(to, env)
    select, write = _writer(to, env, cwd, now)
    try:
        plan = plan_switch(source, target, select)
    except Unfittable as exc:
        raise SwitchError(f"{path}: {exc}") from None
    if not plan.items:
        raise SwitchError(f"{path}: nothing in this session can be carried to {to.value}")
    state, _ = session_state(source.items)
    if state is SessionState.WORKING:
        plan.notes.append(
            "the source's last turn had not finished (its CLI may still be running it); "
            "what is on disk so far is carried"
        )
    switch = Switch(source, path, to, plan, cwd)
    if dry_run:
        return switch
    switch.path = write(plan.items)
    switch.session_id = _session_id(to, switch.path)
    return switch


Write = Callable[[Sequence[Item]], Path]


def _writer(
    to: Provider, env: Mapping[str, str], cwd: str, now: datetime | None
) -> tuple[Select, Write]:
    """The target's own ``select`` (what it can carry) and a function that writes the file."""
    if to is Provider.CODEX:
        from segue.formats.codex import writer as codex_writer
        from segue.formats.codex.paths import codex_home

        home = codex_home(env)

        def write_codex(items: Sequence[Item]) -> Path:
            return codex_writer.write_session(items, cwd=cwd, codex_home=home, now=now)

        return codex_writer.select, write_codex
    from segue.formats.claude import writer as claude_writer

    def write_claude(items: Sequence[Item]) -> Path:
        return claude_writer.write_session(items, cwd=cwd, env=env, now=now)

    return claude_writer.select, write_claude


def _session_id(to: Provider, path: Path) -> str:
    if to is Provider.CODEX:
        from segue.formats.codex.paths import session_id_from_name

        sid = session_id_from_name(path)
        assert sid is not None
        return sid
    return path.stem
