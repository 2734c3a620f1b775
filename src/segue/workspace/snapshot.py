"""A snapshot of a workspace (an app thread's folder) as a git commit, made without touching the
user's HEAD, branches, index, stash or files.

The folder's repository keeps the snapshots (a folder outside git gets a private repository in
segue's data folder). Each workspace has an index file of segue's own, seeded once from a copy of
the user's index, so that git's stat cache makes the listing cost a ``git status``: ``git
status`` on that index lists what changed since the last snapshot (modified, deleted and new
files, ignored ones left out), and only those are read. One ``git fast-import`` then writes
their bytes, the trees and the commit into one pack and points a ref of segue's at it
(``refs/segue/…``), while ``update-index --index-info`` makes segue's index hold the new tree
beside it. The commit segue's index holds is kept beside the index; it is forgotten while the
index is ahead of it, so a snapshot killed half-way is never believed. A snapshot's first parent
is the commit segue's index held; its second, when different, the thread's previous snapshot.

Left out, each with its reason: a file over the size cap (``$SEGUE_CHECKPOINT_MAX_FILE`` bytes,
default 8 MiB), a special file (a FIFO, a socket), an unreadable one, a folder that is a git
repository of its own; outside git, the common build and dependency folders too.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import os
import re
import stat
import subprocess
import threading
from collections.abc import Iterator, Mapping
from datetime import UTC, datetime
from pathlib import Path

import msgspec

from segue.model.errors import CheckpointError
from segue.support.places import data_dir
from segue.workspace.changes import Change, Skipped, Snapshot
from segue.workspace.git import Git, failed, find_git, holding, init_bare, probe

__all__ = [
    "MAX_FILE_VARIABLE",
    "Change",
    "Skipped",
    "Snapshot",
    "Workspace",
    "capture",
    "changes_between",
    "locate",
    "max_file_bytes",
]

MAX_FILE_VARIABLE = "SEGUE_CHECKPOINT_MAX_FILE"
DEFAULT_MAX_FILE = 8 << 20
EMPTY_TREE = {
    40: "4b825dc642cb6eb9a060e54bf8d69288fbee4904",  # SHA-1
    64: "6ef19b41225c5369f1c104d45d8d85efa9b057b53b14b4b9b939dd74decc5321",  # SHA-256
}
# left out of a private repository's snapshots (a folder outside git has no .gitignore to say so)
PRIVATE_EXCLUDES = (
    ".git/",
    "node_modules/",
    ".venv/",
    "venv/",
    "__pycache__/",
    "*.pyc",
    ".mypy_cache/",
    ".pytest_cache/",
    ".ruff_cache/",
    ".tox/",
    ".nox/",
    ".gradle/",
    ".next/",
    ".nuxt/",
    ".parcel-cache/",
    ".terraform/",
    ".cache/",
    "target/",
    "build/",
    "dist/",
    ".DS_Store",
)


def max_file_bytes(env: Mapping[str, str]) -> int:
    """The size cap for one file in a snapshot: ``$SEGUE_CHECKPOINT_MAX_FILE`` (bytes, or with
    a K/M/G suffix), else 8 MiB."""
    text = env.get(MAX_FILE_VARIABLE, "").strip().upper()
    scale = 1
    if text[-1:] in ("K", "M", "G"):
        scale = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}[text[-1]]
        text = text[:-1]
    try:
        value = int(float(text) * scale) if text else DEFAULT_MAX_FILE
    except (ValueError, OverflowError):  # garbage, inf, nan: the default
        return DEFAULT_MAX_FILE
    return value if value > 0 else DEFAULT_MAX_FILE


class Workspace(msgspec.Struct, frozen=True):
    """Where a thread's folder is snapshotted: ``git`` on its repository (with segue's own
    index), ``prefix`` the folder below the repository's top ('' at the top)."""

    folder: Path
    git: Git
    prefix: str
    private: bool  # a private repository in segue's data folder (the folder is not in git)

    def pathspec(self) -> list[str]:
        return ["--", self.prefix] if self.prefix else []

    def relative(self, path: str) -> str:
        """A path from the repository's top, as the folder sees it."""
        if self.prefix and path.startswith(self.prefix + "/"):
            return path[len(self.prefix) + 1 :]
        return path


