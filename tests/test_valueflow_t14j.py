"""t14j: value flow from CUDA-bound names inside one file (auditor/static/valueflow.py), on code shaped like the
real code bases it was written for (bmtrain's NCCL ops, lightseq's op builder, nvitop's NVML bindings, yunchang's
flash-attn selector) and on the multi-backend shapes it must leave alone."""
from __future__ import annotations

import textwrap

from auditor.rules import load_rules
from auditor.static import StaticEngine
from auditor.static.valueflow import OWN_CODES, spelled

ENGINE = StaticEngine(load_rules())
FLOW = OWN_CODES


def _findings(code: str, rel: str):
    result = ENGINE.analyze_bytes(textwrap.dedent(code).encode(), rel)
    assert result.error is None
    return result.findings


def _flow_lines(code: str, rel: str) -> dict[int, str]:
    out: dict[int, str] = {}
    for f in _findings(code, rel):
        if f.code in FLOW:
            assert f.line not in out, f"two value-flow findings on line {f.line}"
            assert f.severity == "info" and f.fix == "none"
            out[f.line] = f.code
    return out


BMTRAIN_OPS = '''\
import torch
from ..nccl import allGather as ncclAllGather, recv
from ..nccl import send as ncclSend
from ..nccl import commCount, commRank, NCCLCommunicator


def send_activations(hidden_state, next_rank, comm):
    """Sends the hidden state with ncclSend over bmtrain's communicator."""
    # ncclSend is point-to-point
    ncclSend(hidden_state.storage(), next_rank, comm)


def all_gather(x: torch.Tensor, comm: NCCLCommunicator):
    world_size = commCount(comm)
    out = torch.empty((world_size,) + x.shape, dtype=x.dtype, device=x.device)
    ncclAllGather(
        x.storage(),
        out.storage(),
        comm
    )
    return out


def log_rank(comm):
    print("rank is", commRank(comm))
'''


def test_project_nccl_bindings_and_their_uses():
    lines = _flow_lines(BMTRAIN_OPS, "bmtrain/distributed/ops.py")
    # the imports from the project's `nccl` module, and each later line that calls an imported name
    assert {2, 3, 4, 10, 13, 14, 16, 25} <= set(lines)
    assert set(lines.values()) == {"NPU141"}
    # docstring and comment lines that only mention NCCL, and the arguments' continuation lines: nothing
    assert not {8, 9, 17, 18, 19} & set(lines)


def test_message_names_the_binding_line():
    f = next(f for f in _findings(BMTRAIN_OPS, "bmtrain/distributed/ops.py") if f.code in FLOW and f.line == 10)
    assert "line 3" in f.message and f.data["bound_at"] == 3 and f.category == "distributed"


def test_use_beside_an_npu_path_is_quiet():
    code = '''\
    import torch
    import torch_npu
    from ..nccl import send as ncclSend


    def send(t, peer, comm):
        if t.device.type == "npu":
            torch.distributed.send(t, peer)
        else:
            ncclSend(t.storage(), peer, comm)
    '''
    lines = _flow_lines(code, "bmtrain/distributed/p2p.py")
    assert 10 not in lines


def test_fallback_binding_and_shadowing_parameter_stop_the_flow():
    code = '''\
    import torch

    try:
        from .triton_utils import flatten_varlen_lse
    except ImportError:
        flatten_varlen_lse = torch.flatten


    def forward(lse, cu_seqlens):
        return flatten_varlen_lse(lse, cu_seqlens)


    def helper(ncclAllGather):
        return ncclAllGather(1)
    '''
    lines = _flow_lines(code, "yunchang/ring/varlen.py")
    assert 4 in lines            # the import of the project's Triton module is reported itself
    assert 10 not in lines       # a portable fallback binds the name too: its uses have a path without Triton
    assert 14 not in lines


def test_op_builder_extension_chain():
    code = '''\
    import torch
    from torch.autograd import Function

    from lightseq.training.ops.pytorch.builder import TransformerBuilder

    transformer_cuda_module = TransformerBuilder().load()


    class LSTransformerEncoderFunc(Function):
        @staticmethod
        def forward(ctx, input, input_mask, parameters, config):
            cuda_module = transformer_cuda_module
            forward_func = (
                cuda_module.transformer_encoder_layer_fw_fp16
                if config.fp16
                else cuda_module.transformer_encoder_layer_fw_fp32
            )
            (output,) = forward_func(config.layer_id, input, input_mask, config.training)
            return output
    '''
    lines = _flow_lines(code, "lightseq/training/ops/pytorch/transformer_encoder_layer.py")
    assert {6, 12, 14, 16, 18} <= set(lines)
    assert set(lines.values()) == {"NPU320"}


