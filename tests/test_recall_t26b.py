"""t26b (session 26): misses of the blind static splits test39 and test40 (TUNED): moodist's process-group backend and
a CUDA-IPC custom all-reduce (cwm), "xformers" as an attention implementation's name, vLLM engines built in code
(lead decision 21), torch2trt / TensorRT 7's `build_cuda_engine`, neural_renderer, nvdiffrast as a library built from
source (decisions 5 / 27), detectron2-style environment report rows, and a parameter written straight into a cuDNN
switch (decision 7). Each shape comes from the code it was missed in, with a control that stays quiet."""
from __future__ import annotations

from auditor.rules import load_rules
from auditor.static import StaticEngine

ENGINE = StaticEngine(load_rules())


def _codes(src: bytes, path: str = "main.py") -> set[tuple[int, str]]:
    return {(f.line, f.code) for f in ENGINE.analyze_bytes(src, path).findings}


def _categories(src: bytes, path: str = "main.py") -> dict[int, set[str]]:
    out: dict[int, set[str]] = {}
    for f in ENGINE.analyze_bytes(src, path).findings:
        out.setdefault(f.line, set()).add(f.category)
    return out


# cwm/common/environment.py and serve/fgserve.py
CWM_ENV = b"""import moodist
import torch


def init_torch_distributed(backend: str = "nccl", *, timeout=None):
    if backend == "moodist":
        moodist.enable_cpu_allocator()
        moodist.enable_cuda_allocator()
        moodist.set_prefer_kernel_less(True)
    md_group = torch.distributed.new_group(range(8), backend="moodist")
    other = torch.distributed.new_group(range(8), backend=backend)
    return md_group, other
"""


def test_moodist_backend_library_and_its_group():
    cats = _categories(CWM_ENV)
    for line in (1, 7, 8, 9, 10):
        assert "distributed" in cats[line], line
    assert "device" not in cats[8]            # `enable_cuda_allocator`: moodist's, not a CUDA helper of the code's own
    assert 6 not in cats and 11 not in cats   # a test of the name; the backend handed on (decided where it is chosen)


# cwm/fastgen/utils/collectives.py
CWM_COLLECTIVES = b"""from contextlib import suppress

import torch

has_custom_allreduce = False
with suppress(ModuleNotFoundError, ImportError):
    from fgcuda.custom_all_reduce import CustomAllreduce

    has_custom_allreduce = True


class Collectives:
    def __init__(self, group, max_custom_allreduce_size):
        self.car = None
        if has_custom_allreduce:
            self.car = CustomAllreduce(group=group, device=torch.cuda.current_device(), max_size=max_custom_allreduce_size)
"""


def test_custom_all_reduce_import_and_construction():
    codes = _codes(CWM_COLLECTIVES)
    assert (7, "NPU187") in codes and (16, "NPU187") in codes
    assert not any(c == "NPU187" for _, c in _codes(b"from torch.distributed import all_reduce\nall_reduce(t)\n"))


# cwm/model/transformer.py (a dataclass field and its assert), blt's keyword, Open-Sora-Plan's parameter default
CWM_ARGS = b"""from dataclasses import dataclass


@dataclass
class TransformerArgs:
    attn_impl: str = "xformers"
    attn_bias_type: str | None = None

    def __post_init__(self) -> None:
        assert self.attn_impl == "xformers"
        assert not self.weight_tying, "Weight tying is not supported yet"


def build(dim, attention_mode: str = "xformers"):
    return Block(dim, attn_impl="xformers")


def attention(q, k, v, attn_impl="sdpa"):
    if attn_impl == "xformers":
        return xops.memory_efficient_attention(q, k, v)
    assert attn_impl == "sdpa"
    return F.scaled_dot_product_attention(q, k, v)
"""


def test_xformers_named_as_the_attention_implementation():
    codes = {line for line, c in _codes(CWM_ARGS) if c == "NPU897"}
    assert codes == {6, 10, 14, 15}           # not the test that reads the choice, not an assert of "sdpa"


