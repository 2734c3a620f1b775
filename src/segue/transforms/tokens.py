"""How many tokens a target's tokenizer counts in a text, estimated from what the text is made of
(pure; no tokenizer at run time).

A flat characters-a-token ratio is wrong both ways: prose runs about 4 characters a token, code
and JSON nearer 3, long digit runs, base64, hex and non-English text far fewer. The estimate
counts what a text is made of (:class:`Counts`: letters, capitals, digits, whitespace,
non-ASCII bytes, and the rest, punctuation and symbols) and weighs each kind by what one
tokenizer spends on it (:class:`TokenModel`). The weights are fitted against the real
tokenizers in the test bed (``benchmarks/tokens.py --fit``: o200k through npm ``gpt-tokenizer``,
Anthropic's published tokenizer through npm ``@anthropic-ai/tokenizer``) on every recorded
fixture, the wild corpus and synthetic text of each kind, and the benchmark prints the error.

A long text is not scanned whole: :data:`SAMPLE_WINDOWS` windows of :data:`WINDOW` characters,
spread over it, stand for it (counts scaled by length), so estimating costs per item, not per byte.
"""

from __future__ import annotations

from dataclasses import dataclass

import orjson

from segue.model import conversation as neutral

__all__ = [
    "CLAUDE_PUBLISHED",
    "O200K",
    "SAMPLE_WINDOWS",
    "WINDOW",
    "Counts",
    "TokenModel",
    "counts",
    "visible_text",
]

WINDOW = 1024  # characters of one sample window
SAMPLE_WINDOWS = 4  # windows that stand for a text longer than WINDOW * SAMPLE_WINDOWS

_HIGH = bytes(range(128, 256))
_LETTERS = bytes(range(65, 91)) + bytes(range(97, 123))
_UPPER = bytes(range(65, 91))
_DIGITS = b"0123456789"
_SPACE = b" \t\r\n"


def visible_text(item: neutral.Item) -> str:
    """The text of ``item`` a model sees: a prompt, a reply, a tool call's name and input, a
    tool's output, a summary; nothing for what is not sent as text."""
    match item:
        case neutral.UserMessage() | neutral.AssistantMessage() | neutral.Reasoning():
            return item.text
        case neutral.ToolCall():
            body = item.input if isinstance(item.input, str) else orjson.dumps(item.input).decode()
            return f"{item.name} {body}"
        case neutral.ToolResult():
            return item.output
        case neutral.Compaction():
            return item.summary
        case _:
            return ""


@dataclass(frozen=True, slots=True)
class Counts:
    """What a text is made of, in UTF-8 bytes (a sampled text's counts are scaled to it)."""

    size: float  # bytes
    letters: float  # ASCII letters
    upper: float  # of them capitals
    digits: float
    space: float  # spaces, tabs and line breaks
    non_ascii: float  # bytes of non-ASCII characters

    @property
    def other(self) -> float:
        """Punctuation, symbols and control characters."""
        return max(self.size - self.letters - self.digits - self.space - self.non_ascii, 0.0)


def _scan(text: str) -> tuple[int, int, int, int, int, int]:
    data = text.encode("utf-8", "surrogatepass")
    size = len(data)
    return (
        size,
        size - len(data.translate(None, _LETTERS)),
        size - len(data.translate(None, _UPPER)),
        size - len(data.translate(None, _DIGITS)),
        size - len(data.translate(None, _SPACE)),
        size - len(data.translate(None, _HIGH)),
    )


def counts(text: str) -> Counts:
    """The make-up of ``text``: scanned whole when short, else from evenly spread windows."""
    length = len(text)
    if length <= WINDOW * SAMPLE_WINDOWS:
        return Counts(*_scan(text))
    step = (length - WINDOW) / (SAMPLE_WINDOWS - 1)
    sample = "".join(text[int(i * step) : int(i * step) + WINDOW] for i in range(SAMPLE_WINDOWS))
    scale = length / len(sample)
    return Counts(*(value * scale for value in _scan(sample)))


@dataclass(frozen=True, slots=True)
class TokenModel:
    """What one tokenizer spends on each kind of byte (tokens a byte, fitted)."""

    name: str
    letters: float
    upper: float  # on top of ``letters``: capitals break words into more pieces
    digits: float
    space: float
    non_ascii: float
    other: float

    def tokens(self, c: Counts) -> float:
        return (
            self.letters * c.letters
            + self.upper * c.upper
            + self.digits * c.digits
            + self.space * c.space
            + self.non_ascii * c.non_ascii
            + self.other * c.other
        )

    def count(self, text: str) -> float:
        """The estimated tokens of ``text``."""
        return self.tokens(counts(text))


# Fitted by ``benchmarks/tokens.py --fit`` (gpt-tokenizer 4.0.0, @anthropic-ai/tokenizer 0.0.4;
# the recorded fixtures, the wild corpus and the synthetic kinds), tokens a byte of each kind.
O200K = TokenModel("o200k", 0.1816, 0.7215, 0.6199, 0.1813, 0.5071, 0.5300)
CLAUDE_PUBLISHED = TokenModel("claude", 0.2094, 0.6946, 0.5549, 0.1348, 0.6380, 0.5571)
