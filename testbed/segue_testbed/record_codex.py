"""Record the Codex fixtures: the real Codex CLI against the stand-in, one function per scenario.

Each scenario writes ``<out_dir>/`` = ``home/`` (only the rollout files Codex wrote),
``requests.jsonl`` (the stand-in's log, slimmed: see :func:`slim_request`) and ``scenario.json``
(what the script put in: prompts, scripted replies, tool calls, compactions, errors, final state).
The reader tests take ``scenario.json`` as the truth and never hand-write rollout records.
"""

from __future__ import annotations

import functools
import hashlib
import os
import shutil
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import orjson

from segue_testbed.codex_cli import (
    CodexHome,
    Provider,
    RunResult,
    codex_version,
    read_rollout,
    repo_root,
    session_id_of,
)
from segue_testbed.record import tool_runs_sorted
from segue_testbed.standin.openai import (
    FunctionCall,
    LocalSummary,
    RateLimits,
    Reasoning,
    RemoteCompaction,
    Reply,
    Stall,
    Text,
    Turn,
    Usage,
    UsageLimit,
    defaults_served,
    release_stalls,
    request_kind,
    turn,
)
from segue_testbed.standin.server import LoggedRequest, StandIn

CLI_VERSION = "0.169.0"
FIXTURE_CWD_ROOT = Path("/tmp/segue-fixtures")
MAX_STRING = 20_000
BIG_FIELDS = ("instructions", "tools")
# Reported usage that is over the auto-compaction limit (90% of gpt-5.5's 272000 window).
OVER_LIMIT = Usage(input_tokens=250_000, output_tokens=100, total_tokens=250_100)
RESET_AT = 1_900_000_000  # a fixed future epoch (2030-03-17) so regenerated files agree

State = Literal["idle", "working", "limit"]


class ScenarioFailed(AssertionError):
    pass


# --------------------------------------------------------------------------- one recording


