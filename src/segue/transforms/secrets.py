"""Secrets in conversation text: found with detect-secrets' detectors, counted by kind, masked.

A switch sends a whole history to another company, and a transcript often holds a key the user
pasted or a tool printed. segue uses the regex detectors of Yelp's ``detect-secrets`` (the
well-kept scanner behind many pre-commit setups) for the kinds of credential with a recognisable
shape, plus two shapes it does not know yet (Anthropic API keys, GitHub fine-grained tokens).
Where a detector's match is not the whole secret (a pattern grouping only the prefix, a lazy
last part, an old key format only), segue's form of it in
:mod:`segue.transforms.secret_detectors` yields the secret whole. Its entropy and keyword
detectors are left out: every transcript is full of hashes, ids and ``password = …`` code, and
a count that cries wolf is ignored. Detectors are only asked for
matches (``analyze_string``); nothing is ever sent anywhere to "verify" a secret.

A private key is masked as a whole block, from its ``BEGIN`` line to its ``END`` line (or to the
end of the text), not just the header line the detector reports.
"""

from __future__ import annotations

import importlib
import re
from collections import Counter
from collections.abc import Iterable
from functools import cache
from typing import Any

import msgspec

__all__ = ["SecretScan", "marker", "mask", "scan"]


# The detectors segue uses: (detect-secrets module, class) and the kind segue names it by (in
# counts, in JSON, in markers), and the literals that every match contains: alternatives
# (written apart by "|"), each of literals that must all occur (joined by "+"; in any case, when
# marked so). A module of "" is one of segue's own (:mod:`segue.transforms.secret_detectors`). A
# detector whose literals are absent from a text is not run, and detect-secrets is only imported
# when one is present: a scan of text without candidates is one pass of an Aho-Corasick automaton
# over it (about a millisecond a MB, see ``_finders``), and ``segue sessions`` does not pay for
# importing the scanner. (detect-secrets' Discord and Telegram detectors are left out: their
# patterns have no literal to look for first and cost more than all the others together, for
# kinds rarely seen here.)
Gate = tuple[tuple[str, ...], ...]
DETECTORS: tuple[tuple[str, str, str, Gate, bool], ...] = tuple(
    (module, name, kind, tuple(tuple(alt.split("+")) for alt in gate.split("|")), fold)
    for module, name, kind, gate, fold in (
        ("", "AnthropicKeyDetector", "anthropic_api_key", "sk-ant-", False),
        ("", "OpenAIWhole", "openai_api_key", "T3BlbkFJ", False),
        ("aws", "AWSKeyDetector", "aws_key", "A3T|ABIA|ACCA|AKIA|ASIA|aws", True),
        ("", "GitHubTokenWhole", "github_token", "ghp_|gho_|ghu_|ghs_|ghr_", False),
        ("", "GitHubFineGrainedTokenDetector", "github_token", "github_pat_", False),
        (
            "",
            "GitLabTokenWhole",
            "gitlab_token",
            "glpat-|gldt-|glft-|glsoat-|glrt-|GR1348941|glcbt-|glimt-|glptt-|glagent-|gloas-",
            False,
        ),
        ("", "PrivateKeyAnyPutty", "private_key", "PRIVATE KEY|PuTTY-User-Key-File", False),
        ("slack", "SlackDetector", "slack_token", "xox|hooks.slack.com", True),
        ("", "StripeWhole", "stripe_key", "k_live_", False),
        ("", "JwtWhole", "jwt", "eyJ", False),
        ("", "NpmToken", "npm_token", "_authToken=", False),
        ("pypi_token", "PypiTokenDetector", "pypi_token", "pypi-AgE", False),
        ("sendgrid", "SendGridDetector", "sendgrid_key", "SG.", False),
        ("square_oauth", "SquareOAuthDetector", "square_oauth_secret", "sq0csp-", False),
        ("azure_storage_key", "AzureStorageKeyDetector", "azure_storage_key", "AccountKey=", False),
        ("", "UrlPassword", "url_password", "://+@", False),
    )
)


# A private key's whole block, in one text: from its header (PEM's ``-----BEGIN``, SSH2's
# ``---- BEGIN``) to its footer, else to the end of the text (a key cut short).
_PRIVATE_BLOCK = re.compile(
    r"-{4,5} ?BEGIN[A-Z0-9 ]*PRIVATE KEY[A-Z ]*-{4,5}.*?"
    r"(?:-{4,5} ?END[A-Z0-9 ]*PRIVATE KEY[A-Z ]*-{4,5}|\Z)"
    r"|PuTTY-User-Key-File-\d.*?(?:Private-MAC: *\S+|\Z)",
    re.DOTALL,
)
_BLOCK_STARTS = ("PRIVATE KEY", "PuTTY-User-Key-File-")
CUT = "…"  # how segue marks a text it cut short
MIN_CUT = 8  # the shortest start of a secret, before a cut, that is still masked
_SEPARATOR = "\n\n"  # between texts scanned together: no detector matches across it


def marker(kind: str) -> str:
    """What a redacted secret becomes."""
    return f"[secret redacted by segue: {kind}]"


@cache
def _detector(module: str, name: str) -> Any:
    """An instance of one detector (detect-secrets is imported on first use)."""
    if not module:
        from segue.transforms import secret_detectors

        return getattr(secret_detectors, name)()
    plugins = importlib.import_module(f"detect_secrets.plugins.{module}")
    return getattr(plugins, name)()


