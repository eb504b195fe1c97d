"""Code nothing in a ComfyUI custom-node pack reaches (t17e, issue 11; tuned on tuned_t17e).

A ComfyUI custom-node pack is loaded by ComfyUI through its root `__init__.py`'s `NODE_CLASS_MAPPINGS`
(https://docs.comfy.org/custom-nodes/backend/lifecycle): ComfyUI imports the package and calls the node classes it
lists; nothing outside the pack calls the pack's own functions. A node pack vendors whole model repositories for
their inference path (GroundingDINO's `util/misc.py` with its DDP training helpers `all_gather`, `MetricLogger`,
`init_distributed_mode`; Marigold's `seed_all`, `find_batch_size`), and the CUDA lines of the helpers the pack never
calls neither fail nor differ on Ascend. They are reported at info ("nothing in this node pack calls it"), never
dropped: a name reached dynamically (a `getattr` on a computed name) would be missed by the reading below, and the
line still matters to whoever reuses the vendored helper.

Per file of a node pack, computed by the run (`reach_facts`; only a tree the reach pass reads pays for it, so the
per-file pass carries nothing for every other tree) and kept in the file's summary for the next run (`_Sources`):
- `top`: the top-level functions and classes, [name, first line, last line, registered], where registered means
  a decorator other than a plain wrapper (`@functools.lru_cache`, `@torch.no_grad()`) or click's own command
  decorators (`@click.command()`, `@click.option(...)`; t19d) may register it
  (`@PromptServer.instance.routes.post(...)`, `@register_model`): registered definitions are always reached, except
  a registration keyed by the class's own name (`@ARCH_REGISTRY.register()`: reached by that name, pd21);
- `main` / `main_lines`: the names its `__main__` block reads and the block's lines (none behind a package-relative
  import); `launches`: the script files and `-m` modules its strings name, a script with the folders it spells
  (`"train_network.py"`, `"src/tools/run.py"`, `"-m", "tools.train"` -> train_network, src/tools/run, train);
- `names`: per region (the top-level definition holding the reference, "" for module-level code), the names the
  region reads: bare names, imported names, attributes (except attributes of a module imported from outside the
  tree: `dist.all_gather` does not read the pack's own `all_gather`; recorded as `<root>:<attr>` and resolved per
  run against the tree's top-level names), and identifier-like strings (`FUNCTION = "loadmodel"`,
  `lumina_models.__dict__["NextDiT_2B_GQA_patch2"]`, `__all__`);

Per run (`apply_unreached_defs`): only in a tree whose root `__init__.py` names NODE_CLASS_MAPPINGS. Module-level
code of every file (scripts included) is reached, except in a file under a `tests/`, `test/` or `examples/` folder
(a vendored repository's test suite and examples: ComfyUI runs none of them; t18g), and except `if __name__ ==
"__main__":` blocks: ComfyUI imports the pack and runs none of them, so a block reaches what it calls only when the
pack runs the file as a script: `install.py` (ComfyUI-Manager runs it) or a file whose name a string of the pack
names (`[sys.executable, "train_network.py", ...]`; t18e: a vendored DDP launcher's `setup_dist`, heldout21), and never in a file with a
module-level package-relative import (`from ...lvdm import x` fails when the file runs as a script; pd9; from t18d
the block's own lines are unreached too, `dead`; from t19d the own lines of every block the pack does not run:
FishSpeech's llama.py smoke test); a top-level definition is reached when a reached region reads its
name (a `from x import name` whose name the file never reads, outside a package's `__init__.py`, reads nothing;
t18d): a bare name the region's file defines itself reaches that definition only (pd9); any other name (an
attribute, an imported name, a string, a bare name of another file) reaches every definition of that name (names
are matched, not resolved);
the rest, to a fixed point, is not. t19a (heldout20..22): a name bound by `from <package outside the tree> import
name` reads `<root>:name` (brushnet's `from diffusers... import Attention` does not reach Easy-Use's vendored `class
Attention`); a module-level `from x import name` the file reads reaches through the regions that read it, not from
the module level (a decorator imported only for a class nothing builds); a module-level `name = value` that its file
never reads and that no other file imports by name or with its whole module (`whole`) is unreached (`unread`:
MimicMotion's `device = torch.device("cuda" if ... else "cpu")`), unless some file loads modules by a computed name.
Findings of a Python file inside an unreached definition are lowered to info,
context `unreached` (a warning behind a CUDA gate too), unless another pass already lowered them to info.
pd23 (heldout23..25): a module-level alias `name = a.b` is a region like a name table (`deform_conv =
DeformConvFunction.apply`); a package `__init__.py`'s re-exports (`from .x import name`, `__all__`) read nothing but
in the root (`exports`: a file reading the name reaches it itself); a `from pkg.mod import C` reaches the C of
pkg/mod.py when the pack has it (two vendored copies, SAM2's and SAM3's `TwoWayTransformer`), and so does a dotted
config path; configs under a training folder name nothing to build; `@triton.jit` and other compilers' decorators
register nothing; a guard may hold a guard, and one whose names nothing reads is unreached (decision 1, vacuously), as
is a function's `try: import X` probe (`probes`); a CUDA source that only unreached code names, and a training or
data-preparation shell launcher nothing runs (decision 9), are info.
"""
from __future__ import annotations

import ast
import re
from fnmatch import fnmatchcase
import sys
from dataclasses import replace
from pathlib import Path
from collections import Counter
from collections.abc import Callable, Collection, Iterator
from typing import Any

from auditor.astnodes import computed_getattr, is_main_guard, line_span, module_nodes, walk_list
from auditor.static.astutil import ast_dotted, logs_its_arguments, scope_locals
from auditor.static.attribute_sets import false_constant, setting_nodes_by_name
from auditor.static.backends import as_info
from auditor.static.crossfile import RELEASE_VERSION, release_version
from auditor.static.project_imports import SHELL_NAME, kept_fact, put_facts

_CONTEXT = "unreached"
_NOTE = ("nothing in this ComfyUI node pack calls it: ComfyUI reaches a pack only through its NODE_CLASS_MAPPINGS; "
         "port it if you reuse the helper")
_WEBUI_NOTE = ("nothing in this stable-diffusion-webui extension calls it: webui runs an extension's scripts/*.py, "
               "install.py and preload.py and what they import; port it if you reuse the helper")
_APP_NOTE = ("nothing this application runs reaches it: it starts from its launch scripts and runs only what they "
             "import or load by name (policy (h)); port it if you run it")
_MISSING_NOTE = ("nothing this application runs loads it, and it cannot run: it imports {}, which this tree does not "
                 "hold (a vendored upstream program the application never runs)")
_UNPARSED_NOTE = ("nothing runs it: the file does not compile under Python 3 (a syntax or tab error), so no import "
                  "of it and no run of it succeeds; port it if you repair it")
_PROBE_NOTE = ("an availability probe: nothing reads the name it imports, so on Ascend it only answers that the "
               "library is missing; the path it enables has its own findings")
_HOST_FALLBACK_NOTE = ("in the `except` fallback of an import of ComfyUI's own module ({0}), which never fails inside "
                       "ComfyUI: this node pack's host never runs the fallback; port it if you reuse the code elsewhere")
# ComfyUI's own modules: importable in every process that loads a node pack
_COMFY_MODULES = re.compile(r"^(?:comfy(?:_extras|_execution)?|folder_paths|nodes|node_helpers|server)(?:\.|$)")
_DOTTED = re.compile(r"^[A-Za-z_][\w.]*$")
# a dotted path through folders whose names are not identifiers (pd25: DragNUWA's config targets
# "custom_nodes.ComfyUI-DragNUWA.dragnuwa.svd.modules.encoders.modules.FrozenOpenCLIPImageEmbedder", which the pack's
# `get_obj_from_str` imports): it names its last part like any dotted string
_FOLDER_PATH = re.compile(r"^(?:[\w-]+\.)+[A-Za-z_]\w*$")
_BENCH_FOLDERS = frozenset({"tests", "test", "examples"})
_END = 1 << 30                  # a span's last line when it runs to the end of the file
_CONFIG_SUFFIXES = (".yaml", ".yml", ".json", ".toml", ".cfg", ".ini")
# a vendored repository's training / evaluation configs (SAM3's `train/configs/`, SAM2's `configs/sam2.1_training/`):
# the node pack builds nothing they name (pd23: SAM3's video-eval configs named `build_sam3_video_model`)
_TRAINING_FOLDER = re.compile(r"^(?:train|training|finetune)$|_train(?:ing)?$", re.IGNORECASE)
_CONFIG_BYTES = 1 << 20         # a config larger than this (a tokenizer's vocabulary) names no class to build
_WORD = re.compile(rb"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*")     # a word or a dotted path (`sam2.modeling.X`)
_KEY_WORD = re.compile(rb"[A-Za-z_]\w*(?:-\w+)+")     # a hyphenated registry key (`nerf-volume-renderer`; tq59b)
_MODULE_RUN = re.compile(r"-m\s+(?:[\w]+\.)*(\w+)")                   # "python -m pack.tools.train --cfg x"
# "python ./src/tools/run_handmesh.py --ckpt x" -> src/tools/run_handmesh: the folders a script string spells say which
# of the pack's same-named scripts it runs (pd21: PartCrafter's "datasets/preprocess/render.py" is not Unique3D's render.py)
_SCRIPT = re.compile(r"(?<![\w.-])(?:\.\.?/)*((?:[\w-]+/)*[A-Za-z_]\w*)\.py\b")
# run as a script by ComfyUI-Manager when the pack is installed (https://docs.comfy.org/custom-nodes/backend/manager)
_RUN_ON_INSTALL = frozenset({"install.py"})
# run by ComfyUI at startup, before the packs are imported (ComfyUI main.py, execute_prestartup_script)
_PRESTARTUP = "prestartup_script.py"
# a stable-diffusion-webui extension (pd27): webui imports every `scripts/*.py` of it, runs `install.py` and imports
# `preload.py` (modules/extensions.py, modules/scripts.py of AUTOMATIC1111/stable-diffusion-webui); a scripts module of
# one imports webui's script API
_WEBUI_PRELOAD = "preload.py"
# pd29: an application's launch scripts by name (besides the root scripts its own shell scripts run), the root folders
# of scripts a user runs by hand, and what makes a tree a library instead (`_library`)
_APP_SCRIPTS = frozenset({"app.py", "webui.py", "main.py", "launch.py"})
_APP_TOOL_FOLDERS = frozenset({"scripts", "tools", "bin"})
# what a launch script serves its user through: a research repository's `main.py` training entry is no application
_APP_SERVERS = frozenset({"gradio", "streamlit", "fastapi", "flask", "uvicorn", "aiohttp"})
# a desktop GUI toolkit: a script importing one is a launch script whatever its name (pd30: UVR's `UVR.py`, tkinter);
# a training script imports none
# (tq43: `qtpy`, the Qt binding shim over PyQt / PySide that BallonsTranslator's `launch.py` builds its QApplication
# with; PyQt4 and customtkinter likewise)
_APP_GUIS = frozenset({"tkinter", "PyQt5", "PyQt6", "PySide2", "PySide6", "wx", "qtpy", "PyQt4", "customtkinter"})
# the words of a launch script's name besides `_APP_SCRIPTS` (pd30: LongCat-Video's `run_streamlit.py`,
# voice-changer's `server/MMVCServerSIO.py`, a `gradio_app.py`); a `train.py` importing gradio stays no application
_APP_NAME_WORDS = frozenset({"app", "webui", "gui", "server", "ui", "streamlit", "gradio"})
# a command-line front end named for it (pd50: rvc-cli's `rvc_cli.py` / `uvr_cli.py`, argparse over the tree's modules)
_APP_CLIS = frozenset({"argparse", "click", "typer", "fire"})
_NAME_WORD = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+")     # `MMVCServerSIO` -> MMVC, Server, SIO
_NO_PACKAGE = re.compile(rb"(?m)^package-mode\s*=\s*false\b")
_LIBRARY_MARKS = {"pyproject.toml": (re.compile(rb"(?m)^\[(?:project|tool\.poetry)\]"),),
                  "setup.cfg": (re.compile(rb"(?m)^\[metadata\]"),)}
_WEBUI_MODULES = frozenset({"modules.scripts", "modules.script_callbacks"})
# decorators that wrap a function without registering it anywhere (a registered one is reached by its registry)
_WRAPPERS = frozenset({"lru_cache", "cache", "cached_property", "no_grad", "inference_mode", "wraps", "property",
                       "staticmethod", "classmethod", "contextmanager", "enable_grad",
                       # diffusers' marker for torch.compile (torch._dynamo.allow_in_graph): it builds nothing (pd18)
                       "maybe_allow_in_graph", "allow_in_graph",
                       # Streamlit's caches memoise the function and return a wrapper called by the same name
                       # (https://docs.streamlit.io/develop/api-reference/caching-and-state/st.cache_resource,
                       # .../st.cache_data); `st.cache` is their deprecated predecessor ("cache" above) (tq40)
                       "cache_resource", "cache_data", "experimental_memo", "experimental_singleton"})
# compilers' decorators: `@triton.jit`, `@triton.autotune(...)`, `@torch.jit.script`, `@numba.cuda.jit` return a kernel
# object that runs only where something launches it by name (`_kernel[grid](...)`), registering it nowhere (pd23: SAM3's
# connected-components kernels, launched only by the video tracker the pack never builds). Apart from _WRAPPERS, which
# call_defaults reads as "plain" too.
_COMPILED = frozenset({"jit", "njit", "autotune", "heuristics", "script", "compile"})


def _decorator_name(node: ast.expr) -> str | None:
    if isinstance(node, ast.Call):
        node = node.func
    if isinstance(node, ast.Attribute):
        return node.attr
    return node.id if isinstance(node, ast.Name) else None


def _click_decorator(node: ast.expr) -> bool:
    """`@click.command()`, `@click.option(...)`, `@click.argument(...)`: click builds a command object that runs only
    when something calls it (the file's `__main__` block, a console entry point), registering it nowhere
    (https://click.palletsprojects.com/en/stable/commands/); `@cli.command()` adds it to a group and stays registered."""
    if isinstance(node, ast.Call):
        node = node.func
    return isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "click"


def _name_keyed(node: ast.expr) -> bool:
    """`@ARCH_REGISTRY.register()`, `@MODELS.register_module()`: a registry keyed by the class's own name (basicsr's
    Registry, mmengine's), so the class is built only where something spells that name (`ARCH_REGISTRY.get("CodeFormer")`,
    a config's `type: CodeFormer`): it is reached like any definition, by its name read in reached code or a config
    (pd21: reactor's vendored r_basicsr registers a dozen archs and builds only CodeFormer). A key given explicitly
    (`register("name")`, `register_module(name=...)`) is not the class's name and stays registered."""
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and node.func.attr in ("register", "register_module") and isinstance(node.func.value, ast.Name)
            and not node.args and all(k.arg not in (None, "name", "module_name", "key") for k in node.keywords))


def _registers(node: ast.expr) -> bool:
    return _decorator_name(node) not in _WRAPPERS | _COMPILED and not _click_decorator(node) and not _name_keyed(node)


def _registered(node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> bool:
    return any(_registers(d) for d in node.decorator_list)


def _key_of(node: ast.expr) -> list[str] | None:
    """`@threestudio.register("nerf-volume-renderer")`, `@MODELS.register_module(name="x")`: [the registry's call as
    written, the string key it builds the definition by] (tq59b); None for any other decorator."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in ("register",
                                                                                              "register_module"):
        given = [*node.args[:1], *(k.value for k in node.keywords if k.arg in ("name", "module_name", "key"))]
        if len(given) == 1 and isinstance(given[0], ast.Constant) and isinstance(given[0].value, str) \
                and given[0].value:
            return [ast.unparse(node.func), given[0].value]
    return None


def _registration(node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> bool | list[str]:
    """True for a definition a decorator registers for a host to call (`_registered`); [registry, key] for one
    registered only under a string key (`_key_of`): where the tree's configs pick that registry's members by key, it is
    built where something spells its key (a config's `renderer_type: "nerf-volume-renderer"`), as a name-keyed one by
    its name (tq59b, tq60b)."""
    keys = [key for d in node.decorator_list if (key := _key_of(d)) is not None]
    if not keys:
        return _registered(node)
    return True if any(_registers(d) for d in node.decorator_list if _key_of(d) is None) else keys[0]


def _imported_roots(tree: ast.Module) -> dict[str, str]:
    """Names the file binds to a module imported by absolute name (`import torch.distributed as dist` -> torch,
    `from torch import distributed` -> torch): an attribute of one is another package's unless the root is the
    tree's own. Relative imports are the tree's own (not listed)."""
    roots: dict[str, str] = {}
    for node in module_nodes(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                roots[alias.asname or alias.name.split(".")[0]] = alias.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            for alias in node.names:
                roots[alias.asname or alias.name] = node.module.split(".")[0]
    return roots


def _from_imports(tree: ast.Module) -> dict[str, tuple[str, str]]:
    """Names the file binds by `from <absolute module> import name [as alias]`: bound name -> (the module's root, the
    imported name). Such a name is the tree's own only when the root is, or a package-relative import binds it too
    (`from diffusers.models.attention_processor import Attention` never reaches a vendored `class Attention` of the
    pack; t19a). A package-relative import under
    another name maps to root "" (`from .attention_processor_custom_cross import Attention as CrossAttention`: a read
    of CrossAttention reaches the pack's `Attention`; pd18)."""
    out = {alias.asname or alias.name: (node.module, alias.name) for node in module_nodes(tree)
           if isinstance(node, ast.ImportFrom) and not node.level and node.module
           for alias in node.names if alias.name != "*"}
    # a name bound both ways (champWrapper's nodes.py imports diffusers' UNet2DConditionModel, then its own) may be
    # the pack's: the outside binding alone does not decide it
    for node in module_nodes(tree):
        if isinstance(node, ast.ImportFrom) and node.level:
            for alias in node.names:
                out.pop(alias.asname or alias.name, None)
                if alias.asname and alias.asname != alias.name:
                    out[alias.asname] = ("", alias.name)
    return out


_TYPE_TESTS = frozenset({"isinstance", "issubclass"})
_MEMBERSHIP = (ast.In, ast.NotIn, ast.Is, ast.IsNot)
# typing constructs whose subscript names types, never builds them (`Union[AttnProcessor, XFormersAttnProcessor]`)
_TYPE_HINTS = frozenset({"Union", "Optional", "Type", "List", "Dict", "Tuple", "Set", "Callable", "Sequence",
                         "Iterable", "Literal", "ClassVar"})
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
# torch.utils.cpp_extension's builders, whose first argument / `name=` is the compiled module's name
_BUILDS = frozenset({"load", "load_inline", "CUDAExtension", "CppExtension"})
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


def _named_only(node: ast.expr) -> bool:
    """A name, an attribute or a tuple / list / set of them: an operand that names things without running them."""
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return all(_named_only(e) for e in node.elts)
    return isinstance(node, (ast.Name, ast.Attribute))


def _scope_locals(node: ast.AST) -> set[str]:
    """The names a function, lambda or comprehension binds for itself (parameters, assignments, loop and `with`
    targets, local imports; not those declared `global` / `nonlocal`): Python reads them locally everywhere in
    it, so a read of one names no definition of the pack (pd18: `self.checkpoint = checkpoint` with a parameter
    `checkpoint` does not reach sgm's `def checkpoint`). A class body is no such scope here."""
    return scope_locals(node, imports=True) if isinstance(node, (*_SCOPES, *_COMPREHENSIONS)) else set()


def _names_read(node: ast.AST, roots: dict[str, str], unused: Collection[ast.alias] = (),
                bound: dict[str, tuple[str, str]] | None = None, local: frozenset[str] = frozenset()) -> set[str]:
    """A bare name as is (the file's own definition of it when it has one); an attribute, an imported name or a
    string prefixed with "." (any file's definition of it); a name or attribute of an absolute import as
    `<root>:<name>` (resolved per run: the tree's own only when the root is). `unused`: imported names that reach
    nothing here (never read, or read where the reading region carries them). `bound`: _from_imports of the file.
    Not read (pd18, heldout23): a name the enclosing function binds itself (`local`, `_scope_locals`), a name or
    attribute being assigned, `self.x` / `cls.x` (an instance's attribute, never a module's definition),
    annotations, the types of `isinstance` / `issubclass`, the operands of `in` / `is` that only name things
    (`proc.__class__ in CROSS_ATTENTION_PROCESSORS`) and the subscript of `Union[...]` / `Optional[...]`: testing or
    naming a type builds nothing (Sonic's vendored diffusers `Attention`, named only in `attn: Attention` hints)."""
    out: set[str] = set()
    bound = bound or {}
    unused = set(unused)
    todo: list[tuple[ast.AST, frozenset[str]]] = [(node, local)]
    while todo:
        n, local = todo.pop()
        if isinstance(n, ast.alias) and n in unused:
            continue
        if isinstance(n, (*_SCOPES, *_COMPREHENSIONS)):
            inner = local | _scope_locals(n)
            if isinstance(n, _SCOPES):      # decorators and defaults are read where the function is defined
                outer = [*getattr(n, "decorator_list", ()), *n.args.defaults, *n.args.kw_defaults]
                todo.extend((d, local) for d in outer if d is not None)
                todo.extend((b, inner) for b in (n.body if isinstance(n.body, list) else [n.body]))
            else:
                todo.extend((c, inner) for c in ast.iter_child_nodes(n))
            continue
        if isinstance(n, ast.arg) or (isinstance(n, ast.AnnAssign) and not n.value):
            continue                                    # an annotation names a type
        if isinstance(n, ast.AnnAssign):
            todo.extend([(n.target, local), (n.value, local)])   # type: ignore[list-item]
            continue
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in _TYPE_TESTS and len(n.args) == 2:
            todo.append((n.args[0], local))
            continue
        if isinstance(n, ast.Compare) and all(isinstance(op, _MEMBERSHIP) for op in n.ops):
            todo.extend((o, local) for o in (n.left, *n.comparators) if not _named_only(o))
            continue
        if isinstance(n, ast.Subscript) and _decorator_name(n.value) in _TYPE_HINTS:
            continue
        if isinstance(n, (ast.List, ast.Tuple, ast.Set)) and _value_list(n):
            todo.extend((e, local) for e in n.elts if not isinstance(e, ast.Constant))
            continue
        if isinstance(n, ast.Call) and _decorator_name(n.func) in _BUILDS:
            # the extension's module name (`load('deform_conv', sources=[...])`) names a build, not a definition
            todo.extend((c, local) for c in (n.func, *n.args[1:], *(k.value for k in n.keywords if k.arg != "name")))
            if n.args and not isinstance(n.args[0], ast.Constant):
                todo.append((n.args[0], local))
            continue
        if isinstance(n, ast.Name):
            if isinstance(n.ctx, ast.Load) and n.id not in local:
                root, name = bound.get(n.id, (None, n.id))
                out.add(n.id if root is None else f"{root}:{name}" if root else "." + name)
            continue
        if isinstance(n, ast.ImportFrom) and not n.level and n.module:
            out.update(f"{n.module}:{a.name}" for a in n.names if a not in unused and a.name != "*")
            unused.update(n.names)        # handled here, not again as aliases below
        elif isinstance(n, ast.Attribute):
            base = n.value
            first = base         # the chain's first name: `torch.jit.load` is torch's, not the pack's `def load`
            while isinstance(first, ast.Attribute):
                first = first.value
            if isinstance(n.ctx, ast.Load) and not (isinstance(base, ast.Name) and base.id in ("self", "cls")):
                if isinstance(first, ast.Name) and first.id in roots and first.id not in local:
                    out.add(f"{roots[first.id]}:{n.attr}")
                else:
                    out.add("." + n.attr)
        elif isinstance(n, ast.alias):
            out.add("." + n.name.split(".")[-1])
        elif isinstance(n, ast.Constant) and isinstance(n.value, str) and (_DOTTED.match(n.value)
                                                                         or _FOLDER_PATH.match(n.value)):
            out.add("." + n.value.rsplit(".", 1)[-1])     # "loadmodel", "taming.modules.vqvae.GumbelQuantize"
        elif isinstance(n, ast.Constant) and isinstance(n.value, str) and n.value.isascii() \
                and _KEY_WORD.fullmatch(n.value.encode()):
            out.add("." + n.value)      # a registry key (`exporter_type: str = "mesh-exporter"`; tq60b)
        todo.extend((c, local) for c in ast.iter_child_nodes(n))
    return out


def _value_list(node: ast.List | ast.Tuple | ast.Set) -> bool:
    """Whether a literal's strings are values, not names: one of them is no dotted name (tq47b: xtts-webui's
    `choices=["v2.0.3", "v2.0.2", "main"]`, the model revisions a user picks, names none of the copy's `main()`)."""
    return any(isinstance(e, ast.Constant) and isinstance(e.value, str)
               and not all(part.isidentifier() for part in e.value.split(".")) for e in node.elts)


def _name_table(node: ast.stmt) -> bool:
    """Whether the statement is a module-level `NAME = (a, b, ...)` / `[a, b, ...]` of names and attributes only, or an
    alias `NAME = a.b` (pd23: basicsr's `deform_conv = DeformConvFunction.apply`, read by nothing the pack builds):
    naming a function runs nothing, so it reaches what it names only where something reads NAME."""
    return (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
            and (isinstance(node.value, (ast.Tuple, ast.List)) and bool(node.value.elts)
                 or isinstance(node.value, (ast.Name, ast.Attribute))) and _named_only(node.value))


def _reexports(tree: ast.Module) -> set[ast.alias]:
    """The aliases of a package `__init__.py`'s module-level `from x import name` that keep their name and that the file
    never reads itself: re-exports (`from .deform_conv import DeformConv, deform_conv`). A renamed one (`import foo as
    bar`) is read by its new name elsewhere, so it stays a read of `foo` here."""
    read = {n.id for n in module_nodes(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    return {alias for node in tree.body if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
            for sub in walk_list(node) if isinstance(sub, ast.ImportFrom)
            for alias in sub.names if alias.name != "*" and alias.asname in (None, alias.name) and alias.name not in read}


def _all_list(node: ast.stmt) -> bool:
    """`__all__ = [...]` / `__all__ += [...]` at module level: the names a star import of the package brings."""
    target = node.targets[0] if isinstance(node, ast.Assign) and len(node.targets) == 1 else \
        node.target if isinstance(node, ast.AugAssign) else None
    return isinstance(target, ast.Name) and target.id == "__all__"


def _unused_imports(tree: ast.Module) -> set[ast.alias]:
    """The `from x import name` aliases whose bound name the file never reads (Geowizard's pipeline imports
    `find_batch_size` and sizes its batches itself; t18d): importing a function does not call it. A package's
    `__init__.py` re-exports what it imports, so the caller passes it no tree here."""
    read = {n.id for n in module_nodes(tree) if isinstance(n, ast.Name)}
    return {alias for node in module_nodes(tree) if isinstance(node, ast.ImportFrom)
            for alias in node.names if alias.name != "*" and (alias.asname or alias.name) not in read}


def _off_switch_branches(tree: ast.Module) -> list[list[int]]:
    """The bodies of `if self.<FLAG>:` in a ComfyUI node class (its body names `FUNCTION`) whose body sets an
    upper-case `<FLAG> = False` that nothing else in the file sets (t19g: Inpaint-CropAndStitch's `DEBUG_MODE =
    False`, its `True` variant kept inside a string): ComfyUI builds the node class and sets no attribute of it, so
    the debug branch never runs. Not other classes: a library's base-class switch (diffusers' `has_compatibles =
    False`, `_supports_gradient_checkpointing`) is overridden by subclasses in other files."""
    stored: dict[str, int] = {}
    for node in module_nodes(tree):
        targets = node.targets if isinstance(node, ast.Assign) else \
            [node.target] if isinstance(node, (ast.AnnAssign, ast.AugAssign)) else []
        for t in targets:
            for n in walk_list(t):
                if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
                    stored[n.id] = stored.get(n.id, 0) + 1
                elif isinstance(n, ast.Attribute) and isinstance(n.ctx, ast.Store):
                    stored[n.attr] = stored.get(n.attr, 0) + 1
    out: list[list[int]] = []
    for cls in tree.body:
        if not isinstance(cls, ast.ClassDef) or not any(
                isinstance(item, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "FUNCTION" for t in item.targets)
                for item in cls.body):
            continue
        off = {t.id for item in cls.body if isinstance(item, ast.Assign) and isinstance(item.value, ast.Constant)
               and item.value.value is False for t in item.targets
               if isinstance(t, ast.Name) and t.id.isupper() and stored.get(t.id) == 1}
        if not off:
            continue
        for n in walk_list(cls):
            if not isinstance(n, ast.If):
                continue
            test = n.test
            if isinstance(test, ast.Attribute) and test.attr in off and isinstance(test.value, ast.Name) \
                    and test.value.id in ("self", "cls", cls.name) and n.body:
                out.append([n.body[0].lineno, n.body[-1].end_lineno or n.body[-1].lineno])
    return out


_EXITS = (ast.Return, ast.Raise, ast.Continue, ast.Break)


def _after_exits(tree: ast.Module) -> list[list[int]]:
    """The statements that follow an unconditional `return` / `raise` / `continue` / `break` in the same block
    (pd29: Wan2GP's `is_causal_conv1d_available()` returns False before its `torch.cuda.is_available()` test): they
    never run."""
    out: list[list[int]] = []
    for n in module_nodes(tree):
        for field in ("body", "orelse", "finalbody"):
            block = getattr(n, field, None)
            if not isinstance(block, list):
                continue
            stop = next((i for i, stmt in enumerate(block) if isinstance(stmt, _EXITS)), None)
            if stop is not None and stop + 1 < len(block):
                out.append([block[stop + 1].lineno, block[-1].end_lineno or block[-1].lineno])
    return out


# module-level calls a library module makes on import too: they do not make it a program (`_runs`)
_SETUP_CALLS = frozenset({"append", "insert", "extend", "filterwarnings", "simplefilter", "basicConfig", "setLevel",
                          "disable", "addHandler", "update", "setdefault", "load_dotenv", "register", "seed",
                          "manual_seed", "set_grad_enabled", "use", "getLogger", "set_verbosity_error"})


def _runs(node: ast.stmt) -> bool:
    """Whether a module-level statement does something when the file runs (a call other than a setup call, a loop, a
    `with`): a file that only defines, imports and assigns is a module, not a program (pd30)."""
    if isinstance(node, (ast.For, ast.AsyncFor, ast.While, ast.With, ast.AsyncWith)):
        return True
    return isinstance(node, ast.Expr) and isinstance(node.value, (ast.Call, ast.Await)) \
        and _decorator_name(node.value.func if isinstance(node.value, ast.Call) else node.value) not in _SETUP_CALLS


# the messages CPython gives Python 2 statements (`print x`, `exec "..."`, `except E, e`): no Python 3 accepts them
_PYTHON2_MESSAGES = ("Missing parentheses in call to", "multiple exception types must be parenthesized")


def _no_python3_parses(data: bytes, error: SyntaxError) -> bool:
    """Whether a file this Python cannot parse fails under every Python 3 too: a TabError, a Python 2 statement, or
    text libcst's grammar (Python 3.0 to 3.12+) rejects as well (MuseV's `import ..x`). A newer release's syntax (a
    PEP 701 f-string, a PEP 695 `type` alias) parses there, so the file may still run (review50 item 4)."""
    if isinstance(error, TabError) or str(error.msg).startswith(_PYTHON2_MESSAGES):
        return True
    import libcst

    try:
        libcst.parse_module(data)
    except Exception:       # libcst's ParserSyntaxError, or bytes it cannot decode
        return True
    return False


def reach_facts(data: bytes, package_init: bool = False) -> dict[str, Any]:
    """The file's `top`, `names` and `dead` facts (module doc); {} when it does not parse. `package_init`: the file
    is a package's `__init__.py`, whose imports re-export names (each counts as read)."""
    try:
        tree = ast.parse(data)
    except SyntaxError as error:
        return {"unparsed": True} if _no_python3_parses(data, error) else {}
    except (ValueError, RecursionError, MemoryError):
        return {}
    out: dict[str, Any] = {}
    roots = _imported_roots(tree)
    bound = _from_imports(tree)
    unused = set() if package_init else _unused_imports(tree)
    # a package's re-exports (`from .deform_conv import deform_conv`, `__all__`): read apart (`exports`), since a file
    # reading the name elsewhere reaches its definitions itself (names are matched); ComfyUI reads the root's (pd23)
    exported = _reexports(tree) if package_init else set()
    # a `from x import name` the file reads: the regions that read the name reach its definition, not the import
    # (DynamiCrafter's condition.py imports the `autocast` decorator for a class nothing builds; t19a, heldout21)
    carried = exported if package_init else unused | {
        alias for node in tree.body if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
        for sub in walk_list(node) if isinstance(sub, ast.ImportFrom) for alias in sub.names}
    # a module-level package-relative import (`from ...lvdm.models import x`) raises ImportError when the file runs
    # as a script, so its `__main__` block never runs: neither what only that block calls nor its own lines
    script_only = any(isinstance(node, ast.ImportFrom) and node.level for node in tree.body)
    top: list[list[Any]] = []
    dead: list[list[int]] = []
    names: dict[str, set[str]] = {"": set()}
    flag_names: list[list[Any]] = []
    main: set[str] = set()
    main_lines: list[list[int]] = []
    exports: set[str] = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            top.append([node.name, first, node.end_lineno or node.lineno, _registration(node)])
            own = set()
            for part in (*node.decorator_list, *getattr(node, "bases", ()), *getattr(node, "keywords", ())):
                own |= _names_read(part, roots, unused, bound)
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                own |= _names_read(node.args, roots, unused, bound)
            local = frozenset(_scope_locals(node)) if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) \
                else frozenset()
            # what only the body of an `if self.X:` reads reaches through the flag (pd43: `_unreached` leaves it out
            # where nothing turns X on)
            inside = [(flag, branch, branch.body) for flag, branch in _flag_branches(node)]
            within = [(flag, {r for stmt in body for r in _names_read(stmt, roots, unused, bound, local)})
                      for flag, _, body in inside]
            for _, branch, _ in inside:
                branch.body = []
            for part in node.body:
                own |= _names_read(part, roots, unused, bound, local)
            for _, branch, body in inside:
                branch.body = body
            own -= {node.name, "." + node.name}           # a recursive call does not reach it
            names.setdefault(node.name, set()).update(own)
            for flag, read in within:
                if read - own - {node.name, "." + node.name}:
                    flag_names.append([flag, node.name, sorted(read - own - {node.name, "." + node.name})])
        elif _name_table(node):
            # `CROSS_ATTENTION_PROCESSORS = (AttnProcessor, XFormersAttnProcessor, ...)`: a table of classes or
            # functions reaches its members only where something reads the table (pd18)
            assert isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name)
            target = node.targets[0].id
            top.append([target, node.lineno, node.end_lineno or node.lineno, False])
            names.setdefault(target, set()).update(_names_read(node.value, roots, unused, bound))
        elif is_main_guard(node):
            if script_only:
                dead.append([node.lineno, node.end_lineno or node.lineno])
            else:
                main |= _names_read(node, roots, unused, bound)
                main_lines.append([node.lineno, node.end_lineno or node.lineno])
        elif _all_list(node):
            # (a module's own `__all__` says what a star import brings, and calls nothing: detectron2-style
            # `__all__ = ["UserScatteredDataParallel", ...]` in LaMa's copied `segm_lib/nn/parallel/data_parallel.py`
            # reaches its class only where an importer reads the name; tq53c)
            exports |= _names_read(node.value, roots, (), bound)    # type: ignore[attr-defined]
        else:
            names[""] |= _names_read(node, roots, carried, bound)
            if exported:
                exports |= {r for n in walk_list(node) if isinstance(n, ast.ImportFrom)
                            for r in _names_read(n, roots, set(n.names) - exported, bound)}
    dead += _off_switch_branches(tree) + _after_exits(tree)
    put_facts(out, exports=sorted(exports))
    out["top"] = top
    methods, bases = _class_methods(tree)
    flags = _attribute_flags(tree)
    put_facts(out, flags=flags)
    if methods:
        out["methods"], out["bases"] = methods, bases
        out["words"] = sorted(_identifiers_read(tree, [(first, last) for _, first, last, _ in flags]))
    put_facts(out, dead=dead)
    out["names"] = {k: sorted(v) for k, v in names.items() if v}
    put_facts(out, flag_names=flag_names, main=sorted(main), main_lines=main_lines)
    if any(is_main_guard(node) or _runs(node) for node in tree.body):
        out["runs"] = True
    # the package-relative modules it imports at module level, unguarded: [level, dotted module]
    put_facts(out, relative=[[node.level, node.module] for node in tree.body
                             if isinstance(node, ast.ImportFrom) and node.level and node.module])
    # the script files the code names (`[sys.executable, "train_network.py", ...]`, `"scripts/train.py"`): their
    # `__main__` blocks run when the pack launches them
    launches = {stem for n in module_nodes(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)
                for stem in (*_SCRIPT.findall(n.value), *_MODULE_RUN.findall(n.value))}
    for n in module_nodes(tree):        # [sys.executable, "-m", "pack.tools.train", ...]
        if isinstance(n, (ast.List, ast.Tuple)):
            launches.update(b.value.rsplit(".", 1)[-1] for a, b in zip(n.elts, n.elts[1:])
                            if isinstance(a, ast.Constant) and a.value == "-m" and isinstance(b, ast.Constant)
                            and isinstance(b.value, str))
    out["launches"] = sorted(launches)
    # the modules only an idle `__main__` block imports are loaded only when the file runs as a script (pd27: utils3d's
    # `if __name__ == '__main__': from .nerf import *` in its package `__init__.py`)
    in_main = {id(n) for node in tree.body if is_main_guard(node) for n in walk_list(node)}
    out["modules"] = sorted(_module_words(tree, in_main))
    main_modules = _module_words(tree) - set(out["modules"]) if in_main else set()
    if main_modules:
        out["main_modules"] = sorted(main_modules)
    lazy = _lazy_children(tree) if package_init else None
    if lazy is not None:
        out["lazy"] = lazy
    listed = {n.value for node in tree.body if _all_list(node) for n in walk_list(node) if isinstance(n, ast.Constant)}
    if listed:
        out["listed"] = sorted(v for v in listed if isinstance(v, str))
    put_facts(out, whole=sorted(_whole_imports(tree)),
              stars=[[n.level, n.module or ""] for n in tree.body if isinstance(n, ast.ImportFrom)
                     and (n.level or n.module) and any(a.name == "*" for a in n.names)])
    if any(root for root, _ in bound.values()):   # what a file star-importing this one gets by name from absolute imports: `<root>:<bound name>`
        out["bound"] = sorted(f"{root}:{name}" for name, (root, _) in bound.items() if root)
    put_facts(out, unread=_unread_globals(tree), read_in=_globals_read_in(tree), guarded=_guarded_imports(tree),
              probes=_probes(tree), host_fallbacks=_host_fallbacks(tree))
    # the module-level package-relative imports' names (`from .modules.transformation import Tps`): name -> [level,
    # dotted module]; a name two of them bind is left out
    relative: dict[str, list[Any]] = {}
    twice: set[str] = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        for n in walk_list(node):
            if isinstance(n, ast.ImportFrom) and n.level and n.module:
                for a in n.names:
                    if a.asname is None and a.name != "*":
                        if a.name in relative:
                            twice.add(a.name)
                        relative.setdefault(a.name, [n.level, n.module])
    put_facts(out, relative_names={k: v for k, v in relative.items() if k not in twice})
    # `<module's last part>:<name>` of each `from ... import name`: who imports a name from which module
    out["imports_from"] = sorted({f"{(n.module or '').rsplit('.', 1)[-1]}:{a.name}" for n in module_nodes(tree)
                                  if isinstance(n, ast.ImportFrom) for a in n.names})
    # the regions that load modules by a computed name ("" for module-level code); a dotted-path resolver loads only
    # modules some string names (`_resolver`), which the module words already count
    dynamic = sorted({"" if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) else node.name
                      for node in tree.body for n in walk_list(node) if _dynamic_load(n) and not _resolver(node)
                      and not (lazy is not None and _lazy_getattr(node))})
    if dynamic:
        out["dynamic"] = dynamic
        patterns, unknown = _named_loads(tree)
        put_facts(out, patterns=patterns, dynamic_unknown=unknown)
    put_facts(out, prefixes=_module_prefixes(tree))
    if any(isinstance(n, ast.Call) and _decorator_name(n.func) == "getmembers" for n in module_nodes(tree)):
        out["members"] = True
    # the CUDA sources its strings name (`load("dcn", sources=["src/dcn_kernel.cu"])`), [file name, line]
    kernels = sorted({(n.value.rsplit("/", 1)[-1], n.lineno) for n in module_nodes(tree) if isinstance(n, ast.Constant)
                      and isinstance(n.value, str) and n.value.endswith(_CUDA_SOURCES)})
    if kernels:
        out["kernels"] = [list(k) for k in kernels]
    # the shell scripts its strings name (`subprocess.run(["bash", "scripts/train.sh"])`): the pack may run them
    shells = {m for n in module_nodes(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)
              for m in SHELL_NAME.findall(n.value)}
    if shells:
        out["shells"] = sorted(m.rsplit("/", 1)[-1] for m in shells)
    return out


def _class_methods(tree: ast.Module) -> tuple[list[list[Any]], dict[str, list[str]]]:
    """The methods of the file's top-level classes, [class, method, first line, last line, registered], and each
    class's base names (last dotted part; "<keywords>" for a metaclass or other class keyword, which may call
    methods as a framework does)."""
    methods: list[list[Any]] = []
    bases: dict[str, list[str]] = {}
    for cls in tree.body:
        if not isinstance(cls, ast.ClassDef):
            continue
        bases[cls.name] = [_decorator_name(b) or "<expr>" for b in cls.bases] + ["<keywords>"] * bool(cls.keywords)
        for node in cls.body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
                methods.append([cls.name, node.name, first, node.end_lineno or node.lineno, _registered(node)])
    return methods, bases


def _identifiers_read(tree: ast.Module, skip: Collection[tuple[int, int]] = ()) -> set[str]:
    """Every name, attribute and identifier-like string part the file reads, wherever it is (`self.fn()`,
    `hooks.append(self.save)`, `getattr(m, "enable_xformers")`); "<computed-self>" when the file reads an attribute of
    `self` / `cls` by a computed name (`getattr(self, f"on_{event}")`: any method of its classes), "<computed-call>"
    when it calls an attribute read by a computed name (`getattr(pipe, mode)(...)`: any method of the pack). Not on
    the lines of `skip` (the bodies of attribute flags, `_attribute_flags`, read apart)."""
    out: set[str] = set()
    for n in module_nodes(tree):
        if not (skip and any(a <= getattr(n, "lineno", 0) <= b for a, b in skip)):
            out.update(_words(n))
    return out


def _words(n: ast.AST) -> list[str]:
    """The words one node reads (`_identifiers_read`)."""
    out = ["<computed-call>"] if isinstance(n, ast.Call) and computed_getattr(n.func) and not _of_self(n.func) else []
    if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Store):
        out.append(n.id)
    elif isinstance(n, ast.Attribute) and not isinstance(n.ctx, ast.Store):
        out.append(n.attr)
    elif isinstance(n, ast.Constant) and isinstance(n.value, str) and _DOTTED.match(n.value.lstrip(".")):
        out += n.value.split(".")
    elif computed_getattr(n) and _of_self(n):
        out.append("<computed-self>")
    elif isinstance(n, ast.Call) and _decorator_name(n.func) == "methodcaller" and n.args \
            and not isinstance(n.args[0], ast.Constant):
        out.append("<computed-call>")
    return out


_ARG = "arg:"     # the flag key of a parameter: `arg:experimental`


def _off_defaults(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> set[str]:
    """The parameters of `fn` whose default is a false constant (`use_vllm=False`) and that `fn` never rebinds."""
    positional = [*fn.args.posonlyargs, *fn.args.args]
    pairs = [*zip(positional[len(positional) - len(fn.args.defaults):], fn.args.defaults),
             *zip(fn.args.kwonlyargs, fn.args.kw_defaults)]
    stored = {n.id for n in walk_list(fn) if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)}
    return {a.arg for a, d in pairs if false_constant(d) and a.arg not in stored}


def _callee_names(node: ast.AST) -> dict[int, str]:
    """{id(function): the name its calls spell}: a class's for its `__init__` (`GPT(...)`), its own for the rest."""
    out = {id(fn): fn.name for fn in walk_list(node) if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef))}
    for cls in walk_list(node):
        if isinstance(cls, ast.ClassDef):
            out.update((id(fn), cls.name) for fn in cls.body
                       if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) and fn.name == "__init__")
    return out


