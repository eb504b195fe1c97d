"""CMake build files (`CMakeLists.txt`, `*.cmake`): the CUDA parts of a C/C++ build (t15f, tuned on the project
split tuned_t15f: DeepEP / DeepGEMM / tiny-cuda-nn build files).

Read with tree-sitter-cmake (a complete, error-tolerant CMake grammar, the same family as the bash reader's): every
command invocation with its arguments, wherever it is nested (`if()` branches, `function()` / `macro()` bodies,
`foreach()` loops). Comments (line and bracket comments) are not arguments, so they are never read; quoted and
bracket arguments are read without their quotes. Nothing is run or evaluated: variables are not expanded, and every
branch of an `if()` counts (a CUDA build a branch may configure is one the file can configure).

Each argument that carries a CUDA fact becomes a `cmake.<what>` setting matched against the catalogue
(rules/project_build.yaml), on the line of the argument itself:

- `cmake.language`: CUDA enabled as a language (`project(x LANGUAGES CXX CUDA)`, `enable_language(CUDA)`,
  `check_language(CUDA)`);
- `cmake.find_package`: the package a `find_package()` looks for (`CUDAToolkit`, `CUDA`, `NCCL`, `NVSHMEM`, `CUDNN`);
- `cmake.command`: the command itself (`cuda_add_library`, `cuda_add_executable`, `cuda_select_nvcc_arch_flags`);
- `cmake.source`: a source file argument of a target or a source list (`add_library(x a.cu)`, `set(SRC k.cu)`);
- `cmake.set`: the variable a `set()` / `list()` / `string()` / `option()` writes (`CUDA_NVCC_FLAGS`,
  `CMAKE_CUDA_ARCHITECTURES`);
- `cmake.property`: a target / source property (`CUDA_SEPARABLE_COMPILATION`, `CUDA_ARCHITECTURES`);
- `cmake.link`: a library a target links (`CUDA::cublas`, `nccl`, `${CUDA_LIBRARIES}`), or the target an
  `add_library(x ALIAS target)` names (`nvshmem::nvshmem_host`);
- `cmake.dir`: an include or link directory (`${CUDA_TOOLKIT_ROOT_DIR}/include`, `${NCCL_ROOT_DIR}/lib`);
- `cmake.if`: a variable or value an `if()` / `elseif()` tests (`if (NOT NCCL_ROOT_DIR)`, `if(CUDAToolkit_FOUND)`);
- `cmake.fatal`: the text of a `message(FATAL_ERROR ...)` / `message(SEND_ERROR ...)` (a configure that stops
  without CUDA or NCCL); other messages are only messages.
"""
from __future__ import annotations

import re
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from auditor.findings import FileError, FileResult
from auditor.project.hits import Collector, decode_text, matchers

if TYPE_CHECKING:
    from auditor.static.engine import StaticEngine

_SOURCE_COMMANDS = {"add_library", "add_executable", "target_sources", "cuda_add_library", "cuda_add_executable",
                    "cuda_compile", "cuda_compile_ptx", "cuda_wrap_srcs", "pybind11_add_module", "python_add_library",
                    "nanobind_add_module", "set", "list", "torch_cuda_add_library"}
_SET_COMMANDS = {"set", "list", "string", "option", "set_property", "cmake_dependent_option"}
_LINK_COMMANDS = {"target_link_libraries", "link_libraries"}
_DIR_COMMANDS = {"include_directories", "link_directories", "target_include_directories", "target_link_directories"}
_PROPERTY_COMMANDS = {"set_target_properties", "set_source_files_properties", "set_property", "set_directory_properties"}
_LIST_SUBCOMMANDS = {"append", "prepend", "insert", "remove_item", "remove_at", "remove_duplicates", "filter",
                     "transform", "sort", "reverse", "get", "length", "find", "join", "sublist", "pop_back",
                     "pop_front"}
_SOURCE_RE = re.compile(r"\.(?:cu|cuh)$", re.I)
_REF_RE = re.compile(r"\$\{([A-Za-z_][\w.-]*)\}")


@lru_cache(maxsize=1)
def _parser():
    import tree_sitter as ts
    import tree_sitter_cmake as tcm

    return ts.Parser(ts.Language(tcm.language()))


def _unquote(node) -> str:
    text = node.text.decode("utf-8", "replace")
    child = node.children[0] if node.children else None
    kind = child.type if child is not None else ""
    if kind == "quoted_argument" and len(text) >= 2:
        return text[1:-1]
    if kind == "bracket_argument":
        m = re.match(r"\[(=*)\[(.*)\]\1\]$", text, re.S)
        return m.group(2) if m else text
    return text


