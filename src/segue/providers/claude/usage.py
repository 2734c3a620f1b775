"""Claude Code's usage windows: its session files, its own cache of the usage answer
(``cachedUsageUtilization`` in ``.claude.json``), and the OAuth usage endpoint.

The endpoint is ``GET {base}/api/oauth/usage`` with the subscriber's OAuth token from
``<config dir>/.credentials.json`` (the request Claude Code 2.1.328 itself makes for
``/usage``). Its answer is kept a minute in segue's state folder. Every failure (no token,
offline, an HTTP error, an answer of the wrong shape) is a quiet note.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import orjson

from segue.formats.claude import paths
from segue.formats.claude.reader import LIMIT_WINDOWS, read_lines
from segue.formats.jsonl import tail_lines
from segue.model.conversation import ALL_MODELS, Conversation, LimitWindow, Provider
from segue.model.times import from_epoch, parse_iso
from segue.providers.base import Env, UsageReading
from segue.providers.recorded import recorded_usage
from segue.support.state_dir import read_private_json, state_dir, write_private_json

__all__ = ["DEFAULT_BASE", "URL_VAR", "read_usage", "usage_url", "windows_from_answer"]

DEFAULT_BASE = "https://api.anthropic.com"
URL_VAR = "SEGUE_CLAUDE_USAGE_URL"  # a full URL or a base
ENDPOINT_PATH = "/api/oauth/usage"
TIMEOUT_S = 3.0
CACHE_TTL = timedelta(seconds=60)
CLAUDE_CACHE_TTL = timedelta(hours=1)  # Claude itself ignores older entries
ENDPOINT_SOURCE = "usage endpoint"
CACHED_SOURCE = "usage endpoint (cached)"
CLAUDE_CACHE_SOURCE = "Claude Code's cache"

# Model families Claude Code can switch between, and where to go when one is limited.
_OTHER_FAMILY = {"opus": "sonnet", "sonnet": "opus", "fable": "opus", "haiku": "sonnet"}


def read_usage(env: Env, *, remote: bool, now: datetime) -> UsageReading:
    reading = recorded_usage(paths.iter_session_files(env), _read_tail)
    reading.add(_claude_cache(env, now))
    if remote:
        reading.add(*_endpoint(env, now))
    reading.model_switch = {
        family: f"claude --model {other} (or /model {other} inside Claude Code)"
        for family, other in _OTHER_FAMILY.items()
    }
    reading.switch_models = dict(_OTHER_FAMILY)
    return reading


def _read_tail(path: Path) -> Conversation:
    """The file's tail in file order: a limit notice counts on whatever branch it was written."""
    return read_lines(path, tail_lines(path), follow_chain=False)


# --- the answer -------------------------------------------------------------------------------


def windows_from_answer(
    answer: object, observed_at: datetime | None, source: str
) -> list[LimitWindow]:
    """The windows of a usage answer: ``{name: {utilization 0-100, resets_at ISO}}`` for each
    window, plus ``limits[]`` rows scoped to one model that no named window covers."""
    if not isinstance(answer, dict):
        return []
    out: list[LimitWindow] = []
    for name, value in answer.items():
        if not isinstance(value, dict) or "utilization" not in value:
            continue
        used = value.get("utilization")
        if isinstance(used, bool) or not isinstance(used, int | float):
            continue  # no data for this window
        minutes, scope = _window_shape(name)
        out.append(
            LimitWindow(
                Provider.CLAUDE,
                minutes,
                float(used),
                parse_iso(value.get("resets_at")),
                scope,
                name,
                observed_at,
                source,
            )
        )
    covered = {w.scope for w in out}
    for row in answer.get("limits") or []:
        window = _scoped_row(row, observed_at, source)
        if window is not None and window.scope not in covered:
            covered.add(window.scope)
            out.append(window)
    return out


def _window_shape(name: str) -> tuple[int | None, str]:
    if name in LIMIT_WINDOWS:
        return LIMIT_WINDOWS[name]
    if name.startswith("seven_day_"):
        return 10080, name.removeprefix("seven_day_")
    return None, ALL_MODELS if name in ("five_hour", "seven_day") else name


def _scoped_row(row: object, observed_at: datetime | None, source: str) -> LimitWindow | None:
    """A ``limits[]`` row of kind ``weekly_scoped`` naming a model, as a family window."""
    if not isinstance(row, dict) or row.get("kind") != "weekly_scoped":
        return None
    scope = row.get("scope")
    model = scope.get("model") if isinstance(scope, dict) else None
    name = model.get("display_name") if isinstance(model, dict) else None
    percent = row.get("percent")
    if not isinstance(name, str) or not name or isinstance(percent, bool):
        return None
    if not isinstance(percent, int | float):
        return None
    family = name.split()[0].lower()
    return LimitWindow(
        Provider.CLAUDE,
        10080,
        float(percent),
        parse_iso(row.get("resets_at")),
        family,
        f"seven_day_{family}",
        observed_at,
        source,
    )


# --- Claude Code's own cache ----------------------------------------------------------------


