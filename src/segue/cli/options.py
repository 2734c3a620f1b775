"""What the commands share: their groups, the ``--json`` option, and the provider option type.

A provider is taken by its name in the registry (:func:`segue.providers.known`), so an option
offers whatever providers this segue has, and a provider added to the registry is offered
without a change here. The registry is loaded only when a provider option is parsed or its
command's help is shown, not at every start.
"""

from __future__ import annotations

from typing import Annotated, Any

import typer
from typer._click.types import ParamType  # what typer.Option(click_type=...) takes

from segue.model.conversation import Provider

__all__ = ["PROVIDER", "JsonOption", "RedactOption", "command_group", "print_json"]


class _ProviderType(ParamType):
    name = "provider"

    def get_metavar(self, param: Any, ctx: Any = None) -> str:
        from segue.providers import names

        return "<" + "|".join(names()) + ">"

    def convert(self, value: Any, param: Any, ctx: Any) -> Provider:
        if isinstance(value, Provider):
            return value
        from segue.providers import known, names

        try:
            return known(str(value))
        except ValueError:
            self.fail(f"{value!r} is not one of {', '.join(names())}", param, ctx)


PROVIDER = _ProviderType()


JsonOption = Annotated[bool, typer.Option("--json", help="Machine-readable output.")]
RedactOption = Annotated[
    bool,
    typer.Option(
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


def command_group(name: str, help: str) -> typer.Typer:
    """A group of commands as segue's are: help when called bare, no completion, errors as one
    line (no pretty tracebacks), and click's plain help (rich's costs --help 60 ms a start)."""
    return typer.Typer(
        rich_markup_mode=None,
        name=name,
        help=help,
        no_args_is_help=True,
        add_completion=False,
        pretty_exceptions_enable=False,
    )