def _flag_branches(node: ast.AST) -> list[tuple[str, ast.If]]:
    """(X, the `if`) of each `if self.X:` / `if self.X and ...:` with a body under `node`, and (`arg:p`, the `if`) of
    each `if p and ...:` on a parameter `p=False` of the enclosing function (pd43: ChatTTS' `experimental`)."""
    out = []
    seen: set[int] = set()
    callees = _callee_names(node)
    for fn in walk_list(node):
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        off = _off_defaults(fn)
        for n in walk_list(fn):
            if not isinstance(n, ast.If) or not n.body or id(n) in seen:
                continue
            tests = n.test.values if isinstance(n.test, ast.BoolOp) and isinstance(n.test.op, ast.And) else [n.test]
            flag = next((t.attr for t in tests if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name)
                         and t.value.id in ("self", "cls")), None) or \
                next((f"{_ARG}{callees[id(fn)]}.{t.id}" for t in tests if isinstance(t, ast.Name) and t.id in off), None)
            if flag is not None:
                seen.add(id(n))
                out.append((flag, n))
    return out


def _attribute_flags(tree: ast.Module) -> list[list[Any]]:
    """[X, first line, last line, the words its body reads (`_identifiers_read`)] of each `if self.X:` / `if self.X
    and ...:` body (pd19): when nothing in the pack sets X but to a false constant, the body never runs."""
    out: list[list[Any]] = [[flag, n.body[0].lineno, max(b.end_lineno or b.lineno for b in n.body), set()]
                            for flag, n in _flag_branches(tree)]
    if out:
        for n in module_nodes(tree):
            line = getattr(n, "lineno", 0)
            for entry in out:
                if entry[1] <= line <= entry[2]:
                    entry[3].update(_words(n))
        for entry in out:
            entry[3] = sorted(entry[3])
    return out


def _of_self(call: ast.AST) -> bool:
    """Whether the call's first argument is `self` / `cls`."""
    return isinstance(call, ast.Call) and bool(call.args) and isinstance(call.args[0], ast.Name) \
        and call.args[0].id in ("self", "cls")


def _lazy_getattr(node: ast.stmt) -> bool:
    """A package's module-level `def __getattr__(name)` that imports `f".{...}"` relative to the package itself
    (`importlib.import_module(f'.{module_name}', __name__)`): a lazy loader of the package's own children."""
    return isinstance(node, ast.FunctionDef) and node.name == "__getattr__" and any(
        isinstance(c, ast.Call) and _decorator_name(c.func) == "import_module" and len(c.args) == 2
        and isinstance(c.args[0], ast.JoinedStr) and c.args[0].values
        and isinstance(c.args[0].values[0], ast.Constant) and c.args[0].values[0].value == "."
        and isinstance(c.args[1], ast.Name) and c.args[1].id in ("__name__", "__package__") for c in walk_list(node))


def _lazy_children(tree: ast.Module) -> dict[str, list[str]] | None:
    """For a package `__init__.py` with a lazy `__getattr__` (`_lazy_getattr`, pd27: utils3d's): the children it may
    load, {child: the names that make it load it} from a module-level table `{"nerf": ["get_rays", ...], ...}`, or
    {"*": []} when it loads the child named by the attribute itself (`utils3d.torch`); None for any other file."""
    if not any(_lazy_getattr(node) for node in tree.body):
        return None
    for node in tree.body:
        if not (isinstance(node, ast.Assign) and isinstance(node.value, ast.Dict) and node.value.keys):
            continue
        table: dict[str, list[str]] = {}
        for k, v in zip(node.value.keys, node.value.values):
            if isinstance(k, ast.Constant) and isinstance(k.value, str) and isinstance(v, (ast.List, ast.Tuple)):
                table[k.value] = [e.value for e in v.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
        if len(table) == len(node.value.keys):
            return table
    return {"*": []}


def _module_words(tree: ast.Module, skip: Collection[int] = ()) -> set[str]:
    """The module names the file imports or names, each dotted part apart (`from .mimicmotion.dwpose import
    preprocess` -> mimicmotion, dwpose, preprocess; `importlib.import_module("pack.nodes")` -> pack, nodes): a file
    whose stem (a package's folder) is none of the tree's words is imported by nothing in the tree. `skip`: the ids
    of nodes not read (an idle `__main__` block's)."""
    out: set[str] = set()
    # a word without a dot names a module only where something loads it by that name (`import_module("nodes")`) or a
    # star import brings it (`__all__`); a dict key or a mode string (`out["sample"]`) names none (pd25: OpenDiT's
    # standalone `scripts/latte/sample.py`, "named" by gaussian_diffusion's `{"sample": ...}`)
    loaded = {id(c.args[0]) for c in module_nodes(tree) if isinstance(c, ast.Call) and c.args
              and _decorator_name(c.func) in _LOADERS | {"find_spec", "import_string"}}
    loaded |= {id(c) for node in tree.body if _all_list(node) for c in walk_list(node)}
    for n in module_nodes(tree):
        if id(n) in skip:
            continue
        if isinstance(n, ast.ImportFrom):
            out.update((n.module or "").split("."))
            out.update(a.name for a in n.names)
        elif isinstance(n, ast.Import):
            out.update(part for a in n.names for part in a.name.split("."))
        elif isinstance(n, ast.Constant) and isinstance(n.value, str) and (_DOTTED.match(n.value.lstrip("."))
                                                                         or _FOLDER_PATH.match(n.value)) \
                and ("." in n.value or id(n) in loaded):
            out.update(n.value.split("."))     # `import_module(".routes", __package__)` names routes.py too
    out.discard("")
    return out


def _whole_imports(tree: ast.Module) -> set[str]:
    """The modules the file imports whole, last dotted part (`import pack.config` -> config, `from . import config`
    -> config): their globals may be read as attributes or star-imported names.
    `from .dwpose_detector import DWposeDetector` imports a name, not the module. A star import is read apart
    (`_star_files`): it brings only the globals the importing file then reads."""
    out: set[str] = set()
    # `__all__ = ["deform_conv"]` beside `from .deform_conv import deform_conv` names the function, not the module
    # (pd23: basicsr's ops/dcn/__init__.py)
    imported = {a.asname or a.name for i in module_nodes(tree) if isinstance(i, ast.ImportFrom) for a in i.names}
    listed = {n for node in tree.body if _all_list(node) for n in walk_list(node)
              if isinstance(n, ast.Constant) and n.value in imported}
    for n in module_nodes(tree):
        if isinstance(n, ast.Import):
            out.update(a.name.rsplit(".", 1)[-1] for a in n.names)
        elif isinstance(n, ast.ImportFrom):
            last = (n.module or "").rsplit(".", 1)[-1]
            out.update(a.name for a in n.names if a.name != "*" and a.name != last)   # stars: `_star_files`
        elif isinstance(n, ast.Constant) and isinstance(n.value, str) and _DOTTED.match(n.value.lstrip(".")) \
                and n not in listed:
            out.add(n.value.rsplit(".", 1)[-1])     # importlib.import_module("pack.config") / (".config", pkg)
    return out


def _unread_globals(tree: ast.Module) -> list[list[Any]]:
    """Module-level `name = value` assignments whose name the file never reads (no load of the name, no string of
    it: `__all__`), [name, first line, last line]: MimicMotion's dwpose_detector.py sets `device = torch.device("cuda"
    if torch.cuda.is_available() else "cpu")` and nothing reads it (t19a, heldout22)."""
    read = {n.id for n in module_nodes(tree) if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Store)}
    read |= {n.value for n in module_nodes(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)}
    return [[t.id, node.lineno, node.end_lineno or node.lineno] for node in tree.body
            if isinstance(node, ast.Assign) and len(node.targets) == 1
            for t in node.targets if isinstance(t, ast.Name) and t.id not in read]


def _globals_read_in(tree: ast.Module) -> list[list[Any]]:
    """[name, first line, last line, [the lines reading it]] of each module-level `name = value` that only the file's
    top-level definitions read (no module-level read, no string of it): when every reading definition is unreached, so
    is the value (pd25: OpenDiT's `configs = [triton.Config(...), ...]`, read only by the `@triton.autotune(configs=
    configs)` of kernels nothing launches)."""
    defs = [line_span(n) for n in tree.body
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))]
    defs += [(d.lineno, n.end_lineno or n.lineno) for n in tree.body
             if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) for d in n.decorator_list]
    strings = {n.value for n in module_nodes(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)}
    reads: dict[str, list[int]] = {}
    for n in module_nodes(tree):
        if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Store):
            reads.setdefault(n.id, []).append(n.lineno)
    out = []
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            name = node.targets[0].id
            lines = reads.get(name, [])
            if lines and name not in strings and all(any(a <= line <= b for a, b in defs) for line in lines):
                out.append([name, node.lineno, node.end_lineno or node.lineno, sorted(set(lines))])
    return out


_IMPORT_ERRORS = frozenset({"ImportError", "ModuleNotFoundError", "Exception", "BaseException"})


def _catches_import_errors(node: ast.Try) -> bool:
    """Whether every handler of the `try:` catches ImportError (or broader), and it has one."""
    return bool(node.handlers) and all(
        h.type is None or _decorator_name(h.type) in _IMPORT_ERRORS
        or isinstance(h.type, ast.Tuple) and any(_decorator_name(e) in _IMPORT_ERRORS for e in h.type.elts)
        for h in node.handlers)


def _guards_import(node: ast.stmt) -> bool:
    """A module-level `try:` catching ImportError (or broader) or an `if` (`if is_xformers_available():`) whose every
    statement, in every branch, is an import, an assignment, `pass` or a bare expression (a warning, a docstring)."""
    if isinstance(node, ast.Try):
        if not _catches_import_errors(node):
            return False
        parts = [*node.body, *node.orelse, *node.finalbody, *(s for h in node.handlers for s in h.body)]
    elif isinstance(node, ast.If) and not is_main_guard(node):    # (pd30: Unique3D's `if __name__ == "__main__":`
        parts = [*node.body, *node.orelse]                      # setting TF32 before its imports runs, no guard)
    else:
        return False
    # a branch may hold a guard of its own (pd23: basicsr's `if BASICSR_JIT == 'True': ext = load(...)` / `else: try:
    # from . import deform_conv_ext` / `except ImportError: pass`)
    return any(isinstance(p, (ast.Import, ast.ImportFrom)) for p in parts) and all(
        isinstance(p, (ast.Import, ast.ImportFrom, ast.Assign, ast.Pass, ast.Expr)) or _guards_import(p) for p in parts)


def _host_fallbacks(tree: ast.Module) -> list[list[Any]]:
    """[first line, last line, module] of each `except` handler of a `try` whose body imports one of ComfyUI's own
    modules (`try: import comfy.model_management as mm; return mm.intermediate_device()` / `except Exception: if
    torch.cuda.is_available(): return torch.device("cuda")`, tq44a): in a node pack the import never fails, so the
    handler never runs (read only for node packs: elsewhere a module may run outside ComfyUI)."""
    out: list[list[Any]] = []
    for node in module_nodes(tree):
        if not isinstance(node, ast.Try) or not node.handlers:
            continue
        modules = [name for imp in node.body if isinstance(imp, (ast.Import, ast.ImportFrom))
                   for name in ([imp.module or ""] if isinstance(imp, ast.ImportFrom) and not imp.level
                                else [a.name for a in imp.names] if isinstance(imp, ast.Import) else [])
                   if _COMFY_MODULES.match(name)]
        if modules:
            out.extend([h.lineno, h.end_lineno or h.lineno, modules[0]] for h in node.handlers)
    return out


def _probes(tree: ast.Module) -> list[list[int]]:
    """[first line, last line] of each import of a function's `try:` catching ImportError whose names the function never
    reads (pd23: Stable3DGen's `def _try_import_spconv(): try: import spconv; return True / except ImportError: return
    False`): an availability probe, whose import on Ascend only makes it answer False; the path it enables has its own
    findings. The lead's decision 1 with no use, vacuously: info."""
    out: list[list[int]] = []
    if not any(isinstance(n, ast.Try) and _catches_import_errors(n) for n in module_nodes(tree)):
        return out      # (most files: no walk of each function, nested ones walked again with each enclosing one)
    for fn in module_nodes(tree):
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        read = {n.id for n in walk_list(fn) if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Store)}
        read |= {name for n in walk_list(fn) if isinstance(n, (ast.Global, ast.Nonlocal)) for name in n.names}
        for node in walk_list(fn):
            if not isinstance(node, ast.Try) or not _catches_import_errors(node):
                continue
            for imp in node.body:
                if isinstance(imp, (ast.Import, ast.ImportFrom)) and not any(
                        (a.asname or a.name.split(".")[0]) in read or a.name == "*" for a in imp.names):
                    out.append([imp.lineno, imp.end_lineno or imp.lineno])
    return out


def _guarded_imports(tree: ast.Module) -> list[list[Any]]:
    """[first line, last line, [lines reading a name it binds]] of each module-level guarded optional import
    (`_guards_import`) (pd19, the lead's decision 1 of session 21): when every read of a name it binds lies in code the
    pack never reaches, or nothing reads one (pd23), the guard and its imports are info too."""
    out: list[list[Any]] = []
    for node in tree.body:
        if not _guards_import(node):
            continue
        bound = {a.asname or a.name.split(".")[0] for n in walk_list(node) if isinstance(n, (ast.Import, ast.ImportFrom))
                 for a in n.names} | {n.id for n in walk_list(node) if isinstance(n, ast.Name)
                                      and isinstance(n.ctx, ast.Store)}
        first, last = node.lineno, node.end_lineno or node.lineno
        uses = sorted({n.lineno for n in module_nodes(tree) if isinstance(n, ast.Name) and n.id in bound
                       and isinstance(n.ctx, ast.Load) and not first <= n.lineno <= last})
        out.append([first, last, uses, sorted(bound)])     # no use at all: every use is unreached, vacuously (pd23)
    return out


_LOADERS = frozenset({"import_module", "__import__", "spec_from_file_location", "load_source", "run_path",
                      "run_module", "exec"})


_BUILTIN_LOADERS = frozenset({"exec", "__import__"})


def _dynamic_load(node: ast.AST) -> bool:
    """A call that imports or runs a module whose name or path is computed (`importlib.import_module(f"nodes.{name}")`
    over a folder listing, `spec_from_file_location(name, path)`, `exec(open(path).read())`): any file may be loaded."""
    if not isinstance(node, ast.Call) or not node.args:
        return False
    name = _decorator_name(node.func)
    first = node.args[0]
    if isinstance(first, ast.Name) and first.id == "__name__":
        return False    # `import_module(__name__)`: the file's own module, already loaded (diffusers' LoRA processors)
    if name in _BUILTIN_LOADERS and not isinstance(node.func, ast.Name):
        return False    # a method of that name (pd30: voice-changer's `self.pipeline.exec(...)` runs its pipeline)
    return name in _LOADERS and not (isinstance(first, ast.Constant) and name != "spec_from_file_location")


_LISTINGS = frozenset({"listdir", "scandir", "walk", "glob", "iglob", "rglob", "iterdir"})


def _load_pattern(node: ast.expr) -> str | None:
    """The modules an f-string or a concatenation names (`f"{dir_name}.plugin"` -> `[\\w.]+\\.plugin`), as a regex
    over dotted module names; None for a name built otherwise or with no literal part."""
    parts: list[str] = []
    todo: list[ast.expr] = [node]
    while todo:
        n = todo.pop(0)
        if isinstance(n, ast.JoinedStr):
            todo[:0] = list(n.values)
        elif isinstance(n, ast.BinOp) and isinstance(n.op, ast.Add):
            todo[:0] = [n.left, n.right]
        elif isinstance(n, ast.Constant) and isinstance(n.value, str):
            parts.append(re.escape(n.value))
        elif isinstance(n, (ast.FormattedValue, ast.Name, ast.Attribute, ast.Subscript, ast.Call)):
            parts.append(r"[\w.]+")
        else:
            return None
    if not any(p != r"[\w.]+" for p in parts):
        return None
    return "".join(parts)


def _named_loads(tree: ast.Module) -> tuple[list[str], list[str]]:
    """How an application's loaders name what they load (pd29): the patterns of loaders given an f-string or a
    concatenation (`import_module(f"{dir_name}.plugin")` over a folder listing: every module matching it), and the
    regions ("" for module-level code) with a loader that may load anything: `exec`, or a name or path computed in a
    definition that lists a folder. A loader handed a plain name or parameter elsewhere loads what the tree's strings
    name (dotted module paths, `x.py` files), which the module words and launches already count."""
    patterns: set[str] = set()
    unknown: set[str] = set()
    for node in tree.body:
        region = node.name if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) else ""
        calls = [n for n in walk_list(node) if isinstance(n, ast.Call)]
        lists = any(_decorator_name(c.func) in _LISTINGS for c in calls)
        for c in calls:
            if not _dynamic_load(c):
                continue
            pattern = _load_pattern(c.args[0]) if _decorator_name(c.func) in ("import_module", "__import__") else None
            if pattern:
                patterns.add(pattern)
            elif _decorator_name(c.func) == "exec" or lists:
                unknown.add(region)
    return sorted(patterns), sorted(unknown)
_DOT_SPLITS = frozenset({"rsplit", "rpartition", "split", "partition"})


def _resolver(node: ast.stmt) -> bool:
    """Whether a top-level function loads modules only by a dotted path it is handed (pd25: the `get_obj_from_str(string)`
    of every LDM / SGM copy, `module, cls = string.rsplit(".", 1); importlib.import_module(module)`, and OpenDiT's
    `resolve_str_to_obj`, which prefixes "opendit.models.opensora_plan.modules."): the path comes from a config's
    `target` or a string of the pack, whose words name the module (`_module_words`, `_config_words`); a module
    built by concatenation is named by its prefix (`_module_prefixes`). Not a loader over a folder listing
    (`os.listdir`, `glob`: any file of the folder) or one whose name is not split from a dotted path."""
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return False
    calls = [n for n in walk_list(node) if isinstance(n, ast.Call)]
    if any(_decorator_name(c.func) in _LISTINGS for c in calls):
        return False
    split = {t.id for n in walk_list(node) if isinstance(n, ast.Assign) and _dot_split(n.value)
             for tgt in n.targets for t in walk_list(tgt) if isinstance(t, ast.Name)}
    loads = [c for c in calls if _dynamic_load(c)]
    return bool(loads) and all(_decorator_name(c.func) in ("import_module", "__import__") and (
        _dot_split(c.args[0]) or isinstance(c.args[0], ast.Name) and c.args[0].id in split) for c in loads)


def _dot_split(node: ast.expr) -> bool:
    """`s.rsplit(".", 1)`, `s.rpartition(".")`, or an item of one (`s.rsplit(".", 1)[0]`)."""
    if isinstance(node, ast.Subscript):
        node = node.value
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _DOT_SPLITS \
        and bool(node.args) and isinstance(node.args[0], ast.Constant) and node.args[0].value == "."


