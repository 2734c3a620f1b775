"""The ``segue`` command. Every command is a thin shell over a library function."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Annotated

import orjson
import typer
from rich.console import Console

from segue.conversation import Provider
from segue.listing import find_session, list_sessions
from segue.serialize import conversation_to_json
from segue.session import SessionError, read_session

app = typer.Typer(
    name="segue",
    help="Keep one coding-agent conversation alive across Claude Code and Codex.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _out(obj: object) -> None:
    sys.stdout.buffer.write(orjson.dumps(obj, option=orjson.OPT_INDENT_2) + b"\n")


def _fail(message: str, code: int = 1) -> typer.Exit:
    Console(stderr=True).print(f"segue: {message}", style="red", markup=False, highlight=False)
    return typer.Exit(code)


@app.command()
def sessions(
    provider: Annotated[
        Provider | None, typer.Option("--provider", "-p", help="Only this provider.")
    ] = None,
    cwd: Annotated[
        Path | None,
        typer.Option("--cwd", help="Sessions of this directory (default: the current one)."),
    ] = None,
    all_dirs: Annotated[
        bool, typer.Option("--all", "-a", help="Sessions of every directory.")
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Machine-readable output.")] = False,
) -> None:
    """List Claude Code and Codex sessions, newest first."""
    if all_dirs and cwd is not None:
        raise _fail("give --cwd or --all, not both", 2)
    where = None if all_dirs else (cwd or Path(os.getcwd()))
    listing = list_sessions(provider, where)
    if as_json:
        _out({"sessions": [s.to_json() for s in listing.sessions], "problems": listing.problems})
        return
    console = Console(highlight=False, soft_wrap=True)
    if not listing.sessions:
        scope = "anywhere" if where is None else f"for {where} (try --all)"
        console.print(f"No sessions found {scope}.", markup=False)
    else:
        from segue.render import print_sessions

        print_sessions(console, listing.sessions)
    for problem in listing.problems:
        Console(stderr=True).print(f"skipped {problem}", style="yellow", markup=False)


@app.command()
def show(
    session: Annotated[str, typer.Argument(help="A session id, a unique id prefix, or a path.")],
    as_json: Annotated[bool, typer.Option("--json", help="The neutral model as JSON.")] = False,
    verbose: Annotated[
        bool, typer.Option("--verbose", "-v", help="Also show injected context and records.")
    ] = False,
) -> None:
    """Print one session's decoded conversation."""
    try:
        provider, path = find_session(session)
        conversation = read_session(path, provider)
    except SessionError as exc:
        raise _fail(str(exc)) from None
    if as_json:
        from segue.transforms.effective import effective_history

        effective = effective_history(conversation)
        first = conversation.items.index(effective[0]) if effective else 0
        _out(conversation_to_json(conversation, extra={"effective_from": first}))
        return
    from segue.render import print_conversation

    print_conversation(Console(highlight=False, soft_wrap=True), conversation, verbose)


@app.command()
def switch(
    session: Annotated[str, typer.Argument(help="A session id, a unique id prefix, or a path.")],
    to: Annotated[
        Provider | None,
        typer.Option("--to", help="The provider to move it to (default: the other one)."),
    ] = None,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Show the plan; write nothing.")
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Machine-readable output.")] = False,
    exec_: Annotated[
        bool, typer.Option("--exec", help="Then replace this process with the resume command.")
    ] = False,
) -> None:
    """Move a session to the other provider as a native session it resumes.

    The source provider is never asked for anything and its file is never written."""
    from segue.switch import SwitchError, switch_session

    try:
        result = switch_session(session, to, dry_run=dry_run)
    except SwitchError as exc:
        raise _fail(str(exc)) from None
    if as_json:
        from segue.serialize import switch_to_json

        _out(switch_to_json(result))
    else:
        from segue.render import print_switch

        print_switch(Console(highlight=False, soft_wrap=True), result)
    if exec_ and result.session_id is not None:
        os.chdir(result.cwd)
        try:
            os.execvp(result.resume_argv[0], result.resume_argv)
        except OSError as exc:
            raise _fail(f"cannot run {result.resume_argv[0]}: {exc.strerror}") from None


@app.command()
def demo(
    home: Annotated[
        Path | None, typer.Option("--home", help="Scratch home to use (default: a new one).")
    ] = None,
) -> None:
    """Switch a bundled, recorded Codex session that hit its usage limit to Claude Code,
    in a scratch home, and show the plan, the report and the native file it writes."""
    from segue.demo import run_demo
    from segue.render import print_demo

    print_demo(Console(highlight=False, soft_wrap=True), run_demo(home=home))


def main() -> None:
    app()
