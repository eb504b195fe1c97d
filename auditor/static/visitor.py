"""The one generic libcst visitor: every rule kind in rules/ is matched here, by qualified name (through
imports and aliases), method or attribute name, folded string value, or environment variable name."""
from __future__ import annotations

import fnmatch
import re
from dataclasses import dataclass, replace

import libcst as cst

from auditor.astnodes import ENV_GETS, ENVIRON
from auditor.rules import Rule
from auditor.static.backends import BACKEND_NAMES, backends_in_text
from auditor.static.compiled import LIBRARY_CATEGORIES, CompiledRules
from auditor.static.context import (_MODULE_IMPORTERS, _MODULE_NAME, DEVICE_NAME_PROBES, HOLE, JIT_BUILDERS, JIT_EXTENSION,
                                    LOCAL_PACKAGE, MAX_FOLDED, FileContext, dataclass_fields, kernel_call_made,
                                    params_fed_to_backend_switches)
from auditor.static.cstwalk import children, walk
from auditor.static.patch_targets import hides_cuda
from auditor.static.unresolved_extensions import UNRESOLVED_EXTENSION, extension_module_of, host_entry_point
from auditor.static.dtype_requirements import guard_kind, required_dtype_nodes
from auditor.static.flags import RUNS_COMMAND

# Calls whose string arguments are messages for humans, never device or backend values.
_MESSAGE_FUNCS = re.compile(
    r"(?:^|_)(?:print|log|logs|warn|warning|warnings|info|debug|error|exception|critical|fatal|echo|secho|"
    r"write|assert\w*|fail|skip\w*|exit)(?:_|$)|(?:Error|Exception|Warning)$"
)
_MESSAGE_QUAL_PREFIXES = ("logging.", "warnings.", "loguru.", "click.")
_EXCEPTION_CLASS = re.compile(r"(?:Error|Exception|Warning)\Z")
# decorators that register a function under its own name (the name is then a string a rule may know)
_REGISTERED_BY_NAME = frozenset({"tvm.register_func", "tvm._ffi.register_func", "tvm.ffi.register_func"})
_DEVICE_STRING_RULE = "cuda-device-string"    # NPU003
_NPU_VALUE = re.compile(r"^npu(?::(?:\d+|\x00))?\Z")
# FastAPI's route decorators and registration (https://fastapi.tiangolo.com/reference/apirouter/) and their keywords
# that name a type (tq40)
_ROUTE_METHODS = frozenset({"get", "post", "put", "patch", "delete", "head", "options", "trace", "api_route",
                            "add_api_route", "websocket"})
_ROUTE_TYPE_KEYWORDS = frozenset({"response_model"})
# builtins whose second argument is an attribute name (`hasattr(torch, "cuda")`), never a device
_NAME_ARG_FUNCS = frozenset({"hasattr", "getattr", "setattr", "delattr"})
# modules every torch build has (`hasattr(torch, "cuda")` is true on Ascend too): probing them names nothing CUDA-only
_NPU_SEGMENT = re.compile(r"(?i)(?:^|[._])(?:npu|ascend)(?:$|[._])|_C_ascend|torch_npu")
_PROBED_EVERYWHERE = frozenset({"torch.cuda", "torch.backends.cuda", "torch.backends.cudnn", "torch.cuda.amp",
                                # tq40: torch.cuda's queries that every build defines and that answer without CUDA
                                # (False / 0: https://pytorch.org/docs/stable/cuda.html): `hasattr(torch.cuda,
                                # "is_available")` is true on Ascend too; the call it guards is the finding
                                "torch.cuda.is_available", "torch.cuda.device_count", "torch.cuda.is_initialized"})
_PERCENT_SPEC = re.compile(r"%[-+ #0]*\d*(?:\.\d+)?[diouxXeEfFgGcrsa]")
_FORMAT_FIELD = re.compile(r"\{[^{}]*\}")
# an Ascend device's model in its name (`torch.npu.get_device_name()`: "Ascend910B2", "Ascend310P3")
_ASCEND_MODEL = re.compile(r"(?i)ascend|910|310p")
_SENTENCE_END = re.compile(r"[A-Za-z][!?]\s*$")     # `nvcc unavailable!`, `nvidia-smi found?`: a text for a person


# torch factories that make a CPU tensor unless given a device (the `*_like` ones follow their input)
_HOST_FACTORIES = frozenset(f"torch.{n}" for n in ("randint", "rand", "randn", "randperm", "tensor", "arange", "zeros",
                                                   "ones", "empty", "full", "linspace", "as_tensor", "from_numpy"))
# unittest's and the testing helpers' assertions (assertEqual, assertIs, assert_close, assert_equal)
_ASSERTION = re.compile(r"^assert(?:_|[A-Z])")
# String rules whose literal is a choice (an implementation name): compared with a value, it is read, not chosen.
# Dtype rules that match only qualified names (so `_dtype_quiet` does not cover them): in a comparison the name is
# read, not chosen (t14d: Triton's float8 types; t22e: `qtype == Dtypes.kfloat8_e4m3`)
_COMPARED_DTYPE_NAMES = frozenset({"triton-fp8-dtype", "fp8-dtype-enum-member", "foreign-bf16-dtype",
                                   "foreign-fp16-dtype"})
# Of those, the ones that name bf16 / fp16 through another namespace (`jnp.bfloat16`, `DType.bfloat16`; t23a): a
# branch of a name-to-dtype conversion or a table entry chooses nothing for them either, as for torch's names
_FOREIGN_DTYPE_NAMES = frozenset({"foreign-bf16-dtype", "foreign-fp16-dtype"})
# (tq45b: `training_args.optim in ["adamw_bnb_8bit", "adamw_8bit", "paged_adamw_8bit"]` in LLaMA-Factory's GaLore
# builder tests the user's optimizer name; the `optim:` setting that names one is the finding)
_CHOICE_STRINGS = frozenset({"flash-attention-implementation-string", "bitsandbytes-through-a-framework"})


# Keywords whose value names a repository ref or folder (`from_pretrained(name, revision="float16")`: a Hub
# branch), never a dtype being chosen
_REF_KEYWORDS = frozenset({"revision", "branch", "tag", "commit", "commit_hash", "subfolder",
                           # diffusers' / transformers' `from_pretrained(..., variant="fp16")`: the weights FILE
                           # `*.fp16.safetensors`; `torch_dtype=` chooses the dtype (t17e)
                           "variant"})


# Options of another accelerator's compiler whose value names a dtype (neuronx-cc / torch_neuronx / optimum-neuron
# `auto_cast_type="bf16"`, `compiler_args={"auto_cast_type": "fp16"}`): the compiler reads the name and casts its
# own graph; no torch tensor is given that dtype (policies a / d, t11q)
_COMPILER_DTYPE_KEYS = frozenset({"auto_cast_type"})


def _cmake_define(m: re.Match[str]) -> str:
    """The variable an env-in-text match names: `-DCMAKE_CUDA_ARCHITECTURES=90` in a CMake argument defines
    CMAKE_CUDA_ARCHITECTURES (the regex sees `DCMAKE_...` after the dash), a shell assignment names itself."""
    name = m.group(1)
    if name.startswith("D") and m.start() > 0 and m.string[m.start() - 1] == "-":
        return name[1:]
    return name


def _names_a_ref(node: cst.Arg) -> bool:
    return node.keyword is not None and (node.keyword.value in _REF_KEYWORDS or
                                         node.keyword.value in _COMPILER_DTYPE_KEYS)


def _assigns_a_ref(node: cst.Assign) -> bool:
    """`variant = "fp16"` (the name handed on as `variant=variant`): a ref keyword's value bound to its own name."""
    return len(node.targets) == 1 and isinstance(node.targets[0].target, cst.Name) \
        and node.targets[0].target.value in _REF_KEYWORDS and isinstance(node.value, _STRING_NODES)


def _compiler_dtype_key(node: cst.BaseExpression | None) -> bool:
    """A dict key or parameter name that is another compiler's dtype option (`"auto_cast_type"`)."""
    if isinstance(node, cst.SimpleString):
        return node.evaluated_value in _COMPILER_DTYPE_KEYS
    return isinstance(node, cst.Name) and node.value in _COMPILER_DTYPE_KEYS


def self_attr(node: cst.CSTNode | None) -> cst.Name | None:
    """The name X of `self.X`, else None (the ast passes' reader is astutil.self_attr)."""
    if isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name) and node.value.value == "self":
        return node.attr
    return None


def dotted(node: cst.CSTNode) -> str | None:
    parts = []
    while isinstance(node, cst.Attribute):
        parts.append(node.attr.value)
        node = node.value
    if isinstance(node, cst.Name):
        parts.append(node.value)
        return ".".join(reversed(parts))
    return None


# `dtype=torch.float32` / `torch.float` / `"float32"`: an autocast region that keeps its ops in full precision
# (Wan2.1's `with amp.autocast(dtype=torch.float32):` around a residual add): no low-precision dtype to check
# against the target's (t11e, tuned on heldout5).
_FLOAT32 = frozenset({"torch.float32", "torch.float", "float32", "float"})


def _float32_region(call: cst.Call) -> bool:
    for a in call.args:
        if a.keyword is not None and a.keyword.value == "dtype":
            v = a.value
            if isinstance(v, cst.SimpleString):
                return v.evaluated_value in _FLOAT32
            return dotted(v) in _FLOAT32
    return False


@dataclass(slots=True)
class RawHit:
    """A match before it becomes a Finding: the engine adds paths, lines and rule text."""
    rule: Rule
    node: cst.CSTNode
    symbol: str
    value: str | None = None
    via: str | None = None
    end_node: cst.CSTNode | None = None
    # the `from ... import (` statement of an imported name: a finding no fixer rewrites starts there, the
    # line a reader (and a label) points at, not on the name's own line inside the parentheses
    statement: cst.CSTNode | None = None
    statement_pos: tuple[int, int] | None = None
    # the value of a dict entry whose string key names it (`"flash_attention": SDPBackend.FLASH_ATTENTION`): an
    # entry of a table of option names, chosen where the option is set
    table_entry: bool = False
    # the keyword a string is the whole value of (`load(path, map_location="cuda")`): stale_keywords reads only such
    # findings of a file on each run, not every device string's (review50)
    keyword: str = ""
    # named by `hasattr(torch.cuda, "mem_get_info")` / `getattr(torch._C, "_cuda_x", None)`: a probe of the name,
    # not a use (t14l: reported at most as a warning, never rewritten)
    probe: bool = False
    # a dtype the code requires (`if x.dtype != torch.bfloat16: raise ...`, `assert w.dtype == torch.float8_e4m3fn`):
    # the kernel or path takes only that dtype (t14p, auditor/static/dtype_requirements.py)
    required: str = ""      # the guard's kind (dtype_requirements.guard_kind; "cast": a fallback around the dtype)
    # the "cuda" key of a device-type dispatch table (`{"cpu": f_cpu, "cuda": f_cuda}`): renaming it to "npu" would
    # hand NPU tensors the CUDA function, so no fixer rewrites it (the table needs an NPU entry of its own)
    no_rewrite: bool = False
    # a key of a `torch.load(..., map_location={"cuda:0": ...})` dict: it names where the checkpoint's tensors were
    # saved, which is right for checkpoints saved on CUDA; those the port saves carry "npu:0" and pass the map
    # unmapped (a warning, never rewritten: the map needs an "npu:0" key beside it, t33a)
    saved_location: bool = False
    # a function's local CuPy / PyCUDA kernel object (`f(...)` after `f = load_kernel(...)`): the engine keeps the hit
    # only inside a function that binds the name so (FileContext.kernel_local_at; t32a)
    kernel_local: str = ""
    # a name given to a call that runs a command (`subprocess.check_output(cmd, shell=True)`): for an NVIDIA tool the
    # engine leaves a function's own name to flags.py's command copies, which follow its latest binding (tk47)
    run_arg: bool = False


# The name of a dtype as a config or an option spells it ("bf16", "torch.float16", "half", "fp8_e4m3")
_DTYPE_NAME = re.compile(r"(?i)^(?:torch\.)?(?:b?float(?:16|32|64)?|bf16|fp(?:8|16|32|64)\w*|half|double|float8\w*"
                         r"|u?int(?:4|8|16|32|64)|bfloat16|tf32|(?:bf)?16-(?:mixed|true)|32-true)$")


_FP8_FORMAT = re.compile(r"(?i)^e[0-9]m[0-9](?:fnuz|fn)?$")


def _names_fp8_format(node: cst.CSTNode) -> bool:
    """A string literal naming an fp8 format (`"e4m3fn"`, `"e5m2"`)."""
    return isinstance(node, cst.SimpleString) and isinstance(node.evaluated_value, str) \
        and bool(_FP8_FORMAT.match(node.evaluated_value))


def _names_dtype(node: cst.CSTNode) -> bool:
    """A string literal naming a dtype."""
    return isinstance(node, cst.SimpleString) and isinstance(node.evaluated_value, str) \
        and bool(_DTYPE_NAME.match(node.evaluated_value))


# Lightning's precision names in their short forms (`"16"`, `"b16-mixed"`, `"f32"`: anemoi-inference's PRECISIONS
# table): a dtype's name only as the key of an entry whose value is that dtype (a bare "16" elsewhere is a number)
_PRECISION_KEY = re.compile(r"(?i)^(?P<kind>b|bf|f)?(?P<bits>16|32|64)(?:-(?:mixed|true))?$")


# a table numbering dtypes, `{0: torch.float32, 1: torch.float, ..., 10: torch.bfloat16, 11: torch.uint8}` (a
# serializer's index-to-dtype codec: LitData's `_TORCH_DTYPES_MAPPING`): it rebuilds the dtype a tensor already had
# and chooses none (policy (a); tq49b, heldout60)
_INDEX_TABLE_MIN = 4
# a bare name spelling one of torch's dtypes (what `from torch import float16, bfloat16` binds), not an abbreviation
_TORCH_DTYPE = re.compile(r"b?float\d+|half|double|u?int\d+|bool|complex\d+")
# the objects a script's settings are read from (`args.precision`, `cfg["dtype"]`): a table they index is a choice
_SETTING_OBJECT = re.compile(r"\s*(?:self\.)?(?:args|opts?|cfg|config|conf|hparams|hp|flags|FLAGS|options|params)\b")


def _dtype_index_table(node: cst.Dict) -> bool:
    """A dict literal of four or more entries, each an integer key to a torch / numpy dtype (`torch.float16`, or the
    bare name a `from torch import float16` bound: msit's dump reader maps an ATB dump's dtype code to the dtype that
    reads it back, `{0: float32, 1: float16, ..., 27: bfloat16}`; tq50b)."""
    entries = [el for el in node.elements if isinstance(el, cst.DictElement)]
    return len(entries) == len(node.elements) >= _INDEX_TABLE_MIN and all(
        isinstance(el.key, cst.Integer) and (isinstance(el.value, cst.Attribute)
                                             and (dotted(el.value) or "").split(".", 1)[0] in ("torch", "np", "numpy")
                                             or isinstance(el.value, cst.Name) and _TORCH_DTYPE.fullmatch(el.value.value))
        for el in entries) and \
        sum(bool(_DTYPE_NAME.match(_last_name(el.value))) for el in entries) * 2 >= len(entries)


def _last_name(node: cst.BaseExpression) -> str:
    return node.attr.value if isinstance(node, cst.Attribute) else node.value if isinstance(node, cst.Name) else ""


def _precision_key(key: cst.CSTNode | None, value: cst.CSTNode) -> bool:
    """`"b16": torch.bfloat16`, `"16": torch.float16`: a precision name keying the dtype it stands for."""
    if not (isinstance(key, cst.SimpleString) and isinstance(key.evaluated_value, str)
            and isinstance(value, cst.Attribute) and dotted(value) is not None):
        return False
    m = _PRECISION_KEY.match(key.evaluated_value)
    if m is None:
        return False
    word = _dtype_word(value.attr.value)
    kind = (m.group("kind") or "").lower()
    return word == ("bf" if kind.startswith("b") else "fp") + m.group("bits")


# the spellings of one dtype, for telling a constant that names a dtype name (`PRECISION_BF16 = "bf16"`) from one
# that chooses it (`DEFAULT_PRECISION = "bf16"`)
_DTYPE_WORDS = {"bf16": "bf16", "bfloat16": "bf16", "fp16": "fp16", "float16": "fp16", "half": "fp16", "fp32": "fp32",
                "float32": "fp32", "float": "fp32", "fp8": "fp8", "float8": "fp8", "fp64": "fp64", "float64": "fp64",
                "double": "fp64"}


def _dtype_word(name: str) -> str | None:
    return _DTYPE_WORDS.get(name.lower())


_SHORT_DTYPE_WORDS = {"f16": "fp16", "f32": "fp32", "f64": "fp64"}    # XLA's `F16`, `BF16` element types


def _same_dtype_pair(a: cst.BaseExpression, b: cst.BaseExpression) -> bool:
    """`warp.float16: jp.float16`, `XLA_FFI_DataType.BF16: jnp.bfloat16`, `check(jp.float16, wp.float16)`: one dtype
    named in two namespaces, a map between them (or a test of it) that chooses nothing (policy (a); t23a). Also a
    dtype built from its name (`np_type('float16'): DataType.FP16`, `np.dtype("float16")`: PPQ's conversion tables,
    t29a)."""
    words = []
    for node in (a, b):
        name = _dtype_name_arg(node)
        if name is not None:
            word = _dtype_word(name)
            if word is None:
                return False
            words.append(word)
            continue
        last = node.value if isinstance(node, cst.Name) else node.attr.value if isinstance(node, cst.Attribute) else ""
        word = _dtype_word(last) or _SHORT_DTYPE_WORDS.get(last.lower())
        if word is None or dotted(node) is None:
            return False
        words.append(word)
    return words[0] == words[1] and (dotted(a) or "") != (dotted(b) or "")


def _dtype_name_arg(node: cst.CSTNode) -> str | None:
    """The string of `np_type('float16')` / `np.dtype("float16")`: a named callee given one string literal, else None."""
    if isinstance(node, cst.Call) and dotted(node.func) is not None and len(node.args) == 1 \
            and node.args[0].keyword is None and isinstance(node.args[0].value, cst.SimpleString):
        value = node.args[0].value.evaluated_value
        return value if isinstance(value, str) else None
    return None


def _names_dtype_constant(node: cst.CSTNode) -> bool:
    """An upper-case constant or enum member named for a dtype (`PRECISION_BF16`, `Precision.FP16`, `DType.BF16`):
    compared with a value, it tests a dtype NAME like a literal does (t16b, llm-on-ray's `decide_torch_dtype`)."""
    last = node.value if isinstance(node, cst.Name) else node.attr.value if isinstance(node, cst.Attribute) else ""
    return last.isupper() and any(_dtype_word(t) for t in last.split("_"))


def _names_itself(target: cst.BaseExpression, value: cst.BaseExpression) -> bool:
    """`PRECISION_BF16 = "bf16"`, `FP16 = "float16"`: an upper-case name whose words spell the dtype name it holds
    is that name's constant (what a validator or a comparison refers to), not a choice (policy (a); t16b)."""
    if not isinstance(target, cst.Name) or not target.value.isupper() or not _names_dtype(value):
        return False
    assert isinstance(value, cst.SimpleString)
    word = _dtype_word(str(value.evaluated_value).removeprefix("torch."))
    return word is not None and any(_dtype_word(t) == word for t in target.value.split("_"))


def _dtype_values(node: cst.CSTNode) -> list[int]:
    """ids of the dtype constants an entry of a name-to-dtype table holds: `torch.float16`, `lambda: torch.float16`."""
    if isinstance(node, cst.Lambda):
        node = node.body
    # `{"fp16": "float16"}`: a name normalised to another name (t11r, policy a)
    if isinstance(node, cst.Attribute):
        return [id(node), id(node.attr)]    # (`DataType.FP16`: the member's name is what an attribute rule reads)
    if _dtype_name_arg(node) is not None and isinstance(node, cst.Call):
        return [id(node.args[0].value)]     # `np_type('float16')`
    return [id(node)] if isinstance(node, cst.Name) or _names_dtype(node) else []


_GRID_NAME = re.compile(r"(?:.*_)?(?:grid|blocks|blocks_?per_?grid|num_blocks|bpg|n_blocks)(?:_?dims?|_?size)?$",
                        re.IGNORECASE)
_BLOCK_NAME = re.compile(r"(?:.*_)?(?:block|threads|threads_?per_?block|num_threads|tpb|n_threads)(?:_?dims?|_?size)?$",
                         re.IGNORECASE)


def _first_listed(value: cst.BaseExpression, rule: Rule) -> cst.SimpleString | None:
    """Lead decision 18: a list literal written over several lines (`libraries = [\n 'nvinfer',\n 'cudnn', ...]`) is
    reported once, on its first element that is one of the rule's `keyword_values`; None for a one-line list."""
    wanted: list[str] = rule.extra.get("keyword_values") or []
    if not wanted or not isinstance(value, (cst.List, cst.Tuple)) or \
            not any(isinstance(e.comma, cst.Comma) and isinstance(e.comma.whitespace_after, cst.ParenthesizedWhitespace)
                    for e in value.elements):
        return None
    return next((e.value for e in value.elements if isinstance(e.value, cst.SimpleString)
                 and any(fnmatch.fnmatchcase(str(e.value.evaluated_value), w) for w in wanted)), None)


def _later_line_items(value: cst.BaseExpression) -> list[int]:
    """ids of the string items of a list / tuple literal that stand on a later line than its opening bracket (lead
    decision 18: `'nvcc': ['-O2',\n '-gencode=...',\n ...]` is one decision, on the key's line)."""
    if not isinstance(value, (cst.List, cst.Tuple)):
        return []
    opening = value.lbracket if isinstance(value, cst.List) else (value.lpar[0] if value.lpar else None)
    later = opening is not None and isinstance(opening.whitespace_after, cst.ParenthesizedWhitespace)
    out: list[int] = []
    for element in value.elements:
        if later and isinstance(element.value, cst.SimpleString):
            out.append(id(element.value))
        later = later or isinstance(element.comma, cst.Comma) and isinstance(element.comma.whitespace_after,
                                                                            cst.ParenthesizedWhitespace)
    return out


def _numba_launch_config(func: cst.Subscript) -> bool:
    """`kernel[grid, block]`, `k[blocks_per_grid, threads_per_block]`: two subscript items named for a CUDA grid and
    block (names or attributes), numba.cuda's launch configuration; a stream and a dynamic shared-memory size may follow
    (`kernel[blocks, threads, stream, 0]`, t28a)."""
    if len(func.slice) not in (2, 3, 4):
        return False
    names = []
    for element in func.slice[:2]:
        if not isinstance(element.slice, cst.Index):
            return False
        value = element.slice.value
        names.append(value.value if isinstance(value, cst.Name) else
                     value.attr.value if isinstance(value, cst.Attribute) else "")
    return bool(_GRID_NAME.match(names[0]) and _BLOCK_NAME.match(names[1]))


# what a compiled CUDA module kept in a name is called for: a kernel taken out of it, or its code loaded
# (`mod = cupy.cuda.function.Module(); mod.load(bytes(ptx))`: S4's UnICORNN, t36a)
_MODULE_KERNEL_METHODS = frozenset({"get_function", "load", "load_file"})


def _shows_value(call: cst.Call) -> bool:
    """`"CUDA: {}".format(torch.version.cuda)`, `str(x)`, `repr(x)`, `format(x, "d")`: a call that only turns its
    arguments into text; inside a message it shows them, as an f-string does (lead decision 48, t36a)."""
    func = call.func
    # `raise RuntimeError(f"... CUDA {torch.version.cuda} ...")`: an exception's constructor only carries its message
    return isinstance(func, cst.Attribute) and func.attr.value == "format" and \
        isinstance(func.value, (cst.SimpleString, cst.ConcatenatedString, cst.Name)) or \
        isinstance(func, cst.Name) and func.value in ("str", "repr", "format") or \
        isinstance(func, (cst.Name, cst.Attribute)) and bool(_EXCEPTION_CLASS.search(dotted(func) or ""))


def _code_text(node: cst.CSTNode) -> str:
    """The source text of an expression (`torch.version.cuda`)."""
    return cst.Module(body=[]).code_for_node(node)


def _env_read_name(node: cst.BaseExpression) -> tuple[str, cst.SimpleString, bool] | None:
    """(name, literal, whether it may be unset) of `os.environ.get("X")`, `os.getenv("X", default)`,
    `os.environ["X"]`, or None."""
    arg: cst.BaseExpression | None = None
    if isinstance(node, cst.Call) and node.args and dotted(node.func) in ENV_GETS:
        arg = node.args[0].value
    elif isinstance(node, cst.Subscript) and dotted(node.value) in ENVIRON and \
            len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Index):
        arg = node.slice[0].slice.value
    if isinstance(arg, cst.SimpleString) and isinstance(arg.evaluated_value, str):
        return arg.evaluated_value, arg, isinstance(node, cst.Call)
    return None


_CAMEL_CUT = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


def _words(text: str) -> set[str]:
    """`flash_attention`, `FLASH_ATTENTION`, `FlashAttention` -> {flash, attention}."""
    return {w.lower() for w in re.split(r"[^A-Za-z0-9]+", _CAMEL_CUT.sub("_", text)) if w}


def _key_names_value(key: cst.BaseExpression | None, value: cst.BaseExpression) -> bool:
    """`"flash_attention": SDPBackend.FLASH_ATTENTION`, `"efficient": SDPBackend.EFFICIENT_ATTENTION`: a string key
    whose words are all in the name of the constant it maps to (a table of option names)."""
    if not isinstance(key, cst.SimpleString) or not isinstance(value, cst.Attribute):
        return False
    text = key.evaluated_value
    if not isinstance(text, str) or not text or len(text) > 64:
        return False
    mine, its = _words(text), _words(value.attr.value)
    # (or a class the key names with a qualifier: aps' `"RNN_TANH": nn.RNN` beside `"GRU": nn.GRU`, the modes of a
    # name-to-class table; tq55c)
    return bool(mine) and (mine <= its or bool(its) and its <= mine and value.attr.value[:1].isupper())


