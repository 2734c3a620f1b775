"""A session several times the target's window, made of large tool outputs, keeps the most the
target can hold: the real target CLI resumes it, and its request is the proof.

The source is copies of the recorded ``big_outputs`` fixture (turns of ``seq`` outputs of about
29 kB), each copy's lines labelled apart, so every output has its own known line at 5% and at
95% of its length. The bar (issue 8): both lines reach the request for at least 65% of the
outputs, the request fits the window the CLI uses for its model, and every prompt is carried or
indexed.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

from segue.model.conversation import Compaction, Provider, ToolResult, UserMessage
from segue.providers.sessions import read_session
from segue.switch import switch_session
from segue.transforms.budget import history_chars
from segue.transforms.effective import portable_history
from segue.transforms.plan import Label
from segue.transforms.shrink import MARKER_TRIGGER
from segue.transforms.turns import prompts
from segue_testbed.fixtures import all_fixtures
from segue_testbed.generate import write_large_session
from segue_testbed.standin.server import StandIn
from tests.test_switch import Target, history_texts_sent, tokens_sent

pytestmark = pytest.mark.realcli

FIXTURES = {f.name: f for f in all_fixtures()}
WINDOWS = 3  # the source is at least this many times the target's window


def _big_source(provider: Provider, home: Path, megabytes: float) -> tuple[str, Path, str]:
    fixture = FIXTURES[f"{provider.value}-big_outputs"]
    folder = (home / str(fixture.spec["transcript"]).removeprefix("home/")).parent
    folder.mkdir(parents=True, exist_ok=True)
    path, _ = write_large_session(
        provider, folder, megabytes, scenario="big_outputs", relabel=b"of output "
    )
    conversation = read_session(path)
    assert conversation.skipped == []
    return conversation.meta.id, path, str(conversation.meta.cwd)


def _facts(output: str) -> tuple[str, str]:
    lines = output.splitlines()
    return lines[len(lines) * 5 // 100], lines[len(lines) * 95 // 100]


# What the request held, as a share of the window, and the share of the outputs' lines it carried,
# when the budget was a flat estimate (measured on the commit before token budgets).
TODAY = {
    "codex gpt-5.5": 232_465 / 272_000,
    "codex, a model it does not know": 232_520 / 272_000,
    "claude-sonnet-4-5 (200k)": 161_600 / 200_000,
}
TODAY_RECALL = {
    "codex gpt-5.5": 0.183,
    "codex, a model it does not know": 0.184,
    "claude-sonnet-4-5 (200k)": 0.191,
}


def _recall(portable: list[Any], texts: list[str]) -> float:
    """The share of the source's tool output lines that reached the request."""
    have = {line for text in texts for line in text.splitlines()}
    lines = [
        line
        for item in portable
        if isinstance(item, ToolResult)
        for line in item.output.splitlines()
        if len(line) > 20
    ]
    return sum(1 for line in lines if line in have) / len(lines)


CASES = {
    # target, its model setting, the source provider, the source's size in MB
    "codex gpt-5.5": (Provider.CODEX, "gpt-5.5", Provider.CLAUDE, 10.0),
    "codex, a model it does not know": (Provider.CODEX, "gpt-5-codex", Provider.CLAUDE, 10.0),
    "claude-sonnet-4-5 (200k)": (Provider.CLAUDE, "claude-sonnet-4-5", Provider.CODEX, 5.5),
}


@pytest.mark.parametrize("case", list(CASES))
def test_a_session_three_windows_big_keeps_the_head_and_tail_of_its_outputs(
    case: str, standin: StandIn, tmp_path: Path
) -> None:
    to, model, source_provider, megabytes = CASES[case]
    target = Target(to, tmp_path, standin.lane())
    if to is Provider.CODEX:
        config = target.codex.codex_home / "config.toml"
        config.write_text(config.read_text().replace('model = "gpt-5.5"', f'model = "{model}"'))
    cli_env = {"ANTHROPIC_MODEL": model} if to is Provider.CLAUDE else {}
    target.env.update(cli_env)
    session_id, source_path, cwd_text = _big_source(source_provider, target.home, megabytes)
    cwd = Path(cwd_text)
    cwd.mkdir(parents=True, exist_ok=True)
    source = read_session(source_path)
    portable, _ = portable_history(source)

    result = switch_session(session_id, to, env=target.env)

    plan = result.plan
    profile = plan.target
    source_tokens = history_chars(portable) / profile.chars_per_token
    assert source_tokens >= WINDOWS * profile.context_window, "the premise: a big enough source"
    assert plan.label is Label.SHRUNK and plan.trimmed_results > 0
    assert f"{plan.trimmed_results} tool outputs" in plan.loss_line or plan.capped_results

    run, body = target.resume(str(result.session_id), cwd, env=cli_env)
    assert run.returncode == 0, run.stderr[-2000:]
    assert "MARKER" in run.stdout

    # the request, counted by the target's tokenizer, fits its window, and fills it: the
    # history is at least the share of the window it was before budgets counted real tokens
    sent_tokens = tokens_sent(profile, body)
    assert sent_tokens <= profile.context_window
    assert sent_tokens >= TODAY[case] * profile.context_window
    texts = history_texts_sent(to, body)
    assert _recall(portable, texts) >= TODAY_RECALL[case]
    assert body.get("model") in (None, profile.model) or to is Provider.CODEX

    # the head and tail lines of the outputs reached the model
    sent = orjson.dumps(body["messages"] if to is Provider.CLAUDE else body["input"]).decode()
    outputs = [item.output for item in portable if isinstance(item, ToolResult)]
    kept = sum(1 for o in outputs if all(fact in sent for fact in _facts(o)))
    assert len(outputs) >= 40
    assert kept / len(outputs) >= 0.65, f"{kept} of {len(outputs)} outputs kept both lines"

    # every prompt reached the target, as a prompt or in the index of dropped turns
    index = "".join(
        i.summary for i in plan.items if isinstance(i, Compaction) and i.trigger == MARKER_TRIGGER
    )
    for prompt in prompts(portable):
        assert isinstance(prompt, UserMessage)
        assert prompt.text in sent or prompt.text in index


