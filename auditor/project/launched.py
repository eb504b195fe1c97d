"""Launch lines that run an attention wrapper of the tree (t15k, issue 15): FastChat's `train_mem.py` and its many
copies (LLaVA, Video-LLaVA, ShareGPT4V, MoE-LLaVA ...) are a few lines that patch FlashAttention or xFormers into the
model and then call the project's `train()`; a script picks the CUDA attention by launching that wrapper instead of
`train.py` (`deepspeed videollava/train/train_mem.py ...`). The same two steps as `make` and `cmake` calls
(auditor/project/makefile.py, cmake_calls.py), because the wrapper is another file of the tree:

1. the shell reader records the Python file a launch line runs (`python x.py`, `torchrun ... x.py`, `deepspeed x.py`,
   `accelerate launch x.py`) with its folder in the file's summary (`launched_scripts`);
2. after every file is read, `apply_launched_wrappers` reads that file (from the tree's root, then from the calling
   file's folder) and reports the launch line when the file is a wrapper: short (at most WRAPPER_LINES lines of
   code) with an attention finding that is not information. A long training script with a FlashAttention path is
   not reported here: its own lines are where the port happens. Nothing is run.
"""
from __future__ import annotations

import ast
import dataclasses
import fnmatch
import os
import posixpath
import re
from pathlib import Path
from typing import Any, Callable

import yaml

from auditor.findings import FileResult, Finding
from auditor.project.makefile import _join, add_call_findings, call_finding, recorded_calls, unsuppressed
from auditor.project.setting_reads import WALK_SKIP_DIRS
from auditor.astnodes import is_main_guard, module_nodes_of, walk_list

SUMMARY_KEY = "launched_scripts"
WRAPPER_LINES = 30
_MAX_BYTES = 64 * 1024
_MAX_OPTIONS = 128
_MAX_SCRIPT_BYTES = 512 * 1024
_DEFAULT_CATEGORIES = ("attention", "third_party")     # third_party: error / warning findings only (t18b)
_ALIASES = "--aliases"       # option_defaults' key for argparse flag -> dest (never a Python name)
_NODES = "--nodes"           # option_defaults' key for option -> the expression of its default (never a Python name)


_MODULE_RE = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*")
# `python -m torch.distributed.launch train.py`: launcher modules whose own argument is the launched file
_LAUNCHER_MODULES = ("torch.distributed.launch", "torch.distributed.run")


def _launched_word(words: list[str], cwd: str | None) -> tuple[dict[str, Any], int] | None:
    """launched_call with the index in `words` of the word that names the launched file or module."""
    caller = cwd
    if cwd is None or cwd.startswith("/"):
        cwd = ""
    for i, w in enumerate(words):
        if w == "-c":
            return None                   # a program text: not a file of the tree
        if w == "-m":
            module = words[i + 1] if i + 1 < len(words) else ""
            if module in _LAUNCHER_MODULES:
                continue                  # its own arguments name the file
            # `python -m train.sample`, `python -m quantize_llama.finetune_e2e_llama` (t17a): the module's file,
            # found from where the script runs as a file path is; a module not in the tree (pip, venv) gives nothing
            if not _MODULE_RE.fullmatch(module):
                return None
            path = _join(cwd, module.replace(".", "/") + ".py")
            return None if path is None else ({"file": path}, i + 1)
        if w.endswith(".py") and not w.startswith("-") and "=" not in w:
            # `$(dirname "$0")/train.py` (SegmenTron's dist_train.sh): a path from the calling script's own folder
            own = _SCRIPT_FOLDER_RE.match(w)
            w = w[own.end():] if own else w
            if "$" in w or "{" in w or "%" in w or w.startswith(("/", "~")):
                return None
            path = _join("" if own else cwd, w) or (None if own else climbing_path(caller, w))
            return None if path is None else ({"file": path, "own_folder": True} if own else {"file": path}, i)
        variable = _SCRIPT_VAR_RE.fullmatch(w)
        if variable and (i == 0 or not words[i - 1].startswith("-") or "=" in words[i - 1]
                         or words[i - 1] in _PYTHON_FLAGS) and not any(x.endswith(".py") for x in words[i + 1:]):
            # `python -m torch.distributed.launch ... ${PT_SCRIPT} --launcher=pytorch`: the script is the caller's
            # argument; launch_imports reads which of the tree's scripts it can be from the options passed (pd37)
            return {"file": "", "script_var": variable.group(1)}, i
    return None


def climbing_path(cwd: str | None, word: str) -> str | None:
    """`../drivers/run_ann.py` (ANCE's commands/*.sh), `source ../common/util.sh` (Triton model analyzer's QA tests):
    a path above where the script started, run from the script's own folder; resolve_launched reads it from the
    caller's folder only, never above the tree's top (tp37, tp50b)."""
    if not word.startswith("../") or (cwd is not None and cwd.startswith("/")):
        return None
    return posixpath.normpath(posixpath.join(cwd or "", word))


_SCRIPT_FOLDER_RE = re.compile(r"""^(?:\$\(dirname |`dirname )["']?\$\{?(?:0|BASH_SOURCE(?:\[0\])?)\}?["']?[)`]/""")
# a word that is one variable (`${PT_SCRIPT}`, `$SCRIPT`), and python's own flags that take no value (`python -u`)
_SCRIPT_VAR_RE = re.compile(r"""["']?\$\{?([A-Za-z_]\w*)\}?["']?""")
_PYTHON_FLAGS = frozenset({"-u", "-B", "-O", "-OO", "-E", "-s", "-S", "-I"})


def launched_call(words: list[str], cwd: str | None) -> dict[str, Any] | None:
    """The `.py` file a launch runs (the words after the launcher), relative to where the script started; after a
    `cd` to an absolute or unknown folder (`cd /path/to/Video-LLaVA`), relative to the tree's root. A module run with
    `-m` is the file of that dotted path."""
    found = _launched_word(words, cwd)
    return None if found is None else found[0]


def launched_call_options(words: list[str], cwd: str | None) -> tuple[dict[str, Any], int] | None:
    """launched_call with the options the launch passes to the file (`--attn_type sdpa`: a default they set is not
    the launched file's), and the index in `words` of the file's word (t15m)."""
    found = _launched_word(words, cwd)
    if found is None:
        return None
    call, at = found
    # `--attn_type=sdpa`, and argparse short aliases (`-b vllm` for `--backend`: option_defaults maps them)
    options = sorted({o.lstrip("-").split("=", 1)[0] for o in words[at + 1:]
                      if o.startswith("-") and len(o.lstrip("-")) > 0 and not o[1:2].isdigit()})
    call["options"] = options[:_MAX_OPTIONS]
    pairs = option_pairs(words[at + 1:])
    # the options given the value 1 (`--num-gpus 1`, `--world_size=1`): a launch that asks for one rank (tp54a)
    ones = sorted({name for name, value in pairs if value == "1"})
    if ones:
        call["ones"] = ones[:_MAX_OPTIONS]
    values = option_values(pairs)
    if values:
        call["values"] = values
    configs = _config_files(words[at + 1:], cwd)
    if configs:
        call["configs"] = configs
    return call, at


