"""Label agreement between two independent labellers of the same recall-bench files.

A split may hold a second labeller's copy of some of its files: `bench/corpus_<split>/agreement/labels/<name>.yaml`,
the same format as `bench/corpus_<split>/labels/<name>.yaml` (docs/recall.md "Labels"). For every such pair this
script counts the (line, category) pairs that are must-flag in either copy and reports

    agreement = pairs positive in both copies / pairs positive in either copy

per category and pooled (the positive-specific agreement, the Jaccard index of the two label sets), and lists each
pair positive in only one copy with what the other copy says of that line: `none` (labelled must-not-flag),
absent (not labelled), or another category (the same line labelled, a category choice). It also counts the lines
both copies label `none`, the lines that are `none` in one copy and must-flag in the other, and lists the lines `none` in one copy and
unlabelled in the other. It never runs the
auditor and reads only the labels.

With `--project` it compares the project-file bench's copies instead: `bench/project_files/<split>/agreement/labels/`
beside `bench/project_files/<split>/labels/` (docs/project-files.md), read by bench/project_labels.py's parser,
with the project categories (the same figures; a file is named by repository and path).

    python bench/agreement.py                   # every split with an agreement/ folder
    python bench/agreement.py --split test9     # one split
    python bench/agreement.py --split test9 --json
    python bench/agreement.py --project --split test11

Exit status 0 when the table is printed, 2 on usage errors (no agreement folder, a copy without its main file,
malformed labels, two copies naming different files).
"""
from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))
from recall import CATEGORIES, SPLITS, BenchError, LabelledFile, parse_labels  # noqa: E402
import project_labels  # noqa: E402  (the project-file bench's label parser and categories)
from project_files import split_folders as project_split_folders  # noqa: E402

PROJECT_CATEGORIES = tuple(c for c in project_labels.CATEGORIES if c != "none")

AGREEMENT_DIR = "agreement"


@dataclass(frozen=True)
class Disagreement:
    file: str            # labels file name
    line: int
    category: str
    positive_in: str     # "first" (the split's labels) or "second" (the agreement copy)
    other: str           # what the other copy says of the line: "none", "absent" or "category: a, b"
    text: str
    note_first: str
    note_second: str


def _split_folders(project: bool = False) -> dict[str, Path]:
    return project_split_folders() if project else SPLITS


def agreement_splits(project: bool = False) -> list[str]:
    return [s for s, d in _split_folders(project).items() if (d / AGREEMENT_DIR / "labels").is_dir()]


def _identity(lf: Any) -> tuple[str, ...]:
    """What a labels file labels: (package, version, path) for the static bench, (repo, path) for project files."""
    if isinstance(lf, project_labels.ProjectLabels):
        return lf.identity
    return (lf.package, lf.version, lf.path)


def _parse_project(path: Path) -> project_labels.ProjectLabels:
    try:
        return project_labels.parse_label_file(path)
    except project_labels.LabelError as e:
        raise BenchError(str(e)) from e


def _pairs(lf: Any) -> set[tuple[int, str]]:
    return {(n, c) for n, ll in lf.lines.items() for c in ll.categories}


def _describe(lf: Any, line: int) -> str:
    ll = lf.lines.get(line)
    if ll is None:
        return "absent"
    if not ll.categories:
        return "none"
    return "category: " + ", ".join(ll.categories)


def compare_files(first: LabelledFile | project_labels.ProjectLabels,
                  second: LabelledFile | project_labels.ProjectLabels) -> dict:
    """Compare one file's two label copies: (line, category) pairs in both / only one, and the none lines."""
    if _identity(first) != _identity(second):
        raise BenchError(f"{second.labels_path}: labels {' '.join(_identity(second))}, "
                         f"but {first.labels_path.name} labels {' '.join(_identity(first))}")
    a, b = _pairs(first), _pairs(second)
    name = first.labels_path.name
    diffs = []
    for (line, cat), pos, lf_pos, lf_other in ([(p, "first", first, second) for p in sorted(a - b)]
                                               + [(p, "second", second, first) for p in sorted(b - a)]):
        ll = lf_pos.lines[line]
        diffs.append(Disagreement(name, line, cat, pos, _describe(lf_other, line), ll.text,
                                  first.lines[line].note if line in first.lines else "",
                                  second.lines[line].note if line in second.lines else ""))
    none_a = {n for n, ll in first.lines.items() if not ll.categories}
    none_b = {n for n, ll in second.lines.items() if not ll.categories}
    pos_lines_a = {n for n, _ in a}
    pos_lines_b = {n for n, _ in b}
    none_one = [(name, n, "first" if n in none_a else "second",
                 (first.lines.get(n) or second.lines[n]).text) for n in sorted(none_a ^ none_b)
                if n not in pos_lines_a and n not in pos_lines_b]
    return {"both": a & b, "first_only": a - b, "second_only": b - a, "disagreements": diffs,
            "none_one_copy": none_one,
            "none_both": len(none_a & none_b), "none_either": len(none_a | none_b),
            "none_vs_positive": len((none_a & pos_lines_b) | (none_b & pos_lines_a))}


