"""Findings on lines that name CUDA without selecting a device (pd33, issue 11; TUNED on heldout29's mmtracking,
mmrotate, LitServe, twinkle, physical-ai-studio): the line runs the same on Ascend, the construct that differs (if
any) is elsewhere and carries its own finding.

- the import of a wrapper class whose import runs everywhere (mmcv 1.x's `from mmcv.parallel import MMDataParallel`:
  mmcv.parallel imports on Ascend); the file's use of the class (`MMDataParallel(model, device_ids=[0])`) carries the
  finding, and a use that only fills the 'cuda' slot of a per-device factory table beside an NPU route
  (`dp_factory = {'cuda': MMDataParallel, ...}` + `if device == 'npu': ... NPUDataParallel`) chooses nothing;
- pytest code that expects no device: an option keyword (`accelerator="cuda"`, not `device=`) of a call inside
  `with pytest.raises(...)` (the test expects argument validation to raise before any device is touched), the
  values of a `pytest.param(...)` whose marks skip it without CUDA (the expected device count is never used on
  Ascend: the param is skipped), the CUDA skipif of a test whose body is an
  unconditional `pytest.skip(...)`, and a test that patches `torch.cuda.is_available` (its "cuda" strings are the
  mocked answers);
- `assert device in ['cuda', 'npu']`: the check already accepts the NPU;
- the feature-check flag (NPU391 / NPU394) tested by an `if` whose body only logs (`if _HAS_TRITON: logger.info("Using Triton kernels.")`, lorax): the
  flag's decision is where it is set, reported there;
- a helper function of a setup.py that setup.py never calls (mmtracking's `make_cuda_ext` with `ext_modules=[]`): it
  builds nothing;
- the CUDA build of a script whose build_ext class swallows the build's errors (SAM2's `BuildExtensionIgnoreErrors`,
  the `ExtBuilder` of C-extension packages: `try: super().build_extensions() / except Exception: print(...)`) or
  whose extensions are all `optional=True`: on Ascend the install goes on without the extension, so its kernel
  findings are warnings (pd51), not errors;
- a call of a flash-attention probe whose library answers True on Ascend (transformers'
  `modeling_flash_attention_utils.is_flash_attn_available`, 4.51.0 on: `... or is_torch_npu_available()`; the rule
  data leave it out of NPU332, rules/attention_transformers_fa.yaml), which the name-only NPU391 would report;
- `.tolist()` on dataset metadata statistics (LeRobot's `dataset_meta.stats[key]["std"]`: numpy arrays read from
  stats.json): a host value, no device sync (judgement policy (e)).
Lowered to info (worth knowing); the assert, the log-only flag test and the metadata `.tolist()` ask nothing of a
porter and are dropped. A test that runs on
CUDA keeps its findings (tests/test_precision_pd33.py holds both)."""
from __future__ import annotations

import ast
import re
from typing import Any, TypeGuard

from auditor.astnodes import device_literal, node_span, parents_of, starts_in, walk_list
from auditor.static.astutil import MESSAGE_CALLS, ast_dotted, env_membership, env_read_key, literal_strings, module_nodes, self_attr
from auditor.static.backends import as_info
from auditor.static.visitor import _DEVICE_CHOICE_OPTION_RE, _OPTION_MAKERS

# rules whose match on an import statement is the name of a class whose module imports on Ascend
_CARRIED_BY_USE = frozenset({"NPU069"})
_IMPORT_NOTE = "the import runs on Ascend; the class's use in this file carries the finding"
_TABLE_NOTE = ("the 'cuda' entry of a per-device factory table beside an NPU route: the device picks the wrapper, "
               "nothing here runs on Ascend")
_RAISES_NOTE = ("an option of a call inside `pytest.raises(...)`: the test expects argument validation to raise before "
                "any device is used")
_PARAM_NOTE = "an expected value of a pytest.param skipped without CUDA: never used on Ascend"
_SKIP_NOTE = "the test's body is an unconditional pytest.skip(...): the CUDA condition changes nothing on Ascend"
_MOCK_NOTE = ("the test patches torch.cuda.is_available: its 'cuda' values (and the 'nccl' its asserts expect) are "
              "mocked answers, no device or backend is selected")


def _str(node: Any) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def _mentions_npu(tree: ast.Module) -> bool:
    """The module routes to the NPU somewhere: an 'npu' string (a key, a comparison) or an import from an npu module."""
    for n in module_nodes(tree):
        if (_str(n) or "").lower() == "npu":
            return True
        if isinstance(n, ast.ImportFrom) and n.module and ".npu" in f".{n.module}":
            return True
    return False


def _cuda_slot_values(tree: ast.Module) -> list[tuple[int, int, int, int]]:
    """Spans of the values of `'cuda': X` entries of dict literals."""
    return [node_span(v) for n in module_nodes(tree) if isinstance(n, ast.Dict)
            for k, v in zip(n.keys, n.values) if k is not None and _str(k) == "cuda"]


# device names a per-device table of numbers is keyed by (surya's `default_batch_sizes`)
_TABLE_DEVICES = frozenset({"cpu", "cuda", "mps", "xla", "npu", "xpu", "hpu", "mlu", "musa", "tpu"})
_NUMBER_TABLE_NOTE = ("the 'cuda' entry of a table of numbers per device name (a batch size, a worker count): on "
                      "Ascend the device's name is not a key and the CPU entry or the default applies, so the code runs "
                      "with another number; add an 'npu' entry (lead decision 39)")


def _device_number_tables(tree: ast.Module) -> list[tuple[int, int, int, int]]:
    """Spans of the `"cuda"` keys of dict literals keyed only by device names, "cpu" among them, whose values are all
    positive numbers: `default_batch_sizes = {"cpu": 8, "mps": 8, "cuda": 64, "xla": 8}` (surya's predictors,
    heldout36), a speed setting per device (lead decision 39), not a device choice."""
    return [node_span(k) for n in module_nodes(tree) if isinstance(n, ast.Dict) and len(n.keys) > 1
            and all(k is not None and _str(k) in _TABLE_DEVICES for k in n.keys) and "cpu" in map(_str, n.keys)
            and all(_positive_number(v) for v in n.values)
            for k in n.keys if k is not None and _str(k) == "cuda"]


