"""setup.py and setup.cfg: the requirements a setuptools project declares. setup.py is read with `ast` (never run):
the strings that are elements of requirement lists, those passed to `setup(install_requires=..., extras_require=...,
setup_requires=..., tests_require=...)` and those of module lists that feed them (`_deps = [...]`,
`extras["gpu"] = [...]`, `install_requires.append("flash-attn")`), each read as a PEP 508 requirement. The Python
pass audits the same file for its code (CUDAExtension, nvcc flags). setup.cfg is read with configparser."""
from __future__ import annotations

import ast
import configparser
import re
from dataclasses import replace
from typing import TYPE_CHECKING, Iterator
from urllib.parse import urlsplit

from auditor.astnodes import literal_strings, node_lines, parents_of, walk_list
from auditor.findings import FileError, FileResult, Finding
from auditor.project.hits import Collector, decode_text, matchers, normalize_dist
from auditor.project.requirements import _lower_opt_in, _report, requirement_dist

if TYPE_CHECKING:
    from auditor.static.engine import StaticEngine

# an f-string field inside a distribution name (f"nvidia-curand-cu{CUDAVER}"): a placeholder valid in names, shown
# as `{}` in the finding
_IN_NAME = "9x9"
_REQUIREMENT_KEYWORDS = {"install_requires", "extras_require", "setup_requires", "tests_require", "requires"}
# calls that pass a list through unchanged: `sorted(set(deps))`, `install_requires.append("x")`
_PASS_THROUGH_CALLS = {"list", "tuple", "set", "sorted", "frozenset", "append", "extend", "insert", "add", "update",
                       "dict"}
# variables that hold build inputs, not requirements (`extra_compile_args = {"nvcc": [...]}`, `sources = [...]`)
_NOT_REQUIREMENTS = re.compile(
    r"(^|_)(libs?|librar\w*|srcs?|sources?|flags?|args?|dirs?|paths?|includes?|files?|macros?|defines?|modules?|"
    r"packages?|package_data|classifiers?|keywords?|excludes?|cmdclass|ext|nvcc\w*|cxx\w*|gencode\w*|archs?|"
    r"arch_list|cc_flag)($|_)", re.IGNORECASE)


def _called_name(func: ast.expr) -> str:
    return func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""


def _target_name(target: ast.expr) -> str:
    while isinstance(target, (ast.Subscript, ast.Attribute)) and not isinstance(target, ast.Name):
        if isinstance(target, ast.Attribute):
            return target.attr
        target = target.value
    return target.id if isinstance(target, ast.Name) else ""


def _uses_setuptools(tree: ast.Module) -> bool:
    for node in walk_list(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] in ("setuptools", "distutils"):
            return True
        if isinstance(node, ast.Import) and any(a.name.split(".")[0] in ("setuptools", "distutils") for a in node.names):
            return True
    return False


def _passed_as_requirements(tree: ast.Module) -> set[str]:
    """The names `setup()` takes its requirement lists from (`install_requires=REQUIRED_PACKAGES`,
    `extras_require=EXTRA_PACKAGES`): lists that hold requirements whatever their names say (t15t: sam2's
    `REQUIRED_PACKAGES`, read as `packages` by _NOT_REQUIREMENTS)."""
    return {kw.value.id for node in walk_list(tree) if isinstance(node, ast.Call) and _called_name(node.func) == "setup"
            for kw in node.keywords if kw.arg in _REQUIREMENT_KEYWORDS and isinstance(kw.value, ast.Name)}


