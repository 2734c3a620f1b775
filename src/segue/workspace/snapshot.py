"""A snapshot of a workspace (an app thread's folder) as a git commit, made on git's own plumbing
without touching the user's HEAD, branches, index, stash or files.

The folder's repository keeps the snapshots (a folder outside git gets a private repository in
segue's data folder). segue keeps an index of its own per workspace, seeded from a copy of the
user's: ``git diff`` on it (refreshing its stat cache) and ``git ls-files --others`` list what
changed; ``hash-object -w --no-filters`` writes those files as their own bytes (a restore gives
back exactly what was there), ``update-index --index-info`` takes them in (refusing the names
git refuses), ``write-tree``, ``commit-tree`` and ``update-ref`` make the snapshot under
``refs/segue/…``, and ``diff-tree --numstat`` counts its lines. What segue leaves out it names
with the reason: a file over the size cap (``$SEGUE_CHECKPOINT_MAX_FILE``, default 8 MiB), a
special or unreadable file, a folder that is a repository of its own, a file ignored since a
snapshot took it; outside git, the common build and dependency folders. Nothing is left running.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import stat
import tempfile
from collections.abc import Mapping
from pathlib import Path

import msgspec

from segue.model.errors import CheckpointError
from segue.support.places import data_dir
from segue.workspace.changes import Change, Skipped, Snapshot
from segue.workspace.git import Git, call, find_git, init_bare, locked, probe, read_diff

__all__ = [
    "Workspace", "capture", "changes_between", "disk_ids", "is_commit", "listing", "locate",
    "locked", "max_file_bytes", "screen", "special", "users_index", "write_atomic",
]  # fmt: skip

MAX_FILE_VARIABLE = "SEGUE_CHECKPOINT_MAX_FILE"
DEFAULT_MAX_FILE = 8 << 20
EMPTY_TREE = {
    40: "4b825dc642cb6eb9a060e54bf8d69288fbee4904",  # SHA-1
    64: "6ef19b41225c5369f1c104d45d8d85efa9b057b53b14b4b9b939dd74decc5321",  # SHA-256
}
# left out of a private repository's snapshots (a folder outside git has no .gitignore to say so)
PRIVATE_EXCLUDES = (
    ".git/", "node_modules/", ".venv/", "venv/", "__pycache__/", "*.pyc", ".mypy_cache/",
    ".pytest_cache/", ".ruff_cache/", ".tox/", ".nox/", ".gradle/", ".next/", ".nuxt/",
    ".parcel-cache/", ".terraform/", ".cache/", "target/", "build/", "dist/", ".DS_Store",
)  # fmt: skip


def max_file_bytes(env: Mapping[str, str]) -> int:
    """The size cap for one file: ``$SEGUE_CHECKPOINT_MAX_FILE`` (bytes, K, M, G), else 8 MiB."""
    text = env.get(MAX_FILE_VARIABLE, "").strip().upper()
    scale = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(text[-1:], 1)
    try:
        value = int(float(text[:-1] if scale > 1 else text) * scale) if text else 0
    except (ValueError, OverflowError):  # garbage, inf, nan: the default
        value = 0
    return value if value > 0 else DEFAULT_MAX_FILE


class Workspace(msgspec.Struct, frozen=True):
    """A folder's repository (``git``, with segue's index), the folder below its top."""

    folder: Path
    git: Git
    prefix: str
    private: bool  # a private repository in segue's data folder (the folder is not in git)
    objects: Path  # the repository's object folder (a linked worktree's is its main one's)
    # segue's index of the folder (``git``'s; the files kept beside it are named after it)
    index: Path

    def pathspec(self) -> list[str]:
        return ["--", self.prefix] if self.prefix else []

    def relative(self, path: str) -> str:
        """A path from the repository's top, as the folder sees it."""
        return path.removeprefix(self.prefix + "/") if self.prefix else path

    def full(self, path: str) -> str:
        """A path relative to the folder, from the repository's top."""
        return f"{self.prefix}/{path}" if self.prefix else path


