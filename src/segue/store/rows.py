"""Data classes to table rows and back, by name: a row's columns are the fields of the same
name, and a data class is built from the columns named like its fields. What differs (a pair
split into two columns, a JSON form) is given beside."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

import msgspec

from segue.model.conversation import Provider
from segue.store.tables import Table

__all__ = ["from_json", "from_row", "optional_provider", "row_of"]

_T = TypeVar("_T", bound=msgspec.Struct)


def row_of(obj: Any, table: Table, **columns: Any) -> dict[str, Any]:
    """The values of ``table``'s columns, for :meth:`Transaction.insert`: ``columns`` as given,
    else ``obj``'s field of the same name; a column ``obj`` has no field for is left out."""
    return {
        name: columns[name] if name in columns else getattr(obj, name)
        for name in table.names
        if name in columns or hasattr(obj, name)
    }


def from_row(cls: type[_T], row: Mapping[Any, Any], **fields: Any) -> _T:
    """An instance of data class ``cls``: ``fields`` as given, else the column of the same name
    (a field with a default that the row lacks keeps its default)."""
    values = dict(fields)
    for name in cls.__struct_fields__:
        if name not in values and name in row:
            values[name] = row[name]
    return cls(**values)


def from_json(value: object, kind: Any, default: Any = None) -> Any:
    """A JSON column read back as ``kind`` (a type msgspec converts to); ``default`` for what is
    not one (a hand edit, a broken cell): never an error."""
    try:
        return msgspec.convert(value, kind)
    except msgspec.ValidationError:
        return default


def optional_provider(name: str | None) -> Provider | None:
    """A provider column read back (None stays None)."""
    return None if name is None else Provider(name)
