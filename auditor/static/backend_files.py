"""Files read with their neighbours: per-backend sets of files and files with an NPU twin, and cuDNN-named
environment variables that nothing reads. Applied once per run, after the per-file passes (they need the file
list of a folder, which a per-file analysis does not see).

- A file whose own name names CUDA (`docker/Dockerfile.cuda`, `requirements-cuda.txt`) in a folder that holds the
  same kind of file for another backend (`Dockerfile.metax`, `Dockerfile.npu`), and every file in a folder named
  for CUDA beside a folder for another backend or a portable fallback (`alias_free_activation/cuda/` beside
  `alias_free_activation/torch/`): the CUDA member of a per-backend set, as `backends/cuda/` is. So is every file
  of a folder holding CUDA sources (`.cu`) beside the same folder for another backend (LightX2V's CUDA kernel
  package `lightx2v_kernel/` beside `lightx2v_kernel_xpu/`). Info, never rewritten: the port adds an Ascend member
  beside it. So is a folder named for CUDA whose sibling package a dispatcher module beside them maps the Ascend
  device to (lmdeploy's `kernels/dispatcher.py`: `{'cuda': 'cuda', 'ascend': 'dlinfer'}` beside `kernels/cuda/` and
  `kernels/dlinfer/`; issue 11, t11g).
- A project file (config, Dockerfile, script; not Python) in a folder that holds an NPU variant of it
  (`DeepSeek-V3-Chat-multi-gpu-4.yaml` beside `DeepSeek-V3-Chat-npu.yaml`, or in an `npu/` folder beside it: a
  file of the same kind whose words other than the backend's are all in this file's name), which does not
  build on this file (no `-r requirements.txt`, `FROM`, include of it): the NPU path exists. Info, never rewritten.
- A Dockerfile whose own name names CUDA and no other backend (`docker/Dockerfile.cuda`, `cuda.Dockerfile`) in a
  tree that already runs on Ascend (a Python file imports torch_npu / MindSpeed, ported.imports_ascend): the
  project's NVIDIA image, kept for NVIDIA users, as a CUDA CI job on NVIDIA runners is (policy (c)); the Ascend
  users take the project's own images (xllm's `docker/Dockerfile.cuda`, "for NVIDIA GPU usage"; t11s, tuned on
  heldout11). Info, never rewritten.
- Per-backend file families beyond other vendors (t11v, tuned on heldout14 after its blind run): a file named for
  CUDA beside the same kind of file named for the CPU (`requirements-gpu.txt` beside `requirements-cpu.txt`, the
  project's Dockerfile choosing one by `ARCH`), a file whose name starts with CUDA's word in a folder of files
  prefixed by their device (`examples/cuda_pytorch_bert.py` beside `cpu_ipex_bert.yaml`, `tests/configs/_cuda_.yaml`
  beside `_cpu_.yaml`; they must share a word, or both have none), and a folder named for an NVIDIA-only engine beside
  other backends (`backends/tensorrt_llm/` beside `backends/pytorch/`): the CUDA member of the set, info. The CPU
  member of such a requirements pair keeps NVIDIA wheels only as lock residue of torch's x86-64 build: info too.
  A Dockerfile named for CUDA alone inside a CI folder (`.azure_pipelines/dockerfiles/linux-gpu.dockerfile`) is the
  image of a CUDA CI job, policy (c) extended from GitHub runners to CI images: info.
- NPU004 on a cuDNN-named variable (`CUDNN_*`, `TORCH_CUDNN_*`) that PyTorch does not read (the rule's table of
  variables read by torch, generated from torch's sources by rules/gen/env_vars.py) and that is not one of cuDNN's
  own logging variables (`CUDNN_LOG*`, `*_DBG`, `CUDNN_FRONTEND_*`): `CUDNN_DETERMINISTIC`,
  `TORCH_CUDNN_DETERMINISM` are read by nothing in the CUDA stack, so there is nothing to port. Dropped.
- Performance and fusion hints (info) in test files: a test's speed is not what a port changes. Dropped.
"""
from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import replace
from functools import lru_cache
from pathlib import Path

from auditor.findings import as_info
from auditor.backend_words import MEMBER_CANN_BUILD, MEMBER_CUDA_BUILD, TORCH_CUDA_WHEEL, member_backend, name_word_backends
from auditor.source import SourceError
from auditor.static.backends import OTHER_BACKENDS, backends_in_text, discount_findings, undiscounted
from auditor.static.ported import imports_ascend
from auditor.static.project_imports import held_tree, read_counted
from auditor.astnodes import module_nodes, walk_list

# Folders beside a `cuda/` one that hold the same code without CUDA
_FALLBACK_FOLDERS = frozenset({"torch", "pytorch", "cpu", "triton", "reference", "fallback", "naive", "generic"})
_PYTHON = (".py", ".pyw", ".pyi")
# files a folder of programs holds beside them (notes, configs, launch scripts)
_TEXT_SUFFIXES = (".md", ".txt", ".json", ".yaml", ".yml", ".sh")
# folders named for an NVIDIA-only inference engine: a benchmark's or server's `backends/tensorrt_llm/` beside
# `backends/pytorch/`, `backends/openvino/` is the CUDA member of its per-backend set (t11v, tuned on heldout14)
_NVIDIA_ENGINES = frozenset({"tensorrt_llm", "trtllm", "trt_llm", "tensorrt"})
# folders named for a portable deploy runtime or quantizer beside such an engine's folder: Gold-YOLO's
# `tools/quantization/tensorrt/` beside `mnn/` (Alibaba's MNN engine) and `ppq/` (OpenPPL's quantizer, many targets),
# each one way to deploy the exported ONNX model; an Ascend deployment takes the ONNX export to its own compiler and
# never runs the TensorRT member (policy (k); tq54e)
_DEPLOY_RUNTIME_FOLDERS = frozenset({"onnx", "onnxruntime", "mnn", "ncnn", "tnn", "tflite", "coreml", "rknn", "ppq"})
# folders whose subfolders are one runtime each: CosyVoice's `runtime/triton_trtllm/` (Triton with a TensorRT-LLM
# engine) beside `runtime/python/` (its FastAPI / gRPC servers); a deployment picks one (policy (k); tq56a)
_RUNTIME_SET_PARENTS = frozenset({"runtime", "runtimes", "deploy", "deployment", "deployments", "serving"})
_CUDA_IMAGE_NOTE = "the NVIDIA image of a project that already runs on Ascend ({ascend} imports torch_npu): it " \
                   "stays for NVIDIA users, the Ascend build uses its own image; left as is"
_SET_NOTE = "the CUDA member of a per-backend set of files ({sibling} beside it): add an Ascend member beside it; " \
            "left as is"
_IMAGE_NOTE = "the CUDA member of a set of images whose folder already holds an Ascend one ({image}): left as is"
_CPU_NOTE = "the CPU member of a per-backend set of requirement files ({sibling} beside it): the CPU hosts' " \
            "install, not the one an Ascend port changes (an `nvidia-*` wheel here is lock residue of torch's x86-64 " \
            "build); left as is"
_CI_IMAGE_NOTE = "the image of a CUDA CI job (a Dockerfile named for CUDA in the CI set-up): it tests the NVIDIA build " \
                 "and never runs on an Ascend host; the port adds an Ascend job; left as is"
_REGISTRY_NOTE = "one member of a per-backend registry whose Ascend member the project already has ({member} " \
                 "registers into the same registry): on Ascend that member runs; left as is"