def _device_named_by_key(key: cst.BaseExpression | None, value: cst.BaseExpression) -> cst.SimpleString | None:
    """The device name of `"cuda": torch.device("cuda")` (or `"cuda": "cuda"`): an entry of a table from a device
    option's names to devices (`{"cuda": torch.device("cuda"), "cpu": ..., "mps": ...}[device]`, a ComfyUI node's
    device combo; t16e), whose key is the device it builds; the option the user sets chooses."""
    if isinstance(value, cst.Call) and dotted(value.func) in ("torch.device", "device") and len(value.args) == 1 \
            and value.args[0].keyword is None:
        value = value.args[0].value
    if not isinstance(key, cst.SimpleString) or not isinstance(value, cst.SimpleString):
        return None
    text, name = key.evaluated_value, value.evaluated_value
    return value if isinstance(text, str) and isinstance(name, str) and text and text.lower() == name.lower() else None


def _falsy_constant(node: cst.BaseExpression) -> bool:
    return isinstance(node, cst.Name) and node.value in ("None", "False")


def _compares_dtype_name(test: cst.BaseExpression) -> bool:
    """`s == "bf16"`, `dtype_str in ("float16", "fp16")`: a test of a string against dtype names; also such tests
    joined by `or`, with falsy constants among them (`dtype == "bfloat16" or dtype == "bf16"`, TGI's
    `dtype == "bfloat16" or None`; t11z)."""
    if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.Or):
        operands = [test.left, test.right]
        return any(not _falsy_constant(o) for o in operands) and all(
            _falsy_constant(o) or _compares_dtype_name(o) for o in operands)
    if not isinstance(test, cst.Comparison) or len(test.comparisons) != 1:
        return False
    op, right = test.comparisons[0].operator, test.comparisons[0].comparator
    if isinstance(op, cst.Equal):
        return any(_names_dtype(side) or _names_dtype_constant(side) for side in (right, test.left))
    if isinstance(op, cst.In) and isinstance(right, (cst.Tuple, cst.List, cst.Set)) and right.elements:
        return all(_names_dtype(e.value) or _names_dtype_constant(e.value) for e in right.elements)
    return False


_REMOVALS = frozenset({"remove", "discard"})
_LIST_EDITS = frozenset({"append", "extend", "insert", "remove"})
# what a list of compiler flags is given in an edit: a flag (`"-O3"`, `f"-arch=sm_{cc}"`) or a list of them, not a
# value computed elsewhere (`nvcc_flags.extend(get_flags())`)
_FLAG_ITEMS = (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString, cst.List, cst.Tuple)
_FLAG_NAMES = (cst.Name, cst.Attribute, cst.Subscript)
_UNSETS = frozenset({"os.environ.pop", "environ.pop", "os.unsetenv", "unsetenv"})
_TEXT_METHODS = frozenset({"replace", "startswith", "endswith", "removeprefix", "removesuffix", "split", "rsplit",
                           "strip", "lstrip", "rstrip", "find", "rfind", "count", "index", "partition", "rpartition"})
_SETTINGS_CLASS = re.compile(r"(?:Config|Configuration|Recipe|Args|Arguments|Options?|Settings|Flags|Kwargs|Mode|"
                             r"Format|Policy)$")


def _constructs_object(call: cst.Call) -> bool:
    """`LeptoFP8(hook, model)`, `quant.FP8(...)`: a class (CamelCase or an upper-case acronym) built with arguments,
    whose name is not that of a settings object (`Float8LinearConfig(...)`, `DelayedScaling` recipes excepted)."""
    name = dotted(call.func)
    last = (name or "").rsplit(".", 1)[-1]
    return bool(call.args) and bool(last) and last[0].isupper() and not _SETTINGS_CLASS.search(last) and \
        last not in ("DelayedScaling", "Float8CurrentScaling", "MXFP8BlockScaling", "Format")


def _compares_same_dtype(test: cst.BaseExpression, value: cst.BaseExpression) -> bool:
    """`x == torch.float16` / `x is torch.float16` tested, `torch.float16` assigned or returned: a copy of the
    dtype the test found, not a choice."""
    if not isinstance(test, cst.Comparison) or len(test.comparisons) != 1 or \
            not isinstance(test.comparisons[0].operator, (cst.Equal, cst.Is)):
        return False
    wanted = dotted(value) or ""
    sides = (dotted(test.left) or "", dotted(test.comparisons[0].comparator) or "")
    if wanted.startswith("torch."):
        return wanted in sides
    # `elif dtype == torch.bfloat16: return DType.bfloat16`: the same dtype in a code base's own enum (t23a)
    last = wanted.rsplit(".", 1)[-1]
    return "." in wanted and any(s.startswith("torch.") and s.rsplit(".", 1)[-1] == last for s in sides)


def _cast_dtype(value: cst.BaseExpression) -> cst.BaseExpression | None:
    """The dtype argument of a cast `x.to(dtype=D)` / `x.to(D)` / `x.to(device, D)` / `x.type(D)`, written as a
    `torch.` attribute; else None."""
    if not (isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and value.func.attr.value in
            ("to", "type")):
        return None
    for arg in value.args:
        if (arg.keyword is None or arg.keyword.value == "dtype") and (dotted(arg.value) or "").startswith("torch."):
            return arg.value
    return None


_CAST_METHODS = {"half": "fp16", "bfloat16": "bf16", "float": "fp32", "double": "fp64"}


def _tested_torch_dtype(test: cst.BaseExpression) -> str | None:
    """The dtype word of `x == torch.bfloat16` / `x is torch.float16` (either side), else None."""
    if not isinstance(test, cst.Comparison) or len(test.comparisons) != 1 or \
            not isinstance(test.comparisons[0].operator, (cst.Equal, cst.Is)):
        return None
    for side in (test.left, test.comparisons[0].comparator):
        name = dotted(side) or ""
        if name.startswith("torch.") and _dtype_word(name.removeprefix("torch.")):
            return _dtype_word(name.removeprefix("torch."))
    return None


def _cast_nodes(arm: cst.BaseExpression) -> tuple[str, list[int]] | None:
    """(dtype word, ids of the nodes a precision rule reports) of a cast `x.half()` / `x.bfloat16()` /
    `x.to(torch.float16)` (any form _cast_dtype reads), else None."""
    if not isinstance(arm, cst.Call) or not isinstance(arm.func, cst.Attribute):
        return None
    method = arm.func.attr.value
    if method in _CAST_METHODS and not arm.args:
        return _CAST_METHODS[method], [id(arm.func.attr)]
    dtype = _cast_dtype(arm)
    word = _dtype_word((dotted(dtype) or "").removeprefix("torch.")) if dtype is not None else None
    return (word, [id(dtype)]) if word else None


def _finds_dtype_name_in(test: cst.BaseExpression, value: cst.BaseExpression) -> bool:
    """`if "e5m2" in s: return torch.float8_e5m2` (Easy-Use's string_to_dtype, t17b): a substring test of a name
    for a dtype name or an fp8 format's (`e4m3fn`, `e5m2`) whose branch gives that same dtype converts the name
    (policy (a)); `if "fp8" in precision: vae_dtype = torch.bfloat16` (another dtype: a choice made here) does not."""
    if not isinstance(test, cst.Comparison) or len(test.comparisons) != 1 or \
            not isinstance(test.comparisons[0].operator, cst.In) or \
            isinstance(test.comparisons[0].comparator, (cst.Tuple, cst.List, cst.Set, cst.SimpleString)) or \
            not (_names_dtype(test.left) or _names_fp8_format(test.left)):
        return False
    assert isinstance(test.left, cst.SimpleString)
    name = str(test.left.evaluated_value).lower().removeprefix("torch.")
    given = (dotted(value) or "").lower()
    if not given.startswith("torch."):
        return False
    given = given.removeprefix("torch.")
    if _FP8_FORMAT.match(name):     # "e4m3" names float8_e4m3fn
        return given.startswith("float8") and any(part.startswith(name) for part in given.split("_"))
    word = _dtype_word(name)
    return word is not None and (word == _dtype_word(given) or word == "fp8" and given.startswith("float8"))


def _casts_following_test(node: cst.IfExp) -> list[int]:
    """`cache.bfloat16() if dtype == torch.bfloat16 else cache.half()` (ChatGLM's rotary cache, vendored in Kolors,
    CogVLM, GLM-4): two casts, one to the dtype the test found, the other for the rest: the cast follows a dtype
    chosen where `dtype` was set (policy (a2), t17b); the ids of both casts' reported nodes, else []."""
    tested = _tested_torch_dtype(node.test)
    body, orelse = _cast_nodes(node.body), _cast_nodes(node.orelse)
    if tested is None or body is None or orelse is None or body[0] != tested:
        return []
    return body[1] + orelse[1]


_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
# words a device list holds beside the backend names (`choices=["auto", "cuda", "neuron", "cpu"]`)
_DEVICE_WORDS = BACKEND_NAMES | {"cpu", "auto", "neuron", "meta", "dml", "directml", "vulkan", "opencl", "metal"}


_ISO_CODE = re.compile(r"[a-z]{2,3}\Z")
_TOOL_CODES = frozenset({"ncu"})    # Nsight Compute's command, spelt as a three-letter code


def _names_among_words(node: cst.List | cst.Tuple | cst.Set) -> list[cst.SimpleString]:
    """The backend names in a list of four or more identifier-like strings of which at most a third are backend names:
    stanza's `options_to_filter = ['device', 'cpu', 'cuda', 'dev_conll_gold', 'epochs', 'lang', ...]` (option names),
    sandbox-fusion's `['python', 'cpp', 'nodejs', 'go', ..., 'cuda']` (languages). Such a 'cuda' names an option or a
    language, not a device (tq43, tuned on heldout47's stanza); a device list (`['auto', 'cuda', 'neuron', 'cpu']`,
    half of it backend names) keeps its finding."""
    strings = [e.value for e in node.elements if isinstance(e.value, cst.SimpleString)]
    if len(strings) < 4 or len(strings) != len(node.elements):
        return []
    texts = [s.evaluated_value for s in strings]
    if not all(isinstance(t, str) and _WORD.match(t) for t in texts):
        return []
    devices = [t for t in texts if isinstance(t, str) and t.lower() in _DEVICE_WORDS]
    if 3 * len(devices) > len(strings):
        return []
    # tq52c: a list of eight or more two- or three-letter lower-case codes is a table of ISO 639 language (or ISO 3166
    # country) codes (IMS-Toucan's pretrained languages); its "ncu" is ISO 639-3's Chumburung, not Nsight Compute
    codes = len(texts) >= 8 and all(isinstance(t, str) and _ISO_CODE.match(t) for t in texts)
    return [s for s, t in zip(strings, texts) if isinstance(t, str) and (
        t.lower() in BACKEND_NAMES or codes and t in _TOOL_CODES)]


def _renamed_to(key: str, value: cst.BaseExpression) -> bool:
    """Is `value` (a string, or a tuple that starts with one) `key` under another vendor's prefix: `"CUDA_MEMCPY2D"` ->
    `("hip_Memcpy2D", CONV_TYPE, API_DRIVER)`, `"cudaMalloc"` -> `"hipMalloc"`: their letters and digits, in lower
    case, share an ending of half the key at least?"""
    if isinstance(value, cst.Tuple) and value.elements:
        value = value.elements[0].value
    text = value.evaluated_value if isinstance(value, cst.SimpleString) else None
    if not isinstance(text, str) or text == key:
        return False
    a, b = re.sub(r"[\W_]", "", key).lower(), re.sub(r"[\W_]", "", text).lower()
    shared = next((i for i, (x, y) in enumerate(zip(reversed(a), reversed(b))) if x != y), min(len(a), len(b)))
    return shared >= 3 and 2 * shared >= len(a) and shared < len(b)


def _renamed_keys(pairs) -> list[cst.SimpleString]:
    """The keys of a rename table: a literal of (key, value) pairs, three or more and half of them at least a name
    and the same name under another prefix (hipify's CUDA-to-HIP mappings, tq46a). Such a `"CUDA_..."` key is a name
    the table translates in sources, not an environment variable the program reads."""
    keyed = [(k, v) for k, v in pairs if isinstance(k, cst.SimpleString) and isinstance(k.evaluated_value, str)]
    renamed = sum(_renamed_to(str(k.evaluated_value), v) for k, v in keyed)
    return [k for k, _ in keyed] if renamed >= 3 and 2 * renamed >= len(keyed) else []


def _string_index(target: cst.BaseExpression) -> cst.SimpleString | None:
    """The key of `d["key"]` (one string index), else None."""
    if isinstance(target, cst.Subscript) and len(target.slice) == 1 and \
            dotted(target.value) not in ENVIRON:
        index = target.slice[0].slice
        if isinstance(index, cst.Index) and isinstance(index.value, cst.SimpleString):
            return index.value
    return None


# setuptools' / distutils' own extension class: a setup.py that links CUDA into a Cython or C++ extension (tensorrt_demos'
# `Extension('pytrt', ..., library_dirs=['/usr/local/cuda/lib64', ...])`, t28a) builds it as a CUDAExtension would
_EXTENSION_CLASSES = frozenset({"setuptools.Extension", "setuptools.extension.Extension", "distutils.extension.Extension",
                                "distutils.core.Extension"})


def _extension_build(ctx: FileContext) -> bool:
    """Whether the file builds a C++/CUDA extension: it imports setuptools (or distutils) and torch's C++/CUDA extension
    builders (`from torch.utils.cpp_extension import CUDAExtension`, `from torch.utils import cpp_extension`) or a CUDA
    toolkit locator's answer, or it teaches distutils' compiler to hand .cu files to nvcc (hand_builds.py)."""
    quals = set(ctx.aliases.values())
    setuptools = any(q.split(".")[0] in ("setuptools", "distutils") for q in quals)
    return ctx.hand_cuda_build or setuptools and (bool(ctx.toolkit_configs) or any(
        q == "torch.utils.cpp_extension" or q.startswith("torch.utils.cpp_extension.CUDA") or q in _EXTENSION_CLASSES
        for q in quals))


def _build_variant_rule(compiled: CompiledRules, ctx: FileContext) -> Rule | None:
    """The rule that reports a build-variant string (`extra: {build_variant_of: [rule names]}`), when the file is a
    build script: an extension build (`_extension_build`) or a script that compiles a program against the CUDA runtime
    (`cuda_program_build`); None elsewhere (a module that JIT-builds kernels also runs them on a device)."""
    if not (ctx.cuda_program_build or _extension_build(ctx)):
        return None
    return next((r for r in compiled.rules if r.extra.get("build_variant_of")), None)


