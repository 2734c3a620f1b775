"""``segue hook PROVIDER ARGS…``: what the CLIs' hooks run after each turn. Claude Code waits
for its ``Stop`` hook, so this path loads no more than the work needs: not the command line's
other commands (the ``segue`` command comes here straight from :mod:`segue.cli.entry`)."""

from __future__ import annotations

import contextlib
import os
import sys

from segue.rewind import handle_hook
from segue.support import collector

__all__ = ["run_hook"]


def run_hook(args: list[str]) -> None:
    """``segue hook PROVIDER ARGS…``, what the CLIs' hooks run (stdin: Claude Code's input):
    quiet on stdout (Claude Code reads a hook's output) and always exit 0."""
    collector.one_command()

    stdin = b""
    if "--payload" in args:  # the input, given by a hook that went on in the background
        at = args.index("--payload")
        stdin = os.fsencode(args[at + 1] if at + 1 < len(args) else "")
        args = args[:at] + args[at + 2 :]
    elif sys.stdin is not None and not sys.stdin.isatty():
        with contextlib.suppress(OSError, ValueError):
            stdin = sys.stdin.buffer.read(1 << 20)
    handle_hook(args[0] if args else "", args[1:], stdin)
