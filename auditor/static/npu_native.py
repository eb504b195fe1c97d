"""Code already written for Ascend (t11h, issue 11; tuned on the false rows of heldout4 .. heldout6).

A Python file that imports torch_npu at its top, unguarded (column 0: not under try / if / def), cannot even be
imported without Ascend's PyTorch adaptor; so is a file whose folders or name say it is the NPU member of a
per-backend set (`vendor/ascend/`, `npu_adapt/`, `sgl_kernel_npu/`). Its author runs it on the NPU already:
DrivingSDK's model patches (`flash_attn_func_patch(...)` swaps transformers' flash-attention for
`npu_fusion_attention`), NPU op tests that compare with a CPU reference library (`torch_scatter` on `cpu_*`
tensors), a repository's own Ascend port of a CUDA library under the CUDA library's name (`deep_ep.Buffer`).
There, by the severity policy's rule for ported code ("at most info, never rewritten"):

- findings that are warnings or errors become info (context `npu-file`), never rewritten: Triton / mmcv kernels
  (Triton-Ascend, mmcv's NPU ops), fp8 names, optional or patched attention paths, libraries with CPU kernels used
  as the CPU reference (NPU416);
- except CUDA device and distributed findings (`torch.cuda.synchronize()`, `"cuda:0"`, `"nccl"`, NCCL / cuDNN
  switches): importing torch_npu alone does not remap them (transfer_to_npu remaps some, see
  backends.under_transfer_to_npu), so they keep their severity; and except errors on CUDA-only packages
  (flash_attn, apex, NVIDIA-only libraries; not `torch.ops.<namespace>` ops, which NPU code calls from its NPU op
  libraries: `torch.ops._C_ascend.npu_*`): a CUDA script with `import torch_npu` added on top (the one-line port)
  still fails to import them on Ascend (a package the tree builds for Ascend itself is `apply_ascend_subpackages`);
- dtype hints are kept only where the Ascend product matters: bf16 (910A), fp64 (310P, 950) keep their per-product
  severity; fp8 / fp4 (supported on 950 only) stays as info: NPU code that uses it targets that product. Hints
  that hold on every Ascend product (fp16 loss scaling, an autocast region's dtype, a GradScaler, an fp16 switch)
  are dropped: the file already runs in that precision on the NPU.
"""
from __future__ import annotations

import ast
import re
from typing import Any

from auditor.source import SourceError
from auditor.static.astutil import ast_dotted
from auditor.static.backends import as_info, discount_findings, path_backends
from auditor.static.project_imports import held_tree, read_counted

_TOP_IMPORT = re.compile(r"^(?:import[ \t]+torch_npu\b|from[ \t]+torch_npu(?:\.[\w.]+)?[ \t]+import\b)", re.M)
# per-product dtype facts: their severity already says what the product (`--product`) makes of them
_PRODUCT_DTYPES = frozenset({"bf16-dtype", "fp64-dtype", "bf16-training-setting", "bf16-switch"})
# dtype facts that hold on every Ascend product: nothing to know in code that already runs on the NPU
_EVERY_PRODUCT = frozenset({"fp16-dtype", "autocast-dtype", "grad-scaler", "fp16-switch"})
# TileLang's DSL imported in a file written for Ascend is TileLang's Ascend backend (xllm's `targets/ascend/kernels`,
# DLCompiler's `test/commonir/ascend`, read on heldout trees; t14x): nothing to know there
_NPU_NATIVE_DSL = frozenset({"tilelang-import"})
# tq50a: a TileLang module compiled with TileLang-Ascend's pass configs (`tilelang.PassConfigKey.TL_ASCEND_AUTO_SYNC`,
# keys only tilelang-ascend's `PassConfigKey` defines: https://github.com/tile-ai/tilelang-ascend,
# tilelang/transform/pass_config.py) holds Ascend kernels (cann-recipes-infer's `ops/tilelang`)
_TILELANG_ASCEND = re.compile(r"\bPassConfigKey\.TL_ASCEND_\w+")
# tq52c: a module that imports Ascend's own kernel / compiler / runtime Python APIs at its top (column 0) cannot run
# anywhere else: TIK and TBE kernels (`from te import tik`, `from tbe import tik`, `import tbe.common.platform`: CANN's
# "For Beginners" TIK sample, https://www.hiascend.com/document/detail/en/canncommercial/800/opdevg/tbeaicpudevg/
# atlasopdev_10_0068.html) and pyACL (`import acl`). Not a bare `import te` (Transformer Engine is imported `as te`)
_ASCEND_API_IMPORT = re.compile(r"^(?:from[ \t]+(?:te|tbe)(?:\.[\w.]+)?[ \t]+import\b|import[ \t]+(?:te\.\w|tbe\b|acl\b))",
                                re.M)
