"""Test markers named for CUDA that the tree's own test configuration deselects or skips without CUDA.

A plain marker (`@pytest.mark.cuda`, declared in pytest.ini as "test that require CUDA") runs nothing by itself; the
suite makes it a skip guard where it is wired: AIMET's CMake runs `pytest ... -m "not cuda"` when `ENABLE_CUDA` is
off (or `set(CUDA_FLAG "not cuda")` ... `-m ${CUDA_FLAG}`), a CI script or `addopts` passes `-m "not gpu"`, or a
conftest's `pytest_collection_modifyitems` / `pytest_runtest_setup` skips items carrying the marker when
`torch.cuda.is_available()` is false. On an Ascend host such a test is deselected like one under
`@pytest.mark.skipif(not torch.cuda.is_available(), ...)`: its body's errors are warnings (auditor/static/gates.py,
which reads the names returned here through `gates.DESELECTED_SUFFIX` flags). A marker no file of the tree wires
stays an ordinary mark: the test runs on Ascend as written.
"""
from __future__ import annotations

import ast
import re
from collections.abc import Sequence
from pathlib import Path

from auditor.project import is_github_workflow, project_kind
from auditor.source import SourceError, decode_source
from auditor.static.backends import backends_in_text
from auditor.static.project_imports import ProjectImports, kept_fact, read_counted

# `pytest ... -m "not cuda"`, `-m 'not gpu and not slow'`, `-m=not cuda`, `-m ${CUDA_FLAG}` (a variable: the file's
# quoted marker expressions below are read then)
_MARK_OPTION = re.compile(r"(?:^|\s)-m\s*=?\s*(?:\"([^\"]*)\"|'([^']*)'|(\S+))")
_QUOTED_NOT = re.compile(r"[\"']((?:not\s+\w+)(?:\s+(?:and|or)\s+(?:not\s+)?\w+)*)[\"']")
_NOT_WORD = re.compile(r"\bnot\s+(\w+)")
_ADDOPTS = re.compile(r"^\s*addopts\s*=.*$", re.M)
_HOOKS = ("pytest_collection_modifyitems", "pytest_runtest_setup")
# configuration files pytest reads beside a conftest.py (not discovered as project files)
_INI_NAMES = ("pytest.ini", "tox.ini")
_CONFIG_KINDS = frozenset({"cmake", "shell", "makefile", "pyproject", "setupcfg"})


def _cuda_marker(name: str) -> bool:
    return backends_in_text(name) == {"cuda"}


def _expression_marks(expression: str) -> set[str]:
    return {m for m in _NOT_WORD.findall(expression) if _cuda_marker(m)}


def marks_in_command_text(text: str) -> set[str]:
    """CUDA markers a build file, script or config deselects: `not M` in a `-m` marker expression of a file that
    runs pytest, given inline or through a variable the file sets to a quoted expression."""
    if "pytest" not in text:
        return set()
    out: set[str] = set()
    variable = False
    for m in _MARK_OPTION.finditer(text):
        inline = m.group(1) if m.group(1) is not None else m.group(2)
        if inline is not None:
            out |= _expression_marks(inline)
        elif m.group(3).startswith("$"):
            variable = True
    if variable:
        for q in _QUOTED_NOT.finditer(text):
            out |= _expression_marks(q.group(1))
    for line in _ADDOPTS.findall(text):
        for m in _MARK_OPTION.finditer(line.split("=", 1)[1]):
            out |= _expression_marks(next(g for g in m.groups() if g is not None))
    return out


def marks_skipped_by_hooks(tree: ast.Module) -> set[str]:
    """CUDA markers a conftest's collection or setup hook skips when CUDA is absent: a string naming the marker
    beside a CUDA test in the same hook (`if not torch.cuda.is_available(): ... if "gpu" in item.keywords:
    item.add_marker(skip)`)."""
    from auditor.static.gates import is_cuda_test

    out: set[str] = set()
    for fn in tree.body:
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) or fn.name not in _HOOKS:
            continue
        nodes = list(ast.walk(fn))
        if not any(isinstance(n, (ast.If, ast.IfExp)) and is_cuda_test(_operand(n.test)) for n in nodes):
            continue
        out |= {n.value for n in nodes if isinstance(n, ast.Constant) and isinstance(n.value, str)
                and n.value.isidentifier() and _cuda_marker(n.value)}
    return out


def _operand(test: ast.expr) -> ast.expr:
    return test.operand if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not) else test


def _text(project: ProjectImports | None, path: Path) -> str | None:
    try:
        return decode_source(read_counted(project, path))
    except (SourceError, OSError, UnicodeDecodeError, SyntaxError):
        return None


_FACT = "deselected_marks"


def _file_marks(project: ProjectImports | None, path: Path, rel: str) -> list[str]:
    """The CUDA markers one conftest.py or test-running config deselects or skips (none for another file)."""
    name = rel.rsplit("/", 1)[-1]
    if name == "conftest.py":
        text = _text(project, path)
        if text and "pytest_" in text and "cuda" in text:
            try:
                return sorted(marks_skipped_by_hooks(ast.parse(text)))
            except (SyntaxError, ValueError):
                pass
    elif project_kind(name, rel) in _CONFIG_KINDS or is_github_workflow(rel):
        text = _text(project, path)
        if text and " -m" in text or text and "addopts" in text:
            return sorted(marks_in_command_text(text))
    return []


def deselected_cuda_marks(files: Sequence[tuple[Path, str]], project: ProjectImports | None = None) -> frozenset[str]:
    """The CUDA-named markers the tree's test configuration deselects or skips without CUDA. Each file's markers are
    kept in its cached summary where it has one (kept_fact, review48 item 13): a warm run reads none of them."""
    out: set[str] = set()
    ini_folders: set[Path] = set()
    summaries = project.summaries if project is not None else {}
    changed = project.changed if project is not None else set()
    for path, rel in files:
        name = rel.rsplit("/", 1)[-1]
        if name == "conftest.py":
            ini_folders.add(path.parent)
        elif not (project_kind(name, rel) in _CONFIG_KINDS or is_github_workflow(rel)):
            continue
        out.update(kept_fact(summaries.get(rel), _FACT, lambda held: isinstance(held, list),
                             lambda: _file_marks(project, path, rel), changed, rel))
    for folder in ini_folders:
        for ini in _INI_NAMES:
            if (folder / ini).is_file() and (text := _text(project, folder / ini)):
                out |= {m for line in _ADDOPTS.findall(text) for m in marks_in_command_text("pytest " + line)}
    return frozenset(out)


__all__ = ["deselected_cuda_marks", "marks_in_command_text", "marks_skipped_by_hooks"]
