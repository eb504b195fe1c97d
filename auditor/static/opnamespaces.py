"""Operator namespaces an audited tree defines itself. A project that ships its own C++ operator library registers
it with `TORCH_LIBRARY(ns, m)` or `TORCH_LIBRARY_FRAGMENT(ns, m)` (PyTorch's dispatcher registration macros,
torch/library.h); its Python then calls `torch.ops.ns.op(...)`. Auditing intel-extension-for-pytorch, for
instance, `torch.ops.torch_ipex.*` is the project's own library (csrc/ registers `torch_ipex`), not a dependency
to replace: like a first-party package (firstparty.py), those calls are not reported. The namespace need not be
the package's name (`intel_extension_for_pytorch` registers `torch_ipex`), so the C++ sources are read.

The C++ files are read only when some `torch.ops.<ns>` finding names a namespace that is not already
first-party, and the walk stops once every such namespace is found, so trees without one pay nothing."""
from __future__ import annotations

import os
import re
from collections.abc import Iterable
from pathlib import Path

_CXX_SUFFIXES = (".cpp", ".cc", ".cxx", ".cu", ".h", ".hpp", ".cuh")
_REGISTRATION = re.compile(rb"\bTORCH_LIBRARY(?:_FRAGMENT)?\(\s*([A-Za-z_]\w*)\s*,")
# PyTorch's and its domain libraries' own namespaces: a fragment a project adds to them does not make them its own
_NOT_OWN = frozenset({"aten", "prim", "prims", "quantized", "_quantized", "c10d", "_c10d_functional", "torchvision",
                      "torchaudio", "_dtensor", "inductor", "higher_order"})
_SKIP_DIRS = frozenset({".git", "node_modules", "__pycache__", "build", "dist", "third_party", "3rdparty",
                        "thirdparty", "external", "submodules"})


def op_namespaces_named(results: Iterable) -> set[str]:
    """Namespaces of the custom-operator findings (`torch.ops.torch_ipex.nms` -> torch_ipex)."""
    out = set()
    for result in results:
        for f in result.findings:
            parts = (f.symbol or "").split(".")
            if f.name == "custom-torch-ops" and parts[:2] == ["torch", "ops"] and len(parts) > 2 and parts[2]:
                out.add(parts[2])
    return out


def registered_namespaces(roots: Iterable[Path], wanted: set[str]) -> set[str]:
    """Which of `wanted` the C++ sources under `roots` register (their own code, not vendored third-party
    folders); stops as soon as all are found."""
    wanted = set(wanted) - _NOT_OWN
    found: set[str] = set()
    for root in roots:
        if not wanted - found or not root.is_dir():
            continue
        for folder, dirs, files in os.walk(root):
            dirs[:] = [d for d in dirs if d not in _SKIP_DIRS and not d.startswith(".")]
            for name in files:
                if not name.endswith(_CXX_SUFFIXES):
                    continue
                try:
                    data = (Path(folder) / name).read_bytes()
                except OSError:
                    continue
                if b"TORCH_LIBRARY" not in data:
                    continue
                found.update(m.decode() for m in _REGISTRATION.findall(data) if m.decode() in wanted)
                if not wanted - found:
                    return found
    return found
