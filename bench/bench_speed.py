#!/usr/bin/env python3
"""Speed benchmark for `audit` (issue 8): pinned real trees, cold and warm, against TorchFix.

One run:
  1. downloads pinned releases with `pip download --no-deps` into bench/_work/ and unpacks them
     (skipped when already there);
  2. counts .py files and lines;
  3. times `audit TREE --format json --fail-on never` with --no-cache (cold) and with a fresh
     --cache-dir twice (fill, then warm), with the default --jobs (optionally also --jobs 1);
  4. times TorchFix (its own venv, bench/_work/torchfix-venv, no torch installed) with --jobs 1 on a
     shared subset of transformers, next to `audit --jobs 1 --no-cache` on the same subset;
  5. prints one table (lines, seconds, lines/s, peak memory, ratios), or JSON with --json.

Every measurement runs in a fresh child process. Peak memory is reported two ways:
  rss_max_mb  the largest resident set of any one process in the audited process tree (exact, from
              os.wait4's rusage, which Linux folds over waited-for descendants);
  rss_sum_mb  the largest sum of resident sets over the whole tree at one moment (sampled from /proc
              every 50 ms, so a lower bound on the true peak).
The machine is shared: each measurement is repeated (--repeat) and reported as median with min-max.

Usage:
  python bench/bench_speed.py                    # everything, 3 repeats
  python bench/bench_speed.py --repeat 1 --only transformers --jobs1
  python bench/bench_speed.py --json > speed.json
  python bench/bench_speed.py --audit-src /tmp/npu-audit-head   # a `git archive HEAD` export
Every run also writes its JSON to bench/_work/bench_speed-last.json.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
import venv
import zipfile
from dataclasses import asdict, dataclass, field
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
WORK_DIR = BENCH_DIR / "_work"
DOWNLOAD_DIR = WORK_DIR / "dl"
TREES_DIR = WORK_DIR / "trees"
TORCHFIX_VENV = WORK_DIR / "torchfix-venv"

# Pinned releases (newest on PyPI when this bench was written). name -> version.
PINNED = {
    "transformers": "5.24.0",
    "megatron-core": "0.16.1",
    "deepspeed": "0.19.8",
}
TORCHFIX_VERSION = "0.7.0"
# What `torchfix` imports at run time (its metadata also asks for flake8, which only its flake8
# plugin entry point uses; torch is not a dependency, so nothing can pull a CUDA torch).
TORCHFIX_RUNTIME_DEPS = ["libcst>=1.5.0,<1.6.0", "PyYAML"]

SUBSET_TREE = "transformers"
SUBSET_LINES = 100_000
PROC_SAMPLE_S = 0.05


class BenchError(Exception):
    """A problem the user can fix; printed as one line, no traceback."""


# ----------------------------------------------------------------------------------------------
# Downloading and unpacking


def _archive_for(name: str, version: str) -> Path | None:
    stem = name.replace("-", "_").lower()
    for path in DOWNLOAD_DIR.glob("*"):
        low = path.name.lower()
        if (low.startswith(f"{stem}-{version}-") and low.endswith(".whl")) or low == f"{stem}-{version}.tar.gz" \
                or low == f"{name.lower()}-{version}.tar.gz":
            return path
    return None


def download(name: str, version: str) -> Path:
    archive = _archive_for(name, version)
    if archive is not None:
        return archive
    DOWNLOAD_DIR.mkdir(parents=True, exist_ok=True)
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--quiet", f"{name}=={version}",
           "-d", str(DOWNLOAD_DIR)]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    archive = _archive_for(name, version)
    if proc.returncode != 0 or archive is None:
        errors = [line for line in proc.stderr.splitlines() if line.startswith("ERROR")]
        raise BenchError(f"could not download {name}=={version}: {errors[-1] if errors else 'no archive saved'}")
    return archive


def unpack(name: str, version: str, archive: Path) -> Path:
    """Unpack the archive's files into bench/_work/trees/<name>-<version>/ once."""
    dest = TREES_DIR / f"{name}-{version}"
    done_marker = dest / ".unpacked"
    if done_marker.exists():
        return dest
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    if archive.suffix == ".whl":
        with zipfile.ZipFile(archive) as zf:
            zf.extractall(dest)
    else:
        with tarfile.open(archive) as tf:
            tf.extractall(dest, filter="data")
    done_marker.write_text(archive.name + "\n")
    return dest


@dataclass
class TreeSize:
    files: int
    lines: int


def python_files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*.py") if p.is_file())