# a name-like option value (`--arch resdcn_18`, `--model=dla_34`): not a number, path, list or expansion
_NAME_VALUE_RE = re.compile(r"[A-Za-z_][\w.-]{0,63}")


def name_value(value: str) -> bool:
    return _NAME_VALUE_RE.fullmatch(value) is not None


def option_pairs(words: list[str]) -> list[tuple[str, str]]:
    """(option, value) of each long option of a launch's words, the option as spelled without its dashes: `--x=v`,
    and `--x v` (the next word, whatever it is: a flag's pair is read by what the caller keeps)."""
    out = []
    for i, word in enumerate(words):
        if not word.startswith("--"):
            continue
        name, eq, value = word[2:].partition("=")
        if name:
            out.append((name, value if eq else words[i + 1] if i + 1 < len(words) else ""))
    return out


def option_values(pairs: list[tuple[str, str]]) -> dict[str, str]:
    """{option: value} of the name-like values a launch passes (`--arch resdcn_18` -> arch: resdcn_18, `-` read as
    `_`): what a script's registry of implementations may be keyed by (launch choices, registry_choices.py)."""
    out: dict[str, str] = {}
    for name, value in pairs:
        if len(out) >= _MAX_OPTIONS:
            break
        if name_value(value):
            out.setdefault(_option_name(name), value)
    return out


# options that name the YAML file a script reads its settings from (`--config configs/train.yaml`, Wonder3D)
_CONFIG_OPTIONS = ("config", "cfg", "config_file", "config-file", "config_path", "config-path", "cfg_file",
                   "cfg-file")


def _config_files(words: list[str], cwd: str | None) -> list[str]:
    """The tree paths of the YAML files passed to a launched script with a config option (t18b): `--config x.yaml`,
    `--config=x.yaml`; a value that is an expansion or an absolute path is not a file of the tree."""
    out = []
    for i, w in enumerate(words):
        name, eq, value = w.lstrip("-").partition("=")
        if not w.startswith("-") or name not in _CONFIG_OPTIONS:
            continue
        if not eq:
            value = words[i + 1] if i + 1 < len(words) else ""
        if not value.endswith((".yaml", ".yml")) or any(c in value for c in "${}%*") or value.startswith(("/", "~")):
            continue
        path = _join("" if cwd is None or cwd.startswith("/") else cwd, value)
        if path is not None:
            out.append(path)
    return out[:4]


