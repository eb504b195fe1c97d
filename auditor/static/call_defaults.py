"""Device and dtype parameter defaults of building blocks that every caller in the tree overrides (t11o, issue 11;
tuned on heldout10).

`class DownSampler(nn.Module): def __init__(self, channels, ..., device: str = "cuda:0", dtype=torch.float16)` whose
every construction in the tree hands on the builder's own device, `DownSampler(128, device=device, dtype=dtype)` in
the `__init__(self, ..., device, dtype)` of the model that owns it (a diffusion engine's blocks, built by their
model): the block's default is never used; the model's own default, where it has one, is the finding that stays
(host_scopes drops a default the function never reads; this is the tree-wide half: a default no caller lets
through).

Per file, in the worker (project_imports.with_facts, key `calls` of the summary, kept in the cache entry):
- `defaults`: the spans of defaults of `__init__` parameters named for a device or a dtype (`device`, `dtype`,
  `torch_dtype`, `precision`, `*_device`) of top-level classes, with the class name and the parameter's position;
- `calls`: for each name the file calls bare (`DownSampler(...)`, `module.Block(...)` through an imported module,
  `cls(...)` in a method of the class), the distinct argument
  shapes: the positions and device / dtype keywords passed a forwarded value (a parameter of the calling function or
  `self.<attr>`; a literal or a local such as a launcher's `device = torch.device("cuda")` is a choice made at the
  call, not an override), and `*args` / `**kwargs`; a subclass (its `super().__init__(...)`, or no `__init__` of
  its own) is an unknown caller: subclasses are built elsewhere, often by name (nnU-Net's trainer variants);
- `refs`: names handed on as values (`{"flux": FluxDiT}`, `partial(Block, ...)`, `cls = Block`): unknown callers.

Per run (drop_overridden_defaults; the name is kept, nothing is dropped since t11s): a finding of category device or
precision inside such a default is REPORTED AT INFO (docs/precision.md Judgement policy (f), the lead's decision,
session 12) when the class or function has call sites outside tests and examples, every call site in the tree
overrides the parameter and no file hands it on as a value; the message says every caller in this tree passes the
argument and the default matters to callers outside it. Why info and not dropped: the recall splits count such a
default (docs/recall.md policy item 7: a port changes the default; test13 figconvnet's `_radius_search_warp(...,
device: str = "cuda")`, test12 olmo-core's mxfp8 `out_dtype: torch.bfloat16`), while the line neither fails nor
differs on Ascend for this tree (so not error / warning).

Classes (t11o): a construction overrides when it hands on its caller's own value (a parameter or `self.<attr>`), or
(pd17) passes any name, a local or a global (`device = mm.get_torch_device()`; a CUDA choice there is reported where
the name is set); a literal keeps the default's severity. In a ComfyUI node pack, calls in `__main__` blocks are not
callers (ComfyUI runs no file of the pack as a script); elsewhere they are.

Flag branches (pd17, `lower_unswitched_flags`): the body of `if flag:` where `flag` is a parameter defaulting to a
false constant that no call in the tree turns on (context `flag-off`, info). Optional hooks (pd17,
`lower_unset_attribute_branches`): the body of `if hasattr(self, "X") and self.X is not None:` where no file of the
tree may set X (context `unset-attribute`, info). Class flags (pd40, `lower_self_flag_branches`): a block that runs
only when `self.X` holds, in a class that sets `self.X` only to a false constant and that nothing else in the tree turns
on (context `flag-never-set`, info). Switches handed on (tq47a, `lower_forwarded_flags`): both readings followed through
the parameters and `self.X` attributes that pass a switch along (`Synthesizer(use_cuda=False)` -> `self.use_cuda` ->
`synthesis(use_cuda=self.use_cuda)` -> `numpy_to_torch(x, cuda=use_cuda)`), to a fixed point (context `flag-off`).
Module functions (t11q's shapes, t11s): a top-level function, undecorated or only under wrappers that neither register
nor replace it (`_plain`; tq40: Streamlit's `@st.cache_resource`), whose call overrides when it passes the
parameter with any value (a keyword, or enough positional arguments before any `*`); a CUDA value written at the
call is that call's own finding. A public entry point (called from nowhere in the tree, or only from tests and
examples), a callable handed on as a value, or a decorated function (a decorator may wrap or register it) keeps its
default at its own severity (a launcher's `run_training(..., device=torch.device("cuda"))` called from nowhere).
"""
from __future__ import annotations

import ast
import builtins
import re
from typing import Any

from auditor.astnodes import is_main_guard, node_span, scope_nodes, walk_list
from auditor.static.backends import as_info
from auditor.static.unreached_defs import _WRAPPERS, _decorator_name, comfy_node_pack
from auditor.static.astutil import ast_dotted, import_bound_names, module_nodes, self_attr
from auditor.static.attribute_sets import false_constant as _false_constant
from auditor.static.attribute_sets import may_set as _binds

# `map_location` is torch.load's device argument, handed on (`def load_checkpoint(path, map_location="cuda")`, t17d);
# tq56e: NPU038's CUDA switches choose the device too (LAVIS' `def prepare_sample(samples, cuda_enabled=True)`, whose
# task loops pass `cuda_enabled=cuda_enabled`)
_SWITCHES = r"^(?:use_cuda|enable_cuda|cuda_enabled)$"
_SWITCH = re.compile(_SWITCHES, re.IGNORECASE)
_PARAM = re.compile(r"(?i)^(?:\w+_)?(?:device|dtype|precision)(?:_\w+)?$|^torch_dtype$|^map_location$|" + _SWITCHES)
_BUILTINS = frozenset(dir(builtins))
_NOT_VALUES = frozenset({"isinstance", "issubclass", "type", "getattr", "hasattr", "super", "print", "repr", "str"})
# a caller whose own code is not what a port runs: tests, examples, demos and docs
_SIDE = re.compile(r"(?:^|/)(?:tests?|testing|examples?|demos?|docs?|benchmarks?)/|(?:^|/)test_[^/]*\.py$"
                   r"|_test\.py$|(?:^|/)conftest\.py$")
_FACT_DEFAULTS, _FACT_CALLS, FACT_REFS = "defaults", "calls", "refs"
# pd17: calls inside `if __name__ == "__main__":` blocks; `if flag:` branches of parameters defaulting to a false
# constant; keyword -> whether some call of the file passes it a value other than a false constant
_FACT_MAIN_CALLS, _FACT_FLAGS, _FACT_SWITCHES = "main_calls", "flags", "switches"
_FACT_OPTIONAL = "optional_attrs"      # `if hasattr(self, "X") and self.X is not None:` bodies
_FACT_AUTOCASTS = "autocasts"           # pd27: autocasts whose `enabled` is always off (`_autocasts`)
# pd29: the names the file may set to something other than a false constant, those it sets only to one
# (`_setting_names`), and what it takes from other modules by name (`_imported_names`), read per run without the file
_FACT_SETS, _FACT_SETS_OFF, FACT_IMPORTS = "sets", "sets_off", "imports"
FACT_UNPARSED = "unparsed"             # the file did not parse: the passes above read it as before
# pd31: attributes the file may set on an object from outside its class (`pipe.isHalf = True`, `setattr(o, "isHalf",
# v)`: ".X") or in a subclass (`self.isHalf = x` in `class B(Pipeline)`: "Pipeline>X"), to other than a false constant
_FACT_OBJECT_SETS = "object_sets"
# pd40: branches that run only when `self.X` holds, in a class that sets `self.X` only to a false constant
_FACT_SELF_OFF = "self_off"
# tq47a: switch parameters and attributes, and the codes of each call's arguments (`_forward_facts`)
_FACT_FORWARDS = "forwards"
# g3: each call's definition and CUDA gate (`_gated_sites`), read by caller_gates
FACT_CALLERS = "callers"
FACT_DEFINITIONS = "definitions"       # g3: caller_gates.definition_facts
# tq58c: attribute names among `refs` that the file only reads as a step of an imported module's path
# (`torch.nn.parallel.DistributedDataParallel`) or as a truth value (`if training_args.do_train:`), never hands on
FACT_INERT_REFS = "inert_refs"
# methods of torch.Tensor / torch.nn.Module (https://pytorch.org/docs/stable/tensors.html,
# https://pytorch.org/docs/stable/generated/torch.nn.Module.html) taking a device or dtype: a method of the same name
# is matched by name, and `x.type(torch.float64)` on a tensor is not a call of pypose's `type(self, dtype=...)`
_TORCH_METHODS = frozenset({"to", "type", "cuda", "cpu", "half", "float", "double", "bfloat16", "forward", "apply",
                            "new_tensor", "new_zeros", "new_ones", "new_empty", "new_full", "to_empty"})
_CONTEXT = "overridden-default"
# a dispatch table's key that picks its entry only on CUDA (`{"cuda": CUDAGraphRunner, "cpu": EagerRunner}`)
_CUDA_KEY = re.compile(r"(?i)^(?:cuda|gpu|nvidia|cuda:\d+)$")
_NOTE = ("every caller in this tree passes this argument, so the default never applies here; "
         "it matters to callers outside this tree (policy (f))")


def _params(fn: ast.FunctionDef | ast.AsyncFunctionDef, method: bool) -> list[tuple[ast.arg, ast.expr | None, int]]:
    """(parameter, default or None, positional index without self / cls; -1 keyword-only) for each parameter."""
    a = fn.args
    positional = [*a.posonlyargs, *a.args]
    defaults: list[ast.expr | None] = [None] * (len(positional) - len(a.defaults)) + list(a.defaults)
    skip = 1 if method and positional and positional[0].arg in ("self", "cls") else 0
    out = [(arg, d, i - skip) for i, (arg, d) in enumerate(zip(positional, defaults)) if i >= skip]
    out += [(arg, d, -1) for arg, d in zip(a.kwonlyargs, a.kw_defaults)]
    return out


