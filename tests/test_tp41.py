"""tp41 (session 41, project test94 / test97): GPU families of cluster, dev-container and image files that the
project-file readers missed: node labels and affinity keys of NVIDIA's GPU feature discovery (a kind cluster's
`nvidia.com/gpu.deploy.device-plugin: "true"`, `matchExpressions: - key: nvidia.com/gpu.product`), Slurm partitions
named after a GPU model (`#SBATCH -p rtx3090`), CMake switches in a Travis `env:` item, `sed` edits that pin a
`+cu111` wheel into requirements.txt, dev container CUDA features, kustomize `newName:` images, an untagged image
under `docker run --gpus`, `ARG CUDA_VER` read by PowerShell as `$ENV:CUDA_VER`, `ENV CUDA_VERSION="${CUDA_VERSION:-
${CUDA}}"`, `OMPI_MCA_opal_cuda_support=true`; and two quiet shapes: build cache refs (`cache-from:`, `cacheFrom`)
and llama.cpp's own `flash_attn` in a llama-cpp-python server config. Shaped on KAI-Scheduler's e2e-kind-config.yaml,
deepops' gpu-with-affinity.yml, DMFF's fit.sh, RAJA's .travis.yml, ByteTrack's Dockerfile, RAPIDS' devcontainers,
modelmesh-serving's kustomization.yaml, OmniIsaacGymEnvs' run_docker_viewer.sh, xtts-streaming-server's workflow and
llama-cpp-python's server configs, each with controls (comments, messages, off values, CPU partitions)."""
from __future__ import annotations

import textwrap

from tests.static_snippets import write_tree
from tests.test_project_t24b import _found


def _line(src: str, needle: str) -> int:
    """1-based line of the dedented snippet `src` holding `needle` (the first one)."""
    return next(i for i, ln in enumerate(textwrap.dedent(src).splitlines(), 1) if needle in ln)


def _codes(found, line):
    return {code for ln, code, _sev in found if ln == line}


def _audit(tmp_path, rel: str, src: str):
    return _found(write_tree(tmp_path, {rel: src}), rel)


KIND_CLUSTER = """\
    # Copyright 2025 NVIDIA CORPORATION
    kind: Cluster
    apiVersion: kind.x-k8s.io/v1alpha4
    nodes:
    - role: control-plane
    # Device plugin nodes: nvidia.com/gpu.deploy.device-plugin: "true"
    - role: worker
      labels:
        run.ai/simulated-gpu-node-pool: default
        nvidia.com/gpu.deploy.device-plugin: "true"
        nvidia.com/gpu.memory: 11441
    - role: worker
      labels:
        nvidia.com/gpu.deploy.operands: "false"
        kubernetes.io/os: linux
"""


def test_gpu_feature_discovery_labels_on_nodes(tmp_path):
    found = _audit(tmp_path, "hack/e2e-kind-config.yaml", KIND_CLUSTER)
    assert _codes(found, 10) == {"NPU028"} and _codes(found, 11) == {"NPU028"}
    assert not _codes(found, 6)                       # the comment quoting the label
    assert not _codes(found, 9)                       # another vendor-neutral pool label
    assert not _codes(found, 14)                      # an operand turned off on that node
    assert not _codes(found, 15)


AFFINITY = """\
    apiVersion: v1
    kind: Pod
    metadata:
      name: gpu-pod
    spec:
      affinity:
        nodeAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
            nodeSelectorTerms:
            - matchExpressions:
              - key: nvidia.com/gpu.product
                operator: In
                values:
                - Tesla-V100-SXM2-16GB
      containers:
        - name: app
          image: busybox
"""

GATEWAY_OFF_GPU_NODES = """\
    spec:
      affinity:
        nodeAffinity:
          preferredDuringSchedulingIgnoredDuringExecution:
          - weight: 100
            preference:
              matchExpressions:
                - key: nvidia.com/gpu.present
                  operator: NotIn
                  values:
                    - "true"
"""


