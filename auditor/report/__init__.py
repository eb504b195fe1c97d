"""The Report every emitter reads, and the dispatch to one module per output format."""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any, TextIO

from auditor.findings import CATEGORIES, EFFORTS, SEVERITIES, Finding
from auditor.target import Target

FORMATS = ("console", "concise", "json", "sarif", "github", "markdown", "csv")


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
class Report:
    root: str                                  # the scanned root, as the user gave it
    target: Target | None
    findings: list[Finding]
    errors: list[FileError] = field(default_factory=list)
    files_scanned: int = 0
    lines_scanned: int = 0
    duration_s: float = 0.0
    baseline_suppressed: int = 0
    inline_suppressed: int = 0
    sections: dict[str, Any] = field(default_factory=dict)  # extra tables: "trace" models, "execute" verdicts

    def summary(self) -> dict[str, Any]:
        by_cat = Counter(f.category for f in self.findings)
        by_sev = Counter(f.severity for f in self.findings)
        by_eff = Counter(f.effort for f in self.findings)
        by_fix = Counter(f.fix for f in self.findings)
        total = len(self.findings)
        mechanical = by_fix["safe"] + by_fix["unsafe"]
        return {
            "total": total,
            "files_scanned": self.files_scanned,
            "lines_scanned": self.lines_scanned,
            "files_with_findings": len({f.path for f in self.findings}),
            "errors": len(self.errors),
            "by_category": {c: by_cat[c] for c in CATEGORIES if by_cat[c]},
            "by_severity": {s: by_sev[s] for s in SEVERITIES},
            "by_effort": {e: by_eff[e] for e in EFFORTS},
            "fixable": {"safe": by_fix["safe"], "unsafe": by_fix["unsafe"], "none": by_fix["none"]},
            # Like HIPIFY's conversion %: the share a codemod can do.
            "mechanical_percent": round(100.0 * mechanical / total, 1) if total else 100.0,
            "baseline_suppressed": self.baseline_suppressed,
            "inline_suppressed": self.inline_suppressed,
            "duration_s": round(self.duration_s, 3),
        }
