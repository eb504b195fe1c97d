"""Config values that name CUTLASS GEMM kernels (tp52b, issue 15; tuned on project test147).

NanoFlow's serving configs list the GEMM of each pipeline stage as `"gemm_op_tag": ["128_128_32_64_64_32_1_5_RowMajor_
RowMajor_RowMajor", ...]`: the threadblock and warp tile shapes, split-k slices and pipeline stages of a
`CutlassGEMMWrapper<...>` instantiation, then the `cutlass::layout::RowMajor` / `ColumnMajor` layouts of A, B and C
(its pipeline/src/generate-gemm/genGEMM.py writes the same names as `gen_<tag>()` factories). CUTLASS's own library and
profiler name a kernel `cutlass_tensorop_f16_s16816gemm_f16_128x128_32x3_nn_align8` (2.x) or
`cutlass3x_sm90_tensorop_gemm_..._warpspecialized` (3.x) (CUTLASS's media/docs/profiler.md), and configs that pick
kernels by those names are the same choice. Each is a kernel built by nvcc for NVIDIA tensor cores: a config choosing
among them selects CUDA-only kernels, whose tiles an Ascend port re-chooses for its own matmul (CANN's Cube unit).

Reported once per key whose value is such a name or a list holding one, on the key's line (the code that reads the
config and the `.cu` sources that build the kernels carry their own findings). Other strings of the same shape are
quiet: a lone `RowMajor` (NumPy / Eigen storage orders), tile shapes without layouts, a name that only contains
`cutlass`.
"""
from __future__ import annotations

import re

import yaml

# tile dimensions (threadblock M N K, warp M N K, then split-k / stages) joined by `_`, then one to three CUTLASS
# layouts (cutlass::layout::RowMajor / ColumnMajor)
_TILE_TAG_RE = re.compile(r"\d+(?:_\d+){5,}(?:_(?:RowMajor|ColumnMajor)){1,3}")
# CUTLASS library kernel names: `cutlass_<opclass>_..gemm..` / `cutlass3x_sm90_<opclass>_..gemm..` (also conv)
_KERNEL_NAME_RE = re.compile(r"cutlass(?:3x)?_(?:sm\d+_)?(?:tensorop|simt|wmma|wgmma)_\w*?(?:gemm|conv[23]d)\w*")
_WORDS = ("RowMajor", "ColumnMajor", "cutlass")


def _names_kernel(node) -> str | None:
    """The first CUTLASS GEMM kernel name a scalar or a list of scalars holds, or None."""
    items = node.value if isinstance(node, yaml.SequenceNode) else [node]
    for item in items:
        if isinstance(item, yaml.ScalarNode) and isinstance(item.value, str) and (
                _TILE_TAG_RE.fullmatch(item.value.strip()) or _KERNEL_NAME_RE.fullmatch(item.value.strip())):
            return item.value.strip()
    return None


def cutlass_kernel_keys(text: str, roots: list) -> list[tuple[yaml.Node, str]]:
    """(key node, first kernel name) of each mapping entry whose value names CUTLASS GEMM kernels; [] at once when
    the file's text has none of the words (no walk of the document)."""
    if not any(w in text for w in _WORDS):
        return []
    out = []
    todo = list(roots)
    while todo:
        node = todo.pop()
        if isinstance(node, yaml.MappingNode):
            for k, v in node.value:
                name = _names_kernel(v) if isinstance(k, yaml.ScalarNode) else None
                if name is not None:
                    out.append((k, name))
                elif isinstance(v, (yaml.MappingNode, yaml.SequenceNode)):
                    todo.append(v)
        elif isinstance(node, yaml.SequenceNode):
            todo.extend(i for i in node.value if isinstance(i, (yaml.MappingNode, yaml.SequenceNode)))
    return sorted(out, key=lambda kv: (kv[0].start_mark.line, kv[0].start_mark.column))
