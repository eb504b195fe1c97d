"""Modules a file imports by a bare name that it calls like a compiled extension (tk37, issue 14).

A code base's own C++/CUDA extension is imported by the name its build script gives it (`import PG_OP` in
PointGroup's `lib/pointgroup_ops/functions/pointgroup_ops.py`, built by `lib/pointgroup_ops/setup.py`;
`from block_sparse_seer_attn_cutclass import flash_attention_v2_cutlass` in SeerAttention, built by a `build.py`).
Audited without the build script in view, the file still shows what the module is:

- the name is no module of the standard library and no import name of a distribution on PyPI (op_tables/
  cuda_packages.json, g1: the import names real code uses, each looked up on PyPI's JSON API; a package any rule
  names is that rule's);
- and either the file calls into it from the `forward` / `backward` of its own `torch.autograd.Function` subclass
  (the shape of a custom op around a compiled kernel: `PG_OP.voxelize_fp(feats, output_feats, map_rule, ...)` inside
  `Voxelization.forward`), or the module or a name taken from it is named for CUTLASS (NVIDIA's CUDA C++ template
  library: a Python name carrying the word is a binding of CUTLASS kernels), or the module is named like an extension
  (`*_kernel`, `*_ops`, `*_lib`) and a call into it is handed a tensor built by torch in the call
  (`tutel_custom_kernel.update_sdk_home(torch.tensor([...], dtype=torch.int8, device='cpu'))`, Tutel's JIT kernels).

A module imported by a dotted path is read the same way (tk38, issue 14): QServe's `import
qserve_backend.qgemm_w4a8_per_chn` ... `qserve_backend.qgemm_w4a8_per_chn.gemm_forward_cuda(x, ...)`, WholeGraph's
`import pylibwholegraph.binding.wholememory_binding as wmb` ... `wmb.init(0, ...)`: a segment of the path is named
like a compiled module (`*_binding(s)`, `*_backend`, `*_cuda`, `*_ext`, `_C`; the module is the path up to that
segment), its top package is neither the standard library nor a PyPI import name, and the file shows one of: the
segment is a binding (`*_binding(s)`: pybind11 / Cython's name for a compiled wrapper of a native library), a call
into it from an autograd op or handed a tensor torch builds (as above), a called name under it naming CUDA
(`gemm_forward_cuda`), or the module is the compiled twin of a package the file also imports (`qserve_backend`
beside `from qserve import ...`).

What the file cannot show is the build: the finding is a check (rules/kernel_unresolved_extensions.yaml), and in a
tree audit a module that is one of the tree's own Python files or packages is dropped (firstparty.drop_python_named).
"""
from __future__ import annotations

import ast
import re
import sys
from collections.abc import Callable
from functools import lru_cache

from auditor.astnodes import module_nodes_of
from auditor.static.astutil import ast_dotted

