"""Launch lines of scripts that fail at import on Ascend (s15e, issue 15): a shell script, notebook or Dockerfile runs
a Python file of the tree (`python infer.py ...`, `accelerate launch main.py ...`) whose module-level imports, not
under try / if / def, include a CUDA-only package the static pass reports as an error of category kernel, attention
or third_party (flash_attn, xformers ops, bitsandbytes, tensorrt, a CUDA rasteriser extension ...), directly or
through modules of the tree it imports the same way (LGM's `main.py` -> `core.models` -> `core.gs` ->
`diff_gaussian_rasterization`). Such a launch raises ImportError before the script does anything, so the launch line
is reported in that category, one finding per launch line and category, with the import chain in its message.

Two steps, as for the attention wrappers (auditor/project/launched.py):
1. in the worker, `import_failure_facts` keeps a Python file's unconditional module-level imports and the error
   findings of those categories on them (`hard` in the file's summary, a fact family of its own);
2. after every file is read, `apply_launch_imports` follows them from each recorded launch through the tree's own
   modules (at most MAX_HOPS files), from the run's facts; a file of the tree the run did not audit (a caller that
   audits one file, as the project-file bench does) is analysed once, as launched.py does. Nothing is run.
"""
from __future__ import annotations

import ast
import re
import sys
from collections.abc import Collection
from pathlib import Path
from typing import Any, Callable

from auditor.findings import FileResult, Finding
from auditor.project.launched import (_MAX_SCRIPT_BYTES, SUMMARY_KEY, launch_bases, launched_word_position,
                                      resolve_launched)
from auditor.project.makefile import _join, add_call_findings, call_finding, positioned, recorded_calls, unsuppressed
from auditor.astnodes import ast_dotted, module_nodes_of

FACT = "hard"
CATEGORIES = ("kernel", "attention", "third_party")
NCCL = "nccl"       # the facts' key of a hard-coded NCCL backend, and the launch kind `import-nccl` (pd6)
NCCL_OPTION = "nccl-option"     # failing_imports' key of the option whose default that backend is (tp51c)
SOFT = "soft"         # the facts' key of a kernel warning on an unconditional import (tp54b)
SPAWNS = "spawns"     # the facts' key of a script that starts its own ranks (torch.multiprocessing, tp53b)
# tp55b: the facts' keys of a function's NCCL parameter default no call of its own module uses (`def init_dist(launcher,
# backend='nccl', **kwargs)` in a tree's copy of mmcv's dist_utils) and of a module's calls of names it imports from the
# tree (`init_dist(args.launcher)`): another module's call that leaves the default in place starts NCCL
NCCL_DEFAULTS = "nccl-defaults"
IMPORTED_CALLS = "imported-calls"
MAX_HOPS = 6          # the launched file and up to five modules of the tree between it and the failing import (MAGI-1's
                      # entry.py reaches flash_attn through a package __init__, the pipeline and the model: six files)
_MAX_IMPORTS = 200
# wrapper / option-default findings already say the launch picks a CUDA attention (NPU312, NPU354): one per category
_ATTENTION_LAUNCH_RULES = ("attention-wrapper", "attention-default")


# rules whose finding is a call that starts an NCCL process group without naming it: a library's trainer looked up by
# name (EVer's `get_trainer('th_amp_ddp')`, rules/gen/library_nccl_trainers.py; tp52b), Meta's Llama reference
# `Llama.build` (rules/distributed_llama_reference_builds.yaml; tp53b)
_NCCL_STARTERS = ("library-trainer-nccl-backend", "llama-reference-build-nccl")
# the frameworks' own modules import on every build (Paddle's CUDAExtension lives beside CppExtension; review49 item 5)
_IMPORTS_ON_ASCEND = ("torch", "torchvision", "torchaudio", "paddle")
# libraries whose import works on Ascend: a finding on `from transformers import BitsAndBytesConfig` is about what the
# script does with the name, not an import that fails (t17a, Chinese-Vicuna's generate_4bit.py); mmcv has an Ascend
# build (https://mmcv.readthedocs.io/en/latest/get_started/build.html, "Build mmcv-full on Ascend NPU machine") whose
# ops import and fail only when an op without an NPU kernel runs (groundingLMM's vendored mmdet `fpn_carafe`)
_LIBRARIES_IMPORTING_ON_ASCEND = ("transformers", "diffusers", "accelerate", "peft", "mmcv")


# other build scripts that name extensions (GPTQ's `setup_cuda.py`: `CUDAExtension('quant_cuda', [...cu])`, s4's
# `tuning_setup.py`, `csrc/build.py`): what they build is what an import of the name loads (g2); an install runs setup.py
_BUILD_SCRIPT = re.compile(r"(?:^|/)(?:\w+_)?(?:setup|build)(?:_\w+)?\.py$")


def _first_party_candidate(module: str, level: int) -> bool:
    """Could the import name a module of the tree (not the standard library, not torch itself)?"""
    if level:
        return True
    top = module.split(".", 1)[0]
    return bool(top) and top not in sys.stdlib_module_names and top not in _IMPORTS_ON_ASCEND


