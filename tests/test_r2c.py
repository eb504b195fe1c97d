"""r2c (session 36, project test72): container options and GPU image files held in variables that a Singularity /
Docker command expands, L4T / Colab runtime images chosen in variables, an HPC centre's PyTorch module, NVIDIA's
GitHub Pages package index and Tripy. Shaped on NIH HPC's singularity-def-files wrappers, argus-freesound's
ensemble_pipeline.sh, jetson-inference's docker/build.sh, Kaggle's docker-python Dockerfile.tmpl, NERSC's
pytorch-examples Slurm script and tensorrtx's yolo11_tripy requirements, each with controls."""
from __future__ import annotations

from tests.static_snippets import write_tree
from tests.test_project_t24b import _found

WRAPPER_SH = """\
    #! /bin/bash

    cmd=$(basename ${BASH_SOURCE[0]})
    libexecd=$(readlink -f $(dirname ${BASH_SOURCE[0]})/..)
    image=${libexecd}/libexec/deepvariant-cpu.sif
    gpu_image=${libexecd}/libexec/DEXTR-PyTorch_gpu.sqsh

    singularity_opts=""
    if [[ "${CUDA_VISIBLE_DEVICES:-none}" == "none" ]]; then
        echo "No GPU available, add --nv yourself"
    else
        echo "Using available GPU"
        image=${gpu_image}
        singularity_opts+="--nv"
    fi
    # singularity_opts="--nv" on GPU nodes
    singularity exec ${singularity_opts} \\
      -B /data,/lscratch \\
        ${image} ${cmd} "$@"
    """


def test_singularity_options_and_gpu_image_in_variables(tmp_path):
    root = write_tree(tmp_path, {"wrapper.sh": WRAPPER_SH})
    found = _found(root, "wrapper.sh")
    assert (6, "NPU016", "error") in found          # the `_gpu.sqsh` image, copied into `image`
    assert (14, "NPU017", "error") in found         # `--nv` appended to the options the command expands
    # the CPU image, the messages and the comment carry nothing
    assert not [f for f in found if f[0] in (5, 10, 12, 16)]


MEDAKA_SH = """\
    #! /bin/bash
    image=${appdir}/libexec/medaka.sif
    gpu=""
    if [[ -n "${CUDA_VISIBLE_DEVICES:-}" ]]; then
        gpu="--nv"
    fi
    singularity exec $gpu -B /data ${image} ${cmd} "$@"
    report="--nv"
    echo "$report"
    """


def test_options_variable_only_where_a_container_command_reads_it(tmp_path):
    root = write_tree(tmp_path, {"wrapper.sh": MEDAKA_SH})
    found = _found(root, "wrapper.sh")
    assert (5, "NPU017", "error") in found
    # `medaka.sif` names no GPU build; `report` is read by echo only
    assert not [f for f in found if f[0] in (2, 8)]


DOCKER_PIPELINE_SH = """\
    #!/usr/bin/env bash
    set -e
    NAME="argus-freesound"
    DOCKER_OPTIONS="--rm -it --gpus=all --ipc=host -v $(pwd):/workdir --name=${NAME} ${NAME}"
    CPU_OPTIONS="--rm -it --ipc=host -v $(pwd):/workdir"
    docker build -t ${NAME} .
    docker run ${DOCKER_OPTIONS} python build_kernel.py
    docker run ${CPU_OPTIONS} ${NAME} python make_folds.py
    """


def test_docker_gpus_held_in_a_variable(tmp_path):
    root = write_tree(tmp_path, {"pipeline.sh": DOCKER_PIPELINE_SH})
    found = _found(root, "pipeline.sh")
    assert (4, "NPU017", "error") in found
    assert not [f for f in found if f[0] == 5]


BUILD_SH = """\
    #!/usr/bin/env bash
    # set your docker default-runtime to nvidia
    BASE_IMAGE=$1
    if [ -z $BASE_IMAGE ]; then
        if [ $L4T_VERSION = "35.4.1" ]; then
            BASE_IMAGE="dustynv/l4t-pytorch:r35.4.1"
        elif [ $L4T_VERSION = "35.2.1" ]; then
            BASE_IMAGE="nvcr.io/nvidia/l4t-pytorch:r35.2.1-pth2.0-py3"
        else
            BASE_IMAGE="ubuntu:22.04"
        fi
    fi
    echo "BASE_IMAGE=dustynv/l4t-pytorch:r35.4.1"
    sudo docker build -t $CONTAINER_IMAGE --build-arg BASE_IMAGE=$BASE_IMAGE -f Dockerfile .
    """


def test_l4t_images_chosen_in_variables(tmp_path):
    root = write_tree(tmp_path, {"build.sh": BUILD_SH})
    found = _found(root, "build.sh")
    assert (6, "NPU016", "error") in found
    assert (8, "NPU016", "error") in found
    assert not [f for f in found if f[0] in (2, 10, 13)]


