"""Putting a workspace back to a snapshot on real git: byte for byte, what was created since
removed and what was deleted recreated, ignored and oversized files never touched, the user's
index, HEAD, branches and stash untouched, and the folder before it kept to go back to."""

from __future__ import annotations

import os
from pathlib import Path

from segue.workspace import capture, locate
from segue.workspace.restore import preview, restore
from tests.test_checkpoints import env_for, git, repo, user_state

__all__ = ["repo"]  # the fixture, shared


def files_of(folder: Path) -> dict[str, bytes | str]:
    out: dict[str, bytes | str] = {}
    for path in sorted(folder.rglob("*")):
        rel = path.relative_to(folder)
        if ".git" in rel.parts:
            continue
        if path.is_symlink():
            out[str(rel)] = "-> " + os.readlink(path)
        elif path.is_file():
            mode = "x" if os.access(path, os.X_OK) else ""
            out[str(rel) + mode] = path.read_bytes()
    return out


def test_a_folder_goes_back_byte_for_byte_and_the_safety_snapshot_undoes_it(
    repo: Path, tmp_path: Path
) -> None:
    env = env_for(tmp_path)
    ws = locate(repo, env)
    (repo / "tool.sh").write_text("#!/bin/sh\necho hi\n")
    (repo / "tool.sh").chmod(0o755)
    (repo / "link").symlink_to("kept.txt")
    (repo / "crlf.txt").write_bytes(b"one\r\ntwo\r\n")
    at_n = capture(ws, "refs/segue/checkpoints/t/1", parent=None, message="m")
    wanted = files_of(repo)
    user = {k: v for k, v in user_state(repo).items() if k not in ("files", "status")}

    # later work: changed, created (in a new folder too), deleted, plus an ignored file and one
    # too big for a snapshot, which a rollback must never touch
    (repo / "kept.txt").write_text("rewritten\n")
    (repo / "tool.sh").chmod(0o644)
    (repo / "gone.txt").unlink()
    (repo / "link").unlink()
    (repo / "link").write_text("now a file\n")
    (repo / "new" / "deep").mkdir(parents=True)
    (repo / "new" / "deep" / "made.txt").write_text("made later\n")
    (repo / "debug.log").write_text("ignored\n")
    (repo / "huge.bin").write_bytes(b"h" * 5000)
    later = files_of(repo)

    shown, left = preview(ws, at_n.commit, max_bytes=4096)
    safety = capture(ws, "refs/segue/safety/t/1", parent=at_n.commit, message="m", max_bytes=4096)
    done = restore(ws, at_n.commit, safety.commit, keep=safety.skipped)

    assert done.failed == ()
    assert sorted((a.path, a.action) for a in done.done) == [
        ("gone.txt", "recreate"),
        ("kept.txt", "restore"),
        ("link", "restore"),
        ("new/deep/made.txt", "remove"),
        ("tool.sh", "restore"),
    ]
    assert [(s.path, s.reason.split(" (")[0]) for s in done.left] == []
    assert {(a.path, a.action) for a in shown} == {(a.path, a.action) for a in done.done}
    assert [s.path for s in left] == ["huge.bin"]
    after = files_of(repo)
    assert after == {**wanted, "debug.log": b"ignored\n", "huge.bin": b"h" * 5000}
    assert not (repo / "new").exists()  # the folders the removal emptied go too
    assert {k: v for k, v in user_state(repo).items() if k not in ("files", "status")} == user

    # undo: back to the folder as it was before the rollback
    again = capture(ws, "refs/segue/safety/t/2", parent=safety.commit, message="m")
    # (the cap differs now: what the target snapshot could not hold is still never removed)
    undone = restore(ws, safety.commit, again.commit, keep=(*again.skipped, *safety.skipped))
    assert undone.failed == ()
    assert files_of(repo) == later


def test_nothing_outside_the_workspace_is_written_through_a_link(
    repo: Path, tmp_path: Path
) -> None:
    env = env_for(tmp_path)
    outside = tmp_path / "outside"
    outside.mkdir()
    (repo / "lib").mkdir()
    (repo / "lib" / "x.txt").write_text("x\n")
    ws = locate(repo, env)
    snap = capture(ws, "refs/segue/checkpoints/t/1", parent=None, message="m")
    (repo / "lib" / "x.txt").unlink()
    (repo / "lib").rmdir()
    (repo / "lib").symlink_to(outside)
    now = capture(ws, "refs/segue/safety/t/1", parent=snap.commit, message="m")
    done = restore(ws, snap.commit, now.commit, keep=now.skipped)
    # the link is removed (it came after the snapshot), and x.txt written into a real folder
    assert list(outside.iterdir()) == []
    assert done.failed == ()
    assert not (repo / "lib").is_symlink() and (repo / "lib" / "x.txt").read_text() == "x\n"


def test_a_file_git_filters_on_its_way_in_comes_back_as_its_own_bytes(
    repo: Path, tmp_path: Path
) -> None:
    # a clean filter that stores a pointer (as Git LFS does) and line-ending conversion
    git(repo, "config", "filter.pointer.clean", "echo POINTER; cat >/dev/null")
    git(repo, "config", "filter.pointer.smudge", "cat")
    (repo / ".gitattributes").write_text("*.bin filter=pointer\n*.txt text eol=lf\n")
    (repo / "model.bin").write_text("the real weights\n")
    (repo / "crlf.txt").write_bytes(b"one\r\ntwo\r\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "filtered")
    ws = locate(repo, env_for(tmp_path))
    at_n = capture(ws, "refs/segue/checkpoints/t/1", parent=None, message="m")
    wanted = files_of(repo)
    (repo / "model.bin").write_text("changed by the agent\n")
    (repo / "crlf.txt").write_bytes(b"other\n")
    now = capture(ws, "refs/segue/safety/t/1", parent=at_n.commit, message="m")
    done = restore(ws, at_n.commit, now.commit, keep=now.skipped)
    assert done.failed == ()
    assert files_of(repo) == wanted  # the real bytes, not the pointer, CRLF kept