def _named_extension(symbol: str) -> bool:
    """`.iou3d_cuda`: a package's own extension known by the `*_cuda` name only (`from . import iou3d_cuda`,
    context._bind_relative_extension); it fails a launch only where the tree's setup.py builds it (`extensions`,
    t16a), not on the name alone (t22d; `._C` keeps its own evidence)."""
    return symbol.startswith(".") and not symbol.startswith("._C")


def import_failure_facts(tree: ast.AST | None, findings, rel: str = "",
                         cuda_test: Callable[[ast.AST], bool] | None = None) -> dict:
    """`imports`: [line, module, level, names] of each import statement of the module body itself (a statement under
    try, if, with or def is not unconditional) that may name a module of the tree; `hits`: [line, category, code,
    symbol] of each error finding of CATEGORIES on such a statement; for a setup.py, `extensions`: {module: line} of
    the CUDA extensions it always builds (t16a), and `built_if`: those it builds only under a condition (what an
    import of the name loads, crossfile._built_extensions; not a launch's failure). Empty when there is none.
    `cuda_test`: the static layer's reading of a CUDA test (gates.is_cuda_test, handed in by the worker: this layer
    does not import the static one), for the NCCL backend that follows an `assert torch.cuda.is_available()`."""
    if not isinstance(tree, ast.Module):
        return {}
    from auditor.project.setup_py import built_cuda_extensions, cuda_extension_names

    setup_py = rel.rsplit("/", 1)[-1] == "setup.py"
    extensions = built_cuda_extensions(tree) if setup_py else {}
    built_if = {name: line for name, line in cuda_extension_names(tree).items()
                if name not in extensions} if setup_py or _BUILD_SCRIPT.search(rel) else {}
    # torch's and Paddle's own modules import on Ascend: a finding on `from torch.utils.cpp_extension import
    # CUDAExtension` is about the build it makes, not an import that fails
    wanted = [f for f in findings if f.category in CATEGORIES and f.severity == "error"
              and not (f.data or {}).get("context")
              and (f.symbol or "").split(".", 1)[0] not in _IMPORTS_ON_ASCEND + _LIBRARIES_IMPORTING_ON_ASCEND
              and not _named_extension(f.symbol or "")]
    # tp54b: a kernel warning on such an import (`from ._ext import dcn_v2 as _backend`, NPU891: the project's own
    # compiled extension, known by its name) is no import failure, but an implementation chosen by name that imports
    # it runs that kernel (launch choices, registry_choices.py)
    soft_wanted = [f for f in findings if f.category == "kernel" and f.severity == "warning"
                   and not (f.data or {}).get("context")
                   and (f.symbol or "").split(".", 1)[0] not in _IMPORTS_ON_ASCEND + _LIBRARIES_IMPORTING_ON_ASCEND]
    imports: list[list] = []
    hits: list[list] = []
    soft: list[list] = []
    # pd6: the first hard-coded NCCL backend anywhere in the file (VideoMAEv2's `args.dist_backend = 'nccl'` inside
    # utils.init_distributed_mode): a multi-process launch of a script importing it starts an NCCL process group
    unused: dict = {}
    defaults = _nccl_default_lines(tree, unused)
    asserted: set[int] | None = None
    nccl = None
    for f in (findings or []) if defaults is not None else []:
        if f.category != "distributed" or f.line in (defaults or ()) or not (
                "nccl" in (f.symbol or "").lower() or f.name in _NCCL_STARTERS):
            continue
        context = (f.data or {}).get("context")
        if context == "cuda-available-branch" and f.severity == "warning":
            # lowered behind a gate; when the gate is an `assert torch.cuda.is_available()` before it there is no
            # CPU path, the backend is the only one the ranks start (xmodaler's engine/launch.py; tp54a)
            asserted = (_after_cuda_asserts(tree, cuda_test) if cuda_test else set()) if asserted is None else asserted
            context = None if f.line in asserted else context
        elif f.severity != "error":
            continue
        if not context:
            nccl = [f.line, f.code, f.symbol or ""]
            break
    for stmt in tree.body:
        if not isinstance(stmt, (ast.Import, ast.ImportFrom)):
            continue
        end = getattr(stmt, "end_lineno", None) or stmt.lineno
        for f in wanted:
            if stmt.lineno <= f.line <= end and not any(h[1] == f.category for h in hits):
                hits.append([stmt.lineno, f.category, f.code, f.symbol or ""])
        for f in soft_wanted:
            if stmt.lineno <= f.line <= end and not soft:
                soft.append([stmt.lineno, f.category, f.code, f.symbol or ""])
        if isinstance(stmt, ast.Import):
            imports.extend([stmt.lineno, a.name, 0, []] for a in stmt.names if _first_party_candidate(a.name, 0))
        elif _first_party_candidate(stmt.module or "", stmt.level):
            imports.append([stmt.lineno, stmt.module or "", stmt.level, [a.name for a in stmt.names if a.name != "*"]])
    out: dict = {}
    options = _argparse_options(tree)
    if options:
        out["options"] = options
    if extensions:
        out["extensions"] = extensions
    if built_if:
        out["built_if"] = built_if
    if hits:
        out["hits"] = hits
    if soft:
        out[SOFT] = soft
    if nccl is not None:
        option = _argparse_default_option(tree, nccl[0])
        out[NCCL] = nccl + [option] if option else nccl
    held_defaults = _nccl_default_findings(unused, findings)
    if held_defaults:
        out[NCCL_DEFAULTS] = held_defaults
    calls = _imported_calls(tree)
    if calls:
        out[IMPORTED_CALLS] = calls
    spawns = _spawn_line(tree)
    if spawns:
        out[SPAWNS] = spawns
    if imports:
        out["imports"] = imports[:_MAX_IMPORTS]
    return out


