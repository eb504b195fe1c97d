"""`--format console` (the default): a readable report for a person at a terminal.

Findings grouped by file, each with its source line, a caret under the matched code, the substitution
and the rule code (`[*]` marks what `audit fix` can do); then a summary by category, severity and
effort, the mechanical share, files that could not be audited and any extra tables. When the stream is
not a terminal (CI logs, a pipe) there is no colour and tables are drawn in plain ASCII.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, TextIO

from rich import box
from rich.console import Console, JustifyMethod
from rich.table import Table
from rich.text import Text

from auditor.findings import CATEGORIES, SEVERITIES, Finding
from auditor.report.common import (EFFORT_LABELS, EFFORT_ORDER, MAX_SHOWN_LINE, SourceLines, cell_text,
                                   decision_summary, group_by_path, group_decisions, is_fixable, line_list, plural,
                                   section_tables, stream_is_terminal, tool_info, wants_color)

if TYPE_CHECKING:
    from auditor.report import Report

SEVERITY_STYLES = {"error": "bold red", "warning": "yellow", "info": "cyan"}
# Wide enough that a log line is not cut mid-finding; a terminal reports its own width.
LOG_WIDTH = 120


def _console(stream: TextIO, color: bool, width: int | None) -> Console:
    terminal = stream_is_terminal(stream)
    return Console(
        file=stream, width=width or (None if terminal else LOG_WIDTH),
        force_terminal=color, no_color=not color, color_system="auto" if color else None,
        highlight=False, emoji=False, markup=False, soft_wrap=False, legacy_windows=False,
    )


def _source_snippet(line: str, f: Finding, gutter: str, bar: str) -> list[Text]:
    shown = line.replace("\t", "    ")
    start = len(line[: max(f.col - 1, 0)].replace("\t", "    "))
    if f.end_line == f.line and f.end_col > f.col:
        length = len(line[f.col - 1: f.end_col - 1].replace("\t", "    "))
    else:
        length = max(len(shown.rstrip()) - start, 1)
    if len(shown) > MAX_SHOWN_LINE:
        shown = shown[:MAX_SHOWN_LINE] + "..."
    if start >= MAX_SHOWN_LINE:
        return [Text.assemble((f"{gutter} {bar} ", "dim"), shown)]
    length = max(min(length, MAX_SHOWN_LINE - start), 1)
    pad = " " * len(gutter)
    return [Text.assemble((f"{gutter} {bar} ", "dim"), shown),
            Text.assemble((f"{pad} {bar} ", "dim"), " " * start, ("^" * length, SEVERITY_STYLES[f.severity]))]


def _finding(f: Finding, sources: SourceLines, bar: str, group: list[Finding] | None = None,
             advised: set[tuple[str, str]] | None = None) -> list[Text]:
    """One finding, or (group) one entry for findings that repeat its decision: their lines, the source line of
    the first, and the advice only where the report gives this (rule, symbol) for the first time (`advised`
    collects them; None = the full listing: caret and advice on every finding)."""
    head = Text("  ")
    head.append(f"{f.path}:{f.line}:{f.col}", "bold")
    if group and len(group) > 1:
        head.append(f" (x{len(group)}: lines {line_list(group)})", "bold")
    head.append("  ")
    head.append(f"{f.code}", SEVERITY_STYLES[f.severity])
    head.append(" [*]" if is_fixable(f) else "", "green")
    head.append(f"  {f.severity}  ", SEVERITY_STYLES[f.severity])
    message = [part.rstrip() for part in f.message.splitlines()] or [""]
    head.append(message[0])
    out = [head, *(Text("      " + rest) for rest in message[1:])]
    line = sources.line(f.path, f.line)
    if line is not None:
        snippet = _source_snippet(line, f, str(f.line), bar)
        out += [Text("      ") + t for t in (snippet if advised is None else snippet[:1])]
    if advised is not None:
        if (f.code, f.symbol) in advised:
            return out
        advised.add((f.code, f.symbol))
    tail = Text("      ")
    if f.substitution:
        tail.append("use instead: ", "green")
        tail.append(f.substitution, "bold green")
        tail.append("  ")
    tail.append(f"({f.name}, {f.category}, effort {f.effort}"
                f"{', ' + f.fix + ' fix' if is_fixable(f) else ''}"
                f"{', from ' + f.source if f.source != 'static' else ''})", "dim")
    out.append(tail)
    return out


# The decisions table at the top of a grouped report lists this many rows (the rest are counted).
TOP_DECISIONS = 25


_DECISION_COLUMNS: tuple[tuple[str, JustifyMethod], ...] = (
    ("rule", "left"), ("symbol", "left"), ("severity", "left"), ("findings", "right"), ("files", "right"),
    ("use instead", "left"))


def _decisions_table(report: "Report", table_box: box.Box | None) -> Table:
    rows = decision_summary(report.findings)
    table = Table(title=f"Decisions: {plural(len(rows), 'distinct (rule, symbol)')}, most frequent first",
                  box=table_box, title_justify="left")
    for col, justify in _DECISION_COLUMNS:
        table.add_column(col, justify=justify, overflow="fold")
    for r in rows[:TOP_DECISIONS]:
        table.add_row(r["code"], r["symbol"], r["severity"], str(r["count"]), str(r["files"]),
                      _cut(" ".join((r["substitution"] or "").split()), 70))
    if len(rows) > TOP_DECISIONS:
        rest = rows[TOP_DECISIONS:]
        table.add_row("...", f"{len(rest)} more", "", str(sum(r["count"] for r in rest)), "", "")
    return table


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit - 1].rstrip() + "…"


def _summary_tables(report: "Report", table_box: box.Box | None) -> list[Table]:
    s = report.summary()
    by_cat = Table(title="Findings by category", box=table_box, title_justify="left")
    by_cat.add_column("category")
    for col in (*SEVERITIES, "fixable", "total"):
        by_cat.add_column(col, justify="right")
    for cat in CATEGORIES:
        items = [f for f in report.findings if f.category == cat]
        if items:
            by_cat.add_row(cat, *(str(sum(f.severity == sev for f in items)) for sev in SEVERITIES),
                           str(sum(is_fixable(f) for f in items)), str(len(items)))
    by_cat.add_row("all", *(str(s["by_severity"][sev]) for sev in SEVERITIES),
                   str(s["fixable"]["safe"] + s["fixable"]["unsafe"]), str(s["total"]), style="bold")

    by_effort = Table(title="Effort", box=table_box, title_justify="left")
    by_effort.add_column("effort")
    by_effort.add_column("findings", justify="right")
    by_effort.add_column("share", justify="right")
    by_effort.add_column("meaning")
    for effort in EFFORT_ORDER:
        n = s["by_effort"][effort]
        by_effort.add_row(effort, str(n), f"{100.0 * n / s['total']:.1f}%" if s["total"] else "-",
                          EFFORT_LABELS[effort])
    return [by_cat, by_effort]


def _section_tables(name: str, value: object, table_box: box.Box | None) -> list[Table]:
    tables = []
    for title, columns, rows in section_tables(name, value):
        table = Table(title=title, box=table_box, title_justify="left")
        for c in columns:
            table.add_column(c, overflow="fold")
        for row in rows:
            table.add_row(*(cell_text(v) for v in row))
        tables.append(table)
    return tables


def write(report: "Report", stream: TextIO, *, color: bool | None = None, width: int | None = None) -> None:
    color = wants_color(stream, color)
    console = _console(stream, color, width)
    fancy = color and stream_is_terminal(stream)
    table_box = box.ROUNDED if fancy else box.ASCII
    bar = "│" if fancy else "|"
    info = tool_info(report)
    summary = report.summary()

    header = Text()
    header.append(f"{info['name']} {info['version']}", "bold")
    header.append(f"  target: {info['target']['description'] if info['target'] else 'not set'}")
    console.print(header)
    scanned = f"{plural(summary['files_scanned'], 'file')}, {plural(summary['lines_scanned'], 'line')}"
    console.print(Text(f"{report.root}: {scanned} in {summary['duration_s']:.2f} s", "dim"))
    console.print()

    grouped = not report.full
    if grouped and report.findings:
        console.print(_decisions_table(report, table_box))
        console.print()
    sources = SourceLines(report)
    advised: set[tuple[str, str]] = set()    # (rule, symbol) whose advice the report has shown
    for path, findings in group_by_path(report.findings).items():
        title = Text(path, "bold underline")
        groups = group_decisions(findings) if grouped else [[f] for f in findings]
        title.append(f"  {plural(len(findings), 'finding')}"
                     + (f", {plural(len(groups), 'decision')}" if grouped else ""), "dim")
        lines = [title]
        for group in groups:
            lines += _finding(group[0], sources, bar, group, advised if grouped else None)
        # One print a file: rich's per-call overhead dominates on trees with thousands of findings.
        console.print(Text("\n").join(lines), soft_wrap=True)
        console.print()

    if report.errors:
        console.print(Text(f"Could not audit {plural(len(report.errors), 'file')}:",
                           "bold red"))
        for e in report.errors:
            console.print(Text(f"  {e.one_line()}"), soft_wrap=True)
        console.print()

    for name, value in report.sections.items():
        if not value:
            continue                    # a stage that failed reports under errors, not as an empty table
        if name == "execute" and isinstance(value, dict) and "title" in value:
            from auditor.execute.table import render_execute_section   # per-module verdicts, worst first

            render_execute_section(value, console)
            console.print()
            continue
        for table in _section_tables(str(name), value, table_box):
            console.print(table)
            console.print()

    if not report.findings:
        console.print(Text("No findings: nothing in the audited code needs to change for the target.", "green"))
    else:
        for table in _summary_tables(report, table_box):
            console.print(table)
            console.print()
        mech = summary["fixable"]["safe"] + summary["fixable"]["unsafe"]
        line = Text()
        line.append(f"Mechanical: {summary['mechanical_percent']}%", "bold green")
        line.append(f" ({mech} of {summary['total']} findings: {summary['fixable']['safe']} safe, "
                    f"{summary['fixable']['unsafe']} unsafe fixes by `audit fix`, marked [*]); "
                    f"{summary['fixable']['none']} manual.")
        console.print(line)
        if summary["context_discounted"]:
            console.print(Text(f"Multi-backend context: {plural(summary['context_discounted'], 'finding')} lowered to "
                               "info and left as is (already beside an NPU path, or in a platform class); "
                               f"{summary['by_context'].get('backend-dispatch', 0)} in other backends' dispatch "
                               "not rewritten.", "dim"))
    suppressed = []
    if report.inline_suppressed:
        suppressed.append(f"{report.inline_suppressed} by inline comments")
    if report.baseline_suppressed:
        suppressed.append(f"{report.baseline_suppressed} by the baseline")
    if suppressed:
        console.print(Text("Suppressed: " + ", ".join(suppressed) + ".", "dim"))
