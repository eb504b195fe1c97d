"""Project-file families behind the misses of the first run on split test5 (issue 15, p15; tuned on test5):
each test is a realistic snippet with the lines that must be found and the lines that must not."""
from __future__ import annotations

import textwrap

from auditor.rules import load_rules
from auditor.static import StaticEngine
from static_snippets import line_codes

ENGINE = StaticEngine(load_rules())


def found(name: str, text: str) -> list[tuple[int, str]]:
    return line_codes(ENGINE, name, text)


def test_cpp_extension_with_cuda_sources_is_reported_on_its_call_line():
    setup = """\
        import os
        from setuptools import setup

        extensions = []
        try:
            from torch.utils import cpp_extension

            extensions.append(
                cpp_extension.CppExtension(
                    "fairseq.libnat",
                    sources=["fairseq/clib/libnat/edit_dist.cpp"],
                )
            )
            if "CUDA_HOME" in os.environ:
                extensions.extend([
                    cpp_extension.CppExtension(
                        "fairseq.libnat_cuda",
                        sources=[
                            "fairseq/clib/libnat_cuda/edit_dist.cu",
                            "fairseq/clib/libnat_cuda/binding.cpp",
                        ],
                    ),
                    cpp_extension.CppExtension("lightconv_cuda", ["lightconv_cuda.cpp", "lightconv_cuda_kernel.cuh"]),
                ])
        except ImportError:
            pass
        # cpp_extension.CppExtension("x", sources=["y.cu"]) in a comment
        setup(name="fairseq", ext_modules=extensions)
        """
    got = found("setup.py", setup)
    assert (16, "NPU370") in got and (23, "NPU370") in got
    assert (9, "NPU370") not in got                       # C++ only: builds for Ascend as it is
    assert not any(line == 26 for line, _ in got)         # the comment


def test_switches_named_after_bfloat16_are_bf16_settings():
    config = """\
        # Training config (fp16_bfloat16: True trains in bf16 on Ampere)
        fp16: True
        fp16_opt_level: O1
        fp16_bfloat16: True
        model:
          use_bfloat16: true
          bfloat16_eval: true
        eval:
          fp16_bfloat16: False
        """
    got = found("conf/exp/train.yaml", config)
    assert (4, "NPU212") in got and (6, "NPU212") in got
    assert not any(code == "NPU212" and line in (1, 7, 9) for line, code in got)


def test_apex_opt_levels_on_command_lines_and_in_configs():
    script = """\
        #!/bin/bash
        # --fp16_opt_level O2 needs apex
        python src/run_tag.py \\
          --model_type xlmr \\
          --fp16 --fp16_opt_level O2 \\
          --per_gpu_train_batch_size 8
        python train.py --amp-opt-level=O1 --opt_level_search grid
        echo "use --fp16_opt_level O1 for apex"
        """
    got = found("scripts/train_panx.sh", script)
    assert (5, "NPU317") in got and (7, "NPU317") in got
    assert not any(line in (2, 6, 8) and code == "NPU317" for line, code in got)
    config = """\
        fp16: True
        fp16_opt_level: O1
        optimizer_level: adam
        """
    got = found("conf/train.yaml", config)
    assert (2, "NPU317") in got and not any(line == 3 for line, _ in got)


def test_find_links_pages_of_cuda_builds():
    requirements = """\
        -f https://download.pytorch.org/whl/torch_stable.html
        -f https://dl.fbaipublicfiles.com/detectron2/wheels/cu110/torch1.7/index.html
        --find-links https://download.openmmlab.com/mmcv/dist/cu113/torch1.11/index.html
        # -f https://download.pytorch.org/whl/torch_stable.html
        -f https://download.openmmlab.com/mmcv/dist/cpu/torch1.11/index.html
        --extra-index-url https://download.pytorch.org/whl/cpu
        -f https://release.colossalai.org
        timm==0.4.12
        """
    got = found("requirements.txt", requirements)
    assert {(1, "NPU018"), (2, "NPU018"), (3, "NPU018")} <= set(got)
    assert not any(line >= 4 for line, _ in got)


