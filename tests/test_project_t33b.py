"""t33b (session 33, project test58 / test57 / test55): a `.cu` file whose CUDA comes from a project header named for
CUDA, CMake switches named for an NVIDIA GPU generation. Shaped on qsim's apps and tests, marian's release workflow
and regression pipeline, each with a control."""
from __future__ import annotations

from auditor.project.cuda_source import inventory
from tests.static_snippets import write_tree
from tests.test_project_t24b import _found

QSIM_APP = """\
// Copyright 2019 Google LLC. All Rights Reserved.
//
// Licensed under the Apache License, Version 2.0 (the "License");

#include <unistd.h>

#include <algorithm>
#include <string>

#include "../lib/circuit_qsim_parser.h"
#include "../lib/formux.h"
#include "../lib/run_qsim.h"
#include "../lib/simulator_cuda.h"

int main(int argc, char* argv[]) {
  using Simulator = qsim::SimulatorCUDA<float>;
  return 0;
}
"""


def test_cu_file_placed_on_its_cuda_named_project_include():
    # no kernel, no CUDA include, no CUDA code of its own: the header named for CUDA is where its CUDA comes from
    assert inventory(QSIM_APP)["first_kernel_line"] == 13


def test_cu_file_placement_controls():
    # a CUDA library include still comes first, and the file's own CUDA code before a CUDA-named header
    library = QSIM_APP.replace("#include <string>", "#include <cuda_runtime.h>")
    assert inventory(library)["first_kernel_line"] == 8
    own_code = QSIM_APP.replace("  return 0;", "  cudaDeviceSynchronize();\n  return 0;")
    assert inventory(own_code)["first_kernel_line"] == 17
    # nothing named for CUDA: the first include, as before; a CUDA-named include in a comment is not one
    plain = QSIM_APP.replace('#include "../lib/simulator_cuda.h"', '// #include "../lib/simulator_cuda.h"')
    assert inventory(plain)["first_kernel_line"] == 5


MARIAN_RELEASE = """\
    name: Release
    on:
      push:
        tags: ["[0-9]+.[0-9]+.[0-9]+*"]
    jobs:
      build-release-ubuntu:
        strategy:
          matrix:
            include:
              - name: "Build Ubuntu CPU+CUDA"
                cuda: true
                fbgemm: true
        runs-on: ubuntu-20.04
        steps:
        - name: Configure CMake
          run: |
            mkdir -p build
            cd build
            cmake .. \\
              -DCOMPILE_CPU=on \\
              -DCOMPILE_KEPLER=${{ matrix.cuda }} \\
              -DCOMPILE_MAXWELL=${{ matrix.cuda }} \\
              -DCOMPILE_PASCAL=off \\
              -DUSE_FBGEMM=${{ matrix.fbgemm }}
        - name: Note
          run: |
            echo "set -DCOMPILE_VOLTA=on for V100 builds"
    """

MARIAN_REGRESSION = """\
    #!/bin/bash
    # -DCOMPILE_TURING=on adds sm_75
    cmake .. -DCOMPILE_CPU=on -DCOMPILE_CUDA=off \\
      -DCOMPILE_MAXWELL=on -DCOMPILE_PASCAL=off -DCOMPILE_VOLTA=OFF -DCOMPILE_AMPERE_RTX=0
    cmake .. -DKokkos_ENABLE_CUDA=ON -DKokkos_ARCH_AMPERE80=ON
    """


def test_cmake_switches_named_for_a_gpu_generation(tmp_path):
    root = write_tree(tmp_path, {".github/workflows/release.yml": MARIAN_RELEASE, "build.sh": MARIAN_REGRESSION})
    ci = _found(root, ".github/workflows/release.yml")
    # turned on where the job's matrix says so (t32d's reading of `-DCOMPILE_CUDA=${{ matrix.cuda }}`)
    assert (21, "NPU021", "warning") in ci
    assert (22, "NPU021", "warning") in ci
    # switched off, the FBGEMM switch beside them, and the echoed message: nothing
    assert not [f for f in ci if f[0] in (23, 24, 27)]
    shell = _found(root, "build.sh")
    assert (4, "NPU021", "warning") in shell          # MAXWELL on; PASCAL / VOLTA / AMPERE_RTX off on the same line
    assert (5, "NPU021", "warning") in shell          # Kokkos' NVIDIA architecture switch
    assert not [f for f in shell if f[0] == 2]        # the comment


