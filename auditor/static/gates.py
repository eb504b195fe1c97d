"""Code that runs only where CUDA is present, read from a file's `ast` tree, and what it means for findings there.

The check that gates such code (`torch.cuda.is_available()`, `x.device.type == "cuda"`) is the finding that fails
or misleads on Ascend; the code behind it does not run there as written, so its errors are warnings (policy clause
`differs`: on Ascend the other path runs; port the gate and the code behind it together). The gates read here:

- `if <cuda test>:` (alone or as one operand of an `and`): its body; `if not <cuda test>: return` (or raise /
  continue / break / `pytest.skip(...)` / `self.skipTest(...)`) and `assert <cuda test>`: the rest of its block;
  the `else` of `if not <cuda test>:`; `m = provider()` / `if m is None: raise Skip(...)`, where the provider
  returns None first thing without CUDA (`cuda_probes`): the rest of the block;
- `x if <cuda test> else y`: `x` (and `y` of `x if not <cuda test> else y`);
- `<cuda test> and z`: every operand after the test;
- a test function or class marked for CUDA (`@require_torch_gpu`, `@require_torch_multi_gpu`,
  `@unittest.skipIf(not torch.cuda.is_available(), ...)`, `@pytest.mark.skipif(not torch.cuda.is_available(), ...)`,
  `@unittest.skipUnless(torch.cuda.is_available(), ...)`): its body; every test of a module or class that sets
  `pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), ...)`.

A CUDA test is `torch.cuda.is_available()`, `is_cuda()` / `current_platform.is_cuda()` / `is_cuda_alike()` /
`is_torch_cuda_available()`, `torch.version.cuda`, `torch.cuda.device_count() > 0`, `x.is_cuda`, `x.type == "cuda"`,
`"cuda" in str(device)`, `device == "cuda"`, `device.startswith("cuda")`, `x.device == torch.device("cuda")`,
`"nccl" in self.backend` / `backend == "nccl"` (the NCCL backend runs only on CUDA; t11f), a package built only for
NVIDIA GPUs found installed (`importlib.util.find_spec("cupy") is not None`; tq39), or a name every
assignment of which is one of these
(`use_cuda = args.gpu >= 0 and torch.cuda.is_available()`, `self.use_cuda = torch.cuda.is_available()`), or a call of
a top-level probe function whose only statement returns one (`def checkpoint_ready(): return HAS_GPU and ...`).
Flags, probes and providers defined in another module of the tree and imported by name count too
(auditor/static/imported_gates.py).

A CUDA probe saved and replaced (`orig = torch.cuda.is_available` / `torch.cuda.is_available = lambda: True`, to
load GPTQ / AWQ on the CPU) is not a CUDA API use there: its uncalled references are dropped.

Dtype facts (hints) about a dtype chosen only behind a CUDA gate in the code (`fp16 if "cuda" in device else fp32`)
are not worth knowing for the port and are dropped (a test marked for CUDA keeps them: the dtype is the test's).

Uses of a name that a guarded optional import binds (`try: from flash_attn import flash_attn_func` / `except
ImportError:`) are warnings like the import: the code chose a path without the package (policy clause `guarded`).
"""
from __future__ import annotations

import ast
import re
from collections.abc import Collection
from dataclasses import dataclass, field, replace

from auditor.astnodes import Span, decorated_span, device_literal, is_main_guard, lines_span, node_span, starts_in
from auditor.static.context import relative_cuda_extension
from auditor.static.backends import _guards_imports, as_info, backends_in_text, default_arm, rank_test
from auditor.static.backends import opted_in_import_lines
from auditor.static.backends import option_attribute as _option_attribute   # `args.x`: one reader
from auditor.static.patch_targets import hides_cuda
from auditor.static.report_rows import REPORT_DICT_MIN_ROWS, report_dict_rows
from auditor.static.astutil import name_or_self_attr as _flag_name   # `use_cuda` / `self.use_cuda`: one reader
from auditor.static.astutil import module_nodes as _walk   # (the name the passes below and engine use)
from auditor.static.astutil import MESSAGE_CALLS, ast_dotted, pytest_fixture_name, scope_nodes, walk_list
from auditor.static.host_values import own_scope_nodes

Region = Span      # (first line, first col, last line, last col), 1-based lines, 0-based cols, end exclusive


def _held_by(regions, f):
    """The value tagged on the first (region, value) pair whose region holds the finding's start; None when none does."""
    return next((value for (l1, c1, l2, c2), value in regions if (l1, c1) <= (f.line, f.col - 1) < (l2, c2)), None)


_EXITS = (ast.Return, ast.Raise, ast.Continue, ast.Break)
_PACKAGE_CATEGORIES = frozenset({"attention", "apex", "kernel", "third_party"})
_REQUIRE = re.compile(r"^require_\w+$")
_SKIP_UNLESS = re.compile(r"^skip_(?:unless|if_no|if_lt_x)_\w+$")
_MARK_SUFFIX = "@mark"      # in `flags`: a module-level name bound to a CUDA skip mark
_CAP_SUFFIX = "#cap"        # in `flags`: a name bound to torch.cuda.get_device_capability()
# in `flags`: a CUDA-named marker the tree's test configuration deselects without CUDA (`-m "not cuda"`;
# auditor/static/deselected_marks.py), so `@pytest.mark.cuda` is a skip mark like `skipif(not cuda available)`
DESELECTED_SUFFIX = "@deselected"
_COUNT_SUFFIX = "#count"    # in `flags`: a module-level name bound only to torch.cuda.device_count() (pd17)
_IDS_SUFFIX = "#ids"        # in `flags`: a name bound only to the list of CUDA device ids (`_count_ids`; tq53b)
# `is_cuda()` (sglang's utils), `current_platform.is_cuda()` / `is_cuda_alike()` (vLLM), `is_torch_cuda_available()`
_CUDA_PROBE = re.compile(r"^_?is_(?:torch_)?(?:cuda|nvidia)(?:_alike|_available|_platform)?$")
# `torch.cuda.device_count()`, and the project's own count helper `cuda_device_count()` (data-juicer; t11u)
# FAISS's `faiss.get_num_gpus()` counts CUDA devices (faiss::gpu::getNumDevices, cudaGetDeviceCount; 0 in a CPU build:
# https://github.com/facebookresearch/faiss/blob/main/c_api/gpu/DeviceUtils_c.cpp): pyserini's device helper (tq52d)
_COUNT = re.compile(r"(?:^|\.)(?:cuda\.device_count|_?(?:get_)?cuda_device_count|faiss\.get_num_gpus)$")
# (with a bare colon too: `device.startswith("gpu:")` for "gpu:1", TotalSegmentator's own device choices; tq39)
_CUDA_WORD = re.compile(r"^(?:cuda|gpu)(?::\d*)?$", re.I)
_GATED_NOTE = "in code that runs only where CUDA is present ({how}), which does not run on Ascend as written; " \
              "the gate is what to port: port the code behind it with it"
# the note as it ends a message; `how` a gate on torch.cuda's own probes (`assert torch.cuda.is_available()`), which
# torch_npu.contrib.transfer_to_npu patches to ask the NPU (tq54e)
_GATED_TAIL = re.compile(re.escape(f" ({_GATED_NOTE})").replace(re.escape("{how}"), r"(?P<how>.*?)") + "$")


def without_remapped_gate(message: str) -> str:
    """`message` without its CUDA-gate note when the gate is a torch.cuda probe: under transfer_to_npu that probe
    answers for the NPU, so the code behind it runs on Ascend (MagicDriveDiT's `assert torch.cuda.is_available()`
    before `torch.cuda.set_device(...)` in a script that imports the shim)."""
    m = _GATED_TAIL.search(message)
    return message[:m.start()] if m is not None and "torch.cuda." in m.group("how") else message


_TEST_MARK = "a test marked for CUDA"     # its dtype choices are the test's, kept as hints
# `@pytest.mark.skip(reason=...)`, `@unittest.skip(...)` without a condition: the test runs on no backend (t11y)
_SKIP_MARK = "a test marked skip, which runs on no backend"
_SKIPS_TEST = ", which skips the test without CUDA"     # a helper that does what a test mark does (t11i)
_GUARDED_NOTE = "a use of an optional import under a guard: the code has a path without it"
_NPU_TWIN_NOTE = ("on Ascend this name is bound by the import from an NPU module beside the guarded one, so the NPU's "
                  "twin runs here: left as is")
# a module written for Ascend: `transformers.integrations.npu_flash_attention`, `torch_npu.contrib`, `mindspeed.ops`
_NPU_MODULE = re.compile(r"(?:^|[._])(?:npu|torch_npu|ascend|mindspeed)(?:$|[._])")


def _lazy_import_test(test: ast.expr) -> bool:
    """`'dr' not in globals()` (or locals() / dir()): the import below it runs on first use, with no path without
    the package (TRELLIS' renderers' `if 'dr' not in globals(): import nvdiffrast.torch as dr`, pd48)."""
    return isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.NotIn) \
        and isinstance(test.left, ast.Constant) and isinstance(test.left.value, str) \
        and isinstance(test.comparators[0], ast.Call) and not test.comparators[0].args \
        and isinstance(test.comparators[0].func, ast.Name) and test.comparators[0].func.id in ("globals", "locals", "dir")


@dataclass
class Gates:
    regions: list[Region] = field(default_factory=list)
    hows: list[str] = field(default_factory=list)
    # qualified names bound only by guarded imports (`flash_attn.flash_attn_func`, `apex`)
    guarded: set[str] = field(default_factory=set)
    # those of them whose name an import from an NPU module binds too (`elif is_npu_available: from
    # transformers.integrations.npu_flash_attention import index_first_axis`): the name is the NPU twin there (tq47a)
    npu_twins: set[str] = field(default_factory=set)
    # uses of names that hold a "cuda" value only when a CUDA gate held: (line, col) -> how
    gated_names: dict[tuple[int, int], str] = field(default_factory=dict)

    def gate_of(self, line: int, col: int) -> str | None:
        """How the code at (line, col 0-based) is gated, or None."""
        for (l1, c1, l2, c2), how in zip(self.regions, self.hows):
            if (l1, c1) <= (line, col) < (l2, c2):
                return how
        return None

    def guarded_symbol(self, symbol: str) -> bool:
        if symbol.startswith("torch."):
            # torch's own modules are always installed: `if CUDA_ON: from torch.utils.cpp_extension import load`
            # makes the build optional, not the module; the build under the switch fails on Ascend (heldout18, s15b)
            return False
        return any(symbol == q or symbol.startswith(q + ".") for q in self.guarded)


def _dotted(node: ast.AST) -> str:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
    elif isinstance(node, ast.Call):
        parts.append(_dotted(node.func) + "()")
    return ".".join(reversed(parts))




def _cuda_string(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, str) and bool(_CUDA_WORD.match(node.value))


def _nccl_string(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.lower() == "nccl"


def _runtime_backend(node: ast.AST) -> bool:
    """`dist.get_backend()`: the runtime's own answer (an `assert dist.get_backend() == "nccl"` is itself the error on
    Ascend, not a gate over the code after it)."""
    return isinstance(node, ast.Call) and _dotted(node.func).rsplit(".", 1)[-1] == "get_backend"


def _cuda_device(node: ast.AST) -> bool:
    """`torch.device("cuda")`, `torch.device("cuda:0")`, `torch.device("cuda", 0)`."""
    return isinstance(node, ast.Call) and _dotted(node.func) in ("torch.device", "device") and bool(node.args) \
        and _cuda_string(node.args[0])


# another accelerator's own probe (`torch.xpu.is_available()`, `torch.backends.mps.is_available()`): false on Ascend
_OTHER_PROBE = re.compile(r"^torch\.(?:xpu|mps|backends\.mps|hpu|mlu|musa)\.is_available$")


def _other_backend_probe(node: ast.AST) -> bool:
    """`torch.xpu.is_available()`, `hasattr(torch, "xpu") and torch.xpu.is_available()`, `"MUSA out of memory" in
    str(err)`: holds only on that backend."""
    if isinstance(node, ast.BoolOp) and isinstance(node.op, ast.And):
        return any(_other_backend_probe(v) for v in node.values)
    if _oom_text(node) in _OTHER_OOM:
        return True
    if _other_device_choice(node):
        return True
    return isinstance(node, ast.Call) and bool(_OTHER_PROBE.match(_dotted(node.func)))


# r2d (session 36; TUNED on heldout39's fastsdcpu `if DEVICE == "cuda" or DEVICE == "mps":`): a device name compared
# with another non-Ascend accelerator's name holds only where the user chose that device, never on an Ascend host
# (where the choice is "npu" or "cpu"); as the other operand of an `or` beside a CUDA test, the `or` is still a gate
_OTHER_DEVICE_WORD = re.compile(r"^(?:mps|xpu|hpu|mlu|musa|rocm|hip|dml|directml)(?::\d+)?$", re.I)


def _other_device_choice(node: ast.AST) -> bool:
    """`device == "mps"`, `"xpu" in str(device)`: holds only where another accelerator was chosen."""
    if not isinstance(node, ast.Compare) or len(node.ops) != 1 or not isinstance(node.ops[0], (ast.Eq, ast.In)):
        return False
    left, right = node.left, node.comparators[0]
    word = left if isinstance(node.ops[0], ast.In) else right if isinstance(right, ast.Constant) else left
    return isinstance(word, ast.Constant) and isinstance(word.value, str) and bool(_OTHER_DEVICE_WORD.match(word.value))


# `"CUDA out of memory" in str(err)`: the error text names the device type that raised it (torch_npu's says "NPU out
# of memory"), so the check holds only on CUDA (MobiMaliangSDK's anti-OOM retry, heldout31; pd38)
_OOM = re.compile(r"^\s*([A-Za-z]+) out of memory")
_OTHER_OOM = frozenset({"MUSA", "XPU", "MPS", "MLU", "HPU", "HIP"})


def _oom_text(node: ast.AST) -> str:
    """The device type of `"<DEV> out of memory" in <x>` ("" for anything else)."""
    if not (isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], ast.In) and
            isinstance(node.left, ast.Constant) and isinstance(node.left.value, str)):
        return ""
    m = _OOM.match(node.left.value)
    return m.group(1).upper() if m else ""


# ONNX Runtime's execution providers that run only on NVIDIA GPUs (https://onnxruntime.ai/docs/execution-providers/)
_CUDA_PROVIDERS = frozenset({"CUDAExecutionProvider", "TensorrtExecutionProvider"})
# ROCm's PyTorch reuses the CUDA device type and `torch.cuda` (https://pytorch.org/docs/stable/notes/hip.html), so
# projects list it beside CUDA as one GPU family; neither name is what an Ascend run sets
_CUDA_TWINS = frozenset({"rocm", "hip"})


_CUDA_MEMBER = re.compile(r"^CUDA(?:_[A-Z0-9]+)*$")
# the enum names a backend / device choice (not a result code: `err == cuda.CUresult.CUDA_SUCCESS` is no gate)
_CHOICE_ENUM = re.compile(r"(?i)backend|device|platform|accelerator")


def _cuda_member(node: ast.AST) -> bool:
    """A member named for CUDA of an enum of backends or devices (`BackendType.CUDA_TORCH`, `DeviceType.CUDA`): a
    value equal to it is the CUDA choice of a per-backend switch."""
    if not (isinstance(node, ast.Attribute) and isinstance(node.value, (ast.Name, ast.Attribute)) and
            _CUDA_MEMBER.match(node.attr)):
        return False
    owner = node.value.id if isinstance(node.value, ast.Name) else node.value.attr
    return bool(_CHOICE_ENUM.search(owner))


def _cuda_and_twins(node: ast.AST) -> bool:
    """A literal list / tuple / set of device names that holds "cuda" and otherwise only its ROCm twins
    (`{"cuda", "rocm"}`), or of enum members named for CUDA (`[BackendType.CUDA_TORCH, BackendType.CUDA_FX_TORCH]`):
    a value found in it is a CUDA (or ROCm) device, never the NPU."""
    if not isinstance(node, (ast.List, ast.Tuple, ast.Set)) or not node.elts:
        return False
    if all(_cuda_member(e) for e in node.elts):
        return True
    if not all(isinstance(e, ast.Constant) and isinstance(e.value, str) for e in node.elts):
        return False
    return any(_cuda_string(e) for e in node.elts) and \
        all(_cuda_string(e) or str(e.value).lower() in _CUDA_TWINS for e in node.elts if isinstance(e, ast.Constant))


def _cuda_count(node: ast.AST | None, flags: frozenset[str] | set[str]) -> bool:
    """The CUDA device count: `torch.cuda.device_count()`, a name bound only to it (`ngpu`, pd17), or an attribute a
    class of the tree binds only to it (`config.total_visible_gpus`, from ColBERT's `RunSettings.total_visible_gpus =
    torch.cuda.device_count()` in pylate, heldout37: `class_count_attributes`)."""
    return isinstance(node, ast.Call) and bool(_COUNT.search(_dotted(node.func))) or \
        isinstance(node, ast.Name) and node.id + _COUNT_SUFFIX in flags or \
        isinstance(node, ast.Attribute) and "." + node.attr + _COUNT_SUFFIX in flags or \
        isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "len" and \
        len(node.args) == 1 and isinstance(node.args[0], ast.Name) and node.args[0].id + _IDS_SUFFIX in flags


# `range` / `np.arange` / `torch.arange` over the device count: the CUDA device ids, as many as the count
_ID_RANGES = frozenset({"range", "np.arange", "numpy.arange", "torch.arange"})


def _count_ids(node: ast.AST | None) -> bool:
    """`np.arange(torch.cuda.device_count()).tolist()`, `list(range(torch.cuda.device_count()))`, `[i for i in
    range(torch.cuda.device_count())]`: the list of CUDA device ids, whose `len` is the count (0 on Ascend; tq53b,
    heldout69's TFB `device_ids = np.arange(torch.cuda.device_count()).tolist()` / `if len(device_ids) > 1:
    nn.DataParallel(...)`)."""
    while isinstance(node, ast.Call) and (isinstance(node.func, ast.Attribute) and node.func.attr == "tolist"
                                          and not node.args or _dotted(node.func) == "list" and len(node.args) == 1):
        node = node.func.value if isinstance(node.func, ast.Attribute) else node.args[0]
    if isinstance(node, ast.ListComp) and len(node.generators) == 1:
        node = node.generators[0].iter
    return isinstance(node, ast.Call) and _dotted(node.func) in _ID_RANGES and len(node.args) == 1 and \
        not node.keywords and _cuda_count(node.args[0], frozenset())


# packages built only for NVIDIA GPUs (CuPy: CUDA or ROCm wheels, cupy.dev; cuCIM and the RAPIDS libraries: "RAPIDS
# requires an NVIDIA GPU", docs.rapids.ai/install; PyCUDA; TensorRT): finding one installed is a CUDA test, as
# `torch.cuda.is_available()` is. `cupy_available = importlib.util.find_spec("cupy") is not None` ... `if
# cupy_available and cucim_available and use_gpu: resample_img_cucim(...)` (tq39, tuned on heldout42's
# TotalSegmentator): on Ascend the flag is False and the code's other path runs. Not pynvml / nvidia-ml-py (a
# pure-Python binding that installs anywhere) nor torch (installed everywhere).
# (RAPIDS' WholeGraph, `pylibwholegraph`, and the cuGraph / cuDF bindings are built for NVIDIA GPUs only: graphstorm's
# WholeGraph tests importorskip it; tq50b)
_CUDA_ONLY_PACKAGES = frozenset({"cupy", "cupyx", "cucim", "pycuda", "cudf", "cuml", "cugraph", "cuvs", "cuspatial",
                                 "rmm", "pylibraft", "tensorrt", "pylibwholegraph", "pylibcugraph", "pylibcudf"})
