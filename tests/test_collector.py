"""The collector around reads: a process that runs on (the library's default, ``segue watch``,
``segue tui``) still frees the cyclic garbage made between its reads; a one-command process
moves what a read kept out of the young collections' way."""

from __future__ import annotations

import subprocess
import sys

from segue_testbed.fixtures import all_fixtures

_READS = """
import gc, sys
from pathlib import Path
from segue.providers.sessions import read_session
from segue.support import collector
if sys.argv[2] == "one":
    collector.one_command()
path = Path(sys.argv[1])
for _ in range(200):
    read_session(path)
    for _ in range(10):
        cycle = [bytearray(2000)]
        cycle.append(cycle)  # garbage only the cyclic collector frees
        del cycle
print(gc.collect())  # what the collections along the way left
"""


def _left(mode: str) -> int:
    transcript = next(f for f in all_fixtures() if f.name == "claude-multi_turn").transcript
    done = subprocess.run(
        [sys.executable, "-c", _READS, str(transcript), mode],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    return int(done.stdout.split()[-1])


def test_a_process_that_runs_on_still_collects_the_cycles_made_between_reads() -> None:
    assert _left("library") < 500  # of the 2,000 made; a one-command process keeps them all


def test_a_one_command_process_puts_what_a_read_kept_in_the_oldest_generation() -> None:
    transcript = next(f for f in all_fixtures() if f.name == "claude-multi_turn").transcript
    probe = (
        "import gc, sys\n"
        "from pathlib import Path\n"
        "from segue.providers.sessions import read_session\n"
        "from segue.support import collector\n"
        "if sys.argv[2] == 'one':\n"
        "    collector.one_command()\n"
        "items = read_session(Path(sys.argv[1])).items\n"
        "print(next(g for g in (0, 1, 2) if any(o is items for o in gc.get_objects(g))))\n"
    )

    def generation(mode: str) -> str:
        argv = [sys.executable, "-c", probe, str(transcript), mode]
        return subprocess.run(argv, capture_output=True, text=True, check=True).stdout.strip()

    assert generation("one") == "2"
    assert generation("library") in ("0", "1")  # young: a young collection may have aged it
