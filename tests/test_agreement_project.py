"""bench/agreement.py --project: two copies of a project file's labels compared pair by pair.

A tiny synthetic split folder (labels/ and agreement/labels/ holding two copies of one launch script's labels, in
the project-file bench's format, written the way two labellers would label it) is compared through
bench/project_labels.py's parser; no tree or auditor is needed.
"""
from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location("agreement_bench_project", REPO / "bench" / "agreement.py")
agreement = importlib.util.module_from_spec(spec)
sys.modules[spec.name] = agreement
spec.loader.exec_module(agreement)

# The labelled file, scripts/train.sh (not read by the script; the texts below are its lines):
#   2  # needs 8 GPUs
#   4  export NCCL_IB_DISABLE=1
#   5  NGPUS=$(python -c "import torch; print(torch.cuda.device_count())")
#   7  CUDA_VISIBLE_DEVICES=0,1 torchrun --nproc_per_node=${NGPUS} train.py \
#   9      --bf16 True --tf32 True \
#  10      --per_device_train_batch_size 2 --attn_implementation flash_attention_2
#  12  pip install flash-attn --no-build-isolation
HEAD = "repo: demo\npath: scripts/train.sh\nsha256: ''\nlines:\n"
FIRST = HEAD + """\
- {line: 2, category: none, note: comment, text: '# needs 8 GPUs'}
- {line: 4, category: distributed, note: NCCL variable, text: export NCCL_IB_DISABLE=1}
- {line: 5, category: device, note: counts CUDA devices, text: 'NGPUS=$(python -c "import torch; print(torch.cuda.device_count())")'}
- {line: 7, category: device, note: CUDA_VISIBLE_DEVICES, text: 'CUDA_VISIBLE_DEVICES=0,1 torchrun --nproc_per_node=${NGPUS} train.py \\'}
- {line: 9, category: precision, note: bf16 and tf32, text: '--bf16 True --tf32 True \\'}
- {line: 10, category: attention, note: flash_attention_2, text: '--per_device_train_batch_size 2 --attn_implementation flash_attention_2'}
- {line: 12, category: [attention, kernel], note: builds flash-attn, text: pip install flash-attn --no-build-isolation}
"""
SECOND = HEAD + """\
- {line: 2, category: none, note: comment, text: '# needs 8 GPUs'}
- {line: 4, category: distributed, note: NCCL variable, text: export NCCL_IB_DISABLE=1}
- {line: 5, category: none, note: a count only, text: 'NGPUS=$(python -c "import torch; print(torch.cuda.device_count())")'}
- {line: 7, category: device, note: device selection, text: 'CUDA_VISIBLE_DEVICES=0,1 torchrun --nproc_per_node=${NGPUS} train.py \\'}
- {line: 10, category: attention, note: FlashAttention-2, text: '--per_device_train_batch_size 2 --attn_implementation flash_attention_2'}
- {line: 12, category: attention, note: no NPU build, text: pip install flash-attn --no-build-isolation}
- {line: 13, category: none, note: echo text, text: 'echo "done on GPU"'}
"""
NAME = "demo__scripts__train.sh.yaml"


def make_split(tmp_path: Path, first: str = FIRST, second: str = SECOND) -> Path:
    (tmp_path / "labels").mkdir()
    (tmp_path / "agreement" / "labels").mkdir(parents=True)
    (tmp_path / "labels" / NAME).write_text(first)
    (tmp_path / "agreement" / "labels" / NAME).write_text(second)
    return tmp_path


