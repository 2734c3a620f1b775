"""Where a CLI keeps its files: a folder an environment variable names, else one in the home."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from segue.model.errors import ConfigError


def cli_home(env: Mapping[str, str] | None, variable: str, default: str) -> Path:
    """``$<variable>`` if set, else ``<$HOME>/<default>`` (``env`` defaults to os.environ)."""
    env = os.environ if env is None else env
    configured = env.get(variable)
    if configured:
        try:
            return Path(configured).expanduser()
        except RuntimeError:  # ~user of a user that does not exist: taken as written
            return Path(configured)
    home = env.get("HOME")
    if home:
        return Path(home) / default
    try:
        return Path.home() / default
    except (RuntimeError, KeyError):  # no HOME, and a user the system does not know
        raise ConfigError(
            f"no home folder: HOME is not set and this user has none (set HOME or ${variable})"
        ) from None
