"""Copied bindings whose own build makes a CPU extension without CUDA (policy (n), the lead's decision in session 46;
tq46a, tuned on heldout53's warp-ctc copy in DAVAR-Lab-OCR).

warp-ctc's `pytorch_binding/setup.py` binds its extension builder to `CUDAExtension` when CUDA is there and to the CPU
`CppExtension` otherwise (`if enable_gpu: build_extension = CUDAExtension ... else: build_extension = CppExtension`,
then `build_extension(name='warpctc_pytorch._warp_ctc', ...)`). On an Ascend host the tree's own build makes the CPU
binding, so `import warpctc_pytorch` works there. When the tree holds that setup.py beside the package it builds
(`<setup folder>/warpctc_pytorch/__init__.py`):
- a finding that the package's import, or a use of one of its entry points not named for CUDA / GPU (`cpu_ctc`,
  `CTCLoss`), needs the CUDA library is info (context `cpu-build`), and such an import no longer ends a launch's
  "fails at import" chain (its hit is taken out of the file's launch facts before the launches are followed);
- the CUDA test in that setup.py that picks the arm (`if torch.cuda.is_available() or "CUDA_HOME" in os.environ:`) is
  info: on Ascend it picks the CPU arm, the correct fallback.
The CUDA-named entry points (`gpu_ctc`) and a `.cuda()` before the call keep their findings. A binding without such a
build file in the tree keeps "fails at import". Applied once per run, before the launch chains are followed.
"""
from __future__ import annotations

import ast
import posixpath
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from auditor.project.launch_imports import FACT
from auditor.project.setup_py import extension_module_name
from auditor.source import SourceError
from auditor.static.astutil import ast_dotted, env_get_default, env_membership
from auditor.static.backends import as_info
from auditor.static.project_imports import kept_fact, read_counted

_BUILDERS = (("CUDAExtension", "cuda"), ("CudaExtension", "cuda"), ("CppExtension", "cpu"), ("CPUExtension", "cpu"))
_CUDA_WORD = re.compile(r"cuda|gpu|nccl", re.I)
_CUDA_VARIABLE = re.compile(r"CUDA", re.I)
_IMPORT_CODES = frozenset({"NPU416"})
_NOTE = "the tree's copy builds it for the CPU without CUDA ({where} picks `CppExtension`): it imports on Ascend; " \
        "its CUDA entry points are reported where they are called"
_ARM_NOTE = "in the CUDA arm of the build's own choice between its CUDA and its CPU extension: on a host without " \
            "nvcc (an Ascend host) the build takes the CPU arm, so nothing here runs there (decision (n)); port it " \
            "if you build the CUDA kernels"
_CHOICE_NOTE = "the build's own test for its CUDA extension: on a host without CUDA (an Ascend host) it is false " \
               "and the build keeps its default `CppExtension`, the CPU binding (decision (n)); nothing to port here"
_TEST_NOTE = "the build's own choice of its CPU arm ({where} builds `CppExtension` without CUDA): on Ascend it " \
             "builds the CPU binding; nothing to port here"


def _builder(node: ast.expr) -> str | None:
    """"cuda" / "cpu" when a name is an extension builder: torch's `CUDAExtension` / `CppExtension` and the
    factories named after them (tensorlayerx's `PyCUDAExtension`, `PyCppExtension`), else None."""
    name = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else ""
    return next((kind for suffix, kind in _BUILDERS if name.endswith(suffix)), None)


def cpu_fallback_builds(tree: ast.Module) -> dict[str, int]:
    """{extension module: line} of the extensions a setup.py builds through a name bound to `CUDAExtension` in one
    place and to `CppExtension` in another (or `CUDAExtension if c else CppExtension`)."""
    kinds: dict[str, set[str]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            values = [node.value.body, node.value.orelse] if isinstance(node.value, ast.IfExp) else [node.value]
            for value in values:
                kind = _builder(value)
                if kind:
                    kinds.setdefault(node.targets[0].id, set()).add(kind)
    both = {name for name, k in kinds.items() if k == {"cuda", "cpu"}}
    out: dict[str, int] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in both:
            built = extension_module_name(node)
            if built:
                out.setdefault(built, node.lineno)
    return out


def _arm_kinds(body: list[ast.stmt]) -> set[str]:
    """The kinds of extension the calls in an arm build (`PyCUDAExtension(...)`)."""
    return {kind for stmt in body for node in ast.walk(stmt)
            if isinstance(node, ast.Call) and (kind := _builder(node.func))}


def _flag_of(test: ast.expr) -> tuple[str, bool] | None:
    """(flag, polarity) of an `if FLAG:` / `if not FLAG:` test."""
    if isinstance(test, ast.Name):
        return test.id, True
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not) and isinstance(test.operand, ast.Name):
        return test.operand.id, False
    return None


def _span(body: list[ast.stmt]) -> list[int]:
    return [body[0].lineno, max(getattr(stmt, "end_lineno", None) or stmt.lineno for stmt in body)]


