"""The rule a rollback is built to, as a property on real git: random runs of an agent (files
written, changed, deleted, renamed, folders made, a folder made a repository of its own) and of
its user (edits, files ignored and unignored, secrets in ignored files, checkpoints), then a
rollback to a random checkpoint followed by its undo: the folder is byte for byte what it was,
ignored files and the insides of nested repositories included, and ``git fsck --strict`` passes.
The undo of that undo puts the rolled-back folder back too."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from segue.workspace import Snapshot, Workspace, capture, locate
from segue.workspace.restore import restore
from tests.test_checkpoints import env_for, git

NAMES = ("a.txt", "b.txt", "d/c.txt", "d/e/f.txt", "g/h.txt", ".env", "config.local", "x y.txt")
FOLDERS = ("d", "g", "d/e")


def snapshot_of(folder: Path) -> dict[str, bytes | str]:
    """Every file under ``folder`` with its bytes (a link: its target), nested repositories'
    files included, their ``.git`` folders left out; every folder too (empty or not)."""
    out: dict[str, bytes | str] = {}
    for root, dirs, files in os.walk(folder):
        rel = Path(root).relative_to(folder)
        if ".git" in rel.parts:
            continue
        for d in dirs:
            if d != ".git":
                out[str(rel / d) + "/"] = "folder"
        for f in files:
            path = Path(root, f)
            out[str(rel / f)] = (
                "-> " + os.readlink(path) if path.is_symlink() else path.read_bytes()
            )
    return out


# an agent's run or a user's action: (kind, name, text)
KINDS = ("write", "write", "delete", "rename", "folder", "repository", "edit", "ignore",
         "unignore", "secret", "checkpoint", "rollback")  # fmt: skip
steps = st.lists(
    st.tuples(
        st.sampled_from(KINDS),
        st.sampled_from(NAMES + FOLDERS),
        st.sampled_from(("one\n", "two\r\n", "three", "")),
    ),
    min_size=3,
    max_size=14,
)


class World:
    def __init__(self, root: Path) -> None:
        self.repo = root / "project"
        if root.exists():
            shutil.rmtree(root)
        self.repo.mkdir(parents=True)
        git(self.repo, "init", "-q", "-b", "main")
        (self.repo / "README").write_text("start\n")
        git(self.repo, "add", "-A")
        git(self.repo, "commit", "-qm", "start")
        self.ws: Workspace = locate(self.repo, env_for(root))
        self.marks: list[Snapshot] = []
        self.n = 0

    def mark(self) -> Snapshot:
        self.n += 1
        parent = self.marks[-1].commit if self.marks else None
        snap = capture(self.ws, f"refs/segue/checkpoints/t/{self.n}", parent=parent, message="m")
        self.marks.append(snap)
        return snap

    def safety(self, parent: Snapshot) -> Snapshot:
        self.n += 1
        return capture(self.ws, f"refs/segue/safety/t/{self.n}", parent=parent.commit, message="s")

    def write(self, name: str, text: str) -> None:
        path = self.repo / name
        if path.is_dir() and not path.is_symlink():
            return
        for parent in reversed(path.relative_to(self.repo).parents):
            where = self.repo / parent
            if where.exists() and not where.is_dir():
                return  # (a file on its way)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text.encode())

    def ignore(self, name: str, on: bool) -> None:
        gitignore = self.repo / ".gitignore"
        lines = gitignore.read_text().splitlines() if gitignore.is_file() else []
        lines = [line for line in lines if line != name] + ([name] if on else [])
        if lines:
            gitignore.write_text("".join(line + "\n" for line in lines))
        else:
            gitignore.unlink(missing_ok=True)

    def fsck(self) -> None:
        done = subprocess.run(
            ["git", "fsck", "--strict", "--no-progress"],
            cwd=self.repo,
            capture_output=True,
            text=True,
            check=False,
        )
        assert done.returncode == 0, done.stdout + done.stderr

    def rollback_and_undo(self, which: int) -> None:
        target = self.marks[which % len(self.marks)]
        before = snapshot_of(self.repo)
        safety = self.safety(self.marks[-1])
        done = restore(
            self.ws, target.commit, safety.commit, keep=(*safety.skipped, *target.skipped)
        )
        assert done.failed == ()
        rolled = snapshot_of(self.repo)
        again = self.safety(safety)
        undone = restore(
            self.ws, safety.commit, again.commit, keep=(*again.skipped, *safety.skipped)
        )
        assert undone.failed == ()
        assert snapshot_of(self.repo) == before
        # and the undo undone: the folder as the rollback left it
        third = self.safety(again)
        redone = restore(self.ws, again.commit, third.commit, keep=(*third.skipped, *again.skipped))
        assert redone.failed == ()
        assert snapshot_of(self.repo) == rolled
        last = self.safety(third)
        restore(self.ws, third.commit, last.commit, keep=(*last.skipped, *third.skipped))
        assert snapshot_of(self.repo) == before
        self.fsck()


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(plan=steps)
def test_a_rollback_then_its_undo_leaves_the_folder_as_it_was(
    tmp_path: Path, plan: list[tuple[str, str, str]]
) -> None:
    world = World(tmp_path / "w")
    world.mark()
    for i, (kind, name, text) in enumerate(plan):
        if kind in ("write", "edit"):
            world.write(name, text)
        elif kind == "secret":
            world.ignore(name, True)
            world.write(name, f"SECRET {i}\n")
        elif kind == "delete":
            target = world.repo / name
            if target.is_file():
                target.unlink()
        elif kind == "rename":
            source = world.repo / name
            if source.is_file():
                world.write(name + ".moved", source.read_text())
                source.unlink()
        elif kind == "folder":
            world.write(f"{name}/made.txt", text)
        elif kind == "repository":
            folder = world.repo / name
            if folder.is_dir() and not (folder / ".git").exists():
                git(folder, "init", "-q")
                world.write(f"{name}/inner.txt", text)
        elif kind in ("ignore", "unignore"):
            world.ignore(name, kind == "ignore")
        elif kind == "checkpoint":
            world.mark()
        elif kind == "rollback":
            world.rollback_and_undo(i)
        if kind in ("write", "delete", "rename", "folder", "repository"):
            world.mark()  # (an agent's run ends with its checkpoint)
    world.rollback_and_undo(0)
    world.rollback_and_undo(len(world.marks) - 1)