def _key(*parts: str) -> str:
    return hashlib.blake2b(
        "\0".join(parts).encode("utf-8", "surrogateescape"), digest_size=10
    ).hexdigest()


def locate(folder: str | Path, env: Mapping[str, str], *, create: bool = True) -> Workspace:
    """The workspace of ``folder``: the git repository it is in, else a private one in segue's
    data folder (made on first use; not with ``create`` False: then nothing is written)."""
    where = Path(folder)
    try:
        real = where.resolve(strict=True)
    except (OSError, RuntimeError):
        raise CheckpointError(f"{where}: the workspace folder is gone") from None
    if not real.is_dir():
        raise CheckpointError(f"{where}: the workspace is not a folder")
    program = find_git(env)
    store = data_dir(env) / "checkpoints"
    for made in ("repos", "index") if create else ():
        (store / made).mkdir(parents=True, exist_ok=True, mode=0o700)
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
        git_dir = store / "repos" / name
        top, prefix, private, objects = real, "", True, git_dir / "objects"
        try:
            if not (git_dir / "HEAD").is_file():
                init_bare(program, git_dir, env)
                (git_dir / "info").mkdir(exist_ok=True)
                excludes = "".join(f"{p}\n" for p in PRIVATE_EXCLUDES)
                (git_dir / "info" / "exclude").write_text(
                    "# left out of segue's snapshots of a folder outside git\n" + excludes
                )
        except OSError as exc:
            raise CheckpointError(
                f"{git_dir}: cannot make the private repository: {exc.strerror}"
            ) from None
    index = store / "index" / _key(str(git_dir), prefix)
    git = Git(program, git_dir, top, index, env)
    return Workspace(real, git, prefix, private, objects, index)


_CONVERTING = re.compile(rb"\b(filter|text|eol|crlf|ident|working-tree-encoding)\b")
_CONVERTING_SETTINGS = {"core.autocrlf": ("true", "yes", "on", "1", "input"), "core.eol": ("crlf",)}


def _converts(ws: Workspace, theirs: Path) -> bool:
    """Whether git changes files' bytes on their way in (a clean filter, line endings): the
    user's index (``theirs``, whose ``.gitattributes`` count) then holds no file's own bytes."""
    done = ws.git.run(
        ["config", "--get-regexp", r"^core\.(autocrlf|eol|attributesfile)$"], check=False
    )
    home = ws.git.env.get("HOME", "")
    config_home = ws.git.env.get("XDG_CONFIG_HOME") or (f"{home}/.config" if home else "")
    places = [Path(config_home) / "git" / "attributes"] if config_home else []
    for line in done.stdout.decode("utf-8", "surrogateescape").splitlines():
        key, _, value = line.partition(" ")
        value = value.strip()
        if value.lower() in _CONVERTING_SETTINGS.get(key, ()):
            return True
        if key == "core.attributesfile" and value:
            places.append(Path(home + value[1:] if value.startswith("~/") else value))
    listed = ws.git.names(["ls-files", "-z"], check=False, index=theirs)
    places += [ws.git.work_tree / n for n in listed if n.rsplit("/", 1)[-1] == ".gitattributes"]
    places += [ws.git.work_tree / ".gitattributes", ws.git.git_dir / "info" / "attributes"]
    for place in places:
        with contextlib.suppress(OSError):
            if _CONVERTING.search(place.read_bytes()):
                return True
    return False


def _seed(ws: Workspace) -> None:
    """segue's index, the first time: a copy of the user's (its stat cache spares hashing every
    file), else HEAD's tree, else empty; empty where git converts files on their way in."""
    index = ws.index
    if index.exists():
        return
    theirs = None if ws.private else users_index(ws)
    if theirs is not None and _converts(ws, theirs):
        ws.git.run(["read-tree", "--empty"])
        return
    with contextlib.suppress(OSError):
        if theirs is not None and (data := theirs.read_bytes()):
            write_atomic(index, data)
            _unmark(ws)
            return
    _seed_fresh(ws)