@dataclass
class Recording:
    """One scenario being recorded: a scratch Codex home on its own lane, and the ledger."""

    name: str
    out_dir: Path
    standin: StandIn
    provider: Provider = "standin"
    cwd: Path | None = None
    extra_config: str = ""
    prompts: list[str] = field(default_factory=list)
    replies: list[str] = field(default_factory=list)
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    compactions: list[dict[str, Any]] = field(default_factory=list)
    errors: list[dict[str, Any]] = field(default_factory=list)
    rolled_back_prompts: list[str] = field(default_factory=list)
    state: State = "idle"
    reset_at: int | None = None
    notes: list[str] = field(default_factory=list)
    session_id: str | None = None

    def __post_init__(self) -> None:
        check_version()
        if self.cwd is None:
            self.cwd = FIXTURE_CWD_ROOT / f"codex-{self.name}"
        self.cwd.mkdir(parents=True, exist_ok=True)
        self._scratch = Path(tempfile.mkdtemp(prefix=f"segue-codex-{self.name}-"))
        self.lane = self.standin.lane(f"codex-{self.name}-{self._scratch.name[-8:]}")
        self.home = CodexHome(
            self._scratch, self.lane, provider=self.provider, extra_config=self.extra_config
        )

    @property
    def workdir(self) -> Path:
        assert self.cwd is not None
        return self.cwd

    def script(self, *replies: Reply) -> None:
        self.lane.script("openai", *replies)
        for reply in replies:
            self._ledger(reply)

    def _ledger(self, reply: Reply) -> None:
        items: tuple[Reply, ...] = reply.items if isinstance(reply, Turn) else (reply,)
        for item in items:
            if isinstance(item, Text):
                self.replies.append(item.text)
            elif isinstance(item, LocalSummary):
                self.compactions.append({"state": "portable", "summary_contains": item.text})
            elif isinstance(item, RemoteCompaction):
                self.compactions.append({"state": "native_only", "summary_contains": None})
            elif isinstance(item, UsageLimit):
                self.errors.append({"kind": "usage_limit", "reset_at": item.resets_at})

    def tool(
        self, cmd: str, output_contains: str, *, is_error: bool = False, **extra: Any
    ) -> Reply:
        """An ``exec_command`` call (Codex really runs it) noted in the ledger."""
        arguments: dict[str, Any] = {"cmd": cmd, **extra}
        self.tool_calls.append(
            {
                "name": "exec_command",
                "input": arguments,
                "output_contains": output_contains,
                "is_error": is_error,
            }
        )
        return FunctionCall("exec_command", arguments)

    def run(self, prompt: str, *, expect_rc: int = 0, timeout: float = 60.0) -> RunResult:
        """One user turn: a new thread the first time, ``exec resume <id>`` afterwards."""
        self.prompts.append(prompt)
        result = self.home.exec(prompt, cwd=self.workdir, resume=self.session_id, timeout=timeout)
        if result.returncode != expect_rc:
            raise ScenarioFailed(
                f"{self.name}: codex exited {result.returncode} (wanted {expect_rc})\n"
                f"stderr: {result.stderr[-3000:]}"
            )
        if self.session_id is None:
            self.session_id = session_id_of(self.home.rollouts()[0])
        return result

    def run_killed(self, prompt: str, ready: Callable[[], bool]) -> RunResult:
        self.prompts.append(prompt)
        result = self.home.exec_until(prompt, cwd=self.workdir, resume=self.session_id, ready=ready)
        release_stalls(self.lane)
        if self.session_id is None:
            self.session_id = session_id_of(self.home.rollouts()[0])
        return result

    def model_requests(self) -> list[LoggedRequest]:
        return [r for r in self.lane.requests_for("openai") if request_kind(r) != "other"]

    def finish(self) -> None:
        """Check the script was used up, then write ``home/``, ``requests.jsonl`` and
        ``scenario.json``."""
        left = self.lane.pending("openai")
        if left:
            raise ScenarioFailed(f"{self.name}: {left} scripted replies were never requested")
        if defaults_served(self.lane):
            self.notes.append(
                f"unscripted requests answered by default: {defaults_served(self.lane)}"
            )
        if self.out_dir.exists():
            shutil.rmtree(self.out_dir)
        (self.out_dir / "home").mkdir(parents=True)
        copied = self.home.copy_rollouts(self.out_dir / "home")
        with (self.out_dir / "requests.jsonl").open("wb") as f:
            for request in self.lane.requests:
                f.write(orjson.dumps(slim_request(request.to_json())) + b"\n")
        assert self.session_id is not None
        main = self.home.rollout_for(self.session_id)
        transcripts = [str(p.relative_to(self.out_dir)) for p in copied]
        modes = sorted({history_mode(p) for p in copied})
        scenario = {
            "scenario": self.name,
            "provider": "codex",
            "cli_version": CLI_VERSION,
            "session_id": self.session_id,
            "cwd": str(self.cwd),
            "transcript": str(
                (self.out_dir / "home" / main.relative_to(self.home.home)).relative_to(self.out_dir)
            ),
            "transcripts": transcripts,
            "history_mode": modes[0] if len(modes) == 1 else modes,
            "model_provider": self.provider,
            "prompts": self.prompts,
            "replies": self.replies,
            "tool_calls": self.tool_calls,
            "compactions": self.compactions,
            "errors": self.errors,
            "rolled_back_prompts": self.rolled_back_prompts,
            "state": self.state,
            "reset_at": self.reset_at,
            "notes": " ".join(self.notes),
        }
        (self.out_dir / "scenario.json").write_bytes(
            orjson.dumps(scenario, option=orjson.OPT_INDENT_2) + b"\n"
        )
        shutil.rmtree(self._scratch, ignore_errors=True)

    def abandon(self) -> None:
        release_stalls(self.lane)
        shutil.rmtree(self._scratch, ignore_errors=True)


def history_mode(rollout: Path) -> str:
    meta = read_rollout(rollout)[0]["payload"]
    return str(meta.get("history_mode") or "legacy")


