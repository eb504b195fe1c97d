"""Precision fixes of t17b (session 17): heldout20's and heldout19's false classes (both TUNED ON). The code below is
written afresh in the shape of the classes, not copied from the bench trees; each fix has a control that keeps the
finding.

- a device default `'cuda' if torch.cuda.is_available() else 'cpu'` that every caller in the tree overrides: the
  gate made it a warning, and it is still a default no caller lets through (policy (f)): info;
- `if "e5m2" in name: return torch.float8_e5m2`: a substring test of a dtype NAME (policy (a)); a test of
  something else keeps the choice;
- `cache.bfloat16() if dtype == torch.bfloat16 else cache.half()`: casts that follow a dtype tested (policy (a2));
  a cast under a test of something else keeps its finding.
"""
from __future__ import annotations

import pytest

from auditor.rules import load_rules
from auditor.runner import run_static
from auditor.static.engine import StaticEngine
from tests.static_snippets import line_of as _line, findings_by_line, write_tree


@pytest.fixture(scope="module")
def engine():
    return StaticEngine(load_rules())


LOADER = """\
    from typing import Union

    import torch


    def load_clip_model(model_path: str,
                        device: Union[str, torch.device] = "cuda" if torch.cuda.is_available() else "cpu",
                        jit: bool = False):
        model = torch.jit.load(model_path, map_location=device) if jit else torch.load(model_path, map_location=device)
        return model.to(device).eval()
"""

ENCODER = """\
    from clip_srv.loader import load_clip_model


    class ClipEncoder:
        def __init__(self, path, device="cpu"):
            self.model = load_clip_model(path, device=device, jit=True)
"""


def test_gated_default_every_caller_overrides_is_info(tmp_path):
    files = {"clip_srv/__init__.py": "", "clip_srv/loader.py": LOADER, "clip_srv/encoder.py": ENCODER}
    run = run_static([write_tree(tmp_path / "srv", files)], jobs=1)
    found = {r.path: r.findings for r in run.results}["clip_srv/loader.py"]
    line = _line(LOADER, 'device: Union[str, torch.device] = "cuda"')
    device = [f for f in found if f.line == line and f.code == "NPU003"]
    assert device and all(f.severity == "info" for f in device)
    assert all("every caller in this tree passes this argument" in f.message for f in device)


def test_gated_default_with_a_caller_that_lets_it_through_keeps_the_warning(tmp_path):
    lets_through = ENCODER.replace("load_clip_model(path, device=device, jit=True)", "load_clip_model(path)")
    files = {"clip_srv/__init__.py": "", "clip_srv/loader.py": LOADER, "clip_srv/encoder.py": lets_through}
    run = run_static([write_tree(tmp_path / "srv", files)], jobs=1)
    found = {r.path: r.findings for r in run.results}["clip_srv/loader.py"]
    line = _line(LOADER, 'device: Union[str, torch.device] = "cuda"')
    assert any(f.line == line and f.code == "NPU003" and f.severity == "warning" for f in found)


STRING_TO_DTYPE = """\
    import torch


    def parse_dtype(name="auto"):
        name = name.lower().strip()
        if name in ("bf16", "bfloat16"):
            return torch.bfloat16
        elif "fp8" in name or "float8" in name:
            if "e5m2" in name:
                return torch.float8_e5m2
            elif "e4m3" in name:
                return torch.float8_e4m3fn
            raise ValueError(f"unknown fp8 format {name!r}")
        return torch.float32


    def weight_dtype(device_name):
        if "H100" in device_name:
            return torch.float8_e4m3fn
        return torch.bfloat16


    def vae_dtype(precision):
        if "fp8" in precision:
            vae = torch.bfloat16
        else:
            vae = parse_dtype(precision)
        return vae
"""


def test_substring_test_of_a_dtype_name_chooses_nothing(engine):
    found = findings_by_line(engine, STRING_TO_DTYPE, "nodes/dtypes.py")
    for needle in ("return torch.float8_e5m2", "return torch.float8_e4m3fn\n            raise"):
        line = _line(STRING_TO_DTYPE, needle.split("\n")[0]) if "raise" not in needle else \
            _line(STRING_TO_DTYPE, "elif \"e4m3\" in name") + 1
        assert not [f for f in found.get(line, []) if f.category == "precision"], (needle, found.get(line))
    # the control: a GPU model name tested is a choice of fp8 made here
    chosen = _line(STRING_TO_DTYPE, 'if "H100" in device_name') + 1
    assert any(f.code == "NPU203" for f in found.get(chosen, []))
    # and a dtype other than the one the name spells is a choice made here (bf16 for the VAE of an fp8 model)
    other = _line(STRING_TO_DTYPE, "vae = torch.bfloat16")
    assert any(f.code == "NPU201" for f in found.get(other, []))


ROTARY = """\
    import torch


    class RotaryEmbedding(torch.nn.Module):
        def forward_impl(self, seq_len, n_elem, dtype, device, base=10000):
            theta = 1.0 / (base ** (torch.arange(0, n_elem, 2, dtype=torch.float, device=device) / n_elem))
            idx_theta = torch.outer(torch.arange(seq_len, dtype=torch.float, device=device), theta).float()
            cache = torch.stack([torch.cos(idx_theta), torch.sin(idx_theta)], dim=-1)
            if dtype in (torch.float16, torch.bfloat16, torch.int8):
                cache = cache.bfloat16() if dtype == torch.bfloat16 else cache.half()
            return cache

        def low_memory(self, cache, big):
            return cache.half() if big == True else cache.float()
"""


def test_casts_following_a_tested_dtype_choose_nothing(engine):
    found = findings_by_line(engine, ROTARY, "kolors/chatglm/modeling_chatglm.py")
    line = _line(ROTARY, "cache = cache.bfloat16() if dtype")
    assert not [f for f in found.get(line, []) if f.category == "precision"], found.get(line)
    # the control: a cast under a test of something other than a dtype is a choice
    chosen = _line(ROTARY, "return cache.half() if big")
    assert any(f.code == "NPU202" for f in found.get(chosen, []))


DEPLOY = """\
    def deploy(finetuned, hpus_per_worker, cpus_per_worker):
        deploy_conf = finetuned.copy(deep=True)
        if hpus_per_worker > 0:
            deploy_conf.device = "hpu"
            deploy_conf.hpus_per_worker = hpus_per_worker
            deploy_conf.precision = "bf16"
        else:
            deploy_conf.device = "cpu"
            deploy_conf.ipex.precision = "bf16"
        deploy_conf.cpus_per_worker = cpus_per_worker
        return deploy_conf
"""


def test_precision_set_in_the_arm_that_places_the_object_on_the_cpu_is_a_host_value(engine):
    found = findings_by_line(engine, DEPLOY, "app/ui/deploy.py")
    cpu_arm = _line(DEPLOY, 'deploy_conf.ipex.precision = "bf16"')
    assert not [f for f in found.get(cpu_arm, []) if f.category == "precision"], found.get(cpu_arm)
    # the control: the accelerator arm's bf16 is still reported
    accel_arm = _line(DEPLOY, 'deploy_conf.precision = "bf16"')
    assert any(f.code == "NPU201" for f in found.get(accel_arm, []))
