"""A snapshot of a workspace (an app thread's folder) as a git commit, made without touching the
user's HEAD, branches, index, stash or files.

The folder's repository keeps the snapshots (a folder outside git gets a private repository in
segue's data folder). Each workspace has an index file of segue's own, seeded once from a copy of
the user's index, so that git's stat cache makes the listing cheap: ``git diff-files`` on that
index and ``git ls-files --others`` beside it list what changed since the last snapshot
(modified, deleted and new files, ignored ones left out), and only those are read. segue then
writes their blobs, the trees on their paths and the commit into one pack itself
(:mod:`segue.workspace.objects`, :mod:`segue.workspace.trees`) and points a ref of segue's at
it (``refs/segue/…``). The snapshot is then whole; a git left running when the capture returns
brings segue's index to the new tree (``update-index --index-info``) and refreshes its stat
cache, holding the workspace's lock. The commit segue's index holds is kept beside the index,
written only once the index holds it (and forgotten before), so an index left behind by a
killed git is never believed to be ahead. A snapshot's first parent is the commit segue's index
held; its second, when different, the thread's previous snapshot.

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
import time
from collections.abc import Iterator, Mapping
from pathlib import Path

import msgspec

from segue.model.errors import CheckpointError
from segue.support.places import data_dir
from segue.workspace.changes import Change, Skipped, Snapshot
from segue.workspace.git import Git, clean_env, failed, find_git, holding, init_bare, probe
from segue.workspace.objects import (
    BLOB,
    COMMIT,
    commit_bytes,
    hash_name,
    is_object_id,
    object_id,
    remove_leftovers,
    tree_entry,
    write_pack,
)
from segue.workspace.trees import Edit, ObjectReader, edited_tree, folders_on

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
    "settle",
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
    objects: Path  # the repository's object folder (a linked worktree's is its main one's)

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
        git_dir, top, objects = found
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
        top, prefix, private, objects = real, "", True, git_dir / "objects"
        try:
            _init_private(program, git_dir, env)
        except OSError as exc:
            raise CheckpointError(
                f"{git_dir}: cannot make the private repository: {exc.strerror}"
            ) from None
    index = (_private_dir(store / "index") if create else store / "index") / _key(
        str(git_dir), prefix
    )
    git = Git(program, git_dir, top, index, env)
    return Workspace(real, git, prefix, private, objects)


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


def _attributes(ws: Workspace, theirs: Path | None) -> tuple[bool, bool]:
    """Whether git changes some files' bytes on their way into the repository (a clean filter
    such as LFS's, line-ending conversion: then the index's blobs are not the files' bytes),
    and whether any attributes are set at all (then git may call a text file binary).
    ``theirs``: the user's index, whose ``.gitattributes`` files count (committed or not)."""
    done = ws.git.run(
        ["config", "--get-regexp", r"^core\.(autocrlf|eol|attributesfile)$"], check=False
    )
    home = ws.git.env.get("HOME", "")
    places: list[Path] = []
    for line in done.stdout.decode("utf-8", "surrogateescape").splitlines():
        key, _, value = line.partition(" ")
        value = value.strip().lower() if key != "core.attributesfile" else value.strip()
        if key == "core.autocrlf" and value in ("true", "yes", "on", "1", "input"):
            return True, True
        if key == "core.eol" and value == "crlf":
            return True, True
        if key == "core.attributesfile" and value:
            places.append(Path(home + value[1:] if value.startswith("~/") else value))
    config_home = _config_home(ws)
    if config_home is not None:
        places.append(config_home / "git" / "attributes")
    if theirs is not None:  # (segue's index is not the user's: their attribute files)
        listed = ws.git.run(["ls-files", "-z"], check=False, index=theirs).stdout
        places += [
            ws.git.work_tree / n.decode("utf-8", "surrogateescape")
            for n in listed.split(b"\0")
            if n == b".gitattributes" or n.endswith(b"/.gitattributes")
        ]
    places.append(ws.git.work_tree / ".gitattributes")
    places.append(ws.git.git_dir / "info" / "attributes")
    some = False
    for place in places:
        try:
            data = place.read_bytes()
        except OSError:
            continue
        if _CONVERTING.search(data):
            return True, True
        some = some or bool(data.strip())
    return False, some


def _seed(ws: Workspace) -> None:
    """segue's index for the workspace, the first time: a copy of the user's index (its stat
    cache spares hashing every tracked file), else HEAD's tree, else empty. Where git converts
    files on their way in, empty: every file is then read as its bytes, never taken from the
    user's index as git's converted copy (and git's stat cache is never refreshed through its
    conversion, which would call a file changed since as it was)."""
    index = ws.git.index
    assert index is not None
    if index.exists():
        return
    _state(index).unlink(missing_ok=True)  # (a base left by an index that is gone: not this one)
    _raw(index).unlink(missing_ok=True)
    _plain(index).unlink(missing_ok=True)
    theirs = None if ws.private else users_index(ws)
    converts, attributes = _attributes(ws, theirs)
    if not attributes:
        _plain(index).write_bytes(b"")
    if not ws.private and converts:
        _raw(index).write_bytes(b"")
        ws.git.run(["read-tree", "--empty"])
        return
    if theirs is not None:
        try:
            data = theirs.read_bytes()
        except OSError:
            data = b""
        if data:
            tmp = index.with_name(index.name + f".{os.getpid()}.tmp")
            tmp.write_bytes(data)
            os.replace(tmp, index)
            _unmark(ws)
            return
    _seed_fresh(ws)


