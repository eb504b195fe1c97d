"""What a file binds, read with the fast `ast` parser before any libcst work: import aliases
(`import torch.cuda as tc`, `from apex.optimizers import FusedAdam as FA`, imports inside functions and
try/except blocks), module-level aliases of imported modules (`amp = torch.cuda.amp`), and names bound to
strings (`BACKEND = "nccl"`, `DEV = f"cuda:{rank}"`) so that constants can be followed to where they are used."""
from __future__ import annotations

import ast
import re
import sys
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

from auditor.astnodes import line_span, module_nodes_of, scope_nodes, walk_list
from auditor.static.device_values import DeviceReader
from auditor.static.hand_builds import compiles_cuda_by_hand, compiles_cuda_program, toolkit_configs
from auditor.static.host_values import host_arrays, host_only_file
from auditor.static.astutil import ast_dotted, bound_names, module_nodes, self_attr
from auditor.static.unresolved_extensions import unresolved_extension_modules

# The most values a folded string may take: a concatenation past it is not followed
MAX_FOLDED = 64
HOLE = "\x00"   # stands for an unknown part of a folded string (an f-string field, a variable)


@dataclass
class CastFallbacks:
    """The bf16 fallbacks met so far in the walk of one file (dtype_requirements.py): `if dtype == torch.bfloat16:
    x = x.to(torch.float32)` is a cast up, a later `if dtype == torch.bfloat16: x = x.to(dtype)` its cast back, which
    is a guard only after a cast up above it in the file (alone, `model = model.to(dtype)` chooses nothing). Its life
    is the file's walk: one per FileContext, which a file's audit builds afresh; it lives there, not on the visitor,
    because the slices of a file are walked in source order by visitors of their own."""
    cast_up_met: bool = False

    def admit(self, guard: str | None) -> str | None:
        """`guard` (dtype_requirements.guard_kind), or None for a cast back with no cast up before it."""
        return None if guard == "cast-back" and not self.cast_up_met else guard

    def met(self, guard: str | None, required: list[int]) -> None:
        """The `if` just read is `guard` over the `required` dtype nodes: a cast up, if it is one, is now met."""
        self.cast_up_met = self.cast_up_met or bool(required) and guard == "cast"


@dataclass
class FileContext:
    aliases: dict[str, str] = field(default_factory=dict)          # local name -> qualified name
    # local function -> qualified names of its decorators, innermost first (`@triton.jit` -> triton.jit)
    decorated: dict[str, list[str]] = field(default_factory=dict)
    constants: dict[str, set[str]] = field(default_factory=dict)   # name -> possible string values, any scope
    # where each binding is visible: (first line, last line, values); module level spans the whole file
    scopes: dict[str, list[tuple[int, int, frozenset[str]]]] = field(default_factory=dict)
    star_imports: list[str] = field(default_factory=list)          # `from pynvml import *`
    module_functions: frozenset[str] = frozenset()                # top-level `def`s (getattr fallbacks, t14k)
    # bare modules the file calls like a compiled extension (unresolved_extensions.py, tk37)
    unresolved_extensions: frozenset[str] = frozenset()
    # qualified names of the attribute chains the file reads through a module it imports whole (`import encoding` ...
    # `encoding.parallel.DataParallelModel`): what an `import_reached` rule reports at the import (tk41)
    reached_through_imports: frozenset[str] = frozenset()
    # names (and `self.` attributes) bound to a device probe's answer: `gpu = torch.cuda.get_device_name(0)`,
    # `gpu_state = subprocess.check_output(["nvidia-smi", ...])` (NPU948, tk43)
    probe_names: frozenset[str] = frozenset()
    # those bound to torch.cuda's own query (`device_name = torch.cuda.get_device_name()`): it names no Ascend model
    # (tq47a)
    cuda_probe_names: frozenset[str] = frozenset()
    # a build script that hands .cu sources to nvcc itself (hand_builds.py, tk46): whether it does, and the names bound
    # to its toolkit locator's answer (`CUDA = locate_cuda()`)
    hand_cuda_build: bool = False
    toolkit_configs: frozenset[str] = frozenset()
    # a file that compiles a program against the CUDA runtime itself (`g++ x.cc ... -lcudart`; hand_builds.py, tk47)
    cuda_program_build: bool = False

    def parameter_at(self, name: str, line: int) -> bool:
        """Whether `name` at `line` is a parameter of the enclosing function rather than the module an import
        binds: `def replace_unet_modules(unet, mem_eff_attn, xformers, sdpa): ... elif xformers:` tests the
        caller's flag, whatever `import xformers` the file holds elsewhere; an import of the name inside that
        function at or above the line rebinds it (`import xformers.ops` under the flag's test)."""
        for first, last in self.parameter_spans.get(name, ()):
            if first <= line <= last and not any(first <= at <= line for at in self.import_lines.get(name, ())):
                return True
        return False

    def local_at(self, name: str, line: int) -> bool:
        """Whether `name` at `line` is a local variable of the enclosing function rather than the module an import
        binds: a function that assigns the name (`checkpoint = torch.load(path)` in FlagAI's `load_weights`, beside
        the module's `from deepspeed...checkpointing import checkpoint`) makes it local in its whole body (Python's
        scoping: the compiler binds a name assigned anywhere in a function to the function, unless declared `global`
        or `nonlocal`); an import of the name inside that function at or above the line rebinds it (tq37)."""
        for first, last in self.local_spans.get(name, ()):
            if first <= line <= last and not any(first <= at <= line for at in self.import_lines.get(name, ())):
                return True
        return False

    def bound_in_function(self, name: str, line: int) -> bool:
        """Whether the function around `line` binds `name` to a string value of its own (not only the module)."""
        return any(first <= line <= last and (first, last) != _WHOLE_FILE for first, last, _ in self.scopes.get(name, ()))

    def visible_values(self, name: str, line: int) -> set[str]:
        """Values `name` may hold at `line`: module-level bindings plus those of the enclosing function."""
        out: set[str] = set()
        shadowed = any(first <= line <= last for first, last in self.parameter_spans.get(name, ()))
        for first, last, values in self.scopes.get(name, ()):
            if first <= line <= last and not (shadowed and (first, last) == _WHOLE_FILE):
                out |= values
        return out

    # name -> body spans of the functions that take a parameter of that name: there the module's binding is not
    # the value (`def forward(self, batch, device): ... .to(device)` beside a `__main__` block's `device = 'cuda'`;
    # t11y, tuned on heldout16)
    parameter_spans: dict[str, list[tuple[int, int]]] = field(default_factory=dict)
    # name -> body spans of the functions that assign the name in their own scope (local_at)
    local_spans: dict[str, list[tuple[int, int]]] = field(default_factory=dict)
    # local name -> lines of the import statements that bind it (any scope)
    import_lines: dict[str, list[int]] = field(default_factory=dict)
    # imported names the file also binds by assignment, loop or `with` target: `import model` then
    # `model = model.RNNModel(...)` (awd-lstm-lm, test22), after which `model.cuda()` is the object's method
    reassigned: set[str] = field(default_factory=set)

    # every target a local name is imported as (`try: from apex... import X` / `except: from torch... import X`)
    bindings: dict[str, list[str]] = field(default_factory=dict)
    # `self.rms_norm_fn = rms_norm_fn` (an imported function kept on the instance): attribute -> qualified name
    self_attrs: dict[str, str] = field(default_factory=dict)

    # objects a CUDA-only package hands out, kept in a name or on self (`self.nvsmi = nvidia_smi.getInstance()`):
    # a use below them (`self.nvsmi.DeviceQuery(...)`) is a use of the package; see adopt_local_refs
    instances: dict[str, str] = field(default_factory=dict)
    # CuPy / PyCUDA kernel objects (t32a, _bind_kernel_objects): a module-level name or `self.` attribute -> (kind,
    # builder), kind "kernel" (called to launch) or "module" (`.get_function(name)` hands out a kernel); a function
    # that returns one (`@cupy.memoize def cupy_launch(...): return cupy.cuda.compile_with_cache(src).get_function(f)`)
    kernel_objects: dict[str, tuple[str, str]] = field(default_factory=dict)
    kernel_attrs: dict[str, tuple[str, str]] = field(default_factory=dict)
    kernel_loaders: dict[str, tuple[str, str]] = field(default_factory=dict)
    # a function's local name that every assignment in it binds to one (`f = load_kernel(...)` in each forward /
    # backward of involution's and SAN's CuPy ops): name -> [(first line, last line of the function, (kind, builder))]
    kernel_locals: dict[str, list[tuple[int, int, tuple[str, str]]]] = field(default_factory=dict)

    def kernel_local_at(self, name: str, line: int) -> bool:
        """Whether `name` at `line` is a function's local kernel object (kernel_locals)."""
        return any(first <= line <= last for first, last, _ in self.kernel_locals.get(name, ()))
    self_instances: dict[str, str] = field(default_factory=dict)
    # candidates read by build_context, kept or dropped by adopt_local_refs: (name, qualified name, kind), kind
    # "alias" (`c = torch.cuda` inside a function), "self_alias" (`self.mod = torch.cuda`), "instance" or
    # "self_instance"
    local_refs: list[tuple[str, str, str]] = field(default_factory=list)
    # host values for the host-sync hint (auditor/static/host_values.py): a file of numpy / pandas without torch,
    # and names every assignment of which in their function binds a numpy / pandas value
    host_only: bool = False
    # module-level names bound by assignment to a qualified name (`FP8_WEIGHT_DTYPE = torch.float8_e4m3fn`), not by
    # an import: a dtype is reported where it is written, not at each use of the constant holding it
    assigned_aliases: set[str] = field(default_factory=set)
    host_arrays: dict[str, list[tuple[int, int]]] = field(default_factory=dict)
    # the file sets a default device (`torch.set_default_device`, `with torch.device(...)`): torch factories without
    # `device=` may build on the accelerator, so they make no host values (host_values.py, t11s)
    # (None: not read yet; read on the first factory met, from `module`)
    default_device_set: bool | None = None
    # host_values.quiet_sync_lines, read on the first in-loop hint: (name, first, last) numpy-type guards, once lines
    host_sync_spans: tuple[list[tuple[str, int, int]], set[int]] | None = None
    # device_values.DeviceReader of `module`, made on the first in-loop hint (the positive reading of NPU703)
    device_reader: DeviceReader | None = None
    # names of the annotated fields of the file's `@dataclass` classes (`dataclass_fields`; None: not read yet, read on
    # the first annotated assignment met, from `module`, once per file however many slices the visitor sees)
    dataclass_field_names: frozenset[str] | None = None
    switch_fed_params: frozenset[tuple[str, str]] | None = None    # params_fed_to_backend_switches, read once
    module: ast.Module | None = field(default=None, repr=False)
    cast_fallbacks: CastFallbacks = field(default_factory=CastFallbacks)
    # module-level classes of the file (bound once) -> the qualified name of their first base, where it resolves:
    # `class _DataParallel(DataParallel)` ... `_DataParallel(model, ids)` makes a DataParallel (visitor.visit_Call)
    subclass_of: dict[str, str] = field(default_factory=dict)

    def bind(self, local: str, qual: str) -> None:
        """The first import of a name wins for resolution: in try/except and if/else imports the first
        branch is the library being used; the others are kept for the prefilter."""
        self.aliases.setdefault(local, qual)
        self.bindings.setdefault(local, []).append(qual)

    def resolve_all(self, dotted: str, call: bool = False) -> list[str]:
        """Every qualified name `dotted` may stand for, first import first (`te` imported from two libraries
        in the branches of an if/else). Objects of a CUDA-only package (`instances`) only as the callee of a
        call (`nvsmi.DeviceQuery(...)`), not when a field of a result is read (`util.gpu`)."""
        head, _, rest = dotted.partition(".")
        if head == "self" and rest:
            attr, _, below = rest.partition(".")
            if attr in self.self_attrs:
                return [f"{self.self_attrs[attr]}.{below}" if below else self.self_attrs[attr]]
            if call and below and attr in self.self_instances:
                return [f"{self.self_instances[attr]}.{below}"]
        if call and rest and head in self.instances and head not in self.aliases:
            return [f"{self.instances[head]}.{rest}"]
        targets = self.bindings.get(head) or ([self.aliases[head]] if head in self.aliases else [])
        return [f"{t}.{rest}" if rest else t for t in dict.fromkeys(targets)]

    def resolve(self, dotted: str) -> str | None:
        head, _, rest = dotted.partition(".")
        target = self.aliases.get(head)
        if target is None:
            return None
        return f"{target}.{rest}" if rest else target


