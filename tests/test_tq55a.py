"""tq55a (session 55; TUNED on heldout72): packages carried with another project's release version in a tree that
packages nothing, an extension build folder's own check script. Each shape on code like the trees it came from, beside
a control that keeps its finding."""
from __future__ import annotations

from tests.static_snippets import dedented_tree, severity_at

# descript's audiotools carried at a research tree's root (`__version__` in its `__init__.py`), its Accelerator
# nothing builds; the tree trains with HF accelerate
_TOOLS_INIT = '''
__version__ = "0.7.3"
from .core import AudioSignal
from . import ml
'''
_TOOLS_CORE = "from .signal import AudioSignal\n"
_TOOLS_SIGNAL = '''
import torch


class AudioSignal:
    def __init__(self, data, sample_rate):
        self.audio_data = torch.as_tensor(data)
        self.sample_rate = sample_rate
'''
_TOOLS_ML = "from .accelerator import Accelerator\n"
_ACCELERATOR = '''
import os

import torch
from torch.nn.parallel import DataParallel


class Accelerator:
    def __init__(self, amp: bool = False):
        local_rank = os.getenv("LOCAL_RANK", None)
        self.world_size = torch.cuda.device_count()
        self.local_rank = 0 if local_rank is None else int(local_rank)

    def prepare_model(self, model, **kwargs):
        model = model.to("cuda")
        if self.world_size > 1:
            model = DataParallel(model, **kwargs)
        return model
'''
_LOSS = '''
from audiotools import AudioSignal


def multiscale_loss(x, y):
    return (AudioSignal(x, 16000).audio_data - y).abs().mean()
'''
_TRAIN = '''
import torch
from accelerate import Accelerator

from modules.loss import multiscale_loss


def main():
    accelerator = Accelerator(mixed_precision="fp16")
    x = torch.randn(4, 16000)
    print(multiscale_loss(x, x), accelerator.device)


if __name__ == "__main__":
    main()
'''
_README = "# SoundGen\n\nText-to-audio generation. Run `python src/train.py`.\n"


def _tools_tree(tmp_path, init: str = _TOOLS_INIT, extra: dict[str, str] | None = None):
    return dedented_tree(tmp_path, {"audiotools/__init__.py": init, "audiotools/core/__init__.py": _TOOLS_CORE,
                                    "audiotools/core/signal.py": _TOOLS_SIGNAL, "audiotools/ml/__init__.py": _TOOLS_ML,
                                    "audiotools/ml/accelerator.py": _ACCELERATOR, "src/modules/__init__.py": "",
                                    "src/modules/loss.py": _LOSS, "src/train.py": _TRAIN, "README.md": _README,
                                    **(extra or {})})


def test_versioned_package_in_a_tree_that_packages_nothing_is_a_copy(tmp_path):
    found = _tools_tree(tmp_path)
    at = severity_at(found, "audiotools/ml/accelerator.py", _ACCELERATOR, "torch.cuda.device_count")
    assert set(at.values()) == {"info"}
    assert set(severity_at(found, "audiotools/ml/accelerator.py", _ACCELERATOR, "DataParallel(model").values()) == \
        {"info"}


def test_versioned_package_of_a_tree_with_its_own_packaging_keeps_its_findings(tmp_path):
    setup = 'from setuptools import setup, find_packages\n\nsetup(name="soundgen", packages=find_packages())\n'
    found = _tools_tree(tmp_path, extra={"setup.py": setup})
    assert "error" in severity_at(found, "audiotools/ml/accelerator.py", _ACCELERATOR,
                                  "torch.cuda.device_count").values()


def test_unversioned_package_keeps_its_findings(tmp_path):
    found = _tools_tree(tmp_path, init=_TOOLS_INIT.replace('__version__ = "0.7.3"\n', ""))
    assert "error" in severity_at(found, "audiotools/ml/accelerator.py", _ACCELERATOR,
                                  "torch.cuda.device_count").values()


def test_versioned_package_the_readme_names_is_the_trees_own(tmp_path):
    found = _tools_tree(tmp_path, extra={"README.md": _README + "\n`audiotools` holds our signal helpers.\n"})
    assert "error" in severity_at(found, "audiotools/ml/accelerator.py", _ACCELERATOR,
                                  "torch.cuda.device_count").values()


