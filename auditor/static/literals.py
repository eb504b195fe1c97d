"""A net for CUDA-specific literals and names in code (t14s, issue 14).

The per-file rules name constructs: a call, an import, an environment variable of a known list. Code bases spell the
same technologies in ways no rule names: `hasattr(obj, "cuda")`, `addItems(["Auto", "CPU", "CUDA"])`,
`os.environ["TF_CUDNN_DETERMINISTIC"] = "1"`, `extra_cflags.append("-DCUDA_OP")`, `attention_backend ==
"transformer_engine"`, `_libcudart.cudaDeviceSetLimit(...)` on a ctypes handle. The labelling policy (docs/recall.md,
item 1) marks such a line by its spelling. This pass reports a CODE token that itself spells a CUDA-specific thing:

1. a string literal holding a CUDA word as a whole token: the word itself (`"cuda"`, `"CUDA"`, `"triton"`), a dotted
   module path of a CUDA-only package (`"triton.language"`), an upper-case name with the word as one part
   (`"TF_CUDNN_DETERMINISTIC"`, `"NCCL_DEBUG"`), a compile flag (`"-DCUDA_OP"`, `"--use_fast_math"`), a library file
   (`"libcudart.so"`), a hyphenated package or tool (`"nvidia-smi"`, `"flash-attn"`); prose only where code parses or
   compares it (`text.split("Cuda compilation tools, release ")`);
2. an attribute or called name spelled as a CUDA runtime / driver / NCCL / NVML API (`cudaDeviceSetLimit`,
   `cuMemAlloc`, `ncclCommInitRank`, `nvmlDeviceGetCount`) on any receiver.

Not reported: docstrings, f-strings, messages (print / log / warning / exception / assert / argparse `help=` /
skip reasons), URLs, hub ids (`"nvidia/..."`), lower-case snake names that merely contain a word (`"use_cuda"`,
`"cuda_graphs"`: the project's own names), camel-case names (`"CudaGraphRunner"`), and any line that already holds a
finding of the same category. The CUDA-only package names come from the rule catalogue itself (the top-level packages
of the kernel / attention / apex / distributed / third-party rules that fail on Ascend), not from a second list.
Findings are info (severity policy `hint`: the spelling says the line concerns CUDA, not how it behaves on Ascend;
the construct it names carries its own rule where one exists); the engine's backend context applies as to every other
finding, and the tree passes (other frameworks, other backends) after it.
"""
from __future__ import annotations

import ast
import re
from typing import Any, Iterable

from auditor.findings import Finding

# category -> (code, rule name): rules/recall_t14s.yaml
CODES = {"device": ("NPU048", "cuda-literal"), "distributed": ("NPU115", "nccl-literal"),
         "kernel": ("NPU800", "cuda-kernel-literal"), "attention": ("NPU801", "cuda-attention-literal"),
         "apex": ("NPU802", "apex-literal"), "third_party": ("NPU422", "cuda-package-literal")}
OWN_CODES = frozenset(code for code, _ in CODES.values())

# CUDA's own words (toolkit libraries, tools, the collective library); the packages come from the catalogue
_CORE = {
    "cuda": "device", "cudnn": "device", "cudart": "device", "cublas": "device", "cublaslt": "device",
    "cusparse": "device", "cusparselt": "device", "cufft": "device", "curand": "device", "cusolver": "device",
    "nvjpeg": "device", "cupti": "device", "nvidia": "device",
    "nccl": "distributed",
    "nvcc": "kernel", "ptx": "kernel", "nvrtc": "kernel", "cutlass": "kernel", "triton": "kernel",
    "nvml": "third_party", "nvidia_smi": "third_party",
    "flash_attn": "attention", "flash_attention": "attention", "xformers": "attention", "flashinfer": "attention",
    "apex": "apex",
}
# nvcc options that exist for CUDA builds only
_KERNEL_FLAGS = frozenset({"--use_fast_math", "-use_fast_math", "-gencode", "--expt-relaxed-constexpr",
                           "--expt-extended-lambda", "-xptxas", "--ptxas-options", "-lcudart", "-lcuda", "-lnccl",
                           "-lcublas"})
# catalogue packages whose names are also ordinary words or common field names in ML code: a string holding one
# names the project's own thing far more often than the package (image `warp`, `rotary_emb`, `syncbn` norms)
_COMMON = frozenset({"warp", "rotary_emb", "syncbn", "stk", "fla", "awq", "quack", "humming", "cuda"})
# contexts (auditor/static/backends.py) where a CUDA word belongs to another backend's code
_OTHER_CODE = frozenset({"other-backend", "ascend-code"})
_PACKAGE_CATEGORIES = ("kernel", "attention", "apex", "distributed", "third_party")

