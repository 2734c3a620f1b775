"""What segue asks of a provider: the one interface every registry entry implements.

A provider is a coding-agent CLI whose sessions segue reads and writes. Its entry knows where the
CLI keeps its sessions, how to read one into the neutral model, what it can take as a switch
target and how to write it, the model and window the user's CLI would run, and the command that
resumes a session. Everything else in segue is written against this interface; adding a provider
means one package under ``formats/`` and one entry here.

An entry states only what is its own: a method that is one function of its format or provider
package is that function (``home = staticmethod(paths.config_dir)``), or, where loading its module
would cost every command (psutil, a CLI run, a listing row's transforms), :func:`lazy` names it
(``usage = lazy("segue.providers.codex.usage:read_usage")``).
"""

from __future__ import annotations

import importlib
import os
import shutil
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

import msgspec

from segue.formats.atomic import NativeSession, publish_session
from segue.model.conversation import Conversation, Item, LimitSignal, LimitWindow, Provider
from segue.model.session_info import SessionInfo
from segue.providers.hooks import HookChange, HookEvent, HookKind
from segue.transforms.budget import TargetProfile

if TYPE_CHECKING:
    import psutil

__all__ = [
    "Env",
    "HeadlessCommands",
    "Lazy",
    "NativeSession",
    "ProviderEntry",
    "RunningSession",
    "UsageReading",
    "lazy",
    "npm_launcher",
]

Env = Mapping[str, str]


class Lazy:
    """A module's function, imported when it is first called. In an entry's class body it is a
    method taking what the function takes (no ``self``); the function is looked up at every call,
    so one a test patches in its module is the one called."""

    __slots__ = ("module", "name")

    def __init__(self, target: str) -> None:
        self.module, _, self.name = target.partition(":")

    def resolve(self) -> Callable[..., Any]:
        function: Callable[..., Any] = getattr(importlib.import_module(self.module), self.name)
        return function

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.resolve()(*args, **kwargs)

    def __repr__(self) -> str:
        return f"lazy({self.module}:{self.name})"


def lazy(target: str) -> Any:
    """The function ``target`` names (``"package.module:function"``), imported when first
    called (:class:`Lazy`): for an entry's method, or a :class:`HeadlessCommands` command, whose
    module is costly to load where most commands never call it."""
    return Lazy(target)


class HeadlessCommands(msgspec.Struct, frozen=True):
    """What a provider's CLI does headless, given the user's executable. Neither raises."""

    # (executable, session file, session id, cwd, env) -> (done, what happened)
    compact: Callable[[str, Path, str, str, Env], tuple[bool, str]]
    # (executable, prompt, env) -> (the answer or None, what happened)
    summarize: Callable[[str, str, Env], tuple[str | None, str]]


class UsageReading(msgspec.Struct):
    """What a provider's usage sources said: every window each source reported (the same window
    may come from several sources), quiet notes about sources that could not answer, the newest
    usage-limit error in its session files, and for each model family it limits on its own the
    exact command that switches to another model."""

    windows: list[LimitWindow] = msgspec.field(default_factory=list)
    notes: list[str] = msgspec.field(default_factory=list)
    signal: LimitSignal | None = None
    model_switch: dict[str, str] = msgspec.field(default_factory=dict)
    switch_models: dict[str, str] = msgspec.field(default_factory=dict)  # family → the model to run

    def add(self, windows: Iterable[LimitWindow], note: str | None = None) -> None:
        """What one more source said: its windows, and why it could not answer (a note)."""
        self.windows.extend(windows)
        if note:
            self.notes.append(note)


class RunningSession(msgspec.Struct, frozen=True):
    """What a running CLI process is working on, as its provider tells it."""

    session_id: str | None  # None: the CLI has not chosen one yet
    path: Path | None  # the session file, None while it does not exist (no prompt sent yet)
    env_home: dict[str, str]  # the variables that chose the CLI's home (HOME, ...)
    busy: bool = False  # the CLI itself says a turn is running
    launcher_pid: int | None = None  # a launcher that exits with it (Codex's node wrapper)


def npm_launcher(process: psutil.Process, scripts: Sequence[str]) -> int | None:
    """The npm package's node script (one of ``scripts``, by name) that started ``process``
    and exits with it, if one did."""
    import psutil

    try:
        parent = process.parent()
        if parent is None or parent.name() != "node":
            return None
        script = parent.cmdline()[1:2]
    except psutil.Error:
        return None
    if script and os.path.basename(script[0]) in scripts:
        return parent.pid
    return None


