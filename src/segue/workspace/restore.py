"""Putting a workspace back to a snapshot, byte for byte, through segue's own plumbing (never
``git checkout``, ``reset``, ``stash`` or ``clean``). One plan serves the preview and the
restore: what each path that differs goes through (``restore``, ``remove``, ``recreate``),
decided by the folder as it is when the command starts. A file that is there is removed or
overwritten only when the safety snapshot taken just before holds it as it is (so an undo
brings it back); never a file git ignores now, a ``.gitignore`` whose change would stop
ignoring a file that is there, anything in a repository of its own or a submodule, a file over
the size cap, a special file. Each is left as it is, with the reason. A file that is not there
is recreated whatever the ignore rules say: nothing is lost by it.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from collections.abc import Iterable, Mapping
from pathlib import Path

import msgspec

from segue.model.errors import CheckpointError
from segue.support.text import quoted
from segue.workspace.changes import Skipped
from segue.workspace.git import Git
from segue.workspace.snapshot import (
    Workspace,
    disk_ids,
    listing,
    locked,
    max_file_bytes,
    screen,
    users_index,
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


class _Step(msgspec.Struct, frozen=True):
    path: str  # from the repository's top
    action: str
    entry: _Entry | None  # what the snapshot holds (None: nothing)
    seen: tuple[int, ...] | None = None  # the file as it was looked at (checked before a write)
    mode: int | None = None  # its permission bits (kept where it is written again)


def _seen(full: Path) -> tuple[tuple[int, ...] | None, int | None]:
    """What says a file changed since it was looked at (its device, inode, size and times),
    and its permission bits; (None, None) when it is not there."""
    try:
        i = full.lstat()
    except OSError:
        return None, None
    return (i.st_dev, i.st_ino, i.st_size, i.st_mtime_ns, i.st_ctime_ns), stat.S_IMODE(i.st_mode)


def _raw(output: bytes) -> dict[str, tuple[_Entry | None, _Entry | None]]:
    """What ``git diff-* -z --raw`` wrote: each path's entry on the old side and the new (None
    where it is not there)."""
    parts = output.split(b"\0")
    found: dict[str, tuple[_Entry | None, _Entry | None]] = {}
    for head, name in zip(parts[0::2], parts[1::2], strict=False):
        old_mode, new_mode, old_id, new_id = head[1:].decode().split()[:4]
        found[name.decode("utf-8", "surrogateescape")] = (
            None if old_mode == "000000" else _Entry(old_mode, old_id),
            None if new_mode == "000000" else _Entry(new_mode, new_id),
        )
    return found


def _tree_entries(ws: Workspace, commit: str) -> dict[str, _Entry]:
    """Every file the snapshot ``commit`` holds in the workspace."""
    out = ws.git.run(["ls-tree", "-r", "-z", "--full-tree", commit, *ws.pathspec()]).stdout
    found: dict[str, _Entry] = {}
    for record in out.split(b"\0"):
        if not record:
            continue
        meta, _, name = record.partition(b"\t")
        mode, _kind, sha = meta.decode().split()
        found[name.decode("utf-8", "surrogateescape")] = _Entry(mode, sha)
    return found


def preview(
    ws: Workspace,
    target: str,
    *,
    max_bytes: int | None = None,
    left_out: Iterable[Skipped] = (),
) -> tuple[list[FileAction], list[Skipped]]:
    """What putting the folder back to the snapshot ``target`` (a commit) would do, read from
    the folder as it is now; nothing is written (not even segue's own index). ``left_out``:
    what the target could not hold (left as it is on disk)."""
    index = ws.git.index
    assert index is not None
    if not index.exists():
        raise CheckpointError(f"{ws.folder}: no snapshot of this folder has been taken here")
    with locked(index):
        entries = listing(ws, refresh=False)
        # what differs between the last snapshot (segue's index) and the target
        against = ws.git.run(
            ["diff-index", "--cached", "-r", "-z", "--raw", "--no-renames", target,
             *ws.pathspec()]
        )  # fmt: skip
        changed = set(_raw(against.stdout))
        cap = max_file_bytes(ws.git.env) if max_bytes is None else max_bytes
        take, skipped = screen(ws, entries, cap)
        seen = {s.path for s in skipped}
        skipped += [s for s in left_out if s.path not in seen]
        keep = {ws.full(s.path): s.reason for s in skipped}
        wanted = _tree_entries(ws, target)
        steps, left = _plan(ws, wanted, changed | set(take) | set(keep), keep, None)
    return [FileAction(ws.relative(s.path), s.action) for s in steps], left


def restore(ws: Workspace, target: str, current: str, *, keep: Iterable[Skipped] = ()) -> Restored:
    """Make the folder hold the snapshot ``target``, given ``current``, a snapshot of the folder
    taken just now (its commit): only what ``current`` holds as it is on disk is removed or
    overwritten. The paths of ``keep`` (what either snapshot could not hold: pass both lists)
    are left as they are."""
    index = ws.git.index
    assert index is not None
    top = ws.git.work_tree
    folder = os.path.realpath(ws.folder)
    kept = {ws.full(s.path): s.reason for s in keep}
    done: list[FileAction] = []
    failed: list[Skipped] = []
    with locked(index):
        diff = ws.git.run(
            ["diff-tree", "-r", "-z", "--raw", "--no-renames", current, target, *ws.pathspec()]
        )
        changed = _raw(diff.stdout)
        held = {path: old for path, (old, _new) in changed.items()}
        wanted = {path: new for path, (_old, new) in changed.items() if new is not None}
        steps, left = _plan(ws, wanted, changed, kept, held)
        modes = _Modes(index)
        modes.remember(current, steps, _folders_on(top, steps))
        earlier = modes.of(target)  # (the permissions of files an earlier restore removed)
        there = {p for p, m in earlier.items() if stat.S_ISDIR(m)}  # (folders that were there)
        blobs = _blobs(ws, [s.entry.sha for s in steps if s.entry is not None])
        removals = [s for s in steps if s.action == "remove"]
        removals.sort(key=lambda s: s.path.count("/"), reverse=True)  # (deepest first)
        for step in [*removals, *(s for s in steps if s.action != "remove")]:
            full = top / step.path
            try:
                _inside(full, folder)
                if step.action != "recreate" and _seen(full)[0] != step.seen:
                    left.append(Skipped(ws.relative(step.path), "changed during the restore"))
                    continue
                if step.entry is None:
                    with contextlib.suppress(FileNotFoundError):
                        full.unlink()
                    _prune(full.parent, folder, {top / p for p in there})
                else:
                    data, keep_mode = blobs[step.entry.sha], step.mode or earlier.get(step.path)
                    _write(full, step.entry.mode, data, keep_mode, step.action == "recreate")
                done.append(FileAction(ws.relative(step.path), step.action))
            except FileExistsError:
                left.append(Skipped(ws.relative(step.path), "made during the restore"))
            except (OSError, CheckpointError, KeyError) as exc:
                why = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
                failed.append(Skipped(ws.relative(step.path), why))
    return Restored(tuple(done), tuple(failed), tuple(left))


def _plan(
    ws: Workspace,
    wanted: Mapping[str, _Entry],
    paths: Iterable[str],
    keep: Mapping[str, str],
    held: Mapping[str, _Entry | None] | None,
) -> tuple[list[_Step], list[Skipped]]:
    """What each of ``paths`` goes through for the folder to hold ``wanted`` (each file the
    target snapshot holds; a path not in it is removed), and what is left as it is, with why.
    ``held``: what the safety snapshot holds of each path (None: a preview, taken before it)."""
    top = ws.git.work_tree
    real = Path(os.path.realpath(top))
    start, known = len(ws.prefix.split("/")) if ws.prefix else 0, dict[str, bool]()
    steps: list[_Step] = []
    left: list[Skipped] = []
    ordered = sorted(set(paths))
    disk = {p: _Entry(*e) for p, e in disk_ids(ws, ordered).items()}  # (as they are now)
    for path in ordered:
        entry = wanted.get(path)
        if entry is not None and entry.mode == "160000":
            left.append(Skipped(ws.relative(path), "a submodule: left as it is"))
            continue
        action, why = _action(top / path, entry, disk.get(path))
        if action is None:
            if why is not None:
                left.append(Skipped(ws.relative(path), why))
            continue
        if path in keep:
            left.append(Skipped(ws.relative(path), keep[path]))
            continue
        if (repository := _nested(top, start, path, known)) is not None:
            reason = f"inside {quoted(ws.relative(repository))}, a git repository of its own"
            left.append(Skipped(ws.relative(path), reason))
            continue
        seen, mode = _seen(top / path)
        steps.append(_Step(path, action, entry, seen if action != "recreate" else None, mode))
    # a folder on the way that is a link now: nothing is written through it, unless the plan
    # removes that link first
    going = {s.path for s in steps if s.action == "remove"}
    for n, step in enumerate(list(steps)):
        if os.path.realpath((top / step.path).parent) != str((real / step.path).parent):
            parts = step.path.split("/")
            links = ["/".join(parts[:k]) for k in range(1, len(parts))]
            steps.remove(step)
            if any(a in going for a in links if os.path.islink(top / a)) and step.entry:
                steps.insert(n, _Step(step.path, "recreate", step.entry))  # (once it is gone)
            elif step.entry or not any(a in going for a in links):
                left.append(Skipped(ws.relative(step.path), "a folder on its way is a link"))
    # a folder where the snapshot has a file: written once the removals have emptied it
    for step in [s for s in steps if s.action == "recreate" and (top / s.path).is_dir()]:
        inside = _files_in(top / step.path, step.path)
        if inside is None or not inside <= going:
            steps.remove(step)
            left.append(Skipped(ws.relative(step.path), "a folder is in its place"))
    # a file that is there is removed or overwritten only when git does not ignore it now, and
    # (in a restore) the safety snapshot holds it as it is
    ignored = _ignored(ws, [s.path for s in steps if s.action != "recreate"])
    kept: list[_Step] = []
    for step in steps:
        if step.path in ignored:
            left.append(Skipped(ws.relative(step.path), "ignored by git now: left as it is"))
        elif (
            step.action != "recreate"
            and held is not None
            and (held.get(step.path) is None or disk.get(step.path) != held.get(step.path))
        ):
            left.append(Skipped(ws.relative(step.path), "changed after the safety snapshot"))
        else:
            kept.append(step)
    steps = kept
    for path, hidden in _exposing(ws, steps).items():
        more = f" and {len(hidden) - 1} more" if len(hidden) > 1 else ""
        reason = f"kept as it is: the change would stop ignoring {quoted(hidden[0])}{more}"
        left.append(Skipped(ws.relative(path), reason))
        steps = [s for s in steps if s.path != path]
    left.sort(key=lambda s: s.path)
    return steps, left


def _action(full: Path, entry: _Entry | None, now: _Entry | None) -> tuple[str | None, str | None]:
    """What the file at ``full`` (``now``: its mode and blob id, as git reads it) goes through
    to be ``entry`` (None: none there), or None and why it cannot (None: nothing to do)."""
    try:
        info = full.lstat()
    except (FileNotFoundError, NotADirectoryError):
        return ("recreate", None) if entry is not None else (None, None)
    except OSError as exc:
        return None, f"cannot be looked at ({exc.strerror})"
    if stat.S_ISDIR(info.st_mode):  # (a file's place: written if the removals empty it)
        return ("recreate", None) if entry is not None else (None, None)
    if not (stat.S_ISREG(info.st_mode) or stat.S_ISLNK(info.st_mode)):
        kinds = {stat.S_IFIFO: "a FIFO", stat.S_IFSOCK: "a socket"}
        kind = kinds.get(stat.S_IFMT(info.st_mode), "a special file")
        return None, f"{kind}: not a file a snapshot holds"
    if now is None:
        return None, "cannot be read"
    if entry is None:
        return "remove", None
    return ("restore", None) if now != entry else (None, None)


class _Modes:
    """The permission bits of the files a restore removed or overwrote, kept beside segue's
    index by the snapshot that held them (the safety snapshot), so that the undo that puts
    them back gives a ``.env`` of 0600 its 0600 again (git keeps only 644 or 755)."""

    def __init__(self, index: Path) -> None:
        self.file = index.with_name(index.name + ".modes")

    def _records(self) -> list[bytes]:
        try:
            return [r for r in self.file.read_bytes().split(b"\0") if r][-5000:]
        except OSError:
            return []

    def remember(self, commit: str, steps: list[_Step], folders: dict[str, int]) -> None:
        """The bits of the files ``steps`` remove or overwrite, and of the ``folders`` on the
        way of the files they write, as the snapshot ``commit`` found them."""
        bits = {s.path: s.mode for s in steps if s.mode is not None and s.action != "recreate"}
        new = [
            b"%s %o %s" % (commit.encode(), mode, path.encode("utf-8", "surrogateescape"))
            for path, mode in {**bits, **folders}.items()
        ]
        if new:
            tmp = self.file.with_name(f"{self.file.name}.{os.getpid()}.tmp")
            tmp.write_bytes(b"\0".join([*self._records(), *new]) + b"\0")
            os.replace(tmp, self.file)

    def of(self, commit: str) -> dict[str, int]:
        found: dict[str, int] = {}
        for record in self._records():
            made, mode, path = record.split(b" ", 2)
            if made.decode() == commit:
                found[path.decode("utf-8", "surrogateescape")] = int(mode, 8)
        return found


def _folders_on(top: Path, steps: list[_Step]) -> dict[str, int]:
    """The folders on the way of the files ``steps`` write that are there now, with their mode
    (an undo keeps them, though it takes out what was written into them)."""
    found: dict[str, int] = {}
    for step in steps:
        parts = step.path.split("/")[:-1] if step.entry is not None else []
        for n in range(1, len(parts) + 1):
            name = "/".join(parts[:n])
            if name not in found:
                with contextlib.suppress(OSError):
                    if stat.S_ISDIR(mode := (top / name).lstat().st_mode):
                        found[name] = mode
    return found


def _files_in(folder: Path, name: str) -> set[str] | None:
    """Every file and link under ``folder`` (``name`` from the top), None when anything else
    is (a special file, a folder that cannot be read)."""
    found: set[str] = set()
    try:
        for entry in os.scandir(folder):
            path = f"{name}/{entry.name}"
            if entry.is_dir(follow_symlinks=False):
                inner = _files_in(Path(entry.path), path)
                if inner is None:
                    return None
                found |= inner
            elif entry.is_file(follow_symlinks=False) or entry.is_symlink():
                found.add(path)
            else:
                return None
    except OSError:
        return None
    return found


def _nested(top: Path, start: int, path: str, known: dict[str, bool]) -> str | None:
    """The outermost folder ``path`` is in (below the ``start`` first parts of the workspace's
    path) that is a git repository of its own now (a ``.git`` in it), else None."""
    parts = path.split("/")
    for n in range(max(start, 1), len(parts)):
        folder = "/".join(parts[:n])
        if known.setdefault(folder, os.path.lexists(top / folder / ".git")):
            return folder
    return None


def _ignored(ws: Workspace, paths: list[str]) -> set[str]:
    """Those of ``paths`` git ignores now (the user's own rules, the folder as it is now) and
    the user does not track (a folder outside git: its private repository's excludes)."""
    if ws.private:
        return ws.git.ignored(paths, rules_only=True)
    return ws.git.ignored(paths, index=users_index(ws)) if paths else set()


def _exposing(ws: Workspace, steps: list[_Step]) -> dict[str, list[str]]:
    """The ``.gitignore`` files of ``steps`` whose change would stop ignoring a file or folder
    that is there and ignored now, each with those it would expose. git itself answers, on a
    scratch folder holding the ``.gitignore`` files as they would be."""
    changing = {s.path: s for s in steps if s.path.rsplit("/", 1)[-1] == ".gitignore"}
    if not changing:
        return {}
    args = ["ls-files", "-z", "--others", "--ignored", "--exclude-standard", "--directory"]
    index = None if ws.private else users_index(ws)
    listed = ws.git.run([*args, *ws.pathspec()], check=False, index=index).stdout
    there = [n.decode("utf-8", "surrogateescape") for n in listed.split(b"\0") if n]
    if not there:
        return {}
    chains = {p: _ignore_files(p) for p in there}
    needed = sorted({g for chain in chains.values() for g in chain})
    later = {g: changing[g].entry for g in needed if g in changing}
    blobs = _blobs(ws, [e.sha for e in later.values() if e is not None])
    top = ws.git.work_tree
    with tempfile.TemporaryDirectory(prefix="segue-ignores-") as scratch:
        for name in needed:
            if name in later:
                entry = later[name]
                data = None if entry is None else blobs.get(entry.sha)
            else:
                try:
                    data = (top / name).read_bytes()
                except OSError:
                    data = None
            if data is not None:
                where = Path(scratch, name)
                where.parent.mkdir(parents=True, exist_ok=True)
                where.write_bytes(data)
        git = Git(ws.git.program, ws.git.git_dir, Path(scratch), None, ws.git.env)
        still = git.ignored(there, rules_only=True)
    exposing: dict[str, list[str]] = {}
    for path in there:
        if path in still:
            continue
        for name in chains[path]:
            if name in changing:
                exposing.setdefault(name, []).append(ws.relative(path.rstrip("/")))
    return exposing


def _ignore_files(path: str) -> list[str]:
    """The ``.gitignore`` files that can rule on ``path``: in each folder above it."""
    parts = path.rstrip("/").split("/")[:-1]
    return [("/".join(parts[:n]) + "/" if n else "") + ".gitignore" for n in range(len(parts) + 1)]


def _inside(path: Path, folder: str) -> None:
    """A path whose folder leads (through a link) out of the workspace is never written."""
    parent = os.path.realpath(path.parent)
    if parent != folder and not parent.startswith(folder.rstrip(os.sep) + os.sep):
        raise CheckpointError(f"its folder leads out of the workspace ({parent})")


def _prune(folder: Path, top: str, keep: set[Path]) -> None:
    """Folders a removal left empty go too, up to the workspace (never it), but those of
    ``keep`` (there, empty, before the restore this one undoes wrote into them)."""
    while (
        os.path.realpath(folder) != top
        and os.path.realpath(folder).startswith(top)
        and folder not in keep
    ):
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


def _write(path: Path, mode: str, data: bytes, keep: int | None = None, new: bool = False) -> None:
    """The file (or link) in place: written beside itself under a short name, then renamed
    over what is there (``new``: only where nothing is, else :class:`FileExistsError`). Its
    permission bits are ``keep``'s (the file's before), the executable bits as ``mode`` says;
    else the umask's."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.is_dir() and not path.is_symlink():
        raise CheckpointError("a folder is in its place")
    if mode == "120000":
        if new:
            os.symlink(os.fsdecode(data), path)
            return
        tmp = path.with_name(f".segue-{os.getpid()}-link")
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
        os.symlink(os.fsdecode(data), tmp)
        os.replace(tmp, path)
        return
    fd, name = tempfile.mkstemp(prefix=".segue-", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        if keep is None:
            umask = os.umask(0)
            os.umask(umask)
            keep = 0o666 & ~umask
        readable = (keep & 0o444) >> 2  # (executable where readable, as git checks out)
        os.chmod(name, (keep & ~0o111) | (readable if mode == "100755" else 0))
        try:
            os.link(name, path) if new else os.replace(name, path)
        except FileExistsError:
            raise  # (made meanwhile: kept)
        except OSError:  # (no hard links here)
            if new and os.path.lexists(path):
                raise FileExistsError(path) from None
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
    entries = [(p, e) for p, e in _tree_entries(ws, commit).items() if e.mode != "160000"]
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
