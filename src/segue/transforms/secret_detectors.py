"""detect-secrets' detectors in the form segue needs, imported (with detect-secrets) only when a
text holds one of their literals: two for shapes it does not know yet, three whose matches are
not the whole secret, and its private keys with PuTTY's current format.

A scan replaces what a detector yields, so a detector must yield the secret whole:
detect-secrets yields a pattern's groups when it has any, its GitHub and GitLab patterns group
only the prefix (``ghp``: the token itself was left in the text), and its JWT pattern ends
lazily (the signature was left)."""

from __future__ import annotations

import re
from collections.abc import Generator

from detect_secrets.plugins.base import RegexBasedDetector
from detect_secrets.plugins.github_token import GitHubTokenDetector
from detect_secrets.plugins.gitlab_token import GitLabTokenDetector
from detect_secrets.plugins.jwt import JwtTokenDetector
from detect_secrets.plugins.private_key import PrivateKeyDetector


class AnthropicKeyDetector(RegexBasedDetector):
    """Anthropic API and admin keys (``sk-ant-api03-…``, ``sk-ant-admin01-…``)."""

    secret_type = "Anthropic API Key"
    denylist = (re.compile(r"sk-ant-[a-z]+\d{2}-[A-Za-z0-9_-]{80,}"),)


class GitHubFineGrainedTokenDetector(RegexBasedDetector):
    """GitHub fine-grained personal access tokens (``github_pat_…``)."""

    secret_type = "GitHub Fine-Grained Token"
    denylist = (re.compile(r"github_pat_[A-Za-z0-9_]{60,}"),)


class _WholeMatches(RegexBasedDetector):
    """Yields each match of its patterns whole, whatever they group."""

    def analyze_string(self, string: str) -> Generator[str, None, None]:
        for regex in self.denylist:
            for match in regex.finditer(string):
                yield match.group(0)


class GitHubTokenWhole(_WholeMatches, GitHubTokenDetector):
    """GitHub's classic tokens (``ghp_…``, ``gho_…``, …), each whole."""


class GitLabTokenWhole(_WholeMatches, GitLabTokenDetector):
    """GitLab's tokens (``glpat-…``, ``glcbt-…``, …), each whole."""


class JwtWhole(JwtTokenDetector):
    """JSON Web Tokens with their signatures (detect-secrets' pattern, its last part greedy),
    checked as detect-secrets checks them (each part base64, the first two JSON)."""

    denylist = [re.compile(r"eyJ[A-Za-z0-9-_=]+\.[A-Za-z0-9-_=]+\.?[A-Za-z0-9-_.+/=]*")]  # noqa: RUF012


class PrivateKeyAnyPutty(PrivateKeyDetector):
    """detect-secrets' private key headers, and PuTTY's key files of every format version
    (it knows only version 2; PuTTY writes version 3 since 0.75)."""

    denylist = [*PrivateKeyDetector.denylist, re.compile(r"PuTTY-User-Key-File-\d+:")]  # noqa: RUF012
