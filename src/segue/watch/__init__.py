"""``segue watch``: the fleet moved off a provider the moment it runs out, and brought back when
its window resets.

Each pass (:func:`watch_pass`) observes (each provider's usage, watch's records, where the
batches moved sessions), asks :func:`~segue.watch.policy.decide` (pure: plain data in, plain
data out, the clock given) what to do, carries that out and records it:

1. **Returns first.** A batch watch moved off a provider comes back when that provider is no
   longer exhausted, its blocking window's reset (as seen when the batch moved) has passed, and
   the batch is older than the quiet period (a provider flapping around 100% does not bounce the
   fleet). Only idle agents come back: the return's plan skips a working one. ``--return ask``
   (the default) asks first, ``auto`` does it, ``never`` leaves the batches where they are.
2. **Exhaustion.** One provider exhausted, with agents parked on it (idle agents and sessions a
   limit stopped; a working agent is never touched, it is taken when it parks): the fleet
   switch to the other provider is planned, asked for once (``--ask``, the default) or done
   (``--auto``), and each agent's pane relaunched on its new session. A session that moved
   within the quiet period does not move again.
3. **Nothing to move.** Both providers exhausted: nothing moves; the earliest reset is shown. A
   limit on one model family (Claude's weekly Opus limit) moves nothing either: the agents
   running that family are relaunched on the model its provider suggests.

Every decision is recorded in the store (``watch_events``): what was seen, what was moved or
returned, what was declined, with its reason; an unchanged state is recorded once, not every
pass (:func:`~segue.watch.policy.news`). The loop (:func:`watch`, :mod:`segue.watch.loop`) runs
the passes; :mod:`segue.watch.unit` writes the systemd unit that keeps it running.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from segue.support.lazy import lazy_names

if TYPE_CHECKING:
    from segue.watch.loop import watch
    from segue.watch.passes import watch_batches, watch_pass
    from segue.watch.policy import DEFAULT_INTERVAL_S, Mode, WatchEvent, WatchPolicy
    from segue.watch.unit import systemd_unit, unit_environment_file

_WHERE = {
    "DEFAULT_INTERVAL_S": "segue.watch.policy",
    "Mode": "segue.watch.policy",
    "WatchEvent": "segue.watch.policy",
    "WatchPolicy": "segue.watch.policy",
    "systemd_unit": "segue.watch.unit",
    "unit_environment_file": "segue.watch.unit",
    "watch": "segue.watch.loop",
    "watch_batches": "segue.watch.passes",
    "watch_pass": "segue.watch.passes",
}

__all__ = [
    "DEFAULT_INTERVAL_S",
    "Mode",
    "WatchEvent",
    "WatchPolicy",
    "systemd_unit",
    "unit_environment_file",
    "watch",
    "watch_batches",
    "watch_pass",
]

__getattr__, __dir__ = lazy_names(__name__, _WHERE, globals())
