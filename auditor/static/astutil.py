"""Small helpers over Python's `ast` shared by the static passes that read a file's tree without libcst."""
from __future__ import annotations

import ast
import re
from collections.abc import Iterable

from auditor.astnodes import ENV_GETS, ENVIRON, ast_dotted, literal_strings, module_nodes, module_nodes_of, walk_list  # noqa: F401  (re-exported: the passes' import)


# The last part of a call's name that shows a message to a person (print, logging, warnings, transformers' *_once):
# what it is given is read only to be shown, and an `if` whose body only calls these decides nothing.
MESSAGE_CALLS = frozenset({"print", "log", "debug", "info", "warn", "warning", "error", "exception", "critical",
                           "info_once", "warning_once"})
# Names of the same kind that a call's last part only starts or ends with (`warn_once`, `logger_info`, `log_rank_0`,
# detectron2's `_log_api_usage`, torch's `_log_api_usage_once`)
_MESSAGE_NAME = re.compile(r"(?i)^(?:print|warn|info|debug)|(?:^|_)(?:log|logger|logging|warn|warning|usage)(?:_|$)")


def logs_its_arguments(call_name: str) -> bool:
    """Whether a call named `call_name` (dotted or not) shows or logs what it is given: its last part is one of
    MESSAGE_CALLS or is named like them. What it is given names an event or a message, never a module to load."""
    last = call_name.rsplit(".", 1)[-1]
    return last in MESSAGE_CALLS or _MESSAGE_NAME.search(last) is not None


def pytest_fixture_name(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> str | None:
    """The name a pytest fixture is requested by (`@pytest.fixture(params=["cuda", "cpu"]) def mock_device(...)`,
    `@pytest.fixture(name="dev")`), or None for a function that is no fixture."""
    for d in fn.decorator_list:
        call = d if isinstance(d, ast.Call) else None
        if (ast_dotted(call.func if call is not None else d) or "").rsplit(".", 1)[-1] != "fixture":
            continue
        named = next((k.value.value for k in (call.keywords if call is not None else ()) if k.arg == "name"
                      and isinstance(k.value, ast.Constant) and isinstance(k.value.value, str)), None)
        return named or fn.name
    return None


def self_attr(node: ast.AST | None) -> str | None:
    """X of `self.X`, else None."""
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self":
        return node.attr
    return None


def name_or_self_attr(node: ast.AST | None) -> str | None:
    """`x` for a name, `self.x` for an attribute of `self` (a flag or device value kept in either), else None."""
    if isinstance(node, ast.Name):
        return node.id
    attr = self_attr(node)
    return None if attr is None else "self." + attr


def env_read(value: ast.AST) -> bool:
    """`os.environ.get("X")`, `os.getenv("X")`, `os.environ["X"]` (or `environ` / `getenv` imported bare): the
    expression reads an environment variable itself, not a value derived from one (`int(os.getenv("X", "0"))`)."""
    if isinstance(value, ast.Subscript):
        return ast_dotted(value.value) in ENVIRON
    return isinstance(value, ast.Call) and ast_dotted(value.func) in ENV_GETS


def env_read_key(value: ast.AST) -> str | None:
    """The variable an `env_read` names with a string literal (`os.environ["X"]`, `os.getenv("X", "0")`), else None."""
    if not env_read(value):
        return None
    key = value.slice if isinstance(value, ast.Subscript) else value.args[0] if isinstance(value, ast.Call) and \
        value.args else None
    return key.value if isinstance(key, ast.Constant) and isinstance(key.value, str) else None


def env_get_default(value: ast.AST) -> tuple[str, ast.expr | None] | None:
    """(variable, default) of a call that reads a variable named by a string literal with its default given by
    position (`os.getenv("X", "0")` -> ("X", the "0" node); `os.environ.get("X")` -> ("X", None)); None for a
    subscript, a key that is not a literal, or keyword arguments (their meaning is the callee's)."""
    key = env_read_key(value)
    if key is None or not isinstance(value, ast.Call) or value.keywords or len(value.args) > 2:
        return None
    return key, value.args[1] if len(value.args) == 2 else None


def env_membership(test: ast.AST) -> str | None:
    """The variable of `"X" in os.environ` (or a bare `environ`): a test of whether it is set."""
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.In) \
            and isinstance(test.left, ast.Constant) and isinstance(test.left.value, str) \
            and ast_dotted(test.comparators[0]) in ENVIRON:
        return test.left.value
    return None


