"""The strategy decision on a big thread graph: 10,000 app threads and 1,000,000 runs.

    uv run python benchmarks/threads.py [--threads 10000] [--runs-per-thread 100]
                                        [--samples 500] [--postgresql] [--json]

A new store (a SQLite file in a scratch folder; with ``--postgresql`` also a database on a
private PostgreSQL server, see ``segue_testbed.postgres``) is filled through the real schema:
each app thread has a Codex and a Claude provider thread, its runs alternate between them in
blocks (Codex 1-40, Claude 41-70, Codex 71-100 for 100 runs), and each provider thread was
handed the other's earlier block. Then, for ``--samples`` random threads, one decision is
timed as the switch makes it: load the thread's graph from the store (a transaction of its
own) and decide a move to Codex (no handoff) or to Claude (a delta of the last block). Printed:
the median and the 95th percentile against the 10 ms target, and their ratio to it.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import orjson

from segue.store import Store, open_store
from segue.store.ids import new_id
from segue.store.tables import (
    app_threads,
    context_handoffs,
    provider_thread_revisions,
    provider_threads,
    runs,
)
from segue.threads import Facts, StalenessConfig, Strategy, ThreadStore, decide
from segue_testbed.postgres import PostgresUnavailable, start_postgres

TARGET_MS = 10.0
BATCH = 20_000


def _blocks(n: int) -> list[tuple[str, int, int]]:
    """(provider, first, last) blocks of a thread of ``n`` runs: 40% Codex, 30% Claude, rest
    Codex."""
    a, b = max(1, n * 4 // 10), max(2, n * 7 // 10)
    return [("codex", 1, a), ("claude", a + 1, b), ("codex", b + 1, n)]


def fill(store: Store, threads: int, per_thread: int) -> tuple[list[str], float]:
    """Write the graph; returns the thread ids and the seconds it took."""
    started = time.perf_counter()
    now = datetime.now(UTC)
    ids: list[str] = []
    pending: dict[Any, list[dict[str, Any]]] = {
        t: [] for t in (app_threads, provider_threads, provider_thread_revisions, runs,
                        context_handoffs)
    }  # fmt: skip

    def flush(force: bool = False) -> None:
        if not force and len(pending[runs]) < BATCH:
            return
        with store.writing("cannot fill the benchmark store") as connection:
            for table, rows in pending.items():
                if rows:
                    connection.insert(table, rows)
                    rows.clear()

    blocks = _blocks(per_thread)
    for _ in range(threads):
        tid = new_id()
        ids.append(tid)
        pending[app_threads].append(
            {"id": tid, "created_at": now, "title": "bench", "cwd": "/src/app",
             "parent_thread_id": None, "parent_run_ordinal": None}
        )  # fmt: skip
        pts = {"codex": new_id(), "claude": new_id()}
        for provider, pt in pts.items():
            pending[provider_threads].append(
                {"id": pt, "thread_id": tid, "provider": provider, "created_at": now,
                 "origin": "adopted"}
            )  # fmt: skip
            pending[provider_thread_revisions].append(
                {"provider_thread_id": pt, "version": 1, "native_id": new_id(),
                 "path": f"/x/{pt}.jsonl", "native_turns": per_thread, "status": "active",
                 "reason": None, "model": None, "recorded_at": now}
            )  # fmt: skip
        for provider, first, last in blocks:
            for n in range(first, last + 1):
                pending[runs].append(
                    {"thread_id": tid, "ordinal": n, "version": 1, "provider": provider,
                     "provider_thread_id": pts[provider], "native_turn": n, "handoff_id": None,
                     "status": "completed", "prompt": f"prompt {n}",
                     "started_at": now + timedelta(seconds=n), "ended_at": None,
                     "recorded_at": now}
                )  # fmt: skip
        for provider, first, last in blocks[:2]:  # each was handed the other's earlier block
            other = "claude" if provider == "codex" else "codex"
            pending[context_handoffs].append(
                {"id": new_id(), "transfer_id": None, "thread_id": tid,
                 "target_run_ordinal": last + 1, "from_provider_threads": [pts[provider]],
                 "to_provider_thread_id": pts[other], "covers_from": first, "covers_to": last,
                 "strategy": "delta_since_target_last_seen", "form": "native_items",
                 "text": None, "items": None, "status": "ready", "created_by_provider": None,
                 "supersedes": None, "created_at": now}
            )  # fmt: skip
        flush()
    flush(force=True)
    return ids, time.perf_counter() - started


def time_decisions(store: Store, ids: list[str], samples: int) -> dict[str, Any]:
    threads = ThreadStore(store)
    config = StalenessConfig(max_off_provider_runs=1_000_000)
    rng = random.Random(10)
    times: list[float] = []
    seen: dict[str, int] = {}
    for i in range(samples):
        tid = rng.choice(ids)
        target = "codex" if i % 2 else "claude"
        start = time.perf_counter()
        graph = threads.graph(tid)
        decision = decide(graph, target, Facts(), config)
        times.append((time.perf_counter() - start) * 1000)
        seen[decision.strategy.value] = seen.get(decision.strategy.value, 0) + 1
        if target == "codex":
            assert decision.strategy is Strategy.NO_HANDOFF, decision
        else:
            assert decision.strategy is Strategy.DELTA_INTO_EXISTING, decision
    times.sort()
    median = statistics.median(times)
    p95 = times[int(len(times) * 0.95) - 1]
    return {"median_ms": median, "p95_ms": p95, "max_ms": times[-1], "strategies": seen}


def bench(backend: str, url: str, threads: int, per_thread: int, samples: int) -> dict[str, Any]:
    with open_store(url) as store:
        ids, fill_s = fill(store, threads, per_thread)
        timed = time_decisions(store, ids, samples)
    return {
        "backend": backend,
        "threads": threads,
        "runs": threads * per_thread,
        "fill_s": fill_s,
        "samples": samples,
        **timed,
        "median_ratio": timed["median_ms"] / TARGET_MS,
        "p95_ratio": timed["p95_ms"] / TARGET_MS,
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--threads", type=int, default=10_000)
    parser.add_argument("--runs-per-thread", type=int, default=100)
    parser.add_argument("--samples", type=int, default=500)
    parser.add_argument("--postgresql", action="store_true")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    results = []
    with tempfile.TemporaryDirectory(prefix="segue-bench-threads-") as folder:
        url = f"sqlite:///{Path(folder) / 'segue.db'}"
        results.append(bench("sqlite", url, args.threads, args.runs_per_thread, args.samples))
        if args.postgresql:
            try:
                server = start_postgres()
            except PostgresUnavailable as why:
                print(f"PostgreSQL skipped: {why}", file=sys.stderr)
            else:
                with server:
                    results.append(
                        bench(
                            "postgresql",
                            server.create_database(),
                            args.threads,
                            args.runs_per_thread,
                            args.samples,
                        )
                    )
    if args.json:
        sys.stdout.write(orjson.dumps(results, option=orjson.OPT_INDENT_2).decode() + "\n")
        return
    for r in results:
        print(
            f"{r['backend']}: {r['threads']:,} threads, {r['runs']:,} runs (filled in "
            f"{r['fill_s']:.0f} s); load the graph + decide, {r['samples']} samples: "
            f"median {r['median_ms']:.2f} ms ({r['median_ratio']:.2f}x the {TARGET_MS:.0f} ms "
            f"target), p95 {r['p95_ms']:.2f} ms ({r['p95_ratio']:.2f}x), max {r['max_ms']:.1f} ms"
        )


if __name__ == "__main__":
    main()
