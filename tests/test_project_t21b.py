"""test28's project-file families (t21b, issue 15), each on a file written the way the labelled one is."""
from __future__ import annotations

import textwrap

import pytest

from auditor.rules import load_rules
from auditor.static import StaticEngine
from static_snippets import codes_by_line, line_of


@pytest.fixture(scope="module")
def engine():
    return StaticEngine(load_rules())


def _codes(engine, rel: str, src: str) -> dict[int, set[str]]:
    return codes_by_line(engine, textwrap.dedent(src), rel)


def test_negated_attention_switch_turned_off_selects_the_kernel(engine):
    # Qwen2-VL-Finetune's scripts/finetune.sh: `--disable_flash_attn2 False` leaves FlashAttention-2 on
    src = """\
        deepspeed src/train/train_sft.py \\
            --use_liger True \\
            --deepspeed scripts/zero3_offload.json \\
            --bf16 True \\
            --disable_flash_attn2 False \\
            --output_dir output/test_fft
        """
    found = _codes(engine, "scripts/finetune.sh", src)
    assert "NPU363" in found[line_of(src, "--disable_flash_attn2 False")]
    off = src.replace("--disable_flash_attn2 False", "--disable_flash_attn2 True")
    assert "NPU363" not in _codes(engine, "scripts/finetune.sh", off).get(line_of(off, "--disable_flash_attn2"), set())


def test_negated_switch_in_a_config(engine):
    src = """\
        model:
          disable_xformers: false
          disable_flash_attn: true
        """
    found = _codes(engine, "configs/train.yaml", src)
    assert "NPU363" in found[line_of(src, "disable_xformers")]
    assert not found.get(line_of(src, "disable_flash_attn"))
