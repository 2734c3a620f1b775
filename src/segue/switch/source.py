"""Step 1 of a switch, **source**: the session found and read, once.

The session a reference names (an id, a unique id prefix or a path) is found, followed to the
file it continues in now, and read through :class:`segue.providers.sessions.SessionReads`, which
serves every later ask for the same file. Right before a switch writes, the machine is asked
afresh whether the session's CLI is in the middle of a turn (:func:`refuse_mid_turn`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import msgspec

from segue.formats.stamp import Stamp
from segue.model.conversation import Conversation, Provider
from segue.model.errors import SessionError, SwitchError
from segue.providers import entry
from segue.providers.sessions import SessionReads, current_session, find_session
from segue.running.agents import Agent, working_on
from segue.running.target import default_target

__all__ = ["Source", "find_source", "read_source", "refuse_mid_turn"]


class Source(msgspec.Struct, frozen=True):
    """The session being switched, read once."""

    provider: Provider
    path: Path  # the file it continues in now
    native_id: str
    conversation: Conversation
    stamp: Stamp | None


def find_source(
    ref: str, to: Provider | None, env: Mapping[str, str], within: bool = False
) -> tuple[Provider, Path, Provider]:
    """The session ``ref`` names, and the provider it moves to (default: another one)."""
    try:
        provider, path = find_session(ref, env)
    except SessionError as exc:
        raise SwitchError(str(exc)) from None
    target = default_target(provider, env) if to is None else to
    if provider is target and not within:
        raise SwitchError(f"{path} is already a {target.value} session")
    return provider, path, target


def read_source(
    provider: Provider, path: Path, reads: SessionReads, env: Mapping[str, str]
) -> Source:
    """The session, in the file it continues in now, read once."""
    current, native_id = current_session(provider, path, env)
    try:
        conversation = reads.read(current, provider)
    except SessionError as exc:
        raise SwitchError(str(exc)) from None
    return Source(provider, current, native_id, conversation, reads.stamp(current))


def refuse_mid_turn(
    source: Source, env: Mapping[str, str], agents: Sequence[Agent] | None = None
) -> None:
    """Refuse the switch of a session its CLI is in the middle of a turn of, as ``agents`` say
    or, by default, as the machine is now: the processes looked at afresh, each one's state
    read from its own word (Claude Code's ``busy``) and from the session file as it is now,
    whatever an earlier scan or an earlier read of the file said (a switch that writes calls it
    under its locks, right before it writes)."""
    agent = working_on(source.provider, source.native_id, source.path, agents=agents, env=env)
    if agent is not None:
        raise SwitchError(
            f"{source.provider.value} session {source.native_id} is mid-turn: "
            f"{entry(source.provider).label} (pid {agent.pid}) is still working on it; "
            "switch it when the turn has ended"
        )