def test_cmake_gpu_generation_switches_off_are_quiet(tmp_path):
    root = write_tree(tmp_path, {"cpu.sh": "cmake .. -DCOMPILE_CPU=on -DCOMPILE_PASCAL=off -DCOMPILE_VOLTA=OFF "
                                           "-DCOMPILE_AMPERE=0 -DCOMPILE_TURING=false\n"})
    assert _found(root, "cpu.sh") == []


KIWI_TRAIN = """\
    import pytorch_lightning as pl
    from pydantic import BaseModel


    class TrainerConfig(BaseModel):
        gpus: int = 0
        epochs: int = 50
        amp_level: str = "O0"


    def train_from_configuration(config):
        trainer = pl.Trainer(
            gpus=config.trainer.gpus,
            max_epochs=config.trainer.epochs,
            amp_level=config.trainer.amp_level,
        )
        return trainer
    """

KIWI_PREDICT = """\
    import torch
    from pydantic import BaseModel, validator


    class Configuration(BaseModel):
        use_gpu: bool = False
        gpu_id: int = None

        @validator("gpu_id", pre=True, always=True)
        def setup_gpu(cls, v, values):
            if values.get("use_gpu") and torch.cuda.is_available():
                return torch.cuda.current_device()
            return None
    """

KIWI_XLM = """\
    run:
        experiment_name: XLM WMT20 EN-DE
        seed: 42

    trainer:
        deterministic: true
        gpus: -1
        epochs: 10
    """

KIWI_PREDICT_YAML = """\
    use_gpu: true

    run:
        output_dir: predictions
    """


def test_trainer_gpus_and_use_gpu_the_code_reads_by_name_are_none(tmp_path):
    # OpenKiwi: `pl.Trainer(gpus=config.trainer.gpus)` is the pair (decisions 17 / 26); `use_gpu: true` is its own
    # boolean device option, a pydantic field whose gated calls are the pairs (decision 47)
    root = write_tree(tmp_path, {"kiwi/lib/train.py": KIWI_TRAIN, "kiwi/lib/predict.py": KIWI_PREDICT,
                                 "config/xlm.yaml": KIWI_XLM, "config/predict.yaml": KIWI_PREDICT_YAML})
    assert not [f for f in _found(root, "config/xlm.yaml") if f[0] == 7]
    assert not [f for f in _found(root, "config/predict.yaml") if f[0] == 1]


def test_trainer_gpus_handed_whole_or_unread_keep_their_findings(tmp_path):
    # the section unpacked into the Trainer (lama's `Trainer(**config.trainer.kwargs)` shape) and a tree that never
    # names the key: Lightning, or the launcher, reads it
    handed = KIWI_TRAIN.replace("gpus=config.trainer.gpus,", "**config.trainer,")
    root = write_tree(tmp_path / "handed", {"kiwi/lib/train.py": handed, "config/xlm.yaml": KIWI_XLM})
    assert (7, "NPU020", "error") in _found(root, "config/xlm.yaml")
    unread = write_tree(tmp_path / "unread", {"train.py": "import ray\nray.init()\n", "config/xlm.yaml": KIWI_XLM,
                                              "config/predict.yaml": KIWI_PREDICT_YAML})
    assert (7, "NPU020", "error") in _found(unread, "config/xlm.yaml")
    assert (1, "NPU028", "info") in _found(unread, "config/predict.yaml")


LIGHTNING_CUDA_WHEELS = """\
    name: Wheel::Linux::x86_64::CUDA
    on:
      release:
    jobs:
      linux-wheels-x86-64:
        strategy:
          matrix:
            cuda_version: ["12"]
        runs-on: ubuntu-24.04
        steps:
          - name: Build wheels
            env:
              CIBW_BEFORE_BUILD: |
                python -m pip install ninja cmake auditwheel~=5.0 custatevec-cu${{ matrix.cuda_version }} numpy${{ matrix.numpy_pin }}
            run: python -m cibuildwheel --output-dir ./wheelhouse
          - name: Note
            run: |
              echo "installs custatevec-cu${{ matrix.cuda_version }}"
              python -m pip install custatevec-cu$CUDA_MAJOR
    """


