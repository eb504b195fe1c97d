"""The tracer on realistic models: operator gaps at the exact line, no findings for covered ops,
the four hand-written fusion patterns, backend-specific op mapping, aggregation, isolation."""
from pathlib import Path

import pytest

from auditor.target import resolve_target
from auditor.trace import _Placer, judge, trace_findings
from auditor.trace.backend_ops import user_level_op
from auditor.trace.record import trace_step

FIXTURES = Path(__file__).parent / "fixtures" / "trace"
HANDWRITTEN = FIXTURES / "handwritten_llm.py"
REPEATED = FIXTURES / "repeated_blocks.py"


def line_of(path: Path, text: str) -> int:
    lines = path.read_text().splitlines()
    return next(i for i, line in enumerate(lines, 1) if text in line)


def run_judge(source: Path, torch_npu="2.14", product="a2", amp=None):
    result = trace_step(str(source), None, None, amp)
    return judge(result, resolve_target(torch_npu, product), _Placer(source.parent, source, None, None))


@pytest.fixture(scope="module")
def handwritten():
    return run_judge(HANDWRITTEN)


def by_code(findings, code):
    return [f for f in findings if f.code == code]


def test_missing_ops_are_reported_on_their_line(handwritten):
    findings, errors, _ = handwritten
    assert errors == []
    fallback = {(f.symbol, f.line) for f in by_code(findings, "NPU550")}
    lgamma_line = line_of(HANDWRITTEN, "torch.lgamma(self.prior)")
    eig_line = line_of(HANDWRITTEN, "torch.linalg.eigvals(cov[0])")
    assert ("aten::lgamma", lgamma_line) in fallback
    assert ("aten::digamma", lgamma_line) in fallback       # lgamma's backward, traced back to its line
    assert ("aten::linalg_eig", eig_line) in fallback
    lgamma = next(f for f in findings if f.symbol == "aten::lgamma")
    text = HANDWRITTEN.read_text().splitlines()[lgamma_line - 1]
    assert text[lgamma.col - 1:lgamma.end_col - 1] == "torch.lgamma(self.prior)"   # the call's own columns
    assert lgamma.source == "trace" and lgamma.category == "operator" and lgamma.path == "handwritten_llm.py"
    assert lgamma.data["modules"] == ["TinyLM.block"] and lgamma.data["apis"] == ["torch.lgamma"]
    assert "op_plugin_functions.yaml" in lgamma.data["coverage_source"] or "dispatcher" in lgamma.data["coverage_source"]


def test_covered_ops_produce_no_operator_finding(handwritten):
    findings, _, table = handwritten
    flagged = {f.symbol for f in findings if f.category == "operator"}
    for covered in ("aten::mm", "aten::embedding", "aten::_softmax", "aten::add.Tensor", "aten::rsqrt",
                    "aten::silu", "aten::nll_loss_forward", "aten::cat"):
        assert covered not in flagged
    assert all(f.path == "handwritten_llm.py" for f in findings)
    row = table["rows"][0]
    assert row["class"] == "TinyLM" and row["fallback"] >= 3 and row["native"] > 20


def test_four_handwritten_patterns_each_give_a_fusion_finding_at_their_code(handwritten):
    findings, _, _ = handwritten
    fusion = {f.code: f for f in findings if f.category == "fusion"}
    assert fusion["NPU650"].line == line_of(HANDWRITTEN, "x * torch.rsqrt(variance + self.eps)")
    assert fusion["NPU650"].data["count"] == 2 and "epsilon=1e-06" in fusion["NPU650"].substitution
    assert fusion["NPU651"].line == line_of(HANDWRITTEN, "return q * cos + rotate_half(q) * sin")
    assert fusion["NPU651"].symbol == fusion["NPU651"].data["fused_api"] == "torch_npu.npu_rotary_mul"
    assert fusion["NPU650"].symbol == "torch.rsqrt"                 # the call the static pass names too
    assert fusion["NPU653"].symbol == "torch.nn.functional.softmax"
    assert fusion["NPU652"].line == line_of(HANDWRITTEN, "F.silu(self.gate(x)) * self.up(x)")
    assert "[gate, up]" in fusion["NPU652"].substitution
    attention = fusion["NPU653"]
    assert attention.line == line_of(HANDWRITTEN, "probs = F.softmax(scores")
    assert 'head_num=4, input_layout="BNSD", scale=0.25' in attention.substitution
    assert "atten_mask" in attention.substitution
    optimizer = fusion["NPU654"]
    assert optimizer.symbol == "torch.optim.SGD" and optimizer.data["fused_api"] == "torch_npu.optim.NpuFusedSGD"
    assert optimizer.line == line_of(HANDWRITTEN, "torch.optim.SGD(params")
    assert "fused=True" in optimizer.message


