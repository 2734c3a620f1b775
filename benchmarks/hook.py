"""The Claude Code ``Stop`` hook as Claude Code runs it after every turn, timed as whole
processes.

    uv run python benchmarks/hook.py [--files 200] [--runs 7] [--json]

A scratch home holds a copy of the recorded ``multi_turn`` Claude session, re-pointed at a
scratch git folder of ``--files`` files; segue has adopted its thread. Before each run the store
and the session are put back as they were after one more recorded turn (``append_turn``) and
one changed file, so every run does what a real end of turn does: ``segue hook claude`` with the
hook's input on stdin syncs the one new run and takes its exact checkpoint. Claude Code waits for
the hook, so this is time a user waits after each turn. Printed: the best and the median of
``--runs``, and a bare Python start for scale.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import orjson

if __package__ in (None, ""):  # run as a script: make ``benchmarks`` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.switch import _segue
from segue.model.conversation import Provider
from segue_testbed.fixtures import all_fixtures
from segue_testbed.generate import append_turn


def _git(repo: Path, *args: str) -> None:
    env = {**os.environ, "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@example.org",
           "GIT_COMMITTER_NAME": "b", "GIT_COMMITTER_EMAIL": "b@example.org"}  # fmt: skip
    subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True)


def _timed(argv: list[str], env: dict[str, str], stdin: bytes) -> float:
    start = time.perf_counter()
    done = subprocess.run(argv, env=env, input=stdin, capture_output=True, check=False)
    elapsed = time.perf_counter() - start
    if done.returncode or done.stdout:
        raise SystemExit(f"{argv[:3]}: exit {done.returncode}, stdout {done.stdout[:200]!r}")
    return elapsed


def bench(files: int, runs: int) -> dict[str, Any]:
    fixture = {f.name: f for f in all_fixtures()}["claude-multi_turn"]
    segue = _segue()
    with tempfile.TemporaryDirectory(prefix="segue-bench-hook-") as scratch:
        root = Path(scratch)
        home, repo = root / "home", root / "project"
        shutil.copytree(fixture.home, home)
        transcript = home / fixture.transcript.relative_to(fixture.home)
        old_cwd = orjson.dumps(fixture.spec.get("cwd") or "/tmp/segue-fixtures/claude-multi_turn")
        transcript.write_bytes(transcript.read_bytes().replace(old_cwd, orjson.dumps(str(repo))))
        repo.mkdir()
        for n in range(files):
            folder = repo / f"d{n % 20:02d}"
            folder.mkdir(exist_ok=True)
            (folder / f"f{n}.txt").write_text("".join(f"line {i} of {n}\n" for i in range(20)))
        _git(repo, "init", "-q", "-b", "main")
        _git(repo, "add", "-A")
        _git(repo, "commit", "-q", "-m", "start")
        env = {
            "HOME": str(home),
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "SEGUE_STATE_DIR": str(root / "state"),
            "SEGUE_DATA_DIR": str(root / "data"),
            "LANG": "C.UTF-8",
        }
        if "PYTHONPATH" in os.environ:  # (to time another checkout's code: PYTHONPATH=…/src)
            env["PYTHONPATH"] = os.environ["PYTHONPATH"]
        subprocess.run([segue, "thread", "adopt", str(transcript)], env=env, check=True,
                       capture_output=True)  # fmt: skip
        append_turn(Provider.CLAUDE, transcript)
        (repo / "d00" / "f0.txt").write_text("changed\n")
        saved = root / "saved"
        shutil.copytree(root / "data", saved / "data")
        shutil.copy2(transcript, saved / "transcript")
        hook_input = orjson.dumps({
            "session_id": transcript.stem, "transcript_path": str(transcript),
            "cwd": str(repo), "hook_event_name": "Stop",
        })  # fmt: skip
        times: list[float] = []
        starts: list[float] = []
        for _ in range(runs):
            shutil.rmtree(root / "data")
            shutil.copytree(saved / "data", root / "data")
            shutil.copy2(saved / "transcript", transcript)
            refs = subprocess.run(
                ["git", "for-each-ref", "--format=%(refname)", "refs/segue/"],
                cwd=repo,
                check=True,
                capture_output=True,
                text=True,
            ).stdout
            for ref in refs.split():
                _git(repo, "update-ref", "-d", ref)
            starts.append(_timed([sys.executable, "-c", "pass"], env, b""))
            times.append(_timed([segue, "hook", "claude"], env, hook_input))
        listed = subprocess.run([segue, "checkpoints", str(transcript), "--json"], env=env,
                                check=True, capture_output=True).stdout  # fmt: skip
        kinds = [c["kind"] for c in orjson.loads(listed)["checkpoints"]]
        return {
            "files": files,
            "runs": runs,
            "best_s": min(times),
            "median_s": statistics.median(times),
            "python_start_s": min(starts),
            "checkpoints": kinds,
        }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--files", type=int, default=200)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    if args.runs < 1 or args.files < 1:
        parser.error("--runs and --files take a number of at least 1")
    result = bench(args.files, args.runs)
    if args.json:
        sys.stdout.write(orjson.dumps(result, option=orjson.OPT_INDENT_2).decode() + "\n")
        return
    print(
        f"segue hook claude (Stop), whole processes, {result['runs']} runs, a git folder of "
        f"{result['files']} files with one changed: best {result['best_s']:.3f} s, median "
        f"{result['median_s']:.3f} s (a bare Python start: {result['python_start_s']:.3f} s); "
        f"checkpoints after the last run: {', '.join(result['checkpoints'])}"
    )


if __name__ == "__main__":
    main()
