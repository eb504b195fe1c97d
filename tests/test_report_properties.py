"""Properties of the line-oriented formats on arbitrary text: what goes in comes back, one line a finding."""
from __future__ import annotations

import csv
import io
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from auditor.findings import Finding
from auditor.report import FileError, Report, emit

text = st.text(st.characters(blacklist_categories=("Cs",)), max_size=60)
path_part = st.text(st.characters(whitelist_categories=("Ll", "Lu", "Nd"), whitelist_characters="_-,: %"),
                    min_size=1, max_size=12)


@st.composite
def findings(draw) -> Finding:
    line = draw(st.integers(1, 10_000))
    col = draw(st.integers(1, 200))
    return Finding(
        code=f"NPU{draw(st.integers(0, 999)):03d}", name="some-rule",
        category=draw(st.sampled_from(["device", "distributed", "precision", "operator"])),
        severity=draw(st.sampled_from(["error", "warning", "info"])),
        effort=draw(st.sampled_from(["auto", "low", "medium", "high"])),
        path="/".join(draw(st.lists(path_part, min_size=1, max_size=3))) + ".py",
        line=line, col=col, end_line=line + draw(st.integers(0, 3)), end_col=col + draw(st.integers(0, 40)),
        message=draw(text), substitution=draw(st.none() | text.filter(bool)),
        fix=draw(st.sampled_from(["safe", "unsafe", "none"])),
        source=draw(st.sampled_from(["static", "trace"])), symbol=draw(text), fingerprint="0123456789abcdef",
        data=draw(st.dictionaries(st.sampled_from(["calls", "module"]), st.integers(0, 99), max_size=2)))


def report_of(items: list[Finding], root: str) -> Report:
    return Report(root=root, target=None, findings=sorted(items, key=Finding.sort_key),
                  errors=[FileError("x/y.py", "syntax", "bad\nthing, here: yes", line=2)])


def render(report: Report, fmt: str) -> str:
    out = io.StringIO()
    emit(report, fmt, out, color=False)
    return out.getvalue()


def unescape_github(value: str) -> str:
    return (value.replace("%2C", ",").replace("%3A", ":").replace("%0A", "\n").replace("%0D", "\r")
            .replace("%25", "%"))


@pytest.fixture(scope="module")
def root(tmp_path_factory) -> str:
    return str(tmp_path_factory.mktemp("empty_root"))


@settings(max_examples=60, deadline=None)
@given(items=st.lists(findings(), max_size=6))
def test_csv_and_json_round_trip(root, items):
    report = report_of(items, root)
    rows = list(csv.DictReader(io.StringIO(render(report, "csv"))))
    assert [r["message"] for r in rows] == [f.message for f in report.findings]
    assert [r["substitution"] or None for r in rows] == [f.substitution or None for f in report.findings]
    assert [json.loads(r["data"]) if r["data"] else {} for r in rows] == [f.data for f in report.findings]
    doc = json.loads(render(report, "json"))
    assert [Finding.from_dict(d) for d in doc["findings"]] == report.findings


@settings(max_examples=60, deadline=None)
@given(items=st.lists(findings(), max_size=6))
def test_github_and_concise_stay_one_line_a_finding(root, items):
    report = report_of(items, root)
    commands = render(report, "github").split("\n")[:-1]
    assert len(commands) == len(items) + 1
    for command, f in zip(commands, report.findings):
        head, message = command[2:].split("::", 1)
        kind, props = head.split(" ", 1)
        assert kind == {"error": "error", "warning": "warning", "info": "notice"}[f.severity]
        fields = dict(p.split("=", 1) for p in props.split(","))
        assert unescape_github(fields["file"]) == f.path
        assert unescape_github(message).startswith(f.message)
    concise = render(report, "concise").split("\n")[:-1]
    assert len(concise) == len(items) + 2  # findings, the error, the closing line
