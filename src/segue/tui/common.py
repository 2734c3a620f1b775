"""What the screens share: the words and colours of a row and of a usage window, the small
question sheets, the key help, and the guard that turns any failure into one notification."""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

from rich.text import Text
from textual import events
from textual._time import get_time
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, DataTable, Input, Label, Static

from segue.model.errors import SegueError
from segue.model.times import local_clock

if TYPE_CHECKING:
    from textual.app import App

    from segue.model.conversation import Provider
    from segue.running.usage import ProviderUsage

GLYPHS = {
    "working": ("●", "cyan"),
    "waiting": ("◐", "magenta"),
    "idle": ("○", "green"),
    "parked": ("■", "red"),
    "error": ("✗", "bold red"),
}

T = TypeVar("T")
R = TypeVar("R")  # what a sheet gives back
PROJECT_CHARS = 20  # a project's name in a table, cut with an ellipsis beyond it


def one_line(exc: BaseException) -> str:
    """A failure as the one line a user sees."""
    if isinstance(exc, SegueError):
        return " ".join(str(exc).split())
    return f"internal error ({type(exc).__name__}: {exc}); please report it"


def told_failure(app: App[Any], exc: BaseException) -> None:
    """A failure as an error notification."""
    app.notify(one_line(exc), severity="error", timeout=8)


def guarded(method: Callable[..., T]) -> Callable[..., T | None]:
    """An action or handler whose failure is a notification, never a traceback."""

    @functools.wraps(method)
    def wrapper(self: Any, *args: Any, **kwargs: Any) -> T | None:
        try:
            return method(self, *args, **kwargs)
        except Exception as exc:
            told_failure(self.app, exc)
            return None

    return wrapper


def from_thread(app: App[Any], callback: Callable[..., Any], *args: Any) -> None:
    """Run ``callback`` on the app's loop from a worker thread (nothing once the app is gone)."""
    with contextlib.suppress(RuntimeError):
        app.call_from_thread(callback, *args)


def deliver(
    app: App[Any],
    make: Callable[[], T],
    done: Callable[[T], object],
    failed: Callable[[BaseException], object],
) -> None:
    """In a worker thread: what ``make`` makes given to ``done`` on the app's loop, or its
    failure to ``failed``."""
    try:
        made = make()
    except Exception as exc:
        from_thread(app, failed, exc)
        return
    from_thread(app, done, made)


def label(provider: Provider | None) -> str:
    """The provider's name for a person (``Claude Code``; ``?`` for none)."""
    from segue.providers import entry

    return "?" if provider is None else entry(provider).label


def glyph(state: str) -> Text:
    mark, style = GLYPHS.get(state, ("?", ""))
    return Text(mark, style=style)


def countdown(moment: datetime, now: datetime) -> str:
    """``1h 02m 03s`` to ``moment``; ``now`` once it passed."""
    seconds = int((moment - now).total_seconds())
    if seconds <= 0:
        return "now"
    days, seconds = divmod(seconds, 86400)
    hours, seconds = divmod(seconds, 3600)
    minutes, seconds = divmod(seconds, 60)
    if days:
        return f"{days}d {hours:02d}h"
    if hours:
        return f"{hours}h {minutes:02d}m {seconds:02d}s"
    return f"{minutes}m {seconds:02d}s"


def percent_style(used: float | None) -> str:
    if used is None:
        return "dim"
    return "green" if used < 50 else "yellow" if used < 80 else "bold red"


def banner(usage: ProviderUsage, label: str, now: datetime) -> Text:
    """A provider's usage in three lines: the verdict with the blocking window and a countdown to
    its reset, each window's used share in its colour, and the model switch a family limit
    suggests."""
    from segue.running.usage import window_label

    text = Text(f"{label}  ", style="bold")
    blocking = usage.blocking
    if usage.exhausted:
        text.append("exhausted", style="bold white on red")
        if blocking is not None:
            text.append(f"  {window_label(blocking)} limit")
            if blocking.resets_at is not None:
                text.append(f", resets in {countdown(blocking.resets_at, now)}", style="bold")
                text.append(f" ({local_clock(blocking.resets_at, now)})", style="dim")
            else:
                text.append(", reset time unknown", style="dim")
    else:
        text.append("available", style="bold green")
        if blocking is not None and blocking.used_percent is not None:
            text.append(f"  fullest: {window_label(blocking)}")
            if blocking.resets_at is not None:
                text.append(f", resets in {countdown(blocking.resets_at, now)}", style="dim")
    text.append("\n")
    if not usage.windows:
        text.append("no usage reported", style="dim")
    for n, window in enumerate(usage.windows):
        if n:
            text.append("  ")
        used = window.used_percent
        text.append(f"{window_label(window)} ")
        text.append("?" if used is None else f"{used:.0f}%", style=percent_style(used))
    if usage.suggestion:
        text.append("\n")
        text.append(f"family limit: switch model: {usage.suggestion}", style="yellow")
    return text


