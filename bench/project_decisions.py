"""Pooled project-file figures over the saved `bench/project_files.py --split S --json run` outputs, with lead decisions
26 (device-count config values are `none`) and 30 (fp16 mixed-precision settings are `none`) applied by re-reading
the labels here (pd35, session 26; the label files are not edited).

    python bench/project_decisions.py DIR PREFIX     # reads DIR/PREFIX_<split>.json for every split found

A positive pair whose label text is such a value becomes a `none` line: missed -> unflagged none line, found ->
flagged none line.
"""
from __future__ import annotations

import json
import re
import sys
from collections import Counter
from pathlib import Path

# decision 26: a config value that only counts devices (yaml / json / shell `key=value`; not a Trainer call)
_COUNT = re.compile(r"""^\s*(?:-\s*)?["']?(?:[\w.]*\.)?(gpus|num_gpus|n_gpus?|ngpus?|gpu_num|num_gpu|gpu_count|"""
                    r"""devices|num_devices|nproc_per_node|GPUS|NUM_GPUS|GPU_IDS|gpu_ids)["']?\s*[:=]""")
# decision 30: fp16 mixed precision turned on (not bf16 / fp8 / tf32)
_FP16 = re.compile(r"""(?ix)(precision["']?\s*[:=]\s*["']?(16|16-mixed|fp16)\b
                   |\bfp16["']?\s*[:=]\s*["']?(true|1)\b|amp_mode["']?\s*[:=]\s*["']?fp16|--fp16\b
                   |mixed_precision["']?\s*[:=]\s*["']?fp16)""")


def reread(category: str, text: str) -> bool:
    if category == "device" and _COUNT.search(text) and "Trainer(" not in text:
        return True
    return category == "precision" and bool(_FP16.search(text)) and not re.search(r"(?i)bf16|bfloat", text)


def main() -> int:
    folder, prefix = Path(sys.argv[1]), sys.argv[2]
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    import yaml

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import project_files as pf
    rows, pool = [], {"lab": 0, "found": 0, "none": 0, "flag": 0, "lab_d": 0, "found_d": 0, "none_d": 0, "flag_d": 0}
    for report_file in sorted(folder.glob(f"{prefix}_test*.json")):
        r = json.loads(report_file.read_text())
        split = r["split"]
        missed = {m.split(" (")[0]: m for m in r["missed"]}
        moved_missed = moved_found = 0
        pf.SPLIT = split
        used: Counter = Counter()
        for entry in json.loads((Path("bench/project_files") / split / "selection.json").read_text())["files"]:
            repo, path = entry["repo"], entry["path"]
            lab = yaml.safe_load(pf._label_file(repo, path).read_text()) or {}
            scored = pf.pair_capped(pf.capped(lab.get("lines") or [], pf.LINE_CAP.get(split)), used, repo,
                                    pf.PAIR_CAP.get(split))
            for item in scored:
                cats = item["category"] if isinstance(item["category"], list) else [item["category"]]
                if len(cats) == 1 and reread(cats[0], str(item.get("text", ""))):
                    if f"{repo}/{path}:{item['line']}" in missed:
                        moved_missed += 1
                    else:
                        moved_found += 1
        lab_d = r["labelled"] - moved_missed - moved_found
        found_d = r["found"] - moved_found
        none_d = r["none_lines"] + moved_missed + moved_found
        flag = len(r["false_hits_on_none_lines"])
        flag_d = flag + moved_found
        rows.append((split, r["found"], r["labelled"], flag, r["none_lines"], found_d, lab_d, flag_d, none_d))
        for k, v in zip(("found", "lab", "flag", "none", "found_d", "lab_d", "flag_d", "none_d"), rows[-1][1:]):
            pool[k] += v
    print("| split | recall (labels) | none flagged | recall (decisions 26/30) | none flagged (26/30) |")
    print("|---|---|---|---|---|")
    for s, f, lb, fl, n, fd, ld, fld, nd in rows + [("pooled", pool["found"], pool["lab"], pool["flag"], pool["none"],
                                                      pool["found_d"], pool["lab_d"], pool["flag_d"], pool["none_d"])]:
        print(f"| {s} | {f / lb:.1%} ({f}/{lb}) | {fl}/{n} | {fd / ld:.1%} ({fd}/{ld}) | {fld}/{nd} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