def _is_classmethod(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    return any(isinstance(d, ast.Name) and d.id == "classmethod" for d in fn.decorator_list)


def _is_class_level(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    return any(isinstance(d, ast.Name) and d.id in ("classmethod", "staticmethod") for d in fn.decorator_list)


def _is_none_test(test: ast.expr, param: str, negated: bool) -> bool:
    """`param is None` (or `param is not None` when `negated`)."""
    return isinstance(test, ast.Compare) and isinstance(test.left, ast.Name) and test.left.id == param \
        and len(test.ops) == 1 and isinstance(test.ops[0], ast.IsNot if negated else ast.Is) \
        and isinstance(test.comparators[0], ast.Constant) and test.comparators[0].value is None


def _none_fallbacks(fn: ast.FunctionDef | ast.AsyncFunctionDef, param: str) -> list[list[int]]:
    """pd20: spans of the value a `param=None` default stands for, chosen in the body: the body of `if param is
    None:` (Hallo2's FaceRestoreHelper `if device is None: self.device = torch.device('cuda' if ... else 'cpu')`) or
    the `else` of `if param is not None:`,
    the fallback arm of `param if param is not None else X` / `X if param is None else param`, and `param or X`.
    A caller that passes the parameter never runs them, like a default it overrides."""
    out = []
    for node in scope_nodes(fn):
        if isinstance(node, ast.If) and _is_none_test(node.test, param, False):
            out.append(list(node_span(node.body[0], node.body[-1])))
        elif isinstance(node, ast.If) and node.orelse and _is_none_test(node.test, param, True):
            # the `else` of `if device is not None: ... else:` (MatAnyone's `get_matanyone_model(ckpt_path,
            # device=None)`, whose else arm does `.cuda()`; t33d)
            out.append(list(node_span(node.orelse[0], node.orelse[-1])))
        elif isinstance(node, ast.IfExp) and _is_none_test(node.test, param, False):
            out.append(list(node_span(node.body)))
        elif isinstance(node, ast.IfExp) and _is_none_test(node.test, param, True):
            out.append(list(node_span(node.orelse)))
        elif isinstance(node, ast.BoolOp) and isinstance(node.op, ast.Or) and isinstance(node.values[0], ast.Name) \
                and node.values[0].id == param:
            out.append(list(node_span(node.values[1], node.values[-1])))
    return out


def _defaults(tree: ast.Module) -> list[list[Any]]:
    out: list[list[Any]] = []

    def add(fn: ast.FunctionDef | ast.AsyncFunctionDef, name: str, method: bool) -> None:
        for arg, default, index in _params(fn, method):
            if default is not None and _PARAM.match(arg.arg):
                out.append([*_default_span(arg, default), name, arg.arg, index, not method])
                if isinstance(default, ast.Constant) and default.value is None:
                    out.extend([*span, name, arg.arg, index, not method] for span in _none_fallbacks(fn, arg.arg))

    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) and item.name in ("__init__", "__new__"):
                    # (a class built through `__new__`: Pororo's `Pororo(task=..., device=...)` factory; t33d)
                    add(item, node.name, True)
                elif isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) and _plain(item) \
                        and not item.name.startswith("_") and item.name not in _TORCH_METHODS:
                    # a public method (t19g: DiffSynth's `SDLoRA.add_lora_to_text_encoder(..., device="cuda")`, whose
                    # one call passes `device=self.device`): keyed by `.name`, the attribute its calls go through;
                    # read like a module function (a call overrides when it passes the parameter). pd22: also a
                    # `@staticmethod` / `@classmethod` / `@torch.no_grad()` one (CRM's
                    # `ImageDreamDiffusion.get_ip_conditions(..., device="cuda")`, passed positionally by its caller;
                    # a static method's index counts from its first parameter, as its calls do)
                    # r2d: a `@classmethod` / `@staticmethod` is mostly called through its class
                    # (`AuraSR.from_pretrained(..., device="cpu")`, fastsdcpu): keyed `Class.method` too, whose
                    # sites are those calls and every `obj.method(...)` (drop_overridden_defaults)
                    key = f"{node.name}.{item.name}" if _is_class_level(item) else "." + item.name
                    for arg, default, index in _params(item, True):
                        if default is not None and _PARAM.match(arg.arg):
                            out.append([*_default_span(arg, default), key, arg.arg, index, True])
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and _plain(node):
            # a module function's defaults too (t11s; a decorated one may be wrapped). tq40: a function under a
            # caching wrapper only (`@st.cache_resource`, `@functools.lru_cache`) is called by its own name like an
            # undecorated one (riffusion's `streamlit/util.py` loaders, whose tasks all pass `device=device`)
            add(node, node.name, False)
    return out


def _default_span(arg: ast.arg, default: ast.expr) -> tuple[int, int, int, int]:
    """The default's span; a CUDA switch's from its parameter's name, where NPU038 reports it."""
    return node_span(arg, default) if _SWITCH.match(arg.arg) else node_span(default)


def _plain(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """Undecorated, or decorated only by wrappers that neither register nor replace it (`@torch.no_grad()`)."""
    return all(_decorator_name(d) in _WRAPPERS for d in fn.decorator_list)


def _flag_branches(fn: ast.FunctionDef | ast.AsyncFunctionDef, key: str, method: bool) -> list[list[Any]]:
    """[key, parameter, positional index, [[first, last line] of each `if <parameter>:` body], the default] for each
    parameter of `fn` whose default is a false constant (`track_time: bool = False`) that its body tests and never
    rebinds; and (pd25) [..., the default, the literals that run the body] for each `if <parameter> == "cuda":` /
    `if <parameter> != "cpu":` / `if <parameter> in ("cuda", "mps"):` body that the parameter's constant default
    does not run (DragNUWA's `adaptively_load_state_dict(..., device="cpu")` with `if device == "cuda":
    torch.cuda.empty_cache()`)."""
    out: list[list[Any]] = []
    stored = {n.id for n in scope_nodes(fn) if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)}
    for arg, default, index in _params(fn, method):
        if default is None or arg.arg in stored:
            continue
        truthy = isinstance(default, ast.Constant) and default.value is True
        if not _false_constant(default) and not truthy:
            if isinstance(default, ast.Constant) and isinstance(default.value, (str, int)) \
                    and not isinstance(default.value, bool):
                out += _value_branches(fn, key, arg.arg, index, default.value)
            elif (dtype := ast_dotted(default) or "").startswith("torch."):
                out += _value_branches(fn, key, arg.arg, index, dtype, dotted=True)
            continue
        spans = []
        for n in scope_nodes(fn):
            if isinstance(n, ast.If) and (
                    isinstance(n.test, ast.Name) and n.test.id == arg.arg
                    or isinstance(n.test, ast.BoolOp) and isinstance(n.test.op, ast.And)
                    and any(isinstance(v, ast.Name) and v.id == arg.arg for v in n.test.values)):
                spans.append([n.body[0].lineno, max(b.end_lineno or b.lineno for b in n.body)])
        if spans:       # pd31: a True default runs the body unless every call passes the flag off (`_TRUTHY`)
            out.append([key, arg.arg, index, spans, ast.unparse(default)] + ([[_TRUTHY]] if truthy else []))
    return out


# the value-branch marker of an `if flag:` body whose flag defaults to True: off only where every call passes it off
# by keyword (MMVCv15's `index_initial(n_batch, n_ch, tensor=True)`, called only with `tensor=False`; pd31, heldout28)
_TRUTHY = "<true>"


def _value_branches(fn: ast.FunctionDef | ast.AsyncFunctionDef, key: str, param: str, index: int,
                    default: str | int, dotted: bool = False) -> list[list[Any]]:
    """The value-branch entries of `_flag_branches` for one parameter with a constant default: one per distinct set of
    literals that run a body (a call passing none of them leaves every such body off). `dotted`: the default is a
    torch name (`dtype=torch.float32`), compared with torch names (`dtype in [torch.float16, torch.bfloat16]`)."""
    spans: dict[tuple[str, ...], list[list[int]]] = {}
    for n in scope_nodes(fn):
        if not isinstance(n, ast.If):
            continue
        test, other = _value_test(n.test, param)
        if test is None:
            continue
        left, op, right = _unwrap_str(test.left), test.ops[0], _unwrap_str(test.comparators[0])
        if isinstance(right, ast.Name) and right.id == param and isinstance(op, (ast.Eq, ast.NotEq)):
            left, right = right, left
        if not (isinstance(left, ast.Name) and left.id == param):
            continue
        items = right.elts if isinstance(op, ast.In) and isinstance(right, (ast.Tuple, ast.List, ast.Set)) else \
            [right] if isinstance(op, (ast.Eq, ast.NotEq)) else []
        if not items or not all(isinstance(i, ast.Constant) and isinstance(i.value, (str, int)) for i in items) and \
                not (dotted and all(ast_dotted(i) for i in items)):
            continue
        values = [ast_dotted(i) if dotted else i.value for i in items]     # type: ignore[attr-defined]
        on: tuple[str, ...]
        if other and (isinstance(op, ast.NotEq) or default in values):
            continue            # an `and` test: only a test its default makes false keeps the whole `if` off
        if other:               # the `and`'s other operands decide nothing while this one is false (tq55d)
            spans.setdefault(tuple(sorted(repr(v) for v in values)), []).append(list(other))
        if isinstance(op, ast.NotEq):
            if values[0] != default:
                continue
            on = ("*",)         # `if device != "cpu":` runs for any value passed but the default
        elif default in values:
            if isinstance(op, ast.Eq) and n.orelse and not (len(n.orelse) == 1 and isinstance(n.orelse[0], ast.If)):
                # `if str(map_location) == "cpu": ... else: torch.set_default_tensor_type(torch.cuda...)` under
                # `map_location="cpu"`: the `else` runs for any value passed but the default (llama-stack's
                # checkpoint loader; tq44b)
                spans.setdefault(("*",), []).append([n.orelse[0].lineno,
                                                     max(b.end_lineno or b.lineno for b in n.orelse)])
            continue
        else:
            on = tuple(sorted(repr(v) for v in values))
        spans.setdefault(on, []).append([n.body[0].lineno, max(b.end_lineno or b.lineno for b in n.body)])
    shown = default if dotted else repr(default)
    return [[key, param, index, found, shown, list(on)] for on, found in spans.items()]


def _value_test(test: ast.expr, param: str) -> tuple[ast.Compare | None, tuple[int, int] | None]:
    """The one-operator comparison an `if` tests, and None; or, for an `and` (ctc-forced-aligner's
    `load_alignment_model`: `is_flash_attn_2_available() and device.startswith("cuda") and dtype in [torch.float16,
    torch.bfloat16]` under `dtype=torch.float32`), its comparison of `param` and the lines of the whole test: while
    that comparison is false the other operands choose nothing (tq55d)."""
    if isinstance(test, ast.Compare) and len(test.ops) == 1:
        return test, None
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
        for v in test.values:
            if isinstance(v, ast.Compare) and len(v.ops) == 1 and isinstance(v.left, ast.Name) and v.left.id == param:
                return v, (test.lineno, test.end_lineno or test.lineno)
    return None, None


def _unwrap_str(node: ast.expr) -> ast.expr:
    """`str(x)` -> x: a parameter compared as text (`str(map_location) == "cpu"` for a str or a torch.device)."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "str" \
            and len(node.args) == 1 and not node.keywords:
        return node.args[0]
    return node


def _optional_self_attr(test: ast.expr) -> str | None:
    """X of `hasattr(self, "X") and self.X is not None` (a hook set only by some code path: diffusers' old
    `final_offload_hook`), else None."""
    if not (isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And) and len(test.values) >= 2):
        return None
    probe, check = test.values[0], test.values[1]
    if not (isinstance(probe, ast.Call) and isinstance(probe.func, ast.Name) and probe.func.id == "hasattr"
            and len(probe.args) == 2 and isinstance(probe.args[0], ast.Name) and probe.args[0].id == "self"
            and isinstance(probe.args[1], ast.Constant) and isinstance(probe.args[1].value, str)):
        return None
    name = probe.args[1].value
    if isinstance(check, ast.Compare) and len(check.ops) == 1 and isinstance(check.ops[0], ast.IsNot) \
            and isinstance(check.comparators[0], ast.Constant) and check.comparators[0].value is None \
            and self_attr(check.left) == name:
        return name
    return None


def _optional_attr_branches(tree: ast.Module) -> list[list[Any]]:
    """[X, first line, last line] of each `if hasattr(self, "X") and self.X is not None:` body."""
    out: list[list[Any]] = []
    for n in module_nodes(tree):
        if isinstance(n, ast.If) and (name := _optional_self_attr(n.test)) is not None:
            out.append([name, n.body[0].lineno, max(b.end_lineno or b.lineno for b in n.body)])
    return out


def _flags(tree: ast.Module) -> list[list[Any]]:
    """The flag branches (_flag_branches) of top-level functions and of methods of top-level classes, keyed as
    their calls are: a function by its name, `__init__` by its class, `__call__` by `()` (called through an
    instance: not resolved), another method by `.name`."""
    out: list[list[Any]] = []
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and _plain(node):
            out += _flag_branches(node, node.name, False)
        elif isinstance(node, ast.ClassDef):
            for item in node.body:
                if not isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) or not _plain(item) \
                        or item.name in _TORCH_METHODS or _is_classmethod(item):
                    continue
                key = node.name if item.name == "__init__" else "()" if item.name == "__call__" \
                    else None if item.name.startswith("__") else "." + item.name
                if key is not None:
                    out += _flag_branches(item, key, True)
    return out


def _surely_false(node: ast.expr | None) -> bool:
    """`False`, `None`, `0`, or an `and` with such an operand (`vae_dtype != torch.float32 and False`): always false."""
    return _false_constant(node) or isinstance(node, ast.BoolOp) and isinstance(node.op, ast.And) \
        and any(_surely_false(v) for v in node.values)


# what an autocast call resolves to through the file's imports and module-level aliases (context.build_context)
_AUTOCAST_APIS = frozenset({"torch.autocast", "torch.amp.autocast", "torch.cuda.amp.autocast", "torch.cpu.amp.autocast",
                            "torch.amp.autocast_mode.autocast", "torch.cuda.amp.autocast_mode.autocast",
                            "mmengine.runner.autocast", "mmengine.runner.amp.autocast"})     # (mmengine's wraps torch's)


def _call_keys(tree: ast.Module) -> dict[int, str]:
    """id -> how its calls are keyed (`_flags`), for each top-level function and each method of a top-level class:
    a `forward` is keyed `()` (a module runs it through `__call__`) and its direct calls are `.forward`'s."""
    out: dict[int, str] = {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            out[id(node)] = node.name
        elif isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) and not _is_classmethod(item):
                    out[id(item)] = node.name if item.name == "__init__" else \
                        "()" if item.name in ("__call__", "forward") else "." + item.name
    return out


