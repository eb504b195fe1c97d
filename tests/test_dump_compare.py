"""--execute --dump and `audit compare` on the CPU: a planted wrong module is the first divergence, the rest pass."""
import importlib.util
import json
import re
import sys
from pathlib import Path

import pytest
import torch

from auditor.cli import main
from auditor.compare import CompareError, compare_dumps, load_dump, thresholds
from auditor.entry import normalize_entry_result
from auditor.execute.dump import SAMPLE_SIZE, DumpError, dump_steps, tensor_stats

FIXTURE = Path(__file__).parent / "fixtures" / "dump" / "small_gpt.py"
PERTURBED = "blocks.1.mlp"


def _module():
    spec = importlib.util.spec_from_file_location("_dump_fixture_small_gpt", FIXTURE)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def _dump(out: Path, entry: str = "audit_entry", amp: str = "fp32", steps: int = 2, **kw):
    torch.manual_seed(0)   # as the child process does before calling the entry
    spec = normalize_entry_result(getattr(_module(), entry)())
    return dump_steps(spec, out, amp=amp, device="cpu", steps=steps, **kw)


@pytest.fixture(scope="module")
def dumps(tmp_path_factory):
    base = tmp_path_factory.mktemp("dumps")
    _dump(base / "fp32")
    _dump(base / "fp32_perturbed", "perturbed_entry")
    _dump(base / "bf16", amp="bf16")
    _dump(base / "bf16_perturbed", "perturbed_entry", amp="bf16")
    return base


def _codes(findings, severity=None):
    return [f.code for f in findings if severity is None or f.severity == severity]


def test_the_dump_describes_itself(dumps):
    manifest = json.loads((dumps / "bf16" / "manifest.json").read_text())
    assert manifest["schema"] == "npu-audit-dump" and manifest["schema_version"] == 1
    assert manifest["environment"]["device"] == "cpu" and manifest["environment"]["torch"] == torch.__version__
    assert {"torch_npu", "cann", "device_name"} <= set(manifest["environment"])
    assert manifest["dtype_policy"]["amp"] == "bf16" and "autocast" in manifest["dtype_policy"]["mode"]
    assert [s["step"] for s in manifest["steps"]] == [0, 1]
    assert manifest["steps"][1]["loss"] < manifest["steps"][0]["loss"]   # the optimizer ran between the steps
    assert manifest["performance"]["step_time_s"] > 0 and manifest["performance"]["peak_memory_bytes"] is None
    step = json.loads((dumps / "bf16" / manifest["steps"][0]["file"]).read_text())
    by_name = {r["module"]: r for r in step["forward"]}
    fc = by_name["blocks.0.mlp.fc"]
    assert fc["output"][0]["dtype"] == "bfloat16" and fc["output"][0]["shape"] == [2, 32, 256]
    assert len(fc["output"][0]["sample"]) == SAMPLE_SIZE and fc["params"] and fc["output_grad"]
    assert {"min", "max", "mean", "norm", "nonfinite"} <= set(fc["input"][0])
    assert by_name["wte"]["input"][0]["dtype"] == "int64"
    # children finish before their parents: execution order, not definition order
    order = [r["module"] for r in step["forward"]]
    assert order.index("blocks.0.mlp.fc") < order.index("blocks.0.mlp") < order.index("blocks.0") < order.index("")
    assert "blocks.0.mlp.fc" in step["param_grads"] and "blocks.0.mlp" not in step["param_grads"]


def test_same_inputs_everywhere(dumps):
    a, b = (json.loads((dumps / d / "manifest.json").read_text()) for d in ("fp32", "bf16"))
    assert a["inputs"]["sha256"] == b["inputs"]["sha256"]
    assert a["weights"]["sha256_initial"] == b["weights"]["sha256_initial"]


def test_identical_dumps_compare_clean(dumps):
    findings, section = compare_dumps(dumps / "fp32", dumps / "fp32")
    assert findings == [] and section["first_divergence"] is None and section["performance"]["time_ratio"] == 1
    assert all(r["verdict"] == "pass" for r in section["loss"])