def _key(*parts: str) -> str:
    return hashlib.blake2b(
        "\0".join(parts).encode("utf-8", "surrogateescape"), digest_size=10
    ).hexdigest()


def _private_dir(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True, mode=0o700)
    return path


def locate(folder: str | Path, env: Mapping[str, str], *, create: bool = True) -> Workspace:
    """The workspace of ``folder``: the git repository it is in, else a private repository for
    it in segue's data folder (created on first use; with ``create`` False, a folder with no
    private repository yet is an error, and nothing is written)."""
    where = Path(folder)
    try:
        real = where.resolve(strict=True)
    except (OSError, RuntimeError):
        raise CheckpointError(f"{where}: the workspace folder is gone") from None
    if not real.is_dir():
        raise CheckpointError(f"{where}: the workspace is not a folder")
    program = find_git(env)
    store = data_dir(env) / "checkpoints"
    found = probe(program, real, env)
    if found is not None:
        git_dir, top = found
        top = top.resolve()
        prefix = "" if real == top else real.relative_to(top).as_posix()
        private = False
    else:
        home = env.get("HOME")
        if real == Path(real.anchor) or (home and real == Path(home).resolve()):
            which = "the root" if real == Path(real.anchor) else "your home"
            raise CheckpointError(
                f"{real}: not snapshotted: it is {which} folder, not a project (run the agent "
                "in the project's folder, or make it a git repository)"
            )
        name = f"{real.name or 'root'}-{_key(str(real))}.git"
        if not create and not (store / "repos" / name / "HEAD").is_file():
            raise CheckpointError(f"{real}: no snapshot of this folder has been taken")
        git_dir = (_private_dir(store / "repos") if create else store / "repos") / name
        top, prefix, private = real, "", True
        try:
            _init_private(program, git_dir, env)
        except OSError as exc:
            raise CheckpointError(
                f"{git_dir}: cannot make the private repository: {exc.strerror}"
            ) from None
    index = (_private_dir(store / "index") if create else store / "index") / _key(
        str(git_dir), prefix
    )
    return Workspace(real, Git(program, git_dir, top, index, env), prefix, private)


def _init_private(program: str, git_dir: Path, env: Mapping[str, str]) -> None:
    if (git_dir / "HEAD").is_file():
        return
    init_bare(program, git_dir, env)
    (git_dir / "info").mkdir(exist_ok=True)
    (git_dir / "info" / "exclude").write_text(
        "# left out of segue's snapshots of a folder outside git\n"
        + "\n".join(PRIVATE_EXCLUDES)
        + "\n"
    )


@contextlib.contextmanager
def _locked(index: Path) -> Iterator[None]:
    """One capture or restore of a workspace at a time (across processes). Every git started
    within it holds the lock too: one that outlives a killed segue (an ``update-index`` still
    writing segue's index) keeps the next capture waiting until it has ended."""
    fd = os.open(
        f"{index}.segue-lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW, 0o600
    )
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        with holding(fd):
            yield
    finally:
        os.close(fd)


_CONVERTING = re.compile(rb"\b(filter|text|eol|crlf|ident|working-tree-encoding)\b")


def _converts(ws: Workspace) -> bool:
    """Whether git changes some files' bytes on their way into the repository (a clean filter
    such as LFS's, line-ending conversion): then the index's blobs are not the files' bytes."""
    done = ws.git.run(["config", "--get-regexp", r"^core\.(autocrlf|eol)$"], check=False)
    for line in done.stdout.decode("utf-8", "replace").splitlines():
        key, _, value = line.partition(" ")
        if (key, value.lower()) in (("core.autocrlf", "true"), ("core.autocrlf", "input")):
            return True
        if (key, value.lower()) == ("core.eol", "crlf"):
            return True
    # (segue's index is not the user's: the attribute files are found in HEAD and on disk)
    listed = ws.git.run(["ls-tree", "-r", "-z", "--name-only", "HEAD"], check=False).stdout
    names = [
        n for n in listed.split(b"\0") if n == b".gitattributes" or n.endswith(b"/.gitattributes")
    ]
    places = [ws.git.work_tree / n.decode("utf-8", "surrogateescape") for n in names]
    places.append(ws.git.work_tree / ".gitattributes")
    places.append(ws.git.git_dir / "info" / "attributes")
    for place in places:
        try:
            if _CONVERTING.search(place.read_bytes()):
                return True
        except OSError:
            continue
    return False


