"""git's objects as bytes, and one pack of them written into a repository.

A snapshot writes a hundred small objects; ``git fast-import`` took 20–25 ms of a 60 ms
capture to do it (most of it loading and deltifying the trees it rebuilds). Written here, in one
pack file with its index, they cost 3–5 ms. The formats are git's documented ones
(``Documentation/gitformat-pack.txt``): pack version 2, its index version 2, for SHA-1 and
SHA-256 repositories alike. Objects are stored whole (no deltas: git's next repack makes them),
each compressed as ``_LEVEL`` says, and the files are made as git makes them: a temporary file
in ``objects/pack``, flushed to the disk, renamed in, the pack before its index (a pack is seen
by git only once its index is there). ``git fsck`` is the oracle of the tests.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import struct
import zlib
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import BinaryIO

__all__ = [
    "BLOB",
    "COMMIT",
    "TREE",
    "TREE_MODE",
    "commit_bytes",
    "hash_name",
    "is_object_id",
    "is_tree_entry",
    "object_id",
    "parse_tree",
    "remove_leftovers",
    "tree_bytes",
    "tree_entry",
    "write_pack",
]

COMMIT, TREE, BLOB = 1, 2, 3
_NAMES = {COMMIT: b"commit", TREE: b"tree", BLOB: b"blob"}
TREE_MODE = b"40000"
# a tree's entries (each whole, and its name): its mode, its name, its raw id (20 bytes of SHA-1,
# 32 of SHA-256)
_ENTRY = {n: re.compile(rb"([0-7]+ ([^\0]+)\0.{%d})" % n, re.DOTALL) for n in (20, 32)}
_TMP = "tmp_pack_segue-"  # (git's own temporary files are tmp_pack_*: ours say whose they are)


def hash_name(id_length: int) -> str:
    """The hash of a repository whose object ids are ``id_length`` hex digits long."""
    return "sha256" if id_length == 64 else "sha1"


def is_object_id(text: str) -> bool:
    """Whether ``text`` is an object id as git writes one (40 hex digits, or 64)."""
    return len(text) in (40, 64) and all(c in "0123456789abcdef" for c in text)


def object_id(kind: int, data: bytes, algorithm: str) -> bytes:
    """The raw id git gives ``data`` as an object of ``kind``."""
    h = hashlib.new(algorithm, b"%s %d\0" % (_NAMES[kind], len(data)))
    h.update(data)
    return h.digest()


def is_tree_entry(entry: bytes) -> bool:
    """Whether a tree's entry (as :func:`parse_tree` gives it) is a folder's."""
    return entry.startswith((b"40000 ", b"040000 "))


def tree_entry(mode: bytes, name: bytes, raw: bytes) -> bytes:
    """A tree's entry as git writes it: its mode, its name, its raw id."""
    return mode + b" " + name + b"\0" + raw


def tree_bytes(entries: dict[bytes, bytes], *, in_order: bool = False) -> bytes:
    """A tree object of ``entries`` (name: entry), in git's order: by name, a folder's name as
    if it ended with ``/`` (``in_order``: they are in that order already)."""
    if in_order:
        return b"".join(entries.values())
    order = sorted(
        (name + b"/" if is_tree_entry(entry) else name, entry) for name, entry in entries.items()
    )
    return b"".join([entry for _, entry in order])


def parse_tree(data: bytes, raw_length: int) -> dict[bytes, bytes]:
    """The entries of a tree object (name: the entry's bytes, as :func:`tree_entry` makes
    them); ``ValueError`` for bytes that are not one."""
    found = _ENTRY[raw_length].findall(data)
    if sum(len(entry) for entry, _ in found) != len(data):  # (bytes findall passed over)
        raise ValueError("not a tree object")
    return {name: entry for entry, name in found}


def commit_bytes(tree: str, parents: Iterable[str], who: bytes, when: int, message: bytes) -> bytes:
    """A commit object: its author and committer ``who`` at ``when`` (UTC), the message as it
    is (no newline added, as ``git fast-import`` keeps it)."""
    stamp = b"%s %d +0000" % (who, when)
    lines = [b"tree " + tree.encode()]
    lines += [b"parent " + p.encode() for p in parents]
    lines += [b"author " + stamp, b"committer " + stamp]
    return b"\n".join(lines) + b"\n\n" + message


# How hard each kind of object is compressed: a tree's ids are random bytes, so zlib gains a
# third of its size at fifteen times the time of storing it (git's next repack makes it a
# delta); blobs and commits at git's own level for the objects it writes one by one
# (core.looseCompression: 1, the fastest).
_LEVEL = {TREE: 0, BLOB: 1, COMMIT: 1}


