"""CUDA-named environment variables the tree's own code reads as a switch (issue 11, tq46a, tuned on heldout53's
Hetu-Galvatron).

NPU004 says a variable "is read by the CUDA stack only". Galvatron's own tensor-parallel layers read
`CUDA_DEVICE_MAX_CONNECTIONS` themselves (`if os.environ.get('CUDA_DEVICE_MAX_CONNECTIONS') == "1":`, Megatron's
convention for overlapping collectives), and that test works as written on Ascend. So where a Python file of the tree
compares the variable's value (`os.environ.get("X") == "1"`, `os.getenv("X") != ...`, `os.environ["X"] in (...)`):
- that read is info (context `own-switch`): the tree's own switch, nothing to port;
- a setting of the same variable elsewhere in the tree (a launch script's `CUDA_DEVICE_MAX_CONNECTIONS=1 torchrun ...`,
  an env dict) is info too when it has no Ascend twin to add (its fix is none): it chooses the tree's own path, and
  CUDA's reading of it is simply ignored on Ascend.
A variable no file of the tree compares keeps its findings, and so does one the rule's table gives an Ascend twin
(`CUDA_VISIBLE_DEVICES` -> ASCEND_RT_VISIBLE_DEVICES: CANN reads the twin, so the tree's own test of the CUDA name
decides wrongly there). Applied once per run, after the per-file passes.
"""
from __future__ import annotations

import re
from collections.abc import Sequence
from functools import partial
from pathlib import Path

from auditor.discover import MAX_FILE_BYTES
from auditor.findings import Finding, lower_findings
from auditor.source import SourceError
from auditor.static.project_imports import kept_fact, read_counted

_READ = r"""(?:os\.)?(?:environ\.get|getenv)\(\s*['"]{0}['"][^()]*\)|(?:os\.)?environ\[\s*['"]{0}['"]\s*\]"""
_OPS = r"(?:==|!=|\bnot\s+in\b|\bin\b)"
_READ_NOTE = "the tree's own code compares it here: a switch of the tree's own, which works as written on Ascend; " \
             "nothing to port"
# the comparisons found in a file, kept in its summary (saved with the cache): a warm run reads no Python file
SUMMARY_KEY = "env_compares"
_SET_NOTE = "the tree's own code reads it as a switch ({where}): setting it chooses the tree's own path; CUDA's " \
            "reading of it is ignored on Ascend"


def _compares(line: str, name: str) -> bool:
    read = _READ.format(re.escape(name))
    return bool(re.search(f"(?:{read})\\s*{_OPS}|{_OPS}\\s*(?:{read})", line))


def with_ascend_twin() -> frozenset[str]:
    """The NPU004 variables the rule's table gives an Ascend counterpart (`CUDA_VISIBLE_DEVICES` ->
    ASCEND_RT_VISIBLE_DEVICES): CANN reads the twin, so the tree's own test of the CUDA name decides wrongly there."""
    from auditor.rules import load_rules

    symbols = next((r.symbols for r in load_rules() if r.code == "NPU004"), None) or {}
    return frozenset(name for name, detail in symbols.items() if getattr(detail, "replace", None))


def _compared_lines(project, path: Path, hits: list) -> list[list]:
    """[line, variable] of the NPU004 hits whose line compares the variable's value (read once per file)."""
    try:
        lines = read_counted(project, path, MAX_FILE_BYTES).decode("utf-8", "replace").splitlines()
    except (OSError, SourceError):
        return []
    return [[f.line, f.symbol] for f in hits if 0 < f.line <= len(lines) and _compares(lines[f.line - 1], f.symbol)]


def apply_own_env_switches(results: list, files: Sequence[tuple[Path, str]], project=None) -> int:
    """Lower NPU004 on variables the tree's own Python compares; returns how many findings changed."""
    if not any(f.code == "NPU004" and f.severity != "info" for r in results if r.path.endswith(".py")
               for f in r.findings):
        return 0
    where = {rel: path for path, rel in files}
    twinned = with_ascend_twin()
    switches: dict[str, str] = {}       # variable -> `rel:line` of the first comparison
    reads: dict[str, set[int]] = {}
    changed_summaries = project.changed if project is not None else set()
    for result in results:
        hits = [f for f in result.findings if f.code == "NPU004" and f.severity != "info" and f.symbol
                and f.symbol not in twinned]
        if not hits or not result.path.endswith(".py") or result.path not in where:
            continue
        compared = kept_fact(result.summary, SUMMARY_KEY, lambda held: isinstance(held, list),
                             lambda: _compared_lines(project, where[result.path], hits), changed_summaries,
                             result.path)
        for line, symbol in compared:
            switches.setdefault(symbol, f"{result.path}:{line}")
            reads.setdefault(result.path, set()).add(line)
    if not switches:
        return 0
    def why(read: set[int], f: Finding) -> tuple[str, str] | None:
        if f.code != "NPU004" or f.severity == "info" or f.symbol not in switches:
            return None
        if f.line in read:
            return "own-switch", _READ_NOTE
        return ("own-switch", _SET_NOTE.format(where=switches[f.symbol])) if f.fix == "none" else None
    return sum(lower_findings(result, partial(why, reads.get(result.path, set()))) for result in results)
