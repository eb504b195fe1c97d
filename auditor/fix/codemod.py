"""The codemods behind `audit fix`: libcst edits placed exactly on the nodes of fixable findings.

The static engine says *where* (line/col range) and *what to write* (`Finding.data["replace"]`, computed from
the rule's `replace` field). This module finds the node at that range and rewrites only that node, so
comments, docstrings, log text and formatting elsewhere stay byte-identical. Each kind of finding has one
kind of edit:

- a method or attribute name (`.cuda()`, `.is_cuda`): the name token is renamed;
- a qualified API (`torch.cuda.synchronize`, an import of it, an alias of it): imports are rewritten where they
  bind the name, uses are respelled only where the rewritten bindings do not already name the replacement;
- a string value ("cuda:0", f"cuda:{i}", "nccl"): the literal prefix of the matched rule pattern is replaced
  in the leftmost piece of the string (so f-strings and concatenations keep their holes);
- an environment variable name (in a subscript, a keyword of `dict(...)`, or `NAME=...` in a command line);
- some calls need their arguments adapted as well (see adapters.py); when that is ambiguous, nothing changes.
"""
from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, TypeVar, cast

import libcst as cst
from libcst.metadata import MetadataWrapper, ParentNodeProvider, PositionProvider

from auditor.findings import Finding
from auditor.rules import Rule
from auditor.static.compiled import _pattern_regex
from auditor.static.context import HOLE, build_context
from auditor.static.visitor import dotted

from auditor.fix import adapters

Edit = Callable[[cst.CSTNode], cst.CSTNode]
N = TypeVar("N", bound=cst.CSTNode)
_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_QUAL = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$")
_PLACEHOLDER = re.compile(r"<int>|\*")


@dataclass
class Applied:
    """The outcome of one pass over one file."""
    fixed: list[Finding] = field(default_factory=list)
    skipped: list[tuple[Finding, str]] = field(default_factory=list)   # (finding, why it was left alone)


def import_module_spelling(qual: str) -> str:
    """The module path to write in an import statement. torch_npu registers `torch.npu` in sys.modules as an
    alias of `torch_npu.npu`, but not its submodules: `from torch.npu.amp import X` would load a second copy
    of the package, so imports name the real module."""
    if qual == "torch.npu" or qual.startswith("torch.npu."):
        return "torch_npu.npu" + qual[len("torch.npu"):]
    return qual


def _attr_chain(qual: str) -> cst.BaseExpression:
    return cst.parse_expression(qual)


def _name_or_attr(qual: str) -> cst.Name | cst.Attribute:
    node = cst.parse_expression(qual)
    assert isinstance(node, (cst.Name, cst.Attribute))
    return node


# -- strings ---------------------------------------------------------------------------------------------

def _literal_prefix(pattern: str) -> str:
    m = _PLACEHOLDER.search(pattern)
    return pattern if m is None else pattern[:m.start()]


def string_rewrite(rule: Rule, symbol: str, replace: str) -> tuple[str, str] | None:
    """(old literal prefix, new literal prefix) for a string finding: the rule pattern that matched the value
    and the `replace` pattern must agree after their literal prefixes ('cuda:<int>' -> 'npu:<int>')."""
    value = symbol.replace("{…}", HOLE)
    for pattern in rule.match.get("string", ()):
        if not _pattern_regex(pattern).match(value):
            continue
        old, new = _literal_prefix(pattern), _literal_prefix(replace)
        if pattern[len(old):] != replace[len(new):] or not old:
            return None
        return old, new
    return None


def _leftmost_leaf(node: cst.CSTNode) -> cst.CSTNode | None:
    """The first piece of literal text of a string expression (SimpleString or FormattedStringText)."""
    while True:
        if isinstance(node, cst.SimpleString):
            return node
        if isinstance(node, cst.FormattedString):
            first = node.parts[0] if node.parts else None
            return first if isinstance(first, cst.FormattedStringText) else None
        if isinstance(node, cst.ConcatenatedString):
            node = node.left
        elif isinstance(node, cst.BinaryOperation):
            node = node.left
        elif isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
            node = node.func.value        # "cuda:{}".format(i)
        else:
            return None