def test_cuda_major_wheels_named_by_an_expansion(tmp_path):
    root = write_tree(tmp_path, {".github/workflows/wheel_linux_x86_64_cuda.yml": LIGHTNING_CUDA_WHEELS})
    found = _found(root, ".github/workflows/wheel_linux_x86_64_cuda.yml")
    assert [f for f in found if f[0] == 14 and f[1] == "NPU440"]     # the CI expression picks the CUDA major
    assert [f for f in found if f[0] == 19 and f[1] == "NPU440"]     # so does a script variable
    assert not [f for f in found if f[0] == 18]                       # the message
    # `numpy${{ matrix.numpy_pin }}` on the same line names no CUDA build: only the one finding there
    assert len([f for f in found if f[0] == 14]) == 1


QSIM_MAKE = """\
    #!/bin/bash
    # Install cuQuantum and set CUQUANTUM_ROOT to build the cuStateVec apps
    g++ -O3 -march=native -fopenmp -o qsim_base.x qsim_base.cc
    if [ -n "$CUQUANTUM_ROOT" ]; then
      CUSTATEVECFLAGS=(
        "-I${CUQUANTUM_ROOT}/include"
        "-L${CUQUANTUM_ROOT}/lib64"
        -lcustatevec -lcublas
      )
      nvcc -O3 "${CUSTATEVECFLAGS[@]}" -o qsim_base_custatevec.x qsim_base_custatevec.cu
    fi
    echo "set CUQUANTUM_ROOT for the cuStateVec build"
    """


def test_cuquantum_install_root(tmp_path):
    root = write_tree(tmp_path, {"apps/make.sh": QSIM_MAKE})
    found = _found(root, "apps/make.sh")
    assert [f for f in found if f[0] == 6 and f[1] == "NPU440"]
    assert [f for f in found if f[0] == 7 and f[1] == "NPU440"]
    assert not [f for f in found if f[0] in (2, 3, 12)]           # the comment, the CPU build, the message


DEEPFOREST_CONFIGS = {
    "src/deepforest/conf/point_pretrain.yaml": """\
        architecture: retinanet
        accelerator: auto
        batch_size: 12
        matmul_precision: high
        """,
    "src/deepforest/conf/config.yaml": """\
        architecture: retinanet
        # set to high or medium for TF32 matmuls
        matmul_precision: highest
        """,
    "src/deepforest/main.py": """\
        import torch


        class deepforest:
            def __init__(self, config):
                self.config = config
                torch.set_float32_matmul_precision(self.config.matmul_precision)
        """,
}


def test_matmul_precision_setting(tmp_path):
    root = write_tree(tmp_path, DEEPFOREST_CONFIGS)
    assert (4, "NPU213", "warning") in _found(root, "src/deepforest/conf/point_pretrain.yaml")
    assert _found(root, "src/deepforest/conf/config.yaml") == []   # "highest": full fp32, Ascend's default too


CIBW_ENVIRONMENT = """\
    name: Wheel::Linux::x86_64::CUDA
    on:
      release:
    jobs:
      linux-wheels-x86-64:
        runs-on: ubuntu-24.04
        steps:
          - name: Build wheels
            env:
              CIBW_ENVIRONMENT: |
                PATH=/opt/rh/gcc-toolset-12/root/usr/bin:$PATH:/usr/local/cuda-${{ matrix.cuda_version }}/bin \\
                LD_LIBRARY_PATH=/opt/rh/gcc-toolset-12/root/usr/lib64:$LD_LIBRARY_PATH:/usr/local/cuda-${{ matrix.cuda_version }}/lib64 \\
                PKG_CONFIG_PATH=/opt/rh/gcc-toolset-12/root/usr/lib64/pkgconfig:$PKG_CONFIG_PATH \\
                CMAKE_ARGS="-DCMAKE_BUILD_TYPE=Release"
              CIBW_BUILD_VERBOSITY: 3
            run: python -m cibuildwheel --output-dir ./wheelhouse
    """


