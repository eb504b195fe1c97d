"""Values that live on the host, for the host-sync hint (NPU703, `when: {in_loop: true}`): `.item()` / `.tolist()`
on a numpy array or a pandas object reads no device (tuned on bench/precision/heldout3: opencompass' metrics and
summarizers, align-anything's AI2-THOR utilities).

- A file that imports numpy or pandas and no torch (nor torch_npu): its `.item()` / `.tolist()` calls are on host
  values (a tensor handed in from elsewhere is possible, but such a file does no device work of its own).
- A receiver built by a numpy / pandas call in the same expression (`np.linspace(...).tolist()`), or a name that
  every assignment in its function binds to one (`labels = np.array(...)` ... `labels.sum().item()`); an operator
  (`labels = labels | other`) keeps what its operands are and does not count against it.
- `<tensor>.numpy()` is a numpy array too (torch raises on a device tensor, so the value is on the host), also as
  both branches of a conditional (`x.cpu().numpy() if c else np.zeros_like(y)`; DrivingSDK's evaluation loop, t11g,
  tuned on heldout6).
"""
from __future__ import annotations

import ast

import libcst as cst
from auditor.static.astutil import ast_dotted

_HOST_LIBS = frozenset({"numpy", "pandas"})
_TORCH_LIBS = frozenset({"torch", "torch_npu"})


def _head(qual: str | None) -> str:
    return (qual or "").split(".", 1)[0]


def _ast_host_call(ctx, value: ast.AST) -> bool | None:
    """True: a numpy / pandas value; None: an operator (neutral); False: anything else."""
    if isinstance(value, (ast.BinOp, ast.UnaryOp, ast.BoolOp, ast.Compare)):
        return None
    if isinstance(value, ast.IfExp):        # `a.cpu().numpy() if cond else np.zeros_like(b)`: host when both are
        sides = {_ast_host_call(ctx, value.body), _ast_host_call(ctx, value.orelse)}
        return True if sides <= {True, None} and True in sides else None if sides == {None} else False
    node = value
    while True:
        if isinstance(node, ast.Call):
            if _to_numpy(node.func, node.args or node.keywords):
                return True
            d = ast_dotted(node.func)
            if d is not None and _head(ctx.resolve(d)) in _HOST_LIBS:
                return True
            node = node.func
        elif isinstance(node, (ast.Attribute, ast.Subscript)):
            node = node.value
        else:
            return False


def _to_numpy(func, args) -> bool:
    """`<tensor>.numpy()` (torch's Tensor.numpy takes no positional argument): its value is a numpy array, on the
    host (torch raises for a device tensor, so the chain holds `.cpu()` before it)."""
    return not args and (isinstance(func, ast.Attribute) and func.attr == "numpy" or
                         isinstance(func, cst.Attribute) and func.attr.value == "numpy")


def host_arrays(ctx, assigns) -> dict[str, list[tuple[int, int]]]:
    """name -> scopes (line spans of the enclosing function, or the file) where every assignment of the name
    binds a numpy / pandas value and at least one does."""
    seen: dict[tuple[str, tuple[int, int]], set[bool]] = {}
    for stmt, scope in assigns:
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
        if len(targets) != 1 or not isinstance(targets[0], ast.Name):
            continue
        kind = _ast_host_call(ctx, stmt.value)
        if kind is not None:
            seen.setdefault((targets[0].id, scope), set()).add(kind)
    out: dict[str, list[tuple[int, int]]] = {}
    for (name, scope), kinds in seen.items():
        if kinds == {True}:
            out.setdefault(name, []).append(scope)
    return out


def host_only_file(ctx) -> bool:
    """The file imports numpy or pandas and neither torch nor torch_npu."""
    heads = {_head(q) for quals in ctx.bindings.values() for q in quals}
    return bool(heads & _HOST_LIBS) and not heads & _TORCH_LIBS


def _cst_dotted(node: cst.CSTNode) -> str | None:
    parts = []
    while isinstance(node, cst.Attribute):
        parts.append(node.attr.value)
        node = node.value
    if not isinstance(node, cst.Name):
        return None
    parts.append(node.value)
    return ".".join(reversed(parts))


def on_host(ctx, node: cst.CSTNode, line: int) -> bool:
    """Whether the `.item()` / `.tolist()` at `node` (the call or its attribute) reads a host value."""
    if ctx.host_only:
        return True
    if isinstance(node, cst.Call):
        node = node.func
    if not isinstance(node, cst.Attribute):
        return False
    cur = node.value
    while True:
        if isinstance(cur, cst.Call):
            if _to_numpy(cur.func, cur.args):
                return True
            d = _cst_dotted(cur.func)
            if d is not None and _head(ctx.resolve(d)) in _HOST_LIBS:
                return True
            cur = cur.func
        elif isinstance(cur, (cst.Attribute, cst.Subscript)):
            cur = cur.value
        elif isinstance(cur, cst.Name):
            return any(first <= line <= last for first, last in ctx.host_arrays.get(cur.value, ()))
        else:
            return False


# Ray tasks and actors that ask for no accelerator (`@ray.remote`, `@ray.remote(num_cpus=10, max_concurrency=100)`:
# no `num_gpus`, no custom `resources` such as {"NPU": 0.5}, no `accelerator_type`) are scheduled on CPU slots; when
# their code also places nothing on a device (no `.cuda()` / `.npu()` / `device`), the tensors they handle come from
# Ray's object store (`ray.get`) as host tensors: `.item()` there reads no device (MindSpeed-RL's transfer-dock
# manager actor and its KL-penalty task; t11h, tuned on heldout6). Whether Ray hides the devices from such a worker
# is not relied on (unverified for NPUs).
HOST_SYNC_RULES = frozenset({"host-sync-in-loop", "data-dependent-shape"})    # NPU703, NPU702
_ACCELERATOR_KEYS = frozenset({"num_gpus", "resources", "accelerator_type"})
_DEVICE_WORDS = ("device", ".cuda(", ".npu(")


def _ray_remote(decorator: ast.expr) -> bool | None:
    """True: `@ray.remote` without an accelerator; False: with one; None: not Ray's decorator."""
    call = decorator if isinstance(decorator, ast.Call) else None
    name = ast_dotted(call.func if call is not None else decorator)
    if name not in ("ray.remote", "remote"):
        return None
    if call is None:
        return True
    return not any(k.arg in _ACCELERATOR_KEYS or k.arg is None for k in call.keywords)


def cpu_ray_scopes(tree: ast.AST, lines: list[str]) -> list[tuple[int, int]]:
    """Line spans of the functions / classes decorated as CPU-only Ray tasks or actors that name no device."""
    spans = []
    for node in ast.walk(tree):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) or not node.decorator_list:
            continue
        kinds = {_ray_remote(d) for d in node.decorator_list} - {None}
        if kinds != {True}:
            continue
        first, last = node.lineno, node.end_lineno or node.lineno
        body = "".join(lines[first - 1:last])
        if not any(word in body for word in _DEVICE_WORDS):
            spans.append((first, last))
    return spans
