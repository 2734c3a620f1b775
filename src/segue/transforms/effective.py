"""The effective history: what the provider itself would send as history on the next request.

* Rollbacks are applied first: a ``Rollback(n)`` removes the last ``n`` user turns before it
  (as Codex does for ``thread_rolled_back``).
* Then the history is cut at the latest compaction: everything before it is replaced by the
  compaction itself and the items its provider kept verbatim (``Compaction.replacement``, which
  each reader fills the way its CLI resumes).

The result starts with the :class:`Compaction` item when there is one, so a consumer can tell a
sliced history from a whole one. :func:`portable_history` is the cross-provider variant: it cuts
only at the latest *portable* compaction and drops every compaction nobody else can read.
"""

from __future__ import annotations

from collections.abc import Sequence

from segue.model.conversation import (
    Compaction,
    CompactionState,
    Conversation,
    Item,
    Opaque,
    Rollback,
    TurnMarker,
    UserMessage,
)
from segue.transforms.turns import is_prompt, prompts


def apply_rollbacks(items: Sequence[Item]) -> list[Item]:
    """Remove the user turns that later ``Rollback`` items undid."""
    out: list[Item] = []
    for item in items:
        if isinstance(item, Rollback):
            remaining, cut = item.turns, len(out)
            while remaining > 0 and cut > 0:
                cut -= 1
                if is_prompt(out[cut]):
                    remaining -= 1
            if remaining != 0:  # rolled back past the first prompt: keep what came before any
                cut = next((i for i, kept in enumerate(out) if is_prompt(kept)), len(out))
            del out[cut:]
        out.append(item)
    return out


def active_prompts(items: Sequence[Item]) -> list[UserMessage]:
    """The typed prompts that still count once rollbacks are applied: the turns ``segue show``
    numbers and ``segue sessions`` counts."""
    return prompts(apply_rollbacks(items))


def _portable(item: Item) -> bool:
    return isinstance(item, Compaction) and item.state is CompactionState.PORTABLE


def _is_history(item: Item) -> bool:
    """Items that are part of what a model sees (not bookkeeping)."""
    return not isinstance(item, Opaque | TurnMarker | Rollback)


def effective_history(conversation: Conversation) -> list[Item]:
    """The model-visible history the source provider would send next, in order."""
    items = apply_rollbacks(conversation.items)
    cut = next((i for i in range(len(items) - 1, -1, -1) if isinstance(items[i], Compaction)), None)
    if cut is None:
        return [item for item in items if _is_history(item)]
    compaction = items[cut]
    assert isinstance(compaction, Compaction)
    head: list[Item] = [compaction, *(compaction.replacement or ())]
    return head + [item for item in items[cut + 1 :] if _is_history(item)]


def portable_history(conversation: Conversation) -> tuple[list[Item], list[Compaction]]:
    """History another provider can take: cut at the latest *portable* compaction, with every
    compaction that is not portable removed. Returns the items and the compactions dropped."""
    items = apply_rollbacks(conversation.items)
    start = next((i for i in range(len(items) - 1, -1, -1) if _portable(items[i])), 0)
    kept: list[Item] = []
    dropped: list[Compaction] = []
    for n, item in enumerate(items[start:]):
        if isinstance(item, Compaction) and not _portable(item):
            dropped.append(item)
        elif _is_history(item):
            kept.append(item)
            if n == 0 and isinstance(item, Compaction) and item.replacement:
                # what the provider kept verbatim after its summary (recent prompts, the last
                # reply) follows the summary, less what only the provider can read
                for kept_item in item.replacement:
                    if isinstance(kept_item, Compaction):
                        if not _portable(kept_item):
                            dropped.append(kept_item)
                    elif _is_history(kept_item):
                        kept.append(kept_item)
    return kept, dropped
