"""Reduce-op facts read from torch_npu's public source, per torch_npu line (one branch of Ascend/pytorch each).

The support lists mark the `torch.distributed.ReduceOp` class, never its members, and the released wheels
are compiled; what each member does on HCCL is stated by `getHcclReduceOp` in
`torch_npu/csrc/distributed/ProcessGroupHCCL.cpp` of https://github.com/Ascend/pytorch:
- `hcclOp`: the members mapped to a native HCCL reduction (SUM, PRODUCT, MIN, MAX);
- `unsupportedOp`: the members that raise `Cannot use ReduceOp.<op> with HCCL`;
- an `if (reduceOp == c10d::ReduceOp::X ...)` branch that returns HCCL_REDUCE_SUM: emulated (the collective
  runs a SUM and torch_npu divides or pre-multiplies around it);
- any other member: `Unhandled ReduceOp` (raises);
and `ProcessGroupHCCL::recvAnysource` (a receive without a source rank) raises or not.

    python op_tables/inputs.py extract-source --repo GITDIR   # a clone of github.com/Ascend/pytorch

The branch heads are read (git show BRANCH:FILE), not release tags: a released wheel of a line can be
older than its branch head; the coverage build says so beside every answer.
"""
from __future__ import annotations

import re
import subprocess
from pathlib import Path

REPO_URL = "https://github.com/Ascend/pytorch"
SOURCE_FILE = "torch_npu/csrc/distributed/ProcessGroupHCCL.cpp"
# the Ascend/pytorch branch each torch_npu line is developed on (master builds 2.13.0, 2.14.0 and 2.15.0,
# per its version.txt)
BRANCH_FOR_LINE = {"v2.1": "v2.1.0", "v2.2": "v2.2.0", "v2.3": "v2.3.1", "v2.4": "v2.4.0", "v2.5": "v2.5.1",
                   "v2.6": "v2.6.0", "v2.7": "v2.7.1", "v2.8": "v2.8.0", "v2.9": "v2.9.0", "v2.10": "v2.10.0",
                   "v2.11": "v2.11.0", "v2.12": "v2.12.0", "v2.13": "master", "v2.14": "master", "v2.15": "master"}
MEMBERS = ("SUM", "PRODUCT", "MIN", "MAX", "BAND", "BOR", "BXOR", "AVG", "PREMUL_SUM")
_MAP = r"std::map<c10d::ReduceOp,\s*{value}>\s*{name}\s*=\s*\{{(.*?)\}};"
_MEMBER = re.compile(r"c10d::ReduceOp::([A-Z_]+)")
_BRANCH_IF = re.compile(r"if \(((?:\s*(?:\|\|)?\s*reduceOp == c10d::ReduceOp::[A-Z_]+)+)\s*\)\s*\{")


def _line_of(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def _map_members(text: str, name: str, value: str) -> dict[str, int]:
    m = re.search(_MAP.format(name=name, value=value), text, re.S)
    if m is None:
        return {}
    return {k.group(1): _line_of(text, m.start(1) + k.start()) for k in _MEMBER.finditer(m.group(1))}


def reduce_op_facts(text: str) -> dict:
    """{member: {"status": native | raises | emulated | unhandled, "line": N}} from one ProcessGroupHCCL.cpp."""
    start = text.find("HcclReduceOp getHcclReduceOp(")
    if start < 0:
        raise ValueError(f"{SOURCE_FILE}: getHcclReduceOp not found")
    end = text.find("\n}\n", start)
    body = text[start:end]
    native = _map_members(text, "hcclOp", "HcclReduceOp")
    raises = _map_members(text, "unsupportedOp", "std::string")
    emulated: dict[str, int] = {}
    for m in _BRANCH_IF.finditer(body):
        block = body[m.end():body.find("\n    }", m.end())]
        if "return HCCL_REDUCE_SUM" in block:
            for k in _MEMBER.finditer(m.group(1)):
                emulated[k.group(1)] = _line_of(text, start + m.start())
    if not native:
        raise ValueError(f"{SOURCE_FILE}: the hcclOp map was not found")
    facts = {}
    for member in MEMBERS:
        for status, found in (("emulated", emulated), ("raises", raises), ("native", native)):
            if member in found:
                facts[member] = {"status": status, "line": found[member]}
                break
        else:
            facts[member] = {"status": "unhandled", "line": _line_of(text, start)}
    return facts


def recv_anysource_fact(text: str) -> dict:
    """Whether ProcessGroupHCCL::recvAnysource (dist.recv / irecv without src) raises, and where."""
    start = text.find("ProcessGroupHCCL::recvAnysource(")
    if start < 0:
        return {"raises": None, "line": None}
    body = text[start:text.find("\n}", start)]
    return {"raises": "TORCH_CHECK(false" in body, "line": _line_of(text, start)}


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True).stdout


def extract(repo: Path) -> dict:
    """The per-line facts of a local clone of Ascend/pytorch (its branches must be present)."""
    by_line = {}
    for line, branch in BRANCH_FOR_LINE.items():
        commit = _git(repo, "rev-parse", f"{branch}^{{commit}}").strip()
        text = _git(repo, "show", f"{commit}:{SOURCE_FILE}")
        by_line[line] = {"branch": branch, "commit": commit, "reduce_ops": reduce_op_facts(text),
                         "recv_anysource": recv_anysource_fact(text)}
    return {"schema": 1, "repo": REPO_URL, "file": SOURCE_FILE, "by_line": by_line}
