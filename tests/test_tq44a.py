"""Precision fixes of tq44a (session 44, tuned on heldout49's labels). Each family has a positive case (the row the
labellers called false, in code written afresh in the shape of its tree) and a control that keeps its finding."""
from __future__ import annotations

import json
from pathlib import Path

from tests.test_tq38 import _in, _tree


def _notebook(*cells: str) -> str:
    return json.dumps({"cells": [{"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [],
                                  "source": c} for c in cells],
                       "metadata": {}, "nbformat": 4, "nbformat_minor": 5})


# -- a keyword the tree's own class no longer takes (pytorch-grad-cam's tutorials) ---------------------------------

BASE_CAM = """\
import torch


class BaseCAM:
    def __init__(self, model, target_layers, reshape_transform=None, compute_input_gradient=False):
        self.model = model.eval()
        self.target_layers = target_layers
        self.device = next(self.model.parameters()).device
"""

GRAD_CAM = """\
from .base_cam import BaseCAM


class GradCAM(BaseCAM):
    def __init__(self, model, target_layers, reshape_transform=None):
        super().__init__(model, target_layers, reshape_transform)


class ScoreCAM(BaseCAM):
    pass


class OldCAM:
    def __init__(self, model, target_layers, use_cuda=False, **kwargs):
        self.cuda = use_cuda
"""

CAM_INIT = """\
from .grad_cam import GradCAM, ScoreCAM, OldCAM
"""

TUTORIAL = """\
import torch
from pytorch_grad_cam import GradCAM, ScoreCAM, OldCAM

model = torch.hub.load("pytorch/vision", "resnet50")
cams = [("GradCAM", GradCAM(model=model, target_layers=[model.layer4], use_cuda=True)),
        ("ScoreCAM", ScoreCAM(model=model, target_layers=[model.layer4],
                              use_cuda=torch.cuda.is_available())),
        ("OldCAM", OldCAM(model=model, target_layers=[model.layer4], use_cuda=True))]
"""


def test_keyword_the_tree_class_does_not_take_switches_nothing(tmp_path: Path) -> None:
    files = {"pytorch_grad_cam/__init__.py": CAM_INIT, "pytorch_grad_cam/base_cam.py": BASE_CAM,
             "pytorch_grad_cam/grad_cam.py": GRAD_CAM}
    found = _tree(tmp_path, {**files, "usage_examples/cams.py": TUTORIAL})
    cams = _in(found, "usage_examples/cams.py")
    assert cams[5].get("NPU038") == "info", cams
    # through a base's __init__; the probe that is only the keyword's value goes with it
    assert cams[7].get("NPU038") == "info" and cams[7].get("NPU002") == "info", cams
    # control: a class that takes the keyword keeps the switch
    assert cams[8].get("NPU038") == "warning", cams


def test_keyword_the_tree_class_does_not_take_in_a_notebook(tmp_path: Path) -> None:
    files = {"pytorch_grad_cam/__init__.py": CAM_INIT, "pytorch_grad_cam/base_cam.py": BASE_CAM,
             "pytorch_grad_cam/grad_cam.py": GRAD_CAM}
    notebook = _notebook("%matplotlib inline\nimport torch\nfrom pytorch_grad_cam import GradCAM, OldCAM",
                         "model = torch.hub.load('pytorch/vision', 'resnet50').cuda()\n"
                         "cam = GradCAM(model=model, target_layers=[model.layer4], use_cuda=True)\n"
                         "old = OldCAM(model=model, target_layers=[model.layer4], use_cuda=True)")
    found = _tree(tmp_path, {**files, "tutorials/CAM Tutorial.ipynb": notebook})
    cells = _in(found, "CAM Tutorial.ipynb")
    assert cells[5].get("NPU038") == "info", cells
    assert cells[6].get("NPU038") == "warning", cells      # control: OldCAM takes use_cuda
    assert cells[4].get("NPU001") == "error", cells        # the placement stays


def test_keyword_of_an_outside_class_keeps_its_switch(tmp_path: Path) -> None:
    # a callee imported from outside the tree: its parameters are unknown here
    found = _tree(tmp_path, {"train.py": "from simpletransformers.classification import ClassificationModel\n"
                                         "model = ClassificationModel('roberta', 'roberta-base', use_cuda=True)\n"})
    assert _in(found, "train.py")[2].get("NPU038") == "warning", found


