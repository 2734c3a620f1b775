"""Recording into segue's store: eight processes at once, on SQLite (WAL) and PostgreSQL.

    uv run python benchmarks/store.py [--workers 8] [--agents 200] [--runs 3] [--json]

For each backend, a new store (a SQLite file in a scratch folder; a database on a private
PostgreSQL server started for the run, see ``segue_testbed.postgres``): ``--workers``
processes import segue, wait for a common start, open the store (the first opening migrates it,
the others wait for that), create a batch each and record ``--agents`` agent results into it,
one transaction per result, as fast as they can. Printed, best of ``--runs``: the wall time
from the start to the last process done, records per second over all processes, and the time
one process alone takes per record. Every record is counted afterwards; a missing one fails the
run.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import orjson

from segue.model.conversation import Provider
from segue.store import AgentResult, open_store
from segue_testbed.postgres import PostgresServer, PostgresUnavailable, start_postgres

_WORKER = """
import sys, time
from pathlib import Path
from segue.model.conversation import Provider
from segue.store import AgentResult, open_store
url, go, worker, agents = sys.argv[1], Path(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
while not go.exists():
    time.sleep(0.001)
with open_store(url) as store:
    batch = store.create_batch(Provider.CODEX, Provider.CLAUDE, planned=agents)
    for n in range(agents):
        store.add_agent(batch.id, AgentResult(n, Provider.CODEX, f"w{worker}-{n}", label="native",
                        target_provider=Provider.CLAUDE, target_session=f"t{worker}-{n}"))
"""


def record_at_once(url: str, scratch: Path, workers: int, agents: int) -> float:
    """Seconds from the common start until the last of ``workers`` processes is done."""
    go = scratch / f"go-{time.monotonic_ns()}"
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", _WORKER, url, str(go), str(w), str(agents)],
            stderr=subprocess.PIPE,
            text=True,
        )
        for w in range(workers)
    ]
    time.sleep(3.0)  # let every interpreter import segue and wait
    start = time.perf_counter()
    go.touch()
    errors = [p.communicate(timeout=600)[1] for p in procs]
    elapsed = time.perf_counter() - start
    failed = [e for p, e in zip(procs, errors, strict=True) if p.returncode != 0]
    if failed:
        raise SystemExit(f"{len(failed)} of {workers} processes failed: {failed[0]}")
    return elapsed


def one_process(url: str, agents: int) -> float:
    """Seconds per record for one process alone, on a store that is already open."""
    with open_store(url) as store:
        batch = store.create_batch(Provider.CODEX, Provider.CLAUDE)
        start = time.perf_counter()
        for n in range(agents):
            store.add_agent(batch.id, AgentResult(n, Provider.CODEX, f"solo-{n}", label="raw"))
        return (time.perf_counter() - start) / agents


def bench(
    backend: str, new_url: Any, scratch: Path, workers: int, agents: int, runs: int
) -> dict[str, Any]:
    walls = []
    for _ in range(runs):
        url = new_url()
        walls.append(record_at_once(url, scratch, workers, agents))
        with open_store(url) as store:
            counted = sum(s.agents for s in store.list_batches())
        if counted != workers * agents:
            raise SystemExit(f"{backend}: {counted} records of {workers * agents}")
    wall = min(walls)
    return {
        "backend": backend,
        "workers": workers,
        "records": workers * agents,
        "wall_s": wall,
        "records_per_s": workers * agents / wall,
        "solo_ms_per_record": one_process(new_url(), agents) * 1000,
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workers", type=int, default=8)
    parser.add_argument("--agents", type=int, default=200)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    results = []
    with tempfile.TemporaryDirectory(prefix="segue-bench-store-") as folder:
        scratch = Path(folder)
        files = iter(range(1_000_000))
        results.append(
            bench(
                "sqlite",
                lambda: f"sqlite:///{scratch / f'store-{next(files)}.db'}",
                scratch,
                args.workers,
                args.agents,
                args.runs,
            )
        )
        server: PostgresServer | None
        try:
            server = start_postgres()
        except PostgresUnavailable as why:
            print(f"PostgreSQL skipped: {why}", file=sys.stderr)
            server = None
        if server is not None:
            with server:
                results.append(
                    bench(
                        "postgresql",
                        server.create_database,
                        scratch,
                        args.workers,
                        args.agents,
                        args.runs,
                    )
                )
    if args.json:
        sys.stdout.write(orjson.dumps(results, option=orjson.OPT_INDENT_2).decode() + "\n")
        return
    print(f"{args.workers} processes recording at once, best of {args.runs}:")
    for r in results:
        print(
            f"  {r['backend']:<10} {r['records']} records in {r['wall_s']:.2f} s "
            f"({r['records_per_s']:.0f}/s); one process alone {r['solo_ms_per_record']:.2f} ms "
            "per record"
        )


if __name__ == "__main__":
    main()