def _seed(ws: Workspace) -> None:
    """segue's index for the workspace, the first time: a copy of the user's index (its stat
    cache spares hashing every tracked file), else HEAD's tree, else empty. Where git converts
    files on their way in, empty: every file is then read as its bytes, never taken from the
    user's index as git's converted copy."""
    index = ws.git.index
    assert index is not None
    if index.exists():
        return
    if not ws.private and _converts(ws):
        ws.git.run(["read-tree", "--empty"])
        return
    if not ws.private:
        theirs = Path(ws.git.out(["rev-parse", "--git-path", "index"]))
        if not theirs.is_absolute():
            theirs = ws.git.work_tree / theirs
        try:
            data = theirs.read_bytes()
        except OSError:
            data = b""
        if data:
            tmp = index.with_name(index.name + f".{os.getpid()}.tmp")
            tmp.write_bytes(data)
            os.replace(tmp, index)
            return
        _seed_fresh(ws)


def _listing(ws: Workspace, *, write: bool = True) -> list[tuple[str, str]]:
    """What differs between segue's index and the folder: (tag, path) with tag C (changed), R
    (removed) or ? (new, not ignored). ``git status`` on segue's index finds them with the
    user's ``git status``'s speed (its stat cache, its threads), and refreshes that index."""
    done = ws.git.run(
        [
            *(() if write else ("--no-optional-locks",)),  # a preview writes not even the cache
            "-c",
            "core.untrackedCache=true",  # kept in segue's index: the next listing walks less
            "status",
            "--porcelain=v2",
            "-z",
            "--untracked-files=all",
            "--no-renames",
            "--ignore-submodules=dirty",
            *ws.pathspec(),
        ],
        check=False,
    )
    if done.returncode != 0:
        why = done.stderr.decode("utf-8", "replace").strip()[:300]
        raise CheckpointError(f"{ws.folder}: git cannot list the folder's files: {why}")
    entries: list[tuple[str, str]] = []
    for raw in done.stdout.split(b"\0"):
        kind = raw[:2]
        if kind == b"? ":
            entries.append(("?", raw[2:].decode("utf-8", "surrogateescape")))
        elif kind in (b"1 ", b"u "):
            fields = raw.split(b" ", 8 if kind == b"1 " else 10)
            if len(fields) < 9:
                continue
            worktree = chr(fields[1][1]) if len(fields[1]) == 2 else "."
            path = fields[-1].decode("utf-8", "surrogateescape")
            if kind == b"u ":
                entries.append(("C", path))  # a conflict in the index copy: the file as it is
            elif worktree == "D":
                entries.append(("R", path))
            elif worktree != ".":
                entries.append(("C", path))
    return entries


def _screen(
    ws: Workspace, listing: list[tuple[str, str]], cap: int
) -> tuple[list[str], list[Skipped]]:
    """The paths to bring into the index, and those left out with their reason."""
    take: list[str] = []
    skipped: list[Skipped] = []
    top = ws.git.work_tree
    for tag, path in listing:
        if tag == "R":
            take.append(path)
            continue
        if path.endswith("/"):
            skipped.append(Skipped(ws.relative(path.rstrip("/")), "a git repository of its own"))
            continue
        full = top / path
        try:
            info = full.lstat()
        except FileNotFoundError:
            take.append(path)  # gone since it was listed: removed
            continue
        except OSError as exc:
            skipped.append(Skipped(ws.relative(path), f"unreadable ({exc.strerror})"))
            continue
        if stat.S_ISLNK(info.st_mode):
            take.append(path)
        elif not stat.S_ISREG(info.st_mode):
            skipped.append(Skipped(ws.relative(path), "not a regular file"))
        elif info.st_size > cap:
            skipped.append(
                Skipped(ws.relative(path), f"over the size cap ({info.st_size:,} > {cap:,} bytes)")
            )
        elif not os.access(full, os.R_OK):
            skipped.append(Skipped(ws.relative(path), "unreadable (permission denied)"))
        else:
            take.append(path)
    return take, skipped


