"""Human-readable views of conversations, listings and batches (for the terminal)."""

from __future__ import annotations

import shlex
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, assert_never

import orjson
from rich.console import Console
from rich.text import Text

from segue.cli.terminal import print_table
from segue.model import conversation as neutral
from segue.model.session_info import SessionInfo
from segue.model.times import ago, in_time, local_clock, utc_minutes
from segue.model.units import format_bytes
from segue.providers import entry
from segue.running.usage import ProviderUsage, source_kind, window_label
from segue.store.records import Batch, BatchSummary, tally_line
from segue.transforms.effective import active_prompts
from segue.transforms.plan import Label
from segue.transforms.secrets import mask as mask_secrets
from segue.transforms.turns import group_turns

if TYPE_CHECKING:
    from segue.demo import Demo
    from segue.fleet.batch import FleetPlan, FleetResult
    from segue.running.agents import Agent
    from segue.switch import Switch
    from segue.switch.result import ThreadMove


Mask = Callable[[str], str]


def _clip(text: str, lines: int, mask: Mask, indent: str = "") -> str:
    """The first ``lines`` lines of ``text``, each cut at 160 characters, with secrets masked
    (masked before cutting, so no part of one shows); with an ``indent``, each line after it."""
    rows = text.splitlines() or [""]
    shown = mask("\n".join(rows[:lines])).splitlines() or [""]
    out = [r if len(r) <= 160 else r[:159] + "…" for r in shown]
    if len(rows) > lines:
        out.append(f"… ({len(rows) - lines} more lines, {len(text):,} chars)")
    clipped = "\n".join(out)
    return "\n".join(indent + line for line in clipped.splitlines()) if indent else clipped


def _tool_input(call: neutral.ToolCall) -> str:
    value = call.input
    if isinstance(value, dict):
        for key in ("command", "cmd", "file_path", "path", "pattern", "url", "query"):
            if key in value:
                v = value[key]
                return " ".join(map(str, v)) if isinstance(v, list) else str(v)
        return orjson.dumps(value).decode()
    return str(value)


def render_item(
    item: neutral.Item, verbose: bool = False, mask: Mask = mask_secrets
) -> Text | None:
    """One item for the terminal (None for what is hidden unless ``verbose``); secrets in its
    texts are masked unless ``mask`` says otherwise."""
    match item:
        case neutral.UserMessage():
            if item.origin is neutral.Origin.TYPED:
                return None  # shown as the turn heading
            label = "context" if item.origin is neutral.Origin.INJECTED else "command"
            if not verbose and item.origin is neutral.Origin.INJECTED:
                return Text(f"  · {label}: {len(item.text):,} chars", style="dim")
            return Text(f"  · {label}:\n" + _clip(item.text, 4, mask, "      "), style="dim")
        case neutral.AssistantMessage():
            return Text(_clip(item.text, 12, mask, "  "))
        case neutral.Reasoning():
            note = " (+ provider-private payload)" if item.private else ""
            body = _clip(item.text, 3, mask) if item.text else "(no readable text)"
            return Text(f"  ~ reasoning{note}: " + body, style="italic dim")
        case neutral.ToolCall():
            shown = _clip(_tool_input(item), 3, mask)
            return Text(f"  $ {item.name} [{item.tool.value}] {shown}", style="cyan")
        case neutral.ToolResult():
            status = "error" if item.error else "ok" if item.error is False else "?"
            if item.exit_code is not None:
                status += f", exit {item.exit_code}"
            head = f"    → {status}, {len(item.output):,} chars"
            return Text(head + "\n" + _clip(item.output, 4, mask, "      "), style="green")
        case neutral.Compaction():
            trig = f", {item.trigger}" if item.trigger else ""
            kept = f", keeps {len(item.replacement)} items" if item.replacement else ""
            text = f"  ⟳ compaction ({item.state.value}{trig}{kept})"
            if item.summary:
                text += "\n" + _clip(item.summary, 4, mask, "      ")
            return Text(text, style="magenta")
        case neutral.ErrorNotice():
            reset = f" (resets {utc_minutes(item.reset_at)})" if item.reset_at else ""
            message = _clip(item.message, 2, mask)
            return Text(f"  ⚠ {item.error_kind.value}: {message}{reset}", style="red")
        case neutral.Rollback():
            return Text(f"  ↶ rolled back {item.turns} turn(s)", style="yellow")
        case neutral.TurnMarker():
            return Text(f"  · turn {item.status.value}", style="dim") if verbose else None
        case neutral.Opaque():
            line = f"  · {item.native_kind} (line {item.prov.line})"
            return Text(line, style="dim") if verbose else None
        case _:
            assert_never(item)


