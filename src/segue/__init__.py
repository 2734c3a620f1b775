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

Each name is imported on first use (the command line starts without loading what a command
does not need); a type checker sees them all.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from segue.lazy import lazy_attribute

if TYPE_CHECKING:
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

_WHERE = {
    "AssistantMessage": "segue.conversation",
    "Compaction": "segue.conversation",
    "CompactionState": "segue.conversation",
    "ConfigError": "segue.errors",
    "Conversation": "segue.conversation",
    "ErrorKind": "segue.conversation",
    "ErrorNotice": "segue.conversation",
    "Image": "segue.conversation",
    "Item": "segue.conversation",
    "Label": "segue.transforms.plan",
    "LimitWindow": "segue.conversation",
    "Listing": "segue.sessions",
    "Opaque": "segue.conversation",
    "Origin": "segue.conversation",
    "Plan": "segue.transforms.plan",
    "Provenance": "segue.conversation",
    "Provider": "segue.conversation",
    "ProviderUsage": "segue.usage",
    "Reasoning": "segue.conversation",
    "Rollback": "segue.conversation",
    "SegueError": "segue.errors",
    "SessionError": "segue.errors",
    "SessionInfo": "segue.session_info",
    "SessionMeta": "segue.conversation",
    "SessionState": "segue.transforms.state",
    "Skip": "segue.conversation",
    "StoreError": "segue.errors",
    "Switch": "segue.switch",
    "SwitchError": "segue.errors",
    "SwitchLocked": "segue.errors",
    "TargetExists": "segue.errors",
    "TargetProfile": "segue.budget",
    "ToolCall": "segue.conversation",
    "ToolKind": "segue.conversation",
    "ToolResult": "segue.conversation",
    "TurnMarker": "segue.conversation",
    "TurnStatus": "segue.conversation",
    "UserMessage": "segue.conversation",
    "effective_history": "segue.transforms.effective",
    "exhausted_providers": "segue.usage",
    "find_session": "segue.sessions",
    "list_sessions": "segue.sessions",
    "plan_switch": "segue.switch",
    "portable_history": "segue.transforms.effective",
    "read_session": "segue.sessions",
    "read_usage": "segue.usage",
    "switch_conversation": "segue.switch",
    "switch_session": "segue.switch",
    "target_profile": "segue.providers",
}

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


def __getattr__(name: str) -> Any:
    return lazy_attribute(__name__, _WHERE, globals(), name)


def __dir__() -> list[str]:
    return sorted(__all__)