_NESTED = (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


def import_bound_names(tree: ast.Module, absolute_only: bool = False) -> set[str]:
    """Names the module binds by an import (`import a.b as c` -> c, `import a.b` -> a, `from x import y` -> y; not a
    star import): the modules and objects a call may go through (call_defaults). `absolute_only`: not the names of a
    relative import (`from .utils import setup`: the tree's own module; switch_fed_settings)."""
    out: set[str] = set()
    for node in module_nodes(tree):
        if isinstance(node, ast.Import):
            out.update(a.asname or a.name.split(".", 1)[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom) and not (absolute_only and node.level):
            out.update(a.asname or a.name for a in node.names if a.name != "*")
    return out


def bound_names(nodes: list[ast.AST], scoped: bool, params: Iterable[str] = (), imports: bool = False) -> set[str]:
    """The names `nodes` (and the nodes inside them) bind: stored names, parameters, def / class names, `except ... as`
    and `case ... as` names. One walker, two readings:
    - `scoped=False`, flat (star_names: can a called name come from a star import?): every binding anywhere below,
      nested functions, lambdas and comprehensions included; an import's names (`import a.b` binds `a`) and the
      names a `global` / `nonlocal` declares count as bound.
    - `scoped=True`, one scope's own locals (crossfile's shadowed star-import names; `nodes` are the scope's body):
      a nested def or class binds only its name (its decorators, bases, keyword values and defaults are walked:
      they run in this scope), a nested lambda or comprehension binds nothing here, an import is not counted (the
      cross-file pass follows imports inside functions), and `global` / `nonlocal` names are not local (nor are
      `params`, the scope's parameters, when declared so: a SyntaxError only at compile time, `ast` takes it);
      `imports`: a scoped reading that counts an import's names too (unreached_defs: a local import is local)."""
    names: set[str] = set(params)
    declared: set[str] = set()
    stack = list(nodes)
    while stack:
        n = stack.pop()
        if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load):
            names.add(n.id)
        elif isinstance(n, ast.arg):        # (scoped: never reached, a nested scope's arguments are not walked)
            names.add(n.arg)
        elif isinstance(n, ast.alias):
            if (not scoped or imports) and n.name != "*":
                names.add(n.asname or n.name.split(".", 1)[0])
        elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(n.name)
            if scoped:
                stack += [*n.decorator_list, *getattr(n, "bases", ()), *[k.value for k in getattr(n, "keywords", ())]]
                if not isinstance(n, ast.ClassDef):
                    stack += [d for d in [*n.args.defaults, *n.args.kw_defaults] if d is not None]
                continue            # (its body is a scope of its own)
        elif isinstance(n, _NESTED):
            if scoped:
                continue            # (a scope of its own; a walrus inside binds here, rare enough to leave)
        elif isinstance(n, (ast.Global, ast.Nonlocal)):
            (declared if scoped else names).update(n.names)
        elif isinstance(n, ast.ExceptHandler) and n.name:
            names.add(n.name)
        elif isinstance(n, ast.MatchAs) and n.name:
            names.add(n.name)
        stack += list(ast.iter_child_nodes(n))
    return names - declared


def scope_locals(node: ast.AST, imports: bool = False) -> set[str]:
    """Names a function, lambda, class or comprehension binds in its own scope: its parameters (a comprehension's
    targets) and the names its body stores or defines, less those it declares `global` / `nonlocal`; with `imports`,
    the names its own imports bind too (bound_names' scoped reading)."""
    names: list[str] = []
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
        a = node.args
        names += (x.arg for x in [*a.posonlyargs, *a.args, *a.kwonlyargs, a.vararg, a.kwarg] if x is not None)
        body: list[ast.AST] = [node.body] if isinstance(node, ast.Lambda) else list(node.body)
    elif isinstance(node, ast.ClassDef):
        body = list(node.body)
    else:                       # a comprehension: its targets only (its iterables and tests are walked as uses)
        body = [g.target for g in node.generators]      # type: ignore[attr-defined]
    return bound_names(body, scoped=True, params=names, imports=imports)


def scope_nodes(scope: ast.AST):
    """The nodes of a module or function, not those of the functions nested in it (they are scopes of their own):
    a nested def or lambda is yielded, its body is not."""
    stack = list(ast.iter_child_nodes(scope))
    while stack:
        node = stack.pop()
        yield node
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            stack.extend(ast.iter_child_nodes(node))


def _string_display(node: ast.AST) -> bool:
    """A set / list / tuple display of two or more string constants (`{"vllm", "prefix_caching", "flash_attention"}`)."""
    return isinstance(node, (ast.Set, ast.List, ast.Tuple)) and len(node.elts) >= 2 and all(
        isinstance(e, ast.Constant) and isinstance(e.value, str) for e in node.elts)


def _only_strings(node: ast.AST) -> bool:
    """A string constant, or a conditional expression choosing between such (`"vllm" if self.vllm else "hf"`)."""
    if isinstance(node, ast.IfExp):
        return _only_strings(node.body) and _only_strings(node.orelse)
    return isinstance(node, ast.Constant) and isinstance(node.value, str)


def name_strings(tree: ast.AST) -> tuple[set[tuple[int, int]], set[int]]:
    """Strings that name or store something and run nothing: (line, 0-based column) of the elements of a set / list /
    tuple display of strings (a set of option names kept to trim a log, a choices list, a table of names), and the
    lines of one-line assignments that only store a string in an attribute (`self.model_backend = "vllm"`, either arm
    of `"vllm" if self.vllm else "huggingface"`: a setting's value, read where the setting is used). A finding on one
    is reported where it is written; it does not make the function or class around it CUDA code that callers or
    importers use (the definition readers: crossfile.summarize)."""
    spots: list[ast.expr] = []
    lines: set[int] = set()
    for n in module_nodes(tree):
        if isinstance(n, (ast.Set, ast.List, ast.Tuple)) and _string_display(n):
            spots += n.elts
        elif isinstance(n, (ast.Assign, ast.AnnAssign)) and n.value is not None and n.lineno == n.end_lineno:
            targets = n.targets if isinstance(n, ast.Assign) else [n.target]
            if all(isinstance(t, ast.Attribute) for t in targets) and _only_strings(n.value):
                lines.add(n.lineno)
    return {(s.lineno, s.col_offset) for s in spots}, lines


def if_chains(tree: ast.AST) -> list[list[ast.If]]:
    """Each `if ... elif ... elif ...` chain of the module once, as its `ast.If` nodes in order (an `elif` is the
    lone `ast.If` of its predecessor's `orelse`); the chains come in `module_nodes` order."""
    chains: list[list[ast.If]] = []
    seen: set[int] = set()
    for node in module_nodes(tree):
        if not isinstance(node, ast.If) or id(node) in seen:
            continue
        chain: list[ast.If] = []
        cur: ast.AST | None = node
        while isinstance(cur, ast.If):
            seen.add(id(cur))
            chain.append(cur)
            cur = cur.orelse[0] if len(cur.orelse) == 1 and isinstance(cur.orelse[0], ast.If) else None
        chains.append(chain)
    return chains
