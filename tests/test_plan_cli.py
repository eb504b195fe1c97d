"""`audit plan` end to end: the JSON contract, the console and Markdown reports, clear errors."""
from __future__ import annotations

import json
from pathlib import Path

from auditor.cli import main

FIX = Path(__file__).parent / "fixtures" / "plan"
TINY = Path(__file__).parent / "fixtures" / "trace" / "tiny_llama.json"


def run(capsys, *argv):
    code = main(["plan", *argv])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_clusters_lists_the_required_profiles(capsys):
    code, out, _ = run(capsys, "--clusters")
    assert code == 0
    for name in ("a100-80g", "h100", "atlas-800t-a2", "cloudmatrix384", "atlas-950-superpod", "atlas-960-superpod"):
        assert name in out
    code, out, _ = run(capsys, "--clusters", "--format", "json")
    assert {c["name"] for c in json.loads(out)} >= {"h800", "gb200-nvl72"}


def test_json_contract(capsys):
    code, out, _ = run(capsys, "--hf-config", str(FIX / "llama3.1-8b.json"), "--seq-len", "4096",
                       "--global-batch", "256", "--cluster", "atlas-800t-a2:64", "--compare", "h100:64",
                       "--trace-facts", "off", "--format", "json")
    assert code == 0
    r = json.loads(out)
    assert r["model"]["parameters"] == 8030261248
    assert r["model"]["flops_per_step"] == r["model"]["flops_per_step_closed_form"] > 0
    assert r["cluster"]["name"] == "atlas-800t-a2" and r["compare"]["cluster"]["name"] == "h100"
    for layout in r["layouts"] + r["compare"]["layouts"]:
        for key in ("dp", "tp", "pp", "cp", "ep", "zero", "recompute", "micro_batch", "fits", "step_time_s", "mfu",
                    "tokens_per_s", "bound_by"):
            assert key in layout
        assert set(layout["memory_gib"]) == {"weights", "grads", "optimizer", "activations", "total"}
        assert set(layout["comm_gib_per_step"]) == {"tp", "cp", "ep", "pp", "dp"}
        assert layout["dp"] * layout["tp"] * layout["pp"] * layout["cp"] == 64
    assert r["assumptions"]["bytes_per_param"] == {"weights": 2, "grads": 2, "optimizer": 12}
    assert any("no bf16 peak" in n for n in r["notes"])      # the 910B has a published FP16 peak only


def test_one_layout_console_and_markdown(capsys):
    args = ["--hf-config", str(FIX / "gpt3-175b.json"), "--seq-len", "2048", "--global-batch", "1536",
            "--cluster", "a100-80g:1024", "--layout", "dp=16,tp=8,pp=8,zero=1,recompute=selective",
            "--trace-facts", "off"]
    code, out, _ = run(capsys, *args)
    assert code == 0 and "Megatron-LM 2021" in out and "Korthikanti" in out and "assumptions" in out
    code, md, _ = run(capsys, *args, "--format", "markdown")
    assert code == 0 and md.startswith("## audit plan") and "| dp | tp | pp |" in md


def test_moe_plan_on_a_super_node(capsys):
    code, out, _ = run(capsys, "--hf-config", str(FIX / "mixtral-8x7b.json"), "--seq-len", "4096",
                       "--global-batch", "384", "--cluster", "cloudmatrix384", "--format", "json")
    assert code == 0
    r = json.loads(out)
    assert r["model"]["moe"]["experts"] == 8 and r["model"]["active_parameters"] < r["model"]["parameters"]
    assert any("MoE model" in n for n in r["notes"])
    assert r["layouts"][0]["fits"]


def test_measured_trace_agrees_with_the_closed_form(capsys):
    code, out, _ = run(capsys, "--hf-config", str(TINY), "--seq-len", "128", "--global-batch", "8",
                       "--cluster", "h100:8", "--format", "json")
    assert code == 0
    m = json.loads(out)["model"]
    assert m["measured"]["parameters"] == m["parameters"]
    # the tiny config is fp32 and ties nothing: the trace's matmul FLOPs equal the closed form
    assert abs(m["flops_per_step_measured"] / m["flops_per_step"] - 1) < 0.01
    assert 0 <= m["intensity"]["h100"]["compute_bound_share"] <= 1


def test_bad_input_is_a_clear_error(capsys, tmp_path):
    code, _, err = run(capsys, "--hf-config", str(FIX / "llama3.1-8b.json"), "--cluster", "nope")
    assert code == 2 and "unknown cluster" in err
    code, _, err = run(capsys, "--hf-config", str(FIX / "llama3.1-8b.json"), "--cluster", "h100:64",
                       "--layout", "dp=3,tp=8,pp=1", "--trace-facts", "off")
    assert code == 2 and "devices" in err
    code, _, err = run(capsys, "--hf-config", str(FIX / "llama3.1-8b.json"), "--cluster", "h100:64",
                       "--layout", "tp=eight")
    assert code == 2 and "whole number" in err
    bad = tmp_path / "a.yaml"
    bad.write_text("efficency: {compute: 0.5}\n")
    code, _, err = run(capsys, "--hf-config", str(FIX / "llama3.1-8b.json"), "--cluster", "h100",
                       "--assumptions", str(bad), "--trace-facts", "off")
    assert code == 2 and "unknown keys" in err
    code, _, err = run(capsys, "--cluster", "h100")
    assert code == 2 and "--hf-config" in err


def test_assumptions_file_changes_the_answer(capsys, tmp_path):
    base = ["--hf-config", str(FIX / "llama3.1-8b.json"), "--cluster", "h100:8", "--trace-facts", "off",
            "--layout", "dp=8,tp=1,pp=1,zero=1,recompute=full", "--format", "json"]
    _, out, _ = run(capsys, *base)
    slow = tmp_path / "slow.yaml"
    slow.write_text("efficiency: {compute: 0.375}\n")
    _, out2, _ = run(capsys, *base, "--assumptions", str(slow))
    a, b = json.loads(out)["layouts"][0], json.loads(out2)["layouts"][0]
    assert b["step_time_s"] > 1.5 * a["step_time_s"]
    assert json.loads(out2)["assumptions"]["efficiency"]["hbm"] == 0.8   # untouched keys keep their defaults


def test_audit_entry_file_is_planned_from_its_trace(capsys):
    entry = Path(__file__).parent / "fixtures" / "trace" / "handwritten_llm.py"
    code, out, _ = run(capsys, str(entry), "--cluster", "cloudmatrix384:16", "--global-batch", "256",
                       "--format", "json")
    assert code == 0
    r = json.loads(out)
    m = r["model"]
    assert m["parameters"] > 0 and m["flops_per_step"] > 0 and m["source"].startswith("fake-tensor trace")
    assert all(l["tp"] == l["pp"] == 1 and l["dp"] == 16 for l in r["layouts"])
    assert any("data parallelism and ZeRO only" in n for n in r["notes"])
    code, _, err = run(capsys, str(entry), "--cluster", "cloudmatrix384:16", "--layout", "tp=2")
    assert code == 2 and "--hf-config" in err


def test_architectures_without_a_closed_form_say_so(capsys, tmp_path):
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"model_type": "deepseek_v3", "hidden_size": 7168, "num_hidden_layers": 61,
                                  "num_attention_heads": 128, "vocab_size": 129280, "kv_lora_rank": 512}))
    code, _, err = run(capsys, "--hf-config", str(config), "--cluster", "cloudmatrix384")
    assert code == 2 and "latent attention" in err
