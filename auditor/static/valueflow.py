"""Value flow from CUDA-bound names, inside one file (t14j, issue 14).

A port changes a binding together with every line that uses the name it binds. The per-file rules see the binding
(`import marlin`, `from flash_attn import flash_attn_func`, `ops = FusedAdamBuilder().load()`) but not always
the later lines (`marlin.mul(...)`, `ops.multi_tensor_adam`); and when the binding is an import of the project's
own CUDA-specific module, the per-file pass knows it only by its name (`from ..nccl import allGather as
ncclAllGather`, `from .cuda_kernel import CUDA_FOLDER`, `from yunchang.kernels import select_flash_attn_impl`,
`from nvitop.api import libnvml`), since the module itself may not be audited (a sampled file, a partial tree).

Seeds (names that stand for CUDA-specific code: modules, functions, classes, extension handles; not data values,
which the labelling policy leaves to the line that derives them):

1. an assignment whose value holds a finding of this file (not info, not in a multi-backend context) and loads
   code: a loader call (`load(name=..., sources=[...])`, `importlib.import_module(...)`, `ctypes.CDLL(...)`) or a
   reference (`self.attn_fn = xops.memory_efficient_attention`, `f = ext.op`): the rules follow a package's names
   through its imports themselves (and leave `tl.load` in a kernel body alone), not through a name kept elsewhere;
2. an op-builder load named for CUDA (`transformer_cuda_module = TransformerBuilder().load()`);
3. an import of the project's own module (relative, or of the file's own top-level package) whose module path or
   imported name is spelled for a CUDA technology (`nccl`, `flash_attn`, `triton`, `cutlass`, `cuda_kernel`,
   `apex`, `nvml`, `libcudart`): the import line itself gets a finding too.

Uses: every later line of the binding's scope (the module, or the function that binds it) that reads the name
(a call, an attribute, an argument); a use that binds another name by reference (`fn = ext.forward`) seeds it in
turn (two steps at most). One finding per line, info, none on a line that already holds a finding, none inside an
NPU / multi-backend branch (the engine's backend context): the binding carries the severity of the construct; its
uses move with it (the message names the binding line).
"""
from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from enum import Enum
from typing import Any, Sequence

from auditor.astnodes import line_span, node_lines
from auditor.findings import Finding
from auditor.static.astutil import name_or_self_attr as _target_name   # `x` / `self.x`: one reader (flags, gates)
from auditor.static.astutil import ast_dotted, env_read, module_nodes, self_attr, walk_list
from auditor.static.unresolved_extensions import CHECK_RULES
# (is_bf16_supported is not one: a module imported when bf16 is supported is not thereby CUDA-only)
from auditor.static.gates import CUDA_PRESENCE_PROBES
from auditor.static.module_paths import absolute_module

# kernel / attention / apex share the cross-file pass's codes (rules/crossfile.yaml: the same meaning, a use of the
# project's CUDA-specific code; the 2xx codes this work was offered are precision's by the code policy)
CODES = {"kernel": ("NPU320", "project-cuda-kernel-use"), "attention": ("NPU321", "project-attention-use"),
         "apex": ("NPU322", "project-apex-use"), "distributed": ("NPU141", "cuda-bound-nccl-use"),
         "third_party": ("NPU460", "cuda-bound-package-use"), "device": ("NPU070", "cuda-bound-device-use")}
OWN_CODES = frozenset(code for code, _ in CODES.values())
# the data key of a use inside a namespace class that forwards to the file's CUDA extension (`_wrapper_lines`)
WRAPPER = "wrapper"
# categories whose findings make a binding CUDA-specific code (device / precision findings are values: a device
# string, a dtype; the policy leaves their derived uses unlabelled)
_SEED_CATEGORIES = frozenset({"kernel", "attention", "distributed", "apex", "third_party"})
_STILL_CUDA = frozenset({"import-guard", "cuda-available-branch", "test-mark"})
# callee names (last attribute) that load code: an extension builder, a JIT build, a module import, a shared library
_LOADERS = frozenset({"load", "jit_load", "load_inline", "import_module", "CDLL", "LoadLibrary", "cdll",
                      "load_library", "load_extension", "get_extension", "import_extension", "builder"})