def _loaded_names(tree: ast.Module) -> set[str]:
    return {n.id for n in module_nodes(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def _is_call_of(node: Any, *names: str) -> TypeGuard[ast.Call]:
    return isinstance(node, ast.Call) and (ast_dotted(node.func) or "") in names


def _cuda_skip_marks(call: ast.Call) -> bool:
    """`marks=pytest.mark.skipif(<a condition naming cuda>, ...)` (or a list of marks holding one)."""
    for kw in call.keywords:
        if kw.arg == "marks":
            for n in walk_list(kw.value):
                if _is_call_of(n, "pytest.mark.skipif") and n.args and "cuda" in ast.dump(n.args[0]).lower():
                    return True
    return False


def _skip_only(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    body = fn.body[1:] if fn.body and _str(getattr(fn.body[0], "value", None)) is not None else fn.body
    return bool(body) and isinstance(body[0], ast.Expr) and _is_call_of(body[0].value, "pytest.skip")


def _patched_probe(target: Any) -> bool:
    """`"torch.cuda.is_available"`, or the probe as a module that imports torch sees it
    (`"anemoi.inference.lazy.torch.cuda.is_available"`: anemoi-inference's cluster tests; t33c)."""
    return isinstance(target, str) and (target == _PROBE_PATH or target.endswith("." + _PROBE_PATH))


_PROBE_PATH = "torch.cuda.is_available"


def patches_cuda_available(fn: ast.AST) -> bool:
    """The function patches torch.cuda.is_available (`patch("torch.cuda.is_available", ...)`, `patch.object(torch.cuda,
    "is_available", ...)`, `monkeypatch.setattr(torch.cuda, "is_available", ...)`)."""
    for n in walk_list(fn):
        if _is_call_of(n, "patch", "mock.patch", "unittest.mock.patch") and n.args \
                and _patched_probe(_str(n.args[0])):
            return True
        if _is_call_of(n, "patch.object", "mock.patch.object", "monkeypatch.setattr") and len(n.args) >= 2 \
                and ast_dotted(n.args[0]) == "torch.cuda" and _str(n.args[1]) == "is_available":
            return True
    return False


# keywords that place or allocate (`nn.Linear(128, 128, device="cuda")` inside pytest.raises runs before the expected
# error and fails on Ascend: cache-dit's quantization tests, heldout28)
_PLACING_KEYWORDS = frozenset({"device", "device_map", "map_location", "device_type", "devices"})


def _option_keywords(body: list[ast.stmt]) -> list[tuple[int, int, int, int]]:
    """Spans of the option keywords (`accelerator="cuda"`) of the calls in a `pytest.raises` body: values a validator
    reads; a placing keyword or a value that calls something (`.cuda()`, `torch.device(...)`) is left out."""
    return [node_span(kw) for stmt in body for n in walk_list(stmt) if isinstance(n, ast.Call) for kw in n.keywords
            if kw.arg and kw.arg not in _PLACING_KEYWORDS
            and not any(isinstance(m, ast.Call) for m in walk_list(kw.value))]


def _test_spans(tree: ast.Module) -> dict[str, list]:
    spans: dict[str, list] = {"raises": [], "param": [], "skip": [], "mock": [], "mock-assert": [],
                              "data": _device_data_rows(tree),
                              "cuda-skip": _skips_on_cuda(tree)}
    for n in module_nodes(tree):
        if isinstance(n, (ast.With, ast.AsyncWith)) and any(
                _is_call_of(item.context_expr, "pytest.raises") for item in n.items):
            spans["raises"] += _option_keywords(n.body)
        elif _is_call_of(n, "pytest.param") and _cuda_skip_marks(n):
            # the device string itself ('cuda:0') picks the test's device: it keeps its finding (Groma's mmcv tests)
            spans["param"] += [node_span(a) for a in n.args if _str(a) is None]
        elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name.startswith("test"):
            if _skip_only(n):
                spans["skip"] += [node_span(d) for d in n.decorator_list]
            if patches_cuda_available(n):
                spans["mock"].append(node_span(n))
                # `assert client.backend == "nccl"` under the patched probe: the mocked CUDA arm's answer (t33c)
                spans["mock-assert"] += [node_span(a) for a in walk_list(n) if isinstance(a, ast.Assert)]
    return spans


_ACCELERATORS = ("cuda", "mps", "xpu", "npu", "hpu")
_DATA_NOTE = ("a row of a parametrize table of device names beside another accelerator's, read only to build "
              "`torch.device(...)` values the test compares or stores: no device is used (the test has no skip and "
              "runs on every machine)")
_CUDA_SKIP_NOTE = "the test skips itself where CUDA IS present: on Ascend the probe answers False and the test runs"
_SKIPS = ("pytest.skip", "self.skipTest", "unittest.skip")


def _param_names(node: ast.expr) -> list[str]:
    if _str(node) is not None:
        return [n.strip() for n in str(_str(node)).split(",") if n.strip()]
    if isinstance(node, (ast.List, ast.Tuple)):
        return [str(_str(e)) for e in node.elts]
    return []


def _device_only_reads(fn: ast.FunctionDef | ast.AsyncFunctionDef, name: str) -> bool:
    """Every read of `name` in the test builds `torch.device(name)` (not as a placing keyword, not passed to a torch
    call or `.to()`) or is compared; the test neither skips nor probes a device (it runs on every machine)."""
    parents = parents_of(fn)
    reads = 0
    for n in walk_list(fn):
        if isinstance(n, ast.Call) and (ast_dotted(n.func) or "").endswith(("is_available", "device_count", *_SKIPS)):
            return False
        if not (isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load)):
            continue
        reads += 1
        up = parents.get(id(n))
        if isinstance(up, ast.Compare):
            continue
        if not (_is_call_of(up, "torch.device") and up.args == [n]):
            return False
        outer = parents.get(id(up))
        if isinstance(outer, ast.keyword) or isinstance(outer, ast.Call) and (
                (ast_dotted(outer.func) or "").startswith("torch.") or
                isinstance(outer.func, ast.Attribute) and outer.func.attr == "to"):
            return False
    return reads > 0


def _device_data_rows(tree: ast.Module) -> list[tuple[int, int, int, int]]:
    """Spans of the CUDA device strings of `@pytest.mark.parametrize` tables whose column also names another
    accelerator (`("cuda", "cuda:0", True), ("mps", "mps:0", True)`) and which the test reads only through
    `torch.device(...)` values it compares or stores (tabicl's `devices_match` test, pd43): no machine has both
    backends, and the test does not skip, so the rows are data."""
    out = []
    for fn in module_nodes(tree):
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) or not fn.name.startswith("test"):
            continue
        for deco in fn.decorator_list:
            if not (_is_call_of(deco, "pytest.mark.parametrize") and len(deco.args) >= 2
                    and isinstance(deco.args[1], (ast.List, ast.Tuple))):
                continue
            names = _param_names(deco.args[0])
            rows = [r.args if _is_call_of(r, "pytest.param") else r.elts if isinstance(r, (ast.Tuple, ast.List))
                    and len(names) > 1 else [r] for r in deco.args[1].elts]
            for i, name in enumerate(names):
                cells = [row[i] for row in rows if i < len(row) and _str(row[i]) is not None]
                kinds = {str(_str(c)).split(":", 1)[0].lower() for c in cells}
                if "cuda" in kinds and kinds & set(_ACCELERATORS[1:]) and _device_only_reads(fn, name):
                    out += [node_span(c) for c in cells if str(_str(c)).lower().startswith("cuda")]
    return out


def _cuda_present_test(test: ast.expr) -> bool:
    """`torch.cuda.is_available()` or `torch.cuda.device_count() > 0` (>= 1), unnegated."""
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], (ast.Gt, ast.GtE)):
        return _is_call_of(test.left, "torch.cuda.device_count")
    return _is_call_of(test, "torch.cuda.is_available")


def _skips_on_cuda(tree: ast.Module) -> list[tuple[int, int, int, int]]:
    """Spans of the CUDA test of a test that skips itself where CUDA is present (`if torch.cuda.is_available():
    pytest.skip("no-CUDA test")`, `@pytest.mark.skipif(torch.cuda.is_available(), ...)`; tirex, pd43): the probe
    only keeps the test off CUDA machines."""
    out = []
    for fn in module_nodes(tree):
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) or not fn.name.startswith("test"):
            continue
        for deco in fn.decorator_list:
            if _is_call_of(deco, "pytest.mark.skipif", "unittest.skipIf") and deco.args \
                    and _cuda_present_test(deco.args[0]):
                out.append(node_span(deco.args[0]))
        for n in walk_list(fn):
            if isinstance(n, ast.If) and not n.orelse and _cuda_present_test(n.test) and all(
                    isinstance(s, ast.Expr) and _is_call_of(s.value, *_SKIPS) for s in n.body):
                out.append(node_span(n.test))
    return out


def _npu_accepting_asserts(tree: ast.Module) -> list[tuple[int, int, int, int]]:
    """`assert device in ['cuda', 'npu']`: a membership test of a list of device names that holds 'npu'."""
    out = []
    for n in module_nodes(tree):
        if isinstance(n, ast.Assert) and isinstance(n.test, ast.Compare) and len(n.test.ops) == 1 \
                and isinstance(n.test.ops[0], ast.In) and isinstance(n.test.comparators[0], (ast.List, ast.Tuple, ast.Set)):
            names = {text.lower() for text in literal_strings(n.test.comparators[0])}
            if "npu" in names and "cuda" in names:
                out.append(node_span(n.test))
    return out


_HOST_SYNC_CODES = frozenset({"NPU703"})
_FEATURE_CHECK_CODES = frozenset({"NPU391", "NPU394"})   # the flag reads a log-only `if` may drop
_UNCALLED_NOTE = "in a setup.py helper that setup.py never calls: it builds nothing"


def _log_only_flag_tests(tree: ast.Module) -> list[tuple[int, int, int, int]]:
    """Spans of the tests of `if FLAG:` (a bare name or attribute, no else) whose body only logs."""
    out = []
    for n in module_nodes(tree):
        if isinstance(n, ast.If) and not n.orelse and isinstance(n.test, (ast.Name, ast.Attribute)) and all(
                isinstance(s, ast.Expr) and isinstance(s.value, ast.Call) and (ast_dotted(s.value.func) or "")
                .rsplit(".", 1)[-1] in MESSAGE_CALLS for s in n.body):
            out.append(node_span(n.test))
    return out


def _uncalled_setup_helpers(tree: ast.Module, rel: str) -> list[tuple[int, int, int, int]]:
    """Spans of the module-level functions of a setup.py that the file never names (a script nothing imports)."""
    if rel.rsplit("/", 1)[-1] != "setup.py":
        return []
    loaded = _loaded_names(tree)
    return [node_span(n) for n in tree.body if isinstance(n, ast.FunctionDef) and n.name not in loaded]


_BUILD_BASES = ("build_ext", "BuildExtension")
_BUILD_STEPS = frozenset({"run", "build_extension", "build_extensions"})
_TOLERANT_NOTE = ("a build whose extension failures the script tolerates (its build_ext class catches them, or the "
                  "extension is optional=True): on Ascend the install goes on without it and the code runs without "
                  "its kernels")


def _swallows_build_errors(cls: ast.ClassDef) -> bool:
    """A build step of the class calls its base's step inside `try:` with a handler that raises nothing."""
    for fn in cls.body:
        if not isinstance(fn, ast.FunctionDef) or fn.name not in _BUILD_STEPS:
            continue
        for t in walk_list(fn):
            if isinstance(t, ast.Try) and any(
                    isinstance(c, ast.Call) and isinstance(c.func, ast.Attribute) and c.func.attr in _BUILD_STEPS
                    for s in t.body for c in walk_list(s)) and any(
                    not any(isinstance(x, ast.Raise) for x in walk_list(h)) for h in t.handlers):
                return True
    return False


def _tolerant_build(tree: ast.Module) -> bool:
    """The script's extension builds may fail without failing the install: a build_ext subclass it names swallows
    the errors, or every extension it declares is `optional=True`."""
    loaded = _loaded_names(tree)
    for n in module_nodes(tree):
        if isinstance(n, ast.ClassDef) and n.name in loaded and _swallows_build_errors(n) and any(
                (ast_dotted(b) or "").rsplit(".", 1)[-1] in _BUILD_BASES for b in n.bases):
            return True
    exts = [n for n in module_nodes(tree) if isinstance(n, ast.Call)
            and (ast_dotted(n.func) or "").rsplit(".", 1)[-1] in ("Extension", "CUDAExtension", "CppExtension")]
    return bool(exts) and all(any(k.arg == "optional" and isinstance(k.value, ast.Constant) and k.value.value is True
                                  for k in e.keywords) for e in exts)