# the segment the visitor prefixes to such a module's qualified names, so that a rule can name them (`PG_OP.voxelize_fp`
# is matched as `unresolved_extension.PG_OP.voxelize_fp`; the finding's symbol stays `PG_OP.voxelize_fp`)
UNRESOLVED_EXTENSION = "unresolved_extension"
# the rule's name: a check, which a proven answer on the same line (the tree's own build facts, the cross-file and
# value-flow passes' NPU320) replaces
CHECK_RULES = frozenset({"unresolved-compiled-extension"})
_AUTOGRAD_FUNCTIONS = frozenset({"torch.autograd.Function", "torch.autograd.function.Function"})
# the methods torch.autograd.Function runs (forward / backward, and the functorch-era jvp / vjp / setup_context)
_AUTOGRAD_METHODS = frozenset({"forward", "backward", "jvp", "vjp", "setup_context"})
_CUTLASS = re.compile(r"(?i)(?:^|_)cutlass(?:$|_|\d)")
# the last word of a module named like a compiled extension that no other rule reads by its name (NPU379 reads
# `*_cuda` / `*_kernels`, NPU891 `*_ext`, NPU358 `_C`): `tutel_custom_kernel`, `PG_OP`, `fused_dense_lib`
_EXTENSION_SHAPE = re.compile(r"(?i)(?:^|_)(?:kernel|kernels|op|ops|lib)$")
# a segment of a dotted module path named like a compiled module (tk38): `wholememory_binding`, `qserve_backend`,
# `fused_cuda`, `pkg_ext`, `_C`; NPU379 / NPU891 / NPU358 read `*_cuda` / `*_ext` / `_C` by their spelling where they
# can, this reading only where no rule matched
_DOTTED_SHAPE = re.compile(r"^(?:[A-Za-z]\w*_(?:binding|bindings|backend|cuda|ext)|_C|_?csrc)$")
_BINDING = re.compile(r"_bindings?$")
# the C/C++/CUDA source folder by PyTorch's convention (torch/csrc, detectron2/layers/csrc): a module imported through
# it is the code base's compiled kernel or its thin wrapper (`from train.csrc.causal_dot_prod import
# causal_dot_product`, Hazy Research's linear-attention kernel in prefix-linear-attention, lolcats, zoology; tk41)
_CSRC = re.compile(r"(?:^|\.)_?csrc(?:\.|$)")
# words of a message that says what a guarded import is (`except: print("Could not import TK based_H100 kernel")`)
_KERNEL_MESSAGE = re.compile(r"(?i)\b(?:cuda|kernels?|cutlass|nvcc)\b")
# a module named for CUDA by a `cuda_` prefix inside a package named like an extension (tk39): QJL's
# `from qjl_kernel import cuda_qjl_quant` (its qjl_kernel/setup.py builds `CUDAExtension(name='cuda_qjl_quant')` in
# place); a `cuda_` module under an ordinary package (pixelsplat's `src.model.decoder.cuda_splatting`, curobo's
# `curobo._src.util.cuda_graph_util`) is a Python helper and is not read
_CUDA_PREFIX = re.compile(r"^cuda_[a-z]\w*$")
# torch's run-time builders of a C++/CUDA extension (context.JIT_BUILDERS; named here, context imports this module)
_JIT_BUILDERS = frozenset({"torch.utils.cpp_extension.load", "torch.utils.cpp_extension.load_inline"})
_CUDA_WORD = re.compile(r"(?i)(?:^|_)cuda(?:$|_)")
_PASS_WORD = re.compile(r"(?i)(?:^|_)(?:forward|backward|fwd|bwd)(?:$|_)")
# an import line of such a module (the engine's cheap test before a file's context is built)
_DOTTED_IMPORT = re.compile(r"(?m)^[ \t]*(?:from|import)[ \t]+[\w.]*\w_(?:binding|bindings|backend)\b")
# host libraries every PyTorch file may import that PyPI's table need not list
_HOST = frozenset(sys.stdlib_module_names) | {"__future__", "torch", "numpy", "typing_extensions"}


_HOST_ENTRY = re.compile(r"(?i)(?:^|_)cpu(?:$|_|\d)")


def host_entry_point(qual: str) -> bool:
    """`tutel_custom_kernel.invoke_cpu_fp32(...)`, `encoding.cpu.aggregate_forward(...)`: an entry point or submodule
    the extension names for its CPU kernels, which its host build (a CppExtension where no CUDA is) provides: not a
    CUDA use."""
    return any(_HOST_ENTRY.search(part) for part in qual.split(".")[1:])


def may_call_extension(words: set[str], text: str) -> bool:
    """Whether a file without any rule's trigger word may still hold what unresolved_extension_modules reads (a cheap
    test before the file's context is built): a custom autograd op, or a CUTLASS name."""
    return "Function" in words and "forward" in words or _CUTLASS.search(text) is not None \
        or _DOTTED_IMPORT.search(text) is not None


