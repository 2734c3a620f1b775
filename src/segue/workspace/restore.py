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
from segue.workspace.git import Entry, Git, locked, read_diff
from segue.workspace.snapshot import (
    Workspace,
    disk_ids,
    listing,
    max_file_bytes,
    screen,
    special,
    users_index,
    write_atomic,
)

__all__ = ["FileAction", "Restored", "add_worktree", "materialize", "preview", "restore"]


class FileAction(msgspec.Struct, frozen=True):
    path: str  # relative to the workspace folder
    action: str  # restore / remove / recreate


class Restored(msgspec.Struct, frozen=True):
    done: tuple[FileAction, ...]
    failed: tuple[Skipped, ...]  # what could not be done, and why
    left: tuple[Skipped, ...]  # what was left as it is, and why


class _Step(msgspec.Struct, frozen=True):
    path: str  # from the repository's top
    action: str
    entry: Entry | None  # what the snapshot holds (None: nothing)
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


def _tree_entries(ws: Workspace, commit: str) -> dict[str, Entry]:
    """Every file the snapshot ``commit`` holds in the workspace."""
    out = ws.git.run(["ls-tree", "-r", "-z", "--full-tree", commit, *ws.pathspec()]).stdout
    records = (r.partition(b"\t") for r in out.split(b"\0") if r)
    return {
        name.decode("utf-8", "surrogateescape"): (meta[:6].decode(), meta.split()[2].decode())
        for meta, _, name in records
    }


def preview(
    ws: Workspace, target: str, *, max_bytes: int | None = None, left_out: Iterable[Skipped] = ()
) -> tuple[list[FileAction], list[Skipped]]:
    """What putting the folder back to the snapshot ``target`` (a commit) would do, read from
    the folder as it is now; nothing is written (not even segue's own index). ``left_out``:
    what the target could not hold (left as it is on disk)."""
    index = ws.index
    if not index.exists():
        raise CheckpointError(f"{ws.folder}: no snapshot of this folder has been taken here")
    with locked(index):
        entries = listing(ws, refresh=False)
        # what differs between the last snapshot (segue's index) and the target
        args = ["diff-index", "--cached", "-r", "-z", "--name-only", "--no-renames", target]
        changed = set(ws.git.names([*args, *ws.pathspec()]))
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
    index = ws.index
    top = ws.git.work_tree
    folder = os.path.realpath(ws.folder)
    kept = {ws.full(s.path): s.reason for s in keep}
    done: list[FileAction] = []
    failed: list[Skipped] = []
    with locked(index):
        args = ["diff-tree", "-r", "-z", "--raw", "--no-renames", current, target]
        changed = read_diff(ws.git.run([*args, *ws.pathspec()]).stdout)[0]
        held = {path: old for path, (old, _new, _) in changed.items()}
        wanted = {path: new for path, (_old, new, _) in changed.items() if new is not None}
        steps, left = _plan(ws, wanted, changed, kept, held)
        modes = index.with_name(index.name + ".modes")
        _remember_modes(modes, current, steps, _folders_on(top, steps))
        earlier = _modes_of(modes, target)  # (the permissions of files an earlier restore removed)
        there = {p for p, m in earlier.items() if stat.S_ISDIR(m)}  # (folders that were there)
        blobs = _blobs(ws, [s.entry[1] for s in steps if s.entry is not None])
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
                    mode, sha = step.entry
                    keep_mode = step.mode or earlier.get(step.path)
                    _write(full, mode, blobs[sha], keep_mode, step.action == "recreate")
                done.append(FileAction(ws.relative(step.path), step.action))
            except FileExistsError:
                left.append(Skipped(ws.relative(step.path), "made during the restore"))
            except (OSError, CheckpointError, KeyError) as exc:
                why = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
                failed.append(Skipped(ws.relative(step.path), why))
    return Restored(tuple(done), tuple(failed), tuple(left))


