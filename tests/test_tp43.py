"""tp43 (session 43, project test107 / test108 / test110 / test111): families the project-file readers missed on
session 42's blind project splits. Recall: NVIDIA DeepStream configs and apps (NPU942 `deepstream-app -c`, NPU943
`ll-lib-file` / `model-engine-file`, NPU944 `gpu-id` in DeepStream's groups), TAO's `tao-converter` and its NGC
download, TensorRT's `/usr/src/tensorrt` folder, NVIDIA device nodes (NPU945, compose `devices: - /dev/nvidia0`),
conda build-string globs (`tensorflow>=2.17.0=cuda12*`), CMake echoed into `config.cmake` (`echo set\\(USE_CUDA ON\\)
>> config.cmake`), `[[ ${GPU} == cuda* ]]` branches, NVIDIA OpenGL / Vulkan images and ICD manifests,
`pytorch/pytorch:latest`, `--build-arg GPU=nvidia`, GPU-model runner labels (`runs-on: [self-hosted, linux, t4]`),
CI matrix package entries (`openmm-pkg: "openmm[cuda12]"`), `lspci | grep -i nvidia` probes (NPU946), WSL's driver
folder. Quiet: NVIDIA Riva's pure-Python client. Shaped on NVIDIA-AI-IOT's DeepStream apps, OSRF's docker_images,
pangeo-docker-images, mlc-llm, qdrant, ncnn, openmm-ml, deepracer-for-cloud, JailbreakingLLMs and garak; each with
controls (comments, messages, other groups, other vendors, CPU values)."""
from __future__ import annotations

from tests.static_snippets import write_tree
from tests.test_project_t24b import _found


def _codes(found, line):
    return {code for ln, code, _sev in found if ln == line}


def _severities(found, line):
    return {sev for ln, _code, sev in found if ln == line}


def _audit(tmp_path, rel: str, src: str):
    return _found(write_tree(tmp_path, {rel: src}), rel)


DEEPSTREAM_APP_CONFIG = """\
# SPDX-FileCopyrightText: Copyright (c) 2022 NVIDIA CORPORATION & AFFILIATES. All rights reserved.
triton:
  enable: 0
  gpu-id: 0
primary-gie:
  gpu-id: 0
  config-file-path: lpr_config_pgie.yml
tracker:
  tracker-width: 640
  gpu-id: 0
  ll-lib-file: /opt/nvidia/deepstream/deepstream/lib/libnvds_nvmultiobjecttracker.so
  # ll-lib-file: /opt/nvidia/deepstream/deepstream/lib/libnvds_nvdcf.so
  ll-config-file: config_tracker_NvDCF_perf.yml
"""


def test_deepstream_app_config(tmp_path):
    found = _audit(tmp_path, "deepstream-lpr-app/lpr_app_infer_us_config.yml", DEEPSTREAM_APP_CONFIG)
    assert _codes(found, 6) == {"NPU944"} and _severities(found, 6) == {"info"}    # primary-gie.gpu-id
    assert _codes(found, 10) == {"NPU944"}                                         # tracker.gpu-id
    assert _codes(found, 11) == {"NPU943"} and _severities(found, 11) == {"error"}
    assert not _codes(found, 1)                      # the copyright comment
    assert not _codes(found, 4)                      # `gpu-id` of the Triton switch's group: not a DeepStream group
    assert not _codes(found, 12)                     # a commented key
    assert not _codes(found, 13)                     # the tracker's own config file


NVINFER_CONFIG = """\
property:
  gpu-id: 0
  model-engine-file: ../models/LP/LPR/us_lprnet_baseline18_deployable.etlt_b16_gpu0_fp16.engine
  labelfile-path: ../models/LP/LPR/labels_us.txt
  batch-size: 16
  custom-lib-path: ../nvinfer_custom_lpr_parser/libnvdsinfer_custom_impl_lpr.so
class-attrs-all:
  threshold: 0.5
"""


def test_nvinfer_config(tmp_path):
    found = _audit(tmp_path, "configs/lpr_config_sgie_us.yml", NVINFER_CONFIG)
    assert _codes(found, 2) == {"NPU944"}
    assert _codes(found, 3) == {"NPU943"} and _codes(found, 6) == {"NPU943"}
    assert not _codes(found, 4) and not _codes(found, 5) and not _codes(found, 8)


