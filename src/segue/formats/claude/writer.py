"""Write neutral items as a native Claude Code transcript that ``claude --resume <id>`` loads.

The layout follows the research notes' minimal resumable recipe: one linear ``parentUuid`` chain
of ``user`` / ``assistant`` records (fresh uuid4 each, ISO millisecond timestamps that strictly
increase), assistant messages marked with the model ``<synthetic>`` and without ``usage`` (so
Claude measures the history itself and picks its default model without a warning), and a final
``last-prompt`` record naming the leaf.

Timestamps: an item's own timestamp is used when it parses and is later than the previous
record's; otherwise the record gets the previous one plus a millisecond (the first record without
a usable timestamp starts at ``now`` minus one millisecond per record).

What crosses: typed prompts, assistant text, tool calls with their results and portable
compaction summaries (a compaction's kept items are expected inline after it, as
``transforms.effective.portable_history`` returns them; its ``replacement`` is not re-read).
A shell call becomes Claude's ``Bash`` tool; a call of one of Claude's own tools with an object
input is kept as is; every other call (``apply_patch``, plans, web search, MCP tools, ...) is
narrated as assistant text. A call and its result cross only together and only when no prompt or
compaction lies between them. Reasoning, error notices, injected context,
slash-command messages, bookkeeping items and non-portable compactions never cross.
"""

from __future__ import annotations

import hashlib
import os
import re
import uuid
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import Literal, assert_never

import msgspec

from segue.formats.atomic import NativeSession
from segue.formats.claude.paths import project_dir_for
from segue.formats.claude.records import (
    SYNTHETIC_MODEL,
    AssistantBlock,
    AssistantRecord,
    BoundaryRecord,
    ChainFields,
    ChainRecord,
    LastPromptRecord,
    SummaryRecord,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    UserBody,
    UserRecord,
)
from segue.formats.jsonl import dump_lines
from segue.model.conversation import (
    AssistantMessage,
    Compaction,
    Item,
    Provider,
    ToolCall,
    ToolResult,
    UserMessage,
)
from segue.model.errors import SwitchError
from segue.model.times import iso_ms, parse_iso
from segue.transforms.carry import (
    NO_OUTPUT,
    failed,
    narrate_call,
    narrate_result,
    paired,
    shell_input,
)

DEFAULT_VERSION = "2.1.328"

# Claude Code's own tools whose calls can be replayed verbatim (with an object input).
CLAUDE_TOOLS = frozenset(
    {
        "Bash",
        "BashOutput",
        "KillShell",
        "Read",
        "Edit",
        "MultiEdit",
        "Write",
        "NotebookEdit",
        "Glob",
        "Grep",
        "WebFetch",
        "WebSearch",
        "TodoWrite",
        "Task",
        "Agent",
    }
)
_SAFE_ID = re.compile(r"^[A-Za-z0-9_-]+$")

select = paired


# --------------------------------------------------------------------------- tool mapping


def native_tool_id(call_id: str) -> str:
    """A tool id Claude keeps: the source id if it is made of ``[A-Za-z0-9_-]``, else a
    stable one derived from it."""
    if _SAFE_ID.match(call_id):
        return call_id
    return "toolu_segue_" + hashlib.sha256(call_id.encode()).hexdigest()[:24]


def tool_use(call: ToolCall, native_id: str) -> ToolUseBlock | None:
    """The ``tool_use`` block for a call, or ``None`` when the call must be narrated."""
    bash = shell_input(call, "Bash")
    if bash is not None:
        return {"type": "tool_use", "id": native_id, "name": "Bash", "input": bash}
    if call.name in CLAUDE_TOOLS and isinstance(call.input, dict):
        return {"type": "tool_use", "id": native_id, "name": call.name, "input": call.input}
    return None


def _tool_result(result: ToolResult, native_id: str) -> ToolResultBlock:
    return {
        "type": "tool_result",
        "tool_use_id": native_id,
        "content": result.output or NO_OUTPUT,
        "is_error": failed(result),
    }


# --------------------------------------------------------------------------- records


def _text(text: str) -> TextBlock:
    return {"type": "text", "text": text}


class _Draft(msgspec.Struct):
    """A record before chaining: what it holds and the source timestamp, if any."""

    kind: Literal["prompt", "results", "assistant", "boundary", "summary"]
    text: str = ""  # a prompt's or a summary's text
    results: list[ToolResultBlock] = msgspec.field(default_factory=list)
    blocks: list[AssistantBlock] = msgspec.field(default_factory=list)
    stamp: str | None = None

    @property
    def root(self) -> bool:
        """A compact boundary starts a new chain."""
        return self.kind == "boundary"


