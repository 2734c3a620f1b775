"""tmux, through its command line: the panes of the user's servers, and the few pane commands
the fleet switch needs (respawn, capture, a message on the status line).

Every call names its server by socket path (``tmux -S``) and its pane by id (``%3``), so nothing
depends on which server or client happens to be "current". Finding panes is quiet: no tmux, no
server, a stale socket → no panes. The pane commands raise :class:`TmuxError` (one line).
"""

from __future__ import annotations

import os
import shlex
import shutil
import socket
import stat
import subprocess
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

import msgspec

from segue.model.errors import SegueError

__all__ = [
    "Pane",
    "PaneProcess",
    "TmuxError",
    "capture",
    "default_sockets",
    "display_message",
    "keep_on_exit",
    "list_panes",
    "pane_dead",
    "respawn",
]

TIMEOUT = 5.0  # seconds for one tmux command
_FORMAT = "#{pane_id}\t#{pane_pid}\t#{pane_dead}\t#{session_name}:#{window_index}.#{pane_index}"


class TmuxError(SegueError):
    """A tmux command failed."""


class Pane(msgspec.Struct, frozen=True):
    server: str | None  # the server's socket path; None: tmux's default server
    id: str  # "%3": stable for the pane's life
    target: str  # "session:window.pane", for people


class PaneProcess(msgspec.Struct, frozen=True):
    pane: Pane
    pid: int  # the process tmux started in the pane (a shell, or the command itself)
    dead: bool  # the command exited and the pane remains (remain-on-exit)


def default_sockets(env: Mapping[str, str] | None = None) -> list[str]:
    """The sockets of the user's servers: ``$TMUX_TMPDIR`` (else /tmp) ``/tmux-<uid>/*``, and
    the server of ``$TMUX`` when segue runs inside tmux."""
    env = os.environ if env is None else env
    folder = Path(env.get("TMUX_TMPDIR") or "/tmp") / f"tmux-{os.getuid()}"
    inside = env.get("TMUX", "").split(",", 1)[0]
    found = [inside] if inside else []
    try:
        entries = sorted(folder.iterdir())
    except OSError:
        entries = []
    for entry in entries:
        try:
            if stat.S_ISSOCK(entry.stat().st_mode) and _answers(entry):
                found.append(str(entry))
        except OSError:
            continue
    return found


def _answers(path: Path) -> bool:
    """Whether a server listens on the socket (a dead server's socket file stays behind)."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
        probe.settimeout(1.0)
        try:
            probe.connect(str(path))
        except OSError:
            return False
    return True


def list_panes(sockets: Sequence[str]) -> list[PaneProcess]:
    """Every pane of every server in ``sockets`` (each server once); quietly none for a server
    that does not answer."""
    if shutil.which("tmux") is None:
        return []
    servers: dict[str, str] = {}
    for path in sockets:
        servers.setdefault(os.path.realpath(path), path)
    return [pane for path in servers.values() for pane in _panes_of(path)]


def _panes_of(server: str) -> Iterator[PaneProcess]:
    try:
        out = _run(server, "list-panes", "-a", "-F", _FORMAT)
    except TmuxError:
        return
    for line in out.splitlines():
        parts = line.split("\t", 3)
        if len(parts) != 4 or not parts[1].isdigit():
            continue
        pane_id, pid, dead, target = parts
        yield PaneProcess(Pane(server, pane_id, target), int(pid), dead == "1")


def keep_on_exit(pane: Pane) -> None:
    """Keep ``pane`` open when its command exits (``remain-on-exit on``): it shows how the
    command ended, and :func:`respawn` can start the next one in it."""
    _run(pane.server, "set-option", "-p", "-t", pane.id, "remain-on-exit", "on")


def pane_dead(pane: Pane) -> bool:
    """Whether the command in a kept pane has exited."""
    out = _run(pane.server, "display-message", "-p", "-t", pane.id, "#{pane_dead}")
    return out.strip() == "1"


def respawn(
    pane: Pane, cwd: str, argv: Sequence[str], env: Mapping[str, str] | None = None
) -> None:
    """Run ``argv`` in ``pane`` in place of what runs there (``respawn-pane -k``), in ``cwd``,
    with ``env`` added to the server's environment. ``remain-on-exit`` is set first, so the pane
    stays (showing how the command ended) when it exits. End the old process first
    (:func:`segue.running.agents.end_agent`): ``-k`` only hangs up its terminal and does not
    wait."""
    if not argv:
        raise TmuxError("respawn: no command to run")
    keep_on_exit(pane)
    extra = [arg for name, value in (env or {}).items() for arg in ("-e", f"{name}={value}")]
    _run(pane.server, "respawn-pane", "-k", "-t", pane.id, "-c", cwd, *extra, shlex.join(argv))


def capture(pane: Pane) -> str:
    """The text the pane shows now (no colours; trailing blank lines dropped)."""
    return _run(pane.server, "capture-pane", "-p", "-t", pane.id).rstrip("\n")


def display_message(pane: Pane, text: str) -> None:
    """Show ``text`` on the status line of the clients that show ``pane`` (taken literally,
    not as a tmux format); nothing happens when no client is attached."""
    clients = _run(pane.server, "list-clients", "-t", pane.id, "-F", "#{client_name}")
    for client in clients.splitlines():
        _run(pane.server, "display-message", "-c", client, "-t", pane.id, text.replace("#", "##"))


def _run(server: str | None, *args: str) -> str:
    command = ["tmux", *(("-S", server) if server else ()), *args]
    try:
        done = subprocess.run(
            command, capture_output=True, text=True, timeout=TIMEOUT, stdin=subprocess.DEVNULL
        )
    except FileNotFoundError:
        raise TmuxError("tmux is not installed") from None
    except subprocess.TimeoutExpired:
        raise TmuxError(f"tmux {args[0]} did not answer within {TIMEOUT:g}s") from None
    if done.returncode != 0:
        why = " ".join(done.stderr.split()) or f"exit status {done.returncode}"
        raise TmuxError(f"tmux {args[0]}: {why}")
    return done.stdout