# -- an options flag set from the CUDA probe in one function, read in another (PyTorch examples) ------------------

SWIN = """\
import argparse
import torch


def get_args():
    parser = argparse.ArgumentParser()
    parser.add_argument('--use-cuda', action='store_true', default=False)
    args = parser.parse_args()
    args.use_cuda = args.use_cuda and torch.cuda.is_available()
    return args


def main():
    args = get_args()
    model = torch.hub.load('pytorch/vision', 'resnet50')
    if args.use_cuda:
        model = model.cuda()
    model.eval()


if __name__ == '__main__':
    main()
"""


def test_option_attribute_set_from_the_probe_is_a_gate(tmp_path: Path) -> None:
    found = _in(_tree(tmp_path, {"swin_example.py": SWIN}), "swin_example.py")
    assert found[9].get("NPU002") == "error", found      # the probe is still the gate
    assert found[17].get("NPU001") == "warning", found   # behind it


def test_option_attribute_set_by_the_user_is_no_gate(tmp_path: Path) -> None:
    code = SWIN.replace("args.use_cuda = args.use_cuda and torch.cuda.is_available()", "args.use_cuda = True")
    found = _in(_tree(tmp_path, {"swin_example.py": code}), "swin_example.py")
    assert found[17].get("NPU001") == "error", found


# -- test code that skips itself off CUDA -------------------------------------------------------------------------

TESTS = """\
import pytest
import torch


class TestToDevice:
    @pytest.mark.parametrize('device_from, device_to', [
        ('cpu', 'cpu'),
        ('cpu', 'cuda'),
        ('cuda', 'cuda'),
    ])
    def test_check_device(self, x, device_from, device_to):
        if 'cuda' in (device_from, device_to) and not torch.cuda.is_available():
            pytest.skip()
        assert x.to(device_to).device.type == device_to

    @pytest.mark.parametrize('cuda_available', {False, torch.cuda.is_available()})
    def test_pickle_load(self, cuda_available, path):
        assert cuda_available in (True, False)

    @pytest.mark.parametrize('mixed_precision', ['fp16', 'bf16', 'no'])
    def test_mixed_precision(self, net_cls, mixed_precision):
        from accelerate.utils import is_bf16_available

        if (mixed_precision != 'no') and not torch.cuda.is_available():
            pytest.skip('skipping AMP test because device does not support it')
        if (mixed_precision == 'bf16') and not is_bf16_available():
            pytest.skip('skipping bf16 test because device does not support it')
        net_cls(mixed_precision=mixed_precision)

    @pytest.mark.parametrize('device', ['cpu', 'cuda'])
    def test_no_skip(self, device):
        assert torch.zeros(1, device=device).sum() == 0


def test_memory_usage_in_loop(model):
    if torch.cuda.is_available():
        device = "cuda"
    else:
        print("CUDA not available")
        return
    model = model.to(device)
    initial = torch.cuda.memory_allocated()
    assert torch.cuda.memory_allocated() <= initial * 1.5
"""


def test_tests_that_skip_themselves_off_cuda(tmp_path: Path) -> None:
    found = _in(_tree(tmp_path, {"tests/test_device.py": TESTS}), "tests/test_device.py")
    assert found[9].get("NPU003") == "warning", found       # a case the body skips without CUDA
    assert found[16].get("NPU002") == "warning", found      # a probe among parametrize values
    assert found[26].get("NPU230") == "warning", found      # a skip's own check
    assert found[30].get("NPU003") == "error", found        # control: no skip in the body
    assert found[43].get("NPU002") == "warning", found      # after `if probe: ... else: return`
    assert found[36].get("NPU002") == "error", found        # the gate itself


# -- a check whose branch only shows a message (Whisper's transcribe) ---------------------------------------------

TRANSCRIBE = """\
import warnings
import torch


def transcribe(model, audio, fp16=True):
    if model.device == torch.device("cpu"):
        if torch.cuda.is_available():
            warnings.warn("Performing inference on CPU when CUDA is available")
    if torch.cuda.is_available():
        model = model.cuda()
    return model(audio)
"""


