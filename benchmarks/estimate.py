"""segue's token estimate (``segue.transforms.tokens``) against the targets' real tokenizers.

    uv run python benchmarks/estimate.py [--fit] [--mb 100] [--json]

Texts: every model-visible text of every recorded fixture (prompts, replies, tool calls and
outputs, summaries), the wild corpus's, segue's own source files (code), and synthetic text of
each kind (prose, minified JSON, base64, hex, digit runs, non-English text, logs). Each is
counted by o200k (npm ``gpt-tokenizer``) and Anthropic's published tokenizer
(``@anthropic-ai/tokenizer``), in the test bed. Printed per kind and per session: the estimate's
median and worst error, beside the flat ratios the CLIs use (Codex bytes / 4, Claude Code
characters / 3). Then the estimate's speed on a session of ``--mb`` MB as a share of a bare parse.

``--fit`` solves for each tokenizer's weights (least squares of the relative error over the
texts, an under-estimate weighing more) and prints them, to be copied into
``segue/transforms/tokens.py``.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import math
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson

from segue.model import conversation as neutral
from segue.providers.sessions import read_session
from segue.transforms import tokens
from segue_testbed.fixtures import all_fixtures
from segue_testbed.generate import write_large_session
from segue_testbed.testbed import repo_root
from segue_testbed.tokenizers import TokenCounts, count_tokens

MODELS = {"o200k": tokens.O200K, "claude": tokens.CLAUDE_PUBLISHED}


def _sessions() -> Iterator[tuple[str, str, list[str]]]:
    """(kind, session, texts) of the recorded fixtures and the wild corpus."""
    for fixture in all_fixtures():
        conversation = read_session(fixture.transcript)
        yield (
            "fixture",
            fixture.name,
            [t for t in map(tokens.visible_text, conversation.items) if t],
        )
    wild = repo_root() / "tests" / "wild" / "fixtures"
    for path in sorted(wild.rglob("*.jsonl")):
        try:
            conversation = read_session(path)
        except Exception:  # a case that is no session on its own (the tests say which)
            continue
        texts = [t for t in map(tokens.visible_text, conversation.items) if t]
        if texts:
            yield "wild", str(path.relative_to(wild)), texts


def _synthetic(rng: random.Random) -> Iterator[tuple[str, str, list[str]]]:
    words = (repo_root() / "README.md").read_text().split()
    prose = [" ".join(rng.choice(words) for _ in range(rng.randint(20, 400))) for _ in range(40)]
    yield "prose", "readme words", prose
    code = [p.read_text() for p in sorted((repo_root() / "src" / "segue").rglob("*.py"))][:60]
    yield "code", "segue's source", code
    records = []
    for fixture in all_fixtures()[:12]:
        lines = fixture.transcript.read_bytes().splitlines()
        records += [line.decode() for line in lines[:30]]
    yield "json", "minified records", records
    yield (
        "json ids",
        "minified json of ids and numbers",
        [
            orjson.dumps(
                [
                    {
                        "id": rng.randbytes(6).hex(),
                        "token": base64.b64encode(rng.randbytes(9)).decode(),
                        "n": rng.randint(0, 99999),
                        "ok": rng.random() < 0.5,
                    }
                    for _ in range(rng.randint(5, 120))
                ]
            ).decode()
            for _ in range(20)
        ],
    )
    yield (
        "base64",
        "random bytes",
        [base64.b64encode(rng.randbytes(rng.randint(100, 6000))).decode() for _ in range(30)],
    )
    yield "hex", "random hex", [rng.randbytes(rng.randint(50, 3000)).hex() for _ in range(30)]
    yield (
        "digits",
        "digit runs",
        [
            " ".join(
                str(rng.randint(0, 10 ** rng.randint(1, 12))) for _ in range(rng.randint(10, 300))
            )
            for _ in range(30)
        ],
    )
    cjk = [chr(c) for c in range(0x4E00, 0x4E00 + 3000)]
    yield (
        "non_ascii",
        "cjk and accents",
        ["".join(rng.choice(cjk) for _ in range(rng.randint(20, 800))) for _ in range(20)]
        + [
            " ".join(
                rng.choice(["café", "naïve", "über", "señor", "déjà", "Ørsted"]) for _ in range(200)
            )
            for _ in range(10)
        ],
    )
    cyrillic_words = [
        "съешь",
        "же",
        "ещё",
        "этих",
        "мягких",
        "французских",
        "булок",
        "да",
        "выпей",
        "чаю",
        "программа",
        "файл",
    ]
    yield (
        "cyrillic",
        "russian words",
        [
            " ".join(rng.choice(cyrillic_words) for _ in range(rng.randint(20, 400)))
            for _ in range(20)
        ],
    )
    emoji = [chr(c) for c in range(0x1F600, 0x1F650)]
    yield (
        "emoji",
        "emoji and words",
        [
            " ".join(rng.choice(emoji) + rng.choice(words) for _ in range(rng.randint(10, 200)))
            for _ in range(20)
        ],
    )
    yield (
        "logs",
        "shell logs",
        [
            "\n".join(
                f"2026-11-{rng.randint(1, 30):02d}T{rng.randint(0, 23):02d}"
                f":{rng.randint(0, 59):02d}"
                f" INFO pid={rng.randint(100, 99999)} path=/srv/app/{rng.choice(words)}.py"
                f" took {rng.random() * 100:.3f}ms status={rng.choice([200, 404, 500])}"
                for _ in range(rng.randint(5, 200))
            )
            for _ in range(30)
        ],
    )


def _solve(a: list[list[float]], b: list[float]) -> list[float]:
    """Gaussian elimination with partial pivoting (a small square system)."""
    n = len(b)
    m = [[*row, b[i]] for i, row in enumerate(a)]
    for col in range(n):
        pivot = max(range(col, n), key=lambda r: abs(m[r][col]))
        m[col], m[pivot] = m[pivot], m[col]
        if abs(m[col][col]) < 1e-12:
            continue
        for r in range(n):
            if r != col:
                f = m[r][col] / m[col][col]
                m[r] = [x - f * y for x, y in zip(m[r], m[col], strict=True)]
    return [m[i][n] / m[i][i] if abs(m[i][i]) > 1e-12 else 0.0 for i in range(n)]


UNDER_WEIGHT = 8.0  # an under-estimate costs this many times an over-estimate in the fit
KIND_BALANCE = 0.5  # each kind of text weighs (texts of its kind) ** -KIND_BALANCE


def fit(samples: list[tuple[str, tuple[float, ...], float]]) -> list[float]:
    """Weights minimising the weighted squared relative error over the texts: an under-estimate
    weighs UNDER_WEIGHT times more (iteratively reweighted), and a kind with many texts does not
    drown the others (KIND_BALANCE)."""
    k = len(tokens.FEATURES)
    per_kind: dict[str, int] = defaultdict(int)
    for kind, _, _ in samples:
        per_kind[kind] += 1
    rows = [([v / t for v in f], per_kind[kind] ** -KIND_BALANCE) for kind, f, t in samples]
    weights = [1.0] * len(rows)
    solution = [0.0] * k
    for _ in range(15):
        ata = [[0.0] * k for _ in range(k)]
        atb = [0.0] * k
        for (row, _), weight in zip(rows, weights, strict=True):
            for i in range(k):
                atb[i] += row[i] * weight
                for j in range(k):
                    ata[i][j] += row[i] * row[j] * weight
        solution = _solve(ata, atb)
        estimates = [sum(w * v for w, v in zip(solution, row, strict=True)) for row, _ in rows]
        weights = [
            base * (UNDER_WEIGHT if estimate < 1 else 1.0)
            for (_, base), estimate in zip(rows, estimates, strict=True)
        ]
    return solution


def _error(estimate: float, real: int) -> float:
    return (estimate - real) / real


_CACHE = Path(tempfile.gettempdir()) / "segue-bench-estimate-counts.json"


def _counted(texts: list[str]) -> list[Any]:
    """The real tokenizers' counts (kept in a scratch file keyed by the texts, since counting
    takes about a minute and a refit needs none of it again)."""
    key = hashlib.sha256(orjson.dumps(texts)).hexdigest()
    try:
        cached = orjson.loads(_CACHE.read_bytes())
        if cached.get("key") == key:
            return [TokenCounts(o, c) for o, c in cached["counts"]]
    except (OSError, ValueError):
        pass
    counted = count_tokens(texts)
    _CACHE.write_bytes(orjson.dumps({"key": key, "counts": [[c.o200k, c.claude] for c in counted]}))
    return counted


def _spans(
    groups: list[tuple[str, str, list[str]]], real: list[Any]
) -> Iterator[tuple[tuple[str, str, list[str]], list[Any]]]:
    at = 0
    for group in groups:
        yield group, real[at : at + len(group[2])]
        at += len(group[2])


def bench(size_mb: float, do_fit: bool) -> dict[str, Any]:
    rng = random.Random(20261201)
    groups = [*_sessions(), *_synthetic(rng)]
    texts = [t for _, _, ts in groups for t in ts]
    real = _counted(texts)
    models = dict(MODELS)
    if do_fit:
        samples: dict[str, list[tuple[str, tuple[float, ...], float]]] = {"o200k": [], "claude": []}
        at = 0
        for kind, _, ts in groups:
            for text, counted in zip(ts, real[at : at + len(ts)], strict=True):
                vector = tokens.make_up([text]).vector()
                for label in samples:
                    n = getattr(counted, label)
                    if n >= 8:
                        samples[label].append((kind, vector, float(n)))
            at += len(ts)
        fitted = {label: fit(s) for label, s in samples.items()}
        models = {
            label: tokens.TokenModel(label, tuple(w[:8]), tuple(w[8:]))
            for label, w in fitted.items()
        }
    at = 0
    by_kind: dict[str, list[dict[str, Any]]] = defaultdict(list)
    wild = [(t, c) for (kind, _, ts), span in _spans(groups, real) if kind == "wild"
            for t, c in zip(ts, span, strict=True)]  # fmt: skip
    pooled = ("wild, pooled", "every wild file as one", [t for t, _ in wild])
    for kind, name, ts in [*groups, pooled]:
        if kind == "wild, pooled":
            counted = [c for _, c in wild]
        else:
            counted = real[at : at + len(ts)]
            at += len(ts)
        made = tokens.make_up(ts)
        row: dict[str, Any] = {"session": name, "chars": sum(map(len, ts))}
        for label, model in models.items():
            truth = sum(getattr(c, label) for c in counted)
            if truth == 0:
                continue
            row[label] = truth
            row[f"{label}_error"] = _error(math.ceil(model.tokens(made)), truth)
        size = sum(len(t.encode("utf-8", "surrogatepass")) for t in ts)
        row["flat_codex_error"] = _error(size / 4, row["o200k"]) if "o200k" in row else None
        row["flat_claude_error"] = (
            _error(row["chars"] / 3, row["claude"]) if "claude" in row else None
        )
        by_kind[kind].append(row)
    out: dict[str, Any] = {"kinds": {}, "sessions": by_kind}
    for kind, rows in by_kind.items():
        summary: dict[str, Any] = {"sessions": len(rows)}
        for key in ("o200k_error", "claude_error", "flat_codex_error", "flat_claude_error"):
            values = [r[key] for r in rows if r.get(key) is not None]
            if values:
                summary[key] = {
                    "median": statistics.median(values),
                    "worst_over": max(values),
                    "worst_under": min(values),
                }
        out["kinds"][kind] = summary
    if do_fit:
        out["fit"] = {label: list(model.weights) for label, model in models.items()}
    out["speed"] = _speed(size_mb)
    return out


_BARE = """
import sys, orjson
loads = orjson.loads
with open(sys.argv[1], "rb") as f:
    for line in f:
        loads(line)
