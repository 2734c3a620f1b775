"""The shrink ladder: unit cases per rung and property tests over random conversations."""

from __future__ import annotations

import re
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from msgspec.structs import replace

from segue.model.conversation import (
    AssistantMessage,
    Compaction,
    CompactionState,
    Image,
    Item,
    Origin,
    Provenance,
    ToolCall,
    ToolKind,
    ToolResult,
    UserMessage,
)
from segue.model.units import format_count
from segue.support.text import short
from segue.transforms.budget import IMAGE_CHARS, history_chars
from segue.transforms.shrink import (
    IMAGE_MARKER,
    ShrinkReport,
    Unfittable,
    cleared_placeholder,
    shrink,
)
from segue.transforms.trim import was_cut
from segue.transforms.turns import is_prompt

PLACEHOLDER_RE = re.compile(r"\[tool output cleared during provider switch: \d+ characters\]")


class Builder:
    def __init__(self) -> None:
        self.items: list[Item] = []

    def _prov(self) -> Provenance:
        return Provenance("t", len(self.items) + 1)

    def prompt(self, text: str, images: int = 0, origin: Origin = Origin.TYPED) -> Builder:
        imgs = tuple(Image(url=f"data:{i}") for i in range(images))
        self.items.append(UserMessage(text, self._prov(), origin=origin, images=imgs))
        return self

    def reply(self, text: str) -> Builder:
        self.items.append(AssistantMessage(text, self._prov()))
        return self

    def tool(self, out: int, inp: Any = None, images: int = 0, error: bool = False) -> Builder:
        call_id = f"c{len(self.items)}"
        value = {"command": "ls"} if inp is None else inp
        self.items.append(ToolCall(call_id, "bash", value, ToolKind.SHELL, self._prov()))
        imgs = tuple(Image(path=f"/i{i}.png") for i in range(images))
        self.items.append(ToolResult(call_id, "o" * out, self._prov(), error=error, images=imgs))
        return self

    def compaction(self, summary: str) -> Builder:
        self.items.append(Compaction(summary, CompactionState.PORTABLE, self._prov()))
        return self


def synthetic(items: list[Item]) -> list[Compaction]:
    return [i for i in items if isinstance(i, Compaction) and i.trigger == "segue"]


# --- invariant checks shared by unit and property tests -----------------------------------------


def check_invariants(original: list[Item], out: list[Item], report: ShrinkReport, budget: int):
    assert history_chars(out) <= budget
    assert report.chars_after == history_chars(out)
    assert report.chars_before == history_chars(original)
    check_pairs(out)
    check_order(original, out)
    check_last_turn(original, out)
    check_counts(original, out, report)


def check_pairs(out: list[Item]) -> None:
    for index, item in enumerate(out):
        if isinstance(item, ToolCall):
            nxt = out[index + 1]
            assert isinstance(nxt, ToolResult) and nxt.call_id == item.call_id
        if isinstance(item, ToolResult):
            prev = out[index - 1]
            assert isinstance(prev, ToolCall) and prev.call_id == item.call_id


def by_prov(items: list[Item]) -> dict[Provenance, Item]:
    return {item.prov: item for item in items}


def check_order(original: list[Item], out: list[Item]) -> None:
    markers = synthetic(out)
    assert len(markers) <= 1
    kept = [item for item in out if item not in markers]
    lines = [item.prov.line for item in kept]
    assert lines == sorted(set(lines))
    source = by_prov(original)
    for item in kept:
        before = source[item.prov]
        assert type(before) is type(item)
        if isinstance(item, ToolCall | ToolResult):
            assert isinstance(before, ToolCall | ToolResult)
            assert before.call_id == item.call_id
        if isinstance(item, ToolResult):
            assert isinstance(before, ToolResult)
            assert before.error == item.error
        if isinstance(item, AssistantMessage | Compaction):
            assert item == before


def check_last_turn(original: list[Item], out: list[Item]) -> None:
    prompts = [i for i in original if is_prompt(i)]
    if not prompts:
        return
    last = prompts[-1]
    assert isinstance(last, UserMessage)
    kept = by_prov(out)
    assert last.prov in kept
    now = kept[last.prov]
    assert isinstance(now, UserMessage) and now.text.startswith(last.text)
    replies = [i for i in original if isinstance(i, AssistantMessage)]
    if replies and replies[-1].prov.line > last.prov.line:
        assert kept[replies[-1].prov] == replies[-1]


