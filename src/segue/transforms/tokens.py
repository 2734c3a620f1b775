"""How many tokens a target's tokenizer counts in a history, estimated from what its text is made
of (pure; no tokenizer at run time).

A flat characters-a-token ratio is wrong both ways: prose runs about 4 characters a token, code
and JSON nearer 3, long digit runs, base64, hex and non-English text far fewer. A byte-pair
tokenizer spends about one token a word, one a short digit group, one or two a punctuation
cluster, and more where a string changes case or mixes letters and digits (base64, hex, ids).
So the estimate measures a text's make-up (:class:`MakeUp`: letters, capitals, digits, spaces,
line breaks, non-ASCII bytes, punctuation; word starts, digit runs, lower-to-upper changes,
punctuation pairs) and weighs each by what one tokenizer spends on it (:class:`TokenModel`). The
weights are fitted against the real tokenizers in the test bed (``benchmarks/estimate.py
--fit``: o200k through npm ``gpt-tokenizer``, Anthropic's published tokenizer through npm
``@anthropic-ai/tokenizer``) on every recorded fixture, the wild corpus and synthetic text of
each kind, with an under-estimate weighing more than an over-estimate; the benchmark prints the
error per session.

A big history is not scanned whole: once its text passes :data:`SAMPLE_CHARS`, windows of
:data:`WINDOW` characters at an even stride over all of it stand for it, and the make-up is
scaled to the whole. The cost is one pass over the items plus a fixed amount of scanning, so an
estimate costs a small share of reading the file.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from operator import attrgetter
from typing import Any

import msgspec
import orjson
from msgspec.structs import astuple, fields

from segue.model import conversation as neutral

__all__ = [
    "CLAUDE_PUBLISHED",
    "IMAGE_TOKENS",
    "O200K",
    "SAMPLE_CHARS",
    "WINDOW",
    "MakeUp",
    "TokenModel",
    "history_make_up",
    "make_up",
    "visible_text",
]

WINDOW = 1024  # characters of one sample window
SAMPLE_CHARS = 384 * 1024  # a history with more text than this is sampled
IMAGE_TOKENS = 1_600  # an image costs about this whatever its base64 length


def _table(*classes: tuple[Iterable[int], bytes]) -> bytes:
    table = bytearray(b"." * 256)
    for codes, mark in classes:
        for code in codes:
            table[code] = mark[0]
    return bytes(table)


_LOWER, _UPPER, _DIGIT = range(97, 123), range(65, 91), range(48, 58)
# Each byte's class: a lower-case letter, a capital, a digit, a space or tab, a line break, a
# UTF-8 continuation byte, a UTF-8 lead byte, or punctuation (everything else).
_CLASSES = _table(
    (_LOWER, b"a"),
    (_UPPER, b"A"),
    (_DIGIT, b"0"),
    ((32, 9), b" "),
    ((10, 13), b"\n"),
    (range(128, 192), b"c"),
    (range(192, 256), b"h"),
)
_LETTERS = bytes(97 if (65 <= b <= 90 or 97 <= b <= 122) else 32 for b in range(256))
_DIGITS = bytes(48 if 48 <= b <= 57 else 32 for b in range(256))


class MakeUp(msgspec.Struct, frozen=True):
    """What a text is made of, in UTF-8 bytes and runs (a sampled text's figures are scaled)."""

    lower: float = 0.0  # ASCII lower-case letters
    upper: float = 0.0  # ASCII capitals
    digits: float = 0.0
    space: float = 0.0  # spaces and tabs
    newline: float = 0.0  # line feeds and carriage returns
    cont: float = 0.0  # UTF-8 continuation bytes
    lead: float = 0.0  # UTF-8 lead bytes (one a non-ASCII character)
    other: float = 0.0  # punctuation, symbols, control characters
    words: float = 0.0  # runs of letters
    case_changes: float = 0.0  # a lower-case letter followed by a capital
    digit_runs: float = 0.0
    punctuation_pairs: float = 0.0  # two punctuation bytes in a row (counted without overlap)

    @property
    def size(self) -> float:
        """Bytes of UTF-8 (the first eight fields)."""
        return sum(self.vector()[:8])

    def vector(self) -> tuple[float, ...]:
        return astuple(self)


FEATURES = tuple(f.name for f in fields(MakeUp))


def _scan(data: bytes, breaks: int, scale: float) -> MakeUp:
    """The make-up of ``data``, less ``breaks`` separator line breaks, times ``scale``."""
    classes = data.translate(_CLASSES)
    letters = data.translate(_LETTERS)
    digits = data.translate(_DIGITS)
    figures = (
        classes.count(b"a"),
        classes.count(b"A"),
        classes.count(b"0"),
        classes.count(b" "),
        classes.count(b"\n") - breaks,
        classes.count(b"c"),
        classes.count(b"h"),
        classes.count(b"."),
        letters.count(b" a") + letters.startswith(b"a"),
        classes.count(b"aA"),
        digits.count(b" 0") + digits.startswith(b"0"),
        classes.count(b".."),
    )
    return MakeUp(*(value * scale for value in figures))


def make_up(texts: Sequence[str]) -> MakeUp:
    """The make-up of ``texts`` together: scanned whole up to :data:`SAMPLE_CHARS` characters,
    else through windows at an even stride over all of them, scaled to their length."""
    total = sum(map(len, texts))
    if total == 0:
        return MakeUp()
    if total <= SAMPLE_CHARS:
        parts: Sequence[str] = texts
    else:
        stride = WINDOW * total / SAMPLE_CHARS
        windows: list[str] = []
        position = 0.0  # where the next window starts, in all the texts end to end
        start = 0
        for text in texts:
            end = start + len(text)
            while position < end:
                local = int(position) - start
                windows.append(text[local : local + WINDOW])
                position += stride
            start = end
        parts = windows
    sampled = sum(map(len, parts))
    data = "\n".join(parts).encode("utf-8", "surrogatepass")  # (a lone surrogate: a JSON escape)
    return _scan(data, len(parts) - 1, total / sampled)


# By exact type: measuring a history looks up every item (a match of class patterns was a
# third of the time); what has no entry is not sent as text.
_VISIBLE: dict[type, Callable[[Any], str]] = {
    neutral.UserMessage: attrgetter("text"),
    neutral.AssistantMessage: attrgetter("text"),
    neutral.Reasoning: attrgetter("text"),
    neutral.ToolCall: lambda item: f"{item.name} {_json_text(item.input)}",
    neutral.ToolResult: attrgetter("output"),
    neutral.Compaction: attrgetter("summary"),
}
_WITH_IMAGES = (neutral.UserMessage, neutral.ToolResult)


def _json_text(value: Any) -> str:
    return value if isinstance(value, str) else orjson.dumps(value).decode()


def visible_text(item: neutral.Item) -> str:
    """The text of ``item`` a model sees: a prompt, a reply, a tool call's name and input, a
    tool's output, a summary; nothing for what is not sent as text."""
    text = _VISIBLE.get(type(item))
    return "" if text is None else text(item)


class HistoryMakeUp(msgspec.Struct, frozen=True):
    """A history's text make-up, with what it holds besides text."""

    text: MakeUp
    texts: int  # items with text
    images: int


def history_make_up(items: Iterable[neutral.Item]) -> HistoryMakeUp:
    texts: list[str] = []
    images = 0
    visible = _VISIBLE.get
    for item in items:
        text_of = visible(type(item))
        if text_of is None:
            continue
        text = text_of(item)
        if text:
            texts.append(text)
        if isinstance(item, _WITH_IMAGES):
            images += len(item.images)
    return HistoryMakeUp(make_up(texts), len(texts), images)


class TokenModel(msgspec.Struct, frozen=True):
    """What one tokenizer spends on each part of a text's make-up (tokens each, fitted)."""

    name: str
    bytes: tuple[float, ...]  # per byte of each class: MakeUp's first eight fields
    runs: tuple[float, ...]  # per run or pair: its last four

    @property
    def weights(self) -> tuple[float, ...]:
        return self.bytes + self.runs

    def tokens(self, made: MakeUp) -> float:
        return sum(w * v for w, v in zip(self.weights, made.vector(), strict=True))

    def history(self, made: HistoryMakeUp) -> int:
        """The estimated tokens of a history's texts and images."""
        return math.ceil(self.tokens(made.text)) + IMAGE_TOKENS * made.images


# Fitted by ``benchmarks/estimate.py --fit`` (gpt-tokenizer 4.0.0, @anthropic-ai/tokenizer 0.0.4;
# the recorded fixtures, the wild corpus and the synthetic kinds), in the order of FEATURES.
O200K = TokenModel(
    "o200k",
    (0.0821, 0.2899, 0.3075, 0.3188, 0.2690, 1.4717, -1.2116, 0.6757),  # bytes of each class
    (0.4236, 1.4668, 1.1541, -0.6995),  # words, case changes, digit runs, punctuation pairs
)
CLAUDE_PUBLISHED = TokenModel(
    "claude",
    (0.0228, 0.2442, 0.3453, 0.1112, 0.8575, 1.2843, -0.5888, 0.9675),
    (0.8816, 1.7420, 0.6507, -1.4970),
)