def capture(
    ws: Workspace,
    ref: str,
    *,
    parent: str | None,
    message: str,
    max_bytes: int = DEFAULT_MAX_FILE,
) -> Snapshot:
    """Snapshot the folder as a commit under ``ref``, its parent the thread's previous snapshot
    ``parent`` (a commit id; None: the first). The changes are counted against ``parent``, else
    against HEAD (in a repository that has one), else against nothing.

    The files are taken as their bytes (no clean filter, no line-ending conversion), so that a
    restore gives back exactly what was there; git's stat cache in segue's index says which
    files changed since the last snapshot, and only those are read. One ``git fast-import``
    writes their blobs, the trees and the commit into one pack (a file created per object
    costs more than the whole listing on a slow disk)."""
    index = ws.git.index
    assert index is not None
    with _locked(index):
        # git's lock of segue's index, left by a git killed under this lock (each git holds
        # this lock while it runs, and only they write this index): stale
        index.with_name(index.name + ".lock").unlink(missing_ok=True)
        _seed(ws)
        try:
            commit, tree, skipped = _snapshot(ws, ref, parent, message, max_bytes)
        except CheckpointError:
            # segue's index or its base is no use: an index copy git cannot read (a split
            # index, a conflict), or objects gone from the repository (segue's refs deleted,
            # then a gc): a fresh copy of the user's index, and no link to a snapshot gone
            _reset_index(ws)
            if parent is not None and not _is_commit(ws, parent):
                parent = None
            commit, tree, skipped = _snapshot(ws, ref, parent, message, max_bytes)
    if parent is not None:
        changes, against = changes_between(ws, f"{parent}^{{tree}}", tree), "previous"
    elif not ws.private and (head := _changes_from_head(ws, tree)) is not None:
        changes, against = head, "HEAD"
    else:
        changes, against = changes_between(ws, None, tree), "nothing"
    return Snapshot(commit, tree, ref, changes, tuple(skipped), against)


def _snapshot(
    ws: Workspace, ref: str, parent: str | None, message: str, max_bytes: int
) -> tuple[str, str, list[Skipped]]:
    """The snapshot's commit and tree, and what was left out. segue's index is brought to the
    new tree while git fast-import writes it."""
    index = ws.git.index
    assert index is not None
    base = _base(ws)
    listing = _listing(ws)
    take, skipped = _screen(ws, listing, max_bytes)
    gone = [p.path if not ws.prefix else f"{ws.prefix}/{p.path}" for p in skipped]
    stream, entries = _stream(ws, ref, base, parent, message, take, gone)
    indexer = None
    if entries:
        # an index ahead of its base is never believed: with no base, the next snapshot starts
        # from a commit of the index as it is (or, its objects missing, from a fresh copy)
        _state(index).unlink(missing_ok=True)
        indexer = _Background(ws, ["update-index", "-z", "--index-info"], b"".join(entries))
    try:
        # (started last, and always given its whole stream: a fast-import left without one
        # would leave its half-written pack in the user's repository)
        commit, tree = _import(ws, stream)
    finally:
        indexed = indexer is None or indexer.wait()
    if indexed:
        _state(index).write_text(commit + "\n")
    return commit, tree, skipped


# git fast-import compresses each object in a zlib stream of its own, and with glibc's default
# malloc each stream's buffers are fresh pages from the kernel: kept instead, the import of a
# hundred files takes about a third less time. (A user's own setting is left as it is.)
_IMPORT_TUNABLES = "glibc.malloc.mmap_threshold=8388608:glibc.malloc.trim_threshold=134217728"


def _import(ws: Workspace, stream: bytes) -> tuple[str, str]:
    """The commit git fast-import makes of ``stream``, and its tree (the stream asks for the
    mark, then lists the root). A fast-import that dies writes its report into the repository's
    git folder: that is the user's, so the report goes, and the error is segue's to tell."""
    extra = {} if "GLIBC_TUNABLES" in ws.git.env else {"GLIBC_TUNABLES": _IMPORT_TUNABLES}
    process = ws.git.start(
        ["fast-import", "--quiet", "--done", "--force", "--cat-blob-fd=1"], extra_env=extra
    )
    done = ws.git.finish(process, stream, "fast-import")
    if done.returncode != 0:
        with contextlib.suppress(OSError):
            (ws.git.git_dir / f"fast_import_crash_{process.pid}").unlink()
        raise failed(done, ws.git.work_tree, "fast-import")
    lines = done.stdout.decode("ascii", "replace").splitlines()
    fields = lines[1].split() if len(lines) == 2 else []
    if len(fields) < 3 or fields[1] != "tree":
        raise CheckpointError(f"{ws.folder}: git fast-import said {done.stdout[:200]!r}")
    return lines[0].strip(), fields[2]