def write_atomic(path: Path, data: bytes) -> None:
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)


def _seed_fresh(ws: Workspace) -> None:
    """segue's index made of HEAD's tree (else empty), its stat cache filled."""
    if ws.private or ws.git.run(["read-tree", "HEAD"], check=False).returncode != 0:
        ws.git.run(["read-tree", "--empty"])  # no commit yet: an empty index
    else:
        ws.git.run(["update-index", "-q", "--refresh"], check=False)


def users_index(ws: Workspace) -> Path:
    """The user's own index file of the workspace's repository (never written by segue)."""
    # (asked of the repository alone: with segue's index in its environment, git names that one)
    asked = ws.git.run(["rev-parse", "--git-path", "index"], work_tree=False)
    theirs = Path(asked.stdout.decode("utf-8", "surrogateescape").strip())
    return theirs if theirs.is_absolute() else ws.git.work_tree / theirs


def _unmark(ws: Workspace) -> None:
    """The user's marks off segue's copy of their index: a file marked ``--assume-unchanged``,
    or ``--skip-worktree`` while it is there, is still listed when it changes."""
    listed = ws.git.run(["ls-files", "-v", "-z"], check=False).stdout
    marked = [(item[:1], item[2:]) for item in listed.split(b"\0") if item[2:]]
    assumed = [path for tag, path in marked if tag.islower()]
    there = (p for tag, p in marked if tag in (b"S", b"s"))
    skipped = [p for p in there if os.path.lexists(ws.git.work_tree / os.fsdecode(p))]
    for flag, paths in (("--no-assume-unchanged", assumed), ("--no-skip-worktree", skipped)):
        if paths:
            ws.git.run(["update-index", flag, "-z", "--stdin"], stdin=b"\0".join(paths) + b"\0")


def listing(ws: Workspace, *, refresh: bool = True) -> list[tuple[str, str]]:
    """What differs between segue's index and the folder: (tag, path), tag C (changed), R
    (removed), S (a submodule moved) or ? (new, not ignored); ``refresh``: the stat data of
    files whose bytes are the index's written back into it."""
    quiet = [] if refresh else ["--no-optional-locks"]
    options = ["--raw", "-z", "--no-renames", "--no-relative", "--no-ext-diff", "--no-color"]
    refreshing = ["-c", "diff.autoRefreshIndex=true", *quiet]  # (whatever the user's setting)
    args = [*refreshing, "diff", *options, "--ignore-submodules=dirty", *ws.pathspec()]
    files = ws.git.run(args, check=False)
    new = ws.git.run(
        ["ls-files", "--others", "--exclude-standard", "-z", *ws.pathspec()], check=False
    )
    for done in (files, new):
        if done.returncode != 0:
            why = done.stderr.decode("utf-8", "replace").strip()[:300]
            raise CheckpointError(f"{ws.folder}: git cannot list the folder's files: {why}")
    # (U: a conflict in the index copy, taken as the file is; T: a file became a link)
    entries = [
        ("R" if status == "D" else "S" if old and old[0] == "160000" else "C", path)
        for path, (old, _new, status) in read_diff(files.stdout)[0].items()
    ]
    return entries + [
        ("?", n.decode("utf-8", "surrogateescape")) for n in new.stdout.split(b"\0") if n
    ]


def _ignored_since(ws: Workspace) -> list[str]:
    """The files segue's index holds that git ignores now (by a ``.gitignore``, the
    repository's exclude file or the user's) and the user does not track (a ``.env`` ignored
    after a snapshot took it): out from now on."""
    args = ["ls-files", "-z", "--cached", "--ignored", "--exclude-standard", *ws.pathspec()]
    if not (ignored := ws.git.names(args, check=False)):
        return []
    tracked = set(ws.git.names(["ls-files", "-z"], check=False, index=users_index(ws)))
    return [n for n in ignored if n not in tracked]