OTHER_GPU_ID_CONFIG = """\
server:
  gpu-id: 0
  workers: 2
"""


def test_gpu_id_of_another_tool_is_quiet(tmp_path):
    assert not _codes(_audit(tmp_path, "conf/server.yaml", OTHER_GPU_ID_CONFIG), 2)


TAO_URL = ("https://api.ngc.nvidia.com/v2/resources/org/nvidia/team/tao/tao-converter/v5.1.0_8.6.3.1_x86/files"
           "?redirect=true&path=tao-converter")
TAO_SCRIPT = """\
#!/bin/bash
export PATH=$PATH:/usr/src/tensorrt/bin
if [ -f "tao-converter" ]; then
    echo "tao-converter exist"
else
    echo " download tao-converter from https://catalog.ngc.nvidia.com/orgs/nvidia/teams/tao/resources/tao-converter"
    wget --content-disposition '{TAO_URL}' -O tao-converter
fi
# ./tao-converter -k nvidia_tlt -t fp16 -e old.engine old.etlt
./tao-converter -k nvidia_tlt -t fp16 -e triton_models/us_lprnet/1/model.engine models/us_lprnet.etlt
deepstream-app -c deepstream_app_source1_peoplenet.txt
echo "now run deepstream-app -c deepstream_app_source1_peoplenet.txt"
wget https://api.ngc.nvidia.com/v2/models/nvidia/tao/trafficcamnet/versions/pruned_v1.0/files/resnet18.etlt
""".replace("{TAO_URL}", TAO_URL)


def test_tao_converter_tensorrt_path_and_deepstream_app(tmp_path):
    found = _audit(tmp_path, "prepare_triton_us.sh", TAO_SCRIPT)
    assert _codes(found, 2) == {"NPU457"}            # TensorRT's folder on PATH
    assert _codes(found, 7) == {"NPU480"}            # the converter's download from NGC
    assert _codes(found, 10) == {"NPU480"}           # ./tao-converter
    assert _codes(found, 11) == {"NPU942"}           # deepstream-app -c
    for line in (4, 6, 9, 12):                       # messages and a comment
        assert not _codes(found, line), line
    assert not _codes(found, 13)                     # a model download from NGC: a file, not NVIDIA's tool


GZCLIENT_COMPOSE = """\
version: "2"
services:
  gzclient:
    image: gazebo:gzclient5
    devices:
      - "/dev/nvidia0"
      - "/dev/nvidiactl"
      - /dev/nvidia-uvm:/dev/nvidia-uvm
      - /dev/dri
      # - /dev/nvidia-modeset
"""


def test_nvidia_device_nodes_in_compose(tmp_path):
    found = _audit(tmp_path, "gazebo/5/ubuntu/trusty/gzclient.yml", GZCLIENT_COMPOSE)
    for line in (6, 7, 8):
        assert _codes(found, line) == {"NPU945"}, line
    assert not _codes(found, 9) and not _codes(found, 10)


DEVICE_NODE_SCRIPT = """\
#!/bin/bash
echo "no /dev/nvidia0 found, running on CPU"
docker run --device /dev/nvidia0:/dev/nvidia0 --device=/dev/nvidiactl sim:latest
docker run --device /dev/davinci0 --device /dev/davinci_manager sim:latest
if [[ -f /usr/lib/wsl/lib/nvidia-smi ]]; then
    echo "WSL"
fi
"""


def test_nvidia_device_nodes_and_wsl_driver_in_scripts(tmp_path):
    found = _audit(tmp_path, "run_sim.sh", DEVICE_NODE_SCRIPT)
    assert _codes(found, 3) == {"NPU945"}
    assert _codes(found, 5) == {"NPU075"}            # WSL's NVIDIA driver folder
    assert not _codes(found, 2) and not _codes(found, 4)


CONDA_ENV = """\
name: ml-notebook
channels:
  - conda-forge
dependencies:
  - python=3.12
  - torchvision>=0.22.0=cuda12*
  - jaxlib>=0.4.31=cuda12*
  - tensorflow>=2.17.0=cuda12*
  - numpy=1.26=py312*
  - pytorch=2.5=cpu*
  - libblas=*=*mkl
"""


