"""Precision fix of tq42 (session 42, tuned on heldout45 / heldout46's labels): copies of other projects' packages
carried below a research tree's or library's root (auditor/static/unreached_defs.py, `_vendored_copies`).

A package folder at least two levels down whose own modules import it by its bare name (`from dinov2.layers import
Mlp` inside `torchhub/facebookresearch_dinov2_main/dinov2/`) is another repository's top-level package. The tree runs
its own code, the copy's top-level scripts (`hubconf.py`), the copy's scripts / tools / demo folders, tests and examples,
and what its shell scripts launch; a module of the copy that no import from those loads, and a definition of the copy
that nothing reached names, is info (policy (h)), never dropped. Each case has a control that keeps its severity: the
copy's module the tree imports, a tree's own folder named like a pip package (`scripts/setfit/` importing the tree's
`src/setfit`), a root-level package importing itself. Code written afresh in the shape of those trees, not copied."""
from __future__ import annotations

from pathlib import Path

from tests.test_tq38 import _in, _tree

# -- a torch.hub copy: PromptDA's DINOv2 ---------------------------------------------------------------------------

MODEL = """\
import torch


class DepthModel(torch.nn.Module):
    def __init__(self, hub_dir: str):
        super().__init__()
        self.backbone = torch.hub.load(hub_dir, "dinov2_vits14", source="local", pretrained=False)

    def forward(self, x):
        return self.backbone(x)
"""

HUBCONF = """\
import torch


def dinov2_vits14(pretrained: bool = True):
    from dinov2.models.vision_transformer import vit_small
    return vit_small()
"""

VIT = """\
import torch
from dinov2.layers.block import Block


def vit_small():
    return torch.nn.Sequential(Block())
"""

BLOCK = """\
import torch
from dinov2.layers.attention import Attention


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.attn = Attention()
        self.scale = torch.ones(1, device="cuda")
"""

ATTENTION = """\
import torch


class Attention(torch.nn.Module):
    def forward(self, x):
        return x
"""

DISTRIBUTED = """\
import os

import torch
import torch.distributed as dist


def enable(set_cuda_current_device: bool = True):
    local_rank = int(os.environ.get("LOCAL_RANK", 0))
    if set_cuda_current_device:
        torch.cuda.set_device(local_rank)
    dist.init_process_group(backend="nccl")
"""

LINEAR_EVAL = """\
import torch
from dinov2.distributed import enable
from dinov2.models.vision_transformer import vit_small


def main():
    enable()
    model = vit_small().cuda()
    return model


if __name__ == "__main__":
    main()
"""

CONFIG = """\
train:
  enable: true
  batch_size_per_gpu: 64
"""

DINO = "torchhub/facebookresearch_dinov2_main/"


def _hub_tree() -> dict[str, str]:
    return {"promptda/__init__.py": "", "promptda/model.py": MODEL, "setup.py": "from setuptools import setup\nsetup()\n",
            DINO + "hubconf.py": HUBCONF, DINO + "setup.py": "from setuptools import setup\nsetup()\n",
            DINO + "dinov2/__init__.py": "", DINO + "dinov2/models/__init__.py": "",
            DINO + "dinov2/models/vision_transformer.py": VIT, DINO + "dinov2/layers/__init__.py": "",
            DINO + "dinov2/layers/block.py": BLOCK, DINO + "dinov2/layers/attention.py": ATTENTION,
            DINO + "dinov2/distributed/__init__.py": DISTRIBUTED, DINO + "dinov2/eval/__init__.py": "",
            DINO + "dinov2/eval/linear.py": LINEAR_EVAL, DINO + "dinov2/configs/ssl_default_config.yaml": CONFIG}


def _line(src: str, needle: str) -> int:
    return next(i for i, line in enumerate(src.splitlines(), 1) if needle in line)


def test_programs_of_a_copied_package_nothing_imports_are_info(tmp_path: Path):
    found = _tree(tmp_path, _hub_tree())
    dist_ = _in(found, "dinov2/distributed/__init__.py")
    assert dist_[_line(DISTRIBUTED, "torch.cuda.set_device")]["NPU002"] == "info"
    linear = _in(found, "dinov2/eval/linear.py")
    assert linear[_line(LINEAR_EVAL, ".cuda()")]["NPU001"] == "info"
    # the backbone the tree loads through hubconf.py keeps its error
    assert _in(found, "dinov2/layers/block.py")[_line(BLOCK, 'device="cuda"')]["NPU003"] == "error"


