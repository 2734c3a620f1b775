"""The ``segue`` command. Every command is a thin shell over a library function, and every
error reaches the user through one handler: one line (a JSON object with ``--json``), never a
traceback."""

from __future__ import annotations

import errno
import os
import sys
from dataclasses import dataclass
from datetime import UTC, datetime
from enum import StrEnum
from pathlib import Path
from typing import Annotated, NoReturn

from segue.cli import terminal
from segue.cli.grammar import (
    Argument,
    Group,
    Option,
    Options,
    UsageError,
    option_names,
    writable_stdout,
)
from segue.cli.options import (
    PROVIDER,
    JsonOption,
    RedactOption,
    picked,
    print_json,
    printable,
    terminal_answer,
    visible,
)
from segue.model.conversation import Provider
from segue.model.errors import SegueError
from segue.support import collector

app = Group("segue", "Keep one coding-agent conversation alive across Claude Code and Codex.")

ShowSecrets = Annotated[
    bool,
    Option(
        "--show-secrets",
        help="Print detected secrets (API keys, tokens, private keys) instead of masking them.",
    ),
]


class Arrival(StrEnum):
    AUTO = "auto"
    ON = "on"
    OFF = "off"


@app.command()
def sessions(
    provider: Annotated[
        Provider | None,
        Option("--provider", "-p", kind=PROVIDER, help="Only this provider."),
    ] = None,
    cwd: Annotated[
        Path | None,
        Option("--cwd", help="Sessions of this directory (default: the current one)."),
    ] = None,
    all_dirs: Annotated[bool, Option("--all", "-a", help="Sessions of every directory.")] = False,
    as_json: JsonOption = False,
    show_secrets: ShowSecrets = False,
) -> None:
    """List Claude Code and Codex sessions, newest first."""
    from segue.cli.documents import session_info_to_json
    from segue.cli.render import print_sessions
    from segue.providers.sessions import list_sessions, remembered_peeks

    if all_dirs and cwd is not None:
        raise UsageError("give --cwd or --all, not both")
    where = None if all_dirs else (cwd or Path(os.getcwd()))
    with remembered_peeks(persist=True):  # a file unchanged since the last listing: not read
        listing = list_sessions(provider, where)
    if as_json:
        rows = [session_info_to_json(s) for s in listing.sessions]
        print_json({"sessions": rows, "problems": listing.problems})
        return
    if listing.sessions:
        print_sessions(terminal.console(), listing.sessions, show_secrets)
    else:
        scope = "anywhere" if where is None else f"for {where} (try --all)"
        terminal.console().print(f"No sessions found {scope}.")
    for problem in listing.problems:
        terminal.console(stderr=True).print(f"skipped {problem}", style="yellow")


@app.command()
def agents(
    sockets: Annotated[
        list[str] | None,
        Option("--socket", "-S", help="Also look in this tmux server's panes (a socket path)."),
    ] = None,
    as_json: JsonOption = False,
) -> None:
    """List the Claude Code and Codex processes running now, whatever their home: session,
    tmux pane and state."""
    from segue.cli.documents import agent_to_json
    from segue.cli.render import print_agents
    from segue.running.agents import list_agents

    found = list_agents(tmux_sockets=sockets or (), every_home=True)
    if as_json:
        print_json({"agents": [agent_to_json(a) for a in found]})
    elif found:
        print_agents(terminal.console(), found)
    else:
        terminal.console().print("No Claude Code or Codex agents are running.")


@app.command()
def show(
    session: Annotated[str, Argument(help="A session id, a unique id prefix, or a path.")],
    as_json: Annotated[bool, Option("--json", help="The neutral model as JSON.")] = False,
    verbose: Annotated[
        bool, Option("--verbose", "-v", help="Also show injected context and records.")
    ] = False,
    show_secrets: ShowSecrets = False,
) -> None:
    """Print one session's decoded conversation."""
    from segue.model.codec import conversation_to_json
    from segue.providers.sessions import find_session, read_session
    from segue.transforms.effective import effective_history

    provider, path = find_session(session)
    conversation = read_session(path, provider)
    if as_json:
        effective = effective_history(conversation)
        first = conversation.items.index(effective[0]) if effective else 0
        print_json(conversation_to_json(conversation, extra={"effective_from": first}))
        return
    from segue.cli.render import print_conversation  # (rich: not for a document)

    print_conversation(terminal.console(), conversation, verbose, show_secrets)


