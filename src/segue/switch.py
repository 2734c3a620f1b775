"""The switch transaction: one session of an exhausted provider becomes a native session of
another provider, and the source provider is never asked for anything.

read the source (never written) → plan (portable history, what the target can carry, the shrink
ladder) → prepare the target file (everything that can fail, fails here) → publish it atomically
(never over an existing file) → tell the user the exact command that continues it. A dry run
stops after preparing, so a dry run that succeeds means the switch would. A lock per source
session refuses a second switch of the same session while one runs; it is an ``flock``, so a
killed switch leaves nothing that blocks a retry.
"""

from __future__ import annotations

import fcntl
import os
import shlex
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from segue.budget import TargetProfile
from segue.conversation import Compaction, Conversation, Provider
from segue.errors import SessionError, SwitchError, SwitchLocked
from segue.formats.atomic import NativeSession, make_private_dirs
from segue.providers import default_target, entry
from segue.sessions import find_session, read_session
from segue.state import state_dir
from segue.transforms.plan import Plan, make_plan
from segue.transforms.redact import redact_items, redact_own_summaries, scan_items
from segue.transforms.shrink import MARKER_TRIGGER
from segue.transforms.state import SessionState, session_state
from segue.transforms.turns import prompts

__all__ = [
    "Switch",
    "apply_switch",
    "plan_switch",
    "session_lock",
    "state_dir",
    "switch_conversation",
    "switch_session",
]


@dataclass(slots=True)
class Switch:
    """A planned (and, unless it was a dry run, written) switch."""

    source: Conversation
    source_path: Path | None  # None for a conversation that was never a file
    target: Provider
    plan: Plan
    cwd: str
    session_id: str | None = None  # the new session (None for a dry run)
    path: Path | None = None
    warnings: list[str] = field(default_factory=list)  # steps after publishing that failed
    # A dry run keeps what it prepared, and what the source file was when read, so that
    # apply_switch() can publish exactly the plan that was shown if the file has not changed.
    prepared: NativeSession | None = field(default=None, repr=False)
    source_stamp: tuple[int, int] | None = field(default=None, repr=False)
    options: _Options | None = field(default=None, repr=False)

    @property
    def resume_argv(self) -> list[str]:
        assert self.session_id is not None
        return entry(self.target).resume_argv(self.session_id)

    @property
    def resume_command(self) -> str:
        return f"cd -- {shlex.quote(self.cwd)} && {shlex.join(self.resume_argv)}"


@contextmanager
def session_lock(
    provider: Provider, session_id: str, env: Mapping[str, str] | None = None
) -> Iterator[None]:
    """Hold the switch lock of one source session, or raise :class:`SwitchLocked`.

    The lock file is created 0600 in segue's own folders (created 0700), and never through a
    symbolic link: neither the file nor its folder may be one. Only a real switch takes it; a
    dry run creates nothing.
    """
    folder = state_dir(env) / "locks"
    safe_id = "".join(c if c.isalnum() or c in "-_." else "_" for c in session_id)
    name = f"{provider.value}-{safe_id}.lock"
    dir_fd = _private_folder(folder)
    try:
        fd = os.open(
            name, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600, dir_fd=dir_fd
        )
    except OSError as exc:
        raise SwitchError(
            f"{folder / name}: cannot create the switch lock: {exc.strerror}"
        ) from None
    finally:
        os.close(dir_fd)
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


def _private_folder(folder: Path) -> int:
    """An open descriptor of segue's own ``folder``, created 0700 (with its missing parents) and
    never a symbolic link; an existing one is made 0700 too."""
    try:
        make_private_dirs(folder)
        dir_fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError as exc:
        raise SwitchError(
            f"{folder}: cannot use the folder for switch locks: {exc.strerror}"
        ) from None
    try:
        if os.fstat(dir_fd).st_mode & 0o077:
            os.fchmod(dir_fd, 0o700)
    except OSError:
        pass
    return dir_fd


def switch_session(
    ref: str,
    to: Provider | None = None,
    *,
    dry_run: bool = False,
    env: Mapping[str, str] | None = None,
    profile: TargetProfile | None = None,
    now: datetime | None = None,
    need_cwd: bool = False,
    redact_secrets: bool = False,
) -> Switch:
    """Switch the session ``ref`` (an id, a unique id prefix or a path) to provider ``to``
    (default: another provider). ``need_cwd`` refuses before writing when the session's working
    directory does not exist (for a caller that will start the target CLI there);
    ``redact_secrets`` replaces the secrets the plan finds by markers naming their kind."""
    env = dict(os.environ) if env is None else dict(env)
    try:
        provider, path = find_session(ref, env)
    except SessionError as exc:
        raise SwitchError(str(exc)) from None
    to = default_target(provider) if to is None else to
    if provider is to:
        raise SwitchError(f"{path} is already a {to.value} session")
    source_id = entry(provider).session_id(path)
    options = _Options(profile, now, need_cwd, redact_secrets)
    if dry_run:
        stamp = _stamp(path)
        preview = _switch(read_session(path, provider), path, to, True, env, options)
        preview.source_stamp, preview.options = stamp, options
        return preview
    with session_lock(provider, source_id, env):
        source = read_session(path, provider)
        return _switch(source, path, to, False, env, options)


