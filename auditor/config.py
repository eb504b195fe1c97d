"""[tool.npu-audit] in pyproject.toml, merged with command-line flags (flags win)."""
from __future__ import annotations

import fnmatch
import json
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from auditor.findings import CATEGORIES, SEVERITIES, Finding
from auditor.rules import Rule

SECTION = "npu-audit"
FAIL_LEVELS = SEVERITIES + ("never",)


class ConfigError(ValueError):
    """A bad config value or file; the CLI turns it into exit 2."""


@dataclass
class Config:
    select: list[str] = field(default_factory=list)       # code prefixes or categories; empty = every default-on rule
    ignore: list[str] = field(default_factory=list)
    per_file_ignores: dict[str, list[str]] = field(default_factory=dict)
    exclude: list[str] = field(default_factory=list)
    torch_npu: str | None = None
    product: str | None = None
    fail_on: str = "error"
    cache_dir: str | None = None
    source: Path | None = None                           # the pyproject.toml it came from

    def rule_enabled(self, rule: Rule) -> bool:
        def hits(selector: str) -> bool:
            s = selector.strip()
            return s.lower() == rule.category or rule.code.startswith(s.upper()) or s.lower() == rule.name
        if any(hits(s) for s in self.ignore):
            return False
        if self.select:
            return any(hits(s) for s in self.select) and (rule.default_on or any(
                s.upper().startswith("NPU9") for s in self.select))
        return rule.default_on

    def code_enabled(self, finding: Finding, rules: dict[str, Rule]) -> bool:
        rule = rules.get(finding.code)
        if rule is not None:
            return self.rule_enabled(rule)
        # Findings of the tracer / execute mode have codes without a catalogue entry: same selectors apply.
        def hits(s: str) -> bool:
            return s.lower() == finding.category or finding.code.startswith(s.strip().upper())
        if any(hits(s) for s in self.ignore):
            return False
        return not self.select or any(hits(s) for s in self.select)

    def ignored_in_file(self, finding: Finding) -> bool:
        for pattern, selectors in self.per_file_ignores.items():
            if fnmatch.fnmatch(finding.path, pattern) or fnmatch.fnmatch(finding.path, pattern.rstrip("/") + "/*"):
                for s in selectors:
                    if s.lower() in (finding.category, "all", "*") or finding.code.startswith(s.strip().upper()):
                        return True
        return False


def find_pyproject(start: Path) -> Path | None:
    here = start.resolve()
    if here.is_file():
        here = here.parent
    for folder in (here, *here.parents):
        candidate = folder / "pyproject.toml"
        if candidate.is_file():
            return candidate
    return None


def _strings(value: Any, key: str) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return list(value)
    raise ConfigError(f"[tool.{SECTION}] {key} must be a string or a list of strings")


def load_config(path: Path | None) -> Config:
    """Read the [tool.npu-audit] table of a pyproject.toml; a file without it gives the defaults."""
    if path is None:
        return Config()
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read {path}: {exc}") from exc
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path} is not valid TOML: {exc}") from exc
    table = data.get("tool", {}).get(SECTION)
    if table is None:
        return Config(source=path)
    known = {"select", "ignore", "per-file-ignores", "exclude", "torch-npu", "product", "fail-on", "cache-dir"}
    unknown = set(table) - known
    if unknown:
        raise ConfigError(f"{path}: unknown keys in [tool.{SECTION}]: {', '.join(sorted(unknown))} "
                          f"(known: {', '.join(sorted(known))})")
    cfg = Config(source=path)
    cfg.select = _strings(table.get("select", []), "select")
    cfg.ignore = _strings(table.get("ignore", []), "ignore")
    cfg.exclude = _strings(table.get("exclude", []), "exclude")
    pfi = table.get("per-file-ignores", {})
    if not isinstance(pfi, dict):
        raise ConfigError(f"[tool.{SECTION}] per-file-ignores must be a table of glob = [codes]")
    cfg.per_file_ignores = {k: _strings(v, f"per-file-ignores.{k}") for k, v in pfi.items()}
    for key in ("torch-npu", "product", "cache-dir"):
        if key in table and not isinstance(table[key], str):
            raise ConfigError(f"[tool.{SECTION}] {key} must be a string")
    cfg.torch_npu = table.get("torch-npu")
    cfg.product = table.get("product")
    cfg.cache_dir = table.get("cache-dir")
    cfg.fail_on = table.get("fail-on", "error")
    if cfg.fail_on not in FAIL_LEVELS:
        raise ConfigError(f"[tool.{SECTION}] fail-on must be one of {', '.join(FAIL_LEVELS)}")
    for s in cfg.select + cfg.ignore:
        if s.lower() not in CATEGORIES and not s.upper().startswith("NPU"):
            raise ConfigError(f"[tool.{SECTION}] selector {s!r} is neither a category nor a rule code prefix")
    return cfg


# -- baseline --------------------------------------------------------------------------------------

def write_baseline(path: Path, findings: list[Finding]) -> None:
    doc = {
        "tool": SECTION,
        "note": "findings accepted as known; `audit --baseline` reports only findings not listed here",
        "fingerprints": sorted({f.fingerprint for f in findings}),
        "findings": [{"fingerprint": f.fingerprint, "code": f.code, "path": f.path, "symbol": f.symbol}
                     for f in findings],
    }
    path.write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")


def read_baseline(path: Path) -> set[str]:
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
        return set(doc["fingerprints"])
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ConfigError(f"cannot read baseline {path}: {exc}") from exc