_PREFIX = re.compile(r"^[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*\.$")


def _module_prefixes(tree: ast.Module) -> list[str]:
    """The dotted module prefixes the file builds paths from (`"opendit.models.opensora_plan.modules." + name`,
    `f"ldm.modules.{name}"`), as folders: every module under one may be loaded by a resolver (`_resolver`)."""
    out: set[str] = set()
    # (a string handed to a logging call names an event, not a module: detectron2's `_log_api_usage("modeling.meta_arch."
    # + name)` and `torch._C._log_api_usage_once("detectron2." + identifier)`; tq53c)
    logged = {id(arg) for n in module_nodes(tree) if isinstance(n, ast.Call)
              and logs_its_arguments(ast_dotted(n.func) or "") for arg in n.args}
    for n in module_nodes(tree):
        if id(n) in logged:
            continue
        head = n.left if isinstance(n, ast.BinOp) and isinstance(n.op, ast.Add) else \
            n.values[0] if isinstance(n, ast.JoinedStr) and n.values else None
        if isinstance(head, ast.Constant) and isinstance(head.value, str) and _PREFIX.match(head.value):
            out.add(head.value.rstrip(".").replace(".", "/"))
    return sorted(out)


def _loads_dynamically(facts: dict[str, dict[str, Any]], unloaded: Collection[str] = ()) -> bool:
    """Whether some file may load modules by a computed name: at module level, or in a definition whose name any file
    reads. A loader nothing names (EchoMimic's vendored `import_filename`, never called; pd18) loads nothing; nor
    does one in or named only by `unloaded` files, nor a `setup.py`'s (pd19: Hallo2's vendored basicsr/setup.py
    execs its version file in pip's build process, not in ComfyUI's)."""
    live = {rel: f for rel, f in facts.items() if rel not in unloaded and rel.rsplit("/", 1)[-1] != "setup.py"}
    regions = {region for f in live.values() for region in f.get("dynamic", ())}
    if not regions or "" in regions:
        return bool(regions)
    read = {n.rpartition(":")[2].removeprefix(".") for f in live.values()
            for names in (*f.get("names", {}).values(), f.get("main", ())) for n in names}
    return bool(regions & read)


def _listed_members(facts: dict[str, dict[str, Any]], unloaded: Collection[str]) -> set[tuple[str, str]]:
    """Every top-level definition of a module that a file lists with `inspect.getmembers` and names (3D-Pack's
    `__init__.py` imports `f".{nodes_filename}"`, `nodes_filename = "nodes"`, and registers each class of it as a node;
    pd21): the members are used without a read of their names."""
    out: set[tuple[str, str]] = set()
    for rel, f in facts.items():
        if not f.get("members") or rel in unloaded or _bench_file(rel):
            continue
        words = {n.rpartition(":")[2].removeprefix(".") for names in f.get("names", {}).values() for n in names}
        for other, g in facts.items():
            parts = other.split("/")
            module = parts[-2] if parts[-1] == "__init__.py" and len(parts) > 1 else parts[-1].removesuffix(".py")
            if other != rel and module in words:
                out.update((other, name) for name, *_ in g.get("top", ()))
    return out


def _is_module(rel: str, module: str) -> bool:
    """Whether the file is the dotted module, under any folder put on sys.path (pd23: RMBG's `models/sam2/...` imported
    as `sam2.modeling.sam.transformer`, beside SAM3's own `sam/transformer.py` defining the same class names)."""
    path = rel.removesuffix(".py").removesuffix("/__init__")
    dotted = module.replace(".", "/")
    return path == dotted or path.endswith("/" + dotted)


def _launched(rel: str, launches: Collection[str]) -> bool:
    """Whether a launch string names the file: its stem, or a folder path `rel` ends with (`datasets/preprocess/render`)."""
    path = rel.removesuffix(".py")
    return any(path == launch or path.endswith("/" + launch) for launch in launches)


def _bench_file(rel: str) -> bool:
    """Whether a pack's file lies under a `tests/`, `test/` or `examples/` folder (a vendored upstream repository's
    test suite or example scripts, MuseV's `diffusers/tests/`, `diffusers/examples/`): ComfyUI imports none of them
    and runs none of their module-level code (t18g), so only a definition a reached region names is reached there."""
    return any(part in _BENCH_FOLDERS for part in rel.split("/")[:-1])


def _unnamed_files(facts: dict[str, dict[str, Any]], config_words: Collection[str]) -> set[str]:
    """The pack's modules nothing can load: no other file imports, launches or names the module (its stem, or the
    folder of a package's `__init__.py`), no config names it, and no file loads modules by a computed name
    (t19d: FishSpeech vendors fish-speech's training web UI `fish_speech/webui/manage.py`, which ComfyUI never
    imports and the pack never runs). The root `__init__.py` is what ComfyUI loads. A loader that only files
    nothing loads hold or name never runs, so it leaves the reading as it is (pd19: Hallo2's `import_filename`,
    called only by training scripts nothing imports)."""
    unloaded = _named_by_nothing(facts, config_words)
    return set() if _loads_dynamically(facts, unloaded) else unloaded


def _named_by_nothing(facts: dict[str, dict[str, Any]], config_words: Collection[str]) -> set[str]:
    """`_unnamed_files` as if no file loaded modules by a computed name."""
    named: dict[str, set[str]] = {}     # word -> the files that name it
    launched = {launch for f in facts.values() for launch in f.get("launches", ())}
    for rel, f in facts.items():
        if rel.rsplit("/", 1)[-1] == "setup.py":
            continue    # its module names are build inputs for pip (`make_cuda_ext(module="basicsr.ops.fused_act")`)
        # a module is loaded by an import, a loader's string or a launch (`_module_words`, `launches`); a name or
        # attribute read (`scheduler.sample(...)`) loads no module of that name (pd25)
        words = {*f.get("modules", ()), *(launch.rsplit("/", 1)[-1] for launch in f.get("launches", ()))}
        if rel.rsplit("/", 1)[-1] in _RUN_ON_INSTALL or _launched(rel, launched) or f.get("script"):
            words.update(f.get("main_modules", ()))     # its `__main__` block runs
        for w in words:
            named.setdefault(w, set()).add(rel)
    # a lazy package `__init__.py` loads a child when some file reads one of its names (pd27: utils3d.torch's table)
    lazy = any("lazy" in f for f in facts.values())
    reads = {rel: ({n.rpartition(":")[2].removeprefix(".") for names in f.get("names", {}).values() for n in names}
                   | {e.partition(":")[2] for e in f.get("imports_from", ())})
             - {name for name, *_ in f.get("top", ())} - set(f.get("listed", ()))
             for rel, f in facts.items() if "lazy" not in f} if lazy else {}   # (nor does another lazy package's table)
    # (a file reading its own definitions or listing names in its `__all__` asks no package for them)
    by_path: dict[str, set[str]] = {}      # a lazy package's child -> the files whose reads make the package load it
    for rel, f in facts.items():
        table = f.get("lazy") or {}
        if not table:
            continue
        folder = rel.removesuffix("__init__.py")
        for other in facts:
            parts = other[len(folder):].split("/") if other.startswith(folder) and other != rel else []
            if not parts or len(parts) > 2 or len(parts) == 2 and parts[1] != "__init__.py":
                continue
            child = parts[0].removesuffix(".py")
            names = {child} if "*" in table else set(table.get(child, ()))     # `*`: the attribute names the child
            by_path.setdefault(other, set()).update(o for o, words in reads.items() if o != rel and words & names)
    prefixes = {p for f in facts.values() for p in f.get("prefixes", ())}
    out: set[str] = set()
    while True:     # a file named only by files nothing loads is not loaded either (manage.py launching extract_vq.py)
        more = set()
        for rel in facts.keys() - out:
            parts = rel.split("/")
            if rel == "__init__.py" or parts[-1] in _RUN_ON_INSTALL or rel == _PRESTARTUP or parts[-1] == "setup.py" \
                    or facts[rel].get("entry"):
                continue    # a setup.py is run by whoever builds its extension (pip), not imported
            if parts[-1] == "__main__.py":  # run only by `python -m <package>` (pd18: whisper's CLI)
                if len(parts) < 2 or not any(parts[-2] in facts[o].get("launches", ()) for o in facts.keys() - out):
                    more.add(rel)
                continue
            module = parts[-2] if parts[-1] == "__init__.py" else parts[-1].removesuffix(".py")
            namers = (named.get(module, set()) | by_path.get(rel, set())) - out - {rel}
            if parts[-1] == "__init__.py":   # a file inside the package is loaded after it: naming it loads nothing
                folder = rel.removesuffix("__init__.py")    # (pd19: basicsr's upfirdn2d.py reads its own `upfirdn2d`)
                namers = {o for o in namers if not o.startswith(folder)}
            if module not in config_words and not namers and not any(
                    rel.startswith(p + "/") or f"/{p}/" in rel for p in prefixes):
                more.add(rel)
        if not more:
            return out
        out |= more


def _config_families(keyed: dict[tuple[str, str], set[tuple[str, str]]],
                     config_words: Collection[str]) -> set[tuple[str, str]]:
    """The definitions registered under a hyphenated key of a family a config picks from: where a config spells one
    key of a family (threestudio's `guidance_type: "deep-floyd-guidance"`, the family the key's last part names,
    `guidance`), every member of that family is a value the user may put there instead, an opt-in path judged as
    written (policy (k); heldout76's DreamCraft3D `stable-diffusion-guidance`). A family no config spells a key of
    (GaussianDreamer's renderers: its config builds none) stays reached only where its own key is spelled."""
    def family(key: str) -> str | None:
        return key.rsplit("-", 1)[1] if "-" in key else None

    words = set(config_words)
    picked = {family(key) for _, key in keyed if key in words} - {None}
    return {d for (_, key), built in keyed.items() if family(key) in picked for d in built}


def _unreached(facts: dict[str, dict[str, Any]], config_words: Collection[str] = (),
               unimported: Collection[str] = ()) -> dict[str, list[tuple[int, int]]]:
    """Per file, the line spans of top-level definitions no reached region reads (to a fixed point). `config_words`:
    the words of the tree's configs (`target: taming.modules.vqvae.quantize.GumbelQuantize`), each reached.
    `unimported`: files known to load nothing more (no import reaches them), besides those nothing names."""
    # any folder or module of the tree may be a root on sys.path (`sys.path.append(modules_path)`, then
    # `import impact.core as core` for modules/impact/core.py): an attribute of one of them is the tree's own
    own_roots = {part.removesuffix(".py") for rel in facts for part in rel.split("/")}

    # a config's dotted path names the modules on it (`target: lvdm.models.ddpm3d.LatentDiffusion`); a bare word (a
    # key, a mode: "sample") names none (pd25)
    unloaded = _unnamed_files(facts, {part for word in config_words if "." in word for part in word.split(".")}) \
        | set(unimported)
    defined: dict[str, set[str]] = {}       # top-level name -> the files defining it
    keyed: dict[tuple[str, str], set[tuple[str, str]]] = {}     # (file, registry key) -> the definition it builds
    registries: dict[str, set[str]] = {}                        # registry -> its keys
    for rel, f in facts.items():
        if rel in unloaded:     # a module nothing loads defines nothing that runs (pd18: VEnhancer's CLI script
            continue            # `class VEnhancer`, named only by the string CATEGORY = "VEnhancer")
        for name, _, _, registered, *_ in f.get("top", ()):
            defined.setdefault(name, set()).add(rel)
            if isinstance(registered, list):      # reached by its key, read like a name (tq59b)
                defined.setdefault(registered[1], set()).add(rel)
                keyed.setdefault((rel, registered[1]), set()).add((rel, name))
                registries.setdefault(registered[0], set()).add(registered[1])
    # the registries whose members the tree's configs pick by key; another one holds its members for code the pack
    # cannot see to build, and they stay registered (pd21: basicsr's `@ARCH_REGISTRY.register("vsr")`, a key nothing
    # spells)
    picked = {registry for registry, keys in registries.items() if not keys.isdisjoint(config_words)}
    # a bare name a file gets from a pack file it star-imports, which imports it from a package by name
    # (`from ..modules.attention import *` bringing attention.py's `from torch.utils.checkpoint import checkpoint`)
    star_bound: dict[str, dict[str, str]] = {}
    for rel, f in facts.items():
        for other in _star_files(rel, f, facts):
            for entry in facts[other].get("bound", ()):
                root, _, name = entry.partition(":")
                if name not in f.get("modules", ()):
                    star_bound.setdefault(rel, {})[name] = f"{root}:{name}"

    f_relative = {rel: f["relative_names"] for rel, f in facts.items() if f.get("relative_names")}

    def resolved(rel: str, names: list[str]) -> set[tuple[str, str]]:
        """The (file, definition) pairs the names read in `rel` reach: a bare name the file defines itself is its own
        definition (ddp_wrapper.py's `setup_dist(rank)` calls its own def, not utils.py's); any other name reaches
        every definition of that name (names are matched, not resolved)."""
        out: set[tuple[str, str]] = set()
        for n in names:
            n = star_bound.get(rel, {}).get(n, n)
            module, sep, attr = n.partition(":")
            if sep and module.split(".")[0] not in own_roots:
                continue
            name = attr if sep else n.removeprefix(".")
            files: Collection[str] = defined.get(name, ())
            if n == name and rel in files:
                files = (rel,)
            elif n == name and n in f_relative.get(rel, {}):    # `from .x import C`: x's C, when x defines one
                files = [f for f in _relative_files(rel, *f_relative[rel][n]) if f in files] or files
            # `from sam2.modeling.sam.transformer import X`: that module's X; so for a top-level module
            # (`from constants import build_model` in a script beside `constants.py`, not a copied pipeline's
            # `build_model`; tq51b)
            elif "." in module.lstrip(".") or sep and module.lstrip("."):
                files = [f for f in files if _is_module(f, module)] or files
            elif not sep and not _bench_file(rel):
                # a bare name or string of the pack's own code never names a test's or example's definition: the
                # pack imports neither (`revision="main"` does not reach tests/manual_smoke.py's `main`; pd56)
                files = [f for f in files if not _bench_file(f)]
            out.update((f, name) for f in files)
        return out

    regions: dict[tuple[str, str], set[tuple[str, str]]] = dict(keyed)   # (file, definition) -> what its bodies reach
    # (file, definition) -> [(X, what only its `if self.X:` bodies reach)]
    flagged: dict[tuple[str, str], list[tuple[str, set[tuple[str, str]]]]] = {}
    for rel, f in facts.items():
        for flag, region, names in f.get("flag_names", ()):
            flagged.setdefault((rel, region), []).append((flag, resolved(rel, names)))
    # a dotted config path (`_target_: sam2.modeling.sam.transformer.RoPEAttention`) builds that module's class when
    # the pack has the module, else any of that name (a shorter sys.path root); a bare word any of that name
    reached: set[tuple[str, str]] = set()
    for word in config_words:
        module, _, name = word.rpartition(".")
        # (a bare word, `main`, names no test's or example's definition either: the pack imports neither; pd56)
        named = [f for f in defined.get(name, ()) if module and _is_module(f, module)] or \
            [f for f in defined.get(name, ()) if not _bench_file(f)]
        reached.update((f, name) for f in named)
    reached |= _config_families(keyed, config_words)
    launchers: dict[str, set[str]] = {}    # launch string -> the files that name it
    for rel, f in facts.items():
        for launch in () if rel in unloaded else f.get("launches", ()):
            launchers.setdefault(launch, set()).add(rel)
    idle_mains: dict[str, list[list[int]]] = {}     # file -> `__main__` blocks the pack never runs
    for rel, f in facts.items():
        for region, names in f.get("names", {}).items():
            if region:
                regions.setdefault((rel, region), set()).update(resolved(rel, names))
            elif not _bench_file(rel) and rel not in unloaded:
                reached |= resolved(rel, names)
        if rel == "__init__.py":    # the root's re-exports are what ComfyUI reads; another package's reach nothing
            reached |= resolved(rel, f.get("exports", ()))
        name = rel.rsplit("/", 1)[-1]
        # (a script's own usage text, `python tests/manual_smoke.py --model X`, launches nothing: pd56)
        launched = [launch for launch, by in launchers.items() if by - {rel}]
        if name in _RUN_ON_INSTALL or _launched(rel, launched) or f.get("script"):
            reached |= resolved(rel, f.get("main", ()))
        else:   # the block's own lines do not run either (t19d: FishSpeech's llama.py smoke test)
            idle_mains[rel] = f.get("main_lines", [])
        # (webui builds every `scripts.Script` subclass of an extension's scripts modules, found by type: pd27)
        # (a module kept only for the classes a loader may build by its path reaches those classes, not every
        # function beside them: tq46b)
        # (a decorator registers nothing in a module nothing loads or runs: a copied suite's `@slow
        # @require_torch_gpu` test classes; tq48a)
        runs = rel not in unloaded or f.get("entry") or f.get("script")
        reached.update((rel, name) for name, _, _, registered in f.get("top", ())
                       if (registered is True or isinstance(registered, list) and registered[0] not in picked
                           or name.startswith("__")) and runs
                       or f.get("entry") and name in f.get("loadable", (name,)))
    reached |= _listed_members(facts, unloaded)

    def reach(off: Collection[str]) -> set[tuple[str, str]]:
        todo = list(reached)
        done: set[tuple[str, str]] = set()
        while todo:
            key = todo.pop()
            if key in done:
                continue
            done.add(key)
            todo.extend(regions.get(key, set()) - done)
            for flag, more in flagged.get(key, ()):
                if flag not in off:
                    todo.extend(more - done)
        return done

    done = reach(())
    out = _spans(facts, done, unloaded, idle_mains, frozenset())
    off = _off_flags(facts, out)
    return _spans(facts, reach(off), unloaded, idle_mains, off) if off else out


def _spans(facts: dict[str, dict[str, Any]], done: Collection[tuple[str, str]], unloaded: Collection[str],
           idle_mains: dict[str, list[list[int]]], off: Collection[str]) -> dict[str, list[tuple[int, int]]]:
    """Per file, the unreached spans (`_unreached`), given the reached definitions and the attribute flags nothing
    turns on (`off`: their `if self.X:` bodies are unreached too, and so is what only they read)."""
    index = _PackIndex(facts, off)
    out: dict[str, list[tuple[int, int]]] = {}
    for rel, f in facts.items():
        spans = [(first, last) for name, first, last, _ in f.get("top", ()) if (rel, name) not in done]
        spans += [(first, last) for flag, first, last, _ in f.get("flags", ()) if flag in off]
        spans += [(first, last) for first, last in (*f.get("dead", ()), *idle_mains.get(rel, ()))]
        if _bench_file(rel) or rel in unloaded:     # its module-level lines too: all but the definitions reached
            kept = sorted((first, last) for name, first, last, _ in f.get("top", ()) if (rel, name) in done)
            starts = [1] + [last + 1 for _, last in kept]
            ends = [first - 1 for first, _ in kept] + [_END]
            spans = [(a, b) for a, b in zip(starts, ends) if a <= b]
        spans += _unread_spans(rel, f, index, spans)
        spans += _uncalled_methods(rel, f, index, done)
        spans += _unused_guarded_imports(rel, f, index, spans)
        if spans:
            out[rel] = spans
    return out


# methods a library calls on the pack's subclasses of its classes, with the calls that make it do so: a hook is
# reached only when the pack makes one of them (diffusers' `enable_xformers_memory_efficient_attention` walks the
# modules calling `set_use_memory_efficient_attention_xformers`; src/diffusers/models/modeling_utils.py)
_LIBRARY_HOOKS = {
    "set_use_memory_efficient_attention_xformers": frozenset({
        "enable_xformers_memory_efficient_attention", "disable_xformers_memory_efficient_attention",
        "set_use_memory_efficient_attention_xformers"}),
    # a pipeline's CPU offload is the user's opt-in: diffusers never calls it itself (pd19: ID_Animator's
    # AnimationPipeline overrides it with `torch.device(f"cuda:{gpu_id}")` and nothing in the pack calls it)
    "enable_sequential_cpu_offload": frozenset({"enable_sequential_cpu_offload"}),
    "enable_model_cpu_offload": frozenset({"enable_model_cpu_offload"}),
}


# attributes a library sets on the pack's modules, with the calls that make it do so (diffusers' and transformers'
# gradient checkpointing switches; torch's `train()` / `eval()` set `training`)
_LIBRARY_FLAGS = {
    "gradient_checkpointing": frozenset({"enable_gradient_checkpointing", "gradient_checkpointing_enable",
                                         "_set_gradient_checkpointing"}),
    "training": frozenset({"train", "eval", "training"}),
}


def _off_flags(facts: dict[str, dict[str, Any]], spans: dict[str, list[tuple[int, int]]]) -> set[str]:
    """The attributes X of `if self.X:` branches (`_attribute_flags`) that the pack sets somewhere to a false constant
    and nowhere else but in code it never reaches (`spans`), by `attribute_sets.setting_nodes` (pd19, heldout24:
    ID_Animator's `self._use_memory_efficient_attention_xformers = False`, set from a parameter only in diffusers'
    xformers hook that nothing triggers): the branch never runs. pd17's unset-hook reading, for a flag. A flag a
    library sets (`_LIBRARY_FLAGS`) stays on when the pack makes the call that sets it."""
    if not all("sets" in f for f in facts.values()):
        return set()
    read = {w for f in facts.values() for w in f.get("words", ())}
    out: set[str] = set()
    for flag in {flag for f in facts.values() for flag, *_ in f.get("flags", ())}:
        if _LIBRARY_FLAGS.get(flag, frozenset()) & read:
            continue
        entries = [(rel, f["sets"][flag]) for rel, f in facts.items() if flag in f["sets"]]
        if any(falsy for _, (_, falsy) in entries) and all(
                any(a <= line <= b for a, b in spans.get(rel, ())) for rel, (lines, _) in entries for line in lines):
            out.add(flag)
    return out


class _Sources:
    """The tree's Python files for the reach pass, read only when needed. Each file's `reach_facts` and the word tests
    the pass makes of its bytes (`has`: is this flag or parameter name in the file?) are kept in its summary
    (`reach`, saved with its cache entry: both depend on the file's bytes alone), so a warm run with nothing changed
    reads only the files that name a flag, to parse them; before, it read every Python file of the tree again
    (509 on darling, bench/project_reads.py)."""

    def __init__(self, project: Any) -> None:
        self.project = project
        self.paths = {rel: path for rel, path in getattr(project, "paths", {}).items() if rel.endswith(".py")}
        self._data: dict[str, bytes] = {}

    def __iter__(self) -> Any:
        return iter(self.paths)

    def _memo(self, rel: str) -> dict[str, Any] | None:
        summary = getattr(self.project, "summaries", {}).get(rel)
        if not isinstance(summary, dict):
            return None
        memo = summary.get("reach")
        if not (isinstance(memo, dict) and isinstance(memo.get("facts"), (dict, type(None)))
                and isinstance(memo.get("has"), dict)):
            memo = summary["reach"] = {"facts": None, "has": {}}
        return memo

    def _changed(self, rel: str) -> None:
        changed = getattr(self.project, "changed", None)
        if changed is not None:
            changed.add(rel)

    def data(self, rel: str) -> bytes:
        """The file's bytes (read once per run, counted); raises OSError or SourceError."""
        if rel not in self._data:
            from auditor.static.project_imports import read_counted

            self._data[rel] = read_counted(self.project, self.paths.get(rel))
        return self._data[rel]

    def facts(self, rel: str) -> dict[str, Any]:
        """A fresh copy of the file's `reach_facts` (the callers add keys of the run to it); raises as `data`."""
        memo = self._memo(rel)
        held = memo.get("facts") if memo is not None else None
        if held is None:
            held = reach_facts(self.data(rel), rel.rsplit("/", 1)[-1] == "__init__.py")
            if memo is not None:
                memo["facts"] = held
                self._changed(rel)
        return dict(held)

    def has(self, rel: str, word: str) -> bool:
        """Whether the file's bytes hold `word` (False for a file that cannot be read: it names nothing)."""
        memo = self._memo(rel)
        if memo is not None and word in memo["has"]:
            return bool(memo["has"][word])
        from auditor.source import SourceError

        try:
            found = word.encode() in self.data(rel)
        except (OSError, SourceError):
            return False
        if memo is not None:
            memo["has"][word] = found
            self._changed(rel)
        return found

    def memo(self, rel: str, name: str, key: Any, compute: Any) -> Any:
        """`compute(tree)` of the file (its parsed tree, None when it does not parse), kept in its summary under `name`
        with `key` (the question's inputs besides the file's bytes, JSON values): a later run asking the same reads
        nothing. The value must survive JSON as it is (lists, string-keyed dicts)."""
        held = self._memo(rel)
        kept = held.get(name) if held is not None else None
        if isinstance(kept, list) and len(kept) == 2 and kept[0] == key:
            return kept[1]
        value = compute(self.tree(rel))
        if held is not None:
            held[name] = [key, value]
            self._changed(rel)
        return value

    def tree(self, rel: str) -> ast.Module | None:
        """The file's parsed tree, None when it cannot be read or parsed (it sets and calls nothing)."""
        from auditor.source import SourceError

        try:
            return ast.parse(self.data(rel))
        except (OSError, SourceError, SyntaxError, ValueError, RecursionError, MemoryError):
            return None


def _flag_sets(facts: dict[str, dict[str, Any]], sources: _Sources) -> None:
    """Adds `sets` to each file's facts: for each attribute flag of the pack the file names, [the lines that may set it
    to something other than a false constant, whether it sets it to one] (`_off_flags`)."""
    flags = {flag for f in facts.values() for flag, *_ in f.get("flags", ())}
    params: set[str] = set()
    lines: dict[str, dict[str, list[list[Any]]]] = {}   # file -> flag -> [line, parameter] of parameter stores
    for rel, f in facts.items():
        f["sets"] = {}
        named = sorted(flag for flag in flags if sources.has(rel, flag))
        if not named:
            continue
        sets, stored = sources.memo(rel, "flag_sets", named, lambda tree: _file_flag_sets(tree, named))
        for flag, (on_lines, falsy) in sets.items():
            f["sets"][flag] = [list(on_lines), falsy]
            if stored.get(flag):
                params.update(p for _, p in stored[flag])
                lines.setdefault(rel, {})[flag] = stored[flag]
    for f in facts.values():
        for flag in {flag for flag, *_ in f.get("flags", ()) if flag.startswith(_ARG)}:
            params.add(flag[len(_ARG):])
    turned_on = _parameters_turned_on(params, sources)
    for f in facts.values():        # a parameter flag: on (at line 0, which no span holds) when a call turns it on
        for flag in {flag for flag, *_ in f.get("flags", ()) if flag.startswith(_ARG)}:
            f["sets"][flag] = [[0] if flag[len(_ARG):] in turned_on else [], True]
    for rel, by_flag in lines.items():
        for flag, stored in by_flag.items():
            entry = facts[rel]["sets"][flag]
            entry[0] += [line for line, p in stored if p in turned_on]
            entry[1] = entry[1] or any(p not in turned_on for _, p in stored)


def _file_flag_sets(tree: ast.Module | None, named: list[str]) -> list[dict[str, Any]]:
    """One file's part of `_flag_sets` for the flags it names: [{flag: [lines that may set it on, set off somewhere]},
    {flag: [[line, "callee.parameter"] of the stores that copy a parameter defaulting off]}]; a file that does not
    parse sets nothing (it cannot be imported)."""
    sets: dict[str, list[Any]] = {}
    stored: dict[str, list[list[Any]]] = {}
    if tree is None:
        return [sets, stored]
    # one walk of the file for all its flags (not one per flag)
    on_by_flag = setting_nodes_by_name(tree, set(named), false_stores=False)
    any_by_flag = setting_nodes_by_name(tree, set(named))
    # `self.X = use_x` from a parameter `use_x=False`: off while no call in the tree turns `use_x` on
    all_stores = _off_parameter_stores(tree, [n for flag in named for n in on_by_flag.get(flag, ())])
    for flag in named:
        on = on_by_flag.get(flag, [])
        # an instance attribute set off (`self.X = False`); a class attribute's false default is left alone, as
        # t19g's control does (a library base class's switch that subclasses override)
        falsy = any(isinstance(n, ast.Attribute) for n in set(any_by_flag.get(flag, ())) - set(on))
        on_ids = {id(n) for n in on}
        stores = {i: key for i, key in all_stores.items() if i in on_ids}
        if on or falsy:
            sets[flag] = [[getattr(n, "lineno", 0) for n in on if id(n) not in stores], falsy]
            stored[flag] = [[getattr(n, "lineno", 0), stores[id(n)]] for n in on if id(n) in stores]
    return [sets, stored]


def _off_parameter_stores(tree: ast.Module, on: list[ast.AST]) -> dict[int, str]:
    """{id(store): "callee.parameter"} of the stores among `on` that assign a parameter of the enclosing function whose
    default is a false constant (`self.is_vllm = use_vllm` in `GPT.__init__(self, ..., use_vllm=False)`: `GPT.use_vllm`)."""
    targets = {id(n) for n in on if isinstance(n, ast.Attribute)}
    out: dict[int, str] = {}
    if not targets:
        return out
    callees = _callee_names(tree)
    for fn in module_nodes(tree):
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        off = _off_defaults(fn)
        for n in walk_list(fn):
            if isinstance(n, ast.Assign) and isinstance(n.value, ast.Name) and n.value.id in off:
                for t in n.targets:
                    if id(t) in targets:
                        out[id(t)] = f"{callees[id(fn)]}.{n.value.id}"
    return out


def _parameters_turned_on(keys: Collection[str], sources: _Sources) -> set[str]:
    """The `callee.parameter` keys that something in the tree may turn on (pd43). A call `callee(...)` turns the
    parameter on with a keyword of that name that is not a false constant nor the caller's own parameter of that name
    (a callee no function of that name owns, `pipe(x, flag=True)` on an instance, turns every such parameter on)
    (`use_vllm=use_vllm` forwards the caller's: on where the caller's is on), with `**kwargs` (unless it spells the
    keyword too), or with a positional argument at its place or `*args`; so does any other setting of the name
    (`setting_nodes`: a string, an assignment), and a parameter of that name without a false default is on itself.
    Callees are matched by name."""
    params = {key.rpartition(".")[2] for key in keys}
    on: set[str] = set()
    if not params:
        return on
    edges: dict[str, set[str]] = {}     # `caller.p` -> the `callee.p` it forwards to
    everywhere: set[str] = set()        # parameters some other setting turns on wherever they are
    positions: dict[str, int] = {}      # `callee.p` -> its positional index (self left out)
    owners: dict[str, set[str]] = {}    # a parameter -> the callee names of the functions that have it
    files: list[dict[str, Any]] = []    # each file's calls (`_file_calls`)
    wanted = sorted(params)
    for rel in sources:
        if not any(sources.has(rel, p) for p in params):
            continue
        found = sources.memo(rel, "parameters", wanted, lambda tree: _file_calls(tree, params, True))
        for p, names in found["owners"].items():
            owners.setdefault(p, set()).update(names)
        on.update(found["on"])
        positions.update(found["positions"])
        everywhere.update(found["everywhere"])
        files.append(found)
    # the calls of the other files: positional arguments (`chat.load(dev, False, True)`) name no parameter
    names = {key.rpartition(".")[0] for key in positions}
    for rel in sources:
        if any(sources.has(rel, p) for p in params) or not any(sources.has(rel, name) for name in names):
            continue
        files.append(sources.memo(rel, "calls", wanted, lambda tree: _file_calls(tree, params, False)))
    places: dict[str, list[tuple[str, int]]] = {}     # callee -> [(parameter, positional index)]
    for key, i in positions.items():
        callee_name, _, p = key.rpartition(".")
        places.setdefault(callee_name, []).append((p, i))
    for found in files:
        # `*args` may reach every parameter; `**extra` every one the call does not spell (Python raises on a double
        # value); a positional argument the one at its place
        for callee in found["starred"]:
            on.update(f"{callee}.{p}" for p in params)
        for callee, spelled in found["double"]:
            on.update(f"{callee}.{p}" for p in params if p not in spelled)
        for callee, most in found["most_args"].items():
            on.update(f"{callee}.{p}" for p, i in places.get(callee, ()) if most > i)
        for caller, callee, word, forwards in found["keywords"]:
            # a callee that no function of that name owns (`pipe(x, track_time=True)` calls `__call__` on an
            # instance): the keyword may reach any function with the parameter
            target = f"{callee}.{word}" if callee in owners.get(word, ()) else f"*.{word}"
            if forwards:
                edges.setdefault(f"{caller}.{word}", set()).add(target)
            else:
                on.add(target)
    todo = list(on)
    while todo:
        for key in edges.get(todo.pop(), ()):
            if key not in on:
                on.add(key)
                todo.append(key)
    everywhere |= {key[2:] for key in on if key.startswith("*.")}
    return on | {key for key in keys if key.rpartition(".")[2] in everywhere}


