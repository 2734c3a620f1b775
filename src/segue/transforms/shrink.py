"""Shrink a history to a character budget with a deterministic ladder, cheapest loss first.

Rungs, each stopping as soon as ``history_chars(result) <= budget_chars``:

1. trim old tool outputs to a head and a tail with a one-line marker of what was cut: the kept
   size is lowered step by step (:data:`TRIM_LEVELS`), and at each step the oldest outputs are
   trimmed first;
2. clear old tool outputs whole, oldest first (the result item, its call id and error flag
   stay), only when trimming every old output to the smallest step is not enough;
3. drop old image attachments, leaving a text marker;
4. trim tool inputs above ``max_input_chars`` (a dict stays a dict: members are trimmed);
5. drop the oldest complete turns behind one synthetic portable :class:`Compaction`.

Rungs 1–4 spare the recent turns: the last ``keep_recent_turns`` turns, as many of them as
take at most :data:`PROTECTED_SHARE` of the budget (the last turn always). When no turn
boundary fits, rungs 1–4 run again with that protection lifted and rung 5 is retried; if the
last turn alone still does not fit, :class:`Unfittable` is raised. Pure and provider-neutral: no
I/O, no provider names.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from itertools import accumulate

import msgspec
import orjson
from msgspec.structs import replace

from segue.model.conversation import (
    JSON,
    Compaction,
    CompactionState,
    Item,
    ToolCall,
    ToolResult,
    UserMessage,
)
from segue.model.errors import SwitchError
from segue.model.units import format_count
from segue.support.text import short
from segue.transforms.budget import history_chars, item_chars
from segue.transforms.trim import cut_middle
from segue.transforms.turns import is_prompt

IMAGE_MARKER = "[image omitted during provider switch]"
MARKER_TRIGGER = "segue"
_CLEARED_RE = re.compile(r"\[tool output cleared during provider switch: \d+ characters\]")
_TRIMMED_RE = re.compile(
    r"\n\[tool input trimmed during provider switch: \d+ characters omitted\]\Z"
)
_MARKER_RESERVE = len("[9999999999 earlier items omitted during provider switch]")
# Kept sizes (characters, head and tail together) the trimming rung tries, largest first: each
# about 0.8 of the one before, so the budget is used nearly to the last step.
TRIM_LEVELS = tuple(int(32_000 * 0.8**n) for n in range(20))
PROTECTED_SHARE = 1 / 3  # recent turns stay whole while they take at most this of the budget

Stop = Callable[[], bool]


def cleared_placeholder(chars: int) -> str:
    return f"[tool output cleared during provider switch: {chars} characters]"


def trimmed_marker(omitted: int) -> str:
    return f"\n[tool input trimmed during provider switch: {omitted} characters omitted]"


# --- report -------------------------------------------------------------------------------------


class ShrinkReport(msgspec.Struct):
    """What the ladder did. Counts describe the returned list (changes to items that were later
    dropped with their turn are not counted). ``*_chars`` are net savings."""

    chars_before: int
    chars_after: int
    budget_chars: int
    trimmed_results: int = 0
    trimmed_result_chars: int = 0
    cleared_results: int = 0
    cleared_result_chars: int = 0
    cleared_attachments: int = 0
    trimmed_inputs: int = 0
    trimmed_input_chars: int = 0
    dropped_turns: int = 0
    dropped_items: int = 0
    indexed_prompts: int = 0
    lifted_protection: bool = False

    @property
    def removed_anything(self) -> bool:
        return bool(
            self.trimmed_results
            or self.cleared_results
            or self.cleared_attachments
            or self.trimmed_inputs
            or self.dropped_items
        )

    def describe(self) -> str:
        if not self.removed_anything:
            return "nothing removed"
        trimmed = counted(self.trimmed_results, "tool output", "trimmed")
        if trimmed:
            trimmed += f" ({format_count(self.trimmed_result_chars)} chars cut)"
        parts = [
            trimmed,
            counted(self.cleared_results, "tool output", "cleared"),
            counted(self.cleared_attachments, "attachment", "cleared"),
            counted(self.trimmed_inputs, "tool input", "trimmed"),
            counted(self.dropped_turns, "oldest turn", "dropped")
            or counted(self.dropped_items, "oldest item", "dropped"),
        ]
        sizes = f"({format_count(self.chars_before)} → {format_count(self.chars_after)} chars)"
        return ", ".join(part for part in parts if part) + " " + sizes


def counted(n: int, noun: str, verb: str) -> str:
    """``"3 tool outputs cleared"``; nothing for none."""
    if n == 0:
        return ""
    return f"{n} {noun}{'' if n == 1 else 's'} {verb}"


class Unfittable(SwitchError):
    """Even the smallest complete suffix of the history exceeds the budget."""

    def __init__(self, message: str, report: ShrinkReport) -> None:
        super().__init__(message)
        self.report = report


# --- working state ------------------------------------------------------------------------------


class _Work(msgspec.Struct):
    """The list being shrunk in place (rungs 1–4 only replace items, so indices are stable)."""

    items: list[Item]
    sizes: list[int]
    total: int
    original: list[Item]  # as given
    second_pass: bool = False
    trimmed_results: dict[int, int] = msgspec.field(default_factory=dict)  # index → chars saved
    cleared: dict[int, int] = msgspec.field(default_factory=dict)  # index → net chars saved
    attachments: dict[int, int] = msgspec.field(default_factory=dict)  # index → images dropped
    trimmed: dict[int, int] = msgspec.field(default_factory=dict)  # index → net chars saved
    lifted: set[int] = msgspec.field(default_factory=set)  # indices changed by the second pass

    def put(self, index: int, new: Item) -> int:
        size = item_chars(new)
        saved = self.sizes[index] - size
        self.items[index] = new
        self.sizes[index] = size
        self.total -= saved
        if self.second_pass:
            self.lifted.add(index)
        return saved


class _Limits(msgspec.Struct, frozen=True):
    max_input_chars: int
    max_indexed_prompts: int
    prompt_index_chars: int


# --- rungs 1–4 ----------------------------------------------------------------------------------


def _trim_results(work: _Work, end: int, budget: int) -> None:
    """Rung 1: trim the outputs before ``end``. Find the largest step at which trimming all of
    them would fit ``budget``; the oldest are trimmed to it until the whole fits, the newer ones
    keep the step before (or stay whole when even that is not needed). When no step fits, all
    go to the smallest. Each output is cut once, so the cost stays linear in its length."""
    outputs: list[int] = []
    sizes: dict[int, int] = {}
    for index in range(end):
        item = work.items[index]
        if isinstance(item, ToolResult) and not _CLEARED_RE.fullmatch(item.output):
            outputs.append(index)
            sizes[index] = len(item.output)
    if not outputs:
        return
    fixed = work.total - sum(sizes.values())
    others: int | None = None  # what the outputs not trimmed to `level` keep (None: all)
    for level in TRIM_LEVELS:
        if fixed + sum(_after_cut(n, level) for n in sizes.values()) <= budget:
            break
        others = level
    else:
        # Nothing fits: the oldest will be cleared whole by the next rung; cut the others to
        # the smallest step (and not the ones about to be cleared).
        total = fixed + sum(_after_cut(n, level) for n in sizes.values())
        while outputs and total > budget:
            total -= _after_cut(sizes[outputs.pop(0)], level) - _CLEARED_SIZE
        for index in outputs:
            if _after_cut(sizes[index], level) < sizes[index]:
                _trim_result(work, index, level)
        return
    total = fixed + sum(_after_cut(n, others) for n in sizes.values())
    for index in outputs:  # oldest first
        if total > budget:
            keep: int | None = level
        elif others is not None:
            keep = others
        else:
            break
        total -= _after_cut(sizes[index], others) - _after_cut(sizes[index], keep)
        if keep is not None and _after_cut(sizes[index], keep) < sizes[index]:
            _trim_result(work, index, keep)


_CUT_OVERHEAD = 64  # the marker line a cut adds
_CLEARED_SIZE = len(cleared_placeholder(10**9))


def _after_cut(chars: int, keep: int | None) -> int:
    """The size of an output of ``chars`` characters trimmed to ``keep`` (None: untouched)."""
    if keep is None or chars <= keep + _CUT_OVERHEAD:
        return chars
    return keep + _CUT_OVERHEAD


def _trim_result(work: _Work, index: int, keep: int) -> None:
    item = work.items[index]
    assert isinstance(item, ToolResult)
    cut = cut_middle(item.output, keep)
    if len(cut) >= len(item.output):
        return
    saved = work.put(index, replace(item, output=cut))
    work.trimmed_results[index] = work.trimmed_results.get(index, 0) + saved


def _replace_each(
    work: _Work, end: int, stop: Stop, done: dict[int, int], change: Callable[[int], Item | None]
) -> None:
    """Rungs 2 and 4: replace each item before ``end`` (oldest first, until ``stop``) by what
    ``change`` makes of it when that is smaller; ``done`` records each one's net saving."""
    for index in range(end):
        if stop():
            return
        new = None if index in done else change(index)
        if new is not None and item_chars(new) < work.sizes[index]:
            done[index] = work.put(index, new) + work.trimmed_results.pop(index, 0)


