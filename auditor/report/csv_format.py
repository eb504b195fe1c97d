"""`--format csv`: a header row, then one row a finding with every Finding field.

`substitution` None is written as an empty cell; `data` is a JSON object (empty cell when empty).
"""
from __future__ import annotations

import csv
import dataclasses
import json
from typing import TYPE_CHECKING, Any, TextIO

from auditor.findings import Finding

if TYPE_CHECKING:
    from auditor.report import Report

COLUMNS = tuple(f.name for f in dataclasses.fields(Finding))


def row(finding: Finding) -> dict[str, Any]:
    values = finding.to_dict()
    values["substitution"] = values["substitution"] or ""
    values["data"] = json.dumps(finding.data, sort_keys=True, ensure_ascii=False, default=str) if finding.data else ""
    return values


def write(report: "Report", stream: TextIO) -> None:
    # RFC 4180 line ends; with them the writer also quotes a field holding a lone CR, which "\n" would not.
    # Files written with this must be opened with newline="".
    writer = csv.DictWriter(stream, fieldnames=COLUMNS, lineterminator="\r\n")
    writer.writeheader()
    for f in report.findings:
        writer.writerow(row(f))
