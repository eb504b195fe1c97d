"""t29a (session 29): test47's misses. A CUDA extension held by an object, a global or a caching helper and called
through it (PPQ's `CUDA_COMPLIER.CUDA_EXTENSION.op(...)`), the namespace class that forwards to it, called from other
files (`CUDA.LinearQuantize_T(...)`, also through a package's `__init__.py` and in a partial audit), PPQ's
`ENABLE_CUDA_KERNEL()` switch, a quoted nvidia-smi path, the ".cuda" part of a tensor type name, and a numeric
`opt_level` (a false positive). Each case has a control that must stay quiet."""
from __future__ import annotations

from pathlib import Path

from auditor.rules import load_rules
from auditor.runner import run_static
from auditor.static import StaticEngine

ENGINE = StaticEngine(load_rules())


def _found(src: bytes, path: str = "ops/ffi.py") -> list[tuple[int, str, str]]:
    return sorted((f.line, f.code, f.category) for f in ENGINE.analyze_bytes(src, path).findings)


def _lines(src: bytes, code: str, path: str = "ops/ffi.py") -> list[int]:
    return sorted({line for line, c, _ in _found(src, path) if c == code})


# PPQ's ppq/core/ffi.py, shortened: the holder builds the extension, a property hands it out, a module-level instance
# and a namespace class of static methods call through it
FFI = """import os

import torch
from torch.utils.cpp_extension import load


class ComplieHelper:
    def __init__(self) -> None:
        self.__CUDA_EXTENTION__ = None

    def complie(self):
        root = os.path.dirname(os.path.dirname(__file__))
        self.__CUDA_EXTENTION__ = load(
            name='PPQ_Cuda_Impls',
            sources=[
                os.path.join(root, 'csrc/export.cc'),
                os.path.join(root, 'csrc/cuda/linear.cu'),
            ],
            build_directory=os.path.join(root, 'csrc/build/'),
            with_cuda=True)

    @property
    def CUDA_EXTENSION(self):
        if self.__CUDA_EXTENTION__ is None:
            raise Exception('Cuda Extension has not been compiled')
        return self.__CUDA_EXTENTION__


CUDA_COMPLIER = ComplieHelper()
CUDA_COMPLIER.complie()


class CUDA:
    @staticmethod
    def LinearQuantize_T(tensor: torch.Tensor, scales: torch.Tensor, offsets: torch.Tensor) -> torch.Tensor:
        return CUDA_COMPLIER.CUDA_EXTENSION.QuantizeTensor_LT(
            tensor, scales, offsets)

    @staticmethod
    def Quantile(tensor: torch.Tensor, q: float) -> torch.Tensor:
        return CUDA_COMPLIER.CUDA_EXTENSION.Quantile_T(tensor, q)
"""


def test_holder_instance_calls_through_its_accessor():
    src = FFI.encode()
    flow = _lines(src, "NPU320")
    calls = {_at(FFI, "QuantizeTensor_LT("), _at(FFI, "Quantile_T(")}
    assert calls <= set(flow)                        # CUDA_COMPLIER.CUDA_EXTENSION.<op>(...)
    assert _at(FFI, "CUDA_COMPLIER.complie()") not in flow   # control: the build, not a call of it
    assert all(cat == "kernel" for line, code, cat in _found(src) if code == "NPU320")


def test_holder_of_a_cpp_only_extension_is_host_code():
    src = FFI.replace("            with_cuda=True)", "            with_cuda=False)").replace(
        "os.path.join(root, 'csrc/cuda/linear.cu'),", "os.path.join(root, 'csrc/cpu/linear.cc'),").encode()
    assert not {_at(FFI, "QuantizeTensor_LT("), _at(FFI, "Quantile_T(")} & set(_lines(src, "NPU320"))


# the caching helpers found in other code bases: a global filled on first use, and an lru_cache'd build
CACHED = b"""import functools
from pathlib import Path

from torch.utils.cpp_extension import load

_EXT = None


def load_extension():
    global _EXT
    if _EXT is not None:
        return _EXT
    root = Path(__file__).resolve().parent
    _EXT = load(name="megakernel_ext", sources=[str(root / "megakernel_ext.cpp"), str(root / "megakernel.cu")])
    return _EXT


@functools.lru_cache(None)
def load_capstone_module():
    return load(name="capstone_ext", sources=["capstone_kernels.cu"], extra_cuda_cflags=["-O3"])


def decode(x):
    return load_extension().decode_step(x)


def capstone(x):
    ext = load_capstone_module()
    return ext.run(x)
"""


