"""Cross-file propagation: every use, in other files of the project, of the project's own CUDA-specific code.

A port moves a project's NCCL binding (`bmtrain/nccl/`), its Triton kernels (`triton_kernels/gemm_kernels.py`), its
flash-attn wrapper (`select_flash_attn_impl`) or its op builder together with every call site; the per-file pass sees
the definition but not `from ..nccl import allReduce as ncclAllReduce` ... `ncclAllReduce(...)` in another file.

Two steps, so that the result cache stays correct:

1. Per file (`summarize`, in the worker, stored with the file's cache entry): what the file defines at top level
   whose statement holds a finding (candidate spans), whether the file is named for a CUDA technology, and the
   imports it makes of modules that may be the project's own.
2. Per run (`propagate`, after every per-file result and the tree-wide passes, recomputed on every run from the
   summaries, cached or not): module names from paths (packages with `__init__.py`), relative imports resolved;
   a top-level definition is CUDA-specific when its statement still holds a finding of category kernel /
   attention / distributed / apex / third_party that is not in a multi-backend context (the per-file and tree-wide
   passes mark those: NPU branches, backend tables, `backends/cuda/` members, NPU twins); a module is CUDA-specific
   as a whole when a part of its path is named for the technology (`nccl/`, `cuda_kernel.py`, `triton_kernels/`,
   `flash_attn_utils.py`) and it is not the CUDA member of a per-backend set. The importers of those names (only
   they) are read again with `ast`: the import line and every line that uses an imported name (call, attribute,
   default value `attn_type=AttnType.FA`) get one info finding of the definition's category (NPU320-322, NPU135,
   NPU417), never a fix; a use inside an NPU / multi-backend dispatch of the importer gets none.
   What an importer's read placed is kept in its summary (`uses`, keyed by what it imports from CUDA-specific
   code), so it is read again only when that or the file changes (project_imports.py).

Aliases of CUDA APIs (t30a): a module-level `autocast = torch.cuda.amp.autocast` is kept in the summary with its
line's device / precision findings (`api_aliases`); an importer's calls of the name repeat them (`_alias_calls`).

One level only: a function that calls a CUDA-specific function of another module is not itself made CUDA-specific
(its own findings, if any, already are).
"""
from __future__ import annotations

import ast
import re
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any, Sequence

from auditor.findings import Finding
from auditor.static.astutil import ast_dotted, module_nodes, name_strings, scope_locals
from auditor.static.module_paths import absolute_module
from auditor.astnodes import walk_list

CATEGORIES = ("kernel", "attention", "distributed", "apex", "third_party")
CODES = {"kernel": ("NPU320", "project-cuda-kernel-use"), "attention": ("NPU321", "project-attention-use"),
         "apex": ("NPU322", "project-apex-use"), "distributed": ("NPU135", "project-nccl-use"),
         "third_party": ("NPU417", "project-cuda-package-use")}
OWN_CODES = frozenset(code for code, _ in CODES.values())
ALIAS_CATEGORIES = ("device", "precision")      # what an imported alias of a CUDA API repeats (api_aliases)
# the note a guarded import's finding carries (backends' guarded-import context): the alias's callers are not guarded
_GUARD_NOTE = re.compile(r" \(an optional import under a guard[^()]*\)$")
# what a module named for the technology is, without a finding of its own; `cuda_utils.py`, `cudnn.py` say less
# (device helpers are common): those count only with a finding of one of CATEGORIES
_CATEGORY_OF_TECH = {"nccl": "distributed", "flash_attn": "attention", "triton": "kernel", "cutlass": "kernel",
                     "cute": "kernel"}
# words of a path part that name a CUDA technology (`cuda_kernel.py`, `triton_kernels/`, `nccl/`, `flash_attn_utils`)
_TECH = re.compile(r"(?:^|_)(nccl|cuda|cudnn|cublas|cutlass|cute|triton|flash_?attn|flash_attention)(?:$|_|s_)")
_TECH_TEXT = re.compile(r"(?i)nccl|cuda|cudnn|cublas|cutlass|cute\b|triton|flash_?attn")
_SKIP_TOP = frozenset(sys.stdlib_module_names) | {"torch", "numpy", "typing_extensions", "__future__"}
# contexts that leave a finding CUDA-specific (a CUDA-only branch, a guard never true on Ascend): every other
# context propagates nothing: an NPU path, a backend dispatch, a per-backend member, an NPU twin, Ascend code, another
# backend, and an optional import under a guard (`try: import flash_attn` ... else SDPA: the code has a path without
# it, so its callers run on Ascend as written; DiffSynth's `flash_attention`)
_STILL_CUDA = frozenset({"import-guard", "cuda-available-branch", "test-mark"})


# availability probes: a definition whose finding only asks whether a package or feature is there
# (`def is_bnb_available(): return importlib.util.find_spec("bitsandbytes") is not None`) is an availability helper;
# its importers' calls carry their own feature-check finding, and importing it runs anywhere (lead decision 14; tq43,
# tuned on heldout47's PEFT copy in Alpaca-CoT)
_PROBE_RULES = frozenset({
    "third-party-package-detection", "third-party-feature-check", "kernel-package-detection", "kernel-feature-check",
    "attention-package-detection", "flash-attn-feature-check", "apex-package-detection", "apex-feature-check",
    "is-nccl-available", "transformers-attention-backend-probe"})


def _cuda_specific(f: Finding, flag_codes: frozenset[str] = frozenset()) -> bool:
    """A finding that makes its definition CUDA-specific: an error or a warning (an info finding runs on Ascend:
    DiffSynth's `parse_nccl_backend` is named for NCCL and answers "hccl" on an NPU), not a flag check
    (`if FLASH_ATTN_3_AVAILABLE:`, flagname rules: a definition that only asks is a dispatch with another path) nor
    an availability probe (`_PROBE_RULES`)."""
    return f.category in CATEGORIES and (f.severity != "info" and f.code not in OWN_CODES or _forwards(f)) and \
        f.code not in flag_codes and f.name not in _PROBE_RULES and f.data.get("context") in (None, *_STILL_CUDA)


def _forwards(f: Finding) -> bool:
    """A use of the file's own CUDA extension inside a namespace class that forwards to it (valueflow.py
    `_wrapper_lines`, t29a): the class's methods are the kernel's entry points for the other files."""
    from auditor.static.valueflow import WRAPPER

    return bool(f.data.get(WRAPPER))


def tech_of(rel: str) -> str | None:
    """The technology a path part of `rel` is named for (`bmtrain/nccl/__init__.py` -> nccl), or None."""
    parts = rel.replace("\\", "/").split("/")
    parts[-1] = parts[-1].rsplit(".", 1)[0]
    for part in parts:
        m = _TECH.search(part.lower())
        if m is not None:
            return "flash_attn" if m.group(1).startswith("flash") else m.group(1)
    return None


def _without_own_names(text: str, rel: str) -> str:
    """`text` less the folder names of `rel` that name a technology: Triton-distributed's `from triton_dist.models.utils
    import logger` in `triton_dist/mega_triton_kernel/core/graph.py` (a task graph) names the project's own package,
    not Triton (tq44a). A folder named just for it (`nccl/`, `flash_attn/`) stays: its package is the technology's."""
    folders = [p for p in rel.replace("\\", "/").split("/")[:-1] if _TECH.search(p.lower()) and
               _TECH.fullmatch(p.lower()) is None]
    return re.sub(r"\b(?:" + "|".join(map(re.escape, folders)) + r")\b", "", text) if folders else text


_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def _statements(body: list[ast.stmt], into_defs: bool = True):
    """The statements of `body` and of the blocks inside them; with `into_defs=False` not those of a def's or a
    class's body (names bound there are local to it: a Triton kernel's `y = x / s` is no name of the module)."""
    for stmt in body:
        yield stmt
        if not into_defs and isinstance(stmt, _SCOPES):
            continue
        for field in ("body", "orelse", "finalbody"):
            inner = getattr(stmt, field, None)
            if isinstance(inner, list):
                yield from _statements(inner, into_defs)
        for handler in getattr(stmt, "handlers", ()):
            yield from _statements(handler.body, into_defs)


