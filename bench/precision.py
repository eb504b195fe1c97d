#!/usr/bin/env python3
"""Precision bench (issue 11): a fixed-seed random sample of findings on real multi-backend or partly ported
trees that no rule was written from, each judged true or false by reading it in its code.

    python bench/precision.py [--split S] fetch     download the split's pinned sources (wheels by sha256, or
                                                    GitHub commits exported with `git archive`) into
                                                    bench/_work/precision/ and unpack them
    python bench/precision.py sample [--per-tree N] audit every tree (default rules, `--format json`) and
                                                    draw N findings per tree with seed 11; writes the
                                                    sample into bench/precision/labels.csv, keeping the
                                                    labels of rows drawn before (--findings DIR: use
                                                    saved `audit --format json` documents)
    python bench/precision.py score [--json]        precision overall, per rule, per tree, per severity and per
                                                    file kind (Python / CUDA source / project file)
                                                    from the labels (rows without a label are counted apart)
    python bench/precision.py combine A.csv B.csv   merge independent labellers' copies of the split's labels
                                                    into it, cell by cell: a row takes the label and reason of
                                                    the copy that labelled it; two copies giving one row
                                                    different labels, or a copy whose rows differ from the
                                                    sample, stop with an error
    python bench/precision.py check                 re-audit and report labelled findings the tool no longer
                                                    emits (the labels then describe an older sample)
    python bench/precision.py rescore [--findings DIR]
                                                    the labelled rows against this checkout's tool: kept rows keep
                                                    their label, false rows no longer emitted count as fixed, true
                                                    rows no longer emitted as lost, rows at another severity are
                                                    listed as moved (a tuned figure once anyone tuned on the split)

A label is `true` when the finding is right about that line: the construct is what the rule says, it matters
on Ascend as the message says, and the severity follows rules/severity_policy.yaml; `false` otherwise. Every
row carries a one-line reason. `--trees DIR` reads unpacked trees from DIR/<name>-<version>/ instead.
Decisions the labels follow (docs/precision.md, "Labelling decisions"): a "cuda" literal compared with a value
the code or its user sets (`device == "cuda"`, `SYSTEM == "cuda"`, a test marker naming cuda) is right as a
warning (clause `differs`: on Ascend the other branch runs) and wrong as an error; compared with the runtime's
device type (`x.device.type == "cuda"`) it is right as an error (clause `silent`); the recall labels count all
of them as must-change, and the tool reports all of them. A CUDA API that torch_npu's transfer_to_npu remaps,
in code that runs under it (the file imports it, or the package's Ascend backend module does), is right as
info and wrong as an error.
The judgement policy every labeller applies first (docs/precision.md, "Judgement policy"): (a) tables mapping
dtype names to dtypes choose nothing (false); (b) generic Triton in a project with a Triton-Ascend backend folder is
right as info; (c) findings in CI jobs pinned to NVIDIA runners are right as info; (d) a setting is a rule's only
where the tool the rule names reads it (another tool's key, Paddle configs: false as that rule); (e) hints on host
values (numpy, pandas, CPU tensors) are false.

Splits: a split is any folder bench/precision/<split>/ holding sources.json (and, once drawn, labels.csv);
`tuned` is bench/precision/ itself (six wheels whose first draw guided the issue-11 fixes, so its figure is NOT
held out). `heldout` (six pinned GitHub trees; tuned on after its first draw, see labels_after.csv) and `heldout2`
(six trees of the reserved pool C, pinned before the tool ran on them) are drawn and labelled once each, with
sources, seed and per-tree count committed before labelling; each row records the tool commit that emitted it.
A split's sources.json may set `seed` and `per_tree`; GitHub sources are exported from
`--mirrors DIR/<owner>+<name>/repo` when that git directory holds the commit, else fetched shallowly from GitHub.
Exit status: 0 after a result, 2 on usage or data errors.
"""
from __future__ import annotations