def _metadata_stats(tree: ast.Module) -> list[tuple[int, int, int, int]]:
    """Spans of `.tolist()` calls on dataset metadata statistics: a receiver read from `<meta>.stats[...]` directly or
    through a name bound to it (`stats = dataset_meta.stats[k]; stats["std"].tolist()`)."""
    def from_stats(node: ast.AST) -> bool:
        while isinstance(node, ast.Subscript):
            node = node.value
        dotted = ast_dotted(node) or ""
        return dotted.endswith("meta.stats") or dotted.endswith("_meta.stats")

    bound = {t.id for n in module_nodes(tree) if isinstance(n, ast.Assign) and from_stats(n.value)
             for t in n.targets if isinstance(t, ast.Name)}
    out = []
    for n in module_nodes(tree):
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "tolist":
            root = n.func.value
            while isinstance(root, ast.Subscript):
                root = root.value
            if from_stats(n.func.value) or isinstance(root, ast.Name) and root.id in bound:
                out.append(node_span(n))
    return out


# probes whose every release answers True with torch_npu (sources in rules/attention_transformers_fa.yaml)
_ASCEND_AWARE_PROBES = {"transformers.modeling_flash_attention_utils": "is_flash_attn_available"}
_PROBE_RULE = "NPU391"


def _ascend_aware_probe_names(tree: ast.Module) -> set[str]:
    """Local names bound to an Ascend-aware probe (`from transformers.modeling_flash_attention_utils import
    is_flash_attn_available`), anywhere in the file."""
    return {a.asname or a.name for n in module_nodes(tree) if isinstance(n, ast.ImportFrom) and n.module in
            _ASCEND_AWARE_PROBES for a in n.names if a.name == _ASCEND_AWARE_PROBES[n.module]}


_NPU_WORDS = ("npu", "cann", "ascend")
_SIBLING_NOTE = ("a probe beside the file's own NPU probe of the same shape (`is_cann_available` beside "
                 "`is_cuda_available`): on Ascend this one answers False and the NPU one picks the device")
_CUDA_PROBE_RULE = "NPU030"


def _probes_with_npu_siblings(tree: ast.Module) -> set[str]:
    """Names of the file's own functions or methods named for CUDA or the GPU (`is_cuda_available`) that have a
    sibling of the same name named for the NPU (`is_cann_available`, `is_npu_available`): one member of a per-backend
    set of probes (RapidOCR's ONNX Runtime provider config, pd41)."""
    names = {n.name for n in module_nodes(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
    out = set()
    for name in names:
        for word in ("cuda", "gpu"):
            if word in name and any(name.replace(word, npu) in names for npu in _NPU_WORDS):
                out.add(name)
    return out


# switches that only change speed (TF32 matmuls / convolutions, cuDNN's autotuner): lead decision 39
_SPEED_SWITCHES = ("torch.backends.cuda.matmul.allow_tf32", "torch.backends.cudnn.allow_tf32",
                   "torch.backends.cudnn.benchmark", "torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction",
                   "torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction")
_SPEED_CALLS = ("torch.set_float32_matmul_precision",)
# a name the value of a CUDA check goes to that makes it a device choice, whatever numbers it picks between
_DEVICE_WORD = re.compile(r"(?i)gpu|cuda|device|rank|accelerator|world|node")
# keyword options that only change speed: AMP (the run stays in fp32 without it), pinned host memory
_SPEED_KEYWORDS = frozenset({"use_amp", "amp", "pin_memory"})
_SPEED_NOTE = ("a CUDA check whose only effect is a speed setting (TF32 / cuDNN autotuning, AMP, pinned memory, a "
               "batch size or tolerance, where a checkpoint copied into a model is staged, where a computation runs "
               "whose results return to its input's device): on Ascend the setting is "
               "skipped or takes its other value and the code runs, only differently (lead decision 39)")


# CUDA calls that only measure (a timer's sync, the memory statistics): pd48, lead decision 39's reading
_MEASURE_CALLS = frozenset({"torch.cuda.synchronize", "torch.cuda.reset_peak_memory_stats",
                            "torch.cuda.reset_max_memory_allocated", "torch.cuda.reset_accumulated_memory_stats",
                            "torch.cuda.max_memory_allocated", "torch.cuda.memory_allocated",
                            "torch.cuda.max_memory_reserved", "torch.cuda.memory_reserved"})
_MEASURE_NOTE = ("a CUDA check whose only effect is a measurement or a warm-up (a sync before a timer, the memory "
                 "statistics, a run on dummy inputs): on Ascend the code runs and only the measurement or the first "
                 "call's speed differs; port the check with its body")


def _speed_switches_only(body: list[ast.stmt]) -> bool:
    """Whether each statement sets a speed switch (`_SPEED_SWITCHES`, `_SPEED_CALLS`) or is an `if` without an else
    whose body does only that (tq40: the AUTOMATIC1111 UI's `enable_tf32`, `if cuda_no_autocast():
    torch.backends.cudnn.benchmark = True` beside the TF32 switches)."""
    return all(
        isinstance(s, ast.Assign) and all((ast_dotted(t) or "") in _SPEED_SWITCHES for t in s.targets) or
        isinstance(s, ast.Expr) and isinstance(s.value, ast.Call) and ast_dotted(s.value.func) in _SPEED_CALLS or
        isinstance(s, ast.If) and not s.orelse and _speed_switches_only(s.body)
        for s in body)


# what a loaded state dict is read through when its tensors are only copied into a model's own parameters
_STATE_COPIES = frozenset({"load_state_dict", "copy_"})
_MAPPING_READS = frozenset({"items", "keys", "values", "get"})
# the entries of a Lightning checkpoint that hold no tensors (hyperparameters, counters, versions; Lightning's
# "Checkpointing" guide, https://lightning.ai/docs/pytorch/stable/common/checkpointing_intermediate.html, lists the
# checkpoint's contents): read from a checkpoint loaded to the CPU they are the same values (tq41: careamics'
# `load_pretrained` reads `checkpoint["hyper_parameters"]`, then copies the rest into the model)
_CHECKPOINT_METADATA = frozenset({"hyper_parameters", "hparams_name", "epoch", "global_step",
                                  "pytorch-lightning_version"})


def _staging_checks(tree: ast.Module) -> list[ast.expr]:
    """The tests of `device = "cuda" if torch.cuda.is_available() else "cpu"` in a function that reads `device` only
    as `torch.load(path, map_location=device)`, and reads the loaded state dict only to copy it into a model
    (`load_state_dict(sd)`, `param.copy_(sd[k])`, `for k in sd`, `sd.items()`): the check only picks where the
    checkpoint is staged on its way into parameters that live where the model was built; on Ascend it is staged on
    the CPU and the result is the same (tq40: DeepLabCut's `load_param`, lead decision 39). A loaded object used any
    other way (a pickled module called, `.to(...)`) keeps the check's error: the map location is then its device."""
    out: list[ast.expr] = []
    for fn in module_nodes(tree):
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        nodes = list(walk_list(fn))
        for stmt in nodes:
            if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)):
                continue
            value = stmt.value
            if isinstance(value, ast.Call) and ast_dotted(value.func) == "torch.device" and len(value.args) == 1 \
                    and not value.keywords:
                value = value.args[0]   # `torch.device("cuda:0" if torch.cuda.is_available() else "cpu")` (tq41)
            if not (isinstance(value, ast.IfExp) and _is_availability_check(value.test)
                    and all(isinstance(a, ast.Constant) and isinstance(a.value, str) for a in (value.body, value.orelse))):
                continue
            name = stmt.targets[0].id
            reads = [n for n in nodes if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load)]
            loads = [n for n in nodes if isinstance(n, ast.Call) and (ast_dotted(n.func) or "").endswith("load")
                     and any(k.arg == "map_location" and isinstance(k.value, ast.Name) and k.value.id == name
                             for k in n.keywords)]
            if reads and len(reads) == len(loads) and all(_copied_only(nodes, load) for load in loads):
                out.append(value.test)
        out += [stmt.test for stmt in nodes if isinstance(stmt, ast.If) and _staging_arms(stmt, nodes)]
    return out


def _staging_arms(stmt: ast.If, nodes: list[ast.AST]) -> bool:
    """`if torch.cuda.is_available() and self.use_gpu: sd = torch.load(path)` / `else: sd = torch.load(path,
    map_location="cpu")`, `sd` only copied into a model (`_copied_only`): the two arms load the same checkpoint and
    differ only in where it is staged (MASR's `export`; tq46b), as `_staging_checks`' conditional device does."""
    # (a log line beside each load says which arm ran, WeNet's `logging.info('... for GPU')`: it changes nothing; tq51a)
    body, orelse = ([s for s in arm if not _log_line(s)] for arm in (stmt.body, stmt.orelse))
    if len(body) != 1 or len(orelse) != 1 or not any(
            isinstance(c, ast.Call) and ast_dotted(c.func) == "torch.cuda.is_available" for c in walk_list(stmt.test)):
        return False
    arms = [a for a in (body[0], orelse[0]) if isinstance(a, ast.Assign) and len(a.targets) == 1
            and isinstance(a.value, ast.Call) and (ast_dotted(a.value.func) or "").endswith("load")]
    names = {a.targets[0].id for a in arms if isinstance(a.targets[0], ast.Name)}
    if len(arms) != 2 or len(names) != 1 or not all(isinstance(a.targets[0], ast.Name) for a in arms):
        return False

    def without_location(call: ast.Call) -> str:
        return ast.dump(ast.Call(func=call.func, args=call.args,
                                 keywords=[k for k in call.keywords if k.arg != "map_location"]))

    calls = [a.value for a in arms if isinstance(a.value, ast.Call)]
    return without_location(calls[0]) == without_location(calls[1]) and \
        any(k.arg == "map_location" for c in calls for k in c.keywords) and all(_copied_only(nodes, c) for c in calls)


