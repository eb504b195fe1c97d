"""ruff and mypy, configured in pyproject.toml, run over the checkout as part of the test suite, so the
README's test command (the one CI runs) fails on a lint or type error. Each takes a few seconds with its
cache and up to about a minute without one (mypy reads torch's annotations); `-m "not lint"` skips them."""
from __future__ import annotations

import importlib.util
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
pytestmark = pytest.mark.lint


def _run(*command: str) -> subprocess.CompletedProcess:
    return subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=600, check=False)


def test_ruff():
    ruff = shutil.which("ruff") or pytest.fail("ruff is not installed: pip install -e '.[test]'")
    done = _run(ruff, "check", "--no-fix", "--output-format", "concise", ".")
    assert done.returncode == 0, done.stdout + done.stderr


def test_mypy():
    if importlib.util.find_spec("mypy") is None:
        pytest.fail("mypy is not installed: pip install -e '.[test]'")
    done = _run(sys.executable, "-m", "mypy")
    assert done.returncode == 0, done.stdout + done.stderr