def _nccl_default_findings(unused: dict, findings) -> dict:
    """{function: [line, code, symbol, parameter, position, method]} of the NCCL parameter defaults `unused` names
    (`_nccl_default_lines`) that carry an error finding of the backend (NPU101 on `backend='nccl'`)."""
    out: dict = {}
    for name, (param, at, line, method) in unused.items():
        hit = next((f for f in findings or () if f.line == line and f.category == "distributed"
                    and f.severity == "error" and "nccl" in (f.symbol or "").lower()
                    and not (f.data or {}).get("context")), None)
        if hit is not None:
            out[name] = [line, hit.code, hit.symbol or "", param, at, method]
    return out


def _imported_calls(tree: ast.Module) -> dict:
    """{name: [line, positional arguments, keyword names]} of the first call of each name a module-level
    `from <tree module> import name` binds (`init_dist(args.launcher)`), or of `name.function` for such a name bound to
    a module (`dist_utils.init_dist(...)`); a call with `*args` / `**kwargs` may pass anything and is left out."""
    bound = {a.asname or a.name for stmt in tree.body if isinstance(stmt, ast.ImportFrom)
             and _first_party_candidate(stmt.module or "", stmt.level) for a in stmt.names if a.name != "*"}
    out: dict = {}
    for node in module_nodes_of(tree, (ast.Call,)) if bound else ():
        dotted = ast_dotted(node.func) or ""
        if dotted.split(".", 1)[0] not in bound or dotted.count(".") > 1 or dotted in out \
                or any(k.arg is None for k in node.keywords) or any(isinstance(a, ast.Starred) for a in node.args):
            continue
        out[dotted] = [node.lineno, len(node.args), [k.arg for k in node.keywords]]
        if len(out) >= _MAX_IMPORTS:
            break
    return out


def _default_left(calls: dict, names: list[str], defaults: dict) -> tuple[str, int, list] | None:
    """(function, call line, its NCCL default) when `calls` (the importing module's IMPORTED_CALLS) call a function of
    `defaults` (the imported module's NCCL_DEFAULTS) by one of the imported `names`, leaving the NCCL default in place."""
    for dotted, (line, positional, keywords) in calls.items():
        head, _, function = dotted.partition(".")
        if head not in names:
            continue
        held = defaults.get(function or head)
        if not isinstance(held, list) or len(held) != 6:
            continue
        _line, _code, _symbol, param, at, method = held
        if _default_kept(param, at, method and bool(function), positional, keywords):
            return function or head, line, held
    return None


def _default_kept(param: str, at: int | None, bound: bool, positional: int, keywords: Collection[str | None]) -> bool:
    """True when a call leaves parameter `param` (at position `at`; None: keyword-only) to its default: no keyword
    names it and its positional arguments stop short of it. `bound`: a method called on its class's instance, which
    takes `self` from the instance (the call's positional count is one short of the definition's)."""
    return param not in keywords and (at is None or positional <= at - (1 if bound else 0))


def _after_cuda_asserts(tree: ast.Module, is_cuda_test: Callable[[ast.AST], bool]) -> set[int]:
    """The lines of the statements that follow an `assert torch.cuda.is_available()` in its own block: code that runs
    only once the assert passed, with no other path (gates.py lowers its findings as behind a gate)."""
    lines: set[int] = set()
    for node in ast.walk(tree):
        for block in (getattr(node, name, None) for name in ("body", "orelse", "finalbody")):
            if not isinstance(block, list):
                continue
            for i, stmt in enumerate(block[:-1]):
                if isinstance(stmt, ast.Assert) and is_cuda_test(stmt.test):
                    lines.update(range(block[i + 1].lineno, (block[-1].end_lineno or block[-1].lineno) + 1))
                    break
    return lines


# torch.multiprocessing's process starters: a script calling one starts its ranks itself, one process per GPU
# (https://pytorch.org/docs/stable/multiprocessing.html#spawning-subprocesses; I2SB's and LSGM's `Process(target=
# init_processes, ...)`, the ImageNet example's `mp.spawn(main_worker, nprocs=ngpus_per_node, ...)`)
_SPAWNERS = frozenset({"torch.multiprocessing.spawn", "torch.multiprocessing.start_processes",
                       "torch.multiprocessing.Process"})