def _bound_names(stmt: ast.stmt) -> list[str]:
    """The names a top-level statement binds (a def, a class, assignments and imports, also inside a top-level
    `try:` / `if:` such as `try: from flash_attn import f` ... `HAS_FLASH_ATTN = True`)."""
    out: list[str] = []
    for node in _statements([stmt], into_defs=False):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.append(node.name)
            continue        # (its body's names are local)
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, (ast.AnnAssign, ast.AugAssign)):
            targets = [node.target]
        elif isinstance(node, ast.ImportFrom):
            out += [a.asname or a.name for a in node.names if a.name != "*"]
            continue
        else:
            continue
        for target in targets:
            for t in walk_list(target):
                if isinstance(t, ast.Name):
                    out.append(t.id)
    return out


def summarize(tree: ast.Module, findings: Sequence[Finding], rel: str, text: str) -> dict[str, Any]:
    """The file's part of the cross-file pass (JSON-able, kept in the cache entry)."""
    defs: dict[str, list[list[int]]] = {}
    counted = [f for f in findings if f.category in CATEGORIES and (f.code not in OWN_CODES or _forwards(f))]
    if counted:
        # a string that only names or stores something (a set of option names, `self.model_backend = "vllm"`)
        # makes no definition CUDA code its importers use (LLMBox's ModelArguments, tq43)
        spots, stored = name_strings(tree)
        counted = [f for f in counted if (f.line, f.col - 1) not in spots and f.line not in stored]
    # an optional import under a guard (`try: from flash_attn.ops.triton.cross_entropy import cross_entropy_loss` /
    # `except ImportError: FLASH_CE = False`, verl's torch_functional): the module has its path without it, so the
    # names it binds are no CUDA code its importers port with it (tq52b); their uses under the module's flag are
    # findings where they are written
    optional = {f.line for f in findings if f.data.get("context") == "guarded-import"}
    counted = [f for f in counted if f.line not in optional]
    lines = sorted({f.line for f in counted})
    every = sorted({f.line for f in findings if f.code not in OWN_CODES})
    if lines:
        import bisect

        for stmt in tree.body:
            start = min([stmt.lineno] + [d.lineno for d in getattr(stmt, "decorator_list", ())])
            end = stmt.end_lineno or stmt.lineno
            i = bisect.bisect_left(lines, start)
            if i == len(lines) or lines[i] > end:
                continue
            if isinstance(stmt, (ast.Import, ast.ImportFrom)) or isinstance(stmt, ast.Expr):
                if not isinstance(stmt, ast.ImportFrom):
                    continue       # `import flash_attn` binds the package itself: its uses are already findings
            if isinstance(stmt, ast.If):
                for name, own in _branch_bindings(stmt, lines).items():
                    defs.setdefault(name, own)
                continue
            names = _bound_names(stmt)
            if isinstance(stmt, ast.ClassDef) and not _mostly_cuda(stmt, lines, every):
                continue
            spans = _unconditional(stmt, start) if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) \
                else [[start, end]]
            for name in names:
                defs.setdefault(name, spans)
    imports: list[list[Any]] = []
    for stmt in _statements(tree.body):
        if isinstance(stmt, ast.ImportFrom):
            module = stmt.module or ""
            if stmt.level == 0 and module.split(".", 1)[0] in _SKIP_TOP:
                continue
            imports.append([stmt.lineno, stmt.level, module,
                            [[a.name, a.asname or a.name] for a in stmt.names]])
        elif isinstance(stmt, ast.Import):
            pairs = [[a.name, a.asname or ""] for a in stmt.names if a.name.split(".", 1)[0] not in _SKIP_TOP]
            if pairs:
                imports.append([stmt.lineno, -1, "", pairs])
    tech = tech_of(rel)
    from auditor.static.gates import module_gates      # (gates imports nothing of this module)
    from auditor.static.device_shims import cuda_patches
    exported = _literal_all(tree)
    out: dict[str, Any] = {"defs": defs, "imports": imports,
                           "tech": tech if tech is not None and _TECH_TEXT.search(_without_own_names(text, rel))
                           else None,
                           "gates": module_gates(tree, text)}     # CUDA gates its importers may ask (auditor/static/imported_gates.py)
    from auditor.static.platform_predicates import platform_facts
    platform = platform_facts(tree, text)
    if platform:
        out["platform"] = platform          # the project's own platform checks (auditor/static/platform_predicates.py)
    if exported is not None:
        out["all"] = exported               # what `from module import *` binds (`_wanted`)
    aliases = api_aliases(tree, findings)
    if aliases:
        out["aliases"] = aliases            # `autocast = torch.cuda.amp.autocast`: its importers' calls (t30a)
    patches = cuda_patches(text)
    if any(patches):
        out["cuda_patch"] = patches         # rebinds Tensor.cuda / patches torch.cuda (auditor/static/device_shims.py)
    if rel.endswith("__init__.py"):
        version = release_version(tree)
        if version:
            out[RELEASE_VERSION] = version  # a package's `__version__` (unreached_defs' versioned copies)
    return out


RELEASE_VERSION = "release_version"


def release_version(tree: ast.Module) -> str:
    """The string a module binds to `__version__` at its top level ("" without one): what a published package
    reports (PEP 396)."""
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__version__" for t in node.targets) \
                and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            return node.value.value
    return ""


def _branch_bindings(stmt: ast.If, lines: list[int]) -> dict[str, list[list[int]]]:
    """Names bound in the branches of a top-level `if`, each with the spans of its own binding statements, kept only
    when every binding holds a finding line: a name is CUDA-specific by its own definition, not by a neighbour in
    the same `if` (InternEvo's `LLM_NCCL_TIMEOUT = datetime.timedelta(...)` beside `os.environ["NCCL_..."] = "1"`),
    and a name with a portable binding in another branch (`exp2 = tldevice.exp2` ... `else: exp2 = tl.math.exp2`,
    under an opt-in flag) has a path without CUDA (t11g, tuned on heldout6)."""
    import bisect

    spans: dict[str, list[list[int]]] = {}
    clean: set[str] = set()
    for node in _statements([stmt], into_defs=False):
        if node is stmt or isinstance(node, _CONDITIONAL):
            continue            # (the statements of its branches come one by one)
        start = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", ())])
        end = node.end_lineno or node.lineno
        i = bisect.bisect_left(lines, start)
        hit = i < len(lines) and lines[i] <= end
        for name in _bound_names(node):
            if hit:
                spans.setdefault(name, []).append([start, end])
            else:
                clean.add(name)
    return {name: own for name, own in spans.items() if name not in clean}


_CONDITIONAL = (ast.If, ast.Try) + ((ast.TryStar,) if hasattr(ast, "TryStar") else ()) + \
    ((ast.Match,) if hasattr(ast, "Match") else ())


def _unconditional(fn: ast.FunctionDef | ast.AsyncFunctionDef, start: int) -> list[list[int]]:
    """The line spans of a function that run on every call: its header and its body's statements other than an
    `if` / `try` / `match`, also inside a `with` or a loop (align-anything's 400-line `load_pretrained_models` builds a BitsAndBytesConfig only
    `if bnb_cfgs.use_bnb:`; its callers are not CUDA-specific)."""
    spans = [[start, fn.body[0].lineno - 1 if fn.body[0].lineno > fn.lineno else fn.lineno]]

    def walk(body: list[ast.stmt]) -> None:
        for stmt in body:
            if isinstance(stmt, _CONDITIONAL):
                continue
            inner = getattr(stmt, "body", None)
            if isinstance(stmt, (ast.With, ast.AsyncWith, ast.For, ast.AsyncFor, ast.While)) and inner:
                spans.append([stmt.lineno, inner[0].lineno - 1 if inner[0].lineno > stmt.lineno else stmt.lineno])
                walk(inner)      # torchchat's `with torch.no_grad():` around the whole of `main`
            else:
                spans.append([stmt.lineno, stmt.end_lineno or stmt.lineno])

    walk(fn.body)
    return spans