def slim_request(logged: dict[str, Any]) -> dict[str, Any]:
    """Replace big ``instructions``/``tools`` values by a digest and cap long strings."""
    body = logged.get("body")
    if isinstance(body, dict):
        body = dict(body)
        for key in BIG_FIELDS:
            if key in body:
                raw = orjson.dumps(body[key], option=orjson.OPT_SORT_KEYS)
                body[key] = {"sha256": hashlib.sha256(raw).hexdigest(), "chars": len(raw)}
        logged = dict(logged, body=_cap_strings(body))
    return logged


def _cap_strings(value: Any) -> Any:
    if isinstance(value, str) and len(value) > MAX_STRING:
        half = MAX_STRING // 2
        cut = len(value) - 2 * half
        return f"{value[:half]}\n[segue-fixture: {cut} chars cut]\n{value[-half:]}"
    if isinstance(value, list):
        return [_cap_strings(v) for v in value]
    if isinstance(value, dict):
        return {k: _cap_strings(v) for k, v in value.items()}
    return value


def _record(
    name: str,
    out_dir: Path,
    standin: StandIn,
    body: Callable[[Recording], None],
    provider: Provider = "standin",
    cwd: Path | None = None,
    extra_config: str = "",
) -> None:
    rec = Recording(name, out_dir, standin, provider=provider, cwd=cwd, extra_config=extra_config)
    try:
        body(rec)
    except BaseException:
        rec.abandon()
        raise
    rec.finish()


# --------------------------------------------------------------------------- scenarios


def chat(out_dir: Path, standin: StandIn, cwd: Path | None = None) -> None:
    def body(rec: Recording) -> None:
        rec.script(Text("Hello! I am the stand-in model, answering through Codex."))
        rec.run("Say hello in one short sentence.")

    _record("chat", out_dir, standin, body, cwd=cwd)


def multi_turn(out_dir: Path, standin: StandIn, cwd: Path | None = None) -> None:
    def body(rec: Recording) -> None:
        turns = [
            ("My favourite colour is teal. Remember it.", "Noted: your favourite colour is teal."),
            ("What is 6 times 7?", "6 times 7 is 42."),
            ("What colour did I mention earlier?", "You said your favourite colour is teal."),
        ]
        for prompt, answer in turns:
            rec.script(Text(answer))
            rec.run(prompt)

    _record("multi_turn", out_dir, standin, body, cwd=cwd)


def tool_cycle(out_dir: Path, standin: StandIn, cwd: Path | None = None) -> None:
    def body(rec: Recording) -> None:
        rec.script(
            rec.tool("echo segue-tool-ok && pwd", "segue-tool-ok"),
            rec.tool(
                "cat /nonexistent/segue-missing.txt", "No such file or directory", is_error=True
            ),
            Text("The first command printed segue-tool-ok; the second failed: no such file."),
        )
        rec.run("Run a quick shell check, then try to read a missing file.")
        rec.notes.append("exec_command runs for real; the failing one exits with code 1.")

    _record("tool_cycle", out_dir, standin, body, cwd=cwd)


def reasoning(out_dir: Path, standin: StandIn, cwd: Path | None = None) -> None:
    def body(rec: Recording) -> None:
        rec.script(
            turn(
                Reasoning(
                    "**Weighing the question**\n\nThe user wants a one-word answer.",
                    encrypted_content="c2VndWUtc3RhbmRpbi1yZWFzb25pbmctMQ==",
                ),
                Text("Blue."),
                usage=Usage(reasoning_output_tokens=17),
            )
        )
        rec.run("In one word: what colour is a clear daytime sky?")
        rec.notes.append("reasoning summary + encrypted_content (stand-in blob, not OpenAI's).")

    _record("reasoning", out_dir, standin, body, cwd=cwd)


