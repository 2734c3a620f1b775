"""``segue tui``: the app, its keys, and the watch loop it can run (``w``) with the same policy
as ``segue watch``. Every action is a library function the commands also call; this module only
shows them."""

from __future__ import annotations

import contextlib
import os
import sys
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, ClassVar, TextIO

from textual import events, work
from textual.app import App
from textual.binding import Binding, BindingType

from segue.tui.common import Help, Question, Sheet, from_thread, one_line
from segue.tui.fleet import FleetScreen
from segue.watch import DEFAULT_INTERVAL_S, Mode, WatchPolicy

if TYPE_CHECKING:
    from textual.driver import Driver

    from segue.running.agents import Agent
    from segue.watch import WatchEvent

__all__ = ["SegueApp", "run_tui"]


class SegueApp(App[None]):
    """The fleet on one screen. ``clock`` and ``agents`` stand in for the machine's clock and
    its agents scan (tests give fixed ones); ``plan`` makes each row's dry run."""

    TITLE = "segue"
    CSS_PATH = "segue.tcss"
    ENABLE_COMMAND_PALETTE = False
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("q", "quit", "Quit"),
        Binding("question_mark", "help", "Keys"),
    ]

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
        super().__init__()
        self.env = dict(os.environ) if env is None else dict(env)
        self.policy = policy or WatchPolicy()
        self.under = self.policy.under
        self.interval = interval
        self.remote = remote
        self.clock = clock or (lambda: datetime.now(UTC))
        self._agents = agents
        self.plan = plan
        self.start_watching = start_watching  # the fleet screen starts it once it is up
        self._watch_stop: threading.Event | None = None
        self._keep_listing = keep_listing
        self.refresh_every = refresh_every  # seconds between reads of the fleet (0: never)
        self._listing = contextlib.ExitStack()
        self._listing_lock = threading.Lock()
        self._remembering = False
        self._writers: set[threading.Thread] = set()
        self._writers_lock = threading.Lock()
        self._watch_gate = threading.Lock()  # one watch loop at a time, this app's own included
        self._watch_thread: threading.Thread | None = None

    def get_driver_class(self) -> type[Driver]:
        """Textual's driver for this platform, with ``escape`` kept before a named key (an ESC
        then ``enter`` typed within Textual's wait for an escape sequence was one ``enter``)."""
        from segue.tui.keys import escape_kept_driver

        return escape_kept_driver(super().get_driver_class())

    def on_key(self, event: events.Key) -> None:
        """A key come up from the focused widget, before any binding (the widget's, the
        screen's, the app's) is matched to it: one typed before the sheet on top was on screen
        is dropped, whichever screen it came up through (:class:`Sheet`)."""
        sheet = self.screen
        if isinstance(sheet, Sheet) and not sheet.takes(event):
            event.stop()
            event.prevent_default()  # (App's own handler, the bindings, is not run)
            self.bell()

    def remember_listing(self) -> None:
        """From the first load on (in its worker, after the first paint), the session listing
        is kept between reloads; with ``keep_listing`` also from one run to the next."""
        from segue.providers.sessions import remembered_peeks

        with self._listing_lock:
            if not self._remembering:
                self._listing.enter_context(remembered_peeks(self.env, persist=self._keep_listing))
                self._remembering = True

    def on_unmount(self) -> None:
        if self._watch_stop is not None:  # however the app ends, the loop ends with it
            self._watch_stop.set()
        self.forget_listing()

    def forget_listing(self) -> None:
        """The end of it (the listing cache written, with ``keep_listing``)."""
        with self._listing_lock:
            self._listing.close()
            self._remembering = False

    def scan_agents(self) -> list[Agent]:
        """The running agents, now."""
        if self._agents is not None:
            return list(self._agents())
        from segue.running.agents import list_agents

        return list(list_agents(self.env, every_home=True))

    def on_mount(self) -> None:
        self.push_screen(FleetScreen())  # it starts the watch once it is up (start_watching)

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
        with self._writers_lock:
            return [t for t in self._writers if t.is_alive()]

    @property
    def fleet(self) -> FleetScreen:
        for screen in self.screen_stack:
            if isinstance(screen, FleetScreen):
                return screen
        raise LookupError("no fleet screen")

    def action_help(self) -> None:
        if isinstance(self.screen, Help):
            return
        keys: list[tuple[str, str]] = []
        for binding in [*type(self.screen).BINDINGS, *type(self).BINDINGS]:
            if isinstance(binding, Binding) and binding.description:
                said = binding.tooltip or binding.description
                keys.append((self.get_key_display(binding), said))
        keys += [
            ("tab", "The next field or button"),
            ("mouse", "Click a key in the footer to do it; click a row, then again to open it"),
        ]
        self.push_screen(Help(keys))

    # -- the watch loop ---------------------------------------------------------------------

    @property
    def watching(self) -> bool:
        return self._watch_stop is not None

    def toggle_watch(self) -> None:
        if self._watch_stop is not None:
            self._watch_stop.set()
            self._watch_stop = None
            self.notify("Watch stops after the pass it is in.")
            self._watch_line("watch: stopped")
            self.fleet.watch_shown(False)
            return
        stop = threading.Event()
        self._watch_stop = stop
        policy = self.policy
        how = "moves on its own" if policy.move is Mode.AUTO else "asks before each move"
        self._watch_line(f"watch: on, every {self.interval:g} s; {how}, returns {policy.returns}")
        self.fleet.watch_shown(True)
        self._watch(stop)

    @work(thread=True, group="watch", exit_on_error=False)
    def _watch(self, stop: threading.Event) -> None:
        from segue.watch import watch

        asks = self.policy.move is Mode.ASK or self.policy.returns is Mode.ASK

        def ask(text: str) -> bool:
            return self._ask(text, stop)

        while not self._watch_gate.acquire(timeout=0.2):  # a loop stopped a moment ago ends
            if stop.is_set():  # its pass first
                return
        try:
            self.remember_listing()  # the app's listing is the outer one, not the loop's
            self._watch_thread = threading.current_thread()
            with self.writing():
                watch(
                    self.policy,
                    interval=self.interval,
                    env=self.env,
                    ask=ask if asks else None,
                    emit=lambda event: from_thread(self, self._watch_event, event),
                    stop=stop,
                )
        except Exception as exc:
            from_thread(self, self._watch_failed, stop, exc)
        finally:
            self._watch_gate.release()

    def _ask(self, text: str, stop: threading.Event) -> bool:
        """A watch question (from its thread): a sheet with the preview and one key."""
        answered = threading.Event()
        answer = [False]

        def given(yes: bool | None) -> None:
            answer[0] = bool(yes)
            answered.set()

        def show() -> None:
            self.bell()
            # it may come up over anything: a key meant for another screen never says yes
            self.push_screen(Question("segue watch", text, focus_yes=False), given)

        from_thread(self, show)
        while not answered.wait(0.5):
            if stop.is_set() or not self.is_running:
                return False
        return answer[0]

    def _watch_line(self, line: str) -> None:
        with contextlib.suppress(LookupError):
            self.fleet.watch_line(line)

    def _watch_event(self, event: WatchEvent) -> None:
        self._watch_line(event.line())
        if event.kind in ("moved", "returned"):
            self.fleet.reload()

    def _watch_failed(self, stop: threading.Event, exc: BaseException) -> None:
        if self._watch_stop is stop:
            self._watch_stop = None
        self._watch_line(f"watch: ended: {one_line(exc)}")
        self.notify(one_line(exc), severity="error", timeout=8)
        self.fleet.watch_shown(False)

    def action_quit(self) -> None:  # type: ignore[override]
        busy = [t for t in self.writers() if t is not self._watch_thread]
        if busy:
            self.notify("A switch, rollback or fork is running; q again once it ends.")
            return
        if self._watch_stop is not None:
            self._watch_stop.set()  # the loop ends after the pass it is in (segue tui waits)
        self.exit()