def users_index(ws: Workspace) -> Path:
    """The user's own index file of the workspace's repository (never written by segue)."""
    # (asked of the repository alone: with segue's index in its environment, git would name
    # that one, and the seed would be HEAD's tree, every file of it hashed again)
    asked = ws.git.run(["rev-parse", "--git-path", "index"], work_tree=False)
    theirs = Path(asked.stdout.decode("utf-8", "surrogateescape").strip())
    return theirs if theirs.is_absolute() else ws.git.work_tree / theirs


def _unmark(ws: Workspace) -> None:
    """The user's marks taken off segue's copy of their index: a file they marked unchanged
    (``--assume-unchanged``), or kept out of their checkout while it is there (``--skip-worktree``
    on a file present), is still listed when it changes. (A file a sparse checkout leaves out
    keeps its mark: it is not there to be read.)"""
    listed = ws.git.run(["ls-files", "-v", "-z"], check=False).stdout
    assumed: list[bytes] = []
    skipped: list[bytes] = []
    for item in listed.split(b"\0"):
        tag, path = item[:1], item[2:]
        if not path:
            continue
        if tag.islower():
            assumed.append(path)
        if tag in (b"S", b"s") and os.path.lexists(ws.git.work_tree / os.fsdecode(path)):
            skipped.append(path)
    for flag, paths in (("--no-assume-unchanged", assumed), ("--no-skip-worktree", skipped)):
        if paths:
            ws.git.run(["update-index", flag, "-z", "--stdin"], stdin=b"\0".join(paths) + b"\0")


# git's settings that change what it reads or counts, in a config file (or one it includes)
_COUNT_SETTINGS = re.compile(rb"autocrlf|\beol\b|attributesfile|bigfilethreshold|include", re.I)


def _plain_now(ws: Workspace) -> bool:
    """Whether no attributes are set, nor a setting that makes git convert a file's bytes or
    call a text file binary: the marker left at the first capture (:func:`_plain`), and now no
    attribute file where segue's listing would not see one appear (the repository's own, the
    user's, the folders above the workspace), and no such setting in git's config files."""
    index = ws.git.index
    assert index is not None
    if not _plain(index).exists():
        return False
    top = ws.git.work_tree
    home = ws.git.env.get("HOME", "")
    config_home = _config_home(ws)
    parts = ws.prefix.split("/") if ws.prefix else []
    places = [
        ws.git.git_dir / "info" / "attributes",
        ws.objects.parent / "info" / "attributes",
        *(top.joinpath(*parts[:n]) / ".gitattributes" for n in range(len(parts) + 1)),
    ]
    configs = [ws.objects.parent / "config", ws.git.git_dir / "config.worktree"]
    if config_home is not None:
        places.append(config_home / "git" / "attributes")
        configs.append(config_home / "git" / "config")
    if any(os.path.lexists(place) for place in places):
        return False
    configs += [Path(home) / ".gitconfig"] if home else []
    for config in configs:
        try:
            if _COUNT_SETTINGS.search(config.read_bytes()):
                return False
        except OSError:
            continue
    return True


def _config_home(ws: Workspace) -> Path | None:
    """Where git looks for the user's own ``git/config`` and ``git/attributes``."""
    home = ws.git.env.get("HOME", "")
    config_home = ws.git.env.get("XDG_CONFIG_HOME") or (f"{home}/.config" if home else "")
    return Path(config_home) if config_home else None


def _plain(index: Path) -> Path:
    """Beside segue's index while no attributes are set anywhere (no ``.gitattributes`` seen,
    none of the user's or the repository's): a new file's lines are then counted by segue."""
    return index.with_name(index.name + ".plain")


def _raw(index: Path) -> Path:
    """Beside segue's index when git converts the workspace's files on their way in."""
    return index.with_name(index.name + ".raw")


class _Listed(msgspec.Struct, frozen=True):
    """The folder's changes since segue's index (:func:`_listed`)."""

    entries: list[tuple[str, str]]
    counts: dict[str, tuple[int | None, int | None]]  # (asked for) tracked files' +/-
    plain: bool  # none of the tracked ones is a link, a submodule, a type change or a conflict


def _listing(ws: Workspace) -> list[tuple[str, str]]:
    """What differs between segue's index and the folder (:func:`_listed`'s entries)."""
    return _listed(ws).entries


