"""Per-file analysis: read and decode, prefilter on trigger words, locate the statements that can match
with the fast `ast` parser, and run the libcst visitor only on those statements.

Cost model (see bench/bench_speed.py): libcst parsing plus position metadata dominates, so we pay it only
for the statements that contain a trigger word; a file without any trigger word is not parsed by libcst.
"""
from __future__ import annotations

import ast
import re
import bisect
from itertools import accumulate
import io
import sys
import tokenize
import warnings
from dataclasses import replace
from pathlib import Path
from typing import Any

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from auditor.astnodes import line_span, node_lines, walk_list
from auditor.findings import FileError, FileResult, Finding, without_fix
from auditor.project import analyze_project_file, project_kind
from auditor.project.cuda_source import (KERNEL_RE, cxx_name_lines, describe, inventory, no_code, plain_cpp_header,
                                         tensorrt_host_line)
from auditor.project.shell import lower_ascend_engine_starts
from auditor.rules import Rule, SymbolDetail
from auditor.static.vendor_dispatch import _MAX_BYTES as VENDOR_MAX_BYTES, RULE as VENDOR_RULE, \
    apply_vendor_dispatch, vendor_facts
from auditor.static.backends import (apply_context, as_info, build_backend_context, cuda_only_import_lines,
                                     imports_transfer_to_npu, under_transfer_to_npu, variable_with_npu)
from auditor.static.compiled import WORD_RE, CompiledRules
from auditor.static.cstwalk import walk
from auditor.static.host_paths import demote_reseeds, drop_host_paths, drop_platform_labels
from auditor.static.host_scopes import drop_host_scopes
from auditor.static.value_reads import apply_value_reads
from auditor.static.unselected_devices import apply_unselected_devices, cpu_fallback_defaults
from auditor.static.unreached_defs import mark_unnamed_guarded_uses
from auditor.static.device_values import on_device
from auditor.static.host_values import HOST_SYNC_RULES, cpu_ray_scopes, drop_host_factory_support_rows, on_host, \
    runs_once
from auditor.static.ort_only import drop_provider_arm_devices, lower_ort_only
from auditor.static.unresolved_extensions import extension_module_of, may_call_extension
from auditor.static.neutral_uses import drop_dtype_restores, drop_existence_probes, drop_host_conversion_hints, \
    drop_storage_casts, drop_precision_name_tables, \
    drop_math_backend_lists, \
    drop_host_model_optimizers, drop_namespace_calls, drop_overridden_bases, drop_replaced_autocasts, \
    drop_probe_result_flags, \
    drop_single_tensor_optimizers, \
    drop_type_references, drop_none_checked_type_tests, drop_covered_cudnn_determinism, drop_fake_kernel_dtypes, \
    drop_host_extension_twins, \
    drop_unread_tool_lookups, \
    drop_module_bindings, drop_versions_after_import, drop_forwarded_env_names, \
    drop_weightless_loader_dtypes, mark_disabled_autocast_devices, drop_disabled_autocast_imports, \
    lower_idle_autocast_decorators, lower_fp32_cuda_autocasts, mark_config_imports, \
    lower_loaded_driver_calls, lower_enabled_cuda_autocasts, drop_host_save_dtypes, drop_cast_host_float64, \
    drop_host_smoke_float64, \
    lower_parallel_type_tests, drop_ort_buffer_dtypes, lower_host_only_extensions
from auditor.static.host_side_values import drop_converted_class_constants, drop_flop_counter_doubles, \
    drop_host_test_float64, drop_raise_message_reads
from auditor.static.provider_catalogues import drop_provider_catalogues
from auditor.static.chosen_members import lower_cluster_environs, lower_label_members, lower_named_members
from auditor.static.report_rows import drop_report_only_reads
from auditor.static.patch_targets import (apply_cuda_twins, apply_flash_tables, apply_npu_rebinds, apply_patch_targets,
                                          drop_module_standins)
from auditor.static.npu_native import apply_npu_file, selects_ascend_devices, written_for_npu
from auditor.static.crossfile import summarize
from auditor.static.format_members import format_member_spans
from auditor.static.valueflow import OWN_CODES as FLOW_CODES, add_flow, spelled
from auditor.static.project_imports import TREE, with_facts
from auditor.project import called_scripts, cmake_calls, launched, local_builds, local_extras, makefile
from auditor.static.context import _WHOLE_FILE, HOLE, FileContext, adopt_local_refs, build_context
from auditor.static.star_names import bind_conventional_names, bind_star_names, may_use_conventional_names
from auditor.static import largefile
from auditor.static.flags import TOOL_RULES, derived_flag_findings
from auditor.static.gates import apply_gates
from auditor.static.flash_settings import drop_cuda_gated_switches, drop_flash_setting_keys, drop_plain_sdpa_switches
from auditor.static.inert_constructs import drop_inert_constructs
from auditor.static.training_tf32 import raise_training_tf32
from auditor.static.llama_cpp_options import drop_llama_cpp_flash_options
from auditor.static.dtype_requirements import CAST_NOTE, REQUIRED_NOTE
from auditor.static.visitor import MatchVisitor, RawHit
from auditor import suppress as _suppress
from auditor.suppress import Suppressions
from auditor.discover import MAX_FILE_BYTES, decode_source  # noqa: F401  (re-exported: the reader's limit and decoder)
from auditor.static.astutil import module_nodes, name_or_self_attr

SUPPRESS_RE, suppressed = _suppress.SUPPRESS_RE, _suppress.suppressed   # the names callers used here



def looks_binary(data: bytes) -> bool:
    return b"\x00" in data[:8192]


def _names_parameter(ctx: FileContext, node: cst.CSTNode, line: int) -> bool:
    """The hit is a bare name (tested, stored, handed on or called) that is, at its line, a parameter of the enclosing
    function and not the module imported under that name (FileContext.parameter_at). Attribute chains on such a
    parameter are left as they were: warp's `Device.__init__(self, runtime, ...)` calls `runtime.core.wp_cuda_*` like
    the module-level `runtime` does elsewhere in the file (house rule 6 on test18's warp-lang). A name the function
    assigns itself (FileContext.local_at) is its local whole, attribute chains included (tq37: FlagAI's
    `checkpoint = torch.load(...)` under a module-level DeepSpeed `checkpoint` import)."""
    if isinstance(node, cst.Call):
        node = node.func
    if isinstance(node, cst.Name) and node.value in ctx.aliases and ctx.parameter_at(node.value, line):
        return True
    head = node
    while isinstance(head, (cst.Attribute, cst.Call, cst.Subscript)):
        head = head.func if isinstance(head, cst.Call) else head.value
    return isinstance(head, cst.Name) and head.value in ctx.aliases and ctx.local_at(head.value, line)


def _fmt(template: str | None, **values: str | None) -> str | None:
    if template is None:
        return None
    for key, value in values.items():
        template = template.replace("{" + key + "}", value if value is not None else "")
    return template


def _nearest_detail(rule: Rule, hit: RawHit) -> tuple[str | None, SymbolDetail | None, str]:
    """The symbol entry for a hit: its own, else (for a qualified name below the matched pattern) the nearest
    ancestor's with the rest of the name, else the matched pattern's (string rules key entries by pattern)."""
    detail = rule.detail(hit.symbol)
    if detail is not None:
        return hit.symbol, detail, ""
    if hit.value and hit.symbol.startswith(hit.value + "."):
        name = hit.symbol
        while len(name) > len(hit.value):
            name = name.rsplit(".", 1)[0]
            detail = rule.detail(name)
            if detail is not None:
                return name, detail, hit.symbol[len(name):]
        return None, None, ""
    if hit.value:
        detail = rule.detail(hit.value)
        if detail is not None:
            return hit.value, detail, ""
    return None, None, ""


_COMPOUND = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.For, ast.AsyncFor, ast.While, ast.If,
             ast.With, ast.AsyncWith, ast.Try) + ((ast.TryStar,) if hasattr(ast, "TryStar") else ())
_TRY = (ast.Try,) + ((ast.TryStar,) if hasattr(ast, "TryStar") else ())
# Statements this short are parsed whole; longer compound statements are split into header and body.
_SMALL = 3
# An if / elif / else chain of one-statement branches up to this long is parsed whole (`_conversion_chain`).
_CHAIN_LINES = 24
# Simple statements on lines longer than this are parsed one by one (columns from the `ast` pass).
_LONG_LINE = 2000
_BATCH = 200


