"""tp47b (session 47, project test129): families the project-file readers missed on session 46's blind project split
test129 (TensorRT / Jetson edge deployment, molecular ML, RL). Recall: Jetson's `nvpmodel` / `jetson_clocks` (NPU916),
TensorRT location variables (NPU917), `CONDA_OVERRIDE_CUDA` (NPU918), OpenCV's `CUDA_FAST_MATH` (NPU919), TensorRT in
a `--backend` list (NPU920), conda-forge's `pytorch-gpu`, `nvcc-version` CI keys, PyTorch's CUDA link libraries
(`libraries += ['torch_cuda']`), ONNX Runtime's GPU release packages behind quoted variables, a CUDA wheel index held
in a variable the script hands on, a `.cuh` header's own CUDA code after a C++ header named for CUDA, and a Python
module written from a string. Quiet: a matrix leg's empty CUDA version, the test and `find` guarding a driver library
link the block then makes, a record key spelled `torch_cuda`. Shaped on openmm-torch, CUDA-PointPillars,
jetson_benchmarks, tensorrt-cpp-api, stable-baselines3, tensorRT_Pro and mmdeploy; each with controls."""
from __future__ import annotations

from tests.static_snippets import audit_file, codes_of_line


JETSON_SCRIPT = """\
#!/bin/sh
if [ "$#" -ne 1 ]; then
    echo "Usage ./run_xavier_maxn.sh <Password>, sets nvpmodel MAXN"
    exit
else
   password=$1
echo $password | sudo -S nvpmodel -m0
echo $password | sudo -S jetson_clocks
# sudo jetson_clocks --restore
fi
"""


def test_jetson_power_tools(tmp_path):
    found = audit_file(tmp_path, "utils/run_xavier_maxn.sh", JETSON_SCRIPT)
    assert codes_of_line(found, 7) == {"NPU916"}
    assert codes_of_line(found, 8) == {"NPU916"}
    for line in (3, 9):                            # a message, a commented-out run
        assert not codes_of_line(found, line), line


TRT_ENVIRONMENT = """\
#!/bin/bash
# export CUDA_VISIBLE_DEVICES=2

export TensorRT_Lib=/lib/aarch64-linux-gnu/
export TensorRT_Inc=/usr/include/aarch64-linux-gnu/
export ONNX_Lib=/lib/aarch64-linux-gnu/

export ConfigurationStatus=Failed
if [ ! -f "${TensorRT_Bin}/trtexec" ]; then
    echo "Can not find ${TensorRT_Bin}/trtexec, there may be a mistake in the directory you configured."
    return
fi
"""


def test_tensorrt_location_variables(tmp_path):
    found = audit_file(tmp_path, "tool/environment.sh", TRT_ENVIRONMENT)
    assert codes_of_line(found, 4) == {"NPU917"}
    assert codes_of_line(found, 5) == {"NPU917"}
    assert codes_of_line(found, 9) == {"NPU917"}        # the test of trtexec in TensorRT's folder
    for line in (2, 6, 8, 10):                     # a comment, another library's folder, a status, the message
        assert not codes_of_line(found, line), line


CI_WORKFLOW = """\
name: CI
on: [push]
jobs:
  unix:
    runs-on: ${{ matrix.os }}
    name: ${{ matrix.name }}
    strategy:
      matrix:
        include:
          - name: Linux (CUDA 13.0, Python 3.14)
            os: ubuntu-22.04
            cuda-version: "13.0"
            nvcc-version: "13.0"
          - name: MacOS ARM (Python 3.11)
            os: macos-latest
            cuda-version: ""
            nvcc-version: ""
    steps:
      - uses: conda-incubator/setup-miniconda@v4
        with:
          activate-environment: build
        env:
          # Override the CUDA detection as the CI hosts don't have NVIDIA drivers
          CONDA_OVERRIDE_CUDA: ${{ matrix.nvcc-version }}
"""


def test_matrix_cuda_compiler_versions_and_conda_override(tmp_path):
    found = audit_file(tmp_path, ".github/workflows/CI.yml", CI_WORKFLOW)
    assert codes_of_line(found, 12) == {"NPU018"}
    assert codes_of_line(found, 13) == {"NPU018"}
    assert codes_of_line(found, 24) == {"NPU918"}
    for line in (10, 16, 17, 23):                  # a display name, the macOS leg's empty versions, the comment
        assert not codes_of_line(found, line), line


