"""The apex family on realistic training code: every Apex entry point a port touches is reported once, on the
right line, with its substitute; comments, docstrings and messages that mention Apex are not."""
from __future__ import annotations

import json
import re
import textwrap

import pytest

from auditor.data import rules_dir, tables_dir
from auditor.rules import load_rules
from auditor.static import StaticEngine

ENGINE = StaticEngine(load_rules())
MY_FILES = ("apex.yaml", "apex_optimizers.yaml", "attention.yaml", "kernel.yaml", "kernel_ops.yaml",
            "third_party.yaml", "third_party_deepspeed.yaml")


def audit(source: str, name: str = "train.py") -> dict[int, list]:
    """Findings by line for a dedented source."""
    result = ENGINE.analyze_bytes(textwrap.dedent(source).encode(), name)
    assert result.error is None, result.error
    by_line: dict[int, list] = {}
    for f in result.findings:
        by_line.setdefault(f.line, []).append(f)
    return by_line


def codes(by_line: dict[int, list], family: str = "") -> dict[int, list[str]]:
    """Codes by line; `family="NPU4"` keeps only those codes (other families may stack a second finding)."""
    out = {line: sorted(f.code for f in fs if f.code.startswith(family)) for line, fs in by_line.items()}
    return {line: cs for line, cs in out.items() if cs}


APEX_TRAINER = '''\
import torch
try:
    import apex.amp as apex_amp
    from apex.optimizers import FusedAdam, FusedLAMB as Lamb
    from apex.normalization import FusedRMSNorm
except ImportError:  # apex is optional: fall back to torch
    apex_amp = None


class Trainer:
    """Wraps apex.amp.initialize and FusedAdam (docstring: not a use)."""

    def __init__(self, model, cfg):
        self.norm = FusedRMSNorm(cfg.hidden, eps=1e-6)
        opt = FusedAdam(model.parameters(), lr=cfg.lr, weight_decay=0.1)
        self.model, self.opt = apex_amp.initialize(model, opt, opt_level="O2")
        print("using apex amp O2 with FusedAdam")

    def step(self, loss):
        with apex_amp.scale_loss(loss, self.opt) as scaled:
            scaled.backward()
        torch.nn.utils.clip_grad_norm_(apex_amp.master_params(self.opt), 1.0)

    def state(self):
        return {"amp": apex_amp.state_dict()}
'''


def test_apex_trainer_lines_and_categories():
    found = audit(APEX_TRAINER)
    assert codes(found) == {
        3: ["NPU300"], 4: ["NPU310", "NPU310"], 5: ["NPU301"],
        14: ["NPU301"], 15: ["NPU310"], 16: ["NPU300"],
        20: ["NPU300"], 22: ["NPU300"], 25: ["NPU300"],
    }
    assert all(f.category == "apex" for fs in found.values() for f in fs)


def test_apex_substitutions_name_the_twin():
    found = audit(APEX_TRAINER)
    adam = found[15][0]
    assert adam.symbol == "apex.optimizers.FusedAdam"
    # apex's FusedAdam defaults to adam_w_mode=True: the generated twin is the AdamW flavour
    assert "torch_npu.optim.NpuFusedAdamW" in adam.substitution
    assert "adam_w_mode=False" in adam.substitution and "NpuFusedAdam`" in adam.substitution
    lamb = [f for f in found[4] if f.symbol.endswith("FusedLAMB")][0]
    assert "torch_npu.optim.NpuFusedLamb" in lamb.substitution
    assert "scaler.scale(loss).backward()" in found[20][0].substitution
    assert "torch_npu.npu_rms_norm" in found[14][0].substitution


