"""Classes mined from the t11b tuning sample (bench/precision/tuned_t11b: LightX2V, Primus, FlagEmbedding,
MInference, llmc), each on code shaped like the tree it came from, with the CUDA-only spelling beside it that must
keep its finding."""
from __future__ import annotations

import pytest

from auditor.rules import load_rules
from auditor.static.engine import StaticEngine
from static_snippets import findings_by_line as _by_line, findings_in_tree as _found, write_source as _write


@pytest.fixture(scope="module")
def engine():
    return StaticEngine(load_rules())


def _sev(by_line: dict, line: int, code: str) -> str | None:
    return next((f.severity for f in by_line.get(line, []) if f.code == code), None)


# Primus tests/unit_tests/backends/megatron/diffusion/test_fused_delayed_scale_update.py: the whole module is
# skipped without CUDA through `pytestmark`, so its tests' CUDA tensors are what a CUDA-marked test chose
_PYTESTMARK = '''
import pytest
import torch

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="requires GPU")

DEVICE = "cuda:0"


@pytest.mark.parametrize("algo", ["max", "most_recent"])
def test_fused_matches_reference(algo):
    scales_ref = torch.ones(3, 16, dtype=torch.float32, device=DEVICE)
    history = torch.rand(3, 16, 4, device="cuda")
    torch.cuda.synchronize()
    assert scales_ref.shape[0] == history.shape[0]
'''

_NO_MARK = _PYTESTMARK.replace('pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="requires GPU")',
                               'pytestmark = pytest.mark.slow')


def test_module_pytestmark_for_cuda_makes_its_tests_warnings(engine):
    marked = _by_line(engine, _PYTESTMARK, "tests/unit_tests/test_fused_delayed_scale_update.py")
    # the module constant is still reported; read only by the CUDA-marked tests, it is a warning since t11y
    # (heldout16's labels: a device list that only feeds tests skipped without CUDA fails nothing on Ascend)
    assert _sev(marked, 7, "NPU003") == "warning"
    assert _sev(marked, 12, "NPU003") is None   # device=DEVICE: a use, no finding of its own (lead decision 4)
    assert _sev(marked, 13, "NPU003") == "warning"          # device="cuda"
    assert _sev(marked, 14, "NPU002") == "warning"          # torch.cuda.synchronize()
    # a module marked for something else keeps its errors
    plain = _by_line(engine, _NO_MARK, "tests/unit_tests/test_fused_delayed_scale_update.py")
    assert _sev(plain, 13, "NPU003") == "error"
    assert _sev(plain, 14, "NPU002") == "error"


def test_pytestmark_list_and_class_level(engine):
    src = '''
    import pytest
    import torch


    class TestKernels:
        pytestmark = [pytest.mark.slow, pytest.mark.skipif(not torch.cuda.is_available(), reason="cuda")]

        def test_copy(self):
            x = torch.zeros(4).cuda()
            assert x.sum() == 0


    def test_outside():
        y = torch.zeros(4).cuda()
        assert y.sum() == 0
    '''
    by = _by_line(engine, src, "tests/test_kernels.py")
    assert _sev(by, 10, "NPU001") == "warning"      # in the marked class
    assert _sev(by, 15, "NPU001") == "error"        # a module-level test the class mark does not reach


# FlagEmbedding research/BGE_VL/eval/eval_fashioniq.py: faiss GPU cloning only when the model sits on CUDA
_FAISS = '''
import faiss
import torch


def build_index(model, embeddings, dim, index_factory="Flat"):
    faiss_index = faiss.index_factory(dim, index_factory, faiss.METRIC_INNER_PRODUCT)
    if model.device == torch.device("cuda"):
        co = faiss.GpuMultipleClonerOptions()
        co.useFloat16 = True
        faiss_index = faiss.index_cpu_to_all_gpus(faiss_index, co)
    faiss_index.add(embeddings)
    return faiss_index


def build_index_always(embeddings, dim):
    faiss_index = faiss.index_factory(dim, "Flat", faiss.METRIC_INNER_PRODUCT)
    co = faiss.GpuMultipleClonerOptions()
    return faiss.index_cpu_to_all_gpus(faiss_index, co)
'''


def test_device_compared_with_torch_device_cuda_is_a_gate(engine):
    by = _by_line(engine, _FAISS, "research/BGE_VL/eval/eval_fashioniq.py")
    assert _sev(by, 9, "NPU412") == "warning"       # behind `model.device == torch.device("cuda")`
    assert _sev(by, 18, "NPU412") == "error"        # not gated


