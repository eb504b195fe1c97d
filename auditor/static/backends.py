"""Multi-backend context of a file, read from its `ast` tree: where CUDA code sits beside an NPU path, inside a
dispatch over several backends, inside the CUDA implementation of a platform abstraction, or is an optional
import under a guard. The engine consults it only for files that produced findings, so the cost is one walk
of the tree of those files.

The context lowers findings, never raises them (rules/severity_policy.yaml):
- `npu-path`: a CUDA line in an if/elif chain, conditional expression or boolean test that already has an
  NPU branch (`is_npu()`, `is_torch_npu_available()`, `device.type == "npu"`, `current_platform.is_npu()`),
  after an NPU early return in the same block, or in a set / list / tuple / dict of backend names that
  already holds "npu": info, never rewritten.
- `platform-class`: a CUDA class of a platform / accelerator abstraction (`class CudaPlatform(Platform)`):
  info, never rewritten; the port adds an NPU implementation beside it.
- `backend-dispatch`: a chain or collection naming two or more other backends (cuda and xpu, cuda and rocm)
  but not NPU: the severity stays (there is no NPU path yet) but nothing is rewritten, so the lines that serve
  the other backends keep their meaning.
- `guarded-import`: an import under try/except ImportError or an if, or in the `except ImportError:` arm of a try that
  imports only from torch (a fallback for an older torch, a version guard): an error becomes a warning.
- `other-backend`: a branch whose test names only backends other than CUDA and NPU (`elif SYSTEM == "rocm":`),
  a class or function named for one (`class FastLinearROCm`, `def forward_xpu`), or a file whose folders or
  name name only such backends (`backends/gaudi/...`, `layers/gptq/ipex.py`, `vendor/maca/...`): that code
  runs on its own backend, never on Ascend: info, never rewritten. Also a file that imports a package that exists
  only for one other backend, unguarded at its top (`import habana_frameworks.torch.core as htcore`), and a test
  built on another backend's helpers (`from ...test_hpu_utils import *`). OpenVINO counts as another backend
  (`optimum/intel/openvino/`, `tests/openvino/`); its PyTorch side holds host values, so hints about device work
  there (syncs, dtype facts, the NPU's op support) are dropped (backend_words.HOST_RUNTIMES).
- `ascend-code`: Triton kernels and custom torch ops in a file whose path names Ascend / NPU (`vllm_ascend/`,
  `vendor/ascend/`): Triton there is Triton-Ascend and the op library the project's own NPU one: info.
"""
from __future__ import annotations

import ast
import bisect
import dataclasses
import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import cast

from auditor.astnodes import line_span, module_fact, module_nodes_of, walk_list
from auditor.discover import MAX_FILE_BYTES, SourceError, read_source
from auditor.findings import Finding, as_info
from auditor.static.astutil import ast_dotted, literal_strings, module_nodes

from auditor.backend_words import (_BACKEND_ALIASES, BACKEND_NAMES, HOST_RUNTIMES, HOST_SYNC_RUNTIMES,  # noqa: F401  (re-exported)
                                    OTHER_BACKENDS, backends_in_text)
from auditor.static.project_imports import held_tree, read_counted
from auditor.static.context import DEVICE_NAME_PROBES, older_release_arm, unsupported_release_flag_arms

_CUDA_CLASS = re.compile(r"(?i)cuda|gpu|nvidia")
_ABSTRACTION_BASE = re.compile(r"(?i)platform|accelerator|device(?!_?map)|backend(?!ward)")
_IMPORT_ERRORS = {"ImportError", "ModuleNotFoundError", "Exception", "BaseException", "OSError", "RuntimeError"}

Span = tuple[int, int]


def _backend_literals(node: ast.AST) -> set[str]:
    """Backends named by the string elements of a set / list / tuple, or the keys of a dict."""
    texts = [k.value for k in node.keys if isinstance(k, ast.Constant) and isinstance(k.value, str)] \
        if isinstance(node, ast.Dict) else literal_strings(node)
    heads = (text.split(":", 1)[0].lower() for text in texts)
    return {_BACKEND_ALIASES[head] for head in heads if head in _BACKEND_ALIASES}


@dataclass
class BackendContext:
    npu: list[Span] = field(default_factory=list)
    dispatch: list[Span] = field(default_factory=list)
    platform: list[Span] = field(default_factory=list)
    guarded_imports: set[int] = field(default_factory=set)
    guarded_names: set[str] = field(default_factory=set)      # names bound by guarded imports
    # (block span, top-level module) of each guarded import: the block that holds it is its optional path
    guarded_blocks: list[tuple[Span, str]] = field(default_factory=list)
    # bodies of `if flash_attn_func is not None:` / `if is_apex_available():`: never entered on Ascend
    import_guard: list[Span] = field(default_factory=list)
    # exact column ranges of backend-name collections (the elements of `{"cuda", "xpu", "npu"}`)
    collections: list[tuple[Span, int, int]] = field(default_factory=list)
    # branches, classes and functions that serve only another backend (ROCm, XPU, HPU, ...)
    other: list[Span] = field(default_factory=list)
    # kernel registrations (`@op.impl(["cpu", "cuda"])`, `register_kernel("lib::op", "cuda")`): their "cuda" is a
    # dispatch key, which transfer_to_npu does not remap
    registrations: list[Span] = field(default_factory=list)
    # (line, attribute) of `not cfg.fp8`: a test for the path without the flag
    negated_flags: set[tuple[int, str]] = field(default_factory=set)
    # attributes read as a test (`if cfg.fp8:`, `cfg.fp8 and ...`, `cfg.fp8_recipe != Fp8Recipe.delayed`) (t11f)
    read_flags: set[tuple[int, str]] = field(default_factory=set)
    # bodies of `if torch.cuda.is_available():` (the check itself is the finding that gates)
    cuda_available: list[Span] = field(default_factory=list)
    # `@pytest.mark.runs_on(["cuda"])`, `@pytest.mark.skipif(device != "cuda", ...)`: test selection
    test_marks: list[Span] = field(default_factory=list)
    # mmengine's `dist_cfg`: its init_dist starts HCCL on an NPU whatever backend the config names
    mmengine_dist: list[Span] = field(default_factory=list)
    # the other backend the whole file needs: an unguarded top-level import of a package that exists only for it
    # (`import habana_frameworks.torch.core as htcore`)
    file_backend: str | None = None
    # the other backend of a module the file star-imports at its top (`from ...test_hpu_utils import *`): a test
    # built on that backend's helpers (apply_context reads it for test files only)
    star_backend: str | None = None
    # the file hands a torch.export program to another toolchain's lowering (`exported_program_to_stablehlo`,
    # ExecuTorch, Core ML, AI Edge): its exports trace host tensors for that toolchain (t11r)
    foreign_export: bool = False
    # branches only a host runtime (HOST_RUNTIMES: OpenVINO, MLX) runs: `if requested_device == "mlx":` (t11r)
    host: list[Span] = field(default_factory=list)
    # (line, package) of a guarded `import pkg` whose name the file reads only for its metadata, and of those reads
    # (`try: import bitsandbytes; info["Bitsandbytes version"] = bitsandbytes.__version__`): a version report
    version_reads: set[tuple[int, str]] = field(default_factory=set)
    # bodies of the arms of an if chain whose test holds only on the NPU (`if x.device.type == "npu":`, `elif
    # is_torch_npu_available():`; not the other arms): the Ascend path's own choices (tq39's NPU branches, tq40)
    npu_arms: list[Span] = field(default_factory=list)
    # arms of a release test taken only on older releases than the other arm (`else:` of `if version.parse(
    # torch.__version__) >= version.parse("2.5.0"):`)
    older_arms: list[Span] = field(default_factory=list)
    # arms only a torch older than any torch_npu supports takes, and the arms of flags only they set (tq56a)
    unsupported_arms: list[Span] = field(default_factory=list)
    # `choices=["cpu", "cuda", "mps"]` of a command-line option: (span, first col, last col) of each such list, whose
    # device names are what the option accepts, not what it picks (the option's default is the choice)
    choices: list[tuple[Span, int, int]] = field(default_factory=list)
    # the file's tree, read by apply_context only when its path names Apple's MPS (`_apple_mps`; t11u)
    tree: ast.Module | None = field(default=None, repr=False, compare=False)

    def kind(self, line: int) -> str | None:
        """The context of a finding at `line`: other-backend, npu-path, platform-class, backend-dispatch or None."""
        for name, spans in (("other-backend", self.other), ("npu-path", self.npu), ("platform-class", self.platform),
                            ("backend-dispatch", self.dispatch)):
            if _inside(spans, line):
                return name
        return None


def _npu_arm_test(test: ast.expr) -> bool:
    """A test that holds only on the NPU: `x.device.type == "npu"`, `"npu" in device`, `is_torch_npu_available()`,
    `torch.npu.is_available()`, `IS_NPU_AVAILABLE`, or an `and` with one of these (not a negation; tq39's reading,
    moved here from gates.py by tq40)."""
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
        return any(_npu_arm_test(v) for v in test.values)
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], (ast.Eq, ast.In)):
        sides = (test.left, test.comparators[0])
        return any(isinstance(x, ast.Constant) and isinstance(x.value, str) and backends_in_text(x.value) == {"npu"}
                   for x in sides) and not all(isinstance(x, ast.Constant) for x in sides)
    if isinstance(test, ast.Call):
        test = test.func
    return isinstance(test, (ast.Name, ast.Attribute)) and backends_in_text(ast.unparse(test)) == {"npu"}


def _inside(spans: list[Span], line: int) -> bool:
    i = bisect.bisect_right(spans, (line, 1 << 30))
    return any(end >= line for _, end in spans[:i])


def _in_columns(spans: list[tuple[Span, int, int]], line: int, col: int) -> bool:
    """Whether 1-based (line, col) lies inside one of the column-exact expression spans."""
    return any(lo <= line <= hi and (line != lo or col > first) and (line != hi or col <= last)
               for (lo, hi), first, last in spans)


_REGISTRATIONS = frozenset({"impl", "register_kernel", "register_fake", "register_autograd", "custom_op"})


def _registration(call: ast.Call) -> bool:
    """`op.impl(["cpu", "cuda"])`, `torch.library.impl("lib::op", "cuda")`, `register_kernel("lib::op", "cuda")`,
    `custom_op("lib::op", device_types="cuda")`."""
    func = call.func
    return (func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else "") \
        in _REGISTRATIONS


# packages written for Ascend only (their Triton kernels are Triton-Ascend ones): torch_npu, Ascend/MindSpeed and the
# tuned projects built on it, vLLM's Ascend plug-in (t11f; MindSpeed-LLM imports `mindspeed.ops.triton.*`)
ASCEND_PACKAGES = frozenset({"torch_npu", "mindspeed", "mindspeed_llm", "mindspeed_mm", "vllm_ascend"})


def _tested_attributes(n: ast.AST) -> list[ast.Attribute]:
    """Attributes a test reads: the test of an if / while / assert / conditional expression, each operand of an
    `and` / `or`, the left side of a comparison (`cfg.fp8_recipe != Fp8Recipe.delayed`)."""
    if isinstance(n, (ast.If, ast.While, ast.IfExp, ast.Assert)):
        return [n.test] if isinstance(n.test, ast.Attribute) else []
    if isinstance(n, ast.BoolOp):
        return [v for v in n.values if isinstance(v, ast.Attribute)]
    if isinstance(n, ast.Compare):
        return [n.left] if isinstance(n.left, ast.Attribute) else []
    return []


def _classify(names: set[str]) -> str | None:
    if "npu" in names:
        return "npu"
    if len(names) >= 2:
        return "dispatch"      # cuda beside rocm / xpu / mps ...: several backends, none of them NPU
    return None


_NEGATIONS = (ast.Not, ast.NotEq, ast.IsNot, ast.NotIn)
# `pytest.mark.runs_on`, `mark.skipif` (not `mark.parametrize`: its values are what the test runs with)
# `torch.cuda.is_available()` alone as an if test (not negated, not combined with another condition)
_CUDA_AVAILABLE = re.compile(r"(?:torch\.)?cuda\.is_available\(\)")
_MARK = re.compile(r"(?:^|\.)mark\.(?!parametrize$)\w+$|(?:^|\.)skip(?:If|Unless)$")    # + unittest's skipIf
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")     # FastLinearROCm -> Fast_Linear_ROCm
# A test (or a fixture helper) whose first statement skips it without CUDA (`if not torch.cuda.is_available(): pytest.skip(...)`,
# `if device == "cuda" and not torch.cuda.is_available(): pytest.skip(...)`) selects where it runs like a skipif mark
# (t11t, heldout13's InvokeAI tests): on Ascend the test is reported skipped. The check is a test mark; so are the
# `parametrize` cases of the parameter the check compares with a CUDA string (the "cuda" case is skipped there).
_SKIP_FUNCS = frozenset({"pytest.skip", "self.skipTest", "skipTest"})
_CUDA_TEXT = re.compile(r"\bcuda\b|\bgpu\b", re.I)


