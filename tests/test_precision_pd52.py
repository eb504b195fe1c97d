"""Precision fixes of pd52 (session 31, TUNED on heldout34): a TensorRT / PyCUDA deployment script beside the
project's own Ascend deployment folder (rllte's `deployment/python/infer.py` beside `deployment/ascend/`) is the
NVIDIA member of a per-target set, info; the file's torch lines keep their reading. The control: the same script
with no Ascend folder keeps its errors. (The gate families are in tests/test_precision_gates.py.)"""
from __future__ import annotations

from auditor.runner import run_static
from tests.static_snippets import write_tree

TRT_INFER = """\
import tensorrt as trt
import pycuda.autoinit  # noqa: F401
import pycuda.driver as cuda
import numpy as np

logger = trt.Logger(trt.Logger.WARNING)
with open("model.engine", "rb") as f:
    engine = trt.Runtime(logger).deserialize_cuda_engine(f.read())
context = engine.create_execution_context()
inp = cuda.pagelocked_empty(trt.volume(engine.get_binding_shape(0)), dtype=np.float32)
out = cuda.pagelocked_empty(trt.volume(engine.get_binding_shape(1)), dtype=np.float32)
d_inp, d_out = cuda.mem_alloc(inp.nbytes), cuda.mem_alloc(out.nbytes)
stream = cuda.Stream()
cuda.memcpy_htod_async(d_inp, inp, stream)
context.execute_async_v2([int(d_inp), int(d_out)], stream.handle)
cuda.memcpy_dtoh_async(out, d_out, stream)
stream.synchronize()
"""

EXPORT = """\
import torch

device = torch.device("cuda:0")
model = torch.load("agent.pth", map_location=device)
torch.onnx.export(model, torch.randn(1, 9, 84, 84, device=device), "model.onnx")
"""

ACL_RUN = "#!/bin/bash\natc --model=model.onnx --framework=5 --output=model --soc_version=Ascend310P3\n"


def _by_path(tmp_path, files):
    return {r.path: r.findings for r in run_static([write_tree(tmp_path, files)], jobs=1).results}


def test_a_tensorrt_script_beside_the_projects_ascend_target_is_info(tmp_path):
    found = _by_path(tmp_path / "rl", {"deployment/python/infer.py": TRT_INFER,
                                       "deployment/python/pth2onnx.py": EXPORT,
                                       "deployment/ascend/sample_run.sh": ACL_RUN})
    trt = [f for f in found["deployment/python/infer.py"] if f.code in ("NPU409", "NPU474", "NPU475")]
    assert trt and all(f.severity == "info" and "deployment/ascend/" in f.message for f in trt)
    # the export script beside it has no TensorRT: its device lines keep their severity
    assert any(f.severity == "error" for f in found["deployment/python/pth2onnx.py"])


def test_a_tensorrt_script_without_an_ascend_target_keeps_its_errors(tmp_path):
    found = _by_path(tmp_path / "rl", {"deployment/python/infer.py": TRT_INFER,
                                       "deployment/ncnn/run.sh": "#!/bin/bash\n./ncnn_demo model.param\n"})
    trt = [f for f in found["deployment/python/infer.py"] if f.code in ("NPU474", "NPU475")]
    assert trt and all(f.severity == "error" for f in trt)


GSPLAT_PROFILE = """\
import torch
from gsplat._helper import load_test_data
from gsplat.cuda._torch_impl import _isect_offset_encode
from gsplat.rendering import rasterization

device = torch.device("cpu")
means, quats, scales, opacities, colors, viewmats, Ks, width, height = load_test_data(device=device)
renders, alphas, meta = rasterization(means, quats, scales, opacities, colors, viewmats, Ks, width, height)
offsets = _isect_offset_encode(meta["isect_ids"], 1, meta["tile_width"], meta["tile_height"])
"""


def test_gsplats_pure_pytorch_helpers_are_no_kernels(tmp_path):
    found = _by_path(tmp_path / "gs", {"profiling/main.py": GSPLAT_PROFILE})["profiling/main.py"]
    kernels = {f.symbol for f in found if f.code == "NPU416"}
    assert not any("_helper" in s or "_torch_impl" in s for s in kernels)
    assert "gsplat.rendering.rasterization" in kernels       # the control: the rasterizer is gsplat's CUDA kernel