def count_lines(path: Path) -> int:
    data = path.read_bytes()
    return data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)


def measure_size(root: Path) -> TreeSize:
    files = python_files(root)
    return TreeSize(files=len(files), lines=sum(count_lines(p) for p in files))


def make_subset(source: Path, target_lines: int) -> Path:
    """Copy the first files of `source` (sorted by relative path) until `target_lines` lines."""
    dest = WORK_DIR / f"subset-{source.name}-{target_lines // 1000}k"
    done_marker = dest / ".subset"
    if done_marker.exists():
        return dest
    if dest.exists():
        shutil.rmtree(dest)
    total = 0
    for path in python_files(source):
        rel = path.relative_to(source)
        (dest / rel.parent).mkdir(parents=True, exist_ok=True)
        shutil.copy2(path, dest / rel)
        total += count_lines(path)
        if total >= target_lines:
            break
    done_marker.write_text(f"{total} lines from {source.name}\n")
    return dest


# ----------------------------------------------------------------------------------------------
# TorchFix in its own venv


def torchfix_exe() -> Path:
    return TORCHFIX_VENV / "bin" / "torchfix"


def ensure_torchfix() -> Path:
    exe = torchfix_exe()
    python = TORCHFIX_VENV / "bin" / "python"
    if exe.exists():
        out = subprocess.run([str(exe), "--version"], capture_output=True, text=True)
        if out.returncode == 0 and out.stdout.strip() == TORCHFIX_VERSION:
            return exe
    if not python.exists():
        venv.EnvBuilder(with_pip=True, clear=True).create(TORCHFIX_VENV)
    pip = [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
    for args in ([ "--no-deps", f"torchfix=={TORCHFIX_VERSION}"], TORCHFIX_RUNTIME_DEPS):
        proc = subprocess.run(pip + list(args), capture_output=True, text=True)
        if proc.returncode != 0:
            raise BenchError(f"could not install TorchFix into {TORCHFIX_VENV}: {proc.stderr.strip()[-500:]}")
    check = subprocess.run([str(python), "-c", "import importlib.util,sys; sys.exit(importlib.util.find_spec('torch') is not None)"])
    if check.returncode != 0:
        raise BenchError(f"{TORCHFIX_VENV} contains torch; delete it and rerun")
    return exe


# ----------------------------------------------------------------------------------------------
# Running one measurement


def _children_of() -> dict[int, list[int]]:
    tree: dict[int, list[int]] = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat", "rb") as f:
                stat = f.read()
        except OSError:
            continue
        # the command name may contain spaces and parentheses: fields start after the last ')'
        ppid = int(stat[stat.rindex(b")") + 2:].split()[1])
        tree.setdefault(ppid, []).append(int(entry.name))
    return tree


def _rss_kb(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/status", "rb") as f:
            for line in f:
                if line.startswith(b"VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def _tree_rss_kb(root: int) -> tuple[int, int]:
    """(sum of RSS, number of processes) over root and all its descendants, now."""
    children = _children_of()
    total, count, stack = 0, 0, [root]
    while stack:
        pid = stack.pop()
        total += _rss_kb(pid)
        count += 1
        stack.extend(children.get(pid, ()))
    return total, count


@dataclass
class Run:
    seconds: float
    cpu_s: float
    returncode: int
    rss_max_mb: float
    rss_sum_mb: float
    processes: int
    stdout: bytes
    stderr: bytes


def run_measured(cmd: list[str], cwd: Path | None = None) -> Run:
    out = tempfile.TemporaryFile()
    err = tempfile.TemporaryFile()
    peak = {"sum": 0, "procs": 0}
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=out, stderr=err, cwd=cwd)
    finished = threading.Event()

    def sample() -> None:
        while not finished.wait(PROC_SAMPLE_S):
            rss, procs = _tree_rss_kb(proc.pid)
            peak["sum"] = max(peak["sum"], rss)
            peak["procs"] = max(peak["procs"], procs)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    # wait4's rusage covers the child and every descendant it waited for: ru_maxrss is the
    # largest single process of the tree (kB on Linux).
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - start
    finished.set()
    sampler.join()
    proc.returncode = os.waitstatus_to_exitcode(status)
    out.seek(0)
    err.seek(0)
    rss_max_mb = usage.ru_maxrss / 1024
    return Run(seconds=seconds, cpu_s=usage.ru_utime + usage.ru_stime, returncode=proc.returncode, rss_max_mb=rss_max_mb,
               rss_sum_mb=max(peak["sum"] / 1024, rss_max_mb), processes=max(peak["procs"], 1),
               stdout=out.read(), stderr=err.read())


# ----------------------------------------------------------------------------------------------
# Measurements


@dataclass
class Measurement:
    tree: str
    tool: str
    mode: str
    jobs: str
    files: int
    lines: int
    seconds: list[float] = field(default_factory=list)
    cpu_s: list[float] = field(default_factory=list)
    rss_max_mb: list[float] = field(default_factory=list)
    rss_sum_mb: list[float] = field(default_factory=list)
    processes: int = 0
    findings: int | None = None
    reported_files: int | None = None
    reported_lines: int | None = None
    files_checked: int | None = None
    error: str | None = None
    note: str | None = None

    @property
    def median_s(self) -> float | None:
        return statistics.median(self.seconds) if self.seconds else None

    @property
    def lines_per_s(self) -> float | None:
        med = self.median_s
        return self.lines / med if med else None

    def as_json(self) -> dict:
        data = asdict(self)
        data["median_s"] = self.median_s
        data["median_cpu_s"] = statistics.median(self.cpu_s) if self.cpu_s else None
        data["lines_per_s"] = self.lines_per_s
        data["peak_rss_max_mb"] = max(self.rss_max_mb, default=None)
        data["peak_rss_sum_mb"] = max(self.rss_sum_mb, default=None)
        return data


def audit_command(audit_src: Path | None) -> list[str] | None:
    """The command that runs `audit`: the installed script, or a source checkout's auditor.cli (so a
    bench can time a committed snapshot while the working tree is being edited)."""
    if audit_src is not None:
        return [sys.executable, "-c", "import sys; sys.path.insert(0, sys.argv.pop(1)); "
                "from auditor.cli import main; sys.exit(main())", str(audit_src)]
    candidate = Path(sys.executable).parent / "audit"
    if candidate.exists():
        return [str(candidate)]
    found = shutil.which("audit")
    return [found] if found else None


def _report_of(run: Run) -> tuple[dict | None, str | None]:
    try:
        doc = json.loads(run.stdout)
    except ValueError:
        tail = (run.stderr or run.stdout).decode(errors="replace").strip().splitlines()[-1:]
        return None, f"rc={run.returncode}, no JSON on stdout: {' '.join(tail)}"
    if not isinstance(doc, dict) or not isinstance(doc.get("findings"), list):
        return None, f"rc={run.returncode}, JSON without a findings list"
    return doc, None


def _finding_key(f: dict) -> tuple:
    return (f.get("path"), f.get("line"), f.get("col"), f.get("code"), f.get("symbol"), f.get("fingerprint"))


def bench_audit(audit: list[str] | None, tree: str, root: Path, size: TreeSize, repeat: int, jobs: int | None,
                results: list[Measurement], reference: dict[str, list]) -> None:
    """Cold (--no-cache), cache fill and warm for one tree and one --jobs setting."""
    jobs_label = str(jobs) if jobs else f"default ({os.cpu_count()})"
    # the pinned trees live under this repository's git-ignored bench/_work: audit them as their own trees
    base = (audit or []) + [str(root), "--format", "json", "--fail-on", "never", "--no-respect-gitignore"]
    if jobs:
        base += ["--jobs", str(jobs)]
    cold = Measurement(tree, "audit", "cold --no-cache", jobs_label, size.files, size.lines)
    fill = Measurement(tree, "audit", "cache fill", jobs_label, size.files, size.lines)
    warm = Measurement(tree, "audit", "warm cache", jobs_label, size.files, size.lines)
    results.extend([cold, fill, warm])
    if audit is None:
        cold.error = fill.error = warm.error = "`audit` is not installed in this venv"
        return

    def record(m: Measurement, run: Run) -> None:
        doc, error = _report_of(run)
        if doc is None:
            m.error = error
            return
        findings = doc["findings"]
        summary = doc.get("summary") or {}
        m.reported_files = summary.get("files_scanned")
        m.reported_lines = summary.get("lines_scanned")
        m.seconds.append(run.seconds)
        m.cpu_s.append(run.cpu_s)
        m.rss_max_mb.append(run.rss_max_mb)
        m.rss_sum_mb.append(run.rss_sum_mb)
        m.processes = max(m.processes, run.processes)
        m.findings = len(findings)
        keys = sorted(_finding_key(f) for f in findings)
        ref = reference.setdefault(tree, keys)
        if keys != ref:
            m.note = f"findings differ from the first run of this tree ({len(keys)} vs {len(ref)})"

    for _ in range(repeat):
        record(cold, run_measured(base + ["--no-cache"]))
        with tempfile.TemporaryDirectory(prefix="npu-audit-bench-cache-") as cache:
            record(fill, run_measured(base + ["--cache-dir", cache]))
            record(warm, run_measured(base + ["--cache-dir", cache]))


def bench_torchfix(tree: str, root: Path, size: TreeSize, repeat: int, results: list[Measurement]) -> None:
    m = Measurement(tree, "TorchFix " + TORCHFIX_VERSION, "1 process", "1", size.files, size.lines)
    results.append(m)
    try:
        exe = ensure_torchfix()
    except BenchError as exc:
        m.error = str(exc)
        return
    for _ in range(repeat):
        run = run_measured([str(exe), "--jobs", "1", str(root)])
        # exit 1 means some files failed to parse (reported in its summary), not a crash
        summary = [line for line in run.stderr.decode(errors="replace").splitlines() if line.startswith("Finished checking")]
        if run.returncode not in (0, 1) or not summary:
            m.error = f"torchfix rc={run.returncode}: {run.stderr.decode(errors='replace').strip()[-300:]}"
            return
        m.seconds.append(run.seconds)
        m.cpu_s.append(run.cpu_s)
        m.rss_max_mb.append(run.rss_max_mb)
        m.rss_sum_mb.append(run.rss_sum_mb)
        m.processes = max(m.processes, run.processes)
        m.files_checked = int(summary[-1].split()[2])
        m.findings = sum(1 for line in run.stdout.decode(errors="replace").splitlines() if line.startswith("+++ "))
    m.note = f"{m.files_checked} files contain 'torch' and were parsed; findings = files with a diff"


# ----------------------------------------------------------------------------------------------
# Report


def _spread(values: list[float]) -> str:
    if not values:
        return "-"
    med = statistics.median(values)
    if len(values) == 1:
        return f"{med:.2f}"
    return f"{med:.2f} ({min(values):.2f}-{max(values):.2f})"


def ratios(results: list[Measurement]) -> list[dict]:
    out = []
    by_key = {(m.tree, m.tool, m.mode, m.jobs): m for m in results}
    for m in results:
        if m.tool == "audit" and m.mode == "warm cache":
            cold = by_key.get((m.tree, "audit", "cold --no-cache", m.jobs))
            if cold and cold.median_s and m.median_s:
                out.append({"tree": m.tree, "what": f"cold / warm, jobs {m.jobs}",
                            "ratio": cold.median_s / m.median_s})
        if m.tool.startswith("TorchFix") and m.median_s:
            ours = by_key.get((m.tree, "audit", "cold --no-cache", "1"))
            if ours and ours.median_s:
                out.append({"tree": m.tree, "what": "TorchFix / audit, both 1 process, cold",
                            "ratio": m.median_s / ours.median_s})
    return out


def print_table(meta: dict, results: list[Measurement]) -> None:
    headers = ["tree", "tool", "mode", "jobs", "files", "lines", "seconds med (min-max)", "CPU s", "lines/s",
               "RSS max MB", "RSS sum MB", "procs", "findings"]
    rows = []
    for m in results:
        if m.error:
            rows.append([m.tree, m.tool, m.mode, m.jobs, str(m.files), f"{m.lines:,}", "error: " + m.error[:70],
                         "", "", "", "", "", ""])
            continue
        rows.append([m.tree, m.tool, m.mode, m.jobs, str(m.files), f"{m.lines:,}", _spread(m.seconds),
                     f"{statistics.median(m.cpu_s):.1f}",
                     f"{m.lines_per_s:,.0f}" if m.lines_per_s else "-",
                     f"{max(m.rss_max_mb):.0f}" if m.rss_max_mb else "-",
                     f"{max(m.rss_sum_mb):.0f}" if m.rss_sum_mb else "-",
                     str(m.processes or "-"), "-" if m.findings is None else str(m.findings)])
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(headers)]
    print(f"npu-audit speed bench: {meta['cpu_count']} CPUs, load average {meta['loadavg_start']} at start, "
          f"{meta['loadavg_end']} at end; {meta['repeat']} repeat(s); python {meta['python']}")
    print("seconds = wall clock; CPU s = user+system of the whole process tree; lines/s from the median wall time;"
          " RSS max = largest process, RSS sum = sampled peak of the tree")
    print("  ".join(h.ljust(w) for h, w in zip(headers, widths)))
    print("  ".join("-" * w for w in widths))
    for r in rows:
        print("  ".join(c.ljust(w) for c, w in zip(r, widths)))
    notes: list[str] = []
    for m in results:
        if m.note:
            notes.append(f"note: {m.tree} / {m.tool} / {m.mode}: {m.note}")
        if m.reported_lines is not None and (m.reported_files, m.reported_lines) != (m.files, m.lines):
            notes.append(f"note: {m.tree}: audit reports {m.reported_files} files, {m.reported_lines:,} lines "
                         "scanned (.py and .cu files after its default excludes)")
    for note in dict.fromkeys(notes):
        print(note)
    print()
    rows_r = ratios(results)
    tree_w = max((len(r["tree"]) for r in rows_r), default=0)
    what_w = max((len(r["what"]) for r in rows_r), default=0)
    for r in rows_r:
        print(f"ratio  {r['tree']:<{tree_w}}  {r['what']:<{what_w}}  {r['ratio']:.1f}x")


# ----------------------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=3, help="repetitions of each measurement (default 3)")
    parser.add_argument("--only", action="append", choices=sorted(PINNED),
                        help="bench only this tree (repeatable); default all pinned trees")
    parser.add_argument("--no-trees", action="store_true", help="skip the whole trees (only the TorchFix subset)")
    parser.add_argument("--jobs1", action="store_true", help="also time every tree with --jobs 1")
    parser.add_argument("--subset-lines", type=int, default=SUBSET_LINES,
                        help=f"lines of {SUBSET_TREE} in the TorchFix comparison subset (default {SUBSET_LINES})")
    parser.add_argument("--torchfix-repeat", type=int, default=1,
                        help="repetitions of the TorchFix run (default 1: it takes about two minutes)")
    parser.add_argument("--no-torchfix", action="store_true", help="skip the TorchFix comparison")
    parser.add_argument("--audit-src", type=Path, metavar="DIR",
                        help="run auditor.cli from this source checkout (e.g. a `git archive HEAD` export) "
                             "instead of the installed `audit`")
    parser.add_argument("--json", action="store_true", help="print the results as one JSON document")
    args = parser.parse_args(argv)
    if args.repeat < 1:
        parser.error("--repeat must be at least 1")
    if args.torchfix_repeat < 1:
        parser.error("--torchfix-repeat must be at least 1")
    if args.subset_lines < 1:
        parser.error("--subset-lines must be at least 1")

    if args.audit_src is not None and not (args.audit_src / "auditor" / "cli.py").is_file():
        parser.error(f"--audit-src {args.audit_src}: no auditor/cli.py there")
    audit = audit_command(args.audit_src)
    names = [] if args.no_trees else (args.only or list(PINNED))
    meta = {"cpu_count": os.cpu_count(), "loadavg_start": " ".join(f"{x:.2f}" for x in os.getloadavg()),
            "repeat": args.repeat, "python": sys.version.split()[0], "pinned": {n: PINNED[n] for n in names},
            "torchfix": TORCHFIX_VERSION, "audit": " ".join(audit) if audit else None}
    results: list[Measurement] = []
    reference: dict[str, list] = {}
    try:
        for name in names:
            version = PINNED[name]
            root = unpack(name, version, download(name, version))
            size = measure_size(root)
            label = f"{name}-{version}"
            bench_audit(audit, label, root, size, args.repeat, None, results, reference)
            if args.jobs1:
                bench_audit(audit, label, root, size, args.repeat, 1, results, reference)
        if not args.no_torchfix:
            version = PINNED[SUBSET_TREE]
            source = unpack(SUBSET_TREE, version, download(SUBSET_TREE, version))
            subset = make_subset(source, args.subset_lines)
            size = measure_size(subset)
            label = f"{SUBSET_TREE}-{version} first {size.lines // 1000}k lines"
            bench_audit(audit, label, subset, size, args.repeat, 1, results, reference)
            bench_torchfix(label, subset, size, args.torchfix_repeat, results)
    except BenchError as exc:
        print(f"bench_speed: {exc}", file=sys.stderr)
    meta["loadavg_end"] = " ".join(f"{x:.2f}" for x in os.getloadavg())

    document = {"meta": meta, "results": [m.as_json() for m in results], "ratios": ratios(results)}
    WORK_DIR.mkdir(parents=True, exist_ok=True)
    (WORK_DIR / "bench_speed-last.json").write_text(json.dumps(document, indent=2) + "\n")
    if args.json:
        json.dump(document, sys.stdout, indent=2)
        print()
    else:
        print_table(meta, results)
        print(f"\n(JSON of this run: {WORK_DIR / 'bench_speed-last.json'})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
