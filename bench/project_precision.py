#!/usr/bin/env python3
"""Precision bench for project-file findings: are the findings the auditor makes on requirements / pyproject /
conda files, shell scripts, Dockerfiles, YAML/JSON configs, notebooks and .cu/.cuh files right in their
context? A fixed-seed random sample of findings on 15 real repositories, each judged by reading its file.

    python bench/project_precision.py sample   audit every project file of the 15 trees (bench/_projects/<name>,
                                               pinned in bench/project_files/{dev,test,test2}/sources.json; get them
                                               with `python bench/project_files.py fetch --split S`) and write
                                               the sample to bench/project_files/precision/sample.json
    python bench/project_precision.py run [--json]
                                               precision overall and per rule code from
                                               bench/project_files/precision/labels.json, and the wrong findings
    python bench/project_precision.py rescore [--json]
                                               the same sample judged against what the auditor says now (needs
                                               the trees): a sampled finding no longer made drops out (a false
                                               positive removed, or a right finding lost, listed); one still made
                                               keeps its label, except that a `severity` label counts as right
                                               once the severity is the label's `right_severity`. This is
                                               precision after tuning ON the sample, not a held-out figure.

Population: in each tree, the files `auditor.discover.discover` yields under the default excludes whose name
`auditor.project.project_kind` recognises, plus `*.cu` / `*.cuh` files (no `.py` files); each audited alone
with a StaticEngine built from the shipped rules (`engine.analyze_bytes(data, path)`, path relative to the
tree); every finding made is in the population.

Sampling rule (fixed before the draw, not changed after it): findings are sorted by (repo, path, line, col,
code, symbol); rng = random.Random(SEED) with SEED = 1115.
  1. coverage: for every rule code with at least MIN_CODE = 3 findings, in sorted code order, shuffle that
     code's findings with rng and take the first one whose repository has fewer than PER_REPO = 20 findings in
     the sample (none if every repository of that code is full);
  2. fill: shuffle all findings not yet taken with rng and take them in that order, skipping any whose
     repository already has PER_REPO findings, until SIZE = 150 findings are taken.
The sample is written in the order drawn. Labels (labels.json, same order): verdict right|wrong, problem
none|false-positive|severity|category, reason. A finding is right when it names a real change or check needed
when this code moves to Ascend, in the right category, with the severity the policy gives (error = fails on
Ascend as written or silently does the wrong thing; warning = runs but differently or slower; info = worth
knowing).
"""
from __future__ import annotations

import argparse
import json
import random
import sys
from collections import Counter, defaultdict
from pathlib import Path

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))
from recall import wilson  # noqa: E402  (the benches' one Wilson interval)

TREES = BENCH / "_projects"
OUT = BENCH / "project_files" / "precision"
SPLITS = ("dev", "test", "test2")
SEED = 1115
SIZE = 150
PER_REPO = 20
MIN_CODE = 3


def _repos() -> list[str]:
    names = []
    for split in SPLITS:
        names += [s["name"] for s in json.loads((BENCH / "project_files" / split / "sources.json").read_text())["sources"]]
    return names


def collect() -> list[dict]:
    sys.path.insert(0, str(BENCH.parent))
    sys.path.insert(0, str(BENCH))
    from project_files import tree_dir

    from auditor.discover import discover
    from auditor.project import project_kind
    from auditor.rules import load_rules
    from auditor.static import StaticEngine

    engine = StaticEngine(load_rules())
    rows = []
    for repo in _repos():
        tree = tree_dir(repo)
        for path, _rel in discover([tree]).files:
            if project_kind(path.name) is None and path.suffix.lower() not in (".cu", ".cuh"):
                continue
            rel = path.relative_to(tree).as_posix()
            result = engine.analyze_bytes(path.read_bytes(), rel)
            for f in result.findings:
                row = {"repo": repo, "path": rel, "line": f.line, "col": f.col, "code": f.code, "symbol": f.symbol,
                       "category": f.category, "severity": f.severity, "message": f.message}
                if "cell" in f.data:
                    row["cell"], row["cell_line"] = f.data["cell"], f.data.get("cell_line")
                rows.append(row)
    rows.sort(key=lambda r: (r["repo"], r["path"], r["line"], r["col"], r["code"], r["symbol"]))
    return rows