def test_a_session_that_fits_a_1m_claude_window_by_its_tokenizer_is_carried_whole(
    standin: StandIn, tmp_path: Path
) -> None:
    """A 2.3 MB session of tool outputs: a flat 3-characters-a-token estimate with margins
    would cut it; counted by the tokenizer it fits Claude's default 1M model, so every line of
    every output reaches the request."""
    target = Target(Provider.CLAUDE, tmp_path, standin.lane())
    session_id, source_path, cwd_text = _big_source(Provider.CODEX, target.home, 2.3)
    Path(cwd_text).mkdir(parents=True, exist_ok=True)
    portable, _ = portable_history(read_session(source_path))
    result = switch_session(session_id, Provider.CLAUDE, env=target.env)
    plan = result.plan
    assert plan.target.context_window == 1_000_000
    run, body = target.resume(str(result.session_id), Path(cwd_text))
    assert run.returncode == 0, run.stderr[-2000:]
    sent = tokens_sent(plan.target, body)  # the tokenizer's count, times the safety factor
    assert sent <= plan.target.window_budget_tokens, "the premise: the tokenizer says it fits"
    assert plan.label is Label.NATIVE and plan.fits
    assert _recall(portable, history_texts_sent(Provider.CLAUDE, body)) == 1.0
    assert plan.measure_after.tokens == pytest.approx(sent, rel=0.08)  # estimated, not guessed


def test_a_session_of_minified_json_and_base64_is_cut_to_fit_by_the_tokenizer(
    standin: StandIn, tmp_path: Path
) -> None:
    """Outputs of minified JSON and base64 run about 2 characters a token, so a history the
    CLI's own estimate (4 characters a token) says fits would overflow Codex's window; the
    budget counts what the tokenizer counts and cuts it, and the request fits."""
    target = Target(Provider.CODEX, tmp_path, standin.lane())
    session_id, source_path, cwd_text = _big_source(Provider.CLAUDE, target.home, 1.0)
    Path(cwd_text).mkdir(parents=True, exist_ok=True)
    _replace_outputs(source_path, 640_000)
    result = switch_session(session_id, Provider.CODEX, env=target.env)
    plan = result.plan
    # the premise: the flat estimate (4 characters a token, a fifth off for margin: 705,024
    # characters into gpt-5.5) would have sent it whole, and whole it is over the window
    assert plan.measure_before.chars <= 705_024
    assert plan.measure_before.tokens > plan.target.context_window
    run, body = target.resume(str(result.session_id), Path(cwd_text))
    assert run.returncode == 0, run.stderr[-2000:]
    assert plan.label is Label.SHRUNK
    assert plan.target.deciding_limit(plan.measure_after) == "window"
    sent = tokens_sent(plan.target, body)
    assert sent <= plan.target.context_window
    assert sent >= 0.85 * plan.target.window_budget_tokens  # cut to the limit, not far below


def _replace_outputs(path: Path, chars: int) -> None:
    """Rewrite the Claude session's tool outputs as minified JSON with base64 payloads, about
    ``chars`` characters in all (a test of repair: the records stay the CLI's own)."""
    import base64
    import random

    rng = random.Random(15)
    lines = path.read_bytes().splitlines()
    results = sum(1 for line in lines if b'"tool_result"' in line)
    each = chars // max(results, 1)
    out = []
    for line in lines:
        record = orjson.loads(line)
        content = record.get("message", {}).get("content")
        if isinstance(content, list):
            for block in content:
                if isinstance(block, dict) and block.get("type") == "tool_result":
                    rows: list[str] = []
                    while sum(map(len, rows)) < each:
                        rows.append(
                            orjson.dumps(
                                {
                                    "id": rng.randbytes(8).hex(),
                                    "blob": base64.b64encode(rng.randbytes(90)).decode(),
                                    "n": rng.randint(0, 10**9),
                                }
                            ).decode()
                        )
                    block["content"] = "[" + ",".join(rows) + "]"
        out.append(orjson.dumps(record))
    path.write_bytes(b"\n".join(out) + b"\n")