def test_variables_passed_into_containers_by_docker_run():
    script = """\
        #!/bin/bash
        gpus=${1:-0}
        # docker run -e CUDA_VISIBLE_DEVICES=0 is how we used to start it
        docker pull $image_name
        docker run -it --rm --privileged \\
            -e CUDA_VISIBLE_DEVICES=$gpus \\
            -e LOGURU_LEVEL=$loguru_level \\
            --env NCCL_DEBUG=INFO --env=NCCL_IB_DISABLE=1 \\
            -e HF_TOKEN \\
            $image_name
        echo "-e CUDA_VISIBLE_DEVICES=1"
        git grep -e CUDA_VISIBLE_DEVICES
        """
    result = ENGINE.analyze_bytes(textwrap.dedent(script).encode(), "run_worker_container.sh")
    got = {(f.line, f.col, f.symbol) for f in result.findings}
    assert (6, 8, "CUDA_VISIBLE_DEVICES") in got
    assert {(8, "NCCL_DEBUG"), (8, "NCCL_IB_DISABLE")} <= {(line, s) for line, _, s in got}
    assert not any(line in (3, 7, 9, 11, 12) for line, _, _ in got)


def test_conda_channels_named_in_pyproject():
    pyproject = """\
        [tool.poetry]
        name = "yi"
        # channels = ["nvidia"] was tried first

        [tool.conda-lock]
        channels = ["conda-forge", "pytorch", "nvidia", "nodefaults"]
        platforms = ["linux-64"]

        [tool.pixi.workspace]
        channels = [
            "conda-forge",
            "nvidia/label/cuda-12.1.0",
        ]
        platforms = ["linux-64"]
        """
    result = ENGINE.analyze_bytes(textwrap.dedent(pyproject).encode(), "pyproject.toml")
    got = {(f.line, f.col, f.code) for f in result.findings}
    assert (6, 40, "NPU018") in got and (12, 6, "NPU018") in got
    assert not any(line in (3, 11) for line, _, _ in got)
    cpu_only = ENGINE.analyze_bytes(b'[tool.pixi.project]\nchannels = ["conda-forge", "pytorch"]\n', "pyproject.toml")
    assert cpu_only.error is None and not cpu_only.findings


def test_ngc_registry_chosen_by_a_build_argument():
    dockerfile = """\
        ARG REGISTRY="nvcr.io"
        ARG CUDA_VERSION="11.8.0"
        # ARG REGISTRY="nvcr.io" for NGC images
        ARG MIRROR=docker.io
        FROM mambaorg/micromamba:1.5.1 as micromamba
        FROM ${REGISTRY}/nvidia/cuda:${CUDA_VERSION}-devel-ubuntu22.04 as base
        FROM ${MIRROR}/library/ubuntu:22.04 as runtime
        """
    got = found("Dockerfile", dockerfile)
    assert (1, "NPU016") in got and (6, "NPU016") in got
    assert not any(line in (3, 4, 5, 7) for line, _ in got)


def test_bare_vcs_requirement_lines_name_their_project():
    requirements = """\
        fairscale==0.4
        git+https://github.com/facebookresearch/xformers.git@04de99bb28aa6de8d48fab3cdbbc9e3874c994b8
        git+https://github.com/NVIDIA/apex.git
        # git+https://github.com/NVIDIA/apex.git
        git+https://github.com/Dod-o/kosmos2.5_tools.git@fairseq
        git+https://github.com/huggingface/transformers
        git+https://github.com/state-spaces/mamba.git#egg=mamba_ssm
        """
    got = found("requirements.txt", requirements)
    assert {(2, "NPU361"), (3, "NPU362"), (7, "NPU440")} <= set(got)
    assert not any(line in (1, 4, 5, 6) for line, _ in got)


def test_chatglm_int4_quantization_and_its_kernel_package():
    script = """\
        PRE_SEQ_LEN=128
        # --quantization_bit 4 saves memory
        CUDA_VISIBLE_DEVICES=0 python3 main.py \\
            --do_train \\
            --model_name_or_path THUDM/chatglm-6b \\
            --pre_seq_len $PRE_SEQ_LEN \\
            --quantization_bit 4
        python3 main.py --do_predict --quantization_bit 16
        """
    got = found("ptuning/train.sh", script)
    assert (7, "NPU441") in got
    assert not any(code == "NPU441" and line in (2, 8) for line, code in got)
    got = found("requirements.txt", "transformers==4.33.1\ncpm_kernels\nsentencepiece==0.1.99\n")
    assert got == [(2, "NPU440")]
