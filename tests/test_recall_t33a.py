"""t33a (session 33): misses and flagged `none` lines of the static splits test56 and test59 (TUNED): CUDA build
macros a setup.py hands `define_macros` as `(name, value)` tuples, an option chain's invalid-value `raise` in a
setup.py, a kernel module's flag shown in a message, a status text that names nvcc, and the `"cuda:0"` key of a
`map_location` dict. Each shape comes from the code it was missed (or wrongly flagged) in, with the nearest
controls."""
from __future__ import annotations

from auditor.rules import load_rules
from auditor.static import StaticEngine
from static_snippets import code_severities_by_line, codes_at

ENGINE = StaticEngine(load_rules())


def _found(src: bytes, path: str = "main.py") -> dict[int, set[tuple[str, str]]]:
    return code_severities_by_line(ENGINE, src, path)


# ClementPinard/Pytorch-Correlation-extension setup.py: the macro list bound in the CUDA branch, passed by name
CORRELATION_SETUP = b"""import os
from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CUDAExtension, CppExtension

CPU_ONLY = False
source_files = ['correlation.cpp', 'correlation_sampler.cpp']
cxx_args = ['-std=c++17', '-fopenmp']


def launch_setup():
    if CPU_ONLY:
        Extension = CppExtension
        macro = []
    else:
        Extension = CUDAExtension
        source_files.append('correlation_cuda_kernel.cu')
        macro = [("USE_CUDA", None)]

    setup(
        name='spatial_correlation_sampler',
        ext_modules=[
            Extension('spatial_correlation_sampler_backend',
                      source_files,
                      define_macros=macro,
                      extra_compile_args={'cxx': cxx_args})
        ],
        cmdclass={'build_ext': BuildExtension})
"""

# fab-jul/L3C-PyTorch src/torchac/setup.py: the macro given in the CUDA extension's own call; the CPU build has none
TORCHAC_SETUP = b"""import os
from setuptools import setup
from torch.utils.cpp_extension import CppExtension, BuildExtension, CUDAExtension

MODULE_BASE_NAME = 'torchac_backend'


def get_extension(cuda_support, prefix):
    if cuda_support:
        return CUDAExtension(
                MODULE_BASE_NAME + '_gpu',
                [os.path.join(prefix, 'torchac.cpp'), os.path.join(prefix, 'torchac_kernel.cu')],
                define_macros=[('COMPILE_CUDA', '1')])
    else:
        return CppExtension(
                MODULE_BASE_NAME + '_cpu',
                [os.path.join(prefix, 'torchac.cpp')],
                define_macros=[('WITH_OPENMP', None), ('NDEBUG', '1')])


def main():
    cuda_flag = os.environ.get('COMPILE_CUDA', 'no')
    if cuda_flag == 'auto':
        cuda_support = True
        print('Found CUDA supported:', cuda_support)
    elif cuda_flag == 'force':
        cuda_support = True
    elif cuda_flag == 'no':
        cuda_support = False
    else:
        raise ValueError('COMPILE_CUDA must be in (auto, force, no), got {}'.format(cuda_flag))
    setup(name='torchac', ext_modules=[get_extension(cuda_support, 'src')], cmdclass={'build_ext': BuildExtension})
"""


def test_define_macros_tuples_are_the_cuda_build_macro():
    found = _found(CORRELATION_SETUP, "setup.py")
    assert ("NPU316", "error") in found[17]             # macro = [("USE_CUDA", None)]  ->  -DUSE_CUDA
    assert "NPU316" not in codes_at(found, 13)            # macro = []  (the CPU branch)
    found = _found(TORCHAC_SETUP, "setup.py")
    assert ("NPU316", "error") in found[13]             # define_macros=[('COMPILE_CUDA', '1')]  ->  -DCOMPILE_CUDA=1
    assert "NPU316" not in codes_at(found, 18)            # the CPU build's own macros name no CUDA