_PACKAGE_FINDERS = frozenset({"find_spec", "find_loader", "module_available", "package_available"})


def _cuda_package_found(node: ast.AST) -> bool:
    """`importlib.util.find_spec("cupy")` (its truth), `find_spec("cucim") is not None` / `!= None`: a package that
    exists only for CUDA is installed (above)."""
    if isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], (ast.IsNot, ast.NotEq)) and \
            isinstance(node.comparators[0], ast.Constant) and node.comparators[0].value is None:
        node = node.left
    return isinstance(node, ast.Call) and len(node.args) == 1 and isinstance(node.args[0], ast.Constant) and \
        isinstance(node.args[0].value, str) and node.args[0].value.split(".", 1)[0] in _CUDA_ONLY_PACKAGES and \
        _dotted(node.func).rsplit(".", 1)[-1] in _PACKAGE_FINDERS


_REGEX_MATCHES = frozenset({"re.match", "re.fullmatch"})
# the autocast state read with no device type answers for CUDA autocast only, False inside `torch.autocast("npu")`
# (rule NPU036; https://docs.pytorch.org/docs/stable/amp.html): `if torch.is_autocast_enabled(): target_dtype =
# torch.get_autocast_gpu_dtype()` (transformers' FlashAttention-2 forwards, copied into verl) runs only under CUDA
# autocast, so its body is behind a CUDA gate like `torch.cuda.is_available()` (tq54d)
_AUTOCAST_STATE = frozenset({"torch.is_autocast_enabled", "torch.is_autocast_gpu_enabled"})
_CUDA_PATTERN = re.compile(r"\^?cuda\b")     # a pattern that matches only strings starting with "cuda"


def is_cuda_test(node: ast.AST, flags: frozenset[str] | set[str] = frozenset()) -> bool:
    """Whether an expression holds only where CUDA is present (see the module docstring)."""
    if _cuda_package_found(node):
        return True
    if isinstance(node, ast.BoolOp) and isinstance(node.op, ast.And):
        return any(is_cuda_test(v, flags) for v in node.values)
    if isinstance(node, ast.BoolOp) and isinstance(node.op, ast.Or):
        # `torch.cuda.is_available() or torch.xpu.is_available()`: CUDA or another non-Ascend backend is false on
        # Ascend all the same (t11r)
        cuda = [is_cuda_test(v, flags) for v in node.values]
        return any(cuda) and all(c or _other_backend_probe(v) for c, v in zip(cuda, node.values))
    if _cuda_count(node, flags):
        return True          # `"cuda" if torch.cuda.device_count() else "cpu"`: a count's truth is `> 0` (t36c)
    if isinstance(node, ast.Call):
        name = _dotted(node.func)
        if isinstance(node.func, ast.Attribute) and node.func.attr == "startswith" and len(node.args) == 1 and \
                _cuda_string(node.args[0]):
            return True      # `device.startswith("cuda")`: a device the user asked for is a CUDA one
        if isinstance(node.func, ast.Attribute) and node.func.attr == "__contains__" and len(node.args) == 1 and \
                _cuda_string(node.args[0]):
            return True      # `device.__contains__("cuda")`: `"cuda" in device` spelt as a call (echomimic_v2)
        if isinstance(node.func, ast.Attribute) and node.func.attr == "startswith" and len(node.args) == 1 and \
                isinstance(node.args[0], ast.Constant) and node.args[0].value == "cu":
            return True      # `torch_platform.startswith("cu")`: a CUDA wheel tag (cu121, cu128; heldout18, s15b)
        if name in _AUTOCAST_STATE and not node.args and not node.keywords:
            return True      # `torch.is_autocast_enabled()`: no device type reads CUDA autocast only (tq54d)
        if name in _REGEX_MATCHES and node.args and isinstance(node.args[0], ast.Constant) and \
                isinstance(node.args[0].value, str) and _CUDA_PATTERN.match(node.args[0].value):
            return True      # `re.match(r"^cuda:(\d+)$", device_str)`: the user's device string names CUDA (tq44a)
        return name.endswith(_CUDA_STATE_PROBES) and name.split(".")[0] in ("torch", "cuda") or \
            bool(_CUDA_PROBE.match(name.rsplit(".", 1)[-1])) or name + "()" in flags or \
            name.endswith(_PLATFORM_CAPABILITY_TESTS)
    if isinstance(node, ast.Attribute) and (node.attr == "is_cuda" or _dotted(node) == "torch.version.cuda"):
        return True
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, str):
        return f"{_dotted(node.value)}[{node.slice.value!r}]" in flags     # `caps["cuda"]` (`_capability_tables`)
    if isinstance(node, (ast.Name, ast.Attribute)):
        return (_flag_name(node) or _option_attribute(node)) in flags
    if isinstance(node, ast.Compare) and len(node.ops) == 1:
        left, op, right = node.left, node.ops[0], node.comparators[0]
        if _version_none_test(node, ast.IsNot):
            return True      # `torch.version.cuda is not None`: None on a build without CUDA (tq48b)
        if isinstance(op, ast.IsNot) and isinstance(right, ast.Constant) and right.value is None and \
                f"{_flag_name(left)}{_HELD_SUFFIX}" in flags:
            return True      # `self._gdr_staging is not None`, set only behind a CUDA test (`_held_attributes`)
        if isinstance(op, (ast.Eq, ast.In)) and (_cuda_string(left) or _cuda_string(right) and isinstance(op, ast.Eq)):
            return True      # `x.type == "cuda"`, `"cuda" in str(device)`, `device == "cuda"`
        if _oom_text(node) == "CUDA":
            return True      # `"CUDA out of memory" in str(err)` (pd38)
        if isinstance(op, (ast.Eq, ast.In)) and (
                _nccl_string(left) and not isinstance(right, ast.Constant) and not _runtime_backend(right) or
                _nccl_string(right) and isinstance(op, ast.Eq) and not _runtime_backend(left)):
            return True      # `"nccl" in self.backend`, `backend == "nccl"`: only where NCCL runs (t11f)
        if isinstance(op, (ast.Eq, ast.Is)) and (_cuda_member(left) or _cuda_member(right)):
            return True      # `self.backend == BackendType.CUDA_TORCH` (nncf's test pipelines; t17f)
        if isinstance(op, ast.Eq) and (_cuda_device(left) or _cuda_device(right)):
            return True      # `model.device == torch.device("cuda")`
        if isinstance(op, ast.In) and _cuda_and_twins(right):
            return True      # `SYSTEM in {"cuda", "rocm"}` (TGI), `VLLM_TARGET_DEVICE in ["cuda", "rocm"]` (t17f)
        if isinstance(op, ast.In) and isinstance(left, ast.Constant) and left.value in _CUDA_PROVIDERS:
            # `'CUDAExecutionProvider' in onnxruntime.get_available_providers()` (or the providers the user chose
            # from that list): ONNX Runtime lists it only with its CUDA build on an NVIDIA GPU; Ascend's build lists
            # CANNExecutionProvider (roop's `get_device()`, heldout19; t16b)
            return True
        if _cuda_count(left, flags) and isinstance(op, (ast.Gt, ast.GtE, ast.NotEq)) and \
                isinstance(right, ast.Constant) and isinstance(right.value, int) and right.value >= (1 if isinstance(op, ast.GtE) else 0) \
                and (right.value == 0 or not isinstance(op, ast.NotEq)):
            # `torch.cuda.device_count() > 0`; `ngpu != 0` with `ngpu = torch.cuda.device_count()` (GPT-SoVITS's
            # webui and finetune.py, heldout23: `if torch.cuda.is_available() or ngpu != 0:`): 0 on Ascend
            return True
        if isinstance(left, ast.Attribute) and left.attr == "n_gpu" and isinstance(right, ast.Constant) and \
                type(right.value) is int and (isinstance(op, ast.Gt) and right.value >= 1 or
                                              isinstance(op, ast.GtE) and right.value >= 2):
            # `if args.n_gpu > 1: model = torch.nn.DataParallel(model)`: transformers' TrainingArguments.n_gpu, the
            # CUDA device count (1 on Ascend), or the script's own `args.n_gpu = torch.cuda.device_count()` (0 there):
            # several devices only with CUDA (tq51c, heldout65's EasyNLP trainer row)
            return True
        if isinstance(op, (ast.Gt, ast.NotEq)) and isinstance(right, ast.Constant) and right.value == 0 and \
                isinstance(left, (ast.Name, ast.Attribute)) and _flag_name(left) in flags:
            return True      # `if self.use_gpu > 0:` (pylate's ResidualCodec, a boolean flag compared): the flag
        if isinstance(op, (ast.Gt, ast.GtE)) and isinstance(right, ast.Tuple) and right.elts and (
                isinstance(left, ast.Call) and _capability_call(left) or
                isinstance(left, ast.Name) and left.id + _CAP_SUFFIX in flags):
            return True      # `torch.cuda.get_device_capability() >= (9, 0)`: (0, 0) or an error without CUDA
        if isinstance(op, (ast.Gt, ast.GtE)) and isinstance(right, ast.Constant) and isinstance(right.value, int) \
                and right.value >= 1 and isinstance(left, ast.Subscript) and isinstance(left.value, ast.Call) and \
                _capability_call(left.value):
            return True      # `current_platform.get_device_capability()[0] >= 9` (t11y): None (an error) on Ascend
    return False


# vLLM's platform capability tests (`current_platform.has_device_capability(90)`, `is_device_capability(100)`):
# false where the platform reports no compute capability, as vllm-ascend's NPUPlatform does (its
# get_device_capability returns None; Platform.has_device_capability returns False then) (t11y, heldout16)
# `torch.cuda.is_initialized()`: True only once PyTorch's CUDA state is initialised, which needs a CUDA device
# (https://docs.pytorch.org/docs/stable/generated/torch.cuda.is_initialized.html): False on Ascend (tq52d)
_CUDA_STATE_PROBES = ("cuda.is_available", "cuda.is_initialized")
_HELD_SUFFIX = "#held"   # `self.x#held`: every binding of `self.x` but None is `X(...) if <CUDA test> else None`
_PLATFORM_CAPABILITY_TESTS = ("current_platform.has_device_capability", "current_platform.is_device_capability")


def _capability_call(node: ast.Call) -> bool:
    """`torch.cuda.get_device_capability()`, vLLM's `current_platform.get_device_capability()` (None on Ascend)."""
    return _dotted(node.func).endswith(("cuda.get_device_capability", "current_platform.get_device_capability"))


def _skips_without_capability(node: ast.AST) -> bool:
    """`(lambda x: x is None or not ops.cutlass_group_gemm_supported(x.to_int()))(
    current_platform.get_device_capability())` (vLLM's kernel tests): true where the platform has no capability."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Lambda) and len(node.args) == 1 and
            isinstance(node.args[0], ast.Call) and _capability_call(node.args[0])):
        return False
    params, body = node.func.args.args, node.func.body
    return len(params) == 1 and isinstance(body, ast.BoolOp) and isinstance(body.op, ast.Or) and any(
        isinstance(v, ast.Compare) and isinstance(v.left, ast.Name) and v.left.id == params[0].arg and
        isinstance(v.ops[0], ast.Is) and isinstance(v.comparators[0], ast.Constant) and v.comparators[0].value is None
        for v in body.values)


def _version_none_test(node: ast.Compare, op: type) -> bool:
    """`torch.version.cuda is not None` (op IsNot) / `torch.version.cuda is None` (op Is), also with `!=` / `==`."""
    ops = (ast.IsNot, ast.NotEq) if op is ast.IsNot else (ast.Is, ast.Eq)
    sides = (node.left, node.comparators[0])
    return isinstance(node.ops[0], ops) and any(isinstance(a, ast.Constant) and a.value is None and
                                                _dotted(b) == "torch.version.cuda" for a, b in (sides, sides[::-1]))


def _negated_cuda_test(node: ast.AST, flags: set[str]) -> bool:
    """Whether an expression is false only where CUDA is present: `not <cuda test>`, `device != "cuda"`, an `or`
    with one such operand (`_device_type(device) != "cuda" or not torch.cuda.is_available()`; t11r)."""
    if _skips_without_capability(node):
        return True
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant) and node.slice.value == 0 and \
            f"{_dotted(node.value)}[0]{_NO_CUDA}" in flags:
        return True      # `gpu_unavailable[0]` (`_no_cuda_tuples`)
    if isinstance(node, ast.BoolOp) and isinstance(node.op, ast.Or):
        return any(_negated_cuda_test(v, flags) for v in node.values)
    if isinstance(node, ast.Compare) and len(node.ops) == 1 and _version_none_test(node, ast.Is):
        return True      # `torch.version.cuda is None` (tq48b)
    if isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], ast.NotEq):
        return is_cuda_test(ast.Compare(left=node.left, ops=[ast.Eq()], comparators=node.comparators), flags)
    if isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], ast.NotIn) and \
            _cuda_and_twins(node.comparators[0]):
        return True      # `VLLM_TARGET_DEVICE not in ["cuda", "rocm"]` (a skipif's test; t17f)
    if isinstance(node, ast.BoolOp) and isinstance(node.op, ast.And) and all(
            isinstance(v, ast.UnaryOp) and isinstance(v.op, ast.Not) for v in node.values):
        # `not torch.cuda.is_available() and not torch.xpu.is_available()`: not (CUDA or XPU) (t11r)
        operands = [v.operand for v in node.values if isinstance(v, ast.UnaryOp)]
        return is_cuda_test(ast.BoolOp(op=ast.Or(), values=operands), flags)
    return isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not) and is_cuda_test(node.operand, flags)


def _flags_implying_cuda(test: ast.AST, flags: set[str]) -> set[str]:
    """The other operands (`ast.dump`) of `F and ... and not <cuda test>`, each a plain name or a comparison: an exit
    taken under that test leaves each F true only where CUDA is present (`if graph_type == AOT and
    gpu_unavailable[0]: return` ... `torch.device("cuda") if graph_type == AOT else ...`; pd38)."""
    if not (isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And) and
            any(_negated_cuda_test(v, flags) for v in test.values)):
        return set()
    return {ast.dump(v) for v in test.values if isinstance(v, (ast.Name, ast.Compare)) and
            not _negated_cuda_test(v, flags)}


def _too_few_cuda_devices(node: ast.AST, flags: frozenset[str] | set[str] = frozenset()) -> bool:
    """`torch.cuda.device_count() < 2`, `<= 1`, `== 0`: true on Ascend (no CUDA device), so `if ...: return` /
    `self.skipTest(...)` leaves the test there and what follows runs only with CUDA devices (t11q); also on a name
    bound only to the count (`n_gpus = torch.cuda.device_count()` / `if n_gpus < 2: print(...)` / `else:
    mp.spawn(demo, ...)`, PyTorch's tensor-parallel example scripts copied into llm-action; t33d)."""
    if not (isinstance(node, ast.Compare) and len(node.ops) == 1 and (
            _cuda_count(node.left, flags)) and
            isinstance(node.comparators[0], ast.Constant)):
        return False
    op, bound = node.ops[0], node.comparators[0].value
    return isinstance(bound, int) and not isinstance(bound, bool) and (
        isinstance(op, ast.Lt) and bound >= 1 or isinstance(op, ast.LtE) and bound >= 0 or
        isinstance(op, ast.Eq) and bound == 0)


# `sys.platform == "win32"`, `sys.platform.startswith("win")`, `os.name == "nt"`, `platform.system() == "Windows"`
_WINDOWS_VALUES = frozenset({"win32", "nt", "windows", "cygwin"})
_WINDOWS = "a Windows-only branch"


def _windows_test(node: ast.AST) -> bool:
    """Whether an expression holds only on Windows, never on the Linux hosts Ascend runs on (t11q)."""
    if isinstance(node, ast.BoolOp) and isinstance(node.op, ast.And):
        return any(_windows_test(v) for v in node.values)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "startswith" and \
            _dotted(node.func.value) == "sys.platform" and len(node.args) == 1 and \
            isinstance(node.args[0], ast.Constant) and node.args[0].value in ("win", "win32", "cygwin"):
        return True
    if isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], ast.Eq):
        left, right = node.left, node.comparators[0]
        if isinstance(left, ast.Constant):
            left, right = right, left
        if not (isinstance(right, ast.Constant) and isinstance(right.value, str)):
            return False
        value = right.value.lower()
        if value in ("win32", "cygwin") or right.value == "Windows":
            return True     # only Windows is spelled so (`get_platform() == "win32"`, a collect-env helper's value)
        source = _dotted(left.func) if isinstance(left, ast.Call) else _dotted(left)
        return source in ("sys.platform", "os.name", "platform.system") and value in _WINDOWS_VALUES
    return False


def cuda_flags(tree: ast.Module, extra: frozenset[str] | set[str] = frozenset()) -> set[str]:
    """Names every assignment of which is a CUDA test, and that no function takes as a parameter; with `extra`
    (names a CUDA gate imported from another module binds) and the file's own probes and providers
    (`cuda_probes`)."""
    caps = _capability_names(tree) | _torch_aliases(tree)
    flags = _assigned_flags(tree, set(extra) | caps) | set(extra) | caps
    held = _held_attributes(tree, flags)
    if held:        # `use_gdr = self.use_gdr and self._gdr_staging is not None`: a flag through the held object
        flags |= held | _assigned_flags(tree, flags | held)
    flags |= cuda_probes(tree, flags)
    flags |= set(method_probes(tree, flags))
    flags |= _capability_tables(tree, flags) | _no_cuda_tuples(tree, flags)
    # `requires_cuda = pytest.mark.skipif(not torch.cuda.is_available(), ...)` at module level, used as
    # `@requires_cuda` on test classes and functions (AReaL's tests; t11e, tuned on heldout5)
    for stmt in tree.body:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name) and \
                stmt.targets[0].id != "pytestmark" and isinstance(stmt.value, ast.Call) and \
                _dotted(stmt.value.func).rsplit(".", 1)[-1] in ("skipif", "skipIf", "skipUnless") and \
                _cuda_decorator(stmt.value, flags):
            flags.add(stmt.targets[0].id + _MARK_SUFFIX)
    return flags


