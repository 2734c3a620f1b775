"""Checkpoints of a workspace on real git: exactly the folder's files, and nothing of the user's
touched (HEAD, branches, index, stash, working tree)."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import orjson
import pytest

from segue.model.errors import CheckpointError
from segue.workspace import Snapshot, Workspace, capture, changes_between, locate
from segue_testbed.claude_cli import ClaudeHome, claude_bin
from segue_testbed.codex_cli import CodexHome, codex_bin
from segue_testbed.copilot_cli import CopilotHome
from segue_testbed.standin.anthropic import RateLimited, ToolUse
from segue_testbed.standin.anthropic import Reply as ClaudeReply
from segue_testbed.standin.anthropic import Text as ClaudeText
from segue_testbed.standin.openai import FunctionCall
from segue_testbed.standin.openai import Text as CodexText
from segue_testbed.standin.server import Lane, StandIn
from tests.segue_cli import segue, segue_json

T = TypeVar("T")

GIT_ENV = {
    "GIT_AUTHOR_NAME": "u",
    "GIT_AUTHOR_EMAIL": "u@example.org",
    "GIT_COMMITTER_NAME": "u",
    "GIT_COMMITTER_EMAIL": "u@example.org",
}


def git(cwd: Path, *args: str) -> str:
    env = {**os.environ, **GIT_ENV}
    return subprocess.run(
        ["git", *args], cwd=cwd, env=env, check=True, capture_output=True, text=True
    ).stdout


def user_state(repo: Path) -> dict[str, str]:
    """Everything of the user's that a checkpoint must leave as it was."""
    index = repo / ".git" / "index"
    return {
        # (--no-optional-locks: this look itself must not refresh the user's index)
        "status": git(repo, "--no-optional-locks", "status", "--porcelain=v2", "--branch", "-uall"),
        "index": hashlib.sha256(index.read_bytes()).hexdigest() if index.exists() else "",
        "head": git(repo, "rev-parse", "HEAD"),
        "branches": git(repo, "for-each-ref", "refs/heads", "refs/tags", "refs/stash"),
        "stash": git(repo, "stash", "list"),
        "files": "\n".join(
            f"{p.relative_to(repo)}:{hashlib.sha256(p.read_bytes()).hexdigest()}"
            for p in sorted(repo.rglob("*"))
            if p.is_file() and ".git" not in p.relative_to(repo).parts
        ),
    }


def tree_files(repo_git: Path, commit: str, work_tree: Path) -> dict[str, bytes]:
    env = {**os.environ, "GIT_DIR": str(repo_git)}
    names = subprocess.run(
        ["git", "ls-tree", "-r", "-z", "--name-only", commit],
        cwd=work_tree,
        env=env,
        check=True,
        capture_output=True,
    ).stdout.split(b"\0")
    out: dict[str, bytes] = {}
    for name in filter(None, names):
        out[name.decode()] = subprocess.run(
            ["git", "cat-file", "blob", f"{commit}:{name.decode()}"],
            cwd=work_tree,
            env=env,
            check=True,
            capture_output=True,
        ).stdout
    return out