# a technology in an identifier, snake_case after camelCase is split (`ncclAllGather` -> nccl_all_gather)
_SPELLED = (
    ("distributed", re.compile(r"(?:^|_)nccl(?:$|_)")),
    ("attention", re.compile(r"(?:^|_)(?:flash_?attn|flash_?attention|flash_?mla|flashinfer)(?:$|_|\d)")),
    ("apex", re.compile(r"(?:^|_)apex(?:$|_)")),
    ("third_party", re.compile(r"(?:^|_)(?:lib|py)?nvml(?:$|_)")),
    ("device", re.compile(r"(?:^|_)(?:libcuda|libcudart|cudart)(?:$|_)")),
    ("kernel", re.compile(r"(?:^|_)(?:triton|cutlass|cuda_kernels?|cuda_ops|cuda_ext(?:ension)?s?|cuda_lib)(?:$|_)"
                          r"|^_cuda_")),
)
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
# an NPU / Ascend word in a binding's symbol or an imported module's path (`mx_driving._C.npu_scatter_mean`,
# `torch.ops.custom.npu_sparse_attn`, `from .nccl_npu import ...`): the bound code is the NPU's, not CUDA's
_VALUE_NAME = re.compile(r"(?i)dtype|(?:^|_)type$")
_NPU_WORD = re.compile(r"(?i)(?:^|[._])(?:npu|ascend|hccl|torch_npu|cann)(?:$|[._])|(?:^|[._])npu_")
_SKIP_TOP = frozenset({"torch", "__future__", "typing", "os", "sys"})
MAX_DEPTH = 2


def spelled(name: str, own: str = "") -> str | None:
    """The category a CUDA technology spelled in `name` stands for (`ncclAllGather` -> distributed), or None. A
    project named for the technology (flashinfer's own `flashinfer_api` logging decorator) lends its names nothing by
    its own name: `own` (the top-level package) is taken out first."""
    snake = _CAMEL.sub("_", name).lower()
    if own and own.lower() in snake and spelled(own) is not None:
        snake = snake.replace(own.lower(), "_")
    for category, pattern in _SPELLED:
        if pattern.search(snake):
            return category
    return None


def _npu_named(text: str) -> bool:
    """An NPU / Ascend word in a dotted name, camelCase split (`TritonAscendBackend`, `triton_ascend`)."""
    return _NPU_WORD.search(_CAMEL.sub("_", text).lower()) is not None


def _seed_worthy(f: Finding) -> bool:
    return f.category in _SEED_CATEGORIES and f.severity != "info" and f.code not in OWN_CODES and \
        f.data.get("context") in (None, *_STILL_CUDA)


class _Why(Enum):
    """Why the code a name is bound to is CUDA-specific (the words the findings' messages give)."""
    NAMED = "named for it"                          # a project module or name spelled for CUDA
    GUARDED = "imported only under a CUDA check"    # `if torch.cuda.is_available(): from . import gpu`
    BUILT = "a CUDA extension build"                # `XBuilder().load()` named for CUDA
    FLAGGED = "flagged"                             # a finding of the rules on the bound value (its code is said)


@dataclass(frozen=True)
class _Bound:
    """The code a seeded name is bound to, as written (`.ops.gpu`, `XBuilder().load()`, `torch.cuda.Stream`), and
    why it is CUDA-specific (`rule_code`: the flagging finding's code, for FLAGGED)."""
    code: str
    why: _Why
    rule_code: str = ""

    def __str__(self) -> str:
        return f"{self.code} ({self.rule_code or self.why.value})"


class _Binding:
    __slots__ = ("name", "line", "category", "what", "scope", "depth", "module", "attrs", "call")

    def __init__(self, name: str, line: int, category: str, what: _Bound, scope: ast.AST, depth: int = 0,
                 module: list | None = None, attrs: frozenset[str] | None = None, call: bool = False) -> None:
        self.name, self.line, self.category, self.what, self.scope, self.depth = name, line, category, what, scope, depth
        self.module = module    # [level, module, name] of a project import known only by its spelling
        self.attrs = attrs      # an instance of a holder class: only reads of these attributes reach the extension
        self.call = call        # a function that returns the extension (`get_ext()`): its result is the bound code


def _scopes(tree: ast.Module):
    """(statement, its scope node) for every statement: the module, or the innermost function or class."""
    stack: list[tuple[ast.AST, ast.AST]] = [(tree, tree)]
    while stack:
        node, scope = stack.pop()
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.stmt):
                yield child, scope
            if isinstance(child, (ast.expr, ast.expr_context, ast.operator, ast.arguments)):
                continue
            inner = child if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) else scope
            stack.append((child, inner))


def _own_package(rel: str) -> str:
    parts = rel.replace("\\", "/").split("/")
    if parts and parts[0] == "src":
        parts = parts[1:]
    return parts[0] if len(parts) > 1 else ""


def _loader_call(value: ast.expr) -> bool:
    for node in walk_list(value):
        if isinstance(node, ast.Call):
            f = node.func
            name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
            if name in _LOADERS:
                return True
    return False


