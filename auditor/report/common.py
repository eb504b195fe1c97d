"""Helpers every output format shares: source lines, file locations, orderings and labels."""
from __future__ import annotations

import io
import os
import tokenize
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable

from auditor import TOOL_NAME, __version__
from auditor.findings import Finding

if TYPE_CHECKING:
    from auditor.report import Report

INFORMATION_URI = "https://pypi.org/project/npu-audit/"

# Manual work first: the order a porting plan is read in.
EFFORT_ORDER = ("high", "medium", "low", "auto")
EFFORT_LABELS = {
    "auto": "mechanical: `audit fix` rewrites it",
    "low": "a local edit (rename, flag, env var)",
    "medium": "an API change that needs checking",
    "high": "re-engineering (kernels, attention, third-party libraries)",
}
FIX_LABELS = {"safe": "safe fix", "unsafe": "unsafe fix (review the diff)", "none": "manual"}

# Past this many characters a source line is cut on screen (minified or generated code).
MAX_SHOWN_LINE = 240


def plural(count: int, word: str) -> str:
    return f"{count} {word}{'s' * (count != 1)}"


def is_fixable(finding: Finding) -> bool:
    return finding.fix in ("safe", "unsafe")


def one_line(text: str) -> str:
    """A message on one line, for formats that are read line by line."""
    return " ".join(part.strip() for part in text.splitlines() if part.strip())


def tool_info(report: "Report") -> dict[str, Any]:
    target = report.target
    return {
        "name": TOOL_NAME,
        "version": __version__,
        "target": ({**target.to_dict(), "description": target.describe()} if target is not None else None),
    }


def root_dir(report: "Report") -> Path:
    """The folder that finding paths are relative to: the root itself, or its parent when it is one file."""
    root = Path(report.root)
    return root.parent if root.is_file() else root


def finding_file(report: "Report", path: str) -> Path:
    root = Path(report.root)
    if root.is_file() and path in ("", root.name):
        return root
    return root_dir(report) / path


def repository_base(report: "Report") -> Path:
    """The folder that CI tools resolve paths against.

    GitHub (annotations and code scanning) resolves relative paths against the checkout, which is the
    working directory of a CI step; when the scanned root lies inside the working directory we make paths
    relative to it (`audit src/` then reports `src/model.py`), otherwise relative to the scanned root.
    """
    base = root_dir(report).resolve()
    cwd = Path.cwd().resolve()
    if base == cwd or cwd in base.parents:
        return cwd
    return base


def relative_uris(report: "Report", base: Path) -> Callable[[str], str]:
    """A function from a finding path to its '/' separated path relative to base, resolved once per path.

    A file outside base keeps the finding's own path.
    """
    cache: dict[str, str] = {}

    def uri(path: str) -> str:
        if path not in cache:
            full = finding_file(report, path).resolve()
            try:
                cache[path] = full.relative_to(base).as_posix()
            except ValueError:
                cache[path] = Path(path).as_posix()
        return cache[path]

    return uri


class SourceLines:
    """Reads each file once, honouring PEP 263 coding cookies; missing or unreadable files give None."""

    def __init__(self, report: "Report"):
        self._report = report
        self._cache: dict[str, list[str] | None] = {}

    def lines(self, path: str) -> list[str] | None:
        if path not in self._cache:
            self._cache[path] = self._read(finding_file(self._report, path))
        return self._cache[path]

    def line(self, path: str, number: int) -> str | None:
        lines = self.lines(path)
        if lines is None or not 1 <= number <= len(lines):
            return None
        return lines[number - 1]

    @staticmethod
    def _read(file: Path) -> list[str] | None:
        try:
            raw = file.read_bytes()
        except (OSError, ValueError):
            return None
        try:
            encoding, _ = tokenize.detect_encoding(io.BytesIO(raw).readline)
        except (SyntaxError, LookupError):
            encoding = "utf-8"
        text = raw.decode(encoding, errors="replace")
        if file.suffix == ".ipynb":      # notebook findings count lines through the code cells
            from auditor.project.notebook import notebook_code_lines

            try:
                return notebook_code_lines(text)
            except ValueError:
                return None
        return text.splitlines()


def group_by_path(findings: Iterable[Finding]) -> dict[str, list[Finding]]:
    grouped: dict[str, list[Finding]] = {}
    for f in findings:
        grouped.setdefault(f.path, []).append(f)
    return dict(sorted(grouped.items()))


