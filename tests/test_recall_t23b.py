"""t23b (session 23): CUDA extension build settings among the pooled misses of test10..test26: a build helper told to
compile with nvcc (`compiler="nvcc"`, NPU353) and a CMake definition of a CUDA build variable in a setup script's
cmake arguments (`-DCMAKE_CUDA_ARCHITECTURES=...`, NPU367 beside NPU021)."""
from __future__ import annotations

from auditor.rules import load_rules
from auditor.static import StaticEngine
from static_snippets import codes_by_line

ENGINE = StaticEngine(load_rules())


def _codes(src: bytes, path: str = "main.py") -> dict[int, set[str]]:
    return codes_by_line(ENGINE, src, path)


# det3d's buildtools (CenterPoint, test23; the second.pytorch helpers copied into point-cloud detectors)
BUILDTOOLS = b"""from pathlib import Path


class Gpp:
    def __init__(self, sources, target, std="c++11", includes=None, defines=None, cflags=None,
                 compiler="g++", link=False, libraries=None, lflags=None, extra_cflags=None,
                 extra_lflags=None, build_directory=None):
        self.compiler = compiler


class CUDAGpp(Gpp):
    def __init__(self, sources, target, std="c++11", includes=None, defines=None, cflags=None,
                 extra_cflags=None, extra_lflags=None, build_directory=None):
        super().__init__(
            sources,
            target,
            std,
            includes,
            defines,
            cflags,
            compiler="nvcc",
            extra_cflags=extra_cflags,
            extra_lflags=extra_lflags,
            build_directory=build_directory,
        )
"""


def test_buildtools_nvcc_compiler_is_a_kernel_build_setting():
    codes = _codes(BUILDTOOLS, "det3d/utils/buildtools/command.py")
    assert "NPU353" in codes[21]                 # compiler="nvcc"
    assert "NPU353" not in codes.get(7, set())   # control: the host compiler default compiler="g++"


# olmo-core's build of its NVSHMEM extension (test12): CMake arguments assembled in Python
OLMO_CMAKE = b"""import shutil


def _cmake_args(build_dir, torch_cmake_prefix, output_dir, cuda_architectures):
    cmake_args = [
        "-S",
        str(build_dir),
        "-DCMAKE_BUILD_TYPE=Release",
        f"-DCMAKE_PREFIX_PATH={torch_cmake_prefix}",
        f"-DCMAKE_LIBRARY_OUTPUT_DIRECTORY={output_dir}",
    ]
    if cuda_architectures:
        cmake_args.append(f"-DCMAKE_CUDA_ARCHITECTURES={cuda_architectures}")
    if shutil.which("ninja"):
        cmake_args.extend(["-G", "Ninja"])
    return cmake_args
"""


def test_cmake_cuda_architectures_definition_is_a_kernel_build_setting():
    codes = _codes(OLMO_CMAKE, "olmo_core/kernels/build_ext.py")
    assert {"NPU021", "NPU367"} <= codes[13]
    assert not any(codes.get(line) for line in (8, 9, 10))   # control: the other CMake definitions


def test_shell_assignment_in_a_command_string_keeps_its_name():
    src = b"""import subprocess
subprocess.run("TORCH_CUDA_ARCH_LIST=8.0 pip install -e .", shell=True)
"""
    codes = _codes(src)
    assert {"NPU021", "NPU367"} <= codes[2]