def _reference(v: ast.expr) -> bool:
    """A value that is the bound object itself: a name, an attribute, or either of two (`a.fw_fp16 if fp16 else
    a.fw_fp32`)."""
    if isinstance(v, ast.IfExp):
        return _reference(v.body) and _reference(v.orelse)
    base = v
    while isinstance(base, ast.Attribute):
        base = base.value
    # a field of a call's result (`pynvml.nvmlDeviceGetUtilizationRates(h).gpu`) is data, not the bound code
    return isinstance(v, (ast.Attribute, ast.Name)) and not isinstance(base, ast.Call)


_CUDA_WORD = re.compile(r"(?:^|_)cuda(?:$|_)")


def _builder_load(v: ast.expr, targets: list[str]) -> str | None:
    """`XBuilder(...).load()` / `.jit_load()` (a DeepSpeed-style op builder of the project) whose builder or target
    is named for CUDA (`transformer_cuda_module = TransformerBuilder().load()`): the builder's spelling, or None.
    DeepSpeed's own builders are not meant (its accelerator builds them for Ascend: NPU421)."""
    if not (isinstance(v, ast.Call) and isinstance(v.func, ast.Attribute) and v.func.attr in ("load", "jit_load")
            and isinstance(v.func.value, ast.Call)):
        return None
    inner = v.func.value.func
    builder = inner.attr if isinstance(inner, ast.Attribute) else inner.id if isinstance(inner, ast.Name) else ""
    if not builder.endswith("Builder"):
        return None
    words = [_CAMEL.sub("_", n.rsplit(".", 1)[-1]).lower() for n in (builder, *targets)]
    if not any(_CUDA_WORD.search(w) for w in words):
        return None
    return f"{builder}().{v.func.attr}()"


# an environment variable that says where a library lives (`NCCL_HOME`, `NCCL_INCLUDE_DIR`, `NCCL_LIB`)
_LOCATION_VAR = re.compile(r"_(?:HOME|ROOT|DIR|PATH|INCLUDE|INC|LIB|LIBRARY)(?:_DIRS?|_PATH)?S?$")


def _nccl_location(v: ast.expr, hits: list[Finding]) -> bool:
    """`NCCL_HOME = os.environ.get("NCCL_HOME", "/usr/local/nccl")`: the name holds where NCCL is installed, and the
    build lines that probe or join it (`os.path.isdir(NCCL_HOME)`, `include_dirs.append(os.path.join(NCCL_HOME,
    "include"))`) build against NCCL (torch_cgx's setup.py, test28). Only a read of the variable itself, not a value
    derived from it (`int(os.environ.get("NCCL_DEBUG_LEVEL", "0"))`), and only NCCL's: CUDA_HOME's uses are the
    extension build's, reported where it is built."""
    return env_read(v) and any(f.category == "distributed" and f.symbol and "NCCL" in f.symbol.upper()
                               and _LOCATION_VAR.search(f.symbol) for f in hits)


def _cuda_only_imports(tree: ast.Module) -> set[int]:
    """`from ...` statements in the body of `if torch.cuda.is_available():` / `if torch.cuda.device_count() > 0:` with
    no `else`: a project module loaded only where CUDA is, its compiled CUDA extension (PyTorch-Encoding's `from
    encoding import gpu`, then `gpu.aggregate_forward(...)`; cogdl's `from cogdl.operators.spmm import csrspmm`,
    test28). A module with a CPU twin in the `else` (`from . import cpu_ops`) is a dispatch, not bound here."""
    out: set[int] = set()
    for node in module_nodes(tree):
        if not isinstance(node, ast.If) or node.orelse:
            continue
        probes = {ast.unparse(n.func) for n in walk_list(node.test) if isinstance(n, ast.Call)}
        if probes & CUDA_PRESENCE_PROBES:
            out.update(id(s) for s in node.body if isinstance(s, ast.ImportFrom))
    return out