def screen(
    ws: Workspace, entries: list[tuple[str, str]], cap: int
) -> tuple[list[str], list[Skipped]]:
    """The paths to bring into the index (those gone too), and those left out with why."""
    take: list[str] = []
    skipped: list[Skipped] = []
    top = ws.git.work_tree
    for tag, path in entries:
        why = None
        if tag == "S":
            why = "a submodule (its own repository)"
        elif path.endswith("/"):
            path, why = path.rstrip("/"), "a git repository of its own"
        elif tag != "R":
            try:
                info = (top / path).lstat()
            except (FileNotFoundError, NotADirectoryError):
                pass  # gone since it was listed (or a folder on its path a file): removed
            except OSError as exc:
                why = f"unreadable ({exc.strerror})"
            else:
                why = special(info.st_mode)
                if stat.S_ISREG(info.st_mode) and info.st_size > cap:
                    why = f"over the size cap ({info.st_size:,} > {cap:,} bytes)"
                elif stat.S_ISREG(info.st_mode) and not os.access(top / path, os.R_OK):
                    why = "unreadable (permission denied)"
        if why is None:
            take.append(path)
        else:
            skipped.append(Skipped(ws.relative(path), why))
    return take, skipped


def _folders(ws: Workspace, entries: list[tuple[str, str]]) -> tuple[list[str], list[Skipped]]:
    """What git's listing cannot see, in the folders segue's index holds files in (and the new
    files'): the outermost that are repositories of their own now (git looks for one only in a
    folder the index holds nothing in), and the special files (a FIFO, a socket: git lists
    none)."""
    held = ws.git.names(["ls-files", "-z", *ws.pathspec()])
    new = (path for tag, path in entries if tag == "?")
    folders = {ws.prefix}
    for folder in {name.rpartition("/")[0] for name in [*held, *new]}:
        while len(folder) > len(ws.prefix) and folder not in folders:
            folders.add(folder)
            folder = folder.rpartition("/")[0]
    top = ws.git.work_tree
    nested: list[str] = []
    special: dict[str, str] = {}
    for name in sorted(folders):  # (a folder before the folders in it)
        where = top / name
        if not _outside(name, nested) or os.path.islink(where) or not os.path.isdir(where):
            continue
        if name != ws.prefix and os.path.lexists(where / ".git"):
            nested.append(name)
            continue
        with contextlib.suppress(OSError), os.scandir(where) as found:
            for entry in found:
                if entry.is_file(follow_symlinks=False) or entry.is_dir(follow_symlinks=False):
                    continue
                kind = _SPECIAL.get(stat.S_IFMT(entry.stat(follow_symlinks=False).st_mode))
                if kind is not None:
                    special[f"{name}/{entry.name}" if name else entry.name] = kind
    with contextlib.suppress(CheckpointError):  # (those git ignores are no snapshot's concern)
        for name in ws.git.ignored(list(special)):
            special.pop(name, None)
    left = [
        Skipped(ws.relative(p), f"{k}: not a file a snapshot holds") for p, k in special.items()
    ]
    return nested, left


_SPECIAL = {stat.S_IFIFO: "a FIFO", stat.S_IFSOCK: "a socket", stat.S_IFCHR: "a device"}


def special(mode: int) -> str | None:
    """Why a file of ``mode`` is in no snapshot (None: a file or a link, which are)."""
    if stat.S_ISREG(mode) or stat.S_ISLNK(mode):
        return None
    return f"{_SPECIAL.get(stat.S_IFMT(mode), 'a special file')}: not a file a snapshot holds"


def _outside(path: str, folders: list[str]) -> bool:
    """Whether ``path`` is in none of ``folders`` (nor one of them)."""
    return not any(path == f or path.startswith(f + "/") for f in folders)


def _quoted(path: str) -> bytes:
    """A path as a line of ``--stdin-paths``: C-quoted when it needs to be (git unquotes it)."""
    raw = path.encode("utf-8", "surrogateescape")
    if b"\n" not in raw and b"\\" not in raw and not raw.startswith(b'"'):
        return raw
    escaped = {ord("\\"): b"\\\\", ord('"'): b'\\"', ord("\n"): b"\\n"}
    return b'"' + b"".join(escaped.get(c, bytes([c])) for c in raw) + b'"'


