"""What a user installs: the public API, and a wheel that holds the product and nothing else."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import orjson
import pytest

import segue

ROOT = Path(__file__).resolve().parent.parent

# The names a program may rely on. Adding one is a decision; removing one breaks users.
PUBLIC = {
    # reading, finding, listing
    "read_session",
    "find_session",
    "list_sessions",
    "Listing",
    "SessionInfo",
    "SessionState",
    "effective_history",
    "portable_history",
    # usage and exhaustion
    "read_usage",
    "exhausted_providers",
    "ProviderUsage",
    # planning and switching
    "plan_switch",
    "switch_session",
    "switch_conversation",
    "Switch",
    "Plan",
    "Label",
    "TargetProfile",
    "target_profile",
    # the neutral model
    "Conversation",
    "SessionMeta",
    "Item",
    "UserMessage",
    "AssistantMessage",
    "Reasoning",
    "ToolCall",
    "ToolResult",
    "Compaction",
    "ErrorNotice",
    "TurnMarker",
    "Rollback",
    "Opaque",
    "Provider",
    "Provenance",
    "Origin",
    "ToolKind",
    "CompactionState",
    "ErrorKind",
    "TurnStatus",
    "Image",
    "Skip",
    "LimitWindow",
    # errors
    "SegueError",
    "SessionError",
    "ConfigError",
    "SwitchError",
    "SwitchLocked",
    "TargetExists",
    "StoreError",
    "__version__",
}


def test_public_names_are_pinned() -> None:
    assert set(segue.__all__) == PUBLIC
    for name in segue.__all__:
        assert hasattr(segue, name), name


def test_errors_share_one_base() -> None:
    for error in (
        segue.SessionError,
        segue.ConfigError,
        segue.SwitchError,
        segue.SwitchLocked,
        segue.TargetExists,
        segue.StoreError,
    ):
        assert issubclass(error, segue.SegueError)


def test_plan_and_switch_a_conversation_in_memory(tmp_path: Path) -> None:
    """The README's library example, on a conversation built by a program."""
    prov = segue.Provenance("memory", 1)
    conversation = segue.Conversation(
        meta=segue.SessionMeta(segue.Provider.CODEX, "built", "", cwd=str(tmp_path)),
        items=[
            segue.UserMessage("Say hello.", prov),
            segue.AssistantMessage("Hello.", prov),
        ],
    )
    env = {"HOME": str(tmp_path)}
    plan = segue.plan_switch(conversation, segue.Provider.CLAUDE, env=env)
    assert plan.label is segue.Label.NATIVE
    switch = segue.switch_conversation(conversation, segue.Provider.CLAUDE, env=env)
    assert switch.path is not None and switch.path.is_file()
    back = segue.read_session(switch.path)
    texts = [
        i.text for i in back.items if isinstance(i, segue.UserMessage | segue.AssistantMessage)
    ]
    assert texts == ["Say hello.", "Hello."]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    uv = shutil.which("uv")
    if uv is None:
        pytest.skip("uv is not on PATH")
    out = tmp_path_factory.mktemp("dist")
    subprocess.run(
        [uv, "build", "--wheel", "--out-dir", str(out), str(ROOT)],
        check=True,
        capture_output=True,
        timeout=300,
    )
    (built,) = out.glob("segue-*.whl")
    return built


def test_wheel_holds_only_the_product(wheel: Path) -> None:
    names = zipfile.ZipFile(wheel).namelist()
    packages = {name.split("/", 1)[0] for name in names}
    assert packages == {"segue", wheel.name.split("-py3")[0] + ".dist-info"}
    assert not [n for n in names if "testing" in n or "testbed" in n or "standin" in n]
    assert "segue/py.typed" in names
    assert any(n.startswith("segue/data/demo/home/") for n in names)  # the demo's session


@pytest.fixture(scope="module")
def installed(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh virtual environment holding the wheel (no extras): its bin folder."""
    uv = shutil.which("uv")
    assert uv is not None
    venv = tmp_path_factory.mktemp("venv")
    subprocess.run([uv, "venv", "-q", "--python", sys.executable, str(venv)], check=True)
    install = subprocess.run(
        [uv, "pip", "install", "-q", "--python", str(venv / "bin" / "python"), str(wheel)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert install.returncode == 0, install.stderr
    return venv / "bin"


def test_installed_wheel_runs_the_demo(installed: Path, tmp_path: Path) -> None:
    venv = installed.parent
    python = installed / "python"
    env = {"PATH": f"{venv / 'bin'}:/usr/bin:/bin", "HOME": str(tmp_path / "home")}
    demo = subprocess.run(
        [str(venv / "bin" / "segue"), "demo", "--home", str(tmp_path / "demo")],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=120,
    )
    assert demo.returncode == 0, demo.stderr
    assert "continue it with:" in demo.stdout
    assert "claude --resume" in demo.stdout
    # nothing of the test bed or the dev tools came with it
    probe = subprocess.run(
        [
            str(python),
            "-c",
            "import importlib.util as u; print([m for m in "
            "('segue_testbed', 'segue.testing', 'pytest', 'hypothesis', 'mypy', 'ruff') "
            "if u.find_spec(m.split('.')[0]) and u.find_spec(m)])",
        ],
        capture_output=True,
        text=True,
        env={**env, "PYTHONPATH": ""},
        cwd=tmp_path,
    )
    assert probe.stdout.strip() == "[]", probe.stdout + probe.stderr
    assert os.listdir(tmp_path / "demo" / ".claude" / "projects")


def test_installed_wheel_keeps_batches_and_asks_for_the_postgres_extra(
    installed: Path, tmp_path: Path
) -> None:
    """The migrations ship in the wheel; PostgreSQL needs segue[postgres]."""
    env = {
        "PATH": f"{installed}:/usr/bin:/bin",
        "HOME": str(tmp_path / "home"),
        "SEGUE_DATA_DIR": str(tmp_path / "data"),
    }

    def batches(**extra: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(installed / "segue"), "batches", "--json"],
            capture_output=True,
            text=True,
            env={**env, **extra},
            cwd=tmp_path,
            timeout=120,
        )

    empty = batches()
    assert (empty.returncode, empty.stdout, empty.stderr) == (0, '{\n  "batches": []\n}\n', "")
    assert (tmp_path / "data" / "segue.db").is_file()
    postgres = batches(SEGUE_DATABASE_URL="postgresql://segue@127.0.0.1:1/segue")
    assert postgres.returncode == 1
    error = orjson.loads(postgres.stdout)["error"]
    assert "install segue[postgres]" in error and "\n" not in error
