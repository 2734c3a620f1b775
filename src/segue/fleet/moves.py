"""Where the recorded batches moved sessions: which sessions are away (moved off and not
back), which were brought back or moved on, and so which batches can come back. What
``segue watch`` decides its moves and returns by, and what ``segue tui`` shows."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

import msgspec

from segue.model.conversation import Provider

if TYPE_CHECKING:
    from segue.store import Store
    from segue.store.records import BatchHeader

__all__ = [
    "BATCHES_LOOKED_AT",
    "DEFAULT_QUIET",
    "BatchMoves",
    "Returnable",
    "batch_moves",
    "returnable_batches",
    "sessions_away",
]

DEFAULT_QUIET = timedelta(minutes=15)  # no session moves twice within it
BATCHES_LOOKED_AT = 200


class BatchMoves(msgspec.Struct):
    """What the store's batches say about where sessions went."""

    # session → why it must not move now
    avoid: dict[str, str] = msgspec.field(default_factory=dict)
    # batch → the sessions it made
    targets: dict[str, set[str]] = msgspec.field(default_factory=dict)
    # batch → its sessions brought back
    back: dict[str, set[str]] = msgspec.field(default_factory=dict)
    # batch → its sessions moved on by a later one
    moved_on: dict[str, set[str]] = msgspec.field(default_factory=dict)
    returns: set[str] = msgspec.field(default_factory=set)  # the batches that brought others back
    away: dict[str, str] = msgspec.field(default_factory=dict)  # session moved off, not back: where
    # the batches read, oldest first
    headers: list[BatchHeader] = msgspec.field(default_factory=list)


def batch_moves(store: Store, now: datetime, quiet: timedelta) -> BatchMoves:
    """Where sessions went: those not to move now (moved, either side, within the quiet
    period; or moved off and not back yet: their work goes on in the session they were moved
    to), and per batch the sessions it made, those a return brought back (by ``segue watch`` or
    by hand: a return batch names the batch it brings back) and those a later batch moved on."""
    minutes = int(quiet.total_seconds() // 60)
    found = [store.get_batch(s.id) for s in store.list_batches(limit=BATCHES_LOOKED_AT)]
    found.sort(key=lambda b: (b.header.created_at, b.id))
    view = BatchMoves(headers=[b.header for b in found])
    returns: dict[str, str] = {}  # return batch → the batch it brings back
    for batch in found:
        reason = (batch.header.selection or {}).get("reason")
        match = re.fullmatch(r"back from batch (\S+)", str(reason or ""))
        if match:
            returns[batch.id] = match.group(1)
    for n, batch in enumerate(found):
        moved = {
            a.result.session: str(a.result.target_session)
            for a in batch.agents
            if a.result.target_session
        }
        view.targets[batch.id] = set(moved.values())
        if batch.id in returns:
            view.back.setdefault(returns[batch.id], set()).update(moved)
            view.returns.add(batch.id)
        later = {
            a.result.session
            for b in found[n + 1 :]
            if returns.get(b.id) != batch.id
            for a in b.agents
            if a.result.target_session
        }
        view.moved_on[batch.id] = set(moved.values()) & later
        if now - batch.header.created_at <= quiet:
            for session in [*moved, *moved.values()]:
                view.avoid.setdefault(session, f"moved less than {minutes} min ago")
    for batch in found:
        if batch.id in returns:
            continue
        for agent in batch.agents:
            result = agent.result
            made = str(result.target_session) if result.target_session else None
            if made is None or made in view.back.get(batch.id, set()):
                continue
            where = f"moved to {result.target_provider} in batch {batch.id} (not back yet)"
            view.avoid.setdefault(result.session, where)
            view.away.setdefault(result.session, where)
    return view


class Returnable(msgspec.Struct, frozen=True):
    """A recorded batch whose agents can come back: those it moved that are neither back nor
    moved on by a later batch."""

    batch_id: str
    created_at: datetime
    moved_off: Provider | None
    moved_to: Provider | None
    outstanding: tuple[str, ...]  # the sessions it made, still where it put them
    settled: tuple[str, ...]  # … and those back already, or moved on


def _read(env: Mapping[str, str] | None, now: datetime | None) -> BatchMoves:
    """Where the store's batches moved sessions, read without creating the store (none: no
    batch)."""
    from segue.store import open_store
    from segue.store.store import StoreAbsent

    env = dict(os.environ) if env is None else dict(env)
    try:
        store = open_store(env=env, read_only=True)
    except StoreAbsent:
        return BatchMoves()
    with store:
        return batch_moves(store, now or datetime.now(UTC), DEFAULT_QUIET)


def returnable_batches(
    env: Mapping[str, str] | None = None, *, now: datetime | None = None
) -> list[Returnable]:
    """The batches that can come back, newest first (what ``segue switch --return BATCH``
    takes back; ``segue watch`` brings them back by itself after the reset). Reads the store
    without creating it."""
    view = _read(env, now)
    found: list[Returnable] = []
    for h in reversed(view.headers):
        targets = view.targets.get(h.id, set())
        settled = (view.back.get(h.id, set()) | view.moved_on.get(h.id, set())) & targets
        if h.id in view.returns or not targets - settled:
            continue
        found.append(
            Returnable(
                h.id,
                h.created_at,
                h.from_provider,
                h.to_provider,
                tuple(sorted(targets - settled)),
                tuple(sorted(settled)),
            )
        )
    return found


def sessions_away(env: Mapping[str, str] | None = None) -> dict[str, str]:
    """The sessions a batch moved off and that are not back: session id → where they went.
    Reads the store without creating it (none: nothing is away)."""
    return _read(env, None).away
