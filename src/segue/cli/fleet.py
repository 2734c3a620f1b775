"""``segue switch --from …``: the fleet switch at the command line (preview, one confirmation,
the batch, the tally). The work is :mod:`segue.fleet.batch`; this module only talks to the user."""

from __future__ import annotations

from collections.abc import Callable

from rich.console import Console
from rich.text import Text

from segue.cli.documents import fleet_plan_to_json, fleet_result_to_json
from segue.cli.options import terminal_answer
from segue.cli.render import print_fleet_plan, print_fleet_result
from segue.fleet.batch import (
    ArrivalCompact,
    FleetPlan,
    check_source_compact,
    plan_fleet,
    return_plan,
    run_fleet,
)
from segue.model.conversation import Provider
from segue.model.errors import SegueError

Out = Callable[[object], None]


class NotConfirmed(SegueError):
    """The batch was shown but not confirmed."""


def run_fleet_command(
    *,
    sessions: list[str],
    source: Provider | None,
    target: Provider | None,
    all_sessions: bool,
    cwd: str | None,
    under: str | None,
    yes: bool,
    dry_run: bool,
    as_json: bool,
    relaunch: bool,
    redact_secrets: bool,
    arrival_compact: str,
    source_compact: bool,
    return_batch: bool,
    out: Out,
    console: Console,
    clean: bool = False,
    force: bool = False,
) -> None:
    """Preview, confirm, switch and report; exits 1 when any agent's switch failed (the batch
    itself always goes on past one). A return to a provider still exhausted is refused in one
    line (a dry run shows it under the plan) unless ``force``."""
    if return_batch:
        plan = return_plan(
            sessions[0] if sessions else None,
            target=target,
            redact_secrets=redact_secrets,
            clean=clean,
            dry_run=dry_run,
            check_usage=True,
        )
        if plan.blocked and not dry_run and not force:
            raise SegueError(
                f"{plan.blocked}: nothing was moved back (--force moves them back anyway)"
            )
    else:
        plan = plan_fleet(
            source,
            target,
            sessions=sessions,
            cwd=cwd,
            all_sessions=all_sessions,
            redact_secrets=redact_secrets,
            under=under,
            clean=clean,
        )
    if source_compact:
        check_source_compact(plan)
    if dry_run or not plan.to_switch:
        if as_json:
            out(fleet_plan_to_json(plan))
        else:
            print_fleet_plan(console, plan)
            if not plan.to_switch:
                console.print("Nothing to switch.", markup=False)
            _warn_blocked(console, plan)
        if plan.failing and not dry_run:
            raise SystemExit(1)
        return
    if not as_json:
        print_fleet_plan(console, plan)
        _warn_blocked(console, plan)
    if not yes and (as_json or not _confirm(plan)):
        raise NotConfirmed(
            f"nothing switched: confirm the {len(plan.to_switch)} switches with --yes"
        )
    result = run_fleet(
        plan,
        relaunch=relaunch,
        arrival_compact=ArrivalCompact(arrival_compact),
        source_compact=source_compact,
        force=force,
    )
    if as_json:
        out(fleet_result_to_json(result))
    else:
        print_fleet_result(console, result)
    if result.failed:
        raise SystemExit(1)


def _confirm(plan: FleetPlan) -> bool:
    """No terminal to ask on: no yes."""
    n = len(plan.to_switch)
    prompt = f"Switch {n} session{'s' if n != 1 else ''} to {plan.target.value}? [y/N] "
    return terminal_answer(prompt) is True


def _warn_blocked(console: Console, plan: FleetPlan) -> None:
    """Under a return's plan: the provider it goes back to is still exhausted."""
    if plan.blocked:
        console.print(
            Text(f"warning: {plan.blocked}; only --force moves them back now", style="yellow")
        )