def _mostly_cuda(cls: ast.ClassDef, lines: list[int], every: list[int]) -> bool:
    """A class is CUDA-specific when its header (bases, decorators) or at least half of its methods hold a finding:
    a trainer with one `backend="nccl"` among forty methods is not."""
    import bisect

    methods = [s for s in cls.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))]
    header = (min([cls.lineno] + [d.lineno for d in cls.decorator_list]), cls.body[0].lineno - 1)
    i = bisect.bisect_left(every, header[0])
    if i < len(every) and every[i] <= header[1]:
        return True         # a base class or decorator named for CUDA (`class FusedEmaAdamBuilder(CUDAOpBuilder)`)
    if not methods:
        # a class of values: CUDA-specific by a field that holds code (`fwd = _C.forward`), not by a setting's
        # literal default (DreamWaltz's `@dataclass class RenderConfig: cuda_ray: bool = True`, whose importers use
        # the config, not CUDA code; the default is reported where it is written; t29a)
        defaults = {line for s in cls.body if isinstance(s, (ast.Assign, ast.AnnAssign))
                    and isinstance(s.value, ast.Constant) for line in range(s.lineno, (s.end_lineno or s.lineno) + 1)}
        end = cls.end_lineno or cls.lineno
        return any(header[1] < line <= end and line not in defaults for line in lines)
    hit = 0
    for m in methods:
        i = bisect.bisect_left(lines, m.lineno)
        hit += i < len(lines) and lines[i] <= (m.end_lineno or m.lineno)
    return hit * 2 >= len(methods)


# -- the per-run pass ----------------------------------------------------------------------------------------

def api_aliases(tree: ast.Module, findings: Sequence[Finding]) -> dict[str, list[list[Any]]]:
    """A module-level alias of a CUDA API (`autocast = torch.cuda.amp.autocast`, also in a try body, IGEV /
    VideoFlow): the name -> the device / precision findings of its line [code, name, category, severity, message,
    symbol]; another file's `from module import autocast` then calls `torch.cuda.amp.autocast` itself (t30a)."""
    on_line: dict[int, list[Finding]] = {}
    for f in findings:
        if f.category in ALIAS_CATEGORIES and f.data.get("context") in (None, "guarded-import"):
            on_line.setdefault(f.line, []).append(f)
    out: dict[str, list[list[Any]]] = {}
    if not on_line:
        return out
    for stmt in _statements(tree.body, into_defs=False):
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name) and \
                isinstance(stmt.value, ast.Attribute) and stmt.lineno == stmt.end_lineno and \
                (ast_dotted(stmt.value) or "").startswith("torch.cuda.") and stmt.lineno in on_line:
            out[stmt.targets[0].id] = [[f.code, f.name, f.category, f.severity, f.message, f.symbol]
                                       for f in on_line[stmt.lineno] if f.data.get("context") is None]
        elif isinstance(stmt, ast.ImportFrom) and stmt.level == 0 and \
                (stmt.module or "").startswith("torch.cuda.") and stmt.lineno in on_line:
            # a re-export (`from torch.cuda.amp import autocast, GradScaler` in FIBER's utils/amp.py, also in a
            # try body): each name carries the findings whose symbol is that name's. A guard makes the import
            # optional, not the importer's call: that one runs the CUDA API at the rule's severity (tk45)
            for alias in stmt.names:
                symbol = f"{stmt.module}.{alias.name}"
                mine = [[f.code, f.name, f.category, None if f.data.get("context") else f.severity,
                         _GUARD_NOTE.sub("", f.message) if f.data.get("context") else f.message, f.symbol]
                        for f in on_line[stmt.lineno] if f.symbol == symbol]
                if mine:
                    out[alias.asname or alias.name] = mine
    return {name: found for name, found in out.items() if found}


def _literal_all(tree: ast.Module) -> list[str] | None:
    """The names of a module-level `__all__ = [...]` / `(...)` of string literals (the last one), else None."""
    found = None
    for stmt in tree.body:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name) and \
                stmt.targets[0].id == "__all__":
            value = stmt.value
            found = sorted({e.value for e in value.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)}) \
                if isinstance(value, (ast.List, ast.Tuple)) and all(
                    isinstance(e, ast.Constant) and isinstance(e.value, str) for e in value.elts) else None
        elif isinstance(stmt, ast.AugAssign) and isinstance(stmt.target, ast.Name) and stmt.target.id == "__all__":
            found = None        # `__all__ += other.__all__`: not read
    return found


class _Target:
    """What a module offers: its CUDA-specific names (name -> (category, line, code, symbol)) or itself as a whole."""

    def __init__(self, rel: str) -> None:
        self.rel = rel
        self.names: dict[str, tuple[str, int, str, str]] = {}
        self.whole: tuple[str, int, str, str] | None = None
        self.exported: set[str] | None = None      # its literal `__all__`: what `import *` binds (t11u)
        # names the module binds by importing a third-party module (`import triton.language as tl` in a
        # `triton_utils/__init__.py` that re-exports it): that module, not the project's own CUDA code (t11v)
        self.reexports: frozenset[str] = frozenset()
        # names a package's `__init__.py` re-exports (`from .ffi import CUDA`) -> as `names`, and the defining file
        self.reexported: dict[str, tuple[str, int, str, str]] = {}
        self.origins: dict[str, str] = {}
        self.aliases: dict[str, list[list[Any]]] = {}     # api_aliases of the module's summary
        # a compiled extension a setup.py of the tree builds (_built_extensions): its submodules are its own
        # (pybind11's `def_submodule`: k2's `from _k2.version import with_cuda`)
        self.compiled = False
        # its subpackages that load none of its compiled ops (a rule's `pure_submodules`: PyTorch3D's transforms)
        self.pure: frozenset[str] = frozenset()
        # the folder of the setup.py that builds this package as a library (_own_built_packages): its own files
        # import it as the library's internals, not as a use of it
        self.library: str | None = None
        # the per-backend set member's folder (backend_files.SET_MEMBER) whose files alone its names reach (tq56a)
        self.member: str | None = None


def _alias_targets(results: list, modules: dict[str, str]) -> dict[str, _Target]:
    """module name -> the module's aliases of CUDA APIs (api_aliases), from the summaries."""
    out: dict[str, _Target] = {}
    for r in results:
        summary = getattr(r, "summary", None)
        name = modules.get(r.path)
        if name is not None and isinstance(summary, dict) and isinstance(summary.get("aliases"), dict):
            out[name] = _Target(r.path)
            out[name].aliases = summary["aliases"]
    return out


def _alias_wanted(imports: list, me: str, is_package: bool, aliased: dict[str, _Target], rel: str,
                  present: set[str]) -> list:
    """`_wanted`'s entries (kind "alias") for the names the file imports from a module's api_aliases."""
    out: list[tuple[Any, ...]] = []
    package = me.rsplit(".", 1)[0] if "." in me else ""
    for line, level, module, names in imports:
        if level == -1 or not module:
            continue
        resolved = absolute_module(module, level, me, is_package)
        source = _lookup(resolved, aliased, package if level == 0 else None)
        if source is None and level == 0 and resolved not in present and "." not in resolved:
            # `sys.path.append('core')` ... `from igev_stereo import autocast`: the one module of that stem
            found = [t for m, t in aliased.items() if m.rsplit(".", 1)[-1] == resolved]
            source = found[0] if len(found) == 1 else None
        if source is None or source.rel == rel:
            continue
        for name, local in names:
            if source.aliases.get(name):
                out.append((line, local, "alias", source.aliases[name], source.rel, None))
    return out


