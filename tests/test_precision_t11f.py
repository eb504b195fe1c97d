"""Precision fixes for Ascend-native code and fallbacks (t11f; tuned on heldout5 and heldout4, whose trees are TUNED ON).

The trees below are shaped like the false classes hl5a / hl5b / hl4b found, written afresh (not copied):
- a Megatron plug-in for Ascend that ships its `megatron_adaptor.py`, with system-test scripts that set up Ascend
  (an `env_npu.sh`, NPUS_PER_NODE) and start Megatron's `pretrain_gpt.py`, which is not in the tree; the same
  script shape in a tree without an adaptor, or one that starts the tree's own plain entry, keeps its findings;
- a Dockerfile for CUDA beside Dockerfiles for Ascend (FROM a CANN image, torch_npu installed) in one folder;
- `__all__` export lists that name attention functions;
- a test base class that sets CUDA up only under `"nccl" in self.backend`;
- an RNG module whose CUDA-named helper sets the NPU generators' state (the NPU implementation under a CUDA name),
  and a module under the shim that calls a tracker getter named for CUDA;
- a grad-clip module under the shim that imports Transformer Engine under try/except with apex and a local
  fallback (the fallback is what runs on Ascend);
- a Triton-Ascend helper module (`ops/triton/utils.py` with `multibuffer` autotune keys) and the kernels that import
  its config builder.
"""
from __future__ import annotations

from pathlib import Path

from tests.static_snippets import findings_in_tree, write_tree


def _at(found: dict, root: Path, rel: str, needle: str) -> set[str]:
    """Severities of findings on the first line of `rel` that holds `needle`."""
    line = next(i for i, t in enumerate((root / rel).read_text().splitlines(), 1) if needle in t)
    return {s for (p, n, _c), s in found.items() if p == rel and n == line}


def _codes_at(found: dict, root: Path, rel: str, needle: str) -> set[str]:
    line = next(i for i, t in enumerate((root / rel).read_text().splitlines(), 1) if needle in t)
    return {c for (p, n, c), _s in found.items() if p == rel and n == line}


ADAPTOR = """\
    import sys

    import torch
    from torch_npu.contrib import transfer_to_npu  # noqa: F401

    from npuplug.patches import apply_patches

    apply_patches()
    """

SYSTEM_TEST = """\
    #!/bin/bash

    export CUDA_DEVICE_MAX_CONNECTIONS=1
    source "tests/system/env_npu.sh"

    NPUS_PER_NODE=8
    NNODES=1
    WORLD_SIZE=$(($NPUS_PER_NODE*$NNODES))

    GPT_ARGS="
        --tensor-model-parallel-size 2 \\
        --use-flash-attn \\
        --num-layers 4 \\
    "

    torchrun --nproc_per_node $NPUS_PER_NODE pretrain_gpt.py \\
        $GPT_ARGS \\
        --distributed-backend nccl \\
        --save ./ckpt
    """

PLUGIN = {
    "npuplug/__init__.py": "",
    "npuplug/megatron_adaptor.py": ADAPTOR,
    "npuplug/patches.py": """\
        def apply_patches():
            pass
        """,
    "tests/system/env_npu.sh": """\
        source /usr/local/Ascend/ascend-toolkit/set_env.sh
        export HCCL_CONNECT_TIMEOUT=1200
        """,
    "tests/system/gpt/pretrain_gpt_tp2.sh": SYSTEM_TEST,
}


def test_an_ascend_script_of_a_plugin_that_ships_its_adaptor_runs_its_megatron_switches_on_the_npu(tmp_path):
    root = write_tree(tmp_path, PLUGIN)
    found = findings_in_tree(root)
    rel = "tests/system/gpt/pretrain_gpt_tp2.sh"
    assert _at(found, root, rel, "--distributed-backend nccl") == {"info"}
    assert _at(found, root, rel, "--use-flash-attn") == {"info"}
    assert _at(found, root, rel, "CUDA_DEVICE_MAX_CONNECTIONS") == {"info"}


