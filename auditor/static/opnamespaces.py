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

from auditor.source import SourceError
from auditor.static.project_imports import as_text, held_tree, read_counted

_CXX_SUFFIXES = (".cpp", ".cc", ".cxx", ".cu", ".h", ".hpp", ".cuh")
_REGISTRATION = re.compile(rb"\bTORCH_LIBRARY(?:_FRAGMENT)?\(\s*([A-Za-z_]\w*)\s*,")
# PyTorch's and its domain libraries' own namespaces: a fragment a project adds to them does not make them its own
_NOT_OWN = frozenset({"aten", "prim", "prims", "quantized", "_quantized", "c10d", "_c10d_functional", "torchvision",
                      "torchaudio", "_dtensor", "inductor", "higher_order"})
# Python definitions of operators (torch/library.py): `lib = torch.library.Library("custom", "FRAGMENT")` with
# `lib.define("sin_cos(Tensor x) -> Tensor")` in the same file, `torch.library.define("ns::op(...)")`,
# `@custom_op("ns::op")`, `triton_op("ns::op")` (t11i, tuned on heldout7: torchair's system tests define their own
# `custom` ops). Per operator, not per namespace: torch-tensorrt defines `tensorrt::fused_nccl_*` in Python while its
# `torch.ops.tensorrt.execute_engine` is its compiled runtime's. `register_fake("_C::op")` / `impl("ns::op")` define
# nothing (vLLM registers fakes for its compiled `_C` ops).
_PY_LIBRARY = re.compile(rb"""\bLibrary\(\s*["']([A-Za-z_]\w*)["']\s*,\s*["'](?:DEF|FRAGMENT)["']""")
_PY_DEFINE = re.compile(rb"""\.define\(\s*f?["']([A-Za-z_]\w*)\(""")
# a file with several libraries (converter tests with one `m = Library("custom_inplace", "DEF")` per case, t11j):
# the variable, at each point of the file, pairs a library with the `m.define(...)` calls that follow
_PY_LIBRARY_BOUND = re.compile(
    rb"""\b([A-Za-z_]\w*)\s*=\s*(?:torch\.library\.|library\.)?Library\(\s*["']([A-Za-z_]\w*)["']\s*,\s*"""
    rb"""["'](?:DEF|FRAGMENT)["']""")
_PY_VAR_DEFINE = re.compile(rb"""\b([A-Za-z_]\w*)\.define\(\s*f?["']([A-Za-z_]\w*)\(""")
_PY_QUALIFIED = re.compile(rb"""\b(?:custom_op|triton_op|define)\(\s*["']([A-Za-z_]\w*)::(\w+)""")
# dispatch keys named in the file (`@impl(lib, "sin", "CPU")`, `lib.impl("op", fn, "CUDA")`, `register_kernel("cuda")`)
_PY_KEY = re.compile(rb"""["'](CUDA|cuda|AutogradCUDA|CPU|cpu|Meta|CompositeExplicitAutograd|CompositeImplicitAutograd|"""
                     rb"""PrivateUse1|privateuse1|npu|NPU|Autograd|AutogradPrivateUse1|XPU|xpu)["']""")
# a CUDA extension the same file builds (`load(name=..., sources=[... "kernel.cu"])`, `CUDAExtension(...)`): an op whose
# implementation is that extension's function (`impl("aqlm::code1x16_matmat", "default", CUDA_KERNEL.code1x16_matmat)`,
# aqlm) is a CUDA op even when registered for the "default" key
_CUDA_BUILD = re.compile(rb"""\.cu["']|\bCUDAExtension\(|\bload_inline\([^)]*cuda_sources""")
_PORTABLE_KEYS = frozenset({b"CPU", b"cpu", b"CompositeExplicitAutograd", b"CompositeImplicitAutograd", b"PrivateUse1",
                            b"privateuse1", b"npu", b"NPU", b"Autograd", b"AutogradPrivateUse1"})