def test_define_macros_appended_to_a_name_and_controls():
    src = b"""from setuptools import setup, Extension

macros = [("VERSION_INFO", "1.0")]
if os.environ.get("FORCE_CUDA", "0") == "1":
    macros.append(("WITH_CUDA", None))
# define_macros=[("WITH_CUDA", None)] in the GPU build
pairs = [("USE_CUDA", None)]
setup(name="ops", ext_modules=[Extension("ops._C", ["ops.cpp"], define_macros=macros)])
"""
    found = _found(src, "setup.py")
    assert ("NPU316", "error") in found[5]              # macros.append(("WITH_CUDA", None))
    assert "NPU316" not in codes_at(found, 3)             # a version macro
    assert 6 not in found                               # a comment
    assert "NPU316" not in codes_at(found, 7)             # a pair list no extension is given


def test_option_chain_invalid_value_raise_is_not_a_raise_without_cuda():
    found = _found(TORCHAC_SETUP, "setup.py")
    assert "NPU080" not in codes_at(found, 31)            # the `else:` of auto / force / no: an invalid value
    assert 24 not in found                              # a print that only names CUDA


def test_raise_without_cuda_still_found_next_to_option_chains():
    # a chain over CUDA releases has no branch for a build without CUDA: on Ascend its `else` raises at install
    releases = b"""from setuptools import setup
from build_tools import nvcc_release

if nvcc_release() == "11.8":
    arch = ["-O3"]
elif nvcc_release() == "12.1":
    arch = ["-O2"]
else:
    raise RuntimeError("unsupported CUDA release")
setup(name="ops")
"""
    assert "NPU080" in codes_at(_found(releases, "setup.py"), 9)
    plain = b"""from setuptools import setup
from torch.utils.cpp_extension import CUDA_HOME

if CUDA_HOME is not None:
    ext_modules = []
else:
    raise RuntimeError("nvcc was not found")
setup(name="ops")
"""
    assert "NPU080" in codes_at(_found(plain, "setup.py"), 7)


# fab-jul/L3C-PyTorch src/l3c.py: `pytorch_ext` (the code base's Python helpers) is named like a compiled extension
L3C_STATUS = b"""import pytorch_ext as pe
from torchac import torchac


def parse_device_flag(flag):
    print(f'Status: '
          f'torchac-backend-gpu available: {torchac.CUDA_SUPPORTED} // '
          f'CUDA available: {pe.CUDA_AVAILABLE}')
    if flag == 'gpu' and not pe.CUDA_AVAILABLE:
        raise ValueError('Selected torchac-backend-gpu but CUDA not available!')
    pe.set_device(flag == 'gpu')
    print(f'*** Using torchac-backend-{flag}; did set CUDA_AVAILABLE={pe.CUDA_AVAILABLE} and DEVICE={pe.DEVICE}')
    print('extension build: {}'.format(pe.build_info()))
"""


def test_kernel_module_flag_shown_in_a_message_is_no_finding():
    found = _found(L3C_STATUS)
    assert 8 not in found and 12 not in found           # the flag's value shown in a status print
    assert "NPU891" in codes_at(found, 9)                 # the same flag tested: code that decides
    assert "NPU891" in codes_at(found, 11)                # a call of the module
    assert "NPU891" in codes_at(found, 13)                # a call inside the message runs


def test_device_value_in_a_message_is_shown_and_a_call_stays():
    # lead decision 48 (after t33a): a device value shown without a call is a message line; a CUDA call is a pair (t36a)
    src = b"""import logging
import torch

logger = logging.getLogger(__name__)
logger.info(f"torch.backends.cudnn.benchmark: {torch.backends.cudnn.benchmark}")
logger.info(f"Using torch {torch.__version__}, CUDA {torch.version.cuda}")
logger.info("CUDNN VERSION: " + str(torch.backends.cudnn.version()))
"""
    found = _found(src)
    assert 5 not in found and 6 not in found
    assert "NPU006" in codes_at(found, 7)