def _simple_body(node: cst.SimpleString) -> tuple[str, str, str]:
    raw = node.value
    i = 0
    while raw[i] not in "'\"":
        i += 1
    quote = raw[i:i + 3] if raw[i:i + 3] in ('"""', "'''") else raw[i]
    return raw[:i + len(quote)], raw[i + len(quote):len(raw) - len(quote)], raw[len(raw) - len(quote):]


def _set_leaf_text(leaf: cst.CSTNode, fn: Callable[[str], str | None]) -> cst.CSTNode | None:
    if isinstance(leaf, cst.SimpleString):
        if "b" in leaf.prefix.lower():
            return None
        head, body, tail = _simple_body(leaf)
        new = fn(body)
        return None if new is None else leaf.with_changes(value=head + new + tail)
    if isinstance(leaf, cst.FormattedStringText):
        new = fn(leaf.value)
        return None if new is None else leaf.with_changes(value=new)
    return None


def replace_leaf(node: cst.CSTNode, leaf: cst.CSTNode, new_leaf: cst.CSTNode) -> cst.CSTNode:
    return node.deep_replace(leaf, new_leaf) if node is not leaf else new_leaf


def _all_leaves(node: cst.CSTNode) -> list[cst.CSTNode]:
    out: list[cst.CSTNode] = []

    def walk(n: cst.CSTNode) -> None:
        if isinstance(n, (cst.SimpleString, cst.FormattedStringText)):
            out.append(n)
        elif isinstance(n, cst.FormattedStringExpression):
            return                        # code inside an f-string hole is not text
        else:
            for child in n.children:
                walk(child)
    walk(node)
    return out


# -- the planner -------------------------------------------------------------------------------------------

