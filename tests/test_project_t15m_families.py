"""t15m (issue 15): launch lines of training scripts whose option defaults select a CUDA-only attention (NPU354),
and short wrappers whose attention patch comes from another module of the tree (NPU312, one hop)."""
from __future__ import annotations

import textwrap
from pathlib import Path

from auditor.project.launched import default_choices, launched_call_options, option_defaults
from tests.static_snippets import write_tree

_HF_TRAIN = textwrap.dedent("""\
    from dataclasses import dataclass, field
    from typing import Optional

    import torch
    import transformers
    from transformers import AutoModelForCausalLM


    @dataclass
    class ModelArguments:
        model_name_or_path: Optional[str] = field(default="meta-llama/Llama-2-7b-hf")


    @dataclass
    class TrainingArguments(transformers.TrainingArguments):
        attn_type: Optional[str] = field(default="fa2")
        max_length: int = 2048


    def train():
        parser = transformers.HfArgumentParser((ModelArguments, TrainingArguments))
        model_args, training_args = parser.parse_args_into_dataclasses()
        model = AutoModelForCausalLM.from_pretrained(
            model_args.model_name_or_path,
            attn_implementation="flash_attention_2" if training_args.attn_type == "fa2" else None,
            torch_dtype=torch.bfloat16 if training_args.bf16 else None,
        )
        trainer = transformers.Trainer(model=model, args=training_args)
        trainer.train()


    if __name__ == "__main__":
        train()
    """)

_ARGPARSE_TRAIN = textwrap.dedent("""\
    import argparse

    from transformers import AutoModelForCausalLM


    def parse_args():
        parser = argparse.ArgumentParser()
        parser.add_argument("--model", type=str, default="facebook/opt-1.3b")
        parser.add_argument("--no-flash-attn", dest="use_flash_attn", action="store_false")
        parser.add_argument("--attn-impl", type=str, default="sdpa")
        parser.add_argument("-b", "--backend", type=str, default="transformers")
        parser.add_argument("--dataset", type=str, default="wikitext")
        parser.add_argument("--seq-len", type=int, default=2048)
        parser.add_argument("--batch-size", type=int, default=8)
        parser.add_argument("--lr", type=float, default=3e-4)
        parser.add_argument("--warmup-steps", type=int, default=100)
        parser.add_argument("--max-steps", type=int, default=10000)
        parser.add_argument("--grad-accum", type=int, default=1)
        parser.add_argument("--seed", type=int, default=1234)
        parser.add_argument("--output-dir", type=str, default="./out")
        parser.add_argument("--save-every", type=int, default=1000)
        parser.add_argument("--log-every", type=int, default=10)
        return parser.parse_args()


    def main():
        args = parse_args()
        if args.use_flash_attn:
            model = AutoModelForCausalLM.from_pretrained(args.model, attn_implementation="flash_attention_2")
        else:
            model = AutoModelForCausalLM.from_pretrained(args.model, attn_implementation="sdpa")
        other = AutoModelForCausalLM.from_pretrained(
            args.model, attn_implementation="flash_attention_2" if args.attn_impl == "fa2" else "eager")
        if args.backend == "transformers":
            third = AutoModelForCausalLM.from_pretrained(args.model, use_flash_attention_2=True)
        return model, other


    def train_loop(model, loader, args):
        import torch

        optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)
        scheduler = torch.optim.lr_scheduler.LinearLR(optimizer, 0.1, 1.0, total_iters=args.warmup_steps)
        model.train()
        for step, batch in enumerate(loader):
            loss = model(**batch).loss / args.grad_accum
            loss.backward()
            if (step + 1) % args.grad_accum == 0:
                optimizer.step()
                scheduler.step()
                optimizer.zero_grad(set_to_none=True)
            if step % args.log_every == 0:
                print(f"step {step} loss {loss.item():.4f}")
            if step >= args.max_steps:
                break


    if __name__ == "__main__":
        main()
    """)


def _findings(tmp_path: Path, files: dict[str, str]):
    from auditor.runner import run_static

    run = run_static([write_tree(tmp_path, files)], jobs=1)
    return [(Path(r.path).name, f) for r in run.results for f in r.findings]


