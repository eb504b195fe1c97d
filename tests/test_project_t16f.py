"""Project-file families of t16f (issue 15, the fresh tuning sample tuned_t16f): `pip install .` in the `csrc/*`
folders of a FlashAttention clone reached by relative `cd`s (and back out with `cd ../../`), idiap's fast-transformers
built from a clone, TF32 switched on by a config's `enable_tf32`, and a launch of a script whose entry point calls a
function that loads the model with FlashAttention on a statement no test guards. Realistic snippets written for these
tests, each with the lines that stay as they were."""
from __future__ import annotations

import textwrap
from pathlib import Path

from auditor.project.tree_calls import apply_tree_calls
from auditor.rules import load_rules
from auditor.static import StaticEngine
from static_snippets import code_line_symbol_category, codes_on as on

RULES = load_rules()
ENGINE = StaticEngine(RULES)


def audit(name: str, text: str) -> list[tuple[str, int, str, str]]:
    return code_line_symbol_category(ENGINE, name, text)


def test_cd_into_flash_attention_csrc_folders_and_back_names_each_fused_op():
    found = audit("Dockerfile", """\
        FROM nvcr.io/nvidia/pytorch:22.12-py3
        # Install CUDA extensions for cross-entropy, fused dense, layer norm
        RUN git clone https://github.com/HazyResearch/flash-attention \\
            && cd flash-attention && git checkout v0.2.8 \\
            && cd csrc/fused_softmax && pip install . && cd ../../ \\
            && cd csrc/rotary && pip install . && cd ../../ \\
            && cd csrc/fused_dense_lib && pip install . && cd ../../ \\
            && cd csrc/layer_norm && pip install . && cd ../../ \\
            && pip install . \\
            && cd .. && rm -rf flash-attention
        RUN cd /workspace && pip install .
        """)
    for line in (5, 6, 7, 8):
        assert on(found, line) == {("NPU809", "kernel")}, (line, found)
    assert ("NPU361", "attention") in on(found, 9)     # back at the clone's root: the attention kernel itself
    assert on(found, 2) == set() and on(found, 11) == set()


def test_cd_out_of_the_clone_leaves_it():
    found = audit("install.sh", """\
        #!/bin/bash
        git clone https://github.com/Dao-AILab/flash-attention
        cd flash-attention/csrc/rotary
        pip install .
        cd ../../..
        pip install .
        """)
    assert on(found, 4) == {("NPU809", "kernel")}
    assert on(found, 6) == set()


def test_fast_transformers_built_from_a_clone_is_a_cuda_kernel_package():
    found = audit("Dockerfile", """\
        FROM nvcr.io/nvidia/pytorch:22.12-py3
        ENV PIP_NO_CACHE_DIR=1
        RUN git clone https://github.com/idiap/fast-transformers \\
            && sed -i 's/\\["-arch=compute_60"\\]/\\["-arch=compute_70"\\]/' fast-transformers/setup.py \\
            && pip install fast-transformers/ \\
            && rm -rf fast-transformers
        RUN pip install einops opt_einsum
        """)
    assert on(found, 5) == {("NPU360", "kernel")}
    assert on(found, 7) == set()


def test_enable_tf32_in_a_training_config_is_the_tf32_setting():
    found = audit("configs/training/titok_s128.yaml", """\
        training:
            gradient_accumulation_steps: 1
            per_gpu_batch_size: 32
            mixed_precision: "fp16"
            enable_tf32: True
            enable_wandb: True
        """)
    assert on(found, 5) == {("NPU213", "precision")}
    assert all(on(found, ln) == set() for ln in (3, 4, 6))
    off = audit("config.yaml", "training:\n  enable_tf32: False\n  use_tf32: false\n")
    assert off == []


def _launch(tmp_path: Path, script: str) -> list[tuple[str, int, str, str]]:
    (tmp_path / "cllm").mkdir()
    (tmp_path / "cllm" / "train_cllm_global.py").write_text(textwrap.dedent(script))
    launch = textwrap.dedent("""\
        export WANDB_PROJECT=consistency_llm
        torchrun --nnodes=1 --nproc_per_node=4 --rdzv_endpoint='localhost:5666' \\
            cllm/train_cllm_global.py \\
            --target_model_path ${model_path} \\
            --bf16 True
        """)
    result = ENGINE.analyze_bytes(launch.encode(), "scripts/train_cllm.sh")
    apply_tree_calls([result], tmp_path, RULES, lambda: ENGINE.analyze_bytes)
    return [(f.code, f.line, f.symbol, f.category) for f in result.findings]


_TRAIN = """\
    import torch
    import transformers


    def train():
        parser = transformers.HfArgumentParser((transformers.TrainingArguments,))
        (training_args,) = parser.parse_args_into_dataclasses()
        model = transformers.AutoModelForCausalLM.from_pretrained(
            "meta-llama/Llama-2-7b-hf",
            attn_implementation=%s,
            torch_dtype=torch.bfloat16,
        )
        trainer = transformers.Trainer(model=model, args=training_args)
        trainer.train()


    if __name__ == "__main__":
        train()
    """


def test_launch_of_a_script_whose_main_function_loads_flash_attention(tmp_path):
    found = _launch(tmp_path, _TRAIN % "'flash_attention_2'")
    assert "attention" in {cat for _, ln, _, cat in found if ln == 3}


def test_launch_of_a_script_that_chooses_the_attention_by_a_test_is_not_reported(tmp_path):
    found = _launch(tmp_path, _TRAIN % "'flash_attention_2' if torch.cuda.is_available() else 'sdpa'")
    assert "attention" not in {cat for _, ln, _, cat in found if ln in (2, 3)}
