"""The strategy on a move to provider P, in the seed's order, with its reason; and the
staleness thresholds from segue.toml."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from segue.model.conversation import Provider
from segue.model.errors import ConfigError
from segue.threads import (
    AppThread,
    Facts,
    Handoff,
    HandoffForm,
    HandoffStatus,
    HandoffStrategy,
    ProviderThread,
    ProviderThreadStatus,
    Run,
    RunStatus,
    StalenessConfig,
    Strategy,
    ThreadGraph,
    decide,
    load_config,
)

NOW = datetime(2026, 11, 30, tzinfo=UTC)
DEFAULTS = StalenessConfig()


def _handoff(hid: str, to: str, covers: tuple[int, int]) -> Handoff:
    return Handoff(
        id=hid,
        thread_id="T",
        to_provider_thread_id=to,
        from_provider_threads=(),
        covers=covers,
        strategy=HandoffStrategy.DELTA_SINCE_TARGET_LAST_SEEN,
        form=HandoffForm.NATIVE_ITEMS,
        status=HandoffStatus.READY,
        created_at=NOW,
    )


def _graph(
    plan: str,
    handoffs: dict[str, list[tuple[int, int]]] | None = None,
    status: dict[str, ProviderThreadStatus] | None = None,
) -> ThreadGraph:
    """``plan`` is one letter per run naming its provider thread: ``CCCCCLLLC`` is the design's
    example (C1 = Codex, L1 = Claude)."""
    providers = {"C": Provider.CODEX, "L": Provider.CLAUDE, "D": Provider.CODEX}
    runs = tuple(
        Run("T", n, providers[p], p, n, RunStatus.COMPLETED, f"prompt {n}")
        for n, p in enumerate(plan, 1)
    )
    pts = []
    for name in dict.fromkeys(plan + "".join((handoffs or {}).keys())):
        given = tuple(
            _handoff(f"H-{name}-{a}", name, (a, b)) for a, b in (handoffs or {}).get(name, [])
        )
        pts.append(
            ProviderThread(
                id=name,
                thread_id="T",
                provider=providers[name],
                origin="adopted",
                native_id=f"native-{name}",
                path=f"/x/{name}.jsonl",
                native_turns=0,
                status=(status or {}).get(name, ProviderThreadStatus.ACTIVE),
                model=None,
                version=1,
                native_runs=tuple(r.ordinal for r in runs if r.provider_thread_id == name),
                handoffs=given,
            )
        )
    return ThreadGraph(AppThread("T", NOW, None, None), runs, tuple(pts))


def test_the_seeds_example_returns_to_codex_with_a_delta_of_the_claude_runs() -> None:
    graph = _graph("CCCCCLLL", {"L": [(1, 5)]})
    decision = decide(graph, "codex", Facts(), DEFAULTS)
    assert decision.strategy is Strategy.DELTA_INTO_EXISTING
    assert (decision.provider_thread, decision.covers) == ("C", (6, 8))
    assert decision.form is HandoffForm.NATIVE_ITEMS
    assert "missed runs 6-8 only" in decision.reason
    small = decide(graph, "codex", Facts(delta_fits_natively=False), DEFAULTS)
    assert small.form is HandoffForm.SUMMARY and "as summary" in small.reason


def test_a_provider_thread_that_holds_every_run_resumes_as_is() -> None:
    graph = _graph("CCCCCLLLC", {"L": [(1, 5)], "C": [(6, 8)]})
    decision = decide(graph, "codex", Facts(), DEFAULTS)
    assert decision.strategy is Strategy.NO_HANDOFF and decision.provider_thread == "C"
    assert decision.covers is None and "1-9" in decision.reason


def test_missed_runs_in_several_ranges_carry_the_whole_thread_into_it() -> None:
    graph = _graph("CCLLCCLL")
    decision = decide(graph, "codex", Facts(), DEFAULTS)
    assert decision.strategy is Strategy.FULL_INTO_EXISTING
    assert decision.covers == (1, 8) and "3-4, 7-8" in decision.reason


def test_no_provider_thread_of_the_target_means_a_new_one_with_the_full_thread() -> None:
    decision = decide(_graph("CCC"), "claude", Facts(), DEFAULTS)
    assert decision.strategy is Strategy.FULL_INTO_NEW
    assert decision.covers == (1, 3) and decision.provider_thread is None
    assert "no claude provider thread" in decision.reason


@pytest.mark.parametrize(
    ("facts", "why"),
    [
        (Facts(clean=True), "clean context"),
        (Facts(resume_failed=True), "resuming codex provider thread C failed"),
        (Facts(model_changed=True), "model or mode changed"),
        (Facts(conflict="it was rolled back to run 2"), "rolled back to run 2"),
        (Facts(over_budget=True), "exceed codex's budget"),
    ],
)
def test_a_stale_provider_thread_is_replaced_by_a_new_one(facts: Facts, why: str) -> None:
    decision = decide(_graph("CCCLL"), "codex", facts, DEFAULTS)
    assert decision.strategy is Strategy.FULL_INTO_NEW and why in decision.reason
    assert decision.covers == (1, 5)


def test_too_many_runs_elsewhere_make_it_stale() -> None:
    graph = _graph("CC" + "L" * 4)
    assert decide(graph, "codex", Facts(), StalenessConfig(max_off_provider_runs=4)).strategy is (
        Strategy.DELTA_INTO_EXISTING
    )
    decision = decide(graph, "codex", Facts(), StalenessConfig(max_off_provider_runs=3))
    assert decision.strategy is Strategy.FULL_INTO_NEW
    assert "4 runs elsewhere" in decision.reason and "max_off_provider_runs = 3" in decision.reason


def test_too_many_chained_handoffs_make_it_stale() -> None:
    graph = _graph("CCLLLL", {"C": [(3, 3), (4, 4)]})  # two handoffs since its last run
    assert decide(graph, "codex", Facts(), StalenessConfig(max_chained_handoffs=3)).covers == (5, 6)
    decision = decide(graph, "codex", Facts(), StalenessConfig(max_chained_handoffs=2))
    assert decision.strategy is Strategy.FULL_INTO_NEW and "3 handoffs in a row" in decision.reason


def test_a_rolled_back_provider_thread_is_not_returned_to() -> None:
    graph = _graph("CCLL", status={"C": ProviderThreadStatus.ROLLED_BACK})
    decision = decide(graph, "codex", Facts(), DEFAULTS)
    assert decision.strategy is Strategy.FULL_INTO_NEW and "rolled_back" in decision.reason


def test_rolled_back_runs_need_no_handoff() -> None:
    graph = _graph("CCL")
    runs = (*graph.runs[:2], Run("T", 3, Provider.CLAUDE, "L", 1, RunStatus.ROLLED_BACK, "undone"))
    graph = ThreadGraph(graph.thread, runs, graph.provider_threads)
    assert decide(graph, "codex", Facts(), DEFAULTS).strategy is Strategy.NO_HANDOFF


def test_unsupported_names_why() -> None:
    decision = decide(_graph("CC"), "claude", Facts(unsupported="no writer for it"), DEFAULTS)
    assert decision.strategy is Strategy.UNSUPPORTED and "no writer for it" in decision.reason


def test_the_thresholds_come_from_segue_toml(tmp_path: Path) -> None:
    env = {"SEGUE_CONFIG": str(tmp_path / "segue.toml")}
    assert load_config(env) == StalenessConfig()  # no file: the defaults
    (tmp_path / "segue.toml").write_text("[threads]\nmax_off_provider_runs = 5\n")
    assert load_config(env) == StalenessConfig(max_off_provider_runs=5, max_chained_handoffs=3)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[threads\n", "not valid TOML"),
        ("[threads]\nmax_chained_handoffs = 'three'\n", "max_chained_handoffs: must be a whole"),
        ("[threads]\nmax_chained_handofs = 3\n", "max_chained_handofs: unknown setting"),
        ("threads = 3\n", "must be a table"),
    ],
)
def test_a_broken_config_is_a_config_error(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "segue.toml"
    path.write_text(text)
    with pytest.raises(ConfigError, match=message) as caught:
        load_config({"SEGUE_CONFIG": str(path)})
    assert str(path) in str(caught.value)