def print_conversation(
    console: Console,
    conversation: neutral.Conversation,
    verbose: bool = False,
    show_secrets: bool = False,
) -> None:
    """The conversation, turn by turn; detected secrets are masked unless ``show_secrets``."""
    mask: Mask = str if show_secrets else mask_secrets
    meta = conversation.meta
    header = Text()
    header.append(f"{meta.provider.value} session {meta.id}\n", style="bold")
    header.append(f"  file    {meta.path}\n  cwd     {meta.cwd}\n")
    header.append(f"  model   {meta.model or 'unknown'}   cli {meta.cli_version or 'unknown'}")
    if meta.git_branch:
        header.append(f"   branch {meta.git_branch}")
    header.append(f"\n  updated {meta.updated or 'unknown'}")
    if meta.title:
        header.append(f"\n  title   {mask(meta.title)}")
    console.print(header)
    number = 0
    counted = {id(prompt) for prompt in active_prompts(conversation.items)}
    for turn in group_turns(conversation.items):
        if turn.prompt is not None:
            if id(turn.prompt) in counted:
                number += 1
                console.print(Text(f"\n── turn {number}", style="bold blue"))
            else:
                console.print(Text("\n── turn (rolled back later)", style="bold dim"))
            prompt = _clip(turn.prompt.text, 8, mask).replace("\n", "\n  ")
            console.print(Text("> " + prompt, style="bold"))
        _print_items(console, turn.items, verbose, mask)
    for side in conversation.sidechains:
        console.print(Text(f"\n══ subagent transcript {side.meta.path}", style="bold"))
        _print_items(console, side.items, verbose, mask)
    if conversation.skipped or conversation.notes:
        console.print(Text("\nwhat was skipped", style="bold yellow"))
        for skip in conversation.skipped:
            console.print(Text(f"  {skip.file}:{skip.line}: {skip.reason}", style="yellow"))
        for note in conversation.notes:
            console.print(Text(f"  {note}", style="yellow"))


def _print_items(
    console: Console, items: Sequence[neutral.Item], verbose: bool, mask: Mask
) -> None:
    for rendered in (render_item(item, verbose, mask) for item in items):
        if rendered is not None:
            console.print(rendered)


def _state(state: str, reset_at: datetime | None) -> str:
    return state + (f" until {utc_minutes(reset_at)}" if reset_at else "")


def print_sessions(
    console: Console, sessions: Sequence[SessionInfo], show_secrets: bool = False
) -> None:
    """One line per session, full ids (they are what ``show`` and ``switch`` take); detected
    secrets in titles and prompts are masked unless ``show_secrets``."""
    mask: Mask = str if show_secrets else mask_secrets
    rows: list[tuple[str, ...]] = [
        ("PROVIDER", "ID", "STATE", "TURNS", "UPDATED", "SIZE", "TITLE / FIRST PROMPT")
    ]
    for s in sessions:
        state = _state(s.state.value, s.reset_at)
        updated = (s.updated or "")[:16].replace("T", " ")
        size = format_bytes(s.size)
        rows.append((s.provider.value, s.id, state, str(s.turns), updated, size, mask(s.label)))
    print_table(console, rows, right={3, 5})


def print_agents(console: Console, agents: Sequence[Agent]) -> None:
    """One line per running agent; the session id last (it is what ``switch`` takes)."""
    rows: list[tuple[str, ...]] = [("PROVIDER", "PID", "PANE", "STATE", "CWD", "SESSION")]
    for a in agents:
        state = _state(a.state.value, a.reset_at)
        pane = f"{a.pane.target} {a.pane.id}" if a.pane else "-"
        session = a.session_id or "-"
        if a.session_id and a.session_path is None:
            session += " (no prompt yet)"
        rows.append((a.provider.value, str(a.pid), pane, state, a.cwd or "?", session))
    print_table(console, rows, right={1})


