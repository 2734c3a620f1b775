"""The neutral conversation model: what every reader produces and every writer consumes.

Pure data, no I/O. A :class:`Conversation` is an ordered list of items of explicit types (a tagged
union, like Codex's own ``ResponseItem`` / ``EventMsg`` enums), each carrying the place in the
native file it came from. Nothing here knows a native field name.
"""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Any, ClassVar, Literal, TypeAlias, TypeVar

import msgspec

JSON: TypeAlias = Any  # a value as orjson.loads returns it
_T = TypeVar("_T")


class Provider(str):
    """A provider's name, as its entry in the registry (:mod:`segue.providers`) gives it.

    Open, not an enum: a provider added to the registry is one more name, and nothing here
    changes. One instance per name (``is`` compares as ``==`` does); it is the ``str`` of its
    name wherever a string is wanted (JSON, the store, a command line). Any string is one (a
    store or a journal may name a provider this segue lacks, or garble a name); whether this
    segue knows it is the registry's to say (:func:`segue.providers.entry`,
    :func:`segue.providers.known`).
    """

    __slots__ = ()
    _names: ClassVar[dict[str, Provider]] = {}
    CLAUDE: ClassVar[Provider]  # the two segue comes with
    CODEX: ClassVar[Provider]

    def __new__(cls, name: str) -> Provider:
        known = cls._names.get(name)
        if known is not None:
            return known
        if not isinstance(name, str):
            raise ValueError(f"{name!r} is not a provider name")
        return cls._names.setdefault(name, super().__new__(cls, name))

    def __reduce__(self) -> tuple[type[Provider], tuple[str]]:
        return Provider, (self.value,)

    @property
    def value(self) -> str:
        """The name as a plain string."""
        return str.__str__(self)

    @property
    def name(self) -> str:
        """The name as a constant is spelt (``CLAUDE``, for ``$SEGUE_CLAUDE_BIN``)."""
        return self.value.upper().replace("-", "_")

    def __repr__(self) -> str:
        return f"Provider({self.value!r})"


Provider.CLAUDE = Provider("claude")
Provider.CODEX = Provider("codex")


class Provenance(msgspec.Struct, frozen=True):
    """Where an item came from: the native file and the 1-based line in it."""

    file: str
    line: int


class Origin(StrEnum):
    """Who put a user message there."""

    TYPED = "typed"  # the person typed it
    INJECTED = "injected"  # the CLI added it (environment context, instructions, reminders)
    COMMAND = "command"  # a slash command or its local output


class ToolKind(StrEnum):
    SHELL = "shell"
    READ = "read"
    EDIT = "edit"
    WRITE = "write"
    PATCH = "patch"
    SEARCH = "search"
    WEB = "web"
    PLAN = "plan"
    SUBAGENT = "subagent"
    MCP = "mcp"
    OTHER = "other"


class CompactionState(StrEnum):
    """Whether a compaction's summary can be carried to another provider."""

    PORTABLE = "portable"  # plaintext summary anyone can read
    NATIVE_ONLY = "native_only"  # encrypted or otherwise only the source provider can use it
    INCOMPLETE = "incomplete"  # a boundary whose summary never landed
    REJECTED = "rejected"  # the "summary" is a rate-limit or API-error text


class ErrorKind(StrEnum):
    RATE_LIMIT = "rate_limit"  # a short-term 429
    USAGE_LIMIT = "usage_limit"  # a plan's usage window is exhausted
    CONTEXT_WINDOW = "context_window"  # the history no longer fits the model
    API_ERROR = "api_error"  # anything else the API or CLI reported


class TurnStatus(StrEnum):
    STARTED = "started"
    COMPLETED = "completed"
    ABORTED = "aborted"
    FAILED = "failed"


class Image(msgspec.Struct, frozen=True):
    """An image attached to a message: a data URL, a path, or a remote URL."""

    url: str | None = None
    path: str | None = None
    media_type: str | None = None


# --- items ------------------------------------------------------------------------------------


class UserMessage(msgspec.Struct, frozen=True):
    text: str
    prov: Provenance
    origin: Origin = Origin.TYPED
    images: tuple[Image, ...] = ()
    timestamp: str | None = None
    kind: Literal["user"] = "user"


class AssistantMessage(msgspec.Struct, frozen=True):
    text: str
    prov: Provenance
    model: str | None = None
    timestamp: str | None = None
    kind: Literal["assistant"] = "assistant"


class Reasoning(msgspec.Struct, frozen=True):
    """Reasoning the model showed. ``text`` is what anyone can read (Claude's thinking, Codex's
    reasoning summary); ``private`` is the provider's opaque payload (a Claude thinking
    signature, Codex ``encrypted_content``): never portable."""

    text: str
    prov: Provenance
    private: str | None = None
    timestamp: str | None = None
    kind: Literal["reasoning"] = "reasoning"

    @property
    def portable(self) -> bool:
        return self.private is None


