"""A snapshot's tree: the tree of the commit it starts from, with the changed files set and the
removed ones taken out. Only the folders on a changed path are read (through one ``git cat-file
--batch``, a level of folders at a time) and written again; every other folder keeps its tree.
A folder left empty goes, as git keeps no empty folder."""

from __future__ import annotations

import contextlib
import subprocess
from collections.abc import Mapping, Sequence

from segue.model.errors import CheckpointError
from segue.workspace.git import Git
from segue.workspace.objects import (
    TREE,
    TREE_MODE,
    is_tree_entry,
    object_id,
    parse_tree,
    tree_bytes,
    tree_entry,
)

__all__ = ["Answers", "Edit", "Folder", "Found", "ObjectReader", "edited_tree", "folders_on"]

Entries = dict[bytes, bytes]  # name: the entry's bytes (its mode, name and raw id)
# a file set to (mode, raw id), or removed (None), at its path from the repository's top
Edit = tuple[bytes, tuple[bytes, bytes] | None]
Folder = tuple[bytes, ...]  # a folder's names from the top (() the top)
# the bytes of names written before their answers are read (well within a pipe's buffer: git
# stops reading names while its answers are not read)
_BUDGET = 8192
Found = tuple[str, str, bytes]  # an object's id, type and data
_ENDING: list[subprocess.Popen[bytes]] = []  # readers closed, not waited for (reaped later)


class ObjectReader:
    """``git cat-file --batch`` on the repository: objects asked for by name, many at a time."""

    def __init__(self, git: Git) -> None:
        self._where = git.work_tree
        self._process = git.start(["cat-file", "--batch"])

    def objects(self, names: Sequence[str | bytes]) -> list[Found | None]:
        """(id, type, data) of each name (an id or any name git reads, such as
        ``<commit>:<path>``), None for one that is not there."""
        return self.ask(names).read()

    def ask(self, names: Sequence[str | bytes]) -> Answers:
        """``names`` asked for now, their answers read later (:meth:`Answers.read`): git finds
        them while segue does other work. (Only as many as a pipe holds are written before
        answers are read: git, its output full, would stop reading them.)"""
        order = [n if isinstance(n, bytes) else n.encode("utf-8", "surrogateescape") for n in names]
        asked = [raw for raw in dict.fromkeys(order) if _askable(raw)]
        return Answers(self, order, asked, self._send(asked))

    def _send(self, names: list[bytes]) -> int:
        """Write the first of ``names`` that fit in :data:`_BUDGET` bytes; how many."""
        stdin = self._process.stdin
        assert stdin is not None
        size = count = 0
        while count < len(names) and (count == 0 or size + len(names[count]) < _BUDGET):
            size += len(names[count]) + 1
            count += 1
        if count:
            try:
                stdin.write(b"".join(n + b"\n" for n in names[:count]))
                stdin.flush()
            except OSError:
                raise self._gone() from None
        return count

    def _receive(self, count: int) -> list[Found | None]:
        stdout = self._process.stdout
        assert stdout is not None
        out: list[Found | None] = []
        for _ in range(count):
            line = stdout.readline()
            header = line.split()
            if line.endswith((b" missing\n", b" ambiguous\n")) or len(header) == 2:
                out.append(None)  # (the name, or an id, then why not: a name may hold spaces)
                continue
            if len(header) != 3 or not header[2].isdigit():
                raise self._gone()
            size = int(header[2])
            data = stdout.read(size + 1)
            if len(data) != size + 1:
                raise self._gone()
            out.append((header[0].decode("ascii", "replace"), header[1].decode(), data[:size]))
        return out

    def _gone(self) -> CheckpointError:
        return CheckpointError(f"{self._where}: git cat-file stopped answering")

    def close(self, *, wait: bool = True) -> None:
        """Ended: its input closed, and waited for (or, not ``wait``, left to end by itself;
        it holds what locks segue held when it started, until it has)."""
        process = self._process
        with contextlib.suppress(OSError):
            if process.stdin is not None:
                process.stdin.close()
        for stream in (process.stdout, process.stderr):
            if stream is not None:
                stream.close()
        _ENDING[:] = [p for p in _ENDING if p.poll() is None]
        if not wait:
            _ENDING.append(process)
            return
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


