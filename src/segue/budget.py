"""Target model profiles and size estimates.

A :class:`TargetProfile` says how much history the target CLI can take: its model, its context
window, the point where it would auto-compact, and the budget a projection must stay under. The
same profile decides the plan and is stamped into the result, so planning and writing agree.

Sizes are estimated in characters of model-visible text; tokens are characters divided by
:data:`CHARS_PER_TOKEN`, a deliberately low ratio (real English and code average 3.5–4), so an
estimate errs on the side of "does not fit".
"""

from __future__ import annotations

import json
import math
import os
import re
import tomllib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from segue.conversation import (
    AssistantMessage,
    Compaction,
    Item,
    Provider,
    Reasoning,
    ToolCall,
    ToolResult,
    UserMessage,
)
from segue.formats.claude.paths import config_dir
from segue.formats.codex.paths import codex_home

CHARS_PER_TOKEN = 2.5
IMAGE_CHARS = 4_000  # an image costs about 1,600 tokens whatever its base64 length
RESERVE_FRACTION = 0.10  # system prompt, tool schemas, environment context the CLI adds


@dataclass(frozen=True, slots=True)
class TargetProfile:
    provider: Provider
    model: str | None  # the model the target CLI will run, as configured (None: its default)
    context_window: int  # tokens
    auto_compact_tokens: int  # the target compacts on its own once history reaches this
    source: str  # where the figures came from, for the report

    @property
    def budget_tokens(self) -> int:
        """What a projection may use: below the auto-compact point, less a reserve."""
        return int(self.auto_compact_tokens * (1 - RESERVE_FRACTION))

    @property
    def budget_chars(self) -> int:
        return int(self.budget_tokens * CHARS_PER_TOKEN)


def _tool_call_chars(item: ToolCall) -> int:
    value = item.input
    body = value if isinstance(value, str) else orjson.dumps(value)
    return len(item.name) + len(body)


_SIZERS: dict[type, Callable[[Any], int]] = {
    UserMessage: lambda i: len(i.text) + IMAGE_CHARS * len(i.images),
    AssistantMessage: lambda i: len(i.text),
    ToolCall: _tool_call_chars,
    ToolResult: lambda i: len(i.output) + IMAGE_CHARS * len(i.images),
    Compaction: lambda i: len(i.summary),
    Reasoning: lambda i: len(i.summary),
}


def item_chars(item: Item) -> int:
    """Estimated model-visible characters of one item (what it costs the target)."""
    sizer = _SIZERS.get(type(item))
    return sizer(item) if sizer is not None else 0


def history_chars(items: Iterable[Item]) -> int:
    return sum(item_chars(item) for item in items)


def chars_to_tokens(chars: int) -> int:
    return int(chars / CHARS_PER_TOKEN) + 1


# --------------------------------------------------------------------------- target profiles
#
# ``target_profile`` resolves the target *as the user has it configured*: the model the target
# CLI would run, its window and its auto-compaction point, each figure with its source. It never
# borrows another model's metadata: an unknown model keeps its name and gets the CLI's own
# fallback figures.


@dataclass(frozen=True, slots=True)
class CodexModelInfo:
    """The part of a Codex ``ModelInfo`` that sizes the history."""

    context_window: int
    max_context_window: int
    auto_compact_token_limit: int | None = None


