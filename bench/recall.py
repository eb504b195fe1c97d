#!/usr/bin/env python3
"""Recall bench for the rule catalogue: real code bases, hand-labelled lines, one score table.

    python bench/recall.py [--split dev|test|all] CMD
                                            dev = bench/corpus (the files the rules were written
                                            and tuned on), test = bench/corpus_test (a blind split,
                                            see its SELECTION.md); default all: each scored separately
    python bench/recall.py fetch            download the pinned releases (<split>/sources.json)
                                            into bench/_corpus/ and unpack them
    python bench/recall.py check            verify every labels file against the unpacked corpus
                                            (file sha256 and the text of each labelled line)
    python bench/recall.py run [--json]     audit the sampled files and score the findings against
                                            the labels: recall per category, false hits, unlabelled hits
    python bench/recall.py run --findings F score an existing `audit --format json` document instead
    python bench/recall.py run -- ARGS...   pass ARGS to audit (e.g. -- --product 910a --torch-npu v2.7)
    python bench/recall.py run --with-package  audit each sampled file with the Python files of its package
                                            (the cross-file pass sees the modules it imports); scores the same files
    python bench/recall.py run --one-tree   audit all code bases of a split as one tree (the former model; by
                                            default each code base is audited as its own project root)
    python bench/recall.py run --with-tree  audit each code base's whole unpacked source folder (every file, as a
                                            user audits a repository); scores the same sampled files
    python bench/recall.py run --record-first-run  also keep this run as the split's first run (a blind split's
                                            score by the tool that met it first: corpus_S/first_run.json, with the
                                            tool's commit; refused when the split already has one for this measure)
    python bench/recall.py first-runs       pool the recorded first runs of the blind splits: recall per split and
                                            per category (Wilson 95 %), and the must-not-flag lines flagged by kind
    python bench/recall.py fill LABELS...   write sha256 and line texts into labels files (labelling aid)

Scoring: a labelled line is found when any finding starts on it (finding.line); it is found in the
right category when one of those findings has the labelled category. Lines labelled `none` (comments,
docstrings, log/exception messages that mention CUDA/NCCL/...) must carry no finding: each finding on
one is a false hit. Flagged lines with no label are listed for a human to review (a label omission or a
false positive). Exit status: 0 after a score (whatever the numbers), 2 on usage or corpus errors.
"""
from __future__ import annotations

import argparse
import ast
import datetime
import io
import math
import os
import hashlib
import html
import json
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import tokenize
import urllib.parse
import urllib.request
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

import yaml

BENCH = Path(__file__).resolve().parent


def split_folders() -> dict[str, Path]:
    """Every split: `dev` is bench/corpus/ (the files the rules were written and tuned on); any other is a folder
    bench/corpus_<split>/ holding sources.json, whose SELECTION.md says how it was drawn and whether it is blind
    (test, fresh, fresh2, test3 ...) or a tuning sample labelled before its first run (tuned_*)."""
    found = {d.name[len("corpus_"):]: d for d in BENCH.glob("corpus_*") if (d / "sources.json").is_file()}
    first = [s for s in ("test", "fresh", "fresh2") if s in found]
    return {"dev": BENCH / "corpus", **{s: found[s] for s in first + sorted(set(found) - set(first))}}


SPLITS = split_folders()
CORPUS_DIR = BENCH / "_corpus"
ARCHIVES_DIR = CORPUS_DIR / "_archives"

# DESIGN.md §3: the categories a static audit of source lines can label. `operator`, `fusion` and
# `performance` come mostly from tracing and are not labelled here.
CATEGORIES = ("device", "distributed", "precision", "apex", "attention", "kernel", "third_party")
NOT_FLAGGED = "none"


class BenchError(Exception):
    """A usage or corpus problem: printed as one clear message, exit status 2."""


# --------------------------------------------------------------------------- corpus


def load_sources(split: str) -> list[dict]:
    sources_file = SPLITS[split] / "sources.json"
    try:
        return json.loads(sources_file.read_text())["sources"]
    except (OSError, ValueError, KeyError) as e:
        raise BenchError(f"cannot read {sources_file}: {e}") from e


def chosen_splits(args: argparse.Namespace) -> list[str]:
    return list(SPLITS) if args.split == "all" else [args.split]


def source_dir(name: str, version: str) -> Path:
    return CORPUS_DIR / f"{name}-{version}"


def shown(path: Path) -> Path:
    """A path as printed: relative to this checkout when inside it (a corpus folder elsewhere prints in full)."""
    return path.relative_to(BENCH.parent) if path.is_relative_to(BENCH.parent) else path