def _in_requirement_list(node: ast.Constant, parents: dict[int, ast.AST], passed: frozenset[str] = frozenset()
                         ) -> bool:
    """Is this string an element of a list that holds requirements (see the module docstring)?"""
    parent: ast.AST | None = parents.get(id(node))
    if isinstance(parent, ast.Call):
        if _called_name(parent.func) not in ("append", "insert", "add") or node not in parent.args:
            return False
    elif isinstance(parent, ast.Dict):
        if node not in parent.values:
            return False        # a key: an extra's name (`"gpu": [...]`), not a requirement
    elif not isinstance(parent, (ast.List, ast.Tuple, ast.Set)):
        return False
    child: ast.AST = node
    cur: ast.AST | None = parent
    while cur is not None:
        if isinstance(cur, ast.Call):
            name = _called_name(cur.func)
            if name == "setup":
                return isinstance(child, ast.keyword) and child.arg in _REQUIREMENT_KEYWORDS
            if name not in _PASS_THROUGH_CALLS:
                return False            # `find_packages(exclude=[...])`, `CUDAExtension(sources=[...])`, helpers
            if isinstance(cur.func, ast.Attribute) and name in ("append", "extend", "insert", "add", "update"):
                return not _NOT_REQUIREMENTS.search(_target_name(cur.func.value))
        elif isinstance(cur, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = cur.targets if isinstance(cur, ast.Assign) else [cur.target]
            return not any(_NOT_REQUIREMENTS.search(_target_name(t)) and _target_name(t) not in passed
                           for t in targets)
        elif isinstance(cur, (ast.Return, ast.Expr, ast.stmt)):
            return isinstance(cur, ast.Return)
        elif isinstance(cur, ast.Dict) and child in cur.keys:
            return False
        elif not isinstance(cur, (ast.List, ast.Tuple, ast.Set, ast.Dict, ast.BinOp, ast.IfExp, ast.Starred,
                                  ast.keyword, ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.comprehension,
                                  ast.BoolOp)):
            return False                # `if x in ("cuda", "rocm")`, `d["torch"]`, f-strings, ...
        child, cur = cur, parents.get(id(cur))
    return False


def _unlooked_entries(tree: ast.Module) -> set[int]:
    """The entries of a list that only feeds a lookup table no read names (tq45b): Hugging Face's setup.py idiom
    `_deps = ["vllm==0.6.6.post1", ...]`, `deps = {b: a for a, b in (re.findall(..., x)[0] for x in _deps)}`,
    `install_requires = [deps["accelerate"], ...]`, `extras["x"] = deps_list("pytest", ...)`: an entry whose name no
    `deps["name"]` nor helper call names installs nothing (open-r1's vllm pin). Empty when the table or the list is
    read any other way."""
    lists = {t.id: n.value for n in tree.body if isinstance(n, ast.Assign) and isinstance(n.value, ast.List)
             for t in n.targets if isinstance(t, ast.Name)}
    out: set[int] = set()
    for node in tree.body:
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
                and isinstance(node.value, ast.DictComp)):
            continue
        table = node.targets[0].id
        fed = {n.id for n in walk_list(node.value) if isinstance(n, ast.Name) and n.id in lists}
        if len(fed) != 1:
            continue
        source = fed.pop()
        parents = parents_of(tree)
        helpers: set[str] = set()
        named: set[str] = set()
        for n in walk_list(tree):
            if isinstance(n, ast.Name) and n.id == source and isinstance(n.ctx, ast.Load) and \
                    not any(n is m for m in walk_list(node.value)):
                return set()        # the list is read elsewhere (`install_requires=_deps`)
            if not (isinstance(n, ast.Name) and n.id == table and isinstance(n.ctx, ast.Load)):
                continue
            sub = parents.get(id(n))
            if not isinstance(sub, ast.Subscript) or sub.value is not n:
                return set()        # `deps.values()`, the table handed on
            if isinstance(sub.slice, ast.Constant) and isinstance(sub.slice.value, str):
                named.add(normalize_dist(sub.slice.value))
            else:                   # `def deps_list(*pkgs): return [deps[pkg] for pkg in pkgs]`
                fn = next((p for p in _ancestors(sub, parents) if isinstance(p, ast.FunctionDef)), None)
                if fn is None:
                    return set()
                helpers.add(fn.name)
        named |= {normalize_dist(a.value) for n in walk_list(tree) if isinstance(n, ast.Call)
                  and _called_name(n.func) in helpers for a in n.args
                  if isinstance(a, ast.Constant) and isinstance(a.value, str)}
        out |= {id(e) for e in lists[source].elts if isinstance(e, ast.Constant) and isinstance(e.value, str)
                and requirement_dist(e.value) not in named}
    return out


def _ancestors(node: ast.AST, parents: dict[int, ast.AST]) -> Iterator[ast.AST]:
    cur = parents.get(id(node))
    while cur is not None:
        yield cur
        cur = parents.get(id(cur))


def setup_requirements(tree: ast.Module) -> Iterator[ast.Constant]:
    """The requirement strings of a setuptools script (nothing if it does not use setuptools / distutils)."""
    if not _uses_setuptools(tree):
        return
    parents = parents_of(tree)
    passed = frozenset(_passed_as_requirements(tree))
    unlooked = _unlooked_entries(tree)
    for node in walk_list(tree):
        if isinstance(node, ast.JoinedStr) and node.values and isinstance(node.values[0], ast.Constant):
            # f"transformer_engine_cu12=={__version__}", f"nvidia-curand-cu{CUDAVER}": the literal parts name the
            # distribution; each replacement field reads as a digit
            text = ""
            for v in node.values:
                text += str(v.value) if isinstance(v, ast.Constant) else \
                    _IN_NAME if text[-1:].isalnum() or text[-1:] in "-_." else "0"
            spelled = ast.Constant(value=text)
            ast.copy_location(spelled, node)
            if id(node) in parents:
                parents[id(spelled)] = parents[id(node)]
            node = spelled
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.strip() \
                and "\n" not in node.value and id(node) not in unlooked and _in_requirement_list(node, parents, passed):
            yield node


_EXTRAS_NOTE = " (in the opt-in extra `{extra}` of setup.py's extras_require: a plain install does not pull it; " \
               "warning at most, clause `guarded`, as [project.optional-dependencies])"


def _opt_in_extras(tree: ast.Module, requirements: list[ast.Constant]) -> dict[int, str]:
    """id(requirement) -> extra name, for the requirements of `setup(extras_require=...)` (written in the call or in
    a dict passed to it: `EXTRAS = {...}`, `extras["flash"] = [...]`) whose distribution no other requirement list
    of the file names: an opt-in extra (clip-as-service's `'flash-attn': ['flash-attn']`; pd2, heldout20)."""
    given = [kw.value for node in walk_list(tree) if isinstance(node, ast.Call) and _called_name(node.func) == "setup"
             for kw in node.keywords if kw.arg == "extras_require"]
    passed = {v.id for v in given if isinstance(v, ast.Name)} | {     # `extras_require={..., **EXTRAS}` too
        k.id for v in given if isinstance(v, ast.Dict) for key, k in zip(v.keys, v.values)
        if key is None and isinstance(k, ast.Name)}
    parents = parents_of(tree)
    found: dict[int, str] = {}
    for node in requirements:
        extra = _extra_of(node, parents, passed)
        if extra is not None:
            found[id(node)] = extra
    plain = {requirement_dist(str(n.value)) for n in requirements if id(n) not in found}
    return {key: extra for key, extra in found.items()
            if requirement_dist(str(next(n.value for n in requirements if id(n) == key))) not in plain}


