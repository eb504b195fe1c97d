"""Write tuned_t25a labels from a spec: per file, (regex or line number, category, note); prints each labelled line
so that the labeller reads it. Run from this folder: `python spec1.py` ... `python spec5.py`, then
`python bench/recall.py --split tuned_t25a fill bench/corpus_tuned_t25a/labels/*.yaml`."""
import io
import json
import re
import tokenize
from pathlib import Path

B = Path(__file__).resolve().parents[2]
SRC = {s["name"]: s for s in json.load(open(B / "corpus_tuned_t25a/sources.json"))["sources"]}


def _file(name):
    return B / "_corpus" / f"{name}-{SRC[name]['version']}"


def label(name, path, specs):
    s = SRC[name]
    lines = (_file(name) / path).read_text().splitlines()
    out = {}
    for pat, cat, note in specs:
        hits = [pat] if isinstance(pat, int) else [i + 1 for i, line in enumerate(lines) if re.search(pat, line)]
        if not hits:
            print("NO MATCH", path, pat)
        for n in hits:
            out[n] = (cat, note)
    y = B / "corpus_tuned_t25a/labels" / (name + "__" + path.replace("/", "__") + ".yaml")
    doc = [f"package: {name}", f"version: {s['version']}", f"archive: {name}-{s['commit']}.tar", f"path: {path}",
           "lines:"]
    for n in sorted(out):
        cat, note = out[n]
        doc.append(f"  - {{line: {n}, category: {cat}, note: {json.dumps(note)}}}")
        print(f"  {path}:{n} {cat}: {lines[n - 1].strip()[:110]}")
    y.write_text("\n".join(doc) + "\n")


def string_lines(name, path):
    """Line numbers inside multi-line string literals (docstrings, CUDA source held in strings)."""
    out = set()
    for tok in tokenize.generate_tokens(io.StringIO((_file(name) / path).read_text()).readline):
        if tok.type == tokenize.STRING and tok.end[0] > tok.start[0]:
            out.update(range(tok.start[0], tok.end[0] + 1))
    return out


def code_label(name, path, specs):
    """label(), but a regex matches only lines outside multi-line strings and comments."""
    lines = (_file(name) / path).read_text().splitlines()
    skip = string_lines(name, path)
    expanded = []
    for pat, cat, note in specs:
        if isinstance(pat, int):
            expanded.append((pat, cat, note))
            continue
        for i, line in enumerate(lines):
            if i + 1 not in skip and re.search(pat, line) and not line.strip().startswith("#"):
                expanded.append((i + 1, cat, note))
    label(name, path, expanded)
