"""Running the ``segue`` command as a user would: a child process with exactly ``env``."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson

__all__ = ["segue", "segue_json"]


def segue(
    args: list[str], env: dict[str, str], *, cwd: Path | None = None, timeout: float = 180
) -> subprocess.CompletedProcess[str]:
    """``python -m segue ARGS``: its exit code and output, stdin closed."""
    return subprocess.run(
        [sys.executable, "-m", "segue", *args],
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=timeout,
    )


def segue_json(
    args: list[str], env: dict[str, str], *, cwd: Path | None = None, timeout: float = 180
) -> dict[str, Any]:
    """The JSON document of a ``segue`` command that must succeed."""
    done = segue(args, env, cwd=cwd, timeout=timeout)
    assert done.returncode == 0, done.stderr + done.stdout
    result: dict[str, Any] = orjson.loads(done.stdout)
    return result
