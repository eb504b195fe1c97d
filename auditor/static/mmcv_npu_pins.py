"""mmcv's ops built for the NPU read against the mmcv release the tree pins (tk39, issue 14; TUNED on test82's
BEVFormer family, session 38's leftover).

NPU853 / NPU854 (rules/kernel_mmcv_npu_ops.yaml) report calls of mmcv's compiled ops that mmcv implements for the NPU:
they run on Ascend with an mmcv built with its NPU ops, which Ascend's PyTorch migration guide ("MMCV",
https://hiascend.com/doc_center/source/zh/canncommercial/700/modeldevpt/ptmigr/AImpug_000123.html) asks to be mmcv
>= 1.7.0. In a tree audit the requirement files say which mmcv the code installs (their pins, kept by the requirement
readers with `packaging`: requirements.PINS_KEY): a pin that allows only releases older than 1.7.0
(BEVFormer's / TPVFormer's `mmcv_full==1.4.0`) has no NPU build of the op, so the call fails on Ascend as pinned and
the finding becomes an error that names the pin; a tree that names no mmcv version leaves the finding info and says
so ("unverified"); a pin that allows 1.7.0 or later leaves it as it is.
"""
from __future__ import annotations

import re
from dataclasses import replace

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import Version

from auditor.project.requirements import tree_pins

RULES = frozenset({"mmcv-npu-built-op", "mmcv-load-npu-built-op"})
DISTRIBUTIONS = ("mmcv", "mmcv-full")
FIRST_NPU_RELEASE = Version("1.7.0")
# releases that allow the NPU build when a specifier admits one of them (the first, the last 1.x, 2.x)
_NPU_RELEASES = (FIRST_NPU_RELEASE, Version("1.7.2"), Version("2.0.0"), Version("2.2.0"), Version("99"))
_METADATA = re.compile(r"(^|/)(requirements[^/]*\.txt|requirement\.txt|pyproject\.toml|setup\.py|setup\.cfg"
                       r"|environment[^/]*\.ya?ml)$")


def mmcv_pins(results: list) -> list[str] | None:
    """The specifiers the tree's metadata files give mmcv / mmcv-full ('' for an unpinned requirement); None when no
    metadata file requires either."""
    found = tree_pins(results, DISTRIBUTIONS, _METADATA)
    return None if found is None else [f"{name}{spec}" if spec else name for name, spec in found]


def predates_npu_ops(pins: list[str]) -> bool:
    """Whether every pinned requirement allows only releases older than mmcv's NPU ops."""
    specs = []
    for pin in pins:
        spec = pin.split("mmcv-full", 1)[-1] if pin.startswith("mmcv-full") else pin[len("mmcv"):]
        if not spec:
            return False
        try:
            specs.append(SpecifierSet(spec))
        except InvalidSpecifier:
            return False
    return bool(specs) and not any(s.contains(v) for s in specs for v in _NPU_RELEASES)


def apply_mmcv_npu_pins(results: list) -> int:
    """NPU853 / NPU854 findings read against the tree's mmcv pin (module docstring); returns how many changed."""
    if not any(f.name in RULES for r in results for f in r.findings):
        return 0
    pins = mmcv_pins(results)
    if pins and predates_npu_ops(pins):
        shown = ", ".join(sorted(set(pins)))
        severity, note = "error", (f"the tree pins {shown}, which predates mmcv's NPU ops ({FIRST_NPU_RELEASE}): "
                                   "as pinned the op has no NPU build and fails on Ascend")
    elif not pins:
        severity, note = None, "unverified: no requirement file of the audit pins an mmcv release"
    else:
        return 0
    changed = 0
    for r in results:
        out = []
        for f in r.findings:
            if f.name in RULES:
                f = replace(f, severity=severity or f.severity, message=f"{f.message} ({note})",
                            data={**f.data, "mmcv_pin": pins or []})
                changed += 1
            out.append(f)
        r.findings = out
    return changed


__all__ = ["apply_mmcv_npu_pins", "mmcv_pins", "predates_npu_ops"]
