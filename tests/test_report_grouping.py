"""Reports at scale (issue 11): console and markdown give one entry per file and decision (rule, symbol,
severity) with its count and lines and the advice once; JSON keeps one record per finding; `--full` lists all."""
from __future__ import annotations

import io
import json

from auditor.cli import main
from auditor.findings import Finding
from auditor.report import Report, emit

SRC = "import torch\nx = x.to('cuda')\ny = y.to('cuda')\nz = z.to('cuda')\ntorch.cuda.synchronize()\n"


def _finding(path: str, line: int, col: int, code="NPU003", symbol="cuda") -> Finding:
    return Finding(code=code, name="cuda-device-string", category="device", severity="error", effort="auto",
                   path=path, line=line, col=col, end_line=line, end_col=col + 6,
                   message='device string "cuda" selects a CUDA device', substitution='"npu" / "npu:N"',
                   fix="safe", source="static", symbol=symbol)


def _report(tmp_path, full=False) -> Report:
    for name in ("a.py", "b.py"):
        (tmp_path / name).write_text(SRC)
    findings = [_finding(p, n, 10) for p in ("a.py", "b.py") for n in (2, 3, 4)]
    findings.append(_finding("a.py", 5, 1, code="NPU002", symbol="torch.cuda.synchronize"))
    return Report(root=str(tmp_path), target=None, findings=findings, files_scanned=2, full=full)


def _render(report: Report, fmt: str) -> str:
    out = io.StringIO()
    emit(report, fmt, out, color=False)
    return out.getvalue()


def test_console_groups_one_decision_per_file_with_lines_and_advice_once(tmp_path):
    out = _render(_report(tmp_path), "console")
    assert "Decisions: 2 distinct (rule, symbol)s" in out
    assert "a.py:2:10 (x3: lines 2, 3, 4)  NPU003 [*]  error" in out
    assert "b.py:2:10 (x3: lines 2, 3, 4)  NPU003 [*]  error" in out
    # the advice once per (rule, symbol) in the whole report (both rules here share the text)
    assert out.count('use instead: "npu" / "npu:N"') == 2
    full = _render(_report(tmp_path, full=True), "console")
    assert full.count('use instead: "npu" / "npu:N"') == 7 and "(x3" not in full
    assert len(out) < len(full)


def test_markdown_one_checkbox_per_file_and_decision(tmp_path):
    md = _render(_report(tmp_path), "markdown")
    assert md.count("- [ ] ") == 3                                  # (a, NPU003), (a, NPU002), (b, NPU003)
    assert "- [ ] **error** L2, 3, 4 (3x) `NPU003`" in md
    assert md.index("## Decisions") < md.index("- [ ] ")
    full = _render(_report(tmp_path, full=True), "markdown")
    assert full.count("- [ ] ") == 7


def test_machine_formats_keep_one_record_per_finding(tmp_path):
    report = _report(tmp_path)
    assert len(json.loads(_render(report, "json"))["findings"]) == 7
    assert _render(report, "csv").count("\n") == 8                  # header + 7 rows
    assert len(json.loads(_render(report, "sarif"))["runs"][0]["results"]) == 7
    assert _render(report, "github").count("::error") == 7


def test_full_flag_on_the_cli(tmp_path, capsys):
    (tmp_path / "t.py").write_text(SRC)
    main([str(tmp_path), "--fail-on", "never", "--no-cache"])
    grouped = capsys.readouterr().out
    main([str(tmp_path), "--fail-on", "never", "--no-cache", "--full"])
    full = capsys.readouterr().out
    assert "(x3: lines 2, 3, 4)" in grouped and "(x3" not in full


def test_effort_auto_needs_a_fix_so_the_effort_table_agrees_with_the_fix_count():
    from dataclasses import replace

    from auditor.findings import Finding

    fixable = Finding(code="NPU003", name="cuda-device-string", category="device", severity="error", effort="auto",
                      path="train.py", line=3, col=14, end_line=3, end_col=20, message="`\"cuda\"` ...",
                      substitution='"npu"', fix="safe", source="static", symbol="cuda")
    assert fixable.effort == "auto"
    # the multi-backend context withholds the rewrite (auditor/static/backends.py): a local edit, not `audit fix`'s
    withheld = replace(fixable, severity="info", fix="none")
    assert withheld.effort == "low"
    assert Finding.from_dict(withheld.to_dict()).effort == "low"        # cached findings read back the same
    assert replace(fixable, effort="high", fix="none").effort == "high"  # only `auto` promises a rewrite
