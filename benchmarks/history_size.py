"""segue's size estimate against what the real CLIs sent, for every recorded fixture.

    uv run python benchmarks/history_size.py

For the last model request of each fixture (the stand-in's log, ``requests.jsonl``), the
model-visible text of the history as sent, less the context the CLI injects (Claude's system
messages and reminders, Codex's developer messages and environment context), against segue's
estimate of the same history (``history_chars(effective_history(...))`` less injected user
messages). Strings the recorder capped (``[segue-fixture: N chars cut]``) count at their
original length. The ratio is what the README's calibration figures come from.
"""

from __future__ import annotations

import re
from typing import Any

import orjson

from segue.model.conversation import Origin, UserMessage
from segue.providers.sessions import read_session
from segue.transforms.budget import item_chars
from segue.transforms.effective import effective_history
from segue_testbed.fixtures import Fixture, all_fixtures

# How the two recorders cap a long string in the request log (the cut is put back when measuring)
_CUT = re.compile(
    r"\n\[(?:segue-fixture: (\d+) chars cut|\.\.\. segue: (\d+) chars cut of \d+ \.\.\.)\]\n"
)
_INJECTED = (
    "<environment_context>",
    "<skills_instructions>",
    "<user_instructions>",
    "# AGENTS.md",
    "<permissions",
    "<system-reminder>",
    "<turn_aborted>",
    "<model_switch>",
)


def _length(text: Any) -> int:
    if not isinstance(text, str):
        return 0
    cut = _CUT.search(text)
    if cut is None:
        return len(text)
    return len(text) - len(cut.group(0)) + int(cut.group(1) or cut.group(2))


def _texts(entry: dict[str, Any]) -> list[str]:
    content = entry.get("content")
    if isinstance(content, str):
        return [content]
    return [b.get("text", "") for b in content or [] if isinstance(b, dict)]


def _claude_sent(messages: list[dict[str, Any]]) -> int:
    total = 0
    for message in messages:
        if message.get("role") == "system":
            continue
        content = message.get("content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        for block in blocks or []:
            kind = block.get("type")
            if kind == "text" and not str(block.get("text", "")).startswith("<system-reminder>"):
                total += _length(block["text"])
            elif kind == "tool_use":
                total += len(block.get("name", "")) + len(orjson.dumps(block.get("input", {})))
            elif kind == "tool_result":
                inner = block.get("content")
                total += (
                    _length(inner)
                    if isinstance(inner, str)
                    else sum(_length(b.get("text")) for b in inner or [] if isinstance(b, dict))
                )
            elif kind == "thinking":
                total += _length(block.get("thinking"))
    return total


def _codex_sent(items: list[dict[str, Any]]) -> int:
    total = 0
    for item in items:
        kind = item.get("type")
        if kind == "message":
            text = "".join(_texts(item))
            injected = item.get("role") == "developer" or text.lstrip().startswith(_INJECTED)
            if not injected:
                total += sum(_length(t) for t in _texts(item))
        elif kind == "function_call":
            total += len(item.get("name", "")) + _length(item.get("arguments", ""))
        elif kind in ("function_call_output", "custom_tool_call_output"):
            output = item.get("output")
            total += (
                _length(output)
                if isinstance(output, str)
                else sum(_length(b.get("text")) for b in output or [] if isinstance(b, dict))
            )
        elif kind == "reasoning":
            total += sum(_length(s.get("text")) for s in item.get("summary") or [])
    return total


def _last_request(fixture: Fixture) -> dict[str, Any] | None:
    key = "messages" if fixture.provider == "claude" else "input"
    bodies = [
        r["body"]
        for r in fixture.requests()
        if r.get("method") == "POST"
        and isinstance(r.get("body"), dict)
        and r["body"].get(key)
        and "count_tokens" not in r.get("path", "")
    ]
    return bodies[-1] if bodies else None


def main() -> int:
    print(f"{'fixture':32} {'sent':>9} {'estimate':>9} {'sent/estimate':>13}")
    for fixture in all_fixtures():
        body = _last_request(fixture)
        if body is None:
            continue
        if fixture.provider == "claude":
            sent = _claude_sent(body["messages"])
        else:
            sent = _codex_sent(body["input"])
        history = effective_history(read_session(fixture.transcript))
        estimate = sum(
            item_chars(i)
            for i in history
            if not (isinstance(i, UserMessage) and i.origin is Origin.INJECTED)
        )
        ratio = sent / estimate if estimate else float("nan")
        print(f"{fixture.name:32} {sent:9,} {estimate:9,} {ratio:13.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