def _sets_up(stmt: ast.stmt) -> bool:
    """An import, or `pytest.importorskip("torch")`: a statement that only makes the test's packages available
    (tq42: InternNav's `test_gpu_feature` imports torch, then skips without CUDA)."""
    if isinstance(stmt, (ast.Import, ast.ImportFrom)):
        return True
    call = stmt.value if isinstance(stmt, (ast.Expr, ast.Assign)) else None
    return isinstance(call, ast.Call) and ast.unparse(call.func).rsplit(".", 1)[-1] == "importorskip"


def _skip_gate_marks(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> list[Span]:
    body = [s for s in fn.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
    while body and _sets_up(body[0]):
        body = body[1:]
    first = body[0] if body else None
    if not (isinstance(first, ast.If) and not first.orelse and len(first.body) == 1):
        return []
    leave = first.body[0]
    called = ast.unparse(leave.value.func) if isinstance(leave, ast.Expr) and isinstance(leave.value, ast.Call) else ""
    # a test, or any function whose first statement calls pytest's / unittest's skip (a fixture builder
    # `build_layer()` that skips without CUDA: the skip API itself says the function runs inside a test)
    skips = called in _SKIP_FUNCS or \
        isinstance(leave, ast.Raise) and leave.exc is not None and "SkipTest" in ast.unparse(leave.exc)
    test = ast.unparse(first.test)
    if _assumes_cuda(leave):
        pass            # `if device == "cuda": assume(not gpu_unavailable[0])`: hypothesis drops the example (pd40)
    elif not skips or not _CUDA_TEXT.search(test) or not any(isinstance(n, ast.Not) for n in walk_list(first.test)):
        return []       # only a check that skips where CUDA is absent (`not ...is_available()`)
    marks = [line_span(first.test)]
    params = {a.arg for a in [*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs]}
    compared = {n.left.id for n in walk_list(first.test) if isinstance(n, ast.Compare) and isinstance(n.left, ast.Name)
                and n.left.id in params and any(isinstance(c, ast.Constant) and isinstance(c.value, str)
                                                and _CUDA_TEXT.search(c.value) for c in n.comparators)}
    compared |= _compared_parameters(first.test, params)
    if _assumes_cuda(leave) and not compared:
        return []
    for dec in fn.decorator_list:
        if compared and isinstance(dec, ast.Call) and ast.unparse(dec.func).rsplit(".", 1)[-1] == "given":
            # `@given(device_str=st.sampled_from(["cpu", "cuda"]))`: the strategy of the compared parameter
            marks += [line_span(k.value) for k in dec.keywords if k.arg in compared]
            continue
        if not (compared and isinstance(dec, ast.Call) and ast.unparse(dec.func).endswith("parametrize") and dec.args):
            continue
        names = dec.args[0]      # "device, qtype" or ["device", "qtype"]
        listed = [n.value for n in names.elts if isinstance(n, ast.Constant)] if isinstance(
            names, (ast.List, ast.Tuple)) else [names.value] if isinstance(names, ast.Constant) else []
        if compared & {p.strip() for v in listed if isinstance(v, str) for p in v.split(",")}:
            marks.append(line_span(dec))
    return marks


def _skip_tests(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> list[Span]:
    """The tests of the function's own `if <check>: pytest.skip(...)` statements after its first (skorch's `if
    mixed_precision == 'bf16' and not is_bf16_available(): pytest.skip(...)` below the CUDA skip): a check whose
    only statement skips the test picks where the test runs, and decides nothing else (tq44a)."""
    return [line_span(s.test) for s in fn.body[1:] if isinstance(s, ast.If) and not s.orelse and len(s.body) == 1
            and isinstance(s.body[0], ast.Expr) and isinstance(s.body[0].value, ast.Call)
            and ast.unparse(s.body[0].value.func) in _SKIP_FUNCS]


_PROBES = frozenset({"torch.cuda.is_available", "torch.cuda.device_count"})


def _parametrized_probes(decorators: list[ast.expr]) -> list[Span]:
    """`@pytest.mark.parametrize('cuda_available', {False, torch.cuda.is_available()})` (skorch's pickle test): a
    CUDA probe among a parametrize mark's values picks which cases run, like a skip mark (tq44a); a "cuda" string
    value there is no probe and keeps its reading."""
    return [line_span(n) for d in decorators if isinstance(d, ast.Call) and
            ast.unparse(d.func).endswith("parametrize") for a in d.args[1:2]
            for n in walk_list(a) if isinstance(n, ast.Call) and ast.unparse(n.func) in _PROBES]


def _compared_parameters(test: ast.expr, params: set[str]) -> set[str]:
    """Parameters a skip test checks for CUDA in the other spellings (tq44a, skorch's tests): `'cuda' in
    (device_from, device_to)` and `device.startswith('cuda')`."""
    out: set[str] = set()
    for n in walk_list(test):
        if isinstance(n, ast.Compare) and isinstance(n.left, ast.Constant) and isinstance(n.left.value, str) and \
                _CUDA_TEXT.search(n.left.value) and isinstance(n.ops[0], ast.In):
            out |= {e.id for c in n.comparators if isinstance(c, (ast.Tuple, ast.List, ast.Set))
                    for e in c.elts if isinstance(e, ast.Name) and e.id in params}
        elif isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "startswith" and \
                isinstance(n.func.value, ast.Name) and n.func.value.id in params and n.args and \
                isinstance(n.args[0], ast.Constant) and isinstance(n.args[0].value, str) and \
                _CUDA_TEXT.search(n.args[0].value):
            out.add(n.func.value.id)
    return out


def _stored_mark(stmt: ast.stmt) -> bool:
    """`requires_cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason=...)`: a skip mark stored under a name
    that tests wear as a decorator (tq42: setfit's `torch_cuda_available`), or returned by a decorator factory (tq46b,
    below); the check selects where they run, like the
    mark written on the test (gates.py reads the tests it marks). Not `pytestmark`, which gates.py reads itself."""
    if isinstance(stmt, ast.Return) and isinstance(stmt.value, ast.Call):
        # a decorator factory's mark, returned or applied: `return pytest.mark.skipif(not torch.cuda.is_available() or
        # torch.cuda.device_count() < 2, reason=...)(fn)` (speculators' `requires_multi_gpu`; tq46b)
        call = stmt.value.func if isinstance(stmt.value.func, ast.Call) else stmt.value
    elif isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name) \
            and stmt.targets[0].id != "pytestmark" and isinstance(stmt.value, ast.Call):
        call = stmt.value
    else:
        return False
    return ast.unparse(call.func).rsplit(".", 1)[-1] in ("skipif", "skipIf", "skipUnless") \
        and bool(_MARK.search(ast.unparse(call.func)))


def _assumes_cuda(stmt: ast.stmt) -> bool:
    """`assume(not gpu_unavailable[0])` / `assume(torch.cuda.is_available())`: hypothesis's `assume` rejects the
    example unless CUDA is present (a name or call naming CUDA / GPU, no string compared: `assume(device == "cuda")`
    picks a case, it probes nothing)."""
    if not (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) and len(stmt.value.args) == 1 and
            (ast_dotted(stmt.value.func) or "").rsplit(".", 1)[-1] == "assume"):
        return False
    arg = stmt.value.args[0]
    return re.search(r"(?i)cuda|gpu", ast.unparse(arg)) is not None and not any(
        isinstance(n, ast.Constant) and isinstance(n.value, str) for n in walk_list(arg))


def _backend_slots(name: str) -> list[tuple[str, str]]:
    """(the name with one backend word replaced by a slot, that word's backend) for each backend word of a function
    name: `get_cuda_free_memory` -> [("get_{}_free_memory", "cuda")]."""
    words = name.split("_")
    out = []
    for i, w in enumerate(words):
        named = backends_in_text(w)
        if len(named) == 1 and w.lower() == w:
            out.append(("_".join([*words[:i], "{}", *words[i + 1:]]), next(iter(named))))
    return out


def _cuda_members(body: list[ast.stmt]) -> list[Span]:
    """Spans of the CUDA members of per-backend function sets in one block: `def get_cuda_free_memory` beside `def
    get_xpu_free_memory` (the same name with another backend's word), one of which a platform switch binds; the CUDA
    one is that platform's implementation (t11z, heldout17's TGI `import_utils.py`)."""
    slots: dict[str, set[str]] = {}
    defs = [s for s in body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))]
    for fn in defs:
        for key, backend in _backend_slots(fn.name):
            slots.setdefault(key, set()).add(backend)
    out = []
    for fn in defs:
        if any(backend == "cuda" and slots[key] - {"cuda"} for key, backend in _backend_slots(fn.name)):
            out.append(line_span(fn))
    return out


def _only_other(names: set[str]) -> bool:
    return bool(names) and names <= OTHER_BACKENDS


def _other_backend_test(test: ast.expr, names: set[str]) -> bool:
    """`SYSTEM == "rocm"`, `is_xpu()`, `device.type == "hpu"`: a test that holds only on another backend
    (a negated test, `not is_xpu()`, holds on CUDA and NPU too)."""
    return _only_other(names) and not any(isinstance(n, _NEGATIONS) for n in walk_list(test))


def default_arm(test: ast.expr) -> bool:
    """Whether the `else` of `if <test>:` is the default path, which runs on CUDA and on Ascend alike: the test holds
    only on another backend (`if SYSTEM == "xpu": import intel_extension_for_pytorch` / `else: import vllm._custom_ops`,
    lorax's paged attention; pd34). An import there is not optional."""
    return _other_backend_test(test, backends_in_text(ast.unparse(test)))


def _none_test(node: ast.expr) -> tuple[ast.expr, bool] | None:
    """(probe, holds when set) of `probe is not None` / `probe != None` (True) and `probe is None` (False)."""
    if isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.comparators[0], ast.Constant) \
            and node.comparators[0].value is None:
        if isinstance(node.ops[0], (ast.IsNot, ast.NotEq)):
            return node.left, True
        if isinstance(node.ops[0], (ast.Is, ast.Eq)):
            return node.left, False
    return None


def _requires_other_backend(test: ast.expr, text) -> bool:
    """`sys.platform == "win32" and torch.cuda.is_available() and torch.version.hip is not None` (a ROCm probe in
    stable-diffusion-webui-amdgpu's shared_init): an `and` one operand of which holds only on another backend holds
    only there, whatever CUDA probe sits beside it; on Ascend it is False, as it should be (s15d). `text` gives an
    operand's source. A negated operand (`not torch.version.hip`, `torch.version.hip is None`) does not count."""
    if not (isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And)):
        return False
    for operand in test.values:
        none_test = _none_test(operand)
        probe, positive = none_test if none_test is not None else (operand, True)
        if positive and _only_other(_probe_backends(probe, text)) and \
                not any(isinstance(n, _NEGATIONS) for n in walk_list(probe)):
            return True
    return False


def _vendor_name_test(test: ast.expr) -> bool:
    """`"AMD" in torch.cuda.get_device_name()` (verl's Worker setup, whose arm maps ROCR_VISIBLE_DEVICES): another
    vendor's name looked for in what a device-name query answers holds only on that vendor's GPU. On Ascend the query
    names an Ascend model ("Ascend910B2"), so the arm never runs (tq56c); the query itself stays its own finding."""
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.In)):
        return False
    literal, probe = test.left, test.comparators[0]
    if isinstance(probe, ast.Attribute) and probe.attr == "name":
        probe = probe.value         # `torch.cuda.get_device_properties(0).name`
    return isinstance(literal, ast.Constant) and isinstance(literal.value, str) \
        and _only_other(backends_in_text(literal.value)) and isinstance(probe, ast.Call) \
        and (ast_dotted(probe.func) or "").rsplit(".", 1)[-1] in DEVICE_NAME_PROBES


