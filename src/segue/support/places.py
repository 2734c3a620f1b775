"""Where segue keeps its own files: its data (the store), its state (locks, caches, the journal
of switches not yet recorded) and its configuration.

Each has a variable that names it outright (``$SEGUE_DATA_DIR``, ``$SEGUE_STATE_DIR``), else the
platform's place for it, worked out from the environment segue was given: its ``HOME`` and XDG
variables, not this process's own (a caller that passes another environment gets that user's
folders, never this one's).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Literal

__all__ = ["CONFIG_VARIABLE", "DATA_VARIABLE", "Kind", "config_file", "data_dir", "user_folder"]

DATA_VARIABLE = "SEGUE_DATA_DIR"

Kind = Literal["data", "state", "config"]

_XDG = {
    "data": ("XDG_DATA_HOME", ".local/share"),
    "state": ("XDG_STATE_HOME", ".local/state"),
    "config": ("XDG_CONFIG_HOME", ".config"),
}


def user_folder(kind: Kind, env: Mapping[str, str] | None = None) -> Path:
    """segue's folder of this kind for the user ``env`` describes (default: this process's)."""
    env = os.environ if env is None else env
    home = env.get("HOME")
    if home and os.path.isabs(home) and sys.platform != "win32":
        if sys.platform == "darwin":
            return Path(home) / "Library" / "Application Support" / "segue"
        variable, default = _XDG[kind]
        base = env.get(variable)
        if not base or not os.path.isabs(base):
            base = os.path.join(home, default)
        return Path(base) / "segue"
    # no usable HOME (or Windows): the platform's own place, as platformdirs knows it (imported
    # only here: it costs every command a few milliseconds to load)
    import platformdirs

    return Path(getattr(platformdirs, f"user_{kind}_dir")("segue"))


def data_dir(env: Mapping[str, str] | None = None) -> Path:
    """segue's data folder: ``$SEGUE_DATA_DIR`` or the platform's user data folder."""
    env = os.environ if env is None else env
    override = env.get(DATA_VARIABLE)
    return Path(override) if override else user_folder("data", env)


CONFIG_VARIABLE = "SEGUE_CONFIG"


def config_file(env: Mapping[str, str] | None = None) -> Path:
    """segue's settings, ``segue.toml``: ``$SEGUE_CONFIG`` or in the user's config folder."""
    env = os.environ if env is None else env
    override = env.get(CONFIG_VARIABLE)
    return Path(override) if override else user_folder("config", env) / "segue.toml"