def _targets(results: list, modules: dict[str, str], files: dict[str, Path],
             flag_codes: frozenset[str] = frozenset(), project: Any = None) -> dict[str, _Target]:
    from auditor.static.backend_files import SET_MEMBER, ModuleMembers, per_backend_sibling
    from auditor.static.backends import cuda_backend_module

    if project is None:       # one view per run: a file without facts in its summary is read once
        from auditor.static.project_imports import ProjectImports

        project = ProjectImports([(path, rel) for rel, path in files.items()], results)

    out: dict[str, _Target] = {}
    ascend_named = AscendNamed(project)
    members = ModuleMembers(project, [(path, rel) for rel, path in files.items()])
    tops = {m.split(".", 1)[0] for m in modules.values()}
    for built, target in _cmake_extensions(results, modules).items():
        out.setdefault(built, target)
    for built, target in _source_installs(results, modules).items():
        out.setdefault(built, target)
    built_here: dict[str, _Target] = {}
    for r in results:
        summary = getattr(r, "summary", None)
        for built, target in _built_extensions(r).items():
            out.setdefault(built, target)
            built_here.setdefault(built, target)
        name = modules.get(r.path)
        if not summary or name is None or technology_package(name, r.path):
            continue
        own = sorted((f for f in r.findings if _cuda_specific(f, flag_codes)), key=lambda f: f.line)
        member = None
        if not own:     # a per-backend set member's CUDA lines: CUDA-specific for the member's own files only
            own = sorted((f for f in r.findings if f.data.get(SET_MEMBER) and _cuda_specific(
                replace(f, severity="warning", data={}), flag_codes)), key=lambda f: f.line)
            member = own[0].data[SET_MEMBER] if own else None
        if _ascend_package(r.path):     # Triton code of an Ascend package is Triton-Ascend: it runs on the NPU
            own = [f for f in own if f.category != "kernel"]
        target = _Target(r.path)
        target.member = member
        if isinstance(summary.get("all"), list):
            target.exported = set(summary["all"])
        for defined, spans in (summary.get("defs") or {}).items():
            if spans and isinstance(spans[0], int):
                spans = [spans]
            inside = [f for f in own if any(start <= f.line <= end for start, end in spans)]
            if inside:
                f = inside[0]
                target.names[defined] = (f.category, f.line, f.code, f.symbol)
        tech = summary.get("tech")
        if tech and not cuda_backend_module(r.path) and (member is not None or (
                r.path not in files or per_backend_sibling(files[r.path], r.path, members) is None) and
                not (r.findings and all(f.data.get("context") not in (None, *_STILL_CUDA) for f in r.findings))) and \
                not (tech == "triton" and (_ascend_package(r.path) or
                                           r.path in files and _triton_ascend_text(r.path, project))) and \
                not ascend_named(r.path) and not ascend_named.plain_torch(r.path, r.findings):
            category = _CATEGORY_OF_TECH.get(tech) or (own[0].category if own else None)
            if category is not None:
                line = own[0].line if own else 1
                target.whole = (category, line, own[0].code if own else "", own[0].symbol if own else tech)
        if target.whole:
            target.reexports = _third_party_bindings(summary.get("imports") or (), tops) - set(target.names)
        if target.names or target.whole:
            out[name] = target
    _own_built_packages(built_here, modules, out)
    _reexported_names(results, modules, out)
    return out


def _own_built_packages(built: dict[str, _Target], modules: dict[str, str], out: dict[str, _Target]) -> None:
    """A library the tree builds from its own source folder (decision 27: kernel), read from the setup.py of a folder
    below the root: JS3C-Net's lib/setup.py ships `sparseconvnet` with its extension `sparseconvnet.SCN`
    (`CUDAExtension` when CUDA is there), lib/spconv/setup.py builds spconv 1.x by CMake into its package `spconv`.
    The package that holds the extension (its parent package, or the package of the extension's own name), a
    module of the run under that folder, is then the build as a whole: `import sparseconvnet as scn` and
    `scn.checkpoint_restore(...)` use the nvcc-built library (tk45). The root's setup.py is the project itself: its
    own packages stay as their modules say."""
    rel_of = {name: rel for rel, name in modules.items()}
    for name, target in built.items():
        folder = _folder(target.rel)
        if not folder:
            continue
        for package in dict.fromkeys((name, name.rsplit(".", 1)[0] if "." in name else name)):
            rel = rel_of.get(package)
            mine = out.get(package)
            if rel is None or not rel.startswith(folder + "/") or not rel.endswith("__init__.py") or mine is target:
                continue
            if mine is None:
                mine = out[package] = _Target(rel)
            if mine.whole is None:
                # each of its names is the build's (spconv's `SparseSequential`), not what its own lines hold
                mine.whole, mine.library, mine.names, mine.reexported = target.whole, folder, {}, {}


def _reexported_names(results: list, modules: dict[str, str], out: dict[str, _Target]) -> None:
    """A package's `__init__.py` that imports a CUDA-specific name of one of its modules (`from .ffi import CUDA` in
    PPQ's `ppq/core/__init__.py`) offers it to `from ppq.core import CUDA` elsewhere (t29a). From the summaries'
    imports. Only to an import of that name: `import pkg` / `from . import pkg` of a package that re-exports (a vendored
    library's `warp/sim/__init__.py`) does not make the package's import line a use."""
    for r in results:
        name = modules.get(r.path)
        summary = getattr(r, "summary", None)
        if name is None or not r.path.endswith("__init__.py") or not isinstance(summary, dict):
            continue
        for entry in summary.get("imports") or ():
            if not isinstance(entry, (list, tuple)) or len(entry) != 4 or entry[1] == -1:
                continue
            source = out.get(absolute_module(str(entry[2]), int(entry[1]), name, True))
            for pair in entry[3]:
                if source is None or source.rel == r.path:
                    continue
                offered = source.names.get(str(pair[0])) or source.reexported.get(str(pair[0]))
                if offered is None:
                    continue
                target = out.setdefault(name, _Target(r.path))
                if str(pair[1]) not in target.names:
                    target.reexported.setdefault(str(pair[1]), offered)
                    target.origins.setdefault(str(pair[1]), source.origins.get(str(pair[0]), source.rel))


def _built_extensions(result) -> dict[str, _Target]:
    """The CUDA extensions a setup.py of the tree builds (`CUDAExtension('cuda_sparse_ops', [...cu])`,
    FastPointTransformer's src/cuda_ops/setup.py; also under a condition, L3C's `torchac_backend_gpu`), by their
    installed name: an import of that name anywhere in the tree (`import cuda_sparse_ops`) loads the nvcc-built
    library the setup.py's own finding reports (t25c)."""
    from auditor.project.launch_imports import FACT as HARD_IMPORTS

    summary = getattr(result, "summary", None)
    hard = summary.get(HARD_IMPORTS) if isinstance(summary, dict) else None
    extensions = {**(hard.get("built_if") or {}), **(hard.get("extensions") or {})} if isinstance(hard, dict) else {}
    out: dict[str, _Target] = {}
    for built, line in extensions.items():
        if not isinstance(built, str) or not isinstance(line, int):
            continue
        own = [f for f in result.findings if f.category == "kernel" and f.line == line and f.severity != "info"]
        target = _Target(result.path)
        target.whole = ("kernel", line, own[0].code, own[0].symbol) if own else ("kernel", line, "", "CUDAExtension")
        target.compiled = True
        out[built] = target
    return out


def _source_installs(results: list, modules: dict[str, str]) -> dict[str, _Target]:
    """The CUDA extensions the tree's requirements files and conda environments install from a git URL (NPU954:
    Gaussian-SLAM's `- git+https://github.com/VladimirYugay/gaussian_rasterizer.git`), by the module the repository
    installs: `from gaussian_rasterizer import GaussianRasterizer` anywhere in the tree loads that build (tk45). Not
    where the tree holds a module of that name itself."""
    from auditor.project.requirements import SOURCE_INSTALLS

    own = set(modules.values())
    out: dict[str, _Target] = {}
    for r in results:
        summary = getattr(r, "summary", None)
        for entry in (summary.get(SOURCE_INSTALLS) or ()) if isinstance(summary, dict) else ():
            try:
                module, line, code, symbol = str(entry["module"]), int(entry["line"]), entry["code"], entry["symbol"]
            except (KeyError, TypeError, ValueError):
                continue        # a malformed entry (an older cache, a summary built by hand)
            if module in own or module in out:
                continue
            target = out[module] = _Target(r.path)
            target.whole = ("kernel", line, str(code), str(symbol))
            target.compiled = True
    return out


