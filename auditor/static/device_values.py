"""Values that come from device work, for the host-sync hint (NPU703, `.item()` / `.tolist()` in a loop): the
positive reading of the receiver that host_values.py reads negatively (hq39, session 39; TUNED on heldout30..
heldout41, docs/precision.md "hq39").

host_values.on_host / runs_once drop a hint when the receiver is proven to be on the host (a numpy array, a torch
factory without a device, a tokenizer's output, ...). That proof is grown one family per split, and every false row
of the held-out splits was a host value no family had met yet. This module asks the other question: does the
function show that the receiver is a device value? A `.item()` / `.tolist()` in a loop is reported only when it
does (engine.py: `on_device`), so an unknown receiver in host-side code (a metrics script, a data pipeline, a
driver-side reward loop) is no longer reported by default.

A receiver is a device value when, in the function holding the call (assignments read in any order, to a fixed
point; nested functions and lambdas are their own scopes):

- its chain has a move to a device (`.to(device)`, `.cuda()`, `.npu()`; not `.to(torch.float32)`, `.to("cpu")`)
  or a call with a device (`torch.randn(..., device=x.device)`, not `device="cpu"`; `prepare_batch_inputs(batch,
  opt.device)`: a device passed by position), or a torch call in a file that
  sets a default device (`torch.set_default_device("cuda")`);
- its chain calls a model, a loss or a generator: a callee whose name says it is one (`model(...)`,
  `self.net_g(...)`, `criterion(...)`, `F.mse_loss(...)`, `self.forward(...)`, `model.generate(...)`,
  `self.sampler.sample(...)` is not: `sample` is not such a word; a model object's other methods,
  `self.policy.evaluate_actions(obs)`, only in a function that does device work: `OCR_MODEL.ocr(image)` in a web
  endpoint returns numpy boxes), reads a model's parameter (`trainer.model.a`, `self.model.parameters()`), or
  reads a model output's or an optimiser helper's tensor field (`outputs.loss`, `.logits`, GradScaler's
  `scaler._scale`);
- it is named as a loss (`loss`, `r_loss`, `loss_G`, `total_vla_loss`): what a criterion returns on model outputs;
- its root is a name bound in the function to such a value, or to an expression over one that stays a tensor
  (indexing, a method of it, arithmetic, `torch.max(sim1, sim2)`, `for x in <device value>`), or a `self.`
  attribute bound so in its class, or a method's parameter that a `self.m(...)` call of its class passes such a
  value (verl's `compute_rm_score` moving `data` to the device, then `self._switch_chat_template(data)`), or the
  result of a same-file function or method that returns a device value by its own assignments;
- the function itself does device work, as a fallback for receivers no assignment explains: it moves or places
  something on a device, reads a `.device`, calls `.backward()` or `.generate(...)` (`device_work`).

Nothing here says a value is on the host; host_values.py stays the one reader of host values, and a host proof
there still wins (a device-working function that reads `batch["datetime"]` straight off a DataLoader is dropped by
neither reading, and stays a known miss).
"""
from __future__ import annotations

import ast
import re

from auditor.astnodes import device_literal
from auditor.static.astutil import ast_dotted, self_attr
from auditor.static.host_values import own_scope_nodes, sets_default_device

# callees that are models, losses or generators, read off the callee's last name (`self.net_g` -> net_g); a word
# inside an identifier counts only at a `_` boundary or a case change (`netG`, `LossFn`), not inside another word
# (`cabinet`, `glossary`)
_MODEL_WORDS = re.compile(
    r"(?:^|_|(?<=[a-z])(?=[A-Z]))(?:model|net|module|encoder|decoder|criterion|loss|forward|generate|stream_generate|"
    r"policy|actor|critic|discriminator|backbone|transformer|unet|vae|llm|predictor)(?:$|_|(?=[A-Z0-9]))",
    re.IGNORECASE)
