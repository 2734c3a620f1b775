"""``segue hooks install`` then ``uninstall`` leaves the CLIs' settings files as they were, byte
for byte: the user's layout, a file that was not there (nor the folder made for it)."""

from __future__ import annotations

import json
from pathlib import Path

import orjson
import pytest

from segue.model.conversation import Provider
from segue.providers.hooks import HookChange
from segue.rewind import install_hooks, uninstall_hooks


def homes(tmp_path: Path) -> dict[str, str]:
    home = tmp_path / "home"
    home.mkdir()
    return {"HOME": str(home), "SEGUE_STATE_DIR": str(tmp_path / "state"), "PATH": "/usr/bin"}


def done(changes: list[tuple[Provider, HookChange | None]]) -> list[HookChange]:
    out = []
    for provider, change in changes:
        assert change is not None and change.error is None, (provider, change)
        assert change.changed, (provider, change)
        out.append(change)
    return out


def claude_settings(env: dict[str, str]) -> Path:
    return Path(env["HOME"]) / ".claude" / "settings.json"


def codex_config(env: dict[str, str]) -> Path:
    return Path(env["HOME"]) / ".codex" / "config.toml"


HAND_LAID_OUT = [
    pytest.param(
        '{\n\t"theme": "dark",\n\t"permissions": {\n\t\t"allow": ["Bash", "Read"]\n\t},\n'
        '\t"hooks": {\n\t\t"PreToolUse": []\n\t},\n\t"model": "opus"\n}\n',
        id="tabs",
    ),
    pytest.param(
        '{\n    "zeta": 1,\n    "env" : {"B": "2", "A": "caf\\u00e9"},\n    "alpha": [\n'
        "        true,\n        null\n    ]\n}",  # (no newline at the end)
        id="four-spaces-no-final-newline",
    ),
    pytest.param('{"z":1,"a":{"y":[],"b":2.50}}\r\n\r\n', id="compact-crlf"),
]


@pytest.mark.parametrize("text", HAND_LAID_OUT)
def test_claude_settings_laid_out_by_hand_come_back_byte_for_byte(
    tmp_path: Path, text: str
) -> None:
    env = homes(tmp_path)
    settings = claude_settings(env)
    settings.parent.mkdir()
    settings.write_bytes(text.encode())
    settings.chmod(0o640)
    done(install_hooks([Provider.CLAUDE], env=env))
    installed = settings.read_bytes()
    assert "Stop" in orjson.loads(installed)["hooks"]
    done(uninstall_hooks([Provider.CLAUDE], env=env))
    assert settings.read_bytes() == text.encode()
    assert settings.stat().st_mode & 0o777 == 0o640


def test_codex_config_laid_out_by_hand_comes_back_byte_for_byte(tmp_path: Path) -> None:
    env = homes(tmp_path)
    config = codex_config(env)
    config.parent.mkdir()
    text = '# mine\r\nmodel = "o3"\r\nnotify = [ "/opt/my-notify",  "--loud" ]\r\n\r\n[tui]\r\n'
    config.write_bytes(text.encode())
    done(install_hooks([Provider.CODEX], env=env))
    assert b"segue" in config.read_bytes()
    done(uninstall_hooks([Provider.CODEX], env=env))
    assert config.read_bytes() == text.encode()


def test_a_settings_file_that_was_not_there_is_not_there_after_uninstall(tmp_path: Path) -> None:
    env = homes(tmp_path)
    home = Path(env["HOME"])
    (home / ".codex").mkdir()  # Codex's folder is there, Claude Code's is not
    done(install_hooks(env=env))
    assert claude_settings(env).is_file() and codex_config(env).is_file()
    done(uninstall_hooks(env=env))
    assert sorted(p.name for p in home.iterdir()) == [".codex"]  # (.claude was segue's)
    assert list((home / ".codex").iterdir()) == []
    # and installing again, once more undone, leaves nothing either
    done(install_hooks(env=env))
    done(uninstall_hooks(env=env))
    assert sorted(p.name for p in home.iterdir()) == [".codex"]


def test_a_file_segue_made_keeps_what_was_put_in_it_since_and_goes_when_that_goes(
    tmp_path: Path,
) -> None:
    env = homes(tmp_path)
    settings = claude_settings(env)
    done(install_hooks([Provider.CLAUDE], env=env))
    # Claude Code writes a setting of its own into the file segue made
    written = orjson.loads(settings.read_bytes())
    settings.write_bytes(json.dumps({"model": "opus", **written}, indent=2).encode() + b"\n")
    done(uninstall_hooks([Provider.CLAUDE], env=env))
    assert settings.read_bytes() == b'{\n  "model": "opus"\n}\n'
    settings.unlink()
    # made again, and written again by Claude Code with the same settings in another layout
    done(install_hooks([Provider.CLAUDE], env=env))
    settings.write_bytes(json.dumps(orjson.loads(settings.read_bytes()), indent=4).encode())
    done(uninstall_hooks([Provider.CLAUDE], env=env))
    assert not settings.exists() and settings.parent.is_dir()  # (the folder was there)


def test_a_user_edit_between_install_and_uninstall_keeps_the_users_layout(
    tmp_path: Path,
) -> None:
    env = homes(tmp_path)
    settings = claude_settings(env)
    settings.parent.mkdir()
    theirs = {
        "theme": "dark",
        "hooks": {"Stop": [{"matcher": "", "hooks": [{"type": "command", "command": "true"}]}]},
        "permissions": {"allow": ["Bash"], "deny": []},
        "model": "opus",
    }
    settings.write_bytes(json.dumps(theirs, indent="\t").encode())  # tabs, no final newline
    done(install_hooks([Provider.CLAUDE], env=env))
    installed = settings.read_bytes()
    assert b'\n\t"theme": "dark",\n\t"hooks": {\n\t\t"Stop": [' in installed  # tabs still
    # the user changes a setting, and Claude Code adds one, while segue's hooks are in
    edited = installed.replace(b'"model": "opus"', b'"model": "sonnet"')
    edited = edited.replace(b'\t"theme": "dark",\n', b'\t"theme": "dark",\n\t"verbose": true,\n')
    assert edited.count(b"sonnet") == 1 and edited.count(b"verbose") == 1
    settings.write_bytes(edited)
    done(uninstall_hooks([Provider.CLAUDE], env=env))
    expected = {"theme": "dark", "verbose": True, **theirs, "model": "sonnet"}
    assert settings.read_bytes() == json.dumps(expected, indent="\t").encode()


def test_a_codex_config_edited_between_install_and_uninstall_keeps_the_edit(
    tmp_path: Path,
) -> None:
    env = homes(tmp_path)
    config = codex_config(env)
    config.parent.mkdir()
    config.write_bytes(b'model = "o3"\r\n\r\n[tui]\r\nnotifications = true\r\n')  # (Windows')
    done(install_hooks([Provider.CODEX], env=env))
    config.write_bytes(config.read_bytes().replace(b'"o3"', b'"o4" # newer'))
    done(uninstall_hooks([Provider.CODEX], env=env))
    assert config.read_bytes() == b'model = "o4" # newer\r\n\r\n[tui]\r\nnotifications = true\r\n'
