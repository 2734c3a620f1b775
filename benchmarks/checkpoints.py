"""A checkpoint's capture against ``git status`` on the same tree.

    uv run python benchmarks/checkpoints.py [--files 10000] [--changed 100] [--runs 7] [--json]

A scratch git repository of ``--files`` files (in 100 folders, 5 to 80 lines each) is committed;
then, before each timed round, ``--changed`` files change: 80% modified, 10% deleted, 10% new.
Timed, each as a whole process, best of ``--runs`` rounds:

- ``git status`` (the user's own index), the reference;
- **capture**: one process that snapshots the folder as segue does after a run
  (:func:`segue.workspace.locate` and :func:`segue.workspace.capture`: segue's index, the
  changed files hashed, the tree, the commit, the ref, and the +/- of each changed file).
  Python's start and segue's imports are in it; the capture inside that process (from
  ``locate`` to the snapshot's return) is printed first, against the goal: within 2.5×
  ``git status``. Nothing is left running when a capture returns;
- **imports alone**: a process that only imports what the capture imports, Python's part of
  the whole process's time before any work.

The first capture of a repository (segue's index seeded from a copy of the user's) is timed
apart: it is paid once.
"""

from __future__ import annotations

import argparse
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import orjson

GOAL = 2.5

_IMPORTS = "import segue.workspace.snapshot"
_CAPTURE = """
import os, sys, time
from segue.workspace import capture, locate
t0 = time.perf_counter()
ws = locate(sys.argv[1], os.environ)
snap = capture(ws, sys.argv[2], parent=sys.argv[3] or None, message="bench")
print(snap.commit, len(snap.changes), time.perf_counter() - t0)
"""


def _git(repo: Path, *args: str) -> str:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "b",
        "GIT_AUTHOR_EMAIL": "b@example.org",
        "GIT_COMMITTER_NAME": "b",
        "GIT_COMMITTER_EMAIL": "b@example.org",
    }
    return subprocess.run(
        ["git", *args], cwd=repo, env=env, check=True, capture_output=True, text=True
    ).stdout


def build(repo: Path, files: int, rng: random.Random) -> list[Path]:
    repo.mkdir(parents=True)
    _git(repo, "init", "-q", "-b", "main")
    paths = []
    for i in range(files):
        folder = repo / "src" / f"d{i % 100}"
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"f{i}.py"
        path.write_text("".join(f"value_{i}_{n} = {n}\n" for n in range(rng.randint(5, 80))))
        paths.append(path)
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "start")
    _git(repo, "status")  # the user's index refreshed, as after any git command of theirs
    return paths


def change(repo: Path, paths: list[Path], changed: int, rng: random.Random, round_: int) -> None:
    present = [p for p in paths if p.exists()]
    modified = rng.sample(present, changed * 8 // 10)
    for path in modified:
        with path.open("a") as f:
            f.write(f"changed_in_round_{round_} = True\n")
    for path in rng.sample([p for p in present if p not in modified], changed // 10):
        path.unlink()
    for n in range(changed - len(modified) - changed // 10):
        (repo / f"new_{round_}_{n}.txt").write_text(f"new in round {round_}\n" * (n + 1))


def _time(argv: list[str], env: dict[str, str], cwd: Path) -> tuple[float, str]:
    start = time.perf_counter()
    done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, check=True)
    return time.perf_counter() - start, done.stdout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--changed", type=int, default=100)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    rng = random.Random(16)
    with tempfile.TemporaryDirectory(prefix="segue-bench-checkpoints-") as scratch:
        root = Path(scratch)
        repo = root / "repo"
        paths = build(repo, args.files, rng)
        env = {**os.environ, "SEGUE_DATA_DIR": str(root / "data"), "HOME": str(root)}
        first, out = _time(
            [sys.executable, "-c", _CAPTURE, str(repo), "refs/segue/checkpoints/bench/0", ""],
            env,
            repo,
        )
        parent = out.split()[0]
        status: list[float] = []
        capture: list[float] = []
        inner: list[float] = []
        imports = [_time([sys.executable, "-c", _IMPORTS], env, repo)[0] for _ in range(args.runs)]
        for round_ in range(1, args.runs + 1):
            change(repo, paths, args.changed, rng, round_)
            status.append(_time(["git", "status"], env, repo)[0])
            ref = f"refs/segue/checkpoints/bench/{round_}"
            seconds, out = _time(
                [sys.executable, "-c", _CAPTURE, str(repo), ref, parent], env, repo
            )
            commit, changes, in_process = out.split()
            assert int(changes) >= args.changed, out
            capture.append(seconds)
            inner.append(float(in_process))
            parent = commit
            status.append(_time(["git", "status"], env, repo)[0])
    result: dict[str, Any] = {
        "files": args.files,
        "changed": args.changed,
        "git_status_s": min(status),
        "capture_s": min(capture),
        "capture_in_process_s": min(inner),
        "first_capture_s": first,
        "imports_alone_s": min(imports),
        "ratio": min(capture) / min(status),
        "ratio_in_process": min(inner) / min(status),
        "goal": GOAL,
    }
    if args.json:
        print(orjson.dumps(result, option=orjson.OPT_INDENT_2).decode())
        return
    print(f"{args.files:,} files, {args.changed} changed a round, best of {args.runs}")
    print(f"  git status           {result['git_status_s'] * 1000:7.1f} ms")
    print(
        f"  capture (in process) {result['capture_in_process_s'] * 1000:7.1f} ms  "
        f"{result['ratio_in_process']:.2f}x git status (goal <= {GOAL}x)"
    )
    print(
        f"  capture (a process)  {result['capture_s'] * 1000:7.1f} ms  "
        f"{result['ratio']:.2f}x, Python's start and imports in it:"
    )
    print(
        f"  imports alone        {result['imports_alone_s'] * 1000:7.1f} ms  "
        f"{result['imports_alone_s'] / result['git_status_s']:.2f}x"
    )
    print(f"  first capture        {first * 1000:7.1f} ms  (once per repository)")


if __name__ == "__main__":
    main()
