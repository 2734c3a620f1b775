"""A native fork's copy of its parent (:class:`segue.formats.atomic.FileCopy`): the bytes of the
range asked for, every session id in it replaced, wherever the copy's buffer happens to cut,
and a parent that changed since the fork was prepared refused."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from segue.formats import atomic
from segue.formats.atomic import FileCopy
from segue.model.errors import SwitchError

OLD = b'"sessionId":"0b8e6c8a-1111-4222-8333-944455556666"'
SAME = b'"sessionId":"f00dcafe-aaaa-4bbb-8ccc-dddddddddddd"'


def _copy(parent: Path, out: Path, copy: FileCopy, at: int) -> tuple[bytes, int]:
    fd = os.open(out, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.write(fd, b"H" * at)
        n = copy.write_into(fd, at)
    finally:
        os.close(fd)
    return out.read_bytes()[at:], n


@settings(max_examples=150, deadline=None)
@given(
    pieces=st.lists(st.one_of(st.binary(max_size=40), st.just(OLD)), max_size=40),
    chunk=st.integers(1, 130),
    new=st.sampled_from([SAME, b'"sessionId":"short"', OLD + b"-longer-than-it-was"]),
    cut=st.tuples(st.integers(0, 30), st.integers(0, 30)),
    at=st.integers(0, 9),
    short=st.integers(0, 9),
)
def test_the_copy_is_the_range_with_every_id_replaced_wherever_the_buffer_cuts(
    tmp_path_factory: pytest.TempPathFactory,
    pieces: list[bytes],
    chunk: int,
    new: bytes,
    cut: tuple[int, int],
    at: int,
    short: int,
) -> None:
    """``short``: each read returns at most that many bytes, as a network filesystem may."""
    folder = tmp_path_factory.mktemp("copy")
    data = b"".join(pieces)
    start = min(cut[0], len(data))
    end = max(start, len(data) - cut[1])
    parent = folder / "parent.jsonl"
    parent.write_bytes(data)
    copy = FileCopy(parent, start, end, OLD, new, head=data[:3])
    saved, read_into = atomic.COPY_CHUNK, atomic._read_into

    def read_short(fd: int, view: memoryview, at: int) -> int:
        return read_into(fd, view[:short] if short else view, at)

    atomic.COPY_CHUNK, atomic._read_into = chunk, read_short
    try:
        written, n = _copy(parent, folder / "fork.jsonl", copy, at)
    finally:
        atomic.COPY_CHUNK, atomic._read_into = saved, read_into
    assert written == data[start:end].replace(OLD, new)
    assert n == len(written)
    assert parent.read_bytes() == data  # the parent is only read


def test_a_parent_cut_short_since_the_fork_was_prepared_is_refused(tmp_path: Path) -> None:
    parent = tmp_path / "parent.jsonl"
    parent.write_bytes(b"x" * 100)
    copy = FileCopy(parent, 0, 100, OLD, SAME)
    parent.write_bytes(b"x" * 50)
    with pytest.raises(SwitchError, match=r"parent\.jsonl: changed since the fork was prepared"):
        _copy(parent, tmp_path / "fork.jsonl", copy, 0)


def test_a_parent_whose_first_bytes_changed_is_refused(tmp_path: Path) -> None:
    parent = tmp_path / "parent.jsonl"
    parent.write_bytes(b"first line\nsecond\n")
    copy = FileCopy(parent, 0, 18, head=b"first line\n")
    parent.write_bytes(b"other line\nsecond\n")
    with pytest.raises(SwitchError, match="changed since the fork was prepared"):
        _copy(parent, tmp_path / "fork.jsonl", copy, 0)