class _Background:
    """A git command given its whole input in a thread of its own, while another one runs."""

    def __init__(self, ws: Workspace, args: list[str], stdin: bytes) -> None:
        process = ws.git.start(args)
        self.ok = False
        self.thread = threading.Thread(
            target=self._run, args=(ws, process, stdin, args[0]), daemon=True
        )
        self.thread.start()

    def _run(
        self, ws: Workspace, process: subprocess.Popen[bytes], stdin: bytes, what: str
    ) -> None:
        with contextlib.suppress(CheckpointError):  # (past the time limit: not done)
            self.ok = ws.git.finish(process, stdin, what).returncode == 0

    def wait(self) -> bool:
        """Whether it did its work."""
        self.thread.join()
        return self.ok


def _state(index: Path) -> Path:
    """Where the commit whose tree segue's index holds is kept (beside the index)."""
    return index.with_name(index.name + ".base")


def _reset_index(ws: Workspace) -> None:
    """segue's index afresh: a copy of the user's, else HEAD's tree."""
    index = ws.git.index
    assert index is not None
    index.unlink(missing_ok=True)
    _state(index).unlink(missing_ok=True)
    _seed(ws)
    try:
        _listing(ws)
    except CheckpointError:  # the user's index is no use to git here either
        index.unlink(missing_ok=True)
        _seed_fresh(ws)


def _is_commit(ws: Workspace, rev: str) -> bool:
    done = ws.git.run(["cat-file", "-t", rev], check=False)
    return done.returncode == 0 and done.stdout.strip() == b"commit"


def _base(ws: Workspace) -> str:
    """A commit whose tree is what segue's index holds: the one the last snapshot left, else
    one made of the index now (the first time: a copy of the user's index)."""
    index = ws.git.index
    assert index is not None
    try:
        known = _state(index).read_text().strip()
    except OSError:
        known = ""
    if known:
        return known  # checked by its use: fast-import fails on a commit that is gone
    tree = ws.git.out(["write-tree"])  # fails on a conflict in the index copy: it is reset
    return ws.git.out(["commit-tree", tree, "-m", "segue: the index a snapshot starts from"])


