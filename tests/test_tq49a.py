"""Precision fixes of tq49a (session 49, tuned on heldout59's labels): copied source roots
(auditor/static/unreached_defs.py, `_source_root_copies`), and computed-name loaders read per copy.

A folder at least two levels down whose packages import one another by their bare top-level names (`from
utils.image import x` in `lib/detectors/`, `from modules import ABN` in `networks/`) runs only with that folder on
sys.path: another repository's `src/lib` or root, carried in a tree that imports the folder by its path. Its modules
no import from the tree's code loads are info (policy (j)), like a copied package's; what the tree imports keeps its
severity. A loader of computed module names inside a checkout copied deeper in such a root turns the unimported reading
off for that checkout only. Controls: a folder nothing outside imports by its path (a program's own layout), and a
copy's module the tree loads, keep their findings. Code written afresh in the shape of a table-recognition library and
a human-parsing project, not copied."""
from __future__ import annotations

from pathlib import Path

from tests.test_tq38 import _in, _tree

PIPELINE = """\
import numpy as np
import torch

from .lib.utils.image import get_affine_transform


class TableParser:
    def __init__(self, device="cpu"):
        self.device = torch.device(device)

    def preprocess(self, image):
        return get_affine_transform(np.asarray(image.shape[:2]))
"""

IMAGE = """\
import numpy as np
import torch


def get_affine_transform(size):
    return torch.from_numpy(np.eye(3)).cuda()
"""

UTILS = """\
from utils.image import get_affine_transform


def make_batch(images):
    return [get_affine_transform(i.shape) for i in images]
"""

BASE_DETECTOR = """\
import torch

from models.model import create_model
from utils.utils import make_batch
from utils.image import get_affine_transform


class BaseDetector(object):
    def __init__(self, opt):
        if opt.gpus[0] >= 0:
            opt.device = torch.device('cuda')
        self.model = create_model(opt.arch).to(opt.device)

    def run(self, image):
        torch.cuda.synchronize()
        return self.model(torch.Tensor(make_batch([image])).cuda())
"""

CTDET = """\
import torch

from external.nms import soft_nms
from utils.image import get_affine_transform
from .base_detector import BaseDetector


class CtdetDetector(BaseDetector):
    def process(self, batch):
        hm = torch.Tensor(batch['hm']).unsqueeze(0).cuda()
        return soft_nms(hm)
"""

NMS = """\
def soft_nms(boxes):
    return boxes
"""

LIB = "ocrkit/layout/table/"


def _table_tree(importer: bool = True) -> dict[str, str]:
    files = {"ocrkit/__init__.py": "", "ocrkit/layout/__init__.py": "", LIB + "__init__.py": "",
             LIB + "lib/__init__.py": "", LIB + "lib/utils/__init__.py": "", LIB + "lib/utils/image.py": IMAGE,
             LIB + "lib/utils/utils.py": UTILS, LIB + "lib/detectors/__init__.py": "",
             LIB + "lib/detectors/base_detector.py": BASE_DETECTOR, LIB + "lib/detectors/ctdet.py": CTDET,
             LIB + "lib/external/__init__.py": "", LIB + "lib/external/nms.py": NMS}
    if importer:
        files[LIB + "pipeline.py"] = PIPELINE
    return files


def _line(src: str, needle: str) -> int:
    return next(i for i, line in enumerate(src.splitlines(), 1) if needle in line)


def test_modules_of_a_copied_source_root_nothing_imports_are_info(tmp_path: Path):
    found = _tree(tmp_path, _table_tree())
    base = _in(found, "lib/detectors/base_detector.py")
    assert base[_line(BASE_DETECTOR, "torch.cuda.synchronize")]["NPU002"] == "info"
    assert base[_line(BASE_DETECTOR, "torch.device('cuda')")]["NPU003"] == "info"
    assert _in(found, "lib/detectors/ctdet.py")[_line(CTDET, ".cuda()")]["NPU001"] == "info"
    # the module the tree's pipeline imports keeps its error
    assert _in(found, "lib/utils/image.py")[_line(IMAGE, ".cuda()")]["NPU001"] == "error"


def test_a_folder_nothing_outside_imports_by_its_path_is_no_copy(tmp_path: Path):
    found = _tree(tmp_path, _table_tree(importer=False))
    base = _in(found, "lib/detectors/base_detector.py")
    assert base[_line(BASE_DETECTOR, "torch.cuda.synchronize")]["NPU002"] == "error"