def _exhausted() -> RateLimits:
    """The headers of a 429 for a used-up 5-hour window."""
    return RateLimits(
        primary_used_percent=100.0,
        primary_window_minutes=300,
        primary_reset_at=RESET_AT,
        limit_name="segue-standin-limit",
    )


def _limits(used: float, secondary: float) -> RateLimits:
    return RateLimits(
        primary_used_percent=used,
        primary_window_minutes=300,
        primary_reset_at=RESET_AT,
        secondary_used_percent=secondary,
        secondary_window_minutes=10080,
        secondary_reset_at=RESET_AT + 86_400,
        credits_has_credits=True,
        credits_unlimited=False,
        credits_balance="12.34",
        limit_name="segue-standin-limit",
    )


def rate_limit_headers(out_dir: Path, standin: StandIn, cwd: Path | None = None) -> None:
    def body(rec: Recording) -> None:
        rec.script(
            turn(Text("First answer, with rate-limit headers."), rate_limits=_limits(42.5, 10.0))
        )
        rec.run("Answer with rate-limit headers, please.")
        rec.script(
            turn(Text("Second answer; the window is filling up."), rate_limits=_limits(87.0, 31.5))
        )
        rec.run("And once more.")
        rec.notes.append(
            f"x-codex-* headers: primary 42.5% then 87% (300 min, reset {RESET_AT}), "
            "secondary 10% then 31.5% (10080 min), credits balance 12.34."
        )

    _record("rate_limit_headers", out_dir, standin, body, cwd=cwd)


def usage_limited(out_dir: Path, standin: StandIn, cwd: Path | None = None) -> None:
    def body(rec: Recording) -> None:
        rec.script(turn(Text("Here is a normal answer."), rate_limits=_limits(97.0, 40.0)))
        rec.run("A normal question first.")
        rec.script(UsageLimit(resets_at=RESET_AT, rate_limits=_exhausted()))
        rec.run("This one hits the usage limit.", expect_rc=1)
        rec.state = "limit"
        rec.reset_at = RESET_AT
        rec.notes.append("HTTP 429 usage_limit_reached (plan plus); Codex does not retry it.")

    _record("usage_limited", out_dir, standin, body, cwd=cwd)


def stuck_agent(out_dir: Path, standin: StandIn, cwd: Path | None = None) -> None:
    """An agent at work (a shell call, a compaction) that then runs into its usage limit: the
    session ``segue demo`` and the switch tests move to the other provider."""

    def body(rec: Recording) -> None:
        rec.script(
            rec.tool("printf 'def area(r):\\n    return 3.14 * r * r\\n' > geometry.py", ""),
            rec.tool("cat geometry.py", "return 3.14 * r * r"),
            turn(Text("geometry.py defines area(r) with pi as 3.14."), usage=OVER_LIMIT),
        )
        rec.run("Create geometry.py with an area(r) function, then show it.")
        rec.script(
            LocalSummary(
                "SUMMARY: geometry.py defines area(r) = 3.14 * r * r; "
                "the user wants pi to be more precise next."
            ),
            rec.tool("sed -i 's/3.14/3.14159/' geometry.py && cat geometry.py", "3.14159"),
            Text("area(r) now uses 3.14159."),
        )
        rec.run("Use a more precise value of pi.")
        rec.script(UsageLimit(resets_at=RESET_AT, rate_limits=_exhausted()))
        rec.run("Now add a circumference(r) function.", expect_rc=1)
        rec.state = "limit"
        rec.reset_at = RESET_AT
        rec.notes.append(
            "turn 1 reports tokens over the limit, so turn 2 compacts first (local); turn 3 "
            "hits the usage limit (HTTP 429 usage_limit_reached)."
        )

    _record("stuck_agent", out_dir, standin, body, cwd=cwd)