def test_job_env_cuda_compiler_version(tmp_path):
    workflow = """\
    name: self-hosted-gpu-test
    on: [push]
    jobs:
      do-the-job:
        runs-on: self-hosted
        env:
          cuda-version: "11.7"
          nvcc-version: "11.7"
          gcc-version: "10.3.*"
        steps:
          - run: conda list
    """
    found = audit_file(tmp_path, ".github/workflows/self-hosted-gpu-test.yml", workflow)
    assert codes_of_line(found, 7) == {"NPU018"}
    assert codes_of_line(found, 8) == {"NPU018"}
    assert not codes_of_line(found, 9)


CONDA_BUILD_ENV = """\
name: build
channels:
  - conda-forge
dependencies:
  - cmake
  - pytorch-gpu @PYTORCH_VERSION@
  - pytorch-cpu
  - swig
"""


def test_conda_pytorch_gpu(tmp_path):
    found = audit_file(tmp_path, "devtools/conda-envs/build-ubuntu-22.04.yml", CONDA_BUILD_ENV)
    assert codes_of_line(found, 6) == {"NPU018"}
    for line in (5, 7, 8):
        assert not codes_of_line(found, line), line


SETUP_PY = """\
import os
import platform
from setuptools import setup, Extension

libraries = ['OpenMM', 'OpenMMTorch', 'torch_python']
if platform.system() == 'Windows':
    libraries += ['c10', 'torch']
    if os.environ.get("FOO_HOME", None) is not None:
        libraries += ['torch_cuda']
    else:
        libraries += ['torch_cpu']
env = {}
env["torch_cuda"] = getattr(platform, "version", None)
setup(name="openmmtorch", ext_modules=[Extension("_openmmtorch", ["openmmtorch.cpp"], libraries=libraries)])
"""


def test_torch_cuda_link_library(tmp_path):
    found = audit_file(tmp_path, "python/setup.py", SETUP_PY)
    # PyTorch's CUDA library linked (NPU353 where the file reads as an extension build script, NPU064 elsewhere)
    assert codes_of_line(found, 9) & {"NPU064", "NPU353"}
    for line in (5, 7, 11, 13):                    # CPU libraries, a record key spelled like the library
        assert not codes_of_line(found, line), line


DOCKER_BUILD = """\
#!/bin/bash
CPU_PARENT=mambaorg/micromamba:2.0-ubuntu24.04
TAG=stablebaselines/stable-baselines3
if [[ ${USE_GPU} == "True" ]]; then
  PYTORCH_DEPS="https://download.pytorch.org/whl/cu126"
else
  PYTORCH_DEPS="https://download.pytorch.org/whl/cpu"
  TAG="${TAG}-cpu"
fi
UNUSED_INDEX="https://download.pytorch.org/whl/cu121"
docker build --build-arg PYTORCH_DEPS=${PYTORCH_DEPS} -t ${TAG}:latest .
"""


def test_cuda_wheel_index_held_and_handed_on(tmp_path):
    found = audit_file(tmp_path, "scripts/build_docker.sh", DOCKER_BUILD)
    assert codes_of_line(found, 5) == {"NPU018"}
    for line in (4, 7, 10, 11):                    # the switch, the CPU index, an index never expanded, the build
        assert not codes_of_line(found, line), line


LINK_SCRIPT = """\
#!/bin/bash
sopath=/lib/x86_64-linux-gnu

if [ ! -L ${sopath}/libcuda.so ]; then
    files=(`find $sopath/libcuda.so*`)
    raw_so=${files[0]}
    echo Create soft link ${raw_so}
    sudo ln -s ${raw_so} ${sopath}/libcuda.so
fi

if [ ! -L ${sopath}/libnvcuvid.so ]; then
    echo Create soft link ${sopath}/libnvcuvid.so.1
    sudo ln -s ${sopath}/libnvcuvid.so.1 ${sopath}/libnvcuvid.so
fi

if [ ! -L /usr/lib/libcuda.so ]; then
    echo "no driver library link"
    exit 1
fi
"""


def test_driver_library_link_guard_quiet(tmp_path):
    found = audit_file(tmp_path, "example-hard-decode-pybind/link-cuvid.sh", LINK_SCRIPT)
    assert codes_of_line(found, 8) == {"NPU092"}
    assert codes_of_line(found, 13) == {"NPU092"}
    for line in (4, 5, 11, 12):                    # the link tests and the search for the link's source
        assert not codes_of_line(found, line), line
    assert codes_of_line(found, 16) == {"NPU092"}       # a test that guards no link the block makes


ORT_INSTALL = """\
#!/bin/bash
PLATFORM=$1
VERSION=$2
if [ "$PLATFORM" == 'cpu' ]; then
    wget https://github.com/microsoft/onnxruntime/releases/download/v"$VERSION"/onnxruntime-linux-x64-"$VERSION".tgz
elif [ "$PLATFORM" == 'cuda' ]; then
    wget https://github.com/microsoft/onnxruntime/releases/download/v"$VERSION"/onnxruntime-linux-x64-gpu-"$VERSION".tgz
    tar -zxvf onnxruntime-linux-x64-gpu-"$VERSION".tgz
fi
"""


