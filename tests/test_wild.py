"""Seed 003's parser tests: the value-redacted reductions of real Claude Code and Codex
transcripts from agent-transcript-parser (``tests/wild/``, MIT, see its NOTICE.md).

Every file, placed as a session, lists, shows and switches (or is refused with a clear one-line
reason) with no traceback; and each real record shape becomes the neutral item it should.
"""

from __future__ import annotations

import io
import re
import shutil
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
import pytest
from rich.console import Console

from segue.cli.app import main
from segue.cli.render import print_conversation
from segue.model.codec import conversation_to_json
from segue.model.conversation import (
    AssistantMessage,
    Compaction,
    CompactionState,
    Conversation,
    ErrorNotice,
    Item,
    Opaque,
    Origin,
    Provider,
    Reasoning,
    Rollback,
    ToolCall,
    ToolResult,
    TurnMarker,
    TurnStatus,
    UserMessage,
)
from segue.model.errors import SegueError
from segue.providers.sessions import find_session, list_sessions, read_session
from segue.switch import switch_session
from tests.test_readers import without_opaque_data

WILD = Path(__file__).parent / "wild"


@dataclass(frozen=True)
class Wild:
    path: str
    provider: Provider
    case: str
    kind: str

    @property
    def source(self) -> Path:
        return WILD / self.path

    @property
    def session_id(self) -> str:
        return str(uuid.uuid5(uuid.NAMESPACE_URL, self.path))


def _entries() -> list[Wild]:
    index = orjson.loads((WILD / "index.json").read_bytes())
    return [
        Wild(e["path"], Provider(e["provider"]), e["case"], e["kind"])
        for e in index["entries"]
        if e.get("saved")
    ]


ENTRIES = _entries()


def place(wild: Wild, home: Path) -> Path:
    """The file where its CLI would keep it, under a scratch HOME."""
    if wild.provider is Provider.CLAUDE:
        folder = home / ".claude" / "projects" / "-fixture-project"
        name = f"{wild.session_id}.jsonl"
    else:
        folder = home / ".codex" / "sessions" / "2026" / "01" / "01"
        name = f"rollout-2026-01-01T00-00-00-{wild.session_id}.jsonl"
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copy(wild.source, folder / name)
    return folder / name


def test_the_corpus_is_vendored_whole() -> None:
    assert len(ENTRIES) == 101
    assert {e.provider for e in ENTRIES} == {Provider.CLAUDE, Provider.CODEX}
    for wild in ENTRIES:
        assert wild.source.is_file(), wild.path
    assert (WILD / "NOTICE.md").read_text().count("MIT License") == 1


def _render(conversation: Conversation) -> str:
    out = io.StringIO()
    print_conversation(Console(file=out, width=100), conversation, verbose=True)
    return out.getvalue()