def check_counts(original: list[Item], out: list[Item], report: ShrinkReport) -> None:
    source = by_prov(original)
    kept = [item for item in out if item not in synthetic(out)]
    cleared = trimmed = images = cut = 0
    for item in kept:
        before = source[item.prov]
        if isinstance(item, ToolResult) and isinstance(before, ToolResult):
            images += len(before.images) - len(item.images)
            if item.output != before.output and PLACEHOLDER_RE.match(item.output):
                cleared += 1
            elif item.output != before.output and was_cut(item.output):
                cut += 1
        if isinstance(item, UserMessage) and isinstance(before, UserMessage):
            images += len(before.images) - len(item.images)
        if isinstance(item, ToolCall) and isinstance(before, ToolCall):
            trimmed += item.input != before.input
    assert report.cleared_results == cleared
    assert report.trimmed_results == cut
    assert report.cleared_attachments == images
    assert report.trimmed_inputs == trimmed
    assert report.dropped_items == len(original) - len(kept)
    kept_provs = {item.prov for item in kept}
    dropped_prompts = [i for i in original if is_prompt(i) and i.prov not in kept_provs]
    assert report.dropped_turns == len(dropped_prompts)
    assert bool(synthetic(out)) <= bool(report.dropped_items)
    assert report.removed_anything == (out != original)


def index_lines(marker: Compaction) -> list[str]:
    return [line[2:] for line in marker.summary.split("\n") if line.startswith("- ")]


# --- unit cases ---------------------------------------------------------------------------------


def test_fits_unchanged() -> None:
    items = Builder().prompt("hi").tool(500).reply("done").items
    out, report = shrink(items, 10_000)
    assert out == items
    assert not report.removed_anything
    assert report.describe() == "nothing removed"


def test_trims_old_results_oldest_first_and_protects_recent() -> None:
    b = Builder()
    for n in range(5):
        b.prompt(f"p{n}").tool(20_000, error=n == 0).tool(20_000).reply(f"r{n}")
    items = b.items
    budget = history_chars(items) - 30_000
    out, report = shrink(items, budget)
    check_invariants(items, out, report, budget)
    results = [i for i in out if isinstance(i, ToolResult)]
    assert was_cut(results[0].output) and results[0].error is True
    assert results[0].output.startswith("o" * 1000) and results[0].output.endswith("o" * 1000)
    assert report.trimmed_results >= 1 and report.cleared_results == 0
    # the oldest is cut at least as deep as any later one; the recent turns stay whole
    kept = [len(r.output) for r in results]
    assert kept[0] <= min(kept[1:4])
    assert all(r.output == "o" * 20_000 for r in results[-2:])  # the last turn: 40k of 170k
    assert report.dropped_items == 0
    assert "tool output" in report.describe() and "trimmed" in report.describe()


def test_trimming_keeps_the_head_and_tail_lines() -> None:
    lines = [f"line {n:05d} of the output" for n in range(2000)]
    b = Builder().prompt("a")
    b.items.append(ToolCall("c1", "bash", {"command": "seq"}, ToolKind.SHELL, b._prov()))
    b.items.append(ToolResult("c1", "\n".join(lines), b._prov()))
    b.reply("x").prompt("b").reply("y").prompt("c").reply("z")
    items = b.items
    out, report = shrink(items, history_chars(items) - 30_000, keep_recent_turns=2)
    result = next(i for i in out if isinstance(i, ToolResult))
    assert report.trimmed_results == 1
    head, _, tail = result.output.partition("\n[… ")
    assert head.split("\n") == lines[: len(head.split("\n"))]  # whole lines, from the start
    assert tail.split("\n")[1:] == lines[len(lines) - len(tail.split("\n")) + 1 :]
    assert "characters cut during provider switch …]" in tail.split("\n")[0]
    assert "line 00050" in head and "line 01950" in result.output  # 5% and 95% survive


def test_clears_only_when_trimming_every_old_output_is_not_enough() -> None:
    b = Builder()
    for n in range(6):
        b.prompt(f"p{n}").tool(20_000).reply(f"r{n}")
    items = b.items
    # room for the last turn and 1,500 more: even the smallest step leaves too much of the rest
    budget = history_chars(items) - 5 * 20_000 + 1_500
    out, report = shrink(items, budget)
    check_invariants(items, out, report, budget)
    assert report.cleared_results >= 1
    results = [i for i in out if isinstance(i, ToolResult)]
    assert PLACEHOLDER_RE.fullmatch(results[0].output)
    assert results[0].output == cleared_placeholder(20_000)  # the original size, not the cut one


