"""Step 4 of a switch, **decide**: how the thread moves to the target, decided once.

The strategy order (:func:`segue.threads.strategy.decide`) decides on the graph as the files say
it is now, with the facts gathered here: the target's model as the user's CLI runs it now, and,
asked by the decision only for the provider thread it would go into (:class:`_Probe`), whether
that session holds secrets ``--redact-secrets`` asks not to carry, and whether the runs it
missed fit as native items. The decision, its facts and what was read and planned to reach it
(:class:`Decided`) are passed along: preparing the move (:mod:`.prepare`) reads and plans none
of it again, and recording it (:mod:`.record`) records that decision.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from pathlib import Path

import msgspec
from msgspec.structs import replace

from segue.model.conversation import Conversation, Item, Provider
from segue.model.errors import SegueError, SwitchError
from segue.providers import entry
from segue.providers.sessions import SessionReads
from segue.running.agents import Agent
from segue.switch.plan import plan_switch
from segue.switch.source import Source
from segue.switch.sync import LoadedThread, source_cwd
from segue.threads.config import load_config
from segue.threads.model import (
    HandoffForm,
    ProviderThread,
    ProviderThreadStatus,
    Run,
    ThreadGraph,
)
from segue.threads.native import turn_items
from segue.threads.observe import provider_entry
from segue.threads.strategy import Decision, Facts, Strategy, decide
from segue.transforms.budget import TargetProfile
from segue.transforms.plan import Label, Plan
from segue.transforms.redact import scan_items
from segue.transforms.shrink import Unfittable

__all__ = [
    "FORKS",
    "Decided",
    "Delta",
    "SwitchOptions",
    "decide_move",
    "names_workspace",
    "read_delta",
    "run_items",
]


class SwitchOptions(msgspec.Struct, frozen=True):
    to: Provider | None = None
    dry_run: bool = False
    clean: bool = False
    need_cwd: bool = False  # refuse when the session's directory is gone (``--exec``)
    redact_secrets: bool = False
    summary_by: str | None = None  # who writes a summary handoff (None: segue)
    profile: TargetProfile | None = None  # the target as configured (None: the user's)
    now: datetime | None = None
    agents: Sequence[Agent] | None = None  # the running agents, when the caller scanned them


class Delta(msgspec.Struct):
    """The runs a provider thread missed, read (and planned for the target) to decide whether
    they fit as native items."""

    covers: tuple[int, int]
    runs: tuple[Run, ...]  # those of them that could be read
    items: list[Item]
    lost: list[str]  # the ordinals of those that could not
    plan: Plan | None  # their plan for the target, when they fit as native items


class Decided(msgspec.Struct, frozen=True):
    """The move decided: what the strategy said, on which facts, and what it read to say it."""

    to: Provider
    decision: Decision
    facts: Facts
    delta: Delta | None = None  # the missed runs, when the decision asked whether they fit


def _model_changed(graph: ThreadGraph, to: Provider, env: Mapping[str, str], cwd: str) -> bool:
    """Whether the model the user's CLI for ``to`` would run now differs from the one its
    provider thread ran (a Codex thread's encrypted reasoning is its model's; another model is a
    context to start afresh). Unknown on either side: not changed."""
    mine = [
        pt
        for pt in graph.provider_threads
        if pt.provider is to and pt.status is ProviderThreadStatus.ACTIVE
    ]
    target = entry(to)
    recorded = {target.model_key(pt.model) for pt in mine if pt.model}
    if not recorded:
        return False
    try:
        now = target.target_profile(env, cwd).model
    except SegueError:
        return False
    return now is not None and target.model_key(now) not in recorded


def run_items(
    graph: ThreadGraph,
    runs: Sequence[Run],
    reads: SessionReads,
    env: Mapping[str, str],
    lost: list[str] | None = None,
) -> list[Item]:
    """The items of ``runs``, in order, read from the sessions that ran them (each file once).
    A run whose session can no longer be read is left out and named in ``lost``."""
    turns: dict[str, list[list[Item]] | None] = {}
    items: list[Item] = []
    for run in runs:
        if run.provider_thread_id not in turns:
            conversation = read_session(graph.provider_thread(run.provider_thread_id), reads, env)
            turns[run.provider_thread_id] = (
                None if conversation is None else turn_items(conversation)
            )
        mine = turns[run.provider_thread_id]
        if mine is None or not 1 <= run.native_turn <= len(mine):
            if lost is None:
                raise SwitchError(f"run {run.ordinal} is no longer in its session")
            lost.append(str(run.ordinal))
            continue
        items += mine[run.native_turn - 1]
    return items


def read_session(
    pt: ProviderThread, reads: SessionReads, env: Mapping[str, str]
) -> Conversation | None:
    """The session a provider thread continues in now; None when it cannot be read."""
    e = provider_entry(pt.provider)
    try:
        return None if e is None else reads.read(e.current_file(Path(pt.path), env), e.provider)
    except SegueError:
        return None


def read_delta(
    graph: ThreadGraph, covers: tuple[int, int], reads: SessionReads, env: Mapping[str, str]
) -> Delta:
    """The runs of the line in ``covers``, read from the sessions that ran them (not planned)."""
    missed = [r for r in graph.live_runs if covers[0] <= r.ordinal <= covers[1]]
    lost: list[str] = []
    items = run_items(graph, missed, reads, env, lost)
    read = tuple(r for r in missed if str(r.ordinal) not in lost)
    return Delta(covers, read, items, lost, None)


class _Probe(msgspec.Struct):
    """What the decision asks for once it knows the provider thread it would go into: read
    from that session and the ones that ran what it missed, and kept for the move."""

    state: LoadedThread
    source: Source
    to: Provider
    options: SwitchOptions
    reads: SessionReads
    env: Mapping[str, str]
    cwd: str
    conflicting: str | None = None
    delta: Delta | None = None

    def conflict(self, pt: ProviderThread) -> str | None:
        """Resuming or forking a session that holds secrets would carry them on: with
        ``--redact-secrets``, a new, redacted session instead."""
        if not self.options.redact_secrets:
            return None
        held = _secrets_held(pt, self.reads, self.env)
        if held:
            self.conflicting = f"it holds {held}, and --redact-secrets asks for none to be carried"
        return self.conflicting

    def delta_fits(self, pt: ProviderThread, covers: tuple[int, int]) -> bool:
        """Whether the runs it missed fit the target's budget as native items, unshrunk."""
        delta = read_delta(self.state.graph, covers, self.reads, self.env)
        conversation = Conversation(meta=self.source.conversation.meta, items=delta.items)
        plan: Plan | None
        try:
            plan = plan_switch(
                conversation,
                self.to,
                env=self.env,
                cwd=self.cwd,
                profile=self.options.profile,
                redact_secrets=self.options.redact_secrets,
            )
            fits = plan.label is not Label.SHRUNK and plan.fits
        except Unfittable:  # not even the last run fits as native items
            plan, fits = None, False
        self.delta = replace(delta, plan=plan if fits else None)
        return fits


