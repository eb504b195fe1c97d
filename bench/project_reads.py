#!/usr/bin/env python3
"""Files the project passes read again, cold and warm, by the function that read them.

    python bench/project_reads.py TREE [--top N]

Audits TREE twice with one fresh cache folder (`run_static(..., jobs=1)`) and prints, for each run, the count the run
reports (`RunResult.project_reads`: files read by the tree-level passes, 0 on a warm run that reads nothing again)
and the reads grouped by the calling function and file suffix. A warm run re-reads what no per-file summary keeps; the
table says which pass to move into the worker next (docs/speed.md, "Session 44"). Counts, not times: the same on any
machine.
"""
from __future__ import annotations

import argparse
import collections
import sys
import tempfile
import traceback
from pathlib import Path

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH.parent))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("tree", type=Path)
    ap.add_argument("--top", type=int, default=12, help="rows per run (default 12)")
    args = ap.parse_args()
    if not args.tree.is_dir():
        ap.error(f"{args.tree}: not a folder")
    import auditor.static.project_imports as project_imports
    from auditor.runner import run_static

    original = project_imports.read_counted
    by_caller: collections.Counter = collections.Counter()

    def counted(project, path, *rest, **options):
        caller = traceback.extract_stack(limit=2)[0]
        by_caller[(Path(caller.filename).name, caller.name, Path(str(path)).suffix)] += 1
        return original(project, path, *rest, **options)

    # the passes import read_counted by name, at module level or inside a function: patch every binding
    project_imports.read_counted = counted
    for module in list(sys.modules.values()):
        if getattr(module, "__name__", "").startswith("auditor") and getattr(module, "read_counted", None) is original:
            module.read_counted = counted
    with tempfile.TemporaryDirectory() as cache:
        for label in ("cold", "warm"):
            by_caller.clear()
            run = run_static([args.tree], cache_dir=Path(cache), jobs=1)
            print(f"{label}: {run.project_reads} files read by the project passes")
            for (filename, function, suffix), n in by_caller.most_common(args.top):
                print(f"  {n:6d}  {filename}:{function}  {suffix or '(no suffix)'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
