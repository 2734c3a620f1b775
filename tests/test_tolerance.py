"""Bad input never crashes a reader and never hides the good lines around it.

The native lines here all come from the recorded fixtures; hypothesis only cuts, shuffles and
corrupts them (and hand-made garbage is allowed only in tests of rejection like these).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from segue.model.conversation import Provider
from segue.providers import entry
from segue.providers.sessions import read_session
from segue_testbed.fixtures import Fixture, all_fixtures

SMALL = [f for f in all_fixtures() if f.transcript.stat().st_size < 400_000]
SETTINGS = settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


def _lines(f: Fixture) -> list[bytes]:
    return [line + b"\n" for line in _split(f.transcript.read_bytes())]


def _write(tmp: Path, f: Fixture, data: bytes) -> Path:
    path = tmp / f.transcript.name
    path.write_bytes(data)
    return path


def _split(data: bytes) -> list[bytes]:
    """Lines as JSONL defines them: ended by ``\\n`` only (``\\r`` is just whitespace)."""
    lines = data.split(b"\n")
    return lines[:-1] if lines and lines[-1] == b"" else lines


def _good_lines(data: bytes) -> set[int]:
    """Line numbers whose content is a JSON object (what the reader must still turn into items)."""
    good = set()
    for n, line in enumerate(_split(data), 1):
        try:
            if isinstance(orjson.loads(line), dict):
                good.add(n)
        except orjson.JSONDecodeError:
            pass
    return good


def _check(path: Path, provider: Provider, data: bytes) -> None:
    conv = read_session(path, provider)
    entry(provider).peek(path)
    reported = {s.line for s in conv.skipped}
    total = len(_split(data))
    good = _good_lines(data)
    # every line is either decoded, reported, a blank, or the incomplete tail noted as such
    blank = {n for n, line in enumerate(_split(data), 1) if not line.strip()}
    tail_note = any("last line is incomplete" in note for note in conv.notes)
    accounted = good | reported | blank | ({total} if tail_note else set())
    assert accounted >= set(range(1, total + 1))
    assert not (good & reported)
    if provider is Provider.CODEX:  # every well-formed line still comes out as an item
        here = str(path)
        assert {i.prov.line for i in conv.items if i.prov.file == here} == good


@pytest.mark.parametrize("fixture", SMALL, ids=lambda f: f.name)
@SETTINGS
@given(cut=st.floats(min_value=0.0, max_value=1.0))
def test_truncated_anywhere(fixture: Fixture, tmp_path: Path, cut: float) -> None:
    data = fixture.transcript.read_bytes()
    data = data[: int(len(data) * cut)]
    _check(_write(tmp_path, fixture, data), Provider(fixture.provider), data)


@pytest.mark.parametrize("fixture", SMALL, ids=lambda f: f.name)
@SETTINGS
@given(garbage=st.lists(st.tuples(st.integers(0, 10_000), st.binary(max_size=40)), max_size=5))
def test_garbage_lines(fixture: Fixture, tmp_path: Path, garbage: list[tuple[int, bytes]]) -> None:
    lines = _lines(fixture)
    for position, junk in garbage:
        lines.insert(position % (len(lines) + 1), junk.replace(b"\n", b" ") + b"\n")
    data = b"".join(lines)
    _check(_write(tmp_path, fixture, data), Provider(fixture.provider), data)


@pytest.mark.parametrize("fixture", SMALL, ids=lambda f: f.name)
@SETTINGS
@given(data=st.data())
def test_shuffled_lines(fixture: Fixture, tmp_path: Path, data: st.DataObject) -> None:
    lines = data.draw(st.permutations(_lines(fixture)))
    blob = b"".join(lines)
    _check(_write(tmp_path, fixture, blob), Provider(fixture.provider), blob)


@pytest.mark.parametrize("fixture", SMALL, ids=lambda f: f.name)
@SETTINGS
@given(flips=st.lists(st.tuples(st.integers(0, 10**9), st.integers(0, 255)), max_size=8))
def test_byte_flips(fixture: Fixture, tmp_path: Path, flips: list[tuple[int, int]]) -> None:
    blob = bytearray(fixture.transcript.read_bytes())
    for position, value in flips:
        blob[position % len(blob)] = value
    data = bytes(blob)
    _check(_write(tmp_path, fixture, data), Provider(fixture.provider), data)


def test_malformed_line_is_reported_with_file_and_line(tmp_path: Path) -> None:
    fixture = next(f for f in SMALL if f.name == "codex-multi_turn")
    lines = _lines(fixture)
    lines.insert(3, b'{"timestamp": "broken\n')
    path = _write(tmp_path, fixture, b"".join(lines))
    conv = read_session(path)
    assert [(s.file, s.line) for s in conv.skipped] == [(str(path), 4)]
    # the rest of the file is still read: every prompt is there
    from segue.transforms.turns import prompts

    assert [p.text for p in prompts(conv.items)] == fixture.spec["prompts"]


def test_incomplete_last_line_is_noted_not_reported(tmp_path: Path) -> None:
    fixture = next(f for f in SMALL if f.name == "claude-multi_turn")
    data = fixture.transcript.read_bytes()
    data += _split(data)[2][:25]  # a CLI in the middle of an append
    path = _write(tmp_path, fixture, data)
    conv = read_session(path)
    assert conv.skipped == []
    assert any("last line is incomplete" in note for note in conv.notes)


def test_reader_keeps_copies_apart(tmp_path: Path) -> None:
    """A copy of a session read from elsewhere names its own file in every item."""
    fixture = SMALL[0]
    copy = tmp_path / fixture.transcript.name
    shutil.copy(fixture.transcript, copy)
    conv = read_session(copy)
    assert {i.prov.file for i in conv.items} == {str(copy)}