class _Planner:
    """Maps each fixable finding to an edit of one node of the parsed module."""

    def __init__(self, wrapper: MetadataWrapper, text: str, rules: dict[str, Rule]) -> None:
        self.module = wrapper.module
        self.rules = rules
        self.positions = wrapper.resolve(PositionProvider)
        # looked up with None too: the parent of a missing parent is None
        self.parents: Mapping[Any, cst.CSTNode] = wrapper.resolve(ParentNodeProvider)
        self.by_range: dict[tuple[int, int, int, int], list[cst.CSTNode]] = {}
        self.by_start: dict[tuple[int, int], list[cst.CSTNode]] = {}
        for node, pos in self.positions.items():
            key = (pos.start.line, pos.start.column + 1, pos.end.line, pos.end.column + 1)
            self.by_range.setdefault(key, []).append(node)
            self.by_start.setdefault(key[:2], []).append(node)
        try:
            self.ctx = build_context(ast.parse(text))
        except SyntaxError:
            self.ctx = build_context(ast.parse(""))
        self.edits: dict[cst.CSTNode, list[Edit]] = {}
        # from-import statement -> local name -> (module, name) it will import; split lines: SimpleStatementLine
        self.import_edits: dict[cst.ImportFrom, dict[str, tuple[str, str]]] = {}
        self.import_findings: dict[cst.ImportFrom, dict[str, Finding]] = {}
        self.split_lines: dict[cst.SimpleStatementLine, cst.ImportFrom] = {}
        self.needs_torch_npu = False
        self.needs_roots: set[str] = set()

    # -- lookup --

    def _at_range(self, f: Finding, *types: type[N]) -> N | None:
        for node in self.by_range.get((f.line, f.col, f.end_line, f.end_col), ()):
            if isinstance(node, types):
                return node
        return None

    def _at_start(self, f: Finding, *types: type[N]) -> list[N]:
        return [n for n in self.by_start.get((f.line, f.col), ()) if isinstance(n, types)]

    def _add(self, node: cst.CSTNode, edit: Edit) -> None:
        self.edits.setdefault(node, []).append(edit)

    # -- kinds of finding --

    def plan(self, findings: list[Finding]) -> Applied:
        out = Applied()
        bindings = self._plan_bindings(findings, out)
        for f in findings:
            if f in bindings:
                continue
            why = self._plan_one(f)
            if why is None:
                out.fixed.append(f)
            else:
                out.skipped.append((f, why))
        return out

    def _plan_one(self, f: Finding) -> str | None:
        rule = self.rules.get(f.code)
        replace = f.data.get("replace")
        if rule is None or not replace:
            return "no replacement in the rule"
        if "env" in rule.match and "." not in f.symbol and _IDENT.match(f.symbol) and f.symbol.upper() == f.symbol:
            return self._plan_env(f, rule, replace)
        if "string" in rule.match and string_rewrite(rule, f.symbol, replace) is not None:
            return self._plan_string(f, rule, replace)
        if f.symbol in rule.match.get("method", ()) or f.symbol in rule.match.get("attribute", ()):
            return self._plan_rename(f, replace)
        if _QUAL.match(f.symbol) and _QUAL.match(replace):
            return self._plan_reference(f, replace)
        if _QUAL.match(f.symbol):
            return self._plan_value(f, replace)
        return "unsupported finding kind"

    def _plan_value(self, f: Finding, replace: str) -> str | None:
        """A name that stands for a value, replaced by an expression: `Backend.NCCL` -> `"hccl"`."""
        try:
            expr = cst.parse_expression(replace)
        except cst.ParserSyntaxError:
            return f"replacement {replace!r} is not an expression"
        ref = self._at_range(f, cst.Attribute, cst.Name)
        if ref is None or self._binding_of(f) is not None:
            return "not a reference to a value"
        self._add(ref, lambda n: expr)
        self.needs_torch_npu = True
        return None

    def _plan_rename(self, f: Finding, replace: str) -> str | None:
        if not _IDENT.match(replace):
            return f"replacement {replace!r} is not a name"
        names = [n for n in self._at_start(f, cst.Name) if n.value == f.symbol]
        if not names:
            return "name not found at the finding"
        self._add(names[0], lambda n: n.with_changes(value=replace))
        self.needs_torch_npu = True
        return None

    def _plan_string(self, f: Finding, rule: Rule, replace: str) -> str | None:
        old, new = string_rewrite(rule, f.symbol, replace)  # type: ignore[misc]
        node = self._at_range(f, cst.SimpleString, cst.FormattedString, cst.ConcatenatedString,
                              cst.BinaryOperation, cst.Call)
        if node is None:
            return "string not found at the finding"
        leaf = _leftmost_leaf(node)
        if leaf is None:
            return "the string does not start with literal text"

        def swap(body: str) -> str | None:
            return new + body[len(old):] if body.startswith(old) else None
        new_leaf = _set_leaf_text(leaf, swap)
        if new_leaf is None:
            return "the literal text is split or escaped"
        self._add(node, lambda n: _replace_first_leaf(n, swap))
        self.needs_torch_npu = True
        return None

    def _plan_env(self, f: Finding, rule: Rule, replace: str) -> str | None:
        if replace.endswith("*"):
            prefixes = [p[:-1] for p in rule.match.get("env", ()) if p.endswith("*") and f.symbol.startswith(p[:-1])]
            if not prefixes:
                return "no env prefix matched"
            prefix = max(prefixes, key=len)
            replace = replace[:-1] + f.symbol[len(prefix):]
        if not _IDENT.match(replace):
            return f"replacement {replace!r} is not a variable name"
        unit = adapters.env_value_converter(f.symbol, replace)
        if unit is not None:
            return self._plan_env_with_value(f, replace, unit)
        keyword = [n for n in self._at_start(f, cst.Name) if n.value == f.symbol]
        if keyword:
            self._add(keyword[0], lambda n: n.with_changes(value=replace))
            return None
        node = self._at_range(f, cst.SimpleString, cst.FormattedString, cst.ConcatenatedString,
                              cst.BinaryOperation, cst.Call)
        if node is None:
            return "variable name not found at the finding"
        word = re.compile(r"(?<![A-Za-z0-9_])" + re.escape(f.symbol) + r"(?![A-Za-z0-9_])")

        def rename(body: str) -> str | None:
            return word.sub(replace, body) if word.search(body) else None
        if not any(_set_leaf_text(leaf, rename) is not None for leaf in _all_leaves(node)):
            return "the name is split across string pieces"
        self._add(node, lambda n: cast(cst.CSTNode, n.visit(_LeafMap(rename))))   # leaves change, never go
        return None

    def _plan_env_with_value(self, f: Finding, replace: str, convert) -> str | None:
        """NCCL_BUFFSIZE=<bytes> -> HCCL_BUFFSIZE=<MB>: only where the value is a literal in the same statement."""
        node = self._at_range(f, cst.SimpleString)
        if node is None:
            return "the value is not next to the name"
        parent = self.parents.get(node)
        value_node: cst.CSTNode | None = None
        if isinstance(parent, cst.Index):                          # os.environ["NCCL_BUFFSIZE"] = "..."
            sub = self.parents.get(self.parents.get(parent))       # SubscriptElement -> Subscript
            target = self.parents.get(sub)
            assign = self.parents.get(target) if isinstance(target, cst.AssignTarget) else None
            if isinstance(assign, cst.Assign) and len(assign.targets) == 1:
                value_node = assign.value
        elif isinstance(parent, cst.Arg):                          # os.environ.setdefault("NCCL_BUFFSIZE", "...")
            call = self.parents.get(parent)
            if isinstance(call, cst.Call) and len(call.args) == 2 and call.args[0] is parent:
                value_node = call.args[1].value
        elif isinstance(parent, cst.DictElement) and parent.key is node:
            value_node = parent.value
        if not isinstance(value_node, cst.SimpleString) or not isinstance(value_node.evaluated_value, str):
            return "the value is not a literal string"
        new_value = convert(value_node.evaluated_value)
        if new_value is None:
            return f"cannot convert the value {value_node.evaluated_value!r}"
        head, _, tail = _simple_body(value_node)
        new_value_node = value_node.with_changes(value=head + new_value + tail)
        self._add(value_node, lambda n: new_value_node)
        head, _, tail = _simple_body(node)
        self._add(node, lambda n: n.with_changes(value=head + replace + tail))
        return None

    # -- qualified names --

    def _binding_of(self, f: Finding) -> tuple[str, cst.CSTNode] | None:
        """(local name, node) when the finding is where a name is bound: an import alias, or a module-level
        `amp = torch.cuda.amp`."""
        alias = self._at_range(f, cst.ImportAlias)
        if alias is not None:
            parent = self.parents.get(alias)
            if isinstance(parent, cst.ImportFrom):
                return _alias_local(alias), alias
            if alias.asname is not None:
                return alias.asname.name.value, alias  # type: ignore[union-attr]
            return dotted(alias.name).split(".")[0], alias  # type: ignore[union-attr]
        ref = self._at_range(f, cst.Attribute, cst.Name)
        if ref is not None:
            assign = self.parents.get(ref)
            if isinstance(assign, cst.Assign) and assign.value is ref and len(assign.targets) == 1 \
                    and isinstance(assign.targets[0].target, cst.Name):
                line = self.parents.get(assign)
                if self.parents.get(line) is self.module:
                    return assign.targets[0].target.value, ref
        return None

    def _plan_bindings(self, findings: list[Finding], out: Applied) -> set[Finding]:
        """Plan the rewrites of bindings first, so that uses know what their names will mean afterwards."""
        self.new_aliases = dict(self.ctx.aliases)
        handled: set[Finding] = set()
        for f in findings:
            replace = f.data.get("replace")
            rule = self.rules.get(f.code)
            if rule is None or not replace or not _QUAL.match(f.symbol) or not _QUAL.match(replace):
                continue
            bound = self._binding_of(f)
            if bound is None:
                continue
            handled.add(f)
            local, node = bound
            if adapters.call_adapter(f.symbol, replace) is not None:
                out.skipped.append((f, "the call sites are rewritten; the import stays for review"))
                continue
            why = self._plan_binding(local, node, f.symbol, replace)
            if why is None:
                parent = self.parents.get(node)
                if isinstance(parent, cst.ImportFrom):
                    self.import_findings.setdefault(parent, {})[local] = f
                    continue          # decided below, once every name of the statement is known
                out.fixed.append(f)
                self.needs_torch_npu = True
            else:
                out.skipped.append((f, why))
        for stmt, plan in list(self.import_edits.items()):
            why = self._plan_import_from(stmt, plan)
            for local, f in self.import_findings[stmt].items():
                if why is None:
                    out.fixed.append(f)
                    self.needs_torch_npu = True
                else:
                    out.skipped.append((f, why))
                    self.new_aliases[local] = self.ctx.aliases.get(local, self.new_aliases[local])
            if why is not None:
                del self.import_edits[stmt]
        return handled

    def _plan_import_from(self, stmt: cst.ImportFrom, plan: dict[str, tuple[str, str]]) -> str | None:
        """Rewrite a from-import in place when all its names move to one module; split the line otherwise."""
        assert not isinstance(stmt.names, cst.ImportStar)
        modules = {module for module, _ in plan.values()}
        locals_ = [_alias_local(a) for a in stmt.names]
        if len(modules) == 1 and set(locals_) <= set(plan):
            (module,) = modules

            def rewrite(n: cst.CSTNode) -> cst.CSTNode:
                assert isinstance(n, cst.ImportFrom) and not isinstance(n.names, cst.ImportStar)
                return n.with_changes(module=_name_or_attr(module), names=_renamed(n.names, plan, stmt.lpar is not None))
            self._add(stmt, rewrite)
            return None
        line = self.parents.get(stmt)
        if not isinstance(line, cst.SimpleStatementLine) or len(line.body) != 1:
            return "the import shares its line with other statements"
        self.split_lines[line] = stmt
        return None

    def _plan_binding(self, local: str, node: cst.CSTNode, symbol: str, replace: str) -> str | None:
        if isinstance(node, cst.ImportAlias):
            parent = self.parents.get(node)
            if isinstance(parent, cst.ImportFrom):
                module, _, name = replace.rpartition(".")
                if not module:
                    return "replacement is not inside a module"
                self.import_edits.setdefault(parent, {})[local] = (import_module_spelling(module), name)
                self.new_aliases[local] = replace
                return None
            if node.asname is not None:                     # import torch.cuda as tc
                spelled = import_module_spelling(replace)
                self._add(node, lambda n: n.with_changes(name=_name_or_attr(spelled)))
                self.new_aliases[local] = replace
                return None
            head = replace.split(".")[0]                    # import torch.cuda: binds `torch`, uses are rewritten
            if head != local:
                return "a plain import of another top-level package"
            self._add(node, lambda n: n.with_changes(name=cst.Name(head)))
            return None
        # amp = torch.cuda.amp
        head = (dotted(node) or "").split(".")[0]
        self._add(node, lambda n: self._spell(replace, exclude=local, prefer=head))
        self.new_aliases[local] = replace
        return None

    def _spelling(self, qual: str, exclude: str | None = None, prefer: str | None = None) -> str:
        """How to write `qual` with the names this file binds (after the planned rewrites): with the head the
        code already used when that works (`torch.cuda.x` -> `torch.npu.x`), else the shortest spelling."""
        best: tuple[int, int, str] | None = None
        for local, target in self.new_aliases.items():
            if local == exclude:
                continue
            if qual == target or qual.startswith(target + "."):
                spelled = local + qual[len(target):]
                key = (local != prefer, len(spelled), spelled)
                if best is None or key < best:
                    best = key
        if best is not None:
            return best[2]
        self.needs_roots.add(qual.split(".")[0])
        return qual

    def _spell(self, qual: str, exclude: str | None = None, prefer: str | None = None) -> cst.BaseExpression:
        return _attr_chain(self._spelling(qual, exclude, prefer))

    def _resolve_new(self, d: str) -> str | None:
        head, _, rest = d.partition(".")
        target = self.new_aliases.get(head)
        if target is None:
            return None
        return f"{target}.{rest}" if rest else target

    def _plan_reference(self, f: Finding, replace: str) -> str | None:
        call = self._at_range(f, cst.Call)
        ref = call.func if call is not None else self._at_range(f, cst.Attribute, cst.Name)
        if ref is None:
            return "expression not found at the finding"
        d = dotted(ref)
        if d is None:
            return "not a dotted name"
        adapter = adapters.call_adapter(f.symbol, replace)
        if adapter is not None:
            if call is None:
                return "argument mapping needs a call"
            prefer = d.split(".")[0]
            adapted = adapter(call, lambda qual: self._spelling(qual, prefer="torch"))
            if isinstance(adapted, str):
                return adapted
            spelled = self._spelling(adapted.func, prefer=prefer)

            def edit(n: cst.CSTNode, spelled=spelled, rw=adapted, originals=[a.value for a in call.args]) -> cst.CSTNode:
                # carried arguments take their updated form: `FusedAdam(m.cuda().parameters())` keeps the .npu()
                assert isinstance(n, cst.Call)
                updated = {id(o): u.value for o, u in zip(originals, n.args)}
                args = [a.with_changes(value=updated.get(id(a.value), a.value)) for a in rw.args]
                new = n.with_changes(func=_attr_chain(spelled), args=args)
                if rw.index is None:
                    return new
                return cst.Subscript(value=new, slice=[cst.SubscriptElement(cst.Index(cst.Integer(str(rw.index))))])
            self._add(call, edit)
            self.needs_torch_npu = True
            return None
        self.needs_torch_npu = True
        if isinstance(self.parents.get(ref), cst.ImportFrom):      # from torch.cuda import *
            module = import_module_spelling(replace)
            self._add(ref, lambda n: _name_or_attr(module))
            return None
        if self._resolve_new(d) == replace:
            return None                       # the rewritten import already makes this name the replacement
        spelled = self._spelling(replace, prefer=d.split(".")[0])
        self._add(ref, lambda n: _attr_chain(spelled))
        return None