def test_perturbed_module_is_the_first_divergence(dumps):
    findings, section = compare_dumps(dumps / "fp32", dumps / "fp32_perturbed")
    origins = [f for f in findings if f.code == "NPU290"]
    assert len(origins) == 1 and origins[0].severity == "error"
    assert origins[0].data["module"] == PERTURBED and origins[0].message.startswith("first divergence")
    assert origins[0].path.endswith("small_gpt.py") and origins[0].source == "execute"
    assert section["first_divergence"]["module"] == PERTURBED
    # every module call that finished before it passes, its own children included; later ones are not reported
    step = compare_step_rows(dumps / "fp32", dumps / "fp32_perturbed")
    names = [r["record"]["module"] for r in step]
    before = step[:names.index(PERTURBED)]
    assert before and all(r["metrics"]["output"]["verdict"] == "pass" for r in before if r["metrics"]["output"])
    assert {"blocks.1.mlp.fc", "blocks.1.mlp.proj", "blocks.0", "blocks.1.attn"} <= {r["record"]["module"] for r in before}
    assert not [f for f in findings if f.code == "NPU290" and f.data["module"] in ("blocks.1", "blocks.2", "")]


def compare_step_rows(a, b):
    from auditor.compare import compare_step

    return compare_step(load_dump(a), load_dump(b), 0)["rows"]


def test_fp32_vs_bf16_has_no_divergence(dumps):
    findings, section = compare_dumps(dumps / "fp32", dumps / "bf16")
    assert not _codes(findings, "error"), [f.message for f in findings]
    assert not [f for f in findings if f.category == "precision"], [f.message for f in findings]
    assert section["first_divergence"] is None and not section["gradient_divergences"]
    assert all(r["verdict"] == "pass" for r in section["loss"])
    # bf16 error is visible but inside bf16's budget
    rows = compare_step_rows(dumps / "fp32", dumps / "bf16")
    lm = next(r for r in rows if r["record"]["module"] == "lm_head")["metrics"]["output"]
    assert 0 < lm["normwise_err"] < 16 * 2 ** -8 and lm["dtype"] == "bfloat16"


def test_perturbed_bf16_is_pinned_to_the_module(dumps):
    findings, _ = compare_dumps(dumps / "fp32", dumps / "bf16_perturbed")
    origins = [f for f in findings if f.code == "NPU290"]
    assert [f.data["module"] for f in origins] == [PERTURBED]


def test_wrong_code_between_modules_names_the_enclosing_module(dumps, tmp_path):
    _dump(tmp_path / "between", "between_entry")
    findings, _ = compare_dumps(dumps / "fp32", tmp_path / "between")
    origins = [f for f in findings if f.code == "NPU290"]
    assert len(origins) == 1 and origins[0].data["module"] == "blocks.2" and origins[0].data["kind"] == "between"
    assert "outside its submodules" in origins[0].message and "blocks.2.ln_2" in origins[0].message


def test_full_tensors_give_exact_metrics(tmp_path):
    _dump(tmp_path / "a", steps=1, keep_tensors=True)
    _dump(tmp_path / "b", "perturbed_entry", steps=1, keep_tensors=True)
    assert (tmp_path / "a" / "tensors" / "step_000.pt").is_file()
    findings, section = compare_dumps(tmp_path / "a", tmp_path / "b")
    origin = next(f for f in findings if f.code == "NPU290")
    assert origin.data["module"] == PERTURBED and origin.data["from"] == "tensors"
    assert section["metrics_from"] == "tensors"


def test_different_inputs_are_reported(tmp_path):
    _dump(tmp_path / "a", steps=1)
    torch.save({"args": [torch.randint(0, 256, (2, 32), generator=torch.Generator().manual_seed(5))]},
               tmp_path / "other.pt")
    _dump(tmp_path / "b", steps=1, inputs_file=str(tmp_path / "other.pt"))
    findings, _ = compare_dumps(tmp_path / "a", tmp_path / "b")
    assert any(f.code == "NPU294" and "inputs differ" in f.message for f in findings)
    # the inputs file reproduces a dump's batch exactly
    _dump(tmp_path / "c", steps=1, inputs_file=str(tmp_path / "a" / "inputs.pt"))
    findings, _ = compare_dumps(tmp_path / "a", tmp_path / "c")
    assert [f for f in findings if f.category != "performance"] == []   # step times vary with the machine's load