def _probe_backends(probe: ast.expr, text) -> set[str]:
    """The backends an operand names in its own words (names, attributes, strings: `torch.version.hip`, `SYSTEM ==
    "rocm"`, `torch.xpu.is_available()`), where they agree with the operand's text; a word the text reader finds only
    across an expression (`engine.get_tensor_mode(name) == trt.TensorIOMode.OUTPUT` in a TensorRT-LLM runner) is not
    a backend test."""
    words = [n.id if isinstance(n, ast.Name) else n.attr if isinstance(n, ast.Attribute) else str(n.value)
             for n in walk_list(probe) if isinstance(n, (ast.Name, ast.Attribute))
             or isinstance(n, ast.Constant) and isinstance(n.value, str)]
    tokens = {t.lower() for w in words for t in _TOKEN.split(_CAMEL.sub("_", w)) if t}
    return {_BACKEND_ALIASES[t] for t in tokens if t in _BACKEND_ALIASES} & backends_in_text(text(probe))


_TOKEN = re.compile(r"[^A-Za-z0-9]+|_")     # `torch.version.hip`, `HAS_FLASH_ATTN_V2_ROCM` -> words


# Folders that hold one implementation per backend (`bitsandbytes/backends/cuda/`, `vllm/platforms/cuda.py`,
# `dlinfer/vendor/ascend/`)
PLUGIN_FOLDERS = frozenset({"backends", "backend", "platforms", "platform", "vendor", "vendors", "devices",
                            "device", "accelerators", "accelerator", "hardware"})


def cuda_backend_module(rel: str) -> bool:
    """`bitsandbytes/backends/cuda/ops.py`, `vllm/platforms/cuda.py`: the CUDA implementation inside a folder of
    per-backend implementations. The port adds an NPU one beside it; the CUDA one stays as it is."""
    parts = rel.replace("\\", "/").split("/")
    parts[-1] = parts[-1].rsplit(".", 1)[0]
    return any(parts[i - 1].lower() in PLUGIN_FOLDERS and backends_in_text(parts[i]) == {"cuda"}
               for i in range(1, len(parts)))


def path_backends(rel: str) -> set[str]:
    """Backends that the folders and the file name of a relative path name (`backends/gaudi/x.py` -> hpu)."""
    parts = rel.replace("\\", "/").split("/")
    parts[-1] = parts[-1].rsplit(".", 1)[0]
    return set().union(*(backends_in_text(p) for p in parts))


def _guards_imports(handler: ast.ExceptHandler) -> bool:
    """An `except ImportError:` (or broader) handler that goes on without the package; one that ends by raising
    (`except ImportError as e: print("[Fail]"); raise e`, `raise ImportError("build the kernels first")`) leaves no
    path without it (heldout17: Megatron's fused-kernel test, TGI's paged attention import)."""
    if handler.body and isinstance(handler.body[-1], ast.Raise):
        return False
    if handler.type is None:
        return True
    types = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
    return any(isinstance(t, ast.Name) and t.id in _IMPORT_ERRORS or
               isinstance(t, ast.Attribute) and t.attr in _IMPORT_ERRORS for t in types)


# `is_flash_attn_2_available`, `is_apex_installed`, `HAS_APEX`, `_USE_FLASH` (not torch.cuda.is_available)
# `XFORMERS_IS_AVAILABLE` (ComfyUI's comfy.model_management), `FLASH_ATTN_AVAILABLE`: an attention package's flag set
# where its import succeeded, read as a module attribute (`mm.XFORMERS_IS_AVAILABLE`) as often as a name (heldout22,
# pd15). Only the attention packages NPU391 names: `if TE_AVAILABLE:` / `if TRITON_AVAILABLE:` would take the guard's
# context over the notes that lower their imports to info (read on nemo and physicsnemo)
_AVAILABILITY = re.compile(r"^_?(?:is|has)_\w+_(?:available|installed)$|^_?(?:HAS|IS|USE)_[A-Z0-9_]+$"
                           r"|^_?(?:XFORMERS|FLASH_ATTN\w*|FLASH_ATTENTION\w*|SAGE_?ATT\w*)_(?:IS_)?AVAILABLE$")


# transformers' probes that test only the torch release (`is_torch_available() and version.parse(
# get_torch_version()) >= version.parse("2.5.0")`, src/transformers/utils/import_utils.py): true on a torch_npu of that
# release, so no guard the Ascend path skips (tq55b, heldout72's small-doge)
_RELEASE_PROBES = frozenset({"is_torch_flex_attn_available", "is_grouped_mm_available"})


_CUDA_ONLY_IMPORT_CATEGORIES = frozenset({"attention", "kernel", "third_party", "apex"})


def cuda_only_import_lines(findings: Sequence[Finding]) -> frozenset[int]:
    """Lines whose import a rule reports as a CUDA-only package at error (xformers, transformer_engine, a CUDA
    extension), before context: the imports whose success a try body's True flag can stand for."""
    return frozenset(f.line for f in findings if f.category in _CUDA_ONLY_IMPORT_CATEGORIES and f.severity == "error")


_CPU_WORD = re.compile(r"(?i)(?:^|[_.])cpu(?:$|[_.])")


def _imports_cpu_build(stmt: ast.Import | ast.ImportFrom) -> bool:
    """`from .. import deform_conv_cpu`: the CPU build of a tree's own extension (easyocr's DBNet dcn), which builds
    on an Ascend host too; its flag is no sign of CUDA."""
    names = [a.name for a in stmt.names] + ([stmt.module] if isinstance(stmt, ast.ImportFrom) and stmt.module else [])
    return any(_CPU_WORD.search(n) for n in names)


def _true_flags(body: list[ast.stmt]) -> set[str]:
    """Names a try body sets to True beside its imports (`XFORMERS_IS_AVAILABLE = True`): availability flags."""
    return {t.id for s in body if isinstance(s, ast.Assign) and isinstance(s.value, ast.Constant)
            and s.value.value is True for t in s.targets if isinstance(t, ast.Name)}


def _tests_optional_import(test: ast.expr, guarded: set[str], params=frozenset) -> bool:
    """`flash_attn_func is not None`, `if apex_amp:`, `is_flash_attn_2_available()`, `HAS_APEX`. A name the file
    takes as a function parameter is an argument, not an import flag (a Triton or Gluon kernel's
    `HAS_BIAS: tl.constexpr`, `IS_CAUSAL`); `params()` gives those names, read only when a flag-like name is met."""
    for n in walk_list(test):
        name = n.id if isinstance(n, ast.Name) else n.attr if isinstance(n, ast.Attribute) else None
        if name is not None and (name in guarded or _AVAILABILITY.match(name) and name not in _RELEASE_PROBES and
                                 not (isinstance(n, ast.Name) and name in params())):
            return True
    return False


_RANK_NAME = re.compile(r"^_?(?:local_|global_|node_|dp_|tp_|pp_)?rank$|^get_(?:local_|global_|node_)?rank$")


def rank_test(test: ast.expr) -> bool:
    """`torch.distributed.get_rank() == 0`, `self.rank == 0`, `local_rank != 0`: a test of which process runs the
    code. Every run has a rank 0, so an import under it is not optional: it is not an availability guard (t11r)."""
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], (ast.Eq, ast.NotEq))):
        return False
    sides = [test.left, test.comparators[0]]
    if not any(isinstance(v, ast.Constant) and type(v.value) is int for v in sides):
        return False
    for v in sides:
        node = v.func if isinstance(v, ast.Call) else v
        name = node.attr if isinstance(node, ast.Attribute) else node.id if isinstance(node, ast.Name) else None
        if name is not None and _RANK_NAME.match(name):
            return True
    return False


_BODIES = ("body", "orelse", "finalbody", "handlers", "cases")


