"""How Claude Code's tool names map to segue's tool kinds."""

from __future__ import annotations

from segue.model.conversation import ToolKind

_KINDS: dict[str, ToolKind] = {
    "Bash": ToolKind.SHELL,
    "BashOutput": ToolKind.SHELL,
    "KillShell": ToolKind.SHELL,
    "KillBash": ToolKind.SHELL,
    "Read": ToolKind.READ,
    "NotebookRead": ToolKind.READ,
    "Edit": ToolKind.EDIT,
    "MultiEdit": ToolKind.EDIT,
    "NotebookEdit": ToolKind.EDIT,
    "Write": ToolKind.WRITE,
    "Grep": ToolKind.SEARCH,
    "Glob": ToolKind.SEARCH,
    "LS": ToolKind.SEARCH,
    "ToolSearch": ToolKind.SEARCH,
    "WebFetch": ToolKind.WEB,
    "WebSearch": ToolKind.WEB,
    "web_search": ToolKind.WEB,
    "TodoWrite": ToolKind.PLAN,
    "TodoRead": ToolKind.PLAN,
    "ExitPlanMode": ToolKind.PLAN,
    "EnterPlanMode": ToolKind.PLAN,
    "TaskCreate": ToolKind.PLAN,
    "TaskUpdate": ToolKind.PLAN,
    "TaskList": ToolKind.PLAN,
    "Task": ToolKind.SUBAGENT,
    "Agent": ToolKind.SUBAGENT,
}


def tool_kind(name: str) -> ToolKind:
    if name.startswith("mcp__"):
        return ToolKind.MCP
    return _KINDS.get(name, ToolKind.OTHER)