def _seeds(tree: ast.Module, findings: Sequence[Finding], rel: str) -> tuple[list[_Binding], dict[int, tuple]]:
    """The seeded bindings, and the spelled-import lines to report themselves (line -> (category, name, module))."""
    by_line: dict[int, list[Finding]] = {}
    for f in findings:
        if _seed_worthy(f) and f.name not in CHECK_RULES:      # (a check hides no binding the file itself shows)
            by_line.setdefault(f.line, []).append(f)
    own = _own_package(rel)
    every = {f.line for f in findings}
    out: list[_Binding] = []
    spelled_lines: dict[int, tuple] = {}

    def flagged(stmt: ast.stmt) -> list[Finding]:
        got: list[Finding] = []
        for line in node_lines(stmt):
            got += by_line.get(line, ())
        return got

    cuda_only = _cuda_only_imports(tree)
    for stmt, scope in _scopes(tree):
        if isinstance(stmt, ast.Import):
            hits = flagged(stmt)
            for a in stmt.names:
                local = a.asname or a.name.split(".", 1)[0]
                hit = next((f for f in hits if f.symbol and (a.name == f.symbol or a.name.startswith(f.symbol + ".")
                                                             or f.symbol.startswith(a.name + "."))), None)
                if hit is not None:
                    continue        # a package the rules know: they report the uses that matter (not `tl.load`)
                top = a.name.split(".", 1)[0]
                if own and top == own and a.asname and not _npu_named(a.name):   # `import lmcache.cuda_ops as native`
                    cat = next((c for c in (spelled(p, own) for p in a.name.split(".")[1:]) if c), None)
                    if cat is not None:
                        mod = [0, a.name, ""]
                        bound = _Bound(a.name, _Why.NAMED)
                        out.append(_Binding(local, stmt.lineno, cat, bound, scope, 0, mod))
                        spelled_lines.setdefault(getattr(a, "lineno", stmt.lineno), (cat, local, bound, mod))
        elif isinstance(stmt, ast.ImportFrom):
            module = stmt.module or ""
            if stmt.level == 0 and module.split(".", 1)[0] in _SKIP_TOP:
                continue
            hits = flagged(stmt)
            first_party = stmt.level > 0 or (bool(own) and module.split(".", 1)[0] == own)
            # (a test module named for the technology, `test_nccl_integration`, lends its helpers no category)
            module_cat = next((c for c in (spelled(p, own) for p in module.split(".")[1 if stmt.level == 0 else 0:])
                               if c), None) if first_party and module and not re.search(
                                   r"(?:^|\.)tests?(?:_|\.|$)", module) else None
            for a in stmt.names:
                if a.name == "*":
                    continue
                local = a.asname or a.name
                full = f"{module}.{a.name}" if module else a.name
                hit = next((f for f in hits if f.symbol and (f.symbol in (module, full) or full.startswith(f.symbol + ".")
                                                             or f.symbol.rsplit(".", 1)[-1] == a.name)), None)
                if hit is None and len(stmt.names) == 1 and hits:
                    hit = hits[0]
                if hit is not None:
                    continue        # (as above: the rules follow the package's names themselves)
                if not first_party or _npu_named(f"{module}.{a.name}.{local}"):
                    continue
                cat = module_cat or spelled(a.name, own) or (spelled(local, own) if a.asname else None)
                why = _Why.NAMED
                if cat is None and id(stmt) in cuda_only:
                    cat, why = "kernel", _Why.GUARDED
                if cat is not None:
                    bound = _Bound("." * stmt.level + full, why)
                    mod = [stmt.level, module, a.name]
                    out.append(_Binding(local, stmt.lineno, cat, bound, scope, 0, mod))
                    # (the alias's own line in a parenthesised import: `from nvitop.api import (` ... `libnvml,`)
                    spelled_lines.setdefault(getattr(a, "lineno", stmt.lineno), (cat, local, bound, mod))
        elif isinstance(stmt, (ast.Assign, ast.AnnAssign)) and stmt.value is not None:
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            names = [n for n in map(_target_name, targets) if n]
            if not names:
                continue
            v = stmt.value
            hits = [f for f in flagged(stmt)
                    if v.lineno <= f.line <= (v.end_lineno or v.lineno) and
                    (f.line > v.lineno or f.col - 1 >= v.col_offset)]
            if not hits:
                if any(line in every for line in node_lines(stmt)):
                    continue        # a builder the rules know (DeepSpeed's: NPU421, built for Ascend)
                built = _builder_load(v, names)
                if built is not None:       # `fused_ema_adam_cuda = FusedEmaAdamBuilder().jit_load()`
                    bound = _Bound(built, _Why.BUILT)
                    for name in names:
                        out.append(_Binding(name, stmt.lineno, "kernel", bound, scope))
                    spelled_lines.setdefault(stmt.lineno, ("kernel", names[0], bound, None))
                continue
            if not (isinstance(v, (ast.Attribute, ast.Name)) and _reference(v) or _loader_call(v)
                    or _nccl_location(v, hits)):    # (a choice `a if musa else b`: a dispatch)
                continue
            if _npu_named(hits[0].symbol or "") or any(_VALUE_NAME.search(n) for n in names):
                continue        # NPU code; a dtype or type kept in a name (`calc_dtype = cutlass.Float32`) is a value
            for name in names:
                out.append(_Binding(name, stmt.lineno, hits[0].category,
                                    _Bound(str(hits[0].symbol), _Why.FLAGGED, hits[0].code), scope))
    return out, spelled_lines


