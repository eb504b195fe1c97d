"""Hydra config choices that name an entry of the code's registry of implementations, where that entry's class is
built on a CUDA-only kernel (tp51d, issue 15; the session-11 labelling decision "a config value selecting a CUDA-only
implementation", as setting_choices.py reads it for `if cfg.x == "v":` tests). mvsplat's `config/main.yaml` says

    defaults:
      - model/decoder: splatting_cuda

Hydra loads the group file `config/model/decoder/splatting_cuda.yaml` (`name: splatting_cuda`), and the code picks
the class from a registry keyed by that name:

    from .decoder_splatting_cuda import DecoderSplattingCUDA
    DECODERS = {"splatting_cuda": DecoderSplattingCUDA}
    ... DECODERS[decoder_cfg.name](decoder_cfg, dataset_cfg)

whose module imports `.cuda_splatting`, which imports diff_gaussian_rasterization (a CUDA rasterizer extension). The
defaults entry and the group file's own name line are where the run's choice is made: both are reported (NPU974),
with the import chain that ends in the kernel's finding. A choice is a YAML line of a config file (not a comment, not
a CI file): a `defaults:` list entry `- <group>: <value>` (Hydra's defaults list, "Defaults List" page of
hydra.cc), or a top-level scalar equal to the file's own stem (a group option file naming itself). The registry is a
dict display in a Python file of the tree with the value as a string key and a class imported from a module of the
tree as its value; the chain is followed with launch_imports.failing_imports from that one import. The registries are a per-file fact
(`registry` in each Python file's summary), so a warm run reads no Python file for them. Nothing is run.
"""
from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import Callable

from auditor.findings import FileResult
from auditor.project.launch_imports import facts_reader, failing_imports
from auditor.project.makefile import call_finding
from auditor.project.setting_choices import result_text
from auditor.project.setting_keywords import config_file
from auditor.project.setting_reads import summarized_facts
from auditor.suppress import Suppressions

_RULE = "config-choice-cuda-kernel-implementation"     # NPU974 (rules/project_registry_choices.yaml)
_CATEGORY = "kernel"
_DEFAULTS_RE = re.compile(r"^defaults\s*:\s*(?:#.*)?$")
# `  - model/decoder: splatting_cuda`, `  - override backbone: resnet_cuda`, `  - encoder@model.encoder: x`
_DEFAULTS_ENTRY_RE = re.compile(r"^\s+-\s+(?:override\s+)?([\w/.-]+(?:@[\w.]+)?)\s*:\s*([\"']?)([A-Za-z_][\w.-]*)\2"
                                r"\s*(?:#.*)?$")
_TOP_SCALAR_RE = re.compile(r"^([A-Za-z_]\w*)\s*:\s*([\"']?)([A-Za-z_][\w.-]*)\2\s*(?:#.*)?$")
FACT = "registry"     # the summary key of a Python file's registry entries (auditor/cache.py FACTS)


def _choices(text: str, stem: str) -> list[tuple[int, int, int, str]]:
    """(line, start, end, value) of each choice line: a defaults-list entry, a top-level scalar equal to the stem."""
    out: list[tuple[int, int, int, str]] = []
    in_defaults = False
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        if not line[0].isspace():
            in_defaults = bool(_DEFAULTS_RE.match(line))
            top = _TOP_SCALAR_RE.match(line)
            if top and top.group(3) == stem:
                out.append((number, top.start(3), top.end(3), top.group(3)))
        elif in_defaults:
            entry = _DEFAULTS_ENTRY_RE.match(line)
            if entry:
                out.append((number, entry.start(3), entry.end(3), entry.group(3)))
    return out


def registry_fact(tree: ast.AST | None) -> dict | None:
    """{key: [[line, module, level, [name]], ...]}: the import of each class a dict display maps a string key to
    (`{"splatting_cuda": DecoderSplattingCUDA}` with `from .decoder_splatting_cuda import DecoderSplattingCUDA`); None
    when the file has none. Kept in the file's summary, so a warm run parses no Python file for it."""
    if not isinstance(tree, ast.Module):
        return None
    classes: dict[str, set[str]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Dict):
            for k, v in zip(node.keys, node.values):
                if isinstance(k, ast.Constant) and isinstance(k.value, str) and isinstance(v, ast.Name):
                    classes.setdefault(v.id, set()).add(k.value)
    out: dict[str, list[list]] = {}
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and classes:
            for alias in node.names:
                for key in sorted(classes.get(alias.asname or alias.name, ())):
                    out.setdefault(key, []).append([node.lineno, node.module or "", node.level or 0, [alias.name]])
    return out or None


def _kernel_chain(value: str, registries: list[tuple[str, object]],
                  facts_of: Callable[[str], dict | None]) -> list[str] | None:
    """The import chain from the registry entry `value`'s class to a CUDA-only kernel finding, None when none."""
    for rel, fact in registries:
        for imported in (fact.get(value) or []) if isinstance(fact, dict) else []:
            def one_import(path: str, _rel=rel, _imported=imported) -> dict | None:
                return {"imports": [_imported]} if path == _rel else facts_of(path)
            chain = failing_imports(rel, one_import, [""]).get(_CATEGORY)
            if chain:
                return chain
    return None


def apply_registry_choices(results: list[FileResult], root: Path, rules,
                           analyze: Callable[[], Callable[[bytes, str], FileResult]], product: str = "a2") -> None:
    """Add a finding to each config choice line that names a registry entry built on a CUDA-only kernel."""
    rule = next((r for r in rules if r.name == _RULE), None)
    configs = [r for r in results if config_file(r.path)]
    if rule is None or not configs:
        return
    top = (root if root.is_dir() else root.parent).resolve()
    by_rel = {r.path: r for r in results if r.path.endswith(".py")}
    reader: list = []

    def read(data: bytes, rel: str) -> FileResult:
        if not reader:
            reader.append(analyze())
        return reader[0](data, rel)
    facts_of = facts_reader(top, by_rel, read, {})
    chains: dict[str, list[str] | None] = {}
    registries: list[tuple[str, object]] | None = None
    for result in configs:
        text = result_text(result, top)
        choices = _choices(text, Path(result.path).stem) if text is not None else []
        if not choices or text is None:
            continue
        have = {(f.line, f.code) for f in result.findings}
        suppressions = Suppressions.of(text.splitlines(), text)
        for number, start, end, value in choices:
            if value not in chains:
                if registries is None:      # the tree's registries, only once a config makes a choice
                    registries = summarized_facts(top, results, FACT, registry_fact)
                chains[value] = _kernel_chain(value, registries, facts_of)
            chain = chains[value]
            if not chain or (number, rule.code) in have or suppressions.covers(number, number, rule.code):
                continue
            message = rule.message.replace("{symbol}", value) + " (" + " -> ".join(chain) + ")"
            result.findings.append(call_finding(rule, product, result, (number, start + 1, end + 1), message, value,
                                                {"chain": chain}))
            have.add((number, rule.code))
