"""r2a (session 36; TUNED on test71, test73, test75): a code base's own compiled CUDA extensions built through CMake
from setup.py (k2's `_k2`) or as a C++ binding compiled with a CUDA / GPU define (warp-transducer's
`warprnnt_pytorch.warp_rnnt`), their imports elsewhere in the tree (NPU320 through the cross-file pass, a submodule of
the extension included), the CMake CUDA switch written off (NPU889, info), `-D<PROJECT>_ENABLE_GPU` (NPU316), NCCL
build macros (NPU136), nvidia-smi's banner parsed from its output (NPU407) and warp-transducer's binding imported
elsewhere (NPU878). Each family with its nearest negatives (a host-only CMake build, a CppExtension without a CUDA
define, comments and messages)."""
from __future__ import annotations

import ast
import textwrap
from pathlib import Path

from auditor.project.setup_py import cuda_extension_names
from auditor.rules import load_rules
from auditor.runner import run_static
from auditor.static import StaticEngine

ENGINE = StaticEngine(load_rules())

# k2-fsa/k2 setup.py (trimmed): the extension `_k2` is built by CMake, whose K2_WITH_CUDA option is on except on macOS
K2_SETUP = '''import os
import sys
from pathlib import Path

import setuptools
from setuptools.command.build_ext import build_ext


def is_macos():
    return sys.platform == "darwin"


def cmake_extension(name, *args, **kwargs) -> setuptools.Extension:
    kwargs["language"] = "c++"
    sources = []
    return setuptools.Extension(name, sources, *args, **kwargs)


class BuildExtension(build_ext):
    def build_extension(self, ext: setuptools.extension.Extension):
        os.makedirs(self.build_temp, exist_ok=True)
        k2_dir = os.path.dirname(os.path.abspath(__file__))
        cmake_args = os.environ.get("K2_CMAKE_ARGS", "")
        if cmake_args == "":
            cmake_args = "-DCMAKE_BUILD_TYPE=Release"
        if is_macos():
            if not "K2_WITH_CUDA=OFF" in cmake_args:
                print("Disable CUDA for macOS")
                cmake_args += " -DK2_WITH_CUDA=OFF"
        ret = os.system(f"cmake {cmake_args} -B {self.build_temp} -S {k2_dir}")
        if ret != 0:
            raise Exception("Failed to build k2")


setuptools.setup(
    name="k2",
    package_dir={"k2": "k2/python/k2"},
    packages=["k2"],
    ext_modules=[cmake_extension("_k2")],
    cmdclass={"build_ext": BuildExtension},
)
'''

K2_INIT = '''import torch  # noqa

from _k2 import DeterminizeWeightPushingType
from _k2 import swoosh_l_forward

from .fsa import Fsa

from _k2.version import with_cuda
'''

K2_DENSE = '''import torch
import _k2


class DenseFsaVec(object):

    def __init__(self, scores: torch.Tensor, row_splits: torch.Tensor) -> None:
        # _k2.DenseFsaVec holds the scores on the device of the tensor
        self.dense_fsa_vec = _k2.DenseFsaVec(scores, row_splits)
'''

# a CMake build (pybind11's cmake_example shape) whose strings name no CUDA switch: a host-only library
CMAKE_HOST_SETUP = '''import os
import subprocess
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext


class CMakeExtension(Extension):
    def __init__(self, name, sourcedir=""):
        Extension.__init__(self, name, sources=[])
        self.sourcedir = os.path.abspath(sourcedir)


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        cmake_args = ["-DPYTHON_EXECUTABLE=" + sys.executable, "-DCMAKE_BUILD_TYPE=Release"]
        subprocess.check_call(["cmake", ext.sourcedir] + cmake_args, cwd=self.build_temp)


setup(name="fastgeo", ext_modules=[CMakeExtension("fastgeo._native")], cmdclass={"build_ext": CMakeBuild})
'''

