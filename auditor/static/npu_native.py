"""Code already written for Ascend (t11h, issue 11; tuned on the false rows of heldout4 .. heldout6).

A Python file that imports torch_npu at its top, unguarded (column 0: not under try / if / def), cannot even be
imported without Ascend's PyTorch adaptor; so is a file whose folders or name say it is the NPU member of a
per-backend set (`vendor/ascend/`, `npu_adapt/`, `sgl_kernel_npu/`). Its author runs it on the NPU already:
DrivingSDK's model patches (`flash_attn_func_patch(...)` swaps transformers' flash-attention for
`npu_fusion_attention`), NPU op tests that compare with a CPU reference library (`torch_scatter` on `cpu_*`
tensors), a repository's own Ascend port of a CUDA library under the CUDA library's name (`deep_ep.Buffer`).
There, by the severity policy's rule for ported code ("at most info, never rewritten"):

- findings that are warnings or errors become info (context `npu-file`), never rewritten;
- except CUDA device and distributed APIs that are errors (`torch.cuda.synchronize()`, `"cuda:0"`, `"nccl"`):
  importing torch_npu alone does not remap them (transfer_to_npu does, see backends.under_transfer_to_npu), so on
  Ascend they still fail as written and keep their severity;
- dtype hints are kept only where the Ascend product matters: bf16 (910A), fp64 (310P, 950) keep their per-product
  severity; fp8 / fp4 (supported on 950 only) stays as info: NPU code that uses it targets that product. Hints
  that hold on every Ascend product (fp16 loss scaling, an autocast region's dtype, a GradScaler, an fp16 switch)
  are dropped: the file already runs in that precision on the NPU.
"""
from __future__ import annotations

import re

from auditor.static.backends import as_info, path_backends

_TOP_IMPORT = re.compile(r"^(?:import[ \t]+torch_npu\b|from[ \t]+torch_npu(?:\.[\w.]+)?[ \t]+import\b)", re.M)
# per-product dtype facts: their severity already says what the product (`--product`) makes of them
_PRODUCT_DTYPES = frozenset({"bf16-dtype", "fp64-dtype", "bf16-training-setting", "bf16-switch"})
# dtype facts that hold on every Ascend product: nothing to know in code that already runs on the NPU
_EVERY_PRODUCT = frozenset({"fp16-dtype", "autocast-dtype", "grad-scaler", "fp16-switch"})
_KEPT_CATEGORIES = frozenset({"device", "distributed"})
_NOTE = ("in a file written for Ascend ({why}): it runs on the NPU as written; re-validate there, nothing to "
         "port")


def written_for_npu(text: str, rel: str) -> str | None:
    """Why the file is NPU code (a short phrase), or None."""
    if "torch_npu" in text and _TOP_IMPORT.search(text):
        return "it imports torch_npu at its top"
    if rel and path_backends(rel) == {"npu"}:
        return "its path names the NPU"
    return None


def apply_npu_file(findings: list, why: str) -> list:
    """Findings of a file written for Ascend, lowered or dropped as the module docstring says."""
    out = []
    for f in findings:
        if f.name in _EVERY_PRODUCT:
            continue
        if f.name in _PRODUCT_DTYPES or f.severity == "info" or \
                f.severity == "error" and f.category in _KEPT_CATEGORIES:
            out.append(f)
            continue
        out.append(as_info(f, "npu-file", _NOTE.format(why=why)))
    return out
