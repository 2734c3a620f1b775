"""Running a provider's CLI headless: one command, no terminal, its output captured, a deadline.

What segue runs this way: the CLIs' own compaction, a provider-written summary, ``segue run``'s
turn. Every failure to run is one line for the user, never an exception.
"""

from __future__ import annotations

import subprocess
from collections.abc import Mapping, Sequence

__all__ = ["HeadlessRun", "run_headless"]


HeadlessRun = subprocess.CompletedProcess[str]


def run_headless(
    argv: Sequence[str], *, cwd: str, env: Mapping[str, str], timeout: float
) -> HeadlessRun | str:
    """Run ``argv`` in ``cwd`` with exactly ``env``; its completed process, or a line saying why
    it did not run (not found, no permission, over ``timeout`` seconds)."""
    try:
        return subprocess.run(
            list(argv),
            cwd=cwd,
            env=dict(env),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return f"{argv[0]} did not finish within {timeout:g} s"
    except OSError as exc:
        return f"{argv[0]} did not run: {exc.strerror or exc}"