def dataclass_fields(tree: ast.Module) -> frozenset[str]:
    """Names of the annotated fields (`cuda: bool = True`) of the module's `@dataclass` / `@dataclasses.dataclass(...)`
    classes, nested ones included."""
    def is_dataclass(decorator: ast.expr) -> bool:
        target = decorator.func if isinstance(decorator, ast.Call) else decorator
        return isinstance(target, ast.Name) and target.id == "dataclass" or \
            isinstance(target, ast.Attribute) and target.attr == "dataclass"

    names: set[str] = set()
    for node in module_nodes(tree):
        if isinstance(node, ast.ClassDef) and any(is_dataclass(d) for d in node.decorator_list):
            names.update(s.target.id for s in node.body
                         if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name) and s.value is not None)
    return frozenset(names)


def params_fed_to_backend_switches(ctx: FileContext, tree: ast.Module) -> frozenset[tuple[str, str]]:
    """(function name, parameter) pairs where the function writes the parameter straight into a torch.backends switch
    (`def run_training(..., cudnn_benchmark=True): torch.backends.cudnn.benchmark = cudnn_benchmark`, pytracking): the
    switch line is the finding, the parameter's default is not one of its own (lead decision 7; t26b)."""
    out: set[tuple[str, str]] = set()
    # (none without such an assignment anywhere in the file: each function's own walk below is then skipped)
    if not any(isinstance(n.value, ast.Name) and any(
            (ctx.resolve(ast_dotted(t) or "") or "").startswith("torch.backends.") for t in n.targets)
            for n in module_nodes_of(tree, ast.Assign)):
        return frozenset(out)
    for fn in module_nodes(tree):
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        params = {a.arg for a in (*fn.args.args, *fn.args.kwonlyargs)}
        for node in scope_nodes(fn):
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Name) and node.value.id in params and any(
                    (ctx.resolve(ast_dotted(t) or "") or "").startswith("torch.backends.") for t in node.targets):
                out.add((fn.name, node.value.id))
    return frozenset(out)


def _probes_accelerator(node: ast.AST) -> bool:
    """torch.accelerator / current_accelerator(): the backend-neutral probe, the current accelerator (npu on Ascend)."""
    return any(isinstance(n, ast.Attribute) and n.attr in ("accelerator", "current_accelerator")
               or isinstance(n, ast.Name) and n.id == "current_accelerator" for n in walk_list(node))


def fold_ast(node: ast.AST, constants: dict[str, set[str]]) -> set[str] | None:
    """Possible string values of an expression, or None when it is not a string we can follow."""
    if isinstance(node, ast.Constant):
        return {node.value} if isinstance(node.value, str) else None
    if isinstance(node, ast.JoinedStr):
        out = ""
        for part in node.values:
            if isinstance(part, ast.Constant) and isinstance(part.value, str):
                out += part.value
            else:
                out += HOLE
        return {out}
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left = fold_ast(node.left, constants)
        right = fold_ast(node.right, constants)
        if left is None and right is None or len(left or ()) * len(right or ()) > MAX_FOLDED:
            return None     # (`prompt = system_prompt + prompt` again and again: the product would explode)
        return {a + b for a in (left or {HOLE}) for b in (right or {HOLE})}
    if isinstance(node, ast.IfExp):
        a, b = fold_ast(node.body, constants), fold_ast(node.orelse, constants)
        if a is None and b is None:
            return None
        if (a is None or b is None) and _probes_accelerator(node.body if a is None else node.orelse):
            return None     # `torch.accelerator.current_accelerator().type if ... else "cuda"`: npu on Ascend
        return (a or set()) | (b or set())
    if isinstance(node, ast.Name) and node.id in constants:
        return constants[node.id]
    return None


_WHOLE_FILE = (1, 1 << 30)


def _stmts(body: list[ast.stmt], scope: tuple[int, int] = _WHOLE_FILE):
    """(statement, scope) for every statement, descending into compound statements but not expressions;
    scope is the line span of the enclosing function, or the whole file."""
    for stmt in body:
        yield stmt, scope
        inner = scope
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            inner = line_span(stmt)
        for name in ("body", "orelse", "finalbody"):
            sub = getattr(stmt, name, None)
            if isinstance(sub, list) and sub and isinstance(sub[0], ast.stmt):
                yield from _stmts(sub, inner)
        for handler in getattr(stmt, "handlers", ()) or ():
            yield from _stmts(handler.body, inner)
        for case in getattr(stmt, "cases", ()) or ():
            yield from _stmts(case.body, inner)


_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)


def _comprehension_loops(comprehensions: list, bodies: list) -> list[tuple[ast.comprehension, tuple[int, int],
                                                                            tuple[int, int]]]:
    """(generator, the comprehension's lines, the scope `_stmts` gives its statement: the innermost function's
    line span, or the whole file) of each comprehension (tq52a)."""
    spans = [line_span(fn) for fn, _ in bodies]
    out: list[tuple[ast.comprehension, tuple[int, int], tuple[int, int]]] = []
    for comp in comprehensions:
        lines = (comp.lineno, comp.end_lineno or comp.lineno)
        holding = [s for s in spans if s[0] <= lines[0] and lines[1] <= s[1]]
        scope = max(holding, key=lambda s: s[0]) if holding else _WHOLE_FILE
        out.extend((gen, lines, scope) for gen in comp.generators)
    return out


