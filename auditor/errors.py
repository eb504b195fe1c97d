"""Errors every layer may raise and the command line turns into exit codes (the bottom of the house:
imports nothing from auditor)."""
from __future__ import annotations


class UsageError(Exception):
    """Bad flags, paths or config: message to stderr, exit 2.

    Defined here, not in auditor.cli: under `python -m auditor.cli` that module is __main__, and a class
    defined there is not the one a lower module imports, so its raise would escape the handler."""
