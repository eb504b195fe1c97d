"""Notes about a dependency that has an Ascend backend of its own (t14c): NPU418 says that DeepSpeed runs on Ascend
only through its NPU accelerator. In a tree that already has an NPU path somewhere (align-anything's
`utils/device_utils.py` through transformers' `is_torch_npu_available`, DiffSynth-Studio's `core/npu_patch/`), the
project runs on Ascend and DeepSpeed picks its NPU accelerator there: the note is nothing to act on, so it is dropped
from every file of that tree."""
from __future__ import annotations

from collections.abc import Iterable

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


def drop_notes_in_ascend_tree(results: Iterable) -> int:
    """Remove PORTED_QUIET findings when any audited file imports torch_npu; returns how many."""
    results = list(results)
    if not any(imports_ascend(getattr(r, "summary", None)) for r in results):
        return 0
    dropped = 0
    for result in results:
        kept = [f for f in result.findings if f.name not in PORTED_QUIET]
        dropped += len(result.findings) - len(kept)
        result.findings = kept
    return dropped
