"""``segue tui``'s start-up: from the command to the first painted fleet screen, over 1,000
sessions, as a whole process on a real terminal (a pty of 120×36).

    uv run python benchmarks/tui.py [--sessions 1000] [--runs 5] [--json]

A scratch home gets ``--sessions`` recorded sessions (copies of both CLIs' ``multi_turn``
fixtures, half each) and 20 copies of a Codex session a usage limit parked (until 2030). Each run
starts ``segue tui --offline`` in a new pty and reads what it draws until:

* **painted**: the fleet screen is on the terminal (its title and its key bar);
* **rows**: the table holds the parked sessions (the status line counts them), which needs
  the usage, the agents scan and the listing of every session: through the listing cache the
  run before left (``listing-cache.json``), and **cold**, with that cache removed;

then it presses ``q``. The floor is a Textual app that paints one line and nothing else, started
the same way: what Textual itself costs on this machine. Goal: painted ≤ 0.5 s.
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import os
import pty
import re
import select
import statistics
import struct
import sys
import tempfile
import termios
import time
from pathlib import Path

import orjson

from benchmarks.watch import _copies, fleet_home

GOAL_S = 0.5
ANSI = re.compile(rb"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b[()][0-9A-Za-z]|\x1b[=>]")
FLOOR = """
from textual.app import App
from textual.widgets import Static

class Floor(App[None]):
    BINDINGS = [("q", "quit", "Quit")]

    def compose(self):
        yield Static("segue — the fleet")
        yield Static("/ Filter")

Floor().run()
"""


def _screen(data: bytes) -> str:
    return ANSI.sub(b"", data).decode("utf-8", "replace")


def _run(argv: list[str], env: dict[str, str], marks: dict[str, str]) -> dict[str, float]:
    """Seconds from the start until each mark's text is on the screen."""
    start = time.perf_counter()
    pid, fd = pty.fork()
    if pid == 0:  # the child: the command on the pty
        os.execve(argv[0], argv, env)
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 36, 120, 0, 0))
    seen: dict[str, float] = {}
    data = b""
    deadline = start + 60
    try:
        while len(seen) < len(marks) and time.perf_counter() < deadline:
            ready, _, _ = select.select([fd], [], [], 0.05)
            if not ready:
                continue
            try:
                chunk = os.read(fd, 65536)
            except OSError:
                break
            if not chunk:
                break
            data += chunk
            if b"\x1b[6n" in chunk or b"\x1b[c" in chunk:  # the app asks where the cursor is
                os.write(fd, b"\x1b[1;1R")
            shown = _screen(data)
            for name, text in marks.items():
                if name not in seen and all(part in shown for part in text.split("|")):
                    seen[name] = time.perf_counter() - start
        os.write(fd, b"q")
        end = time.monotonic() + 10
        while time.monotonic() < end:
            done, _ = os.waitpid(pid, os.WNOHANG)
            if done:
                break
            ready, _, _ = select.select([fd], [], [], 0.05)
            if ready:
                with contextlib.suppress(OSError):
                    os.read(fd, 65536)
        else:
            os.kill(pid, 9)
            os.waitpid(pid, 0)
    finally:
        os.close(fd)
    missing = set(marks) - set(seen)
    if missing:
        raise SystemExit(f"{' '.join(argv)}: never showed {missing}:\n{_screen(data)[-2000:]}")
    return seen


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="segue-bench-tui-") as scratch:
        root = Path(scratch)
        home = root / "home"
        fleet_home(home, args.sessions)
        _copies(home, "usage_limited", "codex", 20)
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(home),
            "TERM": "xterm-256color",
            "LANG": "C.UTF-8",
            "SEGUE_STATE_DIR": str(root / "state"),
            "SEGUE_DATA_DIR": str(root / "data"),
            "TMUX_TMPDIR": str(root / "tmux"),  # no tmux server to scan
        }
        floor_py = root / "floor.py"
        floor_py.write_text(FLOOR)
        segue = [sys.executable, "-m", "segue", "tui", "--offline"]
        marks = {"painted": "segue — the fleet|/ Filter", "rows": "20 parked"}
        floors, painted, rows, cold = [], [], [], []
        cache = root / "state" / "listing-cache.json"
        _run(segue, env, marks)  # a first run: the byte-code caches written
        for _ in range(args.runs):
            floors.append(_run([sys.executable, str(floor_py)], env, {"painted": "/ Filter"}))
            seen = _run(segue, env, marks)
            painted.append(seen["painted"])
            rows.append(seen["rows"])
            cache.unlink(missing_ok=True)
            cold.append(_run(segue, env, marks)["rows"])
    floor = statistics.median(f["painted"] for f in floors)
    first = statistics.median(painted)
    filled = statistics.median(rows)
    filled_cold = statistics.median(cold)
    result = {
        "sessions": args.sessions,
        "runs": args.runs,
        "painted_s": first,
        "rows_s": filled,
        "rows_cold_s": filled_cold,
        "textual_floor_s": floor,
        "goal_s": GOAL_S,
        "painted_vs_goal": first / GOAL_S,
        "painted_vs_floor": first / floor,
    }
    if args.json:
        print(orjson.dumps(result, option=orjson.OPT_INDENT_2).decode())
        return
    print(f"segue tui over {args.sessions:,} sessions, median of {args.runs} runs (120×36 pty)")
    print(
        f"  first painted fleet screen  {first:.3f} s  ({first / GOAL_S:.2f}× the {GOAL_S} s goal)"
    )
    print(
        f"  the parked rows shown       {filled:.3f} s  "
        f"(cold, no listing cache: {filled_cold:.3f} s)"
    )
    print(f"  a bare Textual app painted  {floor:.3f} s  (segue: {first / floor:.2f}× that floor)")


if __name__ == "__main__":
    main()