def test_apex_autograd_function_apply_and_extensions():
    found = codes(audit('''\
        import amp_C
        import fused_layer_norm_cuda
        from apex.multi_tensor_apply import multi_tensor_applier
        from apex.normalization.fused_layer_norm import FusedLayerNormAffineFunction

        def norm(x, w, b, shape, eps):
            return FusedLayerNormAffineFunction.apply(x, w, b, shape, eps)

        def grad_norm(grads, buf):
            return multi_tensor_applier(amp_C.multi_tensor_l2norm, buf, [grads], False)
    '''))
    # fused_layer_norm_cuda is also a compiled CUDA extension by its name (NPU379, kernel, stacked)
    assert found == {1: ["NPU304"], 2: ["NPU301", "NPU379"], 3: ["NPU304"], 4: ["NPU301"], 7: ["NPU301"],
                     10: ["NPU304", "NPU304"]}


def test_apex_attribute_chains_through_the_package():
    found = audit('''\
        import apex
        register(apex.normalization.MixedFusedLayerNorm)(patched)
        model = apex.parallel.DistributedDataParallel(model)
        from apex.transformer import parallel_state
        from apex.contrib.xentropy import SoftmaxCrossEntropyLoss
    ''')
    assert codes(found) == {1: ["NPU306"], 2: ["NPU301"], 3: ["NPU302"], 4: ["NPU303"], 5: ["NPU305"]}
    assert "torch.nn.parallel.DistributedDataParallel" in found[3][0].substitution
    assert "cross_entropy" in found[5][0].substitution


def test_apex_mentions_outside_code_are_quiet():
    found = audit('''\
        # We used to call apex.amp.initialize(model, opt) here.
        def f():
            """apex.optimizers.FusedAdam is faster on V100."""
            logger.warning("apex.amp is deprecated, use torch.autocast")
            raise ImportError("please install apex from github.com/NVIDIA/apex")
        HAS_APEX = importlib.util.find_spec("apex") is not None
    ''')
    # comments, docstrings and messages are quiet; the last line is code that checks for apex: NPU395 reads the
    # `find_spec("apex")` look-up (t14z's shared look-up callnames), and the package name it looks up is reported with
    # the call, not again by NPU318 (tq46b: one finding for one look-up)
    assert {line: sorted(f.code for f in fs) for line, fs in found.items()} == {6: ["NPU395"]}


def test_generated_optimizer_rule_records_its_sources():
    rule = next(r for r in load_rules() if r.code == "NPU310")
    assert "rules/gen/apex_optimizers.py" in rule.source_note and "torch_npu" in rule.source_note
    # the twins the generator found, read back from the rule (no twin for NovoGrad anywhere)
    assert rule.symbols["apex.optimizers.FusedSGD"].replace == "torch_npu.optim.NpuFusedSGD"
    assert "no equivalent on Ascend" in rule.symbols["apex.optimizers.FusedNovoGrad"].substitution


# torch_npu names our substitutions cite that are modules or classes outside the custom-op pages; each was
# read from the torch_npu 2.14.0 wheel (torch_npu/optim/__init__.py, torch_npu/utils/cpp_extension.py).
_NOT_IN_OP_PAGES = {"torch_npu.utils.cpp_extension.NpuExtension"}


@pytest.mark.parametrize("file_name", MY_FILES)
def test_cited_torch_npu_names_exist(file_name):
    """Every torch_npu.* name a substitution cites is a documented torch_npu API (op_tables/custom_ops.json,
    built from the op-plugin custom_APIs pages) or a module holding one."""
    known = set(json.loads((tables_dir() / "custom_ops.json").read_text())["ops"]) | _NOT_IN_OP_PAGES
    text = (rules_dir() / file_name).read_text()
    unknown = []
    for name, star in sorted(set(re.findall(r"(torch_npu(?:\.[A-Za-z_][A-Za-z0-9_]*)+)(\*?)", text))):
        prefix = name if star else name + "."      # `NpuFused*` names a family, `torch_npu.optim` a module
        if name not in known and not any(k.startswith(prefix) for k in known):
            unknown.append(name + star)
    assert not unknown, f"{file_name} cites torch_npu names no source documents: {unknown}"