class ProviderEntry(ABC):
    """One provider, as the rest of segue sees it."""

    provider: ClassVar[Provider]
    label: ClassVar[str]  # the product's name, for people ("Claude Code")
    command: ClassVar[str]  # the CLI's executable name
    mark: ClassVar[str]  # one letter naming its provider threads in tables (C1, L1)
    # Whether the CLI compacts a history too big for it by itself when it resumes a session
    # segue wrote (Codex: from the token count segue seeds); if not, a fleet switch offers to
    # run its compaction on arrival.
    compacts_on_arrival: ClassVar[bool] = False
    # what the CLI can do headless; None: compaction and summaries only through its interface
    headless: ClassVar[HeadlessCommands | None] = None
    # the variable that names the CLI's home outright (else it is in ``$HOME``), if it has one
    home_variable: ClassVar[str | None] = None
    # whether its files are known by what they hold rather than by their names (asked last)
    known_by_content: ClassVar[bool] = False
    # the arguments before a session id that continue it interactively (after the program),
    # and that run one headless turn on it (after the executable; the prompt follows ``--``)
    resume_words: ClassVar[tuple[str, ...]]
    headless_words: ClassVar[tuple[str, ...]]

    @property
    def bin_variable(self) -> str:
        """The variable that names the user's CLI when it is not ``command`` on ``$PATH``."""
        return f"SEGUE_{self.provider.value.upper().replace('-', '_')}_BIN"

    def program(self, env: Env) -> str:
        """The CLI as the user runs it, for a command segue prints or runs (from the session's
        folder): ``$SEGUE_<PROVIDER>_BIN`` (a relative path made absolute; a bare name is
        looked up on ``$PATH``), else ``command``."""
        named = env.get(self.bin_variable)
        if not named:
            return self.command
        return os.path.abspath(named) if os.sep in named else named

    def executable(self, env: Env) -> str | None:
        """The user's CLI found: :meth:`program` on ``$PATH`` (or the path it names); None
        when it is not there (or not executable)."""
        return shutil.which(self.program(env), path=env.get("PATH"))

    def not_installed(self) -> str:
        """Why the user's CLI cannot be run: one line."""
        return f"{self.command} is not installed (not on PATH; set {self.bin_variable})"

    def compact(self, path: Path, session_id: str, cwd: str, env: Env) -> tuple[bool, str]:
        """Run the CLI's own compaction on a session; ``(done, what happened)``. Never
        raises. A provider that cannot compact headless says so."""
        if self.headless is None:
            return False, f"{self.label} cannot compact a session without its interface"
        executable = self.executable(env)
        if executable is None:
            return False, self.not_installed()
        return self.headless.compact(executable, path, session_id, cwd, env)

    # -- end-of-turn hooks (``segue hooks install``) ---------------------------------------------

    def install_hooks(
        self, env: Env, command: Sequence[str], *, dry_run: bool = False
    ) -> HookChange | None:
        """Merge a hook that runs ``command`` at each turn's end into the CLI's settings
        (nothing of the user's removed; twice is once). None: the CLI has no such hook."""
        return None

    def uninstall_hooks(self, env: Env, *, dry_run: bool = False) -> HookChange | None:
        """Take out exactly what :meth:`install_hooks` put in."""
        return None

    def model_args(self, model: str) -> list[str]:
        """The arguments, after the resume arguments, that run ``model`` (a model switch on a
        family limit: ``segue watch``)."""
        return ["--model", model]

    def hook_event(self, args: Sequence[str], stdin: bytes) -> HookEvent:
        """What the CLI's hook said when it ran ``segue hook <provider> ARGS`` (its input on
        ``stdin``, or in ``args``)."""
        return HookEvent(HookKind.OTHER)

    def summarize(self, prompt: str, env: Env) -> tuple[str | None, str]:
        """Ask the user's CLI, headless and unable to change anything, to answer ``prompt``
        (a handoff summary); ``(the answer or None, what happened)``. Never raises."""
        if self.headless is None:
            return None, f"{self.label} cannot write a summary headless"
        executable = self.executable(env)
        if executable is None:
            return None, self.not_installed()
        return self.headless.summarize(executable, prompt, env)

    # -- finding ------------------------------------------------------------------------------

    @abstractmethod
    def home(self, env: Env) -> Path:
        """The CLI's own folder for ``env`` (its settings, sessions and locks): what tells two
        accounts on one machine apart."""

    @abstractmethod
    def session_files(self, env: Env, problems: list[str] | None = None) -> Iterator[Path]:
        """Every session file of this provider on the machine (subagent transcripts and other
        files that belong to a session are not listed on their own): whatever is named like
        one, regular or not. A folder that cannot be listed is reported in ``problems``
        ("<folder>: <why>"), never raised."""

    def session_files_for(
        self, cwd: str, env: Env, problems: list[str] | None = None
    ) -> Iterator[Path]:
        """The files that may be sessions of working directory ``cwd`` (a real path). A superset
        is fine: the listing checks each file's own cwd. By default every session file."""
        return self.session_files(env, problems)

    @abstractmethod
    def recognises(self, path: Path, head: bytes) -> bool:
        """Whether this provider wrote ``path``, judged by its name and its first bytes."""

    def session_id(self, path: Path) -> str:
        """The session id a file is known by (what ``--resume`` takes), from its name alone:
        the one id segue prints, finds, locks and resumes it by. By default the name's stem."""
        return path.stem

    def recorded_session_id(self, path: Path) -> str | None:
        """The session id the file's own records give (None: they give none)."""
        return None

    def recorded_id(self, path: Path) -> str | None:
        """The id the file's own records give, when it differs from :meth:`session_id`
        (a copied or renamed file): ``find`` accepts it too."""
        recorded = self.recorded_session_id(path)
        return recorded if recorded != self.session_id(path) else None

    # -- reading ------------------------------------------------------------------------------

    @abstractmethod
    def read(self, path: Path, *, opaque_data: bool = True) -> Conversation:
        """The whole session in the neutral model. Never writes to ``path``. With
        ``opaque_data=False`` its Opaque items carry no data, and the reader need not keep
        what only they would hold (a switch, the graph and the listing never look at it)."""

    @abstractmethod
    def read_lines(self, path: Path, lines: Iterable[bytes]) -> Conversation:
        """Records given as lines (a piece of a file: what segue wrote into a new session or
        after a fork's copy) read as if they were ``path``."""

    @abstractmethod
    def peek(self, path: Path) -> SessionInfo:
        """A listing row, reading only the parts of the file a row needs."""

    @abstractmethod
    def outline(self, path: Path) -> Iterator[str]:
        """One short line per native record of a file: what a person sees of its layout."""

    # -- as a switch target -------------------------------------------------------------------

    @abstractmethod
    def target_profile(self, env: Env, cwd: str | None = None) -> TargetProfile:
        """The model, window and auto-compaction point of the user's CLI, as configured for a
        session in ``cwd`` (project settings apply there). Raises
        :class:`segue.model.errors.ConfigError` for a config file it cannot use."""

    def model_key(self, model: str) -> str:
        """A model id as this provider's CLI means it: two ids with one key run the same model
        (a session's encrypted reasoning is its model's). By default the id itself."""
        return model.strip().lower()

    @abstractmethod
    def select(self, items: Sequence[Item]) -> list[Item]:
        """The items this provider can take as a target, in order."""

    @abstractmethod
    def prepare(self, items: Sequence[Item], *, cwd: str, env: Env, now: datetime) -> NativeSession:
        """The native session for ``items``, not yet written. Raises
        :class:`segue.model.errors.SwitchError` when it cannot be written."""

    def publish(self, session: NativeSession, env: Env) -> list[str]:
        """Put a prepared session in place atomically (never over an existing file) and do any
        registration the CLI needs to find it. Returns warnings about steps after the file was
        in place, which never undo it. By default the file alone, with nothing to register."""
        publish_session(session)
        return []

    def current_file(self, path: Path, env: Env) -> Path:
        """The file a session continues in now (the CLI may move on to another file of the
        same session as it resumes, compacts or rolls back); by default the same file."""
        return path

    @abstractmethod
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
        """A native fork of the session in ``parent``: its records verbatim under a new session
        id, then ``delta`` (runs the session missed) as native records, opened by
        ``handoff_text`` as a context message when given. Not yet written (``publish`` it);
        ``parent`` is only read. Raises :class:`segue.model.errors.SwitchError`."""

    def headless_argv(self, executable: str, session_id: str, prompt: str) -> list[str]:
        """The command that runs one headless turn of ``prompt`` on a session (``segue run``):
        the prompt after ``--``, so the CLI never takes one that starts with ``-`` for an
        option."""
        return [executable, *self.headless_words, session_id, "--", prompt]

    def resume_args(self, session_id: str) -> list[str]:
        """The arguments, after the program (:meth:`program`), that continue a session
        interactively."""
        return [*self.resume_words, session_id]

    # -- usage --------------------------------------------------------------------------------

    @abstractmethod
    def usage(self, env: Env, *, remote: bool, now: datetime) -> UsageReading:
        """The usage windows of the user's account: from the newest session files and, with
        ``remote``, from the provider's own usage service. Never raises for a source that cannot
        answer (offline, not signed in): that is a note."""

    # -- running agents -----------------------------------------------------------------------

    def new_scan(self) -> None:
        """A scan of the running agents begins: what an earlier one saw is not to be reused
        (the processes and their files may have changed since). By default nothing is kept."""
        return

    @abstractmethod
    def running_session(self, process: psutil.Process) -> RunningSession | None:
        """The session a running process of this provider's CLI works on, read from the files
        the process itself uses (its own environment chooses them); None when the process is
        not this provider's agent. May raise :class:`psutil.Error` (a process gone or not
        ours), which the caller treats as "not an agent"."""
