"""End-to-end switch time and memory on a large session, against the bare parse of the same file.

    uv run python benchmarks/switch.py [--mb 100] [--runs 3] [--json]

For each direction, a session of about ``--mb`` MB is built from recorded fixture turns (copies
of the ``large`` fixture, see ``segue_testbed.generate``) in a scratch home, and switched to the
other provider with the target's default profile: read, plan (which shrinks it to the target's
budget), write. Printed: the file size, the switch time (best of ``--runs``) and its MB/s, the
bare ``orjson.loads``-per-line pass over the same file (a plain ``for line in file`` loop, and the
stricter 1 MiB-buffered loop segue's readers use), their ratio (target: within 3×), and the
switch's peak resident memory in a fresh interpreter as a multiple of the file size (target:
under 2×).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import orjson

from segue.conversation import Provider
from segue.secrets import scan
from segue.sessions import read_session
from segue.switch import switch_session
from segue.transforms.redact import item_texts
from segue_testbed.floor import bare_parse, bare_parse_buffered, best_of
from segue_testbed.generate import write_large_session

TARGET_RATIO = 3.0
TARGET_MEMORY = 2.0

_MEMORY_PROBE = """
import json, sys
from pathlib import Path

def peak_kb():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return 0

from segue_testbed.floor import bare_parse, bare_parse_buffered, best_of
from segue.conversation import Provider
from segue.switch import switch_session
import segue.formats.claude.reader, segue.formats.codex.reader
import segue.formats.claude.writer, segue.formats.codex.writer
before = peak_kb()
result = switch_session(sys.argv[1], Provider(sys.argv[2]), env={"HOME": sys.argv[3],
                        "SEGUE_STATE_DIR": sys.argv[3] + "/.segue"})
after = peak_kb()
print(json.dumps({"before_kb": before, "after_kb": after, "strategy": result.plan.label}))
"""


def source_folder(home: Path, provider: Provider) -> Path:
    if provider is Provider.CODEX:
        return home / ".codex" / "sessions" / "2026" / "11" / "29"
    return home / ".claude" / "projects" / "-tmp-segue-benchmark"


def bench(source: Provider, size_mb: float, runs: int) -> dict[str, Any]:
    target = Provider.CLAUDE if source is Provider.CODEX else Provider.CODEX
    with tempfile.TemporaryDirectory(prefix="segue-bench-switch-") as scratch:
        home = Path(scratch)
        folder = source_folder(home, source)
        folder.mkdir(parents=True)
        path, copies = write_large_session(source, folder, size_mb)
        size = path.stat().st_size
        env = {"HOME": str(home), "SEGUE_STATE_DIR": str(home / ".segue")}
        last: dict[str, Any] = {}

        def run_switch() -> None:
            result = switch_session(str(path), target, env=env)
            last["plan"] = result.plan

        switch_s = best_of(runs, run_switch)
        bare_s = best_of(runs, lambda: bare_parse(path))
        buffered_s = best_of(runs, lambda: bare_parse_buffered(path))
        probe = subprocess.run(
            [sys.executable, "-c", _MEMORY_PROBE, str(path), target.value, str(home)],
            check=True,
            capture_output=True,
            text=True,
        )
        memory = orjson.loads(probe.stdout)
        plan = last["plan"]
        # detect-secrets' speed: on what the plan carries (what a switch scans) and, for scale,
        # on every text of the whole session
        carried = [t for item in plan.items for t in item_texts(item)]
        every = [t for item in read_session(path).items for t in item_texts(item)]
        scan_plan_s = best_of(runs, lambda: scan(carried))
        scan_all_s = best_of(1, lambda: scan(every))
        peak = (memory["after_kb"] - memory["before_kb"]) * 1024
        return {
            "direction": f"{source.value} → {target.value}",
            "file_mb": size / 1e6,
            "copies": copies,
            "switch_s": switch_s,
            "switch_mb_s": size / 1e6 / switch_s,
            "bare_s": bare_s,
            "bare_mb_s": size / 1e6 / bare_s,
            "ratio": switch_s / bare_s,
            "bare_buffered_s": buffered_s,
            "ratio_buffered": switch_s / buffered_s,
            "peak_mb": peak / 1e6,
            "peak_x_file": peak / size,
            "strategy": plan.label.value,
            "summary": plan.loss_line,
            "scan_plan_chars": sum(map(len, carried)),
            "scan_plan_s": scan_plan_s,
            "scan_all_chars": sum(map(len, every)),
            "scan_all_s": scan_all_s,
        }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mb", type=float, default=100.0)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    results = [bench(p, args.mb, args.runs) for p in (Provider.CODEX, Provider.CLAUDE)]
    if args.json:
        sys.stdout.write(orjson.dumps(results, option=orjson.OPT_INDENT_2).decode() + "\n")
        return
    print(
        f"End-to-end switch (best of {args.runs}; targets: within {TARGET_RATIO:.0f}x the bare "
        f"orjson parse, peak memory under {TARGET_MEMORY:.0f}x the file)"
    )
    print(
        f"  {'direction':<16} {'file MB':>8} {'switch s':>9} {'MB/s':>6} {'bare s':>7} "
        f"{'ratio':>7}      {'peak MB':>7} {'x file':>7}"
    )
    for r in results:
        ok_ratio = "ok" if r["ratio"] <= TARGET_RATIO else "SLOW"
        ok_mem = "ok" if r["peak_x_file"] < TARGET_MEMORY else "HIGH"
        print(
            f"  {r['direction']:<16} {r['file_mb']:>8.1f} {r['switch_s']:>9.3f} "
            f"{r['switch_mb_s']:>6.0f} {r['bare_s']:>7.3f} {r['ratio']:>5.2f}x {ok_ratio:<4}"
            f"{r['peak_mb']:>6.0f} {r['peak_x_file']:>5.2f}x {ok_mem}"
        )
        print(
            f"    against the 1 MiB-buffered parse segue's readers use "
            f"({r['bare_buffered_s']:.3f} s): {r['ratio_buffered']:.2f}x"
        )
        print(f"    {r['copies']} copies of the large fixture; plan {r['summary']}")
        print(
            f"    secrets scan (inside the switch): the plan's {r['scan_plan_chars'] / 1e6:.2f}M "
            f"chars in {r['scan_plan_s']:.3f} s; for scale, every text of the session "
            f"({r['scan_all_chars'] / 1e6:.1f}M chars) in {r['scan_all_s']:.2f} s "
            f"({r['scan_all_chars'] / 1e6 / r['scan_all_s']:.0f}M chars/s)"
        )


if __name__ == "__main__":
    main()