def test_conda_cuda_build_string_globs(tmp_path):
    found = _audit(tmp_path, "ml-notebook/environment.yml", CONDA_ENV)
    assert _codes(found, 6) == {"NPU018"}            # torchvision's CUDA build
    assert _codes(found, 7) == {"NPU023"}            # jaxlib's CUDA build
    assert _codes(found, 8) == {"NPU023"}            # tensorflow's CUDA variant, by its build string
    assert not _codes(found, 9) and not _codes(found, 11)
    assert "NPU018" not in _codes(found, 10)         # the CPU build of torch (its plain pin note only)


MLC_BUILD = """\
#!/bin/bash
set -eo pipefail
: ${GPU:="cpu"}
if [[ ${GPU} == rocm* ]]; then
    echo set\\(USE_ROCM ON\\) >>config.cmake
elif [[ ${GPU} == cuda* ]]; then
    echo set\\(CMAKE_CUDA_ARCHITECTURES "80;90;100;120"\\) >>config.cmake
    echo set\\(USE_CUDA ON\\) >>config.cmake
    echo set\\(USE_CUBLAS ON\\) >>config.cmake
    echo "set(USE_CUDA OFF)" >> build/config.cmake
else
    echo set\\(USE_VULKAN ON\\) >>config.cmake
fi
echo "set(USE_CUDA ON) in config.cmake enables CUDA"
"""


def test_cmake_echoed_into_config_cmake_and_gpu_branches(tmp_path):
    found = _audit(tmp_path, "ci/task/build_lib.sh", MLC_BUILD)
    assert _codes(found, 6) == {"NPU019"}            # `[[ ${GPU} == cuda* ]]`
    assert _codes(found, 7) == {"NPU063"}
    assert _codes(found, 8) == {"NPU021"}
    assert _codes(found, 9) == {"NPU450"}
    assert not _codes(found, 4) and not _codes(found, 5)      # the ROCm branch
    assert not _codes(found, 10)                     # CUDA switched off
    assert not _codes(found, 12)                     # Vulkan
    assert not _codes(found, 14)                     # a message to the terminal


QDRANT_DOCKERFILE = """\
FROM debian:13-slim AS qdrant-cpu

# Base images for Qdrant with nvidia GPU support.
FROM nvidia/opengl:1.2-glvnd-devel-ubuntu22.04 AS qdrant-gpu-nvidia
COPY --from=builder /qdrant/lib/gpu/nvidia_icd.json /etc/vulkan/icd.d/

FROM rocm/dev-ubuntu-22.04 AS qdrant-gpu-amd
COPY --from=builder /qdrant/lib/gpu/amd_icd.json /etc/vulkan/icd.d/
"""

NVIDIA_ICD = """\
{
    "file_format_version" : "1.0.0",
    "ICD": {
        "library_path": "libGLX_nvidia.so.0",
        "api_version" : "1.3"
    }
}
"""

INTEL_ICD = """\
{
    "file_format_version" : "1.0.0",
    "ICD": {
        "library_path": "/usr/lib/x86_64-linux-gnu/libvulkan_intel.so",
        "api_version" : "1.3"
    }
}
"""


def test_nvidia_vulkan_images_and_icd_manifests(tmp_path):
    found = _audit(tmp_path, "Dockerfile", QDRANT_DOCKERFILE)
    assert _codes(found, 4) == {"NPU016"}
    assert _codes(found, 5) == {"NPU092"}
    assert not _codes(found, 1) and not _codes(found, 3) and not _codes(found, 8)
    assert _codes(_audit(tmp_path / "a", "lib/gpu/nvidia_icd.json", NVIDIA_ICD), 4) == {"NPU092"}
    assert not _audit(tmp_path / "b", "lib/gpu/intel_icd.x86_64.json", INTEL_ICD)


def test_pytorch_latest_image(tmp_path):
    found = _audit(tmp_path, "docker/Dockerfile", "FROM pytorch/pytorch:latest\nRUN pip install fschat\n")
    assert _codes(found, 1) == {"NPU016"}
    found = _audit(tmp_path / "cpu", "docker/Dockerfile", "FROM python:3.11-slim\n# FROM pytorch/pytorch:latest\n")
    assert not found


BUILD_WORKFLOW = """\
name: docker
on: push
jobs:
  gpu:
    runs-on: [self-hosted, linux, t4]
    steps:
      - run: docker buildx build --build-arg GPU=nvidia --platform='linux/amd64' --push .
      - run: docker buildx build --build-arg GPU=amd --platform='linux/amd64' --push .
  cpu:
    runs-on: [self-hosted, linux, x64]
    steps:
      - run: echo "build with --build-arg GPU=nvidia for the NVIDIA image"
"""


