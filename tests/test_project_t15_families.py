"""Project-file families behind the misses of the first run on split tuned_t15 (issue 15, t15: NeMo,
TransformerEngine, xformers, torchtune, composer, pytorch-lightning; tuned on that split): each test is a
realistic snippet with the lines that must be found and the lines that must not."""
from __future__ import annotations

import textwrap

from auditor.rules import load_rules
from auditor.static import StaticEngine
from static_snippets import line_codes

ENGINE = StaticEngine(load_rules())


def found(name: str, text: str) -> list[tuple[int, str]]:
    return line_codes(ENGINE, name, text)


def test_cuda_source_without_kernel_or_cuda_include_is_reported_at_its_first_cuda_code():
    # xformers' pt_stable_utils.cu (CUDA runtime calls only), nvcc_info.cu (nvcc's version macros), fairseq's
    # cuda_utils.cu (`__host__ __device__` helpers): no `__global__`, no CUDA include
    runtime = """\
        #include <deque>
        #include "pt_stable_utils.h"

        // cudaDeviceProp in a comment is not code
        namespace {
        std::vector<cudaDeviceProp> device_properties;
        void init() { int n; STD_CUDA_CHECK(cudaGetDeviceCount(&n)); }
        }
        """
    assert found("xformers/csrc/pt_stable_utils.cu", runtime) == [(6, "NPU372")]
    macros = """\
        #include <torch/csrc/stable/library.h>

        std::tuple<int64_t, int64_t, int64_t> nvcc_build_version() {
          return std::make_tuple(
              __CUDACC_VER_MAJOR__, __CUDACC_VER_MINOR__, __CUDACC_VER_BUILD__);
        }
        """
    assert found("csrc/nvcc_info.cu", macros) == [(5, "NPU372")]
    helpers = """\
        /**
         * Copyright (c) Facebook, Inc. and its affiliates.
         */

        template <typename U, typename V>
        constexpr __host__ __device__ auto divUp(U a, V b) -> decltype(a + b) {
          return (a + b - 1) / b;
        }
        """
    assert found("fairseq/modules/cuda_utils.cu", helpers) == [(6, "NPU372")]
    # a CUDA include still comes first, and a file with neither is reported at its first include
    assert found("a.cu", "#include <vector>\n#include <cuda_runtime.h>\n__device__ int f();\n") == [(2, "NPU372")]
    assert found("b.cu", "#include <vector>\nint f() { return 1; }\n") == [(1, "NPU372")]
    # flash-attention's instantiation files include only the project's header: the include brings the kernels
    instantiation = """\
        // This file is auto-generated. See "generate_kernels.py"

        #include "flash_bwd_launch_template.h"

        template<>
        void run_mha_bwd_<90, cutlass::half_t, 96, true>(Flash_bwd_params &params, cudaStream_t stream) {
            run_mha_bwd_hdim96<90, cutlass::half_t, true>(params, stream);
        }
        """
    assert found("hopper/instantiations/flash_bwd_hdim96_fp16_sm90.cu", instantiation) == [(3, "NPU372")]


def test_trainer_device_named_gpu_by_a_literal_keyword():
    code = """\
        import torch
        import composer
        import lightning as L

        trainer = composer.trainer.Trainer(model=model, max_duration="1ep", device="gpu")
        pl_trainer = L.Trainer(accelerator="gpu", devices=2)
        auto_trainer = L.Trainer(accelerator="auto", devices=1)
        cpu_trainer = composer.trainer.Trainer(model=model, device="cpu")
        picked = composer.trainer.Trainer(model=model, device="gpu" if torch.cuda.is_available() else "cpu")
        chosen = composer.trainer.Trainer(model=model, device=args.device)
        print("pass device='gpu' to train on a GPU")
        """
    got = found("train.py", code)
    assert (5, "NPU050") in got and (6, "NPU050") in got
    assert not any(code == "NPU050" for line, code in got if line in (7, 8, 10, 11))
    assert (9, "NPU050") not in got          # the test is the finding (torch.cuda.is_available)
    assert any(line == 9 for line, _ in got)


def test_submitit_gpu_requests_in_a_notebook_cell():
    notebook = textwrap.dedent("""\
        {"cells": [{"cell_type": "code", "metadata": {}, "execution_count": null, "outputs": [], "source": [
          "import submitit\\n",
          "executor = submitit.AutoExecutor(folder='.')\\n",
          "executor.update_parameters(\\n",
          "    mem_gb=128 * slurm_ngpus,\\n",
          "    gpus_per_node=slurm_ngpus,\\n",
          "    tasks_per_node=slurm_ngpus,\\n",
          "    slurm_partition=\\"gpu\\",\\n",
          "    slurm_constraint=\\"volta32gb\\",\\n",
          ")\\n",
          "cpu_executor = submitit.AutoExecutor(folder='.')\\n",
          "cpu_executor.update_parameters(cpus_per_task=8, slurm_partition=\\"cpu\\")\\n",
          "world = launch(gpus_per_node=8)\\n"]}],
         "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
        """)
    got = found("examples/training_with_submitit.ipynb", notebook)
    assert (5, "NPU051") in got and (7, "NPU051") in got and (8, "NPU051") in got
    assert not any(code == "NPU051" for line, code in got if line in (4, 6, 11, 12))


