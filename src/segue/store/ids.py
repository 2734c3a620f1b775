"""Batch ids: UUIDv7 text (RFC 9562), so ids sort by creation time and a prefix is a time range.

Python 3.11 has no ``uuid.uuid7``; this is the RFC's method: 48 bits of Unix milliseconds,
then a 12-bit counter that keeps ids from one process strictly increasing within a
millisecond, then 62 random bits.
"""

from __future__ import annotations

import os
import threading
import time
import uuid

__all__ = ["new_id"]

_lock = threading.Lock()
_last_ms = 0
_counter = 0


def new_id() -> str:
    """A new UUIDv7, lower-case text: larger than any earlier one from this process."""
    global _last_ms, _counter
    with _lock:
        ms = time.time_ns() // 1_000_000
        if ms > _last_ms:
            _last_ms, _counter = ms, _random_bits(11)  # room to count up within the ms
        else:
            _counter += 1
            if _counter > 0xFFF:  # 4096 ids in one millisecond: borrow the next one
                _last_ms, _counter = _last_ms + 1, 0
        value = (_last_ms & (2**48 - 1)) << 80
        value |= 0x7 << 76 | _counter << 64
        value |= 0b10 << 62 | _random_bits(62)
    return str(uuid.UUID(int=value))


def _random_bits(n: int) -> int:
    """``n`` random bits from the system's generator (``secrets.randbits``, without loading
    the module and the ones it brings: hmac, base64, random)."""
    return int.from_bytes(os.urandom(8), "big") >> (64 - n)