def _extra_of(node: ast.AST, parents: dict[int, ast.AST], passed: set[str]) -> str | None:
    """The extra whose list holds `node`, or None when the list is not an extras_require entry."""
    extra = ""
    child, cur = node, parents.get(id(node))
    while cur is not None:
        if isinstance(cur, ast.Dict) and child in cur.values:
            key = cur.keys[cur.values.index(child)]
            extra = key.value if isinstance(key, ast.Constant) and isinstance(key.value, str) else extra
        elif isinstance(cur, ast.keyword):
            return extra if cur.arg == "extras_require" and extra else None
        elif isinstance(cur, (ast.Assign, ast.AnnAssign)):
            targets = cur.targets if isinstance(cur, ast.Assign) else [cur.target]
            for t in targets:
                if isinstance(t, ast.Name) and t.id in passed and extra:
                    return extra
                if isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name) and t.value.id in passed and \
                        isinstance(t.slice, ast.Constant) and isinstance(t.slice.value, str):
                    return t.slice.value
            return None
        elif isinstance(cur, ast.stmt):
            return None
        child, cur = cur, parents.get(id(cur))
    return None


def dependency_links(tree: ast.Module) -> Iterator[ast.Constant]:
    """The URL strings of `setup(dependency_links=[...])` (pip's old find-links), in a setuptools script."""
    if not _uses_setuptools(tree):
        return
    for node in walk_list(tree):
        if isinstance(node, ast.Call) and _called_name(node.func) == "setup":
            for kw in node.keywords:
                if kw.arg == "dependency_links" and isinstance(kw.value, (ast.List, ast.Tuple)):
                    yield from (e for e in kw.value.elts if isinstance(e, ast.Constant) and isinstance(e.value, str))


def _names_cuda_source(value: ast.expr) -> bool:
    """Whether an expression holds a .cu / .cuh file name: `["frontend.cpp", "backend.cu"]`, also inside a
    comprehension over names (`[os.path.join('torchcule', f) for f in ['frontend.cpp', 'backend.cu']]`)."""
    return any(isinstance(e, ast.Constant) and isinstance(e.value, str) and e.value.endswith((".cu", ".cuh"))
               for e in ast.walk(value))


def cpp_extensions_with_cuda(tree: ast.Module) -> Iterator[ast.Call]:
    """`CppExtension(name, sources=[...])` and setuptools' `Extension(name, sources=[...])` calls whose source list
    names a .cu / .cuh file, given in the call or bound to the name it passes at the module's top level (`sources =
    [...]` ... `Extension('torchcule_atari', sources=sources, ...)`, CuLE, whose build_ext hands .cu files to nvcc;
    t36a)."""
    bound = {t.id: n.value for n in tree.body if isinstance(n, ast.Assign) for t in n.targets if isinstance(t, ast.Name)}
    for node in walk_list(tree):
        if not isinstance(node, ast.Call) or _called_name(node.func) not in ("CppExtension", "Extension"):
            continue
        sources = next((k.value for k in node.keywords if k.arg == "sources"),
                       node.args[1] if len(node.args) > 1 else None)
        if isinstance(sources, ast.Name):
            sources = bound.get(sources.id)
        if isinstance(sources, (ast.List, ast.Tuple, ast.ListComp)) and _names_cuda_source(sources):
            yield node


def unconditional_cuda_extensions(tree: ast.Module) -> list[ast.Call]:
    """`CUDAExtension(...)` calls (and CppExtensions given .cu sources) that every build makes: inside no `if` /
    conditional expression / `try` (only an `if __name__ == "__main__":` guard), so `pip install` of the folder
    compiles them with nvcc by default (the session-11 decision: an opt-in extension's install does not count)."""
    parents = parents_of(tree)
    calls = [n for n in walk_list(tree) if isinstance(n, ast.Call) and _called_name(n.func) == "CUDAExtension"]
    calls += list(cpp_extensions_with_cuda(tree))
    found = []
    for call in calls:
        node: ast.AST | None = parents.get(id(call))
        while node is not None:
            if isinstance(node, (ast.IfExp, ast.Try)) or (
                    isinstance(node, ast.If) and "__name__" not in ast.unparse(node.test)):
                break
            node = parents.get(id(node))
        else:
            found.append(call)
    return sorted(found, key=lambda c: (c.lineno, c.col_offset))


def extension_module_name(call: ast.Call, constants: dict[str, str] | None = None) -> str | None:
    """The module an extension call builds, when written as a literal: `CUDAExtension(name="pkg._C", ...)` or
    `CUDAExtension("pkg._C", [...])` (the first argument of torch.utils.cpp_extension's builders is `name`), or as
    a sum of literals and the module's string constants (`constants`: L3C's `MODULE_BASE_NAME + '_gpu'`)."""
    value = next((k.value for k in call.keywords if k.arg == "name"), call.args[0] if call.args else None)
    name = _folded_string(value, constants or {}) if value is not None else None
    if name is not None and re.fullmatch(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*", name):
        return name
    return None


def _folded_string(value: ast.expr, constants: dict[str, str]) -> str | None:
    """A string literal, a module-level string constant, or a `+` of them; None for anything else."""
    if isinstance(value, ast.Constant):
        return value.value if isinstance(value.value, str) else None
    if isinstance(value, ast.Name):
        return constants.get(value.id)
    if isinstance(value, ast.BinOp) and isinstance(value.op, ast.Add):
        left, right = _folded_string(value.left, constants), _folded_string(value.right, constants)
        return left + right if left is not None and right is not None else None
    return None


def _string_constants(tree: ast.Module) -> dict[str, str]:
    """{name: value} of the module's top-level `NAME = "literal"` statements, each name bound once."""
    assigned = [t.id for stmt in tree.body if isinstance(stmt, ast.Assign) for t in stmt.targets
                if isinstance(t, ast.Name)]
    return {stmt.targets[0].id: stmt.value.value for stmt in tree.body
            if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)
            and isinstance(stmt.value, ast.Constant) and isinstance(stmt.value.value, str)
            and assigned.count(stmt.targets[0].id) == 1}


