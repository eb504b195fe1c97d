"""The strict rule schema: a mistyped key at any level of a rule file is reported with its file and line."""
from __future__ import annotations

import shutil
import textwrap

import pytest

from auditor.cli import main
from auditor.data import rules_dir
from auditor.rules import check_rule_files, load_rules_from

RULE = textwrap.dedent("""\
    family: demo
    rules:
      - code: NPU099
        name: demo-rule
        category: device
        severity: {default: warning, 910a: error}
        effort: low
        fix: none
        message: "`{symbol}` is a demo"
        substitution: "something else"
        match:
          - qualname: [torch.cuda.demo]
        when:
          arg: {pos: 0, kw: x, values: [1]}
        symbols:
          torch.cuda.demo: {substitution: "torch.npu.demo"}
        extra: {stack: true}
        doc:
          what: What it finds.
          why: Why.
          use_instead: Something else.
        examples:
          flag:
            - |
              torch.cuda.demo(1)
          ok:
            - |
              torch.npu.demo(1)
    """)


def problems(tmp_path, text: str) -> list[str]:
    (tmp_path / "demo.yaml").write_text(text)
    return check_rule_files(tmp_path)


def test_a_valid_file_has_no_problems(tmp_path):
    assert problems(tmp_path, RULE) == []
    (rule,) = load_rules_from(tmp_path)
    assert rule.status == "stable" and rule.default_on


@pytest.mark.parametrize("old,new,line,key", [
    ("    effort: low\n", "    efort: low\n", 7, "efort"),                                        # rule level
    ("arg: {pos: 0, kw: x, values: [1]}", "arg: {pos: 0, kw: x, vals: [1]}", 14, "vals"),          # when.arg
    ("  when:\n", "  whne:\n", 13, "whne"),
    ("extra: {stack: true}", "extra: {stak: true}", 17, "stak"),                                   # extra
    ("      why: Why.\n", "      whyy: Why.\n", 20, "whyy"),                                      # doc
    ("{substitution: \"torch.npu.demo\"}", "{substitute: \"torch.npu.demo\"}", 16, "substitute"),  # symbol entry
    ("      flag:\n", "      flags:\n", 23, "flags"),                                          # examples
])
def test_a_mistyped_key_at_any_level_is_reported_with_file_and_line(tmp_path, old, new, line, key):
    assert old in RULE
    found = problems(tmp_path, RULE.replace(old, new, 1))
    assert found and found[0].startswith(f"demo.yaml:{line}:"), found
    assert key in found[0]


def test_bad_values_are_reported(tmp_path):
    found = problems(tmp_path, RULE.replace("910a: error", "910a: errror"))
    assert found and found[0].startswith("demo.yaml:6:") and "errror" in found[0]
    found = problems(tmp_path, RULE.replace("910a: error", "a4: error"))      # not a product
    assert found and "a4" in found[0]
    found = problems(tmp_path, RULE.replace("qualname:", "qualnam:"))
    assert found and found[0].startswith("demo.yaml:12:") and "qualnam" in found[0]


def test_a_key_given_twice_is_reported_where_the_loader_would_keep_only_the_last(tmp_path):
    found = problems(tmp_path, RULE.replace("    effort: low\n", "    effort: low\n    effort: high\n"))
    assert found and found[0].startswith("demo.yaml:8: duplicate key 'effort' (first at line 7)"), found
    # the severity policy is data too: a rule's clause written twice hides the first one
    (tmp_path / "demo.yaml").write_text(RULE)
    (tmp_path / "severity_policy.yaml").write_text(
        "clauses:\n  fails: Fails as written.\npolicy:\n  NPU999: fails\n  NPU998: fails\n  NPU999: slower\n")
    assert check_rule_files(tmp_path) == ["severity_policy.yaml:6: duplicate key 'NPU999' (first at line 4)"]


def test_status_preview_is_off_by_default_and_removed_is_not_loaded(tmp_path):
    problems(tmp_path, RULE.replace("    effort: low\n", "    effort: low\n    status: preview\n"))
    (rule,) = load_rules_from(tmp_path)
    assert rule.status == "preview" and not rule.default_on
    problems(tmp_path, RULE.replace("    effort: low\n", "    effort: low\n    status: removed\n"))
    assert load_rules_from(tmp_path) == ()


def test_the_shipped_catalogue_passes_and_the_cli_says_so(tmp_path, capsys):
    assert check_rule_files() == []
    assert main(["rules", "--check"]) == 0
    assert "0 problems" in capsys.readouterr().err


def test_the_cli_fails_on_a_broken_catalogue(tmp_path, capsys, monkeypatch):
    broken = tmp_path / "rules"
    shutil.copytree(rules_dir(), broken)
    text = (broken / "device.yaml").read_text()
    (broken / "device.yaml").write_text(text.replace("    effort:", "    efort:", 1))
    import auditor.rules as rules_module

    monkeypatch.setattr(rules_module, "rules_dir", lambda: broken)
    assert main(["rules", "--check"]) == 1
    out = capsys.readouterr().out
    assert out.startswith("device.yaml:") and "efort" in out