def sha256_of(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def unpack(archive: Path, dest: Path) -> None:
    tmp = dest.with_name(dest.name + ".partial")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    if archive.name.endswith(".whl") or archive.name.endswith(".zip"):
        with zipfile.ZipFile(archive) as zf:
            for member in zf.namelist():   # refuse paths that escape the target folder
                if member.startswith("/") or ".." in Path(member).parts:
                    raise BenchError(f"{archive.name}: unsafe member path {member!r}")
            zf.extractall(tmp)
    else:
        refused: list[str] = []

        def data_only(member: tarfile.TarInfo, path: str) -> tarfile.TarInfo | None:
            # a member the data filter refuses (a symlink leaving the tree, an absolute path) is left out, not
            # extracted, and named: one such link in a repository (rtp-llm's `internal_source`) must not stop the fetch
            try:
                return tarfile.data_filter(member, path)
            except tarfile.FilterError as exc:
                refused.append(f"{member.name} ({type(exc).__name__})")
                return None

        with tarfile.open(archive) as tf:
            tf.extractall(tmp, filter=data_only)
        if refused:
            print(f"note  {archive.name}: {len(refused)} member(s) left out (they would leave the folder): "
                  + ", ".join(refused[:3]) + (" ..." if len(refused) > 3 else ""))
    shutil.rmtree(dest, ignore_errors=True)
    tmp.rename(dest)


SIMPLE_INDEX = os.environ.get("PIP_INDEX_URL", "https://pypi.org/simple").rstrip("/")


def download_sdist(name: str, archive: Path) -> None:
    """Fetch the sdist file itself from the package index's simple page (PEP 503). `pip download` would run the
    sdist's metadata step, which for some of them needs build tools or CUDA (flash-attn, bagua's Rust, a version
    from git); only the archive is needed here and its sha256 is checked against the recipe."""
    page_url = f"{SIMPLE_INDEX}/{re.sub(r'[-_.]+', '-', name).lower()}/"
    request = urllib.request.Request(page_url, headers={"Accept": "text/html"})
    with urllib.request.urlopen(request, timeout=60) as resp:
        page = resp.read().decode("utf-8", "replace")
    links = [urllib.parse.urljoin(page_url, html.unescape(href)) for href in re.findall(r'href="([^"]+)"', page)]
    matching = [u for u in links if urllib.parse.unquote(urllib.parse.urlsplit(u).path).rsplit("/", 1)[-1] == archive.name]
    if not matching:
        raise BenchError(f"{page_url} lists no file named {archive.name}")
    part = archive.with_name(archive.name + ".part")
    with urllib.request.urlopen(matching[0], timeout=300) as resp, open(part, "wb") as out:
        shutil.copyfileobj(resp, out)
    part.rename(archive)


def download_wheel(name: str, version: str, archive: Path) -> None:
    """`pip download` one pinned wheel (no dependencies) into the archive's folder; BenchError when it fails or
    the file pip wrote is not the one the recipe names."""
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", "-d", str(archive.parent),
           f"{name}=={version}"]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0 or not archive.exists():
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-3:]
        raise BenchError(f"pip download {name}=={version} failed: {' | '.join(tail)}")


def git_archive(src: dict, archive: Path, mirrors: Path) -> None:
    """Export a pinned GitHub commit as a tar: from a local mirror when it has the commit, else a shallow fetch."""
    gitdir = mirrors / src["repo"].replace("/", "+") / "repo"
    has = gitdir.is_dir() and subprocess.run(["git", "--git-dir", str(gitdir), "cat-file", "-e",
                                              src["commit"] + "^{commit}"], capture_output=True).returncode == 0
    if not has:
        gitdir = archive.parent.parent / "_git" / src["repo"].replace("/", "+")   # beside the archives folder
        steps = [["git", "init", "-q", "--bare", str(gitdir)],
                 ["git", "--git-dir", str(gitdir), "fetch", "-q", "--depth", "1",
                  f"https://github.com/{src['repo']}", src["commit"]]]
        for cmd in steps:
            proc = subprocess.run(cmd, capture_output=True, text=True)
            if proc.returncode != 0:
                raise BenchError(f"{src['repo']}@{src['commit']}: {' '.join(cmd[:4])} failed: {proc.stderr.strip()[-200:]}")
    tmp = archive.with_name(archive.name + ".partial")
    absent = absent_blobs(gitdir, src["commit"])
    if absent:   # a stored snapshot lacks its largest files (data such as tokenizer.json): export the rest
        print(f"note  {src['repo']}@{src['commit'][:12]}: {len(absent)} file(s) absent from the mirror, left out: "
              f"{', '.join(absent[:3])}{' ...' if len(absent) > 3 else ''}")
    with tmp.open("wb") as fh:
        proc = subprocess.run(["git", "--git-dir", str(gitdir), "archive", "--format=tar", src["commit"], "--", ".",
                               *(f":(exclude,literal){p}" for p in absent)],
                              stdout=fh, stderr=subprocess.PIPE, text=False)
    if proc.returncode != 0:
        tmp.unlink(missing_ok=True)
        raise BenchError(f"git archive {src['repo']}@{src['commit']} failed: {proc.stderr.decode()[-200:]}")
    tmp.rename(archive)


def mark_checkout(dest: Path) -> None:
    """Make an unpacked tree its own repository root, like a checkout, so that .gitignore files above it (this
    repository ignores bench/_work/ and bench/_corpus/) do not hide it from an audit of the whole tree; and list its
    files in the index (intent-to-add entries: no blob is written), since every file of an exported commit is
    tracked in a checkout, where the audit reads .gitignore for untracked files only."""
    if not (dest / ".git").exists():
        subprocess.run(["git", "init", "-q", str(dest)], check=True)
    listed = subprocess.run(["git", "-C", str(dest), "ls-files", "--cached", "-z"], capture_output=True, check=True)
    if not listed.stdout:
        subprocess.run(["git", "-C", str(dest), "-c", "core.fsmonitor=false", "add", "-f", "-N", "."],
                       check=True, capture_output=True)


def absent_blobs(gitdir: Path, commit: str) -> list[str]:
    """Paths of the commit whose blobs the git directory does not hold (a partial mirror)."""
    ls = subprocess.run(["git", "--git-dir", str(gitdir), "ls-tree", "-r", "-z", commit],
                        capture_output=True, text=True)
    entries = [e.split("\t", 1) for e in ls.stdout.split("\0") if e]
    blobs = [(meta.split()[2], path) for meta, path in entries if meta.split()[1] == "blob"]
    check = subprocess.run(["git", "--git-dir", str(gitdir), "cat-file", "--batch-check"],
                           input="".join(f"{sha}\n" for sha, _ in blobs), capture_output=True, text=True)
    return [path for (_, path), out in zip(blobs, check.stdout.splitlines()) if out.endswith(" missing")]