# tensor fields of a model output or of an optimiser helper (transformers' ModelOutput; torch.amp.GradScaler keeps
# its scale as the tensor `_scale` on the training device)
_DEVICE_FIELDS = frozenset({"loss", "logits", "last_hidden_state", "_scale"})
_STATE_METHODS = frozenset({"parameters", "named_parameters", "buffers", "named_buffers"})
_LOSS_NAME = re.compile(r"(?:^|_|(?<=[a-z])(?=[A-Z]))loss(?:$|_|es$|(?=[A-Z0-9]))", re.IGNORECASE)
_MOVES = frozenset({"cuda", "npu", "xpu", "mlu", "musa"})
_HOST_DEVICES = frozenset({"cpu", "meta"})
# `.to(torch.float16)`, `.to(dtype)`, `.to(self.dtype)`: a cast, not a move
_DTYPE = re.compile(r"^(?:torch\.)?(?:u?int\d*|float\d*\w*|bfloat16|half|double|bool|long|complex\d*|\w*dtype\w*)$")
_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
# in the names of a file that sets a default device (host_values.sets_default_device): torch's factories place there
DEFAULT_DEVICE = "<default device>"
# in the names of a function that does device work (`device_work`): a model object's methods give device values there
DEVICE_WORK = "<device work>"
# builtins whose result is a Python value, not the tensor they are given
_PYTHON_VALUES = frozenset({"len", "int", "float", "bool", "str", "repr", "print", "isinstance", "type", "id", "hash",
                            "range", "format", "round"})


def _host_device(node: ast.AST) -> bool:
    """`"cpu"`, `"meta"`, `None`, `torch.device("cpu")`."""
    return isinstance(node, ast.Constant) and node.value is None or device_literal(node) in _HOST_DEVICES


def _places(call: ast.Call) -> bool:
    """A move to a device (`.to(device)`, `.cuda()`) or a call that names a device other than the CPU."""
    func = call.func
    if isinstance(func, ast.Attribute) and func.attr in _MOVES:
        return True
    if isinstance(func, ast.Attribute) and func.attr == "to":
        target = call.args[0] if call.args else next((k.value for k in call.keywords if k.arg == "device"), None)
        return target is not None and not _host_device(target) and not _DTYPE.match(ast_dotted(target) or "")
    # `device=x.device`; a device passed by position (`prepare_batch_inputs(batch, opt.device)`, `.to(self.device)`)
    return any(k.arg == "device" and not _host_device(k.value) for k in call.keywords) or any(
        (ast_dotted(a) or "").rsplit(".", 1)[-1].lower() == "device" for a in call.args)


def _chain(node: ast.AST) -> list[ast.AST]:
    """The node and what it is read off: `a.b(c)[0].d` -> [a.b(c)[0].d, a.b(c)[0], a.b(c), a.b, a]."""
    out = [node]
    while isinstance(node, (ast.Call, ast.Attribute, ast.Subscript)):
        node = node.func if isinstance(node, ast.Call) else node.value
        out.append(node)
    return out


def _direct(node: ast.AST) -> bool:
    """The expression's own chain shows a device value (a move, a device argument, a model / loss call, a model
    output's field)."""
    parts = _chain(node)
    for part in parts:
        if isinstance(part, ast.Call):
            if _places(part):
                return True
            # `model(x)`, `self.net_g(x)`, `model.generate(x)`, `criterion(out, y)`: the callee's own name (a
            # wrapper's method is not read: `self.ocr_model.ocr(img)` returns numpy boxes)
            if _MODEL_WORDS.search((ast_dotted(part.func) or "").rsplit(".", 1)[-1]):
                return True
        elif isinstance(part, ast.Attribute) and part.attr in _DEVICE_FIELDS:
            return True
    if not any(isinstance(p, ast.Call) for p in parts) and any(
            p is not node and _MODEL_WORDS.search(p.attr if isinstance(p, ast.Attribute) else getattr(p, "id", ""))
            for p in parts[1:]):
        return True     # `trainer.model.a`, `self.net.weight`: a model's parameter or buffer, read without a call
    return False