def test_deepspeed_builder_is_left_to_its_own_rule():
    code = '''\
    from deepspeed.ops.op_builder import FusedAdamBuilder

    fused_adam_cuda = FusedAdamBuilder().load()


    def step(bufs):
        fused_adam_cuda.adam(bufs)
    '''
    assert _flow_lines(code, "mypkg/optim.py") == {}


def test_instance_attribute_bound_to_a_flagged_module():
    code = '''\
    import xformers.ops as xops
    from torch import nn


    class Attention(nn.Module):
        def __init__(self):
            super().__init__()
            self.attn_fn = xops.memory_efficient_attention

        def forward(self, q, k, v):
            out = self.attn_fn(q, k, v)
            return out
    '''
    lines = _flow_lines(code, "mypkg/attention.py")
    assert lines == {11: "NPU321"}


def test_parenthesised_project_import_reports_each_alias_line():
    code = '''\
    from gpuwatch.api import (
        NA,
        libcuda,
        libcudart,
        libnvml,
    )


    def power(handle):
        value = libnvml.nvmlQuery("nvmlDeviceGetPowerUsage", handle)
        if not libnvml.nvmlCheckReturn(value, int):
            return NA
        return value
    '''
    # (nvitop's shape: the project's own ctypes bindings of the CUDA driver, runtime and NVML)
    lines = _flow_lines(code, "gpuwatch/tui/library/device.py")
    assert lines == {3: "NPU070", 4: "NPU070", 5: "NPU460", 10: "NPU460", 11: "NPU460"}


def test_third_party_spelled_names_are_not_first_party():
    code = '''\
    from transformers.utils import is_flash_attn_2_available
    from mypkg.layers import build_norm


    def attn_impl():
        return "flash_attention_2" if is_flash_attn_2_available() else "sdpa"
    '''
    lines = _flow_lines(code, "mypkg/model.py")
    assert 1 not in lines and 6 not in lines and 2 not in lines


def test_spelling():
    assert spelled("ncclAllGather") == "distributed"
    assert spelled("ProcessGroupBabyNCCL") == "distributed"
    assert spelled("select_flash_attn_impl") == "attention"
    assert spelled("HAS_FLASH_ATTN") == "attention"
    assert spelled("is_apex_available") == "apex"
    assert spelled("libnvml") == "third_party"
    assert spelled("libcudart") == "device"
    assert spelled("cuda_kernel") == "kernel" and spelled("triton_utils") == "kernel"
    assert spelled("_cuda_ctc_decoder") == "kernel"
    for plain in ("cuda_utils", "apexlike", "get_device", "attention", "utils", "device_type"):
        assert spelled(plain) is None, plain


def test_bad_input_never_raises():
    deep = "x = " + "(" * 150 + "1" + ")" * 150 + "\n"
    assert _findings("from ..nccl import send as ncclSend\n" + deep + "ncclSend(x)\n", "pkg/a.py") is not None


def _write(root, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))


ATTN = '''\
import torch
from .triton_utils import flatten_varlen_lse


def forward(lse, cu_seqlens):
    return flatten_varlen_lse(lse, cu_seqlens)
'''


def test_an_audited_module_decides_over_the_spelling(tmp_path):
    """In a tree run the imported module is audited: a `triton_utils.py` that holds only torch code (no Triton) is
    not CUDA-specific there, and the findings its name alone placed are dropped; a real NCCL binding keeps them
    (the cross-file pass's own finding takes the line)."""
    from auditor.runner import run_static

    root = tmp_path / "proj"
    _write(root, {
        "pkg/__init__.py": "", "pkg/ring/__init__.py": "", "pkg/ring/attn.py": ATTN,
        "pkg/ring/triton_utils.py": "import torch\n\n\ndef flatten_varlen_lse(lse, cu_seqlens):\n"
                                    "    return torch.cat([lse[i] for i in range(len(cu_seqlens) - 1)])\n",
        "pkg/nccl/__init__.py": "import ctypes\n\nlib = ctypes.CDLL('libnccl.so.2')\n\n\n"
                                "def send(buf, peer, comm):\n    lib.ncclSend(buf, peer, comm)\n",
        "pkg/distributed/__init__.py": "",
        "pkg/distributed/ops.py": BMTRAIN_OPS,
    })
    assert _flow_lines(ATTN, "pkg/ring/attn.py") == {2: "NPU320", 6: "NPU320"}     # one file alone: the spelling
    run = run_static([root], jobs=1)
    by_path = {r.path: r.findings for r in run.results}
    assert not [f for f in by_path["pkg/ring/attn.py"] if f.code in FLOW or f.code.startswith("NPU32")]
    ops_lines = {f.line for f in by_path["pkg/distributed/ops.py"]}
    assert {3, 10, 16} <= ops_lines


