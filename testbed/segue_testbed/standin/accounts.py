"""The account services the CLIs ask about usage, as the stand-in serves them.

* Claude's OAuth usage endpoint, ``GET /api/oauth/usage`` (what ``/usage`` in Claude Code reads,
  and segue's ``usage`` too);
* the ChatGPT backend Codex's ``app-server`` asks for ``account/rateLimits/read``:
  ``GET /backend-api/wham/usage`` (Codex decodes ``used_percent`` as an integer), plus the
  ``wham/accounts/check`` workspace lookup it makes on the side. Other ``/backend-api`` paths
  (plugins, reset credits) get a 404, which Codex takes as "none".

A test sets the answer of a lane with :func:`serve_claude_usage` / :func:`serve_chatgpt_usage`;
every request is in the lane's log like any other.
"""

from __future__ import annotations

from typing import Any

from segue_testbed.standin.server import Lane, LoggedRequest, Response, register_api

CLAUDE_USAGE_PATH = "/api/oauth/usage"
CHATGPT_BASE_PATH = "/backend-api/"


def chatgpt_base_url(lane: Lane) -> str:
    """The ``chatgpt_base_url`` that points Codex at this lane."""
    return f"{lane.base_url}{CHATGPT_BASE_PATH}"


def serve_claude_usage(lane: Lane, answer: Any, status: int = 200) -> None:
    with lane.lock:
        lane.state["claude_usage"] = (status, answer)


def serve_chatgpt_usage(lane: Lane, answer: Any, status: int = 200) -> None:
    with lane.lock:
        lane.state["chatgpt_usage"] = (status, answer)


def _served(lane: Lane, key: str) -> Response:
    with lane.lock:
        status, answer = lane.state.get(key, (404, {"error": "nothing scripted"}))
    return Response.json(answer, status)


def handle(lane: Lane, request: LoggedRequest) -> Response:
    path = request.path.split("?", 1)[0]
    if path == CLAUDE_USAGE_PATH:
        return _served(lane, "claude_usage")
    if path.endswith(("/wham/usage", "/api/codex/usage")):
        return _served(lane, "chatgpt_usage")
    if path.endswith("/wham/accounts/check"):
        account = request.headers.get("chatgpt-account-id", "")
        return Response.json(
            {
                "accounts": [
                    {
                        "id": account,
                        "workspace_backend_origin": "https://chatgpt.com",
                        "account_routing_override": "NO_CONSTRAINT",
                    }
                ]
            }
        )
    return Response.json({"detail": "not found (segue stand-in)"}, 404)


register_api("accounts", handle)