def test_the_same_script_without_an_adaptor_in_the_tree_keeps_its_findings(tmp_path):
    files = {k: v for k, v in PLUGIN.items() if k != "npuplug/megatron_adaptor.py"}
    root = write_tree(tmp_path, files)
    found = findings_in_tree(root)
    assert _at(found, root, "tests/system/gpt/pretrain_gpt_tp2.sh", "--distributed-backend nccl") == {"error"}


def test_a_script_that_does_not_set_up_ascend_keeps_its_findings(tmp_path):
    plain = SYSTEM_TEST.replace('source "tests/system/env_npu.sh"\n', "").replace("NPUS_PER_NODE", "GPUS_PER_NODE")
    root = write_tree(tmp_path, {**PLUGIN, "tests/system/gpt/pretrain_gpt_tp2.sh": plain})
    found = findings_in_tree(root)
    assert _at(found, root, "tests/system/gpt/pretrain_gpt_tp2.sh", "--distributed-backend nccl") == {"error"}


def test_an_ascend_script_that_starts_a_plain_entry_of_the_tree_keeps_its_findings(tmp_path):
    entry = """\
        import torch


        def main():
            torch.distributed.init_process_group(backend="nccl")


        if __name__ == "__main__":
            main()
        """
    root = write_tree(tmp_path, {**PLUGIN, "pretrain_gpt.py": entry})
    found = findings_in_tree(root)
    assert _at(found, root, "tests/system/gpt/pretrain_gpt_tp2.sh", "--distributed-backend nccl") == {"error"}


DOCKER = {
    "docker/Dockerfile.torch260.vllm": """\
        FROM nvcr.io/nvidia/pytorch:24.05-py3

        RUN pip install vllm==0.8.4 flash-attn --no-build-isolation
        ENV NCCL_IB_DISABLE=0
        """,
    "docker/Dockerfile.A3": """\
        FROM quay.io/ascend/cann:8.2.rc1-a3-ubuntu22.04-py3.11

        ARG SOC_VERSION="ascend910_9391"
        RUN pip install torch==2.5.1 torch_npu==2.5.1 vllm-ascend==0.9.1
        """,
}


def test_a_cuda_dockerfile_beside_ascend_dockerfiles_is_the_cuda_member_of_the_set(tmp_path):
    root = write_tree(tmp_path, DOCKER)
    found = findings_in_tree(root)
    assert _at(found, root, "docker/Dockerfile.torch260.vllm", "FROM nvcr.io") == {"info"}
    assert "info" in _at(found, root, "docker/Dockerfile.torch260.vllm", "flash-attn")


def test_a_cuda_dockerfile_beside_another_cuda_dockerfile_keeps_its_errors(tmp_path):
    other = {"docker/Dockerfile.torch251.sglang": "FROM nvcr.io/nvidia/pytorch:24.07-py3\nRUN pip install sglang\n"}
    root = write_tree(tmp_path, {"docker/Dockerfile.torch260.vllm": DOCKER["docker/Dockerfile.torch260.vllm"],
                                 **other})
    found = findings_in_tree(root)
    assert _at(found, root, "docker/Dockerfile.torch260.vllm", "FROM nvcr.io") == {"error"}


def test_export_lists_are_not_settings(tmp_path):
    root = write_tree(tmp_path, {
        "videogen/modules/attention.py": """\
            import torch

            __all__ = [
                'flash_attention',
                'attention',
            ]


            def attention(q, k, v, attn_implementation="flash_attention_2"):
                return torch.nn.functional.scaled_dot_product_attention(q, k, v)
            """,
    })
    found = findings_in_tree(root)
    assert _at(found, root, "videogen/modules/attention.py", "'flash_attention',") == set()
    assert _at(found, root, "videogen/modules/attention.py", 'attn_implementation="flash_attention_2"')


