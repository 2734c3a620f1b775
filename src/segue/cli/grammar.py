"""The command line's grammar: segue's commands, their arguments and options, parsed by the
standard library's argparse.

A command is a plain function whose parameters say what it takes from the command line, each
``Annotated`` with an :class:`Option` or an :class:`Argument` and given its default::

    def show(
        session: Annotated[str, Argument(help="A session id.")],
        as_json: Annotated[bool, Option("--json", help="As JSON.")] = False,
    ) -> None: ...

The type says how a value is read: ``bool`` is a flag, ``int``/``float``/``str``/``Path`` a
value, an enum one of its values, ``list[T]`` an option given again (an argument: any number
of words), ``T | None`` a value that may be missing. An option's ``kind`` reads a value no
type says how to (a provider, by its name in the registry). Only the command a line names has
its parameters read and its parser built, so a start costs little more than argparse's import.

Every mistake on the command line is a :class:`UsageError` (exit status 2) whose message is one
line naming what was wrong and where the command's help is.
"""

from __future__ import annotations

import argparse
import inspect
import shutil
import sys
import textwrap
import types
import typing
from collections.abc import Callable, Sequence
from enum import Enum
from importlib import import_module
from pathlib import Path
from typing import Any, NoReturn, Protocol, TextIO, TypeVar

from segue.model.errors import SegueError

__all__ = [
    "Argument",
    "Group",
    "Kind",
    "Option",
    "Options",
    "UsageError",
    "option_names",
    "writable_stdout",
]

F = TypeVar("F", bound=Callable[..., Any])


class UsageError(SegueError):
    """The command line itself is wrong (exit status 2)."""


class Kind(Protocol):
    """How an option reads a value its type cannot say how to read."""

    metavar: str  # the value's name in the help

    def convert(self, text: str) -> Any:
        """The value, or ``ValueError`` with what is wrong with ``text``."""


class Option:
    """A parameter given by name: ``--name VALUE`` (a ``bool``: just ``--name``)."""

    __slots__ = ("help", "kind", "names")

    def __init__(self, *names: str, help: str = "", kind: Kind | None = None) -> None:
        self.names, self.help, self.kind = names, help, kind


class Options:
    """A parameter that stands for several options: a frozen dataclass whose fields are each
    ``Annotated`` with an :class:`Option` and given a default. The command gets the dataclass,
    made of the values the line gave (options another command shares, declared once)."""

    __slots__ = ()


class Argument:
    """A parameter given by place."""

    __slots__ = ("help",)

    def __init__(self, help: str = "") -> None:
        self.help = help


class Group:
    """Commands under one name (``segue``, ``segue thread``), each a function or a group."""

    def __init__(self, name: str, help: str) -> None:
        self.name, self.help = name, help
        # a command, a group, or where one is ("module:attribute", imported when named)
        self.entries: dict[str, Callable[..., Any] | Group | str] = {}

    def command(self, name: str | None = None) -> Callable[[F], F]:
        """Register a function as the command ``name`` (default: its own, ``_`` as ``-``)."""

        def register(fn: F) -> F:
            self.entries[name or fn.__name__.replace("_", "-")] = fn
            return fn

        return register

    def entry(self, name: str) -> Callable[..., Any] | Group | None:
        found = self.entries.get(name)
        if isinstance(found, str):
            module, _, attribute = found.partition(":")
            found = self.entries[name] = getattr(import_module(module), attribute)
        return found

    def parse(self, args: Sequence[str]) -> tuple[Callable[..., Any], dict[str, Any]]:
        """The command ``args`` name and the values it is called with. A line that asks for
        help prints it and ends the process (status 0; a bare group's, 2)."""
        group, prog, rest = self, self.name, list(args)
        if rest in (["--version"], ["--version", "--json"], ["--json", "--version"]):
            from importlib.metadata import PackageNotFoundError, version

            try:
                installed: str | None = version(prog)
            except PackageNotFoundError:  # run from a source tree that is not installed
                installed = None
            if "--json" in rest:  # (a version is PEP 440 text: nothing in it to escape)
                _say('{"version": %s}\n' % (f'"{installed}"' if installed else "null"))
            else:
                _say(f"{prog} {installed or '(not installed)'}\n")
            raise SystemExit(0)
        while True:
            if not rest or rest[0] in ("-h", "--help"):
                _say(group.help_text(prog))
                raise SystemExit(0 if rest else 2)
            word, rest = rest[0], rest[1:]
            entry = group.entry(word)
            if entry is None:
                raise UsageError(group._unknown(word, prog))
            prog = f"{prog} {word}"
            if not isinstance(entry, Group):
                return entry, _command_values(entry, prog, rest)
            group = entry

    def help_text(self, prog: str) -> str:
        width = max((len(name) for name in self.entries), default=0)
        columns = max(min(shutil.get_terminal_size().columns, 100) - width - 4, 30)
        lines = [f"usage: {prog} COMMAND [ARGS]...", "", self.help, "", "commands:"]
        for name in list(self.entries):
            entry = self.entry(name)
            about = entry.help if isinstance(entry, Group) else _first_sentence(entry.__doc__)
            for n, part in enumerate(textwrap.wrap(about, columns) or [""]):
                lines.append(f"  {(name if n == 0 else '').ljust(width)}  {part}")
        also = "" if " " in prog else f"; {prog} --version, the version"
        lines += ["", f"{prog} COMMAND --help shows what a command takes{also}."]
        return "\n".join(lines) + "\n"

    def _unknown(self, word: str, prog: str) -> str:
        if word.startswith("-"):
            return (
                f"{word} is not a command of {prog}: options go after the command ({prog} --help)"
            )
        from difflib import get_close_matches

        close = get_close_matches(word, list(self.entries), n=2)
        maybe = f"; did you mean {' or '.join(close)}?" if close else ""
        return f"{word!r} is not a command of {prog}{maybe} ({prog} --help lists them)"