def version_test(test: ast.expr) -> bool:
    """A test on a release (`torch.__version__ >= "2"`, `TORCH_VERSION < (1, 10)`, `version.parse(...)`,
    `sys.version_info`) that names no device."""
    names = [n.id if isinstance(n, ast.Name) else n.attr for n in walk_list(test) if isinstance(n, (ast.Name, ast.Attribute))]
    return any("version" in n.lower() for n in names) and not any(
        w in n.lower() for n in names for w in ("cuda", "npu", "device", "gpu", "available"))


def _literal_release(node: ast.expr) -> bool:
    """`"2.5.0"`, `(1, 10)`, `version.parse("2.5.0")`, `Version("2.4")`: a release written out."""
    if isinstance(node, ast.Call):
        return bool(node.args) and all(_literal_release(a) for a in node.args)
    if isinstance(node, ast.Tuple):
        return all(_literal_release(e) for e in node.elts)
    return isinstance(node, ast.Constant) and isinstance(node.value, (str, int, float))


def older_release_arm(stmt: ast.If) -> list[ast.stmt]:
    """The arm of `if version.parse(torch.__version__) >= version.parse("2.5.0"): ... else: ...` taken only on the
    older releases (the `else` of a `>=` / `>` test, the body of a `<` / `<=` one), or [] when the test compares no
    installed release with a written one (tq55b: the `torch.cuda.amp.custom_bwd` fallback beside
    `torch.amp.custom_bwd(device_type="cuda")`)."""
    test = stmt.test
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and version_test(test)):
        return []
    left, right, op = test.left, test.comparators[0], test.ops[0]
    if _literal_release(left) == _literal_release(right):
        return []
    newer_first = isinstance(op, (ast.Gt, ast.GtE)) if _literal_release(right) else isinstance(op, (ast.Lt, ast.LtE))
    older_first = isinstance(op, (ast.Lt, ast.LtE)) if _literal_release(right) else isinstance(op, (ast.Gt, ast.GtE))
    return stmt.orelse if newer_first else stmt.body if older_first else []


# the oldest torch a torch_npu release supports: torch_npu's first line is v1.11.0 (its README installs
# `torch==1.11.0`, https://gitcode.com/Ascend/pytorch/blob/v1.11.0/README.md; the version table of
# https://gitcode.com/Ascend/pytorch lists no older branch)
NPU_OLDEST_TORCH = (1, 11)
_RELEASE = re.compile(r"^\s*(\d+)\.(\d+)")


def _written_release(node: ast.expr) -> tuple[int, int] | None:
    """(major, minor) of a release written out: `"1.6"`, `version.parse("1.6.0")`, `(1, 6)`."""
    if isinstance(node, ast.Call) and node.args:
        return _written_release(node.args[0])
    if isinstance(node, ast.Tuple) and len(node.elts) >= 2:
        parts = [e.value for e in node.elts[:2] if isinstance(e, ast.Constant) and type(e.value) is int]
        return (parts[0], parts[1]) if len(parts) == 2 else None
    if isinstance(node, ast.Constant) and isinstance(node.value, (str, float)):
        m = _RELEASE.match(str(node.value))
        return (int(m.group(1)), int(m.group(2))) if m else None
    return None


def _torch_release(node: ast.expr) -> bool:
    """`torch.__version__`, `version.parse(torch.__version__)`, `TORCH_VERSION`: torch's installed release."""
    return any(ast_dotted(n) == "torch.__version__" or isinstance(n, ast.Name) and n.id.lower().lstrip("_") in (
        "torch_version", "torch_ver") for n in ast.walk(node))


def unsupported_release_arm(stmt: ast.If) -> list[ast.stmt]:
    """`older_release_arm` of a test on torch's own release whose written release is older than any torch a torch_npu
    supports (`if version.parse(torch.__version__) < version.parse("1.6"): from apex import amp; _use_apex = True`,
    VL-T5's trainers; tq56a): no Ascend install takes that arm. [] otherwise."""
    older = older_release_arm(stmt)
    if not older:
        return []
    test = stmt.test
    sides = (test.left, test.comparators[0]) if isinstance(test, ast.Compare) else ()
    written = next((r for r in map(_written_release, sides) if r is not None), None)
    installed = any(_torch_release(side) and not _literal_release(side) for side in sides)
    return older if installed and written is not None and written < NPU_OLDEST_TORCH else []


def unsupported_release_flag_arms(tree: ast.Module) -> list[tuple[int, int]]:
    """The module-level arms `unsupported_release_arm` gives, and the arms of every `if` / `elif` testing a flag that
    only such an arm sets True (`_use_apex = False` at the top, `_use_apex = True` in the torch < 1.6 arm, then
    `elif self.args.fp16 and _use_apex:` around `amp.scale_loss`): code no Ascend install runs."""
    arms = [arm for stmt in tree.body if isinstance(stmt, ast.If) for arm in [unsupported_release_arm(stmt)] if arm]
    if not arms:
        return []
    spans = [(arm[0].lineno, line_span(arm[-1])[1]) for arm in arms]

    def sets(stmt: ast.stmt, value: bool) -> set[str]:
        return {t.id for t in getattr(stmt, "targets", ()) if isinstance(t, ast.Name)} \
            if isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Constant) and stmt.value.value is value \
            else set()

    inside = {id(s) for arm in arms for s in arm}
    flags = set().union(*(sets(s, True) for arm in arms for s in arm))
    flags &= set().union(*(sets(s, False) for s in tree.body))
    # a flag some other line sets (to anything but False) may hold True on a current torch
    flags -= {t.id for s in module_nodes(tree) if id(s) not in inside and isinstance(s, ast.Assign)
              and not sets(s, False) for t in s.targets if isinstance(t, ast.Name)}
    if not flags:
        return spans

    def tests_flag(test: ast.expr) -> bool:
        values = test.values if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And) else [test]
        return any(isinstance(v, ast.Name) and v.id in flags for v in values)

    return spans + [(n.body[0].lineno, line_span(n.body[-1])[1]) for n in module_nodes(tree)
                    if isinstance(n, ast.If) and tests_flag(n.test)]


# calls that answer which device model is present (NPU948, tk43): torch's and NVML's device-name queries
DEVICE_NAME_PROBES = frozenset({"get_device_name", "get_device_properties", "nvmlDeviceGetName"})


def reads_probe(node: ast.AST, names: frozenset[str] | set[str]) -> bool:
    """The expression holds what a device probe answered: a device-name query (`torch.cuda.get_device_name(0)`,
    `get_device_properties(i).name`, NVML's `nvmlDeviceGetName(h)`), an nvidia-smi run, or one of `names`."""
    for n in ast.walk(node):
        if isinstance(n, ast.Call):
            func = n.func
            last = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
            if last in DEVICE_NAME_PROBES:
                return True
        elif isinstance(n, ast.Constant) and isinstance(n.value, (str, bytes)) and \
                "nvidia-smi" in (n.value if isinstance(n.value, str) else n.value.decode("latin-1")):
            return True
        elif isinstance(n, (ast.Name, ast.Attribute)) and ast_dotted(n) in names:
            return True
    return False


def _asks_probe(tree: ast.Module) -> bool:
    """Whether the file holds a device probe at all (a device-name query or an nvidia-smi string): without one,
    `reads_probe` answers False for every expression until some name is bound to a probe's answer, so no name is."""
    for n in module_nodes(tree):
        if isinstance(n, ast.Call):
            func = n.func
            if (func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else "") \
                    in DEVICE_NAME_PROBES:
                return True
        elif isinstance(n, ast.Constant) and isinstance(n.value, (str, bytes)) and \
                "nvidia-smi" in (n.value if isinstance(n.value, str) else n.value.decode("latin-1")):
            return True
    return False


def _probe_names(tree: ast.Module) -> frozenset[str]:
    """Names and `self.` attributes the file binds to a device probe's answer, followed through one more binding
    (`out = check_output(["nvidia-smi", ...])`, `gpu_name = out.decode()`)."""
    assigns = [n for n in ast.walk(tree) if isinstance(n, ast.Assign)]
    names: set[str] = set()
    for _round in range(2):
        for stmt in assigns:
            if reads_probe(stmt.value, names):
                names.update(d for d in (ast_dotted(t) for t in stmt.targets) if d is not None)
    return frozenset(names)