def compare_split(split: str, folder: Path | None = None, project: bool = False) -> dict:
    """Compare every file of `folder`/agreement/labels with `folder`/labels (folder: the split's, by default);
    `project`: project-file labels (bench/project_files/<split>), parsed by bench/project_labels.py."""
    folder = _split_folders(project)[split] if folder is None else folder
    parse: Callable[[Path], Any] = _parse_project if project else parse_labels
    categories = PROJECT_CATEGORIES if project else CATEGORIES
    second_files = sorted((folder / AGREEMENT_DIR / "labels").glob("*.yaml"))
    if not second_files:
        raise BenchError(f"no labels files in {folder / AGREEMENT_DIR / 'labels'}")
    per_cat: dict[str, dict[str, Any]] = {c: {"both": 0, "first_only": 0, "second_only": 0} for c in categories}
    diffs: list[Disagreement] = []
    none_one: list[tuple[str, int, str, str]] = []
    none_both = none_either = none_vs_positive = 0
    for p in second_files:
        main = folder / "labels" / p.name
        if not main.is_file():
            raise BenchError(f"{p}: no labels file of that name in {folder / 'labels'}")
        r = compare_files(parse(main), parse(p))
        for key in ("both", "first_only", "second_only"):
            for _, cat in r[key]:
                per_cat[cat][key] += 1
        diffs += r["disagreements"]
        none_one += r["none_one_copy"]
        none_both += r["none_both"]
        none_either += r["none_either"]
        none_vs_positive += r["none_vs_positive"]
    for row in per_cat.values():
        row["either"] = row["both"] + row["first_only"] + row["second_only"]
        row["agreement"] = row["both"] / row["either"] if row["either"] else None
    total: dict[str, Any] = {k: sum(row[k] for row in per_cat.values()) for k in ("both", "first_only", "second_only", "either")}
    total["agreement"] = total["both"] / total["either"] if total["either"] else None
    return {"split": split, "files": len(second_files), "categories": per_cat, "total": total,
            "none_both": none_both, "none_either": none_either, "none_vs_positive": none_vs_positive,
            "disagreements": diffs, "none_one_copy": none_one}


def _pct(v: float | None) -> str:
    return "-" if v is None else f"{100 * v:.1f}%"


def print_result(r: dict) -> None:
    print(f"{r['split']}: {r['files']} files labelled twice (first = labels/, second = {AGREEMENT_DIR}/labels/)")
    print(f"{'category':<12} {'both':>6} {'first only':>11} {'second only':>12} {'either':>7} {'agreement':>10}")
    for cat, row in [*r["categories"].items(), ("TOTAL", r["total"])]:
        print(f"{cat:<12} {row['both']:>6} {row['first_only']:>11} {row['second_only']:>12} {row['either']:>7} "
              f"{_pct(row['agreement']):>10}")
    print(f"none lines: {r['none_both']} in both copies of {r['none_either']} in either; "
          f"{r['none_vs_positive']} lines none in one copy and must-flag in the other")
    if r["disagreements"]:
        print("\npairs positive in one copy only (file:line category [positive in] other copy says)")
        for d in r["disagreements"]:
            print(f"  {d.file}:{d.line} {d.category} [{d.positive_in}] other: {d.other}  | {d.text}")
            if d.note_first:
                print(f"      first:  {d.note_first}")
            if d.note_second:
                print(f"      second: {d.note_second}")
    if r["none_one_copy"]:
        print("\nlines labelled none in one copy and not labelled in the other (file:line [none in])")
        for name, line, where, text in r["none_one_copy"]:
            print(f"  {name}:{line} [{where}]  | {text}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="bench/agreement.py", description=__doc__.split("\n\n")[0])
    ap.add_argument("--split", help="one split with an agreement/ folder (default: every such split)")
    ap.add_argument("--json", action="store_true", help="print the result as JSON")
    ap.add_argument("--project", action="store_true",
                    help="compare the project-file bench's copies (bench/project_files/<split>/agreement/labels)")
    args = ap.parse_args(argv)
    try:
        splits = agreement_splits(args.project)
        if args.split:
            if args.split not in _split_folders(args.project):
                raise BenchError(f"unknown split {args.split!r}")
            if args.split not in splits:
                raise BenchError(f"split {args.split} has no {AGREEMENT_DIR}/labels folder")
            splits = [args.split]
        if not splits:
            raise BenchError("no split has an agreement/labels folder")
        results = [compare_split(s, project=args.project) for s in splits]
    except BenchError as e:
        print(f"agreement.py: {e}", file=sys.stderr)
        return 2
    if args.json:
        out = [{**r, "disagreements": [d.__dict__ for d in r["disagreements"]]} for r in results]
        print(json.dumps(out, indent=1))
    else:
        for i, r in enumerate(results):
            if i:
                print()
            print_result(r)
    return 0


if __name__ == "__main__":
    sys.exit(main())