def compact_local(out_dir: Path, standin: StandIn, cwd: Path | None = None) -> None:
    def body(rec: Recording) -> None:
        rec.script(turn(Text("The project is called Orchard; noted."), usage=OVER_LIMIT))
        rec.run("Our project is called Orchard. Remember that.")
        rec.script(
            LocalSummary("SUMMARY: the user works on a project called Orchard."),
            Text("Your project is called Orchard."),
        )
        rec.run("What is the project called?")
        rec.notes.append(
            "turn 1 reports 250100 total tokens (limit 244800), so the resumed turn 2 compacts "
            "first (local: custom provider)."
        )

    _record("compact_local", out_dir, standin, body, cwd=cwd)


def compact_local_multi(out_dir: Path, standin: StandIn, cwd: Path | None = None) -> None:
    def body(rec: Recording) -> None:
        rec.script(turn(Text("Noted: alpha."), usage=OVER_LIMIT))
        rec.run("Remember the word alpha.")
        rec.script(
            LocalSummary("SUMMARY 1: the user asked to remember alpha."),
            turn(Text("Noted: beta."), usage=OVER_LIMIT),
        )
        rec.run("Remember the word beta too.")
        rec.script(
            LocalSummary("SUMMARY 2: the user asked to remember alpha and beta."),
            turn(Text("Noted: gamma."), usage=OVER_LIMIT),
        )
        rec.run("And gamma.")
        rec.script(
            LocalSummary("SUMMARY 3: the words are alpha, beta and gamma."),
            Text("The words were alpha, beta and gamma."),
        )
        rec.run("Which words did I give you?")
        rec.notes.append("three local compactions, each before a resumed turn.")

    _record("compact_local_multi", out_dir, standin, body, cwd=cwd)


def compact_remote(out_dir: Path, standin: StandIn, cwd: Path | None = None) -> None:
    def body(rec: Recording) -> None:
        rec.script(turn(Text("Noted: the deadline is Friday."), usage=OVER_LIMIT))
        rec.run("The deadline is Friday. Remember it.")
        rec.script(
            RemoteCompaction("c2VndWUtc3RhbmRpbi1yZW1vdGUtY29tcGFjdGlvbg=="),
            Text("The deadline is Friday."),
        )
        rec.run("When is the deadline?")
        rec.notes.append(
            "built-in openai provider with openai_base_url: remote compaction v2 "
            "(compaction_trigger -> one encrypted compaction item)."
        )

    _record("compact_remote", out_dir, standin, body, provider="openai", cwd=cwd)


def rollback(out_dir: Path, standin: StandIn, cwd: Path | None = None) -> None:
    def body(rec: Recording) -> None:
        turns = [
            ("Start a list with: apples.", "List: apples."),
            ("Add pears to the list.", "List: apples, pears."),
            ("Add plums to the list.", "List: apples, pears, plums."),
        ]
        for prompt, answer in turns:
            rec.script(Text(answer))
            rec.run(prompt)
        assert rec.session_id is not None
        with rec.home.app_server(rec.workdir) as app:
            app.request("thread/resume", {"threadId": rec.session_id, "excludeTurns": True})
            listed = app.request("thread/turns/list", {"threadId": rec.session_id})
            turn_ids = [t["id"] for t in reversed(listed["data"])]  # newest first -> oldest
            app.request("thread/revert", {"threadId": rec.session_id, "beforeTurnId": turn_ids[1]})
        rec.rolled_back_prompts = [turns[1][0], turns[2][0]]
        rec.script(Text("List: apples, cherries."))
        rec.run("Add cherries to the list.")
        rec.notes.append(
            "app-server thread/revert {beforeTurnId: turn 2}: 0.169.0 paginated threads do not get "
            "a thread_rolled_back event; Codex starts a new rollout generation file "
            "(rollout-...-<id>_<generation>.jsonl) whose session_meta.history_base points at the "
            "kept prefix of the first file; the next turn is appended to the new file."
        )

    _record("rollback", out_dir, standin, body, cwd=cwd)


