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