def _listed(ws: Workspace, *, counted: bool = False) -> _Listed:
    """What differs between segue's index and the folder: (tag, path) with tag C (changed), R
    (removed), S (a submodule at another commit) or ? (new, not ignored); ``counted``, with
    the lines each changed tracked file gained and lost against the index (git's own count,
    ``--numstat``). ``git diff-files`` on segue's index (its stat cache, its preload threads;
    started first, as it takes longer) finds the changed and removed files while ``git
    ls-files --others`` finds the new ones beside it; neither writes anything (each capture
    refreshes the stat cache after). ``git status`` would compare the index with the user's
    HEAD too, and write it back: 7 ms or more of its time on a folder far from its last
    commit."""
    numstat = ["--numstat"] if counted else []
    args = ["diff-files", "-z", "--raw", *numstat, "--ignore-submodules=dirty", *ws.pathspec()]
    changed = ws.git.start(args)
    try:
        others = ws.git.start(["ls-files", "--others", "--exclude-standard", "-z", *ws.pathspec()])
    except BaseException:
        ws.git.finish(changed, b"", "diff-files")
        raise
    try:
        new = ws.git.finish(others, b"", "ls-files")
    finally:
        files = ws.git.finish(changed, b"", "diff-files")
    for done in (files, new):
        if done.returncode != 0:
            why = done.stderr.decode("utf-8", "replace").strip()[:300]
            raise CheckpointError(f"{ws.folder}: git cannot list the folder's files: {why}")
    entries: list[tuple[str, str]] = []
    plain = True
    records, counts = _raw_and_counts(files.stdout)
    for meta, path in records:
        modes, letter = meta[1:].split()[:2], meta[-1:]
        plain = plain and letter in (b"M", b"D") and modes[0] in _FILE_MODES
        plain = plain and modes[1] in (*_FILE_MODES, b"000000")
        if meta.startswith(b":160000 ") and letter != b"D":
            entries.append(("S", path))  # a submodule whose commit moved
        else:
            # (U: a conflict in the index copy, taken as the file is; T: a file became a link)
            entries.append(("R" if letter == b"D" else "C", path))
    entries += [("?", n.decode("utf-8", "surrogateescape")) for n in new.stdout.split(b"\0") if n]
    return _Listed(entries, counts, plain)


_FILE_MODES = (b"100644", b"100755")


def _ignored_since(ws: Workspace, listing: list[tuple[str, str]]) -> list[str]:
    """The files segue's index holds that a changed ``.gitignore`` now leaves out and the user
    does not track (``node_modules/`` ignored after a snapshot took it, a ``.env`` the user
    untracked and ignored): out of the snapshot from now on. (Looked for only when a
    ``.gitignore`` is among the changes.)"""
    if not any(p == ".gitignore" or p.endswith("/.gitignore") for _, p in listing):
        return []
    listed = ws.git.run(
        ["ls-files", "-z", "--cached", "--ignored", "--exclude-standard", *ws.pathspec()],
        check=False,
    ).stdout
    ignored = [n for n in listed.split(b"\0") if n]
    if not ignored:
        return []
    users = ws.git.run(["ls-files", "-z"], check=False, index=users_index(ws)).stdout
    tracked = set(users.split(b"\0"))  # (all of them: a path per argument could be too many)
    return [n.decode("utf-8", "surrogateescape") for n in ignored if n not in tracked]


# a name Windows reads as .git (git~1 its short name; dots, spaces or a stream after it), and,
# for a link, as .gitmodules (its short names too): git's verify_path, its core.protectNTFS on
_AS_DOT_GIT = re.compile(r"(?:\.git|git~1)[. ]*(?::|\Z)", re.I)
_AS_DOT_GITMODULES = re.compile(r"(?:\.gitmodules|gitmod~[1-4]|gi7eba~[1-4])[. ]*(?::|\Z)", re.I)