class MatchVisitor(cst.CSTVisitor):
    def __init__(self, compiled: CompiledRules, ctx: FileContext, loops: int = 0) -> None:
        super().__init__()
        self._choices_read: dict[str, bool] = {}    # rule code -> the file acts on its setting (_choice_read)
        self.c = compiled
        self.ctx = ctx
        self.hits: list[RawHit] = []
        self.file_lines: list[str] | None = None        # the whole file (set by the engine; `_device_option_read`)
        self._option_text: str | None = None
        # `Device.cuda` / `Backend.CUDA` as an operand of a comparison (or in a tuple compared): an enum member (t14v)
        self._enum_compared: set[int] = set()
        self._compared_attributes: set[int] = set()   # attribute chains a comparison compares (`x == Enum.MEMBER`)
        self._handled: set[int] = set()   # ids of nodes already matched (or binding names)
        self._type_args: set[int] = set()  # ids of arguments that name a type (`response_model=`), not visited
        self._saved_locations: set[int] = set()   # keys of map_location dicts (RawHit.saved_location)
        self._launched: set[int] = set()  # calls of a CuPy / PyCUDA kernel loader whose result is launched at once
        self._fed_to_switch: set[int] = set()   # ids of parameters whose default is no finding (_mark_fed_to_switch)
        # attribute names that are not the tensor property an attribute rule means: `platform.is_cuda()` (a call:
        # Tensor.is_cuda is a property), `self.is_cuda`, `obj.is_cuda = ...` (a binding)
        self._not_property: set[int] = set()
        # inside a comparison, a dict key, a subscript or a list of option names: a dtype there is read or named,
        # not chosen (`dtype in (torch.float16, torch.bfloat16)`, `{torch.bfloat16: 756e12}`, `cfg["bf16"]`,
        # `choices=["bfloat16", "float16"]`), so dtype rules (precision rules that match names) stay quiet
        self._dtype_quiet = 0
        # collections whose items are each chosen, not listed side by side: tuples unpacked into as many targets
        # (`a, b = x, y`), an option's default list (`add_argument('--dtypes', nargs='+', default=('fp32', 'fp16'))`)
        self._each_chosen: set[int] = set()
        self._in_message = 0
        # calls entered inside a message's text (`assertEqual(model(x.to(torch.bfloat16)).shape, ...)`): their
        # arguments are code that runs, whatever the message around them shows
        self._calls_in_message = 0
        self._raising = 0      # inside a `raise` statement: runs at most once, as the run stops (t11y)
        self._mul_operands: set[int] = set()   # calls that are a direct operand of `*` (when: {operand_of: "*"})
        # inside the body of a for / while loop (when: {in_loop: true}); a sliced statement starts inside
        # as many loops as enclose it in the file
        self._loop_depth = loops
        self._compared = 0      # inside a comparison
        self._call_args: dict[int, cst.Call] = {}   # a call argument's value -> the call (`trt.ActivationType.SIGMOID`)
        self._operands: set[int] = set()    # a comparison's operands (and the items of a tuple / list / set operand)
        self._probe_compared: set[int] = set()   # literals compared with such an answer (`"A100" in gpu`)
        self._ascend_chain: set[int] = set()     # literals of an `if` / `elif` chain with an Ascend model's arm
        self._asserting = 0     # inside an assert statement's test or an assertion call's arguments
        # string arguments of str methods (`s.replace("fp8", "float8")`): text, not a setting (precision rules)
        self._name_text: set[int] = set()
        # string literals that are segments of a file path (`BASE / "cuda" / "functions_cuda.cpp"`,
        # `os.path.join(root, "cuda", ...)`): a folder's name, not a device (nncf's extension sources, heldout18)
        self._path_segments: set[int] = set()
        self._dropped: set[int] = set()     # `imports.remove("flash_attn")`: a name taken out of a collection
        self._annotated: set[int] = set()   # targets of annotated assignments (`cudnn_enabled: bool = True`)
        self._unset: set[int] = set()       # the variable name of `os.environ.pop("X", None)` / `os.unsetenv("X")`
        self._to_ascend: set[int] = set()   # X of `os.environ["ASCEND_RT_VISIBLE_DEVICES"] = os.environ["X"]`
        self._name_tests: set[int] = set()  # the literals of `name.startswith("x")` / `.endswith(...)`
        self._renamed: set[int] = set()     # the CUDA names of a rename table (`("CUBLAS_OP_T", "HIPSOLVER_OP_T")`)
        self._options = 0       # inside the value of `choices=` (argparse, click): options listed, none chosen
        self._required: set[int] = set()   # None checks that require an optional import (an assert's test)
        # names passed straight to an assertion (`self.assertEqual(x.dtype, torch.bfloat16)`) or to torch.finfo /
        # iinfo: checked or measured, not chosen
        self._asserted: set[int] = set()
        self._table_values: set[int] = set()     # values of dict entries whose key names them (RawHit.table_entry)
        self._label_edits: set[int] = set()      # build labels stripped / split off, or one of a table of builds
        self._bindings: list[tuple[int, cst.BaseExpression | None, cst.BaseExpression]] = []   # open assignments
        # dtype names a guard requires or casts around -> the guard's kind (dtype_requirements.py)
        self._required_dtypes: dict[int, str] = {}
        # a module that builds C++/CUDA extensions (imports CUDAExtension / cpp_extension): a bare "cuda" compared or
        # listed there names the CUDA VARIANT of the build (torch_cluster / torch_sparse `suffices = ['cuda', 'cpu']`,
        # `if suffix == 'cuda':`), not a device; the variant rule (extra: {build_variant_of: ...}) reports it (t14r)
        self._variant_rule = _build_variant_rule(compiled, ctx)
        # only an extension build's "cuda" names its variant: a script that compiles a CUDA program may still run
        # torch on a `--device` (`choices=["cpu", "cuda"]`), and those strings stay device strings (review47 item 1)
        self._variant_devices = self._variant_rule is not None and _extension_build(ctx)
        self._listed: set[int] = set()      # string items of a list / tuple / set literal, or compared with a name
        self._list_items: set[int] = set()  # items of a list literal (`libraries += ['torch_cuda']`)
        # items on the later lines of a multi-line `{"nvcc": [...]}` slot: the key's line is the one decision (tp55b)
        self._slot_later: set[int] = set()
        # the "cuda" key of a table keyed by torch device type with no "npu" entry (`{"cpu": f_cpu, "cuda": f_cuda}`,
        # looked up with `x.device.type`): the key names a device the table serves, and an NPU tensor has no entry
        self._dispatch_keys: set[int] = set()
        self._called_subscripts: set[int] = set()      # `BACKENDS["cuda"](...)`: an entry picked and run
        # a string arm of `a if test else b` whose other arm is a string too: id -> the other arm's text
        self._other_arm: dict[int, str] = {}
        # `hasattr(obj, "cuda")` tests whose branch calls `.cuda(...)`: id of the hasattr call -> (method rule, name)
        self._method_probes: dict[int, tuple[Rule, str]] = {}

    # -- helpers -------------------------------------------------------------------------------

    def _hit(self, rule: Rule, node: cst.CSTNode, symbol: str, **kw) -> None:
        if id(node) in self._required_dtypes and rule.category == "precision":
            self.hits.append(RawHit(rule, node, symbol, required=self._required_dtypes[id(node)], **kw))
            return      # `if x.dtype != torch.bfloat16: raise`: a requirement, not a read (dtype_requirements.py)
        if (self._dtype_quiet or id(node) in self._asserted or isinstance(node, cst.Name) and
                node.value in self.ctx.assigned_aliases) and rule.category == "precision" and (
                "string" in rule.match or rule.name in _FOREIGN_DTYPE_NAMES):
            return      # (`dtype=FP8_WEIGHT_DTYPE`: the constant's own line carries the dtype)
        if self._compared and rule.name in _COMPARED_DTYPE_NAMES:
            return      # `mx_tensor_dtype == tl.float8e4nv` asks which type came in; the cast or table chooses it
        if rule.extra.get("arm_paired_with") and isinstance(node, cst.SimpleString) \
                and self._other_arm.get(id(node)) not in rule.extra["arm_paired_with"]:
            return      # `"tf32"` alone names oneDNN's CPU mode too; against "ieee" it is Triton's / torch's fp32 choice
        if rule.extra.get("compared_only") and (not self._compared or self._asserting):
            # `VENDORS = {"NVIDIA": ...}`: a vendor name outside a comparison chooses nothing; `assert
            # gpu.manufacturer == "nvidia"` (a test checking data) chooses no branch either (t14l)
            return
        if rule.extra.get("label_tests_only") and id(node) in self._label_edits:
            return      # a build label cut off a version text, or one entry of a table of builds (review49 item 10)
        if rule.extra.get("probe_compared") and (id(node) not in self._probe_compared or id(node) in self._ascend_chain):
            # `gpu.name == "A100"` in a cloud catalogue compares an offer, not the device probed (tk43); an `if` /
            # `elif` chain that also tests an Ascend model (`elif "910B" in device_name:`) has its Ascend case (tq47a)
            return
        if rule.extra.get("not_sentences") and _SENTENCE_END.search(symbol):
            return      # `return False, 'nvcc unavailable!'`: a status text for a person, not a command (t33a)
        if rule.extra.get("file_imports") and not self._file_imports(rule.extra["file_imports"]):
            return      # `ctypes.CDLL("build/libmyplugins.so")` is a TensorRT plugin only beside TensorRT (t28a)
        if rule.extra.get("build_scripts_only") and self._variant_rule is None:
            return      # `os.getenv("ENABLE_CUDA")` switches a build only in a build script; a service's is its device (tk44)
        if rule.extra.get("not_name_tests") and (id(node) in self._name_tests or self._compared
                                                 and id(node) in self._operands):
            return      # `libname.startswith("libnccl.so.2")`: a name tested, nothing loaded (tq46a)
        if rule.extra.get("slot_folded") and id(node) in self._slot_later:
            return      # `'nvcc': ['-O2',\n '-gencode=arch=compute_60,code=sm_60', ...]`: the key's finding (decision 18)
        if rule.extra.get("not_listed") and (self._options or id(node) in self._listed):
            return      # `choices=["inductor", "nvfuser"]`, `BACKENDS = (...)`: a menu of names, none chosen (review48)
        if rule.extra.get("compared_operand") and id(node) not in self._operands:
            return      # `find_spec("bitsandbytes") is None`: the literal is a call's argument, not what is compared
        if (self._compared or self._options) and rule.name in _CHOICE_STRINGS:
            return      # `attn_implementation == "flash_attention_2"` reads a choice made elsewhere; `choices=[...]`
                        # lists the options the user picks from
        end = kw.get("end_node")
        if rule.extra.get("at_arg") and isinstance(end, cst.Call):
            cond = rule.when.get("arg") or {}
            arg = self._arg(end, cond.get("pos"), cond.get("kw"))
            if arg is not None:
                node = arg.value    # a multi-line call: report the line that names what the rule is about
        if id(node) in self._table_values:
            kw["table_entry"] = True
        holder = self._call_args.get(id(node))
        keyword = next((a.keyword.value for a in holder.args if a.value is node and a.keyword is not None),
                       None) if holder is not None else None
        if keyword is not None:
            kw["keyword"] = keyword     # (RawHit.keyword: the call's argument that holds this value)
        if id(node) in self._dispatch_keys:
            kw["no_rewrite"] = True
        if id(node) in self._saved_locations:
            kw["saved_location"] = True
        matched = rule
        if self._variant_rule is not None and (
                self._variant_devices and rule.name in self._variant_rule.extra["build_variant_of"]
                and id(node) in self._listed
                and isinstance(node, cst.SimpleString) or rule.name in self._variant_rule.extra.get("build_script_of", ())
                or self.ctx.hand_cuda_build and rule.name in self._variant_rule.extra.get("hand_build_of", ())):
            rule = self._variant_rule
        if isinstance(node, cst.ConcatenatedString):
            # a compiler command's link flag sits on its own piece's line; any other command split over lines keeps
            # its first line (decision 18)
            node = _part_naming(node, symbol) or (
                self._part_matching(node, matched) if matched.extra.get("in_compiler_command") else None) or node
        self.hits.append(RawHit(rule, node, symbol, **kw))

    def _part_matching(self, node: cst.ConcatenatedString, rule: Rule) -> cst.BaseExpression | None:
        """The first part of an implicit concatenation that the same string rule matches by itself: `f"g++ {src} -o
        {out}"` then `f" -I{home}/include -lcudart"` on the next line (a command's link flag is that line's; tk47)."""
        sides: list[cst.BaseExpression] = [node.left, node.right]
        while sides:
            side = sides.pop(0)
            if isinstance(side, cst.ConcatenatedString):
                sides[:0] = [side.left, side.right]
                continue
            m = next((m for v in self.fold(side) or () if (m := self.c.match_string(v, in_command=True)) is not None),
                     None)
            if m is not None and m[0] is rule:
                return side
        return None

    def _names_rule(self, value: cst.BaseExpression, rule: Rule) -> bool:
        """Whether a literal string inside `value` on the keyword's own line is itself a finding of `rule`
        (`["--use_fast_math"]`: one a line). A list whose items start on the next line (`extra_cuda_cflags=[` then one
        flag a line, accelerated-scan's `load_inline`) holds none there: its flags carry their own lines (tk41)."""
        if isinstance(value, cst.List) and value.elements \
                and isinstance(value.lbracket.whitespace_after, cst.ParenthesizedWhitespace):
            return False
        for string in _literal_strings(value) or []:
            hit = self.c.match_string(string)
            if hit is not None and hit[0] is rule:
                return True
        return False

    def _qual(self, node: cst.CSTNode, call: bool = False) -> str | None:
        d = dotted(node)
        return self._resolve(d, call) if d is not None else None

    def _resolve(self, d: str, call: bool = False) -> str | None:
        """The qualified name of a dotted chain; when its head was imported from several libraries (the
        branches of an if/else or try/except), the first one a rule knows: that branch may run."""
        quals = self.ctx.resolve_all(d, call)
        if len(quals) > 1:
            for q in quals:
                if self.c.match_qualname(q) is not None:
                    return q
        if not quals and d.count(".") >= 3:
            return self._held_module_name(d)
        return quals[0] if quals else None

    def _held_module_name(self, d: str) -> str | None:
        """`Config.xformers.ops.memory_efficient_attention(...)` (DiffBIR: `Config.xformers = xformers` after the guarded
        import, in another module): a library module kept on an object whose name no import binds (`self`, a local,
        a relatively imported class); the tail from the module's name on is a name a library rule (attention /
        kernel / third_party / apex) knows exactly, three segments at least, so that `self.flash_attn(...)` or
        `args.cuda.x` stay the code's own. Not a chain through an imported package (`optimum.habana.transformers.
        integrations...`: that package's own copy) (t19e)."""
        segments = d.split(".")
        for i in range(1, len(segments) - 2):
            if segments[i] not in self.c.held_heads:
                continue
            tail = ".".join(segments[i:])
            if any(rule.category in LIBRARY_CATEGORIES for rule in self.c.exact.get(tail, ())):
                return tail
        return None

    def fold(self, node: cst.CSTNode, follow_names: bool = False) -> set[str] | None:
        """Possible string values of an expression; unknown parts become HOLE."""
        if isinstance(node, cst.SimpleString):
            prefix = node.prefix.lower()
            if "b" in prefix:
                return None
            try:
                value = node.evaluated_value
            except Exception:  # noqa: BLE001 - malformed escapes: fall back to the raw text
                value = node.raw_value
            return {value} if isinstance(value, str) else None
        if isinstance(node, cst.ConcatenatedString):
            left, right = self.fold(node.left), self.fold(node.right)
            if left is None or right is None:
                return None
            return {a + b for a in left for b in right}
        if isinstance(node, cst.FormattedString):
            out = ""
            for part in node.parts:
                out += part.value if isinstance(part, cst.FormattedStringText) else HOLE
            return {out}
        if isinstance(node, cst.BinaryOperation):
            if isinstance(node.operator, cst.Add):
                left, right = self.fold(node.left, True), self.fold(node.right, True)
                if left is None and right is None or len(left or ()) * len(right or ()) > MAX_FOLDED:
                    return None
                return {a + b for a in (left or {HOLE}) for b in (right or {HOLE})}
            if isinstance(node.operator, cst.Modulo):
                left = self.fold(node.left, True)
                if left is None:
                    return None
                return {_PERCENT_SPEC.sub(HOLE, v) for v in left}
            return None
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value == "format":
            base = self.fold(node.func.value)
            if base is None:
                return None
            return {_FORMAT_FIELD.sub(HOLE, v) for v in base}
        if isinstance(node, cst.IfExp):
            a, b = self.fold(node.body, follow_names), self.fold(node.orelse, follow_names)
            if a is None and b is None:
                return None
            return (a or set()) | (b or set())
        if follow_names and isinstance(node, cst.Name) and node.value in self.ctx.constants:
            return self.ctx.constants[node.value]
        return None

    def _match_values(self, node: cst.CSTNode, values: set[str], via: str | None = None, run_arg: bool = False) -> None:
        """String rules and env rules against every possible value of a string expression. A name that
        may hold several matching values (`device = f"cuda:{r}"` ... `device = "cuda"`) is reported once."""
        if via is not None:
            fired: set[str] = set()
            for value in sorted(values):
                env_rule = self.c.match_env(value)
                m = self.c.match_string(value) or ((env_rule, value) if env_rule is not None else None)
                if m is not None and m[0].name == _DEVICE_STRING_RULE:
                    # `model.to(device)` below `device = "cuda"`: a use of the choice, not a finding of its own;
                    # the choice is reported where it is made (lead decision 4, session 21; docs/precision.md)
                    continue
                if m is not None and m[1] in m[0].extra.get("in_lists_only", ()) and id(node) not in self._list_items:
                    continue
                if m is not None and m[0].code not in fired:
                    fired.add(m[0].code)
                    self._hit(m[0], node, value.replace(HOLE, "{…}"), value=m[1], via=via, run_arg=run_arg)
            return
        compared = id(node) in self._operands and self._compared and not self._asserting and not self._variant_devices
        for value in sorted(values):
            m = (compared and self.c.match_compared_string(value)) or self.c.match_string(value)
            if m is not None and m[0].category == "precision" and id(node) in self._name_text:
                continue
            if m is not None and m[0].category != "device" and id(node) in self._dropped:
                continue
            if m is not None and m[0].name == _DEVICE_STRING_RULE and id(node) in self._path_segments:
                continue
            if m is not None and m[1] in m[0].extra.get("in_lists_only", ()) and id(node) not in self._list_items:
                continue      # `("torch_cpu", "torch_cuda")`, `{"torch_cuda": ...}`: a label, not a link list's item
            if m is not None:
                rule, pattern = m
                self._hit(rule, node, value.replace(HOLE, "{…}"), value=pattern, via=via)
                for stacked, stacked_pattern in self.c.stacked_strings(value):
                    self._hit(stacked, node, value.replace(HOLE, "{…}"), value=stacked_pattern, via=via)
                continue
            env_rule = self.c.match_env(value)
            if id(node) in self._to_ascend:
                continue
            if id(node) in self._renamed and env_rule is not None and value not in env_rule.symbols \
                    and value not in self.c.env_exact:
                continue    # a name a source-rewrite table translates, not a variable anything reads
            if id(node) in self._unset:
                if env_rule is None or env_rule.category != "device":
                    continue
            for stacked in self.c.stacked_env(value):
                self._hit(stacked, node, value, via=via)
            if env_rule is not None:
                self._hit(env_rule, node, value, via=via)
                continue
            if self.c.env_in_text_re is not None and via is None:
                for name in dict.fromkeys(_cmake_define(m) for m in self.c.env_in_text_re.finditer(value)):
                    env_rule = self.c.match_env(name)
                    if env_rule is not None:
                        for stacked in self.c.stacked_env(name):
                            self._hit(stacked, node, name)
                        self._hit(env_rule, node, name)

    def _is_message_call(self, func: cst.CSTNode, qual: str | None) -> bool:
        if qual is not None and qual.startswith(_MESSAGE_QUAL_PREFIXES):
            return True
        if isinstance(func, cst.Name):
            last = func.value
        elif isinstance(func, cst.Attribute):
            last = func.attr.value
        else:
            return False
        if qual is not None and qual.startswith(("torch.", "apex.", "os.", "subprocess.")):
            return False
        return bool(_MESSAGE_FUNCS.search(last))

    def _arg(self, call: cst.Call, pos: int | None, kw: str | None) -> cst.Arg | None:
        positional = [a for a in call.args if a.keyword is None and not a.star]
        if kw is not None:
            for a in call.args:
                if a.keyword is not None and a.keyword.value == kw:
                    return a
        if pos is not None and pos < len(positional):
            return positional[pos]
        return None

    def _arg_values(self, node: cst.CSTNode) -> set[str]:
        if isinstance(node, (cst.List, cst.Tuple, cst.Set)):
            # `torch.library.impl("ns::op", ["CUDA"])`: a list of dispatch keys / device types holds each value
            return set().union(*(self._arg_values(e.value) for e in node.elements if isinstance(e, cst.Element)))
        folded = self.fold(node, True)
        if folded:
            return folded
        if isinstance(node, cst.Integer):
            return {node.value}
        if isinstance(node, cst.Name) and node.value in ("True", "False", "None"):
            return {node.value}
        q = self._qual(node)
        if q is not None:
            return {q}
        d = dotted(node)
        return {d} if d else set()

    def _names_within(self, node: cst.CSTNode) -> set[str]:
        """Qualified names, `.method` calls and `@` anywhere inside an argument, for `when: {arg: {within: true}}`:
        `all_reduce(torch.zeros(3, dtype=torch.float64))` holds torch.float64, `all_reduce(t.double())` `.double`."""
        out: set[str] = set()
        stack = [node]
        while stack:
            n = stack.pop()
            if isinstance(n, (cst.Attribute, cst.Name)):
                q = self._qual(n)
                if q is not None:
                    out.add(q)
            if isinstance(n, cst.Call) and isinstance(n.func, cst.Attribute):
                out.add("." + n.func.attr.value)
            elif isinstance(n, cst.BinaryOperation) and isinstance(n.operator, cst.MatrixMultiply):
                out.add("@")          # `softmax(q @ k.transpose(-2, -1) * scale)`
            stack.extend(children(n))
        return out

    def _when_ok(self, rule: Rule, call: cst.Call | None) -> bool:
        if not rule.when:
            return True
        if call is None:
            return False
        if rule.when.get("operand_of") == "*" and id(call) not in self._mul_operands:
            return False      # `F.silu(gate) * up`: the call must be multiplied by something
        if rule.when.get("in_loop") and (not self._loop_depth or self._made_on_host(call) or self._raising):
            # `loss.item()` once per step, not once per run; `torch.randint(3, 10, (1,)).item()`; `raise
            # Exception("Loss is {}".format(loss.item()))` reads the value once, as the run stops (t11y, heldout16)
            return False
        missing = rule.when.get("missing_arg")
        if missing:
            kws = missing.get("kw")
            # any one of the keywords gives it (`src=` or torch >= 2.6's group-relative `group_src=`)
            if any(self._arg(call, missing.get("pos") if i == 0 else None, kw) is not None
                   for i, kw in enumerate(kws if isinstance(kws, list) else [kws])):
                return False
        cond = rule.when.get("arg")
        if cond:
            arg = self._arg(call, cond.get("pos"), cond.get("kw"))
            if arg is None:
                # a rule that only names values to leave alone holds for a call without the argument
                return "not_values" in cond and "values" not in cond
            wanted = {str(v) for v in cond.get("values", [])}
            values = self._arg_values(arg.value)
            if values and values <= {str(v) for v in cond.get("not_values", [])}:
                return False
            if cond.get("unknown") and not self.fold(arg.value, True) and not (
                    isinstance(arg.value, cst.Call) and self._qual(arg.value.func, True) in _LIBRARY_LOOKUPS):
                # `reduce=self.aggr` (an option that may pick "max"): not a literal, so it may hold; a library found
                # by its system name (`ctypes.CDLL(ctypes.util.find_library("cudart"))`) is no such unknown
                return True
            if cond.get("within"):
                values = values | self._names_within(arg.value)
            if wanted and not _any_value_matches(values, wanted):
                return False
        return True

    def _made_on_host(self, call: cst.Call) -> bool:
        """`torch.randint(3, 10, (1,)).item()`: the method is called on a tensor a factory makes in the same
        expression without a device, so on the CPU: reading it back costs no device sync."""
        made = call.func.value if isinstance(call.func, cst.Attribute) else None
        if not isinstance(made, cst.Call) or any(a.keyword is not None and a.keyword.value == "device"
                                                 for a in made.args):
            return False
        return self._qual(made.func, True) in _HOST_FACTORIES

    def _partial_disabled(self, node: cst.CSTNode) -> bool:
        """`partial(autocast, 'cuda', enabled=False)`: a callable bound with mixed precision off (vector-quantize-
        pytorch's LFQ forcing float32; tq44b), read as the call it makes."""
        holder = self._call_args.get(id(node))
        return holder is not None and bool(holder.args) and holder.args[0].value is node \
            and self._qual(holder.func, True) == "functools.partial" and any(
                a.keyword is not None and a.keyword.value == "enabled" and isinstance(a.value, cst.Name)
                and a.value.value == "False" for a in holder.args)

    def _match_reference(self, node: cst.CSTNode, qual: str, call: cst.Call | None) -> bool:
        """A resolved qualified name (call, attribute, decorator, base, imported name)."""
        m = self.c.match_qualname(qual)
        if m is None and (module := extension_module_of(qual, self.ctx.unresolved_extensions)) is not None \
                and not host_entry_point(qual) \
                and not ("." in module and call is None and qual != module and isinstance(node, cst.Attribute)):
            # a module the file calls like a compiled extension (unresolved_extensions.py): matched under its
            # marker segment, reported under its own name; of a module imported by a dotted path, the import and
            # the calls, not each read of a constant it holds (`wmb.WholeMemoryDataType.DtFloat`)
            m = self.c.match_qualname(f"{UNRESOLVED_EXTENSION}.{qual}")
        stacked = self.c.match_stacked(qual) if self.c.stacked or self.c.stacked_globs else ()
        if m is None and not stacked:
            return False
        if self._in_message and qual.rsplit(".", 1)[-1] in _MODULE_METADATA:
            # `warnings.warn("Using precompiled x_cuda from {}".format(x_cuda.__file__))`: a message naming where a
            # module lives (or its version) describes it, it does not use it; the message rule wins (t14t)
            return True
        if self._in_message and not self._calls_in_message and call is None and m is not None and not stacked:
            # `warnings.warn(f"... the previous value of {torch.backends.cuda.matmul.allow_tf32}")`: a message showing
            # a precision switch's (or a dtype's) value reads it for a human, it sets and chooses nothing (t14z); so
            # does one showing a flag of a kernel module (L3C's `print(f'CUDA available: {pe.CUDA_AVAILABLE}')`, t33a)
            # and one showing a device value (`print(torch.version.cuda)`: lead decision 48, only a CUDA call inside a
            # message is a pair; t36a)
            return True
        if self._in_message and call is not None and m is not None and not stacked \
                and m.rule.category == "precision" and _SETTING_GETTER.match(qual.rsplit(".", 1)[-1]):
            # `print(f"... {torch.get_float32_matmul_precision()}")`: a message showing a precision setting through its
            # getter reads it for a human, as t14z's attribute reads above do; it sets and chooses nothing (a CUDA
            # call in a message stays a finding: lead decision 48)
            return True
        if call is not None and self._already_ported(call):
            return True
        # `torch.autocast(..., enabled=False)` turns mixed precision off: nothing for a precision rule to check; so
        # does `autocast(False)` (torch.cuda.amp's `enabled` is its first parameter, and no autocast's device_type is
        # False: funasr's `with autocast(False):` around feature extraction; tq38)
        disabled = call is not None and any(
            (a.keyword is not None and a.keyword.value == "enabled" or a.keyword is None and a is call.args[0])
            and isinstance(a.value, cst.Name) and a.value.value == "False" for a in call.args) \
            or call is not None and _float32_region(call) or call is None and self._partial_disabled(node)
        enum_member = _ENUM_MEMBER.search(qual) is not None
        if m is not None and call is None and m.rule.extra.get("calls_not_constants") and not enum_member \
                and _CONSTANT_NAME.match(qual.rsplit(".", 1)[-1]) and not stacked:
            return True
        if m is not None and call is None and m.rule.extra.get("compared_members_quiet") and enum_member \
                and id(node) in self._compared_attributes and id(node) not in self._call_args and not stacked:
            # `if param.ds_status == ZeroParamStatus.NOT_AVAILABLE:`: a library's enum member compared with a value
            # the code holds reads a constant; it calls nothing of the library (lead decision 40, r2b)
            return True
        if m is not None and call is None and m.rule.extra.get("calls_not_constants") and enum_member \
                and id(node) in self._call_args:
            # `network.add_activation(x,\n trt.ActivationType.SIGMOID)`: the member is an argument of a call of the
            # library's objects; the finding is the call, on its first line (lead decisions 18 / 40, t28a)
            node = self._call_args[id(node)]
            callee = self._qual(node.func, True)
            callee_match = self.c.match_qualname(callee) if callee else None
            if callee_match is not None and callee_match.rule is m.rule and not stacked:
                # `deepspeed.comm.all_reduce(x, op=deepspeed.comm.ReduceOp.AVG)`: the call is this rule's own
                # finding already; the member would repeat it at the same place (r2b)
                return True
        if m is not None:
            # Rules on the same name are tried in code order: a conditional rule (`when`) that does not apply
            # leaves the name to the next one (e.g. a coverage finding for the same API).
            for rule in self.c.exact.get(m.pattern, (m.rule,)):
                if disabled and rule.category == "precision":
                    break
                if self._when_ok(rule, call):
                    self._hit(rule, node, qual, value=m.pattern, end_node=call)
                    break
        for rule, pattern in stacked:
            if not (disabled and rule.category == "precision") and self._when_ok(rule, call):
                self._hit(rule, node, qual, value=pattern, end_node=call)
        return True

    def _attribute_rule(self, node: cst.Attribute) -> Rule | None:
        """The attribute rule for `obj.name`, unless the name is a method call, a binding or on self/cls."""
        rules = self.c.attributes.get(node.attr.value)
        if rules and rules[0].extra.get("enum_compared") and id(node) not in self._enum_compared:
            return None               # `args.cuda`, `Device.cuda` in a table: only a member compared (t14v)
        if not rules or id(node.attr) in self._not_property:
            return None
        receiver = (dotted(node.value) or "").rsplit(".", 1)[-1]
        receivers = rules[0].extra.get("not_on_receivers")
        if receivers and receiver in receivers:
            return None               # `onnx.TensorProto.FLOAT16`: an ONNX element type, not a switch (t16e)
        only = rules[0].extra.get("on_receivers")
        if only and receiver not in only:
            return None               # `DType.bfloat16` of a dtype enum, not numpy's or Triton's `float16` (t23a)
        if rules[0].name in _FOREIGN_DTYPE_NAMES and id(node) in self._asserted:
            return None               # `{"bf16": DType.bfloat16}`: a table entry (the hit is on the member's name)
        if isinstance(node.value, cst.Name) and node.value.value in ("self", "cls") \
                and not (node.attr.value.startswith("__") and node.attr.value.endswith("__")):
            return None               # a protocol dunder (`self.__cuda_array_interface__ = ...`) is not the class's own name
        return rules[0]

    def _already_ported(self, call: cst.Call | None) -> bool:
        """`torch.amp.GradScaler("npu")`, `torch.autocast("npu", ...)`, `torch.device("npu", i)`: the call already
        names the NPU device type, so advice to write it is noise."""
        if call is None:
            return False
        for arg in call.args:
            if arg.keyword is None and arg is not call.args[0]:
                continue
            if arg.keyword is not None and arg.keyword.value not in ("device", "device_type", "backend"):
                continue
            values = self.fold(arg.value, True)
            if values and all(_NPU_VALUE.match(v) for v in values):
                return True
        return False

    # -- statements ----------------------------------------------------------------------------

    def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> bool:
        # A bare string statement is a docstring or a comment-like literal: never a finding.
        if len(node.body) == 1 and isinstance(node.body[0], cst.Expr) and isinstance(
            node.body[0].value, (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString)
        ):
            return False
        # `__all__ = ["flash_attention", ...]` (Wan2.1's attention module): the names a module exports, never a
        # setting (t11f); the statement holds nothing else to report
        if len(node.body) == 1 and _assigns_all(node.body[0]):
            return False
        return True

    def visit_Import(self, node: cst.Import) -> bool:
        for alias in node.names:
            name = dotted(alias.name)
            if name is None:
                continue
            if not self._match_reference(alias, name, None):
                rule = self.c.match_import(name) or self._import_reached(name)
                if rule is not None:
                    self._hit(rule, alias, name)
        return False

    def _import_reached(self, module: str) -> Rule | None:
        """`import encoding` ... `encoding.parallel.DataParallelModel(net)`: a package imported whole, quiet by its own
        (common) name, is reported at its import when the file reads through it a part an `import_reached` rule names:
        the import loads that part (PyTorch-Encoding's `__init__` imports `parallel` and `nn`; tk41)."""
        for qual in sorted(self.ctx.reached_through_imports):
            if qual.startswith(module + ".") and (m := self.c.match_qualname(qual)) is not None \
                    and m.rule.extra.get("import_reached"):
                return m.rule
        return None

    def visit_ImportFrom(self, node: cst.ImportFrom) -> bool:
        if node.relative and not isinstance(node.names, cst.ImportStar):
            first = len(self.hits)
            for alias in node.names:     # only a package's own compiled extension resolves (context.py)
                bound = alias.asname.name if alias.asname is not None else alias.name
                qual = self._qual(bound) if isinstance(bound, cst.Name) else None
                if qual is not None and qual.startswith(LOCAL_PACKAGE + "."):
                    self._match_reference(alias, qual, None)
            if node.lpar is None:       # (a parenthesised relative import keeps its name lines, t14f's reading)
                self._on_statement_line(node, first)
            return False
        if node.relative or node.module is None:
            return False
        module = dotted(node.module)
        if module is None:
            return False
        if isinstance(node.names, cst.ImportStar):
            if not self._match_reference(node.module, module, None):
                rule = self.c.match_import(module)
                if rule is not None:
                    self._hit(rule, node.module, module)
            return False
        first = len(self.hits)
        # `from torch import float16, float32, bfloat16`: a line importing several dtypes chooses none of them; each
        # use is reported (msit's dump reader; tq50b)
        dtypes = {id(a) for a in node.names if module == "torch" and _TORCH_DTYPE.fullmatch(dotted(a.name) or "")}
        for alias in node.names:
            qual = f"{module}.{dotted(alias.name)}"
            if len(dtypes) > 1 and id(alias) in dtypes:
                continue
            if alias.asname is not None and isinstance(alias.asname.name, cst.Name) \
                    and alias.asname.name.value == "_C":      # `from nerfacc import csrc as _C` (context.py)
                qual = self._qual(alias.asname.name) or qual
            if not self._match_reference(alias, qual, None) and not self.c.excluded_by_glob(qual):
                rule = self.c.match_import(module)      # (`from fla.models.rwkv6 import RWKV6Config`: excluded)
                if rule is not None:
                    self._hit(rule, alias, qual)
        self._on_statement_line(node, first)
        return False

    def _on_statement_line(self, node: cst.ImportFrom, first: int) -> None:
        """`from flash_attn.flash_attn_interface import (` / `import \\` ... `flash_attn_varlen_func`: the hits on
        the names of a multi-line import are reported on the statement's first line (lead decision 6), whether the
        names continue in parentheses or after a backslash (t36a); engine.py moves only findings no fix rewrites."""
        for hit in self.hits[first:]:
            hit.statement = node

    def _claim_cuda_python_name(self, node: cst.Call) -> None:
        """`importlib.util.find_spec("cuda")`, `pytest.importorskip("cuda.bindings")`: NVIDIA's cuda-python package
        (top-level module `cuda`, https://nvidia.github.io/cuda-python/) looked up by name; the literal is a module
        name, not a device string (tq54c, TransferQueue's GDR staging tests)."""
        func = node.func
        last = func.attr.value if isinstance(func, cst.Attribute) else func.value if isinstance(func, cst.Name) else None
        if last in _MODULE_LOOKUPS and node.args and node.args[0].keyword is None and \
                isinstance(arg := node.args[0].value, cst.SimpleString) and isinstance(arg.evaluated_value, str) and \
                arg.evaluated_value.split(".", 1)[0] == "cuda" and _MODULE_NAME.match(arg.evaluated_value):
            self._handled.add(id(arg))

    def _dynamic_import(self, node: cst.Call) -> None:
        """`cuml = importlib.import_module("cuml")`, `triton = OptionalImport("triton")`: an import by a literal name
        is reported like the `import` statement it stands for (t14q); a look-up rule that matched the call itself
        (NPU393's `import_module("triton")`) goes first."""
        func = node.func
        last = func.attr.value if isinstance(func, cst.Attribute) else func.value if isinstance(func, cst.Name) else None
        if last not in _MODULE_IMPORTERS or not node.args or node.args[0].keyword is not None:
            return
        arg = node.args[0].value
        module = arg.evaluated_value if isinstance(arg, cst.SimpleString) else None
        if not isinstance(module, str) or not _MODULE_NAME.match(module):
            return
        if not self._match_reference(func, module, None):
            rule = self.c.match_import(module)
            if rule is not None:
                self._hit(rule, func, module, end_node=node)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        self._handled.add(id(node.name))
        if any(self._qual(d.decorator) in _REGISTERED_BY_NAME for d in node.decorators):
            # `@tvm.register_func def tvm_callback_cuda_compile(...)`: TVM registers the function under its own name,
            # which string rules read as they read `register_func("tvm_callback_cuda_compile", f)` (t26a)
            m = self.c.match_string(node.name.value)
            if m is not None:
                self._hit(m[0], node.name, node.name.value, value=m[1])
        self._mark_fed_to_switch(node)
        return True

    def _kernel_object(self, node: cst.BaseExpression) -> tuple[str, str] | None:
        """(kind, builder) of a CuPy / PyCUDA kernel object or compiled module in hand: context.kernel_object_made
        read on the CST (a module-level name or `self.` attribute bound to one; a call, a builder's, `.get_function`
        / `.prepare` or the file's loader, is read by context.kernel_call_made, as on the AST)."""
        if isinstance(node, cst.Name):
            local = self.ctx.kernel_locals.get(node.value)
            return self.ctx.kernel_objects.get(node.value) or (local[0][2] if local else None)
        if (attr := self_attr(node)) is not None:
            return self.ctx.kernel_attrs.get(attr.value)
        if not isinstance(node, cst.Call):
            return None
        func = node.func
        receiver = func.value if isinstance(func, cst.Attribute) else None
        return kernel_call_made(self.ctx, self._resolve(dotted(func) or ""),
                                func.attr.value if isinstance(func, cst.Attribute) else None,
                                lambda: self._kernel_object(receiver) if receiver is not None else None,
                                func.value if isinstance(func, cst.Name) else None)

    def _kernel_loading(self, node: cst.Call) -> None:
        """`f = load_kernel("roi_forward", src)`: a call of the file's CuPy / PyCUDA kernel loader (it compiles the
        kernel); `self.module.get_function("k")`: a kernel taken out of a compiled module kept in a name (t32a), and
        `mod.load(ptx)`: compiled code loaded into one (t36a). The
        builder's own call is reported by its rule; a loader's result launched at once is the launch."""
        func = node.func
        if isinstance(func, cst.Name) and func.value in self.ctx.kernel_loaders and func.value not in self.ctx.aliases:
            symbol = self.ctx.kernel_loaders[func.value][1] + "()"
        elif isinstance(func, cst.Attribute) and func.attr.value in _MODULE_KERNEL_METHODS and \
                isinstance(func.value, (cst.Name, cst.Attribute)) and \
                (made := self._kernel_object(func.value)) is not None and made[0] == "module":
            symbol = f"{made[1]}.{func.attr.value}"
        else:
            return
        m = self.c.match_qualname(symbol)
        if m is not None and not self._in_message:
            self._hit(m.rule, func, symbol, value=dotted(func) or "", end_node=node,
                      kernel_local=self._kernel_local(func.value) if isinstance(func, cst.Attribute) else "")

    def _kernel_local(self, node: cst.BaseExpression) -> str:
        """The name when `node` is a function's local kernel object, not one the whole file binds (kernel_locals)."""
        if isinstance(node, cst.Name) and node.value not in self.ctx.kernel_objects \
                and node.value in self.ctx.kernel_locals:
            return node.value
        return ""

    def _mark_fed_to_switch(self, fn: cst.FunctionDef) -> None:
        """Keep in `_fed_to_switch` the parameters whose innermost enclosing def is `fn` (its own, its lambdas'; not a
        nested def's) where a def of that name writes a parameter of that name straight into a torch.backends switch
        (context.params_fed_to_backend_switches): the switch line is the finding, not the default (lead decision 7)."""
        if not self.c.keywords or self.ctx.module is None:
            return
        if self.ctx.switch_fed_params is None:
            self.ctx.switch_fed_params = params_fed_to_backend_switches(self.ctx, self.ctx.module)
        names = {param for name, param in self.ctx.switch_fed_params if name == fn.name.value}
        stack = children(fn) if names else []
        while stack:
            node = stack.pop()
            if isinstance(node, cst.Param) and node.name.value in names:
                self._fed_to_switch.add(id(node))
            if not isinstance(node, cst.FunctionDef):
                stack.extend(children(node))

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        self._handled.add(id(node.name))
        if self.c.callname_globs and not self._in_message:
            for base in node.bases:
                self._named_base(base.value)
        return True

    def _subclass_call(self, func: cst.Name, call: cst.Call) -> bool:
        """`_DataParallel(model, ids)` where this file defines `class _DataParallel(DataParallel)`: the call makes the
        base's object, so an error-level rule of the base reports it too (the class line already has its finding).
        Only error-level rules: an info fact about the base is said once, at the class."""
        base = self.ctx.subclass_of[func.value]
        m = self.c.match_qualname(base)
        if m is None or m.rule.severity_for("a2") != "error" or not self._when_ok(m.rule, call):
            return False
        self._hit(m.rule, func, base, value=m.pattern, end_node=call)
        return True

    def _named_base(self, base: cst.BaseExpression) -> None:
        """`class OperatorBuilder(CUDAOpBuilder)` (lightseq's vendored DeepSpeed builder): a base class that no rule
        knows, named for CUDA / NCCL, is what a call of that name would be (the info-level name rules only)."""
        last = base.value if isinstance(base, cst.Name) else base.attr.value if isinstance(base, cst.Attribute) else None
        if not last or last in self.c.methods or last in self.c.callnames:
            return
        qual = self._qual(base)
        if qual is not None and self.c.knows(qual):
            return      # `class Stream(torch.cuda.Stream)`: the base's own rule reports it
        m = self.c.match_callname_glob(last)
        if m is not None and m[0].severity == "info" and not m[0].when:
            self._hit(m[0], base, last, value=m[1])

    def visit_Param(self, node: cst.Param) -> bool:
        self._handled.add(id(node.name))
        self._implementation_names(node.name, node.default)
        if node.default is not None and self.c.keywords and id(node) not in self._fed_to_switch:
            # `def run(bf16: bool = True)`: a default switches the setting on like a keyword argument would
            self._keyword_binding(node.name, node.default, set(), parameter=True)
        self._dtype_quiet += _compiler_dtype_key(node.name)
        return True

    def leave_Param(self, original_node: cst.Param) -> None:
        self._dtype_quiet -= _compiler_dtype_key(original_node.name)

    def visit_Assign(self, node: cst.Assign) -> bool:
        # `torch.cuda.current_stream = torch.npu.current_stream`: the line maps a CUDA API onto the NPU (the
        # port itself, or a shim for code that calls the CUDA name); the target is rebound, not used
        # (`torch.cuda.Stream = _Placeholder` likewise rebinds the API: monkeypatching, not a call)
        # (`F.gelu = wrap(F.gelu, count_flops)`: a profiler wraps the API; the target and the wrapped original are
        # not uses either: the model's own calls are)
        source = dotted(node.value)
        to_npu = source is not None and "npu" in backends_in_text(source)
        wrapped = [a.value for a in node.value.args] if isinstance(node.value, cst.Call) else []
        for target in node.targets:
            name = dotted(target.target) if isinstance(target.target, cst.Attribute) else None
            if name is None:
                continue
            resolved = self._resolve(name) or ""
            if resolved.startswith("torch.cuda.") and not to_npu and hides_cuda(node.value):
                # `torch.cuda.is_available = lambda : False` (bayesian-torch): the file hides the GPU from itself; the
                # store is reported (patch_targets.py says what it hides and what it leaves visible) (tk43)
                continue
            if to_npu or resolved.startswith("torch.cuda."):
                self._handled.add(id(target.target))
            elif resolved.startswith("torch.") and any(dotted(a) == name for a in wrapped):
                self._handled.add(id(target.target))
                self._handled.update(id(a) for a in wrapped if dotted(a) == name)
        self._enum_chosen(node.value)
        self._acquired_by_getattr(node.value)
        target_env, source_env = _env_read_name(node.targets[0].target), _env_read_name(node.value)
        if target_env and source_env and target_env[0].startswith("ASCEND_"):
            # `os.environ["ASCEND_RT_VISIBLE_DEVICES"] = os.environ["CUDA_VISIBLE_DEVICES"]`: the Ascend variable is
            # set from the CUDA one, the port itself; the CUDA name is only read (its setting keeps its finding)
            self._to_ascend.add(id(source_env[1]))
        if len(node.targets) == 1 and _names_itself(node.targets[0].target, node.value):
            self._handled.add(id(node.value))
        for target in node.targets:
            self._match_item_store(target.target)
            self._claim_key(_string_index(target.target))
            if isinstance(target.target, (cst.Tuple, cst.List)) and isinstance(node.value, cst.Tuple) \
                    and len(target.target.elements) == len(node.value.elements):
                self._each_chosen.add(id(node.value))   # `self.dtype, self.sf_dtype = torch.float8_e4m3fn, ...` (t14e)
        if self.c.flagnames and len(node.targets) == 1:
            self._flag_definition(node.targets[0].target, node.value)
        self._own_jit_build(node)
        # a chain (`c.G_kwargs.num_fp16_res = c.D_kwargs.num_fp16_res = 4`, StyleGAN3's train.py) binds its value
        # like its last target would alone (t22b)
        self._bindings.append((len(self.hits), node.targets[-1].target, node.value))
        self._dtype_quiet += _assigns_a_ref(node)
        return True

    def _file_imports(self, modules: list[str]) -> bool:
        """Whether the file imports one of `modules` (or a module inside one)."""
        return any(q == m or q.startswith(m + ".") for q in self.ctx.aliases.values() for m in modules)

    def _numba_forall(self, call: cst.Call) -> bool:
        """`kernel.forall(n)` of a local `@cuda.jit` kernel, or of any kernel in a file that imports numba.cuda."""
        func = call.func
        if not isinstance(func, cst.Attribute) or func.attr.value != "forall" or len(call.args) not in (1, 2):
            return False
        if isinstance(func.value, cst.Name) and func.value.value in self.ctx.decorated:
            return any(q.startswith("numba.cuda.") for q in self.ctx.decorated[func.value.value])
        return any(q == "numba.cuda" or q.startswith("numba.cuda.") for q in self.ctx.aliases.values())

    def _own_jit_build(self, node: cst.Assign) -> None:
        """`_plugin = custom_ops.get_plugin(..., sources=['bias_act.cpp', 'bias_act.cu'])`: a project's own builder of
        CUDA sources (context.builds_cuda_sources) binds the compiled module; the line that builds it is the module's
        first use. `ext = cpp_extension.load(...)` is reported by the builder's own rule (t22b)."""
        target = node.targets[0].target
        if len(node.targets) != 1 or not isinstance(target, cst.Name) or not isinstance(node.value, cst.Call):
            return
        qual = self._resolve(target.value)
        if qual is not None and qual.startswith(f"{LOCAL_PACKAGE}.{JIT_EXTENSION}.") \
                and self._qual(node.value.func) not in JIT_BUILDERS:
            self._match_reference(target, qual, None)

    def visit_Global(self, node: cst.Global) -> bool:
        return False    # `global _plugin` declares a scope; it uses nothing

    def _match_item_store(self, target: cst.BaseExpression) -> None:
        """`ALL_ATTENTION_FUNCTIONS["sdpa"] = fn` (t14e): an item stored into an imported registry is matched as the
        qualified name `<registry>.__setitem__`, like the registry's own `register(...)` call; only a rule that names
        `__setitem__` exactly is reported (a prefix rule on the registry's package does not fire twice)."""
        if not isinstance(target, cst.Subscript):
            return
        d = dotted(target.value)
        qual = self._resolve(d) if d is not None else None
        if qual is None:
            return
        m = self.c.match_qualname(qual + ".__setitem__")
        if m is not None and m.pattern == qual + ".__setitem__":
            self._match_reference(target, m.pattern, None)

    def leave_Assign(self, original_node: cst.Assign) -> None:
        self._dtype_quiet -= _assigns_a_ref(original_node)
        self._leave_binding()

    def visit_AnnAssign(self, node: cst.AnnAssign) -> bool:
        # `bf16: bool = True` (a dataclass field or config attribute) binds like `bf16 = True`
        self._bindings.append((len(self.hits), node.target if node.value is not None else None,
                               node.value if node.value is not None else node.target))
        if node.value is not None:
            self._enum_chosen(node.value)
            self._acquired_by_getattr(node.value)
        self._annotated.add(id(node.target))
        if isinstance(node.target, cst.Name) or self_attr(node.target) is not None:
            # `_fused_ce: Optional[Callable] = None` before `_fused_ce = LigerFusedLinearCrossEntropyFunction.apply`
            # declares the name (as visit_AssignTarget's binding does); its calls are the uses (t22a); so does
            # `self._rt: Any = None` before `self._rt = cudart` (TransferQueue's GDR staging; tq54c)
            self._handled.add(id(node.target))
        if isinstance(node.target, cst.Name) and node.value is not None and \
                node.target.value in self._dataclass_field_names():
            self._field_default_on(node.target, node.annotation.annotation, node.value)
        return True

    def _enum_chosen(self, value: cst.BaseExpression) -> None:
        """`device = Device.cuda`, `device_type: DeviceType = DeviceType.CUDA`: a device enum's CUDA member as the whole
        value bound is a choice of CUDA, as a comparison with it is a test for CUDA (NPU000; t17c, test19's
        infinity-emb). Not a member inside a table (`[Device.cpu, Device.cuda]`)."""
        if isinstance(value, cst.Attribute) and _enum_member(value) \
                and not (self._qual(value.value) or "").startswith("torch."):
            self._enum_compared.add(id(value))

    def _dataclass_field_names(self) -> frozenset[str]:
        """Names of the annotated fields of the file's `@dataclass` classes (read once per file from its `ast` tree: a
        large class's body may reach the visitor without its header)."""
        if self.ctx.dataclass_field_names is None:
            self.ctx.dataclass_field_names = dataclass_fields(self.ctx.module) if self.ctx.module is not None \
                else frozenset()
        return self.ctx.dataclass_field_names

    def _field_default_on(self, target: cst.Name, kind: cst.BaseExpression, default: cst.BaseExpression) -> None:
        """`cuda: bool = True` in CleanRL's `@dataclass class Args` (tyro makes each field a `--cuda` option), read
        as `args.cuda`: a command-line option named for a CUDA device whose default puts the run on one, as
        `add_argument("--cuda", type=bool, default=True)` is (`_option_default_on`; t16c, test17's pufferlib).
        Only a bool switch that is on: an int field (`gpu: int = 0` in a resource spec) is as often a GPU count."""
        name = target.value
        if isinstance(kind, cst.Name) and kind.value == "bool" and isinstance(default, cst.Name) and \
                default.value == "True" and self._device_option_read(name):
            for rule, pattern in self.c.match_option_keywords(name.lower()):
                self._hit(rule, target, name, value=pattern)

    def leave_AnnAssign(self, original_node: cst.AnnAssign) -> None:
        self._leave_binding()

    def visit_AugAssign(self, node: cst.AugAssign) -> bool:
        self._claim_key(_string_index(node.target))    # `extra_compile_args["nvcc"] += [...]`: nvcc's flags (t20a)
        self._bindings.append((len(self.hits), node.target, node.value))   # `nvcc_flags += ["-gencode", arch]`
        return True

    def leave_AugAssign(self, original_node: cst.AugAssign) -> None:
        self._leave_binding()

    def _leave_binding(self) -> None:
        first_hit, target, value = self._bindings.pop()
        if target is not None and self.c.keywords:
            # a list of flags spans lines (`extra_cuda_cflags = [` ... `"--use_fast_math",`): its items' findings
            # do not stand for the line that names the setting
            said = set() if isinstance(value, (cst.List, cst.Tuple, cst.Set, cst.Dict)) else \
                {h.rule.category for h in self.hits[first_hit:]}
            self._keyword_binding(target, value, said)

    def _keyword_binding(self, target: cst.BaseExpression, value: cst.BaseExpression, said: set[str],
                         parameter: bool = False) -> None:
        """`keyword` rules name a setting; `extra_cuda_cflags = [...]` / `self.use_fp8 = cfg.fp8` binds it like a
        keyword argument would pass it (to False / None / 0 it is off). Not when the statement already has a
        finding of the rule's category (`fp8 = config.fp8`: the attribute rule said it)."""
        key = _string_index(target)
        if (attr := self_attr(target)) is not None:
            name_node = attr
        elif isinstance(target, cst.Name):
            name_node = target
        elif isinstance(target, cst.Attribute) and _base_name(target) not in self.ctx.aliases:
            # a setting on a config object: `cfg.test_cfg.fp16 = True` (mmpretrain's --amp), `args.bf16 = True`;
            # not an attribute of an imported module (`torch.backends.cuda.matmul.allow_tf32`: its own rules)
            name_node = target.attr
        elif key is not None:
            # `extra_compile_args["nvcc"] = nvcc_flags` (torch_cluster), `ds_config["fp16"] = {...}`: an entry set
            # by key, like the key of a dict built in code (t14r)
            self._keyword_key(key, value)
            return
        else:
            return
        if isinstance(value, cst.Attribute) and value.attr.value == name_node.value:
            return      # `self.fp16 = config.fp16`: a copy of a setting made elsewhere
        self._assigned_value(name_node, value)
        # `self.fp8 = LeptoFP8(self.ptq_hook, model, ...)`: the name holds a quantizer object, not a switch (the
        # fp8 choice is where the quantization algorithm is picked); `FP8Config(...)` / `Fp8Recipe(...)` are settings
        holds_object = isinstance(value, cst.Call) and _constructs_object(value)
        derived_graph = "graph" in name_node.value.lower() and _neutral_condition(value)
        for kw in self.c.match_keywords(name_node.value, parameter=parameter):
            if kw[0].extra.get("off_switch"):
                # `def f(x, no_cuda=False)`: CUDA stays on by default; the False default is the finding (pd13)
                if isinstance(value, cst.Name) and value.value == "False":
                    self._hit(kw[0], target, name_node.value, value=kw[1])
                continue
            if kw[0].extra.get("parameters_only") and not _literal_on(value):
                continue    # `def main(cuda=True)` / `cuda=1`; not `cuda=args.cuda` (decided where it is set)
            if holds_object and kw[0].category == "precision" or kw[0].extra.get("keyword_key"):
                continue    # (`nvcc = shutil.which("nvcc")` holds a path, `{"nvcc": [...]}` holds nvcc's flags)
            if kw[0].extra.get("settings_only") and (
                    parameter or not isinstance(target, cst.Name) or id(target) not in self._annotated
                    or target.value not in self._dataclass_field_names()):
                continue    # a variable or parameter of that name is code's own (aten's `cudnn_enabled`), not a setting
            if parameter and kw[0].extra.get("not_parameters"):
                continue    # `def __init__(self, load_in_4bit: bool = True)`: the quantizer's own config class (t14z)
            if kw[0].extra.get("flag_list") and _rocm_flags_only(value):
                continue    # `NVCC_FLAGS += ["-DUSE_ROCM"]` under `if _is_hip():` (vLLM's setup.py): the ROCm build's
            if derived_graph and kw[0].category == "device":
                # `self.use_cuda_graph = (cfg.compilation_config.level == CompilationLevel.PIECEWISE and not
                # cfg.model_config.enforce_eager)`: a graph-capture switch worked out from settings that name no
                # CUDA; the platform's runner does the capture (t11y, tuned on heldout16's vLLM spec decode)
                continue
            if not _switched_off(value, name_node.value) and kw[0].category not in said \
                    and not self._value_says(value, kw[0], name_node.value):
                self._hit(kw[0], _first_listed(value, kw[0]) or target, name_node.value, value=kw[1])

    def _assigned_value(self, name: cst.Name, value: cst.BaseExpression) -> None:
        """`image_name = "mcr.microsoft.com/azureml/bert:...-cuda10.0-..."` later passed as `custom_docker_image=
        image_name`, `def deploy(instance_type="ml.g5.xlarge")`: a literal bound to a name that an `assigned_values`
        rule's `name=value` pattern (no callee) reads is that setting, as the keyword argument would be (t32b)."""
        literal = _literal_text(value)
        if literal is None and _env_read_name(value) is not None and isinstance(value, cst.Call) \
                and len(value.args) > 1:
            # `vm_size = os.environ.get("AML_COMPUTE_CLUSTER_SKU", "STANDARD_NV6")`: the default is the value bound
            # when the variable is unset (tp45, project test121's DLWP notebook)
            literal = _literal_text(value.args[1].value)
        if literal is None or self._in_message:
            return
        kv = self.c.match_keyword_value(None, name.value, literal)
        if kv is not None and kv[0].extra.get("assigned_values"):
            self._hit(kv[0], name, f"{name.value}={literal}", value=kv[1])

    def _claim_key(self, key: cst.SimpleString | None) -> None:
        """`{"nvcc": [...]}`, `args["nvcc"] = flags`: a key that a `keyword_key` rule names is that setting's slot
        (nvcc's flags), so string rules (NPU407's `"nvcc"` command) leave the key to it."""
        if key is not None and isinstance(key.evaluated_value, str) and \
                any(kw[0].extra.get("keyword_key") for kw in self.c.match_keywords(key.evaluated_value)):
            self._handled.add(id(key))

    def _keyword_key(self, key: cst.SimpleString, value: cst.BaseExpression) -> None:
        """A string key that a keyword rule names, set to a value that is not off (a dict entry or `d["k"] = v`)."""
        name = key.evaluated_value
        if not isinstance(name, str) or self._in_message:
            return
        for kw in self.c.match_keywords(name):
            if kw[0].extra.get("settings_only"):
                continue    # `{"cudnn_enabled": state.cudnn_enabled}`, `attr["cudnn_enabled"] = ...`: a record of it
            if not _switched_off(value, name) and not self._value_says(value, kw[0], name):
                self._hit(kw[0], key, name, value=kw[1])

    def _choice_read(self, rule: Rule, wanted: list[str]) -> bool:
        """Whether the file acts on a `keyword_compared` setting: it tests a name of the rule for one of the values
        (`impl == 'cuda'`) or binds a module it builds from CUDA sources (context.py's JIT extensions). Read from the
        whole file's lines, which the piecewise pass of a large file has too."""
        if rule.code not in self._choices_read:
            self._choices_read[rule.code] = any(
                q.startswith(f"{LOCAL_PACKAGE}.{JIT_EXTENSION}.") for q in self.ctx.aliases.values()) or any(
                any(kw[0] is rule for kw in self.c.match_keywords(m[0] or m[3]))
                and any(fnmatch.fnmatchcase(m[1] or m[2], w) for w in wanted)
                for line in self.file_lines or () for m in _COMPARED_LITERAL.findall(line))
        return self._choices_read[rule.code]

    def _implementation_names(self, name: cst.BaseExpression | None, value: cst.BaseExpression | None) -> None:
        """`impl="cuda"` (a parameter's default, a keyword argument), `impl == "cuda"`, `impl in ["ref", "cuda"]`: the
        value of a setting a `keyword_compared` rule names (StyleGAN's `bias_act` / `upfirdn2d`) is an implementation's
        name, not a device (lead decision 15, pd25): no string rule reads it; the kernel rule reports the choice where
        the code dispatches on it to its own CUDA plugin."""
        if not isinstance(name, cst.Name) or value is None or not any(
                kw[0].extra.get("keyword_compared") for kw in self.c.match_keywords(name.value)):
            return
        items = [e.value for e in value.elements] if isinstance(value, (cst.Tuple, cst.List, cst.Set)) else [value]
        self._handled.update(id(i) for i in items if isinstance(i, cst.SimpleString))

    def _keyword_compared(self, left: cst.BaseExpression, right: cst.BaseExpression) -> None:
        """`impl == 'cuda'`: a variable named like a `keyword_compared` setting, tested for one of its values (t22b)."""
        name, literal = (left, right) if isinstance(left, cst.Name) else (right, left)
        if not isinstance(name, cst.Name) or not isinstance(literal, cst.SimpleString):
            return
        for kw in self.c.match_keywords(name.value):
            if kw[0].extra.get("keyword_compared") and not self._value_says(literal, kw[0]):
                self._hit(kw[0], name, name.value, value=kw[1])

    def _keyword_asserted(self, left: cst.BaseExpression, right: cst.BaseExpression) -> None:
        """`assert self.attn_impl == "xformers"`: an assert that a setting holds one of its rule's `keyword_values`
        refuses every other value, so it chooses that value as a default would (t26b); `keyword_compared` rules
        read every comparison already."""
        name, literal = (left, right) if isinstance(right, cst.SimpleString) else (right, left)
        if (attr := self_attr(name)) is not None:
            name = attr
        if not isinstance(name, cst.Name) or not isinstance(literal, cst.SimpleString) \
                or not isinstance(literal.evaluated_value, str):
            return
        for rule, pattern in self.c.match_keywords(name.value):
            wanted: list[str] = rule.extra.get("keyword_values") or []
            if not rule.extra.get("keyword_compared") and \
                    any(fnmatch.fnmatchcase(literal.evaluated_value, w) for w in wanted):
                self._hit(rule, name, name.value, value=pattern)

    def _value_says(self, value: cst.BaseExpression, rule: Rule, name: str = "") -> bool:
        """`dict(fp16=torch.float16, bf16=torch.bfloat16)`, `bf16 = (torch.bfloat16, "bf16")` (an enum member):
        the value is itself, or lists, a name a rule of the setting's category reports (a dtype table), so the
        setting's name adds nothing. Also `opt_level = "-O0" if fast else "-O3"`: a value made only of string
        literals none of which is one of the rule's `keyword_values` (a compiler flag, not an apex opt level)."""
        if rule.extra.get("keyword_true_only") and not _literal_on(value):
            return True     # `use_triton=cfg.use_triton`, `use_triton = (... and x.is_cuda)`: decided elsewhere (tp12)
        if rule.extra.get("handed_on_reads") and name and self._handed_on(value, name):
            return True
        wanted: list[str] = rule.extra.get("keyword_values") or []
        if rule.extra.get("keyword_compared") and not self._choice_read(rule, wanted):
            return True     # `impl="cuda"` where nothing takes a CUDA branch (lama-cleaner's ref-only StyleGAN ops)
        literals = _literal_strings(value) if wanted else None
        if literals is None and wanted and isinstance(value, (cst.Integer, cst.Float)):
            literals = [value.value]    # `self.opt_level = 1` (PPQ's equalization level): a number, no apex level (t29a)
        if literals is not None and not any(fnmatch.fnmatchcase(s, w) for s in literals for w in wanted):
            return True
        if wanted and literals is None and rule.extra.get("keyword_literal_only"):
            return True     # `attn_implementation = args.attn`: the choice is made elsewhere (t14t, NPU804)
        items = [e.value for e in value.elements] if isinstance(value, (cst.Tuple, cst.List, cst.Set)) else [value]
        for item in items:
            qual = self._qual(item) if isinstance(item, (cst.Name, cst.Attribute)) else None
            m = self.c.match_qualname(qual) if qual is not None else None
            if m is not None and m.rule.category == rule.category:
                return True
        return False

    def _handed_on(self, value: cst.BaseExpression, name: str) -> bool:
        """A switch's value that only hands on a choice made elsewhere (rules with `handed_on_reads`, tq58b): the
        setting `name` read back under its own name (`use_flash_attn=args.use_flash_attn`,
        `use_flash_attention=params["use_flash_attention"]`, `use_flash_attention_value = cfg.get("use_flash_attention",
        default)`: the option or config entry that makes it carries the finding), an availability probe's answer
        (`is_flash_attn_2_available()`, a `flash_attn_available` flag: False where the library does not run), or a
        conditional whose arms are each one of these or off."""
        if isinstance(value, cst.IfExp):
            return all(_switched_off(arm, "") or self._handed_on(arm, name) for arm in (value.body, value.orelse))
        if isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and value.func.attr.value == "get" \
                and value.args and isinstance(value.args[0].value, cst.SimpleString):
            default = value.args[1].value if len(value.args) > 1 else None
            return _own_name(value.args[0].value.evaluated_value, name) and (
                default is None or _switched_off(default, "") or self._handed_on(default, name))
        if isinstance(value, cst.Call):
            value = value.func
        key = _string_index(value)
        read = value.attr.value if isinstance(value, cst.Attribute) else value.value if isinstance(value, cst.Name) \
            else key.evaluated_value if key is not None else None
        if not isinstance(read, str):
            return False
        return _PROBE_ANSWER.search(read) is not None or not isinstance(value, cst.Name) and _own_name(read, name)

    def _flag_definition(self, target: cst.BaseExpression, value: cst.BaseExpression) -> None:
        """`HAS_FLASH_ATTN = env_info["has_flash_attn"]`: a feature flag (flagname rules) set from something the
        rules cannot see through; False / None (the fallback) and calls a rule already names are left alone."""
        if (attr := self_attr(target)) is not None:
            name = attr.value
        elif isinstance(target, cst.Name):
            name = target.value
        else:
            return
        if isinstance(value, cst.Name) and value.value in ("True", "False", "None"):
            # `HAVE_TE = True` after `import transformer_engine`: the import carries the finding; apex is the
            # exception: `has_apex = True` selects apex's AMP / fused optimizers / DDP wherever the flag is read
            m = self.c.match_flag(name) if value.value == "True" else None
            if m is not None and m[0].category == "apex":
                self._hit(m[0], target, name, value=m[1])
            return
        if not isinstance(value, (cst.Name, cst.Attribute, cst.Subscript, cst.Call)):
            return      # comparisons, and/or: derived flags (flags.py) follow what they are made of
        if isinstance(value, cst.Subscript) and not all(
                isinstance(e.slice, cst.Index) and isinstance(e.slice.value, _STRING_NODES) for e in value.slice):
            # `apex = own[~torch.isin(own, fv)][0]` (a mesh's apex vertex): an element picked by index or mask is a
            # value; a flag is read by its key (`env_info["has_flash_attn"]`) (t14q)
            return
        if isinstance(value, cst.Call):
            func = value.func
            last = func.value if isinstance(func, cst.Name) else func.attr.value if isinstance(func, cst.Attribute) else ""
            qual = self._qual(func)
            if last in self.c.callnames or (qual is not None and self.c.knows(qual)):
                return
        m = self.c.match_flag(name)
        if m is not None:
            self._hit(m[0], target, name, value=m[1])

    def visit_AssignTarget(self, node: cst.AssignTarget) -> bool:
        # `apex_amp = None` in an `except ImportError:` rebinds the name; it is not a use of the module
        targets = node.target.elements if isinstance(node.target, (cst.Tuple, cst.List)) else [node.target]
        for target in targets:
            name = target.value if isinstance(target, cst.Element) else target
            if isinstance(name, cst.Attribute) and name.attr.value.startswith("__") \
                    and name.attr.value.endswith("__") and name.attr.value in self.c.attributes:
                continue    # `self.__cuda_array_interface__ = {...}` publishes a protocol (t14g): the binding is the use
            if isinstance(name, cst.Attribute) and not any(
                    r.extra.get("setting_field") for r in self.c.attributes.get(name.attr.value, ())):
                self._not_property.add(id(name.attr))   # `obj.is_cuda = ...` binds, it does not read the property
                # (a rule of a settings object's field, `gpu_options.allow_growth = True`, means the write: tp47a)
            if isinstance(name, cst.Name) or self_attr(name) is not None:
                self._handled.add(id(name))   # `self.fn = fn` binds an attribute; the value is the use
        return True

    def visit_Dict(self, node: cst.Dict) -> bool:
        labels = [el.value for el in node.elements if isinstance(el, cst.DictElement)
                  and isinstance(el.value, cst.SimpleString) and isinstance(el.value.evaluated_value, str)
                  and _BUILD_LABEL.fullmatch(el.value.evaluated_value)]
        if any(not _CUDA_BUILD_LABEL.fullmatch(v.evaluated_value) for v in labels):    # type: ignore[arg-type]
            # `{"cpu": "+cpu", "cuda": "+cu121"}`: a table of torch builds, one per option value; the option chooses
            self._label_edits.update(id(v) for v in labels)
        self._renamed.update(id(key) for key in _renamed_keys(
            (el.key, el.value) for el in node.elements if isinstance(el, cst.DictElement)))
        # `{"NVIDIA_TF32_OVERRIDE": os.environ.get("NVIDIA_TF32_OVERRIDE"), "CUDA_VERSION": ...}`: a record of the
        # environment (run metadata for a logger), each variable read under its own name where it may be unset; it
        # sets nothing, so nothing in it differs on Ascend. Three entries or more: a copy of one or two variables
        # may be an environment handed to a child process
        records = []
        # tk42 (test101: rtdl-revisiting-models' lib/util.py `environment['devices'] = {'CUDA_VISIBLE_DEVICES': cvd,
        # 'torch.version.cuda': torch.version.cuda, 'torch.backends.cudnn.version()': torch.backends.cudnn.version(),
        # ...}`, archai's `{'cudnn.enabled': cudnn.enabled, 'cudnn.benchmark': cudnn.benchmark, ...}`): entries keyed
        # by the text of their own value record it under its name; a value read (not a call: decision 48 labels a
        # CUDA call by the call) is shown, not used (decision 49), and so is an environment variable's value held in
        # a name under the variable's own key
        named = 0
        shown: list[tuple[cst.CSTNode, cst.CSTNode]] = []
        for el in node.elements:
            if not isinstance(el, cst.DictElement):
                continue        # `**other`
            read = _env_read_name(el.value)
            if read is not None and read[2] and isinstance(el.key, cst.SimpleString) and \
                    el.key.evaluated_value == read[0]:
                records.append((el.key, read[1]))
            elif isinstance(el.key, cst.SimpleString) and isinstance(el.key.evaluated_value, str) \
                    and isinstance(el.value, (cst.Attribute, cst.Call)) \
                    and el.key.evaluated_value.replace(" ", "") == _code_text(el.value).replace(" ", ""):
                named += 1
                if isinstance(el.value, cst.Attribute):
                    shown.append((el.key, el.value))
            elif isinstance(el.key, cst.SimpleString) and isinstance(el.value, cst.Name) \
                    and isinstance(el.key.evaluated_value, str) and self.c.match_env(el.key.evaluated_value):
                shown.append((el.key, el.value))
        if len(records) >= 3:
            self._handled.update(id(n) for pair in records for n in pair)
        if len(records) + named >= 3:
            self._handled.update(id(n) for pair in shown for n in pair)
            self._asserted.update(id(value) for _key, value in shown)
        cuda_key = _device_table_cuda_key(node)
        if cuda_key is not None:
            self._dispatch_keys.add(id(cuda_key))
        if _dtype_index_table(node) and not self._option_indexed(node):
            self._asserted.update(i for el in node.elements for i in _dtype_values(el.value))
        return True

    def _option_indexed(self, table: cst.Dict) -> bool:
        """Whether the file indexes the table bound here by a setting, `PRECISIONS[args.precision]`,
        `DTYPES[cfg["dtype"]]` (a config object's attribute or key, or a declared option's name): the index is a
        precision the user picks, whose default no dtype rule can read, so the table keeps its hints (review49 item
        12); a codec's index (`_TORCH_DTYPES_MAPPING[int(index)]`) comes from the data."""
        bound = next((t for _, t, v in reversed(self._bindings) if v is table), None)
        name = dotted(bound) if isinstance(bound, (cst.Name, cst.Attribute)) else None
        if not name:
            return False
        for m in re.finditer(r"(?<![\w.])" + re.escape(name) + r"""\s*\[\s*(?:\w+\.)*?\w+(?:\.(\w+)|\[\s*["'](\w+)["']\s*\])\s*\]""",
                             self._file_text()):
            index = m.group(0).split("[", 1)[1]
            if _SETTING_OBJECT.match(index) or self._option_declared(m.group(1) or m.group(2)):
                return True
        return False

    def _report_row(self, row: cst.BaseExpression) -> None:
        """`data.append(("CUDA_HOME", str(CUDA_HOME)))`, `data.append(("TORCH_CUDA_ARCH_LIST", arch_list))`: a
        (label, value) row of an environment report (detectron2's collect_env and its copies in fast-reid, vissl,
        AdelaiDet ...), printed for the reader: the label names a variable and the value is shown, neither sets
        nor builds anything (t26b). A row whose value is a literal (or None / True / False) may be an environment
        handed on or a build macro, so it stays."""
        if not isinstance(row, cst.Tuple) or len(row.elements) != 2:
            return
        label, shown = (e.value for e in row.elements)
        if not isinstance(label, cst.SimpleString) or isinstance(shown, _STRING_NODES) or \
                isinstance(shown, cst.Name) and shown.value in ("None", "True", "False"):
            return      # (`define_macros.append(("WITH_CUDA", None))`: a build macro, not a report row)
        # `data.append(("CUDA_HOME", str(CUDA_HOME) + msg))`: the value shown with a suffix (tk43)
        parts = [shown]
        while isinstance(parts[0], cst.BinaryOperation) and isinstance(parts[0].operator, cst.Add):
            parts[:1] = [parts[0].left, parts[0].right]
        names = []
        for part in parts:
            if isinstance(part, cst.Call) and isinstance(part.func, cst.Name) and part.func.value == "str" \
                    and len(part.args) == 1:
                part = part.args[0].value
            if isinstance(part, cst.Name):
                names.append(part)
            elif not isinstance(part, _STRING_NODES):
                return  # (`providers.append(("CUDAExecutionProvider", {"device_id": 0}))`: a provider with options)
        if not names:
            return
        self._handled.add(id(label))
        self._handled.update(id(n) for n in names)

    def visit_DictElement(self, node: cst.DictElement) -> bool:
        self._acquired_by_getattr(node.value)     # `{"cuda_version": getattr(torch.version, "cuda", None)}`
        if isinstance(node.key, cst.SimpleString) and isinstance(node.key.evaluated_value, str) \
                and node.key.evaluated_value.lower() in BACKEND_NAMES and id(node.key) not in self._dispatch_keys:
            self._handled.add(id(node.key))      # `{"cuda": CudaPlatform}`: a key of a table, not a device
        if isinstance(node.key, cst.SimpleString):
            self._claim_key(node.key)
            if node.key.evaluated_value == "nvcc":
                self._slot_later.update(_later_line_items(node.value))
        if isinstance(node.key, cst.SimpleString) and "/" in str(node.key.evaluated_value) \
                and isinstance(node.value, cst.Integer) and node.value.evaluated_value == 0:
            # `{"nvidia.com/gpu": 0}` (codeflare-sdk's `worker_extended_resource_requests`): an extended resource
            # (Kubernetes' `vendor/resource` name) asked for zero times asks for none (tp46b, project test126)
            self._handled.add(id(node.key))
        self._dtype_quiet += 1
        walk(node.key, self)
        self._dtype_quiet -= 1
        # `{"fp16": lambda: torch.float16}`, `{"torch.bfloat16": torch.bfloat16}`: an entry of a table that maps
        # dtype NAMES to dtypes; it chooses nothing (the config or option that names the dtype does, and is
        # reported there), and its key does not switch float16 on like `{"fp16": True}` (docs/precision.md,
        # "Judgement policy" (a))
        table = _names_dtype(node.key) or _precision_key(node.key, node.value) or \
            node.key is not None and _same_dtype_pair(node.key, node.value)
        if table:
            self._asserted.update(_dtype_values(node.value))
        elif _key_names_value(node.key, node.value):
            self._table_values.add(id(node.value))
        elif (device_name := _device_named_by_key(node.key, node.value)) is not None:
            self._table_values.add(id(device_name))
        help_text = isinstance(node.key, cst.SimpleString) and node.key.evaluated_value in _HELP_KEYWORDS \
            and _stringy_value(node.value)       # `metadata={"help": "..."}` (HF dataclass fields): text (t14k)
        if help_text:
            self._in_message += 1
        compiler_option = _compiler_dtype_key(node.key)
        self._dtype_quiet += compiler_option
        walk(node.value, self)
        self._dtype_quiet -= compiler_option
        if help_text:
            self._in_message -= 1
        if self.c.keywords and not self._in_message and isinstance(node.key, cst.SimpleString) \
                and isinstance(node.key.evaluated_value, str) \
                and not (table and (isinstance(node.value, (cst.Attribute, cst.Lambda)) or _names_dtype(node.value))):
            # `{"fp16": True}`, `"bf16": {"enabled": True}` (a config built in code) sets it like a keyword argument
            for kw in self.c.match_keywords(node.key.evaluated_value):
                if kw[0].extra.get("not_dict_literals"):
                    continue    # `set_weight_attrs(w, {"load_in_8bit": True})`: a marker inside the loader (t14z)
                if not _switched_off(node.value, node.key.evaluated_value) \
                        and not self._value_says(node.value, kw[0], node.key.evaluated_value):
                    self._hit(kw[0], node.key, node.key.evaluated_value, value=kw[1])
        if self.c.keyword_values and not self._in_message and isinstance(node.key, cst.SimpleString) \
                and isinstance(node.key.evaluated_value, str) and _literal_text(node.value) is not None:
            # `{"quant_algo": "FP8"}` (a TensorRT-LLM / ModelOpt config built in code) sets it like `quant_algo="FP8"`;
            # only `name=value` patterns that name no callee (t14k)
            literal = _literal_text(node.value)
            kv = self.c.match_keyword_value(None, node.key.evaluated_value, literal)
            if kv is not None and kv[0].extra.get("dict_entries") and \
                    node.key.evaluated_value in kv[0].extra.get("dict_entry_keys", (node.key.evaluated_value,)):
                self._hit(kv[0], node.key, f"{node.key.evaluated_value}={literal}", value=kv[1])
        return False

    def visit_SubscriptElement(self, node: cst.SubscriptElement) -> bool:
        self._dtype_quiet += 1
        return True

    def leave_SubscriptElement(self, original_node: cst.SubscriptElement) -> None:
        self._dtype_quiet -= 1

    def _option_names(self, node: cst.List | cst.Tuple | cst.Set) -> bool:
        """`["bf16", "bfloat16", torch.bfloat16]`, `(torch.float16, torch.bfloat16)`: names and constants listed
        side by side (aliases, allowed dtypes, choices), not a dtype being chosen."""
        if id(node) in self._each_chosen:
            return False    # a parallel assignment's values, an option's default values: each one is chosen
        return len(node.elements) >= 2 and all(
            isinstance(e.value, (cst.SimpleString, cst.Integer, cst.Name, cst.Attribute)) for e in node.elements)

    def _visit_collection(self, node: cst.List | cst.Tuple | cst.Set) -> bool:
        self._dtype_quiet += self._option_names(node)
        self._renamed.update(id(key) for key in _renamed_keys(
            (e.value.elements[0].value, e.value.elements[1].value) for e in node.elements
            if isinstance(e.value, cst.Tuple) and len(e.value.elements) == 2))
        self._listed.update(id(e.value) for e in node.elements if isinstance(e.value, cst.SimpleString))
        if isinstance(node, cst.List):
            self._list_items.update(id(e.value) for e in node.elements)
        self._handled.update(id(key) for key in _names_among_words(node))
        return True

    def _leave_collection(self, original_node: cst.List | cst.Tuple | cst.Set) -> None:
        self._dtype_quiet -= self._option_names(original_node)

    # a list, tuple and set literal alike (libcst calls `visit_<node type>`)
    visit_List = visit_Tuple = visit_Set = _visit_collection
    leave_List = leave_Tuple = leave_Set = _leave_collection

    def visit_Arg(self, node: cst.Arg) -> bool:
        if id(node) in self._type_args:
            return False      # `@app.post("/v1/completions", response_model=CompletionResponse)`: a type
        if node.keyword is not None:
            self._handled.add(id(node.keyword))
            self._implementation_names(node.keyword, node.value)
        self._dtype_quiet += _names_a_ref(node)
        self._options += _lists_choices(node)
        return True

    def leave_Arg(self, original_node: cst.Arg) -> None:
        self._dtype_quiet -= _names_a_ref(original_node)
        self._options -= _lists_choices(original_node)

    def visit_For(self, node: cst.For) -> bool:
        walk(node.target, self)
        walk(node.iter, self)         # the iterable is evaluated once, outside the loop
        self._loop_depth += 1
        walk(node.body, self)
        self._loop_depth -= 1
        if node.orelse is not None:
            walk(node.orelse, self)
        return False

    def visit_While(self, node: cst.While) -> bool:
        self._flag_reads(node.test)
        self._loop_depth += 1         # the condition runs on every iteration too
        walk(node.test, self)
        walk(node.body, self)
        self._loop_depth -= 1
        if node.orelse is not None:
            walk(node.orelse, self)
        return False

    def visit_Raise(self, node: cst.Raise) -> bool:
        self._in_message += 1
        self._raising += 1
        return True

    def leave_Raise(self, original_node: cst.Raise) -> None:
        self._in_message -= 1
        self._raising -= 1

    def visit_Assert(self, node: cst.Assert) -> bool:
        if isinstance(node.test, cst.Comparison):
            self._required.add(id(node.test))   # `assert flash_attn is not None`: the package is required
            if len(node.test.comparisons) == 1 and isinstance(node.test.comparisons[0].operator, cst.Equal):
                self._keyword_asserted(node.test.left, node.test.comparisons[0].comparator)
        test, msg = node.test, node.msg
        # tq55e: `assert not use_amp == 'apex', 'Cannot use APEX AMP with torchscripted model'` (timm's train.py):
        # the assert passes unless the value is the literal, so it only refuses that choice; the choice is made (and
        # reported) where the value is set, and on Ascend the refusal behaves the same
        self._handled.update(id(s) for s in _refused_literals(node.test))
        if msg is None and isinstance(node.test, cst.Tuple) and len(node.test.elements) == 2 \
                and _stringy_value(node.test.elements[1].value):
            # `assert(False, "CUDA is not available. Set FORCE_CUDA=1")`: a parenthesised test and message (a tuple,
            # always true); its string is still a message for humans (RVT's point-renderer setup.py)
            test, msg = node.test.elements[0].value, node.test.elements[1].value
        self._asserting += 1
        walk(test, self)
        self._asserting -= 1
        if msg is not None:
            self._in_message += 1
            walk(msg, self)
            self._in_message -= 1
        return False

    # -- expressions ---------------------------------------------------------------------------

    def _env_read_in_message(self, node: cst.Subscript | cst.Call) -> None:
        """`print(f"Arch list: {os.getenv('TORCH_CUDA_ARCH_LIST')}")` only shows the value (t36a), and so does
        `print(f"CUDA: {os.environ['CUDA_VISIBLE_DEVICES']}, processed: ...")` (lead decision 49: an environment
        variable read to be shown is a message line; test99's ViDiT-Q label). t24a reported the subscript read (it
        raises where the variable is unset): tk42 keeps it quiet, the KeyError is no CUDA-to-Ascend difference; the
        code that sets or reads the variable for its value is reported where it does so."""
        read = _env_read_name(node) if self._in_message else None
        if read is not None:
            self._handled.add(id(read[1]))

    def _evaluated_code(self, arg: cst.BaseExpression, mode: str) -> None:
        """`eval(f'torch.Tensor(self.joint_regressor_{name}).cuda()')` (Pose2Mesh): a literal string handed to the
        builtin eval / exec is code that runs, unlike a bare string statement (decision 64). Its text is read as code
        (an f-string's fields become a placeholder name) and what it matches is reported on the string, never
        rewritten (the fixers edit source, not text inside a literal) (tk46)."""
        if isinstance(arg, cst.SimpleString) and isinstance(arg.evaluated_value, str):
            text = arg.evaluated_value
        elif isinstance(arg, cst.FormattedString):
            text = "".join(part.value if isinstance(part, cst.FormattedStringText) else "_" for part in arg.parts)
        else:
            return
        try:
            code = cst.parse_expression(text.strip()) if mode == "eval" else cst.parse_module(text)
        except (cst.ParserSyntaxError, ValueError, RecursionError):
            return      # a text that is no Python (a template, a half expression): nothing runs as read
        inner = MatchVisitor(self.c, self.ctx)
        inner.file_lines = self.file_lines
        walk(code, inner)
        # the string's own reading stays (NPU336: a Triton decorator written for eval, t14g)
        self.hits += [replace(hit, node=arg, end_node=None, statement=None, no_rewrite=True) for hit in inner.hits]

    def _joined_path(self, node: cst.Call) -> None:
        """`os.path.join(os.sep, 'usr', 'local', 'cuda', 'bin')` in a build script: the path the segments spell, when a
        kernel rule names it (NPU956, the toolkit's folder), one finding on the call; its segments are folder names,
        not a device (tk46). `os.sep` is the root; a segment that is no literal is a hole."""
        if self._variant_rule is None or len(node.args) < 2 or any(a.star for a in node.args):
            return
        path = ""
        for arg in node.args:
            value = arg.value
            part = "/" if dotted(value) == "os.sep" or self._qual(value) == "os.sep" else \
                value.evaluated_value if isinstance(value, cst.SimpleString) and isinstance(value.evaluated_value, str) \
                else HOLE
            path = part if part.startswith("/") or not path else path.rstrip("/") + "/" + part
        found = self.c.match_string(path)
        if found is not None and found[0].category == "kernel":
            self._handled.update(id(a.value) for a in node.args)
            self._hit(found[0], node, path.replace(HOLE, "{…}"), value=found[1])

    def visit_Subscript(self, node: cst.Subscript) -> bool:
        self._env_read_in_message(node)
        key = _string_index(node)
        if self._variant_rule is not None and key is not None and isinstance(node.value, cst.Name) \
                and node.value.value in self.ctx.toolkit_configs:
            # `library_dirs=[CUDA['lib64']]` after `CUDA = locate_cuda()`: a folder of the CUDA toolkit the build
            # compiles and links against, or its nvcc (hand_builds.py, tk46); one finding, not one more for the key
            self._handled.add(id(key))
            self._hit(self._variant_rule, node, f"{node.value.value}[{key.value}]")
        base = node.value.attr.value if isinstance(node.value, cst.Attribute) else \
            node.value.value if isinstance(node.value, cst.Name) else ""
        if id(node) not in self._called_subscripts and len(node.slice) == 1 and base != "Literal":
            # `rng_states["cuda"] = torch.cuda.random.get_rng_state()`, `checkpoint_rng_state["cuda"]`, `args['cuda']`:
            # a backend name as a key names an entry of a record, like the key of a dict literal (visit_DictElement);
            # the CUDA call that fills or reads the entry is its own finding (tq43, tuned on heldout47's copied HF
            # Trainer). An entry picked and called (`BACKENDS["cuda"](x)`) and a type's values (`Literal["nccl"]`)
            # keep their findings.
            for el in node.slice:
                entry = el.slice.value if isinstance(el.slice, cst.Index) else None
                if isinstance(entry, cst.SimpleString) and isinstance(entry.evaluated_value, str) \
                        and entry.evaluated_value.lower() in BACKEND_NAMES:
                    self._handled.add(id(entry))
                elif isinstance(entry, cst.SimpleString) and isinstance(entry.evaluated_value, str) \
                        and (found := self.c.match_string(entry.evaluated_value)) and found[0].extra.get("not_as_key"):
                    # `env["torch_cuda"] = torch.version.cuda`: a record's key spelled like a library a string rule
                    # names for link lists (`libraries += ['torch_cuda']`), not that library (tp47b)
                    self._handled.add(id(entry))
        return True

    def visit_Call(self, node: cst.Call) -> bool:
        if self._in_message:
            self._calls_in_message += not _shows_value(node)    # `.format(x)` / `str(x)` runs nothing of x's
            self._env_read_in_message(node)
        func = node.func
        if isinstance(func, cst.Subscript):
            self._called_subscripts.add(id(func))
        if isinstance(func, cst.Attribute) and func.attr.value in ("startswith", "endswith") and node.args:
            first = node.args[0].value
            tested = [e.value for e in first.elements] if isinstance(first, cst.Tuple) else [first]
            self._name_tests.update(id(t) for t in tested)
        if isinstance(func, cst.Attribute) and func.attr.value in _STRING_EDITS and node.args:
            # `torch.__version__.replace("+cu121", "")`: the label is cut off the text, whatever build it came from;
            # `replace`'s second argument is what the code writes (`url.replace("+cpu", "+cu118")`: kept)
            cut = node.args[:1] if func.attr.value == "replace" else node.args
            self._label_edits.update(id(arg.value) for arg in cut)
        first_hit = len(self.hits)
        self._claim_cuda_python_name(node)
        self._call_args.update((id(arg.value), node) for arg in node.args)
        if isinstance(func, cst.Attribute) and func.attr.value in _ROUTE_METHODS:
            # FastAPI's `response_model=` is the route's response type, read like an annotation (decisions 31 / 40;
            # https://fastapi.tiangolo.com/tutorial/response-model/): the class's import is the finding (tq40)
            self._type_args.update(id(a) for a in node.args if a.keyword is not None
                                   and a.keyword.value in _ROUTE_TYPE_KEYWORDS)
        for arg in node.args:
            if arg.keyword is not None and arg.keyword.value == "map_location" and isinstance(arg.value, cst.Dict):
                # `torch.load(f, map_location={'cuda:0': 'cpu'})`: a key names where the checkpoint's tensors were
                # saved, not a device this code picks; the value it maps them to is the choice (t28a). The key is
                # still CUDA's name for that place, which checkpoints saved on Ascend do not carry (t33a)
                keys = [e.key for e in arg.value.elements if isinstance(e, cst.DictElement)]
                npu_too = any(_NPU_VALUE.match(v) for k in keys for v in (self.fold(k) or ()))
                # (a map with an "npu:0" key beside "cuda:0" already takes both backends' checkpoints)
                (self._handled if npu_too else self._saved_locations).update(id(k) for k in keys)
        if isinstance(func, cst.Attribute) and func.attr.value in _LIST_EDITS and node.args and \
                not self._in_message and isinstance(node.args[-1].value, _FLAG_ITEMS + _FLAG_NAMES):
            # `nvcc_flags.append("-O3")`, `COMMON_NVCC_FLAGS.remove(flag)` in a loop over the flags to drop (vLLM's
            # setup.py, copied into ReaLHF)
            self._flag_list_edit(func.value)
        if _ASSERTION.match(func.attr.value if isinstance(func, cst.Attribute) else
                            func.value if isinstance(func, cst.Name) else ""):
            self._asserted.update(id(a.value) for a in node.args if isinstance(a.value, (cst.Name, cst.Attribute)))
        elif len(node.args) == 2 and _same_dtype_pair(node.args[0].value, node.args[1].value):
            # `test_conversions(jp.float16, wp.float16)`; not torch's dtype (`wrap_tensor(torch.float16, wp.float16)`
            # may make the tensor on the device)
            self._asserted.update(id(a.value) for a in node.args
                                  if not (self._resolve(dotted(a.value) or "") or "").startswith("torch."))
        if isinstance(func, cst.Attribute) and func.attr.value in ("finfo", "iinfo") and \
                dotted(func) in ("torch.finfo", "torch.iinfo"):
            # `FP8_MAX = torch.finfo(torch.float8_e4m3fn).max`: a dtype's limits, read on the host; nothing runs in it
            self._asserted.update(id(a.value) for a in node.args if isinstance(a.value, (cst.Name, cst.Attribute)))
        if dotted(func) in _UNSETS and node.args and isinstance(node.args[0].value, _STRING_NODES):
            # `os.environ.pop("NVTE_FLASH_ATTN", None)`: the variable is removed, nothing is configured (a device
            # visibility variable keeps its finding: removing it exposes every device, which Ascend spells otherwise)
            self._unset.add(id(node.args[0].value))
        if isinstance(func, cst.Attribute) and func.attr.value in _REMOVALS and len(node.args) == 1 and \
                isinstance(node.args[0].value, _STRING_NODES):
            # `imports.remove("flash_attn")` (Florence-2's get_imports workaround, t17d): the name is taken out of a
            # list, so nothing is selected by it; a device string keeps its finding
            self._dropped.add(id(node.args[0].value))
        if isinstance(func, cst.Attribute) and func.attr.value in _TEXT_METHODS:
            # `dtype.replace("fp8", "float8")`, `name.endswith("_bf16")`: text about a dtype's name, no choice
            self._name_text.update(id(a.value) for a in node.args if isinstance(a.value, _STRING_NODES))
        if isinstance(func, cst.Attribute) and func.attr.value == "format":
            # `url_template.format(dtype="fp16" if fp16 else "fp32")` (ComfyUI-Video-Matting, t21c): the dtype's name
            # spelled into a file name or URL; the flag that chose it is reported where it is set
            self._name_text.update(id(s) for a in node.args for s in _string_arms(a.value))
        if isinstance(func, cst.Attribute) and func.attr.value == "format" and isinstance(func.value, _STRING_NODES):
            if not self._in_message:
                values = self.fold(node)
                if values:
                    self._match_values(node, values)
            for arg in node.args:
                walk(arg, self)
            return False
        if isinstance(func, cst.Subscript) and isinstance(func.value, cst.Name) \
                and func.value.value in self.ctx.decorated:
            launch = self.c.match_launch(self.ctx.decorated[func.value.value])
            if launch is not None and self._when_ok(launch[1].rule, node):
                self._hit(launch[1].rule, func, launch[0], value=func.value.value, end_node=node)
        elif isinstance(func, cst.Subscript) and isinstance(func.value, cst.Name) \
                and "triton" in func.value.value.lower() and func.value.value in self.ctx.aliases \
                and (imported := self._qual(func.value)) is not None and self.c.match_qualname(imported) is not None:
            # `swiglu_forward_triton[grid](...)` after `from cute_kernels.ops.swiglu import swiglu_forward_triton`: a
            # launch of a Triton kernel a reported package defines (t31b); the package's own rule reports the name
            launch = self.c.match_launch(["triton.jit"])
            if launch is not None:
                self._hit(launch[1].rule, func, launch[0], value=func.value.value, end_node=node)
        elif isinstance(func, cst.Subscript) and _numba_launch_config(func):
            # `self.cuda_step[manager.grid, manager.block](...)` (WarpDrive), `kernel[blocks_per_grid,
            # threads_per_block](...)` of a kernel defined in another module: numba.cuda's launch syntax (t24a)
            launch = self.c.match_launch(["numba.cuda.jit"])
            if launch is not None:
                self._hit(launch[1].rule, func, launch[0], value=dotted(func.value) or "kernel", end_node=node)
        elif (made := self._kernel_object(func)) is not None and made[0] == "kernel":
            # `kernel((blocks,), (threads,), args)`, `cupy_launch(name, src)(grid=..., block=..., args=[...])`: a launch
            # of a CuPy / PyCUDA kernel object (t32a)
            launch = self.c.match_launch([made[1]])
            if launch is not None:
                self._hit(launch[1].rule, func, launch[0], value=_kernel_label(func), end_node=node,
                          kernel_local=self._kernel_local(func))
            self._launched.add(id(func))
        elif _cupy_launch_keywords(node) and not self._in_message:
            # `f(block=(CUDA_NUM_THREADS, 1, 1), grid=(...), args=[...], stream=...)` of a kernel loaded in another
            # module (`from utils import load_kernel`): CuPy's `Function.__call__(grid, block, args, ...)` (t32a)
            launch = self.c.match_launch(["cupy.cuda.function.Function"])
            if launch is not None:
                self._hit(launch[1].rule, func, launch[0], value=_kernel_label(func), end_node=node)
        elif isinstance(func, cst.Call) and self._numba_forall(func):
            # `kernel.forall(size)(...)`: numba.cuda's launch with a grid sized for `size` threads (t28a, gpu-bdb)
            launch = self.c.match_launch(["numba.cuda.jit"])
            if launch is not None:
                kernel = func.func.value if isinstance(func.func, cst.Attribute) else func.func
                self._hit(launch[1].rule, func, launch[0], value=dotted(kernel) or "kernel", end_node=node)
        if id(node) not in self._launched:
            self._kernel_loading(node)
        if isinstance(func, cst.Attribute):
            self._not_property.add(id(func.attr))    # `current_platform.is_cuda()`: a method, not the property
        if isinstance(func, cst.Attribute) and func.attr.value == "replace" and len(node.args) == 2 and \
                isinstance(node.args[0].value, cst.SimpleString) and _NPU_VALUE.match(
                    str(node.args[1].value.evaluated_value if isinstance(node.args[1].value, cst.SimpleString) else "")):
            self._handled.add(id(node.args[0].value))   # `device.replace("cuda", "npu")`: the port itself
        if isinstance(func, cst.Attribute) and func.attr.value == "append" and len(node.args) == 1:
            self._report_row(node.args[0].value)
        if isinstance(func, cst.Name) and func.value in ("eval", "exec") and node.args and node.args[0].keyword is None \
                and func.value not in self.ctx.aliases and func.value not in self.ctx.module_functions:
            self._evaluated_code(node.args[0].value, func.value)
        if dotted(func) in _PATH_BUILDERS or isinstance(func, cst.Attribute) and func.attr.value == "joinpath" \
                or isinstance(func, cst.Name) and self._qual(func) in _PATH_BUILDERS:    # `from os.path import join as pjoin`
            self._path_segments.update(id(a.value) for a in node.args if isinstance(a.value, _STRING_NODES))
            self._joined_path(node)
        if isinstance(func, cst.Name) and func.value in _NAME_ARG_FUNCS and len(node.args) >= 2:
            self._handled.add(id(node.args[1].value))   # `hasattr(torch, "cuda")` names an attribute
            if func.value == "hasattr" or (func.value == "getattr" and len(node.args) == 3 and (
                    _is_none(node.args[2].value) or not self._third_party_object(node.args[0].value))):
                # `hasattr(transformer_engine, "pytorch")`, `getattr(torch.cuda, "_is_in_bad_fork", None)`,
                # `getattr(te_ext, "TEDotProductAttention", None)`: probes; `getattr(self.pynvml,
                # "NVML_TEMPERATURE_GPU", -1)` reads a constant of a CUDA-only package in hand
                self._handled.add(id(node.args[0].value))
            if func.value == "getattr" and len(node.args) == 3 and not self._in_message:
                self._getattr_with_fallback(node)
            if not self._in_message:
                self._probe_reference(node)
        if self.c.keywords and not self._in_message and isinstance(func, (cst.Name, cst.Attribute)) and \
                (func.value if isinstance(func, cst.Name) else func.attr.value) in _OPTION_MAKERS:
            self._option_default_on(node)
        if self.c.keywords and not self._in_message and isinstance(func, cst.Attribute) and \
                func.attr.value == "set_defaults":
            self._set_defaults_on(node)
        qual = self._qual(func, call=True)
        if qual is not None and self._match_reference(func, qual, node):
            pass                      # a resolved chain holds no other code to visit
        elif qual is None and isinstance(func, cst.Name) and func.value in self.ctx.subclass_of \
                and self._subclass_call(func, node):
            pass
        elif (self.c.callnames or self.c.callname_globs) and self._match_callname(func, node):
            if isinstance(func, cst.Attribute):
                walk(func.value, self)
        elif isinstance(func, cst.Attribute) and func.attr.value in self.c.methods:
            rule = self.c.methods[func.attr.value][0]
            receivers = rule.extra.get("on_receivers")
            if self._when_ok(rule, node) and not (
                    # `libraries.append("cusolver")`, not `backends.append("cudnn")` (t18a)
                    receivers and not any(fnmatch.fnmatchcase((dotted(func.value) or "").rsplit(".", 1)[-1], r)
                                          for r in receivers)) and not (
                    rule.extra.get("not_on_modules") and _base_name(func.value) in self.ctx.aliases
                    and _base_name(func.value) not in self.ctx.reassigned) and not (
                    rule.extra.get("no_args") and any(a.keyword is None for a in node.args)):
                self._hit(rule, func.attr, func.attr.value, end_node=node)
            walk(func.value, self)    # the receiver may hold code: `torch.randn(3).cuda()`
        else:
            walk(func, self)
        if len(self.hits) == first_hit and not self._in_message:
            self._dynamic_import(node)
        message = self._is_message_call(func, qual)
        env_kw = qual == "dict" or dotted(func) == "dict" or (
            isinstance(func, cst.Attribute) and func.attr.value in ("update", "setdefault"))
        call_categories = {h.rule.category for h in self.hits[first_hit:]}   # what the callee itself matched
        callee_passes = {k for h in self.hits[first_hit:] for k in h.rule.extra.get("passed_on_keywords") or ()}
        weightless = _weightless_loader(func)
        for index, arg in enumerate(node.args):
            if weightless and arg.keyword is not None and arg.keyword.value == "torch_dtype":
                continue    # `DPMSolverMultistepScheduler.from_pretrained(..., torch_dtype=torch.float16)`: no weights
            if arg.keyword is not None and self.c.keywords and not message:
                # `use_fp8_gemms=False` is off; `load(..., extra_cuda_cflags=...)` is already a kernel finding, unless
                # a kernel-build keyword starts a line of its own in a multi-line call (t21a; lead decision 2: the nvcc
                # settings of a build are lines of their own; `BitsAndBytesConfig(\n load_in_4bit=True` stays one)
                keyword_rules = self.c.match_keywords(arg.keyword.value)
                if keyword_rules and all(kw[0].extra.get("keyword_literal_only") for kw in keyword_rules) and \
                        _literal_strings(arg.value) is not None and self.c.keyword_values and \
                        all(self._value_says(arg.value, kw[0]) for kw in keyword_rules):
                    keyword_rules = []   # `backend="GPU_1D"`: not a value the `backend` rules name; `backend=gpu*` may (t28a)
                for kw in keyword_rules:
                    if kw[0].extra.get("settings_only") and (
                            (qual or "").startswith("torch.") or not _literal_on(arg.value)):
                        continue    # `torch.batch_norm(..., cudnn_enabled=True)`: aten's own parameter; a value
                                    # passed on (`cudnn_enabled=state.cudnn_enabled`) records a setting made elsewhere
                    # `build(cuda_home=cuda_home)`, `create_extension(..., with_cuda=with_cuda)`: a setting handed to
                    # the build that uses it (the keyword's rule or the callee's names it), reported there too
                    passed_on = arg.keyword.value in (kw[0].extra.get("passed_on_keywords") or ()) or \
                        arg.keyword.value in callee_passes
                    if not _switched_off(arg.value, "" if passed_on else arg.keyword.value) \
                            and (kw[0].category not in call_categories or kw[0].extra.get("stack")
                                 or kw[0].category == "kernel" and _starts_line(node, index)
                                 and not self._names_rule(arg.value, kw[0])) \
                            and not self._value_says(arg.value, kw[0], arg.keyword.value):
                        self._hit(kw[0], arg.keyword, arg.keyword.value, value=kw[1])
                if not keyword_rules and self.c.keyword_values:
                    # `Trainer(device="gpu")`, `executor.update_parameters(gpus_per_node=8)`: a literal value, or a
                    # keyword only this callee reads
                    last = func.value if isinstance(func, cst.Name) else func.attr.value \
                        if isinstance(func, cst.Attribute) else None
                    literal = _literal_text(arg.value)
                    kv = self.c.match_keyword_value(last, arg.keyword.value, literal, qual)
                    if kv is None and isinstance(arg.value, cst.IfExp):
                        # `accelerator="ddp" if device_num > 1 else None`: a rule that reads either branch's literal
                        # (`either_branch`: the mode a multi-device run takes whatever picks it; tp56a)
                        for branch in (arg.value.body, arg.value.orelse):
                            literal = _literal_text(branch)
                            kv = self.c.match_keyword_value(last, arg.keyword.value, literal, qual)
                            if kv is not None and kv[0].extra.get("either_branch"):
                                break
                            kv, literal = None, None
                    if kv is not None and not _switched_off(arg.value, arg.keyword.value) \
                            and kv[0].category not in call_categories:
                        symbol = arg.keyword.value if literal is None else f"{arg.keyword.value}={literal}"
                        self._hit(kv[0], arg.keyword, symbol, value=kv[1])
            if arg.keyword is not None and env_kw:
                env_rule = self.c.match_env(arg.keyword.value)
                if env_rule is not None:
                    self._hit(env_rule, arg.keyword, arg.keyword.value)
            value = arg.value
            if not message and isinstance(value, cst.Name) and value.value in self.ctx.constants \
                    and value.value not in self.ctx.aliases and not _names_a_ref(arg):
                # (`variant=variant` after `variant = "fp16"`: a weights file's name, not a dtype, t17e)
                self._match_values(value, self.ctx.constants[value.value], via=value.value,
                                   run_arg=bool(RUNS_COMMAND.match(qual or "")))
            # `skipUnless(device == "cuda", "needs CUDA")`: the condition of a skip/assert helper is code
            text = message and not isinstance(value, (cst.Comparison, cst.BooleanOperation, cst.UnaryOperation))
            # `add_argument(..., help="... 'cuda' ... CUDA_VISIBLE_DEVICES=X cmd")`: help / usage text is for humans
            # whatever the call (argparse, click, typer, dataclass fields), unless it holds code (t14k)
            text = text or (arg.keyword is not None and arg.keyword.value in _HELP_KEYWORDS and _stringy_value(value))
            # `add_argument('--cuda', dest='cuda', ...)`: the name of the parsed attribute, not a device (t29a)
            text = text or (arg.keyword is not None and arg.keyword.value in ("dest", "metavar")
                            and _stringy_value(value) and (dotted(func) or "").split(".")[-1] == "add_argument")
            # `setup(..., keywords="nvidia-smi gpu cuda monitoring")`: a package's metadata, text for an index
            text = text or (arg.keyword is not None and arg.keyword.value in _PACKAGE_TEXT_KEYWORDS
                            and _stringy_value(value) and (dotted(func) or "").split(".")[-1] == "setup")
            # `setup(..., package_data={"": ["csrc/**/*.cu"]})`: files shipped with the package, not a build's sources
            text = text or (arg.keyword is not None and arg.keyword.value in _PACKAGE_FILE_KEYWORDS
                            and (dotted(func) or "").split(".")[-1] == "setup")
            # `print(prof.key_averages().table(sort_by="self_cuda_time_total"))`: a keyword argument of a call made
            # inside a message is that callee's parameter, code that runs, not text for humans (t14l)
            saved = self._in_message
            if saved and not message and arg.keyword is not None and arg.keyword.value not in _MESSAGE_KEYWORDS:
                self._in_message = 0
            # `print(subprocess.check_output("nvidia-smi", encoding="utf-8"))`: the command of a call that runs it
            # inside a message runs, it is not text (t32b, a notebook's first cell)
            if saved and arg.keyword is None and RUNS_COMMAND.match(self._qual(func) or ""):
                self._in_message = 0
            if text:
                self._in_message += 1
            walk(arg, self)
            if text:
                self._in_message -= 1
            self._in_message = saved
        return False

    def _getattr_with_fallback(self, node: cst.Call) -> None:
        """`getattr(torch.backends.cuda, "can_use_flash_attention", cannot_use)` (para-attn): a callable fallback
        (a lambda or a function the file defines at its top level, not None, a constant or a dtype) means the attribute is taken to be used, on the
        backends where it exists; report it as the module's name would be (t14k). A None / constant default is a
        probe and stays quiet."""
        obj, name, default = (a.value for a in node.args)
        # a lambda or a function defined above in the file; `torch.uint8` / a constant is a value fallback
        callable_default = isinstance(default, cst.Lambda) or (
            isinstance(default, cst.Name) and default.value in self.ctx.module_functions)
        if not callable_default or not isinstance(name, cst.SimpleString):
            return
        attr = name.evaluated_value
        base = self._qual(obj)
        if not isinstance(attr, str) or not attr.isidentifier() or base is None or base == "self":
            return
        self._match_reference(name, f"{base}.{attr}", None)

    def _method_probe(self, test: cst.BaseExpression, body: cst.CSTNode) -> None:
        """`if hasattr(obj, "cuda"): return obj.cuda(*args, **kwargs)` (torchdrug's `cuda()` helper and its copies:
        PiFold, GearNet), `x.cuda() if hasattr(x, "cuda") else x`: a duck-typed test for the CUDA move its branch
        makes, ported with it (`hasattr(obj, "npu")`). Kept when the branch calls that method and the object is
        not a module (`hasattr(torch, "cuda")` names a namespace every torch build has); reported as a probe."""
        tests = [test]
        while tests and isinstance(tests[-1], cst.BooleanOperation) and isinstance(tests[-1].operator, cst.And):
            tests[-1:] = [tests[-1].left, tests[-1].right]
        for call in tests:
            if not (isinstance(call, cst.Call) and isinstance(call.func, cst.Name) and call.func.value == "hasattr"
                    and len(call.args) == 2 and isinstance(call.args[1].value, cst.SimpleString)):
                continue
            attr = call.args[1].value.evaluated_value
            rules = self.c.methods.get(attr) if isinstance(attr, str) else None
            if not isinstance(attr, str) or not rules or rules[0].category != "device" or rules[0].when or \
                    _base_name(call.args[0].value) in self.ctx.aliases:
                continue      # (a rule that wants an argument, `conf.set("spark...gpu.amount", ...)`, no probe says)
            if _calls_method(body, attr):
                self._method_probes[id(call)] = (rules[0], attr)

    def _acquired_by_getattr(self, value: cst.BaseExpression) -> None:
        """`cudnn = getattr(torch.backends, 'cudnn', None)` then `cudnn.benchmark = False` (omnipose), `info['cuda_version']
        = getattr(torch.version, 'cuda', None)`: a torch namespace or a `torch.version` value taken by `getattr` with a
        literal name and stored is the read `torch.backends.cudnn` / `torch.version.cuda`, reported as that read would
        be, as a probe (at most a warning, never rewritten; tk41). A function taken so (`fn = getattr(torch.cuda,
        "mem_get_info", None)`) and a `getattr` tested in a condition (`callable(getattr(batch, "cuda", None))`) stay
        the quiet probes of issue 11's precision classes; precision names (dtypes) are not read here."""
        if not isinstance(value, cst.Call) or not isinstance(value.func, cst.Name) or value.func.value != "getattr" \
                or not 2 <= len(value.args) <= 3 or any(a.keyword is not None for a in value.args):
            return
        name = value.args[1].value
        attr = name.evaluated_value if isinstance(name, cst.SimpleString) else None
        if not isinstance(attr, str) or not attr.isidentifier() or attr.startswith("__"):
            return
        base = self._qual(value.args[0].value)
        if base is None or not base.startswith("torch.") or _NPU_SEGMENT.search(f"{base}.{attr}"):
            return
        full = f"{base}.{attr}"
        if not self.c.is_namespace(full) and base != "torch.version":
            return      # `fn = getattr(torch.cuda, "mem_get_info", None)`: a function probed, issue 11's quiet class
        m = self.c.match_qualname(full)
        module_rule = self.c.match_import(full) if m is None else None     # `torch.backends.cudnn`, as its import
        if (m is None or m.rule.category == "precision") and (module_rule is None or module_rule.category == "precision") \
                or full in _PROBED_EVERYWHERE and not self.c.is_namespace(full):
            return      # (a namespace taken is the module used through the name; `is_available` answers anywhere)
        first = len(self.hits)
        if module_rule is not None:
            self._hit(module_rule, name, full)
        else:
            self._match_reference(name, full, None)
        self.hits[first:] = [h for h in self.hits[first:] if h.rule.category != "precision"]
        for hit in self.hits[first:]:
            hit.probe = True

    def _probe_reference(self, node: cst.Call) -> None:
        """`hasattr(torch.cuda, "mem_get_info")`, `hasattr(torch.ops.my_triton_ops, "layer_norm")`: the line spells the
        CUDA-only torch name it asks about (labelling policy item 1), and on Ascend the answer differs from CUDA's
        (the name is missing, or present and failing when the branch it opens calls it). Reported as the qualified
        name would be, as a probe (t14l): at most a warning, never rewritten. Kept quiet, as issue 11's precision
        classes decided (docs/precision.md): `getattr(x, "name", default)` (a probe with a fallback: the code has a
        path without the name) and probes of a third-party optional import (`hasattr(transformer_engine,
        "pytorch")`: the import is the finding); dtype probes, Python's own attributes and the NPU's own
        namespaces."""
        func = node.func
        method = self._method_probes.get(id(node))
        if method is not None:
            first = len(self.hits)
            self._hit(method[0], node.args[1].value, method[1])
            for hit in self.hits[first:]:
                hit.probe = True
            return
        if not isinstance(func, cst.Name) or func.value != "hasattr" or len(node.args) != 2 or self._asserting:
            return      # `assert hasattr(torch.ops.mylib, "op")`: a test checking a registration
        if any(a.keyword is not None for a in node.args):
            return
        obj, name = node.args[0].value, node.args[1].value
        attr = name.evaluated_value if isinstance(name, cst.SimpleString) else None
        if not isinstance(attr, str) or not attr.isidentifier() or attr.startswith("__"):
            return      # `hasattr(fn, "__wrapped__")`: Python's own attributes
        base = self._qual(obj)
        if base is None or not base.startswith("torch.") or _NPU_SEGMENT.search(f"{base}.{attr}"):
            return      # `hasattr(torch.ops._C_ascend, "npu_add_rms_norm_bias")`: the NPU's own namespace
        full = f"{base}.{attr}"
        m = self.c.match_qualname(full)
        if m is None or m.rule.category == "precision" or full in _PROBED_EVERYWHERE:
            return
        first = len(self.hits)
        self._match_reference(name, full, None)
        self.hits[first:] = [h for h in self.hits[first:] if h.rule.category != "precision"]
        for hit in self.hits[first:]:
            hit.probe = True

    def _option_default_on(self, node: cst.Call) -> None:
        """`parser.add_argument("--fp16", type=bool, default=True)`, `@click.option("--use-flash-attn/--no-flash-attn",
        default=True)`, `add_argument("--bf16", action="store_false")`: a command-line option that defaults on is the
        setting switched on, like the keyword `fp16=True` (labelling policy item 7); reported on the option's name
        by the keyword rules. An option that defaults off (`action="store_true"`, no default, `default=False`) is
        the user's switch and stays quiet."""
        flags = [a.value for a in node.args if a.keyword is None and isinstance(a.value, cst.SimpleString)
                 and isinstance(a.value.evaluated_value, str) and a.value.evaluated_value.startswith("-")]
        if not flags:
            return
        kwargs = {a.keyword.value: a.value for a in node.args if a.keyword is not None}
        if isinstance(kwargs.get("default"), (cst.List, cst.Tuple)):
            # `--dtypes nargs='+' default=('fp32', 'fp16', 'int8')`: the run goes through every default value (vedastr's
            # TensorRT benchmark builds an engine per dtype); its `choices=` list stays the options offered (t34c)
            self._each_chosen.add(id(kwargs["default"]))
        literal = flags[-1]
        for flag in flags:
            if str(flag.evaluated_value).startswith("--"):
                literal = flag
        dest = kwargs.get("dest")
        name = dest.evaluated_value if isinstance(dest, cst.SimpleString) else \
            str(literal.evaluated_value).split("/")[0].lstrip("-").replace("-", "_")
        if not isinstance(name, str) or not name.isidentifier():
            return
        self._report_option_default(name, literal, kwargs.get("default"), kwargs.get("type"), kwargs.get("action"))

    def _set_defaults_on(self, node: cst.Call) -> None:
        """`parser.set_defaults(cuda=True)` after `--cuda` (store_true) / `--no-cuda` (store_false, dest cuda): the
        default given apart from the option, read like `add_argument`'s own (e3_diffusion's qm9 args.py, test24).
        Only for a name the file declares as an option: the module that reads `args.cuda` is another one."""
        for arg in node.args:
            if arg.keyword is not None and self._option_declared(arg.keyword.value):
                self._report_option_default(arg.keyword.value, arg.keyword, arg.value, None, None, declared=True)

    def _file_text(self) -> str:
        """The whole file's text (the chunked pass of a large file sees one piece of the tree), read once."""
        if self._option_text is None:
            self._option_text = "".join(self.file_lines or ())
        return self._option_text

    def _option_declared(self, name: str) -> bool:
        """Whether the file declares a command-line option for `name` (`"--cuda"`, `"--no-cuda", dest="cuda"`)."""
        text = self._file_text()
        spelled = re.escape(name).replace("_", "[-_]")
        return re.search(r"""["']--?""" + spelled + r"""["']|\bdest\s*=\s*["']""" + re.escape(name) + r"""["']""",
                         text) is not None

    def _report_option_default(self, name: str, at: cst.CSTNode, default: cst.BaseExpression | None,
                               kind: cst.BaseExpression | None, action: cst.BaseExpression | None,
                               declared: bool = False) -> None:
        """An option's default that is on: the CUDA-device option rules (read by the module, or declared in it for
        `set_defaults`) and the keyword rules of other categories (`--fp16` default True)."""
        if _option_picks_device(name.lower(), default, kind, action) and \
                (self._device_option_read(name) or declared and not _DEVICE_TYPE_OPTION_RE.search(self._file_text())):
            for rule, pattern in self.c.match_option_keywords(name.lower()):
                self._hit(rule, at, name, value=pattern)
        if declared:
            return     # `set_defaults(fp16=True)`: a keyword argument, which the keyword rules read already
        if isinstance(default, cst.SimpleString) and isinstance(default.evaluated_value, str) \
                and self.c.match_string(default.evaluated_value) is None:
            # `add_argument("--accelerator", default="gpu")`: the default is the keyword `accelerator="gpu"` the
            # option is passed on as (Lightning's Trainer); device options only, and only a literal no string rule
            # reports already (`default="cuda"` is NPU003's) (t31c, sgmse's train.py)
            found = self.c.match_keyword_value(None, name, default.evaluated_value)
            if found is not None and found[0].category == "device" and _DEVICE_CHOICE_OPTION_RE.fullmatch(name):
                self._hit(found[0], default, name, value=found[1])
        if isinstance(default, cst.SimpleString):
            # `add_argument("--precision", default="amp")`: a string default is the value a keyword rule with
            # `keyword_values` reads, reported on the default (t22e: open_clip's precision option)
            for rule, pattern in self.c.match_keywords(name):
                if rule.extra.get("keyword_values") and not self._value_says(default, rule):
                    self._hit(rule, default, name, value=pattern)
                    own = self.c.match_string(str(default.evaluated_value))
                    if own is not None and own[0].category != rule.category:
                        # `add_argument('--method', default='cudart')`: the option names the engine, not the
                        # toolkit a build links (NPU064); one literal, one finding (t28a)
                        self._handled.add(id(default))
        if default is not None:
            on = isinstance(default, cst.Name) and default.value == "True" or \
                isinstance(default, cst.Integer) and default.value != "0" or \
                isinstance(default, cst.SimpleString) and str(default.evaluated_value).lower() in ("true", "1", "yes")
        else:
            on = isinstance(action, cst.SimpleString) and action.evaluated_value == "store_false"
        if not on:
            return
        negated = _NEGATED_OPTION_RE.match(name)
        if negated and isinstance(action, cst.SimpleString) and action.evaluated_value == "store_false":
            # `add_argument('--no_autocast', action='store_false', default=True)`: giving `--no_autocast` stores
            # False, so the value kept is autocast's own state, on unless the option is given (DehazeFormer's
            # `with autocast(args.no_autocast):`); the keyword rules read the switch it negates (t34c)
            name = name[negated.end():]
        for rule, pattern in self.c.match_keywords(name):
            if rule.extra.get("keyword_literal_only") and default is not None and self._value_says(default, rule):
                continue      # `--precision` default 32: not one of the values the rule names (read above)
            if rule.category != "device":    # `--use_cuda` (default on): the device calls it gates are the findings,
                self._hit(rule, at, name, value=pattern)   # and ported code keeps the name (`.npu()` under it)

    def _device_option_read(self, name: str) -> bool:
        """A CUDA-device option (`--gpu`, default 0) that the module reads (`args.gpu`, or a click command's
        parameter) and that no device-type option of the same module (`--device`, `--accelerator`) overrides: beside
        one the index serves the CUDA choice among backends (Gaudi's `--device hpu|gpu|cpu` with `--gpu 0`), and an
        option nobody reads selects nothing (t14v, read on the precision trees of heldout3..13). Read on the whole
        file's text, so that the chunked pass of a large file answers the same."""
        if self.file_lines is None:
            return True
        text = self._file_text()
        if _DEVICE_TYPE_OPTION_RE.search(text):
            return False
        return re.search(r"\.\s*" + re.escape(name) + r"\b", text) is not None or \
            re.search(r"\bdef\s+\w+\s*\([^)]*\b" + re.escape(name) + r"\b", text) is not None

    def _third_party_object(self, node: cst.CSTNode) -> bool:
        """A CUDA-only third-party package or an object from one (pynvml, nvidia_smi): using it is the finding."""
        qual = self._qual(node)
        m = self.c.match_qualname(qual) if qual is not None else None
        return m is not None and m.rule.category == "third_party"

    def _match_callname(self, func: cst.CSTNode, call: cst.Call) -> bool:
        """`is_flash_attn_2_available()`, `utils.has_cuda_capability(9, 0)`: every rule for the callee's
        last name whose condition holds reports (one line may answer a device and a precision question)."""
        if self._in_message:
            return False      # `f"... your version is {get_te_version()}"`: not a feature check
        last = func.value if isinstance(func, cst.Name) else func.attr.value if isinstance(func, cst.Attribute) else None
        fired = False
        if not last:
            return fired
        for rule in self.c.callnames.get(last, ()):
            if self._when_ok(rule, call):
                self._hit(rule, func, last, end_node=call)
                fired = True
                cond = rule.when.get("arg") or {}
                arg = self._arg(call, cond.get("pos"), cond.get("kw")) if cond.get("values") else None
                if arg is not None and isinstance(arg.value, cst.SimpleString):
                    # `_is_package_available("flash_attn")`: the look-up's package name, reported with the call
                    # (as `find_spec("flash_attn")`), not an implementation chosen by name (tq46b)
                    self._handled.add(id(arg.value))
        if not fired and self.c.callname_globs and last not in self.c.methods:
            m = self.c.match_callname_glob(last)      # `get_nccl_options(...)`: a helper named for NCCL
            if m is not None and self._when_ok(m[0], call):
                self._hit(m[0], func, last, value=m[1], end_node=call)
                fired = True
        return fired

    def leave_Call(self, original_node: cst.Call) -> None:
        if self._in_message and self._calls_in_message and not _shows_value(original_node):
            self._calls_in_message -= 1

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        if id(node) in self._handled:
            return False
        d = dotted(node)
        if d is None:
            self._handled.add(id(node.attr))
            rule = self._attribute_rule(node)
            if rule is not None:
                self._hit(rule, node.attr, node.attr.value)
            return True
        qual = self._resolve(d)
        if qual is not None and (self._bare_module(qual) or self._match_reference(node, qual, None)):
            return False
        rule = self._attribute_rule(node)
        if rule is not None:
            self._hit(rule, node.attr, node.attr.value)
        return False

    def visit_Del(self, node: cst.Del) -> bool:
        # `tcnn = tinycudann; del tinycudann`: unbinding a name uses nothing (its import is the finding) (t14t)
        targets = node.target.elements if isinstance(node.target, (cst.Tuple, cst.List)) else [node.target]
        for t in targets:
            target = t.value if isinstance(t, cst.Element) else t
            if isinstance(target, (cst.Name, cst.Attribute)):
                self._handled.add(id(target))
        return True

    def visit_Name(self, node: cst.Name) -> bool:
        if id(node) in self._handled:
            return False
        qual = self._resolve(node.value)
        if qual is not None and not self._bare_module(qual):
            self._match_reference(node, qual, None)
        return False

    def _bare_module(self, qual: str) -> bool:
        """`assert hvd is not None`, `self._HVD = HVD`, `run(HVD)`: a module named on its own, for a rule whose
        finding is what the code calls or reads in it (`not_bare_module`, t18a: Horovod), not that it holds it."""
        m = self.c.match_qualname(qual)
        return m is not None and bool(m.rule.extra.get("not_bare_module")) and self.c.is_namespace(qual)

    def _flag_reads(self, test: cst.BaseExpression) -> None:
        """`if _FLASH_ATTN_AVAILABLE and not HAVE_APEX:`: feature flags a test reads, by their names (`flagname`)."""
        if not self.c.flagnames:
            return
        if isinstance(test, cst.BooleanOperation):
            self._flag_reads(test.left)
            self._flag_reads(test.right)
        elif isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
            self._flag_reads(test.expression)
        elif isinstance(test, (cst.Name, cst.Attribute)):
            name = test.value if isinstance(test, cst.Name) else test.attr.value
            m = self.c.match_flag(name)
            if m is not None:
                self._hit(m[0], test, name, value=m[1])

    def visit_If(self, node: cst.If) -> bool:
        self._flag_reads(node.test)
        if _only_raises(node.body):
            # tq56e: `if trainer not in ["ddp", "apex"]: raise ValueError(...)` (aps' `aps_trainer`) validates a name
            # against the names it accepts; the choice is made, and reported, where the value is set
            self._handled.update(id(s) for s in _accepted_literals(node.test))
        self._ascend_model_chain(node)
        self._method_probe(node.test, node.body)
        guard = self.ctx.cast_fallbacks.admit(guard_kind(node))
        required = required_dtype_nodes(node.test, guard=guard)
        self.ctx.cast_fallbacks.met(guard, required)
        self._required_dtypes.update(dict.fromkeys(required, guard or "guard"))
        # `elif config.torch_dtype == torch.float16: dtype = torch.float16`: the branch copies the dtype it tested
        # (the choice is where the config's dtype is set). (The branches of a name-to-dtype conversion, `elif
        # model_dtype == "torch.bfloat16": return torch.bfloat16`, are value_reads._drop_conversions': one recogniser.)
        small = None
        if isinstance(node.body, cst.IndentedBlock) and len(node.body.body) == 1:
            stmt = node.body.body[0]
            small = stmt.body[0] if isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 else None
        elif isinstance(node.body, cst.SimpleStatementSuite) and len(node.body.body) == 1:
            small = node.body.body[0]       # `elif si1.startswith('fp16'): si[1] = [torch.float16]`
        cast = _cast_dtype(small.value) if isinstance(small, (cst.Return, cst.Assign)) and small.value else None
        if cast is not None and _compares_same_dtype(node.test, cast):
            # `if dtype == torch.float16: return value.to(dtype=torch.float16)` (ComfyUI's stochastic_rounding,
            # t17d): the cast copies the dtype its test found, the caller chose it
            self._asserted.update(_dtype_values(cast))
        elif isinstance(small, (cst.Return, cst.Assign)) and small.value is not None and (
                _compares_same_dtype(node.test, small.value) or _finds_dtype_name_in(node.test, small.value)):
            value = small.value
            if isinstance(value, (cst.List, cst.Tuple)) and len(value.elements) == 1:
                value = value.elements[0].value
            self._asserted.update(_dtype_values(value))
        return True

    def visit_MatchCase(self, node: cst.MatchCase) -> bool:
        # `case Precision.FP16: return torch.float16`, `case "bf16": dtype = torch.bfloat16` (comfy_mtb's
        # Precision.to_dtype, t19d): an arm of a match over a precision name is the `elif` conversion above, policy (a)
        values = [p.value for p in (node.pattern.patterns if isinstance(node.pattern, cst.MatchOr) else [node.pattern])
                  if isinstance(p, cst.MatchValue)]
        stmt = node.body.body[0] if isinstance(node.body, cst.IndentedBlock) and len(node.body.body) == 1 else None
        small = stmt.body[0] if isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 else None
        if values and any(_names_dtype(v) or _names_dtype_constant(v) for v in values) and \
                isinstance(small, (cst.Return, cst.Assign)) and small.value is not None:
            self._asserted.update(_dtype_values(small.value))
        return True

    def visit_MatchValue(self, node: cst.MatchValue) -> bool:
        # `case Precision.FP16:` / `case "bf16":` compares the subject with a name, as `==` does (visit_Comparison)
        self._dtype_quiet += 1
        if isinstance(node.value, cst.Attribute) and _enum_member(node.value) and \
                not (self._qual(node.value.value) or "").startswith("torch."):
            self._enum_compared.add(id(node.value))
        return True

    def leave_MatchValue(self, original_node: cst.MatchValue) -> None:
        self._dtype_quiet -= 1

    def visit_IfExp(self, node: cst.IfExp) -> bool:
        self._method_probe(node.test, node.body)
        if not self._in_message:
            # `print(f"... to {'CUDA' if self.cuda_available else 'device'}")`: inside a message the test only picks
            # the words printed (t18c, diffusion-pipe's block swapper); the branch that gates the device is reported
            self._flag_reads(node.test)
        if isinstance(node.body, cst.SimpleString) and isinstance(node.orelse, cst.SimpleString):
            body, orelse = node.body.evaluated_value, node.orelse.evaluated_value
            if isinstance(body, str) and isinstance(orelse, str):
                self._other_arm[id(node.body)] = orelse
                self._other_arm[id(node.orelse)] = body
        if _compares_dtype_name(node.test):
            # `float16 if args.dtype == "float16" else float32`: the user's --dtype NAME converted, policy (a), as
            # the `if` form above; the choice is where the name is given (t11v, tuned on heldout14)
            self._asserted.update(_dtype_values(node.body))
        self._asserted.update(_casts_following_test(node))
        return True

    def visit_Annotation(self, node: cst.Annotation) -> bool:
        return False      # `-> torch.autocast`, `x: torch.cuda.Stream`: a type, not a use

    def leave_Comparison(self, original_node: cst.Comparison) -> None:
        self._dtype_quiet -= 1
        self._compared -= 1

    def _reads_probe(self, node: cst.CSTNode) -> bool:
        """The expression holds what a device probe answered: a device-name query (`torch.cuda.get_device_name(0)`,
        `get_device_properties(i).name`, NVML's `nvmlDeviceGetName(h)`), an nvidia-smi run, or a name this file bound
        to one of those (`gpu_state = subprocess.check_output(["nvidia-smi", ...])`; `self.gpu_name`)."""
        stack = [node]
        while stack:
            n = stack.pop()
            if isinstance(n, cst.Call):
                last = n.func.attr.value if isinstance(n.func, cst.Attribute) else \
                    n.func.value if isinstance(n.func, cst.Name) else ""
                if last in DEVICE_NAME_PROBES:
                    return True
            elif isinstance(n, cst.SimpleString) and "nvidia-smi" in str(n.evaluated_value):
                return True
            elif isinstance(n, (cst.Name, cst.Attribute)) and dotted(n) in self.ctx.probe_names:
                return True
            if isinstance(n, cst.Attribute):
                stack.append(n.value)       # (`config.gpu`: the attribute's name is no binding of `gpu`)
                continue
            stack.extend(children(n))
        return False

    def _ascend_model_chain(self, node: cst.If) -> None:
        """The string literals of an `if` / `elif` chain's tests, when one test names an Ascend model
        (`elif "910B" in device_name:` beside `"H100" in device_name`): the chain already has the Ascend case its
        NVIDIA models' comparisons (NPU948) would ask for (tq47a, siiRL's `get_device_flops`)."""
        if id(node) in self._ascend_chain:
            return          # (an `elif` of a chain read from its head)
        tests: list[cst.BaseExpression] = []
        arm: cst.CSTNode | None = node
        while isinstance(arm, cst.If):
            self._ascend_chain.add(id(arm))
            tests.append(arm.test)
            arm = arm.orelse
        literals: list[cst.SimpleString] = []
        cuda_query = False      # `torch.cuda.get_device_name()` itself: no Ascend name to match (heldout52's Tool-Star)
        stack: list[cst.CSTNode] = list(tests)
        while stack:
            n = stack.pop()
            if isinstance(n, cst.SimpleString):
                literals.append(n)
            elif isinstance(n, (cst.Name, cst.Attribute)):
                name = dotted(n) or ""
                cuda_query = cuda_query or name in self.ctx.cuda_probe_names or name.startswith("torch.cuda.")
            stack.extend(children(n))
        if len(tests) > 1 and not cuda_query and any(_ASCEND_MODEL.search(str(n.evaluated_value)) for n in literals):
            self._ascend_chain.update(id(n) for n in literals)

    def visit_Comparison(self, node: cst.Comparison) -> bool:
        self._dtype_quiet += 1
        self._compared += 1
        sides = [node.left] + [t.comparator for t in node.comparisons]
        if len(sides) == 2 and isinstance(node.comparisons[0].operator, cst.Equal) and not self._in_message:
            self._keyword_compared(*sides)
        if len(sides) == 2:     # `impl == "cuda"`, `assert impl in ["ref", "cuda"]`
            self._implementation_names(sides[0], sides[1])
            self._implementation_names(sides[1], sides[0])
        if len(sides) == 2:     # `"A100" in torch.cuda.get_device_name()`, `b"H100" in gpu_state` (tk43)
            for literal, other in ((sides[0], sides[1]), (sides[1], sides[0])):
                if isinstance(literal, _STRING_NODES) and self._reads_probe(other):
                    self._probe_compared.add(id(literal))
        if self._variant_rule is not None and all(isinstance(side, (cst.Name, cst.SimpleString)) for side in sides):
            # `suffix == 'cuda'` (a build variable), not `x.device.type != "cuda"` (a tensor's device)
            self._listed.update(id(side) for side in sides if isinstance(side, cst.SimpleString))
        if id(node) not in self._required and any(isinstance(side, cst.Name) and side.value == "None"
                                                  for side in sides):
            for side in sides:        # `if bnb is not None:` checks an optional import; it does not use it
                if isinstance(side, (cst.Name, cst.Attribute)):
                    qual = self._qual(side)
                    # (`CUDA_HOME is None` is the point; `cudnn is not None` after `cudnn = getattr(torch.backends,
                    # 'cudnn', None)` asks whether the namespace is there, as for an optional import: tk41)
                    if qual is not None and (not qual.startswith("torch.") or isinstance(side, cst.Name)
                                             and self.c.is_namespace(qual)):
                        self._handled.add(id(side))
        sides = [node.left] + [t.comparator for t in node.comparisons]
        for side in sides:
            members = [e.value for e in side.elements] if isinstance(side, (cst.Tuple, cst.List, cst.Set)) else [side]
            # (an attribute rule reports the member's name node: `Device.tensorrt` -> `tensorrt`)
            self._operands.update(id(m.attr if isinstance(m, cst.Attribute) else m) for m in members)
            self._compared_attributes.update(id(m) for m in members if isinstance(m, cst.Attribute))
            self._enum_compared.update(id(m) for m in members if isinstance(m, cst.Attribute) and _enum_member(m)
                                       and not (self._qual(m.value) or "").startswith("torch."))
            # (torch's profiler DeviceType has its own rules)
        if any(isinstance(side, (*_STRING_NODES, cst.Integer, cst.Float)) or
               (isinstance(side, cst.Name) and side.value in ("None", "True", "False")) for side in sides):
            # `name == "sdaa"` asks about the literal, whatever else `name` may hold ("cuda" elsewhere);
            # a literal that matters ("cuda") is matched as a string by itself
            return True
        if any(_tensor_device_type(side) for side in sides):
            # `t.device.type != device` (device = "cuda" if ... else "cpu"): the runtime answers "npu" on Ascend, so
            # the test holds once the definition is ported; the definition and the `.to(device)` carry the finding
            return True
        for side in sides:
            if isinstance(side, cst.Name) and side.value in self.ctx.constants and side.value not in self.ctx.aliases:
                self._match_values(side, self.ctx.constants[side.value], via=side.value)
        return True

    def _visit_string(self, node: cst.BaseExpression) -> bool:
        if id(node) in self._handled:
            return False
        # in a message the text is for humans, but `{torch.cuda.max_memory_allocated()}` inside it still runs
        values = None if self._in_message else self.fold(node)
        if values:
            self._match_values(node, values)
        elif id(node) in self._probe_compared and isinstance(node, cst.SimpleString) \
                and isinstance(node.evaluated_value, bytes):
            # `b"H100" in gpu_state` (nvidia-smi's output read as bytes, deita's setup.py): the model name as text
            m = self.c.match_string(node.evaluated_value.decode("latin-1"))
            if m is not None and m[0].extra.get("probe_compared"):
                self._hit(m[0], node, m[1], value=m[1])
        if isinstance(node, cst.FormattedString):
            for part in node.parts:
                if isinstance(part, cst.FormattedStringExpression):
                    walk(part.expression, self)
        elif isinstance(node, cst.ConcatenatedString):
            # three or more adjacent literals nest (`f"a" f"{x}" f"{y}"` is left=f"a", right=(f"{x}" f"{y}")) (pd3)
            sides: list[cst.BaseExpression] = [node.left, node.right]
            while sides:
                side = sides.pop()
                if isinstance(side, cst.ConcatenatedString):
                    sides += [side.left, side.right]
                elif isinstance(side, cst.FormattedString):
                    for part in side.parts:
                        if isinstance(part, cst.FormattedStringExpression):
                            walk(part.expression, self)
        return False

    def visit_SimpleString(self, node: cst.SimpleString) -> bool:
        return self._visit_string(node)

    def visit_ConcatenatedString(self, node: cst.ConcatenatedString) -> bool:
        return self._visit_string(node)

    def visit_FormattedString(self, node: cst.FormattedString) -> bool:
        return self._visit_string(node)

    def _flag_list_edit(self, target: cst.BaseExpression) -> None:
        """Flags added to or taken from a list named for a compiler's flags (`flag_list` keyword rules): the list is
        set there, as `nvcc_flags = [...]` sets it. Not inside an assignment to the same name (`nvcc_flags =
        nvcc_flags + [...]`: the binding reports it)."""
        key = _string_index(target)
        if key is not None and isinstance(key.evaluated_value, str):
            # `extra_compile_args["nvcc"].append("-O3")`: the nvcc slot's flags (the `keyword_key` rule), not the nvcc
            # command NPU407 reports for a bare "nvcc"
            self._claim_key(key)
            bound_keys = {k.evaluated_value for k in (_string_index(t) for _, t, _ in self._bindings if t is not None)
                          if k is not None}
            if id(key) in self._handled and key.evaluated_value not in bound_keys:
                # (`d["nvcc"] = d["nvcc"] + [...]`: the binding reports it)
                rule, pattern = next(kw for kw in self.c.match_keywords(key.evaluated_value)
                                     if kw[0].extra.get("keyword_key"))
                self._hit(rule, key, key.evaluated_value, value=pattern)
            return
        name_node = target.attr if isinstance(target, cst.Attribute) else target
        if not isinstance(name_node, cst.Name) or any(
                isinstance(t, (cst.Name, cst.Attribute)) and dotted(t) == dotted(target) for _, t, _ in self._bindings):
            return
        for rule, pattern in self.c.match_keywords(name_node.value):
            if rule.extra.get("flag_list"):
                self._hit(rule, name_node, name_node.value, value=pattern)

    def visit_BinaryOperation(self, node: cst.BinaryOperation) -> bool:
        if isinstance(node.operator, cst.Add) and not self._in_message:
            # `return nvcc_extra_args + ["--threads", "4"]` (the Dao-AILab / apex setup.py helper, test22)
            for side, other in ((node.left, node.right), (node.right, node.left)):
                if isinstance(side, (cst.Name, cst.Attribute, cst.Subscript)) and isinstance(other, (cst.List, cst.Tuple)):
                    self._flag_list_edit(side)    # flash-attn's `nvcc_extra_args + ["--threads", nvcc_threads]` too
        if isinstance(node.operator, cst.Divide) and any(isinstance(side, _STRING_NODES)
                                                         for side in (node.left, node.right)):
            self._path_segments.update(id(side) for side in (node.left, node.right) if isinstance(side, _STRING_NODES))
        if isinstance(node.operator, cst.Multiply):
            for side in (node.left, node.right):
                if isinstance(side, cst.Call):
                    self._mul_operands.add(id(side))
        if not _stringy(node):
            return True
        if id(node) in self._handled:     # `{'cuda:%d' % 0: ...}` as a map_location key: its code operands only
            _visit_code_operands(node, self)
            return False
        if self._in_message:
            # `logger.warning("max memory: %.1f MiB" % (torch.cuda.max_memory_allocated() / 1e6))`: the text is
            # for humans, but the operands are code that runs (as in an f-string's fields, _visit_string) (t14q)
            if isinstance(node.operator, cst.Modulo) and isinstance(node.left, _STRING_NODES) \
                    and not isinstance(node.right, _STRING_NODES):
                walk(node.right, self)
            elif isinstance(node.operator, cst.Add):
                # `logger.info("devices: " + str(torch.cuda.device_count()))`: the same for a concatenation; string
                # operands stay text (in a message _visit_string only visits an f-string's fields) (pd3)
                walk(node.left, self)
                walk(node.right, self)
            return False
        values = self.fold(node)
        if values and any(v.replace(HOLE, "") for v in values):
            self._match_values(node, values)
        _visit_code_operands(node, self)
        return False


