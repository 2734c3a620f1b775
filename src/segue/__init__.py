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

from typing import TYPE_CHECKING

from segue.support.lazy import lazy_names
from segue.support.version import __version__

if TYPE_CHECKING:
    from segue.model.conversation import (
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
    from segue.model.errors import (
        ConfigError,
        SegueError,
        SessionError,
        StoreError,
        SwitchError,
        SwitchLocked,
        TargetExists,
    )
    from segue.model.session_info import SessionInfo, SessionState
    from segue.providers import target_profile
    from segue.providers.sessions import Listing, find_session, list_sessions, read_session
    from segue.running.usage import ProviderUsage, exhausted_providers, read_usage
    from segue.switch import Switch, plan_switch, switch_conversation, switch_session
    from segue.transforms.budget import TargetProfile
    from segue.transforms.effective import effective_history, portable_history
    from segue.transforms.plan import Label, Plan

# each name, by the module it comes from (as imported above)
_WHERE = {
    name: module
    for module, names in {
        "segue.model.conversation": "AssistantMessage Compaction CompactionState Conversation "
        "ErrorKind ErrorNotice Image Item LimitWindow Opaque Origin Provenance Provider Reasoning "
        "Rollback SessionMeta Skip ToolCall ToolKind ToolResult TurnMarker TurnStatus UserMessage",
        "segue.model.errors": "ConfigError SegueError SessionError StoreError SwitchError "
        "SwitchLocked TargetExists",
        "segue.model.session_info": "SessionInfo SessionState",
        "segue.providers": "target_profile",
        "segue.providers.sessions": "Listing find_session list_sessions read_session",
        "segue.running.usage": "ProviderUsage exhausted_providers read_usage",
        "segue.switch": "Switch plan_switch switch_conversation switch_session",
        "segue.transforms.budget": "TargetProfile",
        "segue.transforms.effective": "effective_history portable_history",
        "segue.transforms.plan": "Label Plan",
    }.items()
    for name in names.split()
}


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

__getattr__, __dir__ = lazy_names(__name__, _WHERE, globals())