def print_switch(console: Console, switch: Switch, move: ThreadMove | None = None) -> None:
    plan = switch.plan
    target = plan.target
    meta = switch.source.meta
    out = Text()
    out.append(f"{meta.provider.value} session {meta.id} → {target.provider.value}\n", style="bold")
    out.append(f"  source   {switch.source_path}\n")
    out.append(
        f"  target   {target.provider.value} {target.model or '(default model)'}: window "
        f"{target.context_window:,} tokens, compacts at {target.auto_compact_tokens:,}\n"
        f"           ({target.source})\n"
    )
    out.append("  plan     ")
    style = "bold green" if plan.label is Label.NATIVE else "bold yellow"
    out.append(plan.loss_line + "\n", style=style)
    out.append(f"  tokens   {plan.limit_line}\n")
    if plan.not_carried:
        kinds = ", ".join(f"{n} {kind}" for kind, n in plan.not_carried.items())
        out.append(f"  not carried (the target cannot take these): {kinds}\n", style="dim")
    secrets = plan.secrets_line
    if secrets is not None:
        style = "yellow" if plan.secrets_redacted else "bold red"
        out.append(f"  secrets  {secrets}\n", style=style)
    for note in plan.notes:
        out.append(f"  note     {note}\n", style="yellow")
    for skip in switch.source.skipped:
        out.append(f"  skipped  {skip.file}:{skip.line}: {skip.reason}\n", style="yellow")
    if move is not None:
        out.append(f"  thread   {move.thread_id}: {move.strategy} ({move.reason})\n", style="dim")
    for warning in switch.warnings:
        out.append(f"  warning  {warning}\n", style="yellow")
    if switch.dry_run:
        if move is not None and move.strategy == "no_handoff" and switch.session_id:
            out.append(f"  resume   {switch.session_id} as it is\n")
        out.append("  dry run: nothing written\n", style="bold")
    elif switch.session_id is None:
        out.append("  nothing written\n", style="bold")
    else:
        if switch.written:
            out.append(f"  new      {switch.session_id}\n  file     {switch.path}\n")
        else:
            out.append(f"  resume   {switch.session_id} as it is (nothing written)\n")
        out.append("continue it with:\n", style="bold")
        out.append(f"  {switch.resume_command}\n")
    console.print(out, end="")


def print_demo(console: Console, demo: Demo) -> None:
    source, switch = demo.source, demo.switch
    console.print(Text("segue demo", style="bold"))
    recorded = f"A recorded {source.provider.value} session ({demo.about['recorded_with']})"
    console.print(Text(f"{recorded},\ncopied into the scratch home {demo.home}:\n", style="dim"))
    print_sessions(console, [source])
    console.print(
        Text("\n1. The switch, planned and written (the source is only read):", style="bold")
    )
    print_switch(console, switch)
    console.print(Text("\n2. The native file it wrote, record by record:", style="bold"))
    for n, line in enumerate(demo.written, 1):
        console.print(Text(f"  {n:>3}  {line}"))
    resume = f"HOME={demo.home} {shlex.join(switch.resume_argv)}   (from {switch.cwd})"
    login = f"With a {entry(switch.target).label} login"
    console.print(Text(f"\n{login}, continue it with:\n  {resume}", style="bold"))


def print_fleet_plan(console: Console, plan: FleetPlan) -> None:
    """The one preview table of a fleet switch: agent or pane, project, state, size, plan."""
    scope = f"; under {plan.under}" if plan.under else ""
    head = (
        f"{entry(plan.source).label} → {entry(plan.target).label} "
        f"({plan.reason}{scope}; {len(plan.to_switch)} of {len(plan.candidates)} to switch)"
    )
    console.print(Text(head, style="bold"))
    rows = [("AGENT", "PROJECT", "STATE", "SIZE", "PLAN")]
    for c in plan.candidates:
        state = _state(c.state, c.reset_at)
        rows.append((c.who, c.cwd or "?", state, format_bytes(c.size), c.plan_line))
    print_table(console, rows, right={3})


def print_fleet_result(console: Console, result: FleetResult) -> None:
    for outcome in result.outcomes:
        c = outcome.candidate
        name = c.pane or c.session_id[:13]
        if outcome.switch is not None and outcome.switch.session_id is not None:
            line = f"  {name}: {outcome.switch.plan.loss_line} → {outcome.switch.resume_command}"
            console.print(Text(line))
        elif outcome.error:
            console.print(Text(f"  {name}: failed: {outcome.error}", style="red"))
        for note in outcome.notes:
            console.print(Text(f"    {note}", style="dim"))
    for note in result.notes:
        console.print(Text(f"  note: {note}", style="yellow"))
    console.print(Text(result.tally_line(), style="bold"))
    if result.batch_id:
        back = f"segue switch --return {result.batch_id[:8]}"
        console.print(Text(f"batch {result.batch_id} ({back})", style="dim"))


