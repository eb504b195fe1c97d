"""Flags derived from a finding and read later in the same file: `is_nccl = dist.get_backend() == "nccl"` ...
`if is_nccl:`, `HAS_FA = find_spec("flash_attn") is not None` ... `if HAS_FA:`, `self.use_te = is_te_available()`
... `if self.use_te:`. The definition carries the finding; each test that reads the flag is where the code
takes its CUDA-only branch, so it gets the same finding, with no fix (the change belongs at the definition)
and at most a warning (the test runs on Ascend; it takes another branch there).

Runs on the `ast` tree of files that already have findings, one walk per file."""
from __future__ import annotations

import ast
import re
from dataclasses import replace

from auditor.backend_words import backends_in_expression
from auditor.findings import Finding
from auditor.static.astutil import ast_dotted, name_or_self_attr   # one dotted-name reader for the ast passes
from auditor.static.host_values import HOST_SYNC_RULES
from auditor.static.firstparty import PACKAGE_RULES
from auditor.astnodes import walk_list

# values that make a yes/no flag: a comparison, and/or/not, or a call that asks a question
_FLAG_VALUES = (ast.Compare, ast.BoolOp, ast.UnaryOp, ast.Call)
_QUESTION = re.compile(r"^_?(?:is|has|have|can|supports?)_|_(?:available|supported|enabled)$|^(?:find_spec|"
                       r"RequirementCache|ModuleAvailableCache|package_available|module_available|compare_version)$")


def _is_flag_value(value: ast.expr) -> bool:
    if isinstance(value, ast.UnaryOp):
        return isinstance(value.op, ast.Not)
    if isinstance(value, ast.Call):
        func = value.func
        name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
        return bool(_QUESTION.search(name))
    return isinstance(value, _FLAG_VALUES)


def _asks_npu_too(value: ast.expr) -> bool:
    """`is_torch_npu_available() or is_torch_cuda_available()`: an `or` one of whose operands (not negated) asks about
    the NPU. The flag is True on Ascend, so a test that reads it takes the same branch there (tuned_pd28, LLamaTuner's
    `_is_fp16_available`); `cuda_ok and not is_npu()` stays a CUDA-only flag."""
    return isinstance(value, ast.BoolOp) and isinstance(value.op, ast.Or) and any(
        not (isinstance(v, ast.UnaryOp) and isinstance(v.op, ast.Not)) and "npu" in backends_in_expression(v)
        for v in value.values)



def _tests(scope: ast.AST):
    """The condition expressions anywhere under a scope, nested functions and methods included: they read a
    module flag as a global, a local one as a closure, `self.x` in every method of its class."""
    stack = list(ast.iter_child_nodes(scope))
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.If, ast.While, ast.IfExp, ast.Assert)):
            yield node.test
        elif isinstance(node, ast.comprehension):
            yield from node.ifs
        stack.extend(ast.iter_child_nodes(node))


def _reads(test: ast.expr):
    """Names and self attributes a test reads as a truth value (alone, under `not`, in and/or)."""
    if isinstance(test, ast.BoolOp):
        for value in test.values:
            yield from _reads(value)
    elif isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        yield from _reads(test.operand)
    else:
        key = name_or_self_attr(test)
        if key is not None:
            yield key, test


def derived_flag_findings(tree: ast.Module, findings: list[Finding]) -> list[Finding]:
    by_line: dict[int, list[Finding]] = {}
    for f in findings:
        by_line.setdefault(f.line, []).append(f)
    flags, commands = _definitions(tree, by_line)
    out = _flag_copies(flags, findings)
    if commands:
        out += _command_copies(commands, findings + out)
    if any(f.name in TOOL_RULES for f in findings):
        out += _argument_runs(tree, findings + out)
    return out


# Calls that run a command line: a path or name held in a variable runs where it is passed to one of these
RUNS_COMMAND = re.compile(r"^(?:subprocess\.(?:run|call|check_call|check_output|Popen|getoutput|getstatusoutput)|"
                           r"os\.(?:system|popen|exec\w*|spawn\w*)|asyncio\.create_subprocess_(?:exec|shell))$")
TOOL_RULES = frozenset({"nvidia-cli-tool"})


# a class that is the flash-attn path itself (`LlamaFlashAttention2`, `FlashAttnBackend`)
_FLASH_CLASS = re.compile(r"(?i)flash_?att(?:n|ention)")


