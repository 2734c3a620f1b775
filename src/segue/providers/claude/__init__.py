"""Claude Code: its registry entry."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from segue.formats.claude import paths, reader, writer
from segue.formats.claude.fork import prepare_fork
from segue.model.conversation import Conversation, Provider
from segue.providers.base import HeadlessCommands, ProviderEntry, lazy
from segue.providers.claude import hooks, profile
from segue.providers.claude.usage import read_usage

__all__ = ["ClaudeCode"]


class ClaudeCode(ProviderEntry):
    provider = Provider.CLAUDE
    label = "Claude Code"
    command = "claude"
    mark = "L"
    home_variable = "CLAUDE_CONFIG_DIR"
    known_by_content = True
    resume_words = ("--resume",)
    headless_words = ("-p", "--resume")
    headless = HeadlessCommands(
        compact=lazy("segue.providers.claude.headless:compact"),
        summarize=lazy("segue.providers.claude.headless:summarize"),
    )

    home = staticmethod(paths.config_dir)
    session_files = staticmethod(paths.iter_session_files)
    session_files_for = staticmethod(paths.session_files_for)
    recorded_session_id = staticmethod(paths.recorded_session_id)
    read = staticmethod(reader.read_session)
    peek = lazy("segue.formats.claude.peek:peek")
    outline = lazy("segue.formats.claude.peek:outline")
    target_profile = staticmethod(profile.target_profile)
    model_key = staticmethod(profile.model_key)
    select = staticmethod(writer.select)
    prepare = staticmethod(writer.prepare_session)
    fork = staticmethod(prepare_fork)
    usage = staticmethod(read_usage)
    running_session = lazy("segue.providers.claude.agents:running_session")  # psutil
    install_hooks = staticmethod(hooks.install_hooks)
    uninstall_hooks = staticmethod(hooks.uninstall_hooks)
    hook_event = staticmethod(hooks.hook_event)

    def recognises(self, path: Path, head: bytes) -> bool:
        # where Claude Code keeps transcripts (``projects/<encoded cwd>/<uuid>.jsonl``), whatever
        # the records (one holding only metadata has none of the markers)
        where = path.parent.parent.name == "projects" and paths.looks_like_session_id(path.stem)
        if not head.strip() or where:
            return path.suffix == ".jsonl" and paths.looks_like_session_id(path.stem)
        return any(marker in head for marker in paths.TRANSCRIPT_MARKERS)

    def read_lines(self, path: Path, lines: Iterable[bytes]) -> Conversation:
        return reader.read_lines(path, lines, follow_chain=False)
