"""One JSON-RPC call to the user's own ``codex app-server``, with a hard deadline.

The app-server speaks newline-delimited JSON over stdio (Codex 0.169.0: ``initialize``, the
``initialized`` notification, then requests; replies omit ``"jsonrpc"``; notifications without
an ``id`` come and go and are skipped). The process runs in its own process group and is always
ended: closing stdin ends it within milliseconds, and whatever is left at the deadline is killed.
"""

from __future__ import annotations

import contextlib
import os
import selectors
import signal
import subprocess
import time
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import orjson

__all__ = ["AppServerError", "call", "compact_thread"]

CLIENT_INFO = {"name": "segue", "title": None, "version": "0.1"}


class AppServerError(Exception):
    """The app-server could not be run, did not answer in time, or answered with an error."""


def call(
    argv: Sequence[str],
    method: str,
    params: Any,
    *,
    env: Mapping[str, str],
    timeout: float,
) -> Any:
    """Start ``argv`` (a ``codex … app-server`` command), initialize, call ``method`` and return
    its result. Raises :class:`AppServerError` for every failure; never leaves the process."""
    with _session(argv, env, None, timeout) as session:
        return session.request(2, method, params)


def compact_thread(
    argv: Sequence[str], thread_id: str, *, cwd: str, env: Mapping[str, str], timeout: float
) -> str:
    """Codex's own compaction of a thread (``thread/resume``, ``thread/compact/start``, then
    the ``turn/completed`` notification): the turn's status. Raises :class:`AppServerError`."""
    with _session(argv, env, cwd, timeout) as session:
        session.request(2, "thread/resume", {"threadId": thread_id})
        session.request(3, "thread/compact/start", {"threadId": thread_id})
        while True:
            message = session.next_message()
            if message.get("method") == "turn/completed":
                params = message.get("params")
                turn = params.get("turn") if isinstance(params, dict) else None
                return str(turn.get("status") if isinstance(turn, dict) else None)


@contextlib.contextmanager
def _session(
    argv: Sequence[str], env: Mapping[str, str], cwd: str | None, timeout: float
) -> Iterator[_Session]:
    """A started and initialized app-server, ended afterwards whatever happened."""
    deadline = time.monotonic() + timeout
    try:
        process = subprocess.Popen(
            list(argv),
            cwd=cwd,
            env=dict(env),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
    except OSError as exc:
        raise AppServerError(f"cannot run {argv[0]}: {exc.strerror}") from None
    try:
        session = _Session(process, deadline)
        session.request(1, "initialize", {"clientInfo": CLIENT_INFO, "capabilities": None})
        session.send({"method": "initialized"})
        yield session
    finally:
        _end(process)


class _Session:
    def __init__(self, process: subprocess.Popen[bytes], deadline: float) -> None:
        assert process.stdin is not None and process.stdout is not None
        self.stdin = process.stdin
        self.fd = process.stdout.fileno()
        self.deadline = deadline
        self.buffer = b""
        self.selector = selectors.DefaultSelector()
        self.selector.register(self.fd, selectors.EVENT_READ)
        os.set_blocking(self.fd, False)

    def send(self, message: dict[str, Any]) -> None:
        try:
            self.stdin.write(orjson.dumps(message) + b"\n")
            self.stdin.flush()
        except OSError:
            raise AppServerError("the app-server exited before it answered") from None

    def request(self, request_id: int, method: str, params: Any) -> Any:
        self.send({"id": request_id, "method": method, "params": params})
        while True:
            message = self.next_message()
            if message.get("id") != request_id or "method" in message:
                continue  # a notification, or a server request segue does not serve
            error = message.get("error")
            if error is not None:
                text = error.get("message") if isinstance(error, dict) else error
                raise AppServerError(f"{method}: {text}")
            return message.get("result")

    def next_message(self) -> dict[str, Any]:
        while True:
            line, sep, rest = self.buffer.partition(b"\n")
            if sep:
                self.buffer = rest
                try:
                    message = orjson.loads(line)
                except orjson.JSONDecodeError:
                    continue
                if isinstance(message, dict):
                    return message
                continue
            left = self.deadline - time.monotonic()
            if left <= 0 or not self.selector.select(left):
                raise AppServerError("no answer in time")
            try:
                chunk = os.read(self.fd, 1 << 16)
            except BlockingIOError:
                continue
            if not chunk:
                raise AppServerError("the app-server exited before it answered")
            self.buffer += chunk


def _end(process: subprocess.Popen[bytes]) -> None:
    """Close stdin (the app-server's own way to stop), then kill the group if it lingers."""
    with contextlib.suppress(OSError):
        if process.stdin is not None:
            process.stdin.close()
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(timeout=1.0)
    with contextlib.suppress(OSError):
        os.killpg(process.pid, signal.SIGKILL)  # children the wrapper started, too
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(timeout=1.0)
    if process.stdout is not None:
        process.stdout.close()
