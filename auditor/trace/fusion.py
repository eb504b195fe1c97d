"""Hand-written patterns that a fused torch_npu API replaces, matched as subgraphs of the forward's
aten-level fx graph (auditor.trace.record builds it).

Each matcher starts at the op that anchors the pattern (rsqrt, cat, silu, softmax) and checks the
data flow around it, looking through views and dtype casts, so `x.pow(2).mean(-1)`, `x * x` and an
fp32 up-cast all match, and the operands may come from anywhere in the model. The sequences in
msprof-analyze's timeline_fusion_ops.yaml name the same patterns; here they are checked on the graph
so that an unrelated op between two steps does not hide or fake a match.
"""
from __future__ import annotations

from collections import Counter, defaultdict
from typing import Any, Callable

import torch.fx

# Ops that keep a tensor's values (up to dtype and layout): the matchers look through them.
_PASS_THROUGH = frozenset({
    "view", "_unsafe_view", "reshape", "expand", "clone", "contiguous", "_to_copy", "to", "unsqueeze",
    "squeeze", "permute", "transpose", "t", "alias", "detach", "_reshape_alias", "type_as",
})
_SPLITS = frozenset({"split", "split_with_sizes", "chunk", "unbind", "unsafe_split"})
_MATMULS = frozenset({"bmm", "mm", "matmul", "baddbmm", "addmm"})
_SOFTMAX = frozenset({"_softmax", "softmax", "_safe_softmax"})
# Between QK^T and softmax: scaling, masks, casts.
_SCORE_OPS = frozenset({"mul", "div", "add", "sub", "masked_fill", "where"})
_NATIVE_APIS = {
    "rms_norm": ("torch.nn.functional.rms_norm", "torch.rms_norm"),
    "attention": ("torch.nn.functional.scaled_dot_product_attention",
                  "torch.nn.functional.multi_head_attention_forward"),
}


def opname(node: Any) -> str:
    if isinstance(node, torch.fx.Node) and node.op == "call_function":
        target = node.target
        return str(getattr(target, "_opname", None) or getattr(target, "__name__", ""))
    return ""


def through(node: Any) -> Any:
    """Walk up through value-preserving ops (views, casts) to the op that computed the values."""
    while opname(node) in _PASS_THROUGH:
        node = node.args[0]
    return node


def source(node: Any) -> Any:
    """The tensor a slice / split piece was cut from (or the node itself)."""
    node = through(node)
    name = opname(node)
    if name in ("slice", "select", "narrow"):
        return through(node.args[0])
    if name == "_getitem" and opname(node.args[0]) in _SPLITS:
        return through(node.args[0].args[0])
    return node


def consumers(node: torch.fx.Node) -> list[torch.fx.Node]:
    """Users of a node's values, looking through views and casts."""
    out, pending, seen = [], list(node.users), set()
    while pending:
        user = pending.pop()
        if user in seen:
            continue
        seen.add(user)
        if opname(user) in _PASS_THROUGH:
            pending.extend(user.users)
        else:
            out.append(user)
    return out


def _is_native(node: torch.fx.Node, pattern: str) -> bool:
    return node.meta.get("api", "") in _NATIVE_APIS.get(pattern, ())


def _tensor_args(node: torch.fx.Node) -> list[torch.fx.Node]:
    return [a for a in node.args if isinstance(a, torch.fx.Node)]


def match_rms_norm(node: torch.fx.Node) -> dict | None:
    """x * rsqrt(mean(x^2) + eps)  (or x / sqrt(...)), optionally times a weight."""
    name = opname(node)
    if name not in ("rsqrt", "sqrt") or _is_native(node, "rms_norm"):
        return None
    inner, eps = through(node.args[0]), None
    if opname(inner) == "add" and not isinstance(inner.args[1], torch.fx.Node):
        eps, inner = inner.args[1], through(inner.args[0])
    if opname(inner) != "mean":
        return None
    square = through(inner.args[0])
    if opname(square) == "pow" and square.args[1] == 2:
        x = source(square.args[0])
    elif opname(square) == "mul" and len(_tensor_args(square)) == 2 and \
            source(square.args[0]) is source(square.args[1]):
        x = source(square.args[0])
    else:
        return None
    if _is_centered(x):
        return None  # (x - mean) / sqrt(var + eps) is a LayerNorm: F.layer_norm has its own NPU kernel
    combine = "mul" if name == "rsqrt" else "div"
    for user in consumers(node):
        if opname(user) == combine and any(source(a) is x for a in _tensor_args(user) if a is not node):
            weight = next((u for u in consumers(user) if opname(u) == "mul"), None)
            shape = x.meta.get("shape")
            return {"anchor": node, "eps": eps, "weight": weight is not None,
                    "hidden": shape[-1] if shape else None, "dtype": str(x.meta.get("dtype") or "")}
    return None


def _is_centered(x: Any) -> bool:
    """x is `y - mean(y)`."""
    if opname(x) != "sub" or not isinstance(x.args[1], torch.fx.Node):
        return False
    mean = through(x.args[1])
    return opname(mean) == "mean" and source(mean.args[0]) is source(x.args[0])


def match_rotary(node: torch.fx.Node) -> dict | None:
    """rotate_half: cat(-x2, x1) of the two halves of x, then x * cos + rotate_half(x) * sin."""
    halves = node.args[0] if node.args else None
    if opname(node) != "cat" or not isinstance(halves, (list, tuple)) or len(halves) != 2:
        return None
    first, second = (through(a) for a in halves)
    if opname(first) != "neg":
        return None
    x = source(first.args[0])
    if source(second) is not x or through(first.args[0]) is x:
        return None
    anchor = node
    for user in consumers(node):
        if opname(user) == "mul":
            adds = [u for u in consumers(user) if opname(u) == "add"]
            if adds:
                anchor = adds[0]
                break
    shape = x.meta.get("shape")
    return {"anchor": anchor, "shape": shape, "dtype": str(x.meta.get("dtype") or "")}


