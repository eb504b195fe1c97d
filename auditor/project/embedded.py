"""Dockerfiles written as Python string literals (t14c, issue 14): deployment helpers that write a Dockerfile from a
template held in the code (DeepSpeed-MII's `mii/aml_related/templates.py`: `dockerfile = \"\"\"FROM nvidia/cuda:...`,
the same shape in serving and cloud-launch tools). The literal's source text is read by the Dockerfile reader
(auditor/project/dockerfile.py) and its findings are placed on the Python file's lines.

Only a string literal that is a value (assigned, passed, returned), not a docstring, whose text starts with a
`FROM <image>` line and holds at least one more Dockerfile instruction line. The *source* text between the quotes is
read, not the string's value: a backslash-newline in a plain triple-quoted literal joins lines in the value but is
a Dockerfile continuation in the file it writes, and the source keeps the Python file's line numbers."""
from __future__ import annotations

import ast
import re
from dataclasses import replace
from typing import TYPE_CHECKING

from auditor.astnodes import walk_list

if TYPE_CHECKING:
    from auditor.findings import FileResult
    from auditor.static.engine import StaticEngine

# a literal that opens (after optional blank lines) with FROM and an image, as a Dockerfile does
_OPENS_AS_DOCKERFILE = re.compile(r"(?:[rRuUfFbB]{0,2})(?:\"\"\"|''')\s*FROM[ \t]+[\w${}./:@-]+")
_INSTRUCTION = re.compile(r"(?m)^[ \t]*(?:RUN|ENV|ARG|COPY|ADD|WORKDIR|ENTRYPOINT|CMD|USER|LABEL|EXPOSE|SHELL)[ \t]")
_QUICK = re.compile(rb"(?:\"\"\"|''')\s*FROM[ \t]")


def add_embedded_dockerfiles(engine: "StaticEngine", data: bytes, rel: str, result: "FileResult") -> None:
    """Append the findings of every Dockerfile template literal in a Python source to `result`."""
    if not _QUICK.search(data):
        return
    from auditor.project.dockerfile import analyze_dockerfile

    try:
        text = data.decode("utf-8")
        tree = ast.parse(text)
    except (UnicodeDecodeError, SyntaxError, ValueError, RecursionError):
        return
    lines = text.splitlines(keepends=True)
    docstrings = {id(node.value) for node in walk_list(tree)
                  if isinstance(node, ast.Expr) and isinstance(node.value, (ast.Constant, ast.JoinedStr))}
    seen = {(f.line, f.code) for f in result.findings}
    for node in walk_list(tree):
        if not isinstance(node, (ast.Constant, ast.JoinedStr)) or id(node) in docstrings:
            continue
        if isinstance(node, ast.Constant) and not isinstance(node.value, str):
            continue
        if node.end_lineno is None or node.end_col_offset is None or node.end_lineno == node.lineno:
            continue
        first = lines[node.lineno - 1]
        start = len(first.encode("utf-8")[:node.col_offset].decode("utf-8", "replace"))   # ast columns are bytes
        opening = _OPENS_AS_DOCKERFILE.match(first, start)
        if opening is None:
            continue
        quote_end = start + len(first[start:]) - len(first[start:].lstrip("rRuUfFbB")) + 3
        last = lines[node.end_lineno - 1]
        end = len(last.encode("utf-8")[:node.end_col_offset].decode("utf-8", "replace")) - 3
        body = [first[quote_end:]] + lines[node.lineno:node.end_lineno - 1] + [last[:max(end, 0)]]
        source = "".join(body)
        if not _INSTRUCTION.search(source):
            continue
        inner = analyze_dockerfile(engine, source.encode("utf-8"), rel)
        for f in inner.findings:
            line = f.line + node.lineno - 1
            if (line, f.code) in seen:
                continue            # the Python pass already reports it there (`"""FROM nvidia/cuda:..."""`)
            seen.add((line, f.code))
            col = f.col + quote_end if f.line == 1 else f.col
            result.findings.append(replace(f, path=rel, line=line, col=col,
                                           end_line=f.end_line + node.lineno - 1,
                                           message=f"{f.message} [Dockerfile template in a string]"))
    result.findings.sort(key=lambda f: f.sort_key())