import argparse
import csv
import json
import hashlib
import os
import subprocess
import sys
from collections import Counter, defaultdict
from collections.abc import Callable
from pathlib import Path

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))
# one fetch / unpack / checkout implementation
from recall import BenchError, download_wheel, git_archive, mark_checkout, sha256_of, unpack  # noqa: E402

DATA = BENCH / "precision"

SOURCES_FILE = DATA / "sources.json"
LABELS_FILE = DATA / "labels.csv"
WORK = BENCH / "_work" / "precision"
SEED = 11
FIELDS = ("tree", "path", "line", "col", "code", "symbol", "severity", "text", "label", "reason", "tool_commit")


def splits() -> dict[str, Path]:
    """Every split: `tuned` is bench/precision/ itself; any other is a folder bench/precision/<split>/ holding a
    sources.json (and, once drawn, labels.csv)."""
    found = {"tuned": DATA}
    found.update({d.name: d for d in sorted(DATA.iterdir()) if d.is_dir() and (d / "sources.json").is_file()})
    return found


def use_split(name: str) -> None:
    """Point the bench at one split's folder: its sources.json (and sampling rule) and labels.csv."""
    global SOURCES_FILE, LABELS_FILE, SEED
    known = splits()
    if name not in known:
        raise BenchError(f"unknown split {name!r}: known splits are {', '.join(sorted(known))} "
                         f"(a split is a folder bench/precision/<split>/ holding sources.json)")
    SOURCES_FILE, LABELS_FILE = known[name] / "sources.json", known[name] / "labels.csv"
    try:
        SEED = json.loads(SOURCES_FILE.read_text()).get("seed", 11)
    except (OSError, ValueError) as e:
        raise BenchError(f"cannot read {SOURCES_FILE}: {e}") from e


def load_sources() -> list[dict]:
    try:
        return json.loads(SOURCES_FILE.read_text())["sources"]
    except (OSError, ValueError, KeyError) as e:
        raise BenchError(f"cannot read {SOURCES_FILE}: {e}") from e


def default_per_tree() -> int:
    return json.loads(SOURCES_FILE.read_text()).get("per_tree", 26)


def tree_dir(src: dict, trees: Path) -> Path:
    return trees / f"{src['name']}-{src['version']}"


def cmd_fetch(args: argparse.Namespace) -> int:
    archives = WORK / "_archives"
    archives.mkdir(parents=True, exist_ok=True)
    for src in load_sources():
        if "commit" in src:   # a pinned GitHub tree: the commit id is its checksum
            archive = archives / f"{src['name']}-{src['commit']}.tar"
            if not archive.exists():
                git_archive(src, archive, args.mirrors)
            dest = tree_dir(src, WORK)
            if not dest.exists():
                unpack(archive, dest)
            mark_checkout(dest)
            print(f"ok    {src['repo']}@{src['commit'][:12]} -> {dest}")
            continue
        archive = archives / src["archive"]
        if not archive.exists():
            download_wheel(src["name"], src["version"], archive)
        if sha256_of(archive) != src["sha256"]:
            raise BenchError(f"{src['archive']}: sha256 differs from the recipe")
        dest = tree_dir(src, WORK)
        if not dest.exists():
            unpack(archive, dest)
        mark_checkout(dest)
        print(f"ok    {src['name']}=={src['version']} -> {dest}")
    return 0


def audit(tree: Path) -> list[dict]:
    mark_checkout(tree)      # trees exported before the index was written get it here
    # run from the tree's root, as its users would: finding paths are relative to the current directory
    # (--ignore-errors: a file that does not parse, such as a broken YAML in a tree, is reported, not fatal)
    cmd = [sys.executable, "-m", "auditor.cli", ".", "--format", "json", "--fail-on", "never", "--no-cache",
           "--ignore-errors"]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(BENCH.parent), os.environ.get("PYTHONPATH")]))}
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=tree, env=env)
    if proc.returncode not in (0, 1):
        raise BenchError(f"audit {tree} failed: {proc.stderr.strip()[-300:]}")
    return json.loads(proc.stdout)["findings"]


