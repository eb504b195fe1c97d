"""tq56d (session 56; TUNED on heldout75's trees 5-8): host values (policy (e)), fp32 regions in the CUDA
spelling of autocast (decision (w)), a script its folder's README runs read as no stale copy (decision (t)). Each
shape on code like the trees it came from, beside a control that keeps its finding."""
from __future__ import annotations

import textwrap

import pytest

from tests.static_snippets import dedented_tree, severity_at
from tests.test_tq46b import NEW_MODEL, OLD_MODEL, PIPELINE, SETUP, UTILS

# guided-diffusion's attention FLOP counter for thop, as latent-diffusion copies carry it
_THOP = """
    import numpy as np
    import torch as th


    def count_flops_attn(model, _x, y):
        b, c, *spatial = y[0].shape
        num_spatial = int(np.prod(spatial))
        matmul_ops = 2 * b * (num_spatial ** 2) * c
        model.total_ops += th.DoubleTensor([matmul_ops])


    def accumulate(stats, ops):
        stats.total = stats.total + th.DoubleTensor([ops]).cuda()
"""


# xitorch's Runge-Kutta solvers: float64 tableaux as class constants, converted by the base's __init__
_RK = """
    import torch


    class RKAdaptiveStepSolver:
        A: torch.Tensor
        B: torch.Tensor
        C: torch.Tensor

        def __init__(self, fcn, t0, y0, order):
            self.dtype = y0.dtype
            self.device = y0.device
            self.A = self.A.to(self.dtype).to(self.device)
            self.B = self.B.to(self.dtype).to(self.device)
            self.C = self.C.to(self.dtype).to(self.device)


    class RK23(RKAdaptiveStepSolver):
        C = torch.tensor([0, 1 / 2, 3 / 4], dtype=torch.float64)
        A = torch.tensor([[0, 0], [1 / 2, 0], [0, 3 / 4]], dtype=torch.float64)
        B = torch.tensor([2 / 9, 1 / 3, 4 / 9], dtype=torch.float64)
        E = torch.tensor([5 / 72, -1 / 12, -1 / 9, 1 / 8], dtype=torch.float64)
"""


# an atomic-number mapper: the bad values are read only to word the error
_MAPPER = """
    import torch


    class OrbitalMapper:
        def transform_bond(self, iatomic_numbers, jatomic_numbers):
            if iatomic_numbers.min() < self._min_Z or iatomic_numbers.max() > self._max_Z:
                bad_set = set(torch.unique(iatomic_numbers).cpu().tolist()) - self._valid_set
                raise ValueError(f"Data included atomic numbers {bad_set} that are not in the mapping!")
            kinds = torch.unique(jatomic_numbers)
            return self.bond_types[kinds]
"""


# (file, snippet, code, the line whose hint goes, the control line that keeps it)
_ONE_FILE = [
    # the DoubleTensor added to thop's counter, and one moved to the device
    ("ldm/attention.py", _THOP, "NPU208", "model.total_ops +=", "stats.total ="),
    # the converted tableau A, and E, never converted on the instance (it may be used as float64 wherever it goes)
    ("xitorch/ivp/adaptive_rk.py", _RK, "NPU208", "A = torch.tensor(", "E = torch.tensor("),
    # the values read to word the raise, and the same op on the path that returns
    ("dptb/data/transforms.py", _MAPPER, "NPU702", "bad_set = ", "kinds = "),
]


@pytest.mark.parametrize(("rel", "src", "code", "gone", "kept"), _ONE_FILE)
def test_host_value_hint_goes_and_its_control_keeps_it(tmp_path, rel, src, code, gone, kept):
    found = dedented_tree(tmp_path, {rel: src})
    assert code not in severity_at(found, rel, src, gone)
    assert code in severity_at(found, rel, src, kept)


_CPU_TEST = """
    import unittest

    import torch

    from dptb.postprocess import OpticalConductivity


    class TestOpticalConductivity(unittest.TestCase):
        def setUp(self):
            self.device = 'cpu'
            self.calc = OpticalConductivity(model_path="ref.pth", device=self.device)

        def test_reference(self):
            ref = torch.tensor([0.1, 0.2, 0.3], dtype=torch.float64, device=self.device)
            out = self.calc.compute(omegas=[0.1, 0.2, 0.3])
            self.assertTrue(torch.allclose(out, ref))
"""


def test_float64_in_a_test_placed_on_the_cpu_is_a_host_value(tmp_path):
    gpu = _CPU_TEST.replace("'cpu'", "'cuda' if torch.cuda.is_available() else 'cpu'")
    no_device = _CPU_TEST.replace("self.device = 'cpu'", "self.device = None")
    found = dedented_tree(tmp_path, {"tests/test_optical.py": _CPU_TEST, "tests/test_optical_gpu.py": gpu,
                                     "tests/test_optical_default.py": no_device})
    assert "NPU208" not in severity_at(found, "tests/test_optical.py", _CPU_TEST, "ref = torch.tensor(")
    # controls: a test that may run on CUDA, and one that names no device (a library default places it)
    assert "NPU208" in severity_at(found, "tests/test_optical_gpu.py", gpu, "ref = torch.tensor(")
    assert "NPU208" in severity_at(found, "tests/test_optical_default.py", no_device, "ref = torch.tensor(")


