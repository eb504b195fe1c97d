"""Build scripts that hand .cu sources to nvcc themselves, through distutils' compiler rather than
torch.utils.cpp_extension (tk46). py-faster-rcnn's NMS setup.py is the template, copied into many detection and pose
trees (HRNet's lib/nms/setup_linux.py, DRRG's nmslib/nms/setup.py, Cython GPU extensions): `locate_cuda()` finds the
toolkit (`CUDAHOME`, or nvcc on PATH) and returns `{'home': ..., 'nvcc': ..., 'include': ..., 'lib64': ...}`, and
`customize_compiler_for_nvcc` teaches the compiler the `.cu` suffix (`self.src_extensions.append('.cu')`) and swaps in
nvcc for those files (`self.set_executable('compiler_so', CUDA['nvcc'])`). In such a file nvcc is the build's compiler,
not a tool the code runs for an answer, and the locator's entries (`CUDA['lib64']`, `CUDA['include']`) are the
toolkit's folders the extension compiles and links against.

tk47 (test127: second.pytorch's second/utils/find.py): a script may also compile a program against the CUDA runtime
itself, with no extension builder: it writes C++ from a string, runs `g++ x.cc -o x -I{cuda_home / 'include'}
-L{cuda_home / 'lib64'} -lcudart` and runs the program, after finding the toolkit (`CUDA_HOME`, a `/usr/local/cuda`
default, the Windows toolkit folder). Such a file builds against the CUDA toolkit as a build script does: its toolkit
folders and link flags belong to that build (`compiles_cuda_program`)."""
from __future__ import annotations

import ast
import re

from auditor.astnodes import walk_list
from auditor.static.astutil import MESSAGE_CALLS, ast_dotted, module_nodes

# distutils' CCompiler executables a build may point at nvcc (`set_executable(key, value)`)
_COMPILER_KEYS = frozenset({"compiler", "compiler_so", "compiler_cxx", "linker_so", "linker_exe"})
_NVCC = re.compile(r"(?i)nvcc")
# the keys of a toolkit locator's answer beside its nvcc entry: the folders it found
_FOLDER_KEY = re.compile(r"(?i)home|include|lib|path|dir|bin|root")


def _strings(node: ast.AST) -> list[str]:
    return [n.value for n in ast.walk(node) if isinstance(n, ast.Constant) and isinstance(n.value, str)]


def _names_nvcc(node: ast.AST) -> bool:
    """`CUDA['nvcc']`, `nvcc_path`, `'/usr/local/cuda/bin/nvcc'`: an expression that names nvcc."""
    return any(_NVCC.search(s) for s in _strings(node)) or any(
        isinstance(n, ast.Name) and _NVCC.search(n.id) or isinstance(n, ast.Attribute) and _NVCC.search(n.attr)
        for n in ast.walk(node))


def _compiler_value(node: ast.AST) -> ast.expr | None:
    """The value of `X.set_executable('compiler_so', VALUE)` (one of distutils' compiler executables), else None."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "set_executable" \
            and len(node.args) >= 2 and isinstance(node.args[0], ast.Constant) and node.args[0].value in _COMPILER_KEYS:
        return node.args[1]
    return None


def compiles_cuda_by_hand(tree: ast.Module) -> bool:
    """Whether the file teaches distutils' compiler to build .cu files: `compiler.src_extensions.append('.cu')` (also
    extend / insert / `+=`), or points one of its executables at nvcc (`self.set_executable('compiler_so',
    CUDA['nvcc'])`)."""
    for node in module_nodes(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            receiver = node.func.value
            if node.func.attr in ("append", "extend", "insert") and isinstance(receiver, ast.Attribute) \
                    and receiver.attr == "src_extensions" and ".cu" in _strings(node):
                return True
            value = _compiler_value(node)
            if value is not None and _names_nvcc(value):
                return True
        if isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Attribute) \
                and node.target.attr == "src_extensions" and ".cu" in _strings(node.value):
            return True
    return False


# a compiler run on a source (`g++ ...`, `/usr/bin/gcc-9 ...`, `clang++ ...`, `nvcc ...`) and a CUDA library it links
_COMPILER_WORD = re.compile(r"(?:\S*/)?(?:g\+\+|gcc|c\+\+|cc|clang\+\+|clang|nvcc)(?:-\d+(?:\.\d+)*)?")
_CUDA_LINK = re.compile(r"-l(?:cudart|cudart_static|cuda|nvrtc|cublas|cublasLt|cufft|curand|cusparse|cusolver)")
_HOLE = "\x00"


def _command_words(node: ast.AST) -> list[str] | None:
    """The words of a command line written as a string, an f-string (a field is a hole) or a list of arguments
    (`["g++", src, "-lcudart"]`: an item that is no literal is a hole), also through `.format(...)` / `% (...)`; None
    for anything else."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "format":
        node = node.func.value
    elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod):
        node = node.left
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value.split()
    if isinstance(node, ast.JoinedStr):
        return "".join(str(v.value) if isinstance(v, ast.Constant) else _HOLE for v in node.values).split()
    if isinstance(node, (ast.List, ast.Tuple)) and node.elts:
        return [e.value if isinstance(e, ast.Constant) and isinstance(e.value, str) else _HOLE for e in node.elts]
    return None


