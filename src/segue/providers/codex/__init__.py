"""Codex: its registry entry."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from segue.formats.atomic import NativeSession, publish_session
from segue.formats.codex import paths, reader, writer
from segue.model.conversation import Conversation, Item, Provider
from segue.model.session_info import SessionInfo
from segue.providers.base import (
    Env,
    HeadlessCommands,
    ProviderEntry,
    RunningSession,
    UsageReading,
)
from segue.providers.codex.profile import target_profile
from segue.providers.hooks import HookChange, HookEvent

if TYPE_CHECKING:
    import psutil

__all__ = ["Codex"]


def _compact(executable: str, path: Path, session_id: str, cwd: str, env: Env) -> tuple[bool, str]:
    from segue.providers.codex.compact import compact

    return compact(executable, path, session_id, cwd, env)


def _summarize(executable: str, prompt: str, env: Env) -> tuple[str | None, str]:
    from segue.providers.codex.summarize import summarize

    return summarize(executable, prompt, env)


class Codex(ProviderEntry):
    provider: ClassVar[Provider] = Provider.CODEX
    label: ClassVar[str] = "Codex"
    command: ClassVar[str] = "codex"
    mark: ClassVar[str] = "C"
    home_variable: ClassVar[str | None] = "CODEX_HOME"
    compacts_on_arrival: ClassVar[bool] = True  # from the token count segue seeds

    def home(self, env: Env) -> Path:
        return paths.codex_home(env)

    def session_files(self, env: Env, problems: list[str] | None = None) -> Iterator[Path]:
        return paths.iter_session_files(env, problems)

    def session_files_for(
        self, cwd: str, env: Env, problems: list[str] | None = None
    ) -> Iterator[Path]:
        for path in paths.iter_session_files(env, problems):
            if paths.recorded_cwd(path) in (cwd, None):
                yield path

    def recognises(self, path: Path, head: bytes) -> bool:
        if path.name.startswith("rollout-"):
            return True
        return b'"type":"session_meta"' in head or b'"type": "session_meta"' in head

    def session_id(self, path: Path) -> str:
        return paths.session_id_from_name(path) or path.stem

    def recorded_id(self, path: Path) -> str | None:
        recorded = paths.recorded_session_id(path)
        return recorded if recorded != self.session_id(path) else None

    read = staticmethod(reader.read_session)

    def read_lines(self, path: Path, lines: Iterable[bytes]) -> Conversation:
        return reader.read_lines(path, lines)

    def peek(self, path: Path) -> SessionInfo:
        from segue.formats.codex.peek import peek

        return peek(path)

    def outline(self, path: Path) -> Iterator[str]:
        from segue.formats.codex.outline import outline

        return outline(path)

    target_profile = staticmethod(target_profile)
    select = staticmethod(writer.select)

    def new_scan(self) -> None:
        from segue.providers.codex.agents import new_scan

        new_scan()

    def running_session(self, process: psutil.Process) -> RunningSession | None:
        from segue.providers.codex.agents import running_session  # psutil: only for agents

        return running_session(process)

    def usage(self, env: Env, *, remote: bool, now: datetime) -> UsageReading:
        from segue.providers.codex.usage import read_usage

        return read_usage(env, remote=remote, now=now)

    headless: ClassVar[HeadlessCommands | None] = HeadlessCommands(_compact, _summarize)

    def prepare(self, items: Sequence[Item], *, cwd: str, env: Env, now: datetime) -> NativeSession:
        return writer.prepare_session(items, cwd=cwd, codex_home=paths.codex_home(env), now=now)

    def publish(self, session: NativeSession, env: Env) -> list[str]:
        publish_session(session)
        warning = writer.request_rescan(paths.codex_home(env))
        return [warning] if warning else []

    def current_file(self, path: Path, env: Env) -> Path:
        from segue.formats.codex import fork

        return fork.current_file(path)

    def fork(
        self,
        parent: Path,
        delta: Sequence[Item],
        handoff_text: str | None,
        *,
        cwd: str,
        env: Env,
        now: datetime,
    ) -> NativeSession:
        home = paths.codex_home(env)
        from segue.formats.codex import fork

        return fork.prepare_fork(parent, delta, handoff_text=handoff_text, codex_home=home, now=now)

    def headless_argv(self, executable: str, session_id: str, prompt: str) -> list[str]:
        return [executable, "exec", "--skip-git-repo-check", "resume", session_id, "--", prompt]

    def resume_args(self, session_id: str) -> list[str]:
        return ["resume", session_id]

    def install_hooks(
        self, env: Env, command: Sequence[str], *, dry_run: bool = False
    ) -> HookChange | None:
        from segue.providers.codex import hooks

        return hooks.install_hooks(env, command, dry_run=dry_run)

    def uninstall_hooks(self, env: Env, *, dry_run: bool = False) -> HookChange | None:
        from segue.providers.codex import hooks

        return hooks.uninstall_hooks(env, dry_run=dry_run)

    def hook_event(self, args: Sequence[str], stdin: bytes) -> HookEvent:
        from segue.providers.codex import hooks

        return hooks.hook_event(args, stdin)