def test_affinity_by_gpu_model_and_not_away_from_gpu_nodes(tmp_path):
    found = _audit(tmp_path, "k8s/gpu-with-affinity.yml", AFFINITY)
    assert _codes(found, _line(AFFINITY, "nvidia.com/gpu.product")) == {"NPU028"}
    quiet = _audit(tmp_path, "config/gateway.yaml", GATEWAY_OFF_GPU_NODES)
    assert not quiet                                  # aibrix keeps its gateway off GPU nodes


FIT_SH = """\
    #!/bin/bash
    #SBATCH -N 1 -n 1
    #SBATCH -p rtx3090
    # SBATCH -p rtx2080 (the old partition)
    echo "submit to -p rtx3090"
    srun -p cpu64 python fit.py
"""


def test_slurm_partitions_named_after_a_gpu_model(tmp_path):
    found = _audit(tmp_path, "examples/fit.sh", FIT_SH)
    assert _codes(found, 3) == {"NPU028"}
    assert not _codes(found, 4) and not _codes(found, 5) and not _codes(found, 6)


TRAVIS = """\
    language: cpp
    jobs:
      include:
      - compiler: nvcc10.2
        env:
        - COMPILER=g++
        - CMAKE_EXTRA_FLAGS="-DENABLE_CUDA=On -DRAJA_ENABLE_TBB=On"
      - compiler: gcc-8
        env:
        - CMAKE_EXTRA_FLAGS="-DENABLE_CUDA=Off -DENABLE_TBB=On"
    # - CMAKE_EXTRA_FLAGS="-DENABLE_CUDA=On"
"""


def test_cmake_switches_in_a_travis_env_item(tmp_path):
    found = _audit(tmp_path, ".travis.yml", TRAVIS)
    assert _codes(found, 7) == {"NPU021"}
    assert not _codes(found, 4)                       # the job's label
    assert not _codes(found, 10)                      # the switch turned off
    assert not _codes(found, 11)                      # a comment


BYTETRACK = """\
    FROM python:3.8-slim
    RUN git clone https://github.com/ifzhang/ByteTrack \\
        && cd ByteTrack \\
        && sed -i 's/torch>=1.7/torch==1.9.1+cu111/g' requirements.txt \\
        && sed -i 's/torchvision==0.10.0/torchvision==0.10.1+cu111/g' requirements.txt \\
        && sed -i 's/torch==1.9.1+cu111/torch==1.9.1/g' requirements-gpu.txt \\
        && sed -i 's/+cu121/+cu118/g' requirements-old.txt \\
        && sed -i 's/# set linenumbers/set linenumbers/g' /etc/nanorc \\
        && echo "sed -i 's/torch/torch==1.9.1+cu111/'" \\
        && pip3 install -r requirements.txt
"""


def test_sed_edits_that_pin_a_cuda_build(tmp_path):
    found = _audit(tmp_path, "Dockerfile", BYTETRACK)
    assert _codes(found, 4) == {"NPU018"} and _codes(found, 5) == {"NPU018"}
    assert not _codes(found, 6)                       # the pin taken out: a port
    assert not _codes(found, 7)                       # one CUDA build for another: the file's own pin is reported
    assert not _codes(found, 8)
    assert not _codes(found, 9)                       # a message


DEVCONTAINER = """\
    {
      "build": {
        "context": "${localWorkspaceFolder}/.devcontainer",
        "dockerfile": "${localWorkspaceFolder}/.devcontainer/Dockerfile",
        "cacheFrom": [
          "ghcr.io/rapidsai/devcontainers/devcontainer:26.10-cuda12.9-conda"
        ]
      },
      // "ghcr.io/devcontainers/features/nvidia-cuda:1": {},
      "features": {
        "ghcr.io/devcontainers/features/nvidia-cuda:1": {"installCudnn": true},
        "./features/src/cuda": {"version": "12.9"},
        "ghcr.io/devcontainers/features/python:1": {"version": "3.12"}
      },
      "overrideFeatureInstallOrder": ["./features/src/cuda"]
    }
"""


