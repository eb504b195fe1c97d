"""t11u (issue 11, session 13; tuned on heldout13): the project's own CUDA predicates (a method probe on `self`, a
project count helper, a class default such a probe reads), another accelerator's package, MPS that is not Apple's,
and `import *` bound by `__all__`. Trees modelled on data-juicer, intel-extension-for-deepspeed, evalscope and
detectron2 (as vendored in stable-diffusion-webui-forge)."""
from __future__ import annotations

from pathlib import Path

from auditor.runner import run_static
from tests.static_snippets import write_tree

RESOURCE_UTILS = '''\
import subprocess


def _cuda_device_count():
    try:
        out = subprocess.check_output(["nvidia-smi", "-L"], text=True)
        return len(out.strip().splitlines())
    except Exception:
        return 0


def cuda_device_count():
    return _cuda_device_count()


def is_cuda_available():
    return cuda_device_count() > 0
'''

BASE_OP = '''\
from dj.utils.resource_utils import is_cuda_available


class OP:
    _accelerator = "cpu"

    def __init__(self, *args, **kwargs):
        _accelerator = kwargs.get("accelerator", None)
        if _accelerator is not None:
            self.accelerator = _accelerator
        else:
            self.accelerator = self._accelerator

    def use_cuda(self):
        return self.accelerator == "cuda" and is_cuda_available()


class Filter(OP):
    def compute_stats_single(self, sample, rank=None):
        raise NotImplementedError
'''

RAFT_FILTER = '''\
import torch
import torchvision.models as tvm

from dj.utils.resource_utils import cuda_device_count

from ..base_op import Filter


class VideoMotionScoreRaftFilter(Filter):
    _accelerator = "cuda"

    def setup_model(self, rank=None):
        self.model = tvm.optical_flow.raft_large(progress=False)
        if self.use_cuda():
            rank = rank if rank is not None else 0
            rank = rank % cuda_device_count()
            self.device = f"cuda:{rank}"
        else:
            self.device = "cpu"
        self.model.to(self.device)
        self.model.eval()

    def compute_flow(self, frames):
        with torch.no_grad():
            return self.model(frames.to(self.device))
'''

# the op's CUDA default is read by nothing like a probe: it stays an error
PLAIN_FILTER = '''\
import torch

from ..base_op import Filter


class PlainCudaFilter(Filter):
    _device = "cuda"

    def compute_stats_single(self, sample, rank=None):
        return torch.zeros(4, device=self._device)
'''

MODEL_UTILS = '''\
from dj.utils.resource_utils import cuda_device_count

MODEL_ZOO = {}


def get_model(model_key=None, rank=None, use_cuda=False):
    if model_key not in MODEL_ZOO:
        if use_cuda and cuda_device_count() > 0:
            rank = rank if rank is not None else 0
            rank = rank % cuda_device_count()
            device = f"cuda:{rank}"
        else:
            device = "cpu"
        MODEL_ZOO[model_key] = model_key(device=device)
    return MODEL_ZOO[model_key]
'''


def _found(root: Path) -> dict[tuple[str, int, str], tuple[str, str]]:
    run = run_static([root], jobs=1)
    return {(r.path, f.line, f.code): (f.severity, f.message) for r in run.results for f in r.findings}


def _data_juicer(root: Path) -> Path:
    return write_tree(root, {"dj/__init__.py": "", "dj/utils/__init__.py": "", "dj/ops/__init__.py": "",
                             "dj/ops/filter/__init__.py": "", "dj/utils/resource_utils.py": RESOURCE_UTILS,
                             "dj/ops/base_op.py": BASE_OP, "dj/ops/filter/raft_filter.py": RAFT_FILTER,
                             "dj/ops/filter/plain_filter.py": PLAIN_FILTER, "dj/utils/model_utils.py": MODEL_UTILS})


def test_method_probe_of_a_base_class_gates_the_subclass_body(tmp_path: Path) -> None:
    found = _found(_data_juicer(tmp_path))
    severity, message = found[("dj/ops/filter/raft_filter.py", 17, "NPU003")]     # self.device = f"cuda:{rank}"
    assert severity == "warning" and "if self.use_cuda()" in message


def test_class_default_read_by_the_probe_is_a_warning(tmp_path: Path) -> None:
    found = _found(_data_juicer(tmp_path))
    severity, message = found[("dj/ops/filter/raft_filter.py", 10, "NPU003")]     # _accelerator = "cuda"
    assert severity == "warning" and "class default" in message
    # a CUDA default no probe reads keeps its error
    assert found[("dj/ops/filter/plain_filter.py", 7, "NPU003")][0] == "error"