class Answers:
    """The answers to names asked of an :class:`ObjectReader`, in the order asked."""

    def __init__(
        self, reader: ObjectReader, order: list[bytes], asked: list[bytes], sent: int
    ) -> None:
        self._reader, self._order, self._asked, self._sent = reader, order, asked, sent

    def read(self) -> list[Found | None]:
        reader, asked = self._reader, self._asked
        got = reader._receive(self._sent)
        done = self._sent
        while done < len(asked):
            sent = reader._send(asked[done:])
            got += reader._receive(sent)
            done += sent
        found = dict(zip(asked, got, strict=True))
        return [found.get(raw) for raw in self._order]


def _askable(name: bytes) -> bool:
    """Whether ``name`` can be asked for on one line of the batch (a base read from a file
    changed behind segue's back could hold anything; a path, any byte): nothing git would read
    as the line's end (it drops a carriage return before the newline) or not read at all."""
    return bool(name) and not any(c in name for c in b"\n\r\0")


def _trees(reader: ObjectReader, ids: list[bytes]) -> list[Entries]:
    found = reader.objects([raw.hex() for raw in ids])
    out = []
    for raw, got in zip(ids, found, strict=True):
        if got is None or got[1] != "tree":
            raise CheckpointError(f"the repository has lost the tree {raw.hex()}")
        out.append(_parsed(raw, got[2]))
    return out


def _parsed(raw: bytes, data: bytes) -> Entries:
    try:
        return parse_tree(data, len(raw))
    except ValueError:
        raise CheckpointError(f"the repository's tree {raw.hex()} is broken") from None


def folders_on(commit: str, paths: Sequence[bytes]) -> tuple[list[Folder], list[bytes]]:
    """The folders on ``paths`` (the top first) and the names that ask ``commit`` for their trees
    (``<commit>^{tree}``, ``<commit>:<folder>``: git walks to each itself), for
    :func:`edited_tree`'s ``known``."""
    found: set[Folder] = {()}
    for path in paths:
        parts = tuple(path.split(b"/"))
        found.update(parts[:n] for n in range(len(parts)))
    folders = sorted(found, key=len)
    head = commit.encode("ascii", "replace")
    return folders, [head + b"^{tree}", *(head + b":" + b"/".join(f) for f in folders[1:])]