def _autocasts(tree: ast.Module) -> list[list[Any]]:
    """[first, last line, how it is off] of each autocast whose `enabled` is off where the file alone cannot say it is
    on (pd27, heldout27): "off" for a local of the enclosing function bound only to always-false values
    (`vae_autocast_enabled = ... and False`), "attr:X" for `<object>.X` (`self.args.mixed_precision`: off where every
    file of the tree sets X only to a false constant, read per run); and [first, last, "alias", [the calls' first
    lines]] for a module-level alias (`autocast = torch.cuda.amp.autocast`) whose every call is one of those. A literal
    `enabled=False` is neutral_uses' (pd8): the disable may be written for an outer region. `default_facts` calls it
    only for a file holding the word "autocast", which every autocast API's name ends in (s24a: most files skip it)."""
    from auditor.static.context import build_context

    # the file's qualified names: `from torch.cuda.amp import autocast`, `from torch.cuda import amp`, and module-level
    # aliases, a `try:` around them included (RAFT's `try: autocast = torch.cuda.amp.autocast` / `except:` a dummy)
    ctx = build_context(tree)
    aliases = frozenset(n for n in ctx.assigned_aliases if ctx.aliases.get(n) in _AUTOCAST_APIS)
    assigns = [n for node in tree.body if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
               for n in walk_list(node) if isinstance(n, ast.Assign)
               and any(isinstance(t, ast.Name) and t.id in aliases for t in n.targets)]

    def autocast_call(func: ast.expr) -> bool:
        dotted = ast_dotted(func)
        return dotted is not None and any(q in _AUTOCAST_APIS for q in ctx.resolve_all(dotted))

    out: list[list[Any]] = []
    owners = {id(item): node for node in tree.body if isinstance(node, ast.ClassDef) for item in node.body}
    calls: dict[str, list[int]] = {}        # alias -> the lines of its calls found off
    every: dict[str, int] = {}              # alias -> how many times the file reads it
    for n in module_nodes(tree):
        if isinstance(n, ast.Name) and n.id in aliases and isinstance(n.ctx, ast.Load):
            every[n.id] = every.get(n.id, 0) + 1
    keys = _call_keys(tree)
    for fn in module_nodes(tree):
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        # pd29: a parameter defaulting to a false constant (MoGe's `forward(self, image, mixed_precision=False)`)
        flags = {arg.arg: index for arg, default, index in _params(fn, id(fn) in keys and keys[id(fn)] != fn.name)
                 if _false_constant(default)} if id(fn) in keys and _plain(fn) else {}
        stores: dict[str, list[ast.AST]] = {}     # name -> the values bound to it (a node that is no value: unknown)
        plain: set[int] = set()     # the Name targets of plain assignments (ast.walk meets an Assign before them)
        calls_in: list[ast.Call] = []
        for n in scope_nodes(fn):      # one walk (s24a: three walks per function were the cost)
            if isinstance(n, ast.Assign):
                for t in n.targets:
                    if isinstance(t, ast.Name):
                        stores.setdefault(t.id, []).append(n.value)
                        plain.add(id(t))
            elif isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load) and id(n) not in plain:
                stores.setdefault(n.id, []).append(n)       # a loop, `with`, tuple, augmented or walrus target
            elif isinstance(n, ast.arg):
                stores.setdefault(n.arg, []).append(n)
            elif isinstance(n, (ast.Global, ast.Nonlocal)):
                for name in n.names:
                    stores.setdefault(name, []).append(n)
            elif isinstance(n, ast.Call) and autocast_call(n.func):
                calls_in.append(n)
        for call in calls_in:
            value = next((k.value for k in call.keywords if k.arg == "enabled"), None)
            how = None
            if isinstance(value, ast.Name) and stores.get(value.id) and all(
                    isinstance(v, ast.expr) and not isinstance(v, ast.Name) and _surely_false(v)
                    for v in stores[value.id]):
                how = "off"
            elif (attr := self_attr(value)) is not None and id(fn) in owners \
                    and _set_off_in_class(owners[id(fn)], attr):
                how = f"self:{owners[id(fn)].name}:{attr}"      # `self.isHalf = False` in `__init__` alone
            elif isinstance(value, ast.Attribute) and not isinstance(value.value, ast.Constant):
                how = "attr:" + value.attr
            elif isinstance(value, ast.Name) and value.id in flags and stores.get(value.id) == [
                    a for a in walk_list(fn.args) if isinstance(a, ast.arg) and a.arg == value.id]:
                how = f"param:{value.id}:{flags[value.id]}:{keys[id(fn)]}"
            if how:
                out.append([call.lineno, call.end_lineno or call.lineno, how])
                if isinstance(call.func, ast.Name) and call.func.id in aliases:
                    calls.setdefault(call.func.id, []).append(call.lineno)
    for node in assigns:
        names = [t.id for t in node.targets if isinstance(t, ast.Name)]
        if names and all(every.get(a) == len(calls.get(a, ())) > 0 for a in names):
            out.append([node.lineno, node.end_lineno or node.lineno, "alias", sorted(set(calls[names[0]])), names[0]])
    return out


def _forwarded(node: ast.expr, params: frozenset[str]) -> bool:
    """A value the caller hands on or chose where it is defined: a name (a parameter of the enclosing function,
    `device=device`; pd17: a local or a global too, `device = mm.get_torch_device()` in BrushNet's node, whose CUDA
    choice, if any, is reported where the name is set), an attribute of the instance (`self.device`) or of a parameter
    (`device=model_manager.device` in DiffSynth's `from_model_manager(model_manager)`, t19g: the object the caller
    was given carries the device). A literal is a choice made at the call (the default stays no quieter than it), and
    so is an attribute of a local (`cfg = Config(); Sampler(device=cfg.device)`, whose class default decides)."""
    if isinstance(node, ast.Name):
        return True
    if isinstance(node, ast.Call) and not any(isinstance(n, ast.Constant) for n in ast.walk(node)):
        # r2d: the value of a call with no literal in it (imaginAIry's `CLIPEmbedder(device=get_device())`): the
        # project's own device choice, whose CUDA arm, if any, is reported in the helper's body (as pd17's names);
        # `torch.device("cuda")` has its literal and stays a choice made at the call
        return True
    return isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) \
        and (node.value.id == "self" or node.value.id in params)


# (forwarded positions, forwarded keywords, `*` / `**`, keywords passed any value, positional count, `kw=<repr of
# the constant passed>` / `kw=*` of each keyword: pd25's value branches)
_Shape = tuple[tuple[int, ...], tuple[str, ...], bool, tuple[str, ...], int, tuple[str, ...]]
# a construction this file cannot see (a subclass built elsewhere): as if through `*` / `**`, nothing known
_UNKNOWN_CALL: _Shape = ((), (), True, (), 0, ())
_INHERITED = "^"        # a keyword-value mark: the base's `__init__` runs for each construction of the subclass named


def _inherited_call(subclass: str) -> _Shape:
    """A subclass with no `__init__` of its own (`class NsfHifiGANLog10(NsfHifiGAN)`): its constructions are the
    base's; unknown as `_UNKNOWN_CALL` until the run finds them (`_with_subclass_sites`; tq50b)."""
    return (), (), True, (), 0, (_INHERITED + subclass,)


def _shape(call: ast.Call, params: frozenset[str]) -> _Shape:
    """(positions passed a forwarded value, device / dtype keywords passed a forwarded value, `*` / `**`, device /
    dtype keywords passed any value, the number of positional arguments before a `*`, each keyword's value: `kw=` and
    the constant's repr, or `kw=*`)."""
    positions = []
    given = len(call.args)
    for i, a in enumerate(call.args):
        if isinstance(a, ast.Starred):
            given = i
            break
        if _forwarded(a, params):
            positions.append(i)
    star = any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords)
    kws = tuple(sorted({k.arg for k in call.keywords
                        if k.arg is not None and _PARAM.match(k.arg) and _forwarded(k.value, params)}))
    passed = tuple(sorted({k.arg for k in call.keywords if k.arg is not None and _PARAM.match(k.arg)}))
    values = tuple(sorted({f"{k.arg}={repr(k.value.value) if isinstance(k.value, ast.Constant) else '*'}"
                           for k in call.keywords if k.arg is not None}))
    return tuple(positions), kws, star, passed, given, values


# the calls key prefix of `obj.method(...)` on a receiver that is neither a class name nor `super()` (r2d)
_ANY_RECEIVER = "~"
# a site whose caller is unknown (a subclass constructed elsewhere): no definition of this file holds it
UNKNOWN_CALLER = "?"
MODULE_CALL = "@"       # the sites' prefix of a call through an imported module, `module.f(...)`


def _self_bound_classes(tree: ast.Module) -> tuple[set[int], dict[int, list[str]]]:
    """A class a top-level class binds to an attribute of its own and only calls through it (tq52a, LightAutoML's
    `AutoNLPWrap`: `self.transformer = DLTransformer` in one arm, `WeightedAverageTransformer` in the other, then
    `self.transformer(verbose=..., device=self.device, **params)`): those calls construct the class, so they are
    its call sites and the binding hands it to no unknown caller. (ids of the bound names, call id -> the names it
    builds.) Only where every store of the attribute in the class is a capitalised name and every read of it there
    is a call's callee."""
    bound: set[int] = set()
    calls: dict[int, list[str]] = {}
    for cls in tree.body:
        if not isinstance(cls, ast.ClassDef):
            continue
        stores: dict[str, list[ast.Name | None]] = {}
        loads: dict[str, list[ast.Attribute]] = {}
        callees: dict[int, ast.Call] = {}
        for node in walk_list(cls):
            if isinstance(node, ast.Assign):
                for t in node.targets:
                    attr = self_attr(t)
                    if attr is not None:
                        named = node.value if isinstance(node.value, ast.Name) and node.value.id[:1].isupper() \
                            and len(node.targets) == 1 else None
                        stores.setdefault(attr, []).append(named)
            elif isinstance(node, ast.Call) and self_attr(node.func) is not None:
                callees[id(node.func)] = node
            elif isinstance(node, (ast.AugAssign, ast.AnnAssign)) and self_attr(node.target) is not None:
                stores.setdefault(self_attr(node.target) or "", []).append(None)
            if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load) and self_attr(node) is not None:
                loads.setdefault(node.attr, []).append(node)
        for attr, names in stores.items():
            reads = loads.get(attr, [])
            if not names or None in names or not reads or any(id(r) not in callees for r in reads):
                continue
            bound.update(id(n) for n in names if n is not None)
            for r in reads:
                calls.setdefault(id(callees[id(r)]), []).extend(n.id for n in names if n is not None)
    return bound, calls


