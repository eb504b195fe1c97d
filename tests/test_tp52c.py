"""tp52c (session 52, project test150): families the project-file readers missed on session 51's project split
test150 (offline RL, LLM serving, distillation trees). Recall: Ubuntu's NVIDIA driver package folders on a library
path (`/usr/lib/nvidia-384`, `/usr/lib/nvidia`, NPU075); a multi-process launch of a script held in a variable whose
options a shared argparse module of the tree defines, every importer of which hard-codes NCCL (NPU143); the NVIDIA
driver's EGL vendor file (glvnd's `10_nvidia.json`, NPU092); a script run by a shell with the CUDA release as its
argument (vLLM's wheel workflow: `bash -x .github/workflows/scripts/cuda-install.sh ${{ matrix.cuda-version }} ...`,
NPU018); vLLM's `VLLM_INSTALL_PUNICA_KERNELS=1` LoRA kernel build switch (NPU367; its off value is quiet); `pip
install DIR/*.whl` of the wheels a `pip wheel NAME` of the same Dockerfile wrote to DIR (flash-attn, NPU361). Quiet: an
`if [ -d FOLDER ]` test whose branch then names that folder (the branch's line is the finding). Shaped on D4RL's mujoco
Dockerfile, XQL's setup script, mujoco-py's documented GPU rendering setup, image_classification_sota's launch scripts
and vLLM 0.4's Dockerfile and wheel workflow; each with controls (comments, messages, other folders, packages and
values)."""
from __future__ import annotations

from tests.static_snippets import audit_file, codes_of_line, expect_line_codes, tree_codes_by_line, write_tree


MUJOCO_DOCKERFILE = """\
FROM ubuntu:16.04
RUN apt-get update && apt-get install -y libosmesa6-dev libgl1-mesa-glx libglfw3
RUN DEBIAN_FRONTEND=noninteractive apt-get -qy install nvidia-384; exit 0
ENV LD_LIBRARY_PATH ${LD_LIBRARY_PATH}:/usr/lib/nvidia-384
ENV LD_LIBRARY_PATH /root/.mujoco/mujoco210/bin:${LD_LIBRARY_PATH}
# ENV LD_LIBRARY_PATH ${LD_LIBRARY_PATH}:/usr/lib/nvidia-384
RUN echo "see /usr/lib/nvidia-cuda-toolkit"
"""


def test_ubuntu_driver_package_folder_on_the_library_path(tmp_path):
    found = audit_file(tmp_path, "Dockerfile", MUJOCO_DOCKERFILE)
    assert "NPU075" in codes_of_line(found, 4)
    expect_line_codes(found, {}, (5, 6, 7))


RENDER_SETUP = """\
#!/bin/bash
export LD_LIBRARY_PATH=$LD_LIBRARY_PATH:$HOME/.mujoco/mujoco210/bin
if [ -d "/usr/lib/nvidia" ]; then
    export LD_LIBRARY_PATH=$LD_LIBRARY_PATH:/usr/lib/nvidia
fi
# export LD_LIBRARY_PATH=$LD_LIBRARY_PATH:/usr/lib/nvidia
echo "add /usr/lib/nvidia to LD_LIBRARY_PATH for GPU rendering"
export LD_LIBRARY_PATH=$LD_LIBRARY_PATH:/usr/lib/x86_64-linux-gnu
"""


def test_driver_folder_export_and_its_guard(tmp_path):
    found = audit_file(tmp_path, "setup_shell.sh", RENDER_SETUP)
    assert "NPU075" in codes_of_line(found, 4)
    expect_line_codes(found, {}, (2, 3, 6, 7, 8))


CUDA_PICK = """\
#!/bin/bash
if [ -d "/usr/local/cuda-11.3" ]; then
    export PATH=/usr/local/cuda-11.3/bin:$PATH
elif [[ -d /usr/local/cuda-10.2 ]]; then
    export PATH=/usr/local/cuda-10.2/bin:$PATH
elif [ -d "/usr/local/cuda" ]; then
    export PATH=/usr/local/cuda/bin:$PATH
    echo "Using default CUDA."
fi
"""

CUDA_TEST_ONLY = """\
#!/bin/bash
if [ -d "/usr/local/cuda-11.3" ]; then
    echo "CUDA 11.3 found"
    USE_GPU=1
fi
if [ -d /usr/local/cuda ] && [ -x "$(command -v nvcc)" ]; then
    export PATH=/usr/local/cuda/bin:$PATH
fi
"""


def test_folder_test_that_picks_the_export_is_quiet(tmp_path):
    found = audit_file(tmp_path, "setup.sh", CUDA_PICK)
    for line in (3, 5, 7):
        assert "NPU027" in codes_of_line(found, line), line
    expect_line_codes(found, {}, (2, 4, 6, 8))


