"""The ``segue`` command. Every command is a thin shell over a library function, and every
error reaches the user through one handler: one line (a JSON object with ``--json``), never a
traceback."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Annotated, NoReturn

import orjson
import typer
from rich.console import Console

from segue.conversation import Provider
from segue.errors import SegueError

app = typer.Typer(
    name="segue",
    help="Keep one coding-agent conversation alive across Claude Code and Codex.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

JsonOption = Annotated[bool, typer.Option("--json", help="Machine-readable output.")]


def _out(obj: object) -> None:
    sys.stdout.buffer.write(orjson.dumps(obj, option=orjson.OPT_INDENT_2) + b"\n")
    sys.stdout.flush()


def _console() -> Console:
    return Console(highlight=False, soft_wrap=True)


def _stderr() -> Console:
    return Console(stderr=True, highlight=False, soft_wrap=True)


class UsageError(SegueError):
    """The command line itself is wrong (exit status 2)."""


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
    as_json: JsonOption = False,
) -> None:
    """List Claude Code and Codex sessions, newest first."""
    from segue.render import print_sessions
    from segue.serialize import session_info_to_json
    from segue.sessions import list_sessions

    if all_dirs and cwd is not None:
        raise UsageError("give --cwd or --all, not both")
    where = None if all_dirs else (cwd or Path(os.getcwd()))
    listing = list_sessions(provider, where)
    if as_json:
        rows = [session_info_to_json(s) for s in listing.sessions]
        _out({"sessions": rows, "problems": listing.problems})
        return
    console = _console()
    if not listing.sessions:
        scope = "anywhere" if where is None else f"for {where} (try --all)"
        console.print(f"No sessions found {scope}.", markup=False)
    else:
        print_sessions(console, listing.sessions)
    for problem in listing.problems:
        _stderr().print(f"skipped {problem}", style="yellow", markup=False)


@app.command()
def agents(
    sockets: Annotated[
        list[str] | None,
        typer.Option(
            "--socket", "-S", help="Also look in this tmux server's panes (a socket path)."
        ),
    ] = None,
    as_json: JsonOption = False,
) -> None:
    """List the Claude Code and Codex processes running now: session, tmux pane and state."""
    from segue.agents import list_agents
    from segue.render import print_agents
    from segue.serialize import agent_to_json

    found = list_agents(tmux_sockets=sockets or ())
    if as_json:
        _out({"agents": [agent_to_json(a) for a in found]})
        return
    console = _console()
    if not found:
        console.print("No Claude Code or Codex agents are running.", markup=False)
    else:
        print_agents(console, found)


@app.command()
def show(
    session: Annotated[str, typer.Argument(help="A session id, a unique id prefix, or a path.")],
    as_json: Annotated[bool, typer.Option("--json", help="The neutral model as JSON.")] = False,
    verbose: Annotated[
        bool, typer.Option("--verbose", "-v", help="Also show injected context and records.")
    ] = False,
) -> None:
    """Print one session's decoded conversation."""
    from segue.sessions import find_session, read_session

    provider, path = find_session(session)
    conversation = read_session(path, provider)
    if as_json:
        from segue.serialize import conversation_to_json
        from segue.transforms.effective import effective_history

        effective = effective_history(conversation)
        first = conversation.items.index(effective[0]) if effective else 0
        _out(conversation_to_json(conversation, extra={"effective_from": first}))
        return
    from segue.render import print_conversation

    print_conversation(_console(), conversation, verbose)


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
    as_json: JsonOption = False,
    exec_: Annotated[
        bool, typer.Option("--exec", help="Then replace this process with the resume command.")
    ] = False,
) -> None:
    """Move a session to the other provider as a native session it resumes.

    The source provider is never asked for anything and its file is never written."""
    from segue.switch import switch_session

    result = switch_session(session, to, dry_run=dry_run, need_cwd=exec_)
    if as_json:
        from segue.serialize import switch_to_json

        _out(switch_to_json(result))
    else:
        from segue.render import print_switch

        print_switch(_console(), result)
    if exec_ and result.session_id is not None:
        argv = result.resume_argv
        try:
            os.chdir(result.cwd)
            os.execvp(argv[0], argv)
        except OSError as exc:
            raise SegueError(
                f"cannot run {argv[0]} in {result.cwd}: {exc.strerror}; the session was written, "
                f"continue it with: {result.resume_command}"
            ) from None


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

    print_demo(_console(), run_demo(home=home))


def _fail(message: str, code: int, as_json: bool) -> NoReturn:
    line = " ".join(message.split())  # one line, whatever the message held
    if as_json:
        _out({"error": line, "exit_code": code})
    else:
        _stderr().print(f"segue: {line}", style="red", markup=False)
    raise SystemExit(code)


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    as_json = "--json" in args
    try:
        code = app(args=args, standalone_mode=False)
    except typer.TyperException as exc:  # a wrong option or argument
        show = getattr(exc, "show", None)
        if as_json or show is None:
            _fail(exc.format_message(), exc.exit_code, as_json)
        show()
        raise SystemExit(exc.exit_code) from None
    except UsageError as exc:
        _fail(str(exc), 2, as_json)
    except SegueError as exc:
        _fail(str(exc), 1, as_json)
    except typer.Abort:
        _fail("aborted", 1, as_json)
    except KeyboardInterrupt:
        _fail("interrupted", 130, as_json)
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        raise SystemExit(1) from None
    except Exception as exc:  # a bug: still one line, with a way to see the traceback
        if os.environ.get("SEGUE_DEBUG"):
            raise
        _fail(
            f"internal error: {type(exc).__name__}: {exc} (SEGUE_DEBUG=1 shows where)", 70, as_json
        )
    if isinstance(code, int) and code:
        raise SystemExit(code)
