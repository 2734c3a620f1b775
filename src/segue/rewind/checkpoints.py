"""``segue checkpoint``, ``segue checkpoints`` and ``segue hooks``: take a checkpoint of a
thread's workspace now, list a thread's checkpoints, and install the CLIs' end-of-turn hooks
that take one as each turn ends (``segue hook PROVIDER`` is what they run).

A checkpoint taken here follows the thread's newest run: *exact* when the CLI's own end-of-turn
hook asks for it (``segue hooks install``), else *approximate* (the folder as it is now, which
may hold edits made since the run ended). The thread is synced with its sessions first, under
its lock, so the newest run is the one on disk.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path

import msgspec
import orjson

from segue.model.conversation import Provider
from segue.model.errors import CheckpointError, ConfigError, SegueError
from segue.providers import all_entries, entry, known
from segue.providers.hooks import HookChange, HookEvent, HookKind
from segue.store import open_store
from segue.support.state_dir import state_dir
from segue.switch.journal import open_recording
from segue.switch.locks import LOCK_WAIT_VARIABLE, thread_lock
from segue.threads.checkpoints import (
    RUN_THREAD_VARIABLE,
    Checkpoint,
    CheckpointKind,
    diff_line,
    list_checkpoints,
    take_checkpoint,
)
from segue.threads.repository import ThreadStore
from segue.threads.syncing import sync, thread_for


class Taken(msgspec.Struct, frozen=True):
    thread_id: str
    checkpoint: Checkpoint
    notes: tuple[str, ...] = ()


class Checkpoints(msgspec.Struct, frozen=True):
    thread_id: str
    folder: str | None
    checkpoints: tuple[Checkpoint, ...]


def checkpoint_now(
    ref: str | None = None,
    *,
    exact: bool = False,
    cwd: str | None = None,
    env: Mapping[str, str] | None = None,
) -> Taken:
    """Checkpoint the thread ``ref`` names (a thread id or prefix, or a session it holds;
    default: the thread of the newest session in ``cwd``) as its newest run's."""
    env = dict(os.environ) if env is None else dict(env)
    store, recorded = open_recording(env)
    with store:
        thread_id = thread_for(store, ref, cwd or os.getcwd(), env)
    with thread_lock(thread_id, env), open_store(env=env) as store:
        synced = sync(store, thread_id, env)
        kind = CheckpointKind.EXACT if exact else CheckpointKind.APPROXIMATE
        taken = take_checkpoint(store, synced.graph, env, kind)
    if taken.checkpoint is None:
        if taken.note is None:
            raise CheckpointError(
                f"thread {thread_id} is mid-turn: its newest run has not ended (checkpoint it "
                "when it has)"
            )
        raise CheckpointError(taken.note.removeprefix("no checkpoint: "))
    notes = (*recorded, *synced.notes, *([taken.note] if taken.note else []))
    return Taken(thread_id, taken.checkpoint, notes)


def list_thread_checkpoints(
    ref: str | None = None, *, cwd: str | None = None, env: Mapping[str, str] | None = None
) -> Checkpoints:
    """The checkpoints of the thread ``ref`` names (default: the thread of the newest session in
    ``cwd``), oldest first."""
    env = dict(os.environ) if env is None else dict(env)
    store, _ = open_recording(env)
    with store:
        thread_id = thread_for(store, ref, cwd or os.getcwd(), env)
        graph = ThreadStore(store).graph(thread_id)
        found = list_checkpoints(store, thread_id)
    return Checkpoints(thread_id, graph.thread.cwd, tuple(found))


# ----------------------------------------------------------------------------- the CLIs' hooks

HOOK_LOCK_WAIT_S = "5"
_LOG_CAP = 1 << 20


def install_hooks(
    providers: Sequence[Provider] | None = None,
    *,
    dry_run: bool = False,
    env: Mapping[str, str] | None = None,
) -> list[tuple[Provider, HookChange | None]]:
    """``segue hooks install``: each CLI's end-of-turn hook, merged into its settings."""
    # (what the hook runs: this Python's segue, whatever the PATH of the CLI)
    run = [sys.executable, "-m", "segue", "hook"]
    return _each(
        providers, env, lambda p, env: entry(p).install_hooks(env, [*run, p.value], dry_run=dry_run)
    )


def uninstall_hooks(
    providers: Sequence[Provider] | None = None,
    *,
    dry_run: bool = False,
    env: Mapping[str, str] | None = None,
) -> list[tuple[Provider, HookChange | None]]:
    """``segue hooks uninstall``: exactly what ``install`` put in, taken out."""
    return _each(providers, env, lambda p, env: entry(p).uninstall_hooks(env, dry_run=dry_run))


