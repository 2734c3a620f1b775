"""Each recorded fixture decodes to exactly what the recording script put in."""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime

import msgspec
import pytest

from segue.model.conversation import (
    AssistantMessage,
    Compaction,
    Conversation,
    ErrorNotice,
    Item,
    Opaque,
    Origin,
    Provider,
    ToolCall,
    ToolResult,
    UserMessage,
)
from segue.providers import entry
from segue.providers.sessions import read_session
from segue.transforms.effective import apply_rollbacks
from segue.transforms.turns import prompts
from segue_testbed.fixtures import Fixture, all_fixtures

FIXTURES = all_fixtures()


def ids(f: Fixture) -> str:
    return f.name


@pytest.fixture(params=FIXTURES, ids=ids)
def fixture(request: pytest.FixtureRequest) -> Fixture:
    return request.param  # type: ignore[no-any-return]


def test_there_are_fixtures_of_every_provider() -> None:
    assert {f.provider for f in FIXTURES} == {"claude", "codex", "copilot"}


def test_meta(fixture: Fixture) -> None:
    conv = read_session(fixture.transcript)
    assert conv.meta.provider == Provider(fixture.provider)
    assert conv.meta.id == fixture.spec["session_id"]
    assert conv.meta.cwd == fixture.spec["cwd"]
    assert conv.meta.cli_version == fixture.spec["cli_version"]
    assert conv.skipped == []


def test_every_prompt_in_order(fixture: Fixture) -> None:
    conv = read_session(fixture.transcript)
    typed = [p.text for p in prompts(conv.items)]
    assert typed == fixture.spec["prompts"]
    for command in fixture.spec.get("commands", []):
        assert any(
            isinstance(i, UserMessage)
            and i.origin is Origin.COMMAND
            and command["command"] in i.text
            for i in conv.items
        ), f"no command message for {command['command']}"
    rolled_back = fixture.spec.get("rolled_back_prompts") or []
    after = [p.text for p in prompts(apply_rollbacks(conv.items))]
    assert after == [p for p in fixture.spec["prompts"] if p not in rolled_back]


def test_every_reply_in_order_and_no_error_as_reply(fixture: Fixture) -> None:
    conv = read_session(fixture.transcript)
    replies = [i.text for i in conv.items if isinstance(i, AssistantMessage)]
    expected = fixture.spec["replies"]
    it = iter(replies)
    missing = [r for r in expected if not any(r == got for got in it)]
    assert missing == [], f"replies not found in order: {missing} (got {replies})"
    errors = {e.message for e in conv.of(ErrorNotice)}
    assert not errors & set(replies)


def test_tool_calls_paired_with_results(fixture: Fixture) -> None:
    conv = read_session(fixture.transcript)
    calls = conv.of(ToolCall)
    results = {r.call_id: r for r in conv.of(ToolResult)}
    for want in fixture.spec["tool_calls"]:
        match = [c for c in calls if c.name == want["name"] and c.input == want["input"]]
        assert match, f"no {want['name']} call with input {want['input']}"
        result = results.get(match[0].call_id)
        assert result is not None, f"call {match[0].call_id} has no result"
        assert want["output_contains"] in result.output
        assert bool(result.error) == want["is_error"]
    if fixture.spec["state"] != "working":
        unpaired = [c.call_id for c in calls if c.call_id not in results]
        assert unpaired == []


def test_compactions_classified(fixture: Fixture) -> None:
    conv = read_session(fixture.transcript)
    got = conv.of(Compaction)
    want = fixture.spec["compactions"]
    assert [c.state.value for c in got] == [w["state"] for w in want]
    for c, w in zip(got, want, strict=True):
        if w.get("summary_contains"):
            assert w["summary_contains"] in c.summary
        assert c.summary.strip().lower() != "conversation compacted"


def test_error_notices(fixture: Fixture) -> None:
    conv = read_session(fixture.transcript)
    got = conv.of(ErrorNotice)
    want = fixture.spec["errors"]
    assert [e.error_kind.value for e in got] == [w["kind"] for w in want]
    for e, w in zip(got, want, strict=True):
        if w.get("reset_at") is not None:
            assert e.reset_at == datetime.fromtimestamp(w["reset_at"], UTC)


