"""Precision fixes of tq49b (session 49, tuned on heldout60's labels).

A package carried under another name than its own (auditor/static/unreached_defs.py, `_renamed_copies`): a research
tree keeps a reproduced baseline's copy of a quantization library in `reproduction/int8/`, whose modules still import
one another as `bitsandbytes.*`. Nothing in the tree imports the folder, so its code is code nothing runs (policy (j)):
info. Controls: the tree's own code keeps its findings; a plugin package laid out like the library it extends
(importing the library's registries, which its own modules do not define) is no copy; a renamed copy the tree imports
keeps the findings of what it calls. Code written afresh in the shape of those trees, not copied."""
from __future__ import annotations

from tests.static_snippets import dedented_tree, first_line_of

CONSTS = """\
    from pathlib import Path

    DYNAMIC_LIBRARY_SUFFIX = ".so"
    PACKAGE_DIR = Path(__file__).parent
    """
CUDA_SPECS = """\
    import torch


    def get_cuda_specs():
        return torch.version.cuda


    def get_compute_capabilities():
        return [torch.cuda.get_device_capability(i) for i in range(torch.cuda.device_count())]
    """
EXTENSION = """\
    import ctypes as ct

    from bitsandbytes.consts import DYNAMIC_LIBRARY_SUFFIX, PACKAGE_DIR
    from bitsandbytes.cuda_specs import get_cuda_specs

    lib = ct.cdll.LoadLibrary(str(PACKAGE_DIR / f"libbitsandbytes{DYNAMIC_LIBRARY_SUFFIX}"))
    """
UTILS = """\
    import torch


    def pack_dict_to_tensor(d):
        return torch.tensor(list(d.values()))
    """
FUNCTIONAL = """\
    import torch

    from bitsandbytes.utils import pack_dict_to_tensor
    from bitsandbytes.cuda_specs import get_compute_capabilities
    from .cextension import lib


    def igemm(A, B):
        torch.cuda.synchronize()
        return lib.cigemm(A, B)
    """
INIT = """\
    from . import utils
    from .functional import igemm
    """
OWN_QUANT = """\
    import torch


    def calibrate(model, batches):
        for batch in batches:
            model(batch.cuda())
        torch.cuda.synchronize()
    """


def _files(imported: bool = False) -> dict[str, str]:
    files = {"iaq/__init__.py": "", "iaq/quant.py": OWN_QUANT,
             "reproduction/int8/__init__.py": INIT, "reproduction/int8/consts.py": CONSTS,
             "reproduction/int8/cuda_specs.py": CUDA_SPECS, "reproduction/int8/cextension.py": EXTENSION,
             "reproduction/int8/utils.py": UTILS, "reproduction/int8/functional.py": FUNCTIONAL}
    if imported:     # a script of the tree's that runs the copy from its folder
        files["reproduction/run_int8.py"] = "import torch\nfrom int8.functional import igemm\n\nigemm(1, 2)\n"
    return files


def _severities(found: dict, path: str, src: str, needle: str) -> set[str]:
    return set(found.get((path, first_line_of(src, needle)), {}).values())


def test_a_renamed_copy_nothing_imports_is_info(tmp_path):
    found = dedented_tree(tmp_path, _files())
    assert _severities(found, "reproduction/int8/functional.py", FUNCTIONAL, "synchronize") == {"info"}
    assert _severities(found, "reproduction/int8/cuda_specs.py", CUDA_SPECS, "get_device_capability") == {"info"}
    # the tree's own code keeps its findings
    assert "error" in _severities(found, "iaq/quant.py", OWN_QUANT, "synchronize")


def test_a_renamed_copy_the_tree_runs_keeps_what_it_calls(tmp_path):
    found = dedented_tree(tmp_path, _files(imported=True))
    assert "error" in _severities(found, "reproduction/int8/functional.py", FUNCTIONAL, "synchronize")


OWN_TRAIN = """\
    import torch
    from fastseg.models.net import SegNet
    from fastseg.utils import sync, to_gpu
    from fastseg.data import load


    def main():
        model = SegNet().cuda()
        sync()
        print(model(to_gpu(load(4))).shape, torch.cuda.max_memory_allocated())
    """
OWN_UTILS = """\
    import torch


    def sync():
        torch.cuda.synchronize()


    def to_gpu(x):
        return x.cuda(non_blocking=True)
    """


def _own_package(setup: str, script: str = "") -> dict[str, str]:
    files = {"setup.py": setup, "src/__init__.py": "", "src/train.py": OWN_TRAIN, "src/utils.py": OWN_UTILS,
             "src/data.py": "import torch\n\n\ndef load(n):\n    return torch.randn(n, 3)\n",
             "src/models/__init__.py": "", "src/models/net.py": "import torch\n\n\nclass SegNet(torch.nn.Module):\n"
             "    def forward(self, x):\n        return x\n"}
    if script:
        files["train.sh"] = script
    return files


