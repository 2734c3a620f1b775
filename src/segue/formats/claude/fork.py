"""A native fork of a Claude Code session with a delta appended: what segue writes to return to
a Claude session that missed some runs (the ``delta_into_existing`` strategy), without ever
writing into its file.

The recipe was measured against Claude Code 2.1.328 (``claude -p --resume <fork>`` sends the
parent's messages as its own resume does, thinking blocks and their signatures included, then
the delta), and it is what ``--fork-session`` itself does with the records it copies:

* the new file sits in the parent's project folder (``--resume <new id>`` from the session's
  directory finds it);
* every parent line is copied byte for byte except that its ``sessionId`` names the new session
  (uuids, parents and timestamps kept), streamed from the parent as it is published;
* the delta is chained below the parent's active leaf: the runs as native records, written by
  :func:`segue.formats.claude.writer.project` (the same mapping as a switch), opened by the
  handoff text as a user message marked ``<segue_handoff>`` (and the assistant's short
  acknowledgement, so roles alternate) when given;
* a final ``last-prompt`` names the new leaf.

A compaction in the delta is left out: a compact boundary would cut the whole parent history.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path

import orjson

from segue.formats.atomic import FileCopy, NativeSession
from segue.formats.claude.chain import active_leaf, has_ancestor, index_records, latest_message
from segue.formats.claude.writer import DEFAULT_VERSION, last_prompt_record, project
from segue.formats.jsonl import LineReport, dump_lines, iter_records, iter_records_in
from segue.formats.parent import ParentFile, read_parent
from segue.model.conversation import (
    Compaction,
    Item,
    Provider,
)
from segue.model.errors import SwitchError
from segue.transforms.carry import handoff_items

__all__ = ["prepare_fork"]


def _tail_leaf(parent: ParentFile) -> str | None:
    """The active leaf, from the parent's last lines alone when they tell it (the newest
    message, below the last ``last-prompt`` leaf, all within them); None when they do not."""
    index = index_records(iter_records_in(parent.tail, str(parent.path), LineReport()))
    if parent.whole:
        return active_leaf(index)
    hint = index.leaf_hint
    latest = latest_message(index)
    if hint is None or latest is None:
        return None
    return latest if has_ancestor(index, latest, hint) else None


def prepare_fork(
    parent: Path,
    delta: Sequence[Item],
    handoff_text: str | None = None,
    *,
    cwd: str,
    env: Mapping[str, str] | None = None,
    now: datetime | None = None,
    version: str = DEFAULT_VERSION,
) -> NativeSession:
    """A new Claude session holding ``parent`` verbatim (under a new session id), then the
    delta, in the parent's folder (``env`` is not needed). Not yet written; ``parent`` is only
    read: its last lines now (to find where the conversation goes on), the rest as it is
    copied."""
    facts = read_parent(parent)
    leaf = _tail_leaf(facts)
    if leaf is None:  # the last lines do not tell: the whole file is indexed
        leaf = active_leaf(index_records(iter_records(parent, LineReport())))
    if leaf is None:
        raise SwitchError(f"{parent}: no conversation to fork")
    old_id, new_id = parent.stem, str(uuid.uuid4())
    old_tag = b'"sessionId":' + orjson.dumps(old_id)
    new_tag = b'"sessionId":' + orjson.dumps(new_id)
    carried: list[Item] = handoff_items(handoff_text) if handoff_text else []
    carried += [item for item in delta if not isinstance(item, Compaction)]
    records = project(
        carried,
        session_id=new_id,
        cwd=os.path.realpath(cwd),
        now=now or datetime.now(UTC),
        version=version,
    )
    if not records:
        raise SwitchError(f"{parent}: nothing to carry into a fork (no delta and no handoff)")
    records[0]["parentUuid"] = leaf
    tail = dump_lines([*records, last_prompt_record(records, new_id)])
    path = parent.parent / f"{new_id}.jsonl"
    copy = FileCopy(parent, 0, facts.end, old_tag, new_tag, facts.head)
    session = NativeSession(Provider.CLAUDE, new_id, path, tail, copied=copy)
    session.notes.append(f"fork of {old_id}")
    return session