def _until(window: neutral.LimitWindow, now: datetime) -> str:
    if window.resets_at is None:
        return "reset time unknown"
    return f"until {local_clock(window.resets_at, now)} ({in_time(window.resets_at, now)})"


def _usage_headline(usage: ProviderUsage, now: datetime) -> Text:
    line = Text(f"{usage.provider.value:<8}", style="bold")
    blocking = usage.blocking
    if usage.exhausted and blocking is not None:
        line.append("exhausted", style="bold red")
        line.append(f" — blocked by the {window_label(blocking)} limit {_until(blocking, now)}")
        return line
    line.append("ok", style="bold green")
    if blocking is not None and blocking.exhausted:
        line.append(f" — the {window_label(blocking)} limit is used up {_until(blocking, now)}")
    elif blocking is not None and blocking.used_percent is not None:
        line.append(f" — fullest: {window_label(blocking)} {blocking.used_percent:.0f}% used")
    else:
        line.append(" — no usage reported", style="dim")
    return line


def print_usage(console: Console, usages: Sequence[ProviderUsage], now: datetime) -> None:
    """One block per provider: the verdict, the model switch to try, then a row per window."""
    for usage in usages:
        console.print(_usage_headline(usage, now))
        if usage.suggestion:
            console.print(f"  switch model instead: {usage.suggestion}", markup=False)
        for window in usage.windows:
            used = "?" if window.used_percent is None else f"{window.used_percent:.0f}%"
            resets = "resets at an unknown time"
            if window.resets_at is not None:
                when = window.resets_at
                resets = f"resets {in_time(when, now)}, {local_clock(when, now)}"
            scope = "all models" if window.scope == neutral.ALL_MODELS else f"{window.scope} only"
            seen = ago(window.observed_at, now) if window.observed_at else "at an unknown time"
            row = Text(f"  {window_label(window):<16} {used:>5} used  ")
            row.append(f"{resets:<40} {scope:<12} ")
            row.append(f"{source_kind(window)} {seen}", style="dim")
            console.print(row)
        for note in usage.notes:
            console.print(Text(f"  note: {note}", style="dim"))


def _when(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M")


def _route(from_provider: str | None, to_provider: str | None) -> str:
    return f"{from_provider or 'several'} → {to_provider or 'several'}"


def print_batches(
    console: Console, summaries: Sequence[BatchSummary], by_watch: Mapping[str, str]
) -> None:
    """One line per batch, newest first, full ids (what ``segue batches BATCH`` takes); a batch
    ``segue watch`` made says so."""
    rows: list[tuple[str, ...]] = [("BATCH", "CREATED (UTC)", "ROUTE", "AGENTS", "OUTCOME")]
    for s in summaries:
        agents = str(s.agents) if s.planned in (None, s.agents) else f"{s.agents}/{s.planned}"
        route = _route(s.from_provider, s.to_provider)
        outcome = s.tally_line + (f" (watch: {by_watch[s.id]})" if s.id in by_watch else "")
        rows.append((s.id, _when(s.created_at), route, agents, outcome))
    print_table(console, rows, right={3})


def print_batch(console: Console, batch: Batch) -> None:
    """The batch's heading, then one line per agent in selection order."""
    h = batch.header
    out = Text()
    out.append(f"batch {h.id}  {_route(h.from_provider, h.to_provider)}\n", style="bold")
    out.append(
        f"  created  {_when(h.created_at)} UTC on {h.host} (pid {h.pid}, segue {h.segue_version})\n"
    )
    recorded = len(batch.agents)
    planned = "" if h.planned in (None, recorded) else f" of {h.planned} selected"
    out.append(f"  agents   {recorded} recorded{planned}: {tally_line(batch.tally)}")
    console.print(out, soft_wrap=True)
    if not batch.agents:
        return
    rows: list[tuple[str, ...]] = [("#", "FROM", "SESSION", "STATE", "OUTCOME", "RESULT")]
    for agent in batch.agents:
        r = agent.result
        moved = "" if r.target_session is None else f"{r.target_provider} {r.target_session}"
        now = next((why for why in (r.skipped, r.error) if why is not None), moved)
        rows.append((str(r.ordinal), r.provider, r.session, r.state or "", agent.outcome, now))
    console.print()
    print_table(console, rows, right={0})