def _calls_and_refs(tree: ast.Module) -> tuple[dict[str, list[list[Any]]], dict[str, list[list[Any]]], list[str],
                                                 dict[str, bool], dict[str, list[tuple[str, int, int, str]]]]:
    """(calls outside `__main__` blocks, calls inside them, refs, switches: keyword -> whether some call passes it a
    value other than a false constant, sites: name -> (the definition holding the call or the value handed on: `f`,
    `Class.method`, "" at module level, UNKNOWN_CALLER; its line; its 0-based column; the gate a CUDA dispatch key
    makes, or ""), read by caller_gates)."""
    modules = import_bound_names(tree)   # the modules (and objects) a call may go through
    packages = {a.asname or a.name.split(".", 1)[0] for n in module_nodes(tree) if isinstance(n, ast.Import)
                for a in n.names}       # (`import a.b` binds the package `a`: modules only, no imported objects)
    calls: dict[str, set[_Shape]] = {}
    main_calls: dict[str, set[_Shape]] = {}
    main_blocks = {id(n) for n in tree.body if is_main_guard(n)}
    refs: set[str] = set()
    switches: dict[str, bool] = {}
    sites: dict[str, list[tuple[str, int, int, str]]] = {}
    into = calls
    caller = ""         # the outermost function or method of a top-level class holding the node

    def record(name: str, shape: _Shape, at: ast.AST | None = None, through: str = "") -> None:
        if name not in _BUILTINS:
            into.setdefault(name, set()).add(shape)
            sites.setdefault(through + name, []).append((caller if at is not None else UNKNOWN_CALLER,
                                               getattr(at, "lineno", 0), getattr(at, "col_offset", 0), ""))

    bound, bound_calls = _self_bound_classes(tree)

    def value(node: ast.AST) -> None:
        if isinstance(node, ast.Name) and node.id not in _BUILTINS and id(node) not in bound:
            refs.add(node.id)

    # every other mention of a name is a site too (caller_gates): a value handed on is reached wherever it is called,
    # so its site is where the value is taken, behind a gate or as a dispatch table's entry for a CUDA key
    # (`{"cuda": run_graph, "cpu": run_eager}`); `isinstance(x, C)` and the like only make a name less gated
    called_funcs = {id(n.func) for n in module_nodes(tree) if isinstance(n, ast.Call)}
    # a type annotation names a class without building or calling it (`self._gdr_staging: GdrStaging | None =
    # GdrStaging(n) if gdr_eligible else None`: the construction is the site; tq54c)
    annotated = {id(x) for n in module_nodes(tree) for a in _annotations(n) for x in walk_list(a)}
    dispatch: dict[int, str] = {}
    for n in module_nodes(tree):
        if isinstance(n, ast.Dict):
            for k, v in zip(n.keys, n.values):
                if isinstance(v, ast.Name) and isinstance(k, ast.Constant) and isinstance(k.value, str) and \
                        _CUDA_KEY.match(k.value):
                    dispatch[id(v)] = f"a dispatch table's {k.value!r} entry"

    def visit(node: ast.AST, owner: ast.ClassDef | None, params: frozenset[str]) -> None:
        nonlocal caller
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and not caller:
            # (a top-level class's method, or a top-level function; a nested definition runs as its outer one)
            outer = f"{owner.name}." if owner is not None and owner in tree.body else ""
            if owner is None or outer:
                caller = outer + node.name
                visit(node, owner, params)
                caller = ""
                return
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            sig = node.args
            params = frozenset(x.arg for x in [*sig.posonlyargs, *sig.args, *sig.kwonlyargs]
                               if x.arg not in ("self", "cls"))
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and id(node) not in called_funcs and \
                node.id not in _BUILTINS and id(node) not in annotated:
            sites.setdefault(node.id, []).append((caller, node.lineno, node.col_offset, dispatch.get(id(node), "")))
        if isinstance(node, ast.ClassDef):
            if not any(isinstance(i, (ast.FunctionDef, ast.AsyncFunctionDef)) and i.name == "__init__"
                       for i in node.body):
                for base in node.bases:     # constructing the subclass runs the base's __init__
                    if isinstance(base, ast.Name):
                        record(base.id, _inherited_call(node.name))
            for child in ast.iter_child_nodes(node):
                visit(child, node, frozenset())
            return
        nonlocal into
        if id(node) in main_blocks:
            into = main_calls
        if isinstance(node, ast.Call):
            for k in node.keywords:
                if k.arg is not None:
                    switches[k.arg] = switches.get(k.arg, False) or not _false_constant(k.value)
            func, shape = node.func, _shape(node, params)
            if isinstance(func, ast.Name):
                if func.id == "cls" and owner is not None:
                    record(owner.name, shape, node)
                else:
                    record(func.id, shape, node)
                if func.id not in _NOT_VALUES:
                    for a in node.args:
                        value(a.value if isinstance(a, ast.Starred) else a)
                    for k in node.keywords:
                        value(k.value)
            elif isinstance(func, ast.Attribute):
                base = func.value
                for name in bound_calls.get(id(node), ()):
                    record(name, shape, node)       # `self.transformer(device=self.device)` builds the class bound
                if isinstance(base, ast.Name) and base.id[:1].isupper():
                    # r2d: `AuraSR.from_pretrained(...)`: a class-level method called through its class (imported
                    # or the file's own), also keyed `Class.method`
                    into.setdefault(f"{base.id}.{func.attr}", set()).add(shape)
                if isinstance(base, ast.Name) and base.id in modules or \
                        isinstance(base, ast.Attribute) and (ast_dotted(base) or ".").split(".", 1)[0] in packages:
                    # (also a function of an imported module's submodule, `torch.cuda.set_device(d)`: no call of the
                    # tree's own `set_device` methods; tq60a)
                    record(func.attr, shape, node, MODULE_CALL)     # (never the calling file's own definition)
                elif func.attr == "__init__" and isinstance(base, ast.Call) and isinstance(base.func, ast.Name) \
                        and base.func.id == "super" and owner is not None:
                    # a subclass's own `__init__` handing on its parameters (`super().__init__(model_name, device,
                    # l2_norm)`, pyserini's ClipTextEncoder; tq54c) calls the base as a construction does, whatever
                    # builds the subclass (its own default is its own finding); anywhere else the base's call is
                    # unknown (a subclass is constructed elsewhere, often by name)
                    hands_on = caller == f"{owner.name}.__init__"
                    for b in owner.bases:
                        if isinstance(b, ast.Name):
                            if hands_on:
                                record(b.id, shape, node)
                            else:
                                record(b.id, _UNKNOWN_CALL)
                else:
                    record("." + func.attr, shape, node)     # `obj.method(...)`: a call of every method of that name
                    if isinstance(base, ast.Call) and isinstance(base.func, ast.Name) and base.func.id == "super":
                        # r2d: `super().from_pretrained(...)` reaches the owner's bases' method
                        for b in owner.bases if owner is not None else ():
                            base_name = (ast_dotted(b) or "").rsplit(".", 1)[-1]
                            key = f"{base_name}.{func.attr}" if base_name else _ANY_RECEIVER + func.attr
                            into.setdefault(key, set()).add(shape)
                    elif not (isinstance(base, ast.Name) and base.id[:1].isupper()):
                        into.setdefault(_ANY_RECEIVER + func.attr, set()).add(shape)   # an unknown receiver
                for a in node.args:
                    value(a.value if isinstance(a, ast.Starred) else a)
                for k in node.keywords:
                    value(k.value)
        elif isinstance(node, (ast.List, ast.Tuple, ast.Set)):
            for e in node.elts:
                value(e)
        elif isinstance(node, ast.Dict):
            for v in node.values:
                value(v)
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.Return, ast.NamedExpr)) and node.value is not None:
            value(node.value)
        for child in ast.iter_child_nodes(node):
            visit(child, owner, params)
        if id(node) in main_blocks:
            into = calls

    visit(tree, None, frozenset())
    # a method handed on as a value (`hooks.append(self.save)`, `getattr(pipe, "offload")`) has callers unseen
    called = {id(n.func) for n in module_nodes(tree) if isinstance(n, ast.Call)}
    for n in module_nodes(tree):
        if isinstance(n, ast.Attribute) and isinstance(n.ctx, ast.Load) and id(n) not in called:
            refs.add("." + n.attr)
        elif isinstance(n, ast.Constant) and isinstance(n.value, str) and n.value.isidentifier():
            refs.add("." + n.value)
    def listed(found: dict[str, set[_Shape]]) -> dict[str, list[list[Any]]]:
        return {name: sorted([list(p), list(k), s, list(a), n, list(v)] for p, k, s, a, n, v in shapes)
                for name, shapes in found.items()}

    return listed(calls), listed(main_calls), sorted(refs), switches, sites


def _truth_tests(tree: ast.Module) -> set[int]:
    """Ids of the expressions read only as a truth value: an `if` / `while` / `assert` / conditional expression's or
    comprehension filter's test, through `and`, `or` and `not`."""
    todo: list[ast.expr] = []
    for n in module_nodes(tree):
        if isinstance(n, (ast.If, ast.While, ast.IfExp, ast.Assert)):
            todo.append(n.test)
        elif isinstance(n, ast.comprehension):
            todo.extend(n.ifs)
    out: set[int] = set()
    while todo:
        e = todo.pop()
        out.add(id(e))
        if isinstance(e, ast.BoolOp):
            todo.extend(e.values)
        elif isinstance(e, ast.UnaryOp) and isinstance(e.op, ast.Not):
            todo.append(e.operand)
    return out


def _inert_refs(tree: ast.Module, refs: list[str]) -> list[str]:
    """The `.name` refs (attributes read without a call) whose every read in the file hands nothing on: a step of a
    path through an absolutely imported module (`torch.nn.parallel` in `torch.nn.parallel.DistributedDataParallel`:
    a module, not a method) or a truth value (`if training_args.do_train:`: a bound method is always true, so a test
    reads a field); a name also spelled as a string is never inert. Read by unreached_defs' dead-method reading."""
    wanted = {r[1:] for r in refs if r.startswith(".")}
    if not wanted:
        return []
    modules = import_bound_names(tree, absolute_only=True)
    tests = _truth_tests(tree)
    called = {id(n.func) for n in module_nodes(tree) if isinstance(n, ast.Call)}
    steps = {id(n.value) for n in module_nodes(tree) if isinstance(n, ast.Attribute)
             and (ast_dotted(n.value) or "").partition(".")[0] in modules}
    live: set[str] = set()
    for n in module_nodes(tree):
        if isinstance(n, ast.Attribute) and isinstance(n.ctx, ast.Load) and id(n) not in called and \
                id(n) not in steps and id(n) not in tests:
            live.add(n.attr)
        elif isinstance(n, ast.Constant) and isinstance(n.value, str):
            live.add(n.value)
    return sorted("." + name for name in wanted - live)


def _annotations(node: ast.AST) -> list[ast.expr]:
    """The type annotations a node holds itself (a variable's, a parameter's, a function's return)."""
    if isinstance(node, ast.AnnAssign):
        return [node.annotation]
    if isinstance(node, ast.arg):
        return [node.annotation] if node.annotation is not None else []
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return [node.returns] if node.returns is not None else []
    return []


