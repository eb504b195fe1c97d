"""t14p (issue 14, session 11): dtype requirements, a guard that lets a path take only a low-precision dtype
(auditor/static/dtype_requirements.py). Realistic kernels' entry checks; comparisons that only read a dtype stay
quiet."""
from __future__ import annotations


from auditor.rules import load_rules
from auditor.static import StaticEngine
from tests.static_snippets import snippet_findings

RULES = load_rules()
ENGINE = StaticEngine(RULES, product="a2")


def findings(src: str, name: str = "ops.py"):
    return snippet_findings(ENGINE, src, name)


GROUPED_MM = '''\
import torch
import triton


def grouped_mm(mat_a: torch.Tensor, mat_b: torch.Tensor, out: torch.Tensor) -> torch.Tensor:
    if mat_a.device != mat_b.device:
        raise ValueError("inputs must be on one device")
    if (
        mat_a.dtype != torch.bfloat16
        or mat_b.dtype != torch.bfloat16
        or out.dtype != torch.bfloat16
    ):
        raise ValueError("grouped_mm currently supports only bf16 tensors")
    if mat_a.dtype not in (torch.int32, torch.int64):
        pass
    return out


class MXTensor:
    def __init__(self, qdata, scales, block_size=32):
        if qdata.dtype != torch.float8_e4m3fn:
            raise ValueError(f"qdata must be float8_e4m3fn, got {qdata.dtype}")
        if scales.dtype != torch.float8_e8m0fnu:
            raise ValueError(f"scales must be float8_e8m0fnu, got {scales.dtype}")
        self.qdata = qdata


def fused_add(destination, source):
    if destination.dtype != torch.float32 or source.dtype != torch.bfloat16:
        return destination.add_(source.float())
    return destination


class Backend:
    def check(self):
        assert self.compute_dtype is torch.bfloat16, "Only bfloat16 compute_dtype is supported."
'''


def test_guards_requiring_a_low_precision_dtype_are_info_findings():
    got = {(f.line, f.code) for f in findings(GROUPED_MM)}
    hits = {f.line: f for f in findings(GROUPED_MM) if f.data.get("context") == "dtype-requirement"}
    assert sorted(hits) == [9, 10, 11, 21, 23, 29]
    assert all(f.severity == "info" and f.category == "precision" for f in hits.values())
    assert (21, "NPU203") in got and (9, "NPU201") in got
    assert 14 not in hits     # int dtypes are no precision question
    # an assert checks data (tests assert `weight.dtype == torch.float16` after a conversion): not a requirement
    assert 36 not in hits


READS = '''\
import torch


def to_dtype(name, dtype):
    if dtype not in (torch.float16, torch.bfloat16, torch.float32):
        raise ValueError(f"unsupported dtype {dtype}")
    if dtype == torch.bfloat16:
        return "bf16"
    if dtype not in [torch.float16, torch.bfloat16]:
        raise AssertionError("QKV's dtype must be in bf16 or fp16")
    if dtype != torch.bfloat16:
        x = 1
    return use_fp16


def bytes_per_element(dtype):
    if dtype in (torch.float16, torch.bfloat16):
        return 2
    return 4
'''


def test_reads_and_float_validation_stay_quiet():
    # a list that also accepts float32 validates a float type; `== ... : return "bf16"` converts a dtype to its
    # name; `in (...): return 2` measures it; a body that neither raises nor returns is no guard
    # (`return "bf16"` names a precision string: that rule's own finding, not a requirement)
    got = findings(READS)
    assert [f for f in got if f.data.get("context") == "dtype-requirement"] == []
    assert not any(f.line in (5, 7, 9, 11, 17) and f.category == "precision" for f in got)