def calls_shaped_module(stmt: ast.stmt) -> bool:
    """Whether the statement calls into a module path with a segment named like a compiled module
    (`qserve_backend.qgemm_w4a8_per_chn.gemm_forward_cuda(...)`, or a `cuda_*` module imported from an extension
    package: `cuda_qjl_quant.qjl_quant_half_half(...)`): the calls `_dotted_extension_modules` reads as its
    evidence, which the bounded-memory parse must keep (largefile._contributes)."""
    for node in ast.walk(stmt):
        if isinstance(node, ast.Call) and (callee := ast_dotted(node.func)) is not None and "." in callee \
                and any(_DOTTED_SHAPE.match(part) or _CUDA_PREFIX.match(part) for part in callee.split(".")[:-1]):
            return True
    return False


def extension_module_of(qual: str, modules: frozenset[str]) -> str | None:
    """The module of `modules` (unresolved_extension_modules' answer) that `qual` is or lies in: `PG_OP` for
    `PG_OP.voxelize_fp`, `pylibwholegraph.binding.wholememory_binding` for `...wholememory_binding.init`."""
    if not modules:
        return None
    name = qual
    while True:
        if name in modules:
            return name
        cut = name.rfind(".")
        if cut <= 0:
            return None
        name = name[:cut]


def shaped_segment(symbol: str) -> str:
    """The segment of a finding's symbol that names the compiled module: the first one named like a compiled module
    in a dotted path (`wholememory_binding`), else the first (a bare module, `PG_OP`): what a tree audit looks up among
    its Python modules (firstparty.drop_python_named)."""
    parts = symbol.split(".")
    return next((p for p in parts[1:] if _DOTTED_SHAPE.match(p) or _CUDA_PREFIX.match(p)), parts[0])


@lru_cache(maxsize=1)
def _known_import_names() -> frozenset[str]:
    """Import names a PyPI distribution provides (the g1 table's rows that found one)."""
    from auditor.data import load_table

    try:
        rows = load_table("cuda_packages.json")["packages"]
    except Exception:       # a checkout without the generated table: nothing is known, so nothing is read
        return frozenset()
    return frozenset(name for name, row in rows.items() if row.get("dist"))


