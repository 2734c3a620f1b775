"""The switch: one session's conversation moved to another provider as a native session its
CLI resumes, without asking the source provider for anything, as its app thread's strategy
decides (:mod:`segue.switch.pipeline`, one module a step: source → locks → sync → decide →
prepare → write → record). A dry run is a :class:`Preview` that :func:`carry_out` takes; a
:class:`Switch` is what a switch did."""

from __future__ import annotations

from typing import TYPE_CHECKING

from segue.support.lazy import lazy_names

if TYPE_CHECKING:
    from segue.support.state_dir import state_dir
    from segue.switch.locks import session_lock, thread_lock
    from segue.switch.pipeline import Preview, carry_out, preview_switch, switch_session
    from segue.switch.plan import plan_switch, switch_conversation
    from segue.switch.result import Switch, ThreadMove

_WHERE = {
    "Preview": "segue.switch.pipeline",
    "Switch": "segue.switch.result",
    "ThreadMove": "segue.switch.result",
    "carry_out": "segue.switch.pipeline",
    "plan_switch": "segue.switch.plan",
    "preview_switch": "segue.switch.pipeline",
    "session_lock": "segue.switch.locks",
    "state_dir": "segue.support.state_dir",
    "switch_conversation": "segue.switch.plan",
    "switch_session": "segue.switch.pipeline",
    "thread_lock": "segue.switch.locks",
}

__all__ = [
    "Preview",
    "Switch",
    "ThreadMove",
    "carry_out",
    "plan_switch",
    "preview_switch",
    "session_lock",
    "state_dir",
    "switch_conversation",
    "switch_session",
    "thread_lock",
]

__getattr__, __dir__ = lazy_names(__name__, _WHERE, globals())