def test_the_trees_own_package_installed_under_its_name_is_no_copy(tmp_path):
    """review49 item 1: `package_dir={"fastseg": "src"}` installs this folder as `fastseg`; a launch of
    `python -m fastseg.train` that `src/train.py` answers says the same without the mapping."""
    mapped = ('from setuptools import setup\n\nsetup(name="fastseg", packages=["fastseg", "fastseg.models"], '
              'package_dir={"fastseg": "src"})\n')
    launched = 'from setuptools import setup\n\nsetup(name="fastseg")\n'
    for setup, script in ((mapped, ""), (launched, "pip install -e .\npython -m fastseg.train\n")):
        found = dedented_tree(tmp_path / str(len(script)), _own_package(setup, script))
        assert _severities(found, "src/utils.py", OWN_UTILS, "synchronize") == {"error"}
        assert _severities(found, "src/train.py", OWN_TRAIN, "max_memory_allocated") == {"error"}


PLUGIN_BUILDER = """\
    from mmdet.models.builder import HEADS, build_loss


    def build_fusion_head(cfg):
        return HEADS.build(cfg)
    """
PLUGIN_HEAD = """\
    import torch
    from mmdet.models.builder import HEADS, build_loss
    from mmdet.models.losses import FocalLoss
    from mmdet.core import multi_apply


    @HEADS.register_module()
    class FusionHead(torch.nn.Module):
        def forward(self, x):
            return x.cuda()
    """


def test_a_plugin_laid_out_like_its_library_is_no_copy(tmp_path):
    files = {"projects/plugin/__init__.py": "from .models import *\n", "projects/plugin/models/__init__.py":
             "from .builder import build_fusion_head\nfrom .fusion_head import FusionHead\n",
             "projects/plugin/models/builder.py": PLUGIN_BUILDER, "projects/plugin/models/fusion_head.py": PLUGIN_HEAD,
             "projects/plugin/models/losses.py": "import torch\n\n\ndef smooth_l1(a, b):\n    return (a - b).abs()\n",
             "projects/plugin/core.py": "def multi_apply(fn, *args):\n    return list(map(fn, *args))\n"}
    found = dedented_tree(tmp_path, files)
    assert "error" in _severities(found, "projects/plugin/models/fusion_head.py", PLUGIN_HEAD, "cuda()")


# -- unit tests of an Ascend library that fake torch_npu on a CPU host (host_scopes._faked_moves) ----------------
MOCKED_TEST = """\
    import sys
    import unittest
    from unittest.mock import MagicMock, patch

    import torch

    from mock_torch_npu import mock_npu, mock_npu_quantize
    from quantlib import convert, quantize


    class TestSmoothQuant(unittest.TestCase):
        @classmethod
        def setUpClass(cls):
            cls.inputs = torch.randn(16, 64).to(torch.bfloat16)

        def setUp(self):
            sys.modules['torch_npu'] = MagicMock()

        @patch('torch_npu.npu_quantize', wraps=mock_npu_quantize)
        def test_int8_smooth_success(self, mock_1):
            model = torch.nn.Linear(64, 64).to(torch.bfloat16)
            quantize(model, {'algorithm': {'smoothquant'}})
            torch.Tensor.npu = mock_npu
            convert(model)
            model(self.inputs.npu())
    """


def test_bf16_in_tests_that_fake_the_npu_move_is_dropped(tmp_path):
    found = dedented_tree(tmp_path, {"tests/test_smoothquant.py": MOCKED_TEST})
    assert not _severities(found, "tests/test_smoothquant.py", MOCKED_TEST, "to(torch.bfloat16)")
    assert not _severities(found, "tests/test_smoothquant.py", MOCKED_TEST, "Linear(64, 64)")


def test_bf16_in_tests_that_move_to_the_real_npu_is_kept(tmp_path):
    src = MOCKED_TEST.replace("            torch.Tensor.npu = mock_npu\n", "")
    found = dedented_tree(tmp_path, {"tests/test_smoothquant.py": src})
    assert _severities(found, "tests/test_smoothquant.py", src, "Linear(64, 64)")


# -- a table numbering dtypes (visitor._dtype_index_table) ------------------------------------------------------
CODEC = """\
    import torch

    # DON'T CHANGE ORDER
    _TORCH_DTYPES_MAPPING = {
        0: torch.float32,
        1: torch.float64,
        2: torch.float16,
        3: torch.bfloat16,
        4: torch.uint8,
        5: torch.int64,
        6: torch.bool,
    }


    def deserialize(data, index):
        return torch.frombuffer(data, dtype=_TORCH_DTYPES_MAPPING[index])


    def to_half(x):
        return x.to(torch.bfloat16)
    """