def test_option_defaults_read_dataclass_fields_and_argparse():
    import ast

    got = option_defaults(ast.parse(_HF_TRAIN))
    assert got["attn_type"] == "fa2" and got["max_length"] == 2048
    got = option_defaults(ast.parse(_ARGPARSE_TRAIN))
    assert got["use_flash_attn"] is True      # store_false: on unless the launch passes --no-flash-attn
    assert got["attn_impl"] == "sdpa" and got["model"] == "facebook/opt-1.3b"


def test_launched_call_options_keep_the_options_after_the_file():
    words = ["--nproc_per_node=8", "emu/train/train.py", "--model_name_or_path", "x", "--attn_type=sdpa", "--bf16"]
    call, at = launched_call_options(words, "") or ({}, -1)
    assert at == 1 and call["file"] == "emu/train/train.py"
    assert call["options"] == ["attn_type", "bf16", "model_name_or_path"]     # not torchrun's own --nproc_per_node
    # `python -m pkg.train` runs the tree's pkg/train.py (t17a): its options are read like a file's
    assert launched_call_options(["-m", "pkg.train"], "") == ({"file": "pkg/train.py", "options": []}, 1)


def test_a_launch_leaving_a_flash_attention_default_is_reported_on_the_file_word(tmp_path):
    script = textwrap.dedent("""\
        #!/bin/bash
        NGPUS=8
        # torchrun --nproc_per_node=1 llm/train/train.py --attn_type fa2
        torchrun \\
            --nproc_per_node=${NGPUS} \\
            --master_port=23456 \\
            llm/train/train.py \\
            --model_name_or_path meta-llama/Llama-2-7b-hf \\
            --bf16 True \\
            --output_dir ./out
        torchrun --nproc_per_node=${NGPUS} llm/train/train.py --attn_type sdpa --output_dir ./out-sdpa
        echo "python llm/train/train.py"
        """)
    got = _findings(tmp_path, {"llm/train/train.py": _HF_TRAIN, "scripts/sft.sh": script})
    launches = [(name, f) for name, f in got if f.code == "NPU354"]
    assert [(name, f.line, f.col) for name, f in launches] == [("sft.sh", 7, 5)], launches
    f = launches[0][1]
    assert f.category == "attention" and f.severity == "info"
    assert "llm/train/train.py:25" in f.message and "flash_attention_2" in f.message


def test_argparse_store_false_default_is_followed_and_a_sdpa_default_is_not(tmp_path):
    script = textwrap.dedent("""\
        python tools/train_lm.py --model facebook/opt-1.3b --attn-impl fa2
        python tools/train_lm.py --model facebook/opt-1.3b --no-flash-attn --attn-impl fa2
        python tools/train_lm.py --no-flash-attn
        python tools/train_lm.py --no-flash-attn -b vllm
        """)
    got = _findings(tmp_path, {"tools/train_lm.py": _ARGPARSE_TRAIN, "run.sh": script})
    lines = sorted(f.line for name, f in got if f.code == "NPU354")
    # line 1: --use_flash_attn's default (store_false) left on; line 2 turns it off and picks fa2 explicitly (the
    # value is the launch's own choice), and passes no backend: reported once per line, line 2 keeps the
    # transformers default too
    # line 3 still runs the transformers backend (its default), whose branch asks for FlashAttention-2; line 4 turns
    # the flash switch off and picks vllm through the short alias `-b`: nothing left at a CUDA default
    assert lines == [1, 2, 3], got


def test_default_choices_ignore_branches_the_default_does_not_take():
    text = _HF_TRAIN.replace('field(default="fa2")', 'field(default="sdpa")')
    from auditor.static.engine import StaticEngine
    from auditor.rules import load_rules

    findings = StaticEngine(load_rules()).analyze_bytes(text.encode(), "train.py").findings
    assert any(f.category == "attention" for f in findings)       # the flash branch is still a finding of the file
    assert default_choices(text, findings) == []
    assert default_choices("def broken(:\n", findings) == []