# The models Codex 0.169.0 bundles, as printed by
# `codex debug models --bundled` (0.169.0, scratch HOME/CODEX_HOME): slug, context_window,
# max_context_window; every entry had auto_compact_token_limit null and
# effective_context_window_percent 95.
CODEX_BUNDLED_VERSION = "0.169.0"
CODEX_BUNDLED_MODELS: dict[str, CodexModelInfo] = {
    "gpt-6.1-sol": CodexModelInfo(272_000, 872_000),
    "gpt-6-astra": CodexModelInfo(272_000, 872_000),
    "gpt-6-sol": CodexModelInfo(272_000, 872_000),
    "gpt-6-luna": CodexModelInfo(272_000, 872_000),
    "gpt-5.6-sol": CodexModelInfo(272_000, 872_000),
    "gpt-6.1-terra": CodexModelInfo(500_000, 872_000),
    "gpt-5.6-terra": CodexModelInfo(272_000, 872_000),
    "gpt-5.6-luna": CodexModelInfo(272_000, 872_000),
    "gpt-daybreak-blue-latest": CodexModelInfo(272_000, 872_000),
    "gpt-daybreak-red-latest": CodexModelInfo(372_000, 372_000),
    "gpt-5.5": CodexModelInfo(272_000, 272_000),
    "codex-auto-review": CodexModelInfo(272_000, 872_000),
}
# What Codex 0.169.0 runs with no `model` configured: observed (`codex exec` with a config.toml
# without `model`, API-key auth, printed `model: gpt-6.1-sol` and stamped it in the rollout); it is
# also the bundled model with the best `priority` (1).
CODEX_DEFAULT_MODEL = "gpt-6.1-sol"
# Codex's fallback metadata for a slug it does not know (research codex-format.md §3).
CODEX_FALLBACK = CodexModelInfo(272_000, 272_000)
CODEX_AUTO_COMPACT_PERCENT = 90  # of context_window, when nothing sets a limit

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


def target_profile(provider: Provider, env: Mapping[str, str] | None = None) -> TargetProfile:
    """The target CLI's model, window and auto-compaction point, as the user has it configured.

    ``env`` defaults to ``os.environ`` (``HOME``, ``CODEX_HOME``, ``CLAUDE_CONFIG_DIR`` and the
    Claude Code variables are read from it). A config file that exists but cannot be parsed
    raises :class:`ValueError` naming the file.
    """
    env = os.environ if env is None else env
    if provider is Provider.CODEX:
        return _codex_profile(env)
    return _claude_profile(env)


# ----------------------------------------------------------------------------------- Codex


def _codex_profile(env: Mapping[str, str]) -> TargetProfile:
    home = codex_home(env)
    config_path = home / "config.toml"
    config = _read_toml(config_path)
    notes: list[str] = []

    layer: dict[str, Any] = config
    where = f"config.toml ({config_path})" if config else "no config.toml"
    profile_name = config.get("profile")
    if profile_name is not None:
        if not isinstance(profile_name, str):
            raise ValueError(f"{config_path}: `profile` must be a string")
        profiles = config.get("profiles", {})
        selected = profiles.get(profile_name) if isinstance(profiles, dict) else None
        if not isinstance(selected, dict):
            raise ValueError(f"{config_path}: profile {profile_name!r} has no [profiles] table")
        layer = {**config, **selected}
        where = f"config.toml ({config_path}) profile {profile_name!r}"

    model = _opt_str(layer, "model", config_path)
    if model is None:
        model = CODEX_DEFAULT_MODEL
        notes.append(f"{where}: no model, Codex {CODEX_BUNDLED_VERSION} default {model}")
    else:
        notes.append(f"{where}: model {model}")

    info: CodexModelInfo | None = None
    catalog_setting = _opt_str(config, "model_catalog_json", config_path)
    if catalog_setting is not None:
        catalog_path = (home / Path(catalog_setting).expanduser()).resolve()
        info = _catalog_lookup(catalog_path, model)
        if info is not None:
            notes.append(f"model_catalog_json {catalog_path}")
    if info is None and model in CODEX_BUNDLED_MODELS:
        info = CODEX_BUNDLED_MODELS[model]
        notes.append(f"bundled metadata (codex {CODEX_BUNDLED_VERSION})")
    if info is None:
        info = CODEX_FALLBACK
        notes.append(f"fallback metadata (Codex does not know {model})")

    window = info.context_window
    configured_window = _opt_int(layer, "model_context_window", config_path)
    if configured_window is not None:
        window = min(configured_window, info.max_context_window)
        capped = " (capped at max_context_window)" if window < configured_window else ""
        notes.append(f"model_context_window {configured_window}{capped}")

    ninety = window * CODEX_AUTO_COMPACT_PERCENT // 100
    configured_limit = _opt_int(layer, "model_auto_compact_token_limit", config_path)
    if configured_limit is not None:
        limit = min(configured_limit, ninety)
        notes.append(f"model_auto_compact_token_limit {configured_limit}")
    elif info.auto_compact_token_limit is not None:
        limit = min(info.auto_compact_token_limit, ninety)
        notes.append("catalog auto_compact_token_limit")
    else:
        limit = ninety
        notes.append(f"auto-compact {CODEX_AUTO_COMPACT_PERCENT}% of window")

    return TargetProfile(Provider.CODEX, model, window, limit, "; ".join(notes))


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise ValueError(f"{path}: cannot read the Codex config: {exc}") from exc
    try:
        return tomllib.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ValueError(f"{path}: not a valid TOML Codex config: {exc}") from exc