def _file_calls(tree: ast.Module | None, params: Collection[str], own: bool) -> dict[str, Any]:
    """One file's part of `_parameters_turned_on`, as JSON values (kept in the file's summary). `own`: the file names a
    parameter, so its functions' parameters (`owners`, `on`: those without a false default, `positions`), the names
    some other setting turns on (`everywhere`) and its calls' callers count; otherwise only its calls, each read as
    module-level code. The calls: per callee, the most positional arguments (`most_args`), callees given `*args`
    (`starred`), given `**kwargs` with the parameters the call spells (`double`), and each keyword of a parameter's
    name that is not a false constant, [caller, callee, parameter, whether it forwards the caller's own parameter of
    that name] (`keywords`). A file that does not parse has none."""
    found: dict[str, Any] = {"owners": {}, "on": [], "positions": {}, "everywhere": [], "most_args": {},
                             "starred": [], "double": [], "keywords": []}
    if tree is None:
        return found
    calls: list[tuple[str, ast.Call, bool]] = []     # (caller, call, inside a function)
    if own:
        callees = _callee_names(tree)
        defined: set[ast.arg] = set()
        for fn in module_nodes(tree):
            if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                off = _off_defaults(fn)
                args = [*fn.args.posonlyargs, *fn.args.args]
                args = args[1:] if args and args[0].arg in ("self", "cls") else args
                for i, a in enumerate([*args, *fn.args.kwonlyargs]):
                    if a.arg in params:
                        defined.add(a)
                        found["owners"].setdefault(a.arg, [])
                        if callees[id(fn)] not in found["owners"][a.arg]:
                            found["owners"][a.arg].append(callees[id(fn)])
                        key = f"{callees[id(fn)]}.{a.arg}"
                        if a.arg not in off:
                            found["on"].append(key)
                        if i < len(args):
                            found["positions"][key] = i
                calls += [(callees[id(fn)], n, True) for n in walk_list(fn) if isinstance(n, ast.Call)]
        inside = {id(n) for _, n, _ in calls}
        calls += [("", n, False) for n in module_nodes(tree) if isinstance(n, ast.Call) and id(n) not in inside]
        for p, nodes in setting_nodes_by_name(tree, set(params)).items():
            if any(not (n in defined or isinstance(n, ast.keyword)) for n in nodes):
                found["everywhere"].append(p)
    else:
        calls = [("", n, False) for n in module_nodes(tree) if isinstance(n, ast.Call)]
    for caller, call, scoped in calls:
        callee = (ast_dotted(call.func) or "").rsplit(".", 1)[-1]
        spelled = {kw.arg for kw in call.keywords}
        if any(isinstance(a, ast.Starred) for a in call.args):
            found["starred"].append(callee)
        elif None in spelled:
            found["double"].append([callee, sorted(p for p in spelled if p is not None and p in params)])
        if call.args:
            found["most_args"][callee] = max(found["most_args"].get(callee, 0), len(call.args))
        for kw in call.keywords:
            if kw.arg is None or kw.arg not in params or false_constant(kw.value):
                continue
            forwards = isinstance(kw.value, ast.Name) and kw.value.id == kw.arg and scoped
            found["keywords"].append([caller, callee, kw.arg, forwards])
    return found


class _PackIndex:
    """What the per-file span readers (`_uncalled_methods`, `_unused_guarded_imports`, `_unread_spans`) ask of the
    whole tree, gathered once per `_spans` call: asked per file, each question walked every file's facts again, and
    the reach passes grew with the square of the files (past 20 minutes on Wan2GP's 1671; pd29)."""

    def __init__(self, facts: dict[str, dict[str, Any]], off: Collection[str]) -> None:
        self.facts = facts
        self.dynamic = _loads_dynamically(facts)
        self.whole: dict[str, set[str]] = {}            # a module stem -> the files importing it whole
        self.stars: dict[str, set[str]] = {}            # a file -> the files star-importing it
        self.imports_from: dict[str, set[str]] = {}     # `<module>:<name>` -> the files importing the name
        self.imported: dict[str, set[str]] = {}         # a name -> the files importing it (`from x import name`)
        read: set[str] = set()
        dead: set[str] = set()      # words read only in the bodies of flags nothing turns on
        for rel, g in facts.items():
            for stem in g.get("whole", ()):
                self.whole.setdefault(stem, set()).add(rel)
            for other in _star_files(rel, g, facts):
                self.stars.setdefault(other, set()).add(rel)
            for entry in g.get("imports_from", ()):
                self.imports_from.setdefault(entry, set()).add(rel)
                self.imported.setdefault(entry.partition(":")[2], set()).add(rel)
            read.update(g.get("words", ()))
            for flag, _, _, words in g.get("flags", ()):
                (dead if flag in off else read).update(words)
        self.dead = dead - read
        self.computed_call = "<computed-call>" in read
        self.method_reads = read | {n.rpartition(":")[2].removeprefix(".") for g in facts.values()
                                    for names in (*g.get("names", {}).values(), g.get("main", ())) for n in names}
        # pack classes tied by inheritance to a class from outside the pack, and every class related to one, up or down
        pack_classes = {c for g in facts.values() for c in g.get("bases", {})}
        children: dict[str, set[str]] = {}
        parents: dict[str, set[str]] = {}
        outside: set[str] = set()
        for g in facts.values():
            for c, names in g.get("bases", {}).items():
                parents[c] = set(names)
                for b in names:
                    if b not in pack_classes and b != "object":
                        outside.add(c)
                    children.setdefault(b, set()).add(c)
        self.tied: set[str] = set()
        todo = list(outside)
        while todo:
            c = todo.pop()
            if c in self.tied:
                continue
            self.tied.add(c)
            todo.extend((children.get(c, set()) | parents.get(c, set())) & pack_classes)


def _uncalled_methods(rel: str, f: dict[str, Any], index: _PackIndex,
                      done: Collection[tuple[str, str]]) -> list[tuple[int, int]]:
    """The methods of reached classes of `rel` that nothing in the pack calls (pd18, heldout23: EchoMimic's
    `BlockGPUManager.get_gpu_memory_usage`; a diffusers `Attention` subclass's
    `set_use_memory_efficient_attention_xformers` in a pack that never enables xformers). Names are matched, not
    resolved: a method is called when any file reads its name (an attribute, a string, a name). Kept: dunders,
    registered methods, upper-case ComfyUI hooks (`INPUT_TYPES`, `IS_CHANGED`), every method of a file reading an
    attribute of `self` by a computed name and every method of a pack calling an attribute read by one, and, in a
    class tied by inheritance to a class from outside the pack (nn.Module, diffusers' Attention, a metaclass), every
    method but a known library hook (`_LIBRARY_HOOKS`) the pack never triggers: the library may call any other by
    its name."""
    if not f.get("methods") or "<computed-self>" in f.get("words", ()) or f.get("entry") or index.computed_call:
        return []       # (webui calls a scripts module's `Script` hooks, `process`, `ui`, ..., by name: pd27)
    read, dead, tied = index.method_reads, index.dead, index.tied
    out = []
    for cls, name, first, last, registered in f["methods"]:
        if (rel, cls) not in done or registered or name.startswith("__") or name.isupper() or name in read:
            continue
        if cls in tied and name not in dead and (name not in _LIBRARY_HOOKS or _LIBRARY_HOOKS[name] & read):
            continue
        out.append((first, last))
    return out


