"""Project-file families of t15q (issue 15, pooled over every earlier split): the switches that force a CUDA
extension build where a project file sets them (kernel, NPU808; their reads and architecture lists stay NPU021,
device), and FlashAttention's fused CUDA ops installed from its repository (kernel, NPU809; the attention kernel
stays NPU361). Realistic snippets written for these tests, each with the lines that stay as they were."""
from __future__ import annotations


from auditor.rules import load_rules
from auditor.static import StaticEngine
from static_snippets import code_line_symbol_category, codes_on as on

ENGINE = StaticEngine(load_rules())


def audit(name: str, text: str) -> list[tuple[str, int, str, str]]:
    return code_line_symbol_category(ENGINE, name, text)


def test_force_cuda_set_in_a_dockerfile_is_the_kernel_build_and_the_arch_list_stays_device():
    found = audit("docker/Dockerfile", """\
        FROM nvidia/cuda:11.1.1-cudnn8-devel-ubuntu18.04
        ENV DEBIAN_FRONTEND noninteractive
        RUN apt-get update && apt-get install -y python3-opencv ca-certificates python3-dev git wget sudo ninja-build
        # set FORCE_CUDA because during `docker build` cuda is not accessible
        ENV FORCE_CUDA="1"
        # This will by default build detectron2 for all common cuda architectures and take a lot more time,
        ARG TORCH_CUDA_ARCH_LIST="Kepler;Kepler+Tesla;Maxwell;Maxwell+Tegra;Pascal;Volta;Turing"
        ENV TORCH_CUDA_ARCH_LIST="${TORCH_CUDA_ARCH_LIST}"
        RUN pip install --user -e detectron2_repo
        """)
    assert on(found, 5) == {("NPU808", "kernel")}
    assert on(found, 4) == set()
    assert ("NPU021", "device") in on(found, 8)


def test_build_switches_as_command_prefixes_and_exports():
    found = audit("dev/packaging/pkg_helpers.bash", """\
        #!/bin/bash -e
        export TORCH_CUDA_ARCH_LIST="3.7;5.0;5.2;6.0;6.1+PTX;7.0;7.5+PTX;8.0;8.6+PTX"

        setup_cuda() {
          # Now work out the CUDA settings
          # Like other torch domain libraries, we choose common GPU architectures only.
          export FORCE_CUDA=1
        }

        unset FORCE_CUDA
        """)
    assert on(found, 7) == {("NPU808", "kernel")}
    assert ("NPU808", "kernel") not in on(found, 10)      # `unset` turns the build off: no forced build
    ci = audit(".github/workflows/compatibility_test.yml", """\
        name: Compatibility Test
        on: workflow_dispatch
        jobs:
          build:
            runs-on: [self-hosted, gpu]
            steps:
              - uses: actions/checkout@v4
              - name: Install Colossal-AI
                run: |
                  BUILD_EXT=1 pip install -v -e .
                  DS_BUILD_FUSED_ADAM=1 DS_BUILD_UTILS=1 DS_BUILD_CPU_ADAM=1 pip install deepspeed==0.14.0
        """)
    assert ("NPU808", "kernel") in on(ci, 10)
    assert {c for c, *_ in ci if c in ("NPU808", "NPU021")} == {"NPU808"}
    assert sorted(sym for code, ln, sym, _ in ci if ln == 11 and code == "NPU808") == \
        ["DS_BUILD_FUSED_ADAM", "DS_BUILD_UTILS"]


def test_an_off_value_and_the_setup_py_read_stay_device():
    found = audit("Dockerfile", """\
        FROM python:3.10
        ENV FORCE_CUDA=0
        RUN pip install -e .
        """)
    assert {(c, cat) for c, _, _, cat in found if c in ("NPU808", "NPU021")} == {("NPU021", "device")}
    setup = audit("setup.py", """\
        import os
        import torch
        from setuptools import setup
        from torch.utils.cpp_extension import CUDA_HOME, CppExtension, CUDAExtension


        def get_extensions():
            extension = CppExtension
            define_macros = []
            if (torch.cuda.is_available() and CUDA_HOME is not None) or os.getenv("FORCE_CUDA", "0") == "1":
                extension = CUDAExtension
                define_macros += [("WITH_CUDA", None)]
            return [extension("mylib._C", ["csrc/vision.cpp"], define_macros=define_macros)]
        """)
    assert all(code != "NPU808" for code, *_ in setup)
    assert "device" in {cat for _, ln, _, cat in setup if ln == 10}


def test_flash_attention_fused_ops_are_kernels_and_the_attention_kernel_stays_attention():
    docker = audit("docker/Dockerfile", """\
        FROM nvcr.io/nvidia/pytorch:23.10-py3
        ARG BUNDLE_FLASH_ATTENTION=true
        RUN if [ "$BUNDLE_FLASH_ATTENTION" = "true" ]; then \\
                cd /data/shared/Qwen && \\
                git clone https://github.com/Dao-AILab/flash-attention && \\
                cd flash-attention && \\
                pip3 install . && \\
                pip3 install csrc/layer_norm; \\
            fi
        RUN pip install git+https://github.com/Dao-AILab/flash-attention@v2.6.3#subdirectory=csrc/fused_dense_lib
        RUN pip install git+https://github.com/Dao-AILab/flash-attention@v2.6.3#subdirectory=csrc/rotary
        """)
    assert ("NPU361", "attention") in on(docker, 7)
    assert on(docker, 8) == {("NPU809", "kernel")}
    assert on(docker, 10) == {("NPU809", "kernel")}
    assert on(docker, 11) == {("NPU809", "kernel")}
    pyproject = audit("pyproject.toml", """\
        [project]
        name = "internvideo2-multimodality"
        version = "0.1.0"
        dependencies = [
            "torch==2.1.0",
            "flash-attn==2.6.3",
            "dropout_layer_norm @ git+https://github.com/Dao-AILab/flash-attention.git@v2.6.3#subdirectory=csrc/layer_norm",
            "fused_dense_lib @ git+https://github.com/Dao-AILab/flash-attention.git@v2.6.3#subdirectory=csrc/fused_dense_lib",
            "einops",
        ]
        """)
    assert ("NPU361", "attention") in on(pyproject, 6)
    assert on(pyproject, 7) == {("NPU809", "kernel")}
    assert on(pyproject, 8) == {("NPU809", "kernel")}
    assert on(pyproject, 9) == set()


def test_a_subdirectory_of_another_repository_keeps_its_project_rule():
    found = audit("requirements.txt", """\
        numpy
        git+https://github.com/NVlabs/tiny-cuda-nn/#subdirectory=bindings/torch
        git+https://github.com/Dao-AILab/flash-attention.git@v2.5.8#subdirectory=csrc/ft_attention
        """)
    assert {code for code, ln, *_ in found if ln == 2} and all(code != "NPU809" for code, ln, *_ in found if ln == 2)
    assert on(found, 3) == {("NPU361", "attention")}
