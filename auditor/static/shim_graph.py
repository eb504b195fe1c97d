"""transfer_to_npu reached through the import graph (issue 11, t11c).

torch_npu.contrib.transfer_to_npu patches the whole process when it is imported (`_patch_cuda` and the device-string
wrappers of https://github.com/Ascend/pytorch/blob/master/torch_npu/contrib/transfer_to_npu.py). Ascend-native projects rarely
import it in the module that calls `torch.cuda.*`: MindSpeed-LLM's package `__init__` imports a
`*megatron_adaptor*` module that imports it, and MindSpeed-MM's entry scripts (`pretrain_vlm.py`) import
`mindspeed.megatron_adaptor` (in Ascend/MindSpeed, `mindspeed/megatron_adaptor.py` imports the shim). The
per-file check (engine: "this file imports the shim") and the Ascend-backend folder check (backends.transfer_scopes)
miss both. This pass follows imports across the tree:

- a module *loads the shim* when it, a module it imports at load time (module level, or under a module-level
  `if`/`try`; not inside a function), or a package `__init__` above either, imports the shim or a known adaptor
  that does (SHIM_MODULES), transitively inside the tree;
- a module *runs under the shim* when it loads the shim itself, or when at least one entry script (a file with an
  `if __name__ == "__main__":` block) that loads the shim reaches it, and no entry script that does not load the
  shim reaches it (MindSpeed-MM's FSDP trainer path reaches its modules without the shim: those stay errors);
- a shell script that launches (`python` / `torchrun` ... `x.py`) an entry script of the tree that loads the shim
  starts a process under the shim: its Megatron flags (`--use-flash-attn`, `--use-fused-*`, `--distributed-backend
  nccl`, `CUDA_DEVICE_MAX_CONNECTIONS=1`) select the project's own NPU paths.

What is lowered (to info, never rewritten, with the importing file named): the APIs the shim remaps
(backends.TRANSFER_REMAPPED) in Python modules that run under it; in those modules and in launching scripts also
the Megatron switches listed in MEGATRON_SWITCHES (the adaptor maps them to NPU fusions, hccl, or keeps them to pass
Megatron's own checks). Environment variables for CUDA libraries, kernels and packages are not remapped.

Cache: each file's imports are read once, in the worker, into its summary (project_imports.py: a byte test first;
only files that mention an import keyword are scanned line by line, no parse) and kept in its cache entry; the graph
is rebuilt on every run from the summaries, cached or not, so a changed import changes the result of a warm run too.
"""
from __future__ import annotations

import ast
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from auditor.discover import SourceError
from auditor.static import project_imports as _pi
from auditor.static.astutil import ast_dotted
from auditor.static.backends import CUDA_HELPER, TRANSFER_REMAPPED, as_info
from auditor.static.module_paths import absolute_dotted
from auditor.astnodes import is_main_guard, walk_list

# Modules outside the tree known to import torch_npu.contrib.transfer_to_npu at import (checked in their source):
# Ascend/MindSpeed `mindspeed/megatron_adaptor.py` (GitHub mirror, commit 02c49f5d: `from torch_npu.contrib import
# transfer_to_npu`, then TE classes and apex pieces replaced by NPU ones).
SHIM_MODULES = frozenset({"torch_npu.contrib.transfer_to_npu", "mindspeed.megatron_adaptor"})

# Findings (rule names) of Megatron switches that an Ascend adaptor keeps working on the NPU: flash attention and
# fused kernels map to torch_npu fusions, `nccl` to hccl, and CUDA_DEVICE_MAX_CONNECTIONS=1 is still required by
# Megatron's tensor/sequence-parallel check (MindSpeed-MM's posttrain_flux_dancegrpo_A5.sh says so).
MEGATRON_SWITCHES = frozenset({"flash-attention-setting", "fused-cuda-kernel-setting", "nccl-backend-setting"})
_MAX_CONNECTIONS = "CUDA_DEVICE_MAX_CONNECTIONS"

# Findings a Megatron adaptor that loads the shim also answers (a module named `*megatron_adaptor*`): Ascend/MindSpeed
# `mindspeed/megatron_adaptor.py` replaces Megatron's Transformer Engine extension classes with dummies / PTNorm and
# apex's fused optimizers and norms with NPU ones; MindSpeed-LLM's `megatron_adaptor_v2` drops transformer_engine
# from sys.modules and registers its NPU AdamW as apex.optimizers.FusedAdam. Only in modules loaded under it.
ADAPTOR_PATCHED = frozenset({"megatron-transformer-engine", "apex-fused-optimizer"})
_CUDA_ONLY_SETTING = "cuda-only-library-setting"
_TE_IMPL = re.compile(r"(?i)transformer[_-]impl\W+transformer_engine")
_ADAPTOR_NAME = "megatron_adaptor"
_FIXTURE_NOTE = " (autouse fixture)"
_ADAPTOR_STEM = re.compile(r"(?:^|_)adaptor(?:_v\d+)?$")

# the line scans (per file, in the worker) live in project_imports.py; the names stay importable here
_IMPORT_LINE, _BLOCK, _MAIN, _LAUNCHED, _LAUNCHER = _pi._IMPORT_LINE, _pi._BLOCK, _pi._MAIN, _pi._LAUNCHED, _pi._LAUNCHER
_load_time_imports = _pi.load_time_imports