def test_caching_helpers_hand_out_the_extension():
    uses = {_at(CACHED, "load_extension().decode_step"), _at(CACHED, "ext = load_capstone_module()"),
            _at(CACHED, "ext.run(x)")}
    assert uses <= set(_lines(CACHED, "NPU320", "kernels/ext.py"))   # the helper's call, the handle, its op
    cpu = CACHED.replace(b'str(root / "megakernel.cu")', b'str(root / "megakernel_host.cpp")').replace(
        b'sources=["capstone_kernels.cu"], extra_cuda_cflags=["-O3"]', b'sources=["capstone_kernels.cpp"]')
    assert not uses & set(_lines(cpu, "NPU320", "kernels/ext.py"))   # control: C++-only builds


LINEAR = """import torch


def linear_quantize(tensor, scales, offsets, use_kernel=True):
    if not use_kernel or not tensor.is_cuda:
        return torch.round(tensor / scales) + offsets
    else:
        from {module} import CUDA

        quantized = CUDA.LinearQuantize_T(
            tensor=tensor, scales=scales, offsets=offsets)
        return quantized
"""

# control: a module class (instance methods, a base) whose forward calls the extension through a holder is left to its
# own uses; its callers in other files are not calls of the kernel by this reading
FUNCTION = """import torch
from torch.utils.cpp_extension import load


class _Holder:
    def __init__(self):
        self.ext = load(name="lltm", sources=["lltm.cpp", "lltm_kernel.cu"])


HOLDER = _Holder()


class LLTMFunction(torch.nn.Module):
    def forward(self, x):
        return HOLDER.ext.forward(x)
"""

CALLER = """from pkg.core.lltm import LLTMFunction


def step(x):
    return LLTMFunction()(x)
"""


def _at(text: str | bytes, snippet: str) -> int:
    """The line of the first line of `text` that holds `snippet`."""
    text = text.decode() if isinstance(text, bytes) else text
    return next(i for i, line in enumerate(text.splitlines(), 1) if snippet in line)