def _unused_guarded_imports(rel: str, f: dict[str, Any], index: _PackIndex,
                            spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The guarded optional imports of `rel` (`_guarded_imports`) whose every read in the file lies in `spans` (code the
    pack never reaches) and whose names no other file can import (by name, the module whole or a star import): an
    optional CUDA path nothing runs is info (the lead's decision 1, session 21; ID_Animator's `if
    is_xformers_available(): import xformers`, read only in diffusers' uncalled xformers hook)."""
    if not f.get("guarded"):
        return []
    stem = rel.rsplit("/", 1)[-1].removesuffix(".py")
    if stem == "__init__" or index.whole.get(stem, set()) - {rel} or index.stars.get(rel, set()) - {rel}:
        return []
    # `from .attention import xformers` takes the name from this module; `import xformers` elsewhere does not
    return [(first, last) for first, last, uses, names in f["guarded"]
            if not any(index.imports_from.get(f"{stem}:{name}", set()) - {rel} for name in names)
            and all(any(a <= u <= b for a, b in spans) for u in uses)]


def _relative_files(rel: str, level: int, module: str) -> tuple[str, ...]:
    """The files a package-relative import of `rel` may load (`from ..modules.attention import x` in a/b/c.py ->
    a/modules/attention.py or its package `__init__.py`); a level above the tree's root counts from the root."""
    base = rel.split("/")[:-level] if level <= rel.count("/") + 1 else []
    stem = "/".join([*base, *filter(None, module.split("."))])
    return f"{stem}.py", f"{stem}/__init__.py"


def _star_files(rel: str, f: dict[str, Any], facts: dict[str, dict[str, Any]]) -> list[str]:
    """The pack's files `rel` star-imports (`from .IFNet_HDv3 import *`, `from ..modules.attention import *`,
    `from gui_data.constants import *`)."""
    out = []
    for level, module in f.get("stars", ()):
        if not level:   # `from gui_data.constants import *` (pd30: UVR's separate.py), under any sys.path root
            out += [other for other in facts if _is_module(other, module)]
            continue
        out += [c for c in _relative_files(rel, level, module) if c in facts]
    return out


def _unread_spans(rel: str, f: dict[str, Any], index: _PackIndex,
                  spans: Collection[tuple[int, int]] = ()) -> list[tuple[int, int]]:
    """The module-level assignments of `rel` that nothing reads: the file never reads the name, or reads it only in
    `spans` (code the pack never reaches; pd25), and no other file imports the name or the module whole (t19a). None
    when some file loads modules by a computed name."""
    unread = [*f.get("unread", ()), *([name, first, last] for name, first, last, uses in f.get("read_in", ())
                                      if all(any(a <= u <= b for a, b in spans) for u in uses))]
    if not unread or index.dynamic:
        return []
    stem = rel.rsplit("/", 1)[-1].removesuffix(".py")
    if stem == "__init__" or index.whole.get(stem, set()) - {rel}:
        return []
    # a file star-importing this one reads a global only by its bare name outside a function binding it
    # (pd18: Sonic's RIFE_HDv3.py star-imports IFNet_HDv3's `device` and reads only its own parameter `device`);
    # a star importer that is itself imported whole or star-imported passes the names on: all kept
    starred = index.stars.get(rel, set()) - {rel}
    for other in starred:
        other_stem = other.rsplit("/", 1)[-1].removesuffix(".py")
        if other_stem == "__init__" or index.whole.get(other_stem, set()) - {other} or \
                index.stars.get(other, set()) - {other}:
            return []
    read = {n for other in starred for names in (*index.facts[other].get("names", {}).values(),
                                                 index.facts[other].get("main", ())) for n in names}
    return [(first, last) for name, first, last in unread
            if not index.imported.get(name, set()) - {rel} and name not in read]


# a W&B sweep configuration (https://docs.wandb.ai/guides/sweeps/sweep-config-keys/: `program`, "the training script
# to run", beside `method` and `parameters`), whose agent runs that program
_SWEEP_PROGRAM = re.compile(rb"^program:[ \t]*[\"']?([\w./-]+\.py)[\"']?[ \t]*$", re.MULTILINE)
_SWEEP_KEYS = re.compile(rb"^(?:method|parameters):", re.MULTILINE)


def _sweep_program(rel: str, data: bytes, paths: Collection[str]) -> str | None:
    """The tree file a sweep configuration's `program` names (tq56c, decision (t): LibMoE's
    `language_modeling/sweeps/154M/*.yaml`, `program: main.py`, which its `run.py` and a W&B agent run from the
    project's folder): the file of that name in the config's folder or the nearest folder above it."""
    m = _SWEEP_PROGRAM.search(data) if rel.lower().endswith((".yaml", ".yml")) else None
    if m is None or not _SWEEP_KEYS.search(data):
        return None
    folders = rel.split("/")[:-1]
    program = m.group(1).decode("utf-8", "replace").removeprefix("./")
    return next((cand for k in range(len(folders), -1, -1)
                 if (cand := "/".join([*folders[:k], program])) in paths), None)


def _config_words(project: Any, results: list, dotted_only: tuple[str, ...] = (),
                  programs: set[str] | None = None) -> set[str]:
    """The words of the tree's YAML / JSON / TOML / INI files (a config may name a class to build by its dotted
    path), read once per run of a node pack; a file over _CONFIG_BYTES or unreadable adds none, nor does one under a
    test, example or training folder (`_TRAINING_FOLDER`). A config under a folder of `dotted_only` adds its dotted
    paths only (tq42: a copied project's own settings, DINOv2's `enable: true`, build nothing of the tree's)."""
    from auditor.source import SourceError
    from auditor.static.project_imports import read_counted

    words: set[str] = set()
    paths = getattr(project, "paths", {})
    for rel, path in paths.items():
        if rel.lower().endswith(_CONFIG_SUFFIXES) and not any(
                part in _BENCH_FOLDERS or _TRAINING_FOLDER.search(part) for part in rel.split("/")[:-1]):
            try:
                data = read_counted(project, path, _CONFIG_BYTES)
            except (OSError, SourceError):
                continue
            dotted = rel.startswith(dotted_only) if dotted_only else False
            if programs is not None and (program := _sweep_program(rel, data, paths)) is not None:
                programs.add(program)       # (the programs sweep configurations run, for the caller)
            words.update(w.decode() for w in _WORD.findall(data) if not dotted or b"." in w)
            words.update(w.decode() for w in _KEY_WORD.findall(data) if not dotted)
    return words


# lead decision 9 (session 22): a training launcher a node pack carries but never runs (a vendored `train*.sh`,
# a DeepSpeed / torchrun launch script, a dataset preparation script) is info; its install scripts stay (users run them)
_SHELL_SUFFIXES = (".sh", ".bash")
_CUDA_SOURCES = (".cu", ".cuh")
_TRAINING_NAME = re.compile(r"(?:^|[_\-.])(?:train(?:ing)?|finetune|fine_tune|pretrain|prepare|preprocess)(?:$|[_\-.\d])",
                            re.IGNORECASE)
_INSTALL_NAME = re.compile(r"install|setup|build|env", re.IGNORECASE)
_LAUNCHER_NOTE = ("a training or data-preparation launcher this tree carries and its host application never runs "
                  "(ComfyUI runs a pack's nodes and install script, webui an extension's scripts/*.py, install.py and "
                  "preload.py); port it if you train with it")


def _unrun_launchers(project: Any, facts: dict[str, dict[str, Any]]) -> set[str]:
    """The pack's shell scripts that launch training or prepare data (`_TRAINING_NAME`, or a `deepspeed` / `torchrun` /
    `accelerate launch` command) and that no Python file of the pack and no other shell script names (pd23: 3D-Pack's
    vendored Hunyuan3D-2.1 `train_deepspeed.sh` with its NCCL_* exports). Install, setup and build scripts are kept."""
    shells = _shell_facts(project)
    named = {w for f in facts.values() for w in f.get("shells", ())}
    out = set()
    for rel, script in shells.items():
        base = rel.rsplit("/", 1)[-1]
        if _INSTALL_NAME.search(base) or not (_TRAINING_NAME.search(base) or script.get("trains")):
            continue
        if base in named or any(name.endswith(base) for o, other in shells.items() if o != rel
                                for name in other.get("scripts", ())):
            continue
        out.add(rel)
    return out


def _checkout_bench_file(rel: str, project: Any) -> bool:
    """A file of a copied checkout's own examples or tests: below a folder (not the root) that holds the checkout's
    files (`_CHECKOUT_FILE`: SwissArmyTransformer's `setup.py` in `modules/SwissArmyTransformer/`), inside its
    `examples/` / `tests/` folder."""
    parts = rel.split("/")
    paths = getattr(project, "paths", {})
    for k in range(1, len(parts) - 1):
        folder = "/".join(parts[:k])
        if parts[k] in _BENCH_FOLDERS and any(f"{folder}/{name}" in paths for name in _CHECKOUT_NAMES):
            return True
    return False


def _shell_facts(project: Any) -> dict[str, dict[str, Any]]:
    """Each shell script of the tree with its facts (ProjectImports.shell: from the summaries the worker made, so a
    warm run reads no script); a script that cannot be read is left out."""
    out = {}
    for rel in getattr(project, "paths", {}):
        if rel.endswith(_SHELL_SUFFIXES):
            script = project.shell(rel)
            if script is not None:
                out[rel] = script
    return out


def _unbuilt_kernels(results: list, facts: dict[str, dict[str, Any]], spans: dict[str, list[tuple[int, int]]]) -> list[str]:
    """The pack's CUDA sources that Python strings name only in code the pack never reaches (pd23: basicsr's
    `deform_conv_cuda_kernel.cu`, named by the `load(...)` of a JIT build behind `BASICSR_JIT` whose every use is
    unreached). A source named nowhere (a build that globs `*.cu`) or in reached code (a `setup.py`) is kept."""
    named: dict[str, list[tuple[str, int]]] = {}
    for rel, f in facts.items():
        for name, line in f.get("kernels", ()):
            named.setdefault(name, []).append((rel, line))
    out = []
    for r in results:
        where = named.get(r.path.rsplit("/", 1)[-1]) if r.path.endswith(_CUDA_SOURCES) and r.findings else None
        if where and all(any(a <= line <= b for a, b in spans.get(rel, ())) for rel, line in where):
            out.append(r.path)
    return out


def comfy_node_pack(results: list) -> bool:
    """Whether the tree is a ComfyUI node pack: its root `__init__.py`'s tree facts say it names NODE_CLASS_MAPPINGS."""
    from auditor.static.project_imports import TREE

    root = next((r for r in results if r.path == "__init__.py"), None)
    summary = getattr(root, "summary", None)
    return isinstance(summary, dict) and bool((summary.get(TREE) or {}).get("comfy_nodes"))


def _webui_entries(project: Any) -> set[str]:
    """The files stable-diffusion-webui runs of the tree when it is a webui extension: a root `scripts/` folder one of
    whose modules imports webui's script API (`from modules import scripts, script_callbacks`); then every
    `scripts/*.py` (webui imports them all) and `preload.py`. Empty for any other tree (pd27). The imports come from
    the files' cached import-graph facts, so a warm run reads nothing."""
    paths = getattr(project, "paths", {})
    scripts = [rel for rel in paths if rel.startswith("scripts/") and rel.count("/") == 1 and rel.endswith(".py")]
    for rel in scripts:
        if any(_WEBUI_MODULES & {module, *(f"{module}.{n}" for n in names)}
               for module, names, *_ in (project.facts(rel) or {}).get("load", ())):
            return {*scripts, *([_WEBUI_PRELOAD] if _WEBUI_PRELOAD in paths else [])}
    return set()


def _library(project: Any) -> bool:
    """Whether the tree is pip-installable (a root `setup.py` importing setuptools or distutils, a `pyproject.toml`
    with `[project]` or `[tool.poetry]`, a `setup.cfg` with `[metadata]`): other code may import its packages, so no
    launch script says what runs. `setup.py`'s imports come from its cached facts; the two metadata files are read
    only for a tree that has an application's launch script (`_app_entries` asks last)."""
    from auditor.source import SourceError
    from auditor.static.project_imports import read_counted

    paths = getattr(project, "paths", {})
    if "setup.py" in paths and _imported(project, "setup.py") & {"setuptools", "distutils"}:
        return True
    for rel, mark in _LIBRARY_MARKS.items():
        if rel in paths:
            try:
                text = read_counted(project, paths[rel])
                # Poetry's `package-mode = false`: a project that manages dependencies only, installs no package (pd43)
                if all(m.search(text) for m in mark) and not _NO_PACKAGE.search(text):
                    return True
            except (OSError, SourceError):
                return True
    return False


def _imported(project: Any, rel: str) -> set[str]:
    """The top-level packages a Python file imports, from its cached import-graph facts (a warm run reads nothing)."""
    return {str(load[0]).split(".", 1)[0] for load in (project.facts(rel) or {}).get("load", ()) if load and load[0]}


def _launch_script(project: Any, rel: str, own: Collection[str], launched: Collection[str]) -> bool:
    """Whether the script launches an application: it serves a UI or an API (`_APP_SERVERS`, `_APP_GUIS`), imports
    the modules of its own folder's tree (`own`), and is named as a launch script (`_APP_SCRIPTS`, a word of
    `_APP_NAME_WORDS`, run by the tree's shell scripts) or imports a desktop GUI toolkit."""
    imported = _imported(project, rel)
    base = rel.rsplit("/", 1)[-1]
    words = {w.lower() for w in _NAME_WORD.findall(base.removesuffix(".py"))}
    cli = "cli" in words and bool(imported & _APP_CLIS)
    named = base in _APP_SCRIPTS or rel in launched or bool(words & _APP_NAME_WORDS) or bool(imported & _APP_GUIS)
    return (named or cli) and bool(imported & (_APP_SERVERS | _APP_GUIS) or cli) and \
        bool(imported & (set(own) - {base[:-3]}))


# the modules a build script imports (a package's `setup.py` that imports none of them, DINOv2's `eval/setup.py`
# helper, builds nothing)
_BUILD_MODULES = ("setuptools", "distutils", "torch.utils.cpp_extension", "skbuild")


def _build_folder_scripts(project: Any, python: Collection[str]) -> set[str]:
    """The scripts of a folder below the root that holds its own `setup.py` build script: a vendored extension the
    user builds and tests by hand (Deformable-DETR's `ops/`: `python setup.py build install`, then `python test.py`;
    carried by XPose, DINO, GroundingDINO; tq41): the build and its test run, whatever the application imports."""
    folders = {rel[:-len("setup.py")] for rel in python if rel.endswith("/setup.py")
               and any(load and str(load[0]).startswith(_BUILD_MODULES)
                       for load in (project.facts(rel) or {}).get("load", ()))}
    return {rel for rel in python for folder in folders if rel.startswith(folder) and "/" not in rel[len(folder):]}


_CHECK_SCRIPT = re.compile(r"^(?:test|check)(?:_\w+)?\.py$|^\w+_test\.py$")
_CHECK_NOTE = ("nothing this tree runs reaches it: a check script of the extension `{}` builds with its own setup.py "
               "(it imports the extension's modules by bare name, as run from that folder after `python setup.py "
               "build install`); no launch of the tree runs it and no module imports it, policy (j); port it if you "
               "run the extension's own checks")


def _extension_checks(project: Any) -> dict[str, str]:
    """The check scripts of an extension build folder in a tree that no host runs (tq55a, heldout72: perception_models'
    DETA copy of Deformable-DETR's `models/ops/`, whose `test.py` compares the built MultiScaleDeformableAttention op
    with its PyTorch reference on `.cuda()` tensors): a `test.py` / `test_*.py` / `check*.py` directly beside a
    `setup.py` that builds with setuptools or torch's cpp_extension (`_build_folder_scripts`), importing a package of
    that folder by its bare name (`from functions.ms_deform_attn_func import ...`, which resolves only when run from
    the folder), with no `__init__.py` beside it (no package of the tree holds it), that no shell script, container
    file or README command runs and no module imports by its name. The extension's own check, which upstream keeps
    beside its build: policy (j), info. File -> the folder."""
    paths = getattr(project, "paths", {})
    python = [rel for rel in paths if rel.endswith(".py")]
    scripts = {rel for rel in _build_folder_scripts(project, python)
               if _CHECK_SCRIPT.match(rel.rsplit("/", 1)[-1]) and "/" in rel}
    if not scripts:
        return {}
    launched = _shell_launches(project) | _container_launches(project) | _readme_facts(project)["launches"]
    out: dict[str, str] = {}
    for rel in sorted(scripts):
        folder, stem = rel.rsplit("/", 1)[0], rel.rsplit("/", 1)[-1].removesuffix(".py")
        if f"{folder}/__init__.py" in paths or _launched(rel, launched) or _readme_names(project, folder, f"{stem}.py"):
            continue
        own = [str(load[0]) for load in (project.facts(rel) or {}).get("load", ()) if load and load[0]
               and str(load[0]).split(".", 1)[0] not in ("", stem)
               and f"{folder}/{str(load[0]).split('.', 1)[0]}/__init__.py" in paths]
        if own:
            out[rel] = folder
    if out:
        named = imported_names(project)
        out = {rel: folder for rel, folder in out.items() if rel.rsplit("/", 1)[-1].removesuffix(".py") not in named}
    return out


_HELPER_NOTE = ("nothing this tree runs reaches it: a build helper module (it imports {}) that no setup.py or other "
                "module of the tree imports and no launch runs, so no build of the tree uses it; port it if you build "
                "with it")
# the build tools a helper module builds with at install time (torch's cpp_extension is left out: its `load()` builds
# at run time, so a module importing it may be a kernel loader a library's users import), and distutils' build parts
# (its `version.LooseVersion`, `util.strtobool` and `sysconfig` are run-time helpers of any module)
_SETUP_TOOLS = ("setuptools", "skbuild")
_DISTUTILS_BUILD = frozenset({"core", "command", "extension", "ccompiler", "cmd", "unixccompiler", "msvccompiler"})


def _build_tool(load: Any) -> str | None:
    """The build tool an import loads (`setuptools.command.build_ext` -> setuptools), None for another module."""
    module = str(load[0])
    parts = module.split(".")
    if parts[0] in _SETUP_TOOLS:
        return parts[0]
    if parts[0] == "distutils" and (len(parts) > 1 and parts[1] in _DISTUTILS_BUILD or
                                    len(parts) == 1 and set(map(str, load[1] or ())) & _DISTUTILS_BUILD):
        return "distutils"
    return None


def _unused_build_helpers(project: Any) -> dict[str, str]:
    """Modules of a package that build with setuptools / distutils / scikit-build (a `BuildExtension` subclass and its
    `PyCudaExtension` / `PyCPUExtension` factories, tq55a: heldout72's GammaGL `gammagl/utils/ggl_build_extension.py`,
    whose import in setup.py is commented out) that no file of the tree imports, with no `__main__` block and no
    `setup` imported (a build script run by hand), run by no shell script, container file or README command: a build
    helper no build of the tree uses. File -> the build modules it imports."""
    paths = getattr(project, "paths", {})
    python = [rel for rel in paths if rel.endswith(".py")]
    out: dict[str, str] = {}
    for rel in python:
        folder, name = rel.rsplit("/", 1) if "/" in rel else ("", rel)
        if name in ("setup.py", "__init__.py", "__main__.py") or f"{folder}/__init__.py" not in paths:
            continue
        facts = project.facts(rel) or {}
        loads = [load for load in facts.get("load", ()) if load and load[0]]
        tools = sorted({tool for load in loads if (tool := _build_tool(load))})
        if tools and not facts.get("main") and not any("setup" in map(str, load[1]) for load in loads):
            out[rel] = ", ".join(f"`{tool}`" for tool in tools)
    if not out:
        return {}
    launched = _shell_launches(project) | _container_launches(project) | _readme_facts(project)["launches"]
    named = imported_names(project)
    return {rel: tools for rel, tools in out.items()
            if rel.rsplit("/", 1)[-1].removesuffix(".py") not in named and not _launched(rel, launched)}


def _readme_names(project: Any, folder: str, name: str) -> bool:
    """Whether a README of `folder` names the file `name` (Yuan-2.0's `3rdparty/vllm/README_yuan_vllm.md` documenting
    its `test_yuan_1prompt.py` inference script beside vLLM's setup.py): a program the folder documents."""
    return any(name in text for text in _folder_readmes(project, folder))


_FOLDER_READMES = "_folder_readmes"     # {folder: README names} and {(folder, name): text}, kept for the run


def _folder_readmes(project: Any, folder: str, main: tuple[str, ...] = ()) -> Iterator[str]:
    """The texts of a tree folder's README files (`README.md`, `README_yuan_vllm.md`; "" is the root), the usual
    names first in their order; with `main`, only the one GitHub shows on the folder's page (the first of those names
    that reads). Each file is read at most once per run through `read_counted` (its first `_README_BYTES`), whichever pass
    asks: the root README's facts, a linked folder's commands and a folder's named scripts read the same files
    (review55 item 3). The audit discovers no Markdown, so no file summary holds them."""
    from auditor.source import SourceError
    from auditor.static.project_imports import read_counted

    held = _kept_for_run(project, _FOLDER_READMES, dict, dict)
    root = _tree_root(project)
    if root is None:
        return
    if folder not in held:
        try:
            held[folder] = sorted((p.name for p in (root / folder).iterdir()
                                   if p.name.upper().startswith("README") and p.is_file()),
                                  key=lambda n: (_LINKED_README_NAMES.index(n) if n in _LINKED_README_NAMES
                                                 else len(_LINKED_README_NAMES), n))
        except OSError:
            held[folder] = []
    for name in held[folder]:
        if main and name not in main:
            continue
        if (folder, name) not in held:
            try:
                held[folder, name] = read_counted(project, root / folder / name, _README_BYTES, prefix=True) \
                    .decode("utf-8", "replace")
            except (OSError, SourceError):
                held[folder, name] = None
        if held[folder, name] is not None:
            yield held[folder, name]
            if main:
                return


def _main_readme(project: Any, folder: str, names: tuple[str, ...] = ()) -> str | None:
    """The text of the README GitHub shows on a folder's page (the first of `names`, by default `_READMES`, it has),
    None without one."""
    return next(_folder_readmes(project, folder, names or _READMES), None)


def _lower_build_files(results: list, project: Any) -> int:
    """The findings of an extension build folder's check scripts (`_extension_checks`) and of build helpers nothing
    imports (`_unused_build_helpers`), lowered to info; the count lowered."""
    if not any(r.findings for r in results if r.path.endswith(".py") and "/" in r.path):
        return 0
    notes = {rel: _CHECK_NOTE.format(folder) for rel, folder in _extension_checks(project).items()}
    notes.update((rel, _HELPER_NOTE.format(tools)) for rel, tools in _unused_build_helpers(project).items()
                 if rel not in notes)
    if not notes:
        return 0
    return _lower_spans(results, {rel: {} for rel in notes}, {rel: [(1, _END)] for rel in notes}, notes, set())


def _empty_module(project: Any, path: Any) -> bool:
    """Whether a Python file holds no statement besides a docstring (an empty package marker)."""
    from auditor.source import SourceError
    from auditor.static.project_imports import read_counted

    try:
        body = ast.parse(read_counted(project, path)).body
    except (OSError, SourceError, SyntaxError, ValueError):
        return False
    return all(isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant) and isinstance(n.value.value, str)
               for n in body)


def _app_entries(project: Any) -> set[str]:
    """The files an APPLICATION runs itself (pd29, heldout27: Wan2GP's `wgp.py`): a tree with no root `__init__.py`,
    not pip-installable (`_library`), whose root, or a top-level folder that is no package (pd30: voice-changer's
    `server/`, run as `python MMVCServerSIO.py` from there), holds a launch script (`_launch_script`: `wgp.py` run by
    `python3 wgp.py --listen` in its shell scripts, UVR's tkinter `UVR.py`) importing that folder's own modules. Its
    entry files are every script of the root and of that folder, every file its shell scripts run and every file of a
    root `scripts/` or `tools/` folder (a user may run any of them); the rest runs only as far as they import or load
    it by name. Empty for any other tree. A root `__init__.py` that holds no statement (tq41: JoyVASA's empty one beside
    its Gradio `app.py`) makes the tree no package anyone imports: it is read as absent."""
    paths = getattr(project, "paths", {})
    if "__init__.py" in paths and not _empty_module(project, paths["__init__.py"]):
        return set()
    launched: set[str] = set()       # the .py files the tree's shell scripts run, as paths from the root
    for rel in paths:
        if rel.endswith(_SHELL_SUFFIXES):
            for folders, name in (project.facts(rel) or {}).get("launch", ()):
                launched.add("/".join([*folders, name]))
    python = [rel for rel in paths if rel.endswith(".py")]
    folders = [""] + sorted({rel.split("/", 1)[0] + "/" for rel in python if rel.count("/") >= 2}
                            - {f"{d}/" for d in _APP_TOOL_FOLDERS}
                            - {rel.removesuffix("__init__.py") for rel in python if rel.count("/") == 1})
    for folder in folders:
        inside = [rel[len(folder):] for rel in python if rel.startswith(folder)]
        scripts = {folder + rel for rel in inside if "/" not in rel and rel != "setup.py"}
        own = {rel.split("/", 1)[0].removesuffix(".py") for rel in inside}
        if any(_launch_script(project, rel, own, launched) for rel in sorted(scripts)):
            if _library(project):
                return set()
            tools = {p for p in python if p.split("/", 1)[0] in _APP_TOOL_FOLDERS and not _package_module(project, p)}
            root = {rel for rel in python if "/" not in rel and rel != "setup.py"}
            return root | scripts | (launched & set(paths)) | tools | _build_folder_scripts(project, python)
    return set()


def _package_module(project: Any, rel: str) -> bool:
    """Whether a file below a root tools folder is a module of a package there, not a script a user runs by hand
    (tq47b, policy (s): xtts-webui's `scripts/resemble_enhance/`, a copied library its web UI imports): its folder
    below the tools folder is a package (`__init__.py`), and the file is the package's `__main__.py` (run only as
    `python -m pkg`, which no launch of the tree names) or imports its package relatively at load time (`from ..data
    import x` fails when the file runs as a script). The tree's launches of it are entries of their own."""
    folders = rel.split("/")[:-1]
    if len(folders) < 2 or "/".join([*folders, "__init__.py"]) not in getattr(project, "paths", {}):
        return False
    if rel.endswith("/__main__.py"):
        return not _launched(rel, _shell_launches(project))
    return any(load and str(load[0]).startswith(".") and (len(load) < 3 or load[2])
               for load in (project.facts(rel) or {}).get("load", ()))


# tq42: a copy of another project's package carried below the root of a research tree or library
_VENDORED_NOTE = ("nothing this tree runs reaches it: `{}` holds a copy of another project's package `{}` (it imports "
                  "itself by that name from below this tree's root), of which this tree imports or runs only part; "
                  "port it if you run that program")
_RENAMED_NOTE = ("nothing this tree runs reaches it: `{}` holds a renamed copy of another project's package `{}` (its "
                 "modules import one another by that name, which the tree's packaging never maps to this folder), and "
                 "nothing in the tree imports it; port it if you run it")
_SOURCE_ROOT_NOTE = ("nothing this tree runs reaches it: `{}` holds a copy of another project's source root (its packages "
                     "import `{}` by bare name, as from their own sys.path root), of which this tree imports or runs "
                     "only part; port it if you run that program")
# a test suite kept under another name (oslo's `tests_deprecated/torch/`, its own tests of `oslo.torch` laid out like
# the package and importing the real `torch.nn`): the tree's checks, never a copied package
_TEST_SUITE = re.compile(r"^(?:tests?|testing)[_-]\w+$|^\w+[_-]tests?$", re.IGNORECASE)
# a root folder whose packages a project installs from (`src/pkg`, `python/pkg`, `lib/pkg`): the tree's own layout
_SOURCE_FOLDERS = frozenset({"src", "python", "lib"})
# the folders of a copied checkout whose scripts a user runs by hand (besides its top-level scripts)
_COPY_RUN_FOLDERS = _APP_TOOL_FOLDERS | {"demo"}
# the top-level files of a copied checkout that run without a launch of the tree's: torch.hub's entry, the build
_CHECKOUT_ENTRIES = frozenset({"hubconf.py", "setup.py"})
# the files of a project's checkout: its build and install metadata, torch.hub's entry file, its licence
_CHECKOUT_NAMES = ("setup.py", "setup.cfg", "pyproject.toml", "hubconf.py")      # (the discovered ones)
# configuration that its tool reads only at a repository's root: `.circleci/config.yml`
# (https://circleci.com/docs/config-intro/), `.github/workflows/` (https://docs.github.com/en/actions),
# `.pre-commit-config.yaml` (https://pre-commit.com/, "in the root of your repository")
_REPOSITORY_ROOT_MARKS = (".circleci", ".github/workflows", ".pre-commit-config.yaml")


def _repository_root(root: Path | None, folder: str) -> bool:
    """Whether a folder below the tree's root holds configuration only a repository's root holds (tq53c): it was
    another repository's checkout (mmyolo's inside YOLO-World's `third_party/`, with its `.circleci/`)."""
    return root is not None and bool(folder.strip("/")) and \
        any((root / folder / mark).exists() for mark in _REPOSITORY_ROOT_MARKS)


_CHECKOUT_FILE = re.compile(r"^(?:setup\.py|setup\.cfg|pyproject\.toml|hubconf\.py|requirements[\w.-]*\.txt|"
                            r"LICEN[CS]E(?:\.\w+)?|COPYING)$")


def _vendored_copies(project: Any) -> tuple[dict[str, str], set[str]]:
    """The copies of other projects' packages a tree carries below its root (tq42, heldout45 / heldout46): folder ->
    package name. A package folder at least two levels down (`torchhub/facebookresearch_dinov2_main/dinov2`,
    `internnav/model/encoder/diffusion_policy`, `scripts/adapet/ADAPET/src`) whose own modules import its submodules
    by its bare name (`from dinov2.layers import ...`), three in four such imports at least naming a module the folder
    holds (PromptDA's DINOv2 copy left out `dinov2/data`, which only its programs import), was the top-level package
    of another repository: it runs only with its parent on sys.path (a copy adapted to import itself by its path in
    the tree, Grounded-SAM-2's `grounding_dino.groundingdino.util`, is the tree's own). Not a folder named like a
    package it holds by chance (`modelopt/torch/` importing the real `torch.nn`), nor `src/pkg`, `python/pkg`, `lib/pkg`
    under the root, nor one named like a top-level package of the tree's own (a monorepo's
    `packages/prime-rl-configs/src/prime_rl` beside `src/prime_rl`), nor one inside a test suite or examples folder.
    The copy is the package's folder when its parent is a package of the tree (InternNav's `diffusion_policy`, which
    cannot import itself by its bare name as part of the tree's package), or else its parent, a plain folder that must
    hold the checkout's own files (`setup.py`, `pyproject.toml`, `hubconf.py`, a requirements file, a licence:
    `_CHECKOUT_FILE`), and the checkout above a `src/` folder (`LLaMA-Factory/src/llamafactory` -> `LLaMA-Factory/`).
    A copy inside another is part of it. The imports come from the files' cached import-graph facts. With the copied
    source roots (`_source_root_copies`), returned apart too."""
    paths = getattr(project, "paths", {})
    python = [rel for rel in paths if rel.endswith(".py")]
    packages = {rel.removesuffix("/__init__.py") for rel in python if rel.endswith("/__init__.py")}
    held, own = _held_modules(python)
    root = _tree_root(project)
    counts: dict[str, list[int]] = {}       # candidate package folder -> [imports held there, imports in all]
    for rel in python:
        folders = rel.split("/")[:-1]
        if len(folders) < 2 or any(part in _BENCH_FOLDERS or _TEST_SUITE.match(part) for part in folders):
            continue
        # the submodules it imports by absolute name (`from dinov2.layers import Mlp` -> dinov2/layers; a bare
        # `import torch` names the folder only, which says nothing)
        modules = [str(load[0]).replace(".", "/") for load in (project.facts(rel) or {}).get("load", ())
                   if load and load[0] and not str(load[0]).startswith(".") and "." in str(load[0])]
        for k in range(len(folders), 1, -1):
            name, parent = folders[k - 1], "/".join(folders[:k - 1])
            # (a root folder `diffusers/` holding `src/diffusers` is that package's checkout, not a package of the
            # tree's own: mustango's diffusers copy, installed with `pip install -e diffusers`; tq48a)
            checkout = k == 3 and folders[0] == name and folders[1] in _SOURCE_FOLDERS \
                or k == 2 and folders[0] == name and _licensed_checkout(root, f"{name}/")
            if name in own and not checkout or k == 2 and folders[0] in _SOURCE_FOLDERS:
                continue
            mine = [m for m in modules if m.split("/", 1)[0] == name]
            if mine:
                count = counts.setdefault("/".join(folders[:k]), [0, 0])
                count[0] += sum(f"{parent}/{m}" in held or _cython_module(root, f"{parent}/{m}", held) for m in mine)
                count[1] += len(mine)
    found: dict[str, str] = _renamed_copies(project, python, packages)
    for folder, (there, total) in counts.items():
        if there < 2 or there * 4 < total * 3:
            continue
        copy = folder.split("/")
        if "/".join(copy[:-1]) not in packages:
            copy = copy[:-1]
            if copy[-1] in _SOURCE_FOLDERS and len(copy) > 1 and "/".join(copy[:-1]) not in packages:
                copy = copy[:-1]
            # a plain folder is another project's checkout only with that project's own files (wetts' `vits/`, run
            # from its folder as `python train.py`, is the tree's own code)
            checkout = "/".join(copy) + "/"
            if not any(rel.startswith(checkout) and "/" not in rel[len(checkout):]
                       and _CHECKOUT_FILE.match(rel[len(checkout):]) for rel in paths) \
                    and not _checkout_files(project, root, checkout):
                continue
        found["/".join(copy) + "/"] = folder.rsplit("/", 1)[-1]
    members = _workspace_members(project) if found else []
    found = {folder: name for folder, name in found.items()
             if not any(other != folder and folder.startswith(other) for other in found)
             and not _written_for_tree(project, python, packages, folder, name)
             and not any(fnmatchcase(folder.rstrip("/"), glob) for glob in members)}
    # a copied source root holds the packages found directly in it (LORE's `lib/utils/`); a checkout copied deeper
    # inside one (detectron2 in SCHP's `mhp_extension/`) stays a copy of its own, with its own scripts and tools
    roots = _source_root_copies(project, python, held, own)
    return {**{folder: name for folder, name in found.items()
               if not any(folder.startswith(root) and folder.count("/") == root.count("/") + 1 for root in roots)},
            **roots}, set(roots)


def _written_for_tree(project: Any, python: Collection[str], packages: Collection[str], folder: str,
                      name: str) -> bool:
    """Whether a package that imports itself by its bare name was written for this tree (tq54b, heldout70: MONAI
    Label's `sample-apps/radiology/lib`, the radiology app's own package, which its `main.py` loads as `lib.configs`
    and whose modules build on `monailabel.interfaces` / `monailabel.tasks`): a third of its modules at least import
    a top-level package of the tree's own (a root folder with `__init__.py`, or one below `src/`), which another
    project's package, copied in, never does (it predates the tree). An app or plug-in the tree's server loads is its
    own code, not a copy (decision (t))."""
    roots = {rel.split("/", 1)[0] if rel.split("/", 1)[0] not in _SOURCE_FOLDERS else "/".join(rel.split("/")[:2])
             for rel in packages if rel.count("/") == (1 if rel.split("/", 1)[0] in _SOURCE_FOLDERS else 0)}
    tree_packages = {root.rsplit("/", 1)[-1] for root in roots if not folder.startswith(root + "/")} - {name}
    if not tree_packages:
        return False
    inside = [rel for rel in python if rel.startswith(folder)]
    importing = sum(any(load and load[0] and str(load[0]).split(".", 1)[0] in tree_packages
                        for load in (project.facts(rel) or {}).get("load", ())) for rel in inside)
    return bool(inside) and importing * 3 >= len(inside)


# a licence file of a checkout (at its root)
_LICENCE = re.compile(r"^(?:LICEN[CS]E(?:\.\w+)?|COPYING)$")


def _licensed_checkout(root: Path | None, folder: str) -> bool:
    """Whether a root folder `X/` holding the package `X/X/` is repository X's checkout (tq51c, heldout65: AnyDoor's
    `dinov2/`, DINOv2's repository with its hubconf.py, setup.py and LICENSE, beside the tree's own packages): it holds
    a licence and torch.hub's entry file, as a copied model repository does and the tree's own package folder does
    not (read on disk: discovery lists no licence). Not a checkout with only a licence and setup.py (Tool-N1's `verl/`,
    installed with `pip install -e verl` and launched as `python -m verl.trainer.main_ppo`: the tree's own run)."""
    try:
        names = {p.name for p in (root / folder).iterdir() if p.is_file()} if root is not None else set()
    except OSError:
        return False
    return any(_LICENCE.match(n) for n in names) and "hubconf.py" in names


def _tree_root(project: Any) -> Path | None:
    """The tree's root folder on disk, from any discovered file's path (None without one)."""
    for rel, path in getattr(project, "paths", {}).items():
        return Path(path).parents[rel.count("/")]
    return None


def _cython_module(root: Path | None, module: str, held: Collection[str]) -> bool:
    """Whether `module` (a path from the root, no suffix) is a Cython extension built in place beside the Python
    modules of its folder (daisyRec's `from daisy.model.extensions.simlib_cython import X` beside
    `simlib_cython.pyx`, which the discovered files do not list; tq51b): its `.pyx` source is on disk."""
    folder = module.rsplit("/", 1)[0] if "/" in module else ""
    return root is not None and folder in held and (root / f"{module}.pyx").is_file()


_LICENCE = re.compile(r"^(?:LICEN[CS]E(?:\.\w+)?|COPYING)$")


def _checkout_files(project: Any, root: Path | None, folder: str) -> bool:
    """Whether a plain folder holds a project checkout's own files (`_CHECKOUT_FILE`) on disk: discovery lists
    none but the Python and build files, so a copy carried with only its licence (daisyRec's `LICENSE` beside
    `daisy/`) is read from the folder itself (tq51b). A licence alone marks another project's checkout only where the
    tree says so (review51 item 9: an app's own `server/` sub-project has its licence too): `.gitmodules` names the
    folder, or a README of the folder above it links the GitHub repository the folder is named for (BARS'
    `matching/libs/README.md` table linking `github.com/AmazingDD/daisyRec` above `daisyRec/`; at the root, a
    credit: `_readme_facts`)."""
    try:
        names = [p.name for p in (root / folder).iterdir() if p.is_file()] if root is not None else []
    except OSError:
        return False
    if _repository_root(root, folder):
        return True
    found = [name for name in names if _CHECKOUT_FILE.match(name)]
    if not found or root is None:
        return False
    if not all(_LICENCE.match(name) for name in found):
        return True
    return _linked_folder(project, root, folder.rstrip("/"))


def _linked_folder(project: Any, root: Path, folder: str) -> bool:
    """Whether the tree marks `folder` as another project's: a `.gitmodules` entry for its path, or a link to a GitHub
    repository of its name in a README of its parent folder (the root README's credits only)."""
    from auditor.source import SourceError
    from auditor.static.project_imports import read_counted

    parent, _, name = folder.rpartition("/")
    modules = ""
    if (root / ".gitmodules").is_file():
        try:
            modules = read_counted(project, root / ".gitmodules", _README_BYTES, prefix=True).decode("utf-8", "replace")
        except (OSError, SourceError):
            pass
    if re.search(rf"^\s*path\s*=\s*{re.escape(folder)}/?\s*$", modules, re.MULTILINE):
        return True
    if not parent:
        return _fold(name) in _readme_facts(project)["credited"]
    for readme in _READMES:
        if not (root / parent / readme).is_file():
            continue
        try:
            text = read_counted(project, root / parent / readme, _README_BYTES, prefix=True).decode("utf-8", "replace")
        except (OSError, SourceError):
            continue
        if any(_fold(repo) == _fold(name) for repo in _GITHUB_REPO.findall(text)):
            return True
    return False


def _held_modules(python: Collection[str]) -> tuple[set[str], set[str]]:
    """The module paths below every folder (`a/b/c.py` -> a/b/c, a/b: what `from <folder name>.b.c import x` may load
    there) and the tree's own top-level packages (its root folders holding Python code, `src/x/` for a `src/` folder)."""
    held = {"/".join(rel.removesuffix(".py").split("/")[:k]) for rel in python for k in range(1, rel.count("/") + 2)}
    own = {rel.split("/")[1] if rel.split("/")[0] in _SOURCE_FOLDERS else rel.split("/")[0]
           for rel in python if rel.count("/") >= (2 if rel.split("/")[0] in _SOURCE_FOLDERS else 1)}
    return held, own


def _source_root_copies(project: Any, python: Collection[str], held: Collection[str],
                        own: Collection[str]) -> dict[str, str]:
    """Copied source roots (tq49a, heldout59): a folder at least two levels down whose packages import one another by
    their bare top-level names (`from utils.image import x` in `lib/detectors/base_detector.py` beside `lib/utils/`,
    `from modules import InPlaceABNSync` in `humanparsing/networks/`), so they run only with that folder itself on
    sys.path: another repository's `src/lib` or root (LORE / CenterNet's `lib/`, SCHP's root), while the tree imports
    the folder by its path (`from .lib.utils.image import ...`, `from preprocess.humanparsing.run_parsing import
    ...`). At least two such imports from one package of the folder into another, three in four of them naming a module
    the folder holds (not only its first name); not a name of the tree's own
    top-level packages or of the standard library (they resolve there), nor inside a test suite or examples folder.
    A folder nothing outside imports by its path is a program's own layout (`cd tool && python train.py`): no copy.
    Folder -> the packages its modules import by bare name."""
    cross: dict[str, set[str]] = {}         # folder -> its packages imported by bare name from another of its packages
    counts: dict[str, list[int]] = {}       # folder -> [such imports of modules it holds, such imports in all]
    by_path: dict[str, set[str]] = {}       # a module path an import names, and its prefixes -> the importers
    for rel in python:
        folders = rel.split("/")[:-1]
        if any(part in _BENCH_FOLDERS or _TEST_SUITE.match(part) for part in folders):
            continue
        for load in (project.facts(rel) or {}).get("load", ()):
            module = str(load[0]) if load and load[0] else ""
            dotted = module.lstrip(".")
            level = len(module) - len(dotted)
            if not dotted or level - 1 > len(folders):
                continue
            # (a relative import names the folders from the importer's: `.lib.utils.image` from `table_rec/`)
            parts = (folders[:len(folders) - level + 1] if level else []) + dotted.split(".")
            for i in range(2, len(parts) + 1):
                by_path.setdefault("/".join(parts[:i]), set()).add(rel)
            top = parts[0]
            if level or top in own or top in sys.stdlib_module_names:
                continue
            for k in range(len(folders) - 1, 1, -1):
                root = "/".join(folders[:k])
                if f"{root}/{top}" in held:
                    if folders[k] != top:
                        # (the whole module must be there: verl's own `models/transformers/` beside modules importing
                        # the pip `transformers.models.llama...` is no sys.path root)
                        there = f"{root}/{'/'.join(parts)}" in held
                        count = counts.setdefault(root, [0, 0])
                        count[0] += there
                        count[1] += 1
                        if there:
                            cross.setdefault(root, set()).add(f"{folders[k]}>{top}")
                    break
    out: dict[str, str] = {}
    for root, pairs in cross.items():
        if counts[root][0] * 4 < counts[root][1] * 3:
            continue
        # imported by its path from outside it: from the tree's root, or from a folder on sys.path that holds it
        folder = root.split("/")
        names = {"/".join(folder[-n:]) for n in range(2, len(folder) + 1)}
        if len(pairs) < 2 or not any(by - {rel for rel in by if rel.startswith(root + "/")}
                                     for name in names for by in (by_path.get(name, set()),)):
            continue
        out[root + "/"] = ", ".join(sorted({pair.split(">")[1] for pair in pairs}))
    return {folder: names for folder, names in out.items()
            if not any(other != folder and folder.startswith(other) for other in out)}


# a renamed copy's modules import one another by the upstream name (`from bitsandbytes.consts import X` in
# `reproduction/int8/cextension.py` beside `int8/consts.py`): at least this many such imports, three in four of their
# names defined at the top level of the folder's namesake module
_RENAMED_MIN = 3


def _top_names(tree: ast.Module) -> set[str]:
    """The names a module defines at its top level: definitions, assignments, and its package's names it re-exports
    (`from .modules import Linear8bitLt` in an `__init__.py`; not what it imports from another package)."""
    out: set[str] = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            out.update(t.id for t in (node.targets if isinstance(node, ast.Assign) else [node.target])
                       if isinstance(t, ast.Name))
        elif isinstance(node, ast.ImportFrom) and node.level:
            out.update(a.asname or a.name for a in node.names)
    return out


# the summary key of a module's top-level names (`_top_names`; False: the file does not parse), kept so that a warm
# run reads no namesake module (review49 item 14)
_TOP_NAMES_FACT = "top_names"


def _read_top_names(project: Any, path: Any) -> list[str] | bool:
    from auditor.source import SourceError
    from auditor.static.project_imports import read_counted

    try:
        return sorted(_top_names(ast.parse(read_counted(project, path))))
    except (OSError, SourceError, SyntaxError, ValueError):
        return False


def _renamed_copies(project: Any, python: Collection[str], packages: Collection[str]) -> dict[str, str]:
    """The packages a tree carries under another name than their own (tq49b, heldout60: llm-iaq's
    `reproduction/int8/`, bitsandbytes' modules importing one another as `bitsandbytes.*`): folder -> upstream name.
    A package folder (not a test suite's or examples') whose modules import `P.x` by absolute name, where P is no
    package or module of the tree (so the import loads the installed upstream package, never this folder) and the
    folder holds x itself: three such imports at least, three in four of the folder's `P.*` imports naming a module it
    holds, and three in four of the names they import defined at the top level of the folder's namesake module (an
    extension package laid out like the library it extends, an mmdet plugin's `models/builder.py`, imports the
    library's registries, which its own modules do not define). The copy runs only where something of the tree
    imports it by its folder's path, which `_copy_entries` and the import graph read as for any other copy."""
    paths = getattr(project, "paths", {})
    summaries = getattr(project, "summaries", {})
    changed: set[str] = getattr(project, "changed", set())
    names_held = {part.removesuffix(".py") for rel in python for part in rel.split("/")}
    counts: dict[tuple[str, str], list[Any]] = {}      # (folder, P) -> [held imports, all imports, [(file, names)]]
    for rel in python:
        folders = rel.split("/")[:-1]
        if any(part in _BENCH_FOLDERS or _TEST_SUITE.match(part) for part in folders):
            continue
        loads = [(str(load[0]), list(load[1])) for load in (project.facts(rel) or {}).get("load", ())
                 if load and load[0] and not str(load[0]).startswith(".") and "." in str(load[0])]
        for module, names in loads:
            upstream, rest = module.split(".", 1)
            if upstream in names_held or upstream in sys.stdlib_module_names:
                continue
            for k in range(len(folders), 0, -1):
                folder = "/".join(folders[:k])
                if folder not in packages:
                    break
                count = counts.setdefault((folder, upstream), [0, 0, []])
                count[1] += 1
                stem = f"{folder}/{rest.replace('.', '/')}"
                target = next((t for t in (f"{stem}.py", f"{stem}/__init__.py") if t in paths), None)
                if target is not None:
                    count[0] += 1
                    count[2].append((target, [n for n in names if n != "*"]))
    found: dict[str, str] = {}
    for (folder, upstream), (there, total, imported) in counts.items():
        if there < _RENAMED_MIN or there * 4 < total * 3 or folder.rsplit("/", 1)[-1] == upstream:
            continue
        defined = wanted = 0
        for target, names in imported:
            top = kept_fact(summaries.get(target), _TOP_NAMES_FACT, lambda held: isinstance(held, list) or held is False,
                            lambda: _read_top_names(project, paths[target]), changed, target)
            if top is not False:
                wanted += len(names)
                defined += len(set(names) & set(top))
        if wanted and defined * 4 >= wanted * 3:
            found[folder + "/"] = upstream
    if found:
        own = _installed_names(project)
        found = {folder: name for folder, name in found.items() if not _installed_here(folder, name, own, paths)}
    return found


# a packaging file's entry point, `fastseg-train = fastseg.train:main` (console_scripts, [project.scripts])
_ENTRY_POINT = re.compile(r"""=\s*["']?([A-Za-z_]\w*(?:\.\w+)*)\s*:\s*[A-Za-z_]""")


def _installed_names(project: Any) -> tuple[set[tuple[str, str]], set[str]]:
    """What the tree's packaging installs and runs (review49 item 1): its `package_dir` pairs (package, folder) from
    setup.py's `setup(package_dir=...)`, setup.cfg's `[options.package_dir]`, pyproject's
    `[tool.setuptools.package-dir]`, folders relative to the packaging file's; and the module stems its launches run:
    the tree's scripts, container and CI files (`python -m fastseg.train`), its entry points (`fastseg.train:main`)."""
    pairs: set[tuple[str, str]] = set()
    stems = _shell_launches(project) | _container_launches(project)
    for base, held in _packaging_files(project):
        stems.update(held.get("entries", ()))
        pairs.update((package, "/".join(p for p in (base, folder) if p not in ("", ".")))
                     for package, folder in held.get("dirs", ()))
    return pairs, stems


def _packaging_files(project: Any) -> list[tuple[str, dict[str, Any]]]:
    """(folder, `_packaging_facts`) of each setup.py / setup.cfg / pyproject.toml of the tree, from its summary; the
    tree's paths are walked once per run (installed names and workspace members both ask)."""
    return _kept_for_run(project, _PACKAGING_FILES, list, lambda: list(_walk_packaging_files(project)))


_PACKAGING_FILES = "_packaging_files"   # `_packaging_files`, kept on the project for the run


def _walk_packaging_files(project: Any) -> Iterator[tuple[str, dict[str, Any]]]:
    summaries = getattr(project, "summaries", {})
    for rel, path in getattr(project, "paths", {}).items():
        base, _, name = rel.rpartition("/")
        if name in ("setup.py", "setup.cfg", "pyproject.toml"):
            yield base, kept_fact(summaries.get(rel), _PACKAGING_FACT,
                                  lambda held: isinstance(held, dict) and "members" in held,
                                  lambda: _packaging_facts(project, path, name), getattr(project, "changed", set()),
                                  rel)


def _kept_for_run(project: Any, name: str, kind: type, compute: Any) -> Any:
    """`compute()` once per run, kept on the project object under `name` (a project whose attributes cannot be set
    computes it each time; a held value not of `kind`, a test double's, is not trusted)."""
    held = getattr(project, name, None)
    if isinstance(held, kind):
        return held
    held = compute()
    try:
        setattr(project, name, held)
    except AttributeError:
        pass
    return held


def _workspace_members(project: Any) -> list[str]:
    """Globs, from the root, of the folders a pyproject's uv workspace names as the tree's own projects (tq58a,
    heldout77's monorepo of `packages/*`): `[tool.uv.workspace] members`, which uv builds from the tree
    (docs.astral.sh/uv/concepts/projects/workspaces/): no copy. A folder the workspace's `exclude` keeps out of
    `uv sync` (a CUDA kernel package built on request) is laid out as a member all the same; a `[tool.uv.sources]`
    path alone says nothing (a vendored engine, `third_parts/nano-vllm`, is installed from the tree too)."""
    return ["/".join(p for p in (base, glob.strip("/")) if p not in ("", "."))
            for base, held in _packaging_files(project) for glob in held.get("members", ())]


_PACKAGING_FACT = "package_dirs"      # a packaging file's `_packaging_facts`, kept in its summary


def _packaging_facts(project: Any, path: Any, name: str) -> dict[str, list[Any]]:
    """A packaging file's `package_dir` pairs [package stem, folder] and its entry points' module stems."""
    import configparser
    import tomllib

    from auditor.source import SourceError
    from auditor.static.project_imports import read_counted

    try:
        text = read_counted(project, path, _CONFIG_BYTES).decode("utf-8", errors="replace")
    except (OSError, SourceError):
        return {"members": []}
    mapping: dict[Any, Any] = {}
    members: list[str] = []
    try:
        if name == "setup.py":
            mapping = {k.value: v.value for node in ast.walk(ast.parse(text)) if isinstance(node, ast.keyword)
                       and node.arg == "package_dir" and isinstance(node.value, ast.Dict)
                       for k, v in zip(node.value.keys, node.value.values)
                       if isinstance(k, ast.Constant) and isinstance(v, ast.Constant)}
        elif name == "setup.cfg":
            parser = configparser.ConfigParser()
            parser.read_string(text)
            mapping = dict(parser["options.package_dir"]) if parser.has_section("options.package_dir") else {}
        else:
            tool = tomllib.loads(text).get("tool", {})
            mapping = tool.get("setuptools", {}).get("package-dir", {})
            uv = tool.get("uv", {}) if isinstance(tool.get("uv"), dict) else {}
            workspace = uv.get("workspace")
            members = list(workspace.get("members") or []) if isinstance(workspace, dict) else []
    except (SyntaxError, ValueError, configparser.Error, tomllib.TOMLDecodeError, AttributeError, TypeError):
        pass
    return {"dirs": [[package.replace(".", "/"), folder.strip("/")] for package, folder in mapping.items()
                     if isinstance(package, str) and package and isinstance(folder, str)],
            "entries": sorted({m.replace(".", "/") for m in _ENTRY_POINT.findall(text)}),
            "members": sorted({m for m in members if isinstance(m, str) and m.strip("./")})}


def _installed_here(folder: str, upstream: str, own: tuple[set[tuple[str, str]], set[str]],
                    paths: Collection[str]) -> bool:
    """Whether `folder/`, whose modules import one another as `upstream.*`, is the tree's own package installed under
    that name (`package_dir={"fastseg": "src"}`, or a launch of `fastseg.train` that this folder's `train.py` answers):
    setuptools maps the import to this folder, so it is no renamed copy."""
    pairs, stems = own
    folder = folder.rstrip("/")
    if (upstream, folder) in pairs:
        return True
    return any(stem.startswith(upstream + "/") and any(f"{folder}/{stem[len(upstream) + 1:]}{tail}" in paths
                                                      for tail in (".py", "/__init__.py"))
               for stem in stems)


def _shell_launches(project: Any, skip: tuple[str, ...] = ()) -> set[str]:
    """The files the tree's shell scripts run, as path stems from any sys.path root: `python a/b.py` -> a/b, `python3
    -m verl.trainer.main_ppo` -> verl/trainer/main_ppo, `-m lm_eval` -> lm_eval, lm_eval/__main__ (matched against a
    file's path end, `_launched`). `skip`: folders whose scripts are left out."""
    out: set[str] = set()
    for rel, script in _shell_facts(project).items():
        if rel.startswith(skip):
            continue
        for folders, name in script.get("launch", ()):
            out.add("/".join([*folders, name.removesuffix(".py")]))
        modules = {m.replace(".", "/") for m in script.get("modules", ())}
        out.update(modules | {f"{m}/__main__" for m in modules})       # `python -m lm_eval` runs lm_eval/__main__.py
    return out


# a container's or CI job's launch file: a Dockerfile (CMD / ENTRYPOINT / RUN), a compose file (`command:`), a CI
# workflow's steps, a Procfile
_LAUNCH_FILE = re.compile(r"(?:^|/)(?:[\w.-]*Dockerfile[\w.-]*|[\w.-]*\.dockerfile|[\w.-]*compose[\w.-]*\.ya?ml|"
                          r"\.gitlab-ci\.ya?ml|Procfile|\.github/workflows/[^/]+\.ya?ml)$", re.IGNORECASE)
# `-m pkg` in shell form, or in a JSON exec form (`CMD ["python", "-m", "pkg"]`)
_LAUNCHED_MODULE = re.compile(r"""(?:^|[\s"'\[])-m(?:\s+|["']\s*,\s*["'])([A-Za-z_]\w*(?:\.\w+)*)""")


def _container_launches(project: Any) -> set[str]:
    """`_shell_launches`'s module launches from the tree's container and CI files (review47 item 2: a Dockerfile's
    `CMD ["python", "-m", "voiceapp"]` runs the app's own `voiceapp/__main__.py`)."""
    from auditor.source import SourceError
    from auditor.static.project_imports import read_counted

    out: set[str] = set()
    for rel, path in getattr(project, "paths", {}).items():
        if not _LAUNCH_FILE.search(rel):
            continue
        try:
            text = read_counted(project, path, _CONFIG_BYTES).decode("utf-8", errors="replace")
        except (OSError, SourceError):
            continue
        for line in text.splitlines():
            if not line.lstrip().startswith("#"):
                out.update(m.replace(".", "/") + tail for m in _LAUNCHED_MODULE.findall(line) for tail in ("", "/__main__"))
    return out


def _copy_entries(project: Any, copies: Collection[str], credited: Collection[str] = ()) -> set[str]:
    """The Python files a tree with copied packages runs itself: every file outside the copies (the tree's own code,
    a library's public modules), each copy's top-level scripts (`hubconf.py`, which torch.hub runs; a `setup.py`) and
    the files of its `scripts/`, `tools/`, `bin/`, `demo/` folders (a user may run any of them), and any file the tree's
    shell scripts run. The rest of a copy runs only as far as these import, call or name it. The copy's own test suite
    and examples (AutoGPTQ's `tests/`, PEFT's `examples/` in a tree that uses the library) are the upstream project's
    checks, which nothing in the tree runs (policy (j), tq43): not entries. A credited copy (`_credited_copies`) at the
    root is read like a checkout: its top-level modules run as far as the tree imports them."""
    launched = _shell_launches(project)
    # (a renamed copy, `_renamed_copies`, is no package of the tree's: nothing imports it by its upstream name)
    renamed = {c for c, name in copies.items() if c.rstrip("/").rsplit("/", 1)[-1] != name} \
        if isinstance(copies, dict) else set()
    forks = _fork_programs(project, renamed)
    renamed |= set(credited)
    # (a credited copy's program a README command runs is the tree's documented program: policy (s))
    documented = _readme_facts(project)["launches"] if credited else set()
    # (a program the README of a folder the root README links runs is the tree's documented program too, in any copy)
    linked = _readme_facts(project)["linked"]
    # (a setup.py deeper in a copy runs where the root README installs its folder, `pip install
    # ./gaussiansplatting/submodules/diff-gaussian-rasterization`: the user builds that extension; tq60b)
    installed = {word.removeprefix("./").rstrip("/") for word in _readme_facts(project)["paths"]}
    # a checkout's top-level programs (timm's `train.py` beside `timm/` in VisRAG's `timm_modified/`) run when the
    # tree's own scripts launch them; the checkout's own launchers (timm's `distributed_train.sh`) are upstream's too
    # (policy (j), tq44b)
    # (nor do the shell scripts of another repository's checkout that is no copy of a package: tensorrtllm_backend's
    # `ci/` and `scripts/benchmarking/` running `python3 build.py` name no build.py of the tree's; tq53c)
    own_launched = _shell_launches(project, tuple(copies) + _checkout_folders(project))
    packages = {rel.removesuffix("__init__.py") for rel in getattr(project, "paths", {})
                if rel.endswith("/__init__.py")} - renamed
    out: set[str] = set()
    for rel in getattr(project, "paths", {}):
        if not rel.endswith(".py"):
            continue
        copy = _copy_of(rel, copies)
        inner = rel[len(copy):].split("/") if copy else []
        if copy is None or inner[0] in _COPY_RUN_FOLDERS or rel in forks \
                or _launched(rel, launched if copy in packages else own_launched) \
                or copy in credited and _launched(rel, documented) or rel.removesuffix(".py") in linked \
                or inner[-1] == "setup.py" and rel.rpartition("/")[0] in installed:
            out.add(rel)
        # (a copied package's `__main__.py` runs only as `python -m pkg`, which no launch above names: policy (s))
        # (nor does a program among a copied package's modules, one with a `__main__` block: CLAP's `training/main.py`
        # beside the `training/data.py` the tree imports is upstream's training run, policy (j); tq57b)
        elif len(inner) == 1 and inner[0] != "__main__.py" and (
                copy in packages and not (project.facts(rel) or {}).get("main") or inner[0] in _CHECKOUT_ENTRIES):
            out.add(rel)
    return out


def _checkout_folders(project: Any) -> tuple[str, ...]:
    """The folders below the root that hold a shell script and were another repository's root
    (`_repository_root`), as "folder/" prefixes."""
    root = _tree_root(project)
    folders = {"/".join(rel.split("/")[:k]) for rel in getattr(project, "paths", {}) if rel.endswith(_SHELL_SUFFIXES)
               for k in range(1, rel.count("/") + 1)}
    return tuple(sorted(f"{folder}/" for folder in folders if _repository_root(root, folder)))


# tq51b: a root folder named for a repository the tree's README credits (`## Acknowledgments ... based on the
# [AudioLDM2](https://github.com/haoheliu/AudioLDM2) repos` beside `audioldm2/`)
_CREDITED_NOTE = ("nothing this tree runs reaches it: `{}` holds a copy of the {} repository, which this tree's README "
                  "credits as code it builds on, of which this tree imports or runs only part; port it if you run that "
                  "program")
_ENCLOSING_NOTE = ("nothing this tree runs reaches it: `{}` is a copy of another project's repository (with its own "
                   "licence and install files, around the copied `{}` package this tree loads), of which this tree "
                   "imports or runs only part; port it if you run that program")
_LICENSED_NOTE = ("nothing this tree runs reaches it: `{}` is a copy of another project's package, carried with its own "
                  "licence ({}'s, not this tree's), of which this tree imports or runs only part; port it if you run it")
# the holder a licence's copyright line names: "The MIT License (MIT) Copyright (c) 2020 Andrej Karpathy"
_COPYRIGHT = re.compile(r"(?im)copyright\s*(?:\(c\)|©)?\s*(?:\d{4}(?:\s*[-,]\s*\d{4})*)?[\s,]*([^\n]{3,80})$")


def _licence_holder(folder: Path) -> str | None:
    """The copyright holder of a folder's licence file (read on disk: discovery lists no licence), None without."""
    try:
        names = sorted(p.name for p in folder.iterdir() if p.is_file() and _LICENCE.match(p.name))
        text = (folder / names[0]).read_bytes()[:4096].decode("utf-8", errors="replace") if names else ""
    except OSError:
        return None
    found = _COPYRIGHT.search(text)
    holder = found.group(1).strip().rstrip(".").strip() if found else ""
    return re.sub(r"\s+", " ", holder).casefold() or None


def _licensed_copies(project: Any) -> dict[str, str]:
    """Package folders below the root that carry a licence of their own naming another copyright holder than the
    root's licence (tq54a, heldout70: minGPT's MIT licence, "Copyright (c) 2020 Andrej Karpathy", in UMI's
    `diffusion_policy/model/bet/libraries/mingpt/`, beside the root's "Copyright (c) 2023 Columbia Artificial
    Intelligence and Robotics Lab"): another project's package, copied with the licence that project's terms ask to
    keep (policy (j)); folder -> the holder. A sub-project of the tree's own (an app's `server/` with its licence,
    review51 item 9) names the tree's holder; a tree without a root licence names none to compare, so nothing is read."""
    root = _tree_root(project)
    own = _licence_holder(root) if root is not None else None
    if own is None:
        return {}
    paths = getattr(project, "paths", {})
    packages = sorted(rel.removesuffix("__init__.py") for rel in paths if rel.endswith("/__init__.py")
                      and not any(p in _BENCH_FOLDERS for p in rel.split("/")[:-1]))
    out: dict[str, str] = {}
    for folder in packages:
        if any(folder.startswith(found) for found in out):
            continue
        holder = _licence_holder(root / folder)
        if holder is not None and holder != own and own not in holder and holder not in own:
            out[folder] = holder
    return out


# a checkout's own install files at its top (discovered: a conda environment, a requirements file, build metadata)
_INSTALL_FILE = re.compile(r"^(?:environment[\w.-]*\.ya?ml|conda[\w.-]*\.ya?ml|requirements[\w.-]*\.txt|setup\.py|"
                           r"setup\.cfg|pyproject\.toml)$")


def _enclosing_checkouts(project: Any, copies: Collection[str]) -> dict[str, str]:
    """The checkouts of other projects that hold a copied package (tq59a, heldout78: PnPInversion's
    `models/instructpix2pix/`, Instruct-Pix2Pix's repository with its LICENSE, `environment.yaml`, `main.py` and
    `edit_cli.py`, around the `stable_diffusion/` checkout whose `ldm` package the tree loads): the nearest plain folder
    (no `__init__.py`) above a copy, below the root, that carries a licence of its own (on disk: discovery lists none)
    and an install file of its own (`_INSTALL_FILE`); where the root has a licence, the folder's names another holder
    (an app's own sub-project names the tree's). The copied repository's programs, metrics and scripts run only as far
    as the tree launches, imports or names them, as for any copy (policy (j)); folder -> the package it holds."""
    root = _tree_root(project)
    if root is None:
        return {}
    paths = getattr(project, "paths", {})
    own: str | None = None
    out: dict[str, str] = {}
    for copy, name in copies.items() if isinstance(copies, dict) else ():
        parts = copy.rstrip("/").split("/")
        for k in range(len(parts) - 1, 0, -1):
            folder = "/".join(parts[:k])
            if f"{folder}/__init__.py" in paths:
                continue
            try:
                licensed = any(p.is_file() and _LICENCE.match(p.name) for p in (root / folder).iterdir())
            except OSError:
                licensed = False
            if not licensed or not any(rel.startswith(f"{folder}/") and _INSTALL_FILE.match(rel[len(folder) + 1:])
                                       for rel in paths):
                continue
            own = own if own is not None else _licence_holder(root) or ""
            holder = _licence_holder(root / folder) if own else None
            if not own or holder is not None and holder != own and own not in holder and holder not in own:
                out.setdefault(f"{folder}/", name)
            break
    return out


_READMES = ("README.md", "README.rst", "README.txt", "README")
_README_BYTES = 1 << 18
_GITHUB_REPO = re.compile(r"github\.com/[\w.-]+/([\w.-]+?)(?:\.git)?(?=[)\]\s\"'#>]|/?$|/?[)\]\s\"'>])")
# a link into a repository's files or pages (`github.com/o/RePlay/blob/main/examples/x.ipynb`, `/actions`): what a
# project's README writes about its own repository, never a credit
_GITHUB_PAGE = re.compile(r"github\.com/[\w.-]+/([\w.-]+)/(?:blob|tree|issues|pulls?|actions|releases|discussions|wiki|"
                          r"workflows|stargazers|network|graphs|commits?)\b")
# a line, or the heading above it, saying the tree builds on the linked code (a badge, a paper link or the tree's
# own clone command says nothing of the kind)
_CREDIT = re.compile(r"acknowledg|credit|thank|based on|built (?:up)?on|borrow|adapted from|modified from|derived from|"
                     r"code (?:is )?from|codebase", re.IGNORECASE)
_HEADING = re.compile(r"^\s*#+\s|^\s*[=~^-]{3,}\s*$")


def _fold(name: str) -> str:
    """A repository or folder name compared loosely (`AudioLDM2` ~ `audioldm2`, `Matcha-TTS` ~ `matcha_tts`)."""
    return re.sub(r"[-_.]", "", name).lower()


# a README's command running a program (`python -m llava.serve.cli ...`, `python tools/demo.py ...`): policy (s)'s
# "documented command of the tree"
_README_SCRIPT = re.compile(r"\bpython[\d.]*\s+(?:-[A-Za-ln-z]\w*\s+)*([\w./-]+)\.py\b")
_README_FACT = "_readme"                # the root README's `_readme_facts`, kept on the project for the run


def _readme_facts(project: Any) -> dict[str, Any]:
    """The tree's root README, read once per run through `read_counted`: `credited`, the GitHub repositories it
    credits (folded name -> the name as written: a link on a line that names the credit, or below a heading that
    does, `## Acknowledgements`), and `launches`, the programs its commands run (`_shell_launches`' stems). The audit
    discovers no Markdown, so no file summary holds them."""
    return _kept_for_run(project, _README_FACT, dict, lambda: _read_readme_facts(project))


def _read_readme_facts(project: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"credited": {}, "launches": set(), "words": set(), "linked": set(), "paths": set()}
    for text in filter(None, [_main_readme(project, "")]):
        credited: dict[str, str] = out["credited"]
        lines = text.splitlines()
        section = False
        for i, line in enumerate(lines):
            # (a setext heading's underline closes the line above it as a heading)
            if _HEADING.match(line):
                heading = lines[i - 1] if not line.lstrip().startswith("#") and i else line
                section = bool(_CREDIT.search(heading))
                continue
            if section or _CREDIT.search(line):
                for repo in _GITHUB_REPO.findall(line):
                    credited.setdefault(_fold(repo), repo)
            if not line.lstrip().startswith("#"):
                out["launches"].update(_readme_launches(line))
        for repo in _GITHUB_PAGE.findall(text):
            credited.pop(_fold(repo), None)
        out["words"] = {_fold(word) for word in re.findall(r"[A-Za-z_][\w-]*", text)}
        out["linked"] = _linked_readme_launches(project, text)
        out["paths"] = {w.decode("utf-8", "replace") for w in _PATH_WORD.findall(text.encode())}
    return out


def _readme_launches(line: str) -> set[str]:
    """The programs a README line's command runs (`python -m pkg.cli`, `python tools/demo.py`), as path stems."""
    return {m.replace(".", "/") + tail for m in _LAUNCHED_MODULE.findall(line) for tail in ("", "/__main__")} | \
        {path.lstrip("./") for path in _README_SCRIPT.findall(line)}


# a Markdown link to a folder of the tree (`[Captioning](./captioning)`, `[docs](tools/README.md)`), no URL
_FOLDER_LINK = re.compile(r"\]\((?:\./)?([\w-][\w.-]*(?:/[\w-][\w.-]*)*?)/?(?:/README\.md)?\)")
# tq56b: a line sending the reader to a folder's README in words (VL-Adapter's "Please go into CLIP-ViL folder and
# follow the README there"): the folder as "X folder" / "folder X" / "directory X" / `cd X`, on a line naming a README
_FOLDER_WORDS = re.compile(r"`?([\w-][\w.-]*(?:/[\w-][\w.-]*)*?)/?`?\s+(?:sub)?(?:folder|directory)\b|"
                           r"\b(?:folder|directory)\s+`?([\w-][\w.-]*(?:/[\w-][\w.-]*)*?)/?`?(?=[\s,.;:)]|$)|"
                           r"\bcd\s+(?:\./)?([\w-][\w.-]*(?:/[\w-][\w.-]*)*?)/?(?=[\s`;&)]|$)", re.IGNORECASE)
# a folder's README under GitHub's other spellings (GitHub shows `readme.md` on the folder's page too)
_LINKED_README_NAMES = _READMES + ("readme.md", "Readme.md")
# a folder README's command running one of the folder's shell scripts (`bash scripts/gqa_adapters.sh 0 snap/gqa 9590 1`)
_README_SHELL = re.compile(r"\b(?:bash|sh)\s+(?:\./)?([\w./-]+\.(?:sh|bash))\b|^\s*\./([\w./-]+\.(?:sh|bash))\b")
_LINKED_READMES = 8


def _linked_readme_launches(project: Any, text: str) -> set[str]:
    """The programs the READMEs of the folders the root README links run (Panda-70M's "[Captioning](./captioning)",
    whose captioning/README.md says `cd Panda-70M/captioning` then `python inference.py`): the tree's documented
    commands, run from that folder (GitHub shows a folder's README.md on the folder's page), as tree paths (tq55c,
    policy (s))."""
    out: set[str] = set()
    named = [f for line in text.splitlines() if "readme" in line.lower()
             for groups in _FOLDER_WORDS.findall(line) for f in groups if f]
    folders = [f for f in dict.fromkeys(_FOLDER_LINK.findall(text) + named) if "." not in f.rsplit("/", 1)[-1]]
    for folder in folders[:_LINKED_READMES]:
        sub = _main_readme(project, folder, _LINKED_README_NAMES)
        if sub is None:
            continue
        lines = [line for line in sub.splitlines() if not line.lstrip().startswith("#")]
        out.update(f"{folder}/{stem}" for line in lines for stem in _readme_launches(line))
        # (a shell script the README runs launches its programs from the same folder: tq56b, CLIP-ViL's
        # `bash scripts/gqa_adapters.sh` running `python -m torch.distributed.launch ... src/tasks/gqa.py`)
        for script in {path for line in lines for pair in _README_SHELL.findall(line) for path in pair if path}:
            facts = project.shell(f"{folder}/{script}") if f"{folder}/{script}" in getattr(project, "paths", {}) \
                else None
            for launch_folders, name in (facts or {}).get("launch", ()):
                out.add("/".join([folder, *launch_folders, name.removesuffix(".py")]))
    return out


def _credited_copies(project: Any) -> dict[str, str]:
    """Root folders holding a copy of a repository the tree's README credits (tq51b, policy (j)): a folder at the root
    with Python files, named for that repository (FluxMusic's `audioldm2/`, whose README says "The codebase is based on
    the awesome ... [AudioLDM2](https://github.com/haoheliu/AudioLDM2) repos"; LLaMA-Omni2's `cosyvoice/` under
    "Acknowledgements"). Such a copy sits where the tree's own packages do and imports itself by its own name, so
    nothing in its layout tells it from the tree's code; the credit does. Not a folder of tests, examples, scripts or
    sources (`src/`), and only a folder the tree uses as a library (review51 item 2): other Python code of the tree
    imports it (FluxMusic's root `train.py` imports `audioldm2`) and no script or container file of the tree launches
    a program of it - a fork's own package (a LLaVA fork's `llava/`, whose scripts run `llava/train/train_mem.py`)
    is the tree's own code, whatever its README credits. Folder -> the repository's name as the README writes it."""
    paths = getattr(project, "paths", {})
    python = [rel for rel in paths if rel.endswith(".py")]
    folders = {rel.split("/", 1)[0] for rel in python if "/" in rel} - _BENCH_FOLDERS - _APP_TOOL_FOLDERS \
        - _SOURCE_FOLDERS
    credited = _readme_facts(project)["credited"] if folders else {}
    found = {f"{folder}/": credited[_fold(folder)] for folder in sorted(folders) if _fold(folder) in credited}
    if not found:
        return {}
    return _used_as_library(project, python, found)


def _used_as_library(project: Any, python: Collection[str], found: dict[str, str]) -> dict[str, str]:
    """Of `found` (package folder -> value), the folders the tree uses as a library: Python code outside the folder
    imports its package by name, or by its path in the tree (`from models.edict.my_diffusers import UNet2DConditionModel`,
    an old diffusers copied as `my_diffusers`; tq59a), and no shell script or container file launches a program of it."""
    launched = _shell_launches(project) | _container_launches(project)
    out = {}
    for folder, value in found.items():
        parts = folder.rstrip("/").split("/")
        names = tuple(".".join(parts[k:]) for k in range(len(parts)))      # the package, then its paths from above
        if any(_launched(rel, launched) for rel in python if rel.startswith(folder)):
            continue
        if any(str(load[0]) in names or str(load[0]).startswith(tuple(f"{n}." for n in names))
               for rel in python if not rel.startswith(folder)
               for load in (project.facts(rel) or {}).get("load", ()) if load and load[0]):
            out[folder] = value
    return out


_VERSIONED_NOTE = ("nothing this tree runs reaches it: `{}` is a copy of another project's package: it carries that "
                   "project's release version ({}), while this tree packages nothing to publish it and its README never "
                   "names it; of it this tree imports or runs only part; port it if you run it")
_PACKAGING = ("setup.py", "setup.cfg", "pyproject.toml")
_RELEASE = re.compile(r"^\d+\.\d+(?:\.\d+)?")


def _release_version(project: Any, rel: str) -> str:
    """A package `__init__.py`'s `__version__` string ("" without one): from the file's summary, which the worker
    wrote from its parse (`crossfile.release_version`), else from one read of a file the run holds no summary of."""
    from auditor.source import SourceError
    from auditor.static.project_imports import read_counted

    summary = getattr(project, "summaries", {}).get(rel)
    if isinstance(summary, dict) and "defs" in summary:
        held = summary.get(RELEASE_VERSION, "")
        return held if isinstance(held, str) else ""
    try:
        return release_version(ast.parse(read_counted(project, getattr(project, "paths", {}).get(rel))))
    except (OSError, SourceError, SyntaxError, ValueError):
        return ""


def _versioned_copies(project: Any) -> dict[str, str]:
    """Packages a tree carries with another project's release version (tq55a, heldout72: EzAudio's root `audiotools/`,
    descript's audiotools with its `__version__ = "0.7.3"`, and `src/modules/dac/`, descript-audio-codec's `dac` with
    `__version__ = "1.0.0"`): a package at the top of its import root (its folder is no package) whose `__init__.py`
    binds `__version__` to a release string (`1.0`, `0.7.3`), in a tree with no packaging file (`setup.py`,
    `setup.cfg`, `pyproject.toml`) in the package's folder or any folder above it, whose root README never names it.
    A version is what a published distribution reports (PEP 396's `__version__`, PEP 440's release segment); a tree
    that packages nothing publishes no release, and a package of its own it would document. As for a credited copy,
    only a package the tree uses as a library: other Python code imports it by its name, and no script or container
    file of the tree launches a program of it. Folder -> "name version"."""
    paths = getattr(project, "paths", {})
    packaging = {rel.rsplit("/", 1)[0] if "/" in rel else "" for rel in paths if rel.rsplit("/", 1)[-1] in _PACKAGING}
    if "" in packaging:
        return {}
    python = [rel for rel in paths if rel.endswith(".py")]
    inits = {rel.removesuffix("/__init__.py") for rel in python if rel.endswith("/__init__.py")}
    candidates = sorted(folder for folder in inits if folder.rsplit("/", 1)[0] not in inits or "/" not in folder)
    candidates = [folder for folder in candidates
                  if not any(part in _BENCH_FOLDERS or _TEST_SUITE.match(part) for part in folder.split("/"))
                  and not any(folder == above or folder.startswith(f"{above}/") for above in packaging)]
    if not candidates:
        return {}
    words = _readme_facts(project)["words"]
    found: dict[str, str] = {}
    for folder in candidates:
        name = folder.rsplit("/", 1)[-1]
        if _fold(name) in words:
            continue
        version = _release_version(project, f"{folder}/__init__.py")
        if _RELEASE.match(version):
            found[f"{folder}/"] = f"{name} {version}"
    if not found:
        return {}
    return _used_as_library(project, python, found)


def _fork_programs(project: Any, renamed: Collection[str]) -> set[str]:
    """The programs of the tree's own in a renamed copy (tq51c, heldout65: GraphGPT's `graphgpt/`, a FastChat fork
    whose upstream modules still import the installed `fastchat.*`): a module with a `__main__` block that imports
    the copy by its own folder path (`from graphgpt.model import GraphLlamaForCausalLM` in `graphgpt/eval/run_x.py`)
    was written for this tree, which upstream's modules never name; a user runs it as the tree's program, and what it
    imports runs with it (the fork's modules nothing imports stay unreached)."""
    out: set[str] = set()
    paths = getattr(project, "paths", {})
    # (a package folder only, as `_renamed_copies` finds: a checkout whose package sits below it, darling's `verl/`
    # holding `verl/verl/`, is no fork; a copy's tests and examples stay upstream's, policy (j))
    for copy in (c for c in renamed if f"{c}__init__.py" in paths):
        parts = copy.rstrip("/").split("/")
        own = tuple(".".join(parts[k:]) for k in range(len(parts)))
        for rel in paths:
            if not (rel.startswith(copy) and rel.endswith(".py")) or _bench_file(rel):
                continue
            facts = project.facts(rel) or {}
            if facts.get("main") and any(load and str(load[0]).startswith(tuple(f"{name}." for name in own))
                                         or load and str(load[0]) in own for load in facts.get("load", ())):
                out.add(rel)
    return out


def _copy_of(rel: str, copies: Collection[str]) -> str | None:
    """The innermost copy holding the file (a checkout copied inside a copied source root is a copy of its own)."""
    return max((c for c in copies if rel.startswith(c)), key=len, default=None)


def _imported_files(project: Any, starts: Collection[str]) -> set[str]:
    """The Python files an import from `starts` may load, transitively (tq42): every import of a loaded file, at
    module level or inside a function, by its cached import-graph facts; an absolute module is any file whose path
    ends with its dotted path under any sys.path root (`_is_module`), a `from m import x` also m's submodule x, a
    relative one is resolved from the file's folder, and loading a module loads its packages' `__init__.py` files."""
    loads = _import_loads(project)
    loaded: set[str] = set()
    todo = list(starts)
    while todo:
        rel = todo.pop()
        if rel in loaded:
            continue
        loaded.add(rel)
        todo.extend(loads(rel) - loaded)
    return loaded


def _import_loads(project: Any) -> Callable[[str], set[str]]:
    """The files one file's imports may load directly (`_imported_files`' step)."""
    python = [rel for rel in getattr(project, "paths", {}) if rel.endswith(".py")]
    by_stem: dict[str, list[str]] = {}
    for rel in python:
        parts = rel.removesuffix(".py").split("/")
        by_stem.setdefault(parts[-2] if parts[-1] == "__init__" and len(parts) > 1 else parts[-1], []).append(rel)
    inits = set(python)

    def modules(rel: str, module: str, names: Collection[str]) -> set[str]:
        dotted = module.lstrip(".")
        level = len(module) - len(dotted)
        if level:
            folders = rel.split("/")[:-1]
            if level - 1 > len(folders):
                return set()
            base = "/".join(folders[:len(folders) - level + 1] + ([dotted.replace(".", "/")] if dotted else []))
            paths = [base, *(f"{base}/{n}" if base else n for n in names)]
            return {p for path in paths for p in (f"{path}.py", f"{path}/__init__.py") if p in inits}
        out: set[str] = set()
        for target in (dotted, *(f"{dotted}.{n}" for n in names)):
            out.update(f for f in by_stem.get(target.rsplit(".", 1)[-1], ()) if _is_module(f, target))
        # a script's folder comes first on sys.path, and a standard-library name is the standard library's module:
        # `import common` beside googletest's `scripts/common.py`, or `import typing`, loads no other file of that
        # name (a copied CUTLASS's `pycute/typing.py`, `cutlass/emit/common.py`; tq48a)
        top = dotted.split(".", 1)[0]
        folder = "/".join(rel.split("/")[:-1])
        own = f"{folder}/{top}" if folder else top
        if f"{own}.py" in inits or f"{own}/__init__.py" in inits or top in sys.stdlib_module_names:
            out = {f for f in out if f == f"{own}.py" or f.startswith(own + "/")}
        return out

    def loads(rel: str) -> set[str]:
        folders = rel.split("/")[:-1]
        more = {"/".join(folders[:k] + ["__init__.py"]) for k in range(1, len(folders) + 1)} & inits
        for module, names, *_ in (project.facts(rel) or {}).get("load", ()):
            if module:
                more |= modules(rel, str(module), [n for n in names if n != "*"])
        return more

    return loads


# tq46b: a module nothing imports that repeats an imported module's definitions
_STALE_NOTE = ("nothing this tree runs reaches it: an older copy of `{}` (this module defines no top-level name that "
               "module lacks, and nothing in the tree imports it); port it if you run it")
_STALE_MIN_DEFS = 3         # fewer names say little about a copy (two modules may share `main` and `parse_args`)


def _stale_duplicates(project: Any, candidates: Collection[str]) -> dict[str, str]:
    """Of `candidates` (Python files with findings to lower), the modules nothing in the tree imports whose top-level
    classes and functions (three or more) a module the tree imports all defines too: an older copy left beside the one
    in use (TeaCache's VideoSys copy keeps Open-Sora-Plan's v1.0 `open_sora_plan_transformer_3d.py` beside the
    `..._v110_...` module that defines every one of its 24 names and that the pipelines import), like pd53's stale
    copy in an application, in any tree. Not a test suite's or example's file, a `setup.py` or `__init__.py`, a script
    with a `__main__` block, nor a module whose name another file's text or its folder's README spells (a loader
    may name it; a README command runs a module-level script: decision (t), tq56d on heldout75's MagCache). File ->
    the module it repeats (cached definition and import facts; only candidates' neighbours' texts are read)."""
    from auditor.source import SourceError
    from auditor.static.call_defaults import FACT_DEFINITIONS, FACT_UNPARSED
    from auditor.static.project_imports import read_counted

    paths = getattr(project, "paths", {})
    python = [rel for rel in paths if rel.endswith(".py")]
    tops: dict[str, set[str]] = {}
    for rel in python:
        facts = project.calls(rel) if hasattr(project, "calls") else None
        if facts is not None and not facts.get(FACT_UNPARSED):
            tops[rel] = set((facts.get(FACT_DEFINITIONS) or {}).get("tops") or ())
    todo = [rel for rel in candidates if len(tops.get(rel, ())) >= _STALE_MIN_DEFS
            and rel.rsplit("/", 1)[-1] not in ("__init__.py", "setup.py") and not _bench_file(rel)
            and not (project.facts(rel) or {}).get("main")]
    defining: dict[str, set[str]] = {}     # name -> the files defining it at top level
    for rel, names in tops.items():
        for name in names:
            defining.setdefault(name, set()).add(rel)
    # the files defining every name of a candidate, the rarest name first (most trees have no such file: then no
    # import graph is built)
    twins = {rel: set.intersection(*sorted((defining[n] for n in tops[rel]), key=len)) - {rel} for rel in todo}
    todo = [rel for rel in todo if twins[rel]]
    if not todo:
        return {}
    loads = _import_loads(project)
    imported: set[str] = set()
    for rel in python:
        imported |= loads(rel) - {rel}
    texts: dict[str, bytes] = {}

    def text(rel: str) -> bytes:
        if rel not in texts:
            try:
                texts[rel] = read_counted(project, paths[rel])
            except (OSError, SourceError):
                texts[rel] = b""
        return texts[rel]

    out: dict[str, str] = {}
    for rel in todo:
        folder, _, name = rel.rpartition("/")
        # a script its folder's README runs (`python magcache_flux_kontext.py`) is a program, not a copy (tq56d)
        if rel in imported or _readme_names(project, folder, name):
            continue
        twin = min(twins[rel] & imported, default=None)
        stem = rel.rsplit("/", 1)[-1].removesuffix(".py").encode()
        if twin is not None and not any(stem in text(other) for other in python if other != rel):
            out[rel] = twin
    return out


def _lower_stale_duplicates(results: list, project: Any) -> int:
    """In a tree no host runs: the findings of a stale duplicate module (`_stale_duplicates`), lowered to info."""
    candidates = [r.path for r in results if r.path.endswith(".py") and any(
        f.severity != "info" for f in r.findings)]
    stale = _stale_duplicates(project, candidates) if candidates else {}
    if not stale:
        return 0
    return _lower_spans(results, {rel: {} for rel in stale}, {rel: [(1, _END)] for rel in stale},
                        {rel: _STALE_NOTE.format(twin) for rel, twin in stale.items()}, set())


# tq56d: a script's own function nothing calls, installs or names (heldout75's MagCache: Wan2.1's evaluation script
# keeps an `i2v_generate` beside the `t2v_generate` it patches in, and runs only the latter)
_UNCALLED_NOTE = ("nothing this tree runs reaches it: `{}` is a function of this script that no file of the tree calls, "
                  "installs or names; port it if you call it")


def _uncalled_script_defs(project: Any, candidates: Collection[str]) -> dict[str, list[list[Any]]]:
    """Of `candidates` (Python files with findings to lower), the scripts' (a `__main__` block) top-level functions,
    not registered by a decorator, whose name no file of the tree calls (`f()`, `x.f()`), hands on as a value
    (`cls.generate = f`, `custom_ops={M: f}`), spells as an identifier string (`__all__`, `getattr(m, "f")`) or
    imports by name: file -> [[name, first body line, last line]]. A bare name a file defines itself reads its own
    definition (pd9: a sibling script installing its own `i2v_generate`); any other use of the name keeps every
    function of that name reached (names are matched, not resolved); a test file's functions (pytest calls them by
    name) and a file of a test or example folder are not read. Read from the run's call facts (no file is read)."""
    from auditor.static.call_defaults import FACT_DEFINITIONS, FACT_IMPORTS, FACT_REFS, FACT_UNPARSED

    todo = [rel for rel in candidates if not _bench_file(rel) and not rel.rsplit("/", 1)[-1].startswith("test")
            and (project.facts(rel) or {}).get("main")]
    if not todo or not hasattr(project, "calls"):
        return {}
    named: set[str] = set()             # names any file reads as an attribute, a string or an import
    own: dict[str, set[str]] = {}       # file -> the bare names it reads that it defines itself (pd9: its own)
    for rel in getattr(project, "paths", {}):
        facts = (project.calls(rel) or {}) if rel.endswith(".py") else {}
        if facts.get(FACT_UNPARSED):
            return {}       # a file not read may name anything
        words = [*(name for key in ("calls", "main_calls") for name in facts.get(key) or ()),
                 *(facts.get(FACT_REFS) or ())]
        bare = {name for name in words if name[:1] not in ".~"}
        own[rel] = bare & set((facts.get(FACT_DEFINITIONS) or {}).get("tops") or ())
        named.update(bare - own[rel], (name.lstrip(".~") for name in words if name[:1] in ".~"),
                     (name.rpartition(":")[2].rpartition(".")[2] for name in facts.get(FACT_IMPORTS) or ()))
    out: dict[str, list[list[Any]]] = {}
    for rel in todo:
        defs = (project.calls(rel) or {}).get(FACT_DEFINITIONS) or {}
        tops = set(defs.get("tops") or ())
        unnamed = [[name, first, last] for name, first, last, registered, *_ in defs.get("defs") or ()
                   if name in tops and not registered and name not in named and name not in own.get(rel, ())
                   and not name.startswith("test")]
        if unnamed:
            out[rel] = unnamed
    return out


def _lower_uncalled_script_defs(results: list, project: Any) -> int:
    """In a tree no host runs: the findings inside a script's functions nothing names (`_uncalled_script_defs`),
    lowered to info."""
    candidates = [r.path for r in results if r.path.endswith(".py") and any(f.severity != "info" for f in r.findings)]
    found = _uncalled_script_defs(project, candidates) if candidates else {}
    if not found:
        return 0
    lowered = 0
    for r in results:
        for name, first, last in found.get(r.path, ()):
            lowered += _lower_spans([r], {}, {r.path: [(first, last)]}, _UNCALLED_NOTE.format(name), set())
    return lowered


_PLAIN_METHOD_NOTE = ("nothing this tree runs reaches it: no file of the tree calls or names `{}` outside code that is "
                      "itself never called (the methods of the tree's own plain classes, which no library calls back, "
                      "and what only they call; policy (j)); port it if you call it")


def _plain_class_defs(definitions: dict[str, Any]) -> list[list[Any]] | None:
    """[key, first line, last line] of the methods of a module's top-level classes that subclass nothing but
    `object` and carry no decorator or metaclass (no library calls their methods back by name), besides its
    top-level functions no decorator registers; None for a module that reads an attribute by a computed name.
    Read from the file's definition facts (caller_gates.definition_facts), so a warm run reads no file."""
    if definitions.get("computed_getattr"):
        return None
    plain = set(definitions.get("plain") or ())
    out: list[list[Any]] = []
    for key, first, last, registered, *_ in definitions.get("defs") or ():
        owner, _dot, name = key.rpartition(".")
        if not registered and (not owner or owner in plain and not name.startswith("__")):
            out.append([key, first, last])
    return out


def _uncalled_plain_methods(project: Any, candidates: Collection[str]) -> dict[str, list[list[Any]]]:
    """Of `candidates` (Python files with findings to lower): the methods of the tree's own plain classes
    (`_plain_class_defs`) that another file imports or builds, whose name no file calls, hands on or spells (MetaICL's `MetaICLModel.do_train` and
    `setup_optimizer` in a tree that only runs its `do_predict`), and the functions and methods every call of which
    sits inside such dead code (`setup_fp16`, called only from `setup_optimizer`): file -> [[key, first, last]].
    A function nothing calls is never dead here (a module's API; `_uncalled_script_defs` reads scripts). Names are
    matched, not resolved. Only files outside the tree's top-level packages are read (a folder of evaluation programs
    and what they import from beside them, `evaluation/prompt_retrieval/MetaICL/metaicl/`): a top-level package is
    the tree's API, which code outside the tree may call (tq54c's `store.staging.GdrStaging`); test and example
    folders are not read either. Read from the run's call facts and the candidates' definition facts (no file is read)."""
    from auditor.static.call_defaults import FACT_CALLERS, FACT_DEFINITIONS, FACT_IMPORTS, FACT_INERT_REFS, FACT_REFS, \
        FACT_UNPARSED

    paths = getattr(project, "paths", {})
    todo = [rel for rel in candidates if not _bench_file(rel) and not rel.rsplit("/", 1)[-1].startswith("test")
            and f"{rel.split('/', 1)[0]}/__init__.py" not in paths]
    if not todo or not hasattr(project, "calls"):
        return {}
    named: set[str] = set()                     # names handed on, spelled or imported
    sites: dict[str, set[tuple[str, str]]] = {}     # name -> (file, the definition holding a call of it)
    users: dict[str, set[str]] = {}             # name -> the files that import or call it
    for rel in paths:
        facts = (project.calls(rel) or {}) if rel.endswith(".py") else {}
        if facts.get(FACT_UNPARSED):
            return {}       # a file not read may name anything
        # (tq58c: not an attribute the file only reads as a module's path step or a truth value, `torch.nn.parallel`)
        inert = set(facts.get(FACT_INERT_REFS) or ())
        named.update(name.lstrip(".~") for name in facts.get(FACT_REFS) or () if name not in inert)
        for name in facts.get(FACT_IMPORTS) or ():
            if ":" in name or "." + name.rpartition(".")[2] not in inert:
                named.add(name.rpartition(":")[2].rpartition(".")[2])
            users.setdefault(name.rpartition(":")[2].rpartition(".")[2], set()).add(rel)
        for name, found in (facts.get(FACT_CALLERS) or {}).items():
            users.setdefault(name.lstrip(".@~"), set()).add(rel)
            sites.setdefault(name.lstrip(".@~"), set()).update((rel, str(site[0])) for site in found)
    defs: dict[tuple[str, str], list[Any]] = {}
    for rel in todo:
        found = _plain_class_defs((project.calls(rel) or {}).get(FACT_DEFINITIONS) or {})
        for key, first, last in found or ():
            # (a method only of a class another file uses: a class nothing else imports or builds is a module's API)
            if "." not in key or users.get(key.partition(".")[0], set()) - {rel}:
                defs[(rel, key)] = [key, first, last]
    dead: set[tuple[str, str]] = set()
    changed = True
    while changed:
        changed = False
        for (rel, key) in defs.keys() - dead:
            name = key.rpartition(".")[2]
            callers = sites.get(name, set())
            if name in named or not callers and "." not in key or not callers <= dead:
                continue
            dead.add((rel, key))
            changed = True
    out: dict[str, list[list[Any]]] = {}
    for rel, key in sorted(dead):
        out.setdefault(rel, []).append(defs[(rel, key)])
    return out


def _lower_uncalled_plain_methods(results: list, project: Any) -> int:
    """In a tree no host runs: the findings inside dead methods of the tree's own classes (`_uncalled_plain_methods`),
    lowered to info."""
    candidates = [r.path for r in results if r.path.endswith(".py") and any(f.severity != "info" for f in r.findings)]
    found = _uncalled_plain_methods(project, candidates) if candidates else {}
    lowered = 0
    for r in results:
        for key, first, last in found.get(r.path, ()):
            lowered += _lower_spans([r], {}, {r.path: [(first, last)]}, _PLAIN_METHOD_NOTE.format(key), set())
    return lowered


def _host(results: list, project: Any) -> tuple[str, set[str]]:
    """The note for code the tree's host never reaches and the tree's entry files besides those every host runs
    (`__init__.py`, `install.py`): a ComfyUI node pack's, a webui extension's, an application's; ("", set()) for any
    other tree."""
    if comfy_node_pack(results):
        return _NOTE, set()
    entries = _webui_entries(project)
    if entries:
        return _WEBUI_NOTE, entries
    entries = _app_entries(project)
    return (_APP_NOTE, entries) if entries else ("", set())


def hosted_tree(results: list, project: Any) -> bool:
    """Whether the tree is run by a host application that reaches it only through known entry points: a ComfyUI
    node pack or a webui extension (an application is its own host, and opens its own autocasts)."""
    return comfy_node_pack(results) or bool(_webui_entries(project))


def _missing_modules(rel: str, f: dict[str, Any], facts: dict[str, dict[str, Any]]) -> list[str]:
    """The package-relative modules the file imports at module level that the tree does not hold (`from .train import
    x` beside no `train.py`): the file cannot be imported or run (pd30). A level above the tree's root is not judged."""
    folders = rel.split("/")[:-1]
    out = []
    for level, module in f.get("relative", ()):
        if level - 1 > len(folders):
            continue
        stem = "/".join([*folders[:len(folders) - level + 1], *module.split(".")])
        if f"{stem}.py" not in facts and not any(other.startswith(stem + "/") for other in facts):
            out.append("." * level + module)     # (a folder with no `__init__.py` is a namespace package)
    return out


# a class a model server builds by its documented name from the file it is given (Triton's Python backend:
# https://github.com/triton-inference-server/python_backend, `class TritonPythonModel` in `model.py`)
_SERVED_CLASSES = frozenset({"TritonPythonModel"})


# a torch module's base: `nn.Module`, `torch.nn.Linear`, a library's model base (`PreTrainedModel`, `ModelMixin`,
# `pl.LightningModule`)
_MODULE_BASE = re.compile(r"^(?:torch\.)?nn\.\w+$|(?:Module|Model|ModelMixin)$")


def _module_classes(facts: dict[str, dict[str, Any]]) -> set[str]:
    """The names of the tree's classes that are torch modules: a base of `_MODULE_BASE`, or a tree class that is one
    (to a fixed point; names are matched, not resolved)."""
    bases = {name: found for f in facts.values() for name, found in f.get("bases", {}).items()}
    out = {name for name, found in bases.items() if any(_MODULE_BASE.search(b) for b in found)}
    while more := {name for name, found in bases.items()
                   if name not in out and any(b.rsplit(".", 1)[-1] in out for b in found)}:
        out |= more
    return out


def _loadable_classes(f: dict[str, Any], modules: Collection[str]) -> list[str]:
    """The classes of a module nothing imports that something may still build from it (pd30): a torch module
    (`modules`: unpickling a saved `nn.Module` builds its class by module path) or a class a server loads by its name
    (`_SERVED_CLASSES`). A class with no base (ProPainter's copied `Trainer`, `CUDAPrefetcher`) is built only by code
    that names it (tq46b), and so is one of any other base (tq53c: detectron2's `FlopCountAnalysis` subclassing
    fvcore's, in `utils/analysis.py` that nothing imports: `torch.save` pickles models, not analysis helpers)."""
    return [name for name, bases in f.get("bases", {}).items() if bases and name in modules or name in _SERVED_CLASSES]


def _pack_facts(results: list, project: Any, entries: Collection[str] = (), app: bool = False,
                copies: Collection[str] = ()) -> dict[str, dict[str, Any]]:
    """Each Python file's reach facts, `entries` (files the host runs itself) marked `entry`; {} when a Python file
    cannot be read; a file that does not parse reads nothing (it cannot be imported either). `app`: an application's
    (`_app_entries`): its entries are scripts (their `__main__` blocks run), a module some loader's pattern matches is
    an entry too, and only loaders that may load anything (`_named_loads`) load every file."""
    from auditor.source import SourceError

    facts: dict[str, dict[str, Any]] = {}
    sources = _Sources(project)
    for rel in sources:
        try:
            facts[rel] = sources.facts(rel)
        except (OSError, SourceError):
            return {}
        if not facts[rel] or facts[rel].get("unparsed"):    # a file this Python cannot parse reaches nothing (t18g);
            # one no Python 3 parses (MuseV's `import ..visualization.x`, SuDe's TabError) runs nothing either (tq50a),
            # while a newer release's syntax may still run (review50 item 4: a PEP 701 f-string)
            facts[rel] = {"top": [], "names": {}, **({"unparsed": True} if facts[rel] else {})}
        if rel in entries:
            facts[rel]["entry"] = True
            if app:
                facts[rel]["script"] = True
    if app:
        patterns = [re.compile(p) for f in facts.values() for p in f.get("patterns", ())]
        for rel, f in facts.items():
            f["dynamic"] = f.get("dynamic_unknown", [])
            dotted = rel.removesuffix(".py").removesuffix("/__init__").split("/")
            if any(p.fullmatch(".".join(dotted[i:])) for p in patterns for i in range(len(dotted))):
                f["entry"] = True
        # a file no other file loads is a program of its own (Spark-TTS's `python -m cli.inference`, a conversion
        # script its README runs): only what the app loads is read as the app. Not one that does nothing when run
        # (pd30: voice-changer's `RVC/RVC.py`, whose one import is commented out; a vendored DDSP-SVC `solver.py`
        # defining a training loop nothing calls), nor one importing package modules the tree lacks (UVR's vendored
        # `demucs/__main__.py` and its `.train`, `.augment`): it cannot run at all. A module defining a class stays: a
        # server may load it by its path (a Triton model repository's `model.py` and its `TritonPythonModel`), or
        # unpickling a saved model (UVR's demucs `load_model` builds the checkpoint's pickled class)
        # a module whose every definition a loaded module defines too is a stale copy (pd53: brainOCR's
        # `modules/basenet.py`, the old home of `_modules.py`'s Vgg16BN and init_weights), nothing to load by its path
        unloaded = _named_by_nothing(facts, ())
        # (policy (s), tq47b: the `__main__.py` of a package the app imports as a library, xtts-webui's copied
        # `resemble_enhance/enhancer/`, runs only as `python -m`, which no launch of the tree names: no program)
        unloaded -= _library_mains(project, facts, unloaded)
        loaded_defs = {name for rel, f in facts.items() if rel not in unloaded for name, *_ in f.get("top", ())}
        modules = _module_classes(facts)
        # (a module of a package whose `__init__.py` nothing loads is part of what no file imports by the package's
        # name: unpickling its class would import that package first, and the tree never builds it to pickle; tq53c:
        # detectron2's Caffe2 `export/` models, imported only by an unimported `utils/analysis.py`)
        unused = {rel.removesuffix("__init__.py") for rel in unloaded if rel.endswith("/__init__.py")}
        for rel in unloaded:
            # (a copied checkout's own programs are upstream's, which nothing in the app runs, policy (j); its
            # `scripts/`, `tools/` and `demo/` a user may run: AnyDoor's DINOv2 `eval/knn.py`; tq51c)
            held_in = _copy_of(rel, copies)
            if held_in is not None and rel[len(held_in):].split("/")[0] not in _COPY_RUN_FOLDERS:
                continue
            missing = _missing_modules(rel, facts[rel], facts)
            copy = not facts[rel].get("runs") and {name for name, *_ in facts[rel]["top"]} <= loaded_defs
            loadable = [] if copy or rel.startswith(tuple(unused)) else _loadable_classes(facts[rel], modules)
            if missing:
                facts[rel]["missing"] = missing
            # (in a package nothing imports, a module-level call without a `__main__` block is import-time work, not a
            # program: detectron2's `export/torchscript_patch.py` running `patch_nonscriptable_classes()`; tq53c)
            elif facts[rel].get("runs") and (facts[rel].get("main_lines") or not rel.startswith(tuple(unused))):
                facts[rel]["entry"] = facts[rel]["script"] = True
            elif loadable:
                facts[rel]["entry"] = facts[rel]["script"] = True
                facts[rel]["loadable"] = loadable
        for rel in facts:
            if rel.rsplit("/", 1)[-1] == "setup.py":    # a CUDA extension's setup.py: the user builds it
                facts[rel]["entry"] = facts[rel]["script"] = True
    _flag_sets(facts, sources)
    return facts


def _library_mains(project: Any, facts: dict[str, dict[str, Any]], unloaded: Collection[str]) -> set[str]:
    """Of the files nothing loads, the `__main__.py` modules of packages whose other modules something loads, when no
    shell script of the tree runs them (`python -m pkg`)."""
    mains = {rel for rel in unloaded if rel.endswith("/__main__.py")}
    if not mains:
        return set()
    launched = _shell_launches(project) | _container_launches(project)
    used = {rel.rsplit("/", 1)[0] for rel in facts if rel not in unloaded and not rel.endswith("/__init__.py")}
    return {rel for rel in mains if rel.rsplit("/", 1)[0] in used and not _launched(rel, launched)}


def _guarded_use_lines(tree: ast.Module, findings: list) -> dict[str, tuple[int, list[int]]]:
    """qualified symbol -> (import line, lines reading the name it binds) of the module-level imports that a finding
    reports as guarded optional imports (context `guarded-import`, warning)."""
    lines = {f.line for f in findings if f.severity == "warning" and (f.data or {}).get("context") == "guarded-import"}
    bound: dict[str, tuple[str, int]] = {}      # local name -> (qualified name, import line)
    for node in walk_list(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)) and node.lineno in lines and not getattr(node, "level", 0):
            for a in node.names:
                if a.asname or isinstance(node, ast.ImportFrom):
                    qual = f"{node.module}.{a.name}" if isinstance(node, ast.ImportFrom) else a.name
                    bound[a.asname or a.name] = (qual, node.lineno)
    uses: dict[str, tuple[int, list[int]]] = {qual: (line, []) for qual, line in bound.values()}
    for node in module_nodes(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id in bound:
            uses[bound[node.id][0]][1].append(node.lineno)
    return uses


UNNAMED_USES = "unnamed_uses"      # a finding's data: the file's top-level definitions holding every use


def mark_unnamed_guarded_uses(findings: list, tree: ast.AST, text: str) -> list:
    """Per file (in the worker, cached with its findings): a guarded optional import whose every use sits in top-level
    functions or classes the file itself never names outside them (HunyuanVideo-Foley's `flash_attn_no_pad`,
    heldout28; pd34) gets their names in its findings' data (`unnamed_uses`), on the import line and on those uses;
    `lower_unnamed_guarded_uses` asks the rest of the tree."""
    if not isinstance(tree, ast.Module) or not any(
            f.severity == "warning" and (f.data or {}).get("context") == "guarded-import" for f in findings):
        return findings
    tops = [(n.name, n.lineno, n.end_lineno or n.lineno) for n in tree.body
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and not n.decorator_list
            and not n.name.startswith("__")]
    lines = text.splitlines()

    def unnamed(name: str, first: int, last: int) -> bool:
        outside = "\n".join(lines[:first - 1] + lines[last:]) + "\n" + lines[first - 1].split(name, 1)[-1]
        return re.search(rf"\b{re.escape(name)}\b", outside) is None

    marks: dict[str, tuple[int, list[tuple[int, int]], list[str]]] = {}
    guards = _unread_guards(tree) if isinstance(tree, ast.Module) else {}
    for qual, (line, uses) in _guarded_use_lines(tree, findings).items():
        if not uses and line in guards:
            marks[qual] = (line, [], [])
            continue
        holders = {next((t for t in tops if t[1] <= u <= t[2]), None) for u in uses}
        if uses and None not in holders and all(unnamed(*t) for t in holders if t is not None):
            found = sorted(t for t in holders if t is not None)
            marks[qual] = (line, [(a, b) for _, a, b in found], [n for n, _, _ in found])
    if not marks:
        return findings
    out = []
    for f in findings:
        hit = next((q for q in marks if f.symbol == q or (f.symbol or "").startswith(q + ".")), None) \
            if f.severity == "warning" and (f.data or {}).get("context") == "guarded-import" else None
        if hit is not None and not marks[hit][2] and f.line == marks[hit][0]:
            f = replace(f, data={**f.data, UNREAD_GUARD: guards[f.line]})
        elif hit is not None and (f.line == marks[hit][0] or any(a <= f.line <= b for a, b in marks[hit][1])):
            f = replace(f, data={**f.data, UNNAMED_USES: marks[hit][2]})
        out.append(f)
    return out


UNREAD_GUARD = "unread_guard"      # a finding's data: the names a guarded import's try binds, none read in its file


def _unread_guards(tree: ast.Module) -> dict[int, list[str]]:
    """Import line -> the names bound in its module-level `try: import ... except ImportError:` (the imported names and
    the availability flag its arms set: `megablocks_available = True / False`), where the file reads none of them (no
    load, no string naming one: `__all__`) and imports by no star: an import whose failure changes nothing in the
    file (tq59a, heldout78: molmoact's `from megablocks.layers.mlp import MLP, SparseMLP` in `olmo/train/optim.py`)."""
    out: dict[int, list[str]] = {}
    tries = [n for n in tree.body if isinstance(n, ast.Try) and _catches_import_errors(n)]
    if not tries:
        return out
    read = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Store)} | \
        {n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)}
    if any(isinstance(n, ast.ImportFrom) and any(a.name == "*" for a in n.names) for n in ast.walk(tree)):
        return out
    for node in tries:
        bound: list[str] = []
        lines: list[int] = []
        for stmt in (n for part in (*node.body, *node.handlers, *node.orelse) for n in walk_list(part)):
            if isinstance(stmt, (ast.Import, ast.ImportFrom)):
                lines.append(stmt.lineno)
                bound += [a.asname or a.name.split(".")[0] for a in stmt.names]
            elif isinstance(stmt, ast.Name) and isinstance(stmt.ctx, ast.Store):
                bound.append(stmt.id)
        if bound and not set(bound) & read:
            out.update((line, sorted(set(bound))) for line in lines)
    return out