# an `if()` branch that makes a part of the build optional: a condition naming CUDA / NCCL / a GPU, or a build
# option (`USE_HYGON`, `WITH_GPU`, `ENABLE_X`, `BUILD_X`)
_GUARD_RE = re.compile(r"cuda|nccl|nvshmem|cudnn|cublas|tensorrt|gpu|nvidia|cutlass|\b(?:USE|WITH|ENABLE|BUILD)_\w+", re.I)
# `NOT NCCL_ROOT_DIR`, `NOT CUDAToolkit_FOUND`: a test that something is missing (a FATAL_ERROR under it stops there)
_MISSING_TEST_RE = re.compile(r"^NOT\s+\$?\{?\w*(?:_FOUND|_DIR|_ROOT|_HOME|_PATH|_LIBRARY|_LIBRARIES|_INCLUDE\w*)\}?$", re.I)
_ON = {"ON", "TRUE", "YES", "Y", "1"}


def _default_on(found, guard: str) -> bool:
    """Whether a plain configure takes the branch of `guard`: an `AND` of terms where each term naming CUDA / a GPU /
    a build option is an `option(<name> "..." ON)` of the file that no `set()` under a CUDA test turns off
    (yolov12's `option(USE_CUDA ... ON)` / `if(NOT APPLE AND USE_CUDA)`); a probe (`CUDA_FOUND`), an `OR` or a
    negated option is not."""
    options = {args[0][0] for name, _l, _c, args, _g in found
               if name == "option" and len(args) >= 3 and args[-1][0].upper() in _ON}
    off = {args[0][0] for name, _l, _c, args, g in found
           if name == "set" and len(args) >= 2 and args[1][0].upper() not in _ON and g is not None}
    terms = [t.strip() for t in re.split(r"\bAND\b", guard)]
    if not options or any(re.search(r"\bOR\b|[()]", t) for t in terms):
        return False
    named = [t for t in terms if _GUARD_RE.search(t)]
    return bool(named) and all(t in options and t not in off for t in named)


def _args(node) -> list[tuple[str, int, int]]:
    args = []
    for child in node.children:
        if child.type == "argument_list":
            for arg in child.children:
                if arg.type == "argument":
                    args.append((_unquote(arg), arg.start_point[0] + 1, arg.start_point[1] + 1))
    return args


def commands(text: str) -> list[tuple[str, int, int, list[tuple[str, int, int]], str | None]]:
    """Every command invocation in the file, in order: (name in lower case, line, col, [(argument, line, col)],
    guard) with 1-based lines and columns; `if` / `elseif` conditions are commands named `if` / `elseif`. guard:
    the condition of the innermost enclosing `if()` / `elseif()` branch that names CUDA, NCCL or a GPU
    (`if(USE_CUDA AND BUILD_EXAMPLE)`), else None; an `else()` branch is the other path and has no such guard."""
    tree = _parser().parse(text.encode("utf-8"))
    out: list[tuple[str, int, int, list[tuple[str, int, int]], str | None]] = []

    # depth-first in document order with an explicit stack: a deeply nested file cannot exhaust Python's stack
    stack: list[tuple[Any, str | None]] = [(tree.root_node, None)]
    while stack:
        node, guard = stack.pop()
        if node.type == "if_condition":
            branch = guard
            parts: list[tuple[Any, str | None]] = []
            for child in node.children:
                if child.type in ("if_command", "elseif_command"):
                    parts.append((child, guard))
                    cond = " ".join(a[0] for a in _args(child))
                    branch = cond if _GUARD_RE.search(cond) else guard
                elif child.type == "else_command":
                    branch = guard
                elif child.type == "body":
                    parts.append((child, branch))
            stack.extend(reversed(parts))
            continue
        if node.type.endswith("_command"):
            name_node = node.children[0] if node.children else None
            if name_node is not None:
                name = name_node.text.decode("utf-8", "replace").lower()
                out.append((name, name_node.start_point[0] + 1, name_node.start_point[1] + 1, _args(node), guard))
            continue
        stack.extend((child, guard) for child in reversed(node.children))
    return out


