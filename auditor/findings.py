"""The one Finding type that every stage (static, trace, execute) produces and every emitter reads."""
from __future__ import annotations

import hashlib
from dataclasses import asdict, dataclass, field, replace
from typing import Any, Callable, Iterable

CATEGORIES = (
    "device", "distributed", "precision", "apex", "attention", "kernel",
    "third_party", "operator", "fusion", "performance",
)
SEVERITIES = ("error", "warning", "info")
SEVERITY_RANK = {"error": 3, "warning": 2, "info": 1}
EFFORTS = ("auto", "low", "medium", "high")
FIX_APPLICABILITY = ("safe", "unsafe", "none")
SOURCES = ("static", "trace", "execute")


@dataclass(frozen=True, slots=True)
class Finding:
    code: str                 # rule code, e.g. NPU001
    name: str                 # kebab-case rule name
    category: str             # one of CATEGORIES
    severity: str             # error | warning | info
    effort: str               # auto | low | medium | high
    path: str                 # relative to the scanned root, '/' separated
    line: int                 # 1-based
    col: int                  # 1-based
    end_line: int
    end_col: int
    message: str
    substitution: str | None  # what to use instead, or None
    fix: str                  # safe | unsafe | none
    source: str               # static | trace | execute
    symbol: str               # qualified API, aten op, env var or literal value matched
    fingerprint: str = ""     # filled by assign_fingerprints()
    data: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)

    def __post_init__(self) -> None:
        # effort `auto` promises that `audit fix` rewrites the line; a finding whose fix was withheld (inside
        # multi-backend dispatch, a value defined elsewhere) is a local edit, so the effort table and the fix
        # count agree
        if self.effort == "auto" and self.fix == "none":
            object.__setattr__(self, "effort", "low")

    def sort_key(self) -> tuple:
        return (self.path, self.line, self.col, self.code, self.symbol, self.source)

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        if not d["data"]:
            del d["data"]
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "Finding":
        return cls(**{**d, "data": d.get("data") or {}})


def without_fix(finding: Finding) -> Finding:
    """The finding with no edit for `audit fix`: its fix and its replacement go."""
    return replace(finding, fix="none", data={k: v for k, v in finding.data.items() if k != "replace"})


def as_info(finding: Finding, kind: str, note: str, severity: str = "info") -> Finding:
    """The finding lowered to `severity` (info unless told) in context `kind`, with `note` saying why. A lowered
    finding is never rewritten: its replacement goes."""
    finding = without_fix(finding)
    return replace(finding, severity=severity, data={**finding.data, "context": kind},
                   message=f"{finding.message} ({note})")


def lower_findings(result: FileResult, why: Callable[[Finding], tuple[str, str] | None]) -> int:
    """Lower to info, in `result`, each finding `why` gives a (context, note) for (as_info); returns how many. The
    tree passes' shape: a fact of the whole tree decides, file by file, which findings are already taken care of."""
    lowered = 0
    kept = []
    for f in result.findings:
        reason = why(f)
        if reason is not None:
            f = as_info(f, *reason)
            lowered += 1
        kept.append(f)
    result.findings = kept
    return lowered


def above_info(reason: tuple[str, str], finding: Finding) -> tuple[str, str] | None:
    """`reason` for a finding above info, for lower_findings (`partial(above_info, (context, note))`: every finding
    of the file is taken care of)."""
    return reason if finding.severity != "info" else None


def assign_fingerprints(findings: Iterable[Finding], key_path: Callable[[str], str] | None = None) -> list[Finding]:
    """Sort findings and give each a fingerprint that survives edits which move lines.

    The fingerprint hashes path + code + symbol + the occurrence index of that triple in the file,
    so inserting or deleting unrelated lines above a finding does not change it. `key_path` maps a
    report path to the one hashed (the CLI: the path below the project root, whatever folder was given).
    """
    out: list[Finding] = []
    seen: dict[tuple[str, str, str], int] = {}
    for f in sorted(findings, key=Finding.sort_key):
        path = key_path(f.path) if key_path is not None else f.path
        key = (path, f.code, f.symbol)
        index = seen.get(key, 0)
        seen[key] = index + 1
        digest = hashlib.sha1(f"{path}\0{f.code}\0{f.symbol}\0{index}".encode()).hexdigest()[:16]
        out.append(replace(f, fingerprint=digest))
    return out


def at_or_above(severity: str, level: str) -> bool:
    return SEVERITY_RANK[severity] >= SEVERITY_RANK[level]


@dataclass(frozen=True, slots=True)
class FileError:
    """A file that could not be read or parsed; it is reported, and the audit goes on."""
    path: str
    kind: str        # syntax | encoding | binary | unreadable | too-large | symlink-loop | internal | trace | execute
    message: str
    line: int | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"path": self.path, "kind": self.kind, "message": self.message, "line": self.line}

    def one_line(self) -> str:
        where = f"{self.path}:{self.line}" if self.line else self.path
        return f"{where}: {self.kind}: {self.message}"


@dataclass
class FileResult:
    """What the analysis of one file gives: its findings, or the error that stopped it."""
    path: str
    findings: list[Finding] = field(default_factory=list)
    error: FileError | None = None
    lines: int = 0
    suppressed: int = 0
    summary: dict[str, Any] | None = None    # what the cross-file pass needs (auditor/static/crossfile.py)