def cmd_fetch(args: argparse.Namespace) -> int:
    ARCHIVES_DIR.mkdir(parents=True, exist_ok=True)
    for src in [s for split in chosen_splits(args) for s in load_sources(split)]:
        if "commit" in src:   # a pinned GitHub tree: the commit id is its checksum
            archive = ARCHIVES_DIR / f"{src['name']}-{src['commit']}.tar"
            if not archive.exists():
                print(f"fetch {src['repo']}@{src['commit'][:12]} (git)", flush=True)
                git_archive(src, archive, args.mirrors)
            dest = source_dir(src["name"], src["version"])
            if not dest.exists() or args.force:
                unpack(archive, dest)
            print(f"ok    {src['repo']}@{src['commit'][:12]} -> {shown(dest)}")
            continue
        name, version, archive_name = src["name"], src["version"], src["archive"]
        archive = ARCHIVES_DIR / archive_name
        if not archive.exists():
            print(f"fetch {name}=={version} ({src['kind']})", flush=True)
            if src["kind"] != "wheel":
                try:
                    download_sdist(name, archive)
                except OSError as exc:
                    raise BenchError(f"download of {archive_name} failed: {exc}") from exc
            else:
                download_wheel(name, version, archive)
        digest = sha256_of(archive)
        if digest != src["sha256"]:
            raise BenchError(f"{archive_name}: sha256 {digest} does not match the recipe "
                             f"({src['sha256']}); the registry served a different file")
        dest = source_dir(name, version)
        if not dest.exists() or args.force:
            unpack(archive, dest)
        print(f"ok    {name}=={version} -> {shown(dest)}")
    return 0


# --------------------------------------------------------------------------- labels


@dataclass
class LabelledLine:
    line: int
    categories: tuple[str, ...]   # empty tuple = `none` (must not be flagged)
    note: str
    text: str


@dataclass
class LabelledFile:
    labels_path: Path
    package: str
    version: str
    path: str                      # inside the unpacked archive
    sha256: str
    lines: dict[int, LabelledLine] = field(default_factory=dict)

    @property
    def corpus_file(self) -> Path:
        return source_dir(self.package, self.version) / self.path

    @property
    def key(self) -> str:          # where the file sits in the audited tree, and in reports
        return f"{self.package}/{self.path}"


def parse_labels(path: Path) -> LabelledFile:
    try:
        doc = yaml.safe_load(path.read_text())
    except (OSError, yaml.YAMLError) as e:
        raise BenchError(f"{path}: cannot read labels: {e}") from e
    if not isinstance(doc, dict):
        raise BenchError(f"{path}: expected a mapping with package, version, path, sha256, lines")
    missing = [k for k in ("package", "version", "path", "lines") if k not in doc]
    if missing:
        raise BenchError(f"{path}: missing keys {missing}")
    lf = LabelledFile(path, str(doc["package"]), str(doc["version"]), str(doc["path"]),
                      str(doc.get("sha256") or ""))
    for i, entry in enumerate(doc["lines"] or []):
        where = f"{path}: lines[{i}]"
        if not isinstance(entry, dict) or "line" not in entry or "category" not in entry:
            raise BenchError(f"{where}: each entry needs line and category")
        cats = entry["category"]
        cats = [cats] if isinstance(cats, str) else list(cats)
        for c in cats:
            if c not in CATEGORIES and c != NOT_FLAGGED:
                raise BenchError(f"{where}: unknown category {c!r} (use one of "
                                 f"{', '.join(CATEGORIES)} or {NOT_FLAGGED})")
        if NOT_FLAGGED in cats and len(cats) > 1:
            raise BenchError(f"{where}: {NOT_FLAGGED!r} cannot be combined with a category")
        n = int(entry["line"])
        if n in lf.lines:
            raise BenchError(f"{where}: line {n} labelled twice")
        lf.lines[n] = LabelledLine(n, tuple(c for c in cats if c != NOT_FLAGGED),
                                   str(entry.get("note") or ""), str(entry.get("text") or ""))
    return lf


def load_all_labels(split: str) -> list[LabelledFile]:
    labels_dir = SPLITS[split] / "labels"
    files = sorted(labels_dir.glob("*.yaml"))
    if not files:
        raise BenchError(f"no labels files in {labels_dir}")
    return [parse_labels(p) for p in files]


def check_against_corpus(lf: LabelledFile) -> list[str]:
    """Problems that make the labels of one file unusable: missing file, other bytes, moved lines."""
    f = lf.corpus_file
    if not f.exists():
        return [f"{lf.key}: not in the corpus ({f}); run `python bench/recall.py fetch`"]
    problems = []
    if lf.sha256 and sha256_of(f) != lf.sha256:
        problems.append(f"{lf.key}: sha256 differs from the labels ({lf.labels_path.name})")
    text = f.read_text(errors="replace").splitlines()
    for ll in lf.lines.values():
        if ll.line > len(text):
            problems.append(f"{lf.key}:{ll.line}: past the end of the file ({len(text)} lines)")
        elif text[ll.line - 1].strip() != ll.text:
            problems.append(f"{lf.key}:{ll.line}: text drifted: labels say {ll.text!r}, "
                            f"file has {text[ll.line - 1].strip()!r}")
    return problems


