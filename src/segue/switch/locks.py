"""The locks a switch holds from reading its source to recording what it wrote.

One lock per source session, then one per app thread once the thread is known: two switches of
the same session, or of two sessions of one thread (a fork included), never interleave. A lock
is an ``flock`` on a file in segue's state folder (0700 folders, 0600 files, never through a
symbolic link), so a killed switch leaves nothing that blocks the next one. A second switch waits
for the first a bounded time (``$SEGUE_LOCK_WAIT`` seconds, default 30), then says who holds it.
A dry run takes no lock and creates nothing.
"""

from __future__ import annotations

import fcntl
import os
import sys
import threading
import time
from collections.abc import Iterator, Mapping
from contextlib import AbstractContextManager, ExitStack, contextmanager
from datetime import UTC, datetime
from pathlib import Path

import orjson

from segue.formats.atomic import make_private_dirs
from segue.model.conversation import Provider
from segue.model.errors import SwitchError, SwitchLocked
from segue.support.state_dir import state_dir

__all__ = ["LOCK_WAIT_VARIABLE", "SwitchLocks", "lock_wait", "session_lock", "thread_lock"]

LOCK_WAIT_VARIABLE = "SEGUE_LOCK_WAIT"
DEFAULT_WAIT_S = 30.0
_POLL_S = 0.05


def lock_wait(env: Mapping[str, str]) -> float:
    """How long a switch waits for another one holding its lock (seconds)."""
    text = env.get(LOCK_WAIT_VARIABLE, "").strip()
    try:
        wait = float(text) if text else DEFAULT_WAIT_S
    except ValueError:
        return DEFAULT_WAIT_S
    return wait if wait >= 0 and wait == wait else DEFAULT_WAIT_S


def _safe(name: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in name)


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


def _holder(fd: int) -> str:
    """Who holds a lock, as its holder wrote it."""
    try:
        data = os.pread(fd, 4096, 0)
        info = orjson.loads(data) if data.strip() else None
    except (OSError, orjson.JSONDecodeError):
        info = None
    if isinstance(info, dict):
        pid = info.get("pid", "?")
        command = info.get("command")
        since = info.get("since")
        parts = [f"pid {pid}"]
        if isinstance(command, str) and command:
            parts.append(command[:120])
        if isinstance(since, str):
            parts.append(f"since {since}")
        return ", ".join(parts)
    try:  # an older segue wrote its pid alone
        text = os.pread(fd, 32, 0).decode(errors="replace").strip()
    except OSError:
        text = ""
    return f"pid {text}" if text.isdigit() else "another process"


def _mark(fd: int) -> None:
    command = " ".join(["segue", *sys.argv[1:3]]) if sys.argv else "segue"
    since = datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    record = orjson.dumps({"pid": os.getpid(), "command": command, "since": since})
    try:
        os.ftruncate(fd, 0)
        os.pwrite(fd, record, 0)
    except OSError:
        pass


# Locks this process holds, per Python thread: a command that holds a thread's lock (``segue
# run``) and then switches it takes it again without waiting for itself (only the Python thread
# of a key adds or removes it).
_HELD: set[tuple[int, str]] = set()


@contextmanager
def _flock(
    env: Mapping[str, str] | None, where: str, name: str, what: str, wait: float | None
) -> Iterator[None]:
    env = os.environ if env is None else env
    wait = lock_wait(env) if wait is None else wait
    folder = state_dir(env) / where
    key = (threading.get_ident(), str(folder / name))
    if key in _HELD:
        yield
        return
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
        deadline = time.monotonic() + wait
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    waited = f" (waited {wait:g} s)" if wait else ""
                    raise SwitchLocked(
                        f"a switch of {what} is already running ({_holder(fd)}){waited}; "
                        "try again when it is done"
                    ) from None
                time.sleep(_POLL_S)
        _mark(fd)
        _HELD.add(key)
        yield
    finally:
        _HELD.discard(key)
        os.close(fd)  # closing releases the lock; the file stays, harmless and reusable


def session_lock(
    provider: Provider,
    session_id: str,
    env: Mapping[str, str] | None = None,
    *,
    wait: float | None = None,
) -> AbstractContextManager[None]:
    """Hold the switch lock of one source session, or raise :class:`SwitchLocked` after
    waiting ``wait`` seconds (default: :func:`lock_wait`)."""
    name = f"{provider.value}-{_safe(session_id)}.lock"
    return _flock(env, "locks", name, f"{provider.value} session {session_id}", wait)


def thread_lock(
    thread_id: str, env: Mapping[str, str] | None = None, *, wait: float | None = None
) -> AbstractContextManager[None]:
    """Hold the lock of one app thread (every switch, run and sync that records into it)."""
    return _flock(env, "locks/threads", f"{_safe(thread_id)}.lock", f"thread {thread_id}", wait)


class SwitchLocks(ExitStack):
    """The locks one switch holds, released on leaving it; nothing at all for a dry run."""

    def __init__(self, env: Mapping[str, str], *, dry_run: bool) -> None:
        super().__init__()
        self._env, self._dry_run = env, dry_run

    def session(self, provider: Provider, session_id: str) -> None:
        if not self._dry_run:
            self.enter_context(session_lock(provider, session_id, self._env))

    def thread(self, thread_id: str) -> None:
        if not self._dry_run:  # (a thread's lock this Python thread holds is taken again)
            self.enter_context(thread_lock(thread_id, self._env))