def test_recent_turns_stay_whole_only_within_a_share_of_the_budget() -> None:
    b = Builder()
    for n in range(8):
        b.prompt(f"p{n}").tool(30_000).reply(f"r{n}")
    items = b.items
    budget = 150_000  # a third is 50k: only the last turn (30k) is protected, not two (60k)
    out, report = shrink(items, budget)
    check_invariants(items, out, report, budget)
    results = [i for i in out if isinstance(i, ToolResult)]
    assert results[-1].output == "o" * 30_000
    assert was_cut(results[-2].output)


def test_protection_never_touches_last_three_turns() -> None:
    b = Builder()
    for n in range(12):
        b.prompt(f"p{n}").tool(1000).reply(f"r{n}")
    items = b.items
    out, report = shrink(items, history_chars(items) - 1990)
    check_invariants(items, out, report, history_chars(items) - 1990)
    results = [i for i in out if isinstance(i, ToolResult)]
    # old turns trimmed or cleared, then the drop rung, never the protected three (they take
    # less than a third of the budget)
    assert all(r.output == "o" * 1000 for r in results[-3:])


def test_net_savings_guard_and_exact_placeholder() -> None:
    already = cleared_placeholder(5000)
    b = Builder().prompt("a").tool(10).reply("x")
    b.items.append(ToolCall("k", "bash", {}, ToolKind.SHELL, Provenance("t", 99)))
    b.items.append(ToolResult("k", already, Provenance("t", 100)))
    b.items.append(
        ToolResult(
            "k2",
            "[tool output cleared during provider switch: lots]" + "z" * 200,
            Provenance("t", 101),
        )
    )
    b.prompt("b").reply("y").prompt("c").reply("z")
    items = b.items
    out, report = shrink(items, history_chars(items) - 100)
    assert out[2] == items[2]  # 10 characters: the placeholder would not save anything
    assert out[5] == items[5]  # already the exact placeholder: not counted, not rewritten
    assert isinstance(out[6], ToolResult) and PLACEHOLDER_RE.fullmatch(out[6].output)
    assert report.cleared_results == 1


def test_attachments_dropped_with_marker() -> None:
    items = (
        Builder()
        .prompt("look", images=2)
        .reply("ok")
        .prompt("b")
        .tool(10, images=1)
        .reply("c")
        .prompt("c")
        .reply("d")
        .items
    )
    budget = history_chars(items) - IMAGE_CHARS * 3 + 500
    out, report = shrink(items, budget)
    check_invariants(items, out, report, budget)
    first = out[0]
    assert isinstance(first, UserMessage) and first.images == ()
    assert first.text == f"look\n{IMAGE_MARKER}\n{IMAGE_MARKER}"
    assert report.cleared_attachments == 3


def test_trims_dict_member_wise_and_strings() -> None:
    big = {"file_path": "/a/b.py", "content": "x" * 20_000, "note": "y" * 2000}
    items = (
        Builder()
        .prompt("a")
        .tool(10, inp=big)
        .tool(10, inp="s" * 30_000)
        .reply("r")
        .prompt("b")
        .reply("r")
        .prompt("c")
        .reply("r")
        .items
    )
    budget = history_chars(items) - 30_000
    out, report = shrink(items, budget, max_input_chars=8000)
    check_invariants(items, out, report, budget)
    call = out[1]
    assert isinstance(call, ToolCall) and isinstance(call.input, dict)
    assert call.input["file_path"] == "/a/b.py"
    assert call.input["content"].startswith("xxx")
    assert "tool input trimmed during provider switch" in call.input["content"]
    text_call = out[3]
    assert isinstance(text_call, ToolCall) and isinstance(text_call.input, str)
    assert len(text_call.input) <= 8000
    assert text_call.input.endswith("characters omitted]")
    assert report.trimmed_inputs == 2
    assert call.input["note"] == "y" * 2000
    assert report.trimmed_input_chars > 30_000


def test_drops_oldest_turns_with_index_and_keeps_portable_head() -> None:
    b = Builder().compaction("earlier summary")
    for n in range(8):
        b.prompt(f"prompt number {n}\nsecond line").reply("r" * 2000)
    items = b.items
    budget = 7000
    out, report = shrink(items, budget)
    check_invariants(items, out, report, budget)
    assert out[0] == items[0]
    marker = out[1]
    assert isinstance(marker, Compaction) and marker.trigger == "segue"
    assert marker.state is CompactionState.PORTABLE
    dropped = [i.text for i in items if is_prompt(i) and i not in out]
    assert index_lines(marker) == [short(t, 200) for t in dropped]
    assert report.indexed_prompts == len(dropped) == report.dropped_turns
    assert f"{report.dropped_items} earlier items" in marker.summary
    assert "oldest turns dropped" in report.describe()


