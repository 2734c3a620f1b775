"""Copilot CLI as a switch target: the model it runs and the window it holds, as the user has it.

The model: ``$COPILOT_MODEL``, else ``model`` in ``settings.json`` (then ``config.json``, where
older versions kept it) of its home; else the CLI's own default, which GitHub's service picks.
The window: ``$COPILOT_PROVIDER_MAX_PROMPT_TOKENS`` (its BYOK override of the catalog); else the
prompt limit the CLI itself recorded for that model in a session of this home (a compaction's or
a truncation's ``tokenLimit``); else a conservative default. Copilot's model catalog is served by
GitHub at run time, so no table of it is copied here.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import orjson

from segue.formats.copilot.paths import copilot_home, iter_session_files
from segue.formats.files import read_config
from segue.model.conversation import Provider
from segue.model.errors import ConfigError
from segue.transforms.budget import TargetProfile
from segue.transforms.tokens import CLAUDE_PUBLISHED, O200K

DEFAULT_PROMPT_TOKENS = 128_000  # the smallest prompt limit Copilot serves its chat models with
AUTO_COMPACT_SHARE = 0.8  # Copilot compacts in the background at 80% of the prompt limit
_LIMIT_RE = re.compile(rb'"tokenLimit":\s*(\d+)')
_SCAN_FILES = 20  # the newest sessions looked in for a recorded limit


def _json_with_comments(path: Path) -> dict[str, Any]:
    raw = read_config(path, "Copilot settings")
    if raw is None:
        return {}
    text = b"\n".join(line for line in raw.splitlines() if not line.lstrip().startswith(b"//"))
    try:
        value = orjson.loads(text or b"{}")
    except orjson.JSONDecodeError as exc:
        raise ConfigError(f"{path}: not valid JSON: {exc}") from None
    if not isinstance(value, dict):
        raise ConfigError(f"{path}: not a JSON object")
    return value


def configured_model(env: Mapping[str, str]) -> tuple[str | None, str]:
    """The model the user's Copilot CLI runs, and where that was read."""
    model = env.get("COPILOT_MODEL", "").strip()
    if model:
        return model, "COPILOT_MODEL"
    home = copilot_home(env)
    for name in ("settings.json", "config.json"):
        value = _json_with_comments(home / name).get("model")
        if value is not None and not isinstance(value, str):
            raise ConfigError(f"{home / name}: `model` must be a string")
        if value and value.strip():
            return value.strip(), str(home / name)
    return None, "the CLI's default"


def recorded_limit(env: Mapping[str, str]) -> int | None:
    """The newest prompt limit the CLI recorded in a session of this home."""
    files = []
    for path in iter_session_files(env):
        try:
            files.append((os.stat(path).st_mtime, path))
        except OSError:
            continue
    for _, path in sorted(files, reverse=True)[:_SCAN_FILES]:
        try:
            found = _LIMIT_RE.findall(path.read_bytes())
        except OSError:
            continue
        if found:
            return int(found[-1])
    return None


def _positive(value: str) -> int | None:
    try:
        number = int(value.strip())
    except ValueError:
        return None
    return number if number > 0 else None


def target_profile(env: Mapping[str, str], cwd: str | None = None) -> TargetProfile:
    """Copilot CLI as configured for ``env`` (its settings are not per project)."""
    model, model_source = configured_model(env)
    override = _positive(env.get("COPILOT_PROVIDER_MAX_PROMPT_TOKENS", ""))
    if override is not None:
        window, source = override, "COPILOT_PROVIDER_MAX_PROMPT_TOKENS"
    elif (recorded := recorded_limit(env)) is not None:
        window, source = recorded, "the limit the CLI recorded in its sessions"
    else:
        window, source = (
            DEFAULT_PROMPT_TOKENS,
            "a conservative default (set COPILOT_PROVIDER_MAX_PROMPT_TOKENS)",
        )
    claude = (model or "").lower().startswith("claude")
    return TargetProfile(
        Provider("copilot"),
        model,
        window,
        int(window * AUTO_COMPACT_SHARE),
        f"model from {model_source}; window {window:,} from {source}; compacts at 80%",
        chars_per_token=4.0,
        tokenizer=CLAUDE_PUBLISHED if claude else O200K,
    )
