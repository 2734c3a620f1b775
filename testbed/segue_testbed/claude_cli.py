"""Drive the real Claude Code CLI (the pinned one in ``testbed/``) against a stand-in lane.

A :class:`ClaudeHome` is one scratch ``HOME`` (and ``CLAUDE_CONFIG_DIR``) in which the CLI runs
offline, without prompts, and with every environment variable it inherits chosen here. The CLI
runs in print mode (``claude -p``); later turns resume the session with ``--resume <id>``.

Running as root: ``--dangerously-skip-permissions`` is refused for root unless ``IS_SANDBOX=1``
is set (the CLI's own escape hatch for containers), so the environment sets it.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from segue_testbed.standin.server import Lane
from segue_testbed.testbed import CliMissing, cli_bin

CLAUDE_VERSION = "2.1.328"
OAUTH_TOKEN = "sk-ant-oat01-segue-standin-token"
API_KEY = "sk-ant-api03-segue-standin-key"

DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

# Everything the CLI needs to stay offline and quiet. Nothing else leaks in from os.environ.
OFFLINE_ENV: dict[str, str] = {
    "LANG": "C.UTF-8",
    "LC_ALL": "C.UTF-8",
    "TERM": "dumb",
    "TZ": "UTC",
    "NO_COLOR": "1",
    "IS_SANDBOX": "1",  # lets root use --dangerously-skip-permissions
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",  # no telemetry, updates, /api/hello probe
    "DISABLE_TELEMETRY": "1",
    "DISABLE_AUTOUPDATER": "1",
    "DISABLE_ERROR_REPORTING": "1",
    "CLAUDE_CODE_DISABLE_FEEDBACK_SURVEY": "1",
    "CLAUDE_CODE_DISABLE_TERMINAL_TITLE": "1",
    "GIT_CONFIG_NOSYSTEM": "1",  # its git: the scratch home's config, not the machine's
}


ClaudeCliMissing = CliMissing


def claude_bin() -> Path:
    """The CLI: ``$SEGUE_CLAUDE_BIN``, else ``<repo>/testbed/node_modules/.bin/claude``."""
    return cli_bin("claude", "SEGUE_CLAUDE_BIN")


def encode_project_dir(cwd: Path) -> str:
    """Claude's folder name for a cwd: ``realpath(cwd)``, each non-alphanumeric char as ``-``."""
    real = os.path.realpath(cwd)
    encoded = "".join(c if c.isascii() and c.isalnum() else "-" for c in real)
    if len(encoded) > 200:
        raise ValueError(f"cwd too long for the simple encoding: {real}")
    return encoded


@dataclass(frozen=True, slots=True)
class RunResult:
    """One CLI invocation."""

    args: tuple[str, ...]
    returncode: int
    stdout: str
    stderr: str
    seconds: float

    def check(self) -> RunResult:
        if self.returncode != 0:
            raise RuntimeError(
                f"claude exited {self.returncode}: {' '.join(self.args)}\n"
                f"stdout: {self.stdout[-2000:]}\nstderr: {self.stderr[-2000:]}"
            )
        return self