def _definitions(tree: ast.Module, by_line: dict[int, list[Finding]]):
    """Flags (see the module docstring) and command variables (`smi = shutil.which("nvidia-smi")`) defined from a
    line with a finding, keyed by (scope, name)."""
    # (scope, flag name) -> (scope, definition line, findings on the definition's value); a `self.x` flag's scope
    # is its class, a local's its function, a module-level name's the whole file. One walk, cheap per node.
    flags: dict[tuple[int, str], tuple[ast.AST, int, list[Finding]]] = {}
    commands: dict[tuple[int, str], tuple[ast.AST, dict[int, list[Finding]]]] = {}
    stack: list[tuple[ast.AST, ast.AST, ast.AST | None]] = [(child, tree, None) for child in tree.body]
    while stack:
        node, scope, cls = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            stack.extend((child, node, cls) for child in node.body)
            continue
        if isinstance(node, ast.ClassDef):
            stack.extend((child, scope, node) if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef))
                         else (child, scope, None) for child in node.body)
            continue
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            key = name_or_self_attr(targets[0]) if len(targets) == 1 else None
            last = node.value.end_lineno or node.value.lineno
            tools = [f for line in range(node.value.lineno, last + 1) for f in by_line.get(line, ())
                     if f.name in TOOL_RULES] if key is not None and not key.startswith("self.") else []
            if tools and key is not None:
                # every binding kept: a run follows its latest one, which may sit in a nested block (review47 item 9)
                commands.setdefault((id(scope), key), (scope, {}))[1][node.lineno] = tools
            elif key is not None and any(line in by_line for line in range(node.value.lineno, last + 1)) \
                    and _is_flag_value(node.value) and not _asks_npu_too(node.value):
                defs = [f for line in range(node.value.lineno, last + 1) for f in by_line.get(line, ())
                        # `self.enabled = dtype == torch.bfloat16 and ...` reads a dtype; a precision question is a call
                        if (f.category != "precision" or isinstance(node.value, ast.Call))
                        # `cuda_applicable = ... and 'cuda' in str(dev)`: the device string is compared (and ported)
                        # where the flag is set; its reads hold no device string (heldout18, s15b)
                        and f.name != "cuda-device-string"
                        # `self.is_distrib = hvd.size() > 1`: the Horovod (or BytePS) calls are the change, not the
                        # branch a world size takes (deepmd-kit, t18a)
                        and f.name not in PACKAGE_RULES
                        # `ending = t[-2:].tolist() == [False, True]`: the host copy happens once, where the flag is
                        # set; a test of the Python bool syncs nothing (pd36, heldout30's whisper transcribe)
                        and f.name not in HOST_SYNC_RULES
                        # `cuda = torch.cuda.is_available()` ... `x if cuda else None`: the probe is renamed where
                        # it is called and every read follows (decision 4's reading of uses; heldout30 DocLayout,
                        # heldout32 yolov12 / tabicl; pd44)
                        and f.name != "torch-cuda-api"
                        # `XFORMERS_ENABLED = os.environ.get("XFORMERS_DISABLED") is None` ... `if XFORMERS_ENABLED:`
                        # (DINOv2's layers, copied widely): the switch is read once, where it is reported; the test
                        # reads no environment and the xformers import it gates has its own finding (tq55d)
                        and f.name != "attention-library-env"]
                where = cls if key.startswith("self.") and cls is not None else scope
                if defs and isinstance(cls, ast.ClassDef) and key.startswith("self.") and _FLASH_CLASS.search(cls.name) and \
                        all(f.name == "flash-attn-feature-check" for f in defs):
                    continue    # `self._flash_attn_uses_top_left_mask = not is_flash_attn_greater_or_equal_2_10()` in
                    # `GemmaFlashAttention2`: a flash-attn version quirk of the class that only runs with flash_attn
                    # installed; the check is reported where it is written, its reads add nothing (t11r)
                if defs and (not key.startswith("self.") or cls is not None):
                    flags[(id(where), key)] = (where, node.lineno, defs)
            continue
        if isinstance(node, ast.stmt):
            # compound statements: their bodies are in the same scope
            for field in ("body", "orelse", "finalbody", "handlers", "cases"):
                for child in getattr(node, field, ()) or ():
                    if isinstance(child, (ast.ExceptHandler, ast.match_case)):
                        stack.extend((c, scope, cls) for c in child.body)
                    else:
                        stack.append((child, scope, cls))
    return flags, commands