def _write(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def _flow(run, path: str) -> list[int]:
    return sorted(f.line for r in run.results if r.path == path for f in r.findings if f.code == "NPU320")


def test_namespace_class_calls_in_other_files_through_a_package(tmp_path):
    root = _write(tmp_path / "proj", {
        "pkg/__init__.py": "", "pkg/core/__init__.py": "from .ffi import CUDA\nfrom .lltm import LLTMFunction\n",
        "pkg/core/ffi.py": FFI, "pkg/core/lltm.py": FUNCTION,
        "pkg/quant/__init__.py": "", "pkg/quant/linear.py": LINEAR.format(module="pkg.core"),
        "pkg/quant/caller.py": CALLER})
    run = run_static([root], jobs=1)
    assert {8, 10} <= set(_flow(run, "pkg/quant/linear.py"))     # the import and `CUDA.LinearQuantize_T(`
    messages = [f.message for r in run.results if r.path == "pkg/quant/linear.py" for f in r.findings
                if f.code == "NPU320"]
    assert all("pkg/core/ffi.py" in m for m in messages)        # the defining file, not the package's __init__.py
    assert _flow(run, "pkg/core/lltm.py") == [_at(FUNCTION, "HOLDER.ext.forward")]
    assert _flow(run, "pkg/quant/caller.py") == []               # control: the module class's callers


def test_namespace_class_in_a_partial_audit(tmp_path):
    # only some files of the package (no pkg/core/__init__.py): the one module of the folder that offers the name
    root = _write(tmp_path / "part", {"pkg/core/ffi.py": FFI, "pkg/quant/linear.py": LINEAR.format(module="pkg.core")})
    assert {8, 10} <= set(_flow(run_static([root], jobs=1), "pkg/quant/linear.py"))
    # control: two modules of the folder offer it, which one is meant is unknown
    both = _write(tmp_path / "both", {"pkg/core/ffi.py": FFI, "pkg/core/ffi2.py": FFI,
                                      "pkg/quant/linear.py": LINEAR.format(module="pkg.core")})
    assert _flow(run_static([both], jobs=1), "pkg/quant/linear.py") == []


def test_cuda_kernel_switch_is_kernel_and_its_off_switch_quiet():
    src = b"""from ppq.api import DISABLE_CUDA_KERNEL, ENABLE_CUDA_KERNEL, quantize_onnx_model

with ENABLE_CUDA_KERNEL():
    quantized = quantize_onnx_model(onnx_import_file="model.onnx", calib_dataloader=loader, calib_steps=32)

with DISABLE_CUDA_KERNEL():
    graph = quantize_onnx_model(onnx_import_file="model.onnx", calib_dataloader=loader, calib_steps=32)
"""
    found = _found(src, "samples/ptq.py")
    assert (3, "NPU894", "kernel") in found
    assert not [f for f in found if f[0] == 6 and f[2] == "kernel"]


def test_quoted_nvidia_smi_path():
    src = b"""import os


def get_gpu_memory():
    info = os.popen('"/usr/bin/nvidia-smi" --query-gpu=memory.total,memory.used --format=csv,nounits,noheader')
    return info.read().strip().split("\\n")


def describe(tool="nvidia-smi-report"):
    return f'"{tool}" output'
"""
    assert _lines(src, "NPU407", "utils/gpu_tools.py") == [5]     # control: a report name, not the tool


def test_cuda_part_of_a_tensor_type_name():
    src = b"""import torch


class BicubicDownSample(torch.nn.Module):
    def __init__(self, factor=4, cuda=True):
        super().__init__()
        self.cuda = '.cuda' if cuda else ''
        self.ext = '.cu' if cuda else '.cpp'

    def forward(self, x):
        return x.type('torch{}.FloatTensor'.format(self.cuda))
"""
    assert _lines(src, "NPU015", "utils/bicubic.py") == [7]      # control: line 8's file suffixes


def test_numeric_opt_level_is_no_apex_level():
    src = b"""class EqualizationSetting:
    def __init__(self) -> None:
        self.opt_level = 1
        self.iterations = 10


class AmpSetting:
    def __init__(self) -> None:
        self.opt_level = "O1"
"""
    assert _lines(src, "NPU317", "api/setting.py") == [9]


# -- false-positive families from reading test47's unlabelled flagged lines -----------------------------------------

def test_argparse_dest_named_cuda_is_no_device_string():
    src = b"""import argparse

parser = argparse.ArgumentParser()
cuda_parser = parser.add_mutually_exclusive_group(required=False)
cuda_parser.add_argument('--cuda', dest='cuda', action='store_true', help='enables cuda')
cuda_parser.add_argument('--device', default='cuda', help='device to run on')
"""
    found = _found(src, "translate.py")
    assert not [f for f in found if f[0] == 5 and f[1] == "NPU003"]
    assert (6, "NPU003", "device") in found          # control: a device default


def test_dtype_conversion_tables_choose_nothing():
    src = b"""import torch
from numpy import dtype as np_type


class DataType:
    FP16 = 1
    FP32 = 2

    @classmethod
    def convert_from_numpy(cls, dtype: np_type):
        return {np_type('float16'): DataType.FP16, np_type('float32'): DataType.FP32}[dtype]

    @classmethod
    def convert_from_torch(cls, dtype):
        return {torch.float16: DataType.FP16, torch.float32: DataType.FP32}[dtype]

    @classmethod
    def to_numpy(cls, dtype):
        return {DataType.FP16: np_type('float16'), DataType.FP32: np_type('float32')}[dtype]


def build(model):
    return model.to(np_type('float16')), {"mode": DataType.FP16}
"""
    found = [f for f in _found(src, "core/data.py") if f[2] == "precision"]
    assert {line for line, _, _ in found} == {23}         # control: the cast and the setting outside a table


def test_unused_torch_cuda_submodule_beside_a_literal_all():
    src = b"""import torch
import torch.cuda.comm as comm
import torch.cuda.comm as exported_comm

__all__ = ["inplace_abn", "exported_comm"]


def inplace_abn(x):
    return x
"""
    severities = {f.line: f.severity for f in ENGINE.analyze_bytes(src, "modules/functions.py").findings
                  if f.code == "NPU002"}
    assert severities.get(2) == "info"
    assert severities.get(3) == "error"      # control: the name `__all__` offers


def test_config_class_with_a_switch_default_is_no_cuda_code(tmp_path):
    # DreamWaltz: `configs/__init__.py` re-exports a dataclass whose `cuda_ray: bool = True` default is NPU893's; the
    # classes that take the config are not CUDA code. Control: a class of values holding the extension's function
    root = _write(tmp_path / "proj", {
        "configs/__init__.py": "from .train_config import RenderConfig, Ops\n",
        "configs/train_config.py": '''from dataclasses import dataclass

from torch.utils.cpp_extension import load

_C = load(name="raymarching", sources=["raymarching.cu"])


@dataclass
class RenderConfig:
    cuda_ray: bool = True
    grid_size: int = 128


class Ops:
    march = _C.march_rays
''',
        "core/__init__.py": "",
        "core/network.py": '''from configs import RenderConfig, Ops


class NeRFNetwork:
    def __init__(self, cfg: RenderConfig):
        self.cfg = cfg

    def forward(self, rays):
        return Ops.march(rays)
'''})
    run = run_static([root], jobs=1)
    found = sorted(f.line for r in run.results if r.path == "core/network.py" for f in r.findings if f.code == "NPU320")
    assert 5 not in found and 9 in found