def unresolved_extension_modules(tree: ast.Module, resolve: Callable[[str], str | None]) -> frozenset[str]:
    """The bare module names the file imports (absolutely, one segment) that are neither the standard library nor
    a PyPI import name and that the file calls like a compiled extension (module docstring). `resolve` is the file
    context's resolver of a dotted name (local name -> qualified name)."""
    imported: dict[str, str] = {}          # local name -> the bare module it comes from
    taken: dict[str, set[str]] = {}        # bare module -> names the file takes from it
    for node in module_nodes_of(tree, (ast.Import, ast.ImportFrom)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if "." not in alias.name:
                    imported[alias.asname or alias.name] = alias.name
        elif not node.level and node.module and "." not in node.module:
            for alias in node.names:
                if alias.name != "*":
                    imported[alias.asname or alias.name] = node.module
                    taken.setdefault(node.module, set()).add(alias.name)
    dotted = _dotted_extension_modules(tree, resolve)
    candidates = {m for m in imported.values() if m not in _HOST and m.isidentifier()}
    if not candidates:
        return dotted
    candidates -= _known_import_names()
    found = {m for m in candidates if _CUTLASS.search(m) or any(_CUTLASS.search(n) for n in taken.get(m, ()))}
    for call in module_nodes_of(tree, ast.Call):
        # `tutel_custom_kernel.update_sdk_home(torch.tensor([...], dtype=torch.int8))`: a module named like an
        # extension (`*_kernel`, `*_ops`, `*_lib`) handed a tensor the call builds with torch
        if (callee := ast_dotted(call.func)) is not None \
                and (module := imported.get(callee.split(".", 1)[0])) in candidates and _EXTENSION_SHAPE.search(module) \
                and any(_torch_tensor_made(arg, resolve) for arg in (*call.args, *(k.value for k in call.keywords))):
            found.add(module)
    for call in _autograd_calls(tree, resolve):
        if (callee := ast_dotted(call.func)) is not None and call.args \
                and (module := imported.get(callee.split(".", 1)[0])) in candidates:
            found.add(module)
    whole = {alias.asname or alias.name for node in module_nodes_of(tree, ast.Import) for alias in node.names
             if "." not in alias.name}
    for call in module_nodes_of(tree, ast.Call):
        # `kivi_gemv.gemv_forward_cuda_outer_dim(fA, qB, ...)` (ThinK): a module imported whole whose entry point is
        # named, by the C++-extension convention (`lltm_cuda_forward`), for CUDA and a forward / backward pass (tk41);
        # not a Python package's helper (`mpu.model_parallel_cuda_manual_seed(seed)`, `query_utils.cuda(batch)`)
        if (callee := ast_dotted(call.func)) is not None and callee.count(".") == 1 and (call.args or call.keywords) \
                and callee.split(".", 1)[0] in whole and (module := imported.get(callee.split(".", 1)[0])) in candidates \
                and _CUDA_WORD.search(name := callee.rsplit(".", 1)[-1]) and _PASS_WORD.search(name):
            found.add(module)
    found |= _guarded_as_kernels(tree, candidates)
    return frozenset(found) | dotted


def _guarded_as_kernels(tree: ast.Module, candidates: set[str]) -> set[str]:
    """`try: import lin_attn as mod; print("Successfully imported TK based_H100 kernel")` / `except: print("Could not
    import TK based_H100 kernel")` (prefix-linear-attention's ThunderKittens modules): a bare import whose guard's own
    messages call it a kernel / CUDA module (tk41). Only the string arguments of calls in the `try` body and its
    handlers are read (the messages printed, logged, warned or raised), never comments."""
    found: set[str] = set()
    for node in module_nodes_of(tree, ast.Try):
        bare = {alias.name for stmt in node.body if isinstance(stmt, ast.Import) for alias in stmt.names
                if alias.name in candidates}
        if not bare:
            continue
        said = [arg.value for block in (node.body, *(h.body for h in node.handlers)) for stmt in block
                for call in ast.walk(stmt) if isinstance(call, ast.Call)
                for arg in (*call.args, *(k.value for k in call.keywords))
                if isinstance(arg, ast.Constant) and isinstance(arg.value, str)]
        said += [v.value for block in (node.body, *(h.body for h in node.handlers)) for stmt in block
                 for call in ast.walk(stmt) if isinstance(call, ast.Call)
                 for arg in call.args if isinstance(arg, ast.JoinedStr)
                 for v in arg.values if isinstance(v, ast.Constant) and isinstance(v.value, str)]
        if any(_KERNEL_MESSAGE.search(text) for text in said):
            found |= bare
    return found


def _autograd_calls(tree: ast.Module, resolve: Callable[[str], str | None]) -> list[ast.Call]:
    """Calls made in the forward / backward of the file's own torch.autograd.Function subclasses."""
    out: list[ast.Call] = []
    for cls in module_nodes_of(tree, ast.ClassDef):
        if any(resolve(d) in _AUTOGRAD_FUNCTIONS for d in map(ast_dotted, cls.bases) if d is not None):
            for method in cls.body:
                if isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef)) and method.name in _AUTOGRAD_METHODS:
                    out.extend(n for n in ast.walk(method) if isinstance(n, ast.Call))
    return out