@pytest.mark.parametrize("wild", ENTRIES, ids=lambda w: f"{w.kind}-{w.case}")
def test_every_file_lists_shows_and_switches(
    wild: Wild, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    home = tmp_path / "home"
    path = place(wild, home)
    env = {"HOME": str(home), "SEGUE_STATE_DIR": str(tmp_path / "state")}
    listing = list_sessions(env=env)
    assert not any("internal error" in p for p in listing.problems), listing.problems
    rows = [row for row in listing.sessions if row.path == str(path)]
    assert rows or any(str(path) in p for p in listing.problems), "neither listed nor reported"
    for row in rows:
        assert row.id == wild.session_id
        assert find_session(row.id, env) == (wild.provider, path)
        conversation = read_session(path, wild.provider)
        shown = _render(conversation)
        numbered = shown.count("── turn ") - shown.count("── turn (rolled back")
        assert row.turns == numbered, "the listing's TURNS differ from what show numbers"
        orjson.dumps(conversation_to_json(conversation))
    # the switch: either done (a file the target's reader reads back) or refused in one line,
    # and the dry run says which
    outcomes: list[tuple[bool, str]] = []
    for dry_run in (True, False):
        try:
            result = switch_session(str(path), dry_run=dry_run, env=env)
        except SegueError as exc:
            message = str(exc)
            assert message and "\n" not in message
            outcomes.append((False, type(exc).__name__))
        else:
            outcomes.append((True, ""))
            if not dry_run:
                assert result.path is not None and result.path.is_file()
                written = read_session(result.path, result.target)
                assert written.skipped == []
    assert outcomes[0] == outcomes[1], f"the dry run said {outcomes[0]}, the switch {outcomes[1]}"
    # and the command line, through its one handler
    try:
        main(["show", str(path), "--json"])
    except SystemExit as done:
        assert done.code == 1
    doc = orjson.loads(capsys.readouterr().out)
    assert "error" in doc or doc["meta"]["path"] == str(path)


@pytest.mark.parametrize("wild", ENTRIES, ids=lambda w: f"{w.kind}-{w.case}")
def test_a_read_without_opaque_data_holds_the_same_items(wild: Wild, tmp_path: Path) -> None:
    """Real records of every shape, hostile ones included: the read a switch makes (no opaque
    data, records only an opaque item would hold cut as they are read) gives the same items."""
    path = place(wild, tmp_path)
    try:
        whole = read_session(path, wild.provider)
    except SegueError as exc:
        with pytest.raises(SegueError, match=re.escape(str(exc))):
            read_session(path, wild.provider, opaque_data=False)
        return
    assert read_session(path, wild.provider, opaque_data=False) == without_opaque_data(whole)


def _read(wild: Wild, tmp_path: Path) -> Conversation:
    return read_session(place(wild, tmp_path), wild.provider)


def _items(conversation: Conversation) -> list[Item]:
    """The items, less the Codex session_meta marker every rollout starts with."""
    return [
        i
        for i in conversation.items
        if not (isinstance(i, Opaque) and i.native_kind == "session_meta")
    ]


def _one(wild: Wild, tmp_path: Path) -> Item:
    items = _items(_read(wild, tmp_path))
    assert len(items) == 1, items
    return items[0]


TEXT = "fixture text"

# What each single-record case (one real record shape) becomes.
SHAPES: dict[str, Any] = {
    # Claude Code
    "claude-record-assistant": lambda i: isinstance(i, AssistantMessage) and i.text == TEXT,
    "claude-message-role-user": lambda i: isinstance(i, UserMessage) and i.origin is Origin.TYPED,
    "claude-message-block-text": lambda i: isinstance(i, UserMessage) and i.text == TEXT,
    "claude-message-block-image": lambda i: (
        isinstance(i, UserMessage) and i.text == TEXT and len(i.images) == 1
    ),
    "claude-message-block-thinking": lambda i: isinstance(i, Reasoning),
    "claude-message-block-tool-use": lambda i: isinstance(i, ToolCall) and i.name == "FixtureName",
    "claude-message-block-tool-result": lambda i: isinstance(i, ToolResult),
    "claude-message-block-fallback": lambda i: (
        isinstance(i, Opaque) and i.native_kind == "assistant/fallback"
    ),
    "claude-subtype-api-error": lambda i: isinstance(i, ErrorNotice),
    "claude-subtype-compact-boundary": lambda i: (
        isinstance(i, Compaction) and i.state is CompactionState.INCOMPLETE
    ),
    "claude-subtype-local-command": lambda i: (
        isinstance(i, UserMessage) and i.origin is Origin.COMMAND
    ),
    # Codex
    "codex-payload-role-user": lambda i: isinstance(i, UserMessage) and i.origin is Origin.TYPED,
    "codex-payload-role-developer": lambda i: (
        isinstance(i, UserMessage) and i.origin is Origin.INJECTED
    ),
    "codex-payload-role-assistant": lambda i: isinstance(i, AssistantMessage),
    "codex-payload-reasoning": lambda i: isinstance(i, Reasoning) and i.text == TEXT,
    "codex-payload-function-call": lambda i: isinstance(i, ToolCall),
    "codex-record-response-item": lambda i: isinstance(i, ToolCall),
    "codex-payload-custom-tool-call": lambda i: isinstance(i, ToolCall),
    "codex-payload-local-shell-call": lambda i: isinstance(i, ToolCall),
    "codex-payload-tool-search-call": lambda i: isinstance(i, ToolCall),
    "codex-action-find-in-page": lambda i: isinstance(i, ToolCall),
    "codex-action-open-page": lambda i: isinstance(i, ToolCall),
    "codex-payload-function-call-output": lambda i: isinstance(i, ToolResult),
    "codex-payload-custom-tool-call-output": lambda i: isinstance(i, ToolResult),
    "codex-payload-tool-search-output": lambda i: isinstance(i, ToolResult),
    "codex-payload-block-input-image": lambda i: isinstance(i, UserMessage) and len(i.images) == 1,
    "codex-record-compacted": lambda i: (
        isinstance(i, Compaction) and i.state is CompactionState.PORTABLE and i.summary == TEXT
    ),
    "codex-payload-error": lambda i: isinstance(i, ErrorNotice) and i.message == TEXT,
    "codex-payload-task-started": lambda i: (
        isinstance(i, TurnMarker) and i.status is TurnStatus.STARTED
    ),
    "codex-payload-task-complete": lambda i: (
        isinstance(i, TurnMarker) and i.status is TurnStatus.COMPLETED
    ),
    "codex-payload-turn-aborted": lambda i: (
        isinstance(i, TurnMarker) and i.status is TurnStatus.ABORTED
    ),
    "codex-payload-thread-rolled-back": lambda i: isinstance(i, Rollback) and i.turns >= 1,
    # a newer response item (a message between agents): kept, not taken for a prompt or reply
    "codex-payload-block-encrypted-content": lambda i: (
        isinstance(i, Opaque) and i.native_kind == "response_item/agent_message"
    ),
}
# Records segue keeps as they are, under their own kind (bookkeeping, UI echoes, metadata).
OPAQUE = {
    "claude-record-ai-title": "ai-title",
    "claude-record-file-history-snapshot": "file-history-snapshot",
    "claude-record-file-history-delta": "file-history-delta",
    "claude-record-queue-operation": "queue-operation",
    "claude-record-worktree-state": "worktree-state",
    "claude-record-last-prompt": "last-prompt",
    "claude-record-system": "system/turn_duration",
    "claude-subtype-informational": "system/informational",
    "claude-subtype-away-summary": "system/away_summary",
    "codex-payload-token-count": "event_msg/token_count",
    "codex-payload-user-message": "event_msg/user_message",
    "codex-payload-agent-message": "event_msg/agent_message",
    "codex-payload-agent-reasoning": "event_msg/agent_reasoning",
    "codex-payload-exec-command-end": "event_msg/exec_command_end",
    "codex-payload-patch-apply-end": "event_msg/patch_apply_end",
    "codex-payload-mcp-tool-call-end": "event_msg/mcp_tool_call_end",
    "codex-payload-context-compacted": "event_msg/context_compacted",
    "codex-payload-thread-name-updated": "event_msg/thread_name_updated",
    "codex-record-turn-context": "turn_context",
    "codex-record-world-state": "world_state",
}
SINGLE = {e.case: e for e in ENTRIES if e.kind in ("observed", "v2-observed")}


@pytest.mark.parametrize("case", sorted(SHAPES), ids=str)
def test_record_shape_becomes(case: str, tmp_path: Path) -> None:
    assert SHAPES[case](_one(SINGLE[case], tmp_path))


@pytest.mark.parametrize("case", sorted(OPAQUE), ids=str)
def test_bookkeeping_records_are_kept_opaque(case: str, tmp_path: Path) -> None:
    item = _one(SINGLE[case], tmp_path)
    assert isinstance(item, Opaque) and item.native_kind == OPAQUE[case]


def test_titles_become_the_session_title(tmp_path: Path) -> None:
    claude = _read(SINGLE["claude-record-ai-title"], tmp_path / "a")
    codex = _read(SINGLE["codex-payload-thread-name-updated"], tmp_path / "b")
    assert claude.meta.title == TEXT
    assert codex.meta.title == "FixtureName"  # the thread_name the record gives


def test_codex_session_meta_is_read_but_the_name_gives_the_id(tmp_path: Path) -> None:
    wild = SINGLE["codex-record-session-meta"]
    conversation = _read(wild, tmp_path)
    assert conversation.meta.cwd == "/fixture/project"
    assert conversation.meta.id == wild.session_id
    assert conversation.meta.extra["recorded_id"] == "fixture-id-1"


SEQUENCES = {e.case: e for e in ENTRIES if e.kind == "observed-sequence"}


def test_prompt_sequences(tmp_path: Path) -> None:
    for case in ("claude-sequence-prompts", "codex-sequence-prompts"):
        items = _items(_read(SEQUENCES[case], tmp_path / case))
        typed = [i for i in items if isinstance(i, UserMessage) and i.origin is Origin.TYPED]
        assert typed and all(i.text == TEXT for i in typed), case
        # Codex echoes each prompt as a UI event: kept opaque, never a second prompt
        echoes = [i for i in items if isinstance(i, Opaque) and "user_message" in i.native_kind]
        assert len(echoes) in (0, len(typed))


def test_tool_cycle_sequences_pair_calls_and_results(tmp_path: Path) -> None:
    for case in ("claude-sequence-tool-cycle", "codex-sequence-tool-cycle"):
        items = _items(_read(SEQUENCES[case], tmp_path / case))
        calls = [i for i in items if isinstance(i, ToolCall)]
        results = [i for i in items if isinstance(i, ToolResult)]
        assert len(calls) == len(results) == 1, case
        assert calls[0].call_id == results[0].call_id, case


def test_compaction_sequences(tmp_path: Path) -> None:
    claude = _items(_read(SEQUENCES["claude-sequence-compaction"], tmp_path / "a"))
    assert [type(i) for i in claude] == [Compaction]
    assert isinstance(claude[0], Compaction) and claude[0].state is CompactionState.PORTABLE
    once = _read(SEQUENCES["codex-sequence-compacted-once"], tmp_path / "b")
    states = [i.state for i in once.items if isinstance(i, Compaction)]
    assert states and CompactionState.NATIVE_ONLY in states  # an encrypted remote compaction
    multi = _read(SEQUENCES["codex-sequence-compacted-multi"], tmp_path / "c")
    assert len([i for i in multi.items if isinstance(i, Compaction)]) >= 2


def test_subagent_sequences_placed_as_main_transcripts_carry_nothing(tmp_path: Path) -> None:
    """These are subagent transcripts (every record ``isSidechain``): as a main session they
    are kept opaque, and a switch is refused with a reason instead of inventing a session."""
    for case in ("claude-sequence-oversized", "claude-sequence-rate-limit"):
        home = tmp_path / case
        path = place(SEQUENCES[case], home)
        conversation = read_session(path)
        assert conversation.items
        assert all(
            isinstance(i, Opaque) and "sidechain/" in i.native_kind for i in conversation.items
        )
        env = {"HOME": str(home), "SEGUE_STATE_DIR": str(tmp_path / "state")}
        with pytest.raises(SegueError, match="nothing in this session can be carried"):
            switch_session(str(path), env=env)


def test_rollback_sequence(tmp_path: Path) -> None:
    items = _items(_read(SEQUENCES["codex-sequence-rollback"], tmp_path))
    assert [type(i) for i in items] == [Rollback]