def section_tables(name: str, value: Any) -> list[tuple[str, list[str], list[list[Any]]]]:
    """The tables of an extra report section ('trace', 'execute', ...), whatever its shape.

    A list of dicts is one table (a row each); a dict of dicts is one table whose first column is the
    key; a dict mixing scalars and nested tables gives a key / value table of the scalars, then one
    table per nested part titled 'name: key'. Anything else is a one-cell table.
    """
    if isinstance(value, list) and value and all(isinstance(row, dict) for row in value):
        keys = _union_keys(value)
        return [(name, [str(k) for k in keys], [[row.get(k) for k in keys] for row in value])]
    if isinstance(value, dict) and value and all(isinstance(v, dict) for v in value.values()):
        keys = _union_keys(value.values())
        return [(name, ["name", *(str(k) for k in keys)],
                 [[key, *(row.get(k) for k in keys)] for key, row in value.items()])]
    if isinstance(value, dict) and value:
        if isinstance(value.get("title"), str) and _is_table(value.get("rows")):
            # the shape --trace uses: {"title": ..., "rows": [...], ...}: the title names the rows' table
            rest = {k: v for k, v in value.items() if k not in ("title", "rows")}
            return section_tables(value["title"], value["rows"]) + (section_tables(name, rest) if rest else [])
        nested = {k: v for k, v in value.items() if _is_table(v)}
        scalars = [[k, v] for k, v in value.items() if k not in nested]
        tables = [(name, ["key", "value"], scalars)] if scalars else []
        for key, part in nested.items():
            tables += section_tables(f"{name}: {key}", part)
        return tables
    return [(name, [name], [[value]])]


def _is_table(value: Any) -> bool:
    if isinstance(value, list):
        return bool(value) and all(isinstance(row, dict) for row in value)
    return isinstance(value, dict) and bool(value)


def _union_keys(rows: Iterable[dict]) -> list[Any]:
    keys: dict[Any, None] = {}
    for row in rows:
        keys.update(dict.fromkeys(row))
    return list(keys)


def cell_text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.4g}"
    if isinstance(value, (list, tuple, set)):
        return ", ".join(cell_text(v) for v in value)
    if isinstance(value, dict):
        return ", ".join(f"{k}={cell_text(v)}" for k, v in value.items())
    return str(value)


def stream_is_terminal(stream: Any) -> bool:
    isatty = getattr(stream, "isatty", None)
    try:
        return bool(isatty()) if isatty is not None else False
    except (OSError, ValueError):
        return False


def wants_color(stream: Any, color: bool | None) -> bool:
    """color=None: colour only on a terminal, and never when NO_COLOR is set (no-color.org)."""
    if color is not None:
        return color
    if os.environ.get("NO_COLOR"):
        return False
    return stream_is_terminal(stream)


# -- grouping (issue 11): one entry per file and decision instead of one per finding ---------------------------

def decision_key(f: Finding) -> tuple:
    """Findings that repeat one decision: same rule, symbol and severity (the advice is the same)."""
    return (f.code, f.symbol, f.severity)


def group_decisions(findings: Iterable[Finding]) -> list[list[Finding]]:
    """Findings of one file grouped by decision, in the order each decision first appears."""
    groups: dict[tuple, list[Finding]] = {}
    for f in findings:
        groups.setdefault(decision_key(f), []).append(f)
    return list(groups.values())


def decision_summary(findings: Iterable[Finding]) -> list[dict[str, Any]]:
    """(decision, count, files) over the whole report, most frequent first: the top of a grouped report."""
    rows: dict[tuple, dict[str, Any]] = {}
    for f in findings:
        k = (f.code, f.symbol, f.severity)
        row = rows.setdefault(k, {"code": f.code, "name": f.name, "symbol": f.symbol, "severity": f.severity,
                                  "substitution": f.substitution, "count": 0, "files": set()})
        row["count"] += 1
        row["files"].add(f.path)
    out = sorted(rows.values(), key=lambda r: (-r["count"], r["code"], r["symbol"]))
    for r in out:
        r["files"] = len(r["files"])
    return out


def line_list(findings: list[Finding], limit: int = 25) -> str:
    """`12, 40, 77` (at most `limit` numbers, then `... (+N)`)."""
    numbers = list(dict.fromkeys(f.line for f in findings))
    shown = ", ".join(str(n) for n in numbers[:limit])
    return shown + (f", ... (+{len(numbers) - limit})" if len(numbers) > limit else "")
