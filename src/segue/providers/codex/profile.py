"""Codex as a switch target: its model and context limits as the user has them configured.

Never borrows another model's metadata: an unknown model keeps its name and gets Codex's own
fallback figures.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import msgspec

from segue.formats.codex.paths import codex_home
from segue.formats.codex.writer import BYTES_PER_TOKEN
from segue.formats.files import read_config
from segue.model.conversation import Provider
from segue.model.errors import ConfigError
from segue.transforms.budget import TargetProfile
from segue.transforms.tokens import O200K


class TruncationPolicy(msgspec.Struct, frozen=True):
    """How Codex cuts a tool output it puts into history (replayed ones included): to a budget
    in tokens (4 bytes each) or bytes, times 1.2, keeping head and tail."""

    mode: str  # "tokens" or "bytes"
    limit: int

    def budget_bytes(self) -> int:
        allowed = math.ceil(self.limit * TRUNCATION_ALLOWANCE)
        return allowed * BYTES_PER_TOKEN if self.mode == "tokens" else allowed


class CodexModelInfo(msgspec.Struct, frozen=True):
    """The part of a Codex ``ModelInfo`` that sizes the history."""

    context_window: int
    max_context_window: int
    auto_compact_token_limit: int | None = None
    truncation: TruncationPolicy | None = None  # None: the bundled models' own


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
CODEX_EFFECTIVE_PERCENT = 95  # Codex reports and holds a request to this share of the window
# Every bundled model of 0.169 has truncation_policy {mode: tokens, limit: 10000}; a slug Codex
# does not know gets {bytes, 10000}. Codex allows 1.2 times the limit for history items.
BUNDLED_TRUNCATION = TruncationPolicy("tokens", 10_000)
FALLBACK_TRUNCATION = TruncationPolicy("bytes", 10_000)
TRUNCATION_ALLOWANCE = 1.2


def target_profile(env: Mapping[str, str], cwd: str | None = None) -> TargetProfile:
    """Codex as the user has it configured: ``$CODEX_HOME/config.toml`` (its profile, model,
    window and compaction settings, ``model_catalog_json``), the bundled model metadata, else
    Codex's fallback. A config that exists but cannot be parsed raises :class:`ConfigError`."""
    home = codex_home(env)
    config_path = home / "config.toml"
    config = _read_toml(config_path)
    notes: list[str] = []

    layer: dict[str, Any] = config
    where = f"config.toml ({config_path})" if config else "no config.toml"
    profile_name = config.get("profile")
    if profile_name is not None:
        if not isinstance(profile_name, str):
            raise ConfigError(f"{config_path}: `profile` must be a string")
        profiles = config.get("profiles", {})
        selected = profiles.get(profile_name) if isinstance(profiles, dict) else None
        if not isinstance(selected, dict):
            raise ConfigError(f"{config_path}: profile {profile_name!r} has no [profiles] table")
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
        catalog_path = _config_path(home, catalog_setting, config_path)
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

    policy = info.truncation or (
        BUNDLED_TRUNCATION if model in CODEX_BUNDLED_MODELS else FALLBACK_TRUNCATION
    )
    tool_limit = _opt_int(layer, "tool_output_token_limit", config_path)
    if tool_limit is not None:
        per_mode = tool_limit if policy.mode == "tokens" else tool_limit * BYTES_PER_TOKEN
        policy = TruncationPolicy(policy.mode, per_mode)
        notes.append(f"tool_output_token_limit {tool_limit}")
    cap = policy.budget_bytes()
    notes.append(f"replayed tool outputs cut to {cap:,} bytes ({policy.mode} {policy.limit:,})")

    return TargetProfile(
        Provider.CODEX,
        model,
        window,
        limit,
        "; ".join(notes),
        chars_per_token=float(BYTES_PER_TOKEN),
        output_cap_bytes=cap,
        tokenizer=O200K,  # the GPT-5 family's tokenizer
        request_limit_tokens=window * CODEX_EFFECTIVE_PERCENT // 100,
    )


def _read_toml(path: Path) -> dict[str, Any]:
    raw = read_config(path, "Codex config")
    if raw is None:
        return {}
    import tomllib  # (only when there is a config: the parser costs a switch 3 ms to load)

    try:
        return tomllib.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"{path}: not a valid TOML Codex config: {exc}") from None


def _catalog_lookup(path: Path, slug: str) -> CodexModelInfo | None:
    raw = read_config(path, "model catalog")
    if raw is None:
        raise ConfigError(f"{path}: model_catalog_json names a missing file")
    try:
        data = json.loads(raw)
    except ValueError as exc:
        raise ConfigError(f"{path}: not a valid model catalog JSON: {exc}") from None
    models = data.get("models") if isinstance(data, dict) else None
    if not isinstance(models, list):
        raise ConfigError(f'{path}: a model catalog must be {{"models": [...]}}')
    for entry in models:
        if isinstance(entry, dict) and entry.get("slug") == slug:
            window = _entry_int(entry, "context_window", path)
            window = CODEX_FALLBACK.context_window if window is None else window
            max_window = _entry_int(entry, "max_context_window", path)
            limit = _entry_int(entry, "auto_compact_token_limit", path)
            return CodexModelInfo(
                window,
                window if max_window is None else max_window,
                limit,
                _entry_truncation(entry, path),
            )
    return None


def _entry_truncation(entry: Mapping[str, Any], path: Path) -> TruncationPolicy | None:
    policy = entry.get("truncation_policy")
    if policy is None:
        return None
    mode = policy.get("mode") if isinstance(policy, dict) else None
    limit = _entry_int(policy, "limit", path) if isinstance(policy, dict) else None
    if mode not in ("tokens", "bytes") or limit is None:
        raise ConfigError(
            f"{path}: truncation_policy of {entry.get('slug')!r} must be "
            '{"mode": "tokens"|"bytes", "limit": <positive integer>}'
        )
    return TruncationPolicy(mode, limit)


def _config_path(home: Path, setting: str, config_path: Path) -> Path:
    """A path a config setting names, relative to the Codex home."""
    try:
        return (home / Path(setting).expanduser()).resolve()
    except (RuntimeError, OSError, ValueError) as exc:  # ~nosuchuser, a loop of links, NUL
        raise ConfigError(f"{config_path}: `model_catalog_json` {setting!r}: {exc}") from None


def _entry_int(entry: Mapping[str, Any], key: str, path: Path) -> int | None:
    return _positive(entry.get(key), f"{path}: {key} of {entry.get('slug')!r}")


def _opt_str(table: Mapping[str, Any], key: str, path: Path) -> str | None:
    value = table.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        raise ConfigError(f"{path}: `{key}` must be a string")
    return value or None


def _opt_int(table: Mapping[str, Any], key: str, path: Path) -> int | None:
    return _positive(table.get(key), f"{path}: `{key}`")


def _positive(value: object, what: str) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ConfigError(f"{what} must be a positive integer")
    return value