def build_backend_context(tree: ast.Module, lines: list[str], wanted: list[int],
                          cuda_only_imports: Collection[int] = ()) -> BackendContext:
    """The context around the sorted line numbers `wanted` (the lines with findings); statements that hold none
    of them are only walked for their imports, which keeps the cost far below a second parse. `cuda_only_imports`:
    the lines of error imports of CUDA-only packages (`cuda_only_import_lines`), which make a try body's True
    flag an availability flag."""
    ctx = BackendContext(tree=tree)
    params: list[frozenset[str]] = []

    apple: list[set[str]] = []

    def mps_word() -> set[str]:
        """{"mps"} when the file does not use Apple's MPS: `class MPSModel` names a metric's model (t11u)."""
        if not apple:
            apple.append(set() if _apple_mps(tree) else {"mps"})
        return apple[0]

    def parameters() -> frozenset[str]:
        if not params:
            params.append(frozenset(a.arg for a in module_nodes(tree) if isinstance(a, ast.arg)))
        return params[0]

    def holds(start: int, end: int) -> bool:
        i = bisect.bisect_left(wanted, start)
        return i < len(wanted) and wanted[i] <= end

    def segment(node: ast.stmt | ast.expr) -> str:
        first, last = node.lineno, node.end_lineno or node.lineno
        if first == last:
            return lines[first - 1][node.col_offset:node.end_col_offset]
        return "".join(lines[first - 1:last])

    def expressions(node: ast.AST) -> None:
        """IfExp, BoolOp and backend-name collections inside one statement (or a compound statement's header)."""
        stack = [node]
        while stack:
            n = stack.pop()
            if isinstance(n, (ast.stmt, ast.excepthandler)) and n is not node:
                continue
            kind = None
            if n is node and isinstance(n, (ast.Assign, ast.AnnAssign, ast.Return)) and \
                    isinstance(n.value, ast.BoolOp) and _requires_other_backend(n.value, segment):
                # `IS_ROCM = torch.cuda.is_available() and torch.version.hip is not None`: the probe's own value
                ctx.other.append(line_span(n.value))
            if isinstance(n, (ast.IfExp, ast.BoolOp)):
                kind = _classify(backends_in_text(segment(n)))
            elif isinstance(n, (ast.Set, ast.List, ast.Tuple, ast.Dict)):
                kind = _classify(_backend_literals(n))
                if kind is not None:
                    ctx.collections.append((line_span(n), n.col_offset, n.end_col_offset or 0))
            if isinstance(n, ast.UnaryOp) and isinstance(n.op, ast.Not) and isinstance(n.operand, ast.Attribute):
                ctx.negated_flags.add((n.operand.lineno, n.operand.attr))     # `and not training_args.fp8`
            for read in _tested_attributes(n):
                ctx.read_flags.add((read.lineno, read.attr))      # `if self.config.fp8 and ...`: a test reads it
            if isinstance(n, ast.Call) and _registration(n):
                ctx.registrations.append(line_span(n))    # `@op.impl(["cpu", "cuda"])`: dispatch keys, not devices
            if isinstance(n, ast.keyword) and n.arg == "choices" and isinstance(n.value, (ast.List, ast.Tuple, ast.Set)) \
                    and len(n.value.elts) > 1 and "cuda" in backends_in_text(" ".join(_backend_literals(n.value))):
                # (`choices=["cuda"]` alone is the choice: omniserve's --device accepts nothing else)
                ctx.choices.append((line_span(n.value), n.value.col_offset, n.value.end_col_offset or 0))
            if isinstance(n, ast.keyword) and n.arg == "dist_cfg":
                ctx.mmengine_dist.append(line_span(n.value))      # `env_cfg = dict(dist_cfg=dict(backend="nccl"))`
            elif isinstance(n, ast.Dict):
                ctx.mmengine_dist.extend(line_span(v) for k, v in zip(n.keys, n.values)
                                         if isinstance(k, ast.Constant) and k.value == "dist_cfg")
            if isinstance(n, ast.expr) and kind == "npu":
                ctx.npu.append(line_span(n))
            elif isinstance(n, ast.expr) and kind == "dispatch":
                ctx.dispatch.append(line_span(n))
            for name, value in ast.iter_fields(n):
                if n is node and name in _BODIES:
                    continue
                if isinstance(value, ast.AST):
                    stack.append(value)
                elif isinstance(value, list):
                    stack.extend(v for v in value if isinstance(v, ast.AST))

    def if_chain(stmt: ast.If, body: list[ast.stmt], i: int) -> None:
        tests = [stmt.test]
        cur = stmt
        while len(cur.orelse) == 1 and isinstance(cur.orelse[0], ast.If):
            cur = cur.orelse[0]
            tests.append(cur.test)
        span = line_span(stmt)
        cur, names_of = stmt, []
        while True:
            names = backends_in_text(segment(cur.test))
            names_of.append(names)
            if cur.body and _npu_arm_test(cur.test):
                ctx.npu_arms.append((cur.body[0].lineno, line_span(cur.body[-1])[1]))
            vendor = _vendor_name_test(cur.test)
            if cur.body and (_other_backend_test(cur.test, names) or vendor
                             or _requires_other_backend(cur.test, segment)):
                if not _other_backend_test(cur.test, names) and not vendor:
                    ctx.other.append(line_span(cur.test))     # the probe itself: its CUDA half asks for HIP's build
                ctx.other.append((cur.body[0].lineno, line_span(cur.body[-1])[1]))
                if names & HOST_RUNTIMES:     # `if device == "mlx":` (t11r)
                    ctx.host.append((cur.body[0].lineno, line_span(cur.body[-1])[1]))
            elif cur.body and _CUDA_AVAILABLE.fullmatch(segment(cur.test).strip()):
                ctx.cuda_available.append((cur.body[0].lineno, line_span(cur.body[-1])[1]))
            if len(cur.orelse) == 1 and isinstance(cur.orelse[0], ast.If):
                cur = cur.orelse[0]
            else:
                break
        kind = _classify(set().union(*names_of))
        if kind == "npu":
            ctx.npu.append(span)
            last = stmt.body[-1] if stmt.body else None
            if not stmt.orelse and isinstance(last, (ast.Return, ast.Raise)) and i + 1 < len(body):
                # `if is_npu_available(): return "npu"` ... the rest of the block serves the other backends
                ctx.npu.append((body[i + 1].lineno, line_span(body[-1])[1]))
        elif kind == "dispatch":
            ctx.dispatch.append(span)

    def sibling_ifs(body: list[ast.stmt]) -> None:
        """`if is_torch_cuda_available(): return torch.cuda...` then `if is_torch_npu_available(): return torch.npu...`:
        separate ifs of one block that test different backends, one of them NPU, are one dispatch."""
        tested = [(stmt, backends_in_text(segment(stmt.test))) for stmt in body if isinstance(stmt, ast.If)]
        kind = _classify(set().union(*(names for _, names in tested))) if len(tested) > 1 else None
        if kind is not None:
            (ctx.npu if kind == "npu" else ctx.dispatch).extend(line_span(stmt) for stmt, names in tested if names)

    def block(body: list[ast.stmt], guarded: bool, chained: bool = False) -> None:
        if body and not chained and holds(body[0].lineno, line_span(body[-1])[1]):
            sibling_ifs(body)
            ctx.platform.extend(_cuda_members(body))
        for i, stmt in enumerate(body):
            start, end = line_span(stmt)
            decorators = getattr(stmt, "decorator_list", None)
            if decorators:     # `@pytest.mark.runs_on(["cuda"])` sits above the def line
                start = min(start, *(d.lineno for d in decorators))
                ctx.test_marks.extend(line_span(d) for d in decorators if _MARK.search(ast.unparse(d.func if isinstance(
                    d, ast.Call) else d)))
                ctx.test_marks.extend(_parametrized_probes(decorators))
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                ctx.test_marks.extend(_skip_gate_marks(stmt))
                ctx.test_marks.extend(_skip_tests(stmt))
            elif _stored_mark(stmt):
                ctx.test_marks.append(line_span(stmt))
            if isinstance(stmt, (ast.Import, ast.ImportFrom)):
                if guarded and stmt.lineno not in opted:
                    ctx.guarded_imports.update(range(start, end + 1))
                    ctx.guarded_names.update((a.asname or a.name).split(".")[0] for a in stmt.names)
                    modules = [stmt.module] if isinstance(stmt, ast.ImportFrom) and stmt.module and not stmt.level \
                        else [a.name for a in stmt.names] if isinstance(stmt, ast.Import) else []
                    ctx.guarded_blocks.extend(((body[0].lineno, line_span(body[-1])[1]), m.split(".")[0]) for m in modules)
                continue
            relevant = holds(start, end)
            if isinstance(stmt, ast.If):
                early_return = not stmt.orelse and isinstance(stmt.body[-1], (ast.Return, ast.Raise)) \
                    and holds(end + 1, line_span(body[-1])[1])
                if (relevant or early_return) and not chained:
                    if_chain(stmt, body, i)
                if relevant and stmt.body and _tests_optional_import(stmt.test, ctx.guarded_names, parameters):
                    ctx.import_guard.append((stmt.body[0].lineno, line_span(stmt.body[-1])[1]))
                if relevant:
                    expressions(stmt)
                older = older_release_arm(stmt) if relevant else []
                if older:
                    ctx.older_arms.append((older[0].lineno, line_span(older[-1])[1]))
                rank = rank_test(stmt.test)     # `if dist.get_rank() == 0:` chooses a process, not a path (t11r)
                block(stmt.body, guarded or not rank)
                elif_ = len(stmt.orelse) == 1 and isinstance(stmt.orelse[0], ast.If)
                # the arm after a test that holds only on another backend (`if SYSTEM == "xpu": import ipex` / `else:
                # import vllm._custom_ops`, lorax) is the default path: it runs on CUDA and on Ascend alike (pd34)
                default = relevant and default_arm(stmt.test)
                block(stmt.orelse, guarded or not (rank or default), chained=elif_)
                continue
            if isinstance(stmt, ast.ClassDef) and relevant:
                # `class DeviceType(StrEnum): CUDA = "cuda"; NPU = "npu"`: a table of backend names
                values = {_BACKEND_ALIASES[v.value.value.split(":", 1)[0].lower()] for v in stmt.body
                          if isinstance(v, ast.Assign) and isinstance(v.value, ast.Constant)
                          and isinstance(v.value.value, str)
                          and v.value.value.split(":", 1)[0].lower() in _BACKEND_ALIASES}
                kind = _classify(values)
                if kind is not None:
                    (ctx.npu if kind == "npu" else ctx.dispatch).append((start, end))
            if isinstance(stmt, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and relevant \
                    and _only_other(named := backends_in_text(_CAMEL.sub("_", stmt.name)) - mps_word()) \
                    and (named != {"xla"} or _xla_code(tree)):
                # `class FastLinearROCm`, `def forward_xpu`; not tpu-mq's `class LinearBn1d_tpu` (plain torch QAT
                # modules for Sophgo's deploy target; tq54e)
                ctx.other.append((start, end))
            elif isinstance(stmt, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and relevant \
                    and backends_in_text(_CAMEL.sub("_", stmt.name)) == {"npu"}:
                ctx.npu.append((start, end))       # `def get_npu_properties`, `class AscendAttentionBackend`
            if isinstance(stmt, ast.ClassDef) and relevant and _CUDA_CLASS.search(stmt.name) and any(
                    _ABSTRACTION_BASE.search(ast.unparse(b)) for b in stmt.bases):
                ctx.platform.append((start, end))
            if not relevant and not _has_imports(stmt):
                continue
            if relevant:
                expressions(stmt)
            if isinstance(stmt, _TRY):
                first = next((k for k, s in enumerate(stmt.body) if isinstance(s, (ast.Import, ast.ImportFrom))
                              and s.lineno in cuda_only_imports and not _imports_cpu_build(s)), None)
                if any(_guards_imports(h) for h in stmt.handlers) and first is not None:
                    # `try: import xformers; XFORMERS_IS_AVAILABLE = True`: the flag says the import succeeded; not
                    # a tree's own CPU extension or a package Ascend has (`import bfloat16`: easyocr, bitblas; pd12)
                    ctx.guarded_names.update(_true_flags(stmt.body))
                    if first + 1 < len(stmt.body):
                        # `try: import xformers; pipe.enable_xformers_memory_efficient_attention()` / `except: pass`:
                        # the rest of the body runs only once the import succeeded, never on Ascend (sdkit; t33c)
                        ctx.import_guard.append((stmt.body[first + 1].lineno, line_span(stmt.body[-1])[1]))
                block(stmt.body, guarded or any(_guards_imports(h) for h in stmt.handlers))
                # `try: from torch.amp import GradScaler, autocast` / `except ImportError: from torch.cuda.amp import
                # GradScaler, autocast`: the handler's import is a fallback for an older torch, taken only where the
                # torch import above it failed: a version guard, as `if hasattr(torch.amp, "custom_fwd"): ... else:
                # from torch.cuda.amp import ...` is (tq39, heldout42's rf-detr engine.py). Only a try whose imports
                # are all torch's: where the first import is of a package Ascend lacks (`from flash_attn... import
                # f` / `except ImportError: from flash_attn... import g as f`, `from apex import amp` / `except:
                # from torch.cuda import amp`), the handler is the path Ascend takes, not an optional one
                tops = {s.module.split(".")[0] if isinstance(s, ast.ImportFrom) and s.module and not s.level else
                        a.name.split(".")[0] if isinstance(s, ast.Import) else ""
                        for s in stmt.body if isinstance(s, (ast.Import, ast.ImportFrom))
                        for a in s.names}
                fallback = tops == {"torch"}
                for h in stmt.handlers:
                    block(h.body, guarded or fallback and _guards_imports(h))
                block(stmt.orelse, guarded)
                block(stmt.finalbody, guarded)
                continue
            scope = isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
            for name in ("body", "orelse", "finalbody"):
                sub = getattr(stmt, name, None)
                if isinstance(sub, list) and sub and isinstance(sub[0], ast.stmt):
                    block(sub, guarded and not scope)
            for case in getattr(stmt, "cases", ()) or ():
                block(case.body, guarded)

    opted = opted_in_import_lines(tree)
    block(tree.body, False)
    ctx.npu += _paired_probe_flags(tree, wanted)
    if ctx.npu:
        ctx.npu.sort()
        ctx.npu += _probes_read_on_npu_paths(tree, ctx.npu, wanted)
    if ctx.guarded_imports:
        ctx.version_reads = _version_reads(tree, ctx.guarded_imports)
    ctx.file_backend, ctx.star_backend = _file_backend(tree.body)
    ctx.foreign_export = _foreign_lowering(tree)
    ctx.choices += _membership_lists(tree)
    ctx.unsupported_arms = sorted(unsupported_release_flag_arms(tree))
    for spans in (ctx.npu, ctx.dispatch, ctx.platform, ctx.import_guard, ctx.other, ctx.mmengine_dist, ctx.test_marks,
                  ctx.cuda_available, ctx.registrations, ctx.npu_arms):
        spans.sort()
    return ctx


def _membership_lists(tree: ast.Module) -> list[tuple[Span, int, int]]:
    """(span, first col, last col) of the device-name lists a value is checked against (`allowed_devices = ("auto",
    "cpu", "cuda", "xpu")` ... `if device not in allowed_devices: raise ValueError(...)`; anomalib's TorchInferencer,
    tq41): a tuple, list or set literal of two or more strings naming CUDA and another device, bound to a name whose
    every read is the right side of an `in` / `not in` test (or shown in an f-string). Like an option's `choices=`, the list says what a
    user may pass, not what runs (the default or the value passed picks)."""
    bound: dict[str, list[ast.expr]] = {}
    for n in module_nodes(tree):
        if not (isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], ast.Name) and
                isinstance(n.value, (ast.List, ast.Tuple, ast.Set)) and len(n.value.elts) > 1 and
                all(isinstance(e, ast.Constant) and isinstance(e.value, str) for e in n.value.elts)):
            continue
        named = backends_in_text(" ".join(_backend_literals(n.value)))
        if "cpu" in literal_strings(n.value):
            named |= {"cpu"}
        if "cuda" in named and len(named) > 1:
            bound.setdefault(n.targets[0].id, []).append(n.value)
    if not bound:
        return []
    tested = {id(c) for n in module_nodes(tree) if isinstance(n, ast.Compare)
              for op, c in zip(n.ops, n.comparators) if isinstance(op, (ast.In, ast.NotIn))}
    tested |= {id(x) for n in module_nodes(tree) if isinstance(n, ast.JoinedStr) for x in walk_list(n)}   # shown
    out = []
    for name, values in bound.items():
        reads = [n for n in module_nodes(tree) if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load)]
        if reads and all(id(r) in tested for r in reads):
            out += [(line_span(v), v.col_offset, v.end_col_offset or 0) for v in values]
    return out


