"""Modules imported only to be patched (issue 11, t11k, tuned on heldout8's DeepLinkExt rows).

A port often replaces a CUDA library's kernels by assigning its own implementation over the library's attribute:

    import lightllm.models.llama.triton_kernel.rmsnorm as rms_norm_pack
    ...
    rms_norm_pack.rmsnorm_forward = rms_norm          # the project's Ascend / DIOPI op

The package rules see a Triton kernel module (NPU330) or a CUDA package at the import and at the assignment; but
this file never runs the library's code: it imports the module only as the target of the patch. Such an import is
the port itself, not a dependency to port. Found by structure: a name bound by an import whose every use in the
file stores into it (`alias.attr = value`, `setattr(alias, "attr", value)`), with no read, no call, no argument.
The package findings on its import line and on those stores become info (never rewritten), with that said; the
library's other users in the tree keep theirs.
"""
from __future__ import annotations

import ast

from auditor.static.astutil import ast_dotted, module_nodes
from auditor.static.backends import as_info

# kernel modules and CUDA packages: the finding claims a dependency. Not attention: replacing a framework's attention
# forward (`modeling_flash_attention_utils._flash_attention_forward = fa`) installs an implementation that itself
# must run on the NPU (t11h's patch-module tests keep that a warning in a file without torch_npu)
_PACKAGE_CATEGORIES = frozenset({"kernel", "third_party"})
_NOTE = ("the file imports this module only to assign its own implementation over it (a monkey patch): the import "
         "is the patch target, not a dependency to port")


