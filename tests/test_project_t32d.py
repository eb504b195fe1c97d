"""t32d (session 32, project test57 / test58): Singularity / Apptainer `--nv`, NGC images pulled through a registry
mirror, Hydra overrides held in a bash array, and null or zero scheduler GPU requests. Shaped on CEBRA's
`third_party/image_features/dino.sh`, marian's `contrib/triton-aml/Dockerfile`, DeepForest's cluster training
script and deepqmc's submitit launcher config, each with a control."""
from __future__ import annotations

from tests.static_snippets import write_tree
from tests.test_project_t24b import _found

DINO_SH = """\
    #!/bin/bash
    logdir=$1
    ARGS="--load_features /app/$logdir"
    if [[ ! -f $logdir/testfeat.pth ]]; then
      echo need to compute features.
      ARGS="--dump_features /app/$logdir"
    fi

    singularity exec \\
    --nv \\
    -B $(pwd):/app -W /app \\
    dino.sif python eval_knn.py $ARGS
    apptainer run --nv dino.sif python eval_linear.py
    # singularity exec --nv is needed on the GPU nodes
    echo "run with singularity exec --nv"
    singularity exec -B $(pwd):/app dino.sif python extract.py
    """


def test_singularity_and_apptainer_nv(tmp_path):
    root = write_tree(tmp_path, {"dino.sh": DINO_SH})
    found = _found(root, "dino.sh")
    assert (10, "NPU017", "error") in found
    assert (13, "NPU017", "error") in found
    # the comment, the echo and the run without `--nv` (the control) carry nothing
    assert not [f for f in found if f[0] in (14, 15, 16)]


TRITON_DOCKERFILE = """\
    FROM mcr.microsoft.com/mirror/docker/library/ubuntu:20.04 AS builder
    RUN apt-get update && apt-get install -y cmake g++ git
    # Replace 'mcr.microsoft.com/mirror/nvcr/' with 'nvcr.io/' below to pull from the official NVIDIA image.
    FROM mcr.microsoft.com/mirror/nvcr/nvidia/tritonserver:22.03-py3
    RUN mkdir -p /marian-dev/build
    """


def test_ngc_image_through_a_registry_mirror(tmp_path):
    root = write_tree(tmp_path, {"Dockerfile": TRITON_DOCKERFILE})
    found = _found(root, "Dockerfile")
    assert (4, "NPU016", "error") in found
    assert not [f for f in found if f[0] in (1, 3)]       # the mirrored Ubuntu image and the comment


CLUSTER_TRAIN = """\
    #!/bin/bash
    #SBATCH --nodes=1
    DEVICES="${DEVICES:-4}"
    TRAIN_ARGS=(
      --config-name="$CONFIG_NAME"
      train
      accelerator=gpu
      "devices=$DEVICES"
    )
    EVAL_ARGS=(
      --config-name="$CONFIG_NAME"
      evaluate
      accelerator=cpu
      --tag device=cuda
    )
    srun uv run python -m deepforest.scripts.cli "${TRAIN_ARGS[@]}"
    """


def test_hydra_overrides_in_a_bash_array(tmp_path):
    root = write_tree(tmp_path, {"train.sh": CLUSTER_TRAIN})
    found = _found(root, "train.sh")
    assert (7, "NPU020", "error") in found
    # `accelerator=cpu` and an option's value (`--tag device=cuda`) are no GPU request
    assert not [f for f in found if f[0] in (13, 14)]


SUBMITIT_LAUNCHER = """\
    # @package hydra.launcher
    submitit_folder: ${hydra.sweep.dir}/.submitit/%j
    timeout_min: 4320
    cpus_per_task: 8
    gpus_per_node: 1
    tasks_per_node: 1
    mem_gb: null
    nodes: 1
    name: ${hydra.job.name}
    _target_: hydra_plugins.hydra_submitit_launcher.submitit_launcher.SlurmLauncher
    partition: null
    gres: null
    cpus_per_gpu: null
    gpus_per_task: null
    mem_per_gpu: null
    """


def test_null_scheduler_gpu_request(tmp_path):
    root = write_tree(tmp_path, {"conf/hydra/launcher/slurm.yaml": SUBMITIT_LAUNCHER})
    found = _found(root, "conf/hydra/launcher/slurm.yaml")
    assert (5, "NPU022", "info") in found
    assert not [f for f in found if f[0] == 14]           # `gpus_per_task: null` asks for nothing


RELEASE_WORKFLOW = """\
    name: Release
    on:
      push:
        tags: ["[0-9]+.[0-9]+.[0-9]+*"]
    jobs:
      build-release-ubuntu:
        strategy:
          matrix:
            include:
              - name: "Ubuntu CPU+CUDA"
                cuda: true
              - name: "Ubuntu CPU-only"
                cuda: false
        runs-on: ubuntu-20.04
        steps:
        - name: Checkout
          uses: actions/checkout@v3
        - name: Configure CMake
          run: |
            mkdir -p build
            cd build
            cmake .. \\
              -DCMAKE_BUILD_TYPE=Slim \\
              -DCOMPILE_CPU=on \\
              -DCOMPILE_CUDA=${{ matrix.cuda }} \\
              -DCOMPILE_SERVER=on \\
              -DUSE_STATIC_LIBS=on
    """