def test_build_matrix_cuda_versions_and_cudnn_build_arguments_are_build_parameters():
    matrix = """\
        # This file is automatically generated by generate_build_matrix.py. DO NOT EDIT!
        - BASE_IMAGE: nvidia/cuda:12.6.3-cudnn-devel-ubuntu22.04
          CUDA_VERSION: 12.6.3
          CUDNN_VERSION: '9'
          PYTORCH_VERSION: 2.7.0
          GPUS_PER_NODE: 8
        - BASE_IMAGE: ubuntu:22.04
          CUDA_VERSION: ''
          PYTORCH_VERSION: 2.7.0
        """
    got = found("docker/build_matrix.yaml", matrix)
    assert (2, "NPU016") in got and (3, "NPU018") in got and (4, "NPU018") in got
    assert not any(line in (1, 5, 6, 7, 8, 9) for line, _ in got)
    result = ENGINE.analyze_bytes(textwrap.dedent(matrix).encode(), "docker/build_matrix.yaml")
    assert {f.severity for f in result.findings if f.code == "NPU018"} == {"info"}
    dockerfile = """\
        FROM ubuntu:22.04
        ENV CUDA_HOME=/usr/local/cuda
        ENV PATH=$PATH:$CUDA_HOME/bin
        ARG TORCH_VERSION=2.9.1
        ARG CUDA_VERSION=12.9.1
        ARG CUDNN_MAJOR_VERSION=9
        # ARG CUDNN_MAJOR_VERSION=8
        """
    got = found("Dockerfile", dockerfile)
    assert (3, "NPU027") in got and (5, "NPU018") in got and (6, "NPU018") in got
    assert not any(line in (1, 4, 7) for line, _ in got)


def test_toolkit_variable_after_path_in_an_assignment_is_read():
    # tree-sitter-bash splits `$PATH:$CUDA_HOME/bin` after the second `$`; the word is still that expansion
    script = """\
        #!/bin/bash
        export PATH=$PATH:$CUDA_HOME/bin
        export LD_LIBRARY_PATH=$LD_LIBRARY_PATH:$CUDA_HOME/lib64
        export PATH=$PATH:$HOME/.local/bin
        echo "CUDA lives in $CUDA_HOME/bin"
        # export PATH=$PATH:$CUDA_HOME/bin
        """
    got = found("setup_env.sh", script)
    assert (2, "NPU004") in got and (3, "NPU004") in got
    assert not any(line in (4, 5, 6) for line, _ in got)


def test_uv_torch_backend_extras_with_variables_and_index_urls_through_a_variable():
    workflow = """\
        image: "nvidia/cuda:12.6.3-devel-ubuntu22.04"
        machine: "L4_X_2"
        run: |
          IMAGE_TAG="${image##*:}"
          CUDA_VERSION="${IMAGE_TAG%%-*}"
          CUDA_VERSION_M_M="${CUDA_VERSION%.*}"
          CUDA_VERSION_MM="${CUDA_VERSION_M_M//./}"
          export UV_TORCH_BACKEND=cu${CUDA_VERSION_MM}
          extra=$(python -c "print({'lightning': 'pytorch-'}.get('${PACKAGE_NAME}', ''))")
          # Use find-links to prefer CUDA-specific packages from PyTorch index
          uv pip install -e ".[${extra}dev,${extra}test_gpu]" --upgrade \\
            --find-links="https://download.pytorch.org/whl/${UV_TORCH_BACKEND}"
          uv pip install torch --torch-backend=cu126
          uv pip install torch --torch-backend=cpu
          python -c "import bitsandbytes"
          python -c "import json; print(json.dumps({}))"
          uv pip install -e ".[${extra}dev]"
        """
    got = found(".lightning/workflows/pytorch.yml", workflow)
    for line, code in [(1, "NPU016"), (2, "NPU028"), (8, "NPU018"), (11, "NPU023"), (12, "NPU018"), (13, "NPU018"),
                       (15, "NPU401")]:
        assert (line, code) in got, (line, code, got)
    assert not any(line in (4, 5, 6, 7, 9, 10, 16, 17) for line, _ in got)
    assert not any(code == "NPU018" for line, code in got if line == 14)


def test_setup_py_dependency_links_to_nvidia_redist():
    setup = """\
        from setuptools import setup

        setup(
            name="mosaicml",
            install_requires=["numpy>=1.21"],
            dependency_links=["https://developer.download.nvidia.com/compute/redist"],
            url="https://github.com/mosaicml/composer",
        )
        """
    got = found("setup.py", setup)
    assert (6, "NPU026") in got
    assert not any(line == 7 for line, _ in got)
    # not a setuptools script: not read as one
    assert not any(code == "NPU026" for _, code in found("setup.py", "dependency_links = ['https://developer.download.nvidia.com/compute/redist']\n"))