def test_a_wrapper_calling_a_patch_module_of_the_tree_is_reported(tmp_path):
    patch = textwrap.dedent("""\
        import torch
        import xformers.ops as xops
        import transformers.models.llama.modeling_llama


        def xformers_forward(self, hidden_states, attention_mask=None, **kwargs):
            attn = xops.memory_efficient_attention(hidden_states, hidden_states, hidden_states,
                                                   attn_bias=xops.LowerTriangularMask())
            return attn, None


        def replace_llama_attn_with_xformers_attn():
            transformers.models.llama.modeling_llama.LlamaAttention.forward = xformers_forward
        """)
    neutral = textwrap.dedent("""\
        import transformers.models.llama.modeling_llama


        def replace_llama_rope_with_scaled_rope(factor=2.0):
            transformers.models.llama.modeling_llama.ROPE_FACTOR = factor
        """)
    wrapper = textwrap.dedent("""\
        # Make it more memory efficient by monkey patching the LLaMA model with xformers attention.
        from vlm.train.llama_xformers_attn_monkey_patch import replace_llama_attn_with_xformers_attn

        replace_llama_attn_with_xformers_attn()

        from vlm.train.train import train

        if __name__ == "__main__":
            train()
        """)
    rope = wrapper.replace("llama_xformers_attn_monkey_patch", "llama_rope_patch").replace(
        "replace_llama_attn_with_xformers_attn", "replace_llama_rope_with_scaled_rope")
    train = "def train():\n    return None\n"
    script = textwrap.dedent("""\
        deepspeed vlm/train/train_xformers.py \\
            --model_name_or_path lmsys/vicuna-7b-v1.5 --bf16 True
        deepspeed vlm/train/train_rope.py --model_name_or_path lmsys/vicuna-7b-v1.5
        """)
    got = _findings(tmp_path, {
        "vlm/__init__.py": "", "vlm/train/__init__.py": "",
        "vlm/train/llama_xformers_attn_monkey_patch.py": patch, "vlm/train/llama_rope_patch.py": neutral,
        "vlm/train/train_xformers.py": wrapper, "vlm/train/train_rope.py": rope, "vlm/train/train.py": train,
        "scripts/pretrain.sh": script})
    launches = [f for name, f in got if name == "pretrain.sh" and f.code == "NPU312"]
    assert [f.line for f in launches] == [1], launches
    assert "vlm/train/llama_xformers_attn_monkey_patch.py:2" in launches[0].message


def test_launch_facts_parse_a_launched_script_once(monkeypatch):
    """The worker's launch facts (patches, defaults, aliases) come from one `ast` tree of the file: a short wrapper
    that applies a patch and whose option default selects FlashAttention-2 is parsed once, and its facts equal
    what each reading finds on its own."""
    import ast

    from auditor.project import launched
    from auditor.rules import load_rules
    from auditor.static.engine import StaticEngine

    wrapper = textwrap.dedent("""\
        import argparse

        from transformers import AutoModelForCausalLM
        from llava.train.llama_flash_attn_monkey_patch import replace_llama_attn_with_flash_attn

        replace_llama_attn_with_flash_attn()

        parser = argparse.ArgumentParser()
        parser.add_argument("-a", "--attn-impl", type=str, default="fa2")
        args = parser.parse_args()
        impl = "flash_attention_2" if args.attn_impl == "fa2" else "sdpa"
        model = AutoModelForCausalLM.from_pretrained("m", attn_implementation=impl)
        """)
    findings = StaticEngine(load_rules()).analyze_bytes(wrapper.encode(), "train_mem.py").findings
    alone = (launched._patch_calls(ast.parse(wrapper)), launched.default_choices(wrapper, findings),
             launched.option_defaults(ast.parse(wrapper)).get(launched._ALIASES))
    parsed: list[str] = []
    real_parse = ast.parse
    monkeypatch.setattr(ast, "parse", lambda text, *a, **k: (parsed.append(text), real_parse(text, *a, **k))[1])
    facts = launched.launch_facts(wrapper.encode(), findings)
    assert len(parsed) == 1
    assert facts["patches"] == [["llava.train.llama_flash_attn_monkey_patch", "replace_llama_attn_with_flash_attn"]]
    assert [tuple(p) for p in facts["patches"]] == alone[0]
    assert facts["defaults"] == [[f.line, f.col, f.code, name] for f, name in alone[1]] != []
    assert facts["aliases"] == alone[2] == {"a": "attn_impl", "attn_impl": "attn_impl"}
