"""Config settings whose value selects a CUDA-only module of the tree (t18b, issue 15; the session-11 labelling
decision "a config value selecting a CUDA-only implementation"). mdlm's Hydra config says `backbone: dit` and its
scripts override `backbone=ar`; the code picks the model class from that value:

    if self.config.backbone == 'dit':
        self.backbone = models.dit.DIT(...)

and `models/dit.py` imports flash_attn. The value in the config or on the command line is where the run's choice is
made, so the line is reported with the module's own finding. Two steps, as the launch passes
(auditor/project/launched.py):

1. per Python file, in the worker (project_imports.with_facts), `choice_facts` records each `if <x>.<key> == "<value>":`
   test whose body calls into an imported module (`models.dit.DIT(...)`, or a name imported from one), as
   [key, value, module, level];
2. after every file is read, `apply_setting_choices` resolves each module to a file of the tree, keeps the choices
   whose module has an attention finding that is not information, and reports YAML lines `key: value` and
   shell words `key=value` (Hydra / OmegaConf overrides) that set one, as NPU363 (flash-attention-setting: a setting
   that selects a CUDA attention kernel, here through the module it builds). Comment lines are not read. Nothing is
   run.
"""
from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import Any

from auditor.findings import FileResult, Finding
from auditor.project.launched import attention_hit
from auditor.project.makefile import call_finding
from auditor.astnodes import module_nodes_of, walk_list
from auditor.source import MAX_FILE_BYTES, SourceError, read_source
from auditor.suppress import Suppressions

FACT = "choices"
_MAX_CHOICES = 64
_VALUE_RE = re.compile(r"[A-Za-z0-9_][\w.-]{0,63}")
_RULE = "flash-attention-setting"      # NPU363: a setting that selects a CUDA attention kernel (rules/project.yaml)
_CONFIG_SUFFIXES = (".yaml", ".yml")
_SHELL_SUFFIXES = (".sh", ".bash", ".slurm", ".sbatch")


def _imported_modules(tree: ast.Module) -> dict[str, tuple[str, int]]:
    """Local name -> (module, level) for the file's imports: `import models` -> models, `from models import dit` ->
    models.dit (a submodule or a name defined there), `from models.dit import DIT` -> models.dit."""
    names: dict[str, tuple[str, int]] = {}
    for node in module_nodes_of(tree, (ast.Import, ast.ImportFrom)):     # (the engine's shared node list)
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    names[alias.asname] = (alias.name, 0)
                else:
                    root = alias.name.split(".", 1)[0]
                    names.setdefault(root, (root, 0))
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            for alias in node.names:
                if alias.name == "*":
                    continue
                local = alias.asname or alias.name
                names[local] = (f"{base}.{alias.name}" if base else alias.name, node.level or 0)
    return names


def _called_module(func: ast.expr, imports: dict[str, tuple[str, int]]) -> tuple[str, int] | None:
    """The module a call reaches: `models.dit.DIT` -> models.dit; `DIT` imported from models.dit -> models.dit."""
    parts: list[str] = []
    while isinstance(func, ast.Attribute):
        parts.append(func.attr)
        func = func.value
    if not isinstance(func, ast.Name) or func.id not in imports:
        return None
    module, level = imports[func.id]
    parts.reverse()
    if not parts:                      # `DIT(...)`: the name was imported from its module
        return (module.rsplit(".", 1)[0], level) if "." in module else None
    return ".".join([module, *parts[:-1]]), level


def choice_facts(tree: ast.Module) -> list[list[Any]]:
    """[key, value, module, level] for each `if <x>.<key> == "<value>":` (an `elif` too) whose body calls into an
    imported module."""
    imports = _imported_modules(tree)
    if not imports:
        return []
    out: list[list[Any]] = []
    for node in module_nodes_of(tree, ast.If):
        if not (isinstance(node.test, ast.Compare) and len(node.test.ops) == 1
                and isinstance(node.test.ops[0], ast.Eq) and isinstance(node.test.left, ast.Attribute)):
            continue
        right = node.test.comparators[0]
        if not (isinstance(right, ast.Constant) and isinstance(right.value, str) and _VALUE_RE.fullmatch(right.value)):
            continue
        key = node.test.left.attr
        for stmt in node.body:
            for call in walk_list(stmt):
                if isinstance(call, ast.Call):
                    found = _called_module(call.func, imports)
                    if found is not None and [key, right.value, *found] not in out:
                        out.append([key, right.value, *found])
    return out[:_MAX_CHOICES]


def _module_file(module: str, level: int, folder: str, by_rel: dict[str, FileResult]) -> str | None:
    """The tree file of a module imported by a file in `folder`: relative imports from the folder (up level - 1),
    absolute ones from the folder, then from each folder above it to the tree's top."""
    parts = [p for p in folder.split("/") if p]
    if level:
        bases = ["/".join(parts[:len(parts) - (level - 1)])] if level - 1 <= len(parts) else []
    else:
        bases = ["/".join(parts[:i]) for i in range(len(parts), -1, -1)]
    path = module.replace(".", "/")
    for base in bases:
        for candidate in (f"{path}.py", f"{path}/__init__.py"):
            rel = f"{base}/{candidate}" if base else candidate
            if rel in by_rel:
                return rel
    return None


