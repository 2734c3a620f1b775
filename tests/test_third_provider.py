"""A third provider is one registry entry: registered, it is listed, read, switched to and from,
offered by the options and kept in the app-thread graph, with no other module changed.

The stand-in, "relay", is a CLI that keeps Codex's session format in a home of its own
(``$RELAY_HOME``, else ``~/.relay``): its entry reuses the Codex format package, as a real third
provider would bring its own. Its sessions are the recorded Codex fixtures copied there.
"""

from __future__ import annotations

import inspect
import shutil
from collections.abc import Callable, Iterable, Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import orjson
import pytest
from msgspec.structs import replace

from segue.formats.atomic import NativeSession
from segue.formats.codex.peek import peek as codex_peek
from segue.model.conversation import Conversation, Provider
from segue.model.session_info import SessionInfo
from segue.providers import all_entries, entry, entry_for_file, names, register, unregister
from segue.providers.base import Env, Lazy, ProviderEntry, UsageReading
from segue.providers.codex import Codex
from segue.providers.codex.usage import read_usage
from segue.providers.sessions import find_session, list_sessions
from segue.switch import switch_session
from segue.transforms.budget import TargetProfile
from segue_testbed.fixtures import all_fixtures

RELAY = Provider("relay")
FIXTURES = {f.name: f for f in all_fixtures()}


def _home(env: Env) -> dict[str, str]:
    """The environment the Codex format reads its home from, pointed at relay's."""
    home = env.get("RELAY_HOME") or str(Path(env.get("HOME", "~")).expanduser() / ".relay")
    return {**env, "CODEX_HOME": home}


class Relay(Codex):
    provider = RELAY
    label = "Relay"
    command = "relay"
    mark = "R"

    # (Codex's is its format's own function, whose env is optional)
    def session_files(self, env: Env, problems: list[str] | None = None) -> Iterator[Path]:  # type: ignore[override]
        return super().session_files(_home(env), problems)

    def recognises(self, path: Path, head: bytes) -> bool:
        return ".relay" in path.parts and super().recognises(path, head)

    # what the format reads is relay's (a real provider's own reader says so itself)
    def read(self, path: Path, *, opaque_data: bool = True) -> Conversation:
        return _relays(super().read(path, opaque_data=opaque_data))

    def read_lines(self, path: Path, lines: Iterable[bytes]) -> Conversation:
        return _relays(super().read_lines(path, lines))

    def peek(self, path: Path) -> SessionInfo:
        return replace(codex_peek(path), provider=RELAY)

    def target_profile(self, env: Env, cwd: str | None = None) -> TargetProfile:
        return replace(super().target_profile(_home(env), cwd), provider=RELAY)

    def prepare(self, items, *, cwd: str, env: Env, now: datetime) -> NativeSession:
        return super().prepare(items, cwd=cwd, env=_home(env), now=now)

    def publish(self, session: NativeSession, env: Env) -> list[str]:
        return super().publish(session, _home(env))

    def fork(self, parent, delta, handoff_text, *, cwd: str, env: Env, now: datetime):
        return super().fork(parent, delta, handoff_text, cwd=cwd, env=_home(env), now=now)

    def usage(self, env: Env, *, remote: bool, now: datetime) -> UsageReading:
        return read_usage(_home(env), remote=remote, now=now)

    def running_session(self, process):
        return None  # no relay process ever runs here


def _relays(conversation: Conversation) -> Conversation:
    return replace(conversation, meta=replace(conversation.meta, provider=RELAY))


@pytest.fixture
def relay() -> Iterator[Relay]:
    added = Relay()
    register(added)
    try:
        yield added
    finally:
        unregister(RELAY)


def _relay_home(tmp_path: Path, fixture: str) -> tuple[dict[str, str], str, Path]:
    """A home with one of relay's sessions (the Codex fixture ``fixture``, in relay's folder)."""
    found = FIXTURES[fixture]
    home = tmp_path / "home"
    shutil.copytree(found.home / ".codex", home / ".relay")
    (home / ".codex").mkdir()
    (home / ".codex" / "config.toml").write_text('model = "gpt-5.5"\n')
    shutil.copy(home / ".codex" / "config.toml", home / ".relay" / "config.toml")
    Path(str(found.spec["cwd"])).mkdir(parents=True, exist_ok=True)
    env = {
        "HOME": str(home),
        "SEGUE_STATE_DIR": str(tmp_path / "state"),
        "SEGUE_DATA_DIR": str(tmp_path / "data"),
    }
    path = next((home / ".relay").rglob("rollout-*.jsonl"))
    return env, str(found.spec["session_id"]), path


def test_a_registered_provider_is_listed_found_and_read(relay: Relay, tmp_path: Path) -> None:
    env, session_id, path = _relay_home(tmp_path, "codex-multi_turn")
    assert names() == ("claude", "codex", "copilot", "relay")
    listing = list_sessions(None, None, env=env)
    assert [(s.provider, s.id) for s in listing.sessions] == [(RELAY, session_id)]
    assert find_session(session_id, env) == (RELAY, path)
    assert entry_for_file(path) is relay  # asked before Codex, whose files these look like
    assert entry(RELAY).read(path).items


