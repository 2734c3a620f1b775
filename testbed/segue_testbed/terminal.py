"""A small pseudo-terminal driver for the CLIs' interactive (TUI) modes; standard library only.

:class:`Terminal` starts a command on a fresh pty (its own session and process group, a fixed
window size), reads everything it prints in a thread, answers the few terminal queries a TUI
waits for (cursor position, device attributes, colours), and lets a test ``send`` keys and
``wait_for`` text on the screen. :meth:`Terminal.close` kills the whole process group.

Screen text is the output with escape sequences removed (cursor moves to the right become
spaces); :meth:`Terminal.screen_has` also matches ignoring whitespace, because a TUI may draw a
word in pieces.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
import signal
import struct
import subprocess
import termios
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

# CSI ... final byte, OSC ... BEL/ST, other two-byte escapes, and stray control characters.
_CSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]")
_OSC = re.compile(r"\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)")
_DCS = re.compile(r"\x1b[P^_X][^\x1b]*\x1b\\")
_ESC = re.compile(r"\x1b[@-Z\\-_]|\x1b[()*+#%][0-9A-Za-z]|\x1b[=>78]")
_CTRL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
_RIGHT = re.compile(r"\x1b\[(\d*)C")
_COLUMN = re.compile(r"\x1b\[\d*G")
_POSITION = re.compile(r"\x1b\[\d*(?:;\d*)?[Hf]")


def strip_ansi(text: str) -> str:
    """Printable text of terminal output: moves become spaces or newlines, the rest goes."""
    text = _RIGHT.sub(lambda m: " " * int(m.group(1) or "1"), text)
    text = _COLUMN.sub(" ", text)  # a jump to a column: at least a gap between words
    text = _POSITION.sub(" ", text)  # a jump to a cell: likewise (a TUI draws by cells)
    for pattern in (_OSC, _DCS, _CSI, _ESC):
        text = pattern.sub("", text)
    return _CTRL.sub("", text.replace("\r\n", "\n").replace("\r", "\n"))


def _squash(text: str) -> str:
    return re.sub(r"\s+", "", text)


# Queries a TUI may block on, and the answers of a plain xterm.
_QUERIES: tuple[tuple[bytes, Callable[[Terminal], bytes]], ...] = (
    (b"\x1b[6n", lambda t: b"\x1b[1;1R"),  # cursor position
    (b"\x1b[c", lambda t: b"\x1b[?62;22c"),  # primary device attributes
    (b"\x1b[0c", lambda t: b"\x1b[?62;22c"),
    (b"\x1b]10;?\x07", lambda t: b"\x1b]10;rgb:ffff/ffff/ffff\x07"),  # foreground colour
    (b"\x1b]11;?\x07", lambda t: b"\x1b]11;rgb:0000/0000/0000\x07"),  # background colour
    (b"\x1b]10;?\x1b\\", lambda t: b"\x1b]10;rgb:ffff/ffff/ffff\x1b\\"),
    (b"\x1b]11;?\x1b\\", lambda t: b"\x1b]11;rgb:0000/0000/0000\x1b\\"),
)


PROBE = "zqxj"  # typed to see that a TUI reads keys; no prompt or reply holds it


class Terminal:
    """One command running on a pseudo-terminal."""

    def __init__(
        self,
        argv: Sequence[str],
        *,
        cwd: Path,
        env: Mapping[str, str],
        rows: int = 40,
        cols: int = 120,
        answer_queries: bool = True,
    ) -> None:
        self.argv = list(argv)
        self.answer_queries = answer_queries
        self._raw = bytearray()
        self._cond = threading.Condition()
        self._closed = False
        master, slave = os.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
        self._master = master
        try:
            self.proc = subprocess.Popen(
                self.argv,
                cwd=cwd,
                env={**env, "TERM": "xterm-256color", "COLUMNS": str(cols), "LINES": str(rows)},
                stdin=slave,
                stdout=slave,
                stderr=slave,
                start_new_session=True,
                close_fds=True,
            )
        finally:
            os.close(slave)
        self._scanned = 0
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    # ------------------------------------------------------------------ output

    def _read(self) -> None:
        while True:
            try:
                chunk = os.read(self._master, 65536)
            except OSError:  # EIO once the child side is gone
                chunk = b""
            if not chunk:
                break
            with self._cond:
                self._raw += chunk
                replies = self._answers() if self.answer_queries else b""
                self._cond.notify_all()
            if replies:
                with contextlib.suppress(OSError):
                    os.write(self._master, replies)
        with self._cond:
            self._closed = True
            self._cond.notify_all()

    def _answers(self) -> bytes:
        """Replies to the queries that arrived since the last scan (called with the lock)."""
        longest = max(len(q) for q, _ in _QUERIES)
        start = max(0, self._scanned - longest + 1)
        window = bytes(self._raw[start:])
        found: list[tuple[int, bytes]] = []
        for query, answer in _QUERIES:
            pos = window.find(query)
            while pos != -1:
                if start + pos + len(query) > self._scanned:
                    found.append((pos, answer(self)))
                pos = window.find(query, pos + 1)
        self._scanned = len(self._raw)
        return b"".join(a for _, a in sorted(found))

    @property
    def raw(self) -> bytes:
        with self._cond:
            return bytes(self._raw)

    @property
    def text(self) -> str:
        """Everything printed so far, without escape sequences."""
        return self._text_since(0)

    def tail(self, chars: int = 3000) -> str:
        return self.text[-chars:]

    def mark(self) -> int:
        """A position in the output; ``wait_for(..., since=mark)`` looks only after it."""
        with self._cond:
            return len(self._raw)

    def _text_since(self, since: int) -> str:
        with self._cond:
            raw = bytes(self._raw[since:])
        return strip_ansi(raw.decode("utf-8", "replace"))

    def screen_has(self, needle: str, since: int = 0) -> bool:
        text = self._text_since(since)
        return needle in text or _squash(needle) in _squash(text)

    def screen_has_scattered(self, needle: str, since: int = 0) -> bool:
        """Each character of ``needle`` drawn, in order, with anything in between: typed text is
        echoed key by key, and a TUI may redraw another part of the screen (its status line)
        between two keys, even inside a word."""
        text = iter(_squash(self._text_since(since)))
        return all(char in text for char in _squash(needle))

    # ------------------------------------------------------------------ input and waiting

    def send(self, text: str | bytes) -> None:
        data = text.encode() if isinstance(text, str) else text
        os.write(self._master, data)

    def type(self, text: str, delay: float = 0.01) -> None:
        """Send text one character at a time, the way a person types (no bracketed paste)."""
        for char in text:
            self.send(char)
            time.sleep(delay)

    def input_ready(self, timeout: float = 15.0) -> None:
        """Wait until the TUI takes keys: a probe typed is echoed (typed again each second until
        it is), then erased, and the TUI redraws after the erase. A TUI that has drawn its input
        box may not read keys yet; keys sent then are lost."""
        deadline = time.monotonic() + timeout
        sent = 0
        while True:
            mark = self.mark()
            self.send(PROBE)
            sent += 1
            try:
                self.wait_for(PROBE, 1.0, since=mark)
                break
            except TimeoutError:
                if time.monotonic() > deadline:
                    raise
        erased = self.mark()
        self.send(b"\x7f" * (len(PROBE) * sent))
        self.wait_for(lambda: self.mark() > erased, 10)

    def wait_for(
        self,
        what: str | Callable[[], bool],
        timeout: float = 30.0,
        *,
        since: int = 0,
    ) -> None:
        """Wait until the screen shows ``what`` (or the predicate holds); else TimeoutError with
        the screen's tail."""
        check: Callable[[], bool] = (
            (lambda: self.screen_has(what, since)) if isinstance(what, str) else what
        )
        deadline = time.monotonic() + timeout
        while not check():
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(
                    f"waited {timeout}s for {what!r}; exit={self.proc.poll()}; "
                    f"screen tail:\n{self.tail()}"
                )
            with self._cond:
                self._cond.wait(min(left, 0.1))

    def wait_any(self, needles: Sequence[str], timeout: float = 30.0, since: int = 0) -> str:
        """Wait for the first of several texts; return the one seen."""
        seen: list[str] = []

        def check() -> bool:
            seen[:] = [n for n in needles if self.screen_has(n, since)]
            return bool(seen)

        self.wait_for(check, timeout)
        return seen[0]

    # ------------------------------------------------------------------ teardown

    def close(self) -> None:
        """Kill the whole process group and release the pty."""
        if self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.proc.pid, signal.SIGKILL)
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.proc.pid, signal.SIGKILL)  # grandchildren that outlived the leader
        self._reader.join(timeout=5)  # the reader ends on EIO once no one holds the pty
        with contextlib.suppress(OSError):
            os.close(self._master)

    def __enter__(self) -> Terminal:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
