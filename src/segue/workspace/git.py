"""Running git for segue's checkpoints: plumbing only, never through the user's index, HEAD,
branches or stash.

Every command runs with an environment of its own: the user's ``GIT_*`` variables (a
``GIT_DIR`` or ``GIT_INDEX_FILE`` left in a shell) are dropped, pathspecs are literal, no pager
or prompt is ever started, and segue signs its commits itself (no ``user.name`` is needed).
"""

from __future__ import annotations

import contextlib
import contextvars
import fcntl
import os
import shutil
import subprocess
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

import msgspec

from segue.model.errors import CheckpointError

__all__ = [
    "Counts", "Entry", "Git", "Raw", "call", "clean_env", "failed", "find_git", "init_bare",
    "locked", "probe", "read_diff", "split_names",
]  # fmt: skip

GIT_TIMEOUT_S = 300.0
# The lock of the workspace a command runs under (segue's flock of its index), handed to every
# git it starts: a git that outlives a killed segue holds the lock until it ends, so the next
# capture or restore never runs beside it.
_HELD: contextvars.ContextVar[tuple[int, ...]] = contextvars.ContextVar("held", default=())
# Every git command: an index of segue's is never written split (a user's core.splitIndex would
# put a shared index file of segue's index into their .git at each capture), and its entries
# are never marked unchanged (a user's core.ignoreStat: then no later edit would be listed).
_ALWAYS = ("-c", "core.splitIndex=false", "-c", "core.ignoreStat=false")
_SETTINGS = {
    "GIT_AUTHOR_NAME": "segue",
    "GIT_AUTHOR_EMAIL": "segue@localhost",
    "GIT_COMMITTER_NAME": "segue",
    "GIT_COMMITTER_EMAIL": "segue@localhost",
    "GIT_LITERAL_PATHSPECS": "1",
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_PAGER": "cat",
    "LC_ALL": "C",
}


Entry = tuple[str, str]  # a file in a tree or the index: its mode and its blob's id
Raw = dict[str, tuple[Entry | None, Entry | None, str]]  # (old, new: None where not there, status)
Counts = dict[str, tuple[int | None, int | None]]  # lines added and removed (None: binary)


@contextlib.contextmanager
def locked(index: Path) -> Iterator[None]:
    """One capture or restore of a workspace at a time; every git started within it holds the
    lock too (one that outlives a killed segue keeps the next capture waiting)."""
    fd = os.open(
        f"{index}.segue-lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW, 0o600
    )
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        token = _HELD.set((*_HELD.get(), fd))
        try:
            yield
        finally:
            _HELD.reset(token)
    finally:
        os.close(fd)


def find_git(env: Mapping[str, str]) -> str:
    """The git program on the ``PATH`` of ``env``."""
    found = shutil.which("git", path=env.get("PATH") or os.defpath)
    if found is None:
        raise CheckpointError("git is not installed (on PATH): checkpoints need it")
    return found


def clean_env(env: Mapping[str, str]) -> dict[str, str]:
    return {**{k: v for k, v in env.items() if not k.startswith("GIT_")}, **_SETTINGS}


