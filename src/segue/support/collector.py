"""The cyclic garbage collector around large reads: one policy for every reader.

A reader pauses the collector while it builds many objects that form no cycles (a third of a
large read was collection pauses). What it kept is then all in the youngest generation, and the
next young collection walks it (16 ms after a 100 MB read), the one after that walks it again.
A process that ends after one command skips that: after a read it moves what is alive to the
oldest generation at once (``gc.freeze()`` then ``gc.unfreeze()``, two list moves), where only a
full collection looks. That moves cyclic garbage there too, which only a full collection frees,
so a process that runs on (``segue watch``, ``segue tui``, a program using the library) keeps
the collector's own ageing.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["one_command", "paused"]

_one_command = False


def one_command() -> None:
    """Say that this process ends after one command (the command line does, for every command
    but ``watch`` and ``tui``): what a read keeps goes straight to the oldest generation."""
    global _one_command
    _one_command = True


@contextmanager
def paused() -> Iterator[None]:
    """The collector paused while the block builds many objects; restored afterwards."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if _one_command:
            gc.freeze()
            gc.unfreeze()
        if was_enabled:
            gc.enable()
