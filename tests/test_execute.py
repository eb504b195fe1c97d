"""Execute mode on the CPU: planted fragile modules fail, well-conditioned ones pass, bad input is clear."""
import importlib.util
import json
import sys
from pathlib import Path

import pytest
import torch

from auditor.device import DeviceError
from auditor.entry import normalize_entry_result
from auditor.execute import ExecuteUsageError, _Locator, build_findings, default_amp, execute_findings
from auditor.execute.step import ExecuteError, check_size, meta_parameter_count, run_step
from auditor.target import Target

FIXTURES = Path(__file__).parent / "fixtures" / "execute"
TARGET = Target("v2.14", "a2")


def load(name: str):
    spec = importlib.util.spec_from_file_location(f"_execute_fixture_{name}", FIXTURES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # as auditor.entry does: inspect finds class sources through it
    spec.loader.exec_module(module)
    return module


def step(name: str, amp: str, entry: str = "audit_entry"):
    torch.manual_seed(0)
    spec = normalize_entry_result(getattr(load(name), entry)())
    result = run_step(spec, amp, "cpu")
    return result, {m["name"]: m for m in result["modules"]}


def verdict(modules, name, what="own"):
    return modules[name][what]["verdict"]


@pytest.fixture(scope="module")
def fragile_bf16():
    return step("fragile", "bf16")


@pytest.fixture(scope="module")
def fragile_fp16():
    return step("fragile", "fp16")


def test_bf16_flags_one_pass_variance_and_long_sum(fragile_bf16):
    _, modules = fragile_bf16
    assert verdict(modules, "norm") == "error"   # E[x^2] - E[x]^2 at an offset of 16
    assert verdict(modules, "pool") == "error"   # 1024-step running sum in bf16
    assert modules["pool"]["own"]["err_in_rtol"] > 16


def test_bf16_passes_the_linear_gelu_linear_stack(fragile_bf16):
    _, modules = fragile_bf16
    for name in ("mlp", "mlp.fc1", "mlp.fc2", "widen", "head"):
        assert verdict(modules, name) == "pass", (name, modules[name]["own"])
    assert modules["mlp"]["output"]["verdict"] == "pass"   # nothing upstream of it to inherit
    assert verdict(modules, "rms") == "pass"               # no overflow in bf16: same range as fp32


def test_fp16_flags_the_overflowing_sum_of_squares(fragile_fp16):
    result, modules = fragile_fp16
    assert verdict(modules, "rms") == "error"
    assert verdict(modules, "mlp") == "pass"
    findings, errors, section = build_findings(result, _Locator(FIXTURES / "fragile.py", FIXTURES, None, None), TARGET)
    by_symbol = {f.symbol: f for f in findings}
    assert not errors
    assert by_symbol["norm"].code == "NPU280" and by_symbol["norm"].severity == "error"
    rms = by_symbol["rms"]
    # The overflow happens inside (the sum of squares), the module's output is finite zeros: an error by size.
    assert rms.code in ("NPU280", "NPU281") and rms.severity == "error"
    assert "mlp" not in by_symbol and "mlp.fc1" not in by_symbol
    # Whatever overflowed, the report stays strict JSON (inf/nan metrics become null).
    json.dumps({"section": section, "findings": [f.to_dict() for f in findings]}, allow_nan=False)


def test_findings_point_at_the_class_definitions(fragile_bf16):
    result, _ = fragile_bf16
    findings, _, section = build_findings(result, _Locator(FIXTURES / "fragile.py", FIXTURES, None, None), TARGET)
    source = (FIXTURES / "fragile.py").read_text().splitlines()
    culprits = [f for f in findings if f.code == "NPU280"]
    assert {f.symbol for f in culprits} == {"norm", "pool"}
    for f in culprits:
        assert f.path == "fragile.py" and f.source == "execute" and f.category == "precision"
        assert source[f.line - 1].startswith("class " + f.message.split("(")[1].split(")")[0])
    # Worst first: the two culprits lead the table.
    assert [r["module"] for r in section["rows"][:2]] == ["norm", "pool"]
    assert section["counts"]["error"] >= 2
    assert "not been run on Ascend hardware" in section["hardware_note"]


@pytest.mark.parametrize("amp", ["bf16", "fp16"])
def test_well_conditioned_model_passes(amp):
    result, modules = step("fragile", amp, entry="well_conditioned_entry")
    assert all(m["own"]["verdict"] == "pass" for m in modules.values() if m["own"]), \
        {n: m["own"] for n, m in modules.items() if m["own"] and m["own"]["verdict"] != "pass"}
    assert modules[""]["output"]["verdict"] == "pass"
    findings, _, _ = build_findings(result, _Locator(FIXTURES / "fragile.py", FIXTURES, None, None), TARGET)
    assert not [f for f in findings if f.severity in ("error", "warning")]


def test_size_guard_refuses_large_models_and_suggests_trace():
    with pytest.raises(ExecuteError, match="--trace"):
        check_size(7_000_000_000)
    check_size(1_000_000)


def test_meta_build_counts_parameters_without_allocating():
    gpt = load("tiny_gpt")
    assert meta_parameter_count(lambda: normalize_entry_result(gpt.audit_entry())) == 875_264


def test_default_amp_follows_the_product():
    assert default_amp(Target("v2.14", "a2")) == "bf16"
    assert default_amp(Target("v2.14", "910a")) == "fp16"


def test_end_to_end_in_a_child_process():
    findings, errors, section = execute_findings(
        FIXTURES / "fragile.py", root=FIXTURES, entry=None, hf_config=None, amp="bf16", timeout=300,
        device="cpu", target=TARGET)
    assert not errors
    assert {f.symbol for f in findings if f.code == "NPU280"} == {"norm", "pool"}
    assert section["device"] == "cpu" and section["amp"] == "bf16"
    assert section["golden_dtype"] == "float64"  # 353k parameters: fp64 is cheap
    assert section["update"]["verdict"] in ("pass", "warning", "error")  # the optimizer step was compared
    assert section["rows"][0]["module"] == "norm"


def test_missing_entry_is_a_file_error(tmp_path):
    model = tmp_path / "model.py"
    model.write_text("import torch\nclass Net(torch.nn.Module):\n    pass\n")
    findings, errors, section = execute_findings(model, root=tmp_path, entry=None, hf_config=None, amp=None,
                                                 timeout=120, device="cpu", target=TARGET)
    assert findings == [] and len(errors) == 1
    assert errors[0].kind == "execute" and errors[0].path == "model.py"
    assert "audit_entry" in errors[0].message and "Traceback" not in errors[0].message


def test_entry_that_raises_reports_the_users_line(tmp_path):
    model = tmp_path / "model.py"
    model.write_text("import torch\n\ndef audit_entry():\n    raise RuntimeError('no data')\n")
    _, errors, _ = execute_findings(model, root=tmp_path, entry=None, hf_config=None, amp="bf16",
                                    timeout=120, device="cpu", target=TARGET)
    assert errors[0].line == 4 and "RuntimeError: no data" in errors[0].message


def test_npu_requested_without_torch_npu_raises_device_error(monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "torch_npu" else real(name, *a))
    with pytest.raises(DeviceError, match="torch_npu is not installed"):
        execute_findings(FIXTURES / "fragile.py", root=FIXTURES, entry=None, hf_config=None, amp="bf16",
                         timeout=10, device="npu", target=TARGET)


def test_bad_amp_is_a_usage_error():
    with pytest.raises(ExecuteUsageError, match="bf16, fp16"):
        execute_findings(FIXTURES / "fragile.py", root=FIXTURES, entry=None, hf_config=None, amp="fp8",
                         timeout=10, device="cpu", target=TARGET)


def test_console_table_lists_culprits_first(fragile_bf16):
    from rich.console import Console

    from auditor.execute.table import render_execute_section

    result, _ = fragile_bf16
    _, _, section = build_findings(result, _Locator(FIXTURES / "fragile.py", FIXTURES, None, None), TARGET)
    console = Console(record=True, width=200, color_system=None)
    render_execute_section(section, console, limit=5)
    text = console.export_text()
    lines = text.splitlines()
    first_row = next(i for i, line in enumerate(lines) if line.startswith("module"))
    assert lines[first_row + 1].startswith("norm") and "OnePassVarianceNorm" in lines[first_row + 1]
    assert lines[first_row + 2].startswith("pool")
    assert "more modules" in text and "not been run on Ascend hardware" in text


def test_hf_config_model_gets_verdicts(tmp_path):
    pytest.importorskip("transformers")
    config = tmp_path / "config.json"
    config.write_text(json.dumps({
        "model_type": "llama", "hidden_size": 64, "intermediate_size": 172, "num_hidden_layers": 2,
        "num_attention_heads": 4, "num_key_value_heads": 2, "vocab_size": 256, "max_position_embeddings": 128}))
    findings, errors, section = execute_findings(None, root=tmp_path, entry=None, hf_config=config, amp="bf16",
                                                 timeout=300, device="cpu", target=TARGET)
    assert not errors
    rows = {r["module"]: r for r in section["rows"]}
    assert rows["model.layers.0.self_attn"]["type"] == "LlamaAttention"
    assert rows["model.layers.1.mlp"]["own"] == "pass"
    assert not [f for f in findings if f.severity == "error"]


class _WarnsLikeTorchNpu(torch.nn.Module):
    """Emits torch_npu's CPU-fallback warning text, as torch_npu does on an NPU (simulated: no NPU here)."""

    def __init__(self):
        super().__init__()
        self.proj = torch.nn.Linear(8, 8)

    def forward(self, x):
        import warnings

        warnings.warn("The operator 'aten::_ctc_loss' is not currently supported on the NPU backend and will "
                      "fall back to run on the CPU. This may have performance implications.")
        return self.proj(x)


@pytest.mark.filterwarnings("ignore::UserWarning")  # the golden run and the re-runs warn too
def test_fallback_warnings_become_operator_findings_at_the_module():
    model = torch.nn.Sequential(torch.nn.Linear(8, 8), _WarnsLikeTorchNpu())
    spec = normalize_entry_result((model, (torch.randn(4, 8),)))
    result = run_step(spec, "bf16", "cpu")
    assert result["fallbacks"] == [{"op": "aten::_ctc_loss", "count": 1, "module": "1"}]
    here = Path(__file__)
    findings, _, section = build_findings(result, _Locator(here, here.parent, None, None), TARGET)
    fallback = next(f for f in findings if f.code == "NPU580")
    assert fallback.category == "operator" and fallback.symbol == "aten::_ctc_loss"
    assert fallback.path == here.name
    assert here.read_text().splitlines()[fallback.line - 1].startswith("class _WarnsLikeTorchNpu")
    assert section["fallbacks"][0]["op"] == "aten::_ctc_loss"


def test_gpu_code_with_cuda_and_its_own_autocast_executes(tmp_path):
    """`.cuda()` / device="cuda" run where the candidate runs; the user's torch.autocast("cuda", fp16) is
    honoured in the candidate and off in the golden, so the golden stays full precision."""
    trace_fixtures = Path(__file__).parent / "fixtures" / "trace"
    for name in ("cuda_model.py", "amp_model.py"):
        source = trace_fixtures / name
        findings, errors, section = execute_findings(source, root=trace_fixtures, entry=None, hf_config=None,
                                                     amp="bf16", timeout=120, device="cpu", target=TARGET)
        assert errors == [], errors[0].message
        assert section["rows"] and section["golden_dtype"] in ("float64", "float32")
    body = next(r for r in section["rows"] if r["module"] == "body")
    # fp16 (the user's choice inside the bf16 candidate) keeps the Linear within the fp16-sized error
    assert body["output_error_x_tol"] is not None and body["output_error_x_tol"] < 4


def findings_of(entry: str):
    result, modules = step("drift_and_routing", "bf16", entry)
    findings, _, section = build_findings(result, _Locator(None, FIXTURES, entry, None), TARGET)
    return findings, section, modules


def test_a_backbone_whose_blocks_pass_alone_drifts_it_does_not_fail():
    findings, section, modules = findings_of("deep_entry")
    assert modules["backbone"]["own"]["verdict"] == "error"                 # the chain as a whole ...
    assert all(m["own"]["verdict"] == "pass" for n, m in modules.items() if n.startswith("backbone.blocks."))
    codes = [f.code for f in findings]
    assert "NPU280" not in codes and "NPU281" not in codes                  # ... is not a broken module
    drift = next(f for f in findings if f.code == "NPU283")
    assert drift.severity == "warning" and "`backbone` (Backbone) drifts" in drift.message
    assert drift.data["drifting_modules"] == ["backbone"]
    row = next(r for r in section["rows"] if r["module"] == "backbone")
    assert row["verdict"] == "warning" and row["reason"].startswith("accumulated drift")


def test_a_flipped_expert_choice_is_named_as_the_cause():
    findings, _, modules = findings_of("moe_entry")
    flip = modules["moe"]["flip"]
    assert flip["op"] == "topk" and 0 < flip["share"] < 1 and flip["rows"] == 128 and flip["k"] == 2
    error = next(f for f in findings if f.code == "NPU280")
    assert error.symbol == "moe" and error.data["flip"]["op"] == "topk"
    assert f"flips the top-2 choice (e.g. MoE expert routing) for {flip['share']:.1%} of 128 rows" in error.message
    assert "in fp32" in error.substitution
