"""Precision fixes of t17d (session 17): the false classes of the tuned_t17d sample (Stable Diffusion web UIs,
Fooocus forks, ComfyUI_TensorRT). The code below is written afresh in the shape of the classes, not copied from the
bench trees; each fix has a control that keeps the finding.

- a name taken out of a list (`imports.remove("flash_attn")`, Florence-2's get_imports workaround) selects nothing;
- a branch that casts to the dtype its `==` test found (`if dtype == torch.float16: return value.to(dtype=
  torch.float16)`, ComfyUI's stochastic_rounding) copies the caller's dtype (policy (a2));
- a torch.nn module class named only as a type (a key of a class-to-hook table, the class of an `isinstance`) runs no
  op: no NPU501 / NPU502;
- the `nvidia` conda channel of an environment whose dependencies install nothing CUDA is info;
- a `map_location="cuda"` default that every caller overrides is info (policy (f)), like a `device` default.
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


FLORENCE = """\
    from unittest.mock import patch

    from transformers import AutoModelForCausalLM
    from transformers.dynamic_module_utils import get_imports


    def fixed_get_imports(filename):
        imports = get_imports(filename)
        if "flash_attn" in imports:
            imports.remove("flash_attn")
        return imports


    def load_florence(path, fast):
        with patch("transformers.dynamic_module_utils.get_imports", fixed_get_imports):
            impl = "flash_attn" if fast else "sdpa"
            return AutoModelForCausalLM.from_pretrained(path, attn_implementation=impl, trust_remote_code=True)
"""


def test_name_removed_from_a_list_selects_nothing(engine):
    found = findings_by_line(engine, FLORENCE, "nodes/florence.py")
    assert not found.get(_line(FLORENCE, 'imports.remove("flash_attn")'))
    # the control: the same name chosen as the attention implementation keeps its finding
    assert any(f.code == "NPU386" for f in found.get(_line(FLORENCE, 'impl = "flash_attn"'), []))


ROUNDING = """\
    import torch


    def stochastic_rounding(value, dtype, seed=0):
        if dtype == torch.float32:
            return value.to(dtype=torch.float32)
        if dtype == torch.float16:
            return value.to(dtype=torch.float16)
        if dtype == torch.bfloat16:
            return value.to(dtype=torch.bfloat16)
        return value


    def to_compute(x, fast):
        if fast:
            return x.to(torch.bfloat16)
        return x
"""


def test_cast_to_the_dtype_the_branch_tested_chooses_nothing(engine):
    found = findings_by_line(engine, ROUNDING, "comfy/float.py")
    for needle in ("value.to(dtype=torch.float16)", "value.to(dtype=torch.bfloat16)"):
        assert not [f for f in found.get(_line(ROUNDING, needle), []) if f.category == "precision"], needle
    # the control: a cast under a test of something else chooses bf16
    assert any(f.code == "NPU201" for f in found.get(_line(ROUNDING, "return x.to(torch.bfloat16)"), []))


FLOPS = """\
    import torch.nn as nn


    def pool_flops_counter_hook(module, input, output):
        module.__flops__ += int(input[0].numel())


    MODULES_MAPPING = {
        nn.AvgPool2d: pool_flops_counter_hook,
        nn.MaxPool3d: pool_flops_counter_hook,
        nn.AdaptiveMaxPool1d: pool_flops_counter_hook,
    }


    def is_pool(m):
        return isinstance(m, (nn.MaxPool3d, nn.AdaptiveMaxPool1d))


    def build(dim):
        return nn.MaxPool3d(2)
