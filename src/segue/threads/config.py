"""segue's own settings for returning to a provider thread: ``segue.toml`` in the user's config
folder (``$SEGUE_CONFIG`` names another file)::

    fallback = ["claude", "codex", "copilot"]   # the order of targets (segue.running.target)

    [threads]
    max_off_provider_runs = 20   # more runs elsewhere since a provider thread's last run: stale
    max_chained_handoffs = 3     # more handoffs given to it since its last run: stale

A missing file means the defaults; a file that cannot be read, is not a regular file (a FIFO
is never waited on) or holds a wrong value is a
:class:`segue.model.errors.ConfigError` naming the file and the key.
"""

from __future__ import annotations

from collections.abc import Mapping

import msgspec
from msgspec.structs import fields

from segue.model.errors import ConfigError
from segue.running.target import read_settings
from segue.support.places import CONFIG_VARIABLE

__all__ = ["CONFIG_VARIABLE", "StalenessConfig", "load_config"]

SECTION = "threads"


class StalenessConfig(msgspec.Struct, frozen=True):
    """When an earlier provider thread is too far behind to return to."""

    max_off_provider_runs: int = 20
    max_chained_handoffs: int = 3


def load_config(env: Mapping[str, str] | None = None) -> StalenessConfig:
    path, data = read_settings(env)
    section = data.get(SECTION, {})
    if not isinstance(section, dict):
        raise ConfigError(f"{path}: [{SECTION}] must be a table")
    known = {f.name for f in fields(StalenessConfig)}
    values: dict[str, int] = {}
    for key, value in section.items():
        if key not in known:
            raise ConfigError(
                f"{path}: [{SECTION}] {key}: unknown setting ({', '.join(sorted(known))})"
            )
        if type(value) is not int or value < 0:
            raise ConfigError(f"{path}: [{SECTION}] {key}: must be a whole number, 0 or more")
        values[key] = value
    return StalenessConfig(**values)