def _gated_sites(tree: ast.Module, sites: dict[str, list[tuple[str, int, int, str]]]) -> dict[str, list[list[Any]]]:
    """name -> [caller, line, gate] of each distinct (caller, gate) among the file's calls of that name and the places
    it is handed on as a value: the CUDA gate (gates.build_gates' words, or a CUDA dispatch key) each sits behind, or
    "" (caller_gates reads them over the tree)."""
    from auditor.static.gates import _WINDOWS, build_gates

    gates = build_gates(tree) if sites else None
    out: dict[str, list[list[Any]]] = {}
    for name, found in sites.items():
        seen: dict[tuple[str, str], list[Any]] = {}
        for caller, line, col, key in found:
            how = key or (gates.gate_of(line, col) if gates is not None and gates.regions and line else None) or ""
            how = "" if how == _WINDOWS else how     # (not a CUDA gate: the caller runs on no Linux host)
            seen.setdefault((caller, how), [caller, line, how])
        out[name] = sorted(seen.values())
    return out


def default_facts(data: bytes, tree: ast.AST | None = None) -> dict[str, Any]:
    """The file's `defaults`, `calls` and `refs` facts (see the module doc); {} for a file that cannot be parsed.
    `tree`: the whole file's `ast` tree when the caller has parsed it already (the engine), else parsed here."""
    if not isinstance(tree, ast.Module):
        try:
            tree = ast.parse(data)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return {FACT_UNPARSED: True}
    try:
        defaults = _defaults(tree)
        calls, main_calls, refs, switches, sites = _calls_and_refs(tree)
        callers = _gated_sites(tree, sites)
        from auditor.static.caller_gates import definition_facts

        definitions = definition_facts(tree)
        flags = _flags(tree)
        optional = _optional_attr_branches(tree)
        autocasts = _autocasts(tree) if b"autocast" in data else []
        settings = _setting_names(tree)
        imports = _imported_names(tree)
        object_sets = _object_sets(tree)
        self_off = _self_flag_branches(tree)
        forwards = _forward_facts(tree)
        inert = _inert_refs(tree, refs)
    except RecursionError:
        return {FACT_UNPARSED: True}
    out: dict[str, Any] = {}
    for fact, value in ((_FACT_DEFAULTS, defaults), (_FACT_CALLS, calls), (_FACT_MAIN_CALLS, main_calls),
                        (FACT_REFS, refs), (_FACT_FLAGS, flags), (_FACT_SWITCHES, switches),
                        (_FACT_OPTIONAL, optional), (_FACT_AUTOCASTS, autocasts), (_FACT_SETS, settings[0]),
                        (_FACT_SETS_OFF, settings[1]), (FACT_IMPORTS, imports),
                        (_FACT_OBJECT_SETS, object_sets), (_FACT_SELF_OFF, self_off), (FACT_CALLERS, callers),
                        (_FACT_FORWARDS, forwards), (FACT_INERT_REFS, inert),
                        (FACT_DEFINITIONS, definitions)):
        if value:
            out[fact] = value
    return out


def _passes(shape: list[Any], param: str, index: int, function: bool = False) -> bool:
    """Whether a call site overrides the parameter: a class's construction hands on its caller's own value (t11o);
    a module function's call passes any value (t11q: its default then never applies, and a CUDA value written at
    the call is that line's own finding)."""
    positions, kws, star = shape[:3]
    if function:
        if len(shape) < 5:
            return False        # facts of an older cache entry: unknown
        passed, given = shape[3], shape[4]
        return param in passed or 0 <= index < given
    return param in kws or (index >= 0 and index in positions and not star)


def _with_subclass_sites(results: list, facts: dict[str, Any], wanted: Any) -> tuple[
        dict[str, list[tuple[str, list[Any]]]], set[str]]:
    """`_call_sites`, where a subclass with no `__init__` of its own stands for its constructions (Diffusion-SVC's
    `NsfHifiGANLog10(NsfHifiGAN)`, built only as `NsfHifiGANLog10(vocoder_ckpt, device=device)`; tq50b): a subclass
    handed on as a value, or constructed nowhere in the tree (built elsewhere, by a computed name), stays unknown."""
    shapes, refs = _call_sites(results, facts, wanted)
    for _ in range(4):      # (a subclass of a subclass: a few levels)
        marks = {mark for found in shapes.values() for _, s in found if (mark := _subclass_mark(s))}
        if not marks:
            break
        more, more_refs = _call_sites(results, facts, {m: [] for m in marks})

        def expand(rel: str, shape: list[Any]) -> list[tuple[str, list[Any]]]:
            mark = _subclass_mark(shape)
            return more[mark] if mark in more and mark not in more_refs else [(rel, shape)]

        shapes = {name: [site for rel, s in found for site in expand(rel, s)] for name, found in shapes.items()}
    return shapes, refs


def _subclass_mark(shape: list[Any]) -> str:
    """The subclass a `_inherited_call` shape names, or ""."""
    values = shape[5] if len(shape) > 5 else ()
    return next((str(v)[len(_INHERITED):] for v in values if str(v).startswith(_INHERITED)), "")


def _call_sites(results: list, facts: dict[str, Any], wanted: Any) -> tuple[dict[str, list[tuple[str, list[Any]]]],
                                                                             set[str]]:
    """The call shapes of each wanted name over the tree, and the wanted names handed on as values. Calls in a
    `__main__` block count, except in a ComfyUI node pack: ComfyUI imports the pack and runs no file as a script
    (pd17: Sonic's yoloface.py constructs `YoloFace(pt_path=...)` in its self-test)."""
    scripts_run = not comfy_node_pack(results)
    shapes: dict[str, list[tuple[str, list[Any]]]] = {}
    refs: set[str] = set()
    for rel, f in facts.items():
        if not f:
            continue
        for fact in (_FACT_CALLS, _FACT_MAIN_CALLS) if scripts_run else (_FACT_CALLS,):
            for name, found in (f.get(fact) or {}).items():
                if name in wanted:
                    shapes.setdefault(name, []).extend((rel, s) for s in found)
        refs.update(n for n in f.get(FACT_REFS) or () if n in wanted)
    return shapes, refs


def _lower(r: Any, inside: Any, context: str, note: str) -> int:
    """Lowers to info, with `context` and `note`, the findings of result `r` for which `inside(finding)` holds, except
    those another pass already lowered to info with its own reason (`npu-path`, `windows-only`, ...). The count."""
    lowered = 0
    for i, finding in enumerate(r.findings):
        if inside(finding) and not ((finding.data or {}).get("context") and finding.severity == "info"):
            r.findings[i] = as_info(finding, context, note)
            lowered += 1
    return lowered


def drop_overridden_defaults(results: list, project: Any) -> int:
    """Device / dtype findings in parameter defaults that every caller in the tree overrides, lowered to info with
    why (module doc, policy (f)). Reads only the per-file facts; the count lowered."""
    facts = {r.path: project.calls(r.path) for r in results if r.path.endswith(".py")}
    if any(f is None for f in facts.values()):
        return 0        # a file without facts (an older cache entry): its calls are unknown, keep every default
    wanted: dict[str, list[tuple[Any, list[Any]]]] = {}
    for r in results:
        f = facts.get(r.path)
        if not f or not f.get(_FACT_DEFAULTS) or not r.findings:
            continue
        for d in f[_FACT_DEFAULTS]:
            wanted.setdefault(d[4], []).append((r, d))
    if not wanted:
        return 0
    class_level = {n: n.split(".", 1)[1] for n in wanted if not n.startswith(".") and "." in n}
    wanted_sites = {**wanted, **{"." + m: [] for m in class_level.values()},
                    **{_ANY_RECEIVER + m: [] for m in class_level.values()}}
    shapes, refs = _with_subclass_sites(results, facts, wanted_sites)
    dropped = 0
    for name, entries in wanted.items():
        sites = shapes.get(name, [])
        if name in class_level:
            # a class-level method: the calls through its class (or `super()` in a subclass) and every
            # `obj.method(...)` on a receiver that is not a class name (unknown: it may be an instance of this one)
            sites = sites + shapes.get(_ANY_RECEIVER + class_level[name], [])
            if "." + class_level[name] in refs:
                continue
        if name in refs or not sites:
            continue
        outside = any(not _SIDE.search(rel) for rel, _ in sites)
        for r, (line, col, end_line, end_col, _, param, index, *kind) in entries:
            # a helper of a test or example script that only the script itself calls (its `__main__` loop): the
            # script is the program, and its calls are every use (tq52b: ArcticInference's NVFP4 parity script)
            if not outside and not (_SIDE.search(r.path) and all(rel == r.path for rel, _ in sites)):
                continue
            function = bool(kind and kind[0])
            if not all(_passes(s, param, index, function) for _, s in sites):
                continue
            # (one lowered only to a warning, `'cuda' if torch.cuda.is_available() else 'cpu'` as the default
            # (`cuda-available-branch`), is still a default no caller lets through: info (t17b, clip-as-service's
            # load_openai_model))
            dropped += _lower(r, lambda f, start=(line, col), end=(end_line, end_col):
                              f.category in ("device", "precision") and start <= (f.line, (f.col or 1) - 1) < end,
                              _CONTEXT, _NOTE)
    return dropped


_FLAG_CONTEXT = "flag-off"
_VALUE_NOTE = ("no call in this tree passes `{}` a value that takes this branch (its default is `{}`), so it does not "
               "run here; it matters to callers outside this tree (policy (f))")
_FLAG_NOTE = ("no call in this tree turns `{}` on (its default is `{}` and every call leaves it off), so this branch "
              "does not run here; it matters to callers outside this tree (policy (f))")


def lower_unswitched_flags(results: list, project: Any) -> int:
    """Findings in the `if flag:` branch of a parameter whose default is a false constant and that no call in the tree
    turns on (pd17, heldout23: DepthCrafter's `__call__(..., track_time=False)` times its stages with
    `torch.cuda.Event` / `torch.cuda.synchronize()` under `if track_time:`, and its one call passes
    `track_time=False`), lowered to info: the branch neither fails nor differs in this tree. Policy (f)'s conditions:
    every call site is seen (the function is called from outside tests, never handed on as a value, passed no
    `*args` / `**kwargs` and not the flag's position) and no call in the tree passes the flag's keyword a value
    other than a false constant. A `__call__` is called through an instance, which is not resolved: there some call
    must pass the keyword off. The count lowered."""
    facts = {r.path: project.calls(r.path) for r in results if r.path.endswith(".py")}
    if any(f is None for f in facts.values()):
        return 0        # a file without facts (an older cache entry): its calls are unknown
    wanted: dict[str, list[tuple[Any, list[Any]]]] = {}
    for r in results:
        f = facts.get(r.path)
        for flag in (f or {}).get(_FACT_FLAGS) or ():
            if any(s <= x.line <= e for x in r.findings for s, e in flag[3]):
                wanted.setdefault(flag[0], []).append((r, flag))
    if not wanted:
        return 0
    switched: dict[str, bool] = {}     # keyword -> turned on by some call (True) / passed only off, outside tests
    for rel, f in facts.items():
        for kw, on in ((f or {}).get(_FACT_SWITCHES) or {}).items():
            if on or not _SIDE.search(rel):
                switched[kw] = switched.get(kw, False) or on
    shapes, refs = _call_sites(results, facts, wanted)
    lowered = 0
    for key, entries in wanted.items():
        sites = shapes.get(key, [])
        for r, (_, param, index, spans, default, *runs) in entries:
            if runs and runs[0] == [_TRUTHY]:
                off = {f"{param}={v}" for v in ("False", "None", "0")}
                if key == "()" or not sites or not all(len(s) > 5 and set(s[5]) & off for _, s in sites):
                    continue
            elif runs:        # a value branch: off unless a call passes a value that runs it, or one not known
                given = {v for _, s in sites for v in (s[5] if len(s) > 5 else ["*"]) if v.startswith(param + "=")}
                values = {v.partition("=")[2] for v in given}
                if key == "()" or "*" in values or values & set(runs[0]) or "*" in runs[0] and values - {default}:
                    continue        # (a `__call__`'s callers, through an instance, are unseen)
            elif switched.get(param):
                continue
            if key == "()":
                if param not in switched:
                    continue        # no call names the flag: an instance's callers are unseen
            elif key in refs or not any(not _SIDE.search(rel) for rel, _ in sites) \
                    or any(len(s) < 5 or s[2] or 0 <= index < s[4] for _, s in sites):
                continue
            note = _VALUE_NOTE.format(param, default) if runs else _FLAG_NOTE.format(param, default)
            lowered += _lower(r, lambda f, spans=spans: any(a <= f.line <= b for a, b in spans), _FLAG_CONTEXT, note)
    return lowered


