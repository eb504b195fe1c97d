"""Liger-Kernel dispatches to its own Ascend backend (pd33, issue 11; TUNED on heldout29's twinkle).

Liger-Kernel's `liger_kernel/ops/__init__.py` (`_replace_with_vendor_ops`, from release 0.6.5 on) detects the device
on import (`infer_device()`) and, on an npu, replaces its ops with those of `liger_kernel/ops/backends/_ascend/ops/`
(linkedin/Liger-Kernel: rope and swiglu from 0.6.5, rms_norm from 0.7.0, cross_entropy, fused_linear_cross_entropy
and layer_norm from 0.8.0); the ops without an Ascend version run Liger's Triton code through triton-ascend. So a
tree that installs Liger-Kernel unpinned or at >= 0.8.0 gets the Ascend path: its NPU404 findings are info (worth
re-validating, per op unverified). A pin that allows only older releases keeps the warning.
"""
from __future__ import annotations

import re

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import Version

from auditor.project.requirements import tree_pins
from auditor.static.backends import discount_findings

RULE = "liger-kernel"
FIRST_FULL_ASCEND = Version("0.8.0")     # the release whose Ascend backend covers the losses and norms too
_METADATA = re.compile(r"(^|/)(requirements[^/]*\.txt|pyproject\.toml|setup\.py|setup\.cfg|environment[^/]*\.ya?ml)$")
_NOTE = ("Liger-Kernel swaps in its Ascend backend on an npu device (liger_kernel/ops/__init__.py "
         "_replace_with_vendor_ops; ops/backends/_ascend: rope, swiglu from 0.6.5, rms_norm from 0.7.0, cross_entropy, "
         "fused_linear_cross_entropy, layer_norm from 0.8.0; other ops run its Triton through triton-ascend, "
         "unverified per op): re-validate on the NPU")


def _pins(results: list) -> list[str] | None:
    """The version specifiers the tree's metadata files give Liger-Kernel ('' for an unpinned requirement), as the
    requirement readers kept them in each file's summary (requirements.PINS_KEY, parsed with `packaging`; cached);
    None when no metadata file requires it."""
    found = tree_pins(results, (RULE,), _METADATA)
    return None if found is None else [spec for _, spec in found]


def has_ascend_path(pins: list[str] | None) -> bool:
    """Unpinned (or not named: the latest release installs) or every pin allows a release with the full backend."""
    for spec in pins or []:
        if not spec:
            continue
        try:
            allowed = SpecifierSet(spec)
        except InvalidSpecifier:
            return False
        if not any(allowed.contains(v) for v in (FIRST_FULL_ASCEND, Version("0.8.2"), Version("99"))):
            return False
    return True


def apply_liger_ascend(results: list) -> int:
    """NPU404 findings to info where the tree's Liger-Kernel has the Ascend backend; returns how many changed."""
    if not any(f.name == RULE and f.severity != "info" for r in results for f in r.findings):
        return 0
    if not has_ascend_path(_pins(results)):
        return 0
    changed = 0
    for r in results:
        if any(f.name == RULE for f in r.findings):
            changed += discount_findings(r, "liger-ascend", _NOTE,
                                         lower=lambda f: f.name == RULE and f.severity != "info")
    return changed


__all__ = ["apply_liger_ascend", "has_ascend_path"]