KAGGLE_DOCKERFILE = """\
    {{ if eq .Accelerator "gpu" }}
    FROM us-docker.pkg.dev/colab-images/public/runtime:release-colab-external-images_20260514-060047_RC00
    {{ else }}
    FROM us-docker.pkg.dev/colab-images/public/cpu-runtime:release-colab-external-images_20260514-060047_RC00
    {{ end}}
    # the GPU image is Colab's runtime image
    RUN pip freeze | grep -E 'tensorflow|keras|torch|jax' > /colab_requirements.txt
    """


def test_colab_gpu_runtime_image(tmp_path):
    root = write_tree(tmp_path, {"Dockerfile": KAGGLE_DOCKERFILE})
    found = _found(root, "Dockerfile")
    assert (2, "NPU016", "error") in found
    assert not [f for f in found if f[0] in (1, 4, 6)]


PERLMUTTER_SH = """\
    #!/bin/bash
    #SBATCH -C gpu
    #SBATCH --gpus-per-node=4
    # Setup software: module load pytorch/1.11.0
    module load pytorch/1.11.0
    module load python/3.9
    echo "module load pytorch"
    srun -l -u python train.py -d nccl
    """


def test_centre_pytorch_module(tmp_path):
    root = write_tree(tmp_path, {"train.sh": PERLMUTTER_SH})
    found = _found(root, "train.sh")
    assert (5, "NPU011", "info") in found
    assert not [f for f in found if f[0] in (4, 6, 7)]


TRIPY_REQUIREMENTS = """\
    -f https://nvidia.github.io/TensorRT-Incubator/packages.html
    nvtripy>=0.1.1
    opencv-python-headless
    numpy
    # nvtripy comes from https://nvidia.github.io/TensorRT-Incubator
    """


def test_nvidia_github_pages_index_and_tripy(tmp_path):
    root = write_tree(tmp_path, {"requirements.txt": TRIPY_REQUIREMENTS})
    found = _found(root, "requirements.txt")
    assert (1, "NPU026", "info") in found
    assert (2, "NPU440", "error") in found
    assert not [f for f in found if f[0] in (3, 4, 5)]


def _notebook(cells: list[str]) -> str:
    import json

    return json.dumps({"cells": [{"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
                                  "source": c.splitlines(keepends=True)} for c in cells],
                       "metadata": {}, "nbformat": 4, "nbformat_minor": 5})


COLAB_CELL = "\n".join([
    "%cd /content",
    "!git clone -b v2.4 https://github.com/AUTOMATIC1111/stable-diffusion-webui",
    r"!sed -i -e '''/from modules import launch_utils/a\import os''' /content/stable-diffusion-webui/launch.py",
    r"!sed -i -e '''/        prepare_environment()/a\        os.system\(f\"\"\"sed -i -e ''\"s/dict()))/dict())).cuda()"
    r"/g\"'' /content/stable-diffusion-webui/repositories/stable-diffusion-stability-ai/ldm/util.py\"\"\")''' "
    r"/content/stable-diffusion-webui/launch.py",
    r"!sed -i -e 's/\.cuda()/.npu()/g' /content/stable-diffusion-webui/modules/sd_models.py",
    r"!sed -i -e 's/\[\"sd_model_checkpoint\"\]/\[\"sd_model_checkpoint\",\"sd_vae\"\]/g' modules/shared.py",
    r"# !sed -i -e 's/dict()))/dict())).cuda()/g' ldm/util.py",
]) + "\n"


def test_sed_that_writes_cuda_calls_into_python(tmp_path):
    root = write_tree(tmp_path, {"webui_colab.ipynb": _notebook([COLAB_CELL])})
    found = _found(root, "webui_colab.ipynb")
    assert (4, "NPU001", "error") in found
    # the import edit, the port to .npu(), the settings edit and the comment carry nothing
    assert not [f for f in found if f[0] in (3, 5, 6, 7)]


PYTORCH3D_CELL = """\
import os
import sys
import torch
need_pytorch3d=False
if need_pytorch3d:
    version_str="".join([
        f"py3{sys.version_info.minor}_cu",
        torch.version.cuda.replace(".",""),
        f"_pyt{torch.__version__}"
    ])
    !pip install iopath
    if sys.platform.startswith("linux"):
        print("Trying to install wheel for PyTorch3D")
        !pip install --no-index --no-cache-dir pytorch3d -f https://dl.fbaipublicfiles.com/pytorch3d/packaging/wheels/{version_str}/download.html
        pip_list = !pip freeze
        need_pytorch3d = not any(i.startswith("pytorch3d==") for  i in pip_list)
if need_pytorch3d:
    !pip install 'git+https://github.com/facebookresearch/pytorch3d.git@stable'
"""