def decide_move(
    state: LoadedThread,
    source: Source,
    to: Provider,
    options: SwitchOptions,
    reads: SessionReads,
    env: Mapping[str, str],
) -> Decided:
    """The strategy for moving the thread to ``to``, on the graph as the disk says: decided
    once, with the facts it asked for on the way."""
    graph = state.graph
    cwd = source_cwd(state, source)
    facts = Facts(clean=options.clean, model_changed=_model_changed(graph, to, env, cwd))
    probe = _Probe(state, source, to, options, reads, env, cwd)
    decision = decide(graph, to.value, facts, load_config(env), probe)
    if probe.conflicting is not None:
        facts = replace(facts, conflict=probe.conflicting)
    if probe.delta is not None and probe.delta.plan is None:  # they do not fit: a summary
        facts = replace(facts, delta_fits_natively=False)
    return Decided(to, decision, facts, probe.delta)


def _secrets_held(pt: ProviderThread, reads: SessionReads, env: Mapping[str, str]) -> str | None:
    """The secrets a provider thread's session holds, as "N secrets (kinds)", or None."""
    conversation = read_session(pt, reads, env)
    counts = {} if conversation is None else scan_items(conversation.items).counts
    if not counts:
        return None
    total = sum(counts.values())
    kinds = ", ".join(sorted(counts))
    return f"{total} secret{'s' if total != 1 else ''} ({kinds})"


FORKS = (Strategy.DELTA_INTO_EXISTING, Strategy.FULL_INTO_EXISTING)


def names_workspace(decision: Decision) -> bool:
    """Whether preparing ``decision``'s move writes the workspace's latest diff into what it
    carries (a summary carried into a fork): it needs the checkpoint before it is prepared."""
    return decision.form is HandoffForm.SUMMARY and decision.strategy in FORKS