def define_macros(tree: ast.Module) -> Iterator[tuple[ast.Tuple, str]]:
    """The `(name, value)` macros a setup.py hands an extension's `define_macros=`, each as the compiler flag it
    becomes (`("USE_CUDA", None)` -> `-DUSE_CUDA`, `('COMPILE_CUDA', '1')` -> `-DCOMPILE_CUDA=1`): given as a list
    literal, or as a name the file binds to one (`macro = [("USE_CUDA", None)]` ... `define_macros=macro`,
    `macros.append(("WITH_CUDA", None))`)."""
    nodes = walk_list(tree)
    given = [k.value for n in nodes if isinstance(n, ast.Call) for k in n.keywords if k.arg == "define_macros"]
    names = {v.id for v in given if isinstance(v, ast.Name)}
    lists = [v for v in given if isinstance(v, (ast.List, ast.Tuple))]
    for n in nodes:
        if isinstance(n, (ast.Assign, ast.AugAssign, ast.AnnAssign)) and isinstance(n.value, (ast.List, ast.Tuple)) \
                and any(isinstance(t, ast.Name) and t.id in names
                        for t in (n.targets if isinstance(n, ast.Assign) else [n.target])):
            lists.append(n.value)
        elif isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "append" \
                and isinstance(n.func.value, ast.Name) and n.func.value.id in names and n.args:
            lists.append(ast.List(elts=[n.args[0]]))
    for macros in lists:
        for macro in macros.elts:
            if not (isinstance(macro, ast.Tuple) and len(macro.elts) == 2 and isinstance(macro.elts[0], ast.Constant)
                    and isinstance(macro.elts[0].value, str) and isinstance(macro.elts[1], ast.Constant)
                    and isinstance(macro.elts[1].value, (str, int, float, type(None)))):
                continue
            name, value = macro.elts[0].value, macro.elts[1].value
            yield macro, f"-D{name}" if value is None else f"-D{name}={value}"


def built_cuda_extensions(tree: ast.Module) -> dict[str, int]:
    """{module name: line} of the CUDA extensions a setup.py builds in every install (`CUDAExtension(name=
    "turbo_diffusion_ops", ...)` in no `if` / `try`): once installed, an import of that name loads the nvcc-built
    library."""
    found: dict[str, int] = {}
    constants = _string_constants(tree)
    for call in unconditional_cuda_extensions(tree):
        name = extension_module_name(call, constants)
        if name:
            found.setdefault(name, call.lineno)
    return found


def cuda_extension_names(tree: ast.Module) -> dict[str, int]:
    """{module name: line} of every CUDA extension a setup.py can build, also under a condition (L3C's torchac:
    `if cuda_support: return CUDAExtension(MODULE_BASE_NAME + '_gpu', [..., 'torchac_kernel.cu'])`): wherever
    that module imports, it is the nvcc-built library. An install counts only the unconditional ones
    (built_cuda_extensions, the session-11 decision); an import of the name needs the CUDA build whatever the
    condition was. Also the calls of a name bound to CUDAExtension (`extension = CUDAExtension` under a CUDA
    check, then `extension("MultiScaleDeformableAttention", sources, ...)`) and of the file's helpers that build one
    from their arguments (`make_cuda_ext(name='voxel_pooling_ext', module='bevdepth.ops.voxel_pooling', ...)`
    -> `bevdepth.ops.voxel_pooling.voxel_pooling_ext`; g2)."""
    found: dict[str, int] = {}
    constants = _string_constants(tree)
    parents = parents_of(tree)
    calls = [n for n in walk_list(tree) if isinstance(n, ast.Call) and _called_name(n.func) == "CUDAExtension"]
    calls += _bound_builder_calls(tree, parents)
    for call in sorted({id(c): c for c in [*calls, *cpp_extensions_with_cuda(tree)]}.values(),
                       key=lambda c: (c.lineno, c.col_offset)):
        name = extension_module_name(call, constants)
        if name:
            found.setdefault(name, call.lineno)
    cmake_builds = cmake_cuda_extension_calls(tree) + host_extensions_with_cuda_macro(tree)
    for call in cmake_builds:
        name = extension_module_name(call, constants)
        if name:
            found.setdefault(name, call.lineno)
    for name, line in _helper_built_names(tree, calls + cmake_builds, parents, constants):
        found.setdefault(name, line)
    return found


# a compiler define that turns on a build's CUDA (GPU) branch: `-DWITH_CUDA`, `-DUSE_CUDA=1`, warp-transducer's
# `-DWARPRNNT_ENABLE_GPU`, `-DHAVE_CUDA` (NPU316's spellings)
_CUDA_DEFINE = re.compile(r"-D(?:[A-Z0-9]+_)*?(?:WITH_|USE_|ENABLE_|HAVE_)?(?:CUDA|GPU)(?:=(?:1|ON|On|on|TRUE|true|YES))?")


def host_extensions_with_cuda_macro(tree: ast.Module) -> list[ast.Call]:
    """`CppExtension(...)` / setuptools `Extension(...)` calls whose compile flags carry a CUDA define: given in the
    call (`extra_compile_args=["-DWITH_CUDA"]`, `{"cxx": [...]}`) or through a name the file fills
    (`extra_compile_args += ['-DWARPRNNT_ENABLE_GPU']` under `if enable_gpu:`, `flags.append("-DUSE_CUDA")`): the C++
    binding compiles its CUDA branch and links the CUDA build (warp-transducer's `warprnnt_pytorch.warp_rnnt`,
    whose `gpu_rnnt` calls libwarprnnt's CUDA kernels)."""
    filled: dict[str, list[ast.expr]] = {}
    for n in walk_list(tree):
        if isinstance(n, (ast.Assign, ast.AugAssign)):
            for t in (n.targets if isinstance(n, ast.Assign) else [n.target]):
                if isinstance(t, ast.Name):
                    filled.setdefault(t.id, []).append(n.value)
        elif isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in ("append", "extend") \
                and isinstance(n.func.value, ast.Name):
            filled.setdefault(n.func.value.id, []).extend(n.args)

    def defines_cuda(value: ast.expr, seen: frozenset[str] = frozenset()) -> bool:
        for node in ast.walk(value):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and _CUDA_DEFINE.fullmatch(node.value):
                return True
            if isinstance(node, ast.Name) and node.id not in seen and \
                    any(defines_cuda(v, seen | {node.id}) for v in filled.get(node.id, ())):
                return True
        return False

    if _builds_other_backends(tree):
        return []
    return [n for n in walk_list(tree) if isinstance(n, ast.Call) and _called_name(n.func) in ("CppExtension", "Extension")
            and any(k.arg in ("extra_compile_args", "define_macros") and defines_cuda(k.value) for k in n.keywords)]