class ToolCall(msgspec.Struct, frozen=True):
    call_id: str
    name: str
    input: JSON  # structured input: a dict for function tools, a string for freeform ones
    tool: ToolKind
    prov: Provenance
    timestamp: str | None = None
    kind: Literal["tool_call"] = "tool_call"


class ToolResult(msgspec.Struct, frozen=True):
    call_id: str
    output: str
    prov: Provenance
    error: bool | None = None
    exit_code: int | None = None
    images: tuple[Image, ...] = ()
    timestamp: str | None = None
    kind: Literal["tool_result"] = "tool_result"


class Compaction(msgspec.Struct, frozen=True):
    """A point where the provider replaced the history before it with a summary.

    ``replacement`` holds the items the provider keeps verbatim after the summary when it resumes
    (Codex's ``replacement_history``, or the user messages before an old-style Codex record;
    Claude's preserved segment); ``None`` means "just the summary".
    """

    summary: str
    state: CompactionState
    prov: Provenance
    replacement: tuple[Item, ...] | None = None
    trigger: str | None = None  # manual / auto, when the record says
    timestamp: str | None = None
    kind: Literal["compaction"] = "compaction"


class ErrorNotice(msgspec.Struct, frozen=True):
    """An error the CLI recorded: never an assistant message."""

    error_kind: ErrorKind
    message: str
    prov: Provenance
    reset_at: datetime | None = None
    timestamp: str | None = None
    kind: Literal["error"] = "error"


class TurnMarker(msgspec.Struct, frozen=True):
    """A turn lifecycle event the CLI recorded (Codex task_started / task_complete / aborts)."""

    status: TurnStatus
    prov: Provenance
    turn_id: str | None = None
    timestamp: str | None = None
    kind: Literal["turn"] = "turn"


class Rollback(msgspec.Struct, frozen=True):
    """The user rolled the thread back by ``turns`` user turns (Codex ``thread_rolled_back``)."""

    turns: int
    prov: Provenance
    timestamp: str | None = None
    kind: Literal["rollback"] = "rollback"


class Opaque(msgspec.Struct, frozen=True):
    """A record segue does not interpret, kept with its native kind and line."""

    native_kind: str
    prov: Provenance
    data: JSON = None
    timestamp: str | None = None
    kind: Literal["opaque"] = "opaque"


Item: TypeAlias = (
    UserMessage
    | AssistantMessage
    | Reasoning
    | ToolCall
    | ToolResult
    | Compaction
    | ErrorNotice
    | TurnMarker
    | Rollback
    | Opaque
)

# --- limits ---------------------------------------------------------------------------------------

ALL_MODELS = "all"


class LimitWindow(msgspec.Struct, frozen=True):
    """One usage window of a provider as some source reported it: how long the window is, how
    much of it is used, when it resets, and which models it covers."""

    provider: Provider
    minutes: int | None  # the window's length (300 = five hours, 10080 = a week)
    used_percent: float | None
    resets_at: datetime | None
    scope: str = ALL_MODELS  # "all", or the model family it limits ("opus", "sonnet", …)
    name: str | None = None  # the provider's own name for it (five_hour, primary, …)
    observed_at: datetime | None = None  # when the source said so
    source: str | None = None  # where it was read (a file and line, an endpoint)

    @property
    def exhausted(self) -> bool:
        return self.used_percent is not None and self.used_percent >= 100


class LimitSignal(msgspec.Struct, frozen=True):
    """The newest usage-limit error a provider's session files hold, with the newest success
    (a model reply) those files hold, so a reader can tell whether the limit is still live."""

    at: datetime | None  # when the error was recorded
    resets_at: datetime | None  # when the error said the limit resets
    scope: str  # "all", or the model family it limited
    message: str
    source: str  # the file and line
    last_success: datetime | None = None  # the newest model reply in the same files


# --- the whole ----------------------------------------------------------------------------------


class Skip(msgspec.Struct, frozen=True):
    """A line the reader could not use, and why."""

    file: str
    line: int
    reason: str


class SessionMeta(msgspec.Struct):
    provider: Provider
    id: str
    path: str
    cwd: str | None = None
    model: str | None = None
    cli_version: str | None = None
    git_branch: str | None = None
    title: str | None = None
    created: str | None = None
    updated: str | None = None
    # the newest usage windows the file reports (e.g. Codex's rate-limit snapshots)
    limits: list[LimitWindow] = msgspec.field(default_factory=list)
    extra: dict[str, JSON] = msgspec.field(default_factory=dict)  # other facts, for display


class Conversation(msgspec.Struct):
    meta: SessionMeta
    items: list[Item] = msgspec.field(default_factory=list)
    skipped: list[Skip] = msgspec.field(default_factory=list)
    notes: list[str] = msgspec.field(default_factory=list)
    # Other files that belong to the session (Claude subagent transcripts), read the same way.
    sidechains: list[Conversation] = msgspec.field(default_factory=list)

    def of(self, cls: type[_T]) -> list[_T]:
        """All items of one type, in order."""
        return [item for item in self.items if isinstance(item, cls)]