def file_entry(path: Path) -> tuple[str, bytes] | None:
    """A file as git keeps it: its mode (``100644``, ``100755``, ``120000`` for a link) and its
    bytes (a link's: its target); None when it is not there, or neither a file nor a link.
    ``OSError`` for one that cannot be read.

    What is read is what was opened: a file replaced by a link or a FIFO between a look and the
    read is never followed nor waited on (``O_NOFOLLOW``, ``O_NONBLOCK``, then ``fstat``)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        return None
    except OSError as exc:
        if exc.errno != errno.ELOOP:  # (ELOOP: the last part is a link)
            raise
        try:
            return "120000", os.fsencode(os.readlink(path))
        except FileNotFoundError:
            return None
        except OSError as again:
            if again.errno == errno.EINVAL:  # (no longer a link: gone and back, as something)
                return None
            raise
    with os.fdopen(fd, "rb") as f:
        info = os.fstat(f.fileno())
        if not stat.S_ISREG(info.st_mode):
            return None
        return ("100755" if info.st_mode & 0o111 else "100644"), f.read()


def blob_id(data: bytes, like: str) -> str:
    """The id git gives ``data`` as a blob, in the hash of the object id ``like`` (SHA-1 or
    SHA-256 by its length)."""
    h = hashlib.new("sha256" if len(like) == 64 else "sha1", b"blob %d\0" % len(data))
    h.update(data)
    return h.hexdigest()


def _quoted(path: str) -> bytes:
    """A path as ``git fast-import`` reads it: C-quoted, so any byte is safe."""
    raw = path.encode("utf-8", "surrogateescape")
    out = bytearray(b'"')
    for byte in raw:
        if byte in (0x22, 0x5C):
            out += b"\\" + bytes([byte])
        elif byte < 0x20 or byte == 0x7F:
            out += b"\\%03o" % byte
        else:
            out.append(byte)
    return bytes(out + b'"')


def _stream(
    ws: Workspace,
    ref: str,
    base: str,
    parent: str | None,
    message: str,
    take: list[str],
    gone: list[str],
) -> tuple[bytes, list[bytes]]:
    """What git fast-import is given to make the snapshot commit: ``base`` with the changed
    files as they are on disk and the left out ones removed, ``parent`` its second parent when
    it is another commit (the thread's chain); then it says the commit and its tree. With it,
    the index entries that make segue's index hold that tree."""
    zero = "0" * len(base)
    top = ws.git.work_tree
    when = int(datetime.now(UTC).timestamp())
    msg = message.encode("utf-8", "surrogateescape")
    parts = [
        b"commit %s\nmark :1\n" % ref.encode(),
        b"committer segue <segue@localhost> %d +0000\n" % when,
        b"data %d\n%s\n" % (len(msg), msg),
        b"from %s\n" % base.encode(),
    ]
    if parent is not None and parent != base:
        parts.append(b"merge %s\n" % parent.encode())
    entries: list[bytes] = []
    left_out = set(gone)
    for path in [*take, *gone]:
        full = top / path
        name = path.encode("utf-8", "surrogateescape")
        entry = None
        if path not in left_out:
            try:
                entry = file_entry(full)  # None: gone since it was listed
            except OSError as exc:
                raise CheckpointError(f"{full}: cannot read it: {exc.strerror}") from None
        if entry is None:
            parts.append(b"D %s\n" % _quoted(path))
            entries.append(b"0 %s\t%s\0" % (zero.encode(), name))
            continue
        mode, data = entry[0].encode(), entry[1]
        parts.append(b"M %s inline %s\ndata %d\n" % (mode, _quoted(path), len(data)))
        parts += [data, b"\n"]
        entries.append(b"%s %s\t%s\0" % (mode, blob_id(data, base).encode(), name))
    parts.append(b'\nget-mark :1\nls :1 ""\ndone\n')
    return b"".join(parts), entries


def _changes_from_head(ws: Workspace, tree: str) -> tuple[Change, ...] | None:
    try:
        return changes_between(ws, "HEAD^{tree}", tree)
    except CheckpointError:
        return None  # no commit yet


def _seed_fresh(ws: Workspace) -> None:
    if ws.private or ws.git.run(["read-tree", "HEAD"], check=False).returncode != 0:
        ws.git.run(["read-tree", "--empty"])  # no commit yet: an empty index


def changes_between(ws: Workspace, old: str | None, new: str) -> tuple[Change, ...]:
    """The files of the folder that differ from ``old`` (a tree-ish; None: nothing) to ``new``,
    with their lines added and removed."""
    if old is None:
        old = EMPTY_TREE[len(new)] if len(new) in EMPTY_TREE else ws.git.out(["mktree"], stdin=b"")
    out = ws.git.run(
        ["diff-tree", "-r", "-z", "--raw", "--numstat", "--no-renames", old, new, *ws.pathspec()]
    ).stdout
    statuses: dict[str, str] = {}
    counts: dict[str, tuple[int | None, int | None]] = {}
    parts = out.split(b"\0")
    i = 0
    names = {"A": "added", "M": "modified", "D": "deleted", "T": "type"}
    while i < len(parts):
        part = parts[i]
        if part.startswith(b":"):
            letter = part.split()[-1].decode()[:1]
            path = parts[i + 1].decode("utf-8", "surrogateescape") if i + 1 < len(parts) else ""
            statuses[path] = names.get(letter, "modified")
            i += 2
            continue
        if part:
            fields = part.split(b"\t", 2)
            if len(fields) == 3:
                a, r, path_b = fields
                counts[path_b.decode("utf-8", "surrogateescape")] = (
                    int(a) if a.isdigit() else None,
                    int(r) if r.isdigit() else None,
                )
        i += 1
    return tuple(
        Change(ws.relative(path), status, *counts.get(path, (None, None)))
        for path, status in sorted(statuses.items())
    )