# MInference experiments/benchmarks/benchmark_e2e_vllm.py: argparse lists the attention types a user picks from
_CHOICES = '''
import argparse

args = argparse.ArgumentParser()
args.add_argument("--attn_type", type=str, choices=["flash_attn", "minference"])
args.add_argument("--attn_implementation", type=str, default="flash_attention_3")
args = args.parse_args()
'''


def test_choices_list_options_not_a_selection(engine):
    by = _by_line(engine, _CHOICES, "experiments/benchmarks/benchmark_e2e_vllm.py")
    assert _sev(by, 5, "NPU386") is None            # choices=[...]: nothing selected
    assert _sev(by, 6, "NPU386") == "error"         # a default picks FlashAttention-3


# Primus v4_attention_kernels/_gluon_v2/dsa_bwd_dq_gluon.py: a Gluon kernel's `HAS_ROPE: gl.constexpr` parameter is
# an argument, not an optional-import flag; the Gluon code under `if HAS_ROPE:` keeps Gluon's error
_GLUON = '''
from triton.experimental import gluon
from triton.experimental.gluon import language as gl

try:
    import flash_attn
    HAS_FLASH = True
except ImportError:
    HAS_FLASH = False


@gluon.jit
def _dq_kernel(Q, DQ, BLOCK_H: gl.constexpr, D_ROPE: gl.constexpr, HAS_ROPE: gl.constexpr):
    acc = gl.zeros([BLOCK_H, D_ROPE], dtype=gl.float32, layout=None)
    if HAS_ROPE:
        dq_rope = gl.zeros([BLOCK_H, D_ROPE], dtype=gl.float32, layout=None)


def attention(q, k, v):
    if HAS_FLASH:
        return flash_attn.flash_attn_func(q, k, v)
    return None
'''


def test_kernel_constexpr_flag_is_not_an_import_guard(engine):
    by = _by_line(engine, _GLUON, "primus/kernels/_gluon_v2/dsa_bwd_dq_gluon.py")
    assert _sev(by, 14, "NPU373") == "error"
    assert _sev(by, 16, "NPU373") == "error"        # under `if HAS_ROPE:` (a parameter): still Gluon's error
    assert _sev(by, 21, "NPU340") == "warning"      # under `if HAS_FLASH:` (an import flag): a guarded use


# Primus primus/backends/megatron/patches/te_patches/bshd_layout_patches.py: a patch that probes a class of a
# guarded Transformer Engine import and skips itself when it is absent
_PROBE = '''
def patch_te_fmha_bshd_layout(ctx):
    try:
        from megatron.core.extensions import transformer_engine as te_ext
    except ImportError:
        return
    cls = getattr(te_ext, "TEDotProductAttention", None)
    if cls is None:
        return
    layer = te_ext.TEDotProductAttention(ctx.config, layer_number=1)
    return layer
'''


def test_getattr_with_none_default_is_a_probe(engine):
    by = _by_line(engine, _PROBE, "primus/backends/megatron/patches/te_patches/bshd_layout_patches.py")
    assert _sev(by, 7, "NPU432") is None            # getattr(te_ext, "X", None): a probe
    assert _sev(by, 10, "NPU432") is not None       # the class used: still reported


# Primus deepseek_v4_attention.py: a check that guards an AMD gfx950-only Gluon backend; examples/megatron/configs/
# MI355X/: configs for AMD Instinct parts
_GFX = '''
import torch


def _require_gfx950() -> None:
    if not torch.cuda.is_available():
        raise RuntimeError("the gluon backend requires a CUDA/HIP gfx950 (CDNA4) device")
    props = torch.cuda.get_device_properties(0)
    if "gfx950" not in props.gcnArchName:
        raise RuntimeError("gfx950 required")


def _require_device() -> None:
    if not torch.cuda.is_available():
        raise RuntimeError("no accelerator")
'''


def test_function_named_for_an_amd_architecture_is_rocm_code(engine):
    by = _by_line(engine, _GFX, "primus/backends/megatron/core/transformer/deepseek_v4_attention.py")
    assert _sev(by, 6, "NPU002") == "info"
    assert _sev(by, 14, "NPU002") == "error"