def test_index_cap_and_cut() -> None:
    b = Builder()
    for n in range(10):
        b.prompt(f"{n}" + "q" * 300).reply("r" * 500)
    out, report = shrink(b.items, 6000, max_indexed_prompts=3, prompt_index_chars=50)
    marker = synthetic(out)[0]
    lines = index_lines(marker)
    assert report.indexed_prompts == len(lines) <= 3
    assert all(len(line) <= 50 for line in lines)
    assert lines[-1].startswith(str(report.dropped_turns - 1))


def test_second_pass_lifts_protection_for_a_huge_screenshot() -> None:
    items = Builder().prompt("old").reply("o" * 1500).prompt("see", images=10).reply("fine").items
    out, report = shrink(items, 1000)
    check_invariants(items, out, report, 1000)
    assert report.lifted_protection
    assert report.dropped_turns == 1


def test_single_turn_is_not_protected() -> None:
    items = Builder().prompt("one").tool(50_000).tool(50_000).reply("done").items
    out, report = shrink(items, 60_000)
    check_invariants(items, out, report, 60_000)
    assert report.trimmed_results >= 1
    assert not report.lifted_protection


def test_unfittable() -> None:
    items = Builder().prompt("a").reply("r").prompt("x" * 5000).reply("y" * 5000).items
    with pytest.raises(Unfittable) as info:
        shrink(items, 3000)
    assert "10000 characters" in str(info.value)
    assert "3000-character budget" in str(info.value)
    assert info.value.report.budget_chars == 3000


def test_format_and_describe() -> None:
    assert format_count(950) == "950"
    assert format_count(1234) == "1.2k"
    assert format_count(560_000) == "560k"
    assert format_count(999_999) == "1M"
    assert format_count(1_234_567) == "1.2M"
    report = ShrinkReport(
        1_234_567,
        560_000,
        600_000,
        cleared_results=37,
        trimmed_inputs=3,
        dropped_turns=12,
        dropped_items=40,
    )
    assert report.describe() == (
        "37 tool outputs cleared, 3 tool inputs trimmed, 12 oldest turns dropped "
        "(1.2M → 560k chars)"
    )


# --- properties ---------------------------------------------------------------------------------


@st.composite
def conversations(draw: st.DrawFn) -> list[Item]:
    b = Builder()
    if draw(st.booleans()):
        b.compaction("s" * draw(st.integers(0, 3000)))
    if draw(st.booleans()):
        b.prompt("env", origin=Origin.INJECTED)
    for turn in range(draw(st.integers(0, 8))):
        b.prompt(f"p{turn} " + "w" * draw(st.integers(0, 400)), images=draw(st.integers(0, 1)))
        for _ in range(draw(st.integers(0, 4))):
            size = draw(st.integers(0, 6000))
            inp: Any = (
                "i" * size if draw(st.booleans()) else {"path": "/x", "body": "b" * size, "n": 3}
            )
            b.tool(draw(st.integers(0, 8000)), inp=inp, images=draw(st.integers(0, 1)))
        if draw(st.booleans()):
            b.reply("r" * draw(st.integers(0, 1500)))
    return b.items


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(conversations(), st.floats(0, 1.1), st.integers(0, 4))
def test_properties(items: list[Item], fraction: float, keep: int) -> None:
    budget = int(history_chars(items) * fraction)
    kwargs: dict[str, Any] = {"keep_recent_turns": keep, "max_input_chars": 2000}
    try:
        out, report = shrink(items, budget, **kwargs)
    except Unfittable as error:
        assert error.report.chars_after > budget
        assert f"{budget}-character budget" in str(error)
        with pytest.raises(Unfittable):
            shrink(items, budget, **kwargs)
        return
    check_invariants(items, out, report, budget)
    again, report_again = shrink(items, budget, **kwargs)
    assert again == out and report_again == report
    if budget >= history_chars(items):
        assert out == items and not report.removed_anything
    markers = synthetic(out)
    if markers:
        kept = {i.prov for i in out if i not in markers}
        dropped = [i for i in items if is_prompt(i) and i.prov not in kept]
        expected = [short(i.text, 200) for i in dropped if isinstance(i, UserMessage)]
        lines = index_lines(markers[0])
        assert len(lines) == report.indexed_prompts
        assert lines == expected[len(expected) - len(lines) :]


def test_replace_keeps_identity_fields() -> None:
    result = ToolResult("id", "o" * 100, Provenance("t", 1), error=True, exit_code=2)
    assert replace(result, output="x").exit_code == 2