@pytest.fixture()
def repo(tmp_path: Path) -> Path:
    repo = tmp_path / "project"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    (repo / ".gitignore").write_text("*.log\nbuild/\n")
    (repo / "kept.txt").write_text("one\ntwo\n")
    (repo / "gone.txt").write_text("bye\n")
    (repo / "src").mkdir()
    (repo / "src" / "app.py").write_text("print('hi')\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "start")
    return repo


def env_for(tmp_path: Path) -> dict[str, str]:
    return {**os.environ, "SEGUE_DATA_DIR": str(tmp_path / "data"), "HOME": str(tmp_path)}


def first_snapshot(repo: Path, tmp_path: Path) -> tuple[Workspace, Snapshot]:
    """The workspace of ``repo`` and its first snapshot (``refs/segue/checkpoints/t/1``)."""
    ws = locate(repo, env_for(tmp_path))
    return ws, capture(ws, "refs/segue/checkpoints/t/1", parent=None, message="m")


def test_a_snapshot_holds_exactly_the_folder_and_touches_nothing_of_the_users(
    repo: Path, tmp_path: Path
) -> None:
    env = env_for(tmp_path)
    # the user's own state: a staged change, a stash, another branch, an untracked file
    (repo / "kept.txt").write_text("one\ntwo\nstaged\n")
    git(repo, "add", "kept.txt")
    (repo / "src" / "app.py").write_text("print('stash me')\n")
    git(repo, "stash", "-q")
    git(repo, "branch", "feature")
    (repo / "kept.txt").write_text("one\ntwo\nstaged\nunstaged\n")
    (repo / "gone.txt").unlink()
    (repo / "new.txt").write_text("new\n")
    (repo / "deep" / "er").mkdir(parents=True)
    (repo / "deep" / "er" / "x.bin").write_bytes(b"\0\1\2")
    (repo / "debug.log").write_text("ignored\n")
    (repo / "build").mkdir()
    (repo / "build" / "out.o").write_text("ignored too\n")
    os.mkfifo(repo / "a-fifo")
    (repo / "big.dat").write_bytes(b"x" * 5000)
    before = user_state(repo)

    ws = locate(repo, env)
    snap = capture(ws, "refs/segue/checkpoints/t/1", parent=None, message="m", max_bytes=4096)

    assert user_state(repo) == before
    files = tree_files(ws.git.git_dir, snap.commit, repo)
    assert files == {
        ".gitignore": b"*.log\nbuild/\n",
        "kept.txt": b"one\ntwo\nstaged\nunstaged\n",
        "src/app.py": b"print('hi')\n",
        "new.txt": b"new\n",
        "deep/er/x.bin": b"\0\1\2",
    }
    # (git never lists a FIFO: segue names it, as no file to keep)
    assert {s.path: s.reason.split(" (")[0] for s in snap.skipped} == {
        "big.dat": "over the size cap",
        "a-fifo": "a FIFO: not a file a snapshot holds",
    }
    assert snap.base == "HEAD"
    changes = {c.path: (c.status, c.added, c.removed) for c in snap.changes}
    assert changes == {
        "kept.txt": ("modified", 2, 0),
        "gone.txt": ("deleted", 0, 1),
        "new.txt": ("added", 1, 0),
        "deep/er/x.bin": ("added", None, None),
    }
    assert git(repo, "for-each-ref", "--format=%(refname)", "refs/segue") == (
        "refs/segue/checkpoints/t/1\n"
    )


def test_the_next_snapshot_counts_what_changed_since_the_one_before(
    repo: Path, tmp_path: Path
) -> None:
    ws, first = first_snapshot(repo, tmp_path)
    assert first.changes == ()
    (repo / "kept.txt").write_text("one\n2\nthree\n")
    (repo / "src" / "app.py").unlink()
    (repo / "src" / "lib.py").write_text("a\nb\n")
    second = capture(ws, "refs/segue/checkpoints/t/2", parent=first.commit, message="m")
    assert {c.path: (c.status, c.added, c.removed) for c in second.changes} == {
        "kept.txt": ("modified", 2, 1),
        "src/app.py": ("deleted", 0, 1),
        "src/lib.py": ("added", 2, 0),
    }
    assert second.base == "previous"
    parent = git(repo, "rev-parse", f"{second.commit}^")
    assert parent.strip() == first.commit
    # a file that changes back and forth is seen each time (git's stat cache is kept fresh)
    (repo / "src" / "lib.py").write_text("a\n")
    third = capture(ws, "refs/segue/checkpoints/t/3", parent=second.commit, message="m")
    assert [(c.path, c.removed) for c in third.changes] == [("src/lib.py", 1)]
    assert tree_files(ws.git.git_dir, third.commit, repo)["src/lib.py"] == b"a\n"


def test_a_subfolder_of_a_repository_is_its_own_workspace(repo: Path, tmp_path: Path) -> None:
    ws = locate(repo / "src", env_for(tmp_path))
    assert ws.prefix == "src" and not ws.private
    (repo / "src" / "app.py").write_text("print('changed')\n")
    (repo / "kept.txt").write_text("outside the workspace\n")
    snap = capture(ws, "refs/segue/checkpoints/t/1", parent=None, message="m")
    assert [(c.path, c.status) for c in snap.changes] == [("app.py", "modified")]


def test_a_folder_outside_git_gets_a_private_repository(tmp_path: Path) -> None:
    env = env_for(tmp_path)
    folder = tmp_path / "plain"
    (folder / "node_modules" / "dep").mkdir(parents=True)
    (folder / "node_modules" / "dep" / "index.js").write_text("x")
    (folder / "notes.md").write_text("# notes\n")
    ws = locate(folder, env)
    assert ws.private and str(ws.git.git_dir).startswith(str(tmp_path / "data"))
    snap = capture(ws, "refs/segue/checkpoints/t/1", parent=None, message="m")
    assert tree_files(ws.git.git_dir, snap.commit, folder) == {"notes.md": b"# notes\n"}
    assert not (folder / ".git").exists()
    assert [(c.path, c.status) for c in snap.changes] == [("notes.md", "added")]


def test_the_home_folder_and_a_gone_folder_are_refused_in_one_line(tmp_path: Path) -> None:
    env = env_for(tmp_path)
    with pytest.raises(CheckpointError, match="your home folder"):
        locate(tmp_path, env)
    with pytest.raises(CheckpointError, match="the workspace folder is gone"):
        locate(tmp_path / "nowhere", env)


def test_a_users_git_variables_do_not_redirect_a_snapshot(repo: Path, tmp_path: Path) -> None:
    other = tmp_path / "other.index"
    env = {**env_for(tmp_path), "GIT_INDEX_FILE": str(other), "GIT_DIR": str(tmp_path)}
    ws = locate(repo, env)
    capture(ws, "refs/segue/checkpoints/t/1", parent=None, message="m")
    assert not other.exists()
    assert git(repo, "for-each-ref", "--format=%(refname)", "refs/segue").strip()


def git_tree_of(repo: Path, tmp_path: Path) -> str:
    """The tree git itself makes of ``repo``'s files (not ignored), through an index of its own."""
    index = tmp_path / f"oracle-{time.monotonic_ns()}.index"
    env = {**os.environ, **GIT_ENV, "GIT_INDEX_FILE": str(index)}
    for args in (["add", "-A"], ["write-tree"]):
        done = subprocess.run(
            ["git", *args], cwd=repo, env=env, check=True, capture_output=True, text=True
        )
    return done.stdout.strip()


def fsck(repo: Path) -> None:
    done = subprocess.run(
        ["git", "fsck", "--strict", "--no-dangling", "--no-progress"],
        cwd=repo,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0 and not done.stdout.strip(), done.stdout + done.stderr


@pytest.mark.parametrize("object_format", ["sha1", "sha256"])
def test_each_snapshot_is_the_tree_git_itself_makes_of_the_folder(
    tmp_path: Path, object_format: str
) -> None:
    """Files become folders and folders files, folders empty out and go, names sort the way
    git sorts them (``a-b``, ``a.txt``, ``a/``, ``a0``), links, executables, names that are no
    UTF-8, a path 200 folders deep (and a file that becomes a folder moves past ``a-b.txt``):
    each snapshot's tree is the one git makes, and ``git fsck --strict`` finds nothing wrong
    with the repository."""
    repo = tmp_path / "project"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main", f"--object-format={object_format}")
    names = ("a-b", "a-b.txt", "a.txt", "a0", "a/x", "a/y/z", "keep/me", "dir/sub/only", "dir.c")
    for name in names:
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(f"{name}\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "start")
    ws = locate(repo, env_for(tmp_path))
    parent = None

    def snapshot(n: int) -> Snapshot:
        nonlocal parent
        snap = capture(ws, f"refs/segue/checkpoints/t/{n}", parent=parent, message="m")
        assert snap.tree == git_tree_of(repo, tmp_path), n
        parent = snap.commit
        return snap

    snapshot(1)
    (repo / "a" / "y" / "z").unlink()  # a folder emptied out
    (repo / "a" / "y").rmdir()
    (repo / "a-b").unlink()
    (repo / "a-b").mkdir()  # a file that becomes a folder
    (repo / "a-b" / "inside").write_text("in\n")
    (repo / "dir" / "sub" / "only").unlink()
    (repo / "dir" / "sub").rmdir()
    (repo / "dir").rmdir()
    (repo / "dir").write_text("a folder that became a file\n")
    (repo / "run.sh").write_text("#!/bin/sh\n")
    (repo / "run.sh").chmod(0o755)
    (repo / "link").symlink_to("a.txt")
    (repo / os.fsdecode(b"caf\xe9.txt")).write_bytes(b"latin-1 name\n")
    deep = repo.joinpath(*[f"d{n}" for n in range(200)])
    deep.mkdir(parents=True)
    (deep / "bottom.txt").write_text("deep\n")
    second = snapshot(2)
    assert {c.path: c.status for c in second.changes} == {
        "a-b": "deleted",
        "a-b/inside": "added",
        "a/y/z": "deleted",
        "dir": "added",
        "dir/sub/only": "deleted",
        "run.sh": "added",
        "link": "added",
        os.fsdecode(b"caf\xe9.txt"): "added",
        "/".join([*(f"d{n}" for n in range(200)), "bottom.txt"]): "added",
    }
    (repo / "a-b" / "inside").unlink()  # and back: the folder a file again
    (repo / "a-b").rmdir()
    (repo / "a-b").write_text("a file again\n")
    for name in ("a.txt", "a0", "a/x", "keep/me"):
        (repo / name).unlink()
    (repo / "a").rmdir()
    (repo / "keep").rmdir()
    snapshot(3)
    for name in os.listdir(repo):  # everything gone: the empty tree
        if name != ".git":
            path = repo / name
            subprocess.run(["rm", "-rf", str(path)], check=True)
    snapshot(4)
    fsck(repo)
    git(repo, "gc", "-q")  # and git's own repack takes segue's packs
    fsck(repo)


def test_a_linked_worktree_keeps_its_snapshots_in_the_main_repository(
    repo: Path, tmp_path: Path
) -> None:
    linked = tmp_path / "linked"
    git(repo, "worktree", "add", "-q", str(linked), "-b", "side")
    (linked / "kept.txt").write_text("changed in the worktree\n")
    ws = locate(linked, env_for(tmp_path))
    assert ws.objects == repo / ".git" / "objects"
    snap = capture(ws, "refs/segue/checkpoints/t/1", parent=None, message="m")
    assert snap.tree == git_tree_of(linked, tmp_path)
    assert git(repo, "cat-file", "-t", snap.commit).strip() == "commit"
    fsck(repo)


def test_the_first_snapshot_starts_from_a_copy_of_the_users_index(
    repo: Path, tmp_path: Path
) -> None:
    """(Else every tracked file is read and hashed once more: minutes on a big repository.)"""
    from segue.workspace.snapshot import _seed

    git(repo, "status")  # the user's index, its stat cache fresh
    ws = locate(repo, env_for(tmp_path))
    index = ws.git.index
    assert index is not None and not index.exists()
    _seed(ws)
    assert index.read_bytes() == (repo / ".git" / "index").read_bytes()


@pytest.mark.parametrize("mark", ["core.ignoreStat", "--assume-unchanged", "--skip-worktree"])
def test_a_file_the_user_marked_unchanged_is_still_taken_as_it_is(
    repo: Path, tmp_path: Path, mark: str
) -> None:
    """(git itself then leaves the file out of the user's ``git status``: a snapshot may not,
    or a rollback would put back what the file was.)"""
    if mark.startswith("core."):
        git(repo, "config", mark, "true")
    else:
        git(repo, "update-index", mark, "kept.txt")
    ws, first = first_snapshot(repo, tmp_path)
    (repo / "kept.txt").write_text("changed by hand\n")
    (repo / "src" / "app.py").write_text("print('changed too')\n")
    second = capture(ws, "refs/segue/checkpoints/t/2", parent=first.commit, message="m")
    assert tree_files(ws.git.git_dir, second.commit, repo)["kept.txt"] == b"changed by hand\n"
    assert {c.path for c in second.changes} >= {"src/app.py"}
    (repo / "src" / "app.py").write_text("print('and again')\n")  # (and the next one too)
    third = capture(ws, "refs/segue/checkpoints/t/3", parent=second.commit, message="m")
    assert [c.path for c in third.changes] == ["src/app.py"]


def test_a_name_git_keeps_out_of_its_trees_is_left_out_and_said(repo: Path, tmp_path: Path) -> None:
    """Names git's own ``verify_path`` refuses (as Windows would read them too), and links
    named as ``.gitmodules``, are left out with their reason; a file named ``.gitmodules`` is
    taken. ``git fsck --strict`` passes, and a name left out stays out once it is gone."""
    names = ["GIT~1", ".GIT", "sub/.Git", "x/.git.", "y/.git ", "w\\.git", "z/.GIT:stream"]
    links = [".gitmodules", "l/.GITMODULES", "m/gitmod~1"]
    for name in names:
        (repo / name).parent.mkdir(exist_ok=True)
        (repo / name).write_text("not for a tree\n")
    for name in links:
        (repo / name).parent.mkdir(exist_ok=True)
        (repo / name).symlink_to("kept.txt")
    ws, snap = first_snapshot(repo, tmp_path)
    assert {s.path: s.reason for s in snap.skipped} == dict.fromkeys(
        names + links, "a name git keeps out of its trees"
    )
    assert not set(names + links) & set(tree_files(ws.git.git_dir, snap.commit, repo))
    fsck(repo)
    (repo / ".gitmodules").unlink()
    (repo / ".gitmodules").write_text("a file of that name is one git keeps\n")
    (repo / "w\\.git").unlink()
    again = capture(ws, "refs/segue/checkpoints/t/2", parent=snap.commit, message="m")
    files = tree_files(ws.git.git_dir, again.commit, repo)
    assert files[".gitmodules"] == b"a file of that name is one git keeps\n"
    assert not set(names + links[1:]) & set(files)
    fsck(repo)


def test_a_base_left_by_an_index_that_is_gone_is_forgotten(repo: Path, tmp_path: Path) -> None:
    (repo / "new.txt").write_text("one\n")
    ws, first = first_snapshot(repo, tmp_path)
    index = ws.git.index
    assert index is not None
    index.unlink()  # (the base file beside it stays)
    (repo / "new.txt").unlink()
    second = capture(ws, "refs/segue/checkpoints/t/2", parent=first.commit, message="m")
    assert "new.txt" not in tree_files(ws.git.git_dir, second.commit, repo)
    assert second.tree == git_tree_of(repo, tmp_path)


def test_a_merge_conflict_in_the_users_index_does_not_stop_the_snapshots(
    repo: Path, tmp_path: Path
) -> None:
    git(repo, "checkout", "-q", "-b", "other")
    (repo / "kept.txt").write_text("theirs\n")
    git(repo, "commit", "-qam", "theirs")
    git(repo, "checkout", "-q", "main")
    (repo / "kept.txt").write_text("ours\n")
    git(repo, "commit", "-qam", "ours")
    merged = subprocess.run(["git", "merge", "-q", "other"], cwd=repo, capture_output=True)
    assert merged.returncode != 0  # (a conflict, as the user has it)
    before = user_state(repo)
    ws, snap = first_snapshot(repo, tmp_path)
    assert tree_files(ws.git.git_dir, snap.commit, repo)["kept.txt"].startswith(b"<<<<<<<")
    assert user_state(repo) == before


@pytest.mark.parametrize(
    "setting",
    ["core.autocrlf=yes", "core.autocrlf=1", "core.attributesFile", "attributes-staged"],
)
def test_line_endings_git_would_convert_are_kept_as_they_are(
    repo: Path, tmp_path: Path, setting: str
) -> None:
    if setting == "core.attributesFile":
        (tmp_path / "attrs").write_text("*.txt text eol=lf\n")
        git(repo, "config", "core.attributesFile", str(tmp_path / "attrs"))
    elif setting == "attributes-staged":
        (repo / "sub").mkdir()
        (repo / "sub" / ".gitattributes").write_text("*.txt text\n")
        git(repo, "add", "sub/.gitattributes")
    else:
        git(repo, "config", *setting.split("="))
    (repo / "sub").mkdir(exist_ok=True)
    (repo / "sub" / "w.txt").write_bytes(b"a\r\nb\r\n")
    git(repo, "add", "sub/w.txt")  # (git keeps it with LF: the user's index says so)
    git(repo, "commit", "-qm", "crlf")
    git(repo, "status")
    ws, snap = first_snapshot(repo, tmp_path)
    assert tree_files(ws.git.git_dir, snap.commit, repo)["sub/w.txt"] == b"a\r\nb\r\n"


def test_a_submodule_at_another_commit_is_kept_at_that_commit(repo: Path, tmp_path: Path) -> None:
    library = new_repo(tmp_path / "library", {"lib.txt": "v1\n"})
    git(repo, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(library), "lib")
    git(repo, "commit", "-qm", "the library")
    ws, first = first_snapshot(repo, tmp_path)
    (repo / "lib" / "lib.txt").write_text("v2\n")
    git(repo / "lib", "commit", "-qam", "v2")
    moved = git(repo / "lib", "rev-parse", "HEAD").strip()
    second = capture(ws, "refs/segue/checkpoints/t/2", parent=first.commit, message="m")
    assert git(repo, "rev-parse", f"{second.commit}:lib").strip() == moved
    assert second.tree == git_tree_of(repo, tmp_path)
    assert [(c.path, c.status) for c in second.changes] == [("lib", "modified")]


def test_a_file_ignored_after_a_snapshot_took_it_is_left_out_from_then_on(
    repo: Path, tmp_path: Path
) -> None:
    (repo / "node_modules" / "pkg").mkdir(parents=True)
    (repo / "node_modules" / "pkg" / "i.js").write_text("x\n")
    (repo / ".env").write_text("SECRET=1\n")
    git(repo, "add", ".env")
    git(repo, "commit", "-qm", "env")
    ws, first = first_snapshot(repo, tmp_path)
    assert {"node_modules/pkg/i.js", ".env"} <= set(tree_files(ws.git.git_dir, first.commit, repo))
    git(repo, "rm", "-q", "--cached", ".env")  # the user stops tracking it, and ignores both
    (repo / ".gitignore").write_text("*.log\nbuild/\nnode_modules/\n.env\n")
    (repo / ".env").write_text("SECRET=2\n")
    second = capture(ws, "refs/segue/checkpoints/t/2", parent=first.commit, message="m")
    files = tree_files(ws.git.git_dir, second.commit, repo)
    assert "node_modules/pkg/i.js" not in files and ".env" not in files
    assert second.tree == git_tree_of(repo, tmp_path)
    (repo / ".env").write_text("SECRET=3\n")  # (and stays out)
    third = capture(ws, "refs/segue/checkpoints/t/3", parent=second.commit, message="m")
    assert ".env" not in tree_files(ws.git.git_dir, third.commit, repo)


def test_a_repository_shared_with_a_group_gets_objects_the_group_can_read(
    repo: Path, tmp_path: Path
) -> None:
    git(repo, "config", "core.sharedRepository", "group")
    objects = repo / ".git" / "objects"
    before = {p for p in objects.rglob("*") if p.is_file()}
    old_umask = os.umask(0o077)
    try:
        (repo / "new.txt").write_text("for the group\n")
        first_snapshot(repo, tmp_path)
    finally:
        os.umask(old_umask)
    made = [p for p in objects.rglob("*") if p.is_file() and p not in before]
    assert made and all(p.stat().st_mode & 0o040 for p in made)
    ref = repo / ".git" / "refs" / "segue" / "checkpoints" / "t" / "1"
    assert ref.stat().st_mode & 0o777 == 0o660  # (git writes it: a ref as the group's)


def test_segues_refs_are_refs_git_reads_packed_or_not(repo: Path, tmp_path: Path) -> None:
    """segue's refs after the user's ``git pack-refs``: a packed ref is overridden by the next
    write, and a ref git would not write (a ref, loose or packed, is a folder on its way; its
    lock is held) fails in one line, nothing half made."""
    ws, first = first_snapshot(repo, tmp_path)
    assert git(repo, "rev-parse", "refs/segue/checkpoints/t/1").strip() == first.commit
    git(repo, "pack-refs", "--all")
    (repo / "new.txt").write_text("new\n")
    again = capture(ws, "refs/segue/checkpoints/t/1", parent=first.commit, message="m")
    assert git(repo, "rev-parse", "refs/segue/checkpoints/t/1").strip() == again.commit
    for _ in ("loose", "packed"):
        with pytest.raises(CheckpointError, match="update-ref failed"):
            capture(ws, "refs/segue/checkpoints/t/1/under", parent=again.commit, message="m")
        git(repo, "pack-refs", "--all")
        assert git(repo, "rev-parse", "refs/segue/checkpoints/t/1").strip() == again.commit
    held = repo / ".git" / "refs" / "segue" / "checkpoints" / "t" / "2.lock"
    held.write_text("")
    with pytest.raises(CheckpointError, match="update-ref failed"):
        capture(ws, "refs/segue/checkpoints/t/2", parent=again.commit, message="m")
    assert held.read_text() == ""
    assert git(repo, "for-each-ref", "--format=%(refname)", "refs/segue").split() == [
        "refs/segue/checkpoints/t/1"
    ]
    fsck(repo)


def test_segues_index_emptied_behind_its_back_is_made_again(repo: Path, tmp_path: Path) -> None:
    ws, first = first_snapshot(repo, tmp_path)
    index = ws.git.index
    assert index is not None
    index.write_bytes(b"")
    (repo / "kept.txt").write_text("changed\n")
    second = capture(ws, "refs/segue/checkpoints/t/2", parent=first.commit, message="m")
    assert second.tree == git_tree_of(repo, tmp_path)
    assert [(c.path, c.status) for c in second.changes] == [("kept.txt", "modified")]


# ------------------------------------------------------------------ with the real CLIs


def both_clis(
    standin: StandIn, tmp_path: Path
) -> tuple[Lane, CodexHome, ClaudeHome, dict[str, str]]:
    """Both CLIs in one scratch home on one lane (Claude Code's Bash tool allowed), and the
    environment segue runs them with."""
    lane = standin.lane()
    codex, claude = CodexHome(tmp_path, lane), ClaudeHome(tmp_path, lane)
    settings = claude.config_dir / "settings.json"
    settings.write_bytes(
        orjson.dumps({**orjson.loads(settings.read_bytes()), "permissions": {"allow": ["Bash"]}})
    )
    env = {
        **codex.env(),
        **claude.env(),
        "SEGUE_CLAUDE_BIN": str(claude_bin()),
        "SEGUE_CODEX_BIN": str(codex_bin()),
        "SEGUE_STATE_DIR": str(tmp_path / "state"),
        "SEGUE_DATA_DIR": str(tmp_path / "data"),
        "IS_SANDBOX": "1",
    }
    return lane, codex, claude, env


def new_repo(folder: Path, files: dict[str, str], claude: ClaudeHome | None = None) -> Path:
    """A git repository with ``files`` committed on ``main`` (trusted by ``claude``)."""
    folder.mkdir()
    git(folder, "init", "-q", "-b", "main")
    for name, text in files.items():
        (folder / name).write_text(text)
    git(folder, "add", "-A")
    git(folder, "commit", "-qm", "start")
    if claude is not None:
        claude.trust(folder)
    return folder


@pytest.mark.realcli
def test_runs_on_both_providers_leave_exact_checkpoints_of_the_files_their_shells_wrote(
    standin: StandIn, tmp_path: Path
) -> None:
    lane, codex, claude, env = both_clis(standin, tmp_path)
    repo = tmp_path / "work"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    (repo / "README").write_text("project\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "start")
    git(repo, "branch", "side")
    claude.trust(repo)

    def shell_codex(cmd: str, says: str) -> None:
        lane.script("openai", FunctionCall("exec_command", {"cmd": cmd}), CodexText(says))

    # run 1, typed into Codex itself (no hook): a.txt and b.txt
    shell_codex("printf 'a1\\na2\\n' > a.txt && printf 'b\\n' > b.txt", "made a and b")
    assert codex.exec("Make a.txt and b.txt.", cwd=repo).returncode == 0
    session = codex.only_session_id()
    before = user_state(repo)

    # run 2 through segue on Codex: change a.txt, delete b.txt
    shell_codex("printf 'a1\\nA2\\na3\\n' > a.txt && rm b.txt", "changed a, removed b")
    second = segue_json(
        ["run", "--thread", session, "Change a, remove b.", "--json"], env, cwd=repo
    )
    assert second["status"] == "completed", second
    # run 3 through segue on Claude: its Bash tool writes c.txt
    lane.script(
        "anthropic",
        ClaudeReply((ToolUse("Bash", {"command": "printf 'c\\n' > c.txt && echo done"}),)),
        ClaudeText("wrote c"),
    )
    third = segue_json(
        ["run", "--thread", second["thread"], "--provider", "claude", "Write c.", "--json"],
        env,
        cwd=repo,
    )
    assert third["status"] == "completed" and third["run"] == 3, third

    listed = segue_json(["checkpoints", second["thread"], "--json"], env, cwd=repo)
    by_run = {c["run"]: c for c in listed["checkpoints"]}
    assert [(r, by_run[r]["kind"], by_run[r]["provider"]) for r in sorted(by_run)] == [
        (1, "approximate", "codex"),  # found done before run 2: the folder as it was then
        (2, "exact", "codex"),
        (3, "exact", "claude"),
    ]
    git_dir = repo / ".git"
    assert tree_files(git_dir, by_run[1]["commit"], repo) == {
        "README": b"project\n",
        "a.txt": b"a1\na2\n",
        "b.txt": b"b\n",
    }
    assert tree_files(git_dir, by_run[2]["commit"], repo) == {
        "README": b"project\n",
        "a.txt": b"a1\nA2\na3\n",
    }
    assert tree_files(git_dir, by_run[3]["commit"], repo) == {
        "README": b"project\n",
        "a.txt": b"a1\nA2\na3\n",
        "c.txt": b"c\n",
    }
    files = {f["path"]: (f["status"], f["added"], f["removed"]) for f in by_run[2]["files"]}
    assert files == {"a.txt": ("modified", 2, 1), "b.txt": ("deleted", 0, 1)}
    assert [f["path"] for f in by_run[3]["files"]] == ["c.txt"]
    # the user's repository: the agents' files changed it, nothing else did
    after = user_state(repo)
    for key in ("index", "head", "branches", "stash"):
        assert after[key] == before[key], key
    assert git(repo, "status", "--porcelain") == "?? a.txt\n?? c.txt\n"


def _wait_for(check: Callable[[], T | None], timeout: float = 90.0) -> T:
    deadline = time.monotonic() + timeout
    while True:
        found = check()
        if found is not None:
            return found
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.2)


@pytest.mark.realcli
def test_installed_hooks_checkpoint_turns_typed_into_either_cli_and_uninstall_undoes_them(
    standin: StandIn, tmp_path: Path
) -> None:
    lane = standin.lane()
    codex, claude = CodexHome(tmp_path, lane), ClaudeHome(tmp_path, lane)
    copilot = CopilotHome(tmp_path, lane)
    segue_env = {
        "SEGUE_STATE_DIR": str(tmp_path / "state"),
        "SEGUE_DATA_DIR": str(tmp_path / "data"),
    }
    env = {**copilot.env(), **codex.env(), **claude.env(), **segue_env}
    # the user's own settings: a hook of theirs, a notify program of theirs, comments
    theirs = tmp_path / "their-notify.sh"
    theirs.write_text(f'#!/bin/sh\necho "$1" >> {tmp_path / "their-notify.log"}\n')
    theirs.chmod(0o755)
    settings = claude.config_dir / "settings.json"
    user_hook = {"matcher": "", "hooks": [{"type": "command", "command": "true # mine"}]}
    settings.write_bytes(
        orjson.dumps(
            {
                **orjson.loads(settings.read_bytes()),
                "permissions": {"allow": ["Bash"]},
                "hooks": {"Stop": [user_hook]},
            }
        )
    )
    config = codex.codex_home / "config.toml"
    config.write_text(f'# my settings\nnotify = ["{theirs}"]\n\n' + config.read_text())
    claude_before, codex_before = orjson.loads(settings.read_bytes()), config.read_bytes()

    installed = segue_json(["hooks", "install", "--json"], env)
    assert [h["changed"] for h in installed["hooks"]] == [True, True, True]
    hooked_settings, hooked_config = settings.read_bytes(), config.read_bytes()
    again = segue_json(["hooks", "install", "--json"], env)
    assert [h["changed"] for h in again["hooks"]] == [False, False, False]
    assert (settings.read_bytes(), config.read_bytes()) == (hooked_settings, hooked_config)
    assert orjson.loads(hooked_settings)["hooks"]["Stop"][0] == user_hook  # theirs kept

    # a Claude turn typed into the CLI itself: its Stop hook takes the checkpoint
    work = tmp_path / "work"
    work.mkdir()
    git(work, "init", "-q", "-b", "main")
    claude.trust(work)
    lane.script(
        "anthropic",
        ClaudeReply((ToolUse("Bash", {"command": "printf 'hooked\\n' > h.txt"}),)),
        ClaudeText("wrote h"),
    )
    assert claude.run("Write h.", cwd=work, env=segue_env).returncode == 0
    listed = segue_json(["checkpoints", "--json"], env, cwd=work)
    (only,) = listed["checkpoints"]
    assert (only["run"], only["kind"], only["provider"]) == (1, "exact", "claude")
    assert tree_files(work / ".git", only["commit"], work) == {"h.txt": b"hooked\n"}

    # a Codex turn: its notify program is segue's hook, which then runs the user's
    other = tmp_path / "other"
    other.mkdir()
    lane.script(
        "openai", FunctionCall("exec_command", {"cmd": "printf 'x\\n' > x.txt"}), CodexText("ok")
    )
    assert codex.exec("Write x.", cwd=other, env=segue_env).returncode == 0

    def codex_checkpoint() -> dict[str, Any] | None:
        done = segue(["checkpoints", "--json"], env, cwd=other)
        found = orjson.loads(done.stdout).get("checkpoints") if done.returncode == 0 else None
        return found[0] if found else None

    made = _wait_for(codex_checkpoint)
    assert (made["kind"], made["provider"], made["private_repository"]) == ("exact", "codex", True)
    assert [f["path"] for f in made["files"]] == ["x.txt"]
    logged = _wait_for(lambda: (tmp_path / "their-notify.log").read_text() or None)
    assert '"type":"agent-turn-complete"' in logged

    # a Copilot turn: its agentStop hook (segue's own hooks file) takes the checkpoint
    third = tmp_path / "third"
    third.mkdir()
    git(third, "init", "-q", "-b", "main")
    lane.script(
        "anthropic",
        ClaudeReply((ToolUse("bash", {"command": "printf 'c\\n' > c.txt", "description": "c"}),)),
        ClaudeText("wrote c"),
    )
    assert copilot.run("Write c.", cwd=third, env=segue_env).returncode == 0

    def copilot_checkpoint() -> dict[str, Any] | None:
        done = segue(["checkpoints", "--json"], env, cwd=third)
        found = orjson.loads(done.stdout).get("checkpoints") if done.returncode == 0 else None
        return found[0] if found else None

    made = _wait_for(copilot_checkpoint)
    assert (made["kind"], made["provider"]) == ("exact", "copilot")
    assert tree_files(third / ".git", made["commit"], third) == {"c.txt": b"c\n"}

    # (Claude Code wrote settings of its own meanwhile: they stay too)
    now = orjson.loads(settings.read_bytes())
    removed = segue_json(["hooks", "uninstall", "--json"], env)
    assert [h["changed"] for h in removed["hooks"]] == [True, True, True]
    assert not (copilot.copilot_home / "hooks" / "segue.json").exists()
    assert orjson.loads(settings.read_bytes()) == {**now, "hooks": claude_before["hooks"]}
    assert config.read_bytes() == codex_before


@pytest.mark.realcli
def test_a_claude_turn_ended_by_a_usage_limit_leaves_the_signal_for_watch(
    standin: StandIn, tmp_path: Path
) -> None:
    lane = standin.lane()
    claude = ClaudeHome(tmp_path, lane, oauth=True)
    segue_env = {"SEGUE_STATE_DIR": str(tmp_path / "state"), "SEGUE_DATA_DIR": str(tmp_path / "d")}
    env = {**claude.env(), **segue_env}
    segue_json(["hooks", "install", "--provider", "claude", "--json"], env)
    work = tmp_path / "work"
    work.mkdir()
    lane.script("anthropic", RateLimited(subscriber=True))
    assert claude.run("Go on.", cwd=work, env=segue_env).returncode != 0
    signals = tmp_path / "state" / "signals.jsonl"  # (StopFailure's hook is fire and forget)
    (signal,) = _wait_for(
        lambda: (
            [orjson.loads(line) for line in signals.read_text().splitlines()]
            if signals.exists()
            else None
        )
    )
    assert (signal["provider"], signal["kind"], signal["detail"]) == (
        "claude",
        "limit",
        "StopFailure: rate_limit",
    )
    assert signal["session"] == claude.only_session_id() and "limit" in signal["message"]


def test_a_snapshot_after_segues_refs_were_deleted_and_collected_starts_afresh(
    repo: Path, tmp_path: Path
) -> None:
    env = env_for(tmp_path)
    ws = locate(repo, env)
    (repo / "new.txt").write_text("one\n")
    first = capture(ws, "refs/segue/checkpoints/t/1", parent=None, message="m")
    git(repo, "update-ref", "-d", "refs/segue/checkpoints/t/1")
    git(repo, "gc", "-q", "--prune=now")
    (repo / "new.txt").write_text("two\n")
    again = capture(ws, "refs/segue/checkpoints/t/2", parent=first.commit, message="m")
    assert again.base == "HEAD"  # the snapshot before it is gone: counted against HEAD
    assert tree_files(ws.git.git_dir, again.commit, repo)["new.txt"] == b"two\n"
    # git fast-import's report of the commit it could not find is not left in the user's .git
    assert not list((repo / ".git").glob("fast_import_crash_*"))


def test_a_snapshot_killed_with_the_index_ahead_of_its_objects_loses_no_change(
    repo: Path, tmp_path: Path
) -> None:
    ws, first = first_snapshot(repo, tmp_path)
    (repo / "kept.txt").write_text("changed\n")
    # killed after segue's index took the new blob (update-index runs beside fast-import) but
    # before fast-import wrote it: the index says kept.txt is as on disk, and no object holds it
    index = ws.git.index
    assert index is not None
    blob = hashlib.sha1(b"blob 8\0changed\n").hexdigest()
    ws.git.run(
        ["update-index", "-z", "--index-info"], stdin=b"100644 %s\tkept.txt\0" % blob.encode()
    )
    index.with_name(index.name + ".lock").write_bytes(b"")  # and a git killed holding its lock
    second = capture(ws, "refs/segue/checkpoints/t/2", parent=first.commit, message="m")
    assert tree_files(ws.git.git_dir, second.commit, repo)["kept.txt"] == b"changed\n"
    assert [(c.path, c.status) for c in second.changes] == [("kept.txt", "modified")]
    (repo / "kept.txt").write_text("again\n")  # and the one after it still sees changes
    third = capture(ws, "refs/segue/checkpoints/t/3", parent=second.commit, message="m")
    assert [(c.path, c.added, c.removed) for c in third.changes] == [("kept.txt", 1, 1)]


@pytest.mark.parametrize("value", ["inf", "1e400", "nan", "garbage", "-5", ""])
def test_a_size_cap_that_is_no_number_is_the_default(value: str) -> None:
    from segue.workspace.snapshot import DEFAULT_MAX_FILE, max_file_bytes

    assert max_file_bytes({"SEGUE_CHECKPOINT_MAX_FILE": value}) == DEFAULT_MAX_FILE
    assert max_file_bytes({"SEGUE_CHECKPOINT_MAX_FILE": "2K"}) == 2048


def test_a_git_that_outlives_its_capture_keeps_the_workspace_locked(
    repo: Path, tmp_path: Path
) -> None:
    """segue killed with its update-index still writing segue's index: the next capture must
    wait for that git, never run beside it (a killed segue's own lock goes with it)."""
    import fcntl

    ws = locate(repo, env_for(tmp_path))
    capture(ws, "refs/segue/checkpoints/t/1", parent=None, message="m")
    index = ws.git.index
    assert index is not None
    lock = f"{index}.segue-lock"

    def free() -> bool:
        probe = os.open(lock, os.O_RDWR)
        try:
            fcntl.flock(probe, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            return False
        finally:
            os.close(probe)

    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)  # (a git that reads it waits for its writer)
    holding = (
        "import os, sys\nfrom segue.workspace import locate\n"
        "from segue.workspace.git import locked\nws = locate(sys.argv[1], os.environ)\n"
        "with locked(ws.index):\n"
        "    ws.git.run(['hash-object', '--stdin-paths'], stdin=sys.argv[2].encode() + b'\\n')\n"
    )
    segue_side = subprocess.Popen(
        [sys.executable, "-c", holding, str(repo), str(fifo)], env=env_for(tmp_path)
    )
    deadline = time.monotonic() + 30
    while True:  # (until the git started under the lock opens the FIFO)
        try:
            writer = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
            break
        except OSError:
            assert time.monotonic() < deadline and segue_side.poll() is None
            time.sleep(0.02)
    segue_side.kill()  # (segue killed: its descriptor is closed; its git still holds the lock)
    segue_side.wait()
    assert not free()
    os.close(writer)  # (the git reads to the end and ends)
    while not free():
        assert time.monotonic() < deadline
        time.sleep(0.02)


def test_a_link_is_taken_as_its_target_and_a_fifo_is_left_out_without_waiting(
    repo: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("not the workspace's\n")
    (repo / "link").symlink_to(outside)
    (repo / "kept.txt").unlink()
    os.mkfifo(repo / "kept.txt")  # (a tracked file become a FIFO: never read, never waited on)
    (repo / "run.sh").write_text("echo\n")
    (repo / "run.sh").chmod(0o755)
    os.mkfifo(repo / "src" / "pipe")  # (an untracked one: git lists none; segue names it)
    ws, snap = first_snapshot(repo, tmp_path)
    entries = git(repo, "ls-tree", "-r", snap.commit).splitlines()
    modes = {line.split("\t")[1]: line.split()[0] for line in entries}
    assert modes["link"] == "120000" and modes["run.sh"] == "100755"
    assert "kept.txt" not in modes
    assert tree_files(ws.git.git_dir, snap.commit, repo)["link"] == os.fsencode(str(outside))
    skipped = {s.path: s.reason for s in snap.skipped}
    assert skipped["kept.txt"] == skipped["src/pipe"] == "a FIFO: not a file a snapshot holds"
    (repo / "later").mkdir()
    os.mkfifo(repo / "later" / "fifo")  # (and one made after, in a folder of its own)
    (repo / "later" / "f.txt").write_text("f\n")
    again = capture(ws, "refs/segue/checkpoints/t/2", parent=snap.commit, message="m")
    assert {s.path for s in again.skipped} >= {"kept.txt", "src/pipe", "later/fifo"}


def test_a_users_split_index_setting_puts_nothing_of_segues_in_their_git_folder(
    repo: Path, tmp_path: Path
) -> None:
    for n in range(20):
        (repo / f"f{n}.txt").write_text(f"{n}\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "more")
    git(repo, "config", "core.splitIndex", "true")
    git(repo, "status")  # the user's own index, split as they asked
    before = set(os.listdir(repo / ".git"))
    ws = locate(repo, env_for(tmp_path))
    parent = None
    for round_ in range(4):  # (enough change each time for git to write a new shared index)
        for n in range(20):
            (repo / f"f{n}.txt").write_text(f"{n} in round {round_}\n")
        (repo / f"new{round_}.txt").write_text("new\n")
        ref = f"refs/segue/checkpoints/t/{round_}"
        parent = capture(ws, ref, parent=parent, message="m").commit
    assert set(os.listdir(repo / ".git")) == before


def test_the_hook_claude_code_waits_for_loads_no_command_line_app(tmp_path: Path) -> None:
    """Claude Code waits for its Stop hook after every turn: ``python -m segue hook`` goes to
    the hook straight, without the command line's app and its parser."""
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "segue", "hook", "claude"],
        input=b"{}",
        env=env_for(tmp_path),
        capture_output=True,
        timeout=60,
    )
    assert done.returncode == 0 and done.stdout == b""
    loaded = {
        line.rsplit("|", 1)[-1].strip()
        for line in done.stderr.decode().splitlines()
        if line.startswith("import time:")
    }
    assert "segue.cli.hook" in loaded
    assert "segue.cli.app" not in loaded and "argparse" not in loaded
    assert "sqlalchemy" not in loaded  # the store's queries go through sqlite3 itself


def test_the_lines_counted_in_the_listing_are_the_ones_git_counts_between_the_trees(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where the snapshot before is the one segue's index holds, the +/- come from the listing
    and segue's own count of a new file's lines, with no diff-tree after; in every round they
    are exactly what ``git diff-tree --numstat`` says between the two trees. A round git must
    count (a link, a folder become a file, a large new file, attributes set anywhere, a big-file
    threshold of the user's) is still right, and so is a file become a folder, counted here."""
    ws, first = first_snapshot(repo, tmp_path)
    (repo / "lib").mkdir()

    def folder_for_a_file() -> None:
        (repo / "lib" / "a.txt").unlink()
        (repo / "lib" / "a.txt").mkdir()
        (repo / "lib" / "a.txt" / "in.txt").write_text("in\n")

    def file_for_a_folder() -> None:
        (repo / "lib" / "a.txt" / "in.txt").unlink()
        (repo / "lib" / "a.txt").rmdir()
        (repo / "lib" / "a.txt").write_text("a file again\n")

    rounds: list[tuple[Callable[[], object], bool]] = [
        (lambda: (repo / "kept.txt").write_text("one\ntwo\nthree\n"), True),
        (lambda: (repo / "lib" / "a.txt").write_text("a\nb"), True),  # no newline at the end
        (lambda: (repo / "lib" / "a.txt").write_text("a\nb\n"), True),
        (lambda: (repo / "empty.txt").write_bytes(b""), True),
        (lambda: (repo / "bin.dat").write_bytes(b"\0\1\2" * 100), True),
        (lambda: (repo / "bin.dat").write_bytes(b"\0\1\2" * 99 + b"x\n"), True),
        (lambda: (repo / "crlf.txt").write_bytes(b"one\r\ntwo\r\n"), True),
        (lambda: (repo / "crlf.txt").write_bytes(b"one\ntwo\r\n"), True),
        (lambda: (repo / "lib" / "a.txt").chmod(0o755), True),
        (lambda: (repo / "kept.txt").unlink(), True),
        (lambda: (repo / "new" / "deep").mkdir(parents=True), True),
        (lambda: (repo / "new" / "deep" / "f.py").write_text("x = 1\n" * 50), True),
        (lambda: (repo / "new" / "deeper").mkdir(), True),
        (lambda: (repo / "new" / "deeper" / "g.py").write_text("y = 2\n"), True),  # (under new)
        (lambda: (repo / "link").symlink_to("lib/a.txt"), False),
        (folder_for_a_file, True),  # (the file's removal is listed before the folder's files)
        (file_for_a_folder, False),
        (lambda: (repo / "big.txt").write_text("line\n" * 60_000), False),
        (lambda: (repo / ".gitattributes").write_text("*.dat binary\n"), False),
        (lambda: (repo / "more.dat").write_text("text, but binary by its attributes\n"), False),
        (lambda: (repo / ".gitattributes").unlink(), False),
        (lambda: git(repo, "config", "core.bigFileThreshold", "1k"), False),
        (lambda: (repo / "over.txt").write_text("a line\n" * 400), False),  # (binary to git)
        (lambda: git(repo, "config", "--unset", "core.bigFileThreshold"), False),
        (lambda: (repo / ".git" / "info" / "attributes").write_text("*.txt -diff\n"), False),
        (lambda: (repo / "after.txt").write_text("binary by the repository's attributes\n"), False),
    ]
    previous = first
    for n, (act, _counted_here) in enumerate(rounds, start=2):
        act()
        time.sleep(0.06)  # (a file changed as the folder is listed is left to git to count)
        snap = capture(ws, f"refs/segue/checkpoints/t/{n}", parent=previous.commit, message="m")
        assert snap.tree == git_tree_of(repo, tmp_path), n
        numstat = git(
            repo, "diff-tree", "-r", "--numstat", "--no-renames", previous.tree, snap.tree
        )
        counted = {
            path: (int(a) if a != "-" else None, int(r) if r != "-" else None)
            for a, r, path in (line.split("\t", 2) for line in numstat.splitlines())
        }
        assert {c.path: (c.added, c.removed) for c in snap.changes} == counted, n
        previous = snap


def test_a_file_changed_as_the_folder_is_listed_is_counted_as_it_was_taken(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """git counts the lines of the tracked files as it lists them; a file that changes after
    (an agent still writing) is taken as it is when read, and counted as taken, not as git saw
    it: changed again, or deleted."""
    import segue.workspace.snapshot as snapshot

    ws, first = first_snapshot(repo, tmp_path)
    (repo / "kept.txt").write_text("one\ntwo\nthree\n")
    (repo / "gone.txt").write_text("will go\n")
    git(repo, "add", "gone.txt")
    git(repo, "commit", "-qm", "more")
    second = capture(ws, "refs/segue/checkpoints/t/2", parent=first.commit, message="m")
    time.sleep(0.06)
    (repo / "kept.txt").write_text("one\ntwo\nthree\nfour\n")
    (repo / "gone.txt").write_text("will go\nsoon\n")
    time.sleep(0.06)
    screen = snapshot.screen

    def meanwhile(*args: Any, **kwargs: Any) -> Any:
        (repo / "kept.txt").write_text("one\ntwo\nthree\nfour\nfive\nsix\n")
        (repo / "gone.txt").unlink()
        return screen(*args, **kwargs)

    monkeypatch.setattr(snapshot, "screen", meanwhile)
    third = capture(ws, "refs/segue/checkpoints/t/3", parent=second.commit, message="m")
    assert third.tree == git_tree_of(repo, tmp_path)
    assert third.changes == changes_between(ws, second.tree, third.tree)
    assert [(c.path, c.status, c.added, c.removed) for c in third.changes] == [
        ("gone.txt", "deleted", 0, 1),
        ("kept.txt", "modified", 3, 0),
    ]
