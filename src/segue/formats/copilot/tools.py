"""How Copilot CLI's tool names map to segue's tool kinds."""

from __future__ import annotations

from segue.model.conversation import ToolKind

_KINDS: dict[str, ToolKind] = {
    "bash": ToolKind.SHELL,
    "read_bash": ToolKind.SHELL,
    "write_bash": ToolKind.SHELL,
    "stop_bash": ToolKind.SHELL,
    "list_bash": ToolKind.SHELL,
    "powershell": ToolKind.SHELL,
    "view": ToolKind.READ,
    "create": ToolKind.WRITE,
    "edit": ToolKind.EDIT,
    "apply_patch": ToolKind.PATCH,
    "grep": ToolKind.SEARCH,
    "glob": ToolKind.SEARCH,
    "web_fetch": ToolKind.WEB,
    "web_search": ToolKind.WEB,
    "update_todo": ToolKind.PLAN,
    "task": ToolKind.SUBAGENT,
    "read_agent": ToolKind.SUBAGENT,
    "write_agent": ToolKind.SUBAGENT,
    "list_agents": ToolKind.SUBAGENT,
}


def tool_kind(name: str) -> ToolKind:
    return _KINDS.get(name, ToolKind.OTHER)
