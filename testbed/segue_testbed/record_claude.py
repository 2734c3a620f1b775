"""Record the Claude Code fixtures: real ``claude -p`` sessions against scripted stand-in replies.

Every scenario writes ``<out_dir>/`` with

* ``home/``: only the session files the CLI wrote (``.claude/projects/<enc>/<id>.jsonl`` and the
  session folder ``<id>/`` with subagent sidechains and persisted tool outputs);
* ``requests.jsonl``: what the CLI sent to the stand-in (see :func:`sanitize_request`);
* ``scenario.json``: what this script put in (prompts, scripted replies, tool calls, compactions,
  errors, the final state): the truth the reader tests compare against.

The CLI runs in a stable folder (``<work_root>/claude-<scenario>``, a one-commit git repo) with a
scratch home next to it, so a re-recording gives the same paths.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from segue_testbed.claude_cli import CLAUDE_VERSION, ClaudeHome, RunResult, encode_project_dir
from segue_testbed.record import tool_runs_sorted
from segue_testbed.standin.anthropic import (
    FailedSummary,
    RateLimited,
    Reply,
    Scripted,
    Stall,
    Summary,
    Text,
    Thinking,
    ToolUse,
)
from segue_testbed.standin.server import StandIn

DEFAULT_WORK_ROOT = Path("/tmp/segue-fixtures")
MAX_STRING = 20_000
HASHED_KEYS = ("system", "tools")

# --------------------------------------------------------------------------- request log


def _digest(value: Any) -> dict[str, Any]:
    raw = orjson.dumps(value, option=orjson.OPT_SORT_KEYS)
    return {"sha256": hashlib.sha256(raw).hexdigest(), "chars": len(raw.decode())}


def _cap(value: Any) -> Any:
    if isinstance(value, str) and len(value) > MAX_STRING:
        head, tail = value[: MAX_STRING // 2], value[-MAX_STRING // 4 :]
        cut = len(value) - len(head) - len(tail)
        return f"{head}\n[... segue: {cut} chars cut of {len(value)} ...]\n{tail}"
    if isinstance(value, list):
        return [_cap(v) for v in value]
    if isinstance(value, dict):
        return {k: _cap(v) for k, v in value.items()}
    return value


def sanitize_request(logged: dict[str, Any]) -> dict[str, Any]:
    """Shrink one logged request: ``system``/``tools`` become a digest, long strings are capped."""
    body = logged.get("body")
    if isinstance(body, dict):
        body = {k: _digest(v) if k in HASHED_KEYS else v for k, v in body.items()}
    capped: dict[str, Any] = _cap(logged | {"body": body})
    return capped


# --------------------------------------------------------------------------- the cwd


def make_repo(cwd: Path) -> None:
    """A fresh one-commit git repo with fixed author and dates."""
    shutil.rmtree(cwd, ignore_errors=True)
    cwd.mkdir(parents=True)
    (cwd / "README.md").write_text("# demo\n\nA scratch project for segue's Claude fixtures.\n")
    (cwd / "notes.txt").write_text("alpha\nbeta\ngamma\n")
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(cwd),
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_AUTHOR_NAME": "Segue Fixtures",
        "GIT_AUTHOR_EMAIL": "fixtures@segue.invalid",
        "GIT_COMMITTER_NAME": "Segue Fixtures",
        "GIT_COMMITTER_EMAIL": "fixtures@segue.invalid",
        "GIT_AUTHOR_DATE": "2026-01-01T00:00:00Z",
        "GIT_COMMITTER_DATE": "2026-01-01T00:00:00Z",
    }
    for args in (["init", "-q", "-b", "main"], ["add", "."], ["commit", "-q", "-m", "initial"]):
        subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True)
    (cwd / ".git" / "config").chmod(0o644)


# --------------------------------------------------------------------------- a recording


@dataclass
class Recording:
    """One scenario being recorded: the CLI, its lane, and the statement of what went in."""

    name: str
    out_dir: Path
    standin: StandIn
    work_root: Path
    oauth: bool = False
    prompts: list[str] = field(default_factory=list)
    commands: list[dict[str, Any]] = field(default_factory=list)
    replies: list[str] = field(default_factory=list)
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    compactions: list[dict[str, Any]] = field(default_factory=list)
    errors: list[dict[str, Any]] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)
    state: str = "idle"
    reset_at: int | None = None
    notes: str = ""
    session_id: str | None = None
    runs: list[RunResult] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.cwd = self.work_root / f"claude-{self.name}"
        scratch = self.work_root / f"claude-{self.name}.scratch"
        shutil.rmtree(scratch, ignore_errors=True)
        scratch.mkdir(parents=True)
        make_repo(self.cwd)
        self.lane = self.standin.lane(log_path=scratch / "requests.full.jsonl")
        self.claude = ClaudeHome(scratch, self.lane, oauth=self.oauth)

    # -- scripting helpers: each records what it scripts

    def say(self, text: str) -> Text:
        self.replies.append(text)
        return Text(text)

    def tool(
        self, name: str, input: dict[str, Any], output_contains: str, *, is_error: bool = False
    ) -> ToolUse:
        call = {"name": name, "input": input, "output_contains": output_contains}
        self.tool_calls.append(call | {"is_error": is_error})
        return ToolUse(name, input)

    def bash(self, command: str, description: str, output_contains: str, **kw: bool) -> ToolUse:
        return self.tool(
            "Bash", {"command": command, "description": description}, output_contains, **kw
        )

    def reply(self, *blocks: Text | Thinking | ToolUse) -> Reply:
        return Reply(tuple(blocks))

    # -- running

    def turn(self, prompt: str, *script: Scripted, expect_rc: int = 0) -> RunResult:
        """Type one prompt (resuming the session after the first) with these replies queued."""
        self.lane.script("anthropic", *script)
        self.prompts.append(prompt)
        result = self.claude.run(prompt, cwd=self.cwd, resume=self.session_id)
        self._after_run(result, expect_rc)
        return result

    def command(self, text: str, *script: Scripted) -> RunResult:
        """Type a slash command (not a prompt): kept in ``commands`` with its place in the order."""
        self.lane.script("anthropic", *script)
        self.commands.append({"command": text, "after_prompts": len(self.prompts)})
        result = self.claude.run(text, cwd=self.cwd, resume=self.session_id)
        self._after_run(result, 0)
        return result

    def killed_turn(self, prompt: str, *script: Scripted, until_requests: int) -> RunResult:
        """Type a prompt, then kill the CLI once the lane has seen ``until_requests`` requests."""
        self.lane.script("anthropic", *script)
        self.prompts.append(prompt)
        result = self.claude.run_killed(
            prompt, cwd=self.cwd, resume=self.session_id, until_requests=until_requests
        )
        self._after_run(result, None)
        return result

    def _after_run(self, result: RunResult, expect_rc: int | None) -> None:
        self.runs.append(result)
        if expect_rc is not None and result.returncode != expect_rc:
            raise RuntimeError(f"{self.name}: expected exit {expect_rc}, got {result}")
        if self.session_id is None:
            self.session_id = self.claude.only_session_id()

    # -- output

    def finish(self) -> None:
        """Check the recording and write the fixture folder."""
        if self.lane.pending("anthropic"):
            raise RuntimeError(
                f"{self.name}: {self.lane.pending('anthropic')} replies never asked for"
            )
        transcript = self.claude.project_dir(self.cwd) / f"{self.session_id}.jsonl"
        self._check_tool_results(transcript)
        self.out_dir.mkdir(parents=True, exist_ok=True)
        self.claude.copy_sessions(self.out_dir / "home")
        with (self.out_dir / "requests.jsonl").open("wb") as f:
            for logged in self.lane.requests:
                f.write(orjson.dumps(sanitize_request(logged.to_json())) + b"\n")
        rel = Path("home/.claude/projects") / encode_project_dir(self.cwd) / transcript.name
        scenario = {
            "scenario": self.name,
            "provider": "claude",
            "cli_version": CLAUDE_VERSION,
            "session_id": self.session_id,
            "cwd": str(self.cwd),
            "transcript": rel.as_posix(),
            "auth": "oauth" if self.oauth else "api_key",
            "prompts": self.prompts,
            "commands": self.commands,
            "replies": self.replies,
            "tool_calls": self.tool_calls,
            "compactions": self.compactions,
            "errors": self.errors,
            "state": self.state,
            "reset_at": self.reset_at,
            "notes": self.notes,
            **self.extra,
        }
        (self.out_dir / "scenario.json").write_bytes(
            orjson.dumps(scenario, option=orjson.OPT_INDENT_2) + b"\n"
        )

    def _check_tool_results(self, transcript: Path) -> None:
        """Every scripted main-chain tool call must be in the transcript with a fitting result.

        Calls are matched in file order of their ``tool_use`` blocks; results by ``tool_use_id``
        (parallel calls finish, and are written, in any order).
        """
        uses, results = _main_tool_blocks(transcript)
        if len(uses) != len(self.tool_calls):
            raise RuntimeError(f"{self.name}: tool calls {uses} for {self.tool_calls}")
        for call, use in zip(self.tool_calls, uses, strict=True):
            text, is_error = results.get(str(use.get("id")), ("<no result>", None))
            fits = call["name"] == use.get("name") and call["input"] == use.get("input")
            if not fits or call["output_contains"] not in text or is_error != call["is_error"]:
                raise RuntimeError(f"{self.name}: {use} / {text[:300]!r} does not fit {call}")


def _main_tool_blocks(
    transcript: Path,
) -> tuple[list[dict[str, Any]], dict[str, tuple[str, bool]]]:
    uses: list[dict[str, Any]] = []
    results: dict[str, tuple[str, bool]] = {}
    for line in transcript.read_bytes().splitlines():
        record = orjson.loads(line)
        if record.get("type") not in ("user", "assistant") or record.get("isSidechain"):
            continue
        content = record.get("message", {}).get("content")
        for block in content if isinstance(content, list) else []:
            if not isinstance(block, dict):
                continue
            if block.get("type") == "tool_use":
                uses.append(block)
            elif block.get("type") == "tool_result":
                text = orjson.dumps(block.get("content")).decode()
                results[str(block.get("tool_use_id"))] = (text, bool(block.get("is_error")))
    return uses, results


# --------------------------------------------------------------------------- structure


CHAIN_TYPES = ("user", "assistant", "system", "attachment")
FLAGS = (
    "isCompactSummary",
    "isApiErrorMessage",
    "isMeta",
    "isSidechain",
    "isVisibleInTranscriptOnly",
)


def record_token(record: dict[str, Any]) -> str:
    """One chain record as a short token: type, subtype, content block types, set flags."""
    token = str(record.get("type"))
    if record.get("subtype"):
        token += f"/{record['subtype']}"
    if isinstance(record.get("attachment"), dict):
        token += f"/{record['attachment'].get('type')}"
    message = record.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, list):
        token += "[" + ",".join(str(b.get("type")) for b in content if isinstance(b, dict)) + "]"
    elif isinstance(content, str):
        token += "[str]"
    return token + "".join(f"!{flag}" for flag in FLAGS if record.get(flag))


_PARALLEL = ("assistant[tool_use]", "user[tool_result]")


def transcript_signature(path: Path) -> dict[str, Any]:
    """What a transcript looks like, without ids, times or texts: chain tokens in file order
    (within a run of tool calls and their results, sorted: the CLI writes the results of calls
    made at once as they end, between the calls still being written) and the set of metadata
    record types (their order depends on timing)."""
    chain: list[str] = []
    metadata: set[str] = set()
    for line in path.read_bytes().splitlines():
        record = orjson.loads(line)
        if record.get("type") in CHAIN_TYPES:
            chain.append(record_token(record))
        else:
            metadata.add(str(record.get("type")))
    return {"chain": tool_runs_sorted(chain, _PARALLEL), "metadata": sorted(metadata)}


def structure_signature(fixture_dir: Path) -> dict[str, Any]:
    """The structure of a recorded fixture that the reader tests rely on."""
    scenario = orjson.loads((fixture_dir / "scenario.json").read_bytes())
    transcript = fixture_dir / scenario["transcript"]
    session_dir = transcript.with_suffix("")
    subagents = sorted(session_dir.glob("subagents/*.jsonl")) if session_dir.is_dir() else []
    return {
        "main": transcript_signature(transcript),
        "subagents": [transcript_signature(p) for p in subagents],
        "subagent_meta": len(list(session_dir.glob("subagents/*.meta.json"))),
        "persisted_tool_results": len(list(session_dir.glob("tool-results/*"))),
        "prompts": len(scenario["prompts"]),
        "state": scenario["state"],
    }


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
    rec.turn(
        "Look at the files here and check whether missing.txt exists.",
        rec.reply(
            rec.say("I'll list the files first."),
            rec.bash("ls -1", "List the files", "README.md"),
        ),
        rec.bash(
            "cat missing.txt; echo 'checked missing.txt' >&2; exit 3",
            "Show missing.txt",
            "Exit code 3",
            is_error=True,
        ),
        rec.say("README.md and notes.txt are there; missing.txt does not exist."),
    )
    rec.turn(
        "Count the lines of notes.txt.",
        rec.bash("wc -l notes.txt", "Count lines", "3 notes.txt"),
        rec.say("notes.txt has 3 lines."),
    )


def thinking(rec: Recording) -> None:
    rec.turn(
        "Is 91 a prime number?",
        rec.reply(
            Thinking("91 = 7 * 13, so it is not prime. The user wants a short answer."),
            rec.say("No: 91 is 7 × 13."),
        ),
    )
    rec.turn(
        "And 97?",
        rec.reply(
            Thinking("97 has no divisor up to 9, so it is prime."), rec.say("Yes, 97 is prime.")
        ),
    )
    rec.extra["thinking"] = [
        "91 = 7 * 13, so it is not prime. The user wants a short answer.",
        "97 has no divisor up to 9, so it is prime.",
    ]


def rate_limited(rec: Recording) -> None:
    rec.turn("Say hello.", rec.say("Hello!"))
    limit = RateLimited(subscriber=True)
    reset_at = limit.resolved_reset()
    rec.turn("Now write a limerick.", RateLimited(subscriber=True, reset_at=reset_at), expect_rc=1)
    rec.errors.append({"kind": "usage_limit", "reset_at": reset_at})
    rec.state, rec.reset_at = "limit", reset_at
    rec.notes = (
        "Subscriber (CLAUDE_CODE_OAUTH_TOKEN). "
        "The second turn got a 429 with unified status rejected."
    )


def api_key_rate_limited(rec: Recording) -> None:
    rec.turn("Say hello.", rec.say("Hello!"))
    rec.turn("Now write a limerick.", RateLimited(subscriber=False), expect_rc=1)
    rec.errors.append({"kind": "rate_limit", "reset_at": None})
    rec.state = "limit"
    rec.notes = (
        "API key. The second turn got a 429 rate_limit_error (x-should-retry: false, so no retry). "
        "No quotaLimits are written, so the limit has no known reset (reset_at null)."
    )


def compact(rec: Recording) -> None:
    rec.turn("Remember the word 'lantern'.", rec.say("Noted: lantern."))
    rec.turn("Also remember the number 42.", rec.say("Noted: 42."))
    summary = "The user asked me to remember the word 'lantern' and the number 42."
    rec.command("/compact", Summary(summary))
    rec.compactions.append({"state": "portable", "trigger": "manual", "summary_contains": summary})
    rec.turn("What did I ask you to remember?", rec.say("The word 'lantern' and the number 42."))
    rec.notes = (
        "'/compact' was typed as a third input; it is listed in commands, not prompts, and the "
        "summary the stand-in returned is in compactions, not replies."
    )


def compact_failed(rec: Recording) -> None:
    rec.turn("Remember the word 'lantern'.", rec.say("Noted: lantern."))
    reset_at = RateLimited(subscriber=True).resolved_reset()  # whole minutes, as the text shows
    rec.command("/compact", FailedSummary(RateLimited(subscriber=True, reset_at=reset_at)))
    rec.errors.append({"kind": "usage_limit", "reset_at": reset_at})  # read from the stderr text
    rec.turn("What did I ask you to remember?", rec.say("The word 'lantern'."))
    rec.notes = (
        "Subscriber (CLAUDE_CODE_OAUTH_TOKEN). The summarisation request of '/compact' got a 429 "
        "with unified status rejected. Claude wrote no compact_boundary, no isCompactSummary "
        "carrier and no isApiErrorMessage record: only a system/local_command record "
        "(commandOutcome failed) whose content is '<local-command-stderr>Error during compaction: "
        "You've hit your 5-hour limit · resets ...</local-command-stderr>'. The CLI exited 0 and "
        "the next turn was sent the whole uncompacted history."
    )


def large(rec: Recording) -> None:
    calls_per_reply, replies = 10, 3
    script: list[Scripted] = []
    for r in range(replies):
        blocks = [
            rec.bash(
                f"seq -f 'row %06g of batch {r}-{i} in the large segue fixture' 1 1200",
                f"Print batch {r}-{i}",
                "row 000001",
            )
            for i in range(calls_per_reply)
        ]
        script.append(Reply(tuple(blocks)))
    script.append(rec.say("Printed all 30 batches."))
    rec.turn("Print the 30 batches of rows.", *script)
    rec.notes = (
        "30 Bash calls, 10 per reply, each printing ~55 KB. Claude keeps outputs over its limit in "
        "<session>/tool-results/<id>.txt and puts a <persisted-output> preview in tool_result, "
        "30000 chars in toolUseResult.stdout."
    )


BIG_TURNS, BIG_CALLS, BIG_LINES = 4, 2, 500


def big_outputs(rec: Recording) -> None:
    for t in range(BIG_TURNS):
        calls = [
            rec.bash(
                f"seq -f 'line %05g of output {t}-{i} in the big-outputs segue fixture' "
                f"1 {BIG_LINES}",
                f"Print output {t}-{i}",
                "line 00001",
            )
            for i in range(BIG_CALLS)
        ]
        rec.turn(
            f"Print outputs {t}-0 and {t}-1.",
            Reply(tuple(calls)),
            rec.say(f"Printed outputs {t}-0 and {t}-1."),
        )
    rec.notes = (
        f"{BIG_TURNS} turns of {BIG_CALLS} Bash calls, each printing {BIG_LINES} numbered lines "
        "(about 29 kB, under Claude's limit for keeping an output inline): the material of "
        "big sessions (copies of these turns) whose every output has known lines at 5% and 95%."
    )


def interrupted(rec: Recording) -> None:
    rec.turn("Say hello.", rec.say("Hello!"))
    rec.killed_turn(
        "Check the git log, then explain it.",
        rec.bash("git log --oneline", "Show the git log", "initial"),
        Stall(),
        until_requests=3,
    )
    rec.state = "working"
    rec.notes = (
        "The second turn ran its Bash call; the stand-in then stalled the follow-up request "
        "and the CLI was killed with SIGKILL, leaving the turn unfinished."
    )


def subagent(rec: Recording) -> None:
    agent_prompt = "Run ls -a in the project and report how many entries there are."
    agent_input = {
        "description": "Count entries",
        "prompt": agent_prompt,
        "subagent_type": "general-purpose",
        "run_in_background": False,
    }
    inner = ToolUse("Bash", {"command": "ls -a | wc -l", "description": "Count entries"})
    inner_reply = "There are 5 entries (with . and ..)."
    rec.turn(
        "Delegate counting the entries of this folder to a subagent.",
        rec.tool("Agent", agent_input, inner_reply),
        inner,
        Text(inner_reply),
        rec.say("The subagent counted 5 entries."),
    )
    rec.extra["subagents"] = [
        {
            "prompt": agent_prompt,
            "replies": [inner_reply],
            "tool_calls": [
                {"name": "Bash", "input": inner.input, "output_contains": "5", "is_error": False}
            ],
        }
    ]
    rec.notes = (
        "A foreground Agent call (run_in_background false); its sidechain is in <id>/subagents/."
    )


@dataclass(frozen=True, slots=True)
class ScenarioSpec:
    script: Callable[[Recording], None]
    oauth: bool = False


SPECS: dict[str, ScenarioSpec] = {
    "chat": ScenarioSpec(chat),
    "multi_turn": ScenarioSpec(multi_turn, oauth=True),
    "tool_cycle": ScenarioSpec(tool_cycle),
    "thinking": ScenarioSpec(thinking, oauth=True),
    "rate_limited": ScenarioSpec(rate_limited, oauth=True),
    "api_key_rate_limited": ScenarioSpec(api_key_rate_limited),
    "compact": ScenarioSpec(compact, oauth=True),
    "large": ScenarioSpec(large),
    "big_outputs": ScenarioSpec(big_outputs),
    "interrupted": ScenarioSpec(interrupted, oauth=True),
    "subagent": ScenarioSpec(subagent),
    "compact_failed": ScenarioSpec(compact_failed, oauth=True),
}


def record(
    name: str, out_dir: Path, standin: StandIn, *, work_root: Path = DEFAULT_WORK_ROOT
) -> Recording:
    """Record one scenario into ``out_dir`` (its cwd and scratch home live under ``work_root``)."""
    spec = SPECS[name]
    rec = Recording(name, out_dir, standin, work_root, oauth=spec.oauth)
    spec.script(rec)
    rec.finish()
    return rec


def _entry(name: str) -> Callable[[Path, StandIn], None]:
    def run(out_dir: Path, standin: StandIn) -> None:
        record(name, out_dir, standin)

    return run


SCENARIOS: dict[str, Callable[[Path, StandIn], None]] = {name: _entry(name) for name in SPECS}

__all__ = [
    "SCENARIOS",
    "SPECS",
    "Recording",
    "make_repo",
    "record",
    "sanitize_request",
    "structure_signature",
    "transcript_signature",
]
