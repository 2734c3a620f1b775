"""Putting a workspace back to a snapshot, byte for byte, through segue's own plumbing (never
``git checkout``, ``reset``, ``stash`` or ``clean``: the user's index, HEAD and branches are not
touched).

:func:`preview` says what would change, reading only: files restored (their bytes differ),
removed (created since the snapshot) and recreated (deleted since). :func:`restore` does it,
given the snapshot of the folder as it is now (the safety snapshot a rollback takes first, so
that it can be undone): removals first, deepest first, then each file written beside itself and
renamed into place with its mode. What a snapshot cannot hold is never removed or overwritten:
an ignored file, a file over the size cap, a folder that is a repository of its own, a special
file; it is reported as left as it is.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterable
from pathlib import Path

import msgspec

from segue.model.errors import CheckpointError
from segue.workspace.changes import Skipped
from segue.workspace.snapshot import (
    Workspace,
    _listing,
    _locked,
    _screen,
    blob_id,
    file_entry,
    max_file_bytes,
)

__all__ = ["FileAction", "Restored", "add_worktree", "materialize", "preview", "restore"]


class FileAction(msgspec.Struct, frozen=True):
    path: str  # relative to the workspace folder
    action: str  # restore / remove / recreate


class Restored(msgspec.Struct, frozen=True):
    done: tuple[FileAction, ...]
    failed: tuple[Skipped, ...]  # what could not be done, and why
    left: tuple[Skipped, ...]  # what was left as it is, and why


class _Entry(msgspec.Struct, frozen=True):
    mode: str
    sha: str


def _tree_entries(ws: Workspace, old: str, new: str) -> dict[str, tuple[str, _Entry]]:
    """Each path that differs from tree-ish ``old`` to ``new``: its status letter and its
    entry in ``new`` (mode ``000000`` when it is not there)."""
    out = ws.git.run(["diff-tree", "-r", "-z", "--raw", "--no-renames", old, new, *ws.pathspec()])
    return _raw(out.stdout)


def _index_against(ws: Workspace, target: str) -> dict[str, tuple[str, _Entry]]:
    """:func:`_tree_entries` from segue's index to ``target``, reading only."""
    out = ws.git.run(
        ["diff-index", "--cached", "-R", "-r", "-z", "--raw", "--no-renames", target,
         *ws.pathspec()]
    )  # fmt: skip
    return _raw(out.stdout)


def _raw(output: bytes) -> dict[str, tuple[str, _Entry]]:
    parts = output.split(b"\0")
    found: dict[str, tuple[str, _Entry]] = {}
    i = 0
    while i + 1 < len(parts):
        head = parts[i]
        if not head.startswith(b":"):
            i += 1
            continue
        fields = head[1:].decode().split()
        path = parts[i + 1].decode("utf-8", "surrogateescape")
        found[path] = (fields[4][:1], _Entry(fields[1], fields[3]))
        i += 2
    return found


def preview(
    ws: Workspace,
    target: str,
    *,
    max_bytes: int | None = None,
    left_out: Iterable[Skipped] = (),
) -> tuple[list[FileAction], list[Skipped]]:
    """What putting the folder back to the snapshot ``target`` (a commit) would do, read from
    the folder as it is now; nothing is written (not even segue's own index)."""
    index = ws.git.index
    assert index is not None
    if not index.exists():
        raise CheckpointError(f"{ws.folder}: no snapshot of this folder has been taken here")
    with _locked(index):
        listing = _listing(ws)
        changed = _index_against(ws, target)  # what the folder held at the last snapshot
    cap = max_file_bytes(ws.git.env) if max_bytes is None else max_bytes
    take, skipped = _screen(ws, listing, cap)
    seen = {s.path for s in skipped}
    skipped += [s for s in left_out if s.path not in seen]  # what the target could not hold
    keep = {ws.git.work_tree / (f"{ws.prefix}/{s.path}" if ws.prefix else s.path) for s in skipped}
    top = ws.git.work_tree
    actions: dict[str, str] = {}
    for path, (letter, _entry) in changed.items():
        actions[path] = {"A": "recreate", "D": "remove"}.get(letter, "restore")
    listed = set(take)
    if listed:
        wanted = _entries_at(ws, target, listed)
        for path in listed:
            try:
                now = file_entry(top / path)
            except OSError:
                now = None
            entry = wanted.get(path)
            if entry is None:
                if now is not None:
                    actions[path] = "remove"
                else:
                    actions.pop(path, None)
            elif now is None:
                actions[path] = "recreate"
            elif blob_id(now[1], target) != entry.sha or now[0] != entry.mode:
                actions[path] = "restore"
            else:
                actions.pop(path, None)
    left = list(skipped)
    result = [
        FileAction(ws.relative(p), a) for p, a in sorted(actions.items()) if top / p not in keep
    ]
    return result, left


def _entries_at(ws: Workspace, commit: str, paths: Iterable[str]) -> dict[str, _Entry]:
    names = sorted(paths)
    out = ws.git.run(
        ["ls-tree", "-z", "--full-tree", commit, "--", *names] if names else ["ls-tree", commit]
    ).stdout
    found: dict[str, _Entry] = {}
    for record in out.split(b"\0"):
        if not record:
            continue
        meta, _, name = record.partition(b"\t")
        mode, _kind, sha = meta.decode().split()
        found[name.decode("utf-8", "surrogateescape")] = _Entry(mode, sha)
    return found


