"""Record the test fixtures by driving the real CLIs through the stand-in.

    python -m segue_testbed.record [--provider claude|codex] [--only NAME] [--out DIR]

Each provider module (``segue_testbed.record_claude``, ``segue_testbed.record_codex``) exposes
``SCENARIOS: dict[str, Callable[[Path, StandIn], None]]``. A scenario is called with its own
output folder, ``<out>/<provider>/<name>``, which it empties and fills; and a started stand-in.
"""

from __future__ import annotations

import argparse
import importlib
import shutil
import sys
import time
from collections.abc import Callable, Collection
from pathlib import Path

from segue_testbed.standin.server import StandIn
from segue_testbed.testbed import repo_root

Scenario = Callable[[Path, StandIn], None]
PROVIDERS = ("claude", "codex", "copilot")
DEFAULT_OUT = repo_root() / "tests" / "fixtures"


def tool_runs_sorted(tokens: list[str], tool_kinds: Collection[str]) -> list[str]:
    """``tokens`` with each run of consecutive tool records (``tool_kinds``) sorted: a CLI
    writes the results of calls made at once as they end, between calls still being written,
    so their order within the run depends on timing."""
    out: list[str] = []
    run: list[str] = []
    for token in [*tokens, ""]:
        if token in tool_kinds:
            run.append(token)
            continue
        out.extend(sorted(run))
        run = []
        if token:
            out.append(token)
    return out


def scenarios(provider: str) -> dict[str, Scenario]:
    """The provider's scenarios, or none when its recorder module is not there (yet)."""
    module_name = f"segue_testbed.record_{provider}"
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name != module_name:
            raise
        return {}
    found: dict[str, Scenario] = module.SCENARIOS
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m segue_testbed.record", description=__doc__)
    parser.add_argument("--provider", choices=PROVIDERS, action="append")
    parser.add_argument("--only", action="append", help="scenario name (repeatable)")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args(argv)
    selected = [(p, n, f) for p in args.provider or PROVIDERS for n, f in scenarios(p).items()]
    if args.only:
        selected = [s for s in selected if s[1] in args.only]
    if not selected:
        print("no scenario selected", file=sys.stderr)
        return 2
    with StandIn() as standin:
        for provider, name, record in selected:
            out_dir = args.out / provider / name
            shutil.rmtree(out_dir, ignore_errors=True)
            out_dir.mkdir(parents=True)
            started = time.monotonic()
            record(out_dir, standin)
            print(f"{provider}/{name}: {time.monotonic() - started:.1f}s", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
