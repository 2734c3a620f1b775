"""The switch: one session's conversation moved to another provider as a native session its
CLI resumes, without asking the source provider for anything, as its app thread's strategy
decides (:mod:`segue.switch.pipeline`: source → lock → sync → decide → write → record)."""

from segue.state import state_dir
from segue.switch.locks import session_lock, thread_lock
from segue.switch.pipeline import carry_out, switch_session
from segue.switch.plan import plan_switch, switch_conversation
from segue.switch.result import Switch, ThreadMove

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