_UNSET_CONTEXT = "unset-attribute"
_UNSET_NOTE = ("nothing in this tree sets `self.{}`, so this branch does not run here (a library base class of an "
               "older release may set it: check the one you run)")


def lower_unset_attribute_branches(results: list, project: Any) -> int:
    """Findings in the body of `if hasattr(self, "X") and self.X is not None:` where no file of the tree may set X
    (`_binds`), lowered to info (pd17, heldout23: BrushNet's and PowerPaint's pipelines call
    `torch.cuda.empty_cache()` under `hasattr(self, "final_offload_hook")`, the offload hook of diffusers releases
    before 0.2x; the pack's requirements pin a diffusers that no longer sets it and the pack never does). The
    count lowered."""
    from auditor.source import SourceError
    from auditor.static.project_imports import read_counted

    wanted: dict[str, list[tuple[Any, list[Any]]]] = {}
    for r in results:
        f = project.calls(r.path) if r.path.endswith(".py") and r.findings else None
        for name, first, last in (f or {}).get(_FACT_OPTIONAL) or ():
            if any(first <= x.line <= last for x in r.findings):
                wanted.setdefault(name, []).append((r, [first, last]))
    if not wanted:
        return 0
    set_somewhere: set[str] = set()
    for rel, path in project.paths.items():
        if not rel.endswith(".py"):
            continue
        try:
            data = read_counted(project, path)
        except (OSError, SourceError):
            return 0            # a file not read may set anything
        named = [n for n in wanted if n not in set_somewhere and n.encode() in data]
        if named:
            source = project.source(rel)
            if source is None:
                set_somewhere.update(named)
                continue
            set_somewhere.update(n for n in named if _binds(source[1], n))
    lowered = 0
    for name, entries in wanted.items():
        if name in set_somewhere:
            continue
        for r, (first, last) in entries:
            lowered += _lower(r, lambda f, first=first, last=last: first <= f.line <= last,
                              _UNSET_CONTEXT, _UNSET_NOTE.format(name))
    return lowered


def _set_off_in_class(cls: ast.ClassDef, attr: str) -> bool:
    """Whether the class stores `self.<attr>`, each time a false constant by a plain assignment (DiffusionSVC's
    `Pipeline.__init__`: `self.isHalf = False`, whatever `isHalf` it was given; pd31, heldout28)."""
    nodes = scope_nodes(cls)
    false_targets = {id(t) for n in nodes if isinstance(n, (ast.Assign, ast.AnnAssign))
                     and _false_constant(n.value) for t in (n.targets if isinstance(n, ast.Assign) else [n.target])}
    stores = [n for n in nodes if isinstance(n, ast.Attribute) and self_attr(n) == attr
              and not isinstance(n.ctx, ast.Load)]
    return bool(stores) and all(id(n) in false_targets for n in stores)


def _self_flag(test: ast.expr, negated: bool) -> str | None:
    """X of `self.X` (`not self.X` when `negated`), alone or as one operand of an `and` (an `or` when `negated`)."""
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.Or if negated else ast.And):
        return next((x for x in (_self_flag(v, negated) for v in test.values) if x), None)
    if negated:
        if not (isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not)):
            return None
        test = test.operand
    return self_attr(test)


def _self_flag_branches(tree: ast.Module) -> list[list[Any]]:
    """[first, last line, "self:<class>:<X>"] of each block that runs only when `self.X` holds (the body of `if
    self.X:` / `if self.X and ...:`, the `else` of `if not self.X or ...:`) in a method of a top-level class that
    sets `self.X` only to a false constant (`_set_off_in_class`: rf3's `self.use_deepspeed_evo = False` in
    `__init__`, whose DeepSpeed4Science kernel sits in the `else` of `if not self.use_deepspeed_evo or L <= 24:`;
    pd40). Whether another class or file turns it on is read per run (`_class_attributes_set`)."""
    out: list[list[Any]] = []
    classes = {cls.name: cls for cls in tree.body if isinstance(cls, ast.ClassDef)}
    for cls in tree.body:
        if not isinstance(cls, ast.ClassDef):
            continue
        # a class attribute (`use_kernel = True` in the class body) is the default until a method stores False
        off: dict[str, bool] = {t.id: False for n in cls.body if isinstance(n, (ast.Assign, ast.AnnAssign))
                                and not _false_constant(n.value)
                                for t in (n.targets if isinstance(n, ast.Assign) else [n.target])
                                if isinstance(t, ast.Name)}
        for n in scope_nodes(cls):
            if not isinstance(n, ast.If):
                continue
            for attr, block in ((_self_flag(n.test, False), n.body), (_self_flag(n.test, True), n.orelse)):
                if attr and block:
                    if attr not in off:
                        off[attr] = _set_off_in_class(cls, attr)
                    owner = cls.name if off[attr] else _base_setting_off(cls, attr, classes)
                    if owner:
                        out.append([block[0].lineno, max(b.end_lineno or b.lineno for b in block),
                                    f"self:{owner}:{attr}"])
    return out


def _base_setting_off(cls: ast.ClassDef, attr: str, classes: dict[str, ast.ClassDef]) -> str | None:
    """The base class of the same file that sets `self.<attr>` only to a false constant, for a subclass that never
    stores it (tq51c, heldout65: a trlx copy's `ModelBranch.__init__` sets `self.model_parallel = False`, its
    `GPTModelBranch.forward` tests `if self.model_parallel:`); None otherwise."""
    if any(isinstance(n, ast.Attribute) and self_attr(n) == attr and not isinstance(n.ctx, ast.Load)
           for n in scope_nodes(cls)):
        return None
    return next((base.id for base in cls.bases if isinstance(base, ast.Name) and base.id in classes
                 and base.id != cls.name and _set_off_in_class(classes[base.id], attr)), None)


def _object_sets(tree: ast.Module) -> list[str]:
    """`_FACT_OBJECT_SETS`: ".X" for an attribute stored on an object other than `self` / `cls` (or by `setattr` with
    the name as a string), "Base>X" for `self.X` stored in a class deriving from Base, each to other than a false
    constant."""
    out: set[str] = set()
    bases = {id(item): [b for b in (ast_dotted(base) for base in node.bases) if b]
             for node in module_nodes(tree) if isinstance(node, ast.ClassDef)
             for item in scope_nodes(node) if isinstance(item, (ast.Assign, ast.AnnAssign, ast.AugAssign))}
    for n in module_nodes(tree):
        if isinstance(n, (ast.Assign, ast.AnnAssign, ast.AugAssign)) and not _false_constant(n.value):
            for t in (n.targets if isinstance(n, ast.Assign) else [n.target]):
                if not isinstance(t, ast.Attribute):
                    continue
                if isinstance(t.value, ast.Name) and t.value.id in ("self", "cls"):
                    out.update(f"{b.rsplit('.', 1)[-1]}>{t.attr}" for b in bases.get(id(n), ()))
                else:
                    out.add("." + t.attr)
        elif isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "setattr" and len(n.args) >= 2 \
                and isinstance(n.args[1], ast.Constant) and isinstance(n.args[1].value, str):
            out.add("." + n.args[1].value)
    return sorted(out)


def _class_attributes_set(project: Any, wanted: list[str]) -> set[str]:
    """The `self:<class>:<attr>` autocast flags that some file may turn on from outside the class (`_object_sets`),
    from the files' facts; a file without them is read when it names the attribute, as `_attributes_set_on` does. All
    of them when a file cannot be read or parsed."""
    from auditor.source import SourceError
    from auditor.static.project_imports import read_counted

    attrs = {how.split(":")[2] for how in wanted}
    sets: set[str] = set()
    for rel, path in project.paths.items():
        if not rel.endswith(".py"):
            continue
        facts = project.calls(rel)
        if facts is None or facts.get(FACT_UNPARSED):
            try:
                data = read_counted(project, path)
            except (OSError, SourceError):
                return set(wanted)
            if not any(a.encode() in data for a in attrs):
                continue
            source = project.source(rel)
            if source is None:
                return set(wanted)
            facts = {_FACT_OBJECT_SETS: _object_sets(source[1])}
        sets.update(facts.get(_FACT_OBJECT_SETS) or ())
    return {how for how in wanted if "." + how.split(":")[2] in sets or
            "{}>{}".format(*how.split(":")[1:]) in sets}


_SELF_OFF_CONTEXT = "flag-never-set"
_SELF_OFF_NOTE = ("`{}` sets `self.{}` only to False and nothing in this tree turns it on, so this branch does not run "
                  "here; port it with the flag if you turn it on")


def lower_self_flag_branches(results: list, project: Any) -> int:
    """Findings in a block that runs only when `self.X` holds, where the class sets `self.X` only to a false constant
    and no other class or file of the tree sets it (`_self_flag_branches`, `_class_attributes_set`), lowered to info:
    the block neither fails nor differs on Ascend as the tree stands (pd40, heldout31's rf3 DS4Sci import). A flag
    some file may turn on keeps its severity. The count lowered."""
    wanted: list[tuple[Any, list[Any]]] = []
    for r in results:
        f = project.calls(r.path) if r.path.endswith(".py") and r.findings else None
        wanted += [(r, entry) for entry in (f or {}).get(_FACT_SELF_OFF) or ()
                   if any(entry[0] <= x.line <= entry[1] for x in r.findings)]
    if not wanted:
        return 0
    on = _class_attributes_set(project, sorted({how for _, (_, _, how) in wanted}))
    lowered = 0
    for r, (first, last, how) in wanted:
        if how not in on:
            lowered += _lower(r, lambda f, a=first, b=last: a <= f.line <= b, _SELF_OFF_CONTEXT,
                              _SELF_OFF_NOTE.format(*how.split(":")[1:]))
    return lowered


# tq47a: switches handed on. A `use_cuda` parameter defaulting to False that the class stores (`self.use_cuda =
# use_cuda`) and hands to helpers (`synthesis(..., use_cuda=self.use_cuda)` -> `numpy_to_torch(x, cuda=use_cuda)`):
# codes of a call's arguments, a parameter's or an attribute's sources
_OFF, _ON = "0", "1"
_REQUIRED = "-"         # a parameter without a default: every call passes it
_FWD_CONTEXT = "flag-off"
_FWD_NOTE = ("nothing in this tree turns `{}` of `{}` on: every call passes it off or leaves its default off, directly "
             "or through the parameters and attributes that hand it on, so this branch does not run here; it matters "
             "to callers outside this tree (policy (f))")


def _name_flag(test: ast.expr, name: str, negated: bool) -> bool:
    """`name` alone or as one operand of an `and` (`not name`, or an operand of an `or`, when `negated`)."""
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.Or if negated else ast.And):
        return any(_name_flag(v, name, negated) for v in test.values)
    if negated:
        return isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not) and _name_flag(test.operand, name, False)
    return isinstance(test, ast.Name) and test.id == name