def _global_config(env: Env) -> Path:
    """Claude Code's ``.claude.json``: in ``$CLAUDE_CONFIG_DIR``, else in the home folder."""
    override = env.get("CLAUDE_CONFIG_DIR")
    if override:
        return Path(override) / ".claude.json"
    return Path(env.get("HOME") or Path.home()) / ".claude.json"


def _claude_cache(env: Env, now: datetime) -> list[LimitWindow]:
    """``cachedUsageUtilization``: the last usage answer Claude Code fetched, when it is under
    an hour old and belongs to the account signed in."""
    path = _global_config(env)
    try:
        config = orjson.loads(path.read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return []
    if not isinstance(config, dict):
        return []
    cached = config.get("cachedUsageUtilization")
    if not isinstance(cached, dict):
        return []
    fetched = from_epoch(cached.get("fetchedAtMs"))
    if fetched is None or not (now - CLAUDE_CACHE_TTL <= fetched <= now + timedelta(minutes=1)):
        return []
    account = config.get("oauthAccount")
    owner = account.get("accountUuid") if isinstance(account, dict) else None
    if owner and cached.get("accountUuid") not in (None, owner):
        return []
    return windows_from_answer(cached.get("utilization"), fetched, f"{CLAUDE_CACHE_SOURCE}: {path}")


# --- the endpoint -----------------------------------------------------------------------------


def usage_url(env: Env) -> str:
    """``$SEGUE_CLAUDE_USAGE_URL`` (a full URL, or a base the path is added to), else the API."""
    override = (env.get(URL_VAR) or "").strip()
    base = override or DEFAULT_BASE
    if base.rstrip("/").endswith(ENDPOINT_PATH):
        return base
    return base.rstrip("/") + ENDPOINT_PATH


def _token(env: Env) -> tuple[str | None, str | None]:
    """The OAuth access token from the credentials file, or a note saying why there is none."""
    path = paths.config_dir(env) / ".credentials.json"
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return None, f"no Claude login at {path}; the usage endpoint was not asked"
    except OSError as exc:
        return None, f"{path}: cannot read ({exc.strerror}); the usage endpoint was not asked"
    try:
        creds = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return None, f"{path}: not JSON; the usage endpoint was not asked"
    oauth = creds.get("claudeAiOauth") if isinstance(creds, dict) else None
    token = oauth.get("accessToken") if isinstance(oauth, dict) else None
    if not isinstance(token, str) or not token.strip():
        return None, f"{path}: no OAuth token; the usage endpoint was not asked"
    return token.strip(), None


def _cache_path(env: Env) -> Path:
    return state_dir(env) / "usage" / "claude-oauth-usage.json"


def _endpoint(env: Env, now: datetime) -> tuple[list[LimitWindow], str | None]:
    token, note = _token(env)
    if token is None:
        return [], note
    url = usage_url(env)
    key = hashlib.sha256(f"{url}\n{token}".encode()).hexdigest()
    cache = _cache_path(env)
    cached = read_private_json(cache)
    fetched = None
    if isinstance(cached, dict) and cached.get("key") == key:
        fetched = from_epoch(cached.get("fetched_at"))
    if fetched is not None and fetched > now + timedelta(seconds=5):
        fetched = None  # written by a clock that ran ahead: not to be trusted
    source = f"{CACHED_SOURCE}: {url}"
    if fetched is not None and now - CACHE_TTL <= fetched:
        return windows_from_answer(cached.get("answer"), fetched, source), None
    answer, problem = _fetch(url, token)
    if answer is None:
        note = f"Claude usage endpoint {url}: {problem}"
        if fetched is not None and now - CLAUDE_CACHE_TTL <= fetched:
            # the last answer, under an hour old, shown with its age
            return windows_from_answer(cached.get("answer"), fetched, source), note
        return [], note
    write_private_json(cache, {"key": key, "fetched_at": now.timestamp(), "answer": answer})
    return windows_from_answer(answer, now, f"{ENDPOINT_SOURCE}: {url}"), None


def _fetch(url: str, token: str) -> tuple[dict[str, Any] | None, str]:
    import httpx  # here: only a remote read pays for importing it

    headers: Mapping[str, str] = {
        "Authorization": f"Bearer {token}",
        "anthropic-beta": "oauth-2025-04-20",
        "Accept": "application/json",
        "User-Agent": "segue",
    }
    try:
        with httpx.Client(timeout=TIMEOUT_S) as client:
            response = client.get(url, headers=headers)
    except (httpx.HTTPError, httpx.InvalidURL, ValueError) as exc:
        return None, f"unreachable ({type(exc).__name__})"
    if response.status_code == 401:
        return None, "HTTP 401 (the login may have expired: running claude once refreshes it)"
    if response.status_code != 200:
        return None, f"HTTP {response.status_code}"
    try:
        answer = orjson.loads(response.content)
    except orjson.JSONDecodeError:
        return None, "the answer is not JSON"
    if not isinstance(answer, dict):
        return None, "the answer is not a JSON object"
    return answer, ""
