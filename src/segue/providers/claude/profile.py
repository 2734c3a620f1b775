"""Claude Code as a switch target: the model, window and auto-compaction point the user's
Claude Code 2.1.328 would run with, resolved the way it resolves them.

Model: ``ANTHROPIC_MODEL`` (also when a settings file's ``env`` block sets it), else ``model``
from the merged settings (user ``settings.json`` < project ``.claude/settings.json`` < local
``.claude/settings.local.json``), else the default (``ANTHROPIC_DEFAULT_MODEL``, else Claude
Code's own: Opus for an API key or a paid plan, Sonnet for a login without a plan). A new
session segue writes names no model of its own, so the session's model never applies. Aliases
(``opus``, ``sonnet``, ``haiku``, ``fable``, ``best``, ``opusplan``, ``default``) resolve to the
current models, remapped by ``ANTHROPIC_DEFAULT_{OPUS,SONNET,HAIKU}_MODEL``.

Window: 1M for the 5.x models, ``opus-4-7``/``4-8``, ``opus-5``/``sonnet-5`` and any id Claude
Code does not know; 200k for the 4.x and 3.x models, unless ``[1m]`` (1M, with a beta header);
``CLAUDE_CODE_DISABLE_1M_CONTEXT`` brings the 1M models back to 200k. Auto-compaction: at
``effective − 13000``, ``effective = window − min(max output tokens, 20000)``, where the
compaction window is ``CLAUDE_CODE_AUTO_COMPACT_WINDOW`` or the ``autoCompactWindow`` setting
(at least 100k, at most the model's window). Measured against the pinned CLI: see
/work/shared/research/claude-format.md and the README's table.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import msgspec

from segue.formats.claude.paths import config_dir
from segue.formats.files import read_config
from segue.model.conversation import Provider
from segue.model.errors import ConfigError
from segue.transforms.budget import NEWER_CLAUDE_TOKENIZER, TargetProfile
from segue.transforms.tokens import CLAUDE_PUBLISHED

CLAUDE_VERSION = "2.1.328"
WINDOW_1M = 1_000_000
WINDOW_200K = 200_000
MAX_OUTPUT_CAP = 20_000  # effective window = window - min(max output tokens, 20000)
AUTOCOMPACT_MARGIN = 13_000  # threshold = effective - 13000
BLOCKING_MARGIN = 3_000  # Claude Code refuses to send past window - min(max output, 20000) - 3000
MIN_COMPACT_WINDOW = 100_000  # CLAUDE_CODE_AUTO_COMPACT_WINDOW is raised to at least this

# Aliases and the model each resolves to on Anthropic's own API (2.1.328).
ALIAS_FAMILY = {
    "opus": "opus",
    "best": "opus",
    "sonnet": "sonnet",
    "opusplan": "sonnet",  # what a headless turn runs
    "haiku": "haiku",
    "fable": "fable",
}
FAMILY_MODEL = {
    "opus": "claude-opus-5-5",
    "sonnet": "claude-sonnet-5-5",
    "haiku": "claude-haiku-5-5",
    "fable": "claude-fable-5-2",
}
DEFAULT_MODEL = "claude-opus-5-5"
# The default is an alias, so ANTHROPIC_DEFAULT_*_MODEL remaps it too: Opus with 1M for an API
# key or a login with a paid plan, Sonnet for a login without a known plan.
DEFAULT_ALIAS = "opus[1m]"
DEFAULT_ALIAS_NO_PLAN = "sonnet"
PAID_PLANS = frozenset({"pro", "max", "team", "enterprise"})
RETIRED = re.compile(r"^claude-opus-4-[01](?:-\d{8})?$")  # replaced by the default Opus
# Models with a 200k window of their own (a `[1m]` suffix gives them 1M with a beta header).
# Of these, only the 4-6 models compact on their own; the others wait for the API to refuse.
WINDOW_200K_PREFIXES = (
    "claude-opus-4-6",
    "claude-sonnet-4-6",
    "claude-sonnet-4-5",
    "claude-sonnet-4-0",
    "claude-sonnet-4-2",
    "claude-opus-4-5",
    "claude-haiku-4-5",
    "claude-opus-4-1",
    "claude-opus-4-0",
    "claude-opus-4-2",
    "claude-3",
)
PROACTIVE_200K = ("claude-opus-4-6", "claude-sonnet-4-6")
# Models Claude Code estimates at 4 characters a token; every other id at 3.
FOUR_CHARS_A_TOKEN = (
    "claude-3",
    "claude-opus-4-0",
    "claude-opus-4-1",
    "claude-opus-4-5",
    "claude-opus-4-6",
    "claude-sonnet-4-0",
    "claude-sonnet-4-5",
    "claude-sonnet-4-6",
    "claude-haiku-4-5",
)
_SUFFIX_1M = re.compile(r"\[1m\]\s*$", re.IGNORECASE)
_TRUTHY = frozenset({"1", "true", "yes", "on"})


def claude_auto_compact_threshold(
    window: int, pct_override: float | None = None, max_output: int = MAX_OUTPUT_CAP
) -> int:
    """Claude Code's auto-compact threshold for a compaction window."""
    effective = window - min(max_output, MAX_OUTPUT_CAP)
    threshold = effective - AUTOCOMPACT_MARGIN
    if pct_override is not None and 0 < pct_override <= 100:
        return min(math.floor(effective * pct_override / 100), threshold)
    return threshold