def _capability_names(tree: ast.Module) -> set[str]:
    """Module-level names bound to the CUDA compute capability (`_CUDA_CAPABILITY =
    torch.cuda.get_device_capability() if CUDA_AVAILABLE else (0, 0)`): `cap >= (9, 0)` holds only on CUDA; and
    names every module-level binding of which is the CUDA device count (`ngpu = torch.cuda.device_count()`, pd17):
    `ngpu != 0` holds only on CUDA."""
    out: set[str] = set()
    counts: dict[str, bool] = {}
    for stmt in tree.body:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name) and \
                any(isinstance(n, ast.Call) and _dotted(n.func).endswith("cuda.get_device_capability")
                    for n in walk_list(stmt.value)):
            out.add(stmt.targets[0].id + _CAP_SUFFIX)
    ids: dict[str, bool] = {}
    for node in _walk(tree):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] \
            if isinstance(node, (ast.AugAssign, ast.AnnAssign, ast.For)) else []
        for t in targets:
            for n in walk_list(t):
                if isinstance(n, ast.Name):
                    value = node.value if isinstance(node, ast.Assign) and len(targets) == 1 and t is n else None
                    counts[n.id] = counts.get(n.id, True) and isinstance(value, ast.Call) \
                        and bool(_COUNT.search(_dotted(value.func)))
                    ids[n.id] = ids.get(n.id, True) and value is not None and _count_ids(value)
        if isinstance(node, ast.arg):
            counts[node.arg] = ids[node.arg] = False    # a parameter: the caller's count, not the device count
    return out | {name + _COUNT_SUFFIX for name, only in counts.items() if only} | \
        {name + _IDS_SUFFIX for name, only in ids.items() if only}


def _guarded_probe_body(body: list[ast.stmt]) -> list[ast.stmt]:
    """`try: import torch; return torch.cuda.is_available()` / `except Exception: return False` (lollms' service
    helpers `check_torch_cuda()`): the try body past its imports when every handler returns a false value; else
    `body`."""
    if not (len(body) == 1 and isinstance(body[0], ast.Try) and body[0].handlers and not body[0].finalbody):
        return body
    falsy = all(len(h.body) == 1 and isinstance(h.body[0], ast.Return) and
                (h.body[0].value is None or isinstance(h.body[0].value, ast.Constant) and not h.body[0].value.value)
                for h in body[0].handlers)
    rest = [s for s in body[0].body if not isinstance(s, (ast.Import, ast.ImportFrom))]
    return rest if falsy and not body[0].orelse else body


def _torch_aliases(tree: ast.Module) -> set[str]:
    """`th.cuda.is_available()` for each `import torch as th` of the file (rllte's notebooks): the probe under
    another name."""
    return {f"{a.asname}.cuda.is_available()" for node in _walk(tree) if isinstance(node, ast.Import)
            for a in node.names if a.name == "torch" and a.asname and a.asname != "torch"}


def cuda_probes(tree: ast.Module, flags: set[str]) -> set[str]:
    """Top-level functions that answer a CUDA test: `name()` for a probe whose only statement (after a docstring)
    is `return <CUDA test>` (`def real_weights_available(): return CUDA and _ckpt_present(path)`), `name()?` for a
    provider that returns None first thing without CUDA (`if not real_weights_available(): return None`): a test
    that gets None from it skips (`m = real_qwen3_8b()` / `if m is None: raise Skip(...)`)."""
    out: set[str] = set()
    defs = [s for s in tree.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))]
    for _ in range(2):        # a provider may ask a probe defined below it
        for fn in defs:
            body = fn.body[1:] if fn.body and isinstance(fn.body[0], ast.Expr) and \
                isinstance(fn.body[0].value, ast.Constant) else fn.body
            while body and isinstance(body[0], ast.Global):
                body = body[1:]
            body = _guarded_probe_body(body)
            known = flags | out
            if len(body) == 1 and isinstance(body[0], ast.Return) and body[0].value is not None and \
                    is_cuda_test(body[0].value, known):
                out.add(fn.name + "()")
            elif body and isinstance(body[0], ast.If) and _negated_cuda_test(body[0].test, known) and \
                    len(body[0].body) == 1 and isinstance(body[0].body[0], ast.Return) and \
                    _nones(body[0].body[0].value):
                out.add(fn.name + "()?")
    return out


def _requirers(tree: ast.Module, flags: set[str]) -> set[str]:
    """Top-level functions whose first statement (after a docstring) leaves the calling test without CUDA: `if not
    torch.cuda.is_available(): pytest.skip(...)` (or raise): a test that calls one runs the rest of its block only
    with CUDA (slime's `_require_cuda_deepgemm(monkeypatch)`; t11i, tuned on heldout7). A `return` there leaves only
    the helper, so it does not count."""
    out = set()
    for fn in tree.body:
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        body = fn.body[1:] if fn.body and isinstance(fn.body[0], ast.Expr) and \
            isinstance(fn.body[0].value, ast.Constant) else fn.body
        if body and isinstance(body[0], ast.If) and not body[0].orelse and \
                _negated_cuda_test(body[0].test, flags) and body[0].body and \
                not isinstance(body[0].body[-1], (ast.Return, ast.Continue, ast.Break)) and _exits(body[0].body[-1]):
            out.add(fn.name)
    return out


def _skipping_fixture(fn: ast.FunctionDef | ast.AsyncFunctionDef, flags: set[str], requirers: set[str],
                      cuda_fixtures: set[str]) -> bool:
    """Whether a fixture skips its tests without CUDA before it yields: it requests such a fixture, or a statement
    of its body (before any `yield`) calls a requirer (`_skip_if_no_cuda()`) or is `if not torch.cuda.is_available():
    pytest.skip(...)`."""
    if any(a.arg in cuda_fixtures for a in (*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs)):
        return True
    for stmt in fn.body:
        if any(isinstance(n, (ast.Yield, ast.YieldFrom)) for n in walk_list(stmt)):
            return False
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) and _dotted(stmt.value.func) in requirers:
            return True
        if isinstance(stmt, ast.If) and not stmt.orelse and stmt.body and _negated_cuda_test(stmt.test, flags) and \
                isinstance(stmt.body[-1], ast.Expr) and _exits(stmt.body[-1]):
            return True
    return False


def _cuda_fixture_requests(tree: ast.Module, flags: set[str], requirers: set[str]) -> list[tuple[ast.FunctionDef | ast.AsyncFunctionDef, str]]:
    """(test, fixture) for each test of the module that requests, directly, a fixture of the module whose chain
    skips without CUDA (`_skipping_fixture`, followed through fixtures that request it: ArcticInference's
    `fp32_enabled -> patches_installed -> distributed`, whose `distributed` calls `_skip_if_no_cuda()`): pytest
    sets the fixtures up before the test body, so the body runs only with CUDA, as under a CUDA test mark (tq52b)."""
    functions = [n for n in _walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    fixtures = {name: fn for fn in functions if (name := pytest_fixture_name(fn)) is not None}
    if not fixtures:
        return []
    cuda_fixtures: set[str] = set()
    grew = True
    while grew:
        grew = False
        for name, fn in fixtures.items():
            if name not in cuda_fixtures and _skipping_fixture(fn, flags, requirers, cuda_fixtures):
                cuda_fixtures.add(name)
                grew = True
    if not cuda_fixtures:
        return []
    out = []
    for fn in functions:
        if fn.body and pytest_fixture_name(fn) is None:
            hit = next((a.arg for a in (*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs)
                        if a.arg in cuda_fixtures), None)
            if hit is not None:
                out.append((fn, hit))
    return out


_NO_CUDA = "~"       # `X[0]~`: the first item of the module-level tuple X holds only where CUDA (or ROCm) is absent
_NO_ROCM = "~hip"


def _no_cuda_tuples(tree: ast.Module, flags: set[str]) -> set[str]:
    """`X[0]~` for a module-level `X = (<no-CUDA test>, "reason")`, the shape `@unittest.skipIf(*X)` unpacks
    (TorchEasyRec's `gpu_unavailable = (nv_gpu_unavailable[0] and amd_gpu_unavailable[0], "CUDA/HIP is not
    available")`, heldout31; pd38). A no-CUDA test is a negated CUDA test, or an `and` of them with `not
    torch.version.hip` (ROCm absent too: neither runs on Ascend)."""
    out: set[str] = set()
    for stmt in tree.body:
        target = stmt.targets[0] if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 else \
            stmt.target if isinstance(stmt, ast.AnnAssign) else None
        value = stmt.value if isinstance(stmt, (ast.Assign, ast.AnnAssign)) else None
        if not (isinstance(target, ast.Name) and isinstance(value, ast.Tuple) and value.elts):
            continue
        first, known = value.elts[0], flags | out
        if _negated_cuda_test(first, known) or isinstance(first, ast.BoolOp) and isinstance(first.op, ast.And) and \
                any(_negated_cuda_test(v, known) for v in first.values) and \
                all(_negated_cuda_test(v, known) or _no_rocm(v, known) for v in first.values):
            out.add(f"{target.id}[0]{_NO_CUDA}")
        elif _no_rocm(first, known):
            out.add(f"{target.id}[0]{_NO_ROCM}")
    return out


def _no_rocm(node: ast.AST, flags: set[str]) -> bool:
    """`not torch.version.hip`, or the first item of a tuple that holds it."""
    if isinstance(node, ast.Subscript):
        return f"{_dotted(node.value)}[0]{_NO_ROCM}" in flags and isinstance(node.slice, ast.Constant) and \
            node.slice.value == 0
    return isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not) and _dotted(node.operand) == "torch.version.hip"


def _capability_tables(tree: ast.Module, flags: set[str]) -> set[str]:
    """`get_caps()['cuda']` and `caps['cuda']` for a top-level function whose only statement returns a dict literal
    (`return {"cuda": torch.cuda.is_available(), "mps": ...}`) and a name every assignment of which calls it
    (`caps = get_caps()`): the entries that are CUDA tests (InstaNovo's device handler, heldout31; pd38)."""
    keys: dict[str, list[str]] = {}
    for fn in tree.body:
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        body = fn.body[1:] if fn.body and isinstance(fn.body[0], ast.Expr) and \
            isinstance(fn.body[0].value, ast.Constant) else fn.body
        if len(body) == 1 and isinstance(body[0], ast.Return) and isinstance(body[0].value, ast.Dict):
            table = body[0].value
            cuda = [k.value for k, v in zip(table.keys, table.values) if isinstance(k, ast.Constant) and
                    isinstance(k.value, str) and is_cuda_test(v, flags)]
            if cuda:
                keys[fn.name] = cuda
    if not keys:
        return set()
    out = {f"{name}()[{key!r}]" for name, cuda in keys.items() for key in cuda}
    calls: dict[str, set[str]] = {}
    for node in _walk(tree):
        if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            value = node.value if len(targets) == 1 and not isinstance(node, ast.AugAssign) else None
            called = _dotted(value.func) if isinstance(value, ast.Call) and not value.args and not value.keywords \
                else ""
            for t in targets:
                for n in walk_list(t):
                    if isinstance(n, ast.Name):
                        calls.setdefault(n.id, set()).add(called if n is t else "")
        elif isinstance(node, ast.arg):
            calls.setdefault(node.arg, set()).add("")
    for local, probes in calls.items():
        if len(probes) == 1 and (probe := next(iter(probes))) in keys:
            out |= {f"{local}[{key!r}]" for key in keys[probe]}
    return out


def _nones(node: ast.expr | None) -> bool:
    """`None`, `(None, None)`, a bare return, `x if c else None` of Nones."""
    if node is None:
        return True
    if isinstance(node, ast.Constant):
        return node.value is None
    if isinstance(node, ast.Tuple):
        return all(_nones(e) for e in node.elts)
    if isinstance(node, ast.IfExp):
        return _nones(node.body) and _nones(node.orelse)
    return False


def module_gates(tree: ast.Module, text: str) -> list[str]:
    """The CUDA gates a module offers its importers (kept in its cross-file summary): top-level names every
    assignment of which is a CUDA test (`CUDA = torch.cuda.is_available()`), probes `name()` and providers
    `name()?` (`cuda_probes`)."""
    if "cuda" not in text.lower():
        return []
    flags = _assigned_flags(tree, frozenset())
    top: set[str] = set()
    for stmt in tree.body:
        if isinstance(stmt, (ast.Assign, ast.AnnAssign)):
            for t in (stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]):
                if isinstance(t, ast.Name):
                    top.add(t.id)
    probes = cuda_probes(tree, flags)
    methods = method_probes(tree, flags | probes)
    tuples = _no_cuda_tuples(tree, flags)
    return sorted({f for f in flags if f in top} | probes | set(methods) | tuples |
                  {attr + _ATTR_SUFFIX for attrs in methods.values() for attr in attrs} |
                  # (a class attribute bound to the count spells "device_count": no walk of files without one)
                  (class_count_attributes(tree) if "device_count" in text else set()))


def class_count_attributes(tree: ast.Module) -> set[str]:
    """`.X#count` for a class attribute every binding of which in the module is the CUDA device count: ColBERT's
    settings dataclass `total_visible_gpus = torch.cuda.device_count()` (pylate, heldout37), read as
    `config.total_visible_gpus > 0` by every module of the index (auditor/static/imported_gates.py offers it to the
    modules that read the attribute). A name also bound to something else, or set on an instance, is no count."""
    counts: dict[str, bool] = {}
    nodes = list(_walk(tree))
    for node in nodes:
        if isinstance(node, ast.ClassDef):
            for stmt in node.body:
                if not isinstance(stmt, (ast.Assign, ast.AnnAssign)):
                    continue
                target = stmt.target if isinstance(stmt, ast.AnnAssign) else \
                    stmt.targets[0] if len(stmt.targets) == 1 else None
                if isinstance(target, ast.Name):
                    counts[target.id] = counts.get(target.id, True) and _cuda_count(stmt.value, frozenset())
    for node in nodes if any(counts.values()) else []:
        if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            for t in node.targets if isinstance(node, ast.Assign) else [node.target]:
                if isinstance(t, ast.Attribute) and t.attr in counts:
                    counts[t.attr] = False
    return {"." + name + _COUNT_SUFFIX for name, only in counts.items() if only}


_ATTR_SUFFIX = "#attr"    # in `module_gates`: `self.<attr>`, a setting a method probe compares with "cuda"


def method_probes(tree: ast.Module, flags: set[str]) -> dict[str, set[str]]:
    """Methods of the module's classes that answer a CUDA test: `self.name()` for a method taking only `self` whose
    only statement is `return <CUDA test>` (data-juicer's `def use_cuda(self): return self.accelerator == "cuda" and
    is_cuda_available()`; t11u). With each, the `self.<attr>` settings it compares with "cuda" in an `and` that
    also asks whether CUDA is present, and the class attributes copied into them in its class (`self.accelerator =
    self._accelerator`): a subclass's default `_accelerator = "cuda"` then chooses CUDA only where CUDA is found."""
    out: dict[str, set[str]] = {}
    for cls in tree.body:
        if not isinstance(cls, ast.ClassDef):
            continue
        copies: dict[str, set[str]] = {}
        for fn in cls.body:
            if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) or len(fn.args.args) != 1 or \
                    fn.args.vararg or fn.args.kwarg or fn.args.kwonlyargs or fn.decorator_list:
                continue
            body = fn.body[1:] if fn.body and isinstance(fn.body[0], ast.Expr) and \
                isinstance(fn.body[0].value, ast.Constant) else fn.body
            if len(body) != 1 or not isinstance(body[0], ast.Return) or body[0].value is None or \
                    not is_cuda_test(body[0].value, flags):
                continue
            attrs: set[str] = set()
            value = body[0].value
            if isinstance(value, ast.BoolOp) and isinstance(value.op, ast.And):
                settings = [v for v in value.values if isinstance(v, ast.Compare) and len(v.ops) == 1 and
                            isinstance(v.ops[0], ast.Eq) and _cuda_string(v.comparators[0]) and
                            str(_flag_name(v.left)).startswith("self.")]
                if settings and any(is_cuda_test(v, flags) for v in value.values if v not in settings):
                    copies = copies or _self_copies(cls)
                    for v in settings:
                        attr = str(_flag_name(v.left))
                        attrs |= {attr} | copies.get(attr, set())
            out[f"self.{fn.name}()"] = attrs
    return out


def _self_copies(cls: ast.ClassDef) -> dict[str, set[str]]:
    """`self.accelerator = self._accelerator` in the class: each setting with the settings copied into it (read
    only for a class with a method probe, so walked only then)."""
    copies: dict[str, set[str]] = {}
    for node in walk_list(cls):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and \
                _flag_name(node.targets[0]) and _flag_name(node.value) and \
                str(_flag_name(node.value)).startswith("self."):
            copies.setdefault(str(_flag_name(node.targets[0])), set()).add(str(_flag_name(node.value)))
    return copies


def _gated_true_assigns(tree: ast.Module, extra: frozenset[str] | set[str]) -> set[int]:
    """The module-level `NAME = True` statements inside the body of an `if <cuda test>:` (at any depth of if / try /
    with / for below it, not in a def): TGI's `HAS_FLASH_ATTN = False` ... `if SYSTEM in {"cuda", "rocm"}:` ...
    `HAS_FLASH_ATTN = True`, a flag that holds only where CUDA does (t17f)."""
    out: set[int] = set()
    stack: list[tuple[ast.AST, bool]] = [(s, False) for s in tree.body]
    while stack:
        node, gated = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        if gated and isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant) and node.value.value is True:
            out.add(id(node))
        if isinstance(node, ast.If):
            inner = gated or is_cuda_test(node.test, extra)
            stack.extend((s, inner) for s in node.body)
            stack.extend((s, gated) for s in node.orelse)
        elif isinstance(node, (ast.Try, ast.With, ast.For, ast.While)):
            stack.extend((s, gated) for s in ast.iter_child_nodes(node) if isinstance(s, ast.stmt))
            stack.extend((s, gated) for h in getattr(node, "handlers", []) for s in h.body)
    return out


def _assigned_flags(tree: ast.Module, extra: frozenset[str] | set[str]) -> set[str]:
    """Names every assignment of which is a CUDA test; `False` / `None` counts neither way beside a `True` set only
    behind a CUDA gate (`_gated_true_assigns`), which counts as a test."""
    tests: dict[str, bool] = {}
    params: set[str] = set()
    gated_true = _gated_true_assigns(tree, extra)
    for node in _walk(tree):
        if isinstance(node, ast.arg):
            params.add(node.arg)
        if isinstance(node, ast.Assign):
            targets, value = node.targets, node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            targets, value = [node.target], node.value
        elif isinstance(node, ast.AugAssign):
            targets, value = [node.target], None        # `use_cuda |= x`: not a test any more
        else:
            continue
        for t in targets:
            name = _flag_name(t) or _option_attribute(t)
            if name is None:
                continue
            if len(targets) == 1 and isinstance(value, ast.Constant) and (value.value is False or value.value is None):
                continue        # `HAS_FLASH_ATTN = False`: the flag's off state counts neither way
            # (`n = torch.cuda.device_count()` is a count, read through `#count` names, not a flag)
            tests[name] = tests.get(name, True) and value is not None and len(targets) == 1 and \
                (is_cuda_test(value, extra) and not _cuda_count(value, extra) or id(node) in gated_true)
    return {n for n, ok in tests.items() if ok and n not in params}


def _held_attributes(tree: ast.Module, flags: set[str]) -> set[str]:
    """`self.x#held` for an attribute every binding of which is None or `X(...) if <CUDA test> else None`
    (TransferQueue's Mooncake client: `gdr_eligible = ... and torch.cuda.is_initialized()`, `self._gdr_staging =
    GdrStaging(n) if gdr_eligible else None`): `self._gdr_staging is not None` then holds only where CUDA is."""
    held: dict[str, bool] = {}
    for node in _walk(tree):
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target, value = node.targets[0], node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            target, value = node.target, node.value
        else:
            continue
        if not isinstance(target, ast.Attribute) or _nones(value):
            continue
        name = _flag_name(target)
        if name:
            held[name] = held.get(name, True) and isinstance(value, ast.IfExp) and _nones(value.orelse) and \
                is_cuda_test(value.test, flags)
    return {name + _HELD_SUFFIX for name, ok in held.items() if ok}