def key(row: dict) -> tuple:
    return (row["tree"], row["path"], int(row["line"]), int(row["col"]), row["code"], row["symbol"])


def read_labels() -> list[dict]:
    if not LABELS_FILE.exists():
        return []
    with LABELS_FILE.open(newline="") as fh:
        return list(csv.DictReader(fh))


def write_labels(rows: list[dict]) -> None:
    LABELS_FILE.parent.mkdir(parents=True, exist_ok=True)
    with LABELS_FILE.open("w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=FIELDS)
        w.writeheader()
        for row in rows:
            w.writerow({k: row.get(k, "") for k in FIELDS})


def draw_key(tree: str, f: dict) -> str:
    """A fixed-seed random order of findings: the hash of seed and finding. Taking the smallest N is a uniform
    random sample that stays put when other findings of the tree appear or disappear (a rule change then
    redraws only the rows it touched, and their labels are kept)."""
    return hashlib.sha256(f"{SEED}:{tree}:{f['path']}:{f['line']}:{f['col']}:{f['code']}:{f['symbol']}"
                          .encode()).hexdigest()


def tool_commit() -> str:
    proc = subprocess.run(["git", "-C", str(BENCH.parent), "rev-parse", "HEAD"], capture_output=True, text=True)
    return proc.stdout.strip() if proc.returncode == 0 else "unknown"


def cmd_sample(args: argparse.Namespace) -> int:
    old = {key(r): r for r in read_labels()}
    per_tree = args.per_tree or default_per_tree()
    commit = args.tool_commit or tool_commit()
    rows = []
    for src in load_sources():
        tree = tree_dir(src, args.trees)
        if not tree.is_dir():
            raise BenchError(f"{tree} is missing: run `python bench/precision.py fetch`")
        pre = args.findings / f"{src['name']}-{src['version']}.json" if args.findings else None
        found = json.loads(pre.read_text())["findings"] if pre is not None else audit(tree)
        findings = sorted(found, key=lambda f: (f["path"], f["line"], f["col"], f["code"], f["symbol"]))
        static = [f for f in findings if f["source"] == "static"]
        picked = sorted(static, key=lambda f: draw_key(src["name"], f))[:per_tree]
        print(f"{src['name']}: {len(static)} findings, {len(picked)} drawn")
        for f in sorted(picked, key=lambda f: (f["path"], f["line"])):
            lines = (tree / f["path"]).read_text(errors="replace").splitlines()
            if f["path"].endswith(".ipynb"):
                # a notebook finding's line counts the notebook's code lines (cells joined; its message names the
                # cell), not the JSON file's: show that code line, not an unrelated line of the JSON
                from auditor.project.notebook import notebook_code_lines
                lines = notebook_code_lines("\n".join(lines))
            text = lines[f["line"] - 1].strip()[:160] if f["line"] <= len(lines) else ""
            row = {"tree": f"{src['name']}-{src['version']}", "path": f["path"], "line": f["line"], "col": f["col"],
                   "code": f["code"], "symbol": f["symbol"], "severity": f["severity"], "text": text,
                   "tool_commit": commit}
            prev = old.get(key(row))
            if prev:   # a row drawn before keeps its label and the commit it was labelled at
                row["label"], row["reason"] = prev["label"], prev["reason"]
                row["tool_commit"] = prev.get("tool_commit") or commit
            else:
                row["label"], row["reason"] = "", ""
            rows.append(row)
    write_labels(rows)
    print(f"wrote {len(rows)} rows to {LABELS_FILE}")
    return 0


def _pct(t: int, n: int) -> str:
    return f"{100.0 * t / n:.1f}%" if n else "-"


def file_kind(row: dict) -> str:
    """Python source, CUDA source, or a project file (requirements, shell, Dockerfile, config, notebook...)."""
    suffix = Path(row["path"]).suffix
    return "python" if suffix in (".py", ".pyi") else "cuda source" if suffix in (".cu", ".cuh") else "project file"


def score(rows: list[dict]) -> dict:
    labelled = [r for r in rows if r["label"] in ("true", "false")]
    unlabelled = len(rows) - len(labelled)
    out: dict = {"sampled": len(rows), "labelled": len(labelled), "unlabelled": unlabelled}
    for name, keyf in (("by_rule", lambda r: r["code"]), ("by_tree", lambda r: r["tree"]),
                       ("by_severity", lambda r: r["severity"]), ("by_kind", file_kind)):
        groups: dict[str, Counter] = defaultdict(Counter)
        for r in labelled:
            groups[keyf(r)][r["label"]] += 1
        out[name] = {k: {"true": c["true"], "false": c["false"],
                         "precision": round(c["true"] / (c["true"] + c["false"]), 4)}
                     for k, c in sorted(groups.items())}
    t = sum(r["label"] == "true" for r in labelled)
    out["true"], out["false"] = t, len(labelled) - t
    out["precision"] = round(t / len(labelled), 4) if labelled else None
    gate = [r for r in labelled if r["severity"] in ("error", "warning")]
    out["precision_error_warning"] = round(sum(r["label"] == "true" for r in gate) / len(gate), 4) if gate else None
    out["false_rows"] = [f"{r['tree']}/{r['path']}:{r['line']} {r['code']}: {r['reason']}"
                         for r in labelled if r["label"] == "false"]
    return out


def cmd_score(args: argparse.Namespace) -> int:
    rows = read_labels()
    if not rows:
        raise BenchError(f"no labels in {LABELS_FILE}: run `sample`, then label the rows")
    bad = [r for r in rows if r["label"] not in ("true", "false", "")]
    if bad:
        raise BenchError(f"labels must be true or false: {bad[0]}")
    r = score(rows)
    if args.json:
        print(json.dumps(r, indent=2))
        return 0
    print(f"precision {_pct(r['true'], r['labelled'])} ({r['true']} of {r['labelled']} labelled findings true; "
          f"{r['unlabelled']} not labelled) over {len(r['by_tree'])} trees")
    gw = r["precision_error_warning"]
    print(f"error + warning only: {gw * 100:.1f}%" if gw is not None else "error + warning only: -")
    for name in ("by_tree", "by_kind", "by_severity", "by_rule"):
        print(f"\n{name.replace('_', ' ')}")
        for k, c in r[name].items():
            print(f"  {k:<28} {c['true']:>4} true {c['false']:>3} false  {_pct(c['true'], c['true'] + c['false'])}")
    if r["false_rows"]:
        print("\nfalse findings")
        for line in r["false_rows"]:
            print("  " + line)
    return 0


def cmd_combine(args: argparse.Namespace) -> int:
    rows = read_labels()
    if not rows:
        raise BenchError(f"no sample in {LABELS_FILE}: run `sample` first")
    fixed = [k for k in FIELDS if k not in ("label", "reason")]
    by_key = {key(r): r for r in rows}
    taken: dict[tuple, str] = {}   # row key -> the copy its label came from
    for copy in args.copies:
        if not copy.is_file():
            raise BenchError(f"{copy}: no such labels file")
        with copy.open(newline="") as fh:
            theirs = list(csv.DictReader(fh))
        if {key(r) for r in theirs} != set(by_key):
            raise BenchError(f"{copy}: its rows are not the sample's rows (re-drawn or edited?)")
        for r in theirs:
            mine = by_key[key(r)]
            changed = [k for k in fixed if k != "tool_commit" and str(r.get(k, "")) != str(mine.get(k, ""))]
            if changed:
                raise BenchError(f"{copy}: row {r['path']}:{r['line']} {r['code']} differs in {', '.join(changed)}")
            if r["label"] not in ("true", "false", ""):
                raise BenchError(f"{copy}: row {r['path']}:{r['line']} has label {r['label']!r}")
            if not r["label"] or (r["label"], r["reason"]) == (mine["label"], mine["reason"]):
                continue
            if mine["label"] and key(r) in taken:
                raise BenchError(f"row {r['path']}:{r['line']} {r['code']}: {taken[key(r)]} says {mine['label']}, "
                                 f"{copy} says {r['label']}")
            mine["label"], mine["reason"] = r["label"], r["reason"]
            taken[key(r)] = str(copy)
    write_labels(rows)
    print(f"{len(taken)} rows took labels from {len(args.copies)} copies; "
          f"{sum(1 for r in rows if r['label'])} of {len(rows)} rows labelled in {LABELS_FILE}")
    return 0


def cmd_check(args: argparse.Namespace) -> int:
    rows = read_labels()
    by_tree: dict[str, list[dict]] = defaultdict(list)
    for r in rows:
        by_tree[r["tree"]].append(r)
    missing = 0
    for src in load_sources():
        name = f"{src['name']}-{src['version']}"
        if name not in by_tree:
            continue
        emitted = {key({**f, "tree": name}) for f in audit(tree_dir(src, args.trees))}
        for r in by_tree[name]:
            if key(r) not in emitted:
                missing += 1
                print(f"no longer emitted: {name}/{r['path']}:{r['line']} {r['code']} ({r['label']})")
    print(f"{len(rows) - missing} of {len(rows)} labelled findings still emitted")
    return 0


# Rules that took over part of another rule's findings: a row labelled under the old code matches the new code's
# finding at the same line (the same construct, reported under its new rule). NPU411 -> NPU831: FlashInfer and
# SageAttention moved from the NVIDIA-only packages to the attention-kernel libraries; NPU344 -> NPU832: flash-attn's
# non-Triton norm wrappers moved from kernel to attention (lead, session 40).
CODE_SUCCESSORS: dict[str, tuple[str, ...]] = {"NPU411": ("NPU831",), "NPU344": ("NPU832",)}


def rescore(rows: list[dict], emitted: dict[str, list[dict]],
            file_of: Callable[[str, str], str] = lambda tree, path: path) -> dict:
    """Score labelled rows against a later tool's findings (`emitted`: tree -> findings). A row whose finding is
    still emitted at the same line, rule and severity keeps its label (`kept`); one emitted there at another
    severity keeps its label too but is listed as `moved` (its reason says whether the new severity is right);
    one no longer emitted is `gone`: a false row gone counts as fixed (true), a true row gone as lost (false).
    Column and symbol may change between tool versions, so rows are matched by tree, path, line and rule (or the rule
    that took the finding over, CODE_SUCCESSORS); `file_of`
    names a path's file (its real path in the tree), so a row drawn under a symlinked folder's path matches the
    same file's finding under its own path."""
    at: dict[tuple, set[str]] = defaultdict(set)
    for tree, findings in emitted.items():
        for f in findings:
            at[(tree, file_of(tree, f["path"]), int(f["line"]), f["code"])].add(f["severity"])
    out: dict = {"kept": Counter(), "moved": [], "gone": [], "lost_true": 0}
    good = 0
    labelled = [r for r in rows if r["label"] in ("true", "false")]
    for r in labelled:
        place = (r["tree"], file_of(r["tree"], r["path"]), int(r["line"]))
        severities = at.get((*place, r["code"])) or \
            set().union(*(at.get((*place, code), set()) for code in CODE_SUCCESSORS.get(r["code"], ())))
        where = f"{r['tree']}/{r['path']}:{r['line']} {r['code']} ({r['label']}, was {r['severity']})"
        if not severities:
            out["gone"].append(where)
            good += r["label"] == "false"
            out["lost_true"] += r["label"] == "true"
            continue
        good += r["label"] == "true"
        if r["severity"] in severities:
            out["kept"][r["label"]] += 1
        else:
            out["moved"].append(f"{where} -> {'/'.join(sorted(severities))}")
    out["true"], out["labelled"] = good, len(labelled)
    return out


def cmd_rescore(args: argparse.Namespace) -> int:
    rows = read_labels()
    if not rows:
        raise BenchError(f"no labels in {LABELS_FILE}: nothing to re-score")
    emitted: dict[str, list[dict]] = {}
    trees = {r["tree"] for r in rows}
    roots: dict[str, Path] = {}
    for src in load_sources():
        name = f"{src['name']}-{src['version']}"
        if name not in trees:
            continue
        roots[name] = tree_dir(src, args.trees)
        pre = args.findings / f"{name}.json" if args.findings else None
        if pre is not None and pre.is_file():
            emitted[name] = json.loads(pre.read_text())["findings"]
        else:
            tree = tree_dir(src, args.trees)
            if not tree.is_dir():
                raise BenchError(f"{tree} is missing: run `python bench/precision.py fetch`")
            emitted[name] = audit(tree)
    def file_of(tree: str, path: str) -> str:
        root = roots.get(tree)
        return os.path.realpath(root / path) if root is not None and root.is_dir() else path

    r = rescore(rows, emitted, file_of)
    if args.json:
        print(json.dumps(r, indent=2))
        return 0
    print(f"re-scored with {tool_commit()[:8]}: {_pct(r['true'], r['labelled'])} ({r['true']} of {r['labelled']}; "
          f"false rows gone count as fixed, true rows gone as lost: {r['lost_true']} lost); kept "
          f"{r['kept']['true']} true, {r['kept']['false']} false; {len(r['moved'])} moved, {len(r['gone'])} gone")
    for title in ("moved", "gone"):
        if r[title]:
            print(f"\n{title}")
            for line in r[title]:
                print("  " + line)
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--trees", type=Path, default=WORK, help="folder holding <name>-<version>/ trees")
    ap.add_argument("--split", default="heldout",
                    help="a folder bench/precision/<split>/ holding sources.json (default heldout), or tuned "
                    "(bench/precision/ itself: the trees the issue-11 fixes were read on)")
    ap.add_argument("--labels", type=Path, help="labels file to sample into / score (default: the split's labels.csv; "
                    "the held-out split keeps its untuned labels there and its re-draw after tuning in labels_after.csv)")
    ap.add_argument("--mirrors", type=Path, default=Path("/work/.mirror"),
                    help="folder of local git mirrors <owner>+<name>/repo to export pinned commits from")
    sub = ap.add_subparsers(dest="cmd", required=True)
    sub.add_parser("fetch")
    s = sub.add_parser("sample")
    s.add_argument("--per-tree", type=int, help="findings drawn per tree (default: the split's per_tree)")
    s.add_argument("--tool-commit", help="the auditor commit that made --findings (default: git HEAD)")
    s.add_argument("--findings", type=Path, help="read <name>-<version>.json audit documents from this folder "
                   "(made by `audit TREE --format json --no-cache`) instead of auditing")
    sc = sub.add_parser("score")
    sc.add_argument("--json", action="store_true")
    cb = sub.add_parser("combine", help="merge labellers' copies of the labels file, cell by cell")
    cb.add_argument("copies", nargs="+", type=Path, help="labels files made from the same sample")
    sub.add_parser("check")
    rs = sub.add_parser("rescore", help="score the labelled rows against this checkout's tool (after tuning)")
    rs.add_argument("--findings", type=Path, help="folder of saved `audit --format json` documents <tree>.json")
    rs.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    try:
        use_split(args.split)
        if args.labels is not None:
            global LABELS_FILE
            LABELS_FILE = args.labels.resolve()
        return {"fetch": cmd_fetch, "sample": cmd_sample, "score": cmd_score, "combine": cmd_combine,
                "check": cmd_check, "rescore": cmd_rescore}[args.cmd](args)
    except BenchError as e:
        print(f"precision bench: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    try:
        sys.exit(main())
    except BrokenPipeError:          # `score | head`: the reader left; nothing more to say
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(1)
