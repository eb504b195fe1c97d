"""The installed package must carry every subpackage and the rule and table data."""
from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_every_subpackage_is_listed_in_pyproject():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    listed = set(config["packages"])
    on_disk = {".".join(p.parent.relative_to(ROOT).parts) for p in (ROOT / "auditor").rglob("__init__.py")}
    assert on_disk <= listed, f"add to [tool.setuptools] packages: {sorted(on_disk - listed)}"
    assert config["package-dir"]["auditor._rules"] == "rules"
    assert config["package-dir"]["auditor._op_tables"] == "op_tables"


def test_data_folders_are_found():
    from auditor.data import rules_dir, tables_dir

    assert list(rules_dir().glob("*.yaml"))
    assert (tables_dir() / "index.json").is_file()