def _compressed(data: bytes, level: int) -> bytes:
    """``data`` as a zlib stream, its window no larger than the data needs: a small object's
    stream then costs a fifth of the time (zlib clears its whole window and tables for each
    stream), and is as small."""
    window = max(9, min(15, (len(data) + 262).bit_length()))
    squeeze = zlib.compressobj(level, zlib.DEFLATED, window, window - 7)
    return squeeze.compress(data) + squeeze.flush()


def _header(kind: int, size: int) -> bytes:
    out = bytearray()
    byte = (kind << 4) | (size & 0x0F)
    size >>= 4
    while size:
        out.append(byte | 0x80)
        byte = size & 0x7F
        size >>= 7
    out.append(byte)
    return bytes(out)


def write_pack(pack_dir: Path, objects: dict[bytes, tuple[int, bytes]], algorithm: str) -> None:
    """Write ``objects`` (raw id: (kind, data)) as one pack with its index into ``pack_dir``
    (``pack-<hash>``; nothing when there are none). ``OSError`` when it cannot be written:
    then nothing of it is left."""
    if not objects:
        return
    tag = f"{os.getpid()}-{os.urandom(6).hex()}"
    pack_tmp = pack_dir / f"{_TMP}{tag}.pack"
    idx_tmp = pack_dir / f"{_TMP}{tag}.idx"
    try:
        pack_dir.mkdir(exist_ok=True)  # (git makes it with the repository; a hand-made one may not)
        offsets: dict[bytes, tuple[int, int]] = {}  # raw id: (offset, crc32)
        digest = hashlib.new(algorithm)
        with _new_file(pack_tmp) as pack:
            head = b"PACK" + struct.pack(">II", 2, len(objects))
            digest.update(head)
            parts = [head]
            offset = len(head)
            for raw, (kind, data) in objects.items():
                entry = _header(kind, len(data)) + _compressed(data, _LEVEL[kind])
                offsets[raw] = (offset, zlib.crc32(entry))
                digest.update(entry)
                parts.append(entry)
                offset += len(entry)
            trailer = digest.digest()
            parts.append(trailer)
            pack.write(b"".join(parts))
            pack.flush()
            os.fsync(pack.fileno())
        with _new_file(idx_tmp) as idx:
            data = _index(offsets, trailer, algorithm)
            idx.write(data)
            idx.flush()
            os.fsync(idx.fileno())
        name = f"pack-{trailer.hex()}"
        for tmp, final in ((pack_tmp, f"{name}.pack"), (idx_tmp, f"{name}.idx")):
            if (pack_dir / final).exists():  # (the same objects, written before)
                tmp.unlink()
            else:
                os.replace(tmp, pack_dir / final)
    finally:
        for tmp in (pack_tmp, idx_tmp):
            with contextlib.suppress(FileNotFoundError):
                tmp.unlink()


@contextlib.contextmanager
def _new_file(path: Path) -> Iterator[BinaryIO]:
    """A new read-only file, readable by whoever can read its folder: as git makes a pack in a
    repository shared with a group (``core.sharedRepository``), whatever segue's umask."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC | os.O_NOFOLLOW, 0o444)
    try:
        os.fchmod(fd, 0o444 & (os.stat(path.parent).st_mode | 0o400))
    except BaseException:
        os.close(fd)
        raise
    with os.fdopen(fd, "wb") as f:
        yield f


def _index(offsets: dict[bytes, tuple[int, int]], trailer: bytes, algorithm: str) -> bytes:
    """A pack's index, version 2."""
    names = sorted(offsets)
    fanout = [0] * 256
    for raw in names:
        fanout[raw[0]] += 1
    total = 0
    for i in range(256):
        total += fanout[i]
        fanout[i] = total
    small: list[int] = []
    large: list[int] = []
    for raw in names:
        offset = offsets[raw][0]
        if offset < 0x80000000:
            small.append(offset)
        else:
            small.append(0x80000000 | len(large))
            large.append(offset)
    body = b"".join(
        [
            b"\xfftOc",
            struct.pack(">I", 2),
            struct.pack(">256I", *fanout),
            *names,
            struct.pack(f">{len(names)}I", *(offsets[raw][1] for raw in names)),
            struct.pack(f">{len(small)}I", *small),
            struct.pack(f">{len(large)}Q", *large),
            trailer,
        ]
    )
    return body + hashlib.new(algorithm, body).digest()


def remove_leftovers(pack_dir: Path) -> None:
    """The temporary files of a capture that was killed as it wrote them (its process gone)."""
    try:
        names = os.listdir(pack_dir)
    except OSError:
        return
    for name in names:
        if not name.startswith(_TMP):
            continue
        pid = name[len(_TMP) :].split("-", 1)[0]
        if not pid.isdigit():
            continue
        try:
            os.kill(int(pid), 0)
            continue  # still running (or another process has its number): left
        except ProcessLookupError:
            pass
        except OSError:
            continue
        with contextlib.suppress(OSError):
            (pack_dir / name).unlink()