def test_probe_that_only_decides_a_message(tmp_path: Path) -> None:
    found = _in(_tree(tmp_path, {"whisper/transcribe.py": TRANSCRIBE}), "whisper/transcribe.py")
    assert found[7].get("NPU002") == "info", found
    assert found[9].get("NPU002") == "error", found      # control: a gate with work behind it


# -- a user's `cuda:N` spec matched by a pattern (maestro's parse_device_spec) ------------------------------------

DEVICE_SPEC = """\
import re
import torch


def parse_device_spec(device_spec: str) -> torch.device:
    device_str = device_spec.lower()
    if device_str == "cpu":
        return torch.device("cpu")
    match = re.match(r"^cuda:(\\d+)$", device_str)
    if match:
        index = int(match.group(1))
        if index >= torch.cuda.device_count():
            raise ValueError(f"Requested cuda:{index} but only {torch.cuda.device_count()} GPU(s) are available.")
        return torch.device(f"cuda:{index}")
    n = torch.cuda.device_count()
    return torch.device("cpu")
"""


def test_regex_match_of_a_cuda_spec_is_a_gate(tmp_path: Path) -> None:
    found = _in(_tree(tmp_path, {"maestro/device.py": DEVICE_SPEC}), "maestro/device.py")
    assert found[12].get("NPU002") == "warning", found
    assert found[15].get("NPU002") == "error", found     # control: outside the match


# -- ComfyUI node code: fallbacks of ComfyUI's own imports, cache housekeeping in a swallowing try -----------------

NODE_INIT = """\
from .nodes.sampler import FL_Sampler
from .nodes.unload import FL_Unload

NODE_CLASS_MAPPINGS = {"FL_Sampler": FL_Sampler, "FL_Unload": FL_Unload}
"""

SAMPLER = """\
import torch


class FL_Sampler:
    @classmethod
    def INPUT_TYPES(cls):
        return {"required": {"latent": ("LATENT",)}}

    RETURN_TYPES = ("LATENT",)
    FUNCTION = "sample"

    @staticmethod
    def _pick_device():
        try:
            import comfy.model_management as mm
            return mm.intermediate_device()
        except Exception:
            if torch.cuda.is_available():
                return torch.device("cuda")
            return torch.device("cpu")

    def sample(self, latent):
        device = self._pick_device()
        torch.cuda.synchronize()
        return ({"samples": latent["samples"].to(device)},)
"""

UNLOAD = """\
import gc
import torch
import comfy.model_management as model_management


class FL_Unload:
    @classmethod
    def INPUT_TYPES(cls):
        return {"required": {}}

    RETURN_TYPES = ()
    FUNCTION = "unload"

    def unload(self):
        model_management.soft_empty_cache(True)
        try:
            gc.collect()
            torch.cuda.empty_cache()
        except:
            print("   - Unable to clear cache")
        torch.cuda.empty_cache()
        return ()
"""


def test_comfy_node_fallbacks_and_caught_housekeeping(tmp_path: Path) -> None:
    found = _tree(tmp_path, {"__init__.py": NODE_INIT, "nodes/__init__.py": "", "nodes/sampler.py": SAMPLER,
                             "nodes/unload.py": UNLOAD})
    sampler = _in(found, "nodes/sampler.py")
    assert sampler[18].get("NPU002") == "info" and sampler[19].get("NPU003") == "info", sampler
    assert sampler[24].get("NPU002") == "error", sampler      # control: the node's own CUDA call
    unload = _in(found, "nodes/unload.py")
    assert unload[18].get("NPU002") == "warning", unload
    assert unload[21].get("NPU002") == "error", unload        # control: outside the try


def test_comfy_import_fallback_outside_a_node_pack(tmp_path: Path) -> None:
    # no NODE_CLASS_MAPPINGS at the root: the module may run outside ComfyUI, where the fallback runs
    found = _tree(tmp_path, {"nodes/__init__.py": "", "nodes/sampler.py": SAMPLER})
    assert _in(found, "nodes/sampler.py")[18].get("NPU002") == "error", found


# -- a module named for a technology only through the project's own package (Triton-distributed's task graph) -----