def build_context(tree: ast.Module, local_segment: Callable[[str], bool] | None = None) -> FileContext:
    """local_segment: whether a rule names a package path through this part (`*.triton.*`, `*._triton.*`); a relative
    import through such a module (`from ..ops.triton.layernorm import rms_norm`) then binds as
    `.ops.triton.layernorm.rms_norm` (t14f)."""
    ctx = FileContext()
    assigns: list[tuple[ast.Assign | ast.AnnAssign, tuple[int, int]]] = []
    loops: list[tuple[ast.For | ast.AsyncFor, tuple[int, int]]] = []
    decorated: list[ast.FunctionDef | ast.AsyncFunctionDef] = []
    top_level = {id(s) for s in tree.body}
    # `try: autocast = torch.cuda.amp.autocast` / `except: class autocast: ...` (RAFT and the optical-flow code built
    # on it): the try body is what runs on any torch that has the API, so its assignments alias like top-level ones
    try_bodies = {id(s) for t in tree.body if isinstance(t, ast.Try) for s in t.body}
    # `if torch.__version__.startswith("2"): autocast = partial(torch.autocast, device_type="cuda")` / `else: autocast =
    # torch.cuda.amp.autocast` (DROID-SLAM, DPVO): branches chosen by a release, not by a device, alias like top-level
    # ones (first binding wins); a module-level `if` on anything else may hold the NPU branch and binds nothing (t25c)
    try_bodies |= {id(s) for t in tree.body if isinstance(t, ast.If) and version_test(t.test)
                   for s in (*t.body, *t.orelse) if not isinstance(s, ast.If)}
    star = uses_triton = False
    imported_from: list[tuple[str, str]] = []      # (local name, module) of every `from M import name`
    for stmt, scope in _stmts(tree.body):
        if isinstance(stmt, ast.Import):
            for alias in stmt.names:
                if alias.asname:
                    ctx.bind(alias.asname, alias.name)
                else:
                    head = alias.name.split(".", 1)[0]
                    ctx.bind(head, head)
                uses_triton = uses_triton or alias.name.split(".", 1)[0] == "triton"
        elif isinstance(stmt, ast.ImportFrom):
            if any(alias.name == "*" for alias in stmt.names):
                star = True
            if (stmt.module or "").split(".", 1)[0] == "triton" and not stmt.level:
                uses_triton = True
            imported_from.extend((alias.asname or alias.name, stmt.module or "") for alias in stmt.names)
            if stmt.level or not stmt.module:
                _bind_relative_extension(ctx, stmt, local_segment, tree)
                for alias in stmt.names:
                    package = _reexported_package(stmt.module or "", alias.name)
                    if package is not None:
                        ctx.bind(alias.asname or alias.name, package)
                continue  # relative imports bind project-local modules
            for alias in stmt.names:
                if alias.name == "*":
                    ctx.star_imports.append(stmt.module)
                    continue
                if alias.asname == "_C" and alias.name != "_C":    # `from nerfacc import csrc as _C`
                    ctx.bind(alias.asname, f"{stmt.module}._C")      # named the compiled extension by its author
                    continue
                ctx.bind(alias.asname or alias.name, _reexported_package(stmt.module, alias.name)
                         or f"{stmt.module}.{alias.name}")
        elif isinstance(stmt, (ast.Assign, ast.AnnAssign)) and stmt.value is not None:
            assigns.append((stmt, scope))
        elif isinstance(stmt, (ast.For, ast.AsyncFor)):
            loops.append((stmt, scope))
        elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) and stmt.decorator_list:
            decorated.append(stmt)
    stored: set[str] = set()
    bodies: list[tuple[ast.FunctionDef | ast.AsyncFunctionDef, tuple[int, int]]] = []
    comprehensions: list[ast.expr] = []
    for node in module_nodes(tree):
        if isinstance(node, _COMPREHENSIONS):
            comprehensions.append(node)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.body \
                and node.body[0].lineno > node.lineno:       # defaults are read outside; a one-line def is left
            span = (node.body[0].lineno, node.end_lineno or node.body[0].lineno)
            for a in walk_list(node.args):
                if isinstance(a, ast.arg):
                    ctx.parameter_spans.setdefault(a.arg, []).append(span)
            bodies.append((node, span))
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                local = alias.asname or alias.name.split(".", 1)[0]
                ctx.import_lines.setdefault(local, []).append(node.lineno)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            stored.add(node.id)
    imported = set(ctx.import_lines)
    ctx.reassigned = stored & imported
    if imported:
        for node, span in bodies:
            # names the function binds in its own scope (not its parameters): local there, not the import
            for name in bound_names(list(node.body), scoped=True) & imported:
                ctx.local_spans.setdefault(name, []).append(span)
    # Two rounds so that `DEV = BASE + ":0"` after `BASE = "cuda"` folds, whatever the order of files' code.
    for round_ in range(2):
        for stmt, scope in assigns:
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            attr = self_attr(targets[0]) if len(targets) == 1 else None
            if attr is not None and isinstance(stmt.value, ast.Name) \
                    and stmt.value.id in ctx.aliases and not ctx.parameter_at(stmt.value.id, stmt.lineno):
                ctx.self_attrs.setdefault(attr, ctx.aliases[stmt.value.id])
                continue
            if round_ == 0 and attr is not None and isinstance(stmt.value, ast.Attribute):
                made_of = ast_dotted(stmt.value)
                resolved = ctx.resolve(made_of) if made_of is not None else None
                if resolved is not None:          # `self.device_mod = torch.cuda`: kept if a prefix rule covers it
                    ctx.local_refs.append((attr, resolved, "self_alias"))
                continue
            if round_ == 0 and len(targets) == 1 and isinstance(stmt.value, ast.Call) \
                    and _getattr_chain(stmt.value) is None:
                made_by = ast_dotted(stmt.value.func)
                resolved = ctx.resolve(made_by) if made_by is not None else None
                if resolved is not None:          # `nvsmi = nvidia_smi.getInstance()`: kept if the package is CUDA-only
                    target = targets[0]
                    if isinstance(target, ast.Name) and id(stmt) in top_level:   # a local result is a value
                        ctx.local_refs.append((target.id, resolved, "instance"))
                    elif attr is not None:
                        ctx.local_refs.append((attr, resolved, "self_instance"))
                continue
            if len(targets) != 1 or not isinstance(targets[0], ast.Name):
                continue
            name = targets[0].id
            value = stmt.value
            if value is None:                      # `x: int`: the filter above keeps only assignments with a value
                continue
            dotted = ast_dotted(value) or _getattr_chain(value)
            if dotted is not None:
                resolved = ctx.resolve(dotted)
                # only module-level `amp = torch.cuda.amp`: a local `dtype = torch.bfloat16` is a value, not an alias
                if resolved is not None and name not in ctx.aliases and id(stmt) in top_level | try_bodies:
                    ctx.aliases[name] = resolved      # `amp = torch.cuda.amp`
                    ctx.assigned_aliases.add(name)
                elif resolved is not None and round_ == 0 and name not in ctx.aliases:
                    ctx.local_refs.append((name, resolved, "alias"))     # `cuda = torch.cuda` in a function
                continue
            folded = fold_ast(value, ctx.constants)
            if folded is not None:
                ctx.constants.setdefault(name, set()).update(folded)
                if round_ == 1:
                    ctx.scopes.setdefault(name, []).append((*scope, frozenset(folded)))
    if star:
        _bind_star_conventions(ctx, tree)
    ctx.module_functions = frozenset(s.name for s in tree.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)))
    ctx.unresolved_extensions = unresolved_extension_modules(tree, ctx.resolve)
    ctx.reached_through_imports = _reached_through_imports(tree, ctx)
    probes = _asks_probe(tree)      # (most files hold none: then both sets are empty, no walk per assignment)
    ctx.probe_names = _probe_names(tree) if probes else frozenset()
    ctx.cuda_probe_names = frozenset() if not probes else frozenset(
        d for n in ast.walk(tree) if isinstance(n, ast.Assign) and any(
            isinstance(c, ast.Call) and (ast_dotted(c.func) or "").startswith("torch.cuda.") for c in ast.walk(n.value))
        and reads_probe(n.value, frozenset()) for d in (ast_dotted(t) for t in n.targets) if d is not None)
    ctx.hand_cuda_build = compiles_cuda_by_hand(tree)
    ctx.toolkit_configs = toolkit_configs(tree)
    ctx.cuda_program_build = compiles_cuda_program(tree)
    _bind_dynamic_extension_imports(ctx, tree, [stmt for stmt, _ in assigns],
                                    {id(stmt) for stmt, scope in assigns if scope == _WHOLE_FILE})
    _bind_jit_extensions(ctx, tree, [stmt for stmt, _ in assigns])
    _bind_ext_loader(ctx, tree, [stmt for stmt, _ in assigns])
    _bind_kernel_objects(ctx, tree)
    _local_subclasses(ctx, tree)
    for func in decorated:
        quals = []
        for dec in reversed(func.decorator_list):
            d = ast_dotted(dec.func if isinstance(dec, ast.Call) else dec)
            q = ctx.resolve(d) if d is not None else None
            if q is not None:
                quals.append(q)
        if quals:
            ctx.decorated[func.name] = quals
    _add_wrapped_kernels(ctx, assigns)
    _add_kernel_variables(ctx, assigns)
    ctx.host_only = host_only_file(ctx)
    ctx.module = tree
    ctx.host_arrays = host_arrays(ctx, assigns, loops, _comprehension_loops(comprehensions, bodies))
    if uses_triton:
        _add_imported_kernels(ctx, imported_from)
    return ctx