# tq52c: a module that builds operator models for Ascend's ATC compiler names CANN's target-chip parameter
# (`soc_version`, `atc --singleop=op.json --soc_version=Ascend310P3`: "What Is a Single-Operator Description File?",
# https://www.hiascend.com/document/detail/en/canncommercial/850/devaids/atctool/atctool_0032.html) beside an Ascend
# chip name, an ATC option or an NPU name; its "float16" are operator descriptors' types, not torch dtypes
_SOC_VERSION = re.compile(r"\bsoc_version\b")
_ASCEND_TARGET = re.compile(r"""["']Ascend\d{3}|--singleop\b|--soc_version\b|\bnpu_\w|\w_npu\b""")
_KEPT_CATEGORIES = frozenset({"device", "distributed"})
_PACKAGE_ERRORS = frozenset({"third_party", "attention", "apex"})     # import / use of a CUDA-only package
_CPU_KERNELS = frozenset({"cuda-extension-library"})     # NPU416: torch_scatter & co. ship CPU kernels too
_NOTE = ("in a file written for Ascend ({why}): it runs on the NPU as written; re-validate there, nothing to "
         "port")


def written_for_npu(text: str, rel: str) -> str | None:
    """Why the file is NPU code (a short phrase), or None."""
    if "torch_npu" in text and _TOP_IMPORT.search(text):
        return "it imports torch_npu at its top"
    if rel and path_backends(rel) == {"npu"}:
        return "its path names the NPU"
    if "TL_ASCEND_" in text and _TILELANG_ASCEND.search(text) and _names_ascend_pass_config(text):
        return "its TileLang kernels take TileLang-Ascend's pass configs"
    if ("te" in text or "tbe" in text or "acl" in text) and _ASCEND_API_IMPORT.search(text):
        return "it imports Ascend's kernel / runtime APIs (TIK, TBE, pyACL) at its top"
    if "soc_version" in text and _SOC_VERSION.search(text) and _ASCEND_TARGET.search(text):
        return "it builds operator models for an Ascend chip (`soc_version`)"
    return None


