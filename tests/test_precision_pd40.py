"""Precision fixes of pd40 (session 28, issue 11; heldout31 TUNED). Code written afresh in the shape of heldout31's
false rows: a hypothesis test whose "cuda" examples `assume(...)` a GPU, a unit test comparing a built module's class
with `torch.nn.RReLU`, a texture baker's optimizer over one tensor, SDXL model configs whose `target:` classes the
tree never builds, a layer whose DeepSpeed kernel sits behind a flag the class sets only to False, and a CPU-lane
test calling an fbgemm op. Each class has a control that keeps its finding or severity."""
from __future__ import annotations

import pytest

from auditor.runner import run_static
from auditor.static.engine import StaticEngine
from tests.static_snippets import findings_by_line, line_of, write_tree


@pytest.fixture(scope="module")
def engine():
    from auditor.rules import load_rules
    return StaticEngine(load_rules())


def _at(engine, src, needle, rel="pkg/mod.py"):
    """(code, severity) of the findings on the line of `src` holding `needle`."""
    return {(f.code, f.severity) for f in findings_by_line(engine, src, rel).get(line_of(src, needle), [])}


HYPOTHESIS_TEST = """\
    import unittest

    import torch
    from hypothesis import assume, given, settings
    from hypothesis import strategies as st

    from tzrec.utils.test_util import gpu_unavailable


    class HSTUMatchTest(unittest.TestCase):
        @given(
            kernel=st.sampled_from(["pytorch", "triton"]),
            device_str=st.sampled_from(["cpu", "cuda"]),
        )
        @settings(max_examples=6, deadline=None)
        def test_hstu_match(self, kernel, device_str) -> None:
            # CUDA needs a GPU.
            if device_str == "cuda":
                assume(not gpu_unavailable[0])
            if kernel == "triton":
                assume(device_str == "cuda")
            device = torch.device(device_str)
            model = build_model().to(device)
            self.assertEqual(model(torch.ones(2, 4, device=device)).shape, (2, 4))


    class HSTUPickTest(unittest.TestCase):
        @given(device_str=st.sampled_from(["cpu", "cuda"]))
        def test_pick(self, device_str) -> None:
            if device_str == "cuda":
                assume(device_str != "cpu")
            model = build_model().to(torch.device(device_str))
"""


def test_a_cuda_example_a_hypothesis_test_assumes_a_gpu_for_is_a_warning(engine):
    assert ("NPU003", "warning") in _at(engine, HYPOTHESIS_TEST, 'device_str=st.sampled_from(["cpu", "cuda"]),',
                                        "tzrec/models/hstu_test.py")


def test_control_an_assume_that_probes_no_gpu_keeps_the_error(engine):
    assert ("NPU003", "error") in _at(engine, HYPOTHESIS_TEST, '@given(device_str=st.sampled_from(["cpu", "cuda"]))',
                                      "tzrec/models/hstu_test.py")


ACTIVATION_TEST = """\
    import unittest

    import torch

    from tzrec.modules.activation import create_activation


    class ActivationTest(unittest.TestCase):
        def test_create_activation(self):
            act_module = create_activation("nn.RReLU(lower=0.1)")
            self.assertEqual(act_module.__class__, torch.nn.RReLU)
            self.assertIsInstance(act_module, torch.nn.RReLU)
            assert type(act_module) is torch.nn.RReLU

"""

ACTIVATION = """\
    import torch


    def create_rrelu(lower):
        act = torch.nn.RReLU(lower=lower)
        assert type(act) is torch.nn.RReLU
        return act
"""


def test_a_class_compared_with_an_objects_class_builds_nothing(coverage_engine):
    src, rel = ACTIVATION_TEST, "tzrec/modules/activation_test.py"
    for needle in ("act_module.__class__, torch.nn.RReLU", "assertIsInstance(act_module", "type(act_module) is"):
        assert not {c for c, _ in _at(coverage_engine, src, needle, rel)} & {"NPU501", "NPU502"}, needle


