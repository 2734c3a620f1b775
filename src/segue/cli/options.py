"""What the commands share: the ``--json`` option and its documents, and the provider option type.

A provider is taken by its name in the registry (:func:`segue.providers.known`), so an option
offers whatever providers this segue has, and a provider added to the registry is offered
without a change here. The registry is loaded only when a provider option is given, not at
every start.
"""

from __future__ import annotations

import select
import sys
from operator import attrgetter
from pathlib import PurePath
from typing import Annotated, Any

import orjson

from segue.cli.grammar import Argument, Option, writable_stdout
from segue.model.codec import to_json_value
from segue.model.conversation import Provider

__all__ = [
    "PROVIDER",
    "JsonOption",
    "RedactOption",
    "ThreadArgument",
    "picked",
    "print_json",
    "printable",
    "terminal_answer",
    "visible",
]


class _ProviderKind:
    """A provider, by its name in the registry."""

    metavar = "PROVIDER"

    def convert(self, text: str) -> Provider:
        from segue.providers import known, names

        try:
            return known(text)
        except ValueError:
            raise ValueError(f"{text!r} is not one of {', '.join(names())}") from None


PROVIDER = _ProviderKind()


JsonOption = Annotated[bool, Option("--json", help="Machine-readable output.")]
ThreadArgument = Annotated[
    str | None,
    Argument(
        help="A thread id or unique prefix, or a session it holds (default: this folder's "
        "newest session's thread)."
    ),
]
RedactOption = Annotated[
    bool,
    Option(
        "--redact-secrets",
        help="Replace detected secrets in the new session by markers naming their kind.",
    ),
]


def print_json(obj: object) -> None:
    """A command's ``--json`` document on stdout, indented, one trailing newline. A text that
    is not UTF-8 (a path's undecodable bytes) is written as JSON escapes."""
    try:
        data = orjson.dumps(obj, option=orjson.OPT_INDENT_2) + b"\n"
    except TypeError:  # a lone surrogate: the bytes it stands for, written as \xNN
        data = orjson.dumps(_readable(obj), option=orjson.OPT_INDENT_2) + b"\n"
    stdout = writable_stdout()
    stdout.flush()
    out = stdout.buffer
    view = memoryview(data)
    while view:  # a pipe may take part of it: the rest, or the error that ends it
        try:
            taken = out.write(view)
        except BlockingIOError as exc:  # a non-blocking pipe that is full
            taken = exc.characters_written
        if not taken:
            select.select([], [stdout.fileno()], [])  # until the reader makes room
        view = view[taken or 0 :]
    stdout.flush()


def picked(obj: object, keys: str) -> dict[str, Any]:
    """``obj``'s attributes as a document, a member for each word of ``keys``, in its order:
    ``name``, or ``key=attribute`` (dotted: an attribute's attribute) for one named otherwise.
    Each value as :func:`~segue.model.codec.to_json_value` gives it, a path as its text."""
    document: dict[str, Any] = {}
    for word in keys.split():
        key, _, attribute = word.partition("=")
        value = attrgetter(attribute or key)(obj)
        document[key] = str(value) if isinstance(value, PurePath) else to_json_value(value)
    return document


def terminal_answer(prompt: str) -> bool | None:
    """Whether the user answered ``prompt`` yes (y or yes), asked on stderr, as stdout may
    be a file the user keeps; None: no terminal to ask on."""
    if sys.stdin is None or sys.stderr is None or not sys.stdin.isatty():
        return None
    sys.stderr.write(prompt)
    sys.stderr.flush()
    answer = sys.stdin.readline()
    if not answer.endswith("\n"):  # Ctrl-D: what follows starts on a line of its own
        sys.stderr.write("\n")
    return answer.strip().lower() in ("y", "yes")


def _readable(value: object) -> object:
    """``value`` with each text's undecodable bytes (a surrogate) written out as ``\\xNN``."""
    if isinstance(value, str):
        try:  # a name's undecodable byte, as Python decoded it (surrogateescape)
            raw = value.encode("utf-8", "surrogateescape")
        except UnicodeEncodeError:  # a lone surrogate of another origin (a JSON escape)
            raw = value.encode("utf-8", "surrogatepass")
        return raw.decode("utf-8", "backslashreplace")
    if isinstance(value, dict):
        return {_readable(k): _readable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_readable(v) for v in value]
    return value


# A control character in a message (a file name's escape sequence) is written out, never sent
# to the terminal as one; in a text of lines, but its tabs and line breaks.
_CONTROLS = {c: f"\\x{c:02x}" for c in (*range(0x20), 0x7F, *range(0x80, 0xA0))}
_TEXT_CONTROLS = {c: shown for c, shown in _CONTROLS.items() if c not in (0x09, 0x0A)}


def printable(text: str) -> str:
    """``text`` of lines as a terminal may be given it: every control character but a tab and
    a line break written out as ``\\xNN`` (a model's answer, a tool's output, a file name may
    hold an escape sequence)."""
    return text.translate(_TEXT_CONTROLS)


def visible(text: str) -> str:
    """``text`` as a terminal may be given it: undecodable bytes and control characters
    written out as ``\\xNN``."""
    return str(_readable(text)).translate(_CONTROLS)
