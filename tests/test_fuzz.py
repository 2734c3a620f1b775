"""Fuzzing with the real CLIs' records: any field of any record swapped for a value of another
JSON type never makes segue raise anything but its own one-line errors, in any command.

Hypothesis picks records of the recorded fixtures, walks to a field at any depth, and puts a
value of a different JSON type there (null, a boolean, a number, a string, a list, an object).
The session is then listed, read, shown, serialized and switched both ways as a dry run; the
listing's TURNS must still equal the turns ``show`` numbers.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rich.console import Console

from segue.cli.render import print_conversation
from segue.model.codec import conversation_to_json
from segue.model.conversation import Provider
from segue.model.errors import SegueError
from segue.providers import entry
from segue.providers.sessions import read_session
from segue.switch import switch_conversation
from segue_testbed.fixtures import Fixture, all_fixtures

SMALL = [f for f in all_fixtures() if f.transcript.stat().st_size < 200_000]
JSON_TYPES = ("null", "bool", "int", "float", "str", "list", "dict")
INTS = st.integers(-(2**63), 2**63 - 1)  # what JSON Lines writers emit (orjson's range)
VALUES: dict[str, Any] = {
    "null": st.none(),
    "bool": st.booleans(),
    "int": INTS,
    "float": st.floats(allow_nan=False, allow_infinity=False),
    "str": st.text(max_size=20),
    "list": st.lists(st.one_of(st.none(), INTS, st.text(max_size=5)), max_size=3),
    "dict": st.dictionaries(st.text(max_size=8), st.one_of(st.none(), INTS), max_size=3),
}


def json_type(value: Any) -> str:
    if value is None:
        return "null"
    return {bool: "bool", int: "int", float: "float", str: "str", list: "list", dict: "dict"}[
        type(value)
    ]


def field_paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every place inside a record that holds a value (object members and list elements)."""
    found: list[tuple[Any, ...]] = []
    children = (
        value.items()
        if isinstance(value, dict)
        else enumerate(value)
        if isinstance(value, list)
        else ()
    )
    for key, inner in children:
        found.append((*prefix, key))
        found.extend(field_paths(inner, (*prefix, key)))
    return found


def get_at(record: Any, path: tuple[Any, ...]) -> Any:
    for key in path:
        record = record[key]
    return record


def set_at(record: Any, path: tuple[Any, ...], value: Any) -> None:
    get_at(record, path[:-1])[path[-1]] = value


@st.composite
def swapped(draw: st.DrawFn, records: list[Any]) -> list[Any]:
    """A copy of the records with one to four fields, each given a value of another JSON type."""
    records = orjson.loads(orjson.dumps(records))
    for _ in range(draw(st.integers(1, 4))):
        line = draw(st.integers(0, len(records) - 1))
        paths = field_paths(records[line])
        if not paths:
            continue
        path = draw(st.sampled_from(paths))
        current = json_type(get_at(records[line], path))
        kind = draw(st.sampled_from([t for t in JSON_TYPES if t != current]))
        set_at(records[line], path, draw(VALUES[kind]))
    return records


def _records(fixture: Fixture) -> list[Any]:
    return [
        orjson.loads(line) for line in fixture.transcript.read_bytes().splitlines() if line.strip()
    ]


def _shown_turns(conversation: Any) -> int:
    out = io.StringIO()
    print_conversation(Console(file=out, width=200), conversation, verbose=True)
    text = out.getvalue()
    return text.count("── turn ") - text.count("── turn (rolled back")


def exercise(path: Path, provider: Provider) -> None:
    """Everything a user can do with the file; only segue's own errors may come out."""
    row = entry(provider).peek(path)
    conversation = read_session(path, provider)
    assert row.turns == _shown_turns(conversation), "TURNS differ from what show numbers"
    orjson.dumps(conversation_to_json(conversation, extra={}))
    for target in (Provider.CLAUDE, Provider.CODEX):
        if target is provider:
            continue
        try:
            switch_conversation(conversation, target, dry_run=True, env={"HOME": "/nonexistent"})
        except SegueError as exc:
            assert str(exc) and "\n" not in str(exc)


@pytest.mark.parametrize("fixture", SMALL, ids=lambda f: f.name)
@settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(data=st.data())
def test_swapping_field_types_finds_no_crash(
    fixture: Fixture, tmp_path: Path, data: st.DataObject
) -> None:
    records = data.draw(swapped(_records(fixture)))
    target = tmp_path / fixture.transcript.name
    target.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in records))
    exercise(target, Provider(fixture.provider))


@pytest.mark.parametrize("fixture", SMALL, ids=lambda f: f.name)
def test_every_top_level_field_of_every_record_swapped(fixture: Fixture, tmp_path: Path) -> None:
    """The systematic sweep: each top-level field of each record, in turn, as each other JSON
    type (one representative value per type)."""
    samples: dict[str, Any] = {
        "null": None,
        "bool": True,
        "int": 5,
        "float": 0.5,
        "str": "x",
        "list": [],
        "dict": {},
    }
    records = _records(fixture)
    target = tmp_path / fixture.transcript.name
    keys = sorted({(type_of, key) for r in records for key in r for type_of in [json_type(r[key])]})
    for original_type, key in keys:
        for kind, value in samples.items():
            if kind == original_type:
                continue
            swapped = [
                {**r, key: value} if key in r and json_type(r[key]) == original_type else r
                for r in records
            ]
            target.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in swapped))
            exercise(target, Provider(fixture.provider))
