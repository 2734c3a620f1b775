"""A forked thread's first provider thread, resolved when its first run starts (a fork chooses no
provider when it is made).

The fork holds runs 1..N of its parent (its source point). For the provider the first run asks
for:

- **native fork**: a session of that provider in the parent holds runs 1..N: a copy of it cut at
  run N (its own records, read back and written as a new session);
- **portable**: otherwise, runs 1..N read from the sessions that ran them, as the first run's
  provider's records;
- **checkpoint summary**: no session behind the source point can be read: a summary of the
  parent's prompts 1..N and the workspace's checkpoint.

The session is written in the fork's folder and adopted as the fork's first provider thread
(runs 1..N), and the fork's transfer records how it was resolved.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path

from msgspec.structs import replace

from segue.formats.files import is_regular
from segue.model.conversation import Conversation, Provenance, Provider, SessionMeta, UserMessage
from segue.model.errors import SwitchError
from segue.providers import entry
from segue.providers.sessions import SessionReads
from segue.store import Store
from segue.switch.decide import run_items
from segue.switch.plan import plan_switch
from segue.switch.prepare import off_the_line
from segue.threads.checkpoints import diff_line, list_checkpoints
from segue.threads.model import ProviderThread, ProviderThreadStatus, ThreadGraph
from segue.threads.native import without_turns
from segue.threads.queries import add_transfer, record_changes
from segue.threads.repository import ThreadStore
from segue.threads.syncing import adoption

__all__ = ["resolve_fork"]


def _native_source(
    parent: ThreadGraph, provider: Provider, line: set[int]
) -> ProviderThread | None:
    """A session of ``provider`` in the parent that holds every run of ``line``."""
    for pt in reversed(parent.provider_threads):
        if pt.provider is not provider or pt.status is ProviderThreadStatus.MISSING:
            continue
        if line <= pt.coverage() and is_regular(Path(pt.path)):
            return pt
    return None


def resolve_fork(
    store: Store, fork: ThreadGraph, provider: Provider, env: Mapping[str, str]
) -> list[str]:
    """Give the fork ``fork`` (no runs yet) its first provider thread on ``provider``; returns
    what the user should know."""
    thread = fork.thread
    parent_id, at = thread.parent_thread_id, thread.parent_run_ordinal
    if parent_id is None or at is None:
        raise SwitchError(f"thread {thread.id} has no run to continue from")
    parent = ThreadStore(store).graph(parent_id)
    wanted = [r for r in parent.live_runs if r.ordinal <= at]
    line = {r.ordinal for r in wanted}
    cwd = thread.cwd or ""
    reads = SessionReads()
    notes: list[str] = []
    meta: SessionMeta | None = None
    resolution = "portable"
    e = entry(provider)
    native = _native_source(parent, provider, line)
    if native is not None:
        conversation = reads.read(e.current_file(Path(native.path), env), provider)
        items = without_turns(conversation.items, off_the_line(native, line))
        meta, resolution = conversation.meta, "native_fork"
    else:
        lost: list[str] = []
        items = run_items(parent, wanted, reads, env, lost)
        if lost:
            notes.append(f"runs {', '.join(lost)} of the parent could not be read: left out")
        if items:
            first = parent.provider_thread(wanted[-1].provider_thread_id)
            meta = SessionMeta(first.provider, first.native_id, first.path, cwd=cwd)
    if not items:
        found = list_checkpoints(store, parent_id)
        mark = next((c for c in reversed(found) if c.id == thread.parent_checkpoint_id), None)
        prompts = "\n".join(
            f"- run {r.ordinal}: {' '.join(r.prompt.split())[:300]}" for r in wanted
        )
        text = (
            f"This conversation is a fork of thread {parent_id} at run {at}; the sessions that "
            f"ran it cannot be read, so here is what is known.\n\nThe user's prompts:\n{prompts}\n"
            + (f"\nThe workspace is {diff_line(mark)}.\n" if mark is not None else "")
        )
        items = [UserMessage(text, Provenance("segue", 0))]
        meta = SessionMeta(provider, thread.id, "", cwd=cwd)
        resolution = "checkpoint_summary"
    assert meta is not None
    conversation = Conversation(meta=replace(meta, cwd=cwd), items=list(items))
    plan = plan_switch(conversation, provider, env=env, cwd=cwd)
    if not plan.items:
        raise SwitchError(f"nothing of thread {parent_id} up to run {at} can be carried")
    session = e.prepare(plan.items, cwd=cwd, env=env, now=datetime.now(UTC))
    notes += e.publish(session, env)
    _, changes = adoption(provider, session.path, reads, env, thread_id=thread.id)
    changes.thread = None  # the fork's thread is recorded: its first session and runs are new
    changes.base_ordinal = 0
    changes.provider_threads = [replace(pt, origin="fork") for pt in changes.provider_threads]
    with store.writing(f"cannot record the fork's session of thread {thread.id}") as connection:
        record_changes(connection, thread.id, changes)
        add_transfer(
            connection,
            thread.id,
            type="fork",
            source_provider_thread_id=None,
            target_provider_thread_id=changes.provider_threads[0].id,
            source_run_ordinal=at,
            resolution=resolution,
            status="done",
        )
    notes.append(
        f"the fork's first run resolved it on {provider.value}: {resolution.replace('_', ' ')} "
        f"of thread {parent_id}'s runs 1-{at} ({plan.label.value})"
    )
    return notes