def _add_wrapped_kernels(ctx: FileContext, assigns) -> None:
    """`k = triton.jit(k)`, `k = triton.heuristics({...})(k)`, `k = triton.autotune(configs)(k)`: decoration
    by assignment, so that `k[grid](...)` is a launch like that of a decorated function."""
    for stmt, _ in assigns:
        value = stmt.value
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
        if len(targets) != 1 or not isinstance(targets[0], ast.Name) or not isinstance(value, ast.Call) \
                or not value.args or not isinstance(value.args[0], ast.Name):
            continue
        func = value.func.func if isinstance(value.func, ast.Call) else value.func
        d = ast_dotted(func)
        qual = ctx.resolve(d) if d is not None else None
        if qual is not None and qual.split(".", 1)[0] == "triton":
            quals = ctx.decorated.setdefault(targets[0].id, [])
            if qual not in quals:
                quals.append(qual)


def _add_kernel_variables(ctx: FileContext, assigns) -> None:
    """`_dispatch_kernel = softmax_mask_bias_kernel` ... `_dispatch_kernel = softmax_mask_bias_kernel_two_rows` ...
    `_dispatch_kernel[_grid](...)` (FastFold's Triton softmax), `k = kernel_a if cond else kernel_b`: a name every
    assignment of the file binds to decorated kernels (a choice among them) launches one of them (tk38)."""
    if not ctx.decorated:
        return
    values: dict[str, list[ast.expr]] = {}
    for stmt, _ in assigns:
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
        for target in targets:
            if isinstance(target, ast.Name):
                values.setdefault(target.id, []).append(stmt.value)
    for name, bound in values.items():
        if name in ctx.decorated or name in ctx.aliases or name in ctx.bindings:
            continue
        arms = [arm for value in bound for arm in ((value.body, value.orelse) if isinstance(value, ast.IfExp)
                                                   else (value,))]
        kernels = [arm.id for arm in arms if isinstance(arm, ast.Name)]
        if len(kernels) == len(arms) and all(k in ctx.decorated and k in ctx.module_functions for k in kernels):
            ctx.decorated[name] = list(dict.fromkeys(q for k in kernels for q in ctx.decorated[k]))


def _add_imported_kernels(ctx: FileContext, imported_from: list[tuple[str, str]]) -> None:
    """In a file that uses Triton, a name imported from a kernel module (`from ._triton.rope_kernels import
    _rope_kernel`) or named a kernel (`from .ops import _fwd_kernel`) is a Triton kernel: `name[grid](...)`
    launches it."""
    for local, module in imported_from:
        if local in ctx.decorated or local == "*":
            continue
        if "kernel" in local.lower() or any("triton" in part or "kernel" in part for part in module.lower().split(".")):
            ctx.decorated[local] = ["triton.jit"]


# Names a star import conventionally brings (`from fastai.basics import *`, `from .common import *` re-exporting
# `import torch`, `import torch.nn as nn`, `import torch.nn.functional as F`).
_STAR_CONVENTIONS = (("torch", "torch"), ("nn", "torch.nn"), ("F", "torch.nn.functional"))


def _bind_star_conventions(ctx: FileContext, tree: ast.Module) -> None:
    """After a star import, a conventional module alias the file uses but never binds (`torch.cuda.set_device(0)`
    with no `import torch`) can only come from that star import: read it as that module."""
    bound = _bound_names(tree)
    for local, qual in _STAR_CONVENTIONS:
        if local not in ctx.aliases and local not in ctx.bindings and not bound.get(local):
            ctx.bind(local, qual)


# `importlib.import_module("selective_scan_cuda")`, AutoAWQ's `marlin_cuda, msg = try_import("marlin_cuda")`: a compiled
# extension module (named by the `*_cuda` / `*_cuda_*` / `*_kernels` convention) loaded by name
_DYNAMIC_IMPORTS = frozenset({"importlib.import_module", "import_module", "try_import", "__import__"})
_EXTENSION_MODULE = re.compile(r"^[A-Za-z_]\w*(?:_cuda|_cuda_\w+|_kernels)$")


def named_like_cuda_extension(name: str) -> bool:
    """`quant_cuda`, `selective_scan_cuda_core`, `fused_kernels`: the `*_cuda` / `*_cuda_*` / `*_kernels` convention of
    a compiled CUDA extension's module name (NPU379's)."""
    return _EXTENSION_MODULE.match(name) is not None
# A package imported by a name in a string (t14q): `cuml = importlib.import_module("cuml")`, a lazy importer's
# `triton = OptionalImport("triton")` / `tl = OptionalImport("triton.language")` (physicsnemo-style proxies),
# MONAI's `cupy, has_cp = optional_import("cupy")`, deeptime's `torch = try_import("torch")` (pd13): the name
# stands for that module like `import cuml`, so `cuml.neighbors.NearestNeighbors(...)` and `@triton.jit` resolve.
# The callee's last segment is what counts.
_MODULE_IMPORTERS = frozenset({"import_module", "OptionalImport", "optional_import", "lazy_import", "LazyImport",
                               "try_import"})
_MODULE_NAME = re.compile(r"^[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*$")
# torch itself handed out by a loader call instead of `import torch` (t14y): txtai's `torch = library.torch()` /
# `torch = Library().torch()` (a lazy-import helper with one method per package), RLlib's
# `torch, nn = try_import_torch()`; the name is torch, so `torch.cuda.is_available()` is the CUDA API.
_TORCH_LOADER = re.compile(r"^_?(?:try_)?import_torch$")


def torch_loader(call: ast.Call, local: str) -> str | None:
    """"torch" when `local = <call>` binds the name torch to a loader's result: an argument-less
    `<helper>.torch()` or `[_][try_]import_torch()` (torch_loader's spellings above); None otherwise."""
    if local != "torch" or call.args or call.keywords:
        return None
    callee = ast_dotted(call.func)
    if isinstance(call.func, ast.Attribute) and call.func.attr == "torch":
        return "torch"      # `library.torch()`, `Library().torch()` (ast_dotted is None for a call receiver)
    return "torch" if callee is not None and _TORCH_LOADER.match(callee.rsplit(".", 1)[-1]) else None


def dynamic_module_import(call: ast.AST) -> str | None:
    """The module a `import_module("x.y")` / `OptionalImport("x.y")` / `optional_import("x")` call imports by a
    literal name (None otherwise; a relative or computed name is not resolved)."""
    if not isinstance(call, ast.Call) or not call.args:
        return None
    callee = ast_dotted(call.func)
    if callee is None or callee.rsplit(".", 1)[-1] not in _MODULE_IMPORTERS:
        return None
    arg = call.args[0]
    if isinstance(arg, ast.Constant) and isinstance(arg.value, str) and _MODULE_NAME.match(arg.value):
        return arg.value
    return None


def dynamic_extension_import(node: ast.AST) -> tuple[str, str] | None:
    """(local name, module) when `node` binds a compiled CUDA extension loaded by name (`x = import_module("y_cuda")`,
    `x, msg = try_import("y_cuda")`) or any module a lazy importer names (`x = OptionalImport("triton")`,
    dynamic_module_import); the large-file path keeps such statements for the context too."""
    if not isinstance(node, ast.Assign) or len(node.targets) != 1 or not isinstance(node.value, ast.Call):
        return None
    target = node.targets[0]
    if isinstance(target, ast.Tuple) and target.elts:
        target = target.elts[0]
    if not isinstance(target, ast.Name):
        return None
    if ast_dotted(node.value.func) not in _DYNAMIC_IMPORTS:
        module = dynamic_module_import(node.value) or torch_loader(node.value, target.id)
        return (target.id, module) if module is not None else None
    args = node.value.args
    if args and isinstance(args[0], ast.Constant) and isinstance(args[0].value, str) \
            and _EXTENSION_MODULE.match(args[0].value):
        return target.id, args[0].value
    module = dynamic_module_import(node.value)
    return (target.id, module) if module is not None else None


