"""What the screens of ``segue tui`` share, in one object the app makes and hands to each screen
that needs it: the environment and the watch policy, the clock and the agents scan (tests give
fixed ones), the session listing kept between reloads, the writers the process waits for, and
the control of the one watch loop. It knows no screen and no app: a screen gets it in its
constructor, and what it asks of Textual (``notify``, ``push_screen``) it asks of ``self.app``."""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from segue.watch import DEFAULT_INTERVAL_S, WatchPolicy

if TYPE_CHECKING:
    from segue.running.agents import Agent

__all__ = ["TuiState"]


class TuiState:
    """The shared state of one ``segue tui``. ``clock`` and ``agents`` stand in for the
    machine's clock and its agents scan; ``plan`` makes each fleet row's dry run;
    ``start_watching`` starts the watch loop once the fleet screen is up; ``refresh_every`` is
    the seconds between reads of the fleet (0: never)."""

    def __init__(
        self,
        *,
        env: Mapping[str, str] | None = None,
        policy: WatchPolicy | None = None,
        interval: float = DEFAULT_INTERVAL_S,
        remote: bool = True,
        clock: Callable[[], datetime] | None = None,
        agents: Callable[[], Sequence[Agent]] | None = None,
        plan: bool = True,
        start_watching: bool = False,
        keep_listing: bool = False,
        refresh_every: float = 10.0,
    ) -> None:
        self.env = dict(os.environ) if env is None else dict(env)
        self.policy = policy or WatchPolicy()
        self.under = self.policy.under
        self.interval = interval
        self.remote = remote
        self.clock = clock or (lambda: datetime.now(UTC))
        self._agents = agents
        self.plan = plan
        self.start_watching = start_watching
        self.refresh_every = refresh_every
        self._keep_listing = keep_listing
        self._listing = contextlib.ExitStack()
        self._listing_lock = threading.Lock()
        self._remembering = False
        self._writers: set[threading.Thread] = set()
        self._writers_lock = threading.Lock()
        self._watch_stop: threading.Event | None = None
        self._watch_gate = threading.Lock()  # one watch loop at a time, this app's own included
        self._watch_thread: threading.Thread | None = None

    def scan_agents(self) -> list[Agent]:
        """The running agents, now."""
        if self._agents is not None:
            return list(self._agents())
        from segue.running.agents import list_agents

        return list(list_agents(self.env, every_home=True))

    # -- the session listing ----------------------------------------------------------------

    def remember_listing(self) -> None:
        """From the first load on (in its worker, after the first paint), the session listing
        is kept between reloads; with ``keep_listing`` also from one run to the next."""
        from segue.providers.sessions import remembered_peeks

        with self._listing_lock:
            if not self._remembering:
                self._listing.enter_context(remembered_peeks(self.env, persist=self._keep_listing))
                self._remembering = True

    def forget_listing(self) -> None:
        """The end of it (the listing cache written, with ``keep_listing``)."""
        with self._listing_lock:
            self._listing.close()
            self._remembering = False

    # -- the writers ------------------------------------------------------------------------

    @contextlib.contextmanager
    def writing(self) -> Iterator[None]:
        """Around work that writes (a batch, a rollback, a fork, the watch loop): the app does
        not end under it, and segue tui waits for it before the process ends."""
        me = threading.current_thread()
        with self._writers_lock:
            self._writers.add(me)
        try:
            yield
        finally:
            with self._writers_lock:
                self._writers.discard(me)

    def writers(self) -> list[threading.Thread]:
        """The threads writing now."""
        with self._writers_lock:
            return [t for t in self._writers if t.is_alive()]

    def busy(self) -> list[threading.Thread]:
        """The writers but the watch loop (which stops after its pass): a switch, a rollback,
        a fork the app must not end under."""
        return [t for t in self.writers() if t is not self._watch_thread]

    # -- the watch loop ---------------------------------------------------------------------

    @property
    def watching(self) -> bool:
        return self._watch_stop is not None

    def start_watch(self) -> threading.Event:
        """The watch loop on: the event that stops the loop now started."""
        self._watch_stop = stop = threading.Event()
        return stop

    def stop_watch(self) -> None:
        """The watch loop off: it ends after the pass it is in."""
        if self._watch_stop is not None:
            self._watch_stop.set()
            self._watch_stop = None

    def watch_ended(self, stop: threading.Event) -> None:
        """The loop ``stop`` stops ended on its own (it failed): it is off, unless another
        was started since."""
        if self._watch_stop is stop:
            self._watch_stop = None

    @contextlib.contextmanager
    def watch_turn(self, stop: threading.Event) -> Iterator[bool]:
        """The loop's turn (in its worker): one loop at a time, so a loop stopped a moment ago
        ends its pass first. True once it is this loop's turn, False if ``stop`` came first."""
        while not self._watch_gate.acquire(timeout=0.2):
            if stop.is_set():
                yield False
                return
        try:
            yield True
        finally:
            self._watch_gate.release()

    @contextlib.contextmanager
    def watch_writing(self) -> Iterator[None]:
        """Around the loop's passes: a writer, but one ``q`` need not wait for (it stops it)."""
        self._watch_thread = threading.current_thread()
        with self.writing():
            yield
