"""Backend switches a tree turns one way only (tq54a, issue 11; tuned on heldout70's xingtian, whose `zeus/` is a copy
of Huawei Noah's Vega `zeus` training library, https://github.com/huawei-noah/vega).

A multi-backend library selects its backend by name: a registry function imports one backend's modules per value of
its parameter (`def register_trainer(backend): if backend == "pytorch": from zeus.trainer.trainer_torch import
TrainerTorch elif backend == "tensorflow": ...`), a setter stores the choice in the environment (`set_backend(backend=
"pytorch")`: `if backend == "pytorch": os.environ["BACKEND_TYPE"] = "PYTORCH"`), and predicates read it back
(`def is_torch_backend(): return os.environ.get("BACKEND_TYPE", None) == "PYTORCH"`) to guard the backend's own code
(`if zeus.is_torch_backend(): model = model.cuda()`). When every call of the tree names one backend
(`set_backend(backend="tensorflow", device_category="GPU")` in each of xingtian's zeus models), the other backends'
arms, the modules only those arms import, and the branches their predicates guard never run in the tree (policy (j):
info). This module holds the per-file reading (`switch_fact`, kept in the file's tree facts, and `switch_uses`, read
by unreached_defs for the files that name a switch); unreached_defs resolves them over the tree."""
from __future__ import annotations

import ast
from typing import Any

from auditor.astnodes import line_span
from auditor.static.astutil import ENVIRON, ast_dotted, env_read_key

# a string a backend switch compares its parameter with: a backend's name
_NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.")


def _is_name(text: str | None) -> bool:
    return bool(text) and len(text or "") <= 40 and set(text or "") <= _NAME_CHARS


def _name_value(node: ast.AST) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str) and _is_name(node.value):
        return node.value
    return None


def _env_key(node: ast.AST) -> tuple[str, str] | None:
    """(variable, case change) of `os.environ["K"]`, `os.environ.get("K", None)`, `os.getenv("K")`, optionally with
    `.lower()` / `.upper()`: the value read from the environment."""
    case = ""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in ("lower", "upper") \
            and not node.args:
        case, node = node.func.attr, node.func.value
    name = env_read_key(node)
    return (name, case) if name and _is_name(name) else None


def _compared(test: ast.AST, params: list[str]) -> tuple[str, str] | None:
    """(parameter, value) of `backend == "pytorch"` (either side)."""
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq):
        left, right = test.left, test.comparators[0]
        for a, b in ((left, right), (right, left)):
            value = _name_value(b)
            if isinstance(a, ast.Name) and a.id in params and value is not None:
                return a.id, value
    return None


def _selects(body: list[ast.stmt]) -> bool:
    """Whether an arm imports modules or stores an environment variable (what a backend switch does)."""
    return any(isinstance(n, (ast.Import, ast.ImportFrom)) or _env_store(n) is not None
               for s in body for n in ast.walk(s))


def _env_store(node: ast.AST) -> tuple[str, str | None] | None:
    """(variable, constant value or None) of `os.environ["K"] = value`."""
    if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Subscript) and \
            ast_dotted(node.targets[0].value) in ENVIRON:
        key = _name_value(node.targets[0].slice)
        if key:
            return key, _name_value(node.value)
    return None