def _cleared(work: _Work, index: int) -> Item | None:
    item, original = work.items[index], work.original[index]
    if not isinstance(item, ToolResult) or _CLEARED_RE.fullmatch(item.output):
        return None
    assert isinstance(original, ToolResult)
    return replace(item, output=cleared_placeholder(len(original.output)))


def _clear_attachments(work: _Work, end: int, stop: Stop) -> None:
    for index in range(end):
        while not stop():
            item = work.items[index]
            if isinstance(item, UserMessage) and item.images:
                new: Item = replace(item, text=_append(item.text), images=item.images[1:])
            elif isinstance(item, ToolResult) and item.images:
                new = replace(item, output=_append(item.output), images=item.images[1:])
            else:
                break
            work.put(index, new)
            work.attachments[index] = work.attachments.get(index, 0) + 1


def _append(text: str) -> str:
    return f"{text}\n{IMAGE_MARKER}" if text else IMAGE_MARKER


def _trimmed_call(item: Item, limit: int) -> Item | None:
    if not isinstance(item, ToolCall):
        return None
    trimmed = trim_input(item.input, limit)
    return None if trimmed is None else replace(item, input=trimmed)


def trim_input(value: JSON, limit: int) -> JSON | None:
    """The input cut to about ``limit`` serialized characters, or None if it cannot shrink."""
    if isinstance(value, str):
        if len(value) <= limit or _TRIMMED_RE.search(value):
            return None
        trimmed = _head(value, max(limit - len(trimmed_marker(len(value))), 0))
        return trimmed if len(trimmed) < len(value) else None
    if isinstance(value, dict):
        if _json_len(value) <= limit:
            return None
        trimmed_dict = _trim_dict(value, limit)
        return trimmed_dict if _json_len(trimmed_dict) < _json_len(value) else None
    return None