def _root(node: ast.AST) -> str | None:
    """The name (`x`) or `self.x` a chain is read off."""
    parts = _chain(node)
    for part in parts:
        if (attr := self_attr(part)) is not None:
            return "self." + attr
    return parts[-1].id if isinstance(parts[-1], ast.Name) else None


def _named_loss(root: str | None) -> bool:
    return root is not None and bool(_LOSS_NAME.search(root.rsplit(".", 1)[-1]))


def _derived(node: ast.AST, names: set[str]) -> bool:
    """A device value by its own chain, or a tensor computed from one of `names` (indexing it, a method of it,
    arithmetic with it, a `torch.` function of it, one arm of a conditional)."""
    if _direct(node):
        return True
    if isinstance(node, ast.BinOp):
        return _derived(node.left, names) or _derived(node.right, names)
    if isinstance(node, ast.UnaryOp):
        return _derived(node.operand, names)
    if isinstance(node, ast.Compare):
        return _derived(node.left, names) or any(_derived(c, names) for c in node.comparators)
    if isinstance(node, ast.IfExp):
        return _derived(node.body, names) or _derived(node.orelse, names)
    if isinstance(node, ast.Starred):
        return _derived(node.value, names)
    if isinstance(node, (ast.Tuple, ast.List)):     # `a, b = steps[i], steps[i + 1]`
        return any(_derived(e, names) for e in node.elts)
    if isinstance(node, (ast.ListComp, ast.SetComp, ast.GeneratorExp)):
        return _derived(node.elt, names)            # `outs = [model(b.cuda()) for b in batches]`
    root = _root(node)
    if root is not None and (root in names or _named_loss(root)):
        return True
    for part in _chain(node):
        if isinstance(part, ast.Call) and f"{ast_dotted(part.func)}()" in names:
            return True     # a same-file function that returns a device value (`DeviceReader._returning`)
        if isinstance(part, ast.Call) and DEFAULT_DEVICE in names and (ast_dotted(part.func) or "").startswith("torch."):
            return True     # `torch.zeros(n)` in a file that sets a default device (`torch.set_default_device`)
        if isinstance(part, ast.Call) and isinstance(part.func, ast.Attribute) and part.func.attr in _STATE_METHODS \
                and _MODEL_WORDS.search((ast_dotted(part.func.value) or "").rsplit(".", 1)[-1]):
            return True     # `self.model.parameters()`: a model's parameters or buffers
        if isinstance(part, ast.Call) and DEVICE_WORK in names and any(
                _MODEL_WORDS.search(x) for x in (ast_dotted(part.func) or "").split(".")[:-1]):
            return True     # `self.policy.evaluate_actions(obs)` in a function that does device work
        # `torch.max(sim1, sim2)`, `zip(preds, has_fg)`, `mean_over_pairs(pae, mask)`: a function of a device value
        # (not one that makes a Python value of it: `len(x)`, `int(x)`)
        if isinstance(part, ast.Call) and ast_dotted(part.func) not in _PYTHON_VALUES and any(
                _derived(a, names) for a in [*part.args, *(k.value for k in part.keywords)]):
            return True
    return False


def _bindings(scope: ast.AST) -> list[tuple[list[str], ast.AST]]:
    """(names bound, the value they are bound from) for the scope's assignments, `for` targets, comprehension
    targets and `with ... as` names, outside nested functions and classes."""
    out: list[tuple[list[str], ast.AST]] = []

    def names(target: ast.AST) -> list[str]:
        if (attr := self_attr(target)) is not None:
            return ["self." + attr]
        return [n.id for n in ast.walk(target) if isinstance(n, ast.Name)]

    for node in own_scope_nodes(scope):
        if isinstance(node, ast.Assign):
            out += [(names(t), node.value) for t in node.targets]
        elif isinstance(node, (ast.AnnAssign, ast.AugAssign, ast.NamedExpr)) and node.value is not None:
            out.append((names(node.target), node.value))
        elif isinstance(node, (ast.For, ast.AsyncFor, ast.comprehension)):
            out.append((names(node.target), node.iter))
        elif isinstance(node, ast.withitem) and node.optional_vars is not None:
            out.append((names(node.optional_vars), node.context_expr))
    return out


