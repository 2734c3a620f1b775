"""Claude Code: its registry entry."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from segue.formats.atomic import NativeSession, publish_session
from segue.formats.claude import paths, reader, writer
from segue.model.conversation import Conversation, Item, Provider
from segue.model.session_info import SessionInfo
from segue.providers.base import (
    Env,
    HeadlessCommands,
    ProviderEntry,
    RunningSession,
    UsageReading,
)
from segue.providers.claude.profile import model_key, target_profile
from segue.providers.hooks import HookChange, HookEvent

if TYPE_CHECKING:
    import psutil

__all__ = ["ClaudeCode"]


def _compact(executable: str, path: Path, session_id: str, cwd: str, env: Env) -> tuple[bool, str]:
    from segue.providers.claude.compact import compact

    return compact(executable, path, session_id, cwd, env)


def _summarize(executable: str, prompt: str, env: Env) -> tuple[str | None, str]:
    from segue.providers.claude.summarize import summarize

    return summarize(executable, prompt, env)


class ClaudeCode(ProviderEntry):
    provider: ClassVar[Provider] = Provider.CLAUDE
    label: ClassVar[str] = "Claude Code"
    command: ClassVar[str] = "claude"
    mark: ClassVar[str] = "L"
    home_variable: ClassVar[str | None] = "CLAUDE_CONFIG_DIR"

    def home(self, env: Env) -> Path:
        return paths.config_dir(env)

    def session_files(self, env: Env, problems: list[str] | None = None) -> Iterator[Path]:
        return paths.iter_session_files(env, problems)

    def session_files_for(
        self, cwd: str, env: Env, problems: list[str] | None = None
    ) -> Iterator[Path]:
        return paths.session_files_for(cwd, env, problems)

    def recognises(self, path: Path, head: bytes) -> bool:
        # where Claude Code keeps transcripts (``projects/<encoded cwd>/<uuid>.jsonl``), whatever
        # the records (one holding only metadata has none of the markers)
        where = path.parent.parent.name == "projects" and paths.looks_like_session_id(path.stem)
        if not head.strip() or where:
            return path.suffix == ".jsonl" and paths.looks_like_session_id(path.stem)
        return any(marker in head for marker in paths.TRANSCRIPT_MARKERS)

    def session_id(self, path: Path) -> str:
        return path.stem

    def recorded_id(self, path: Path) -> str | None:
        recorded = paths.recorded_session_id(path)
        return recorded if recorded != path.stem else None

    read = staticmethod(reader.read_session)

    def read_lines(self, path: Path, lines: Iterable[bytes]) -> Conversation:
        return reader.read_lines(path, lines, follow_chain=False)

    def peek(self, path: Path) -> SessionInfo:
        from segue.formats.claude.peek import peek

        return peek(path)

    def outline(self, path: Path) -> Iterator[str]:
        from segue.formats.claude.outline import outline

        return outline(path)

    target_profile = staticmethod(target_profile)
    select = staticmethod(writer.select)

    def running_session(self, process: psutil.Process) -> RunningSession | None:
        from segue.providers.claude.agents import running_session  # psutil: only for agents

        return running_session(process)

    def usage(self, env: Env, *, remote: bool, now: datetime) -> UsageReading:
        from segue.providers.claude.usage import read_usage

        return read_usage(env, remote=remote, now=now)

    headless: ClassVar[HeadlessCommands | None] = HeadlessCommands(_compact, _summarize)

    def prepare(self, items: Sequence[Item], *, cwd: str, env: Env, now: datetime) -> NativeSession:
        return writer.prepare_session(items, cwd=cwd, env=env, now=now)

    def publish(self, session: NativeSession, env: Env) -> list[str]:
        publish_session(session)
        return []

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
        from segue.formats.claude import fork

        return fork.prepare_fork(parent, delta, handoff_text=handoff_text, cwd=cwd, now=now)

    def headless_argv(self, executable: str, session_id: str, prompt: str) -> list[str]:
        return [executable, "-p", "--resume", session_id, "--", prompt]

    def model_key(self, model: str) -> str:
        return model_key(model)

    def resume_args(self, session_id: str) -> list[str]:
        return ["--resume", session_id]

    def install_hooks(
        self, env: Env, command: Sequence[str], *, dry_run: bool = False
    ) -> HookChange | None:
        from segue.providers.claude import hooks

        return hooks.install_hooks(env, command, dry_run=dry_run)

    def uninstall_hooks(self, env: Env, *, dry_run: bool = False) -> HookChange | None:
        from segue.providers.claude import hooks

        return hooks.uninstall_hooks(env, dry_run=dry_run)

    def hook_event(self, args: Sequence[str], stdin: bytes) -> HookEvent:
        from segue.providers.claude import hooks

        return hooks.hook_event(args, stdin)