def compiler_command(text: str) -> bool:
    """`g++ x.cc -o x -lcudart`, `nvcc {src} ...`: a command line whose first word is a C / C++ compiler or nvcc."""
    words = text.split()
    return bool(words) and _COMPILER_WORD.fullmatch(words[0]) is not None


def _links_cuda(words: list[str]) -> bool:
    """`g++ x.cc -o x -L... -lcudart`: a compiler's command line that links a CUDA library."""
    return bool(words) and _COMPILER_WORD.fullmatch(words[0]) is not None and any(
        _CUDA_LINK.fullmatch(w) for w in words[1:])


def compiles_cuda_program(tree: ast.Module) -> bool:
    """Whether the file runs a compiler that links the CUDA runtime (or another CUDA library) into what it builds: a
    command bound to a name or handed to a call, not a docstring nor a message's text."""
    for node in module_nodes(tree):
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
            values = [node.value]
        elif isinstance(node, ast.Call) and (ast_dotted(node.func) or "").rsplit(".", 1)[-1] not in MESSAGE_CALLS:
            values = [*node.args, *(k.value for k in node.keywords)]
        else:
            continue
        if any((words := _command_words(value)) is not None and _links_cuda(words) for value in values):
            return True
    return False


def _locator_answer(value: ast.expr) -> bool:
    """`{'home': home, 'nvcc': nvcc, 'include': ..., 'lib64': ...}` or `dict(NVCC_PATH=..., CUDA_INCLUDE_DIRS=...)`:
    an nvcc entry beside a folder entry."""
    if isinstance(value, ast.Dict):
        keys = [k.value for k in value.keys if isinstance(k, ast.Constant) and isinstance(k.value, str)]
    elif isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id == "dict":
        keys = [k.arg for k in value.keywords if k.arg]
    else:
        return False
    return any(_NVCC.search(k) for k in keys) and any(_FOLDER_KEY.search(k) for k in keys if not _NVCC.search(k))


def _locators(tree: ast.Module) -> set[str]:
    """Functions of the file that return a toolkit locator's answer, directly or through a local name
    (`cudaconfig = {...}` ... `return cudaconfig`)."""
    found: set[str] = set()
    nodes = module_nodes(tree)
    # (none without a locator's answer anywhere in the file: each function's own walks below are then skipped)
    if not any(isinstance(n, (ast.Assign, ast.Return)) and n.value is not None and _locator_answer(n.value)
               for n in nodes):
        return found
    for func in nodes:
        if not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        answers = {t.id for n in walk_list(func) if isinstance(n, ast.Assign) and _locator_answer(n.value)
                   for t in n.targets if isinstance(t, ast.Name)}
        for node in walk_list(func):
            if isinstance(node, ast.Return) and node.value is not None and (
                    _locator_answer(node.value) or isinstance(node.value, ast.Name) and node.value.id in answers):
                found.add(func.name)
                break
    return found


def _compiler_tables(tree: ast.Module) -> set[str]:
    """Names whose nvcc entry a build makes the compiler (`self.set_executable('compiler_so', CUDA['nvcc'])`): the
    toolkit's table, wherever it was filled (CuLE's `CUDA = runtime._locate()`, a helper of another module)."""
    values = [_compiler_value(n) for n in module_nodes(tree)]
    return {v.value.id for v in values if isinstance(v, ast.Subscript) and isinstance(v.value, ast.Name)
            and _names_nvcc(v.slice)}


def toolkit_configs(tree: ast.Module) -> frozenset[str]:
    """Names bound to what a toolkit locator of the file returns (`CUDA = locate_cuda()`), or whose nvcc entry the
    build makes its compiler, whose entries are the CUDA toolkit's folders and nvcc (`CUDA['lib64']`,
    `CUDA['include']`, `CUDA['nvcc']`)."""
    locators = _locators(tree)
    return frozenset(_compiler_tables(tree)) | frozenset(
        t.id for n in module_nodes(tree) if locators and isinstance(n, ast.Assign) and isinstance(n.value, ast.Call)
        and isinstance(n.value.func, ast.Name) and n.value.func.id in locators
        for t in n.targets if isinstance(t, ast.Name))