_UNNAMED_NOTE = ("every use of this optional import sits in {}, which nothing in this tree names: an optional CUDA "
                 "path nothing here runs (decision 1); port it if you call it")


_UNREAD_GUARD_NOTE = ("nothing in this tree reads what this optional import binds ({}): where it fails, as on Ascend, "
                      "nothing else changes (decision 1); port it if you use it")


def lower_unnamed_guarded_uses(results: list, project: Any) -> int:
    """Outside a hosted tree (where `_unused_guarded_imports` reads reach): the findings `mark_unnamed_guarded_uses`
    marked are info (the lead's decision 1) when no other Python file of the tree calls, imports or refers to any
    definition holding the uses, by the files' cached facts (call_defaults: calls, imports, refs; a warm run reads
    nothing); a star import anywhere, or a file without facts, keeps them. Returns the count lowered."""
    marked = [r for r in results if any(UNNAMED_USES in (f.data or {}) or UNREAD_GUARD in (f.data or {})
                                        for f in r.findings)]
    if not marked or not hasattr(project, "calls"):
        return 0
    python = [r.path for r in results if r.path.endswith(".py")]
    named: dict[tuple[str, str], bool] = {}

    def named_elsewhere(rel: str, name: str) -> bool:
        if (rel, name) not in named:
            hit = False
            for other in python:
                facts = project.calls(other) if other != rel else {}
                if facts is None or facts.get("unparsed"):
                    hit = True
                else:
                    imports = facts.get("imports") or ()
                    hit = name in (facts.get("calls") or {}) or name in (facts.get("main_calls") or {}) or \
                        "." + name in (facts.get("refs") or ()) or \
                        any(i.endswith((":" + name, "." + name, ":*")) for i in imports)
                if hit:
                    break
            named[(rel, name)] = hit
        return named[(rel, name)]

    def imported_elsewhere(rel: str, names: list[str]) -> bool:
        """Whether another file takes one of the names from this module (`from olmo.train.optim import MLP`,
        `optim.megablocks_available`, a star import of it); a file without facts may."""
        stem = rel.removesuffix(".py").removesuffix("/__init__").rsplit("/", 1)[-1]
        wanted = {f"{stem}{sep}{n}" for n in [*names, "*"] for sep in ":."}
        for other in python:
            facts = project.calls(other) if other != rel else {}
            if facts is None or facts.get("unparsed") or wanted & set(facts.get("imports") or ()):
                return True
        return False

    lowered = 0
    for r in marked:
        for i, f in enumerate(r.findings):
            names = (f.data or {}).get(UNNAMED_USES)
            unread = (f.data or {}).get(UNREAD_GUARD)
            if names and f.severity == "warning" and not any(named_elsewhere(r.path, n) for n in names):
                r.findings[i] = as_info(f, _CONTEXT, _UNNAMED_NOTE.format(" and ".join(f"`{n}`" for n in names)))
                lowered += 1
            elif unread and f.severity == "warning" and not imported_elsewhere(r.path, unread):
                r.findings[i] = as_info(f, _CONTEXT, _UNREAD_GUARD_NOTE.format(", ".join(f"`{n}`" for n in unread)))
                lowered += 1
    return lowered