def test_onnxruntime_gpu_release_with_quoted_variables(tmp_path):
    found = audit_file(tmp_path, ".github/scripts/linux/install_onnxruntime.sh", ORT_INSTALL)
    assert codes_of_line(found, 7) == {"NPU440"}
    for line in (5, 8):                            # the CPU package; the tar of the download
        assert not codes_of_line(found, line), line


PREBUILD = """\
name: prebuild
on:
  workflow_dispatch:
jobs:
  linux_build:
    runs-on: ubuntu-latest
    steps:
      - name: Build MMDeploy
        run: |
          python ../tools/package_tools/generate_build_config.py --backend 'trt;ort' \\
            --system linux --output config.yml --build-mmdeploy
      - name: Build sdk cpu backend
        run: |
          python ../tools/package_tools/generate_build_config.py --backend 'ort' \\
            --system linux --output config.yml --device cpu --build-sdk
"""


def test_tensorrt_in_a_backend_list(tmp_path):
    found = audit_file(tmp_path, ".github/workflows/prebuild.yml", PREBUILD)
    assert codes_of_line(found, 10) == {"NPU920"}
    assert not codes_of_line(found, 14)


OPENCV_BUILD = """\
cmake -D CMAKE_BUILD_TYPE=RELEASE \\
-D ENABLE_FAST_MATH=1 \\
-D CUDA_FAST_MATH=1 \\
-D WITH_CUDA=ON \\
..
cmake -D CUDA_FAST_MATH=OFF -D WITH_CUDA=OFF ..
"""


def test_opencv_cuda_fast_math(tmp_path):
    found = audit_file(tmp_path, "scripts/build_opencv.sh", OPENCV_BUILD)
    assert codes_of_line(found, 3) == {"NPU919"}
    for line in (2, 6):
        assert not codes_of_line(found, line), line


CUH_HOST_HELPER = """\
#ifndef PREPROCESS_KERNEL_CUH
#define PREPROCESS_KERNEL_CUH

#include "cuda_tools.hpp"

namespace CUDAKernel{
    struct Norm{ float mean[3]; };

    void resize_bilinear_and_normalize(
        uint8_t* src, int src_width, float* dst, int dst_width,
        const Norm& norm,
        cudaStream_t stream);
};
#endif
"""

CUH_DEVICE_HELPER = """\
#pragma once
#include "cuda_util.cuh"

namespace {
__device__ __inline__ float cubemap_sample(const float* data, int face) {
    return data[face];
}
}
"""


def test_cuh_header_first_cuda_line(tmp_path):
    found = audit_file(tmp_path, "src/common/preprocess_kernel.cuh", CUH_HOST_HELPER)
    assert codes_of_line(found, 12) == {"NPU372"}      # its own CUDA code, not the C++ helper header
    assert not codes_of_line(found, 4)
    found = audit_file(tmp_path / "b", "csrc/include/cubemap_util.cuh", CUH_DEVICE_HELPER)
    assert codes_of_line(found, 2) == {"NPU372"}       # a `.cuh` include still comes first (pd7)


WRITTEN_MODULE = """\
import sys
from setuptools import setup

package_name = 'mmdeploy_runtime'
if '--use-gpu' in sys.argv:
    package_name = package_name + '_gpu'
    if sys.platform == 'win32':
        with open('mmdeploy_runtime/_win_dll_path.py', 'a') as f:
            code = \\
                'import os\\n' \\
                'import sys\\n\\n' \\
                'cuda_bin_dir = ""\\n' \\
                'if "CUDA_PATH" in os.environ:\\n' \\
                '    cuda_bin_dir = os.path.join(os.environ["CUDA_PATH"], "bin")\\n' \\
                'else:\\n' \\
                '    raise ImportError("Can\\'t find environment variable CUDA_PATH")\\n'
            f.write(code)
        with open('README.txt', 'w') as f:
            f.write('import os\\nos.environ["CUDA_PATH"]\\n')

setup(name=package_name)
"""


def test_module_written_from_a_string(tmp_path):
    found = audit_file(tmp_path, "tools/packaging/setup.py", WRITTEN_MODULE)
    assert codes_of_line(found, 13) == {"NPU004"}      # the written module's first CUDA line, once
    for line in (10, 12, 14, 16, 19):              # other lines of the module, its message, a text file
        assert not codes_of_line(found, line), line