def test_project_pairs_counted_per_category_and_pooled(tmp_path):
    r = agreement.compare_split("demo", make_split(tmp_path), project=True)
    cats = r["categories"]
    assert set(cats) == set(agreement.PROJECT_CATEGORIES) and "fusion" in cats and "none" not in cats
    # device: line 7 in both, line 5 only in the first copy (none in the second)
    assert cats["device"] == {"both": 1, "first_only": 1, "second_only": 0, "either": 2, "agreement": 0.5}
    assert cats["distributed"]["agreement"] == 1.0
    assert cats["attention"] == {"both": 2, "first_only": 0, "second_only": 0, "either": 2, "agreement": 1.0}
    assert cats["kernel"]["first_only"] == 1 and cats["precision"]["first_only"] == 1
    assert r["total"] == {"both": 4, "first_only": 3, "second_only": 0, "either": 7, "agreement": 4 / 7}
    # line 2 none in both; line 5 none in the second and device in the first; line 13 none in the second only
    assert (r["none_both"], r["none_either"], r["none_vs_positive"]) == (1, 3, 1)
    assert r["none_one_copy"] == [(NAME, 13, "second", 'echo "done on GPU"')]


def test_project_disagreements_say_what_the_other_copy_holds(tmp_path):
    r = agreement.compare_split("demo", make_split(tmp_path), project=True)
    seen = {(d.line, d.category, d.positive_in): d.other for d in r["disagreements"]}
    assert seen == {
        (5, "device", "first"): "none",
        (9, "precision", "first"): "absent",
        (12, "kernel", "first"): "category: attention",
    }
    line5 = next(d for d in r["disagreements"] if d.line == 5)
    assert (line5.note_first, line5.note_second) == ("counts CUDA devices", "a count only")


def test_project_copies_of_different_files_are_refused(tmp_path):
    other = SECOND.replace("path: scripts/train.sh", "path: scripts/eval.sh")
    with pytest.raises(agreement.BenchError, match="scripts/eval.sh"):
        agreement.compare_split("demo", make_split(tmp_path, FIRST, other), project=True)


def test_project_labels_with_a_static_category_or_bad_entry_are_refused(tmp_path):
    bad = SECOND.replace("category: attention, note: no NPU build", "category: cuda, note: no NPU build")
    with pytest.raises(agreement.BenchError, match="bad category"):
        agreement.compare_split("demo", make_split(tmp_path, FIRST, bad), project=True)
    twice = FIRST + "- {line: 4, category: none, note: again, text: export NCCL_IB_DISABLE=1}\n"
    (tmp_path / "twice").mkdir()
    with pytest.raises(agreement.BenchError, match="labelled twice"):
        agreement.compare_split("demo", make_split(tmp_path / "twice", twice, SECOND), project=True)


def test_long_line_labels_compare_by_their_start(tmp_path):
    # a one-line data file labelled with text_start / text_sha256 (no `text`) parses in both copies
    one = ("repo: demo\npath: assets/vocab.json\nsha256: ''\nlines:\n"
           "- {line: 1, category: none, note: tokens, text_start: '{\"GPU\": 1', text_sha256: abc}\n")
    folder = tmp_path
    (folder / "labels").mkdir()
    (folder / "agreement" / "labels").mkdir(parents=True)
    (folder / "labels" / "demo__assets__vocab.json.yaml").write_text(one)
    (folder / "agreement" / "labels" / "demo__assets__vocab.json.yaml").write_text(one)
    r = agreement.compare_split("demo", folder, project=True)
    assert (r["none_both"], r["total"]["either"], r["total"]["agreement"]) == (1, 0, None)


def test_project_cli_refuses_a_split_without_a_copy(capsys):
    assert agreement.main(["--project", "--split", "test10"]) == 2
    assert "no agreement/labels folder" in capsys.readouterr().err


def test_project_cli_on_the_committed_test11_copy(capsys):
    # la11's second copy of 20 test11 files compares without errors, as a table and as JSON
    assert agreement.main(["--project", "--split", "test11"]) == 0
    out = capsys.readouterr().out
    assert "test11: 20 files labelled twice" in out and "TOTAL" in out
    assert agreement.main(["--project", "--split", "test11", "--json"]) == 0
    total = json.loads(capsys.readouterr().out)[0]["total"]
    assert total["either"] == total["both"] + total["first_only"] + total["second_only"] > 0