@dataclass(frozen=True)
class SwitchOptions:
    """``segue switch``'s options: one session's switch and a fleet's take them."""

    to: Annotated[
        Provider | None,
        Option("--to", kind=PROVIDER, help="The provider to move to (default: the other one)."),
    ] = None
    from_: Annotated[
        Provider | None,
        Option(
            "--from",
            kind=PROVIDER,
            help="Move a fleet off this provider (default: the exhausted one).",
        ),
    ] = None
    all_: Annotated[
        bool, Option("--all", help="Every session of the source provider, in any directory.")
    ] = False
    cwd: Annotated[
        Path | None, Option("--cwd", help="The source provider's sessions of this directory.")
    ] = None
    under: Annotated[
        Path | None,
        Option(
            "--under", help="Only the sessions and agents working in this directory or below it."
        ),
    ] = None
    yes: Annotated[bool, Option("--yes", "-y", help="Confirm the whole batch.")] = False
    dry_run: Annotated[bool, Option("--dry-run", help="Show the plan; write nothing.")] = False
    as_json: JsonOption = False
    exec_: Annotated[
        bool, Option("--exec", help="Then replace this process with the resume command.")
    ] = False
    relaunch: Annotated[
        bool,
        Option("--relaunch", help="Restart each agent's tmux pane on its new session."),
    ] = False
    arrival_compact: Annotated[
        Arrival | None,
        Option(
            "--arrival-compact",
            help="Compact on the target after arriving: auto (above half its window), on or "
            "off (default: auto for a fleet, off for one session).",
        ),
    ] = None
    source_compact: Annotated[
        bool,
        Option("--source-compact", help="Ask the source CLI to compact first (opt-in)."),
    ] = False
    return_: Annotated[
        bool, Option("--return", help="Move a batch's agents back (default: the latest).")
    ] = False
    force: Annotated[
        bool,
        Option(
            "--force",
            help="With --return: move them back even to a provider segue reads as still exhausted.",
        ),
    ] = False
    clean: Annotated[
        bool,
        Option("--clean", help="A clean context: a new session, never an earlier one."),
    ] = False
    redact_secrets: RedactOption = False
    summary_by: Annotated[
        str | None,
        Option(
            "--summary-by",
            help="Who writes a summary handoff: claude, codex, left or entered "
            "(default: segue's deterministic summary).",
        ),
    ] = None


_SWITCH_OPTIONS = SwitchOptions()


@app.command()
def switch(
    sessions: Annotated[
        list[str] | None,
        Argument(help="Session ids, unique id prefixes or paths (with --return: a batch)."),
    ] = None,
    options: Annotated[SwitchOptions, Options()] = _SWITCH_OPTIONS,
) -> None:
    """Move a session, or a whole fleet of agents, to the other provider as native sessions.

    The source provider is never asked for anything (unless --source-compact) and its files
    are never written."""
    o, names = options, sessions or []
    fleet = bool(o.from_ or o.all_ or o.cwd or o.under or o.return_ or o.relaunch)
    # the same checks whichever mode: every value first, then what each mode cannot do
    if o.summary_by is not None:
        from segue.switch.summaries import summary_by_choices

        if o.summary_by not in summary_by_choices():
            raise UsageError(f"--summary-by takes {', '.join(summary_by_choices())}")
    if o.exec_ and o.dry_run:
        raise UsageError(
            "--exec starts the target CLI on the switched session; --dry-run writes none"
        )
    if o.exec_ and o.as_json:
        raise UsageError(
            "--exec hands this terminal to the target CLI; --json prints a document for a "
            "program (its resume command is in it)"
        )
    if o.under is not None and o.return_:
        raise UsageError("--under chooses a fleet; --return takes back the batch it names")
    if o.force and not o.return_:
        raise UsageError(
            "--force takes a batch back to a provider still exhausted; it goes with --return"
        )
    if not fleet and len(names) == 1:
        _switch_one(names[0], o)
        return
    if o.summary_by is not None:
        raise UsageError("--summary-by applies to the switch of one session")
    if o.exec_:
        raise UsageError("--exec switches one session; a fleet is relaunched with --relaunch")
    _switch_fleet(names, o)