class Sheet(ModalScreen[R]):
    """A sheet a key brings up over a screen (a question, a plan to confirm, a list). A key
    typed before the sheet was on screen is not one it takes: the user could not have seen what
    it would say yes to, or meant it for the screen below. Only ``escape`` it takes however
    early it comes: it closes the sheet. (The app drops the others: :meth:`takes`.)

    This does not hang on timing: each key carries the moment Textual read it from the
    terminal, and the sheet the moment of its first paint, so the test is which came first. A
    key read before the paint is refused however late a busy app gets to it, and keys come in
    the order typed, so an early ``escape`` closes the sheet before the key after it arrives."""

    _shown_at: float | None = None

    @property
    def shown(self) -> bool:
        """Painted: from now on a key typed is one typed with the sheet in view."""
        return self._shown_at is not None

    def _on_mount(self, event: events.Mount) -> None:  # (as well as Screen's, and a sheet's own)
        self.call_after_refresh(self._now_shown)  # (once the screen with it is painted)

    def _now_shown(self) -> None:
        self._shown_at = get_time()  # (the clock a key is stamped with)

    def takes(self, event: events.Key) -> bool:
        """Whether the key may act on this sheet: ``escape``, or one typed with it in view."""
        shown_at = self._shown_at
        return event.key == "escape" or (shown_at is not None and event.time >= shown_at)


class Question(Sheet[bool]):
    """A yes-or-no question with its details: ``y`` or the answer button (focused, so ``enter``
    says yes, unless ``focus_yes`` is off: a question that comes up unasked), ``n`` or
    ``escape`` is no."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "dismiss(False)", "No"),
        Binding("n", "dismiss(False)", "No", show=False),
        Binding("y", "dismiss(True)", "Yes", show=False),
    ]

    def __init__(
        self, title: str, details: str, yes: str = "Go ahead", *, focus_yes: bool = True
    ) -> None:
        super().__init__()
        self._title, self._details, self._yes = title, details, yes
        self._focus_yes = focus_yes

    def compose(self) -> ComposeResult:
        with Vertical(classes="sheet"):
            yield Label(self._title, classes="sheet-title")
            yield Static(Text(self._details), classes="details")
            with Horizontal(classes="buttons"):
                yield Button(self._yes, variant="primary", id="yes")
                yield Button("Cancel", id="no")

    def on_mount(self) -> None:
        self.query_one("#yes" if self._focus_yes else "#no", Button).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "yes")


class AskText(Sheet[str | None]):
    """One line of input (a run number, a folder); ``escape`` gives None."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "dismiss", "Cancel")]

    def __init__(self, title: str, placeholder: str = "", value: str = "") -> None:
        super().__init__()
        self._title, self._placeholder, self._value = title, placeholder, value

    def compose(self) -> ComposeResult:
        with Vertical(classes="sheet"):
            yield Label(self._title, classes="sheet-title")
            yield Input(value=self._value, placeholder=self._placeholder, id="answer")
            with Horizontal(classes="buttons"):
                yield Button("OK", variant="primary", id="ok")
                yield Button("Cancel", id="cancel")

    def on_mount(self) -> None:
        self.query_one(Input).focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self.dismiss(event.value)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(self.query_one(Input).value if event.button.id == "ok" else None)


class Help(Sheet[None]):
    """Every key of the screen below it and of the app."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "dismiss", "Close"),
        Binding("q", "dismiss", "Close"),
        Binding("question_mark", "dismiss", "Close"),
    ]

    def __init__(self, keys: Sequence[tuple[str, str]]) -> None:
        super().__init__()
        self._keys = keys

    def compose(self) -> ComposeResult:
        with Vertical(classes="sheet"):
            yield Label("Keys", classes="sheet-title")
            table: DataTable[str] = DataTable(show_cursor=False, id="keys")
            table.add_columns("KEY", "DOES")
            for key, does in self._keys:
                table.add_row(key, does)
            yield table
            with Horizontal(classes="buttons"):
                yield Button("Close", variant="primary", id="close")

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(None)
