"""One of several processes recording into the same store at once (tests/test_store_concurrency.py).

    python -m tests.store_worker URL GO_FILE WORKER BATCHES AGENTS [SHARED_BATCH]
    python -m tests.store_worker --open URL GO_FILE

It waits until GO_FILE exists (so all start together), opens the store (a new store: they race
to make it), then records as fast as it can: BATCHES batches of its own with AGENTS agents
each, and, given SHARED_BATCH, AGENTS agents into that batch too (ordinals WORKER*AGENTS+n).
It prints the ids of its batches as JSON; any failure is a non-zero exit. With ``--open`` it
only opens the store, and prints ``{"made": N, "revision": R}``: whether it made the schema
(N statement lists asked for) and the revision it found.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import orjson

from segue.model.conversation import Provider
from segue.store import AgentResult, ddl, open_store


def agent(worker: int, batch: int, n: int, ordinal: int) -> AgentResult:
    session = f"w{worker}-b{batch}-a{n}"
    if n % 5 == 4:
        return AgentResult(
            ordinal, Provider.CLAUDE, session, state="working", skipped="a turn is running"
        )
    return AgentResult(
        ordinal,
        Provider.CODEX,
        session,
        cwd=f"/src/w{worker}",
        pane=f"%{n}",
        pid=1000 + n,
        state="limit",
        target_provider=Provider.CLAUDE,
        target_session=f"t-{session}",
        label=("native", "raw", "shrunk")[n % 3],
        summary=f"worker {worker}, agent {n}",
    )


def wait_for(go: Path) -> None:
    deadline = time.monotonic() + 60
    while not go.exists():
        if time.monotonic() > deadline:
            raise SystemExit("never told to go")
        time.sleep(0.002)


def open_only(url: str, go: Path) -> None:
    made = 0
    statements = ddl.create_statements

    def counted(backend: str) -> list[str]:
        nonlocal made
        made += 1
        return statements(backend)

    ddl.create_statements = counted
    wait_for(go)
    with open_store(url) as store:
        revision = store.schema_revision()
    sys.stdout.write(orjson.dumps({"made": made, "revision": revision}).decode() + "\n")


def main(argv: list[str]) -> None:
    if argv[0] == "--open":
        open_only(argv[1], Path(argv[2]))
        return
    url, go, worker, batches, agents = (
        argv[0],
        Path(argv[1]),
        int(argv[2]),
        int(argv[3]),
        int(argv[4]),
    )
    shared = argv[5] if len(argv) > 5 else None
    wait_for(go)
    created = []
    with open_store(url) as store:
        for b in range(batches):
            header = store.create_batch(
                Provider.CODEX, Provider.CLAUDE, selection={"worker": worker}, planned=agents
            )
            created.append(header.id)
            for n in range(agents):
                store.add_agent(header.id, agent(worker, b, n, n))
                if shared is not None and b == 0:
                    store.add_agent(shared, agent(worker, -1, n, worker * agents + n))
    sys.stdout.write(orjson.dumps(created).decode() + "\n")


if __name__ == "__main__":
    main(sys.argv[1:])
