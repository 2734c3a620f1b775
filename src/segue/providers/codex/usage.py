"""Codex's usage windows: the ``token_count`` rate limits in its rollouts, and its own
``codex app-server`` (``account/rateLimits/read``), which asks the ChatGPT backend for a
ChatGPT login.

Windows are told apart by their length, never by their slot (a weekly window can come as
``primary``). The app-server runs with the user's ``CODEX_HOME`` (it may refresh the login,
which is Codex's own business) and ``chatgpt_base_url`` from the user's config, or
``$SEGUE_CODEX_CHATGPT_BASE_URL`` given as ``-c chatgpt_base_url=…``. Every failure (no
``codex``, an API-key login, no login, offline, a slow backend) is a quiet note.
"""

from __future__ import annotations

import json
import shutil
from datetime import datetime
from typing import Any

import msgspec

from segue.formats.codex import paths
from segue.formats.codex.reader import limit_scope, read_lines
from segue.formats.jsonl import tail_lines
from segue.model.conversation import LimitWindow, Provider
from segue.model.errors import SegueError
from segue.model.times import from_epoch
from segue.providers.base import Env, UsageReading
from segue.providers.codex.app_server import AppServerError, call
from segue.providers.codex.profile import CODEX_BUNDLED_MODELS, target_profile
from segue.providers.recorded import recorded_usage

__all__ = ["BASE_URL_VAR", "BIN_VAR", "read_usage", "window_name", "windows_from_result"]

BIN_VAR = "SEGUE_CODEX_BIN"
BASE_URL_VAR = "SEGUE_CODEX_CHATGPT_BASE_URL"
TIMEOUT_S = 5.0
APP_SERVER_SOURCE = "codex app-server"
_LENGTH_NAMES = {300: "five_hour", 10080: "weekly"}


def read_usage(env: Env, *, remote: bool, now: datetime) -> UsageReading:
    reading = recorded_usage(
        paths.iter_session_files(env), lambda path: read_lines(path, tail_lines(path))
    )
    reading.windows = [_renamed(w) for w in reading.windows]
    if remote:
        reading.add(*_app_server(env, now))
    reading.model_switch = _model_switch(env, reading.windows)
    reading.switch_models = {
        family: text.removeprefix("codex -m ") for family, text in reading.model_switch.items()
    }
    return reading


def window_name(scope: str, minutes: int | None) -> str:
    """``five_hour`` / ``weekly`` (or ``<minutes>min``), after the family for a family limit."""
    length = _LENGTH_NAMES.get(minutes or 0) or (f"{minutes}min" if minutes else "window")
    return length if scope == "all" else f"{scope}.{length}"


def _renamed(window: LimitWindow) -> LimitWindow:
    return msgspec.structs.replace(window, name=window_name(window.scope, window.minutes))


# --- the app-server ---------------------------------------------------------------------------


def _argv(env: Env) -> list[str] | None:
    codex = env.get(BIN_VAR) or shutil.which("codex", path=env.get("PATH"))
    if not codex:
        return None
    argv = [codex, "app-server"]
    base = (env.get(BASE_URL_VAR) or "").strip()
    if base:
        argv += ["-c", f"chatgpt_base_url={json.dumps(base)}"]
    return argv


def _app_server(env: Env, now: datetime) -> tuple[list[LimitWindow], str | None]:
    argv = _argv(env)
    if argv is None:
        return [], "codex is not on PATH; its app-server was not asked"
    try:
        result = call(argv, "account/rateLimits/read", {}, env=env, timeout=TIMEOUT_S)
    except AppServerError as exc:
        return [], f"codex app-server: {exc}"
    return windows_from_result(result, now, f"{APP_SERVER_SOURCE}: {argv[0]}"), None


def windows_from_result(result: object, observed_at: datetime, source: str) -> list[LimitWindow]:
    """The windows of an ``account/rateLimits/read`` result, one snapshot per limit id."""
    if not isinstance(result, dict):
        return []
    snapshots = result.get("rateLimitsByLimitId")
    if not isinstance(snapshots, dict) or not snapshots:
        snapshots = {"codex": result.get("rateLimits")}
    out: list[LimitWindow] = []
    for key, snapshot in snapshots.items():
        if not isinstance(snapshot, dict):
            continue
        limit_id = snapshot.get("limitId") if isinstance(snapshot.get("limitId"), str) else key
        scope = limit_scope(str(limit_id))
        for slot in ("primary", "secondary"):
            window = snapshot.get(slot)
            if isinstance(window, dict):
                out.append(_window(window, scope, observed_at, source))
    return out


def _window(window: dict[str, Any], scope: str, observed_at: datetime, source: str) -> LimitWindow:
    minutes = window.get("windowDurationMins")
    used = window.get("usedPercent")
    return LimitWindow(
        Provider.CODEX,
        minutes if type(minutes) is int else None,
        float(used) if isinstance(used, int | float) and type(used) is not bool else None,
        from_epoch(window.get("resetsAt")),
        scope,
        window_name(scope, minutes if type(minutes) is int else None),
        observed_at,
        source,
    )


# --- switching model --------------------------------------------------------------------------


def _model_switch(env: Env, windows: list[LimitWindow]) -> dict[str, str]:
    """For each family-scoped limit: run the configured model, or another bundled one."""
    try:
        configured: str | None = target_profile(env).model
    except SegueError:
        configured = None
    out: dict[str, str] = {}
    for family in {w.scope for w in windows if w.scope != "all"}:
        model = configured
        if model is None or family in model.replace("-", "").lower():
            model = next((m for m in CODEX_BUNDLED_MODELS if family not in m), None)
        if model is not None:
            out[family] = f"codex -m {model}"
    return out
