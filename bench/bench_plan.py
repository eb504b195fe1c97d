"""Wall time and peak memory of `audit plan` on the Llama 3.1 405B config, with and without the
layer-scaled fake-tensor trace, each in a fresh process, printed as a table.

    python bench/bench_plan.py

The issue's budget is 60 s on the 2-core development machine. "wall s" is end to end as a user waits;
"max RSS MB" covers the process and its children (the trace child holds the 1- and 2-layer models).
"""
from __future__ import annotations

import resource
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
BASE = [sys.executable, "-m", "auditor.cli", "plan", "--hf-config",
        str(REPO / "tests" / "fixtures" / "plan" / "llama3.1-405b.json"), "--seq-len", "8192",
        "--global-batch", "2048", "--cluster", "h100:16384", "--format", "json"]


def main() -> int:
    rows = []
    for label, extra in (("closed form + search", ["--trace-facts", "off"]), ("+ scaled trace", [])):
        started = time.perf_counter()
        proc = subprocess.run(BASE + extra, cwd=REPO, capture_output=True, text=True, check=False,
                              env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"})
        wall = time.perf_counter() - started
        if proc.returncode:
            print(proc.stderr, file=sys.stderr)
            return 1
        rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        rows.append((label, wall, rss))
    print(f"{'run':<24} {'wall s':>7} {'max RSS MB':>11}")
    for label, wall, rss in rows:
        print(f"{label:<24} {wall:7.1f} {rss:11.0f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