# calls whose first argument names a module to look up or import
_MODULE_LOOKUPS = frozenset({"find_spec", "find_loader", "importorskip", "__import__", "module_available",
                             "package_available"}) | _MODULE_IMPORTERS
# keyword arguments and dict keys whose string value is help / usage text (argparse, click, typer, HF `metadata=`)
_HELP_KEYWORDS = frozenset({"help", "description", "epilog", "usage", "hint"})
# a module's metadata read inside a message text (`x_cuda.__file__`, `flash_attn.__version__`): not a use (t14t)
# calls whose string arguments are segments of a file path
_PATH_BUILDERS = frozenset({"os.path.join", "path.join", "osp.join", "posixpath.join", "Path", "pathlib.Path",
                            "PurePath", "pathlib.PurePath", "PosixPath"})
_CONSTANT_NAME = re.compile(r"^[A-Z][A-Z0-9]*_[A-Z0-9_]+\Z")
# an enum member passed to a call (`trt.ActivationType.SIGMOID`, `trt.BuilderFlag.FP16`): CamelCase class, UPPER member
_ENUM_MEMBER = re.compile(r"\.[A-Z][a-z]\w*\.[A-Z][A-Z0-9_]*\Z")
_MODULE_METADATA = frozenset({"__file__", "__version__", "__name__", "__path__", "__doc__", "__spec__"})
# a getter of a setting (`get_float32_matmul_precision`, `is_autocast_enabled`), not one named for a CUDA device
_SETTING_GETTER = re.compile(r"^(?:get|is)_(?!.*(?:cuda|gpu))\w+$")
# str methods that cut text out of a string (`.replace("+cu121", "")`, `.split("+cu")`): their arguments are pieces
_STRING_EDITS = frozenset({"replace", "split", "rsplit", "partition", "rpartition", "strip", "rstrip", "lstrip",
                           "removesuffix", "removeprefix"})
