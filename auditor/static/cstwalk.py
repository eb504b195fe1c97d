"""A read-only walk of a libcst tree for a `cst.CSTVisitor`.

`CSTNode.visit` rebuilds every node it walks (`_visit_and_replace_children` constructs a new node from the
visited children), which a visitor that only reads does not need: about a fifth of the static pass's libcst
time. `walk` calls the same `visit_<Node>` / `leave_<Node>` methods, with the same original nodes, in the same
order: the children of a node type are its fields in the order its own `_visit_and_replace_children` visits them,
read once per type from that method's source (tests/test_speed_equivalence.py checks the order against
libcst's own walk over every rule example). Visitors that define per-attribute hooks
(`visit_<Node>_<field>`) are not supported: `walk` refuses them.
"""
from __future__ import annotations

import ast
import inspect
import textwrap
from typing import Callable

import libcst as cst

from auditor.astnodes import walk_list

_FIELDS: dict[type[cst.CSTNode], tuple[str, ...]] = {}


def _child_fields(cls: type[cst.CSTNode]) -> tuple[str, ...]:
    """The fields `cls._visit_and_replace_children` passes to libcst's visit_required / visit_optional /
    visit_sentinel / visit_sequence / visit_body_sequence helpers, in source order."""
    fields = _FIELDS.get(cls)
    if fields is None:
        tree = ast.parse(textwrap.dedent(inspect.getsource(cls._visit_and_replace_children)))
        named: list[tuple[int, int, str]] = []
        for n in walk_list(tree):
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id.startswith("visit_") \
                    and len(n.args) >= 2 and isinstance(n.args[1], ast.Constant):
                named.append((n.lineno, n.col_offset, str(n.args[1].value)))
        # `names=visit_required(...) if isinstance(names, ImportStar) else visit_sequence(...)`: one field, twice
        fields = tuple(dict.fromkeys(name for _, _, name in sorted(named)))
        _FIELDS[cls] = fields
    return fields


def children(node: cst.CSTNode) -> list[cst.CSTNode]:
    """`node.children` (the same nodes, in the same order) without rebuilding `node`."""
    out: list[cst.CSTNode] = []
    for name in _child_fields(type(node)):
        value = getattr(node, name)
        if isinstance(value, cst.CSTNode):
            out.append(value)
        elif isinstance(value, (tuple, list)):
            out.extend(value)
    return out


_Hook = Callable[[cst.CSTVisitor, cst.CSTNode], object] | None


def _hooks(visitor_cls: type, node_cls: type) -> tuple[_Hook, _Hook]:
    """The visit / leave hooks of `visitor_cls` for `node_cls` (read once per pair: `_PLANS` keeps them)."""
    name = node_cls.__name__
    visit = getattr(visitor_cls, f"visit_{name}", None)
    leave = getattr(visitor_cls, f"leave_{name}", None)
    # CSTVisitor's own visit_<Node> / leave_<Node> do nothing: not called
    return (None if visit is getattr(cst.CSTVisitor, f"visit_{name}", None) else visit,
            None if leave is getattr(cst.CSTVisitor, f"leave_{name}", None) else leave)


# per visitor class: node class -> (its visit hook, its leave hook, its child fields), read once per pair
_Plan = tuple[_Hook, _Hook, tuple[str, ...]]
_PLANS: dict[type, dict[type, _Plan]] = {}


def walk(node: cst.CSTNode, visitor: cst.CSTVisitor) -> None:
    """`node.visit(visitor)` for a read-only visitor: the same visit / leave calls, nothing rebuilt."""
    plans = _PLANS.get(type(visitor))
    if plans is None:
        plans = _PLANS[type(visitor)] = {}
    _walk(node, visitor, plans)


def _walk(node: cst.CSTNode, visitor: cst.CSTVisitor, plans: dict[type, _Plan]) -> None:
    node_cls = type(node)
    plan = plans.get(node_cls)
    if plan is None:
        plan = plans[node_cls] = (*_hooks(type(visitor), node_cls), _child_fields(node_cls))
    visit, leave, fields = plan
    if visit is None or visit(visitor, node) is not False:
        for name in fields:
            value = getattr(node, name)
            if isinstance(value, cst.CSTNode):
                _walk(value, visitor, plans)
            elif isinstance(value, (tuple, list)):
                for child in value:
                    _walk(child, visitor, plans)
    if leave is not None:
        leave(visitor, node)


def check_visitor(visitor_cls: type) -> None:
    """Raise when `visitor_cls` relies on what `walk` does not call: attribute hooks or its own on_visit."""
    for attr in dir(visitor_cls):
        if attr.startswith(("visit_", "leave_")) and attr.count("_") > 1 \
                and getattr(visitor_cls, attr) is not getattr(cst.CSTVisitor, attr, None):
            raise TypeError(f"{visitor_cls.__name__}.{attr}: attribute hooks are not called by cstwalk.walk")
    for attr in ("on_visit", "on_leave", "on_visit_attribute", "on_leave_attribute"):
        if getattr(visitor_cls, attr) is not getattr(cst.CSTVisitor, attr):
            raise TypeError(f"{visitor_cls.__name__}.{attr} is overridden: cstwalk.walk does not call it")
