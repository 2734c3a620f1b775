"""A native fork of a Copilot session with a delta appended: what segue writes to return to a
Copilot session that missed some runs, without ever writing into its folder.

Measured against Copilot CLI 1.0.102 (``copilot --resume=<fork> -p …`` sends the parent's history
as its own resume does, then the delta): the fork is a new folder ``session-state/<new id>/``
whose event log is the parent's, byte for byte but for the session id it names (streamed from the
parent as it is published), then the delta chained below the parent's last event: the runs as
events written by :func:`segue.formats.copilot.writer.write_items` (the same mapping as a switch),
opened by the handoff text when given. A compaction in the delta is left out: the CLI would take
it as a summary of the whole parent history.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path

import orjson

from segue.formats.atomic import FileCopy, NativeSession
from segue.formats.copilot.paths import events_file, session_id_of
from segue.formats.copilot.writer import EventLog, select, write_items
from segue.formats.jsonl import LineReport, iter_records_in
from segue.formats.parent import read_parent
from segue.model.conversation import Compaction, Item, Provider
from segue.model.errors import SwitchError
from segue.model.times import parse_iso
from segue.transforms.carry import handoff_items

__all__ = ["prepare_fork"]


def prepare_fork(
    parent: Path,
    delta: Sequence[Item],
    handoff_text: str | None = None,
    *,
    cwd: str,
    env: Mapping[str, str] | None = None,
    now: datetime | None = None,
) -> NativeSession:
    """A new Copilot session holding ``parent`` (its event log) under a new id, then the delta,
    beside it (``cwd`` and ``env`` are not needed). Not yet written; ``parent`` is only read."""
    facts = read_parent(parent)
    last_id: str | None = None
    last_time = None
    for _, event in iter_records_in(facts.tail, str(parent), LineReport()):
        if isinstance(event.get("id"), str):
            last_id = event["id"]
            last_time = parse_iso(event.get("timestamp")) or last_time
    if last_id is None:
        raise SwitchError(f"{parent}: no event to continue from")
    carried: list[Item] = handoff_items(handoff_text) if handoff_text else []
    carried += [item for item in delta if not isinstance(item, Compaction)]
    chosen = select(carried)
    if not chosen:
        raise SwitchError(f"{parent}: nothing to carry into a fork (no delta and no handoff)")
    moment = now or datetime.now(UTC)
    log = EventLog(last_id, max(moment, last_time) if last_time else moment)
    write_items(log, chosen)
    old_id, new_id = session_id_of(parent), str(uuid.uuid4())
    copy = FileCopy(parent, 0, facts.end, old_id.encode(), new_id.encode(), facts.head)
    lines = [orjson.dumps(event) + b"\n" for event in log.events]
    path = events_file(parent.parent.parent, new_id)
    session = NativeSession(Provider("copilot"), new_id, path, lines, copied=copy)
    session.notes.append(f"fork of {old_id}")
    return session