def _bindings(tree: ast.AST) -> dict[str, list[tuple[int, str]]]:
    """local name -> (import line, the dotted name it binds), for imports that bind a module path or a name under
    one (`import a.b as c`, `from a.b import c [as d]`); `import a.b` (binds `a`), relative and star imports are
    left out."""
    out: dict[str, list[tuple[int, str]]] = {}
    for node in module_nodes(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.asname or "." not in a.name:
                    out.setdefault(a.asname or a.name, []).append((node.lineno, a.name))
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for a in node.names:
                if a.name != "*":
                    out.setdefault(a.asname or a.name, []).append((node.lineno, f"{node.module}.{a.name}"))
    return out


def patch_only(tree: ast.AST) -> set[tuple[int, str]]:
    """(line, symbol) of the imports of each name the file only patches (`import a.b as c`: the import line and
    `a.b`) and of its stores (`c.fn = own_fn`: that line and `a.b.fn`)."""
    bound = _bindings(tree)
    if not bound:
        return set()
    stores: dict[str, set[tuple[int, str]]] = {}
    stored_nodes: set[int] = set()
    for node in module_nodes(tree):
        if isinstance(node, ast.Assign):
            for t in node.targets:
                if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id in bound:
                    stores.setdefault(t.value.id, set()).add((node.lineno, t.attr))
                    stored_nodes.add(id(t.value))
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "setattr" \
                and len(node.args) == 3 and isinstance(node.args[0], ast.Name) and node.args[0].id in bound \
                and isinstance(node.args[1], ast.Constant) and isinstance(node.args[1].value, str):
            stores.setdefault(node.args[0].id, set()).add((node.lineno, node.args[1].value))
            stored_nodes.add(id(node.args[0]))
    if not stores:
        return set()
    read = {node.id for node in module_nodes(tree)
            if isinstance(node, ast.Name) and node.id in stores and id(node) not in stored_nodes}
    out: set[tuple[int, str]] = set()
    for name, lines in stores.items():
        if name in read or len({qual for _line, qual in bound[name]}) != 1:
            continue
        qual = bound[name][0][1]
        out.update((line, qual) for line, _qual in bound[name])
        out.update((line, f"{qual}.{attr}") for line, attr in lines)
    return out



def torch_cuda_stores(tree: ast.AST) -> dict[int, list[tuple[int, int]]]:
    """{line: [(first col, end col) of a store target]} for assignments over a torch CUDA API
    (`torch._C._cuda_getCompiledVersion = stub`, `torch.cuda.get_device_capability = fake`): the file replaces the
    API (a device layer's patch for its own device, a test's mock); it does not call it there."""
    out: dict[int, list[tuple[int, int]]] = {}
    for node in module_nodes(tree):
        if isinstance(node, ast.Assign):
            for t in node.targets:
                name = ast_dotted(t) if isinstance(t, ast.Attribute) else None
                if name and name.startswith("torch.") and "cuda" in name.split(".", 2)[1].lower() or \
                        name and name.startswith("torch._C.") and "cuda" in name.rsplit(".", 1)[1].lower():
                    out.setdefault(node.lineno, []).append((t.col_offset + 1, (t.end_col_offset or 0) + 1))
    return out


def restored_saves(tree: ast.AST, stores: dict[int, list[tuple[int, int]]]) -> dict[int, list[tuple[int, int]]]:
    """{line: [(first col, end col) of the saved API]} for `saved = torch.cuda.empty_cache` that the file restores
    with a store over that API (`torch.cuda.empty_cache = saved`, one of `stores`' lines; tq47b, ART's no-op patch
    around an engine start): the reference only keeps the original to put it back; nothing is called there."""
    restores = {(ast_dotted(t), n.value.id) for n in module_nodes(tree) if isinstance(n, ast.Assign)
                and n.lineno in stores and isinstance(n.value, ast.Name) for t in n.targets}
    out: dict[int, list[tuple[int, int]]] = {}
    for n in module_nodes(tree):
        if isinstance(n, ast.Assign) and isinstance(n.value, ast.Attribute) and len(n.targets) == 1 and \
                isinstance(n.targets[0], ast.Name) and (ast_dotted(n.value), n.targets[0].id) in restores:
            out.setdefault(n.lineno, []).append((n.value.col_offset + 1, (n.value.end_col_offset or 0) + 1))
    return out


_STORE_NOTE = "the file assigns its own function over this CUDA API (a patch or a mock): nothing calls it here"
_SAVE_NOTE = "the file keeps this CUDA API to put it back after its own patch over it: nothing calls it here"
_HIDE_NOTE = ("the file replaces this CUDA probe by a constant to hide the GPU (`lambda: False`): it hides CUDA only; "
              "once the file's calls are ported to torch.npu the NPU stays visible, so hide it there too "
              "(`torch.npu.is_available`, ASCEND_RT_VISIBLE_DEVICES)")


def hides_cuda(value) -> bool:
    """`lambda: False`, `lambda *a, **k: 0` (libcst or ast): a probe replaced by an answer that there is no GPU,
    the way a script forces the CPU (bayesian-torch's `torch.cuda.is_available = lambda : False`); `lambda: True`
    fakes a GPU for another device's layer (auto-round's HPU shim) and is no such hiding."""
    body = getattr(value, "body", None)
    if type(value).__name__ != "Lambda" or body is None:
        return False
    if isinstance(body, ast.Constant):
        return body.value is False or body.value == 0 and not isinstance(body.value, bool)
    kind = type(body).__name__
    return kind == "Name" and getattr(body, "value", None) == "False" or \
        kind == "Integer" and getattr(body, "value", None) == "0"


def apply_patch_targets(findings: list, tree: ast.AST) -> list:
    """Package findings on the import and the stores of a module the file only patches, and CUDA API findings on
    the target of an assignment over that API: info."""
    wanted = [f for f in findings if f.severity != "info"]
    if not wanted:
        return findings
    targets = patch_only(tree) if any(f.category in _PACKAGE_CATEGORIES for f in wanted) else set()
    stores = torch_cuda_stores(tree) if any(f.category == "device" for f in wanted) else {}
    hidden = {node.lineno for node in module_nodes(tree) if isinstance(node, ast.Assign) and hides_cuda(node.value)} \
        if stores else set()
    saves = restored_saves(tree, stores) if stores else {}
    if not targets and not stores:
        return findings
    out = []
    for f in findings:
        if f.severity != "info" and f.category in _PACKAGE_CATEGORIES and (f.line, f.symbol) in targets:
            f = as_info(f, "patch-target", _NOTE)
        elif f.severity != "info" and f.category == "device" and any(
                lo <= f.col < hi for lo, hi in stores.get(f.line, ())):
            f = as_info(f, "patch-target", _HIDE_NOTE if f.line in hidden else _STORE_NOTE)
        elif f.severity != "info" and f.category == "device" and any(
                lo <= f.col < hi for lo, hi in saves.get(f.line, ())):
            f = as_info(f, "patch-target", _SAVE_NOTE)
        out.append(f)
    return out


# tq50a: `sys.modules["apex.optimizers.FusedAdam"] = AdamW` registers the code's own stand-in under a package's name
# (cann-recipes' verl patch installs MindSpeed's AdamW where verl imports apex's FusedAdam): the name is what the
# store provides, not a package the code selects or needs. Reads (`"apex.optimizers" in sys.modules`) keep theirs.
_STANDIN_CATEGORIES = frozenset({"apex", "third_party", "kernel", "attention"})


def standin_keys(tree: ast.AST) -> set[tuple[int, str]]:
    """(line, module name) of each `sys.modules["name"] = value` store."""
    out: set[tuple[int, str]] = set()
    for node in module_nodes(tree):
        if isinstance(node, ast.Assign):
            for t in node.targets:
                if isinstance(t, ast.Subscript) and ast_dotted(t.value) == "sys.modules" and \
                        isinstance(t.slice, ast.Constant) and isinstance(t.slice.value, str):
                    out.add((t.lineno, t.slice.value))
    return out


def drop_module_standins(findings: list, tree: ast.AST) -> list:
    """Package findings on the name a `sys.modules[...]` store registers: dropped (the store provides the module)."""
    if not any(f.category in _STANDIN_CATEGORIES for f in findings):
        return findings
    keys = standin_keys(tree)
    if not keys:
        return findings
    return [f for f in findings if not (f.category in _STANDIN_CATEGORIES and (f.line, f.symbol) in keys)]


# Per-backend twin functions (t11k, heldout8's MinerU router): `_detect_cuda_devices()` beside
# `_detect_npu_devices()` in one scope is the CUDA arm of a per-backend pair; the caller picks one by device type.
_CUDA_TOKENS = frozenset({"cuda", "gpu", "gpus", "nvidia", "nccl"})
_NPU_TOKENS = ("npu", "npus", "ascend", "hccl")
_TWIN_NOTE = "the CUDA one of a per-backend pair of functions: its NPU twin `{}` sits beside it; left as is"


def cuda_twins(tree: ast.Module) -> list[tuple[int, int, str]]:
    """(first line, last line, NPU twin's name) of each function named for CUDA whose NPU twin (the same name with
    the CUDA word replaced by npu / ascend / hccl) is defined in the same module or class body."""
    out: list[tuple[int, int, str]] = []
    scopes: list[list[ast.stmt]] = [tree.body]
    scopes += [node.body for node in tree.body if isinstance(node, ast.ClassDef)]
    for body in scopes:
        fns = {n.name: n for n in body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
        lowered = {name.lower(): name for name in fns}
        for name, fn in fns.items():
            parts = name.lower().split("_")
            for i, part in enumerate(parts):
                if part not in _CUDA_TOKENS:
                    continue
                twin = next((lowered["_".join([*parts[:i], w, *parts[i + 1:]])] for w in _NPU_TOKENS
                             if "_".join([*parts[:i], w, *parts[i + 1:]]) in lowered), None)
                if twin is not None:
                    first = min([fn.lineno, *(d.lineno for d in fn.decorator_list)])
                    out.append((first, fn.end_lineno or fn.lineno, twin))
                    break
    return out


def apply_cuda_twins(findings: list, tree: ast.Module) -> list:
    """Findings (error / warning) inside the CUDA function of a per-backend pair: info."""
    if not any(f.severity != "info" for f in findings):
        return findings
    twins = cuda_twins(tree)
    if not twins:
        return findings
    out = []
    for f in findings:
        hit = next((t for lo, hi, t in twins if lo <= f.line <= hi), None) if f.severity != "info" else None
        out.append(as_info(f, "npu-path", _TWIN_NOTE.format(hit)) if hit is not None else f)
    return out



# A CUDA runtime function imported by name and rebound from torch.npu (t35b, session 34; heldout36's xDiT):
# `from torch.cuda import synchronize` at the top, then `if envs._is_npu(): from torch.npu import synchronize` (or
# the same import in a `try` that tolerates its absence) at module level. On Ascend the name is torch.npu's, so the
# import and every call of the name run the NPU's own function: the file already has its NPU path.
_REBIND_NOTE = "`{}` is rebound to torch.npu's at line {} where the NPU is present: already has an NPU path; left as is"


def _module_imports(body: list[ast.stmt]):
    """The `from X import ...` statements of a module's top level, inside its `if` / `try` blocks too (not in
    functions or classes: those bind a local name)."""
    for stmt in body:
        if isinstance(stmt, ast.ImportFrom):
            yield stmt
        elif isinstance(stmt, (ast.If, ast.Try)):
            yield from _module_imports(stmt.body + stmt.orelse + getattr(stmt, "finalbody", []))
            yield from _module_imports([s for h in getattr(stmt, "handlers", []) for s in h.body])


def _npu_module(module: str) -> bool:
    parts = module.split(".")
    return parts[0] == "torch_npu" or parts[:2] == ["torch", "npu"]


def npu_rebound_names(tree: ast.Module) -> dict[str, tuple[str, int, int]]:
    """{local name: (torch.cuda function, line of its CUDA import, line of the NPU rebinding)} for names a module
    imports from torch.cuda and imports again from torch.npu / torch_npu."""
    cuda: dict[str, tuple[str, int]] = {}
    npu: dict[str, int] = {}
    for stmt in _module_imports(tree.body):
        module = stmt.module or ""
        if stmt.level:
            continue
        for alias in stmt.names:
            local = alias.asname or alias.name
            if module == "torch.cuda":
                cuda.setdefault(local, (f"torch.cuda.{alias.name}", stmt.lineno))
            elif _npu_module(module):
                npu.setdefault(local, stmt.lineno)
    return {name: (api, line, npu[name]) for name, (api, line) in cuda.items() if name in npu}


def apply_npu_rebinds(findings: list, tree: ast.Module) -> list:
    """Findings (error / warning) on such an import and on the reads of the rebound name: info."""
    if not any(f.severity != "info" and f.symbol and f.symbol.startswith("torch.cuda.") for f in findings):
        return findings
    rebound = npu_rebound_names(tree)
    if not rebound:
        return findings
    apis = {api: (name, cuda_line, npu_line) for name, (api, cuda_line, npu_line) in rebound.items()}
    reads: dict[str, set[int]] = {}
    for n in module_nodes(tree):
        if isinstance(n, ast.Name) and n.id in rebound and isinstance(n.ctx, ast.Load):
            reads.setdefault(n.id, set()).add(n.lineno)
    out = []
    for f in findings:
        hit = apis.get(f.symbol) if f.severity != "info" else None
        if hit is not None and (f.line == hit[1] or f.line in reads.get(hit[0], ())):
            f = as_info(f, "npu-path", _REBIND_NOTE.format(hit[0], hit[2]))
        out.append(f)
    return out

# An attention-implementation table (transformers' `*_ATTENTION_CLASSES = {"eager": ..., "sdpa": ...,
# "flash_attention_2": XFlashAttention2}`): the class under the flash-attention key runs only where the config asks
# for flash_attention_2, which needs the flash_attn package; on Ascend the model is loaded with eager / sdpa.
_FLASH_KEYS = frozenset({"flash_attention_2", "flash_attention_3"})
_TABLE_NOTE = ("in the class an attention table selects only for `{}` (the config's attn_implementation); Ascend "
               "loads the model with eager / sdpa: port it only to use that path")


def flash_table_classes(tree: ast.Module) -> dict[str, str]:
    """{class name: its key} for classes a module-level dict literal maps a flash-attention key to, where the same
    dict also maps "eager" or "sdpa" (an attention-implementation table)."""
    out: dict[str, str] = {}
    for node in tree.body:
        value = node.value if isinstance(node, (ast.Assign, ast.AnnAssign)) else None
        if not isinstance(value, ast.Dict):
            continue
        keys = {k.value: v for k, v in zip(value.keys, value.values)
                if isinstance(k, ast.Constant) and isinstance(k.value, str)}
        if not ({"eager", "sdpa"} & set(keys)):
            continue
        for key, v in keys.items():
            if key in _FLASH_KEYS and isinstance(v, ast.Name):
                out.setdefault(v.id, key)
    return out


def apply_flash_tables(findings: list, tree: ast.Module) -> list:
    """Errors inside a class only a flash-attention key of an attention table selects: warning (policy: the code
    runs only where the user picks that implementation)."""
    if not any(f.severity == "error" for f in findings):
        return findings
    classes = flash_table_classes(tree)
    if not classes:
        return findings
    spans = [(n.lineno, n.end_lineno or n.lineno, classes[n.name]) for n in tree.body
             if isinstance(n, ast.ClassDef) and n.name in classes]
    from dataclasses import replace

    out = []
    for f in findings:
        hit = next((key for lo, hi, key in spans if lo <= f.line <= hi), None) if f.severity == "error" else None
        if hit is not None:
            f = replace(f, severity="warning", message=f"{f.message} ({_TABLE_NOTE.format(hit)})")
        out.append(f)
    return out