def test_a_session_moves_from_a_registered_provider_and_back(relay: Relay, tmp_path: Path) -> None:
    env, session_id, _ = _relay_home(tmp_path, "codex-multi_turn")
    there = switch_session(session_id, Provider.CLAUDE, env=env)
    assert there.written and there.path is not None and ".claude" in there.path.parts
    assert there.thread is not None and there.thread.recorded
    back = switch_session(str(there.session_id), RELAY, env=env)
    assert back.target is RELAY and back.path is not None
    assert back.path.is_relative_to(Path(env["HOME"]) / ".relay")  # relay's home, not Codex's
    assert not list((Path(env["HOME"]) / ".codex").rglob("*.jsonl"))
    assert back.resume_command.endswith(f"relay resume {back.session_id}")
    assert back.thread is not None and back.thread.thread_id == there.thread.thread_id


def _command(
    args: list[str], env: dict[str, str], monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> tuple[int, str, str]:
    """``segue ARGS`` in this process (where the relay is registered): exit code, out, err."""
    from segue.cli.app import main

    for key, value in env.items():
        monkeypatch.setenv(key, value)
    try:
        main(args)
        code = 0
    except SystemExit as exc:
        code = int(exc.code or 0)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_the_commands_offer_a_registered_provider(
    relay: Relay, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    env, session_id, _ = _relay_home(tmp_path, "codex-chat")
    code, out, err = _command(
        ["sessions", "--all", "-p", "relay", "--json"], env, monkeypatch, capsys
    )
    assert code == 0, err
    assert [s["provider"] for s in orjson.loads(out)["sessions"]] == ["relay"]
    code, out, err = _command(
        ["switch", session_id, "--to", "claude", "--json"], env, monkeypatch, capsys
    )
    assert code == 0, err
    doc = orjson.loads(out)
    assert doc["source"]["provider"] == "relay" and doc["target"]["provider"] == "claude"
    code, out, err = _command(
        ["thread", "show", doc["thread"]["id"], "--json"], env, monkeypatch, capsys
    )
    assert code == 0, err
    assert {pt["provider"] for pt in orjson.loads(out)["provider_threads"]} == {
        "relay",
        "claude",
    }
    code, out, err = _command(["switch", session_id, "--to", "gemini"], env, monkeypatch, capsys)
    assert code == 2 and "claude, codex, copilot, relay" in err, err


def test_the_graph_holds_the_registry_type_whatever_names_a_provider() -> None:
    """A provider thread built from a journal's or a program's plain name holds the Provider:
    the graph compares providers with ``is``."""
    from datetime import UTC, datetime

    from segue.threads.model import (
        Handoff,
        HandoffForm,
        HandoffStatus,
        HandoffStrategy,
        ProviderThread,
    )
    from segue.threads.model import ProviderThreadStatus as Status

    pt = ProviderThread("p", "t", "codex", "switch", "n", "/x", 0, Status.ACTIVE, None, 1)  # type: ignore[arg-type]
    assert pt.provider is Provider.CODEX
    h = Handoff(
        "h", "t", "p", ("q",), (1, 2), HandoffStrategy.DELTA_SINCE_TARGET_LAST_SEEN,
        HandoffForm.SUMMARY, HandoffStatus.READY, datetime.now(UTC),
        created_by_provider="relay",  # type: ignore[arg-type]
    )  # fmt: skip
    assert h.created_by_provider is RELAY


def test_a_provider_the_registry_lacks_is_one_line(tmp_path: Path, relay: Relay) -> None:
    """A store or journal that names a provider this segue does not have (one registered by a
    plug-in that is gone) gets one line, not a KeyError."""
    from segue.providers import UnknownProvider, known

    unregister(RELAY)
    with pytest.raises(UnknownProvider, match=r"no provider 'relay' in this segue"):
        entry(RELAY)
    with pytest.raises(ValueError, match=r"no provider 'Not A Name' in this segue \(it knows"):
        known("Not A Name")  # a ValueError too: what parsing an option or a record catches
    with pytest.raises(UnknownProvider, match="not a provider name"):
        known("")
    register(relay)
    assert known("relay") is RELAY


def _arguments(method: Callable[..., Any]) -> tuple[list[None], dict[str, None]]:
    """Arguments for every parameter of ``method`` but ``self``, as its callers pass them."""
    params = list(inspect.signature(method).parameters.values())[1:]
    positional = [None for p in params if p.kind is p.POSITIONAL_OR_KEYWORD]
    return positional, {p.name: None for p in params if p.kind is p.KEYWORD_ONLY}


def test_what_an_entry_names_lazily_exists_and_takes_what_its_method_takes(relay: Relay) -> None:
    """A method an entry names by a string (:func:`segue.providers.base.lazy`, which a type
    checker cannot follow) is a function of that module taking the method's arguments."""
    checked = 0
    for provider_entry in all_entries():
        for cls in type(provider_entry).__mro__:
            for name, value in vars(cls).items():
                if isinstance(value, Lazy):
                    args, kwargs = _arguments(getattr(ProviderEntry, name))
                    inspect.signature(value.resolve()).bind(*args, **kwargs)
                    checked += 1
        headless = provider_entry.headless
        commands = [(headless.compact, 5), (headless.summarize, 3)] if headless else []
        for command, arity in commands:
            if isinstance(command, Lazy):
                inspect.signature(command.resolve()).bind(*[None] * arity)
                checked += 1
    assert checked >= 10