def _head(text: str, keep: int) -> str:
    """The first ``keep`` characters of ``text`` and a marker of what was cut."""
    return text[:keep] + trimmed_marker(len(text) - keep)


def _json_len(value: JSON) -> int:
    return len(orjson.dumps(value).decode())


def _trim_dict(value: dict[str, JSON], limit: int) -> dict[str, JSON]:
    out = dict(value)
    tried: set[str] = set()
    while _json_len(out) > limit:
        untried = [
            key
            for key, member in out.items()
            if key not in tried and isinstance(member, str) and not _TRIMMED_RE.search(member)
        ]
        if not untried:
            break
        key = max(untried, key=lambda k: len(out[k]))
        tried.add(key)
        candidate = {**out, key: _trim_member(out, key, limit)}
        if _json_len(candidate) < _json_len(out):
            out = candidate
    return out


def _trim_member(value: dict[str, JSON], key: str, limit: int) -> str:
    """The longest head of ``value[key]`` (plus marker) keeping the whole dict within ``limit``."""
    text = value[key]
    low, high = 0, len(text) - 1
    best = 0
    while low <= high:
        mid = (low + high) // 2
        if _json_len({**value, key: _head(text, mid)}) <= limit:
            best, low = mid, mid + 1
        else:
            high = mid - 1
    return _head(text, best)