"""

_ESTIMATE = """
import sys, time
from segue.providers.sessions import read_session
from segue.transforms import tokens
from pathlib import Path
conversation = read_session(Path(sys.argv[1]))
start = time.perf_counter()
made = tokens.history_make_up(conversation.items)  # once, weighed for each target
tokens.O200K.history(made)
tokens.CLAUDE_PUBLISHED.history(made)
elapsed = time.perf_counter() - start
texts = [tokens.visible_text(i) for i in conversation.items]
print(elapsed, len(texts), sum(map(len, texts)))
"""


def _speed(size_mb: float) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="segue-bench-tokens-") as scratch:
        folder = Path(scratch) / "sessions" / "2026" / "11" / "29"
        folder.mkdir(parents=True)
        path, _ = write_large_session(neutral.Provider.CODEX, folder, size_mb)
        bare = min(_timed([sys.executable, "-c", _BARE, str(path)]) for _ in range(3))
        runs = [
            subprocess.run(
                [sys.executable, "-c", _ESTIMATE, str(path)],
                capture_output=True, text=True, check=True,
            ).stdout.split()
            for _ in range(3)
        ]  # fmt: skip
        best = min(float(r[0]) for r in runs)
        return {
            "file_mb": path.stat().st_size / 1e6,
            "items": int(runs[0][1]),
            "chars": int(runs[0][2]),
            "bare_parse_s": bare,
            "estimate_s": best,
            "share_of_parse": best / bare,
        }


def _timed(argv: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(argv, check=True, capture_output=True)
    return time.perf_counter() - start


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--fit", action="store_true")
    parser.add_argument("--mb", type=float, default=100.0)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    result = bench(args.mb, args.fit)
    if args.json:
        sys.stdout.write(orjson.dumps(result, option=orjson.OPT_INDENT_2).decode() + "\n")
        return
    print("token estimate against the real tokenizers, per session of each kind")
    print(f"  {'kind':10} {'n':>4}  {'o200k median / worst':>24}  {'claude median / worst':>24}"
          f"  {'flat codex (bytes/4)':>22}  {'flat claude (chars/3)':>22}")  # fmt: skip
    for kind, s in result["kinds"].items():

        def cell(key: str, s: dict[str, Any] = s) -> str:
            v = s.get(key)
            if v is None:
                return "-"
            worst = v["worst_under"] if -v["worst_under"] > v["worst_over"] else v["worst_over"]
            return f"{v['median']:+.1%} / {worst:+.1%}"

        print(
            f"  {kind:10} {s['sessions']:>4}  {cell('o200k_error'):>24}"
            f"  {cell('claude_error'):>24}  {cell('flat_codex_error'):>22}"
            f"  {cell('flat_claude_error'):>22}"
        )
    sp = result["speed"]
    print(
        f"speed: {sp['items']} items ({sp['chars'] / 1e6:.1f}M chars) of a {sp['file_mb']:.0f} MB"
        f" session estimated for both tokenizers in {sp['estimate_s']:.3f} s ="
        f" {sp['share_of_parse']:.1%} of a bare parse ({sp['bare_parse_s']:.3f} s); target 10%"
    )
    if "fit" in result:
        print("fitted weights (tokens each, in the order of segue.transforms.tokens.FEATURES):")
        for label, weights in result["fit"].items():
            print(f"  {label}: (" + ", ".join(f"{v:.4f}" for v in weights) + ")")


if __name__ == "__main__":
    main()