def cmd_check(args: argparse.Namespace) -> int:
    status = 0
    for split in chosen_splits(args):
        labels = load_all_labels(split)
        problems = [p for lf in labels for p in check_against_corpus(lf)]
        for p in problems:
            print(p)
        n_lines = sum(len(lf.lines) for lf in labels)
        packages = {lf.package for lf in labels}
        print(f"{split}: {len(labels)} files from {len(packages)} code bases, {n_lines} labelled "
              f"lines, {len(problems)} problems")
        status = 2 if problems else status
    return status


def cmd_fill(args: argparse.Namespace) -> int:
    """Write sha256 and each labelled line's stripped text from the corpus into labels files."""
    for p in args.labels:
        path = Path(p)
        lf = parse_labels(path)
        if not lf.corpus_file.exists():
            raise BenchError(f"{lf.key}: not in the corpus; run fetch first")
        text = lf.corpus_file.read_text(errors="replace").splitlines()
        doc = yaml.safe_load(path.read_text())
        doc["sha256"] = sha256_of(lf.corpus_file)
        doc["lines"] = doc.get("lines") or []     # a drawn file with nothing to label
        for entry in doc["lines"]:
            n = int(entry["line"])
            if n > len(text):
                raise BenchError(f"{path}: line {n} is past the end of {lf.key}")
            entry["text"] = text[n - 1].strip()
        doc["lines"] = sorted(doc["lines"], key=lambda e: int(e["line"]))
        dump_labels(path, doc)
        print(f"filled {path.name}: {len(doc['lines'])} lines")
    return 0


def dump_labels(path: Path, doc: dict) -> None:
    head = {k: doc[k] for k in ("package", "version", "archive", "path", "sha256") if k in doc}
    out = [yaml.safe_dump(head, sort_keys=False, width=1000).rstrip(), "lines:"]
    for e in doc["lines"]:
        item = {"line": int(e["line"]), "category": e["category"], "note": e.get("note", ""),
                "text": e.get("text", "")}
        flow = yaml.safe_dump(item, default_flow_style=True, sort_keys=False, width=10000).strip()
        out.append(f"  - {flow}")
    path.write_text("\n".join(out) + "\n")


# --------------------------------------------------------------------------- scoring


def findings_by_line(doc: dict, known_keys: set[str]) -> dict[tuple[str, int], list[dict]]:
    """Group findings by (sampled-file key, line).

    Paths are relative to the audited root (<package>/<path>); a path audited from elsewhere
    (absolute, or under a parent folder) is mapped to the sampled file it ends with.
    """
    if not isinstance(doc, dict) or not isinstance(doc.get("findings"), list):
        raise BenchError("the audit output is not a JSON object with a 'findings' list")
    out: dict[tuple[str, int], list[dict]] = {}
    for f in doc["findings"]:
        try:
            path = str(f["path"]).replace("\\", "/").removeprefix("./")
            line = int(f["line"])
        except (KeyError, TypeError, ValueError) as e:
            raise BenchError(f"a finding lacks path/line: {f!r}") from e
        if path not in known_keys:
            path = next((k for k in known_keys if path.endswith("/" + k)), path)
        out.setdefault((path, line), []).append(f)
    return out


def score(labels: list[LabelledFile], doc: dict) -> dict:
    """Compare findings with labels. Pure: no file access beyond what `labels` carries."""
    known_keys = {lf.key for lf in labels}
    by_line = findings_by_line(doc, known_keys)
    per_cat = {c: {"labelled": 0, "found": 0, "right_category": 0} for c in CATEGORIES}
    misses: dict[str, list[dict]] = {c: [] for c in CATEGORIES}
    wrong_category: list[dict] = []
    false_hits: list[dict] = []
    unlabelled: list[dict] = []
    must_not_flag = 0
    for lf in labels:
        for ll in lf.lines.values():
            hits = by_line.get((lf.key, ll.line), [])
            where = {"file": lf.key, "line": ll.line, "text": ll.text, "note": ll.note}
            if not ll.categories:
                must_not_flag += 1
                if hits:
                    false_hits.append({**where, "codes": sorted({h.get("code", "?") for h in hits})})
                continue
            hit_cats = {h.get("category") for h in hits}
            for c in ll.categories:
                row = per_cat[c]
                row["labelled"] += 1
                if hits:
                    row["found"] += 1
                    if c in hit_cats:
                        row["right_category"] += 1
                    else:
                        wrong_category.append({**where, "category": c,
                                               "found_as": sorted(x for x in hit_cats if x)})
                else:
                    misses[c].append(where)
    labelled_lines = {(lf.key, n) for lf in labels for n in lf.lines}
    for (path, line), hits in sorted(by_line.items()):
        if path in known_keys and (path, line) not in labelled_lines:
            unlabelled.append({"file": path, "line": line,
                               "codes": sorted({h.get("code", "?") for h in hits}),
                               "categories": sorted({h.get("category", "?") for h in hits})})
    total = {k: sum(r[k] for r in per_cat.values()) for k in ("labelled", "found", "right_category")}
    for row in [*per_cat.values(), total]:
        row["recall"] = pct(row["found"], row["labelled"])
        row["recall_right_category"] = pct(row["right_category"], row["labelled"])
    return {
        "files": len(labels),
        "code_bases": len({lf.package for lf in labels}),
        "per_category": per_cat,
        "total": total,
        "must_not_flag_lines": must_not_flag,
        "false_hits": false_hits,
        "false_hit_rate": pct(len(false_hits), must_not_flag),
        "misses": misses,
        "wrong_category": wrong_category,
        "unlabelled_flagged": unlabelled,
        "audit_errors": doc.get("errors") or [],
    }


