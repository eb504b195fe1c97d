"""`audit fix`: before/after fixtures for every codemod, idempotency, comments and docstrings untouched."""
from __future__ import annotations

import ast
import shutil
from dataclasses import replace
from pathlib import Path

import pytest

from auditor.cli import main
from auditor.fix import applicable, comments_and_docstrings, fix_bytes
from auditor.rules import SymbolDetail, load_rules, rules_by_code
from auditor.static.engine import StaticEngine

FIXTURES = Path(__file__).parent / "fixtures" / "fix"
EXAMPLE = Path(__file__).parent.parent / "examples" / "gpt_train.py"
CASES = sorted(p.name[:-len("_before.py")] for p in FIXTURES.glob("*_before.py"))


@pytest.fixture(scope="module")
def engine():
    return StaticEngine(load_rules())


def fix(engine, text: str, *, unsafe: bool = False, rules=None, name: str = "t.py"):
    eng = engine if rules is None else StaticEngine(tuple(rules.values()))
    rules = rules or rules_by_code()
    return fix_bytes(text.encode(), name, eng, rules, unsafe=unsafe)


@pytest.mark.parametrize("case", CASES)
def test_fixture(engine, case):
    before = (FIXTURES / f"{case}_before.py").read_text()
    after = (FIXTURES / f"{case}_after.py").read_text()
    result = fix(engine, before, unsafe=case.startswith("unsafe"))
    assert result.error is None
    assert result.fixed_text == after
    ast.parse(result.fixed_text)
    assert comments_and_docstrings(before) == comments_and_docstrings(after)
    again = fix(engine, after, unsafe=case.startswith("unsafe"))
    assert again.fixed_text == after and not again.fixed      # idempotent


@pytest.mark.parametrize("case", [c for c in CASES if not c.startswith("unsafe")])
def test_no_safe_fix_left(engine, case):
    result = fix(engine, (FIXTURES / f"{case}_before.py").read_text())
    left = [f for f in result.remaining if applicable(f, unsafe=False)]
    assert left == [], [(f.line, f.code, f.symbol, result.skipped) for f in left]


def test_unsafe_fixes_need_the_flag(engine):
    before = (FIXTURES / "unsafe_apex_optimizers_before.py").read_text()
    result = fix(engine, before)
    assert result.fixed_text == before and not result.fixed
    assert any(f.fix == "unsafe" for f in result.remaining)


def test_apex_optimizer_defaults_are_kept(engine):
    after = (FIXTURES / "unsafe_apex_optimizers_after.py").read_text()
    # FusedAdam's weight_decay default is 0.0, NpuFusedAdamW's is 0.01: the fix writes Apex's value out
    assert "NpuFusedAdamW(params, lr=args.lr, betas=(0.9, 0.95), weight_decay=0.0)" in after
    # adam_w_mode=False is classic Adam
    assert "NpuFusedAdam(params, 1e-4, weight_decay=0.01)" in after
    # an argument with no counterpart and a non-default value: left for a person
    assert "FusedLAMB(params, lr=1e-3, use_nvlamb=True)" in after


def test_device_strings_constants_and_messages(engine):
    after = (FIXTURES / "device_after.py").read_text()
    assert 'DEV = "npu"' in after and 'FIRST = "npu:0"' in after       # the definition that flows into torch.device
    assert 'f"npu:{rank}"' in after and '"npu:" + str(idx)' in after
    assert 'log.info("running on cuda")' in after
    assert 'RuntimeError("cuda is required for this kernel")' in after


def test_import_torch_npu_once_after_torch(engine):
    after = (FIXTURES / "aliases_after.py").read_text()
    lines = after.splitlines()
    assert lines[:2] == ["import torch", "import torch_npu"]
    assert after.count("import torch_npu\n") == 1
    after = (FIXTURES / "amp_after.py").read_text().splitlines()
    assert after[:4] == ["#!/usr/bin/env python", "# Copyright 2024 Example Authors. Licensed under the Apache "
                         "License, Version 2.0.", "import torch", "import torch_npu"]