def _probes_read_on_npu_paths(tree: ast.Module, npu: list[Span], wanted: list[int]) -> list[Span]:
    """Spans of `has_cuda = torch.cuda.is_available()` (a name bound to a CUDA probe, in a function or at module level)
    whose every read lies on an NPU path (ChatTTS' `select_device`: `if has_cuda or _is_torch_npu_available():
    provider = torch.cuda if has_cuda else torch.npu`): the probe only feeds a dispatch that already reaches the NPU
    (pd43). A read anywhere else keeps the probe's finding."""
    lines = set(wanted)
    out: list[Span] = []
    for scope in [tree, *(n for n in module_nodes(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)))]:
        body = scope.body
        nodes = [n for stmt in body for n in walk_list(stmt)] if scope is not tree else \
            [n for stmt in body if not isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
             for n in walk_list(stmt)]
        for stmt in nodes:
            if not (isinstance(stmt, ast.Assign) and stmt.lineno in lines and len(stmt.targets) == 1
                    and isinstance(stmt.targets[0], ast.Name) and any(
                        isinstance(c, ast.Call) and (ast_dotted(c.func) or "").startswith("torch.cuda.")
                        for c in walk_list(stmt.value))):
                continue
            name = stmt.targets[0].id
            reads = [n.lineno for n in (module_nodes(tree) if scope is tree else nodes)
                     if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load)]
            if reads and all(_inside(npu, line) for line in reads):
                out.append(line_span(stmt))
    return out


def _cuda_probe_call(value: ast.expr) -> bool:
    return any(isinstance(c, ast.Call) and (ast_dotted(c.func) or "").startswith("torch.cuda.") for c in walk_list(value))


def _paired_probe_flags(tree: ast.Module, wanted: list[int]) -> list[Span]:
    """Spans of a module-level `IS_CUDA_AVAILABLE = torch.cuda.is_available()` next to `IS_NPU_AVAILABLE =
    is_torch_npu_available()` (the statement before or after it binds a name to a probe that names only the NPU): a
    device layer that asks each backend and exports the answers (VeOmni's and verl's `utils/device.py`, whose
    `get_device_type()` then picks "npu"; tq39, tuned on heldout42). On Ascend the CUDA flag answers False, which is
    right; the code that reads the flag elsewhere carries its own findings (flags.py), so the flag's own line is the
    NPU path's neighbour: info."""
    lines = set(wanted)
    body = tree.body
    out: list[Span] = []

    def flag(stmt: ast.stmt) -> ast.expr | None:
        return stmt.value if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and \
            isinstance(stmt.targets[0], ast.Name) else None

    def npu_probe(stmt: ast.stmt) -> bool:
        value = flag(stmt)
        return value is not None and not _cuda_probe_call(value) and \
            any(isinstance(c, ast.Call) for c in walk_list(value)) and backends_in_text(ast.unparse(value)) == {"npu"}

    for i, stmt in enumerate(body):
        value = flag(stmt)
        if value is None or stmt.lineno not in lines or not _cuda_probe_call(value) or \
                backends_in_text(ast.unparse(value)) - {"cuda"}:
            continue
        if any(0 <= j < len(body) and npu_probe(body[j]) for j in (i - 1, i + 1)):
            out.append(line_span(stmt))
    return out


_TRY = (ast.Try,) + ((ast.TryStar,) if hasattr(ast, "TryStar") else ())
_VERSION_ATTRS = frozenset({"__version__", "VERSION"})


VERSION_TEST = "?"     # the package slot of a version_reads entry on the test of an `if` that only reads a version


