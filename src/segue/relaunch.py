"""Restart an agent's tmux pane on the session a switch wrote for it.

The order is the safety: the switch is already written; then the agent's CLI is ended (SIGTERM,
waited for), and only then is the pane respawned with the target CLI resuming the new session
in the session's directory, and a short message says what happened.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping

from segue.agents import Agent, end_agent
from segue.providers import entry
from segue.switch import Switch
from segue.tmux import TmuxError, display_message, respawn

__all__ = ["relaunch_pane"]

# What the respawned CLI needs of the user's environment (tmux adds its own TERM).
PASSED = ("HOME", "PATH", "LANG", "LC_ALL", "TZ", "USER", "SHELL")
PASSED_PREFIXES = ("ANTHROPIC_", "CLAUDE_", "CODEX_", "OPENAI_", "IS_SANDBOX", "NO_COLOR")


def passed_environment(env: Mapping[str, str]) -> dict[str, str]:
    return {
        name: value
        for name, value in env.items()
        if name in PASSED or name.startswith(PASSED_PREFIXES)
    }


def relaunch_pane(candidate: object, switch: Switch, env: Mapping[str, str]) -> str:
    """End the candidate's agent and start the target CLI on the new session in its pane; a
    line for the user saying what happened (never raises)."""
    agent = getattr(candidate, "agent", None)
    assert isinstance(agent, Agent) and agent.pane is not None and switch.session_id is not None
    pane = agent.pane
    target = entry(switch.target)
    if not end_agent(agent):
        return (
            f"{pane.target}: could not end {agent.provider.value} (pid {agent.pid}); "
            f"continue it with {switch.resume_command}"
        )
    argv = [target.executable(env) or target.command, *target.resume_argv(switch.session_id)[1:]]
    try:
        respawn(pane, switch.cwd, argv, env=passed_environment(env))
    except TmuxError as exc:
        return f"{pane.target}: not relaunched ({exc}); continue it with {switch.resume_command}"
    label = switch.plan.label.value
    with contextlib.suppress(TmuxError):  # no client attached: nothing to show it on
        display_message(pane, f"segue: moved to {target.label} ({label}): {switch.plan.loss_line}")
    return f"{pane.target}: relaunched on {target.label} ({label})"