def apply_switch(preview: Switch, env: Mapping[str, str] | None = None) -> Switch:
    """Carry out a dry run: publish exactly the session it prepared (the plan the user saw) if
    the source file is as it was when the dry run read it; otherwise switch it afresh."""
    env = dict(os.environ) if env is None else dict(env)
    path, options = preview.source_path, preview.options or _Options(None, None, False, False)
    if path is None:
        raise SwitchError("only a dry run of a session file can be applied")
    provider = preview.source.meta.provider
    with session_lock(provider, entry(provider).session_id(path), env):
        prepared = preview.prepared
        if prepared is None or preview.source_stamp is None or _stamp(path) != preview.source_stamp:
            source = read_session(path, provider)
            return _switch(source, path, preview.target, False, env, options)
        switch = Switch(preview.source, path, preview.target, preview.plan, preview.cwd)
        switch.warnings = entry(preview.target).publish(prepared, env)
        switch.session_id, switch.path = prepared.session_id, prepared.path
        return switch


def _stamp(path: Path) -> tuple[int, int] | None:
    try:
        info = path.stat()
    except OSError:
        return None
    return info.st_size, info.st_mtime_ns


def switch_conversation(
    conversation: Conversation,
    to: Provider,
    *,
    dry_run: bool = False,
    env: Mapping[str, str] | None = None,
    profile: TargetProfile | None = None,
    now: datetime | None = None,
    redact_secrets: bool = False,
) -> Switch:
    """Switch a conversation held in memory (read from anywhere, or built by a program) to
    provider ``to``. Its ``meta.cwd`` is the working directory of the new session."""
    env = dict(os.environ) if env is None else dict(env)
    source_path = Path(conversation.meta.path) if conversation.meta.path else None
    options = _Options(profile, now, False, redact_secrets)
    return _switch(conversation, source_path, to, dry_run, env, options)


@dataclass(frozen=True, slots=True)
class _Options:
    profile: TargetProfile | None
    now: datetime | None
    need_cwd: bool
    redact_secrets: bool


def _switch(
    source: Conversation,
    path: Path | None,
    to: Provider,
    dry_run: bool,
    env: Mapping[str, str],
    options: _Options,
) -> Switch:
    where = path or source.meta.id
    cwd = _checked_cwd(source.meta.cwd, where, options.need_cwd)
    target = entry(to)
    plan = plan_switch(
        source,
        to,
        profile=options.profile,
        env=env,
        cwd=cwd,
        redact_secrets=options.redact_secrets,
    )
    if not plan.items:
        raise SwitchError(f"{where}: nothing in this session can be carried to {to.value}")
    state, _ = session_state(source.items)
    if state is SessionState.WORKING:
        plan.notes.append(
            "the source's last turn had not finished (its CLI may still be running it); "
            "what is on disk so far is carried"
        )
    native: NativeSession = target.prepare(
        plan.items, cwd=cwd, env=env, now=options.now or datetime.now(UTC)
    )
    switch = Switch(source, path, to, plan, cwd)
    if dry_run:
        switch.prepared = native
        return switch
    switch.warnings = target.publish(native, env)
    switch.session_id, switch.path = native.session_id, native.path
    return switch


def plan_switch(
    conversation: Conversation,
    to: Provider,
    *,
    profile: TargetProfile | None = None,
    env: Mapping[str, str] | None = None,
    cwd: str | None = None,
    redact_secrets: bool = False,
) -> Plan:
    """What a switch of ``conversation`` to ``to`` would carry and lose, for the target as the
    user has it configured for ``cwd`` (default: the conversation's own), or for ``profile``.
    Pure apart from reading the target's config.

    Secrets in what it carries are counted by kind (``plan.secrets``). They are replaced by
    markers in the summaries segue writes itself (the index of dropped turns) always, and
    everywhere with ``redact_secrets``. Only the carried items are scanned: after the shrink
    ladder, a few MB at most, whatever the size of the source."""
    target = entry(to)
    if profile is None:
        where = cwd or conversation.meta.cwd
        profile = target.target_profile(os.environ if env is None else env, where)
    plan = make_plan(conversation, profile, target.select)
    found = scan_items(plan.items)
    plan.secrets = found.counts
    plan.secrets_redacted = redact_secrets
    if redact_secrets:
        plan.items = redact_items(plan.items, found)
    own = [i for i in plan.items if isinstance(i, Compaction) and i.trigger == MARKER_TRIGGER]
    if own:  # its index quotes dropped prompts, maybe cut short: look for theirs too
        quoted = scan_items([*own, *prompts(conversation.items)])
        plan.items = redact_own_summaries(plan.items, quoted, MARKER_TRIGGER)
    return plan


def _checked_cwd(cwd: object, where: object, need_cwd: bool) -> str:
    if not isinstance(cwd, str) or not cwd:
        raise SwitchError(f"{where}: the session records no working directory")
    if not os.path.isabs(cwd) or "\0" in cwd:
        raise SwitchError(
            f"{where}: the session's working directory {cwd!r} is not an absolute path"
        )
    if need_cwd and not os.path.isdir(cwd):
        raise SwitchError(f"{where}: the session's working directory {cwd} does not exist")
    return cwd