def python_registrations(data: bytes) -> set[str]:
    """`ns.op` for each operator a Python source defines with torch.library, except where every implementation it
    registers is for the CUDA key or comes from a CUDA extension the file builds (an op defined in Python whose only
    kernel is CUDA's still fails on an NPU)."""
    if b"Library(" not in data and b"::" not in data:
        return set()
    found = {f"{ns.decode()}.{op.decode()}" for ns, op in _PY_QUALIFIED.findall(data)}
    libraries = set(_PY_LIBRARY.findall(data))
    if len(libraries) == 1:
        ns = next(iter(libraries)).decode()
        found |= {f"{ns}.{op.decode()}" for op in _PY_DEFINE.findall(data)}
    elif len(libraries) > 1:      # several libraries: each `lib.define("op(")` with the namespace `lib` holds there
        events = sorted([(m.start(), 0, m) for m in _PY_LIBRARY_BOUND.finditer(data)] +
                        [(m.start(), 1, m) for m in _PY_VAR_DEFINE.finditer(data)], key=lambda e: e[:2])
        bound: dict[bytes, bytes] = {}
        for _, kind, m in events:
            if kind == 0:
                bound[m.group(1)] = m.group(2)
            elif m.group(1) in bound:
                found.add(f"{bound[m.group(1)].decode()}.{m.group(2).decode()}")
    if not found:
        return set()
    keys = set(_PY_KEY.findall(data))
    if (any(b"CUDA" in k.upper() for k in keys) or b"cpp_extension" in data and _CUDA_BUILD.search(data)) \
            and not keys & _PORTABLE_KEYS:
        return set()
    return {op for op in found if op.split(".", 1)[0] not in _NOT_OWN}


def defined_ops_fact(data: bytes) -> list[str]:
    """python_registrations of one file as a sorted list, for its per-file facts (project_imports.TREE, `ops`):
    computed once per file in the worker, read by python_defined_ops. Every spelling python_registrations reads
    holds `define(`, `custom_op(` or `triton_op(`: a file without them is not searched."""
    if b"define(" not in data and b"custom_op(" not in data and b"triton_op(" not in data:
        return []
    return sorted(python_registrations(data))


def python_defined_ops(files: Iterable[tuple[Path, str]], wanted: set[str], project=None) -> set[str]:
    """The `ns.op` operators of the namespaces `wanted` that the tree's Python files define (python_registrations).
    Each file's operators come from its per-file facts (`ops`, ProjectImports.tree); a file without them (no
    `project`, a file the worker did not read) is read now, counted in `project.reads`."""
    found: set[str] = set()
    for path, rel in files:
        if not rel.endswith(".py"):
            continue
        facts = held_tree(project, rel)
        if facts is not None:
            ops = set(facts.get("ops") or ())
        else:
            try:
                data = read_counted(project, path, limit=None)
            except (OSError, SourceError):
                continue
            ops = python_registrations(data)
        found |= {op for op in ops if op.split(".", 1)[0] in wanted}
    return found


def drop_own_ops(results: Iterable, ops: set[str]) -> int:
    """Remove custom-op findings that call an operator the tree defines in Python (`torch.ops.custom.sin_cos.default`
    where `custom.sin_cos` is in `ops`); returns how many."""
    dropped = 0
    if not ops:
        return 0
    for result in results:
        kept = []
        for f in result.findings:
            parts = (f.symbol or "").split(".")
            if f.name == "custom-torch-ops" and parts[:2] == ["torch", "ops"] and len(parts) > 3 and \
                    f"{parts[2]}.{parts[3]}" in ops:
                dropped += 1
                continue
            kept.append(f)
        result.findings = kept
    return dropped


