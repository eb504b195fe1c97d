"""conda-build recipes (t31a, issue 15; project test52's graphvite): `meta.yaml` and its variant file
`conda_build_config.yaml`.

- **meta.yaml**: the `requirements:` lists (`build`, `host`, `run`; also under each of
  `outputs:`) are conda match specs, read as an environment.yml's dependencies are: `cudatoolkit {{ cudatoolkit }}`,
  `cuda-version`, `cuda-nvcc`, `nvcc_linux-64`, `{{ compiler('cuda') }}` (conda-forge's CUDA compiler),
  `{{ pin_compatible('cudatoolkit') }}`, the `__cuda` virtual package (a CUDA driver on the host). `run_constrained`
  installs nothing and is not read.
- **conda_build_config.yaml**: a variant key named for a CUDA package (`cudatoolkit:`, `cuda_compiler_version:`,
  `cudnn:`) lists the CUDA versions the package is built for, one build each: every version is reported on its own
  line (`None`, conda-forge's CPU variant, is not), the key line is not; `pin_run_as_build:` naming a CUDA package
  pins it at run time to the build's version, reported on that key.

The recipe is Jinja over YAML, rendered by conda-build with variables this pass does not have, so it is read as YAML
with each `{{ ... }}` expression blanked (same width, so lines and columns hold) and each line that is only a
Jinja statement or expression emptied (`{% set ... %}`, `{% if %}`, a whole-line `{{ environ.get(...) }}` that renders
to list items nobody can know); the match spec of a list item is then taken from the line as written. Selector
comments (`# [linux64]`) are comments: every variant is read. Nothing is rendered or run.
"""
from __future__ import annotations

import re
from typing import TYPE_CHECKING

import yaml

from auditor.findings import FileResult
from auditor.project.hits import Collector, matchers, normalize_dist
from auditor.project.requirements import conda_spec_name, yaml_entries

if TYPE_CHECKING:
    from auditor.static.engine import StaticEngine

RECIPE_NAMES = frozenset({"meta.yaml", "meta.yml"})
VARIANT_NAMES = frozenset({"conda_build_config.yaml", "conda_build_config.yml"})
# (not `run_constrained`: it pins a package only where something else installs it)
_REQUIREMENT_LISTS = frozenset({"build", "host", "run"})
_JINJA_EXPR_RE = re.compile(r"\{\{.*?\}\}")
# statements and comments, also over several lines (`{% set torch_libs = [ ... ] %}` in pytorch's feedstock)
_JINJA_BLOCK_RE = re.compile(r"\{%.*?%\}|\{#.*?#\}", re.DOTALL)
_JINJA_LINE_RE = re.compile(r"\s*\{\{.*\}\}\s*(#.*)?$")
# `{{ compiler('cuda') }}`, `{{ pin_compatible('cudatoolkit', max_pin='x.x') }}`: the package the helper names
_JINJA_PACKAGE_RE = re.compile(r"\{\{\s*(compiler|pin_compatible|pin_subpackage)\(\s*['\"]([\w.-]+)['\"]")
# variant keys whose values are CUDA versions though the key is no package name (conda-forge's CUDA compiler)
_VARIANT_PACKAGES = {"cuda-compiler-version": "cuda-version"}
_NO_VARIANT = frozenset({"none", "null", ""})


def is_recipe_file(rel: str) -> bool:
    """A conda-build recipe or variant file, by its name."""
    return rel.replace("\\", "/").rsplit("/", 1)[-1].lower() in RECIPE_NAMES | VARIANT_NAMES


def _yaml_text(text: str) -> str:
    """The recipe with its Jinja blanked: line and column of every remaining character unchanged. Statements and
    whole-line expressions become blank, an expression inside a value a run of `_`."""
    lines = []
    text = _JINJA_BLOCK_RE.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)
    for line in text.split("\n"):
        if _JINJA_LINE_RE.match(line):
            lines.append("")
        else:
            lines.append(_JINJA_EXPR_RE.sub(lambda m: "_" * len(m.group(0)), line))
    return "\n".join(lines)


def _spec_package(written: str) -> str:
    """The package a requirement line names, as written (Jinja and all): `cudatoolkit {{ cudatoolkit }}` ->
    cudatoolkit, `{{ compiler('cuda') }}` -> cuda-compiler, `__cuda >=11.8` -> cuda."""
    helper = _JINJA_PACKAGE_RE.match(written)
    if helper:
        return f"{helper.group(2)}-compiler" if helper.group(1) == "compiler" else helper.group(2)
    if written.startswith(("{{", "{%")):
        return ""
    name = conda_spec_name(written).split("{", 1)[0].rstrip("-_")      # `cuda-cudart-dev_{{ target_platform }}`
    return name[2:] if name.startswith("__") else name       # `__cuda`: the virtual package of the host's driver