def _rebound_elsewhere(scope: ast.AST, name: str, line: int) -> bool:
    """`name` is bound again in its scope by something that is not a seed (a fallback `marlin = None` beside the
    import is fine: the seed's uses are guarded by it; a plain reassignment `ops = cpu_ops` is a path without)."""
    for node in walk_list(scope):
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.lineno != line:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(_target_name(t) == name for t in targets) and node.value is not None \
                    and not (isinstance(node.value, ast.Constant) and node.value.value is None):
                return True
    return False


def _reads(scope: ast.AST, name: str, params_shadow: bool = True):
    """(line, node, parent statement) of each read of `name` (or `self.attr`) in `scope`, skipping nested functions
    that bind the name themselves (a parameter or an assignment of that name)."""
    is_self = name.startswith("self.")
    attr = name[5:] if is_self else ""
    stack: list[tuple[ast.AST, ast.stmt | None]] = [(scope, None)]
    while stack:
        node, stmt = stack.pop()
        for child in ast.iter_child_nodes(node):
            here = child if isinstance(child, ast.stmt) else stmt
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)) and child is not scope \
                    and not is_self:
                args = child.args
                bound = {a.arg for a in [*args.posonlyargs, *args.args, *args.kwonlyargs]}
                bound |= {a.arg for a in (args.vararg, args.kwarg) if a is not None}
                if name in bound:
                    continue
            if is_self:
                if isinstance(child, ast.Attribute) and self_attr(child) == attr and isinstance(child.ctx, ast.Load):
                    yield child.lineno, child, here
            elif isinstance(child, ast.Name) and child.id == name and isinstance(child.ctx, ast.Load):
                yield child.lineno, child, here
            stack.append((child, here))


# `forward = embedding.transe_forward_cpu` beside `..._cuda` (an extension built from .cpp and .cu sources): the
# host variant of a dual-backend op runs on the CPU of an Ascend machine as it is (t14q, tuned on test13)
_HOST_VARIANT = re.compile(r"(?:^|_)(?:cpu|host)(?:$|_)", re.IGNORECASE)


def _host_variant(stmt: ast.stmt | None, node: ast.AST) -> bool:
    """The read of a bound extension is `ext.<name>` where the name spells the CPU / host variant of an op."""
    if stmt is None:
        return False
    for sub in walk_list(stmt):
        if isinstance(sub, ast.Attribute) and sub.value is node:
            return bool(_HOST_VARIANT.search(sub.attr))
    return False


_MODULE_METADATA = frozenset({"__file__", "__version__", "__name__", "__path__", "__doc__", "__spec__"})


def _metadata_read(stmt: ast.AST | None, node: ast.AST) -> bool:
    """`warnings.warn("Using precompiled x_cuda from {}".format(x_cuda.__file__))`: where the module lives (or its
    version) is read, nothing of it runs (t14t)."""
    if stmt is None:
        return False
    return any(isinstance(sub, ast.Attribute) and sub.value is node and sub.attr in _MODULE_METADATA
               for sub in walk_list(stmt))


_KERNEL_DECORATORS = frozenset({"jit", "autotune", "heuristics", "kernel", "prim_func", "njit", "jit_kernel"})