def _clearing_rungs(work: _Work, end: int, stop: Stop, limits: _Limits, budget: int) -> None:
    if stop():
        return
    _trim_results(work, end, budget)
    _replace_each(work, end, stop, work.cleared, lambda index: _cleared(work, index))
    _clear_attachments(work, end, stop)
    limit = limits.max_input_chars
    _replace_each(work, end, stop, work.trimmed, lambda i: _trimmed_call(work.items[i], limit))


# --- turns and boundaries -----------------------------------------------------------------------


def _protected_start(
    prompts: list[int], sizes: Sequence[int], keep_recent_turns: int, max_chars: int
) -> int:
    """Index where recent-turn protection begins (``len(sizes)``: nothing protected): the last
    ``keep_recent_turns`` turns (beginning at ``prompts``), fewer when they take more than
    ``max_chars`` (never fewer than the last turn)."""
    if keep_recent_turns <= 0 or len(prompts) <= 1:
        return len(sizes)
    start = prompts[-1]
    for turn in range(2, min(keep_recent_turns, len(prompts) - 1) + 1):
        candidate = prompts[-turn]
        if sum(sizes[candidate:]) > max_chars:
            break
        start = candidate
    return start


def _head_index(items: Sequence[Item], first_prompt: int) -> int | None:
    """The last portable Compaction before the first prompt: kept at the head when it fits."""
    head = None
    for index in range(first_prompt):
        item = items[index]
        if isinstance(item, Compaction) and item.state is CompactionState.PORTABLE:
            head = index
    return head


def _safe_cuts(items: Sequence[Item], prompts: list[int]) -> list[int]:
    """Prompt positions after the first where no call/result pair straddles the cut."""
    last = {
        item.call_id: index
        for index, item in enumerate(items)
        if isinstance(item, ToolCall | ToolResult)
    }
    cuts, reach = [], 0  # reach: the last index of any pair begun so far
    prompt_set = set(prompts[1:])
    for index, item in enumerate(items):
        if index in prompt_set and reach < index:
            cuts.append(index)
        if isinstance(item, ToolCall | ToolResult):
            reach = max(reach, last[item.call_id])
    return cuts


# --- rung 5 -------------------------------------------------------------------------------------


def _drop_turns(
    work: _Work, report: ShrinkReport, cuts: list[int], head: int | None, limits: _Limits
) -> list[Item] | None:
    """Drop everything before the first of ``cuts`` (oldest first) whose rest, with a marker
    (and the head compaction when it fits too), fits the budget; at the last cut, without a
    marker when not even the shortest one fits. Completes ``report`` when it does."""
    items, sizes, budget = work.items, work.sizes, report.budget_chars
    before = [0, *accumulate(sizes)]  # characters before each index
    for position, cut in enumerate(cuts):
        retained = before[-1] - before[cut]
        fits_head = head is not None and retained + sizes[head] + _MARKER_RESERVE <= budget
        heads = [head] if fits_head and head is not None else []
        room = budget - retained - sum(sizes[index] for index in heads)
        if room < 0:
            continue
        dropped = [index for index in range(cut) if index not in heads]
        # The index quotes prompts as typed, without the attachment markers rung 3 appended.
        prompts = [item for item in work.original[:cut] if is_prompt(item)]
        summary, indexed = _marker_summary(len(dropped), prompts, room, limits)
        if summary is None and position < len(cuts) - 1:
            continue
        kept = heads + list(range(cut, len(items)))
        result = [items[index] for index in kept]
        if summary is not None:
            prov = items[dropped[0]].prov
            marker = Compaction(summary, CompactionState.PORTABLE, prov, trigger=MARKER_TRIGGER)
            result.insert(len(heads), marker)
        _tally(work, report, kept)
        report.dropped_turns, report.dropped_items = len(prompts), len(dropped)
        report.indexed_prompts = indexed
        report.chars_after = history_chars(result)
        return result
    return None