# redner's shape: the same CMakeExtension subclass, with the project's CUDA switch in the cmake arguments
CMAKE_CUDA_SETUP = CMAKE_HOST_SETUP.replace(
    '"-DCMAKE_BUILD_TYPE=Release"]', '"-DCMAKE_BUILD_TYPE=Release"]\n        if ext.build_with_cuda:\n'
    '            cmake_args += ["-DFASTGEO_CUDA=1"]')

# HawkAaron/warp-transducer pytorch_binding/setup.py (trimmed)
WARP_TRANSDUCER_SETUP = '''import os
import torch
from setuptools import setup, find_packages
from torch.utils.cpp_extension import BuildExtension, CppExtension

extra_compile_args = ['-fPIC', '-std=c++14']
warp_rnnt_path = "../build"

if torch.cuda.is_available() or "CUDA_HOME" in os.environ:
    enable_gpu = True
else:
    print("Torch was not built with CUDA support, not building GPU extensions.")
    enable_gpu = False

if enable_gpu:
    extra_compile_args += ['-DWARPRNNT_ENABLE_GPU']

setup(
    name='warprnnt_pytorch',
    packages=find_packages(),
    ext_modules=[
        CppExtension(
            name='warprnnt_pytorch.warp_rnnt',
            sources=['src/binding.cpp'],
            libraries=['warprnnt'],
            extra_compile_args=extra_compile_args), ],
    cmdclass={'build_ext': BuildExtension})
'''

WARP_TRANSDUCER_INIT = '''import torch
from torch.autograd import Function

from .warp_rnnt import *

__all__ = ['rnnt_loss', 'RNNTLoss']
'''


def _write(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def _findings(root: Path) -> dict[str, list[tuple[int, str, str]]]:
    out: dict[str, list[tuple[int, str, str]]] = {}
    for r in run_static([root], jobs=1, respect_gitignore=False, cache_dir=root / ".cache").results:
        out[r.path] = [(f.line, f.code, f.severity) for f in r.findings]
    return out


def _line(text: str, needle: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), 1) if needle in line)


def _codes(source: str, name: str = "setup.py") -> list[tuple[int, str, str]]:
    result = ENGINE.analyze_bytes(textwrap.dedent(source).encode(), name)
    return [(f.line, f.code, f.severity) for f in result.findings]


# --------------------------------------------------------------------------- CMake-built extensions

def test_a_cmake_extension_with_a_cuda_switch_is_the_trees_cuda_build():
    assert cuda_extension_names(ast.parse(K2_SETUP)) == {"_k2": _line(K2_SETUP, 'cmake_extension("_k2")')}
    assert cuda_extension_names(ast.parse(CMAKE_CUDA_SETUP)) == {
        "fastgeo._native": _line(CMAKE_CUDA_SETUP, 'CMakeExtension("fastgeo._native")')}


def test_a_cmake_build_without_a_cuda_switch_names_nothing():
    assert cuda_extension_names(ast.parse(CMAKE_HOST_SETUP)) == {}
    # a CUDA word in a message is not a switch of the build
    message = CMAKE_HOST_SETUP.replace('cmake_args = [', 'print("CUDA is not used by this build")\n        cmake_args = [')
    assert cuda_extension_names(ast.parse(message)) == {}


def test_a_multi_backend_cmake_build_names_nothing():
    # Tencent/KsanaLLM's setup.py: WITH_ACL for Ascend when `is_run_on_npu_device()`, WITH_CUDA otherwise
    ksana = CMAKE_CUDA_SETUP.replace(
        '        if ext.build_with_cuda:\n            cmake_args += ["-DFASTGEO_CUDA=1"]',
        '        if is_run_on_npu_device():\n            cmake_args += ["-DWITH_CUDA=OFF", "-DWITH_ACL=ON"]\n'
        '        else:\n            cmake_args += ["-DWITH_CUDA=ON"]')
    assert "WITH_ACL" in ksana
    assert cuda_extension_names(ast.parse(ksana)) == {}
    rocm = WARP_TRANSDUCER_SETUP.replace("if enable_gpu:", "if torch.version.hip:\n    extra_compile_args += ['-DUSE_ROCM']\nif enable_gpu:")
    assert cuda_extension_names(ast.parse(rocm)) == {}