def disk_ids(ws: Workspace, paths: list[str], *, write: bool = False) -> dict[str, tuple[str, str]]:
    """Each of ``paths`` that is a file or a link: (its mode, its blob's id), by one ``git
    hash-object --no-filters`` (a link's target given through a file: git follows links);
    ``write``: the blobs written too."""
    top = ws.git.work_tree
    modes: dict[str, str] = {}
    with tempfile.TemporaryDirectory(prefix="segue-links-") as links:
        lines: list[bytes] = []
        for path in paths:
            with contextlib.suppress(OSError):
                info = (top / path).lstat()
                if stat.S_ISLNK(info.st_mode):
                    target = Path(links, str(len(lines)))
                    target.write_bytes(os.fsencode(os.readlink(top / path)))
                    lines.append(_quoted(str(target)))
                    modes[path] = "120000"
                elif stat.S_ISREG(info.st_mode):
                    lines.append(_quoted(path))
                    modes[path] = "100755" if info.st_mode & 0o111 else "100644"
        if not lines:
            return {}
        args = ["hash-object", *(["-w"] if write else []), "--no-filters", "--stdin-paths"]
        done = ws.git.run(args, stdin=b"\n".join(lines) + b"\n", check=False)
    ids = done.stdout.decode("ascii", "replace").split()
    if done.returncode != 0 or len(ids) != len(modes):
        if len(paths) == 1:
            return {}  # (gone or changed into something else as git read it)
        found: dict[str, tuple[str, str]] = {}
        for path in paths:  # (one of them gone or changed as it was read: each on its own)
            found.update(disk_ids(ws, [path], write=write))
        return found
    return {path: (mode, sha) for (path, mode), sha in zip(modes.items(), ids, strict=True)}


def capture(
    ws: Workspace,
    ref: str,
    *,
    parent: str | None,
    message: str,
    max_bytes: int = DEFAULT_MAX_FILE,
) -> Snapshot:
    """Snapshot the folder as a commit under ``ref``, its parent the thread's previous snapshot
    ``parent`` (None: the first); its changes counted against that, else HEAD, else nothing."""
    index = ws.index
    with locked(index):
        # git's lock of segue's index, left by a git killed under this lock (each git holds
        # this lock while it runs, and only they write this index): stale
        index.with_name(index.name + ".lock").unlink(missing_ok=True)
        _seed(ws)
        try:
            tree, skipped = _snapshot(ws, max_bytes)
        except CheckpointError:
            # segue's index is no use (a copy git cannot read, a conflict in it): afresh
            index.unlink(missing_ok=True)
            _seed_fresh(ws)
            tree, skipped = _snapshot(ws, max_bytes)
        parents = ["-p", parent] if parent and is_commit(ws, parent) else []
        commit = ws.git.out(
            ["commit-tree", tree, *parents, "-F", "-"],
            stdin=message.encode("utf-8", "surrogateescape"),
        )
        ws.git.run(["update-ref", ref, commit])
        if parents:
            changes, against = changes_between(ws, parents[1], tree), "previous"
        elif not ws.private and (head := _changes_from_head(ws, tree)) is not None:
            changes, against = head, "HEAD"
        else:
            changes, against = changes_between(ws, None, tree), "nothing"
    return Snapshot(commit, tree, ref, changes, tuple(skipped), against)