def pct(num: int, den: int) -> float | None:
    return round(100.0 * num / den, 1) if den else None


def fmt_pct(v: float | None) -> str:
    return "  -  " if v is None else f"{v:5.1f}%"


def add_texts(result: dict, labels: list[LabelledFile]) -> None:
    """Give each unlabelled flagged line its source text, so a reviewer can judge it in place."""
    files = {lf.key: lf.corpus_file for lf in labels}
    cache: dict[str, list[str]] = {}
    for u in result["unlabelled_flagged"]:
        f = files[u["file"]]
        if u["file"] not in cache:
            cache[u["file"]] = f.read_text(errors="replace").splitlines() if f.exists() else []
        lines = cache[u["file"]]
        u["text"] = lines[u["line"] - 1].strip() if 0 < u["line"] <= len(lines) else ""


def print_table(r: dict, split: str = "") -> None:
    print(f"recall bench{' [' + split + ' split]' if split else ''}: {r['files']} files from "
          f"{r['code_bases']} code bases")
    print(f"{'category':<12} {'labelled':>8} {'found':>6} {'recall':>7} {'right cat':>9} {'recall':>7}")
    for c, row in [*r["per_category"].items(), ("TOTAL", r["total"])]:
        print(f"{c:<12} {row['labelled']:>8} {row['found']:>6} {fmt_pct(row['recall']):>7} "
              f"{row['right_category']:>9} {fmt_pct(row['recall_right_category']):>7}")
    print(f"must-not-flag lines: {r['must_not_flag_lines']}, false hits: {len(r['false_hits'])} "
          f"({fmt_pct(r['false_hit_rate']).strip()})")
    print(f"unlabelled flagged lines (review: label omission or false positive): "
          f"{len(r['unlabelled_flagged'])}")
    for c, items in r["misses"].items():
        if items:
            print(f"\nmissed [{c}] ({len(items)}):")
            for m in items:
                print(f"  {m['file']}:{m['line']}: {m['text']}    # {m['note']}")
    if r["wrong_category"]:
        print(f"\nfound in another category ({len(r['wrong_category'])}):")
        for m in r["wrong_category"]:
            print(f"  {m['file']}:{m['line']}: labelled {m['category']}, found as "
                  f"{','.join(m['found_as']) or '?'}: {m['text']}")
    if r["false_hits"]:
        print(f"\nfalse hits on must-not-flag lines ({len(r['false_hits'])}):")
        for m in r["false_hits"]:
            print(f"  {m['file']}:{m['line']}: {','.join(m['codes'])}: {m['text']}")
    if r["unlabelled_flagged"]:
        print(f"\nunlabelled flagged lines ({len(r['unlabelled_flagged'])}):")
        for m in r["unlabelled_flagged"]:
            print(f"  {m['file']}:{m['line']}: {','.join(m['codes'])} "
                  f"({','.join(m['categories'])}): {m.get('text', '')}")
    if r["audit_errors"]:
        print(f"\naudit reported {len(r['audit_errors'])} file errors:")
        for e in r["audit_errors"]:
            print(f"  {e}")


def package_root(lf: LabelledFile) -> Path:
    """The outermost folder above a labelled file that is still a Python package (holds __init__.py); the
    file's own folder when it is in none."""
    folder = lf.corpus_file.parent
    top = source_dir(lf.package, lf.version)
    while folder != top and (folder / "__init__.py").exists() and (folder.parent / "__init__.py").exists():
        folder = folder.parent
    return folder


def _copy_output_folder_markers(lf: LabelledFile, root: Path) -> None:
    """Copy the `__init__.py` of each `build` / `dist` folder above a sampled file when the real tree has one.

    Discovery skips a folder of that name unless it is a Python package (auditor/discover.py, `_OUTPUT_FOLDERS`):
    without its marker the copy would hide a file the user's audit of the real tree reads (tuned_t17c: carefree-learn's
    `cflearn/dist/ml/experiment.py`). Only these markers: any other `__init__.py` would change module naming."""
    from auditor.discover import _OUTPUT_FOLDERS

    top = source_dir(lf.package, lf.version)
    folder = lf.corpus_file.parent
    while folder != top and top in folder.parents:
        marker = folder / "__init__.py"
        if folder.name in _OUTPUT_FOLDERS and marker.is_file():
            dest = root / lf.package / marker.relative_to(top)
            if not dest.exists():
                shutil.copyfile(marker, dest)
        folder = folder.parent