def match_swiglu(node: torch.fx.Node) -> dict | None:
    """silu(gate) * up  (silu spelled as F.silu or gate * sigmoid(gate))."""
    if opname(node) != "mul" or len(_tensor_args(node)) != 2:
        return None
    if _shape(node.args[0]) != _shape(node.args[1]):
        return None  # silu(x) * a broadcast scale is not a gated unit
    a, b = (through(x) for x in node.args[:2])
    for act, up in ((a, b), (b, a)):
        gate = _silu_input(act)
        if gate is None or source(up) is gate or _silu_input(up) is not None:
            continue
        one_tensor = opname(through(gate)) == "_getitem" and source(gate) is source(up)
        shape = gate.meta.get("shape")
        return {"anchor": node, "one_tensor": one_tensor, "shape": shape,
                "dtype": str(gate.meta.get("dtype") or "")}
    return None


def _shape(node: Any) -> tuple | None:
    return node.meta.get("shape") if isinstance(node, torch.fx.Node) else None


def _silu_input(node: Any) -> Any:
    if opname(node) == "silu":
        return through(node.args[0])
    if opname(node) == "mul" and len(_tensor_args(node)) == 2:
        x, y = (through(v) for v in node.args[:2])
        for sig, other in ((x, y), (y, x)):
            if opname(sig) == "sigmoid" and through(sig.args[0]) is other:
                return other
    return None


def match_attention(node: torch.fx.Node) -> dict | None:
    """matmul(q, k^T) [* scale] [+ mask] -> softmax [-> dropout] -> matmul(., v)."""
    if opname(node) not in _SOFTMAX or _is_native(node, "attention"):
        return None
    scores, scale, masked = through(node.args[0]), None, False
    while opname(scores) in _SCORE_OPS:
        other = [a for a in scores.args[1:] if not isinstance(a, torch.fx.Node)]
        if opname(scores) in ("mul", "div") and other:
            scale = other[0] if opname(scores) == "mul" else 1.0 / other[0]
        else:
            masked = True
        scores = through(scores.args[0])
    if opname(scores) not in _MATMULS:
        return None
    probs, pending = None, list(consumers(node))
    while pending:
        user = pending.pop()
        if opname(user) in ("native_dropout", "dropout", "_getitem") or _is_dropout_mul(user):
            pending.extend(consumers(user))
        elif opname(user) in _MATMULS:
            probs = user
            break
    if probs is None:
        return None
    query = _pre_view_shape(scores.args[0] if opname(scores) != "addmm" else scores.args[1])
    return {"anchor": node, "scale": scale, "masked": masked, "query_shape": query,
            "dtype": str(node.meta.get("dtype") or "")}


def _is_dropout_mul(node: Any) -> bool:
    """`x * mask` with a Bernoulli mask: dropout as the CPU decomposes it (empty_like -> bernoulli_ ->
    div_ by 1 - p -> mul), where CUDA calls native_dropout."""
    if opname(node) != "mul" or len(_tensor_args(node)) != 2:
        return False
    for operand in _tensor_args(node):
        mask: Any = operand
        steps = 0
        while isinstance(mask, torch.fx.Node) and steps < 6:
            name = opname(mask)
            if name in ("bernoulli", "bernoulli_"):
                return True
            if name not in _PASS_THROUGH and name not in ("div", "div_", "mul", "mul_"):
                break
            mask, steps = mask.args[0], steps + 1
    return False


def _pre_view_shape(node: Any) -> tuple | None:
    """The highest-rank shape along the view chain: (B, N, S, D) before attention flattens it."""
    best = node.meta.get("shape") if isinstance(node, torch.fx.Node) else None
    while opname(node) in _PASS_THROUGH:
        node = node.args[0]
        shape = node.meta.get("shape") if isinstance(node, torch.fx.Node) else None
        if shape and (best is None or len(shape) > len(best)):
            best = shape
    return tuple(best) if best else None


MATCHERS: dict[str, Callable[[torch.fx.Node], dict | None]] = {
    "rms_norm": match_rms_norm,
    "rotary": match_rotary,
    "swiglu": match_swiglu,
    "attention": match_attention,
}


def match_fusions(graph: torch.fx.Graph) -> list[dict]:
    """Every pattern instance, grouped by (pattern, source line): plain data for the parent process."""
    groups: dict[tuple, dict] = {}
    modules: dict[tuple, Counter] = defaultdict(Counter)
    for node in graph.nodes:
        if node.op != "call_function":
            continue
        for pattern, matcher in MATCHERS.items():
            found = matcher(node)
            if found is None:
                continue
            anchor = found.pop("anchor")
            key = (pattern, anchor.meta.get("frame"))
            modules[key][anchor.meta.get("module", "")] += 1
            if key in groups:
                groups[key]["count"] += 1
            else:
                groups[key] = {"pattern": pattern, "frame": anchor.meta.get("frame"), "count": 1,
                               "api": anchor.meta.get("api", ""),
                               "detail": {k: (str(v) if k == "dtype" else v) for k, v in found.items()}}
    for key, group in groups.items():
        group["modules"] = sorted(modules[key])
        group["module_counts"] = dict(modules[key])  # per module, for scaling traced blocks to the depth
    return list(groups.values())