def _bind_dynamic_extension_imports(ctx: FileContext, tree: ast.Module, assigns: list[ast.stmt],
                                    module_level: set[int] | frozenset[int] = frozenset()) -> None:
    """A name bound once in the file to a compiled CUDA extension loaded by name stands for that module, so
    `marlin_cuda.mul(...)` is a call into it (NPU379's `*_cuda` modules). `assigns`: the file's assignment
    statements (build_context lists them once; an `ast.walk` of the whole tree per file here had cost about 4% of
    a cold run)."""
    # a package named in a string (dynamic_module_import) binds the file's name only where the module binds it
    # (also inside a module-level if / try): `envs = import_module("pkg.envs")` in one test function is local there
    found = [hit for node in assigns if (hit := dynamic_extension_import(node)) is not None
             and (id(node) in module_level or _EXTENSION_MODULE.match(hit[1]) or hit[1] in ctx.unresolved_extensions)]
    if not found:
        return
    bound = _bound_names(tree)
    # `torch_cpp_ext_lib = None` at module level, then `global torch_cpp_ext_lib; torch_cpp_ext_lib =
    # importlib.import_module(...)` in the loader (WholeGraph): the placeholder does not count as a second binding
    placeholders = Counter(t.id for node in assigns if isinstance(node, ast.Assign) and id(node) in module_level
                           and isinstance(node.value, ast.Constant) and node.value.value is None
                           for t in node.targets if isinstance(t, ast.Name))
    for local, module in found:
        if (bound.get(local) == 1 or module in ctx.unresolved_extensions
                and bound.get(local, 0) - placeholders[local] == 1) \
                and local not in ctx.aliases and local not in ctx.bindings:
            ctx.bind(local, module)
    # `GroupNorm = getattr(apex_gn_module, "GroupNorm")` after `apex_gn_module = import_module("apex.contrib...")`:
    # the name taken from the module by a literal attribute name is that module's member (t14q)
    for node in assigns:
        if not isinstance(node, ast.Assign) or len(node.targets) != 1 or not isinstance(node.targets[0], ast.Name) \
                or not isinstance(node.value, ast.Call) or ast_dotted(node.value.func) != "getattr" \
                or len(node.value.args) not in (2, 3) or not isinstance(node.value.args[0], ast.Name):
            continue
        attr = node.value.args[1]
        source = node.value.args[0].id
        local = node.targets[0].id
        if isinstance(attr, ast.Constant) and isinstance(attr.value, str) and attr.value.isidentifier() \
                and any(source == name for name, _ in found) and source in ctx.aliases \
                and bound.get(local) == 1 and local not in ctx.aliases and local not in ctx.bindings:
            ctx.bind(local, f"{ctx.aliases[source]}.{attr.value}")


# torch.utils.cpp_extension's run-time builders: `ext = load("name", sources=[...cu])` compiles C++/CUDA sources
JIT_BUILDERS = frozenset({"torch.utils.cpp_extension.load", "torch.utils.cpp_extension.load_inline"})
JIT_EXTENSION = "jit_extension"   # the segment a JIT-built extension's name resolves through (`.jit_extension.ext`)


def jit_extension_assign(node: ast.stmt) -> bool:
    """`name = <...>.load(...)` / `load_inline(...)`, or a call handed CUDA sources: may bind a JIT-built extension
    (what _bind_jit_extensions reads; largefile.py keeps such statements)."""
    if not isinstance(node, ast.Assign) or len(node.targets) != 1 or not isinstance(node.targets[0], ast.Name) \
            or not isinstance(node.value, ast.Call):
        return False
    callee = ast_dotted(node.value.func)
    return callee is not None and callee.rsplit(".", 1)[-1] in ("load", "load_inline") \
        or builds_cuda_sources(node.value)


def _own_callee(ctx: FileContext, callee: str) -> bool:
    """A callee of the project's own (a relative import, or a name no import binds): not a library's build class
    (`CUDAExtension(name, sources=[...cu])` in setup.py is a build description with rules of its own)."""
    resolved = ctx.resolve(callee)
    return resolved is None or resolved.startswith(".")


def builds_cuda_sources(call: ast.Call) -> bool:
    """A call handed a literal list of sources with a `.cu` file (`sources=['bias_act.cpp', 'bias_act.cu']`): a
    project's own JIT builder around cpp_extension.load (NVlabs' StyleGAN2-ADA / StyleGAN3 `custom_ops.get_plugin`
    and its copies in stylegan-xl, EG3D, PyTorch-StudioGAN), whose result is the compiled module (t22b)."""
    for kw in call.keywords:
        if kw.arg == "sources" and isinstance(kw.value, (ast.List, ast.Tuple)):
            return any(isinstance(e, ast.Constant) and isinstance(e.value, str) and e.value.endswith((".cu", ".cuh"))
                       for e in kw.value.elts)
    return False


def _bind_jit_extensions(ctx: FileContext, tree: ast.Module, assigns: list[ast.stmt]) -> None:
    """A name assigned the module that `torch.utils.cpp_extension.load(...)` / `load_inline(...)` builds is a
    compiled C++/CUDA extension: calls below it (`deform_conv_ext.deform_conv_forward(...)`) are calls of its
    kernels, and a relative import of the same name (`try: from . import deform_conv_ext` / `except: ... = load(`,
    the prebuilt copy of the same extension) imports it. It resolves as `.jit_extension.<name>` (an empty package
    head, as `._C`)."""
    names = []
    for node in assigns:
        if not jit_extension_assign(node) or not isinstance(node, ast.Assign):
            continue
        target, value = node.targets[0], node.value
        if not isinstance(target, ast.Name) or not isinstance(value, ast.Call):
            continue
        callee = ast_dotted(value.func)
        if callee is not None and (ctx.resolve(callee) in JIT_BUILDERS
                                   or any(q in JIT_BUILDERS for q in ctx.resolve_all(callee))) \
                or callee is not None and builds_cuda_sources(value) and _own_callee(ctx, callee):
            names.append(target.id)
    for name in names:
        # (a rebinding of the name elsewhere is not looked for: the large-file pass keeps only the statements
        # that may bind something, and the two passes must agree)
        if ctx.aliases.get(name) == f"{LOCAL_PACKAGE}.{name}" and name.endswith("_ext"):
            # `from . import deform_conv_ext` bound as a prebuilt `*_ext` (NPU891): the load below says more (NPU327)
            del ctx.aliases[name]
            del ctx.bindings[name]
        if name not in ctx.aliases and name not in ctx.bindings:
            ctx.bind(name, f"{LOCAL_PACKAGE}.{JIT_EXTENSION}.{name}")


# What CuPy's and PyCUDA's kernel builders return (t32a): a kernel object, called to launch it
# (`kernel((blocks,), (threads,), args)`, `f(grid=..., block=..., args=[...])`), or a compiled module whose
# `.get_function(name)` hands out one
KERNEL_OBJECT_BUILDERS = frozenset({"cupy.RawKernel", "cupy.ElementwiseKernel", "cupy.ReductionKernel",
                                    "pycuda.elementwise.ElementwiseKernel", "pycuda.reduction.ReductionKernel"})
KERNEL_MODULE_BUILDERS = frozenset({"cupy.RawModule", "cupy.cuda.compile_with_cache", "cupy.cuda.function.Module",
                                    "pycuda.compiler.SourceModule", "pycuda.compiler.DynamicSourceModule"})


def kernel_object_made(ctx: FileContext, expr: ast.AST,
                       local: dict[str, tuple[str, str]] | None = None) -> tuple[str, str] | None:
    """(kind, builder) of what `expr` holds when it is a CuPy / PyCUDA kernel object or compiled module: a builder's
    call, `.get_function(...)` of a module, a call of a loader (a function of the file that returns one), or a
    module-level name / `self.` attribute bound to one."""
    if isinstance(expr, ast.Name):
        return ctx.kernel_objects.get(expr.id) or (local or {}).get(expr.id)
    if (attr := self_attr(expr)) is not None:
        return ctx.kernel_attrs.get(attr)
    if not isinstance(expr, ast.Call):
        return None
    func = expr.func
    dotted = ast_dotted(func)
    receiver = func.value if isinstance(func, ast.Attribute) else None
    return kernel_call_made(ctx, ctx.resolve(dotted) if dotted is not None else None,
                            func.attr if isinstance(func, ast.Attribute) else None,
                            lambda: kernel_object_made(ctx, receiver, local) if receiver is not None else None,
                            func.id if isinstance(func, ast.Name) else None)


def kernel_call_made(ctx: FileContext, qual: str | None, method: str | None,
                     receiver_made: Callable[[], tuple[str, str] | None],
                     called_name: str | None) -> tuple[str, str] | None:
    """(kind, builder) of what a call returns when it is a CuPy / PyCUDA kernel object or compiled module, read the
    same on the AST (kernel_object_made) and on the CST (the visitor's `_kernel_object`): `qual`, the resolved
    callee; `method`, the called attribute's name; `receiver_made`, what its receiver holds (asked only for
    `.get_function` / `.prepare`); `called_name`, a bare name called (a loader of the file)."""
    if qual in KERNEL_OBJECT_BUILDERS:
        return "kernel", qual
    if qual in KERNEL_MODULE_BUILDERS:
        return "module", qual
    if method in ("get_function", "prepare"):
        made = receiver_made()      # `mod.get_function("k")`, PyCUDA's `f.prepare("PPi")`
        if made is not None and (made[0] == "module") == (method == "get_function"):
            return "kernel", made[1]
    if called_name is not None and called_name not in ctx.aliases:
        return ctx.kernel_loaders.get(called_name)
    return None


