"""The targets' real tokenizers, for calibrating and checking segue's token estimate (never used
by segue itself): OpenAI's o200k (the GPT-5 family Codex runs; npm ``gpt-tokenizer``) and
Anthropic's published Claude tokenizer (npm ``@anthropic-ai/tokenizer``), both pinned in
``testbed/package.json`` with their vocabularies bundled, run by one node process per call.
"""

from __future__ import annotations

import subprocess
from collections.abc import Sequence
from dataclasses import dataclass

import orjson

from segue_testbed.testbed import CliMissing, repo_root

__all__ = ["TokenCounts", "count_tokens"]

_SCRIPT = r"""
const {countTokens} = require("@anthropic-ai/tokenizer");
const {encode} = require("gpt-tokenizer/encoding/o200k_base");
let data = "";
process.stdin.setEncoding("utf8");
process.stdin.on("data", (chunk) => { data += chunk; });
process.stdin.on("end", () => {
  const texts = JSON.parse(data);
  const out = texts.map((t) => [encode(t, {allowedSpecial: "all"}).length, countTokens(t)]);
  process.stdout.write(JSON.stringify(out));
});
"""


@dataclass(frozen=True, slots=True)
class TokenCounts:
    o200k: int  # OpenAI's o200k_base: what a GPT-5 model counts
    claude: int  # Anthropic's published tokenizer


def count_tokens(texts: Sequence[str], timeout: float = 600) -> list[TokenCounts]:
    """The real token counts of each text, by both tokenizers."""
    if not texts:
        return []
    modules = repo_root() / "testbed" / "node_modules"
    if (
        not (modules / "gpt-tokenizer").is_dir()
        or not (modules / "@anthropic-ai" / "tokenizer").is_dir()
    ):
        raise CliMissing(f"the tokenizers are not installed in {modules} (npm ci --prefix testbed)")
    done = subprocess.run(
        ["node", "-e", _SCRIPT],
        input=orjson.dumps(list(texts)),
        capture_output=True,
        cwd=modules.parent,
        timeout=timeout,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"the tokenizers failed: {done.stderr.decode(errors='replace')[-2000:]}")
    return [TokenCounts(o, c) for o, c in orjson.loads(done.stdout)]