_WAN = """
    import math

    import torch
    import torch.cuda.amp as amp


    def sinusoidal_embedding_1d(dim, position):
        half = dim // 2
        sinusoid = torch.outer(position, torch.pow(10000, -torch.arange(half).to(position).div(half)))
        return torch.cat([torch.cos(sinusoid), torch.sin(sinusoid)], dim=1)


    def forward(self, x, t):
        with amp.autocast(dtype=torch.float32):
            e = self.time_embedding(sinusoidal_embedding_1d(self.freq_dim, t).float())
            assert e.dtype == torch.float32
        return x + e / math.sqrt(self.dim)
"""


def test_cuda_amp_autocast_to_float32_is_info(tmp_path):
    half = _WAN.replace("return x + e", "return x.to(torch.bfloat16) + e")
    found = dedented_tree(tmp_path, {"wan/model.py": _WAN, "wan/model_bf16.py": half})
    assert severity_at(found, "wan/model.py", _WAN, "with amp.autocast")["NPU012"] == "info"
    # control: a file that makes bf16 tensors keeps the error (the region up-casts only on CUDA)
    assert severity_at(found, "wan/model_bf16.py", half, "with amp.autocast")["NPU012"] == "error"


# a stale duplicate module (tq46b's VideoSys library) and the same module run by its folder's README (decision (t))
def _videosys(tmp_path, readme: str | None) -> dict:
    files = {"setup.py": SETUP, "videosys/__init__.py": "", "videosys/utils.py": UTILS,
             "videosys/models/__init__.py": "", "videosys/models/transformers/__init__.py": "",
             "videosys/models/transformers/open_sora_plan_transformer_3d.py": OLD_MODEL,
             "videosys/models/transformers/open_sora_plan_v110_transformer_3d.py": NEW_MODEL,
             "videosys/pipelines/__init__.py": "", "videosys/pipelines/open_sora_plan.py": PIPELINE}
    if readme is not None:
        files["videosys/models/transformers/README.md"] = readme
    return dedented_tree(tmp_path, files)


_OLD = "videosys/models/transformers/open_sora_plan_transformer_3d.py"


def test_module_its_folder_readme_runs_is_no_stale_copy(tmp_path):
    found = _videosys(tmp_path, "## Run\n\n```bash\npython open_sora_plan_transformer_3d.py\n```\n")
    assert "info" not in severity_at(found, _OLD, OLD_MODEL, 'device="cuda"').values()


def test_stale_copy_its_folder_readme_does_not_name_stays_info(tmp_path):
    found = _videosys(tmp_path, "## Models\n\nThe v1.1.0 transformer is the one the pipelines build.\n")
    assert set(severity_at(found, _OLD, OLD_MODEL, 'device="cuda"').values()) == {"info"}


# Wan2.1's evaluation script: both generate variants defined, only the text-to-video one patched in
_WAN_EVAL = """
    import argparse

    import torch


    def t2v_generate(self, input_prompt, offload_model=True):
        out = self.model(input_prompt)
        if offload_model:
            torch.cuda.empty_cache()
        return out


    def i2v_generate(self, input_prompt, img, offload_model=True):
        out = self.model(input_prompt, img)
        if offload_model:
            torch.cuda.empty_cache()
        return out


    def generate(args):
        from wan.text2video import WanT2V
        pipe = WanT2V(args.ckpt_dir)
        pipe.__class__.generate = t2v_generate
        return pipe.generate(args.prompt)


    if __name__ == "__main__":
        parser = argparse.ArgumentParser()
        parser.add_argument("--prompt")
        generate(parser.parse_args())
"""


def _empty_cache_lines() -> list[int]:
    return [i for i, text in enumerate(textwrap.dedent(_WAN_EVAL).splitlines(), 1) if "torch.cuda.empty_cache()" in text]


def test_script_function_nothing_calls_or_installs_is_info(tmp_path):
    installed, uncalled = _empty_cache_lines()
    found = dedented_tree(tmp_path, {"eval/wan_magcache.py": _WAN_EVAL})
    assert found[("eval/wan_magcache.py", uncalled)]["NPU002"] == "info"
    # control: the function the script installs as the pipeline's generate keeps its error
    assert found[("eval/wan_magcache.py", installed)]["NPU002"] == "error"


def test_script_function_another_file_imports_keeps_its_error(tmp_path):
    runner = "from eval.wan_magcache import i2v_generate\n\n\ndef run(pipe):\n    return i2v_generate(pipe, 'a', None)\n"
    found = dedented_tree(tmp_path, {"eval/wan_magcache.py": _WAN_EVAL, "eval/__init__.py": "", "run_i2v.py": runner})
    assert found[("eval/wan_magcache.py", _empty_cache_lines()[1])]["NPU002"] == "error"
