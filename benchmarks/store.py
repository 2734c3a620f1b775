"""segue's store: the first command on a machine, and eight processes recording at once, on
SQLite (WAL) and PostgreSQL.

    uv run python benchmarks/store.py [--first-runs 10] [--command batches] [--first-only]
                                      [--workers 8] [--agents 200] [--runs 3] [--json]

The first command: ``segue COMMAND`` (default ``segue batches``, which opens the store to
write, so it makes it) as a whole process in a fresh ``HOME`` (no store yet; on PostgreSQL a
new, empty database), then the same command again (the store exists). Printed, best and
median of ``--first-runs``: both wall times and their ratio, against the goal of a first
command in 0.3 s or less (issue 32: a new store used to run every migration through Alembic,
and loading Alembic and SQLAlchemy alone took half a second).

Recording: for each backend, a new store (a SQLite file in a scratch folder; a database on a private
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
import os
import resource
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson

from segue.model.conversation import Provider
from segue.store import AgentResult, head_revision, open_store
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


FIRST_COMMAND_GOAL_S = 0.3


def _segue() -> str:
    found = shutil.which("segue", path=str(Path(sys.executable).parent))
    if found is None:
        raise SystemExit("the segue command is not installed in this environment (uv sync)")
    return found


def _fresh_env(home: Path, url: str | None) -> dict[str, str]:
    """The environment of a user who has never run segue: a new HOME, none of segue's or the
    XDG folders' variables (but the database URL, for PostgreSQL; ``PYTHONPATH`` is kept, so
    that another checkout's ``src`` can be timed)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SEGUE_", "XDG_"))}
    env["HOME"] = str(home)
    if url is not None:
        env["SEGUE_DATABASE_URL"] = url
    return env


def _timed(argv: list[str], env: dict[str, str], cwd: Path) -> tuple[float, float]:
    """The wall time of the process ``argv``, and its CPU time (user and system: a busy
    machine lengthens it less than the wall time)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(argv, env=env, cwd=cwd, capture_output=True, check=False)
    elapsed = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{shlex.join(argv)} failed: {done.stderr.decode()[-2000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return elapsed, cpu


def first_command(
    backend: str, command: list[str], runs: int, new_url: Callable[[], str | None]
) -> dict[str, Any]:
    """Wall times of the first ``segue COMMAND`` on a machine (it makes the store) and of the
    second (the store exists), each a whole process, ``runs`` times."""
    argv = [_segue(), *command]
    firsts: list[float] = []
    seconds: list[float] = []
    cpu: dict[str, list[float]] = {"first": [], "second": []}
    for _ in range(runs):
        url = new_url()
        with tempfile.TemporaryDirectory(prefix="segue-bench-first-") as folder:
            home = Path(folder)
            env = _fresh_env(home, url)
            wall, used = _timed(argv, env, home)
            firsts.append(wall)
            cpu["first"].append(used)
            if url is None:  # the command made the store in the fresh HOME's data folder
                made = list(home.rglob("segue.db"))
                if len(made) != 1:
                    raise SystemExit(f"segue {shlex.join(command)} made no store in {home}")
                url = f"sqlite:///{made[0]}"
            with open_store(url, read_only=True) as store:
                if store.schema_revision() != head_revision():
                    raise SystemExit(f"{backend}: the first command left the store behind")
            wall, used = _timed(argv, env, home)
            seconds.append(wall)
            cpu["second"].append(used)
    return {
        "backend": backend,
        "command": shlex.join(["segue", *command]),
        "runs": runs,
        "first_best_s": min(firsts),
        "first_median_s": statistics.median(firsts),
        "second_best_s": min(seconds),
        "second_median_s": statistics.median(seconds),
        "ratio_best": min(firsts) / min(seconds),
        "ratio_median": statistics.median(firsts) / statistics.median(seconds),
        "goal_s": FIRST_COMMAND_GOAL_S,
        "goal_met": min(firsts) <= FIRST_COMMAND_GOAL_S,
        "first_cpu_best_s": min(cpu["first"]),
        "second_cpu_best_s": min(cpu["second"]),
        "first_s": firsts,
        "second_s": seconds,
        "first_cpu_s": cpu["first"],
        "second_cpu_s": cpu["second"],
    }


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
    parser.add_argument("--first-runs", type=int, default=10)
    parser.add_argument("--command", default="batches", help="the first command (segue …)")
    parser.add_argument("--first-only", action="store_true", help="time the first command only")
    parser.add_argument("--workers", type=int, default=8)
    parser.add_argument("--agents", type=int, default=200)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    command = shlex.split(args.command)
    firsts: list[dict[str, Any]] = []
    results: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="segue-bench-store-") as folder:
        scratch = Path(folder)
        firsts.append(first_command("sqlite", command, args.first_runs, lambda: None))
        if not args.first_only:
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
                firsts.append(
                    first_command("postgresql", command, args.first_runs, server.create_database)
                )
                if not args.first_only:
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
        document = {"first_command": firsts, "recording": results}
        sys.stdout.write(orjson.dumps(document, option=orjson.OPT_INDENT_2).decode() + "\n")
        return
    print(
        f"The first command on a machine ({firsts[0]['command']}, a whole process), then the "
        f"second; best and median of {args.first_runs}; goal: first command <= "
        f"{FIRST_COMMAND_GOAL_S} s:"
    )
    for f in firsts:
        print(
            f"  {f['backend']:<10} first {f['first_best_s']:.3f} s (median "
            f"{f['first_median_s']:.3f}), second {f['second_best_s']:.3f} s (median "
            f"{f['second_median_s']:.3f}): first/second {f['ratio_best']:.2f}x (median "
            f"{f['ratio_median']:.2f}x); goal {'met' if f['goal_met'] else 'NOT met'}; "
            f"CPU time, best: first {f['first_cpu_best_s']:.3f} s, second "
            f"{f['second_cpu_best_s']:.3f} s"
        )
    if results:
        print(f"{args.workers} processes recording at once, best of {args.runs}:")
    for r in results:
        print(
            f"  {r['backend']:<10} {r['records']} records in {r['wall_s']:.2f} s "
            f"({r['records_per_s']:.0f}/s); one process alone {r['solo_ms_per_record']:.2f} ms "
            "per record"
        )


if __name__ == "__main__":
    main()