def _code_lines(text: str) -> int:
    return sum(1 for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#"))


def wrapper_fact(data: bytes, findings) -> bool:
    """A Python file that is a wrapper when launched: short (at most _MAX_BYTES, WRAPPER_LINES lines of code) with an
    attention finding that is not information. Its per-file fact (`wrapper` in the worker's tree facts,
    project_imports.with_facts), so that the pass below reads no file the worker has read."""
    return (attention_hit(findings) is not None and len(data) <= _MAX_BYTES
            and _code_lines(data.decode("utf-8", errors="replace")) <= WRAPPER_LINES)


def launch_facts(data: bytes, findings, parsed: ast.Module | None = None) -> dict[str, Any]:
    """What the launch passes below need from a Python file a script may launch, computed once in the worker
    (project_imports.with_facts, FORMAT 8) so that a run reads no file the worker has read: `patches`, the patches a
    short wrapper imports and calls (_patch_calls); `defaults`, the attention findings its option defaults select, as
    [line, col, code, option] (default_choices), with `aliases`, its short option names. `parsed`: the engine's tree
    of the same text (its UTF-8 decoding), so that it is not parsed a second time."""
    out: dict[str, Any] = {}
    if len(data) > _MAX_SCRIPT_BYTES:
        return out
    text = data.decode("utf-8", errors="replace")
    tree = _once(text, parsed)        # one parse for the three readings below, and none when no reading needs it
    if len(data) <= _MAX_BYTES and b"import" in data and _code_lines(text) <= WRAPPER_LINES:
        patches = _patch_calls(tree())
        if patches:
            out["patches"] = [list(p) for p in patches]
    choices, aliases = _default_choices(tree, findings)
    if choices:
        out["defaults"] = [[f.line, f.col, f.code, name] for f, name in choices]
        out["aliases"] = aliases
    switched, switch_aliases = _switched_choices(tree, findings)
    if switched:
        out[SWITCHED] = [[f.line, f.col, f.code, name] for f, name in switched]
        out.setdefault("aliases", switch_aliases)
    guards = _setting_guards(tree, findings)
    if guards:
        out["guards"] = guards
    probe = probe_hit(findings) if len(data) <= _MAX_BYTES and _code_lines(text) <= WRAPPER_LINES else None
    if probe is not None:
        out[PROBE] = [probe.line, probe.code]       # tp53a: a short helper that queries NVIDIA's driver tools
    if _HF_ARGS_RE.search(text) and _names_hf_args(tree()):
        out[HF_ARGS] = True         # tq48b / review48 item 6: the file builds HF's TrainingArguments options
    return out


HF_ARGS = "hf_args"
_HF_ARGS_RE = re.compile(r"\b(?:HfArgumentParser|\w*TrainingArguments)\b")


def _names_hf_args(tree: ast.Module | None) -> bool:
    """The code (not a comment or a string) names `HfArgumentParser` or a `*TrainingArguments` class: imported,
    called or subclassed."""
    if tree is None:
        return False
    for node in module_nodes_of(tree, (ast.Name, ast.Attribute, ast.alias)):
        name = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else \
            node.name.rsplit(".", 1)[-1]
        if _HF_ARGS_RE.fullmatch(name):
            return True
    return False


def _setting_path(node: ast.expr) -> str | None:
    """`cfg.enable_xformers` -> "enable_xformers", `self.cfg.model.use_flash` -> "cfg.model.use_flash": the
    attribute chain after its root name (None for anything else)."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    return ".".join(reversed(parts)) if parts and isinstance(node, ast.Name) else None


def _setting_guards(parsed: Callable[[], ast.Module | None], findings) -> list[list[Any]]:
    """[line, col, code, setting, value] for each attention finding in the body of an `if cfg.x:` (value True) or
    `if cfg.x == "xformers":` test (t18b, Wonder3D's `if cfg.enable_xformers_memory_efficient_attention:`): the
    setting a config file passed at launch may turn on. The `else` branch is not taken (its setting is unknown)."""
    hits = [f for f in findings if f.category == "attention"]
    if not hits:
        return []
    tree = parsed()
    out: list[list[Any]] = []
    for node in module_nodes_of(tree, ast.If) if tree is not None else ():
        test, value = node.test, True
        if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], (ast.Eq, ast.Is)):
            ok, value = _constant(test.comparators[0])
            if not ok or value is None:
                continue
            test = test.left
        path = _setting_path(test)
        if path is None:
            continue
        out += [[f.line, f.col, f.code, path, value] for f in hits if any(_within(b, f.line, f.col) for b in node.body)]
    return sorted(out, key=lambda g: (g[0], g[1]))[:_MAX_OPTIONS]


def _parse(text: str) -> ast.Module | None:
    try:
        return ast.parse(text)
    except (SyntaxError, ValueError, RecursionError):
        return None


def _once(text: str, parsed: ast.Module | None = None) -> Callable[[], ast.Module | None]:
    """The text's `ast` tree, parsed on the first call and kept for the next ones (None: it does not parse);
    `parsed`, the tree of `text` a caller already has."""
    held: list[ast.Module | None] = [] if parsed is None else [parsed]

    def tree() -> ast.Module | None:
        if not held:
            held.append(_parse(text))
        return held[0]
    return tree


def _known(by_rel: dict[str, FileResult] | None, path: Path, root: Path) -> FileResult | None:
    """The run's result for a file of the tree (None: not in the run, or outside `root`)."""
    if not by_rel:
        return None
    try:
        return by_rel.get(path.relative_to(root).as_posix())
    except ValueError:
        return None


def _facts(known: FileResult | None) -> dict | None:
    """The worker's tree facts of a launched file of the tree (None: read the file)."""
    facts = known.summary.get("tree") if known is not None and known.summary else None
    return facts if isinstance(facts, dict) else None


PROBE = "probe"
# the rules whose findings query NVIDIA's driver tools: nvidia-smi and NVML (pynvml, GPUtil; rules/third_party.yaml)
_PROBE_RULES = ("nvml", "nvidia-cli-tool")


def probe_hit(findings) -> Finding | None:
    """The first nvidia-smi / NVML finding above info of a file, or None."""
    hits = [f for f in findings if f.name in _PROBE_RULES and f.severity != "info"]
    return min(hits, key=lambda f: (f.line, f.col)) if hits else None


def _probe_finding(path: Path, rel: str, cache: dict, analyze: Callable[[bytes, str], FileResult],
                   known: FileResult | None) -> tuple[int, str] | None:
    """(line, code) of a short launched file's NVIDIA-tool query (its `probe` fact for a file of the run), or None."""
    key = ("probe", str(path))
    if key not in cache:
        facts = _facts(known)
        found = None
        if facts is not None:
            held = facts.get(PROBE)
            found = (int(held[0]), str(held[1])) if isinstance(held, list) and len(held) == 2 else None
        else:
            try:        # is_file: a FIFO or device named x.py is refused, never opened
                if path.is_file() and path.stat().st_size <= _MAX_BYTES:
                    data = path.read_bytes()
                    if _code_lines(data.decode("utf-8", errors="replace")) <= WRAPPER_LINES:
                        hit = probe_hit(analyze(data, rel).findings)
                        found = (hit.line, hit.code) if hit is not None else None
            except OSError:
                found = None
        cache[key] = found
    return cache[key]


def attention_hit(findings) -> Finding | None:
    """The first attention finding above info (a CUDA attention kernel the file uses), or None."""
    hits = [f for f in findings if f.category == "attention" and f.severity != "info"]
    return min(hits, key=lambda f: (f.line, f.col)) if hits else None


def _wrapper_finding(path: Path, rel: str, cache: dict, analyze: Callable[[bytes, str], FileResult],
                     known: FileResult | None = None) -> Finding | None:
    """The first attention finding (error or warning) of a short Python file, or None. `known`: the worker's result
    for the file (a file of the tree), whose own findings and `wrapper` fact are used instead of reading it again."""
    key = str(path)
    if key in cache:
        return cache[key]
    facts = known.summary.get("tree") if known is not None and known.summary else None
    if known is not None and isinstance(facts, dict):
        found = attention_hit(known.findings) if facts.get("wrapper") else None
        cache[key] = found
        return found
    found = None
    try:        # is_file: a FIFO or device named x.py is refused, never opened
        if path.is_file() and path.stat().st_size <= _MAX_BYTES:
            data = path.read_bytes()
            if _code_lines(data.decode("utf-8", errors="replace")) <= WRAPPER_LINES:
                found = attention_hit(analyze(data, rel).findings)
    except OSError:
        found = None
    cache[key] = found
    return found


def _option_name(word: str) -> str:
    return word.replace("-", "_")


def _constant(node: ast.expr | None) -> tuple[bool, Any]:
    if isinstance(node, ast.Constant):
        return True, node.value
    return False, None


def option_defaults(tree: ast.AST) -> dict[str, Any]:
    """The defaults of a script's options: dataclass fields of its argument classes (`attn_type: str =
    field(default="fa2")`, HfArgumentParser) and argparse `add_argument("--use_flash_attn", default=True)` /
    `action="store_false"`; only literal defaults."""
    defaults: dict[str, Any] = {}
    for node in module_nodes_of(tree, (ast.ClassDef, ast.Call)):
        if isinstance(node, ast.ClassDef):
            for stmt in node.body:
                if not (isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name)):
                    continue
                value = stmt.value
                if isinstance(value, ast.Call) and isinstance(value.func, (ast.Name, ast.Attribute)) and \
                        (value.func.id if isinstance(value.func, ast.Name) else value.func.attr) == "field":
                    value = next((k.value for k in value.keywords if k.arg == "default"), None)
                ok, v = _constant(value)
                if ok:
                    defaults.setdefault(stmt.target.id, v)
                    defaults.setdefault(_NODES, {}).setdefault(stmt.target.id, value)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "add_argument":
            flags = [a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)
                     and a.value.startswith("--")]
            shorts = [a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)
                      and a.value.startswith("-") and not a.value.startswith("--")]
            kw = {k.arg: k.value for k in node.keywords if k.arg}
            ok_dest, dest = _constant(kw.get("dest"))
            name = dest if ok_dest and isinstance(dest, str) else _option_name(flags[0][2:]) if flags else None
            if name is None:
                continue
            for flag in flags + shorts:     # `--no-flash-attn` with dest="use_flash_attn", `-b` for `--backend`
                aliases = defaults.setdefault(_ALIASES, {})
                aliases.setdefault(_option_name(flag.lstrip("-")), name)
            ok, v = _constant(kw.get("default"))
            if not ok and "default" not in kw:
                _, action = _constant(kw.get("action"))
                ok, v = (True, False) if action == "store_true" else (True, True) if action == "store_false" else (
                    False, None)
            if ok:
                defaults.setdefault(name, v)
                if "default" in kw:
                    defaults.setdefault(_NODES, {}).setdefault(name, kw["default"])
    return defaults