def _module_name(rel: str) -> tuple[str, bool] | None:
    """Dotted module name of a file relative to the tree root (`src/` dropped); whether it is a package."""
    parts = rel.replace("\\", "/").split("/")
    if parts[0] == "src" and len(parts) > 1:
        parts = parts[1:]
    if not parts[-1].endswith(".py"):
        return None
    stem = parts[-1][:-3]
    is_pkg = stem == "__init__"
    parts = parts[:-1] if is_pkg else parts[:-1] + [stem]
    if not parts or not all(p.isidentifier() for p in parts):
        return None
    return ".".join(parts), is_pkg


def _named_modules(rels: Sequence[str], facts_of: Callable[[str], Any]) -> list[tuple[tuple[str, bool], str]]:
    """((dotted name, is package), rel) of each tree module: its name from the tree root, and (tq50a) its name from
    the folder of a wrapper entry below the root that loads the shim, which Python puts first on `sys.path`
    (cann-recipes' `models/<recipe>/sample_video.py`: `from torch_npu.contrib import transfer_to_npu`, then `from
    inference.pipeline.entry import main` out of the recipe's own folder). A name two such folders give is dropped."""
    present = set(rels)
    wrappers = {rel for rel in rels if "/" in rel and rel.endswith(".py")
                and rel.rsplit("/", 1)[0] + "/__init__.py" not in present
                and (facts := facts_of(rel)) and facts.get("mark") and facts.get("main")}
    roots = sorted({rel.rsplit("/", 1)[0] for rel in wrappers})
    out = [(named, rel) for rel in rels if (named := _module_name(rel)) is not None]
    if not roots:
        return out
    taken = {named[0] for named, _rel in out}
    # a wrapper is a script nothing imports: its path names it, so two recipes' `sample_video.py` stay two entries
    out += [((rel[:-3], False), rel) for rel in sorted(wrappers) if _module_name(rel) is None]
    taken |= {rel[:-3] for rel in wrappers}
    below: dict[str, list[tuple[tuple[str, bool], str]]] = {}
    for rel in rels:
        for root in roots:
            if rel.startswith(root + "/") and (named := _module_name(rel[len(root) + 1:])) is not None and \
                    named[0] not in taken:
                below.setdefault(named[0], []).append((named, rel))
    return out + [found[0] for found in below.values() if len({rel for _n, rel in found}) == 1]


def loaded_modules(module: str, names: list[str], current: str, is_pkg: bool, known: dict[str, str]) -> list[str]:
    """Dotted names (inside the tree where `known` has them, else as written) an import statement loads."""
    module = absolute_dotted(module, current, is_pkg)
    if not module:
        return []
    out = [module]
    out += [f"{module}.{n}" for n in names if f"{module}.{n}" in known]
    return out


def _parents(module: str) -> list[str]:
    parts = module.split(".")
    return [".".join(parts[:k]) for k in range(1, len(parts))]


