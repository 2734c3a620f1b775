"""``segue switch`` as a user runs it, timed as whole processes against a bare parse of what it
reads.

    uv run python benchmarks/switch.py [--mb 100] [--runs 3] [--json]

For each direction a session of about ``--mb`` MB is built from recorded fixture turns (copies
of the ``large`` fixture, see ``segue_testbed.generate``) in a scratch home, and then:

- **first switch**: ``segue switch SESSION --json`` with a store that has never seen it (the
  graph included: adopt, sync, decide, write, record), against one process that parses every
  line of the same file with ``orjson.loads`` and keeps nothing. Target: within 2.5×. Its peak
  resident memory (the process's own high-water mark) against the file's size: under 1.2×.
- **return after one new run**: the session the first switch wrote gets one more recorded turn
  (as if typed in its CLI), then ``segue switch`` of it back: a native fork of the first
  session carrying that run. Against one process parsing both files it reads (the session
  switched back, and the session forked, which it copies). Target: within 1.5×.

Each figure is the best of ``--runs`` fresh runs (the store and the files reset in between),
each run timed right after its reference, so that both see the machine as it is then.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import orjson

from segue.model.conversation import Provider
from segue_testbed.generate import append_turn, write_large_session

FIRST_TARGET = 2.5
RETURN_TARGET = 1.5
MEMORY_TARGET = 1.2

_BARE = """
import sys, orjson
loads = orjson.loads
for name in sys.argv[1:]:
    with open(name, "rb") as f:
        for line in f:
            loads(line)
"""


def _segue() -> str:
    found = shutil.which("segue", path=str(Path(sys.executable).parent))
    if found is None:
        raise SystemExit("the segue command is not installed in this environment (uv sync)")
    return found


def _measure(argv: list[str], env: dict[str, str]) -> tuple[float, int, bytes]:
    """Wall time, peak memory and stdout of ``argv``, run under a small helper process that
    reports its child's own peak (so earlier children do not count)."""
    helper = (
        "import os, resource, subprocess, sys, time\n"
        "t = time.perf_counter()\n"
        "p = subprocess.run(sys.argv[1:], capture_output=True)\n"
        "t = time.perf_counter() - t\n"
        "sys.stderr.buffer.write(p.stderr)\n"
        "sys.stdout.buffer.write(b'%f %d %d\\n' % (t, resource.getrusage("
        "resource.RUSAGE_CHILDREN).ru_maxrss, p.returncode) + p.stdout)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", helper, *argv], env=env, capture_output=True, check=False
    )
    head, _, out = done.stdout.partition(b"\n")
    elapsed_text, peak_text, code = head.split()
    if int(code):
        raise SystemExit(f"{' '.join(argv[:3])} failed ({int(code)}): {done.stderr[-2000:]!r}")
    return float(elapsed_text), int(peak_text) * 1024, out


COPILOT = Provider("copilot")
TARGET = {
    Provider.CODEX: Provider.CLAUDE,
    Provider.CLAUDE: Provider.CODEX,
    COPILOT: Provider.CLAUDE,
}


def _source_folder(home: Path, provider: Provider) -> Path:
    if provider is Provider.CODEX:
        return home / ".codex" / "sessions" / "2026" / "11" / "29"
    if provider is COPILOT:
        return home / ".copilot" / "session-state" / "5e60e5e0-0000-4000-8000-00000000b001"
    return home / ".claude" / "projects" / "-tmp-segue-benchmark"


def _env(home: Path) -> dict[str, str]:
    return {
        "HOME": str(home),
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "SEGUE_STATE_DIR": str(home / ".segue-state"),
        "SEGUE_DATA_DIR": str(home / ".segue-data"),
        "LANG": "C.UTF-8",
        "ANTHROPIC_MODEL": "claude-opus-5-5",  # the models the large fixtures ran, as this
    }  # user's CLIs are configured (else a return starts afresh: the model changed)


def _configure(home: Path) -> None:
    (home / ".codex").mkdir(parents=True, exist_ok=True)
    (home / ".codex" / "config.toml").write_text('model = "gpt-5.5"\n')


def _files(home: Path) -> set[Path]:
    return {p for p in home.rglob("*.jsonl") if ".segue-" not in str(p)}


def _reset(home: Path, keep: set[Path], store: Path) -> None:
    """The files as they were, and the store as a user has it: there, and without this
    session's thread."""
    for path in _files(home) - keep:
        path.unlink()
    for folder in (home / ".segue-state", home / ".segue-data"):
        shutil.rmtree(folder, ignore_errors=True)
    shutil.copytree(store, home / ".segue-data")


