"""Which provider work goes to when the user names none, now that there are three."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from segue.model.conversation import LimitWindow, Provider
from segue.model.errors import ConfigError
from segue.running.target import choose_target, default_target, fallback_order
from segue.running.usage import ProviderUsage
from tests.segue_cli import segue

CLAUDE, CODEX, COPILOT = Provider.CLAUDE, Provider.CODEX, Provider("copilot")
NOW = datetime(2026, 12, 3, 12, 0, tzinfo=UTC)
ORDER = (CODEX, CLAUDE, COPILOT)


def usage(
    provider: Provider, used: float | None, *, reset: datetime | None = None
) -> ProviderUsage:
    window = LimitWindow(provider, 300, used, reset or NOW + timedelta(hours=2))
    exhausted = used is not None and used >= 100
    return ProviderUsage(provider, [window], exhausted, window if used is not None else None, None)


def test_the_one_with_the_most_headroom_wins_and_the_order_breaks_ties() -> None:
    usages = [usage(CODEX, 70), usage(COPILOT, 20)]
    assert choose_target(CLAUDE, usages, ORDER) is COPILOT
    assert choose_target(CLAUDE, [usage(CODEX, 20), usage(COPILOT, 20)], ORDER) is CODEX
    assert choose_target(CLAUDE, [], ORDER) is CODEX  # nothing known: the order
    assert choose_target(CLAUDE, [], (COPILOT, CODEX, CLAUDE)) is COPILOT


def test_an_exhausted_one_is_passed_over_and_when_all_are_the_first_to_reset_is_taken() -> None:
    assert choose_target(CLAUDE, [usage(CODEX, 100), usage(COPILOT, 90)], ORDER) is COPILOT
    late, early = NOW + timedelta(hours=3), NOW + timedelta(minutes=5)
    both = [usage(CODEX, 100, reset=late), usage(COPILOT, 100, reset=early)]
    assert choose_target(CLAUDE, both, ORDER) is COPILOT


def test_one_the_user_cannot_run_here_is_taken_only_when_none_can() -> None:
    usages = [usage(CODEX, 80)]
    assert choose_target(CLAUDE, usages, ORDER, frozenset({CLAUDE, CODEX})) is CODEX
    assert choose_target(CLAUDE, usages, ORDER, frozenset({CLAUDE})) is COPILOT


def test_the_configured_order_decides_and_leaves_out_what_it_does_not_name(tmp_path: Path) -> None:
    config = tmp_path / "segue.toml"
    env = {"HOME": str(tmp_path), "SEGUE_CONFIG": str(config), "PATH": "/usr/bin:/bin"}
    assert fallback_order(env) == ORDER
    config.write_text('fallback = ["copilot", "claude"]\n')
    assert fallback_order(env) == (COPILOT, CLAUDE)
    assert default_target(CODEX, env, now=NOW) is COPILOT
    assert default_target(COPILOT, env, now=NOW) is CLAUDE
    config.write_text('fallback = ["claude"]\n')
    with pytest.raises(ConfigError, match="fallback names none"):
        default_target(CLAUDE, env, now=NOW)
    for bad in ('fallback = "claude"\n', 'fallback = ["gemini"]\n', "fallback = [\n"):
        config.write_text(bad)
        with pytest.raises(ConfigError):
            fallback_order(env)


def test_a_bad_fallback_is_one_clear_line_from_the_command(tmp_path: Path) -> None:
    config = tmp_path / "segue.toml"
    config.write_text('fallback = ["gemini"]\n')
    env = {"HOME": str(tmp_path), "SEGUE_CONFIG": str(config), "PATH": "/usr/bin:/bin"}
    done = segue(["switch", "--from", "claude", "--dry-run"], env)
    assert done.returncode != 0
    assert "Traceback" not in done.stderr and "gemini" in done.stderr, done.stderr