def test_gpu_runner_labels_and_gpu_build_args(tmp_path):
    found = _audit(tmp_path, ".github/workflows/docker-image.yml", BUILD_WORKFLOW)
    assert _codes(found, 5) == {"NPU028"}            # a runner labelled with its GPU model
    assert _codes(found, 7) == {"NPU019"} and _severities(found, 7) == {"info"}
    assert not _codes(found, 8) and not _codes(found, 10) and not _codes(found, 12)


MATRIX_WORKFLOW = """\
name: CI
on: push
jobs:
  test:
    runs-on: ${{ matrix.runner }}
    strategy:
      matrix:
        include:
          - configuration: "cpu"
            runner: "ubuntu-latest"
            openmm-pkg: "openmm"
          - configuration: "cuda"
            runner: "ubuntu-latest"
            openmm-pkg: "openmm[cuda12]"
    steps:
      - run: pip install ${{ matrix.openmm-pkg }}
"""


def test_matrix_package_entry(tmp_path):
    found = _audit(tmp_path, ".github/workflows/CI.yml", MATRIX_WORKFLOW)
    assert _codes(found, 14) == {"NPU023"} and _severities(found, 14) == {"info"}
    assert not _codes(found, 11)


PREPARE = """\
#!/bin/bash
GPUS=$(lspci | awk '/NVIDIA/ && ( /VGA/ || /3D controller/ ) ' | wc -l)
if [ $GPUS -eq 0 ]; then
    ARCH="cpu"
fi
NICS=$(lspci | grep -i ethernet | wc -l)
echo "check lspci | grep -i nvidia"
if lspci | grep -qi nvidia; then ARCH=gpu; fi
"""


def test_lspci_nvidia_probe(tmp_path):
    found = _audit(tmp_path, "bin/prepare.sh", PREPARE)
    assert _codes(found, 2) == {"NPU946"} and _codes(found, 8) == {"NPU946"}
    assert not _codes(found, 6) and not _codes(found, 7)


def test_riva_client_is_quiet(tmp_path):
    found = _audit(tmp_path, "requirements.txt", "nvidia-riva-client==2.16.0\nnvidia-dali-cuda120\n")
    assert not _codes(found, 1)                      # a pure-Python gRPC client
    assert _codes(found, 2)                          # DALI's CUDA build stays


TMUX_LAUNCH = """\
#!/bin/bash
xargs \\
    -a hosts \\
    -I {} \\
    ssh {} \\
    tmux new-session -d -s torchrun-llama -c $(pwd) \\
    -e HF_HOME=/home/ubuntu/.cache/huggingface \\
    -e NCCL_CROSS_NIC=1 \\
    $(which python) -m torch.distributed.run --nproc-per-node 8 train_llm.py
tmux attach -t torchrun-llama -e NCCL_DEBUG=INFO
"""


def test_tmux_session_environment(tmp_path):
    found = _audit(tmp_path, "launch.sh", TMUX_LAUNCH)
    assert _codes(found, 8) == {"NPU121"}            # NCCL's variable in the session's environment
    assert not _codes(found, 7)                      # a cache folder
    assert not _codes(found, 10)                     # `attach` starts nothing (its `-e` is not an environment)


AUDIOCRAFT_DOCKERFILE = """\
FROM python:3.10-slim
# ENV TORCH_COMMAND="pip install torch==2.0.1+cu118"
ENV TORCH_COMMAND="pip install torch==2.0.1+cu118 torchaudio --extra-index-url https://download.pytorch.org/whl/cu118"
RUN python -m $TORCH_COMMAND
ENV BUILD_CMD="make all"
ENV GREETING="pip install torch==2.0.1+cu118 is the old way"
"""


def test_command_held_in_a_dockerfile_env(tmp_path):
    found = _audit(tmp_path, "Dockerfile", AUDIOCRAFT_DOCKERFILE)
    assert _codes(found, 3) == {"NPU018"}            # the CUDA build of torch the later RUN line installs
    assert not _codes(found, 2) and not _codes(found, 5)
    assert not _codes(found, 6)                      # not a command variable: text