def test_dev_container_cuda_features_and_cache_refs(tmp_path):
    found = _audit(tmp_path, ".devcontainer/devcontainer.json", DEVCONTAINER)
    assert _codes(found, 11) == {"NPU018"} and _codes(found, 12) == {"NPU018"}
    assert not _codes(found, 6)                       # a build cache ref: nothing runs from it
    assert not _codes(found, 9)                       # a comment
    assert not _codes(found, 13)                      # another feature
    assert not _codes(found, 15)                      # the install order names the feature, installs nothing


WORKFLOW = """\
    name: build
    on: push
    jobs:
      build:
        runs-on: ubuntu-latest
        steps:
          - name: Build cuda 12.1
            uses: docker/build-push-action@v5
            with:
              file: Dockerfile.cuda121
              cache-from: type=registry,ref=ghcr.io/coqui-ai/xtts-streaming-server:cache-latest-cuda121
              cache-to: type=registry,ref=ghcr.io/coqui-ai/xtts-streaming-server:cache-latest-cuda121
"""


def test_build_cache_refs_are_quiet(tmp_path):
    found = _audit(tmp_path, ".github/workflows/build.yml", WORKFLOW)
    assert not _codes(found, 11) and not _codes(found, 12)


KUSTOMIZATION = """\
    apiVersion: kustomize.config.k8s.io/v1beta1
    kind: Kustomization
    resources:
      - triton-2.x.yaml
    images:
      - name: tritonserver-2
        newName: nvcr.io/nvidia/tritonserver
        newTag: "23.04-py3"
      - name: mlserver-1
        newName: seldonio/mlserver
        newTag: "1.3.2"
    # newName: nvcr.io/nvidia/pytorch
"""


def test_kustomize_image_overrides(tmp_path):
    found = _audit(tmp_path, "config/runtimes/kustomization.yaml", KUSTOMIZATION)
    assert _codes(found, 7) == {"NPU016"}
    assert not _codes(found, 10) and not _codes(found, 12)


RUN_DOCKER = """\
    docker run --name isaac-sim -it -d --gpus all -e "ACCEPT_EULA=Y" --rm --network=host \\
    -v ${PWD}:/workspace \\
    nvcr.io/nvidia/4.0.0
    echo "pull nvcr.io/nvidia/isaac-sim first"
    docker run -it --rm ubuntu bash
"""


def test_an_untagged_ngc_image_under_docker_run_gpus(tmp_path):
    found = _audit(tmp_path, "docker/run_docker_viewer.sh", RUN_DOCKER)
    assert _codes(found, 3) == {"NPU016"}
    assert not _codes(found, 4) and not _codes(found, 5)


WINDOWS_DOCKERFILE = """\
    ARG ROOT_IMAGE
    FROM $ROOT_IMAGE
    SHELL ["powershell.exe"]
    ARG CUDA_VER
    ARG MSVC_VER
    ARG UNUSED_CUDA_VER
    RUN /tools/install-compiler.ps1 -msvcVersion $ENV:MSVC_VER
    RUN /tools/install-tools.ps1 -cudaVersion $ENV:CUDA_VER
"""

RAPIDS_DOCKERFILE = """\
    FROM conda-base
    ARG CUDA
    ENV CUDA_VERSION="${CUDA_VERSION:-${CUDA}}"
    ENV PYTHON_PACKAGE_MANAGER="${PYTHON_PACKAGE_MANAGER}"
    RUN echo "cuda ${CUDA}"
"""


def test_cuda_version_build_arguments(tmp_path):
    found = _audit(tmp_path, "windows/windows.Dockerfile", WINDOWS_DOCKERFILE)
    assert _codes(found, 4) == {"NPU018"}
    assert not _codes(found, 5)                       # another tool's version
    assert not _codes(found, 6)                       # declared, read by nothing in the stage
    found = _audit(tmp_path, ".devcontainer/rapids.Dockerfile", RAPIDS_DOCKERFILE)
    assert _codes(found, 3) == {"NPU018"}
    assert not _codes(found, 4)


OPENMPI = """\
    #!/bin/bash
    # OMPI_MCA_opal_cuda_support=true turns CUDA support on
    export OMPI_MCA_opal_cuda_support=true
    export OMPI_MCA_opal_cuda_support=0
    echo "export OMPI_MCA_opal_cuda_support=true"
    if test "${ENABLE_CUDA:-}" = 1; then
        cat <<EOF >> ~/.bashrc
    export OMPI_MCA_btl_smcuda_use_cuda_ipc=1
    EOF
    fi
"""


