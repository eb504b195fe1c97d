"""A project that declares itself another accelerator's is not CUDA code (issue 11, t11w; TUNED on heldout15's
optimum-amd, intel-npu-acceleration-library and neuronx-distributed; policy (d2) in docs/precision.md).

optimum-amd is Hugging Face's toolkit for AMD Instinct GPUs: under ROCm torch's "cuda" device is HIP, so its
benchmark configs say `device: cuda` and its examples offer `"cuda:0"`; none of that runs on an NVIDIA GPU or on
Ascend. intel-npu-acceleration-library is Intel's NPU runtime (Core Ultra): its compile dtype, its `torch`
requirement and the optimizer of an example train a model compiled for that NPU, on the host. neuronx-distributed is
AWS Neuron's library: its scripts' `use_flash_attention=1` picks Neuron's NKI kernel. Each says so in its own
metadata, not in its tree's name:

- the distribution name the project declares at its root (`setup(name="optimum-amd")`, `[project] name`,
  setup.cfg's `[metadata] name`) names another backend only (backend_words: `amd`, `rocm`, `neuronx`, `habana`,
  `musa` ...; `intel_npu_acceleration_library` is another vendor's NPU runtime, OTHER_NPU_RUNTIMES), or
- its core requirements (`install_requires`, `[project] dependencies`, the root requirements.txt) name another
  accelerator's runtime (`torch-neuronx`, `intel-npu-acceleration-library`, `onnxruntime-rocm`, ...);
- it requires vLLM in its core install and registers a vLLM platform plugin (an entry point of the
  `vllm.platform_plugins` group: pyproject's
  `[project.entry-points."vllm.platform_plugins"]`, setup.py's `entry_points=`, setup.cfg's `[options.entry_points]`;
  tq59b, heldout78's vllm-spyre): vLLM's own CUDA / ROCm / CPU platforms are built in, so a plugin exists to run
  vLLM on an accelerator vLLM does not ship (Spyre, Metal, Kunlun); its examples and tests run on that one;
- unless its metadata also says CUDA or Ascend: a name that names them (`vllm-ascend`, `gpustack`), a requirement on
  torch-npu or a CUDA-only distribution (`nvidia-*`, `cupy-cuda12x`, `flash-attn`, `xformers`, ...), a
  `CUDAExtension` / `CUDA_HOME` in setup.py. A plain CUDA project declares none of this and keeps every finding.

There every error and warning no context has discounted is info (`other-backend`, never rewritten). In a project
of another vendor's NPU (a runtime whose PyTorch side holds host values, like OpenVINO's: other_npu.py) the hints
about device work (performance, precision, operator, fusion, attention) and the "torch needs torch-npu" fact are
dropped: nothing of it reaches an NPU of Ascend's. The facts are read in the worker (`declares`, in the file's
`tree` facts, for the root setup.py / pyproject.toml / setup.cfg / requirements.txt), so a warm run reads nothing.
"""
from __future__ import annotations

import ast
import configparser
import re
import tomllib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

from auditor.backend_words import HOST_RUNTIMES, OTHER_BACKENDS, OTHER_NPU_RUNTIMES, backends_in_text
from auditor.source import SourceError
from auditor.static.backends import _NOTES, discount_findings, undiscounted
from auditor.static.project_imports import held_tree, read_counted
from auditor.astnodes import walk_list

METADATA_FILES = ("setup.py", "pyproject.toml", "setup.cfg", "requirements.txt")
_MAX_BYTES = 1_000_000
# distributions of another accelerator's runtime (PEP 503 names) and the backend each is
VENDOR_DISTRIBUTIONS = {
    "torch-neuronx": "neuron", "neuronx-cc": "neuron", "neuronx-distributed": "neuron", "libneuronxla": "neuron",
    "intel-npu-acceleration-library": "other-npu",
    "onnxruntime-rocm": "rocm", "pytorch-triton-rocm": "rocm", "amdsmi": "rocm",
    "intel-extension-for-pytorch": "xpu", "oneccl-bind-pt": "xpu",
    "habana-torch-plugin": "hpu", "optimum-habana": "hpu", "torch-musa": "musa", "torch-mlu": "mlu",
    "poptorch": "ipu",
}
# distributions that say the project is (also) CUDA's or Ascend's
_CUDA_DISTRIBUTION = re.compile(r"^(torch-npu|nvidia-.*|cupy-cuda.*|pycuda|flash-attn.*|xformers|tensorrt.*|"
                                r"bitsandbytes|cuda-python|deepspeed-kernels|triton-ascend)$")