def test_versioned_copy_keeps_what_the_tree_runs(tmp_path):
    train = _TRAIN.replace("from accelerate import Accelerator\n", "from audiotools.ml import Accelerator\n") \
        .replace('Accelerator(mixed_precision="fp16")', "Accelerator()")
    found = _tools_tree(tmp_path, extra={"src/train.py": train})
    assert "error" in severity_at(found, "audiotools/ml/accelerator.py", _ACCELERATOR,
                                  "torch.cuda.device_count").values()


# Deformable-DETR's MSDeformAttn op carried inside a detection app: `ops/setup.py` builds the extension, `ops/test.py`
# checks it against the PyTorch reference (run by hand from `ops/`)
_OPS_SETUP = '''
import torch
from setuptools import find_packages, setup
from torch.utils.cpp_extension import CUDA_HOME, CppExtension, CUDAExtension


def get_extensions():
    extension = CUDAExtension if torch.cuda.is_available() and CUDA_HOME is not None else CppExtension
    return [extension("MultiScaleDeformableAttention", ["src/vision.cpp"])]


setup(name="MultiScaleDeformableAttention", packages=find_packages(), ext_modules=get_extensions())
'''
_OPS_FUNC = '''
import torch
import MultiScaleDeformableAttention as MSDA


def ms_deform_attn_core_pytorch(value, shapes, locations, weights):
    return value.sum() * weights.sum()
'''
_OPS_TEST = '''
import torch
from torch.autograd import gradcheck

from functions.ms_deform_attn_func import ms_deform_attn_core_pytorch

shapes = torch.as_tensor([(6, 4), (3, 2)], dtype=torch.long).cuda()


def check_forward_equal_with_pytorch_double():
    value = torch.rand(1, 30, 2, 2).cuda() * 0.01
    print(ms_deform_attn_core_pytorch(value.double(), shapes, value, value))


if __name__ == "__main__":
    check_forward_equal_with_pytorch_double()
'''
_MODEL = '''
import torch
from models.ops.functions.ms_deform_attn_func import ms_deform_attn_core_pytorch


def forward(value, shapes):
    return ms_deform_attn_core_pytorch(value, shapes, value, value)
'''


def _ops_tree(tmp_path, extra: dict[str, str] | None = None):
    return dedented_tree(tmp_path, {"apps/detr/models/ops/setup.py": _OPS_SETUP,
                                    "apps/detr/models/ops/functions/__init__.py": "",
                                    "apps/detr/models/ops/functions/ms_deform_attn_func.py": _OPS_FUNC,
                                    "apps/detr/models/ops/test.py": _OPS_TEST,
                                    "apps/detr/models/__init__.py": "", "apps/detr/models/detr.py": _MODEL,
                                    **(extra or {})})


def test_extension_build_folders_check_script_is_info(tmp_path):
    found = _ops_tree(tmp_path)
    assert severity_at(found, "apps/detr/models/ops/test.py", _OPS_TEST, "dtype=torch.long).cuda()")["NPU001"] == "info"
    assert severity_at(found, "apps/detr/models/ops/test.py", _OPS_TEST, "0.01")["NPU001"] == "info"


def test_extension_check_script_a_shell_script_runs_keeps_its_error(tmp_path):
    found = _ops_tree(tmp_path, {"apps/detr/models/ops/make.sh": "python setup.py build install\npython test.py\n"})
    assert severity_at(found, "apps/detr/models/ops/test.py", _OPS_TEST, "dtype=torch.long).cuda()")["NPU001"] == "error"


def test_extension_check_script_the_folders_readme_documents_keeps_its_error(tmp_path):
    readme = "# Yuan vLLM\n\nEdit the model path in test.py, then run it to generate.\n"
    found = _ops_tree(tmp_path, {"apps/detr/models/ops/README.md": readme})
    assert severity_at(found, "apps/detr/models/ops/test.py", _OPS_TEST, "dtype=torch.long).cuda()")["NPU001"] == "error"


def test_script_beside_a_setup_py_that_imports_no_extension_package_keeps_its_error(tmp_path):
    test = _OPS_TEST.replace("from functions.ms_deform_attn_func import", "from models.ops.functions.ms_deform_attn_func import")
    found = _ops_tree(tmp_path, {"apps/detr/models/ops/test.py": test})
    assert severity_at(found, "apps/detr/models/ops/test.py", test, "dtype=torch.long).cuda()")["NPU001"] == "error"


