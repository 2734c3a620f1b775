"""``segue demo``: the main job end to end on a recorded session, for a user with none yet.

It copies a bundled session (a real Codex rollout: an agent that ran shell commands, compacted,
and then hit its usage limit) into a scratch home, and switches it to Claude Code there. Nothing
outside the scratch home is read or written.
"""

from __future__ import annotations

import shutil
import tempfile
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import orjson

from segue.conversation import Provider
from segue.formats.summarize import summarize
from segue.summary import SessionSummary
from segue.switch import Switch, switch_session


@dataclass(slots=True)
class Demo:
    home: Path
    source: SessionSummary
    switch: Switch
    about: dict[str, Any]


def bundled_session() -> tuple[Path, dict[str, Any]]:
    root = Path(str(resources.files("segue") / "data" / "demo"))
    about = orjson.loads((root / "session.json").read_bytes())
    return root, about


def run_demo(to: Provider = Provider.CLAUDE, home: Path | None = None) -> Demo:
    root, about = bundled_session()
    home = home or Path(tempfile.mkdtemp(prefix="segue-demo-"))
    shutil.copytree(root / "home", home, dirs_exist_ok=True)
    env = {"HOME": str(home), "SEGUE_STATE_DIR": str(home / ".segue")}
    source_path = home / str(about["transcript"]).removeprefix("home/")
    source = summarize(source_path, Provider(about["provider"]))
    switch = switch_session(str(source_path), to, env=env)
    return Demo(home, source, switch, about)
