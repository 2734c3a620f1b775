"""The literal gates in front of the secret detectors only save time: a scan finds exactly what
every detector run on every text would find, in any case and wherever the literals fall."""

from __future__ import annotations

import subprocess
import sys
import typing

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from segue.model.conversation import (
    Compaction,
    CompactionState,
    Item,
    Opaque,
    Provenance,
    ToolCall,
    ToolKind,
    ToolResult,
    UserMessage,
)
from segue.transforms.redact import TEXTS_OF, item_texts, redact_items, scan_items
from segue.transforms.secrets import _SEPARATOR, DETECTORS, _detector, marker, scan

PROV = Provenance("f.jsonl", 1)

# Shapes of the kinds the detectors look for (made up here, never real credentials).
SHAPES = [
    "sk-ant-api03-" + "a1B2" * 23 + "AA",
    "AKIAIOSFODNN7EXAMPLQ",
    'aws_secret_access_key = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"',
    "ghp_" + "A1b2C3d4" * 4 + "E5f6",
    "github_pat_11ABCDEFG0" + "x" * 72,
    "glpat-" + "a1b2c3d4e5" * 2,
    "xoxb-123456789012-1234567890123-" + "AbCdEfGh" * 3,
    "https://hooks.slack.com/services/T00000000/B00000000/" + "X" * 24,
    "sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc",
    "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl",
    "//registry.npmjs.org/:_authToken=" + "a1b2c3d4-" * 4,
    "pypi-AgEIcHlwaS5vcmc" + "A" * 80,
    "sk-proj-" + "a1B2c3D4e5" * 2 + "T3BlbkFJ" + "f6G7h8J9k0" * 2,
    "SG." + "a" * 22 + "." + "b" * 43,
    "sq0csp-" + "A" * 43,
    "AccountKey=" + "a" * 86 + "==",
    "postgres://user:hunter2secret@db.example.com/app",
    "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA\n-----END RSA PRIVATE KEY-----",
    "PuTTY-User-Key-File-3: ssh-ed25519\nPrivate-MAC: 0a1b2c",
]

pieces = st.one_of(
    st.sampled_from(SHAPES),
    st.sampled_from(SHAPES).map(str.lower),
    st.sampled_from(SHAPES).map(str.upper),
    st.sampled_from(SHAPES).map(lambda t: t.replace("k", "\u212a").replace("s", "\u017f")),
    st.text(max_size=30),
    st.sampled_from([g for *_, gate, _ in DETECTORS for alt in gate for g in alt]),
)


def _every_detector(texts: list[str]) -> dict[str, str]:
    """What the detectors find with no gate in front of them (private keys as their header)."""
    blob = _SEPARATOR.join(t for t in texts if t)
    found: dict[str, str] = {}
    for module, name, kind, _, _ in DETECTORS:
        for value in _detector(module, name).analyze_string(blob):
            if value and kind != "private_key":
                found.setdefault(value, kind)
    return found


@settings(max_examples=200, deadline=None)
@given(st.lists(st.lists(pieces, max_size=6).map(" ".join), min_size=1, max_size=4))
def test_the_gates_never_hide_what_a_detector_finds(texts: list[str]) -> None:
    found = scan(texts)
    expected = _every_detector(texts)
    assert {v: k for v, k in found.values.items() if k != "private_key"} == expected


def test_every_kind_is_found() -> None:
    found = scan(SHAPES)
    kinds = {kind for *_, kind, _, _ in DETECTORS}
    assert set(found.counts) == kinds


def test_a_case_blind_detector_is_asked_when_a_unicode_fold_spells_its_literal() -> None:
    hook = "https://hoo\u212as.slack.com/services/T00000000/B00000000/" + "X" * 24  # Kelvin K
    assert scan([hook]).counts == {"slack_token": 1}


def test_every_item_type_has_its_texts_scanned() -> None:
    """The scan looks items up by exact type: an item type the model gains and the table lacks
    would have its secrets carried unseen (a KeyError here, not a secret missed there)."""
    assert set(TEXTS_OF) == set(typing.get_args(Item))
    call = ToolCall("c1", "Bash", {"command": SHAPES[0], "env": [SHAPES[3]]}, ToolKind.SHELL, PROV)
    kept = Compaction("s", CompactionState.PORTABLE, PROV, replacement=(call,))
    assert item_texts(kept) == ["s", "Bash", "command", SHAPES[0], "env", SHAPES[3]]
    found = scan_items([kept, Opaque("x", PROV, {"key": SHAPES[4]})])
    assert set(found.values) == {SHAPES[0], SHAPES[3]}  # (an opaque record is never carried)


