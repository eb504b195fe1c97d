"""Fixit's habit: every rule's own examples are its tests. `flag` examples must produce a finding with the
rule's code; `ok` examples must not. The whole catalogue is loaded, so rules that overlap are tested together."""
from __future__ import annotations

import textwrap

import pytest

from auditor.rules import load_rules
from auditor.static import StaticEngine

RULES = load_rules()
ENGINE = StaticEngine(RULES)


def _cases(kind: str):
    for rule in RULES:
        for i, example in enumerate(getattr(rule, f"examples_{kind}")):
            yield pytest.param(rule, example, id=f"{rule.code}-{rule.name}-{kind}{i}")


def _codes(example: str, name: str) -> list[str]:
    result = ENGINE.analyze_bytes(textwrap.dedent(example).encode(), name)
    assert result.error is None, f"example does not parse: {result.error}"
    return [f.code for f in result.findings]


@pytest.mark.parametrize("rule,example", list(_cases("flag")))
def test_flag_examples_are_flagged(rule, example):
    name = "kernel.cu" if "file" in rule.match and not rule.match.keys() - {"file"} else "example.py"
    if name.endswith(".cu"):
        result = ENGINE.analyze_bytes(example.encode(), name)
        assert rule.code in [f.code for f in result.findings]
        return
    assert rule.code in _codes(example, rule.example_file), f"{rule.code} did not flag:\n{example}"


@pytest.mark.parametrize("rule,example", list(_cases("ok")))
def test_ok_examples_are_not_flagged(rule, example):
    assert rule.code not in _codes(example, rule.example_file), f"{rule.code} flagged:\n{example}"


def test_every_default_rule_has_examples_and_docs():
    for rule in RULES:
        if "coverage" in rule.match or "dynamic" in rule.match or "crossfile" in rule.match \
                or "makefile" in rule.match or "launched" in rule.match:
            continue  # fed by the coverage tables, produced by --trace / --execute or by the cross-file pass (own tests)
        assert rule.examples_flag, f"{rule.code} has no flag examples"
        assert rule.examples_ok, f"{rule.code} has no ok examples"
        assert rule.substitution or all(d.substitution for d in rule.symbols.values()), \
            f"{rule.code} gives no substitution"


def test_dynamic_findings_have_catalogue_entries():
    """--trace and --execute emit codes whose name and category match their catalogue entry."""
    import re
    from pathlib import Path

    from auditor.trace import RULES as TRACE_RULES

    by_code = {r.code: r for r in RULES}
    for code, (name, category, _, _) in TRACE_RULES.items():
        assert by_code[code].name == name and by_code[code].category == category
    source = (Path(__file__).resolve().parent.parent / "auditor" / "execute" / "__init__.py").read_text()
    emitted = re.findall(r'code="(NPU\d+)"[^)]*?name="([a-z0-9-]+)", category="(\w+)"', source, re.S)
    emitted += re.findall(r'code="NPU281" if overflow else "(NPU280)"', source)
    assert emitted
    for item in emitted:
        if isinstance(item, tuple):
            code, name, category = item
            assert (by_code[code].name, by_code[code].category) == (name, category)


def _fixable(rule) -> bool:
    return rule.fix != "none" or any(d.fix in ("safe", "unsafe") for d in rule.symbols.values())


def test_every_fixable_rule_has_a_before_after_pair():
    missing = [r.code for r in RULES if _fixable(r) and not r.examples_fix]
    assert not missing, f"add examples: fix: [{{before, after}}] to {missing}"


def _fix_cases():
    for rule in RULES:
        for i, (before, after) in enumerate(rule.examples_fix):
            yield pytest.param(rule, before, after, id=f"{rule.code}-fix{i}")


@pytest.mark.parametrize("rule,before,after", list(_fix_cases()))
def test_fix_examples(rule, before, after):
    """`audit fix` (with --unsafe-fixes when the rule's fix is unsafe) turns `before` into `after`, fixes a
    finding of this rule, and says why it left any other fixable finding of it alone."""
    from auditor.fix import applicable, finding_key, fix_bytes
    from auditor.rules import rules_by_code

    from auditor.fix.cli import TEXT_EDIT_KINDS
    from auditor.fix.text_edits import fix_project_bytes
    from auditor.project import project_kind

    unsafe = rule.fix == "unsafe" or any(d.fix == "unsafe" for d in rule.symbols.values())
    data = textwrap.dedent(before).encode()
    if project_kind(rule.example_file) in TEXT_EDIT_KINDS:       # scripts, Dockerfiles, configs: text edits
        result = fix_project_bytes(data, rule.example_file, ENGINE, unsafe=unsafe)
    else:
        result = fix_bytes(data, rule.example_file, ENGINE, rules_by_code(), unsafe=unsafe)
    assert result.error is None
    assert rule.code in {f.code for f in result.fixed}
    assert result.fixed_text == textwrap.dedent(after)
    left = [f for f in result.remaining if f.code == rule.code and applicable(f, unsafe)]
    assert all(finding_key(f) in result.skipped for f in left), result.skipped
