"""[tool.npu-audit] in pyproject.toml, merged with command-line flags (flags win)."""
from __future__ import annotations

import difflib
import fnmatch
import json
import os
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

from auditor.findings import CATEGORIES, SEVERITIES, Finding
from auditor.rules import Rule

SECTION = "npu-audit"
FAIL_LEVELS = SEVERITIES + ("never",)


class ConfigError(ValueError):
    """A bad config value or file; the CLI turns it into exit 2."""


@dataclass
class Config:
    select: list[str] = field(default_factory=list)       # code prefixes or categories; empty = every default-on rule
    extend_select: list[str] = field(default_factory=list)  # added to select (or to the defaults)
    ignore: list[str] = field(default_factory=list)
    per_file_ignores: dict[str, list[str]] = field(default_factory=dict)   # globs relative to the config's folder
    exclude: list[str] = field(default_factory=list)
    torch_npu: str | None = None
    product: str | None = None
    fail_on: str = "error"
    cache_dir: str | None = None                         # relative to the config's folder
    respect_gitignore: bool = True
    ignore_errors: bool = False                          # files that cannot be audited do not fail the run
    source: Path | None = None                           # the pyproject.toml it came from
    unread: str | None = None                            # why a found pyproject.toml was passed over (printed as a warning)

    @staticmethod
    def _hits(selector: str, rule: Rule) -> bool:
        s = selector.strip()
        return s.upper() == "ALL" or s.lower() == rule.category or rule.code.startswith(s.upper()) \
            or s.lower() == rule.name

    def _selects(self, rule: Rule, selectors: list[str]) -> bool:
        named = [s for s in selectors if self._hits(s, rule)]
        # default-off rules only when asked for by their own code (or the NPU9 block they live in)
        return bool(named) and (rule.default_on or any(
            s.upper().startswith("NPU9") or s.strip().upper() == rule.code for s in named))

    def rule_enabled(self, rule: Rule) -> bool:
        if any(self._hits(s, rule) for s in self.ignore):
            return False
        base = self._selects(rule, self.select) if self.select else rule.default_on
        return base or self._selects(rule, self.extend_select)

    def code_enabled(self, finding: Finding, rules: dict[str, Rule]) -> bool:
        rule = rules.get(finding.code)
        if rule is not None:
            return self.rule_enabled(rule)
        # Findings of the tracer / execute mode have codes without a catalogue entry: same selectors apply.
        def hits(s: str) -> bool:
            return s.strip().upper() == "ALL" or s.lower() == finding.category \
                or finding.code.startswith(s.strip().upper())
        if any(hits(s) for s in self.ignore):
            return False
        return not self.select or any(hits(s) for s in self.select) or any(hits(s) for s in self.extend_select)

    def ignored_in_file(self, finding: Finding, base: Path | None = None) -> bool:
        """per-file-ignores: globs are relative to the folder of the config file (as in ruff); `base`
        is the folder finding paths are relative to (default: the config's folder)."""
        if not self.per_file_ignores:
            return False
        path = finding.path
        if base is not None and self.source is not None:
            absolute = Path(path) if os.path.isabs(path) else base / path
            try:
                path = Path(os.path.abspath(absolute)).relative_to(self.source.resolve().parent).as_posix()
            except ValueError:
                pass
        for pattern, selectors in self.per_file_ignores.items():
            if fnmatch.fnmatch(path, pattern) or fnmatch.fnmatch(path, pattern.rstrip("/") + "/*") \
                    or ("/" not in pattern and fnmatch.fnmatch(path.rsplit("/", 1)[-1], pattern)):
                for s in selectors:
                    if s.lower() in (finding.category, "all", "*") or finding.code.startswith(s.strip().upper()):
                        return True
        return False

    def resolved_cache_dir(self) -> Path | None:
        if self.cache_dir is None:
            return None
        folder = self.source.resolve().parent if self.source is not None else Path.cwd()
        return folder / self.cache_dir


# -- selectors ---------------------------------------------------------------------------------------

def unknown_selectors(selectors: Iterable[str], rules: Iterable[Rule], extra_codes: Iterable[str] = ()) -> list[str]:
    """Selectors that name no rule: neither a code or code prefix, a category, a rule name nor ALL."""
    rules = list(rules)
    codes = [r.code for r in rules] + list(extra_codes)
    out = []
    for s in selectors:
        t = s.strip()
        if not t or t.upper() == "ALL" or t.lower() in CATEGORIES:
            continue
        if any(c.startswith(t.upper()) for c in codes) or any(t.lower() == r.name for r in rules):
            continue
        out.append(t)
    return out


def nearest_selectors(selector: str, rules: Iterable[Rule], n: int = 3) -> list[str]:
    rules = list(rules)
    if selector.upper().startswith("NPU"):
        return difflib.get_close_matches(selector.upper(), [r.code for r in rules], n=n, cutoff=0.5)
    candidates = [r.name for r in rules] + list(CATEGORIES)
    return difflib.get_close_matches(selector.lower(), candidates, n=n, cutoff=0.5)


def split_codes(value: str | None) -> list[str]:
    """A comma-separated flag value as a list ('NPU1, NPU2,' -> ['NPU1', 'NPU2'])."""
    return [v.strip() for v in value.split(",") if v.strip()] if value else []