class _Slicer:
    """Cuts a module into the smallest pieces worth parsing: each relevant simple statement, and the
    header of a relevant compound statement (`with torch.autocast(...):`, decorators + `def`) with a
    `pass` body; bodies are searched statement by statement. Clause lines that cannot stand alone
    (`elif x:`, `except E:`) make the whole statement one piece."""

    def __init__(self, lines: list[str], relevant: list[int]) -> None:
        self.lines = lines
        self.relevant = relevant
        self.cut_long_lines = True

    def _hit(self, start: int, end: int) -> bool:
        i = bisect.bisect_left(self.relevant, start)
        return i < len(self.relevant) and self.relevant[i] <= end

    def slices(self, body: list[ast.stmt], depth: int = 0, loops: int = 0):
        """(first line, last line, indented, body indent or None, enclosing loops[, (col, end col)]) for
        each piece."""
        group: list = []          # statements cut from one very long line, parsed together in batches

        def flush():
            if group:
                line, first, last = group[0][0], group[0][1], group[-1][2]
                group.clear()
                return [(line, line, False, None, loops, (first, last))]
            return []

        for stmt in body:
            start = min([stmt.lineno] + [d.lineno for d in getattr(stmt, "decorator_list", ())])
            end = stmt.end_lineno or stmt.lineno
            if self.cut_long_lines and not isinstance(stmt, _COMPOUND) and start == end \
                    and len(self.lines[start - 1]) > _LONG_LINE and stmt.end_col_offset is not None:
                # many statements on one very long line: parse them in batches of _BATCH (libcst's cost
                # grows faster than the size of what it parses; 170k `x.cuda()` on one line)
                if group and (group[0][0] != start or len(group) >= _BATCH):
                    yield from flush()
                if self._hit(start, end) or group:
                    group.append((start, stmt.col_offset, stmt.end_col_offset))
                continue
            yield from flush()
            yield from self._slices_one(stmt, depth, loops)
        yield from flush()

    def _slices_one(self, stmt: ast.stmt, depth: int, loops: int):
        start = min([stmt.lineno] + [d.lineno for d in getattr(stmt, "decorator_list", ())])
        end = stmt.end_lineno or stmt.lineno
        if not self._hit(start, end):
            return
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant) and isinstance(stmt.value.value, str):
            return      # a docstring: never a finding
        if not isinstance(stmt, _COMPOUND) or end - start < _SMALL or _conversion_chain(stmt, end - start):
            yield start, end, depth > 0, None, loops
            return
        yield from self._compound(stmt, start, end, depth, loops)

    def _after_clause(self, block: list[ast.stmt]) -> bool:
        """`else: raise ...`, `except E: pass`, `elif c: x = 1`: the block's first statement shares its line with
        the clause keyword, so that line cannot be parsed alone (gritlm's `else: raise NotImplementedError(...)`)."""
        if not block:
            return False
        first = block[0]
        return bool(self.lines[first.lineno - 1].encode("utf-8")[:first.col_offset].strip())

    def _compound(self, stmt: Any, start: int, end: int, depth: int, loops: int):   # a statement with a body
        blocks = [stmt.body]
        clause_heads: list[tuple[int, int]] = []      # `elif cond:` headers, which cannot stand alone
        node = stmt
        while isinstance(node, ast.If) and len(node.orelse) == 1 and isinstance(node.orelse[0], ast.If) \
                and self.lines[node.orelse[0].lineno - 1].lstrip().startswith("elif"):
            node = node.orelse[0]
            clause_heads.append((node.lineno, _first_line(node.body[0]) - 1))
            blocks.append(node.body)
        blocks += [getattr(node, "orelse", []), getattr(stmt, "finalbody", [])]
        blocks += [h.body for h in getattr(stmt, "handlers", [])]
        header_end = _first_line(stmt.body[0]) - 1
        covered = set(range(start, header_end + 1))
        for first, last in clause_heads:
            covered.update(range(first, last + 1))
        for block in blocks:
            for child in block:
                covered.update(range(_first_line(child), (child.end_lineno or child.lineno) + 1))
        # `else:`, `except E:`, `finally:` lines (and continuations of clause headers): not comments or blanks
        clause_lines = [n for n in range(start, end + 1) if n not in covered
                        and self.lines[n - 1].strip() and not self.lines[n - 1].lstrip().startswith("#")]
        if header_end < start or any(self._hit(a, b) for a, b in clause_heads) \
                or any(self._hit(n, n) for n in clause_lines) or any(self._after_clause(b) for b in blocks[1:]):
            yield start, end, depth > 0, None, loops      # cannot be split: parse it whole
            return
        if self._hit(start, header_end) and not isinstance(stmt, _TRY):   # `try:` holds no code
            indent = self.lines[stmt.body[0].lineno - 1][:stmt.body[0].col_offset]
            yield start, header_end, depth > 0, indent, loops   # the visitor sees the loop node itself
        looping = isinstance(stmt, (ast.For, ast.AsyncFor, ast.While))
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            loops = 0                                     # a def in a loop body runs when called
        for i, block in enumerate(blocks):
            yield from self.slices(block, depth + 1, loops + (looping and i == 0))


# summary keys of the calls the tree passes check against another file (make, cmake, `pip install -e .[extra]`)
_CALL_KEYS = (makefile.SUMMARY_KEY, cmake_calls.SUMMARY_KEY, local_extras.SUMMARY_KEY, launched.SUMMARY_KEY,
              local_builds.SUMMARY_KEY, called_scripts.SUMMARY_KEY)


def _call_text(data: bytes, rel: str) -> bytes:
    """The text a file's recorded calls count their lines through: a notebook's code lines (t19c: its `!python` /
    `%run` launches), any other file's bytes."""
    if not rel.endswith(".ipynb"):
        return data
    from auditor.project.notebook import notebook_code_lines

    try:
        return "\n".join(notebook_code_lines(data.decode("utf-8", errors="replace"))).encode("utf-8")
    except ValueError:
        return data


def _conversion_chain(stmt: ast.stmt, length: int) -> bool:
    """`if dtype == "bfloat16": data_type = torch.bfloat16` / `elif ...` / `else: ...`, each branch one simple
    statement: parsed whole like a short statement, so the visitor reads each branch with its test (a name-to-dtype
    conversion, policy (a), whatever the chain's length; t11z, TGI's server.py)."""
    if not isinstance(stmt, ast.If) or length > _CHAIN_LINES:
        return False
    node: ast.stmt = stmt
    while isinstance(node, ast.If):
        if len(node.body) != 1 or isinstance(node.body[0], _COMPOUND):
            return False
        if len(node.orelse) == 1 and isinstance(node.orelse[0], ast.If):
            node = node.orelse[0]
            continue
        return len(node.orelse) <= 1 and not any(isinstance(s, _COMPOUND) for s in node.orelse)
    return False


def _flag_reading_lines(tree: ast.Module, lines: list[str], findings: list, relevant: list[int],
                        imports: bool = False) -> list[int]:
    """`relevant` plus every line that mentions a name assigned where a finding is (a flag's later reads); with
    `imports`, also a name imported there (the uses value flow follows, auditor/static/valueflow.py)."""
    found = {f.line for f in findings}
    names: set[str] = set()
    for node in module_nodes(tree):
        if imports and isinstance(node, (ast.Import, ast.ImportFrom)):
            module = getattr(node, "module", None) or ""
            names.update((a.asname or a.name).split(".")[0] for a in node.names if a.name != "*" and (
                node.lineno in found or spelled(a.name) is not None or spelled(module) is not None))
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None and \
                any(line in found for line in node_lines(node)):
            for target in (node.targets if isinstance(node, ast.Assign) else [node.target]):
                if isinstance(target, ast.Name):
                    names.add(target.id)
                elif isinstance(target, ast.Attribute):
                    names.add(target.attr)
    if not names:
        return relevant
    word = re.compile(r"\b(?:" + "|".join(map(re.escape, sorted(names))) + r")\b")
    return sorted(set(relevant) | {i for i, text in enumerate(lines, 1) if word.search(text)})


def _async_keywords_renamed(text: str) -> str | None:
    """`text` with each `async=` keyword argument (`x.cuda(device, async=True)`) renamed to `asyn_=`, or None when
    it has none. Found by the tokenizer: `async` after `(` or `,` and before `=`, never in a string or comment."""
    if "async" not in text:
        return None
    try:
        tokens = [t for t in tokenize.generate_tokens(io.StringIO(text).readline)
                  if t.type not in (tokenize.NL, tokenize.COMMENT)]
    except (tokenize.TokenError, SyntaxError):
        return None
    spots = [tok.start for before, tok, after in zip(tokens, tokens[1:], tokens[2:])
             if tok.type == tokenize.NAME and tok.string == "async" and before.string in ("(", ",")
             and after.string == "="]
    if not spots:
        return None
    lines = text.splitlines(keepends=True)
    for row, col in spots:
        lines[row - 1] = lines[row - 1][:col] + "asyn_" + lines[row - 1][col + 5:]
    return "".join(lines)


def _print_statements_called(text: str) -> str | None:
    """`text` with each Python 2 print statement (`print 'Iteration', it`, `print >>f, x`, a bare `print`) read as a
    call, or None when it has none: the space after `print` becomes `(` (a `>>` is dropped) and `)` closes the logical
    line's last token, so the statement's own columns and every other line stay the file's (Caffe's example notebooks)."""
    if "print" not in text:
        return None
    try:
        tokens = [t for t in tokenize.generate_tokens(io.StringIO(text).readline)
                  if t.type not in (tokenize.NL, tokenize.COMMENT)]
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return None
    starts = (tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT)
    edits = []      # (row, col, old length, new text), applied from the end
    for i, tok in enumerate(tokens[:-1]):
        after = tokens[i + 1]
        if tok.type != tokenize.NAME or tok.string != "print" or (i and tokens[i - 1].type not in starts) \
                or after.string in ("(", "=", ".", ",", ")", "[", ":") or after.type == tokenize.OP and \
                after.string not in (">>", "-", "+", "~", "{", "`"):
            continue
        end = next((j for j in range(i + 1, len(tokens)) if tokens[j].type in (tokenize.NEWLINE, tokenize.ENDMARKER)),
                   len(tokens))
        last = tokens[end - 1]
        if after.type in (tokenize.NEWLINE, tokenize.ENDMARKER):
            edits.append((*tok.end, 0, "()"))
            continue
        edits.append((*last.end, 0, ")"))
        if after.string == ">>":
            edits.append((*after.start, 2, "  "))
        if tok.end[0] == after.start[0] and after.start[1] > tok.end[1]:
            edits.append((*tok.end, 1, "("))
        else:
            edits.append((*tok.end, 0, "("))
    if not edits:
        return None
    lines = text.splitlines(keepends=True)
    for row, col, size, new in sorted(edits, reverse=True):
        lines[row - 1] = lines[row - 1][:col] + new + lines[row - 1][col + size:]
    return "".join(lines)


_PATCH_LINE_RE = re.compile(r"^[+-](?=[ \t])", re.M)


def _patch_marks_read(text: str) -> str | None:
    """`text` with the marks of a unified diff pasted into the file read as the patch meant them, or None when it has
    none: a line starting `+` and indentation (tt-pytorch's sentiment/train.py: `+        print(...)` under an `if`)
    keeps its code with the `+` read as a space, a line starting `-` and indentation (the patch's removed code) is
    read as a comment. Columns and line numbers stay those of the file."""
    if not _PATCH_LINE_RE.search(text):
        return None
    return _PATCH_LINE_RE.sub(lambda m: " " if m.group() == "+" else "#", text)


