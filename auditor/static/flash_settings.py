"""Boolean settings named flash_attn (t35b, session 34; tuned on heldout36's python-audio-separator). Roformer
configs carry `'flash_attn': True` / `config.get('flash_attn', True)` / a type table's `'flash_attn': bool`, a switch
whose only effect is `Attend` calling torch's `F.scaled_dot_product_attention`, which runs on Ascend. The string
there is the name of an on/off setting, not an attention implementation chosen by name (NPU386's construct): where
the switch does turn on a CUDA package, the import or call it guards is reported on its own line. A string that is a
value (`BACKEND = "flash_attn"`, `choices=["sdpa", "flash_attn"]`, `== "flash_attn"`) or a key mapped to code
(`{"flash_attn": flash_attn_func}`, `{"flash_attn": flash_attn}` with the package imported) keeps its finding, and so
does the switch in a file that names transformers' `attn_implementation` (pd56's control: there it picks
"flash_attention_2", the setting that is the choice). A flash_attn string in a set / list of the file's own field
names names that field (tq43, `option_name_sets`), in any file."""
from __future__ import annotations

import ast

from auditor.static.astutil import ast_dotted, module_nodes
from auditor.static.llama_cpp_options import FLASH_OPTION_NAMES, TRANSFORMERS_CHOICE

_RULE = "flash-attention-implementation-string"
_BOOL_TEXTS = frozenset({"true", "false", "1", "0", "yes", "no", "on", "off"})
_LOOKUPS = frozenset({"get", "setdefault", "pop"})     # dict reads with a default: `config.get("flash_attn", True)`


def _key(node: ast.AST | None) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) \
        and node.value in FLASH_OPTION_NAMES else None