def _dotted_extension_modules(tree: ast.Module, resolve: Callable[[str], str | None]) -> frozenset[str]:
    """Compiled modules the file imports by a dotted path (module docstring, tk38): the path up to its first segment
    named like a compiled module, kept when what the file shows says it is one."""
    modules: set[str] = set()
    imported_tops: set[str] = set()
    for node in module_nodes_of(tree, (ast.Import, ast.ImportFrom)):
        if isinstance(node, ast.Import):
            paths = [alias.name for alias in node.names]
        elif node.level or not node.module:
            continue
        else:
            paths = [node.module] + [f"{node.module}.{alias.name}" for alias in node.names if alias.name != "*"]
        for path in paths:
            parts = path.split(".")
            imported_tops.add(parts[0])
            cut = next((i for i, part in enumerate(parts) if _DOTTED_SHAPE.match(part)
                        or _cuda_module_in_extension_package(parts, i)), None)
            if cut is not None and len(parts) > 1 and parts[0] not in _HOST and parts[0] != "_C":
                modules.add(".".join(parts[:cut + 1]))
    # `lib = importlib.import_module("pylibwholegraph.pylibwholegraph_torch_ext")` after the file JIT-builds that name
    # with `torch.utils.cpp_extension.load(name=..., with_cuda=True)` (WholeGraph's torch extension)
    jit_built: set[str] = set()
    for call in module_nodes_of(tree, ast.Call):
        callee = ast_dotted(call.func)
        if callee is None:
            continue
        literal = _literal_arg(call, 0, "name")
        if callee.rsplit(".", 1)[-1] == "import_module" and literal is not None \
                and _DOTTED_SHAPE.match(literal.rsplit(".", 1)[-1]) and literal.split(".", 1)[0] not in _HOST:
            modules.add(literal)
        elif resolve(callee) in _JIT_BUILDERS and literal is not None:
            jit_built.add(literal)
    if not modules:
        return frozenset()
    known = _known_import_names()
    modules = {m for m in modules if m.split(".", 1)[0] not in known}
    found = {m for m in modules if _BINDING.search(m) or m in jit_built or _CSRC.search(m)}
    # `qserve_backend` beside `from qserve import ...`: the compiled twin of a package the file imports
    found |= {m for m in modules if "." not in m and m.rsplit("_", 1)[0] in imported_tops}
    autograd = {id(call) for call in _autograd_calls(tree, resolve)} if modules - found else set()
    unproven = frozenset(modules - found)
    for call in module_nodes_of(tree, ast.Call):
        if not unproven:
            break
        callee = ast_dotted(call.func)
        qual = resolve(callee) if callee is not None else None
        module = extension_module_of(qual, unproven) if qual is not None else None
        if module is None or qual is None or qual == module:
            continue
        args = (*call.args, *(k.value for k in call.keywords))
        if _CUDA_WORD.search(qual.rsplit(".", 1)[-1]) or id(call) in autograd and args \
                or args and _CUDA_PREFIX.match(module.rsplit(".", 1)[-1]) \
                or any(_torch_tensor_made(arg, resolve) for arg in args):
            found.add(module)
            unproven -= {module}
    return frozenset(found)


def _cuda_module_in_extension_package(parts: list[str], index: int) -> bool:
    """Whether segment `index` of a module path is a `cuda_*` module inside a package named like an extension
    (`qjl_kernel.cuda_qjl_quant`: `*_kernel(s)`, `*_op(s)`, `*_lib`, or a segment named like a compiled module)."""
    return index > 0 and _CUDA_PREFIX.match(parts[index]) is not None \
        and any(_EXTENSION_SHAPE.search(p) or _DOTTED_SHAPE.match(p) for p in parts[:index])


def _literal_arg(call: ast.Call, pos: int, kw: str) -> str | None:
    """A string literal handed to the call at position `pos` or as keyword `kw`."""
    arg = call.args[pos] if len(call.args) > pos else next((k.value for k in call.keywords if k.arg == kw), None)
    return arg.value if isinstance(arg, ast.Constant) and isinstance(arg.value, str) else None


def _torch_tensor_made(node: ast.expr, resolve: Callable[[str], str | None]) -> bool:
    """A tensor built in the argument itself: a call of a `torch.*` function (`torch.tensor(...)`, `torch.empty(...)`)
    or of a tensor method that hands one back (`x.contiguous()`)."""
    if not isinstance(node, ast.Call):
        return False
    if isinstance(node.func, ast.Attribute) and node.func.attr in ("contiguous", "cuda", "float", "int", "long"):
        return True
    callee = ast_dotted(node.func)
    qual = resolve(callee) if callee is not None else None
    return qual is not None and qual.startswith("torch.") and qual.count(".") == 1
