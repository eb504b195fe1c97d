"""Container commands that Python code builds (t27a, issue 14): launcher scripts that assemble a `docker run` line in a
string and run it (cliport's and pytorch-dense-correspondence's `docker_run.py`: `cmd += "--gpus all "`, `cmd += " -v
/usr/bin/nvidia-xconfig:/usr/bin/nvidia-xconfig "`, `" --env NVIDIA_DRIVER_CAPABILITIES=all"`; `command = f"docker run
--gpus all ..."`, `subprocess.run(["docker", "run", "--gpus", "all", ...])`). The command is read by the shell reader
(auditor/project/shell.py: `docker run --gpus`, `--runtime=nvidia`, nvidia-docker, the container's environment, the
NVIDIA driver's files) and its findings are placed on the Python lines of the literals they come from, as
embedded_pip.py does for pip commands.

Only strings that build a command: the pieces one variable is assigned and extended with (`cmd = ...` then `cmd +=
...`, in source order, branches included) or the first argument of os.system / subprocess, whose text starts a
container with `docker` / `podman` `run` / `create` or with nvidia-docker; not messages, assertions or help texts."""
from __future__ import annotations

import ast
import re
from dataclasses import replace
from typing import TYPE_CHECKING

from auditor.project.embedded_pip import runner_call, shell_parts

if TYPE_CHECKING:
    from auditor.findings import FileResult
    from auditor.static.engine import StaticEngine

_QUICK = re.compile(rb"docker|podman")
_STARTS_CONTAINER = re.compile(r"(?<![\w-])(?:(?:docker|podman)\s+(?:container\s+)?(?:run|create)|nvidia-docker)(?![\w-])")
_PRINTF_SPEC = re.compile(r"%(?:\([^)]*\))?[-#0 +]*\d*(?:\.\d+)?[diouxXeEfFgGcrsa]")
_FORMAT_FIELD = re.compile(r"\{[^{}]*\}")
_NOTE = " [container command built by the code]"


def add_embedded_docker_commands(engine: "StaticEngine", data: bytes, rel: str, result: "FileResult",
                                 tree: ast.Module | None = None) -> None:
    """Append the findings of every container command the Python source builds to `result`. `tree`: the engine's tree
    of the bytes' UTF-8 decoding, when it has one (not parsed again)."""
    if not _QUICK.search(data):
        return
    from auditor.project.shell import analyze_shell

    try:
        source = data.decode("utf-8")
        if tree is None:
            tree = ast.parse(source)
    except (UnicodeDecodeError, SyntaxError, ValueError, RecursionError):
        return
    lines = source.splitlines()
    added = False
    for parts in _commands(tree):
        text, starts = _script(parts)
        if not _STARTS_CONTAINER.search(" ".join(t for t, _ in parts)):
            continue
        for f in analyze_shell(engine, text.encode("utf-8"), rel).findings:
            i = max(k for k, s in enumerate(starts) if s <= f.line)
            piece, node = parts[i]
            piece_line = piece.split("\n")[min(f.line - starts[i], piece.count("\n"))]
            word = piece_line[max(f.col - 1, 0):].split(maxsplit=1)
            line, col = _place(lines, node, word[0] if word else "")
            if any(g.line == line and g.code == f.code for g in result.findings):
                continue            # the Python pass reports it there already
            # the Python pass's finding of the same name on another line of a multi-line literal: placed here instead
            result.findings = [g for g in result.findings if not (
                g.code == f.code and g.symbol == f.symbol and node.lineno <= g.line <= (node.end_lineno or node.lineno))]
            result.findings.append(replace(f, path=rel, line=line, col=col, end_line=line,
                                           message=f"{f.message}{_NOTE}"))
            added = True
    if added:
        result.findings.sort(key=lambda f: f.sort_key())


def _commands(tree: ast.Module) -> list[list[tuple[str, ast.expr]]]:
    """The shell text pieces of each command the code builds: a variable's assignments and `+=` extensions, in source
    order within one scope (a plain assignment starts a new command), and each runner call's first argument."""
    out: list[list[tuple[str, ast.expr]]] = []
    scopes: list[ast.AST] = [tree]
    while scopes:
        scope = scopes.pop()
        building: dict[str, list[tuple[str, ast.expr]]] = {}
        for node in _scope_nodes(scope):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                scopes.append(node)
            elif isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                pieces = _pieces(node.value)
                if pieces is not None:
                    building[node.targets[0].id] = pieces
                    out.append(pieces)
            elif isinstance(node, ast.AugAssign) and isinstance(node.op, ast.Add) and isinstance(node.target, ast.Name):
                pieces = _pieces(node.value)
                if pieces is not None and node.target.id in building:
                    building[node.target.id].extend(pieces)
            elif isinstance(node, ast.Call) and runner_call(node):
                pieces = shell_parts(node.args[0].elts) if isinstance(node.args[0], (ast.List, ast.Tuple)) \
                    else _pieces(node.args[0])
                if pieces:
                    out.append(pieces)
    return out


def _scope_nodes(scope: ast.AST):
    """The nodes of one scope in source order: nested functions are yielded, not entered."""
    for child in ast.iter_child_nodes(scope):
        yield child
        if not isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            yield from _scope_nodes(child)
        elif isinstance(child, ast.ClassDef):
            yield from (n for n in ast.iter_child_nodes(child) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)))


def _pieces(value: ast.expr) -> list[tuple[str, ast.expr]] | None:
    """The shell text of a string expression, piece by piece: literals as written, `%` / `.format` fields and other
    expressions as `${X}`; None when it holds no string literal."""
    if isinstance(value, ast.BinOp) and isinstance(value.op, ast.Add):
        left, right = _pieces(value.left), _pieces(value.right)
        if left is None and right is None:
            return None
        return (left or [("${X}", value.left)]) + (right or [("${X}", value.right)])
    if isinstance(value, ast.BinOp) and isinstance(value.op, ast.Mod) and isinstance(value.left, ast.Constant) \
            and isinstance(value.left.value, str):
        return [(_PRINTF_SPEC.sub("${X}", value.left.value), value.left)]
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr == "format" \
            and isinstance(value.func.value, ast.Constant) and isinstance(value.func.value.value, str):
        return [(_FORMAT_FIELD.sub("${X}", value.func.value.value), value.func.value)]
    if isinstance(value, ast.IfExp):
        return _pieces(value.body)
    if isinstance(value, ast.JoinedStr) or isinstance(value, ast.Constant) and isinstance(value.value, str):
        return shell_parts([value])
    return None


def _script(parts: list[tuple[str, ast.expr]]) -> tuple[str, list[int]]:
    """The pieces as one shell command, each piece on a line of its own (joined by backslash-newlines), and the
    1-based line each piece starts on."""
    text, starts, line = "", [], 1
    for piece, _ in parts:
        starts.append(line)
        text += piece + " \\\n"
        line += piece.count("\n") + 1
    return text.rstrip("\\\n") + "\n", starts


def _place(lines: list[str], node: ast.expr, word: str) -> tuple[int, int]:
    """(line, 1-based column) of `word` in the source of `node` (a literal may span lines: `" --env A"\\` / `" --env
    B"`), or the node's start when the source does not spell it."""
    first, last = node.lineno, node.end_lineno or node.lineno
    for number in range(first, min(last, len(lines)) + 1):
        start = node.col_offset if number == first else 0
        at = lines[number - 1].find(word, start) if word else -1
        if at >= 0:
            return number, at + 1
    return first, node.col_offset + 1