def _refused(path: str, *, link: bool = False) -> bool:
    """Whether git refuses ``path`` in a tree (and in an index): an empty part, ``.`` or ``..``,
    or a part that is, or that Windows reads as, ``.git`` (``.GIT``, ``git~1``, ``.git.``,
    ``.git:x``, ``a\\.git`` …), and for a ``link`` one read as ``.gitmodules``; ``git fsck``
    calls such a tree broken, and ``update-index`` leaves such a name out."""
    for part in path.rstrip("/").split("/"):
        if part in ("", ".", ".."):
            return True
        for piece in part.split("\\"):  # (after a backslash too: a folder's mark on Windows)
            if _AS_DOT_GIT.match(piece) or (link and _AS_DOT_GITMODULES.match(piece)):
                return True
    return False


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
        if tag == "S":
            skipped.append(Skipped(ws.relative(path), "a submodule (its own repository)"))
            continue
        if _refused(path):
            skipped.append(Skipped(ws.relative(path), "a name git keeps out of its trees"))
            continue
        if path.endswith("/"):
            skipped.append(Skipped(ws.relative(path.rstrip("/")), "a git repository of its own"))
            continue
        full = top / path
        try:
            info = full.lstat()
        except (FileNotFoundError, NotADirectoryError):
            take.append(path)  # gone since it was listed (or a folder on its path a file): removed
            continue
        except OSError as exc:
            skipped.append(Skipped(ws.relative(path), f"unreadable ({exc.strerror})"))
            continue
        if stat.S_ISLNK(info.st_mode):
            if _refused(path, link=True):
                skipped.append(Skipped(ws.relative(path), "a name git keeps out of its trees"))
            else:
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
    files changed since the last snapshot, and only those are read. Their blobs, the trees on
    their paths and the commit go into one pack (:mod:`segue.workspace.objects`; a file created
    per object costs more than the whole listing on a slow disk)."""
    index = ws.git.index
    assert index is not None
    parent = parent or None  # ("": none)
    with _locked(index), _Counter(ws) as counter:
        # git's lock of segue's index, left by a git killed under this lock (each git holds
        # this lock while it runs, and only they write this index): stale; and the files of a
        # capture killed as it wrote them
        index.with_name(index.name + ".lock").unlink(missing_ok=True)
        _remove_pending(index)
        remove_leftovers(ws.objects / "pack")
        _seed(ws)
        try:
            made = _snapshot(ws, ref, parent, message, max_bytes, counter)
        except CheckpointError:
            # segue's index or its base is no use: an index copy git cannot read (a split
            # index, a conflict), or objects gone from the repository (segue's refs deleted,
            # then a gc): a fresh index of HEAD's tree
            _reset_index(ws)
            made = _snapshot(ws, ref, parent, message, max_bytes, counter)
        commit, tree = made.commit, made.tree
        _keep_empty_tree(ws, tree)
        referrer = ws.git.start(["update-ref", ref, commit])  # (while the changes are counted)
        try:
            if made.changes is not None:
                changes, against = made.changes, "previous"
            elif made.parent_tree is not None:
                changes, against = _count(ws, counter, made.parent_tree, tree), "previous"
            elif not ws.private and (head := _changes_from_head(ws, tree)) is not None:
                changes, against = head, "HEAD"
            else:
                changes, against = changes_between(ws, None, tree), "nothing"
        finally:
            done = ws.git.finish(referrer, b"", "update-ref")
            if made.entries:
                _index_later(ws, made.entries, commit)
            else:
                _state(index).write_text(commit + "\n")  # (under the lock: this index's base)
    if done.returncode != 0:
        raise failed(done, ws.git.work_tree, "update-ref")
    return Snapshot(commit, tree, ref, changes, tuple(made.skipped), against)


class _Made(msgspec.Struct, frozen=True):
    """A snapshot written but for its ref; ``entries`` make segue's index hold its tree."""

    commit: str
    tree: str
    skipped: list[Skipped]
    parent: str | None  # the thread's previous snapshot (None: none, or gone)
    parent_tree: str | None
    entries: bytes  # for ``update-index -z --index-info`` (none: the index holds the tree)
    changes: tuple[Change, ...] | None  # against ``parent``, counted (None: by git, after)


def _snapshot(
    ws: Workspace, ref: str, parent: str | None, message: str, max_bytes: int, counter: _Counter
) -> _Made:
    """The snapshot's objects written, its ref not yet, segue's index not yet changed. The
    folder is listed first (the rest waits for it); the trees on the changed paths are asked
    for while the changed files are read."""
    index = ws.git.index
    assert index is not None
    base = _base(ws)
    # the thread's snapshot before is the one segue's index holds: git counts the lines of the
    # tracked files as it lists them, and no git is needed to count them after
    counted = parent == base and not _raw(index).exists() and _plain_now(ws)
    if not counted:
        counter.start()
    reader = ObjectReader(ws.git)  # (started first: ready, and idle, once it is listed)
    folders_known = _Folders(ws, base)
    try:
        listed_at = time.time_ns()
        listed = _listed(ws, counted=counted)
        nested = folders_known.repositories()
        listing = [e for e in listed.entries if _outside(e[1], nested)]
        if any(p == ".gitattributes" or p.endswith("/.gitattributes") for _, p in listing):
            _plain(index).unlink(missing_ok=True)  # (attributes are set: git counts from now on)
        # the trees on the changed paths, found by git while the files are looked at and read
        heads = [f"{base}^{{commit}}", *([f"{parent}^{{commit}}"] if parent else [])]
        folders, names = folders_on(
            base, [p.encode("utf-8", "surrogateescape") for _, p in listing]
        )
        answers = reader.ask([*heads, *names])
        moved = [path for tag, path in listing if tag == "S"]
        take, skipped = _screen(ws, [e for e in listing if e[0] != "S"], max_bytes)
        gone = [p.path if not ws.prefix else f"{ws.prefix}/{p.path}" for p in skipped]
        gone += _ignored_since(ws, listing)  # (their folders asked for by id, if need be)
        if nested:  # (a folder made a repository of its own since a snapshot took its files)
            skipped += [Skipped(ws.relative(n), "a git repository of its own") for n in nested]
            held = ws.git.run(["ls-files", "-z", "--", *nested]).stdout
            gone += [n.decode("utf-8", "surrogateescape") for n in held.split(b"\0") if n]
        algorithm = hash_name(len(base))
        blobs, edits, entries, latest = _files(ws, take, gone, algorithm)
        found = answers.read()
        if found[0] is None:  # (segue's refs deleted, then a gc): the index is started afresh
            raise CheckpointError(f"{ws.folder}: the commit segue's index holds is gone")
        base_id, _, base_data = found[0]
        parents = [base_id]
        parent_tree = None
        if parent is not None:
            previous = found[1]
            parent = None if previous is None else previous[0]
            if previous is not None:
                parent_tree = _tree_of(previous[2])
            if parent is not None and parent != base_id:
                parents.append(parent)
        known = dict(zip(folders, found[len(heads) :], strict=True))
        for path, commit_id in _submodules(ws, moved):
            name = path.encode("utf-8", "surrogateescape")
            edits.append((name, (b"160000", bytes.fromhex(commit_id))))
            entries.append(b"160000 %s\t%s\0" % (commit_id.encode(), name))
        tree, objects, before = edited_tree(reader, _tree_of(base_data), edits, algorithm, known)
        changes = None
        # (a file changed as the folder was listed, or after: git counted other bytes than
        # those taken; a file's times lag the clock by a tick)
        settled = latest < listed_at - _TICK_NS and _plain(index).exists()
        usable = counted and settled and listed.plain and not gone and parent == base_id
        if usable and before is not None:
            tags = {path: tag for tag, path in listing}
            changes = _counted(ws, before, edits, blobs, listed.counts, tags)
        data = commit_bytes(
            tree,
            parents,
            b"segue <segue@localhost>",
            int(time.time()),
            message.encode("utf-8", "surrogateescape"),
        )
        commit = object_id(COMMIT, data, algorithm)
        objects.update(blobs)
        objects[commit] = (COMMIT, data)
        try:
            write_pack(ws.objects / "pack", objects, algorithm)
        except OSError as exc:
            raise CheckpointError(
                f"{ws.objects}: cannot write the snapshot's objects: {exc.strerror}"
            ) from None
    finally:
        reader.close(wait=False)
        folders_known.close()
    return _Made(commit.hex(), tree, skipped, parent, parent_tree, b"".join(entries), changes)