def test_control_a_built_module_keeps_its_coverage_finding(coverage_engine):
    rel = "tzrec/modules/act.py"
    assert {c for c, _ in _at(coverage_engine, ACTIVATION, "act = torch.nn.RReLU(lower=lower)", rel)} & {"NPU502"}
    assert not {c for c, _ in _at(coverage_engine, ACTIVATION, "type(act) is", rel)} & {"NPU501", "NPU502"}


BAKER = """\
    import torch


    class UVProjection:
        def bake_weights(self, cameras, size, channels):
            for camera in cameras:
                zero_map = torch.zeros(size + (channels,), device=self.device, requires_grad=True)
                optimizer = torch.optim.SGD([zero_map], lr=1, momentum=0)
                optimizer.zero_grad()
                self.render(zero_map, camera).sum().backward()
                optimizer.step()

        def bake_all(self, views, size):
            bake_maps = [torch.zeros(size, device=self.device, requires_grad=True) for _ in views]
            optimizer = torch.optim.SGD(bake_maps, lr=1, momentum=0)
            group = {"params": bake_maps, "lr": 0.1}
            grouped = torch.optim.SGD([group], lr=1)
            return optimizer, grouped
"""


def test_an_optimizer_over_one_tensor_has_nothing_to_fuse(engine):
    assert "NPU600" not in {c for c, _ in _at(engine, BAKER, "torch.optim.SGD([zero_map]")}


def test_control_optimizers_over_many_tensors_or_a_group_keep_the_hint(engine):
    assert "NPU600" in {c for c, _ in _at(engine, BAKER, "torch.optim.SGD(bake_maps")}
    assert "NPU600" in {c for c, _ in _at(engine, BAKER, "torch.optim.SGD([group]")}


SDXL_YAML = """\
    model:
      target: sgm.models.diffusion.DiffusionEngine
      params:
        scale_factor: 0.13025
        network_config:
          target: sgm.modules.diffusionmodules.openaimodel.UNetModel
          params:
            adm_in_channels: 2560
            num_classes: sequential
            in_channels: 4
            spatial_transformer_attn_type: softmax-xformers
        first_stage_config:
          target: sgm.models.autoencoder.AutoencoderKLInferenceWrapper
          params:
            embed_dim: 4
            ddconfig:
              attn_type: vanilla-xformers
              double_z: true
"""

LOAD_MODEL = """\
    from diffusers import StableDiffusionXLPipeline


    def load_model(checkpoint, model_config):
        return StableDiffusionXLPipeline.from_single_file(checkpoint, original_config_file=model_config.original_config)
"""

OWN_LOADER = """\
    import importlib

    from omegaconf import OmegaConf


    def instantiate_from_config(config):
        module, cls = config["target"].rsplit(".", 1)
        return getattr(importlib.import_module(module), cls)(**config.get("params", dict()))


    def load(path):
        return instantiate_from_config(OmegaConf.load(path).model)
"""


def _yaml_findings(tmp_path, files):
    run = run_static([write_tree(tmp_path, files)], jobs=1)
    return {(f.line, f.code) for r in run.results if r.path.endswith(".yaml") for f in r.findings}


def test_an_attention_setting_under_a_target_nothing_builds_goes(tmp_path):
    files = {"sd_configs/sd_xl_base.yaml": SDXL_YAML, "generator/load_model.py": LOAD_MODEL}
    assert not {c for _, c in _yaml_findings(tmp_path, files)} & {"NPU363"}


def test_control_a_tree_that_builds_its_targets_keeps_the_setting(tmp_path):
    files = {"sd_configs/sd_xl_base.yaml": SDXL_YAML, "util.py": OWN_LOADER}
    assert "NPU363" in {c for _, c in _yaml_findings(tmp_path, files)}


