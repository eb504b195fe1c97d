"""Where the shipped data lives: rules/ and op_tables/ at the repository root in a checkout,
installed as the packages auditor._rules and auditor._op_tables (see pyproject.toml)."""
from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

_REPO_ROOT = Path(__file__).resolve().parent.parent


@lru_cache(maxsize=None)
def _locate(folder: str, package: str) -> Path:
    in_checkout = _REPO_ROOT / folder
    if in_checkout.is_dir() and (_REPO_ROOT / "pyproject.toml").is_file():
        return in_checkout
    from importlib.resources import files

    return Path(str(files(package)))


def rules_dir() -> Path:
    return _locate("rules", "auditor._rules")


def tables_dir() -> Path:
    return _locate("op_tables", "auditor._op_tables")


class TablesMissing(RuntimeError):
    """op_tables/ lacks a table; the message says how to rebuild it."""


@lru_cache(maxsize=None)
def load_table(name: str) -> dict:
    """One generated coverage table from op_tables/ (parsed once per process)."""
    path = tables_dir() / name
    try:
        with open(path, encoding="utf-8") as fh:
            return json.load(fh)
    except FileNotFoundError:
        raise TablesMissing(f"coverage table {path} is missing; rebuild with `python -m auditor.coverage.build`") from None
    except json.JSONDecodeError as exc:
        raise TablesMissing(f"coverage table {path} is not valid JSON ({exc}); rebuild it") from None