# What a redaction may leave of a shape: the context around its secret, never the secret.
CONTEXT = {
    SHAPES[2]: ('aws_secret_access_key = "', '"'),
    "//registry.npmjs.org/:_authToken=" + "a1b2c3d4-" * 4: (
        "//registry.npmjs.org/:_authToken=",
        "",
    ),
    "postgres://user:hunter2secret@db.example.com/app": ("postgres://user:", "@db.example.com/app"),
}


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: s[:12])
def test_each_secret_is_redacted_whole(shape: str) -> None:
    """Every shape is found, and its redaction leaves nothing of the secret: detect-secrets'
    GitHub and GitLab patterns matched only the token's prefix (``ghp``, and the token stayed in
    the text), its JWT pattern stopped before the signature, and its private keys knew only
    PuTTY's old format."""
    found = scan([f"before {shape} after"])
    (kind,) = set(found.values.values())
    head, tail = CONTEXT.get(shape, ("", ""))
    assert found.redact(f"before {shape} after") == f"before {head}{marker(kind)}{tail} after"


# Secrets in the forms an adversarial review found carried (made up, never real credentials):
# each text, and what must not be left of it.
_JWT = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl"
_PEM_BODY = "MIIEpAIBAAKCAQEAzQ7xsHk2"
LEFT_BEHIND = [
    (f"https://h/verify/{_JWT}/a", "c2lnbmF0dXJl"),
    (f"{_JWT}.x and {_JWT}+1", "eyJzdWIiOiIxIn0"),
    ("sk_live_51" + "Ab3" * 32 + "x", "Ab3Ab3"),
    ("sk-proj-Zx9Cv8Bn7Mq6Wp5Er4Ty_u-7T3BlbkFJZx9Cv8Bn7Mq6Wp5Er4Ty_sEcReTtAiL-Qw1", "sEcReT"),
    ("glpat-" + "a1B2c" * 6 + "-" + "z9Y8x" * 6, "z9Y8x"),
    ("glpat-" + "a1B2c" * 5 + "7.01.0w" + "q9w8e7r6t", "q9w8e7r6t"),
    ("https://admin:pa$$w0rd!x@db.example.com", "pa$$w0rd"),
    ("https://admin:pa:ss3cret@h.example.com", "ss3cret"),
    ("---- BEGIN SSH2 ENCRYPTED PRIVATE KEY ----\nP2/56wAAAi4A\n"
     "---- END SSH2 ENCRYPTED PRIVATE KEY ----", "P2/56wAAAi4A"),
]  # fmt: skip


@pytest.mark.parametrize("text, secret", LEFT_BEHIND, ids=lambda v: str(v)[:16])
def test_nothing_of_a_secret_is_left_behind(text: str, secret: str) -> None:
    found = scan([text])
    assert found, text
    assert secret not in found.redact(text)


def test_a_private_key_cut_short_is_redacted_in_its_own_text() -> None:
    """A key with no END line (a tool output cut off) ran on into the next texts as one block
    that was in no text, so no key was redacted, while the switch said they were."""
    cut = ToolResult("c1", f"-----BEGIN RSA PRIVATE KEY-----\n{_PEM_BODY}", PROV)
    whole = UserMessage(
        "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjE\n"
        "-----END OPENSSH PRIVATE KEY-----",
        PROV,
    )
    found = scan_items([cut, whole])
    assert found.counts == {"private_key": 2}
    carried = redact_items([cut, whole], found)
    assert all(
        _PEM_BODY not in t and "b3BlbnNzaC1" not in t for i in carried for t in item_texts(i)
    )


@pytest.mark.parametrize(
    "line",
    ["//x/:_authToken=" * 128_000, "eyJhbGciOiJIUzI1NiJ9" * 100_000, "://a:" + "b@" * 500_000],
    ids=["npm", "jwt", "url"],
)
def test_a_scan_is_linear_in_a_long_line(line: str) -> None:
    """2 MB lines made to backtrack: a quadratic pattern took 40 s on 512 KB (this would take
    minutes); in a child, so that a regression fails here instead of hanging the suite."""
    code = "import sys; from segue.transforms.secrets import scan; scan([sys.stdin.read()])"
    subprocess.run([sys.executable, "-c", code], input=line, text=True, timeout=60, check=True)