def _cuda_decorator(dec: ast.expr, flags: set[str]) -> bool:
    """`@require_torch_gpu`, `@unittest.skipIf(not torch.cuda.is_available(), ...)`, `@skipUnless(cuda test)`."""
    func = dec.func if isinstance(dec, ast.Call) else dec
    name = _dotted(func).rsplit(".", 1)[-1]
    if (_REQUIRE.match(name) or _SKIP_UNLESS.match(name)) and backends_in_text(name) == {"cuda"}:
        return True      # `@require_torch_gpu`, veScale's `@skip_unless_torch_gpu`, torch's `@skip_if_lt_x_gpu(2)`
    if isinstance(dec, ast.Name) and dec.id + _MARK_SUFFIX in flags:
        return True      # `requires_cuda = pytest.mark.skipif(not CUDA_SM90, ...)` ... `@requires_cuda`
    if name + DESELECTED_SUFFIX in flags and _dotted(func).rsplit(".", 2)[-2:-1] == ["mark"]:
        return True      # `@pytest.mark.cuda` where the suite runs `pytest -m "not cuda"` without CUDA (tq48b)
    if isinstance(dec, ast.Call) and dec.args:
        if name in ("skipIf", "skipif"):
            test = dec.args[0]
            if isinstance(test, ast.Starred):       # `@unittest.skipIf(*gpu_unavailable)`: (condition, reason)
                test = ast.Subscript(value=test.value, slice=ast.Constant(0))
            # (`skipif(torch.cuda.device_count() < 2, ...)` skips on Ascend too: nncf's DataParallel tests, heldout18)
            return _negated_cuda_test(test, flags) or _too_few_cuda_devices(test)
        if name == "skipUnless":
            return is_cuda_test(dec.args[0], flags)
    return False


def _skip_decorator(dec: ast.expr) -> bool:
    """`@pytest.mark.skip`, `@pytest.mark.skip(reason="flaky")`, `@unittest.skip("...")`: skipped unconditionally."""
    return _dotted(dec.func if isinstance(dec, ast.Call) else dec) in ("pytest.mark.skip", "mark.skip",
                                                                       "unittest.skip")


def _cuda_pytestmark(stmt: ast.stmt, flags: set[str]) -> bool:
    """`pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason=...)`, or a list of marks holding
    one: pytest applies it to every test of the module (or class) it is written in."""
    if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)
            and stmt.targets[0].id == "pytestmark"):
        return False
    marks = stmt.value.elts if isinstance(stmt.value, (ast.List, ast.Tuple)) else [stmt.value]
    # (`pytestmark = pytest.mark.cuda`, a deselected marker, is an attribute, not a call)
    return any((isinstance(m, ast.Call) or isinstance(m, ast.Attribute) and m.attr + DESELECTED_SUFFIX in flags)
               and _cuda_decorator(m, flags) for m in marks)


def _skip_pytestmark(stmt: ast.stmt) -> bool:
    """`pytestmark = [pytest.mark.gpu, pytest.mark.skip(reason="...")]` (or the skip alone): every test of the module
    (or class) is skipped on any backend, as under `@pytest.mark.skip` (tq42: prime-rl's `test_afmoe.py`)."""
    if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)
            and stmt.targets[0].id == "pytestmark"):
        return False
    marks = stmt.value.elts if isinstance(stmt.value, (ast.List, ast.Tuple)) else [stmt.value]
    return any(_skip_decorator(m) for m in marks)


_SKIP_CALLS = frozenset({"pytest.skip", "self.skipTest", "skipTest", "pytest.exit", "sys.exit", "exit", "quit",
                         "unittest.skip"})


def _exits(stmt: ast.stmt) -> bool:
    """return / raise / continue / break, or a call that leaves the test (`pytest.skip(...)`, `self.skipTest`)."""
    return isinstance(stmt, _EXITS) or isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) and \
        _dotted(stmt.value.func) in _SKIP_CALLS


def _none_test(test: ast.expr) -> str | None:
    """The name `x` of `x is None` / `not x` / `x is None or ...`."""
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.Or):
        return next((n for n in map(_none_test, test.values) if n), None)
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not) and isinstance(test.operand, ast.Name):
        return test.operand.id
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Is) and \
            isinstance(test.left, ast.Name) and isinstance(test.comparators[0], ast.Constant) and \
            test.comparators[0].value is None:
        return test.left.id
    return None


def _stmt_region(first: ast.stmt, last: ast.stmt) -> Region:
    # a decorated first statement starts at its decorators (`@parametrize("config", _TEST_CONFIGS)` above a test)
    return lines_span(decorated_span(first)[0], last)


def _binds_with_fallback(stmt: ast.If) -> bool:
    """Whether the `if` body binds names to a "cuda" value and its `else` binds each of them to another value."""
    def bound(stmts: list[ast.stmt], cuda: bool) -> set[str]:
        return {t.id for s in stmts if isinstance(s, ast.Assign) and (not cuda or _cuda_strings(s.value))
                for t in s.targets if isinstance(t, ast.Name)}

    chosen = bound(stmt.body, True)
    return bool(chosen) and chosen <= bound(stmt.orelse, False) - bound(stmt.orelse, True)


# the last file's gates: (its tree, `extra`, the gates); the engine's gate pass (apply_gate_regions) and the file's
# caller facts (call_defaults._gated_sites) read the same tree's gates, built once
_LAST_GATES: list[tuple[ast.Module, frozenset[str], Gates]] = []


def build_gates(tree: ast.Module, extra: frozenset[str] | set[str] = frozenset()) -> Gates:
    """The CUDA gates of a file; `extra`: names bound by its imports of another module's gates (`module_gates`).
    Built once per tree and `extra` (for a tree not changed after its first read, like astnodes.module_nodes): the
    readers read the regions, `hows` and `guarded`, and only apply_gate_regions writes `gated_names`, which it
    computes afresh each time."""
    key = frozenset(extra)
    for last_tree, last_extra, gates in _LAST_GATES:
        if last_tree is tree and last_extra == key:
            return gates
    gates = _built_gates(tree, key)
    _LAST_GATES[:] = [(tree, key, gates)]
    return gates


def _built_gates(tree: ast.Module, extra: frozenset[str]) -> Gates:
    gates = Gates()
    flags = cuda_flags(tree, extra)
    providers = {f[:-3] for f in flags if f.endswith("()?")}
    requirers = _requirers(tree, flags)

    def add(region: Region, how: str) -> None:
        gates.regions.append(region)
        gates.hows.append(how)

    def gate_text(node: ast.expr) -> str:
        return ast.unparse(node)[:60]

    def body(stmts: list[ast.stmt], guarded: bool) -> None:
        if any(_cuda_pytestmark(s, flags) for s in stmts):
            # `pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), ...)`: every test of the module (or
            # class) is marked for CUDA; module-level code (imports, constants) still runs at collection
            for stmt in stmts:
                if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and stmt.body:
                    add(_stmt_region(stmt.body[0], stmt.body[-1]), _TEST_MARK)
        if any(_skip_pytestmark(s) for s in stmts):
            for stmt in stmts:      # (a skip mark applies to the module's tests, not to its module-level code)
                if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and stmt.body:
                    add(_stmt_region(stmt.body[0], stmt.body[-1]), _SKIP_MARK)
        for i, stmt in enumerate(stmts):
            if isinstance(stmt, (ast.Import, ast.ImportFrom)):
                imported(stmt, guarded)
                continue
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and stmt.body and any(
                    _skip_decorator(d) for d in stmt.decorator_list):
                add(_stmt_region(stmt.body[0], stmt.body[-1]), _SKIP_MARK)
                for d in stmt.decorator_list:
                    if not _skip_decorator(d):
                        add(node_span(d, open_end=True), _SKIP_MARK)      # `@parametrize("worker", [gpu_worker, ...])`
            elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and stmt.body and any(
                    _cuda_decorator(d, flags) for d in stmt.decorator_list):
                add(_stmt_region(stmt.body[0], stmt.body[-1]), _TEST_MARK)
                for d in stmt.decorator_list:
                    if not _cuda_decorator(d, flags):
                        # `@pytest.mark.parametrize("device", CUDA_DEVICES)` beside the CUDA mark: its values feed
                        # only the marked test (the mark itself is the gate, kept as it is; t11y)
                        add(node_span(d, open_end=True), _TEST_MARK)
            if requirers and isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) and \
                    _dotted(stmt.value.func) in requirers and i + 1 < len(stmts):
                # `_require_cuda_deepgemm(monkeypatch)`, whose first statement skips the test without CUDA
                # (like a test mark: the test's own dtype choices stay hints)
                add(_stmt_region(stmts[i + 1], stmts[-1]), f"after {_dotted(stmt.value.func)}(){_SKIPS_TEST}")
            if i + 1 < len(stmts) and (skipped := _skips_without_cuda_package(stmt)) is not None:
                # `te = pytest.importorskip("transformer_engine")`: the rest of the module (or test) is skipped where
                # the NVIDIA-only package is not installed, as on every Ascend host (tq40)
                add(_stmt_region(stmts[i + 1], stmts[-1]), f"after pytest.importorskip({skipped!r}){_SKIPS_TEST}")
            if isinstance(stmt, ast.Assert) and is_cuda_test(stmt.test, flags) and i + 1 < len(stmts):
                add(_stmt_region(stmts[i + 1], stmts[-1]), f"after assert {gate_text(stmt.test)}")
            if isinstance(stmt, (ast.For, ast.AsyncFor)) and stmt.body and _cuda_count_range(stmt.iter):
                add(_stmt_region(stmt.body[0], stmt.body[-1]), f"for ... in {gate_text(stmt.iter)}")
            if isinstance(stmt, ast.If) and stmt.body and _windows_test(stmt.test):
                add(_stmt_region(stmt.body[0], stmt.body[-1]), _WINDOWS)
            elif isinstance(stmt, ast.If):
                if stmt.body and is_cuda_test(stmt.test, flags):
                    # `if torch.cuda.is_available(): device = "cuda"` / `else: device = "cpu"`: the choice with its
                    # fallback, like `"cuda" if ... else "cpu"` (its uses are not the line to port; pd17, GPT-SoVITS)
                    fallback = " ... else" if _binds_with_fallback(stmt) else ""
                    add(_stmt_region(stmt.body[0], stmt.body[-1]), f"if {gate_text(stmt.test)}{fallback}")
                    if stmt.orelse and _exits(stmt.orelse[-1]) and i + 1 < len(stmts):
                        # `if torch.cuda.is_available(): device = "cuda"` / `else: return`: the rest of the block
                        # runs only with CUDA (grad-cam's memory test; tq44a)
                        add(_stmt_region(stmts[i + 1], stmts[-1]), f"after if {gate_text(stmt.test)} ... else: return")
                elif _negated_cuda_test(stmt.test, flags) or _too_few_cuda_devices(stmt.test, flags):
                    # (`if torch.cuda.device_count() < 2: return` in a test body; a skip decorator on the count
                    # keeps its own reading, tests/test_precision_mined.py)
                    if stmt.orelse:
                        add(_stmt_region(stmt.orelse[0], stmt.orelse[-1]), f"else of if {gate_text(stmt.test)}")
                    elif _exits(stmt.body[-1]) and i + 1 < len(stmts):
                        add(_stmt_region(stmts[i + 1], stmts[-1]), f"after if {gate_text(stmt.test)}: return")
                elif stmt.body and _exits(stmt.body[-1]) and not stmt.orelse and _flags_implying_cuda(stmt.test, flags):
                    # `if use_cuda and not torch.cuda.is_available(): pytest.skip(...)`: past it, `use_cuda` holds
                    # only where CUDA is present, so a later `if use_cuda:` block is CUDA's (nncf's tests, heldout18)
                    implied = _flags_implying_cuda(stmt.test, flags)
                    for later in (n for s in stmts[i + 1:] for n in walk_list(s)):
                        if isinstance(later, ast.If) and ast.dump(later.test) in implied and later.body:
                            add(_stmt_region(later.body[0], later.body[-1]),
                                f"if {gate_text(later.test)} (after its skip)")
                        elif isinstance(later, ast.IfExp) and ast.dump(later.test) in implied:
                            add(node_span(later.body, open_end=True), f"{gate_text(later.test)} ... else (after its skip)")
                elif providers and not stmt.orelse and _exits(stmt.body[-1]) and i + 1 < len(stmts) and \
                        _provided(stmts[:i], _none_test(stmt.test)):
                    # `m = real_qwen3_8b()` / `if m is None: raise Skip(...)`: None means no CUDA
                    add(_stmt_region(stmts[i + 1], stmts[-1]), f"after if {gate_text(stmt.test)}: skip")
            if isinstance(stmt, ast.Try):
                catches = any(_guards_imports(h) for h in stmt.handlers)     # (not one that only re-raises)
                body(stmt.body, guarded or catches)
                for h in stmt.handlers:
                    body(h.body, guarded)
                body(stmt.orelse, guarded)
                body(stmt.finalbody, guarded)
                continue
            # an import under an `if` is guarded like one under try/except ImportError; a def starts afresh
            inner = False if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) \
                else guarded or isinstance(stmt, ast.If) and not rank_test(stmt.test) \
                and not _lazy_import_test(stmt.test)    # (a rank check: t11r; `if 'dr' not in globals():` pd48)
            for name in ("body", "orelse", "finalbody"):
                sub = getattr(stmt, name, None)
                if isinstance(sub, list) and sub and isinstance(sub[0], ast.stmt):   # (an `else` after `if is_xpu:`
                    body(sub, guarded if name == "orelse" and isinstance(stmt, ast.If) and default_arm(stmt.test)
                         else inner)  # runs: pd34)
            for case in getattr(stmt, "cases", ()) or ():
                body(case.body, guarded)

    def _provided(before: list[ast.stmt], name: str | None) -> bool:
        """Whether the last binding of `name` in `before` is a call of a provider (`m = real_qwen3_8b()`,
        `model, tok = real_qwen3_8b(with_tokenizer=True)`)."""
        if name is None:
            return False
        for stmt in reversed(before):
            if isinstance(stmt, ast.Assign) and any(name in {n.id for n in walk_list(t) if isinstance(n, ast.Name)}
                                                    for t in stmt.targets):
                return isinstance(stmt.value, ast.Call) and _dotted(stmt.value.func) in providers
        return False

    unguarded: set[str] = set()
    guarded_quals: set[str] = set()
    local_names: dict[str, str] = {}        # qualified name -> the name a `from` import binds it to
    npu_bound: set[str] = set()             # names bound by an import from an NPU module

    def imported(stmt: ast.Import | ast.ImportFrom, guarded: bool) -> None:
        if isinstance(stmt, ast.ImportFrom) and stmt.module and _NPU_MODULE.search(stmt.module):
            npu_bound.update(a.asname or a.name for a in stmt.names)
        if isinstance(stmt, ast.ImportFrom) and stmt.module and not stmt.level:
            local_names.update((f"{stmt.module}.{a.name}", a.asname or a.name) for a in stmt.names)
        if isinstance(stmt, ast.ImportFrom):
            if stmt.level or not stmt.module:
                # `try: from .extensions.block_mc_cpp_cuda import f` / `except: pass` (DCVC): the own extension (t31b)
                quals = [q for a in stmt.names if a.name != "*" and stmt.module
                         and (q := relative_cuda_extension(stmt.module, a.name)) is not None]
                (guarded_quals if guarded else unguarded).update(quals)
                return
            quals = [f"{stmt.module}.{a.name}" for a in stmt.names if a.name != "*"]
        else:
            quals = [a.name if a.asname else a.name.split(".")[0] for a in stmt.names]
        # `if training_args.use_quantization_config: from transformers import BitsAndBytesConfig`: an opt-in, no guard
        (guarded_quals if guarded and stmt.lineno not in opted else unguarded).update(quals)

    opted = opted_in_import_lines(tree)
    body(tree.body, False)
    for fn, fixture in _cuda_fixture_requests(tree, flags, requirers):
        # `def test_x(fp32_enabled):` whose fixture chain reaches `distributed()`, which skips without CUDA
        add(_stmt_region(fn.body[0], fn.body[-1]), f"requesting the fixture {fixture}{_SKIPS_TEST}")
    for region, how in _cuda_passed_flag_branches(tree, flags):
        add(region, how)
    gates.regions, gates.hows = _sorted(gates.regions, gates.hows)
    gates.guarded = {q for q in guarded_quals if not any(u == q or q.startswith(u + ".") or u.startswith(q + ".")
                                                        for u in unguarded)}
    gates.npu_twins = {q for q in gates.guarded if local_names.get(q) in npu_bound}
    # `args.cuda = not args.no_cuda and torch.cuda.is_available()`: the expression that makes the option a flag reads
    # the user's option, not the flag; the probe in it stays the gate (tq44a)
    defining = {id(n.value) for n in _walk(tree) if isinstance(n, ast.Assign) and len(n.targets) == 1 and
                _option_attribute(n.targets[0]) in flags}
    for node in _walk(tree):
        if isinstance(node, ast.IfExp):
            if is_cuda_test(node.test, flags):
                add(node_span(node.body, open_end=True), f"{gate_text(node.test)} ... else")
            elif _negated_cuda_test(node.test, flags):
                add(node_span(node.orelse, open_end=True), f"else of {gate_text(node.test)}")
        elif isinstance(node, ast.BoolOp) and isinstance(node.op, ast.And) and id(node) not in defining:
            for j, value in enumerate(node.values[:-1]):
                if is_cuda_test(value, flags):
                    rest = node.values[j + 1]
                    add(node_span(rest, node, open_end=True),
                        f"after {gate_text(value)} and")
                    break
        elif isinstance(node, ast.BoolOp) and isinstance(node.op, ast.Or) and id(node) not in defining:
            # `if not current.is_cuda or not history.is_cuda: raise ...`: `or` evaluates the later operands only
            # when `not current.is_cuda` is False, i.e. on CUDA (tq53a, AReno's accel shims); the first test stays
            for j, value in enumerate(node.values[:-1]):
                if _negated_cuda_test(value, flags):
                    add(node_span(node.values[j + 1], node, open_end=True), f"after {gate_text(value)} or")
                    break
        elif isinstance(node, ast.Call) and node.args:
            # `torch.GradScaler("cuda", enabled=use_amp)` with `use_amp = ... and torch.cuda.is_available()`: off
            # on Ascend, where the disabled object does nothing (pd43, tabicl)
            enabled = next((kw.value for kw in node.keywords if kw.arg == "enabled"), None)
            if enabled is not None and is_cuda_test(enabled, flags):
                add(node_span(node.args[0], node.args[-1]), f"enabled={gate_text(enabled)}")
        if isinstance(node, ast.Call) and _spawner(node.func):
            # `spawn_multiprocess_job(size=torch.cuda.device_count(), job=partial(_test_x, ...), backend="nccl")`,
            # `mp.spawn(worker, nprocs=torch.cuda.device_count())`: on Ascend the count is 0 and no process starts,
            # so the job and the backend it names run only with CUDA devices; the count stays the finding (tq40,
            # TensorRT-Model-Optimizer's tests/gpu, the spawned-behind-a-count reading of t33d)
            count = next((kw for kw in node.keywords if kw.arg in _PROCESS_COUNTS and _cuda_count(kw.value, flags)),
                         None)
            if count is not None:
                for arg in [*node.args, *(kw.value for kw in node.keywords if kw is not count)]:
                    add(node_span(arg, open_end=True), f"{count.arg}={gate_text(count.value)}")
        if isinstance(node, ast.Call) and not node.args:
            # `autocast(device_type="cuda", enabled=use_amp)`: the keyword spelling of the same (pd50, ultimate-rvc)
            keywords = {kw.arg: kw.value for kw in node.keywords}
            enabled, named = keywords.get("enabled"), keywords.get("device_type")
            if enabled is not None and named is not None and is_cuda_test(enabled, flags):
                add(node_span(named), f"enabled={gate_text(enabled)}")
        if isinstance(node, ast.Call) and _dotted(node.func).endswith(_CUDA_AMP_CALLEES):
            # `torch.cuda.amp.autocast(enabled=self.device.type == 'cuda')`: the CUDA spelling itself is switched off
            # where CUDA is absent, and a disabled autocast / scaler does nothing (tq48a, OpenOCR's eval loop)
            enabled = next((kw.value for kw in node.keywords if kw.arg == "enabled"), None)
            if enabled is not None and is_cuda_test(enabled, flags):
                add(node_span(node.func), f"enabled={gate_text(enabled)}")
        if isinstance(node, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)) and \
                _cuda_count_range(node.generators[0].iter):
            # `[torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())]`: no element on Ascend
            first, last = (node.key, node.value) if isinstance(node, ast.DictComp) else (node.elt, node.elt)
            add(node_span(first, last), f"for ... in {gate_text(node.generators[0].iter)}")
    return gates


