"""Names a package exports, imported on first use (PEP 562): the command line starts without
loading what a command does not need, and a type checker still sees every name."""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import Any

__all__ = ["lazy_attribute"]


def lazy_attribute(
    package: str, where: Mapping[str, str], namespace: dict[str, Any], name: str
) -> Any:
    """The value of ``name`` (from the module ``where`` names for it), kept in the package's
    ``namespace`` so the next use is a plain lookup."""
    module = where.get(name)
    if module is None:
        raise AttributeError(f"module {package!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    namespace[name] = value
    return value
