"""Who writes a handoff summary: segue (deterministic, the default) or a provider's CLI.

``--summary-by claude|codex|left|entered`` asks a CLI (the named one, the provider being left or
the one being entered) to write it from segue's own digest of the runs, headless and unable to
change anything. The provider being left is not asked when it is exhausted. An answer that is
empty, failed, or a rate-limit or API-error text is never taken: segue's summary is used, with a
note saying why. Secrets in the answer are replaced by markers. The summary records who wrote
it (``created_by_provider``: None for segue's own).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime

import msgspec

from segue.model.conversation import Provider
from segue.model.errors import SwitchError
from segue.model.limits import looks_like_limit_text
from segue.providers import entry, known, names
from segue.running.usage import exhausted_providers, read_usage
from segue.transforms.handoff_summary import CUT, DEFAULT_MAX_CHARS
from segue.transforms.secrets import mask

__all__ = ["SIDES", "WrittenSummary", "summary_by_choices", "summary_provider", "write_summary"]

# Who may write a summary, besides a provider by name: the one being left / entered.
SIDES = ("left", "entered")


def summary_by_choices() -> tuple[str, ...]:
    """What ``--summary-by`` takes: a provider by name, or the one being left / entered."""
    return (*names(), *SIDES)


INSTRUCTION = """\
You are writing a handoff summary for another coding agent that will continue this work. Below \
is a digest of the runs it did not see. Write a concise Markdown summary with these sections: \
goals and constraints; decisions made; files changed; commands and tests run, with their exit \
codes; plan and todo state; unresolved questions; latest diff summary; known failures; subagent \
results. Leave out protocol noise, reasoning, superseded tool output and large diffs. Do not use \
any tool. Reply with the summary only.
"""


class WrittenSummary(msgspec.Struct, frozen=True):
    text: str
    created_by_provider: Provider | None  # None: segue's own deterministic summary
    notes: list[str] = msgspec.field(default_factory=list)


def summary_provider(by: str, left: Provider, entered: Provider) -> Provider:
    """The provider ``--summary-by`` names."""
    if by == "left":
        return left
    if by == "entered":
        return entered
    try:
        return known(by)
    except ValueError:
        choices = ", ".join(summary_by_choices())
        raise SwitchError(f"--summary-by {by!r}: expected one of {choices}") from None


def write_summary(
    digest: str,
    *,
    by: str | None,
    left: Provider,
    entered: Provider,
    env: Mapping[str, str],
    max_chars: int = DEFAULT_MAX_CHARS,
    now: datetime | None = None,
) -> WrittenSummary:
    """The summary to carry: ``digest`` (segue's own) unless ``by`` names a provider whose CLI
    gives an acceptable answer. Never raises for a CLI that fails."""
    if by is None:
        return WrittenSummary(digest, None)
    provider = summary_provider(by, left, entered)
    fallback = f"segue's own summary is carried: {provider.value} "
    usage = [] if provider is not left else read_usage(env, now=now, remote=False, providers=[left])
    if provider in exhausted_providers(usage):
        return WrittenSummary(digest, None, [fallback + "is exhausted (it is being left)"])
    answer, what = entry(provider).summarize(
        INSTRUCTION + "\n<digest>\n" + digest + "</digest>\n", env
    )
    if answer is None or not answer.strip():
        return WrittenSummary(digest, None, [fallback + f"gave no summary ({what})"])
    if looks_like_limit_text(answer):
        shown = answer.strip().splitlines()[0][:200]
        return WrittenSummary(
            digest, None, [fallback + f"answered with a limit or error text: {shown}"]
        )
    text = mask(answer.strip())
    if len(text) > max_chars:
        text = text[: max_chars - 1] + CUT
    return WrittenSummary(text + "\n", provider, [f"handoff summary {what}"])
