"""A fleet switch of ten realistic sessions against ten single switches one after another.

    uv run python benchmarks/fleet.py [--runs 3]

Ten Codex sessions of 1 to 20 MB (copies of the recorded ``large`` fixture's turns, each one
valid conversation) in a scratch home, all parked by nothing in particular and taken with
``--all``. Timed, wall clock:

1. ``segue switch --from codex --all --yes --arrival-compact off`` (the command, start-up
   included: what a user waits for);
2. ten ``segue switch SESSION`` commands run one after another;
3. the same two in-process (``run_fleet`` vs ten ``switch_session`` calls).

Target (issue 9): the batch under 5 s on a 2-core machine.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make ``benchmarks`` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from segue.fleet.batch import plan_fleet, run_fleet
from segue.model.conversation import Provider
from segue.providers.sessions import read_session
from segue.switch import switch_session
from segue_testbed.generate import write_large_session

SIZES_MB = (1, 2, 3, 5, 8, 10, 12, 15, 18, 20)
TARGET_SECONDS = 5.0


def _home(root: Path) -> tuple[dict[str, str], list[str]]:
    home = root / "home"
    folder = home / ".codex" / "sessions" / "2026" / "11" / "29"
    ids: list[str] = []
    for n, size in enumerate(SIZES_MB):
        sub = folder / f"{n:02d}"
        sub.mkdir(parents=True)
        written, _ = write_large_session(Provider.CODEX, sub, size)
        path = _renamed(written, n)
        conversation = read_session(path)
        assert conversation.meta.cwd is not None
        Path(conversation.meta.cwd).mkdir(parents=True, exist_ok=True)
        ids.append(conversation.meta.id)
    env = {
        "HOME": str(home),
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "SEGUE_STATE_DIR": str(root / "state"),
        "SEGUE_DATA_DIR": str(root / "data"),
    }
    return env, ids


def _renamed(path: Path, n: int) -> Path:
    """The copy under a session id of its own (file name and session_meta), as ten agents have."""
    old = path.name.removesuffix(".jsonl")[-36:]
    new = old[:-2] + f"{n:02d}"
    data = path.read_bytes()
    first, rest = data.split(b"\n", 1)
    target = path.with_name(path.name.replace(old, new))
    target.write_bytes(first.replace(old.encode(), new.encode()) + b"\n" + rest)
    path.unlink()
    return target


def _same_ids(ids: list[str]) -> bool:
    return len(set(ids)) == len(ids)


def _time(fn: object) -> float:
    assert callable(fn)
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args(argv)
    segue = [sys.executable, "-m", "segue"]
    rows: dict[str, list[float]] = {}
    for _ in range(args.runs):
        with tempfile.TemporaryDirectory(prefix="segue-fleet-bench-") as tmp:
            env, ids = _home(Path(tmp))
            assert _same_ids(ids), ids
            total_mb = sum(p.stat().st_size for p in Path(tmp).rglob("rollout-*.jsonl")) / 1e6

            def batch_cli(env: dict[str, str] = env) -> None:
                subprocess.run(
                    [
                        *segue,
                        "switch",
                        "--from",
                        "codex",
                        "--all",
                        "--yes",
                        "--json",
                        "--arrival-compact",
                        "off",
                    ],
                    env=env,
                    check=True,
                    capture_output=True,
                )

            def singles_cli(env: dict[str, str] = env, ids: list[str] = ids) -> None:
                for sid in ids:
                    subprocess.run(
                        [*segue, "switch", sid, "--to", "claude", "--json"],
                        env=env,
                        check=True,
                        capture_output=True,
                    )

            def batch_lib(env: dict[str, str] = env, ids: list[str] = ids) -> None:
                plan = plan_fleet(Provider.CODEX, all_sessions=True, env=env, agents=[])
                assert len(plan.to_switch) == len(ids)
                run_fleet(plan, env=env, record=False)

            def singles_lib(env: dict[str, str] = env, ids: list[str] = ids) -> None:
                for sid in ids:
                    switch_session(sid, Provider.CLAUDE, env=env)

            for name, fn in (
                ("batch, command", batch_cli),
                ("10 singles, commands", singles_cli),
                ("batch, in-process", batch_lib),
                ("10 singles, in-process", singles_lib),
            ):
                rows.setdefault(name, []).append(_time(fn))
    print(f"Fleet switch of {len(SIZES_MB)} Codex sessions ({total_mb:.0f} MB in all) to Claude,")
    print(f"best of {args.runs} (target: the batch under {TARGET_SECONDS:g} s)")
    best = {name: min(times) for name, times in rows.items()}
    for name, seconds in best.items():
        print(f"  {name:24} {seconds:6.2f} s")
    verdict = "ok" if best["batch, command"] < TARGET_SECONDS else "SLOW"
    print(
        f"  batch / singles: {best['batch, command'] / best['10 singles, commands']:.2f}x "
        f"(commands), {best['batch, in-process'] / best['10 singles, in-process']:.2f}x "
        f"(in-process); batch command {verdict}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