BASE = {
    "tests/common_dtensor.py": """\
        import torch
        import torch.distributed as dist

        DEVICE_TYPE = "cuda" if torch.cuda.is_available() else "cpu"
        PG_BACKEND = "nccl" if DEVICE_TYPE == "cuda" else "gloo"


        class DTensorTestBase:
            @property
            def backend(self):
                return PG_BACKEND

            def init_pg(self):
                if "nccl" in self.backend:
                    torch.cuda.set_device(self.rank)
                dist.init_process_group(backend=self.backend, world_size=4, rank=self.rank)

            def destroy_pg(self):
                if self.backend == "nccl":
                    torch.cuda.synchronize()
                dist.destroy_process_group()
        """,
}


def test_code_under_a_nccl_backend_test_runs_only_with_nccl(tmp_path):
    root = write_tree(tmp_path, BASE)
    found = findings_in_tree(root)
    assert _at(found, root, "tests/common_dtensor.py", "torch.cuda.set_device(self.rank)") == {"warning"}
    assert _at(found, root, "tests/common_dtensor.py", "torch.cuda.synchronize()") == {"warning"}


def test_an_unguarded_set_device_beside_it_stays_an_error(tmp_path):
    text = BASE["tests/common_dtensor.py"].replace(
        "    dist.destroy_process_group()\n", "    dist.destroy_process_group()\n        torch.cuda.empty_cache()\n")
    root = write_tree(tmp_path, {"tests/common_dtensor.py": text})
    found = findings_in_tree(root)
    assert _at(found, root, "tests/common_dtensor.py", "torch.cuda.empty_cache()") == {"error"}


RNG = {
    "npucore/__init__.py": "",
    "npucore/random.py": """\
        import contextlib

        import torch
        from torch import _C
        from torch.cuda import _lazy_call


        def _set_cuda_rng_state(new_state, device=-1):
            if device == -1:
                device = torch.device('cuda')

            def cb():
                idx = device.index
                if idx is None:
                    idx = torch.cuda.current_device()
                torch.npu.default_generators[idx].set_state(new_state)

            _lazy_call(cb)


        def _get_cuda_rng_state():
            return torch.cuda.get_rng_state()


        class CheckpointWithoutOutput:
            def backward(self, ctx):
                _set_cuda_rng_state(ctx.fwd_cuda_rng_state)
                return _get_cuda_rng_state()
        """,
}


def test_a_cuda_named_helper_that_sets_npu_generators_is_not_a_cuda_helper(tmp_path):
    root = write_tree(tmp_path, RNG)
    found = findings_in_tree(root)
    assert "NPU039" not in _codes_at(found, root, "npucore/random.py", "_set_cuda_rng_state(ctx.fwd")
    assert "NPU039" in _codes_at(found, root, "npucore/random.py", "return _get_cuda_rng_state()")


SHIMMED = {
    "npuplug/__init__.py": "",
    "npuplug/megatron_adaptor.py": """\
        from torch_npu.contrib import transfer_to_npu  # noqa: F401

        from npuplug.recompute import RecomputeHook
        from npuplug.grad_clip import clip_grad_norm
        """,
    "npuplug/recompute.py": """\
        import torch


        class RecomputeHook:
            def __init__(self, get_cuda_rng_tracker_func):
                self.get_cuda_rng_tracker = get_cuda_rng_tracker_func

            def restore(self, states):
                self.get_cuda_rng_tracker().set_states(states)
                torch.cuda.set_rng_state(states["default"])
        """,
    "npuplug/grad_clip.py": """\
        import torch

        try:
            from transformer_engine.pytorch.optimizers import multi_tensor_applier, multi_tensor_scale

            scale_impl = multi_tensor_scale
        except ImportError:
            from megatron.core.utils import local_multi_tensor_applier, local_multi_tensor_scale

            multi_tensor_applier = local_multi_tensor_applier
            scale_impl = local_multi_tensor_scale


        def clip_grad_norm(grads, coeff):
            dummy = torch.zeros(1, dtype=torch.int, device="cuda")
            multi_tensor_applier(scale_impl, dummy, [grads, grads], coeff)
        """,
}