def _cmake_extensions(results: list, modules: dict[str, str]) -> dict[str, _Target]:
    """The Python extension modules a CMake build of the tree makes with CUDA on (tk38): a module target of a
    CMakeLists.txt (`pybind11_add_module`, `Python_add_library(... MODULE)`, RAPIDS' `rapids_cython_create_modules`
    of `wholememory_binding.pyx`; cmake.python_module_targets) whose file or a CMake file in a folder above it enables
    CUDA (`project(PYLIBWHOLEGRAPH ... LANGUAGES CXX CUDA)`, `find_package(CUDAToolkit)`), by its installed name: the
    package of its folder (`pylibwholegraph.binding.wholememory_binding`, the folder holding `__init__.py`) or the bare
    target name."""
    from auditor.project.cmake import CMAKE_CUDA, CMAKE_MODULES

    facts = [(r, r.summary) for r in results if isinstance(getattr(r, "summary", None), dict)
             and isinstance(r.summary.get(CMAKE_MODULES), dict)]
    cuda_folders = {_folder(r.path) for r in results if isinstance(getattr(r, "summary", None), dict)
                    and r.summary.get(CMAKE_CUDA)}
    if not facts or not cuda_folders:
        return {}
    out: dict[str, _Target] = {}
    for r, summary in facts:
        folder = _folder(r.path)
        if not any(folder == f or not f or folder.startswith(f + "/") for f in cuda_folders):
            continue
        package = modules.get(f"{folder}/__init__.py" if folder else "__init__.py")
        for built, line in summary[CMAKE_MODULES].items():
            if isinstance(built, str) and isinstance(line, int):
                target = _Target(r.path)
                target.whole = ("kernel", line, "", "CMake CUDA build")
                target.compiled = True
                out[f"{package}.{built}" if package else built] = target
    return out


def _third_party_bindings(imports: Sequence, tops: set[str]) -> frozenset[str]:
    """The names a module binds with `import pkg[.sub] [as alias]` of a package that is not the project's own
    (`tops`: the top-level names of the run's modules): aphrodite's `triton_utils/__init__.py` re-exports `triton`
    and `tl` (`import triton.language as tl`, a placeholder without Triton); an importer's `tl.arange` is Triton's,
    judged by the rules on Triton like any use of it, not a use of project-own CUDA code (NPU320; t11v, tuned on
    heldout14, the same class in heldout8)."""
    out: set[str] = set()
    for entry in imports:
        if not isinstance(entry, (list, tuple)) or len(entry) != 4 or entry[1] != -1:
            continue
        for pair in entry[3]:
            full, alias = str(pair[0]), str(pair[1] or "")
            top = full.split(".", 1)[0]
            if top and top not in tops:
                out.add(alias or top)
    return frozenset(out)


# top-level package names that ARE a CUDA technology: the tree defines that library itself
_TECH_PACKAGES = frozenset({"nccl", "cuda", "cudnn", "cublas", "cutlass", "cute", "triton", "flash_attn",
                            "flashattn", "flash_attention"})


def technology_package(module: str, rel: str = "") -> bool:
    """A module of a package that is the technology itself (`triton.language.core` in Triton's or Triton-Ascend's
    own tree, `flash_attn.flash_attn_interface` in FlashAttention's): the project defines the library its other
    files use (`tl.load`, `core.tensor`, `ttgl.distributed_type`), it is not CUDA-specific code of the project to
    port together with them; the per-file rules judge those uses as uses of the library (policy (b) for Triton).
    A package merely named for it (`triton_kernels`, `bmtrain.nccl`) is still followed, and so is a tech-named
    folder that is a top-level package only because the folder above it is none (`nerfacc/cuda/` audited without
    `nerfacc/__init__.py`): the library's package sits at a source root of the tree (the root, `src/`, `python/`)
    (t11i, tuned on heldout7)."""
    names = module.split(".")
    if names[0].lower() not in _TECH_PACKAGES:
        return False
    parts = rel.replace("\\", "/").split("/")
    prefix = parts[:len(parts) - len(names) - (1 if parts[-1] == "__init__.py" else 0)]
    return prefix in ([], ["src"], ["python"])


def _ascend_package(rel: str) -> bool:
    """A module inside a package named for Ascend (`vllm_ascend/ops/triton/batch_invariant/`,
    `sgl_kernel_npu/fla/`): an Ascend project's own Triton is Triton-Ascend, which its importers run on the NPU
    as written (t11g, tuned on heldout6)."""
    from auditor.static.backends import backends_in_text

    return any(backends_in_text(part) == {"npu"} for part in rel.split("/")[:-1])


# top-level packages whose import makes a module CUDA code whatever it is named: FlashAttention / FlashInfer and the
# CUDA kernel libraries a flash-attn-named module wraps
_CUDA_ATTENTION_PACKAGES = frozenset({"flash_attn", "flash_attn_interface", "flash_attn_2_cuda", "flashattn_hopper",
                                      "flashinfer", "vllm_flash_attn", "xformers", "flash_mla", "cutlass", "cuda",
                                      "cupy", "apex", "transformer_engine", "deep_gemm", "sageattention"})


class AscendNamed:
    """Is a module whose path is named for a CUDA technology (`layers/flash_attn/`, `flash_attention.py`) Ascend code
    by what it does (issue 11, t11k, tuned on heldout8's MindIE-SD / DeepLinkExt rows)? Yes when the named part
    (the file, or the named folder and every module under it) imports torch_npu or holds a Triton-Ascend marker,
    or the named file imports at load time a module of the tree that does (a dispatcher:
    `if platform == TORCH_NPU: from ._flash_attention_npu import ...`), and no module of that part imports a CUDA
    attention / kernel package (`flash_attn`, `flashinfer`, `xformers` ...): a multi-backend folder with a CUDA
    member stays named for CUDA. The answers come from the files' import facts (project_imports), no file is read
    again."""

    def __init__(self, project: Any) -> None:
        self.project = project
        self.rels = [rel for _, rel in project.files if rel.endswith(".py")]
        self.names = project.module_names()
        self.rel_of = {name: rel for rel, name in self.names.items()}
        self._memo: dict[str, bool] = {}

    def _loads(self, rel: str) -> list:
        facts = self.project.facts(rel) or {}
        return [entry for entry in facts.get("load") or () if entry[2]]

    def _npu(self, rel: str) -> bool:
        if any(m == "torch_npu" or m.startswith("torch_npu.") for m, _names, _lt in self._loads(rel)):
            return True
        facts = self.project.triton(rel)
        return bool(facts and facts.get("ascend"))

    def _cuda(self, rel: str) -> bool:
        return any(m.split(".", 1)[0] in _CUDA_ATTENTION_PACKAGES for m, _names, _lt in self._loads(rel)
                   if not m.startswith("."))

    def _imported(self, rel: str) -> list[str]:
        me = self.names.get(rel, "")
        is_package = rel.endswith("__init__.py")
        out = []
        for module, names, _lt in self._loads(rel):
            level = len(module) - len(module.lstrip("."))
            resolved = absolute_module(module.lstrip("."), level, me, is_package) if me or not level else ""
            for cand in (resolved, *(f"{resolved}.{n}" for n in names)):
                hit = self.rel_of.get(cand)
                if hit is not None and hit != rel:
                    out.append(hit)
        return out

    def __call__(self, rel: str) -> bool:
        if rel not in self._memo:
            self._memo[rel] = False         # an import cycle answers no
            self._memo[rel] = self._answer(rel)
        return self._memo[rel]

    def plain_torch(self, rel: str, findings: Sequence[Finding]) -> bool:
        """A file named for a CUDA technology with no finding of its own that imports nothing but the standard
        library, torch (not torch.cuda) and host libraries (numpy, einops, math): a pure-PyTorch reference
        (`flash_attention_fallback.py`: `flash_attn_varlen_func_torch` in einops and matmuls) that runs on every
        device as written; its name makes nothing of it CUDA-specific (t11k, heldout8)."""
        if findings or not rel.endswith(".py"):
            return False
        facts = self.project.facts(rel)
        if not isinstance(facts, dict) or "load" not in facts:
            return False
        return all(not m.startswith(".") and (m.split(".", 1)[0] in _HOST_TOPS or
                                              m.split(".", 1)[0] == "torch" and "cuda" not in m.split("."))
                   for m, _names, _lt in facts["load"])

    def _answer(self, rel: str) -> bool:
        parts = rel.replace("\\", "/").split("/")
        stems = [*parts[:-1], parts[-1].rsplit(".", 1)[0]]
        named = next((i for i, part in enumerate(stems) if _TECH.search(part.lower())), None)
        if named is None:
            return False
        if named == len(parts) - 1:
            members = [rel]
        else:
            folder = "/".join(parts[:named + 1]) + "/"
            members = [r for r in self.rels if r.startswith(folder)][:_MAX_MEMBERS]
        if any(self._cuda(m) for m in members):
            return False
        if any(self._npu(m) for m in members):
            return True
        from auditor.static.backends import backends_in_text

        if backends_in_text(stems[named]) == {"npu"}:
            return True         # `ring_npu_flash_attn.py`: the project's NPU implementation, named beside the CUDA one
        if named != len(parts) - 1:
            return False
        return any(not self._cuda(m) and (self._npu(m) or self(m)) for m in self._imported(rel))