def apply_unreached_defs(results: list, project: Any) -> int:
    """Findings inside top-level definitions nothing in a ComfyUI node pack reaches, lowered to info (module doc);
    the count lowered."""
    if not any(r.findings for r in results if r.path.endswith(".py")):
        return 0
    host_note, entries = _host(results, project)
    if not host_note:
        return _lower_copies(results, project) + _lower_stale_duplicates(results, project) + \
            lower_unnamed_guarded_uses(results, project) + _lower_passed_programs(results, project) + \
            _lower_unselected_backends(results, project) + _lower_build_files(results, project) + \
            _lower_uncalled_script_defs(results, project) + _lower_uncalled_plain_methods(results, project)
    app = host_note == _APP_NOTE
    # (an application's copied checkouts run only as far as its entries import them, as in any other tree: AnyDoor's
    # DINOv2 checkout, whose evaluation and training programs nothing imports; tq51c)
    copies = _vendored_copies(project)[0] if app else {}
    facts = _pack_facts(results, project, entries, app, copies) if host_note else {}
    if not facts:
        return 0
    words = _config_words(project, results)
    spans = _unreached(facts, words, _unimported_copy_files(project, facts, entries, copies, words) if copies else ())
    if host_note == _NOTE:      # (a node pack: ComfyUI's own modules always import)
        for f in facts.values():
            f["fallbacks"] = f.get("host_fallbacks", [])
    # (an application's own launchers and kernels are the user's to run and build: only its Python is read; a
    # copied checkout's example and test launchers are upstream's, policy (j): tq48b)
    launchers = {rel for rel in _unrun_launchers(project, facts) if _checkout_bench_file(rel, project)} if app else \
        _unrun_launchers(project, facts)
    for rel in () if app else _unbuilt_kernels(results, facts, spans):
        spans[rel] = [(1, _END)]
    for rel, f in facts.items():
        if f.get("unparsed"):
            spans[rel] = [(1, _END)]
    return _lower_spans(results, facts, spans, host_note, launchers)


def _unimported_copy_files(project: Any, facts: dict[str, dict[str, Any]], entries: Collection[str],
                           copies: dict[str, str], words: Collection[str] | None = None) -> set[str]:
    """The files of the copies that no import from the entries loads, transitively (DINOv2's `train/` and `eval/`
    programs beside the backbone PromptDA loads through hubconf.py), unless a loaded file loads modules by a computed
    name. `words` (an application's config words, `_config_words`): a loader of the tree's own code then turns the
    reading off only for copies its configs name; None: for every copy."""
    loaded = _imported_files(project, entries)
    # (a loader by computed names may load any package beside it, so it turns the reading off for its own copy and
    # every other copy; only a copy holding the loader's copy stays read: detectron2's loader in a checkout copied
    # inside SCHP's root leaves that root's reading on (tq49a), while a loader in one sub-project of a monorepo keeps
    # its sibling sub-projects' findings (hi-ml's `hi-ml/` and `hi-ml-cpath/`, lead's merge); a loader of the tree's own
    # code turns it off for every copy its configs name) (a loader of the copy's package, PEFT's `auto.py`, loads the
    # package's modules, never the copy's own tests and examples, which policy (j) keeps out of the entries: tq49b)
    loaders = {_copy_of(rel, copies) or "" for rel in loaded if rel in facts and facts[rel].get("dynamic")}
    # (in an application, a loader of the tree's own code loads what its configs name, `target: ldm.models.X`: a copy
    # whose package no config names, AnyDoor's DINOv2 checkout beside ldm's `instantiate_from_config`, keeps its
    # reading; tq51c. Elsewhere the lead's rule stands: SkyThought's and Tool-N1's verl copies)
    named = set(copies) if words is None else {copy for copy, name in copies.items()
                                               if any(word == name or word.startswith(f"{name}.") for word in words)}
    # (a loader inside the copy loads modules of its packages by dotted names, never a script at the top of a checkout
    # that is no package: Grounded-SAM-2's `grounded_sam2_*_demo.py` programs beside `sam2/`, whose Hydra configs
    # load `sam2.modeling.*`; policy (j), tq53c)
    return {rel for rel in facts if rel not in loaded and (copy := _copy_of(rel, copies))
            and (all(c != copy and c.startswith(copy) or not c and copy not in named for c in loaders)
                 or _bench_file(rel) or "/" not in rel[len(copy):] and f"{copy}__init__.py" not in facts)}


