"""Every test starts in an empty folder of its own, so none depends on the folder pytest was started
from (`cd /tmp && python -m pytest /path/to/tests` passes as `python -m pytest` in the checkout does).

The tool reports paths relative to the current folder when the audited tree lies below it (ruff's habit),
so a test that audits a tmp_path would see other paths if pytest were started from a folder above it.
Tests that are about the current folder move there themselves (monkeypatch.chdir)."""
from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _neutral_working_directory(tmp_path_factory, monkeypatch):
    monkeypatch.chdir(tmp_path_factory.mktemp("cwd"))


@pytest.fixture(scope="session")
def coverage_engine():
    """The static engine as `audit` builds it for the default target: with the coverage tables' unsupported APIs
    (NPU501 / NPU502), which a plain `StaticEngine(load_rules())` leaves out."""
    from auditor.coverage import unsupported_api_details
    from auditor.rules import load_rules
    from auditor.static.engine import StaticEngine
    from auditor.target import resolve_target

    target = resolve_target(None, None)
    return StaticEngine(load_rules(), product=target.product, coverage_apis=unsupported_api_details(target))


# Modules whose tests run a model or a checker in a child process: most of the suite's time (measured with
# `python -m pytest --durations=30`). CI runs them (the default run selects every test); `-m "not slow"`
# leaves them out of a quick local run.
SLOW_MODULES = frozenset({
    "test_execute.py", "test_execute_models.py", "test_execute_numerics.py", "test_dump_compare.py",
    "test_trace_models.py", "test_trace_sandbox.py", "test_trace_distributed.py", "test_lint.py",
})


def pytest_collection_modifyitems(items):
    for item in items:
        if item.path.name in SLOW_MODULES:
            item.add_marker(pytest.mark.slow)
