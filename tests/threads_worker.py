"""One of several processes recording into the same thread graph at once
(tests/test_threads_concurrency.py).

    python -m tests.threads_worker URL GO_FILE WORKER RUNS SESSION_FILE THREAD_ID

It waits until GO_FILE exists (so all start together), opens the store, adopts SESSION_FILE
(every worker the same one: it must become one thread), then records RUNS runs and RUNS
handoffs into THREAD_ID, one transaction each, and syncs the adopted thread after each. It
prints what it recorded as JSON; any failure is a non-zero exit.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import orjson

from segue.store import open_store
from segue.threads import HandoffForm, HandoffStrategy, ThreadStore, adopt, sync
from tests.thread_records import NewRun, record_handoff, record_runs


def main(argv: list[str]) -> None:
    url, go, worker, count, session, thread_id = (
        argv[0],
        Path(argv[1]),
        int(argv[2]),
        int(argv[3]),
        argv[4],
        argv[5],
    )
    deadline = time.monotonic() + 60
    while not go.exists():
        if time.monotonic() > deadline:
            raise SystemExit("never told to go")
        time.sleep(0.002)
    with open_store(url) as store:
        threads = ThreadStore(store)
        adopted = adopt(store, session, {})
        pt = threads.graph(thread_id).provider_threads[0].id
        ordinals, handoffs = [], []
        for n in range(count):
            (run,) = record_runs(store, thread_id, [NewRun(pt, n + 1, f"w{worker}-r{n}")])
            ordinals.append(run.ordinal)
            handoff = record_handoff(
                store,
                thread_id,
                to_provider_thread_id=pt,
                from_provider_threads=[pt],
                covers=(run.ordinal, run.ordinal),
                strategy=HandoffStrategy.MANUAL_CONTEXT,
                form=HandoffForm.SUMMARY,
                text=f"w{worker}-h{n}",
            )
            handoffs.append(handoff.id)
            sync(store, adopted.thread.id, {})
    out = {"thread": adopted.thread.id, "ordinals": ordinals, "handoffs": handoffs}
    sys.stdout.write(orjson.dumps(out).decode() + "\n")


if __name__ == "__main__":
    main(sys.argv[1:])