# calls whose string arguments are messages, and keywords that hold one
_MESSAGE_CALLS = frozenset({"print", "pprint", "echo", "secho", "log", "debug", "info", "warning", "warn", "error",
                            "exception", "critical", "fatal", "warn_once", "info_once", "warning_once", "skip",
                            "skiptest", "fail", "xfail", "skipif", "skipunless", "write", "add_note", "notice",
                            "status", "set_description", "set_postfix_str", "tqdm", "format", "add_argument",
                            "argumentparser", "markdown", "text", "success", "note", "hint", "help", "usage"})
_MESSAGE_KEYWORDS = frozenset({"help", "description", "desc", "reason", "msg", "message", "doc", "title", "epilog",
                               "usage", "metavar", "comment", "label", "hint", "note", "summary", "prompt", "text"})
# calls that parse, compare or run a literal: prose is code there
_PARSERS = frozenset({"split", "rsplit", "startswith", "endswith", "find", "rfind", "index", "rindex", "replace",
                      "search", "match", "fullmatch", "findall", "finditer", "count", "partition", "rpartition",
                      "strip", "removeprefix", "removesuffix", "check_output", "run", "popen", "call", "check_call",
                      "system", "getoutput", "getstatusoutput", "compile", "sub", "findtext", "finditems"})
_REGEX_MARKS = ("(?", "|", "[^", ".*", "\\d", "\\w", "\\s", "\\.")
_TOKEN = re.compile(r"[A-Za-z0-9_\-]+")
_UPPER = re.compile(r"^[A-Z][A-Z0-9_]*$")
_HUB_ID = re.compile(r"^[\w.\-]+/[\w.\-]+$")
_VERSION_TAIL = re.compile(r"\d+[a-z]?$")
# CUDA runtime / driver / library API spellings (the toolkit's naming: a prefix, then a capital)
_API = re.compile(r"^(?:cuda|nccl|nvml|cublas(?:Lt)?|cudnn|cusparse|cufft|curand|cusolver|nvrtc|nvjpeg|cupti)[A-Z]\w*$"
                  r"|^cu(?:Init|Ctx|Mem|Module|Launch|Device|Stream|Event|Graph|Func|Link|Tensor|Driver|Get|Pointer"
                  r"|Array|Tex|Surf|Occupancy|Profiler|Ipc|Library|Kernel)[A-Z0-9]?\w*$")
_API_CATEGORY = (("nccl", "distributed"), ("nvml", "third_party"), ("nvrtc", "kernel"))


def catalogue_packages(rules: Iterable[Any]) -> dict[str, str]:
    """Top-level package -> category, from the import / qualname patterns of the rules that report a CUDA-only package
    failing on Ascend (severity error), in the categories this net serves."""
    out: dict[str, str] = {}
    for r in rules:
        if r.category not in _PACKAGE_CATEGORIES or r.severity != "error":
            continue
        for kind, patterns in r.match.items():
            if kind not in ("qualname", "import"):
                continue
            for p in patterns:
                top = p.rstrip("*").rstrip(".")
                if top.isidentifier() and len(top) >= 4 and top.lower() not in _COMMON:
                    out.setdefault(top.lower(), r.category)
    return out


def hint_pattern(packages: dict[str, str]) -> re.Pattern[str]:
    """A cheap test for a file no rule triggered on: does its text hold any word the net knows?"""
    words = sorted({*_CORE, *packages, "cu", "nvidia-smi", "flash-attn", "use_fast_math", "gencode"}, key=len,
                   reverse=True)
    return re.compile(r"(?i:" + "|".join(re.escape(w) for w in words if w != "cu") + r")|\.cuh?\b|\bcu[A-Z]")


def _word_category(token: str, packages: dict[str, str]) -> str | None:
    """The category of one token of a literal (`[A-Za-z0-9_-]+`), or None when it spells no CUDA thing."""
    low = token.lower()
    whole = low.replace("-", "_")
    if whole in _CORE:
        return _CORE[whole]
    if whole in packages:
        return packages[whole]
    if low in _KERNEL_FLAGS or low.startswith(("-gencode", "-arch=sm_", "--gpu-architecture")):
        return "kernel"
    if low.startswith("lib") and low[3:] in _CORE:       # `libcudart`, `libnccl` (the `.so` is another token)
        return _CORE[low[3:]]
    if token.startswith("-D") and len(token) > 2:        # `-DCUDA_OP`, `-DWITH_CUDA`, `-DUSE_NCCL`
        return "kernel" if any(p.lower() in _CORE for p in token[2:].split("_")) else None
    if _UPPER.match(token) and "_" in token:              # `TF_CUDNN_DETERMINISTIC`, `NCCL_DEBUG`, `CUDA_HOME`
        for part in token.split("_"):
            if part.lower() in _CORE and part.lower() != "nvidia_smi":
                return _CORE[part.lower()]
        return None
    if "-" in token and not token.startswith("-") and token == low:   # `cupy-cuda12x`, `cuda-python`
        for part in low.split("-"):
            part = _VERSION_TAIL.sub("", part) if part not in _CORE else part
            if part in _CORE:
                return _CORE[part]
            if part in packages:
                return packages[part]
    return None