def test_toolkit_paths_in_a_multi_line_environment_value(tmp_path):
    root = write_tree(tmp_path, {".github/workflows/wheel.yml": CIBW_ENVIRONMENT})
    found = _found(root, ".github/workflows/wheel.yml")
    assert (11, "NPU027", "info") in found
    assert (12, "NPU027", "info") in found
    # the gcc-toolset and pkg-config lines of the same block, the CMake arguments: nothing
    assert not [f for f in found if f[0] in (13, 14, 15)]


TUNED_LENS_DOCKERFILE = """\
    FROM ubuntu:22.04 as base

    # install pytorch
    ARG PYTORCH='2.0.1'
    ARG CUDA='cu118'

    RUN [ ${#PYTORCH} -gt 0 ] && VERSION='torch=='$PYTORCH'.*' ||  VERSION='torch'; python3 -m pip install \\
        --no-cache-dir -U $VERSION --extra-index-url https://download.pytorch.org/whl/$CUDA
    RUN [ -n "$DEBUG" ] && echo "pip install --extra-index-url https://download.pytorch.org/whl/cu118"
    RUN ["python3", "-m", "pip", "install", "torch", "--index-url", "https://download.pytorch.org/whl/cu121"]
    CMD ["python3", "-m", "tuned_lens", "--help"]
    """


def test_run_line_that_opens_with_a_test_is_the_shell_form(tmp_path):
    # not JSON, so Docker runs it through the shell (tuned-lens' torch install); the exec form stays as it was
    root = write_tree(tmp_path, {"Dockerfile": TUNED_LENS_DOCKERFILE})
    found = _found(root, "Dockerfile")
    assert (8, "NPU018", "error") in found
    assert not [f for f in found if f[0] == 9]          # an echoed message after the test
    assert (10, "NPU018", "error") in found
    assert not [f for f in found if f[0] == 11]


LDM_MAIN = """\
    from omegaconf import OmegaConf
    from pytorch_lightning.trainer import Trainer


    def main(opt, config):
        lightning_config = config.pop("lightning", OmegaConf.create())
        trainer_config = lightning_config.get("trainer", OmegaConf.create())
        trainer_opt = argparse.Namespace(**trainer_config)
        trainer = Trainer.from_argparse_args(trainer_opt)
        ngpu = len(lightning_config.trainer.gpus.strip(",").split(","))
        return trainer, ngpu
    """

LDM_CONFIG = """\
    model:
      base_learning_rate: 1.0e-05
    lightning:
      trainer:
        benchmark: True
        gpus: "0,1,2,3,4,5,6,7"
    """


def test_trainer_gpus_the_code_only_counts_with_keeps_its_finding(tmp_path):
    # latent-diffusion's main.py (Paint-by-Example): the section reaches the Trainer whole, the read only counts
    root = write_tree(tmp_path, {"main.py": LDM_MAIN, "configs/v1.yaml": LDM_CONFIG})
    assert (6, "NPU020", "error") in _found(root, "configs/v1.yaml")


ONE_LINE_RUNS = """\
    name: build
    on: push
    jobs:
      build:
        runs-on: ubuntu-latest
        steps:
          - name: Note
            run: echo "set -DCOMPILE_VOLTA=on for V100 builds"
          - run: cmake -B build -DGGML_CUDA=ON
          - run: "cmake -B build -DGGML_CUDA=ON"
          - run: 'echo "-DGGML_CUDA=ON"'
    """


def test_one_line_run_keeps_the_quote_that_closes_its_message(tmp_path):
    root = write_tree(tmp_path, {".github/workflows/build.yml": ONE_LINE_RUNS})
    found = _found(root, ".github/workflows/build.yml")
    assert not [f for f in found if f[0] in (8, 11)]      # echoed messages, plain and quoted
    assert (9, "NPU021", "warning") in found
    assert (10, "NPU021", "warning") in found