def test_open_mpi_cuda_support_from_the_environment(tmp_path):
    found = _audit(tmp_path, "features/src/openmpi/install.sh", OPENMPI)
    assert _codes(found, 3) == {"NPU189"}
    assert _codes(found, 8) == {"NPU189"}             # written into the shell's startup file
    assert not _codes(found, 2) and not _codes(found, 4) and not _codes(found, 5)


LLAMA_CPP_SERVER = """\
    {
      "host": "0.0.0.0",
      "models": [
        {
          "model": "models/qwen.gguf",
          "n_gpu_layers": -1,
          "flash_attn": true
        }
      ]
    }
"""

TRAINER_CONFIG = """\
    model:
      name: llama
      flash_attn: true
"""


def test_llama_cpp_flash_attention_is_quiet(tmp_path):
    assert not _codes(_audit(tmp_path, "examples/server/configs/qwen.json", LLAMA_CPP_SERVER), 7)
    # the same key in a trainer's config (no llama.cpp settings beside it) keeps its finding
    assert _codes(_audit(tmp_path, "configs/train.yaml", TRAINER_CONFIG), 3)


VJEPA_EVAL = """\
    cpus_per_task: 16
    eval_name: video_classification_frozen
    folder: /your_folder/evals/vitl/coin
    mem_per_gpu: 220G
    nodes: 8
    tasks_per_node: 8
"""

SUBMITIT_LAUNCHER = """\
    # @package hydra.launcher
    timeout_min: 60
    gpus_per_node: 8
    mem_per_gpu: 64G
    cpus_per_gpu: null
"""


def test_a_per_gpu_memory_amount_without_a_gpu_count(tmp_path):
    assert _codes(_audit(tmp_path, "configs/eval/vitl/coin.yaml", VJEPA_EVAL), 4) == {"NPU022"}
    found = _audit(tmp_path, "conf/hydra/launcher/slurm.yaml", SUBMITIT_LAUNCHER)
    assert _codes(found, 3) == {"NPU022"}            # the count is the request
    assert not _codes(found, 4) and not _codes(found, 5)


TORCH2TRT = """\
    FROM nvcr.io/nvidia/tensorrt:21.09-py3
    # https://github.com/NVIDIA-AI-IOT/torch2trt/issues/619
    RUN git clone https://github.com/NVIDIA-AI-IOT/torch2trt \\
        && cd torch2trt \\
        && python3 setup.py install
    RUN echo "see github.com/NVIDIA-AI-IOT/torch2trt"
"""


def test_torch2trt_built_from_its_repository(tmp_path):
    found = _audit(tmp_path, "Dockerfile", TORCH2TRT)
    assert _codes(found, 3) == {"NPU440"} and _codes(found, 5) == {"NPU440"}
    assert not _codes(found, 2) and not _codes(found, 6)


OPENMPI_TEST = """\
    #!/bin/bash
    source dev-container-features-test-lib
    check "OMPI_MCA_opal_cuda_support is true" test "${OMPI_MCA_opal_cuda_support:-}" = true
    reportResults
"""


def test_a_read_of_open_mpi_cuda_support_sets_nothing(tmp_path):
    assert not _codes(_audit(tmp_path, "features/test/openmpi/cuda_ucx_openmpi.sh", OPENMPI_TEST), 3)


ISAAC_CONFIG = """\
    ## Device config
    physics_engine: 'physx'
    # whether to use cpu or gpu pipeline
    pipeline: 'gpu'
    # pipeline: 'gpu' for the GPU tensor API
    data_pipeline: 'cpu'
"""


def test_isaac_gym_gpu_pipeline(tmp_path):
    found = _audit(tmp_path, "omniisaacgymenvs/cfg/config.yaml", ISAAC_CONFIG)
    assert _codes(found, 4) == {"NPU019"}
    assert not _codes(found, 3) and not _codes(found, 5) and not _codes(found, 6)
