"""`--statistics`: how many findings each rule produced, and whether `audit fix` can handle them (like ruff)."""
from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, TextIO

from auditor.report.common import is_fixable

if TYPE_CHECKING:
    from auditor.report import Report


def rows(report: "Report") -> list[dict[str, Any]]:
    by_code: dict[str, dict[str, Any]] = {}
    for f in report.findings:
        entry = by_code.setdefault(f.code, {"code": f.code, "name": f.name, "category": f.category,
                                            "count": 0, "fixable_count": 0})
        entry["count"] += 1
        entry["fixable_count"] += is_fixable(f)
    for entry in by_code.values():
        entry["fixable"] = entry["fixable_count"] == entry["count"]
    return sorted(by_code.values(), key=lambda e: (-e["count"], e["code"]))


def render_statistics(report: "Report", stream: TextIO, fmt: str = "text") -> None:
    """fmt 'json' writes a JSON list; any other format writes the aligned text table."""
    entries = rows(report)
    if fmt == "json":
        json.dump(entries, stream, indent=2, ensure_ascii=False)
        stream.write("\n")
        return
    if not entries:
        stream.write("No findings.\n")
        return
    count_width = max(len(str(e["count"])) for e in entries)
    code_width = max(len(e["code"]) for e in entries)
    name_width = max(len(e["name"]) for e in entries)
    for e in entries:
        mark = "[*]" if e["fixable"] else ("[-]" if e["fixable_count"] else "   ")
        stream.write(f"{e['count']:>{count_width}}  {e['code']:<{code_width}}  {mark}  "
                     f"{e['name']:<{name_width}}  {e['category']}".rstrip() + "\n")
    fixable = sum(e["fixable_count"] for e in entries)
    stream.write(f"[*] all fixable, [-] partly fixable with `audit fix` ({fixable} of {len(report.findings)}"
                 " findings)\n")