def draw(rows: list[dict]) -> list[dict]:
    rng = random.Random(SEED)
    per_repo: Counter = Counter()
    taken: set[int] = set()
    sample: list[dict] = []

    def take(i: int) -> None:
        taken.add(i)
        per_repo[rows[i]["repo"]] += 1
        sample.append(rows[i])

    by_code: dict[str, list[int]] = defaultdict(list)
    for i, r in enumerate(rows):
        by_code[r["code"]].append(i)
    for code in sorted(by_code):
        if len(by_code[code]) < MIN_CODE:
            continue
        idx = list(by_code[code])
        rng.shuffle(idx)
        for i in idx:
            if per_repo[rows[i]["repo"]] < PER_REPO:
                take(i)
                break
    rest = [i for i in range(len(rows)) if i not in taken]
    rng.shuffle(rest)
    for i in rest:
        if len(sample) >= SIZE:
            break
        if per_repo[rows[i]["repo"]] < PER_REPO:
            take(i)
    return sample


def sample_cmd() -> int:
    rows = collect()
    sample = draw(rows)
    codes = Counter(r["code"] for r in rows)
    OUT.mkdir(parents=True, exist_ok=True)
    meta = {"seed": SEED, "size": SIZE, "per_repo": PER_REPO, "min_code": MIN_CODE, "population": len(rows),
            "population_by_repo": dict(sorted(Counter(r["repo"] for r in rows).items())),
            "population_by_code": dict(sorted(codes.items())), "sample": sample}
    (OUT / "sample.json").write_text(json.dumps(meta, indent=1) + "\n")
    print(f"{len(rows)} findings in {len(set((r['repo'], r['path']) for r in rows))} files; "
          f"{len(sample)} sampled into {OUT / 'sample.json'}")
    return 0


def run(as_json: bool) -> int:
    meta = json.loads((OUT / "sample.json").read_text())
    sample = meta["sample"]
    labels = json.loads((OUT / "labels.json").read_text())
    if len(labels) != len(sample):
        print(f"labels.json has {len(labels)} entries, sample.json {len(sample)}", file=sys.stderr)
        return 2
    per_code: dict[str, Counter] = defaultdict(Counter)
    problems: Counter = Counter()
    wrong = []
    for s, lab in zip(sample, labels):
        if (lab.get("code"), lab.get("path"), lab.get("line")) != (s["code"], s["path"], s["line"]):
            print(f"label out of order at {s['repo']}/{s['path']}:{s['line']} {s['code']}", file=sys.stderr)
            return 2
        c = per_code[s["code"]]
        c["n"] += 1
        if lab["verdict"] == "right":
            c["right"] += 1
        else:
            problems[lab["problem"]] += 1
            wrong.append({**{k: s[k] for k in ("repo", "path", "line", "code", "severity", "symbol")},
                          "problem": lab["problem"], "reason": lab["reason"]})
    n = sum(c["n"] for c in per_code.values())
    right = sum(c["right"] for c in per_code.values())
    # The per-repository cap makes the sample unlike the population (Megatron-LM has half of all findings):
    # weighting each repository's sampled precision by its share of the population estimates the precision
    # over all findings (approximate: the coverage stage also bends the draw within a repository).
    by_repo: dict[str, Counter] = defaultdict(Counter)
    for s, lab in zip(sample, labels):
        by_repo[s["repo"]]["n"] += 1
        by_repo[s["repo"]]["right"] += lab["verdict"] == "right"
    pop = meta["population_by_repo"]
    weighted = sum(pop[r] * c["right"] / c["n"] for r, c in by_repo.items()) / sum(pop[r] for r in by_repo)
    lo, hi = wilson(right, n)
    report = {"sampled": n, "right": right, "precision": right / n if n else None, "wilson95": [lo, hi],
              "precision_weighted_by_repo_population": weighted,
              "by_repo": {k: {"n": v["n"], "right": v["right"], "population": pop[k]} for k, v in sorted(by_repo.items())},
              "wrong_by_problem": dict(problems),
              "by_code": {k: {"n": v["n"], "right": v["right"]} for k, v in sorted(per_code.items())}, "wrong": wrong}
    if as_json:
        print(json.dumps(report, indent=1))
        return 0
    print(f"precision {right}/{n} = {report['precision']:.1%} (95 % Wilson {lo:.1%}-{hi:.1%}); weighted by each "
          f"repository's share of the {sum(pop.values())} findings: {weighted:.1%}; wrong: "
          + ", ".join(f"{k} {v}" for k, v in sorted(problems.items())))
    print("by repository (right/sampled, population):")
    for r, c in sorted(by_repo.items()):
        print(f"  {r:<18} {c['right']:>3}/{c['n']:<3} {pop[r]:>5}")
    print("by rule code:")
    for code, c in sorted(per_code.items()):
        print(f"  {code}  {c['right']:>3}/{c['n']:<3} {c['right'] / c['n']:.0%}")
    for w in wrong:
        print(f"  wrong [{w['problem']}] {w['repo']}/{w['path']}:{w['line']} {w['code']} {w['severity']} "
              f"{w['symbol']!r}: {w['reason']}")
    return 0