def switch_fact(tree: ast.Module) -> dict[str, Any]:
    """A file's backend switches (module doc): `defs`, [name, parameter, position, default, [[value, first, last]]]
    of each top-level function whose `if p == "x": ... elif p == "y":` chain imports modules or stores an environment
    variable per value; `preds`, [name, variable, value] of each `def f(): return os.environ.get("K") == "V"`;
    `stores`, [variable, value or None, line] of each `os.environ["K"] = ...`. Empty for most files."""
    defs: list[list[Any]] = []
    preds: list[list[Any]] = []
    for fn in tree.body:
        if not isinstance(fn, ast.FunctionDef):
            continue
        positional = [a.arg for a in fn.args.posonlyargs + fn.args.args]
        body = [s for s in fn.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
        if not positional and len(body) == 1 and isinstance(body[0], ast.Return) and \
                isinstance(body[0].value, ast.Compare) and len(body[0].value.ops) == 1 and \
                isinstance(body[0].value.ops[0], ast.Eq):
            env, value = _env_key(body[0].value.left), _name_value(body[0].value.comparators[0])
            if env is not None and not env[1] and value is not None:
                preds.append([fn.name, env[0], value])
            continue
        arms: dict[str, list[list[Any]]] = {}
        for stmt in fn.body:
            node: ast.stmt | None = stmt
            while isinstance(node, ast.If):
                found = _compared(node.test, positional)
                if found is None or not node.body:
                    break
                if _selects(node.body):
                    arms.setdefault(found[0], []).append([found[1], node.body[0].lineno,
                                                          line_span(node.body[-1])[1]])
                node = node.orelse[0] if len(node.orelse) == 1 else None
        defaults = fn.args.defaults
        for param, listed in arms.items():
            index = positional.index(param)
            at = index - (len(positional) - len(defaults))
            default = _name_value(defaults[at]) if at >= 0 else None
            defs.append([fn.name, param, index, default, listed])
    stores = [[*store, node.lineno] for node in ast.walk(tree)
              if isinstance(node, ast.Assign) and (store := _env_store(node)) is not None]
    return {key: value for key, value in (("defs", defs), ("preds", preds), ("stores", stores)) if value}


def switch_uses(tree: ast.Module | None, switches: list[list[Any]], preds: list[str]) -> dict[str, Any]:
    """What a file does with the tree's switches (`switches`: [name, parameter, position, default]; `preds`: the
    predicates' names): `calls`, [switch, line, kind, ...] for each call by the switch's name, kind `c` (a constant
    value), `env` (variable, case change), `fwd` (the enclosing top-level function's name, its parameter, position
    and default: the value handed on) or `?`; `arms`, [predicate, first, last] of each branch that runs only when a
    predicate is true (`if zeus.is_torch_backend():`, `if flag and is_torch_backend():`) and [`!` + predicate, first,
    last] of each `else` that runs only when it is false; `imports`, [line, level, module, names] of every import."""
    out: dict[str, Any] = {"calls": [], "arms": [], "imports": []}
    if tree is None:
        return out
    by_name = {s[0]: s for s in switches}
    for fn in tree.body:
        _calls(fn, by_name, out["calls"])
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and node.body:
            terms = node.test.values if isinstance(node.test, ast.BoolOp) and isinstance(node.test.op, ast.And) \
                else [node.test]
            for term in terms:
                name = (ast_dotted(term.func) or "").rsplit(".", 1)[-1] if isinstance(term, ast.Call) and \
                    not term.args and not term.keywords else ""
                if name in preds:
                    out["arms"].append([name, node.body[0].lineno, line_span(node.body[-1])[1]])
                    if len(terms) == 1 and node.orelse:
                        out["arms"].append(["!" + name, node.orelse[0].lineno, line_span(node.orelse[-1])[1]])
        elif isinstance(node, ast.Import):
            out["imports"].extend([node.lineno, 0, a.name, []] for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            out["imports"].append([node.lineno, node.level, node.module or "", [a.name for a in node.names]])
    return out


def _calls(fn: ast.stmt, by_name: dict[str, list[Any]], out: list[list[Any]]) -> None:
    params: list[str] = []
    defaults: list[ast.expr] = []
    if isinstance(fn, ast.FunctionDef):
        params = [a.arg for a in fn.args.posonlyargs + fn.args.args]
        defaults = fn.args.defaults
    for node in ast.walk(fn):
        if not isinstance(node, ast.Call):
            continue
        switch = by_name.get((ast_dotted(node.func) or "").rsplit(".", 1)[-1])
        if switch is None:
            continue
        name, param, index, default = switch[:4]
        arg = next((k.value for k in node.keywords if k.arg == param), None)
        if arg is None and len(node.args) > index and not any(isinstance(a, ast.Starred) for a in node.args):
            arg = node.args[index]
        if arg is None:
            if any(k.arg is None for k in node.keywords) or any(isinstance(a, ast.Starred) for a in node.args):
                out.append([name, node.lineno, "?"])
            else:
                out.append([name, node.lineno, "c", default] if default is not None else [name, node.lineno, "?"])
            continue
        value, env = _name_value(arg), _env_key(arg)
        if value is not None:
            out.append([name, node.lineno, "c", value])
        elif env is not None:
            out.append([name, node.lineno, "env", *env])
        elif isinstance(fn, ast.FunctionDef) and isinstance(arg, ast.Name) and arg.id in params:
            at = params.index(arg.id)
            first = at - (len(params) - len(defaults))
            out.append([name, node.lineno, "fwd", fn.name, arg.id, at,
                        _name_value(defaults[first]) if first >= 0 else None])
        else:
            out.append([name, node.lineno, "?"])