class ShimGraph:
    """The tree's import graph, as far as transfer_to_npu is concerned."""

    def __init__(self, files: Sequence[tuple[Path, str]], project: _pi.ProjectImports | None = None) -> None:
        """`project` holds each file's import facts (read in the worker, kept in the cache); without it, or for a
        file whose summary has none, the file is read here."""
        project = project if project is not None else _pi.ProjectImports(files)
        self._project = project
        self.known: dict[str, str] = {}         # dotted name -> rel
        self.edges: dict[str, set[str]] = {}    # load-time imports (tree modules only) and parent packages
        self.lazy: dict[str, set[str]] = {}     # imports inside functions (run when called)
        self.direct: dict[str, str] = {}        # module -> what it imports that is the shim or an adaptor
        self.entries: set[str] = set()
        self.adapted: set[str] = set()          # rels loaded through a Megatron adaptor (set by under_shim)
        self.mindspeed_rels: set[str] = set()   # ... of them, those read so only because their package imports MindSpeed
        self.megatron: set[str] = set()         # modules that import Megatron at load time
        self.mindspeed: dict[str, str] = {}     # top package -> the first file of it that imports MindSpeed
        raw: dict[str, tuple[dict, bool]] = {}
        marked = False
        read: dict[str, Any] = {}      # each file's facts once (a file without a summary is read here)

        def facts_of(rel: str) -> Any:
            if rel not in read:
                read[rel] = project.facts(rel)
            return read[rel]

        for named, rel in _named_modules([rel for _path, rel in files], facts_of):
            self.known[named[0]] = rel
            facts = facts_of(rel)
            if not facts or "load" not in facts:    # not read (a FIFO, over the limit), or no `import` in it
                continue
            marked = marked or bool(facts.get("mark"))
            raw[named[0]] = (facts, named[1])
            heads = [(module.split(".", 1)[0], load_time) for module, _names, load_time in facts["load"]]
            if any(head == "megatron" and load_time for head, load_time in heads):
                self.megatron.add(named[0])
            if any(head == "mindspeed" for head, _ in heads) and not _test_module(named[0]):
                self.mindspeed.setdefault(named[0].split(".", 1)[0], rel)
        marked = marked or bool(self.mindspeed)
        # no file names the shim or an adaptor: nothing can load it
        for name, (facts, is_pkg) in (raw.items() if marked else ()):
            deps: set[str] = set()
            lazy: set[str] = set()
            for module, names, load_time in facts["load"]:
                targets = loaded_modules(module, names, name, is_pkg, self.known)
                shim = next((t for t in [*targets, *(f"{targets[0]}.{n}" for n in names[:8] if targets)]
                             if t in SHIM_MODULES), None)
                if load_time and shim is not None:
                    self.direct.setdefault(name, shim)
                for target in targets:
                    if target in self.known:
                        into = deps if load_time else lazy
                        into.add(target)
                        into.update(p for p in _parents(target) if p in self.known)
            if facts.get("main"):
                self.entries.add(name)
            self.edges[name] = deps
            self.lazy[name] = lazy
        for name in self.known:
            self.edges.setdefault(name, set()).update(p for p in _parents(name) if p in self.known)
        self.fixtures: dict[str, str] = {}      # rel of a test module -> the conftest whose autouse fixture loads it
        called = _called_loaders(raw, self.known, project)
        for name, (shim, conftest) in called.items():
            if conftest:
                folder = self.known[name].rsplit("/", 1)[0] if "/" in self.known[name] else ""
                for mod, rel in self.known.items():
                    if (not folder or rel.startswith(folder + "/")) and (_test_module(mod) or rel == self.known[name]):
                        self.fixtures.setdefault(rel, self.known[name])
            else:
                self.direct.setdefault(name, shim)
        self._loads: dict[str, str | None] = {}

    def _closure(self, start: str, lazy: bool = False) -> set[str]:
        seen = {start}
        todo = [start]
        while todo:
            cur = todo.pop()
            for nxt in [*self.edges.get(cur, ()), *(self.lazy.get(cur, ()) if lazy else ())]:
                if nxt not in seen:
                    seen.add(nxt)
                    todo.append(nxt)
        return seen

    def loads_shim(self, name: str) -> str | None:
        """The tree file (or external adaptor) through which loading `name` imports the shim, or None."""
        if name not in self._loads:
            found = None
            for mod in sorted(self._closure(name)):
                if mod in self.direct:
                    found = self.known.get(mod, mod) if mod != name else self.known[name]
                    break
            self._loads[name] = found
        return self._loads[name]

    def through_adaptor(self, name: str) -> bool:
        """Whether loading `name` imports the shim through a Megatron adaptor (`*megatron_adaptor*`)."""
        return any(mod in self.direct and (_ADAPTOR_NAME in mod or _ADAPTOR_NAME in self.direct[mod])
                   for mod in self._closure(name))

    def adaptors(self) -> set[str]:
        """Adaptor modules of the tree (`*_adaptor`, `*_adaptor_v2`) that import the shim (or a known adaptor) at
        load time. Ascend/MindSpeed's `mindspeed/megatron_adaptor.py` is imported by entry scripts outside the tree
        (Megatron's `pretrain_gpt.py`); its features manager imports the feature / patch modules lazily, inside
        `register_patches`. Such an adaptor counts as an entry script: what it reaches, lazily too, runs in a
        process it has put under the shim (issue 11, t11e, tuned on heldout5's MindSpeed rows)."""
        return {name for name in self.direct if _ADAPTOR_STEM.search(name.rsplit(".", 1)[-1])}

    def under_shim(self) -> dict[str, str]:
        """{rel: the file that loads the shim for it} for every tree module that runs under transfer_to_npu;
        `self.adapted` then holds the rels loaded through a Megatron adaptor."""
        out: dict[str, str] = {}
        self.adapted = set()
        for name, rel in self.known.items():
            via = self.loads_shim(name)
            if via is not None:
                out[rel] = via
                if self.through_adaptor(name):
                    self.adapted.add(rel)
        reached_plain: set[str] = set()
        reached_shim: dict[str, str] = {}
        reached_adaptor: set[str] = set()
        self_tests = self._self_tests()
        for entry in sorted((self.entries - self_tests) | self.adaptors()):
            via = self.loads_shim(entry)
            adaptor = via is not None and self.through_adaptor(entry)
            for mod in self._closure(entry, lazy=True):     # a function the entry calls runs in its process
                if via is None:
                    reached_plain.add(mod)
                else:
                    reached_shim.setdefault(mod, self.known[entry])
                    if adaptor:
                        reached_adaptor.add(mod)
        own = self.adaptors()
        # what an in-tree adaptor reaches (its features manager's lazy imports too) runs in the adaptor's process
        # whatever else imports it; so does a module of the adaptor's own package that no plain entry reaches
        # (MindSpeed's `mindspeed/core/...` patch modules, named by string in `register_patch` or imported by the
        # projects built on it)
        by_adaptor: dict[str, str] = {}
        for own_adaptor in sorted(own):
            for mod in self._closure(own_adaptor, lazy=True):
                by_adaptor.setdefault(mod, self.known[own_adaptor])
        for own_adaptor in sorted(own):
            top = own_adaptor.split(".", 1)[0]
            for mod in self.known:
                if mod.split(".", 1)[0] == top and mod not in reached_plain and not _test_module(mod):
                    by_adaptor.setdefault(mod, self.known[own_adaptor])
        for mod, entry in reached_shim.items():
            rel = self.known[mod]
            if (mod not in reached_plain or mod in by_adaptor) and rel not in out:
                out[rel] = entry
                if mod in reached_adaptor:
                    self.adapted.add(rel)
        names = {rel: name for name, rel in self.known.items()}
        for mod, via in by_adaptor.items():
            rel = self.known[mod]
            if rel not in out:
                out[rel] = via
                if self.through_adaptor(names[via]):
                    self.adapted.add(rel)
        for rel, conftest in self.fixtures.items():
            out.setdefault(rel, conftest + _FIXTURE_NOTE)
        self.mindspeed_rels = set()
        for rel, via in self._under_mindspeed().items():
            if rel not in out:
                out[rel] = via
                self.adapted.add(rel)
                self.mindspeed_rels.add(rel)
        return out

    def _self_tests(self) -> set[str]:
        """Entry modules that are library modules of a program under the shim: a `__main__` block in a module that
        an entry loading the shim reaches (FlashI2V's `flashi2v/modules/vae.py` smoke test, reached from
        `train/train.py`, which calls `check_and_import_npu()` first). Its `__main__` block is the module's own
        smoke test, not a second program: it does not keep the modules it reaches off the shim (a launched
        entry is read by apply_shim_graph's launch scripts; one that loads the shim itself is not one of these)."""
        shim_entries = [e for e in self.entries if self.loads_shim(e) is not None]
        if not shim_entries:
            return set()
        reached = set().union(*(self._closure(e, lazy=True) - {e} for e in shim_entries))
        return {e for e in self.entries if e in reached and self.loads_shim(e) is None and not _test_module(e)}

    def _under_mindspeed(self) -> dict[str, str]:
        """{rel: why} for the Megatron modules of a package that imports MindSpeed itself (mcore-bridge's
        `config/model_config.py`: `import mindspeed.features_manager`). On Ascend, Megatron runs only under
        MindSpeed's `megatron_adaptor` (which imports transfer_to_npu and replaces Transformer Engine's wrapper
        classes), imported by the program that uses the package; a package that imports MindSpeed is written for that
        process. Only modules of that top package that import Megatron themselves at load time are read so (a module
        of the package's other paths, FSDP or vLLM, is not); test modules are not. A package that never imports
        MindSpeed keeps its findings."""
        out: dict[str, str] = {}
        for top, rel in sorted(self.mindspeed.items()):
            via = f"MindSpeed's megatron_adaptor (the package imports MindSpeed in {rel})"
            for mod, mod_rel in self.known.items():
                # the line scan counts an import under a multi-line `def` signature as load time: the parse decides
                if mod.split(".", 1)[0] == top and not _test_module(mod) and mod in self.megatron and \
                        _imports_megatron_at_load(self._project.source(mod_rel)):
                    out[mod_rel] = via
        return out


