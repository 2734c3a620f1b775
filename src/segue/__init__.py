"""segue: keep one coding-agent conversation alive across providers.

The public library API. Everything a program needs is importable from ``segue``; the modules
behind it are private and may change::

    import segue

    provider, path = segue.find_session("01a22910")
    conversation = segue.read_session(path)
    plan = segue.plan_switch(conversation, segue.Provider.CLAUDE)
    print(plan.loss_line)
    switch = segue.switch_session("01a22910", segue.Provider.CLAUDE)
    print(switch.resume_command)

Errors are :class:`SegueError` (with :class:`SessionError`, :class:`ConfigError`,
:class:`SwitchError` and :class:`StoreError` beneath it), each with a one-line message that names
the file at fault.
"""

from segue.budget import TargetProfile
from segue.conversation import (
    AssistantMessage,
    Compaction,
    CompactionState,
    Conversation,
    ErrorKind,
    ErrorNotice,
    Image,
    Item,
    LimitWindow,
    Opaque,
    Origin,
    Provenance,
    Provider,
    Reasoning,
    Rollback,
    SessionMeta,
    Skip,
    ToolCall,
    ToolKind,
    ToolResult,
    TurnMarker,
    TurnStatus,
    UserMessage,
)
from segue.errors import (
    ConfigError,
    SegueError,
    SessionError,
    StoreError,
    SwitchError,
    SwitchLocked,
    TargetExists,
)
from segue.providers import target_profile
from segue.session_info import SessionInfo
from segue.sessions import Listing, find_session, list_sessions, read_session
from segue.switch import Switch, plan_switch, switch_conversation, switch_session
from segue.transforms.effective import effective_history, portable_history
from segue.transforms.plan import Label, Plan
from segue.transforms.state import SessionState
from segue.usage import ProviderUsage, exhausted_providers, read_usage

__version__ = "0.1.0"

__all__ = [
    "AssistantMessage",
    "Compaction",
    "CompactionState",
    "ConfigError",
    "Conversation",
    "ErrorKind",
    "ErrorNotice",
    "Image",
    "Item",
    "Label",
    "LimitWindow",
    "Listing",
    "Opaque",
    "Origin",
    "Plan",
    "Provenance",
    "Provider",
    "ProviderUsage",
    "Reasoning",
    "Rollback",
    "SegueError",
    "SessionError",
    "SessionInfo",
    "SessionMeta",
    "SessionState",
    "Skip",
    "StoreError",
    "Switch",
    "SwitchError",
    "SwitchLocked",
    "TargetExists",
    "TargetProfile",
    "ToolCall",
    "ToolKind",
    "ToolResult",
    "TurnMarker",
    "TurnStatus",
    "UserMessage",
    "__version__",
    "effective_history",
    "exhausted_providers",
    "find_session",
    "list_sessions",
    "plan_switch",
    "portable_history",
    "read_session",
    "read_usage",
    "switch_conversation",
    "switch_session",
    "target_profile",
]
