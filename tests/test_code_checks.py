"""The checks a change must pass besides its tests, run as part of the suite (so the README's one
test command, and CI, run them): the layer contract, ruff and mypy --strict.

The layer contract is import-linter's, in ``pyproject.toml``: each package imports only the
packages beneath it (``segue.cli`` at the top, ``segue.model`` and ``segue.support`` at the
bottom), so an upward import fails here with the chain that makes it.
"""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent


def _run(*argv: str) -> subprocess.CompletedProcess[str]:
    tool = BIN / argv[0]
    if not tool.exists():
        pytest.fail(f"{argv[0]} is not installed in this environment (uv sync)")
    return subprocess.run(
        [str(tool), *argv[1:]], cwd=ROOT, capture_output=True, text=True, timeout=300
    )


def test_no_package_imports_a_layer_above_it_nor_a_module_its_own_in_a_cycle() -> None:
    contracts = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    done = _run("lint-imports", "--no-cache")
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert f"{len(contracts['contracts'])} kept, 0 broken" in done.stdout


def test_ruff_finds_nothing() -> None:
    lint = _run("ruff", "check", ".")
    assert lint.returncode == 0, lint.stdout[-4000:]
    formatted = _run("ruff", "format", "--check", ".")
    assert formatted.returncode == 0, formatted.stdout[-4000:]


def test_mypy_strict_finds_nothing(tmp_path: Path) -> None:
    done = _run("mypy", "--cache-dir", str(tmp_path / "mypy"))
    assert done.returncode == 0, done.stdout[-4000:]


def test_the_docs_build_strictly(tmp_path: Path) -> None:
    """Every page in the nav exists, every link between pages resolves, and the API reference
    is generated from the docstrings (mkdocstrings): ``mkdocs build --strict``."""
    done = _run("mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site"))
    assert done.returncode == 0, done.stderr[-4000:]
    api = (tmp_path / "site" / "reference" / "api" / "index.html").read_text()
    assert "switch_session" in api and "doc-function" in api


def test_the_readme_is_short_and_starts_with_the_two_commands() -> None:
    lines = (ROOT / "README.md").read_text().splitlines()
    assert len(lines) <= 250
    assert "uv run --no-dev segue demo" in lines[3] and "pytest" in lines[4]


def test_the_benchmarks_do_not_import_the_tests() -> None:
    """A benchmark runs from the test bed and the product alone (``segue_testbed``, ``segue``)."""
    import ast

    for path in sorted((ROOT / "benchmarks").glob("*.py")):
        tree = ast.parse(path.read_text(), str(path))
        for node in ast.walk(tree):
            names = (
                [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else [node.module or ""]
                if isinstance(node, ast.ImportFrom)
                else []
            )
            assert not any(n == "tests" or n.startswith("tests.") for n in names), path