def edited_tree(
    reader: ObjectReader,
    root: str,
    edits: Sequence[Edit],
    algorithm: str,
    known: Mapping[Folder, Found | None] | None = None,
) -> tuple[str, dict[bytes, tuple[int, bytes]], dict[bytes, bytes | None] | None]:
    """The tree ``root`` (a tree id) with ``edits`` made in their order, the tree objects that
    are new (raw id: (kind, data)), and what each edited path was in ``root`` (its entry, None
    where there was none; all None where a folder became a file or a file a folder).
    ``known``: trees already read, by folder (each used only where it is the tree the folder's
    parent names; others are asked for)."""
    if not edits:
        return root, {}, {}
    known = known or {}
    split = [(tuple(path.split(b"/")), value) for path, value in edits]
    top = known.get(())
    if top is not None and top[0] == root and top[1] == "tree":
        entries = _parsed(bytes.fromhex(root), top[2])
    else:
        entries = _trees(reader, [bytes.fromhex(root)])[0]
    trees = _Folders(entries, len(root) // 2)
    trees.read(reader, {parts[:n] for parts, _ in split for n in range(1, len(parts))}, known)
    for parts, value in split:
        trees.edit(parts, value)
    tree, made = trees.made(root, algorithm)
    return tree, made, None if trees.reshaped else trees.before


class _Folders:
    """The folders on the changed paths, as they are edited: each folder's entries (a folder
    absent is none, or not read), the folders to make anew, and those whose entries are no
    longer in git's order (a name added, or a file that became a folder or back)."""

    def __init__(self, root: Entries, raw_length: int) -> None:
        self.work: dict[Folder, Entries] = {(): root}
        self.changed: set[Folder] = set()
        self.reordered: set[Folder] = set()
        self.raw_length = raw_length
        self.before: dict[bytes, bytes | None] = {}  # each edited path's entry as it was
        self.reshaped = False  # a folder has become a file, or a file a folder

    def read(
        self, reader: ObjectReader, needed: set[Folder], known: Mapping[Folder, Found | None]
    ) -> None:
        """The folders ``needed`` that the tree has, a level at a time (those ``known`` as
        their parent names them taken as they are)."""
        work = self.work
        for depth in range(1, max((len(d) for d in needed), default=0) + 1):
            level = []
            for folder in needed:
                if len(folder) != depth or folder[:-1] not in work:
                    continue
                entry = work[folder[:-1]].get(folder[-1])
                if entry is None or not is_tree_entry(entry):
                    continue
                raw = entry[-self.raw_length :]
                got = known.get(folder)
                if got is not None and got[1] == "tree" and got[0] == raw.hex():
                    work[folder] = _parsed(raw, got[2])
                else:
                    level.append((folder, raw))
            found = _trees(reader, [raw for _, raw in level])
            for (folder, _), entries in zip(level, found, strict=True):
                work[folder] = entries

    def _is_folder(self, folder: Folder) -> bool:
        entry = self.work[folder[:-1]].get(folder[-1])
        return entry is not None and is_tree_entry(entry) and folder in self.work

    def _drop(self, folder: Folder) -> None:
        """A folder and everything below it, gone."""
        if folder not in self.work:
            return  # (nor anything below it: a folder is read only when its parent is)
        self.reshaped = True
        for key in [k for k in self.work if k[: len(folder)] == folder]:
            del self.work[key]

    def edit(self, parts: Folder, value: tuple[bytes, bytes] | None) -> None:
        """The file at ``parts`` set to ``value`` (mode, raw id), or removed (None)."""
        work = self.work
        folders = [parts[:n] for n in range(len(parts))]  # the root, then each folder on it
        on_folders = all(map(self._is_folder, folders[1:]))
        if on_folders:
            self.before.setdefault(b"/".join(parts), work[folders[-1]].get(parts[-1]))
        else:
            self.before.setdefault(b"/".join(parts), None)
            # (a file on the way is a folder from now on; a folder not there yet is just new)
            self.reshaped = self.reshaped or any(
                (entry := work.get(f[:-1], {}).get(f[-1])) is not None and not is_tree_entry(entry)
                for f in folders[1:]
            )
        if value is None:  # removed: only where each folder on the path is one
            if not on_folders or parts[-1] not in work[folders[-1]]:
                return
            del work[folders[-1]][parts[-1]]
            self._drop(parts)
        else:
            for folder in folders[1:]:
                if not self._is_folder(folder):
                    self._drop(folder)  # (a file there, or nothing: a folder takes its place)
                    work[folder] = {}
                    self.reordered.add(folder[:-1])
                    work[folder[:-1]][folder[-1]] = _remade(folder[-1])
            old = work[folders[-1]].get(parts[-1])
            if old is None or is_tree_entry(old):
                self.reordered.add(folders[-1])
            work[folders[-1]][parts[-1]] = tree_entry(value[0], parts[-1], value[1])
            self._drop(parts)  # (a folder there: the file takes its place)
        for folder in folders:
            self.changed.add(folder)
            if folder:
                work[folder[:-1]][folder[-1]] = _remade(folder[-1])

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
                work[folder[:-1]][folder[-1]] = tree_entry(TREE_MODE, folder[-1], raw)
            else:
                top = raw
        return (top.hex() if top else root), new


def _remade(name: bytes) -> bytes:
    """A folder's entry whose tree is made anew (its id given once it is made)."""
    return tree_entry(TREE_MODE, name, b"")
