"""The rule catalogue: rules are data in rules/*.yaml (one file per family), loaded and validated here.

The schema is documented in rules/README.md. Every rule carries its own examples, which run as tests
(tests/test_rule_examples.py) and are shown by `audit explain`.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from fnmatch import fnmatchcase
from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml

from auditor.data import load_table, rules_dir
from auditor.findings import CATEGORIES, EFFORTS, FIX_APPLICABILITY, SEVERITIES
from auditor.rule_schema import MATCHER_KINDS, STATUSES, duplicate_keys, schema_errors

CODE_RE = re.compile(r"^NPU\d{3}$")
NAME_RE = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
# Code policy (DESIGN.md §3): the hundreds digit says the family of problem. 8xx continues 3xx, whose
# hundred codes are all taken.
CODE_CATEGORIES = {
    "0": {"device"}, "1": {"distributed"}, "2": {"precision"},
    "3": {"kernel", "attention", "apex"}, "4": {"third_party"}, "5": {"operator"},
    "6": {"fusion"}, "7": {"performance"}, "8": {"kernel", "attention", "apex"}, "9": set(CATEGORIES),
}


# libyaml's loader when PyYAML was built with it: the catalogue loads in every worker process.
_YAML_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class RuleError(ValueError):
    pass


@dataclass(frozen=True)
class SymbolDetail:
    """Per-symbol overrides of a rule: a torch.cuda API and its torch.npu twin, an env var and its HCCL name."""
    substitution: str | None = None
    message: str | None = None
    severity: Any = None          # str or {product: severity}
    fix: str | None = None
    replace: str | None = None    # the replacement a codemod writes (qualified name, string value, env name)
    effort: str | None = None


@dataclass(frozen=True)
class Rule:
    code: str
    name: str
    category: str
    severity: Any                 # "warning" or {"default": "info", "910a": "error", ...}
    effort: str
    fix: str
    message: str
    substitution: str | None
    match: dict[str, tuple[str, ...]]
    when: dict[str, Any]
    symbols: dict[str, SymbolDetail]
    replace: str | None
    doc: dict[str, str]
    examples_flag: tuple[str, ...]
    examples_ok: tuple[str, ...]
    family: str
    default_on: bool = True
    source_note: str | None = None   # where the mapping data came from (script, table)
    extra: dict[str, Any] = field(default_factory=dict)
    example_file: str = "example.py"   # the file name the examples are audited as (project files)
    status: str = "stable"              # stable | preview (off unless selected) | removed (code kept, never run)
    # before/after pairs of `audit fix` (with --unsafe-fixes for unsafe rules); they run as tests
    examples_fix: tuple[tuple[str, str], ...] = ()

    def severity_for(self, product: str, symbol: str | None = None) -> str:
        sev = self.severity
        if symbol is not None and symbol in self.symbols and self.symbols[symbol].severity is not None:
            sev = self.symbols[symbol].severity
        if isinstance(sev, dict):
            return sev[product] if product in sev else sev["default"]
        return sev

    def detail(self, symbol: str) -> SymbolDetail | None:
        return self.symbols.get(symbol)


def _as_tuple(value: Any) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, (list, tuple)):
        return tuple(str(v) for v in value)
    return (str(value),)


def _check_severity(sev: Any, where: str) -> None:
    values = sev.values() if isinstance(sev, dict) else [sev]
    if isinstance(sev, dict) and "default" not in sev:
        raise RuleError(f"{where}: a per-product severity needs a 'default'")
    for v in values:
        if v not in SEVERITIES:
            raise RuleError(f"{where}: severity {v!r} is not one of {SEVERITIES}")


def _parse_rule(raw: dict[str, Any], family: str, where: str) -> Rule:
    for key in ("code", "name", "category", "severity", "effort", "message", "match", "doc"):
        if key not in raw:
            raise RuleError(f"{where}: missing '{key}'")
    code, name, category = raw["code"], raw["name"], raw["category"]
    where = f"{where} {code}"
    if not CODE_RE.match(code):
        raise RuleError(f"{where}: code must look like NPU123")
    if not NAME_RE.match(name):
        raise RuleError(f"{where}: name {name!r} must be kebab-case")
    if category not in CATEGORIES:
        raise RuleError(f"{where}: category {category!r} is not one of {CATEGORIES}")
    if category not in CODE_CATEGORIES[code[3]]:
        raise RuleError(f"{where}: category {category} does not fit the code policy for {code[:4]}xx")
    _check_severity(raw["severity"], where)
    if raw["effort"] not in EFFORTS:
        raise RuleError(f"{where}: effort must be one of {EFFORTS}")
    fix = raw.get("fix", "none")
    if fix not in FIX_APPLICABILITY:
        raise RuleError(f"{where}: fix must be one of {FIX_APPLICABILITY}")
    match: dict[str, tuple[str, ...]] = {}
    for item in raw["match"]:
        if not isinstance(item, dict) or len(item) != 1:
            raise RuleError(f"{where}: each match entry is one mapping like '- qualname: [...]'")
        (kind, values), = item.items()
        if kind not in MATCHER_KINDS:
            raise RuleError(f"{where}: unknown matcher {kind!r}; known: {MATCHER_KINDS}")
        match[kind] = match.get(kind, ()) + _as_tuple(values)
    symbols: dict[str, SymbolDetail] = {}
    for sym, det in (raw.get("symbols") or {}).items():
        det = det or {}
        unknown = set(det) - set(SymbolDetail.__dataclass_fields__)
        if unknown:
            raise RuleError(f"{where}: symbol {sym}: unknown keys {sorted(unknown)}")
        if det.get("severity") is not None:
            _check_severity(det["severity"], f"{where} {sym}")
        if det.get("fix") is not None and det["fix"] not in FIX_APPLICABILITY:
            raise RuleError(f"{where} {sym}: bad fix {det['fix']!r}")
        symbols[str(sym)] = SymbolDetail(**det)
    doc = raw["doc"]
    for key in ("what", "why", "use_instead"):
        if not doc.get(key):
            raise RuleError(f"{where}: doc needs '{key}'")
    examples = raw.get("examples") or {}
    status = raw.get("status", "stable")
    if status not in STATUSES:
        raise RuleError(f"{where}: status must be one of {STATUSES}")
    known = {"code", "name", "category", "severity", "effort", "fix", "message", "substitution", "match",
             "when", "symbols", "replace", "doc", "examples", "default_on", "source_note", "extra", "example_file",
             "status"}
    unknown = set(raw) - known
    if unknown:
        raise RuleError(f"{where}: unknown keys {sorted(unknown)}")
    return Rule(
        code=code, name=name, category=category, severity=raw["severity"], effort=raw["effort"], fix=fix,
        message=raw["message"].strip(), substitution=(raw.get("substitution") or None),
        match=match, when=raw.get("when") or {}, symbols=symbols, replace=raw.get("replace"),
        doc={k: str(v).strip() for k, v in doc.items()},
        examples_flag=_as_tuple(examples.get("flag")), examples_ok=_as_tuple(examples.get("ok")),
        family=family, default_on=bool(raw.get("default_on", True)) and status == "stable",
        source_note=raw.get("source_note"),
        extra=raw.get("extra") or {}, example_file=str(raw.get("example_file") or "example.py"),
        status=status, examples_fix=_fix_examples(examples.get("fix"), where),
    )


def _fix_examples(raw: Any, where: str) -> tuple[tuple[str, str], ...]:
    out = []
    for item in raw or ():
        if not isinstance(item, dict) or set(item) != {"before", "after"}:
            raise RuleError(f"{where}: each fix example is a mapping with 'before' and 'after'")
        out.append((str(item["before"]), str(item["after"])))
    return tuple(out)


def load_rules_from(folder: Path) -> tuple[Rule, ...]:
    rules: list[Rule] = []
    seen_codes: dict[str, str] = {}
    seen_names: dict[str, str] = {}
    for path in sorted(folder.glob("*.yaml")):
        doc = yaml.load(path.read_text(encoding="utf-8"), Loader=_YAML_LOADER) or {}
        family = doc.get("family", path.stem)
        for i, raw in enumerate(doc.get("rules") or []):
            rule = _parse_rule(raw, family, f"{path.name}[{i}]")
            if rule.code in seen_codes:
                raise RuleError(f"{path.name}: code {rule.code} already used in {seen_codes[rule.code]}")
            if rule.name in seen_names:
                raise RuleError(f"{path.name}: name {rule.name} already used in {seen_names[rule.name]}")
            seen_codes[rule.code] = seen_names[rule.name] = path.name
            if rule.status != "removed":       # a removed rule keeps its code and name reserved
                rules.append(rule)
    rules = [_with_table_rows(rule, rules) if rule.extra.get("table") else rule for rule in rules]
    return tuple(sorted(rules, key=lambda r: r.code))


class _TakenNames:
    """The qualname / import globs of the hand-written rules, asked whether a package name is one of theirs: the name
    itself, a glob below it (`name.x`), or a wildcard glob matching the name or something below it. Literal globs
    are looked up in sets and a wildcard glob is matched only when the name can reach its literal head, so the
    thousands of table rows do not compile every glob (rule loading runs in every audit)."""

    def __init__(self, globs) -> None:
        self.literal: set[str] = set()
        self.dotted_heads: set[str] = set()         # every `a.b` of a glob `a.b.c`: `glob.startswith(name + ".")`
        self.wildcard: list[tuple[str, str]] = []   # (literal head before the first wildcard, glob)
        for glob in globs:
            self.dotted_heads.update(glob[:i] for i, ch in enumerate(glob) if ch == ".")
            cut = min((glob.find(ch) for ch in "*?[" if ch in glob), default=-1)
            if cut < 0:
                self.literal.add(glob)
            else:
                self.wildcard.append((glob[:cut], glob))

    def covers(self, name: str) -> bool:
        below = f"{name}.x"
        if name in self.literal or below in self.literal or name in self.dotted_heads:
            return True
        return any(below.startswith(head) and (fnmatchcase(name, glob) or fnmatchcase(below, glob))
                   for head, glob in self.wildcard)


def _with_table_rows(rule: Rule, rules: list[Rule]) -> Rule:
    """A rule whose packages are rows of a generated table (extra `table`, op_tables/cuda_packages.json): each row
    whose verdict has a severity in `table_severity` adds its import name, or the modules the row names (`modules`:
    where a package's CUDA ops live, `fast_transformers.causal_product`), and everything below them to the rule's
    qualname matches, with the row's severity and a message that names its evidence. A package any other rule names
    (a qualname or import pattern of it or of one of its modules: NPU408's pynvrtc, Horovod's `horovod.torch.*`)
    stays that rule's: the hand-written rule is the more specific reading."""
    severities = rule.extra.get("table_severity") or {}
    taken = _TakenNames(glob.lstrip("!") for other in rules if other is not rule
                        for kind in ("qualname", "import") for glob in other.match.get(kind, ()))
    names: list[str] = []
    symbols = dict(rule.symbols)
    for name, row in load_table(rule.extra["table"])["packages"].items():
        severity = severities.get(row["verdict"])
        if severity is None or taken.covers(name):
            continue
        for module in row.get("modules", [name]):
            names += [module, f"{module}.*"]
            symbols[module] = SymbolDetail(severity=severity, message=rule.message.replace("{dist}", row["dist"])
                                           .replace("{evidence}", row["evidence"]))
    return replace(rule, match={**rule.match, "qualname": rule.match.get("qualname", ()) + tuple(names)},
                   symbols=symbols)


def check_rule_files(folder: Path | None = None) -> list[str]:
    """Every problem in the catalogue, as `file:line: ...` lines: the strict schema at every level of every
    file, then what only the loader knows (duplicate codes and names, the code policy)."""
    folder = folder or rules_dir()
    problems: list[str] = []
    for path in sorted(folder.glob("*.yaml")):
        text = path.read_text(encoding="utf-8")
        if path.name == "severity_policy.yaml" or "\nrules:" not in "\n" + text:
            try:                                # not a rule family: still no key given twice
                problems += duplicate_keys(yaml.compose(text, Loader=yaml.SafeLoader), path.name)
            except yaml.YAMLError as exc:
                problems.append(f"{path.name}: invalid YAML: {str(exc).splitlines()[0]}")
            continue
        problems += schema_errors(text, path.name)
    if not problems:
        try:
            load_rules_from(folder)
        except RuleError as exc:
            problems.append(str(exc))
    return problems


@lru_cache(maxsize=None)
def load_rules() -> tuple[Rule, ...]:
    return load_rules_from(rules_dir())


def rules_by_code() -> dict[str, Rule]:
    return {r.code: r for r in load_rules()}


def find_rule(code_or_name: str) -> Rule | None:
    key = code_or_name.strip()
    for r in load_rules():
        if r.code == key.upper() or r.name == key.lower():
            return r
    return None


@lru_cache(maxsize=None)
def severity_policy() -> dict[str, Any]:
    """rules/severity_policy.yaml: the clauses (what error / warning / info mean) and each rule's clause."""
    path = rules_dir() / "severity_policy.yaml"
    doc = yaml.load(path.read_text(encoding="utf-8"), Loader=_YAML_LOADER) or {}
    return {"clauses": doc.get("clauses") or {}, "policy": doc.get("policy") or {},
            "symbols": doc.get("symbols") or {}, "table_verdicts": doc.get("table_verdicts") or {}}