def _kernel_bodies(tree: ast.Module) -> list[tuple[int, int]]:
    """Line spans of kernel functions (`@triton.jit`, `@triton.autotune(...)`, `@T.prim_func`, `@cute.kernel`): the
    lines of a kernel body are the kernel's own (reported at the kernel, its launches and its intrinsics by the
    rules), not uses to list one by one."""
    out = []
    for node in module_nodes(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for d in node.decorator_list:
                target = d.func if isinstance(d, ast.Call) else d
                name = target.attr if isinstance(target, ast.Attribute) else target.id \
                    if isinstance(target, ast.Name) else ""
                if name in _KERNEL_DECORATORS or "triton" in name.lower():
                    out.append(line_span(node))
                    break
    return out


def _class_of(tree: ast.Module, line: int) -> ast.ClassDef | None:
    best = None
    for node in module_nodes(tree):
        if isinstance(node, ast.ClassDef) and node.lineno <= line <= (node.end_lineno or node.lineno):
            if best is None or node.lineno > best.lineno:
                best = node
    return best


# keywords of torch.utils.cpp_extension's builders that hand it CUDA code or turn nvcc on
_CUDA_BUILD_KEYWORDS = frozenset({"cuda_sources", "extra_cuda_cflags", "with_cuda"})


def _cuda_build(value: ast.expr) -> bool:
    """A loader call that builds CUDA code: a `.cu` / `.cuh` source literal (also inside `os.path.join(...)`), or
    `with_cuda=True` / `cuda_sources=` / `extra_cuda_cflags=`. A C++-only build (`sources=["op.cpp"]`) runs on
    an Ascend machine's host as it is."""
    for node in walk_list(value):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.endswith((".cu", ".cuh")):
            return True
        if isinstance(node, ast.keyword) and node.arg in _CUDA_BUILD_KEYWORDS and not (
                isinstance(node.value, ast.Constant) and node.value.value in (False, None)):
            return True
    return False


def _returns(fn: ast.AST, test) -> ast.Return | None:
    """The first `return <value>` of `fn` (not of a nested def) whose value passes `test`."""
    stack = list(ast.iter_child_nodes(fn))
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        if isinstance(node, ast.Return) and node.value is not None and test(node.value):
            return node
        stack.extend(ast.iter_child_nodes(node))
    return None


def _holder_seeds(tree: ast.Module, seeds: list[_Binding], findings: Sequence[Finding]) -> list[_Binding]:
    """Names that hand out a CUDA extension a seed binds (t29a): a holder class's accessor (`@property def
    CUDA_EXTENSION(self): return self.__CUDA_EXTENTION__`, PPQ's ffi.py) and the instances of the class
    (`CUDA_COMPLIER = ComplieHelper()`, whose `CUDA_COMPLIER.CUDA_EXTENSION.op(...)` calls the kernel); a caching
    helper that returns it (`def get_ext(): global _ext; ...; return _ext`) or builds it in its return
    (`@lru_cache def load_module(): return load(name=..., sources=[...cu])`), whose calls are the extension. Only a
    build of CUDA code (`_cuda_build`): a holder of a C++-only extension hands out host code."""
    out: list[_Binding] = []
    values = {stmt.lineno: stmt.value for stmt, _ in _scopes(tree)
              if isinstance(stmt, (ast.Assign, ast.AnnAssign)) and stmt.value is not None}
    defs = [s for s in tree.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))]
    for b in seeds:
        value = values.get(b.line)
        if b.category != "kernel" or b.what.why is not _Why.FLAGGED or value is None or not _cuda_build(value):
            continue
        if b.name.startswith("self."):
            cls = _class_of(tree, b.line)
            if cls is None:
                continue
            attr = b.name[5:]
            accessors = [m for m in cls.body if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef)) and _returns(
                m, lambda v: isinstance(v, ast.Attribute) and v.attr == attr and ast_dotted(v) == b.name)]
            out += [_Binding(f"self.{m.name}", m.lineno, "kernel", b.what, cls) for m in accessors]
            attrs = frozenset({attr, *(m.name for m in accessors)})
            for stmt, scope in _scopes(tree):
                if isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Call) and \
                        isinstance(stmt.value.func, ast.Name) and stmt.value.func.id == cls.name:
                    out += [_Binding(name, stmt.lineno, "kernel", b.what, scope, attrs=attrs)
                            for name in map(_target_name, stmt.targets) if name and "." not in name]
            continue
        for fn in defs:
            module_wide = b.scope is tree or any(isinstance(n, ast.Global) and b.name in n.names for n in walk_list(fn))
            if module_wide and _returns(fn, lambda v: isinstance(v, ast.Name) and v.id == b.name):
                out.append(_Binding(fn.name, fn.lineno, "kernel", b.what, tree, call=True))
    kernel = [f for f in findings if _seed_worthy(f) and f.category == "kernel"]
    for fn in defs:
        ret = _returns(fn, lambda v: _loader_call(v) and _cuda_build(v))
        hit = ret and next((f for f in kernel if ret.lineno <= f.line <= (ret.end_lineno or ret.lineno)), None)
        if hit:
            out.append(_Binding(fn.name, fn.lineno, "kernel", _Bound(str(hit.symbol), _Why.FLAGGED, hit.code), tree,
                                call=True))
    return out


def _wrapper_lines(tree: ast.Module, used: set[int]) -> set[int]:
    """The lines of `used` (uses of a CUDA extension) inside a namespace class that forwards to it: no base class,
    only static / class methods, at least half of them with a use (PPQ's `class CUDA:` whose `LinearQuantize_T` returns
    `CUDA_COMPLIER.CUDA_EXTENSION.QuantizeTensor_LT(...)`). A call of such a method in another file is a call of the
    kernel (crossfile.py); a class with state or a base (an autograd Function, a module) is left to its own uses."""
    out: set[int] = set()
    for cls in tree.body:
        if not isinstance(cls, ast.ClassDef) or any(ast_dotted(b) != "object" for b in cls.bases):
            continue
        methods = [m for m in cls.body if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef))]
        if not methods or not all(any(ast_dotted(d) in ("staticmethod", "classmethod") for d in m.decorator_list)
                                  for m in methods):
            continue
        spans = [{line for line in used if m.lineno <= line <= (m.end_lineno or m.lineno)} for m in methods]
        if sum(1 for lines in spans if lines) * 2 >= len(methods):
            out.update(*spans)
    return out