class _Builder(msgspec.Struct):
    """Groups crossing items into records: consecutive assistant-side blocks share one
    assistant record, and the results of one assistant record's tool calls share the next user
    record. Assistant-side items that arrive while results are still due wait until after them."""

    calls: dict[str, ToolCall]  # source call id -> call, for narrating results
    ids: dict[int, str]  # id(call or result item) -> native tool id
    drafts: list[_Draft] = msgspec.field(default_factory=list)
    blocks: list[AssistantBlock] = msgspec.field(default_factory=list)
    block_stamp: str | None = None
    results: list[ToolResultBlock] = msgspec.field(default_factory=list)
    result_stamp: str | None = None
    due: set[str] = msgspec.field(default_factory=set)
    deferred: list[Item] = msgspec.field(default_factory=list)

    def feed(self, item: Item) -> None:
        if isinstance(item, UserMessage):
            self._close()
            self.drafts.append(_Draft("prompt", item.text, stamp=item.timestamp))
        elif isinstance(item, Compaction):
            self._close()
            self.drafts.append(_Draft("boundary", stamp=item.timestamp))
            self.drafts.append(_Draft("summary", item.summary, stamp=item.timestamp))
        elif isinstance(item, ToolResult) and self.ids[id(item)] in self.due:
            self._result(item)
        elif self.results:
            self.deferred.append(item)  # results are still due: keep the pairs adjacent
        elif isinstance(item, AssistantMessage):
            self._block(_text(item.text), item.timestamp)
        elif isinstance(item, ToolCall):
            self._call(item)
        elif isinstance(item, ToolResult):
            self._block(_text(narrate_result(self.calls[item.call_id], item)), item.timestamp)

    def _call(self, call: ToolCall) -> None:
        native_id = self.ids[id(call)]
        block = tool_use(call, native_id)
        if block is None:
            self._block(_text(narrate_call(call)), call.timestamp)
            return
        self._block(block, call.timestamp)
        self.due.add(native_id)

    def _block(self, block: AssistantBlock, stamp: str | None) -> None:
        if not self.blocks:
            self.block_stamp = stamp
        self.blocks.append(block)

    def _result(self, result: ToolResult) -> None:
        native_id = self.ids[id(result)]
        self._close_assistant()
        if not self.results:
            self.result_stamp = result.timestamp
        self.results.append(_tool_result(result, native_id))
        self.due.discard(native_id)
        if not self.due:
            self._close_results()
            waiting, self.deferred = self.deferred, []
            for item in waiting:
                self.feed(item)

    def _close_assistant(self) -> None:
        if self.blocks:
            self.drafts.append(_Draft("assistant", blocks=self.blocks, stamp=self.block_stamp))
            self.blocks = []

    def _close_results(self) -> None:
        if self.results:
            self.drafts.append(_Draft("results", results=self.results, stamp=self.result_stamp))
            self.results = []

    def _close(self) -> None:
        self._close_assistant()
        self._close_results()

    def finish(self) -> list[_Draft]:
        self._close()
        waiting, self.deferred = self.deferred, []
        for item in waiting:
            self.feed(item)
        self._close()
        return self.drafts


def _native_ids(items: Sequence[Item]) -> dict[int, str]:
    """A unique native tool id for every call and its result (keyed by ``id(item)``)."""
    ids: dict[int, str] = {}
    current: dict[str, str] = {}
    used: set[str] = set()
    for item in items:
        if isinstance(item, ToolCall):
            native = base = native_tool_id(item.call_id)
            n = 1
            while native in used:
                n += 1
                native = f"{base}_{n}"
            used.add(native)
            current[item.call_id] = native
            ids[id(item)] = native
        elif isinstance(item, ToolResult):
            ids[id(item)] = current[item.call_id]
    return ids


def _drop_leading_assistant(drafts: list[_Draft]) -> list[_Draft]:
    """Claude's history must start with a user message: drop what precedes the first user
    record (assistant records and the tool results that answer them)."""
    for i, draft in enumerate(drafts):
        if draft.root or draft.kind == "prompt":
            return drafts[i:]
    return []


def build_drafts(items: Sequence[Item]) -> list[_Draft]:
    selected = select(items)
    calls = {item.call_id: item for item in selected if isinstance(item, ToolCall)}
    builder = _Builder(calls, _native_ids(selected))
    for item in selected:
        builder.feed(item)
    return _drop_leading_assistant(builder.finish())


# --------------------------------------------------------------------------- timestamps/chain