def test_an_imported_module_of_the_copy_keeps_its_severity(tmp_path: Path):
    files = _hub_tree()
    files["promptda/train.py"] = ("from dinov2.distributed import enable\n\n\ndef main():\n    enable()\n")
    found = _tree(tmp_path, files)
    dist_ = _in(found, "dinov2/distributed/__init__.py")
    assert dist_[_line(DISTRIBUTED, "torch.cuda.set_device")]["NPU002"] != "info"


def test_a_copied_script_folder_runs(tmp_path: Path):
    files = _hub_tree()
    files[DINO + "scripts/run_eval.py"] = "from dinov2.eval.linear import main\n\nmain()\n"
    found = _tree(tmp_path, files)
    assert _in(found, "dinov2/eval/linear.py")[_line(LINEAR_EVAL, ".cuda()")]["NPU001"] == "error"


# -- a tree's own folder named like a package it imports -----------------------------------------------------------

BASELINE = """\
import torch
from setfit import SetFitModel
from setfit.modeling import SetFitHead


def run(model_id: str):
    model = SetFitModel.from_pretrained(model_id, model_head=SetFitHead())
    return model.to(torch.device("cuda"))
"""


def test_a_folder_named_like_the_trees_own_package_is_no_copy(tmp_path: Path):
    files = {"src/setfit/__init__.py": "from .modeling import SetFitModel, SetFitHead\n",
             "src/setfit/modeling.py": "class SetFitModel:\n    pass\n\n\nclass SetFitHead:\n    pass\n",
             "scripts/setfit/run_fewshot.py": BASELINE,
             "scripts/setfit/utils.py": "def helper():\n    return 1\n",
             "setup.py": "from setuptools import setup\nsetup()\n"}
    found = _tree(tmp_path, files)
    assert _in(found, "scripts/setfit/run_fewshot.py")[_line(BASELINE, 'torch.device("cuda")')]["NPU003"] == "error"


# -- a copied research package inside the tree's own package (InternNav's Diffusion Policy) ---------------------------

TENSOR_UTIL = """\
import torch


def to_numpy(tensor):
    if tensor.is_cuda:
        tensor = tensor.cpu()
    return tensor.numpy()
"""

MIXIN = """\
import torch


class ModuleAttrMixin(torch.nn.Module):
    @property
    def device(self):
        return next(iter(self.parameters())).device
"""

POLICY = """\
import torch
from diffusion_policy.model.common.module_attr_mixin import ModuleAttrMixin
from diffusion_policy.model.common.tensor_util import to_numpy


class Policy(ModuleAttrMixin):
    def predict(self, x):
        return to_numpy(x.cuda())
"""

OWN = """\
from diffusion_policy.model.common.module_attr_mixin import ModuleAttrMixin


class NavPolicy(ModuleAttrMixin):
    pass
"""

DP = "nav/model/encoder/diffusion_policy/"


def test_helpers_of_a_copy_inside_the_trees_package_only_its_own_unreached_programs_use(tmp_path: Path):
    files = {"nav/__init__.py": "", "nav/model/__init__.py": "", "nav/model/encoder/__init__.py": "",
             "nav/model/policy.py": OWN, DP + "__init__.py": "", DP + "model/__init__.py": "",
             DP + "model/common/__init__.py": "", DP + "model/common/module_attr_mixin.py": MIXIN,
             DP + "model/common/tensor_util.py": TENSOR_UTIL, DP + "policy/__init__.py": "",
             DP + "policy/policy.py": POLICY}
    found = _tree(tmp_path, files)
    assert _in(found, "common/tensor_util.py")[_line(TENSOR_UTIL, "is_cuda")]["NPU005"] == "info"
    assert _in(found, "policy/policy.py")[_line(POLICY, ".cuda()")]["NPU001"] == "info"