"""


def test_module_class_named_as_a_type_runs_no_op(coverage_engine):
    found = findings_by_line(coverage_engine, FLOPS, "mmcv/cnn/utils/flops_counter.py")
    coverage = {"NPU501", "NPU502"}
    for needle in ("nn.MaxPool3d: pool_flops", "nn.AdaptiveMaxPool1d: pool_flops", "return isinstance(m"):
        assert not [f for f in found.get(_line(FLOPS, needle), []) if f.code in coverage], needle
    # the control: building the layer keeps the coverage finding
    assert any(f.code in coverage for f in found.get(_line(FLOPS, "return nn.MaxPool3d(2)"), []))


ENV_NO_CUDA = """\
    name: fooocus
    channels:
      - pytorch
      - nvidia
      - defaults
    dependencies:
      - python=3.10
      - pip=23
      - packaging
"""

ENV_TORCH = ENV_NO_CUDA + "      - pytorch\n"
ENV_CUDA = ENV_NO_CUDA + "      - pytorch-cuda=12.1\n"


def test_cuda_channel_that_serves_no_dependency_is_info(engine):
    for src, severity in ((ENV_NO_CUDA, "info"), (ENV_TORCH, "error"), (ENV_CUDA, "error")):
        found = findings_by_line(engine, src, "environment.yaml")
        hits = [f for f in found.get(_line(src, "- nvidia"), []) if f.code == "NPU018"]
        assert hits and all(f.severity == severity for f in hits), (src, [(f.code, f.severity) for f in hits])


TRAINERS = """\
    import torch


    def load_checkpoint(train_config, path, map_location="cuda", strict=True):
        model = build(train_config)
        state = torch.load(path, map_location=map_location)
        model.load_state_dict(state, strict=strict)
        return model


    def build(train_config):
        return torch.nn.Linear(4, 4)
"""

INPAINT = """\
    import os

    from lama.trainers import load_checkpoint


    def load_model(cfg, model_path):
        return load_checkpoint(cfg, os.path.abspath(model_path), strict=False, map_location="cpu")
"""

RESTORE = """\
    from lama.trainers import load_checkpoint


    def restore(cfg, path):
        return load_checkpoint(cfg, path)
"""


def test_map_location_default_every_caller_overrides_is_info(tmp_path):
    files = {"lama/__init__.py": "", "lama/trainers.py": TRAINERS, "scripts/inpaint.py": INPAINT}
    run = run_static([write_tree(tmp_path / "one", files)], jobs=1)
    found = [f for r in run.results if r.path == "lama/trainers.py" for f in r.findings
             if f.line == _line(TRAINERS, 'map_location="cuda"')]
    assert found and all(f.severity == "info" and "policy (f)" in f.message for f in found)
    # the control: a caller that lets the default through keeps it at its severity
    files["scripts/restore.py"] = RESTORE
    run = run_static([write_tree(tmp_path / "two", files)], jobs=1)
    found = [f for r in run.results if r.path == "lama/trainers.py" for f in r.findings
             if f.line == _line(TRAINERS, 'map_location="cuda"')]
    assert found and any(f.severity == "error" for f in found)


DOWNLOAD = """\
    import os

    import torch
    from transformers import T5ForConditionalGeneration, T5Tokenizer


    def download_models(model_dir):
        name = "roborovski/superprompt-v1"
        tokenizer = T5Tokenizer.from_pretrained(name)
        model = T5ForConditionalGeneration.from_pretrained(name, torch_dtype=torch.float16)
        os.makedirs(model_dir, exist_ok=True)
        tokenizer.save_pretrained(model_dir)
        model.save_pretrained(model_dir)
"""


def test_download_script_that_saves_a_host_copy_has_no_dtype_hints(engine):
    needle = "torch_dtype=torch.float16"
    found = findings_by_line(engine, DOWNLOAD, "superprompter/download_models.py")
    assert not [f for f in found.get(_line(DOWNLOAD, needle), []) if f.category == "precision"]
    # the control: the same code that moves the model to a device keeps the hint
    moved = DOWNLOAD.replace("    model.save_pretrained(model_dir)", "    model.to(\"cuda\").save_pretrained(model_dir)")
    found = findings_by_line(engine, moved, "superprompter/download_models.py")
    assert [f for f in found.get(_line(moved, needle), []) if f.category == "precision"]
