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
from tests.test_switch import Target, history_chars_sent

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

    # the request fits the window the target CLI uses for its model
    assert profile.tokens(history_chars_sent(to, body)) <= profile.context_window
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