class _Folders:
    """The folders segue's index holds files in (``git ls-tree -d`` of its commit, started
    beside the listing), to find those that became git repositories of their own since a
    snapshot took their files: git lists their files as it would any (it looks for a
    repository only in a folder the index holds nothing in)."""

    def __init__(self, ws: Workspace, base: str) -> None:
        self.ws = ws
        args = ["ls-tree", "-r", "-d", "-z", base, *ws.pathspec()]
        self.process: subprocess.Popen[bytes] | None = None
        with contextlib.suppress(CheckpointError):
            self.process = ws.git.start(args)

    def close(self) -> None:
        if self.process is not None and self.process.returncode is None:
            with contextlib.suppress(OSError):
                self.process.kill()
            self.process.communicate()

    def repositories(self) -> list[str]:
        """The outermost of those folders with a ``.git`` in them now (from the top)."""
        if self.process is None:
            return []
        done = self.ws.git.finish(self.process, b"", "ls-tree")
        if done.returncode != 0:
            return []  # (a base that is gone: the capture starts again from a fresh index)
        top = self.ws.git.work_tree
        found: list[str] = []
        for record in done.stdout.split(b"\0"):
            meta, _, name = record.partition(b"\t")
            if not meta.startswith(b"040000 "):
                continue  # (a submodule: its own repository already)
            folder = name.decode("utf-8", "surrogateescape")
            if _outside(folder, found) and os.path.lexists(top / folder / ".git"):
                found.append(folder)  # (git lists a folder before the folders in it)
        return found


def _outside(path: str, folders: list[str]) -> bool:
    """Whether ``path`` is in none of ``folders`` (nor one of them)."""
    return not any(path == f or path.startswith(f + "/") for f in folders)


_TICK_NS = 50_000_000  # (a file's times lag the clock by a tick; 50 ms is many)
_SECOND = 1_000_000_000
_NEW_FILE_COUNTED = 256 << 10  # a new file larger is left to git (its big-file threshold)


def _counted(
    ws: Workspace,
    before: Mapping[bytes, bytes | None],
    edits: list[Edit],
    blobs: Mapping[bytes, tuple[int, bytes]],
    counts: Mapping[str, tuple[int | None, int | None]],
    tags: Mapping[str, str],
) -> tuple[Change, ...] | None:
    """The snapshot's changes against the one before, where that one is what segue's index
    held: each edited path as it was (``before``) and is, its lines as git counted them in the
    listing, a new file's counted here as git counts them (a NUL in its first 8,000 bytes: a
    binary file). None where git must count (a link, a submodule, a file gone or back since
    git listed it, a new file too large to be sure of git's count)."""
    found: list[Change] = []
    for name, value in edits:
        old = before.get(name)
        if old is None and value is None:
            continue
        old_mode = old[: old.index(b" ")] if old is not None else None
        if (old_mode is not None and old_mode not in _FILE_MODES) or (
            value is not None and value[0] not in _FILE_MODES
        ):
            return None
        if (
            old is not None
            and value is not None
            and old == tree_entry(value[0], name[name.rfind(b"/") + 1 :], value[1])
        ):
            continue  # (listed for its stat data alone)
        path = name.decode("utf-8", "surrogateescape")
        if (value is None) != (tags.get(path) == "R"):
            return None  # (gone since git listed it changed, or back since it listed it gone)
        if old is None and value is not None:
            data = blobs[value[1]][1]
            if len(data) > _NEW_FILE_COUNTED:
                return None
            lines = data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)
            added, removed = (None, None) if b"\0" in data[:8000] else (lines, 0)
            found.append(Change(ws.relative(path), "added", added, removed))
            continue
        if path not in counts:
            return None
        status = "deleted" if value is None else "modified"
        found.append(Change(ws.relative(path), status, *counts[path]))
    return tuple(sorted(found, key=lambda c: c.path))


