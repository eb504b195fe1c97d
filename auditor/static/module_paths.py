"""Module names of a tree's files and the absolute names their imports mean: the one place the tree passes
(crossfile, ported, shim_graph, device_shims, imported_gates, other_npu, platform_predicates, valueflow,
guarded_modules) turn a file path into a dotted name and a relative import into an absolute one."""
from __future__ import annotations

from collections.abc import Sequence


def module_names(rels: Sequence[str]) -> dict[str, str]:
    """rel path of each .py file -> its dotted module name (packages are folders with `__init__.py`; a file outside
    any package is named by its stem, as a script's sibling imports see it)."""
    present = set(rels)
    out: dict[str, str] = {}
    for rel in rels:
        if not rel.endswith(".py"):
            continue
        parts = rel.split("/")
        names = [] if parts[-1] == "__init__.py" else [parts[-1][:-3]]
        i = len(parts) - 1
        while i > 0 and "/".join(parts[:i] + ["__init__.py"]) in present:
            names.insert(0, parts[i - 1])
            i -= 1
        if names:
            out[rel] = ".".join(names)
    seen: dict[str, int] = {}
    for name in out.values():
        seen[name] = seen.get(name, 0) + 1
    # two files outside any package with one stem (`a/utils.py`, `b/utils.py`): which one an import means is unknown
    return {rel: name for rel, name in out.items() if seen[name] == 1}


def absolute_module(module: str, level: int, importer: str, is_package: bool) -> str:
    """The absolute name `from <level dots><module> import ...` means in the module `importer` (a package's
    `__init__` when `is_package`); `module` has no leading dots. Past the top package (an ImportError in Python)
    nothing of the importer's name is kept."""
    if level <= 0:
        return module
    base = importer.split(".") if is_package else importer.split(".")[:-1]
    if level > 1:
        base = base[:len(base) - (level - 1)] if level - 1 <= len(base) else []
    return ".".join([*base, module] if module else base)


def absolute_dotted(spelled: str, importer: str, is_package: bool) -> str:
    """`absolute_module` for an import spelled with its dots (`..utils`, `pkg.mod`)."""
    dotted = spelled.lstrip(".")
    return absolute_module(dotted, len(spelled) - len(dotted), importer, is_package)
