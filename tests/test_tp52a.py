"""tp52a (session 52, project test147): families the project-file readers missed on session 51's last blind split.
The CUDA math libraries' release variables TensorFlow's configure reads (HybridBackend's DeepRec image: `ENV
TF_CUBLAS_VERSION=11`, NPU018), NVIDIA's Nsight Systems `.deb` installed by a variable (NanoFlow's setup.sh: `dpkg -i
./$NSIGHT`, NPU071), and a `cmake` configure inside MSCCL++'s source tree (NanoFlow's `cd 3rdparty/mscclpp && mkdir
-p build && cd build && cmake ..`, NPU975). Each with the quiet cases beside it."""
from __future__ import annotations

from tests.static_snippets import audit_file, expect_line_codes

TF_BUILD_IMAGE = """\
FROM nvidia/cuda:11.4.2-cudnn8-devel-ubuntu18.04
ENV TF_NEED_CUDA=1 \\
    TF_CUDA_PATHS=/usr,/usr/local/cuda \\
    TF_CUBLAS_VERSION=11 \\
    TF_CUSOLVER_VERSION=11 \\
    TF_CUFFT_VERSION=10 \\
    TF_NEED_TENSORRT=0
ARG CUBLAS_VERSION=11.6.5.2
ENV TF_CUBLAS_VERSION=""
ENV OPENBLAS_VERSION=0.3.21
"""


def test_cuda_math_library_versions_of_a_tensorflow_build(tmp_path):
    found = audit_file(tmp_path, "docker/Dockerfile.devel", TF_BUILD_IMAGE)
    # the library releases a CUDA build looks up; an empty value and OpenBLAS's release stay quiet
    expect_line_codes(found, {4: {"NPU018"}, 5: {"NPU018"}, 6: {"NPU018"}, 8: {"NPU018"}}, quiet=(7, 9, 10))


SETUP_SH = """\
#!/bin/bash
NSIGHT="NsightSystems-linux-cli-public-2023.4.1.97-3355750.deb"
if [[ ! -f "$NSIGHT" ]]; then
  dpkg -i ./$NSIGHT
fi
TOOLS="libnuma-dev_2.0.14-3_amd64.deb"
dpkg -i ./$TOOLS
dpkg -i ./$UNSET_PACKAGE
dpkg -i /tmp/NsightSystems-linux-public-2024.1.1.59-3380207.deb
"""


def test_nsight_systems_deb_installed_by_a_variable(tmp_path):
    found = audit_file(tmp_path, "scripts/setup.sh", SETUP_SH)
    # NVIDIA's downloadable Nsight Systems packages, by the script's variable and by their file name; another deb
    # the script names and a variable it never set stay quiet
    expect_line_codes(found, {4: {"NPU071"}, 9: {"NPU071"}}, quiet=(2, 7, 8))


MSCCLPP_BUILD = """\
#!/bin/bash
set -e
cd 3rdparty/mscclpp
git reset --hard cdaf3aea3d767ba65dd3b08984d76bd50615f92e
mkdir -p build
cd build
cmake -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX=/usr/local/mscclpp -DBUILD_PYTHON_BINDINGS=OFF ..
make -j mscclpp mscclpp_static
cmake --build . --target install
cd ../../../
cd 3rdparty/spdlog
mkdir -p build && cd build
cmake ..
cd ../../../kernels
cmake -B build .
"""


def test_cmake_configure_in_the_mscclpp_source_tree(tmp_path):
    found = audit_file(tmp_path, "setup.sh", MSCCLPP_BUILD)
    # the configure of MSCCL++'s tree; a `cmake --build`, spdlog's configure after leaving it and a folder named
    # after a distribution (`kernels`) stay quiet
    expect_line_codes(found, {7: {"NPU975"}}, quiet=(3, 4, 8, 9, 13, 15))


def test_mscclpp_clone_and_requirement(tmp_path):
    found = audit_file(tmp_path, "Dockerfile", """\
FROM ubuntu:22.04
RUN git clone https://github.com/microsoft/mscclpp.git /opt/mscclpp
RUN cd /opt/mscclpp && mkdir build && cd build && cmake ..
RUN echo "MSCCL++ runs on the GPU image only"
""")
    expect_line_codes(found, {2: {"NPU975"}, 3: {"NPU975"}}, quiet=(4,))


PUBLISH_WORKFLOW = """\
name: Build wheels
on: [push]
jobs:
  build_wheels:
    runs-on: ubuntu-22.04
    strategy:
      matrix:
        torch-version: ['2.1.2', '2.3.0.dev20240105']
    steps:
      - name: Install PyTorch
        run: |
          export TORCH_CUDA_VERSION=121
          pip install --no-cache-dir --no-deps --pre NIGHTLY_WHEEL
          pip install --no-cache-dir https://download.pytorch.org/whl/cpu/torch-${{ matrix.torch-version }}%2Bcpu-cp310-cp310-linux_x86_64.whl
          pip install dist/mamba_ssm-${VERSION}-cp310-cp310-linux_x86_64.whl
""".replace("NIGHTLY_WHEEL", "https://download.pytorch.org/whl/nightly/cu${TORCH_CUDA_VERSION}/torch-${{ matrix.torch-version }}"
            "%2Bcu${TORCH_CUDA_VERSION}-cp310-cp310-linux_x86_64.whl")


def test_cuda_wheel_whose_tag_is_a_variable(tmp_path):
    found = audit_file(tmp_path, ".github/workflows/publish.yaml", PUBLISH_WORKFLOW)
    # a wheel whose local tag is `cu` and a variable is a CUDA build; the CPU wheel and a plain version variable are not
    assert "NPU018" in {code for ln, code, _ in found if ln == 13}
    assert "NPU018" not in {code for ln, code, _ in found if ln in (14, 15)}
