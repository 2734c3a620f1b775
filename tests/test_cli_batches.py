"""``segue batches`` as a user runs it, on SQLite and on a real PostgreSQL server."""

from __future__ import annotations

import os
import socket
import subprocess
from pathlib import Path

import orjson
import pytest

from segue.model.conversation import Provider
from segue.store import AgentResult, open_store
from tests.segue_cli import segue as run_segue


def segue(tmp_path: Path, *args: str, url: str | None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SEGUE_")}
    env["HOME"] = str(tmp_path / "home")
    env["SEGUE_DATA_DIR"] = str(tmp_path / "data")
    if url is not None:
        env["SEGUE_DATABASE_URL"] = url
    return run_segue(["batches", *args], env, cwd=tmp_path, timeout=120)


def test_no_batches_yet(database_url: str, tmp_path: Path) -> None:
    listed = segue(tmp_path, "--json", url=database_url)
    assert listed.returncode == 0, listed.stderr
    assert orjson.loads(listed.stdout) == {"batches": []}
    human = segue(tmp_path, url=database_url)
    assert (human.returncode, human.stdout, human.stderr) == (0, "No batches recorded yet.\n", "")


def test_batches_newest_first_and_one_batch(database_url: str, tmp_path: Path) -> None:
    with open_store(database_url) as store:
        old = store.create_batch(Provider.CLAUDE, Provider.CODEX, planned=2)
        store.add_agent(old.id, AgentResult(0, Provider.CLAUDE, "k1", error="cannot read the file"))
        new = store.create_batch(Provider.CODEX, Provider.CLAUDE, planned=12)
        outcomes = ["native"] * 5 + ["raw"] * 3 + ["shrunk"]
        for n, label in enumerate(outcomes):
            store.add_agent(
                new.id,
                AgentResult(
                    n, Provider.CODEX, f"c{n}", state="limit", target_provider=Provider.CLAUDE,
                    target_session=f"k{n}", label=label,
                ),
            )  # fmt: skip
        store.add_agent(
            new.id, AgentResult(9, Provider.CODEX, "c9", state="working", skipped="busy")
        )
    listed = segue(tmp_path, "--json", url=database_url)
    assert listed.returncode == 0, listed.stderr
    rows = orjson.loads(listed.stdout)["batches"]
    assert [(r["batch"], r["from"], r["to"], r["agents"], r["planned"]) for r in rows] == [
        (new.id, "codex", "claude", 10, 12),
        (old.id, "claude", "codex", 1, 2),
    ]
    assert rows[0]["tally"] == {"native": 5, "raw": 3, "shrunk": 1, "skipped": 1}
    assert rows[0]["created_at"].endswith("Z")

    table = segue(tmp_path, url=database_url)
    assert table.returncode == 0, table.stderr
    lines = table.stdout.splitlines()
    assert lines[0].split() == ["BATCH", "CREATED", "(UTC)", "ROUTE", "AGENTS", "OUTCOME"]
    assert lines[1].startswith(new.id) and lines[2].startswith(old.id)
    assert "codex → claude" in lines[1] and "10/12" in lines[1]
    assert lines[1].endswith("5 native, 3 raw, 1 shrunk, 1 skipped")
    assert lines[2].endswith("1 failed")

    one = segue(tmp_path, new.id[:-4], "--json", url=database_url)
    assert one.returncode == 0, one.stderr
    document = orjson.loads(one.stdout)
    assert (document["batch"], document["from"], document["to"]) == (new.id, "codex", "claude")
    assert [a["session"] for a in document["agents"]] == [f"c{n}" for n in range(10)]
    assert document["agents"][9]["skipped"] == "busy"
    assert document["agents"][0]["target"] == {"provider": "claude", "session": "k0", "path": None}

    shown = segue(tmp_path, old.id, url=database_url)
    assert shown.returncode == 0, shown.stderr
    assert f"batch {old.id}  claude → codex" in shown.stdout
    assert "1 recorded of 2 selected: 1 failed" in shown.stdout
    assert "cannot read the file" in shown.stdout


def test_an_ambiguous_or_unknown_batch_is_one_line(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'segue.db'}"
    with open_store(url) as store:
        ids = [store.create_batch(Provider.CODEX, Provider.CLAUDE).id for _ in range(2)]
    ambiguous = segue(tmp_path, ids[0][:6], url=url)
    assert ambiguous.returncode == 1 and ambiguous.stdout == ""
    assert ambiguous.stderr.startswith(f"segue: batch id prefix {ids[0][:6]} is ambiguous")
    assert ambiguous.stderr.count("\n") == 1
    unknown = segue(tmp_path, "ffff", "--json", url=url)
    assert unknown.returncode == 1
    assert orjson.loads(unknown.stdout) == {
        "error": f"{tmp_path / 'segue.db'}: no batch ffff",
        "exit_code": 1,
    }


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.mark.parametrize(
    ("url", "says"),
    [
        ("::nonsense::", "SEGUE_DATABASE_URL is not a database URL"),
        ("oracle://scott:tiger@db/orcl", "is a oracle:// URL"),
        ("postgresql://segue:secret@127.0.0.1:{port}/segue", "cannot connect: Connection refused"),
    ],
)
def test_a_bad_database_url_is_one_line(url: str, says: str, tmp_path: Path) -> None:
    url = url.format(port=_closed_port())
    plain = segue(tmp_path, url=url)
    assert plain.returncode == 1 and plain.stdout == ""
    assert plain.stderr.startswith("segue: ") and says in plain.stderr
    assert plain.stderr.count("\n") == 1 and "Traceback" not in plain.stderr
    assert "secret" not in plain.stderr and "tiger" not in plain.stderr
    as_json = segue(tmp_path, "--json", url=url)
    assert as_json.returncode == 1 and as_json.stderr == ""
    error = orjson.loads(as_json.stdout)
    assert error["exit_code"] == 1 and says in error["error"]


def test_the_default_store_is_in_segue_data_dir(tmp_path: Path) -> None:
    listed = segue(tmp_path, "--json", url=None)
    assert listed.returncode == 0, listed.stderr
    assert (tmp_path / "data" / "segue.db").is_file()
    (tmp_path / "data" / "segue.db").write_bytes(b"garbage" * 1000)
    corrupt = segue(tmp_path, url=None)
    assert corrupt.returncode == 1
    assert corrupt.stderr == (
        f"segue: {tmp_path / 'data' / 'segue.db'}: cannot open segue's database: "
        "not a SQLite database, or it is corrupt\n"
    )
