"""A rollback never loses a file, with the real CLIs: runs made through ``segue run``, files
written by the agent's shell tool. What a rollback or its undo removes or overwrites, an undo
brings back byte for byte: files ignored now (by ``.gitignore`` or ``.git/info/exclude``), work
done after the rollback (an undo can be undone), folders that became repositories of their own.
A later ``segue checkpoint`` never replaces a run's exact checkpoint, the user's repository
passes ``git fsck`` where git converts files, and the preview quotes names."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from segue_testbed.standin.openai import FunctionCall
from segue_testbed.standin.openai import Text as CodexText
from segue_testbed.standin.server import StandIn
from tests.segue_cli import segue, segue_json
from tests.test_checkpoints import both_clis, git, new_repo
from tests.test_restore_property import snapshot_of

pytestmark = pytest.mark.realcli


class Thread:
    """A Codex session taken over by segue: run 1 by the CLI, each later run ``segue run``."""

    def __init__(
        self,
        standin: StandIn,
        tmp_path: Path,
        files: dict[str, str],
        configure: Callable[[Path], None] | None = None,
    ) -> None:
        self.lane, self.codex, claude, self.env = both_clis(standin, tmp_path)
        self.repo = tmp_path / "work"
        self.repo.mkdir()
        git(self.repo, "init", "-q", "-b", "main")
        if configure is not None:  # (before the first commit)
            configure(self.repo)
        for name, text in files.items():
            (self.repo / name).write_text(text)
        git(self.repo, "add", "-A")
        git(self.repo, "commit", "-qm", "start")
        claude.trust(self.repo)
        self.lane.script("openai", FunctionCall("exec_command", {"cmd": "true"}), CodexText("1"))
        assert self.codex.exec("PROMPT-1", cwd=self.repo).returncode == 0
        session = self.codex.only_session_id()
        self.id = self.json("checkpoint", session, "--exact")["thread"]
        self.n = 1

    def run(self, cmd: str) -> dict[str, Any]:
        """The next run: the agent runs ``cmd`` in its shell."""
        self.n += 1
        call = FunctionCall("exec_command", {"cmd": cmd})
        self.lane.script("openai", call, CodexText(f"RUN-{self.n}"))
        done = self.json("run", "--thread", self.id, f"PROMPT-{self.n}")
        assert done["status"] == "completed" and done["run"] == self.n, done
        return done

    def json(self, *args: str) -> dict[str, Any]:
        return segue_json([*args, "--json"], self.env, cwd=self.repo)

    def rollback(self, run: int) -> dict[str, Any]:
        done = self.json("rollback", self.id, "--to-run", str(run), "--yes")
        assert done["failed"] == [], done
        return done

    def undo(self) -> dict[str, Any]:
        done = self.json("rollback", self.id, "--undo", "--yes")
        assert done["failed"] == [], done
        return done

    def preview(self, run: int) -> dict[str, Any]:
        return self.json("rollback", self.id, "--to-run", str(run), "--dry-run")

    def files(self) -> dict[str, bytes | str]:
        return snapshot_of(self.repo)

    def fsck(self) -> None:
        assert git(self.repo, "fsck", "--strict", "--no-progress") == ""


def on_disk(plan: dict[str, Any]) -> dict[str, str]:
    return {a["path"]: a["action"] for a in plan["on_disk"]}


def left(plan: dict[str, Any]) -> dict[str, str]:
    return {s["path"]: s["reason"] for s in plan["left"]}


def test_a_file_ignored_since_is_never_overwritten_and_the_undo_keeps_it(
    standin: StandIn, tmp_path: Path
) -> None:
    t = Thread(standin, tmp_path, {"base.txt": "base\n"})
    t.run("printf 'from run 2\\n' > config.local")
    (t.repo / ".gitignore").write_text("config.local\n")
    (t.repo / "config.local").write_text("password=hunter2\n")
    t.run("printf 'three\\n' > three.txt")
    before = t.files()

    plan = t.preview(2)
    assert "config.local" not in on_disk(plan)
    assert "ignored" in left(plan)["config.local"]
    # (run 2 had no .gitignore: removing it would stop ignoring the secret)
    assert ".gitignore" not in on_disk(plan) and "config.local" in left(plan)[".gitignore"]
    assert on_disk(plan) == {"three.txt": "remove"}

    done = t.rollback(2)
    assert {a["path"] for a in done["done"]} == {"three.txt"}
    assert (t.repo / "config.local").read_text() == "password=hunter2\n"
    assert not (t.repo / "three.txt").exists()
    t.undo()
    assert t.files() == before
    t.fsck()


def test_an_ignored_env_survives_the_rollback_its_undo_and_every_checkpoint_between(
    standin: StandIn, tmp_path: Path
) -> None:
    t = Thread(standin, tmp_path, {"base.txt": "base\n"})
    t.run("printf 'two\\n' > two.txt")
    (t.repo / ".gitignore").write_text(".env\n")
    (t.repo / ".env").write_text("API_KEY=sk-live-123\n")
    t.run("printf 'three\\n' > three.txt && printf 'changed\\n' > two.txt")
    before = t.files()

    t.rollback(2)
    assert (t.repo / ".env").read_text() == "API_KEY=sk-live-123\n"
    assert (t.repo / ".gitignore").read_text() == ".env\n"  # kept: it hides the secret
    assert (t.repo / "two.txt").read_text() == "two\n"
    # while rolled back, a checkpoint leaves the secret out, and git still ignores it
    taken = t.json("checkpoint", t.id)
    tree = git(t.repo, "ls-tree", "-r", "--name-only", taken["commit"])
    assert ".env" not in tree.split("\n")
    assert "!! .env" in git(t.repo, "status", "--porcelain", "--ignored")
    t.undo()
    assert t.files() == before
    t.fsck()


def test_a_file_excluded_in_the_repository_is_left_as_it_is(
    standin: StandIn, tmp_path: Path
) -> None:
    t = Thread(standin, tmp_path, {"base.txt": "base\n"})
    t.run("printf 'draft\\n' > notes.txt")
    with (t.repo / ".git" / "info" / "exclude").open("a") as f:
        f.write("notes.txt\n")
    (t.repo / "notes.txt").write_text("my own notes, not the agent's\n")
    t.run("rm notes.txt.gone 2>/dev/null; printf 'three\\n' > three.txt")
    before = t.files()
    assert "ignored" in left(t.preview(2))["notes.txt"]
    t.rollback(2)
    assert (t.repo / "notes.txt").read_text() == "my own notes, not the agent's\n"
    t.undo()
    assert t.files() == before


def test_work_done_after_a_rollback_comes_back_when_the_undo_is_undone(
    standin: StandIn, tmp_path: Path
) -> None:
    t = Thread(standin, tmp_path, {"base.txt": "base\n"})
    t.run("printf 'two\\n' > two.txt")
    t.run("printf 'three\\n' > three.txt && printf 'two, changed\\n' > two.txt")
    before = t.files()
    t.rollback(2)
    # work after the rollback, by hand
    (t.repo / "two.txt").write_text("two, my own fix\n")
    (t.repo / "mine.txt").write_text("written after the rollback\n")
    after = t.files()

    undo = t.json("rollback", t.id, "--undo", "--dry-run")
    assert undo["undo"] and not undo["redo"]
    assert on_disk(undo) == {"mine.txt": "remove", "three.txt": "recreate", "two.txt": "restore"}
    first = t.undo()
    assert t.files() == before
    assert first["safety_snapshot"] is not None

    redo = t.json("rollback", t.id, "--undo", "--dry-run")
    assert redo["redo"] and redo["runs_rolled_back"] == [3]
    t.undo()  # the undo undone: the work after the rollback is back, run 3 rolled back again
    assert t.files() == after
    shown = t.json("thread", "show", t.id)
    assert {r["ordinal"]: r["status"] for r in shown["runs"]}[3] == "rolled_back"
    t.undo()  # and again
    assert t.files() == before
    shown = t.json("thread", "show", t.id)
    assert {r["ordinal"]: r["status"] for r in shown["runs"]}[3] == "completed"
    t.fsck()


def test_a_later_checkpoint_never_replaces_the_runs_exact_one(
    standin: StandIn, tmp_path: Path
) -> None:
    t = Thread(standin, tmp_path, {"base.txt": "base\n"})
    t.run("printf 'as run 2 left it\\n' > app.txt")
    (t.repo / "app.txt").write_text("half done by hand\n")
    taken = t.json("checkpoint", t.id)
    assert taken["run"] == 2 and taken["kind"] == "approximate"
    t.run("printf 'three\\n' > three.txt")
    marks = t.json("checkpoints", t.id)["checkpoints"]
    exact = next(c for c in marks if c["run"] == 2 and c["kind"] == "exact")
    ref = f"refs/segue/checkpoints/{t.id}/2"
    assert git(t.repo, "rev-parse", ref).strip() == exact["commit"]
    plan = t.preview(2)
    assert plan["checkpoint"]["commit"] == exact["commit"]
    t.rollback(2)
    assert (t.repo / "app.txt").read_text() == "as run 2 left it\n"


def _autocrlf(repo: Path) -> None:
    git(repo, "config", "core.autocrlf", "true")


def _pointer_filter(repo: Path) -> None:
    git(repo, "config", "filter.pointer.clean", "echo POINTER; cat >/dev/null")
    git(repo, "config", "filter.pointer.smudge", "cat")


@pytest.mark.parametrize(
    ("files", "configure"),
    [
        ({".gitattributes": "* text=auto\n"}, None),
        ({}, _autocrlf),
        ({".gitattributes": "*.bin filter=pointer\n"}, _pointer_filter),
    ],
    ids=["text-auto", "autocrlf", "clean-filter"],
)
def test_the_users_repository_passes_fsck_where_git_converts_files(
    standin: StandIn,
    tmp_path: Path,
    files: dict[str, str],
    configure: Callable[[Path], None] | None,
) -> None:
    t = Thread(standin, tmp_path, {"base.txt": "base\n", **files}, configure)
    t.fsck()  # (the first checkpoint, of run 1)
    t.run("printf 'one\\r\\ntwo\\r\\n' > crlf.txt && printf 'weights' > model.bin")
    t.fsck()
    t.run("rm crlf.txt")
    t.fsck()
    t.rollback(2)
    assert (t.repo / "crlf.txt").read_bytes() == b"one\r\ntwo\r\n"
    assert (t.repo / "model.bin").read_bytes() == b"weights"
    t.fsck()


def test_a_folder_made_a_repository_after_a_checkpoint_is_left_out_and_left_alone(
    standin: StandIn, tmp_path: Path
) -> None:
    t = Thread(standin, tmp_path, {"base.txt": "base\n"})
    t.run("mkdir -p sub && printf 'a\\n' > sub/a.txt && printf 'b\\n' > sub/b.txt")
    git(t.repo / "sub", "init", "-q")
    (t.repo / "sub" / "a.txt").write_text("a, uncommitted in its own repository\n")
    (t.repo / "sub" / "b.txt").unlink()
    (t.repo / "sub" / "new.txt").write_text("new in its own repository\n")
    t.run("printf 'three\\n' > three.txt")
    marks = t.json("checkpoints", t.id)["checkpoints"]
    at_three = next(c for c in marks if c["run"] == 3)
    tree = git(t.repo, "ls-tree", "-r", "--name-only", at_three["commit"]).split("\n")
    assert not any(p.startswith("sub/") for p in tree), tree
    assert any(s["path"] == "sub" for s in at_three.get("skipped", [])), at_three
    before = t.files()

    plan = t.preview(2)
    assert not any(p.startswith("sub/") for p in on_disk(plan)), plan
    assert "repository of its own" in left(plan)["sub/a.txt"]
    t.rollback(2)
    assert (t.repo / "sub" / "a.txt").read_text() == "a, uncommitted in its own repository\n"
    assert (t.repo / "sub" / "new.txt").exists() and not (t.repo / "sub" / "b.txt").exists()
    assert not (t.repo / "three.txt").exists()
    t.undo()
    assert t.files() == before
    t.fsck()


def test_a_submodule_added_after_a_checkpoint_is_left_alone(
    standin: StandIn, tmp_path: Path
) -> None:
    t = Thread(standin, tmp_path, {"base.txt": "base\n"})
    t.run("printf 'two\\n' > two.txt")
    other = new_repo(tmp_path / "other", {"lib.txt": "lib\n"})
    git(t.repo, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(other), "lib")
    (t.repo / "lib" / "lib.txt").write_text("edited in the submodule\n")
    t.run("printf 'three\\n' > three.txt")
    before = t.files()
    plan = t.preview(2)
    assert not any(p.startswith("lib/") for p in on_disk(plan)), plan
    t.rollback(2)
    assert (t.repo / "lib" / "lib.txt").read_text() == "edited in the submodule\n"
    t.undo()
    assert t.files() == before


def test_the_preview_quotes_a_name_that_holds_a_newline_and_leaves_a_fifo_named(
    standin: StandIn, tmp_path: Path
) -> None:
    t = Thread(standin, tmp_path, {"base.txt": "base\n", "pipe": "a file at run 2\n"})
    t.run("printf 'two\\n' > two.txt")
    (t.repo / "pipe").unlink()
    os.mkfifo(t.repo / "pipe")
    (t.repo / "evil\n  remove    base.txt").write_text("made by hand\n")
    shown = segue(["rollback", t.id, "--to-run", "2", "--dry-run"], t.env, cwd=t.repo)
    assert shown.returncode == 0, shown.stderr
    lines = shown.stdout.splitlines()
    assert not any(line.strip().startswith("remove    base.txt") for line in lines), lines
    assert any('"evil\\n  remove    base.txt"' in line for line in lines), lines
    assert any("pipe" in line and "FIFO" in line for line in lines), lines
    t.rollback(2)
    assert (t.repo / "pipe").is_fifo() and (t.repo / "base.txt").read_text() == "base\n"


def test_an_undo_is_refused_with_one_line_when_there_is_nothing_to_undo(
    standin: StandIn, tmp_path: Path
) -> None:
    t = Thread(standin, tmp_path, {"base.txt": "base\n"})
    done = segue(["rollback", t.id, "--undo", "--yes"], t.env, cwd=t.repo)
    assert done.returncode != 0 and "no rollback to undo" in done.stderr
    assert "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) == 1


def test_first_checkpoint_where_git_converts_line_endings_counts_only_real_changes(
    standin: StandIn, tmp_path: Path
) -> None:
    folder = tmp_path / "work"
    folder.mkdir()
    git(folder, "init", "-q", "-b", "main")
    git(folder, "config", "core.autocrlf", "true")
    (folder / "a.txt").write_text("one\ntwo\n")
    (folder / "b.txt").write_text("three\n")
    git(folder, "add", "-A")
    git(folder, "commit", "-qm", "start")
    for name in ("a.txt", "b.txt"):  # (checked out again: CRLF on disk, LF in HEAD)
        (folder / name).unlink()
    git(folder, "checkout", "--", ".")
    assert (folder / "a.txt").read_bytes() == b"one\r\ntwo\r\n"
    lane, codex, _claude, env = both_clis(standin, tmp_path)
    lane.script(
        "openai",
        FunctionCall("exec_command", {"cmd": "printf 'four\\r\\n' >> b.txt"}),
        CodexText("1"),
    )
    assert codex.exec("PROMPT-1", cwd=folder).returncode == 0
    done = segue_json(["checkpoint", codex.only_session_id(), "--exact", "--json"], env, cwd=folder)
    files = {f["path"]: (f["added"], f["removed"]) for f in done["files"]}
    assert files == {"b.txt": (1, 0)}, done
