"""Target profiles: the target CLI as the user has it configured (research §3 of each format)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from segue.model.conversation import Provider
from segue.model.errors import ConfigError
from segue.providers import entry
from segue.providers.claude.profile import claude_auto_compact_threshold
from segue.providers.codex.profile import CODEX_BUNDLED_MODELS, CODEX_DEFAULT_MODEL
from segue.transforms.budget import NEWER_CLAUDE_TOKENIZER, TargetProfile


def target_profile(
    provider: Provider, env: dict[str, str], cwd: str | None = None
) -> TargetProfile:
    return entry(provider).target_profile(env, cwd)


def codex(tmp_path: Path, config: str | None = None, **extra: str) -> TargetProfile:
    home = tmp_path / "codex"
    home.mkdir(exist_ok=True)
    if config is not None:
        (home / "config.toml").write_text(config)
    return target_profile(Provider.CODEX, {"HOME": str(tmp_path), "CODEX_HOME": str(home), **extra})


def claude(tmp_path: Path, settings: str | None = None, **extra: str) -> TargetProfile:
    cfg = tmp_path / "claude"
    cfg.mkdir(exist_ok=True)
    if settings is not None:
        (cfg / "settings.json").write_text(settings)
    env = {"HOME": str(tmp_path), "CLAUDE_CONFIG_DIR": str(cfg), **extra}
    return target_profile(Provider.CLAUDE, env)


# ------------------------------------------------------------------------------------ Codex


def test_codex_no_config_is_default_model(tmp_path: Path) -> None:
    p = codex(tmp_path)
    assert p.provider is Provider.CODEX
    assert p.model == CODEX_DEFAULT_MODEL == "gpt-6.1-sol"
    assert (p.context_window, p.auto_compact_tokens) == (272_000, 244_800)
    assert "default" in p.source and "bundled metadata" in p.source


def test_codex_home_falls_back_to_dot_codex(tmp_path: Path) -> None:
    (tmp_path / ".codex").mkdir()
    (tmp_path / ".codex" / "config.toml").write_text('model = "gpt-6.1-terra"\n')
    p = target_profile(Provider.CODEX, {"HOME": str(tmp_path)})
    assert (p.model, p.context_window, p.auto_compact_tokens) == ("gpt-6.1-terra", 500_000, 450_000)


def test_codex_bundled_model(tmp_path: Path) -> None:
    p = codex(tmp_path, 'model = "gpt-5.5"\n')
    assert (p.model, p.context_window, p.auto_compact_tokens) == ("gpt-5.5", 272_000, 244_800)
    assert "config.toml" in p.source and "model gpt-5.5" in p.source


def test_codex_unknown_model_keeps_name_and_uses_fallback(tmp_path: Path) -> None:
    p = codex(tmp_path, 'model = "my-local-llm"\n')
    assert p.model == "my-local-llm"  # never borrow another model's identity or metadata
    assert (p.context_window, p.auto_compact_tokens) == (272_000, 244_800)
    assert "fallback metadata" in p.source
    assert p.budget_tokens == int(244_800 * 0.95)
    assert p.window_budget_tokens == int(272_000 * 0.95 * 0.95)  # Codex's 95%, less the reserve
    assert p.tokenizer.name == "o200k" and p.tokenizer_factor == 1


def test_codex_profile_overrides_top_level(tmp_path: Path) -> None:
    config = (
        'model = "gpt-5.5"\nprofile = "fast"\nmodel_context_window = 100000\n'
        '[profiles.fast]\nmodel = "gpt-6-luna"\nmodel_auto_compact_token_limit = 150000\n'
        '[profiles.slow]\nmodel = "gpt-6.1-terra"\n'
    )
    p = codex(tmp_path, config)
    assert p.model == "gpt-6-luna"
    assert p.context_window == 100_000  # top level kept where the profile is silent
    assert p.auto_compact_tokens == 90_000  # the limit never exceeds 90% of the window
    assert "profile 'fast'" in p.source


def test_codex_profile_limit_below_ninety_percent(tmp_path: Path) -> None:
    config = (
        'profile = "p"\n[profiles.p]\nmodel = "gpt-5.5"\nmodel_auto_compact_token_limit = 200000\n'
    )
    p = codex(tmp_path, config)
    assert (p.context_window, p.auto_compact_tokens) == (272_000, 200_000)
    assert "model_auto_compact_token_limit 200000" in p.source


def test_codex_missing_profile_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"config\.toml.*'nope'"):
        codex(tmp_path, 'profile = "nope"\nmodel = "gpt-5.5"\n')


def test_codex_window_capped_at_max(tmp_path: Path) -> None:
    # research §3: 500000 with fallback metadata (max 272000) still gives 272000
    p = codex(tmp_path, 'model = "unknown-x"\nmodel_context_window = 500000\n')
    assert (p.context_window, p.auto_compact_tokens) == (272_000, 244_800)
    assert "capped" in p.source
    p = codex(tmp_path, 'model = "gpt-6-sol"\nmodel_context_window = 500000\n')
    assert (p.context_window, p.auto_compact_tokens) == (500_000, 450_000)
    p = codex(tmp_path, 'model = "gpt-6-sol"\nmodel_context_window = 900000\n')
    assert p.context_window == 872_000


def write_catalog(path: Path, *models: dict[str, object]) -> None:
    path.write_text(json.dumps({"models": list(models)}))


def test_codex_catalog_json(tmp_path: Path) -> None:
    write_catalog(
        tmp_path / "catalog.json",
        {"slug": "other", "context_window": 50_000},
        {
            "slug": "local-coder",
            "context_window": 128_000,
            "max_context_window": 256_000,
            "auto_compact_token_limit": 100_000,
            "effective_context_window_percent": 95,
        },
    )
    config = f'model = "local-coder"\nmodel_catalog_json = "{tmp_path / "catalog.json"}"\n'
    p = codex(tmp_path, config)
    assert (p.model, p.context_window, p.auto_compact_tokens) == ("local-coder", 128_000, 100_000)
    assert "model_catalog_json" in p.source
    # config window capped at the catalog's max; config limit beats the catalog's
    p = codex(tmp_path, config + "model_context_window = 300000\n")
    assert p.context_window == 256_000
    p = codex(tmp_path, config + "model_auto_compact_token_limit = 90000\n")
    assert p.auto_compact_tokens == 90_000


def test_codex_catalog_relative_path_and_miss(tmp_path: Path) -> None:
    (tmp_path / "codex").mkdir()
    write_catalog(tmp_path / "codex" / "cat.json", {"slug": "x", "context_window": 64_000})
    p = codex(tmp_path, 'model = "x"\nmodel_catalog_json = "cat.json"\n')
    assert (p.context_window, p.auto_compact_tokens) == (64_000, 57_600)  # 90%, max = window
    p = codex(tmp_path, 'model = "gpt-5.5"\nmodel_catalog_json = "cat.json"\n')
    assert p.context_window == 272_000 and "bundled" in p.source
    p = codex(tmp_path, 'model = "y"\nmodel_catalog_json = "cat.json"\n')
    assert "fallback metadata" in p.source


def test_codex_broken_files(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"config\.toml.*TOML"):
        codex(tmp_path, 'model = "gpt-5.5\n')
    with pytest.raises(ConfigError, match="model_context_window"):
        codex(tmp_path, 'model_context_window = "big"\n')
    (tmp_path / "bad.json").write_text("{not json")
    with pytest.raises(ConfigError, match=r"bad\.json"):
        codex(tmp_path, f'model_catalog_json = "{tmp_path / "bad.json"}"\n')
    with pytest.raises(ConfigError, match=r"missing\.json"):
        codex(tmp_path, f'model_catalog_json = "{tmp_path / "missing.json"}"\n')


# ----------------------------------------------------------------------------------- Claude


def test_claude_default_is_opus_5_5_1m(tmp_path: Path) -> None:
    p = claude(tmp_path)
    assert (p.model, p.context_window, p.auto_compact_tokens) == (
        "claude-opus-5-5",
        1_000_000,
        967_000,
    )
    assert "default" in p.source


def test_claude_uses_home_dot_claude(tmp_path: Path) -> None:
    (tmp_path / ".claude").mkdir()
    (tmp_path / ".claude" / "settings.json").write_text('{"model": "claude-haiku-4-5"}')
    p = target_profile(Provider.CLAUDE, {"HOME": str(tmp_path)})
    assert (p.model, p.context_window, p.auto_compact_tokens) == (
        "claude-haiku-4-5",
        200_000,
        167_000,
    )


def test_claude_env_beats_settings(tmp_path: Path) -> None:
    settings = '{"model": "claude-sonnet-4-5"}'
    p = claude(tmp_path, settings)
    assert (p.model, p.context_window) == ("claude-sonnet-4-5", 200_000)
    assert "settings.json" in p.source
    p = claude(tmp_path, settings, ANTHROPIC_MODEL="claude-sonnet-5-5")
    assert (p.model, p.context_window) == ("claude-sonnet-5-5", 1_000_000)
    assert "ANTHROPIC_MODEL" in p.source
    p = claude(tmp_path, '{"theme": "dark"}')
    assert p.model == "claude-opus-5-5"


@pytest.mark.parametrize(
    ("model", "name", "window", "chars"),
    [
        ("claude-opus-5-5", "claude-opus-5-5", 1_000_000, 3.0),
        ("claude-sonnet-4-5", "claude-sonnet-4-5", 200_000, 4.0),
        ("claude-opus-4-6", "claude-opus-4-6", 200_000, 4.0),
        ("claude-haiku-4-5", "claude-haiku-4-5", 200_000, 4.0),
        ("claude-sonnet-4-5[1m]", "claude-sonnet-4-5[1m]", 1_000_000, 4.0),
        ("claude-opus-4-6[1M]", "claude-opus-4-6[1m]", 1_000_000, 4.0),
        ("claude-opus-4-7", "claude-opus-4-7", 1_000_000, 3.0),
        ("opus", "claude-opus-5-5", 1_000_000, 3.0),
        ("best", "claude-opus-5-5", 1_000_000, 3.0),
        ("sonnet", "claude-sonnet-5-5", 1_000_000, 3.0),
        ("opusplan", "claude-sonnet-5-5", 1_000_000, 3.0),
        ("haiku", "claude-haiku-5-5", 1_000_000, 3.0),
        ("fable", "claude-fable-5-2", 1_000_000, 3.0),
        ("claude-opus-4-1", "claude-opus-5-5", 1_000_000, 3.0),  # retired: the default runs
        ("something-else", "something-else", 1_000_000, 3.0),  # unknown ids get 1M
    ],
)
def test_claude_windows(tmp_path: Path, model: str, name: str, window: int, chars: float) -> None:
    p = claude(tmp_path, ANTHROPIC_MODEL=model)
    assert p.model == name
    assert p.context_window == window
    assert p.auto_compact_tokens == window - 33_000
    assert p.chars_per_token == chars


def test_claude_settings_precedence(tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / ".claude").mkdir(parents=True)
    cfg = tmp_path / "claude"
    cfg.mkdir()
    (cfg / "settings.json").write_text('{"model": "sonnet"}')
    env = {"HOME": str(tmp_path), "CLAUDE_CONFIG_DIR": str(cfg)}
    assert target_profile(Provider.CLAUDE, env, str(project)).model == "claude-sonnet-5-5"
    (project / ".claude" / "settings.json").write_text('{"model": "haiku"}')
    p = target_profile(Provider.CLAUDE, env, str(project))
    assert p.model == "claude-haiku-5-5" and ".claude/settings.json" in p.source
    (project / ".claude" / "settings.local.json").write_text('{"model": "claude-sonnet-4-5"}')
    p = target_profile(Provider.CLAUDE, env, str(project))
    assert (p.model, p.context_window) == ("claude-sonnet-4-5", 200_000)
    # a settings `env` block acts as the environment (Claude Code applies it over its own),
    # and the environment beats `model`
    (cfg / "settings.json").write_text('{"model": "sonnet", "env": {"ANTHROPIC_MODEL": "fable"}}')
    assert target_profile(Provider.CLAUDE, env, str(project)).model == "claude-fable-5-2"


def test_claude_default_and_alias_overrides(tmp_path: Path) -> None:
    p = claude(tmp_path, ANTHROPIC_DEFAULT_MODEL="claude-sonnet-4-6")
    assert (p.model, p.context_window) == ("claude-sonnet-4-6", 200_000)
    p = claude(
        tmp_path, ANTHROPIC_MODEL="sonnet", ANTHROPIC_DEFAULT_SONNET_MODEL="claude-sonnet-4-5"
    )
    assert (p.model, p.context_window) == ("claude-sonnet-4-5", 200_000)
    p = claude(tmp_path, ANTHROPIC_DEFAULT_OPUS_MODEL="claude-opus-4-6[1m]")
    assert (p.model, p.context_window) == ("claude-opus-4-6[1m]", 1_000_000)
    # a login whose plan is unknown runs Sonnet by default; a paid plan runs Opus
    (tmp_path / "claude" / ".credentials.json").write_text(
        '{"claudeAiOauth": {"accessToken": "sk-ant-oat01-x"}}'
    )
    assert claude(tmp_path).model == "claude-sonnet-5-5"
    assert claude(tmp_path, CLAUDE_CODE_SUBSCRIPTION_TYPE="max").model == "claude-opus-5-5"


def test_claude_max_output_and_compact_window_setting(tmp_path: Path) -> None:
    p = claude(tmp_path, CLAUDE_CODE_MAX_OUTPUT_TOKENS="8000")
    assert p.auto_compact_tokens == 1_000_000 - 8_000 - 13_000
    p = claude(tmp_path, '{"autoCompactWindow": 300000}')
    assert p.auto_compact_tokens == 300_000 - 33_000
    p = claude(tmp_path, CLAUDE_CODE_AUTO_COMPACT_WINDOW="50000")
    assert p.auto_compact_tokens == 100_000 - 33_000  # raised to the 100k floor
    with pytest.raises(ConfigError, match="autoCompactWindow"):
        claude(tmp_path, '{"autoCompactWindow": "big"}')


def test_claude_disable_1m(tmp_path: Path) -> None:
    p = claude(tmp_path, CLAUDE_CODE_DISABLE_1M_CONTEXT="1")
    assert (p.context_window, p.auto_compact_tokens) == (200_000, 167_000)
    assert "DISABLE_1M" in p.source
    p = claude(tmp_path, CLAUDE_CODE_DISABLE_1M_CONTEXT="0")
    assert p.context_window == 1_000_000


def test_claude_auto_compact_window(tmp_path: Path) -> None:
    p = claude(tmp_path, CLAUDE_CODE_AUTO_COMPACT_WINDOW="100000")
    assert (p.context_window, p.auto_compact_tokens) == (1_000_000, 67_000)  # exp06: 67k
    assert "CLAUDE_CODE_AUTO_COMPACT_WINDOW" in p.source
    # capped at the model's window
    p = claude(
        tmp_path, ANTHROPIC_MODEL="claude-sonnet-4-5", CLAUDE_CODE_AUTO_COMPACT_WINDOW="500000"
    )
    assert p.auto_compact_tokens == 167_000
    p = claude(tmp_path, CLAUDE_CODE_AUTO_COMPACT_WINDOW="lots")
    assert p.auto_compact_tokens == 967_000 and "ignored" in p.source


def test_claude_pct_override(tmp_path: Path) -> None:
    p = claude(tmp_path, CLAUDE_AUTOCOMPACT_PCT_OVERRIDE="50")
    assert p.auto_compact_tokens == 490_000  # exp06: 490k
    p = claude(tmp_path, CLAUDE_AUTOCOMPACT_PCT_OVERRIDE="100")
    assert p.auto_compact_tokens == 967_000  # never above effective - 13000
    p = claude(tmp_path, CLAUDE_AUTOCOMPACT_PCT_OVERRIDE="0")
    assert p.auto_compact_tokens == 967_000 and "ignored" in p.source
    assert claude_auto_compact_threshold(200_000, 50) == 90_000


def test_claude_broken_settings(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"settings\.json"):
        claude(tmp_path, "{broken")
    with pytest.raises(ConfigError, match=r"settings\.json"):
        claude(tmp_path, "[]")
    with pytest.raises(ConfigError, match="must be a string"):
        claude(tmp_path, '{"model": 5}')


def test_budget_follows_threshold(tmp_path: Path) -> None:
    p = claude(tmp_path)
    assert p.budget_tokens == int(967_000 * 0.95)
    assert p.budget_chars == int(p.budget_tokens * 3.0)  # as Claude Code estimates: 3 chars
    # the real window: Claude Code's blocking limit, counted with the newer tokenizer's factor
    assert p.window_budget_tokens == int((1_000_000 - 20_000 - 3_000) * 0.95)
    assert (p.tokenizer.name, p.tokenizer_factor) == ("claude", NEWER_CLAUDE_TOKENIZER)
    c = codex(tmp_path)
    assert c.budget_chars == int(int(c.auto_compact_tokens * 0.95) * 4.0)
    old = claude(tmp_path, '{"model": "claude-sonnet-4-5"}')
    assert old.tokenizer_factor == 1 and old.window_budget_tokens == int(177_000 * 0.95)


# -------------------------------------------------------------------------------- real CLI


@pytest.mark.realcli
def test_bundled_table_matches_codex(tmp_path: Path) -> None:
    from segue_testbed.codex_cli import codex_bin
    from segue_testbed.testbed import CliMissing

    try:
        binary = codex_bin()
    except CliMissing as exc:
        pytest.skip(str(exc))
    home = tmp_path / "home"
    (home / ".codex").mkdir(parents=True)
    env = {"HOME": str(home), "CODEX_HOME": str(home / ".codex"), "PATH": os.environ["PATH"]}
    out = subprocess.run(
        [str(binary), "debug", "models", "--bundled"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    models = json.loads(out.stdout)["models"]
    seen = {
        m["slug"]: (m["context_window"], m["max_context_window"], m.get("auto_compact_token_limit"))
        for m in models
    }
    table = {
        slug: (i.context_window, i.max_context_window, i.auto_compact_token_limit)
        for slug, i in CODEX_BUNDLED_MODELS.items()
    }
    assert table == seen
    listed = [m for m in models if m.get("visibility") == "list"]
    assert min(listed, key=lambda m: m["priority"])["slug"] == CODEX_DEFAULT_MODEL


def test_each_provider_says_which_model_ids_name_one_model() -> None:
    """Claude Code's ``[1m]`` window suffix and a dated id run the same model as the bare id
    (a thread that ran one is not stale under the other); Codex's ids are taken as they are."""
    from segue.providers import entry

    claude = entry(Provider.CLAUDE)
    keys = {claude.model_key(m) for m in ("claude-opus-4-5", "Claude-Opus-4-5[1m]")}
    assert keys == {claude.model_key("claude-opus-4-5-20251101")} == {"claude-opus-4-5"}
    assert claude.model_key("claude-sonnet-4-5") != claude.model_key("claude-opus-4-5")
    codex = entry(Provider.CODEX)
    assert codex.model_key("gpt-5.5") != codex.model_key("gpt-5.5-codex")
    assert codex.model_key(" GPT-5.5 ") == codex.model_key("gpt-5.5")
