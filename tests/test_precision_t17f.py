"""t17f (issue 11, session 17; TUNED on heldout15-19): CUDA gates the per-file pass missed, from the false classes that
recur across the earlier draws (TGI's per-system import blocks, nncf's per-backend test pipelines, vLLM's target-device
test marks; kohya's `HAS_CUDA` helper read the same way): a membership test in CUDA and its ROCm twin, a comparison with
an enum member named for CUDA, and a flag that is only ever False / None or True behind a CUDA gate
(auditor/static/gates.py). The code below is written afresh in those shapes; each change has a control that keeps the
error."""
from __future__ import annotations

from tests.test_rules_apex import audit


def _sev(by_line: dict, line: int, code: str) -> list[str]:
    return [f.severity for f in by_line.get(line, []) if f.code == code]


SYSTEM_BLOCK = """\
import torch
from myserver.utils.import_utils import SYSTEM

FAST_DECODE = False

if SYSTEM in {"cuda", "rocm"}:
    major, minor = torch.cuda.get_device_capability()
    if major >= 8:
        FAST_DECODE = True


def decode_step(model, ids):
    out = model(ids)
    if FAST_DECODE:
        torch.cuda.synchronize()
    return out
"""


def test_a_flag_set_true_only_behind_a_cuda_and_rocm_block_is_a_gate():
    by_line = audit(SYSTEM_BLOCK, "myserver/utils/decode.py")
    assert _sev(by_line, 7, "NPU002") == ["warning"]        # the capability query runs only for cuda / rocm
    assert _sev(by_line, 15, "NPU002") == ["warning"]       # torch.cuda.synchronize behind FAST_DECODE
    # control: a flag also set from an environment variable outside any CUDA gate is not one
    loose = SYSTEM_BLOCK.replace('FAST_DECODE = False\n', 'FAST_DECODE = os.getenv("FAST") == "1"\n', 1)
    by_line = audit("import os\n" + loose, "myserver/utils/decode.py")
    assert _sev(by_line, 16, "NPU002") == ["error"]


def test_membership_in_cuda_and_rocm_is_a_cuda_test_but_not_with_the_cpu():
    src = """\
    import torch

    def pick(system, model):
        if system in ("cuda", "rocm"):
            model.cuda()
        if system in ("cuda", "cpu"):
            model.cuda()
        return model
    """
    by_line = audit(src)
    assert _sev(by_line, 5, "NPU001") == ["warning"]
    assert _sev(by_line, 7, "NPU001") == ["error"]         # "cpu" holds on an Ascend host too


def test_a_skipif_on_the_target_device_not_being_cuda_or_rocm_marks_a_cuda_test():
    src = """\
    import pytest
    import torch
    import vllm.envs as envs

    @pytest.mark.skipif(envs.VLLM_TARGET_DEVICE not in ["cuda", "rocm"], reason="Only test on CUDA and ROCm")
    def test_fusion():
        x = torch.randn(4, 4).cuda()
        assert x.sum() is not None

    def test_plain():
        y = torch.randn(4, 4).cuda()
        assert y is not None
    """
    by_line = audit(src, "tests/compile/test_fusion.py")
    assert _sev(by_line, 7, "NPU001") == ["warning"]
    assert _sev(by_line, 11, "NPU001") == ["error"]


def test_an_enum_member_named_for_cuda_chooses_the_cuda_arm():
    src = """\
    import torch
    from enum import Enum

    class BackendType(Enum):
        TORCH = "TORCH"
        CUDA_TORCH = "CUDA_TORCH"
        ONNX = "ONNX"

    class Pipeline:
        def prepare(self):
            if self.backend == BackendType.CUDA_TORCH:
                self.model.cuda()
            device = torch.device("cuda" if self.backend in [BackendType.CUDA_TORCH] else "cpu")
            if self.backend == BackendType.ONNX:
                self.model.cuda()
            return device
    """
    by_line = audit(src, "tests/post_training/pipelines/image_classification.py")
    assert _sev(by_line, 12, "NPU001") == ["warning"]
    assert _sev(by_line, 13, "NPU003") == ["warning"]
    assert _sev(by_line, 15, "NPU001") == ["error"]         # control: another member is no CUDA choice


def test_a_flag_that_is_a_cuda_probe_or_false_is_a_gate():
    src = """\
    import torch

    try:
        HAS_CUDA = torch.cuda.is_available()
    except Exception:
        HAS_CUDA = False

    def clean_memory():
        if HAS_CUDA:
            torch.cuda.empty_cache()
    """
    by_line = audit(src, "library/device_utils.py")
    assert _sev(by_line, 10, "NPU002") == ["warning"]
    assert _sev(by_line, 4, "NPU002") == ["error"]          # the probe itself stays the error


def test_a_cuda_result_code_is_no_backend_choice():
    # cuda-python's driver API (vendored TVM / CUTLASS): `err != CUresult.CUDA_SUCCESS` checks a call, chooses nothing
    src = """\
    from cuda.bindings import driver as cuda

    def load(cubin):
        err, ctx = cuda.cuCtxCreate(0, 0)
        if err != cuda.CUresult.CUDA_SUCCESS:
            raise RuntimeError(f"cuCtxCreate failed: {err}")
        err, module = cuda.cuModuleLoadData(cubin)
        return module
    """
    by_line = audit(src, "contrib/nvcc.py")
    assert "error" in _sev(by_line, 7, "NPU385")