def _log_line(stmt: ast.stmt) -> bool:
    """A statement that only prints or logs (`logging.info(...)`, `print(...)`, `logger.warning(...)`)."""
    return isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) and \
        _PRINTS.search(ast_dotted(stmt.value.func) or "") is not None


def _copied_only(nodes: list[ast.AST], load: ast.Call) -> bool:
    """Whether `sd = torch.load(...)` binds a name whose every read copies it into a model (`_staging_checks`)."""
    bound = next((n.targets[0].id for n in nodes if isinstance(n, ast.Assign) and n.value is load
                  and len(n.targets) == 1 and isinstance(n.targets[0], ast.Name)), None) or \
        next((n.target.id for n in nodes if isinstance(n, ast.AnnAssign) and n.value is load
              and isinstance(n.target, ast.Name)), None)     # `checkpoint: dict = torch.load(...)`
    if bound is None:
        return False
    reads = [n for n in nodes if isinstance(n, ast.Name) and n.id == bound and isinstance(n.ctx, ast.Load)]
    allowed: set[int] = set()
    for n in nodes:
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in _STATE_COPIES:
            allowed.update(id(a) for a in n.args)
            allowed.update(id(a.value) for a in n.args if isinstance(a, ast.Subscript))
        elif isinstance(n, (ast.For, ast.comprehension)):
            allowed.add(id(n.iter))
        elif isinstance(n, ast.Attribute) and n.attr in _MAPPING_READS:
            allowed.add(id(n.value))
        elif isinstance(n, ast.Subscript) and (_str(n.slice) or "") in _CHECKPOINT_METADATA:
            allowed.add(id(n.value))
    return bool(reads) and all(id(r) in allowed for r in reads)


def _speed_gates(tree: ast.Module) -> list[tuple[int, int, int, int]]:
    """Spans of CUDA checks whose only effect is a speed setting (lead decision 39):

    - the test of `if ... torch.cuda.is_available(): <speed switches only>` without an else (Genie-Envisioner's
      `if self.args.allow_tf32 and torch.cuda.is_available(): torch.backends.cuda.matmul.allow_tf32 = True`, pd41);
    - the test of `64 if torch.cuda.is_available() else 8`, both arms number literals (a batch size, a worker count,
      a timing tolerance; heldout36's infinity tests): on Ascend the other number applies and the code runs;
    - `use_amp=torch.cuda.is_available()` passed to a speed option (`_SPEED_KEYWORDS`; heldout36's
      sentence-transformers `model.fit(..., use_amp=torch.cuda.is_available())`): AMP or pinned memory is off on
      Ascend, the code runs in fp32 / unpinned, only slower."""
    spans = [node_span(n.test) for n in _cuda_checks(tree) if _speed_switches_only(n.body)]
    devices = {id(n.value) for n in module_nodes(tree) if isinstance(n, ast.keyword) and _DEVICE_WORD.search(
        n.arg or "") or isinstance(n, ast.Assign) and any(_DEVICE_WORD.search(ast.unparse(t)) for t in n.targets)}
    spans += [node_span(test) for test in _staging_checks(tree)]
    spans += [node_span(check.test) for check in _round_trips(tree)]
    for n in module_nodes(tree):
        if isinstance(n, ast.IfExp) and _is_availability_check(n.test) and _positive_number(n.body) \
                and _positive_number(n.orelse) and id(n) not in devices:
            spans.append(node_span(n.test))
    return spans + [node_span(v) for v in _speed_settings(tree) if _is_availability_check(v)]


def _speed_settings(tree: ast.Module) -> list[ast.expr]:
    """The values given to a speed option (`_SPEED_KEYWORDS`): a keyword argument (`pin_memory=...`), a stored
    setting (`cfg.pin_memory = ...`, `params["pin_memory"] = ...`) or a dict entry (`{"pin_memory": ...}`)."""
    out: list[ast.expr] = []
    for n in module_nodes(tree):
        if isinstance(n, ast.keyword) and n.arg in _SPEED_KEYWORDS:
            out.append(n.value)
        elif isinstance(n, ast.Assign) and any(_setting_name(t) in _SPEED_KEYWORDS for t in n.targets):
            out.append(n.value)
        elif isinstance(n, ast.Dict):
            out += [v for k, v in zip(n.keys, n.values) if k is not None and (_str(k) or "").lower() in _SPEED_KEYWORDS]
    return out


def _speed_compares(tree: ast.Module) -> list[tuple[int, int, int, int]]:
    """Spans of `device.type == "cuda"` given to a speed option (`pin_memory=device.type == "cuda"`, GiGL's sampling
    worker options; tq58b): on Ascend the comparison is False, the option stays off and the code runs, only slower
    (lead decision 39, as `pin_memory=torch.cuda.is_available()`)."""
    return [node_span(v) for v in _speed_settings(tree) if isinstance(v, ast.Compare) and len(v.ops) == 1
            and isinstance(v.ops[0], ast.Eq) and any(_str(c) == "cuda" for c in (v.left, *v.comparators))]


def _moved_to_cuda(stmt: ast.stmt) -> bool:
    """`x = x.to(device="cuda")`, `x = x.to("cuda")`, `x = x.cuda()`: a name rebound to its own copy on CUDA."""
    if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)):
        return False
    call = stmt.value
    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and isinstance(call.func.value, ast.Name)
            and call.func.value.id == stmt.targets[0].id):
        return False
    if call.func.attr == "cuda":
        return True
    where = [*call.args, *(k.value for k in call.keywords if k.arg == "device")]
    return call.func.attr == "to" and len(where) == 1 and _str(where[0]) == "cuda"


def _round_trips(tree: ast.Module) -> list[ast.If]:
    """`if torch.cuda.is_available(): x = x.to(device="cuda")` (no else; only such moves) in a function that saved the
    device its input came from (`current_device = sigma_grid.device`) and moves its results back there after the check
    (`cdf.to(device=current_device)`): CUDA only speeds up a computation whose results land where they would anyway
    (bioemu's IGSO3 lookup table; tq51a, lead decision 39). On Ascend the computation runs on the input's device."""
    out = []
    for fn in module_nodes(tree):
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        nodes = list(walk_list(fn))
        saved = {t.id for n in nodes if isinstance(n, ast.Assign) and isinstance(n.value, ast.Attribute)
                 and n.value.attr == "device" for t in n.targets if isinstance(t, ast.Name)}
        if not saved:
            continue
        back = [n.lineno for n in nodes if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
                and n.func.attr == "to" and any(isinstance(a, ast.Name) and a.id in saved
                                                for a in (*n.args, *(k.value for k in n.keywords)))]
        out += [n for n in nodes if isinstance(n, ast.If) and not n.orelse and n.body
                and all(_moved_to_cuda(b) for b in n.body) and isinstance(n.test, ast.Call)
                and _is_availability_check(n.test)
                and any(line > (n.end_lineno or n.lineno) for line in back)]
    return out


def _setting_name(target: ast.expr) -> str | None:
    """The name of the setting an assignment stores (tq41): `params["pin_memory"]` (careamics' DataConfig validator),
    `cfg.pin_memory`, `PIN_MEMORY` -> pin_memory; None for any other target."""
    if isinstance(target, ast.Subscript):
        return (_str(target.slice) or "").lower() or None
    if isinstance(target, ast.Attribute):
        return target.attr.lower()
    return target.id.lower() if isinstance(target, ast.Name) else None



# the context managers that pick which SDPA kernels may run (flash / memory-efficient / math): a speed setting
_SDP_KERNEL_CALLS = ("sdp_kernel", "sdpa_kernel")
_SDP_CHECK_SYMBOLS = frozenset({"torch.cuda.is_available", "is_cuda"})
_SDP_NOTE = ("a CUDA check whose only effect is which SDPA kernels `sdp_kernel` allows (lucidrains' Attend: the A100 "
             "flash configuration): on Ascend the other configuration applies and F.scaled_dot_product_attention "
             "runs, only at another speed (lead decision 39)")
_PRINTS = re.compile(r"(?:^|\.)(?:print\w*|warn\w*|info|debug|log)$")


def _value_key(node: ast.expr, scope: int) -> tuple | None:
    """What a store or load names: `self.X` (any method of the module), or a local name of one function."""
    if (attr := self_attr(node)) is not None:
        return ("self", attr)
    return ("local", scope, node.id) if isinstance(node, ast.Name) else None


