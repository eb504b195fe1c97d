"""Per-backend classes chosen by a platform (issue 11, t11q; tuned on heldout11): a CUDA member of a family of
per-backend classes whose NPU member the tree also defines.

Serving and training frameworks split their device-specific code into sibling classes that a platform object picks
at run time: `GPUWorker` / `NPUWorker`, `GPUARWorker` / `NPUARWorker`, `GPUModelRunner` / `NPUModelRunner`,
`CudaPlatform` / `NPUPlatform`, `CUDAGraphRunner` / `NPUGraphRunner` (vLLM and its plugins, vllm-omni, verl,
sglang). On Ascend the platform picks the NPU member, so the CUDA member's `torch.device(f"cuda:{rank}")` never
runs there: the port is already in the tree, and the CUDA class stays for CUDA. Its findings are at most info
("npu-path", never rewritten), as for code beside an NPU branch in one file (auditor/static/backends.py).

Recognised by structure, never by a project's names: a top-level class whose name names CUDA (a `GPU` / `Cuda` /
`CUDA` word: `backend_words.backends_in_text(name) == {"cuda"}`) and a top-level class anywhere in the tree (tests
and examples aside) whose name is the same with that word spelled for the NPU (`NPU` / `Npu` / `Ascend`). Only
Python files; what each file defines is a per-file fact (`npu_classes` of the tree facts), so the pass reads only
files with findings in a CUDA-named class.
"""
from __future__ import annotations

import ast
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from auditor.backend_words import backends_in_text
from auditor.static.backends import as_info

_CLASS = re.compile(rb"^class[ \t]+(\w+)", re.M)
# the CUDA word inside a class name, bounded by case or an underscore: `GPUWorker`, `CudaPlatform`, `Gpu_Runner`
_CUDA_PART = re.compile(r"GPU|Gpu|CUDA|Cuda|Nvidia|NVIDIA")
_NPU_SPELLINGS = ("NPU", "Npu", "Ascend")
_NOTE = "the CUDA member of per-backend classes; the tree's NPU member ({twin}) runs on Ascend: left as is"
_SIDE = re.compile(r"(?:^|/)(?:tests?|examples?|benchmarks?)/|(?:^|/)test_[^/]*\.py$")


def npu_classes(data: bytes) -> list[str]:
    """Top-level classes of a Python file whose name names the NPU (`NPUWorker`, `AscendPlatform`): a tree fact."""
    if b"class" not in data:
        return []
    return sorted({m.decode("ascii", "replace") for m in _CLASS.findall(data)
                   if backends_in_text(m.decode("ascii", "replace")) == {"npu"}})


def twins(name: str) -> list[str]:
    """The NPU spellings of a CUDA-named class (`GPUARWorker` -> `NPUARWorker`, `AscendARWorker`, ...); [] when
    the name does not name CUDA alone."""
    if backends_in_text(name) != {"cuda"}:
        return []
    return [_CUDA_PART.sub(spelling, name) for spelling in _NPU_SPELLINGS if _CUDA_PART.search(name)]


def cuda_class_spans(tree: ast.Module) -> list[list[Any]]:
    """[first line, last line, name] of the top-level classes named for CUDA (a tree fact of files with findings)."""
    return [[node.lineno, node.end_lineno or node.lineno, node.name] for node in tree.body
            if isinstance(node, ast.ClassDef) and twins(node.name)]


def apply_class_twins(results: list, files: Sequence[tuple[Path, str]], project: Any) -> int:
    """Lower the findings inside a CUDA-named class whose NPU twin the tree defines to info; the count lowered."""
    # (a finding behind a CUDA gate in the class, a warning already, is lowered too: the whole class is the CUDA arm)
    candidates = [r for r in results if r.path.endswith(".py") and any(f.severity != "info" for f in r.findings)]
    if not candidates:
        return 0
    defined: dict[str, str] = {}
    for r in results:
        if not r.path.endswith(".py") or _SIDE.search(r.path):
            continue
        facts = project.tree(r.path)
        names = facts.get("npu_classes") if facts is not None else None
        if facts is None:
            src = project.source(r.path)
            names = npu_classes(src[0].encode()) if src is not None else []
        for n in names or ():
            defined.setdefault(n, r.path)
    if not defined:
        return 0
    lowered = 0
    for r in candidates:
        facts = project.tree(r.path)
        if facts is not None:
            classes = facts.get("cuda_classes") or []
        else:
            src = project.source(r.path)
            classes = cuda_class_spans(src[1]) if src is not None else []
        spans = [(lo, hi, twin) for lo, hi, name in classes for twin in twins(name) if twin in defined]
        if not spans:
            continue
        out = []
        for f in r.findings:
            twin = next((t for lo, hi, t in spans if lo <= f.line <= hi), None)
            if twin is not None and f.severity != "info":
                f = as_info(f, "npu-path", _NOTE.format(twin=f"{twin}, {defined[twin]}"))
                lowered += 1
            out.append(f)
        r.findings = out
    return lowered