def test_listing_state(fixture: Fixture) -> None:
    row = entry(Provider(fixture.provider)).peek(fixture.transcript)
    assert row.id == fixture.spec["session_id"]
    assert row.cwd == fixture.spec["cwd"]
    assert row.state.value == fixture.spec["state"]
    want_reset = fixture.spec.get("reset_at")
    expected = datetime.fromtimestamp(want_reset, UTC) if want_reset else None
    assert row.reset_at == expected
    rolled_back = fixture.spec.get("rolled_back_prompts") or []
    assert row.turns == len(fixture.spec["prompts"]) - len(rolled_back)


def test_reading_never_writes(fixture: Fixture) -> None:
    before = hashlib.sha256(fixture.transcript.read_bytes()).hexdigest()
    mtime = fixture.transcript.stat().st_mtime_ns
    read_session(fixture.transcript)
    entry(Provider(fixture.provider)).peek(fixture.transcript)
    assert hashlib.sha256(fixture.transcript.read_bytes()).hexdigest() == before
    assert fixture.transcript.stat().st_mtime_ns == mtime


def test_unknown_records_are_opaque_not_dropped(fixture: Fixture) -> None:
    """Every well-formed line yields at least one item (model history or an opaque record)."""
    conv = read_session(fixture.transcript)
    here = str(fixture.transcript)
    lines_with_items = {i.prov.line for i in conv.items if i.prov.file == here}
    total = sum(1 for line in fixture.transcript.read_bytes().splitlines() if line.strip())
    if fixture.provider == "codex":
        assert lines_with_items == set(range(1, total + 1))
    else:
        # Claude: a compact boundary is merged into the compaction its carrier makes, and
        # lines on abandoned branches are reported in the notes instead.
        lines = fixture.transcript.read_bytes().splitlines()
        missing = {
            n
            for n in set(range(1, total + 1)) - lines_with_items
            if b'"subtype":"compact_boundary"' not in lines[n - 1]
        }
        assert not missing or any("not the active conversation" in n for n in conv.notes)
    assert all(isinstance(i.native_kind, str) for i in conv.of(Opaque))


def without_opaque_data(conversation: Conversation) -> Conversation:
    """``conversation`` as a read without opaque data should give it: every Opaque item's data
    None (inside a compaction's kept messages and the subagents' transcripts too)."""

    def bare(item: Item) -> Item:
        if isinstance(item, Opaque):
            return msgspec.structs.replace(item, data=None)
        if isinstance(item, Compaction) and item.replacement:
            return msgspec.structs.replace(item, replacement=tuple(map(bare, item.replacement)))
        return item

    return msgspec.structs.replace(
        conversation,
        items=[bare(i) for i in conversation.items],
        sidechains=[without_opaque_data(s) for s in conversation.sidechains],
    )


def test_a_read_without_opaque_data_holds_the_same_items(fixture: Fixture) -> None:
    """What a switch reads (no opaque data, in less memory) is the whole read but for the data
    of its opaque records: the same items, metadata, notes and skipped lines."""
    whole = read_session(fixture.transcript)
    lean = read_session(fixture.transcript, opaque_data=False)
    assert any(i.data is not None for i in whole.of(Opaque))  # (else this proves nothing)
    assert all(i.data is None for i in lean.of(Opaque))
    assert lean == without_opaque_data(whole)


def test_subagent_transcripts_are_read_as_sidechains() -> None:
    subagent_fixtures = [f for f in FIXTURES if f.spec.get("subagents")]
    assert subagent_fixtures, "a fixture with a subagent is expected"
    for fixture in subagent_fixtures:
        conv = read_session(fixture.transcript)
        assert len(conv.sidechains) == len(fixture.spec["subagents"])
        for side, want in zip(conv.sidechains, fixture.spec["subagents"], strict=True):
            typed = [p.text for p in prompts(side.items)]
            assert typed == [want["prompt"]]
            assert [m.text for m in side.of(AssistantMessage)] == want["replies"]
            calls = side.of(ToolCall)
            results = {r.call_id: r for r in side.of(ToolResult)}
            for call_spec in want["tool_calls"]:
                call = next(c for c in calls if c.input == call_spec["input"])
                assert call_spec["output_contains"] in results[call.call_id].output
        # the subagent's work is not mixed into the main conversation
        main_replies = [m.text for m in conv.of(AssistantMessage)]
        for want in fixture.spec["subagents"]:
            assert not set(want["replies"]) & set(main_replies)