def _sdp_config_flow(tree: ast.Module) -> tuple[set[tuple], dict[int, tuple], list[ast.FunctionDef | ast.AsyncFunctionDef]]:
    """(the names whose every read ends in the arguments of an `sdp_kernel(...)` call, {id(value node): the name
    a simple or tuple assignment binds it to}, the module's functions). A name qualifies when each read is in those
    arguments, in the value of an assignment to such names, or in the test of an `if` whose body only assigns them
    (`config = self.cuda_config if is_cuda else self.cpu_config`, `if is_cuda and q.dtype != fp16: config = ...`)."""
    fns = [n for n in module_nodes(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    reads: dict[tuple, list[ast.AST]] = {}      # key -> the statement or call that holds each read
    bound: dict[int, tuple] = {}
    stores: dict[tuple, list[ast.stmt]] = {}
    for fn in fns:
        scope = id(fn)
        for stmt in walk_list(fn):
            if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
                target, value = stmt.targets[0], stmt.value
                pairs = [(target, value)]
                if isinstance(target, ast.Tuple) and isinstance(value, ast.Tuple):
                    # `_, heads, is_cuda, device = *q.shape, q.is_cuda, q.device`: the names after the last starred
                    # value pair up from the end
                    tail = [v for v in value.elts[::-1]]
                    cut = next((i for i, v in enumerate(tail) if isinstance(v, ast.Starred)), len(tail))
                    pairs = list(zip(target.elts[::-1][:cut], tail[:cut]))
                for t, v in pairs:
                    key = _value_key(t, scope)
                    if key is not None:
                        bound[id(v)] = key
                for stored in ast.walk(target):
                    key = _value_key(stored, scope) if isinstance(stored, (ast.Name, ast.Attribute)) else None
                    if key is not None:
                        stores.setdefault(key, []).append(stmt)
            if isinstance(stmt, (ast.Name, ast.Attribute)) and isinstance(stmt.ctx, ast.Load):
                key = _value_key(stmt, scope)
                if key is not None:
                    reads.setdefault(key, []).append(stmt)
    parents = parents_of(tree)

    def holder(node: ast.AST) -> ast.AST | None:
        """The sdp_kernel call, assignment or if-test a read sits in, or None."""
        child, node_ = node, parents.get(id(node))
        while node_ is not None:
            if isinstance(node_, ast.Call) and child is not node_.func and \
                    (ast_dotted(node_.func) or "").rsplit(".", 1)[-1] in _SDP_KERNEL_CALLS:
                return node_
            if isinstance(node_, ast.Assign) and child is node_.value or isinstance(node_, ast.If) and child is node_.test:
                return node_
            if isinstance(node_, ast.stmt):
                return None
            child, node_ = node_, parents.get(id(node_))
        return None

    config = {k for k in reads if k in stores}
    changed = True
    while changed:
        changed = False
        for key in list(config):
            for read in reads[key]:
                h = holder(read)
                ok = isinstance(h, ast.Call) or isinstance(h, ast.Assign) and _assigns_only(h, config) or \
                    isinstance(h, ast.If) and _configures(h.body, config) and _configures(h.orelse, config)
                if not ok:
                    config.discard(key)
                    changed = True
                    break
    return config, bound, fns


def _assigns_only(stmt: ast.stmt, config: set[tuple]) -> bool:
    """An assignment whose every target is one of `config` (keys in any function: `self.X`, or a local)."""
    if not isinstance(stmt, ast.Assign):
        return False
    names = [n.attr if isinstance(n, ast.Attribute) else n.id for target in stmt.targets for n in ast.walk(target)
             if isinstance(n, ast.Attribute) or isinstance(n, ast.Name) and n.id != "self"]
    return bool(names) and all(any(k[-1] == name for k in config) for name in names)


def _prints(stmt: ast.stmt) -> bool:
    return isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) and \
        bool(_PRINTS.search(ast_dotted(stmt.value.func) or ""))


def _sdp_config_checks(tree: ast.Module) -> list[tuple[int, int, int, int]]:
    """Spans of CUDA checks whose only effect is the `sdp_kernel` configuration (lucidrains' Attend, copied into
    python-audio-separator, rvc-cli and miles-credit; heldout36 / heldout33): `if not torch.cuda.is_available() or
    not flash: return` in `__init__` with nothing after it but stores of the configuration and prints, and `q.is_cuda`
    bound to a name that only picks it (`config = self.cuda_config if is_cuda else self.cpu_config`)."""
    if not any(isinstance(n, ast.Call) and (ast_dotted(n.func) or "").rsplit(".", 1)[-1] in _SDP_KERNEL_CALLS
               for n in module_nodes(tree)):
        return []
    config, bound, fns = _sdp_config_flow(tree)
    if not config:
        return []
    spans = []
    for fn in fns:
        for i, stmt in enumerate(fn.body):
            if isinstance(stmt, ast.If) and not stmt.orelse and len(stmt.body) == 1 and \
                    isinstance(stmt.body[0], ast.Return) and stmt.body[0].value is None and any(
                    isinstance(c, ast.expr) and _is_availability_check(c) for c in walk_list(stmt.test)) and \
                    len(fn.body) > i + 1 and _configures(fn.body[i + 1:], config):
                spans.append(node_span(stmt.test))
    spans += [node_span(n) for n in module_nodes(tree) if isinstance(n, ast.Attribute) and n.attr == "is_cuda"
              and bound.get(id(n)) in config]
    return spans


def _configures(block: list[ast.stmt], config: set[tuple]) -> bool:
    """Statements (none, or an `if` / `else` of them) that only store the `sdp_kernel` configuration, or locals
    only it reads, and print."""
    return all(_assigns_only(s, config) or _prints(s) or isinstance(s, ast.If) and _configures(s.body, config)
               and _configures(s.orelse, config) for s in block)

def _is_availability_check(node: ast.expr) -> bool:
    """`torch.cuda.is_available()`, alone or negated."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        node = node.operand
    return isinstance(node, ast.Call) and ast_dotted(node.func) == "torch.cuda.is_available"


def _positive_number(node: ast.expr | None) -> bool:
    """A positive int or float literal (`8`, `1.6`): a size or a tolerance, where `0` / `-1` name the CPU or no GPU
    (`device=0 if torch.cuda.is_available() else -1`, `gpus=1 if ... else 0`: device choices, which keep their error)."""
    return isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and \
        not isinstance(node.value, bool) and node.value > 0


def _cuda_checks(tree: ast.Module) -> list[ast.If]:
    """`if ... torch.cuda.is_available(): ...` statements without an else."""
    return [n for n in module_nodes(tree) if isinstance(n, ast.If) and not n.orelse and any(
        isinstance(c, ast.Call) and ast_dotted(c.func) == "torch.cuda.is_available" for c in walk_list(n.test))]


def _measure_gates(tree: ast.Module) -> list[tuple[int, int, int, int]]:
    """Spans of the tests of `if torch.cuda.is_available(): torch.cuda.synchronize()` (or the memory statistics,
    their locals and prints of them) without an else, where no name the body sets is read outside it: the check
    only skips a measurement on Ascend (LLMs-from-scratch's timers and peak-memory prints, pd48)."""
    checks = [n for n in _cuda_checks(tree) if all(_measures(s) for s in n.body) or _warms_up(n.body)]
    beside: dict[int, list[ast.stmt]] = {}
    if checks:
        for parent in module_nodes(tree):
            for name in ("body", "orelse", "finalbody"):
                block = getattr(parent, name, None)
                if isinstance(block, list):
                    for i, s in enumerate(block):
                        if isinstance(s, ast.If):
                            beside[id(s)] = block[max(i - 1, 0):i] + block[i + 1:i + 2]
    gates = []
    for n in checks:
        called = {ast_dotted(c.func) for s in n.body for c in walk_list(s) if isinstance(c, ast.Call)}
        # a sync counts only beside a clock read (`t0 = time.perf_counter()`): a sync before loading a state dict
        # is no measurement (molmo's checkpointer)
        if _warms_up(n.body) or called & (_MEASURE_CALLS - {"torch.cuda.synchronize"}) or \
                "torch.cuda.synchronize" in called and any(
                _reads_clock(s) for s in beside.get(id(n), [])):
            gates.append(n)
    if not gates:
        return []
    scopes = [s for s in module_nodes(tree) if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))]
    return [node_span(n.test) for n in gates if not _read_after(n, next(
        (s for s in reversed(scopes) if s.lineno < n.lineno <= (s.end_lineno or 0)), tree))]


def _read_after(gate: ast.If, scope: ast.AST) -> bool:
    """Whether a name the gate's body sets is read below it in its function (the module for a module-level gate)
    before the function sets it again (OpenAvatarChat's `t0 = time.time()`, set again before each later read)."""
    names = {t.id for s in gate.body if isinstance(s, ast.Assign) for t in s.targets if isinstance(t, ast.Name)}
    end = gate.end_lineno or gate.lineno
    uses = sorted(((x.lineno, isinstance(x.ctx, ast.Store), x.id) for x in walk_list(scope)
                   if isinstance(x, ast.Name) and x.id in names and x.lineno > end))     # a line's loads first
    live = set(names)
    for _, store, name in uses:
        if store:
            live.discard(name)
        elif name in live:
            return True
    return False


# calls that build a dummy input (`np.zeros(16000)`, `torch.randn(1, 3, 224, 224)`)
_DUMMY_MAKERS = frozenset({"zeros", "ones", "empty", "full", "rand", "randn", "randint", "zeros_like", "ones_like",
                           "empty_like", "rand_like", "randn_like"})