class ClaudeHome:
    """A scratch home for Claude Code, wired to one stand-in lane.

    ``oauth=True`` makes the CLI a subscriber (``CLAUDE_CODE_OAUTH_TOKEN``: Bearer auth plus the
    OAuth beta, unified rate-limit handling); otherwise it uses an API key (``x-api-key``).
    """

    def __init__(self, root: Path, lane: Lane, *, oauth: bool = False) -> None:
        self.root = root
        self.lane = lane
        self.oauth = oauth
        self.home = root / "home"
        self.config_dir = self.home / ".claude"
        self.config_dir.mkdir(parents=True, exist_ok=True)
        self._write_config()

    # ------------------------------------------------------------------ setup

    def _write_config(self) -> None:
        config: dict[str, Any] = {
            "hasCompletedOnboarding": True,
            "lastOnboardingVersion": CLAUDE_VERSION,
            "bypassPermissionsModeAccepted": True,
            "autoUpdates": False,
            "projects": {},
        }
        settings: dict[str, Any] = {"autoUpdatesChannel": "stable", "cleanupPeriodDays": 99999}
        (self.config_dir / ".claude.json").write_bytes(orjson.dumps(config))
        (self.config_dir / "settings.json").write_bytes(orjson.dumps(settings))

    def trust(self, cwd: Path) -> None:
        """Mark a folder as trusted (only the interactive CLI asks; harmless for ``-p``)."""
        path = self.config_dir / ".claude.json"
        config = orjson.loads(path.read_bytes())
        config.setdefault("projects", {})[os.path.realpath(cwd)] = {
            "hasTrustDialogAccepted": True,
            "hasCompletedProjectOnboarding": True,
        }
        path.write_bytes(orjson.dumps(config))

    def env(
        self,
        extra: Mapping[str, str] | None = None,
        *,
        lane: Lane | None = None,
        oauth: bool | None = None,
    ) -> dict[str, str]:
        """The CLI's whole environment; ``lane`` and ``oauth`` (else the home's) let several
        CLIs share this home, each talking to a lane of its own."""
        env = {
            "PATH": DEFAULT_PATH,
            "SHELL": "/bin/bash",
            "HOME": str(self.home),
            "CLAUDE_CONFIG_DIR": str(self.config_dir),
            "ANTHROPIC_BASE_URL": (lane or self.lane).anthropic_base_url,
            **OFFLINE_ENV,
        }
        if self.oauth if oauth is None else oauth:
            env["CLAUDE_CODE_OAUTH_TOKEN"] = OAUTH_TOKEN
        else:
            env["ANTHROPIC_API_KEY"] = API_KEY
        env.update(extra or {})
        return env

    def args(
        self, prompt: str, *, resume: str | None = None, extra_args: Sequence[str] = ()
    ) -> list[str]:
        args = [str(claude_bin()), "-p", prompt, "--dangerously-skip-permissions"]
        if resume is not None:
            args += ["--resume", resume]
        return [*args, *extra_args]

    # ------------------------------------------------------------------ running

    def run(
        self,
        prompt: str,
        *,
        cwd: Path,
        resume: str | None = None,
        extra_args: Sequence[str] = (),
        env: Mapping[str, str] | None = None,
        timeout: float = 60.0,
    ) -> RunResult:
        """Run one ``claude -p`` turn to the end."""
        args = self.args(prompt, resume=resume, extra_args=extra_args)
        return self.run_args(args, cwd=cwd, env=env, timeout=timeout)

    def run_killed(
        self,
        prompt: str,
        *,
        cwd: Path,
        resume: str | None = None,
        until_requests: int,
        sig: signal.Signals = signal.SIGKILL,
        extra_args: Sequence[str] = (),
        timeout: float = 60.0,
    ) -> RunResult:
        """Start a turn, wait until the lane has seen ``until_requests`` model requests, kill it."""
        self.trust(cwd)
        args = self.args(prompt, resume=resume, extra_args=extra_args)
        started = time.monotonic()
        proc = subprocess.Popen(
            args,
            cwd=cwd,
            env=self.env(),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            while len(self.model_requests()) < until_requests:
                if proc.poll() is not None:
                    break
                if time.monotonic() - started > timeout:
                    raise TimeoutError(f"no model request {until_requests} within {timeout}s")
                time.sleep(0.05)
            time.sleep(0.3)  # let the CLI settle into reading the stalled stream
            if proc.poll() is None:
                proc.send_signal(sig)
            stdout, stderr = proc.communicate(timeout=timeout)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        return RunResult(tuple(args), proc.returncode, stdout, stderr, time.monotonic() - started)

    def model_requests(self) -> list[Any]:
        """The lane's ``POST .../messages`` requests (not ``count_tokens``)."""
        return [
            r
            for r in self.lane.requests_for("anthropic")
            if r.method == "POST" and r.path.split("?")[0].endswith("/messages")
        ]

    # ------------------------------------------------------------------ results

    @property
    def projects_dir(self) -> Path:
        return self.config_dir / "projects"

    def project_dir(self, cwd: Path) -> Path:
        return self.projects_dir / encode_project_dir(cwd)

    def transcripts(self) -> list[Path]:
        """Every main transcript the CLI wrote (``projects/<enc>/<id>.jsonl``), sorted."""
        if not self.projects_dir.is_dir():
            return []
        return sorted(self.projects_dir.glob("*/*.jsonl"))

    def session_files(self) -> list[Path]:
        """Transcripts plus the per-session folders' files (subagent sidechains and their meta)."""
        files = set(self.transcripts())
        for transcript in self.transcripts():
            folder = transcript.with_suffix("")
            if folder.is_dir():
                files.update(p for p in folder.rglob("*") if p.is_file())
        return sorted(files)

    def only_session_id(self) -> str:
        transcripts = self.transcripts()
        if len(transcripts) != 1:
            raise RuntimeError(f"expected one transcript, found {[str(t) for t in transcripts]}")
        return transcripts[0].stem

    def copy_sessions(self, dest_home: Path) -> list[Path]:
        """Copy only the session files into ``dest_home`` (same layout below the home)."""
        copied = []
        for src in self.session_files():
            dest = dest_home / src.relative_to(self.home)
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest)
            copied.append(dest)
        return copied

    # ------------------------------------------------------------------ rewinding and argv

    def transcript_for(self, session_id: str) -> Path:
        """The main transcript ``projects/<enc>/<session_id>.jsonl``."""
        found = [p for p in self.transcripts() if p.stem == session_id]
        if len(found) != 1:
            raise FileNotFoundError(f"no single transcript for {session_id}: {found}")
        return found[0]

    def args_with_separator(
        self, prompt: str, *, resume: str | None = None, extra_args: Sequence[str] = ()
    ) -> list[str]:
        """Like :meth:`args`, but the prompt goes last, after ``--``, so that a prompt starting
        with ``-`` ("--version", "- fix the bug") is sent as the prompt. Everything after ``--``
        is positional: ``--resume`` must come before it (``-p -- X --resume ID`` starts a new
        session with the prompt X)."""
        args = [str(claude_bin()), "-p", "--dangerously-skip-permissions"]
        if resume is not None:
            args += ["--resume", resume]
        return [*args, *extra_args, "--", prompt]

    def run_args(
        self,
        args: Sequence[str],
        *,
        cwd: Path,
        env: Mapping[str, str] | None = None,
        timeout: float = 60.0,
    ) -> RunResult:
        """Run a whole argv (``args[0]`` the CLI) in this home, to the end."""
        self.trust(cwd)
        started = time.monotonic()
        proc = subprocess.run(
            list(args),
            cwd=cwd,
            env=self.env(env),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
        return RunResult(
            tuple(args), proc.returncode, proc.stdout, proc.stderr, time.monotonic() - started
        )

    def rewind_point(self, session_id: str, keep_turns: int) -> str:
        """The ``--resume-session-at`` uuid that keeps the first ``keep_turns`` turns."""
        return rewind_point(read_transcript(self.transcript_for(session_id)), keep_turns)

    def rewind_run(
        self,
        session_id: str,
        keep_turns: int,
        prompt: str,
        *,
        cwd: Path,
        fork: bool = False,
        extra_args: Sequence[str] = (),
        env: Mapping[str, str] | None = None,
        timeout: float = 60.0,
    ) -> RunResult:
        """Rewind ``session_id`` to just after the turn of its ``keep_turns``-th typed prompt and
        run ``prompt`` from there: ``claude -p --dangerously-skip-permissions --resume ID
        --resume-session-at UUID [--fork-session] -- PROMPT``. Without ``fork`` the new turn is a
        new branch appended to the same transcript (a later plain ``--resume`` continues it);
        with ``fork`` it goes to a new session file (the new ``.jsonl``), the old one untouched."""
        uuid = self.rewind_point(session_id, keep_turns)
        extra = ["--resume-session-at", uuid, *(["--fork-session"] if fork else []), *extra_args]
        args = self.args_with_separator(prompt, resume=session_id, extra_args=extra)
        return self.run_args(args, cwd=cwd, env=env, timeout=timeout)

    def live_sessions(self) -> list[dict[str, Any]]:
        """The ``<config>/sessions/<pid>.json`` files of running CLIs: ``pid``, ``sessionId``,
        ``cwd``, ``status`` (``"busy"`` while a turn runs), ``statusUpdatedAt``, ``kind``,
        ``entrypoint``, ... The CLI deletes its file when it exits (on SIGTERM too; a SIGKILL
        leaves it behind)."""
        folder = self.config_dir / "sessions"
        out: list[dict[str, Any]] = []
        for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
            try:
                data = orjson.loads(path.read_bytes())
            except (OSError, orjson.JSONDecodeError):
                continue  # being written or removed
            if isinstance(data, dict):
                out.append(data)
        return out


# --------------------------------------------------------------------------- rewinding
#
# Claude Code 2.1.328 rewinds a print-mode resume with the hidden ``--resume-session-at <uuid>``:
# the conversation is loaded only up to and including that chain entry, and the new prompt's
# record (appended to the SAME transcript, same session id) gets ``parentUuid = <uuid>``. The
# entry must lie on the active chain (the branch a plain ``--resume`` would load): an entry of an
# abandoned branch is refused with "No message found with message.uuid of: <uuid>" (exit 1).
# A later plain ``--resume`` continues the newest branch. With ``--fork-session`` the kept chain
# is copied into a new ``<new id>.jsonl`` (same record uuids, new ``sessionId``) and the old file
# is left as it was.

# Typed-looking user records that are not typed prompts.
_NOT_PROMPT_PREFIXES = (
    "<command-name>",
    "<command-message>",
    "<local-command-",
    "[Request interrupted by user",
)


def read_transcript(path: Path) -> list[dict[str, Any]]:
    """Every JSON line of a Claude transcript, in file order."""
    return [orjson.loads(line) for line in path.read_bytes().splitlines() if line.strip()]


def _leaf_uuid(records: Sequence[Mapping[str, Any]], by_uuid: Mapping[str, Any]) -> str | None:
    for record in reversed(records):  # Claude's own marker of the branch it will resume
        if record.get("type") == "last-prompt" and record.get("leafUuid") in by_uuid:
            return str(record["leafUuid"])
    for record in reversed(records):
        if isinstance(record.get("uuid"), str) and not record.get("isSidechain"):
            return str(record["uuid"])
    return None


def active_chain(records: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The chain a plain ``--resume`` loads, root first: from the leaf named by the last
    ``last-prompt`` record back along ``parentUuid`` (``logicalParentUuid`` across a compaction
    boundary, whose ``parentUuid`` is null)."""
    by_uuid = {r["uuid"]: r for r in records if isinstance(r.get("uuid"), str)}
    chain: list[Mapping[str, Any]] = []
    seen: set[str] = set()
    current = _leaf_uuid(records, by_uuid)
    while current is not None and current in by_uuid and current not in seen:
        seen.add(current)
        record = by_uuid[current]
        chain.append(record)
        current = record.get("parentUuid") or record.get("logicalParentUuid")
    chain.reverse()
    return chain


def is_typed_prompt(record: Mapping[str, Any]) -> bool:
    """A user record that is a prompt a person (or ``-p``) typed: not a tool result, meta or
    compaction-summary record, slash-command echo or interruption marker."""
    if record.get("type") != "user" or record.get("isSidechain"):
        return False
    if record.get("isMeta") or record.get("isCompactSummary") or "toolUseResult" in record:
        return False
    content = (record.get("message") or {}).get("content")
    if isinstance(content, list):
        if any(isinstance(b, dict) and b.get("type") == "tool_result" for b in content):
            return False
        texts = [b.get("text", "") for b in content if isinstance(b, dict) and "text" in b]
        text = "".join(str(t) for t in texts)
    elif isinstance(content, str):
        text = content
    else:
        return False
    return not text.startswith(_NOT_PROMPT_PREFIXES)


def typed_prompts(records: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The typed prompt records of the active chain, oldest first (one per turn)."""
    return [r for r in active_chain(records) if is_typed_prompt(r)]


def rewind_point(records: Sequence[Mapping[str, Any]], keep_turns: int) -> str:
    """The uuid to pass to ``--resume-session-at`` to keep the first ``keep_turns`` turns: the
    last chain entry of turn ``keep_turns``, i.e. the ``parentUuid`` of the next typed prompt
    (often the turn's last assistant record, sometimes an attachment after it such as a
    ``prompt_snapshot``); when every turn is kept, the chain's leaf. A point before the last
    compaction is refused (ValueError): Claude cannot resume there."""
    prompts = typed_prompts(records)
    if keep_turns < 1:
        raise ValueError("Claude cannot resume at zero turns; start a new session instead")
    if keep_turns > len(prompts):
        raise ValueError(f"keep_turns={keep_turns}, but the session has {len(prompts)} turns")
    chain = active_chain(records)
    if keep_turns == len(prompts):
        return str(chain[-1]["uuid"])
    parent = prompts[keep_turns].get("parentUuid")
    if not isinstance(parent, str):
        raise ValueError(f"turn {keep_turns + 1}'s prompt has no parentUuid")
    # Claude loads a compacted session from its last compact boundary on; an entry before it is
    # refused ("No message found with message.uuid of: ...").
    order = {str(r.get("uuid")): i for i, r in enumerate(chain)}
    boundaries = [i for i, r in enumerate(chain) if r.get("subtype") == "compact_boundary"]
    if boundaries and order.get(parent, -1) < boundaries[-1]:
        raise ValueError(f"turn {keep_turns} ends before the session's last compaction")
    return parent