EVO_LAYER = """\
    import torch
    from torch import nn


    class GatedCrossAttention(nn.Module):
        def __init__(self, c_a, n_head):
            super().__init__()
            self.n_head = n_head
            self.use_deepspeed_evo = False
            self.to_q = nn.Linear(c_a, c_a)

        def forward(self, q, k, v, bias):
            L = q.shape[-2]
            if not self.use_deepspeed_evo or L <= 24:
                a = torch.softmax(torch.einsum("...ihd,...jhd->...ijh", q, k) + bias, dim=-2)
                return torch.einsum("...ijh,...jhc->...ihc", a, v)
            else:
                from deepspeed.ops.deepspeed4science import DS4Sci_EvoformerAttention
                return DS4Sci_EvoformerAttention(q, k, v, [bias])


    class FusedBlock(nn.Module):
        fused = True

        def disable(self):
            self.fused = False

        def forward(self, q, k, v, bias):
            if self.fused:
                from deepspeed.ops.deepspeed4science import DS4Sci_EvoformerAttention
                return DS4Sci_EvoformerAttention(q, k, v, [bias])
            return q


    class TriangleAttention(nn.Module):
        def __init__(self, use_deepspeed_evo=True):
            super().__init__()
            self.use_deepspeed_evo = False
            self.use_kernel = False

        def forward(self, q, k, v, bias):
            if self.use_kernel:
                from deepspeed.ops.deepspeed4science import DS4Sci_EvoformerAttention
                return DS4Sci_EvoformerAttention(q, k, v, [bias])
            return torch.softmax(q @ k.transpose(-1, -2), dim=-1) @ v
"""

EVO_MODEL = """\
    from layers.attention import TriangleAttention


    def build(args):
        layer = TriangleAttention()
        layer.use_kernel = args.use_kernel
        return layer
"""


def _severities(tmp_path, files, rel, code):
    run = run_static([write_tree(tmp_path, files)], jobs=1)
    return {f.line: f.severity for r in run.results if r.path == rel for f in r.findings if f.code == code}


def test_a_kernel_behind_a_flag_the_class_sets_only_false_is_info(tmp_path):
    files = {"layers/__init__.py": "", "layers/attention.py": EVO_LAYER, "model.py": EVO_MODEL}
    found = _severities(tmp_path, files, "layers/attention.py", "NPU420")
    lines = [i for i, t in enumerate(EVO_LAYER.splitlines(), 1) if "from deepspeed.ops" in t]
    assert found[lines[0]] == "info"         # `self.use_deepspeed_evo = False`, never set True
    assert found[lines[1]] == "warning"      # control: a class attribute `fused = True`, set False by a method
    assert found[lines[2]] == "warning"      # control: `layer.use_kernel = args.use_kernel` in another file


HOST_OPS_TEST = """\
    import unittest

    import torch


    class HSTUAttentionTest(unittest.TestCase):
        def test_sla_on_cpu(self) -> None:
            lengths = torch.tensor([5, 7], dtype=torch.int64)
            seq_offsets = torch.ops.fbgemm.asynchronous_complete_cumsum(lengths)
            q = torch.randn(int(seq_offsets[-1].item()), 2, 16)
            self.assertEqual(q.shape[1], 2)

        def test_on_gpu(self) -> None:
            lengths = torch.tensor([5, 7], dtype=torch.int64, device=torch.device("cuda"))
            offsets = torch.ops.fbgemm.asynchronous_complete_cumsum(lengths)
            self.assertEqual(offsets.shape, (3,))
"""


def test_a_custom_op_in_a_test_that_places_nothing_goes(engine):
    rel = "tzrec/ops/hstu_attention_test.py"
    assert "NPU380" not in {c for c, _ in _at(engine, HOST_OPS_TEST, "seq_offsets = torch.ops.fbgemm", rel)}
    assert "NPU380" in {c for c, _ in _at(engine, HOST_OPS_TEST, " offsets = torch.ops.fbgemm", rel)}   # control