def run_audit(labels: list[LabelledFile], audit_cmd: list[str], extra: list[str],
              with_package: bool = False, one_tree: bool = False, with_tree: bool = False) -> dict:
    """Audit the sampled files, each code base as its own project root (the default), and merge the findings.

    Each code base's sampled files are copied into a temporary folder (<package>/<path>) and audited as one
    project, the way a user audits one project at a time: a tree-wide decision (NPU418's note dropped where
    the tree imports torch_npu, the first-party names of the audited tree) sees only that code base.
    one_tree: the bench's former model, every code base copied into one tree and audited once (kept to
    compare figures). A temporary tree outside the repository keeps any [tool.*] config of this repository
    out of the measurement. with_package: the Python files of each sampled file's package come along (the
    cross-file pass reads the modules a sampled file imports); only the sampled files are scored.
    with_tree: a copy of each code base's whole unpacked source folder is audited (every file: setup.py, .cu
    sources, configs, the modules no sampled file is), as a user audits a repository; only the sampled files
    are scored. The per-file default stays the issue's figure; this one says what a repository audit finds.
    """
    with tempfile.TemporaryDirectory(prefix="npu-audit-recall-") as tmp:
        root = Path(tmp)
        if with_tree:
            # a copy: the corpus lies under this checkout's ignored bench/_corpus, whose .gitignore would hide the
            # whole tree from discovery; made a checkout whose index lists every exported file, the code base's
            # own .gitignore files apply as for its users who clone it (to untracked files only)
            for package, version in sorted({(lf.package, lf.version) for lf in labels}):
                shutil.copytree(source_dir(package, version), root / package, symlinks=True,
                                ignore=shutil.ignore_patterns(".git"))
                mark_checkout(root / package)
            return _merged({lf.package: root / lf.package for lf in labels}, audit_cmd, [*extra, "--no-cache"])
        if with_package:
            for pkg in sorted({(lf.package, lf.version, package_root(lf)) for lf in labels}):
                top = source_dir(pkg[0], pkg[1])
                for src in pkg[2].rglob("*.py"):
                    if src.is_file() and not src.is_symlink():
                        dest = root / pkg[0] / src.relative_to(top)
                        dest.parent.mkdir(parents=True, exist_ok=True)
                        shutil.copyfile(src, dest)
        for lf in labels:
            dest = root / lf.key
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(lf.corpus_file, dest)
            _copy_output_folder_markers(lf, root)
        if one_tree:
            return audit_folder(root, audit_cmd, extra)
        return _merged({lf.package: root / lf.package for lf in labels}, audit_cmd, extra)


def _merged(folders: dict[str, Path], audit_cmd: list[str], extra: list[str]) -> dict:
    """Audit each code base's folder as its own project root; findings and errors under `<package>/<path>`."""
    merged: dict = {"findings": [], "errors": []}
    for package, folder in sorted(folders.items()):
        doc = audit_folder(folder, audit_cmd, extra)
        for f in doc.get("findings") or []:
            if isinstance(f, dict) and "path" in f:
                f["path"] = f"{package}/{str(f['path']).replace(chr(92), '/').removeprefix('./')}"
            merged["findings"].append(f)
        for e in doc.get("errors") or []:
            if isinstance(e, dict) and "path" in e:
                e["path"] = f"{package}/{e['path']}"
            merged["errors"].append(e)
    return merged


def audit_folder(folder: Path, audit_cmd: list[str], extra: list[str]) -> dict:
    """Run audit once on `folder` (paths in its findings are relative to it); the JSON document it printed."""
    cmd = [*audit_cmd, str(folder), "--format", "json", "--fail-on", "never", *extra]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, cwd=folder)
    except OSError as e:
        raise BenchError(f"cannot run {audit_cmd[0]!r}: {e}") from e
    try:
        doc = json.loads(proc.stdout)
    except ValueError as e:
        err = (proc.stderr or proc.stdout).strip().splitlines()[-5:]
        raise BenchError(f"`{' '.join(cmd)}` exited {proc.returncode} without a JSON "
                         f"document: {' | '.join(err)}") from e
    if not isinstance(doc, dict):
        raise BenchError(f"`{' '.join(cmd)}` printed JSON that is not an object")
    return doc


def default_audit_cmd() -> list[str]:
    exe = Path(sys.executable).with_name("audit")
    if exe.exists():
        return [str(exe)]
    found = shutil.which("audit")
    return [found] if found else [sys.executable, "-m", "auditor.cli"]


def cmd_run(args: argparse.Namespace) -> int:
    results = {}
    for split in chosen_splits(args):
        labels = load_all_labels(split)
        problems = [p for lf in labels for p in check_against_corpus(lf)]
        if problems:
            raise BenchError(f"the {split} labels do not match the corpus:\n  "
                             + "\n  ".join(problems))
        if args.findings:
            try:
                doc = json.loads(Path(args.findings).read_text())
            except (OSError, ValueError) as e:
                raise BenchError(f"cannot read findings {args.findings}: {e}") from e
        else:
            audit_cmd = args.audit.split() if args.audit else default_audit_cmd()
            extra = [a for a in args.audit_args if a != "--"]
            doc = run_audit(labels, audit_cmd, extra, with_package=args.with_package,
                            one_tree=args.one_tree, with_tree=args.with_tree)
        results[split] = score(labels, doc)
        add_texts(results[split], labels)
        if args.record_first_run:
            record_first_run(split, results[split], labels, "with_tree" if args.with_tree else "default",
                             None if args.findings else audit_cmd)
    if args.json:
        json.dump(results, sys.stdout, indent=2)
        print()
        return 0
    for i, (split, result) in enumerate(results.items()):
        if i:
            print("\n" + "=" * 78 + "\n")
        print_table(result, split)
    if len(results) > 1:
        print_summary(results)
    return 0


FIRST_RUN = "first_run.json"
# the subprocess that finds the checkout an audit command imports `auditor` from (PYTHONPATH as the audit sees it)
_AUDITOR_ROOT = "import auditor, os; print(os.path.dirname(os.path.dirname(os.path.abspath(auditor.__file__))))"