# a CUDA switch of a native (CMake) build written in a setup.py's strings: k2's `-DK2_WITH_CUDA=OFF` /
# `"K2_WITH_CUDA=OFF" in cmake_args`, redner's `-DREDNER_CUDA=1`, `-DCMAKE_CUDA_ARCHITECTURES=80`,
# `-DCUDA_TOOLKIT_ROOT_DIR=...`, `-DUSE_CUDA=ON`
_CMAKE_CUDA_SWITCH = re.compile(r"(?:-D[A-Z0-9_]*|\b[A-Z][A-Z0-9]*_(?:[A-Z0-9]+_)*)CUDA(?:_[A-Z0-9_]+)?\b")
_CMAKE_RUN = re.compile(r"(?:^|[\s/])cmake(?:\s|$)|CMAKE_[A-Z_]+")


# a switch or helper of another accelerator's build beside the CUDA one (KsanaLLM's setup.py: `"WITH_ACL": "ON"` when
# `is_run_on_npu_device()`, else `"WITH_CUDA": "ON"`): the native build is multi-backend, not the tree's CUDA build
_OTHER_BACKEND_SWITCH = re.compile(r"\b(?:[A-Z][A-Z0-9]*_)*(?:ACL|NPU|ASCEND|CANN|HIP|ROCM|MUSA|MLU|XPU)(?:_[A-Z0-9_]+)?\b")
_OTHER_BACKEND_NAME = re.compile(r"(?i)(?:^|_)(?:npu|ascend|rocm|hip|musa|mlu|xpu)(?:_|$)")


def _builds_other_backends(tree: ast.Module) -> bool:
    """Whether a setup.py names another accelerator's build switch in its strings or a helper for it by name."""
    for n in walk_list(tree):
        if isinstance(n, ast.Constant) and isinstance(n.value, str) and "\n" not in n.value \
                and _OTHER_BACKEND_SWITCH.search(n.value):
            return True
        name = n.id if isinstance(n, ast.Name) else n.attr if isinstance(n, ast.Attribute) else \
            n.name if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) else ""
        if name and _OTHER_BACKEND_NAME.search(name):
            return True
    return False


def cmake_cuda_extension_calls(tree: ast.Module) -> list[ast.Call]:
    """The extensions a setup.py hands to a CMake build that has a CUDA switch: a setuptools `Extension(name,
    sources=[])` with no sources (the build_ext subclass runs cmake for it), or a call of the file's own subclass of
    `Extension` (`class CMakeExtension(Extension)` ... `CMakeExtension("redner")`), in a setup.py whose strings run
    cmake and name a CUDA switch of it (k2: `cmake_extension("_k2")` returning `setuptools.Extension(name, [])`,
    `cmake_args += " -DK2_WITH_CUDA=OFF"` only on macOS: every other build compiles `_k2` with CUDA). A setup.py
    whose strings name no CUDA switch builds a host-only library as far as the file shows, and one that also names
    another accelerator's switch (KsanaLLM's `WITH_ACL`) a multi-backend one: no call."""
    strings = [n.value for n in walk_list(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)]
    if not any(_CMAKE_RUN.search(s) for s in strings) or not any(
            _CMAKE_CUDA_SWITCH.search(s) for s in strings if "\n" not in s) or _builds_other_backends(tree):
        return []
    subclasses = {n.name for n in walk_list(tree) if isinstance(n, ast.ClassDef)
                  and any(_called_name(b) == "Extension" for b in n.bases)}
    bound = {t.id: n.value for n in walk_list(tree) if isinstance(n, ast.Assign) for t in n.targets
             if isinstance(t, ast.Name)}
    found = []
    for node in walk_list(tree):
        if not isinstance(node, ast.Call):
            continue
        called = _called_name(node.func)
        if called in subclasses:
            found.append(node)
        elif called == "Extension":
            sources = next((k.value for k in node.keywords if k.arg == "sources"),
                           node.args[1] if len(node.args) > 1 else None)
            if isinstance(sources, ast.Name):
                sources = bound.get(sources.id, sources)
            if isinstance(sources, (ast.List, ast.Tuple)) and not sources.elts:
                found.append(node)
    return found


def _is_cuda_builder(value: ast.expr) -> bool:
    """`CUDAExtension`, `cpp_extension.CUDAExtension`, or a conditional expression one of whose values is one
    (`CUDAExtension if has_cuda else CppExtension`, PCSeg's range_lib)."""
    if isinstance(value, ast.IfExp):
        return _is_cuda_builder(value.body) or _is_cuda_builder(value.orelse)
    return isinstance(value, (ast.Name, ast.Attribute)) and _called_name(value) == "CUDAExtension"