# the summary keys of a CMake file's facts (tk38): {module name: line} of the Python extension modules its targets
# build, and whether the file itself turns CUDA on
CMAKE_MODULES = "cmake_modules"
CMAKE_CUDA = "cmake_cuda"
# commands whose first argument names a Python extension module (pybind11, nanobind, FindPython's
# `Python_add_library(<name> MODULE ...)` / `python_add_library`)
_MODULE_COMMANDS = {"pybind11_add_module", "nanobind_add_module", "python_add_library", "python3_add_library"}
# commands that build one Cython module per source (RAPIDS' `rapids_cython_create_modules(SOURCE_FILES ...)`,
# scikit-build's `cython_transpile`)
_CYTHON_COMMANDS = {"rapids_cython_create_modules", "cython_transpile"}
# a target made a Python extension module after `add_library(<name> SHARED ...)` (tk39: instant-ngp's and NeuS2's
# `add_library(pyngp SHARED src/python_api.cu)` ... `pybind11_extension(pyngp)`, and the target linked with
# `pybind11::module`; pybind11's CMake docs, https://pybind11.readthedocs.io/en/stable/compiling.html: "
# pybind11_extension(<target>) sets the suffix and prefix of a target to be a Python extension module", and
# "pybind11::module - for extension modules")
_EXTENSION_MARKERS = {"pybind11_extension"}
_EXTENSION_LINKS = {"pybind11::module", "pybind11::pybind11_module"}
_CUDA_PACKAGES = {"cudatoolkit", "cuda"}


def enables_cuda(found: list) -> bool:
    """Whether the file turns CUDA on: `project(x LANGUAGES CXX CUDA)`, `enable_language(CUDA)`,
    `find_package(CUDAToolkit)` / `find_package(CUDA)`; one under an `if()` naming CUDA or a build option counts only
    where a plain configure takes it (fastllm's `option(USE_CUDA "use CUDA" OFF)` then `if (USE_CUDA)
    enable_language(CUDA)`: its Python module builds for the CPU unless CUDA is asked for, tq46a)."""
    for name, _, _, args, guard in found:
        if guard is not None and not _default_on(found, guard):
            continue
        values = [a[0].upper() for a in (args[1:] if name == "project" else args)]
        if name in ("project", "enable_language") and "CUDA" in values \
                or name == "find_package" and args and args[0][0].lower() in _CUDA_PACKAGES:
            return True
    return False


def python_module_targets(found: list) -> dict[str, int]:
    """{module name: line} of the Python extension modules the file's targets build: `pybind11_add_module(_core
    src/a.cu)`, `Python_add_library(_ext MODULE ...)`, `add_library(_ext MODULE ...)`, and one Cython module per
    `.pyx` source of `rapids_cython_create_modules(SOURCE_FILES "${cython_sources}")` (WholeGraph's
    `wholememory_binding`; a `${var}` set once in the file by `set(var ...)` is read through), and a library target
    made an extension module afterwards (`add_library(pyngp SHARED ...)` with `pybind11_extension(pyngp)` or linked
    with `pybind11::module`), on its `add_library` line."""
    variables: dict[str, list[str]] = {}
    for name, _, _, args, _ in found:
        if name == "set" and len(args) > 1:
            variables.setdefault(args[0][0], [a[0] for a in args[1:]])
    out: dict[str, int] = {}
    libraries = {args[0][0]: at_line for name, at_line, _, args, _ in found if name == "add_library" and args}
    for name, at_line, _, args, _ in found:
        if not args:
            continue
        if name in _EXTENSION_MARKERS or name in _LINK_COMMANDS and any(a[0] in _EXTENSION_LINKS for a in args[1:]):
            if args[0][0] in libraries and args[0][0].isidentifier():
                out.setdefault(args[0][0], libraries[args[0][0]])
            continue
        words = [a[0].upper() for a in args]
        if name in _MODULE_COMMANDS or name == "add_library" and len(args) > 1 and words[1] == "MODULE":
            target = args[0][0]
            if target.isidentifier():
                out.setdefault(target, at_line)
        elif name in _CYTHON_COMMANDS:
            for value, _, _ in args:
                names = variables.get(value[2:-1], []) if _REF_RE.fullmatch(value) else [value]
                for source in names:
                    for part in source.split(";"):
                        stem = part.strip().rsplit("/", 1)[-1]
                        if stem.endswith(".pyx") and stem[:-4].isidentifier():
                            out.setdefault(stem[:-4], at_line)
    return out


