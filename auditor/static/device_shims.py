"""A tree's own device package that remaps CUDA APIs when it is imported (issue 11, t11i, tuned on heldout7).

torch_npu's `transfer_to_npu` is not the only shim that makes CUDA-spelled code run on another device. A vendor
device abstraction can do the same for its own device: DeepLink's DIPU (`import torch_dipu`, built per vendor,
Ascend among them) sets `torch.Tensor.cuda = torch.Tensor.dipu`, `torch.Tensor.is_cuda = ...`, replaces the
`torch.cuda.*` functions by its own (`setattr(torch.cuda, attr, getattr(dipu, attr))`), the `torch.cuda.*Tensor`
types, and wraps the device-taking factories so that `"cuda"` means its device (DIPU_MOCK_CUDA, on by default).
Code that imports such a package runs as written on every device the package is built for.

The tool recognises such a package by structure, not by name: a package of the audited tree whose import (its
`__init__.py` and the modules that loads at import time, inside the package) assigns `Tensor.cuda` AND patches
the `torch.cuda` namespace (an assignment to `torch.cuda.<name>` or `setattr(torch.cuda, ...)`). A test that fakes
one probe (`torch.cuda.is_available = lambda: True`, `monkeypatch.setattr(torch.cuda, ...)`) is no such package:
it neither lives in a package's import path nor rebinds `Tensor.cuda`.

In the package itself and in every file that imports it (at load time or in a function: once imported, the process
is patched), findings of the APIs such a shim remaps (backends.TRANSFER_REMAPPED: `.cuda()`, `torch.cuda.*`,
`"cuda"` device arguments, `is_cuda` ...) are info, never rewritten, with the package named, as under transfer_to_npu.
The package's own compiled runtime (`from torch_dipu import _C`, `_C._manual_seed(...)`) is the device layer
itself, built for each vendor, not an outside CUDA extension: its kernel-rule findings (NPU358) are dropped.

Which vendors such a package is built for is not read (DIPU's csrc_dipu/vendor/ascend says Ascend is one of them):
the findings stay, as info, to say that the code depends on the shim.
"""
from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from auditor.static.backends import CUDA_HELPER, TRANSFER_REMAPPED, as_info
from auditor.static.module_paths import absolute_dotted

# `torch.Tensor.cuda = torch.Tensor.dipu`, `Tensor.cuda = _cuda` (not `==`)
_TENSOR_CUDA = re.compile(r"^[ \t]*(?:torch\.)?Tensor\.cuda[ \t]*=(?!=)", re.M)
# `setattr(torch.cuda, attr, ...)`, `torch.cuda.device = dipu.devicectx`, `torch.cuda.memory.x = ...`
_CUDA_NAMESPACE = re.compile(r"\bsetattr\([ \t]*torch\.cuda\b|^[ \t]*torch\.cuda(?:\.\w+)+[ \t]*=(?!=)", re.M)
_MAX_FILES = 64         # the modules a package's import loads, read at most (the patches sit near its __init__)
_KERNEL_CATEGORIES = frozenset({"kernel", "third_party"})


def cuda_patches(text: str) -> list[bool]:
    """[rebinds Tensor.cuda, patches the torch.cuda namespace] for a source text (per file, in the worker: kept in
    the file's cross-file summary as `cuda_patch` when either holds)."""
    if "cuda" not in text:
        return [False, False]
    return [_TENSOR_CUDA.search(text) is not None, _CUDA_NAMESPACE.search(text) is not None]


def _remapped(f) -> bool:
    return f.name in TRANSFER_REMAPPED and f.severity != "info" and not f.data.get("dispatch_key")


def _imported_tops(facts: dict, me: str, is_package: bool, load_time_only: bool = False) -> set[str]:
    out = set()
    for module, _names, load_time in facts.get("load") or ():
        if load_time_only and not load_time:
            continue
        name = absolute_dotted(module, me, is_package) if me else module
        if name:
            out.add(name.split(".", 1)[0])
    return out


class _Shims:
    def __init__(self, project) -> None:
        self.project = project
        self.names = project.module_names()        # rel -> dotted name by packages
        self.rel_of = {name: rel for rel, name in self.names.items()}
        self._answers: dict[str, str | None] = {}

    def shim(self, top: str) -> str | None:
        """The file of package `top` whose import patches CUDA (its rel), or None."""
        if top not in self._answers:
            self._answers[top] = self._find(top)
        return self._answers[top]

    def _find(self, top: str) -> str | None:
        start = self.rel_of.get(top)
        if start is None or not start.endswith("__init__.py"):
            return None
        seen = {top}
        todo = [top]
        tensor = namespace = None
        while todo and len(seen) <= _MAX_FILES:
            name = todo.pop(0)
            rel = self.rel_of.get(name)
            if rel is None:
                continue
            summary = self.project.summaries.get(rel)
            if summary is not None:
                patch = summary.get("cuda_patch") or [False, False]
            else:       # no summary (a caller without results): read the file
                source = self.project.source(rel)
                patch = cuda_patches(source[0]) if source is not None else [False, False]
            tensor = tensor or (rel if patch[0] else None)
            namespace = namespace or (rel if patch[1] else None)
            if tensor and namespace:
                return tensor
            facts = self.project.facts(rel) or {}
            is_package = rel.endswith("__init__.py")
            for module, names, load_time in facts.get("load") or ():
                if not load_time:
                    continue
                resolved = absolute_dotted(module, name, is_package)
                for cand in [resolved, *(f"{resolved}.{n}" for n in names)]:
                    if cand.split(".", 1)[0] == top and cand in self.rel_of and cand not in seen:
                        seen.add(cand)
                        todo.append(cand)
        return None


def apply_device_shims(results: list, files: Sequence[tuple[Path, str]], project) -> int:
    """Lower remapped findings in a tree package that patches CUDA at import and in its importers, and drop the
    kernel findings about that package's own modules (its `_C`); returns how many findings changed."""
    holders = [r for r in results if r.path.endswith(".py") and
               any(_remapped(f) or f.category in _KERNEL_CATEGORIES for f in r.findings)]
    if not holders:
        return 0
    shims = _Shims(project)
    packages = {name.split(".", 1)[0] for name in shims.names.values()}
    changed = 0
    for r in holders:
        me = shims.names.get(r.path, "")
        is_package = r.path.endswith("__init__.py")
        facts = project.facts(r.path) or {}
        tops = _imported_tops(facts, me, is_package) | ({me.split(".", 1)[0]} if "." in me or is_package else set())
        found = [(top, via) for top in sorted(tops & packages) if (via := shims.shim(top)) is not None]
        if not found:
            continue
        top, via = found[0]
        own = {t for t, _ in found}
        kept = []
        for f in r.findings:
            if f.category in _KERNEL_CATEGORIES and (f.symbol or "").split(".", 1)[0] in own and \
                    (f.symbol or "").split(".")[1:2] == ["_C"]:
                changed += 1        # `from torch_dipu import _C`: the device layer's own runtime
                continue
            if f.name == CUDA_HELPER and f.severity != "info":
                changed += 1
                continue
            if _remapped(f):
                f = as_info(f, "device-shim", f"remapped at run time: `{top}` ({via}) rebinds Tensor.cuda and "
                                              f"torch.cuda to its own device when imported; runs where that package "
                                              f"is built for Ascend, native torch.npu calls avoid the shim")
                changed += 1
            kept.append(f)
        r.findings = kept
    return changed