_CUDA_BUILD = re.compile(rb"\b(CUDAExtension|CUDA_HOME|nvcc)\b")
_HOST_HINTS = frozenset({"performance", "precision", "operator", "fusion", "attention"})
_TORCH_NEEDS_TORCH_NPU = "torch-pin-needs-torch-npu"
# the metadata fields in which a project says what it is for (setup() keywords, setup.cfg [metadata] keys)
_ABOUT_KEYS = ("author", "description")
# the entry-point group through which vLLM loads an out-of-tree hardware platform (vLLM's plugin system docs)
_PLATFORM_PLUGINS = "vllm.platform_plugins"
_PLUGIN_BACKEND = "vllm-platform"


def _dist(requirement: str) -> str:
    """The PEP 503 name of a requirement line (`torch-neuronx>=2.1; python_version>"3.8"`), by `packaging`; a
    line it rejects (an option, a URL, a local path) names no distribution."""
    try:
        return canonicalize_name(Requirement(requirement.split(" #", 1)[0].strip()).name)
    except InvalidRequirement:
        return ""


def _setup_py(data: bytes) -> tuple[str | None, list[str], list[str], list[str]]:
    """The name, the core requirements (`install_requires`: a literal list, or a module-level name bound to one;
    a requirements file read into it is read from that file), the self-description (`author`, `description`) and
    the entry-point groups (`entry_points={"group": [...]}`) of a setuptools script, by `ast`."""
    try:
        tree = ast.parse(data)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None, [], [], []
    bound: dict[str, ast.expr] = {}
    for stmt in tree.body:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
            bound[stmt.targets[0].id] = stmt.value
    name, core, about, groups = None, [], [], []
    for node in walk_list(tree):
        if not (isinstance(node, ast.Call) and (getattr(node.func, "id", None) == "setup"
                                                or getattr(node.func, "attr", None) == "setup")):
            continue
        for kw in node.keywords:
            value = bound.get(kw.value.id, kw.value) if isinstance(kw.value, ast.Name) else kw.value
            if kw.arg == "name" and isinstance(value, ast.Constant) and isinstance(value.value, str):
                name = value.value
            elif kw.arg == "install_requires" and isinstance(value, (ast.List, ast.Tuple)):
                core += [e.value for e in value.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
            elif kw.arg in _ABOUT_KEYS and isinstance(value, ast.Constant) and isinstance(value.value, str):
                about.append(value.value)
            elif kw.arg == "entry_points" and isinstance(value, ast.Dict):
                groups += [k.value for k in value.keys if isinstance(k, ast.Constant) and isinstance(k.value, str)]
    return name, core, about, groups


def declares_fact(data: bytes, rel: str) -> dict[str, Any] | None:
    """Per root metadata file, in the worker: {"name": the distribution name or None, "core": the core requirements'
    names, "cuda": its metadata says CUDA or Ascend}; None for any other file (or a root file over 1 MB)."""
    if rel not in METADATA_FILES or len(data) > _MAX_BYTES:
        return None
    name: str | None = None
    core: list[str] = []
    every: list[str] = []
    about: list[Any] = []      # strings where the metadata holds them
    groups: list[str] = []     # entry-point groups the project registers in
    text = data.decode("utf-8", errors="replace")
    if rel == "setup.py":
        name, core, about, groups = _setup_py(data)
        every = re.findall(r"[\"']([A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:[<>=!~;\[@ ][^\"']*)?[\"']", text)
    elif rel == "pyproject.toml":
        try:
            doc = tomllib.loads(text)
        except (tomllib.TOMLDecodeError, ValueError, RecursionError):
            return None
        table = doc.get("project")
        project: dict[str, Any] = table if isinstance(table, dict) else {}
        name = project.get("name") if isinstance(project.get("name"), str) else None
        authors = project.get("authors")
        about = [project.get("description")] + [a.get("name") for a in (authors if isinstance(authors, list) else [])
                                                if isinstance(a, dict)]
        deps = project.get("dependencies")
        core = [d for d in deps if isinstance(d, str)] if isinstance(deps, list) else []
        extras = project.get("optional-dependencies")
        every = core + [d for v in (extras.values() if isinstance(extras, dict) else []) if isinstance(v, list)
                        for d in v if isinstance(d, str)]
        points = project.get("entry-points")
        groups = [str(g) for g in points] if isinstance(points, dict) else []
    elif rel == "setup.cfg":
        parser = configparser.ConfigParser(interpolation=None, strict=False)
        try:
            parser.read_string(text)
        except (configparser.Error, ValueError):
            return None
        name = parser.get("metadata", "name", fallback=None)
        about = [parser.get("metadata", key, fallback="") for key in _ABOUT_KEYS]
        core = [s.strip() for s in parser.get("options", "install_requires", fallback="").splitlines() if s.strip()]
        every = core
        groups = list(parser["options.entry_points"]) if parser.has_section("options.entry_points") else []
    else:
        core = [s for s in text.splitlines() if s.strip() and not s.lstrip().startswith(("#", "-"))]
        every = core
    cuda = bool(name and backends_in_text(name.replace("-", "_").replace(".", "_")) & {"cuda", "npu"}
                and name.replace("-", "_").lower() not in OTHER_NPU_RUNTIMES)
    cuda = cuda or any(_CUDA_DISTRIBUTION.match(_dist(r)) for r in every) or \
        (rel == "setup.py" and bool(_CUDA_BUILD.search(data)))
    fact: dict[str, Any] = {"name": name, "core": sorted({_dist(r) for r in core} - {""}), "cuda": cuda}
    if _PLATFORM_PLUGINS in groups:
        fact["plugin"] = _PLATFORM_PLUGINS
    # `author='Tenstorrent', description='AI/ML framework for Tenstorrent devices'`: the project says whose
    # accelerator it serves; a description that also names CUDA / GPUs / Ascend says nothing of the kind (t11z)
    described = backends_in_text(" ".join(a for a in about if isinstance(a, str)))
    if described and described <= OTHER_BACKENDS:
        fact["described"] = sorted(described)
    return fact


def _backend_of(fact: dict[str, Any]) -> tuple[str, str] | None:
    name = fact.get("name")
    if isinstance(name, str) and name:
        if name.replace("-", "_").replace(".", "_").lower() in OTHER_NPU_RUNTIMES:
            return "other-npu", f"its name {name!r}"
        named = backends_in_text(name.replace("-", "_").replace(".", "_"))
        if named == {"xla"} and "tpu" not in name.lower():
            named = set()       # XLA compiles for GPUs too (torch-xla's XLA:CUDA): the name alone is no other backend
        if named and named <= OTHER_BACKENDS:
            return sorted(named)[0], f"its name {name!r}"
    for dist in fact.get("core") or ():
        if dist in VENDOR_DISTRIBUTIONS:
            return VENDOR_DISTRIBUTIONS[dist], f"it requires {dist}"
    described = fact.get("described")
    if isinstance(described, list) and described:
        return described[0], f"its author / description names {', '.join(described)}"
    if fact.get("plugin") == _PLATFORM_PLUGINS and "vllm" in (fact.get("core") or ()):
        # a plugin package: vLLM is its core install; a library offering vLLM as an opt-in extra with a plugin
        # beside its own code (optimum-neuron) is read by its other metadata
        return _PLUGIN_BACKEND, f"it registers a vLLM platform plugin (entry-point group `{_PLATFORM_PLUGINS}`)"
    return None


def root_declarations(files: Sequence[tuple[Path, str]], project) -> list[tuple[str, dict[str, Any]]]:
    """(root metadata file, its `declares_fact`) for each root metadata file the tree has, from the file's held
    facts where the worker read them."""
    where = {rel: path for path, rel in files if rel in METADATA_FILES}
    facts = []
    for rel in METADATA_FILES:
        if rel not in where:
            continue
        held = held_tree(project, rel)
        if held is not None and "declares" in held:
            fact = held["declares"]
        else:
            try:
                fact = declares_fact(read_counted(project, where[rel], None, prefix=False), rel) \
                    if held is None else None
            except (OSError, SourceError):
                fact = None
        if isinstance(fact, dict):
            facts.append((rel, fact))
    return facts


def declared_vendor(files: Sequence[tuple[Path, str]], project) -> tuple[str, str] | None:
    """(backend, why) when the project's root metadata declares another accelerator's project, else None."""
    facts = root_declarations(files, project)
    if any(f.get("cuda") for _, f in facts):
        return None
    for rel, fact in facts:
        found = _backend_of(fact)
        if found is not None:
            return found[0], f"{rel}: {found[1]}"
    return None


def apply_declared_vendor(results: list, files: Sequence[tuple[Path, str]], project, *, plugins: bool = False) -> int:
    """Make errors and warnings info in a project that declares another accelerator's (and drop the host hints of
    another vendor's NPU project); returns how many changed. A vLLM platform plugin's tree is read only with
    `plugins` (after crossfile's pass: a call of its own vLLM helper keeps its info pointer, as its labellers read
    it), any other declaration only without."""
    if not any(r.findings for r in results):
        return 0
    found = declared_vendor(files, project)
    if found is None or (found[0] == _PLUGIN_BACKEND) != plugins:
        return 0
    backend, why = found
    host = backend == "other-npu" or backend in HOST_RUNTIMES     # its PyTorch side holds host values
    note = f"the project declares itself another accelerator's ({why}): {_NOTES['other-backend']}"
    changed = 0
    for r in results:
        if r.findings:
            changed += discount_findings(
                r, "other-backend", note, lower=undiscounted,
                drop=lambda f: host and (f.category in _HOST_HINTS or f.name == _TORCH_NEEDS_TORCH_NPU))
    return changed


__all__ = ["METADATA_FILES", "VENDOR_DISTRIBUTIONS", "apply_declared_vendor", "declared_vendor", "declares_fact",
           "root_declarations"]