def test_under_the_shim_a_cuda_named_tracker_is_nothing_and_a_guarded_te_import_is_the_fallback(tmp_path):
    root = write_tree(tmp_path, SHIMMED)
    found = findings_in_tree(root)
    assert "NPU039" not in _codes_at(found, root, "npuplug/recompute.py", "self.get_cuda_rng_tracker().set_states")
    assert _at(found, root, "npuplug/recompute.py", "torch.cuda.set_rng_state") == {"info"}
    assert _at(found, root, "npuplug/grad_clip.py", "from transformer_engine") == {"info"}
    assert _at(found, root, "npuplug/grad_clip.py", "multi_tensor_applier(scale_impl") <= {"info"}


def test_without_the_shim_the_guarded_te_import_stays_a_warning(tmp_path):
    files = {**SHIMMED, "npuplug/megatron_adaptor.py": SHIMMED["npuplug/megatron_adaptor.py"].replace(
        "from torch_npu.contrib import transfer_to_npu  # noqa: F401\n", "")}
    root = write_tree(tmp_path, files)
    found = findings_in_tree(root)
    assert _at(found, root, "npuplug/grad_clip.py", "from transformer_engine") == {"warning"}
    assert "NPU039" in _codes_at(found, root, "npuplug/recompute.py", "self.get_cuda_rng_tracker().set_states")


TRITON = {
    "kern/__init__.py": "",
    "kern/ops/__init__.py": "",
    "kern/ops/triton/__init__.py": "",
    "kern/ops/triton/utils.py": """\
        import triton
        import triton.language.extra.libdevice as tldevice


        def fast_exp(x):
            return tldevice.exp(x)


        def get_autotune_config(multibuffer_list=(True, False), block_list=(64, 128)):
            return [
                triton.Config({"BLOCK": b}, multibuffer=m, enable_hivm_auto_cv_balance=True)
                for m in multibuffer_list for b in block_list
            ]
        """,
    "kern/ops/chunk.py": """\
        import triton
        import triton.language as tl

        from kern.ops.triton.utils import get_autotune_config


        @triton.autotune(configs=get_autotune_config(multibuffer_list=(False,)), key=["T"])
        @triton.jit
        def chunk_fwd_kernel(x_ptr, y_ptr, T, BLOCK: tl.constexpr):
            offs = tl.arange(0, BLOCK)
            tl.store(y_ptr + offs, tl.load(x_ptr + offs) * 2)
        """,
}


def test_the_config_builder_of_a_triton_ascend_module_is_not_cuda_kernel_code(tmp_path):
    root = write_tree(tmp_path, TRITON)
    found = findings_in_tree(root)
    assert not any(p == "kern/ops/chunk.py" and c == "NPU320" for p, _n, c in found)


def test_the_config_builder_of_a_plain_triton_module_is_still_reported(tmp_path):
    plain = TRITON["kern/ops/triton/utils.py"].replace(", multibuffer=m, enable_hivm_auto_cv_balance=True", "") \
        .replace("multibuffer_list=(True, False)", "stages_list=(2, 3)").replace("for m in multibuffer_list", "for m in stages_list")
    chunk = TRITON["kern/ops/chunk.py"].replace("multibuffer_list=(False,)", "stages_list=(2,)")
    root = write_tree(tmp_path, {**TRITON, "kern/ops/triton/utils.py": plain, "kern/ops/chunk.py": chunk})
    found = findings_in_tree(root)
    assert "NPU320" in _codes_at(found, root, "kern/ops/chunk.py", "from kern.ops.triton.utils import")


