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


# --- a project's own NCCL binding module, reached by a relative import (NPU137) ---------------------------------

BMTRAIN_OPS = """\
import torch
from ..global_var import config
from ..nccl import allGather as ncclAllGather, recv
from ..nccl import allReduce as ncclAllReduce
from ..nccl import send as ncclSend
from ..nccl import recv as ncclRecv
from ..nccl import commCount,commRank,NCCLCommunicator
DTYPE_LIST = [
    torch.float64,
    torch.float32,
]
def send_activations(hidden_state, next_rank, comm):
    send_meta(hidden_state, next_rank, comm)
    ncclSend(hidden_state.storage(), next_rank, comm)

def recv_activations(prev_rank, comm):
    dtype, shape = recv_meta(prev_rank, comm)
    hidden_state = torch.empty(shape, dtype=dtype, device="cuda")
    ncclRecv(hidden_state.storage(), prev_rank, comm)
    return hidden_state

def all_reduce(x, op, comm):
    out = torch.empty_like(x)
    ncclAllReduce(x.storage(), out.storage(), op, comm)
    return out
"""


def test_bmtrain_relative_nccl_imports_and_calls_are_flagged():
    # bmtrain/distributed/ops.py (test6): the NCCL bindings of bmtrain.nccl, imported relatively and called
    findings = _findings(BMTRAIN_OPS, "bmtrain/distributed/ops.py")
    assert _lines(findings, "NPU137") == [3, 4, 5, 6, 7, 14, 19, 24]
    hit = next(f for f in findings if f.code == "NPU137")
    assert hit.category == "distributed" and hit.severity == "error"
    # `from ..global_var import config` names no NCCL module: nothing bound, nothing reported
    assert not [f for f in findings if f.line == 2]


def test_relative_imports_of_other_modules_stay_unbound():
    # a relative import of an ordinary module, and an HCCL module beside it, are not NCCL bindings
    findings = _findings("""\
        from .hccl import allReduce as hcclAllReduce
        from .utils import nccl_like_name
        from ..tests.nccl import run_case

        def step(x, comm):
            hcclAllReduce(x, x, "sum", comm)
            return nccl_like_name(x)
        """, "pkg/distributed/ops.py")
    assert _lines(findings, "NPU137") == []


def test_torch_and_cupy_nccl_stay_with_their_own_rules():
    findings = _findings("""\
        from torch.cuda import nccl
        from cupy.cuda import nccl as cupy_nccl
        version = nccl.version()
        """)
    assert _lines(findings, "NPU137") == []


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
