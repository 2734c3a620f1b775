"""The deterministic handoff summary, on the recorded fixtures."""

from __future__ import annotations

from pathlib import Path

import pytest

from segue.model.conversation import Item, Reasoning
from segue.providers import entry_for_file
from segue.transforms.handoff_summary import summarize_runs
from segue.transforms.secrets import marker
from segue_testbed.fixtures import all_fixtures

BY_NAME = {f.name: f for f in all_fixtures()}
PLANTED = "sk-ant-api03-" + "Q7xK2mP9vR4tL8wN3jH6cF1bD5gS0aZ-" * 3 + "AAAA"


def _items(name: str, path: Path | None = None) -> list[Item]:
    fixture = BY_NAME[name]
    path = path or fixture.transcript
    return list(entry_for_file(path).read(path).items)


def test_a_failing_command_appears_with_its_exit_code() -> None:
    text = summarize_runs(_items("codex-tool_cycle"), max_chars=4000)
    spec = BY_NAME["codex-tool_cycle"].spec
    assert spec["prompts"][0] in text
    assert "`cat /nonexistent/segue-missing.txt` → exit 1" in text
    failures = text.split("## Known failures", 1)[1]
    assert "cat /nonexistent/segue-missing.txt" in failures and "No such file" in failures
    assert "`echo segue-tool-ok && pwd` → exit 0" in text
    assert "segue-tool-ok\n" not in text  # a successful command's output is not carried


def test_claude_tool_cycle_commands_and_the_failure() -> None:
    text = summarize_runs(_items("claude-tool_cycle"), max_chars=4000)
    assert "exit 3" in text.split("## Known failures", 1)[1]
    assert "`wc -l notes.txt` → exit 0" in text
    assert "notes.txt has 3 lines." in text
    assert "<system-reminder>" not in text  # injected context is left out


def test_a_written_file_and_an_unanswered_request() -> None:
    text = summarize_runs(_items("codex-stuck_agent"), max_chars=4000)
    files = text.split("## Files changed", 1)[1].split("##", 1)[0]
    assert "`geometry.py`" in files
    unresolved = text.split("## Unresolved questions", 1)[1].split("##", 1)[0]
    assert "Now add a circumference(r) function." in unresolved and "usage limit" in unresolved
    assert "hit your usage limit" not in text  # a limit notice is not content
    assert "3.14159" in text


def test_subagent_results_are_carried_shortened() -> None:
    text = summarize_runs(_items("claude-subagent"), max_chars=4000)
    section = text.split("## Subagent results", 1)[1]
    assert "There are 5 entries" in section
    assert len(section) < 1000


def test_a_compacted_thread_keeps_its_earlier_context() -> None:
    text = summarize_runs(_items("claude-compact"), max_chars=4000)
    assert "lantern" in text.split("## Goals and constraints", 1)[1]


@pytest.mark.parametrize("name", ["claude-thinking", "codex-reasoning"])
def test_no_reasoning_text_appears(name: str) -> None:
    items = _items(name)
    thoughts = [i.text for i in items if isinstance(i, Reasoning) and len(i.text) > 20]
    assert thoughts
    text = summarize_runs(items, max_chars=4000)
    for thought in thoughts:
        assert thought not in text and thought[:40] not in text


@pytest.mark.parametrize("name", sorted(BY_NAME))
@pytest.mark.parametrize("limit", [300, 2000, 12000])
def test_every_fixture_fits_max_chars(name: str, limit: int) -> None:
    text = summarize_runs(_items(name), max_chars=limit)
    assert 0 < len(text) <= limit
    assert text.startswith("# Handoff summary")


def test_big_outputs_are_never_carried_whole() -> None:
    for name in ("claude-big_outputs", "codex-big_outputs", "claude-large", "codex-large"):
        items = _items(name)
        text = summarize_runs(items, max_chars=12000)
        assert len(text) < 6000, name
        assert "earlier commands left out" in text or len(text) < 3000


def test_a_planted_secret_never_appears(tmp_path: Path) -> None:
    fixture = BY_NAME["claude-tool_cycle"]
    copy = tmp_path / fixture.transcript.name
    raw = fixture.transcript.read_text()
    copy.write_text(raw.replace("wc -l notes.txt", f"wc -l notes.txt # {PLANTED}"))
    items = _items(fixture.name, copy)
    for limit in (200, 400, 4000):
        text = summarize_runs(items, max_chars=limit)
        assert PLANTED not in text and PLANTED[:20] not in text
    assert marker("anthropic_api_key") in summarize_runs(items, max_chars=4000)


def test_later_runs_are_numbered_from_first_run() -> None:
    text = summarize_runs(_items("claude-tool_cycle"), max_chars=4000, first_run=5)
    assert "- run 5:" in text and "- run 6:" in text and "- run 1:" not in text


def test_the_diff_summary_starts_with_the_workspaces_checkpoint() -> None:
    line = "checkpoint of run 3 (exact, 0123456789ab): 2 files +4 -1 since the checkpoint before"
    text = summarize_runs(_items("codex-tool_cycle"), max_chars=4000, workspace=line)
    diff = text.split("## Latest diff summary", 1)[1].split("\n## ", 1)[0]
    assert diff.strip().splitlines()[0] == f"- workspace: {line}"
    assert "## Latest diff summary" not in summarize_runs(_items("codex-tool_cycle"))