class _Settings(msgspec.Struct):
    """The merged settings files (later files win), and where each value came from."""

    values: dict[str, Any] = msgspec.field(default_factory=dict)
    origin: dict[str, Path] = msgspec.field(default_factory=dict)
    env: dict[str, str] = msgspec.field(default_factory=dict)  # the merged `env` blocks

    def add(self, path: Path) -> None:
        data = _read_settings(path)
        for key, value in data.items():
            if key == "env" and isinstance(value, dict):
                self.env.update({k: v for k, v in value.items() if isinstance(v, str)})
                continue
            self.values[key] = value
            self.origin[key] = path

    def where(self, key: str) -> str:
        return str(self.origin.get(key, "settings"))


def _settings(env: Mapping[str, str], cwd: str | None) -> _Settings:
    merged = _Settings()
    merged.add(config_dir(env) / "settings.json")
    if cwd:
        merged.add(Path(cwd) / ".claude" / "settings.json")
        merged.add(Path(cwd) / ".claude" / "settings.local.json")
    return merged


def target_profile(env: Mapping[str, str], cwd: str | None = None) -> TargetProfile:
    """Claude Code as the user has it configured for a session in ``cwd`` (project settings
    apply there). Raises :class:`ConfigError` for a settings file it cannot use."""
    settings = _settings(env, cwd)
    environ = {**env, **settings.env}  # a settings `env` block acts as the environment
    notes: list[str] = []

    model = _configured_model(environ, settings, notes)
    base, one_m = _split_suffix(model)
    family = ALIAS_FAMILY.get(base.lower())
    if family is not None:
        override = environ.get(f"ANTHROPIC_DEFAULT_{family.upper()}_MODEL", "").strip()
        base, more = _split_suffix(override or FAMILY_MODEL[family])
        one_m = one_m or more
        notes.append(f"alias {model} → {base}" + (" (remapped)" if override else ""))
    if RETIRED.match(base):
        notes.append(f"{base} is retired; Claude Code runs {DEFAULT_MODEL}")
        base = DEFAULT_MODEL

    window, proactive = _window(base, one_m, environ, notes)
    compact_window = _compact_window(window, environ, settings, notes)
    if compact_window is not None:
        proactive = True
    max_output = _positive_int(environ.get("CLAUDE_CODE_MAX_OUTPUT_TOKENS", "")) or MAX_OUTPUT_CAP
    pct = _pct_override(environ, notes)
    threshold = claude_auto_compact_threshold(compact_window or window, pct, max_output)
    if not proactive:
        notes.append("compacts only when the API refuses the prompt")
    chars = 4.0 if base.startswith(FOUR_CHARS_A_TOKEN) else 3.0
    notes.append(
        f"threshold window − min(max output, 20000) − 13000, {chars:g} chars/token "
        f"(Claude Code {CLAUDE_VERSION})"
    )
    # The models up to Opus 4.6 (those with a 200k window of their own) count with the older
    # tokenizer; every later one, and an id Claude Code does not know, with the newer.
    factor = 1.0 if _is_200k(base) else NEWER_CLAUDE_TOKENIZER
    name = base + ("[1m]" if one_m and window == WINDOW_1M and _is_200k(base) else "")
    return TargetProfile(
        Provider.CLAUDE,
        name,
        window,
        threshold,
        "; ".join(notes),
        chars_per_token=chars,
        tokenizer=CLAUDE_PUBLISHED,
        tokenizer_factor=factor,
        request_limit_tokens=window - min(max_output, MAX_OUTPUT_CAP) - BLOCKING_MARGIN,
    )


def _configured_model(environ: Mapping[str, str], settings: _Settings, notes: list[str]) -> str:
    model = environ.get("ANTHROPIC_MODEL", "").strip()
    if model:
        notes.append(f"ANTHROPIC_MODEL: model {model}")
    else:
        raw = settings.values.get("model")
        if raw is not None and not isinstance(raw, str):
            raise ConfigError(f"{settings.where('model')}: `model` must be a string")
        model = (raw or "").strip()
        if model:
            notes.append(f"{settings.where('model')}: model {model}")
    if not model or model.lower() == "default":
        model = environ.get("ANTHROPIC_DEFAULT_MODEL", "").strip() or _default_model(environ)
        notes.append(f"Claude Code default model {model}")
    return model


