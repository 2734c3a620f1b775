"""A deterministic handoff summary of a stretch of a thread (pure).

What a handoff summary holds, built from what the items say: the user's goals and
constraints (their prompts: the last ones in full, older ones one line each), the decisions and
results (each run's final reply), files changed (edit / write / patch calls, and files a shell
command wrote with a redirection or ``sed -i``), the commands and tests run with their exit codes,
the plan and todo state (the latest plan call), the diff summary (a file list with +/- line
counts, never the diff), known failures, unresolved questions, and subagent results.

Left out: hidden or shown reasoning, injected context, protocol records, limit notices as content,
superseded tool output (only the latest result of each command is kept) and large outputs (a few
tail lines of a failure only). Secrets are replaced by markers before anything is cut. The text
stays within ``max_chars``: detail is reduced step by step until it fits.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any

import msgspec
import orjson

from segue.model.conversation import (
    AssistantMessage,
    Compaction,
    CompactionState,
    ErrorKind,
    ErrorNotice,
    Item,
    ToolCall,
    ToolKind,
    ToolResult,
    TurnMarker,
    TurnStatus,
)
from segue.model.limits import looks_like_limit_text
from segue.transforms.effective import apply_rollbacks
from segue.transforms.redact import redact_items, scan_items
from segue.transforms.secrets import mask
from segue.transforms.turns import group_turns

__all__ = ["DEFAULT_MAX_CHARS", "summarize_runs"]

DEFAULT_MAX_CHARS = 12_000
CUT = "…"
_FILE_KINDS = (ToolKind.EDIT, ToolKind.WRITE, ToolKind.PATCH)
_LIMITS = (ErrorKind.RATE_LIMIT, ErrorKind.USAGE_LIMIT, ErrorKind.CONTEXT_WINDOW)
_PATCH_FILE = re.compile(r"^\*\*\* (Add|Update|Delete) File: (.+)$")
_PATCH_MOVE = re.compile(r"^\*\*\* Move to: (.+)$")
_DIFF_FILE = re.compile(r"^\+\+\+ (?:b/)?(.+)$")
_REDIRECT = re.compile(r"(?<![0-9&])>>?\s*([^\s;&|<>()'\"]+)")
_SED_INPLACE = re.compile(r"\bsed\s+-i\S*\s+(?:'[^']*'|\"[^\"]*\"|\S+)\s+([^\s;&|]+)")


class _Detail(msgspec.Struct, frozen=True):
    """How much of each thing is shown (reduced until the summary fits)."""

    full: int  # chars of the latest prompt and reply
    line: int  # chars of any other entry
    entries: int  # entries per section
    tail: int  # output lines of a failure


_LEVELS = (
    _Detail(2_000, 300, 30, 3),
    _Detail(1_000, 200, 15, 2),
    _Detail(500, 120, 8, 1),
    _Detail(200, 80, 4, 0),
    _Detail(80, 60, 2, 0),
)


class _Run(msgspec.Struct):
    number: int
    prompt: str
    reply: str | None = None
    failed: str | None = None  # the turn failed or was aborted (and why, when said)


class _Command(msgspec.Struct):
    text: str
    run: int
    exit_code: int | None = None
    error: bool | None = None
    output: str = ""
    answered: bool = False


class _Facts(msgspec.Struct):
    runs: list[_Run] = msgspec.field(default_factory=list)
    earlier: str | None = None  # the latest portable compaction's summary
    files: dict[str, str] = msgspec.field(default_factory=dict)  # path -> how it changed
    diff: dict[str, list[int]] = msgspec.field(default_factory=dict)  # path -> [added, removed]
    commands: dict[str, _Command] = msgspec.field(default_factory=dict)  # latest result per command
    plan: str | None = None
    failures: list[str] = msgspec.field(default_factory=list)
    subagents: list[tuple[str, str]] = msgspec.field(default_factory=list)  # (what, its report)
    workspace: str | None = None  # the latest checkpoint, one line


def summarize_runs(
    items: Sequence[Item],
    *,
    max_chars: int = DEFAULT_MAX_CHARS,
    first_run: int = 1,
    workspace: str | None = None,
) -> str:
    """A Markdown summary of ``items`` (a stretch of runs, numbered from ``first_run``) of at
    most ``max_chars`` characters, with every secret replaced by a marker. ``workspace``: the
    latest checkpoint of the workspace and what it changed (one line), first in the diff
    summary: what the files are now, whichever tool changed them."""
    if max_chars <= 0:
        return ""
    clean = redact_items(items, scan_items(items))
    facts = _gather(apply_rollbacks(clean), first_run)
    facts.workspace = workspace
    text = ""
    for detail in _LEVELS:
        text = mask(_render(facts, detail))
        if len(text) <= max_chars:
            return text
    return _cut(text, max_chars)  # the last resort


# -- gathering ---------------------------------------------------------------------------------


def _gather(items: Sequence[Item], first_run: int) -> _Facts:
    facts = _Facts()
    calls: dict[str, ToolCall] = {}
    number = first_run - 1
    for turn in group_turns(items):
        run: _Run | None = None
        if turn.prompt is not None:
            number += 1
            run = _Run(number, turn.prompt.text.strip())
            facts.runs.append(run)
        for item in turn.items:
            _take(item, facts, run, number, calls)
    return facts


def _take(
    item: Item, facts: _Facts, run: _Run | None, number: int, calls: dict[str, ToolCall]
) -> None:
    match item:
        case AssistantMessage() if run is not None and item.text.strip():
            if not looks_like_limit_text(item.text):
                run.reply = item.text.strip()
        case ToolCall():
            calls[item.call_id] = item
            _call(item, facts, number)
        case ToolResult():
            call = calls.get(item.call_id)
            if call is not None:
                _result(call, item, facts, number)
        case ErrorNotice():
            if item.error_kind not in _LIMITS:
                facts.failures.append(f"run {number}: {item.message.strip()}")
            if run is not None and run.reply is None:
                run.failed = item.error_kind.value.replace("_", " ")
        case TurnMarker() if run is not None and run.reply is None:
            if item.status in (TurnStatus.ABORTED, TurnStatus.FAILED):
                run.failed = run.failed or item.status.value
        case Compaction() if item.state is CompactionState.PORTABLE and item.summary.strip():
            if not looks_like_limit_text(item.summary):
                facts.earlier = item.summary.strip()
        case _:
            pass  # reasoning, injected context, protocol records


def _call(call: ToolCall, facts: _Facts, number: int) -> None:
    if call.tool in _FILE_KINDS:
        for path, added, removed in _file_changes(call):
            facts.files[path] = call.tool.value
            counts = facts.diff.setdefault(path, [0, 0])
            counts[0] += added
            counts[1] += removed
    elif call.tool is ToolKind.SHELL:
        command = _command_text(call.input)
        if command:
            facts.commands.pop(command, None)  # a rerun supersedes the earlier one
            facts.commands[command] = _Command(command, number)
            for path in _shell_writes(command):
                facts.files.setdefault(path, "shell")
    elif call.tool is ToolKind.PLAN:
        plan = _plan_text(call.input)
        if plan:
            facts.plan = plan


def _result(call: ToolCall, result: ToolResult, facts: _Facts, number: int) -> None:
    if call.tool is ToolKind.SHELL:
        command = facts.commands.get(_command_text(call.input) or "")
        if command is not None:
            command.exit_code, command.error = result.exit_code, result.error
            command.output, command.answered = result.output, True
    elif call.tool is ToolKind.SUBAGENT:
        label = _first_string(call.input, ("description", "message", "prompt")) or call.name
        facts.subagents.append((f"run {number}, {_one_line(label)}", _one_line(result.output)))
    elif result.error:
        facts.failures.append(f"run {number}: {call.name} failed: {_one_line(result.output)}")


def _command_text(value: Any) -> str | None:
    if isinstance(value, str):
        return value.strip() or None
    found = _first_string(value, ("command", "cmd"))
    if found is None and isinstance(value, dict):
        raw = value.get("command", value.get("cmd"))
        if isinstance(raw, list) and all(isinstance(part, str) for part in raw):
            found = " ".join(raw)
    return found.strip() if found else None


def _first_string(value: Any, keys: Iterable[str]) -> str | None:
    if isinstance(value, dict):
        for key in keys:
            found = value.get(key)
            if isinstance(found, str) and found.strip():
                return found
    return None


def _file_changes(call: ToolCall) -> list[tuple[str, int, int]]:
    """``(path, lines added, lines removed)`` of an edit, write or patch call."""
    value = call.input
    patch = value if isinstance(value, str) else _first_string(value, ("patch", "input", "diff"))
    if patch is not None:
        return _patch_changes(patch)
    path = _first_string(value, ("file_path", "path", "notebook_path", "filename"))
    if path is None:  # (also for an input that is not an object)
        return []
    added = removed = 0
    edits = value.get("edits")
    pairs = [e for e in edits if isinstance(e, dict)] if isinstance(edits, list) else [value]
    for edit in pairs:
        new = _first_string(edit, ("new_string", "content", "new_source")) or ""
        old = _first_string(edit, ("old_string",)) or ""
        added += len(new.splitlines())
        removed += len(old.splitlines())
    return [(path, added, removed)]


def _patch_changes(patch: str) -> list[tuple[str, int, int]]:
    out: list[list[Any]] = []
    for line in patch.splitlines():
        header = _PATCH_FILE.match(line) or _DIFF_FILE.match(line)
        move = _PATCH_MOVE.match(line)
        if header is not None:
            path = header.group(header.lastindex or 1).strip()
            if path != "/dev/null":
                out.append([path, 0, 0])
        elif move is not None and out:
            out[-1][0] = move.group(1).strip()
        elif out and line.startswith("+") and not line.startswith("+++"):
            out[-1][1] += 1
        elif out and line.startswith("-") and not line.startswith("---"):
            out[-1][2] += 1
    return [(str(p), int(a), int(r)) for p, a, r in out]


def _shell_writes(command: str) -> list[str]:
    found = [m.group(1) for m in _REDIRECT.finditer(command)]
    found += [m.group(1) for m in _SED_INPLACE.finditer(command)]
    return [p for p in dict.fromkeys(found) if not p.startswith("/dev/")]


def _plan_text(value: Any) -> str | None:
    if isinstance(value, str):
        return value.strip() or None
    if not isinstance(value, dict):
        return None
    for key in ("todos", "plan", "tasks"):
        steps = value.get(key)
        if isinstance(steps, list):
            lines = [_step(step) for step in steps]
            return "\n".join(line for line in lines if line) or None
    text = _first_string(value, ("plan", "subject", "description", "explanation"))
    if text is not None:
        status = _first_string(value, ("status",))
        return f"{text.strip()} ({status})" if status else text.strip()
    return orjson.dumps(value).decode() if value else None


def _step(step: Any) -> str:
    if isinstance(step, str):
        return f"- {step}"
    text = _first_string(step, ("content", "step", "subject", "description", "title"))
    if text is None:
        return ""
    status = _first_string(step, ("status",)) or "pending"
    box = {"completed": "x", "in_progress": "~"}.get(status, " ")
    return f"- [{box}] {_one_line(text)}"


# -- rendering ---------------------------------------------------------------------------------


def _render(facts: _Facts, d: _Detail) -> str:
    parts = ["# Handoff summary"]
    parts += _section("Goals and constraints", _goals(facts, d))
    parts += _section("Decisions and results", _decisions(facts, d))
    parts += _section("Unresolved questions", _questions(facts, d))
    parts += _section("Files changed", _files(facts, d))
    parts += _section("Commands and tests", _commands(facts, d))
    parts += _section("Plan and todo state", _plan(facts, d))
    parts += _section("Latest diff summary", _diff(facts, d))
    parts += _section("Known failures", _failures(facts, d))
    parts += _section("Subagent results", _subagents(facts, d))
    if len(parts) == 1:
        parts.append("\nNothing happened in these runs that needs carrying.")
    return "\n".join(parts) + "\n"


def _section(title: str, lines: list[str]) -> list[str]:
    return [f"\n## {title}", *lines] if lines else []


def _goals(facts: _Facts, d: _Detail) -> list[str]:
    out: list[str] = []
    if facts.earlier:
        out.append(f"- earlier (compacted): {_line(facts.earlier, d.line * 2)}")
    runs = facts.runs[-d.entries :]
    skipped = len(facts.runs) - len(runs)
    if skipped:
        out.append(f"- ({skipped} earlier prompts left out)")
    last_two = len(runs) - 2  # in full
    return out + [_entry(r.number, r.prompt, i >= last_two, d) for i, r in enumerate(runs)]


def _decisions(facts: _Facts, d: _Detail) -> list[str]:
    replied = [(run.number, run.reply) for run in facts.runs if run.reply][-d.entries :]
    last = len(replied) - 1  # in full
    return [_entry(number, reply, i == last, d) for i, (number, reply) in enumerate(replied)]


def _entry(number: int, text: str, full: bool, d: _Detail) -> str:
    shown = _quote(_cut(text, d.full)) if full else _line(text, d.line)
    return f"- run {number}: {shown}"


def _questions(facts: _Facts, d: _Detail) -> list[str]:
    if not facts.runs:
        return []
    last = facts.runs[-1]
    if last.reply is None:
        why = f" ({last.failed})" if last.failed else ""
        return [f"- run {last.number} was not answered{why}: {_line(last.prompt, d.line)}"]
    if last.reply.rstrip().endswith("?"):
        return [f"- run {last.number} ended with a question: {_line(last.reply, d.line)}"]
    return []


def _files(facts: _Facts, d: _Detail) -> list[str]:
    paths = list(facts.files.items())[-d.entries :]
    return [f"- `{path}` ({'written by a shell command' if how == 'shell' else how})"
            for path, how in paths]  # fmt: skip


def _commands(facts: _Facts, d: _Detail) -> list[str]:
    shown = list(facts.commands.values())[-d.entries :]
    left = len(facts.commands) - len(shown)
    out = [f"- ({left} earlier commands left out)"] if left else []
    return out + [f"- run {c.run}: `{_line(c.text, d.line)}` → {_outcome(c)}" for c in shown]


def _outcome(command: _Command) -> str:
    if not command.answered:
        return "no result"
    if command.exit_code is not None:
        return f"exit {command.exit_code}"
    return "failed" if command.error else "ok"


def _plan(facts: _Facts, d: _Detail) -> list[str]:
    if facts.plan is None:
        return []
    lines = facts.plan.splitlines()
    shown = [_cut(line, d.line) for line in lines[: d.entries]]
    if len(lines) > d.entries:
        shown.append(f"- ({len(lines) - d.entries} more)")
    return shown


def _diff(facts: _Facts, d: _Detail) -> list[str]:
    head = [f"- workspace: {_cut(facts.workspace, d.full)}"] if facts.workspace else []
    if not facts.diff:
        return head
    added = sum(a for a, _ in facts.diff.values())
    removed = sum(r for _, r in facts.diff.values())
    out = [*head, f"{len(facts.diff)} files, +{added} -{removed} lines"]
    out += [f"- `{p}` +{a} -{r}" for p, (a, r) in list(facts.diff.items())[-d.entries :]]
    return out


def _failures(facts: _Facts, d: _Detail) -> list[str]:
    out = []
    for command in facts.commands.values():
        if command.answered and (command.error or command.exit_code not in (None, 0)):
            tail = [_cut(line, d.line) for line in command.output.strip().splitlines()[-d.tail :]]
            shown = "".join(f"\n  > {line}" for line in tail) if d.tail else ""
            out.append(f"- run {command.run}: `{_line(command.text, d.line)}` "
                       f"{_outcome(command)}{shown}")  # fmt: skip
    out += [f"- {_line(f, d.line)}" for f in facts.failures]
    return out[-d.entries :]


def _subagents(facts: _Facts, d: _Detail) -> list[str]:
    """Each report's end (where a subagent's final words are), shortened."""
    out = []
    for what, report in facts.subagents[-d.entries :]:
        tail = report if len(report) <= d.line * 2 else CUT + report[-(d.line * 2 - 1) :]
        out.append(f"- {_cut(what, d.line)}: {tail}")
    return out


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _quote(text: str) -> str:
    lines = text.splitlines()
    return text if len(lines) <= 1 else "\n  ".join(lines)


def _line(text: str, limit: int) -> str:
    """``text`` on one line, cut to ``limit`` characters."""
    return _cut(_one_line(text), limit)


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: max(limit - 1, 0)].rstrip() + CUT
