"""Spack configuration files (tp48a, issue 15; project test132's HPC stacks): the specs an environment or a config
scope asks Spack to build, read for the parts that make a CUDA build or pick NVIDIA's compilers.

Spack's spec syntax (Spack docs, "Specs & dependencies"): `name@version +variant ~variant name=value %compiler@version
^dependency ...`; `+v` / `++v` turns a boolean variant on, `~v` / `-v` off. Every package built with Spack's
`CudaPackage` mixin (lib/spack/spack/build_systems/cuda.py) has the boolean variant `cuda` ("Build with CUDA") and the
multi-valued `cuda_arch` (the NVIDIA GPU architectures to compile for), so `+cuda` / `cuda=True` / `cuda_arch=80` ask
for a CUDA build whatever the package. `nvhpc` is Spack's package of the NVIDIA HPC SDK (its nvc / nvc++ / nvfortran
compilers); `%nvhpc` compiles a spec with them, and a compilers.yaml entry `spec: nvhpc@23.9` declares them.

Where specs are written (Spack docs, "Environments", "Package Settings", "Compiler configuration"):
- an environment's `spack: specs:` (also inside `matrix:` rows) and the named lists of `definitions:`;
- a packages scope's `packages: <name>: variants:` (variants alone, for that package or `all`), `require:` (strings,
  `- spec:` items, `one_of:` / `any_of:` lists), `prefer:`, `externals: - spec:`, and `all: compiler:`;
- a compilers scope's `compilers: - compiler: spec:`.
A file included by an environment holds the same sections at its top level (`definitions:`, `packages:`).
"""
from __future__ import annotations

import re
from typing import Iterator

import yaml

from auditor.project.requirements import yaml_entries

# the keys of a packages-scope entry that only Spack's packages.yaml uses (a `packages:` list of another tool has none)
_PACKAGE_KEYS = frozenset({"variants", "require", "externals", "buildable", "providers", "prefer"})
# a CUDA build: the variant turned on (`+cuda`, `++cuda`, `cuda=True`) or the architectures asked for (`cuda_arch=80`),
# one finding a spec (`+cuda cuda_arch=80` is one choice); NVIDIA's compilers: `%nvhpc@22.5`, a spec of the `nvhpc`
# package. A spec's `~cuda` is off, and so is `cuda_arch=none` (CudaPackage's default, "no architecture"); a variant
# may follow the name or version directly (`kokkos@3.7+cuda`).
_SPEC_PARTS = (
    re.compile(r"(?<!\+)\+\+?cuda(?![\w-])|(?<![\w-])cuda==?(?:true|True|TRUE)(?![\w-])"
               r"|(?<![\w-])cuda_arch==?(?!none(?![\w,]))[\w,]+"),
    re.compile(r"(?<![\w-])%nvhpc(?![\w-])(?:@[\w.:-]*)?|(?<![\w%^-])nvhpc(?![\w-])(?:@[\w.:-]*)?"),
)

# the variant turned off (`~cuda`, `-cuda`, `cuda=False`): an architecture beside it builds nothing for a GPU
_CUDA_OFF = re.compile(r"~cuda(?![\w-])|(?<!\S)-cuda(?![\w-])|(?<![\w-])cuda==?(?:false|False|FALSE)(?![\w-])")


def spack_sections(root) -> dict:
    """The Spack sections of a YAML document: an environment's `spack:` mapping, or a config scope's own top-level
    `packages:` / `compilers:` / `definitions:` when they have Spack's shape; {} for other files."""
    entries = yaml_entries(root)
    spack = yaml_entries(entries.get("spack"))
    if spack:
        return spack
    found = {}
    packages = yaml_entries(entries.get("packages"))
    if any(set(yaml_entries(v)) & _PACKAGE_KEYS for v in packages.values()):
        found["packages"] = entries["packages"]
    compilers = entries.get("compilers")
    if isinstance(compilers, yaml.SequenceNode) and compilers.value and all(
            "spec" in yaml_entries(yaml_entries(item).get("compiler")) for item in compilers.value):
        found["compilers"] = compilers
    definitions = entries.get("definitions")
    if isinstance(definitions, yaml.SequenceNode) and definitions.value and all(
            isinstance(item, yaml.MappingNode) and all(isinstance(v, yaml.SequenceNode) or str(k.value) == "when"
                                                       for k, v in item.value) for item in definitions.value):
        found["definitions"] = definitions
    return found


def _strings(node) -> Iterator[yaml.ScalarNode]:
    """Every string scalar under node (lists of lists for `matrix:`, `one_of:` / `any_of:` / `spec:` of a require)."""
    if isinstance(node, yaml.ScalarNode):
        if isinstance(node.value, str) and node.value:
            yield node
    elif isinstance(node, yaml.SequenceNode):
        for item in node.value:
            yield from _strings(item)
    elif isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            if str(key.value) in ("spec", "one_of", "any_of", "matrix", "exclude") or key is value:
                yield from _strings(value)


def spec_scalars(sections: dict) -> Iterator[yaml.ScalarNode]:
    """The scalars of `sections` (spack_sections) that hold a spec or a package's variants."""
    yield from _strings(sections.get("specs"))
    for item in getattr(sections.get("definitions"), "value", []):
        for key, value in getattr(item, "value", []):
            if str(key.value) != "when":
                yield from _strings(value)
    for settings in yaml_entries(sections.get("packages")).values():
        entries = yaml_entries(settings)
        for key in ("variants", "require", "prefer", "compiler"):
            yield from _strings(entries.get(key))
        for external in getattr(entries.get("externals"), "value", []):
            yield from _strings(yaml_entries(external).get("spec"))
    for item in getattr(sections.get("compilers"), "value", []):
        yield from _strings(yaml_entries(yaml_entries(item).get("compiler")).get("spec"))


def spec_parts(text: str) -> Iterator[tuple[int, str]]:
    """(offset, symbol) of the first CUDA variant or architecture, and of the NVIDIA compiler, a spec names."""
    off = _CUDA_OFF.search(text) is not None
    for regex in _SPEC_PARTS:
        m = next((m for m in regex.finditer(text) if not (off and m.group(0).startswith("cuda_arch"))), None)
        if m is not None:
            yield m.start(), m.group(0)


def scan_spack_specs(col, m, roots: list) -> None:
    """Findings of the specs in a Spack environment or config scope (requirement rules `spack:<part>`)."""
    for root in roots:
        sections = spack_sections(root)
        if not sections:
            continue
        for value in spec_scalars(sections):
            line, c = value.start_mark.line + 1, value.start_mark.column + 1
            if value.start_mark.line != value.end_mark.line or line > len(col.lines):
                continue
            c += col.lines[line - 1][c - 1:c] in ("'", '"')
            for offset, symbol in spec_parts(str(value.value)):
                col.add(m.match_requirement(f"spack:{symbol}"), symbol, line, c + offset, c + offset + len(symbol))