def literal_category(value: str, packages: dict[str, str], parsed: bool) -> tuple[str, str] | None:
    """(category, word) for a string literal that spells a CUDA-specific thing; `parsed`: the code parses, compares
    or runs it (prose counts only then)."""
    text = value.strip()
    if not text or len(text) > 200 or "://" in text or text.startswith("www."):
        return None
    if text.endswith((".cu", ".cuh")) and not any(c.isspace() for c in text):
        return "kernel", text
    if _HUB_ID.match(text) and text.lower().startswith("nvidia"):
        text = text.split("/", 1)[1]    # `nvidia/Llama-3.1-Nemotron-70B`: a hub id; the organisation is no CUDA use
    if any(c.isspace() for c in text) and not parsed and not text.startswith("-"):
        return None         # prose: a label or message unless the code parses it
    if any(m in text for m in _REGEX_MARKS):
        return None         # a pattern (`r"(?:cuda|hip)/utils\.h"`): a rewriter's or a parser's, not a use
    if "/" in text or "\\" in text:
        # a path (`triton/fla/chunk_o.py`, `/.triton/cache/`, `../cuda/ops.h`): a folder named for a technology is the
        # project's layout; only a CUDA library file in it names CUDA itself (`/usr/lib/libcudart.so.12`)
        for token in _TOKEN.findall(text):
            low = token.lower()
            if low.startswith("lib") and low[3:] in _CORE:
                return _CORE[low[3:]], token
        return None
    for token in _TOKEN.findall(text):
        category = _word_category(token, packages)
        if category is not None:
            return category, token
    return None


def _last_name(func: ast.expr) -> str:
    if isinstance(func, ast.Attribute):
        return func.attr
    if isinstance(func, ast.Name):
        return func.id
    return ""


def _message_call(name: str) -> bool:
    low = name.lower()
    return low in _MESSAGE_CALLS or low.startswith(("print", "log", "warn", "rank_zero_", "rank0_")) \
        or low.endswith(("print", "_warn", "_info", "_warning", "_log", "_debug", "_error", "error", "exception",
                         "warning"))


