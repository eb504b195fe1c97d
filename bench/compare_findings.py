"""Compare the findings of two `audit --format json` reports: identical or not, with the first differences.

    python bench/compare_findings.py BEFORE.json AFTER.json [MORE_BEFORE.json MORE_AFTER.json ...]

Used to check that an engine change (speed work, refactoring) changes no finding: each report's findings and
errors are sorted and written as canonical JSON (sorted keys), and the two byte strings must be equal. The
summary is compared too, less `duration_s` (the only field that depends on the run, not on the code). Exit 0
when every pair is identical, 1 otherwise, 2 when a file cannot be read.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def canonical(report: dict) -> dict[str, bytes]:
    """Each part of a report as canonical bytes: findings and errors sorted, keys sorted, no run timing."""
    summary = {k: v for k, v in report.get("summary", {}).items() if k != "duration_s"}
    parts = {
        "findings": sorted(json.dumps(f, sort_keys=True) for f in report.get("findings", [])),
        "errors": sorted(json.dumps(e, sort_keys=True) for e in report.get("errors", [])),
        "summary": [json.dumps(summary, sort_keys=True)],
        "tool": [json.dumps(report.get("tool"), sort_keys=True)],
    }
    return {name: "\n".join(rows).encode() for name, rows in parts.items()}


def compare(before: Path, after: Path, show: int = 5) -> bool:
    a, b = canonical(json.loads(before.read_text())), canonical(json.loads(after.read_text()))
    same = True
    for part in a:
        if a[part] == b[part]:
            continue
        same = False
        rows_a, rows_b = set(a[part].decode().split("\n")), set(b[part].decode().split("\n"))
        print(f"{before.name}: {part} differ: {len(rows_a - rows_b)} only before, {len(rows_b - rows_a)} only after")
        for row in sorted(rows_a - rows_b)[:show]:
            print("  - " + row[:300])
        for row in sorted(rows_b - rows_a)[:show]:
            print("  + " + row[:300])
    n = len(json.loads(before.read_text()).get("findings", []))
    print(f"{'identical' if same else 'DIFFERENT'}: {before} vs {after} ({n} findings before)")
    return same


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("reports", nargs="+", type=Path, help="pairs of reports: before after [before after ...]")
    args = parser.parse_args(argv)
    if len(args.reports) % 2:
        parser.error("give the reports in pairs (before after)")
    ok = True
    for before, after in zip(args.reports[::2], args.reports[1::2]):
        try:
            ok = compare(before, after) and ok
        except (OSError, ValueError) as exc:
            print(f"cannot read {before} / {after}: {exc}", file=sys.stderr)
            return 2
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