def _warms_up(body: list[ast.stmt]) -> bool:
    """A body that only runs the code once on dummy inputs it builds, beside measurements and logs (OpenAvatarChat's
    thread warm-up: `dummy_audio = np.zeros(sr)`, `self._avatar.extract_whisper_feature(dummy_audio, sr)`, a sync
    and a timed log; pd50): skipping it on Ascend only makes the first real call slower."""
    dummies: set[str] = set()
    warmed = False
    for stmt in body:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name) and (
                isinstance(stmt.value, ast.Constant) or _reads_clock(stmt) or isinstance(stmt.value, ast.Call) and
                (ast_dotted(stmt.value.func) or "").rsplit(".", 1)[-1] in _DUMMY_MAKERS):
            dummies.add(stmt.targets[0].id)
            continue
        if _measures(stmt):
            continue
        args = [*stmt.value.args, *(k.value for k in stmt.value.keywords)] \
            if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) else []
        if any(isinstance(a, ast.Name) and a.id in dummies for a in args) and all(
                isinstance(a, ast.Constant) or isinstance(a, ast.Name) and a.id in dummies for a in args):
            warmed = True
            continue
        return False
    return warmed


def _reads_clock(stmt: ast.stmt) -> bool:
    """The statement calls a clock (`time.time()`, `time.perf_counter()`, `ttime()`, `timer()`)."""
    return any(isinstance(c, ast.Call) and ((ast_dotted(c.func) or "").rsplit(".", 1)[-1].endswith(("time", "timer"))
                                            or (ast_dotted(c.func) or "").endswith(("perf_counter", "perf_counter_ns",
                                                                                     "monotonic", "time_ns")))
               for c in walk_list(stmt))


def _measures(stmt: ast.stmt) -> bool:
    """A measuring call, a print or log call, or a local set from the measurements (`mem = torch.cuda.
    max_memory_allocated() / 1e9`)."""
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
        name = ast_dotted(stmt.value.func) or ""
        return name in _MEASURE_CALLS or name.rsplit(".", 1)[-1] in MESSAGE_CALLS
    if isinstance(stmt, ast.Assign) and all(isinstance(t, ast.Name) for t in stmt.targets):
        return all(ast_dotted(c.func) in _MEASURE_CALLS for c in walk_list(stmt.value) if isinstance(c, ast.Call))
    return False


_OFF_NOTE = ("a device compare whose non-CUDA branch only turns a CUDA-only option off (`if device_type != \"cuda\": "
             "use_fa3 = False`): on Ascend the option is off and the fallback runs, only slower (lead decision 39)")


def _set_if_unset_reads(tree: ast.Module) -> list[tuple[int, int, int, int]]:
    """Spans of the tests of `if os.environ.get("X"): return` (also `"X" in os.environ`) at the top of a function that
    sets `os.environ["X"] = ...` later in its body (exllamav3's `maybe_set_arch_list_env`, tq58b): the read only
    leaves a value the user set in place; the line that sets the variable carries the finding."""
    out = []
    for fn in module_nodes(tree):
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        sets = {(env_read_key(t), n.lineno) for n in walk_list(fn) if isinstance(n, ast.Assign)
                for t in n.targets if isinstance(t, ast.Subscript)}
        for stmt in fn.body:
            if not (isinstance(stmt, ast.If) and not stmt.orelse and len(stmt.body) == 1
                    and isinstance(stmt.body[0], ast.Return) and stmt.body[0].value is None):
                continue
            test = stmt.test
            key = env_membership(test) or (env_read_key(test) if isinstance(test, ast.Call) else None)
            if key and any(k == key and line > stmt.lineno for k, line in sets):
                out.append(node_span(test))
    return out


def _off_switch_compares(tree: ast.Module) -> list[tuple[int, int, int, int]]:
    """Spans of the tests of `if <x> != "cuda":` whose body only sets names or attributes to a false constant (tabicl's
    FA3 switch, pd43): what the CUDA branch picks is an option with a fallback, and the test keeps it off elsewhere."""
    out = []
    for n in module_nodes(tree):
        if isinstance(n, ast.If) and isinstance(n.test, ast.Compare) and len(n.test.ops) == 1 \
                and isinstance(n.test.ops[0], ast.NotEq) and "cuda" in (_str(n.test.comparators[0]) or "") \
                and n.body and all(isinstance(b, ast.Assign) and isinstance(b.value, ast.Constant)
                                   and (b.value.value is False or b.value.value is None)
                                   and all(isinstance(t, (ast.Name, ast.Attribute)) for t in b.targets)
                                   for b in n.body):
            out.append(node_span(n.test))
    return out


# the categories of the environment-variable rules a set-if-unset read may carry (NPU021 device, NPU367 kernel)
_ENV_CATEGORIES = frozenset({"device", "kernel"})
_SET_IF_UNSET_NOTE = ("read only to leave a value the user set in place: the function sets the variable itself "
                      "further down, and that line is the one to port")


# implementations a kernel switch falls back to (`backend = "torch"`): names of code paths, not devices
_IMPLEMENTATIONS = frozenset({"torch", "triton", "native", "python", "naive", "ref", "reference", "eager", "vanilla",
                              "pytorch"})


def _implementation_fallbacks(tree: ast.Module) -> list[tuple[int, int, int, int]]:
    """Spans of the "cuda" of `if backend == "cuda" and ...:` whose body sets `backend` to an implementation's name
    (`backend = "torch"`; tirex's `load_model`, pd43): "cuda" names the library's own kernels (lead decision 15), and
    this test only picks the fallback, which runs on Ascend; the dispatch on the value carries the kernel finding."""
    out = []
    for n in module_nodes(tree):
        if not isinstance(n, ast.If):
            continue
        set_to = {t.id for b in n.body if isinstance(b, ast.Assign) and (_str(b.value) or "") in _IMPLEMENTATIONS
                  for t in b.targets if isinstance(t, ast.Name)}
        for c in walk_list(n.test):
            if set_to and isinstance(c, ast.Compare) and len(c.ops) == 1 and isinstance(c.ops[0], ast.Eq) \
                    and isinstance(c.left, ast.Name) and c.left.id in set_to and _str(c.comparators[0]) == "cuda":
                out.append(node_span(c.comparators[0]))
    return out


_CHOICE_NOTE = ("an entry of a list of alternatives the code picks from by name (`for cls in [nn.LSTM, nn.RNN, "
                "nn.GRU]: if cls.__name__ == rnn_type`): the option that picks it chooses")


def _named_choices(tree: ast.Module) -> list[tuple[int, int, int, int]]:
    """Spans of the lists of classes a loop picks one from by its name (`for c in self.rnn_list: if c.__name__ ==
    self.rnn_type: ...`, the list a literal of names or attributes, bound in the file; EasyTPP's FullyNN, pd43)."""
    lists: dict[str, ast.List | ast.Tuple] = {}
    for n in module_nodes(tree):
        if isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.value, (ast.List, ast.Tuple)) \
                and len(n.value.elts) > 1 and all(isinstance(e, (ast.Name, ast.Attribute)) for e in n.value.elts):
            lists[ast.unparse(n.targets[0])] = n.value
    out = []
    for n in module_nodes(tree):
        if not (isinstance(n, ast.For) and isinstance(n.target, ast.Name)):
            continue
        table = n.iter if isinstance(n.iter, (ast.List, ast.Tuple)) else lists.get(ast.unparse(n.iter))
        if table is None or not all(isinstance(e, (ast.Name, ast.Attribute)) for e in table.elts):
            continue
        if any(isinstance(c, ast.Compare) and any(isinstance(x, ast.Attribute) and x.attr == "__name__" and isinstance(
                x.value, ast.Name) and x.value.id == n.target.id for x in (c.left, *c.comparators))
               for c in walk_list(n)):
            out.append(node_span(table))
    return out


_FALLBACK_NOTE = ("the default of a device option or parameter the code itself turns to the CPU when CUDA is absent "
                  "(`if not torch.cuda.is_available(): device = \"cpu\"`): on Ascend the run goes on on the CPU, "
                  "only slower; add the NPU to the choice")


def _cuda_default(node: ast.expr | None) -> bool:
    return (_str(node) or "").split(":")[0] == "cuda"


def _fallback_defaults(tree: ast.Module) -> list[tuple[int, int, int, int]]:
    """Spans of the "cuda" defaults of a device option (`parser.add_argument("--device", default="cuda")`) or of a
    function's device parameter (`def run(device="cuda")`) whose value the code sends to the CPU when CUDA is absent
    (tq41; echomimic_v2's infer scripts): `if device.__contains__("cuda") and not torch.cuda.is_available(): device =
    "cpu"` after `device = args.device`, `args.device = "cpu"` under such a test, or `device = args.device if
    torch.cuda.is_available() else "cpu"`. The value is read as an attribute of that name (the parsed option) or a
    name bound from one, or as the parameter itself in its function; a fallback test that reads no CUDA probe (a
    user's `--cpu` switch) is none."""
    options: dict[str, list[ast.expr]] = {}      # option dest -> its "cuda" defaults
    for n in module_nodes(tree):
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in _OPTION_MAKERS:
            default = next((k.value for k in n.keywords if k.arg == "default"), None)
            if not _cuda_default(default):
                continue
            dest = next((_str(k.value) for k in n.keywords if k.arg == "dest"), None) or next(
                (f.lstrip("-").replace("-", "_") for f in (_str(a) for a in n.args) if f and f.startswith("--")), None)
            if dest and default is not None and _DEVICE_CHOICE_OPTION_RE.search(dest):
                options.setdefault(dest, []).append(default)
    out = [node_span(d) for dest, defaults in options.items() if _falls_back(tree, dest, attribute=True)
           for d in defaults]
    for fn in module_nodes(tree):
        if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            args = [*fn.args.posonlyargs, *fn.args.args]
            pairs = list(zip(args[len(args) - len(fn.args.defaults):], fn.args.defaults)) + \
                [(a, d) for a, d in zip(fn.args.kwonlyargs, fn.args.kw_defaults) if d is not None]
            out += [node_span(d) for a, d in pairs if _cuda_default(d) and _DEVICE_CHOICE_OPTION_RE.search(a.arg)
                    and _falls_back(fn, a.arg, attribute=False)]
    return out