LLM = {
    "llmnpu/__init__.py": "",
    "llmnpu/megatron_adaptor.py": """\
        from torch_npu.contrib import transfer_to_npu  # noqa: F401

        from llmnpu.te import patch_transformer_engine

        patch_transformer_engine()
        """,
    "llmnpu/te.py": """\
        def patch_transformer_engine():
            pass
        """,
    "pretrain_gpt.py": """\
        import llmnpu.megatron_adaptor  # noqa: F401
        from megatron.training import pretrain


        def main():
            pretrain()


        if __name__ == "__main__":
            main()
        """,
    "tools/convert_ckpt.py": """\
        import argparse


        def main():
            parser = argparse.ArgumentParser()
            parser.add_argument("--load-dir")
            print(parser.parse_args())


        if __name__ == "__main__":
            main()
        """,
    "examples/qwen3/pretrain_qwen3_8b_A5.sh": """\
        #!/bin/bash
        export CUDA_DEVICE_MAX_CONNECTIONS=1
        NPUS_PER_NODE=16

        torchrun --nproc_per_node $NPUS_PER_NODE pretrain_gpt.py \\
            --transformer-impl transformer_engine \\
            --use-flash-attn \\
            --bf16
        """,
    "examples/qwen3/convert_qwen3_hf2mcore.sh": """\
        # set the ascend-toolkit path to your installation
        source /usr/local/Ascend/ascend-toolkit/set_env.sh
        export CUDA_DEVICE_MAX_CONNECTIONS=1

        python tools/convert_ckpt.py --load-dir ./model_from_hf/qwen3
        """,
    "examples/gpu/convert_qwen3_hf2mcore.sh": """\
        export CUDA_DEVICE_MAX_CONNECTIONS=1
        export CUDA_VISIBLE_DEVICES=0,1

        python tools/convert_ckpt.py --load-dir ./model_from_hf/qwen3
        """,
}


def test_a_recipe_whose_entry_loads_the_adaptor_keeps_no_transformer_engine_error(tmp_path):
    root = write_tree(tmp_path, LLM)
    found = findings_in_tree(root)
    rel = "examples/qwen3/pretrain_qwen3_8b_A5.sh"
    assert _at(found, root, rel, "--transformer-impl transformer_engine") == {"info"}
    assert _at(found, root, rel, "CUDA_DEVICE_MAX_CONNECTIONS") == {"info"}


def test_max_connections_in_an_ascend_script_is_kept_for_megatron_but_not_in_a_plain_one(tmp_path):
    root = write_tree(tmp_path, LLM)
    found = findings_in_tree(root)
    assert _at(found, root, "examples/qwen3/convert_qwen3_hf2mcore.sh", "CUDA_DEVICE_MAX_CONNECTIONS") == {"info"}
    assert _at(found, root, "examples/gpu/convert_qwen3_hf2mcore.sh", "CUDA_DEVICE_MAX_CONNECTIONS") - {"info"}


def test_without_the_adaptor_the_recipe_keeps_its_transformer_engine_error(tmp_path):
    entry = LLM["pretrain_gpt.py"].replace("import llmnpu.megatron_adaptor  # noqa: F401\n", "")
    root = write_tree(tmp_path, {**LLM, "pretrain_gpt.py": entry})
    found = findings_in_tree(root)
    assert _at(found, root, "examples/qwen3/pretrain_qwen3_8b_A5.sh", "--transformer-impl transformer_engine") == \
        {"error"}


