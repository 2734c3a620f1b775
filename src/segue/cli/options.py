"""Option types the commands share.

A provider is taken by its name in the registry (:func:`segue.providers.known`), so an option
offers whatever providers this segue has, and a provider added to the registry is offered
without a change here. The registry is loaded only when a provider option is parsed or its
command's help is shown, not at every start.
"""

from __future__ import annotations

from typing import Any

from typer._click.types import ParamType  # what typer.Option(click_type=...) takes

from segue.model.conversation import Provider

__all__ = ["PROVIDER"]


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