def test_env_value_converted_with_its_unit(engine):
    """NCCL_BUFFSIZE (bytes) -> HCCL_BUFFSIZE (MB), only with the value converted."""
    rules = rules_by_code()
    code = next(c for c, r in rules.items() if "NCCL_BUFFSIZE" in r.symbols)
    rule = rules[code]
    rules[code] = replace(rule, symbols={**rule.symbols, "NCCL_BUFFSIZE": SymbolDetail(
        substitution="HCCL_BUFFSIZE (MB)", fix="unsafe", replace="HCCL_BUFFSIZE")})
    src = ('import os\nos.environ["NCCL_BUFFSIZE"] = "8388608"\n'
           'os.environ.setdefault("NCCL_BUFFSIZE", "4194304")\nos.environ["NCCL_BUFFSIZE"] = "1000"\n')
    result = fix(engine, src, unsafe=True, rules=rules)
    assert result.fixed_text == ('import os\nos.environ["HCCL_BUFFSIZE"] = "8"\n'
                                 'os.environ.setdefault("HCCL_BUFFSIZE", "4")\nos.environ["NCCL_BUFFSIZE"] = "1000"\n')
    assert "1000" in next(v for v in result.skipped.values() if "convert" in v)
    assert fix(engine, src, rules=rules).fixed_text == src


def test_bad_input_is_reported_not_raised(engine):
    result = fix_bytes(b"def f(:\n    x.cuda()\n", "bad.py", engine, rules_by_code())
    assert result.error and "syntax" in result.error and not result.changed
    result = fix_bytes(b"x = 1\x00\n", "bin.py", engine, rules_by_code())
    assert result.error and not result.changed


def test_cli_diff_write_and_exit_codes(tmp_path, capsys):
    target = tmp_path / "gpt_train.py"
    shutil.copy(EXAMPLE, target)
    original = target.read_bytes()
    assert main(["fix", str(target)]) == 1                     # --diff is the default: changes pending
    out = capsys.readouterr()
    assert out.out.startswith("--- a/gpt_train.py\n+++ b/gpt_train.py\n") and "+import torch_npu\n" in out.out
    assert "would fix" in out.err and target.read_bytes() == original
    assert main(["fix", str(target), "--write"]) == 0
    fixed = target.read_text()
    assert fixed != original.decode() and "import torch_npu\n" in fixed
    assert comments_and_docstrings(original.decode()) == comments_and_docstrings(fixed)
    capsys.readouterr()
    assert main(["fix", str(target), "--write"]) == 0          # second run: nothing to do
    assert target.read_text() == fixed
    assert main(["fix", str(target)]) == 0
    out = capsys.readouterr()
    assert out.out == "" and "would fix 0 findings" in out.err
    assert main(["check", str(target), "--format", "json", "--no-cache", "--fail-on", "never"]) == 0
    import json
    findings = json.loads(capsys.readouterr().out)["findings"]
    assert [f for f in findings if f["fix"] == "safe"] == []


def test_cli_select_and_errors(tmp_path, capsys):
    src = tmp_path / "a.py"
    src.write_text('import torch\nx = torch.zeros(1).cuda()\ntorch.cuda.synchronize()\n')
    bad = tmp_path / "b.py"
    bad.write_text("def f(:\n")
    assert main(["fix", str(src), "--select", "NPU001", "--write"]) == 0
    assert src.read_text() == 'import torch\nimport torch_npu\nx = torch.zeros(1).npu()\ntorch.cuda.synchronize()\n'
    assert main(["fix", str(tmp_path), "--write"]) == 1       # b.py cannot be parsed: named, left as it was
    err = capsys.readouterr().err
    assert "b.py: not fixed: syntax error" in err
    assert bad.read_text() == "def f(:\n"
    assert "torch.npu.synchronize()" in src.read_text()
    assert main(["fix", str(src), "--select", "NOPE"]) == 2


def test_flash_attention_mapping(engine):
    after = (FIXTURES / "unsafe_flash_attention_after.py").read_text()
    # BSND layout, flash_attn's default scale written out, keep_prob = 1 - dropout_p, causal = mask + sparse_mode 3
    assert ('torch_npu.npu_fusion_attention(q, k, v, head_num=q.shape[2], input_layout="BSND", '
            'scale=q.shape[-1] ** -0.5, keep_prob=1 - (self.dropout if self.training else 0.0), '
            'atten_mask=torch.triu(torch.ones(2048, 2048, dtype=torch.bool, device=q.device), diagonal=1), '
            'sparse_mode=3)[0]') in after
    assert "scale=1 / math.sqrt(q.size(-1)), keep_prob=0.9)[0]" in after
    assert "flash_attn_func(q, k, v, causal=self.causal)" in after
    assert "flash_attn_func(q, k, v, window_size=(128, 0))" in after


