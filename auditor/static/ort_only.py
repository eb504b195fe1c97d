"""Device strings in a file that runs only ONNX Runtime (t11y, tuned on heldout16's 3D-Speaker:
`FaceQualityAssess('pretrained_models', 'cuda', '0')`, whose `create_net` puts CUDAExecutionProvider before
CPUExecutionProvider when `device == 'cuda'`). A file that imports onnxruntime and no framework that places tensors
(torch, TensorFlow, JAX, Paddle, MindSpore, CuPy, Numba, Triton, PyCUDA, TensorRT, MXNet, OneFlow) has no device of
its own to select: a "cuda" value there can only pick ORT's CUDA execution provider. ONNX Runtime skips a requested
provider that is not available with a warning ("Specified provider ... is not in available provider names",
onnxruntime_inference_collection.py) and runs on the providers left, the CPU provider last: the code runs on an
Ascend host and is slower (warning, not error)."""
from __future__ import annotations

import re

from auditor.findings import as_info

_ORT = re.compile(r"^[ \t]*(?:import|from)[ \t]+onnxruntime\b", re.M)
_FRAMEWORKS = re.compile(
    r"^[ \t]*(?:import|from)[ \t]+(?:torch|torch_npu|tensorflow|jax|jaxlib|paddle|mindspore|cupy|numba|triton|pycuda|"
    r"tensorrt|mxnet|oneflow)\b", re.M)
_NOTE = ("in a file that runs only ONNX Runtime: the value can only pick ORT's CUDAExecutionProvider, which ORT "
         "skips with a warning where it is unavailable, running the session on the CPU provider")


def lower_ort_only(findings: list, text: str) -> list:
    """Device-string errors of an ONNX-Runtime-only file, as warnings with why."""
    if not any(f.name == "cuda-device-string" and f.severity == "error" for f in findings) or \
            not _ORT.search(text) or _FRAMEWORKS.search(text):
        return findings
    out = []
    for f in findings:
        if f.name == "cuda-device-string" and f.severity == "error" and not f.data.get("context"):
            f = as_info(f, "onnxruntime-provider", _NOTE, "warning")
        out.append(f)
    return out
