"""Restart an agent's tmux pane on the session a switch wrote for it.

The order is the safety: the switch is already written; then the agent's CLI is ended (SIGTERM,
waited for), and only then is the pane respawned with the target CLI resuming the new session
in the session's directory, and a short message says what happened.
"""

from __future__ import annotations

import contextlib
import os
import shlex
from collections.abc import Collection, Mapping

import psutil

from segue.providers import entry
from segue.running.agents import Agent, end_agent, home_variables, in_home
from segue.running.tmux import TmuxError, display_message, keep_on_exit, respawn
from segue.switch import Switch

__all__ = ["relaunch_on_model", "relaunch_pane"]

# tmux sets these itself for the pane; the others are the user's.
NOT_PASSED = frozenset({"TMUX", "TMUX_PANE", "TERM", "COLUMNS", "LINES", "PWD", "OLDPWD", "SHLVL"})


def passed_environment(
    agent_env: Mapping[str, str], env: Mapping[str, str], own: Collection[str] = ()
) -> dict[str, str]:
    """The environment the target CLI starts with: what the agent ran with in its pane (the
    user's shell there), updated with segue's own (where the user ran the switch, so the
    target CLI's settings and keys are there), but for the variables ``own``, kept as the agent
    had them (an agent of another home: its homes, where its switch was written)."""
    merged = {**agent_env, **env}
    for name in own:
        if name in agent_env:
            merged[name] = agent_env[name]
        else:
            merged.pop(name, None)
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
    executable = target.executable(env)
    if executable is None:  # the agent is not ended for a CLI that cannot be started
        return (
            f"{pane.target}: not relaunched ({target.not_installed()}); continue it with "
            f"{switch.resume_command}"
        )
    agent_env = _environment_of(agent.pid)
    # an agent of another home runs on in its own homes, where its switch was written
    own = [] if in_home(agent, env) else home_variables()
    agent_env = {**agent_env, **agent.env_home} if own else agent_env
    try:
        keep_on_exit(pane)  # else the pane (and its window) closes when the agent's CLI ends
    except TmuxError as exc:
        return f"{pane.target}: not relaunched ({exc}); continue it with {switch.resume_command}"
    if not end_agent(agent):
        return (
            f"{pane.target}: could not end {agent.provider.value} (pid {agent.pid}); "
            f"continue it with {switch.resume_command}"
        )
    argv = [executable, *target.resume_args(switch.session_id)]
    try:
        respawn(pane, switch.cwd, argv, env=passed_environment(agent_env, env, own))
    except TmuxError as exc:
        return f"{pane.target}: not relaunched ({exc}); continue it with {switch.resume_command}"
    label = switch.plan.label.value
    with contextlib.suppress(TmuxError):  # no client attached: nothing to show it on
        display_message(pane, f"segue: moved to {target.label} ({label}): {switch.plan.loss_line}")
    return f"{pane.target}: relaunched on {target.label} ({label})"


def relaunch_on_model(agent: Agent, model: str, env: Mapping[str, str]) -> str:
    """End an agent and start its CLI again on the same session with ``model`` (a model switch
    when one family's limit is used up); a line for the user saying what happened (never
    raises)."""
    assert agent.pane is not None and agent.session_id is not None
    pane = agent.pane
    e = entry(agent.provider)
    executable = e.executable(env)
    tail = [*e.resume_args(agent.session_id), *e.model_args(model)]
    again = shlex.join([e.program(env), *tail])
    if executable is None:  # the agent is not ended for a CLI that cannot be started
        return f"{pane.target}: not relaunched ({e.not_installed()}); run {again}"
    argv = [executable, *tail]
    agent_env = _environment_of(agent.pid)
    try:
        keep_on_exit(pane)
    except TmuxError as exc:
        return f"{pane.target}: not relaunched ({exc}); continue it with {again}"
    if not end_agent(agent):
        return f"{pane.target}: could not end {agent.provider.value} (pid {agent.pid}); run {again}"
    try:
        respawn(pane, agent.cwd or os.getcwd(), argv, env=passed_environment(agent_env, env))
    except TmuxError as exc:
        return f"{pane.target}: not relaunched ({exc}); continue it with {again}"
    with contextlib.suppress(TmuxError):
        display_message(pane, f"segue: relaunched on {model} (a model family's limit is used up)")
    return f"{pane.target}: relaunched on {model}"
