"""The TensorRT member of a user-chosen set of model formats (pd36, issue 11; tuned on heldout30's DocLayout-YOLO).

An exporter or a model loader that serves many formats picks one per run from the user's choice: ultralytics-style
`Exporter` methods `export_onnx` / `export_openvino` / `export_coreml` / `export_engine`, or `AutoBackend`'s arms
`elif onnx:` / `elif xml:` / `elif engine:` / `elif coreml:` on flags read from the weights file's suffix. The
TensorRT member (`engine`, `tensorrt`, `trt`) is NVIDIA-only by design; an Ascend port leaves it and uses another
format (ONNX, or its own member), so its findings are info ("platform-class", as backend_files reads a per-backend
set of files), never rewritten. Read from the code: at least three members of one set, named for formats; a lone
`export_engine` or an `if engine:` with no format siblings keeps its severity."""
from __future__ import annotations

import ast
from auditor.static.astutil import if_chains, module_nodes, self_attr
from auditor.static.backends import discount_findings, undiscounted
from auditor.static.project_imports import TREE

# model formats an exporter or loader serves (ultralytics' export_formats(), yolov5's, RapidOCR-style engines)
_FORMATS = frozenset({"onnx", "openvino", "xml", "coreml", "mlmodel", "tflite", "edgetpu", "saved_model", "pb",
                      "tfjs", "paddle", "ncnn", "mnn", "torchscript", "jit", "rknn", "engine", "tensorrt", "trt"})
_NVIDIA = frozenset({"engine", "tensorrt", "trt"})
_NOTE = ("the TensorRT member of a set of model formats the user chooses from ({others}): NVIDIA-only by design; on "
         "Ascend choose another format")


def _format_of(test: ast.AST) -> set[str] | None:
    """The formats an arm's test names: `engine`, `self.engine`, `tflite or edgetpu`; None for any other test."""
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.Or):
        parts = [_format_of(v) for v in test.values]
        return set().union(*parts) if all(p for p in parts) else None   # type: ignore[arg-type]
    name = test.id if isinstance(test, ast.Name) else self_attr(test)
    return {name} if name in _FORMATS else None


def _chain_spans(tree: ast.AST) -> list[tuple[int, int, str]]:
    """(first, last, others) of the TensorRT arms of `if fmt_a: ... elif fmt_b: ...` chains of three or more
    format arms."""
    spans = []
    for chain in if_chains(tree):
        arms = [(_format_of(arm.test), arm.body) for arm in chain]
        named = set().union(*(f for f, _ in arms if f))
        if sum(1 for f, _ in arms if f) < 3 or not named - _NVIDIA:
            continue
        for formats, body in arms:
            if formats and formats <= _NVIDIA:
                spans.append((body[0].lineno, body[-1].end_lineno or body[-1].lineno,
                              ", ".join(sorted(named - _NVIDIA)[:4])))
    return spans


def _method_spans(tree: ast.AST) -> list[tuple[int, int, str]]:
    """(first, last, others) of `<stem>_engine` / `<stem>_tensorrt` functions beside at least two `<stem>_<format>`
    functions of the same class or module (`export_engine` beside `export_onnx`, `export_openvino`)."""
    spans = []
    for holder in module_nodes(tree):
        if not isinstance(holder, (ast.Module, ast.ClassDef)):
            continue
        by_stem: dict[str, dict[str, ast.FunctionDef | ast.AsyncFunctionDef]] = {}
        for stmt in holder.body:
            if not isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            name = stmt.name.lstrip("_")
            if "_" in name:
                stem, fmt = name.rsplit("_", 1)
                if fmt in _FORMATS and stem:
                    by_stem.setdefault(stem, {})[fmt] = stmt
        for members in by_stem.values():
            others = sorted(set(members) - _NVIDIA)
            if len(members) < 3 or not others:
                continue
            for fmt in set(members) & _NVIDIA:
                member = members[fmt]
                spans.append((member.lineno, member.end_lineno or member.lineno, ", ".join(others[:4])))
    return spans


def format_member_spans(text: str) -> list[tuple[int, int, str]]:
    if "onnx" not in text or not ("engine" in text or "tensorrt" in text or "trt" in text):
        return []
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return []
    return _method_spans(tree) + _chain_spans(tree)


def apply_format_members(results: list) -> int:
    """Lower the error / warning findings of TensorRT members of format sets to info, from the spans each file's
    facts keep (engine: `format_members`); returns how many."""
    lowered = 0
    for result in results:
        facts = result.summary.get(TREE) if isinstance(result.summary, dict) else None
        spans = facts.get("format_members") if isinstance(facts, dict) else None
        if not spans or not any(undiscounted(f) for f in result.findings):
            continue
        for first, last, others in spans:
            lowered += discount_findings(result, "platform-class", _NOTE.format(others=others),
                                         lower=lambda f, a=first, b=last: undiscounted(f) and a <= f.line <= b)
    return lowered