def _submodules(ws: Workspace, paths: list[str]) -> list[tuple[str, str]]:
    """The commit each submodule at ``paths`` is at now (one whose repository is not there, or
    has no commit, is left as the snapshot before had it)."""
    found = []
    for path in paths:
        where = ws.git.work_tree / path
        if not (where / ".git").exists():
            continue
        try:
            done = subprocess.run(
                [ws.git.program, "rev-parse", "--verify", "-q", "HEAD"],
                cwd=where,
                env=clean_env(ws.git.env),
                stdin=subprocess.DEVNULL,
                capture_output=True,
                timeout=60.0,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired):
            continue
        commit_id = done.stdout.decode("ascii", "replace").strip()
        if done.returncode == 0 and is_object_id(commit_id):
            found.append((path, commit_id))
    return found


def _tree_of(commit: bytes) -> str:
    first = commit.split(b"\n", 1)[0].split()
    if len(first) != 2 or first[0] != b"tree":
        raise CheckpointError(f"git gave a commit with no tree: {commit[:80]!r}")
    return first[1].decode("ascii", "replace")


_LATER: list[subprocess.Popen[bytes]] = []  # index upkeep still running (reaped as others start)


def _index_later(ws: Workspace, entries: bytes, commit: str) -> None:
    """segue's index brought to the snapshot's tree (``update-index --index-info``) and given
    the stat data of the files just taken (``--refresh``: a file whose bytes are no longer the
    snapshot's keeps none, and is listed next time), by a git left running when the capture
    returns: the snapshot is whole without it. It holds the workspace's lock, so the next
    capture or restore waits for it; the base file names ``commit`` once it has succeeded
    (killed half-way, it leaves none: the next capture starts from a commit of the index as it
    is). Where git converts the files on their way in, the stat cache is not refreshed."""
    index = ws.git.index
    assert index is not None
    _state(index).unlink(missing_ok=True)  # (an index ahead of its base is never believed)
    pending = index.with_name(f"{index.name}.base.{os.getpid()}.tmp")
    # (the entries whole in a file before the git starts: were segue killed as it gave them
    # through a pipe, git would take the part it got for all, and the base would be believed)
    feed = index.with_name(f"{index.name}.entries.{os.getpid()}.tmp")
    refresh = [] if _raw(index).exists() else [["update-index", "-q", "--refresh"]]
    _LATER[:] = [p for p in _LATER if p.poll() is None]
    try:
        pending.write_text(commit + "\n")
        feed.write_bytes(entries)
        _LATER.append(
            ws.git.start(
                ["update-index", "-z", "--index-info"],
                detached=True,
                feed=feed,
                after=refresh,
                then_rename=(pending, _state(index)),
            )
        )
    except (OSError, CheckpointError):  # not started: done here, else left to the next capture
        pending.unlink(missing_ok=True)
        feed.unlink(missing_ok=True)
        with contextlib.suppress(OSError, CheckpointError):
            ws.git.run(["update-index", "-z", "--index-info"], stdin=entries)
            _state(index).write_text(commit + "\n")


def settle(ws: Workspace) -> None:
    """Until the upkeep of segue's index that a capture left running has ended (not needed
    before another capture or a restore: they wait for it themselves)."""
    index = ws.git.index
    assert index is not None
    with contextlib.suppress(OSError), _locked(index):
        pass


def _remove_pending(index: Path) -> None:
    """The files an index upkeep (:func:`_index_later`) or a seed left, killed before its end
    (under the workspace's lock, none is running)."""
    try:
        names = os.listdir(index.parent)
    except OSError:
        return
    for name in names:
        if name.startswith(index.name + ".") and name.endswith(".tmp"):
            with contextlib.suppress(OSError):
                (index.parent / name).unlink()


def _state(index: Path) -> Path:
    """Where the commit whose tree segue's index holds is kept (beside the index)."""
    return index.with_name(index.name + ".base")