def cuda_arm_spans(tree: ast.Module) -> list[list[int]]:
    """The lines a setup.py runs only when it builds the CUDA extension (tq55a, heldout72's GammaGL: `if not WITH_CUDA:
    PyCppExtension(...) else: PyCUDAExtension(define_macros=[cuda_macro, ...])`, `WITH_CUDA` found from nvcc): the
    CUDA arm of an `if FLAG:` whose other arm builds the CPU extension, every other arm of that flag on its CUDA side
    (`if WITH_CUDA: ops_types = ["cpu", "cuda"]`), and a module-level assignment whose name only those arms read
    (`cuda_macro = ("COMPILE_WITH_CUDA", True)`). Not a flag the module binds to True: that build takes its CUDA arm."""
    sides: dict[str, bool] = {}         # flag -> the polarity of its CUDA side
    ifs = [node for node in ast.walk(tree) if isinstance(node, ast.If) and node.orelse]
    for node in ifs:
        flag = _flag_of(node.test)
        body, other = _arm_kinds(node.body), _arm_kinds(node.orelse)
        if flag is not None and {"cuda", "cpu"} <= body | other and body != other and len(body) == len(other) == 1:
            sides[flag[0]] = flag[1] == (body == {"cuda"})
    forced = {target.id for node in tree.body if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant)
              and node.value.value is True for target in node.targets if isinstance(target, ast.Name)}
    spans: list[list[int]] = []
    for test in (n for n in ast.walk(tree) if isinstance(n, ast.If)):
        flag = _flag_of(test.test)
        if flag is None or flag[0] not in sides or flag[0] in forced:
            continue
        arm = test.body if flag[1] == sides[flag[0]] else test.orelse
        if arm:
            spans.append(_span(arm))
    if not spans:
        return []
    inside = lambda line: any(a <= line <= b for a, b in spans)     # noqa: E731
    reads: dict[str, list[int]] = {}
    for name in (n for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)):
        reads.setdefault(name.id, []).append(name.lineno)
    for stmt in tree.body:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
            lines = reads.get(stmt.targets[0].id, [])
            if lines and all(inside(line) for line in lines):
                spans.append([stmt.lineno, getattr(stmt, "end_lineno", None) or stmt.lineno])
    return spans


def _cuda_probe(node: ast.expr) -> bool | None:
    """False when one operand of a build test is false on a host without CUDA (an Ascend host): `torch.cuda.
    is_available()`, `CUDA_HOME` (None there; `is not None` / truthiness), an environment variable named for CUDA read
    with no default or a default the test does not accept (`os.getenv("FORCE_CUDA", "0") == "1"`, `"FORCE_CUDA" in
    os.environ`); None when the test may hold there."""
    if isinstance(node, ast.BoolOp):
        values = [_cuda_probe(v) for v in node.values]
        off = any(v is False for v in values) if isinstance(node.op, ast.And) else all(v is False for v in values)
        return False if off else None
    if isinstance(node, ast.Call) and (ast_dotted(node.func) or "").endswith("cuda.is_available") and not node.args:
        return False
    if isinstance(node, (ast.Name, ast.Attribute)) and (ast_dotted(node) or "").split(".")[-1] == "CUDA_HOME":
        return False
    if (read := env_get_default(node)) and read[1] is None:
        return False if _CUDA_VARIABLE.search(read[0]) else None
    if isinstance(node, ast.Compare) and len(node.ops) == 1:
        left, op, right = node.left, node.ops[0], node.comparators[0]
        if isinstance(op, ast.IsNot) and isinstance(right, ast.Constant) and right.value is None:
            return _cuda_probe(left)
        if _CUDA_VARIABLE.search(env_membership(node) or ""):
            return False
        if isinstance(op, ast.Eq) and isinstance(right, ast.Constant) and (read := env_get_default(left)) \
                and _CUDA_VARIABLE.search(read[0]) and isinstance(read[1], ast.Constant) and read[1].value != right.value:
            return False
    return None


def default_cpu_choices(tree: ast.Module) -> tuple[list[list[int]], list[int]]:
    """(CUDA arm spans, test lines) of the builds that bind their builder to `CppExtension` and rebind it to
    `CUDAExtension` only under a test that is false on a host without CUDA (maskrcnn-benchmark's setup.py: `extension =
    CppExtension` ... `if (torch.cuda.is_available() and CUDA_HOME is not None) or os.getenv("FORCE_CUDA", "0") ==
    "1": extension = CUDAExtension; sources += source_cuda; ...`): on Ascend the build keeps the CPU extension."""
    spans: list[list[int]] = []
    tests: list[int] = []
    blocks = [tree.body] + [n.body for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    for block in blocks:
        kinds: dict[str, str] = {}
        for stmt in block:
            if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name) \
                    and (kind := _builder(stmt.value)):
                kinds[stmt.targets[0].id] = kind
            elif isinstance(stmt, ast.If) and _cuda_probe(stmt.test) is False and any(
                    isinstance(s, ast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], ast.Name)
                    and kinds.get(s.targets[0].id) == "cpu" and _builder(s.value) == "cuda" for s in stmt.body):
                spans.append(_span(stmt.body))
                tests.extend(range(stmt.test.lineno, (stmt.test.end_lineno or stmt.test.lineno) + 1))
    return spans, tests