def test_folder_test_without_its_folder_in_the_branch_keeps_its_finding(tmp_path):
    # the test is the only place the folder is named: it is the probe that changes (and a list of tests is not one
    # test_command condition: `[ -d ... ] && [ -x ... ]`)
    found = audit_file(tmp_path, "probe.sh", CUDA_TEST_ONLY)
    assert "NPU027" in codes_of_line(found, 2)
    assert "NPU027" in codes_of_line(found, 7)


# a classification codebase's layout: the tools' argparse lives in lib/utils/args.py, the process group in
# lib/utils/dist_utils.py, and the launch scripts take the entry script as their first argument
ARGS_PY = """\
    import argparse

    parser = argparse.ArgumentParser(description='ImageNet Training')
    parser.add_argument('-c', '--config', default='', type=str)
    parser.add_argument('--model', default='resnet50', type=str)
    parser.add_argument('--slurm', action='store_true', default=False)


    def parse_args():
        return parser.parse_args()
    """

DIST_UTILS = """\
    import os
    import torch


    def init_dist(args):
        args.local_rank = int(os.environ.get('LOCAL_RANK', 0))
        torch.distributed.init_process_group(backend='nccl', init_method='env://')
        torch.cuda.set_device(args.local_rank)
    """

TRAIN_PY = """\
    import torch
    from lib.utils.args import parse_args
    from lib.utils.dist_utils import init_dist


    def main():
        args = parse_args()
        init_dist(args)


    if __name__ == '__main__':
        main()
    """

CPU_TOOL = """\
    import torch
    from lib.utils.args import parse_args


    def main():
        args = parse_args()
        print(args.model)


    if __name__ == '__main__':
        main()
    """

DIST_RUN = """\
    #!/bin/bash
    ENTRY=$1
    GPUS=$2
    CONFIG=$3
    MODEL=$4

    python -m torch.distributed.launch --nproc_per_node=${GPUS} \\
        ${ENTRY} -c ${CONFIG} --model ${MODEL}
    """

SLURM_RUN = """\
    #!/usr/bin/env bash
    ENTRY=$1
    PARTITION=$2
    GPUS=$3
    srun --job-name train --partition=${PARTITION} -n${GPUS} --ntasks-per-node=${GPUS} \\
        python -u ${ENTRY} -c configs/a.yaml --model resnet50 --slurm
    """


def test_variable_entry_whose_options_a_shared_args_module_defines(tmp_path):
    root = write_tree(tmp_path, {"lib/__init__.py": "", "lib/utils/__init__.py": "", "lib/utils/args.py": ARGS_PY,
                                 "lib/utils/dist_utils.py": DIST_UTILS, "tools/train.py": TRAIN_PY,
                                 "tools/test.py": TRAIN_PY, "tools/dist_run.sh": DIST_RUN,
                                 "tools/slurm_run.sh": SLURM_RUN})
    assert "NPU143" in tree_codes_by_line(root, "tools/dist_run.sh").get(7, set())
    assert "NPU143" in tree_codes_by_line(root, "tools/slurm_run.sh").get(6, set())


def test_variable_entry_quiet_when_one_importer_of_the_args_module_starts_no_nccl(tmp_path):
    # tools/show.py parses the same options and never creates a process group: the entry may be it
    root = write_tree(tmp_path, {"lib/__init__.py": "", "lib/utils/__init__.py": "", "lib/utils/args.py": ARGS_PY,
                                 "lib/utils/dist_utils.py": DIST_UTILS, "tools/train.py": TRAIN_PY,
                                 "tools/show.py": CPU_TOOL, "tools/dist_run.sh": DIST_RUN})
    assert "NPU143" not in tree_codes_by_line(root, "tools/dist_run.sh").get(7, set())


def test_variable_entry_quiet_when_no_script_imports_the_args_module(tmp_path):
    root = write_tree(tmp_path, {"lib/__init__.py": "", "lib/utils/__init__.py": "", "lib/utils/args.py": ARGS_PY,
                                 "lib/utils/dist_utils.py": DIST_UTILS, "tools/dist_run.sh": DIST_RUN})
    assert "NPU143" not in tree_codes_by_line(root, "tools/dist_run.sh").get(7, set())


EGL_VENDOR = """\
{
    "file_format_version" : "1.0.0",
    "ICD" : {
        "library_path" : "libEGL_nvidia.so.0"
    }
}
"""

MESA_VENDOR = EGL_VENDOR.replace("libEGL_nvidia.so.0", "libEGL_mesa.so.0")

GPU_RESULTS = """\
{
    "model": "resnet50",
    "throughput": {"a100": 2510.4, "v100": 1180.2},
    "batch_size": 256
}
"""


def test_nvidia_egl_vendor_file(tmp_path):
    # glvnd reads /usr/share/glvnd/egl_vendor.d/*.json and loads the library each one names
    found = audit_file(tmp_path, "docker/vendor/10_nvidia.json", EGL_VENDOR)
    assert "NPU092" in codes_of_line(found, 4)
    expect_line_codes(found, {}, (1, 2, 3, 5, 6))


