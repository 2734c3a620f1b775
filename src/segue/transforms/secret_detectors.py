"""Two detectors in detect-secrets' own form for shapes it does not know yet (imported, with
detect-secrets, only when a text holds one of their literals)."""

from __future__ import annotations

import re

from detect_secrets.plugins.base import RegexBasedDetector


class AnthropicKeyDetector(RegexBasedDetector):
    """Anthropic API and admin keys (``sk-ant-api03-…``, ``sk-ant-admin01-…``)."""

    secret_type = "Anthropic API Key"
    denylist = (re.compile(r"sk-ant-[a-z]+\d{2}-[A-Za-z0-9_-]{80,}"),)


class GitHubFineGrainedTokenDetector(RegexBasedDetector):
    """GitHub fine-grained personal access tokens (``github_pat_…``)."""

    secret_type = "GitHub Fine-Grained Token"
    denylist = (re.compile(r"github_pat_[A-Za-z0-9_]{60,}"),)