class _Walker(ast.NodeVisitor):
    def __init__(self, packages: dict[str, str]) -> None:
        self.packages = packages
        self.hits: list[tuple[int, int, str, str]] = []     # line, col, category, symbol
        self.defined: set[str] = set()      # names the file defines itself (functions, classes), at any depth
        self._parsed = False

    def generic_visit(self, node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            self.visit(child)

    def visit_Name(self, node: ast.Name) -> None:
        return                  # a leaf (its only child is its context): no string, no attribute (hs14: a third of the nodes)

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        self.defined.add(node.name)
        self.generic_visit(node)

    visit_AsyncFunctionDef = visit_FunctionDef

    # -- places whose strings are not code -------------------------------------------------------
    def visit_Expr(self, node: ast.Expr) -> None:
        if isinstance(node.value, ast.Constant):
            return              # a docstring or a bare string
        self.visit(node.value)

    def visit_JoinedStr(self, node: ast.JoinedStr) -> None:
        for v in node.values:          # the literal parts are message text; the expressions inside are code
            if isinstance(v, ast.FormattedValue):
                self.visit(v.value)

    def visit_Raise(self, node: ast.Raise) -> None:
        return

    def visit_Assert(self, node: ast.Assert) -> None:
        self.visit(node.test)

    def visit_Assign(self, node: ast.Assign) -> None:
        if any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets):
            return
        self.generic_visit(node)

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        self.defined.add(node.name)
        if any(_last_name(b).endswith("Enum") for b in node.bases):
            self.defined |= _defined_names(node)    # (the only statements the walker skips: their defs still count)
            return      # `FLASHINFER = "flashinfer"`: an enumeration of choices names them, the choice is elsewhere
        self.generic_visit(node)

    def visit_Dict(self, node: ast.Dict) -> None:
        for key, value in zip(node.keys, node.values):
            if isinstance(key, ast.Constant) and isinstance(key.value, str):
                # `{"flashinfer": AttnType.FLASHINFER}`, `extras_require={"flash_attn": [...]}`: a table's key names
                # an entry (its value is the use); environment names and build defines keep their meaning
                if _UPPER.match(key.value.strip()) or key.value.startswith("-"):
                    self._literal(key, False)
            elif key is not None:
                self.visit(key)
            self.visit(value)

    def visit_BinOp(self, node: ast.BinOp) -> None:
        if isinstance(node.op, ast.Mod) and isinstance(node.left, ast.Constant) and isinstance(node.left.value, str):
            self.visit(node.right)      # `"... %s" % x`: a formatted message
            return
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        name = _last_name(node.func)
        if _message_call(name) or name.endswith(("Error", "Exception", "Warning")):
            self.visit(node.func)
            return
        self._api_name(node.func, call=True)
        self.visit(node.func)
        parsed = name.lower() in _PARSERS
        for a in node.args:
            self._visit_arg(a, parsed)
        for kw in node.keywords:
            if kw.arg is not None and kw.arg.lower() in _MESSAGE_KEYWORDS:
                continue
            self._visit_arg(kw.value, parsed)

    def _visit_arg(self, node: ast.expr, parsed: bool) -> None:
        if parsed and isinstance(node, ast.Constant):
            self._literal(node, True)
        elif parsed and isinstance(node, (ast.List, ast.Tuple)):
            for e in node.elts:
                self._visit_arg(e, True)
        else:
            self.visit(node)

    def visit_Compare(self, node: ast.Compare) -> None:
        for operand in (node.left, *node.comparators):
            self._visit_arg(operand, True)

    def visit_Attribute(self, node: ast.Attribute) -> None:
        if isinstance(node.ctx, ast.Load):
            self._api_name(node, call=False)
        self.visit(node.value)

    def visit_Constant(self, node: ast.Constant) -> None:
        self._literal(node, False)

    # -- reports -----------------------------------------------------------------------------------
    def _literal(self, node: ast.Constant, parsed: bool) -> None:
        if not isinstance(node.value, str):
            return
        found = literal_category(node.value, self.packages, parsed)
        if found is not None:
            self.hits.append((node.lineno, node.col_offset + 1, found[0], found[1]))

    def _api_name(self, node: ast.expr, call: bool) -> None:
        if isinstance(node, ast.Attribute):
            name = node.attr
            if isinstance(node.value, ast.Name) and node.value.id in ("self", "cls") and not call:
                return          # the project's own attribute
        elif isinstance(node, ast.Name) and call:
            name = node.id
        else:
            return
        if not _API.match(name):
            return
        category = next((c for prefix, c in _API_CATEGORY if name.startswith(prefix)), "device")
        self.hits.append((node.lineno, node.col_offset + 1, category, name))


def _defined_names(tree: ast.AST) -> set[str]:
    """Names the file defines itself (functions, classes): `def cudaMalloc(...)` in a shim is the project's own."""
    return {n.name for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}


def literal_findings(tree: ast.Module, findings: list[Finding], lines: list[str], rel: str,
                     rules: dict[str, Any], packages: dict[str, str]) -> list[Finding]:
    walker = _Walker(packages)
    walker.visit(tree)
    if not walker.hits:
        return []
    taken = {(f.line, f.category) for f in findings}
    own = walker.defined        # == _defined_names(tree): the walker skips no statement but an Enum's (walked there)
    out: list[Finding] = []
    for line, col, category, symbol in sorted(walker.hits):
        if (line, category) in taken or symbol in own:
            continue
        code, name = CODES[category]
        rule = rules.get(code)
        if rule is None:
            continue
        taken.add((line, category))
        text = lines[line - 1] if 0 < line <= len(lines) else ""
        out.append(Finding(
            code=code, name=name, category=category, severity="info", effort=rule.effort, path=rel, line=line,
            col=col, end_line=line, end_col=len(text.rstrip("\r\n")) + 1,
            message=rule.message.replace("{symbol}", symbol), substitution=rule.substitution, fix="none",
            source="static", symbol=symbol, data={"literal_net": True}))
    return out


def add_literals(findings: list[Finding], tree: ast.Module, lines: list[str], rel: str, rules: dict[str, Any],
                 packages: dict[str, str], text: str) -> list[Finding]:
    """`findings` with the net's findings added (the engine's backend context applied; suppressions honoured)."""
    from auditor.static.backends import apply_context, build_backend_context
    from auditor.static.crossfile import _ascend_package
    from auditor.suppress import Suppressions

    if not rules or _ascend_package(rel) or not isinstance(tree, ast.Module):
        return findings
    try:
        new = literal_findings(tree, findings, lines, rel, rules, packages)
    except RecursionError:
        return findings
    if not new:
        return findings
    new = apply_context(new, build_backend_context(tree, lines, sorted({f.line for f in new})), rel)
    new = [f for f in new if f.data.get("context") not in _OTHER_CODE]     # another backend's code: nothing to port
    suppressions = Suppressions.of(lines, text)
    new = [f for f in new if not suppressions.covers(f.line, f.end_line, f.code)]
    return sorted(findings + new, key=Finding.sort_key)
