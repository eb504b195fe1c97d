"""tp44b (session 44, project test117 / test118): families the project-file readers missed on session 43's blind
project splits. Recall: Jetson runner labels (`runs-on: [self-hosted, jetson, jp46]`) and Jetson Linux's release file
(NPU965, `cat /etc/nv_tegra_release`), GroundingDINO / SAM 2 source builds (`git clone`, `WORKDIR`, `pip3 install -e
.`), CUDA index URLs held in a script's variable that an index option reads, bare compose environment names
(`- CUDA_VISIBLE_DEVICES`), environment prefixes of command lines held in variables, Beaker GPU requests
(`--launch.num_gpus=8`), cuDNN benchmark switches (`--cudnn-benchmark-toggle`), COPY into /usr/local/cuda. Quiet:
a CI step's `dockerfile:` input, uv build entries of a package whose CUDA build is skipped, flash-attn's Triton AMD
switch, checkpoint downloads from a CUDA project's releases. Shaped on jetson-containers, label-studio-ml-backend,
horde-worker-reGen, TensorFlowTTS, seed_rl, OlmoEarth, NII's speech recipes and frigate; each with controls
(comments, messages, other vendors, CPU values)."""
from __future__ import annotations

from tests.static_snippets import write_tree
from tests.test_project_t24b import _found


def _codes(found, line):
    return {code for ln, code, _sev in found if ln == line}


def _audit(tmp_path, rel: str, src: str):
    return _found(write_tree(tmp_path, {rel: src}), rel)


JETSON_WORKFLOW = """\
name: "l4t-pytorch_jp46"
on:
  push:
    branches: [dev]
jobs:
  l4t-pytorch_jp46:
    runs-on: [self-hosted, jetson, jp46]
    steps:
      - run: |
          cat /etc/nv_tegra_release || true
          # cat /etc/nv_tegra_release
          echo "reads /etc/nv_tegra_release"
      - run: ./build.sh --name=runner/ --package=pytorch
  lint:
    runs-on: [self-hosted, linux, x64]
    steps:
      - uses: actions/checkout@v4
"""


def test_jetson_runner_and_release_file(tmp_path):
    found = _audit(tmp_path, ".github/workflows/l4t-pytorch_jp46.yml", JETSON_WORKFLOW)
    assert _codes(found, 7) == {"NPU028"}            # the Jetson runner, by board and JetPack release
    assert _codes(found, 10) == {"NPU965"}
    assert not _codes(found, 11)                     # a comment
    assert not _codes(found, 12)                     # echoed text
    assert not _codes(found, 15)                     # a CPU runner


GROUNDING_DINO_DOCKERFILE = """\
FROM pytorch/pytorch:2.1.2-cuda12.1-cudnn8-devel
ENV TORCH_CUDA_ARCH_LIST="8.0;8.6+PTX"
# install GroundingDINO
RUN cd / && git clone https://github.com/IDEA-Research/GroundingDINO.git
WORKDIR /GroundingDINO
RUN --mount=type=cache,target=/root/.cache \\
    pip3 install -e .
RUN mkdir weights
WORKDIR /GroundingDINO/weights
RUN wget -q https://github.com/IDEA-Research/GroundingDINO/releases/download/v0.1.0-alpha/groundingdino_swint_ogc.pth
WORKDIR /app
RUN pip3 install -e .
"""


def test_grounding_dino_source_build(tmp_path):
    found = _audit(tmp_path, "examples/grounding_dino/Dockerfile", GROUNDING_DINO_DOCKERFILE)
    assert "NPU360" in _codes(found, 7)              # the build in the clone's folder
    assert not _codes(found, 3)
    assert not _codes(found, 10)                     # a checkpoint download builds nothing
    assert not _codes(found, 12)                     # the app's own folder


SAM2_SCRIPT = """\
#!/bin/bash
git clone --depth 1 --branch main https://github.com/facebookresearch/sam2.git
cd sam2
pip install -e .
cd checkpoints && ./download_ckpts.sh
cd /app && pip install -e .
"""


def test_sam2_source_build(tmp_path):
    found = _audit(tmp_path, "install_sam2.sh", SAM2_SCRIPT)
    assert "NPU360" in _codes(found, 4)
    assert not _codes(found, 6)