BUILD_SH = """\
    #!/bin/bash
    USE_CUDA=${USE_CUDA:-OFF}
    BUILD_TYPE=${1:-Release}
    cmake -S . -B build -DCMAKE_BUILD_TYPE=$BUILD_TYPE -DGGML_CUDA=$USE_CUDA
    cmake -S . -B build-gpu -DGGML_CUDA=$WITH_GPU
    """


def test_cmake_cuda_switch_set_from_a_variable(tmp_path):
    root = write_tree(tmp_path, {".github/workflows/release.yml": RELEASE_WORKFLOW, "build.sh": BUILD_SH})
    found = _found(root, ".github/workflows/release.yml")
    assert (25, "NPU021", "warning") in found
    assert not [f for f in found if f[0] in (23, 24, 26)]  # the build type and the other switches
    found = _found(root, "build.sh")
    # `$USE_CUDA` is OFF unless the caller says otherwise (the control); `$WITH_GPU` is set by the caller
    assert not [f for f in found if f[0] == 4]
    assert (5, "NPU021", "warning") in found


CONFIGURE_SH = """\
    #!/bin/bash
    set -e
    mkdir -p build && cd build
    CC=/usr/bin/gcc-9 CXX=/usr/bin/g++-9 CUDAHOSTCXX=/usr/bin/g++-9 \\
    cmake .. -DCMAKE_BUILD_TYPE=Release
    export CUDAFLAGS="-lineinfo"
    export CXXFLAGS="-O2"
    make -j4
    """


def test_cmake_cuda_language_environment_variables(tmp_path):
    root = write_tree(tmp_path, {"scripts/configure.sh": CONFIGURE_SH})
    found = _found(root, "scripts/configure.sh")
    assert (4, "NPU367", "warning") in found
    assert (6, "NPU367", "warning") in found
    assert not [f for f in found if f[0] == 7]            # the C++ flags


WINDOWS_RELEASE = """\
    name: Release
    on: push
    jobs:
      build-release-windows:
        runs-on: windows-2019
        steps:
        - name: Install CUDA
          run: |
            .\\\\scripts\\\\ci\\\\install_cuda_windows.ps1 '11.2'
            # Set path to CUDA for subsequent steps so that CMake can find it: $env:CUDA_PATH
            echo "CUDA_PATH=$env:CUDA_PATH" | Out-File -FilePath $env:GITHUB_ENV -Append
            echo "$env:CUDA_PATH/bin" | Out-File -FilePath $env:GITHUB_PATH -Append
            echo "MKLROOT=$env:GITHUB_WORKSPACE/mkl" | Out-File -FilePath $env:GITHUB_ENV -Append
            Write-Host "CUDA is in $env:CUDA_PATH"
          shell: pwsh
        - name: Test
          run: |
            $env:CUDA_VISIBLE_DEVICES = "0"
            python -m pytest tests
          shell: pwsh
    """


def test_powershell_cuda_variables(tmp_path):
    root = write_tree(tmp_path, {".github/workflows/release.yml": WINDOWS_RELEASE})
    found = _found(root, ".github/workflows/release.yml")
    assert (11, "NPU004", "info") in found                # CUDA_PATH written to the job's environment
    assert (18, "NPU004", "warning") in found             # the device selection
    # the comment, the PATH copy, MKLROOT and the message carry nothing
    assert not [f for f in found if f[0] in (10, 12, 13, 14)]


WHISPER_DOCKERFILE = """\
    ARG BUILD_IMAGE=ubuntu:22.04
    FROM ${BUILD_IMAGE} AS build
    ARG GGML_CUDA=OFF
    ARG WITH_CUBLAS
    WORKDIR /src
    COPY . .
    RUN cmake -B build -DCMAKE_BUILD_TYPE=Release -DWHISPER_SDL2=ON -DGGML_CUDA=${GGML_CUDA} \\
     && cmake --build build -j --target whisper-server
    RUN cmake -B build2 -DGGML_CUBLAS=${WITH_CUBLAS} && cmake --build build2
    """


def test_cmake_cuda_switch_from_a_dockerfile_arg(tmp_path):
    root = write_tree(tmp_path, {"docker/Dockerfile": WHISPER_DOCKERFILE})
    found = _found(root, "docker/Dockerfile")
    assert not [f for f in found if f[0] == 7]            # `ARG GGML_CUDA=OFF`: the CPU build unless asked
    assert (9, "NPU021", "warning") in found              # an ARG with no default: the builder picks