def test_bad_inputs_file_is_a_clear_error(tmp_path):
    (tmp_path / "junk.pt").write_text("not a tensor file")
    with pytest.raises(DumpError, match="--inputs .*junk.pt"):
        _dump(tmp_path / "a", steps=1, inputs_file=str(tmp_path / "junk.pt"))
    with pytest.raises(DumpError, match="no such file"):
        _dump(tmp_path / "a", steps=1, inputs_file=str(tmp_path / "missing.pt"))


def test_overflow_is_an_error_even_when_norms_agree():
    t = torch.ones(100)
    u = t.clone()
    u[3] = float("inf")
    from auditor.compare import slot_metrics

    m = slot_metrics([tensor_stats(t)], [tensor_stats(u)])
    assert m["verdict"] == "error" and "inf/nan" in m["reason"]


def test_large_values_with_bf16_rounding_do_not_fail():
    """Large values round by more than 1 in bf16: msprobe's absolute bar (> 1) alone is a warning."""
    from auditor.compare import slot_metrics

    a = torch.linspace(600, 1000, 4096)   # bf16 ulp 4 above 512: rounding errors up to 2
    b = a.to(torch.bfloat16).float()
    m = slot_metrics([tensor_stats(a)], [tensor_stats(b)], full=([a], [b]), policy="bfloat16")
    assert m["max_abs_err"] > 1 and m["cosine"] > 0.9999
    assert m["verdict"] == "warning" and "scale-dependent" in m["reason"]


def test_thresholds_are_msprobes():
    t = thresholds()
    assert t["real_data"]["cos_threshold"] == 0.99 and t["real_data"]["max_abs_err_threshold"] == 0.001
    assert t["real_data"]["cos_max_threshold"] == 0.9 and t["real_data"]["max_abs_err_max_threshold"] == 1.0
    assert t["input_output"]["input_norm_rel_err_max"] == 0.1 and t["input_output"]["output_norm_rel_err_error"] == 0.5
    assert t["dtypes"]["rtol"] == {"fp16": 2 ** -10, "bf16": 2 ** -8, "fp32": 2 ** -20}
    assert all(":" in s or s.endswith(".yaml") for part in t.values() if isinstance(part, dict)
               for s in part.get("source", []))


def test_compare_codes_have_catalogue_entries():
    from auditor.rules import rules_by_code

    source = (Path(__file__).resolve().parent.parent / "auditor" / "compare.py").read_text()
    codes = set(re.findall(r'"(NPU\d{3})"', source))
    assert codes == {"NPU290", "NPU291", "NPU292", "NPU293", "NPU294", "NPU790", "NPU791"}
    rules = rules_by_code()
    for code in codes:
        assert "execute" in rules[code].match["dynamic"]


# --- the command line ---------------------------------------------------------------------------------------