def _boolean(node: ast.AST | None) -> bool:
    """True / False, the type `bool`, or an on/off word (`'false'`, `'1'`: a config file's text)."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, bool) or isinstance(node.value, str) and node.value.lower() in _BOOL_TEXTS
    return isinstance(node, ast.Name) and node.id == "bool"


def _lookup_key(call: ast.Call) -> ast.expr | None:
    """The key of `x.get("flash_attn", <bool>)` / `getattr(cfg, "flash_attn", <bool>)`: a setting read with an
    on/off default."""
    func = call.func
    if isinstance(func, ast.Attribute) and func.attr in _LOOKUPS and len(call.args) == 2:
        key, default = call.args
    elif isinstance(func, ast.Name) and func.id == "getattr" and len(call.args) == 3:
        key, default = call.args[1:]
    else:
        return None
    return key if _key(key) and _boolean(default) else None


def _forwarded(value: ast.AST, key: str, code: set[str]) -> bool:
    """`'flash_attn': self.flash_attn` / `config.get('flash_attn', True)`: the setting passed on under its own name
    (a module bound by an import or a function the file defines, `{"flash_attn": flash_attn}`, is an
    implementation)."""
    if isinstance(value, ast.Call):
        return _lookup_key(value) is not None
    name = ast_dotted(value)
    if name is None or name in code:
        return False
    return name.rsplit(".", 1)[-1] == key


def flash_setting_keys(tree: ast.AST) -> set[tuple[int, int]]:
    """(line, column) of flash_attn strings that name a boolean setting: dict keys whose value is on/off (or the
    setting of the same name passed on), keys read with an on/off default, keys assigned True / False."""
    nodes = module_nodes(tree)
    code = {(a.asname or a.name).split(".", 1)[0] for n in nodes if isinstance(n, (ast.Import, ast.ImportFrom))
            for a in n.names}
    code |= {n.name for n in nodes if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}
    spots: list[ast.expr] = []
    for n in nodes:
        if isinstance(n, ast.Dict):
            spots += [k for k, v in zip(n.keys, n.values)
                      if k is not None and (key := _key(k)) and (_boolean(v) or _forwarded(v, key, code))]
        elif isinstance(n, ast.Call):
            spots += [k] if (k := _lookup_key(n)) is not None else []
        elif isinstance(n, ast.Assign) and _boolean(n.value):
            spots += [t.slice for t in n.targets if isinstance(t, ast.Subscript) and _key(t.slice)]
    return {(s.lineno, s.col_offset) for s in spots}


def _field_names(nodes: list[ast.AST]) -> set[str]:
    """The names of the fields a class of the file declares in its body (`flash_attention: bool = HfArg(...)`,
    `vllm: Optional[bool] = None`): a dataclass's / options class's settings."""
    names: set[str] = set()
    for n in nodes:
        if isinstance(n, ast.ClassDef):
            for s in n.body:
                targets = s.targets if isinstance(s, ast.Assign) else [s.target] if isinstance(s, ast.AnnAssign) else []
                names.update(t.id for t in targets if isinstance(t, ast.Name))
    return names


def option_name_sets(tree: ast.AST) -> set[tuple[int, int]]:
    """(line, column) of flash_attn strings in a set / list / tuple of the names of the file's own fields (tq43, tuned on
    heldout48's LLMBox: `_model_specific_arguments = {"vllm": {"vllm", "prefix_caching", "flash_attention", "gptq",
    ...}}`, the option names a log line keeps per backend, beside the `flash_attention: bool` field). Half or more
    of the display's strings, the flash one among them, name fields a class of the file declares: the string names
    the field, it chooses no implementation (a `choices=["sdpa", "flash_attention_2"]` list names no field)."""
    nodes = module_nodes(tree)
    fields = _field_names(nodes)
    if not fields & FLASH_OPTION_NAMES:
        return set()
    spots: list[ast.expr] = []
    for n in nodes:
        if isinstance(n, (ast.Set, ast.List, ast.Tuple)) and len(n.elts) >= 2 and all(
                isinstance(e, ast.Constant) and isinstance(e.value, str) for e in n.elts):
            named = [e for e in n.elts if isinstance(e, ast.Constant) and e.value in fields]
            if 2 * len(named) >= len(n.elts):
                spots += [e for e in named if _key(e)]
    return {(s.lineno, s.col_offset) for s in spots}


def drop_flash_setting_keys(findings: list, tree: ast.AST, text: str) -> list:
    """NPU386 on a flash_attn string that names an on/off setting or a field of the file, dropped (the wrong
    construct)."""
    if not any(f.name == _RULE and f.symbol in FLASH_OPTION_NAMES for f in findings):
        return findings
    keys = option_name_sets(tree)
    if TRANSFORMERS_CHOICE not in text:
        keys |= flash_setting_keys(tree)
    if not keys:
        return findings
    return [f for f in findings if not (f.name == _RULE and f.symbol in FLASH_OPTION_NAMES
                                        and (f.line, f.col - 1) in keys)]


# r2d (session 36; TUNED on heldout39's fastsdcpu AuraSR): NPU825's switch default in a file whose flash path is
# plain SDPA. lucidrains-style modules (AuraSR's `Transformer(..., flash_attn=True)` -> `Attention(flash=...)` ->
# `Attend.flash_attn`, which calls `F.scaled_dot_product_attention`) switch to torch's SDPA; NPU825's concern is a
# switch that turns on a flash-attn / xformers import or CUDA SDPA backend choices (sdp_kernel by device capability).
# A file that calls `scaled_dot_product_attention` itself and names none of those has nothing CUDA behind the switch:
# SDPA runs on Ascend (the rule's own substitution), so the default is dropped. A file that imports flash-attn /
# xformers / another attention package, or names a backend chooser or the device's properties, keeps it.
_SWITCH_RULE = "flash-attention-switch-default-on"
_CUDA_ATTENTION_PACKAGES = ("flash_attn", "xformers", "sageattention", "flash_attn_interface", "apex", "triton",
                            "spas_sage_attn", "flashinfer")
_CUDA_SDPA_CHOICES = frozenset({"sdp_kernel", "sdpa_kernel", "SDPBackend", "get_device_properties",
                                "enable_flash_sdp", "enable_mem_efficient_sdp", "enable_math_sdp",
                                "get_device_capability"})


def _switch_selects_plain_sdpa(tree: ast.AST) -> bool:
    calls_sdpa = False
    for n in module_nodes(tree):
        if isinstance(n, ast.Import) and any(a.name.split(".", 1)[0] in _CUDA_ATTENTION_PACKAGES for a in n.names):
            return False
        if isinstance(n, ast.ImportFrom) and (n.level or (n.module or "").split(".", 1)[0] in _CUDA_ATTENTION_PACKAGES
                                              or any(a.name in _CUDA_SDPA_CHOICES for a in n.names)):
            # (a relative import may bring the attention module the switch reaches: unknown, keep)
            return False
        name = n.attr if isinstance(n, ast.Attribute) else n.id if isinstance(n, ast.Name) else None
        if name in _CUDA_SDPA_CHOICES:
            return False
        if isinstance(n, ast.Call) and (ast_dotted(n.func) or "").endswith("scaled_dot_product_attention"):
            calls_sdpa = True
    return calls_sdpa


def drop_plain_sdpa_switches(findings: list, tree: ast.AST) -> list:
    """NPU825 in a file whose flash path is torch's plain SDPA and nothing CUDA-specific, dropped (see above)."""
    if not any(f.name == _SWITCH_RULE for f in findings) or not _switch_selects_plain_sdpa(tree):
        return findings
    return [f for f in findings if f.name != _SWITCH_RULE]


_FLASH_SWITCH = "flash-attention-switch"        # NPU357 (rules/settings.yaml)


def _cuda_probe(node: ast.AST) -> bool:
    return isinstance(node, ast.Call) and ast_dotted(node.func) in ("torch.cuda.is_available", "cuda.is_available")


def _cuda_gated_defaults(tree: ast.AST) -> list[tuple[str, int, int]]:
    """(parameter, first line, last line) of the defaults of switch parameters that their function reads only as an
    operand of an `and` beside `torch.cuda.is_available()` (TDC's ScGPTConfig: `self.use_flash_attention =
    self.use_fast_transformer and torch.cuda.is_available() and use_flash_attention`): without CUDA the value is False
    whatever the default, so the default switches nothing on on Ascend (tq56b)."""
    out = []
    for fn in module_nodes(tree):
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        args = fn.args
        positional = args.posonlyargs + args.args
        pairs = list(zip(positional[len(positional) - len(args.defaults):], args.defaults)) + \
            [(a, d) for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None]
        if not pairs:
            continue
        body = [n for stmt in fn.body for n in ast.walk(stmt)]
        if any(isinstance(n, ast.Name) and n.id in ("locals", "vars") for n in body):
            continue
        gated = {id(op) for n in body if isinstance(n, ast.BoolOp) and isinstance(n.op, ast.And)
                 and any(_cuda_probe(op) for op in n.values) for op in n.values if isinstance(op, ast.Name)}
        for arg, default in pairs:
            loads = [n for n in body if isinstance(n, ast.Name) and n.id == arg.arg and isinstance(n.ctx, ast.Load)]
            if loads and all(id(n) in gated for n in loads):
                out.append((arg.arg, default.lineno, default.end_lineno or default.lineno))
    return out


def drop_cuda_gated_switches(findings: list, tree: ast.AST) -> list:
    """NPU357 on a switch parameter's default that its function reads only ANDed with `torch.cuda.is_available()`
    (`_cuda_gated_defaults`), dropped: on Ascend the switch is off."""
    if not any(f.name == _FLASH_SWITCH for f in findings):
        return findings
    spans = _cuda_gated_defaults(tree)
    return [f for f in findings if f.name != _FLASH_SWITCH or not any(
        f.symbol == name and lo <= f.line <= hi for name, lo, hi in spans)]