# the CUDA spellings of AMP's context and scaler, which take `enabled=` (torch.cuda.amp, deprecated but kept in torch 2)
_CUDA_AMP_CALLEES = ("cuda.amp.autocast", "cuda.amp.GradScaler")


# keywords of a process launcher that give the number of processes (torch.multiprocessing.spawn's `nprocs`,
# https://pytorch.org/docs/stable/multiprocessing.html#spawning-subprocesses; a test helper's `size` / `world_size`)
_PROCESS_COUNTS = frozenset({"nprocs", "size", "world_size", "num_processes"})


def _called_name(func: ast.expr) -> str | None:
    """The function or method a call reaches: `f(...)`, `obj.f(...)`, and Ray's `actor.f.remote(...)` (an actor
    method called through its handle, https://docs.ray.io/en/latest/ray-core/actors.html)."""
    if isinstance(func, ast.Attribute) and func.attr == "remote" and isinstance(func.value, ast.Attribute):
        return func.value.attr
    return func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None


def _cuda_passed_flag_branches(tree: ast.Module, flags: set[str]) -> list[tuple[Region, str]]:
    """The `if <param>:` bodies of a function (defined once in the module) whose every call there passes the
    parameter a CUDA test, or a local bound only to one (`move_to_gpu = self.device == "gpu" and not self.use_gdr`
    ... `self.reader.get_data.remote(..., move_to_gpu=move_to_gpu)`, whose `if move_to_gpu: ...
    torch.cuda.synchronize()` runs only where the user chose the GPU; tq54c, TransferQueue's perftest): the flag is
    handed on from the probe, and the body is what a gate makes of it."""
    defs: dict[str, list[ast.FunctionDef | ast.AsyncFunctionDef]] = {}
    for fn in _walk(tree):
        if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            defs.setdefault(fn.name, []).append(fn)
    calls: dict[str, list[tuple[ast.Call, ast.AST | None]]] = {}
    for outer in [tree, *(f for fs in defs.values() for f in fs)]:
        for node in own_scope_nodes(outer):
            if isinstance(node, ast.Call) and (name := _called_name(node.func)) in defs:
                calls.setdefault(name, []).append((node, None if outer is tree else outer))
    out: list[tuple[Region, str]] = []
    for name, found in calls.items():
        if len(defs[name]) != 1:
            continue
        fn = defs[name][0]
        params = [a.arg for a in fn.args.posonlyargs + fn.args.args]
        offset = 1 if params and params[0] in ("self", "cls") else 0
        for i, param in enumerate(params[offset:]):
            passed = [c.args[i] if i < len(c.args) and not any(isinstance(a, ast.Starred) for a in c.args[:i + 1])
                      else next((k.value for k in c.keywords if k.arg == param), None) for c, _ in found]
            if not all(v is not None and _cuda_value(v, scope, flags) for v, (_, scope) in zip(passed, found)):
                continue
            for node in own_scope_nodes(fn):
                if isinstance(node, ast.If) and node.body and (
                        isinstance(node.test, ast.Name) and node.test.id == param or
                        isinstance(node.test, ast.BoolOp) and isinstance(node.test.op, ast.And) and any(
                            isinstance(v, ast.Name) and v.id == param for v in node.test.values)):
                    shown = ast.unparse(passed[0])[:40] if passed[0] is not None else param
                    out.append((_stmt_region(node.body[0], node.body[-1]),
                                f"if {param}: every call in this file passes it a CUDA test, {shown}"))
    return out


def _cuda_value(value: ast.AST, scope: ast.AST | None, flags: set[str]) -> bool:
    """A CUDA test, or a name its function binds only to CUDA tests (and never takes as a parameter)."""
    if is_cuda_test(value, flags):
        return True
    if not (isinstance(value, ast.Name) and scope is not None):
        return False
    nodes = own_scope_nodes(scope)
    if any(isinstance(n, ast.arg) and n.arg == value.id for n in nodes):
        return False
    bound = [n for n in nodes if isinstance(n, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.For, ast.With,
                                                ast.NamedExpr)) and any(
        isinstance(t, ast.Name) and t.id == value.id
        for tgt in (n.targets if isinstance(n, ast.Assign) else [getattr(n, "target", None)]) if tgt is not None
        for t in walk_list(tgt))]
    return bool(bound) and all(isinstance(n, ast.Assign) and len(n.targets) == 1 and
                               isinstance(n.targets[0], ast.Name) and is_cuda_test(n.value, flags) for n in bound)


def _spawner(func: ast.expr) -> bool:
    """`mp.spawn`, `torch.multiprocessing.start_processes`, a project's `spawn_multiprocess_job`: a call that starts
    one process per count."""
    name = _dotted(func).rsplit(".", 1)[-1]
    return "spawn" in name.lower() or name == "start_processes"


# packages built only for NVIDIA GPUs whose absence a test skips on: the finders' list above, and NVIDIA's Transformer
# Engine ("accelerating Transformer models on NVIDIA GPUs", https://github.com/NVIDIA/TransformerEngine) and
# TensorRT-LLM (https://nvidia.github.io/TensorRT-LLM/)
_SKIPPED_WITHOUT = _CUDA_ONLY_PACKAGES | {"transformer_engine", "tensorrt_llm"}


def _skips_without_cuda_package(stmt: ast.stmt) -> str | None:
    """The package of `pytest.importorskip("transformer_engine")` (a statement, or its result bound to a name) when
    it is built only for NVIDIA GPUs (https://docs.pytest.org/en/stable/reference/reference.html#pytest-importorskip)."""
    call = stmt.value if isinstance(stmt, (ast.Expr, ast.Assign)) else None
    if not (isinstance(call, ast.Call) and _dotted(call.func) in ("pytest.importorskip", "importorskip")
            and call.args and isinstance(call.args[0], ast.Constant) and isinstance(call.args[0].value, str)):
        return None
    package = call.args[0].value
    return package if package.split(".", 1)[0] in _SKIPPED_WITHOUT else None


def _cuda_count_range(node: ast.AST) -> bool:
    """`range(torch.cuda.device_count())`: a loop over it runs no step on Ascend, where the count is 0 (pd50); so
    does `range(1, torch.cuda.device_count())` (ComfyUI_ExtraModels' extra-GPU offload choices; pd56), from any
    constant start that is not negative."""
    if not (isinstance(node, ast.Call) and _dotted(node.func) == "range" and len(node.args) in (1, 2)):
        return False
    start, stop = node.args if len(node.args) == 2 else (ast.Constant(0), node.args[0])
    return isinstance(start, ast.Constant) and type(start.value) is int and start.value >= 0 and \
        isinstance(stop, ast.Call) and _dotted(stop.func).endswith("cuda.device_count")


def _cuda_strings(node: ast.AST) -> list[ast.Constant]:
    """The strings naming a CUDA device or the NCCL backend (`"cuda:0"`, `"cpu:gloo,cuda:nccl"`: tq44b)."""
    return [n for n in walk_list(node) if isinstance(n, ast.Constant) and isinstance(n.value, str)
            and (n.value.lower().startswith("cuda") or _NCCL_WORD.search(n.value) is not None)]


_NCCL_WORD = re.compile(r"(?i)(?:^|[,:])nccl$|^nccl(?:$|,)")


def _with_lambda_reads(nodes: list[ast.AST]) -> list[ast.AST]:
    """The nodes of a scope and the reads inside its lambdas (`lambda: torch.ones([]).to(torch.device(device))` reads
    the enclosing function's `device`), a lambda's own parameters aside."""
    out = list(nodes)
    for lam in nodes:
        if isinstance(lam, ast.Lambda):
            own = {a.arg for a in walk_list(lam.args) if isinstance(a, ast.arg)}
            out.extend(n for n in walk_list(lam.body) if not (isinstance(n, ast.Name) and n.id in own))
    return out


def _parameter_defaults(args: ast.arguments) -> list[tuple[ast.arg, ast.expr | None]]:
    """(parameter, its default or None) of a function's parameters, `*args` / `**kwargs` without a default."""
    positional = args.posonlyargs + args.args
    pairs: list[tuple[ast.arg, ast.expr | None]] = [
        (a, None) for a in positional[:len(positional) - len(args.defaults)]]
    pairs += list(zip(positional[len(positional) - len(args.defaults):], args.defaults))
    pairs += list(zip(args.kwonlyargs, args.kw_defaults))
    pairs += [(a, None) for a in (args.vararg, args.kwarg) if a is not None]
    return pairs


def _gated_names(tree: ast.Module, gates: Gates) -> dict[tuple[int, int], str]:
    """Uses of a name whose every assignment of a "cuda" value in its scope sits behind a CUDA gate (`if use_cuda:
    device_name = f"cuda:{rank}"` ... `create_device(device_name)`): {(line, col) of the use: how it is gated}.
    A local name is read in its function; `self.x` across the file."""
    def binds_of(nodes: list[ast.AST]) -> tuple[dict[str, list[str | None]], set[str]]:
        cuda: dict[str, list[str | None]] = {}
        assigned: set[str] = set()
        for node in nodes:
            if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                strings = _cuda_strings(node.value)
                for t in targets:
                    name = _flag_name(t)
                    if name is None:
                        continue
                    assigned.add(name)
                    if strings:
                        cuda.setdefault(name, []).extend(gates.gate_of(c.lineno, c.col_offset) for c in strings)
        return cuda, assigned

    scopes = [tree] + [n for n in _walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    per_scope = [(scope, _with_lambda_reads(list(scope_nodes(scope)))) for scope in scopes]
    module_cuda, _ = binds_of(per_scope[0][1])
    attrs: dict[str, list[str | None]] = {}          # `self.device = "cuda:0"` anywhere in the file
    scoped = []
    for scope, nodes in per_scope:
        cuda, assigned = binds_of(nodes)
        if isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef)):
            # a parameter holds what callers pass: a CUDA default (`device='cuda'`) is not gated; a caller's own
            # "cuda" is that call's finding, so `device=None` then `device = "cuda" if torch.cuda.is_available()
            # else "cpu"` reaches the uses only through the gated arm (t16e, PuLID's EVA-CLIP loader)
            for a, default in _parameter_defaults(scope.args):
                assigned.add(a.arg)
                if default is None or _cuda_strings(default):
                    cuda.setdefault(a.arg, []).append(None)
        for name, hows in cuda.items():
            if name.startswith("self."):
                attrs.setdefault(name, []).extend(hows)
        scoped.append((nodes, cuda, assigned))
    out: dict[tuple[int, int], str] = {}
    for nodes, cuda, assigned in scoped:
        for node in nodes:
            if not isinstance(node, (ast.Name, ast.Attribute)) or not isinstance(node.ctx, ast.Load):
                continue
            flag = _flag_name(node)
            if flag is None:
                continue
            reached = attrs.get(flag) if flag.startswith("self.") else cuda.get(flag) if flag in assigned \
                else module_cuda.get(flag)
            if reached and all(reached):
                out[(node.lineno, node.col_offset)] = f"{reached[0]}, through {flag}"
    return out


_TRITON_HELPERS = frozenset({"cdiv", "next_power_of_2"})
_TRITON_HELPER_NOTE = "this file uses Triton only for host integer helpers (triton.cdiv / triton.next_power_of_2), " \
                      "no kernel: nothing to re-validate; triton-ascend provides them, or use integer arithmetic"


def triton_helpers_only(tree: ast.Module) -> bool:
    """Whether the file imports Triton only to call its host integer helpers (`triton.cdiv(n, block)` when
    splitting a batch), with no kernel, no triton.language and no other Triton name."""
    names: set[str] = set()
    for node in _walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name == "triton":
                    names.add(a.asname or "triton")
                elif a.name.split(".")[0] == "triton":
                    return False                    # `import triton.language as tl`
        elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "triton" and not node.level:
            if node.module != "triton" or any(a.name not in _TRITON_HELPERS for a in node.names):
                return False
            names.update(a.asname or a.name for a in node.names if a.asname)
    if not names:
        return False
    helper_of: set[int] = set()       # the `triton` of `triton.cdiv`
    for node in _walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in names:
            if node.attr not in _TRITON_HELPERS:
                return False
            helper_of.add(id(node.value))
    # any other use of the module (`triton.Config`, passed on as a value) is more than a helper
    return not any(isinstance(n, ast.Name) and n.id in names and id(n) not in helper_of for n in _walk(tree))


def _triton_helper_findings(findings: list, tree: ast.Module) -> list:
    """Triton findings of a file that uses Triton only for host helpers: info, with why."""
    if not any(f.category == "kernel" and (f.symbol or "").split(".")[0] == "triton" and f.severity != "info"
               for f in findings) or not triton_helpers_only(tree):
        return findings
    return [as_info(f, "triton-host-helper", _TRITON_HELPER_NOTE)
            if f.category == "kernel" and (f.symbol or "").split(".")[0] == "triton" and not f.data.get("context")
            else f for f in findings]


def _asserted_not(tree: ast.Module) -> list[Region]:
    """The right-hand sides of `assert x != Backend.NCCL` / `is not` / `not in`: an assertion that a value is not
    the CUDA one holds on Ascend as written."""
    out = []
    for node in _walk(tree):
        if isinstance(node, ast.Assert) and isinstance(node.test, ast.Compare) and len(node.test.ops) == 1 and \
                isinstance(node.test.ops[0], (ast.NotEq, ast.IsNot, ast.NotIn)):
            out.append(node_span(node.test.comparators[0], open_end=True))
    return out


_ASSERTED_NOT_NOTE = "asserted not to be the value: the assertion holds on Ascend as written; add the HCCL / NPU " \
                     "value beside it where the code excludes NCCL for a reason that holds for HCCL too"


_ABSTRACTION_CALL = re.compile(r"(?i)device|accelerator|platform|backend")
_FALLBACK_NOTE = "the fallback of a platform abstraction ({call} or ...), used only when it finds no accelerator " \
                 "of its own: on Ascend the abstraction answers; left as is"


def _abstraction_fallbacks(tree: ast.Module) -> list[tuple[Region, str]]:
    """`get_available_device_env_name() or "CUDA_VISIBLE_DEVICES"`, `get_accelerator_name() or "cuda"`: a CUDA
    literal as the last operand of an `or` whose earlier operand asks a platform abstraction."""
    out = []
    for node in _walk(tree):
        if isinstance(node, ast.BoolOp) and isinstance(node.op, ast.Or):
            last = node.values[-1]
            calls = [_dotted(v.func) for v in node.values[:-1] if isinstance(v, ast.Call)]
            if isinstance(last, ast.Constant) and isinstance(last.value, str) and "cuda" in last.value.lower() and \
                    any(_ABSTRACTION_CALL.search(c) for c in calls):
                out.append((node_span(last, open_end=True), calls[0] + "()"))
    return out


def _lower_abstraction_fallbacks(findings: list, tree: ast.Module) -> list:
    regions = _abstraction_fallbacks(tree) if any(f.severity != "info" for f in findings) else []
    if not regions:
        return findings
    out = []
    for f in findings:
        call = _held_by(regions, f)
        out.append(as_info(f, "npu-path", _FALLBACK_NOTE.format(call=call)) if call and not f.data.get("context")
                   else f)
    return out


def _lower_asserted_not(findings: list, tree: ast.Module) -> list:
    """`assert dist.get_backend(group) != dist.Backend.NCCL`: info (the recall labels keep the line, since some
    such checks must name HCCL too)."""
    regions = _asserted_not(tree) if any(f.category in ("device", "distributed") and f.severity != "info"
                                         for f in findings) else []
    if not regions:
        return findings
    return [as_info(f, "asserted-not", _ASSERTED_NOT_NOTE) if f.category in ("device", "distributed") and
            not f.data.get("context") and starts_in(f, regions)
            else f for f in findings]


_FALLBACK_GATE_NOTE = "a gate that raises into a handler which falls back (`except {caught}:` without a re-raise): " \
    "on Ascend the fallback runs, slower or different; port the gate to use the fast path there"


def _fallback_gates(tree: ast.Module) -> list[tuple[Region, str]]:
    """The tests of `if not (TRITON_AVAILABLE and is_cuda_available): raise ImportError(...)` inside a `try` whose
    handler catches that exception and does not re-raise (it warns and falls back to a portable path): the code
    runs on Ascend as written, the other path (t11r)."""
    out = []
    for node in _walk(tree):
        if not isinstance(node, ast.Try):
            continue
        caught = caught_without_reraise(node)
        if not caught:
            continue
        for stmt in node.body:
            if isinstance(stmt, ast.If) and len(stmt.body) == 1 and isinstance(stmt.body[0], ast.Raise) and \
                    stmt.body[0].exc is not None:
                exc = stmt.body[0].exc
                name = _dotted(exc.func if isinstance(exc, ast.Call) else exc).rsplit(".", 1)[-1]
                if name in caught or "Exception" in caught and name.endswith(("Error", "Exception")):
                    out.append((node_span(stmt.test, open_end=True), name))
    return out


def caught_without_reraise(node: ast.Try) -> set[str]:
    """The last names of the exceptions a try's handlers catch without re-raising (`Exception` for a bare
    `except:`)."""
    caught: set[str] = set()
    for h in node.handlers:
        names = h.type.elts if isinstance(h.type, ast.Tuple) else [h.type] if h.type is not None else []
        if any(isinstance(n, ast.Raise) for n in walk_list(h)):
            continue
        caught |= {_dotted(n).rsplit(".", 1)[-1] for n in names} if names else {"Exception"}
    return caught