def _falls_back(scope: ast.AST, name: str, attribute: bool) -> bool:
    """Whether `scope` sends the value named `name` to the CPU when CUDA is absent (`_fallback_defaults`)."""
    holders = set() if attribute else {name}      # local names holding the value
    nodes = list(walk_list(scope))
    for n in nodes:
        if attribute and isinstance(n, ast.Assign) and isinstance(n.value, ast.Attribute) and n.value.attr == name:
            holders |= {t.id for t in n.targets if isinstance(t, ast.Name)}

    def holds(target: ast.expr) -> bool:
        return isinstance(target, ast.Name) and target.id in holders or \
            attribute and isinstance(target, ast.Attribute) and target.attr == name

    def probed(test: ast.expr) -> bool:
        return any(isinstance(c, ast.Call) and ast_dotted(c.func) in _CUDA_PROBES for c in walk_list(test))

    for n in nodes:
        if isinstance(n, ast.If) and probed(n.test) and any(
                isinstance(s, ast.Assign) and device_literal(s.value) == "cpu" and any(holds(t) for t in s.targets) for s in n.body):
            return True
        # `device = device if torch.cuda.is_available() else "cpu"`: the value itself on one arm, the CPU on the other
        # (`device = "cuda" if ... else "cpu"` under `if device is None:` fills a missing value: no fallback of the
        # default; tests/test_precision_t16e.py)
        if isinstance(n, ast.Assign) and isinstance(n.value, ast.IfExp) and probed(n.value.test) and \
                any(holds(t) for t in n.targets) and (device_literal(n.value.orelse) == "cpu" and holds(n.value.body)
                                                      or device_literal(n.value.body) == "cpu" and holds(n.value.orelse)):
            return True
    return False


# the CUDA probes a fallback to the CPU tests
_CUDA_PROBES = frozenset({"torch.cuda.is_available", "torch.cuda.device_count"})


def cpu_fallback_defaults(findings: list, code: str) -> list:
    """A notebook's findings with the "cuda" defaults its later cells send to the CPU (`_fallback_defaults`, read over
    the Python of all its cells: echomimic_v2's demo.ipynb parses `--device` in one cell and falls back in the next)
    at warning; each cell alone cannot see the fallback (and reads the option as unread: `unread-option`)."""
    if not any(f.code == "NPU003" and (f.severity == "error" or f.data.get("context") == "unread-option")
               for f in findings):
        return findings
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError):
        return findings
    spans = _fallback_defaults(tree)
    return [as_info(f, "cpu-fallback", _FALLBACK_NOTE, severity="warning")
            if f.code == "NPU003" and (f.severity == "error" or f.data.get("context") == "unread-option")
            and starts_in(f, spans) else f for f in findings]


_CONTIGUOUS_NOTE = ("a device check whose only effect is making tensors contiguous (transformers' SDPA workaround for "
                    "a CUDA memory-efficient-kernel bug, pytorch/pytorch#112577): on Ascend the copy is skipped and "
                    "F.scaled_dot_product_attention runs on the tensors as they are; nothing to port")


def _contiguous_only_checks(tree: ast.Module) -> list[tuple[int, int, int, int]]:
    """Spans of the tests of `if query_states.device.type == "cuda" and attention_mask is not None:` (no else) whose
    body only rebinds tensors to their contiguous copies (`query_states = query_states.contiguous()`): the SDPA
    workaround of transformers' attention classes, copied with their models (Qwen2-VL in VLM2Vec, Mistral in
    optimum-tpu, an OpenVINO export patch; tq41)."""
    out = []
    for n in module_nodes(tree):
        if isinstance(n, ast.If) and not n.orelse and n.body and all(
                isinstance(s, ast.Assign) and isinstance(s.value, ast.Call) and isinstance(s.value.func, ast.Attribute)
                and s.value.func.attr == "contiguous" and not s.value.args for s in n.body) and any(
                isinstance(c, ast.Compare) and any(_str(x) == "cuda" for x in c.comparators) and
                isinstance(c.left, ast.Attribute) and c.left.attr == "type" for c in walk_list(n.test)):
            out.append(node_span(n.test))
    return out


def _graph_constant_walks(tree: ast.Module) -> list[tuple[int, int, int, int]]:
    """Spans of loops over a TorchScript graph's nodes (`for node in graph.findAllNodes("prim::Constant"):`): OpenAI
    CLIP's `patch_device` (copied into open_clip, EVA-CLIP, anomalib's AI-VAD) finds the "cuda" device constants baked
    into a traced archive to overwrite them with the device the caller asked for (tq41); the "cuda" it tests is the
    archive's, and the rewrite is the port itself."""
    return [node_span(n) for n in module_nodes(tree) if isinstance(n, ast.For) and isinstance(n.iter, ast.Call) and
            isinstance(n.iter.func, ast.Attribute) and n.iter.func.attr == "findAllNodes"]


# a call of a helper named for CUDA (rules/device_named.yaml)
_HELPER_CALL_RULE = "NPU039"


def _recursive_calls(tree: ast.Module) -> list[tuple[int, int, int, int]]:
    """Spans of the calls a function makes of itself (`def _move_to_cuda(x): ... [_move_to_cuda(v) for v in x]`, or
    `self.to_cuda(v)` inside the method `to_cuda`; VLM2Vec's MTEB helper, tq41): the helper's own body holds what a
    port changes (its `.cuda()`), and the callers outside it carry the call's finding; the recursion adds nothing."""
    out = []
    for fn in module_nodes(tree):
        if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            out += [node_span(n.func) for n in walk_list(fn) if isinstance(n, ast.Call) and (
                isinstance(n.func, ast.Name) and n.func.id == fn.name or self_attr(n.func) == fn.name)]
    return out


def _gloo_group_calls(tree: ast.Module) -> list[tuple[int, int, int, int]]:
    """Spans of calls given `group=` a gloo process group (tq41; dLLM-RL's `gloo_group = dist.new_group(backend='gloo')`
    then `dist.scatter(..., group=gloo_group)`, the helpers `_get_global_gloo_group()` of detectron2-style `comm.py`
    copies): a collective on a gloo group runs on the host through gloo, never through NCCL or HCCL, so HCCL's
    behaviour is no concern of it. The group is a name the calling function binds to `new_group(..., backend="gloo")`
    or to the call of a function of the file that returns one (not a parameter: scepter's `all_to_all(x, ...,
    group=None)` takes any group), or such a call itself."""
    def gloo(call: ast.AST | None) -> bool:
        return isinstance(call, ast.Call) and (ast_dotted(call.func) or "").rsplit(".", 1)[-1] == "new_group" and any(
            k.arg == "backend" and _str(k.value) == "gloo" for k in call.keywords)

    makers = {fn.name for fn in module_nodes(tree) if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef))
              and any(isinstance(r, ast.Return) and gloo(r.value) for r in walk_list(fn))}

    def makes(value: ast.AST | None) -> bool:
        return gloo(value) or isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and \
            value.func.id in makers

    out = [node_span(n) for n in module_nodes(tree) if isinstance(n, ast.Call) and
           any(k.arg == "group" and makes(k.value) for k in n.keywords)]
    for fn in module_nodes(tree):
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        # a name the function itself binds to a gloo group (a parameter named `group` may be any group)
        nodes = list(walk_list(fn))
        names = {t.id for n in nodes if isinstance(n, ast.Assign) and makes(n.value)
                 for t in n.targets if isinstance(t, ast.Name)}
        names -= {a.arg for a in [*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs]}
        out += [node_span(n) for n in nodes if names and isinstance(n, ast.Call) and any(
            k.arg == "group" and isinstance(k.value, ast.Name) and k.value.id in names for k in n.keywords)]
    return out


# HCCL's limits on a group's size (NPU110): not a concern of a group another backend makes
_HCCL_SIZE_RULE = "NPU110"


def _gloo_inits(tree: ast.Module) -> list[tuple[int, int, int, int]]:
    """Spans of `init_process_group("gloo", world_size=3)` / `new_group(backend="gloo")` (tensordict's send / recv test
    server; tq44b): a group gloo runs on the host, where HCCL's world sizes do not apply."""
    def backend(call: ast.Call) -> str | None:
        arg = call.args[0] if call.args and (ast_dotted(call.func) or "").endswith("init_process_group") else \
            next((k.value for k in call.keywords if k.arg == "backend"), None)
        return _str(arg) if arg is not None else None

    return [node_span(n) for n in module_nodes(tree) if isinstance(n, ast.Call) and
            (ast_dotted(n.func) or "").rsplit(".", 1)[-1] in ("init_process_group", "new_group") and
            backend(n) in ("gloo", "mpi")]


# torch.distributed calls that move no tensor: set-up, queries, barriers and the collectives of picklable objects,
# which gloo runs on the host (https://pytorch.org/docs/stable/distributed.html: `all_gather_object` and the other
# object collectives pickle the object; with NCCL only, the pickled bytes go through the current CUDA device)
_OBJECT_DIST_CALLS = frozenset({"init_process_group", "destroy_process_group", "is_initialized", "is_available",
                                "get_rank", "get_world_size", "barrier", "all_gather_object", "gather_object",
                                "broadcast_object_list", "scatter_object_list"})