def large(out_dir: Path, standin: StandIn, cwd: Path | None = None) -> None:
    def body(rec: Recording) -> None:
        # One call per reply: parallel calls make Codex persist their events in a racy order.
        ends = [(i + 1) * 100_000 for i in range(LARGE_CALLS)]
        calls = [rec.tool(f"seq {end - 99_999} {end}", f"\n{end}\n") for end in ends]
        rec.script(*calls, Text("That was a lot of numbers."))
        rec.run("Print some very long number sequences.", timeout=120)
        rec.notes.append(
            f"{LARGE_CALLS} sequential exec_command calls printing about 0.6 MB each. Codex keeps "
            "head+tail of about 40 KB per call in function_call_output (a 10000-token budget that "
            "neither max_output_tokens nor tool_output_token_limit raises) and the first 64 KiB "
            "in item_completed.CommandExecution.aggregated_output: just over 1 MB in all."
        )

    _record("large", out_dir, standin, body, cwd=cwd)


LARGE_CALLS = 10
BIG_TURNS, BIG_CALLS, BIG_LINES = 4, 2, 500


def big_outputs(out_dir: Path, standin: StandIn, cwd: Path | None = None) -> None:
    def body(rec: Recording) -> None:
        for t in range(BIG_TURNS):
            calls = [
                rec.tool(
                    f"seq -f 'line %05g of output {t}-{i} in the big-outputs segue fixture' "
                    f"1 {BIG_LINES}",
                    "line 00001",
                )
                for i in range(BIG_CALLS)
            ]
            rec.script(*calls, Text(f"Printed outputs {t}-0 and {t}-1."))
            rec.run(f"Print outputs {t}-0 and {t}-1.", timeout=120)
        rec.notes.append(
            f"{BIG_TURNS} turns of {BIG_CALLS} sequential exec_command calls, each printing "
            f"{BIG_LINES} numbered lines (about 29 kB, under Codex's exec limit): the material "
            "of big sessions (copies of these turns) whose every output has known lines at 5% "
            "and 95%."
        )

    _record("big_outputs", out_dir, standin, body, cwd=cwd)


def interrupted(out_dir: Path, standin: StandIn, cwd: Path | None = None) -> None:
    def body(rec: Recording) -> None:
        rec.script(Text("First turn finished normally."))
        rec.run("A first, normal turn.")
        rec.script(Stall())
        before = len(rec.model_requests())

        def stalled() -> bool:
            return len(rec.model_requests()) > before

        rec.run_killed("This turn never finishes.", lambda: stalled() and _settle(0.5))
        rec.state = "working"
        rec.notes.append("the stand-in stalls the second turn and the CLI is SIGKILLed.")

    _record("interrupted", out_dir, standin, body, cwd=cwd)


def _settle(seconds: float) -> bool:
    time.sleep(seconds)
    return True


CLAUDE_SOURCE = Path("tests") / "fixtures" / "claude" / "tool_cycle"  # under repo_root()
IMPORT_TIMEOUT = 60.0


