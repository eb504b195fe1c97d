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
        make PRECISION=BF16 test_dataloader
        """
    got = found("scripts/build_and_train.sbatch", script)
    assert (4, "NPU441") in got and (5, "NPU441") in got and (7, "NPU021") in got
    assert not [c for ln, c in got if ln in (1, 2, 3, 6, 8, 9, 10)]
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


# -- `make <target>` against the tree's own Makefile (auditor/project/makefile.py) ------------------------------

_MAKEFILE = """\
# tinytrainer: CPU reference and CUDA builds
CC ?= clang
CFLAGS = -O3 -Wall
NVCC_FLAGS = -O3 --use_fast_math -std=c++17
ifeq ($(shell which nvcc 2>/dev/null),)
  $(info nvcc not found, skipping GPU/CUDA builds)
else
  NVCC := nvcc
  TARGETS += train_fp16 bench_kernels
endif
TARGETS = train_cpu

.PHONY: all clean $(TARGETS)

all: $(TARGETS)

train_cpu: train.c
\t$(CC) $(CFLAGS) $^ -lm -o $@

train_fp16: train.cu build/attention.o
\t$(NVCC) $(NVCC_FLAGS) $^ -lcublas -o $@

build/%.o: csrc/%.cpp
\t$(NVCC) -c $(NVCC_FLAGS) $< -o $@

bench_kernels: \\
  kernels/bench.cu
\t$(NVCC) $(NVCC_FLAGS) $< -o $@

clean:
\trm -f train_cpu train_fp16 build/*.o
"""

_KERNELS_MAKEFILE = """\
NVCC ?= nvcc
KERNELS = softmax layernorm
all: $(KERNELS)
ptx: $(KERNELS:%=%.ptx)
%: %.cu
\t$(NVCC) -O3 $< -o $@
%.ptx: %
\tcuobjdump --dump-ptx $< > $@
clean:
\trm -f $(KERNELS) *.ptx
"""


def _tree(tmp_path):
    (tmp_path / "Makefile").write_text(_MAKEFILE)
    (tmp_path / "kernels").mkdir()
    (tmp_path / "kernels" / "Makefile").write_text(_KERNELS_MAKEFILE)
    for name in ("softmax.cu", "layernorm.cu", "bench.cu"):
        (tmp_path / "kernels" / name).write_text("__global__ void k() {}\n")
    (tmp_path / "train.c").write_text("int main(void) { return 0; }\n")
    (tmp_path / "scripts").mkdir()
    (tmp_path / "scripts" / "train_small.sh").write_text(textwrap.dedent("""\
        #!/bin/bash
        set -e
        make train_cpu
        make train_fp16 -j 8
        OMP_NUM_THREADS=8 ./train_cpu -i data/tiny.bin
        make clean
        echo "make train_fp16 builds the CUDA trainer"
        make -C kernels ptx
        make $TARGET
        make bench_kernels  # npu-audit: ignore[NPU333]
        """))
    (tmp_path / ".github" / "workflows").mkdir(parents=True)
    (tmp_path / ".github" / "workflows" / "ci.yml").write_text(textwrap.dedent("""\
        name: ci
        on: [push]
        jobs:
          build:
            runs-on: ubuntu-22.04
            steps:
              - uses: actions/checkout@v4
              - name: CPU build
                run: make train_cpu
              - name: Kernels
                run: |
                  cd kernels
                  make -j4
                  make clean
              - name: Everything
                run: make
        """))
    return tmp_path


def test_make_targets_built_with_nvcc(tmp_path):
    from pathlib import Path

    from auditor.runner import run_static

    root = _tree(tmp_path)
    run = run_static([Path(root)], jobs=1)
    got = {(Path(r.path).name, f.line) for r in run.results for f in r.findings if f.code == "NPU333"}
    assert ("train_small.sh", 4) in got and ("train_small.sh", 8) in got
    assert not {ln for name, ln in got if name == "train_small.sh"} & {3, 5, 6, 7, 9, 10}
    # `cd kernels` then `make -j4` builds the kernels' first target; a bare `make` builds `all`, which holds train_fp16
    assert ("ci.yml", 13) in got and ("ci.yml", 16) in got
    assert not {ln for name, ln in got if name == "ci.yml"} & {9, 14}
    f = next(f for r in run.results for f in r.findings if f.code == "NPU333" and f.line == 4)
    assert f.category == "kernel" and f.severity == "error" and f.symbol == "make train_fp16"
    assert "train.cu" in f.message or "nvcc" in f.message


def test_makefile_reader_follows_make_syntax(tmp_path):
    from auditor.project.makefile import Makefile, make_call

    root = _tree(tmp_path)
    mk = Makefile.parse(_MAKEFILE, root)
    assert mk.default_goal == "all"
    assert mk.why_cuda("train_fp16") and mk.why_cuda("bench_kernels") and mk.why_cuda("all")
    assert mk.why_cuda("train_cpu") is None and mk.why_cuda("clean") is None and mk.why_cuda(".PHONY") is None
    kernels = Makefile.parse(_KERNELS_MAKEFILE, root / "kernels")
    assert kernels.why_cuda("softmax") and kernels.why_cuda("ptx")
    assert kernels.why_cuda("clean") is None and kernels.why_cuda("missing") is None
    assert make_call(["-C", "kernels", "-j", "4", "ptx"], "") == {"dir": "kernels", "makefile": None, "targets": ["ptx"]}
    assert make_call(["--directory=../x", "all"], "") is None
    assert make_call(["$TARGET"], "") is None
    assert make_call(["all"], None) is None


def test_a_variable_appended_from_itself_many_times_expands_linearly(tmp_path):
    # llm-compressor's Makefile builds PYTEST_ARGS in `ifneq` blocks, each `PYTEST_ARGS := $(PYTEST_ARGS) --ignore ..`:
    # expanding every branch of every self-reference grew exponentially and held an audit for minutes
    from auditor.project.makefile import Makefile

    text = 'PYTEST_ARGS ?= ""\n' + "".join(
        f"ifneq ($(findstring t{i},$(TARGETS)),t{i})\n    PYTEST_ARGS := $(PYTEST_ARGS) --ignore tests/t{i}\nendif\n"
        for i in range(8)) + "test:\n\tpytest -ra tests $(PYTEST_ARGS) --device cuda\n"
    mk = Makefile.parse(text, tmp_path)
    (targets, _, recipe), = mk.rules
    assert targets == ["test"]
    assert recipe.count("--ignore tests/t3") == 1 and "--device cuda" in recipe    # once: each branch expanded once


def test_a_makefile_that_is_a_fifo_is_refused_not_waited_on(tmp_path):
    import os
    from pathlib import Path

    import pytest

    from auditor.runner import run_static

    if not hasattr(os, "mkfifo"):
        pytest.skip("no FIFOs on this platform")
    os.mkfifo(tmp_path / "Makefile")               # a reader that opened it blocking would wait for a writer forever
    (tmp_path / "train.sh").write_text("#!/bin/bash\nmake train_gpt2cu\n")
    run = run_static([Path(tmp_path)], jobs=1)
    assert not [f for r in run.results for f in r.findings if f.code == "NPU333"]
