"""Run a hostile set against `audit` and count what must be zero: tracebacks, processes left alive, and
answers that differ from --no-cache.

    python bench/hostile.py            # several minutes; prints one line per check and a summary

The set: a tree with a FIFO named x.py, a symlink to /dev/zero, a syntax error, 3.12 syntax, a binary
.py, a file over the size limit, an unknown code in a suppression comment, a damaged cache index, and
15 flag sets run cold, warm and with --no-cache (a 2.1 MB file among them takes the bounded-memory
path); `--trace` and `--execute` on user code that starts a plain child, a setsid child and a
double-forked daemon, finished and stopped by SIGTERM, SIGINT and SIGKILL; `fix` on the same tree; a
training script with DataLoader(num_workers=2) under --trace and --execute; a 3.3 MB file and a 3.3 MB
data literal under a 640 MB address-space limit (audited; refused with a message).
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
    # 2.1 MB: over largefile.CHUNKED_ABOVE, so the bounded-memory path (pieces of statements) is compared too
    doc = '"""' + "Lorem ipsum dolor sit amet, consectetur adipiscing elit.\n" * 350 + '"""\n'
    (root / "large.py").write_text("import torch\n" + "".join(f"def f{i}(x):\n    {doc}    return x.cuda()\n\n\n"
                                                              for i in range(100)))
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
    for mode, sig in [(m, s) for m in ("--trace", "--execute")
                      for s in (None, signal.SIGTERM, signal.SIGINT, signal.SIGKILL)]:
        marker = str(100000 + uuid.uuid4().int % 10**6)
        model = work / f"model_{marker}.py"
        # a plain child, a child in a session of its own (setsid) and a double-forked daemon
        model.write_text(DAEMONS.replace("MARKER", marker)
                         + ("    while True:\n        pass\n" if sig else
                            "    return torch.nn.Linear(4, 2), (torch.randn(2, 4),)\n"))
        proc = subprocess.Popen([sys.executable, "-m", "auditor.cli", str(model), mode, "--no-cache"],
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=ENV)
        if sig is not None:
            deadline = time.monotonic() + 120
            while alive(f"sleep {marker}") < 3 and time.monotonic() < deadline:
                time.sleep(0.2)
            proc.send_signal(sig)
        proc.wait(240)
        err = proc.stderr.read()
        tracebacks += "Traceback" in err
        time.sleep(2)
        n = alive(f"sleep {marker}") + alive(str(model))
        left += n
        print(f"{mode} {'finished' if sig is None else 'stopped by ' + sig.name}: exit {proc.returncode}, "
              f"processes left alive: {n}")
        kill_marked(f"sleep {marker}")

    failures = 0
    loader = REPO / "tests" / "fixtures" / "trace" / "dataloader_workers.py"
    for mode in ("--trace", "--execute"):
        proc = audit(str(loader), mode, "--no-cache", "--format", "json", "--fail-on", "never", timeout=300)
        ok = proc.returncode == 0 and json.loads(proc.stdout)["errors"] == []
        tracebacks += "Traceback" in proc.stderr
        failures += not ok
        print(f"DataLoader(num_workers=2) training script under {mode}: exit {proc.returncode}, "
              f"{'audited' if ok else 'FAILED'}, traceback: {'Traceback' in proc.stderr}")

    big, literal = work / "big.py", work / "data.py"
    big.write_text("import torch\n" + "".join("x = t.cuda()\n" if i % 1000 == 0 else f"v{i % 97} = f(a, {i}) + 1\n"
                                              for i in range(150_000)))
    literal.write_text("DATA = [\n" + "".join(f"    ({i}, {i + 1}, {i + 2}),\n" for i in range(150_000)) + "]\n")
    for path, expect in ((big, "150 findings"), (literal, "too-large")):
        proc = subprocess.run([sys.executable, "-c", LIMITED, str(path)], capture_output=True, text=True, env=ENV,
                              timeout=600)
        doc = json.loads(proc.stdout) if proc.stdout.strip() else {"findings": [], "errors": [{"kind": "crash"}]}
        got = "too-large" if [e["kind"] for e in doc["errors"]] == ["too-large"] else \
            f"{len(doc['findings'])} findings" if not doc["errors"] else str(doc["errors"])[:200]
        tracebacks += "Traceback" in proc.stderr
        failures += got != expect
        print(f"{path.stat().st_size / 1e6:.1f} MB {path.name} under a 640 MB address-space limit: {got} "
              f"(expected {expect})")
    print(f"SUMMARY tracebacks={tracebacks} processes_left={left} cache_differences={differ} failures={failures}")
    return 0 if tracebacks == left == differ == failures == 0 else 1


DAEMONS = """\
import os
import subprocess
import torch


def audit_entry():
    subprocess.Popen(['sleep', 'MARKER'])
    subprocess.Popen(['sleep', 'MARKER'], start_new_session=True)
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            os.execvp('sleep', ['sleep', 'MARKER'])
        os._exit(0)
"""
LIMITED = """\
import resource, sys
resource.setrlimit(resource.RLIMIT_AS, (640 * 2**20, 640 * 2**20))
from auditor.cli import main
sys.exit(main([sys.argv[1], "--no-cache", "--format", "json", "--max-file-size", "60", "--fail-on", "never"]))
"""


def kill_marked(marker: str) -> None:
    """Whatever a failed check left behind, so that the next one starts clean (by pid)."""
    out = subprocess.run(["ps", "-eo", "pid,stat,args"], capture_output=True, text=True).stdout
    for line in out.splitlines()[1:]:
        if marker in line and "ps -eo" not in line:
            try:
                os.kill(int(line.split()[0]), signal.SIGKILL)
            except OSError:
                pass


if __name__ == "__main__":
    sys.exit(main())