def device_names(scope: ast.AST, seed: set[str] | None = None) -> set[str]:
    """Names (and `self.` attributes) the scope binds to device values, to a fixed point."""
    binds = _bindings(scope)
    dev = set(seed or ())
    changed = True
    while changed:
        changed = False
        for targets, value in binds:
            if not set(targets) <= dev and _derived(value, dev):
                dev.update(targets)
                changed = True
    return dev


def device_work(scope: ast.AST) -> bool:
    """The function moves or places something on a device, reads a `.device`, or runs a backward pass or a
    generation (`loss.backward()`, `model.generate(...)`)."""
    for node in own_scope_nodes(scope):
        if isinstance(node, ast.Call):
            if _places(node):
                return True
            if isinstance(node.func, ast.Attribute) and node.func.attr in ("backward", "generate"):
                return True
        elif isinstance(node, ast.Attribute) and node.attr == "device":
            return True
    return False


class DeviceReader:
    """One file's reading: the innermost function around a line, its device names (with its class's `self.`
    attributes bound to device values in any method), memoised per function."""

    def __init__(self, tree: ast.Module) -> None:
        self._tree = tree
        self._scopes: list[tuple[ast.FunctionDef | ast.AsyncFunctionDef, ast.ClassDef | None]] = []
        self._names: dict[int, set[str]] = {}
        self._class_names: dict[int, set[str]] = {}
        self._work: dict[int, bool] = {}
        self._bound_names: dict[int, set[str]] = {}
        self._returns: set[str] | None = None
        self._receivers: dict[int, list[ast.expr]] | None = None
        self._default = {DEFAULT_DEVICE} if sets_default_device(tree) else set()
        stack: list[tuple[ast.AST, ast.ClassDef | None]] = [(tree, None)]
        while stack:
            node, cls = stack.pop()
            for child in ast.iter_child_nodes(node):
                if isinstance(child, _FUNCTIONS):
                    self._scopes.append((child, cls))
                    stack.append((child, None))
                elif isinstance(child, ast.ClassDef):
                    stack.append((child, child))
                else:
                    stack.append((child, cls))

    def _scope(self, line: int) -> tuple[ast.AST, ast.ClassDef | None]:
        best: tuple[ast.AST, ast.ClassDef | None] = (self._tree, None)
        for fn, cls in self._scopes:
            if fn.lineno <= line <= (fn.end_lineno or fn.lineno) and fn.lineno >= getattr(best[0], "lineno", 0):
                best = (fn, cls)
        return best

    def _returning(self) -> set[str]:
        """`f()` / `self.m()` for the file's functions and methods one of whose `return`s gives a device value by
        their own assignments (`def compute_iou(...): pred = torch.Tensor(pred).to("cuda") ... return
        temporal_iou(pred, span)`)."""
        if self._returns is None:
            self._returns = set()
            for fn, cls in self._scopes:
                names = device_names(fn)
                if any(isinstance(n, ast.Return) and n.value is not None and _derived(n.value, names)
                       for n in own_scope_nodes(fn)):
                    self._returns.add(f"self.{fn.name}()" if cls is not None else f"{fn.name}()")
        return self._returns

    def _class_attrs(self, cls: ast.ClassDef) -> set[str]:
        if id(cls) not in self._class_names:
            attrs: set[str] = set()
            for fn in cls.body:
                if isinstance(fn, _FUNCTIONS):
                    attrs |= {n for n in device_names(fn) if n.startswith("self.")}
            self._class_names[id(cls)] = attrs
        return self._class_names[id(cls)]

    def _names_of(self, scope: ast.AST, cls: ast.ClassDef | None, params: bool = True) -> set[str]:
        key = id(scope) if params else -id(scope)
        if key not in self._names:
            seed = self._returning() | (self._class_attrs(cls) if cls is not None else set()) | self._default
            if params and cls is not None and isinstance(scope, _FUNCTIONS):
                seed |= self._device_params(scope, cls)
            if self._works(scope):
                seed.add(DEVICE_WORK)
            self._names[key] = device_names(scope, seed)
        return self._names[key]

    def _device_params(self, fn: ast.FunctionDef | ast.AsyncFunctionDef, cls: ast.ClassDef) -> set[str]:
        """Parameters of a method that a `self.m(...)` call in its class passes a device value to (the caller's
        names read without this step: one level of calls)."""
        params = [a.arg for a in (*fn.args.posonlyargs, *fn.args.args)][1:]
        out: set[str] = set()
        for caller in cls.body:
            if not isinstance(caller, _FUNCTIONS) or caller is fn:
                continue
            calls = [n for n in own_scope_nodes(caller) if isinstance(n, ast.Call) and self_attr(n.func) == fn.name]
            if not calls:
                continue
            names = self._names_of(caller, cls, params=False)
            for call in calls:
                passed = [(params[i], a) for i, a in enumerate(call.args[:len(params)])
                          if not any(isinstance(x, ast.Starred) for x in call.args[:i + 1])]
                passed += [(k.arg, k.value) for k in call.keywords if k.arg is not None]
                out |= {p for p, a in passed if _derived(a, names)}
        return out

    def receivers(self, line: int) -> list[ast.expr]:
        """The receivers of the `.item()` / `.tolist()` calls whose method name ends on `line` (the file read once,
        on the first hint, not once per hint)."""
        if self._receivers is None:
            self._receivers = receivers_by_line(self._tree)
        return self._receivers.get(line, [])

    def receiver_on_device(self, receiver: ast.AST, line: int) -> bool:
        """Whether the receiver of the `.item()` / `.tolist()` on `line` is a device value (module doc)."""
        scope, cls = self._scope(line)
        if _derived(receiver, self._names_of(scope, cls)):
            return True
        root = _root(receiver)
        if root is not None and root in self._bound(scope):
            return False        # the function binds it and none of its bindings shows a device value
        return self._works(scope)

    def _works(self, scope: ast.AST) -> bool:
        if id(scope) not in self._work:
            self._work[id(scope)] = scope is not self._tree and device_work(scope)
        return self._work[id(scope)]

    def _bound(self, scope: ast.AST) -> set[str]:
        """Names the function binds itself, not its parameters (`input_ids = input_ids[mask]` still reads the
        caller's tensor)."""
        if id(scope) not in self._bound_names:
            params = {a.arg for a in ast.walk(scope.args) if isinstance(a, ast.arg)} if isinstance(scope, _FUNCTIONS) \
                else set()
            self._bound_names[id(scope)] = {n for targets, _ in _bindings(scope) for n in targets} - params
        return self._bound_names[id(scope)]


def receivers_by_line(tree: ast.Module) -> dict[int, list[ast.expr]]:
    """The receivers of the file's `.item()` / `.tolist()` calls, by the line their method name ends on."""
    out: dict[int, list[ast.expr]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr in ("item", "tolist") and node.end_lineno is not None:
            out.setdefault(node.end_lineno, []).append(node.value)
    return out


def sync_receivers(tree: ast.Module, line: int) -> list[ast.expr]:
    """The receivers of the `.item()` / `.tolist()` calls whose method name ends on `line`."""
    return receivers_by_line(tree).get(line, [])


def on_device(ctx, line: int, col: int) -> bool:
    """Whether the `.item()` / `.tolist()` reported at (line, col) (col: 1-based start of the call) reads a device
    value by this module's reading; True where the file has no ast (nothing to read)."""
    if ctx.module is None:
        return True
    if ctx.device_reader is None:
        ctx.device_reader = DeviceReader(ctx.module)
    receivers = ctx.device_reader.receivers(line)
    if not receivers:
        return True
    exact = [r for r in receivers if r.lineno == line and r.col_offset + 1 == col]
    return any(ctx.device_reader.receiver_on_device(r, line) for r in exact or receivers)