def _flag_copies(flags, findings: list[Finding]) -> list[Finding]:
    if not flags:
        return []
    out: list[Finding] = []
    seen = {(f.line, f.category) for f in findings}     # a line already reported in a category needs no copy
    for (_, key), (where, def_line, defs) in flags.items():
        for test in _tests(where):
            for name, node in _reads(test):
                if name != key or node.lineno == def_line:
                    continue
                out += _copies_at(node, defs, seen, f"flag `{key}` set on line {def_line}", gate=True)
    return out


def _copies_at(node: ast.expr, defs: list[Finding], seen: set, note: str, gate: bool = False) -> list[Finding]:
    """Each definition's finding again at the node that uses it, once per (line, category) in `seen`; no fix (the
    change is at the definition). A gate (a flag read as a truth value) is at most a warning."""
    out: list[Finding] = []
    for d in defs:
        if (node.lineno, d.category) in seen:
            continue
        seen.add((node.lineno, d.category))
        out.append(replace(
            d, severity="warning" if gate and d.severity == "error" else d.severity, line=node.lineno,
            col=node.col_offset + 1, end_line=node.end_lineno or node.lineno,
            end_col=(node.end_col_offset or node.col_offset) + 1, fix="none", data={},
            message=f"{d.message} ({note})"))
    return out


def _scope_nodes(scope: ast.AST):
    """The nodes of a scope, not those of nested functions or classes."""
    stack = list(ast.iter_child_nodes(scope))
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        yield node
        stack.extend(ast.iter_child_nodes(node))


def _argument_runs(tree: ast.Module, findings: list[Finding]) -> list[Finding]:
    """`nvcc = subprocess.check_output(` then `[which, 'nvcc']).decode()` on the next line: an NVIDIA tool named in a
    run's arguments below the call's first line runs at the call, which gets its finding on that line too (tk47)."""
    tools = [f for f in findings if f.name in TOOL_RULES]
    out: list[Finding] = []
    seen = {(f.line, f.category) for f in findings}
    for node in walk_list(tree):
        if not isinstance(node, ast.Call) or not RUNS_COMMAND.match(ast_dotted(node.func) or ""):
            continue
        spans = [(a.lineno, a.end_lineno or a.lineno) for a in [*node.args, *(k.value for k in node.keywords)]]
        defs = [f for f in tools if f.line > node.lineno and any(lo <= f.line <= hi for lo, hi in spans)]
        if defs:
            out += _copies_at(node, defs, seen, f"the command on line {defs[0].line}")
    return out


def _command_copies(commands, findings: list[Finding]) -> list[Finding]:
    """`smi = shutil.which("nvidia-smi")` ... `subprocess.run(\n[smi, "--query-gpu=..."], ...)`: the NVIDIA tool runs
    at the call, which gets the definition's finding on its first line (no fix: the change is the command)."""
    out: list[Finding] = []
    seen = {(f.line, f.category) for f in findings}
    for (_, key), (where, bindings) in commands.items():
        nodes = list(_scope_nodes(where))
        # a reused name is followed to a run only from its latest binding above the run: detectron2's collect_env
        # `nvcc = os.path.join(CUDA_HOME, "bin", "nvcc")` then `nvcc = subprocess.check_output("'{}' -V".format(nvcc),
        # shell=True)` runs nvcc (tk43, test105's ODISE copy); `nvcc = osp.join(cuda_home, "hip/bin/hipcc")` bound
        # just above a run runs hipcc, whatever the name holds elsewhere
        stores = [n.lineno for n in nodes if isinstance(n, ast.Name) and n.id == key and not isinstance(n.ctx, ast.Load)]
        for node in nodes:
            if not isinstance(node, ast.Call) or node.lineno <= min(bindings):
                continue
            def_line = max(line for line in stores if line < node.lineno)
            defs = bindings.get(def_line)
            if defs is None:
                continue
            name = ast_dotted(node.func)
            if name is None or not RUNS_COMMAND.match(name):
                continue
            if not any(isinstance(n, ast.Name) and n.id == key for arg in [*node.args, *node.keywords]
                       for n in walk_list(arg)):
                continue
            out += _copies_at(node, defs, seen, f"command `{key}` set on line {def_line}")
    return out