def test_imports_and_uses_of_the_cmake_extension_are_kernel_findings(tmp_path):
    found = _findings(_write(tmp_path, {"setup.py": K2_SETUP, "k2/python/k2/__init__.py": K2_INIT,
                                        "k2/python/k2/dense_fsa_vec.py": K2_DENSE}))
    init = {line for line, code, _ in found["k2/python/k2/__init__.py"] if code == "NPU320"}
    assert init == {_line(K2_INIT, "DeterminizeWeightPushingType"), _line(K2_INIT, "swoosh_l_forward"),
                    _line(K2_INIT, "_k2.version")}     # a submodule of the extension too
    dense = {line for line, code, _ in found["k2/python/k2/dense_fsa_vec.py"] if code == "NPU320"}
    assert dense == {_line(K2_DENSE, "import _k2"), _line(K2_DENSE, "self.dense_fsa_vec = _k2.DenseFsaVec")}
    # the project's own Python module (`from .fsa import Fsa`) and the comment stay quiet
    assert _line(K2_INIT, "from .fsa") not in init
    assert _line(K2_DENSE, "# _k2.DenseFsaVec") not in dense


def test_the_cmake_extensions_imports_stay_quiet_without_the_cuda_switch(tmp_path):
    host_setup = CMAKE_HOST_SETUP.replace("fastgeo._native", "_k2")
    found = _findings(_write(tmp_path, {"setup.py": host_setup, "k2/python/k2/dense_fsa_vec.py": K2_DENSE}))
    assert not [f for f in found["k2/python/k2/dense_fsa_vec.py"] if f[1] == "NPU320"]


# --------------------------------------------------------------------------- C++ bindings built with a CUDA define

def test_a_cpp_extension_compiled_with_a_gpu_define_is_a_cuda_build(tmp_path):
    assert cuda_extension_names(ast.parse(WARP_TRANSDUCER_SETUP)) == {
        "warprnnt_pytorch.warp_rnnt": _line(WARP_TRANSDUCER_SETUP, "CppExtension(")}
    found = _findings(_write(tmp_path, {"pytorch_binding/setup.py": WARP_TRANSDUCER_SETUP,
                                        "pytorch_binding/warprnnt_pytorch/__init__.py": WARP_TRANSDUCER_INIT}))
    star = _line(WARP_TRANSDUCER_INIT, "from .warp_rnnt import *")
    assert (star, "NPU320", "info") in found["pytorch_binding/warprnnt_pytorch/__init__.py"]


def test_a_cpp_extension_without_a_cuda_define_is_not():
    host = WARP_TRANSDUCER_SETUP.replace("'-DWARPRNNT_ENABLE_GPU'", "'-DWARPRNNT_ENABLE_OPENMP'")
    assert cuda_extension_names(ast.parse(host)) == {}
    off = WARP_TRANSDUCER_SETUP.replace("'-DWARPRNNT_ENABLE_GPU'", "'-DWARPRNNT_ENABLE_GPU=0'")
    assert cuda_extension_names(ast.parse(off)) == {}


# --------------------------------------------------------------------------- build switches and macros

def test_the_cmake_cuda_switch_off_is_info_and_on_is_the_build_macro():
    codes = _codes(K2_SETUP)
    assert (_line(K2_SETUP, 'if not "K2_WITH_CUDA=OFF"'), "NPU889", "info") in codes
    assert (_line(K2_SETUP, 'cmake_args += " -DK2_WITH_CUDA=OFF"'), "NPU889", "info") in codes
    # k2's get_version.py tests the switch in the environment's cmake arguments
    get_version = '''
        import os

        def with_cuda():
            cmake_args = os.environ.get("K2_CMAKE_ARGS", "")
            if 'K2_WITH_CUDA=OFF' in cmake_args:
                return False
            return True
    '''
    assert [c for c in _codes(get_version, "get_version.py") if c[1] == "NPU889"] == [(6, "NPU889", "info")]
    on = _codes('cmake_args = ["-DCMAKE_BUILD_TYPE=Release", "-DGGML_CUDA=ON"]\n')
    assert [c[1] for c in on] == ["NPU316"]