def check_selectors(selectors: Iterable[str], rules: Iterable[Rule], where: str) -> None:
    """Raise ConfigError naming each unknown selector and the nearest known ones (a typo must never
    switch a CI gate off silently)."""
    rules = list(rules)
    bad = unknown_selectors(selectors, rules)
    if not bad:
        return
    parts = []
    for s in bad:
        near = nearest_selectors(s, rules)
        parts.append(f"{s!r}" + (f" (did you mean {', '.join(near)}?)" if near else ""))
    raise ConfigError(f"{where}: unknown rule selector{'s' if len(bad) > 1 else ''} {'; '.join(parts)}; "
                      "`audit rules` lists the codes, names and categories")


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


def load_config(path: Path | None, explicit: bool = False) -> Config:
    """Read the [tool.npu-audit] table of a pyproject.toml; a file without it gives the defaults.

    A found (not `--config`) file that is not valid TOML and never names the table gives the defaults too, with a
    warning: a broken pyproject.toml of the audited project holds no settings of this tool and must not stop its audit
    (ruff likewise passes over pyproject.toml files without its table)."""
    if path is None:
        return Config()
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read {path}: {getattr(exc, 'strerror', None) or exc}") from exc
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        if not explicit and f"tool.{SECTION}" not in text and f'tool."{SECTION}"' not in text:
            return Config(unread=f"{path} is not valid TOML ({exc}) and has no [tool.{SECTION}] table: "
                                 "auditing with the default settings")
        raise ConfigError(f"{path} is not valid TOML: {exc}") from exc
    tool = data.get("tool", {})
    if not isinstance(tool, dict):
        raise ConfigError(f"{path}: `tool` must be a table ([tool.{SECTION}]), not {type(tool).__name__}")
    table = tool.get(SECTION)
    if table is None:
        return Config(source=path)
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: [tool.{SECTION}] must be a table, not {type(table).__name__}")
    known = {"select", "extend-select", "ignore", "per-file-ignores", "exclude", "torch-npu", "product",
             "fail-on", "cache-dir", "respect-gitignore", "ignore-errors"}
    unknown = set(table) - known
    if unknown:
        raise ConfigError(f"{path}: unknown keys in [tool.{SECTION}]: {', '.join(sorted(unknown))} "
                          f"(known: {', '.join(sorted(known))})")
    cfg = Config(source=path)
    cfg.select = _strings(table.get("select", []), "select")
    cfg.extend_select = _strings(table.get("extend-select", []), "extend-select")
    cfg.ignore = _strings(table.get("ignore", []), "ignore")
    cfg.exclude = _strings(table.get("exclude", []), "exclude")
    pfi = table.get("per-file-ignores", {})
    if not isinstance(pfi, dict):
        raise ConfigError(f"[tool.{SECTION}] per-file-ignores must be a table of glob = [codes]")
    cfg.per_file_ignores = {k: _strings(v, f"per-file-ignores.{k}") for k, v in pfi.items()}
    for key in ("torch-npu", "product", "cache-dir", "fail-on"):
        if key in table and not isinstance(table[key], str):
            raise ConfigError(f"[tool.{SECTION}] {key} must be a string")
    for key in ("respect-gitignore", "ignore-errors"):
        if key in table and not isinstance(table[key], bool):
            raise ConfigError(f"[tool.{SECTION}] {key} must be true or false")
    cfg.torch_npu = table.get("torch-npu")
    cfg.product = table.get("product")
    cfg.cache_dir = table.get("cache-dir")
    cfg.respect_gitignore = table.get("respect-gitignore", True)
    cfg.ignore_errors = table.get("ignore-errors", False)
    cfg.fail_on = table.get("fail-on", "error")
    if cfg.fail_on not in FAIL_LEVELS:
        raise ConfigError(f"[tool.{SECTION}] fail-on must be one of {', '.join(FAIL_LEVELS)}")
    from auditor.rules import load_rules

    rules = load_rules()
    check_selectors(cfg.select, rules, f"{path} [tool.{SECTION}] select")
    check_selectors(cfg.extend_select, rules, f"{path} [tool.{SECTION}] extend-select")
    check_selectors(cfg.ignore, rules, f"{path} [tool.{SECTION}] ignore")
    for glob, selectors in cfg.per_file_ignores.items():
        check_selectors([s for s in selectors if s.lower() not in ("all", "*")], rules,
                        f"{path} [tool.{SECTION}] per-file-ignores {glob!r}")
    return cfg


# -- baseline --------------------------------------------------------------------------------------

def write_baseline(path: Path, findings: list[Finding]) -> None:
    """Raises ConfigError when the file cannot be written (a missing folder, a full disk)."""
    doc = {
        "tool": SECTION,
        "note": "findings accepted as known; `audit --baseline` reports only findings not listed here",
        "fingerprints": sorted({f.fingerprint for f in findings}),
        "findings": [{"fingerprint": f.fingerprint, "code": f.code, "path": f.path, "symbol": f.symbol}
                     for f in findings],
    }
    try:
        path.write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot write the baseline {path}: {exc.strerror or exc}") from exc


def read_baseline(path: Path) -> set[str]:
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
        fingerprints = doc["fingerprints"]
        if not isinstance(fingerprints, list) or not all(isinstance(f, str) for f in fingerprints):
            raise TypeError("`fingerprints` must be a list of strings")
        return set(fingerprints)
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ConfigError(f"cannot read baseline {path}: {exc}") from exc