def _replace_first_leaf(node: cst.CSTNode, fn: Callable[[str], str | None]) -> cst.CSTNode:
    leaf = _leftmost_leaf(node)
    new_leaf = _set_leaf_text(leaf, fn) if leaf is not None else None
    return node if new_leaf is None else replace_leaf(node, leaf, new_leaf)  # type: ignore[arg-type]


class _LeafMap(cst.CSTTransformer):
    """Applies a text function to every literal piece of a string expression, not to code in f-string holes."""

    def __init__(self, fn: Callable[[str], str | None]) -> None:
        super().__init__()
        self.fn = fn

    def visit_FormattedStringExpression(self, node) -> bool:
        return False

    def leave_SimpleString(self, original_node, updated_node):
        return _set_leaf_text(updated_node, self.fn) or updated_node

    def leave_FormattedStringText(self, original_node, updated_node):
        return _set_leaf_text(updated_node, self.fn) or updated_node


class _Apply(cst.CSTTransformer):
    def __init__(self, planner: _Planner) -> None:
        super().__init__()
        self.p = planner

    def on_leave(self, original_node, updated_node):
        edits = self.p.edits.get(original_node)
        if edits:
            for edit in edits:
                updated_node = edit(updated_node)
        stmt = self.p.split_lines.get(original_node)
        if stmt is not None:
            return self._split(stmt, updated_node)
        return updated_node

    def _split(self, original: cst.ImportFrom, line: cst.SimpleStatementLine):
        """`from torch.cuda import Stream, ComplexFloatStorage` -> one line per module: the name without a twin
        keeps its import, the others move (each alias keeps its own comma and the comments after it)."""
        stmt = line.body[0]
        assert isinstance(stmt, cst.ImportFrom) and not isinstance(stmt.names, cst.ImportStar)
        plan = self.p.import_edits[original]
        paren = stmt.lpar is not None
        groups: dict[str | None, list[cst.ImportAlias]] = {}
        for alias in stmt.names:
            local = _alias_local(alias)
            module = plan[local][0] if local in plan else None
            groups.setdefault(module, []).append(alias)
        lines: list[cst.CSTNode] = []
        for module, aliases in groups.items():
            names = _renamed(aliases, plan, paren)
            new_stmt = stmt.with_changes(names=names) if module is None else \
                stmt.with_changes(module=_name_or_attr(module), names=names)
            lines.append(line.with_changes(body=[new_stmt], leading_lines=line.leading_lines if not lines else ()))
        return cst.FlattenSentinel(lines)


