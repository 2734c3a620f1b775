"""How Codex's tool names map to segue's tool kinds."""

from __future__ import annotations

from segue.model.conversation import ToolKind

_KINDS: dict[str, ToolKind] = {
    "exec_command": ToolKind.SHELL,
    "write_stdin": ToolKind.SHELL,
    "shell": ToolKind.SHELL,
    "shell_command": ToolKind.SHELL,
    "local_shell": ToolKind.SHELL,
    "container.exec": ToolKind.SHELL,
    "unified_exec": ToolKind.SHELL,
    "apply_patch": ToolKind.PATCH,
    "view_image": ToolKind.READ,
    "read_file": ToolKind.READ,
    "list_dir": ToolKind.SEARCH,
    "grep_files": ToolKind.SEARCH,
    "tool_search": ToolKind.SEARCH,
    "web_search": ToolKind.WEB,
    "update_plan": ToolKind.PLAN,
    "request_user_input": ToolKind.OTHER,
    "spawn_agent": ToolKind.SUBAGENT,
    "send_input": ToolKind.SUBAGENT,
    "wait": ToolKind.SUBAGENT,
    "close_agent": ToolKind.SUBAGENT,
}


def tool_kind(name: str, namespace: str | None = None) -> ToolKind:
    if namespace and namespace.startswith("mcp"):
        return ToolKind.MCP
    if "__" in name or name.startswith("mcp"):
        return ToolKind.MCP
    return _KINDS.get(name, ToolKind.OTHER)