def test_nvcc_status_text_is_no_command():
    src = b"""import subprocess


def supported_nvcc_available():
    v = subprocess.check_output(['nvcc', '-V'])
    if v is None:
        return False, 'nvcc unavailable!'
    return True, 'nvcc --version'
"""
    found = _found(src)
    assert "NPU407" in codes_at(found, 5)                 # the probe runs nvcc
    assert "NPU407" not in codes_at(found, 7)             # a status text handed back
    assert "NPU407" in codes_at(found, 8)                 # a command line


# hkchengrex/MiVOS model/fusion_model.py
MIVOS_LOAD = b"""import torch


class FusionModel:
    def load_model(self, path):
        map_location = 'cuda:%d' % self.local_rank
        checkpoint = torch.load(path, map_location={'cuda:0': map_location})
        self.net.module.load_state_dict(torch.load(path, map_location={'cuda:0': map_location}))
        both = torch.load(path, map_location={'cuda:0': 'npu:0', 'npu:0': 'npu:0'})
        to_cpu = torch.load(path, map_location={'cuda:0': 'cpu'})
        return checkpoint, both, to_cpu
"""


def test_map_location_cuda_key_is_a_warning_never_rewritten():
    result = ENGINE.analyze_bytes(MIVOS_LOAD, "fusion_model.py")
    keys = [f for f in result.findings if f.line in (7, 8, 10) and f.code == "NPU003"]
    assert {f.line for f in keys} == {7, 8, 10}
    assert all(f.severity == "warning" and f.fix == "none" and "npu:0" in f.message for f in keys)
    assert not [f for f in result.findings if f.line == 9]          # the map already takes NPU checkpoints
    assert any(f.line == 6 and f.code == "NPU003" and f.severity == "error" for f in result.findings)  # the choice


# DS3Lab/AC-SGD data_parallel/dist_dp_sharded_ps_compressed.py: `cupy` comes from the star import of comm_utils
ACSGD_STREAM = b"""import torch
from comm.comm_utils import *


class ShardedPSDP:
    def _sync_gradients(self):
        with torch.cuda.stream(self.dp_comm_stream):
            cupy_dp_stream = cupy.cuda.ExternalStream(self.dp_comm_stream.cuda_stream)
            self.dp_comm.all_reduce_opt(self.flatten_para.grad, self.grad_buffer, stream=cupy_dp_stream)
"""


def test_cupy_from_a_star_import_is_cupy():
    result = ENGINE.analyze_bytes(ACSGD_STREAM, "dist_dp.py")
    assert any(f.line == 8 and f.code == "NPU414" and f.category == "third_party" for f in result.findings)
    # a `cupy` the file binds itself is its own object, not read as the package
    own = ACSGD_STREAM.replace(b"from comm.comm_utils import *", b"from comm import backends\ncupy = backends.array_api()")
    assert not any(f.code == "NPU414" for f in ENGINE.analyze_bytes(own, "dist_dp.py").findings)


def test_open_mpi_cuda_transport_option_in_a_launch_command():
    src = b"""def build_mpi_script(conf):
    prefix_cmd = f"mpirun -n {conf.n_mpi_process} --mca btl_smcuda_use_cuda_ipc {1 if conf.use_ipc else 0} "
    # --mca btl_smcuda_use_cuda_ipc 1 needs a CUDA-aware Open MPI
    plain = f"mpirun -n {conf.n_mpi_process} --mca btl_tcp_if_exclude docker0,lo"
    split = ("mpirun --hostfile hosts "
             "--mca btl self,smcuda,tcp python train.py")
    return prefix_cmd, plain, split
"""
    found = _found(src)
    assert ("NPU189", "warning") in found[2]
    assert 3 not in found and 4 not in found
    assert ("NPU189", "warning") in found[5]            # a command split over lines: its first line (decision 18)