def name_defaults(tree: ast.AST) -> dict[str, list] | None:
    """option_defaults' name-like string defaults (`add_argument('--arch', default='dla_34')`, a dataclass field's
    `field(default="fa2")`), each with the option words a launch may give it by (its flags and short aliases, `-`
    read as `_`; a field's own name): {name: [default, [word, ...]]}; None when there is none. What a launch that
    leaves the option alone runs with (registry_choices' launch choices)."""
    defaults = option_defaults(tree)
    aliases = defaults.get(_ALIASES) or {}
    out = {name: [value, [word for word, dest in aliases.items() if dest == name] or [name]]
           for name, value in defaults.items()
           if not name.startswith("--") and isinstance(value, str) and name_value(value)}
    return out or None


def _test_taken(test: ast.expr, defaults: dict[str, Any]) -> tuple[str, bool] | None:
    """(option, whether the test is true under the option's default) for `args.x == "fa2"`, `x in ("fa2", ...)`,
    `args.use_flash_attn`, `not args.x`; None for any other test or an option without a literal default."""
    negate = False
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        test, negate = test.operand, True

    def name_of(node: ast.expr) -> str | None:
        return node.attr if isinstance(node, ast.Attribute) else node.id if isinstance(node, ast.Name) else None

    if isinstance(test, ast.Compare) and len(test.ops) == 1:
        name = name_of(test.left)
        if name is None or name not in defaults:
            return None
        default, op, right = defaults[name], test.ops[0], test.comparators[0]
        if isinstance(op, (ast.In, ast.NotIn)) and isinstance(right, (ast.Tuple, ast.List, ast.Set)):
            values = [_constant(e) for e in right.elts]
            if not all(ok for ok, _ in values):
                return None
            taken = default in [v for _, v in values]
            return name, (taken if isinstance(op, ast.In) else not taken) != negate
        ok, value = _constant(right)
        if not ok:
            return None
        if isinstance(op, (ast.Eq, ast.Is)):
            return name, (default == value) != negate
        if isinstance(op, (ast.NotEq, ast.IsNot)):
            return name, (default != value) != negate
        return None
    name = name_of(test)
    if name is None or name not in defaults:
        return None
    return name, bool(defaults[name]) != negate


def _within(node: ast.AST, line: int, col: int) -> bool:
    end_line = getattr(node, "end_lineno", None) or node.lineno  # type: ignore[attr-defined]
    start = (node.lineno, node.col_offset + 1)  # type: ignore[attr-defined]
    end = (end_line, (getattr(node, "end_col_offset", None) or 0) + 1)
    return start <= (line, col) < end


def default_choices(text: str, findings) -> list[tuple[Finding, str]]:
    """(finding, option) for each attention finding of a launched script that sits in the branch its option's
    default selects (`attn_implementation="flash_attention_2" if training_args.attn_type == "fa2" else None` with
    `attn_type: str = field(default="fa2")`): a launch that does not pass the option runs the CUDA-only
    implementation. Nothing is run."""
    return _default_choices(_once(text), findings)[0]


def _default_choices(parsed: Callable[[], ast.Module | None], findings) \
        -> tuple[list[tuple[Finding, str]], dict[str, str]]:
    """default_choices, with the script's short option names (option_defaults' aliases), from the script's one
    tree (`parsed`, called only when an attention finding asks)."""
    # a CUDA-only library the default selects (LoftQ's `full_precision: bool = field(default=False)` taking the
    # `BitsAndBytesConfig(load_in_4bit=True)` branch, t18b): its error / warning findings; the entry point's own
    # calls stay attention's only
    hits = [f for f in findings if f.category == "attention" or f.category == "third_party" and f.severity != "info"]
    if not hits:
        return [], {}
    tree = parsed()
    if tree is None:
        return [], {}
    defaults = option_defaults(tree)
    out: list[tuple[Finding, str]] = _main_choices(tree, [f for f in hits if f.category == "attention"])
    # the default itself names the CUDA attention (Mantis's `attn_implementation: str = field(default=
    # "flash_attention_2")`, passed on to `from_pretrained`): a launch that leaves the option runs it (t15v)
    for name, node in (defaults.get(_NODES) or {}).items():
        out += [(f, name) for f in hits if _within(node, f.line, f.col)]
    for node in module_nodes_of(tree, (ast.IfExp, ast.If)) if defaults else ():
        decided = _test_taken(node.test, defaults)
        if decided is None:
            continue
        name, taken = decided
        branches = [node.body] if isinstance(node, ast.IfExp) else node.body
        others = [node.orelse] if isinstance(node, ast.IfExp) else node.orelse
        chosen = branches if taken else others
        for f in hits:
            if any(_within(b, f.line, f.col) for b in chosen):
                out.append((f, name))
    return sorted(out, key=lambda p: (p[0].line, p[0].col)), defaults.get(_ALIASES) or {}


SWITCHED = "switched"     # the launch facts' key of the Apex findings a passed switch turns on (tp50b)


def _switched_choices(parsed: Callable[[], ast.Module | None], findings) \
        -> tuple[list[tuple[Finding, str]], dict[str, str]]:
    """(finding, option) for each Apex finding above information on a statement of `if args.fp16:`'s own body
    (_own_statements) whose option is off by
    default (`add_argument("--fp16", action="store_true")`, a `False` field): only a launch that passes the switch
    runs that branch (ANCE's and the legacy Hugging Face examples' `from apex import amp; amp.initialize(...)`), and
    the passed option is where the run chooses Apex. With the script's short option names (option_defaults)."""
    hits = [f for f in findings if f.category == "apex" and f.severity != "info"]
    tree = parsed() if hits else None
    if tree is None:
        return [], {}
    defaults = option_defaults(tree)
    out: list[tuple[Finding, str]] = []
    for node in module_nodes_of(tree, (ast.If,)):
        test = node.test
        name = test.attr if isinstance(test, ast.Attribute) else test.id if isinstance(test, ast.Name) else None
        if name is None or defaults.get(name) is not False:
            continue
        out += [(f, name) for f in hits if any(_within(b, f.line, f.col) for b in _own_statements(node.body))]
    return sorted(out, key=lambda p: (p[0].line, p[0].col)), (defaults.get(_ALIASES) or {}) if out else {}