def bench(source: Provider, size_mb: float, runs: int) -> dict[str, Any]:
    target = TARGET[source]
    segue = _segue()
    with tempfile.TemporaryDirectory(prefix="segue-bench-switch-") as scratch:
        home = Path(scratch) / "home"
        folder = _source_folder(home, source)
        folder.mkdir(parents=True)
        path, copies = write_large_session(source, folder, size_mb)
        _configure(home)
        size = path.stat().st_size
        env = _env(home)
        pristine = _files(home)
        subprocess.run([segue, "thread", "list"], env=env, capture_output=True, check=True)
        store = Path(scratch) / "store"
        shutil.copytree(home / ".segue-data", store)  # a store that exists, without this thread

        bares: list[float] = []
        first: list[tuple[float, int]] = []
        doc: dict[str, Any] = {}
        for _ in range(runs):  # each run beside its reference, so both see the same machine
            _reset(home, pristine, store)
            bares.append(_measure([sys.executable, "-c", _BARE, str(path)], env)[0])
            elapsed, peak, out = _measure([segue, "switch", str(path), "--json"], env)
            first.append((elapsed, peak))
            doc = orjson.loads(out)
        bare = min(bares)
        first_s = min(t for t, _ in first)
        first_peak = min(p for _, p in first)

        # the state after the first switch, and one more run typed into the new session
        written = Path(doc["path"])
        append_turn(target, written)
        saved = Path(scratch) / "saved"
        shutil.copytree(home / ".segue-data", saved / "data")
        shutil.copytree(home / ".segue-state", saved / "state")
        shutil.copy2(written, saved / "written")
        after_first = _files(home)
        back_bares: list[float] = []
        back: list[tuple[float, int]] = []
        back_doc: dict[str, Any] = {}
        for _ in range(runs):
            for p in _files(home) - after_first:
                p.unlink()
            for name in ("data", "state"):
                shutil.rmtree(home / f".segue-{name}", ignore_errors=True)
                shutil.copytree(saved / name, home / f".segue-{name}")
            shutil.copy2(saved / "written", written)
            back_bares.append(
                _measure([sys.executable, "-c", _BARE, str(written), str(path)], env)[0]
            )
            elapsed, peak, out = _measure([segue, "switch", str(written), "--json"], env)
            back.append((elapsed, peak))
            back_doc = orjson.loads(out)
        back_s = min(t for t, _ in back)
        back_bare = min(back_bares)
        return {
            "direction": f"{source.value} → {target.value}",
            "file_mb": size / 1e6,
            "copies": copies,
            "bare_s": bare,
            "first_s": first_s,
            "first_ratio": first_s / bare,
            "first_peak_mb": first_peak / 1e6,
            "first_peak_x_file": first_peak / size,
            "first_strategy": doc["thread"]["strategy"],
            "first_plan": doc["summary"],
            "return_bare_s": back_bare,
            "return_s": back_s,
            "return_ratio": back_s / back_bare,
            "return_peak_mb": min(p for _, p in back) / 1e6,
            "return_strategy": back_doc["thread"]["strategy"],
            "return_covers": back_doc["thread"].get("covers")
            or (back_doc["thread"].get("handoff") or {}).get("covers"),
        }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--mb", type=float, default=100.0)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--provider", action="append", default=[], help="a source (repeatable)")
    args = parser.parse_args(argv)
    chosen = [Provider(p) for p in args.provider] or [Provider.CODEX, Provider.CLAUDE, COPILOT]
    results = [bench(p, args.mb, args.runs) for p in chosen]
    if args.json:
        sys.stdout.write(orjson.dumps(results, option=orjson.OPT_INDENT_2).decode() + "\n")
        return
    print(
        f"segue switch as whole processes (best of {args.runs}); targets: first switch within "
        f"{FIRST_TARGET}x a bare parse, peak memory under {MEMORY_TARGET}x the file, a return "
        f"within {RETURN_TARGET}x a bare parse of what it reads"
    )
    for r in results:
        ok = "ok" if r["first_ratio"] <= FIRST_TARGET else "SLOW"
        mem = "ok" if r["first_peak_x_file"] <= MEMORY_TARGET else "HIGH"
        back = "ok" if r["return_ratio"] <= RETURN_TARGET else "SLOW"
        print(f"  {r['direction']}  ({r['file_mb']:.1f} MB, {r['copies']} copies of the fixture)")
        print(
            f"    first switch  {r['first_s']:.3f} s vs bare parse {r['bare_s']:.3f} s: "
            f"{r['first_ratio']:.2f}x {ok}; peak {r['first_peak_mb']:.0f} MB = "
            f"{r['first_peak_x_file']:.2f}x the file {mem} ({r['first_strategy']}: "
            f"{r['first_plan']})"
        )
        print(
            f"    return        {r['return_s']:.3f} s vs bare parse {r['return_bare_s']:.3f} s: "
            f"{r['return_ratio']:.2f}x {back}; peak {r['return_peak_mb']:.0f} MB "
            f"({r['return_strategy']}, runs {r['return_covers']})"
        )


if __name__ == "__main__":
    main()