def _snapshot(ws: Workspace, max_bytes: int) -> tuple[str, list[Skipped]]:
    """segue's index brought to the folder as it is, its tree written; and what was left out."""
    entries = listing(ws)
    nested, special = _folders(ws, entries)
    entries = [e for e in entries if _outside(e[1], nested)]
    take, skipped = screen(ws, entries, max_bytes)
    skipped += special
    gone = [ws.full(s.path) for s in skipped] + _ignored_since(ws)
    if nested:  # (a folder made a repository of its own since a snapshot took its files)
        skipped += [Skipped(ws.relative(n), "a git repository of its own") for n in nested]
        gone += ws.git.names(["ls-files", "-z", "--", *nested])
    out = set(gone)
    ids = disk_ids(ws, [p for p in take if p not in out], write=True)
    records = [f"{mode} {sha}\t{path}" for path, (mode, sha) in ids.items()]
    if removed := [p for p in [*take, *gone] if p not in ids]:
        sha256 = ws.git.out(["rev-parse", "--show-object-format"]) == "sha256"
        records += [f"0 {'0' * (64 if sha256 else 40)}\t{p}" for p in removed]
    for tag, path in entries:
        if tag == "S" and (commit := _submodule(ws, path)) is not None:
            records.append(f"160000 {commit}\t{path}")
    feed = "".join(r + "\0" for r in records).encode("utf-8", "surrogateescape")
    updated = ws.git.run(["update-index", "-z", "--index-info"], stdin=feed)
    for line in updated.stderr.decode("utf-8", "surrogateescape").splitlines():
        if line.startswith("Ignoring path "):  # (a name git keeps out of its trees)
            skipped.append(Skipped(ws.relative(line[14:]), "a name git keeps out of its trees"))
    tree = ws.git.out(["write-tree"])
    if tree == EMPTY_TREE.get(len(tree)):  # (git knows it without writing it; fsck does not)
        ws.git.run(["hash-object", "-w", "-t", "tree", "--stdin"], stdin=b"")
    return tree, list({s.path: s for s in skipped}.values())


def _submodule(ws: Workspace, path: str) -> str | None:
    """The commit the submodule at ``path`` is at now (None: not there, or none)."""
    where = ws.git.work_tree / path
    if not (where / ".git").exists():  # (else git answers with the outer repository's HEAD)
        return None
    found = call(ws.git.program, ["rev-parse", "--verify", "-q", "HEAD"], where, ws.git.env)
    return found.strip() if found else None


def is_commit(ws: Workspace, rev: str) -> bool:
    done = ws.git.run(["cat-file", "-t", rev], check=False)
    return done.returncode == 0 and done.stdout.strip() == b"commit"


def _changes_from_head(ws: Workspace, tree: str) -> tuple[Change, ...] | None:
    """The changes against the user's HEAD (None: no commit yet). Where git converts files on
    their way in, a file changed only where git, converting it, finds it so (``diff-index``)."""
    try:
        changes = changes_between(ws, "HEAD^{tree}", tree)
    except CheckpointError:
        return None  # no commit yet
    if not any(c.status == "modified" for c in changes):
        return changes
    theirs = users_index(ws)
    if not _converts(ws, theirs):
        return changes
    args = ["diff-index", "-z", "--numstat", "HEAD", *ws.pathspec()]
    done = ws.git.run(args, check=False, index=theirs)
    if done.returncode != 0:
        return changes
    found = {ws.relative(p): n for p, n in read_diff(done.stdout)[1].items()}
    return tuple(
        c if c.status != "modified" else Change(c.path, c.status, *found[c.path])
        for c in changes
        if c.status != "modified" or c.path in found
    )


def changes_between(ws: Workspace, old: str | None, new: str) -> tuple[Change, ...]:
    """The files of the folder that differ from ``old`` (a tree-ish; None: nothing) to ``new``,
    with their lines added and removed (git's ``--numstat``)."""
    args = ["diff-tree", "-r", "-z", "--raw", "--numstat", "--no-renames"]
    base = old or EMPTY_TREE[len(new)]
    raw, counts = read_diff(ws.git.run([*args, base, new, *ws.pathspec()]).stdout)
    return tuple(
        Change(ws.relative(p), _STATUSES.get(s, "modified"), *counts.get(p, (None, None)))
        for p, (_old, _new, s) in sorted(raw.items())
    )


_STATUSES = {"A": "added", "M": "modified", "D": "deleted", "T": "type"}