# a PEP 440 local version label of a torch wheel (`+cpu`, `+cu121`, `+rocm6.4`, `+xpu`)
_BUILD_LABEL = re.compile(r"\+[a-z]+[0-9.]*")
_CUDA_BUILD_LABEL = re.compile(r"\+cu[0-9]+")


def _tensor_device_type(node: cst.BaseExpression) -> bool:
    """`x.device.type`: the type of a tensor's device, which the runtime sets ("npu" on Ascend)."""
    return isinstance(node, cst.Attribute) and node.attr.value == "type" and \
        isinstance(node.value, cst.Attribute) and node.value.attr.value == "device"


# options that choose the device type (`--device cuda|npu|cpu`): a CUDA index option beside one serves that choice
# an option named for turning something off (`--no_autocast`, `--disable-amp`): with `action="store_false"` its value is
# the negated switch's own state
_NEGATED_OPTION_RE = re.compile(r"(?:no|disable)_(?=[a-z])", re.IGNORECASE)
_DEVICE_TYPE_OPTION_RE = re.compile(
    r"""\b(?:add_argument|option)\(\s*(?:["']-\w+["']\s*,\s*)?["']--?(?:device|device[_-]type|accelerator|"""
    r"""backend[_-]device|devices)["']""")
# options whose string default is the device a trainer is built for (`--accelerator gpu`), never a library's
# own backend option (`--backend gpu`)
_DEVICE_CHOICE_OPTION_RE = re.compile(r"(?:device|accelerator)(?:_type)?", re.IGNORECASE)
# calls that declare a command-line option (argparse, click): a default that is on is a setting switched on (t14l)
_OPTION_MAKERS = frozenset({"add_argument", "option"})
# text arguments of setuptools' / distutils' `setup(...)` (package metadata shown by an index)
_PACKAGE_TEXT_KEYWORDS = frozenset({"keywords", "long_description", "summary"})
_PACKAGE_FILE_KEYWORDS = frozenset({"package_data", "exclude_package_data", "data_files"})
# keyword arguments that carry text even in a call made inside a message (`print(colored(text="...", ...))`)
_MESSAGE_KEYWORDS = _HELP_KEYWORDS | {"msg", "message", "text", "sep", "end", "title", "prefix", "suffix", "fmt",
                                       "format", "header", "headers", "label", "desc", "note", "reason"}