_GETATTR_OPS = re.compile(r"""\bgetattr\(\s*torch\.ops\s*,\s*["']([A-Za-z_]\w*)["']""")
# `getattr(torch.ops, lib_name)` where the same file registers `Library(lib_name, ...)` (dlinfer's register_custom_op:
# the namespace it has just registered with the vendor's dispatch key): the tree's own op registry (t11j)
_GETATTR_VAR = re.compile(r"""\bgetattr\(\s*torch\.ops\s*,\s*([A-Za-z_]\w*)\s*\)""")


def getattr_namespaces_fact(data: bytes) -> dict[str, list[str]]:
    """{line number (a string, for JSON): the namespaces `getattr(torch.ops, "...")` names on it} for the lines of
    one file that name one, read as literal_namespaces always read them (UTF-8, errors replaced, `splitlines`): its
    per-file fact (project_imports.TREE, `getattr`), once per file in the worker."""
    if b"getattr(" not in data:
        return {}
    out: dict[str, list[str]] = {}
    for number, line in enumerate(data.decode("utf-8", errors="replace").splitlines(), 1):
        if "getattr(" in line:
            names = _GETATTR_OPS.findall(line)
            if names:
                out[str(number)] = names
    return out


def getattr_own_lines_fact(data: bytes) -> list[int]:
    """The lines of one file where `getattr(torch.ops, lib_name)` (a variable, no literal) names a namespace the same
    file registers with `Library(lib_name, ...)` (t11j): its per-file fact (project_imports.TREE, `getattr_own`)."""
    if b"getattr(" not in data or b"Library(" not in data:
        return []
    text = data.decode("utf-8", errors="replace")
    out = []
    for number, line in enumerate(text.splitlines(), 1):
        if "getattr(" not in line or _GETATTR_OPS.search(line):
            continue
        var = set(_GETATTR_VAR.findall(line))
        if len(var) == 1 and re.search(rf"\bLibrary\(\s*{re.escape(next(iter(var)))}\s*,", text):
            out.append(number)
    return out


def literal_namespaces(results: Iterable, files: Iterable[tuple[Path, str]], not_reported: frozenset[str],
                       project=None) -> int:
    """`getattr(torch.ops, "npugraph_ex")` names its namespace as a literal: the finding (symbol `torch.ops`) is
    given it (`torch.ops.npugraph_ex`), so that the namespaces the rule does not report (PyTorch's, torch_npu's) and
    the tree's own (registered_namespaces) are read as for `torch.ops.npugraph_ex`; dropped when the rule does not
    report it. Returns how many were dropped. The names of each line come from the file's per-file facts
    (`getattr`, ProjectImports.tree); a file without them is read now, counted in `project.reads`."""
    from dataclasses import replace

    by_rel = None
    dropped = 0
    for result in results:
        if not any(f.name == "custom-torch-ops" and f.symbol == "torch.ops" for f in result.findings):
            continue
        if by_rel is None:
            by_rel = {rel: path for path, rel in files}
        facts = project.tree(result.path) if project is not None and result.path in by_rel else None
        if facts is not None:
            named: dict[str, list[str]] = facts.get("getattr") or {}
            own = set(facts.get("getattr_own") or ())
        else:
            try:
                lines = as_text(read_counted(project, by_rel[result.path], limit=None)).splitlines()
            except (OSError, SourceError, KeyError):
                continue
            named = {str(n): _GETATTR_OPS.findall(line) for n, line in enumerate(lines, 1) if "getattr(" in line}
            own = set(getattr_own_lines_fact("\n".join(lines).encode("utf-8")))
        kept = []
        for f in result.findings:
            if f.name == "custom-torch-ops" and f.symbol == "torch.ops":
                if f.line in own:
                    dropped += 1
                    continue
                names = named.get(str(f.line)) or []
                if len(set(names)) == 1:
                    if names[0] in not_reported:
                        dropped += 1
                        continue
                    f = replace(f, symbol=f"torch.ops.{names[0]}")
            kept.append(f)
        result.findings = kept
    return dropped


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