def _alias_local(alias: cst.ImportAlias) -> str:
    return alias.asname.name.value if alias.asname else (dotted(alias.name) or "")  # type: ignore[union-attr]


def _renamed(aliases, plan: dict[str, tuple[str, str]], paren: bool) -> list[cst.ImportAlias]:
    """The aliases with their planned names (`GradScaler` stays bound to the same local name) and commas that
    are valid for their new position: a comma between names, none after the last unless parenthesised."""
    out = []
    for alias in aliases:
        local = _alias_local(alias)
        if local in plan:
            name = plan[local][1]
            asname = alias.asname if alias.asname else (None if name == local else cst.AsName(name=cst.Name(local)))
            alias = alias.with_changes(name=cst.Name(name), asname=asname)
        out.append(alias)
    for i, alias in enumerate(out):
        last = i == len(out) - 1
        if not last and not isinstance(alias.comma, cst.Comma):
            out[i] = alias.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
        elif last and not paren:
            out[i] = alias.with_changes(comma=cst.MaybeSentinel.DEFAULT)
    return out


# -- import torch_npu ---------------------------------------------------------------------------------------

def _imports_of(stmt: cst.CSTNode) -> list[str]:
    if isinstance(stmt, cst.SimpleStatementLine):
        out = []
        for small in stmt.body:
            if isinstance(small, cst.Import):
                out += [dotted(a.name) or "" for a in small.names]
            elif isinstance(small, cst.ImportFrom) and small.module is not None and not small.relative:
                out.append(dotted(small.module) or "")
        return out
    return []


