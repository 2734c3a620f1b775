"""Putting a workspace back to a snapshot on real git: byte for byte, what was created since
removed and what was deleted recreated, ignored and oversized files never touched, the user's
index, HEAD, branches and stash untouched, and the folder before it kept to go back to."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from segue.workspace import Snapshot, Workspace, capture, locate
from segue.workspace.restore import Restored, preview, restore
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


def _cycle(ws: Workspace, repo: Path, at: Snapshot, n: int) -> tuple[Snapshot, Restored]:
    """A safety snapshot, then the folder put back to ``at`` (as a rollback does)."""
    safety = capture(ws, f"refs/segue/safety/t/{n}", parent=at.commit, message="m")
    return safety, restore(ws, at.commit, safety.commit, keep=(*safety.skipped, *at.skipped))


def test_a_file_changed_while_the_restore_runs_is_left_as_it_is(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """(The plan checks each file against the safety snapshot; an editor's save after that,
    before its file is written, was overwritten and in no snapshot.)"""
    import segue.workspace.restore as restoring

    ws = locate(repo, env_for(tmp_path))
    at_n = capture(ws, "refs/segue/checkpoints/t/1", parent=None, message="m")
    (repo / "kept.txt").write_text("the agent's\n")
    (repo / "made.txt").write_text("made by the agent\n")
    (repo / "gone.txt").unlink()
    blobs = restoring._blobs

    def meanwhile(*args: Any) -> Any:
        (repo / "kept.txt").write_text("EDITOR SAVE\n")  # (after the plan, before the writes)
        (repo / "made.txt").write_text("EDITOR SAVE too\n")
        (repo / "gone.txt").write_text("made again by hand\n")
        return blobs(*args)

    monkeypatch.setattr(restoring, "_blobs", meanwhile)
    _, done = _cycle(ws, repo, at_n, 1)
    assert (repo / "kept.txt").read_text() == "EDITOR SAVE\n"
    assert (repo / "made.txt").read_text() == "EDITOR SAVE too\n"
    assert (repo / "gone.txt").read_text() == "made again by hand\n"
    assert {s.path: s.reason for s in done.left} == {
        "kept.txt": "changed during the restore",
        "made.txt": "changed during the restore",
        "gone.txt": "made during the restore",
    }


def test_long_names_a_file_become_a_folder_and_permissions_come_back_with_the_undo(
    repo: Path, tmp_path: Path
) -> None:
    ws = locate(repo, env_for(tmp_path))
    long = "l" + "x" * 250
    (repo / long).write_text("a long name\n")
    (repo / "P").write_text("P is a file\n")
    (repo / ".env").write_text("SECRET=1\n")
    (repo / ".env").chmod(0o600)
    at_n = capture(ws, "refs/segue/checkpoints/t/1", parent=None, message="m")
    (repo / long).write_text("edited later\n")
    (repo / "P").unlink()
    (repo / "P").mkdir()
    (repo / "P" / "x").write_text("in the folder\n")
    (repo / ".env").unlink()
    (repo / ".env").write_text("SECRET=2\n")
    (repo / ".env").chmod(0o600)
    before = files_of(repo)
    safety, done = _cycle(ws, repo, at_n, 1)
    assert done.failed == ()
    assert (repo / long).read_text() == "a long name\n"
    assert (repo / "P").read_text() == "P is a file\n"  # (the folder emptied, then the file)
    assert (repo / ".env").stat().st_mode & 0o777 == 0o600  # (overwritten: its bits kept)
    again = capture(ws, "refs/segue/safety/t/2", parent=safety.commit, message="m")
    undone = restore(ws, safety.commit, again.commit, keep=(*again.skipped, *safety.skipped))
    assert undone.failed == () and files_of(repo) == before
    assert (repo / ".env").stat().st_mode & 0o777 == 0o600
    (repo / ".env").unlink()  # removed by a rollback, recreated by its undo: 0600 still
    third = capture(ws, "refs/segue/safety/t/3", parent=again.commit, message="m")
    restore(ws, at_n.commit, third.commit, keep=third.skipped)
    fourth = capture(ws, "refs/segue/safety/t/4", parent=third.commit, message="m")
    restore(ws, third.commit, fourth.commit, keep=fourth.skipped)
    assert not (repo / ".env").exists()
    (repo / ".env").write_text("SECRET=3\n")
    (repo / ".env").chmod(0o600)
    fifth = capture(ws, "refs/segue/safety/t/5", parent=fourth.commit, message="m")
    (repo / "extra.txt").write_text("x\n")
    sixth = capture(ws, "refs/segue/safety/t/6", parent=fifth.commit, message="m")
    restore(ws, at_n.commit, sixth.commit, keep=sixth.skipped)  # (.env overwritten: 0600)
    seventh = capture(ws, "refs/segue/safety/t/7", parent=sixth.commit, message="m")
    (repo / ".env").unlink()
    eighth = capture(ws, "refs/segue/safety/t/8", parent=seventh.commit, message="m")
    restore(ws, sixth.commit, eighth.commit, keep=eighth.skipped)  # (recreated from 6)
    assert (repo / ".env").stat().st_mode & 0o777 == 0o600


def test_a_folder_become_a_link_blocks_nothing_and_nothing_is_written_through_it(
    repo: Path, tmp_path: Path
) -> None:
    ws = locate(repo, env_for(tmp_path))
    (repo / "conf").mkdir()
    (repo / "conf" / "app.ini").write_text("a=1\n")
    at_n = capture(ws, "refs/segue/checkpoints/t/1", parent=None, message="m")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "app.ini").write_text("not the workspace's\n")
    (repo / "conf" / "app.ini").unlink()
    (repo / "conf").rmdir()
    (repo / "conf").symlink_to(outside)
    (repo / "kept.txt").write_text("changed\n")
    shown, _left = preview(ws, at_n.commit)  # (git check-ignore refused the path before)
    assert {(a.path, a.action) for a in shown} >= {
        ("kept.txt", "restore"),
        ("conf", "remove"),  # (the link, made after the snapshot)
        ("conf/app.ini", "recreate"),  # (in a real folder, once the link is gone)
    }
    _, done = _cycle(ws, repo, at_n, 1)
    assert done.failed == ()
    assert (outside / "app.ini").read_text() == "not the workspace's\n"
    assert not (repo / "conf").is_symlink() and (repo / "conf" / "app.ini").read_text() == "a=1\n"
    assert (repo / "kept.txt").read_text() == "one\ntwo\n"


def test_a_file_ignored_through_the_repositorys_exclude_file_leaves_the_snapshots(
    repo: Path, tmp_path: Path
) -> None:
    ws = locate(repo, env_for(tmp_path))
    (repo / "config.local").write_text("harmless\n")
    first = capture(ws, "refs/segue/checkpoints/t/1", parent=None, message="m")
    (repo / ".git" / "info" / "exclude").write_text("config.local\n")
    (repo / "config.local").write_text("password=hunter2\n")
    second = capture(ws, "refs/segue/checkpoints/t/2", parent=first.commit, message="m")
    assert "config.local" not in git(repo, "ls-tree", "-r", "--name-only", second.commit)


def test_an_empty_folder_a_rollback_wrote_into_is_there_after_its_undo(
    repo: Path, tmp_path: Path
) -> None:
    """(Found by the property test: the undo took out what the rollback wrote, then the folder
    it had left empty, which was there before.)"""
    ws = locate(repo, env_for(tmp_path))
    (repo / "d").mkdir()
    (repo / "d" / "c.txt").write_text("one\n")
    at_n = capture(ws, "refs/segue/checkpoints/t/1", parent=None, message="m")
    (repo / "d" / "c.txt").unlink()
    (repo / "d").chmod(0o700)
    before = files_of(repo)
    safety, _ = _cycle(ws, repo, at_n, 1)
    assert (repo / "d" / "c.txt").read_text() == "one\n"
    again = capture(ws, "refs/segue/safety/t/2", parent=safety.commit, message="m")
    restore(ws, safety.commit, again.commit, keep=again.skipped)
    assert files_of(repo) == before and (repo / "d").is_dir()
    assert not any((repo / "d").iterdir())
