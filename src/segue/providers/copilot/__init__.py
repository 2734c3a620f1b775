"""GitHub Copilot CLI: its registry entry."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

from segue.formats.atomic import NativeSession, publish
from segue.formats.copilot import paths, reader, writer
from segue.formats.copilot.fork import prepare_fork
from segue.formats.jsonl import head_lines
from segue.model.conversation import Item, Provider
from segue.model.errors import SegueError
from segue.providers.base import Env, ProviderEntry, lazy
from segue.providers.copilot import hooks, profile

__all__ = ["Copilot"]


class Copilot(ProviderEntry):
    provider = Provider("copilot")
    label = "Copilot CLI"
    command = "copilot"
    mark = "P"
    home_variable = "COPILOT_HOME"
    resume_words = ("--resume",)  # (measured: ``copilot --resume <id>`` as ``--resume=<id>``)
    headless_words = ("--resume",)  # (unused: the prompt rides in ``--prompt=``, below)

    home = staticmethod(paths.copilot_home)
    session_files = staticmethod(paths.iter_session_files)
    session_id = staticmethod(paths.session_id_of)
    recorded_session_id = staticmethod(paths.recorded_session_id)
    read = staticmethod(reader.read_session)
    read_lines = staticmethod(reader.read_lines)
    peek = lazy("segue.formats.copilot.peek:peek")
    outline = lazy("segue.formats.copilot.peek:outline")
    target_profile = staticmethod(profile.target_profile)
    select = staticmethod(writer.select)
    fork = staticmethod(prepare_fork)
    usage = lazy("segue.providers.copilot.usage:read_usage")
    running_session = lazy("segue.providers.copilot.agents:running_session")  # psutil
    install_hooks = staticmethod(hooks.install_hooks)
    uninstall_hooks = staticmethod(hooks.uninstall_hooks)
    hook_event = staticmethod(hooks.hook_event)

    def recognises(self, path: Path, head: bytes) -> bool:
        if path.name == paths.EVENTS and paths.is_session_name(path.parent.name):
            return True
        return b'"type":"session.start"' in head and b'"copilotVersion"' in head

    def prepare(self, items: Sequence[Item], *, cwd: str, env: Env, now: datetime) -> NativeSession:
        return writer.prepare_session(items, state=paths.state_dir(env), cwd=cwd, now=now)

    def publish(self, session: NativeSession, env: Env) -> list[str]:
        """The event log, then its ``workspace.yaml`` (which the CLI writes itself when it
        resumes the session, so a failure is only a warning)."""
        super().publish(session, env)
        try:
            cwd = reader.read_lines(session.path, head_lines(session.path)).meta.cwd or ""
            yaml = writer.workspace_yaml(session.session_id, cwd, datetime.now(UTC))
            publish(session.path.with_name(paths.WORKSPACE), [yaml])
        except SegueError as exc:
            return [f"{session.path.parent}: workspace.yaml not written ({exc})"]
        return []

    def headless_argv(self, executable: str, session_id: str, prompt: str) -> list[str]:
        # the prompt in -p's own argument: one that starts with "-" is still the prompt
        return [executable, f"--resume={session_id}", f"--prompt={prompt}"]
