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

from auditor.findings import FileResult, Finding
from auditor.project.launch_imports import facts_reader, failing_imports
from auditor.project.launched import (SUMMARY_KEY, launch_bases, launched_word_position, name_defaults,
                                      resolve_launched)
from auditor.project.makefile import call_finding, recorded_calls, unsuppressed
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
DEFAULTS = "option_defaults"    # the summary key of a Python file's name-like argparse defaults (tp54b)
_LAUNCH_RULE = "launch-choice-cuda-kernel-implementation"     # NPU992 (rules/project_launch_choices.yaml)


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


def option_defaults_fact(tree: ast.AST | None) -> dict | None:
    """launched.name_defaults of a file's options (`--arch` default `dla_34` -> arch: [dla_34, [arch]]); None when it
    has none. Kept in the file's summary (a warm run parses no Python file for it)."""
    return name_defaults(tree) if isinstance(tree, ast.Module) else None


def _entries(fact: dict, value: str, suffixed: bool) -> list:
    """The imports a registry maps `value` to; `suffixed`: also the key `value` is with a depth suffix
    (`resdcn_18`, `dla34` -> `resdcn`, `dla`: CenterNet's `create_model` splits `arch` at `_`, as torchvision-style
    model factories name a family and its depth)."""
    out = list(fact.get(value) or [])
    if suffixed:
        base = re.fullmatch(r"(.+?)[_-]?\d+", value)
        if base and base.group(1) != value:
            out += fact.get(base.group(1)) or []
    return out


def _kernel_chain(value: str, registries: list[tuple[str, object]],
                  facts_of: Callable[[str], dict | None], suffixed: bool = False) -> list[str] | None:
    """The import chain from the registry entry `value`'s class to a CUDA-only kernel finding, None when none;
    `suffixed` (a launch's option value): a depth-suffixed value names its family's entry, and a kernel warning on an
    import (the project's own compiled extension, known by its name) ends a chain too."""
    for rel, fact in registries:
        for imported in _entries(fact, value, suffixed) if isinstance(fact, dict) else []:
            def one_import(path: str, _rel=rel, _imported=imported) -> dict | None:
                return {"imports": [_imported]} if path == _rel else facts_of(path)
            chain = failing_imports(rel, one_import, [""], soft=suffixed).get(_CATEGORY)
            if chain:
                return chain
    return None


def _under(rel: str, folder: str) -> bool:
    return not folder or rel.startswith(folder + "/")


def _launch_values(call: dict, folder: str, defaults: list[tuple[str, object]]) -> list[tuple[str, str, bool]]:
    """(option, value, passed) a launch runs its script with: the name-like values it passes, then the defaults of
    the options it leaves alone, from the argparse of the files in the script's folder and below (CenterNet's
    `src/main.py` reads `src/lib/opts.py` through `_init_paths`); a default two files give differently is skipped."""
    held = call.get("values")
    passed: dict = held if isinstance(held, dict) else {}
    given = {str(o).replace("-", "_") for o in call.get("options") or []}     # as option_defaults spells them
    seen: dict[str, set[str]] = {}
    words: dict[str, list[str]] = {}
    for rel, fact in defaults:
        if _under(rel, folder) and isinstance(fact, dict):
            for option, held_default in fact.items():
                if isinstance(held_default, list) and len(held_default) == 2:
                    seen.setdefault(option, set()).add(str(held_default[0]))
                    words.setdefault(option, [str(w) for w in held_default[1]] or [option])
    out = [(str(o), str(v), True) for o, v in sorted(passed.items())]
    out += [(words[o][0], next(iter(v)), False) for o, v in sorted(seen.items())
            if len(v) == 1 and not given & {o, *words[o]}]
    return out


def _facts_of(results: list[FileResult], top: Path, analyze: Callable[[], Callable[[bytes, str], FileResult]],
              cache: dict) -> Callable[[str], dict | None]:
    """launch_imports' facts_of over the run's Python files, the file reader built only when a file is missing."""
    by_rel = {r.path: r for r in results if r.path.endswith(".py")}
    reader: list = []

    def read(data: bytes, rel: str) -> FileResult:
        if not reader:
            reader.append(analyze())
        return reader[0](data, rel)
    return facts_reader(top, by_rel, read, cache)


def apply_launch_choices(results: list[FileResult], root: Path, rules,
                         analyze: Callable[[], Callable[[bytes, str], FileResult]], product: str = "a2") -> None:
    """Add a finding to each launch line whose option value (passed, or the script's default) names a registry entry
    of the script's folder built on a CUDA-only kernel (tp54b: `python main.py ctdet --arch resdcn_18`)."""
    rule = next((r for r in rules if r.name == _LAUNCH_RULE), None)
    launching = [r for r in results if (r.summary or {}).get(SUMMARY_KEY)]
    if rule is None or not launching:
        return
    top = (root if root.is_dir() else root.parent).resolve()
    cache: dict = {}
    facts_of = _facts_of(results, top, analyze, cache)
    held: dict[str, list[tuple[str, object]]] = {}
    chains: dict[tuple[str, str], list[str] | None] = {}
    for result in launching:
        calls, bases = recorded_calls(result, top, SUMMARY_KEY)
        have = {(f.line, f.category) for f in result.findings}
        new: list[Finding] = []
        for call in calls:
            if not isinstance(call, dict) or not isinstance(call.get("file"), str) or call.get("script_var"):
                continue
            found = resolve_launched(call["file"], (bases[-1],) if call.get("own_folder") else
                                     launch_bases(bases, top), cache)
            try:
                start = found[1].resolve().relative_to(top).as_posix() if found else None
            except ValueError:
                start = None
            where = launched_word_position(call)
            if start is None or (where[0], _CATEGORY) in have:
                continue
            if not held:        # the tree's registries and defaults, only once a launch names a file of it
                held[FACT] = summarized_facts(top, results, FACT, registry_fact)
                held[DEFAULTS] = summarized_facts(top, results, DEFAULTS, option_defaults_fact)
            folder = start.rsplit("/", 1)[0] if "/" in start else ""
            registries = [(rel, fact) for rel, fact in held[FACT] if _under(rel, folder)]
            for option, value, passed in _launch_values(call, folder, held[DEFAULTS]) if registries else []:
                if (folder, value) not in chains:
                    chains[(folder, value)] = _kernel_chain(value, registries, facts_of, suffixed=True)
                chain = chains[(folder, value)]
                if chain:
                    symbol = f"--{option} {value}" if passed else f"{value} (the default of --{option})"
                    message = rule.message.replace("{symbol}", symbol) + " (" + " -> ".join(chain) + ")"
                    new.append(call_finding(rule, product, result, where, message, symbol,
                                            {"launched": call["file"], "chain": chain}))
                    have.add((where[0], _CATEGORY))
                    break
        result.findings.extend(unsuppressed(new, calls, Path(result.path), top) if new else [])


def apply_registry_choices(results: list[FileResult], root: Path, rules,
                           analyze: Callable[[], Callable[[bytes, str], FileResult]], product: str = "a2") -> None:
    """Add a finding to each config choice line that names a registry entry built on a CUDA-only kernel."""
    rule = next((r for r in rules if r.name == _RULE), None)
    configs = [r for r in results if config_file(r.path)]
    if rule is None or not configs:
        return
    top = (root if root.is_dir() else root.parent).resolve()
    facts_of = _facts_of(results, top, analyze, {})
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