_TARGET_NOTE = "the NVIDIA (TensorRT / PyCUDA) member of a per-target deployment set whose Ascend target the " \
               "project already has ({target}): left as is"
# TensorRT, its engine runtime and PyCUDA: an NVIDIA inference deployment's own runtime
_NVIDIA_RUNTIME_CODES = frozenset({"NPU409", "NPU474", "NPU475"})
_LIBRARY_CATEGORIES = frozenset({"attention", "kernel", "third_party", "apex"})
_TWIN_NOTE = "the folder already holds an NPU variant of this file ({twin}): left as is"
_CUDNN_FAMILY = re.compile(r"^(?:TORCH_)?CUDNN_")
_CUDNN_OWN = re.compile(r"^CUDNN_(?:LOG\w*|FRONTEND_\w+|\w+_DBG)$")


def _name_backends(name: str) -> set[str]:
    """Backends a file or folder name names (`Dockerfile.cuda` -> cuda, `DeepSeek-V3-Chat-npu.yaml` -> npu), build
    variant words included (`requirements-cublas13.txt` -> cuda, `requirements-hipblas.txt` -> rocm; pd1), and CUDA's
    build tag as a word of its own (`verl0.5-cu126-torch2.7-fa2.7.4/`, verl's folder of images for CUDA 12.6 beside
    its `docker/ascend/`: the tag a CUDA wheel or image is built for; tq38)."""
    found = backends_in_text(name.replace(".", "_").replace("-", "_"))
    for word in _WORD.findall(name):
        found |= name_word_backends(word)
        if MEMBER_CUDA_BUILD.match(word.lower()):
            found.add("cuda")
        elif MEMBER_CANN_BUILD.match(word.lower()):
            found.add("npu")
    return found


def _toolkit_tagged_pair(cuda_name: str, other: str) -> bool:
    """Environment files of one per-hardware set, each named for its machine and its toolkit release: MagicDriveDiT's
    `requirements/a800_cu118.yaml`, `h20_cu124.yaml` beside `910b_cann8.0.RC2_aarch64.yaml` (its README installs one
    per machine; tq54e). `cuda_name` carries a CUDA build tag, `other` CANN's release tag and no CUDA word."""
    return any(MEMBER_CUDA_BUILD.match(w.lower()) for w in _WORD.findall(cuda_name)) and \
        any(MEMBER_CANN_BUILD.match(w.lower()) for w in _WORD.findall(other))


@lru_cache(maxsize=4096)
def _entries(folder: str) -> tuple[str, ...]:
    try:
        return tuple(sorted(os.listdir(folder)))
    except OSError:
        return ()


def _kind(name: str) -> str:
    """What a file is, without its backend words: `Dockerfile.cuda` -> dockerfile, `x-npu.yaml` -> .yaml."""
    low = name.lower()
    if low.startswith("dockerfile") or low.endswith(".dockerfile"):
        return "dockerfile"
    if low.startswith("requirements"):
        return "requirements"
    ext = os.path.splitext(low)[1]
    return ".yaml" if ext == ".yml" else ext      # one format, two spellings (tq41: anomalib's compose pair)


def _compose_file(name: str) -> bool:
    """A Docker Compose file (`docker-compose-gpu.yaml`, `compose.gpu.yml`): its plain-named sibling is the same
    services without the NVIDIA image tag and device reservation, the pair a user picks from by host."""
    low = name.lower()
    return low.startswith(("docker-compose", "compose")) and low.endswith((".yaml", ".yml"))


# an NVIDIA-only inference engine as a word of a module's name (`clip_trt.py`, `clip_tensorrt.py`), and the words
# naming the portable runtimes the other members of its per-backend set of modules use (`clip_onnx.py`, `clip_torch.py`)
_ENGINE_WORDS = frozenset({"trt", "tensorrt", "trtllm"})
_PORTABLE_WORDS = frozenset({"onnx", "ort", "onnxruntime", "torch", "pytorch", "openvino", "cpu", "torchscript", "jit"})
# a runtime folder's other members: the portable runtimes and the servers a project writes in Python (tq56a)
_SERVING_WORDS = _PORTABLE_WORDS | {"python", "libtorch", "fastapi", "grpc", "http", "flask", "server", "vllm",
                                    "sglang", "lmdeploy"}


def _module_words(name: str) -> set[str]:
    return {w.lower() for w in _WORD.findall(name.rsplit(".", 1)[0])}


def _engine_pair(folder: str, name: str) -> str | None:
    """`clip_onnx.py` for `clip_tensorrt.py`: a module of the folder named like `name` with the NVIDIA engine's word
    swapped for a portable runtime's (or another backend's), or None."""
    mine = _module_words(name)
    rest = mine - _ENGINE_WORDS
    if not rest or rest == mine:
        return None
    for other in _entries(folder):
        if other == name or not other.endswith(_PYTHON):
            continue
        theirs = _module_words(other)
        runtime = {w for w in theirs if w in _PORTABLE_WORDS or backends_in_text(w) - {"cuda"}}
        if runtime and not theirs & _ENGINE_WORDS and theirs - runtime == rest:
            return other
    return None


def engine_module_sibling(path: Path, rel: str) -> str | None:
    """The NVIDIA-engine member of a per-backend set of modules: clip-as-service's TensorRT executor
    (`executors/clip_tensorrt.py` beside `clip_torch.py` / `clip_onnx.py`, `model/clip_trt.py` beside
    `clip_onnx.py`) and a helper named for the same engine in a folder holding such a pair (`model/trt_utils.py`).
    The project picks the member per deployment; an Ascend one takes the portable member (pd2, heldout20). The
    portable sibling's path, or None."""
    name = rel.rsplit("/", 1)[-1]
    if not name.endswith(_PYTHON) or not _module_words(name) & _ENGINE_WORDS:
        return None
    folder = str(path.parent)
    pair = _engine_pair(folder, name)
    if pair is None:       # `trt_utils.py` beside `clip_trt.py` / `clip_onnx.py`
        engine = _module_words(name) & _ENGINE_WORDS
        pair = next((p for other in _entries(folder) if other != name and other.endswith(_PYTHON)
                     and _module_words(other) & engine for p in [_engine_pair(folder, other)] if p), None)
    return None if pair is None else "/".join(rel.split("/")[:-1] + [pair])


