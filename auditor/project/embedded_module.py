"""Python modules that Python code writes (tp47b, issue 15): a build script that writes a module from a string held
in the code (mmdeploy's packaging setup.py: `with open('mmdeploy_runtime/_win_dll_path.py', 'a') as f: f.write(code)`,
`code = 'import os\\n' 'if "CUDA_PATH" in os.environ:\\n' ...`), run when the package is imported. The string's value
is read by the Python pass as the module it becomes, and its first finding is placed on the Python file's line that
holds it, as auditor/project/embedded.py does for Dockerfile templates.

One finding per written string: decision 18 reads a multi-line literal as one decision for the porter, labelled on
its first CUDA line. Only a value written with `.write(...)` to a handle opened on a `.py` path for writing or
appending; a string that is not Python, a docstring and a message are not read."""
from __future__ import annotations

import ast
import io
import re
import tokenize
from dataclasses import replace
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from auditor.findings import FileResult
    from auditor.static.engine import StaticEngine

_QUICK = re.compile(rb"\.py['\"]")
_WRITE_MODES = re.compile(r"[wax]")


def add_written_modules(engine: "StaticEngine", data: bytes, rel: str, result: "FileResult",
                        tree: ast.Module | None = None) -> None:
    """Append the first finding of each Python module the source writes from a string to `result`. `tree`: the
    engine's tree of the bytes' UTF-8 decoding, when it has one (not parsed again)."""
    if not _QUICK.search(data) or b".write(" not in data:
        return
    try:
        text = data.decode("utf-8")
        tree = tree if tree is not None else ast.parse(text)
    except (UnicodeDecodeError, SyntaxError, ValueError, RecursionError):
        return
    strings = _string_bindings(tree)
    seen = {(f.line, f.code) for f in result.findings}
    lines = text.splitlines(keepends=True)
    for target, literal in _written_literals(tree, strings):
        pieces = _pieces(lines, literal)
        value = "".join(p[0] for p in pieces)
        try:
            ast.parse(value)
        except (SyntaxError, ValueError, RecursionError):
            continue                        # not Python: some other file's text
        folder = rel.rsplit("/", 1)[0] + "/" if "/" in rel else ""
        inner = engine.analyze_bytes(value.encode("utf-8"), folder + target.lstrip("./"))
        first = min(inner.findings, key=lambda f: (f.line, f.col), default=None)
        if first is None:
            continue
        line, col = _source_position(pieces, value, first.line)
        if (line, first.code) in seen:
            continue
        seen.add((line, first.code))
        result.findings.append(replace(first, path=rel, line=line, col=col, end_line=line, end_col=col + 1,
                                       message=f"{first.message} [in the module {target} this file writes]",
                                       fix="none", data={}))
    result.findings.sort(key=lambda f: f.sort_key())


def _string_bindings(tree: ast.Module) -> dict[str, ast.Constant]:
    """`code = '...' '...'`: names bound once to a string literal."""
    bound: dict[str, list[ast.AST]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            bound.setdefault(node.targets[0].id, []).append(node.value)
    return {name: values[0] for name, values in bound.items()
            if len(values) == 1 and isinstance(values[0], ast.Constant) and isinstance(values[0].value, str)}


def _written_literals(tree: ast.Module, strings: dict[str, ast.Constant]):
    """(path, literal) for each `with open('x.py', 'w') as f: ... f.write(LITERAL or NAME)`."""
    for node in ast.walk(tree):
        if not isinstance(node, ast.With):
            continue
        for item in node.items:
            call = item.context_expr
            handle = item.optional_vars
            if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id == "open"
                    and call.args and isinstance(handle, ast.Name)):
                continue
            path = call.args[0]
            mode = call.args[1] if len(call.args) > 1 else next((k.value for k in call.keywords if k.arg == "mode"),
                                                                 None)
            if not (isinstance(path, ast.Constant) and isinstance(path.value, str) and path.value.endswith(".py")
                    and isinstance(mode, ast.Constant) and isinstance(mode.value, str)
                    and _WRITE_MODES.search(mode.value)):
                continue
            for sub in ast.walk(node):
                if isinstance(sub, ast.Call) and isinstance(sub.func, ast.Attribute) and sub.func.attr == "write" \
                        and isinstance(sub.func.value, ast.Name) and sub.func.value.id == handle.id and sub.args:
                    arg = sub.args[0]
                    literal = strings.get(arg.id) if isinstance(arg, ast.Name) else arg
                    if isinstance(literal, ast.Constant) and isinstance(literal.value, str):
                        yield path.value, literal


def _pieces(lines: list[str], literal: ast.Constant) -> list[tuple[str, int, int, bool]]:
    """(value, line, column, triple-quoted) of each string token of a literal (implicitly concatenated pieces)."""
    source = "".join(lines[literal.lineno - 1:literal.end_lineno])
    first_col = len(lines[literal.lineno - 1].encode("utf-8")[:literal.col_offset].decode("utf-8", "replace"))
    pieces = []
    try:
        for tok in tokenize.generate_tokens(io.StringIO(source[first_col:]).readline):
            if tok.type == tokenize.STRING:
                value = ast.literal_eval(tok.string)
                row = literal.lineno + tok.start[0] - 1
                col = tok.start[1] + (first_col if tok.start[0] == 1 else 0) + 1
                triple = tok.string.lstrip("rRuUbB")[:3] in ('"""', "'''")
                pieces.append((value if isinstance(value, str) else "", row, col, triple))
    except (tokenize.TokenError, SyntaxError, ValueError):
        pass
    if "".join(p[0] for p in pieces) != literal.value:
        return [(str(literal.value), literal.lineno, 1, True)]
    return pieces


def _source_position(pieces: list[tuple[str, int, int, bool]], value: str, line: int) -> tuple[int, int]:
    """The Python file's (line, column) of the written module's `line`: the piece its first character is in (a
    triple-quoted piece spans source lines as its value does; a quoted one's `\\n` escapes do not)."""
    offset = 0
    for _ in range(line - 1):
        offset = value.find("\n", offset) + 1
    start = 0
    for piece, row, col, triple in pieces:
        if offset < start + len(piece):
            newlines = piece.count("\n", 0, offset - start) if triple else 0
            return row + newlines, col if newlines == 0 else 1
        start += len(piece)
    return pieces[-1][1], pieces[-1][2]
