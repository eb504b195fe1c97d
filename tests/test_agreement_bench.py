"""bench/agreement.py: two label copies of the same file compared pair by pair.

A tiny synthetic split folder (labels/ and agreement/labels/ holding two copies of one file's labels, written
the way two labellers would label a short CUDA training helper) is compared; no corpus or auditor is needed.
"""
from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location("agreement_bench", REPO / "bench" / "agreement.py")
agreement = importlib.util.module_from_spec(spec)
sys.modules[spec.name] = agreement
spec.loader.exec_module(agreement)

# The labelled file (not read by the script; the texts below are its lines):
#   3  # run on the GPU with fp16 autocast
#   5  torch.cuda.set_device(rank)
#   6  dist.init_process_group("nccl")
#   8  with torch.autocast("cuda", dtype=torch.float16):
#   9  from flash_attn import flash_attn_func
#  12  raise RuntimeError("CUDA is required")
#  14  # cudnn.benchmark stays on
HEAD = "package: demo\nversion: '1.0'\narchive: demo-1.0.whl\npath: demo/train.py\nsha256: ''\nlines:\n"
FIRST = HEAD + """\
  - {line: 3, category: none, note: comment, text: '# run on the GPU with fp16 autocast'}
  - {line: 5, category: device, note: set_device, text: torch.cuda.set_device(rank)}
  - {line: 6, category: distributed, note: nccl, text: 'dist.init_process_group("nccl")'}
  - {line: 8, category: [device, precision], note: cuda autocast fp16, text: 'with torch.autocast("cuda", dtype=torch.float16):'}
  - {line: 9, category: attention, note: flash_attn import, text: from flash_attn import flash_attn_func}
  - {line: 12, category: none, note: message, text: 'raise RuntimeError("CUDA is required")'}
"""
SECOND = HEAD + """\
  - {line: 3, category: none, note: comment, text: '# run on the GPU with fp16 autocast'}
  - {line: 5, category: device, note: set_device, text: torch.cuda.set_device(rank)}
  - {line: 8, category: device, note: autocast on cuda, text: 'with torch.autocast("cuda", dtype=torch.float16):'}
  - {line: 9, category: kernel, note: flash_attn import, text: from flash_attn import flash_attn_func}
  - {line: 12, category: device, note: CUDA-only check, text: 'raise RuntimeError("CUDA is required")'}
  - {line: 14, category: none, note: comment, text: '# cudnn.benchmark stays on'}
"""


def make_split(tmp_path: Path, first: str = FIRST, second: str = SECOND) -> Path:
    (tmp_path / "labels").mkdir()
    (tmp_path / "agreement" / "labels").mkdir(parents=True)
    (tmp_path / "labels" / "demo__demo__train.py.yaml").write_text(first)
    (tmp_path / "agreement" / "labels" / "demo__demo__train.py.yaml").write_text(second)
    return tmp_path


def test_pairs_counted_per_category_and_pooled(tmp_path):
    r = agreement.compare_split("demo", make_split(tmp_path))
    cats = r["categories"]
    # device: lines 5 and 8 in both, line 12 only in the second copy
    assert cats["device"] == {"both": 2, "first_only": 0, "second_only": 1, "either": 3, "agreement": 2 / 3}
    assert cats["distributed"]["first_only"] == 1 and cats["distributed"]["agreement"] == 0.0
    assert cats["precision"]["first_only"] == 1
    assert (cats["attention"]["first_only"], cats["kernel"]["second_only"]) == (1, 1)
    assert cats["apex"]["either"] == 0 and cats["apex"]["agreement"] is None
    assert r["total"] == {"both": 2, "first_only": 3, "second_only": 2, "either": 7, "agreement": 2 / 7}
    # line 3 is none in both; line 12 is none in the first copy and device in the second; line 14 is none in
    # the second copy only
    assert (r["none_both"], r["none_either"], r["none_vs_positive"]) == (1, 3, 1)
    assert r["none_one_copy"] == [("demo__demo__train.py.yaml", 14, "second", "# cudnn.benchmark stays on")]


def test_each_disagreement_says_what_the_other_copy_holds(tmp_path):
    r = agreement.compare_split("demo", make_split(tmp_path))
    seen = {(d.line, d.category, d.positive_in): d.other for d in r["disagreements"]}
    assert seen == {
        (6, "distributed", "first"): "absent",
        (8, "precision", "first"): "category: device",
        (9, "attention", "first"): "category: kernel",
        (9, "kernel", "second"): "category: attention",
        (12, "device", "second"): "none",
    }
    line12 = next(d for d in r["disagreements"] if d.line == 12)
    assert (line12.note_first, line12.note_second) == ("message", "CUDA-only check")
    assert line12.text == 'raise RuntimeError("CUDA is required")'


def test_identical_copies_agree_fully(tmp_path):
    r = agreement.compare_split("demo", make_split(tmp_path, FIRST, FIRST))
    assert r["total"]["agreement"] == 1.0 and r["disagreements"] == [] and r["none_one_copy"] == []


def test_copies_of_different_files_are_refused(tmp_path):
    other = SECOND.replace("path: demo/train.py", "path: demo/eval.py")
    with pytest.raises(agreement.BenchError, match="demo/eval.py"):
        agreement.compare_split("demo", make_split(tmp_path, FIRST, other))


def test_copy_without_main_labels_is_refused(tmp_path):
    folder = make_split(tmp_path)
    (folder / "labels" / "demo__demo__train.py.yaml").unlink()
    with pytest.raises(agreement.BenchError, match="no labels file"):
        agreement.compare_split("demo", folder)


def test_cli_on_the_committed_test9_copy(capsys):
    # the committed second copy of test9 compares without errors, as a table and as JSON
    assert agreement.main(["--split", "test9"]) == 0
    out = capsys.readouterr().out
    assert "test9: 25 files labelled twice" in out and "TOTAL" in out
    assert agreement.main(["--split", "test9", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    total = doc[0]["total"]
    assert total["either"] == total["both"] + total["first_only"] + total["second_only"] > 0


def test_cli_refuses_a_split_without_a_copy(capsys):
    assert agreement.main(["--split", "test8"]) == 2
    assert "no agreement/labels folder" in capsys.readouterr().err