def _reset_index(ws: Workspace) -> None:
    """segue's index afresh, of HEAD's tree (not the user's index again: it may be what git
    could not use, a conflict say)."""
    index = ws.git.index
    assert index is not None
    index.unlink(missing_ok=True)
    _state(index).unlink(missing_ok=True)
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
        known = _state(index).read_bytes().strip().decode("ascii", "replace")
    except OSError:
        known = ""
    if is_object_id(known):
        return known  # (checked by its use: a commit that is gone is no base)
    tree = ws.git.out(["write-tree"])  # fails on a conflict in the index copy: it is reset
    _keep_empty_tree(ws, tree)
    return ws.git.out(["commit-tree", tree, "-m", "segue: the index a snapshot starts from"])


def _keep_empty_tree(ws: Workspace, tree: str) -> None:
    """The empty tree written as an object when a commit of segue's names it: git knows it
    without it (so ``write-tree`` writes none), but ``git fsck`` calls a commit naming a tree
    that is not there broken."""
    if tree == EMPTY_TREE.get(len(tree)):
        ws.git.run(["hash-object", "-w", "-t", "tree", "--stdin"], stdin=b"")


def file_entry(path: Path) -> tuple[str, bytes] | None:
    """A file as git keeps it: its mode (``100644``, ``100755``, ``120000`` for a link) and its
    bytes (a link's: its target); None when it is not there, or neither a file nor a link.
    ``OSError`` for one that cannot be read.

    What is read is what was opened: a file replaced by a link or a FIFO between a look and the
    read is never followed nor waited on (``O_NOFOLLOW``, ``O_NONBLOCK``, then ``fstat``)."""
    found = _file_at(path)
    return None if found is None else (found[0], found[1])


def _file_at(path: Path) -> tuple[str, bytes, int] | None:
    """:func:`file_entry`, and when the file last changed (the later of its mtime and ctime, in
    ns; 0 for a link)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except (FileNotFoundError, NotADirectoryError):  # (or a folder on its path is a file now)
        return None
    except OSError as exc:
        if exc.errno != errno.ELOOP:  # (ELOOP: the last part is a link)
            raise
        try:
            return "120000", os.fsencode(os.readlink(path)), 0
        except FileNotFoundError:
            return None
        except OSError as again:
            if again.errno == errno.EINVAL:  # (no longer a link: gone and back, as something)
                return None
            raise
    try:
        info = os.fstat(fd)
    except OSError:
        os.close(fd)
        raise
    if not stat.S_ISREG(info.st_mode):  # (a folder now, say: which Python would not open)
        os.close(fd)
        return None
    with os.fdopen(fd, "rb") as f:
        data = f.read()
    changed = max(info.st_mtime_ns, info.st_ctime_ns)
    return ("100755" if info.st_mode & 0o111 else "100644"), data, changed


def blob_id(data: bytes, like: str) -> str:
    """The id git gives ``data`` as a blob, in the hash of the object id ``like`` (SHA-1 or
    SHA-256 by its length)."""
    return object_id(BLOB, data, hash_name(len(like))).hex()


def _files(
    ws: Workspace, take: list[str], gone: list[str], algorithm: str
) -> tuple[dict[bytes, tuple[int, bytes]], list[Edit], list[bytes], int]:
    """The changed files as they are on disk: their blobs (raw id: (kind, bytes)), the edits
    that make the new tree of the base's (the left out files removed), the index entries that
    make segue's index hold that tree, and when the last of those files changed (ns)."""
    zero = b"0" * (64 if algorithm == "sha256" else 40)
    top = ws.git.work_tree
    blobs: dict[bytes, tuple[int, bytes]] = {}
    edits: list[Edit] = []
    entries: list[bytes] = []
    left_out = set(gone)
    latest = 0
    for path in [*take, *gone]:
        name = path.encode("utf-8", "surrogateescape")
        entry = None
        if path not in left_out:
            try:
                entry = _file_at(top / path)  # None: gone since it was listed
            except OSError as exc:
                raise CheckpointError(f"{top / path}: cannot read it: {exc.strerror}") from None
        # (gone, or a link git refuses made since it was looked at: out of the snapshot)
        if entry is None or (entry[0] == "120000" and _refused(path, link=True)):
            edits.append((name, None))
            entries.append(b"0 %s\t%s\0" % (zero, name))
            continue
        mode, data = entry[0].encode(), entry[1]
        # (a time in whole seconds: a file system that keeps no finer, 2 s more to be sure)
        latest = max(latest, entry[2] + (2 * _SECOND if entry[2] % _SECOND == 0 else 0))
        raw = object_id(BLOB, data, algorithm)
        blobs[raw] = (BLOB, data)
        edits.append((name, (mode, raw)))
        entries.append(b"%s %s\t%s\0" % (mode, raw.hex().encode(), name))
    return blobs, edits, entries, latest


