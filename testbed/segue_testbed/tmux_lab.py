"""A private tmux server for tests: real CLIs in panes, screens read back, everything killed at
the end.

:class:`TmuxLab` starts ``tmux -L <unique name> -f /dev/null`` (no user config, its own socket),
opens a window per command with exactly the environment given (``env -i``), waits for text on a
pane's screen, types into it, and on :meth:`close` kills the server and every process that ran
in its panes (a CLI that ignores the hang-up included).
"""

from __future__ import annotations

import contextlib
import shlex
import subprocess
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import psutil

from segue_testbed.terminal import PROBE

__all__ = ["TmuxLab"]


class TmuxLab:
    def __init__(self, *, cols: int = 120, rows: int = 40) -> None:
        self.name = f"segue-test-{uuid.uuid4().hex[:12]}"
        self.cols, self.rows = cols, rows
        self._started = False
        self._procs: dict[int, psutil.Process] = {}

    def tmux(self, *args: str, check: bool = True) -> str:
        done = subprocess.run(
            ["tmux", "-L", self.name, "-f", "/dev/null", *args],
            capture_output=True,
            text=True,
            timeout=10,
            stdin=subprocess.DEVNULL,
        )
        if check and done.returncode != 0:
            raise RuntimeError(f"tmux {' '.join(args)}: {done.stderr.strip()}")
        return done.stdout

    @property
    def socket(self) -> str:
        return self.tmux("display-message", "-p", "#{socket_path}").strip()

    def window(
        self,
        name: str,
        argv: Sequence[str],
        *,
        cwd: Path,
        env: Mapping[str, str],
        via_shell: bool = False,
    ) -> str:
        """Run ``argv`` (with only ``env``) in a new window; the pane id. ``via_shell`` keeps a
        shell as the pane's process, the CLI its child (as when a person types the command)."""
        command = shlex.join(["env", "-i", *(f"{k}={v}" for k, v in env.items()), *argv])
        if via_shell:
            command = f"{command}; exec sleep 600"
        size = ["-x", str(self.cols), "-y", str(self.rows)]
        fmt = ["-P", "-F", "#{pane_id}"]
        if not self._started:
            out = self.tmux("new-session", "-d", "-s", "lab", "-n", name, *size, *fmt,
                            "-c", str(cwd), command)  # fmt: skip
            self._started = True
        else:
            out = self.tmux("new-window", "-d", "-t", "lab", "-n", name, *fmt, "-c", str(cwd),
                            command)  # fmt: skip
        pane = out.strip()
        self._remember()
        return pane

    def screen(self, pane: str) -> str:
        return self.tmux("capture-pane", "-p", "-t", pane, check=False)

    def wait_for(self, pane: str, what: str | Callable[[], bool], timeout: float = 30.0) -> None:
        """Wait until ``pane`` shows ``what`` (or the predicate holds); TimeoutError with the
        screen otherwise."""
        deadline = time.monotonic() + timeout
        while True:
            self._remember()
            ok = what() if callable(what) else what in self.screen(pane)
            if ok:
                return
            if time.monotonic() > deadline:
                raise TimeoutError(f"waited {timeout}s for {what!r}; screen:\n{self.screen(pane)}")
            time.sleep(0.1)

    def input_ready(self, pane: str, timeout: float = 15.0) -> None:
        """Wait until the TUI in ``pane`` takes keys: a probe typed is echoed (typed again each
        second until it is), then erased, and the screen shows it gone. A TUI that has drawn
        its input box may not read keys yet; keys sent then are lost."""
        deadline = time.monotonic() + timeout
        before = self.screen(pane).count(PROBE)
        sent = 0
        while True:
            self.tmux("send-keys", "-t", pane, "-l", PROBE)
            sent += 1
            try:
                self.wait_for(pane, lambda: self.screen(pane).count(PROBE) > before, 1.0)
                break
            except TimeoutError:
                if time.monotonic() > deadline:
                    raise
        self.tmux("send-keys", "-t", pane, *["BSpace"] * (len(PROBE) * sent))
        self.wait_for(pane, lambda: self.screen(pane).count(PROBE) <= before, 10)

    def type(self, pane: str, text: str) -> None:
        """Type ``text`` and Enter, once the keys are echoed."""
        self.tmux("send-keys", "-t", pane, "-l", text)
        self.wait_for(pane, text[-8:], 10)
        time.sleep(0.2)
        self.tmux("send-keys", "-t", pane, "Enter")

    def pane_pids(self) -> dict[str, int]:
        out = self.tmux("list-panes", "-a", "-F", "#{pane_id} #{pane_pid}", check=False)
        return {p: int(pid) for p, pid in (line.split() for line in out.splitlines())}

    def _remember(self) -> None:
        """Note every process in the panes now, to kill them at the end even if re-parented."""
        for pid in self.pane_pids().values():
            with contextlib.suppress(psutil.Error):
                root = psutil.Process(pid)
                for p in [root, *root.children(recursive=True)]:
                    self._procs.setdefault(p.pid, p)

    def close(self) -> None:
        if self._started:
            socket = None
            with contextlib.suppress(Exception):
                self._remember()
                socket = self.socket
            self.tmux("kill-server", check=False)
            if socket:  # tmux 3.3 leaves the socket file behind
                Path(socket).unlink(missing_ok=True)
        for process in self._procs.values():  # psutil checks the pid was not reused
            with contextlib.suppress(psutil.Error):
                process.kill()

    def __enter__(self) -> TmuxLab:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