def writable_stdout() -> TextIO:
    """``sys.stdout``, or the error that says the output cannot be written (the process
    started with it closed)."""
    if sys.stdout is None:
        raise SegueError("cannot write the output: standard output is closed")
    return sys.stdout


def _say(text: str) -> None:
    out = writable_stdout()
    out.write(text)
    out.flush()


def _first_sentence(doc: str | None) -> str:
    paragraph = " ".join((doc or "").strip().split("\n\n")[0].split())
    cut = paragraph.find(". ")
    return paragraph if cut == -1 else paragraph[: cut + 1]


class _Parser(argparse.ArgumentParser):
    held: dict[str, str]  # the stand-ins of this line (see _hold_words)

    def _print_message(self, message: str, file: Any = None) -> None:
        """Help on stdout, and a failure to write it said (argparse's own ignores it)."""
        if message:
            _say(message)

    def error(self, message: str) -> NoReturn:
        for stand_in in sorted(self.held, key=len, reverse=True):  # the words the user typed
            message = message.replace(stand_in, self.held[stand_in])
        raise UsageError(f"{message} ({self.prog} --help)")


def _command_values(fn: Callable[..., Any], prog: str, args: list[str]) -> dict[str, Any]:
    parser = _Parser(
        prog=prog,
        description=inspect.cleandoc(fn.__doc__ or ""),
        formatter_class=argparse.RawDescriptionHelpFormatter,
        allow_abbrev=False,
    )
    parser.held = {}  # filled below; the readers and the error messages share it
    valued: set[str] = set()  # the option names that take a value (a word may start with one)
    for name, hint, default in _parameters(fn, flat=True):
        valued.update(_add(parser, name, hint, default, parser.held))
    words = _hold_words(args, valued, parser.held)
    # options may come between arguments (``switch A --to codex B``)
    values = vars(parser.parse_intermixed_args(words))
    for name, hint, _ in _parameters(fn):
        if _gathered(hint):  # the dataclass an Options parameter is, made of its fields' values
            fields = _parameters(hint.__origin__)
            values[name] = hint.__origin__(**{field: values.pop(field) for field, _, _ in fields})
    return values


def option_names(fn: Callable[..., Any]) -> set[str]:
    """Every option name a command takes, its help's included."""
    specs = (hint.__metadata__[0] for _, hint, _ in _parameters(fn, flat=True))
    return {"-h", "--help", *(n for spec in specs if isinstance(spec, Option) for n in spec.names)}


def _hold_words(args: list[str], valued: set[str], held: dict[str, str]) -> list[str]:
    """``args`` with the words that can only be arguments held back in ``held``, as stand-ins
    argparse takes for nothing else: every word after ``--`` (which 3.11's intermixed parse
    loses); a negative number (``-1e3`` is an option to argparse); and a word that starts with
    ``-`` but holds a space (a prompt, ``- fix it``, which argparse would read as ``-h`` or
    another short option with its value), unless it is an option of ``valued`` given its
    value in the same word (``--cwd=my dir``, ``-Smy sock``). Each parameter's reader turns a
    stand-in back into its word; an option's refuses one from after ``--``."""
    words: list[str] = []
    after = False
    for word in args:
        if word == "--" and not after:
            after = True
            continue
        if (
            after
            or _number(word)
            or (
                word.startswith("-")
                and any(c.isspace() for c in word)
                and word.split("=", 1)[0] not in valued
                and word[:2] not in valued
            )
        ):
            stand_in = f"{_AFTER if after else _HELD}{len(held)}"
            held[stand_in] = word
            word = stand_in
        words.append(word)
    return words