def _spawn_line(tree: ast.Module) -> int:
    """The line of the first call of a torch.multiprocessing process starter in the file (names bound by its
    module-level imports: `import torch.multiprocessing as mp` then `mp.spawn`, `from torch.multiprocessing import
    Process`), 0 when there is none."""
    bound: dict[str, str] = {}
    for stmt in tree.body:
        if isinstance(stmt, ast.Import):
            bound.update({a.asname or a.name.split(".", 1)[0]: a.name if a.asname else a.name.split(".", 1)[0]
                          for a in stmt.names})
        elif isinstance(stmt, ast.ImportFrom) and not stmt.level and stmt.module:
            bound.update({a.asname or a.name: f"{stmt.module}.{a.name}" for a in stmt.names})
    for node in module_nodes_of(tree, (ast.Call,)):
        dotted = ast_dotted(node.func) or ""
        head, _, rest = dotted.partition(".")
        if head in bound and f"{bound[head]}.{rest}".rstrip(".") in _SPAWNERS:
            return node.lineno
    return 0


def _argparse_options(tree: ast.Module) -> list[str]:
    """The long options a script's argparse defines (`add_argument("--launcher", ...)` -> launcher), `-` read as `_`:
    what a launch line passing options to a script held in a variable can be matched against (pd37)."""
    found = {a.value[2:].replace("-", "_") for node in module_nodes_of(tree, (ast.Call,))
             if isinstance(node.func, ast.Attribute) and node.func.attr == "add_argument"
             for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str) and a.value.startswith("--")}
    # tp52c: a short alias too (`add_argument('-c', '--config')`): a launch passes `-c ${CONFIG}` as often
    found |= _short_aliases(tree)
    return sorted(found)[:_MAX_IMPORTS]


def _short_aliases(tree: ast.Module) -> set[str]:
    """The one-letter aliases (`-c` -> c) of the options a script's argparse defines beside a long name."""
    return {a.value[1:] for node in module_nodes_of(tree, (ast.Call,))
            if isinstance(node.func, ast.Attribute) and node.func.attr == "add_argument"
            and any(isinstance(b, ast.Constant) and isinstance(b.value, str) and b.value.startswith("--")
                    for b in node.args)
            for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)
            and len(a.value) == 2 and a.value[0] == "-" and a.value[1].isalpha()}


def _argparse_default_option(tree: ast.Module, line: int) -> str:
    """The long option (`-` read as `_`) whose `add_argument(..., default='nccl')` holds `line`, or '': a launch that
    passes that option gives the backend itself, on its own line (tp51c: ru-gpts' `--distributed-backend nccl`)."""
    for node in module_nodes_of(tree, (ast.Call,)):
        if isinstance(node.func, ast.Attribute) and node.func.attr == "add_argument" \
                and node.lineno <= line <= (node.end_lineno or node.lineno):
            names = [a.value[2:] for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)
                     and a.value.startswith("--")]
            if names and any(k.arg == "default" and k.value.lineno <= line <= (k.value.end_lineno or line)
                             for k in node.keywords):
                return names[0].replace("-", "_")
    return ""


def _nccl_default_lines(tree: ast.Module, unused: dict | None = None) -> set[int] | None:
    """Lines of a parameter default naming NCCL (`def config_lade(..., backend='nccl')`, LookaheadDecoding): the
    backend of a library function the launched script may never call, or call with another backend; and of a
    comparison with it (`get_backend() == 'nccl'`), which reads the backend. A default the module's own call leaves in
    place (`def init_dist(launcher, backend='nccl', ...)` then `init_dist(launcher=launcher)`: the mmcv / AnimateDiff
    training scripts, CameraCtrl) is the script's backend, not such a line (pd37). None when the
    file names "hccl" too: it picks the backend by device (ms-swift's `backend = 'hccl'` when
    is_torch_npu_available(), `'nccl'` elif CUDA), so no NCCL is hard-coded. `unused`, when given, gets {function:
    (parameter, position, line, method)} of the defaults the module's own calls do not use: another module's call may
    (NCCL_DEFAULTS, tp55b)."""
    lines: set[int] = set()
    relied: dict[str, list[tuple[str, int | None, int, bool]]] = {}   # function -> (parameter, position, line, method)
    calls: list[ast.Call] = []
    compared: set[int] = set()
    # ast.walk's order: a comparison comes before its operands
    for node in module_nodes_of(tree, (ast.Constant, ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.Compare,
                                       ast.Call)):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and "hccl" in node.value.lower() \
                and id(node) not in compared:
            # `if backend == 'hccl':` reads the backend (mmengine's get_comm_device): no choice of HCCL (tp55b)
            return None
        if isinstance(node, ast.Call):
            calls.append(node)
        if isinstance(node, ast.Compare):
            compared.update(id(c) for c in [node.left, *node.comparators])
            # `if dist.get_backend() == 'nccl':` (mmdet's dist_utils): the backend is read, not chosen (t22c, Groma)
            lines.update(c.lineno for c in [node.left, *node.comparators]
                         if isinstance(c, ast.Constant) and isinstance(c.value, str) and "nccl" in c.value.lower())
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            positional = node.args.posonlyargs + node.args.args
            method = bool(positional) and positional[0].arg in ("self", "cls")
            params: list[tuple[str, int | None]] = [
                (p.arg, positional.index(p)) for p in positional[len(positional) - len(node.args.defaults):]]
            params += [(p.arg, None) for p in node.args.kwonlyargs]
            for (param, at), default in zip(params, node.args.defaults + node.args.kw_defaults):
                if isinstance(default, ast.Constant) and isinstance(default.value, str) \
                        and "nccl" in default.value.lower():
                    lines.add(default.lineno)
                    if not isinstance(node, ast.Lambda):
                        relied.setdefault(node.name, []).append((param, at, default.lineno, method))
    for call in calls if relied else ():
        name = call.func.id if isinstance(call.func, ast.Name) else \
            call.func.attr if isinstance(call.func, ast.Attribute) else ""
        if any(k.arg is None for k in call.keywords) or any(isinstance(a, ast.Starred) for a in call.args):
            continue        # `init_dist(**cfg)`: the backend may be among them
        for param, at, line, method in relied.get(name, ()):
            if _default_kept(param, at, method and isinstance(call.func, ast.Attribute), len(call.args),
                             [k.arg for k in call.keywords]):
                lines.discard(line)
    if unused is not None:
        unused.update({name: held for name, params in relied.items() for held in params if held[2] in lines})
    return lines


