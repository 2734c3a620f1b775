"""Plan a switch: which part of a conversation goes to the target, and what is lost on the way.

Pure and provider-neutral. The order is the design:

1. the portable history: cut at the latest *portable* compaction, with every compaction only the
   source can read dropped (a Codex remote compaction's encrypted summary: the plaintext turns
   Codex kept on disk before it are carried instead);
2. what the target can carry at all (the target writer's ``select``: no reasoning payloads, no
   error notices, no injected context, no half tool cycles);
3. every tool output cut (head and tail) to what the target itself keeps of an output it
   replays (Codex cuts each to its model's budget), so the budget counts what the target
   really sends and what is lost is what segue chose and reported;
4. if that does not fit both of the target's limits (its CLI's own estimate, and the real
   window by the target's tokenizer: see :mod:`segue.transforms.budget`), the deterministic
   shrink ladder, to a character budget found so the result fills the tighter limit to within
   :data:`FILL` without passing either.

The label is honest: ``native`` (nothing lost), ``raw`` (the raw history was carried in place of
compactions only the source can read, nothing else lost), ``shrunk`` (the ladder removed
something).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from enum import StrEnum

import msgspec

from segue.model.conversation import Compaction, Conversation, Item, ToolResult
from segue.model.units import format_count
from segue.transforms.budget import Measure, TargetProfile
from segue.transforms.effective import portable_history
from segue.transforms.shrink import ShrinkReport, Unfittable, counted, shrink
from segue.transforms.trim import cap_outputs, was_cut
from segue.transforms.turns import is_prompt

Select = Callable[[Sequence[Item]], list[Item]]

FILL = 0.97  # a shrunk history takes at least this share of the tighter limit, when it can
MAX_FITS = 8  # shrink attempts to find the character budget that fills it


class Label(StrEnum):
    """How much of the history a plan carries."""

    NATIVE = "native"  # everything the target can take
    RAW_HISTORY = "raw"  # the raw history in place of compactions only the source can read
    SHRUNK = "shrunk"  # the shrink ladder removed something to fit the target


class Plan(msgspec.Struct):
    target: TargetProfile
    items: list[Item]  # exactly what the target writer will write
    label: Label
    dropped_compactions: list[Compaction]
    not_carried: dict[str, int]  # kinds of items the target cannot take, and how many
    measure_before: Measure  # what the carried history costs, by both limits, before shrinking
    measure_after: Measure  # what ``items`` cost
    shrink: ShrinkReport | None = None
    notes: list[str] = msgspec.field(default_factory=list)
    capped_results: int = 0  # tool outputs cut to what the target itself would keep
    capped_chars: int = 0
    trimmed_results: int = 0  # outputs carried with their middle cut, for either reason
    trimmed_chars: int = 0  # characters cut from them
    secrets: dict[str, int] = msgspec.field(default_factory=dict)  # kind -> occurrences in items
    secrets_redacted: bool = False  # replaced by markers everywhere (else only in segue's own)

    @property
    def chars_before(self) -> int:
        """The portable history the target can carry, before shrinking, in characters."""
        return self.measure_before.chars

    @property
    def chars_after(self) -> int:
        return self.measure_after.chars

    @property
    def fits(self) -> bool:
        """Whether ``items`` stay under both of the target's limits."""
        return self.target.fits(self.measure_after)

    @property
    def limit_line(self) -> str:
        """Both figures and which limit decides, for a person, the deciding one first, e.g. "39
        of 233k by codex's own estimate (the CLI's estimate decides); ~39 of 245k tokens by
        o200k"."""
        m, t = self.measure_after, self.target
        deciding = t.deciding_limit(m)
        window = (
            f"~{format_count(m.tokens)} of {format_count(t.window_budget_tokens)} tokens by "
            f"{t.counted_by}"
        )
        cli = (
            f"{format_count(m.cli_tokens)} of {format_count(t.budget_tokens)} by "
            f"{t.provider}'s own estimate"
        )
        first, second = (window, cli) if deciding == "window" else (cli, window)
        which = "the window" if deciding == "window" else "the CLI's estimate"
        return f"{first} ({which} decides); {second}"

    @property
    def secrets_line(self) -> str | None:
        """What the plan carries of secrets, for a person; None when it carries none."""
        if not self.secrets:
            return None
        total = sum(self.secrets.values())
        kinds = ", ".join(f"{n} {kind}" for kind, n in self.secrets.items())
        if self.secrets_redacted:
            return f"{total} found ({kinds}): replaced by markers"
        return (
            f"{total} found ({kinds}): carried as they are, except in segue's own summary "
            "(--redact-secrets replaces them by markers)"
        )

    @property
    def loss_line(self) -> str:
        """What the plan carries and loses, on one line for a person, e.g. "shrunk: 2
        compactions only the source can read dropped, 37 tool outputs cleared, 12 oldest turns
        dropped (1.2M → 560k chars)"."""
        dropped = len(self.dropped_compactions)
        parts = [
            counted(dropped, "compaction", "only the source can read dropped"),
            counted(self.capped_results, "tool output", "cut to what the target itself keeps"),
        ]
        if self.capped_results:
            parts[1] += f" ({format_count(self.capped_chars)} chars cut)"
        parts = [part for part in parts if part]
        if self.shrink is not None and self.shrink.removed_anything:
            parts.append(self.shrink.describe())
        elif parts:
            parts.append(f"({format_count(self.chars_after)} chars)")
        if not parts:
            parts.append(f"nothing lost ({format_count(self.chars_after)} chars)")
        return f"{self.label.value}: " + ", ".join(parts).replace(", (", " (")