def _number(word: str) -> bool:
    """A negative number argparse would take for an option (``-1e3``, ``-inf``)."""
    try:
        float(word)
    except ValueError:
        return False
    return word.startswith("-")


# what a stand-in starts with: no word of a command line can hold a NUL
_HELD, _AFTER = "\0H", "\0A"


def _parameters(fn: Callable[..., Any], *, flat: bool = False) -> list[tuple[str, Any, Any]]:
    """(name, annotation, default) of each parameter, in order; ``flat``: an :class:`Options`
    parameter's fields in its place (its dataclass's own parameters)."""
    hints = typing.get_type_hints(fn, include_extras=True)
    found: list[tuple[str, Any, Any]] = []
    for p in inspect.signature(fn).parameters.values():
        if flat and _gathered(hints[p.name]):
            found += _parameters(hints[p.name].__origin__)
        else:
            found.append((p.name, hints[p.name], _REQUIRED if p.default is p.empty else p.default))
    return found


def _gathered(hint: Any) -> bool:
    """Whether a parameter is an :class:`Options` one."""
    return typing.get_origin(hint) is typing.Annotated and isinstance(hint.__metadata__[0], Options)


_REQUIRED = object()


def _add(
    parser: argparse.ArgumentParser, name: str, hint: Any, default: Any, held: dict[str, str]
) -> tuple[str, ...]:
    """Add the parameter to ``parser``; the option names that take a value, if it has any."""
    if typing.get_origin(hint) is not typing.Annotated:
        raise TypeError(f"{name}: a command's parameter is Annotated with Option or Argument")
    base, spec = hint.__origin__, hint.__metadata__[0]
    if typing.get_origin(base) in (types.UnionType, typing.Union):
        kinds = [a for a in typing.get_args(base) if a is not types.NoneType]
        if len(kinds) != 1:
            raise TypeError(f"{name}: one type, or one type or None ({base!r})")
        base = kinds[0]
    many = typing.get_origin(base) is list
    if many:
        base = typing.get_args(base)[0]
    help_text = spec.help.replace("%", "%%")  # (argparse formats a help with %)
    if isinstance(spec, Argument):
        word = name.upper()
        shape: dict[str, Any] = {"nargs": "*"} if many else {}
        if not many and default is not _REQUIRED:
            shape = {"nargs": "?", "default": default}
        parser.add_argument(
            name, type=_reader(base, None, word, held), help=help_text, metavar=word, **shape
        )
        return ()
    assert isinstance(spec, Option), name
    if base is bool and spec.kind is None:
        if default is not False:
            raise TypeError(f"{name}: a flag is off unless given (its default is False)")
        parser.add_argument(*spec.names, dest=name, action="store_true", help=help_text)
        return ()
    metavar = spec.kind.metavar if spec.kind is not None else _metavar(base)
    parser.add_argument(
        *spec.names,
        dest=name,
        type=_reader(base, spec.kind, metavar, held, option=True),
        action="append" if many else "store",
        default=None if default is _REQUIRED else default,
        required=default is _REQUIRED,
        metavar=metavar,
        help=help_text,
    )
    return spec.names


_NUMBERS: dict[type, str] = {int: "a whole number", float: "a number"}


def _metavar(base: Any) -> str:
    if isinstance(base, type) and issubclass(base, Enum):
        return "{" + ",".join(str(m.value) for m in base) + "}"
    return {int: "N", float: "SECONDS"}.get(base, "TEXT" if base is str else "PATH")


def _reader(
    base: Any, kind: Kind | None, word: str, held: dict[str, str], *, option: bool = False
) -> Callable[[str], Any]:
    """What turns one word of the command line into the parameter's value."""
    convert: Callable[[str], Any]
    if kind is not None:
        convert = kind.convert
    elif base in _NUMBERS or (isinstance(base, type) and issubclass(base, Enum)):
        what = _NUMBERS.get(base) or f"one of {', '.join(str(m.value) for m in base)}"

        def convert(text: str) -> Any:
            try:
                return base(text)
            except ValueError:
                raise ValueError(f"{text!r} is not {what}") from None

    elif base in (Path, str):
        convert = base
    else:
        raise TypeError(f"no reader for {base!r}")

    def read(text: str) -> Any:
        if option and text.startswith(_AFTER):
            raise argparse.ArgumentTypeError("expected one argument")  # (-- ended the options)
        try:
            return convert(held.get(text, text))
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None

    read.__name__ = word  # what argparse names in an error it words itself
    return read