def test_npu_extension_bindings_are_not_seeds():
    code = '''\
    from torch.autograd import Function

    import mx_driving._C


    class ScatterMeanFunction(Function):
        @staticmethod
        def forward(ctx, src, index, out=None, dim=0):
            func = mx_driving._C.npu_scatter_mean
            res, count = func(src, index, out, dim)
            return res
    '''
    assert _flow_lines(code, "mx_driving/ops/scatter_mean.py") == {}


def test_values_and_test_helpers_are_not_seeds():
    code = '''\
    import cutlass
    from tests.weight_update.test_nccl_integration import _make_local_scheduler


    def entropy_kernel_config(use_fp32):
        calc_dtype = cutlass.Float32
        return calc_dtype, _make_local_scheduler()
    '''
    assert _flow_lines(code, "roll/fused_entropy.py") == {}


def test_a_choice_between_backends_is_not_a_seed():
    code = '''\
    import triton


    def bench(fn, device):
        do_bench = (
            triton.musa_testing.do_bench
            if device == "musa"
            else triton.testing.do_bench
        )
        return do_bench(fn, warmup=10, rep=100)
    '''
    assert 10 not in _flow_lines(code, "benchmark/performance_utils.py")


def test_ascend_backends_and_a_project_named_for_the_technology():
    fla = '''\
    from fla.backends import GluonBackend, TritonAscendBackend
    from .backends import triton_ascend


    def pick():
        if TritonAscendBackend.is_available():
            return triton_ascend.causal_conv1d
        return None
    '''
    assert _flow_lines(fla, "fla/modules/causal_conv1d/__init__.py") == {}
    flashinfer = '''\
    from ..api_logging import flashinfer_api
    from .sm100.flash_fwd_sm100 import FlashAttentionForwardSm100


    @flashinfer_api(trace=None)
    def sparse_attention(q, k, v):
        return FlashAttentionForwardSm100(q.shape[-1])(q, k, v)
    '''
    lines = _flow_lines(flashinfer, "flashinfer/cute_dsl/sparse/bsa_attn.py")
    assert 1 not in lines and 5 not in lines           # flashinfer's own logging decorator
    assert lines.get(2) == "NPU321" and lines.get(7) == "NPU321"


def test_namespace_folder_on_the_way_still_reaches_the_module(tmp_path):
    """DiffSynth: `from ...core.device import parse_nccl_backend` in `diffsynth/utils/xfuser/` (no
    `utils/__init__.py`); the helper answers "hccl" on an NPU, its module is not CUDA-specific."""
    from auditor.runner import run_static

    root = tmp_path / "proj"
    _write(root, {
        "diffsynth/__init__.py": "", "diffsynth/core/__init__.py": "",
        "diffsynth/core/device/__init__.py": "from .npu_compatible_device import parse_nccl_backend\n",
        "diffsynth/core/device/npu_compatible_device.py":
            "def parse_nccl_backend(device_type):\n    return 'hccl' if device_type == 'npu' else 'nccl'\n",
        "diffsynth/utils/xfuser/__init__.py": "",
        "diffsynth/utils/xfuser/ctx.py": "from ...core.device import parse_nccl_backend\n\n\n"
                                         "def backend(t):\n    return parse_nccl_backend(t)\n",
    })
    run = run_static([root], jobs=1)
    ctx = next(r for r in run.results if r.path == "diffsynth/utils/xfuser/ctx.py")
    assert not [f for f in ctx.findings if f.code in FLOW]


def test_an_ascend_package_gets_no_value_flow():
    code = '''\
    from torch.utils.cpp_extension import load


    class OffloadManager:
        def __init__(self, sources):
            self.offload_cpp = load(name="sparse_kv_offload", sources=sources)

        def swap(self, blocks):
            return self.offload_cpp.swap_blocks(blocks)
    '''
    assert _flow_lines(code, "vllm_ascend/distributed/kv_transfer/offload_manager.py") == {}
    assert 9 in _flow_lines(code, "myserve/distributed/offload_manager.py")
