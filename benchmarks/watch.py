"""``segue watch``'s cost: CPU seconds a pass, and an hour at the default interval, over 2,000
sessions.

    uv run python benchmarks/watch.py [--sessions 2000] [--passes 10] [--json]

A scratch home gets ``--sessions`` recorded sessions (copies of the ``multi_turn`` fixtures of
both CLIs, each under a new id, half each). One process runs ``--passes`` watch passes
(``--offline``, nothing to move) and its CPU time (its own and its children's: git, tmux) is
read before and after: the idle cost. As in ``segue watch``'s loop, a session file unchanged
since the pass before (its size, time and inode) is not read again. Then a tenth of the Codex
sessions become copies of a session a usage limit stopped (Codex exhausted until 2030), the
first pass is declined (``--ask`` with no one to answer), and the next passes are timed: an
exhausted provider with nothing left to ask about. Goal: idle at most 2% of one core at the
default interval (30 s), that is 0.6 CPU seconds a pass.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import tempfile
import uuid
from pathlib import Path
from typing import Any

import orjson

from segue_testbed.fixtures import all_fixtures

INTERVAL_S = 30.0
GOAL_SHARE = 0.02


def _cpu() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def _copies(home: Path, scenario: str, provider: str, count: int) -> None:
    (fixture,) = [
        f for f in all_fixtures() if f.provider == provider and f.spec["scenario"] == scenario
    ]
    source = fixture.transcript
    old = fixture.spec["session_id"]
    relative = source.relative_to(fixture.home)
    Path(fixture.spec["cwd"]).mkdir(parents=True, exist_ok=True)
    for _ in range(count):
        new = (
            str(uuid.uuid4())
            if provider == "claude"
            else f"01a2{uuid.uuid4().hex[4:8]}-" + str(uuid.uuid4())[9:]
        )
        target = home / str(relative).replace(old, new)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, target)


def fleet_home(home: Path, sessions: int) -> int:
    """``sessions`` copies of the recorded ``multi_turn`` sessions in ``home``, half of each
    provider; returns the Claude Code half."""
    half = sessions // 2
    _copies(home, "multi_turn", "claude", half)
    _copies(home, "multi_turn", "codex", sessions - half)
    return half


def _passes(policy: Any, env: dict[str, str], count: int) -> float:
    """CPU a pass, after a first one (as the loop runs them: a file unchanged since the last
    pass is not read again)."""
    from segue.watch import watch_pass

    watch_pass(policy, env=env, agents=[])
    start = _cpu()
    for _ in range(count):
        watch_pass(policy, env=env, agents=[])
    return (_cpu() - start) / count


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=2000)
    parser.add_argument("--passes", type=int, default=10)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    from segue.watch import Mode, WatchPolicy

    with tempfile.TemporaryDirectory(prefix="segue-bench-watch-") as scratch:
        root = Path(scratch)
        home = root / "home"
        half = fleet_home(home, args.sessions)
        env = {
            **os.environ,
            "HOME": str(home),
            "CLAUDE_CONFIG_DIR": str(home / ".claude"),
            "CODEX_HOME": str(home / ".codex"),
            "SEGUE_STATE_DIR": str(root / "state"),
            "SEGUE_DATA_DIR": str(root / "data"),
        }
        policy = WatchPolicy(move=Mode.ASK, returns=Mode.NEVER, remote=False, relaunch=False)
        from segue.providers.sessions import remembered_peeks

        with remembered_peeks():
            idle = _passes(policy, env, args.passes)
        _copies(home, "usage_limited", "codex", max(1, half // 10))
        from segue.watch import watch_pass

        with remembered_peeks():
            first_start = _cpu()
            first = watch_pass(policy, env=env, agents=[])  # declined: nobody to ask
            first_cpu = _cpu() - first_start
            assert [e.kind for e in first] == ["exhausted", "move_declined"], first
            exhausted = _passes(policy, env, args.passes)
    result = {
        "sessions": args.sessions,
        "passes": args.passes,
        "idle_cpu_s_per_pass": idle,
        "idle_cpu_s_per_hour": idle * 3600 / INTERVAL_S,
        "idle_share_of_a_core": idle / INTERVAL_S,
        "exhausted_first_pass_cpu_s": first_cpu,
        "exhausted_cpu_s_per_pass": exhausted,
        "exhausted_share_of_a_core": exhausted / INTERVAL_S,
        "goal_share": GOAL_SHARE,
    }
    if args.json:
        print(orjson.dumps(result, option=orjson.OPT_INDENT_2).decode())
        return
    print(f"{args.sessions:,} sessions, {args.passes} passes each, every {INTERVAL_S:.0f} s")
    print(
        f"  idle        {idle:.3f} CPU s a pass, {result['idle_cpu_s_per_hour']:.1f} s an hour: "
        f"{100 * result['idle_share_of_a_core']:.2f}% of a core (goal <= {100 * GOAL_SHARE:.0f}%)"
    )
    print(f"  exhausted   first pass (plans, dry runs, asks) {first_cpu:.3f} CPU s")
    print(
        f"              then {exhausted:.3f} CPU s a pass: "
        f"{100 * result['exhausted_share_of_a_core']:.2f}% of a core"
    )


if __name__ == "__main__":
    main()
