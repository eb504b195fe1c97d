#!/usr/bin/env python3
"""Report sizes at scale (issue 11): console and markdown bytes of one tree, grouped and `--full`, next to
another checkout of the tool (a `git archive` export of an older commit), with the markdown checkbox count and
the number of (file, decision) pairs from the JSON report.

    python bench/report_sizes.py TREE [--baseline-src DIR] [--json]

Each source audits TREE once into its own cache folder (`--cache-dir`), then renders every format from the
warm cache, so the sizes compare rendering, not timing. Decision = (rule, symbol, severity), the key the
grouped console and markdown use.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def render(src: Path, tree: Path, cache: Path, *args: str) -> str:
    env = {**os.environ, "PYTHONPATH": str(src)}
    cmd = [sys.executable, "-m", "auditor.cli", str(tree), "--fail-on", "never", "--cache-dir", str(cache), *args]
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=src, env=env)
    if proc.returncode not in (0, 1):
        sys.exit(f"report_sizes: {' '.join(cmd)} failed: {proc.stderr.strip()[-400:]}")
    return proc.stdout


def measure(src: Path, tree: Path, full_flag: bool) -> dict:
    with tempfile.TemporaryDirectory(prefix="report-sizes-") as tmp:
        cache = Path(tmp)
        doc = json.loads(render(src, tree, cache, "--format", "json"))
        out = {"findings": len(doc["findings"]),
               "file_decision_pairs": len({(f["path"], f["code"], f["symbol"], f["severity"])
                                           for f in doc["findings"]})}
        for fmt in ("console", "markdown"):
            text = render(src, tree, cache, "--format", fmt)
            out[fmt] = {"bytes": len(text.encode()), "lines": text.count("\n")}
            if fmt == "markdown":
                out[fmt]["checkboxes"] = text.count("- [ ] ")
            if full_flag:
                text = render(src, tree, cache, "--format", fmt, "--full")
                out[f"{fmt}_full"] = {"bytes": len(text.encode()), "lines": text.count("\n")}
        return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("tree", type=Path)
    ap.add_argument("--baseline-src", type=Path, help="another checkout of npu-audit to compare with")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    result = {"tree": str(args.tree), "this": measure(ROOT, args.tree, True)}
    if args.baseline_src:
        result["baseline"] = measure(args.baseline_src, args.tree, False)
        for fmt in ("console", "markdown"):
            result[f"{fmt}_ratio"] = round(result["this"][fmt]["bytes"] / result["baseline"][fmt]["bytes"], 3)
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