# Qwen2.5-Coder's CRUXEval runner (lead decision 21: the construction is the pair, the import is not)
CRUXEVAL = b"""from vllm import LLM, SamplingParams


def main(args):
    model = LLM(
        model=args.model,
        tensor_parallel_size=args.tp,
        max_model_len=4096,
    )
    params = SamplingParams(temperature=0.0, max_tokens=args.max_tokens)
    cpu_model = LLM(model=args.model, device="cpu")
    return model.generate(args.prompts, params), cpu_model
"""


def test_vllm_engine_construction_not_its_import():
    codes = _codes(CRUXEVAL)
    assert {line for line, c in codes if c == "NPU487"} == {5}


# Person_reID_baseline_pytorch/test_with_TensorRT.py, fast-reid's trt_export.py
TRT = b"""from torch2trt import torch2trt


def convert(model, x, opt, builder, network):
    model = torch2trt(model, [x], fp16_mode=True, max_batch_size=opt.batchsize)
    engine = builder.build_cuda_engine(network)
    half = torch2trt(model, [x], fp16_mode=False)
    return model, engine, half
"""


def test_torch2trt_and_tensorrt_builder():
    cats = _categories(TRT)
    assert cats[1] == {"third_party"}
    assert cats[5] == {"third_party", "precision"}
    assert cats[6] == {"third_party"}          # TensorRT's Builder method, not a CUDA helper of the code's own
    assert cats[7] == {"third_party"}          # fp16 switched off: the converter only


# GraphCMR/utils/part_utils.py and Deep3DFaceRecon_pytorch/util/nvdiffrast.py
RENDERERS = b"""import neural_renderer as nr
import nvdiffrast.torch as dr


class PartRenderer:
    def __init__(self, render_res=224):
        self.neural_renderer = nr.Renderer(dist_coeffs=None, orig_size=render_res, image_size=render_res)

    def rasterize(self, vertex_ndc, tri, rsize, device):
        self.ctx = dr.RasterizeCudaContext(device=device)
        return dr.rasterize(self.ctx, vertex_ndc.contiguous(), tri, resolution=[rsize, rsize])
"""


def test_mesh_renderers_by_how_they_are_installed():
    cats = _categories(RENDERERS)
    assert cats[1] == {"third_party"} and cats[7] == {"third_party"}      # neural-renderer-pytorch: a PyPI package
    assert cats[2] == {"kernel"} and cats[10] == {"kernel"} and cats[11] == {"kernel"}   # nvdiffrast: from git


# fast-reid/fastreid/utils/collect_env.py (detectron2's collect_env)
COLLECT_ENV = b"""import os

import torch


def collect_env_info():
    data = []
    from torch.utils.cpp_extension import CUDA_HOME
    data.append(("CUDA_HOME", str(CUDA_HOME)))
    cuda_arch_list = os.environ.get("TORCH_CUDA_ARCH_LIST", None)
    if cuda_arch_list:
        data.append(("TORCH_CUDA_ARCH_LIST", cuda_arch_list))
    env_pairs = []
    env_pairs.append(("CUDA_VISIBLE_DEVICES", "0,1"))
    define_macros = []
    define_macros.append(("WITH_CUDA", None))
    return data
"""


def test_environment_report_rows_are_not_findings():
    cats = _categories(COLLECT_ENV)
    assert 9 not in cats and 12 not in cats
    assert 8 in cats                          # the import stays a finding
    # the read only feeds the report row below it: shown, not used (lead decision 49; test105's ODISE label, tk43)
    assert 10 not in cats
    assert 14 in cats                         # a literal value: an environment handed on
    assert 16 in cats                         # MS-AMP's setup.py: a build macro (test26)


# pytracking/ltr/run_training.py
RUN_TRAINING = b"""import torch.backends.cudnn


def run_training(train_module, train_name, cudnn_benchmark=True):
    torch.backends.cudnn.benchmark = cudnn_benchmark


def configure(cudnn_benchmark=True):
    return dict(cudnn_benchmark=cudnn_benchmark)
"""


def test_a_parameter_written_into_the_cudnn_switch_is_not_a_finding_of_its_own():
    codes = _codes(RUN_TRAINING)
    assert (5, "NPU006") in codes
    assert not any(line == 4 for line, _ in codes)
    assert (8, "NPU042") in codes             # handed to a library: the value is the finding (decision 7)
