"""Batches for the terminal: the ``segue batches`` table and one batch's agents."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime

from rich.console import Console
from rich.text import Text

from segue.store.records import Batch, BatchSummary, tally_line

__all__ = ["print_batch", "print_batches"]


def _when(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M")


def _route(from_provider: str | None, to_provider: str | None) -> str:
    return f"{from_provider or 'several'} → {to_provider or 'several'}"


def _table(console: Console, rows: list[tuple[str, ...]], right: set[int]) -> None:
    """Columns padded to their widest cell, the last one free; the first row is the heading."""
    last = len(rows[0]) - 1
    widths = [max(len(row[c]) for row in rows) for c in range(last)]
    for n, row in enumerate(rows):
        cells = [
            row[c].rjust(widths[c]) if c in right else row[c].ljust(widths[c]) for c in range(last)
        ]
        line = "  ".join([*cells, row[last]])
        if console.is_terminal and len(line) > console.width:
            line = line[: console.width - 1] + "…"
        console.print(Text(line, style="bold" if n == 0 else ""), soft_wrap=True)


def print_batches(
    console: Console, summaries: Sequence[BatchSummary], by_watch: Mapping[str, str] | None = None
) -> None:
    """One line per batch, newest first, full ids (what ``segue batches BATCH`` takes); a batch
    ``segue watch`` made says so."""
    by_watch = by_watch or {}
    rows: list[tuple[str, ...]] = [("BATCH", "CREATED (UTC)", "ROUTE", "AGENTS", "OUTCOME")]
    for s in summaries:
        agents = str(s.agents) if s.planned in (None, s.agents) else f"{s.agents}/{s.planned}"
        rows.append(
            (
                s.id,
                _when(s.created_at),
                _route(s.from_provider, s.to_provider),
                agents,
                s.tally_line + (f" (watch: {by_watch[s.id]})" if s.id in by_watch else ""),
            )
        )
    _table(console, rows, right={3})


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
        if r.skipped is not None:
            now = r.skipped
        elif r.error is not None:
            now = r.error
        elif r.target_session is not None:
            now = f"{r.target_provider} {r.target_session}"
        else:
            now = ""
        rows.append((str(r.ordinal), r.provider, r.session, r.state or "", agent.outcome, now))
    console.print()
    _table(console, rows, right={0})