ENTRYPOINT = """\
#!/bin/bash
if [ ! -z "${ROCM_VERSION_SHORT}" ]; then
    export PYTORCH_EXTRA_INDEX="https://download.pytorch.org/whl/rocm${ROCM_VERSION_SHORT}"
    SUPPORTED_CARD=$(rocminfo | grep -c -e gfx1100)
    if [ "$SUPPORTED_CARD" -gt 0 ]; then export FLASH_ATTENTION_TRITON_AMD_ENABLE="${FLASH_ATTENTION_TRITON_AMD_ENABLE:=TRUE}"; fi
elif [ ! -z "${CUDA_VERSION_SHORT}" ]; then
    export PYTORCH_EXTRA_INDEX="https://download.pytorch.org/whl/cu${CUDA_VERSION_SHORT}"
    export FLASH_ATTENTION_FORCE_BUILD=TRUE
fi
DOCS_URL="https://download.pytorch.org/whl/cu121"
echo "see ${DOCS_URL}"
python -m pip install -r requirements.txt -U --extra-index-url ${PYTORCH_EXTRA_INDEX}
"""


def test_index_url_held_in_a_variable(tmp_path):
    found = _audit(tmp_path, "Dockerfiles/entrypoint.sh", ENTRYPOINT)
    assert _codes(found, 7) == {"NPU018"}            # the CUDA index the install reads
    assert not _codes(found, 3)                      # the ROCm index
    assert not _codes(found, 5)                      # flash-attn's Triton switch for AMD GPUs
    assert _codes(found, 8) == {"NPU392"}            # a flash-attn switch of the CUDA build
    assert not _codes(found, 10)                     # a URL no index option reads


COMPOSE = """\
version: "2.3"
services:
  tensorflowtts:
    build: .
    volumes:
      - .:/workspace
    runtime: nvidia
    tty: true
    command: /bin/bash
    environment:
      - CUDA_VISIBLE_DEVICES
      - DISPLAY
      - PYTHONUNBUFFERED=1
"""


def test_bare_compose_environment_name(tmp_path):
    found = _audit(tmp_path, "docker-compose.yml", COMPOSE)
    assert _codes(found, 11) == {"NPU004"}
    assert not _codes(found, 12) and not _codes(found, 13)


RUN_SH = """\
#!/bin/bash
ACTOR_BINARY="CUDA_VISIBLE_DEVICES='' python3 ../${ENVIRONMENT}/${AGENT}_main.py --run_mode=actor";
LEARNER_BINARY="python3 ../${ENVIRONMENT}/${AGENT}_main.py --run_mode=learner";
MESSAGE="CUDA_VISIBLE_DEVICES= hides the GPUs"
FLAGS="HOME=/root USER=root"
tmux send-keys -t "actor_0" "${ACTOR_BINARY} --task=0" ENTER
"""


def test_environment_prefix_of_a_held_command(tmp_path):
    found = _audit(tmp_path, "docker/run.sh", RUN_SH)
    assert _codes(found, 2) == {"NPU004"}
    assert not _codes(found, 3) and not _codes(found, 4) and not _codes(found, 5)


BEAKER_LAUNCH = """\
#!/bin/bash
CLUSTER="ai2/jupiter"
LAUNCH_ARGS="--launch.num_gpus=8 --launch.priority=urgent --launch.clusters=[$CLUSTER]"
CPU_ARGS="--launch.num_gpus=0 --launch.priority=low"
python -m olmoearth_pretrain.internal.experiment launch run_name $LAUNCH_ARGS
"""


def test_beaker_gpu_request(tmp_path):
    found = _audit(tmp_path, "scripts/launch_sweep.sh", BEAKER_LAUNCH)
    assert _codes(found, 3) == {"NPU028"}
    assert not _codes(found, 4)                      # no GPU asked for


NII_DEMO = """\
#!/bin/sh
python main.py --num-workers 3 --epochs 100 \\
       --no-best-epochs 50 --batch-size 1 \\
       --cudnn-deterministic-toggle --cudnn-benchmark-toggle > log_train 2>log_err
python main.py --no-cudnn-benchmark
# python main.py --cudnn-benchmark-toggle
"""


def test_cudnn_benchmark_switch(tmp_path):
    found = _audit(tmp_path, "project/01-nsf/00_demo.sh", NII_DEMO)
    assert _codes(found, 4) == {"NPU704"}
    assert not _codes(found, 5) and not _codes(found, 6)


FRIGATE_DOCKERFILE = """\
FROM ${BASE_IMAGE} AS tensorrt-base
# COPY Individual CUDA deps folder
COPY --from=trt-deps /usr/local/cuda-deps /usr/local/cuda
COPY docker/tensorrt/detector/rootfs/ /
COPY --from=trt-deps /usr/local/lib/libyolo_layer.so /usr/local/lib/libyolo_layer.so
"""