_RETRY_NOTE = "an attempt whose handler runs {call}(...) again without it (`except` without a re-raise): on Ascend " \
              "the retry runs, only slower or on another device; port the attempt to use the fast path there"
_REBOUND_NOTE = "an attempt whose handler binds `{name}` to a fallback (an `except` that catches any error, without " \
                "a re-raise): on Ascend the attempt fails and the code runs on with the fallback, only slower or on " \
                "another device; port the attempt to use the NPU there"


def _chain_root(node: ast.expr | None) -> str:
    """The dotted name of the first call of a call chain (`ffmpeg.input` of `ffmpeg.input(x).output(y).run()`),
    '' for a value that is no call or whose first call has no plain name."""
    root = ""
    while isinstance(node, (ast.Call, ast.Attribute, ast.Await)):
        if isinstance(node, ast.Call):
            root = _dotted(node.func)
            node = node.func
        else:
            node = node.value
    return root if root and "(" not in root else ""


def _statement_call(stmt: ast.stmt) -> str:
    value = stmt.value if isinstance(stmt, (ast.Expr, ast.Assign, ast.AnnAssign, ast.Return)) else None
    return _chain_root(value)


def _retried_attempts(tree: ast.Module, findings: list) -> list[tuple[Region, str]]:
    """The statements of a `try` body that a handler (catching without a re-raise) runs again by the same first call
    (MedSAM2's `try: ffmpeg.input(video, hwaccel='cuda').output(...).run()` / `except: ffmpeg.input(video).output(
    ...).run()`; an ONNX Runtime session made with the CUDA provider, then without it): the CUDA option is an attempt
    with a fallback, which runs on Ascend (t33d, dev31). Messages and logs are no retry, nor is a retry that is CUDA's
    too (a device error of `findings` in it: `except RuntimeError: torch.cuda.set_device(0)`)."""
    cuda_lines = {f.line for f in findings if f.severity == "error" and f.category == "device"}
    out = []
    for node in _walk(tree):
        if not isinstance(node, ast.Try) or not caught_without_reraise(node):
            continue
        retried = {_statement_call(s) for h in node.handlers if not any(isinstance(n, ast.Raise) for n in walk_list(h))
                   for s in h.body if not cuda_lines & set(range(s.lineno, (s.end_lineno or s.lineno) + 1))} - {""}
        # (a handler that binds the attempt's name to a fallback, bioemu's `platform =
        # mm.Platform.getPlatformByName("CUDA")` / `except Exception: platform = None`, runs on without CUDA too; tq51a.
        # Only one that catches what the attempt raises there: torch built without CUDA, as on Ascend, raises
        # AssertionError("Torch not compiled with CUDA enabled") from `.cuda()`, which `except RuntimeError` misses)
        rebound = {t.id for h in node.handlers if not any(isinstance(n, ast.Raise) for n in walk_list(h))
                   and _catches_any(h) for s in h.body if isinstance(s, ast.Assign)
                   for t in s.targets if isinstance(t, ast.Name)}
        for stmt in node.body:
            call = _statement_call(stmt)
            if call in retried and call.rsplit(".", 1)[-1] not in MESSAGE_CALLS:
                out.append((node_span(stmt, open_end=True), _RETRY_NOTE.format(call=call)))
            elif call and call not in _PROBES and isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and \
                    isinstance(stmt.targets[0], ast.Name) and stmt.targets[0].id in rebound:
                # (a presence probe returns False without CUDA, never raises: the handler's fallback never runs
                # and the probe stays the error; test_precision_t17f)
                out.append((node_span(stmt, open_end=True), _REBOUND_NOTE.format(name=stmt.targets[0].id)))
    return out


# what an attempt raises on a torch built without CUDA (AssertionError), caught by these or a bare `except:`
_BROAD_CATCHES = frozenset({"Exception", "BaseException", "AssertionError"})


def _catches_any(handler: ast.ExceptHandler) -> bool:
    """Whether an `except` clause catches the error a CUDA call raises where CUDA is absent."""
    names = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type] if handler.type else []
    return not names or any(_dotted(n).rsplit(".", 1)[-1] in _BROAD_CATCHES for n in names)


# torch.cuda's cache housekeeping: frees or resets memory bookkeeping, computes nothing
_HOUSEKEEPING = frozenset({"torch.cuda.empty_cache", "torch.cuda.ipc_collect", "torch.cuda.reset_peak_memory_stats",
                           "torch.cuda.reset_max_memory_allocated", "torch.cuda.reset_accumulated_memory_stats"})
_CAUGHT_NOTE = "cache housekeeping inside a `try` whose handler swallows any error: it cannot fail the code on " \
               "Ascend, where the NPU's cache is left as it is; empty it with torch.npu there"


def _caught_housekeeping(tree: ast.Module) -> list[tuple[Region, str]]:
    """The body of a `try` whose handlers catch everything without re-raising (`try: gc.collect();
    torch.cuda.empty_cache() / except: print("Unable to clear cache")`, a ComfyUI unload node; tq44a) and that holds
    only housekeeping: a `try` around a request's whole work (aibrix's ViPE worker profiling a request) abandons that
    work when the call raises, so the call fails the request there (tq46b)."""
    return [(node_span(stmt, open_end=True), "try") for node in _walk(tree) if isinstance(node, ast.Try) and
            "Exception" in caught_without_reraise(node) and all(_housekeeping_only(s) for s in node.body)
            for stmt in node.body]


def _housekeeping_only(stmt: ast.stmt) -> bool:
    """A statement that only frees memory or tells about it: a cache call (`_HOUSEKEEPING`), `gc.collect()`, a message."""
    call = _statement_call(stmt) if isinstance(stmt, ast.Expr) else ""
    return call in _HOUSEKEEPING or call == "gc.collect" or call.rsplit(".", 1)[-1] in MESSAGE_CALLS


def _lower_fallback_gates(findings: list, tree: ast.Module) -> list:
    """Device errors in a gate that raises into a falling-back handler (`_fallback_gates`) or in an attempt that a
    handler runs again without CUDA (`_retried_attempts`): warnings."""
    if not any(f.severity == "error" and f.category == "device" for f in findings):
        return findings
    gates, retries = _fallback_gates(tree), _retried_attempts(tree, findings)
    kept = _caught_housekeeping(tree) if any(f.symbol in _HOUSEKEEPING for f in findings) else []
    if not gates and not retries and not kept:
        return findings
    out = []
    for f in findings:
        if f.severity == "error" and f.category == "device" and f.symbol in _HOUSEKEEPING and \
                not f.data.get("context") and _held_by(kept, f) is not None:
            f = as_info(f, "caught-housekeeping", _CAUGHT_NOTE, "warning")
        elif f.severity == "error" and f.category == "device":
            caught = _held_by(gates, f)
            note = _held_by(retries, f) if caught is None and not f.data.get("context") else None
            if caught is not None:
                f = as_info(f, "fallback-gate", _FALLBACK_GATE_NOTE.format(caught=caught), "warning")
            elif note is not None:
                f = as_info(f, "retried-attempt", note, "warning")
        out.append(f)
    return out


# libraries that run only on NVIDIA GPUs, as a refusal's message names them
_CUDA_ONLY_LIBRARY = re.compile(r"(?i)\b(?:xformers|flash[_-]attn|bitsandbytes|apex|transformer[_ ]engine|tensorrt|"
                                r"cupy|pycuda|flashinfer|deep_gemm)\b")
_REFUSAL_NOTE = "a CUDA check that refuses {library}, which runs only on NVIDIA GPUs: on Ascend it refuses as it " \
                "should; port the library's use, not this check"


def _library_refusals(tree: ast.Module) -> list[tuple[Region, str]]:
    """The tests of `if not torch.cuda.is_available(): raise ValueError("xformers' memory efficient attention is only
    available for GPU")` (also as an `elif`, diffusers' `set_use_memory_efficient_attention_xformers` and its many
    copies): a check whose only statement raises an error naming a CUDA-only library refuses that library, which is
    right on Ascend too (t16b, heldout19 Allegro)."""
    flags = cuda_flags(tree)
    out = []
    for node in _walk(tree):
        if not isinstance(node, ast.If) or len(node.body) != 1 or not isinstance(node.body[0], ast.Raise) or \
                node.body[0].exc is None or not _negated_cuda_test(node.test, flags):
            continue
        text = " ".join(c.value for c in walk_list(node.body[0].exc)
                        if isinstance(c, ast.Constant) and isinstance(c.value, str))
        m = _CUDA_ONLY_LIBRARY.search(text)
        if m is not None:
            out.append((node_span(node.test, open_end=True), m.group(0)))
    return out + _probe_refusals(tree, flags)


def _probe_refusals(tree: ast.Module, flags) -> list[tuple[Region, str]]:
    """The tests of `if not torch.cuda.is_available(): return False` in an availability probe named for a CUDA-only
    library (transformers' `is_flash_attn_2_available`, copied into LLaMA-MoE's Mistral model; tq46b): on Ascend the
    probe answers False and the caller takes its path without the library, as it should."""
    out = []
    for fn in _walk(tree):
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) or not fn.name.startswith("is_") \
                or not fn.name.endswith("available"):
            continue
        m = _CUDA_ONLY_LIBRARY.search(fn.name.replace("_", "-"))
        if m is None:
            continue
        for node in walk_list(fn):
            if isinstance(node, ast.If) and len(node.body) == 1 and isinstance(node.body[0], ast.Return) \
                    and isinstance(node.body[0].value, ast.Constant) and node.body[0].value.value is False \
                    and _negated_cuda_test(node.test, flags):
                out.append((node_span(node.test, open_end=True), m.group(0).replace("-", "_")))
    return out


def _lower_library_refusals(findings: list, tree: ast.Module) -> list:
    if not any(f.category == "device" and f.severity != "info" and not f.data.get("context") for f in findings):
        return findings
    regions = _library_refusals(tree)
    if not regions:
        return findings
    out = []
    for f in findings:
        library = _held_by(regions, f) if f.category == "device" and not f.data.get("context") else None
        out.append(as_info(f, "library-refusal", _REFUSAL_NOTE.format(library=library)) if library else f)
    return out


_PRECONDITION_NOTE = "a CUDA-tensor check in front of a Triton kernel launch ({kernel}): it changes with the " \
                     "kernel when that is brought to Triton-Ascend"
_HELPER_REFUSAL_NOTE = "a CUDA-tensor check that only callers loading {library} first reach: on Ascend the " \
                       "library is what fails and is ported; this check refuses as it should"


def _tensor_checks(fn: ast.AST) -> list[ast.Assert | ast.If]:
    """`assert q.is_cuda` and `if not t.is_cuda: raise ...` in a function: preconditions on its inputs."""
    return [n for n in walk_list(fn) if isinstance(n, (ast.Assert, ast.If)) and _reads_is_cuda(n.test) and (
        isinstance(n, ast.Assert) or len(n.body) == 1 and isinstance(n.body[0], ast.Raise))]


def _reads_is_cuda(test: ast.AST) -> bool:
    return any(isinstance(n, ast.Attribute) and n.attr == "is_cuda" for n in walk_list(test))


def _triton_kernels(tree: ast.Module) -> set[str]:
    """Functions of the file decorated `@triton.jit` / `@triton.autotune(...)` / `@triton.heuristics(...)`."""
    return {fn.name for fn in _walk(tree) if isinstance(fn, ast.FunctionDef) and any(
        (ast_dotted(d.func if isinstance(d, ast.Call) else d) or "").startswith("triton.") for d in fn.decorator_list)}


# a module named for a CUDA-only library, or one of its parts copied into a tree (`flash_attn_triton`)
_CUDA_ONLY_MODULE = re.compile(r"(?i)(xformers|flash_attn|bitsandbytes|apex|transformer_engine|tensorrt|cupy|pycuda|"
                               r"flashinfer|deep_gemm)(?:_\w+)?$")


def _library_loads(fn: ast.AST, before: int) -> str | None:
    """The CUDA-only library (`flash_attn`, a `.flash_attn_triton` module) a function imports above line `before`."""
    for n in walk_list(fn):
        if isinstance(n, (ast.Import, ast.ImportFrom)) and n.lineno < before:
            names = [n.module or ""] if isinstance(n, ast.ImportFrom) else [a.name for a in n.names]
            m = next((m for name in names for m in map(_CUDA_ONLY_MODULE.match, name.split(".")) if m), None)
            if m is not None:
                return m.group(1)
    return None


def _lower_kernel_preconditions(findings: list, tree: ast.Module) -> list:
    """CUDA-tensor checks in front of kernels that need CUDA anyway (tq52a, heldout66's MPT attention copy): in a
    function that launches a Triton kernel of the file (`_bwd_kernel[grid](...)` after `assert bias.is_cuda`) the
    check is part of that kernel's port (warning, as the kernel: policy (b)); in a helper that every caller in the
    file reaches only after importing a CUDA-only library (MPT's `check_valid_inputs`, called by `flash_attn_fn`
    after `from flash_attn import ...` and by `triton_flash_attn_fn` after `from .flash_attn_triton import ...`)
    it refuses as a library refusal does (info). Control: a check in a function that launches nothing, or a helper
    some caller reaches without such an import, keeps its finding."""
    if not any(f.code == "NPU005" and f.severity == "error" and not f.data.get("context") for f in findings):
        return findings
    kernels = _triton_kernels(tree)
    functions = [fn for fn in _walk(tree) if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef))]
    regions: list[tuple[Region, tuple[str, str, str]]] = []
    for fn in functions:
        checks = _tensor_checks(fn)
        if not checks:
            continue
        launch = next((c.func.value.id for c in walk_list(fn) if isinstance(c, ast.Call) and isinstance(
            c.func, ast.Subscript) and isinstance(c.func.value, ast.Name) and c.func.value.id in kernels), None)
        if launch is not None:
            why = ("triton-precondition", _PRECONDITION_NOTE.format(kernel=launch), "warning")
        else:
            callers = [(g, c) for g in functions for c in walk_list(g) if isinstance(c, ast.Call)
                       and isinstance(c.func, ast.Name) and c.func.id == fn.name and g is not fn]
            libraries = [_library_loads(g, c.lineno) for g, c in callers]
            if not libraries or None in libraries:
                continue
            why = ("library-refusal", _HELPER_REFUSAL_NOTE.format(library=" / ".join(sorted(set(map(str, libraries))))),
                   "info")
        regions.extend((node_span(c, open_end=True), why) for c in checks)
    if not regions:
        return findings
    out = []
    for f in findings:
        held = _held_by(regions, f) if f.code == "NPU005" and f.severity == "error" and not f.data.get("context") \
            else None
        out.append(as_info(f, held[0], held[1], held[2]) if held else f)
    return out


_REPORT_NOTE = "in {name}(), which builds an environment report: the CUDA checks and probes there only choose " \
               "the report's lines; nothing runs differently on Ascend"


_REPORT_NAME = re.compile(r"(?i)env|info|sys|version|report|diag|platform")


def _report_row(node: ast.AST) -> bool:
    """`data.append(("CUDA_HOME", str(CUDA_HOME) + msg))`, `data.append(("GPU " + ids, name))`: a (label, value)
    row appended to a list."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "append" and
            len(node.args) == 1 and isinstance(node.args[0], ast.Tuple) and len(node.args[0].elts) == 2):
        return False
    label = node.args[0].elts[0]
    label = label.left if isinstance(label, ast.BinOp) and isinstance(label.op, ast.Add) else label
    return isinstance(label, ast.Constant) and isinstance(label.value, str)


def _environment_reports(tree: ast.Module) -> list[tuple[Region, str]]:
    """Functions that build an environment report (detectron2's `collect_env_info` and its copies, deepdoctection's
    `pt_info`): named for what it reports (`_REPORT_NAME`), at least 5 (label, value) rows appended to one list, and no
    call that moves or sets up anything (`.to()`, `.cuda()`, `set_device`, `init_process_group`, `load_state_dict`).
    The name keeps out a model's `layers.append(("conv1", nn.Conv2d(...)))`."""
    out = []
    for fn in _walk(tree):
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) or not _REPORT_NAME.search(fn.name):
            continue
        nodes = walk_list(fn)
        rows = [n for n in nodes if isinstance(n, ast.Call) and _report_row(n)]
        lists = {_dotted(n.func.value) for n in rows if isinstance(n.func, ast.Attribute)}
        acts = any(isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and
                   n.func.attr in ("to", "cuda", "set_device", "init_process_group", "load_state_dict") for n in nodes)
        if len(rows) >= 5 and len(lists) == 1 and not acts or not acts and report_dict_rows(nodes) >= REPORT_DICT_MIN_ROWS:
            out.append((node_span(fn, open_end=True), fn.name))
    return out


# CUDA queries that answer without CUDA (0, False) instead of raising: shown in a log line they only change the text
_QUIET_QUERIES = frozenset({"torch.cuda.device_count", "torch.cuda.is_available"})
_LOG_NOTE = "only shown in a log line: on Ascend it logs 0 / False and nothing else changes"


def _message_statement(node: ast.AST) -> bool:
    return isinstance(node, ast.Expr) and isinstance(node.value, ast.Call) and \
        _dotted(node.value.func).rsplit(".", 1)[-1] in MESSAGE_CALLS


_REDUNDANT_MOVE_NOTE = "a CUDA-only move to the CPU before a device-generic one of the same value: on Ascend the " \
    "later check moves the NPU tensor, so nothing is left on the device"


def _moves_to_cpu(stmt: ast.stmt, name: str) -> bool:
    """`X = X.cpu()` / `X = X.to("cpu")`."""
    if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name) and
            stmt.targets[0].id == name and isinstance(stmt.value, ast.Call) and
            isinstance(stmt.value.func, ast.Attribute) and _dotted(stmt.value.func.value) == name):
        return False
    call, func = stmt.value, stmt.value.func
    return func.attr == "cpu" and not call.args or func.attr == "to" and len(call.args) == 1 and \
        isinstance(call.args[0], ast.Constant) and call.args[0].value == "cpu"


def _redundant_cpu_moves(tree: ast.Module) -> list[tuple[Region, bool]]:
    """The test of `if X.is_cuda: X = X.cpu()` followed in its block by a move of X to the CPU that no CUDA test
    guards (`if X.device.type != "cpu": X = X.cpu()` or a bare `X = X.cpu()`: skorch's `to_numpy`; tq44a)."""
    out: list[tuple[Region, bool]] = []
    for node in [tree, *_walk(tree)]:
        for block in (getattr(node, name, None) for name in ("body", "orelse", "finalbody")):
            if not isinstance(block, list):
                continue
            for i, stmt in enumerate(block):
                if not (isinstance(stmt, ast.If) and not stmt.orelse and len(stmt.body) == 1 and
                        isinstance(stmt.test, ast.Attribute) and stmt.test.attr == "is_cuda" and
                        isinstance(stmt.test.value, ast.Name) and _moves_to_cpu(stmt.body[0], stmt.test.value.id)):
                    continue
                name = stmt.test.value.id
                if any(_moves_to_cpu(later, name) or isinstance(later, ast.If) and not is_cuda_test(later.test) and
                       len(later.body) == 1 and _moves_to_cpu(later.body[0], name) and name in {
                           n.id for n in walk_list(later.test) if isinstance(n, ast.Name)} and
                       "device" in ast.unparse(later.test) for later in block[i + 1:]):
                    out.append((node_span(stmt.test, open_end=True), True))
    return out


