"""pd3 (issue 14, session 16, tuned on static test19 after the draw): a CUDA query called inside a log message is
code that runs on Ascend; only the message's text is for humans. `logger.info("devices: " + str(torch.cuda.device_count()))`
(a concatenation) and three or more adjacent f-strings (`f"a" f"{torch.cuda.memory_reserved()}" f"..."`, which
libcst nests) were read as text; the text itself still flags nothing."""
from __future__ import annotations

from auditor.rules import load_rules
from auditor.static import StaticEngine
from tests.static_snippets import snippet_findings

ENGINE = StaticEngine(load_rules(), product="a2")


def by_line(src: str) -> dict[int, set[tuple[str, str]]]:
    out: dict[int, set[tuple[str, str]]] = {}
    for f in snippet_findings(ENGINE, src, "monitor.py"):
        out.setdefault(f.line, set()).add((f.code, f.category))
    return out


MESSAGES = '''\
import logging
import warnings

import torch

logger = logging.getLogger(__name__)


def log_environment(pct_gpu_util):
    logger.info("PyTorch VERSION: " + str(torch.__version__))
    logger.info("CUDNN VERSION: " + str(torch.backends.cudnn.version()))
    logger.info("Number of CUDA Devices: " + str(torch.cuda.device_count()))
    logger.info("Running on CUDA with " + str(pct_gpu_util) + " % utilization")
    warnings.warn("torch.cuda.synchronize() is slow, " + "set CUDA_LAUNCH_BLOCKING=0")
    gpu_string = (
        f"Volatile GPU utilization: {pct_gpu_util} %\\n"
        f"GPU memory reserved: {torch.cuda.memory_reserved() / 1e9} GB\\n"
        f"GPU memory allocated: {torch.cuda.memory_allocated() / 1e9} GB\\n"
    )
    raise RuntimeError("no " + "cuda" + " device: " + str(torch.cuda.is_available()))
'''


def test_calls_inside_messages_are_code_and_the_text_is_not():
    lines = by_line(MESSAGES)
    assert lines.get(10) is None                                  # torch.__version__: nothing CUDA
    assert ("NPU006", "device") in lines[11]                      # torch.backends.cudnn.version() inside "..." + str()
    assert ("NPU002", "device") in lines[12]                      # torch.cuda.device_count() inside "..." + str()
    assert lines.get(13) is None                                  # a message naming CUDA, no CUDA call
    assert lines.get(14) is None                                  # code-like TEXT in a message stays text
    assert lines.get(16) is None
    assert ("NPU002", "device") in lines[17]                      # the second of three adjacent f-strings
    assert ("NPU002", "device") in lines[18]                      # the third
    assert {c for c, _ in lines[20]} == {"NPU002"}                # the call, not the "cuda" text


def test_nvfuser_nvidia_namespace_and_float8_experimental():
    src = '''\
import nvfuser
from nvfuser import DataType, FusionDefinition
from pathlib import Path


def silu(x):
    with FusionDefinition() as fd:
        t0 = fd.define_tensor(contiguity=nvfuser.compute_contiguity(x.size(), x.stride()), dtype=DataType.Float)
    return fd


def cuda_libs():
    import nvidia
    return Path(nvidia.__path__[0]) / "cuda_runtime" / "lib"


def to_fp8(model):
    from float8_experimental.float8_linear_utils import swap_linear_with_float8_linear
    from float8_experimental.float8_dynamic_linear import Float8DynamicLinear
    swap_linear_with_float8_linear(model, Float8DynamicLinear)


def dali_loader():
    import nvidia.dali.fn as fn
    return fn
'''
    lines = by_line(src)
    for line in (1, 2, 7, 8, 13, 14):
        assert ("NPU411", "third_party") in lines[line], line
    for line in (18, 19, 20):
        assert ("NPU233", "precision") in lines[line], line
    assert {c for c, _ in lines[24]} == {"NPU405"}                # DALI keeps its own rule, not the namespace's
