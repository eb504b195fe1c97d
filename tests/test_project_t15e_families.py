"""Project-file families behind the misses of the first run on split test8 (issue 15, t15e; tuned on test8 from
then on): CUDA binary utilities (`cuobjdump`), build switches naming NVIDIA libraries on make's command line or as a
script's variable (`USE_CUDNN=1`), a compute-capability build variable, clones of NVIDIA's header libraries, and the
CUDA toolkit's Windows location in CI steps (bash, PowerShell and cmd). Each test is a realistic file with the lines
that must be found and the lines that must not (none of them is copied from the split's trees)."""
from __future__ import annotations

import textwrap

from auditor.rules import load_rules
from auditor.static import StaticEngine
from static_snippets import line_codes

ENGINE = StaticEngine(load_rules())


def found(name: str, text: str) -> list[tuple[int, str]]:
    return line_codes(ENGINE, name, text)


def test_cuda_binary_utilities_in_a_build_script():
    script = """\
        #!/usr/bin/env bash
        set -e
        # inspect the SASS of the fused kernels (cuobjdump / nvdisasm come with the CUDA toolkit)
        nvcc -O3 -arch=sm_90a -cubin -o build/fused.cubin csrc/fused.cu
        cuobjdump --dump-sass build/fused.cubin > build/fused.sass
        nvdisasm -g build/fused.cubin | grep -c LDGSTS
        /usr/local/cuda/bin/nvprune -arch sm_90 build/libfused.a -o build/libfused_sm90.a
        echo "run cuobjdump --dump-ptx to see the PTX"
        objdump -d build/host.o > build/host.asm
        """
    got = found("scripts/dump_sass.sh", script)
    assert (4, "NPU017") in got and (5, "NPU017") in got and (6, "NPU017") in got and (7, "NPU017") in got
    assert not [c for ln, c in got if ln in (1, 2, 3, 8, 9)]


def test_nvidia_library_switches_on_make_and_as_variables():
    script = """\
        #!/bin/bash
        #SBATCH --job-name=gpt2-124M
        cd $HOME/src/tinytrainer
        make train_fp16 USE_CUDNN=1 NO_USE_MPI=1 -j 8
        USE_CUDNN=1 make profile_fp16
        make train_fp32 USE_CUDNN=0
        make train_fp32 GPU_COMPUTE_CAPABILITY=90 OUT_DIR=build
        make clean USE_CUDNN=$USE_CUDNN
        make all
        """
    got = found("scripts/build_and_train.sbatch", script)
    assert (4, "NPU441") in got and (5, "NPU441") in got and (7, "NPU021") in got
    assert not [c for ln, c in got if ln in (1, 2, 3, 6, 8, 9)]
    result = ENGINE.analyze_bytes(textwrap.dedent(script).encode(), "scripts/build_and_train.sbatch")
    switch = next(f for f in result.findings if f.line == 4)
    assert switch.category == "third_party" and switch.symbol == "USE_CUDNN=1"


def test_compute_capability_and_tensorrt_switch_in_a_config():
    config = """\
        build:
          compute_capability: 8.0
          use_tensorrt: true
          use_cudnn: false
          use_fp16: true
        """
    got = found("configs/export.yaml", config)
    assert (2, "NPU021") in got and (3, "NPU441") in got
    assert not [c for ln, c in got if ln in (1, 4)]


def test_clone_of_nvidia_header_libraries_in_a_workflow():
    workflow = """\
        name: build
        on: [push, pull_request]
        jobs:
          build-cuda:
            runs-on: ubuntu-22.04
            container:
              image: nvidia/cuda:12.4.1-cudnn-devel-ubuntu22.04
            steps:
              - uses: actions/checkout@v4
              - name: Fetch cuDNN frontend and CCCL
                run: |
                  git clone --depth 1 https://github.com/NVIDIA/cudnn-frontend.git third_party/cudnn-frontend
                  git clone https://github.com/NVIDIA/cccl.git
                  git clone https://github.com/pybind/pybind11.git
        """
    got = found(".github/workflows/build.yml", workflow)
    assert (12, "NPU440") in got and (13, "NPU440") in got
    assert not [c for ln, c in got if ln == 14]


def test_windows_cuda_toolkit_location_in_bash_pwsh_and_cmd_steps():
    workflow = r"""
        name: windows
        on: [push]
        jobs:
          build-windows:
            runs-on: windows-2022
            steps:
              - uses: actions/checkout@v4
              - name: Install CUDA (default shell)
                run: |
                  mkdir -p "C:\Program Files\NVIDIA GPU Computing Toolkit\CUDA\v12.1"
                  7z x cuda_redist.zip -o"C:\Program Files\NVIDIA GPU Computing Toolkit\CUDA\v12.1"
              - name: Environment
                shell: pwsh
                run: |
                  # the toolkit lives in C:\Program Files\NVIDIA GPU Computing Toolkit\CUDA
                  Write-Host "CUDA at C:\Program Files\NVIDIA GPU Computing Toolkit\CUDA\v12.1"
                  echo "CUDA_PATH=C:\Program Files\NVIDIA GPU Computing Toolkit\CUDA\v12.1" | Out-File -FilePath $env:GITHUB_ENV -Append
                  echo "C:\\Program Files\\NVIDIA GPU Computing Toolkit\\CUDA\\v12.1\\bin" | Out-File -FilePath $env:GITHUB_PATH -Append
              - name: Build
                shell: cmd
                run: |
                  rem nvcc from C:\Program Files\NVIDIA GPU Computing Toolkit\CUDA\v12.1\bin
                  set "PATH=C:\Program Files\NVIDIA GPU Computing Toolkit\CUDA\v12.1\bin;%PATH%"
                  cmake -B build -G Ninja
        """
    got = found(".github/workflows/windows.yml", workflow.lstrip("\n"))
    assert (10, "NPU027") in got and (11, "NPU027") in got
    assert (17, "NPU027") in got and (18, "NPU027") in got and (23, "NPU027") in got
    assert not [c for ln, c in got if ln in (15, 16, 22, 24)]
    result = ENGINE.analyze_bytes(textwrap.dedent(workflow.lstrip("\n")).encode(), ".github/workflows/windows.yml")
    path = next(f for f in result.findings if f.line == 17)
    assert path.severity == "info" and path.category == "device"