def analyze_cmake(engine: "StaticEngine", data: bytes, rel: str) -> FileResult:
    text, err = decode_text(data, rel)
    if err is not None:
        return FileResult(rel, error=err)
    assert text is not None
    col = Collector(engine, rel, text)
    try:
        found = commands(text)
    except ImportError:
        col.result.error = FileError(rel, "parse", "tree-sitter-cmake is not installed: CMake files are not read")
        return col.done()
    m = matchers(engine)

    guard: str | None = None

    def hit(key: str, value: str, line: int, column: int, symbol: str | None = None, optional: str = "") -> None:
        rule = m.match_setting(f"cmake.{key}", value.lower())
        if rule is None:
            return
        if key == "fatal" and guard is not None and _MISSING_TEST_RE.match(guard):
            col.add(rule, symbol or value, line, column)   # `if (NOT NCCL_ROOT_DIR) message(FATAL_ERROR ...)`: stops here
        elif key in ("fatal", "if"):
            # a test of whether CUDA / NCCL is there takes the other branch on Ascend; a FATAL_ERROR under any other
            # condition (`if(NOT USE_CUDA)` after `if(USE_NCCL_HOST)`) stops only a configure that asked for CUDA
            col.add(rule, symbol or value, line, column, severity="info",
                    note=" (a condition of the build: false on Ascend unless CUDA was asked for)")
        elif guard is not None and not optional and _default_on(found, guard):
            col.add(rule, symbol or value, line, column,
                    note=f" (inside `if({guard[:60]})`, an option that defaults ON: a plain configure builds it)")
        elif guard is not None:
            # a multi-backend build: this part builds only when its option is on (Mooncake's
            # `if(USE_CUDA AND BUILD_DEVICE_TRANSPORT_EXAMPLE)` beside `if(USE_ASCEND)`)
            col.add(rule, symbol or value, line, column, severity="info",
                    note=f" (inside `if({guard[:60]})`: an optional part of the build, off unless that is set)")
        elif optional:
            col.add(rule, symbol or value, line, column, severity="info", note=optional)
        else:
            col.add(rule, symbol or value, line, column)

    built, cuda = python_module_targets(found), enables_cuda(found)
    if built or cuda:
        # the Python extension modules the build makes and whether it turns CUDA on, for the cross-file pass
        # (crossfile._cmake_extensions, tk38)
        col.result.summary = {CMAKE_MODULES: built, CMAKE_CUDA: cuda}
    for name, at_line, at_col, args, guard in found:
        if name in ("project", "enable_language", "check_language"):
            for value, line, c in args[1:] if name == "project" else args:
                hit("language", value, line, c)
        elif name == "find_package" and args:
            required = any(a[0].upper() == "REQUIRED" for a in args[1:])
            hit("find_package", args[0][0], args[0][1], args[0][2],
                optional="" if required else " (not REQUIRED: the configure goes on without it)")
        else:
            hit("command", name, at_line, at_col)
        if name in _SOURCE_COMMANDS:
            for value, line, c in args:
                for part in value.split(";"):
                    if _SOURCE_RE.search(part.strip()):
                        hit("source", "*.cu", line, c, symbol=part.strip())
                        break
        if name in _SET_COMMANDS and args:
            target: tuple[str, int, int] | None = args[0]
            words = [a[0].upper() for a in args]
            if name == "list" and len(args) > 1 and args[0][0].lower() in _LIST_SUBCOMMANDS:
                target = args[1]                     # list(APPEND CUDA_NVCC_FLAGS "-O3")
            elif name == "set_property":
                at = words.index("PROPERTY") + 1 if "PROPERTY" in words else len(args)
                if at < len(args):                   # set_property(TARGET x PROPERTY CUDA_ARCHITECTURES 90)
                    hit("property", *args[at])
                target = None
            elif name == "string":
                # string(APPEND <var> ...), string(PREPEND <var> ...), string(CONCAT <var> ...), string(JOIN <glue> <var> ...)
                var_at = {"APPEND": 1, "PREPEND": 1, "CONCAT": 1, "JOIN": 2}.get(words[0])
                target = args[var_at] if var_at is not None and var_at < len(args) else None
            if target is not None:
                hit("set", *target)
        if name in _PROPERTY_COMMANDS and name != "set_property":
            try:
                start = [a[0].upper() for a in args].index("PROPERTIES") + 1
            except ValueError:
                start = len(args)
            for value, line, c in args[start::2]:
                hit("property", value, line, c)
        if name in ("add_library", "add_executable") and len(args) == 3 and args[1][0].upper() == "ALIAS":
            hit("link", args[2][0], args[2][1], args[2][2])     # add_library(nvshmem ALIAS nvshmem::nvshmem)
        if name in _LINK_COMMANDS:
            for value, line, c in args[1:] if name == "target_link_libraries" else args:
                for part in value.split(";"):
                    if part.strip():
                        hit("link", part.strip(), line, c)
        if name in _DIR_COMMANDS:
            # target_include_directories(<target> PRIVATE dirs...): the target's own name is not a folder
            for value, line, c in args[1:] if name.startswith("target_") else args:
                hit("dir", value, line, c)
        if name in ("if", "elseif", "while"):
            for value, line, c in args:
                hit("if", value, line, c)
        if name == "message" and len(args) > 1 and args[0][0].upper() in ("FATAL_ERROR", "SEND_ERROR"):
            hit("fatal", " ".join(a[0] for a in args[1:]), args[1][1], args[1][2], symbol="message(FATAL_ERROR)")
    return col.done()