def test_other_vendor_files_and_nvidia_named_data_stay_quiet(tmp_path):
    assert not audit_file(tmp_path / "a", "docker/vendor/50_mesa.json", MESA_VENDOR)
    # a file named for NVIDIA read as settings: a vendor file naming another driver's library, results data
    assert not audit_file(tmp_path / "b", "docker/vendor/10_nvidia.json", MESA_VENDOR)
    assert not audit_file(tmp_path / "c", "results/nvidia_gpus.json", GPU_RESULTS)


WHEEL_WORKFLOW = """\
name: Create Release
on:
  push:
    tags: ['v*']
jobs:
  wheel:
    runs-on: ${{ matrix.os }}
    strategy:
      matrix:
        os: ['ubuntu-20.04']
        python-version: ['3.10', '3.11']
        cuda-version: ['11.8', '12.1']
    steps:
      - name: Install CUDA ${{ matrix.cuda-version }}
        run: |
          bash -x .github/workflows/scripts/cuda-install.sh ${{ matrix.cuda-version }} ${{ matrix.os }}
      - name: Build wheel
        shell: bash
        run: |
          bash -x .github/workflows/scripts/build.sh ${{ matrix.python-version }} ${{ matrix.cuda-version }}
          bash -x .github/workflows/scripts/env.sh ${{ matrix.python-version }} ${{ matrix.os }}
          echo "bash cuda-install.sh ${{ matrix.cuda-version }}"
"""

LOCAL_RUN = """\
#!/bin/bash
CUDA_VERSION=${1:-12.1}
bash scripts/install_deps.sh "$CUDA_VERSION"
bash scripts/train.sh $CUDA_VISIBLE_DEVICES
sh ./run_eval.sh ${MODEL} ${USE_CUDA}
# bash scripts/install_deps.sh $CUDA_VERSION
"""


def test_script_run_with_the_cuda_release(tmp_path):
    found = audit_file(tmp_path, ".github/workflows/publish.yml", WHEEL_WORKFLOW)
    for line in (16, 20):
        assert "NPU018" in codes_of_line(found, line), line
    assert "NPU018" not in codes_of_line(found, 14)      # the step's name
    expect_line_codes(found, {}, (21, 22))


def test_script_run_with_cuda_settings_that_are_no_release(tmp_path):
    found = audit_file(tmp_path, "run.sh", LOCAL_RUN)
    assert "NPU018" in codes_of_line(found, 3)
    assert "NPU018" not in codes_of_line(found, 4) | codes_of_line(found, 5)
    expect_line_codes(found, {}, (6,))


VLLM_BUILD = """\
FROM nvidia/cuda:12.1.0-devel-ubuntu22.04 AS build
WORKDIR /workspace
# make sure punica kernels are built (for LoRA)
ENV VLLM_INSTALL_PUNICA_KERNELS=1
RUN python3 setup.py bdist_wheel --dist-dir=dist
"""

VLLM_CPU_BUILD = """\
FROM ubuntu:22.04 AS build
# ENV VLLM_INSTALL_PUNICA_KERNELS=1
ENV VLLM_INSTALL_PUNICA_KERNELS=0
ENV VLLM_TARGET_DEVICE=cpu
RUN echo "set VLLM_INSTALL_PUNICA_KERNELS=1 for LoRA kernels"
"""


def test_vllm_punica_kernel_build_switch(tmp_path):
    found = audit_file(tmp_path, "Dockerfile", VLLM_BUILD)
    assert "NPU367" in codes_of_line(found, 4)
    expect_line_codes(found, {}, (2, 3))


def test_vllm_punica_switch_off_and_mentions_are_quiet(tmp_path):
    found = audit_file(tmp_path, "Dockerfile", VLLM_CPU_BUILD)
    assert not any(code == "NPU367" for _line, code, _sev in found)


FLASH_WHEEL = """\
FROM nvidia/cuda:12.1.0-devel-ubuntu22.04 AS flash-attn-builder
ARG flash_attn_version=v2.5.6
ENV FLASH_ATTN_VERSION=${flash_attn_version}
WORKDIR /usr/src/flash-attention-v2
RUN pip --verbose wheel flash-attn==${FLASH_ATTN_VERSION} \\
    --no-build-isolation --no-deps --no-cache-dir

FROM python:3.10-slim AS base
RUN pip wheel -w /wheels numpy==1.26.4 einops
RUN --mount=type=bind,from=flash-attn-builder,src=/usr/src/flash-attention-v2,target=/usr/src/flash-attention-v2 \\
    pip install /usr/src/flash-attention-v2/*.whl --no-cache-dir
RUN pip install /wheels/*.whl
WORKDIR /workspace
RUN pip install dist/*.whl
"""


def test_wheel_built_by_pip_wheel_then_installed_from_its_folder(tmp_path):
    found = audit_file(tmp_path, "Dockerfile", FLASH_WHEEL)
    assert "NPU361" in codes_of_line(found, 5)         # the build itself, as before
    assert "NPU361" in codes_of_line(found, 11)
    expect_line_codes(found, {}, (9, 12, 13, 14))     # other packages' wheels; a folder no `pip wheel` wrote to