def _arm_tests(tree: ast.Module) -> set[int]:
    """The lines of the module-level `if` tests of a setup.py (where its build picks an arm)."""
    return {line for stmt in tree.body if isinstance(stmt, ast.If)
            for line in range(stmt.test.lineno, (stmt.test.end_lineno or stmt.test.lineno) + 1)}


# the setup.py's own facts, kept in its summary (saved with the cache): a warm run reads no setup.py again
SUMMARY_KEY = "cpu_builds"


def _setup_facts(path: Path) -> dict[str, Any]:
    """{"builds": {extension module: line}, "tests": arm test lines} of one setup.py."""
    builds: dict[str, int] = {}
    tests: list[int] = []
    arms: list[list[int]] = []
    choices: list[int] = []
    try:
        text = read_counted(None, path)
        if re.search(rb"C(?:pp|PU)Extension", text) and re.search(rb"CUDAExtension|CudaExtension", text):
            tree = ast.parse(text)
            builds = cpu_fallback_builds(tree)
            tests = sorted(_arm_tests(tree)) if builds else []
            defaults, choices = default_cpu_choices(tree)
            arms = cuda_arm_spans(tree) + defaults
    except (OSError, SourceError, SyntaxError, ValueError):
        pass
    return {"builds": builds, "tests": tests, "arms": arms, "choices": choices}


def _valid_setup_facts(held: Any) -> bool:
    return isinstance(held, dict) and isinstance(held.get("builds"), dict) and isinstance(held.get("tests"), list) \
        and isinstance(held.get("arms"), list) and isinstance(held.get("choices"), list)


def apply_cpu_bindings(results: list, files: Sequence[tuple[Path, str]]) -> set[str]:
    """Lower the "needs CUDA" findings of bindings the tree's own setup.py builds for the CPU too; returns the files
    whose summary now holds their setup.py facts (for the cache to save them again)."""
    rels = {rel for _, rel in files}
    summaries = {r.path: r.summary for r in results}
    memoised: set[str] = set()
    packages: dict[str, str] = {}       # package name -> `setup.py:LINE` that builds it with a CPU fallback
    tests: dict[str, tuple[set[int], str]] = {}
    arms: dict[str, list[list[int]]] = {}     # setup.py -> the lines only its CUDA build runs
    choices: dict[str, set[int]] = {}         # setup.py -> the test lines that keep its CPU extension without CUDA
    for path, rel in files:
        if posixpath.basename(rel) != "setup.py":
            continue
        facts = kept_fact(summaries.get(rel), SUMMARY_KEY, _valid_setup_facts, lambda: _setup_facts(path),
                          memoised, rel)
        builds, arm_tests = facts["builds"], facts["tests"]
        if facts["arms"]:
            arms[rel] = facts["arms"]
        if facts["choices"]:
            choices[rel] = set(facts["choices"])
        folder = posixpath.dirname(rel)
        for built, line in builds.items():
            top = built.split(".", 1)[0]
            if posixpath.join(folder, top, "__init__.py") in rels:
                packages.setdefault(top, f"{rel}:{line}")
                tests[rel] = (set(arm_tests), f"{rel}:{line}")
    for result in results:
        spans = arms.get(result.path)
        if spans:
            result.findings = [as_info(f, "cpu-build", _ARM_NOTE) if f.severity != "info" and
                               any(a <= f.line <= b for a, b in spans) else f for f in result.findings]
        chosen = choices.get(result.path)
        if chosen:
            result.findings = [as_info(f, "cpu-build", _CHOICE_NOTE) if f.severity != "info" and f.line in chosen
                               else f for f in result.findings]
    if not packages:
        return memoised

    def ours(symbol: str) -> str | None:
        parts = (symbol or "").split(".")
        return packages.get(parts[0]) if not _CUDA_WORD.search(parts[-1] if len(parts) > 1 else "") else None

    for result in results:
        kept = []
        for f in result.findings:
            where = ours(f.symbol) if f.code in _IMPORT_CODES else None
            if where is not None and f.severity != "info":      # (behind a CUDA gate too: the CPU call needs no CUDA)
                f = as_info(f, "cpu-build", _NOTE.format(where=where))
            elif result.path in tests and f.category == "device" and f.line in tests[result.path][0] \
                    and f.severity != "info" and "is_available" in (f.symbol or ""):
                f = as_info(f, "cpu-build", _TEST_NOTE.format(where=tests[result.path][1]))
            kept.append(f)
        result.findings = kept
        hard = result.summary.get(FACT) if isinstance(result.summary, dict) else None
        if isinstance(hard, dict) and hard.get("hits"):
            # a new facts dict (the cached payload keeps its own): the launches followed next no longer stop here
            hits = [h for h in hard["hits"] if not (isinstance(h, (list, tuple)) and len(h) == 4
                                                    and ours(str(h[3])) is not None)]
            result.summary = {**result.summary, FACT: {**hard, "hits": hits}}
    return memoised
