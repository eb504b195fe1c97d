"""The packages a MONAI bundle's `configs/metadata.json` declares (tp48b, project test134: VISTA's vista2d bundle).

The MONAI Bundle specification (docs.monai.io, "MONAI Bundle Specification") gives `metadata.json` the versions the
bundle was made with: `monai_version`, `pytorch_version`, `numpy_version`, and `optional_packages_version` /
`required_packages_version`, mappings of package names to versions, which the MONAI model zoo's CI installs beside
MONAI (`pip install name==version`). Each is read here as that requirement, on the line of its entry."""
from __future__ import annotations

import yaml

from auditor.project.hits import Collector, matchers
from auditor.project.requirements import requirement_hits, yaml_entries

# the spec's package mappings, and its single versions with the package each names
_PACKAGE_MAPS = ("optional_packages_version", "required_packages_version")
_VERSION_KEYS = {"pytorch_version": "torch", "numpy_version": "numpy"}


def bundle_packages(col: Collector, roots: list) -> None:
    """A metadata document (a mapping with `monai_version`): its declared packages as requirements."""
    m = matchers(col.engine)
    for root in roots:
        entries = yaml_entries(root) if isinstance(root, yaml.MappingNode) else {}
        if not isinstance(entries.get("monai_version"), yaml.ScalarNode):
            continue
        pins = [(package, entries.get(key)) for key, package in _VERSION_KEYS.items()]
        for key in _PACKAGE_MAPS:
            table = entries.get(key)
            if isinstance(table, yaml.MappingNode):
                pins += [(str(name.value), value) for name, value in table.value if isinstance(name, yaml.ScalarNode)]
        for package, value in pins:
            if not isinstance(value, yaml.ScalarNode):
                continue
            line = value.start_mark.line + 1
            for symbol, _, rule, note in requirement_hits(m, f"{package}=={value.value}"):
                col.add(rule, symbol, line, value.start_mark.column + 1, value.end_mark.column + 1, note=note)