# -- a human-parsing project carried as a sys.path root, with a detectron2 checkout inside ----------------------------

RUN_PARSING = """\
import sys
from pathlib import Path

PROJECT_ROOT = Path(__file__).absolute().parents[0]
sys.path.insert(0, str(PROJECT_ROOT))

import onnxruntime as ort
from datasets.simple_dataset import SimpleFolderDataset


class Parsing:
    def __init__(self, model_path):
        self.session = ort.InferenceSession(model_path, providers=["CPUExecutionProvider"])

    def __call__(self, folder):
        return [self.session.run(None, {"x": item}) for item in SimpleFolderDataset(folder)]
"""

SIMPLE_DATASET = """\
import numpy as np
from utils.transforms import get_affine_transform


class SimpleFolderDataset:
    def __init__(self, root):
        self.items = [np.zeros((3, 4, 4), dtype=np.float32)]

    def __iter__(self):
        return iter(get_affine_transform(i) for i in self.items)
"""

TRANSFORMS = """\
def get_affine_transform(item):
    return item
"""

ENCODING = """\
import torch
import torch.cuda.comm as comm
from torch.autograd import Function


class Broadcast(Function):
    @staticmethod
    def forward(ctx, target_gpus, *inputs):
        ctx.target_gpus = target_gpus
        return comm.broadcast_coalesced(inputs, ctx.target_gpus)
"""

NET = """\
import torch.nn as nn
from modules import InPlaceABNSync


class ResNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.bn = InPlaceABNSync(64)
"""

MODULES_INIT = "from .bn import InPlaceABNSync\n"

BN = """\
import torch.nn as nn
from .functions import inplace_abn_sync


class InPlaceABNSync(nn.BatchNorm2d):
    def forward(self, x):
        return inplace_abn_sync(x)
"""

FUNCTIONS = """\
from os import path
from torch.utils.cpp_extension import load

_src = path.join(path.dirname(path.abspath(__file__)), "src")
_backend = load(name="inplace_abn", sources=[path.join(_src, "inplace_abn_cuda.cu")],
                extra_cuda_cflags=["--expt-extended-lambda"])


def inplace_abn_sync(x):
    return _backend.forward(x)
"""

TRAIN = """\
import argparse

import networks
from utils.encoding import Broadcast


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--gpu", default="0")
    args = parser.parse_args()
    model = networks.ResNet()
    model.cuda()


if __name__ == "__main__":
    main()
"""

RUN_DEMO = """\
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).absolute().parents[1]))
from preprocess.parsing.run_parsing import Parsing


def main():
    print(Parsing("parsing.onnx")("images"))


if __name__ == "__main__":
    main()
"""

D2_ENV = """\
import importlib


def setup_custom_environment(custom_module):
    module = importlib.import_module(custom_module)
    module.setup_environment()
"""

D2_COMM = """\
import torch
from detectron2.utils.env import setup_custom_environment


def is_main_process():
    return True
"""

D2_TRAIN = """\
import torch
from detectron2.engine import PeriodicCheckpointer
from detectron2.utils.env import setup_custom_environment


def main():
    setup_custom_environment("my_env")
    torch.cuda.set_device(0)


if __name__ == "__main__":
    main()
"""

P = "preprocess/parsing/"
D2 = P + "extension/detectron2/"


def _parsing_tree() -> dict[str, str]:
    return {"run/run_demo.py": RUN_DEMO, P + "run_parsing.py": RUN_PARSING,
            P + "datasets/__init__.py": "", P + "datasets/simple_dataset.py": SIMPLE_DATASET,
            P + "utils/__init__.py": "", P + "utils/transforms.py": TRANSFORMS, P + "utils/encoding.py": ENCODING,
            P + "networks/__init__.py": "from networks.resnet import ResNet\n", P + "networks/resnet.py": NET,
            P + "modules/__init__.py": MODULES_INIT, P + "modules/bn.py": BN, P + "modules/functions.py": FUNCTIONS,
            P + "extension/global_local/train.py": TRAIN,
            D2 + "setup.py": "from setuptools import setup\nsetup(name='detectron2')\n", D2 + "LICENSE": "Apache\n",
            D2 + "detectron2/__init__.py": "", D2 + "detectron2/utils/__init__.py": "",
            D2 + "detectron2/utils/env.py": D2_ENV, D2 + "detectron2/utils/comm.py": D2_COMM,
            D2 + "detectron2/engine/__init__.py": "from detectron2.engine.hooks import PeriodicCheckpointer\n",
            D2 + "detectron2/engine/hooks.py": "from detectron2.utils.comm import is_main_process\n",
            D2 + "tools/train_net.py": D2_TRAIN}