def _own_statements(body: list[ast.stmt]) -> list[ast.stmt]:
    """The simple statements a block runs whenever it runs: through `with` / loops and a `try` whose handlers all
    raise (`except ImportError: raise ImportError("Please install apex")`), never under a further `if` / `match`
    or a `try` with a fallback: that test chooses (`if args.amp_backend == "apex": ... else: GradScaler()`, a
    launch may pass the other value), not the switch (review50 item 3)."""
    out: list[ast.stmt] = []
    for stmt in body:
        if isinstance(stmt, (ast.If, ast.Match, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        if isinstance(stmt, (ast.Try, ast.TryStar)):
            if all(h.body and isinstance(h.body[-1], ast.Raise) for h in stmt.handlers):
                out += _own_statements(stmt.body + stmt.orelse + stmt.finalbody)
            continue
        if isinstance(stmt, (ast.With, ast.AsyncWith, ast.For, ast.AsyncFor, ast.While)):
            out += _own_statements(stmt.body)
            continue
        out.append(stmt)
    return out


_OPTION_DECLARATIONS = ("add_argument", "add_option", "set_defaults")
MAIN = "__main__"        # the option name of a choice the script's entry point makes: no launch option undoes it


def _main_choices(tree: ast.AST, hits: list[Finding]) -> list[tuple[Finding, str]]:
    """(finding, MAIN) for each attention finding on an unconditional statement of the module's `if __name__ ==
    "__main__":` block (VideoLLaMA2's `train("flash_attention_2")`): every launch of the file runs it (t15n). A
    finding under a further test in that block (`if args.flash:`) is the option's and not taken here."""
    out: list[tuple[Finding, str]] = []
    functions = {n.name: n for n in getattr(tree, "body", []) if isinstance(n, ast.FunctionDef)}
    for node in getattr(tree, "body", []):
        if not is_main_guard(node):
            continue
        for stmt in _unconditional(node.body):
            out.extend((f, MAIN) for f in hits if _within(stmt, f.line, f.col))
            # `if __name__ == "__main__": train()` with `train()` loading the model with
            # `attn_implementation='flash_attention_2'` on a statement no test guards (Consistency_LLM's
            # train_cllm_global.py, t16f): the function's own unconditional statements, one call deep
            called = stmt.value.func if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) else None
            if isinstance(called, ast.Name) and called.id in functions:
                for inner in _unconditional(functions[called.id].body):
                    out.extend((f, MAIN) for f in hits if _within(inner, f.line, f.col))
    return out


def _unconditional(body: list[ast.stmt]) -> list[ast.stmt]:
    """The simple statements of a block that run whenever the block does: not under a test, a loop, a try or a
    nested definition, and not declaring an option (`parser.add_argument("--use_flash_attn", default=True)`: an
    option, read by option_defaults) or choosing by a conditional expression."""
    return [stmt for stmt in body
            if not isinstance(stmt, (ast.If, ast.Try, ast.For, ast.While, ast.With, ast.FunctionDef, ast.ClassDef,
                                     ast.AsyncFunctionDef, ast.Match))
            and not any(isinstance(n, ast.IfExp) or (isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
                                                      and n.func.attr in _OPTION_DECLARATIONS) for n in walk_list(stmt))]


def _script_choices(path: Path, rel: str, cache: dict, analyze: Callable[[bytes, str], FileResult],
                    known: FileResult | None, fact: str, categories: tuple[str, ...], reader) -> tuple[list, dict]:
    """(finding, option) pairs of a launched script that `reader` (_default_choices, _switched_choices) picks, with
    its short option names: from the run's facts (`fact`) where the script was audited, else read once."""
    key = (fact, str(path))
    facts = _facts(known)
    if key not in cache and facts is not None and known is not None:
        by_pos = {(f.line, f.col, f.code): f for f in known.findings}
        chosen = [(by_pos[(ln, col, code)], name) for ln, col, code, name in facts.get(fact) or []
                  if (ln, col, code) in by_pos]
        cache[key] = (chosen, facts.get("aliases") or {})
    if key not in cache:
        choices: list = []
        aliases: dict = {}
        try:
            if known is not None and not any(f.category in categories for f in known.findings):
                pass        # a file of the run with no finding to choose: nothing read (warm runs)
            elif path.is_file() and path.stat().st_size <= _MAX_SCRIPT_BYTES:
                data = path.read_bytes()
                findings = known.findings if known is not None else analyze(data, rel).findings
                choices, aliases = reader(_once(data.decode("utf-8", errors="replace")), findings)
                aliases = aliases if choices else {}
        except OSError:
            choices = []
        cache[key] = (choices, aliases)
    return cache[key]


def _passed(options, aliases: dict) -> set[str]:
    """The script's option names a launch passes (`--fp16`, `-b` through its aliases)."""
    passed = {_option_name(o) for o in options if isinstance(o, str)}
    return passed | {aliases[o] for o in passed if o in aliases}


def _default_finding(path: Path, rel: str, cache: dict, analyze: Callable[[bytes, str], FileResult],
                     known: FileResult | None, options: list[str]) -> Finding | None:
    """The first attention finding of a launched script that its option defaults select and the launch leaves
    at the default (None when the launch passes that option)."""
    choices, aliases = _script_choices(path, rel, cache, analyze, known, "defaults", _DEFAULT_CATEGORIES,
                                       _default_choices)
    passed = _passed(options, aliases)
    return next((f for f, name in choices if name not in passed), None)


def _switched_findings(rule, product: str, result: FileResult, call: dict, rel: str, path: Path, cache: dict,
                       analyze: Callable[[bytes, str], FileResult], known: FileResult | None) -> list[Finding]:
    """NPU987 on each switch a launch passes (`--fp16`) whose branch of the launched script runs NVIDIA Apex (the
    script's first such finding in the message), on the option's own word (tp50b)."""
    switches = call.get("switch_at")
    if rule is None or not isinstance(switches, dict):
        return []
    choices, aliases = _script_choices(path, rel, cache, analyze, known, SWITCHED, ("apex",), _switched_choices)
    out = []
    for option, at in switches.items():
        name = next(iter(_passed([option], aliases) & {n for _, n in choices}), None)
        chosen = next((f for f, n in choices if n == name), None)
        if chosen is None or not (isinstance(at, list) and len(at) == 3):
            continue
        message = rule.message.replace("{symbol}", rel) + f" ({rel}:{chosen.line}: `{chosen.symbol}`, {chosen.code})"
        out.append(call_finding(rule, product, result, tuple(at), message, rel,
                                {"launched": rel, "line": chosen.line, "code": chosen.code}))
    return out


_MISSING = object()


def _setting(settings: Any, path: str) -> Any:
    """The value of a dotted setting in a loaded YAML mapping: the whole path, else the path without its leading
    names (`cfg.model.use_flash` in a file whose top holds `model:`), else _MISSING."""
    parts = path.split(".")
    for start in range(len(parts)):
        node = settings
        for p in parts[start:]:
            node = node.get(p, _MISSING) if isinstance(node, dict) else _MISSING
            if node is _MISSING:
                break
        if node is not _MISSING:
            return node
    return _MISSING


def _config_settings(path: Path, cache: dict) -> Any:
    key = ("config", str(path))
    if key not in cache:
        settings = None
        try:
            if path.is_file() and path.stat().st_size <= _MAX_BYTES:
                settings = yaml.safe_load(path.read_bytes().decode("utf-8", errors="replace"))
        except (OSError, yaml.YAMLError, RecursionError, ValueError):
            settings = None
        cache[key] = settings if isinstance(settings, dict) else None
    return cache[key]


def _config_finding(path: Path, rel: str, cache: dict, analyze: Callable[[bytes, str], FileResult],
                    known: FileResult | None, call: dict, bases: tuple[Path, ...]) -> tuple[Finding | None, str | None]:
    """The first attention finding of a launched script under an `if cfg.x:` test that a YAML file the launch passes
    (`--config configs/train.yaml`) turns on (`x: true`), with the file and setting (t18b, Wonder3D). A setting the
    launch also passes as an option is the launch's own choice and not taken."""
    key = ("guards", str(path))
    if key not in cache:
        facts = _facts(known)
        guards: list = []
        try:
            if facts is not None and known is not None:
                raw, findings = facts.get("guards") or [], known.findings
            elif known is not None and not any(f.category in _DEFAULT_CATEGORIES for f in known.findings):
                raw, findings = [], []
            elif path.is_file() and path.stat().st_size <= _MAX_SCRIPT_BYTES:
                data = path.read_bytes()
                findings = known.findings if known is not None else analyze(data, rel).findings
                raw = _setting_guards(_once(data.decode("utf-8", errors="replace")), findings)
            else:
                raw, findings = [], []
        except OSError:
            raw, findings = [], []
        by_pos = {(f.line, f.col, f.code): f for f in findings}
        guards = [(by_pos[(ln, col, code)], setting, value) for ln, col, code, setting, value in raw
                  if (ln, col, code) in by_pos]
        cache[key] = guards
    guards = cache[key]
    passed = {_option_name(o) for o in call.get("options") or [] if isinstance(o, str)}
    for config in call.get("configs") or [] if guards else []:
        found = resolve_launched(config, bases, cache) if isinstance(config, str) else None
        settings = _config_settings(found[1], cache) if found is not None else None
        if settings is None:
            continue
        for f, setting, value in guards:
            got = _setting(settings, setting)
            if got is _MISSING or setting.rsplit(".", 1)[-1] in passed:
                continue
            if (got == value and type(got) is type(value)) or (value is True and isinstance(got, bool) and got):
                shown = str(got).lower() if isinstance(got, bool) else got
                return f, f"`{setting.rsplit('.', 1)[-1]}: {shown}` in {config}"
    return None, None


def _patch_calls(tree: ast.Module | None) -> list[tuple[str, str]]:
    """(module, name) for each `from module import name` of a short wrapper (its `ast` tree; None: it does not
    parse) whose name the wrapper calls as a statement of its own (`replace_llama_attn_with_xformers_attn()`): the
    patch it applies before training."""
    if tree is None:
        return []
    called = {stmt.value.func.id for stmt in module_nodes_of(tree, ast.Expr)
              if isinstance(stmt.value, ast.Call) and
              isinstance(stmt.value.func, ast.Name)}
    return [(node.module, alias.asname or alias.name) for node in tree.body
            if isinstance(node, ast.ImportFrom) and node.module and not node.level
            for alias in node.names if (alias.asname or alias.name) in called]


def _patched_finding(path: Path, roots: tuple[Path, ...], cache: dict, analyze: Callable[[bytes, str], FileResult],
                     by_rel: dict[str, FileResult] | None, root: Path) -> Finding | None:
    """A short wrapper with no attention finding of its own that calls a patch imported from a module of the tree
    (LLaVA's `train_xformers.py`: `from llava.train.llama_xformers_attn_monkey_patch import
    replace_llama_attn_with_xformers_attn`, then the call, then `train()`): that module's first attention finding
    (error or warning), one hop only (t15m)."""
    key = ("patch", str(path))
    if key in cache:
        return cache[key]
    found = None
    facts = _facts(_known(by_rel, path, root))
    if facts is not None and facts.get("framework") not in (None, "PyTorch"):
        cache[key] = None       # a PaddlePaddle / TensorFlow script of the run patches no PyTorch attention (t15n):
        return None             # its worker's facts say so, and the file is not read again
    try:
        if facts is not None:
            patches = [tuple(p) for p in facts.get("patches") or []]
        elif path.is_file() and path.stat().st_size <= _MAX_BYTES:
            text = path.read_bytes().decode("utf-8", errors="replace")
            patches = _patch_calls(_parse(text)) if _code_lines(text) <= WRAPPER_LINES else []
        else:
            patches = []
        for module, _name in patches:
            rel = module.replace(".", "/") + ".py"
            for base in roots:
                target = base / rel
                if not target.is_file() or target.stat().st_size > _MAX_SCRIPT_BYTES:
                    continue
                known = _known(by_rel, target, root)
                findings = known.findings if known is not None else analyze(target.read_bytes(), rel).findings
                hit = attention_hit(findings)
                found = dataclasses.replace(hit, path=rel) if hit is not None else None
                break
            if found is not None:
                break
    except OSError:
        found = None
    cache[key] = found
    return found


def launch_bases(bases: tuple[Path, ...], root: Path) -> tuple[Path, ...]:
    """The folders a launched file's relative path is read from: the tree's top folder, the calling file's folder,
    then each folder between them, nearest first (t15n): a sub-project's `scripts/finetune.sh` runs `deepspeed
    mplug_owl2/train/train_mem.py` from the sub-project's folder (`mPLUG-Owl/mPLUG-Owl2`), one above the script."""
    out = list(bases)
    for base in bases:
        if base == root:
            continue
        try:
            base.relative_to(root)
        except ValueError:
            continue
        for parent in base.parents:
            if parent == root or len(out) >= 16:
                break
            out.append(parent)
    return tuple(dict.fromkeys(out))


_MAX_TOP_FOLDERS = 256


def resolve_launched(rel: str, bases: tuple[Path, ...], cache: dict) -> tuple[Path, Path] | None:
    """(base, file) for a launched path: the first base that has it; else, for a path under a package folder
    (`llava/train/train_mem.py` in MoE-LLaVA, whose package is `moellava/`), the one file of the tree with the same
    path under another top folder of a base (a fork that renamed its package and kept the copied launch scripts),
    only when exactly one such file exists (t15n). Nothing is walked beyond the bases' immediate folders."""
    for base in bases:
        candidate = base / rel
        if rel.startswith("../"):
            # a path that climbs from the caller's folder (`../common/util.sh`): within the tree's top folder only
            candidate = Path(os.path.normpath(candidate))
            if not bases or not candidate.is_relative_to(os.path.normpath(bases[0])) or base == bases[0]:
                continue
        try:
            if candidate.is_file():
                return base, candidate
        except OSError:
            continue
    parts = rel.split("/")
    if len(parts) < 3 or parts[0] in ("", ".", ".."):
        return None
    key = ("renamed", rel, bases)
    if key in cache:
        return cache[key]
    rest = "/".join(parts[1:])
    matches: dict[Path, tuple[Path, Path]] = {}
    for base in bases:
        try:
            tops = sorted(p for p in base.iterdir() if p.is_dir() and not p.name.startswith("."))
        except OSError:
            continue
        for top in tops[:_MAX_TOP_FOLDERS]:
            candidate = top / rest
            try:
                if top.name != parts[0] and candidate.is_file():
                    matches.setdefault(candidate.resolve(), (base, candidate))
            except OSError:
                continue
    found = next(iter(matches.values())) if len(matches) == 1 else None
    cache[key] = found
    return found


def launched_wrapper_findings(result: FileResult, root: Path, rule, analyze: Callable[[bytes, str], FileResult],
                              cache: dict | None = None, product: str = "a2",
                              by_rel: dict[str, FileResult] | None = None, default_rule=None,
                              third_party_rule=None, switch_rule=None, probe_rule=None) -> list[Finding]:
    """The findings of `result`'s recorded launches of an attention wrapper of the tree (`by_rel`: the run's
    results by path relative to `root`, whose per-file facts spare reading the wrapper again), and with
    `default_rule`, of a script whose option defaults select a CUDA-only attention the launch does not override
    (t15m); with `probe_rule`, of a short helper queried for its output whose code runs nvidia-smi / NVML (tp53a)."""
    calls, bases = recorded_calls(result, root, SUMMARY_KEY)
    if (rule is None and default_rule is None and probe_rule is None) or not calls:
        return []
    bases = launch_bases(bases, root)
    cache = {} if cache is None else cache
    new = []
    for call in calls:
        try:
            rel = call["file"]
            launched_word_position(call)      # the launch's position: recorded with it
        except (KeyError, TypeError):
            continue
        why, source, shown = None, rel, rel
        found = resolve_launched(rel, bases, cache)
        if found is None and rule is not None:
            kernel = absent_wrapper(rule, rel)
            if kernel is not None and not _holds_file_named(root, rel.rsplit("/", 1)[-1], cache):
                message = rule.message.replace("{symbol}", rel) + \
                    f" (absent from the tree: the upstream `{rel.rsplit('/', 1)[-1]}` patches {kernel} in)"
                new.append(call_finding(rule, product, result, launched_word_position(call), message, rel,
                                        {"launched": rel, "absent": True}))
                continue
        if found is not None:
            base, candidate = found
            read_as = Path(os.path.relpath(candidate, base)).as_posix()     # `../drivers/x.py` climbs from base
            if read_as != rel:      # a stale path of a renamed package: the message says which file was read
                shown = f"{rel}` (absent from the tree; read as `{read_as}`)"
            source = read_as
            known = _known(by_rel, candidate, root)
            new += _switched_findings(switch_rule, product, result, call, read_as, candidate, cache, analyze, known)
            probe = _probe_finding(candidate, read_as, cache, analyze, known) \
                if probe_rule is not None and call.get("captured") else None
            if probe is not None:
                message = probe_rule.message.replace("{symbol}", shown) + f" ({read_as}:{probe[0]}, {probe[1]})"
                new.append(call_finding(probe_rule, product, result, launched_word_position(call), message, rel,
                                        {"launched": rel, "line": probe[0], "code": probe[1]}))
            why = _wrapper_finding(candidate, read_as, cache, analyze, known) if rule is not None else None
            if why is None and rule is not None:
                why = _patched_finding(candidate, tuple(dict.fromkeys((root, base, candidate.parent))), cache,
                                       analyze, by_rel, root)
                source = why.path if why is not None else read_as
            if why is None and default_rule is not None:
                chosen = _default_finding(candidate, read_as, cache, analyze, known, call.get("options") or [])
                via = None
                if chosen is None and call.get("configs"):
                    chosen, via = _config_finding(candidate, read_as, cache, analyze, known, call, bases)
                chosen_rule = third_party_rule if chosen is not None and chosen.category == "third_party" else \
                    default_rule
                if chosen is not None and chosen_rule is not None:
                    new.append(_default_call_finding(chosen_rule, product, result, call, rel, chosen, read_as,
                                                     shown, via))
        if why is None or rule is None:
            continue
        message = rule.message.replace("{symbol}", shown) + f" ({source}:{why.line}: `{why.symbol}`, {why.code})"
        # on the wrapper's own word (`train_fast.py \` below `torchrun \`), as a default's finding is (tp48a)
        new.append(call_finding(rule, product, result, launched_word_position(call), message, rel,
                                {"launched": rel, "line": why.line, "code": why.code}))
    if new:
        return unsuppressed(new, calls, Path(result.path), root)
    return new


def absent_wrapper(rule, rel: str) -> str | None:
    """The attention kernel an upstream wrapper launched by its place patches in (`llava/train/train_mem.py`:
    FlashAttention), from the rule's `absent_wrappers` globs; asked only for a file the tree does not have (tp49a)."""
    low = rel.lower()
    return next((str(kernel) for glob, kernel in (rule.extra.get("absent_wrappers") or {}).items()
                 if fnmatch.fnmatchcase(low, glob)), None)


_MAX_WALK_FOLDERS = 4000


def _holds_file_named(root: Path, name: str, cache: dict) -> bool:
    """Whether the tree has a file of that name anywhere (a tree with its own `train_mem.py` wrappers decides by them,
    t15n: a sub-project's absent one is no upstream wrapper); at most _MAX_WALK_FOLDERS folders, once per root."""
    key = ("holds", str(root), name)
    if key not in cache:
        found, seen = False, 0
        for _folder, dirs, files in os.walk(root):
            dirs[:] = [d for d in dirs if d not in WALK_SKIP_DIRS and not d.startswith(".")]
            seen += 1
            if name in files or seen >= _MAX_WALK_FOLDERS:
                found = name in files or seen >= _MAX_WALK_FOLDERS     # too big to tell: no guess
                break
        cache[key] = found
    return cache[key]


def launched_word_position(call: dict) -> tuple[int, int, int]:
    """(line, col, end_col) of the word naming the launched file or module, where the shell reader recorded it, else
    of the launch command's first word."""
    line, col, end_col = call.get("file_line"), call.get("file_col"), call.get("file_end_col")
    if not (isinstance(line, int) and isinstance(col, int) and isinstance(end_col, int)):
        line, col, end_col = call["line"], call["col"], call["end_col"]
    return line, col, end_col


def _default_call_finding(rule, product: str, result: FileResult, call: dict, rel: str, chosen: Finding,
                          read_as: str | None = None, shown: str | None = None, via: str | None = None) -> Finding:
    """On the launched file's word (`emu3/train/train.py \\` lines below `torchrun \\`), else the launch's line.
    `via`: the passed config file and setting that select the finding's branch."""
    line, col, end_col = launched_word_position(call)
    message = rule.message.replace("{symbol}", shown or rel) + \
        f" ({read_as or rel}:{chosen.line}: `{chosen.symbol}`, {chosen.code}{'; ' + via if via else ''})"
    return call_finding(rule, product, result, (line, col, end_col), message, rel,
                        {"launched": rel, "line": chosen.line, "code": chosen.code})


def tf32_options_reach_hf(result: FileResult, line: int, root: Path, by_rel: dict[str, FileResult],
                          cache: dict) -> bool:
    """Whether the launch holding `line` (a `--tf32` option) hands its options to HF TrainingArguments (review48
    item 6), in a tree where no Python file builds HfArgumentParser / TrainingArguments: False only when the
    launched script is a file of the tree (its own argparse `--tf32`); a script outside the tree (an installed
    trainer's entry) stays HF's as before."""
    calls, bases = recorded_calls(result, root, SUMMARY_KEY)
    held = [c for c in calls if isinstance(c, dict) and isinstance(c.get("line"), int) and c["line"] <= line
            and "tf32" in (c.get("options") or [])]
    if not held:
        return True
    call = max(held, key=lambda c: c["line"])
    rel = call.get("file")
    if not isinstance(rel, str) or not rel:
        return True
    found = resolve_launched(rel, launch_bases(bases, root), cache)
    if found is None:
        return True
    facts = _facts(_known(by_rel, found[1], root))
    return bool(facts and facts.get(HF_ARGS))


def apply_tf32_launches(results: list[FileResult], root: Path, rules, product: str = "a2") -> None:
    """Report a launch's `--tf32 True` as the HF option (`tf32-training-argument`) only where it reaches HF
    TrainingArguments (tf32_options_reach_hf); elsewhere as the plain TF32 setting (`tf32-setting`, review48 item
    6): a script's own argparse `--tf32` raises nothing without CUDA."""
    hf = next((r for r in rules if r.name == "tf32-training-argument"), None)
    plain = next((r for r in rules if r.name == "tf32-setting"), None)
    if hf is None or plain is None or not any(f.code == hf.code for r in results for f in r.findings):
        return
    top = root if root.is_dir() else root.parent
    by_rel = {r.path: r for r in results if r.path.endswith(".py")}
    if any((_facts(r) or {}).get(HF_ARGS) for r in by_rel.values()):
        return          # a tree that builds HF TrainingArguments: every launch's `--tf32` stays HF's
    cache: dict = {}
    for result in results:
        for i, f in enumerate(result.findings):
            if f.code == hf.code and not tf32_options_reach_hf(result, f.line, top, by_rel, cache):
                result.findings[i] = dataclasses.replace(
                    f, code=plain.code, name=plain.name, severity=plain.severity_for(product), effort=plain.effort,
                    message=plain.message.replace("{symbol}", f.symbol or ""), substitution=plain.substitution)


# calls that put a model on a device, train it or run it (decision 24's "places nothing on a device"), and calls that
# write weights back to disk (`save_pretrained`, `torch.save`, safetensors' `save_file`)
_DEVICE_OR_TRAINING_ATTRS = frozenset({"cuda", "to", "half", "backward", "step", "generate", "forward", "fit", "train",
                                       "initialize", "prepare"})
_DEVICE_KEYWORDS = frozenset({"device", "device_map", "devices", "accelerator", "gpus"})
_SAVE_CALLS = frozenset({"save_pretrained", "save", "save_file", "save_model", "save_checkpoint"})


def host_conversion_script(tree: ast.Module) -> bool:
    """A script that loads weights, converts them and saves them back to disk without placing anything on a device or
    training (peft's merge_peft_adapter.py: `from_pretrained(..., torch_dtype=...)`, `merge_and_unload()`,
    `save_pretrained(...)`): decision 24's host conversion script, whose dtype chooses only the saved files' dtype."""
    saves = False
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            name = node.func.attr if isinstance(node.func, ast.Attribute) else \
                node.func.id if isinstance(node.func, ast.Name) else ""
            if name in _DEVICE_OR_TRAINING_ATTRS or name.endswith(("Trainer", "Accelerator")) \
                    or any(k.arg in _DEVICE_KEYWORDS for k in node.keywords):
                return False
            saves = saves or name in _SAVE_CALLS
        elif isinstance(node, ast.Attribute) and node.attr in ("cuda", "device"):
            return False        # `torch.cuda.is_available()`, `model.device`
    return saves


def _launches_host_conversion(result: FileResult, line: int, root: Path, cache: dict) -> bool:
    """Whether `line` is an option of a recorded launch of a tree script that is a host conversion script."""
    calls, bases = recorded_calls(result, root, SUMMARY_KEY)
    for call in calls:
        at = call.get("switch_at") if isinstance(call, dict) else None
        rel = call.get("file") if isinstance(call, dict) else None
        if not (isinstance(at, dict) and isinstance(rel, str) and rel.endswith(".py")
                and any(isinstance(w, list) and w[:1] == [line] for w in at.values())):
            continue
        found = resolve_launched(rel, launch_bases(bases, root), cache)
        if found is None:
            return False
        key = ("host-conversion", str(found[1]))
        if key not in cache:
            try:
                cache[key] = found[1].stat().st_size <= _MAX_SCRIPT_BYTES and \
                    host_conversion_script(ast.parse(found[1].read_bytes()))
            except (OSError, SyntaxError, ValueError):
                cache[key] = False
        return cache[key]
    return False


def drop_host_conversion_dtypes(results: list[FileResult], root: Path) -> None:
    """Drop a precision finding on a launch option (`--dtype bf16`) handed to a host conversion script of the tree
    (decision 24: a dtype there places nothing on a device; tp51d, modpo's merge step, test146's label)."""
    top = root if root.is_dir() else root.parent
    cache: dict = {}
    for result in results:
        if not any(f.category == "precision" for f in result.findings) or not (result.summary or {}).get(SUMMARY_KEY):
            continue
        result.findings = [f for f in result.findings
                           if f.category != "precision" or not _launches_host_conversion(result, f.line, top, cache)]


def apply_launched_wrappers(results: list[FileResult], root: Path, rules,
                            analyze: Callable[[], Callable[[bytes, str], FileResult]], product: str = "a2") -> None:
    """Add the launch findings to every file that recorded launches (runner, after the per-file pass)."""
    rule = next((r for r in rules if "attention-wrapper" in (r.match.get("launched") or [])), None)
    default_rule = next((r for r in rules if "attention-default" in (r.match.get("launched") or [])), None)
    third_party_rule = next((r for r in rules if "third-party-default" in (r.match.get("launched") or [])), None)
    switch_rule = next((r for r in rules if "apex-switch" in (r.match.get("launched") or [])), None)
    probe_rule = next((r for r in rules if "nvidia-gpu-probe" in (r.match.get("launched") or [])), None)
    if (rule is None and default_rule is None and switch_rule is None and probe_rule is None) or \
            not any(r.summary and r.summary.get(SUMMARY_KEY) for r in results):
        return
    reader = analyze()
    cache: dict = {}
    by_rel = {r.path: r for r in results if r.path.endswith(".py")}
    add_call_findings(results, root, SUMMARY_KEY,
                      lambda result, top: launched_wrapper_findings(result, top, rule, reader, cache, product, by_rel,
                                                                    default_rule, third_party_rule, switch_rule,
                                                                    probe_rule))