def _requirement_lists(root: yaml.Node | None) -> list[yaml.SequenceNode]:
    """The requirement lists of the recipe and of each of its outputs."""
    sections = [yaml_entries(root).get("requirements")]
    outputs = yaml_entries(root).get("outputs")
    if isinstance(outputs, yaml.SequenceNode):
        sections += [yaml_entries(item).get("requirements") for item in outputs.value]
    found = []
    for section in sections:
        for name, value in yaml_entries(section).items():
            if name in _REQUIREMENT_LISTS and isinstance(value, yaml.SequenceNode):
                found.append(value)
    return found


# `{% set cuda_major = (cudatoolkit | default("12.0")).split('.')[0] | int %}`, `{% set cudart_constraints=">=13.2" %}`
_JINJA_SET_RE = re.compile(r"\{%-?\s*set\s+([A-Za-z_]\w*)\s*=")


def _cuda_parameters(col: Collector, m, pinned_by: dict[str, str]) -> None:
    """`{% set NAME = ... %}` lines that fix the CUDA build of the recipe: a variable named for CUDA
    (`cuda_major`, `cuda_constraints`) or one that pins the version of a CUDA package a requirement line installs
    (`libcublas {{ libcublas_constraints }}`). A build parameter, as a Dockerfile's `ARG CUDA_VERSION=12.6` is
    (information: the requirement lines it feeds are the errors); r2c, faiss's faiss-gpu-cuvs recipe."""
    rule = m.match_requirement("cuda-version")
    for number, text in enumerate(col.lines, 1):
        statement = _JINJA_SET_RE.match(text.lstrip())
        if statement is None:
            continue
        name = statement.group(1)
        package = pinned_by.get(name)
        if package is None and "cuda" not in name.lower():
            continue
        at = text.find(name) + 1
        why = f"pins {package}" if package else "is named for the CUDA build"
        col.add(rule, f"{{% set {name} %}}", number, at, at + len(name), severity="info",
                note=f" (a build parameter of the recipe: the variable {why})")


def _read_recipe(col: Collector, root: yaml.Node | None) -> None:
    m = matchers(col.engine)
    pinned_by: dict[str, str] = {}
    for items in _requirement_lists(root):
        for item in items.value:
            if not isinstance(item, yaml.ScalarNode):
                continue
            line, start = item.start_mark.line + 1, item.start_mark.column
            written = col.lines[line - 1][start:].split(" #", 1)[0].strip()
            name = _spec_package(written)
            if not name:
                continue
            symbol = normalize_dist(name)
            rule = m.match_requirement(symbol)
            col.add(rule, symbol, line, start + 1, start + 1 + len(written))
            if rule is not None and rule.category == "device":
                for variable in re.findall(r"\{\{\s*([A-Za-z_]\w*)\s*\}\}", written):
                    pinned_by.setdefault(variable, symbol)
    _cuda_parameters(col, m, pinned_by)


def _read_variants(col: Collector, root: yaml.Node | None) -> None:
    m = matchers(col.engine)
    for name, value in yaml_entries(root).items():
        if name == "pin_run_as_build":
            for pin_key, _ in value.value if isinstance(value, yaml.MappingNode) else ():
                symbol = normalize_dist(str(pin_key.value))
                col.add(m.match_requirement(symbol), symbol, pin_key.start_mark.line + 1,
                        pin_key.start_mark.column + 1, note=" (pinned at run time to the version it was built with)")
            continue
        symbol = _VARIANT_PACKAGES.get(normalize_dist(name), normalize_dist(name))
        rule = m.match_requirement(symbol)
        if rule is None:
            continue
        versions = value.value if isinstance(value, yaml.SequenceNode) else [value]
        for item in versions:
            if not isinstance(item, yaml.ScalarNode) or item.value.strip().lower() in _NO_VARIANT:
                continue
            col.add(rule, symbol, item.start_mark.line + 1, item.start_mark.column + 1,
                    item.start_mark.column + 1 + len(item.value),
                    note=f" (a conda-build variant: the package is built for {name} {item.value})")


def analyze_recipe(engine: "StaticEngine", text: str, rel: str) -> FileResult | None:
    """The findings of a recipe or variant file; None when the file is neither (a project's own `meta.yaml`
    config) or is not YAML once its Jinja is blanked: the config reader then reads it."""
    try:
        root = yaml.compose(_yaml_text(text), Loader=yaml.SafeLoader)
    except yaml.YAMLError:
        return None
    col = Collector(engine, rel, text)
    if rel.replace("\\", "/").rsplit("/", 1)[-1].lower() in VARIANT_NAMES:
        _read_variants(col, root)
    elif "package" in yaml_entries(root) and ("requirements" in yaml_entries(root) or "outputs" in yaml_entries(root)):
        _read_recipe(col, root)
    else:
        return None
    return col.done()
