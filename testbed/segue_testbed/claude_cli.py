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

    def env(self, extra: Mapping[str, str] | None = None) -> dict[str, str]:
        """The CLI's whole environment."""
        env = {
            "PATH": DEFAULT_PATH,
            "SHELL": "/bin/bash",
            "HOME": str(self.home),
            "CLAUDE_CONFIG_DIR": str(self.config_dir),
            "ANTHROPIC_BASE_URL": self.lane.anthropic_base_url,
            **OFFLINE_ENV,
        }
        if self.oauth:
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
        self.trust(cwd)
        args = self.args(prompt, resume=resume, extra_args=extra_args)
        started = time.monotonic()
        proc = subprocess.run(
            args,
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