def _registry_callees(tree) -> set[str]:
    """The registries a module's decorators add to (`@_AttnBackendRegistry.register(...)` -> that dotted name)."""
    import ast

    from auditor.static.astutil import ast_dotted

    out = set()
    for node in module_nodes(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            for deco in node.decorator_list:
                name = ast_dotted(deco.func if isinstance(deco, ast.Call) else deco) or ""
                if "." in name and "register" in name.rsplit(".", 1)[-1].lower():
                    out.add(name)
    return out


def registered_npu_member(path: Path, rel: str, members: ModuleMembers | None = None) -> str | None:
    """The NPU module of the registry the module `path` registers into (cache-dit's `attention/backends/sage3.py`
    and `npu.py` both decorate their attention functions with `@_AttnBackendRegistry.register(...)`): the module is
    then one member of a per-backend set whose Ascend member the project already has, and its CUDA-only library
    (SageAttention-3, flash-attn) is skipped on Ascend (issue 11, pd31). `members`: the run's module facts (none:
    the modules are read). None otherwise."""

    name = rel.rsplit("/", 1)[-1]
    if not name.endswith(".py") or _name_backends(name) & {"npu"}:
        return None
    folder = str(path.parent)
    npu = [o for o in _entries(folder) if o.endswith(".py") and _name_backends(o) == {"npu"}]
    if not npu:
        return None
    members = members or ModuleMembers()
    mine = set(members.module(os.path.join(folder, name)).get("registry") or ())
    if not mine:
        return None
    registries = {m: set(members.module(os.path.join(folder, m)).get("registry") or ()) for m in npu}
    member = next((m for m in npu if registries[m] & mine), None)
    return None if member is None else "/".join(rel.split("/")[:-1] + [member])


def _engine_folder(name: str) -> bool:
    """A folder named for an NVIDIA-only inference engine: `tensorrt_llm/`, `trt/` (D-FINE's `cppExample/trt/` beside
    `onnx/` and `openvino/`), `triton_trtllm/` (Triton serving a TensorRT-LLM engine)."""
    return name.lower() in _NVIDIA_ENGINES or bool({w.lower() for w in _WORD.findall(name)} & _ENGINE_WORDS)


def _runtime_set(parent: Path, other: str) -> bool:
    """`other` is another runtime of a folder of runtimes (`runtime/python/` beside `runtime/triton_trtllm/`): a
    folder named for a portable runtime or server, not for CUDA or an NVIDIA engine, in a parent named for runtimes."""
    return parent.name.lower() in _RUNTIME_SET_PARENTS and not _engine_folder(other) \
        and "cuda" not in _name_backends(other) and bool({w.lower() for w in _WORD.findall(other)} & _SERVING_WORDS)


def per_backend_sibling(path: Path, rel: str, members: ModuleMembers | None = None) -> str | None:
    """The sibling that makes the file `path` (`rel` in the report) the CUDA member of a per-backend set, or None.
    `members`: the run's module facts (none: the modules are read)."""
    parts = rel.split("/")
    folder = path.parent
    name = parts[-1]
    engine = engine_module_sibling(path, rel)
    if engine is not None:
        return engine
    twin = _hip_twin(folder, name, members.project if members is not None else None)
    if twin is not None:                        # `src/ops/topk.cu` beside `src/ops/topk.cpp` on HIP
        return "/".join(parts[:-1] + [twin])
    if _name_backends(name) == {"cuda"}:
        for other in _entries(str(folder)):
            names = _name_backends(other)
            if other == name or _kind(other) != _kind(name) or "cuda" in names:
                continue
            if names and _tokens(other) <= _tokens(name):      # `Dockerfile.metax` for `Dockerfile.cuda`
                return "/".join(parts[:-1] + [other])
            if names == {"npu"} and _toolkit_tagged_pair(name, other) and (folder / other).is_file():
                return "/".join(parts[:-1] + [other])   # `910b_cann8.0.RC2_aarch64.yaml` for `a800_cu118.yaml`
            if not names and _cpu_swap(name, other) and (folder / other).is_file() \
                    and not _imports_module(folder / other, name):   # `requirements-cpu.txt` for `requirements-gpu.txt`
                return "/".join(parts[:-1] + [other])                  # (t11v)
            if _member_swap(name, other) and (folder / other).is_file():
                return "/".join(parts[:-1] + [other])   # `build-windows-cpu.yml` for `build-windows-cuda-12.6.yml`
            if not names and (_kind(name) == "requirements" or _compose_file(name)) and _cuda_dropped(name, other) \
                    and (folder / other).is_file():   # `requirements.dev.txt` for `requirements.dev_gpu.txt` (tq37);
                return "/".join(parts[:-1] + [other])  # `docker-compose.yaml` for `docker-compose-gpu.yaml` (lead 39)
        if _lead_backends(name) == {"cuda"}:
            for other in _entries(str(folder)):   # `cuda_pytorch_bert.py` among `cpu_ipex_bert.yaml`, `mps_*.yaml`
                theirs, mine = _tokens(other) - {"cpu"}, _tokens(name)
                if other != name and _lead_backends(other) - {"cuda"} and (theirs & mine or not theirs | mine) \
                        and (folder / other).is_file():
                    return "/".join(parts[:-1] + [other])
    for i in range(len(parts) - 2, -1, -1):       # a folder named for CUDA: `.../cuda/load.py`
        if parts[i] in ("", ".", "..") or len(parts) - 1 - i >= len(path.parents):
            break     # `rel` climbs out of the current folder (`../x/cuda/f.py`) or is longer than the path itself
        engine_dir = _engine_folder(parts[i])
        if _name_backends(parts[i]) != {"cuda"} and not engine_dir:
            twin = _backend_twin_folder(str(path.parents[len(parts) - 1 - i]), parts[i])
            if twin is not None:                  # `lightx2v_kernel/` (CUDA sources) beside `lightx2v_kernel_xpu/`
                return "/".join(parts[:i] + [twin]) + "/"
            fallback = _cuda_gated_member(str(path.parents[len(parts) - 1 - i]), parts[i], members or ModuleMembers())
            if fallback is not None:              # `kernels/cutedsl/` beside `kernels/triton/`, picked on CUDA only
                return "/".join(parts[:i] + [fallback]) + "/"
            fallback = _torch_twin(path.parents[len(parts) - 1 - i], parts[i]) if i else None
            if fallback is not None:              # `quantize/triton/` beside `quantize/pytorch/`
                return "/".join(parts[:i] + [fallback]) + "/"
            continue
        parent = path.parents[len(parts) - 1 - i]
        for other in _entries(str(parent)):
            if i == len(parts) - 2 and other.lower() == "cpu" and not _cpu_counterpart(parent / other, name):
                continue
            if other != parts[i] and (parent / other).is_dir() and (
                    other.lower() in _FALLBACK_FOLDERS or _name_backends(other) & (OTHER_BACKENDS | {"npu"})
                    or _fallback_twin(parts[i], other)
                    and not _other_programs(parent, parts[i], other, "/".join(parts[:i]), members)
                    or engine_dir and (other.lower() in _DEPLOY_RUNTIME_FOLDERS or _runtime_set(parent, other))):
                return "/".join(parts[:i] + [other]) + "/"
        mapped = _dispatched_npu_member(str(parent), parts[i])
        if mapped is not None:                    # `kernels/cuda/` beside `kernels/dlinfer/`, `'ascend': 'dlinfer'`
            return "/".join(parts[:i] + [mapped]) + "/"
    return None


# the HIP (ROCm) runtime's own header (`#include <hip/hip_runtime.h>`, hipcc's entry header: the HIP programming
# guide, https://rocm.docs.amd.com/projects/HIP/en/latest/how-to/hip_porting_guide.html)
_HIP_INCLUDE_RE = re.compile(rb'^[ \t]*#[ \t]*include[ \t]*[<"]hip/hip_runtime(?:_api)?\.h[>"]', re.M)
_HIP_TWIN_SUFFIXES = (".hip", ".hip.cpp", ".cpp", ".cc", ".cxx")


def _hip_twin(folder: Path, name: str, project=None) -> str | None:
    """The HIP source beside a CUDA source of the same stem (tq54b, heldout70: FlexFlow's `src/ops/arg_topk.cu`
    beside `arg_topk.cpp`, which includes `<hip/hip_runtime.h>` and holds the same kernels for ROCm, each built by
    its own arm of the build): the CUDA member of a per-backend set of kernel files. A plain C++ file of the same
    stem (the op's common code, `arg_topk.cc`) is no twin. The first 16 KiB of a candidate are read (its includes)."""
    if not name.endswith(".cu"):
        return None
    stem = name[:-3]
    entries = set(_entries(str(folder)))
    for suffix in _HIP_TWIN_SUFFIXES:
        other = stem + suffix
        if other not in entries:
            continue
        try:
            head = read_counted(project, folder / other, 16_384, prefix=True)
        except (OSError, SourceError):
            continue
        if _HIP_INCLUDE_RE.search(head):
            return other
    return None


def _cpu_counterpart(cpu: Path, name: str) -> bool:
    """Whether a `cpu/` folder holds the CPU member of the CUDA source `name` in the `cuda/` folder beside it
    (maskrcnn-benchmark's `csrc/cpu/ROIAlign_cpu.cpp` for `csrc/cuda/ROIAlign_cuda.cu`, `nms_cpu.cpp` for `nms.cu`): a
    file whose words other than the backend's are all in the source's name. A kernel with none there
    (`deform_conv_kernel_cuda.cu`, whose header answers "Not implemented on the CPU") is no member of a per-backend
    set (tq57a). Files other than CUDA sources are not asked."""
    if not name.endswith(".cu"):
        return True
    mine = _unprefixed(name)
    return any((theirs := _unprefixed(other)) and theirs <= mine for other in _entries(str(cpu)))


def _unprefixed(name: str) -> set[str]:
    """A file name's words without the device words, also where a word joins one (`cudadevice` -> device)."""
    words = set()
    for word in _tokens(name):
        word = _DEVICE_AFFIX.sub("", word)
        if word:
            words.add(word)
    return words


_DEVICE_AFFIX = re.compile(r"^(?:cuda|gpu|cpu)|(?:cuda|gpu|cpu)$")


# the folders of a per-backend set that hold its plain-torch member
_TORCH_MEMBERS = frozenset({"torch", "pytorch", "reference", "naive", "fallback"})


def _torch_twin(parent: Path, folder: str) -> str | None:
    """A `triton/` folder beside a plain-torch one (`fouroversix/quantize/triton/` beside `quantize/pytorch/` and
    `quantize/cuda/`, one backend of a quantizer picked by what the device supports; tq46b): the Triton member of a
    per-backend set whose torch member runs on any device (policy (k)); the torch folder's name, or None."""
    if folder.lower() != "triton":
        return None
    return next((other for other in _entries(str(parent)) if other.lower() in _TORCH_MEMBERS
                 and (parent / other).is_dir()), None)


def ascend_target_sibling(path: Path, rel: str) -> str | None:
    """A folder named for Ascend beside the file's folder or in it (rllte's `deployment/python/infer.py`, a TensorRT
    demo, beside `deployment/ascend/`, an AscendCL app built from the same ONNX model): the project's own Ascend
    target of a per-target deployment set; its path, or None."""
    parts = rel.split("/")
    for up in (1, 2):
        if len(parts) <= up or len(path.parents) < up:
            break
        folder = path.parents[up - 1]
        for other in _entries(str(folder)):
            if (up == 1 or other != parts[-2]) and _name_backends(other) == {"npu"} and (folder / other).is_dir():
                return "/".join(parts[:len(parts) - up] + [other]) + "/"
    return None


def _lead_backends(name: str) -> set[str]:
    """The backends the first word of a file name names, `cpu` included: a folder of files prefixed by the device
    they run on (optimum-benchmark's `examples/cuda_pytorch_bert.py` beside `cpu_ipex_bert.yaml`, `mps_*.yaml`;
    `tests/configs/_cuda_.yaml` beside `_cpu_.yaml`) is a per-backend family (t11v, tuned on heldout14)."""
    words = _WORD.findall(name)
    if len(words) < 2:
        return set()
    first = words[0].lower()
    return {"cpu"} if first == "cpu" else _name_backends(first)


def _imports_module(path: Path, name: str) -> bool:
    """Whether the Python file `path` imports the module file `name` of its folder (Det3D's `nms_cpu.py` runs
    `from det3d.ops.nms.nms_gpu import rotate_iou_gpu`): a file that loads the CUDA one is no alternative to it, the
    CUDA module loads wherever it does (tq48a)."""
    if not name.endswith(".py") or path.suffix != ".py":
        return False
    stem = re.escape(name[:-3])
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False
    return re.search(rf"(?m)^\s*(?:from\s+[\w.]*\b{stem}\s+import\b|import\s+[\w.]*\b{stem}\b|"
                     rf"from\s+[\w.]+\s+import\s+(?:\(\s*)?(?:\w+\s*,\s*)*{stem}\b)", text) is not None


def _cpu_swap(cuda_name: str, cpu_name: str) -> bool:
    """`cpu_name` is `cuda_name` with its CUDA word(s) in the same places spelled `cpu` (`requirements-gpu.txt` /
    `requirements-cpu.txt`, `requirements_cuda12_arm.txt` / `requirements_cpu_arm.txt`); `test_shared_cpu_weights.py`
    is no CPU twin of `test_shared_weights_gpu.py` (the word names a feature there, in another place)."""
    mine = [w.lower() for w in _WORD.findall(cuda_name)]
    theirs = [w.lower() for w in _WORD.findall(cpu_name)]
    if len(mine) != len(theirs):
        return False
    swapped = 0
    for a, b in zip(mine, theirs):
        if a == b:
            continue
        if b != "cpu" or _name_backends(a) != {"cuda"}:
            return False
        swapped += 1
    return swapped > 0


def _member_swap(cuda_name: str, other: str) -> bool:
    """`other` is `cuda_name` with its CUDA word, and the version numbers beside it, spelled as another member of a
    per-backend set (`member_backend`: cpu, directml, rocm, ...): an application's release workflows
    `build-windows-cuda-12.6.yml`, `build-windows-cuda-11.8.yml` beside `build-windows-cpu.yml` and
    `build-windows-directml.yml` (video-subtitle-remover; tq46b) each build one flavour of the same package."""
    mine = [w for w in _words(cuda_name) if not w.isdigit()]
    theirs = [w for w in _words(other) if not w.isdigit()]
    if len(mine) != len(theirs):
        return False
    swapped = [(a, b) for a, b in zip(mine, theirs) if a != b]
    return bool(swapped) and all(member_backend(a) == "cuda" and member_backend(b) not in (None, "cuda")
                                 for a, b in swapped)


def _cuda_dropped(cuda_name: str, plain_name: str) -> bool:
    """`plain_name` is `cuda_name` without its CUDA word(s) (`requirements.dev.txt` for `requirements.dev_gpu.txt`,
    ChatTTS-Forge's pip freeze of its GPU development environment beside the plain one; tq37, tuned on heldout40):
    the plain file is the install of hosts without CUDA, the named one the CUDA member of the pair."""
    mine, kept = _words_without_cuda(cuda_name)
    return len(kept) < len(mine) and kept == _words(plain_name)


def _words(name: str) -> list[str]:
    """The name's words, YAML's `yml` spelled `yaml` (`docker-compose.cuda.yaml` beside `docker-compose.yml`)."""
    return ["yaml" if w.lower() == "yml" else w.lower() for w in _WORD.findall(name)]


def _words_without_cuda(name: str) -> tuple[list[str], list[str]]:
    """The name's words, and those of them that do not name CUDA."""
    mine = _words(name)
    return mine, [w for w in mine if _name_backends(w) != {"cuda"}]


def _fallback_twin(cuda_folder: str, other: str) -> bool:
    """`other` is the folder `cuda_folder` (named for CUDA) with the CUDA word swapped for a portable
    implementation's (`alias_free_torch/` beside `alias_free_cuda/`: BigVGAN's anti-aliased activation as a CUDA
    extension and in plain torch; tq37, tuned on heldout40) or dropped (`alias_free/`)."""
    if _name_backends(other):
        return False
    mine, kept = _words_without_cuda(cuda_folder)
    if not kept or len(kept) == len(mine):
        return False
    theirs = _words(other)
    if kept == theirs:
        return True
    return len(theirs) == len(mine) and all(
        a == b or (_name_backends(a) == {"cuda"} and b in _FALLBACK_FOLDERS) for a, b in zip(mine, theirs)) and \
        any(a != b for a, b in zip(mine, theirs))


def _other_programs(parent: Path, cuda_folder: str, other: str, rel_parent: str,
                    members: ModuleMembers | None) -> bool:
    """Two word-swapped folders of programs that share no module: DataFlow-MM's `gpu_pipelines/` (ASR, VAD,
    captioning pipelines, each run as `__main__`) beside `cpu_pipelines/` (aesthetic, diversity, math pipelines)
    sort programs by the hardware they need; neither holds a form of the other's, so a CUDA program there is no
    member of a per-backend set (tq55d, tuned on heldout73). A folder the project imports (BigVGAN's
    `alias_free_cuda/`, a module with no `__main__`) or one with a compiled source stays a member; without the
    run's summaries (no project) nothing changes."""
    project = members.project if members is not None else None
    if project is None:
        return False
    mine, theirs = _entries(str(parent / cuda_folder)), _entries(str(parent / other))
    modules = [{n for n in names if n.endswith(".py") and n != "__init__.py"} for names in (mine, theirs)]
    if not modules[0] or not modules[1] or modules[0] & modules[1] or not all(
            n.endswith(_PYTHON + _TEXT_SUFFIXES) or n == "__pycache__" for n in mine + theirs):
        return False
    prefix = f"{rel_parent}/" if rel_parent else ""
    return all((project.facts(f"{prefix}{cuda_folder}/{n}") or {}).get("main") for n in modules[0])


def cpu_member_sibling(path: Path, rel: str) -> str | None:
    """A requirements file named for the CPU (`requirements-cpu.txt`) beside the same file named for CUDA or another
    backend (`requirements-gpu.txt`): the CPU member of a per-backend set of installs, which the project's own
    Dockerfile picks for CPU hosts (GenAIComps' `ARG ARCH="cpu"`). An NVIDIA wheel left in it is the residue of
    torch's x86-64 CUDA build in a lock (`nvidia-nccl-cu12 ; platform_machine == 'x86_64'  # via torch`), not a
    choice an Ascend port changes (t11v, tuned on heldout14). The sibling's name, or None."""
    name = rel.rsplit("/", 1)[-1]
    if _kind(name) != "requirements" or _name_backends(name) or "cpu" not in _tokens(name):
        return None
    for other in _entries(str(path.parent)):
        if other != name and _kind(other) == "requirements" and _name_backends(other) and \
                _cpu_swap(other, name) and (path.parent / other).is_file():
            return "/".join(rel.split("/")[:-1] + [other])
    return None


# the NVIDIA engine's own distributions (`tensorrt`, `tensorrt-cu12`, `tensorrt_llm`, `pycuda`) and the portable
# runtimes' (`onnxruntime`, `onnxruntime-gpu`, `openvino`) as a requirements file names them
_ENGINE_DISTRIBUTIONS = re.compile(r"^(?:tensorrt|trtllm|pycuda)", re.I)
_PORTABLE_DISTRIBUTIONS = re.compile(r"^(?:onnxruntime|openvino|onnx$|ncnn|mnn$|tflite)", re.I)
_ENGINE_DEP_NOTE = "the NVIDIA engine's dependency in the requirements of a per-backend set of programs ({member} " \
                   "beside its portable members): the TensorRT member's install, which an Ascend deployment does " \
                   "not run; left as is"


def engine_requirements_member(path: Path, rel: str, project=None) -> str | None:
    """A requirements file that installs one runtime per member of the per-backend set of programs beside it: D-FINE's
    `tools/inference/requirements.txt` (`onnxruntime`, `tensorrt`, `openvino`) beside `trt_inf.py`, `onnx_inf.py`,
    `openvino_inf.py`, `torch_inf.py`. The engine's packages there are the TensorRT member's install (policy (k);
    tq56a). The engine module's path, or None."""
    name = rel.rsplit("/", 1)[-1]
    if _kind(name) != "requirements" or _name_backends(name):
        return None
    folder = path.parent
    member = next((m for m in _entries(str(folder)) if m.endswith(_PYTHON) and _module_words(m) & _ENGINE_WORDS
                   and engine_module_sibling(folder / m, m) is not None), None)
    if member is None:
        return None
    try:
        text = read_counted(project, path, 200_000, prefix=True).decode("utf-8", "replace")
    except (OSError, SourceError):
        return None
    names = [re.split(r"[\s<>=!~;\[@]", line.strip(), maxsplit=1)[0] for line in text.splitlines()]
    if not any(_PORTABLE_DISTRIBUTIONS.match(n) for n in names if n):
        return None
    return "/".join(rel.split("/")[:-1] + [member])


# folders of CI set-up: a Dockerfile there is the image of a CI pipeline
_CI_FOLDERS = frozenset({".azure_pipelines", ".azure-pipelines", ".github", ".gitlab", ".circleci", ".buildkite",
                         ".jenkins", "jenkins", "ci", ".ci"})


def ci_cuda_image(rel: str) -> bool:
    """A Dockerfile named for CUDA only (`_cuda_named_dockerfile`) inside a CI folder (Olive's
    `.azure_pipelines/dockerfiles/linux-gpu.dockerfile`, built by its NVIDIA GPU test job): the image of a CUDA CI
    job, which tests the CUDA build on purpose and never runs on an Ascend host, as a GitHub job on NVIDIA runners
    (policy (c), extended to CI images by t11v, tuned on heldout14)."""
    return _cuda_named_dockerfile(rel) and any(p.lower() in _CI_FOLDERS for p in rel.split("/")[:-1])


# a device-to-package table in a dispatcher: `{'cuda': 'cuda', 'ascend': 'dlinfer', 'npu': 'dlinfer'}`
_DEVICE_MAP_ENTRY = re.compile(r"""['"](?:ascend|npu)['"]\s*:\s*['"]([A-Za-z_][A-Za-z0-9_]*)['"]""")


@lru_cache(maxsize=4096)
def _dispatched_npu_member(parent: str, folder: str) -> str | None:
    """A sibling package of the CUDA-named folder `folder` that a Python module of `parent` maps the Ascend device to
    (lmdeploy's `kernels/dispatcher.py`: `device_map = {'cuda': 'cuda', 'ascend': 'dlinfer', 'npu': 'dlinfer'}`
    beside `kernels/cuda/` and `kernels/dlinfer/`): the folder is then the CUDA member of a per-backend set whose
    Ascend member exists, by the project's own dispatch, whatever the member is called. The table must also map a
    device to `folder` itself (`'cuda': 'cuda'`), so an unrelated dict does not count. None otherwise."""
    siblings = {o for o in _entries(parent) if o != folder and os.path.isdir(os.path.join(parent, o))}
    if not siblings:
        return None
    from auditor.discover import MAX_FILE_BYTES, SourceError, read_source

    mine = re.compile(r"""['"]\w+['"]\s*:\s*['"]%s['"]""" % re.escape(folder))
    for name in _entries(parent):
        if not name.endswith(".py"):
            continue
        try:     # the discovery's reader: a FIFO named `x.py` is refused, never opened blocking
            text = read_source(Path(parent, name), MAX_FILE_BYTES)[0].decode("utf-8", errors="replace")[:200_000]
        except (OSError, SourceError):
            continue
        if not mine.search(text):
            continue
        for match in _DEVICE_MAP_ENTRY.finditer(text):
            if match.group(1) in siblings:
                return match.group(1)
    return None


_CUDA_SOURCES = (".cu", ".cuh")
_PARENT_READ = 200_000      # how much of a package module the member reading parses
_PARENT_MODULES = 40        # a folder with more modules than this is no small dispatch package
# a test of the CUDA runtime that gates a member: `torch.cuda.is_available()`, `get_device_capability()`
_CUDA_CAPABILITY = re.compile(r"(?:^|\.)cuda\.(?:is_available|get_device_capability|device_count)$")


def member_facts(tree) -> dict:
    """A Python module's facts for the per-backend member readings below (pd31), kept in its summary (`tree` facts,
    `members`) so that a warm run reads no file for them: `relative`, the names it imports from each sibling package
    (`from .cutedsl import f` -> {"cutedsl": ["f"]}); `gates`, the words of each `if` test whose body tests the CUDA
    runtime (`if backend == KernelBackend.CUTEDSL: ... torch.cuda.is_available()`); `registry`, the registries its
    decorators add to. Empty when it has none."""
    import ast

    from auditor.static.astutil import ast_dotted

    relative: dict[str, set[str]] = {}
    gates = []
    for node in module_nodes(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 1 and node.module:
            relative.setdefault(node.module.split(".")[0], set()).update(a.name for a in node.names)
        elif isinstance(node, ast.If) and any(
                isinstance(c, ast.Call) and _CUDA_CAPABILITY.search(ast_dotted(c.func) or "")
                for stmt in node.body for c in walk_list(stmt)):
            words = {(n.attr if isinstance(n, ast.Attribute) else n.id if isinstance(n, ast.Name) else
                      n.value if isinstance(n, ast.Constant) and isinstance(n.value, str) else "").lower()
                     for n in walk_list(node.test)}
            gates.append(sorted(words - {""}))
    out: dict = {}
    if relative:
        out["relative"] = {k: sorted(v) for k, v in sorted(relative.items())}
    if gates:
        out["gates"] = gates
    registry = _registry_callees(tree)
    if registry:
        out["registry"] = sorted(registry)
    from auditor.static.chosen_members import chosen_builds, chosen_imports

    chosen = chosen_imports(tree)
    if chosen:
        out["chosen"] = chosen      # members imported per option value (`if sim == SimType.X: from .x import H`; tq43)
    built = chosen_builds(tree)
    if built:
        out["built"] = built        # classes built per option value (`if backend == B.EXL2: return EXL2(...)`; tq45b)
    return out


class ModuleMembers:
    """`member_facts` of one run's Python modules, for the per-backend member readings: from a module's summary when
    the run holds it, else read and parsed (counted in `project.reads`); the packages' readings are kept for the run.
    One per run, passed in (apply_backend_files, crossfile): nothing of a run outlives it."""

    def __init__(self, project=None, files: Sequence[tuple[Path, str]] = ()) -> None:
        self.project = project
        self.rels = {str(path): rel for path, rel in files}
        self.packages: dict[str, list[dict]] = {}
        self.gated: dict[tuple[str, str], str | None] = {}     # _cuda_gated_member's answers

    def module(self, path: str) -> dict:
        """`member_facts` of the module at `path`."""
        import ast

        from auditor.discover import MAX_FILE_BYTES

        rel = self.rels.get(path)
        held = held_tree(self.project, rel) if rel is not None else None
        if held is not None:
            return held.get("members") or {}
        try:
            text = read_counted(self.project, path, MAX_FILE_BYTES).decode("utf-8", errors="replace")
            return member_facts(ast.parse(text[:_PARENT_READ]))
        except (OSError, SourceError, SyntaxError, ValueError):
            return {}

    def package(self, parent: str) -> list[dict]:
        """`member_facts` of the Python modules of the folder `parent`, or [] when the folder holds more modules than
        a dispatch package does."""
        if parent not in self.packages:
            names = [n for n in _entries(parent) if n.endswith(".py")]
            self.packages[parent] = [] if len(names) > _PARENT_MODULES else \
                [self.module(os.path.join(parent, name)) for name in names]
        return self.packages[parent]


def _cuda_gated_member(parent: str, folder: str, members: ModuleMembers) -> str | None:
    """The sibling package that stands in for `folder` when the package's own selection skips it off CUDA (cache-dit's
    `kernels/ops.py` imports `fused_merge_attn_states` from `.cutedsl` and from `.triton`, and `kernels/backend.py`
    supports CUTEDSL only `if torch.cuda.is_available()`): `folder` is then the CUDA member of a per-backend set whose
    other member runs on Ascend (issue 11, pd31). Read from the code, never from the names: a module of `parent`
    imports one name from both packages, and a test of the CUDA runtime sits under a branch that names `folder` (its
    key, `KernelBackend.CUTEDSL` / `"cutedsl"`). The sibling must not itself be CUDA's (named for it, or `.cu`
    sources). None otherwise; answered once per run (`members.gated`)."""
    if (parent, folder) not in members.gated:
        members.gated[parent, folder] = _gated_member(parent, folder, members)
    return members.gated[parent, folder]


def _gated_member(parent: str, folder: str, members: ModuleMembers) -> str | None:
    if _name_backends(folder) or not os.path.isdir(os.path.join(parent, folder)):
        return None
    package = members.package(parent)
    imported: dict[str, set[str]] = {}
    for facts in package:
        for module, names in (facts.get("relative") or {}).items():
            imported.setdefault(module, set()).update(names)
    mine = imported.get(folder, set())
    siblings = [other for other, names in sorted(imported.items()) if other != folder and names & mine
                and not _name_backends(other) & {"cuda"} and os.path.isdir(os.path.join(parent, other))
                and not _holds_cuda_sources(os.path.join(parent, other))]
    if not siblings:
        return None
    key = folder.lower()
    if any(key in words for facts in package for words in facts.get("gates") or ()):
        return siblings[0]
    return None


@lru_cache(maxsize=4096)
def _backend_twin_folder(parent: str, folder: str) -> str | None:
    """A sibling of the folder `folder` (named for no backend) that is the same package for another backend
    (`lightx2v_kernel_xpu/` for `lightx2v_kernel/`: the same words plus a backend's), when `folder` holds CUDA sources
    (`.cu` / `.cuh`): then `folder` is the CUDA member of the pair. None otherwise."""
    if _name_backends(folder) or not _tokens(folder):
        return None
    mine = _tokens(folder)
    twins = [o for o in _entries(parent) if o != folder and _tokens(o) == mine
             and _name_backends(o) and not _name_backends(o) & {"cuda"} and os.path.isdir(os.path.join(parent, o))]
    if not twins or not _holds_cuda_sources(os.path.join(parent, folder)):
        return None
    return twins[0]


def _holds_cuda_sources(folder: str, limit: int = 5000) -> bool:
    seen = 0
    for _, dirs, files in os.walk(folder):
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        if any(f.endswith(_CUDA_SOURCES) for f in files):
            return True
        seen += len(files)
        if seen > limit:
            return False
    return False


def npu_twin(path: Path, rel: str) -> str | None:
    """An NPU variant of the project file `rel` in its folder (a file of the same kind, or an `npu/` folder),
    that does not build on `rel` itself; or None."""
    parts = rel.split("/")
    name = parts[-1]
    if name.endswith(_PYTHON) or _name_backends(name) & {"npu"}:
        return None
    folder = path.parent
    mine = _tokens(name)
    for other in _entries(str(folder)):
        if other == name or _name_backends(other) != {"npu"}:
            continue
        candidates = [folder / other / inner for inner in _entries(str(folder / other))] \
            if (folder / other).is_dir() else [folder / other]
        for twin in candidates:
            theirs = _tokens(twin.name)
            # `DeepSeek-V3-Chat-npu.yaml` is the twin of `DeepSeek-V3-Chat-multi-gpu-4.yaml`, not of
            # `DeepSeek-V2-Chat.yaml`: its words other than the backend's are all in this file's name
            if not twin.is_file() or _kind(twin.name) != _kind(name) or not theirs or not theirs <= mine:
                continue
            try:
                text = twin.read_text(errors="replace")[:200_000]
            except OSError:
                continue
            if name in text:       # `-r requirements.txt`, `FROM` or include of this file: it builds on it
                continue
            return "/".join(parts[:-1] + [twin.relative_to(folder).as_posix()])
    return None


# an image built for Ascend: FROM a CANN / Ascend base image, or CANN's toolkit or torch_npu installed in it
_ASCEND_IMAGE = re.compile(r"(?im)^[ \t]*FROM[ \t]+(?:--\S+[ \t]+)*\S*(?:ascend|cann)\S*"
                           r"|^[ \t]*(?:RUN|ENV)\b.*(?:\btorch[_-]npu\b|Ascend-cann-toolkit|ascend-toolkit/set_env\.sh)")
_CUDA_IMAGE = re.compile(r"(?im)^[ \t]*FROM[ \t]+(?:--\S+[ \t]+)*\S*(?:nvidia|cuda)\S*")


def ascend_image_fact(data: bytes, rel: str) -> bool | None:
    """For a Dockerfile (`_kind`), its per-file fact `ascend_image` (project_imports.TREE, cache FORMAT 13), once per
    file in the worker: whether its first 200 kB say it is built for Ascend and not from an NVIDIA / CUDA image, as
    `_ascend_image` reads the file (read by ascend_dockerfile_sibling). None for other files."""
    if _kind(rel.rsplit("/", 1)[-1]) != "dockerfile":
        return None
    return _ascend_image_text(data[:200_000].decode("utf-8", errors="replace"))


def _ascend_image_text(text: str) -> bool:
    return _ASCEND_IMAGE.search(text) is not None and _CUDA_IMAGE.search(text) is None


def _ascend_image(path: Path, project=None) -> bool:
    try:    # at most the first 200 kB, counted in `project.reads`
        text = read_counted(project, path, 200_000, prefix=True).decode("utf-8", errors="replace")
    except (OSError, SourceError):
        return False
    return _ascend_image_text(text)


def ascend_dockerfile_sibling(path: Path, rel: str, project=None) -> str | None:
    """A Dockerfile named for no backend in a folder that holds a Dockerfile built for Ascend (ROLL's `docker/`:
    `Dockerfile.A2` / `Dockerfile.A3` FROM a CANN image with torch_npu, beside `Dockerfile.torch251.vllm` FROM
    nvcr.io/nvidia/pytorch): the folder is a per-backend set of images, this one is its CUDA member (issue 11, t11f,
    tuned on heldout5's ROLL row). Only Dockerfiles, and only a sibling whose own text says Ascend (a base image
    named for Ascend / CANN, CANN's toolkit or torch_npu installed) and no NVIDIA / CUDA base image. A sibling's reading
    comes from its per-file fact (`ascend_image`, ProjectImports.tree); one without it is read now, counted in
    `project.reads`."""
    parts = rel.split("/")
    name = parts[-1]
    if _kind(name) != "dockerfile" or _name_backends(name):
        return None
    for other in _entries(str(path.parent)):
        if other == name or _kind(other) != "dockerfile" or not (path.parent / other).is_file():
            continue
        if _name_backends(other) - {"npu"}:       # named for another backend (`Dockerfile.rocm`): not Ascend's
            continue
        sibling = "/".join(parts[:-1] + [other])
        facts = held_tree(project, sibling)
        if facts is not None and "ascend_image" in facts:      # the worker's reading (ascend_image_fact)
            if facts["ascend_image"]:
                return sibling
            continue
        if _ascend_image(path.parent / other, project):
            return sibling
    return None


_WORD = re.compile(r"[A-Za-z0-9]+")


def _tokens(name: str) -> set[str]:
    """The words of a file name other than backend names and its extension (`DeepSeek-V3-Chat-npu.yaml` ->
    {deepseek, v3, chat})."""
    stem = name.rsplit(".", 1)[0] if _kind(name).startswith(".") else name
    return {w for w in (t.lower() for t in _WORD.findall(stem)) if not name_word_backends(w)}


def _cuda_named_dockerfile(rel: str) -> bool:
    """A Dockerfile whose name or folder names CUDA and no other backend (`Dockerfile.cuda`, `docker/cuda/Dockerfile`)."""
    parts = rel.split("/")
    if _kind(parts[-1]) != "dockerfile":
        return False
    named = set().union(*(_name_backends(p) for p in parts))
    return named == {"cuda"}


def apply_backend_files(results: list, files: Sequence[tuple[Path, str]], project=None) -> int:
    """Lower the findings of per-backend CUDA files and of project files with an NPU twin to info; returns how
    many were lowered."""
    lowered = 0
    _entries.cache_clear()
    _backend_twin_folder.cache_clear()
    _dispatched_npu_member.cache_clear()
    where = {rel: path for path, rel in files}
    members = ModuleMembers(project, files)
    ascend: list[str | None] = []       # the first file that imports torch_npu, read once when a CUDA image asks
    for result in results:
        path = where.get(result.path)
        if path is None or not any(undiscounted(f) for f in result.findings):
            continue
        name = result.path.rsplit("/", 1)[-1]
        if _kind(name) in _CONFIG_KINDS and _name_backends(name) == {"npu"}:
            # `llama3_lora_sft_bnb_npu.yaml` (LLaMA-Factory's QLoRA example for Ascend, bitsandbytes' NPU backend):
            # a config written for the NPU; what it sets is the Ascend recipe's choice (tq45b)
            lowered += discount_findings(result, "npu-path", _NPU_CONFIG_NOTE, lower=undiscounted)
            continue
        sibling = per_backend_sibling(path, result.path, members)
        image = None if sibling is not None else ascend_dockerfile_sibling(path, result.path, project)
        twin = None if sibling is not None or image is not None else npu_twin(path, result.path)
        own = None
        cpu = ci = None
        if sibling is None and twin is None and image is None:
            cpu = cpu_member_sibling(path, result.path)
            ci = "yes" if cpu is None and ci_cuda_image(result.path) else None
        if cpu is not None or ci is not None:
            note = _CPU_NOTE.format(sibling=cpu) if cpu is not None else _CI_IMAGE_NOTE
            kind = "platform-class" if cpu is not None else "npu-path"
            lowered += discount_findings(result, kind, note, lower=undiscounted)
            continue
        if sibling is None and twin is None and image is None and _cuda_named_dockerfile(result.path):
            if not ascend:
                ascend.append(next((r.path for r in results if imports_ascend(getattr(r, "summary", None))), None))
            own = ascend[0]
        if sibling is None and twin is None and image is None and own is None:
            engine = engine_requirements_member(path, result.path, project)
            if engine is not None:    # only the engine's packages: the portable members' pins keep their reading
                lowered += discount_findings(result, "platform-class", _ENGINE_DEP_NOTE.format(member=engine),
                                             lower=lambda f: undiscounted(f) and bool(
                                                 _ENGINE_DISTRIBUTIONS.match(f.symbol or "")))
                continue
            member = registered_npu_member(path, result.path, members) if result.path.endswith(".py") else None
            if member is not None:    # only the CUDA library the member wraps: its device lines keep their reading
                lowered += discount_findings(result, "npu-path", _REGISTRY_NOTE.format(member=member),
                                             lower=lambda f: undiscounted(f) and f.category in _LIBRARY_CATEGORIES)
            target = ascend_target_sibling(path, result.path) if member is None and \
                any(f.code in _NVIDIA_RUNTIME_CODES for f in result.findings) else None
            if target is not None:    # only the TensorRT / PyCUDA lines: the file's torch code keeps its reading
                lowered += discount_findings(result, "npu-path", _TARGET_NOTE.format(target=target),
                                             lower=lambda f: undiscounted(f) and f.code in _NVIDIA_RUNTIME_CODES)
            continue
        kind, note = ("platform-class", _SET_NOTE.format(sibling=sibling)) if sibling is not None else \
            ("npu-path", _IMAGE_NOTE.format(image=image)) if image is not None else \
            ("npu-path", _CUDA_IMAGE_NOTE.format(ascend=own)) if own is not None else \
            ("npu-path", _TWIN_NOTE.format(twin=twin))
        if sibling is not None:
            lowered += _lower_member(result, sibling, note)
            continue
        lowered += discount_findings(result, kind, note, lower=undiscounted)
    return lowered + _lower_torch_cuda_wheels(results, files)


# data key of a finding lowered as a set member's: the member's folder, inside which the line stays CUDA-specific
SET_MEMBER = "set_member"


def _lower_member(result, sibling: str, note: str) -> int:
    """Every error and warning of a set member to info, its gated lines too (`torch.cuda.synchronize()` behind its
    availability test): the whole member is what an Ascend deployment does not run (policy (k); tq56a). A line no
    context had discounted keeps, in `SET_MEMBER`, the member's folder: for the member's own files it is still CUDA
    code (crossfile's `uses X, which holds tensorrt ...; port them together` inside `runtime/triton_trtllm/`)."""
    parent = sibling.rstrip("/").rsplit("/", 1)[0] + "/" if "/" in sibling.rstrip("/") else ""
    root = parent + result.path[len(parent):].split("/", 1)[0] + "/" \
        if sibling.endswith("/") and result.path.startswith(parent) and "/" in result.path[len(parent):] else None
    kept = []
    for f in result.findings:
        if f.severity != "info":
            own = root is not None and not f.data.get("context")
            f = as_info(f, "platform-class", note)
            f = replace(f, data={**f.data, SET_MEMBER: root}) if own else f
        kept.append(f)
    lowered = sum(a is not b for a, b in zip(result.findings, kept))
    result.findings = kept
    return lowered


_CONFIG_KINDS = frozenset({".yaml", ".json", ".toml"})
_NPU_CONFIG_NOTE = "in a config file named for the NPU: written for Ascend; check it there, nothing to port"
_NPU_INSTALL_NOTE = "torch's CUDA runtime wheel in a requirements file of a project whose Ascend install is its own " \
                    "requirements file ({npu}, torch for the NPU with torch_npu): the Ascend hosts do not install " \
                    "this file; left as is"


def _lower_torch_cuda_wheels(results: list, files: Sequence[tuple[Path, str]]) -> int:
    """NPU440 on torch's CUDA runtime wheels (`TORCH_CUDA_WHEEL`) in a requirements file of a tree that keeps an
    NPU requirements file (`requirements_npu.txt`) in the same folder or a folder above it: the project's Ascend
    install takes that file, and this one is the environment of its CUDA hosts (Helios' `tools/requirements_raw.txt`,
    a pip freeze of the CUDA environment, under the root's `requirements_npu.txt`; tq37, tuned on heldout40). Info.
    A wheel the code needs for itself (`nvidia-nvshmem-cu12` installed in an image build, a conda environment with
    no Ascend install beside it) keeps its reading."""
    npu_files: dict[str, str] = {}
    for _path, rel in files:
        name = rel.rsplit("/", 1)[-1]
        if _kind(name) == "requirements" and _name_backends(name) == {"npu"}:
            npu_files.setdefault(rel.rsplit("/", 1)[0] if "/" in rel else "", rel)
    if not npu_files:
        return 0
    lowered = 0
    for result in results:
        name = result.path.rsplit("/", 1)[-1]
        if _kind(name) != "requirements" or _name_backends(name) & {"npu"}:
            continue
        folder = result.path.rsplit("/", 1)[0] if "/" in result.path else ""
        npu = next((npu_files[f] for f in npu_files if f == "" or folder == f or folder.startswith(f + "/")), None)
        if npu is None:
            continue
        lowered += discount_findings(result, "npu-path", _NPU_INSTALL_NOTE.format(npu=npu), lower=lambda f: (
            undiscounted(f) and f.code == "NPU440" and bool(TORCH_CUDA_WHEEL.match((f.symbol or "").lower()))))
    return lowered


def unread_cudnn_var(finding, known: frozenset[str]) -> bool:
    symbol = finding.symbol or ""
    return finding.code == "NPU004" and bool(_CUDNN_FAMILY.match(symbol)) and symbol not in known \
        and not _CUDNN_OWN.match(symbol)


def drop_unread_cudnn_vars(results: list) -> int:
    """Drop NPU004 findings on cuDNN-named variables that neither PyTorch nor cuDNN reads; returns how many."""
    from auditor.rules import load_rules

    known = frozenset(next((r.symbols for r in load_rules() if r.code == "NPU004"), {}) or ())
    dropped = 0
    for result in results:
        if not any(f.code == "NPU004" for f in result.findings):
            continue
        kept = [f for f in result.findings if not unread_cudnn_var(f, known)]
        dropped += len(result.findings) - len(kept)
        result.findings = kept
    return dropped


_TEST_FILE = re.compile(r"(?:^|/)(?:tests?|testing)/|(?:^|/)test_[^/]*$|_test\.py$|(?:^|/)conftest\.py$")


def test_file(rel: str) -> bool:
    """`tests/...`, `test_x.py`, `x_test.py`, `conftest.py`."""
    return bool(_TEST_FILE.search(rel))


def drop_test_performance_hints(results: list) -> int:
    """Performance hints (host syncs such as `.item()` in a loop, fusion opportunities) in test files: a test's
    speed is not what a port changes or checks. Returns how many were dropped."""
    dropped = 0
    for result in results:
        if not test_file(result.path):
            continue
        kept = [f for f in result.findings if not (f.severity == "info" and f.category in ("performance", "fusion"))]
        dropped += len(result.findings) - len(kept)
        result.findings = kept
    return dropped
