"""What the benchmarks measure against: the bare ``orjson.loads``-per-line pass."""

from __future__ import annotations

import gc
import time
from collections.abc import Callable
from pathlib import Path

import orjson

from segue.formats.jsonl import READ_BUFFER


def bare_parse(path: Path, buffering: int = -1) -> int:
    """Parse every line and keep nothing. ``buffering=-1`` is the plain pass the issues name
    (Python's default 8 KiB file buffer); ``READ_BUFFER`` is the 1 MiB buffer segue's readers
    use, the stricter floor."""
    loads = orjson.loads
    n = 0
    with path.open("rb", buffering=buffering) as f:
        for line in f:
            loads(line)
            n += 1
    return n


def bare_parse_buffered(path: Path) -> int:
    return bare_parse(path, READ_BUFFER)


def best_of(runs: int, fn: Callable[[], object]) -> float:
    """The fastest of ``runs`` timed calls of ``fn`` (seconds)."""
    best = float("inf")
    for _ in range(runs):
        gc.collect()
        start = time.perf_counter()
        result = fn()
        elapsed = time.perf_counter() - start
        del result
        best = min(best, elapsed)
    return best