def _scope_of(node: ast.AST, parents: dict[int, ast.AST]) -> ast.AST | None:
    """The function (or, None, the module) whose body holds `node`."""
    cur = parents.get(id(node))
    while cur is not None and not isinstance(cur, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
        cur = parents.get(id(cur))
    return cur


# the builders of a CUDA or a host-only build; any other `*Extension` a chooser may pick (mmcv's `NpuExtension`,
# `MLUExtension`) makes the module a multi-backend build, not one built from CUDA sources only
_HOST_OR_CUDA_BUILDERS = frozenset({"CUDAExtension", "CppExtension", "Extension"})


def _bound_builder_calls(tree: ast.Module, parents: dict[int, ast.AST]) -> list[ast.Call]:
    """Calls of a name its scope binds to CUDAExtension in one of its assignments: the maskrcnn-benchmark /
    Deformable-DETR `get_extensions()` (`extension = CppExtension` ... `if torch.cuda.is_available() and CUDA_HOME
    is not None: extension = CUDAExtension` ... `extension("MultiScaleDeformableAttention", sources, ...)`),
    Pytorch-Correlation-extension's `Extension = CUDAExtension`, PCSeg's `extension_type = CUDAExtension if has_cuda
    else CppExtension`, and `from torch.utils.cpp_extension import CUDAExtension as CE`. The innermost scope that
    binds the name decides (a module-level `Extension` from setuptools is not a function's `Extension =
    CUDAExtension`). A name its scope also binds to another accelerator's builder (mmcv's `get_extensions()`:
    `extension = NpuExtension` for Ascend, `MLUExtension`) chooses per backend: not counted."""
    binds: dict[tuple[int, str], bool] = {}        # (id(scope) or 0, name) -> bound to CUDAExtension somewhere there
    other: set[tuple[int, str]] = set()             # ... and also to another accelerator's builder
    for node in walk_list(tree):
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            scope = _scope_of(node, parents)
            for t in targets:
                if isinstance(t, ast.Name):
                    key = (id(scope) if scope is not None else 0, t.id)
                    binds[key] = binds.get(key, False) or _is_cuda_builder(node.value)
                    if _called_name(node.value) not in _HOST_OR_CUDA_BUILDERS and \
                            _called_name(node.value).endswith("Extension"):
                        other.add(key)
        elif isinstance(node, ast.ImportFrom) and node.module == "torch.utils.cpp_extension":
            for alias in node.names:
                if alias.name == "CUDAExtension" and alias.asname:
                    binds[(0, alias.asname)] = True
    if not any(binds.values()):
        return []
    found = []
    for node in walk_list(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)):
            continue
        scope = _scope_of(node, parents)
        while True:
            key = (id(scope) if scope is not None else 0, node.func.id)
            if key in binds or scope is None:
                break
            scope = _scope_of(scope, parents)
        if binds.get(key) and key not in other:
            found.append(node)
    return found


def _helper_built_names(tree: ast.Module, builds: list[ast.Call], parents: dict[int, ast.AST],
                        constants: dict[str, str]) -> Iterator[tuple[str, int]]:
    """(module name, line) of each call of a module-level function of the file whose CUDA extension call names the
    module from the function's parameters: the OpenMMLab `make_cuda_ext(name, module, sources, sources_cuda=[])`
    returning `extension(name='{}.{}'.format(module, name), ...)` (BEVDepth, BasicSR, HybrIK, OpenPCDet's
    `'%s.%s' % (module, name)`, f'{module}.{name}'), called as `make_cuda_ext(name='deform_conv_ext',
    module='basicsr.ops.dcn', ...)`: the name folds with the call's arguments bound to the parameters."""
    helpers: dict[str, tuple[ast.FunctionDef, ast.expr]] = {}
    for call in builds:
        scope = _scope_of(call, parents)
        value = next((k.value for k in call.keywords if k.arg == "name"), call.args[0] if call.args else None)
        if isinstance(scope, ast.FunctionDef) and scope in tree.body and value is not None:
            helpers.setdefault(scope.name, (scope, value))
    if not helpers:
        return
    for node in walk_list(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in helpers):
            continue
        function, value = helpers[node.func.id]
        params = [a.arg for a in [*function.args.posonlyargs, *function.args.args]]
        defaults = dict(zip(params[len(params) - len(function.args.defaults):], function.args.defaults))
        bound = {**constants}
        given = {**defaults, **dict(zip(params, node.args)), **{k.arg: k.value for k in node.keywords if k.arg}}
        for param, arg in given.items():
            text = _folded_string(arg, constants)
            if text is not None:
                bound[param] = text
            else:
                bound.pop(param, None)
        name = _formatted_string(value, bound)
        name = name.lstrip(".") if name else name     # Sparse4D's `module="."`: the folder itself
        if name is not None and re.fullmatch(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*", name):
            yield name, node.lineno


def _formatted_string(value: ast.expr, names: dict[str, str]) -> str | None:
    """`_folded_string` that also reads the ways a name is formatted from parts: `'{}.{}'.format(module, name)`,
    `f'{module}.{name}'` and `'%s.%s' % (module, name)`; None when a part is unknown."""
    if isinstance(value, ast.JoinedStr):
        parts = []
        for v in value.values:
            part = _folded_string(v.value, names) if isinstance(v, ast.FormattedValue) and v.format_spec is None \
                and v.conversion == -1 else v.value if isinstance(v, ast.Constant) else None
            if not isinstance(part, str):
                return None
            parts.append(part)
        return "".join(parts)
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr == "format" and \
            isinstance(value.func.value, ast.Constant) and isinstance(value.func.value.value, str) and \
            not value.keywords:
        args = [_folded_string(a, names) for a in value.args]
        if None in args or not re.fullmatch(r"(?:[^{}]|\{\})*", value.func.value.value.replace("{}", "")):
            return None
        try:
            return value.func.value.value.format(*args)
        except (IndexError, ValueError, KeyError):
            return None
    if isinstance(value, ast.BinOp) and isinstance(value.op, ast.Mod) and isinstance(value.left, ast.Constant) and \
            isinstance(value.left.value, str):
        items = value.right.elts if isinstance(value.right, ast.Tuple) else [value.right]
        args = [_folded_string(a, names) for a in items]
        if None in args or re.search(r"%(?!s)", value.left.value.replace("%s", "")):
            return None
        try:
            return value.left.value % tuple(args)
        except (TypeError, ValueError):
            return None
    return _folded_string(value, names)


# a test that asks for CUDA (`torch.cuda.is_available()`, `CUDA_HOME is not None`, `shutil.which("nvcc")`) and one
# that names the NPU or another backend (then the chain dispatches per backend)
_CUDA_TEST = re.compile(r"(?i)cuda|nvcc")
_OTHER_TEST = re.compile(r"(?i)npu|ascend|rocm|\bhip|xpu|mps|musa|mlu")
# an enclosing test of an option the user passes (`"--cuda_ext" in sys.argv`, `os.environ.get("BUILD_CUDA")`): the
# CUDA build was asked for, so raising there is not what every install does
_OPT_IN = re.compile(r"argv|environ|getenv")


def _negated_cuda_test(test: ast.expr) -> bool:
    """`not torch.cuda.is_available()`, `CUDA_HOME is None`, `not CUDA_HOME`: true only without CUDA."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return bool(_CUDA_TEST.search(ast.unparse(test.operand)))
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], (ast.Is, ast.Eq)) and \
            isinstance(test.comparators[0], ast.Constant) and test.comparators[0].value in (None, False):
        return bool(_CUDA_TEST.search(ast.unparse(test.left)))
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.Or):
        return any(_negated_cuda_test(v) for v in test.values)
    return False


# option values that turn the CUDA build off (`COMPILE_CUDA=no`, `--backend cpu`)
_OFF_VALUES = frozenset({"no", "off", "none", "false", "0", "cpu", "disable", "disabled"})


def _option_dispatch(tests: list[ast.expr]) -> bool:
    """`if cuda_flag == 'auto': ... elif cuda_flag == 'force': ... elif cuda_flag == 'no': ...`: every test compares
    one expression with literals and one branch is the build without CUDA, so the chain's final `else` is the
    invalid-value case (L3C's torchac setup.py: `else: raise ValueError('COMPILE_CUDA must be in (auto, force,
    no)')`). A chain over CUDA releases only (`torch.version.cuda == "11.8"`) still raises without CUDA."""
    compared: set[str] = set()
    values: set[str] = set()
    for test in tests:
        if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], (ast.Eq, ast.In))):
            return False
        compared.add(ast.unparse(test.left))
        values.update(v.lower() for v in literal_strings(test.comparators[0]))
    return len(compared) == 1 and bool(values & _OFF_VALUES)