def _line_numbers(text: str, offsets: list[int]) -> set[int]:
    """1-based line numbers of character offsets in text."""
    if not offsets:
        return set()
    starts = [0] + [m.end() for m in _NEWLINE_RE.finditer(text)] if len(offsets) > 64 else None
    if starts is None:
        return {text.count("\n", 0, o) + 1 for o in offsets}
    return {bisect.bisect_right(starts, o) for o in offsets}


_NEWLINE_RE = re.compile("\n")


def _word_lines(lines: list[str], text: str, wanted: set[str]) -> set[int]:
    """The 1-based numbers of the lines (`lines`: text.splitlines(keepends=True)) where WORD_RE finds one of the
    `wanted` words: one search of the whole text. WORD_RE's words are the runs of ASCII letters, digits and `_`,
    less their leading digits (a run of digits only is none), so a wanted word is found where it ends a run and
    only digits stand before it in that run."""
    if not wanted:
        return set()
    found = re.compile(r"(?<![A-Za-z0-9_])[0-9]*(?:" + "|".join(map(re.escape, sorted(wanted))) + r")(?![A-Za-z0-9_])")
    ends = list(accumulate(map(len, lines)))
    return {bisect.bisect_right(ends, m.start()) + 1 for m in found.finditer(text)}


def _first_line(stmt: ast.stmt) -> int:
    return min([stmt.lineno] + [d.lineno for d in getattr(stmt, "decorator_list", [])])


_DEVICE_TYPE_NAMES = {"type", "device_type"}


def _device_type(node: ast.expr) -> bool:
    """`x.device.type`, `t.device_type`, `device_type`: a value the runtime sets to "npu" on Ascend; and
    `dist.get_backend()`, which answers "hccl" there."""
    if isinstance(node, ast.Call) and isinstance(node.func, (ast.Attribute, ast.Name)):
        return (node.func.attr if isinstance(node.func, ast.Attribute) else node.func.id) == "get_backend"
    return (isinstance(node, ast.Attribute) and node.attr in _DEVICE_TYPE_NAMES) or \
        (isinstance(node, ast.Name) and node.id in _DEVICE_TYPE_NAMES)


def _npu_lines(tree: ast.AST) -> list[int]:
    """Lines that use torch.npu / torch_npu (MindSpeed's `_set_cuda_rng_state` sets the state of
    `torch.npu.default_generators[idx]`): a helper named for CUDA whose body has one is the NPU implementation (t11f)."""
    return sorted({node.lineno for node in module_nodes(tree)
                   if isinstance(node, ast.Attribute) and node.attr == "npu" and isinstance(node.value, ast.Name) and
                   node.value.id == "torch" or isinstance(node, ast.Name) and node.id == "torch_npu"})


def _drop_neutral_helpers(findings: list, tree: ast.AST) -> list:
    """NPU039 reads only a helper's name; where the helper is defined in the same file and nothing CUDA-specific is
    found in its body (opencompass' `DataCollatorWithPaddingAndCuda` pads and calls `batch.to(self.device)`), the
    name is all there is: its calls are not reported. Any finding in the body (`nvcc` in `get_cuda_bare_metal_version`,
    a torch.cuda call) keeps them, unless the body uses torch.npu / torch_npu: then it is the NPU implementation
    under a CUDA name (MindSpeed's `_set_cuda_rng_state`), and its calls are not reported either."""
    spans: dict[str, tuple[int, int]] = {}
    for node in module_nodes(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            spans.setdefault(node.name, line_span(node))
    if not spans:
        return findings

    npu = _npu_lines(tree)
    npu_bodies = {name for name, (first, last) in spans.items()
                  if bisect.bisect_left(npu, first) < bisect.bisect_right(npu, last)}

    def neutral(f) -> bool:
        name = (f.symbol or "").rsplit(".", 1)[-1]
        span = spans.get(name)
        return span is not None and (name in npu_bodies or
                                     not any(g is not f and span[0] <= g.line <= span[1] for g in findings))

    return [f for f in findings if f.name != "cuda-helper-call" or not neutral(f)]


def _tensor_device_text(node: ast.expr) -> bool:
    """`str(x.device)`: the text of a tensor's device, which the runtime sets ("npu:0" on Ascend)."""
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "str" and \
        len(node.args) == 1 and isinstance(node.args[0], ast.Attribute) and node.args[0].attr == "device"


_SAVED_LOCATION_NOTE = ("a map_location key names where the checkpoint's tensors were saved: right for checkpoints "
                        "saved on CUDA; those saved on Ascend carry \"npu:0\" and are left where they were saved "
                        "unless the map has an \"npu:0\" key too")
_TABLE_NOTE = ("an entry of a table of option names (its key names it): the option that picks it chooses; keep the "
               "entry and give the NPU a choice that works there")
_PROBE_NOTE = (" (a probe: `hasattr` / `getattr` asks whether the CUDA-only name exists; on Ascend the answer "
               "differs from CUDA's, so the code takes another path or calls a name that fails: port the probe and "
               "the branch it opens together)")


def _kernel_lines(finding: Finding, lines: list[str], suppressions: Suppressions) -> list[Finding]:
    """One more finding of a CUDA source string per `__global__` kernel it defines on a later line (kymatio's
    `kernel = \"\"\" ... __global__ void periodize(const ${dtype}2 *input, ...)`): the kernel a port rewrites is
    named where it is written, beside the string's own finding on its first line (s15a). Likewise per `#define` of
    a macro whose body reads CUDA's thread or block indices (the `CUDA_KERNEL_LOOP` grid-stride loop of CuPy kernel
    modules: involution, SAN; t32c)."""
    out = []
    last = min(finding.end_line, len(lines))
    for number in range(finding.line + 1, last + 1):
        m = KERNEL_RE.search(lines[number - 1])
        what = "kernel"
        if m is None:
            m = _CUDA_MACRO_RE.search(lines[number - 1])
            what = "macro"
            if m is not None and not _CUDA_INDEX_RE.search(_macro_text(lines, number, last)):
                m = None
        if m is None or suppressions.covers(number, number, finding.code):
            continue
        out.append(replace(finding, line=number, col=m.start() + 1, end_line=number, end_col=m.end() + 1,
                           symbol=m.group(1), message=f"{finding.message} (CUDA {what} `{m.group(1)}`)"))
    return out


def _at_line_of(finding: Finding, lines: list[str], pattern: str) -> Finding:
    """A string rule's finding on a multi-line literal, moved to the first line of the literal that holds `pattern`
    (a regular expression; the rule's `at_line_of`): the element a port rewrites, where it is written (tk47)."""
    regex = re.compile(pattern)
    for number in range(finding.line, min(finding.end_line, len(lines)) + 1):
        m = regex.search(lines[number - 1])
        if m is not None and number > finding.line:
            return replace(finding, line=number, col=m.start() + 1, end_line=number, end_col=m.end() + 1)
        if m is not None:
            break
    return finding


_CUDA_MACRO_RE = re.compile(r"^\s*#\s*define\s+(\w+)")
_CUDA_INDEX_RE = re.compile(r"\b(?:threadIdx|blockIdx|blockDim|gridDim)\.[xyz]\b")


def _macro_text(lines: list[str], number: int, last: int) -> str:
    """A `#define` line with the lines its trailing backslashes continue it on (up to line `last`)."""
    text = [lines[number - 1]]
    while text[-1].rstrip().endswith("\\") and number < last:
        number += 1
        text.append(lines[number - 1])
    return "\n".join(text)


def _as_probe(finding: Finding) -> Finding:
    """A finding on a name a probe asks about (`hasattr(torch.cuda, "mem_get_info")`): at most a warning (policy
    clause `differs`), never rewritten (t14l)."""
    data = {k: v for k, v in finding.data.items() if k != "replace"}
    severity = "warning" if finding.severity == "error" else finding.severity
    return replace(finding, severity=severity, fix="none", data=data, message=finding.message + _PROBE_NOTE)


_COMPARED_NOTE = (" (compared with a value the code or its user sets, not the runtime's device type: on Ascend the "
                  "other branch runs; add \"npu\" where the CUDA branch is meant)")
_FALLBACK_NOTE = (" (a device type tested against both \"cuda\" and \"cpu\": on Ascend the branch the code keeps for "
                  "other devices runs, which raises nothing; add \"npu\" where the CUDA branch is meant)")


def _chosen_devices(tree: ast.AST) -> set[str]:
    """Names the file binds only to a `torch.device(...)` it builds (`device = torch.device(device_type)` from its
    own CUDA probe or option, rvc's train.py), never to a tensor's `.device`: their `.type` is the code's choice."""
    built: set[str] = set()
    runtime: set[str] = set()
    assigned: set[int] = set()      # the `self.x` targets of the single assignments read below
    stored: list[ast.Attribute] = []
    for node in module_nodes(tree):
        name = name_or_self_attr(node.targets[0]) if isinstance(node, ast.Assign) and len(node.targets) == 1 else None
        if isinstance(node, ast.Assign) and name is not None:
            value = node.value
            assigned.add(id(node.targets[0]))
            if isinstance(value, ast.Call) and (getattr(value.func, "attr", None) or getattr(value.func, "id", None)) \
                    == "device":
                built.add(name)
            else:
                runtime.add(name)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            runtime.add(f"self.{node.name}")       # a `device` property or method: not the attribute set here
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
            stored.append(node)
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.For, ast.withitem, ast.NamedExpr)):
            # `device, _ = init_process_group()`, `with ... as device`: another binding the file does not build
            targets = node.targets if isinstance(node, ast.Assign) else \
                [node.optional_vars] if isinstance(node, ast.withitem) else [node.target]
            runtime.update(n.id for t in targets if t is not None for n in walk_list(t) if isinstance(n, ast.Name))
    # `model.device = x`, `self.device, rank = ...`: an attribute of that name set another way too
    runtime.update(f"self.{n.attr}" for n in stored if id(n) not in assigned)
    # a parameter holds the caller's device: a chosen one only when every call of its function in the file passes a
    # built device there (rvc's `run(0, n_gpus, device)`, or `mp.Process(target=run, args=(..., device))` and
    # `mp.spawn(run, args=(...))`, which prepends the rank); a function nothing here calls gets any device (TorchEasyRec)
    calls: dict[str, list[tuple[list[ast.expr], list[ast.keyword]]]] = {}
    for node in module_nodes(tree):
        if not isinstance(node, ast.Call):
            continue
        callee = getattr(node.func, "attr", None) or getattr(node.func, "id", None)
        if isinstance(callee, str):
            calls.setdefault(callee, []).append((list(node.args), list(node.keywords)))
        keywords = {k.arg: k.value for k in node.keywords}
        target = keywords.get("target") or (node.args[0] if callee == "spawn" and node.args else None)
        handed = keywords.get("args")
        if isinstance(target, ast.Name) and isinstance(handed, ast.Tuple):
            rank: list[ast.expr] = [ast.Constant(0)] if callee == "spawn" else []
            calls.setdefault(target.id, []).append((rank + list(handed.elts), []))
    for fn in module_nodes(tree):
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        params = [a.arg for a in (*fn.args.posonlyargs, *fn.args.args)]
        params = params[1:] if params[:1] in (["self"], ["cls"]) else params
        for a in (*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs):
            if a.arg not in built - runtime:
                continue
            at = params.index(a.arg) if a.arg in params else None
            passed = [next((k.value for k in keywords if k.arg == a.arg), None) if at is None or at >= len(args)
                      else args[at] for args, keywords in calls.get(fn.name, [])]
            if not passed or not all(isinstance(v, ast.Name) and v.id in built for v in passed):
                runtime.add(a.arg)
    return built - runtime




