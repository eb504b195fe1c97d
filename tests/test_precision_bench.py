"""The precision bench (bench/project_precision.py): the sampling rule and the shipped sample and labels."""
from __future__ import annotations

import importlib.util
import json
from collections import Counter
from pathlib import Path

BENCH = Path(__file__).resolve().parent.parent / "bench"


def _module():
    spec = importlib.util.spec_from_file_location("project_precision", BENCH / "project_precision.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _rows():
    rows = []
    # one big repository dominating the findings, a rare rule code only in a small one, a code under MIN_CODE
    for i in range(300):
        rows.append({"repo": "big", "path": f"f{i}.yaml", "line": 1, "col": 1, "code": "NPU212", "symbol": "bf16"})
    for i in range(40):
        rows.append({"repo": f"r{i % 10}", "path": f"g{i}.sh", "line": 2, "col": 1, "code": "NPU004", "symbol": "X"})
    for i in range(3):
        rows.append({"repo": "small", "path": f"h{i}.txt", "line": 3, "col": 1, "code": "NPU361", "symbol": "flash-attn"})
    rows.append({"repo": "small", "path": "k.txt", "line": 1, "col": 1, "code": "NPU999", "symbol": "once"})
    return rows


def test_draw_caps_repositories_and_covers_codes_deterministically():
    mod = _module()
    rows = _rows()
    sample = mod.draw(rows)
    # fewer than SIZE findings fit under the caps: big gives PER_REPO, the ten small repositories all theirs
    assert len(sample) == mod.PER_REPO + 40 + 4
    assert max(Counter(s["repo"] for s in sample).values()) <= mod.PER_REPO
    assert {"NPU212", "NPU004", "NPU361"} <= {s["code"] for s in sample}
    assert mod.draw(rows) == sample          # fixed seed: the same draw every time


def test_shipped_labels_align_with_the_sample(capsys):
    mod = _module()
    meta = json.loads((mod.OUT / "sample.json").read_text())
    labels = json.loads((mod.OUT / "labels.json").read_text())
    assert len(meta["sample"]) == len(labels) == mod.SIZE
    assert max(Counter(s["repo"] for s in meta["sample"]).values()) <= mod.PER_REPO
    for s, lab in zip(meta["sample"], labels):
        assert (lab["code"], lab["path"], lab["line"]) == (s["code"], s["path"], s["line"])
        assert lab["verdict"] in ("right", "wrong") and lab["reason"]
        assert (lab["problem"] == "none") == (lab["verdict"] == "right")
        assert lab["problem"] in ("none", "false-positive", "severity", "category")
    assert mod.run(as_json=True) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["sampled"] == mod.SIZE
    assert report["right"] == sum(lab["verdict"] == "right" for lab in labels)
    assert report["wilson95"][0] < report["precision"] < report["wilson95"][1]