def test_encodings_line_endings_and_star_imports(engine, tmp_path):
    latin = "# -*- coding: latin-1 -*-\nimport torch\n# café\nx = torch.zeros(1).cuda()\n".encode("latin-1")
    result = fix_bytes(latin, "l.py", engine, rules_by_code())
    assert result.encoded() == ("# -*- coding: latin-1 -*-\nimport torch\nimport torch_npu\n# café\n"
                                "x = torch.zeros(1).npu()\n").encode("latin-1")
    crlf = fix(engine, 'import torch\r\nx = torch.zeros(1).cuda()\r\ny = "cuda"\r\n')
    assert crlf.fixed_text == 'import torch\r\nimport torch_npu\r\nx = torch.zeros(1).npu()\r\ny = "npu"\r\n'
    star = fix(engine, "from torch.cuda import *\nimport torch\n")
    assert star.fixed_text == "from torch_npu.npu import *\nimport torch\nimport torch_npu\n"


def test_flash_attention_varlen_uses_tnd(engine):
    after = (FIXTURES / "unsafe_flash_attention_after.py").read_text()
    assert ('head_num=q.shape[1], input_layout="TND", scale=q.shape[-1] ** -0.5, keep_prob=1 - p, '
            'actual_seq_qlen=cu_seqlens[1:].tolist(), actual_seq_kvlen=cu_seqlens[1:].tolist()') in after


def test_split_import_on_a_shared_line_is_left_alone(engine):
    src = "import torch\nfrom torch.cuda import Stream, ComplexFloatStorage; x = 1\ns = Stream()\n"
    result = fix(engine, src)
    # the import stays (reported with the reason); the use is respelled through `torch` instead
    assert result.fixed_text == ("import torch\nimport torch_npu\nfrom torch.cuda import Stream, ComplexFloatStorage; "
                                 "x = 1\ns = torch.npu.Stream()\n")
    assert any("shares its line" in why for why in result.skipped.values())


def test_multiline_calls_keep_one_argument_per_line_and_their_comments(engine):
    after = (FIXTURES / "unsafe_flash_attention_after.py").read_text()
    assert ("    return torch_npu.npu_fusion_attention(\n        q,  # (total_tokens, heads, head_dim)\n        k,\n"
            "        v,\n        head_num=q.shape[1],\n") in after
    assert "        actual_seq_kvlen=cu[1:].tolist(),\n    )[0]\n" in after
    assert "        m,  # the longest sequence: not needed on NPU, but the comment would be lost\n" in after


def test_write_through_a_symlink_keeps_the_link(tmp_path):
    real = tmp_path / "real.py"
    real.write_text("import torch\nx = torch.zeros(1).cuda()\n")
    link = tmp_path / "link.py"
    link.symlink_to(real)
    assert main(["fix", str(link), "--write"]) == 0
    assert link.is_symlink() and "x = torch.zeros(1).npu()" in real.read_text()


def test_fixes_inside_a_mapped_call_are_kept(engine):
    src = "from apex.optimizers import FusedSGD\nopt = FusedSGD(net.cuda().parameters(), lr=0.1)\n"
    result = fix(engine, src, unsafe=True)
    assert "torch_npu.optim.NpuFusedSGD(net.npu().parameters(), lr=0.1, " in result.fixed_text
    assert [f.code for f in result.fixed].count("NPU001") == 1


def test_torch_optimizers_drop_implementation_flags_only(engine):
    after = (FIXTURES / "unsafe_torch_optimizers_after.py").read_text()
    assert "torch_npu.optim.NpuFusedAdamW(model.parameters(), lr=6e-4)\n" in after       # fused=True: CUDA kernel choice
    # SGD's defaults are written out: NpuFusedSGD's come from constants the source does not show as literals
    assert "torch_npu.optim.NpuFusedSGD(groups, 0.1, momentum=0.9, dampening=0, weight_decay=0)" in after
    assert "torch.optim.Adam(model.parameters(), lr=1e-3, maximize=True)" in after     # changes the update rule


def test_suppressed_lines_are_not_fixed(engine):
    src = "import torch\na = torch.zeros(1).cuda()  # npu-audit: ignore[NPU001]\nb = torch.zeros(1).cuda()\n"
    assert fix(engine, src).fixed_text == ("import torch\nimport torch_npu\na = torch.zeros(1).cuda()  "
                                           "# npu-audit: ignore[NPU001]\nb = torch.zeros(1).npu()\n")
