"""How to move an app thread to provider P: the strategy order, as a pure function.

1. ``no_handoff``: P's provider thread already covers every run; resume it as is.
2. ``delta_into_existing``: P has a provider thread that is not stale and only missed one range
   of runs; carry those runs after its own native history (a native fork of it).
3. ``full_into_existing``: it missed runs, but not as one range (the delta chain is too
   complex); carry the whole thread into a fork of it.
4. ``full_into_new``: no usable provider thread of P (none yet, stale, rolled back, resume
   failed, settings incompatible, clean context asked for, handoff over budget): the whole thread
   into a new session.
5. ``unsupported``: the target cannot take the context; the reason says why.

Each decision says why, and is made once. Nothing here does I/O: the caller loads the graph,
gathers the facts (model changed, budget, resume failure) and records the decision; the facts
that cost reading sessions, and matter only for one provider thread and one range of runs, the
decision asks for when it gets there (a :class:`Probe`).
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any, Protocol

import msgspec
from msgspec.structs import asdict, replace

from segue.threads.config import StalenessConfig
from segue.threads.model import (
    HandoffForm,
    ProviderThread,
    ProviderThreadStatus,
    RunStatus,
    ThreadGraph,
    ranges,
    span,
)

__all__ = ["Decision", "Facts", "Probe", "Strategy", "decide"]


class Strategy(StrEnum):
    NO_HANDOFF = "no_handoff"
    DELTA_INTO_EXISTING = "delta_into_existing"
    FULL_INTO_EXISTING = "full_into_existing"
    FULL_INTO_NEW = "full_into_new"
    UNSUPPORTED = "unsupported"


class Facts(msgspec.Struct, frozen=True):
    """What the caller found out about the target before deciding."""

    clean: bool = False  # the user asked for a clean context (--clean)
    model_changed: bool = False  # the target's model or mode changed incompatibly
    resume_failed: bool = False  # resuming the target's provider thread failed
    conflict: str | None = None  # a rollback or fork that conflicts with the app thread
    over_budget: bool = False  # the handoff would exceed the target's budget
    delta_fits_natively: bool = True  # the missed runs fit as native items (else a summary)
    unsupported: str | None = None  # the target cannot take handoff context, and why

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


class Decision(msgspec.Struct, frozen=True):
    strategy: Strategy
    reason: str
    provider_thread: str | None = None  # the target's provider thread it goes into
    covers: tuple[int, int] | None = None  # the runs the handoff carries
    form: HandoffForm | None = None


class Probe(Protocol):
    """The facts a decision asks its caller for only once it needs them: the provider thread it
    would go into, and the one range of runs that thread missed, are known by then."""

    def conflict(self, pt: ProviderThread) -> str | None:
        """Why going into ``pt`` conflicts with the move (``Facts.conflict``), or None."""
        ...

    def delta_fits(self, pt: ProviderThread, covers: tuple[int, int]) -> bool:
        """Whether the runs ``covers`` fit into ``pt`` as native items
        (``Facts.delta_fits_natively``)."""
        ...


def _last_seen(pt: ProviderThread) -> int:
    """The last run it holds, natively or by a handoff (0: none)."""
    seen = [*pt.native_runs, *(h.covers[1] for h in pt.handoffs)]
    return max(seen, default=0)


def _candidate(graph: ThreadGraph, target: str) -> tuple[ProviderThread | None, str | None]:
    """The provider thread of ``target`` to return to, or why there is none."""
    mine = [pt for pt in graph.provider_threads if pt.provider == target]
    if not mine:
        return None, f"the thread has no {target} provider thread yet"
    usable = [pt for pt in mine if pt.status is ProviderThreadStatus.ACTIVE]
    if not usable:
        newest = mine[-1]
        if newest.status is ProviderThreadStatus.UNKNOWN:
            return None, (
                f"{target} provider thread {newest.id} has a status this segue does not know "
                "(a newer segue wrote it?): it is not returned to"
            )
        why = f": {newest.reason}" if newest.reason else ""
        return None, f"{target} provider thread {newest.id} is {newest.status.value}{why}"
    return max(usable, key=lambda pt: (_last_seen(pt), pt.version)), None


def _unfinished_held(pt: ProviderThread, graph: ThreadGraph) -> set[int]:
    """Runs still unfinished that ``pt``'s file already holds as far as they got (a switch
    made mid-turn carried what was on disk): nothing more to carry until they end."""
    working = {r.ordinal for r in graph.live_runs if r.status is RunStatus.WORKING}
    if not working or pt.turns is None:
        return set()
    return {slot.run for slot in pt.turns if slot.run in working}


def _full_into_new(runs: int, reason: str) -> Decision:
    covers = (1, runs) if runs else None
    form = HandoffForm.SUMMARY if runs else None
    return Decision(Strategy.FULL_INTO_NEW, reason, None, covers, form)


def decide(
    graph: ThreadGraph,
    target: str,
    facts: Facts,
    config: StalenessConfig,
    probe: Probe | None = None,
) -> Decision:
    """The strategy for moving ``graph``'s thread to provider ``target``, with its reason. A
    ``probe`` is asked for the facts that hold only for the provider thread the move would go
    into (after every other reason not to), as if they had been in ``facts``."""
    if facts.unsupported:
        return Decision(
            Strategy.UNSUPPORTED, f"{target} cannot take the context: {facts.unsupported}"
        )
    ordinals = [run.ordinal for run in graph.live_runs]
    last = ordinals[-1] if ordinals else 0
    pt, why_none = _candidate(graph, target)
    if pt is None:
        return _full_into_new(last, str(why_none))
    unfit = _unfit(pt, target, facts)  # whatever it missed: not a context to resume
    if unfit is not None:
        return _full_into_new(last, unfit)
    covered = pt.coverage() | _unfinished_held(pt, graph)
    missed = [n for n in ordinals if n not in covered]
    if missed:
        stale = _staleness(pt, graph, target, facts, config, missed)
        if stale is not None:
            return _full_into_new(last, stale)
    conflict = None if probe is None else probe.conflict(pt)
    if conflict is not None:
        return _full_into_new(last, str(_unfit(pt, target, replace(facts, conflict=conflict))))
    if not missed:
        return Decision(
            Strategy.NO_HANDOFF,
            f"{target} provider thread {pt.id} already holds every run (1-{last})"
            if last
            else f"the thread has no runs; {target} provider thread {pt.id} resumes as is",
            pt.id,
        )
    (first, *more) = ranges(missed)
    if not more:
        fits = facts.delta_fits_natively and (probe is None or probe.delta_fits(pt, first))
        form = HandoffForm.NATIVE_ITEMS if fits else HandoffForm.SUMMARY
        return Decision(
            Strategy.DELTA_INTO_EXISTING,
            f"{target} provider thread {pt.id} missed runs {span(missed, ', ')} only; "
            f"carrying them as {form.value.replace('_', ' ')}",
            pt.id,
            first,
            form,
        )
    return Decision(
        Strategy.FULL_INTO_EXISTING,
        f"{target} provider thread {pt.id} missed runs {span(missed, ', ')}, not one range: "
        "carrying the whole thread",
        pt.id,
        (1, last),
        HandoffForm.SUMMARY,
    )


def _unfit(pt: ProviderThread, target: str, facts: Facts) -> str | None:
    """Why ``pt`` is no context to resume, whatever runs it missed, or None. (A model changed
    since is the user's to resume with, as their own CLI would; it only stops a handoff.)"""
    name = f"{target} provider thread {pt.id}"
    if facts.clean:
        return "a clean context was asked for (--clean)"
    if facts.resume_failed:
        return f"resuming {name} failed"
    if facts.conflict:
        return f"{name} conflicts with the thread: {facts.conflict}"
    return None


def _staleness(
    pt: ProviderThread,
    graph: ThreadGraph,
    target: str,
    facts: Facts,
    config: StalenessConfig,
    missed: list[int],
) -> str | None:
    """Why returning to ``pt`` with the runs it ``missed`` is no longer appropriate, or None."""
    name = f"{target} provider thread {pt.id}"
    if facts.model_changed:
        return f"the {target} model or mode changed incompatibly since {name}"
    last = max(pt.native_runs, default=0)  # its last own run
    off = sum(1 for run in graph.live_runs if run.ordinal > last)
    if off > config.max_off_provider_runs:
        return (
            f"{off} runs elsewhere since {name} was last used "
            f"(more than max_off_provider_runs = {config.max_off_provider_runs})"
        )
    chained = 1 + sum(1 for h in pt.handoffs if h.covers[0] > last)  # since its last own run
    if chained > config.max_chained_handoffs:
        return (
            f"{name} would get {chained} handoffs in a row "
            f"(more than max_chained_handoffs = {config.max_chained_handoffs})"
        )
    if facts.over_budget:
        return f"the handoff of runs {span(missed, ', ')} would exceed {target}'s budget"
    return None