def test_backend_specific_ops_are_judged_as_the_user_level_op():
    assert user_level_op("_scaled_dot_product_flash_attention_for_cpu") == \
        ("scaled_dot_product_attention", "torch.nn.functional.scaled_dot_product_attention")
    assert user_level_op("_scaled_dot_product_flash_attention_for_cpu_backward")[0] == "scaled_dot_product_attention"
    assert user_level_op("_cudnn_rnn")[0] == "lstm.input"
    assert user_level_op("cudnn_batch_norm")[0] == "native_batch_norm"
    assert user_level_op("mkldnn_convolution")[0] == "convolution"
    assert user_level_op("_amp_foreach_non_finite_check_and_unscale_cuda")[0] == \
        "_amp_foreach_non_finite_check_and_unscale"
    assert user_level_op("mm") == ("mm", None)


@pytest.fixture(scope="module")
def repeated():
    return run_judge(REPEATED)


def test_sdpa_cpu_kernel_is_not_reported_as_a_fallback(repeated):
    findings, _, table = repeated
    assert not [f for f in findings if "scaled_dot_product" in f.symbol]
    # the raw CPU op itself would be a fallback: the mapping is what keeps it out
    from auditor.coverage import Coverage

    cov = Coverage.load(resolve_target("2.14", "a2"))
    assert cov.aten("_scaled_dot_product_flash_attention_for_cpu").supported is False
    sdpa = cov.aten("scaled_dot_product_attention")   # registered; the 2.14.0 wheel names no product
    assert sdpa.via.startswith("npu kernel") and cov.product_unstated("scaled_dot_product_attention")
    assert table["rows"][0]["loss"].startswith("stand-in")


def test_repeated_blocks_aggregate_into_one_finding_per_line(repeated):
    findings, _, _ = repeated
    lgamma = [f for f in findings if f.symbol == "aten::lgamma"]
    assert len(lgamma) == 1
    f = lgamma[0]
    assert f.line == line_of(REPEATED, "torch.lgamma(y.abs() + 1)")
    assert f.data["count"] == 4 and f.data["modules"] == ["Stack.blocks.*"] and f.data["dtypes"] == ["float32"]
    assert "4 calls in the forward in Stack.blocks.*" in f.message
    digamma = [f for f in findings if f.symbol == "aten::digamma"]
    assert len(digamma) == 1 and digamma[0].data["phases"] == ["backward"] and digamma[0].data["count"] == 4


def test_bf16_autocast_on_910a_is_a_dtype_finding_and_fine_on_a2():
    # k12f: the pages that leave 910A out of bf16 are each about one op; no source states that 910A lacks
    # bf16, so the answer is unverified and NPU552 (an error) must not fire
    findings_910a, _, _ = run_judge(REPEATED, product="910a", amp="bf16")
    assert not by_code(findings_910a, "NPU552")
    findings_a2, _, _ = run_judge(REPEATED, product="a2", amp="bf16")
    assert not by_code(findings_a2, "NPU552")


def test_hf_config_tiny_llama_end_to_end_in_the_sandbox(tmp_path):
    pytest.importorskip("transformers")
    findings, errors, table = trace_findings(None, root=FIXTURES, entry=None, hf_config=FIXTURES / "tiny_llama.json",
                                             amp=None, timeout=240, target=resolve_target("2.14", "a2"))
    assert errors == []
    codes = {f.code for f in findings}
    assert {"NPU650", "NPU651", "NPU652"} <= codes          # RMSNorm, RoPE, SwiGLU inside transformers' Llama
    assert all(f.path == "tiny_llama.json" and f.line == 1 for f in findings)
    rms = next(f for f in findings if f.code == "NPU650")
    assert any(line.startswith("transformers/models/llama/modeling_llama.py:") for line in rms.data["library_lines"])
    row = table["rows"][0]
    assert row["class"] == "LlamaForCausalLM" and row["fallback"] == 0 and row["parameters"] == "158.02K"


def test_user_exception_becomes_a_file_error_with_user_frames():
    findings, errors, table = trace_findings(FIXTURES / "raises.py", root=FIXTURES, entry=None, hf_config=None,
                                             amp=None, timeout=120, target=resolve_target("2.14", "a2"))
    assert findings == [] and table == {} and len(errors) == 1
    err = errors[0]
    assert err.kind == "trace" and err.path == "raises.py" and err.line == 6
    assert "ValueError: width 30 must be a multiple of 8" in err.message
    assert 'raises.py", line 11, in audit_entry' in err.message and "auditor" not in err.message


def test_file_without_entry_is_a_clear_error():
    _, errors, _ = trace_findings(FIXTURES / "no_entry.py", root=FIXTURES, entry=None, hf_config=None,
                                  amp=None, timeout=120, target=resolve_target("2.14", "a2"))
    assert len(errors) == 1 and "def audit_entry():" in errors[0].message and "Traceback" not in errors[0].message