def run_tui(
    *,
    env: Mapping[str, str] | None = None,
    policy: WatchPolicy | None = None,
    interval: float = DEFAULT_INTERVAL_S,
    remote: bool = True,
    start_watching: bool = False,
    screen: TextIO | None = None,
) -> None:
    """``segue tui``: until ``q``, drawn on ``screen`` (a terminal; default: Textual's own,
    stderr). The session listing is kept between reloads, and from one ``segue tui`` or
    ``segue watch`` to the next (a file unchanged since, by size, time and inode, is not read
    again)."""
    app = SegueApp(
        env=env,
        policy=policy,
        interval=interval,
        remote=remote,
        start_watching=start_watching,
        keep_listing=True,
    )
    if screen is not None:
        from segue.tui.screen import driver_drawing_on

        app.driver_class = driver_drawing_on(screen, app.driver_class)
    import asyncio

    loop = asyncio.new_event_loop()  # run on a loop of ours: asyncio.run would wait at the
    try:  # end for every worker thread, a listing or a store wait included
        app.run(loop=loop)
    finally:
        app.forget_listing()
    for thread in app.writers():  # a watch pass that was moving agents: let it finish
        sys.stderr.write("segue tui: waiting for the watch's pass to finish…\n")
        thread.join()
    sys.stdout.flush()
    sys.stderr.flush()
    code = app.return_code or 0
    if any(t.is_alive() and not t.daemon for t in threading.enumerate()[1:]):
        os._exit(code)  # only readers are left (a listing, a store wait): no need to wait
    if code:
        raise SystemExit(code)
