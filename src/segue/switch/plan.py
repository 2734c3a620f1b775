"""What a switch carries and loses: the plan of a conversation for a target, and the in-memory
switch of a conversation that is no session file (no thread, no store)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path

from segue.model.conversation import Compaction, Conversation, Provider
from segue.model.errors import SwitchError
from segue.providers import entry
from segue.switch.result import Switch
from segue.transforms.budget import TargetProfile
from segue.transforms.plan import Plan, make_plan
from segue.transforms.redact import redact_items, redact_own_summaries, scan_items
from segue.transforms.shrink import MARKER_TRIGGER
from segue.transforms.turns import prompts

__all__ = ["checked_cwd", "plan_switch", "switch_conversation"]


def plan_switch(
    conversation: Conversation,
    to: Provider,
    *,
    profile: TargetProfile | None = None,
    env: Mapping[str, str] | None = None,
    cwd: str | None = None,
    redact_secrets: bool = False,
) -> Plan:
    """What a switch of ``conversation`` to ``to`` would carry and lose, for the target as the
    user has it configured for ``cwd`` (default: the conversation's own), or for ``profile``.
    Pure apart from reading the target's config.

    Secrets in what it carries are counted by kind (``plan.secrets``). They are replaced by
    markers in the summaries segue writes itself (the index of dropped turns) always, and
    everywhere with ``redact_secrets``. Only the carried items are scanned: after the shrink
    ladder, a few MB at most, whatever the size of the source."""
    target = entry(to)
    if profile is None:
        where = cwd or conversation.meta.cwd
        profile = target.target_profile(os.environ if env is None else env, where)
    plan = make_plan(conversation, profile, target.select)
    found = scan_items(plan.items)
    plan.secrets = found.counts
    plan.secrets_redacted = redact_secrets
    if redact_secrets:
        plan.items = redact_items(plan.items, found)
    own = [i for i in plan.items if isinstance(i, Compaction) and i.trigger == MARKER_TRIGGER]
    if own:  # its index quotes dropped prompts, maybe cut short: look for theirs too
        quoted = scan_items([*own, *prompts(conversation.items)])
        plan.items = redact_own_summaries(plan.items, quoted, MARKER_TRIGGER)
    return plan


def checked_cwd(cwd: object, where: object, need_cwd: bool) -> str:
    """The session's working directory, as a new session of the target needs it."""
    if not isinstance(cwd, str) or not cwd:
        raise SwitchError(f"{where}: the session records no working directory")
    if not os.path.isabs(cwd) or "\0" in cwd:
        raise SwitchError(
            f"{where}: the session's working directory {cwd!r} is not an absolute path"
        )
    if need_cwd and not os.path.isdir(cwd):
        raise SwitchError(f"{where}: the session's working directory {cwd} does not exist")
    return cwd


def switch_conversation(
    conversation: Conversation,
    to: Provider,
    *,
    dry_run: bool = False,
    env: Mapping[str, str] | None = None,
    profile: TargetProfile | None = None,
    now: datetime | None = None,
    redact_secrets: bool = False,
) -> Switch:
    """Switch a conversation held in memory (read from anywhere, or built by a program) to
    provider ``to``: no app thread, nothing recorded. Its ``meta.cwd`` is the working directory
    of the new session."""
    env = dict(os.environ) if env is None else dict(env)
    source_path = Path(conversation.meta.path) if conversation.meta.path else None
    where = source_path or conversation.meta.id
    cwd = checked_cwd(conversation.meta.cwd, where, False)
    plan = plan_switch(
        conversation, to, profile=profile, env=env, cwd=cwd, redact_secrets=redact_secrets
    )
    if not plan.items:
        raise SwitchError(f"{where}: nothing in this session can be carried to {to.value}")
    target = entry(to)
    native = target.prepare(plan.items, cwd=cwd, env=env, now=now or datetime.now(UTC))
    switch = Switch(
        conversation, source_path, to, plan, cwd, dry_run=dry_run, program=target.program(env)
    )
    if dry_run:
        return switch
    switch.warnings = target.publish(native, env)
    switch.session_id, switch.path, switch.written = native.session_id, native.path, True
    return switch