def tool_checkout(audit_cmd: list[str] | None) -> dict:
    """The commit of the checkout whose `auditor` the audit imports, and whether its auditor / rules differ from it
    (a record made with uncommitted changes says so). The console script and `python -m auditor.cli` import the
    package the same way, so the bench's interpreter with the same environment finds the same checkout."""
    python = audit_cmd[0] if audit_cmd and audit_cmd[0].endswith(("python", "python3")) else sys.executable
    proc = subprocess.run([python, "-c", _AUDITOR_ROOT], capture_output=True, text=True)
    root = proc.stdout.strip()
    if proc.returncode != 0 or not root:
        raise BenchError(f"cannot tell which auditor the audit runs: {proc.stderr.strip()[-200:]}")
    head = subprocess.run(["git", "-C", root, "rev-parse", "HEAD"], capture_output=True, text=True)
    if head.returncode != 0:
        raise BenchError(f"the auditor at {root} is not a git checkout: a first run names the tool's commit")
    dirty = subprocess.run(["git", "-C", root, "status", "--porcelain", "--untracked-files=no", "--", "auditor",
                            "rules"], capture_output=True, text=True).stdout.strip()
    return {"commit": head.stdout.strip(), "changed": bool(dirty)}


_MESSAGE_CALLS = frozenset({"print", "warn", "debug", "info", "warning", "error", "exception", "critical", "log",
                            "fatal", "echo", "secho", "write"})


def line_kind(path: Path, line: int) -> str:
    """What a must-not-flag line is, read by Python's own tokenizer and parser: `comment` (only a comment),
    `docstring` (inside a bare string statement), `message` (inside a print / logging / warnings call or a raised
    exception's arguments), else `code`; `unknown` for a file Python cannot read (a notebook, a C source)."""
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return "unknown"
    try:
        kinds = {t.type for t in tokenize.generate_tokens(io.StringIO(text).readline)
                 if t.start[0] <= line <= t.end[0]
                 and t.type not in (tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT)}
        tree = ast.parse(text)
    except (SyntaxError, tokenize.TokenError, ValueError):
        return "unknown"
    if kinds == {tokenize.COMMENT}:
        return "comment"
    for node in ast.walk(tree):
        first, last = getattr(node, "lineno", 0), getattr(node, "end_lineno", 0) or 0
        if not first <= line <= last:
            continue
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            return "docstring"
        raised = isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call)
        if raised or isinstance(node, ast.Call):
            call = node.exc if raised else node
            func = call.func
            name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
            if (raised or name in _MESSAGE_CALLS) and any(
                    getattr(a, "lineno", 0) <= line <= (getattr(a, "end_lineno", 0) or 0)
                    for a in [*call.args, *(k.value for k in call.keywords)]):
                return "message"
    return "code"


def record_first_run(split: str, result: dict, labels: list[LabelledFile], measure: str,
                     audit_cmd: list[str] | None) -> Path:
    """Keep a run as the split's first run for `measure` (default / with_tree) in corpus_S/first_run.json: the
    counts per category, the flagged must-not-flag lines with their kind, and the tool's commit. A split keeps
    the first record of each measure; a later run is a re-score, not a first run."""
    if audit_cmd is None:
        raise BenchError("--record-first-run needs the bench to run the audit (not --findings): it records the tool")
    out = SPLITS[split] / FIRST_RUN
    try:
        held = json.loads(out.read_text()) if out.exists() else {}
    except (OSError, ValueError) as e:
        raise BenchError(f"cannot read {shown(out)}: {e}") from e
    if measure in held:
        raise BenchError(f"{shown(out)} already holds the {split} first run by {measure} "
                         f"(tool {held[measure]['tool']['commit'][:12]}); a later run is a re-score")
    files = {lf.key: lf.corpus_file for lf in labels}
    held[measure] = {
        "tool": tool_checkout(audit_cmd),
        "recorded": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "per_category": {c: {"labelled": r["labelled"], "found": r["found"]}
                         for c, r in result["per_category"].items() if r["labelled"]},
        "total": {"labelled": result["total"]["labelled"], "found": result["total"]["found"]},
        "must_not_flag_lines": result["must_not_flag_lines"],
        "flagged": [{"file": h["file"], "line": h["line"], "text": h["text"], "codes": h["codes"],
                     "kind": line_kind(files[h["file"]], h["line"])} for h in result["false_hits"]],
    }
    out.write_text(json.dumps(held, indent=2, sort_keys=True) + "\n")
    print(f"recorded {split}'s first run ({measure}) in {shown(out)}", file=sys.stderr)
    return out


