"""Text written into a systemd unit so that systemd reads back exactly what was meant.

systemd expands ``%`` specifiers in every setting (``%h`` is the home folder, ``%%`` a ``%``),
and ``$NAME`` / ``${NAME}`` in ``ExecStart=`` (``$$`` is a ``$``). ``ExecStart=`` and
``Environment=`` split their value into words: a word may be double-quoted, and in it (and out
of it) C escapes are read (``\\\\``, ``\\"``, ``\\n``, ``\\xNN``). ``EnvironmentFile=`` takes its
value whole (no quotes: a path with a space is written as it is), specifiers expanded.
What no unit can carry is a :class:`ValueError` saying so.
"""

from __future__ import annotations

import re

from segue.support.text import C_ESCAPES

__all__ = ["environment_setting", "exec_line", "path_setting"]

_PLAIN = re.compile(r"[\w@+=:,./-]+", re.ASCII)  # a word systemd reads as it is


def _literal(text: str) -> str:
    """``text`` with each ``%`` doubled (a specifier otherwise)."""
    return text.replace("%", "%%")


def _word(text: str) -> str:
    """One word of ``ExecStart=`` or ``Environment=``: plain when it can be, else in double
    quotes with C escapes."""
    if "\0" in text:
        raise ValueError(f"{text!r} holds a NUL byte, which no systemd unit can carry")
    if text and _PLAIN.fullmatch(text):
        return text
    if text == ";":  # (a lone one, even quoted, would end the command)
        return "\\;"
    escaped = "".join(
        C_ESCAPES.get(c) or (f"\\x{ord(c):02x}" if ord(c) < 32 or ord(c) == 127 else c)
        for c in text
    )
    return f'"{escaped}"'


def exec_line(argv: list[str]) -> str:
    """The value of ``ExecStart=`` that runs ``argv``: its first word an absolute path, which
    systemd takes without variables and refuses with a quote, a backslash or a control
    character in it."""
    program, *args = argv
    if any(c in "\"'\\" or ord(c) < 32 or ord(c) == 127 for c in program):
        raise ValueError(
            f"{program!r}: systemd runs no program whose path holds a quote, a backslash or a "
            "control character"
        )
    words = [_literal(_word(program)), *(_literal(_word(a)).replace("$", "$$") for a in args)]
    return " ".join(words)


def environment_setting(name: str, value: str) -> str:
    """The value of ``Environment=`` that sets ``name`` to ``value``."""
    return _literal(_word(f"{name}={value}"))


def path_setting(path: str) -> str:
    """An absolute path as the value of a setting that takes it whole (``EnvironmentFile=``)."""
    if any(ord(c) < 32 or ord(c) == 127 for c in path) or path != path.strip():
        raise ValueError(
            f"{path!r}: a path with a control character or blank at either end cannot be "
            "written into a systemd unit"
        )
    return _literal(path)
