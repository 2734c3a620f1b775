"""Which records of a Claude Code transcript make up the conversation, and in what order.

A transcript is a tree of records linked by ``parentUuid``. Claude Code resumes the branch that
ends at the active leaf: the last ``last-prompt`` record's ``leafUuid``, extended by whatever was
appended below it (a turn the CLI did not finish), else the last user/assistant record in file
order. This module indexes a file in one pass and resolves that branch; decoding the records
into items is the reader's job.
"""

from __future__ import annotations

from collections.abc import Iterable

import msgspec

from segue.formats.claude.records import CHAIN_TYPES, Record, chain_parent
from segue.formats.jsonl import as_dict

# Claude's own structured copy of a tool's output (up to 30k chars again) is only inspected for
# its shape: an index keeps this stand-in instead of the copy.
STRUCTURED_RESULT: Record = {}

Entry = tuple[int, Record]  # (1-based line number, record)


class TranscriptIndex(msgspec.Struct):
    """One pass over a transcript's records."""

    by_uuid: dict[str, Entry] = msgspec.field(default_factory=dict)
    order: list[str] = msgspec.field(default_factory=list)  # conversation records, in file order
    metadata: list[Entry] = msgspec.field(default_factory=list)  # every other record, in file order
    leaf_hint: str | None = None  # the last ``last-prompt`` record's leaf
    titles: dict[str, str] = msgspec.field(default_factory=dict)  # custom / ai / summary
    groups: dict[str, list[str]] = msgspec.field(default_factory=dict)  # message id -> its records
    answers: dict[str, list[str]] = msgspec.field(default_factory=dict)  # tool_use -> its results
    first_timestamp: str | None = None
    last_timestamp: str | None = None
    session_id: str | None = None  # the first ``sessionId`` a record gives


def index_records(records: Iterable[Entry], *, sidechain: bool = False) -> TranscriptIndex:
    """Index a transcript. In a main transcript, records marked ``isSidechain`` (a subagent's,
    from older versions that wrote them inline) are metadata, not conversation."""
    index = TranscriptIndex()
    by_uuid, order, metadata = index.by_uuid, index.order, index.metadata
    groups, answers, titles = index.groups, index.answers, index.titles
    first_ts = last_ts = None
    for entry in records:
        rec = entry[1]
        kind = rec.get("type")
        ts = rec.get("timestamp")
        if type(ts) is str:
            if first_ts is None or ts < first_ts:
                first_ts = ts
            if last_ts is None or ts > last_ts:
                last_ts = ts
        if index.session_id is None and type(rec.get("sessionId")) is str:
            index.session_id = rec["sessionId"]
        uuid = rec.get("uuid")
        if type(kind) is str and kind in CHAIN_TYPES and type(uuid) is str:
            if rec.get("isSidechain") and not sidechain:
                metadata.append(entry)
                continue
            by_uuid[uuid] = entry
            order.append(uuid)
            if kind == "assistant":
                mid = as_dict(rec.get("message")).get("id")
                if type(mid) is str:
                    groups.setdefault(mid, []).append(uuid)
            elif kind == "user" and holds_tool_result(rec):
                parent = rec.get("parentUuid")
                if type(parent) is str:
                    answers.setdefault(parent, []).append(uuid)
                if type(rec.get("toolUseResult")) is dict:
                    rec["toolUseResult"] = STRUCTURED_RESULT
            continue
        if kind == "last-prompt" and type(rec.get("leafUuid")) is str:
            index.leaf_hint = rec["leafUuid"]
        elif kind == "custom-title" and type(rec.get("customTitle")) is str:
            titles["custom"] = rec["customTitle"]
        elif kind == "ai-title" and type(rec.get("aiTitle")) is str:
            titles["ai"] = rec["aiTitle"]
        elif kind == "summary" and type(rec.get("summary")) is str:
            titles["summary"] = rec["summary"]
        metadata.append(entry)
    index.first_timestamp, index.last_timestamp = first_ts, last_ts
    return index


def holds_tool_result(rec: Record) -> bool:
    message = rec.get("message")
    content = message.get("content") if type(message) is dict else None
    if type(content) is list:  # (a loop: a generator costs more than the few blocks it reads)
        for block in content:
            if type(block) is dict and block.get("type") == "tool_result":
                return True
    return False


def file_order(index: TranscriptIndex) -> list[Entry]:
    """Every conversation record in file order (for lines that are not a connected piece)."""
    return [index.by_uuid[uuid] for uuid in index.order]