# torch's device type names (`torch.device(...).type`, c10/core/DeviceType.h's lower-case names)
_DEVICE_TYPES = frozenset({"cpu", "cuda", "mps", "xpu", "hpu", "xla", "meta", "npu", "mtia", "ipu", "hip", "ve",
                           "lazy", "vulkan", "maia", "privateuseone"})


def _device_table_cuda_key(node: cst.Dict) -> cst.SimpleString | None:
    """The "cuda" key of a dispatch table keyed by device type that has no "npu" entry: every key a plain string
    naming a torch device type, two or more of them, "cuda" among them (`{"cpu": isotonic_l2_cpu, "cuda":
    isotonic_l2_cuda}` in torchsort, looked up as `isotonic_l2[x.device.type]`). A table of platforms or vendors
    (`{"cuda": CudaPlatform, "rocm": RocmPlatform}`: "rocm" is no device type), one with an NPU entry, a record
    whose CUDA entry is a call (RNG states, memory figures) and a map of names (a string CUDA entry) are not."""
    entries: dict[str, cst.DictElement] = {}
    for el in node.elements:
        if not isinstance(el, cst.DictElement) or not isinstance(el.key, cst.SimpleString):
            return None
        name = el.key.evaluated_value
        if not isinstance(name, str) or name not in _DEVICE_TYPES or name in entries:
            return None
        entries[name] = el
    cuda = entries.get("cuda")
    if len(entries) < 2 or "npu" in entries or cuda is None or isinstance(cuda.value, cst.Call) or _stringy(cuda.value):
        # `{"cpu": torch.get_rng_state(), "cuda": torch.cuda.get_rng_state()}`: a record, the call is the use;
        # `{"cuda": "cuda", "hip": "cuda"}.get(backend, backend)`: a name map that passes other names through
        return None
    return cuda.key if isinstance(cuda.key, cst.SimpleString) else None


