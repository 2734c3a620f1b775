"""Claude Code transcript (``projects/<enc>/<id>.jsonl``) → neutral :class:`Conversation`.

The records come from :mod:`segue.formats.claude.chain` (the branch Claude Code would resume,
not file order); this module decodes each into items. A compaction is the ``isCompactSummary``
carrier's text, never the boundary's "Conversation compacted" placeholder, and the messages
Claude keeps verbatim after it (the boundary's ``preservedSegment``) are its ``replacement``.

Every field is checked before use: a file may hold any JSON value anywhere, and a value of the
wrong type makes that record opaque (or that field absent), never an exception.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from datetime import datetime
from pathlib import Path

from segue.formats.claude.chain import (
    Entry,
    TranscriptIndex,
    active_chain,
    file_order,
    index_records,
    segment,
)
from segue.formats.claude.paths import subagent_files
from segue.formats.claude.records import COMPACT_BOUNDARY, SYNTHETIC_MODEL, Record
from segue.formats.claude.tools import tool_kind
from segue.formats.jsonl import LineReport, as_dict, as_str, iter_records, str_or_none
from segue.formats.jsonl import iter_records_in as iter_line_records
from segue.model import conversation as neutral
from segue.model.errors import SegueError
from segue.model.limits import looks_like_limit_text, parse_reset_time
from segue.model.times import from_epoch, parse_iso
from segue.support import collector

INTERRUPTED_PREFIX = "[Request interrupted"
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
# Claude Code's names for its usage windows: (length in minutes, models it covers).
LIMIT_WINDOWS: dict[str, tuple[int, str]] = {
    "five_hour": (300, neutral.ALL_MODELS),
    "seven_day": (10080, neutral.ALL_MODELS),
    "seven_day_opus": (10080, "opus"),
    "seven_day_sonnet": (10080, "sonnet"),
}


def read_session(
    path: Path, *, with_subagents: bool = True, opaque_data: bool = True
) -> neutral.Conversation:
    """Read one Claude Code transcript (and, by default, its subagent transcripts). With
    ``opaque_data=False`` an :class:`~segue.model.conversation.Opaque` item carries no data
    (its kind, line and time only), and what only such items would hold is not kept while the
    file is read: the same items in a fraction of the memory (what a switch reads)."""
    with collector.paused():
        conversation = _read(path, None, sidechain=False, follow_chain=True, keep=opaque_data)
    if with_subagents:
        for sub in subagent_files(path):
            try:
                side = _read(sub, None, sidechain=True, follow_chain=True, keep=opaque_data)
            except SegueError as exc:  # a FIFO, a dangling link, a folder named like one
                conversation.notes.append(f"subagent transcript skipped: {exc}")
                continue
            conversation.sidechains.append(side)
    return conversation


def read_lines(
    path: Path, lines: Iterable[bytes], *, follow_chain: bool = True
) -> neutral.Conversation:
    """Read records from ``lines`` (e.g. just the head or tail of ``path``) as if they were the
    file. Used by the session listing, which reads only what it needs. With
    ``follow_chain=False`` every conversation record is taken in file order (for lines that are
    not a connected piece of the file)."""
    return _read(path, lines, sidechain=False, follow_chain=follow_chain)


def _read(
    path: Path,
    lines: Iterable[bytes] | None,
    *,
    sidechain: bool,
    follow_chain: bool,
    keep: bool = True,
) -> neutral.Conversation:
    """``keep``: the records of Opaque items are their data (else they are cut to what names
    the item as they are read)."""
    name = str(path)
    report = LineReport()
    records = (
        iter_records(path, report) if lines is None else iter_line_records(lines, name, report)
    )
    index = index_records(records if keep else map(_lean, records), sidechain=sidechain)
    chain = active_chain(index) if follow_chain else file_order(index)
    decoder = _Decoder(name, index, sidechain, keep)
    conversation = neutral.Conversation(meta=decoder.meta(path, chain))
    off_chain = len(index.by_uuid) - len(chain)
    if off_chain:
        conversation.notes.append(
            f"{name}: {off_chain} records on branches that are not the active "
            "conversation were left out"
        )
    conversation.items = decoder.items(chain)
    conversation.meta.limits = decoder.limits
    conversation.skipped = report.skipped
    conversation.notes.extend(report.notes)
    return conversation


# The conversation records the decoder turns into items other than Opaque (an attachment: when
# it has rendered text); every other record is an Opaque item.
_DECODED = frozenset({"user", "assistant", "system"})


# What the index and an Opaque item read of a record, whatever its type (a list where a string
# belongs still names the item and decides the chain as the whole read has it).
_NAMING = frozenset(
    {
        "type",
        "subtype",
        "uuid",
        "parentUuid",
        "logicalParentUuid",
        "isSidechain",
        "timestamp",
        "sessionId",
        "cwd",
        "gitBranch",
        "version",
        "leafUuid",
        "customTitle",
        "aiTitle",
        "summary",
    }
)


def _lean(entry: Entry) -> Entry:
    """A record as a read without opaque data keeps it: a record that can only become an Opaque
    item cut to its scalar fields and those that name the item, link the chain and give the
    session's metadata (:data:`_NAMING`, whatever their values), and its attachment's type;
    an assistant message without its usage figures, which no item holds. (A transcript's bulk
    past the tool outputs is in such records: prompt snapshots, request shapes, attachments.)"""
    rec = entry[1]
    kind = rec.get("type")
    if type(kind) is str and (kind in _DECODED or (kind == "attachment" and "rendered" in rec)):
        if kind == "assistant" and type(message := rec.get("message")) is dict:
            message.pop("usage", None)
        return entry
    slim = {
        k: v
        for k, v in rec.items()
        if (type(v) is not dict and type(v) is not list) or k in _NAMING
    }
    attachment = rec.get("attachment")
    if type(attachment) is dict:
        slim["attachment"] = {"type": attachment.get("type")}
    return entry[0], slim


class _Decoder:
    """Turns indexed records into items, in chain order with metadata records interleaved."""

    def __init__(
        self, name: str, index: TranscriptIndex, sidechain: bool, keep: bool = True
    ) -> None:
        self.name = name
        self.index = index
        self.sidechain = sidechain
        self.keep = keep  # Opaque items carry their records
        self.call_names: dict[str, str] = {}
        self.boundary: Record | None = None  # the compact boundary awaiting its carrier
        self.limits: list[neutral.LimitWindow] = []

    # -- metadata ---------------------------------------------------------------------------

    def meta(self, path: Path, chain: list[Entry]) -> neutral.SessionMeta:
        # each the newest record's that gives one (a non-empty string): read from the end, so
        # a long session stops after its last few records
        cwd = branch = version = model = None
        for _, rec in reversed(chain):
            cwd = cwd or str_or_none(rec.get("cwd")) or None
            branch = branch or str_or_none(rec.get("gitBranch")) or None
            version = version or str_or_none(rec.get("version")) or None
            if (
                model is None
                and rec.get("type") == "assistant"
                and not rec.get("isApiErrorMessage")
            ):
                m = as_dict(rec.get("message")).get("model")
                if type(m) is str and m != SYNTHETIC_MODEL:
                    model = m
            if cwd and branch and version and model:
                break
        if cwd is None:
            for _, rec in self.index.metadata:
                cwd = str_or_none(rec.get("cwd")) or cwd
        titles = self.index.titles
        extra: dict[str, neutral.JSON] = {}
        if self.index.session_id not in (None, path.stem):
            extra["recorded_id"] = self.index.session_id
        return neutral.SessionMeta(
            provider=neutral.Provider.CLAUDE,
            id=path.stem,
            path=self.name,
            cwd=cwd,
            model=model,
            cli_version=version,
            git_branch=branch or None,
            title=titles.get("custom") or titles.get("ai") or titles.get("summary"),
            created=self.index.first_timestamp,
            updated=self.index.last_timestamp,
            extra=extra,
        )

    # -- items ------------------------------------------------------------------------------

    def items(self, chain: list[Entry]) -> list[neutral.Item]:
        items: list[neutral.Item] = []
        metadata = self.index.metadata
        m = 0
        for lineno, rec in chain:
            while m < len(metadata) and metadata[m][0] < lineno:
                items.append(self._opaque(*metadata[m]))
                m += 1
            self._record(lineno, rec, items)
        items.extend(self._opaque(*entry) for entry in metadata[m:])
        return items

    def _opaque(self, lineno: int, rec: Record) -> neutral.Opaque:
        kind = str(rec.get("type"))
        subtype = rec.get("subtype")
        attachment = rec.get("attachment")
        if subtype:
            kind += f"/{subtype}"
        elif kind == "attachment" and type(attachment) is dict:
            kind += f"/{attachment.get('type')}"
        if rec.get("isSidechain") and not self.sidechain:
            kind = "sidechain/" + kind
        return neutral.Opaque(
            kind,
            neutral.Provenance(self.name, lineno),
            self._data(rec),
            str_or_none(rec.get("timestamp")),
        )

    def _data(self, block: Record) -> Record | None:
        return block if self.keep else None

    def _record(self, lineno: int, rec: Record, out: list[neutral.Item]) -> None:
        kind = rec.get("type")
        subtype = rec.get("subtype")
        prov = neutral.Provenance(self.name, lineno)
        ts = str_or_none(rec.get("timestamp"))
        if kind == "user":
            self._user(rec, prov, ts, out)
        elif kind == "assistant":
            self._assistant(rec, prov, ts, out)
        elif kind == "system" and subtype == COMPACT_BOUNDARY:
            self.boundary = rec
            trigger = str_or_none(as_dict(rec.get("compactMetadata")).get("trigger"))
            # A boundary alone is incomplete until its carrier lands (it replaces this item).
            out.append(
                neutral.Compaction(
                    "", neutral.CompactionState.INCOMPLETE, prov, trigger=trigger, timestamp=ts
                )
            )
        elif kind == "system" and subtype == "api_error":
            out.append(self._system_api_error(rec, prov, ts))
        elif kind == "system" and subtype == "local_command":
            self._local_command(rec, prov, ts, out)
        elif kind == "attachment" and (rendered := _rendered_text(rec)):
            out.append(neutral.UserMessage(rendered, prov, neutral.Origin.INJECTED, timestamp=ts))
        else:
            out.append(self._opaque(lineno, rec))

    def _user(
        self, rec: Record, prov: neutral.Provenance, ts: str | None, out: list[neutral.Item]
    ) -> None:
        content = as_dict(rec.get("message")).get("content")
        if rec.get("isCompactSummary"):
            out.append(self._compaction(_text_of(content), prov, ts, out))
            return
        injected = bool(rec.get("isMeta")) or _machine_origin(rec.get("origin"))
        if type(content) is str:
            self._prompt(content, (), injected, prov, ts, out)
            return
        if type(content) is not list:
            out.append(self._opaque(prov.line, rec))
            return
        texts: list[str] = []
        images: list[neutral.Image] = []
        for block in content:
            if type(block) is not dict:
                continue
            btype = block.get("type")
            if btype == "tool_result":
                out.append(self._tool_result(block, rec, prov, ts))
            elif btype == "text" and type(block.get("text")) is str:
                texts.append(block["text"])
            elif btype == "image":
                images.append(_image(block))
            else:
                out.append(neutral.Opaque(f"user/{btype}", prov, self._data(block), ts))
        if texts or images:
            self._prompt("\n\n".join(texts), tuple(images), injected, prov, ts, out)

    def _prompt(
        self,
        text: str,
        images: tuple[neutral.Image, ...],
        injected: bool,
        prov: neutral.Provenance,
        ts: str | None,
        out: list[neutral.Item],
    ) -> None:
        out.append(neutral.UserMessage(text, prov, _origin(text, injected), images, ts))
        if text.startswith(INTERRUPTED_PREFIX):
            out.append(neutral.TurnMarker(neutral.TurnStatus.ABORTED, prov, None, ts))

    def _compaction(
        self, summary: str, prov: neutral.Provenance, ts: str | None, out: list[neutral.Item]
    ) -> neutral.Compaction:
        if looks_like_limit_text(summary):
            state = neutral.CompactionState.REJECTED
        elif summary.strip():
            state = neutral.CompactionState.PORTABLE
        else:
            state = neutral.CompactionState.INCOMPLETE
        trigger = None
        for back in range(len(out) - 1, -1, -1):  # the boundary, past interleaved metadata
            prior = out[back]
            if (
                isinstance(prior, neutral.Compaction)
                and prior.state is neutral.CompactionState.INCOMPLETE
            ):
                trigger = prior.trigger
                del out[back]
                break
            if not isinstance(prior, neutral.Opaque):
                break
        replacement = self._preserved_segment(self.boundary)
        self.boundary = None
        return neutral.Compaction(summary, state, prov, replacement, trigger, ts)

    def _preserved_segment(self, boundary: Record | None) -> tuple[neutral.Item, ...]:
        """The messages Claude keeps verbatim after a compaction summary (the boundary's
        ``preservedSegment``, head to tail, which Claude re-links after the summary)."""
        if boundary is None:
            return ()
        kept = as_dict(as_dict(boundary.get("compactMetadata")).get("preservedSegment"))
        head, tail = kept.get("headUuid"), kept.get("tailUuid")
        if type(head) is not str or type(tail) is not str:
            return ()
        items: list[neutral.Item] = []
        for lineno, rec in segment(self.index, head, tail):
            self._record(lineno, rec, items)
        return tuple(items)

    def _tool_result(
        self, block: Record, rec: Record, prov: neutral.Provenance, ts: str | None
    ) -> neutral.ToolResult:
        call_id = as_str(block.get("tool_use_id"))
        raw = block.get("content")
        images: tuple[neutral.Image, ...] = ()
        if type(raw) is list:
            output = _text_of(raw)
            images = tuple(_image(b) for b in raw if type(b) is dict and b.get("type") == "image")
        else:
            output = as_str(raw)
        is_error = block.get("is_error")
        error = is_error if type(is_error) is bool else None
        exit_code: int | None = None
        if self.call_names.get(call_id) == "Bash":
            if error and output.startswith("Exit code "):
                head = output[10:].split("\n", 1)[0].strip()
                exit_code = int(head) if head.lstrip("-").isdigit() else None
            elif not error and type(rec.get("toolUseResult")) is dict:
                exit_code = 0
        return neutral.ToolResult(call_id, output, prov, error, exit_code, images, ts)

    def _assistant(
        self, rec: Record, prov: neutral.Provenance, ts: str | None, out: list[neutral.Item]
    ) -> None:
        msg = as_dict(rec.get("message"))
        content = msg.get("content")
        if rec.get("isApiErrorMessage"):
            out.append(self._api_error(rec, _text_of(content), prov, ts))
            return
        model = str_or_none(msg.get("model"))
        if type(content) is str:
            out.append(neutral.AssistantMessage(content, prov, model, ts))
            return
        if type(content) is not list:
            out.append(self._opaque(prov.line, rec))
            return
        for block in content:
            if type(block) is dict:
                out.append(self._assistant_block(block, prov, model, ts))

    def _assistant_block(
        self, block: Record, prov: neutral.Provenance, model: str | None, ts: str | None
    ) -> neutral.Item:
        btype = block.get("type")
        if btype == "text":
            return neutral.AssistantMessage(as_str(block.get("text")), prov, model, ts)
        if btype == "thinking":
            signature = block.get("signature")
            private = signature if type(signature) is str and signature else None
            return neutral.Reasoning(as_str(block.get("thinking")), prov, private, ts)
        if btype == "redacted_thinking":
            return neutral.Reasoning("", prov, as_str(block.get("data")) or "redacted", ts)
        if btype in ("tool_use", "server_tool_use"):
            name = as_str(block.get("name"))
            call_id = as_str(block.get("id"))
            self.call_names[call_id] = name
            return neutral.ToolCall(call_id, name, block.get("input"), tool_kind(name), prov, ts)
        if btype == "web_search_tool_result":
            call_id = as_str(block.get("tool_use_id"))
            return neutral.ToolResult(call_id, _text_of(block.get("content")), prov, timestamp=ts)
        return neutral.Opaque(f"assistant/{btype}", prov, self._data(block), ts)

    def _api_error(
        self, rec: Record, text: str, prov: neutral.Provenance, ts: str | None
    ) -> neutral.ErrorNotice:
        error = rec.get("error")
        quota = as_dict(rec.get("quotaLimits"))
        if error == "rate_limit":
            usage = (
                rec.get("apiError") == "usage_limit_reached" or quota.get("status") == "rejected"
            )
            kind = neutral.ErrorKind.USAGE_LIMIT if usage else neutral.ErrorKind.RATE_LIMIT
        elif "prompt is too long" in text.lower():
            kind = neutral.ErrorKind.CONTEXT_WINDOW
        else:
            kind = neutral.ErrorKind.API_ERROR
        reset = from_epoch(quota.get("resetsAt"))
        when = parse_iso(ts)
        if (
            reset is None
            and kind in (neutral.ErrorKind.USAGE_LIMIT, neutral.ErrorKind.RATE_LIMIT)
            and when
        ):
            reset = parse_reset_time(text, when)
        if quota:
            self._limit_window(quota, reset, when, prov)
        return neutral.ErrorNotice(kind, text, prov, reset, ts)

    def _limit_window(
        self, quota: Record, reset: datetime | None, when: datetime | None, prov: neutral.Provenance
    ) -> None:
        """The window a limit record names (``quotaLimits.rateLimitType``), newest per name."""
        name = str_or_none(quota.get("rateLimitType"))
        minutes, scope = LIMIT_WINDOWS.get(name or "", (None, neutral.ALL_MODELS))
        used = 100.0 if quota.get("status") == "rejected" else None
        window = neutral.LimitWindow(
            neutral.Provider.CLAUDE,
            minutes,
            used,
            reset,
            scope,
            name,
            when,
            f"{prov.file}:{prov.line}",
        )
        self.limits = [w for w in self.limits if w.name != name] + [window]

    def _local_command(
        self, rec: Record, prov: neutral.Provenance, ts: str | None, out: list[neutral.Item]
    ) -> None:
        """A slash command's output. A failed one (``/compact`` whose summary request hit a usage
        limit, say) is also an error notice: Claude writes no compaction then, only this."""
        text = as_str(rec.get("content"))
        out.append(neutral.UserMessage(text, prov, neutral.Origin.COMMAND, timestamp=ts))
        if as_dict(rec.get("commandOutcome")).get("kind") != "failed":
            return
        message = _LOCAL_COMMAND_TAGS.sub("", text).strip()
        detail = message.split(": ", 1)[1] if message.startswith("Error during") else message
        if not looks_like_limit_text(detail):
            kind = neutral.ErrorKind.API_ERROR
        elif detail.startswith("You've"):
            kind = neutral.ErrorKind.USAGE_LIMIT
        elif "(429)" in detail:
            kind = neutral.ErrorKind.RATE_LIMIT
        else:
            kind = neutral.ErrorKind.API_ERROR
        reset = None
        when = parse_iso(ts)
        if kind is neutral.ErrorKind.USAGE_LIMIT and when is not None:
            reset = parse_reset_time(detail, when)
        out.append(neutral.ErrorNotice(kind, message, prov, reset, ts))

    def _system_api_error(
        self, rec: Record, prov: neutral.Provenance, ts: str | None
    ) -> neutral.ErrorNotice:
        err = rec.get("error")
        status = err.get("status") if type(err) is dict else None
        text = as_str(rec.get("content"))
        if not text and type(err) is dict:
            text = str(err.get("message") or err.get("error") or err)
        kind = neutral.ErrorKind.RATE_LIMIT if status == 429 else neutral.ErrorKind.API_ERROR
        return neutral.ErrorNotice(kind, text or "API error", prov, None, ts)


def _machine_origin(origin: neutral.JSON) -> bool:
    """Whether a user record's ``origin`` says the CLI wrote it (a subagent's notification, an
    automatic continuation); the interactive CLI marks what the person typed ``{"kind":
    "human"}``."""
    if origin is None:
        return False
    return as_dict(origin).get("kind") != "human"


def _origin(text: str, injected: bool) -> neutral.Origin:
    stripped = text.lstrip()
    if stripped.startswith(_COMMAND_PREFIXES):
        return neutral.Origin.COMMAND
    if injected or stripped.startswith(_INJECTED_PREFIXES):
        return neutral.Origin.INJECTED
    return neutral.Origin.TYPED


def _text_of(content: neutral.JSON) -> str:
    if type(content) is str:
        return content
    if type(content) is list:
        return "\n".join(
            b["text"] for b in content if type(b) is dict and type(b.get("text")) is str
        )
    return ""


def _rendered_text(rec: Record) -> str:
    rendered = rec.get("rendered")
    if type(rendered) is not list:
        return ""
    return "\n".join(
        r["content"] for r in rendered if type(r) is dict and type(r.get("content")) is str
    )


def _image(block: Record) -> neutral.Image:
    source = as_dict(block.get("source"))
    media = str_or_none(source.get("media_type"))
    if source.get("type") == "base64":
        return neutral.Image(
            url=f"data:{media};base64,{as_str(source.get('data'))}", media_type=media
        )
    if source.get("type") == "url":
        return neutral.Image(url=str_or_none(source.get("url")))
    return neutral.Image()