def _through(stmt: ast.stmt | None, node: ast.AST, attrs: frozenset[str]) -> bool:
    """The read of a holder instance goes on to one of `attrs` (`inst.CUDA_EXTENSION`), not to its other members."""
    return stmt is not None and any(isinstance(sub, ast.Attribute) and sub.value is node and sub.attr in attrs
                                    for sub in walk_list(stmt))


def flow_findings(tree: ast.Module, findings: Sequence[Finding], lines: list[str], rel: str,
                  rules: dict[str, Any]) -> list[Finding]:
    """The info findings at the uses of CUDA-bound names (and at spelled project imports), before the backend
    context; none on a line that holds a finding."""
    seeds, spelled_lines = _seeds(tree, findings, rel)
    if not seeds:
        return []
    seeds += _holder_seeds(tree, seeds, findings)
    taken = {f.line for f in findings if f.name not in CHECK_RULES}     # (a check gives way: add_flow)
    kernels = _kernel_bodies(tree)
    hits: dict[int, tuple] = {}    # line -> (category, name, binding line, what it is bound to, col, module)
    for line, (cat, local, bound, mod) in spelled_lines.items():
        if line not in taken:
            hits[line] = (cat, local, 0, bound, 1, mod)
    done: set[tuple[str, int]] = set()
    queue = list(seeds)
    while queue:
        b = queue.pop(0)
        if (b.name, b.line) in done:
            continue
        done.add((b.name, b.line))
        scope = b.scope
        if b.name.startswith("self."):
            cls = _class_of(tree, b.line)
            if cls is None:
                continue
            scope = cls
        elif _rebound_elsewhere(scope, b.name, b.line):
            continue
        for line, node, stmt in _reads(scope, b.name):
            if line == b.line or line in taken or any(start <= line <= end for start, end in kernels):
                continue
            if _host_variant(stmt, node) or _metadata_read(stmt, node) or \
                    b.attrs is not None and not _through(stmt, node, b.attrs):
                continue
            hits.setdefault(line, (b.category, b.name, b.line, b.what, node.col_offset + 1, b.module))
            if b.depth < MAX_DEPTH and isinstance(stmt, (ast.Assign, ast.AnnAssign)) and stmt.value is not None \
                    and (_reference(stmt.value) and any(n is node for n in walk_list(stmt.value))
                         or b.call and isinstance(stmt.value, ast.Call) and stmt.value.func is node):
                targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
                for t in targets:
                    name = _target_name(t)
                    if name and name != b.name:
                        queue.append(_Binding(name, stmt.lineno, b.category, b.what, b.scope, b.depth + 1,
                                              b.module))
    wrapped = _wrapper_lines(tree, {line for line, hit in hits.items() if hit[0] == "kernel" and hit[2]})
    out = []
    for line, (category, name, bline, what, col, mod) in sorted(hits.items()):
        code, rule_name = CODES.get(category, CODES["kernel"])
        rule = rules.get(code)
        text = lines[line - 1] if 0 < line <= len(lines) else ""
        if bline:
            message = f"uses `{name}`, bound at line {bline} to CUDA-specific code: {what}; port them together"
        elif what.why is _Why.BUILT:
            message = f"binds `{name}` to a compiled extension built by the project's op builder ({what.code}), a " \
                      "CUDA extension by its name: port it (an Ascend build or torch ops) with its uses"
        elif what.why is _Why.GUARDED:
            message = f"imports `{name}` from the project's own module {what}, CUDA-specific code by its guard; " \
                      "port it with its module"
        else:
            message = f"imports `{name}` from the project's own module {what.code}, CUDA-specific code by its " \
                      "name; port it with its module"
        out.append(Finding(
            code=code, name=rule_name, category=category,
            severity="info", effort=getattr(rule, "effort", "medium") if rule is not None else "medium",
            path=rel, line=line, col=col, end_line=line, end_col=len(text.rstrip("\r\n")) + 1, message=message,
            substitution=getattr(rule, "substitution", None) if rule is not None else None, fix="none",
            source="static", symbol=name,
            data={**({"bound_at": bline} if bline else {"built_by": what.code} if what.why is _Why.BUILT
                     else {"named_module": what.code}), **({"module": mod} if mod else {}),
                  **({WRAPPER: True} if line in wrapped else {})}))
    return out


