"""detect-secrets' detectors in the form segue needs, imported (with detect-secrets) only when a
text holds one of their literals: two for shapes it does not know yet, and the others where
detect-secrets' match is not the secret a redaction must replace.

A scan replaces what a detector yields, so a detector must yield the secret whole, and in time
linear in the text (a scan runs on every switch, over texts a tool may have printed):

- detect-secrets yields a pattern's groups when it has any: its GitHub and GitLab patterns group
  only the prefix (``ghp``: the token itself stayed in the text);
- several patterns take a fixed length (Stripe's 24 characters, OpenAI's 20 after its marker,
  GitLab's up to 50 or up to a ``-``) and stop inside longer keys, or miss keys that hold a
  ``-`` or ``_`` where they expect letters: each match is carried on to the token's end;
- its JWT pattern stops before the signature, its npm and JWT patterns backtrack over a long
  line (512 KB took 40 s), its URL password pattern stops at characters a password may hold
  (``$``, ``!``, ``:``), its private keys know only PuTTY's version-2 files.
"""

from __future__ import annotations

import re
from collections.abc import Generator

from detect_secrets.plugins.base import RegexBasedDetector
from detect_secrets.plugins.basic_auth import BasicAuthDetector
from detect_secrets.plugins.github_token import GitHubTokenDetector
from detect_secrets.plugins.gitlab_token import GitLabTokenDetector
from detect_secrets.plugins.jwt import JwtTokenDetector
from detect_secrets.plugins.npm import NpmDetector
from detect_secrets.plugins.openai import OpenAIDetector
from detect_secrets.plugins.private_key import PrivateKeyDetector
from detect_secrets.plugins.stripe import StripeDetector

_TOKEN = "A-Za-z0-9_\\-"  # the characters of a token: base64url


class AnthropicKeyDetector(RegexBasedDetector):
    """Anthropic API and admin keys (``sk-ant-api03-…``, ``sk-ant-admin01-…``)."""

    secret_type = "Anthropic API Key"
    denylist = (re.compile(r"sk-ant-[a-z]+\d{2}-[A-Za-z0-9_-]{80,}"),)


class GitHubFineGrainedTokenDetector(RegexBasedDetector):
    """GitHub fine-grained personal access tokens (``github_pat_…``)."""

    secret_type = "GitHub Fine-Grained Token"
    denylist = (re.compile(r"github_pat_[A-Za-z0-9_]{60,}"),)


class _WholeTokens(RegexBasedDetector):
    """Yields each match of its patterns whole, whatever they group, carried on over the
    characters in :attr:`tail` (possessively: never backtracked into)."""

    tail = _TOKEN
    _whole: tuple[re.Pattern[str], ...] = ()

    def __init_subclass__(cls) -> None:
        super().__init_subclass__()
        patterns: list[re.Pattern[str]] = cls.denylist  # type: ignore[assignment]
        cls._whole = tuple(re.compile(f"(?:{p.pattern})[{cls.tail}]*+") for p in patterns)

    def analyze_string(self, string: str) -> Generator[str, None, None]:
        for regex in self._whole:
            for match in regex.finditer(string):
                yield match.group(0)


class GitHubTokenWhole(_WholeTokens, GitHubTokenDetector):
    """GitHub's classic tokens (``ghp_…``, ``gho_…``, …), each whole."""


class GitLabTokenWhole(_WholeTokens, GitLabTokenDetector):
    """GitLab's tokens (``glpat-…``, ``glcbt-…``, …), each whole, its routable form's dotted
    parts included."""

    tail = _TOKEN + "."


class StripeWhole(_WholeTokens, StripeDetector):
    """Stripe's live keys, each whole (they are longer than the 24 characters matched)."""

    tail = "A-Za-z0-9"


class OpenAIWhole(_WholeTokens, OpenAIDetector):
    """OpenAI's keys, the project and service account forms included (they hold ``-`` and
    ``_`` around the ``T3BlbkFJ`` marker), each whole."""

    denylist = [re.compile(rf"sk-[{_TOKEN}]{{20,400}}?T3BlbkFJ[{_TOKEN}]{{20}}")]  # noqa: RUF012


class JwtWhole(JwtTokenDetector):
    """JSON Web Tokens with their signatures, checked as detect-secrets checks them (each part
    base64, the first two JSON); each part bounded and never backtracked into."""

    denylist = [  # noqa: RUF012
        re.compile(
            r"eyJ[A-Za-z0-9_=-]{1,8192}+\.[A-Za-z0-9_=-]{1,65536}+(?:\.[A-Za-z0-9_-]{0,8192}+)?"
        )
    ]


class NpmToken(NpmDetector):
    """An npm auth token in an ``.npmrc`` line (the token, not the rest of the line), the
    registry's part bounded."""

    denylist = [  # noqa: RUF012
        re.compile(r"//[^\s/][^\s]{0,512}?/:_authToken=[ \t]*(npm_[A-Za-z0-9]+|[A-Fa-f0-9-]{36})")
    ]


class UrlPassword(BasicAuthDetector):
    """The password of a URL's ``user:password@`` (any character a URL's user part may hold but
    ``{}``, a template's placeholder), each part bounded."""

    denylist = [  # noqa: RUF012
        re.compile(r"://[^:/?#\[\]@{}\s]{1,512}:([^/?#\[\]@{}\s]{1,512})@")
    ]


class PrivateKeyAnyPutty(PrivateKeyDetector):
    """detect-secrets' private key headers, and PuTTY's key files of every format version
    (it knows only version 2; PuTTY writes version 3 since 0.75)."""

    denylist = [*PrivateKeyDetector.denylist, re.compile(r"PuTTY-User-Key-File-\d+:")]  # noqa: RUF012