def _times(drafts: Sequence[_Draft], now: datetime) -> list[datetime]:
    """Strictly increasing millisecond times: the source's where usable, else previous + 1ms."""
    step = timedelta(milliseconds=1)
    out: list[datetime] = []
    previous = now.astimezone(UTC) - step * (len(drafts) + 1)
    for draft in drafts:
        moment = parse_iso(draft.stamp)
        if moment is not None:
            moment = moment.replace(microsecond=moment.microsecond // 1000 * 1000)
        if moment is None or (out and moment <= previous):
            moment = previous + step
        out.append(moment)
        previous = moment
    return out


def _record(draft: _Draft, common: ChainFields) -> ChainRecord:
    """The native record for a draft, with the chain fields every record carries."""
    match draft.kind:
        case "prompt" | "results":
            content = draft.text if draft.kind == "prompt" else draft.results
            user: UserRecord = {**common, "type": "user", "message": _user_body(content)}
            return user
        case "summary":
            carrier: SummaryRecord = {
                **common,
                "type": "user",
                "message": _user_body(draft.text),
                "isCompactSummary": True,
                "isVisibleInTranscriptOnly": True,
            }
            return carrier
        case "assistant":
            has_tool = any(b["type"] == "tool_use" for b in draft.blocks)
            assistant: AssistantRecord = {
                **common,
                "type": "assistant",
                "message": {
                    "id": "msg_" + uuid.uuid4().hex,
                    "type": "message",
                    "role": "assistant",
                    "model": SYNTHETIC_MODEL,
                    "content": draft.blocks,
                    "stop_reason": "tool_use" if has_tool else "end_turn",
                    "stop_sequence": None,
                },
            }
            return assistant
        case "boundary":
            boundary: BoundaryRecord = {
                **common,
                "type": "system",
                "subtype": "compact_boundary",
                "content": "Conversation compacted",
                "isMeta": False,
                "level": "info",
                "compactMetadata": {"trigger": "manual", "preTokens": 0},
            }
            return boundary
        case _:
            assert_never(draft.kind)


def _user_body(content: str | list[ToolResultBlock]) -> UserBody:
    return {"role": "user", "content": content}


def project(
    items: Sequence[Item], *, session_id: str, cwd: str, now: datetime, version: str
) -> list[ChainRecord]:
    """The native records for ``items`` (without the trailing ``last-prompt`` record): one
    linear chain; a compact boundary starts a new root that names the record it continues."""
    drafts = build_drafts(items)
    records: list[ChainRecord] = []
    previous: str | None = None
    for draft, moment in zip(drafts, _times(drafts, now), strict=True):
        record_id = str(uuid.uuid4())
        common = ChainFields(
            parentUuid=None if draft.root else previous,
            isSidechain=False,
            userType="external",
            cwd=cwd,
            sessionId=session_id,
            version=version,
            entrypoint="cli",
            uuid=record_id,
            timestamp=iso_ms(moment),
        )
        if draft.root:
            common["logicalParentUuid"] = previous
        records.append(_record(draft, common))
        previous = record_id
    return records


def last_prompt_record(records: Sequence[ChainRecord], session_id: str) -> LastPromptRecord:
    prompts = [
        r["message"]["content"]
        for r in records
        if r["type"] == "user"
        and isinstance(r["message"]["content"], str)
        and not r.get("isCompactSummary")
    ]
    return {
        "type": "last-prompt",
        "lastPrompt": prompts[-1] if prompts else "",
        "leafUuid": records[-1]["uuid"],
        "sessionId": session_id,
    }


def prepare_session(
    items: Sequence[Item],
    *,
    cwd: str,
    env: Mapping[str, str] | None = None,
    session_id: str | None = None,
    now: datetime | None = None,
    version: str = DEFAULT_VERSION,
) -> NativeSession:
    """The Claude Code session for ``items`` in working directory ``cwd``, ready to publish.

    Raises :class:`SwitchError` when nothing in ``items`` can be written as a Claude session.
    """
    session_id = session_id or str(uuid.uuid4())
    real_cwd = os.path.realpath(cwd)
    records = project(
        items,
        session_id=session_id,
        cwd=real_cwd,
        now=now or datetime.now(UTC),
        version=version,
    )
    if not any(r["type"] == "user" and isinstance(r["message"]["content"], str) for r in records):
        raise SwitchError("nothing in this history can be written as a Claude session")
    lines = dump_lines([*records, last_prompt_record(records, session_id)])
    path = project_dir_for(real_cwd, env) / f"{session_id}.jsonl"
    return NativeSession(Provider.CLAUDE, session_id, path, lines)
