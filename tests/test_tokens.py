"""The content-based token estimate against the real tokenizers of the test bed (o200k and
Anthropic's published one): close on the recorded sessions, and far closer than a flat ratio on
the kinds of text a flat ratio gets wrong. (Not yet used by the budget: issue 15 wires it in.)"""

from __future__ import annotations

import base64
import random

import pytest

from segue.providers.sessions import read_session
from segue.transforms.tokens import CLAUDE_PUBLISHED, O200K, counts, visible_text
from segue_testbed.fixtures import all_fixtures
from segue_testbed.tokenizers import count_tokens


def test_each_recorded_session_is_estimated_within_a_quarter() -> None:
    sessions = [
        "\n".join(filter(None, map(visible_text, read_session(f.transcript).items)))
        for f in all_fixtures()
    ]
    real = count_tokens(sessions)
    for text, counted in zip(sessions, real, strict=True):
        assert abs(O200K.count(text) - counted.o200k) <= 0.25 * counted.o200k + 5
        assert abs(CLAUDE_PUBLISHED.count(text) - counted.claude) <= 0.25 * counted.claude + 5


@pytest.mark.parametrize("kind", ["base64", "hex", "digits", "cjk"])
def test_text_a_flat_ratio_misjudges_is_estimated_closer(kind: str) -> None:
    """Random base64 and hex, long digit runs and CJK: a flat ratio is 40-60% off; the estimate
    is closer (digit runs it over-counts, the safe side)."""
    rng = random.Random(kind)
    text = {
        "base64": lambda: base64.b64encode(rng.randbytes(3000)).decode(),
        "hex": lambda: rng.randbytes(2000).hex(),
        "digits": lambda: " ".join(str(rng.randint(0, 10**9)) for _ in range(400)),
        "cjk": lambda: "".join(chr(rng.randint(0x4E00, 0x4FFF)) for _ in range(600)),
    }[kind]()
    (real,) = count_tokens([text])
    o200k, claude = O200K.count(text), CLAUDE_PUBLISHED.count(text)
    if kind == "digits":
        assert o200k >= real.o200k and claude >= real.claude
        return
    flat = len(text.encode()) / 4  # what Codex itself estimates
    assert abs(o200k - real.o200k) < 0.7 * abs(flat - real.o200k)
    assert abs(claude - real.claude) < 0.7 * abs(len(text) / 3 - real.claude)


def test_a_long_text_is_sampled_and_scaled_to_its_length() -> None:
    text = "word " * 100_000
    whole = counts(text)
    assert whole.size == pytest.approx(len(text), rel=0.01)
    assert whole.letters == pytest.approx(len(text) * 4 / 5, rel=0.01)
