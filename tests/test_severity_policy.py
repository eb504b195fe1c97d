"""Severity is a contract with CI: every rule's severity follows from a clause of rules/severity_policy.yaml
(error = fails on Ascend as written or silently wrong; warning = runs but differently or slower; info =
worth knowing), per product and per symbol. Plain CUDA lines are errors; a guarded optional import is not."""
from __future__ import annotations

import textwrap

import pytest

from auditor.rules import load_rules, severity_policy
from auditor.static import StaticEngine

RULES = load_rules()
POLICY = severity_policy()


def _clause_severity(clause: str) -> str:
    assert clause in POLICY["clauses"], f"unknown clause {clause!r}"
    return POLICY["clauses"][clause]["severity"]


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.code)
def test_rule_severity_follows_its_clause(rule):
    entry = POLICY["policy"].get(rule.code)
    assert entry is not None, f"{rule.code}: add its clause to rules/severity_policy.yaml"
    if isinstance(rule.severity, dict):
        assert isinstance(entry, dict), f"{rule.code}: per-product severity needs per-product clauses"
        assert set(entry) == set(rule.severity), f"{rule.code}: products differ from the policy's"
        for product, sev in rule.severity.items():
            assert _clause_severity(entry[product]) == sev, f"{rule.code} on {product}"
    else:
        assert isinstance(entry, str)
        assert _clause_severity(entry) == rule.severity, f"{rule.code}: {rule.severity} but clause {entry}"
    symbol_clauses = POLICY["symbols"].get(rule.code, {})
    default = rule.severity_for("a2")
    if rule.extra.get("table"):
        # the symbols are the table's rows, each with its verdict's severity (g1)
        verdicts = POLICY["table_verdicts"][rule.code]
        assert set(verdicts) == set(rule.extra["table_severity"]), rule.code
        for verdict, sev in rule.extra["table_severity"].items():
            assert _clause_severity(verdicts[verdict]) == sev, f"{rule.code} {verdict}"
        return
    for name, detail in rule.symbols.items():
        if detail.severity is None or detail.severity == default:
            continue
        assert name in symbol_clauses, f"{rule.code} {name}: severity {detail.severity} needs a clause"
        assert _clause_severity(symbol_clauses[name]) == detail.severity


def test_policy_names_no_unknown_rule():
    codes = {r.code for r in RULES}
    assert set(POLICY["policy"]) <= codes
    assert set(POLICY["symbols"]) <= codes


ENGINE = StaticEngine(RULES)


def _found(src: str) -> dict[str, str]:
    result = ENGINE.analyze_bytes(textwrap.dedent(src).encode(), "train.py")
    return {f"{f.code}:{f.line}": f.severity for f in result.findings}


def test_plain_cuda_ddp_script_is_errors():
    found = _found("""\
        import torch
        import torch.distributed as dist
        dist.init_process_group(backend="nccl")
        model = Net().cuda()
        x = x.to("cuda:0")
        dev = torch.device("cuda")
        torch.cuda.synchronize()
        """)
    assert found == {"NPU101:3": "error", "NPU001:4": "error", "NPU003:5": "error", "NPU003:6": "error",
                     "NPU002:7": "error"}


def test_guarded_optional_import_is_a_warning_unguarded_an_error():
    found = _found("""\
        try:
            import flash_attn
        except ImportError:
            flash_attn = None
        import apex
        """)
    assert found == {"NPU346:2": "warning", "NPU306:5": "error"}


def test_switches_are_warnings():
    found = _found("""\
        import torch
        torch.backends.cuda.matmul.allow_tf32 = True
        torch.backends.cudnn.benchmark = True
        """)
    assert set(found.values()) == {"warning"}