def wilson(k: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """95 % Wilson score interval for k successes in n trials, as fractions ((0, 0) for no trial); the benches'
    one interval (project_precision.py uses it too)."""
    if not n:
        return (0.0, 0.0)
    p = k / n
    mid, half = p + z * z / (2 * n), z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return (mid - half) / (1 + z * z / n), (mid + half) / (1 + z * z / n)


def pool_first_runs(measure: str = "default") -> dict:
    """The recorded first runs of every split, pooled: per split, per category, and the flagged lines by kind."""
    splits: dict[str, dict] = {}
    for split, folder in SPLITS.items():
        path = folder / FIRST_RUN
        if not path.exists():
            continue
        try:
            record = json.loads(path.read_text()).get(measure)
        except (OSError, ValueError) as e:
            raise BenchError(f"cannot read {shown(path)}: {e}") from e
        if record:
            splits[split] = record
    per_cat = {c: {"labelled": 0, "found": 0} for c in CATEGORIES}
    kinds: dict[str, int] = {}
    for record in splits.values():
        for c, row in record["per_category"].items():
            per_cat[c]["labelled"] += row["labelled"]
            per_cat[c]["found"] += row["found"]
        for hit in record["flagged"]:
            kinds[hit["kind"]] = kinds.get(hit["kind"], 0) + 1
    total = {k: sum(r[k] for r in per_cat.values()) for k in ("labelled", "found")}
    return {"measure": measure, "splits": splits, "per_category": per_cat, "total": total,
            "must_not_flag_lines": sum(r["must_not_flag_lines"] for r in splits.values()), "flagged_by_kind": kinds}


def cmd_first_runs(args: argparse.Namespace) -> int:
    pooled = pool_first_runs("with_tree" if args.with_tree else "default")
    if not pooled["splits"]:
        raise BenchError(f"no split has a recorded first run ({FIRST_RUN}); record one with "
                         "`python bench/recall.py --split S run --record-first-run`")
    if args.json:
        json.dump(pooled, sys.stdout, indent=2)
        print()
        return 0

    def cell(row: dict) -> str:
        lo, hi = wilson(row["found"], row["labelled"])
        return (f"{row['found']:>5}/{row['labelled']:<5} {fmt_pct(pct(row['found'], row['labelled']))} "
                f"({100 * lo:.1f}-{100 * hi:.1f})")

    print(f"first runs ({pooled['measure']}): {len(pooled['splits'])} blind splits, each scored by the tool that met "
          "it first")
    for split, record in pooled["splits"].items():
        tool = record["tool"]["commit"][:8] + ("+changes" if record["tool"]["changed"] else "")
        print(f"  {split:<10} {cell(record['total'])}  tool {tool}  flagged {len(record['flagged'])}/"
              f"{record['must_not_flag_lines']}")
    print("pooled by category:")
    for c, row in pooled["per_category"].items():
        if row["labelled"]:
            print(f"  {c:<12} {cell(row)}")
    print(f"  {'TOTAL':<12} {cell(pooled['total'])}")
    kinds = ", ".join(f"{k} {n}" for k, n in sorted(pooled["flagged_by_kind"].items())) or "none"
    print(f"must-not-flag lines flagged: {sum(pooled['flagged_by_kind'].values())} of "
          f"{pooled['must_not_flag_lines']} ({kinds})")
    return 0


def print_summary(results: dict[str, dict]) -> None:
    """Recall per category, one column per split, side by side."""
    names = list(results)
    print("\n" + "=" * 78)
    print("summary: recall (any category) / recall in the right category")
    print(f"{'category':<12} " + " ".join(f"{n:>24}" for n in names))
    for c in [*CATEGORIES, "TOTAL"]:
        cells = []
        for n in names:
            row = results[n]["total"] if c == "TOTAL" else results[n]["per_category"][c]
            cells.append(f"{row['found']:>3}/{row['labelled']:<3} {fmt_pct(row['recall'])} "
                         f"{fmt_pct(row['recall_right_category'])}")
        print(f"{c:<12} " + " ".join(f"{x:>24}" for x in cells))
    cells = [f"{len(results[n]['false_hits'])}/{results[n]['must_not_flag_lines']} flagged "
             f"{fmt_pct(results[n]['false_hit_rate'])}" for n in names]
    print(f"{'none lines':<12} " + " ".join(f"{x:>24}" for x in cells))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="bench/recall.py", description=__doc__.split("\n\n")[0])
    ap.add_argument("--split", choices=[*SPLITS, "all"], default="all",
                    help="dev (bench/corpus), any other split S (bench/corpus_S/, its SELECTION.md says how it was "
                         "drawn) or all (default: every split, each scored separately)")
    sub = ap.add_subparsers(dest="cmd", required=True)
    f = sub.add_parser("fetch", help="download and unpack the pinned releases")
    f.add_argument("--force", action="store_true", help="unpack again even if present")
    f.add_argument("--mirrors", type=Path, default=Path("/work/.mirror"),
                   help="folder of local git mirrors <owner>+<name>/repo to export pinned commits of git sources from")
    sub.add_parser("check", help="verify labels against the corpus")
    r = sub.add_parser("run", help="audit the sampled files and print the recall table")
    r.add_argument("--json", action="store_true", help="print the result as JSON")
    r.add_argument("--findings", metavar="FILE",
                   help="score this `audit --format json` output instead of running audit "
                        "(paths must be <package>/<path inside the archive>)")
    r.add_argument("--audit", metavar="CMD", help="audit command (default: the venv's `audit`)")
    r.add_argument("--with-package", action="store_true",
                   help="audit each sampled file with the Python files of its package (the cross-file pass "
                        "sees the modules it imports); only the sampled files are scored")
    r.add_argument("--one-tree", action="store_true",
                   help="audit every code base of the split as one tree in one run (the bench's former model; "
                        "default: each code base audited as its own project root)")
    r.add_argument("--with-tree", action="store_true",
                   help="audit a copy of each code base's whole unpacked source folder (every file, as a user audits "
                        "a repository; no result cache); only the sampled files are scored")
    r.add_argument("--record-first-run", action="store_true",
                   help="keep this run as the split's first run (corpus_S/first_run.json, with the tool's commit); "
                        "refused when one is recorded for this measure")
    r.add_argument("audit_args", nargs=argparse.REMAINDER,
                   help="after `--`: extra arguments for audit, e.g. -- --product 910a")
    fr = sub.add_parser("first-runs", help="pool the blind splits' recorded first runs per category")
    fr.add_argument("--with-tree", action="store_true", help="the whole-tree measure's records")
    fr.add_argument("--json", action="store_true", help="print the pooled figures as JSON")
    fl = sub.add_parser("fill", help="write sha256 and line texts into labels files")
    fl.add_argument("labels", nargs="+")
    args = ap.parse_args(argv)
    handler = {"fetch": cmd_fetch, "check": cmd_check, "run": cmd_run, "first-runs": cmd_first_runs,
               "fill": cmd_fill}[args.cmd]
    try:
        return handler(args)
    except BenchError as e:
        print(f"recall.py: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