_MAX_MEMBERS = 200
_HOST_TOPS = (frozenset(sys.stdlib_module_names) | {"numpy", "einops", "typing_extensions", "__future__"}) - {"ctypes"}


def drop_ascend_flash_modules(results: list, project: Any) -> int:
    """NPU324 (`project-flash-attention-module`) names a first-party module by its path (`*.*flash_attn*.*`) and says
    it holds CUDA kernels or wraps them; where that module is Ascend code (AscendNamed: Ascend's own attention
    package named `flash_attn/`, built on torch_npu / AscendC ops), the claim is wrong: the finding is dropped
    (t11k, tuned on heldout8). Returns how many."""
    wanted = [r for r in results if any(f.code == "NPU324" for f in r.findings)]
    if not wanted:
        return 0
    ascend = AscendNamed(project)
    dropped = 0
    for r in wanted:
        me = ascend.names.get(r.path, "")
        is_package = r.path.endswith("__init__.py")
        kept = []
        for f in r.findings:
            if f.code == "NPU324" and f.symbol:
                target = _module_file(f.symbol, me, is_package, ascend.rel_of)
                if target is not None and ascend(target):
                    dropped += 1
                    continue
            kept.append(f)
        r.findings = kept
    return dropped


def _module_file(symbol: str, me: str, is_package: bool, rel_of: dict[str, str]) -> str | None:
    """The tree file of the longest module prefix of a dotted symbol (`.flash_attn.attention_forward.fn`, relative to
    the importer `me`), or None."""
    level = len(symbol) - len(symbol.lstrip("."))
    if level and not me:
        return None
    full = absolute_module(symbol.lstrip("."), level, me, is_package)
    parts = full.split(".")
    for k in range(len(parts), 0, -1):
        hit = rel_of.get(".".join(parts[:k]))
        if hit is not None:
            return hit
    return None


def _triton_ascend_text(rel: str, project: Any) -> bool:
    """A module named for Triton whose own text says Triton-Ascend (backends._ASCEND_TRITON: `device="npu"`, an
    unguarded torch_npu import, `multibuffer` / `enable_hivm_*` autotune keys: MindSpeed's `ops/triton/utils.py`
    and its `get_autotune_config`): its name does not make its importers CUDA-specific (t11f, heldout5's
    chunk_delta_h.py row). The fact is the file's own, read once in the worker (ProjectImports.triton)."""
    facts = project.triton(rel)
    return bool(facts and facts.get("ascend"))


def propagate(results: list, files: Sequence[tuple[Path, str]], engine_rules: dict[str, Any],
              project: Any = None) -> int:
    """Add the cross-file findings to `results` (FileResult list, after the tree-wide passes); the count added.
    `project` (project_imports.ProjectImports, built once per run) names the modules and counts the files read."""
    if project is None:
        from auditor.static.project_imports import ProjectImports

        project = ProjectImports(files, results)
    modules = project.module_names()
    by_path = project.paths
    flag_codes = frozenset(code for code, rule in engine_rules.items()
                           if "flagname" in (getattr(rule, "match", None) or {})
                           or (getattr(rule, "extra", None) or {}).get("implementation_choice"))
    targets = _targets(results, modules, by_path, flag_codes, project)
    for rule in engine_rules.values():
        for name, subs in ((getattr(rule, "extra", None) or {}).get("pure_submodules") or {}).items():
            if name in targets:
                targets[name].pure = frozenset(subs)
    from auditor.static.valueflow import defer_to_project

    defer_to_project(results, modules, targets)     # imports known by their spelling alone: the module's facts decide
    aliased = _alias_targets(results, modules)
    if not targets and not aliased:
        return 0
    added = 0
    present = set(modules.values())
    libraries = {t.rel: t.library for t in targets.values() if t.library}
    members = {t.rel: t.member for t in targets.values() if t.member}
    for r in results:
        summary = getattr(r, "summary", None)
        if not summary or not summary.get("imports") or r.error is not None:
            continue
        me = modules.get(r.path, r.path.rsplit("/", 1)[-1][:-3] if r.path.endswith(".py") else "")
        is_package = r.path.endswith("/__init__.py") or r.path == "__init__.py"
        wanted = _wanted(summary["imports"], me, is_package, targets, r.path, present) + \
            _alias_wanted(summary["imports"], me, is_package, aliased, r.path, present)
        if libraries:
            wanted = [w for w in wanted if not (w[4] in libraries and r.path.startswith(libraries[w[4]] + "/"))]
        if members:
            wanted = [w for w in wanted if w[4] not in members or r.path.startswith(members[w[4]])]
        if wanted:
            added += _apply(r, wanted, engine_rules, project)
    return added


def _wanted(imports: list, me: str, is_package: bool, targets: dict[str, _Target], rel: str,
            present: set[str] | frozenset[str] = frozenset()) -> list:
    """(import line, local name, kind, info, target rel, module-attribute map or None) for each import of a
    CUDA-specific name or module."""
    out: list[tuple[Any, ...]] = []
    package = me.rsplit(".", 1)[0] if "." in me else ""
    folder = _folder(rel)
    for line, level, module, names in imports:
        if level == -1:                    # `import a.b.c [as x]`
            for full, alias in names:
                t = _lookup(full, targets, package, module=True)
                if t is not None and t.rel != rel:
                    out.append((line, alias or full, "module", t.whole, t.rel, t.names))
            continue
        # a relative import in a file outside a package (its folder has no __init__.py): a namespace package
        # (DirectVoxGO's lib/, `from .dvgo import render_utils_cuda`), whose `.x` is only the sibling file x.py (t25c)
        sibling = level > 0 and "." not in me and not is_package
        if sibling and level > 1:
            continue
        resolved = module if sibling else absolute_module(module, level, me, is_package)
        t = _lookup(resolved, targets, package if level == 0 else None, module=True) if resolved else None
        if sibling and t is not None and _folder(t.rel) != folder:
            t = None
        for name, alias in names:
            sub = _lookup(f"{resolved}.{name}" if resolved else name, targets, package if level == 0 else None)
            if sub is not None and sibling and _folder(sub.rel) != folder:
                sub = None
            if sub is not None and sub.rel != rel:      # `from . import gemm_kernels`: a module
                out.append((line, alias, "module", sub.whole, sub.rel, sub.names))
                continue
            if t is None and level == 0 and resolved and resolved not in present:
                t = _in_folder(resolved, name, targets)
            if t is None or t.rel == rel:
                continue
            if name == "*":
                if t.compiled:      # `from .warp_rnnt import *`: every name the compiled extension defines (r2a)
                    out.append((line, "*", "name", t.whole, t.rel, None))
                for defined, offered in t.names.items():
                    # `import *` binds the module's `__all__`, else its public names: `from .train_loop import *`
                    # does not bind the `DataParallel` train_loop imports from torch (t11u)
                    if defined in t.exported if t.exported is not None else not defined.startswith("_"):
                        out.append((line, defined, "name", offered, t.rel, None))
                continue
            info = t.names.get(name) or t.reexported.get(name) or (t.whole if name not in t.reexports else None)
            if info is not None:
                out.append((line, alias, "name", info, t.origins.get(name, t.rel), None))
    return out