def _default_model(environ: Mapping[str, str]) -> str:
    """Opus for an API key or a paid plan; Sonnet for a login whose plan is unknown."""
    if environ.get("ANTHROPIC_API_KEY"):
        return DEFAULT_ALIAS
    plan = environ.get("CLAUDE_CODE_SUBSCRIPTION_TYPE", "").strip().lower()
    oauth = _oauth_login(environ)
    if oauth is None:
        return DEFAULT_ALIAS
    plan = plan or oauth
    return DEFAULT_ALIAS if plan in PAID_PLANS else DEFAULT_ALIAS_NO_PLAN


def _oauth_login(environ: Mapping[str, str]) -> str | None:
    """The plan of a Claude login ("" when unknown), or None when there is no login."""
    if environ.get("CLAUDE_CODE_OAUTH_TOKEN"):
        return ""
    path = config_dir(environ) / ".credentials.json"
    try:
        data = json.loads(path.read_bytes())
    except (OSError, ValueError):
        return None
    oauth = data.get("claudeAiOauth") if isinstance(data, dict) else None
    if not isinstance(oauth, dict) or not oauth.get("accessToken"):
        return None
    plan = oauth.get("subscriptionType")
    return plan.lower() if isinstance(plan, str) else ""


def _split_suffix(model: str) -> tuple[str, bool]:
    one_m = bool(_SUFFIX_1M.search(model))
    return _SUFFIX_1M.sub("", model).strip(), one_m


def _is_200k(base: str) -> bool:
    return base.startswith(WINDOW_200K_PREFIXES)


def _window(
    base: str, one_m: bool, environ: Mapping[str, str], notes: list[str]
) -> tuple[int, bool]:
    """The model's window and whether Claude Code compacts it before the API refuses."""
    disable_1m = environ.get("CLAUDE_CODE_DISABLE_1M_CONTEXT", "").strip().lower() in _TRUTHY
    if _is_200k(base):
        if one_m and not disable_1m:
            notes.append("window 1M ([1m] suffix, beta context-1m)")
            return WINDOW_1M, False
        notes.append("window 200k (the model's own)")
        return WINDOW_200K, base.startswith(PROACTIVE_200K)
    if disable_1m:
        notes.append("window 200k (CLAUDE_CODE_DISABLE_1M_CONTEXT)")
        return WINDOW_200K, True
    notes.append("window 1M (the model's own)")
    return WINDOW_1M, True


def _compact_window(
    window: int, environ: Mapping[str, str], settings: _Settings, notes: list[str]
) -> int | None:
    raw = environ.get("CLAUDE_CODE_AUTO_COMPACT_WINDOW", "").strip()
    where = "CLAUDE_CODE_AUTO_COMPACT_WINDOW"
    value: int | None = None
    if raw:
        value = _positive_int(raw)
        if value is None:
            notes.append(f"ignored CLAUDE_CODE_AUTO_COMPACT_WINDOW={raw!r}")
    if value is None and "autoCompactWindow" in settings.values:
        setting = settings.values["autoCompactWindow"]
        where = f"{settings.where('autoCompactWindow')} autoCompactWindow"
        if isinstance(setting, bool) or not isinstance(setting, int) or setting <= 0:
            raise ConfigError(f"{where} must be a positive integer")
        value = setting
    if value is None:
        return None
    chosen = min(max(value, MIN_COMPACT_WINDOW), window)
    notes.append(f"{where} {value} → compaction window {chosen}")
    return chosen


def _pct_override(environ: Mapping[str, str], notes: list[str]) -> float | None:
    raw = environ.get("CLAUDE_AUTOCOMPACT_PCT_OVERRIDE", "").strip()
    if not raw:
        return None
    try:
        pct = float(raw)
    except ValueError:
        pct = math.nan
    if not 0 < pct <= 100:
        notes.append(f"ignored CLAUDE_AUTOCOMPACT_PCT_OVERRIDE={raw!r}")
        return None
    notes.append(f"CLAUDE_AUTOCOMPACT_PCT_OVERRIDE {raw}")
    return pct


def _read_settings(path: Path) -> dict[str, Any]:
    raw = read_config(path, "Claude Code settings")
    if raw is None or not raw.strip():
        return {}
    try:
        data = json.loads(raw)
    except ValueError as exc:
        raise ConfigError(f"{path}: not valid JSON Claude Code settings: {exc}") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: Claude Code settings must be a JSON object")
    return data


def _positive_int(text: str) -> int | None:
    try:
        value = int(text.strip())
    except ValueError:
        return None
    return value if value > 0 else None


__all__ = ["claude_auto_compact_threshold", "model_key", "target_profile"]


def model_key(model: str) -> str:
    """A model id without the spellings that do not change the model: the ``[1m]`` window
    suffix and a date (``claude-opus-4-5-20251101``)."""
    base = model.strip().lower().removesuffix("[1m]")
    head, _, tail = base.rpartition("-")
    return head if tail.isdigit() and len(tail) == 8 else base