GRAPH = """\
from typing import List
import torch
from triton_dist.models.utils import logger


class Graph:
    def __init__(self):
        self.nodes: List[int] = []

    def add(self, node):
        logger.info("add %s", node)
        self.nodes.append(node)
"""

KERNEL = """\
import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
"""

BUILDER = """\
from ..core.graph import Graph
from ..core.kernels import add_kernel


class ModelBuilder:
    def __init__(self):
        self._graph = Graph()
        self._kernel = add_kernel
"""


def test_module_named_for_triton_only_by_its_package(tmp_path: Path) -> None:
    found = _tree(tmp_path, {"triton_dist/__init__.py": "", "triton_dist/models/__init__.py": "",
                             "triton_dist/models/utils.py": "import logging\nlogger = logging.getLogger()\n",
                             "triton_dist/mega_triton_kernel/__init__.py": "",
                             "triton_dist/mega_triton_kernel/core/__init__.py": "",
                             "triton_dist/mega_triton_kernel/core/graph.py": GRAPH,
                             "triton_dist/mega_triton_kernel/core/kernels.py": KERNEL,
                             "triton_dist/mega_triton_kernel/models/__init__.py": "",
                             "triton_dist/mega_triton_kernel/models/builder.py": BUILDER})
    builder = _in(found, "models/builder.py")
    assert "NPU320" not in builder.get(7, {}), builder
    assert "NPU320" in builder.get(8, {}), builder      # control: the Triton kernel's use


# -- a ComfyUI node's IMAGE / MASK inputs are host tensors (ComfyUI_Fill-Nodes' crop loop) -------------------------

APPLY_MASK = """\
import torch


class FL_ApplyMask:
    @classmethod
    def INPUT_TYPES(cls):
        return {"required": {"image": ("IMAGE",), "mask": ("MASK",), "crop": ("BOOLEAN", {"default": False})}}

    RETURN_TYPES = ("IMAGE",)
    FUNCTION = "apply_mask"

    def apply_mask(self, image, mask, crop=False):
        if len(mask.shape) == 2:
            mask = mask.unsqueeze(0)
        if mask.shape[1:] != image.shape[1:3]:
            mask = torch.nn.functional.interpolate(mask.unsqueeze(1).float(), size=image.shape[1:3]).squeeze(1)
        boxes = []
        alpha = torch.ones((image.shape[0], 1), device=image.device)
        image = torch.cat([image, alpha], dim=3)
        for b in range(image.shape[0]):
            mask_b = mask[b]
            nonzero = torch.nonzero(mask_b > 0)
            if nonzero.numel() > 0:
                boxes.append(nonzero[:, 0].min().item())
        return (image,)

    def moved(self, image, mask):
        mask = mask.to("cuda")
        for b in range(image.shape[0]):
            nonzero = torch.nonzero(mask[b] > 0)
            print(nonzero[:, 0].min().item())
"""


def test_node_image_and_mask_inputs_are_host_values(tmp_path: Path) -> None:
    found = _in(_tree(tmp_path, {"__init__.py": "from .nodes import FL_ApplyMask\n"
                                                "NODE_CLASS_MAPPINGS = {'FL_ApplyMask': FL_ApplyMask}\n",
                                 "nodes.py": APPLY_MASK}), "nodes.py")
    assert "NPU703" not in found.get(24, {}), found
    assert "NPU703" in found.get(31, {}), found      # control: a method that is no node FUNCTION, a moved mask


# -- a CUDA-only move to the CPU before a device-generic one (skorch's to_numpy) ----------------------------------

TO_NUMPY = """\
import numpy as np
import torch


def to_numpy(X):
    if isinstance(X, np.ndarray):
        return X
    if X.is_cuda:
        X = X.cpu()
    if X.device.type != "cpu":
        X = X.cpu()
    if X.requires_grad:
        X = X.detach()
    return X.numpy()


def to_numpy_cuda_only(X):
    if X.is_cuda:
        X = X.cpu()
    return X.detach().numpy()
"""


def test_cuda_only_cpu_move_before_a_generic_one(tmp_path: Path) -> None:
    found = _in(_tree(tmp_path, {"utils.py": TO_NUMPY}), "utils.py")
    assert found[8].get("NPU005") == "info", found
    assert found[18].get("NPU005") == "error", found      # control: the only move