def _module_files(rel: str, module: str, level: int, names: list[str], folders: list[str]) -> list[str]:
    """The tree paths (relative to the root) an import may load, nearest folder first: the module's file or package
    `__init__.py`, the packages above it (Python runs their `__init__.py` first) and, for `from pkg import name`, the
    submodule `pkg/name.py`."""
    if level:
        here = rel.split("/")[:-1]
        if level - 1 > len(here):
            return []
        folders = ["/".join(here[:len(here) - (level - 1)])]
    parts = [p for p in module.split(".") if p]
    out: list[str] = []
    for folder in folders:
        prefix = f"{folder}/" if folder else ""
        path = "/".join(parts)
        out += [f"{prefix}{'/'.join(parts[:i])}/__init__.py" for i in range(1, len(parts) + 1)]
        if parts:
            out.append(f"{prefix}{path}.py")
        out += [f"{prefix}{path + '/' if path else ''}{n}.py" for n in names]
    return list(dict.fromkeys(out))


def _loaded_paths(rel: str, module: str, level: int, names: list[str], folders: list[str]) -> set[str]:
    """The tree paths, without `.py`, of every module an import loads when it resolves from one of `folders` (a
    relative import: from `rel`'s package): `from a.b import c` loads `a`, `a/b` and maybe `a/b/c`."""
    if level:
        here = rel.split("/")[:-1]
        if level - 1 > len(here):
            return set()
        folders = ["/".join(here[:len(here) - (level - 1)])]
    parts = [p for p in module.split(".") if p]
    dotted = [parts[:i] for i in range(1, len(parts) + 1)] + [parts + [n] for n in names]
    return {"/".join([folder] + d if folder else d) for folder in folders for d in dotted if d}


def failing_imports(start: str, facts_of: Callable[[str], dict | None], folders: list[str],
                    extensions: dict[str, str] | None = None, soft: bool = False) -> dict[str, list[str]]:
    """{category: the import chain, as text per hop} for a launched file of the tree (`start`, relative to the root):
    the first chain (fewest hops) from its unconditional imports to an error finding of each category. `folders`:
    where a top-level import is looked for (the script's own folder first, as `sys.path[0]`, then the launch's);
    `facts_of(rel)`: a tree file's `hard` facts, None when the tree has no such file; `extensions`: {module path
    (`pkg/_C`, as a relative import inside the tree resolves it, or the installed name `turbo_diffusion_ops`): where
    the tree's setup.py builds it as a CUDA extension}, an import of which is a kernel hit (installed by `pip install
    .`, that module is the nvcc-built library, t16a); `soft`: kernel warnings on imports count too (SOFT)."""
    extensions = extensions or {}
    chains: dict[str, list[str]] = {}
    seen = {start}
    frontier: list[tuple[str, list[str]]] = [(start, [])]
    for _hop in range(MAX_HOPS):
        following: list[tuple[str, list[str]]] = []
        for rel, chain in frontier:
            facts = facts_of(rel) or {}
            for line, category, code, symbol in (facts.get("hits") or []) + ((facts.get(SOFT) or []) if soft else []):
                if category not in chains:
                    chains[category] = chain + [f"{rel}:{line} `{symbol}` ({code})"]
            held = facts.get(NCCL)
            if NCCL not in chains and isinstance(held, list) and len(held) in (3, 4):
                chains[NCCL] = chain + [f"{rel}:{held[0]} `{held[2]}` ({held[1]})"]
                if facts.get(SPAWNS) and rel != start:
                    # the module that hard-codes NCCL starts the ranks itself: a detectron2-style `launch()` helper
                    # the script calls (xmodaler's engine/launch.py: mp.spawn, then NCCL; tp54a)
                    chains[SPAWNS] = [rel]
                if len(held) == 4:
                    chains[NCCL_OPTION] = [held[3]]     # the NCCL is an argparse option's default
            for line, module, level, names in facts.get("imports") or []:
                shown = "." * level + module
                if extensions and "kernel" not in chains:
                    built = _loaded_paths(rel, module, level, names, [""]) & extensions.keys()
                    if built:
                        where = extensions[min(built)]
                        chains["kernel"] = chain + [f"{rel}:{line} `{shown}` (the tree's CUDA extension, {where})"]
                # the first folder that has the module is the one Python loads it from (sys.path order)
                for folder in folders[:1] if level else folders:
                    found = [t for t in _module_files(rel, module, level, names, [folder]) if facts_of(t) is not None]
                    for target in found if NCCL not in chains and facts.get(IMPORTED_CALLS) else ():
                        left = _default_left(facts[IMPORTED_CALLS], names, (facts_of(target) or {}).get(NCCL_DEFAULTS)
                                             or {})
                        if left is not None:
                            function, called, held = left
                            chains[NCCL] = chain + [f"{rel}:{line} `{shown}`", f"{rel}:{called} `{function}(...)`",
                                                    f"{target}:{held[0]} `{held[2]}` ({held[1]})"]
                    for target in found:
                        if target not in seen:
                            seen.add(target)
                            following.append((target, chain + [f"{rel}:{line} `{shown}`"]))
                    if found:
                        break
        frontier = following
        if not frontier:
            break
    return chains


