"""Record the Copilot CLI fixtures: real ``copilot -p`` sessions against scripted stand-in replies.

Every scenario writes ``<out_dir>/`` with

* ``home/``: only the session files the CLI wrote
  (``.copilot/session-state/<id>/events.jsonl`` and its ``workspace.yaml``);
* ``requests.jsonl``: what the CLI sent to the stand-in (system prompt and tools as digests);
* ``scenario.json``: what this script put in (prompts, scripted replies, tool calls, errors, the
  final state): the truth the reader tests compare against.

The CLI runs in a stable folder (``<work_root>/copilot-<scenario>``, a one-commit git repo) with a
scratch home next to it, so a re-recording gives the same paths.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import orjson

from segue_testbed.copilot_cli import COPILOT_VERSION, MODEL, CopilotHome, RunResult
from segue_testbed.record_claude import make_repo, sanitize_request
from segue_testbed.standin.anthropic import RateLimited, Reply, Scripted, Text, Thinking, ToolUse
from segue_testbed.standin.server import StandIn

DEFAULT_WORK_ROOT = Path("/tmp/segue-fixtures")


@dataclass
class Recording:
    """One scenario being recorded: the CLI, its lane, and the statement of what went in."""

    name: str
    out_dir: Path
    standin: StandIn
    work_root: Path
    prompts: list[str] = field(default_factory=list)
    replies: list[str] = field(default_factory=list)
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    errors: list[dict[str, Any]] = field(default_factory=list)
    compactions: list[dict[str, Any]] = field(default_factory=list)
    reset_at: float | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    state: str = "idle"
    notes: str = ""
    session_id: str | None = None
    runs: list[RunResult] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.cwd = self.work_root / f"copilot-{self.name}"
        scratch = self.work_root / f"copilot-{self.name}.scratch"
        shutil.rmtree(scratch, ignore_errors=True)
        scratch.mkdir(parents=True)
        make_repo(self.cwd)
        self.lane = self.standin.lane(log_path=scratch / "requests.full.jsonl")
        self.copilot = CopilotHome(scratch, self.lane)

    def say(self, text: str) -> Text:
        self.replies.append(text)
        return Text(text)

    def tool(
        self, name: str, input: dict[str, Any], output_contains: str, *, is_error: bool = False
    ) -> ToolUse:
        call = {"name": name, "input": input, "output_contains": output_contains}
        self.tool_calls.append(call | {"is_error": is_error})
        return ToolUse(name, input)

    def turn(self, prompt: str, *script: Scripted, expect_rc: int = 0) -> RunResult:
        """Type one prompt (resuming the session after the first) with these replies queued."""
        self.lane.script("anthropic", *script)
        self.prompts.append(prompt)
        result = self.copilot.run(prompt, cwd=self.cwd, resume=self.session_id)
        self.runs.append(result)
        if result.returncode != expect_rc:
            raise RuntimeError(f"{self.name}: expected exit {expect_rc}, got {result}")
        if self.session_id is None:
            self.session_id = self.copilot.only_session_id()
        return result

    def finish(self) -> None:
        """Check the recording and write the fixture folder."""
        if self.lane.pending("anthropic"):
            raise RuntimeError(f"{self.name}: {self.lane.pending('anthropic')} replies unused")
        assert self.session_id is not None
        events = self.copilot.events_for(self.session_id)
        self._check_tool_results(events)
        self.out_dir.mkdir(parents=True, exist_ok=True)
        self.copilot.copy_sessions(self.out_dir / "home")
        with (self.out_dir / "requests.jsonl").open("wb") as f:
            for logged in self.lane.requests:
                f.write(orjson.dumps(sanitize_request(logged.to_json())) + b"\n")
        scenario = {
            "scenario": self.name,
            "provider": "copilot",
            "cli_version": COPILOT_VERSION,
            "model": MODEL,
            "session_id": self.session_id,
            "cwd": str(self.cwd),
            "transcript": events.relative_to(self.copilot.root).as_posix(),
            "prompts": self.prompts,
            "replies": self.replies,
            "tool_calls": self.tool_calls,
            "errors": self.errors,
            "compactions": self.compactions,
            "state": self.state,
            "reset_at": self.reset_at,
            "notes": self.notes,
            **self.extra,
        }
        (self.out_dir / "scenario.json").write_bytes(
            orjson.dumps(scenario, option=orjson.OPT_INDENT_2) + b"\n"
        )

    def _check_tool_results(self, events: Path) -> None:
        """Every scripted tool call ran, in order, and its result holds what it should."""
        starts: list[dict[str, Any]] = []
        results: dict[str, str] = {}
        for line in events.read_bytes().splitlines():
            event = orjson.loads(line)
            data = event.get("data") or {}
            if event.get("type") == "tool.execution_start":
                starts.append(data)
            elif event.get("type") == "tool.execution_complete":
                results[str(data.get("toolCallId"))] = orjson.dumps(data.get("result")).decode()
        if len(starts) != len(self.tool_calls):
            raise RuntimeError(f"{self.name}: tool calls {starts} for {self.tool_calls}")
        for call, start in zip(self.tool_calls, starts, strict=True):
            text = results.get(str(start.get("toolCallId")), "<no result>")
            fits = call["name"] == start.get("toolName") and call["input"] == start.get("arguments")
            if not fits or call["output_contains"] not in text:
                raise RuntimeError(f"{self.name}: {start} / {text[:300]!r} does not fit {call}")


# --------------------------------------------------------------------------- scenarios


def chat(rec: Recording) -> None:
    rec.turn(
        "What is a haiku? One sentence.",
        rec.say("A haiku is a three-line poem of 5, 7 and 5 syllables."),
    )


def multi_turn(rec: Recording) -> None:
    rec.turn("Let's name a cat. Suggest one name.", rec.say("How about Miso?"))
    rec.turn("Another one, please.", rec.say("Then try Pixel."))
    rec.turn("Which of the two is shorter?", rec.say("Miso is shorter: four letters against five."))


def tool_cycle(rec: Recording) -> None:
    notes = str(rec.cwd / "notes.txt")
    todo = str(rec.cwd / "todo.md")
    rec.turn(
        "Look at notes.txt, then add a todo file.",
        Reply(
            (
                rec.say("I'll list the files first."),
                rec.tool(
                    "bash", {"command": "ls -1", "description": "List the files"}, "README.md"
                ),
            )
        ),
        Reply((rec.tool("view", {"path": notes}, "beta"),)),
        Reply(
            (
                rec.tool(
                    "bash",
                    {"command": "cat missing.txt; exit 3", "description": "Show missing.txt"},
                    "exit code 3",
                    is_error=True,
                ),
            )
        ),
        Reply((rec.tool("create", {"path": todo, "file_text": "- feed the cat\n"}, "Created"),)),
        Reply(
            (
                rec.tool(
                    "edit",
                    {"path": todo, "old_str": "feed the cat", "new_str": "feed Miso"},
                    "updated",
                ),
            )
        ),
        rec.say("notes.txt lists alpha, beta and gamma; todo.md now says to feed Miso."),
    )
    rec.turn(
        "Which files mention beta?",
        Reply((rec.tool("grep", {"pattern": "beta"}, "notes.txt"),)),
        rec.say("Only notes.txt mentions beta."),
    )


def compact(rec: Recording) -> None:
    rec.turn("Remember the word 'lantern'.", rec.say("Noted: lantern."))
    rec.turn("Also remember the number 42.", rec.say("Noted: 42."))
    summary = "The user asked me to remember the word 'lantern' and the number 42."
    rec.turn("/compact", Text(f"<summary>{summary}</summary>"))
    rec.prompts.pop()  # a command, not a prompt: the CLI records no user message for it
    rec.compactions.append({"state": "portable", "trigger": "manual", "summary_contains": summary})
    rec.turn("What did I ask you to remember?", rec.say("The word 'lantern' and the number 42."))


def thinking(rec: Recording) -> None:
    rec.turn(
        "Is 91 a prime number?",
        Reply(
            (
                Thinking("91 = 7 * 13, so it is not prime. The user wants a short answer."),
                rec.say("No: 91 is 7 × 13."),
            )
        ),
    )
    rec.extra["thinking"] = ["91 = 7 * 13, so it is not prime. The user wants a short answer."]


def _rows(batch: str) -> str:
    return f"seq -f 'row %06g of batch {batch} in the large segue fixture' 1 1200"


def large(rec: Recording) -> None:
    calls, replies = 10, 3
    script: list[Scripted] = []
    for r in range(replies):
        blocks = tuple(
            rec.tool(
                "bash",
                {"command": _rows(f"{r}-{i}"), "description": f"Print batch {r}-{i}"},
                "row 000001",
            )
            for i in range(calls)
        )
        script.append(Reply(blocks))
    script.append(rec.say("Printed all 30 batches."))
    rec.turn("Print the 30 batches of rows.", *script)
    rec.notes = "30 bash calls, 10 per reply, each printing ~55 KB (what the CLI keeps of it)."


SESSION_LIMIT = "you've exceeded your 5 hour session limits. Please retry after 2733 seconds"


def rate_limited(rec: Recording) -> None:
    rec.turn("Say hello.", rec.say("Hello!"))
    rec.turn(
        "Now write a limerick.",
        RateLimited(subscriber=False, message=SESSION_LIMIT, retry_after=2733),
        expect_rc=1,
    )
    refused = _last_event(rec, "session.error")
    rec.reset_at = refused + 2733
    rec.errors.append({"kind": "usage_limit", "reset_at": rec.reset_at})
    rec.state = "limit"
    rec.notes = (
        "BYOK against the stand-in: the second turn got a 429 whose message is Copilot's own "
        "session-limit text; the CLI records session.error with errorType rate_limit."
    )


def _last_event(rec: Recording, kind: str) -> float:
    """When the CLI recorded its last event of ``kind`` (epoch seconds)."""
    assert rec.session_id is not None
    found = [
        event
        for line in rec.copilot.events_for(rec.session_id).read_bytes().splitlines()
        if (event := orjson.loads(line)).get("type") == kind
    ]
    stamp = datetime.fromisoformat(found[-1]["timestamp"].replace("Z", "+00:00"))
    return stamp.timestamp()


@dataclass(frozen=True, slots=True)
class ScenarioSpec:
    script: Callable[[Recording], None]


SPECS: dict[str, ScenarioSpec] = {
    "chat": ScenarioSpec(chat),
    "multi_turn": ScenarioSpec(multi_turn),
    "tool_cycle": ScenarioSpec(tool_cycle),
    "thinking": ScenarioSpec(thinking),
    "compact": ScenarioSpec(compact),
    "large": ScenarioSpec(large),
    "rate_limited": ScenarioSpec(rate_limited),
}


def record(
    name: str, out_dir: Path, standin: StandIn, *, work_root: Path = DEFAULT_WORK_ROOT
) -> Recording:
    """Record one scenario into ``out_dir`` (its cwd and scratch home live under ``work_root``)."""
    rec = Recording(name, out_dir, standin, work_root)
    SPECS[name].script(rec)
    rec.finish()
    return rec


def _entry(name: str) -> Callable[[Path, StandIn], None]:
    def run(out_dir: Path, standin: StandIn) -> None:
        record(name, out_dir, standin)

    return run


SCENARIOS: dict[str, Callable[[Path, StandIn], None]] = {name: _entry(name) for name in SPECS}

__all__ = ["SCENARIOS", "SPECS", "Recording", "record"]
