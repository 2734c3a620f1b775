"""Where the test bed's pinned CLIs are: ``testbed/node_modules`` in the segue checkout."""

from __future__ import annotations

import os
from pathlib import Path


class CliMissing(RuntimeError):
    """A pinned CLI of the test bed is not installed."""


def repo_root() -> Path:
    """The segue checkout: the nearest parent of this file that holds ``testbed/package.json``."""
    for parent in Path(__file__).resolve().parents:
        if (parent / "testbed" / "package.json").is_file():
            return parent
    raise CliMissing("cannot find the segue checkout (no testbed/package.json above this file)")


def cli_bin(name: str, override_var: str) -> Path:
    """The pinned CLI ``name``: ``$<override_var>`` if set, else ``testbed/node_modules/.bin``."""
    override = os.environ.get(override_var)
    if override:
        path = Path(override)
        if not path.exists():
            raise CliMissing(f"{override_var}={override} does not exist")
        return path
    root = repo_root()
    path = root / "testbed" / "node_modules" / ".bin" / name
    if not path.exists():
        raise CliMissing(
            f"{name} is not installed at {path}; install the pinned CLIs with "
            f"`npm ci --prefix {root / 'testbed'}`"
        )
    return path