def _chosen_device_type(node: ast.expr, chosen: set[str]) -> bool:
    """`device.type` (or `self.device.type`) of a name in `_chosen_devices`."""
    return isinstance(node, ast.Attribute) and node.attr == "type" and name_or_self_attr(node.value) in chosen


def _compared_literals(tree: ast.AST, lines: list[str]) -> dict[tuple[int, int], str]:
    """{(line, 1-based character column): note} of each string literal compared with something other than a
    device type (`sys.argv[1] == "cuda"`, `args.device in ("cuda", "cpu")`): the value may come from
    the user, and rewriting the literal changes which input matches."""
    from auditor.static.astutil import module_nodes as _walk

    out: dict[tuple[int, int], str] = {}
    chosen: set[str] | None = None      # read once, and only for a file that compares a device type
    fallbacks: set[int] | None = None
    asserted: set[int] | None = None
    for node in _walk(tree):      # the node list apply_gates reads too
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
                node.func.attr in ("startswith", "endswith") and len(node.args) == 1 and \
                not _device_type(node.func.value) and not _tensor_device_text(node.func.value):
            node = ast.Compare(left=node.func.value, ops=[ast.Eq()], comparators=[node.args[0]])   # `device.startswith("cuda")`
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "__contains__" \
                and len(node.args) == 1 and not node.keywords and not _device_type(node.func.value):
            # `device.__contains__("cuda")`: `"cuda" in device` spelt as a call (heldout44's echomimic_v2)
            node = ast.Compare(left=node.args[0], ops=[ast.In()], comparators=[node.func.value])
        if not isinstance(node, ast.Compare):
            continue
        sides = [node.left, *node.comparators]
        built = [_built_device_literal(s) for s in sides]     # `self.torch_device == torch.device("cuda")`
        if any(built):
            asserted = {id(x) for a in _walk(tree) if isinstance(a, ast.Assert) for x in walk_list(a.test)} \
                if asserted is None else asserted
            if any(_runtime_device(s) for s in sides) or id(node) in asserted:
                continue        # `x.device == torch.device("cuda")`: the runtime's; an assert checks a result
            sides = [b or s for b, s in zip(built, sides)]
        note = _COMPARED_NOTE
        others = [s for s in sides if not isinstance(s, (ast.Constant, ast.JoinedStr, ast.Tuple, ast.List, ast.Set))]
        if others and all(_device_type(s) for s in others):
            chosen = _chosen_devices(tree) if chosen is None else chosen
            if not any(_chosen_device_type(s, chosen) for s in others):
                fallbacks = _other_device_fallbacks(tree) if fallbacks is None else fallbacks
                if id(node) not in fallbacks:
                    continue
                note = _FALLBACK_NOTE
        for side in sides:
            items = side.elts if isinstance(side, (ast.Tuple, ast.List, ast.Set)) else [side]
            for item in items:
                if isinstance(item, ast.JoinedStr) or (isinstance(item, ast.Constant) and isinstance(item.value, str)):
                    text = lines[item.lineno - 1] if 0 < item.lineno <= len(lines) else ""
                    col = len(text.encode("utf-8")[:item.col_offset].decode("utf-8", errors="replace"))
                    out[(item.lineno, col + 1)] = note
    return out


def _built_device_literal(node: ast.expr) -> ast.Constant | None:
    """The string of `torch.device("cuda")` (a device the comparison builds), else None."""
    if isinstance(node, ast.Call) and (getattr(node.func, "attr", None) or getattr(node.func, "id", None)) == "device" \
            and len(node.args) == 1 and not node.keywords and isinstance(node.args[0], ast.Constant) and \
            isinstance(node.args[0].value, str):
        return node.args[0]
    return None


def _runtime_device(node: ast.expr) -> bool:
    """`x.device` of a tensor or module (not `self.device`, which the code sets), or a device type."""
    return _device_type(node) or isinstance(node, ast.Attribute) and node.attr == "device" and \
        not (isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"))


def _both_members(node: ast.expr) -> bool | None:
    """For `<device type> in ["cuda", "cpu"]` (or `not in`, a tuple or set, more members allowed): what the test
    answers for an NPU's type; None for any other test."""
    negated = False
    while isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        node, negated = node.operand, not negated
    if not (isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], (ast.In, ast.NotIn))
            and _device_type(node.left) and isinstance(node.comparators[0], (ast.List, ast.Tuple, ast.Set))):
        return None
    words = {e.value for e in node.comparators[0].elts if isinstance(e, ast.Constant) and isinstance(e.value, str)}
    if not {"cuda", "cpu"} <= words or "npu" in words:
        return None
    return isinstance(node.ops[0], ast.NotIn) != negated


def _inner_compare(node: ast.expr) -> ast.expr:
    while isinstance(node, ast.UnaryOp):
        node = node.operand
    return node


def _raises(body: list[ast.stmt]) -> bool:
    return any(isinstance(n, (ast.Raise, ast.Assert)) for stmt in body for n in walk_list(stmt))


def _other_device_fallbacks(tree: ast.AST) -> set[int]:
    """ids of the comparisons `<device type> [not] in ["cuda", "cpu"]` that only pick the branch kept for other
    devices (UVR's `if not x.device.type in ["cuda", "cpu"]: x = x.cpu()`, MPS-style): the test is an `if`'s, or
    sets a flag that only `if` tests read, and the branch an NPU takes raises nothing. A test in an assert, a
    conditional expression or an argument keeps its error: on Ascend it answers for CUDA."""
    out: set[int] = set()
    for scope in module_nodes(tree):
        if not isinstance(scope, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        nodes = walk_list(scope)
        flags: dict[str, ast.expr] = {}
        for node in nodes:
            if isinstance(node, ast.If) and (npu := _both_members(node.test)) is not None:
                if not _raises(node.body if npu else node.orelse):
                    out.add(id(_inner_compare(node.test)))
            elif isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) \
                    and _both_members(node.value) is not None:
                flags[node.targets[0].id] = node.value
        for name, value in flags.items():
            reads = [n for n in nodes if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load)]
            tests = [n for n in nodes if isinstance(n, ast.If) and
                     getattr(_inner_compare(n.test), "id", None) == name]
            if not tests or len(tests) != len(reads):
                continue
            npu = _both_members(value)
            if not any(_raises(t.body if npu != isinstance(t.test, ast.UnaryOp) else t.orelse) for t in tests):
                out.add(id(_inner_compare(value)))
    return out


def _first_body_word(lines: list[str], end: int) -> str:
    """`raise` / `return` when the first statement after line `end` (a compound statement's header) starts with
    it, else `pass`."""
    for line in lines[end:end + 20]:
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        word = stripped.split(None, 1)[0].split("(", 1)[0]
        return word if word in ("raise", "return") else "pass"
    return "pass"


class _SliceUnparsable(Exception):
    def __init__(self, start: int, end: int) -> None:
        super().__init__(f"lines {start}-{end}")
        self.start, self.end = start, end