def _selected(results: list[FileResult], by_rel: dict[str, FileResult]) -> dict[tuple[str, str], tuple[str, Finding]]:
    """(key, value) -> (module file, its finding) for the choices that select a module with CUDA-only attention,
    when another value of the same key selects a module of the tree without one (a choice between implementations:
    mdlm's `dimamba` beside `dit` / `ar`; a `stage: sft` whose every workflow patches FlashAttention is not one)."""
    out: dict[tuple[str, str], tuple[str, Finding]] = {}
    plain: set[str] = set()        # keys with a value whose module has no such finding
    for rel, result in by_rel.items():
        tree = result.summary.get("tree") if result.summary else None
        choices = tree.get(FACT) if isinstance(tree, dict) else None
        for choice in choices if isinstance(choices, list) else []:
            try:
                key, value, module, level = choice
            except (TypeError, ValueError):
                continue
            target = _module_file(module, level, rel.rsplit("/", 1)[0] if "/" in rel else "", by_rel)
            if target is None or target == rel:
                continue
            hit = attention_hit(by_rel[target].findings)
            if hit is not None:
                out.setdefault((key, value), (target, hit))
            else:
                plain.add(key)
    return {choice: found for choice, found in out.items() if choice[0] in plain}


def _patterns(selected) -> list[tuple[re.Pattern, re.Pattern, tuple[str, str]]]:
    out = []
    for key, value in selected:
        quoted = rf"""["']?{re.escape(value)}["']?"""
        yaml_re = re.compile(rf"^(\s*(?:-\s+)?){re.escape(key)}\s*:\s*({quoted})\s*(?:#.*)?$")
        shell_re = re.compile(rf"(?<![\w.+$-])(\+{{0,2}}{re.escape(key)}={quoted})(?=[\s;\\]|$)")
        out.append((yaml_re, shell_re, (key, value)))
    return out


def _rel(result: FileResult, top: Path) -> str:
    """The result's path from the tree's top (`top` resolved: a tree reached through a symlink has its results'
    paths under the link)."""
    path = Path(result.path)
    if not path.is_absolute():
        return path.as_posix()
    for candidate in (path, path.resolve()):
        try:
            return candidate.relative_to(top).as_posix()
        except ValueError:
            continue
    return path.as_posix()


def result_text(result: FileResult, top: Path) -> str | None:
    """The text of a result's file (its path absolute or from `top`), None when it cannot be read."""
    path = Path(result.path)
    try:
        return read_source(path if path.is_absolute() else top / path, MAX_FILE_BYTES)[0].decode(
            "utf-8", errors="replace")
    except (OSError, SourceError):
        return None


def apply_setting_choices(results: list[FileResult], root: Path, rules, product: str = "a2") -> None:
    """Add a finding to each config line and launch word that sets a choice selecting a CUDA-only module."""
    rule = next((r for r in rules if r.name == _RULE), None)
    if rule is None or not any(r.summary and isinstance(r.summary.get("tree"), dict) and
                                  r.summary["tree"].get(FACT) for r in results):
        return
    top = (root if root.is_dir() else root.parent).resolve()
    by_rel = {_rel(r, top): r for r in results if r.path.endswith(".py")}
    selected = _selected(results, by_rel)
    if not selected:
        return
    patterns = _patterns(selected)
    for result in results:
        is_config = result.path.endswith(_CONFIG_SUFFIXES)
        if not (is_config or result.path.endswith(_SHELL_SUFFIXES)):
            continue
        text = result_text(result, top)
        if text is None:
            continue
        have = {(f.line, f.code) for f in result.findings}
        lines = text.splitlines()
        suppressions = Suppressions.of(lines, text)
        for number, line in enumerate(lines, 1):
            if line.lstrip().startswith("#"):
                continue
            for yaml_re, shell_re, choice in patterns:
                m = yaml_re.match(line) if is_config else shell_re.search(line)
                if m is None:
                    continue
                target, hit = selected[choice]
                if (number, rule.code) in have or suppressions.covers(number, number, rule.code):
                    continue
                start = m.start(2) if is_config else m.start(1)
                end = m.end(2) if is_config else m.end(1)
                message = rule.message.replace("{symbol}", f"{choice[0]}={choice[1]}") + \
                    f" (it builds {target}, whose line {hit.line} has `{hit.symbol}`, {hit.code})"
                result.findings.append(call_finding(rule, product, result, (number, start + 1, end + 1), message,
                                                    f"{choice[0]}={choice[1]}", {"selects": target, "line": hit.line,
                                                                                 "code": hit.code}))
                have.add((number, rule.code))
