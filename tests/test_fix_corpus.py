"""`audit fix --write` on real training scripts (the recall corpus, when bench/_corpus has been downloaded):
every result parses, a second run changes nothing, comments and docstrings are byte-identical, and the audit
afterwards has no safe-fixable finding left."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from auditor.fix import applicable, comments_and_docstrings, fix_bytes
from auditor.rules import load_rules, rules_by_code
from auditor.static.engine import StaticEngine

CORPUS = Path(__file__).parent.parent / "bench" / "_corpus"
SCRIPTS = [
    "torchtune-0.6.1/recipes/full_finetune_distributed.py",
    "open-clip-torch-3.3.0/open_clip_train/main.py",
    "mmengine-0.10.7/mmengine/dist/dist.py",
    "deepspeed-0.19.8/deepspeed-0.19.8/deepspeed/accelerator/cuda_accelerator.py",
]


@pytest.mark.parametrize("script", SCRIPTS)
@pytest.mark.parametrize("unsafe", [False, True])
def test_fix_real_script(script, unsafe, tmp_path):
    src = CORPUS / script
    if not src.is_file():
        pytest.skip("bench/_corpus is not downloaded (python bench/recall.py --download)")
    copy = tmp_path / src.name
    shutil.copy(src, copy)
    engine, rules = StaticEngine(load_rules()), rules_by_code()
    first = fix_bytes(copy.read_bytes(), src.name, engine, rules, unsafe=unsafe)
    assert first.error is None and first.changed and first.fixed
    second = fix_bytes(first.encoded(), src.name, engine, rules, unsafe=unsafe)
    assert second.fixed_text == first.fixed_text                   # idempotent
    assert comments_and_docstrings(first.original) == comments_and_docstrings(first.fixed_text)
    assert [f for f in first.remaining if applicable(f, unsafe=False)] == []