def _hard(result: FileResult) -> dict:
    held = (result.summary or {}).get(FACT)
    return held if isinstance(held, dict) else {}


def facts_reader(root: Path, by_rel: dict[str, FileResult], analyze: Callable[[bytes, str], FileResult] | None,
                  cache: dict) -> Callable[[str], dict | None]:
    """facts_of for failing_imports: the run's facts of a tree file, else (a file the run did not audit) the facts of
    one analysis of it; None when the tree has no such Python file."""
    def facts_of(rel: str) -> dict | None:
        key = ("hard", rel)
        if key not in cache:
            known = by_rel.get(rel)
            if known is not None:
                cache[key] = _hard(known)
            elif analyze is None:
                cache[key] = None
            else:
                path = root / rel
                try:        # is_file: a FIFO or device named x.py is refused, never opened
                    ok = path.is_file() and path.stat().st_size <= _MAX_SCRIPT_BYTES
                    cache[key] = _hard(analyze(path.read_bytes(), rel)) if ok else None
                except OSError:
                    cache[key] = None
        return cache[key]
    return facts_of


def launch_import_findings(result: FileResult, root: Path, rules_by_category: dict, product: str,
                           by_rel: dict[str, FileResult], cache: dict,
                           analyze: Callable[[bytes, str], FileResult] | None = None) -> list[Finding]:
    """The findings of `result`'s recorded launches of a tree file that fails at import (one per launch line and
    category)."""
    calls, bases = recorded_calls(result, root, SUMMARY_KEY)
    if not calls:
        return []
    own = bases[-1]
    bases = launch_bases(bases, root)
    attention_lines = {f.line for f in result.findings if f.category == "attention" and f.data and f.data.get("launched")}
    new: list[Finding] = []
    for command_pos, rel, call in ((*pos_rel, call) for call in calls for pos_rel in positioned([call], "file")):
        pythonpath = call.get("pythonpath")
        # on the word naming the launched file (`wan_t2v_inference.py \` below `torchrun \`), as the option-default
        # findings are (t17a)
        call_pos = launched_word_position(call)
        if call.get("script_var"):
            if call.get("multi_process") and rules_by_category.get(NCCL) is not None:
                new += _variable_script_findings(result, root, call, command_pos, rules_by_category[NCCL], product,
                                                 by_rel, cache, analyze)
            continue
        found = resolve_launched(rel, (own,) if call.get("own_folder") else bases, cache)
        if found is None:
            continue
        base, candidate = found
        try:
            start = candidate.relative_to(root).as_posix()
        except ValueError:
            continue
        # sys.path: the script's folder, then PYTHONPATH's folders (`export PYTHONPATH=turbodiffusion`), then the launch's
        paths = [p for p in (_join(_relative(base, root), str(f)) for f in pythonpath or []) if p is not None]
        # the tree's src layout last (`src/slam_llm`, installed by `pip install -e .`: the PyPA packaging guide's
        # "src layout"), where a package no other folder holds is imported from (t21b, SLAM-LLM)
        # then the tree's installable sub-projects (Dromedary's `llama_dromedary/setup.py` with its package in
        # `llama_dromedary/llama_dromedary/`, installed by `cd llama_dromedary && pip install -e .`; tp53b)
        if ("child-setups",) not in cache:
            cache[("child-setups",)] = [s.rsplit("/", 1)[0] for s in _child_setups(root)]
        folders = list(dict.fromkeys(["/".join(start.split("/")[:-1])] + paths
                                     + [_relative(b, root) for b in (base, root)]
                                     + (["src"] if (root / "src").is_dir() else []) + cache[("child-setups",)]))
        key = ("imports", start, tuple(folders))
        facts_of = facts_reader(root, by_rel, analyze, cache)
        if key not in cache:
            cache[key] = failing_imports(start, facts_of, folders, _tree_extensions(root, (base, root), facts_of))
        for category, chain in cache[key].items():
            if category == NCCL and not call.get("multi_process") and not _spawns_ranks(
                    call, facts_of(start), bool(cache[key].get(SPAWNS))):
                continue        # one process (`python train.py`): the script's distributed branch may never run
            if category == NCCL and set(cache[key].get(NCCL_OPTION) or ()) & {
                    o.replace("-", "_") for o in call.get("options") or [] if isinstance(o, str)}:
                continue        # `--distributed-backend nccl` passed: the option's own line is the backend's finding
            rule = rules_by_category.get(category)
            if rule is None or (category == "attention" and {call_pos[0], command_pos[0]} & attention_lines):
                continue
            message = rule.message.replace("{symbol}", rel) + " (" + " -> ".join(chain) + ")"
            # NPU143 says "this line starts several processes": the launcher's line (`torchrun \`), where test24,
            # test28 and tuned_t22c label it; the import failures stay on the launched file's word (t17a)
            where = command_pos if category == NCCL else call_pos
            new.append(call_finding(rule, product, result, where, message, rel,
                                    {"launched": rel, "chain": chain}))
    return unsuppressed(new, calls, Path(result.path), root) if new else new