def _switch_one(session: str, o: SwitchOptions) -> None:
    from segue.cli.documents import switch_to_json
    from segue.switch import switch_session

    notes: list[str] = []
    if o.source_compact and not o.dry_run:
        from segue.fleet.batch import compact_source

        notes.append(compact_source(session))
    result = switch_session(
        session,
        o.to,
        dry_run=o.dry_run,
        clean=o.clean,
        need_cwd=o.exec_,
        redact_secrets=o.redact_secrets,
        summary_by=o.summary_by,
    )
    arrival = o.arrival_compact or Arrival.OFF
    if result.written and not o.dry_run and arrival is not Arrival.OFF:
        from segue.fleet.batch import ArrivalCompact, arrival_compaction

        note = arrival_compaction(result, ArrivalCompact(arrival.value))
        if note:
            notes.append(note)
    result.plan.notes += notes
    if o.as_json:
        print_json(switch_to_json(result))
    else:
        from segue.cli.render import print_switch  # (rich: not for a document)

        print_switch(terminal.console(), result, result.thread)
    if o.exec_ and not o.dry_run and result.session_id is not None:
        argv = result.resume_argv
        try:
            os.chdir(result.cwd)
            os.execvp(argv[0], argv)
        except OSError as exc:
            raise SegueError(
                f"cannot run {argv[0]} in {result.cwd}: {exc.strerror}; the session was written, "
                f"continue it with: {result.resume_command}"
            ) from None


def _switch_fleet(sessions: list[str], o: SwitchOptions) -> None:
    """A fleet switch: preview, one confirmation, the batch, the tally (the work is
    :mod:`segue.fleet.batch`). Exits 1 when any agent's switch failed (the batch itself always
    goes on past one). A return to a provider still exhausted is refused in one line (a dry run
    shows it under the plan) unless ``--force``."""
    from segue.cli.documents import fleet_to_json
    from segue.cli.render import print_fleet_plan, print_fleet_result
    from segue.fleet import batch

    if o.return_:
        plan = batch.return_plan(
            sessions[0] if sessions else None,
            target=o.to,
            redact_secrets=o.redact_secrets,
            clean=o.clean,
            dry_run=o.dry_run,
            check_usage=True,
        )
        if plan.blocked and not o.dry_run and not o.force:
            raise SegueError(
                f"{plan.blocked}: nothing was moved back (--force moves them back anyway)"
            )
    else:
        plan = batch.plan_fleet(
            o.from_,
            o.to,
            sessions=sessions,
            cwd=None if o.cwd is None else str(o.cwd),
            all_sessions=o.all_,
            redact_secrets=o.redact_secrets,
            under=None if o.under is None else str(o.under),
            clean=o.clean,
        )
    if o.source_compact:
        batch.check_source_compact(plan)
    console = terminal.console()
    if not o.as_json:
        print_fleet_plan(console, plan)
        if not plan.to_switch:
            console.print("Nothing to switch.")
        if plan.blocked:  # a return's provider is still exhausted
            warning = f"warning: {plan.blocked}; only --force moves them back now"
            console.print(warning, style="yellow")
    if o.dry_run or not plan.to_switch:
        if o.as_json:
            print_json(fleet_to_json(plan))
        if plan.failing and not o.dry_run:
            raise SystemExit(1)
        return
    n = len(plan.to_switch)
    question = f"Switch {n} session{'s' if n != 1 else ''} to {plan.target.value}? [y/N] "
    if not o.yes and (o.as_json or terminal_answer(question) is not True):
        raise SegueError(f"nothing switched: confirm the {n} switches with --yes")
    result = batch.run_fleet(
        plan,
        relaunch=o.relaunch,
        arrival_compact=batch.ArrivalCompact((o.arrival_compact or Arrival.AUTO).value),
        source_compact=o.source_compact,
        force=o.force,
    )
    if o.as_json:
        print_json(fleet_to_json(result.plan, result))
    else:
        print_fleet_result(console, result)
    if result.failed:
        raise SystemExit(1)