def test_copy_into_the_cuda_folder(tmp_path):
    found = _audit(tmp_path, "docker/tensorrt/Dockerfile.arm64", FRIGATE_DOCKERFILE)
    assert _codes(found, 3) == {"NPU027"}
    assert not _codes(found, 2) and not _codes(found, 4) and not _codes(found, 5)


LINT_WORKFLOW = """\
name: Tests
on: [push]
jobs:
  dockerfile-lint:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - name: Lint CUDA Dockerfile
        uses: hadolint/hadolint-action@master
        with:
          dockerfile: "Dockerfiles/Dockerfile.cuda"
"""

COMPOSE_CUDA_BUILD = """\
services:
  app:
    build:
      context: .
      dockerfile: cuda.Dockerfile
"""


def test_dockerfile_input_of_a_step_is_quiet(tmp_path):
    found = _audit(tmp_path, ".github/workflows/maintests.yml", LINT_WORKFLOW)
    assert not _codes(found, 11)
    compose = _audit(tmp_path, "docker/docker-compose-cuda.yml", COMPOSE_CUDA_BUILD)
    assert _codes(compose, 5) == {"NPU016"}          # a service built from the CUDA Dockerfile: kept


PYPROJECT = """\
[project]
name = "olmoearth-pretrain"
dependencies = ["numpy"]

[project.optional-dependencies]
flash-attn = [
    "flash-attn>=2.4.0",
]

[tool.uv.extra-build-dependencies]
flash-attn = [{ requirement = "torch", match-runtime = true }]

[tool.uv.extra-build-variables]
flash-attn = { FLASH_ATTENTION_SKIP_CUDA_BUILD = "TRUE" }
"""


def test_skipped_cuda_build_entries_are_quiet(tmp_path):
    found = _audit(tmp_path, "pyproject.toml", PYPROJECT)
    assert _codes(found, 7) == {"NPU361"}            # the requirement line stays the finding
    assert not _codes(found, 11) and not _codes(found, 14)
    building = _audit(tmp_path, "b/pyproject.toml", PYPROJECT.replace('"TRUE"', '"0", TORCH_CUDA_ARCH_LIST = "9.0"'))
    assert _codes(building, 11) == {"NPU361"} and _codes(building, 14) == {"NPU361"}


CUTENSOR_SH = """\
#!/usr/bin/env bash
DEB="cutensor-local-repo-${DISTRO}-${CUTENSOR_VERSION}_${CUTENSOR_VERSION}-1_${DEB_ARCH}.deb"
NOTES="see the cuTENSOR install guide"
wget "https://developer.download.nvidia.com/compute/cutensor/${CUTENSOR_VERSION}/local_installers/${DEB}" -O "${DEB}"
dpkg -i "${DEB}"
dpkg -i "${NOTES}"
"""


def test_deb_named_by_a_variable(tmp_path):
    found = _audit(tmp_path, "install/install_cutensor.sh", CUTENSOR_SH)
    assert _codes(found, 5) == {"NPU018"}            # the local repository the variable names
    assert not _codes(found, 2) and not _codes(found, 3) and not _codes(found, 6)


ADD_WHEEL_DOCKERFILE = """\
FROM build-wheels AS trt-wheels
# See https://elinux.org/Jetson_Zoo#ONNX_Runtime
ADD https://nvidia.box.com/shared/static/9yvw05k6u343qfnkhdv2x6xhygze0aq1.whl /trt-wheels/onnxruntime_gpu-1.19.0-cp311-cp311-linux_aarch64.whl
ADD https://example.com/static/abc.whl /wheels/onnxruntime-1.19.0-cp311-cp311-linux_aarch64.whl
ADD requirements.txt /requirements.txt
"""


def test_wheel_added_under_its_own_name(tmp_path):
    found = _audit(tmp_path, "docker/tensorrt/Dockerfile.arm64", ADD_WHEEL_DOCKERFILE)
    assert _codes(found, 3) == {"NPU440"}            # onnxruntime-gpu, by the file name it is saved as
    assert not _codes(found, 2) and not _codes(found, 4) and not _codes(found, 5)


DEFAULTS_SH = """\
#!/usr/bin/env bash
: "${CUDA_MAJOR:=${CUDA_VERSION_MAJOR:-12}}"
: "${TORCH_MAJOR:=2}"
echo "CUDA major ${CUDA_MAJOR:=12}"
export CUDA_MAJOR_VERSION=12
"""


def test_cuda_major_default(tmp_path):
    found = _audit(tmp_path, "install/install_cutensor.sh", DEFAULTS_SH)
    assert _codes(found, 2) == {"NPU018"} and _codes(found, 5) == {"NPU018"}
    assert not _codes(found, 3) and not _codes(found, 4)
