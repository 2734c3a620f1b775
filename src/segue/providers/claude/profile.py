"""Claude Code as a switch target: its model and context limits as the user has them configured."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from pathlib import Path

from segue.budget import TargetProfile
from segue.conversation import Provider
from segue.errors import ConfigError
from segue.formats.claude.paths import config_dir
from segue.formats.files import read_config

# Claude Code 2.1.328 (research claude-format.md §3).
CLAUDE_DEFAULT_MODEL = "claude-opus-5-5"
CLAUDE_1M_WINDOW = 1_000_000
CLAUDE_200K_WINDOW = 200_000
CLAUDE_MAX_OUTPUT_CAP = 20_000  # effective = window - min(maxOutputTokens, 20000)
CLAUDE_AUTOCOMPACT_MARGIN = 13_000  # threshold = effective - 13000
# Models whose own window the research lists as 200k (a `[1m]` suffix makes them 1M).
CLAUDE_200K_MODELS = ("claude-sonnet-4-5", "claude-opus-4-6", "claude-haiku-4-5")
_CLAUDE_5_5 = re.compile(r"^claude-[a-z]+-5-5(?:-\d{8})?$")
_CLAUDE_1M_SUFFIX = re.compile(r"\[1m\]\s*$", re.IGNORECASE)
_TRUTHY = frozenset({"1", "true", "yes", "on"})


def claude_auto_compact_threshold(window: int, pct_override: float | None = None) -> int:
    """Claude Code's auto-compact threshold for a compaction window (research §3)."""
    effective = window - CLAUDE_MAX_OUTPUT_CAP
    threshold = effective - CLAUDE_AUTOCOMPACT_MARGIN
    if pct_override is not None and 0 < pct_override <= 100:
        return min(math.floor(effective * pct_override / 100), threshold)
    return threshold


def target_profile(env: Mapping[str, str]) -> TargetProfile:
    """Claude Code as the user has it configured: ``ANTHROPIC_MODEL``, ``settings.json``, the
    1M / 200k window rules and the auto-compaction variables (research claude-format.md §3)."""
    notes: list[str] = []
    settings_path = config_dir(env) / "settings.json"
    model = env.get("ANTHROPIC_MODEL") or None
    if model is not None:
        notes.append(f"ANTHROPIC_MODEL: model {model}")
    else:
        model = _settings_model(settings_path)
        if model is not None:
            notes.append(f"{settings_path}: model {model}")
    if model is None or model.strip().lower() == "default":
        model = CLAUDE_DEFAULT_MODEL
        notes.append(f"Claude Code default model {model}")

    base = _CLAUDE_1M_SUFFIX.sub("", model).strip()
    disable_1m = env.get("CLAUDE_CODE_DISABLE_1M_CONTEXT", "").strip().lower() in _TRUTHY
    if _CLAUDE_1M_SUFFIX.search(model) or _CLAUDE_5_5.match(base):
        if disable_1m:
            window = CLAUDE_200K_WINDOW
            notes.append("window 200k (CLAUDE_CODE_DISABLE_1M_CONTEXT)")
        else:
            window = CLAUDE_1M_WINDOW
            why = "[1m] suffix" if _CLAUDE_1M_SUFFIX.search(model) else "5-5 default"
            notes.append(f"window 1M ({why})")
    else:
        window = CLAUDE_200K_WINDOW
        known = base.startswith(CLAUDE_200K_MODELS)
        notes.append("window 200k (model's own)" if known else "window 200k (assumed)")

    compact_window = window
    raw_window = env.get("CLAUDE_CODE_AUTO_COMPACT_WINDOW")
    if raw_window:
        parsed = _positive_int(raw_window)
        if parsed is None:
            notes.append(f"ignored CLAUDE_CODE_AUTO_COMPACT_WINDOW={raw_window!r}")
        else:
            compact_window = min(parsed, window)
            notes.append(f"CLAUDE_CODE_AUTO_COMPACT_WINDOW {compact_window}")

    pct: float | None = None
    raw_pct = env.get("CLAUDE_AUTOCOMPACT_PCT_OVERRIDE")
    if raw_pct:
        try:
            pct = float(raw_pct)
        except ValueError:
            pct = None
        if pct is None or not 0 < pct <= 100:
            notes.append(f"ignored CLAUDE_AUTOCOMPACT_PCT_OVERRIDE={raw_pct!r}")
            pct = None
        else:
            notes.append(f"CLAUDE_AUTOCOMPACT_PCT_OVERRIDE {raw_pct}")

    threshold = claude_auto_compact_threshold(compact_window, pct)
    formula = "min(floor(effective*P/100), effective - 13000)" if pct else "effective - 13000"
    notes.append(f"threshold {formula}, effective = window - 20000 (Claude Code 2.1.328)")
    return TargetProfile(Provider.CLAUDE, model, window, threshold, "; ".join(notes))


def _settings_model(path: Path) -> str | None:
    raw = read_config(path, "Claude Code settings")
    if raw is None:
        return None
    try:
        data = json.loads(raw)
    except ValueError as exc:
        raise ConfigError(f"{path}: not valid JSON Claude Code settings: {exc}") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: Claude Code settings must be a JSON object")
    model = data.get("model")
    if model is None:
        return None
    if not isinstance(model, str):
        raise ConfigError(f"{path}: `model` must be a string")
    return model or None


def _positive_int(text: str) -> int | None:
    try:
        value = int(text.strip())
    except ValueError:
        return None
    return value if value > 0 else None