def _bind_kernel_objects(ctx: FileContext, tree: ast.Module) -> None:
    """Fill ctx.kernel_objects, kernel_attrs and kernel_loaders, in a file that imports CuPy or PyCUDA. A name is
    followed only when the file binds it once (in any scope: `kernel_code = cupy.cuda.compile_with_cache(code)`
    inside the loader, `f = load_kernel(...)` inside a forward), so that it means the same object wherever it is
    read. Rounds until nothing changes: a loader may return a local name, a module-level kernel may come from one."""
    if not any(q.split(".", 1)[0] in ("cupy", "pycuda") for q in ctx.aliases.values()):
        return
    nodes = module_nodes(tree)
    defs = [n for n in nodes if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    assigns = [n for n in nodes if isinstance(n, ast.Assign) and len(n.targets) == 1]
    bound = _bound_names(tree)
    for _ in range(3):
        before = len(ctx.kernel_objects) + len(ctx.kernel_attrs) + len(ctx.kernel_loaders)
        for fn in defs:
            for node in scope_nodes(fn):
                if isinstance(node, ast.Return) and node.value is not None and fn.name not in ctx.kernel_loaders:
                    made = kernel_object_made(ctx, node.value)
                    if made is not None:
                        ctx.kernel_loaders[fn.name] = made
        for node in assigns:
            target = node.targets[0]
            made = kernel_object_made(ctx, node.value)
            if made is None:
                continue
            if isinstance(target, ast.Name) and bound.get(target.id) == 1:
                ctx.kernel_objects.setdefault(target.id, made)
            elif (attr := self_attr(target)) is not None:
                ctx.kernel_attrs.setdefault(attr, made)
        if len(ctx.kernel_objects) + len(ctx.kernel_attrs) + len(ctx.kernel_loaders) == before:
            break
    for fn in defs:
        _bind_kernel_locals(ctx, fn)


def _bind_kernel_locals(ctx: FileContext, fn: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
    """ctx.kernel_locals of one function: the names its own statements (not a nested def's) assign, every time, a
    kernel object or module (kernel_object_made), that are not its parameters; the file's names bound once are in
    kernel_objects already."""
    params = {a.arg for a in walk_list(fn.args) if isinstance(a, ast.arg)}
    assigns: list[tuple[str, ast.expr]] = []
    others: list[str] = []
    stack: list[ast.AST] = list(fn.body)
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            assigns.append((node.targets[0].id, node.value))
            stack.append(node.value)
            continue
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            others.append(node.id)          # a loop, `with`, unpacking or augmented target: another value
        stack.extend(ast.iter_child_nodes(node))
    local: dict[str, tuple[str, str]] = {}
    for _ in range(2):                      # the second round reads names the first found (`mod.get_function`)
        bindings: dict[str, list[tuple[str, str] | None]] = {}
        for name, value in assigns:
            bindings.setdefault(name, []).append(kernel_object_made(ctx, value, local))
        local = {name: made[0] for name, made in bindings.items()
                 if made[0] is not None and made.count(made[0]) == len(made) and name not in others
                 and name not in params and name not in ctx.kernel_objects}
    for name, made in local.items():
        ctx.kernel_locals.setdefault(name, []).append((fn.lineno, fn.end_lineno or fn.lineno, made))


MMCV_EXT_LOADER = "mmcv.utils.ext_loader"
MMCV_EXT = "mmcv._ext"     # what mmcv's `ext_loader.load_ext('_ext', [...])` returns: its compiled op library


def ext_loader_assign(node: ast.stmt) -> bool:
    """`ext_module = ext_loader.load_ext('_ext', [...])`: mmcv's loader of its compiled ops (largefile.py keeps
    such statements for the context too)."""
    if not isinstance(node, ast.Assign) or len(node.targets) != 1 or not isinstance(node.targets[0], ast.Name) \
            or not isinstance(node.value, ast.Call):
        return False
    callee = ast_dotted(node.value.func)
    return callee is not None and callee.rsplit(".", 1)[-1] == "load_ext"


def _bind_ext_loader(ctx: FileContext, tree: ast.Module, assigns: list[ast.stmt]) -> None:
    """A name bound once in the file to what mmcv's `ext_loader.load_ext('_ext', [...])` returns (mmcv's ops, and the
    same spelling in mmdet3d, BEVFormer and vendored mmcv copies) is mmcv's compiled op library `mmcv._ext`: its calls
    (`ext_module.knn_forward(...)`) are calls of compiled ops (rules/kernel_extensions.yaml names those without an
    NPU implementation)."""
    names = []
    for node in assigns:
        if not ext_loader_assign(node) or not isinstance(node, ast.Assign) or not isinstance(node.value, ast.Call):
            continue
        target, callee = node.targets[0], ast_dotted(node.value.func)
        if isinstance(target, ast.Name) and callee is not None \
                and ctx.resolve(callee) == f"{MMCV_EXT_LOADER}.load_ext":
            names.append(target.id)
    if not names:
        return
    bound = _bound_names(tree)
    for name in names:
        if bound.get(name) == 1 and name not in ctx.aliases and name not in ctx.bindings:
            ctx.bind(name, MMCV_EXT)


def _local_subclasses(ctx: FileContext, tree: ast.Module) -> None:
    """Module-level classes whose first base resolves to a qualified name (see FileContext.subclass_of)."""
    classes = [s for s in tree.body if isinstance(s, ast.ClassDef) and s.bases]
    if not classes:
        return
    for cls in classes:
        base = ast_dotted(cls.bases[0])
        qual = ctx.resolve(base) if base is not None else None
        if qual is not None and cls.name not in ctx.aliases and cls.name not in ctx.bindings:
            ctx.subclass_of[cls.name] = qual


def _bound_names(tree: ast.Module) -> dict[str, int]:
    """How many times each name is bound in the file (assignments, loop and with targets, parameters, imports)."""
    count: dict[str, int] = {}
    for node in module_nodes(tree):
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            count[node.id] = count.get(node.id, 0) + 1
        elif isinstance(node, ast.arg):
            count[node.arg] = count.get(node.arg, 0) + 1
        elif isinstance(node, ast.alias):
            local = node.asname or node.name.split(".", 1)[0]
            count[local] = count.get(local, 0) + 1
    return count


def _bound_self_attributes(tree: ast.Module) -> dict[str, int]:
    """How many times each `self.<attr>` is bound in the file (assignment, augmented or annotated assignment, loop
    or `with` target), whatever the value: `self.model = model`, `self.model = DDP(self.model)` and `self.model =
    bmt.BMTrainModelWrapper(self.model)` in one branch are three bindings, so `self.model` is no BMTrain object in the
    other branches (FlagAI's trainers; tq37). `self.x = None` is no binding to another value: the object's absent
    state, before it is made or after it is released (KoboldAI's `self.generator = None` around its ExLlamaV2
    generator)."""
    count: dict[str, int] = {}
    unset: set[int] = set()
    for node in module_nodes(tree):
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and isinstance(node.value, ast.Constant) \
                and node.value.value is None:
            unset.update(id(t) for t in (node.targets if isinstance(node, ast.Assign) else [node.target]))
    for node in module_nodes(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store) and self_attr(node) is not None \
                and id(node) not in unset:
            count[node.attr] = count.get(node.attr, 0) + 1
    return count


def adopt_local_refs(ctx: FileContext, tree: ast.Module, namespace, cuda_only) -> None:
    """Keep the local references build_context collected whose target a rule reports, each only when its name (or
    `self.` attribute, whatever the other bindings' values) is bound once in the file (so the name means the same
    thing wherever it is read):
    - `cuda = torch.cuda` inside a function, when `namespace(qual)` (a module a prefix rule covers: `cuda.synchronize()`
      is torch.cuda.synchronize; a local `dtype = torch.bfloat16` is a value and stays one);
    - an object made by a package for which `cuda_only(qual)` holds (pynvml, nvidia_smi: NVML has no Ascend twin),
      followed only when something below it is called (`nvsmi.DeviceQuery(...)`), never as a bare name."""
    kept = [(name, qual, kind) for name, qual, kind in ctx.local_refs
            if (namespace(qual) if kind in ("alias", "self_alias") else cuda_only(qual))]
    ctx.local_refs = []
    if not kept:
        return
    bound = _bound_names(tree) if any(not kind.startswith("self_") for _, _, kind in kept) else {}
    seen_self = _bound_self_attributes(tree) if any(kind.startswith("self_") for _, _, kind in kept) else {}
    for name, qual, kind in kept:
        if kind.startswith("self_"):
            if seen_self.get(name) == 1 and name not in ctx.self_attrs:
                if kind == "self_alias":
                    ctx.self_attrs[name] = qual
                else:
                    ctx.self_instances[name] = qual
        elif bound.get(name) == 1 and name not in ctx.aliases:
            if kind == "alias":
                ctx.aliases[name] = qual
            else:
                ctx.instances[name] = qual


def _reexported_package(module: str, name: str) -> str | None:
    """`from pcdet.utils.spconv_utils import spconv`, `from ...utils.spconv_utils import replace_feature, spconv`
    (OpenPCDet and its forks): a project's `<package>_utils` module that imports the package (`import spconv.pytorch
    as spconv`) and hands it on under its own name; the name stands for the package (t22d)."""
    if name in _REEXPORTED_BY_NAME:
        return name
    return name if module.rsplit(".", 1)[-1] == f"{name}_utils" else None


# `from .base import cupy` (spikingjelly's CUDA-kernel modules, each taking the name from a sibling that does `try:
# import cupy` / `except ImportError: cupy = None`): a project module handing on a CUDA-only package under the package's
# own name, which no project module of its own would take (t24a)
_REEXPORTED_BY_NAME = frozenset({"cupy", "cupyx", "pycuda"})


LOCAL_PACKAGE = ""   # relative imports of a compiled extension resolve as `._C...` (an empty package head)


def _bind_relative_extension(ctx: FileContext, stmt: ast.ImportFrom,
                             local_segment: Callable[[str], bool] | None = None,
                             tree: ast.Module | None = None) -> None:
    """`from . import _C`, `from ._C import nms`: the package's own compiled extension (setuptools' `_C`
    convention) is the one project-local module a rule can name; it resolves as `._C...`. A module the file
    imports under the name `_C` (`from . import cuda as _C`, nerfacc's wrapper of its compiled extension) is
    named the extension by its author and resolves the same way. mmcv's `from ..utils import ext_loader` (mmcv
    and its vendored copies) is mmcv's extension loader (see _bind_ext_loader). A relative import through a module
    a segment rule names (`from ._triton.rope_padded_kernels import k`, xformers; `from
    ..llama3_flash_attn_varlen import f`, ring-flash-attn) resolves as `._triton.rope_padded_kernels.k`, so the
    segment rule sees it (t14f); any other project-local module binds nothing."""
    module = stmt.module or ""
    if module and local_segment is not None and any(local_segment(part) for part in module.split(".")):
        for alias in stmt.names:
            if alias.name != "*":
                ctx.bind(alias.asname or alias.name, f"{LOCAL_PACKAGE}.{module}.{alias.name}")
        return
    for alias in stmt.names:
        if (alias.name == "_C" or alias.asname == "_C") and not module:
            ctx.bind(alias.asname or alias.name, f"{LOCAL_PACKAGE}._C")
        elif not module and _EXTENSION_MODULE.match(alias.name) and not alias.name.endswith("_kernels"):
            # `from . import roiaware_pool3d_cuda` (OpenPCDet's ops, mmdet3d 0.x's, CenterPoint's): the CUDAExtension
            # setup.py builds into the package folder, named by NPU379's `*_cuda` convention; not `*_kernels`, often a
            # package's own Python module (`from . import triton_kernels`) (t22d)
            ctx.bind(alias.asname or alias.name, f"{LOCAL_PACKAGE}.{alias.name}")
        elif not module and alias.name.endswith("_ext") and alias.name != "build_ext":
            # `from . import knn_ext` (mmdet3d 0.x's ops and their copies in BEVFusion, BEVDet): the `*_ext`
            # CUDAExtension its setup.py builds into the package folder (NPU891, t26a)
            ctx.bind(alias.asname or alias.name, f"{LOCAL_PACKAGE}.{alias.name}")
        elif module == "_ext" and alias.name != "*":
            ctx.bind(alias.asname or alias.name, f"{LOCAL_PACKAGE}._ext.{alias.name}")    # `from ._ext import nms`
        elif alias.name == "ext_loader" and module.split(".")[-1] == "utils" and stmt.level:
            ctx.bind(alias.asname or alias.name, MMCV_EXT_LOADER)
        elif module.split(".")[-1] == "_C" and alias.name != "*":
            ctx.bind(alias.asname or alias.name, f"{LOCAL_PACKAGE}._C.{alias.name}")
        elif module and alias.name != "*" and tree is not None \
                and (qual := relative_cuda_extension(module, alias.name)) is not None \
                and ((alias.asname or alias.name) in (_attribute_bases(tree) if qual == f"{LOCAL_PACKAGE}.{alias.name}"
                                                      else _absolute_imports(tree, module.split(".")[-1]))
                     or qual != f"{LOCAL_PACKAGE}.{alias.name}" and _cpu_build_imported(tree, module)):
            # `render_utils_cuda` a name the file uses as a module (`render_utils_cuda.sample_pts_on_rays(...)`), not a
            # `*_cuda` function (`from .utils import to_cuda`); a name from a `*_cuda` module the file also imports
            # installed (`from block_mc_cpp_cuda import block_mc_forward`) or beside its CPU build (`from
            # .causal_product_cpu import ...`, fast-transformers), not from a Python module (`.ops_cuda`)
            ctx.bind(alias.asname or alias.name, qual)


def relative_cuda_extension(module: str, name: str) -> str | None:
    """What `from .<module> import <name>` names when it reaches the package's own `*_cuda` / `*_cuda_*` extension
    (NPU379's convention; not `*_kernels`, often a plain Python module), as NPU379's globs read it (the extension
    first): `from .extensions.block_mc_cpp_cuda import block_mc_forward` (DCVC) is `.block_mc_cpp_cuda.block_mc_forward`,
    `from .dvgo import render_utils_cuda` (DirectVoxGO; dvgo.py builds it with cpp_extension.load) and `from ..ops.dcn
    import deform_conv_cuda` are `.render_utils_cuda` / `.deform_conv_cuda` (t31b)."""
    last = module.split(".")[-1]
    if _EXTENSION_MODULE.match(last) and not last.endswith("_kernels"):
        return f"{LOCAL_PACKAGE}.{last}.{name}"
    if _EXTENSION_MODULE.match(name) and not name.endswith("_kernels"):
        return f"{LOCAL_PACKAGE}.{name}"
    return None


def _absolute_imports(tree: ast.Module, module: str) -> set[str]:
    """The names the file takes from the top-level module `module` by an absolute `from module import name`."""
    return {a.asname or a.name for n in module_nodes_of(tree, ast.ImportFrom) if not n.level and n.module == module
            for a in n.names}


def _cpu_build_imported(tree: ast.Module, module: str) -> bool:
    """Whether the file also imports, relatively, the CPU build of the relative `*_cuda` module `module`: `from
    .causal_product_cpu import causal_dot_product` beside `from .causal_product_cuda import causal_dot_product`
    (fast-transformers' ops, each built by setup.py as a CppExtension `<op>_cpu` and a CUDAExtension `<op>_cuda`, t36a).
    Two compiled builds of one op under one name, chosen by device; a Python helper module has no such twin."""
    last = module.split(".")[-1]
    if not last.endswith("_cuda"):
        return False
    twin = last[:-len("_cuda")] + "_cpu"
    return any(n.level and (n.module or "").split(".")[-1] == twin for n in module_nodes_of(tree, ast.ImportFrom))


def _attribute_bases(tree: ast.Module) -> set[str]:
    """The names the file reads an attribute of (`name.attr`): names used as modules or objects."""
    return {n.value.id for n in module_nodes_of(tree, ast.Attribute) if isinstance(n.value, ast.Name)}


def cuda_extension_used(stmt: ast.stmt) -> bool:
    """Whether the statement reads an attribute of a `*_cuda` name (what `_attribute_bases` looks for), so the
    large-file path keeps it for the context."""
    return any(isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and _EXTENSION_MODULE.match(n.value.id)
               and not n.value.id.endswith("_kernels") for n in ast.walk(stmt))



# modules every PyTorch file imports whole, whose chains no `import_reached` rule names
_COMMON_ROOTS = frozenset(sys.stdlib_module_names) | {"torch", "numpy", "np"}


def _reached_through_imports(tree: ast.Module, ctx: FileContext) -> frozenset[str]:
    """The resolved attribute chains read through a name a plain `import M` binds at module level (tk41)."""
    roots = {alias.asname or alias.name.split(".", 1)[0] for stmt in tree.body if isinstance(stmt, ast.Import)
             for alias in stmt.names if alias.name.split(".", 1)[0] not in _COMMON_ROOTS}
    if not roots:
        return frozenset()
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and (chain := ast_dotted(node)) is not None \
                and chain.split(".", 1)[0] in roots and (qual := ctx.resolve(chain)) is not None:
            out.add(qual)
    return frozenset(out)


def _getattr_chain(value: ast.expr) -> str | None:
    """`getattr(torch.backends, 'cudnn', None)` -> `torch.backends.cudnn`: the chain a `getattr` with a literal name
    takes (omnipose binds `cudnn` so, then sets `cudnn.benchmark = False` through it; tk41)."""
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id == "getattr" \
            and 2 <= len(value.args) <= 3 and not value.keywords and isinstance(value.args[1], ast.Constant) \
            and isinstance(value.args[1].value, str) and value.args[1].value.isidentifier() \
            and (base := ast_dotted(value.args[0])) is not None:
        return f"{base}.{value.args[1].value}"
    return None
