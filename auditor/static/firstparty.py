"""First-party packages of an audited tree (ruff's "known-first-party", found the same way: the packages that sit
at the root of what is audited, or under its `src/`). Auditing bitsandbytes' own repository, `import
bitsandbytes` in its tests and modules is the project's own code, not a dependency to replace: the rules that
name a package (bitsandbytes, flash_attn, apex, Triton kernel modules) do not report the project's own package.
Calls into the project's own operator namespace (`torch.ops.bitsandbytes.*` in bitsandbytes) are its API
likewise. Its CUDA code is still reported where it is (`.cu` files, `torch.cuda` calls, kernels)."""
from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

from auditor.static.context import named_like_cuda_extension
from auditor.static.project_imports import kept_fact
from auditor.static.unresolved_extensions import CHECK_RULES, shaped_segment

# an operator named for CUDA as a word (`cuda_version`, `gather_cuda`; not `scuda`)
_CUDA_OP = re.compile(r"(?i)(?:^|_)cuda(?:$|_)")
# Rule categories whose findings name a package (a dependency), as opposed to a PyTorch API or a device string.
PACKAGE_CATEGORIES = frozenset({"third_party", "attention", "apex", "kernel"})
# Rules of another category that name a package all the same (pd10: NPU144, Horovod's own tree imports horovod;
# t32c: NPU188, BytePS's own `byteps/torch/` imports `byteps.torch.ops`; tq47b: NPU950, sglang-omni's tests import
# its own `sglang_omni.relay.nccl`, whose NCCL code the distributed rules report where it is).
PACKAGE_RULES = frozenset({"horovod-distributed", "byteps-distributed", "nccl-part-of-package"})
# Rules that report a project's own modules by what their path names (t14c: NPU324, `*.*flash_attn*.*`): kept there.
OWN_MODULE_RULES = frozenset({"project-flash-attention-module"})


def first_party_packages(rels: Iterable[str]) -> frozenset[str]:
    """Top-level package names of the audited tree, from the relative paths of its files: `pkg/__init__.py`
    and `src/pkg/__init__.py`; and the packages of a top-level namespace package (PEP 420: `nvidia/dali/__init__.py`
    with no `nvidia/__init__.py`, `cuda/core/__init__.py` in cuda-python's wheels) by their dotted name, `nvidia.dali`
    (s15c: auditing NVIDIA DALI's or cuda-core's own source, `from nvidia.dali import ops` is the project's own
    module; another `nvidia.*` package stays a dependency)."""
    out = set()
    nested = set()
    for rel in rels:
        parts = rel.replace("\\", "/").split("/")
        if parts[0] == "src":
            parts = parts[1:]
        if len(parts) == 2 and parts[1] == "__init__.py" and parts[0].isidentifier():
            out.add(parts[0])
        elif len(parts) == 3 and parts[2] == "__init__.py" and parts[0].isidentifier() and parts[1].isidentifier():
            nested.add((parts[0], parts[1]))
    return frozenset(out | {f"{top}.{sub}" for top, sub in nested if top not in out})


def is_first_party(finding, packages: frozenset[str]) -> bool:
    """A package finding whose symbol is a dotted name inside one of the tree's own packages."""
    if not packages or not finding.symbol or (finding.category not in PACKAGE_CATEGORIES
                                              and finding.name not in PACKAGE_RULES):
        return False
    if finding.name in OWN_MODULE_RULES or finding.name in CHECK_RULES or finding.name in NAME_READ_RULES:
        # the rule is about the project's own module (`vllm.vllm_flash_attn` in vLLM's tree; a compiled module of the
        # project's package, `pylibwholegraph.binding.wholememory_binding`, tk38, or `mermaid.libraries._ext.my_lib_1D`,
        # built into the package and absent from the tree, lead session 39: drop_python_named drops the Python ones)
        return False
    parts = finding.symbol.split(".")
    if parts[:2] == ["torch", "ops"] and len(parts) > 2:
        # `torch.ops.bitsandbytes.*`: the project's own operator library; an op it names for CUDA stays a finding
        # (`torch.ops.torch_spline_conv.cuda_version()` in PyG's extension packages: the CUDA release its compiled
        # library was built with, -1 in a CPU build; tk41)
        return parts[2] in packages and not _CUDA_OP.search(parts[-1])
    return parts[0] != "torch" and (parts[0] in packages or ".".join(parts[:2]) in packages)


def drop_first_party(results: list, packages: frozenset[str]) -> int:
    """Remove package findings about the tree's own packages from each FileResult; returns how many."""
    dropped = 0
    if not packages:
        return 0
    for result in results:
        kept = [f for f in result.findings if not is_first_party(f, packages)]
        dropped += len(result.findings) - len(kept)
        result.findings = kept
    return dropped


# Rules that read a module as a compiled extension by its name alone (t26a: NPU891 `cuda_*` / `*_ext`) or by how the
# file calls it (tk37: NPU837, a bare module no PyPI package provides, called like an extension): where the audited
# tree holds a Python module or package of that name, the name is the project's own Python code (the call-read ones:
# unresolved_extensions.CHECK_RULES).
NAME_READ_RULES = frozenset({"own-cuda-extension-name"})


