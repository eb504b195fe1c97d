#!/usr/bin/env python3
"""Blind draw and label checks for the project-file recall bench (bench/project_files.py). Nothing here
imports or runs the auditor's rules or readers: the draw must not depend on what the tool discovers, and the
labels must be made without seeing its output.

    python bench/project_labels.py select --split test3|<a split whose sources.json has a `draw`>
                    draw the split's files by the rule below; writes <split>/selection.json
    python bench/project_labels.py show --split test3 REPO PATH
                    print the file with line numbers as the bench counts them (a notebook: its code cells)
    python bench/project_labels.py check [--split S]
                    every selected file has a label file whose sha256, line numbers, line texts and
                    categories agree with the file; exits 1 and lists the problems otherwise

Selection rule of `test3` (written and committed before the draw; bench/project_files/test3/SELECTION.md):
the repositories of test3/sources.json, each a tree of the files tracked at its pinned commit under
bench/_projects/<name>/; walk it in sorted order, skipping folders named in auditor.discover.DEFAULT_EXCLUDE;
a file's kind is the first of KINDS whose glob matches its lower-cased name; keep the files of at most
MAX_LINES lines (a notebook: lines of its code cells) whose text contains, case-insensitive, one of WORDS;
per repository, shuffle each kind's sorted paths with one random.Random(SEED) in sorted kind order, then take
files round-robin over the kinds in sorted order until PER_REPO are chosen. No file is swapped afterwards.
`test4` and later splits (<split>/SELECTION.md) are drawn by the same rule, each with its own seed and size: the
`draw` in its sources.json (DRAWS); adding a split is adding its folder, nothing here changes.
"""
from __future__ import annotations

import argparse
import fnmatch
import hashlib
import json
import os
import sys
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import yaml

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))
from project_files import LINE_CAP, PAIR_CAP, SPLITS, capped, pair_capped, round_robin, split_draw  # noqa: E402  (the draw and cap of every split; no auditor import)

HERE = BENCH / "project_files"
TREES = BENCH / "_projects"
CATEGORIES = ("device", "distributed", "precision", "apex", "attention", "kernel", "third_party", "operator",
              "fusion", "performance", "none")

# test3's draw: the kinds a port touches (issue 15), named here and not by the tool's own discovery.
KINDS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("requirements", ("requirements*.txt", "*requirements.txt", "requirements*.in", "constraints*.txt")),
    ("package", ("pyproject.toml", "setup.py")),
    ("conda", ("environment*.yml", "environment*.yaml", "conda*.yml", "conda*.yaml")),
    ("dockerfile", ("dockerfile", "dockerfile.*", "*.dockerfile", "containerfile")),
    ("shell", ("*.sh", "*.bash", "*.slurm", "*.sbatch")),
    ("notebook", ("*.ipynb",)),
    ("cuda", ("*.cu", "*.cuh")),
    ("config", ("*.yaml", "*.yml", "*.json")),
)
WORDS = ("cuda", "nvidia", "nccl", "gpu", "flash", "apex", "triton", "bf16", "xformers", "cu11", "cu12", "nvcc",
         "cudnn", "cutlass", "nvml", "bitsandbytes")
SEED = 1503
PER_REPO = 6
MAX_LINES = 300
# Splits drawn by this rule with their own seed and files per repository: the `draw` in the split's sources.json
# (each fixed in its SELECTION.md); a source in sources.json may set its own "per_repo" (test4's extension draws 3
# more from its first repositories).
DRAWS = {s: {"seed": split_draw(s)["seed"], "per_repo": split_draw(s)["per_repo"]} for s in SPLITS
         if "seed" in split_draw(s)}
# Kinds a split adds after KINDS (so no earlier split's draw changes), its draw's `extra_kinds`: tuned_t15f samples
# C/C++/CUDA build systems, which test3 to test8 never drew (tuned_t15f/SELECTION.md, fixed before its draw).
EXTRA_KINDS: dict[str, tuple[tuple[str, tuple[str, ...]], ...]] = {
    s: tuple((kind, tuple(globs)) for kind, globs in split_draw(s)["extra_kinds"]) for s in SPLITS
    if "extra_kinds" in split_draw(s)}


def _kind(name: str, split: str = "") -> str | None:
    low = name.lower()
    for kind, globs in KINDS + EXTRA_KINDS.get(split, ()):
        if any(fnmatch.fnmatchcase(low, g) for g in globs):
            return kind
    return None