def _catalog_lookup(path: Path, slug: str) -> CodexModelInfo | None:
    try:
        data = json.loads(path.read_bytes())
    except FileNotFoundError as exc:
        raise ValueError(f"{path}: model_catalog_json names a missing file") from exc
    except (OSError, ValueError) as exc:
        raise ValueError(f"{path}: not a valid model catalog JSON: {exc}") from exc
    models = data.get("models") if isinstance(data, dict) else None
    if not isinstance(models, list):
        raise ValueError(f'{path}: a model catalog must be {{"models": [...]}}')
    for entry in models:
        if isinstance(entry, dict) and entry.get("slug") == slug:
            window = _entry_int(entry, "context_window", path)
            window = CODEX_FALLBACK.context_window if window is None else window
            max_window = _entry_int(entry, "max_context_window", path)
            limit = _entry_int(entry, "auto_compact_token_limit", path)
            return CodexModelInfo(window, window if max_window is None else max_window, limit)
    return None


def _entry_int(entry: Mapping[str, Any], key: str, path: Path) -> int | None:
    value = entry.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ValueError(f"{path}: {key} of {entry.get('slug')!r} must be a positive integer")
    return value


def _opt_str(table: Mapping[str, Any], key: str, path: Path) -> str | None:
    value = table.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        raise ValueError(f"{path}: `{key}` must be a string")
    return value or None


def _opt_int(table: Mapping[str, Any], key: str, path: Path) -> int | None:
    value = table.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ValueError(f"{path}: `{key}` must be a positive integer")
    return value


# ---------------------------------------------------------------------------------- Claude


def claude_auto_compact_threshold(window: int, pct_override: float | None = None) -> int:
    """Claude Code's auto-compact threshold for a compaction window (research §3)."""
    effective = window - CLAUDE_MAX_OUTPUT_CAP
    threshold = effective - CLAUDE_AUTOCOMPACT_MARGIN
    if pct_override is not None and 0 < pct_override <= 100:
        return min(math.floor(effective * pct_override / 100), threshold)
    return threshold


def _claude_profile(env: Mapping[str, str]) -> TargetProfile:
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
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise ValueError(f"{path}: cannot read the Claude Code settings: {exc}") from exc
    try:
        data = json.loads(raw)
    except ValueError as exc:
        raise ValueError(f"{path}: not valid JSON Claude Code settings: {exc}") from exc
    if not isinstance(data, dict):
        raise ValueError(f"{path}: Claude Code settings must be a JSON object")
    model = data.get("model")
    if model is None:
        return None
    if not isinstance(model, str):
        raise ValueError(f"{path}: `model` must be a string")
    return model or None


def _positive_int(text: str) -> int | None:
    try:
        value = int(text.strip())
    except ValueError:
        return None
    return value if value > 0 else None