def _lower_held(findings: list, tree: ast.Module, symbol: str, regions_of, context: str, note: str) -> list:
    """Findings on `symbol` above info inside the regions `regions_of(tree)` finds: info, with `context` and `note`."""
    if not any(f.symbol == symbol and f.severity != "info" for f in findings):
        return findings
    regions = regions_of(tree)
    return [as_info(f, context, note) if f.symbol == symbol and f.severity != "info" and _held_by(regions, f)
            else f for f in findings] if regions else findings


def _lower_redundant_cpu_moves(findings: list, tree: ast.Module) -> list:
    return _lower_held(findings, tree, "is_cuda", _redundant_cpu_moves, "redundant-cpu-move", _REDUNDANT_MOVE_NOTE)


_OFF_HOST_NOTE = "tests for an object left on an accelerator where this host has no CUDA: on Ascend the test holds " \
    "for NPU and CUDA objects alike and the code takes the path written for hosts without CUDA, which handles them"


def _off_host_test(node: ast.expr) -> bool:
    """`metric.device.type != "cpu"`, `str(x.device) != "cpu"`: the object is on some accelerator, any backend's
    (not `x.is_cuda`, CUDA's own, which is False for an NPU tensor)."""
    if not (isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], ast.NotEq)):
        return False
    sides = (node.left, node.comparators[0])
    return any(isinstance(a, ast.Constant) and a.value == "cpu" and "device" in ast.unparse(b)
               for a, b in (sides, sides[::-1]))


def _lower_off_host_probes(findings: list, tree: ast.Module) -> list:
    """`not torch.cuda.is_available() and metric.device.type != "cpu"` (chemprop's checkpoint loading: rebuild a
    metric saved on a GPU when the loading host has no CUDA): on Ascend the probe answers False, the object saved on
    any accelerator is rebuilt or moved as written for a host without CUDA, and nothing fails: info (tq48b)."""
    if not any(f.symbol == "torch.cuda.is_available" and f.severity != "info" for f in findings):
        return findings
    regions = []
    for n in _walk(tree):
        if isinstance(n, ast.BoolOp) and isinstance(n.op, ast.And) and any(map(_off_host_test, n.values)):
            regions += [(node_span(v, open_end=True), True) for v in n.values if isinstance(v, ast.UnaryOp) and
                        isinstance(v.op, ast.Not) and is_cuda_test(v.operand) and isinstance(v.operand, ast.Call)]
    if not regions:
        return findings
    return [as_info(f, "off-host-fallback", _OFF_HOST_NOTE) if f.symbol == "torch.cuda.is_available" and
            f.severity != "info" and _held_by(regions, f) else f for f in findings]


_FALLTHROUGH_NOTE = "a probe for an optional CUDA kernel whose code falls through to a portable implementation " \
    "(the `if` returns the kernel, the function goes on to return the other): on Ascend the probe answers False and " \
    "the portable path runs as written"


# what a probe returns that is no kernel: a device, a device's number or a count (the other path silently differs)
_NO_KERNEL_CALLS = frozenset({"device", "device_count", "cpu_count", "current_device"})


def _builds_object(value: ast.expr | None, names: Collection[str] | None = None) -> bool:
    """A call that builds an object (`DynamicconvLayer(...)`), not a device / count (`_NO_KERNEL_CALLS`); with `names`,
    of a name among them (`DynamicconvLayer` imported by the `try`)."""
    dotted = ast_dotted(value.func) if isinstance(value, ast.Call) else None
    return dotted is not None and dotted.rsplit(".", 1)[-1] not in _NO_KERNEL_CALLS and \
        (names is None or dotted.split(".", 1)[0] in names)


def _returns_optional_kernel(stmt: ast.stmt) -> bool:
    """A `try` that imports a module and ends in returning an object built from what it imported, whose handlers
    swallow the error: an attempt at an optional kernel. A plain `return torch.cuda.device_count()`, or a device
    chosen with an imported helper (`import pynvml` ... `return torch.device(f"cuda:{i}")`), is no attempt: its other
    path differs (litdata's worker count; review50 item 7)."""
    if not (isinstance(stmt, ast.Try) and stmt.body and isinstance(stmt.body[-1], ast.Return) and
            caught_without_reraise(stmt) and not stmt.finalbody):
        return False
    imported = {(alias.asname or alias.name).split(".", 1)[0] for s in stmt.body
                if isinstance(s, (ast.Import, ast.ImportFrom)) for alias in s.names}
    return _builds_object(stmt.body[-1].value, imported)


def _probe_fallthroughs(tree: ast.Module) -> list[tuple[Span, bool]]:
    """The tests of `if torch.cuda.is_available():` (no `else`) whose body ends in an attempt at an optional CUDA kernel
    (`_returns_optional_kernel`) and that a later `return` of the same function body, building an object too, follows (fairseq's `DynamicConv`:
    `DynamicconvLayer(...)` with CUDA, else `DynamicConv1dTBC(...)`, pure PyTorch; tq50a)."""
    out: list[tuple[Span, bool]] = []
    for fn in _walk(tree):
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        body = fn.body
        for i, stmt in enumerate(body[:-1]):
            if isinstance(stmt, ast.If) and not stmt.orelse and isinstance(stmt.test, ast.Call) and \
                    is_cuda_test(stmt.test) and stmt.body and _returns_optional_kernel(stmt.body[-1]) and \
                    any(isinstance(later, ast.Return) and _builds_object(later.value) for later in body[i + 1:]):
                out.append((node_span(stmt.test, open_end=True), True))
    return out


def _lower_probe_fallthroughs(findings: list, tree: ast.Module) -> list:
    return _lower_held(findings, tree, "torch.cuda.is_available", _probe_fallthroughs, "probe-fallthrough",
                       _FALLTHROUGH_NOTE)


_LOAD_LOCATION_NOTE = "a probe that only picks where a checkpoint's tensors are loaded (the other arm makes the same " \
    "load with `map_location` on the host): on Ascend the host arm loads it and the code moves the model on as written"


def _without_location(stmt: ast.stmt) -> str | None:
    """A one-statement arm's text with the `map_location` keyword of its calls left out (None unless the arm is one
    statement holding a call)."""
    if not isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.Expr, ast.Return)) or \
            not any(isinstance(n, ast.Call) for n in walk_list(stmt)):
        return None
    copy = ast.parse(ast.unparse(stmt)).body[0]
    for n in walk_list(copy):
        if isinstance(n, ast.Call):
            n.keywords = [k for k in n.keywords if k.arg != "map_location"]
    return ast.unparse(copy)


def _load_location_probes(tree: ast.Module) -> list[tuple[Span, bool]]:
    """The tests of `if torch.cuda.is_available(): ck = torch.load(f) else: ck = torch.load(f, map_location=
    torch.device("cpu"))` (MONAI Label's `EpistemicScoring._load_model`, `torch.jit.load` likewise; tq54b, heldout70):
    both arms make the same call, the host arm with a `map_location` the CUDA arm lacks, so the probe only decides
    where the loaded tensors land. On Ascend the host arm runs; the model is moved to its device afterwards, and
    nothing fails."""
    out: list[tuple[Span, bool]] = []
    for node in _walk(tree):
        if not (isinstance(node, ast.If) and isinstance(node.test, ast.Call) and is_cuda_test(node.test)
                and len(node.body) == 1 and len(node.orelse) == 1):
            continue
        located = [k for n in walk_list(node.orelse[0]) if isinstance(n, ast.Call) for k in n.keywords
                   if k.arg == "map_location"]
        cuda_arm = _without_location(node.body[0])
        if located and cuda_arm is not None and cuda_arm == _without_location(node.orelse[0]) and \
                cuda_arm == ast.unparse(node.body[0]):
            out.append((node_span(node.test, open_end=True), True))
    return out


_LOAD_CHOICE_NOTE = "a probe that only picks where a load's tensors land (its other arm is the host): on Ascend " \
    "they load on the host and the code copies or moves them on as written"


def _load_location_choices(tree: ast.Module) -> list[tuple[Span, bool]]:
    """The tests of safetensors' `load_file(path, device="cuda" if torch.cuda.is_available() else "cpu")` (PEFT's
    `load_adapter`, imported as `safe_load_file`; tq57a, heldout76): the probe only picks where the file's tensors land,
    with the host as its other arm; a safetensors file holds tensors only, which the code copies into its model (a
    state dict), so on Ascend the host arm loads them and nothing fails. Not `torch.load`, which may load a whole
    module that would then stay on the host."""
    out: list[tuple[Span, bool]] = []
    for node in _walk(tree):
        if not isinstance(node, ast.Call) or not (ast_dotted(node.func) or "").endswith("load_file"):
            continue
        for k in node.keywords:
            value = k.value
            if k.arg == "device" and isinstance(value, ast.IfExp) and is_cuda_test(value.test) \
                    and device_literal(value.orelse) == "cpu":
                out.append((node_span(value.test), True))
    return out


def _lower_load_location_probes(findings: list, tree: ast.Module) -> list:
    findings = _lower_held(findings, tree, "torch.cuda.is_available", _load_location_choices, "load-location",
                           _LOAD_CHOICE_NOTE)
    return _lower_held(findings, tree, "torch.cuda.is_available", _load_location_probes, "load-location",
                       _LOAD_LOCATION_NOTE)


_COMPARED_DEFAULT_NOTE = "a default the function only compares with \"cuda\" (it selects no device here: with it the " \
    "branch written for the default runs, on Ascend too); the comparison is the line to port"


def _compared_only_defaults(tree: ast.Module) -> set[tuple[int, int]]:
    """(line, col) of CUDA string defaults (`device="cuda"`) of parameters that the function reads only in a comparison
    with a CUDA string (`if device != "cuda": kwargs["device_map"] = {"": device}`: LLaVA's load_pretrained_model,
    where the default keeps `device_map="auto"`)."""
    out: set[tuple[int, int]] = set()
    for fn in _walk(tree):
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        args = fn.args
        positional = [*args.posonlyargs, *args.args]
        pairs = list(zip(positional[len(positional) - len(args.defaults):], args.defaults)) + \
            [(a, d) for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None]
        for arg, default in pairs:
            if not _cuda_string(default):
                continue
            def compares(node: ast.AST, op: type) -> bool:
                return isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], op) and any(
                    isinstance(a, ast.Name) and a.id == arg.arg and _cuda_string(b)
                    for a, b in ((node.left, node.comparators[0]), (node.comparators[0], node.left)))

            nodes = [n for stmt in fn.body for n in walk_list(stmt)]
            # reads in the branch where the value is not "cuda" (`if device != "cuda": ... {"": device}`) use
            # another value than the default
            other_arm = {id(n) for node in nodes if isinstance(node, ast.If)
                         for arm in ([node.body] if compares(node.test, ast.NotEq) else
                                     [node.orelse] if compares(node.test, ast.Eq) else [])
                         for stmt in arm for n in walk_list(stmt)}
            compared = [n for n in nodes if compares(n, ast.Eq) or compares(n, ast.NotEq)]
            inside = {id(n) for c in compared for n in walk_list(c)}
            # the arm the default takes must be device-neutral (`if device == "cuda": torch.cuda.empty_cache()` is
            # the CUDA path the default chooses); a comparison outside an `if` test is not read
            tests = {id(node.test): node for node in nodes if isinstance(node, ast.If)}
            arms = [tests[id(c)].body if compares(c, ast.Eq) else tests[id(c)].orelse for c in compared
                    if id(c) in tests]
            if len(arms) != len(compared) or any("cuda" in ast.unparse(stmt).lower() for arm in arms for stmt in arm):
                continue
            if compared and not any(isinstance(n, ast.Name) and n.id == arg.arg and id(n) not in inside
                                    and id(n) not in other_arm for n in nodes):
                out.add((default.lineno, default.col_offset + 1))
    return out


def _lower_compared_only_defaults(findings: list, tree: ast.Module) -> list:
    if not any(f.category == "device" and f.severity != "info" and f.symbol == "cuda" for f in findings):
        return findings
    spots = _compared_only_defaults(tree)
    return [as_info(f, "compared-default", _COMPARED_DEFAULT_NOTE) if (f.line, f.col) in spots and
            f.category == "device" and f.severity != "info" else f for f in findings] if spots else findings


def _lower_logged_queries(findings: list, tree: ast.Module) -> list:
    """`log.info(f"Number of GPUs: {torch.cuda.device_count()}")`, `print("CUDA:", torch.cuda.is_available())`: a
    query that does not raise without CUDA, whose value only a message statement shows (HunyuanWorld-Mirror's
    `on_train_start`), is info; a query whose value is kept or tested keeps its severity."""
    if not any(f.symbol in _QUIET_QUERIES and f.severity != "info" for f in findings):
        return findings
    spans = [node_span(n.value, open_end=True) for n in _walk(tree) if isinstance(n, ast.Expr) and _message_statement(n)]
    # tq44a: `if torch.cuda.is_available(): warnings.warn("inference on CPU while CUDA is available")` (Whisper's
    # transcribe): a test whose branch only shows a message decides the message only; not one whose message reads
    # CUDA itself (`print(torch.cuda.max_memory_allocated())`: the test guards that query)
    spans += [node_span(n.test, open_end=True) for n in _walk(tree) if isinstance(n, ast.If) and not n.orelse and
              all(_message_statement(s) for s in n.body) and not any(
                  isinstance(c, ast.Attribute) and "cuda" in c.attr.lower() for s in n.body for c in walk_list(s))]
    if not spans:
        return findings
    regions = [(span, True) for span in spans]
    return [as_info(f, "log-only", _LOG_NOTE) if f.symbol in _QUIET_QUERIES and f.severity != "info" and
            _held_by(regions, f) else f for f in findings]


def _lower_environment_reports(findings: list, tree: ast.Module) -> list:
    if not any(f.severity != "info" for f in findings):
        return findings
    regions = _environment_reports(tree)
    if not regions:
        return findings
    out = []
    for f in findings:
        name = _held_by(regions, f) if f.severity != "info" else None
        out.append(as_info(f, "environment-report", _REPORT_NOTE.format(name=name)) if name else f)
    return out


# the calls that ask whether CUDA is there (valueflow reads an import under one as CUDA-only) and, with them, the
# probes a file may fake (`torch.cuda.is_available = lambda: True`)
CUDA_PRESENCE_PROBES = frozenset({"torch.cuda.is_available", "torch.cuda.device_count"})
_PROBES = CUDA_PRESENCE_PROBES | {"torch.cuda.is_bf16_supported"}


def _drop_mocked_probes(findings: list, tree: ast.Module) -> list:
    """`orig = torch.cuda.is_available` ... `torch.cuda.is_available = lambda: True` ... restore: a file that
    replaces a CUDA probe fakes CUDA's presence for a library's check (GPTQ / AWQ loaders that refuse to run
    without a GPU, loaded on the CPU); the probe is saved and put back, never called there, and nothing CUDA runs.
    Its uncalled references (the save, the restore) are not CUDA API uses; a call of the probe keeps its finding.
    A pytest fixture that fakes CUDA by patching the probe (`_mocked_cuda_fixtures`) is the same fake, made with
    unittest.mock: the device findings in it and in the tests that request it go."""
    findings = _drop_mocked_fixture_uses(findings, tree)
    if not any(f.symbol in _PROBES for f in findings):
        return findings
    replaced = {_dotted(t) for n in _walk(tree) if isinstance(n, ast.Assign) for t in n.targets
                if isinstance(t, ast.Attribute)} & _PROBES
    if not replaced:
        return findings
    called = {(n.func.lineno, n.func.col_offset) for n in _walk(tree) if isinstance(n, ast.Call)}
    # (`torch.cuda.is_available = lambda : False` hides the GPU, it fakes nothing: its store stays, tk43)
    called |= {(t.lineno, t.col_offset) for n in _walk(tree) if isinstance(n, ast.Assign) and hides_cuda(n.value)
               for t in n.targets}
    uncalled = {(n.lineno, n.col_offset) for n in _walk(tree) if isinstance(n, ast.Attribute) and
                _dotted(n) in replaced and (n.lineno, n.col_offset) not in called}
    return [f for f in findings if not (f.symbol in replaced and (f.line, f.col - 1) in uncalled)]