def test_project_count_helper_gates_like_torch_cuda_device_count(tmp_path: Path) -> None:
    found = _found(_data_juicer(tmp_path))
    assert found[("dj/utils/model_utils.py", 11, "NPU003")][0] == "warning"      # device = f"cuda:{rank}"
    # model_key(device=device): a use of the if / else choice with its "cpu" fallback, read like `"cuda:..." if ...
    # else "cpu"` (t11y): the choice is reported, the use is not (pd17, heldout23's GPT-SoVITS `vq_model.to(device)`)
    assert ("dj/utils/model_utils.py", 14, "NPU003") not in found


XPU_BUILDER = '''\
import os
from deepspeed.ops.op_builder.builder import OpBuilder


class SYCLOpBuilder(OpBuilder):
    def builder(self):
        try:
            from intel_extension_for_pytorch.xpu.cpp_extension import DPCPPExtension
        except ImportError:
            from intel_extension_for_pytorch.xpu.utils import DPCPPExtension
        return DPCPPExtension(name=self.absolute_name(), sources=self.sources())
'''

XPU_FUSED_ADAM = '''\
from .builder import SYCLOpBuilder


class FusedAdamBuilder(SYCLOpBuilder):
    BUILD_VAR = "DS_BUILD_FUSED_ADAM"
    NAME = "fused_adam"

    def __init__(self):
        super().__init__(name=self.NAME)

    def absolute_name(self):
        return f"deepspeed.ops.adam.{self.NAME}_op"
'''

CUDA_FUSED_ADAM = XPU_FUSED_ADAM.replace("from .builder import SYCLOpBuilder",
                                         "from deepspeed.ops.op_builder.builder import CUDAOpBuilder as SYCLOpBuilder")


def test_another_accelerators_package_is_info(tmp_path: Path) -> None:
    root = write_tree(tmp_path / "xpu", {"ixds/__init__.py": "", "ixds/op_builder/__init__.py": "",
                                         "ixds/op_builder/builder.py": XPU_BUILDER,
                                         "ixds/op_builder/fused_adam.py": XPU_FUSED_ADAM})
    found = _found(root)
    severity, message = found[("ixds/op_builder/fused_adam.py", 5, "NPU021")]
    assert severity == "info" and "intel_extension_for_pytorch" in message
    # the same builder in a package that imports no other accelerator's runtime keeps its warning
    other = write_tree(tmp_path / "cuda", {"dsops/__init__.py": "", "dsops/fused_adam.py": CUDA_FUSED_ADAM})
    assert _found(other)[("dsops/fused_adam.py", 5, "NPU021")][0] == "warning"


MPS_MODEL = '''\
import torch

MPS_MODELS = ["mps"]


class MPSModel:
    def __init__(self, model_name="mps", device="cuda", cache_dir="~/.cache"):
        assert model_name == "mps"
        self.device = device
        self.model = torch.nn.Linear(4, 4).to(self.device)
'''

APPLE_MPS = '''\
import torch


class MPSRunner:
    def __init__(self, device="cuda"):
        self.device = torch.device("mps") if torch.backends.mps.is_available() else torch.device(device)
'''


def test_mps_in_a_name_is_apples_only_when_the_code_uses_apples_mps(tmp_path: Path) -> None:
    root = write_tree(tmp_path, {"metrics/__init__.py": "", "metrics/mps_model.py": MPS_MODEL,
                                 "metrics/apple_mps.py": APPLE_MPS})
    found = _found(root)
    assert "another backend" not in found[("metrics/mps_model.py", 7, "NPU003")][1]
    assert "another backend" in found[("metrics/apple_mps.py", 5, "NPU003")][1]


TRAIN_LOOP = '''\
import torch
from torch.nn.parallel import DataParallel, DistributedDataParallel

__all__ = ["TrainerBase", "SimpleTrainer"]


class TrainerBase:
    def train(self):
        raise NotImplementedError


class SimpleTrainer(TrainerBase):
    def __init__(self, model, data_loader, optimizer):
        self.model = model
        self.data_loader = data_loader


def unwrap(model):
    return model.module if isinstance(model, (DataParallel, DistributedDataParallel)) else model
'''


def test_star_import_binds_all_not_the_modules_imports(tmp_path: Path) -> None:
    root = write_tree(tmp_path, {"det/__init__.py": "", "det/engine/__init__.py": "from .train_loop import *\n",
                                 "det/engine/train_loop.py": TRAIN_LOOP})
    found = _found(root)
    assert not any(path == "det/engine/__init__.py" for path, _line, _code in found)
    # without __all__ the star import binds the public names, the imported DataParallel among them
    root2 = write_tree(tmp_path / "b", {"det/__init__.py": "", "det/engine/__init__.py": "from .train_loop import *\n",
                                        "det/engine/train_loop.py": TRAIN_LOOP.replace(
                                            '__all__ = ["TrainerBase", "SimpleTrainer"]\n', "")})
    assert ("det/engine/__init__.py", 1, "NPU135") in _found(root2)