# GammaGL-like library: setup.py picks tensorlayerx's CUDA or CPU extension from a flag found from nvcc; a build
# helper module in the package that setup.py no longer imports
_SETUP = '''
import os
import shutil
from setuptools import setup, find_packages
from tensorlayerx.utils import PyCppExtension, PyCUDAExtension, PyBuildExtension


def _has_cuda_toolkit():
    return shutil.which("nvcc") is not None


WITH_CUDA = _has_cuda_toolkit()

cuda_macro = ('COMPILE_WITH_CUDA', True)
compile_args = {'cxx': ['-std=c++17']}


def load_extensions():
    if WITH_CUDA:
        ops_types = ["cpu", "cuda"]
    else:
        ops_types = ["cpu"]
    sources = [os.path.join("gammagl/ops", t, "op.cpp") for t in ops_types]
    extensions = []
    if not WITH_CUDA:
        extensions.append(PyCppExtension(name="gammagl.ops._op", sources=sources, extra_compile_args=compile_args))
    else:
        extensions.append(PyCUDAExtension(name="gammagl.ops._op", sources=sources, define_macros=[cuda_macro],
                                          extra_compile_args=compile_args))
    return extensions


setup(name="gammagl", packages=find_packages(), ext_modules=load_extensions(),
      cmdclass={"build_ext": PyBuildExtension})
'''
_HELPER = '''
import os
import subprocess

import setuptools
from setuptools.command.build_ext import build_ext


def _find_cuda_home():
    cuda_home = os.environ.get('CUDA_HOME') or os.environ.get('CUDA_PATH')
    if cuda_home is None:
        nvcc = subprocess.check_output(['which', 'nvcc']).decode().rstrip()
        cuda_home = os.path.dirname(os.path.dirname(nvcc))
    return cuda_home


def PyCudaExtension(name, sources, *args, **kwargs):
    define_macros = kwargs.get('define_macros', [])
    define_macros.append(('WITH_CUDA', None))
    kwargs['define_macros'] = define_macros
    return setuptools.Extension(name, sources, *args, **kwargs)
'''


def _library_tree(tmp_path, setup: str = _SETUP, extra: dict[str, str] | None = None):
    return dedented_tree(tmp_path, {"setup.py": setup, "gammagl/__init__.py": "from . import utils\n",
                                    "gammagl/utils/__init__.py": "", "gammagl/utils/ggl_build_extension.py": _HELPER,
                                    **(extra or {})})


def test_setup_py_value_read_only_in_the_cuda_arm_is_info(tmp_path):
    found = _library_tree(tmp_path)
    assert severity_at(found, "setup.py", _SETUP, "cuda_macro = ")["NPU311"] == "info"


def test_setup_py_with_the_flag_forced_on_keeps_its_warning(tmp_path):
    setup = _SETUP.replace("WITH_CUDA = _has_cuda_toolkit()", "WITH_CUDA = True")
    found = _library_tree(tmp_path, setup)
    assert severity_at(found, "setup.py", setup, "cuda_macro = ")["NPU311"] == "warning"


def test_build_helper_nothing_imports_is_info(tmp_path):
    found = _library_tree(tmp_path)
    assert severity_at(found, "gammagl/utils/ggl_build_extension.py", _HELPER, "('WITH_CUDA', None)")["NPU311"] == "info"


def test_build_helper_setup_py_imports_keeps_its_warning(tmp_path):
    setup = _SETUP.replace("from tensorlayerx.utils import", "from gammagl.utils.ggl_build_extension import "
                           "PyCudaExtension\nfrom tensorlayerx.utils import")
    found = _library_tree(tmp_path, setup)
    assert severity_at(found, "gammagl/utils/ggl_build_extension.py", _HELPER, "('WITH_CUDA', None)")["NPU311"] == \
        "warning"


def test_module_importing_only_distutils_version_helpers_is_no_build_helper(tmp_path):
    model = '''
from distutils.version import LooseVersion

import torch


def make_window(n):
    if LooseVersion(torch.__version__) >= LooseVersion("1.7"):
        return torch.hann_window(n).cuda()
    return torch.hann_window(n)
'''
    found = _library_tree(tmp_path, extra={"gammagl/utils/window.py": model})
    assert severity_at(found, "gammagl/utils/window.py", model, ".cuda()")["NPU001"] == "error"