def imported_legacy(out_dir: Path, standin: StandIn, cwd: Path | None = None) -> None:
    """Codex's own Claude Code import (app-server ``externalAgentConfig/*``) of the committed
    Claude ``tool_cycle`` transcript, then one resumed ``codex exec`` turn on the import."""
    claude_dir = repo_root() / CLAUDE_SOURCE
    source = orjson.loads((claude_dir / "scenario.json").read_bytes())
    claude_cwd = Path(source["cwd"])

    def body(rec: Recording) -> None:
        transcript = rec.home.home / Path(source["transcript"]).relative_to("home")
        transcript.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(claude_dir / source["transcript"], transcript)
        os.utime(transcript)  # detect skips files older than 30 days
        with rec.home.app_server(rec.workdir) as app:
            detected = app.request(
                "externalAgentConfig/detect", {"includeHome": True, "cwds": [str(rec.workdir)]}
            )
            items = [i for i in detected["items"] if i.get("itemType") == "SESSIONS"]
            if not items:
                raise ScenarioFailed(f"{rec.name}: detect found no SESSIONS item: {detected}")
            app.request("externalAgentConfig/import", {"migrationItems": items})
            app.wait_notification("externalAgentConfig/import/completed", IMPORT_TIMEOUT)
        imported = rec.home.rollouts()
        if len(imported) != 1:
            raise ScenarioFailed(f"{rec.name}: expected one imported rollout, found {imported}")
        rec.session_id = session_id_of(imported[0])
        if history_mode(imported[0]) != "legacy":
            raise ScenarioFailed(f"{rec.name}: the import is not a legacy rollout")
        rec.prompts.extend(source["prompts"])
        rec.replies.extend(source["replies"])
        rec.notes.append(
            "imported by codex app-server externalAgentConfig/detect + import (SESSIONS) from the "
            "Claude tool_cycle fixture; the importer narrates Claude's tool_use/tool_result "
            "records as assistant text messages ([external_agent_tool_call: Bash] ... and "
            "[external_agent_tool_result] ...), so there are no function_call items; it ends "
            "with an agent_message event <EXTERNAL SESSION IMPORTED>."
        )
        rec.script(Text("The imported conversation continues here in Codex."))
        rec.run("Continue from the imported Claude conversation in one sentence.")

    _record("imported_legacy", out_dir, standin, body, cwd=cwd or claude_cwd)


SCENARIOS: dict[str, Callable[[Path, StandIn], None]] = {
    "chat": chat,
    "big_outputs": big_outputs,
    "multi_turn": multi_turn,
    "tool_cycle": tool_cycle,
    "reasoning": reasoning,
    "rate_limit_headers": rate_limit_headers,
    "usage_limited": usage_limited,
    "compact_local": compact_local,
    "compact_local_multi": compact_local_multi,
    "compact_remote": compact_remote,
    "rollback": rollback,
    "large": large,
    "interrupted": interrupted,
    "imported_legacy": imported_legacy,
    "stuck_agent": stuck_agent,
}


@functools.cache
def check_version() -> None:
    """Refuse to record with another Codex than the pinned one."""
    version = codex_version()
    if version != CLI_VERSION:
        raise ScenarioFailed(f"codex is {version}, the fixtures are pinned to {CLI_VERSION}")


# --------------------------------------------------------------------------- structure signature


def record_tag(record: dict[str, Any]) -> str:
    """``type[/payload type][/role or item type]`` of one rollout line."""
    payload = record.get("payload")
    parts = [str(record.get("type"))]
    if isinstance(payload, dict):
        if isinstance(payload.get("type"), str):
            parts.append(payload["type"])
        item = payload.get("item")
        if isinstance(payload.get("role"), str):
            parts.append(payload["role"])
        elif isinstance(item, dict) and isinstance(item.get("type"), str):
            parts.append(item["type"])
    return "/".join(parts)


TOOL_TAGS = frozenset(
    {
        "response_item/function_call",
        "response_item/function_call_output",
        "response_item/custom_tool_call",
        "response_item/custom_tool_call_output",
        "event_msg/item_completed/CommandExecution",
    }
)


def structure_signature(fixture_dir: Path) -> dict[str, Any]:
    """What the reader tests rely on, without ids, timestamps or token numbers."""
    scenario = orjson.loads((fixture_dir / "scenario.json").read_bytes())
    files = sorted((fixture_dir / "home").rglob("rollout-*.jsonl"))
    records = [read_rollout(path) for path in files]
    flat = [r for rs in records for r in rs]
    return {
        "files": [
            {
                "history_mode": rs[0]["payload"].get("history_mode", "legacy"),
                "history_base": "history_base" in rs[0]["payload"],
                "records": tool_runs_sorted([record_tag(r) for r in rs], TOOL_TAGS),
            }
            for rs in records
        ],
        "compacted": sum(1 for r in flat if r.get("type") == "compacted"),
        "thread_rolled_back": any(record_tag(r) == "event_msg/thread_rolled_back" for r in flat),
        "prompts": len(scenario["prompts"]),
        "state": scenario["state"],
    }