def add_flow(findings: list[Finding], tree: ast.Module, lines: list[str], rel: str, rules: dict[str, Any],
             text: str) -> list[Finding]:
    """`findings` with the value-flow findings added (context applied: none inside an NPU / multi-backend branch;
    suppression comments honoured)."""
    from auditor.static.backends import apply_context, build_backend_context
    from auditor.suppress import Suppressions

    from auditor.static.crossfile import _ascend_package

    if not rules or _ascend_package(rel):
        return findings     # an Ascend package's own code (vllm_ascend/...): its bindings are the NPU's
    try:
        new = flow_findings(tree, findings, lines, rel, rules)
    except RecursionError:
        return findings
    if not new:
        return findings
    ctx = build_backend_context(tree, lines, sorted({f.line for f in new}))
    new = [f for f in apply_context(new, ctx, rel) if f.data.get("context") in (None, *_STILL_CUDA)]
    suppressions = Suppressions.of(lines, text)
    new = [f for f in new if not suppressions.covers(f.line, f.end_line, f.code)]
    placed = {f.line for f in new}      # the bound name's own answer replaces an unresolved-extension check
    return sorted([f for f in findings if not (f.name in CHECK_RULES and f.line in placed)] + new,
                  key=Finding.sort_key)


def _by_path(rel: str, level: int, module: str, modules: dict[str, str]) -> str | None:
    """The dotted name (as `modules` names it) of the file an import reaches, found by the importer's path
    rather than by packages: `from ...core.device import x` in `diffsynth/utils/xfuser/a.py` where `utils/` has no
    `__init__.py` (a namespace folder)."""
    parts = rel.split("/")[:-1]
    if level - 1 > len(parts):
        return None
    # an absolute import of a namespace package (`from fastvideo.utils.parallel_states import nccl_info`, no
    # `__init__.py` on the way): from the run's root, then from each folder above the importer (a `src/` layout)
    bases = [parts[:len(parts) - (level - 1)]] if level > 0 else [parts[:i] for i in range(len(parts) + 1)]
    for base in bases:
        target = base + [p for p in module.split(".") if p]
        for candidate in ("/".join(target) + ".py", "/".join(target + ["__init__.py"])):
            if candidate in modules:
                return modules[candidate]
    return None


def _folder_in_run(rel: str, level: int) -> bool:
    """Whether the folder a relative import starts from (`..` of `a/b/c.py` at level 2: `a/`) lies inside the
    audited root: the run holds every module of it, so one missing from the run is not the project's (pd36)."""
    return level - 1 < len(rel.split("/")) - 1     # (the root or above: the run may have started inside a package)


def _reexported(target: Any, module: str, resolved: str, name: str) -> bool:
    """`name` imported from `module` is a third-party module it re-exports (`from aphrodite.triton_utils import tl`,
    crossfile `_third_party_bindings`; t11v)."""
    return bool(name) and module == resolved and name in getattr(target, "reexports", ()) and name not in target.names


def defer_to_project(results: list, modules: dict[str, str], targets: dict[str, Any]) -> int:
    """In a run that holds the imported project module, its own facts decide (crossfile.py `_targets`): the findings
    placed by an import's spelling alone (`from ..nccl import send`) are dropped when the module is audited and is
    not CUDA-specific there (a multi-backend `nccl` helper, Triton-Ascend code). Returns how many were dropped."""
    present = set(modules.values())
    dropped = 0
    for r in results:
        if not any(f.code in OWN_CODES and f.data.get("module") for f in r.findings):
            continue
        me = modules.get(r.path, r.path.rsplit("/", 1)[-1][:-3] if r.path.endswith(".py") else "")
        is_package = r.path.endswith("/__init__.py") or r.path == "__init__.py"
        kept = []
        for f in r.findings:
            mod = f.data.get("module") if f.code in OWN_CODES else None
            if isinstance(mod, list) and len(mod) == 3:
                level, module, name = mod
                resolved = absolute_module(str(module), int(level), me, is_package)
                if resolved not in present:    # a namespace folder on the way (no __init__.py)
                    resolved = _by_path(r.path, int(level), str(module), modules) or resolved
                names = [resolved, f"{resolved}.{name}"] if name else [resolved]
                # (a file does not import itself: `from encoding import gpu` in `encoding/functions/encoding.py`
                # audited without its package's `__init__.py` names the package, not the file's own stem)
                here = [n for n in names if n in present and n != me]
                if not here and int(level) > 0 and _folder_in_run(r.path, int(level)):
                    dropped += 1    # (a relative import of a module the audited folder does not hold: a vendored
                    continue        # copy of another package's file, transformers' `...modeling_flash_attention_utils`)
                if here and not any(n in targets and ((targets[n].whole and not _reexported(targets[n], n, resolved,
                                                                                              name))
                                                       or not name or name in targets[n].names
                                                       or n.endswith("." + name)) for n in names):
                    dropped += 1
                    continue
            kept.append(f)
        r.findings = kept
    return dropped