def raises_without_cuda(tree: ast.Module) -> Iterator[tuple[ast.Raise, list[ast.expr]]]:
    """`raise` statements of a setup.py in a branch taken only without CUDA, with the tests of their if / elif
    chain: the final `else` of a chain whose tests ask for CUDA, or the body of a test that holds only without it
    (t15k)."""
    elifs = {id(n.orelse[0]) for n in walk_list(tree)
             if isinstance(n, ast.If) and len(n.orelse) == 1 and isinstance(n.orelse[0], ast.If)}
    opt_in = {id(n) for top in walk_list(tree) if isinstance(top, ast.If) and _OPT_IN.search(ast.unparse(top.test))
              for n in walk_list(top) if n is not top}
    for node in walk_list(tree):
        if not isinstance(node, ast.If) or id(node) in elifs or id(node) in opt_in:
            continue    # (apex's `if "--cuda_ext" in sys.argv:` ... `if CUDA_HOME is None: raise`: a build asked for)
        chain, cur = [node], node
        while len(cur.orelse) == 1 and isinstance(cur.orelse[0], ast.If):
            cur = cur.orelse[0]
            chain.append(cur)
        tests = [ast.unparse(n.test) for n in chain]
        if any(_OTHER_TEST.search(t) for t in tests):
            continue
        for n in chain:
            if _negated_cuda_test(n.test):
                yield from ((s, [n.test]) for s in n.body if isinstance(s, ast.Raise))
        if any(_CUDA_TEST.search(t) for t in tests) and not _negated_cuda_test(chain[-1].test) \
                and not _option_dispatch([n.test for n in chain]):
            yield from ((s, [n.test for n in chain]) for s in cur.orelse if isinstance(s, ast.Raise))


# the hosts of NVIDIA's own package indexes (DALI's redist, pypi.nvidia.com, NGC's)
_NVIDIA_INDEX_HOSTS = frozenset({"developer.download.nvidia.com", "pypi.nvidia.com", "pypi.ngc.nvidia.com"})