def test_a_table_numbering_dtypes_chooses_none(tmp_path):
    found = dedented_tree(tmp_path, {"src/codec/constants.py": CODEC})
    assert not _severities(found, "src/codec/constants.py", CODEC, "3: torch.bfloat16")
    assert not _severities(found, "src/codec/constants.py", CODEC, "2: torch.float16")
    # a dtype the code chooses keeps its hint
    assert _severities(found, "src/codec/constants.py", CODEC, "x.to(torch.bfloat16)")


OPTION_TABLE = """\
    import argparse

    import torch

    PRECISIONS = {0: torch.float32, 1: torch.float16, 2: torch.bfloat16, 3: torch.float64}
    parser = argparse.ArgumentParser()
    parser.add_argument("--precision", type=int, default=1)
    args = parser.parse_args()
    model = torch.nn.Linear(8, 8).to(PRECISIONS[args.precision])
    """


def test_a_dtype_table_an_option_indexes_keeps_its_hints(tmp_path):
    """review49 item 12: `PRECISIONS[args.precision]` picks the dtype by the option's index, whose default names no
    dtype: the table is where the choice is written."""
    found = dedented_tree(tmp_path, {"train.py": OPTION_TABLE})
    assert _severities(found, "train.py", OPTION_TABLE, "1: torch.float16") == {"info"}
    for config in ('cfg.precision', 'self.config["precision"]'):
        src = OPTION_TABLE.replace("args.precision", config)
        found = dedented_tree(tmp_path / config[:3], {"train.py": src})
        assert _severities(found, "train.py", src, "2: torch.bfloat16") == {"info"}


# -- a copied library whose package loads modules by a computed name (unreached_defs._lower_copies) --------------
PEFT_AUTO = """\
    import importlib

    from peft.mapping import MODEL_TYPE_TO_PEFT_MODEL_MAPPING


    class AutoPeftModel:
        @classmethod
        def from_pretrained(cls, name, task_type):
            module = importlib.import_module(f"peft.tuners.{task_type}")
            return getattr(module, MODEL_TYPE_TO_PEFT_MODEL_MAPPING[task_type])(name)
    """
PEFT_MAPPING = """\
    from peft.tuners.lora import LoraModel

    MODEL_TYPE_TO_PEFT_MODEL_MAPPING = {"lora": "LoraModel"}
    """
PEFT_LORA = """\
    import torch


    class LoraModel(torch.nn.Module):
        def __init__(self, name):
            super().__init__()
            self.name = name
    """
PEFT_GPU_TEST = """\
    import unittest

    import torch
    from transformers import AutoModelForCausalLM

    from .testing_utils import require_torch_gpu


    @require_torch_gpu
    class PeftGPUCommonTests(unittest.TestCase):
        def setUp(self):
            self.causal_lm_model_id = "facebook/opt-350m"

        def tearDown(self):
            torch.cuda.empty_cache()

        def test_lora_causal_lm(self):
            model = AutoModelForCausalLM.from_pretrained(self.causal_lm_model_id, device_map="auto")
            self.assertIsNotNone(model)
    """
OWN_MODEL = """\
    import torch
    from peft import LoraModel


    def build(name):
        model = LoraModel(name)
        return model.cuda()
    """


def test_a_copied_librarys_tests_stay_unreached_beside_its_computed_name_loader(tmp_path):
    files = {"src/models/peft_models.py": OWN_MODEL, "proj/peft/setup.py": "from setuptools import setup\nsetup()\n",
             "proj/peft/src/peft/__init__.py": "from .tuners.lora import LoraModel\nfrom .auto import AutoPeftModel\n",
             "proj/peft/src/peft/auto.py": PEFT_AUTO, "proj/peft/src/peft/mapping.py": PEFT_MAPPING,
             "proj/peft/src/peft/tuners/__init__.py": "", "proj/peft/src/peft/tuners/lora.py": PEFT_LORA,
             "proj/peft/tests/test_common_gpu.py": PEFT_GPU_TEST, "proj/peft/tests/testing_utils.py":
             "import unittest\n\nimport torch\n\n\ndef require_torch_gpu(case):\n"
             "    return unittest.skipUnless(torch.cuda.is_available(), 'test requires GPU')(case)\n"}
    found = dedented_tree(tmp_path, files)
    assert _severities(found, "proj/peft/tests/test_common_gpu.py", PEFT_GPU_TEST, "empty_cache") == {"info"}
    assert "error" in _severities(found, "src/models/peft_models.py", OWN_MODEL, "cuda()")
