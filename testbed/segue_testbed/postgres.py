"""A private PostgreSQL server for tests and benchmarks: initdb into a scratch folder, started
on a free port of 127.0.0.1 (and a unix socket in that folder), stopped and deleted at the end.

It uses the server binaries of the machine (Debian's ``postgresql`` package puts them in
``/usr/lib/postgresql/<version>/bin``; ``$SEGUE_PG_BINDIR`` names another folder). PostgreSQL
refuses to run as root, so as root the server runs as the ``postgres`` user (``runuser``) in a
folder that user owns. Durability is switched off (``fsync=off``): a test server only needs to
be correct while it runs.

    with start_postgres() as server:
        url = server.create_database()      # postgresql+psycopg://postgres@127.0.0.1:<port>/t1
"""

from __future__ import annotations

import itertools
import os
import pwd
import re
import shutil
import socket
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType

__all__ = ["PostgresServer", "PostgresUnavailable", "find_bindir", "start_postgres"]

SERVER_USER = "postgres"
_SETTINGS = (
    "-c fsync=off -c synchronous_commit=off -c full_page_writes=off "
    "-c max_connections=200 -c log_min_messages=warning"
)


class PostgresUnavailable(RuntimeError):
    """This machine cannot run a PostgreSQL server (no binaries, no user to run it as)."""


def find_bindir() -> Path | None:
    """The folder of ``initdb`` and ``pg_ctl``: ``$SEGUE_PG_BINDIR``, PATH, else the newest
    ``/usr/lib/postgresql/<version>/bin``."""
    override = os.environ.get("SEGUE_PG_BINDIR")
    if override:
        return Path(override)
    on_path = shutil.which("initdb")
    if on_path and shutil.which("pg_ctl"):
        return Path(on_path).resolve().parent  # Debian links initdb into /usr/local/bin

    def version(path: Path) -> tuple[int, ...]:
        return tuple(int(n) for n in re.findall(r"\d+", path.parent.parent.name))

    found = sorted(Path("/usr/lib/postgresql").glob("*/bin/initdb"), key=version)
    return found[-1].parent if found else None


@dataclass
class PostgresServer:
    root: Path  # the scratch folder: data/, the log, the unix socket
    port: int
    bindir: Path
    prefix: list[str]  # how to run a server command (as the postgres user when root)
    _names: itertools.count[int] = field(default_factory=lambda: itertools.count(1))

    @property
    def data(self) -> Path:
        return self.root / "data"

    def url(self, database: str = "postgres") -> str:
        return f"postgresql+psycopg://{SERVER_USER}@127.0.0.1:{self.port}/{database}"

    def create_database(self, name: str | None = None) -> str:
        """A new, empty database; its URL."""
        name = name or f"t{next(self._names)}"
        self._run(
            str(self.bindir / "createdb"), "-h", "127.0.0.1", "-p", str(self.port),
            "-U", SERVER_USER, name,
        )  # fmt: skip
        return self.url(name)

    def stop(self) -> None:
        if self.data.exists():
            subprocess.run(
                [*self.prefix, str(self.bindir / "pg_ctl"), "-D", str(self.data), "-m",
                 "immediate", "-w", "stop"],
                capture_output=True, timeout=60, check=False,
            )  # fmt: skip
        shutil.rmtree(self.root, ignore_errors=True)

    def _run(self, *argv: str) -> None:
        done = subprocess.run(
            [*self.prefix, *argv], capture_output=True, text=True, timeout=120, check=False
        )
        if done.returncode != 0:
            raise RuntimeError(f"{' '.join(argv)} failed: {done.stderr.strip() or done.stdout}")

    def __enter__(self) -> PostgresServer:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _prefix(root: Path) -> list[str]:
    """Run as this user, or (as root) as ``postgres`` in a folder it owns."""
    if os.geteuid() != 0:
        return []
    try:
        user = pwd.getpwnam(SERVER_USER)
    except KeyError:
        raise PostgresUnavailable(
            f"running as root and there is no {SERVER_USER!r} user to run PostgreSQL as "
            "(Debian's postgresql package creates it)"
        ) from None
    runuser = shutil.which("runuser")
    if runuser is None:
        raise PostgresUnavailable("running as root and runuser (util-linux) is not installed")
    os.chown(root, user.pw_uid, user.pw_gid)
    return [runuser, "-u", SERVER_USER, "--"]


def start_postgres() -> PostgresServer:
    """A new server, running; raises :class:`PostgresUnavailable` if this machine has none."""
    bindir = find_bindir()
    if bindir is None or not (bindir / "initdb").is_file():
        raise PostgresUnavailable(
            "no PostgreSQL server binaries (initdb, pg_ctl): install Debian's postgresql "
            "package, or set SEGUE_PG_BINDIR"
        )
    root = Path(tempfile.mkdtemp(prefix="segue-pg-"))
    try:
        prefix = _prefix(root)
        server = PostgresServer(root=root, port=0, bindir=bindir, prefix=prefix)
        server._run(
            str(bindir / "initdb"), "-D", str(server.data), "-U", SERVER_USER, "--auth=trust",
            "--encoding=UTF8", "--locale=C", "--no-sync",
        )  # fmt: skip
        for attempt in range(5):  # a free port can be taken before the server binds it
            server.port = _free_port()
            options = f"-h 127.0.0.1 -p {server.port} -k {root} {_SETTINGS}"
            try:
                server._run(
                    str(bindir / "pg_ctl"), "-D", str(server.data), "-l", str(root / "log"),
                    "-o", options, "-w", "-t", "60", "start",
                )  # fmt: skip
                return server
            except RuntimeError:
                if attempt == 4:
                    log = (root / "log").read_text(errors="replace")[-2000:]
                    raise RuntimeError(f"PostgreSQL did not start:\n{log}") from None
        raise AssertionError("unreachable")
    except BaseException:
        PostgresServer(root=root, port=0, bindir=bindir, prefix=[]).stop()
        raise