class Git(msgspec.Struct, frozen=True):
    """git on one repository: ``git_dir`` holds the objects and refs, ``work_tree`` is the
    folder the files are read from and written to, ``index`` the index file it uses (never the
    user's own)."""

    program: str
    git_dir: Path
    work_tree: Path
    index: Path | None
    env: Mapping[str, str]

    def _env(self, index: Path | None, work_tree: bool) -> dict[str, str]:
        env = clean_env(self.env)
        env["GIT_DIR"] = str(self.git_dir)
        if work_tree:  # (a command about the repository itself, e.g. worktree: none of these)
            env["GIT_WORK_TREE"] = str(self.work_tree)
            chosen = index or self.index
            if chosen is not None:
                env["GIT_INDEX_FILE"] = str(chosen)
        return env

    def run(
        self,
        args: Sequence[str],
        *,
        stdin: bytes | None = None,
        check: bool = True,
        index: Path | None = None,
        work_tree: bool = True,
    ) -> subprocess.CompletedProcess[bytes]:
        """git to its end (killed past the time limit), holding the locks held now: its exit
        code and output (a failure raised, with ``check``)."""
        try:
            done = subprocess.run(
                [self.program, *_ALWAYS, *args],
                cwd=self.work_tree,
                env=self._env(index, work_tree),
                input=stdin or b"",
                capture_output=True,
                timeout=GIT_TIMEOUT_S,
                pass_fds=_HELD.get(),
                check=False,
            )
        except subprocess.TimeoutExpired:
            raise CheckpointError(
                f"{self.work_tree}: git {args[0]} took more than {GIT_TIMEOUT_S:.0f} s"
            ) from None
        except OSError as exc:
            raise CheckpointError(f"{self.work_tree}: cannot run git: {exc.strerror}") from None
        if check and done.returncode != 0:
            raise failed(done, self.work_tree, args[0])
        return done

    def ignored(
        self, paths: Sequence[str], *, index: Path | None = None, rules_only: bool = False
    ) -> set[str]:
        """Those of ``paths`` (from the work tree's top) that git ignores: ``git check-ignore``
        through ``index`` (else this one's: a file it holds is not ignored; ``rules_only``: the
        rules alone). Each is given as ``./path``, so that a name starting with ``:`` is no
        pathspec magic."""
        if not paths:
            return set()
        # (check-ignore takes paths, and refuses the literal pathspec magic)
        args = ["--no-literal-pathspecs", "check-ignore", "-z", "--stdin"]
        feed = b"".join(b"./" + p.encode("utf-8", "surrogateescape") + b"\0" for p in paths)
        args += ["--no-index"] if rules_only else []
        done = self.run(args, stdin=feed, check=False, index=index)
        if done.returncode not in (0, 1):
            raise CheckpointError(
                f"{self.work_tree}: git cannot tell which files are ignored: {_last(done.stderr)}"
            )
        return {n[2:] if n.startswith("./") else n for n in split_names(done.stdout)}

    def out(self, args: Sequence[str], *, stdin: bytes | None = None) -> str:
        return self.run(args, stdin=stdin).stdout.decode("utf-8", "surrogateescape").strip()

    def names(
        self, args: Sequence[str], *, check: bool = True, index: Path | None = None
    ) -> list[str]:
        """The paths a ``-z`` listing of git's prints."""
        return split_names(self.run(args, check=check, index=index).stdout)


def split_names(out: bytes) -> list[str]:
    return [n.decode("utf-8", "surrogateescape") for n in out.split(b"\0") if n]


def read_diff(out: bytes) -> tuple[Raw, Counts]:
    """git's ``-z --raw`` output, with ``--numstat`` or without."""
    raw: Raw = {}
    counts: Counts = {}
    parts = iter(out.split(b"\0"))
    for part in parts:
        if part.startswith(b":"):
            old_mode, new_mode, old_id, new_id, status = part[1:].decode().split()[:5]
            raw[next(parts, b"").decode("utf-8", "surrogateescape")] = (
                None if old_mode == "000000" else (old_mode, old_id),
                None if new_mode == "000000" else (new_mode, new_id),
                status[:1],
            )
        elif len(fields := part.split(b"\t", 2)) == 3:
            added, removed = (int(n) if n.isdigit() else None for n in fields[:2])
            counts[fields[2].decode("utf-8", "surrogateescape")] = (added, removed)
    return raw, counts


def failed(done: subprocess.CompletedProcess[bytes], where: Path, what: str) -> CheckpointError:
    """The error of a git command that failed: its last line of complaint."""
    return CheckpointError(f"{where}: git {what} failed: {_last(done.stderr)}")


def _last(stderr: bytes) -> str:
    lines = [
        line.strip() for line in stderr.decode("utf-8", "replace").splitlines() if line.strip()
    ]
    return lines[-1][:300] if lines else "no message"


def call(program: str, args: Sequence[str], folder: Path, env: Mapping[str, str]) -> str | None:
    """What git, run on its own in ``folder`` (no repository named), prints; None when it fails
    or cannot be run."""
    try:
        done = subprocess.run(
            [program, *args],
            cwd=folder,
            env=clean_env(env),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=60.0,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout.decode("utf-8", "surrogateescape") if done.returncode == 0 else None


def probe(program: str, folder: Path, env: Mapping[str, str]) -> tuple[Path, Path, Path] | None:
    """The repository ``folder`` is in, as (its git dir, its top level, its object folder: a
    linked worktree's is its main repository's), or None when it is in none (or git
    cannot use it: a bare repository, a folder it does not trust)."""
    args = ["rev-parse", "--absolute-git-dir", "--show-toplevel", "--git-path", "objects"]
    lines = (call(program, args, folder, env) or "").splitlines()
    return (Path(lines[0]), Path(lines[1]), folder / lines[2]) if len(lines) == 3 else None


def init_bare(program: str, git_dir: Path, env: Mapping[str, str]) -> None:
    """A new bare repository in ``git_dir`` (an existing one is left as it is)."""
    git_dir.parent.mkdir(parents=True, exist_ok=True)
    if call(program, ["init", "--bare", "--quiet", str(git_dir)], git_dir.parent, env) is None:
        raise CheckpointError(f"{git_dir}: cannot make a repository")
