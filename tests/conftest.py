"""Shared test fixtures."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from segue_testbed.standin.server import StandIn


@pytest.fixture(scope="session")
def standin() -> Iterator[StandIn]:
    """One stand-in model server per test process; each test opens its own lane on it."""
    with StandIn() as server:
        yield server
