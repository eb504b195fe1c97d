"""Notes about a dependency that has an Ascend backend of its own (t14c): NPU418 says that DeepSpeed runs on Ascend
only through its NPU accelerator. In a tree that already has an NPU path (align-anything's `utils/device_utils.py`
through transformers' `is_torch_npu_available`, DiffSynth-Studio's `core/npu_patch/`), the project runs on Ascend and
DeepSpeed picks its NPU accelerator there: the note is nothing to act on, so it is dropped.

tk42 scoped the drop to the code that the NPU path covers: a file in the folder of a module that imports torch_npu
(or below it), or a file that reaches such a module through the tree's own imports (a trainer importing
`utils.device_utils`, directly or through a package's `__init__.py`). FasterCache (test99) imports torch_npu only in
`fastercache/models/vchitect/attention.py`, a copy of diffusers' attention processors that its CogVideoX scripts never
import: those scripts' DeepSpeed notes stay."""
from __future__ import annotations

from collections.abc import Iterable

from auditor.static.module_paths import absolute_module, module_names

# rules whose findings are only worth knowing in a tree that does not run on Ascend yet
PORTED_QUIET = frozenset({"deepspeed-dependency"})
_ASCEND_MODULES = frozenset({"torch_npu", "mindspeed", "deepspeed_npu"})
# the NPU checks of transformers / accelerate: code that has an NPU path (align-anything's `utils/device_utils.py`)
_ASCEND_CHECKS = frozenset({"is_torch_npu_available", "is_npu_available"})


def imports_ascend(summary: dict | None) -> bool:
    """Whether a file's cross-file summary (auditor/static/crossfile.py `summarize`) lists an import of torch_npu
    (or MindSpeed), or of transformers' / accelerate's NPU check."""
    for _line, _level, module, pairs in (summary or {}).get("imports", ()):
        names = [module] if module else [name for name, _ in pairs]
        if any(name.split(".", 1)[0] in _ASCEND_MODULES for name in names if name):
            return True
        if module and any(name in _ASCEND_CHECKS for name, _ in pairs):
            return True
    return False


def _imported_files(summary: dict | None, rel: str, me: str | None, file_of: dict[str, str]) -> set[str]:
    """The tree's files that a file's imports load: the module named, each package above it (its `__init__.py`
    runs first) and, for `from package import name`, the submodule `name`."""
    out: set[str] = set()
    for _line, level, module, pairs in (summary or {}).get("imports", ()):
        if level > 0 and not me:
            continue
        if level < 0:           # `import a.b.c`
            wanted = [name for name, _ in pairs]
        else:
            base = absolute_module(module, level, me or "", rel.endswith("__init__.py"))
            wanted = [base] + [f"{base}.{name}" if base else name for name, _ in pairs]
        for name in wanted:
            parts = name.split(".")
            for i in range(1, len(parts) + 1):
                target = file_of.get(".".join(parts[:i]))
                if target is not None and target != rel:
                    out.add(target)
    return out


def ascend_covered(results: Iterable) -> set[str]:
    """The files an NPU path of the tree covers: the importers of torch_npu (or an NPU check), the files in their
    folders and below, and the files that reach one of them through the tree's imports."""
    results = list(results)
    ascend = [r.path for r in results if imports_ascend(getattr(r, "summary", None))]
    if not ascend:
        return set()
    folders = {path.rsplit("/", 1)[0] + "/" if "/" in path else "" for path in ascend}
    covered = {r.path for r in results if any(r.path.startswith(folder) for folder in folders)}
    modules = module_names([r.path for r in results])
    file_of = {name: rel for rel, name in modules.items()}
    importers: dict[str, set[str]] = {}
    for r in results:
        for target in _imported_files(getattr(r, "summary", None), r.path, modules.get(r.path), file_of):
            importers.setdefault(target, set()).add(r.path)
    todo = list(covered)
    while todo:
        for importer in importers.get(todo.pop(), ()):
            if importer not in covered:
                covered.add(importer)
                todo.append(importer)
    return covered


def drop_notes_in_ascend_tree(results: Iterable) -> int:
    """Remove PORTED_QUIET findings from the files an NPU path of the tree covers (`ascend_covered`); returns how
    many."""
    results = list(results)
    if not any(f.name in PORTED_QUIET for r in results for f in r.findings):
        return 0
    covered = ascend_covered(results)
    dropped = 0
    for result in results:
        if result.path not in covered:
            continue
        kept = [f for f in result.findings if f.name not in PORTED_QUIET]
        dropped += len(result.findings) - len(kept)
        result.findings = kept
    return dropped