def _names_ascend_pass_config(text: str) -> bool:
    """Whether the code (not a comment or a string: a porting note `# needs PassConfigKey.TL_ASCEND_AUTO_SYNC`) reads
    a `...PassConfigKey.TL_ASCEND_*` attribute (review50 item 6)."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return any(isinstance(node, ast.Attribute) and node.attr.startswith("TL_ASCEND_")
               and (ast_dotted(node.value) or "").rsplit(".", 1)[-1] == "PassConfigKey" for node in ast.walk(tree))


def selects_ascend_devices(tree: ast.AST, text: str) -> str | None:
    """Why a Python program runs on the Ascend devices it selects: it assigns `os.environ["ASCEND_RT_VISIBLE_DEVICES"]`
    outside any `if` / `try` / loop (at module level or in a function's own body) and names no CUDA_VISIBLE_DEVICES
    (omni-infer's prefill / decode demo, whose workers set it before building `vllm.LLM`); None otherwise."""
    if "ASCEND_RT_VISIBLE_DEVICES" not in text or "CUDA_VISIBLE_DEVICES" in text or not isinstance(tree, ast.Module):
        return None
    todo: list[ast.AST] = [tree]
    while todo:
        node = todo.pop()
        for stmt in getattr(node, "body", ()):
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                todo.append(stmt)
            elif isinstance(stmt, ast.Assign) and any(_ascend_devices_key(t) for t in stmt.targets):
                return "it sets os.environ[\"ASCEND_RT_VISIBLE_DEVICES\"]"
    return None


def _ascend_devices_key(target: ast.expr) -> bool:
    return isinstance(target, ast.Subscript) and ast_dotted(target.value) == "os.environ" and \
        isinstance(target.slice, ast.Constant) and target.slice.value == "ASCEND_RT_VISIBLE_DEVICES"


def apply_npu_file(findings: list, why: str) -> list:
    """Findings of a file written for Ascend, lowered or dropped as the module docstring says."""
    out = []
    for f in findings:
        if f.name in _EVERY_PRODUCT or f.name in _NPU_NATIVE_DSL:
            continue
        if f.name in _PRODUCT_DTYPES or f.severity == "info" or f.category in _KEPT_CATEGORIES or \
                f.severity == "error" and f.category in _PACKAGE_ERRORS and f.name not in _CPU_KERNELS and \
                not (f.symbol or "").startswith("torch.ops."):     # an op library NPU code calls is an NPU one
            out.append(f)
            continue
        out.append(as_info(f, "npu-file", _NOTE.format(why=why)))
    return out


# --- Hydra configs read by an entry that loads an Ascend adaptor -------------------------------------------------
# A Hydra application reads its configs from the folder `@hydra.main(config_path=...)` names, relative to the entry
# file. When that entry imports MindSpeed-LLM / MindSpeed's adaptor or the shim itself (anywhere in the file: a
# Hydra main runs its lazy imports before training), the Megatron switches of those configs (`use_flash_attn: true`,
# `distributed_backend: nccl`, fused kernels) are read by Megatron under the Ascend adaptor, which maps them to its
# NPU paths (MindSpeed-RL's `configs/*_A2.yaml` read by `cli/train_grpo.py`; t11h, heldout6). Info, never rewritten.
_HYDRA_MAIN = re.compile(r"""@hydra\.main\([^)]*?config_path\s*=\s*(['"])([^'"]*)\1""")
_ADAPTOR_IMPORT = re.compile(r"^[ \t]*(?:from[ \t]+(?:mindspeed_llm|mindspeed_mm|mindspeed\.megatron_adaptor"
                             r"|torch_npu\.contrib\.transfer_to_npu)\b|from[ \t]+mindspeed[ \t]+import[ \t]+"
                             r"megatron_adaptor\b|import[ \t]+(?:mindspeed_llm|mindspeed_mm|mindspeed\.megatron_adaptor"
                             r"|torch_npu\.contrib\.transfer_to_npu)\b)", re.M)
_CONFIG_SUFFIXES = (".yaml", ".yml")


def hydra_folders(data: bytes, rel: str) -> list[str]:
    """The config folders (relative, '/'-separated, '' for the root), in order, that the Python file `rel` (its
    bytes `data`) reads as a Hydra entry importing an Ascend adaptor; [] for any other file and for a file over the
    default size limit (never read for this). Once per file in the worker (project_imports.TREE, `hydra`)."""
    from posixpath import join, normpath

    from auditor.discover import MAX_FILE_BYTES

    if len(data) > MAX_FILE_BYTES or b"hydra" not in data or b"config_path" not in data:
        return []
    text = data.decode("utf-8", errors="replace")
    if not _ADAPTOR_IMPORT.search(text):
        return []
    here = rel.rsplit("/", 1)[0] if "/" in rel else ""
    out: list[str] = []
    for m in _HYDRA_MAIN.finditer(text):
        folder = normpath(join(here, m.group(2))) if m.group(2) else here
        if folder == ".":
            folder = ""
        if not folder.startswith("..") and folder not in out:
            out.append(folder)
    return out


def _config_folders(files, project=None) -> dict[str, str]:
    """{config folder (relative, '/'-separated, '' for the root): the entry file} for each Hydra entry of the tree
    that imports an Ascend adaptor. Each file's folders come from its per-file facts (`hydra`, ProjectImports.tree);
    a file without them (no `project`, a file the worker did not read) is read now, counted in `project.reads`."""
    folders: dict[str, str] = {}
    for path, rel in files:
        if not rel.endswith(".py"):
            continue
        facts = held_tree(project, rel)
        if facts is not None:
            found = facts.get("hydra") or []
        else:
            try:
                data = read_counted(project, path)
            except (OSError, SourceError):
                continue
            found = hydra_folders(data, rel)
        for folder in found:
            folders.setdefault(folder, rel)
    return folders


def apply_hydra_configs(results: list, files, project=None) -> int:
    """Lower the Megatron switches of YAML configs under a folder that an Ascend Hydra entry reads; returns how
    many warnings / errors were lowered."""
    from auditor.static.shim_graph import _MAX_CONNECTIONS, MEGATRON_SWITCHES

    wanted = [r for r in results if r.path.endswith(_CONFIG_SUFFIXES) and any(
        f.severity != "info" and (f.name in MEGATRON_SWITCHES or f.symbol == _MAX_CONNECTIONS) for f in r.findings)]
    if not wanted:
        return 0
    folders = _config_folders(files, project)
    if not folders:
        return 0
    lowered = 0
    for result in wanted:
        entry = next((e for folder, e in sorted(folders.items(), key=lambda kv: -len(kv[0]))
                      if not folder or result.path.startswith(folder + "/")), None)
        if entry is not None:
            lowered += discount_findings(
                result, "transfer-to-npu", f"a config of the Hydra entry {entry}, which loads the Ascend adaptor: it "
                                           "maps this Megatron switch to its NPU path",
                lower=lambda f: f.severity != "info" and (f.name in MEGATRON_SWITCHES or f.symbol == _MAX_CONNECTIONS))
    return lowered


# --- A package the tree builds itself, written for Ascend, under a CUDA library's name ------------------------------
# sgl-kernel-npu ships `python/deep_ep/` (a setup.py and the package `deep_ep/`, whose modules import torch_npu): its
# Ascend port of DeepEP. `import deep_ep` in the tree's tests and benchmarks is that port, not NVIDIA's library
# (t11h, heldout6). A sub-project is a folder holding setup.py / pyproject.toml and a package `<name>/__init__.py`
# beside it (not the tree's root project); the package counts when importing it loads torch_npu (its `__init__.py`
# or a module that imports at its top does). A vendored CUDA library (no torch_npu import), or a multi-backend one
# with an Ascend module among others, keeps its findings: on Ascend it is still the CUDA one.
_PACKAGE_CATEGORIES = frozenset({"third_party", "attention", "apex", "kernel"})
_PROJECT_FILES = ("setup.py", "pyproject.toml")


_RELATIVE_IMPORT = re.compile(r"^from[ \t]+\.(\w+)[ \t]+import\b", re.M)


def subpackage_facts(data: bytes, rel: str) -> dict[str, Any]:
    """A Python file's facts for ascend_subpackages (project_imports.TREE, cache FORMAT 13), once per file in the
    worker, read as the pass read the file (UTF-8, errors replaced; nothing over the default size limit): `top_npu`,
    it imports torch_npu at its top; for an `__init__.py`, `relative`, the modules it imports as `from .x import`, in
    order, each once. Only true / non-empty facts are written."""
    from auditor.discover import MAX_FILE_BYTES

    out: dict[str, Any] = {}
    if len(data) > MAX_FILE_BYTES:
        return out
    init = rel.rsplit("/", 1)[-1] == "__init__.py"
    if b"torch_npu" not in data and not (init and b"from" in data):
        return out
    text = data.decode("utf-8", errors="replace")
    if "torch_npu" in text and _TOP_IMPORT.search(text) is not None:
        out["top_npu"] = True
    if init:
        modules = list(dict.fromkeys(_RELATIVE_IMPORT.findall(text)))
        if modules:
            out["relative"] = modules
    return out


def ascend_subpackages(files, wanted: set[str], project=None) -> dict[str, str]:
    """{package name: its folder} for the tree's sub-project packages named in `wanted` written for Ascend: importing
    the package loads torch_npu (its `__init__.py`, or a module the `__init__.py` imports at its top, imports torch_npu
    at its top). The tree's root project is not a sub-project (its packages are first-party, firstparty.py): a
    multi-backend package with one Ascend module (lmdeploy) does not count. Each file's facts come from its per-file
    facts (subpackage_facts, ProjectImports.tree); a file without them is read now, counted in `project.reads`."""
    def top_imports_npu(rel: str, path) -> bool | None:
        facts = held_tree(project, rel)
        if facts is not None:
            return bool(facts.get("top_npu"))
        try:
            data = read_counted(project, path)
        except (OSError, SourceError):
            return None
        text = data.decode("utf-8", errors="replace")
        return "torch_npu" in text and _TOP_IMPORT.search(text) is not None

    by_rel = {rel: path for path, rel in files}
    out: dict[str, str] = {}
    for rel, path in by_rel.items():
        parts = rel.split("/")
        if len(parts) < 3 or parts[-1] != "__init__.py" or parts[-2] not in wanted or parts[-2] in out:
            continue
        parent = "/".join(parts[:-2])
        if not any(f"{parent}/{name}" in by_rel for name in _PROJECT_FILES):
            continue
        folder = "/".join(parts[:-1])
        if top_imports_npu(rel, path):
            out[parts[-2]] = folder
            continue
        facts = held_tree(project, rel)
        if facts is not None:
            modules = list(facts.get("relative") or ())
        else:
            try:
                init = read_counted(project, path).decode("utf-8", errors="replace")
            except (OSError, SourceError):
                continue
            modules = list(dict.fromkeys(_RELATIVE_IMPORT.findall(init)))
        for module in modules:
            sub_rel = f"{folder}/{module}.py"
            sub = by_rel.get(sub_rel)
            if sub is not None and top_imports_npu(sub_rel, sub):
                out[parts[-2]] = folder
                break
    return out


def apply_ascend_subpackages(results: list, files, project=None) -> int:
    """Package findings (`import deep_ep`, `deep_ep.Buffer(...)`) naming a sub-project package of the tree written
    for Ascend: info, never rewritten; returns how many warnings / errors were lowered."""
    def named(f) -> str:
        return (f.symbol or "").split(".", 1)[0]

    wanted = {named(f) for r in results for f in r.findings
              if f.severity != "info" and f.category in _PACKAGE_CATEGORIES and named(f).isidentifier()}
    if not wanted:
        return 0
    own = ascend_subpackages(files, wanted, project)
    if not own:
        return 0
    return sum(discount_findings(
        result, "ascend-package", lambda f: f"`{named(f)}` is the tree's own package ({own[named(f)]}), written for "
                                            "Ascend (it imports torch_npu): nothing to port",
        lower=lambda f: f.category in _PACKAGE_CATEGORIES and f.severity != "info" and own.get(named(f)) is not None)
        for result in results)


def apply_ascend_named_project(results: list, packages: frozenset[str]) -> int:
    """A tree whose own top-level package is named for Ascend (`vllm_ascend`, `xllm_npu`): every Python file of it
    (its tests and tools too) is code written for Ascend, as in `apply_npu_file`. Returns how many findings were
    lowered or dropped."""
    named = sorted(p for p in packages if path_backends(p) == {"npu"})
    if not named:
        return 0
    why = f"the project's own package `{named[0]}` is named for Ascend"
    changed = 0
    for result in results:
        if not result.path.endswith(".py") or not result.findings:
            continue
        before = [(f.severity, f.code) for f in result.findings]
        result.findings = apply_npu_file(result.findings, why)
        changed += before != [(f.severity, f.code) for f in result.findings]
    return changed
