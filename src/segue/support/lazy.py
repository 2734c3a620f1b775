"""Names a package exports, imported on first use (PEP 562): the command line starts without
loading what a command does not need, and a type checker still sees every name."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["lazy_names"]


def lazy_names(
    package: str, where: Mapping[str, str], namespace: dict[str, Any]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """A package's ``__getattr__`` and ``__dir__``: each name of ``where`` imported on first use
    from the module it names, and kept in the package's ``namespace`` so the next use is a plain
    lookup; ``dir()`` lists the package's ``__all__``."""

    def getattr_(name: str) -> Any:
        module = where.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = namespace[name] = getattr(importlib.import_module(module), name)
        return value

    def dir_() -> list[str]:
        return sorted(namespace.get("__all__", where))

    return getattr_, dir_