def test_a_copied_project_root_the_tree_puts_on_sys_path_keeps_only_what_it_imports(tmp_path: Path):
    found = _tree(tmp_path, _parsing_tree())
    assert _in(found, "modules/functions.py")[_line(FUNCTIONS, "_backend = load(")]["NPU370"] == "info"
    assert _in(found, "utils/encoding.py")[_line(ENCODING, "comm.broadcast_coalesced")]["NPU002"] == "info"
    assert _in(found, "global_local/train.py")[_line(TRAIN, "model.cuda()")]["NPU001"] == "info"
    # the checkout copied inside keeps its own tools as entries (a user may run them)
    assert _in(found, "tools/train_net.py")[_line(D2_TRAIN, "set_device")]["NPU002"] == "error"


def test_a_computed_name_loader_of_the_trees_own_code_keeps_every_copy_loadable(tmp_path: Path):
    files = _parsing_tree()
    files["run/plugins.py"] = ("import importlib\n\n\ndef load_plugin(name):\n"
                               "    return importlib.import_module(name)\n")
    files["run/run_demo.py"] = RUN_DEMO.replace("from preprocess", "from plugins import load_plugin\nfrom preprocess")
    found = _tree(tmp_path, files)
    assert _in(found, "modules/functions.py")[_line(FUNCTIONS, "_backend = load(")]["NPU370"] == "error"


# -- the items of a loop over tensors its iterable moved to the host (policy (o)) ------------------------------------

LAYOUT = """\
import torch


class LayoutModel:
    def __init__(self, model, device):
        self.model = model
        self.device = device

    def predict(self, image):
        res = self.model.predict(image, device=self.device)[0]
        out = []
        for xyxy, conf, cla in zip(res.boxes.xyxy.cpu(), res.boxes.conf.cpu(), res.boxes.cls.cpu()):
            out.append({"category_id": int(cla.item()), "score": round(float(conf.item()), 3)})
        return out

    def predict_on_device(self, image):
        res = self.model.predict(image, device=self.device)[0]
        out = []
        for conf, cla in zip(res.boxes.conf, res.boxes.cls):
            out.append({"category_id": int(cla.item()), "score": round(float(conf.item()), 3)})
        return out
"""


def test_item_of_a_loop_over_tensors_moved_to_the_host_is_no_sync_hint(tmp_path: Path):
    found = _in(_tree(tmp_path, {"layout/model.py": LAYOUT}), "layout/model.py")
    lines = [i for i, line in enumerate(LAYOUT.splitlines(), 1) if "int(cla.item())" in line]
    assert "NPU703" not in found.get(lines[0], {})
    # control: the loop over the device results keeps the hint
    assert found[lines[1]]["NPU703"] == "info"


# -- control: a package of the tree's own named like a pip package its siblings import ------------------------------

LLAMA_ATTN = """\
import torch
from transformers.models.llama.configuration_llama import LlamaConfig
from transformers.utils import is_flash_attn_2_available


class ParallelLlamaAttention(torch.nn.Module):
    def __init__(self, config: LlamaConfig):
        super().__init__()
        self.rotary = torch.ones(1, device="cuda")
"""

MONKEY = """\
from transformers.modeling_flash_attention_utils import _flash_attention_forward
from transformers.models.llama.modeling_llama import apply_rotary_pos_emb
"""

TRAINER = """\
from rl.models.llama.layers.parallel_attention import ParallelLlamaAttention
"""


def test_a_trees_own_package_named_like_the_pip_package_its_siblings_import_is_no_source_root(tmp_path: Path):
    files = {"rl/__init__.py": "", "rl/models/__init__.py": "", "rl/models/llama/__init__.py": "",
             "rl/models/llama/layers/__init__.py": "", "rl/models/llama/layers/parallel_attention.py": LLAMA_ATTN,
             "rl/models/qwen2/__init__.py": "", "rl/models/qwen2/attention.py": LLAMA_ATTN,
             "rl/models/transformers/__init__.py": "", "rl/models/transformers/llama.py": MONKEY,
             "rl/models/transformers/qwen2.py": MONKEY, "rl/trainer/__init__.py": "", "rl/trainer/main.py": TRAINER}
    found = _tree(tmp_path, files)
    assert _in(found, "qwen2/attention.py")[_line(LLAMA_ATTN, 'device="cuda"')]["NPU003"] == "error"
