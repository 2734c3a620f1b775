"""Claude Code transcript (``projects/<enc>/<id>.jsonl``) → neutral :class:`Conversation`.

The conversation is the ``parentUuid`` chain that ends at the active leaf (the last
``last-prompt`` record's ``leafUuid``, else the last user/assistant record in file order), not
file order. A ``compact_boundary`` starts a new root; the reader follows its
``logicalParentUuid`` so the full history stays visible, and marks the compaction with the
``isCompactSummary`` carrier's text (never the boundary's "Conversation compacted" placeholder).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from segue.conversation import (
    AssistantMessage,
    Compaction,
    CompactionState,
    Conversation,
    ErrorKind,
    ErrorNotice,
    Image,
    Item,
    Opaque,
    Origin,
    Provenance,
    Provider,
    Reasoning,
    SessionMeta,
    ToolCall,
    ToolResult,
    TurnMarker,
    TurnStatus,
    UserMessage,
)
from segue.formats.claude.paths import subagent_files
from segue.formats.claude.tools import tool_kind
from segue.formats.jsonl import LineReport, as_dict, collector_paused, iter_records, iter_records_in
from segue.formats.limits import from_epoch, looks_like_limit_text, parse_iso, parse_reset_time

CHAIN_TYPES = frozenset({"user", "assistant", "system", "attachment", "progress"})
PLACEHOLDER_SUMMARY = "conversation compacted"
INTERRUPTED_PREFIX = "[Request interrupted"
_STRUCTURED_RESULT: dict[str, Any] = {}  # stands in for a dropped structured toolUseResult
_LOCAL_COMMAND_TAGS = re.compile(r"</?local-command-(?:stdout|stderr)>")
_COMMAND_PREFIXES = (
    "<command-name>",
    "<command-message>",
    "<command-args>",
    "<local-command-stdout>",
    "<local-command-stderr>",
    "<bash-input>",
    "<bash-stdout>",
    "<bash-stderr>",
)
_INJECTED_PREFIXES = (
    "<system-reminder>",
    "<local-command-caveat>",
    INTERRUPTED_PREFIX,
    "<task-notification>",
    "Caveat: The messages below were generated",
)


def read_session(path: Path, *, with_subagents: bool = True) -> Conversation:
    """Read one Claude Code transcript (and, by default, its subagent transcripts)."""
    with collector_paused():
        conversation = _Reader(path).read()
    if with_subagents:
        for sub in subagent_files(path):
            conversation.sidechains.append(_Reader(sub, sidechain=True).read())
    return conversation


def read_lines(path: Path, lines: Iterable[bytes], *, follow_chain: bool = True) -> Conversation:
    """Read records from ``lines`` (e.g. just the head or tail of ``path``) as if they were the
    file. Used by the session listing, which reads only what it needs. With
    ``follow_chain=False`` every chain record is taken in file order (for lines that are not a
    connected piece of the file)."""
    return _Reader(path, lines=lines, follow_chain=follow_chain).read()


class _Reader:
    def __init__(
        self,
        path: Path,
        sidechain: bool = False,
        lines: Iterable[bytes] | None = None,
        follow_chain: bool = True,
    ) -> None:
        self.follow_chain = follow_chain
        self.path = path
        self.name = str(path)
        self.lines = lines
        self.sidechain = sidechain
        self.report = LineReport()
        self.call_names: dict[str, str] = {}
        self.by_uuid: dict[str, tuple[int, dict[str, Any]]] = {}
        self.boundary: dict[str, Any] | None = None  # the compact boundary awaiting its carrier
        self.groups: dict[str, list[str]] = {}  # assistant message id -> one record per block
        self.answers: dict[str, list[str]] = {}  # tool_use record -> the records with its result

    # -- pass 1: index the file -------------------------------------------------------------

    def read(self) -> Conversation:
        by_uuid = self.by_uuid
        chain_order: list[str] = []
        metadata: list[tuple[int, dict[str, Any]]] = []
        leaf_hint: str | None = None
        titles: dict[str, str] = {}
        records = (
            iter_records(self.path, self.report)
            if self.lines is None
            else iter_records_in(self.lines, self.name, self.report)
        )
        groups = self.groups
        answers = self.answers
        first_ts = last_ts = None
        for lineno, rec in records:
            kind = rec.get("type")
            uuid = rec.get("uuid")
            ts = rec.get("timestamp")
            if type(ts) is str:
                if first_ts is None or ts < first_ts:
                    first_ts = ts
                if last_ts is None or ts > last_ts:
                    last_ts = ts
            if kind in CHAIN_TYPES and isinstance(uuid, str):
                if rec.get("isSidechain") and not self.sidechain:
                    metadata.append((lineno, rec))
                    continue
                by_uuid[uuid] = (lineno, rec)
                chain_order.append(uuid)
                if kind == "assistant":
                    mid = as_dict(rec.get("message")).get("id")
                    if isinstance(mid, str):
                        groups.setdefault(mid, []).append(uuid)
                elif kind == "user" and _holds_tool_result(rec):
                    parent = rec.get("parentUuid")
                    if isinstance(parent, str):
                        answers.setdefault(parent, []).append(uuid)
                    if type(rec.get("toolUseResult")) is dict:
                        # Claude's own copy of the tool output (up to 30k chars again): only
                        # its shape is used, so let the copy go now rather than hold it
                        rec["toolUseResult"] = _STRUCTURED_RESULT
                continue
            if kind == "last-prompt" and isinstance(rec.get("leafUuid"), str):
                leaf_hint = rec["leafUuid"]
            elif kind == "custom-title" and isinstance(rec.get("customTitle"), str):
                titles["custom"] = rec["customTitle"]
            elif kind == "ai-title" and isinstance(rec.get("aiTitle"), str):
                titles["ai"] = rec["aiTitle"]
            elif kind == "summary" and isinstance(rec.get("summary"), str):
                titles["summary"] = rec["summary"]
            metadata.append((lineno, rec))

        chain = (
            self._active_chain(by_uuid, chain_order, leaf_hint)
            if self.follow_chain
            else [by_uuid[u] for u in chain_order]
        )
        off_chain = len(by_uuid) - len(chain)
        meta = self._meta(chain, metadata, titles)
        meta.created, meta.updated = first_ts, last_ts
        conversation = Conversation(meta=meta)
        if off_chain:
            conversation.notes.append(
                f"{self.name}: {off_chain} records on branches that are not the active "
                "conversation were left out"
            )
        conversation.items = self._items(chain, metadata)
        conversation.skipped = self.report.skipped
        conversation.notes.extend(self.report.notes)
        return conversation

    def _active_chain(
        self,
        by_uuid: dict[str, tuple[int, dict[str, Any]]],
        order: list[str],
        leaf_hint: str | None,
    ) -> list[tuple[int, dict[str, Any]]]:
        if not order:
            return []
        leaf = _latest_message(by_uuid, order, descends_from=leaf_hint)
        if leaf is None:
            leaf = _latest_message(by_uuid, order) or order[-1]
        chain: list[tuple[int, dict[str, Any]]] = []
        seen: set[str] = set()
        current: str | None = leaf
        while current is not None and current in by_uuid and current not in seen:
            seen.add(current)
            entry = by_uuid[current]
            chain.append(entry)
            rec = entry[1]
            parent = rec.get("parentUuid")
            if parent is None and rec.get("subtype") == "compact_boundary":
                parent = rec.get("logicalParentUuid")
            current = parent if isinstance(parent, str) else None
        chain.reverse()
        return _with_parallel_tool_calls(chain, by_uuid, self.groups, self.answers)

    # -- metadata ---------------------------------------------------------------------------

    def _meta(
        self,
        chain: list[tuple[int, dict[str, Any]]],
        metadata: list[tuple[int, dict[str, Any]]],
        titles: dict[str, str],
    ) -> SessionMeta:
        session_id = self.path.stem
        cwd = branch = version = model = None
        for _, rec in chain:
            cwd = rec.get("cwd") or cwd
            branch = rec.get("gitBranch") or branch
            version = rec.get("version") or version
            if rec.get("type") == "assistant" and not rec.get("isApiErrorMessage"):
                msg = rec.get("message")
                m = msg.get("model") if isinstance(msg, dict) else None
                if isinstance(m, str) and m != "<synthetic>":
                    model = m
        if cwd is None:
            for _, rec in metadata:
                cwd = rec.get("cwd") or cwd
        title = titles.get("custom") or titles.get("ai") or titles.get("summary")
        return SessionMeta(
            provider=Provider.CLAUDE,
            id=session_id,
            path=self.name,
            cwd=cwd,
            model=model,
            cli_version=version,
            git_branch=branch or None,
            title=title,
        )

    # -- pass 2: items ----------------------------------------------------------------------

    def _items(
        self,
        chain: list[tuple[int, dict[str, Any]]],
        metadata: list[tuple[int, dict[str, Any]]],
    ) -> list[Item]:
        items: list[Item] = []
        meta_iter = iter(metadata)
        pending = next(meta_iter, None)
        for lineno, rec in chain:
            while pending is not None and pending[0] < lineno:
                items.append(self._opaque(*pending))
                pending = next(meta_iter, None)
            self._chain_record(lineno, rec, items)
        while pending is not None:
            items.append(self._opaque(*pending))
            pending = next(meta_iter, None)
        return items

    def _opaque(self, lineno: int, rec: dict[str, Any]) -> Opaque:
        kind = str(rec.get("type"))
        if rec.get("subtype"):
            kind += f"/{rec['subtype']}"
        elif kind == "attachment" and isinstance(rec.get("attachment"), dict):
            kind += f"/{rec['attachment'].get('type')}"
        if rec.get("isSidechain") and not self.sidechain:
            kind = "sidechain/" + kind
        return Opaque(kind, Provenance(self.name, lineno), rec, rec.get("timestamp"))

    def _chain_record(self, lineno: int, rec: dict[str, Any], out: list[Item]) -> None:
        kind = rec.get("type")
        prov = Provenance(self.name, lineno)
        ts = rec.get("timestamp")
        if kind == "user":
            self._user(rec, prov, ts, out)
        elif kind == "assistant":
            self._assistant(rec, prov, ts, out)
        elif kind == "system" and rec.get("subtype") == "compact_boundary":
            self.boundary = rec
            meta = rec.get("compactMetadata")
            trigger = meta.get("trigger") if isinstance(meta, dict) else None
            # A boundary alone is incomplete until its carrier lands (it replaces this item).
            out.append(
                Compaction("", CompactionState.INCOMPLETE, prov, trigger=trigger, timestamp=ts)
            )
        elif kind == "system" and rec.get("subtype") == "api_error":
            out.append(self._system_api_error(rec, prov, ts))
        elif kind == "system" and rec.get("subtype") == "local_command":
            self._local_command(rec, prov, ts, out)
        elif kind == "attachment":
            rendered = _rendered_text(rec)
            if rendered:
                out.append(UserMessage(rendered, prov, Origin.INJECTED, timestamp=ts))
            else:
                out.append(self._opaque(lineno, rec))
        else:
            out.append(self._opaque(lineno, rec))

    def _user(self, rec: dict[str, Any], prov: Provenance, ts: Any, out: list[Item]) -> None:
        msg = rec.get("message")
        content = msg.get("content") if isinstance(msg, dict) else None
        if rec.get("isCompactSummary"):
            summary = _text_of(content)
            state = (
                CompactionState.REJECTED
                if looks_like_limit_text(summary)
                else CompactionState.PORTABLE
                if summary.strip()
                else CompactionState.INCOMPLETE
            )
            trigger = None
            for back in range(len(out) - 1, -1, -1):  # the boundary, past interleaved metadata
                prior = out[back]
                if isinstance(prior, Compaction) and prior.state is CompactionState.INCOMPLETE:
                    trigger = prior.trigger
                    del out[back]
                    break
                if not isinstance(prior, Opaque):
                    break
            replacement = self._preserved_segment(self.boundary)
            self.boundary = None
            out.append(Compaction(summary, state, prov, replacement, trigger, ts))
            return
        injected = bool(rec.get("isMeta")) or rec.get("origin") is not None
        if isinstance(content, str):
            out.append(UserMessage(content, prov, _origin(content, injected), timestamp=ts))
            if content.startswith(INTERRUPTED_PREFIX):
                out.append(TurnMarker(TurnStatus.ABORTED, prov, None, ts))
            return
        if not isinstance(content, list):
            out.append(self._opaque(prov.line, rec))
            return
        texts: list[str] = []
        images: list[Image] = []
        for block in content:
            if not isinstance(block, dict):
                continue
            btype = block.get("type")
            if btype == "tool_result":
                out.append(self._tool_result(block, rec, prov, ts))
            elif btype == "text" and isinstance(block.get("text"), str):
                texts.append(block["text"])
            elif btype == "image":
                images.append(_image(block))
            else:
                out.append(Opaque(f"user/{btype}", prov, block, ts))
        if texts or images:
            text = "\n\n".join(texts)
            out.append(UserMessage(text, prov, _origin(text, injected), tuple(images), ts))
            if text.startswith(INTERRUPTED_PREFIX):
                out.append(TurnMarker(TurnStatus.ABORTED, prov, None, ts))

    def _preserved_segment(self, boundary: dict[str, Any] | None) -> tuple[Item, ...]:
        """The messages Claude keeps verbatim after a compaction summary (the boundary's
        ``preservedSegment``, head to tail, which Claude re-links after the summary)."""
        if boundary is None:
            return ()
        segment = as_dict(as_dict(boundary.get("compactMetadata")).get("preservedSegment"))
        head, tail = segment.get("headUuid"), segment.get("tailUuid")
        if not isinstance(head, str) or not isinstance(tail, str):
            return ()
        records: list[tuple[int, dict[str, Any]]] = []
        current: Any = tail
        while isinstance(current, str) and current in self.by_uuid and len(records) < 100_000:
            records.append(self.by_uuid[current])
            if current == head:
                break
            current = self.by_uuid[current][1].get("parentUuid")
        else:
            return ()  # the head is not an ancestor of the tail: keep nothing rather than guess
        items: list[Item] = []
        for lineno, rec in reversed(records):
            self._chain_record(lineno, rec, items)
        return tuple(items)

    def _tool_result(
        self, block: dict[str, Any], rec: dict[str, Any], prov: Provenance, ts: Any
    ) -> ToolResult:
        call_id = str(block.get("tool_use_id", ""))
        raw = block.get("content")
        images: tuple[Image, ...] = ()
        if isinstance(raw, list):
            output = "\n".join(
                b["text"] for b in raw if isinstance(b, dict) and isinstance(b.get("text"), str)
            )
            images = tuple(
                _image(b) for b in raw if isinstance(b, dict) and b.get("type") == "image"
            )
        else:
            output = raw if isinstance(raw, str) else ""
        is_error = block.get("is_error")
        error = is_error if isinstance(is_error, bool) else None
        exit_code: int | None = None
        if self.call_names.get(call_id) == "Bash":
            if error and output.startswith("Exit code "):
                head = output[10:].split("\n", 1)[0].strip()
                exit_code = int(head) if head.lstrip("-").isdigit() else None
            elif not error and isinstance(rec.get("toolUseResult"), dict):
                exit_code = 0
        return ToolResult(call_id, output, prov, error, exit_code, images, ts)

    def _assistant(self, rec: dict[str, Any], prov: Provenance, ts: Any, out: list[Item]) -> None:
        msg = as_dict(rec.get("message"))
        content = msg.get("content")
        if rec.get("isApiErrorMessage"):
            out.append(self._api_error(rec, _text_of(content), prov, ts))
            return
        model = msg.get("model") if isinstance(msg.get("model"), str) else None
        if isinstance(content, str):
            out.append(AssistantMessage(content, prov, model, ts))
            return
        if not isinstance(content, list):
            out.append(self._opaque(prov.line, rec))
            return
        for block in content:
            if not isinstance(block, dict):
                continue
            btype = block.get("type")
            if btype == "text":
                out.append(AssistantMessage(str(block.get("text", "")), prov, model, ts))
            elif btype == "thinking":
                signature = block.get("signature")
                out.append(
                    Reasoning(
                        str(block.get("thinking", "")),
                        prov,
                        signature if isinstance(signature, str) and signature else None,
                        ts,
                    )
                )
            elif btype == "redacted_thinking":
                out.append(Reasoning("", prov, str(block.get("data", "")), ts))
            elif btype in ("tool_use", "server_tool_use"):
                name = str(block.get("name", ""))
                call_id = str(block.get("id", ""))
                self.call_names[call_id] = name
                out.append(ToolCall(call_id, name, block.get("input"), tool_kind(name), prov, ts))
            elif btype == "web_search_tool_result":
                out.append(
                    ToolResult(
                        str(block.get("tool_use_id", "")),
                        _text_of(block.get("content")),
                        prov,
                        None,
                        None,
                        (),
                        ts,
                    )
                )
            else:
                out.append(Opaque(f"assistant/{btype}", prov, block, ts))

    def _api_error(self, rec: dict[str, Any], text: str, prov: Provenance, ts: Any) -> ErrorNotice:
        error = rec.get("error")
        quota = as_dict(rec.get("quotaLimits"))
        if error == "rate_limit":
            usage = (
                rec.get("apiError") == "usage_limit_reached" or quota.get("status") == "rejected"
            )
            kind = ErrorKind.USAGE_LIMIT if usage else ErrorKind.RATE_LIMIT
        elif "prompt is too long" in text.lower():
            kind = ErrorKind.CONTEXT_WINDOW
        else:
            kind = ErrorKind.API_ERROR
        reset = from_epoch(quota.get("resetsAt"))
        if reset is None and kind in (ErrorKind.USAGE_LIMIT, ErrorKind.RATE_LIMIT):
            when = parse_iso(ts)
            reset = parse_reset_time(text, when) if when else None
        return ErrorNotice(kind, text, prov, reset, ts)

    def _local_command(
        self, rec: dict[str, Any], prov: Provenance, ts: Any, out: list[Item]
    ) -> None:
        """A slash command's output. A failed one (``/compact`` whose summary request hit a usage
        limit, say) is also an error notice: Claude writes no compaction then, only this."""
        content = rec.get("content")
        text = content if isinstance(content, str) else ""
        out.append(UserMessage(text, prov, Origin.COMMAND, timestamp=ts))
        if as_dict(rec.get("commandOutcome")).get("kind") != "failed":
            return
        message = _LOCAL_COMMAND_TAGS.sub("", text).strip()
        detail = message.split(": ", 1)[1] if message.startswith("Error during") else message
        if not looks_like_limit_text(detail):
            kind = ErrorKind.API_ERROR
        elif detail.startswith("You've"):
            kind = ErrorKind.USAGE_LIMIT
        elif "(429)" in detail:
            kind = ErrorKind.RATE_LIMIT
        else:
            kind = ErrorKind.API_ERROR
        reset = None
        when = parse_iso(ts)
        if kind is ErrorKind.USAGE_LIMIT and when is not None:
            reset = parse_reset_time(detail, when)
        out.append(ErrorNotice(kind, message, prov, reset, ts))

    def _system_api_error(self, rec: dict[str, Any], prov: Provenance, ts: Any) -> ErrorNotice:
        err = rec.get("error")
        status = err.get("status") if isinstance(err, dict) else None
        text = rec.get("content") if isinstance(rec.get("content"), str) else ""
        if not text and isinstance(err, dict):
            text = str(err.get("message") or err.get("error") or err)
        kind = ErrorKind.RATE_LIMIT if status == 429 else ErrorKind.API_ERROR
        return ErrorNotice(kind, text or "API error", prov, None, ts)


def _with_parallel_tool_calls(
    chain: list[tuple[int, dict[str, Any]]],
    by_uuid: dict[str, tuple[int, dict[str, Any]]],
    groups: dict[str, list[str]],
    results: dict[str, list[str]],
) -> list[tuple[int, dict[str, Any]]]:
    """Put back the branches that parallel tool calls make.

    Claude Code writes one assistant record per content block of a message, chained in a line,
    and hangs each ``tool_result`` record off *its own* ``tool_use`` record, in the order the
    tools finished. The next turn continues from the last result written, so the leaf's chain
    passes through only one of the calls. Like Claude Code on resume, take every record of the
    message, then every result that answers one of them (in file order, as Claude sends them).
    """
    if all(len(g) < 2 for g in groups.values()):
        return chain
    out: list[tuple[int, dict[str, Any]]] = []
    placed: set[str] = set()
    for entry in chain:
        rec = entry[1]
        uuid = rec["uuid"]
        if uuid in placed:
            continue
        mid = as_dict(rec.get("message")).get("id") if rec.get("type") == "assistant" else None
        group = groups.get(mid, []) if isinstance(mid, str) else []
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


def _holds_tool_result(rec: dict[str, Any]) -> bool:
    content = as_dict(rec.get("message")).get("content")
    return isinstance(content, list) and any(
        isinstance(b, dict) and b.get("type") == "tool_result" for b in content
    )


def _latest_message(
    by_uuid: dict[str, tuple[int, dict[str, Any]]],
    order: list[str],
    descends_from: str | None = None,
) -> str | None:
    """The last user/assistant record in file order; with ``descends_from``, the last one whose
    chain passes through that record (Claude Code resumes the ``last-prompt`` leaf, extended by
    whatever was appended below it, e.g. a turn the CLI did not finish)."""
    if descends_from is None:
        for uuid in reversed(order):
            if by_uuid[uuid][1].get("type") in ("user", "assistant"):
                return uuid
        return None
    if descends_from not in by_uuid:
        return None
    latest = _latest_message(by_uuid, order)
    if latest is not None and _has_ancestor(by_uuid, latest, descends_from):
        return latest  # the usual case: the newest message is below the leaf
    below = _descendants(by_uuid, descends_from)
    for uuid in reversed(order):
        if uuid in below and by_uuid[uuid][1].get("type") in ("user", "assistant"):
            return uuid
    return descends_from


def _has_ancestor(by_uuid: dict[str, tuple[int, dict[str, Any]]], uuid: str, ancestor: str) -> bool:
    seen: set[str] = set()
    current: Any = uuid
    while isinstance(current, str) and current in by_uuid and current not in seen:
        if current == ancestor:
            return True
        seen.add(current)
        rec = by_uuid[current][1]
        parent = rec.get("parentUuid")
        if parent is None and rec.get("subtype") == "compact_boundary":
            parent = rec.get("logicalParentUuid")
        current = parent
    return False


def _descendants(by_uuid: dict[str, tuple[int, dict[str, Any]]], root: str) -> set[str]:
    children: dict[str, list[str]] = {}
    for uuid, (_, rec) in by_uuid.items():
        parent = rec.get("parentUuid")
        if parent is None and rec.get("subtype") == "compact_boundary":
            parent = rec.get("logicalParentUuid")
        if isinstance(parent, str):
            children.setdefault(parent, []).append(uuid)
    found = {root}
    stack = [root]
    while stack:
        for child in children.get(stack.pop(), ()):
            if child not in found:
                found.add(child)
                stack.append(child)
    return found


def _origin(text: str, injected: bool) -> Origin:
    stripped = text.lstrip()
    if stripped.startswith(_COMMAND_PREFIXES):
        return Origin.COMMAND
    if injected or stripped.startswith(_INJECTED_PREFIXES):
        return Origin.INJECTED
    return Origin.TYPED


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            b["text"] for b in content if isinstance(b, dict) and isinstance(b.get("text"), str)
        )
    return ""


def _rendered_text(rec: dict[str, Any]) -> str:
    rendered = rec.get("rendered")
    if not isinstance(rendered, list):
        return ""
    parts = [
        r["content"] for r in rendered if isinstance(r, dict) and isinstance(r.get("content"), str)
    ]
    return "\n".join(parts)


def _image(block: dict[str, Any]) -> Image:
    source = as_dict(block.get("source"))
    if source.get("type") == "base64":
        media = source.get("media_type")
        return Image(url=f"data:{media};base64,{source.get('data', '')}", media_type=media)
    if source.get("type") == "url":
        return Image(url=source.get("url"))
    return Image()