def active_leaf(index: TranscriptIndex) -> str | None:
    """The record Claude Code would continue from: the last ``last-prompt`` leaf extended by
    what was appended below it, else the latest message."""
    if not index.order:
        return None
    leaf = latest_message(index, descends_from=index.leaf_hint)
    return leaf if leaf is not None else latest_message(index) or index.order[-1]


def active_chain(index: TranscriptIndex) -> list[Entry]:
    """The records Claude Code would resume, root first, with parallel tool calls gathered."""
    by_uuid = index.by_uuid
    leaf = active_leaf(index)
    if leaf is None:
        return []
    chain: list[Entry] = []
    seen: set[str] = set()
    current: object = leaf
    while type(current) is str and current in by_uuid and current not in seen:
        seen.add(current)
        entry = by_uuid[current]
        chain.append(entry)
        current = chain_parent(entry[1])
    chain.reverse()
    return _with_parallel_tool_calls(chain, index)


def segment(index: TranscriptIndex, head: str, tail: str, limit: int = 100_000) -> list[Entry]:
    """The records from ``head`` down to ``tail`` along ``parentUuid`` links, root first; empty
    when ``head`` is not an ancestor of ``tail`` (then nothing is guessed)."""
    records: list[Entry] = []
    current: object = tail
    while type(current) is str and current in index.by_uuid and len(records) < limit:
        entry = index.by_uuid[current]
        records.append(entry)
        if current == head:
            records.reverse()
            return records
        current = entry[1].get("parentUuid")
    return []


def _with_parallel_tool_calls(chain: list[Entry], index: TranscriptIndex) -> list[Entry]:
    """Put back the branches that parallel tool calls make.

    Claude Code writes one assistant record per content block of a message, chained in a line,
    and hangs each ``tool_result`` record off *its own* ``tool_use`` record, in the order the
    tools finished. The next turn continues from the last result written, so the leaf's chain
    passes through only one of the calls. Like Claude Code on resume, take every record of the
    message, then every result that answers one of them (in file order, as Claude sends them).
    """
    groups, by_uuid, results = index.groups, index.by_uuid, index.answers
    if all(len(g) < 2 for g in groups.values()):
        return chain
    out: list[Entry] = []
    placed: set[str] = set()
    for entry in chain:
        rec = entry[1]
        uuid = rec["uuid"]
        if uuid in placed:
            continue
        mid = as_dict(rec.get("message")).get("id") if rec.get("type") == "assistant" else None
        group = groups.get(mid, []) if type(mid) is str else []
        if len(group) < 2:
            out.append(entry)
            placed.add(uuid)
            continue
        for member in group:
            if member not in placed:
                out.append(by_uuid[member])
                placed.add(member)
        answers = [a for member in group for a in results.get(member, ()) if a not in placed]
        for answer in sorted(answers, key=lambda a: by_uuid[a][0]):  # in the order written
            out.append(by_uuid[answer])
            placed.add(answer)
    return out


def _is_message(rec: Record) -> bool:
    return rec.get("type") in ("user", "assistant")


def latest_message(index: TranscriptIndex, descends_from: str | None = None) -> str | None:
    """The last user/assistant record in file order; with ``descends_from``, the last one whose
    chain passes through that record (Claude Code resumes the ``last-prompt`` leaf, extended by
    whatever was appended below it, e.g. a turn the CLI did not finish)."""
    by_uuid, order = index.by_uuid, index.order
    if descends_from is None:
        for uuid in reversed(order):
            if _is_message(by_uuid[uuid][1]):
                return uuid
        return None
    if descends_from not in by_uuid:
        return None
    latest = latest_message(index)
    if latest is not None and has_ancestor(index, latest, descends_from):
        return latest  # the usual case: the newest message is below the leaf
    below = _descendants(index, descends_from)
    for uuid in reversed(order):
        if uuid in below and _is_message(by_uuid[uuid][1]):
            return uuid
    return descends_from


def has_ancestor(index: TranscriptIndex, uuid: str, ancestor: str) -> bool:
    """Whether ``ancestor`` is on the chain from ``uuid`` up (``uuid`` itself included)."""
    seen: set[str] = set()
    current: object = uuid
    while type(current) is str and current in index.by_uuid and current not in seen:
        if current == ancestor:
            return True
        seen.add(current)
        current = chain_parent(index.by_uuid[current][1])
    return False


def _descendants(index: TranscriptIndex, root: str) -> set[str]:
    children: dict[str, list[str]] = {}
    for uuid, (_, rec) in index.by_uuid.items():
        parent = chain_parent(rec)
        if type(parent) is str:
            children.setdefault(parent, []).append(uuid)
    found = {root}
    stack = [root]
    while stack:
        for child in children.get(stack.pop(), ()):
            if child not in found:
                found.add(child)
                stack.append(child)
    return found