def rescore(as_json: bool) -> int:
    sys.path.insert(0, str(BENCH.parent))
    sys.path.insert(0, str(BENCH))
    from project_files import tree_dir

    from auditor.rules import load_rules
    from auditor.static import StaticEngine

    engine = StaticEngine(load_rules())
    sample = json.loads((OUT / "sample.json").read_text())["sample"]
    labels = json.loads((OUT / "labels.json").read_text())
    now: dict[tuple[str, str], list] = {}
    counts: Counter = Counter()
    changes = []
    for s, lab in zip(sample, labels):
        key = (s["repo"], s["path"])
        if key not in now:
            now[key] = engine.analyze_bytes((tree_dir(s["repo"]) / s["path"]).read_bytes(), s["path"]).findings
        same = [f for f in now[key] if (f.line, f.code, f.symbol) == (s["line"], s["code"], s["symbol"])]
        if not same:
            outcome = "removed-wrong" if lab["verdict"] == "wrong" else "lost-right"
        elif lab["verdict"] == "right":
            outcome = "right" if same[0].severity == s["severity"] else "right-severity-changed"
        elif lab["problem"] == "severity":
            outcome = "right" if same[0].severity == lab.get("right_severity") else "wrong"
        else:
            outcome = "wrong"
        counts[outcome] += 1
        if outcome != ("right" if lab["verdict"] == "right" else "wrong"):
            changes.append({**{k: s[k] for k in ("repo", "path", "line", "code", "symbol")}, "was": s["severity"],
                            "now": same[0].severity if same else None, "outcome": outcome})
    made = counts["right"] + counts["wrong"] + counts["right-severity-changed"]
    right = counts["right"]
    lo, hi = wilson(right, made)
    report = {"sampled": len(sample), "still_made": made, "right": right,
              "precision_after_tuning_on_the_sample": right / made if made else None, "wilson95": [lo, hi],
              "outcomes": dict(counts), "changed": changes}
    if as_json:
        print(json.dumps(report, indent=1))
        return 0
    print(f"after tuning on the sample: {right}/{made} = {right / made:.1%} (95 % Wilson {lo:.1%}-{hi:.1%}) of the "
          f"{made} sampled findings still made; outcomes: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    if counts["right-severity-changed"]:
        both = right + counts["right-severity-changed"]
        print(f"  {both}/{made} = {both / made:.1%} if the {counts['right-severity-changed']} findings labelled right whose "
              "severity changed since the draw are right at their new severity (read them below)")
    for c in changes:
        print(f"  {c['outcome']:<24} {c['repo']}/{c['path']}:{c['line']} {c['code']} {c['symbol']!r} "
              f"{c['was']} -> {c['now']}")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("command", choices=("sample", "run", "rescore"))
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if args.command == "rescore":
        return rescore(args.json)
    return sample_cmd() if args.command == "sample" else run(args.json)


if __name__ == "__main__":
    sys.exit(main())
