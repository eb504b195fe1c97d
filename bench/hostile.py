"""Run a hostile set against `audit` and count what must be zero: tracebacks, processes left alive, and
answers that differ from --no-cache.

    python bench/hostile.py            # about a minute; prints one line per check and a summary

The set: a tree with a FIFO named x.py, a symlink to /dev/zero, a syntax error, 3.12 syntax, a binary
.py, a file over the size limit, an unknown code in a suppression comment, a damaged cache index, and
15 flag sets run cold, warm and with --no-cache; `--trace` on user code that starts a process it never
waits for, stopped by SIGTERM, SIGINT and SIGKILL; `fix` on the same tree.
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
ENV = {**os.environ, "PYTHONPATH": str(REPO)}
FLAG_SETS = [[], ["--ignore", "NPU501"], [], ["--select", "NPU5"], ["--product", "310p"], ["--product", "950"],
             ["--torch-npu", "2.1"], [], ["--max-file-size", "0.0001"], ["--extend-select", "NPU0"],
             ["--ignore", "precision"], ["--fail-on", "warning"], ["--jobs", "2"], ["--ignore", "NPU501"], []]


def audit(*args, timeout=120, **kw):
    return subprocess.run([sys.executable, "-m", "auditor.cli", *args], capture_output=True, text=True,
                          timeout=timeout, env=ENV, **kw)


def alive(marker: str) -> int:
    out = subprocess.run(["ps", "-eo", "stat,args"], capture_output=True, text=True).stdout
    return sum(1 for line in out.splitlines() if marker in line and not line.startswith("Z") and "ps -eo" not in line)


def build_tree(root: Path) -> None:
    (root / "a.py").write_text("import torch\nm = Net().cuda()\nx = torch.QInt8Storage()\n"
                               "t = torch.zeros(2, dtype=torch.bfloat16)\n")
    (root / "b.py").write_text("import torch\ntorch.cuda.synchronize()  # noqa: NPU002\ny = t.cuda()  # npu-audit: ignore[NPU0O1]\n")
    (root / "broken.py").write_text("def f(:\n")
    (root / "new.py").write_text("type D = str\ndef f[T](x: T) -> T:\n    return x.cuda()\nm = f\"{d[\"cuda\"]}\"\n")
    (root / "blob.py").write_bytes(b"\x7fELF\x00\x00" * 50)
    (root / "big.py").write_text("x = t.cuda()\n" + "# padding\n" * 900_000)   # 9 MB: over the 8 MB limit
    os.mkfifo(root / "x.py")
    os.symlink("/dev/zero", root / "zero.py")
    (root / "pkg").mkdir()
    for i in range(30):
        (root / "pkg" / f"m{i}.py").write_text(f"import torch\nv{i} = torch.randn(3).cuda()\n")


def answer(proc):
    doc = json.loads(proc.stdout)
    return proc.returncode, [(f["path"], f["line"], f["code"], f["severity"], f["message"]) for f in doc["findings"]], doc["errors"]


def main() -> int:
    tracebacks = differ = runs = 0
    work = Path(tempfile.mkdtemp(prefix="npu-audit-hostile-"))
    tree, cache = work / "tree", work / "cache"
    tree.mkdir()
    build_tree(tree)
    for flags in FLAG_SETS:
        ref = audit(str(tree), "--no-cache", "--format", "json", *flags)
        results = [audit(str(tree), "--cache-dir", str(cache), "--format", "json", *flags) for _ in range(2)]
        for proc in (ref, *results):
            runs += 1
            tracebacks += "Traceback" in proc.stdout + proc.stderr
        differ += sum(answer(r) != answer(ref) for r in results)
    for index in cache.glob("results-*.json"):
        index.write_text('{"format": 2, "key": "x", "entries": {"y": 5}}')
    ref = audit(str(tree), "--no-cache", "--format", "json")
    damaged = audit(str(tree), "--cache-dir", str(cache), "--format", "json")
    runs += 2
    tracebacks += "Traceback" in damaged.stdout + damaged.stderr
    differ += answer(damaged) != answer(ref)
    print(f"static: {runs} runs ({len(FLAG_SETS)} flag sets x cold/warm/--no-cache + a damaged index); "
          f"answers differing from --no-cache: {differ}; tracebacks: {tracebacks}; exit code {ref.returncode}")
    fix = audit("fix", str(tree), timeout=120)
    tracebacks += "Traceback" in fix.stderr
    print(f"fix on the same tree: exit {fix.returncode}, traceback: {'Traceback' in fix.stderr}")

    left = 0
    for sig in (None, signal.SIGTERM, signal.SIGINT, signal.SIGKILL):
        marker = str(100000 + uuid.uuid4().int % 10**6)
        model = work / f"model_{marker}.py"
        model.write_text(f"import subprocess\nimport torch\n\ndef audit_entry():\n"
                         f"    subprocess.Popen(['sleep', '{marker}'])\n"
                         + ("    while True:\n        pass\n" if sig else
                            "    return torch.nn.Linear(4, 2), (torch.randn(2, 4),)\n"))
        proc = subprocess.Popen([sys.executable, "-m", "auditor.cli", str(model), "--trace", "--no-cache"],
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=ENV)
        if sig is not None:
            deadline = time.monotonic() + 120
            while not alive(f"sleep {marker}") and time.monotonic() < deadline:
                time.sleep(0.2)
            proc.send_signal(sig)
        proc.wait(240)
        err = proc.stderr.read()
        tracebacks += "Traceback" in err
        time.sleep(2)
        n = alive(f"sleep {marker}") + alive(str(model))
        left += n
        print(f"--trace {'finished' if sig is None else 'stopped by ' + sig.name}: exit {proc.returncode}, "
              f"processes left alive: {n}")
    print(f"SUMMARY tracebacks={tracebacks} processes_left={left} cache_differences={differ}")
    return 0 if tracebacks == left == differ == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
