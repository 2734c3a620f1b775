"""The recorded fixtures: every ``tests/fixtures/<provider>/<scenario>/scenario.json`` (for the
tests and the benchmarks alike)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from segue_testbed.testbed import repo_root

FIXTURES = repo_root() / "tests" / "fixtures"


@dataclass(frozen=True)
class Fixture:
    dir: Path
    spec: dict[str, Any]

    @property
    def name(self) -> str:
        return f"{self.spec['provider']}-{self.spec['scenario']}"

    @property
    def provider(self) -> str:
        return str(self.spec["provider"])

    @property
    def transcript(self) -> Path:
        return self.dir / str(self.spec["transcript"])

    @property
    def home(self) -> Path:
        return self.dir / "home"

    def requests(self) -> list[dict[str, Any]]:
        path = self.dir / "requests.jsonl"
        return [orjson.loads(line) for line in path.read_bytes().splitlines() if line.strip()]


def all_fixtures() -> list[Fixture]:
    out = []
    for spec_path in sorted(FIXTURES.glob("*/*/scenario.json")):
        out.append(Fixture(spec_path.parent, orjson.loads(spec_path.read_bytes())))
    return out