def restore(ws: Workspace, target: str, current: str, *, keep: Iterable[Skipped] = ()) -> Restored:
    """Make the folder hold exactly the snapshot ``target``, given ``current``, a snapshot of the
    folder taken just now (its commit); the paths of ``keep`` (what either snapshot could not
    hold: pass both lists) are left as they are."""
    index = ws.git.index
    assert index is not None
    top = ws.git.work_tree
    folder = os.path.realpath(ws.folder)
    kept = {(f"{ws.prefix}/{s.path}" if ws.prefix else s.path): s for s in keep}
    done: list[FileAction] = []
    failed: list[Skipped] = []
    left: list[Skipped] = []
    with _locked(index):
        changed = _tree_entries(ws, current, target)
        writes: list[tuple[str, _Entry, str]] = []
        removals: list[str] = []
        for path, (letter, entry) in changed.items():
            if path in kept:
                left.append(Skipped(ws.relative(path), kept[path].reason))
                continue
            if entry.mode == "160000":
                left.append(Skipped(ws.relative(path), "a submodule: left as it is"))
                continue
            if letter == "D":
                removals.append(path)
            else:
                action = "recreate" if letter == "A" else "restore"
                writes.append((path, entry, action))
        for path in sorted(removals, key=lambda p: p.count("/"), reverse=True):
            full = top / path
            try:
                _inside(full, folder)
                full.unlink()
                _prune(full.parent, folder)
                done.append(FileAction(ws.relative(path), "remove"))
            except FileNotFoundError:
                done.append(FileAction(ws.relative(path), "remove"))
            except (OSError, CheckpointError) as exc:
                failed.append(Skipped(ws.relative(path), _why(exc)))
        blobs = _blobs(ws, [entry.sha for _, entry, _ in writes])
        for path, entry, action in writes:
            full = top / path
            try:
                _inside(full, folder)
                _write(full, entry.mode, blobs[entry.sha])
                done.append(FileAction(ws.relative(path), action))
            except (OSError, CheckpointError, KeyError) as exc:
                failed.append(Skipped(ws.relative(path), _why(exc)))
    return Restored(tuple(done), tuple(failed), tuple(left))


def _why(exc: BaseException) -> str:
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror
    return str(exc) or type(exc).__name__


def _inside(path: Path, folder: str) -> None:
    """A path whose folder leads (through a link) out of the workspace is never written."""
    parent = os.path.realpath(path.parent)
    if parent != folder and not parent.startswith(folder.rstrip(os.sep) + os.sep):
        raise CheckpointError(f"its folder leads out of the workspace ({parent})")


def _prune(folder: Path, top: str) -> None:
    """Folders a removal left empty go too, up to the workspace (never it)."""
    while os.path.realpath(folder) != top and os.path.realpath(folder).startswith(top):
        try:
            folder.rmdir()
        except OSError:
            return
        folder = folder.parent


def _blobs(ws: Workspace, shas: list[str]) -> dict[str, bytes]:
    """The blobs' bytes, by one ``git cat-file --batch``."""
    unique = sorted(set(shas))
    if not unique:
        return {}
    out = ws.git.run(["cat-file", "--batch"], stdin="".join(s + "\n" for s in unique).encode())
    data = out.stdout
    found: dict[str, bytes] = {}
    at = 0
    for _ in unique:
        end = data.index(b"\n", at)
        header = data[at:end].decode().split()
        at = end + 1
        if len(header) != 3:
            continue  # missing
        size = int(header[2])
        found[header[0]] = data[at : at + size]
        at += size + 1
    return found


def _write(path: Path, mode: str, data: bytes) -> None:
    """The file (or link) in place: written beside itself, then renamed over what is there."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.is_dir() and not path.is_symlink():
        raise CheckpointError("a folder is in its place")
    if mode == "120000":
        tmp = path.with_name(f".{path.name}.segue-{os.getpid()}")
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
        os.symlink(os.fsdecode(data), tmp)
        os.replace(tmp, path)
        return
    fd, name = tempfile.mkstemp(prefix=f".{path.name}.segue-", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(name, (0o777 if mode == "100755" else 0o666) & ~umask)
        os.replace(name, path)
    finally:
        with contextlib.suppress(OSError):
            os.unlink(name)


def _empty_folder(into: Path) -> None:
    if into.exists() and (not into.is_dir() or any(into.iterdir())):
        raise CheckpointError(f"{into}: already exists and is not an empty folder")


def materialize(ws: Workspace, commit: str, into: Path) -> int:
    """The folder's files as the snapshot ``commit`` holds them, written into ``into`` (a new or
    empty folder); returns how many."""
    _empty_folder(into)
    out = ws.git.run(["ls-tree", "-r", "-z", "--full-tree", commit, *ws.pathspec()]).stdout
    entries: list[tuple[str, _Entry]] = []
    for record in out.split(b"\0"):
        if not record:
            continue
        meta, _, name = record.partition(b"\t")
        mode, _kind, sha = meta.decode().split()
        if mode != "160000":
            entries.append((name.decode("utf-8", "surrogateescape"), _Entry(mode, sha)))
    blobs = _blobs(ws, [e.sha for _, e in entries])
    into.mkdir(parents=True, exist_ok=True)
    for path, entry in entries:
        _write(into / ws.relative(path), entry.mode, blobs[entry.sha])
    return len(entries)


def add_worktree(ws: Workspace, commit: str, into: Path) -> Path:
    """A ``git worktree`` of the folder's repository at the snapshot ``commit`` (detached: no
    branch is made or moved, the user's checkout is not switched), in ``into``; returns the
    workspace folder in it."""
    _empty_folder(into)
    ws.git.run(["worktree", "add", "--detach", "--quiet", str(into), commit], work_tree=False)
    return into / ws.prefix if ws.prefix else into