# an option asking a script for a number of devices, processes or nodes, or for its distributed mode (`--n-gpu-per-node`,
# `--world-size`, `--multiprocessing-distributed`, `--nprocs`)
_RANKS_OPTION_RE = re.compile(r"(?:^|[-_])(?:n?gpus?|world|nprocs?|num[-_]?proc|nodes?|multiprocessing|distributed|ddp)"
                              r"(?:$|[-_])", re.I)


def _spawns_ranks(call: dict, facts: dict | None, launcher_spawns: bool = False) -> bool:
    """A one-process launch whose script starts its ranks itself (I2SB's `python train.py --n-gpu-per-node $N_GPU`:
    torch.multiprocessing `Process` per GPU, each calling init_process_group): the launched file spawns, or
    (`launcher_spawns`) the module of its NCCL chain does, and the line passes an option for the number of ranks or
    the distributed mode (tp53b, decision 33), not one rank (`--num-gpus 1`: detectron2-style launchers call the
    main function in place, tp54a)."""
    ones = set(call.get("ones") or ())
    # or the launch shows the script several GPUs (`export CUDA_VISIBLE_DEVICES=0,1,2,3` then `python ../tools/train.py`:
    # the ImageNet example's `mp.spawn(main_worker, nprocs=torch.cuda.device_count(), ...)` starts one rank per GPU it
    # sees; AdelaiDepth's LeReS, tp55a)
    return (bool((facts or {}).get(SPAWNS)) or launcher_spawns) and (int(call.get("visible_devices") or 0) > 1 or any(
        isinstance(o, str) and _RANKS_OPTION_RE.search(o) and o not in ones for o in call.get("options") or []))


def _variable_script_findings(result: FileResult, root: Path, call: dict, where: tuple[int, int, int], rule,
                               product: str, by_rel: dict[str, FileResult], cache: dict,
                               analyze: Callable[[bytes, str], FileResult] | None) -> list[Finding]:
    """NPU143 for a multi-process launch of a script held in a variable (`python -m torch.distributed.launch ...
    ${PT_SCRIPT} --config=... --launcher=pytorch`, CameraCtrl's dist_run.sh; lead decision 33): the scripts it can
    run are the tree's scripts whose argparse defines every option the line passes; when there are some and each
    hard-codes NCCL, the line starts NCCL process groups whichever is passed (pd37). Options are needed: a bare
    `${SCRIPT}` says nothing of which script it is."""
    options = {str(o).replace("-", "_") for o in call.get("options") or []}
    if not options:
        return []
    key = ("variable", tuple(sorted(options)))
    if key not in cache:
        facts_of = facts_reader(root, by_rel, analyze, cache)
        chains: list[list[str]] = []
        complete = True
        for rel in _tree_scripts(root, by_rel, cache):
            if rel not in by_rel and not _names_options(root / rel, options):
                continue            # a file the run did not audit is analysed only when its text names the options
            facts = facts_of(rel) or {}
            if options <= set(facts.get("options") or []):
                chain = failing_imports(rel, facts_of, ["/".join(rel.split("/")[:-1]), ""]).get(NCCL)
                found = [chain] if chain else _option_module_importers(rel, root, by_rel, cache, facts_of)
                complete = complete and bool(found)
                chains += found
        cache[key] = chains if chains and complete else []
    chains = cache[key]
    if not chains:
        return []
    shown = "${" + str(call["script_var"]) + "}"
    message = rule.message.replace("{symbol}", shown) + " (each script of the tree that takes its options: " + \
        "; ".join(" -> ".join(c) for c in chains[:3]) + ")"
    return [call_finding(rule, product, result, where, message, shown, {"launched": shown, "chain": chains[0]})]


_MAX_TREE_SCRIPTS = 2000


def _option_module_importers(module_rel: str, root: Path, by_rel: dict[str, FileResult], cache: dict,
                             facts_of: Callable[[str], dict | None]) -> list[list[str]]:
    """The NCCL chains of the tree's scripts that import `module_rel`, a module of the tree whose argparse defines
    the options a launch passes but that starts nothing itself (image_classification_sota's `lib/utils/args.py`:
    `tools/train.py`, `tools/test.py` ... call its `parse_args()`; tp52c, test150): the launched script is one of its
    importers, so the line starts NCCL process groups when every importer hard-codes NCCL; [] when one does not, or
    none imports it. Only files whose text names the module's last part are analysed."""
    stem = module_rel.rsplit("/", 1)[-1][:-len(".py")] if module_rel.endswith(".py") else ""
    if not stem or stem == "__init__":
        return []
    target = module_rel[:-len(".py")]
    word = re.compile(rf"\b{re.escape(stem)}\b")
    chains = []
    for rel in _tree_scripts(root, by_rel, cache):
        if rel == module_rel or rel.endswith("/__init__.py"):
            continue
        if rel not in by_rel and not _text_names(root / rel, word):
            continue
        folders = ["/".join(rel.split("/")[:-1]), ""]
        imports = (facts_of(rel) or {}).get("imports") or []
        if not any(target in _loaded_paths(rel, str(i[1]), int(i[2]), list(i[3]), folders) for i in imports):
            continue
        chain = failing_imports(rel, facts_of, folders).get(NCCL)
        if not chain:
            return []
        chains.append(chain)
    return chains