def _literal(text: str, fold: bool) -> bytes:
    return (text.lower() if fold else text).encode()


@cache
def _finders() -> tuple[tuple[bytes, ...], Any, tuple[bytes, ...], Any]:
    """Every gate's literals, as they are searched (``fold``: in the lowered text), each set in
    one Aho-Corasick automaton: the text is passed over once, not once per literal (40 passes
    of a megabyte cost 14 ms; one pass, about one)."""
    from ahocorasick_rs import BytesAhoCorasick

    exact, folded = (
        tuple(sorted({_literal(g, fold) for *_, gate, f in DETECTORS if f is fold
                      for alt in gate for g in alt}))
        for fold in (False, True)
    )  # fmt: skip
    return exact, BytesAhoCorasick(list(exact)), folded, BytesAhoCorasick(list(folded))


# What a case-blind pattern of an ASCII letter matches besides its two cases (Python's ``re``:
# every such character there is), so that a gate of lowered literals opens for them too.
_FOLDS = tuple(
    (chr(code).encode(), letter)
    for code, letter in ((0x130, b"i"), (0x131, b"i"), (0x17F, b"s"), (0x212A, b"k"))
)


def _literals_in(raw: bytes) -> tuple[set[bytes], set[bytes]]:
    """Which gate literals occur in ``raw``: as they are, and in its case-folded form."""
    exact, exact_finder, folded, folded_finder = _finders()
    found = {exact[i] for i, _, _ in exact_finder.find_matches_as_indexes(raw, overlapping=True)}
    lowered = raw.lower()
    if not raw.isascii():
        for char, letter in _FOLDS:
            if char[:1] in lowered:  # (one byte: a memchr, where a search of the whole costs more)
                lowered = lowered.replace(char, letter)
    hits = folded_finder.find_matches_as_indexes(lowered, overlapping=True)
    return found, {folded[i] for i, _, _ in hits}


def _gate_open(gate: Gate, present: set[bytes], fold: bool) -> bool:
    return any(all(_literal(g, fold) in present for g in literals) for literals in gate)


class SecretScan(msgspec.Struct):
    """The secrets found in some texts: each distinct value with its kind, and how many times
    each kind occurs."""

    values: dict[str, str] = msgspec.field(default_factory=dict)  # secret text -> kind
    counts: dict[str, int] = msgspec.field(default_factory=dict)  # kind -> occurrences

    def __bool__(self) -> bool:
        return bool(self.values)

    def redact(self, text: str) -> str:
        """``text`` with every secret of this scan replaced by its kind's marker."""
        if not self.values or not text:
            return text
        for value in self._ordered():
            if value in text:
                text = text.replace(value, marker(self.values[value]))
        if CUT in text:  # a text cut short for display (an index line): the part of a secret
            for value in self._ordered():
                for keep in range(len(value) - 1, MIN_CUT - 1, -1):
                    part = value[:keep] + CUT
                    if part in text:
                        text = text.replace(part, marker(self.values[value]) + CUT)
                        break
        return text

    def _ordered(self) -> list[str]:
        return sorted(self.values, key=len, reverse=True)  # a longer secret before its parts


def scan(texts: Iterable[str]) -> SecretScan:
    """Every secret in ``texts``, scanned together in one pass per detector."""
    texts = [t for t in texts if t]
    if not texts:
        return SecretScan()
    blob = _SEPARATOR.join(texts)
    values: dict[str, str] = {}
    private_key = False
    exact, folded = _literals_in(blob.encode("utf-8", "surrogatepass"))
    for module, name, kind, gate, fold in DETECTORS:
        if not _gate_open(gate, folded if fold else exact, fold):
            continue
        for found in _detector(module, name).analyze_string(blob):
            if kind == "private_key":
                private_key = True  # the detector names the header; the block is taken below
            elif found and found not in values:
                values[found] = kind
    if private_key:  # text by text: a block cut short ends with its text, not the next one's
        for text in texts:
            if any(start in text for start in _BLOCK_STARTS):
                for block in _PRIVATE_BLOCK.findall(text):
                    values[block] = "private_key"
    counts: Counter[str] = Counter()
    for value, kind in values.items():
        counts[kind] += blob.count(value)
    return SecretScan(values, dict(sorted(counts.items())))


def mask(text: str) -> str:
    """``text`` with every secret in it replaced by its kind's marker."""
    return scan([text]).redact(text) if text else text


def strings_in(value: Any) -> Iterable[str]:
    """Every string inside a JSON value (keys included)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, inner in value.items():
            if isinstance(key, str):
                yield key
            yield from strings_in(inner)
    elif isinstance(value, list | tuple):
        for inner in value:
            yield from strings_in(inner)


def redact_value(value: Any, found: SecretScan) -> Any:
    """A JSON value with every secret in its strings replaced (keys included)."""
    if isinstance(value, str):
        return found.redact(value)
    if isinstance(value, dict):
        return {
            (found.redact(k) if isinstance(k, str) else k): redact_value(v, found)
            for k, v in value.items()
        }
    if isinstance(value, list | tuple):
        return type(value)(redact_value(v, found) for v in value)
    return value
