"""Reading and listing speed, measured on sessions built from the recorded fixtures.

    uv run python benchmarks/read.py [--mb 100] [--sessions 1000] [--runs 3] [--json] [--profile]

1. Read throughput: a session of about ``--mb`` MB per provider (copies of the ``large``
   fixture, one valid conversation), read by ``segue.providers.sessions.read_session`` against
   the floor of parsing every line with ``orjson.loads``; plus the reader's peak memory,
   measured in a subprocess.
2. Listing: ``--sessions`` sessions (half Claude, half Codex, copies of every fixture) listed by
   ``segue.providers.sessions.list_sessions`` and by the installed ``segue sessions --all --json``.
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import io
import os
import pstats
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import orjson

if __package__ in (None, ""):  # run as a script: make ``benchmarks`` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from segue.model.conversation import Conversation, Provider
from segue.providers.sessions import list_sessions, read_session
from segue_testbed.floor import bare_parse, bare_parse_buffered, best_of
from segue_testbed.generate import (
    MB,
    fixture,
    write_home,
    write_large_session,
)
from segue_testbed.testbed import repo_root

TARGET_RATIO = 3.0  # the reader should take at most this many times the bare parse

# Runs in a fresh interpreter: the reader's peak resident memory, apart from the interpreter's.
# The peak is the process's own high-water mark (``VmHWM``): ``ru_maxrss`` would not do, as
# Linux carries the parent's resident size over a fork and exec into the child's figure.
_MEMORY_PROBE = """
import json, resource, sys
from pathlib import Path

def peak_kb():
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss

from segue.providers.sessions import read_session
import segue.formats.claude.reader, segue.formats.codex.reader
before = peak_kb()
conversation = read_session(Path(sys.argv[1]))
after = peak_kb()
print(json.dumps({"before_kb": before, "after_kb": after, "items": len(conversation.items)}))
"""


def memory_in_subprocess(path: Path) -> dict[str, Any]:
    """Peak resident memory (kB) of a fresh interpreter reading ``path``: once its imports are
    done, and after the read."""
    done = subprocess.run(
        [sys.executable, "-c", _MEMORY_PROBE, str(path)],
        check=True,
        capture_output=True,
        text=True,
    )
    probe: dict[str, Any] = orjson.loads(done.stdout)
    return probe


def profile_read(path: Path, top: int = 15) -> str:
    profiler = cProfile.Profile()
    profiler.enable()
    read_session(path)
    profiler.disable()
    out = io.StringIO()
    stats = pstats.Stats(profiler, stream=out)
    stats.sort_stats("tottime").print_stats(top)
    return out.getvalue()


def _shape(items: list[Any]) -> list[str]:
    return [type(item).__name__ for item in items]


def _expected_shape(provider: Provider, single: Conversation, copies: int) -> list[str]:
    shape = _shape(single.items)
    if provider is Provider.CODEX:  # the session_meta line is not repeated
        return shape[:1] + shape[1:] * copies
    return shape * copies


def bench_read(provider: Provider, size_mb: float, runs: int, profile: bool) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix=f"segue-bench-{provider.value}-") as tmp:
        build_start = time.perf_counter()
        path, copies = write_large_session(provider, Path(tmp), size_mb)
        build_s = time.perf_counter() - build_start
        size = path.stat().st_size
        lines = bare_parse(path)  # also warms the page cache for both timings

        # what the result looks like: one conversation, ``copies`` times the fixture's
        single = read_session(fixture(provider, "large").transcript)
        conversation = read_session(path)
        check = {
            "items": len(conversation.items),
            "items_per_copy": len(single.items),
            "notes": len(conversation.notes),
            "fixture_notes": len(single.notes),
            "skipped": len(conversation.skipped),
            # every copy reads back as the fixture does, in order (a broken link would drop
            # copies off the active chain)
            "same_shape": _shape(conversation.items) == _expected_shape(provider, single, copies),
        }
        del conversation, single
        gc.collect()

        bare_s = best_of(runs, lambda: bare_parse(path))
        buffered_s = best_of(runs, lambda: bare_parse_buffered(path))
        reader_s = best_of(runs, lambda: read_session(path))
        memory = memory_in_subprocess(path)
        report: dict[str, Any] = {
            "provider": provider.value,
            "file_mb": size / MB,
            "lines": lines,
            "copies_of_fixture": copies,
            "build_s": build_s,
            "bare_parse_s": bare_s,
            "reader_s": reader_s,
            "bare_parse_mb_s": size / MB / bare_s,
            "reader_mb_s": size / MB / reader_s,
            "ratio": reader_s / bare_s,
            "bare_buffered_s": buffered_s,
            "ratio_buffered": reader_s / buffered_s,
            "target_ratio": TARGET_RATIO,
            "within_target": reader_s / bare_s <= TARGET_RATIO,
            "peak_rss_mb": memory["after_kb"] * 1024 / MB,
            "baseline_rss_mb": memory["before_kb"] * 1024 / MB,
            "reader_rss_mb": (memory["after_kb"] - memory["before_kb"]) * 1024 / MB,
            "reader_rss_x_file": (memory["after_kb"] - memory["before_kb"]) * 1024 / size,
            "peak_rss_x_file": memory["after_kb"] * 1024 / size,
            "check": check,
        }
        if profile:
            report["profile"] = profile_read(path)
        return report


def _segue_cli() -> str:
    installed = repo_root() / ".venv" / "bin" / "segue"
    if installed.exists():
        return str(installed)
    found = shutil.which("segue")
    if found is None:
        raise SystemExit("segue is not installed (run `uv sync`)")
    return found


def _time_cli(home: Path) -> tuple[float, int]:
    env = {k: v for k, v in os.environ.items() if k not in ("CLAUDE_CONFIG_DIR", "CODEX_HOME")}
    env["HOME"] = str(home)
    start = time.perf_counter()
    done = subprocess.run(
        [_segue_cli(), "sessions", "--all", "--json"],
        check=True,
        capture_output=True,
        env=env,
        cwd=home,
    )
    elapsed = time.perf_counter() - start
    return elapsed, len(orjson.loads(done.stdout)["sessions"])


def bench_listing(sessions: int, runs: int) -> dict[str, Any]:
    per_provider = sessions // 2
    with tempfile.TemporaryDirectory(prefix="segue-bench-home-") as tmp:
        home = Path(tmp)
        written = write_home(home, per_provider)
        total_bytes = sum(p.stat().st_size for p in home.rglob("*.jsonl"))
        env = {"HOME": str(home)}

        start = time.perf_counter()
        listing = list_sessions(None, None, env=env)
        cold_s = time.perf_counter() - start
        listed = len(listing.sessions)
        problems = len(listing.problems)
        by_provider = {
            p.value: sum(1 for s in listing.sessions if s.provider is p)
            for p in (Provider.CLAUDE, Provider.CODEX)
        }
        del listing
        warm_s = best_of(runs, lambda: list_sessions(None, None, env=env))

        empty = home / "empty-home"
        empty.mkdir()
        cli_empty_s, _ = _time_cli(empty)
        cli_s, cli_listed = _time_cli(home)
        return {
            "sessions_written": written["sessions"],
            "files_written": written["files"],
            "total_mb": total_bytes / MB,
            "listed": listed,
            "listed_by_provider": by_provider,
            "problems": problems,
            "cold_s": cold_s,
            "warm_s": warm_s,
            "cold_ms_per_session": cold_s * 1000 / max(listed, 1),
            "warm_ms_per_session": warm_s * 1000 / max(listed, 1),
            "cli_s": cli_s,
            "cli_listed": cli_listed,
            "cli_empty_home_s": cli_empty_s,
        }


def format_report(results: dict[str, Any]) -> str:
    out: list[str] = []
    reads = results.get("read", [])
    if reads:
        out.append(
            f"Read throughput (best of {results['runs']}; target: reader within "
            f"{TARGET_RATIO:g}x the bare orjson parse)"
        )
        out.append(
            f"  {'provider':<8} {'file MB':>8} {'lines':>7} {'bare s':>7} {'bare MB/s':>10} "
            f"{'reader s':>9} {'reader MB/s':>12} {'ratio':>6}  {'peak RSS (x file)':>18}"
        )
        for r in reads:
            verdict = "ok" if r["within_target"] else "OVER"
            out.append(
                f"  {r['provider']:<8} {r['file_mb']:>8.1f} {r['lines']:>7} "
                f"{r['bare_parse_s']:>7.3f} {r['bare_parse_mb_s']:>10.0f} "
                f"{r['reader_s']:>9.3f} {r['reader_mb_s']:>12.0f} "
                f"{r['ratio']:>5.2f}x {verdict:<4} "
                f"{r['reader_rss_mb']:>6.0f} MB ({r['reader_rss_x_file']:.1f}x)"
            )
        for r in reads:
            out.append(
                f"  {r['provider']}: against the 1 MiB-buffered parse the readers use "
                f"({r['bare_buffered_s']:.3f} s): {r['ratio_buffered']:.2f}x"
            )
        for r in reads:
            c = r["check"]
            out.append(
                f"  {r['provider']}: {r['copies_of_fixture']} copies of the large fixture -> "
                f"{c['items']} items ({c['items_per_copy']} per copy), "
                f"{c['notes']} notes (fixture alone: {c['fixture_notes']}), "
                f"{c['skipped']} skipped lines, "
                f"{'each copy reads as the fixture' if c['same_shape'] else 'SHAPE DIFFERS'}; "
                f"peak RSS {r['peak_rss_mb']:.0f} MB incl. "
                f"{r['baseline_rss_mb']:.0f} MB interpreter; built in {r['build_s']:.1f} s"
            )
    listing = results.get("listing")
    if listing:
        lp = listing["listed_by_provider"]
        out.append("")
        out.append(
            f"Listing {listing['sessions_written']} sessions "
            f"({listing['files_written']} files, {listing['total_mb']:.0f} MB)"
        )
        out.append(
            f"  list_sessions: {listing['listed']} listed "
            f"({lp.get('claude', 0)} claude, {lp.get('codex', 0)} codex), "
            f"{listing['problems']} problems"
        )
        out.append(
            f"  first call     {listing['cold_s']:7.3f} s  "
            f"{listing['cold_ms_per_session']:6.2f} ms/session"
        )
        out.append(
            f"  warm (best {results['runs']}) {listing['warm_s']:7.3f} s  "
            f"{listing['warm_ms_per_session']:6.2f} ms/session"
        )
        out.append(
            f"  segue sessions --all --json: {listing['cli_s']:.3f} s wall "
            f"({listing['cli_listed']} listed; "
            f"{listing['cli_empty_home_s']:.3f} s on an empty home)"
        )
    for r in reads:
        if "profile" in r:
            out.append("")
            out.append(f"Profile of read_session ({r['provider']}), by own time:")
            out.append(r["profile"].rstrip())
    out.append("")
    out.append(f"Total benchmark time: {results['total_s']:.1f} s")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--mb", type=float, default=100.0, help="size of each large session")
    parser.add_argument("--sessions", type=int, default=1000, help="sessions to list (total)")
    parser.add_argument("--runs", type=int, default=3, help="timed runs; the best is kept")
    parser.add_argument("--provider", choices=["claude", "codex"], help="only this provider's read")
    parser.add_argument("--skip-read", action="store_true")
    parser.add_argument("--skip-listing", action="store_true")
    parser.add_argument("--profile", action="store_true", help="cProfile one read per provider")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args(argv)

    start = time.perf_counter()
    results: dict[str, Any] = {"runs": args.runs, "mb": args.mb, "read": []}
    if not args.skip_read:
        providers = (
            [Provider(args.provider)] if args.provider else [Provider.CLAUDE, Provider.CODEX]
        )
        for provider in providers:
            results["read"].append(bench_read(provider, args.mb, args.runs, args.profile))
    if not args.skip_listing:
        results["listing"] = bench_listing(args.sessions, args.runs)
    results["total_s"] = time.perf_counter() - start
    if args.json:
        sys.stdout.buffer.write(orjson.dumps(results, option=orjson.OPT_INDENT_2) + b"\n")
    else:
        print(format_report(results))


if __name__ == "__main__":
    main()
