"""The ``segue`` command's entry (the console script and ``python -m segue``): a CLI's hook
goes straight to :func:`segue.cli.hook.run_hook`, without loading the commands (Claude Code
waits for its ``Stop`` hook after every turn); every other command goes to
:func:`segue.cli.app.main`."""

from __future__ import annotations

import contextlib
import sys

from segue.support.quick_exit import exit_now

__all__ = ["main"]


def main(argv: list[str] | None = None) -> None:
    """The process's command line (``argv`` None: ``sys.argv``, and the process ends here,
    without the interpreter's teardown; see :mod:`segue.support.quick_exit`)."""
    args = sys.argv[1:] if argv is None else argv
    if argv is None:
        _tolerant_streams()
    try:
        if args[:1] == ["hook"]:  # what the CLIs' hooks run: never an error, never a word on stdout
            from segue.cli.hook import run_hook

            run_hook(args[1:])
        else:
            from segue.cli.app import main as run_command

            run_command(args)
    except SystemExit as exc:
        code = exc.code
    else:
        code = 0
    if argv is not None or args[:1] in (["watch"], ["tui"]):
        if code:
            raise SystemExit(code)
        return
    exit_now(code)


def _tolerant_streams() -> None:
    """A character the terminal's encoding cannot show (a title's "…" under
    ``PYTHONIOENCODING=ascii``, a file name's undecodable byte) is written as an escape, never
    an error that loses the rest of the output."""
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None and getattr(stream, "errors", None) == "strict":
            with contextlib.suppress(OSError, ValueError):  # closed: nothing to say on it
                reconfigure(errors="backslashreplace")
