"""Another accelerator's package is not CUDA code (issue 11, t11u, tuned on heldout13; policy (d2) in
docs/precision.md).

intel-extension-for-deepspeed is DeepSpeed's accelerator for Intel GPUs (XPU): its op builders subclass a SYCL
builder (`class FusedAdamBuilder(SYCLOpBuilder): BUILD_VAR = "DS_BUILD_FUSED_ADAM"`, `NAME = "flash_attn"`), its
setup.py builds SYCL extensions (`from torch.xpu.cpp_extension import DpcppBuildExtension`,
`create_ext_modules("flash_attn")`), its accelerator class offers `HalfTensor` / `BFloat16Tensor` by the interface's
contract. Names shared with DeepSpeed's CUDA builders (`DS_BUILD_*`, `flash_attn`) read there as CUDA build settings
and FlashAttention choices; none of it is CUDA, none of it runs on Ascend.

Structure read (per run, from the import facts each file's summary already holds; no file is read again):

- a first-party package (the folder of a module: a test suite or an examples tree keeps one backend per folder)
  one of whose modules imports another accelerator's runtime (`intel_extension_for_pytorch`,
  `oneccl_bindings_for_pytorch`, `torch.xpu.*`, Habana's, Cambricon's, Moore Threads', Neuron's packages:
  VENDOR_RUNTIMES), anywhere in the module (a builder imports its extension class
  inside a method), is that accelerator's package: every module of it;
- a file outside packages (setup.py, a script) that imports one at load time is that accelerator's file;
- unless the package (or file) also imports torch_npu or a CUDA-only package (CUDA_PACKAGES), or holds a finding on a
  `torch.cuda` / `torch.backends.cudnn` API: then it is multi-backend code, and the per-line context decides.

There errors and warnings are info (`other-backend`, never rewritten), and dtype facts (category precision) are
dropped: the dtype is the other accelerator's choice, nothing on the NPU. A file's NAME alone never makes it
another backend's here: the imports decide.
"""
from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from auditor.static.backends import _NOTES, discount_owned

# another accelerator's runtime or build packages (module prefixes), and the backend each is
VENDOR_RUNTIMES = {"intel_extension_for_pytorch": "xpu", "oneccl_bindings_for_pytorch": "xpu", "torch.xpu": "xpu",
                   "habana_frameworks": "hpu", "torch_mlu": "mlu", "torch_musa": "musa", "torch_gcu": "gcu",
                   "torch_sdaa": "sdaa", "torch_neuronx": "neuron", "neuronx_distributed": "neuron"}
# packages that say the code is (also) CUDA's or Ascend's: such a package is multi-backend, not another vendor's
CUDA_PACKAGES = ("torch_npu", "cupy", "pycuda", "pynvml", "nvidia", "cuda", "apex", "flash_attn", "xformers",
                 "tensorrt", "bitsandbytes", "vllm", "deep_gemm", "flashinfer")
_CUDA_SYMBOLS = ("torch.cuda", "torch.backends.cuda", "torch.backends.cudnn")


def _runtime(module: str) -> str | None:
    for prefix in VENDOR_RUNTIMES:
        if module == prefix or module.startswith(prefix + "."):
            return prefix
    return None


def _cuda_import(module: str, names: Sequence[str]) -> bool:
    top = module.split(".", 1)[0]
    return top in CUDA_PACKAGES or any(n in ("CUDAExtension", "CUDA_HOME") for n in names)


def vendor_files(results: list, files: Sequence[tuple[Path, str]], project) -> dict[str, str]:
    """{rel: the runtime import that makes it another accelerator's code}."""
    names = project.module_names()
    runtime_of: dict[str, str] = {}      # package (or file) -> runtime
    blocked: set[str] = set()
    member: dict[str, str] = {}
    for _path, rel in files:
        if not rel.endswith(".py"):
            continue
        name = names.get(rel, "")
        # its package (the folder), not the top level; a package's __init__.py is the package itself
        owner = name if rel.endswith("__init__.py") and name else name.rsplit(".", 1)[0] if "." in name else rel
        member[rel] = owner
        for module, imported, load_time in (project.facts(rel) or {}).get("load") or []:
            if _cuda_import(module, imported or ()):
                blocked.add(owner)
            found = _runtime(module) or next((r for n in imported or () if (r := _runtime(f"{module}.{n}"))), None)
            if found and (owner != rel or load_time):
                runtime_of.setdefault(owner, found)
    if not runtime_of:
        return {}
    for r in results:
        owner = member.get(r.path)
        if owner in runtime_of and any((f.symbol or "").startswith(_CUDA_SYMBOLS) for f in r.findings):
            blocked.add(owner)
    return {rel: runtime_of[owner] for rel, owner in member.items() if owner in runtime_of and owner not in blocked}


def apply_vendor_packages(results: list, files: Sequence[tuple[Path, str]], project) -> int:
    """Make errors and warnings info and drop dtype facts in another accelerator's package; returns how many
    changed."""
    if not any(r.findings and r.path.endswith(".py") for r in results):
        return 0
    return discount_owned(
        results, vendor_files(results, files, project),
        lambda via: f"another accelerator's package (it imports {via}): {_NOTES['other-backend']}",
        lower=lambda f: f.severity != "info" and f.data.get("context") in (None, "backend-dispatch",
                                                                            "cuda-available-branch"),
        drop=lambda f: f.category == "precision" and f.data.get("context") in (None, "other-backend"))


__all__ = ["VENDOR_RUNTIMES", "apply_vendor_packages", "vendor_files"]