def _each(
    providers: Sequence[Provider] | None,
    env: Mapping[str, str] | None,
    change: Callable[[Provider, dict[str, str]], HookChange | None],
) -> list[tuple[Provider, HookChange | None]]:
    """Each CLI's change (default: every provider's); a settings file that cannot be changed is
    reported, and the other CLIs are still done."""
    env = dict(os.environ) if env is None else dict(env)
    done: list[tuple[Provider, HookChange | None]] = []
    for p in list(providers) if providers else [e.provider for e in all_entries()]:
        try:
            done.append((p, change(p, env)))
        except ConfigError as exc:
            message = " ".join(str(exc).split())
            where = Path(message.split(": ", 1)[0]) if ": " in message else Path()
            done.append((p, HookChange(where, False, "left as it is", error=message)))
    return done


class HookOutcome(msgspec.Struct, frozen=True):
    event: HookEvent
    checkpoint: Checkpoint | None
    what: str  # one line for the hook log


def handle_hook(
    provider_name: str, args: Sequence[str], stdin: bytes, env: Mapping[str, str] | None = None
) -> HookOutcome:
    """``segue hook PROVIDER …``, run by a CLI's hook: checkpoint the session's thread as the
    turn's exact end, note a usage limit for ``segue watch``, then run the user's own program
    the hook replaced (Codex's notify). Never raises: a hook must not disturb the CLI; what
    happened goes to ``hooks.log`` in segue's state folder."""
    env = dict(os.environ) if env is None else dict(env)
    env.setdefault(LOCK_WAIT_VARIABLE, HOOK_LOCK_WAIT_S)
    try:
        provider = known(provider_name)
    except ValueError:
        outcome = HookOutcome(
            HookEvent(HookKind.OTHER), None, f"unknown provider {provider_name!r}"
        )
        _log(env, provider_name, outcome.what)
        return outcome
    event = entry(provider).hook_event(args, stdin)
    checkpoint: Checkpoint | None = None
    what = f"{event.detail or event.kind.value}: nothing to do"
    try:
        if event.kind is HookKind.LIMIT:
            _signal(env, provider, event)
        ref = event.transcript or event.session_id
        if event.kind is HookKind.OTHER or ref is None:
            pass
        elif env.get(RUN_THREAD_VARIABLE):
            what = f"{event.detail}: segue run takes this turn's checkpoint itself"
        else:
            taken = checkpoint_now(ref, exact=True, cwd=event.cwd, env=env)
            checkpoint = taken.checkpoint
            what = f"{event.detail}: thread {taken.thread_id}, {diff_line(checkpoint)}"
    except SegueError as exc:
        what = f"{event.detail}: {' '.join(str(exc).split())}"
    except Exception as exc:  # a bug must not reach the CLI either
        what = f"{event.detail}: internal error: {type(exc).__name__}: {exc}"
    if event.then:
        what += _run_theirs(event)
    _log(env, provider.value, what)
    return HookOutcome(event, checkpoint, what)


def _run_theirs(event: HookEvent) -> str:
    argv = [*event.then, *([event.payload] if event.payload is not None else [])]
    try:
        subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
    except OSError as exc:
        return f"; your notify program {event.then[0]} did not start: {exc.strerror}"
    return f"; ran your notify program {event.then[0]}"


def _append(path: Path, line: str) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        if path.exists() and path.stat().st_size > _LOG_CAP:
            os.replace(path, path.with_name(path.name + ".1"))
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW, 0o600)
        try:
            os.write(fd, line.encode("utf-8", "replace"))
        finally:
            os.close(fd)
    except OSError:
        pass  # nowhere to say it: a hook stays quiet


def _log(env: Mapping[str, str], provider: str, what: str) -> None:
    now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    _append(state_dir(env) / "hooks.log", f"{now} {provider}: {' '.join(what.split())}\n")


def _signal(env: Mapping[str, str], provider: Provider, event: HookEvent) -> None:
    """A usage limit a CLI's hook reported, for ``segue watch`` (one JSON line)."""
    line = orjson.dumps(
        {
            "at": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "provider": provider.value,
            "kind": "limit",
            "session": event.session_id,
            "cwd": event.cwd,
            "detail": event.detail,
            "message": event.message,
        }
    ).decode()
    _append(state_dir(env) / "signals.jsonl", line + "\n")