@app.command()
def batches(
    batch: Annotated[
        str | None,
        Argument(help="Show this batch: an id or a unique id prefix (default: list them)."),
    ] = None,
    as_json: JsonOption = False,
) -> None:
    """List the recorded batches of fleet switches, newest first, or show one batch's agents.

    The store is $SEGUE_DATABASE_URL, else segue.db in segue's data folder."""
    from segue.cli.documents import batch_summary_to_json, batch_to_json
    from segue.store import open_store
    from segue.watch import watch_batches

    with open_store() as store:
        if batch is None:
            summaries = store.list_batches()
        else:
            found = store.find_batch(batch)
        by_watch = watch_batches(store)
    if as_json and batch is None:
        rows = [{**batch_summary_to_json(s), "watch": by_watch.get(s.id)} for s in summaries]
        print_json({"batches": rows})
        return
    if as_json:
        print_json(batch_to_json(found))
        return
    from segue.cli.render import print_batch, print_batches  # (rich: not for a document)

    if batch is not None:
        print_batch(terminal.console(), found)
    elif summaries:
        print_batches(terminal.console(), summaries, by_watch)
    else:
        terminal.console().print("No batches recorded yet.")


@app.command()
def usage(
    as_json: JsonOption = False,
    offline: Annotated[
        bool,
        Option("--offline", help="Only the session files and local caches; ask no service."),
    ] = False,
) -> None:
    """How much of each provider's usage windows is used, and whether one is exhausted.

    Sources: the newest session files, Claude's OAuth usage endpoint (cached a minute) and
    Claude Code's own cache, and Codex's own app-server. One that cannot answer is a note."""
    from segue.cli.documents import usage_to_json
    from segue.running.usage import read_usage

    now = datetime.now(UTC)
    usages = read_usage(now=now, remote=not offline)
    if as_json:
        print_json(usage_to_json(usages))
        return
    from segue.cli.render import print_usage  # (rich: not for a document)

    print_usage(terminal.console(), usages, now)


@app.command()
def run(
    prompt: Annotated[str, Argument(help="The prompt of the run (after --, it may start with -).")],
    thread: Annotated[
        str | None,
        Option(
            "--thread",
            help="A thread id or prefix, or a session it holds (default: this folder's).",
        ),
    ] = None,
    provider: Annotated[
        Provider | None,
        Option(
            "--provider",
            kind=PROVIDER,
            help="Where to run it (default: where the last run ran).",
        ),
    ] = None,
    as_json: JsonOption = False,
) -> None:
    """Run one headless turn of an app thread on a provider, through the thread's strategy."""
    from segue.cli.documents import thread_move_to_json
    from segue.run import run_turn

    result = run_turn(prompt, thread=thread, provider=provider)
    failed = result.returncode != 0 or result.status == "failed"
    if as_json:
        keys = "thread=thread_id provider session_id run=run_ordinal status returncode output"
        print_json(
            {
                **picked(result, keys),
                "error": result.error if failed else None,
                "warnings": list(result.warnings),
                "move": thread_move_to_json(result.move),
                "exit_code": 1 if failed else 0,
            }
        )
    else:
        if result.output:
            sys.stdout.write(printable(result.output.removesuffix("\n") + "\n"))
        how = f" ({result.move.strategy})" if result.move else ""
        err = terminal.console(stderr=True)
        for warning in result.warnings:
            err.print(f"warning: {warning}", style="yellow")
        status = f", {result.status}" if result.status else ", not recorded"
        err.print(
            f"run {result.run_ordinal or '-'} of thread {result.thread_id} on "
            f"{result.provider.value}{how}, session {result.session_id}{status}",
            style="dim",
        )
        if failed:
            ended = f"{result.provider.value} ended with exit code {result.returncode}"
            _fail(result.error or ended, 1, False)
    if failed:
        raise SystemExit(1)


