"""Write tuned_t25a labels from a spec: per file, (regex | line number, category, note); prints matched lines."""
import json, re, sys, subprocess
from pathlib import Path
B = Path("/work/t25a/bench"); SRC = {s["name"]: s for s in json.load(open(B/"corpus_tuned_t25a/sources.json"))["sources"]}
def label(name, path, specs):
    s = SRC[name]; f = B/"_corpus"/f"{name}-{s['version']}"/path
    lines = f.read_text().splitlines(); out = {}
    for pat, cat, note in specs:
        hits = [pat] if isinstance(pat, int) else [i+1 for i, l in enumerate(lines) if re.search(pat, l)]
        if not hits: print("NO MATCH", path, pat); continue
        for n in hits:
            out[n] = (cat, note)
    y = B/"corpus_tuned_t25a/labels"/(name + "__" + path.replace("/", "__") + ".yaml")
    doc = [f"package: {name}", f"version: {s['version']}", f"archive: {name}-{s['commit']}.tar", f"path: {path}", "lines:"]
    for n in sorted(out):
        cat, note = out[n]
        doc.append(f"  - {{line: {n}, category: {cat}, note: {json.dumps(note)}}}")
        print(f"  {path}:{n} {cat}: {lines[n-1].strip()[:110]}")
    y.write_text("\n".join(doc) + "\n")

def string_lines(name, path):
    """Line numbers inside multi-line string literals (docstrings, CUDA source held in strings)."""
    import io, tokenize
    s = SRC[name]; f = B/"_corpus"/f"{name}-{s['version']}"/path
    out = set()
    for tok in tokenize.generate_tokens(io.StringIO(f.read_text()).readline):
        if tok.type == tokenize.STRING and tok.end[0] > tok.start[0]:
            out.update(range(tok.start[0], tok.end[0] + 1))
    return out

def code_label(name, path, specs):
    """label(), but a regex matches only lines outside multi-line strings."""
    s = SRC[name]; f = B/"_corpus"/f"{name}-{s['version']}"/path
    lines = f.read_text().splitlines(); skip = string_lines(name, path)
    expanded = []
    for pat, cat, note in specs:
        if isinstance(pat, int):
            expanded.append((pat, cat, note)); continue
        for i, l in enumerate(lines):
            if i + 1 not in skip and re.search(pat, l) and not l.strip().startswith("#"):
                expanded.append((i + 1, cat, note))
    label(name, path, expanded)