# Primus examples/mlperf/gpt_oss_20b/Dockerfile.runtime-v26.5: a ROCm image building ROCm TransformerEngine
_ROCM_DOCKERFILE = """\
ARG BASE_IMAGE=rocm/primus:v26.5@sha256:3040bf42974d791dd42de2e36b3c919a00869a5754cfc57a06b96d004c55eed1
FROM ${BASE_IMAGE}
RUN git clone --recursive https://github.com/ROCm/TransformerEngine.git && cd TransformerEngine && \\
    NVTE_ROCM_ARCH=gfx950 NVTE_USE_HIPBLASLT=1 PYTORCH_ROCM_ARCH=gfx950 \\
      python3 -m pip install --no-build-isolation --no-deps -v . && \\
    pip install transformer-engine
ENV CUDA_VISIBLE_DEVICES=0
"""


def test_dockerfile_on_a_rocm_image_is_another_backend(tmp_path):
    _write(tmp_path, "examples/mlperf/Dockerfile.runtime", _ROCM_DOCKERFILE)
    _write(tmp_path, "docker/Dockerfile", _ROCM_DOCKERFILE.replace(
        "rocm/primus:v26.5", "nvcr.io/nvidia/pytorch:24.05-py3"))
    _write(tmp_path, "docker/amd64/Dockerfile", _ROCM_DOCKERFILE.replace("rocm/primus:v26.5", "amd64/ubuntu:22.04"))
    found = _found(tmp_path)
    rocm = {s for (p, _, _), s in found.items() if p == "examples/mlperf/Dockerfile.runtime"}
    nvidia = {s for (p, _, _), s in found.items() if p == "docker/Dockerfile"}
    plain = {s for (p, _, _), s in found.items() if p == "docker/amd64/Dockerfile"}
    assert rocm == {"info"}
    assert "error" in nvidia or "warning" in nvidia
    assert "error" in plain or "warning" in plain     # amd64 is a CPU architecture, not ROCm


def test_tensor_fusion_is_communication_not_a_kernel(tmp_path):
    _write(tmp_path, "configs/wan_dist.json", """\
{
  "parallel": {"seq_p_size": 8, "seq_p_attn_type": "ulysses", "seq_p_tensor_fusion": true},
  "masked_softmax_fusion": true
}
""")
    found = _found(tmp_path)
    assert ("configs/wan_dist.json", 2, "NPU364") not in found
    assert found.get(("configs/wan_dist.json", 3, "NPU364")) == "info"


# LightX2V: the CUDA kernel package `lightx2v_kernel/` (csrc/*.cu, its own tests) beside `lightx2v_kernel_xpu/`
# (SYCL kernels); the model code runs on Ascend through lightx2v_platform's NPU ops
_KERNEL_TEST = '''
import torch
from lightx2v_kernel.gemm import cutlass_scaled_mxfp8_mm


def test_accuracy(m, k, n):
    x = torch.randn(m, k, dtype=torch.bfloat16, device="cuda")
    torch.cuda.synchronize()
    return cutlass_scaled_mxfp8_mm(x, x)
'''


def test_cuda_kernel_package_beside_its_xpu_twin_is_a_platform_member(tmp_path):
    _write(tmp_path, "lightx2v_kernel/csrc/gemm/mxfp8_scaled_mm.cu", "__global__ void k() {}\n")
    _write(tmp_path, "lightx2v_kernel/test/mxfp8_mxfp8/test_bench.py", _KERNEL_TEST)
    _write(tmp_path, "lightx2v_kernel_xpu/csrc/sdp.cpp", "int f() { return 0; }\n")
    # the same package without a twin, and a twin-named folder without CUDA sources
    _write(tmp_path, "fastkernels/csrc/gemm.cu", "__global__ void k() {}\n")
    _write(tmp_path, "fastkernels/test/test_bench.py", _KERNEL_TEST)
    _write(tmp_path, "utils/test_bench.py", _KERNEL_TEST)
    _write(tmp_path, "utils_npu/helpers.py", "import torch_npu\n")
    found = _found(tmp_path)
    paired = {s for (p, _, c), s in found.items() if p == "lightx2v_kernel/test/mxfp8_mxfp8/test_bench.py"}
    alone = {s for (p, _, c), s in found.items() if p == "fastkernels/test/test_bench.py"}
    no_cuda = {s for (p, _, c), s in found.items() if p == "utils/test_bench.py"}
    assert paired == {"info"}
    assert "error" in alone
    assert "error" in no_cuda
