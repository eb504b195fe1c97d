"""The Report every emitter reads, and the dispatch to one module per output format."""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TextIO

from auditor.findings import CATEGORIES, EFFORTS, SEVERITIES, FileError, Finding  # noqa: F401 - FileError re-exported
from auditor.target import Target

if TYPE_CHECKING:
    from auditor.rules import Rule

FORMATS = ("console", "concise", "json", "sarif", "github", "markdown", "csv")


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
    collectives: list | None = None  # --trace --world-size: one entry per collective call site (docs/trace.md)
    # console and markdown list every finding (`--full`) instead of one entry per file and decision
    full: bool = False

    def summary(self) -> dict[str, Any]:
        by_cat = Counter(f.category for f in self.findings)
        by_sev = Counter(f.severity for f in self.findings)
        by_eff = Counter(f.effort for f in self.findings)
        by_fix = Counter(f.fix for f in self.findings)
        # findings the multi-backend context lowered to info (auditor/static/backends.py): CUDA lines beside an
        # NPU path or inside a platform class
        contexts = Counter(f.data["context"] for f in self.findings if f.data.get("context"))
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
            "context_discounted": contexts["npu-path"] + contexts["platform-class"],
            "by_context": dict(sorted(contexts.items())),
            "baseline_suppressed": self.baseline_suppressed,
            "inline_suppressed": self.inline_suppressed,
            "duration_s": round(self.duration_s, 3),
        }


class FormatError(ValueError):
    """An output format name we do not know; the CLI turns it into exit 2."""


def emit(report: Report, fmt: str, stream: TextIO, *, rules: "dict[str, Rule] | None" = None,
         color: bool | None = None, statistics: bool = False, width: int | None = None) -> None:
    """Write the report to stream in one of FORMATS.

    statistics=True writes the per-rule counts instead (JSON when fmt is 'json', else text), like
    `ruff --statistics`. rules (code -> Rule) gives SARIF its help text; when None the installed
    catalogue is used if it loads. color=None colours only a terminal stream.
    """
    if fmt not in FORMATS:
        raise FormatError(f"unknown output format {fmt!r}; choose one of {', '.join(FORMATS)}")
    if statistics:
        from auditor.report.statistics import render_statistics

        render_statistics(report, stream, "json" if fmt == "json" else "text")
        return
    if fmt == "console":
        from auditor.report import console

        console.write(report, stream, color=color, width=width)
    elif fmt == "sarif":
        from auditor.report import sarif

        sarif.write(report, stream, rules if rules is not None else _catalogue())
    else:
        import importlib

        module = importlib.import_module(f"auditor.report.{_MODULES.get(fmt, fmt)}")
        module.write(report, stream)


_MODULES = {"json": "json_format", "csv": "csv_format"}


def _catalogue() -> "dict[str, Rule]":
    import yaml

    from auditor.rules import RuleError, rules_by_code

    try:
        return rules_by_code()
    except (RuleError, OSError, ValueError, yaml.YAMLError):
        # A broken catalogue must not cost the user their report; rules then come from the findings.
        return {}