def _in_folder(module: str, name: str, targets: dict[str, _Target]) -> _Target | None:
    """`from ppq.core import CUDA` where the run holds no `ppq/core/__init__.py` (a partial audit: some files of a
    package): the one module of the run in a folder `.../ppq/core/` that offers `name` (t29a); None when none or
    several do."""
    folder = "/" + module.replace(".", "/")
    found = [t for t in targets.values() if name in t.names and ("/" + _folder(t.rel)).endswith(folder)]
    return found[0] if len(found) == 1 else None


def _folder(rel: str) -> str:
    return rel.rsplit("/", 1)[0] if "/" in rel else ""


def _lookup(name: str, targets: dict[str, _Target], package: str | None, module: bool = False) -> _Target | None:
    """The target a dotted name imports; `module`: the name is a module's (`import a.b`, `from a.b import x`), which
    may be a submodule of a compiled extension (`from _k2.version import with_cuda`, r2a), not a name imported from
    one."""
    if name in targets:
        return targets[name]
    parts = name.split(".")
    for i in range(len(parts) - 1, 0, -1) if module else ():
        hit = targets.get(".".join(parts[:i]))
        if hit is not None and hit.compiled:
            return None if parts[i] in hit.pure else hit
    if package is None:
        return None
    if package and f"{package}.{name}" in targets:   # a script's sibling import (`from cuda_kernel import X` beside it)
        return targets[f"{package}.{name}"]
    for i in range(1, len(parts) - 1):    # a folder inside the package was audited: `sat.ops.x.y` is `x.y` here
        hit = targets.get(".".join(parts[i:]))
        if hit is not None:
            return hit
    return None


def _apply(result, wanted: list, engine_rules: dict[str, Any], project: Any) -> int:
    """Add the importer's info findings at its uses of what `wanted` names. The uses found are kept in the importer's
    summary (`uses`: what it imports from CUDA-specific code, and the findings placed), so that the file is read
    again only when that changes (a changed module) or the file itself does (a new summary)."""
    import json

    if result.path not in project.paths:
        return 0
    summary = result.summary if isinstance(result.summary, dict) else {}
    key = json.dumps([result.path, wanted], sort_keys=True)     # (the path: the context reads it too)
    memo = summary.get("uses")
    if isinstance(memo, list) and len(memo) == 2 and memo[0] == key and isinstance(memo[1], list):
        try:
            new = [Finding.from_dict({**d, "path": result.path}) for d in memo[1]]
        except (TypeError, ValueError, KeyError):
            new = None      # a damaged memo: place the uses again
    else:
        new = None
    if new is None:
        source = project.source(result.path, last=True)     # (each importer once, in the run's last pass)
        if source is None:
            return 0
        new = _uses(result, wanted, source[0], source[1], engine_rules)
        summary["uses"] = [key, [f.to_dict() for f in new]]
        project.changed.add(result.path)
    from auditor.static.valueflow import OWN_CODES as FLOW_CODES

    from auditor.static.unresolved_extensions import CHECK_RULES

    have = {(f.line, f.category) for f in result.findings if f.code not in FLOW_CODES and f.name not in CHECK_RULES}
    new = [f for f in new if (f.line, f.category) not in have]
    if not new:
        return 0
    placed = {f.line for f in new}     # the definition's own facts replace a same-file value-flow finding or check
    result.findings = sorted([f for f in result.findings
                              if not ((f.code in FLOW_CODES or f.name in CHECK_RULES) and f.line in placed)] +
                             [replace(f, data={k: v for k, v in f.data.items()}) for f in new], key=Finding.sort_key)
    return len(new)



