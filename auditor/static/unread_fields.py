"""Attention-implementation names held in config fields that no code of the tree reads (r2b, session 36; lead decision
35 in docs/recall.md: an unread config value is `none`).

`attn_implementation: Optional[str] = field(default="flash_attention_2")` in a training script's `ModelArguments`
dataclass (DeepSeek-MoE's finetune.py, test75) chooses an attention kernel only where some code reads the field
(`from_pretrained(..., attn_implementation=model_args.attn_implementation)`). When no file of the tree names the field
outside its own definition (no `.attn_implementation`, no `attn_implementation=` keyword, no `"attn_implementation"`
key: the word appears nowhere else), the default is dead: NPU386's finding on it is dropped. A field another file, a
config or the same file reads keeps its finding. Only class-level fields of a class (a dataclass, a config class) are
read here; a parameter default or a keyword argument is a use where it is written.
"""
from __future__ import annotations

import ast
import re
from typing import Any

from auditor.static.astutil import module_nodes

# the rule whose findings name an attention implementation by its string (rules/ecosystem.yaml)
_RULE = "flash-attention-implementation-string"
_SUFFIXES = (".py", ".yaml", ".yml", ".json", ".toml", ".cfg", ".ini", ".sh")


def _class_fields(tree: ast.Module) -> dict[int, str]:
    """{line: field name} of the annotated class-level assignments with a value (`name: T = ...`), every line of
    the statement."""
    out: dict[int, str] = {}
    for node in module_nodes(tree):
        if not isinstance(node, ast.ClassDef) or not any(
                (d.func if isinstance(d, ast.Call) else d).__class__ in (ast.Name, ast.Attribute)
                and _last_name(d.func if isinstance(d, ast.Call) else d) == "dataclass" for d in node.decorator_list):
            continue
        for stmt in node.body:
            if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and stmt.value is not None:
                for line in range(stmt.lineno, (stmt.end_lineno or stmt.lineno) + 1):
                    out[line] = stmt.target.id
    return out


def _last_name(node: ast.expr) -> str:
    return node.attr if isinstance(node, ast.Attribute) else node.id if isinstance(node, ast.Name) else ""


# a whole arguments object handed on (`from_pretrained(path, **asdict(model_args))`, `**vars(args)`): every field is
# read without its name
_UNPACKED = re.compile(rb"\basdict\(|\*\*\s*vars\(|\*\*\s*[\w.]+\.__dict__|\*\*\s*[\w.]+\.to_dict\(")


def _named_elsewhere(project: Any, name: str, rel: str, own_lines: set[int]) -> bool:
    """Whether a file of the tree names `name` (as a word) anywhere but on `own_lines` of `rel`; True when a file
    cannot be read."""
    from auditor.source import SourceError
    from auditor.static.project_imports import read_counted

    word = re.compile(rb"\b" + re.escape(name.encode()) + rb"\b")
    for other, path in project.paths.items():
        if not other.lower().endswith(_SUFFIXES):
            continue
        try:
            data = read_counted(project, path)
        except (OSError, SourceError):
            return True
        if _UNPACKED.search(data):
            return True
        if other != rel:
            if word.search(data):
                return True
            continue
        for number, line in enumerate(data.splitlines(), 1):
            if number not in own_lines and word.search(line):
                return True
    return False


def drop_unread_attention_fields(results: list, project: Any) -> int:
    """Drop NPU386 on a class field's default that no code of the tree reads (module doc). Returns how many."""
    dropped = 0
    for r in results:
        if not r.path.endswith(".py") or not any(f.name == _RULE for f in r.findings):
            continue
        source = project.source(r.path)
        if source is None:
            continue
        fields = _class_fields(source[1])
        unread: dict[str, bool] = {}
        kept = []
        for f in r.findings:
            name = fields.get(f.line) if f.name == _RULE else None
            if name is not None and name not in unread:
                own = {line for line, n in fields.items() if n == name}
                unread[name] = not _named_elsewhere(project, name, r.path, own)
            if name is not None and unread[name]:
                dropped += 1
                continue
            kept.append(f)
        r.findings = kept
    return dropped
