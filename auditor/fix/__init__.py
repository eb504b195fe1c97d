"""`audit fix`: the mechanical part of a port, applied by libcst codemods at the findings of the static pass.

fix_file() runs the static engine on a file, rewrites the nodes of the fixable findings (codemod.py), and
repeats on the result until nothing changes (a rewrite can reveal nothing new by design, but a second pass
is how we prove that), then audits the result once more so the caller knows what is left.
"""
from __future__ import annotations

import ast
import io
import tokenize
import warnings
from dataclasses import dataclass, field
from typing import Callable

import libcst as cst

from auditor.findings import Finding
from auditor.rules import Rule
from auditor.static.engine import StaticEngine, decode_source, looks_binary

from auditor.fix.codemod import apply_fixes
from auditor.astnodes import walk_list

MAX_PASSES = 4


@dataclass
class FileFix:
    path: str
    original: str = ""
    fixed_text: str = ""
    encoding: str = "utf-8"
    bom: bool = False
    fixed: list[Finding] = field(default_factory=list)        # findings the codemods resolved
    remaining: list[Finding] = field(default_factory=list)    # findings of the fixed text
    skipped: dict[str, str] = field(default_factory=dict)     # fingerprint-less key -> why a fixable one stayed
    error: str | None = None

    @property
    def changed(self) -> bool:
        return self.error is None and self.fixed_text != self.original

    def encoded(self) -> bytes:
        data = self.fixed_text.encode(self.encoding)
        return (b"\xef\xbb\xbf" + data) if self.bom else data


def finding_key(f: Finding) -> str:
    return f"{f.code}:{f.line}:{f.col}:{f.symbol}"


def applicable(f: Finding, unsafe: bool) -> bool:
    return f.fix == "safe" or (unsafe and f.fix == "unsafe")


def comments_and_docstrings(text: str) -> tuple[list[str], list[str]]:
    """Every comment token and every docstring, in order: a fix must leave both byte-identical."""
    comments = [t.string for t in tokenize.generate_tokens(io.StringIO(text).readline) if t.type == tokenize.COMMENT]
    docs = [ast.get_docstring(n, clean=False) or "" for n in walk_list(ast.parse(text))
            if isinstance(n, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))]
    return comments, docs


def _parses(text: str) -> str | None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            ast.parse(text)
        except (SyntaxError, ValueError) as exc:
            return str(exc)
    return None


def fix_bytes(data: bytes, rel: str, engine: StaticEngine, rules: dict[str, Rule], *, unsafe: bool = False,
              selected: Callable[[Finding], bool] = lambda f: True) -> FileFix:
    result = FileFix(rel)
    if looks_binary(data):
        result.error = "binary content (NUL bytes)"
        return result
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
        text = decode_source(data)
    except (UnicodeDecodeError, SyntaxError, LookupError) as exc:
        result.error = f"cannot decode: {exc}"
        return result
    result.encoding = "utf-8" if encoding == "utf-8-sig" else encoding
    result.bom = data.startswith(b"\xef\xbb\xbf")
    result.original = result.fixed_text = text
    problem = _parses(text)
    if problem is not None:
        result.error = f"syntax error: {problem}"
        return result

    def audit(source: str) -> list[Finding]:
        res = engine.analyze_bytes(source.encode(result.encoding, errors="surrogatepass"), rel)
        if res.error is not None:
            raise ValueError(res.error.message)
        return [f for f in res.findings if selected(f)]

    try:
        current = text
        findings = audit(current)
        for _ in range(MAX_PASSES):
            todo = [f for f in findings if applicable(f, unsafe)]
            if not todo:
                break
            new_text, applied = apply_fixes(current, todo, rules)
            for f, why in applied.skipped:
                result.skipped[finding_key(f)] = why
            if new_text == current:
                break
            problem = _parses(new_text)
            if problem is not None:          # a codemod bug must never reach the user's file
                raise ValueError(f"the fixed code does not parse ({problem}); nothing written")
            result.fixed.extend(applied.fixed)
            current = new_text
            findings = audit(current)
        if current != text and comments_and_docstrings(current) != comments_and_docstrings(text):
            raise ValueError("a fix would change a comment or docstring; nothing written")
        result.fixed_text = current
        result.remaining = findings
    except (ValueError, cst.ParserSyntaxError, RecursionError, tokenize.TokenError) as exc:
        result.error = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        result.fixed_text = text
    return result