class StaticEngine:
    """Holds the compiled rules; analyze one file at a time (cheap to create once per worker process)."""

    def __init__(self, rules: tuple[Rule, ...], product: str = "a2",
                 coverage_apis: dict[str, dict] | None = None, max_bytes: int = MAX_FILE_BYTES,
                 slicing: bool = True, chunked_above: int = largefile.CHUNKED_ABOVE,
                 piece_chars: int = largefile.PIECE_CHARS) -> None:
        self.product = product
        self.chunked_above = chunked_above   # characters above which the `ast` pass reads pieces (largefile.py)
        self.piece_chars = piece_chars
        self.slicing = slicing   # False parses every file whole: the reference the slicing is tested against
        self._full_tree: tuple[ast.AST, str] | None = None     # the last file's whole `ast` tree (_add_vendor_facts)
        self.max_bytes = max_bytes
        extra: dict[str, Rule] = {}
        cov_rules = {kind: r for r in rules for kind in r.match.get("coverage", ())}
        if cov_rules and coverage_apis:
            from dataclasses import replace

            from auditor.rules import SymbolDetail

            by_kind: dict[str, dict[str, dict]] = {}
            for name, info in coverage_apis.items():   # NPU501 (definite no) or NPU502 (unverified)
                by_kind.setdefault(info.get("coverage", "api"), {})[name] = info
            for kind, apis in by_kind.items():
                if (base := cov_rules.get(kind)) is None:
                    continue
                rule = replace(base, symbols={
                    name: SymbolDetail(message=info.get("message"), substitution=info.get("substitution"))
                    for name, info in apis.items()})
                extra.update({name: rule for name in apis})
        self.compiled = CompiledRules.build(rules, extra_exact=extra)
        self._flow_rules = {r.code: r for r in rules if r.code in FLOW_CODES}
        # the reading of a `.cu` file that is TensorRT host code (cuda_source.tensorrt_host_line)
        self._tensorrt_rule = next((r for r in rules if "tensorrt-host" in r.match.get("cuda_source", ())), None)

    # -- entry points --------------------------------------------------------------------------

    def analyze_path(self, path: Path, rel: str) -> FileResult:
        from auditor.discover import SourceError, read_source

        try:
            data, _ = read_source(path, self.max_bytes)      # regular files only, bounded read
        except SourceError as exc:
            return FileResult(rel, error=FileError(rel, exc.kind, exc.message))
        except OSError as exc:
            return FileResult(rel, error=FileError(rel, "unreadable", exc.strerror or str(exc)))
        return self.analyze_bytes(data, rel)

    @staticmethod
    def notebook_fallback_defaults(findings: list[Finding], code: str) -> list[Finding]:
        """A notebook's "cuda" defaults that a later cell sends to the CPU, read over the Python of all its cells
        (unselected_devices.cpu_fallback_defaults); here so that the notebook reader (auditor.project, a layer below
        this package) reaches it through the engine it is handed."""
        return cpu_fallback_defaults(findings, code)

    def analyze_bytes(self, data: bytes, rel: str) -> FileResult:
        try:
            result = self._analyze(data, rel)
            full = self._full_tree
            # the whole file's tree, for the readers that would parse the bytes' UTF-8 decoding again (not a file with
            # a BOM or another coding cookie, whose text differs)
            utf8_tree = full[0] if full is not None and isinstance(full[0], ast.Module) \
                and full[1] == data.decode("utf-8", errors="replace") else None
            if rel.rsplit("/", 1)[-1] == "setup.py" and result.error is None:
                # a setuptools script is also a dependency file: install_requires / extras_require
                from auditor.project.setup_py import add_setup_py_requirements

                add_setup_py_requirements(self, data, rel, result)
            if rel.endswith(".py") and result.error is None:
                # a Dockerfile written from a template string (`dockerfile = \"\"\"FROM nvidia/cuda:...`)
                from auditor.project.embedded import add_embedded_dockerfiles

                add_embedded_dockerfiles(self, data, rel, result)
                # a pip command the code runs (`run_pip("install tensorrt ...")`, `subprocess.check_call([..., "pip",
                # "install", "bitsandbytes"])`)
                from auditor.project.embedded_pip import add_embedded_pip_commands

                add_embedded_pip_commands(self, data, rel, result, utf8_tree)
                # a container command the code builds (`cmd += "--gpus all "`, then `os.system(cmd)`)
                from auditor.project.embedded_docker import add_embedded_docker_commands

                add_embedded_docker_commands(self, data, rel, result, utf8_tree)
            # the import graph's facts (auditor/static/project_imports.py), from the bytes: a file ast rejects too
            result.summary = with_facts(result.summary, data, rel, result.findings,
                                        full[0] if full is not None else None, utf8_tree)
            self._add_vendor_facts(result, data, rel)
            if rel.endswith(".py") and result.error is None:
                # a module the code writes from a string (`f.write('import os\n' 'if "CUDA_PATH" in os.environ:\n'
                # ...)` into `_win_dll_path.py`), read after this file's own tree has been used (it audits the string)
                from auditor.project.embedded_module import add_written_modules

                add_written_modules(self, data, rel, result, utf8_tree)
            facts = result.summary.get(TREE) if rel.endswith(".py") and isinstance(result.summary, dict) else None
            if isinstance(facts, dict):
                # the TensorRT members of format sets (format_members.py), kept with the file so warm runs read none
                spans = format_member_spans(data.decode("utf-8", errors="replace")) if b"onnx" in data else []
                if spans:
                    facts["format_members"] = [list(s) for s in spans]
            # `make x  # npu-audit: ignore[NPU333]`: kept with each recorded call for the tree passes
            makefile.note_suppressions(result.summary, _call_text(data, rel), _CALL_KEYS)
            return result
        except RecursionError:
            return FileResult(rel, error=FileError(rel, "syntax", "nesting too deep to parse"))
        except Exception as exc:  # noqa: BLE001 - one bad file never stops the audit of the others
            return FileResult(rel, error=FileError(rel, "internal", f"{type(exc).__name__}: {exc}"))

    # -- the pass ------------------------------------------------------------------------------

    def _add_vendor_facts(self, result: FileResult, data: bytes, rel: str) -> None:
        """A Python file's NPU076 comparison facts (vendor_dispatch.vendor_facts, FORMAT 13), from the tree _analyze
        parsed from the whole file; `vendor_unread` where it parsed none (an error, a chunked or lowered tree, over
        the tree pass's 2 MB), so that the tree pass reads that file as before."""
        full, self._full_tree = self._full_tree, None
        facts = result.summary.get(TREE) if rel.endswith(".py") and isinstance(result.summary, dict) else None
        if not isinstance(facts, dict):
            return
        if full is None or len(data) > VENDOR_MAX_BYTES:
            facts["vendor_unread"] = True
            return
        facts.update(vendor_facts(full[0], full[1], any(f.name == VENDOR_RULE for f in result.findings)))

    def _tabs_as_python2(self, data: bytes, text: str, rel: str, exc: TabError, lines: int) -> FileResult:
        """A file Python 3 rejects for mixing tabs and spaces in its indentation (Python 2 code, which read a tab as
        up to 8 columns): audited with its indentation tabs read that way, so that its CUDA code is still listed;
        the file stays an error (Python 3 does not run it, on any backend) and none of its findings is rewritten by
        `audit fix` (their columns count the expanded indentation)."""
        error = FileError(rel, "syntax", exc.msg or "inconsistent use of tabs and spaces in indentation", exc.lineno)
        # Python 2's width first; a file neither interpreter compiles (a tab after a 4-space block) is read at the
        # width its author's editor showed, 4 columns, when that reading is consistent
        for width, reading in ((8, "8 columns (Python 2's reading)"),
                               (4, "4 columns (the width its editor showed: Python 2 does not compile it either)")):
            expanded = "".join(line[:len(line) - len(line.lstrip(" \t"))].expandtabs(width) + line.lstrip(" \t")
                               for line in text.splitlines(keepends=True))
            try:
                ast.parse(expanded, filename=rel)
            except (SyntaxError, ValueError):
                continue
            return self._as_python2(data, expanded, rel, error, lines, f"; audited with its indentation tabs read as "
                                                                       f"{reading}")
        return FileResult(rel, error=error, lines=lines)

    def _as_python2(self, data: bytes, readable: str, rel: str, error: FileError, lines: int, reading: str) -> FileResult:
        """A Python 2 file Python 3 rejects, audited as `readable` (the text with Python 2's reading made explicit),
        so that its CUDA code is still listed; the file stays an error (Python 3 does not run it, on any backend) and
        none of its findings is rewritten by `audit fix`. Also used for `async=` keyword arguments
        (`_async_keywords_renamed`: pre-1.0 PyTorch's `.cuda(async=True)`)."""
        try:
            ast.parse(readable, filename=rel)
            data.decode("utf-8")        # the retry reads UTF-8 bytes: a file in another coding stays unread
        except (SyntaxError, ValueError):
            return FileResult(rel, error=error, lines=lines)
        result = self._analyze(readable.encode("utf-8"), rel)
        if result.error is not None:
            return result
        result.findings = [without_fix(f) for f in result.findings]
        result.error = replace(error, message=f"{error.message}: Python 3 rejects the file{reading}")
        return result

    def _analyze(self, data: bytes, rel: str) -> FileResult:
        self._full_tree = None
        name = rel.rsplit("/", 1)[-1]
        kind = project_kind(name, rel)
        if kind is not None:     # requirements, scripts, Dockerfiles, configs, notebooks: auditor/project/
            return analyze_project_file(self, data, rel, kind)
        file_rule = self.compiled.match_file(name)
        if not name.endswith((".py", ".pyw")):
            result = FileResult(rel, lines=data.count(b"\n"))
            if file_rule is not None:
                line = 1
                finding = self._finding(RawHit(file_rule, None, name), rel, 1, 1, 1, 1)  # type: ignore[arg-type]
                # a CUDA source's text, decoded once for the readings below
                cuda_text = data.decode("utf-8", errors="replace") if name.endswith((".cu", ".cuh")) else None
                if cuda_text is not None and name.endswith(".cuh") and plain_cpp_header(cuda_text):
                    return result       # a header with no CUDA in it (an enum, `#include <string>`): plain C++
                if cuda_text is not None and no_code(cuda_text):
                    return result       # comments, includes and an empty namespace only: nothing to port
                trt_line = tensorrt_host_line(cuda_text) \
                    if cuda_text is not None and name.endswith(".cu") and self._tensorrt_rule is not None else None
                if trt_line is not None:
                    # TensorRT host code compiled by nvcc: its port is the TensorRT deployment (tp59a)
                    finding = self._finding(RawHit(self._tensorrt_rule, None, name), rel, trt_line, 1,  # type: ignore[arg-type]
                                            trt_line, 1)
                elif cuda_text is not None:
                    inv = inventory(cuda_text, header=name.endswith(".cuh"))
                    line = inv.pop("first_kernel_line")
                    finding = replace(finding, line=line, end_line=line, message=f"{finding.message}: {describe(inv)}",
                                      data={**finding.data, "inventory": inv})
                result.findings.append(finding)
                if cuda_text is not None and self.compiled.cxx_names:
                    # the host code's own CUDA device (`torch::Device device(torch::kCUDA)`): a device to port
                    by_name = dict(self.compiled.cxx_names)
                    for at_line, at_col, cxx in cxx_name_lines(cuda_text, list(by_name)):
                        result.findings.append(self._finding(RawHit(by_name[cxx], None, cxx), rel, at_line, at_col,  # type: ignore[arg-type]
                                                             at_line, at_col + len(cxx)))
            return result
        if looks_binary(data):
            return FileResult(rel, error=FileError(rel, "binary", "binary content (NUL bytes) in a .py file"))
        try:
            text = decode_source(data)
        except (UnicodeDecodeError, SyntaxError, LookupError) as exc:
            return FileResult(rel, error=FileError(rel, "encoding", f"cannot decode: {exc}"))
        result = FileResult(rel, lines=text.count("\n") + (0 if text.endswith("\n") or not text else 1))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            lowered = False
            chunked = None
            try:
                if len(text) > self.chunked_above:     # bounded memory: pieces of top-level statements
                    chunked = largefile.parse_in_chunks(text, self.piece_chars)
                if chunked is not None:
                    tree = chunked.module
                else:
                    if len(text) > largefile.PIECE_CHARS:
                        largefile.check_fits(text, "this file")
                    tree = ast.parse(text, filename=rel)
                    self._full_tree = (tree, text)     # the whole file's tree: its vendor facts (_add_vendor_facts)
            except largefile.TooLarge as exc:
                result.error = FileError(rel, "too-large", str(exc))
                return result
            except TabError as exc:
                return self._tabs_as_python2(data, text, rel, exc, result.lines)
            except SyntaxError as exc:
                # 3.12+ syntax on an older Python: libcst reads it; the pre-pass gets a lowered copy
                from auditor.static.newsyntax import lower_for_ast

                older = lower_for_ast(text) if sys.version_info < (3, 14) else None
                try:
                    lowered_tree = ast.parse(older, filename=rel) if older is not None else None
                except SyntaxError:
                    lowered_tree = None
                if lowered_tree is None:
                    result.error = FileError(rel, "syntax", exc.msg or "invalid syntax", exc.lineno)
                    renamed = _async_keywords_renamed(text)
                    if renamed is not None:
                        return self._as_python2(data, renamed, rel, result.error, result.lines,
                                                " (`async` is a keyword); audited with its `async=` keyword "
                                                "arguments read as Python 2 did")
                    unpatched = _patch_marks_read(text)
                    if unpatched is not None:
                        return self._as_python2(data, unpatched, rel, result.error, result.lines,
                                                " (a diff's `+` / `-` marks at the start of its lines); audited "
                                                "with them read as the patch meant them")
                    called = _print_statements_called(text)
                    if called is not None:
                        return self._as_python2(data, called, rel, result.error, result.lines,
                                                " (Python 2's print statement); audited with each print statement "
                                                "read as a call")
                    return result
                tree, lowered = lowered_tree, True
            except ValueError as exc:
                result.error = FileError(rel, "syntax", str(exc))
                return result
        c = self.compiled
        words = set(WORD_RE.findall(text))
        flag_hits = c.flag_offsets(text)
        if not (words & c.file_words) and not c.has_trigger_prefix(text) \
                and not flag_hits and not (c.module_glob_re and c.module_glob_re.search(text)) \
                and not may_call_extension(words, text):
            result.summary = summarize(tree, (), rel, text)     # its imports, for the cross-file pass
            if self._flow_rules and "import" in words:    # spelled project imports (auditor/static/valueflow.py)
                result.findings = add_flow([], tree, text.splitlines(keepends=True), rel, self._flow_rules, text)
            return result
        ctx = build_context(tree, c.is_segment)
        if ctx.local_refs:
            adopt_local_refs(ctx, tree, c.is_namespace, self._cuda_only_package)
        if ctx.star_imports:        # `from pynvml import *` ... `nvmlInit()` (auditor/static/star_names.py)
            bind_star_names(ctx, tree, self._cuda_only_package)
        if may_use_conventional_names(words):    # `cudnn.benchmark = True` with no import of `cudnn` (star_names.py)
            bind_conventional_names(ctx, tree)
        triggers = self._file_triggers(ctx)
        if "grid=" in text and "block=" in text and "args=" in text:
            triggers.update(("grid", "block"))    # a CuPy launch by its keywords (visitor._cupy_launch_keywords)
        lines = text.splitlines(keepends=True)
        relevant = self._relevant_lines(lines, text, triggers, _line_numbers(text, flag_hits), words)
        if chunked is not None:
            try:
                tree = chunked.with_statements_at(relevant)   # the statements with a trigger, parsed again
            except largefile.TooLarge as exc:
                result.error = FileError(rel, "too-large", str(exc))
                return result
        hits: list[tuple[RawHit, int, int, int, int]] = []
        unparsable: list[str] = []
        slicer = _Slicer(lines, relevant)
        slicer.cut_long_lines = not lowered     # columns of a lowered tree are not the text's
        pieces: list[tuple] = slicer.slices(tree.body) if self.slicing else [(1, len(lines), False, None, 0)]
        done_pieces = set()
        for piece in pieces:
            # statements sharing lines (`a.cuda(); b.cuda()` x 170k on one line) give the same piece:
            # parse it once, or the time grows with the square of the statements on a line
            if piece in done_pieces:
                continue
            done_pieces.add(piece)
            start, end, indented, body_indent, loops = piece[:5]
            try:
                hits.extend(self._match_slice(lines, start, end, indented, ctx, body_indent, loops,
                                              cols=piece[5] if len(piece) > 5 else None))
            except _SliceUnparsable as exc:
                unparsable.append(f"{exc.start}-{exc.end}")
        if unparsable:   # Python accepted it, libcst did not (newer syntax): say what was not looked at
            result.error = FileError(rel, "syntax", "libcst cannot parse lines " + ", ".join(unparsable)
                                     + "; findings there are missing", int(unparsable[0].split("-")[0]))
        seen = set()
        required_lines: set[int] = set()     # lines with a dtype-requirement finding (dtype_requirements.py)
        # a cast up with no cast back (`if t.dtype == torch.bfloat16: t = t.to(torch.float32)` before `.numpy()`):
        # a host conversion, not the fallback around a CUDA op (dtype_requirements._cast_kind)
        casts_back = any(hit.required == "cast-back" for hit, *_ in hits)
        suppressions = Suppressions.of(lines, text)     # own form, noqa codes, file-level forms
        compared: dict[tuple[int, int], str] | None = None    # string literals compared with something
        for hit, line, col, end_line, end_col in hits:
            if hit.rule.when.get("in_loop") and (on_host(ctx, hit.end_node or hit.node, line) or runs_once(ctx, line)
                                                 or not on_device(ctx, line, col)):
                continue        # `.item()` on a numpy array, in a file without torch, on one turn of the loop, or
                # on a value its function shows no device origin for (device_values.py)
            if _names_parameter(ctx, hit.node, line):
                continue        # `def f(unet, xformers): if xformers:` reads the caller's flag, not the package
            if hit.kernel_local and not ctx.kernel_local_at(hit.kernel_local, line):
                continue        # `f(...)` outside the functions where `f = load_kernel(...)` (t32a)
            npu_too = False
            if hit.via is not None:
                if hit.rule.category == "precision" and not any(
                        scope[:2] == _WHOLE_FILE for scope in ctx.scopes.get(hit.via, ())):
                    # `quantize = "fp8"` in a function, then `load(quantize=quantize)`: a dtype name held by a
                    # local is reported where it is written (a module constant is followed to its uses)
                    continue
                if hit.run_arg and hit.rule.name in TOOL_RULES and ctx.bound_in_function(hit.via, line):
                    # `cmd = "./prog"` ... `cmd = f"{query} | grep 'CUDA Capability'"`: a function's own command
                    # name run by subprocess / os is left to flags.py's command copies, which follow its latest
                    # binding to the run (tk47)
                    continue
                value = self._visible_value(ctx, hit, line)
                if value is None:
                    continue
                hit.symbol = value
                # `DEVICE = "npu" if npu else "cuda"`: a use of a variable that may also name the NPU
                npu_too = any(v.split(":", 1)[0].lower() == "npu" for v in ctx.visible_values(hit.via, line))
            key = (hit.rule.code, line, col, hit.symbol)
            if key in seen:
                continue
            if c.segment_globs and any(hit.rule is r for _, _, r in c.segment_globs) \
                    and c.inside_segment_glob(hit.symbol, rel):
                continue        # a vendored flash-attn package's own plumbing (its findings carry it)
            seen.add(key)
            if suppressions.covers(line, end_line, hit.rule.code):
                result.suppressed += 1
                continue
            finding = self._finding(hit, rel, line, col, end_line, end_col)
            if hit.statement_pos is not None and hit.statement_pos[0] < line and finding.fix == "none":
                # `from megatron.core.extensions.transformer_engine import (` ... `TELinear,`: report the
                # statement's line; a finding `audit fix` rewrites keeps the name's own position
                finding = replace(finding, line=hit.statement_pos[0], col=hit.statement_pos[1])
            if hit.rule.extra.get("at_line_of") and end_line > line:
                finding = _at_line_of(finding, lines, hit.rule.extra["at_line_of"])
            if npu_too:
                finding = variable_with_npu(finding)
            if hit.probe:
                finding = _as_probe(finding)
            if hit.required and finding.category == "precision":
                if finding.line in required_lines or hit.required == "cast" and not casts_back:
                    continue        # `a.dtype != torch.bfloat16 or b.dtype != torch.bfloat16`: one finding a line
                required_lines.add(finding.line)
                finding = as_info(finding, "dtype-requirement", CAST_NOTE if hit.required.startswith("cast") else REQUIRED_NOTE)
            if hit.table_entry and finding.severity != "info":
                finding = as_info(finding, "option-table", _TABLE_NOTE)
            if hit.keyword and finding.name == "cuda-device-string":
                finding = replace(finding, data={**finding.data, "keyword": hit.keyword})
            if hit.saved_location and finding.severity == "error":
                finding = as_info(finding, "saved-location", _SAVED_LOCATION_NOTE, severity="warning")
            if hit.no_rewrite and finding.fix != "none":
                finding = replace(finding, fix="none")
            if finding.fix == "safe" and isinstance(hit.node, (cst.SimpleString, cst.ConcatenatedString,
                                                               cst.FormattedString)):
                if compared is None:
                    compared = _compared_literals(tree, lines)
                if (line, col) in compared:
                    # `sys.argv[1] == "cuda"`: rewriting the literal changes which input matches
                    finding = replace(finding, fix="unsafe")
                    if finding.severity == "error" and (finding.category == "device"
                                                        or finding.name == "nccl-backend-string"):
                        # `device == "cuda"`, `SYSTEM == "cuda"`: a user or config value, not the runtime's
                        # device type; on Ascend the code runs and takes the other branch (policy: differs);
                        # `backend == "nccl"` alike (a user's argument, not `dist.get_backend()`)
                        finding = replace(finding, severity="warning", message=finding.message + compared[(line, col)])
            result.findings.append(finding)
            if finding.name == "cuda-source-string" and finding.end_line > finding.line:
                result.findings += _kernel_lines(finding, lines, suppressions)
        if result.findings:
            flag_tree = tree
            if chunked is not None:     # the pieces hold only lines with a trigger: add the lines that read a flag
                flag_tree = chunked.with_statements_at(_flag_reading_lines(tree, lines, result.findings, relevant))
            result.findings += derived_flag_findings(flag_tree, result.findings)   # `if is_nccl:` after `is_nccl = ...`
            # Multi-backend context (NPU branches, backend tables, platform classes, guarded imports): one more
            # walk of the tree, only for files with findings.
            wanted = sorted({f.line for f in result.findings})
            result.findings = apply_context(result.findings, build_backend_context(
                tree, lines, wanted, cuda_only_import_lines(result.findings)), rel)
            result.findings = apply_gates(result.findings, tree)     # behind CUDA gates (auditor/static/gates.py)
            if any(f.name == "cuda-helper-call" for f in result.findings):
                result.findings = _drop_neutral_helpers(result.findings, tree)
            if imports_transfer_to_npu(text):    # the file patches torch for Ascend itself
                result.findings = under_transfer_to_npu(result.findings, "this file")
            if any(f.name in HOST_SYNC_RULES for f in result.findings) and "ray" in text:
                ray_cpu = cpu_ray_scopes(tree, lines)     # `.item()` in a CPU-only Ray task / actor (host_values.py)
                result.findings = [f for f in result.findings if f.name not in HOST_SYNC_RULES or not any(
                    lo <= f.line <= hi for lo, hi in ray_cpu)]
            # dtype hints on host-only code (CPU tests, CPU paths, dtype converter chains), mocks of torch.cuda
            result.findings = drop_host_paths(result.findings, rel, text, tree)
            result.findings = drop_host_factory_support_rows(result.findings, tree)   # fft.rfftfreq(n).to(dev)
            result.findings = demote_reseeds(result.findings, tree)     # torch.cuda seeds after torch.manual_seed
            result.findings = drop_platform_labels(result.findings, tree)   # "cuda" as a report label, a fake's data
            result.findings = drop_provider_catalogues(result.findings, tree)   # an enum / table of every ORT EP
            result.findings = drop_overridden_bases(result.findings, tree)   # `class E(nn.TransformerEncoder)` + forward
            result.findings = drop_math_backend_lists(result.findings, tree)   # sdpa_kernel([FLASH, ..., MATH])
            result.findings = drop_type_references(result.findings, tree)   # `{nn.MaxPool3d: hook}`, isinstance
            result.findings = drop_none_checked_type_tests(result.findings, tree)   # if X is not None: isinstance
            result.findings = drop_covered_cudnn_determinism(result.findings, tree)   # beside use_deterministic_algorithms
            result.findings = drop_namespace_calls(result.findings, tree)   # `torch.ops.Conv2d(...)`: a typo
            result.findings = drop_probe_result_flags(result.findings, tree)   # flag = torch.cuda.is_available()
            result.findings = drop_existence_probes(result.findings, tree)   # `try: torch.float8_e5m2`
            result.findings = drop_forwarded_env_names(result.findings, tree)   # for k in ("NCCL_X", ...): get(k)
            result.findings = drop_unread_tool_lookups(result.findings, tree)   # `command -v nvidia-smi`, unread
            result.findings = drop_single_tensor_optimizers(result.findings, tree)   # SGD([one_tensor])
            if not rel.endswith(".ipynb.py"):     # a notebook cell is read alone: another cell may place the model
                result.findings = drop_host_model_optimizers(result.findings, text, tree)   # a model never moved
            result.findings = drop_replaced_autocasts(result.findings, tree)   # `torch.autocast = own`
            result.findings = drop_dtype_restores(result.findings, tree)   # `if needs_upcasting: vae.to(fp16)`
            result.findings = drop_precision_name_tables(result.findings, tree)   # `class P: BFLOAT = "bf16"`
            result.findings = drop_weightless_loader_dtypes(result.findings, tree)   # Tokenizer(torch_dtype=)
            result.findings = drop_fake_kernel_dtypes(result.findings, tree)   # @op.register_fake: shapes only
            result.findings = drop_ort_buffer_dtypes(result.findings, tree)   # ORT io-binding buffers: the export's
            result.findings = drop_module_bindings(result.findings, tree)   # `self.pynvml = pynvml`
            result.findings = drop_versions_after_import(result.findings, tree)   # `import te` then version("te")
            result.findings = drop_host_extension_twins(result.findings)   # CppExtension beside CUDAExtension
            result.findings = lower_parallel_type_tests(result.findings, tree)   # isinstance(m, DataParallel)
            result.findings = lower_host_only_extensions(result.findings, tree)   # load(sources=['x.cpp'])
            result.findings = lower_idle_autocast_decorators(result.findings, tree)   # on `self.n = int(...)` only
            result.findings = lower_enabled_cuda_autocasts(result.findings, tree)   # disables itself on Ascend (w)
            result.findings = lower_named_members(result.findings, tree)   # getattr(apex.optimizers, cfg.name)
            result.findings = lower_cluster_environs(result.findings, tree)   # `if cluster == "na132": NA132_ENVIRONS`
            result.findings = lower_label_members(result.findings, tree)   # `if backend == "horovod": hvd.init()`
            result.findings = lower_loaded_driver_calls(result.findings, tree)   # cuInit after `except OSError: return`
            result.findings = mark_config_imports(result.findings, tree)   # from transformers import BitsAndBytesConfig
            result.findings = lower_fp32_cuda_autocasts(result.findings, tree)   # autocast("cuda", dtype=torch.float)
            result.findings = mark_disabled_autocast_devices(result.findings, tree)   # autocast("cuda", enabled=False)
            result.findings = drop_disabled_autocast_imports(result.findings, tree)   # imported to turn it off only
            result.findings = drop_host_conversion_hints(result.findings, rel, text)   # convert_*.py, no device
            result.findings = drop_host_save_dtypes(result.findings, tree, text)   # built, saved, host only
            result.findings = drop_cast_host_float64(result.findings, tree)   # `self.m(C).type(torch.float32)`
            result.findings = drop_host_smoke_float64(result.findings, tree)   # `net.double()` in a host smoke test
            result.findings = drop_host_test_float64(result.findings, tree, text)   # tests on device "cpu" only
            result.findings = drop_converted_class_constants(result.findings, tree)   # `self.C = self.C.to(dtype)`
            result.findings = drop_flop_counter_doubles(result.findings, tree)   # thop's `total_ops += DoubleTensor`
            result.findings = drop_raise_message_reads(result.findings, tree)   # read only to word a raise
            result.findings = drop_storage_casts(result.findings, tree, text)   # `sd = {k: v.half()}` -> save_file(sd)
            result.findings = drop_provider_arm_devices(result.findings, tree, text)   # ORT's provider named
            result.findings = lower_ort_only(result.findings, text)   # "cuda" picks an ORT provider (falls back)
            result.findings = drop_llama_cpp_flash_options(result.findings, text)   # llama.cpp's own flash_attn
            result.findings = drop_flash_setting_keys(result.findings, tree, text)   # `"flash_attn": True`: an on/off key
            result.findings = drop_inert_constructs(result.findings, tree, text)   # bare sdp_kernel(), ctypes fields
            result.findings = drop_plain_sdpa_switches(result.findings, tree)   # flash=True -> plain SDPA
            result.findings = drop_cuda_gated_switches(result.findings, tree)   # flash and cuda.is_available()
            result.findings = drop_host_scopes(result.findings, rel, text, tree)    # unread defaults, host tests
            result.findings = raise_training_tf32(result.findings, tree)   # TrainingArguments(tf32=True) raises
            result.findings = apply_value_reads(result.findings, rel, text, tree)   # host operands, predicates
            # optional imports used only in definitions the file never names: marked here, read per run (pd34)
            result.findings = mark_unnamed_guarded_uses(result.findings, tree, text)
            result.findings = apply_unselected_devices(result.findings, tree, text, rel)   # pytest.raises, mmcv imports
            why = written_for_npu(text, rel)     # imports torch_npu at its top, or an NPU path (npu_native.py)
            if why is not None:
                result.findings = apply_npu_file(result.findings, why)
            elif (why := selects_ascend_devices(tree, text)) is not None:   # vLLM built after ASCEND_RT_VISIBLE_DEVICES
                result.findings = lower_ascend_engine_starts(result.findings, why)
            # after the NPU-file pass (its notes win): patch targets, per-backend pairs, attention tables
            result.findings = apply_patch_targets(result.findings, tree)   # `mod.fn = own_fn`: the patch target
            result.findings = drop_module_standins(result.findings, tree)   # `sys.modules["apex.x"] = own`
            if isinstance(tree, ast.Module):    # `_detect_cuda_devices` beside `_detect_npu_devices`
                result.findings = apply_cuda_twins(result.findings, tree)
                result.findings = apply_npu_rebinds(result.findings, tree)   # `from torch.npu import synchronize`
                result.findings = apply_flash_tables(result.findings, tree)   # `"flash_attention_2": XFlashAttention2`
                result.findings = drop_report_only_reads(result.findings, tree)   # `data.append(("CUDA_HOME", ...))`
                if any(f.name == VENDOR_RULE for f in result.findings):   # NPU076 beside an NPU arm, in migrations
                    result.findings = apply_vendor_dispatch(result.findings, tree, text)
        result.findings.sort(key=Finding.sort_key)
        if self._flow_rules:     # uses of CUDA-bound names (auditor/static/valueflow.py)
            flow_tree = tree
            if chunked is not None:     # the pieces hold only lines with a trigger: add the uses of bound names
                flow_tree = chunked.with_statements_at(
                    _flag_reading_lines(tree, lines, result.findings, relevant, imports=True))
            result.findings = add_flow(result.findings, flow_tree, lines, rel, self._flow_rules, text)
        # (after the uses: the summary reads none but a namespace class's forwarding ones, crossfile `_forwards`)
        result.summary = summarize(tree, result.findings, rel, text)     # auditor/static/crossfile.py
        return result

    def _cuda_only_package(self, qual: str) -> bool:
        """A name from a package a third-party rule reports as a whole (`pynvml.*`, `GPUtil.*`, `cuda.*`), not one
        CUDA name of a package that also runs without CUDA (faiss.index_cpu_to_gpu: its index is a faiss index); also
        an NCCL binding a distributed rule reports as a whole (`cupy.cuda.nccl.*`: after `self.comm = nccl.
        NcclCommunicator(...)`, `self.comm.allReduce(...)` calls libnccl; DT-FM, test28), not horovod's optimizer."""
        m = self.compiled.match_qualname(qual)
        return m is not None and m.pattern in self.compiled.namespaces and (
            m.rule.category == "third_party" or m.rule.category == "distributed" and "nccl" in m.pattern.lower())

    def _file_triggers(self, ctx: FileContext) -> set[str]:
        """Trigger words plus, through this file's aliases, the words of qualified-name rules: the local
        name when it stands for something a rule matches (`tc` for torch.cuda), else the words a chain
        below its target must spell out (see CompiledRules._index_qualnames)."""
        c = self.compiled
        triggers = set(c.trigger_words)
        targets = dict(ctx.bindings)                   # every import of a name...
        for local, qual in ctx.aliases.items():       # ...and module-level `amp = torch.cuda.amp`
            targets.setdefault(local, [qual])
        for local, quals in targets.items():
            for qual in quals:
                if c.knows(qual) or c.match_import(qual) is not None or qual + ".__setitem__" in c.exact:
                    triggers.add(local)      # (`ALL_ATTENTION_FUNCTIONS["sdpa"] = fn`: the store names the local)
                triggers |= c.below.get(qual, frozenset())
                if extension_module_of(qual, ctx.unresolved_extensions) is not None:
                    triggers.add(local)      # `PG_OP.voxelize_fp(...)` (unresolved_extensions.py)
        for qual in ctx.reached_through_imports:     # `import encoding` before `encoding.parallel.X` (tk41)
            if (m := c.match_qualname(qual)) is not None and m.rule.extra.get("import_reached"):
                triggers.add(qual.split(".", 1)[0])
        for attr, qual in ctx.self_attrs.items():    # `self.rms_norm_fn(...)` after `self.rms_norm_fn = rms_norm_fn`
            if c.knows(qual):
                triggers.add(attr)
        triggers.update(ctx.instances, ctx.self_instances)   # `self.nvsmi.DeviceQuery(...)` (adopt_local_refs)
        triggers.update(name for name, base in ctx.subclass_of.items() if c.knows(base))   # `_DataParallel(m)`
        for local, decorators in ctx.decorated.items():
            if c.match_launch(decorators) is not None:
                triggers.add(local)   # `kernel[grid](...)` lines name no rule word
        # CuPy / PyCUDA kernel objects, modules and loaders (`add_kernel((5,), (5,), args)`, `f = load_kernel(...)`)
        triggers.update(ctx.kernel_objects, ctx.kernel_attrs, ctx.kernel_loaders, ctx.kernel_locals)
        triggers.update(ctx.toolkit_configs)      # `library_dirs=[CUDA['lib64']]` after `CUDA = locate_cuda()` (tk46)
        for local, values in ctx.constants.items():
            if any(c.match_string(v) or c.match_env(v) for v in values):
                triggers.add(local)
        for module in ctx.star_imports:             # the import statement itself is the finding
            if c.knows(module) or c.match_import(module) is not None:
                triggers.add(module.rsplit(".", 1)[-1])
        return triggers

    def _relevant_lines(self, lines: list[str], text: str, triggers: set[str], flag_lines: set[int],
                        words: set[str]) -> list[int]:
        """Sorted numbers of the lines that hold a trigger word (`words`: the text's WORD_RE words)."""
        prefixed = self.compiled.has_trigger_prefix(text)
        held = self.compiled.held_module_re     # `Config.xformers.ops.memory_efficient_attention(`: no alias
        if held is not None and not held.search(text):
            held = None
        # flag_lines: `if _FLASH_ATTN_AVAILABLE:` names no rule word (flagname rules)
        numbers = {n for n in flag_lines if 1 <= n <= len(lines)}
        numbers.update(_word_lines(lines, text, triggers & words))
        if prefixed or held is not None:
            for number, line in enumerate(lines, 1):
                if (prefixed and self.compiled.has_trigger_prefix(line)) or (held is not None and held.search(line)):
                    numbers.add(number)
        # a comment line is never a finding
        return [n for n in sorted(numbers) if not lines[n - 1].lstrip().startswith("#")]

    def _match_slice(self, lines: list[str], start: int, end: int, indented: bool, ctx: FileContext,
                     body_indent: str | None = None, loops: int = 0, cols: tuple[int, int] | None = None):
        shift = 0                     # columns before the piece on its first line (a statement cut from a line)
        if cols is not None:
            raw = lines[start - 1].encode("utf-8")          # ast columns count UTF-8 bytes
            shift = len(raw[:cols[0]].decode("utf-8", errors="replace"))
            chunk = raw[cols[0]:cols[1]].decode("utf-8", errors="replace") + "\n"
        else:
            chunk = "".join(lines[start - 1:end])
        if not chunk.endswith("\n"):
            chunk += "\n"
        if body_indent is not None:
            # the header of a compound statement, without its body; a body that starts with `raise` / `return`
            # keeps that first word (a guard: auditor/static/dtype_requirements.py)
            chunk += body_indent + _first_body_word(lines, end) + "\n"
        offset = start - 1
        if indented:
            chunk = "if 1:\n" + chunk     # keeps the original columns of an indented block
            offset -= 1
        try:
            module = cst.parse_module(chunk)
        except cst.ParserSyntaxError:
            raise _SliceUnparsable(start, end) from None
        visitor = MatchVisitor(self.compiled, ctx, loops)
        visitor.file_lines = lines        # the whole file's lines (the same in the chunked pass)
        walk(module, visitor)         # read-only: libcst's own visit rebuilds every node
        if not visitor.hits:
            return []
        # Positions cost a code generation pass over the slice: only for slices with a hit.
        positions = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
        out = []
        for hit in visitor.hits:
            pos = positions[hit.node]
            end_pos = positions[hit.end_node].end if hit.end_node is not None else pos.end
            if hit.statement is not None:
                stmt = positions[hit.statement].start
                hit.statement_pos = (stmt.line + offset, stmt.column + 1 + (shift if stmt.line == 1 else 0))
            out.append((hit, pos.start.line + offset, pos.start.column + 1 + (shift if pos.start.line == 1 else 0),
                        end_pos.line + offset, end_pos.column + 1 + (shift if end_pos.line == 1 else 0)))
        return out

    def _visible_value(self, ctx: FileContext, hit: RawHit, line: int) -> str | None:
        """A constant followed to a use counts only where its binding is in scope (function locals stay
        local); returns the value in scope that the hit's rule matches."""
        c = self.compiled
        if hit.via is None:
            return None
        for value in sorted(ctx.visible_values(hit.via, line)):
            m = c.match_string(value)
            if (m is not None and m[0] is hit.rule) or c.match_env(value) is hit.rule:
                return value.replace(HOLE, "{…}")
        return None

    # -- for the project-file readers (auditor/project/), which hand the engine what they matched --------

    def finding_for(self, rule: Rule, symbol: str, rel: str, line: int, col: int, end_col: int,
                    value: str | None = None) -> Finding:
        """The Finding a match of `rule` on `symbol` makes, with the rule's (or the symbol entry's) text."""
        return self._finding(RawHit(rule, None, symbol, value=value), rel, line, col, line, end_col)  # type: ignore[arg-type]

    @staticmethod
    def replacement_for(rule: Rule, name: str) -> str | None:
        """What `audit fix` writes for `name` (an env var's Ascend twin), from its symbol entry."""
        _key, detail, _rest = _nearest_detail(rule, RawHit(rule, None, name))  # type: ignore[arg-type]
        return detail.replace if detail and detail.replace else None

    def _finding(self, hit: RawHit, rel: str, line: int, col: int, end_line: int, end_col: int) -> Finding:
        rule = hit.rule
        key, detail, rest = _nearest_detail(rule, hit)
        via = f" (via {hit.via})" if hit.via else ""
        replace_with: str | None
        if detail and detail.replace:
            # the entry for torch.cuda.Stream also serves torch.cuda.Stream.priority_range
            replace_with = detail.replace + rest
        else:
            replace_with = rule.replace
            if replace_with and hit.value and "." in hit.symbol and hit.symbol.startswith(hit.value + "."):
                # a module-wide rule: torch.cuda -> torch.npu turns torch.cuda.synchronize into torch.npu.synchronize
                replace_with = replace_with + hit.symbol[len(hit.value):]
        fields = dict(symbol=hit.symbol, value=hit.value, replace=replace_with)
        message = (_fmt(detail.message if detail and detail.message else rule.message, **fields) or "") + via
        substitution = _fmt(detail.substitution if detail and detail.substitution else rule.substitution, **fields)
        fix = detail.fix if detail and detail.fix else rule.fix
        if hit.via and fix == "safe":
            fix = "none"   # the value is defined elsewhere: the fix belongs at the definition
        if not replace_with and fix != "none":
            fix = "none"   # nothing to write (CUDA_DEVICE_MAX_CONNECTIONS has no twin): not fixable
        return Finding(
            code=rule.code, name=rule.name, category=rule.category,
            severity=rule.severity_for(self.product, key),
            effort=detail.effort if detail and detail.effort else rule.effort,
            path=rel, line=line, col=col, end_line=end_line, end_col=end_col,
            message=message, substitution=substitution, fix=fix, source="static", symbol=hit.symbol,
            data={"replace": replace_with} if replace_with and fix != "none" else {},   # what `audit fix` writes
        )
