"""Going back in a thread: checkpoints of its workspace after every run (and the CLIs' hooks
that take them), rollback of the files and the context together, and forks.

    from segue.rewind import checkpoint_now, list_thread_checkpoints

    taken = checkpoint_now("01a22910")          # the thread's folder, as its newest run's
    for c in list_thread_checkpoints("01a22910").checkpoints:
        print(c.run_ordinal, c.kind, c.commit_id, len(c.files))
"""

from __future__ import annotations

from segue.rewind.checkpoints import (
    checkpoint_now,
    handle_hook,
    install_hooks,
    list_thread_checkpoints,
    uninstall_hooks,
)

__all__ = [
    "checkpoint_now",
    "handle_hook",
    "install_hooks",
    "list_thread_checkpoints",
    "uninstall_hooks",
]