def _imports_megatron_at_load(parsed) -> bool:
    """Whether a parsed module (project.source) imports Megatron outside function and class bodies."""
    if parsed is None:
        return False
    todo: list[ast.AST] = list(parsed[1].body)
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        if isinstance(node, ast.Import) and any(a.name.split(".", 1)[0] == "megatron" for a in node.names) or \
                isinstance(node, ast.ImportFrom) and not node.level and (node.module or "").split(".", 1)[0] == "megatron":
            return True
        todo.extend(child for child in ast.iter_child_nodes(node) if isinstance(child, ast.stmt))
    return False


def _shim_import(node: ast.AST) -> str | None:
    """The shim (SHIM_MODULES) an import statement loads, or None."""
    if isinstance(node, ast.Import):
        return next((a.name for a in node.names if a.name in SHIM_MODULES), None)
    if isinstance(node, ast.ImportFrom) and node.module and not node.level:
        if node.module in SHIM_MODULES:
            return node.module
        return next((f"{node.module}.{a.name}" for a in node.names if f"{node.module}.{a.name}" in SHIM_MODULES), None)
    return None


def _autouse_fixture(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """`@pytest.fixture(autouse=True, ...)` (or `@fixture(...)`): pytest runs it before every test it covers."""
    for dec in fn.decorator_list:
        if isinstance(dec, ast.Call):
            f = dec.func
            named = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
            if named == "fixture" and any(k.arg == "autouse" and isinstance(k.value, ast.Constant) and
                                          k.value.value is True for k in dec.keywords):
                return True
    return False


def _load_time_calls(tree: ast.Module) -> set[str]:
    """Dotted names (`mock`, `adapter.mock`) called by a module's load-time statements (module level, or under a
    module-level `if` / `try` / `with` / loop; not in a function or class body)."""
    out: set[str] = set()
    todo: list[ast.stmt] = list(tree.body)
    while todo:
        stmt = todo.pop()
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        if isinstance(stmt, (ast.If, ast.For, ast.While, ast.With, ast.Try)) or type(stmt).__name__ == "TryStar":  # 3.11
            for field in ("body", "orelse", "finalbody"):
                todo.extend(getattr(stmt, field, None) or [])
            for handler in getattr(stmt, "handlers", None) or []:
                todo.extend(handler.body)
            heads = [getattr(stmt, f) for f in ("test", "iter") if getattr(stmt, f, None) is not None]
            heads += [item.context_expr for item in getattr(stmt, "items", None) or []]
        else:
            heads = [stmt]
        for head in heads:
            for node in walk_list(head):
                if isinstance(node, ast.Call):
                    dotted = ast_dotted(node.func)
                    if dotted:
                        out.add(dotted)
    return out



def _names_shim(targets: list[str], names: list[str]) -> bool:
    return any(t in SHIM_MODULES for t in [*targets, *(f"{targets[0]}.{n}" for n in names[:8] if targets)])


def _called_loaders(raw: dict, known: dict[str, str], project) -> dict[str, tuple[str, bool]]:
    """Modules that load the shim through a function that imports it (issue 11, t11k, tuned on heldout8):
    {module: (shim, is a conftest fixture)}.

    - a pytest `conftest.py` whose autouse fixture imports the shim (DeepLink's op tests: the session fixture picks
      torch_npu + transfer_to_npu or DIPU by platform): the test modules it covers run under the shim;
    - a module whose function imports the shim and that function is called at load time, in that module or by a
      module that imports it at load time (a device-agnostic shim package: `import pkg.torch_npu_adapter as
      adapter` ... `adapter.mock()` in the package `__init__`, where `mock()` imports transfer_to_npu): the caller
      loads the shim as if it imported it.
    A function nobody calls at load time (a lazy `exe_adaptation()`) loads nothing."""
    lazy = [name for name, (facts, is_pkg) in raw.items()
            if facts.get("mark") and any(not load_time and _names_shim(loaded_modules(module, names, name, is_pkg, known), names)
                                         for module, names, load_time in facts["load"])]
    if not lazy or project is None:
        return {}
    out: dict[str, tuple[str, bool]] = {}
    for name in lazy:
        parsed = project.source(known[name])
        if parsed is None:
            continue
        loaders: dict[str, str] = {}
        for fn in parsed[1].body:
            if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            shim = next((s for node in walk_list(fn) if (s := _shim_import(node))), None)
            if shim is None:
                continue
            if known[name].rsplit("/", 1)[-1] == "conftest.py" and _autouse_fixture(fn):
                out[name] = (shim, True)
            loaders[fn.name] = shim
        if not loaders or name in out:
            continue
        hit = next((s for f, s in loaders.items() if f in _load_time_calls(parsed[1])), None)
        if hit is not None:
            out[name] = (hit, False)
            continue
        for importer, (facts, is_pkg) in raw.items():
            if importer == name or not any(load_time and name in loaded_modules(module, names, importer, is_pkg, known)
                                           for module, names, load_time in facts["load"]):
                continue
            shim = _calls_loader(project.source(known[importer]), importer, is_pkg, name, loaders, known)
            if shim is not None:
                out.setdefault(importer, (shim, False))
    return out


def _calls_loader(parsed, importer: str, is_pkg: bool, target: str, loaders: dict[str, str],
                  known: dict[str, str]) -> str | None:
    """The shim that `importer` loads by calling, at load time, a function of `target` that imports it, or None."""
    if parsed is None:
        return None
    bound: dict[str, str] = {}          # the name the importer calls through -> "" (a module) or the function name
    for node in walk_list(parsed[1]):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name == target:
                    bound[a.asname or a.name] = ""
        elif isinstance(node, ast.ImportFrom):
            module = "." * node.level + (node.module or "")
            resolved = loaded_modules(module, [], importer, is_pkg, known)
            base = resolved[0] if resolved else ""
            for a in node.names:
                if f"{base}.{a.name}" == target:
                    bound[a.asname or a.name] = ""
                elif base == target and a.name in loaders:
                    bound[a.asname or a.name] = a.name
    for call in _load_time_calls(parsed[1]):
        head, _, attr = call.rpartition(".")
        if head and bound.get(head) == "" and attr in loaders:
            return loaders[attr]
        if not head and bound.get(call):
            return loaders[bound[call]]
    return None


def _test_module(name: str) -> bool:
    return any(p in ("test", "tests") or p.startswith("test_") or p.endswith("_test") for p in name.split("."))


def _launched_entries(launched: list, entries: dict[str, list[str]], shimmed: dict[str, str]) -> str | None:
    """The entry script (rel) under the shim that a shell script launches, or None. `launched` is the script's
    [[literal folders], file name] list (project_imports.launched_paths); `entries` maps a file name to every entry
    script of that name; a launched path (`$basepath/pretrain_gpt.py`, `tools/train.py`) picks the entry whose path
    ends with its literal folders; a bare name counts only when one entry has it."""
    for folders, name in launched:
        candidates = entries.get(name, [])
        if folders:
            tail = "/".join([*folders, name])
            candidates = [c for c in candidates if c == tail or c.endswith("/" + tail)]
        if len(candidates) == 1 and candidates[0] in shimmed:
            return candidates[0]
    return None


def _chain_ends_patched(f) -> bool:
    """A launch line whose script fails at import (launch_imports, t17a) only through a finding the Megatron adaptor
    patches (`megatron.core.extensions.transformer_engine`, NPU432): the chain's last hop names that rule's code."""
    chain = f.data.get("chain") if isinstance(f.data, dict) else None
    if not chain or not isinstance(chain[-1], str):
        return False
    from auditor.rules import load_rules

    codes = {rule.code for rule in load_rules() if rule.name in ADAPTOR_PATCHED}
    return any(chain[-1].endswith(f"({code})") for code in codes)


def _lower(findings: list, via: str, python: bool, adaptor: bool = False, fallbacks: bool = True) -> tuple[list, int]:
    out = []
    lowered = 0
    for f in findings:
        if python and f.name == CUDA_HELPER:
            continue        # a helper named for CUDA whose torch.cuda calls the shim remaps: nothing to read (t11f)
        megatron = f.name in MEGATRON_SWITCHES or f.symbol == _MAX_CONNECTIONS
        # `--transformer-impl transformer_engine` in a script whose entry loads a Megatron adaptor: the adaptor
        # replaces the Transformer Engine classes (MindSpeed-LLM's `mindspeed_llm/te`; t11f, heldout4's A5 recipe)
        patched = adaptor and (f.name in ADAPTOR_PATCHED or
                               not python and f.name == _CUDA_ONLY_SETTING and _TE_IMPL.search(f.symbol or "") or
                               not python and _chain_ends_patched(f))
        fallback = fallbacks and python and f.severity == "warning" and f.data.get("context") == "guarded-import"
        if f.severity == "info" and f.data.get("context") or f.data.get("dispatch_key") or \
                not (megatron or patched or fallback or python and f.name in TRANSFER_REMAPPED):
            out.append(f)
            continue
        if fallback:
            note = (f"runs on Ascend under torch_npu.contrib.transfer_to_npu through {via}, where the import fails "
                    f"and the code takes its fallback: the fallback is the NPU path")
        elif patched:
            note = (f"loaded under the Megatron adaptor that {via} imports: it replaces Transformer Engine and apex "
                    f"classes with NPU ones")
        elif megatron:
            note = (f"runs under torch_npu.contrib.transfer_to_npu through {via}: the Ascend adaptor maps this "
                    f"Megatron switch to its NPU path (CUDA_DEVICE_MAX_CONNECTIONS=1 is kept for Megatron's own check)")
        elif via.endswith(_FIXTURE_NOTE):
            note = (f"remapped to the NPU at run time: {via[:-len(_FIXTURE_NOTE)]} imports "
                    f"torch_npu.contrib.transfer_to_npu in an autouse pytest fixture, before every test it covers; "
                    f"native torch.npu calls avoid the shim")
        else:
            note = (f"remapped to the NPU at run time: {via} imports torch_npu.contrib.transfer_to_npu when this "
                    f"module loads; native torch.npu calls avoid the shim")
        out.append(as_info(f, "transfer-to-npu", note))
        lowered += f.severity != "info"
    return out, lowered


def apply_shim_graph(results: list, files: Sequence[tuple[Path, str]],
                     project: _pi.ProjectImports | None = None) -> int:
    """Lower findings in modules that run under transfer_to_npu through the import graph, and Megatron switches
    in shell scripts that launch such an entry script; returns how many error/warning findings were lowered.
    `project` (built once per run from the results' summaries) spares reading the files again."""
    py = [(p, r) for p, r in files if r.endswith(".py")]
    if not py:
        return 0
    project = project if project is not None else _pi.ProjectImports(files, results)
    graph = ShimGraph(py, project)
    if not graph.direct and not graph.fixtures and not graph.mindspeed:
        return 0
    shimmed = graph.under_shim()
    entries: dict[str, list[str]] = {}
    for name in sorted(graph.entries):
        rel = graph.known[name]
        entries.setdefault(rel.rsplit("/", 1)[-1], []).append(rel)
    launchable = any(r in shimmed for rels in entries.values() for r in rels)
    own = sorted(graph.adaptors())
    tree_names = {rel.rsplit("/", 1)[-1] for rel in graph.known.values()}
    lowered = 0
    for result in results:
        if not result.findings or not any(f.severity != "info" or f.name == CUDA_HELPER for f in result.findings):
            continue
        via = shimmed.get(result.path)
        if via is not None:
            # the module's own `__main__` block runs only when the file runs as a script, without the shim another
            # entry loads (TorchDiff's `redistribution.py` self-test; tq45a): its lines keep their severity
            script = _script_lines(graph, project, result.path)
            kept = [f for f in result.findings if any(a <= f.line <= b for a, b in script)]
            # under MindSpeed read from the package alone (no shim import seen): its optional imports (`try: import
            # transformer_engine`) are not known to fail there, so their fallbacks are not read as the NPU path
            result.findings, n = _lower([f for f in result.findings if f not in kept] if kept else result.findings,
                                        via, python=True, adaptor=result.path in graph.adapted,
                                        fallbacks=result.path not in graph.mindspeed_rels)
            if kept:
                result.findings = sorted(result.findings + kept, key=lambda f: (f.line, f.col))
            lowered += n
            continue
        if result.path.endswith(".sh") and (launchable or own):
            facts = project.facts(result.path) or {}
            launched = _launched_entries(facts.get("launch") or [], entries, shimmed) if launchable else None
            if launched is not None:
                names = {rel: name for name, rel in graph.known.items()}
                result.findings, n = _lower(result.findings, f"the script it launches ({launched})", python=False,
                                            adaptor=graph.through_adaptor(names[launched]))
                lowered += n
            elif own and facts.get("ascend") and _outside_tree(facts.get("launch") or [], tree_names):
                via = f"the tree's Megatron adaptor ({graph.known[own[0]]}), which this Ascend script's entry loads"
                result.findings, n = _lower(result.findings, via, python=False, adaptor=True)
                lowered += n
    return lowered


def _script_lines(graph: ShimGraph, project: _pi.ProjectImports, rel: str) -> list[tuple[int, int]]:
    """The lines of a module's `if __name__ == "__main__":` blocks when the module runs under the shim only through
    other entries (it does not load the shim itself): run as a script, nothing loads the shim first."""
    name = (_module_name(rel) or ("", False))[0]
    if not name or not (project.facts(rel) or {}).get("main") or graph.loads_shim(name) is not None:
        return []
    parsed = project.source(rel)
    return [(n.lineno, n.end_lineno or n.lineno) for n in (parsed[1].body if parsed else ()) if is_main_guard(n)]


def _outside_tree(launched: list, tree_names: set[str]) -> bool:
    """Whether a script launches Python entries and none of them is a file of the tree (MindSpeed's system tests
    start Megatron's `pretrain_gpt.py`, which the user's Megatron checkout holds and which imports MindSpeed's
    `megatron_adaptor`). A launched name the tree has is read by the graph instead (plain or under the shim)."""
    return bool(launched) and not any(name in tree_names for _folders, name in launched)


# NPU700 (npu-debug-env-var) names switches that slow training when ON; these values turn them off or keep the
# quiet default (Ascend docs: ASCEND_LAUNCH_BLOCKING 0 = asynchronous, the default; ASCEND_GLOBAL_LOG_LEVEL
# 0 debug, 1 info, 2 warning, 3 error (default), 4 null; TORCH_NPUGRAPH_GC 0 = off). A script that sets them so
# (MindSpeed-MM's `export ASCEND_LAUNCH_BLOCKING=0`, `export ASCEND_GLOBAL_LOG_LEVEL=3`) asks for the fast setting.
QUIET_VALUES = {
    "ASCEND_LAUNCH_BLOCKING": frozenset({"0", "false", "False", "FALSE"}),
    "TORCH_NPUGRAPH_GC": frozenset({"0", "false", "False", "FALSE"}),
    "ASCEND_GLOBAL_LOG_LEVEL": frozenset({"3", "4"}),
}
_DEBUG_RULE = "npu-debug-env-var"


def _set_value(line: str, name: str) -> str | None:
    """The literal value `line` gives the variable `name` (`NAME=0`, `os.environ["NAME"] = "0"`,
    `setdefault("NAME", "0")`, `NAME: 0`), or None when it is not a literal."""
    m = re.search(re.escape(name) + r"""['"]?[ \t]*(?:\][ \t]*=|,|=|:)[ \t]*(['"]?)([\w.+-]*)\1(?![\w$.{(])""", line)
    return m.group(2) if m and m.group(2) else None


def quiet_fact(data: bytes, findings: Sequence) -> dict[str, bool] | None:
    """Per file, in the worker (cache FORMAT 8, in the summary's `tree` facts): for each NPU700 finding of a switch
    with quiet values, `"line:SYMBOL"` -> whether that line sets the switch to one of them (the test
    drop_quiet_debug_values made on the file's lines, read again); None when the file has no such finding."""
    out: dict[str, bool] = {}
    lines: list[str] | None = None
    for f in findings:
        quiet = QUIET_VALUES.get(getattr(f, "symbol", None) or "")
        if getattr(f, "name", None) != _DEBUG_RULE or not quiet:
            continue
        if lines is None:
            lines = data.decode("utf-8", errors="replace").splitlines()
        line = lines[f.line - 1] if 0 < f.line <= len(lines) else ""
        out[f"{f.line}:{f.symbol}"] = bool(line) and _set_value(line, f.symbol) in quiet
    return out if lines is not None else None


def drop_quiet_debug_values(results: list, files: Sequence[tuple[Path, str]],
                            project: _pi.ProjectImports | None = None) -> int:
    """Remove NPU700 findings whose line sets the switch to its off / quiet value; returns how many. Each line's
    answer comes from the file's `quiet` fact (quiet_fact, ProjectImports.tree); a finding the fact does not name
    (no summary, a finding a tree pass added) reads the file, once, counted in `project.reads`."""
    by_rel = None
    dropped = 0
    for result in results:
        if not any(f.name == _DEBUG_RULE for f in result.findings):
            continue
        fact = (_pi.held_tree(project, result.path) or {}).get("quiet") or {}
        lines: list[str] | None = None
        kept = []
        for f in result.findings:
            quiet = QUIET_VALUES.get(f.symbol or "")
            if f.name != _DEBUG_RULE or not quiet:
                kept.append(f)
                continue
            known = fact.get(f"{f.line}:{f.symbol}")
            if known is None:
                if lines is None:
                    if by_rel is None:
                        by_rel = {r: p for p, r in files}
                    try:
                        lines = _pi.read_counted(project, by_rel.get(result.path)).decode(
                            "utf-8", errors="replace").splitlines()
                    except (OSError, SourceError):
                        lines = []
                line = lines[f.line - 1] if 0 < f.line <= len(lines) else ""
                known = bool(line) and _set_value(line, f.symbol) in quiet
            if known:
                dropped += 1
                continue
            kept.append(f)
        result.findings = kept
    return dropped


def apply_ascend_scripts(results: list, project: _pi.ProjectImports) -> int:
    """`export CUDA_DEVICE_MAX_CONNECTIONS=1` in a shell script that sets up Ascend itself (sources CANN's
    set_env.sh or an env_npu script, NPUS_PER_NODE, ASCEND_RT_VISIBLE_DEVICES: project_imports' `ascend` fact):
    the script is written for the NPU, where no CUDA library reads the variable; Megatron's own tensor / sequence
    parallel check still asks for it, so it is kept on purpose (MindSpeed-LLM's checkpoint-conversion scripts;
    t11f, heldout4). Info, never rewritten; returns how many were lowered."""
    lowered = 0
    for result in results:
        fp8_product = _FP8_PRODUCT.search(result.path.rsplit("/", 1)[-1]) is not None
        if not result.path.endswith(".sh") or not any(
                (f.symbol == _MAX_CONNECTIONS or fp8_product and f.name == _FP8_SETTING) and f.severity != "info"
                for f in result.findings):
            continue
        if not (project.facts(result.path) or {}).get("ascend"):
            continue
        kept = []
        for f in result.findings:
            if f.severity == "info" or f.data.get("context"):
                pass
            elif f.symbol == _MAX_CONNECTIONS:
                f = as_info(f, "ascend-code", "set in a script that sets up Ascend itself (CANN / NPU settings): no "
                                              "CUDA library reads it there; Megatron's own check asks for it")
                lowered += 1
            elif fp8_product and f.name == _FP8_SETTING:
                f = as_info(f, "ascend-code", "in an Ascend script named for the Ascend 950 / Atlas A5 product, which "
                                              "has fp8 (as --product 950 reads it); on A2 / A3 use its bf16 twin")
                lowered += 1
            kept.append(f)
        result.findings = kept
    return lowered


# an Ascend script named for the product with fp8 (MindSpeed-LLM's `pretrain_..._fp8_A5_ptd.sh`; hl4b's reading of
# `_A5_` as Atlas A5 / Ascend 950, where the severity policy makes fp8 settings info)
_FP8_PRODUCT = re.compile(r"(?i)(?:^|[_.-])(?:a5|950[a-z]*)(?=[_.-]|$)")
_FP8_SETTING = "fp8-training-setting"


_TWIN_CONTEXT = "transfer-to-npu"
_TEST_PART = re.compile(r"^(?:tests?|testing)$|^test_|_test\.py$")


def _shim_twins(results: list) -> dict[str, str]:
    """{path: its twin} for files whose twin runs under transfer_to_npu: the same relative path under a sibling
    folder (`long_vita_megatron/core/x.py` beside `long_vita_modellink/core/x.py`, `scripts/megatron/a.sh` beside
    `scripts/modellink/a.sh`), or the one file of that name in each of the two folders. The twin has a finding
    lowered as `transfer-to-npu`, the file has none, and the two share a finding (rule and symbol)."""
    shimmed: dict[str, set] = {}
    for result in results:
        if any(f.data.get("context") == _TWIN_CONTEXT for f in result.findings):
            shimmed[result.path] = {(f.code, f.symbol) for f in result.findings}
    if not shimmed:
        return {}
    named: dict[tuple, list[str]] = {}     # (folder parts, file name) -> every path below that folder so named
    for result in results:
        parts = tuple(result.path.split("/"))
        for i in range(1, len(parts)):
            named.setdefault((parts[:i], parts[-1]), []).append(result.path)
    same: dict[tuple, list[str]] = {}      # (parent parts, rest below the sibling folder) -> twin candidates
    alone: dict[tuple, list[str]] = {}     # (parent parts, file name) -> twin candidates unique in their folder
    for rel in shimmed:
        parts = tuple(rel.split("/"))
        for i in range(len(parts) - 1):
            same.setdefault((parts[:i], parts[i + 1:]), []).append(rel)
            if parts[-1] != "__init__.py" and len(named[(parts[:i + 1], parts[-1])]) == 1:
                alone.setdefault((parts[:i], parts[-1]), []).append(rel)
    out: dict[str, str] = {}
    for result in results:
        parts = tuple(result.path.split("/"))
        if result.path in shimmed or any(_TEST_PART.search(p) for p in parts) or \
                not any(f.severity != "info" for f in result.findings):
            continue
        keys = {(f.code, f.symbol) for f in result.findings}
        for i in range(len(parts) - 1):
            found = [t for t in same.get((parts[:i], parts[i + 1:]), ()) if t.split("/")[i] != parts[i]]
            if not found and len(named[(parts[:i + 1], parts[-1])]) == 1:
                found = [t for t in alone.get((parts[:i], parts[-1]), ()) if t.split("/")[i] != parts[i]]
            twin = next((t for t in found if keys & shimmed[t]), None)
            if twin is not None:
                out[result.path] = twin
                break
    return out


def apply_shim_twins(results: list) -> int:
    """The other copy of a file the project also ships for Ascend (issue 11, pd50; heldout33's Long-VITA, whose
    training code is `long_vita_megatron/` for GPUs and `long_vita_modellink/` under MindSpeed): the project already
    has its NPU path, so this copy's findings are info, as a per-backend member's are. Reads only the results;
    returns how many were lowered."""
    twins = _shim_twins(results)
    lowered = 0
    for result in results:
        twin = twins.get(result.path)
        if twin is not None:
            note = (f"the project's Ascend copy of this file, {twin}, runs under torch_npu.contrib.transfer_to_npu: "
                    f"this copy is the CUDA member of the pair")
            lowered += sum(f.severity != "info" for f in result.findings)
            result.findings = [f if f.severity == "info" else as_info(f, "npu-twin", note) for f in result.findings]
    return lowered