def make_plan(conversation: Conversation, target: TargetProfile, select: Select) -> Plan:
    """Raises :class:`segue.transforms.shrink.Unfittable` when not even the last turn fits."""
    portable, dropped = portable_history(conversation)
    selected = select(portable)
    not_carried = _not_carried(portable, selected)
    carried, capped, capped_chars = cap_outputs(selected, target.output_cap_bytes)
    whole = target.measure(carried)
    notes: list[str] = []
    if dropped and not any(is_prompt(i) for i in _before(conversation.items, dropped[0])):
        notes.append(
            "a compaction only the source can read was dropped with no plaintext history "
            "before it: the target starts at the first turn after it"
        )
    unshrunk = Label.RAW_HISTORY if dropped else Label.NATIVE
    if target.fits(whole):
        plan = Plan(target, carried, unshrunk, dropped, not_carried, whole, whole, None, notes)
    else:
        final, report, after = _fit(carried, target, select, whole)
        label = Label.SHRUNK if report.removed_anything else unshrunk
        plan = Plan(target, final, label, dropped, not_carried, whole, after, report, notes)
    plan.capped_results, plan.capped_chars = capped, capped_chars
    plan.trimmed_results, plan.trimmed_chars = _cut_outputs(selected, plan.items)
    return plan


def _fit(
    carried: list[Item], target: TargetProfile, select: Select, whole: Measure
) -> tuple[list[Item], ShrinkReport, Measure]:
    """Shrink ``carried`` to the largest character budget whose result stays under both limits,
    filling the tighter to :data:`FILL` when it can: the ladder works in characters, and the
    token cost of what it keeps depends on what it cut, so the budget is found by a few shrinks
    (a secant step on the share of the limit used, kept inside the bracket found so far).
    Raises :class:`Unfittable` when not even the last turn fits."""
    # the first try aims at the middle of [FILL, 1], so one shrink is usually enough
    aim = (1 + FILL) / 2
    budget = min(target.budget_chars, int(whole.chars / target.use(whole) * aim))
    fitting = 0  # the largest character budget known to fit
    failing: int | None = None  # the smallest known not to
    best: tuple[list[Item], ShrinkReport, Measure] | None = None
    for _ in range(MAX_FITS):
        final, report, after = _shrunk(carried, target, select, budget)
        use = target.use(after)
        if use <= 1:
            if best is None or use > target.use(best[2]):
                best = (final, report, after)
            fitting = max(fitting, budget)
            if use >= FILL or budget >= target.budget_chars:
                break
        else:
            failing = budget if failing is None else min(failing, budget)
        high = target.budget_chars if failing is None else failing - 1
        step = int(budget / use * aim)
        if not fitting < step <= high:
            step = (fitting + high) // 2
        if step in (budget, 0):
            break
        budget = step
    while best is None:  # still over: smaller, until it fits or the ladder says it cannot
        budget = int(budget * 0.7)
        if budget < 1:
            raise Unfittable("history does not fit the target's window", report)
        final, report, after = _shrunk(carried, target, select, budget)
        if target.fits(after):
            best = (final, report, after)
    return best


def _shrunk(
    carried: list[Item], target: TargetProfile, select: Select, budget: int
) -> tuple[list[Item], ShrinkReport, Measure]:
    shrunk, report = shrink(carried, budget)
    final = select(shrunk)  # the ladder keeps pairs; select keeps the writer's invariants
    return final, report, target.measure(final)


def _cut_outputs(before: Sequence[Item], after: Sequence[Item]) -> tuple[int, int]:
    """How many tool outputs reach the target with their middle cut, and how many characters."""
    original = {
        (item.prov, item.call_id): item.output for item in before if isinstance(item, ToolResult)
    }
    count = chars = 0
    for item in after:
        if isinstance(item, ToolResult) and was_cut(item.output):
            was = original.get((item.prov, item.call_id))
            if was is not None and was != item.output:
                count += 1
                chars += len(was) - len(item.output)
    return count, chars


def _before(items: Sequence[Item], marker: Item) -> list[Item]:
    for i, item in enumerate(items):
        if item is marker:
            return list(items[:i])
    return []


def _not_carried(portable: Sequence[Item], carried: Sequence[Item]) -> dict[str, int]:
    kept = {id(item) for item in carried}
    counts = Counter(
        f"{item.kind}/{getattr(item, 'origin', '')}".rstrip("/")
        for item in portable
        if id(item) not in kept
    )
    return dict(sorted(counts.items()))