def _changes_from_head(ws: Workspace, tree: str) -> tuple[Change, ...] | None:
    """The snapshot's changes against the user's HEAD (None: no commit yet). Where git converts
    files on their way in (line endings, a clean filter), HEAD holds them converted and the
    snapshot as they are: a file is then changed only where git, converting it, finds it so
    (``git diff-index HEAD``, through the user's index as it is, read only), with git's count."""
    try:
        changes = changes_between(ws, "HEAD^{tree}", tree)
    except CheckpointError:
        return None  # no commit yet
    index = ws.git.index
    assert index is not None
    if not _raw(index).exists() or not any(c.status == "modified" for c in changes):
        return changes
    done = ws.git.run(
        ["diff-index", "-z", "--numstat", "HEAD", *ws.pathspec()],
        check=False,
        index=users_index(ws),
    )
    if done.returncode != 0:
        return changes
    _, counts = _raw_and_counts(done.stdout)
    found = {ws.relative(path): count for path, count in counts.items()}
    return tuple(
        c if c.status != "modified" else Change(c.path, c.status, *found[c.path])
        for c in changes
        if c.status != "modified" or c.path in found
    )


def _seed_fresh(ws: Workspace) -> None:
    """segue's index made of HEAD's tree (else empty), its stat cache filled: git hashes the
    files that match, so that the listing finds only those that differ."""
    if ws.private or ws.git.run(["read-tree", "HEAD"], check=False).returncode != 0:
        ws.git.run(["read-tree", "--empty"])  # no commit yet: an empty index
    else:
        ws.git.run(["update-index", "-q", "--refresh"], check=False)


def changes_between(ws: Workspace, old: str | None, new: str) -> tuple[Change, ...]:
    """The files of the folder that differ from ``old`` (a tree-ish; None: nothing) to ``new``,
    with their lines added and removed."""
    if old is None:
        old = EMPTY_TREE[len(new)] if len(new) in EMPTY_TREE else ws.git.out(["mktree"], stdin=b"")
    out = ws.git.run([*_DIFF_TREE, old, new, *ws.pathspec()]).stdout
    return _changes(ws, out)


_DIFF_TREE = ("diff-tree", "-r", "-z", "--raw", "--numstat", "--no-renames")


def _count(ws: Workspace, counter: _Counter, old: str, new: str) -> tuple[Change, ...]:
    """The changes from the tree ``old`` to ``new``, by the git started early; counted again
    when that one could not (segue's index unreadable as it started, then reset)."""
    try:
        return counter.count(old, new)
    except CheckpointError:
        return changes_between(ws, old, new)


class _Counter:
    """``git diff-tree --stdin``, started before the trees it compares are written (git looks
    for a pack it has not seen when an object is not in those it has), so that its start is
    not waited for."""

    def __init__(self, ws: Workspace) -> None:
        self.ws = ws
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        """Started (once; not started, the changes are counted by a git of their own)."""
        if self.process is None:
            with contextlib.suppress(CheckpointError):
                self.process = self.ws.git.start([*_DIFF_TREE, "--stdin", *self.ws.pathspec()])

    def count(self, old: str, new: str) -> tuple[Change, ...]:
        """The changes from the tree ``old`` to the tree ``new`` (both ids)."""
        if self.process is None or self.process.returncode is not None:
            raise CheckpointError(f"{self.ws.folder}: git diff-tree is not running")
        done = self.ws.git.finish(self.process, f"{old} {new}\n".encode(), "diff-tree")
        if done.returncode != 0:
            raise failed(done, self.ws.git.work_tree, "diff-tree")
        return _changes(self.ws, done.stdout.partition(b"\n")[2])  # (after the pair's line)

    def __enter__(self) -> _Counter:
        return self

    def __exit__(self, *_: object) -> None:
        if self.process is not None and self.process.returncode is None:  # (not asked)
            self.ws.git.finish(self.process, b"", "diff-tree")


def _raw_and_counts(
    out: bytes,
) -> tuple[list[tuple[bytes, str]], dict[str, tuple[int | None, int | None]]]:
    """What ``git diff-files`` or ``diff-tree`` wrote with ``-z --raw`` (and ``--numstat``):
    each raw record (its ``:modes ids letter`` part, its path) in order, and each path's lines
    added and removed (None: a binary file)."""
    records: list[tuple[bytes, str]] = []
    counts: dict[str, tuple[int | None, int | None]] = {}
    parts = out.split(b"\0")
    i = 0
    while i < len(parts):
        part = parts[i]
        if part.startswith(b":"):
            path = parts[i + 1].decode("utf-8", "surrogateescape") if i + 1 < len(parts) else ""
            records.append((part, path))
            i += 2
            continue
        fields = part.split(b"\t", 2)
        if len(fields) == 3:  # (a count: added, removed, path)
            a, r, name = fields
            counts[name.decode("utf-8", "surrogateescape")] = (
                int(a) if a.isdigit() else None,
                int(r) if r.isdigit() else None,
            )
        i += 1
    return records, counts


def _changes(ws: Workspace, out: bytes) -> tuple[Change, ...]:
    """The changes ``git diff-tree -z --raw --numstat`` wrote."""
    names = {"A": "added", "M": "modified", "D": "deleted", "T": "type"}
    records, counts = _raw_and_counts(out)
    statuses = {
        path: names.get(meta.split()[-1].decode()[:1], "modified") for meta, path in records
    }
    return tuple(
        Change(ws.relative(path), status, *counts.get(path, (None, None)))
        for path, status in sorted(statuses.items())
    )
