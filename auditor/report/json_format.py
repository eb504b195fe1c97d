"""`--format json`: one JSON document, the contract of DESIGN.md §3."""
from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, TextIO

from auditor.report.common import tool_info

if TYPE_CHECKING:
    from auditor.report import Report


def document(report: "Report") -> dict[str, Any]:
    doc: dict[str, Any] = {
        "tool": tool_info(report),
        "findings": [f.to_dict() for f in report.findings],
        "errors": [e.to_dict() for e in report.errors],    # {path, kind, message, line}
        "summary": report.summary(),
    }
    if report.sections:
        doc["sections"] = report.sections
    if report.collectives is not None:
        doc["collectives"] = report.collectives
    return doc


def write(report: "Report", stream: TextIO) -> None:
    # default=str: trace/execute sections may carry paths or dtypes; they must not crash the report.
    json.dump(document(report), stream, indent=2, ensure_ascii=False, default=str)
    stream.write("\n")
