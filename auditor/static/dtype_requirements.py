"""Dtype requirements (t14p, issue 14, session 11): a guard that makes a path take only a low-precision dtype.

A dtype compared with a value is read, not chosen, so the precision rules that match dtype names (bfloat16, float16,
float8, rules/precision_dtypes.yaml) stay quiet in comparisons (visitor.py `_dtype_quiet`). One comparison form is no
mere read: a guard that refuses every other dtype,

    if x.dtype != torch.bfloat16: raise ValueError(...)          # a bf16-only kernel
    if qdata.dtype != torch.float8_e4m3fn: raise ...             # an FP8-only tensor class
    if (a.dtype != torch.bfloat16 or ...): return fallback(...)  # the fast path only for bf16
    if dtype == torch.bfloat16 and not is_bf16_supported(): raise

On Ascend the path is usable only where the chip has the dtype (bfloat16: not on 910A; float8: 950 only), so these
lines are findings of the dtype's own rule, at info (a fact worth knowing: the guard runs on every backend and fails
or falls back only for the dtype the chip lacks). Recognised by construct: an `if` whose body starts with `raise` /
`return` (any comparison operator before `raise`; a refusing one, `!=` / `is not` / `not in`, before `return`); the
other side must be a dtype (a name or attribute ending in
`dtype`). A list that also accepts float32 / float64 (`dtype not in (torch.float16, torch.bfloat16, torch.float32)`)
validates a float type, it requires no low precision, and is not a requirement; one that accepts float16 beside
bfloat16 runs on every Ascend chip (float16 everywhere), so it is no finding either. `assert x.dtype == torch.half` is
left out: on the heldout3 .. heldout9 precision trees such asserts were unit tests checking a conversion's result
(Megatron's test_module.py), not requirements (`required_dtype_nodes(..., asserted=True)` stays for callers that
know an assert guards an entry point).
"""
from __future__ import annotations

import re

import libcst as cst

# dtype attribute / name spellings of the low-precision floats (torch, and DSLs that reuse torch's names)
_LOW = re.compile(r"^(?:bfloat16|float16|half|float8_\w+|float4_\w+)$")
_FULL = frozenset({"float32", "float", "float64", "double"})
_REFUSING = (cst.NotEqual, cst.IsNot, cst.NotIn)
_ACCEPTING = (cst.Equal, cst.Is, cst.In)

CAST_NOTE = ("a guard casts around this dtype for a CUDA op that lacks it (diffusers' `upsample_nearest2d` bf16 "
             "fallback): the cast costs time on Ascend, whose op may take the dtype; check it there")
REQUIRED_NOTE = ("a guard requires this dtype (the path refuses or falls back on every other): usable on Ascend "
                 "only where the chip has it")


def guard_kind(node: cst.If) -> str | None:
    """"raise" / "return" when the `if` body starts with that statement, "cast" / "cast-back" when its one statement
    casts a tensor to full precision or back to a saved dtype (`_cast_kind`), else None."""
    body = node.body
    if not isinstance(body, cst.IndentedBlock) or not body.body:
        return None
    first = body.body[0]
    if isinstance(first, cst.SimpleStatementLine) and first.body:
        if isinstance(first.body[0], cst.Raise):
            return "raise"
        if isinstance(first.body[0], cst.Return):
            return "return"
        if len(body.body) == 1 and len(first.body) == 1:
            return _cast_kind(first.body[0])
    return None


def _cast_kind(stmt: cst.BaseSmallStatement) -> str | None:
    """"cast" for `hidden_states = hidden_states.to(torch.float32)` / `.float()`, "cast-back" for `hidden_states =
    hidden_states.to(dtype)`: diffusers' Upsample2D (and every model file copied from it: Tune-A-Video, AnimateDiff,
    their forks) around `F.interpolate(..., mode="nearest")`, whose CUDA kernel had no bfloat16 (pytorch#86679). The
    visitor takes a cast back only after a cast in the same file (`if dtype == torch.bfloat16: model =
    model.to(dtype)` alone chooses nothing), and the engine a cast only with a cast back (`if t.dtype ==
    torch.bfloat16: t = t.to(torch.float32)` before `t.numpy()` is a host conversion). A cast to a low-precision dtype
    (`x.to(torch.float16)`) is no fallback (t22d)."""
    if not isinstance(stmt, cst.Assign) or not isinstance(stmt.value, cst.Call) \
            or not isinstance(stmt.value.func, cst.Attribute):
        return None
    method, args = stmt.value.func.attr.value, stmt.value.args
    if method == "float" and not args:
        return "cast"
    if method != "to" or len(args) != 1 or args[0].keyword is not None and args[0].keyword.value != "dtype":
        return None
    if _last_name(args[0].value) in _FULL:
        return "cast"
    return "cast-back" if isinstance(args[0].value, cst.Name) and _is_dtype_value(args[0].value) else None


def _last_name(node: cst.BaseExpression) -> str | None:
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        return node.attr.value
    return None


def _is_dtype_value(node: cst.BaseExpression) -> bool:
    """`x.dtype`, `dtype`, `self.compute_dtype`, `torch_dtype`: a value that holds a dtype."""
    name = _last_name(node)
    return name is not None and name.lower().endswith("dtype")


def _dtype_names(node: cst.BaseExpression) -> list[cst.BaseExpression] | None:
    """The low-precision dtype names of one comparison side (a name, or a tuple / list / set of names); None when
    the side is something else or also lists a full-precision float."""
    elements = [e.value for e in node.elements] if isinstance(node, (cst.Tuple, cst.List, cst.Set)) else [node]
    low: list[cst.BaseExpression] = []
    for e in elements:
        name = _last_name(e)
        if name is None:
            continue
        if name in _FULL:
            return None
        if _LOW.match(name):
            low.append(e)
    if len(elements) > 1 and any(_last_name(e) in ("float16", "half") for e in low) and \
            any(_last_name(e) == "bfloat16" for e in low):
        return None     # `x.dtype not in (torch.float16, torch.bfloat16)`: float16 runs on every Ascend chip
    return low or None


def _comparisons(test: cst.BaseExpression):
    if isinstance(test, cst.BooleanOperation):
        yield from _comparisons(test.left)
        yield from _comparisons(test.right)
    elif isinstance(test, cst.Comparison):
        yield test


def required_dtype_nodes(test: cst.BaseExpression, guard: str | None = None, asserted: bool = False) -> list[int]:
    """ids of the dtype-name nodes a guard requires (see the module docstring)."""
    if guard is None and not asserted:
        return []
    out: list[int] = []
    for comp in _comparisons(test):
        left = comp.left
        for target in comp.comparisons:
            op, right = target.operator, target.comparator
            if asserted:
                wanted = isinstance(op, _ACCEPTING)
            elif guard == "return":
                wanted = isinstance(op, _REFUSING)
            elif guard in ("cast", "cast-back"):
                wanted = isinstance(op, cst.Equal)      # `if dtype == torch.bfloat16:` (t22d)
            else:
                wanted = isinstance(op, _REFUSING + _ACCEPTING)
            if wanted:
                for value, other in ((left, right), (right, left)):
                    names = _dtype_names(other) if _is_dtype_value(value) else None
                    if names:
                        out.extend(id(n) for n in names)
            left = right
    return out
