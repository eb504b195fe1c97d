"""DeepSpeed sparse attention blocks no code of the tree builds (fix51c, review51 item 6).

A DeepSpeed config's `sparse_attention` block (NPU947) only configures sparsity: DeepSpeed's tutorial
(https://www.deepspeed.ai/tutorials/sparse-attention/, "How to use sparse attention with DeepSpeed launcher") has the
model itself replace its self-attention with `SparseSelfAttention` / `BertSparseSelfAttention` from
`deepspeed.ops.sparse_attention`, built from the block; the engine swaps no attention layer. So the block's Triton
kernels run only where the tree's Python code imports `deepspeed.ops.sparse_attention` (ru-gpts' `mpu/transformer.py`);
in a tree whose code never does (an HF Trainer config copied from DeepSpeed's examples) the block is inert and NPU947
is lowered to info. A tree audited without any Python file (a config checked alone) keeps the error: nothing says
which model reads it.
"""
from __future__ import annotations

from typing import Any

from auditor.findings import as_info

CODE = "NPU947"
_MODULE = "deepspeed.ops.sparse_attention"
_NOTE = "no Python file of this tree imports `deepspeed.ops.sparse_attention`, so no model builds the sparse " \
    "attention this block configures: DeepSpeed's engine swaps no attention layer itself"


def imports_sparse_attention(imports: Any) -> bool:
    """Whether a file's summary `imports` ([line, level, module, [[name, alias], ...]]) load DeepSpeed's sparse
    attention ops: `from deepspeed.ops.sparse_attention import X`, `import deepspeed.ops.sparse_attention` or
    `from deepspeed.ops import sparse_attention`."""
    for _line, level, module, pairs in imports or ():
        loaded = [str(p[0]) for p in pairs] if level < 0 else [module] + [f"{module}.{p[0]}" for p in pairs] \
            if level == 0 else []
        if any(n == _MODULE or n.startswith(_MODULE + ".") for n in loaded):
            return True
    return False


def lower_unbuilt_sparse_attention(results: list, project: Any) -> int:
    """Lower NPU947 to info where the tree has Python files and none imports DeepSpeed's sparse attention ops;
    returns how many findings were lowered. Reads only the per-file summaries (no file is read)."""
    hits = [r for r in results if any(f.code == CODE and f.severity != "info" for f in r.findings)]
    if not hits or project is None:
        return 0
    summaries = project.summaries
    if not any(rel.endswith(".py") for rel in summaries):
        return 0
    if any(imports_sparse_attention(s.get("imports")) for s in summaries.values() if isinstance(s, dict)):
        return 0
    lowered = 0
    for r in hits:
        kept = []
        for f in r.findings:
            if f.code == CODE and f.severity != "info":
                f = as_info(f, "unbuilt-sparse-attention", _NOTE)
                lowered += 1
            kept.append(f)
        r.findings = kept
    return lowered