def test_a_root_package_importing_itself_is_the_trees_own(tmp_path: Path):
    files = {"nav/__init__.py": "", "nav/common/__init__.py": "", "nav/common/tensor_util.py": TENSOR_UTIL,
             "nav/run.py": "import torch\n\n\ndef main():\n    return torch.zeros(1).cuda()\n"}
    found = _tree(tmp_path, files)
    assert _in(found, "common/tensor_util.py")[_line(TENSOR_UTIL, "is_cuda")]["NPU005"] != "info"


# -- test gating: a stored skip mark, a skip check after the test's imports ------------------------------------------

from tests.test_tq38 import _findings  # noqa: E402

GATED_TESTS = b'''import pytest
import torch

requires_cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="PyTorch must be compiled with CUDA")


@pytest.mark.gpu
def test_gpu_feature():
    pytest.importorskip("torch")
    import torch

    if not torch.cuda.is_available():
        pytest.skip("No CUDA available")
    x = torch.tensor([1.0], device="cuda")
    assert float(x.item()) == 1.0


@requires_cuda
def test_on_device():
    x = torch.ones(1).cuda()
    assert x.sum() == 1


def pick_device():
    import torch

    if not torch.cuda.is_available():
        return torch.zeros(1)
    return torch.ones(1).cuda()
'''


def _at(src: bytes, needle: bytes) -> int:
    return next(i for i, line in enumerate(src.splitlines(), 1) if needle in line)


def test_a_stored_cuda_skip_mark_is_a_test_mark():
    found = _findings(GATED_TESTS, "tests/test_modeling.py")
    assert found[_at(GATED_TESTS, b"requires_cuda = ")]["NPU002"] == "warning"


def test_a_skip_check_after_the_tests_imports_is_a_test_mark():
    found = _findings(GATED_TESTS, "tests/test_basic.py")
    line = _at(GATED_TESTS, b"    if not torch.cuda.is_available():\n".strip())
    assert found[line]["NPU002"] == "warning"


def test_a_cuda_check_that_returns_is_no_test_mark():
    found = _findings(GATED_TESTS, "tests/test_basic.py")
    lines = [i for i, text in enumerate(GATED_TESTS.splitlines(), 1) if b"if not torch.cuda.is_available():" in text]
    assert found[lines[-1]]["NPU002"] == "error"


# -- transformers' FlashAttention-2 path under a pin that routes it to torch_npu -------------------------------------

PATCH = """\
import transformers
from transformers.modeling_flash_attention_utils import _flash_attention_forward


def ulysses_flash_attention_forward(query_states, key_states, value_states, attention_mask, q_len, **kwargs):
    return _flash_attention_forward(query_states, key_states, value_states, attention_mask, q_len, is_causal=True)


def apply_monkey_patch():
    transformers.modeling_flash_attention_utils._flash_attention_forward = ulysses_flash_attention_forward
"""


def _fa_tree(requirements: dict[str, str]) -> dict[str, str]:
    return {"app/verl/__init__.py": "", "app/verl/models/__init__.py": "",
            "app/verl/models/monkey_patch.py": PATCH, **requirements}


def test_fa2_path_under_an_ascend_requirements_file_asking_4_52_is_info(tmp_path: Path):
    found = _tree(tmp_path, _fa_tree({"app/requirements.txt": "torch\ntransformers\n",
                                      "app/requirements-npu.txt": "torch==2.5.1\ntorch-npu==2.5.1\ntransformers>=4.52.0\n"}))
    patch = _in(found, "monkey_patch.py")
    assert patch[_line(PATCH, "import _flash_attention_forward")]["NPU332"] == "info"
    assert patch[_line(PATCH, "return _flash_attention_forward(")]["NPU332"] == "info"
    # the patch installs other code in transformers' place: it stays
    assert patch[_line(PATCH, "._flash_attention_forward = ulysses")]["NPU332"] == "warning"


def test_fa2_path_under_a_pin_allowing_older_releases_stays(tmp_path: Path):
    found = _tree(tmp_path, _fa_tree({"app/requirements.txt": "torch\ntransformers>=4.46.0\n"}))
    assert _in(found, "monkey_patch.py")[_line(PATCH, "import _flash_attention_forward")]["NPU332"] == "warning"
    found = _tree(tmp_path / "b", _fa_tree({"requirements.txt": "transformers==4.57.0\n",
                                            "app/requirements.txt": "transformers\n"}))
    # the nearest folder's requirement is unpinned: the release is not settled there
    assert _in(found, "monkey_patch.py")[_line(PATCH, "import _flash_attention_forward")]["NPU332"] == "warning"