_OBJECT_COLLECTIVES = frozenset({"all_gather_object", "gather_object", "broadcast_object_list", "scatter_object_list"})
_OBJECT_GROUP_NOTE = ("the CUDA probe picks NCCL or gloo for a process group that only exchanges Python objects "
                      "(`all_gather_object`, ...); on Ascend it picks gloo, which serves those on the host: nothing "
                      "fails or differs")


def _object_group_choices(tree: ast.Module) -> list[tuple[int, int, int, int]]:
    """Spans of `init_process_group(backend="nccl" if torch.cuda.is_available() else "gloo")` in a module whose
    torch.distributed calls are all set-up, queries, barriers and object collectives (DataFlow-MM's video OCR scorer,
    whose model is PaddleOCR: it shards samples with DistributedSampler and gathers result lists with
    `all_gather_object`; tq55d, tuned on heldout73): no tensor crosses the group, so the gloo arm Ascend takes
    serves it. A module with any tensor collective (`all_reduce`, `broadcast`, ...) keeps the probe's finding."""
    spans, names, objects = [], set(), False
    for n in module_nodes(tree):
        if isinstance(n, ast.Call) and (d := ast_dotted(n.func) or "") and \
                (d.startswith(("dist.", "torch.distributed.")) and d.count(".") == d.startswith("torch.") + 1):
            name = d.rsplit(".", 1)[-1]
            names.add(name)
            objects |= name in _OBJECT_COLLECTIVES
            backend = next((k.value for k in n.keywords if k.arg == "backend"), n.args[0] if n.args else None)
            if name == "init_process_group" and isinstance(backend, ast.IfExp) and \
                    {_str(backend.body), _str(backend.orelse)} == {"nccl", "gloo"}:
                spans.append(node_span(backend))
    return spans if objects and names <= _OBJECT_DIST_CALLS else []


def apply_unselected_devices(findings: list, tree: ast.AST, text: str, rel: str = "") -> list:
    if not findings or not isinstance(tree, ast.Module):
        return findings
    asserts = _npu_accepting_asserts(tree) if "npu" in text else []
    log_only = _log_only_flag_tests(tree) if any(f.code in _FEATURE_CHECK_CODES for f in findings) else []
    stats = _metadata_stats(tree) if ".stats" in text and any(f.code in _HOST_SYNC_CODES for f in findings) else []
    uncalled = _uncalled_setup_helpers(tree, rel)
    tolerant = ("build_ext" in text or "BuildExtension" in text or "optional" in text) and any(
        f.category == "kernel" and f.severity == "error" for f in findings) and _tolerant_build(tree)
    probes = _ascend_aware_probe_names(tree) if any(f.code == _PROBE_RULE for f in findings) else set()
    carried = [f for f in findings if f.code in _CARRIED_BY_USE and f.severity != "info"]
    imports, tables, loaded = [], [], set()
    if carried:
        imports = [node_span(n) for n in module_nodes(tree) if isinstance(n, ast.ImportFrom)]
        tables = _cuda_slot_values(tree) if _mentions_npu(tree) else []
        loaded = _loaded_names(tree)
    tests = _test_spans(tree) if "pytest" in text or "patch" in text else {}
    siblings = _probes_with_npu_siblings(tree) if any(f.code == _CUDA_PROBE_RULE for f in findings) else set()
    gated = "is_available" in text and any(f.symbol == "torch.cuda.is_available" and f.severity == "error"
                                           for f in findings)
    speed = _speed_gates(tree) if gated else []
    sdp = _sdp_config_checks(tree) if "_kernel" in text and any(
        f.severity == "error" and f.symbol in _SDP_CHECK_SYMBOLS for f in findings) else []
    measure = _measure_gates(tree) if gated else []
    choices = _named_choices(tree) if "__name__" in text and any(f.severity == "warning" for f in findings) else []
    fallbacks = _implementation_fallbacks(tree) if any(f.code == "NPU003" for f in findings) else []
    offs = _off_switch_compares(tree) if "!=" in text and any(f.code == "NPU003" for f in findings) else []
    speed_compares = _speed_compares(tree) if any(f.code == "NPU003" and f.severity == "error"
                                                  for f in findings) else []
    set_if_unset = _set_if_unset_reads(tree) if "environ" in text and any(
        f.category in _ENV_CATEGORIES and f.severity != "info" for f in findings) else []
    number_tables = _device_number_tables(tree) if any(f.code == "NPU003" and f.severity == "error"
                                                       for f in findings) else []
    contiguous = _contiguous_only_checks(tree) if ".contiguous()" in text and any(
        f.code == "NPU003" and f.severity != "info" for f in findings) else []
    graph_walks = _graph_constant_walks(tree) if "findAllNodes" in text else []
    recursive = _recursive_calls(tree) if any(f.code == _HELPER_CALL_RULE for f in findings) else []
    gloo_calls = _gloo_group_calls(tree) if "gloo" in text and any(f.category == "distributed"
                                                                   for f in findings) else []
    if ("gloo" in text or "mpi" in text) and any(f.code == _HCCL_SIZE_RULE for f in findings):
        gloo_inits = _gloo_inits(tree)
        findings = [f for f in findings if not (f.code == _HCCL_SIZE_RULE and starts_in(f, gloo_inits))]
    object_groups = _object_group_choices(tree) if "_object" in text and gated else []
    cpu_fallbacks = _fallback_defaults(tree) if ('"cpu' in text or "'cpu" in text) and any(
        f.code == "NPU003" and f.severity == "error" for f in findings) else []
    out = []
    for f in findings:
        if starts_in(f, asserts) or f.code in _FEATURE_CHECK_CODES and starts_in(f, log_only) or \
                f.code in _HOST_SYNC_CODES and starts_in(f, stats) or \
                f.code == _PROBE_RULE and f.symbol in probes or f.code == "NPU003" and starts_in(f, fallbacks) or \
                f.category == "distributed" and starts_in(f, gloo_calls) or \
                f.code == _HELPER_CALL_RULE and starts_in(f, recursive) or f.code == "NPU003" and starts_in(f, graph_walks):
            continue
        if f.severity != "info":
            if f.severity == "warning" and f.category == "operator" and starts_in(f, choices):
                f = as_info(f, "option-table", _CHOICE_NOTE)
            elif uncalled and starts_in(f, uncalled):
                f = as_info(f, "uncalled-helper", _UNCALLED_NOTE)
            elif tolerant and f.severity == "error" and f.category == "kernel":
                f = as_info(f, "tolerated-build", _TOLERANT_NOTE, severity="warning")
            elif f.code in _CARRIED_BY_USE and starts_in(f, imports) and f.symbol.rsplit(".", 1)[-1] in loaded:
                f = as_info(f, "import-carried", _IMPORT_NOTE)
            elif f.code in _CARRIED_BY_USE and starts_in(f, tables):
                f = as_info(f, "device-table", _TABLE_NOTE)
            elif f.code == _CUDA_PROBE_RULE and (f.symbol or "").rsplit(".", 1)[-1] in siblings:
                f = as_info(f, "npu-path", _SIBLING_NOTE)
            elif f.code == "NPU003" and starts_in(f, contiguous):
                f = as_info(f, "layout-workaround", _CONTIGUOUS_NOTE)
            elif f.severity == "error" and f.code == "NPU003" and starts_in(f, cpu_fallbacks):
                f = as_info(f, "cpu-fallback", _FALLBACK_NOTE, severity="warning")
            elif f.severity == "error" and f.code == "NPU003" and starts_in(f, number_tables):
                f = as_info(f, "device-number-table", _NUMBER_TABLE_NOTE, severity="warning")
            elif f.category in _ENV_CATEGORIES and starts_in(f, set_if_unset):
                f = as_info(f, "set-if-unset", _SET_IF_UNSET_NOTE)
            elif f.severity == "error" and f.code == "NPU003" and starts_in(f, speed_compares):
                f = as_info(f, "speed-gate", _SPEED_NOTE, severity="warning")
            elif f.severity == "error" and f.code == "NPU003" and starts_in(f, offs):
                f = as_info(f, "off-switch", _OFF_NOTE, severity="warning")
            elif f.severity == "error" and f.symbol in _SDP_CHECK_SYMBOLS and starts_in(f, sdp):
                f = as_info(f, "speed-gate", _SDP_NOTE, severity="warning")
            elif f.severity == "error" and f.symbol == "torch.cuda.is_available" and starts_in(f, object_groups):
                f = as_info(f, "object-group", _OBJECT_GROUP_NOTE)
            elif f.severity == "error" and f.symbol == "torch.cuda.is_available" and starts_in(f, speed):
                f = as_info(f, "speed-gate", _SPEED_NOTE, severity="warning")
            elif f.severity == "error" and f.symbol == "torch.cuda.is_available" and starts_in(f, measure):
                f = as_info(f, "measure-gate", _MEASURE_NOTE, severity="warning")
            elif f.category == "device" and tests:
                for kind, note in (("raises", _RAISES_NOTE), ("param", _PARAM_NOTE), ("skip", _SKIP_NOTE),
                                   ("mock", _MOCK_NOTE), ("data", _DATA_NOTE), ("cuda-skip", _CUDA_SKIP_NOTE)):
                    if starts_in(f, tests[kind]):
                        f = as_info(f, f"test-{kind}", note)
                        break
            elif f.category == "distributed" and tests and starts_in(f, tests["mock-assert"]):
                f = as_info(f, "test-mock", _MOCK_NOTE)
        out.append(f)
    return out