def code_lines(text: str) -> list[str]:
    """A notebook's lines as the bench counts them: every code cell's lines, in order (an empty cell is one line)."""
    import nbformat

    nb = nbformat.reads(text, as_version=4)
    lines: list[str] = []
    for cell in nb.cells:
        if cell.cell_type == "code":
            lines.extend(cell.source.splitlines() or [""])
    return lines


def file_lines(path: Path) -> list[str]:
    text = path.read_text(encoding="utf-8", errors="replace")
    return code_lines(text) if path.suffix.lower() == ".ipynb" else text.splitlines()


def _sources(split: str) -> list[dict]:
    return json.loads((HERE / split / "sources.json").read_text())["sources"]


def tree(split: str, repo: str) -> Path:
    """bench/_projects/<name>, or <owner>+<name> where the trees were fetched under that name."""
    for src in _sources(split):
        if src["name"] == repo and not (TREES / repo).is_dir():
            return TREES / src["url"].rstrip("/").split("github.com/")[-1].replace("/", "+")
    return TREES / repo


def select(split: str) -> int:
    from auditor.discover import DEFAULT_EXCLUDE  # a list of folder names only

    seed, per_repo = DRAWS.get(split, {}).get("seed", SEED), DRAWS.get(split, {}).get("per_repo", PER_REPO)
    chosen = []
    for src in _sources(split):
        tree = TREES / src["name"]
        if not tree.is_dir():
            print(f"{tree} is missing: fetch the split first", file=sys.stderr)
            return 2
        by_kind: dict[str, list[str]] = defaultdict(list)
        for folder, dirs, names in os.walk(tree):
            dirs[:] = sorted(d for d in dirs if d not in DEFAULT_EXCLUDE)
            for name in sorted(names):
                kind = _kind(name, split)
                path = Path(folder) / name
                if kind is None or path.is_symlink() or not path.is_file():
                    continue
                text = path.read_text(encoding="utf-8", errors="replace")
                try:
                    size = len(file_lines(path))
                except Exception as exc:  # noqa: BLE001 - an unreadable notebook is not drawn
                    print(f"not drawn, unreadable: {path.relative_to(tree)}: {exc}", file=sys.stderr)
                    continue
                if size > MAX_LINES or not any(w in text.lower() for w in WORDS):
                    continue
                by_kind[kind].append(path.relative_to(tree).as_posix())
        chosen += [{"repo": src["name"], "path": p, "kind": kind} for kind, p in round_robin(by_kind, seed, src.get("per_repo", per_repo))]
    out = HERE / split / "selection.json"
    out.write_text(json.dumps({"seed": seed, "per_repo": per_repo, "max_lines": MAX_LINES, "files": chosen},
                              indent=1) + "\n")
    print(f"selected {len(chosen)} files into {out}")
    return 0


class LabelError(ValueError):
    """A label file that cannot be read as project-file labels."""


@dataclass(frozen=True)
class ProjectLine:
    line: int
    categories: tuple[str, ...]   # empty tuple = `none` (not a finding)
    note: str
    text: str                     # the line's text, or `text_start` for a very long line


@dataclass
class ProjectLabels:
    """One project file's labels (`<split>/labels/<repo>__<path with __>.yaml`)."""
    labels_path: Path
    repo: str
    path: str
    sha256: str
    lines: dict[int, ProjectLine] = field(default_factory=dict)

    @property
    def identity(self) -> tuple[str, str]:
        return (self.repo, self.path)


def item_categories(item: dict) -> list:
    """A label entry's categories as a list (`category: device` or `category: [device, precision]`)."""
    cats = item.get("category")
    return cats if isinstance(cats, list) else [cats]


def parse_label_file(path: Path) -> ProjectLabels:
    """Read one label file strictly (agreement.py --project): LabelError on anything malformed."""
    try:
        doc = yaml.safe_load(path.read_text())
    except (OSError, yaml.YAMLError) as e:
        raise LabelError(f"{path}: cannot read labels: {e}") from e
    if not isinstance(doc, dict) or any(k not in doc for k in ("repo", "path")):
        raise LabelError(f"{path}: expected a mapping with repo, path, sha256, lines")
    labels = ProjectLabels(path, str(doc["repo"]), str(doc["path"]), str(doc.get("sha256") or ""))
    for i, item in enumerate(doc.get("lines") or []):
        where = f"{path}: lines[{i}]"
        if not isinstance(item, dict) or not isinstance(item.get("line"), int):
            raise LabelError(f"{where}: each entry needs an integer line")
        cats = item_categories(item)
        if not cats or any(c not in CATEGORIES for c in cats) or ("none" in cats and len(cats) > 1):
            raise LabelError(f"{where}: bad category {cats} (one or more of {', '.join(CATEGORIES[:-1])}, or none)")
        n = item["line"]
        if n in labels.lines:
            raise LabelError(f"{where}: line {n} labelled twice")
        text = str(item["text"]) if "text" in item else str(item.get("text_start", "")) + "..."
        labels.lines[n] = ProjectLine(n, tuple(c for c in cats if c != "none"), str(item.get("note") or ""),
                                      text.strip())
    return labels