def test_hang_is_reported_as_timeout():
    _, errors, _ = trace_findings(FIXTURES / "hangs.py", root=FIXTURES, entry=None, hf_config=None,
                                  amp=None, timeout=6, target=resolve_target("2.14", "a2"))
    assert len(errors) == 1 and errors[0].message.startswith("timeout: ") and "--timeout" in errors[0].message


def test_bad_hf_config_and_amp_values_are_clear_errors(tmp_path):
    cfg = tmp_path / "config.json"
    cfg.write_text("{}")
    _, errors, _ = trace_findings(None, root=tmp_path, entry=None, hf_config=cfg, amp=None, timeout=60,
                                  target=resolve_target("2.14", "a2"))
    assert "needs a 'model_type' key" in errors[0].message and errors[0].path == "config.json"
    _, errors, _ = trace_findings(HANDWRITTEN, root=FIXTURES, entry=None, hf_config=None, amp="fp8", timeout=60,
                                  target=resolve_target("2.14", "a2"))
    assert "--amp must be bf16 or fp16" in errors[0].message


def test_gpu_code_with_cuda_devices_and_model_dtype_conversion_traces(tmp_path):
    result = trace_step(str(FIXTURES / "cuda_model.py"), None, None, None)
    assert result["cuda_redirects"] >= 4 and result["parameters"] == 16 * 8 + 8
    half = tmp_path / "half_model.py"
    half.write_text("import torch\n\n\ndef audit_entry():\n"
                    "    model = torch.nn.Linear(8, 8).to(torch.bfloat16)\n"
                    "    return model, (torch.randn(2, 8, dtype=torch.bfloat16),)\n")
    findings, _, table = run_judge(half, product="910a")
    assert "bfloat16" in table["rows"][0]["dtypes"]
    # k12f: bf16 on 910A is unverified (no source says 910A lacks it): no NPU552 error
    assert not [f for f in findings if f.code == "NPU552"]


def test_data_dependent_ops_get_stand_ins_and_are_counted(tmp_path):
    src = tmp_path / "routing.py"
    src.write_text(
        "import torch\n\n\nclass Router(torch.nn.Module):\n"
        "    def __init__(self):\n        super().__init__()\n        self.w = torch.nn.Linear(8, 8)\n\n"
        "    def forward(self, x):\n        picked = torch.nonzero(x.sum(-1) > 0).squeeze(-1)\n"
        "        if (x > 0).any():\n            x = x * 2\n        return self.w(x[picked])\n\n\n"
        "def audit_entry():\n    return Router(), (torch.randn(4, 8),)\n")
    result = trace_step(str(src), None, None, None)
    assert result["approximations"] == {"nonzero": 1, "_local_scalar_dense": 1}


def test_api_the_support_list_marks_unsupported_on_the_product(tmp_path):
    src = tmp_path / "vote.py"
    src.write_text(
        "import torch\n\n\nclass Vote(torch.nn.Module):\n"
        "    def __init__(self):\n        super().__init__()\n        self.fc = torch.nn.Linear(8, 8)\n\n"
        "    def forward(self, x):\n        values, _ = self.fc(x).mode(dim=-1)\n        return values.sum()\n\n\n"
        "def audit_entry():\n    return Vote(), (torch.randn(4, 8),)\n")
    # v2.13: the 2.13.0 list is for its own torch, so its ✘ is definite (on v2.14 it is unverified)
    findings, _, _ = run_judge(src, torch_npu="2.13", product="a2")
    api = [f for f in findings if f.code == "NPU553"]
    assert [(f.symbol, f.line) for f in api] == [("torch.Tensor.mode", 10)]
    assert "support list" in api[0].message and api[0].data["coverage_source"]


def test_look_alikes_are_not_fusion_findings(tmp_path):
    src = tmp_path / "lookalikes.py"
    src.write_text(
        "import torch\nimport torch.nn.functional as F\n\n\nclass Net(torch.nn.Module):\n"
        "    def __init__(self):\n        super().__init__()\n        self.fc = torch.nn.Linear(16, 16)\n"
        "        self.scale = torch.nn.Parameter(torch.ones(16))\n\n"
        "    def forward(self, x):\n"
        "        centered = x - x.mean(-1, keepdim=True)\n"
        "        x = centered / torch.sqrt(centered.pow(2).mean(-1, keepdim=True) + 1e-5)  # LayerNorm\n"
        "        x = F.silu(self.fc(x)) * self.scale  # SiLU with a learned scale, no gate\n"
        "        return F.rms_norm(x, (16,))  # already the native op\n\n\n"
        "def audit_entry():\n    return Net(), (torch.randn(4, 16),)\n")
    findings, _, _ = run_judge(src)
    assert [f for f in findings if f.category == "fusion"] == []
