"""The stand-in model server: one HTTP server on 127.0.0.1 that speaks both model APIs.

Each test (or recording) opens its own *lane*. A lane has a base URL of its own, a scripted queue
of replies per API, and a log of every request it received. The real CLIs are pointed at a lane:

* Claude Code: ``ANTHROPIC_BASE_URL=<lane.anthropic_base_url>`` (it posts to ``/v1/messages``);
* Codex: a ``[model_providers.standin]`` entry with ``base_url = <lane.openai_base_url>``
  (it posts to ``/responses`` under that base).

Routing: ``/lane/<name>/...``. The part after the lane name decides the API: paths containing
``/messages`` go to the Anthropic handler, everything else that is under ``/v1`` to the OpenAI
handler, and paths outside ``/v1`` (Claude Code's ``HEAD /api/hello`` probe and the like) to the
Anthropic handler again; ``/api/oauth/…`` and ``/backend-api/…`` (usage services) go to the
accounts handler. The API handlers live in sibling modules and are registered with
:func:`register_api`.

The request log is the oracle of the test bed: it shows exactly what history a CLI sent.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import orjson


@dataclass(slots=True)
class LoggedRequest:
    """One request as the stand-in received it."""

    api: str
    method: str
    path: str
    headers: dict[str, str]
    body: Any  # parsed JSON when the body was JSON, else the text (or None)

    def to_json(self) -> dict[str, Any]:
        return {
            "api": self.api,
            "method": self.method,
            "path": self.path,
            "headers": self.headers,
            "body": self.body,
        }


@dataclass(slots=True)
class Response:
    """What an API handler answers: a status, headers, and either a body or SSE chunks."""

    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes = b""
    stream: Iterable[bytes] | None = None  # when set, sent with chunked transfer encoding

    @classmethod
    def json(cls, obj: Any, status: int = 200, headers: dict[str, str] | None = None) -> Response:
        h = {"content-type": "application/json"}
        h.update(headers or {})
        return cls(status=status, headers=h, body=orjson.dumps(obj))

    @classmethod
    def sse(cls, events: Iterable[bytes], headers: dict[str, str] | None = None) -> Response:
        h = {"content-type": "text/event-stream", "cache-control": "no-cache"}
        h.update(headers or {})
        return cls(status=200, headers=h, stream=events)


ApiHandler = Callable[["Lane", LoggedRequest], Response]
_API_HANDLERS: dict[str, ApiHandler] = {}


def register_api(name: str, handler: ApiHandler) -> None:
    """Register the handler for one API (``"anthropic"`` or ``"openai"``)."""
    _API_HANDLERS[name] = handler


class Lane:
    """One test's private corner of the server: its scripts and its request log."""

    def __init__(self, server: StandIn, name: str, log_path: Path | None = None) -> None:
        self.server = server
        self.name = name
        self.log_path = log_path
        self.requests: list[LoggedRequest] = []
        self._scripts: dict[str, deque[Any]] = {}
        self.state: dict[str, Any] = {}  # free space for API handlers (counters and the like)
        self.lock = threading.Lock()

    @property
    def base_url(self) -> str:
        return f"{self.server.base_url}/lane/{self.name}"

    @property
    def anthropic_base_url(self) -> str:
        return self.base_url

    @property
    def openai_base_url(self) -> str:
        return f"{self.base_url}/v1"

    def script(self, api: str, *replies: Any) -> None:
        """Queue scripted replies for an API; each model request consumes the next one."""
        with self.lock:
            self._scripts.setdefault(api, deque()).extend(replies)

    def next_reply(self, api: str) -> Any | None:
        with self.lock:
            queue = self._scripts.get(api)
            return queue.popleft() if queue else None

    def peek(self, api: str) -> Any | None:
        """The reply the next model request would take, without taking it."""
        with self.lock:
            queue = self._scripts.get(api)
            return queue[0] if queue else None

    def pending(self, api: str) -> int:
        with self.lock:
            return len(self._scripts.get(api, ()))

    def record(self, request: LoggedRequest) -> None:
        with self.lock:
            self.requests.append(request)
            if self.log_path is not None:
                with self.log_path.open("ab") as f:
                    f.write(orjson.dumps(request.to_json()) + b"\n")

    def requests_for(self, api: str) -> list[LoggedRequest]:
        with self.lock:
            return [r for r in self.requests if r.api == api]


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:  # silence stderr noise
        pass

    def _dispatch(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length) if length else b""
        parts = self.path.split("?", 1)[0].split("/", 3)  # '', 'lane', name, rest
        lane = None
        rest = self.path
        if len(parts) >= 3 and parts[1] == "lane":
            lane = self.server.standin.lanes.get(parts[2])
            rest = "/" + (parts[3] if len(parts) > 3 else "")
        if lane is None:
            self._send(Response.json({"error": {"message": f"no lane for {self.path}"}}, 404))
            return
        # Codex only ever talks under /v1 (its base URL ends in /v1); Claude Code also probes
        # paths such as HEAD /api/hello, so everything not under /v1 is the Anthropic side too.
        api = "anthropic" if "/messages" in rest or not rest.startswith("/v1/") else "openai"
        if rest.startswith(("/api/oauth/", "/backend-api/")):
            api = "accounts"  # usage and account services (standin/accounts.py)
        body: Any
        try:
            body = orjson.loads(raw) if raw else None
        except orjson.JSONDecodeError:
            body = raw.decode("utf-8", "replace")
        request = LoggedRequest(
            api, self.command, rest, {k.lower(): v for k, v in self.headers.items()}, body
        )
        lane.record(request)
        handler = _API_HANDLERS.get(api)
        if handler is None:
            self._send(Response.json({"error": {"message": f"no handler for {api}"}}, 500))
            return
        try:
            response = handler(lane, request)
        except Exception as exc:  # a broken script must show up in the CLI, not kill the server
            response = Response.json({"error": {"type": "api_error", "message": repr(exc)}}, 500)
        self._send(response)

    do_GET = _dispatch
    do_POST = _dispatch
    do_HEAD = _dispatch

    def _send(self, response: Response) -> None:
        self.send_response(response.status)
        for key, value in response.headers.items():
            self.send_header(key, value)
        if response.stream is None:
            self.send_header("content-length", str(len(response.body)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(response.body)
            return
        self.send_header("transfer-encoding", "chunked")
        self.end_headers()
        try:
            for chunk in response.stream:
                if chunk:
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                    self.wfile.flush()
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    standin: StandIn


class StandIn:
    """The server. Use as a context manager, or call :meth:`start` / :meth:`stop`."""

    def __init__(self, host: str = "127.0.0.1", port: int = 0) -> None:
        self._server = _Server((host, port), _Handler)
        self._server.standin = self
        self.lanes: dict[str, Lane] = {}
        self._thread: threading.Thread | None = None
        self._counter = 0
        self._lock = threading.Lock()

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def lane(self, name: str | None = None, log_path: Path | None = None) -> Lane:
        with self._lock:
            if name is None:
                self._counter += 1
                name = f"l{self._counter}"
            lane = Lane(self, name, log_path)
            self.lanes[name] = lane
            return lane

    def start(self) -> StandIn:
        _load_api_handlers()
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> StandIn:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def sse_event(event: str | None, data: Any) -> bytes:
    """Encode one server-sent event."""
    head = f"event: {event}\n".encode() if event else b""
    return head + b"data: " + orjson.dumps(data) + b"\n\n"


def iter_sse(events: Iterable[tuple[str | None, Any]]) -> Iterator[bytes]:
    for event, data in events:
        yield sse_event(event, data)


def _load_api_handlers() -> None:
    # Import for the side effect of registration; each module calls register_api().
    import importlib

    for module in ("anthropic", "openai", "accounts"):
        try:
            importlib.import_module(f"segue_testbed.standin.{module}")
        except ModuleNotFoundError as exc:
            if exc.name != f"segue_testbed.standin.{module}":
                raise