def label_file(split: str, repo: str, path: str) -> Path:
    return HERE / split / "labels" / (repo + "__" + path.replace("/", "__") + ".yaml")


def check(split: str) -> int:
    problems: list[str] = []
    files = json.loads((HERE / split / "selection.json").read_text())["files"]
    counted = scored = 0
    cap = LINE_CAP.get(split)
    pairs_used: Counter = Counter()
    for entry in files:
        repo, rel = entry["repo"], entry["path"]
        lf = label_file(split, repo, rel)
        where = f"{repo}/{rel}"
        if not lf.exists():
            problems.append(f"{where}: no label file {lf.name}")
            continue
        labels = yaml.safe_load(lf.read_text()) or {}
        path = tree(split, repo) / rel
        if not path.is_file():
            problems.append(f"{where}: the tree is missing (fetch the split)")
            continue
        if labels.get("repo") != repo or labels.get("path") != rel:
            problems.append(f"{where}: repo/path in {lf.name} differ")
        if labels.get("sha256") != hashlib.sha256(path.read_bytes()).hexdigest():
            problems.append(f"{where}: sha256 differs from the file")
        lines = file_lines(path)
        seen: set[int] = set()
        for item in labels.get("lines") or []:
            ln = item.get("line")
            cats = item_categories(item)
            if not isinstance(ln, int) or not 1 <= ln <= len(lines):
                problems.append(f"{where}: line {ln} out of range 1..{len(lines)}")
                continue
            if ln in seen:
                problems.append(f"{where}:{ln}: labelled twice")
            seen.add(ln)
            if not cats or any(c not in CATEGORIES for c in cats) or ("none" in cats and len(cats) > 1):
                problems.append(f"{where}:{ln}: bad category {cats}")
            line_text = lines[ln - 1].strip()
            if "text_sha256" in item:   # a very long line (one-line data files): its start and its hash
                if (hashlib.sha256(line_text.encode()).hexdigest() != item["text_sha256"]
                        or not line_text.startswith(str(item.get("text_start", "")))):
                    problems.append(f"{where}:{ln}: text_sha256 / text_start do not match the line")
            elif str(item.get("text", "")).strip() != line_text:
                problems.append(f"{where}:{ln}: text {item.get('text')!r} is not the line {line_text!r}")
            if not item.get("note"):
                problems.append(f"{where}:{ln}: no note")
            counted += 1
        valid = [i for i in labels.get("lines") or [] if isinstance(i.get("line"), int)]
        scored += len(pair_capped(capped(valid, cap), pairs_used, repo, PAIR_CAP.get(split)))
    for lf in sorted((HERE / split / "labels").glob("*.yaml")) if (HERE / split / "labels").is_dir() else []:
        if not any(label_file(split, e["repo"], e["path"]) == lf for e in files):
            problems.append(f"{lf.name}: not in the selection")
    for p in problems:
        print(p)
    print(f"split {split}: {len(files)} files, {counted} labelled lines, {len(problems)} problems"
          + (f"; scored with the cap of {cap} per file: {scored} lines (`none` included)" if cap else ""))
    return 1 if problems else 0


def show(split: str, repo: str, rel: str) -> int:
    for i, line in enumerate(file_lines(tree(split, repo) / rel), 1):
        print(f"{i:4} {line}")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("command", choices=("select", "show", "check"))
    parser.add_argument("args", nargs="*")
    parser.add_argument("--split", choices=SPLITS, default="test3")
    args = parser.parse_args()
    if args.command == "select":
        if args.split not in ("test3", *DRAWS):
            print(f"only test3 and {', '.join(DRAWS)} are drawn by this rule; the others by `bench/project_files.py select`",
                  file=sys.stderr)
            return 2
        sys.path.insert(0, str(BENCH.parent))
        return select(args.split)
    if args.command == "show":
        return show(args.split, *args.args)
    return check(args.split)


if __name__ == "__main__":
    sys.exit(main())
