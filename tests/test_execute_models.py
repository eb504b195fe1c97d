"""Done-when of issue 7: a tiny GPT and a ResNet-18 get per-module verdicts for bf16 and fp16 in < 60 s.

Each case runs the full path (child process, golden and candidate steps, own-error re-runs). The four cases
take 20-60 s each on a 2-core machine, so they run (and the 60 s limit is asserted) when NPU_AUDIT_SLOW=1;
the GPT bf16 case always runs.
"""
import os
import time
from pathlib import Path

import pytest

from auditor.execute import execute_findings
from auditor.target import Target

FIXTURES = Path(__file__).parent / "fixtures" / "execute"
SLOW = os.environ.get("NPU_AUDIT_SLOW") == "1"
CASES = [("tiny_gpt", "bf16")] + [(m, a) for m in ("tiny_gpt", "resnet18") for a in ("bf16", "fp16")
                                  if (m, a) != ("tiny_gpt", "bf16") and SLOW]
LEAVES = {"tiny_gpt": ("blocks.0.attn.qkv", "blocks.3.mlp.fc", "lm_head", "ln_f"),
          "resnet18": ("conv1", "layer1.0.conv1", "layer4.1.bn2", "fc")}


@pytest.mark.parametrize("model,amp", CASES)
def test_real_models_get_per_module_verdicts(model, amp):
    started = time.perf_counter()
    findings, errors, section = execute_findings(
        FIXTURES / f"{model}.py", root=FIXTURES, entry=None, hf_config=None, amp=amp, timeout=300,
        device="cpu", target=Target("v2.14", "a2"))
    elapsed = time.perf_counter() - started
    assert not errors
    rows = {r["module"]: r for r in section["rows"]}
    for leaf in LEAVES[model]:
        assert rows[leaf]["own"] == "pass", rows[leaf]   # every layer is merely rounded
        assert rows[leaf]["output"] == "pass", rows[leaf]
    # Nothing is blamed on a module: the models are well built; only gradient notes may appear.
    assert not [f for f in findings if f.code in ("NPU280", "NPU281")]
    if model == "tiny_gpt" and amp == "fp16":
        # fp16 without loss scaling: tiny logit gradients fall below fp16's range (GradScaler advice).
        assert any(f.code == "NPU282" and "GradScaler" in (f.substitution or "") for f in findings)
    own = [r["own_error_x_tol"] for r in section["rows"] if r["own_error_x_tol"] is not None]
    print(f"{model} {amp}: {elapsed:.1f} s wall, {section['timings_s']}, max own error {max(own):.2f}x, "
          f"{section['counts']}, findings {sorted({f.code for f in findings})}")
    if SLOW:  # the timing claim is checked in the measurement run, not on every loaded CI box
        assert elapsed < 60, f"{model} {amp}: {elapsed:.1f} s"
