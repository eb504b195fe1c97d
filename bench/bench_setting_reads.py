#!/usr/bin/env python3
"""What the `setting_reads` fact (auditor/project/setting_reads.py) costs, this checkout beside a base, as a ratio.

t23e measured a cold run 10-15 % slower on VL-RLHF once every Python file's config-key reads became a per-file fact.
For each tree this bench times, in a fresh child process per checkout (so each imports its own auditor):
  fact   `reads_fact` over every Python file of the tree (parsed first, and its node list built as the worker's other
         passes build it, so only the fact's own work is timed);
  cold   with --cold: `audit TREE --format json --fail-on never --no-cache --jobs 1`, wall seconds.
Both are repeated (--repeat; the machine is shared) and reported as median, with head / base.

Usage:
  git archive BASE | tar -x -C /tmp/base
  python bench/bench_setting_reads.py --base /tmp/base bench/_projects/VL-RLHF bench/_projects/LLM-Shearing [--cold]
"""
from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

from bench_speed import audit_command

HEAD = Path(__file__).resolve().parent.parent

# run in the child: sys.argv = [checkout, tree]; prints {"files": N, "seconds": S}
_FACT_TIMER = """
import ast, json, os, sys, time
sys.path.insert(0, sys.argv[1])
from auditor.astnodes import module_nodes
from auditor.project.setting_reads import reads_fact
trees = []
for folder, dirs, files in os.walk(sys.argv[2]):
    dirs[:] = sorted(d for d in dirs if not d.startswith("."))
    for name in sorted(files):
        path = os.path.join(folder, name)
        if name.endswith(".py") and os.path.getsize(path) <= 512 * 1024:
            try:
                trees.append(ast.parse(open(path, "rb").read()))
            except (SyntaxError, ValueError):
                pass
seconds = 0.0
for tree in trees:
    module_nodes(tree)          # the worker's passes have listed the nodes before the fact is computed
    start = time.perf_counter()
    reads_fact(tree)
    seconds += time.perf_counter() - start
print(json.dumps({"files": len(trees), "seconds": seconds}))
"""


def _fact_seconds(checkout: Path, tree: Path) -> tuple[int, float]:
    out = subprocess.run([sys.executable, "-c", _FACT_TIMER, str(checkout), str(tree)], capture_output=True,
                         text=True, check=True).stdout
    doc = json.loads(out)
    return doc["files"], doc["seconds"]


def _cold_seconds(checkout: Path, tree: Path) -> float:
    command = audit_command(checkout) + [str(tree), "--format", "json", "--fail-on", "never", "--no-cache",
                                         "--jobs", "1"]
    start = time.perf_counter()
    subprocess.run(command, capture_output=True, check=False)
    return time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("trees", nargs="+", type=Path)
    parser.add_argument("--base", type=Path, required=True, help="a checkout (git archive export) to compare with")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--cold", action="store_true", help="also time a cold audit of each tree")
    args = parser.parse_args(argv)
    rows = []
    for tree in args.trees:
        row: dict = {"tree": tree.name}
        for kind, measure in (("fact", _fact_seconds), ("cold", _cold_seconds)):
            if kind == "cold" and not args.cold:
                continue
            samples: dict[str, list[float]] = {"base": [], "head": []}
            for _ in range(args.repeat):      # alternated, so a load change on the machine hits both sides
                for side, checkout in (("base", args.base), ("head", HEAD)):
                    got = measure(checkout, tree)
                    if kind == "fact":
                        row["files"], got = got
                    samples[side].append(got)
            base, head = statistics.median(samples["base"]), statistics.median(samples["head"])
            row[kind] = {"base_s": round(base, 3), "head_s": round(head, 3), "head/base": round(head / base, 2)}
        rows.append(row)
    print(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
