"""A snapshot's tree: the tree of the commit it starts from, with the changed files set and the
removed ones taken out. Only the folders on a changed path are read (through one ``git cat-file
--batch``, a level of folders at a time) and written again; every other folder keeps its tree.
A folder left empty goes, as git keeps no empty folder."""

from __future__ import annotations

import contextlib
import subprocess
from collections.abc import Sequence

from segue.model.errors import CheckpointError
from segue.workspace.git import Git
from segue.workspace.objects import TREE, TREE_MODE, is_tree_mode, object_id, parse_tree, tree_bytes

__all__ = ["Edit", "ObjectReader", "edited_tree"]

Entries = dict[bytes, tuple[bytes, bytes]]  # name: (mode, raw id)
# a file set to (mode, raw id), or removed (None), at its path from the repository's top
Edit = tuple[bytes, tuple[bytes, bytes] | None]
_CHANGED = (TREE_MODE, b"")  # a folder's entry whose tree is made anew
_CHUNK = 256  # requests written before their answers are read (well within a pipe's buffer)


class ObjectReader:
    """``git cat-file --batch`` on the repository: objects asked for by name, many at a time."""

    def __init__(self, git: Git) -> None:
        self._where = git.work_tree
        self._process = git.start(["cat-file", "--batch"])

    def objects(self, names: Sequence[str]) -> list[tuple[str, str, bytes] | None]:
        """(id, type, data) of each name (an id or any name git reads), None for one that is
        not there."""
        asked = [n for n in names if _askable(n)]
        got = dict(zip(asked, self._ask(asked), strict=True))
        return [got.get(n) for n in names]

    def _ask(self, names: Sequence[str]) -> list[tuple[str, str, bytes] | None]:
        out: list[tuple[str, str, bytes] | None] = []
        stdin, stdout = self._process.stdin, self._process.stdout
        assert stdin is not None and stdout is not None
        for start in range(0, len(names), _CHUNK):
            chunk = names[start : start + _CHUNK]
            try:
                stdin.write(b"".join(n.encode() + b"\n" for n in chunk))
                stdin.flush()
            except OSError:
                raise self._gone() from None
            for _ in chunk:
                header = stdout.readline().split()
                if len(header) == 3 and header[2].isdigit():
                    size = int(header[2])
                    data = stdout.read(size + 1)
                    if len(data) != size + 1:
                        raise self._gone()
                    out.append((header[0].decode(), header[1].decode(), data[:size]))
                elif len(header) == 2:  # (missing, ambiguous)
                    out.append(None)
                else:
                    raise self._gone()
        return out

    def _gone(self) -> CheckpointError:
        return CheckpointError(f"{self._where}: git cat-file stopped answering")

    def close(self) -> None:
        process = self._process
        with contextlib.suppress(OSError):
            if process.stdin is not None:
                process.stdin.close()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        for stream in (process.stdout, process.stderr):
            if stream is not None:
                stream.close()


def _askable(name: str) -> bool:
    """Whether ``name`` can be asked for on one line of the batch (a base read from a file
    changed behind segue's back could hold anything): an id, and what git adds to one."""
    return name.isascii() and name.isprintable() and not any(c.isspace() for c in name)


def _trees(reader: ObjectReader, ids: list[bytes]) -> list[Entries]:
    found = reader.objects([raw.hex() for raw in ids])
    out = []
    for raw, got in zip(ids, found, strict=True):
        if got is None or got[1] != "tree":
            raise CheckpointError(f"the repository has lost the tree {raw.hex()}")
        try:
            out.append(parse_tree(got[2], len(raw)))
        except ValueError:
            raise CheckpointError(f"the repository's tree {raw.hex()} is broken") from None
    return out


def edited_tree(
    reader: ObjectReader, root: str, edits: Sequence[Edit], algorithm: str
) -> tuple[str, dict[bytes, tuple[int, bytes]]]:
    """The tree ``root`` (a tree id) with ``edits`` made in their order, and the tree objects
    that are new (raw id: (kind, data))."""
    if not edits:
        return root, {}
    split = [(tuple(path.split(b"/")), value) for path, value in edits]
    trees = _Folders(_trees(reader, [bytes.fromhex(root)])[0])
    trees.read(reader, {parts[:n] for parts, _ in split for n in range(1, len(parts))})
    for parts, value in split:
        trees.edit(parts, value)
    return trees.made(root, algorithm)


