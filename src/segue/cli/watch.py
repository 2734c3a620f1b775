"""``segue watch`` and ``segue tui``: the work is :mod:`segue.watch` (and :func:`segue.tui.run_tui`,
Textual loaded only there); this module declares their options (once: :class:`WatchOptions`),
asks the questions, prints the events (one JSON object a line with ``--json``), and writes the
systemd unit."""

from __future__ import annotations

import dataclasses
import os
import shutil
import signal
import subprocess
import sys
import termios
import tty
import typing
from dataclasses import dataclass
from datetime import timedelta
from functools import partial
from typing import Annotated

import orjson

from segue.cli.grammar import Option, Options, UsageError
from segue.cli.options import JsonOption, RedactOption, printable
from segue.model.errors import SegueError
from segue.watch import DEFAULT_INTERVAL_S, Mode, WatchEvent, WatchPolicy

__all__ = ["WatchOptions", "tui_command", "watch_command"]

MAX_SECONDS = 10 * 365 * 86400.0  # ten years: beyond it, a time span no clock takes
_DEFAULT = WatchPolicy()


@dataclass(frozen=True)
class WatchOptions:
    """The watch options, declared once: ``segue watch`` and ``segue tui`` take them (the
    grammar reads each field's option), :meth:`policy` makes the
    :class:`~segue.watch.WatchPolicy` of them, and :meth:`argv` writes them back for the
    systemd unit."""

    auto: Annotated[bool, Option("--auto", help="Move without asking.")] = False
    ask: Annotated[bool, Option("--ask", help="Ask once per move (the default).")] = False
    returns: Annotated[
        str, Option("--return", help="Bring moved agents back: auto, ask or never.")
    ] = _DEFAULT.returns.value
    interval: Annotated[float, Option("--interval", help="Seconds between passes.")] = (
        DEFAULT_INTERVAL_S
    )
    quiet: Annotated[
        float, Option("--quiet", help="Seconds within which no session moves twice.")
    ] = _DEFAULT.quiet.total_seconds()
    under: Annotated[
        str | None, Option("--under", help="Only agents working below this directory.")
    ] = _DEFAULT.under
    offline: Annotated[
        bool, Option("--offline", help="Only the session files; ask no usage service.")
    ] = False
    no_relaunch: Annotated[
        bool, Option("--no-relaunch", help="Do not restart the moved agents' panes.")
    ] = False
    redact_secrets: RedactOption = False

    def policy(self) -> WatchPolicy:
        """The policy these options give, or the :class:`UsageError` that says which is
        wrong."""
        if self.auto and self.ask:
            raise UsageError("--auto and --ask exclude each other")
        try:
            back = Mode(self.returns)
        except ValueError:
            raise UsageError(f"--return {self.returns!r}: expected auto, ask or never") from None
        if not 0 <= self.quiet <= MAX_SECONDS:  # (nan too)
            raise UsageError(
                f"--quiet {self.quiet}: give a number of seconds, 0 to {MAX_SECONDS:g}"
            )
        if not 0 < self.interval <= MAX_SECONDS:  # (nan too; the loop checks it the same way)
            raise UsageError(f"--interval {self.interval}: give a number of seconds above 0")
        return WatchPolicy(
            move=Mode.AUTO if self.auto else Mode.ASK,
            returns=back,
            quiet=timedelta(seconds=self.quiet),
            under=self.under,
            remote=not self.offline,
            relaunch=not self.no_relaunch,
            redact_secrets=self.redact_secrets,
        )

    def argv(self) -> list[str]:
        """These options on a command line, every value written (``--ask`` too, the folder
        absolute), so a service run with them watches as this command would."""
        under = None if self.under is None else os.path.abspath(os.path.expanduser(self.under))
        given = dataclasses.replace(self, ask=not self.auto, under=under)
        hints = typing.get_type_hints(WatchOptions, include_extras=True)
        words: list[str] = []
        for field in dataclasses.fields(given):
            value = getattr(given, field.name)
            flag = hints[field.name].__metadata__[0].names[0]
            if value is True:
                words.append(flag)
            elif value is not None and value is not False:
                words += [flag, f"{value:g}" if isinstance(value, float) else str(value)]
        return words


_OPTIONS = WatchOptions()


def _notify(text: str) -> None:
    """The question where the user may be: a bell, every tmux client, the desktop."""
    sys.stderr.write("\a")
    sys.stderr.flush()
    first = text.splitlines()[0] if text else "segue watch"
    run = partial(subprocess.run, capture_output=True, text=True, timeout=5, check=False)
    if shutil.which("tmux"):  # every client of the user's tmux server
        listed = run(["tmux", "list-clients", "-F", "#{client_name}"])
        message = f"segue watch: {first}".replace("#", "##")
        for client in listed.stdout.split() if listed.returncode == 0 else ():
            run(["tmux", "display-message", "-c", client, message])
    if shutil.which("notify-send"):
        run(["notify-send", "segue watch", first])