# classes whose `from_pretrained` loads no weights: a `torch_dtype` passed to them changes nothing (diffusers' schedulers,
# transformers' tokenizers and processors)
_WEIGHTLESS_CLASS = re.compile(r"(?:Scheduler|Tokenizer|TokenizerFast|Processor|FeatureExtractor)\Z")


def _weightless_loader(func: cst.BaseExpression) -> bool:
    """`DDIMScheduler.from_pretrained(...)`, `CLIPTokenizer.from_pretrained(...)`: a loader of a class without weights."""
    return isinstance(func, cst.Attribute) and func.attr.value in ("from_pretrained", "from_config") \
        and isinstance(func.value, (cst.Name, cst.Attribute)) \
        and bool(_WEIGHTLESS_CLASS.search(dotted(func.value) or ""))


_ROCM_FLAG = re.compile(r"-DUSE_ROCM\b|--offload-arch=|-D__HIP_PLATFORM_|-fno-gpu-rdc\Z|-DHIP\w*\Z")


def _rocm_flags_only(value: cst.BaseExpression) -> bool:
    """A literal list of hipcc flags only (`["-DUSE_ROCM"]`, `["--offload-arch=gfx90a"]`): a ROCm build's setting."""
    literals = _literal_strings(value)
    return bool(literals) and all(_ROCM_FLAG.match(s) for s in literals or [])


