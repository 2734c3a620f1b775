"""``segue demo``: the main job end to end on a recorded session, for a user with none yet.

It copies a bundled session (a real Codex rollout: an agent that ran shell commands, compacted,
and then hit its usage limit) into a scratch home, and switches it to Claude Code there. Nothing
outside the scratch home is read or written.
"""

from __future__ import annotations

import shutil
import tempfile
from importlib import resources
from pathlib import Path
from typing import Any

import msgspec
import orjson

from segue.model.conversation import Provider
from segue.model.session_info import SessionInfo
from segue.providers import default_target, entry
from segue.switch import Switch, switch_session


class Demo(msgspec.Struct):
    home: Path
    source: SessionInfo
    switch: Switch
    about: dict[str, Any]
    written: list[str]  # the new file's outline, one line per record


def bundled_session() -> tuple[Path, dict[str, Any]]:
    root = Path(str(resources.files("segue") / "data" / "demo"))
    return root, orjson.loads((root / "session.json").read_bytes())


def run_demo(to: Provider | None = None, home: Path | None = None) -> Demo:
    """Copy the bundled session into ``home`` (default: a new scratch folder) and switch it to
    ``to`` (default: another provider)."""
    root, about = bundled_session()
    home = home or Path(tempfile.mkdtemp(prefix="segue-demo-"))
    shutil.copytree(root / "home", home, dirs_exist_ok=True)
    state = str(home / ".segue")
    env = {"HOME": str(home), "SEGUE_STATE_DIR": state, "SEGUE_DATA_DIR": state}
    source_path = home / str(about["transcript"]).removeprefix("home/")
    provider = Provider(about["provider"])
    to = default_target(provider) if to is None else to
    source = entry(provider).peek(source_path)
    switch = switch_session(str(source_path), to, env=env)
    assert switch.path is not None, "the demo writes its switch"
    return Demo(home, source, switch, about, list(entry(to).outline(switch.path)))
