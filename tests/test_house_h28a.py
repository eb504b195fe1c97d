"""House work h28a (no behaviour change): one way to lower a finding (findings.as_info), the per-backend member helpers
in project/hits, and open-ended spans read through auditor/astnodes. Each keeps what the code it replaced did."""
from __future__ import annotations

import ast

from auditor.astnodes import END, lines_span, node_span
from auditor.findings import Finding, as_info
from auditor.project.hits import cuda_member_siblings, lower_cuda_member
from auditor.rules import load_rules
from auditor.static import StaticEngine


def _finding(**kw) -> Finding:
    base = dict(code="NPU003", name="cuda-device-string", category="device", severity="error", effort="auto",
                path="a.py", line=3, col=1, end_line=3, end_col=7, message="`cuda` is CUDA's", substitution=None,
                fix="safe", source="static", symbol="cuda", data={"replace": "npu", "edit": {"text": "npu"}})
    return Finding(**{**base, **kw})


def test_as_info_drops_the_replacement_and_says_why():
    f = as_info(_finding(), "windows-only", "in a Windows branch")
    assert (f.severity, f.fix, f.message) == ("info", "none", "`cuda` is CUDA's (in a Windows branch)")
    assert f.data == {"edit": {"text": "npu"}, "context": "windows-only"}
    assert as_info(_finding(), "fallback-gate", "caught", "warning").severity == "warning"


def test_lower_cuda_member_keeps_info_and_context_findings():
    spans = [(2, 4, "builder-cuda", ["builder-cpu"])]
    kept = _finding(severity="info")
    out = lower_cuda_member([_finding(), kept, _finding(line=9)], spans, "stage")
    assert out[0].data["context"] == "platform-class" and out[0].message.endswith(
        "(in the CUDA stage `builder-cuda` of per-backend stages (builder-cpu beside it): a build for Ascend picks "
        "another member and adds its own)")
    assert out[1] is kept and out[2].severity == "error"
    assert cuda_member_siblings("builder-cuda", ["builder-cuda", "builder-cpu"]) == ["builder-cpu"]


def test_cuda_member_extra_is_info_with_its_sibling(tmp_path):
    text = '[project]\nname = "x"\n[project.optional-dependencies]\ncuda = ["flash-attn"]\nnpu = ["torch-npu"]\n'
    result = StaticEngine(load_rules()).analyze_bytes(text.encode(), "pyproject.toml")
    lowered = [f for f in result.findings if f.data.get("context") == "per-backend-extra"]
    assert lowered and all(f.severity == "info" and f.message.endswith(
        "(in the extra `cuda`, the CUDA member of per-backend extras beside `npu`: an Ascend install picks the other; "
        "left as is)") for f in lowered)


def test_open_ended_spans():
    node = ast.parse("x = a if cuda else b\n").body[0].value
    assert isinstance(node, ast.IfExp)
    assert node_span(node.body, open_end=True) == (1, 4, 1, 5)
    node.body.end_col_offset = None
    assert node_span(node.body, open_end=True) == (1, 4, 1, END) and node_span(node.body) == (1, 4, 1, 4)
    assert lines_span(2, node) == (2, 0, 1, END)
