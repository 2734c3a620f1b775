"""The systemd user unit that keeps ``segue watch`` running (``segue watch --print-unit``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from segue.model.errors import SegueError
from segue.store.location import URL_VARIABLE
from segue.support.places import user_folder
from segue.support.systemd import environment_setting, exec_line, path_setting

__all__ = ["systemd_unit", "unit_environment_file"]


def systemd_unit(argv: Sequence[str], env: Mapping[str, str]) -> str:
    """A systemd user unit that keeps ``segue watch`` running (``--print-unit``).

    segue's variables go in as ``Environment=`` lines but ``$SEGUE_DATABASE_URL``: a unit file
    is readable by every user of the machine, and the URL may hold the database's password. When
    it is set, the unit reads it from :func:`unit_environment_file` (``EnvironmentFile=``, a file
    the user keeps readable only by themselves; the service does not start without it, rather
    than watch the default store in its place). Every ``%`` and ``$`` is escaped, and every word
    quoted as systemd reads it back (:mod:`segue.support.systemd`)."""
    try:
        keep = [
            environment_setting(k, v)
            for k, v in env.items()
            if k.startswith(("SEGUE_", "CODEX_HOME", "CLAUDE_CONFIG_DIR")) and k != URL_VARIABLE
        ]
        lines = [
            "[Unit]",
            "Description=segue watch: move the agents off an exhausted provider, and back",
            "",
            "[Service]",
            f"ExecStart={exec_line(list(argv))}",
            *(f"Environment={k}" for k in keep),
        ]
        if env.get(URL_VARIABLE):
            path = path_setting(str(unit_environment_file(env)))
            lines += [
                f"# {URL_VARIABLE} (segue's store) is not written in this file: it may hold a",
                "# password, and a unit file is readable by every user. The service reads it",
                "# from the file below, one line, kept readable only by you (chmod 600); without",
                "# that file the service does not start:",
                f"#   {URL_VARIABLE}=postgresql://user:password@host/database",
                f"EnvironmentFile={path}",
            ]
    except ValueError as why:
        raise SegueError(f"cannot write the systemd unit: {why}") from None
    lines += [
        "Restart=on-failure",
        "RestartSec=30",
        "",
        "[Install]",
        "WantedBy=default.target",
    ]
    return "\n".join(lines) + "\n"


def unit_environment_file(env: Mapping[str, str]) -> Path:
    """The file the unit of :func:`systemd_unit` reads ``$SEGUE_DATABASE_URL`` from:
    ``watch.env`` in segue's config folder (``~/.config/segue/watch.env``)."""
    return user_folder("config", env) / "watch.env"