@app.command()
def demo(
    home: Annotated[
        Path | None, Option("--home", help="Scratch home to use (default: a new one).")
    ] = None,
) -> None:
    """Switch a bundled, recorded Codex session that hit its usage limit to Claude Code,
    in a scratch home, and show the plan, the report and the native file it writes."""
    from segue.cli.render import print_demo
    from segue.demo import run_demo

    print_demo(terminal.console(), run_demo(home=home))


# the other commands, each imported only when a line names it (or the help lists them all)
app.entries.update(
    thread="segue.cli.threads:thread_app",
    hooks="segue.cli.rewind:hooks_app",
    checkpoint="segue.cli.rewind:checkpoint_command",
    checkpoints="segue.cli.rewind:checkpoints_command",
    rollback="segue.cli.rewind:rollback_command",
    fork="segue.cli.rewind:fork_command",
    watch="segue.cli.watch:watch_command",
    tui="segue.cli.watch:tui_command",
)


def _fail(message: str, code: int, as_json: bool) -> NoReturn:
    line = " ".join(message.split())  # one line, whatever the message held
    try:
        if as_json:
            try:
                print_json({"error": line, "exit_code": code})
            except (OSError, ValueError, SegueError):  # no stdout to say it on: stderr
                as_json = False
        if not as_json:
            terminal.console(stderr=True).print(f"segue: {visible(line)}", style="red")
    except (OSError, ValueError, SegueError):
        pass  # nowhere left to say it: the exit status says it
    raise SystemExit(code)


# what a write to a full disk, a broken device or a closed descriptor says: the output is lost
_OUTPUT_ERRNOS = frozenset({errno.ENOSPC, errno.EIO, errno.EBADF, errno.EDQUOT})


def main(argv: list[str] | None = None) -> None:
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] not in (["watch"], ["tui"]):  # (their process goes on: not one command)
        collector.one_command()
    options = args[: args.index("--")] if "--" in args else args  # (after --, none is one)
    as_json = "--json" in options
    try:
        try:
            command, values = app.parse(args)
        except UsageError as exc:
            # a wrong run line with a word that starts with - and is none of its options: a
            # prompt taken for an option (one that holds a space, "- fix it", is a prompt already)
            typed = {word.split("=", 1)[0] for word in options[1:] if word.startswith("-")}
            if args[:1] == ["run"] and typed - option_names(run):
                raise UsageError(
                    f"{exc}; a prompt that starts with - goes after --: segue run -- PROMPT"
                ) from None
            raise
        writable_stdout()  # (started with it closed: the command's output would be lost)
        command(**values)
        sys.stdout.flush()  # (a failure to write what is left is said here, as one line)
    except SegueError as exc:  # a UsageError among them: exit status 2
        _fail(str(exc), 2 if isinstance(exc, UsageError) else 1, as_json)
    except KeyboardInterrupt:
        _fail("interrupted", 130, as_json)
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        raise SystemExit(1) from None
    except Exception as exc:  # a bug: still one line, with a way to see the traceback
        if isinstance(exc, OSError) and exc.errno in _OUTPUT_ERRNOS and exc.filename is None:
            _fail(f"cannot write the output: {exc.strerror}", 1, False)
        if os.environ.get("SEGUE_DEBUG"):
            raise
        what = f"{type(exc).__name__}: {exc}"
        _fail(f"internal error: {what} (SEGUE_DEBUG=1 shows where)", 70, as_json)