def _branches(nodes: list[ast.AST]) -> list[ast.AST]:
    """The `if` statements and conditional expressions of a scope's nodes (`walk_list`), in their order: listed once
    per scope for `_switch_blocks`, which reads them once per switch."""
    return [n for n in nodes if isinstance(n, (ast.If, ast.IfExp))]


def _switch_blocks(branches: list[ast.AST], holds: Any) -> tuple[list[list[int]], list[list[int]]]:
    """([first, last line] of each `if` block, [line, col, end line, end col] of each conditional-expression arm) of
    `branches` (`_branches` of a scope) that runs only when `holds(test, negated)` says the switch is on."""
    lines: list[list[int]] = []
    exprs: list[list[int]] = []
    for n in branches:
        if isinstance(n, ast.If):
            for block, negated in ((n.body, False), (n.orelse, True)):
                if block and holds(n.test, negated):
                    lines.append([block[0].lineno, max(b.end_lineno or b.lineno for b in block)])
        elif isinstance(n, ast.IfExp):
            for arm, negated in ((n.body, False), (n.orelse, True)):
                if holds(n.test, negated):
                    exprs.append(list(node_span(arm)))
    return lines, exprs


def _def_key(item: ast.AST, cls: ast.ClassDef | None) -> str | None:
    """How calls of a top-level function or a method of a top-level class are keyed (`_flags`); None for one whose
    calls are not read (decorated, a classmethod, another dunder, a torch method name)."""
    if not isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) or not _plain(item):
        return None
    if cls is None:
        return item.name
    if item.name in _TORCH_METHODS or _is_classmethod(item):
        return None
    return cls.name if item.name == "__init__" else "()" if item.name == "__call__" \
        else None if item.name.startswith("__") else "." + item.name


def _forward_facts(tree: ast.Module) -> dict[str, Any]:
    """`_FACT_FORWARDS`: `params`, [code "p:<key>:<name>", index, default ("0" or "-"), if blocks, arms] of each
    parameter that defaults to a false constant or to nothing and that the function never rebinds; `attrs`, ["s:<class>:
    <X>", the codes of what the class stores in `self.X` (each a false constant or a parameter of the storing method),
    if blocks, arms]; `calls`, key -> the distinct argument codes of its calls ([positional codes], {keyword: code},
    `*` / `**` or a subclass's construction): "0" a false constant, "p:..." a parameter handed on, "s:..." `self.X`
    handed on, "1" anything else."""
    params: list[list[Any]] = []
    attrs: list[list[Any]] = []
    calls: dict[str, dict[str, list[Any]]] = {}

    def code(node: ast.expr, key: str | None, own: frozenset[str], owner: ast.ClassDef | None) -> str:
        if _false_constant(node):
            return _OFF
        if key and isinstance(node, ast.Name) and node.id in own:
            return f"p:{key}:{node.id}"
        attr = self_attr(node)
        if key and owner is not None and attr is not None:
            return f"s:{owner.name}:{attr}"
        return _ON

    def add_calls(scope: ast.AST, key: str | None, own: frozenset[str], owner: ast.ClassDef | None,
                  nodes: list[ast.AST] | None = None) -> None:
        for n in scope_nodes(scope) if nodes is None else nodes:
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)) and n is not scope:
                shadow = {a.arg for a in [*n.args.posonlyargs, *n.args.args, *n.args.kwonlyargs]}
                own = own - shadow      # (a nested definition's parameter of the same name is its own)
            if not isinstance(n, ast.Call):
                continue
            func = n.func
            name = func.id if isinstance(func, ast.Name) else "." + func.attr if isinstance(func, ast.Attribute) \
                else None
            if name is None or name in _BUILTINS:
                continue
            if name == "cls" and owner is not None:
                name = owner.name
            star = any(isinstance(a, ast.Starred) for a in n.args) or any(k.arg is None for k in n.keywords)
            positional = [code(a, key, own, owner) for a in n.args if not isinstance(a, ast.Starred)] \
                if not star else []
            keywords = sorted([k.arg, code(k.value, key, own, owner)] for k in n.keywords if k.arg is not None)
            shape = [positional, keywords, star]
            calls.setdefault(name, {})[repr(shape)] = shape
            if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
                # `module.f(...)` reaches the module's function `f` too
                calls.setdefault(func.attr, {})[repr(shape)] = shape

    for node in tree.body:
        cls = node if isinstance(node, ast.ClassDef) else None
        items = cls.body if cls is not None else [node]
        if cls is not None:
            for base in cls.bases:      # a subclass is built elsewhere, with any arguments
                if isinstance(base, ast.Name):
                    calls.setdefault(base.id, {})["*"] = [[], [], True]
        for item in items:
            key = _def_key(item, cls)
            if not isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                if cls is None:
                    add_calls(item, None, frozenset(), None)
                continue
            nodes = scope_nodes(item)      # (one walk of the definition for its stores, calls and switch blocks)
            stored = {n.id for n in nodes if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)}
            own = frozenset() if key is None else frozenset(
                arg.arg for arg, default, _ in _params(item, cls is not None)
                if arg.arg not in stored and (default is None or _false_constant(default)))
            add_calls(item, key, own, cls, nodes)
            branches = _branches(nodes) if own else []
            for arg, default, index in () if key is None else _params(item, cls is not None):
                if arg.arg in own:
                    lines, exprs = _switch_blocks(branches, lambda t, neg, a=arg.arg: _name_flag(t, a, neg))
                    params.append([f"p:{key}:{arg.arg}", index, _REQUIRED if default is None else _OFF,
                                   lines, exprs])
        if cls is not None:
            attrs.extend(_forward_attrs(cls))
    used = {c for shapes in calls.values() for p, k, _ in shapes.values() for c in [*p, *(v for _, v in k)]}
    used.update(c for a in attrs for c in a[1])
    params = [p for p in params if p[3] or p[4] or p[0] in used]
    attrs = [a for a in attrs if a[2] or a[3] or a[0] in used]
    out: dict[str, Any] = {}
    if params or attrs:
        out = {"params": params, "attrs": attrs}
    if calls:
        out["calls"] = {k: list(v.values()) for k, v in calls.items()}
    return out


def _forward_attrs(cls: ast.ClassDef) -> list[list[Any]]:
    """The `attrs` of `_forward_facts` for one class: each `self.X` its methods store only from a false constant or
    from a parameter of the storing method it never rebinds (none in the class body but a false constant)."""
    nodes = class_nodes = scope_nodes(cls)
    if any(self_attr(n) == "__dict__" or isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
           and n.func.id == "setattr" and n.args and isinstance(n.args[0], ast.Name) and n.args[0].id == "self"
           and not isinstance(n.args[1] if len(n.args) > 1 else None, ast.Constant) for n in nodes):
        return []       # `setattr(self, key, value)` over a mapping, `self.__dict__.update(...)`: any attribute
    sources: dict[str, set[str] | None] = {}
    for n in cls.body:
        if isinstance(n, (ast.Assign, ast.AnnAssign)):
            for t in n.targets if isinstance(n, ast.Assign) else [n.target]:
                if isinstance(t, ast.Name):
                    sources[t.id] = {_OFF} if _false_constant(n.value) else None
    for item in cls.body:
        if not isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        key = _def_key(item, cls)
        nodes = scope_nodes(item)
        stored = {n.id for n in nodes if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)}
        names = {a.arg for a in [*item.args.posonlyargs, *item.args.args, *item.args.kwonlyargs]} - stored
        plain = {id(n.targets[0]): n.value for n in nodes if isinstance(n, ast.Assign) and len(n.targets) == 1}
        for node in nodes:
            attr = self_attr(node) if isinstance(node, ast.Attribute) and not isinstance(node.ctx, ast.Load) else None
            if attr is None or sources.get(attr, set()) is None:
                continue
            value = plain.get(id(node))
            source = _OFF if _false_constant(value) else f"p:{key}:{value.id}" \
                if key and isinstance(value, ast.Name) and value.id in names else None
            found = sources.setdefault(attr, set())
            if source is None or found is None:
                sources[attr] = None
            else:
                found.add(source)
    out = []
    branches = _branches(class_nodes) if any(sources.values()) else []
    for attr, found in sorted(sources.items()):
        if found:
            lines, exprs = _switch_blocks(branches, lambda t, neg, a=attr: _self_flag(t, neg) == a)
            out.append([f"s:{cls.name}:{attr}", sorted(found), lines, exprs])
    return out


def lower_forwarded_flags(results: list, project: Any) -> int:
    """Findings in a block that runs only when a switch holds that nothing in the tree turns on, followed through the
    callers and attributes that hand it on (tq47a, heldout55's opentts: `Synthesizer(use_cuda=False)` built without
    `use_cuda`, `self.use_cuda = use_cuda`, `synthesis(..., use_cuda=self.use_cuda)`, `numpy_to_torch(x,
    cuda=use_cuda)` and `if cuda: return tensor.cuda()`), lowered to info: pd17's `flag-off` and pd40's
    `flag-never-set` readings where the value passes through parameters and `self.X`. A parameter is off when its
    function has call sites outside tests, is never handed on as a value, and every call passes it a false constant,
    leaves its false default, or hands on a switch that is off; an attribute when its class stores only false
    constants or parameters that are off, and no other class or file may set it (`_class_attributes_set`). Read to a
    fixed point from every candidate off. The count lowered."""
    facts = {r.path: project.calls(r.path) for r in results if r.path.endswith(".py")}
    if any(f is None for f in facts.values()):
        return 0
    spans: dict[str, list[tuple[Any, list[Any], list[Any]]]] = {}
    params: dict[str, tuple[int, str]] = {}
    attrs: dict[str, list[str]] = {}
    for r in results:
        fwd = (facts.get(r.path) or {}).get(_FACT_FORWARDS) or {}
        for name, index, default, lines, exprs in fwd.get("params", ()):
            # (methods of one name in several classes are one key: the same parameter at another place is unknown)
            params[name] = (index, default) if params.get(name, (index, default)) == (index, default) \
                else (-2, _REQUIRED)
            spans.setdefault(name, []).append((r, lines, exprs))
        for name, sources, lines, exprs in fwd.get("attrs", ()):
            attrs[name] = sources if name not in attrs else [_ON]
            spans.setdefault(name, []).append((r, lines, exprs))

    def inside(f: Any, lines: list[Any], exprs: list[Any]) -> bool:
        return any(a <= f.line <= b for a, b in lines) or \
            any((l1, c1) <= (f.line, (f.col or 1) - 1) < (l2, c2) for l1, c1, l2, c2 in exprs)

    if not any(inside(f, lines, exprs) for found in spans.values() for r, lines, exprs in found for f in r.findings):
        return 0
    sites: dict[str, list[tuple[str, list[Any]]]] = {}
    refs: set[str] = set()
    for rel, f in facts.items():
        for key, shapes in ((f or {}).get(_FACT_FORWARDS) or {}).get("calls", {}).items():
            sites.setdefault(key, []).extend((rel, s) for s in shapes)
        refs.update((f or {}).get(FACT_REFS) or ())
    # a class a config builds by its path (Hydra's `_target_: synth.Synthesizer`) gets the config's arguments:
    # unknown, as a subclass's construction (review47 item 4)
    for name in _config_built_classes(project, {n[2:].rsplit(":", 1)[0] for n in params}):
        sites.setdefault(name, []).append(("", [[], [], True]))
    set_elsewhere = _class_attributes_set(project, ["self:" + a[2:] for a in attrs])

    def param_off(name: str, off: set[str]) -> bool:
        index, default = params[name]
        key, param = name[2:].rsplit(":", 1)
        found = sites.get(key, [])
        if index == -2 or key == "()" or key in refs or not any(not _SIDE.search(rel) for rel, _ in found):
            return False
        for _, (positional, keywords, star) in found:
            given = dict(keywords).get(param) or (positional[index] if 0 <= index < len(positional) else None)
            if star or (given is None and default == _REQUIRED) or given not in (None, _OFF) and given not in off:
                return False
        return True

    off = set(params) | {a for a in attrs if "self:" + a[2:] not in set_elsewhere}
    changed = True
    while changed:
        changed = False
        for name in sorted(off):
            ok = param_off(name, off) if name.startswith("p:") else \
                all(s == _OFF or s in off for s in attrs[name])
            if not ok:
                off.discard(name)
                changed = True
    lowered = 0
    for name in off:
        what = name.rsplit(":", 1)[1] if name.startswith("p:") else "self." + name.rsplit(":", 1)[1]
        where = name[2:].rsplit(":", 1)[0].lstrip(".")
        for r, lines, exprs in spans.get(name, ()):
            lowered += _lower(r, lambda f, a=lines, b=exprs: inside(f, a, b), _FWD_CONTEXT,
                              _FWD_NOTE.format(what, where))
    return lowered