def _plan(
    ws: Workspace,
    wanted: Mapping[str, Entry],
    paths: Iterable[str],
    keep: Mapping[str, str],
    held: Mapping[str, Entry | None] | None,
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
    disk = disk_ids(ws, ordered)  # (as they are now)
    for path in ordered:
        entry = wanted.get(path)
        action, why = _action(top / path, entry, disk.get(path))
        if entry is not None and entry[0] == "160000":
            action, why = None, "a submodule: left as it is"
        elif action is not None and path in keep:
            action, why = None, keep[path]
        elif action is not None and (repository := _nested(top, start, path, known)):
            action = None
            why = f"inside {quoted(ws.relative(repository))}, a git repository of its own"
        if action is None:
            left += [Skipped(ws.relative(path), why)] if why is not None else []
            continue
        steps.append(_Step(path, action, entry, *_seen(top / path)))
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
    there = [s.path for s in steps if s.action != "recreate"]
    if ws.private:  # (a folder outside git: its private repository's excludes)
        ignored = ws.git.ignored(there, rules_only=True)
    else:  # (the user's own rules, the folder as it is now, and what the user does not track)
        ignored = ws.git.ignored(there, index=users_index(ws)) if there else set()
    drop = dict.fromkeys(ignored, "ignored by git now: left as it is")
    if held is not None:  # (a file that is there has a blob id: one it does not hold differs)
        changed = [p for p in there if p not in drop and disk.get(p) != held.get(p)]
        drop.update(dict.fromkeys(changed, "changed after the safety snapshot"))
    steps = [s for s in steps if s.path not in drop]
    for path, hidden in _exposing(ws, steps).items():
        more = f" and {len(hidden) - 1} more" if len(hidden) > 1 else ""
        drop[path] = f"kept as it is: the change would stop ignoring {quoted(hidden[0])}{more}"
    left += [Skipped(ws.relative(p), why) for p, why in drop.items()]
    left.sort(key=lambda s: s.path)
    return [s for s in steps if s.path not in drop], left


def _action(full: Path, entry: Entry | None, now: Entry | None) -> tuple[str | None, str | None]:
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
    if (why := special(info.st_mode)) is not None:
        return None, why
    if now is None:
        return None, "cannot be read"
    if entry is None:
        return "remove", None
    return ("restore", None) if now != entry else (None, None)


# The permission bits of the files a restore removed or overwrote, kept beside segue's index
# (``.modes``) by the snapshot that held them (the safety snapshot), so that the undo that puts
# them back gives a ``.env`` of 0600 its 0600 again (git keeps only 644 or 755).


def _mode_records(file: Path) -> list[bytes]:
    try:
        return [r for r in file.read_bytes().split(b"\0") if r][-5000:]
    except OSError:
        return []


def _remember_modes(file: Path, commit: str, steps: list[_Step], folders: dict[str, int]) -> None:
    """The bits of the files ``steps`` remove or overwrite, and of the ``folders`` on the way of
    the files they write, as the snapshot ``commit`` found them."""
    bits = {s.path: s.mode for s in steps if s.mode is not None and s.action != "recreate"}
    new = [
        b"%s %o %s" % (commit.encode(), mode, path.encode("utf-8", "surrogateescape"))
        for path, mode in {**bits, **folders}.items()
    ]
    if new:
        write_atomic(file, b"\0".join([*_mode_records(file), *new]) + b"\0")


def _modes_of(file: Path, commit: str) -> dict[str, int]:
    records = (r.split(b" ", 2) for r in _mode_records(file))
    return {
        p.decode("utf-8", "surrogateescape"): int(m, 8)
        for c, m, p in records
        if c == commit.encode()
    }


def _folders_on(top: Path, steps: list[_Step]) -> dict[str, int]:
    """The folders on the way of the files ``steps`` write that are there now, with their mode
    (an undo keeps them, though it takes out what was written into them)."""
    written = [s.path.split("/") for s in steps if s.entry is not None]
    found: dict[str, int] = {}
    for name in {"/".join(parts[:n]) for parts in written for n in range(1, len(parts))}:
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
                if (inner := _files_in(Path(entry.path), path)) is None:
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


def _exposing(ws: Workspace, steps: list[_Step]) -> dict[str, list[str]]:
    """The ``.gitignore`` files of ``steps`` whose change would stop ignoring a file or folder
    that is there and ignored now, each with those it would expose. git itself answers, on a
    scratch folder holding the ``.gitignore`` files as they would be."""
    changing = {s.path: s for s in steps if s.path.rsplit("/", 1)[-1] == ".gitignore"}
    if not changing:
        return {}
    args = ["ls-files", "-z", "--others", "--ignored", "--exclude-standard", "--directory"]
    index = None if ws.private else users_index(ws)
    if not (there := ws.git.names([*args, *ws.pathspec()], check=False, index=index)):
        return {}
    chains = {p: _ignore_files(p) for p in there}
    needed = sorted({g for chain in chains.values() for g in chain})
    later = {g: changing[g].entry for g in needed if g in changing}
    blobs = _blobs(ws, [e[1] for e in later.values() if e is not None])
    top = ws.git.work_tree
    with tempfile.TemporaryDirectory(prefix="segue-ignores-") as scratch:
        for name in needed:
            if name in later:
                entry = later[name]
                data = None if entry is None else blobs.get(entry[1])
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
    for path in (p for p in there if p not in still):
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
    while (real := os.path.realpath(folder)) != top and real.startswith(top) and folder not in keep:
        try:
            folder.rmdir()
        except OSError:
            return
        folder = folder.parent


def _blobs(ws: Workspace, shas: list[str]) -> dict[str, bytes]:
    """The blobs' bytes, by one ``git cat-file --batch``."""
    unique = sorted(set(shas))
    feed = "".join(s + "\n" for s in unique).encode()
    data = ws.git.run(["cat-file", "--batch"], stdin=feed).stdout if unique else b""
    found: dict[str, bytes] = {}
    at = 0
    for _ in unique:
        end = data.index(b"\n", at)
        sha, _, size = data[at:end].decode().partition(" blob ")
        at = end + 1
        if size:  # (else: "<id> missing")
            found[sha] = data[at : at + int(size)]
            at += int(size) + 1
    return found


def _write(path: Path, mode: str, data: bytes, keep: int | None = None, new: bool = False) -> None:
    """The file (or link) in place: written beside itself under a short name, then renamed
    over what is there (``new``: only where nothing is, else :class:`FileExistsError`). Its
    permission bits are ``keep``'s (the file's before), the executable bits as ``mode`` says;
    else the umask's."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if mode == "120000" and new:
        os.symlink(os.fsdecode(data), path)  # (where nothing is, else FileExistsError)
        return
    if mode == "120000":
        tmp = path.with_name(f".segue-{os.getpid()}-link")
        tmp.unlink(missing_ok=True)
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
    entries = [(p, e) for p, e in _tree_entries(ws, commit).items() if e[0] != "160000"]
    blobs = _blobs(ws, [sha for _, (_mode, sha) in entries])
    into.mkdir(parents=True, exist_ok=True)
    for path, (mode, sha) in entries:
        _write(into / ws.relative(path), mode, blobs[sha])
    return len(entries)


def add_worktree(ws: Workspace, commit: str, into: Path) -> Path:
    """A ``git worktree`` of the folder's repository at the snapshot ``commit`` (detached: no
    branch is made or moved, the user's checkout is not switched), in ``into``; returns the
    workspace folder in it."""
    _empty_folder(into)
    ws.git.run(["worktree", "add", "--detach", "--quiet", str(into), commit], work_tree=False)
    return into / ws.prefix if ws.prefix else into