def _shadowed_loads(tree: ast.Module, wanted: set[str]) -> set[int]:
    """ids of the `ast.Name` nodes, among `wanted` names, that a function, class or comprehension scope around them
    binds: `def rotate(x): y = x.reshape(...)` reads its own `y`, not the `y` a `from .kernels import *` could bring.
    Python's rules: a def's decorators, defaults and bases are read in the enclosing scope; a class body's names
    are not seen by its methods; a comprehension's first iterable is read outside it."""
    out: set[int] = set()

    def visit(node: ast.AST, shadow: frozenset[str], class_names: dict[str, int]) -> None:
        if isinstance(node, ast.Name):
            if node.id in wanted and (node.id in shadow or node.lineno > class_names.get(node.id, node.lineno)):
                out.add(id(node))
            return
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            outer = [*node.args.defaults, *[d for d in node.args.kw_defaults if d is not None]]
            if not isinstance(node, ast.Lambda):
                outer += node.decorator_list
                outer += [x.annotation for x in [*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs]
                          if x.annotation is not None]
            for e in outer:
                visit(e, shadow, class_names)
            inner = shadow | (scope_locals(node) & wanted)
            body: list[ast.AST] = [node.body] if isinstance(node, ast.Lambda) else list(node.body)
            for b in body:
                visit(b, frozenset(inner), {})
            return
        if isinstance(node, ast.ClassDef):
            for e in [*node.decorator_list, *node.bases, *[k.value for k in node.keywords]]:
                visit(e, shadow, class_names)
            # a class body reads the enclosing name until its own first binding (`k = k + 1` reads the module's)
            mine = {name: 0 for name in scope_locals(node) & wanted}
            for stmt in reversed(node.body):
                for name in _bound_names(stmt):
                    if name in mine:
                        mine[name] = stmt.lineno
            for st in node.body:
                visit(st, shadow, mine)
            return
        if isinstance(node, (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
            visit(node.generators[0].iter, shadow, class_names)
            inner = frozenset(shadow | (scope_locals(node) & wanted))
            for i, g in enumerate(node.generators):
                for n in ([] if i == 0 else [g.iter]) + [g.target, *g.ifs]:
                    visit(n, inner, {})
            for n in ([node.key, node.value] if isinstance(node, ast.DictComp) else [node.elt]):
                visit(n, inner, {})
            return
        for child in ast.iter_child_nodes(node):
            visit(child, shadow, class_names)

    if wanted:
        try:
            visit(tree, frozenset(), {})
        except RecursionError:      # a machine-made expression thousands deep: no scope facts, every use counts
            return set()
    return out


_MODULE_METADATA = frozenset({"__file__", "__version__", "__name__", "__path__", "__doc__", "__spec__"})


def _uses(result, wanted: list, text: str, tree: ast.Module, engine_rules: dict[str, Any]) -> list[Finding]:
    """The info findings at the importer's uses (before the merge with its own findings), from its text and tree."""
    from auditor.static.backends import apply_context, build_backend_context
    from auditor.suppress import Suppressions

    lines = text.splitlines(keepends=True)
    plain: dict[str, tuple] = {}
    modules: dict[str, tuple] = {}
    aliases: dict[str, tuple] = {}
    for line, local, kind, info, rel, names in wanted:
        if kind == "alias":
            aliases[local] = (info, rel)
        elif kind == "module":
            modules[local] = (line, info, rel, names or {})
        elif info is not None:
            plain[local] = (line, info, rel)
    hits: dict[int, tuple[str, tuple, str, int]] = {}      # line -> (name, info, rel, col)

    def note(line: int, col: int, name: str, info: tuple, rel: str) -> None:
        hits.setdefault(line, (name, info, rel, col))

    for local, (line, info, rel) in plain.items():
        note(line, 1, local, info, rel)
    for local, (line, info, rel, names) in modules.items():
        if info is not None:
            note(line, 1, local, info, rel)
    import_lines = {w[0] for w in wanted}
    shadowed = _shadowed_loads(tree, set(plain) | set(modules) | set(aliases))    # a scope's own name, not the import
    used_parts: set[str] = set()
    # `"Using precompiled x_cuda from {}".format(x_cuda.__file__)`: where the module lives (or its version) is read,
    # nothing of it runs (t14t)
    shadowed |= {id(n.value) for n in module_nodes(tree) if isinstance(n, ast.Attribute) and n.attr in _MODULE_METADATA}
    named_only = _named_only(tree)
    shadowed |= annotation_names(tree)
    for node in module_nodes(tree):
        if isinstance(node, ast.Name) and node.id in plain and node.lineno not in import_lines \
                and id(node) not in shadowed:
            _, info, rel = plain[node.id]
            if not (id(node) in named_only and info[0] == "attention"):
                note(node.lineno, node.col_offset + 1, node.id, info, rel)
        elif isinstance(node, ast.Attribute) and node.lineno not in import_lines:
            chain = ast_dotted(node)
            if chain is None:
                continue
            base: ast.expr = node
            while isinstance(base, ast.Attribute):
                base = base.value
            if id(base) in shadowed:
                continue
            for alias, (_, info, rel, names) in modules.items():
                if chain == alias or not chain.startswith(alias + "."):
                    continue
                attr = chain[len(alias) + 1:].split(".", 1)[0]
                if attr in _MODULE_METADATA:
                    continue        # `x_cuda.__file__`: where the module lives, nothing of it runs (t14t)
                got = names.get(attr) or info
                if got is not None and not (id(base) in named_only and got[0] == "attention"):
                    note(node.lineno, node.col_offset + 1, f"{alias}.{attr}", got, rel)
                    used_parts.add(alias)
    # a module only some of whose names are CUDA-specific: its import line counts when the file uses one of them or
    # the module itself as a value (`from tzrec.utils import dist_util` for `dist_util.get_dist_object_pg()`, a gloo
    # group, uses nothing NCCL; heldout31, pd38), or when one of them is a kernel: such a module commonly builds or
    # loads its extension at import time (DirectVoxGO's `render_utils_cuda = load(...)` at the top of grid.py)
    bases = {id(n.value) for n in module_nodes(tree) if isinstance(n, ast.Attribute)}
    whole_reads = {n.id for n in module_nodes(tree) if isinstance(n, ast.Name) and id(n) not in bases and
                   id(n) not in shadowed and n.lineno not in import_lines}
    for local, (line, info, rel, names) in modules.items():
        if info is None and names and (local in used_parts or local in whole_reads or
                                       any(got[0] == "kernel" for got in names.values())):
            note(line, 1, local, next(iter(names.values())), rel)
    new = _alias_calls(result.path, tree, lines, aliases, shadowed, import_lines, engine_rules)
    if not hits and not new:
        return []
    for line, (name, info, rel, col) in sorted(hits.items()):
        category, def_line, code, symbol = info
        rule_code, rule_name = CODES[category]
        rule = engine_rules.get(rule_code)
        what = f"holds {symbol} ({code})" if code else f"is named for {symbol}"
        where = f"{rel}:{def_line}"
        message = f"uses {name}, which {what} at {where}; port them together"
        text_line = lines[line - 1] if 0 < line <= len(lines) else ""
        new.append(Finding(
            code=rule_code, name=rule_name, category=category, severity="info",
            effort=getattr(rule, "effort", "medium") if rule is not None else "medium",
            path=result.path, line=line, col=col, end_line=line, end_col=len(text_line.rstrip("\r\n")) + 1,
            message=message, substitution=getattr(rule, "substitution", None) if rule is not None else None,
            fix="none", source="static", symbol=name, data={"defined_at": where}))
    if not new:
        return []
    ctx = build_backend_context(tree, lines, sorted({f.line for f in new}))
    new = [f for f in apply_context(new, ctx, result.path) if f.data.get("context") in (None, *_STILL_CUDA)]
    suppressions = Suppressions.of(lines, text)
    return [f for f in new if not suppressions.covers(f.line, f.end_line, f.code)]


def annotation_names(tree: ast.Module) -> set[int]:
    """The names inside annotations (`def _pipeline_parallel_pre_init(cfg: DistributedTrainingConfig):`, a fairseq
    copy's helper; `x: Cfg = ...`; `-> Cfg`): an annotation names a type and runs none of its code, whatever the
    definition's category (tq45a, heldout51)."""
    notes: list[ast.expr] = []
    for node in module_nodes(tree):
        if isinstance(node, ast.arg) and node.annotation is not None:
            notes.append(node.annotation)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.returns is not None:
            notes.append(node.returns)
        elif isinstance(node, ast.AnnAssign):
            notes.append(node.annotation)
    return {id(n) for note in notes for n in ast.walk(note) if isinstance(n, (ast.Name, ast.Attribute))}


def _named_only(tree: ast.Module) -> set[int]:
    """The names a file reads without running what they hold (tq44b): the class operand of `isinstance` /
    `issubclass` (SAM2's `isinstance(layer.cross_attn_image, RoPEAttention)` picks a keyword), and the arguments of a
    docstring decorator (transformers' `@replace_return_docstrings(..., config_class=SiglipTextConfig)` writes a
    docstring). Only an attention class's CUDA code is its forward's, which a type test runs none of; a class built on
    a package (PEFT's `Linear8bitLt` over bitsandbytes, asserted in its GPU tests) may not exist without it, so its
    type tests keep their pointer (heldout47's labels)."""
    out: set[int] = set()
    for node in module_nodes(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and \
                node.func.id in ("isinstance", "issubclass") and len(node.args) == 2:
            out |= {id(n) for n in ast.walk(node.args[1]) if isinstance(n, ast.Name)}
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            for deco in node.decorator_list:
                name = ast_dotted(deco.func) if isinstance(deco, ast.Call) else None
                if name and "docstring" in name.rsplit(".", 1)[-1].lower():
                    out |= {id(n) for n in ast.walk(deco) if isinstance(n, ast.Name)}
    return out


def _alias_calls(path: str, tree: ast.Module, lines: list[str], aliases: dict[str, tuple], shadowed: set[int],
                 import_lines: set[int], engine_rules: dict[str, Any]) -> list[Finding]:
    """Each call of an imported alias of a CUDA API (`with autocast(enabled=mixed_prec):`) gets the findings of the
    alias's own line (api_aliases), with no fix: the call is the API's, the fix belongs to the definition."""
    if not aliases:
        return []
    out = []
    for node in module_nodes(tree):
        if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name) or node.func.id not in aliases or \
                id(node.func) in shadowed or node.lineno in import_lines:
            continue
        found, rel = aliases[node.func.id]
        text_line = lines[node.lineno - 1] if 0 < node.lineno <= len(lines) else ""
        for code, name, category, severity, message, symbol in found:
            rule = engine_rules.get(code)
            out.append(Finding(
                code=code, name=name, category=category,
                severity=severity or getattr(rule, "severity", None) or "warning",
                effort=getattr(rule, "effort", "low") if rule is not None else "low",
                path=path, line=node.lineno, col=node.col_offset + 1, end_line=node.lineno,
                end_col=len(text_line.rstrip("\r\n")) + 1,
                message=f"{node.func.id} is {symbol}, by its alias in {rel}: {message}",
                substitution=getattr(rule, "substitution", None) if rule is not None else None,
                fix="none", source="static", symbol=str(symbol), data={"defined_at": rel}))
    return out
