"""Issue 11: on code that already serves several backends, ported lines and platform abstractions get no
warning or error, and `audit fix --write --unsafe-fixes` leaves every line that serves another backend
byte-identical (backend-name literals are never duplicated); plain CUDA lines are still errors and fixed."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

from auditor.cli import main
from auditor.fix import fix_bytes
from auditor.rules import load_rules, rules_by_code
from auditor.static.backends import build_backend_context
from auditor.static.engine import StaticEngine

FIXTURE = Path(__file__).parent / "fixtures" / "multibackend" / "platform_utils.py"


@pytest.fixture(scope="module")
def engine():
    return StaticEngine(load_rules())


def _line_of(text: str, needle: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), 1) if needle in line)


def test_multibackend_lines_are_info_and_plain_cuda_lines_errors(engine):
    text = FIXTURE.read_text()
    findings = engine.analyze_bytes(text.encode(), "platform_utils.py").findings
    at = {}
    for f in findings:
        at.setdefault(f.line, []).append(f)
    plain_start = _line_of(text, "def plain_cuda_step")
    for f in findings:
        if f.line < plain_start and f.category == "device" or f.category == "distributed" and f.line < plain_start:
            assert f.severity == "info" or f.data.get("context") in ("backend-dispatch",) or \
                f.line == _line_of(text, "torch.cuda.empty_cache()") or \
                f.line == _line_of(text, "if hasattr(torch, \"cuda\")"), (f.line, f.code, f.message)
    # already ported: no finding at all
    for needle in ('GradScaler("npu")', 'torch.autocast("npu"', 'SUPPORTED_DEVICES =', 'COMM_BACKENDS =',
                   "current_platform.is_cuda()"):
        line = _line_of(text, needle)
        assert all(f.severity == "info" for f in at.get(line, [])), (needle, [(f.code, f.severity) for f in at[line]])
    assert not [f for f in at.get(_line_of(text, 'hasattr(torch, "cuda")'), []) if f.code == "NPU003"]
    # the guarded flash-attn import is a warning, its guarded call is not rewritten
    assert {f.severity for f in at[_line_of(text, "from flash_attn import")]} == {"warning"}
    assert {f.fix for f in at[_line_of(text, "return flash_attn_func(")]} == {"none"}
    # plain CUDA lines are errors
    for needle in ("model.cuda()", 'batch.to("cuda:0")'):
        assert {f.severity for f in at[_line_of(text, needle)]} == {"error"}


def test_fix_with_unsafe_fixes_leaves_every_multibackend_line_byte_identical(engine):
    text = FIXTURE.read_text()
    result = fix_bytes(text.encode(), "platform_utils.py", engine, rules_by_code(), unsafe=True)
    assert result.error is None and result.changed
    ctx = build_backend_context(ast.parse(text), text.splitlines(keepends=True), list(range(1, text.count(chr(10)) + 2)))
    before = text.splitlines()
    after = result.fixed_text.splitlines()
    # the fix adds `import torch_npu` after `import torch`; map lines past it
    shift = len(after) - len(before)
    assert shift == 1 and "import torch_npu" in after
    torch_line = before.index("import torch") + 1
    for n, line in enumerate(before, 1):
        mapped = after[n - 1 + (shift if n > torch_line else 0)]
        served = ctx.kind(n) is not None or n in ctx.guarded_imports or any(
            a <= n <= b for a, b in ctx.import_guard) or any(w in line for w in ("npu", "xpu", "hccl", "Platform"))
        if served:
            assert mapped == line, f"line {n} changed: {line!r} -> {mapped!r}"
    assert '{"cuda", "xpu", "npu"}' in result.fixed_text and '"npu", "xpu", "npu"' not in result.fixed_text
    assert 'hasattr(torch, "cuda")' in result.fixed_text      # an attribute name, not a device
    # the plain CUDA function is ported
    tail = result.fixed_text[result.fixed_text.index("def plain_cuda_step"):]
    assert "model.npu()" in tail and '"npu:0"' in tail and "torch.npu.synchronize()" in tail


def test_cli_reports_how_many_findings_the_context_discounted(tmp_path, capsys):
    (tmp_path / "platform_utils.py").write_text(FIXTURE.read_text())
    import json

    main([str(tmp_path), "--format", "json", "--fail-on", "never", "--no-cache"])
    doc = json.loads(capsys.readouterr().out)
    assert doc["summary"]["context_discounted"] >= 5
    assert doc["summary"]["by_context"]["npu-path"] >= 4
    main([str(tmp_path), "--fail-on", "never", "--no-cache"])
    assert "Multi-backend context:" in capsys.readouterr().out
