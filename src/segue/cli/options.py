"""What the commands share: their groups, the ``--json`` option, and the provider option type.

A provider is taken by its name in the registry (:func:`segue.providers.known`), so an option
offers whatever providers this segue has, and a provider added to the registry is offered
without a change here. The registry is loaded only when a provider option is given, not at
every start.
"""

from __future__ import annotations

from typing import Annotated

from segue.cli.grammar import Group, Option
from segue.model.conversation import Provider

__all__ = ["PROVIDER", "JsonOption", "RedactOption", "command_group", "print_json"]


class _ProviderKind:
    """A provider, by its name in the registry."""

    def metavar(self) -> str:
        return "PROVIDER"

    def convert(self, text: str) -> Provider:
        from segue.providers import known, names

        try:
            return known(text)
        except ValueError:
            raise ValueError(f"{text!r} is not one of {', '.join(names())}") from None


PROVIDER = _ProviderKind()


JsonOption = Annotated[bool, Option("--json", help="Machine-readable output.")]
RedactOption = Annotated[
    bool,
    Option(
        "--redact-secrets",
        help="Replace detected secrets in the new session by markers naming their kind.",
    ),
]


def print_json(obj: object) -> None:
    """A command's ``--json`` document on stdout, indented, one trailing newline."""
    import sys

    import orjson

    sys.stdout.buffer.write(orjson.dumps(obj, option=orjson.OPT_INDENT_2) + b"\n")
    sys.stdout.flush()


def command_group(name: str, help: str) -> Group:
    """A group of commands (``segue``, ``segue thread``): its help when called bare."""
    return Group(name, help)