def _mocked_cuda_fixtures(tree: ast.Module) -> list[Span]:
    """Spans of the pytest fixtures that patch torch.cuda.is_available (`with patch("torch.cuda.is_available",
    return_value=True), patch("torch.Tensor.cuda", new=lambda self, *a, **k: self.clone()), ...: yield "cuda"`,
    pytorch-forecasting's `mock_device`, parametrized over "cuda" and "cpu"; tq38, tuned on heldout41), decorators
    included, and of the functions that request one by a parameter: the "cuda" case runs on the CPU with CUDA faked,
    on every machine, Ascend too. A test that patches the probe itself is unselected_devices' (its findings info)."""
    from auditor.static.unselected_devices import patches_cuda_available

    functions = [n for n in _walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    fixtures: dict[str, ast.FunctionDef | ast.AsyncFunctionDef] = {}
    for fn in functions:
        name = pytest_fixture_name(fn)
        if name is not None and patches_cuda_available(fn):
            fixtures[name] = fn
    if not fixtures:
        return []
    requesting = [fn for fn in functions if fn not in fixtures.values() and any(
        a.arg in fixtures for a in (*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs))]
    return [lines_span(decorated_span(fn)[0], fn) for fn in [*fixtures.values(), *requesting]]


def _drop_mocked_fixture_uses(findings: list, tree: ast.Module) -> list:
    if not any(f.category == "device" for f in findings):
        return findings
    spans = _mocked_cuda_fixtures(tree)
    if not spans:
        return findings
    return [f for f in findings if not (f.category == "device" and starts_in(f, spans))]


def _drop_capability_keys(findings: list, tree: ast.Module) -> list:
    """`if caps["cuda"]:` of a capability table (`_capability_tables`): the key names a table entry, not a device; the
    entry's CUDA probe carries the finding (pd38)."""
    strings = [f for f in findings if f.name == "cuda-device-string"]
    if not strings:
        return findings
    flags = cuda_flags(tree)
    if not any("[" in flag for flag in flags):
        return findings
    keys = {(n.slice.lineno, n.slice.col_offset) for n in _walk(tree) if isinstance(n, ast.Subscript) and
            isinstance(n.slice, ast.Constant) and is_cuda_test(n, flags)}
    return [f for f in findings if f.name != "cuda-device-string" or (f.line, f.col - 1) not in keys]


_SWITCH_RULES = frozenset({"cuda-switch-value"})


def _drop_probe_copies(findings: list, tree: ast.Module) -> list:
    """NPU038 on a switch whose value is a name every assignment of which is a CUDA test (`has_cuda =
    torch.cuda.is_available()` ... `def __init__(self, ..., use_cuda: Optional[bool] = has_cuda)`, pycorrector's
    GptModel; tq39, heldout42): the switch is on only where CUDA is present, so on Ascend it hands the probe's False
    on; the finding is the probe's line (NPU038's own `use_cuda = torch.cuda.is_available()` reading, one name
    further). A literal `True` or a user's setting keeps it."""
    if not any(f.name in _SWITCH_RULES for f in findings):
        return findings
    flags = cuda_flags(tree)
    if not flags:
        return findings
    copies: set[tuple[int, int]] = set()
    for n in _walk(tree):
        pairs: list[tuple[ast.arg | ast.keyword, ast.expr | None]] = []
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            pairs = list(_parameter_defaults(n.args))
        elif isinstance(n, ast.keyword) and n.arg is not None:
            pairs = [(n, n.value)]
        copies.update((at.lineno, at.col_offset) for at, value in pairs if value is not None and
                      isinstance(value, (ast.Name, ast.Attribute)) and
                      (_flag_name(value) or _option_attribute(value)) in flags)
    return [f for f in findings if f.name not in _SWITCH_RULES or (f.line, f.col - 1) not in copies]


def apply_gates(findings: list, tree: ast.Module) -> list:
    """Findings as the CUDA gates read them: an error behind a gate is a warning (the gate is the error), a hint
    about code that never runs on Ascend goes, a use of a guarded optional import is a warning; Triton used only
    for host helpers is info (a dtype hint in an NPU branch goes in backends.apply_context, the npu-path context)."""
    findings = _raise_platform_refusals(_drop_probe_copies(findings, tree), tree)   # before the gates read it
    findings = _lower_asserted_not(_triton_helper_findings(findings, tree), tree)
    findings = _drop_mocked_probes(_lower_abstraction_fallbacks(findings, tree), tree)
    findings = _lower_library_refusals(_lower_fallback_gates(findings, tree), tree)
    findings = _lower_kernel_preconditions(findings, tree)
    findings = _drop_capability_keys(findings, tree)
    findings = apply_gate_regions(_drop_gated_source_globs(_drop_choiceless_tests(findings, tree), tree), tree)
    findings = _lower_off_host_probes(_lower_redundant_cpu_moves(findings, tree), tree)
    findings = _lower_load_location_probes(_lower_probe_fallthroughs(findings, tree), tree)
    findings = _lower_compared_only_defaults(findings, tree)
    return _lower_logged_queries(_lower_environment_reports(findings, tree), tree)


_PLATFORM_RULE = "cuda-platform-predicate"
_PLATFORM_REFUSAL_NOTE = "the code raises when the answer is False: on Ascend the platform is not CUDA and this check " \
                         "refuses to run; give it an NPU arm"


def _refusing_arm(body: list[ast.stmt]) -> bool:
    """An arm that leaves by raising (`raise RuntimeError(...)`, after log lines at most), refusing no CUDA-only
    library by name (that refusal is right on Ascend too: `_library_refusals`)."""
    if not body or not isinstance(body[-1], ast.Raise) or body[-1].exc is None or \
            not all(isinstance(s, ast.Expr) and isinstance(s.value, ast.Call) for s in body[:-1]):
        return False
    text = " ".join(c.value for c in walk_list(body[-1].exc) if isinstance(c, ast.Constant) and isinstance(c.value, str))
    return _CUDA_ONLY_LIBRARY.search(text) is None


def _platform_refusals(tree: ast.Module) -> list[Span]:
    """The predicate calls of checks that raise when the platform is not CUDA: `if not current_platform.is_cuda():
    raise RuntimeError("... requires the cuda platform!")` (a vLLM plugin's entry), `if is_cuda(): ... else: raise`,
    `assert current_platform.is_cuda()`."""
    out: list[Span] = []
    for node in _walk(tree):
        if isinstance(node, ast.If):
            negated = isinstance(node.test, ast.UnaryOp) and isinstance(node.test.op, ast.Not)
            call = node.test.operand if isinstance(node.test, ast.UnaryOp) and negated else node.test
            if isinstance(call, ast.Call) and _refusing_arm(node.body if negated else node.orelse):
                out.append(node_span(call))
        elif isinstance(node, ast.Assert) and isinstance(node.test, ast.Call):
            out.append(node_span(node.test))
    return out


def _raise_platform_refusals(findings: list, tree: ast.Module) -> list:
    """NPU034 (a platform predicate, info: the other branch runs on Ascend) where the other branch raises: the line
    fails on Ascend as written, an error (tq52b; TUNED on heldout66's ArcticInference plugin entry)."""
    if not any(f.name == _PLATFORM_RULE and f.severity == "info" and not f.data.get("context") for f in findings):
        return findings
    spans = _platform_refusals(tree)
    if not spans:
        return findings
    # no context of its own: the gates read next lower it like any error behind a CUDA gate or a CUDA test mark
    return [replace(f, severity="error", message=f"{f.message} ({_PLATFORM_REFUSAL_NOTE})")
            if f.name == _PLATFORM_RULE and f.severity == "info" and not f.data.get("context") and starts_in(f, spans)
            else f for f in findings]


def _drop_choiceless_tests(findings: list, tree: ast.Module) -> list:
    """`'cpu' if torch.cuda.is_available() else 'cpu'` (Wan2.1's VACE pipeline): both arms are the same value, so
    the CUDA test chooses nothing and the line behaves the same on Ascend; the finding on the test goes (t11f)."""
    if not any(f.category == "device" for f in findings):
        return findings
    tests: list[Region] = []
    for n in _walk(tree):
        if isinstance(n, ast.IfExp) and isinstance(n.body, ast.Constant) and isinstance(n.orelse, ast.Constant) and \
                type(n.body.value) is type(n.orelse.value) and n.body.value == n.orelse.value:
            tests.append(node_span(n.test, open_end=True))
    if not tests:
        return findings
    return [f for f in findings if f.category != "device" or
            not starts_in(f, tests)]


_CUDA_SOURCE_RULE = "cuda-source-path"


def _gated_source_globs(tree: ast.Module, gates: Gates) -> list[Span]:
    """`source_cuda = glob.glob(os.path.join(src, "cuda", "*.cu"))` whose every read is behind a CUDA gate (`if
    torch.cuda.is_available(): extension = CUDAExtension; sources += source_cuda`: DCNv2-style setup.py files): the
    spans of such glob calls. The list of names builds nothing on Ascend; the gate and the extension behind it are
    the findings (precision rows of the shape read false, recall labels `none`; tp59b)."""
    out: list[Span] = []
    for scope in [tree, *(n for n in _walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)))]:
        nodes = list(scope_nodes(scope))
        for stmt in nodes:
            if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)
                    and isinstance(stmt.value, ast.Call) and (ast_dotted(stmt.value.func) or "").split(".")[-1] == "glob"):
                continue
            name = stmt.targets[0].id
            if sum(isinstance(n, ast.Name) and n.id == name and not isinstance(n.ctx, ast.Load) for n in nodes) != 1:
                continue
            reads = [n for n in nodes if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load)]
            if reads and all(gates.gate_of(n.lineno, n.col_offset) is not None for n in reads):
                out.append(node_span(stmt.value))
    return out


def _drop_gated_source_globs(findings: list, tree: ast.Module) -> list:
    """The CUDA source globs `_gated_source_globs` reads: their `.cu` pattern findings go."""
    if not any(f.name == _CUDA_SOURCE_RULE for f in findings):
        return findings
    gates = build_gates(tree)
    spans = _gated_source_globs(tree, gates) if gates.regions else []
    return [f for f in findings if f.name != _CUDA_SOURCE_RULE or not starts_in(f, spans)] if spans else findings


# the categories whose values flow from a device choice to its uses (a device, a process-group backend)
_FLOW_CATEGORIES = frozenset({"device", "distributed"})

def apply_gate_regions(findings: list, tree: ast.Module, extra: frozenset[str] | set[str] = frozenset()) -> list:
    """The gate part of `apply_gates`; `extra`: gates the file imports from another module (the project pass in
    auditor/static/imported_gates.py runs it again with them)."""
    if not findings:
        return findings
    gates = build_gates(tree, extra)
    if not gates.regions and not gates.guarded:
        return findings
    out = []
    names: dict[tuple[int, int], str] | None = None
    tables: list[tuple[Region, str, bool]] | None = None
    shared: set[tuple[int, int]] | None = None
    top: frozenset[str] | None = None
    script = False
    for f in findings:
        context = f.data.get("context")
        how = gates.gate_of(f.line, f.col - 1) if gates.regions else None
        if how == _WINDOWS:
            if f.severity != "info":     # never runs on an Ascend (Linux) host: worth knowing at most
                f = as_info(f, "windows-only", f"in {_WINDOWS}, which does not run on an Ascend (Linux) host")
            out.append(f)
            continue
        if how is None and f.category in _FLOW_CATEGORIES and f.severity == "error" and gates.regions:
            if names is None:       # the data flow is read only where a device error may be reached through it
                names = gates.gated_names = _gated_names(tree, gates)
            how = names.get((f.line, f.col - 1))
            if how is not None and " ... else, through " in how and \
                    f" (via {how.rsplit(', through ', 1)[-1]})" in f.message:
                # `device = 'cuda' if torch.cuda.is_available() else 'cpu'` then `model.to(device)`,
                # `add_argument('--device', default=device)`: a use of a choice made with its fallback in one
                # conditional expression; the choice is reported where it is made (a warning there), the use is not
                # the line to port (t11y, tuned on heldout16; a value set inside an `if` block keeps its uses);
                # so is a backend chosen so (`"cpu:gloo,cuda:nccl" if torch.cuda.is_available() else "gloo"`, tq44b)
                continue
        if how is None and f.severity == "error" and gates.regions and not context:
            # a device constant is the choice the port edits, unless only tests marked for CUDA read it
            # (`CUDA_DEVICES = [f"cuda:{i}" ...]` fed to `@parametrize` of tests under `skipif(not
            # IS_SUPPORTED_BY_GPU)`: nothing reads it on Ascend; t11y, tuned on heldout16)
            if tables is None:
                script = _script(tree)
                tables = _gated_tables(tree, gates, script)
            # a device line in a helper function of a script whose callers all run behind a gate is gated too
            # (map-anything's `profile_model`, called only after main()'s `if not torch.cuda.is_available(): raise`;
            # pd44); a module-level device constant stays the choice the port edits unless only marked tests read it
            how = next((_TABLE_NOTE.format(how=h) for (l1, c1, l2, c2), h, helper in tables
                        if (l1, c1) <= (f.line, f.col - 1) < (l2, c2) and (
                            helper and script or f.category not in ("device", "distributed") or
                            h in (_TEST_MARK, _SKIP_MARK))), None)
        if f.severity == "info" and not context and how is not None and f.category == "precision" and \
                how != _TEST_MARK and not how.endswith(_SKIPS_TEST):
            # a dtype chosen only on CUDA (`fp16 if "cuda" in device else fp32`): once the gate is ported it runs
            # on the NPU, so worth knowing, never more (the lead's decision (i), session 17, docs/precision.md)
            out.append(as_info(f, "cuda-path-dtype", _CUDA_PATH_DTYPE_NOTE))
            continue
        if f.name == "cuda-helper-call" and not context and how is not None and how != _TEST_MARK and \
                not how.endswith(_SKIPS_TEST):
            continue       # `_cuda_device(device)` after `if not torch.cuda.is_available(): return`: the gate is the
            # finding, the call of a CUDA-named helper behind it adds nothing (t11r)
        if f.severity == "error" and context is None and how is not None and f.category in _PACKAGE_CATEGORIES:
            if shared is None:
                shared = _package_in_every_arm(tree, findings, gates)
            if (f.line, f.col) in shared:
                out.append(f)
                continue
        if f.severity == "error" and context in (None, "backend-dispatch") and how is not None:
            fix = "none" if context else f.fix      # inside a multi-backend dispatch nothing is rewritten
            data = {k: v for k, v in f.data.items() if k != "replace" or fix != "none"}
            data["context"] = "cuda-available-branch"
            f = replace(f, severity="warning", fix=fix, data=data,
                        message=f"{f.message} ({_GATED_NOTE.format(how=how)})")
        elif f.severity == "error" and context is None and f.category in _PACKAGE_CATEGORIES and \
                gates.guarded_symbol(f.symbol or "") and (f.symbol or "").split(".", 1)[0] not in (
                    top if top is not None else (top := _top_imports(tree, findings))):
            if (f.symbol or "") in gates.npu_twins:
                out.append(as_info(f, "npu-path", _NPU_TWIN_NOTE))
                continue
            f = replace(f, severity="warning", data={**f.data, "context": "guarded-import"},
                        message=f"{f.message} ({_GUARDED_NOTE})")
        out.append(f)
    return out


def _top_imports(tree: ast.Module, findings: list) -> frozenset[str]:
    """The packages the module imports unguarded in its top-level statements, on a line that holds a package error
    (the import fails on Ascend). A guarded import of one of them guards nothing: `if is_flash_attn_2_available():
    from flash_attn.bert_padding import index_first_axis` beside `from flash_attn.layers.rotary import
    apply_rotary_emb` (verl's Megatron Qwen2 attention; tq45b, heldout52's Reasoning360) fails on import without
    flash-attn, so the guarded names keep their errors. A package's own modules importing each other (`from
    vllm.logger import ...` beside a guarded `from vllm._C import custom_ar`) fail nothing and guard as before."""
    failing = {f.line for f in findings if f.severity == "error" and f.category in _PACKAGE_CATEGORIES
               and not f.data.get("context")}
    roots = {a.name.split(".", 1)[0] for n in tree.body if isinstance(n, ast.Import) and n.lineno in failing
             for a in n.names}
    return frozenset(roots | {n.module.split(".", 1)[0] for n in tree.body if isinstance(n, ast.ImportFrom)
                              and not n.level and n.module and n.lineno in failing})


def _package_in_every_arm(tree: ast.Module, findings: list, gates) -> set[tuple[int, int]]:
    """(line, col) of the package errors behind a gate in an if / elif chain whose other arm, outside any gate,
    holds an error of the same rule on the same package: `if context_type == "gl": return
    dr.RasterizeGLContext(...) elif context_type == "cuda": return dr.RasterizeCudaContext(...)` (threestudio's
    nvdiffrast context; tq45b, heldout52's richdreamer). The gate picks between two members of one CUDA-only
    package, so no arm runs on Ascend: the gated line fails as written and keeps its error."""
    from auditor.static.astutil import if_chains

    errors = [f for f in findings if f.severity == "error" and f.category in _PACKAGE_CATEGORIES and f.symbol]
    if len(errors) < 2:
        return set()
    out: set[tuple[int, int]] = set()
    for chain in if_chains(tree):
        arms = [(arm.body[0].lineno, arm.body[-1].end_lineno or arm.body[-1].lineno) for arm in chain]
        held = [[f for f in errors if a <= f.line <= b] for a, b in arms]
        for i, mine in enumerate(held):
            for f in mine:
                root = f.symbol.split(".", 1)[0]
                if any(g.code == f.code and g.symbol.split(".", 1)[0] == root and
                       gates.gate_of(g.line, g.col - 1) is None for j, other in enumerate(held) if j != i
                       for g in other):
                    out.add((f.line, f.col))
    return out


def _script(tree: ast.Module) -> bool:
    """Whether the module runs as a script (`if __name__ == "__main__":` at its top level)."""
    return any(is_main_guard(stmt) for stmt in tree.body)


_CUDA_PATH_DTYPE_NOTE = "chosen only on the CUDA path here: once the gate is ported this dtype runs on the NPU"
_TABLE_NOTE = "a module-level value used only by code behind a CUDA gate ({how})"


def _top_bindings(stmts: list[ast.stmt], out: list[tuple[str, ast.stmt]]) -> None:
    """(name, statement) of each module-level `name = ...` / `name += ...`, under top-level if / else too."""
    for stmt in stmts:
        if isinstance(stmt, ast.If):
            _top_bindings(stmt.body, out)
            _top_bindings(stmt.orelse, out)
        elif isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
            out.append((stmt.targets[0].id, stmt))
        elif isinstance(stmt, (ast.AugAssign, ast.AnnAssign)) and isinstance(stmt.target, ast.Name) and \
                stmt.value is not None:
            out.append((stmt.target.id, stmt))


def _gated_tables(tree: ast.Module, gates: Gates, script: bool) -> list[tuple[Region, str, bool]]:
    """The values of module-level names every read of which is behind a CUDA gate (a config list read only by
    `@parametrize` in a TestCase marked `skipIf(not cuda and not xpu)`), or feeds another such name
    (`_TEST_CONFIGS = _ALL_TEST_CONFIGS`): they are built on Ascend but never used there (t11r). `script`: `_script`."""
    binds: list[tuple[str, ast.stmt]] = []
    _top_bindings(tree.body, binds)
    # t11y (tuned on heldout16): a module-level helper function (not a test, not decorated) is such a value too:
    # `def gpu_worker(rank, ...)` read only by `@parametrize("worker", [cpu_worker, gpu_worker])` of a test marked
    # skip or for CUDA runs nowhere on Ascend; its body is the region
    binds.extend((stmt.name, stmt) for stmt in tree.body if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef))
                 and not stmt.decorator_list and not stmt.name.startswith("test") and stmt.body)
    by_name: dict[str, list[ast.stmt]] = {}
    for name, stmt in binds:
        by_name.setdefault(name, []).append(stmt)
    if not by_name:
        return []
    owner: dict[tuple[int, int], str] = {}     # a read inside the value of a binding of `name`
    for name, stmt in binds:
        values = stmt.body if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) else \
            [stmt.value]                        # type: ignore[attr-defined]
        for n in (n for v in values for n in walk_list(v)):
            if isinstance(n, ast.Name):
                owner[(n.lineno, n.col_offset)] = name
    reads: dict[str, list[tuple[int, int]]] = {}
    for n in _walk(tree):
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and n.id in by_name:
            reads.setdefault(n.id, []).append((n.lineno, n.col_offset))
    gated: dict[str, str] = {}
    changed = True
    while changed:
        changed = False
        for name in by_name:
            if name in gated or not reads.get(name):
                continue
            hows = []
            for at in reads[name]:
                via = owner.get(at)
                # a read inside another binding is gated with it, or, in a script, by a gate within it (a call
                # after `if not torch.cuda.is_available(): raise` in main(); pd44)
                how = gated.get(via) or (gates.gate_of(*at) if script else None) if via is not None and via != name \
                    else None if via == name else gates.gate_of(*at)
                if via == name:
                    continue        # `x = x + [...]`: the name's own growth
                if how is None:
                    break
                hows.append(how)
            else:
                if hows:
                    gated[name] = hows[0]
                    changed = True
    return [(_stmt_region(stmt.body[0], stmt.body[-1]), how, True) if isinstance(stmt, (ast.FunctionDef,
                                                                                           ast.AsyncFunctionDef))
            else (node_span(stmt.value, open_end=True), how, False)    # type: ignore[attr-defined]
            for name, how in gated.items() for stmt in by_name[name]]


def _sorted(regions: list[Region], hows: list[str]) -> tuple[list[Region], list[str]]:
    pairs = sorted(zip(regions, hows))
    return [r for r, _ in pairs], [h for _, h in pairs]


__all__ = ["DESELECTED_SUFFIX", "Gates", "apply_gate_regions", "apply_gates", "build_gates", "cuda_flags", "cuda_probes", "is_cuda_test",
           "module_gates", "triton_helpers_only"]
