"""Python 3.12+ syntax on an older interpreter.

The static pass locates statements with the standard library's `ast` (fast), then matches them with
libcst, whose native parser reads 3.12 syntax whatever Python runs it. On 3.11 `ast` rejects
`type X = ...`, `def f[T]()`, `class C[T]:` and PEP 701 f-strings (`f"{d["cuda"]}"`). Such a file is
not a syntax error: libcst parses it, and this module lowers those constructs to 3.11 syntax for the
`ast` pre-pass only, keeping every statement on its lines. Matching still runs on the original text.
"""
from __future__ import annotations

import ast

import libcst as cst


class _Lower(cst.CSTTransformer):
    def __init__(self) -> None:
        super().__init__()
        self.changed = False
        self._empty = cst.Module([])

    def leave_TypeAlias(self, original: cst.TypeAlias, updated: cst.TypeAlias) -> cst.Assign:
        self.changed = True                       # `type X[T] = v`  ->  `X = v`
        return cst.Assign(targets=[cst.AssignTarget(updated.name)], value=updated.value)

    def leave_FunctionDef(self, original: cst.FunctionDef, updated: cst.FunctionDef) -> cst.FunctionDef:
        if updated.type_parameters is None:
            return updated
        self.changed = True                       # `def f[T](x: T)`  ->  `def f(x: T)`
        return updated.with_changes(type_parameters=None, whitespace_after_type_parameters=cst.SimpleWhitespace(""))

    def leave_ClassDef(self, original: cst.ClassDef, updated: cst.ClassDef) -> cst.ClassDef:
        if updated.type_parameters is None:
            return updated
        self.changed = True
        return updated.with_changes(type_parameters=None, whitespace_after_type_parameters=cst.SimpleWhitespace(""))

    def leave_FormattedString(self, original: cst.FormattedString, updated: cst.FormattedString):
        code = self._empty.code_for_node(original)
        try:
            ast.parse(code.replace("\n", " ") if "\n" not in code else code, mode="eval")
            return updated                        # an f-string 3.11 reads as it is
        except SyntaxError:
            pass
        self.changed = True                       # PEP 701: a plain string spanning the same lines
        newlines = code.count("\n")
        return cst.SimpleString('"""' + "\n" * newlines + '"""' if newlines else '""')


def lower_for_ast(text: str) -> str | None:
    """Source that the running Python's `ast` accepts, with every statement on the same lines as in
    `text`; None when libcst cannot parse `text` either or nothing newer than 3.11 is in it."""
    try:
        module = cst.parse_module(text)
    except (cst.ParserSyntaxError, RecursionError, ValueError):
        return None
    lower = _Lower()
    lowered = module.visit(lower)
    if not lower.changed:
        return None
    code = lowered.code
    if code.count("\n") != text.count("\n"):
        return None                               # lines moved: the pre-pass would place findings wrongly
    return code