def test_shell_lines_inside_python_blocks_keep_the_cell_readable(tmp_path):
    root = write_tree(tmp_path, {"tutorial.ipynb": _notebook([PYTORCH3D_CELL])})
    found = _found(root, "tutorial.ipynb")
    assert (8, "NPU008", "error") in found          # torch.version.cuda, read once the cell parses
    assert (14, "NPU440", "error") in found         # pytorch3d's CUDA wheel pages
    assert (18, "NPU360", "warning") in found       # a source build of pytorch3d's CUDA extension
    assert not [f for f in found if f[0] in (11, 13, 15, 16)]


FAISS_RECIPE = """\
{% set version = environ.get('GIT_DESCRIBE_TAG').lstrip('v') %}
{% set number = GIT_DESCRIBE_NUMBER %}
{% set cuda_major = (cudatoolkit | default("12.0")).split('.')[0] | int %}
{% set libcublas_constraints=">=13.3,<13.4" %}  # libcublas 13.3 is actually for cuda 13.2
{% set mkl_constraints=">=2023" %}

package:
  name: faiss-pkg
  version: {{ version }}

requirements:
  host:
    - mkl {{ mkl_constraints }}
    - cuda-toolkit {{ cudatoolkit }}
  run:
    - libcublas {{ libcublas_constraints }}
"""


def test_conda_recipe_cuda_parameters(tmp_path):
    root = write_tree(tmp_path, {"conda/faiss-gpu/meta.yaml": FAISS_RECIPE})
    found = _found(root, "conda/faiss-gpu/meta.yaml")
    assert (3, "NPU018", "info") in found
    assert (4, "NPU018", "info") in found
    assert not [f for f in found if f[0] in (1, 2, 5)]


CUDA_INSTALL_SH = """\
#!/bin/bash
export CUDA_SHORT=10.1
export CUDA_ARCH=12.0
export CUDA_VISIBLE_DEVICES=0
echo "CUDA_SHORT=10.1"
export CUDA_URL=https://developer.download.nvidia.com/compute/cuda/${CUDA_SHORT}/Prod/local_installers/
"""


def test_cuda_release_in_a_cuda_named_variable(tmp_path):
    root = write_tree(tmp_path, {"cuda/cu101-Linux.sh": CUDA_INSTALL_SH})
    found = _found(root, "cuda/cu101-Linux.sh")
    assert (2, "NPU018", "info") in found
    assert not [f for f in found if f[0] in (3, 5) and f[1] == "NPU018"]


MAC_WORKFLOW = """\
name: Test pip install
on: [push]
jobs:
  test:
    runs-on: ${{ matrix.os }}
    steps:
      - name: Install xformers (mac)
        if: runner.os == 'macOS'
        run: |
          python -m pip install https://github.com/rsxdalv/xformers/releases/download/v0.0.30/xformers-0.0.30+cbc9beb.d20250514-cp311-cp311-macosx_11_0_universal2.whl
      - name: Install xformers (linux)
        run: |
          python -m pip install https://github.com/rsxdalv/xformers/releases/download/v0.0.30/xformers-0.0.30-cp311-cp311-manylinux_2_28_x86_64.whl
"""


def test_macos_wheel_is_no_cuda_build(tmp_path):
    root = write_tree(tmp_path, {".github/workflows/test.yml": MAC_WORKFLOW})
    found = _found(root, ".github/workflows/test.yml")
    assert not [f for f in found if f[0] == 10]
    assert [f for f in found if f[0] == 13 and f[1] == "NPU361"]


WHEEL_WORKFLOW = """\
name: Building Wheels
on: [workflow_dispatch]
jobs:
  wheel:
    runs-on: ${{ matrix.os }}
    strategy:
      matrix:
        os: [ubuntu-22.04]
        task: [lint]
    steps:
      - name: Install CUDA ${{ matrix.cuda-version }}
        if: ${{ matrix.cuda-version != 'cpu' }}
        run: |
          bash .github/workflows/cuda/${{ matrix.cuda-version }}-${{ runner.os }}.sh
      - name: Build wheel for GPU
        run: |
          source .github/workflows/cuda/${{ matrix.cuda-version }}-${{ runner.os }}-env.sh
          bash scripts/${{ matrix.task }}.sh
          echo "bash .github/workflows/cuda/${{ matrix.cuda-version }}-Linux.sh"
"""


def test_script_chosen_by_the_cuda_version(tmp_path):
    root = write_tree(tmp_path, {".github/workflows/building.yml": WHEEL_WORKFLOW})
    found = _found(root, ".github/workflows/building.yml")
    assert (14, "NPU018", "info") in found
    assert (17, "NPU018", "info") in found
    assert not [f for f in found if f[0] in (18, 19)]


OCI_SH = """\
#!/bin/bash
GPU_IMAGE=$(get_gpu_image)
TRAIN_IMAGE="registry.example.com/team/trainer_gpu:1.2"
"""


def test_image_variable_from_a_command_is_no_image_name(tmp_path):
    root = write_tree(tmp_path, {"entry_point.sh": OCI_SH})
    found = _found(root, "entry_point.sh")
    assert not [f for f in found if f[0] == 2]
    assert (3, "NPU016", "error") in found