def _part_naming(node: cst.ConcatenatedString, symbol: str) -> cst.SimpleString | None:
    """The literal of an implicit concatenation that holds `symbol` whole (`" --env DISPLAY=unix$DISPLAY"\\` then
    `" --env NVIDIA_DRIVER_CAPABILITIES=all"` on the next line: the finding is that line's); None when no single part
    does (the symbol is the joined text)."""
    sides: list[cst.BaseExpression] = [node.left, node.right]
    while sides:
        side = sides.pop(0)
        if isinstance(side, cst.ConcatenatedString):
            sides[:0] = [side.left, side.right]
        elif isinstance(side, cst.SimpleString) and symbol and symbol in str(side.evaluated_value):
            return side
    return None


def _refused_literals(test: cst.BaseExpression, negated: bool = False) -> list[cst.BaseExpression]:
    """The string literals an assert's test refuses: `x != "apex"`, `not x == "apex"`, `x not in ("apex", "O2")`,
    each conjunct of an `and` (the assert fails only when the value is one of them). Not `x == "apex"` (it
    requires the choice) nor an `or` (either side may pass)."""
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        return _refused_literals(test.expression, not negated)
    if isinstance(test, cst.BooleanOperation) and not negated and isinstance(test.operator, cst.And):
        return _refused_literals(test.left) + _refused_literals(test.right)
    if not isinstance(test, cst.Comparison) or len(test.comparisons) != 1:
        return []
    op, right = test.comparisons[0].operator, test.comparisons[0].comparator
    if isinstance(op, (cst.NotEqual, cst.Equal)) and isinstance(op, cst.NotEqual) != negated:
        return [side for side in (test.left, right) if _stringy_value(side)]
    if isinstance(op, (cst.NotIn, cst.In)) and isinstance(op, cst.NotIn) != negated \
            and isinstance(right, (cst.Tuple, cst.List, cst.Set)):
        items = [e.value for e in right.elements]
        return items if items and all(_stringy_value(i) for i in items) else []
    return []


def _only_raises(body: cst.BaseSuite) -> bool:
    """A suite of one `raise` statement."""
    stmts = body.body if isinstance(body, (cst.IndentedBlock, cst.SimpleStatementSuite)) else ()
    if len(stmts) != 1:
        return False
    small = stmts[0].body if isinstance(stmts[0], cst.SimpleStatementLine) else [stmts[0]]
    return len(small) == 1 and isinstance(small[0], cst.Raise)


def _accepted_literals(test: cst.BaseExpression) -> list[cst.BaseExpression]:
    """The string literals a raising `if` accepts: `x not in ("ddp", "apex")` with two distinct names or more, in
    either conjunct of an `and` (the `if` raises only for values outside the list). Not one name (it requires it),
    nor a list naming a device or backend (`("cuda", "cpu")`: a port adds "npu" there)."""
    if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.And):
        return _accepted_literals(test.left) + _accepted_literals(test.right)
    if not isinstance(test, cst.Comparison) or len(test.comparisons) != 1:
        return []
    op, right = test.comparisons[0].operator, test.comparisons[0].comparator
    if isinstance(op, cst.NotIn) and isinstance(right, (cst.Tuple, cst.List, cst.Set)):
        items = [e.value for e in right.elements]
        values = [str(i.evaluated_value) for i in items if isinstance(i, cst.SimpleString)]
        if len(values) == len(items) and len(set(values)) >= 2 and not any(backends_in_text(v.lower()) for v in values):
            return items
    return []


def _stringy_value(node: cst.BaseExpression) -> bool:
    """A string literal, an implicit concatenation of them, or an f-string (its {code} parts still run)."""
    return isinstance(node, (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString))


def _assigns_all(stmt: cst.BaseSmallStatement) -> bool:
    """`__all__ = [...]`, `__all__ += [...]`, `__all__: list[str] = [...]` with only string literals listed."""
    if isinstance(stmt, cst.Assign):
        targets = [t.target for t in stmt.targets]
    elif isinstance(stmt, (cst.AugAssign, cst.AnnAssign)):
        targets = [stmt.target]
    else:
        return False
    value = stmt.value
    return bool(targets) and all(isinstance(t, cst.Name) and t.value == "__all__" for t in targets) and \
        isinstance(value, (cst.List, cst.Tuple)) and \
        all(isinstance(e.value, cst.SimpleString) for e in value.elements)


def _is_none(node: cst.BaseExpression) -> bool:
    return isinstance(node, cst.Name) and node.value == "None"


def _lists_choices(node: cst.Arg) -> bool:
    """`choices=["flash_attn", "minference"]` (argparse, click.Choice): the options a user picks from."""
    return node.keyword is not None and node.keyword.value == "choices" and \
        isinstance(node.value, (cst.List, cst.Tuple, cst.Set))


_STRING_NODES = (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString)


class _MethodCalls(cst.CSTVisitor):
    def __init__(self, name: str) -> None:
        super().__init__()
        self.name, self.found = name, False

    def visit_Call(self, node: cst.Call) -> bool:
        if isinstance(node.func, cst.Attribute) and node.func.attr.value == self.name:
            self.found = True
        return not self.found


def _calls_method(node: cst.CSTNode, name: str) -> bool:
    """Whether `node` holds a call of a method named `name` (`x.cuda(...)`)."""
    finder = _MethodCalls(name)
    node.visit(finder)
    return finder.found


def _base_name(node: cst.BaseExpression) -> str | None:
    """The name an attribute chain starts from (`cfg` for `cfg.test_cfg.fp16`), or None (a call, a subscript)."""
    while isinstance(node, cst.Attribute):
        node = node.value
    return node.value if isinstance(node, cst.Name) else None


def _string_arms(value: cst.BaseExpression) -> list[cst.BaseExpression]:
    """The string literals a value is made of: itself, or the arms of `"a" if c else "b"`."""
    if isinstance(value, _STRING_NODES):
        return [value]
    if isinstance(value, cst.IfExp):
        return _string_arms(value.body) + _string_arms(value.orelse)
    return []


def _literal_strings(value: cst.BaseExpression) -> list[str] | None:
    """The strings a value can only be (`"O1"`, `"-O0" if fast else "-O3"`, `["cublas", "m"]`), or None when it is not made of literals."""
    if isinstance(value, (cst.SimpleString, cst.ConcatenatedString)):
        folded = value.evaluated_value
        return [folded] if isinstance(folded, str) else None
    if isinstance(value, cst.IfExp):
        body, orelse = _literal_strings(value.body), _literal_strings(value.orelse)
        return body + orelse if body is not None and orelse is not None else None
    if isinstance(value, (cst.List, cst.Tuple, cst.Set)) and value.elements:
        # `libraries=["cusolver", "cusparse"]` (pd10): a list of literals names each of them
        parts = [_literal_strings(e.value) for e in value.elements if not isinstance(e, cst.StarredElement)]
        if len(parts) == len(value.elements) and all(p is not None for p in parts):
            return [s for p in parts if p is not None for s in p]
    return None


def _literal_text(value: cst.BaseExpression) -> str | None:
    """The text of a string or number literal (`"gpu"` -> gpu, `8` -> 8); None for anything else."""
    if isinstance(value, cst.SimpleString) and isinstance(value.evaluated_value, str):
        return value.evaluated_value
    if isinstance(value, (cst.Integer, cst.Float)):
        return value.value
    return None


_DEVICE_ENUM = re.compile(r"Device|Backend|Accelerator")


def _enum_member(node: cst.BaseExpression) -> bool:
    """`Device.cuda`, `schema.Device.CUDA`, `DeviceType.Cuda`: a member of a device / backend class (its name starts
    with a capital and says Device, Backend or Accelerator), not a module's or an object's attribute (`torch.cuda`,
    `args.cuda`), nor another enum's CUDA member (onnxruntime's `ExecutionProvider.CUDA`, codegen's
    `DispatchKey.CUDA`: read on the precision trees, t14v)."""
    if not isinstance(node, cst.Attribute):
        return False
    owner = node.value
    name = owner.value if isinstance(owner, cst.Name) else owner.attr.value if isinstance(owner, cst.Attribute) \
        else ""
    return name[:1].isupper() and not name.isupper() and _DEVICE_ENUM.search(name) is not None


def _option_picks_device(name: str, default: cst.BaseExpression | None, kind: cst.BaseExpression | None,
                         action: cst.BaseExpression | None = None) -> bool:
    """The default of a command-line option named for a CUDA device (`--cuda`, `--gpu_id`, `--use_cuda`) puts the run
    on one (t14v, labelling policy item 7): a device index (`default=0`, `default="0,1"`) or a switch that is on
    (`default=True`, `type=bool, default=1`). Not `-1` / None / False / "" (the CPU or the user's choice), not a
    count (`--ngpu`, `--num_gpus`: no option_only rule names them). `action="store_false"` with no default is a
    switch that is on (awd-lstm-lm's `--cuda`, test22). A switch that turns CUDA off (`--no-cuda`,
    `--disable_gpu`) given as `action="store_true"` with no default or `default=False` leaves CUDA on (t14x)."""
    if name.startswith(("no_", "disable_", "nocuda", "nogpu")):
        store_true = isinstance(action, cst.SimpleString) and action.evaluated_value == "store_true"
        off = default is None or isinstance(default, cst.Name) and default.value == "False"
        return store_true and off
    if default is None:    # `add_argument("--cuda", action="store_false")`: a switch that is on unless given
        return isinstance(action, cst.SimpleString) and action.evaluated_value == "store_false"
    if isinstance(default, cst.Name):
        return default.value == "True"
    switch = name.startswith(("use_", "enable_")) or isinstance(kind, cst.Name) and kind.value == "bool"
    if isinstance(default, cst.Integer):
        return not switch or default.value != "0"
    if isinstance(default, cst.SimpleString) and isinstance(default.evaluated_value, str) and not switch:
        text = default.evaluated_value.replace(" ", "")
        return bool(text) and all(part.isdigit() for part in text.split(","))
    return False


# `impl == 'cuda'` / `"cuda" == impl`: a name tested for a string literal (_choice_read)
_COMPARED_LITERAL = re.compile(r"""\b([A-Za-z_]\w*)\s*==\s*['"]([^'"]*)['"]|['"]([^'"]*)['"]\s*==\s*([A-Za-z_]\w*)\b""")


def _literal_on(value: cst.BaseExpression) -> bool:
    """The literal True or a non-zero integer (`cuda=1` in learn2learn's example mains), also as a dataclass field's
    default (`flash_attn: bool = field(default=True, metadata=...)`, SpatialVLA's ModelArguments; tk41)."""
    if isinstance(value, cst.Call) and (dotted(value.func) or "").rsplit(".", 1)[-1] in ("field", "Field"):
        value = next((a.value for a in value.args if a.keyword is not None and a.keyword.value == "default"), value)
    return isinstance(value, cst.Name) and value.value == "True" or \
        isinstance(value, cst.Integer) and value.evaluated_value != 0


def _cupy_launch_keywords(call: cst.Call) -> bool:
    """A call given `grid=`, `block=` and `args=`: the keywords of CuPy's kernel launch (cupy.cuda.Function)."""
    keywords = {a.keyword.value for a in call.args if a.keyword is not None}
    return {"grid", "block", "args"} <= keywords


def _kernel_label(func: cst.BaseExpression) -> str:
    """How a launched kernel object is named in a message: `add_kernel`, `self.kernel`, `cupy_launch(...)`."""
    if isinstance(func, cst.Call):
        return f"{dotted(func.func) or 'kernel'}(...)"
    return dotted(func) or "kernel"


def _starts_line(call: cst.Call, index: int) -> bool:
    """Whether argument `index` of `call` begins a line of its own (a newline before it inside the parentheses)."""
    before = call.whitespace_before_args if index == 0 else getattr(call.args[index - 1].comma, "whitespace_after", None)
    return isinstance(before, cst.ParenthesizedWhitespace)


# a file name with an extension, a path or a URL (`sam2.1_hiera_tiny-fp16.safetensors`, `https://...`)
_FILE_TEXT = re.compile(r"[/\\]|\.[A-Za-z][A-Za-z0-9]{1,11}$")


def _file_record(value: cst.BaseExpression) -> bool:
    """A dict literal whose every value is a string naming a file, a path or a URL: an entry of a table of model files
    per precision (ComfyUI-RMBG's `SAM2_MODELS[name]["fp16"]`, heldout25, policy (a)); it switches nothing, the code
    that picks the entry does. A DeepSpeed-style section (`{"enabled": "auto"}`) has values that name no file."""
    if not isinstance(value, cst.Dict) or not value.elements:
        return False
    return all(isinstance(e, cst.DictElement) and isinstance(e.value, cst.SimpleString)
               and isinstance(e.value.evaluated_value, str) and _FILE_TEXT.search(e.value.evaluated_value)
               for e in value.elements)


def _name_value(node: cst.BaseExpression) -> str | None:
    return node.value if isinstance(node, cst.Name) else None


def _switched_off(value: cst.BaseExpression, name: str) -> bool:
    """A `keyword` setting given no switch of its own: False / None / 0, an empty container, or the same name passed
    through (`f(use_fp8=use_fp8)`, `self.use_fp8 = use_fp8`: the finding is where the value is made)."""
    if isinstance(value, cst.Name):
        return value.value in ("False", "None", name)
    if (attr := self_attr(value)) is not None:
        return attr.value == name
    if isinstance(value, cst.Dict) and any(
            isinstance(e, cst.DictElement) and isinstance(e.key, cst.SimpleString) and e.key.evaluated_value == "enabled"
            and (_switched_off(e.value, "enabled") or isinstance(e.value, cst.SimpleString) and
                 e.value.evaluated_value == "auto") for e in value.elements):
        # `"fp16": {"enabled": False, ...}` (DeepSpeed-style section switched off); `{"enabled": "auto"}` defers to
        # the HF Trainer's own fp16 / bf16 flag, reported where that is set (LLaMA-Factory's web UI; tq45b)
        return True
    if _file_record(value):
        return True     # `"fp16": {"model_url": ".../sam2-fp16.safetensors", "filename": ...}`: names files (pd22)
    if isinstance(value, cst.Tuple) and len(value.elements) == 2 and isinstance(value.elements[0].value, cst.SimpleString) \
            and value.elements[0].value.evaluated_value == "BOOLEAN" and isinstance(value.elements[1].value, cst.Dict):
        # a ComfyUI node input `"use_xformers": ("BOOLEAN", {"default": False})`: a widget the user may switch on,
        # set by its default like an argparse option's (t20c, LVCDWrapper's loader)
        default = next((e.value for e in value.elements[1].value.elements if isinstance(e, cst.DictElement) and
                        isinstance(e.key, cst.SimpleString) and e.key.evaluated_value == "default"), None)
        return default is None or _switched_off(default, name)
    if isinstance(value, (cst.List, cst.Tuple, cst.Set, cst.Dict)):
        return not value.elements
    if isinstance(value, cst.Comparison):
        return True     # `fp16=dtype == torch.float16` reads a choice made elsewhere (issue 11: comparisons read)
    if isinstance(value, cst.IfExp) and {_name_value(value.body), _name_value(value.orelse)} == {"True", "False"}:
        # `fp16=True if dtype == torch.float16 else False`: the test as a bool, read like the test itself (Helios'
        # VideoAlign inference copying its dtype into TrainingConfig's flags; tq37, tuned on heldout40)
        return _switched_off(value.test, name)
    if isinstance(value, cst.Call) and isinstance(value.func, (cst.Name, cst.Attribute)):
        # `kwargs.get("use_flash_attn", False)`, `getattr(args, "bf16", True)`, `self.fp16_enabled()`: the same
        # setting read and passed on; `field(default=None)` (a dataclass field) is off when its default is
        callee = value.func.value if isinstance(value.func, cst.Name) else value.func.attr.value
        keys = [a.value for a in value.args[:2] if isinstance(a.value, cst.SimpleString)]
        if callee == name or (callee in ("get", "getattr", "pop") and any(k.evaluated_value == name for k in keys)):
            return True
        if callee.startswith("should_") and callee.endswith("_" + name.removeprefix("use_")):
            # `fp16=comfy.model_management.should_use_fp16()` (WAS node suite, t21c): a decision made per device
            # by the function called (ComfyUI's model management knows the NPU), passed on, not chosen here
            return True
        if callee in ("field", "Field"):
            default = next((a.value for a in value.args if a.keyword is not None and a.keyword.value == "default"),
                           None)
            return default is None or _switched_off(default, name)
    return isinstance(value, cst.Integer) and value.value == "0"


def _own_name(read: object, name: str) -> bool:
    """Whether a setting read back as `read` is the setting `name` (`use_flash_attention` for itself and for
    `use_flash_attention_value`)."""
    return isinstance(read, str) and (name == read or name.startswith(read + "_"))


# a name that holds (or a function that gives) an availability probe's answer: `flash_attn_available`,
# `is_xformers_available`, `is_flash_attn_2_available`
_PROBE_ANSWER = re.compile(r"(?i)^(?:is_|has_)?\w*_available$")


# look-ups of a shared library by its system name (`find_library("cudart")`): what they hand back is no project path
_LIBRARY_LOOKUPS = frozenset({"ctypes.util.find_library"})


def _any_value_matches(values: set[str], wanted: set[str]) -> bool:
    """`when: {arg: {values: [...]}}`: exact values, or glob patterns (`"bitsandbytes*"` for the requirement
    string `"bitsandbytes != 0.42.0"`)."""
    if values & wanted:
        return True
    patterns = [w for w in wanted if "*" in w or "[" in w]
    return any(fnmatch.fnmatchcase(v, p) for v in values for p in patterns)


def _stringy(node: cst.CSTNode) -> bool:
    if isinstance(node, _STRING_NODES):
        return True
    return isinstance(node, cst.BinaryOperation) and isinstance(node.operator, (cst.Add, cst.Modulo)) and (
        _stringy(node.left) or (isinstance(node.operator, cst.Add) and _stringy(node.right)))


def _visit_code_operands(node: cst.BinaryOperation, visitor: MatchVisitor) -> None:
    """Visit the non-string operands of a folded string expression (`"cuda:" + str(torch.cuda.current_device())`)."""
    for side in (node.left, node.right):
        if isinstance(side, cst.BinaryOperation) and _stringy(side):
            _visit_code_operands(side, visitor)
        elif not isinstance(side, _STRING_NODES):
            walk(side, visitor)


_CUDA_WORDS = ("cuda", "gpu", "nvidia", "cudagraph")


def _neutral_condition(value: cst.BaseExpression) -> bool:
    """A comparison or a boolean combination of them (`level == PIECEWISE and not enforce_eager`) whose names and
    strings name no CUDA / GPU."""
    node = value
    while isinstance(node, cst.UnaryOperation):
        node = node.expression
    if not isinstance(node, (cst.Comparison, cst.BooleanOperation)):
        return False
    words: list[str] = []
    stack: list[cst.CSTNode] = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, cst.Name):
            words.append(n.value.lower())
        elif isinstance(n, cst.SimpleString):
            words.append(n.value.lower())
        stack.extend(children(n))
    return not any(w in word for word in words for w in _CUDA_WORDS)
