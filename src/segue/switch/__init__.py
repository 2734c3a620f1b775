"""The switch: one session's conversation moved to another provider as a native session its
CLI resumes, without asking the source provider for anything, as its app thread's strategy
decides (:mod:`segue.switch.pipeline`: source → lock → sync → decide → write → record)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from segue.support.lazy import lazy_names

if TYPE_CHECKING:
    from segue.support.state_dir import state_dir
    from segue.switch.locks import session_lock, thread_lock
    from segue.switch.pipeline import carry_out, switch_session
    from segue.switch.plan import plan_switch, switch_conversation
    from segue.switch.result import Switch, ThreadMove

_WHERE = {
    "Switch": "segue.switch.result",
    "ThreadMove": "segue.switch.result",
    "carry_out": "segue.switch.pipeline",
    "plan_switch": "segue.switch.plan",
    "session_lock": "segue.switch.locks",
    "state_dir": "segue.support.state_dir",
    "switch_conversation": "segue.switch.plan",
    "switch_session": "segue.switch.pipeline",
    "thread_lock": "segue.switch.locks",
}

__all__ = [
    "Switch",
    "ThreadMove",
    "carry_out",
    "plan_switch",
    "session_lock",
    "state_dir",
    "switch_conversation",
    "switch_session",
    "thread_lock",
]

__getattr__, __dir__ = lazy_names(__name__, _WHERE, globals())
