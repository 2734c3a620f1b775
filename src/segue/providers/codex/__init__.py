"""Codex: its registry entry."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from datetime import datetime
from pathlib import Path

from segue.formats.atomic import NativeSession, publish_session
from segue.formats.codex import paths, reader, writer
from segue.formats.codex.fork import current_file, prepare_fork
from segue.model.conversation import Item, Provider
from segue.providers.base import Env, HeadlessCommands, ProviderEntry, lazy
from segue.providers.codex import hooks, profile

__all__ = ["Codex"]


class Codex(ProviderEntry):
    provider = Provider.CODEX
    label = "Codex"
    command = "codex"
    mark = "C"
    home_variable = "CODEX_HOME"
    resume_words = ("resume",)
    headless_words = ("exec", "--skip-git-repo-check", "resume")
    compacts_on_arrival = True  # from the token count segue seeds
    headless = HeadlessCommands(
        compact=lazy("segue.providers.codex.headless:compact"),  # through its app-server
        summarize=lazy("segue.providers.codex.headless:summarize"),
    )

    home = staticmethod(paths.codex_home)
    session_files = staticmethod(paths.iter_session_files)
    recorded_session_id = staticmethod(paths.recorded_session_id)
    read = staticmethod(reader.read_session)
    read_lines = staticmethod(reader.read_lines)
    peek = lazy("segue.formats.codex.peek:peek")
    outline = lazy("segue.formats.codex.peek:outline")
    target_profile = staticmethod(profile.target_profile)
    select = staticmethod(writer.select)
    fork = staticmethod(prepare_fork)
    usage = lazy("segue.providers.codex.usage:read_usage")  # its app-server
    new_scan = lazy("segue.providers.codex.agents:new_scan")
    running_session = lazy("segue.providers.codex.agents:running_session")  # psutil
    install_hooks = staticmethod(hooks.install_hooks)
    uninstall_hooks = staticmethod(hooks.uninstall_hooks)
    hook_event = staticmethod(hooks.hook_event)

    def session_files_for(
        self, cwd: str, env: Env, problems: list[str] | None = None
    ) -> Iterator[Path]:
        for path in self.session_files(env, problems):
            if paths.recorded_cwd(path) in (cwd, None):
                yield path

    def recognises(self, path: Path, head: bytes) -> bool:
        if path.name.startswith("rollout-"):
            return True
        return b'"type":"session_meta"' in head or b'"type": "session_meta"' in head

    def session_id(self, path: Path) -> str:
        return paths.session_id_from_name(path) or path.stem

    def prepare(self, items: Sequence[Item], *, cwd: str, env: Env, now: datetime) -> NativeSession:
        return writer.prepare_session(items, cwd=cwd, codex_home=paths.codex_home(env), now=now)

    def publish(self, session: NativeSession, env: Env) -> list[str]:
        publish_session(session)
        warning = writer.request_rescan(paths.codex_home(env))
        return [warning] if warning else []

    def current_file(self, path: Path, env: Env) -> Path:
        return current_file(path)