def _text_names(path: Path, word: re.Pattern) -> bool:
    try:
        text = path.read_bytes()[:_MAX_SCRIPT_BYTES].decode("utf-8", errors="replace")
    except OSError:
        return False
    return "import" in text and word.search(text) is not None


def _names_options(path: Path, options: set[str]) -> bool:
    try:
        text = path.read_bytes()[:_MAX_SCRIPT_BYTES].decode("utf-8", errors="replace").replace("-", "_")
    except OSError:
        return False
    return all((f"__{o}" if len(o) > 1 else f"_{o}") in text for o in options)


def _tree_scripts(root: Path, by_rel: dict[str, FileResult], cache: dict) -> list[str]:
    """The tree's Python files (relative paths): the run's own, else (the bench audits one file) a walk of the tree
    that skips hidden and vendored folders, once per pass."""
    if ("scripts",) not in cache:
        found = sorted(by_rel)
        if not found:
            for path in sorted(root.rglob("*.py"))[:_MAX_TREE_SCRIPTS]:
                rel = path.relative_to(root).as_posix()
                if not any(p.startswith(".") or p in ("site-packages", "node_modules") for p in rel.split("/")):
                    found.append(rel)
        cache[("scripts",)] = found
    return cache[("scripts",)]


def _tree_extensions(root: Path, folders: tuple[Path, ...], facts_of: Callable[[str], dict | None]) -> dict[str, str]:
    """{module path: `setup.py:LINE`} of the CUDA extensions the setup.py of `folders` (the launch's base, the tree's
    top) always build, from that file's facts: the installed name (`turbo_diffusion_ops`, `pkg/_C`) and, for a
    setup.py below the top, the tree path a relative import resolves to (`sub/pkg/_C`)."""
    out: dict[str, str] = {}
    for folder in dict.fromkeys(folders):
        where = _relative(folder, root)
        setup = f"{where}/setup.py" if where else "setup.py"
        for name, line in ((facts_of(setup) or {}).get("extensions") or {}).items():
            path = str(name).replace(".", "/")
            out.setdefault(path, f"{setup}:{line}")
            if where:
                out.setdefault(f"{where}/{path}", f"{setup}:{line}")
    # a kernels folder's own package (omniserve's `kernels/setup.py` builds `omniserve_backend.*`, KIVI's
    # `quant/setup.py` `kivi_gemv`, t17a): once built, its installed name is importable from anywhere, and nothing
    # else provides it, so an import of that name is the nvcc-built library (the tree path is not: it is not the
    # installed package's folder)
    for setup in _child_setups(root):
        for name, line in ((facts_of(setup) or {}).get("extensions") or {}).items():
            out.setdefault(str(name).replace(".", "/"), f"{setup}:{line}")
    return out


_MAX_CHILD_FOLDERS = 256


def _child_setups(root: Path) -> list[str]:
    """The setup.py files of the tree's top folders (`kernels/setup.py`, `quant/setup.py`), relative to the root."""
    try:
        tops = sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith("."))
    except OSError:
        return []
    out = []
    for top in tops[:_MAX_CHILD_FOLDERS]:
        try:
            if (top / "setup.py").is_file():
                out.append(f"{top.name}/setup.py")
        except OSError:
            continue
    return out


def _relative(folder: Path, root: Path) -> str:
    try:
        rel = folder.relative_to(root).as_posix()
    except ValueError:
        return ""
    return "" if rel == "." else rel


def apply_launch_imports(results: list[FileResult], root: Path, rules,
                         analyze: Callable[[], Callable[[bytes, str], FileResult]], product: str = "a2") -> None:
    """Add the launch findings of scripts that fail at import to every file that recorded launches (tree_calls,
    after the per-file pass)."""
    by_category: dict[str, Any] = {}
    for rule in rules:
        for kind in rule.match.get("launched") or []:
            if kind.startswith("import-") and kind[len("import-"):] in CATEGORIES + (NCCL,):
                by_category.setdefault(kind[len("import-"):], rule)
    if not by_category or not any(r.summary and r.summary.get(SUMMARY_KEY) for r in results):
        return
    by_rel = {r.path: r for r in results if r.path.endswith(".py")}
    cache: dict = {}
    reader: list = []       # the file reader, built when a launched file is not in the run

    def read(data: bytes, rel: str) -> FileResult:
        if not reader:
            reader.append(analyze())
        return reader[0](data, rel)
    add_call_findings(results, root, SUMMARY_KEY,
                      lambda result, top: launch_import_findings(result, top, by_category, product, by_rel, cache,
                                                                 read))
