"""Where the shipped data lives: rules/ and op_tables/ at the repository root in a checkout,
installed as the packages auditor._rules and auditor._op_tables (see pyproject.toml)."""
from __future__ import annotations

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