class _Folders:
    """The folders on the changed paths, as they are edited: each folder's entries (a folder
    absent is none, or not read), the folders to make anew, and those whose entries are no
    longer in git's order (a name added, or a file that became a folder or back)."""

    def __init__(self, root: Entries) -> None:
        self.work: dict[tuple[bytes, ...], Entries] = {(): root}
        self.changed: set[tuple[bytes, ...]] = set()
        self.reordered: set[tuple[bytes, ...]] = set()

    def read(self, reader: ObjectReader, needed: set[tuple[bytes, ...]]) -> None:
        """The folders ``needed`` that the tree has, a level at a time."""
        work = self.work
        for depth in range(1, max((len(d) for d in needed), default=0) + 1):
            level = []
            for folder in needed:
                if len(folder) != depth or folder[:-1] not in work:
                    continue
                entry = work[folder[:-1]].get(folder[-1])
                if entry is not None and is_tree_mode(entry[0]):
                    level.append((folder, entry[1]))
            found = _trees(reader, [raw for _, raw in level])
            for (folder, _), entries in zip(level, found, strict=True):
                work[folder] = entries

    def _is_folder(self, folder: tuple[bytes, ...]) -> bool:
        entry = self.work[folder[:-1]].get(folder[-1])
        return entry is not None and is_tree_mode(entry[0]) and folder in self.work

    def _drop(self, folder: tuple[bytes, ...]) -> None:
        """A folder and everything below it, gone."""
        if folder not in self.work:
            return  # (nor anything below it: a folder is read only when its parent is)
        for key in [k for k in self.work if k[: len(folder)] == folder]:
            del self.work[key]

    def edit(self, parts: tuple[bytes, ...], value: tuple[bytes, bytes] | None) -> None:
        """The file at ``parts`` set to ``value`` (mode, raw id), or removed (None)."""
        work = self.work
        folders = [parts[:n] for n in range(len(parts))]  # the root, then each folder on it
        if value is None:  # removed: only where each folder on the path is one
            if not all(map(self._is_folder, folders[1:])) or parts[-1] not in work[folders[-1]]:
                return
            del work[folders[-1]][parts[-1]]
            self._drop(parts)
        else:
            for folder in folders[1:]:
                if not self._is_folder(folder):
                    self._drop(folder)  # (a file there, or nothing: a folder takes its place)
                    work[folder] = {}
                    self.reordered.add(folder[:-1])
                    work[folder[:-1]][folder[-1]] = _CHANGED
            old = work[folders[-1]].get(parts[-1])
            if old is None or is_tree_mode(old[0]):
                self.reordered.add(folders[-1])
            work[folders[-1]][parts[-1]] = value
            self._drop(parts)  # (a folder there: the file takes its place)
        for folder in folders:
            self.changed.add(folder)
            if folder:
                work[folder[:-1]][folder[-1]] = _CHANGED

    def made(self, root: str, algorithm: str) -> tuple[str, dict[bytes, tuple[int, bytes]]]:
        """The new root tree's id, and the tree objects made; the deepest folders first (no
        recursion), and a folder left empty goes."""
        work = self.work
        new: dict[bytes, tuple[int, bytes]] = {}
        top = b""
        for folder in sorted(self.changed, key=len, reverse=True):
            if (entries := work.get(folder)) is None:
                continue  # (a file took its place)
            if not entries and folder:
                del work[folder[:-1]][folder[-1]]
                continue
            data = tree_bytes(entries, in_order=folder not in self.reordered)
            raw = object_id(TREE, data, algorithm)
            new[raw] = (TREE, data)
            if folder:
                work[folder[:-1]][folder[-1]] = (TREE_MODE, raw)
            else:
                top = raw
        return (top.hex() if top else root), new
