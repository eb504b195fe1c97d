"""Families missed on every recall split (t14f, issue 14; every split named here is tuned on, see docs/recall.md
"t14f: families across every split"): each with real spellings that must be flagged and near misses that must not."""
from __future__ import annotations

import textwrap

from auditor.rules import load_rules
from auditor.static import StaticEngine

ENGINE = StaticEngine(load_rules())


def _findings(src: str, name: str = "example.py") -> list:
    result = ENGINE.analyze_bytes(textwrap.dedent(src).encode(), name)
    assert result.error is None
    return result.findings


def _lines(findings: list, code: str) -> list[int]:
    return sorted({f.line for f in findings if f.code == code})


# --- relative imports through a module a segment rule names -----------------------------------------------------

def test_relative_import_through_a_triton_package_resolves_for_npu373():
    # mamba_ssm/modules/mamba2.py: the package's own `ops.triton` kernels, imported relatively
    findings = _findings("""\
        import torch
        from ..ops.triton.layernorm_gated import RMSNorm as RMSNormGated
        from ..utils.generation import InferenceParams

        norm = RMSNormGated(256, eps=1e-5)
        """, "mamba_ssm/modules/mamba2.py")
    assert _lines(findings, "NPU373") == [2, 5]
    assert not [f for f in findings if f.line == 3]


def test_module_named_nccl_is_not_a_binding_by_name():
    # veScale's legacy/vescale/emulator/nccl is a pure-Python NCCL emulator (heldout5): a module-name rule for
    # `....nccl....` was tried (t14f) and dropped; relative imports through unnamed modules stay unbound
    findings = _findings("""\
        from ..nccl.constants import NCCL_PROTO_SIMPLE
        from .utils import helper
        mode = NCCL_PROTO_SIMPLE
        """, "vescale/emulator/all_reduce.py")
    assert [f for f in findings if f.severity == "error"] == []


# --- a project's own Triton kernel module (NPU330) ------------------------------------------------------------

def test_xformers_tiled_matmul_relative_triton_import_and_launch():
    # xformers/ops/tiled_matmul.py (test4): the launcher comes from the package's own `_triton` kernels module
    findings = _findings("""\
        def tiled_matmul_fwd(a, b, ms, ns, ks, out):
            if (
                len(ms) <= 3
                and len(ks) <= 3
                and _should_use_triton(a[0][0].device, a[0][0].dtype)
            ):
                from ._triton.tiled_matmul_kernels import _launch_triton_matmul

                _launch_triton_matmul(a, b, out, ms, ns, ks)
            else:
                for tile_m in range(len(ms)):
                    pass
        """, "xformers/ops/tiled_matmul.py")
    assert _lines(findings, "NPU330") == [7, 9]
    assert all(f.category == "kernel" for f in findings if f.code == "NPU330")


def test_aqlm_kernel_selector_triton_kernel_import():
    # aqlm/inference_kernels/kernel_selector.py (test6)
    findings = _findings("""\
        def get_forward_pass_kernel(codebooks, optimize_for_training):
            num_codebooks, codebook_size, out_group_size, in_group_size = codebooks.shape[0:4]
            if codebooks.device.type == "cuda" and not optimize_for_training:
                from .triton_kernel import triton_matmul

                return triton_matmul
            return None
        """, "aqlm/inference_kernels/kernel_selector.py")
    assert _lines(findings, "NPU330") == [4, 6]   # the import and the kernel handed back to the caller


def test_torch_triton_probe_is_not_a_project_kernel_module():
    findings = _findings("""\
        from torch.utils._triton import has_triton
        from .cuda_utils import get_device_capability
        USE = has_triton()
        """)
    assert _lines(findings, "NPU330") == []


# --- CuTe DSL launches (NPU331) --------------------------------------------------------------------------------

def test_auto_round_cute_launch_is_flagged():
    # auto_round_extension/cuda/cute_nvfp4_e5m3.py (test4)
    findings = _findings("""\
        def _make_qdq_kernel():
            import cutlass
            import cutlass.cute as cute

            @cute.jit
            def launch_qdq(input_tensor: cute.Tensor, output_tensor: cute.Tensor):
                groups = input_tensor.shape[0]
                qdq_kernel(input_tensor, output_tensor).launch(
                    grid=((groups + _THREADS_PER_BLOCK - 1) // _THREADS_PER_BLOCK, 1, 1),
                    block=(_THREADS_PER_BLOCK, 1, 1),
                )

            return launch_qdq
        """)
    assert _lines(findings, "NPU331") == [8]
    assert next(f for f in findings if f.code == "NPU331").severity == "error"


def test_gradio_and_lightning_launch_are_not_kernel_launches():
    # axolotl/cli/inference.py, litgpt/finetune/lora.py
    findings = _findings("""\
        demo.launch(
            footer_links=["gradio", "settings"],
            share=cfg.get("gradio_share", True),
            server_name=cfg.get("gradio_server_name", "127.0.0.1"),
        )
        fabric.launch(main, devices, seed, config)
        """)
    assert _lines(findings, "NPU331") == []


# --- transformers' FlashAttention-2 plumbing (NPU332) ----------------------------------------------------------

def test_ring_flash_attn_hf_adapter():
    # ring_flash_attn/adapters/hf_adapter.py (test6): imports the module and replaces _flash_attention_forward;
    # its own `..llama3_flash_attn_varlen` module is flash-attn (NPU324's `*.*flash_attn*.*`, now through a
    # relative import too)
    findings = _findings("""\
        import torch.distributed as dist
        import transformers
        import transformers.modeling_flash_attention_utils
        from ..llama3_flash_attn_varlen import (
            llama3_flash_attn_varlen_func,
            llama3_flash_attn_prepare_cu_seqlens,
        )


        def substitute_hf_flash_attn(process_group: dist.ProcessGroup, heads_k_stride: int):
            old_flash_attention_forward = (
                transformers.modeling_flash_attention_utils._flash_attention_forward
            )
            transformers.modeling_flash_attention_utils._flash_attention_forward = (
                create_ring_flash_attention_forward(process_group, heads_k_stride)
            )
        """, "ring_flash_attn/adapters/hf_adapter.py")
    assert _lines(findings, "NPU332") == [3, 12, 14]
    assert {f.category for f in findings if f.line in (5, 6)} == {"attention"}


def test_flash_attention_kwargs_type_is_not_reported():
    findings = _findings("""\
        from transformers.modeling_flash_attention_utils import FlashAttentionKwargs
        from transformers.processing_utils import Unpack

        def forward(self, hidden_states, **kwargs: Unpack[FlashAttentionKwargs]):
            return hidden_states
        """)
    assert _lines(findings, "NPU332") == []