def _marker_summary(
    dropped_items: int, prompts: Sequence[UserMessage], room: int, limits: _Limits
) -> tuple[str | None, int]:
    turns = len(prompts)
    headline = (
        f"[Provider switch omitted {dropped_items} earlier items across {turns} user "
        f"turn{'' if turns == 1 else 's'} so the session fits the target model's context. "
        "The retained history begins at the next complete user turn.]"
    )
    cap = max(limits.max_indexed_prompts, 0)
    texts = [p.text for p in prompts]
    lines = [short(t, limits.prompt_index_chars) for t in texts[len(texts) - cap :]]
    header = "\nEarlier prompts, oldest first:"
    size = len(headline) + len(header) + sum(len(line) + 3 for line in lines)
    while lines and size > room:
        size -= len(lines.pop(0)) + 3
    if lines:
        return headline + header + "".join(f"\n- {line}" for line in lines), len(lines)
    if len(headline) <= room:
        return headline, 0
    brief = f"[{dropped_items} earlier items omitted during provider switch]"
    return (brief, 0) if len(brief) <= room else (None, 0)


# --- the ladder ---------------------------------------------------------------------------------


def shrink(
    items: Sequence[Item],
    budget_chars: int,
    *,
    keep_recent_turns: int = 3,
    max_input_chars: int = 8000,
    max_indexed_prompts: int = 40,
    prompt_index_chars: int = 200,
) -> tuple[list[Item], ShrinkReport]:
    """Fit ``items`` into ``budget_chars`` (see the module docstring).

    Returns the new list and a report; raises :class:`Unfittable` when even the last turn,
    cleared as far as the ladder goes, exceeds the budget.
    """
    original = list(items)
    sizes = [item_chars(item) for item in original]  # once: the ladder keeps the total up to date
    work = _Work(list(original), sizes, sum(sizes), original)
    report = ShrinkReport(work.total, work.total, budget_chars)
    if work.total <= budget_chars:
        return original, report
    limits = _Limits(max_input_chars, max_indexed_prompts, prompt_index_chars)
    prompts = [index for index, item in enumerate(original) if is_prompt(item)]
    cuts = _safe_cuts(original, prompts)
    head = _head_index(original, prompts[0]) if prompts else None
    tail = cuts[-1] if cuts else 0

    def enough() -> bool:  # (in the second pass, also once the last turn fits with a marker)
        if work.total <= budget_chars:
            return True
        last_turn = sum(work.sizes[tail:]) + _MARKER_RESERVE
        return work.second_pass and bool(cuts) and last_turn <= budget_chars

    protected = _protected_start(
        prompts, work.sizes, keep_recent_turns, int(budget_chars * PROTECTED_SHARE)
    )
    for end in (protected, len(original)):  # the second pass lifts the protection
        _clearing_rungs(work, end, enough, limits, budget_chars)
        if work.total <= budget_chars:
            break
        result = _drop_turns(work, report, cuts, head, limits)
        if result is not None:
            return result, report
        work.second_pass = True
    _tally(work, report, range(len(original)))
    report.chars_after = work.total
    if work.total <= budget_chars:
        return list(work.items), report
    raise Unfittable(
        f"history does not fit: the smallest complete suffix (the last turn, "
        f"{len(original) - tail} items) is {sum(work.sizes[tail:])} characters after clearing "
        f"every tool output, attachment and oversized input, over the {budget_chars}-character "
        "budget",
        report,
    )


def _tally(work: _Work, report: ShrinkReport, kept: Iterable[int]) -> None:
    for index in kept:
        if index in work.trimmed_results:
            report.trimmed_results += 1
            report.trimmed_result_chars += work.trimmed_results[index]
        if index in work.cleared:
            report.cleared_results += 1
            report.cleared_result_chars += work.cleared[index]
        report.cleared_attachments += work.attachments.get(index, 0)
        if index in work.trimmed:
            report.trimmed_inputs += 1
            report.trimmed_input_chars += work.trimmed[index]
        if index in work.lifted:
            report.lifted_protection = True
