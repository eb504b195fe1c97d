"""Peak memory and time of `audit` on one very large generated file (issue 13: bounded memory).

    python bench/large_file.py 15 50          # sizes in MB; prints one line per size

The file is short statements, one `x = t.cuda()` per 1,000 lines (one finding each), the shape that
costs Python's parser the most per byte. Peak RSS and CPU time come from `/usr/bin/time -v`.
"""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def write(path: Path, megabytes: float) -> int:
    lines, size, i = ["import torch\n"], 13, 0
    while size < megabytes * 1e6:
        line = "x = t.cuda()\n" if i % 1000 == 0 else f"v{i % 97} = f(a, {i}) + 1\n"
        lines.append(line)
        size += len(line)
        i += 1
    path.write_text("".join(lines))
    return i


def main(sizes: list[str]) -> int:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    with tempfile.TemporaryDirectory() as tmp:
        for mb in sizes:
            path, out = Path(tmp) / f"big{mb}.py", Path(tmp) / "out.json"
            n = write(path, float(mb))
            proc = subprocess.run(["/usr/bin/time", "-v", sys.executable, "-m", "auditor.cli", str(path), "--no-cache",
                                   "--max-file-size", str(float(mb) + 10), "--format", "json", "-o", str(out),
                                   "--fail-on", "never"], capture_output=True, text=True, env=env)
            stats = dict(re.findall(r"^\s*(.+?): (.+)$", proc.stderr, re.M))
            doc = json.loads(out.read_text()) if out.exists() else {"findings": [], "errors": ["no output"]}
            print(f"{path.stat().st_size / 1e6:.1f} MB, {n} lines: exit {proc.returncode}, "
                  f"{len(doc['findings'])} findings, errors {doc['errors']}, "
                  f"peak RSS {int(stats['Maximum resident set size (kbytes)']) / 1024:.0f} MB, "
                  f"{stats['User time (seconds)']} s user, wall {stats['Elapsed (wall clock) time (h:mm:ss or m:ss)']}",
                  flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:] or ["15", "50"]))
