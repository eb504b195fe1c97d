"""`--format concise`: one line a finding, `path:line:col: CODE message`, the form editors and grep read."""
from __future__ import annotations

from typing import TYPE_CHECKING, TextIO

from auditor.report.common import is_fixable, one_line, plural

if TYPE_CHECKING:
    from auditor.report import Report


def write(report: "Report", stream: TextIO) -> None:
    for f in report.findings:
        stream.write(f"{f.path}:{f.line}:{f.col}: {f.code} {one_line(f.message)}\n")
    # Files we could not audit keep the same editor-friendly prefix; `error:` cannot be taken for a rule code.
    for e in report.errors:
        stream.write(f"{e.path}:{e.line or 1}:1: error: {e.kind}: {one_line(e.message)}\n")
    stream.write(_closing_line(report))


def _closing_line(report: "Report") -> str:
    total = len(report.findings)
    if not total:
        text = "No findings."
    else:
        files = len({f.path for f in report.findings})
        fixable = sum(1 for f in report.findings if is_fixable(f))
        text = f"Found {plural(total, 'finding')} in {plural(files, 'file')} ({fixable} fixable with `audit fix`)."
    if report.errors:
        text += f" {plural(len(report.errors), 'file')} could not be audited."
    return text + "\n"