def _version_reads(tree: ast.Module, guarded_lines: set[int]) -> set[tuple[int, str]]:
    """(line, package) of each guarded `import pkg` (`import pkg as p`) whose bound name every read in the file uses
    only as `p.__version__` inside the same try body (the handler catches the import's failure), and of those reads:
    an environment report (LLaMA-Factory-style `print_env`, tuned_pd28's LLamaTuner `env_utils`) that runs nothing of
    the package. A version read outside the try (`if flash_attn.__version__ >= "2.7.0":` after `except: flash_attn =
    None`, which fails on Ascend) keeps the import's finding; a name never read is left.
    tq40: the body of an `if <flag>:` too (the AUTOMATIC1111 UI's `if shared.xformers_available: import xformers;
    xformers_version = xformers.__version__` for its footer, and its version check that prints a notice): the flag
    keeps the import from running on Ascend; when the body does nothing but import the package and read its version
    into a value or a message (`_version_only_body`), the `if` line's flag test is an entry too, (line, VERSION_TEST)."""
    def count_loads(scope: ast.AST) -> dict[str, int]:
        loads: dict[str, int] = {}
        for node in (module_nodes(scope) if isinstance(scope, ast.Module) else ast.walk(scope)):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
                loads[node.id] = loads.get(node.id, 0) + 1
        return loads

    # an import inside a function binds a local name: its reads are counted in that function (the innermost one)
    functions = [n for n in module_nodes(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    scope_loads: dict[int, dict[str, int]] = {}

    def loads_around(node: ast.stmt) -> dict[str, int]:
        scope: ast.AST = tree
        for fn in functions:
            if fn.lineno <= node.lineno <= (fn.end_lineno or fn.lineno) and fn.lineno >= getattr(scope, "lineno", 0):
                scope = fn
        if id(scope) not in scope_loads:
            scope_loads[id(scope)] = count_loads(scope)
        return scope_loads[id(scope)]

    out: set[tuple[int, str]] = set()
    for node in module_nodes(tree):
        if not isinstance(node, (*_TRY, ast.If)):
            continue
        block = cast("ast.Try | ast.If", node)      # (mypy does not narrow through the starred tuple)
        if not block.body:
            continue
        loads = loads_around(block)
        last = block.body[-1].end_lineno or block.body[-1].lineno
        names: set[str] = set()
        for stmt in block.body:
            if not isinstance(stmt, ast.Import) or stmt.lineno not in guarded_lines:
                continue
            for alias in stmt.names:
                name, pkg = alias.asname or alias.name.split(".")[0], alias.name.split(".")[0]
                reads = [n.lineno for s in block.body for n in walk_list(s) if isinstance(n, ast.Attribute)
                         and n.attr in _VERSION_ATTRS and isinstance(n.value, ast.Name) and n.value.id == name
                         and stmt.lineno < n.lineno <= last]
                if reads and len(reads) == loads.get(name, 0):
                    out.add((stmt.lineno, pkg))
                    out.update((line, pkg) for line in reads)
                    names.add(name)
        if names and isinstance(block, ast.If) and _version_only_body(block.body, names):
            out.add((block.test.lineno, VERSION_TEST))
    return out


def _version_only_body(body: list[ast.stmt], names: set[str]) -> bool:
    """Whether `body` only imports the packages bound to `names` and reads their versions: into a name
    (`v = pkg.__version__`), or into a test (`if version.parse(pkg.__version__) < ...:`) whose body only calls
    something with a message text (`print_error_explanation(f"... {pkg.__version__} ...")`)."""
    for stmt in body:
        if isinstance(stmt, ast.Import):
            if any((a.asname or a.name.split(".")[0]) not in names for a in stmt.names):
                return False
        elif isinstance(stmt, ast.Assign):
            if not all(isinstance(t, ast.Name) for t in stmt.targets) or not _reads_version(stmt.value, names):
                return False
        elif isinstance(stmt, ast.If):
            if stmt.orelse or not _reads_version(stmt.test, names) or not all(_message_call(s) for s in stmt.body):
                return False
        elif not _message_call(stmt):
            return False
    return True


def _reads_version(node: ast.AST, names: set[str]) -> bool:
    return any(isinstance(n, ast.Attribute) and n.attr in _VERSION_ATTRS and isinstance(n.value, ast.Name)
               and n.value.id in names for n in ast.walk(node))


def _message_call(stmt: ast.stmt) -> bool:
    """`print(...)`, `logger.warning(...)`, `print_error_explanation(f"...".strip())`: an expression statement calling
    something whose every argument is a text (a string, an f-string, or a method of one)."""
    if not (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call)) or not stmt.value.args:
        return False
    args = [*stmt.value.args, *(k.value for k in stmt.value.keywords)]
    return all(isinstance(a, ast.JoinedStr) or isinstance(a, ast.Constant) and isinstance(a.value, str)
               or isinstance(a, ast.Call) and isinstance(a.func, ast.Attribute)
               and isinstance(a.func.value, (ast.JoinedStr, ast.Constant)) for a in args)
# packages that exist only for one other backend and fail to import without it (Gaudi's habana_frameworks,
# Cambricon's torch_mlu, Moore Threads' torch_musa): a file importing one unguarded at its top needs that backend
_BACKEND_PACKAGES = {"habana_frameworks": "hpu", "torch_mlu": "mlu", "torch_musa": "musa",
                     # AWS Neuron's PyTorch packages (t11q): a file importing one at top level runs only on Neuron
                     "torch_neuronx": "neuron", "neuronx_distributed": "neuron", "neuronxcc": "neuron"}


# toolchains that lower a torch.export program for another runtime: StableHLO (torch_xla, TF SavedModel), ExecuTorch,
# Core ML, AI Edge; a module or imported name that names one (`from torch_xla.stablehlo import ...`,
# `from torch_xla import save_as_stablehlo`, `import coremltools as ct`)
_FOREIGN_LOWERING_WORDS = ("stablehlo", "tf_saved_model", "executorch", "coremltools", "ai_edge_torch")


def _foreign_lowering(tree: ast.Module) -> bool:
    """Whether the file imports another toolchain's lowering of exported programs (_FOREIGN_LOWERING_WORDS)."""
    for node in module_nodes(tree):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            names = [node.module or ""] + [a.name for a in node.names]
        else:
            continue
        if any(word in name.lower() for name in names for word in _FOREIGN_LOWERING_WORDS):
            return True
    return False


def _file_backend(body: list[ast.stmt]) -> tuple[str | None, str | None]:
    """(the other backend a file cannot run without, the other backend of a module it star-imports), see
    `BackendContext`. Only top-level statements count: an import under try / if / def is optional or lazy."""
    star = None
    for stmt in body:
        if isinstance(stmt, ast.Import):
            for a in stmt.names:
                if a.name.split(".")[0] in _BACKEND_PACKAGES:
                    return _BACKEND_PACKAGES[a.name.split(".")[0]], star
        elif isinstance(stmt, ast.ImportFrom):
            top = (stmt.module or "").split(".")[0]
            if not stmt.level and top in _BACKEND_PACKAGES:
                return _BACKEND_PACKAGES[top], star
            if star is None and any(a.name == "*" for a in stmt.names) and stmt.module:
                named = backends_in_text(stmt.module.rsplit(".", 1)[-1])
                if len(named) == 1 and _only_other(named):
                    star = next(iter(named))       # `from ...test_hpu_utils import *`
    return None, star


def _test_path(rel: str) -> bool:
    parts = rel.replace("\\", "/").split("/")
    return parts[-1].startswith("test_") or any(p in ("test", "tests") for p in parts[:-1])


def _has_imports(stmt: ast.stmt) -> bool:
    """Whether a compound statement may hold a guarded import (a try or if inside it); simple ones hold none."""
    return isinstance(stmt, (ast.Try, ast.If, ast.With, ast.For, ast.While) + _TRY)


_NOTES = {
    "npu-path": "already has an NPU path beside it: left as is",
    "platform-class": "the CUDA implementation of a platform abstraction: add an NPU implementation beside it; "
                      "left as is",
    "backend-dispatch": "inside a dispatch over several backends: add an NPU branch beside it; not rewritten",
    "guarded-import": "an optional import under a guard: the code has a path without it",
    "other-backend": "in code for another backend, which does not run on Ascend: left as is",
    "ascend-code": "in code written for Ascend (its path says so): Triton here is Triton-Ascend and the op "
                   "library the project's own; re-validate on the NPU, nothing to port",
    "dynamic-op-namespace": "a torch.ops namespace looked up at run time: check whether the library it names has "
                            "NPU kernels",
    "mmengine-dist": "mmengine's init_dist starts HCCL on an NPU whatever backend dist_cfg names "
                     "(mmengine/dist/utils.py, _init_dist_pytorch): runs as written; say backend=\"hccl\" to be "
                     "explicit",
    "test-mark": "a test marker that selects where the test runs: on Ascend the test is skipped or selected "
                 "otherwise; add \"npu\" where it should run there",
    "cuda-available-branch": "inside an `if torch.cuda.is_available():` branch, which does not run on Ascend "
                             "as written; the check is reported as the error: port the branch with it",
    "ascend-package": "the kernel comes from a package written for Ascend, whose Triton kernels are Triton-Ascend "
                      "ones: re-validate on the NPU, nothing to port",
    "flag-read": "a test, which configures nothing: the low-precision branch it guards "
                 "runs only where the user turns fp8 / fp4 on (that setting, and the fp8 calls in the branch, are "
                 "reported where they are written)",
    "negated-flag": "a negated test (`not cfg.fp8`): it selects the path without the low-precision mode; the "
                    "setting itself is what to port",
    "version-probe": "an optional import read only for its version: nothing of the package runs here",
    "option-choices": "one of the values a command-line option (or a list a value is checked against) accepts, "
                      "not the one it picks (its default, or the value passed, is): add \"npu\" beside it",
    "older-release-arm": "in the arm of a release test taken only on older releases than the other arm's: a "
                         "current torch_npu takes the other arm; port both",
    "unsupported-release-arm": "in an arm only a torch older than any torch_npu supports takes (torch_npu starts at "
                               "torch 1.11), or one a flag only that arm sets selects: no Ascend install runs it",
    "import-guard": "under a guard on an optional import that is never true on Ascend, so the other path runs; "
                    "port the guard and the call together by hand",
}
# Contexts that discount a finding to info (counted in the report summary as `context_discounted`).
DISCOUNTED = ("npu-path", "platform-class", "other-backend", "ascend-code", "dynamic-op-namespace", "mmengine-dist",
              "negated-flag", "flag-read", "ascend-package", "version-probe", "option-choices",
              "unsupported-release-arm")
_PACKAGE_CATEGORIES = ("attention", "apex", "kernel", "third_party")
# what a host runtime's code (HOST_RUNTIMES) holds no finding of: syncs, dtype facts and op support on host tensors
_HOST_HINT_CATEGORIES = frozenset({"performance", "precision", "operator"})


# categories whose rules read a kernel / attention vocabulary (`*flash_attn*`, a project's CUDA kernel)
_VOCABULARY_CATEGORIES = frozenset({"attention", "kernel"})


def other_backend_symbol(symbol: str) -> bool:
    """Whether a dotted name comes from another accelerator's own package (t11q): its top-level package is one
    (`neuronx_distributed.kernels.flash_attn.nki_flash_attn_func`, `habana_frameworks.torch.hpex.kernels.FusedSDPA`)
    or is named only for backends that are neither CUDA nor NPU. Such a kernel is that backend's, named like
    FlashAttention, not CUDA code: the port replaces the backend, not a CUDA kernel. (`torch.ops.hpu.x` and
    `triton.backends.mtgpu.x` start from torch / triton: their own rules read them.)"""
    parts = symbol.split(".")[:-1]
    if not parts or not parts[0]:
        return False
    return parts[0] in _BACKEND_PACKAGES or _only_other(backends_in_text(parts[0]))


def _apple_mps(tree: ast.Module | None) -> bool:
    """Whether a file whose path names MPS uses Apple's MPS backend: `torch.mps` / `torch.backends.mps`, or "mps" as
    a device (`torch.device("mps")`, `.to("mps")`, `device == "mps"`, `x.device.type == "mps"`). MPS also names a
    metric's model (evalscope's Multi-dimensional Preference Score, `mps_model.py`) and NVIDIA's Multi-Process
    Service: the word in a path alone does not make the file Apple's code (t11u, tuned on heldout13)."""
    if tree is None:
        return False
    for node in module_nodes(tree):
        if isinstance(node, ast.Attribute) and node.attr == "mps" and \
                isinstance(node.value, (ast.Name, ast.Attribute)) and ast_dotted(node.value) in ("torch",
                                                                                                "torch.backends"):
            return True
        if isinstance(node, ast.Call) and any(_mps_string(a) for a in node.args) and \
                (isinstance(node.func, ast.Attribute) and node.func.attr in ("to", "device") or
                 isinstance(node.func, ast.Name) and node.func.id == "device"):
            return True
        if isinstance(node, ast.Compare) and len(node.ops) == 1 and \
                any(_mps_string(side) for side in (node.left, node.comparators[0])) and \
                any("device" in ast.unparse(side) or ast.unparse(side).endswith("type")
                    for side in (node.left, node.comparators[0]) if not _mps_string(side)):
            return True
    return False


# the libraries through which Python code runs on a TPU / XLA device: PyTorch/XLA, JAX (and Flax on it), TensorFlow
_XLA_MODULES = frozenset({"torch_xla", "jax", "jaxlib", "flax", "libtpu", "tensorflow"})


def _xla_code(tree: ast.Module | None) -> bool:
    """Whether a file whose path names a TPU / XLA runs on one: it imports PyTorch/XLA, JAX or TensorFlow, or names
    XLA in its code (`xm.xla_device()`, `torch.device("xla")`). `tpu` also names other vendors' chips: Sophgo's tpu-mq
    (`tpu_mq/`, a PyTorch quantization toolkit whose QAT runs on CUDA before Sophgo's TPU-MLIR deploys the model)
    holds plain torch code; the word in a path alone does not make the file XLA's (tq54e, as t11u reads MPS)."""
    if tree is None:
        return False
    for node in module_nodes(tree):
        if isinstance(node, ast.Import) and any(a.name.split(".", 1)[0] in _XLA_MODULES for a in node.names) or \
                isinstance(node, ast.ImportFrom) and not node.level and \
                (node.module or "").split(".", 1)[0] in _XLA_MODULES:
            return True
        word = node.attr if isinstance(node, ast.Attribute) else node.id if isinstance(node, ast.Name) else \
            node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None
        if word is not None and "xla" in word.lower():
            return True
    return False


def _mps_string(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, str) and \
        (node.value == "mps" or node.value.startswith("mps:"))


_PROBE_NAME = re.compile(r"^is_")       # public: `_is_rocm()` in a ROCm test serves that file alone


def _backend_probes(tree: ast.Module | None, backends: set[str]) -> list[Span]:
    """Spans of the functions a file of another backend's folder defines to ask whether that backend is the one in
    use (`def is_zluda(device): return torch.cuda.get_device_name(device).endswith("[ZLUDA]")` in OneTrainer's
    `modules/zluda/ZLUDA.py`, called for the train device by `create_trainer` on every backend): the project calls
    such a public probe to find out, so its body runs on Ascend too and keeps its own context (t11w). A private one
    (`def _is_rocm(): return torch.cuda.is_available() and torch.version.hip is not None` in a ROCm test) serves
    its own file, which is that backend's."""
    if tree is None:
        return []
    return sorted(line_span(node) for node in module_nodes(tree) if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
                  and _PROBE_NAME.match(node.name) and backends_in_text(node.name) & backends)


def apply_context(findings: list, ctx: BackendContext, rel: str = "") -> list:
    """Findings as the context reads them: lowered severity, no rewrite, a note on why (data['context'])."""
    from dataclasses import replace

    out = []
    on_path = path_backends(rel) if rel else set()
    if "mps" in on_path and not _apple_mps(ctx.tree):
        on_path = on_path - {"mps"}     # `mps_model.py`: a metric's model (MPS), not Apple's backend (t11u)
    if "xla" in on_path and not _xla_code(ctx.tree):
        on_path = on_path - {"xla"}     # `tpu_mq/observer.py`: Sophgo's deploy target's name, plain torch (tq54e)
    file_kind = "other-backend" if _only_other(on_path) or ctx.file_backend or \
        ctx.star_backend and _test_path(rel) else "ascend-code" \
        if on_path == {"npu"} else "platform-class" if rel and cuda_backend_module(rel) else None
    host_runtime = file_kind == "other-backend" and bool(on_path & HOST_RUNTIMES)
    host_syncs = file_kind == "other-backend" and bool(on_path & HOST_SYNC_RUNTIMES)
    probes = _backend_probes(ctx.tree, on_path) if file_kind == "other-backend" and _only_other(on_path) else []
    for f in findings:
        if host_runtime and f.category in _HOST_HINT_CATEGORIES:
            continue      # OpenVINO's torch tensors are host values: policy (e), nothing reaches the NPU
        if host_syncs and f.category == "performance":
            continue      # `cache_ids.max().item()` in transformers-neuronx: Neuron's host inputs, not the NPU's
        if f.category in _VOCABULARY_CATEGORIES and other_backend_symbol(f.symbol or ""):
            continue      # `neuronx_distributed.kernels.flash_attn.nki_flash_attn_func`: another backend's kernel
        if ctx.foreign_export and f.code in ("NPU501", "NPU502") and (f.symbol or "").startswith("torch.export"):
            continue      # a program exported for StableHLO / ExecuTorch: host tracing, the NPU's list is not asked
        kind = ctx.kind(f.line)
        if kind == "other-backend" and _inside(probes, f.line):
            kind = None         # `def is_zluda(device):` itself (named for ZLUDA) runs on every backend
        if f.category in _HOST_HINT_CATEGORIES and _inside(ctx.host, f.line):
            continue      # `if requested_device == "mlx":` (a host runtime's branch): its hints concern nothing on the NPU
        if file_kind in ("other-backend", "platform-class") and not _inside(probes, f.line) or (
                file_kind == "ascend-code" and (
                f.name == "custom-torch-ops" or f.name == "triton-kernel" and f.severity != "error")):
            # (Triton stays an error where the product has no Triton-Ascend, and inline PTX always does)
            kind = file_kind
        if kind is None and f.name == "nccl-backend-string" and _inside(ctx.mmengine_dist, f.line):
            kind = "mmengine-dist"
        if kind is None and (f.name in ("cuda-device-string", "precision-capability-helper") or
                             f.category == "device" and f.severity == "error") \
                and _inside(ctx.test_marks, f.line):     # `@skipIf(torch.cuda.device_count() < 2, ...)` too
            kind = "test-mark"
        if kind in (None, "backend-dispatch") and f.severity == "error" and _inside(ctx.cuda_available, f.line):
            kind = "cuda-available-branch"
        if kind is None and f.name == "low-precision-config-flag" and \
                (f.line, (f.symbol or "").rsplit(".", 1)[-1]) in ctx.negated_flags:
            kind = "negated-flag"
        if kind is None and f.name == "low-precision-config-flag" and f.severity == "error" and \
                (f.line, (f.symbol or "").rsplit(".", 1)[-1]) in ctx.read_flags:
            kind = "flag-read"
        if kind is None and f.name == "triton-kernel" and f.severity != "error" and (
                (f.symbol or "").split(".", 1)[0] in ASCEND_PACKAGES or
                (f.symbol or "").startswith(".") and rel.split("/", 1)[0] in ASCEND_PACKAGES):
            # `from mindspeed.ops.triton.l2norm import l2norm_fwd`: Triton-Ascend kernels; also a relative import in
            # a module of such a package (`from .triton.chunk_o import chunk_fwd_o` in mindspeed_mm/; t11h)
            kind = "ascend-package"
        if kind is None and f.name == "custom-torch-ops" and f.symbol == "torch.ops":
            kind = "dynamic-op-namespace"    # `getattr(torch.ops, lib_name)`, `patch.object(torch.ops, "_C_x")`
        if kind in (None, "backend-dispatch") and f.name == "cuda-device-string" and \
                _in_columns(ctx.choices, f.line, f.col):
            kind = "option-choices"
        if kind is None and f.category in _PACKAGE_CATEGORIES and (
                (f.line, (f.symbol or "").split(".", 1)[0]) in ctx.version_reads
                or f.name.endswith("feature-check") and (f.line, VERSION_TEST) in ctx.version_reads):
            kind = "version-probe"
        if kind not in DISCOUNTED and _inside(ctx.unsupported_arms, f.line):
            kind = "unsupported-release-arm"    # `elif self.args.fp16 and _use_apex:` set only under torch < 1.6
        changes: dict = {}
        if kind is not None:
            changes["fix"] = "none" if kind != "cuda-available-branch" or ctx.kind(f.line) else f.fix
            if kind in DISCOUNTED:
                changes["severity"] = "info"
            elif kind in ("test-mark", "cuda-available-branch") and f.severity == "error":
                changes["severity"] = "warning"     # runs; which tests run differs (policy: differs)
        elif f.severity == "error" and (f.line in ctx.guarded_imports or f.category in _PACKAGE_CATEGORIES and any(
                lo <= f.line <= hi and (f.symbol or "").split(".", 1)[0] == top for (lo, hi), top in ctx.guarded_blocks
                # torch's own modules are always installed: `if CUDA_ON: from torch.utils.cpp_extension import load`
                # makes the build optional, not the module; the build under the switch fails on Ascend (heldout18)
                if top != "torch")):
            # the guarded import itself, or a use of its package in the same guarded block (`if use_flash_attn:
            # from flash_attn... import X; X(...)`, `try: from flash_attn... import f; g = f`)
            kind = "guarded-import"
            changes["severity"] = "warning"
        elif f.name == "torch-cuda-amp" and f.severity == "error" and _inside(ctx.older_arms, f.line):
            # `else: return torch.cuda.amp.custom_bwd(bwd=bwd)` beside `torch.amp.custom_bwd(device_type="cuda")`
            # for newer torch: the CUDA spelling runs only on the older releases (tq55b; as a guarded import of it,
            # heldout41 / heldout43)
            kind = "older-release-arm"
            changes["severity"] = "warning"
        elif f.category in _PACKAGE_CATEGORIES and _inside(ctx.import_guard, f.line):
            kind = "import-guard"
            changes["fix"] = "none"
            if f.severity == "error":
                changes["severity"] = "warning"
        if f.category == "precision" and changes.get("severity", f.severity) == "info" and \
                _inside(ctx.npu_arms, f.line):
            # `if self.device.type == "npu": self.dtype = torch.float16` (unified-cache-management's hash encoder:
            # "NPU only supports float16, float32 and float64"): the NPU arm's own dtype, chosen for Ascend already;
            # nothing to port (tq39's reading, heldout42; read off this context's if chains since tq40)
            continue
        if kind is None:
            if f.name == "cuda-device-string" and _inside(ctx.registrations, f.line):
                f = replace(f, data={**f.data, "dispatch_key": True})
            out.append(f)
            continue
        data = {k: v for k, v in f.data.items() if k != "replace" or changes.get("fix", f.fix) != "none"}
        data["context"] = kind
        # a read of an fp8 switch does not configure it: the message says what the line does (t11f)
        message = f"`{f.symbol}` (an fp8 / fp4 switch) is read here" if kind == "flag-read" else f.message
        out.append(replace(f, **changes, message=f"{message} ({_NOTES[kind]})", data=data))
    return out


def discount_findings(result, kind: str, note, lower, drop=None) -> int:
    """`result`'s findings with those `drop` says dropped and those `lower` says lowered to info (`as_info`; `note` is
    the note, or a function of the finding that gives it); returns how many changed. One pass for every "this file is
    another backend's / one member of a per-backend set / written for Ascend" discount."""
    changed = 0
    kept = []
    for f in result.findings:
        if drop is not None and drop(f):
            changed += 1
            continue
        if lower(f):
            f = as_info(f, kind, note(f) if callable(note) else note)
            changed += 1
        kept.append(f)
    result.findings = kept
    return changed


def discount_owned(results: list, owners: dict[str, str], note, lower, drop=None) -> int:
    """`discount_findings` in context other-backend on each result whose path `owners` maps to what makes the file
    another backend's (the module or runtime it imports), the note `note(via)`; returns how many changed."""
    return sum(discount_findings(r, "other-backend", note(owners[r.path]), lower, drop)
               for r in results if owners.get(r.path) is not None and r.findings)


def undiscounted(finding) -> bool:
    """An error or warning no context has discounted yet."""
    return finding.severity != "info" and not finding.data.get("context")


def variable_with_npu(finding):
    """A CUDA value reached through a variable that may also hold "npu" (`DEVICE = "npu" if npu else "cuda"`):
    the code already chooses the NPU; info, never rewritten."""
    return as_info(finding, "npu-path", f"the variable may also hold \"npu\": {_NOTES['npu-path']}")


# torch_npu.contrib.transfer_to_npu (torch_npu/contrib/transfer_to_npu.py in the torch_npu wheel and in
# github.com/Ascend/pytorch) patches these at import: torch.cuda.* and torch.cuda.amp.* become torch.npu.*,
# Tensor/Module.cuda become .npu, is_cuda becomes is_npu, "cuda" device arguments of the listed torch, Tensor,
# Module and autocast functions become "npu", ProfilerActivity.CUDA becomes NPU, init_process_group's "nccl"
# becomes "hccl", is_nccl_available and ProcessGroupNCCL become their HCCL forms, the autocast gpu-dtype
# helpers the NPU ones. Environment variables, CUDA builds, kernels and packages are not remapped.
TRANSFER_REMAPPED = frozenset({
    "cuda-tensor-method", "torch-cuda-api", "cuda-device-string", "is-cuda-attribute", "autocast-gpu-dtype",
    "profiler-cuda-activity", "torch-cuda-amp", "cuda-graph", "cuda-stream-event", "nccl-backend-string",
    "process-group-nccl", "is-nccl-available", "nccl-backend-constant",
})
_TRANSFER_IMPORT = re.compile(
    r"^[ \t]*(?:from[ \t]+torch_npu\.contrib[ \t]+import[ \t]+(?:\([^)]*|[^#\n]*)\btransfer_to_npu\b"
    r"|import[ \t]+torch_npu\.contrib\.transfer_to_npu\b|from[ \t]+torch_npu\.contrib\.transfer_to_npu[ \t]+import)",
    re.M)


# NPU039: a call of a helper named for CUDA (`get_cuda_rng_tracker()`, `_set_cuda_rng_state(...)`); the name is
# its only evidence. In code under transfer_to_npu the torch.cuda calls inside the helper are remapped (and reported
# where they are written, if at all): the call is nothing to read for the port, so it is dropped there (t11f, tuned on
# heldout5's MindSpeed rows).
CUDA_HELPER = "cuda-helper-call"


def option_attribute(node: ast.AST) -> str | None:
    """`args.use_cuda` of a parsed options object (an attribute of a plain name other than `self`), as a flag name: the
    PyTorch examples' `args.cuda = not args.no_cuda and torch.cuda.is_available()` in one function and `if
    args.cuda: model.cuda()` in another (grad-cam's usage examples; tq44a)."""
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id not in ("self", "cls"):
        return f"{node.value.id}.{node.attr}"
    return None


def _option_test(node: ast.AST) -> bool:
    """`training_args.use_quantization_config`, `not args.qlora`, `args.q and args.bits == 4`: a test that reads only
    the user's parsed options (`option_attribute`), no probe."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        return _option_test(node.operand)
    if isinstance(node, ast.BoolOp):
        return all(_option_test(v) for v in node.values)
    if isinstance(node, ast.Compare) and len(node.comparators) == 1 and isinstance(node.comparators[0], ast.Constant):
        return _option_test(node.left)
    return option_attribute(node) is not None


def opted_in_import_lines(tree: ast.AST) -> set[int]:
    """Lines of `from P import X` directly under an `if` on the user's options, where the module imports package P
    unguarded at its top (`from transformers import AutoTokenizer` ... `if training_args.use_quantization_config:
    from transformers import BitsAndBytesConfig`; tq53b, heldout69's open-retrievals pipelines). P is installed
    wherever the module runs, so the `if` guards no optional import: it is the path the user opts into, judged as
    written (policy (k)); a guard on an availability probe (`if is_flash_attn_available():`) is not an option test."""
    if not isinstance(tree, ast.Module):
        return set()

    def lines() -> set[int]:
        top = {a.name.split(".", 1)[0] for n in tree.body if isinstance(n, ast.Import) for a in n.names} | \
            {n.module.split(".", 1)[0] for n in tree.body if isinstance(n, ast.ImportFrom) and not n.level and n.module}
        return {stmt.lineno for n in module_nodes_of(tree, ast.If) if _option_test(n.test)
                for stmt in n.body if isinstance(stmt, ast.ImportFrom) and not stmt.level and stmt.module
                and stmt.module.split(".", 1)[0] in top}

    # (read by the backend context and by the gates of the same file: computed once)
    return module_fact(tree, "opted_in_import_lines", lines)


def imports_transfer_to_npu(text: str) -> bool:
    """Whether the source imports torch_npu.contrib.transfer_to_npu (anywhere: at the top, in an NPU branch, in
    the function that sets up the Ascend backend; once imported it patches the whole process)."""
    return "transfer_to_npu" in text and _TRANSFER_IMPORT.search(text) is not None


def under_transfer_to_npu(findings: list, where: str) -> list:
    """Findings of CUDA APIs that transfer_to_npu remaps at run time: the code runs on Ascend as written, so they
    are info (native torch.npu calls avoid the shim's patching), never rewritten. `where` names the import."""
    out = []
    for f in findings:
        if f.name == CUDA_HELPER:
            continue     # `get_cuda_rng_tracker()`: the helper's torch.cuda calls are remapped and reported where written
        if f.severity == "warning" and f.data.get("context") == "guarded-import":
            # `try: from transformer_engine... except ImportError: <fallback>` in code that runs under the shim:
            # on Ascend the import fails and the fallback runs; it is the NPU path (t11f)
            out.append(as_info(f, "transfer-to-npu", f"{where} imports torch_npu.contrib.transfer_to_npu: on Ascend "
                                                     f"the import fails and the fallback is the NPU path"))
            continue
        if f.name not in TRANSFER_REMAPPED or f.severity == "info" and f.data.get("context") or \
                f.data.get("dispatch_key"):     # a kernel registered for the CUDA key stays CUDA-only
            out.append(f)
            continue
        if f.data.get("context") == "cuda-available-branch":
            from auditor.static.gates import without_remapped_gate

            f = dataclasses.replace(f, message=without_remapped_gate(f.message))    # the shim's probe passes: the gate is no gate
        out.append(as_info(f, "transfer-to-npu", f"remapped to the NPU at run time: {where} imports "
                                                 f"torch_npu.contrib.transfer_to_npu; native torch.npu calls avoid the shim"))
    return out


def transfer_scope(rel: str) -> str | None:
    """The part of the tree that runs under the shim when its Ascend backend module `rel` imports it: the folder
    that holds the per-backend folder (`lmdeploy/pytorch` for `lmdeploy/pytorch/backends/dlinfer/ascend/
    op_backend.py`, `dlinfer` for `dlinfer/vendor/ascend/pytorch_patch.py`), else the folder above the Ascend one."""
    parts = rel.replace("\\", "/").split("/")[:-1]
    named = [j for j, p in enumerate(parts) if backends_in_text(p) == {"npu"}]
    if not named:
        return None
    plugin = [k for k in range(named[0]) if parts[k].lower() in PLUGIN_FOLDERS]
    scope = parts[:plugin[-1]] if plugin else parts[:max(named[0], 1)]    # `vllm_ascend/...`: the package
    return "/".join(scope) if scope and scope != ["src"] else None


def shim_fact(data: bytes) -> bool:
    """Whether a file imports transfer_to_npu, as transfer_scopes reads it (a file over the default size limit is
    not read): its per-file fact (project_imports.TREE, `shim`), once per file in the worker."""
    return len(data) <= MAX_FILE_BYTES and b"transfer_to_npu" in data and \
        imports_transfer_to_npu(data.decode("utf-8", errors="replace"))


def transfer_scopes(files: Sequence[tuple[Path, str]], packages: frozenset[str], project=None) -> dict[str, str]:
    """Parts of first-party packages whose Ascend backend imports transfer_to_npu: {folder: the importing file}.
    Only a module in an Ascend-named folder of a package counts (`lmdeploy/pytorch/backends/dlinfer/ascend/
    op_backend.py`, `dlinfer/vendor/ascend/pytorch_patch.py`): that is what the package loads on Ascend, so the
    code around it runs under the shim there. A script elsewhere that imports it covers only its own file. Whether
    a module imports it comes from its per-file facts (`shim`, ProjectImports.tree); a module without them is read."""
    out: dict[str, str] = {}
    for path, rel in files:
        parts = rel.replace("\\", "/").split("/")
        top = parts[1] if parts[0] == "src" and len(parts) > 2 else parts[0]
        scope = transfer_scope(rel) if top in packages and rel.endswith(".py") else None
        if scope is None or scope in out:
            continue
        facts = held_tree(project, rel)
        if facts is not None:
            if facts.get("shim"):
                out[scope] = rel
            continue
        try:    # the discovery's reader: a FIFO or device passed by name is refused, not waited on
            data = read_counted(project, path)
        except (OSError, SourceError):
            continue
        if b"transfer_to_npu" in data and imports_transfer_to_npu(data.decode("utf-8", errors="replace")):
            out[scope] = rel
    return out


def apply_transfer_packages(results: list, files: Sequence[tuple[Path, str]], packages: frozenset[str],
                            project=None) -> int:
    """Lower the remapped findings of every file in a folder that runs under transfer_to_npu; returns how many."""
    scopes = transfer_scopes(files, packages, project)
    if not scopes:
        return 0
    lowered = 0
    for result in results:
        owner = next((rel for scope, rel in scopes.items() if result.path.startswith(scope + "/")), None)
        if owner is not None and result.findings:
            before = sum(f.severity != "info" for f in result.findings)
            result.findings = under_transfer_to_npu(result.findings, owner)
            lowered += before - sum(f.severity != "info" for f in result.findings)
    return lowered


def apply_other_backend_files(results: list) -> int:
    """Project files (Dockerfiles, scripts, configs) whose folders or name name only another backend
    (`docker/rocm/Dockerfile.rocm`, `scripts/xpu/run.sh`): they set up that backend, not CUDA; info, never
    rewritten, as Python files there are. Returns how many findings were lowered."""
    lowered = 0
    for result in results:
        if not result.findings or result.path.endswith((".py", ".pyw")) or not _only_other(path_backends(result.path)):
            continue
        kept = []
        for f in result.findings:
            if f.data.get("context") or f.severity == "info":
                kept.append(f)
                continue
            kept.append(as_info(f, "other-backend", _NOTES["other-backend"]))
            lowered += 1
        result.findings = kept
    return lowered


_TRITON_IMPORT = re.compile(rb"^\s*(?:import triton\b|from triton(?:\.\w+)* import )", re.M)


def triton_ascend_backend(files: Sequence[tuple[Path, str]], packages: frozenset[str], project=None) -> str | None:
    """The first module in an Ascend-named folder of a first-party package that imports Triton
    (FlagGems' `src/flag_gems/runtime/backend/_ascend/ops/*.py`), or None: the package runs its Triton kernels on
    Ascend through Triton-Ascend, with its own Ascend overrides and tuning beside the generic kernels. Whether a
    module imports Triton in its first 200,000 bytes is read from its Triton facts (import_in_head), from its summary
    through `project` (ProjectImports.triton, which reads a file without facts once); without `project` each
    candidate is read."""
    for path, rel in files:
        parts = rel.replace("\\", "/").split("/")
        if not rel.endswith(".py") or len(parts) < 3:
            continue
        lead = 1 if parts[0] == "src" else 0
        if parts[lead] not in packages or not any(backends_in_text(p) == {"npu"} for p in parts[lead + 1:-1]):
            continue
        if project is not None:
            facts = project.triton(rel)
            if facts is not None and import_in_head(facts):
                return rel
            continue
        try:
            data = read_source(path, MAX_FILE_BYTES)[0][:_BACKEND_READ]
        except (OSError, SourceError):
            continue
        if b"triton" in data and _TRITON_IMPORT.search(data):
            return rel
    return _triton_compiler_ascend_backend(files)


# a source root of a tree that defines the `triton` package itself (Triton's compiler, Triton-Ascend)
_TRITON_ROOTS = frozenset({"triton/__init__.py", "python/triton/__init__.py", "src/triton/__init__.py"})


def _triton_compiler_ascend_backend(files: Sequence[tuple[Path, str]]) -> str | None:
    """A Triton compiler tree (it defines `triton` at a source root, crossfile.technology_package) with an
    Ascend-named backend folder whose Python imports Triton (`third_party/ascend/backend/compiler.py`): the tree is
    Triton-Ascend, its generic kernels and tests run on the NPU through that backend (policy (b); t11j, tuned on
    heldout7's triton-ascend). Returns that module, or None. A Triton tree without such a folder keeps its warnings."""
    rels = [(path, rel.replace("\\", "/")) for path, rel in files if rel.endswith(".py")]
    if not any(rel in _TRITON_ROOTS for _, rel in rels):
        return None
    for path, rel in rels:
        parts = rel.split("/")
        if len(parts) < 3 or parts[0] in ("test", "tests") or \
                not any(backends_in_text(p) == {"npu"} for p in parts[:-1]) or \
                any(p in ("test", "tests", "unittest", "examples") for p in parts[:-1]):
            continue
        try:
            data = read_source(path, MAX_FILE_BYTES)[0][:200_000]
        except (OSError, SourceError):
            continue
        if b"triton" in data and _TRITON_IMPORT.search(data):
            return rel
    return None


# A file's own signs that its Triton kernels run on Ascend (Triton-Ascend): tensors made on `device="npu"` /
# `"npu:0"` for the kernels, an unguarded `import torch_npu`, or autotune keys only Triton-Ascend reads
# (`multibuffer`, `set_workspace_multibuffer`, `enable_hivm_auto_cv_balance`, `tile_mix_vector_loop`,
# `tile_mix_cube_loop`: MindSpeed's `get_autotune_config`). Policy (b), docs/precision.md (t11e, tuned on heldout5).
# `triton.language.extra.cann` is Triton-Ascend's own extension module (CANN intrinsics, vector / AI core counts):
# only Triton-Ascend has it (t11k, heldout8's MindIE-SD `triton_utils.py`).
_ASCEND_TRITON = re.compile(rb"""device\s*=\s*["']npu(?::\d+)?["']|["']npu:\d+["']|^(?:import|from)[ \t]+torch_npu\b|"""
                            rb"""\b(?:set_workspace_)?multibuffer|\benable_hivm_\w+|\btile_mix_(?:vector|cube)_loop"""
                            rb"""|\btriton\.language\.extra\.cann\b""", re.M)
_IMPORT_FROM = re.compile(rb"^[ \t]*(?:from[ \t]+([\w.]+)[ \t]+import|import[ \t]+([\w.]+))", re.M)
# every spelling _ASCEND_TRITON reads holds one of these words: a file without any is not searched (most files hold
# `npu` inside `input`, so the quoted and `torch_npu` forms are the cheap test)
_ASCEND_WORDS = (b'"npu', b"'npu", b"torch_npu", b"multibuffer", b"enable_hivm_", b"tile_mix_", b"extra.cann")
_TRITON_READ = 400_000          # how much of a file the Triton-Ascend markers are looked for in
_BACKEND_READ = 200_000         # how much of a module triton_ascend_backend looks for a Triton import in
TRITON_KERNEL = "triton-kernel"


def ascend_triton_text(data: bytes) -> bool:
    """Whether `data` holds a Triton-Ascend marker (_ASCEND_TRITON)."""
    return any(w in data for w in _ASCEND_WORDS) and _ASCEND_TRITON.search(data) is not None


def triton_facts(data: bytes, kernel_findings: bool) -> dict:
    """A Python file's Triton facts, once per file in the worker (kept in its summary, project_imports.TRITON):
    `import` (it imports Triton) and `ascend` (a Triton-Ascend marker), read from its first 400,000 bytes as
    triton_ascend_files always read them; `late` / `early` where whether it imports Triton in its first 200,000
    bytes (triton_ascend_backend's window, import_in_head) differs from `import`; `modules` (what it imports, in
    order) only for a file with Triton findings (kernel_findings), the only files whose imports the pass follows;
    `skip` for a file over the default size limit, which the pass never read. Only true facts are written: most files keep `{}`."""
    if len(data) > MAX_FILE_BYTES:
        return {"skip": True}
    head = data[:_TRITON_READ]
    out: dict = {}
    if b"triton" in head and _TRITON_IMPORT.search(head):
        out["import"] = True
    if len(data) > _BACKEND_READ:        # within triton_ascend_backend's window: `import` unless said otherwise
        first = data[:_BACKEND_READ]
        early = b"triton" in first and _TRITON_IMPORT.search(first) is not None
        if early != bool(out.get("import")):
            out["late" if out.get("import") else "early"] = True
    if ascend_triton_text(head):
        out["ascend"] = True
    if kernel_findings:
        out["modules"] = list(dict.fromkeys((m.group(1) or m.group(2)).decode("ascii", "replace")
                                            for m in _IMPORT_FROM.finditer(head)))
    return out


def import_in_head(facts: dict) -> bool:
    """Whether a file imports Triton in its first 200,000 bytes (triton_ascend_backend's window), by its facts."""
    return bool(facts.get("import") and not facts.get("late") or facts.get("early"))


def _module_of(rel: str) -> str | None:
    parts = rel.replace("\\", "/").split("/")
    if parts[0] == "src" and len(parts) > 1:
        parts = parts[1:]
    if not parts[-1].endswith(".py"):
        return None
    parts[-1] = parts[-1][:-3]
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts) if parts and all(p.isidentifier() for p in parts) else None


def triton_ascend_files(results: list, files: Sequence[tuple[Path, str]], project=None) -> dict[str, str]:
    """{rel: why} for each Python file with Triton findings whose kernels run on Ascend by its own markers
    (_ASCEND_TRITON), or that imports a Triton module of the tree that has them (a kernel file importing the
    project's `ops/triton/utils.py` whose autotune configs are Triton-Ascend ones; an NPU test of the kernels).
    Each file's facts come from its summary (triton_facts, read in the worker); `project` (ProjectImports, one per
    run) reads a file without them once."""
    wanted = {r.path for r in results if r.path.endswith(".py") and any(
        f.name == TRITON_KERNEL and f.severity != "error" and not f.data.get("context") for f in r.findings)}
    if not wanted:
        return {}
    if project is None:
        from auditor.static.project_imports import ProjectImports

        project = ProjectImports(files, results)
    kept: dict[str, dict] = {}
    marked: dict[str, str] = {}
    for _, rel in files:
        if not rel.endswith(".py"):
            continue
        facts = project.triton(rel, modules=rel in wanted)
        if facts is None:
            continue
        if rel in wanted:
            kept[rel] = facts
        if facts.get("import") and facts.get("ascend"):
            name = _module_of(rel)
            marked[name or rel] = rel
    out: dict[str, str] = {}
    for rel, facts in kept.items():
        if facts.get("ascend"):
            out[rel] = "its kernels run on NPU tensors or Triton-Ascend configs"
            continue
        for mod in facts.get("modules") or ():
            if mod in marked and marked[mod] != rel:
                out[rel] = f"it uses the Triton-Ascend module {marked[mod]}"
                break
    return out


def apply_ascend_project(results: list, packages: frozenset[str],
                         files: Sequence[tuple[Path, str]] = (), project=None) -> int:
    """A tree whose own package is named for Ascend (`vllm_ascend`, `mindspeed_npu`), or one whose package holds
    Triton kernels in an Ascend-named backend folder (FlagGems' `runtime/backend/_ascend/`): its Triton kernels (and,
    for the first, its custom ops) are Triton-Ascend and the project's NPU op library wherever they sit (its tests
    and tools too), as in a file whose path names Ascend. Triton findings that are errors (inline PTX, Gluon: no
    Triton-Ascend form) keep their severity. Returns how many findings were lowered."""
    named = any(path_backends(p) == {"npu"} for p in packages)
    backend = None if named else triton_ascend_backend(files, packages, project)
    if not named and backend is None:
        return _apply_triton_ascend_files(results, files, project)
    note = (f"in a project written for Ascend: {_NOTES['ascend-code'].split(': ', 1)[1]}" if named else
            f"the project already runs its Triton kernels on Ascend (Triton-Ascend backend in {backend}): "
            "re-validate on the NPU, nothing to port")
    lowered = 0
    for result in results:
        kept = []
        for f in result.findings:
            if f.data.get("context") or not (f.name == "custom-torch-ops" and named or
                                             f.name == "triton-kernel" and f.severity != "error"):
                kept.append(f)
                continue
            kept.append(as_info(f, "ascend-code", note))
            lowered += 1
        result.findings = kept
    return lowered


def _apply_triton_ascend_files(results: list, files: Sequence[tuple[Path, str]], project=None) -> int:
    """Triton findings (not errors: inline PTX and Gluon have no Triton-Ascend form) in files whose kernels run on
    Ascend by their own markers (triton_ascend_files): Triton-Ascend already, info."""
    marked = triton_ascend_files(results, files, project) if files else {}
    lowered = 0
    for result in results:
        why = marked.get(result.path)
        if why is None:
            continue
        kept = []
        for f in result.findings:
            if f.data.get("context") or f.name != "triton-kernel" or f.severity == "error":
                kept.append(f)
                continue
            kept.append(as_info(f, "ascend-code", f"Triton-Ascend already ({why}): re-validate on the NPU, "
                                                  "nothing to port"))
            lowered += f.severity != "info"
        result.findings = kept
    return lowered