def _getchar() -> str:
    """One key from the terminal, not echoed: Ctrl-C is ``KeyboardInterrupt``, Ctrl-D (or the
    terminal gone) ``EOFError``."""
    fd = sys.stdin.fileno()
    before = termios.tcgetattr(fd)
    try:
        tty.setraw(fd)
        termios.tcflush(fd, termios.TCIFLUSH)  # keys typed before the question answer nothing
        data = os.read(fd, 32)
    finally:
        termios.tcsetattr(fd, termios.TCSADRAIN, before)
    key = data.decode(errors="replace")[:1]  # (a pasted word: its first letter)
    if key == "\x03":
        raise KeyboardInterrupt
    if key in ("", "\x04"):
        raise EOFError
    return key


def _ask(text: str) -> bool:
    """The preview, then one key: y goes ahead, anything else declines."""
    if sys.stdin is None or not sys.stdin.isatty():
        return False  # no one to ask: declined, and recorded so
    _notify(text)
    sys.stderr.write(printable(text) + "\nGo ahead? [y/N] ")
    sys.stderr.flush()

    ended = False

    def stopped(signum: int, frame: object) -> None:
        nonlocal ended
        ended = True
        raise EOFError

    previous = signal.getsignal(signal.SIGTERM)
    signal.signal(signal.SIGTERM, stopped)  # a SIGTERM while it waits is a no, and the end
    try:
        key = _getchar()
    except (EOFError, KeyboardInterrupt):
        key = ""
    finally:
        signal.signal(signal.SIGTERM, previous)
    sys.stderr.write(printable(key) + "\n")
    if ended:
        os.kill(os.getpid(), signal.SIGTERM)  # now the loop's own handler: it stops after this
    return key.lower() == "y"


def watch_command(
    options: Annotated[WatchOptions, Options()] = _OPTIONS,
    once: Annotated[bool, Option("--once", help="One pass, then exit.")] = False,
    print_unit: Annotated[
        bool, Option("--print-unit", help="Print a systemd user unit that keeps it running.")
    ] = False,
    as_json: JsonOption = False,
) -> None:
    """Watch the usage windows: move the parked agents off a provider the moment it runs out,
    and bring them back when its window resets."""
    from segue.store.location import URL_VARIABLE
    from segue.watch import systemd_unit, unit_environment_file, watch

    policy = options.policy()
    if print_unit:  # every option given, so the service watches as this command would
        argv = [sys.executable, "-m", "segue", "watch", *options.argv()]
        sys.stdout.write(systemd_unit(argv, os.environ))
        sys.stdout.flush()
        # the unit reads the store's address from a file of the user's: said (on stderr, beside
        # the unit sent to a file) while that file is not there yet
        path = unit_environment_file(os.environ)
        if os.environ.get(URL_VARIABLE) and not path.exists():
            sys.stderr.write(
                printable(
                    f"segue: the unit reads {URL_VARIABLE} from {path} (never written into a "
                    f"unit: it may hold a password); put {URL_VARIABLE}=… there, readable only "
                    "by you\n"
                )
            )
        return

    seen: list[WatchEvent] = []

    def emit(event: WatchEvent) -> None:
        seen.append(event)
        if as_json:
            sys.stdout.buffer.write(orjson.dumps(event.to_json()) + b"\n")
        else:
            sys.stdout.write(printable(event.line()) + "\n")
        sys.stdout.flush()

    ask = None if options.auto else _ask
    watch(policy, once=once, interval=options.interval, ask=ask, emit=emit)
    if once and not seen and not as_json:
        sys.stdout.write("nothing new: nothing to move, nothing to bring back\n")


def tui_command(
    options: Annotated[WatchOptions, Options()] = _OPTIONS,
    watching: Annotated[
        bool, Option("--watch", help="Start with the watch loop on (w toggles it).")
    ] = False,
) -> None:
    """The whole fleet on one screen: usage, agents, switch, return, threads and the watch
    loop. ? shows every key."""
    policy = options.policy()
    from segue.tui.screen import NEEDS_A_TERMINAL, screen_out

    screen = screen_out()  # (stderr, else stdout, else stdin's terminal: never a file)
    if screen is None:
        raise SegueError(NEEDS_A_TERMINAL)
    from segue.tui import run_tui

    try:
        run_tui(
            policy=policy,
            interval=options.interval,
            remote=not options.offline,
            start_watching=watching,
            screen=screen.stream,
        )
    finally:
        screen.close()
