"""`--format markdown`: a porting task list to paste into a tracker.

A header with the totals, then the manual work as `- [ ]` checkboxes grouped by file and effort
(high first), then the items `audit fix` does, then files that could not be audited and extra tables.
"""
from __future__ import annotations

import re
from typing import TYPE_CHECKING, Iterable, TextIO

from auditor.findings import Finding
from auditor.report.common import (EFFORT_LABELS, EFFORT_ORDER, cell_text, decision_summary, group_by_path,
                                   group_decisions, is_fixable, line_list, plural, section_tables, tool_info)

if TYPE_CHECKING:
    from auditor.report import Report

_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]<>#|])")


_CODE_SPAN = re.compile(r"(`[^`\n]+`)")


def escape(text: str) -> str:
    """Markdown-escape free text so an API name like __init__ or a[0] prints as written.

    Code spans that rule messages write on purpose (`.cuda()`) are kept as they are.
    """
    parts = _CODE_SPAN.split(text)
    return "".join(part if i % 2 else _MD_SPECIAL.sub(r"\\\1", part) for i, part in enumerate(parts))


def code_span(text: str) -> str:
    text = " ".join(text.split())
    fence = "``" if "`" in text else "`"
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


_PROSE = re.compile(r"; |\. |, (?!\w+=)|\b(?:the|a|an|use|with|or|and|no|not|on|for|is|are|to)\b")


_QUOTED = re.compile(r"""\([^()]*\)|"[^"]*"|'[^']*'""")


def _substitution(text: str) -> str:
    """A bare API becomes a code span; a sentence (it marks its code with backticks, or reads as words) stays
    prose."""
    text = " ".join(text.split())
    bare = _QUOTED.sub("", text)
    return escape(text) if "`" in text or _PROSE.search(bare) else code_span(text)


def _item(f: Finding, group: list[Finding] | None = None, advice: bool = True) -> str:
    lines = [part.strip() for part in f.message.splitlines() if part.strip()] or [""]
    where = f"L{f.line}" if not group or len(group) == 1 else f"L{line_list(group)} ({len(group)}x)"
    head = f"- [ ] **{f.severity}** {where} {code_span(f.code)} {escape(lines[0])}"
    # Continuation lines are indented so that they stay inside the list item.
    out = [head, *(f"  {escape(rest)}" for rest in lines[1:])]
    if f.substitution and advice:
        out.append(f"  Use instead: {_substitution(f.substitution)}")
    if f.fix == "unsafe":
        out.append("  (unsafe fix: review the diff)")
    return "\n".join(out)


def _by_effort(findings: Iterable[Finding]) -> list[tuple[str, list[Finding]]]:
    buckets: dict[str, list[Finding]] = {e: [] for e in EFFORT_ORDER}
    for f in findings:
        buckets[f.effort].append(f)
    return [(e, items) for e, items in buckets.items() if items]


def _totals(report: "Report") -> list[str]:
    s = report.summary()
    info = tool_info(report)
    out = ["# Porting task list: CUDA to Ascend NPU", ""]
    if info["target"]:
        out.append(f"Target: {escape(info['target']['description'])}  ")
    out.append(f"Audited by {info['name']} {info['version']}: {plural(s['files_scanned'], 'file')}, "
               f"{plural(s['lines_scanned'], 'line')}.")
    out += ["", "| Findings | Files with findings | Mechanical (`audit fix`) | Manual | Errors |",
            "| ---: | ---: | ---: | ---: | ---: |",
            f"| {s['total']} | {s['files_with_findings']} | {s['fixable']['safe'] + s['fixable']['unsafe']} "
            f"({s['mechanical_percent']}%) | {s['fixable']['none']} | {s['errors']} |", "",
            "| Effort | Findings | Meaning |", "| --- | ---: | --- |"]
    out += [f"| {e} | {s['by_effort'][e]} | {EFFORT_LABELS[e]} |" for e in EFFORT_ORDER]
    out.append("")
    if s["by_category"]:
        out.append("By category: " + ", ".join(f"{c} {n}" for c, n in s["by_category"].items()) + ".")
        out.append("")
    return out


def _items(findings: list[Finding], grouped: bool) -> list[str]:
    if not grouped:
        return [_item(f) for f in findings]
    return [_item(group[0], group, advice=False) for group in group_decisions(findings)]


def _task_list(title: str, findings: list[Finding], by_effort: bool, grouped: bool = True) -> list[str]:
    """One checkbox per file and decision (grouped) or per finding (`--full`)."""
    if not findings:
        return []
    out = [f"## {title} ({len(findings)})", ""]
    for path, items in group_by_path(findings).items():
        out += [f"### {code_span(path)}", ""]
        if by_effort:
            for effort, group in _by_effort(items):
                out += [f"#### {effort} effort ({len(group)})", ""]
                out += _items(group, grouped)
                out.append("")
        else:
            out += _items(items, grouped)
            out.append("")
    return out


def _decisions(report: "Report") -> list[str]:
    """Every decision once, with its advice; the task list below refers to them by rule and symbol."""
    rows = decision_summary(report.findings)
    if not rows:
        return []
    out = [f"## Decisions ({len(rows)} distinct rule, symbol and severity, most frequent first)", "",
           "| Rule | Symbol | Severity | Findings | Files | Use instead |", "| --- | --- | --- | ---: | ---: | --- |"]
    for r in rows:
        advice = _substitution(r["substitution"]).replace("|", "\\|") if r["substitution"] else ""
        out.append(f"| {code_span(r['code'])} | {code_span(r['symbol'])} | {r['severity']} | {r['count']} "
                   f"| {r['files']} | {advice} |")
    return out + [""]


def _table(columns: list[str], rows: list[list[object]]) -> list[str]:
    def cell(value: object) -> str:
        return escape(" ".join(cell_text(value).split()))

    return [
        "| " + " | ".join(cell(c) for c in columns) + " |",
        "|" + " --- |" * len(columns),
        *("| " + " | ".join(cell(v) for v in row) + " |" for row in rows),
        "",
    ]


def write(report: "Report", stream: TextIO) -> None:
    if report.full:
        manual = [f for f in report.findings if not is_fixable(f)]
        fixable = [f for f in report.findings if is_fixable(f)]
    else:   # a decision is one task: under `audit fix` only when the fix covers every finding of it
        manual, fixable = [], []
        for items in group_by_path(report.findings).values():
            for group in group_decisions(items):
                (fixable if all(is_fixable(f) for f in group) else manual).extend(group)
    out = _totals(report)
    if not report.findings:
        out += ["Nothing to port: no findings.", ""]
    grouped = not report.full
    if grouped:
        out += _decisions(report)
    out += _task_list("Manual work", manual, by_effort=True, grouped=grouped)
    out += _task_list("Done by `audit fix`", fixable, by_effort=False, grouped=grouped)
    if report.errors:
        out += [f"## Files that could not be audited ({len(report.errors)})", ""]
        out += [f"- [ ] {escape(e.one_line())}" for e in report.errors]
        out.append("")
    for name, value in report.sections.items():
        for title, columns, rows in section_tables(str(name), value):
            out += [f"## {escape(title)}", "", *_table(columns, rows)]
    stream.write("\n".join(out).rstrip("\n") + "\n")
