"""Restart an agent's tmux pane on the session a switch wrote for it.

The order is the safety: the switch is already written; then the agent's CLI is ended (SIGTERM,
waited for), and only then is the pane respawned with the target CLI resuming the new session
in the session's directory, and a short message says what happened.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping

import psutil

from segue.providers import entry
from segue.running.agents import Agent, end_agent
from segue.running.tmux import TmuxError, display_message, keep_on_exit, respawn
from segue.switch import Switch

__all__ = ["relaunch_pane"]

# tmux sets these itself for the pane; the others are the user's.
NOT_PASSED = frozenset({"TMUX", "TMUX_PANE", "TERM", "COLUMNS", "LINES", "PWD", "OLDPWD", "SHLVL"})


def passed_environment(agent_env: Mapping[str, str], env: Mapping[str, str]) -> dict[str, str]:
    """The environment the target CLI starts with: what the agent ran with in its pane (the
    user's shell there), updated with segue's own (where the user ran the switch, so the
    target CLI's settings and keys are there)."""
    merged = {**agent_env, **env}
    return {name: value for name, value in merged.items() if name not in NOT_PASSED}


def _environment_of(pid: int) -> dict[str, str]:
    try:
        return dict(psutil.Process(pid).environ())
    except psutil.Error:
        return {}


def relaunch_pane(agent: Agent, switch: Switch, env: Mapping[str, str]) -> str:
    """End an agent and start the target CLI on the session its switch wrote, in its pane; a
    line for the user saying what happened (never raises)."""
    assert agent.pane is not None and switch.session_id is not None
    pane = agent.pane
    target = entry(switch.target)
    agent_env = _environment_of(agent.pid)
    try:
        keep_on_exit(pane)  # else the pane (and its window) closes when the agent's CLI ends
    except TmuxError as exc:
        return f"{pane.target}: not relaunched ({exc}); continue it with {switch.resume_command}"
    if not end_agent(agent):
        return (
            f"{pane.target}: could not end {agent.provider.value} (pid {agent.pid}); "
            f"continue it with {switch.resume_command}"
        )
    argv = [target.executable(env) or target.program(env), *target.resume_args(switch.session_id)]
    try:
        respawn(pane, switch.cwd, argv, env=passed_environment(agent_env, env))
    except TmuxError as exc:
        return f"{pane.target}: not relaunched ({exc}); continue it with {switch.resume_command}"
    label = switch.plan.label.value
    with contextlib.suppress(TmuxError):  # no client attached: nothing to show it on
        display_message(pane, f"segue: moved to {target.label} ({label}): {switch.plan.loss_line}")
    return f"{pane.target}: relaunched on {target.label} ({label})"