def test_fa2_path_under_the_roots_exact_pin_is_info(tmp_path: Path):
    found = _tree(tmp_path, _fa_tree({"requirements.txt": "torch\ntransformers==4.57.0\n"}))
    assert _in(found, "monkey_patch.py")[_line(PATCH, "import _flash_attention_forward")]["NPU332"] == "info"


SKIPPED_MODULE = b'''import pytest
import torch

pytestmark = [pytest.mark.gpu, pytest.mark.skip(reason="HF afmoe model does not support flash attention 2")]

DEVICE = torch.device("cuda")


def test_afmoe_attn_only():
    with torch.device("cuda"):
        model = torch.nn.Linear(2, 2)
    assert model.weight.device.type == "cuda"
'''

MARKED_MODULE = SKIPPED_MODULE.replace(b', pytest.mark.skip(reason="HF afmoe model does not support flash attention 2")',
                                       b"")


def test_a_module_skip_mark_gates_every_test():
    found = _findings(SKIPPED_MODULE, "tests/unit/test_afmoe.py")
    assert found[_at(SKIPPED_MODULE, b'with torch.device("cuda")')]["NPU003"] == "warning"
    # module-level code runs at collection: it keeps its error
    assert found[_at(SKIPPED_MODULE, b'DEVICE = torch.device("cuda")')]["NPU003"] == "error"


def test_a_module_mark_without_a_skip_gates_nothing():
    found = _findings(MARKED_MODULE, "tests/unit/test_afmoe.py")
    assert found[_at(MARKED_MODULE, b'with torch.device("cuda")')]["NPU003"] == "error"


# -- a test suite under another name, laid out like the package it tests (oslo's tests_deprecated/torch) -------------

OSLO_TEST = """\
import unittest

import torch
import torch.nn.functional as F
from oslo.torch.nn import FusedLayerNorm


class TestFusedLayerNorm(unittest.TestCase):
    def setUp(self):
        self.module = FusedLayerNorm(1024).to(device="cuda", dtype=torch.float16)

    def test_same_output(self):
        x = torch.randn(16, 1024, device="cuda", dtype=torch.float16)
        self.assertTrue(torch.allclose(self.module(x), F.layer_norm(x, (1024,))))
"""

OSLO_OPTIM_TEST = """\
import torch
import torch.optim
from torch.optim import AdamW
from oslo.torch.optim import FusedAdam


def test_fused_adam():
    p = torch.nn.Parameter(torch.rand(4, device="cuda"))
    return FusedAdam([p]), AdamW([p])
"""


def test_a_test_suite_laid_out_like_torch_is_no_copy_of_torch(tmp_path: Path):
    files = {"oslo/__init__.py": "", "oslo/torch/__init__.py": "", "oslo/torch/nn/__init__.py":
             "class FusedLayerNorm:\n    pass\n", "oslo/torch/optim/__init__.py": "class FusedAdam:\n    pass\n",
             "setup.py": "from setuptools import setup\nsetup()\n",
             "tests_deprecated/__init__.py": "", "tests_deprecated/torch/__init__.py": "",
             "tests_deprecated/torch/nn/__init__.py": "", "tests_deprecated/torch/nn/functional.py": "",
             "tests_deprecated/torch/nn/test_layer_norm.py": OSLO_TEST,
             "tests_deprecated/torch/optim/__init__.py": "",
             "tests_deprecated/torch/optim/test_fused_adam.py": OSLO_OPTIM_TEST}
    found = _tree(tmp_path, files)
    layer_norm = _in(found, "tests_deprecated/torch/nn/test_layer_norm.py")
    assert layer_norm[_line(OSLO_TEST, 'to(device="cuda"')]["NPU003"] == "error"
    adam = _in(found, "tests_deprecated/torch/optim/test_fused_adam.py")
    assert adam[_line(OSLO_OPTIM_TEST, 'device="cuda"')]["NPU003"] == "error"
