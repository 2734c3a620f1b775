"""Drive the real GitHub Copilot CLI (the pinned one in ``testbed/``) against a stand-in lane.

A :class:`CopilotHome` is one scratch ``HOME`` in which the CLI runs offline in its BYOK mode: no
GitHub login, ``COPILOT_OFFLINE=true``, and its provider pointed at the lane's Anthropic API
(``COPILOT_PROVIDER_TYPE=anthropic``), so the lane's request log shows exactly what history it sent.
Turns run headless (``copilot -p PROMPT --allow-all-tools``); later turns resume the session with
``--resume=<id>``.

The CLI unpacks its own JavaScript (about 235 MB) into ``$XDG_CACHE_HOME/copilot/pkg`` the first
time it runs: every home shares one cache folder (:func:`shared_cache`), so only the first run
pays it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from segue_testbed.standin.server import Lane
from segue_testbed.testbed import cli_bin

COPILOT_VERSION = "1.0.102"
MODEL = "claude-sonnet-4.5"
API_KEY = "sk-copilot-standin-key"
DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

OFFLINE_ENV: dict[str, str] = {
    "LANG": "C.UTF-8",
    "LC_ALL": "C.UTF-8",
    "TERM": "dumb",
    "TZ": "UTC",
    "NO_COLOR": "1",
    "COPILOT_OFFLINE": "true",  # no GitHub login, telemetry or update check
    "COPILOT_AUTO_UPDATE": "false",
    "COPILOT_PROVIDER_TYPE": "anthropic",
    "COPILOT_PROVIDER_API_KEY": API_KEY,
    "COPILOT_MODEL": MODEL,
    "GIT_CONFIG_NOSYSTEM": "1",
}


def copilot_bin() -> Path:
    """The CLI: ``$SEGUE_COPILOT_BIN``, else ``<repo>/testbed/node_modules/.bin/copilot``."""
    return cli_bin("copilot", "SEGUE_COPILOT_BIN")


def shared_cache() -> Path:
    """One cache folder for every scratch home of this machine's user (the CLI's unpacked code)."""
    path = Path(tempfile.gettempdir()) / f"segue-copilot-cache-{os.getuid()}"
    path.mkdir(mode=0o700, exist_ok=True)
    return path


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
                f"copilot exited {self.returncode}: {' '.join(self.args)}\n"
                f"stdout: {self.stdout[-2000:]}\nstderr: {self.stderr[-2000:]}"
            )
        return self


class CopilotHome:
    """A scratch home for Copilot CLI, wired to one stand-in lane."""

    def __init__(self, root: Path, lane: Lane) -> None:
        self.root = root
        self.lane = lane
        self.home = root / "home"
        self.copilot_home = self.home / ".copilot"
        self.copilot_home.mkdir(parents=True, exist_ok=True)

    @property
    def state_dir(self) -> Path:
        return self.copilot_home / "session-state"

    def env(
        self, extra: Mapping[str, str] | None = None, *, lane: Lane | None = None
    ) -> dict[str, str]:
        """The CLI's whole environment; nothing leaks in from ``os.environ``."""
        env = {
            "PATH": DEFAULT_PATH,
            "SHELL": "/bin/bash",
            "HOME": str(self.home),
            "XDG_CACHE_HOME": str(shared_cache()),
            "COPILOT_PROVIDER_BASE_URL": (lane or self.lane).anthropic_base_url,
            **OFFLINE_ENV,
        }
        env.update(extra or {})
        return env

    def args(self, prompt: str, *, resume: str | None = None) -> list[str]:
        """A headless turn; the prompt rides in ``-p``'s own argument, so one that starts with
        ``-`` is still the prompt."""
        args = [str(copilot_bin())]
        if resume is not None:
            args.append(f"--resume={resume}")
        return [*args, f"--prompt={prompt}", "--allow-all-tools"]

    def run(
        self,
        prompt: str,
        *,
        cwd: Path,
        resume: str | None = None,
        env: Mapping[str, str] | None = None,
        timeout: float = 120.0,
    ) -> RunResult:
        """Run one headless turn to the end."""
        return self.run_args(self.args(prompt, resume=resume), cwd=cwd, env=env, timeout=timeout)

    def run_args(
        self,
        args: Sequence[str],
        *,
        cwd: Path,
        env: Mapping[str, str] | None = None,
        timeout: float = 120.0,
    ) -> RunResult:
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

    def model_requests(self) -> list[object]:
        """The lane's ``POST .../messages`` requests."""
        return [
            r
            for r in self.lane.requests_for("anthropic")
            if r.method == "POST" and r.path.split("?")[0].endswith("/messages")
        ]

    # ------------------------------------------------------------------ results

    def sessions(self) -> list[Path]:
        """Every session's ``events.jsonl``, sorted."""
        if not self.state_dir.is_dir():
            return []
        return sorted(self.state_dir.glob("*/events.jsonl"))

    def only_session_id(self) -> str:
        found = self.sessions()
        if len(found) != 1:
            raise RuntimeError(f"expected one session, found {[str(p) for p in found]}")
        return found[0].parent.name

    def events_for(self, session_id: str) -> Path:
        return self.state_dir / session_id / "events.jsonl"

    def copy_sessions(self, dest_home: Path) -> list[Path]:
        """Copy each session's ``events.jsonl`` and ``workspace.yaml`` into ``dest_home`` (same
        layout below the home); locks, logs and the CLI's database are left out."""
        copied = []
        for events in self.sessions():
            for src in (events, events.with_name("workspace.yaml")):
                if not src.is_file():
                    continue
                dest = dest_home / src.relative_to(self.home)
                dest.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(src, dest)
                copied.append(dest)
        return copied