def _lower_copies(results: list, project: Any) -> int:
    """In a tree that no host runs (a research tree, a library): the findings of code inside a copied package
    (`_vendored_copies`) that nothing the tree runs reaches (`_copy_entries`, then `_unreached`), lowered to info;
    code outside the copies, and the files of a copy the tree runs itself (its scripts), are never touched. The count
    lowered."""
    copies, roots = _vendored_copies(project)
    # (a copied repository around a copied package: its own programs beside the package the tree loads; tq59a)
    enclosing = {folder: name for folder, name in _enclosing_checkouts(project, copies).items() if folder not in copies}
    copies = {**copies, **enclosing}
    credited = {folder: name for folder, name in _credited_copies(project).items()
                if not any(folder.startswith(c) or c.startswith(folder) for c in copies)}
    copies = {**copies, **{folder: folder.rstrip("/") for folder in credited}}
    licensed = {folder: name for folder, name in _licensed_copies(project).items()
                if not any(folder.startswith(c) or c.startswith(folder) for c in copies)}
    copies = {**copies, **licensed}
    versioned = {folder: label for folder, label in _versioned_copies(project).items()
                 if not any(folder.startswith(c) or c.startswith(folder) for c in copies)}
    copies = {**copies, **{folder: label.split(" ", 1)[0] for folder, label in versioned.items()}}
    credited = {**credited, **licensed, **versioned}
    if not copies or not any(r.findings for r in results if r.path.endswith(".py") and r.path.startswith(tuple(copies))):
        return 0
    swept: set[str] = set()
    words = _config_words(project, results, tuple(copies), swept)
    # (a program a sweep configuration of the tree runs is the tree's own: tq56c)
    base = _copy_entries(project, copies, credited)
    entries = base | swept
    facts = _pack_facts(results, project, entries)
    if not facts:
        return 0
    for rel in entries:         # a script of the tree's own (or one its shell scripts run) runs its `__main__` block
        facts[rel]["script"] = True
    # a copy's module that no import from the entries loads, transitively, runs nothing (DINOv2's `train/` and `eval/`
    # programs beside the backbone PromptDA loads through hubconf.py), unless a loaded file loads modules by a
    # computed name
    unimported = _unimported_copy_files(project, facts, entries, copies)
    if swept - base:
        # (a sweep's program runs its own project folder: what it loads, by computed names too, opens only that
        # folder's reading; the other copies keep the reading of the tree's other entries)
        own = {_copy_of(rel, copies) for rel in swept}
        unimported = {rel for rel in unimported if _copy_of(rel, copies) in own} | \
            {rel for rel in _unimported_copy_files(project, facts, base, copies) if _copy_of(rel, copies) not in own}
    # (only files of the copies the tree does not run itself: a script of a copy's checkout keeps its findings)
    spans = {rel: found for rel, found in _unreached(facts, words, unimported).items()
             if rel.startswith(tuple(copies)) and rel not in entries}
    # a copy's notebooks are upstream's examples, which nothing in the tree runs (policy (j); tq48b: Matcha-TTS's
    # `synthesis.ipynb` in LLaMA-Omni2's `third_party/`)
    for r in results:
        copy = next((c for c in copies if r.path.startswith(c)), None) if r.path.endswith(".ipynb") else None
        if copy is not None and r.findings:
            spans[r.path] = [(1, _END)]
    # a copy's container and CI recipes are upstream's: nothing in the tree builds them unless its own launch files or
    # shell scripts name them (Grounded-SAM-2's and GroundingDINO's Dockerfiles, mmyolo's `.circleci/docker/`; policy
    # (j), tq53c)
    # (and the environment files of a checkout nested inside a copy, also one that is a copy itself: the
    # `stable_diffusion/environment.yaml` inside a copied Instruct-Pix2Pix repository, tq59a; DROID-SLAM's `environment.yaml` in a copied
    # benchmark's `third_party/`, which the tree builds with `python setup.py install`, never `conda env create`; the
    # copy's own top-level requirements are what a user installs with it; policy (j), tq55c)
    recipes = {r.path: copy for r in results if r.findings and (copy := _copy_of(r.path, copies)) is not None
               and (_LAUNCH_FILE.search(r.path) or "/.circleci/" in f"/{r.path[len(copy):]}"
                    or _ENV_FILE.search(r.path) and ("/" in r.path[len(copy):]
                                                     or any(c != copy and copy.startswith(c) for c in enclosing)))}
    built = _named_recipes(project, recipes, tuple(copies)) if recipes else set()
    for rel in recipes.keys() - built:
        spans[rel] = [(1, _END)]
    paths = getattr(project, "paths", {})
    notes = {}
    for rel in spans:
        copy = _copy_of(rel, copies) or ""
        name = copies.get(copy, "")
        if copy in versioned:
            note, name = _VERSIONED_NOTE, versioned[copy].split(" ", 1)[-1]
        elif copy in licensed:
            note, name = _LICENSED_NOTE, licensed[copy]
        elif copy in credited:
            note, name = _CREDITED_NOTE, credited[copy]
        elif copy in enclosing:
            note = _ENCLOSING_NOTE
        elif copy in roots:
            note = _SOURCE_ROOT_NOTE
        elif f"{copy}__init__.py" in paths and copy.rstrip("/").rsplit("/", 1)[-1] != name:
            note = _RENAMED_NOTE
        else:
            note = _VENDORED_NOTE
        notes[rel] = note.format(copy.rstrip("/"), name)
    return _lower_spans(results, {rel: {} for rel in spans}, spans, notes, set())


_ENV_FILE = re.compile(r"(?:^|/)(?:requirements[\w.-]*\.txt|environment[\w.-]*\.ya?ml|conda[\w.-]*\.ya?ml)$")
_RECIPE_NAMERS = re.compile(r"(?:^|/)(?:Makefile|[\w.-]+\.(?:sh|bash|mk))$")
_PATHS_FACT = "spelled_paths"           # a launch file's or script's words holding a `/` (`_named_recipes`), kept in its summary
_PATH_WORD = re.compile(rb"[^\s\"'`;|&()<>=]*/[^\s\"'`;|&()<>=]*")


def _named_recipes(project: Any, recipes: dict[str, str], copies: tuple[str, ...]) -> set[str]:
    """The copies' recipes (path -> its copy) that a launch file or shell script outside the copies names by their
    path below the copy's parent folder (`docker build -f groundingsam2/Dockerfile .`). What each file spells is kept
    in its summary: a warm run reads no file for it."""
    from auditor.source import SourceError
    from auditor.static.project_imports import read_counted

    def read(path: Any) -> list[str] | bool:
        try:
            text = read_counted(project, path, _CONFIG_BYTES, prefix=True)
        except (OSError, SourceError):
            return False
        return sorted({w.decode("utf-8", "replace") for w in _PATH_WORD.findall(text)})

    spelled = {rel: rel[len(copy.rstrip("/").rpartition("/")[0]):].lstrip("/") for rel, copy in recipes.items()}
    # (the root README's commands too: `pip install -r third_party/X/requirements.txt`)
    readme = _readme_facts(project)["paths"]
    out: set[str] = {recipe for recipe, tail in spelled.items() if any(tail in word for word in readme)}
    summaries = getattr(project, "summaries", {})
    for rel, path in getattr(project, "paths", {}).items():
        if rel.startswith(copies) or not (_LAUNCH_FILE.search(rel) or _RECIPE_NAMERS.search(rel)):
            continue
        words = kept_fact(summaries.get(rel), _PATHS_FACT, lambda held: isinstance(held, list) or held is False,
                          lambda: read(path), getattr(project, "changed", set()), rel)
        if words:
            out.update(recipe for recipe, tail in spelled.items() if any(tail in word for word in words))
    return out


# tq51a: programs of a package whose siblings the tree's launches run (ZeroGUI's OpenRLHF copy: its scripts run
# `python3 -m openrlhf.cli.train_ppo_ray`, never `openrlhf.cli.train_dpo`; verl's `fsdp_sft_trainer` beside the
# launched `verl.trainer.main_ppo`)
_PASSED_NOTE = ("nothing this tree runs reaches it: `{}` is a program of `{}` that none of the tree's launches runs "
                "(they run `{}`) and no file names; port it if you run it")
_PASSED_DEF_NOTE = ("nothing this tree runs reaches it: only {} name `{}`, programs of `{}` that none of the tree's "
                    "launches runs; port it if you run them")
_TEXT_SUFFIXES = (".py", ".sh", ".bash", ".md", ".rst", ".txt", ".yaml", ".yml", ".json", ".toml", ".cfg", ".ini",
                  ".ipynb")
_TEXT_NAMES = re.compile(r"(?:^|/)(?:[\w.-]*Dockerfile[\w.-]*|Makefile|Procfile)$")
_IDENT = re.compile(rb"[A-Za-z_]\w*")
_PROGRAM_FOLDER = 3             # programs (modules with a `__main__` block) in a folder the launches choose from
_DOC_SUFFIXES = (".md", ".rst", ".markdown")


_WORDS_FACT = "passed_words"            # a text file's identifiers (`_tree_words`), kept in its summary
_DEFS_FACT = "passed_defs"              # a Python file's top-level definitions (`_top_definitions`), kept likewise


def _tree_words(project: Any) -> dict[str, set[str]]:
    """Each text file of the tree (code, scripts, docs, configs; the first _CONFIG_BYTES) -> the identifiers it spells."""
    from auditor.source import SourceError
    from auditor.static.project_imports import read_counted

    def read(path: Any) -> list[str] | None:
        try:
            return sorted({w.decode() for w in _IDENT.findall(read_counted(project, path, _CONFIG_BYTES, prefix=True))})
        except (OSError, SourceError):
            return None

    out: dict[str, set[str]] = {}
    summaries = getattr(project, "summaries", {})
    for rel, path in getattr(project, "paths", {}).items():
        if rel.lower().endswith(_TEXT_SUFFIXES) or _TEXT_NAMES.search(rel):
            # (kept in the file's summary: a warm run reads no file for it)
            held = kept_fact(summaries.get(rel), _WORDS_FACT, lambda held: isinstance(held, list) or held is False,
                             lambda: read(path) or False, getattr(project, "changed", set()), rel)
            if held is not False:
                out[rel] = set(held)
    # the docs beside the audited files (a README's `python -m pkg.cli.x` line): the audit discovers no Markdown
    folders = {folder for rel, path in getattr(project, "paths", {}).items() if isinstance(path, Path)
               for folder in (path.parent, path.parents[rel.count("/")])}      # (and the root)
    for folder in folders:
        try:
            docs = [p for p in folder.iterdir() if p.suffix.lower() in _DOC_SUFFIXES and p.is_file()]
        except OSError:
            continue
        for doc in docs:
            try:
                data = read_counted(project, doc, _CONFIG_BYTES, prefix=True)
            except (OSError, SourceError):
                continue
            out[str(doc)] = {w.decode() for w in _IDENT.findall(data)}
    return out


def _program_copies(project: Any) -> set[str]:
    """The folders holding another project's package whose programs a launch may pass over: the vendored copies and
    copied source roots (`_vendored_copies`), and a checkout one level down that installs the package named like it
    (Tool-N1's `verl/` holding `setup.py` and `verl/verl`, installed with `cd verl && pip install -e .`). A root
    folder the README credits is no such copy: one whose programs the tree launches is the tree's own package
    (`_credited_copies`, review51 item 2), so ZeroGUI's credited `openrlhf/`, launched by its scripts, keeps its
    trainers' findings."""
    paths = getattr(project, "paths", {})
    out = set(_vendored_copies(project)[0])
    installs = {rel.split("/")[0] for rel in paths
                if rel.count("/") == 1 and rel.endswith(("/setup.py", "/pyproject.toml"))}
    for rel in paths:
        parts = rel.split("/")
        if parts[-1] == "__init__.py" and parts[0] in installs and len(parts) in (3, 4) \
                and parts[1:-2] in ([], ["src"]) and _fold(parts[-2]) == _fold(parts[0]):
            out.add(f"{parts[0]}/")
    return out


def _passed_programs(project: Any, words: Callable[[], dict[str, set[str]]]) -> dict[str, tuple[str, str]]:
    """The programs of a package that the tree's launches pass over (tq51a, policy (j)): in a tree no one installs
    (`_library`), a shell or container launch runs `python -m pkg.cli.x` (a module of a package folder), and a sibling
    module of that folder with its own `__main__` block is run by no launch and named by no other file of the tree (its
    stem as a word: no import, no `-m` string, no README line). File -> (package folder, a launched sibling)."""
    paths = getattr(project, "paths", {})
    modules = {m for script in _shell_facts(project).values() for m in script.get("modules", ())}
    launched = {m.replace(".", "/") for m in modules if "." in m}
    if not launched or _library(project):
        return {}
    python = [rel for rel in paths if rel.endswith(".py")]
    folders: dict[str, str] = {}        # package folder -> a launched module in it
    for rel in python:
        folder, _, base = rel.rpartition("/")
        if folder and f"{folder}/__init__.py" in paths and base not in ("__init__.py", "__main__.py") \
                and _launched(rel, launched):
            folders.setdefault(folder, rel.removesuffix(".py").replace("/", "."))
    # only in a package the tree carries as a copy: the tree's own `__main__` blocks are its programs (policy (s))
    copies = _program_copies(project) if folders else set()
    folders = {folder: m for folder, m in folders.items() if _copy_of(f"{folder}/", copies) is not None}
    candidates = {rel: folder for rel in python for folder in [rel.rpartition("/")[0]]
                  if folder in folders and rel.rpartition("/")[2] not in ("__init__.py", "__main__.py")
                  and (project.facts(rel) or {}).get("main")}
    # a folder of programs the launches choose among holds three at least (OpenRLHF's `cli/`, verl's `trainer/`); a
    # package with one launched module beside its own launcher (`evaluate.py` run by a script, `launch.py` run by
    # hand) is one program's (tq50c's review50 item 2 test)
    programs = {folder: sum(1 for c in candidates.values() if c == folder) for folder in folders}
    candidates = {rel: folder for rel, folder in candidates.items() if programs[folder] >= _PROGRAM_FOLDER}
    every = _shell_launches(project) | (_container_launches(project) if candidates else set())
    candidates = {rel: folder for rel, folder in candidates.items() if not _launched(rel, every)}
    if not candidates:
        return {}
    texts = words()
    out = {}
    for rel, folder in candidates.items():
        stem = rel.rsplit("/", 1)[-1].removesuffix(".py")
        if not any(stem in found for other, found in texts.items() if other != rel):
            out[rel] = (folder.replace("/", "."), folders[folder])
    return out


def _top_definitions(project: Any, rel: str) -> dict[str, list[Any]]:
    """A Python file's facts for `_lower_passed_programs`, kept in its summary: `defs`, its top-level functions and
    classes [name, first line, last line] that the module does not use outside their span; `used`, the names its
    statements other than imports and `__all__` spell (a package `__init__.py` naming a class only there re-exports
    it: it runs nothing)."""
    from auditor.source import SourceError
    from auditor.static.project_imports import read_counted

    try:
        text = read_counted(project, getattr(project, "paths", {}).get(rel)).decode("utf-8", errors="replace")
        tree = ast.parse(text)
    except (OSError, SourceError, SyntaxError, ValueError):
        return {"defs": [], "used": []}
    source = text.splitlines()
    defs = []
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            first, last = line_span(node)
            if not re.search(rf"\b{re.escape(node.name)}\b", "\n".join(source[:first - 1] + source[last:])):
                defs.append([node.name, first, last])       # (one its own module uses is left out)
    used = {n.id if isinstance(n, ast.Name) else n.attr if isinstance(n, ast.Attribute) else n.value
            for node in tree.body if not isinstance(node, (ast.Import, ast.ImportFrom)) and not _all_list(node)
            for n in walk_list(node) if isinstance(n, (ast.Name, ast.Attribute))
            or isinstance(n, ast.Constant) and isinstance(n.value, str)}
    return {"defs": defs, "used": sorted(used)}


def _lower_passed_programs(results: list, project: Any) -> int:
    """Outside hosted trees: the findings of the programs `_passed_programs` finds, and of the top-level definitions
    of other files that only those programs name (their trainers: `DPOTrainer`, named by `train_dpo.py` and re-exported
    by its package's `__init__.py`), lowered to info. The count lowered. Each file's words and definitions come from
    facts kept in its summary (a warm run reads no file for them)."""
    if not any(r.findings for r in results if r.path.endswith(".py")):
        return 0
    cache: dict[str, dict[str, set[str]]] = {}

    def words() -> dict[str, set[str]]:
        if "w" not in cache:
            cache["w"] = _tree_words(project)
        return cache["w"]

    passed = _passed_programs(project, words)
    if not passed:
        return 0
    spans: dict[str, list[tuple[int, int, str]]] = {
        rel: [(1, _END, _PASSED_NOTE.format(rel.rsplit("/", 1)[-1], package, sibling))]
        for rel, (package, sibling) in passed.items()}
    summaries = getattr(project, "summaries", {})
    changed: set[str] = getattr(project, "changed", set())

    def definitions(rel: str) -> dict[str, list[Any]]:
        return kept_fact(summaries.get(rel), _DEFS_FACT, lambda held: isinstance(held, dict) and "used" in held,
                         lambda: _top_definitions(project, rel), changed, rel)

    for r in results:
        lines = {f.line for f in r.findings if f.severity != "info"}
        if not r.path.endswith(".py") or r.path in passed or not lines:
            continue
        for name, first, last in definitions(r.path)["defs"]:
            if not any(first <= line <= last for line in lines):
                continue
            namers = {other for other, found in words().items() if other != r.path and name in found
                      and not (other.endswith("/__init__.py") and name not in definitions(other)["used"])}
            if namers and namers <= passed.keys():
                spans.setdefault(r.path, []).append((first, last, _PASSED_DEF_NOTE.format(
                    " and ".join(f"`{n.rsplit('/', 1)[-1]}`" for n in sorted(namers)), name,
                    passed[min(namers)][0])))
    lowered = 0
    for r in results:
        for i, finding in enumerate(r.findings):
            if finding.severity == "info" and (finding.data or {}).get("context"):
                continue        # another pass's reason stays
            note = next((n for first, last, n in spans.get(r.path, ()) if first <= finding.line <= last), None)
            if note:
                r.findings[i] = as_info(finding, _CONTEXT, note)
                lowered += 1
    return lowered


def _lower_spans(results: list, facts: dict[str, dict[str, Any]], spans: dict[str, list[tuple[int, int]]],
                 host_note: str | dict[str, str], launchers: Collection[str]) -> int:
    """Lowers to info the findings inside `spans` (or a file's availability probes, or a launcher nothing runs) that no
    other pass lowered with its own reason; `host_note` says why, for the tree or per file. The count lowered."""
    lowered = 0
    for r in results:
        inside = spans.get(r.path, [])
        probes = facts.get(r.path, {}).get("probes", [])
        fallbacks = facts.get(r.path, {}).get("fallbacks", [])
        if not (inside or probes or fallbacks or r.path in launchers) or not r.findings:
            continue
        for i, finding in enumerate(r.findings):
            if finding.severity == "info" and (finding.data or {}).get("context"):
                continue        # another pass's reason stays (`overridden-default`, `other-backend`, ...)
            missing = facts.get(r.path, {}).get("missing")
            unreached = _UNPARSED_NOTE if facts.get(r.path, {}).get("unparsed") else \
                host_note if isinstance(host_note, str) else host_note.get(r.path, "")
            note = _LAUNCHER_NOTE if r.path in launchers else \
                (_MISSING_NOTE.format(", ".join(missing)) if missing else unreached) \
                if any(first <= finding.line <= last for first, last in inside) else \
                _PROBE_NOTE if any(first <= finding.line <= last for first, last in probes) else \
                next((_HOST_FALLBACK_NOTE.format(module) for first, last, module in fallbacks
                      if first <= finding.line <= last), None)
            if note:
                r.findings[i] = as_info(finding, _CONTEXT, note)
                lowered += 1
    return lowered


# tq54a: backends a switch never selects (auditor/static/backend_switches.py; heldout70's xingtian: Vega's `zeus`)
_BACKEND_NOTE = ("nothing this tree runs reaches it: `{}` selects a backend by name, and every call in the tree selects "
                 "{}; port it if you run the other backend")
_BACKEND_MODULE_NOTE = ("nothing this tree runs reaches it: only arms of backend switches that the tree never selects "
                        "import this module; port it if you run the other backend")
_ROUNDS = 8         # the fixed point's rounds: a value handed through a setter, the environment and a forwarder


def _lower_unselected_backends(results: list, project: Any) -> int:
    """Findings in the arms of backend switches that every call of the tree turns the other way, in the branches of
    their predicates that never run, and in the modules only such arms import (backend_switches), lowered to info
    (policy (j)). Read from the files' tree facts; only the files naming a switch or a predicate are read again
    (`_Sources`, kept in their summaries). The count lowered."""
    from auditor.static.backend_switches import switch_uses
    from auditor.static.module_paths import absolute_module, module_names
    from auditor.static.project_imports import held_tree

    python = [rel for rel in getattr(project, "paths", {}) if rel.endswith(".py")]
    held = {rel: found for rel in python if (found := (held_tree(project, rel) or {}).get("switches"))}
    defs = {d[0]: (rel, d) for rel, found in held.items() for d in found.get("defs", ())}
    if not defs:
        return 0
    preds = {p[0]: (p[1], p[2]) for found in held.values() for p in found.get("preds", ())}
    sources = _Sources(project)
    switches: dict[str, list[Any]] = {name: d[:4] for name, (_, d) in defs.items()}
    calls: dict[str, list[tuple[str, list[Any]]]] = {}
    todo, seen = list(switches), set()
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        spec = switches[name]
        for rel in python:
            if not sources.has(rel, name):
                continue
            for call in sources.memo(rel, f"switch:{name}", spec, lambda tree: switch_uses(tree, [spec], [])["calls"]):
                calls.setdefault(name, []).append((rel, call))
                if call[2] == "fwd" and call[3] not in switches:
                    switches[call[3]] = [call[3], *call[4:7]]
                    todo.append(call[3])
    arms: dict[str, list[tuple[str, int, int]]] = {}    # file -> (predicate or !predicate, first, last)
    imports: dict[str, list[list[Any]]] = {}
    names = sorted(preds)
    for rel in python:
        if rel in held or any(sources.has(rel, p) for p in names):
            uses = sources.memo(rel, "switch_arms", names, lambda tree: switch_uses(tree, [], names))
            arms[rel] = [tuple(a) for a in uses["arms"]]
            imports[rel] = uses["imports"]
    values, env = _switch_values(defs, switches, calls, held, preds)
    dead: dict[str, list[tuple[int, int]]] = {}
    why: dict[str, str] = {}
    for name, (rel, d) in defs.items():
        known = values.get(name) or set()
        for value, first, last in d[4] if known else ():
            if value not in known:
                dead.setdefault(rel, []).append((first, last))
                why[f"{rel}:{first}"] = _BACKEND_NOTE.format(name, " / ".join(sorted(map(repr, known))))
    for rel, listed in arms.items():
        for pred, first, last in listed:
            key, value = preds[pred.lstrip("!")]
            seen_values = env.get(key)
            if seen_values and (value not in seen_values if not pred.startswith("!") else seen_values == {value}):
                dead.setdefault(rel, []).append((first, last))
                why[f"{rel}:{first}"] = _BACKEND_NOTE.format(pred.lstrip("!"), " / ".join(sorted(map(repr, seen_values))))
    if not dead:
        return 0
    modules = module_names(python)
    files = {name: rel for rel, name in modules.items()}

    def targets(rel: str, level: int, module: str, imported: list[str]) -> set[str]:
        base = absolute_module(module, level, modules.get(rel, ""), rel.endswith("__init__.py"))
        found = {files[f"{base}.{n}"] for n in imported if f"{base}.{n}" in files}
        return found or ({files[base]} if base in files else set())

    dead_imports: dict[str, Counter] = {}
    for rel, found_spans in dead.items():
        for line, level, module, imported in imports.get(rel, ()):
            if any(first <= line <= last for first, last in found_spans):
                for target in targets(rel, level, module, imported):
                    dead_imports.setdefault(rel, Counter())[target] += 1
    candidates = {t for counted in dead_imports.values() for t in counted}
    importers: dict[str, Counter] = {}
    for rel in python:
        for load in (project.facts(rel) or {}).get("load", ()):
            spelled = str(load[0])
            module = spelled.lstrip(".")
            for target in targets(rel, len(spelled) - len(module), module, list(load[1] or ())) & candidates:
                importers.setdefault(target, Counter())[rel] += 1
    unrun: set[str] = set()
    changed = True
    while changed:
        changed = False
        for target in candidates - unrun:
            if (project.facts(target) or {}).get("main"):
                continue
            if all(by in unrun or dead_imports.get(by, Counter())[target] >= n for by, n in importers.get(target, {}).items()):
                unrun.add(target)
                changed = True
    spans = {rel: list(found) for rel, found in dead.items()}
    notes = {}
    for rel in unrun:
        spans[rel] = [(1, _END)]
        notes[rel] = _BACKEND_MODULE_NOTE
    for rel, found in dead.items():
        if rel not in unrun:
            notes[rel] = next(why[k] for k in why if k.startswith(f"{rel}:"))
    return _lower_spans(results, {rel: {} for rel in spans}, spans, notes, set())


def _switch_values(defs: dict[str, tuple[str, list[Any]]], switches: dict[str, list[Any]],
                   calls: dict[str, list[tuple[str, list[Any]]]], held: dict[str, dict[str, Any]],
                   preds: dict[str, tuple[str, str]]) -> tuple[dict[str, set[str] | None], dict[str, set[str] | None]]:
    """The values each switch (and forwarder) receives and each environment variable holds, to a fixed point from
    the calls and stores the selected arms run; None where unknown (a call with another value, no call at all, a
    store of a computed value)."""
    values: dict[str, set[str] | None] = {name: set() for name in switches}
    env: dict[str, set[str] | None] = {}
    for _ in range(_ROUNDS):
        old = (repr(values), repr(env))
        env = {}
        for rel, found in held.items():
            for key, value, line in found.get("stores", ()):
                if _in_dead_arm(defs, values, rel, line):
                    continue
                stored = env.get(key, set())
                env[key] = None if value is None or stored is None else stored | {value}
        for name in switches:
            got: set[str] | None = set()
            for rel, call in calls.get(name, ()) or [("", [name, 0, "?"])]:
                if got is None or _in_dead_arm(defs, values, rel, call[1]):
                    continue
                kind = call[2]
                more = {call[3]} if kind == "c" else \
                    env.get(call[3]) if kind == "env" else values.get(call[3]) if kind == "fwd" else None
                if more is not None and kind == "env" and call[4]:
                    more = {getattr(v, call[4])() for v in more}
                got = None if more is None else got | more
            values[name] = got
        if (repr(values), repr(env)) == old:
            break
    return values, env


def _in_dead_arm(defs: dict[str, tuple[str, list[Any]]], values: dict[str, set[str] | None], rel: str,
                 line: int) -> bool:
    for name, (where, d) in defs.items():
        known = values.get(name)
        if where == rel and known is not None and \
                any(first <= line <= last and value not in known for value, first, last in d[4]):
            return True
    return False


# tq53a: a saved module of another package outside any package of the tree (was in neutral_uses.py)
def imported_names(project: Any) -> set[str]:
    """Every dotted component and every `from` name of the imports of the tree's Python files (cached facts)."""
    named: set[str] = set()
    for rel in getattr(project, "paths", ()):
        if rel.endswith(".py"):
            for load in (project.facts(rel) or {}).get("load", ()):
                if load and load[0]:
                    named.update(str(load[0]).split("."))
                    named.update(str(n) for n in (load[1] if len(load) > 1 else ()) or ())
    return named


_COPY_NOTE = ("a module saved from the {package} package outside any package of this tree: nothing imports or runs "
              "it here (policy (j)); port it where {package} itself is ported")
# how many distinct submodules of one outside package mark a file as that package's own module
_UPSTREAM_IMPORTS = 3


def _upstream_package(loads: list, held: set[str]) -> str | None:
    """The outside package a module was written inside: at least `_UPSTREAM_IMPORTS` absolute imports of distinct
    submodules two levels deep (`sglang.srt.models.deepseek_v2`, `sglang.srt.layers.linear`) of one package the tree
    does not hold."""
    deep: dict[str, set[str]] = {}
    for load in loads:
        module = str(load[0]) if load and load[0] else ""
        parts = module.split(".")
        if len(parts) >= 3 and not module.startswith(".") and parts[0] not in held:
            deep.setdefault(parts[0], set()).add(module)
    return next((p for p, mods in sorted(deep.items()) if len(mods) >= _UPSTREAM_IMPORTS), None)


def lower_upstream_module_copies(results: list, project: Any = None) -> None:
    """Findings of a saved copy of another package's module to info (tq53a, moved here from neutral_uses by tq55a; heldout67's easyr1-npu: SGLang's
    `deepseek_v4.py` kept as `v4_real_truth/sglang_deepseek_v4.py` beside the port's scripts, importing
    `sglang.srt.models.deepseek_v2`, `sglang.srt.layers...`). Such a file sits in a folder with no `__init__.py`
    (no package of the tree), has no `__main__` block, is named by no import of the tree (any dotted component or
    `from` name) nor by a shell launch, and imports at least three submodules of one package the tree does not
    hold: Python imports that package's module from the installed package, never this file, so nothing here runs
    it (policy (j): copied code nothing runs is info). Read from the cached facts (a warm run reads nothing)."""
    if project is None or not results:
        return
    paths = list(getattr(project, "paths", ()))
    folders_with_init = {rel.rsplit("/", 1)[0] if "/" in rel else "" for rel in paths if rel.endswith("__init__.py")}
    # the importable names the tree holds: its packages (a folder with `__init__.py`) and its modules
    held = {folder.rsplit("/", 1)[-1] for folder in folders_with_init} | \
        {rel.rsplit("/", 1)[-1].removesuffix(".py") for rel in paths if rel.endswith(".py")}
    named: set[str] | None = None
    for r in results:
        rel = r.path
        name = rel.rsplit("/", 1)[-1]
        if not rel.endswith(".py") or not any(f.severity != "info" for f in r.findings) or \
                (rel.rsplit("/", 1)[0] if "/" in rel else "") in folders_with_init or \
                name.startswith("test_") or name.endswith("_test.py") or name == "conftest.py":
            continue
        facts = project.facts(rel) or {}
        package = None if facts.get("main") else _upstream_package(list(facts.get("load") or ()), held)
        if package is None:
            continue
        if named is None:
            named = imported_names(project) | _launched_names(project, paths)
        if name.removesuffix(".py") in named:
            continue
        note = _COPY_NOTE.format(package=package)
        r.findings = [as_info(f, "upstream-copy", note) if f.severity != "info" else f for f in r.findings]


def _launched_names(project: Any, paths: list[str]) -> set[str]:
    """The file stems and modules the tree's shell scripts launch (`python x.py`, `python -m pkg.mod`)."""
    out: set[str] = set()
    for rel in paths:
        if rel.endswith(".sh"):
            facts = project.facts(rel) or {}
            out.update(str(entry[-1]).removesuffix(".py") for entry in facts.get("launch") or () if entry)
            out.update(part for module in facts.get("modules") or () for part in str(module).split("."))
    return out


# tq56b: `self.n_gpus = torch.cuda.device_count()` in VL-T5's datasets, an attribute no file of the tree reads
_UNREAD_ATTRIBUTE_NOTE = ("nothing in this tree reads `.{}`, the attribute this value is stored in (its file never "
                          "reads it and no other file names it), so it selects nothing")


def lower_unread_attributes(results: list, project: Any) -> int:
    """Device findings in the value of an attribute store that its file never reads (host_scopes marks them with
    the attribute's name), lowered to info when no other Python file of the tree names the attribute either (a file
    that only stores it the same way reads nothing); the count lowered. The word tests are kept in the files'
    summaries (`_Sources.has`): a warm run reads nothing for them."""
    from auditor.findings import lower_findings
    from auditor.static.host_scopes import UNREAD_ATTRIBUTE

    marked: dict[str, set[str]] = {}
    for r in results:
        for f in r.findings:
            if isinstance(f.data.get(UNREAD_ATTRIBUTE), str):
                marked.setdefault(f.data[UNREAD_ATTRIBUTE], set()).add(r.path)
    if not marked:
        return 0
    sources = _Sources(project)
    unread = {attr for attr, owners in marked.items()
              if not any(sources.has(rel, attr) for rel in sources if rel not in owners)}
    if not unread:
        return 0

    def why(f: Any) -> tuple[str, str] | None:
        attr = f.data.get(UNREAD_ATTRIBUTE)
        return ("unread-attribute", _UNREAD_ATTRIBUTE_NOTE.format(attr)) \
            if attr in unread and f.severity != "info" else None

    return sum(lower_findings(r, why) for r in results if r.findings)