def test_cli_dump_then_compare_exits_1_on_the_divergence(tmp_path, capsys):
    a, b = tmp_path / "a", tmp_path / "b"
    assert main([str(FIXTURE), "--execute", "--dump", str(a), "--amp", "fp32", "--device", "cpu",
                 "--no-cache", "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["sections"]["execute-dump"]["rows"][0]["step"] == 0
    assert main([str(FIXTURE), "--execute", "--dump", str(b), "--amp", "fp32", "--device", "cpu", "--no-cache",
                 "--entry", "perturbed_entry", "--inputs", str(a / "inputs.pt"), "--format", "json"]) == 0
    capsys.readouterr()
    assert main(["compare", str(a), str(b), "--format", "json"]) == 1
    report = json.loads(capsys.readouterr().out)
    first = [f for f in report["findings"] if f["code"] == "NPU290"]
    assert len(first) == 1 and first[0]["data"]["module"] == PERTURBED
    assert report["sections"]["compare"]["first_divergence"]["module"] == PERTURBED
    assert main(["compare", str(a), str(a), "--format", "sarif", "--fail-on", "warning"]) == 0
    sarif = json.loads(capsys.readouterr().out)
    assert sarif["runs"][0]["results"] == []


def test_cli_usage_errors(tmp_path, capsys):
    assert main(["compare", str(tmp_path), str(tmp_path)]) == 2
    assert "no manifest.json" in capsys.readouterr().err
    assert main(["compare", str(tmp_path / "nope"), str(tmp_path)]) == 2
    assert main([str(FIXTURE), "--dump", str(tmp_path / "d"), "--no-cache"]) == 2
    assert "add --execute" in capsys.readouterr().err
    assert main([str(FIXTURE), "--execute", "--steps", "3", "--no-cache"]) == 2
    assert "only apply with --execute --dump" in capsys.readouterr().err


def test_a_folder_with_other_files_is_not_overwritten(tmp_path):
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "x.txt").write_text("keep me")
    with pytest.raises(DumpError, match="not empty"):
        _dump(tmp_path / "full", steps=1)
    assert sorted(p.name for p in (tmp_path / "full").iterdir()) == ["x.txt"]


def test_newer_schema_is_refused(dumps, tmp_path):
    import shutil

    shutil.copytree(dumps / "fp32", tmp_path / "new")
    manifest = json.loads((tmp_path / "new" / "manifest.json").read_text())
    manifest["schema_version"] = 99
    (tmp_path / "new" / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(CompareError, match="schema version 99"):
        load_dump(tmp_path / "new")


def test_threshold_extractor_reads_a_wheel(tmp_path):
    """op_tables/msprobe_thresholds.py takes every value from the wheel's sources, with file:line."""
    import importlib.util
    import zipfile

    path = Path(__file__).resolve().parent.parent / "op_tables" / "msprobe_thresholds.py"
    spec = importlib.util.spec_from_file_location("_msprobe_thresholds", path)
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    files = {
        gen.CONST: "class CompareConst:\n    COS_THRESHOLD = 0.98\n    MAX_ABS_ERR_THRESHOLD = 0.002\n"
                   "    COS_MAX_THRESHOLD = 0.8\n    MAX_ABS_ERR_MAX_THRESHOLD = 2\n    MAGNITUDE = 0.4\n"
                   "    BFLOAT16_EPS = 2 ** -8\n",
        gen.MULTI: "def check_accuracy(cos, max_abs_err):\n    pass\n",
        gen.SUMMARY: "def get_rela_diff_summary_mode():\n    pass\n",
        gen.INDICATOR: "class RelativeErrChecker:\n    def __init__(self):\n        self.in_threshold = 0.2\n"
                       "        self.out_threshold = 0.6\n"
                       "class RelativeWarnChecker:\n    def __init__(self):\n        self.threshold = 9\n"
                       "class CosineWarnChecker:\n    def __init__(self):\n        self.input_threshold = 0.8\n"
                       "        self.output_threshold = 0.2\n",
        gen.STANDARD: "import torch\nclass StandardConfig:\n    _small_value = {torch.float16: 2**-10, torch.bfloat16: 2**-10, "
                      "torch.float32: 2**-20, 'default': 2**-20}\n    _rtol = {torch.float16: 2**-10, "
                      "torch.bfloat16: 2**-7, torch.float32: 2**-20, 'default': 2**-20}\n",
        gen.DIFF_YAML: "compare_metrics:\n  - NormRelativeErr\nNormRelativeErr:\n  - 0.4\n",
    }
    wheel = tmp_path / "mindstudio_probe-0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as z:
        for name, text in files.items():
            z.writestr(name, text)
    data = gen.extract(wheel)
    assert data["real_data"]["cos_threshold"] == 0.98 and data["real_data"]["max_abs_err_max_threshold"] == 2.0
    assert data["real_data"]["source"][0] == f"{gen.CONST}:2"
    assert data["input_output"]["input_norm_rel_err_max"] == 0.2 and data["input_output"]["output_over_input"] == 9
    assert data["dtypes"]["rtol"]["bf16"] == 2 ** -7 and data["statistics"]["first_diff_relative_err"] == {"NormRelativeErr": 0.4}
    with zipfile.ZipFile(tmp_path / "broken.whl", "w") as z:
        z.writestr(gen.CONST, "class CompareConst:\n    COS_THRESHOLD = 0.98\n")
    with pytest.raises((gen.Missing, KeyError)):
        gen.extract(tmp_path / "broken.whl")
