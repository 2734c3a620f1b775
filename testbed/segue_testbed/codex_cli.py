"""Drive the real Codex CLI (the pinned one in ``testbed/``) against a stand-in lane.

:class:`CodexHome` is one scratch ``HOME`` + ``CODEX_HOME`` whose ``config.toml`` points Codex at
a lane of the stand-in server, either through a custom provider ``standin`` (local compaction) or
through the built-in ``openai`` provider with ``openai_base_url`` (remote compaction v2). The CLI
starts from a minimal environment so nothing of the caller's setup leaks in.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import orjson

from segue_testbed.standin.server import Lane
from segue_testbed.testbed import CliMissing, cli_bin
from segue_testbed.testbed import repo_root as repo_root

API_KEY_ENV = "SEGUE_STANDIN_OPENAI_KEY"
API_KEY = "sk-segue-standin"
DEFAULT_MODEL = "gpt-5.5"
EXEC_FLAGS = (
    "--dangerously-bypass-approvals-and-sandbox",
    "--skip-git-repo-check",
    "--color",
    "never",
)

Provider = Literal["standin", "openai"]


CodexNotInstalled = CliMissing


def codex_bin() -> Path:
    """The pinned Codex CLI (``$SEGUE_CODEX_BIN`` overrides)."""
    return cli_bin("codex", "SEGUE_CODEX_BIN")


def codex_version() -> str:
    out = subprocess.run(
        [str(codex_bin()), "--version"], capture_output=True, text=True, check=True, timeout=60
    )
    return out.stdout.strip().rsplit(" ", 1)[-1]


@dataclass(frozen=True, slots=True)
class RunResult:
    returncode: int
    stdout: str
    stderr: str


def _toml_str(value: str) -> str:
    return json.dumps(value)  # a JSON string is a valid TOML basic string


class CodexHome:
    """A scratch home for Codex bound to one stand-in lane."""

    def __init__(
        self,
        root: Path,
        lane: Lane,
        *,
        provider: Provider = "standin",
        model: str = DEFAULT_MODEL,
        extra_config: str = "",
    ) -> None:
        self.root = root
        self.home = root / "home"
        self.codex_home = self.home / ".codex"
        self.lane = lane
        self.provider = provider
        self.model = model
        self.codex_home.mkdir(parents=True, exist_ok=True)
        (self.codex_home / "config.toml").write_text(self.config_toml(extra_config))

    def config_toml(self, extra: str = "") -> str:
        lines = [
            f"model = {_toml_str(self.model)}",
            f"model_provider = {_toml_str(self.provider)}",
            "check_for_update_on_startup = false",
            'approval_policy = "never"',
            'sandbox_mode = "danger-full-access"',
            "",
            "[analytics]",
            "enabled = false",
            "",
            "[feedback]",
            "enabled = false",
            "",
        ]
        if self.provider == "openai":
            lines.insert(2, f"openai_base_url = {_toml_str(self.lane.openai_base_url)}")
        else:
            lines += [
                "[model_providers.standin]",
                'name = "standin"',
                f"base_url = {_toml_str(self.lane.openai_base_url)}",
                'wire_api = "responses"',
                f"env_key = {_toml_str(API_KEY_ENV)}",
                "request_max_retries = 0",
                "stream_max_retries = 0",
                "",
            ]
        return "\n".join(lines) + extra + "\n"

    def env(self, extra: Mapping[str, str] | None = None) -> dict[str, str]:
        env = {
            "HOME": str(self.home),
            "CODEX_HOME": str(self.codex_home),
            "PATH": os.environ.get("PATH", "/usr/local/bin:/usr/bin:/bin"),
            "LANG": "C.UTF-8",
            "TERM": "dumb",
            "NO_COLOR": "1",
            "TZ": "UTC",
            "GIT_CONFIG_NOSYSTEM": "1",  # its git: the scratch home's config, not the machine's
            API_KEY_ENV: API_KEY,
        }
        if self.provider == "openai":
            env["OPENAI_API_KEY"] = API_KEY
        env.update(extra or {})
        return env

    # ----------------------------------------------------------------------- codex exec

    def exec_command(
        self, prompt: str, *, resume: str | None = None, extra_args: Sequence[str] = ()
    ) -> list[str]:
        cmd = [str(codex_bin()), "exec", *EXEC_FLAGS]
        if resume is not None:
            cmd += ["resume", resume]
        return [*cmd, *extra_args, prompt]

    def exec(
        self,
        prompt: str,
        *,
        cwd: Path,
        resume: str | None = None,
        extra_args: Sequence[str] = (),
        env: Mapping[str, str] | None = None,
        timeout: float = 60.0,
    ) -> RunResult:
        """Run ``codex exec`` (or ``codex exec resume <id>``) to completion."""
        cwd.mkdir(parents=True, exist_ok=True)
        out = subprocess.run(
            self.exec_command(prompt, resume=resume, extra_args=extra_args),
            cwd=cwd,
            env=self.env(env),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        return RunResult(out.returncode, out.stdout, out.stderr)

    def exec_until(
        self,
        prompt: str,
        *,
        cwd: Path,
        ready: Callable[[], bool],
        resume: str | None = None,
        timeout: float = 60.0,
    ) -> RunResult:
        """Start ``codex exec``, wait until ``ready()`` holds, then kill it (SIGKILL)."""
        cwd.mkdir(parents=True, exist_ok=True)
        proc = subprocess.Popen(
            self.exec_command(prompt, resume=resume),
            cwd=cwd,
            env=self.env(),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
        deadline = time.monotonic() + timeout
        try:
            while not ready():
                if proc.poll() is not None or time.monotonic() > deadline:
                    break
                time.sleep(0.1)
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
            stdout, stderr = proc.communicate(timeout=30)
        return RunResult(proc.returncode, stdout, stderr)

    # ----------------------------------------------------------------------- files

    @property
    def sessions_dir(self) -> Path:
        return self.codex_home / "sessions"

    def rollouts(self) -> list[Path]:
        """Every rollout file Codex wrote, oldest first."""
        if not self.sessions_dir.exists():
            return []
        return sorted(self.sessions_dir.rglob("rollout-*.jsonl"))

    def rollout_for(self, session_id: str) -> Path:
        """The newest rollout file of a session: after a revert Codex starts a new generation
        file ``rollout-<time>-<id>_<generation>.jsonl`` and appends there."""
        found = [p for p in self.rollouts() if session_id in p.stem]
        if found:
            return max(found, key=lambda p: p.name)  # time first; "<id>_<gen>" after "<id>."
        raise FileNotFoundError(f"no rollout for {session_id} under {self.sessions_dir}")

    def only_session_id(self) -> str:
        paths = self.rollouts()
        if len(paths) != 1:
            raise AssertionError(f"expected exactly one rollout, found {paths}")
        return session_id_of(paths[0])

    def copy_rollouts(self, dest_home: Path) -> list[Path]:
        """Copy only the rollout files into ``dest_home``, keeping ``.codex/sessions/...``."""
        copied: list[Path] = []
        for path in self.rollouts():
            rel = path.relative_to(self.home)
            target = dest_home / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, target)
            copied.append(target)
        return copied

    def sign_in_chatgpt(self, plan: str = "plus") -> dict[str, Any]:
        """Write a ChatGPT login to ``auth.json`` (unsigned JWTs, which Codex does not verify, that
        expire in 30 days so Codex never tries to refresh them). Returns it."""
        auth = chatgpt_auth(plan)
        (self.codex_home / "auth.json").write_text(json.dumps(auth))
        return auth

    def sign_in_api_key(self) -> None:
        """Write an API-key login to ``auth.json``."""
        auth = {"auth_mode": "apikey", "OPENAI_API_KEY": API_KEY}
        (self.codex_home / "auth.json").write_text(json.dumps(auth))

    def app_server(self, cwd: Path) -> AppServer:
        return AppServer(self, cwd)

    # ----------------------------------------------------------------------- argv, rollback

    def exec_command_with_separator(
        self, prompt: str, *, resume: str | None = None, extra_args: Sequence[str] = ()
    ) -> list[str]:
        """Like :meth:`exec_command`, with ``--`` before the prompt so that a prompt starting
        with ``-`` ("--version", "- fix the bug") is sent as the prompt. ``--`` goes after
        ``resume <id>`` (or between ``resume`` and the id); before ``resume`` it makes ``resume``
        the prompt. A prompt of exactly ``-`` still means "read stdin"."""
        cmd = [str(codex_bin()), "exec", *EXEC_FLAGS]
        if resume is not None:
            cmd += ["resume", resume]
        return [*cmd, *extra_args, "--", prompt]

    def turn_ids(self, session_id: str, *, cwd: Path) -> list[str]:
        """The thread's turn ids, oldest first, as the app-server lists them (``thread/resume``
        then ``thread/turns/list``, every page)."""
        with self.app_server(cwd) as app:
            return _turn_ids(app, session_id)

    def rollback_turns(self, session_id: str, keep_turns: int, *, cwd: Path) -> Rollback:
        """Roll a thread back to its first ``keep_turns`` turns as the 0.169.0 TUI's rewind
        (Esc Esc, ←, Enter) does: app-server ``thread/revert {threadId, beforeTurnId}`` with the
        id of turn ``keep_turns + 1``. Codex writes a new generation file
        ``rollout-<time>-<id>_<generation id>.jsonl`` (``session_meta`` with ``history_base``
        ``{thread_id, end_ordinal_exclusive, end_byte_offset}`` pointing at the kept prefix of
        the older file, then two ``thread_settings_applied`` events); no older file changes, and
        ``codex exec resume <id>`` appends to the new file. Only paginated threads can be
        reverted: a legacy one raises :class:`AppServerError` ("thread/revert only supports
        paginated threads"), as the TUI's rewind fails on it. Keeping every turn does nothing.
        (0.169.0 has no ``thread/rollback``: "unknown variant".)"""
        before = {p: p.stat().st_size for p in self.rollouts()}
        with self.app_server(cwd) as app:
            ids = _turn_ids(app, session_id)
            if not 0 <= keep_turns <= len(ids):
                raise ValueError(f"keep_turns={keep_turns}, but the thread has {len(ids)} turns")
            if keep_turns < len(ids):
                app.request(
                    "thread/revert", {"threadId": session_id, "beforeTurnId": ids[keep_turns]}
                )
        after = {p: p.stat().st_size for p in self.rollouts()}
        return Rollback(
            kept=tuple(ids[:keep_turns]),
            dropped=tuple(ids[keep_turns:]),
            new_files=tuple(sorted(p for p in after if p not in before)),
            changed_files=tuple(sorted(p for p in after if p in before and after[p] != before[p])),
        )

    def thread_lock_held(self, session_id: str) -> bool:
        """Whether a Codex process holds the thread's writer lock: ``thread-writer-locks/<id>
        .lock`` is flock()ed (exclusive) while a process has the thread open for writing (a
        running ``codex exec``); the file stays after a kill but is then not held, and a
        normal exit removes it. Read from ``/proc/locks`` (Linux), so nothing is locked here."""
        lock = self.codex_home / "thread-writer-locks" / f"{session_id}.lock"
        try:
            inode = lock.stat().st_ino
        except FileNotFoundError:
            return False
        for line in Path("/proc/locks").read_text().splitlines():
            fields = line.split()
            if len(fields) > 5 and fields[1] == "FLOCK" and fields[5].endswith(f":{inode}"):
                return True
        return False


@dataclass(frozen=True, slots=True)
class Rollback:
    """What :meth:`CodexHome.rollback_turns` did: the turn ids kept and dropped, oldest first,
    and the rollout files it created or changed."""

    kept: tuple[str, ...]
    dropped: tuple[str, ...]
    new_files: tuple[Path, ...]
    changed_files: tuple[Path, ...]


def _turn_ids(app: AppServer, session_id: str) -> list[str]:
    app.request("thread/resume", {"threadId": session_id, "excludeTurns": True})
    ids: list[str] = []  # the list comes newest first
    cursor: str | None = None
    while True:
        params: dict[str, Any] = {"threadId": session_id}
        if cursor is not None:
            params["cursor"] = cursor
        page = app.request("thread/turns/list", params)
        ids.extend(t["id"] for t in page.get("data", []))
        cursor = page.get("nextCursor")
        if not cursor:
            break
    ids.reverse()
    return ids


CHATGPT_ACCOUNT_ID = "acct-segue-standin"


def _jwt(claims: dict[str, Any]) -> str:
    def part(value: dict[str, Any]) -> str:
        return base64.urlsafe_b64encode(json.dumps(value).encode()).rstrip(b"=").decode()

    return f"{part({'alg': 'none', 'typ': 'JWT'})}.{part(claims)}.c2ln"


def chatgpt_auth(plan: str = "plus") -> dict[str, Any]:
    """A ChatGPT ``auth.json`` as Codex 0.169.0 accepts it (see the issue 9 research)."""
    now = int(time.time())
    claims = {
        "chatgpt_plan_type": plan,
        "chatgpt_user_id": "user-segue",
        "chatgpt_account_id": CHATGPT_ACCOUNT_ID,
    }
    expiry = {"exp": now + 30 * 86400, "iat": now, "https://api.openai.com/auth": claims}
    return {
        "auth_mode": "chatgpt",
        "OPENAI_API_KEY": None,
        "tokens": {
            "id_token": _jwt({"email": "dev@example.test", **expiry}),
            "access_token": _jwt(expiry),
            "refresh_token": "rt-segue-standin",
            "account_id": CHATGPT_ACCOUNT_ID,
        },
        "last_refresh": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(now)),
    }


def session_id_of(rollout: Path) -> str:
    """The session id of a rollout file: the uuid after ``rollout-YYYY-MM-DDThh-mm-ss-``."""
    return rollout.stem[len("rollout-2026-01-01T00-00-00-") :][:36]


def read_rollout(path: Path) -> list[dict[str, Any]]:
    return [orjson.loads(line) for line in path.read_bytes().splitlines() if line.strip()]


# --------------------------------------------------------------------------- app-server


class AppServerError(RuntimeError):
    pass


class AppServer:
    """A minimal JSON-RPC client for ``codex app-server`` over stdio."""

    def __init__(self, home: CodexHome, cwd: Path) -> None:
        self.home = home
        self.cwd = cwd
        self._proc: subprocess.Popen[bytes] | None = None
        self._next_id = 0
        self._messages: list[dict[str, Any]] = []
        self._cond = threading.Condition()
        self._reader: threading.Thread | None = None

    def __enter__(self) -> AppServer:
        self.cwd.mkdir(parents=True, exist_ok=True)
        self._proc = subprocess.Popen(
            [str(codex_bin()), "app-server"],
            cwd=self.cwd,
            env=self.home.env(),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        self.request("initialize", {"clientInfo": {"name": "segue-testbed", "version": "0.1.0"}})
        self.notify("initialized", None)
        return self

    def __exit__(self, *exc: object) -> None:
        if self._proc is not None:
            assert self._proc.stdin is not None
            self._proc.stdin.close()
            try:
                self._proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()

    def _read(self) -> None:
        assert self._proc is not None and self._proc.stdout is not None
        for line in self._proc.stdout:
            try:
                msg = orjson.loads(line)
            except orjson.JSONDecodeError:
                continue
            with self._cond:
                self._messages.append(msg)
                self._cond.notify_all()
        with self._cond:
            self._cond.notify_all()

    def _send(self, msg: dict[str, Any]) -> None:
        assert self._proc is not None and self._proc.stdin is not None
        self._proc.stdin.write(orjson.dumps(msg) + b"\n")
        self._proc.stdin.flush()

    def notify(self, method: str, params: Any) -> None:
        msg: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            msg["params"] = params
        self._send(msg)

    def request(self, method: str, params: Any, timeout: float = 30.0) -> Any:
        self._next_id += 1
        rid = self._next_id
        self._send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
        deadline = time.monotonic() + timeout
        with self._cond:
            while True:
                for msg in self._messages:
                    if msg.get("id") == rid and "method" not in msg:
                        if "error" in msg:
                            raise AppServerError(f"{method}: {msg['error']}")
                        return msg.get("result")
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AppServerError(f"{method}: no answer in {timeout}s")
                self._cond.wait(left)

    def wait_notification(self, method: str, timeout: float = 30.0) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        with self._cond:
            seen = 0
            while True:
                for msg in self._messages[seen:]:
                    if msg.get("method") == method:
                        return msg
                seen = 0
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AppServerError(f"no {method} notification in {timeout}s")
                self._cond.wait(left)

    def notifications(self) -> Iterator[dict[str, Any]]:
        with self._cond:
            yield from [m for m in self._messages if "method" in m and "id" not in m]