_OFF_CONTEXT = "autocast-off"
_OFF_NOTE = ("this autocast is never enabled in this tree ({}): it opens no mixed-precision region, so its CUDA spelling "
             "changes nothing on Ascend; name the NPU when you turn it on")
_CONFIG_SUFFIXES = (".yaml", ".yml", ".json", ".toml", ".cfg", ".ini")


def _setting_names(tree: ast.Module) -> tuple[list[str], list[str]]:
    """(the identifiers the file may set to something other than a false constant, those it sets only to one), as
    `_attributes_set_on` reads them: a store, a parameter or keyword of that name, the name as a string anywhere but as
    hasattr's / getattr's attribute argument (attribute_sets.setting_nodes), or a command-line option spelling it
    (`--mixed-precision`: on)."""
    probed = {id(n.args[1]) for n in module_nodes(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
              and n.func.id in ("hasattr", "getattr") and len(n.args) >= 2}
    off = {id(t) for n in module_nodes(tree) if isinstance(n, (ast.Assign, ast.AnnAssign)) and _false_constant(n.value)
           for t in (n.targets if isinstance(n, ast.Assign) else [n.target])}
    on: set[str] = set()
    every: set[str] = set()
    for n in module_nodes(tree):
        name = n.attr if isinstance(n, ast.Attribute) and not isinstance(n.ctx, ast.Load) else \
            n.id if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load) else \
            n.arg if isinstance(n, (ast.arg, ast.keyword)) else \
            n.value if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in probed else None
        if name and name.isidentifier():
            every.add(name)
            if id(n) not in off:
                on.add(name)
        if isinstance(n, ast.Constant) and isinstance(n.value, str) and n.value.startswith("-"):
            option = n.value.lstrip("-").replace("-", "_")
            if option.isidentifier():
                on.add(option)
    return sorted(on), sorted(every - on)


def _imported_names(tree: ast.Module) -> list[str]:
    """What the file may take from another module by name: `<module's last part>:<name>` of each `from M import name`
    (`:*` for a star import), and `<module>.<name>` of each attribute read through a module the file imports
    (`raft.autocast`); `_imported_elsewhere` asks it."""
    modules = import_bound_names(tree)   # the modules (and objects) a call may go through
    out: set[str] = set()
    for n in module_nodes(tree):
        if isinstance(n, ast.ImportFrom) and n.module:
            out.update(f"{n.module.rsplit('.', 1)[-1]}:{a.name}" for a in n.names)
        elif isinstance(n, ast.Attribute) and isinstance(n.ctx, ast.Load):
            base = n.value.attr if isinstance(n.value, ast.Attribute) else \
                n.value.id if isinstance(n.value, ast.Name) and n.value.id in modules else None
            if base and (dotted := ast_dotted(n.value)) and dotted.split(".")[0] in modules:
                out.add(f"{base}.{n.attr}")
    return sorted(out)


# a config key naming a class to build by its dotted path (Hydra / OmegaConf `_target_`, Lightning CLI `class_path`)
_CONFIG_TARGET = re.compile(rb"""["']?(?:_target_|class_path)["']?\s*[:=]\s*["']?([A-Za-z_][\w.]*)""")


def _config_built_classes(project: Any, names: set[str]) -> set[str]:
    """Of `names` (classes and functions), those a config file of the tree builds by path (`_target_: a.b.Name`)."""
    from auditor.source import SourceError
    from auditor.static.project_imports import read_counted

    out: set[str] = set()
    for rel, path in project.paths.items():
        if rel.lower().endswith(_CONFIG_SUFFIXES) and names - out:
            try:
                data = read_counted(project, path)
            except (OSError, SourceError):
                continue
            out.update(n for m in _CONFIG_TARGET.findall(data) if (n := m.decode().rsplit(".", 1)[-1]) in names)
    return out


def _attributes_set_on(project: Any, names: set[str]) -> set[str]:
    """The attributes of `names` that the tree may set to something other than a false constant, or never sets at all
    (then a caller outside the tree does): a store, a keyword or parameter of that name, the name as a string (a
    config dict's key, `setattr`), a command-line option spelling it (`--mixed_precision`, `--mixed-precision`), or
    the word in a config file. All of them when a file cannot be read. A Python file's part comes from its facts
    (`_setting_names`; pd29: a warm run parses nothing), a file without them is read as before."""
    from auditor.source import SourceError
    from auditor.static.project_imports import read_counted

    on: set[str] = set()
    set_off: set[str] = set()
    for rel, path in project.paths.items():
        python = rel.endswith(".py")
        if not (python or rel.lower().endswith(_CONFIG_SUFFIXES)):
            continue
        facts = project.calls(rel) if python else None
        if facts is not None and not facts.get(FACT_UNPARSED):
            on.update(names & set(facts.get(_FACT_SETS) or ()))
            set_off.update(names & set(facts.get(_FACT_SETS_OFF) or ()))
            continue
        try:
            data = read_counted(project, path)
        except (OSError, SourceError):
            return set(names)
        named = [n for n in names - on if n.encode() in data or n.replace("_", "-").encode() in data]
        if not named:
            continue
        source = project.source(rel) if python else None
        if source is None:
            on.update(named)        # a config file naming it, or a Python file not parsed
            continue
        sets, sets_off = _setting_names(source[1])
        on.update(set(named) & set(sets))
        set_off.update(set(named) & set(sets_off))
    return on | (names - set_off)


def _imported_elsewhere(project: Any, rel: str, name: str) -> bool:
    """Whether another Python file of the tree may take `name` from module `rel` (`from .raft import autocast`, `from
    .raft import *`, `raft.autocast`): then the alias may be called there, enabled. From the files' facts
    (`_imported_names`); a file without them is parsed; True when a file cannot be read or parsed."""
    stem = rel.rsplit("/", 1)[-1].removesuffix(".py")
    wanted = {f"{stem}:{name}", f"{stem}:*", f"{stem}.{name}"}
    for other in project.paths:
        if other.endswith(".py") and other != rel:
            facts = project.calls(other)
            if facts is None or facts.get(FACT_UNPARSED):
                source = project.source(other)
                if source is None:
                    return True
                facts = {FACT_IMPORTS: _imported_names(source[1])}
            if wanted & set(facts.get(FACT_IMPORTS) or ()):
                return True
    return False


def _parameters_turned_on(results: list, project: Any, params: list[str]) -> set[str]:
    """The `param:<name>:<index>:<key>` autocast flags (`_autocasts`) that some call in the tree may turn on: a call
    passing the keyword anything but a false constant, the name as a string (a `**kwargs` dict's key, `setattr`), or
    a call of the function (`key`, `.forward` for a `forward`) with `*args` / `**kwargs` or enough positional
    arguments to reach it. All of them when a file's facts are missing. A module's `forward` is also called through
    the instance (`model(x)`), whose positional arguments are not resolved: a flag passed there by keyword counts."""
    facts = {r.path: project.calls(r.path) for r in results if r.path.endswith(".py")}
    if any(f is None for f in facts.values()):
        return set(params)
    switched = {kw for f in facts.values() for kw, turned in (f.get(_FACT_SWITCHES) or {}).items() if turned}
    strings = {ref[1:] for f in facts.values() for ref in f.get(FACT_REFS) or () if ref.startswith(".")}
    keys = {how.split(":")[3]: ".forward" if how.split(":")[3] == "()" else how.split(":")[3] for how in params}
    shapes, _ = _call_sites(results, facts, set(keys.values()))
    out: set[str] = set()
    for how in params:
        _, name, index, key = how.split(":")
        sites = shapes.get(keys[key], [])
        if name in switched or name in strings or any(s[2] or 0 <= int(index) < s[4] for _, s in sites):
            out.add(how)
    return out


def lower_off_autocasts(results: list, project: Any) -> int:
    """Device and precision findings on an autocast that is never enabled in the tree (`_autocasts`, pd27, heldout27:
    RAFT's `with autocast(enabled=self.args.mixed_precision):` where the one place building its args sets
    `args.mixed_precision = False`; HunyuanVideo's `enabled=vae_autocast_enabled` with `vae_autocast_enabled = ... and
    False`), and on a module-level alias of autocast every call of which is such, lowered to info: a region that never
    opens neither fails nor differs on Ascend. An autocast whose flag some file may turn on keeps its severity. The
    count lowered."""
    wanted: list[tuple[Any, list[Any]]] = []
    for r in results:
        f = project.calls(r.path) if r.path.endswith(".py") and r.findings else None
        wanted += [(r, entry) for entry in (f or {}).get(_FACT_AUTOCASTS) or ()]
    if not wanted:
        return 0
    attrs = {how.partition(":")[2] for _, (_, _, how, *_) in wanted if how.startswith("attr:")}
    on = _attributes_set_on(project, attrs) if attrs else set()
    params = [how for _, (_, _, how, *_) in wanted if how.startswith("param:")]
    on |= _parameters_turned_on(results, project, params) if params else set()
    owned = [how for _, (_, _, how, *_) in wanted if how.startswith("self:")]
    on |= _class_attributes_set(project, owned) if owned else set()
    lowered = 0
    off_calls: dict[str, set[int]] = {}
    for r, (first, last, how, *rest) in wanted:
        if how == "alias" or how in on or how.startswith("attr:") and how[5:] in on:
            continue
        off_calls.setdefault(r.path, set()).add(first)
        why = "`enabled` is always false here" if how == "off" else \
            f"no call in it passes `{how.split(':')[1]}` but its false default" if how.startswith("param:") else \
            "`{}` sets `self.{}` only to False and nothing outside it sets it".format(*how.split(":")[1:]) \
            if how.startswith("self:") else \
            f"no file of it sets `{how[5:]}` but to False"
        lowered += _lower(r, lambda f, a=first, b=last: a <= f.line <= b and f.category in ("device", "precision"),
                          _OFF_CONTEXT, _OFF_NOTE.format(why))
    for r, (first, last, how, *rest) in wanted:
        if how == "alias" and rest and set(rest[0]) <= off_calls.get(r.path, set()) \
                and not _imported_elsewhere(project, r.path, rest[-1]):
            lowered += _lower(r, lambda f, a=first, b=last: a <= f.line <= b and f.category in ("device", "precision"),
                              _OFF_CONTEXT, _OFF_NOTE.format("every call of this alias passes an `enabled` that is "
                                                             "always false"))
    return lowered