def _binds_top_level(module: cst.Module, name: str) -> bool:
    for stmt in module.body:
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                if isinstance(small, cst.Import):
                    for a in small.names:
                        local = a.asname.name.value if a.asname else (dotted(a.name) or "").split(".")[0]  # type: ignore[union-attr]
                        if local == name and (dotted(a.name) or "").split(".")[0] == name:
                            return True
    return False


def add_imports(module: cst.Module, roots: list[str]) -> cst.Module:
    """`import torch_npu` (and any other root a respelled name needs) once, after the first top-level torch
    import; after the docstring and __future__ imports when the file imports torch nowhere at the top."""
    missing = [r for r in roots if not _binds_top_level(module, r)]
    if not missing:
        return module
    body = list(module.body)
    at = None
    for i, stmt in enumerate(body):
        if any(m == "torch" or m.startswith("torch.") for m in _imports_of(stmt)):
            at = i + 1
            break
    if at is None:
        at = 0
        for i, stmt in enumerate(body):
            is_doc = i == 0 and isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 \
                and isinstance(stmt.body[0], cst.Expr) and isinstance(stmt.body[0].value, (cst.SimpleString, cst.ConcatenatedString))
            if is_doc or "__future__" in _imports_of(stmt):
                at = i + 1
    new = [cst.SimpleStatementLine(body=[cst.Import(names=[cst.ImportAlias(name=_name_or_attr(r))])]) for r in missing]
    if at == 0 and body:
        # keep the file's leading comments (shebang, licence) above the new import
        first = body[0]
        new[0] = new[0].with_changes(leading_lines=first.leading_lines)
        body[0] = first.with_changes(leading_lines=())
    return module.with_changes(body=body[:at] + new + body[at:])


def apply_fixes(text: str, findings: list[Finding], rules: dict[str, Rule]) -> tuple[str, Applied]:
    """Rewrite `text` at the given (already filtered, fixable) findings. Returns the new text and what happened."""
    module = cst.parse_module(text)
    wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
    planner = _Planner(wrapper, text, rules)
    applied = planner.plan(findings)
    if not planner.edits and not planner.split_lines:
        return text, applied
    new_module = wrapper.module.visit(_Apply(planner))
    roots = []
    if planner.needs_torch_npu:
        roots.append("torch_npu")
    roots += sorted(r for r in planner.needs_roots if r != "torch_npu")
    if "torch" in roots:
        roots.remove("torch")
        roots.insert(0, "torch")
    new_module = add_imports(new_module, roots)
    return new_module.code, applied
