"""``segue watch``'s loop: a pass every ``--interval`` seconds (one with ``--once``), at once
when a CLI's hook notes a turn a usage limit ended, until SIGINT or SIGTERM (between passes,
never in the middle of a switch); one watch a store."""

from __future__ import annotations

import fcntl
import hashlib
import os
import signal
import socket
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from datetime import UTC, datetime

from segue.model.errors import SegueError
from segue.providers.sessions import remembered_peeks
from segue.store.location import database_url
from segue.support.state_dir import state_dir
from segue.watch.passes import Ask, watch_pass
from segue.watch.policy import DEFAULT_INTERVAL_S, WatchEvent, WatchPolicy

__all__ = ["watch"]

SIGNAL_POLL_S = 1.0  # how often the loop looks at the hooks' signals between passes


def watch(
    policy: WatchPolicy,
    *,
    once: bool = False,
    interval: float = DEFAULT_INTERVAL_S,
    env: Mapping[str, str] | None = None,
    ask: Ask | None = None,
    emit: Callable[[WatchEvent], None] | None = None,
    stop: threading.Event | None = None,
) -> int:
    """``segue watch``: passes every ``interval`` seconds (one with ``once``) until SIGINT or
    SIGTERM (or ``stop``); each event goes to ``emit``. Returns how many passes ran."""
    env = dict(os.environ) if env is None else dict(env)
    stop = stop or threading.Event()
    if not 0 < interval < float("inf"):  # (nan too)
        raise SegueError(f"--interval {interval}: give a number of seconds above 0")

    signals = state_dir(env) / "signals.jsonl"  # what the CLIs' hooks note (segue hooks install)

    def stamp() -> tuple[int, int] | None:
        try:
            info = signals.stat()
        except OSError:
            return None
        return info.st_size, info.st_mtime_ns

    passes = 0
    # the loop keeps the listing for its next start (listing-cache.json); one pass keeps nothing
    keep = remembered_peeks(env, persist=not once)
    with _stop_on_signals(stop), _only_watch(env, once=once), keep:
        last = stamp()
        while not stop.is_set():
            try:
                happened = watch_pass(policy, env=env, ask=ask)
            except SegueError as exc:
                if once:
                    raise
                # a pass that cannot be made (the store locked, a disk full): said, and the
                # loop goes on to the next one
                happened = [
                    WatchEvent("error", datetime.now(UTC), None, " ".join(str(exc).split()))
                ]
            for event in happened:
                if emit is not None:
                    emit(event)
            passes += 1
            if once:
                break
            deadline = time.monotonic() + interval
            while not stop.is_set() and (left := deadline - time.monotonic()) > 0:
                stop.wait(min(SIGNAL_POLL_S, left))
                if stamp() != last:  # a hook said a turn was ended by a limit: look now
                    last = stamp()
                    break
    return passes


@contextmanager
def _stop_on_signals(stop: threading.Event) -> Iterator[None]:
    """SIGINT and SIGTERM end the loop between passes (a pass in progress finishes)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {s: signal.signal(s, lambda *_: stop.set()) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for s, h in previous.items():
            signal.signal(s, h)


@contextmanager
def _only_watch(env: Mapping[str, str], *, once: bool) -> Iterator[None]:
    """One watch per store: a lock in segue's state folder, named after the store (a single
    pass where that folder does not exist yet takes none: no watch can be running)."""
    folder = state_dir(env)
    if once and not folder.is_dir():
        yield
        return
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    key = hashlib.blake2b(str(database_url(env=env)).encode(), digest_size=8).hexdigest()
    path = folder / f"watch-{key}.lock"
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW, 0o600)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 200, 0).decode("utf-8", "replace").strip() or "another process"
            raise SegueError(f"segue watch is already running on this store ({holder})") from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"pid {os.getpid()} on {socket.gethostname()}".encode(), 0)
        yield
    finally:
        os.close(fd)
