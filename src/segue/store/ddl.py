"""The SQL that makes a new database's schema in one step, from :mod:`segue.store.tables`.

A new store is not taken through every migration: it gets the tables of the head at once, in
the types, constraints and names the migrations give them (SQLAlchemy's spelling of each kind's
type on each database, the naming convention :data:`~segue.store.tables.NAMING`), and the
version table Alembic keeps, stamped at the head. Nothing here loads SQLAlchemy or Alembic
(half a second on a slow machine, more than the whole command): a test checks that a database
made so has exactly the schema of one migrated from the first revision, on SQLite and on
PostgreSQL.
"""

from __future__ import annotations

from hashlib import md5

from segue.store.tables import NAMING, TABLES, Kind, Table

__all__ = ["create_statements", "version_table_statement"]

# Each kind's type as SQLAlchemy writes it (``segue.store.schema``'s types, and those the
# migrations spell): SQLite keeps the declared name (a time is SQLAlchemy's DATETIME text
# form, which the queries read and write), PostgreSQL a type of its own for a time.
_SQLITE_TYPES: dict[Kind, str] = {
    "text": "TEXT",
    "int": "INTEGER",
    "bool": "BOOLEAN",
    "time": "DATETIME",
    "json": "JSON",
}
_TYPES = {
    "sqlite": _SQLITE_TYPES,
    "postgresql": {**_SQLITE_TYPES, "time": "TIMESTAMP WITH TIME ZONE"},
}
# The longest name each database keeps: SQLAlchemy shortens a longer constraint or index name
# to fit, ending it in four hex digits of its MD5 (PostgreSQL: NAMEDATALEN - 1).
_LONGEST = {"sqlite": None, "postgresql": 63}


def create_statements(backend: str) -> list[str]:
    """``CREATE TABLE`` and ``CREATE INDEX`` for every table, in an order the foreign keys allow
    (a table after those it refers to), on ``backend`` (``sqlite`` or ``postgresql``)."""
    statements: list[str] = []
    made: set[str] = set()
    for table in TABLES:
        for column in table.columns:
            if column.references and column.references.split(".")[0] not in made | {table.name}:
                raise ValueError(f"{table.name}.{column.name} refers to a later table")
        statements.append(_create_table(table, backend))
        for columns in table.indexes:
            name = _name(backend, "ix", table.name, columns[0])
            statements.append(f"CREATE INDEX {name} ON {table.name} ({', '.join(columns)})")
        made.add(table.name)
    return statements


def version_table_statement(name: str) -> str:
    """The table Alembic keeps the revision in, as Alembic makes it."""
    return (
        f"CREATE TABLE {name} (\n\tversion_num VARCHAR(32) NOT NULL, \n"
        f"\tCONSTRAINT {name}_pkc PRIMARY KEY (version_num)\n)"
    )


def _create_table(table: Table, backend: str) -> str:
    types = _TYPES[backend]
    lines = [
        f"{c.name} {types[c.kind]}" + ("" if c.nullable else " NOT NULL") for c in table.columns
    ]
    key = [c.name for c in table.columns if c.primary_key]
    if key:
        lines.append(
            f"CONSTRAINT {_name(backend, 'pk', table.name)} PRIMARY KEY ({', '.join(key)})"
        )
    for c in table.columns:
        if c.references:
            referred, referred_column = c.references.split(".")
            name = _name(backend, "fk", table.name, c.name, referred)
            lines.append(
                f"CONSTRAINT {name} FOREIGN KEY({c.name}) REFERENCES {referred} ({referred_column})"
            )
    for c in table.columns:
        if c.unique:
            lines.append(f"CONSTRAINT {_name(backend, 'uq', table.name, c.name)} UNIQUE ({c.name})")
    body = ", \n\t".join(lines)
    return f"CREATE TABLE {table.name} (\n\t{body}\n)"


def _name(backend: str, kind: str, table: str, column: str = "", referred: str = "") -> str:
    """A constraint's or an index's name, by the naming convention, as SQLAlchemy makes it."""
    name = NAMING[kind] % {
        "table_name": table,
        "column_0_name": column,
        "column_0_label": f"{table}_{column}",
        "referred_table_name": referred,
    }
    longest = _LONGEST[backend]
    if longest is not None and len(name) > longest:
        digest = md5(name.encode(), usedforsecurity=False).hexdigest()
        name = f"{name[: longest - 8]}_{digest[-4:]}"
    return name