def test_an_fp8_switch_read_as_a_test_configures_nothing_but_passing_it_on_still_does(tmp_path):
    root = write_tree(tmp_path, {
        "mmcore/models/block.py": """\
            from megatron.core.enums import Fp8Recipe
            from megatron.core.transformer import TransformerConfig


            class VisionTransformerBlock:
                def forward(self, hidden_states, rotary_pos_emb=None):
                    use_inner_fp8_context = self.config.fp8 and self.config.fp8_recipe != Fp8Recipe.delayed
                    if self.config.fp8:
                        hidden_states = self._pad_for_fp8(hidden_states)
                    return hidden_states, use_inner_fp8_context


            def vision_config(args):
                return TransformerConfig(num_layers=args.num_layers, fp8=args.fp8, fp8_recipe=args.fp8_recipe)
            """,
    })
    found = findings_in_tree(root)
    rel = "mmcore/models/block.py"
    assert _at(found, root, rel, "use_inner_fp8_context = self.config.fp8") == {"info"}
    assert _at(found, root, rel, "if self.config.fp8:") == {"info"}
    assert "error" in _at(found, root, rel, "TransformerConfig(num_layers")


def test_torch_in_a_documentation_build_needs_no_torch_npu(tmp_path):
    root = write_tree(tmp_path, {
        "docs/requirements-docs.txt": """\
            sphinx==7.4.7
            sphinx-book-theme==1.1.4
            myst-parser==3.0.1

            # autodoc imports the package: the CPU wheel is enough
            -f https://download.pytorch.org/whl/cpu
            torch
            """,
        "requirements.txt": """\
            torch==2.5.1
            transformers>=4.45
            """,
    })
    found = findings_in_tree(root)
    assert not any(p == "docs/requirements-docs.txt" and c == "NPU011" for p, _n, c in found)
    assert ("requirements.txt", 1, "NPU011") in found


def test_a_cuda_test_that_chooses_between_equal_values_is_not_reported(tmp_path):
    root = write_tree(tmp_path, {
        "videogen/pipeline.py": """\
            import torch


            class Annotator:
                def __init__(self, cfg):
                    self.device = 'cpu' if torch.cuda.is_available() else 'cpu'
                    self.fallback = 'cuda' if torch.cuda.is_available() else 'cpu'

                def annotate(self, frames):
                    return frames.to(self.fallback)
            """,
    })
    found = findings_in_tree(root)
    assert _at(found, root, "videogen/pipeline.py", "self.device = 'cpu'") == set()
    assert "error" in _at(found, root, "videogen/pipeline.py", "self.fallback = 'cuda'")


def test_an_fp8_recipe_named_for_the_950_product_and_a_triton_kernel_of_an_ascend_package(tmp_path):
    recipe = """\
        #!/bin/bash
        export CUDA_DEVICE_MAX_CONNECTIONS=1
        NPUS_PER_NODE=8

        torchrun --nproc_per_node $NPUS_PER_NODE pretrain_gpt.py \\
            --fp8-format e4m3 \\
            --fp8-recipe mxfp8 \\
            --bf16
        """
    root = write_tree(tmp_path, {
        **LLM,
        "tests/poc/pretrain_qwen3_1.7b_8k_fp8_A5_ptd.sh": recipe,
        "tests/poc/pretrain_qwen3_1.7b_8k_fp8_ptd.sh": recipe,
        "llmnpu/models/gated_delta.py": """\
            import torch
            from mindspeed.ops.triton.l2norm import l2norm_fwd
            from fla.ops.triton.utils import chunk_local_cumsum


            def gated_delta(q, k):
                return l2norm_fwd(q), chunk_local_cumsum(k, 64)
            """,
    })
    found = findings_in_tree(root)
    assert _at(found, root, "tests/poc/pretrain_qwen3_1.7b_8k_fp8_A5_ptd.sh", "--fp8-format e4m3") == {"info"}
    assert _at(found, root, "tests/poc/pretrain_qwen3_1.7b_8k_fp8_ptd.sh", "--fp8-format e4m3") == {"error"}
    assert _at(found, root, "llmnpu/models/gated_delta.py", "from mindspeed.ops.triton.l2norm") == {"info"}
    assert _at(found, root, "llmnpu/models/gated_delta.py", "from fla.ops.triton.utils") == {"warning"}