def python_module_names(rels: Iterable[str]) -> frozenset[str]:
    """Stems of the tree's `.py` files and the folders of its `__init__.py` files, wherever they sit (scripts put
    their own folders on sys.path, so `import cuda_utils` may mean `tools/cuda_utils.py`)."""
    out = set()
    for rel in rels:
        parts = rel.replace("\\", "/").split("/")
        if parts[-1] == "__init__.py" and len(parts) > 1:
            out.add(parts[-2])
        elif parts[-1].endswith(".py"):
            out.add(parts[-1][:-3])
    return frozenset(out)


# Rules that read a module as a compiled extension by the `*_cuda` / `*_kernels` spelling of a package segment
# (NPU379): a name imported from one of the tree's own plain Python module files inside such a package is Python
# (tq58a: a uv workspace member's `packages/x-kernels/src/x_kernels/vae/types.py` holding `M = 128`), not the extension
MODULE_FILE_RULES = frozenset({"cuda-extension-module-import"})


def python_module_files(rels: Iterable[str]) -> frozenset[str]:
    """Dotted names a `.py` module file of the tree (not a package's `__init__.py`, which may re-export a compiled
    submodule: `from .Copy import *`) can be imported by, from every folder that may be a root: two parts at least,
    `pkg/sub/mod.py` -> `sub.mod`, `pkg.sub.mod`."""
    out = set()
    for rel in rels:
        parts = rel.replace("\\", "/").split("/")
        if not parts[-1].endswith(".py") or parts[-1] == "__init__.py":
            continue
        parts[-1] = parts[-1][:-3]
        for start in range(len(parts) - 2, -1, -1):
            if not parts[start].isidentifier():
                break
            out.add(".".join(parts[start:]))
    return frozenset(out)


def in_python_module_file(symbol: str, modules: frozenset[str]) -> bool:
    """Whether `symbol` is (a name of) one of the tree's Python module files and every extension-shaped segment
    (named_like_cuda_extension) lies in that module's own path: `x_kernels.vae.types.M` with `x_kernels/vae/types.py`
    in the tree; not `x_kernels.gather` (a package `__init__`) nor `pkg_kernels.mod.quant_cuda.run`."""
    parts = symbol.split(".")
    for end in range(len(parts), 1, -1):
        if ".".join(parts[:end]) in modules:
            return not any(named_like_cuda_extension(p) for p in parts[end:])
    return False


def drop_python_module_reads(results: list, modules: frozenset[str]) -> int:
    """Remove MODULE_FILE_RULES findings on names of the tree's own Python module files (in_python_module_file)."""
    dropped = 0
    for result in results:
        kept = [f for f in result.findings
                if not (f.name in MODULE_FILE_RULES and in_python_module_file(f.symbol or "", modules))]
        dropped += len(result.findings) - len(kept)
        result.findings = kept
    return dropped


# the wrapper torch.utils.ffi's `create_extension('_ext.nms', ...).build()` writes into `_ext/nms/__init__.py`
_FFI_WRAPPER = "from torch.utils.ffi import _wrap_function"
_FFI_SUMMARY_KEY = "ffi_wrapper"     # the summary's fact: the file is such a wrapper (a bool)


def ffi_wrapper_names(files: Iterable[tuple[Path, str]], results: Iterable = (),
                      changed: set[str] | None = None) -> frozenset[str]:
    """Folders the pre-1.0 FFI builder generated (tk47, AnyNet's committed `models/spn/_ext/gaterecurrent2dnoind/
    __init__.py`): a package whose `__init__.py` wraps the compiled library's symbols (`_wrap_function(fn, _ffi)`), and
    the `*_ext` package above it. Their attributes are the compiled extension's functions, not Python code, so they are
    no Python module for `drop_python_named`. Only `__init__.py` files under a `*_ext` folder are read, once: the answer
    is kept in the file's summary (`results`' summaries, saved with the cache; `changed` gets the files whose summary
    now holds it), so a warm run reads none of them."""
    summaries = {r.path: r.summary for r in results}
    memoised = changed if changed is not None else set()
    out: set[str] = set()
    for path, rel in files:
        parts = rel.replace("\\", "/").split("/")
        if len(parts) < 3 or parts[-1] != "__init__.py" or not parts[-3].endswith("_ext"):
            continue
        if kept_fact(summaries.get(rel), _FFI_SUMMARY_KEY, lambda held: isinstance(held, bool),
                     lambda: _wraps_ffi(path), memoised, rel):
            out.update((parts[-2], parts[-3]))
    return frozenset(out)


def _wraps_ffi(path: Path) -> bool:
    try:
        return _FFI_WRAPPER in Path(path).read_text(errors="replace")
    except OSError:
        return False


def drop_python_named(results: list, names: frozenset[str]) -> int:
    """Remove name-read findings (NAME_READ_RULES) whose extension-named module (`cuda_*` / `*_ext`, not the function
    called in it) is one of the tree's Python modules, and call-read ones (unresolved_extensions.CHECK_RULES) whose
    module is: its segment named like a compiled module (unresolved_extensions.shaped_segment: `wholememory_binding` in
    `pylibwholegraph.binding.wholememory_binding`), or the first segment of a bare module."""
    dropped = 0
    for result in results:
        kept = [f for f in result.findings
                if not (f.name in NAME_READ_RULES and any(p in names for p in (f.symbol or "").split(".")
                                                          if p.startswith("cuda_") or p.endswith("_ext"))
                        or f.name in CHECK_RULES and shaped_segment(f.symbol or "") in names)]
        dropped += len(result.findings) - len(kept)
        result.findings = kept
    return dropped