def test_the_cmake_cuda_switch_in_comments_and_messages_is_quiet():
    text = '''
        # To build k2 without CUDA support, run
        #       export K2_CMAKE_ARGS="-DK2_WITH_CUDA=OFF"
        def build():
            """Pass -DK2_WITH_CUDA=OFF to build without CUDA."""
            print("set K2_CMAKE_ARGS=-DK2_WITH_CUDA=OFF for a CPU build")
    '''
    assert not [c for c in _codes(text) if c[1] == "NPU889"]


def test_a_projects_gpu_define_is_a_cuda_build_macro():
    codes = _codes(WARP_TRANSDUCER_SETUP)
    assert (_line(WARP_TRANSDUCER_SETUP, "-DWARPRNNT_ENABLE_GPU"), "NPU316", "error") in codes
    quiet = _codes("extra_compile_args = ['-fPIC', '-DWARPRNNT_ENABLE_OPENMP', '-DWARPRNNT_ENABLE_GPU=0']\n")
    assert not [c for c in quiet if c[1] == "NPU316"]


def test_nccl_build_macros_are_distributed_findings():
    fastmoe = '''
        import os
        import setuptools
        from torch.utils.cpp_extension import BuildExtension, CUDAExtension

        cxx_flags = []
        if os.environ.get('USE_NCCL', '1') == '1':
            cxx_flags.append('-DFMOE_USE_NCCL')
            cxx_flags.append('-DUSE_C10D_NCCL')
        if os.environ.get('MOE_DEBUG', '0') == '1':
            cxx_flags.append('-DMOE_DEBUG')
    '''
    codes = _codes(fastmoe)
    assert (8, "NPU136", "error") in codes and (9, "NPU136", "error") in codes
    assert not [c for c in codes if c[0] == 11]
    quiet = '''
        # build with -DFMOE_USE_NCCL for the NCCL paths
        cxx_flags = ['-DFMOE_USE_HCCL', '-DUSE_NCCL=0']
        print("compile with -DUSE_C10D_NCCL")
    '''
    assert not [c for c in _codes(quiet) if c[1] == "NPU136"]


def test_nvidia_smis_banner_read_from_its_output():
    gpu_manager = '''
        import os

        def check_gpus():
            with os.popen('nvidia-smi -h') as p:
                if not 'NVIDIA System Management' in p.read():
                    logger.info("'nvidia-smi' tool not found.")
                    return False
            return True
    '''
    codes = _codes(gpu_manager, "gpu_manager.py")
    assert (5, "NPU407", "warning") in codes and (6, "NPU407", "warning") in codes
    assert not [c for c in codes if c[0] == 7]
    message = '''
        logger.info("NVIDIA System Management Interface is not installed")
    '''
    assert not [c for c in _codes(message, "gpu_manager.py") if c[1] == "NPU407"]


# --------------------------------------------------------------------------- warp-transducer's binding elsewhere

def test_warp_transducers_binding_imported_elsewhere_is_a_source_built_library():
    benchmark = '''
        import torch.nn.functional as F

        def loss_fn(name):
            if name == "warprnnt_pytorch":
                from warprnnt_pytorch import rnnt_loss
                return rnnt_loss
            from transducer import Transducer
            return Transducer(blank_label=0)
    '''
    codes = _codes(benchmark, "benchmark.py")
    # the import and the use of the imported name; the project's own `transducer` module is not the library
    assert {c[0] for c in codes if c[1] == "NPU878"} == {6, 7}
    # the warp_rnnt package on PyPI (1ytic's warp-rnnt) is another package: not this rule
    other = _codes("from warp_rnnt import rnnt_loss\n", "benchmark.py")
    assert not [c for c in other if c[1] == "NPU878"]