def add_setup_py_requirements(engine: "StaticEngine", data: bytes, rel: str, result: FileResult) -> None:
    """Add the dependency findings of setup.py to the Python pass's result for the same file."""
    text, error = decode_text(data, rel)
    if text is None:
        return
    try:
        tree = ast.parse(text, filename=rel)
    except (SyntaxError, ValueError):
        return                          # the Python pass has reported it
    col = Collector(engine, rel, text)
    requirements = list(setup_requirements(tree))
    extras = _opt_in_extras(tree, requirements)
    for node in requirements:
        line = col.lines[node.lineno - 1] if node.lineno <= len(col.lines) else ""
        before = len(col.result.findings)
        _report(col, node.lineno, line, str(node.value).strip(), node.col_offset)
        if id(node) in extras:
            _lower_opt_in(col, before, extras[id(node)], _EXTRAS_NOTE)
    # tp54b: an NVIDIA index the script's own `nvidia-*` requirement comes from (solo-learn's `"dali":
    # ["nvidia-dali-cuda110"]` beside `dependency_links=[".../compute/redist"]`): the requirement is the finding, and
    # pip ignores dependency_links since 19.0 (https://setuptools.pypa.io/en/latest/deprecated/dependency_links.html)
    served = any(str(n.value).strip().lower().startswith("nvidia-") for n in requirements)
    for link in dependency_links(tree):
        # `setup(dependency_links=["https://developer.download.nvidia.com/compute/redist"])`: a package index
        url = str(link.value).strip()
        if served and urlsplit(url).hostname in _NVIDIA_INDEX_HOSTS:
            continue
        col.add(matchers(engine).match_requirement("index:" + url), "index:" + url, link.lineno, link.col_offset + 2,
                link.col_offset + 2 + len(url))
    build = next((r for r in engine.compiled.rules if r.code == "NPU370"), None)
    for call in cpp_extensions_with_cuda(tree):
        # fairseq's `cpp_extension.CppExtension("fairseq.libnat_cuda", sources=[..., "edit_dist.cu"])`: a
        # CppExtension given .cu sources builds CUDA kernels (BuildExtension hands them to nvcc) like CUDAExtension;
        # so does setuptools' Extension whose build_ext sends .cu files to nvcc (CuLE, py-faster-rcnn's gpu_nms)
        if _called_name(call.func) == "CppExtension":
            col.add(build, "torch.utils.cpp_extension.CppExtension", call.lineno, call.col_offset + 1,
                    note=" (a CppExtension with .cu sources)")
        else:
            col.add(build, "setuptools.Extension", call.lineno, call.col_offset + 1,
                    note=" (an extension with .cu sources, built by nvcc)")
    for macro, flag in define_macros(tree):
        # `define_macros=[("WITH_CUDA", None)]` is setuptools' spelling of `-DWITH_CUDA`: the CUDA build macro rule
        # (NPU316) reads it as the flag (Pytorch-Correlation-extension's `macro = [("USE_CUDA", None)]`)
        hit = engine.compiled.match_string(flag)
        if hit is not None and hit[0].category == "kernel":
            col.add(hit[0], flag, macro.lineno, macro.col_offset + 1, value=hit[1])
    from auditor.project import another_backends_file

    stops = next((r for r in engine.compiled.rules if r.code == "NPU080"), None)
    stops = None if another_backends_file(rel) else stops     # FlagPerf's `training/iluvatar/.../setup.py`
    errors = {f.line for f in result.findings if f.severity == "error"}
    for raised, tests in raises_without_cuda(tree) if stops is not None else ():
        if any(line in errors for t in tests for line in node_lines(t)):
            # Deformable-DETR's `if torch.cuda.is_available() and CUDA_HOME is not None: ... else: raise ...`: the
            # test is an error already (NPU002), one finding for the construct (test6 labels the raise `none`)
            continue
        # `if CUDA_HOME is None: raise RuntimeError("nvcc was not found")`: the test alone is a warning (NPU371),
        # the raise makes the install fail on Ascend
        exc = raised.exc.func if isinstance(raised.exc, ast.Call) else raised.exc
        name = _called_name(exc) if exc is not None else "raise"
        col.add(stops, name or "raise", raised.lineno, raised.col_offset + 1, raised.col_offset + 6)
    seen = {(f.code, f.line, f.col) for f in result.findings}
    result.findings.extend(
        replace(f, symbol=f.symbol.replace(_IN_NAME, "{}"), message=f.message.replace(_IN_NAME, "{}"))
        for f in col.done().findings if (f.code, f.line, f.col) not in seen)
    result.suppressed += col.result.suppressed
    result.findings.sort(key=Finding.sort_key)
    if col.result.summary:      # the pins the requirement readers keep for the tree passes (requirements.PINS_KEY)
        result.summary = {**(result.summary or {}), **col.result.summary}


def analyze_setup_cfg(engine: "StaticEngine", data: bytes, rel: str) -> FileResult:
    """setup.cfg: `[options] install_requires` / `setup_requires` / `tests_require` and `[options.extras_require]`,
    one requirement per line."""
    text, error = decode_text(data, rel)
    if text is None:
        return FileResult(rel, error=error)
    parser = configparser.ConfigParser(interpolation=None, strict=False)
    try:
        parser.read_string(text, source=rel)
    except configparser.Error as exc:
        return FileResult(rel, error=FileError(rel, "syntax", f"invalid setup.cfg: {exc}".splitlines()[0]))
    col = Collector(engine, rel, text)
    section, option = "", ""
    specs: list[tuple[int, str, str, int, str]] = []      # line, its text, requirement, column, extra ("" if none)
    for number, line in enumerate(col.lines, 1):
        body = re.split(r"(^|\s)[#;]", line, maxsplit=1)[0].rstrip()
        if not body.strip():
            continue
        if body.startswith("[") and body.endswith("]"):
            section, option = body[1:-1].strip().lower(), ""
            continue
        at = 0
        if not body[:1].isspace():                       # `key = value`: a new option (its value may follow)
            key, sep, _ = body.partition("=")
            option = key.strip().lower() if sep else ""
            at = len(key) + 1 if sep else len(body)
        wanted = section == "options.extras_require" or (section == "options" and option in _CFG_KEYS)
        spec = body[at:].strip()
        if wanted and spec and not spec.startswith("file:"):
            specs.append((number, line, spec, line.find(spec, at), option if section != "options" else ""))
    plain = {requirement_dist(spec) for _, _, spec, _, extra in specs if not extra}
    for number, line, spec, at, extra in specs:
        before = len(col.result.findings)
        _report(col, number, line, spec, at)
        if extra and requirement_dist(spec) not in plain:   # `[options.extras_require] flash = flash-attn`: opt-in
            _lower_opt_in(col, before, extra, _EXTRAS_NOTE.replace("setup.py's", "setup.cfg's"))
    return col.done()


_CFG_KEYS = {"install_requires", "setup_requires", "tests_require"}
