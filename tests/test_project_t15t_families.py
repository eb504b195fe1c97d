"""Project-file families missed on project test15 (t15t, session 14; test15 / pool B12 is TUNED ON by t15t): a
Dockerfile's RUN read as Docker hands it to the shell (comment lines inside a continuation, blanks after the `\\`),
the words after an unquoted `>=` redirect, `ADD <url>`, pip / uv index variables, NVIDIA wheel library folders and
TensorRT library files, `FROM ${ARG}` of a CUDA image, setup() requirement lists passed by name, `*_BUILD_CUDA`
switches, a Hydra group file's package, Lightning 1.x `accelerator: ddp`, the image of `docker run --gpus`, and the
xformers choice under its own name. Each test is a realistic file written for the test, with lines that must and
must not be found."""
from __future__ import annotations

from auditor.rules import load_rules
from auditor.static import StaticEngine
from static_snippets import line_codes

ENGINE = StaticEngine(load_rules())


def found(name: str, text: str) -> list[tuple[int, str]]:
    return line_codes(ENGINE, name, text)


def lines(name: str, text: str) -> dict[int, set[str]]:
    out: dict[int, set[str]] = {}
    for line, code in found(name, text):
        out.setdefault(line, set()).add(code)
    return out


MULTI_STAGE_DOCKERFILE = """\
    # syntax=docker/dockerfile:1
    FROM docker.io/library/python:3.11-slim-bookworm AS base
    ARG TARGETARCH
    ADD https://developer.download.nvidia.com/compute/cuda/repos/debian12/x86_64/cuda-keyring_1.1-1_all.deb /tmp/k.deb
    RUN --mount=type=cache,id=apt-$TARGETARCH,sharing=locked,target=/var/cache/apt \\
        dpkg -i /tmp/k.deb && \\
        apt-get update && \\
        apt-get install -y --no-install-recommends \\
        # replace the following line with `cuda-12-8` to obtain the complete CUDA package
        cuda-nvcc-12-8

    FROM base AS build
    ENV UV_INDEX=https://download.pytorch.org/whl/cu128
    RUN --mount=type=cache,id=uv-$TARGETARCH,sharing=locked,target=/root/.cache/uv \\
        uv venv --system-site-packages /venv && \\
        uv pip install --no-deps \\
        # torch (1.0GiB)
        torch==2.7.0+cu128 \\
        # triton (149.3MiB)
        triton>=3.1.0 \\
        # tensorflow (615.0MiB)
        tensorflow>=2.16.1 \\
        # onnxruntime-gpu (215.7MiB)
        onnxruntime-gpu==1.19.2

    FROM base AS final
    RUN ln -s /usr/lib/x86_64-linux-gnu/libnvinfer.so /usr/lib/x86_64-linux-gnu/libnvinfer.so.7 && \\
        ln -s /usr/lib/x86_64-linux-gnu/libjpeg.so /usr/lib/x86_64-linux-gnu/libjpeg.so.8
    ENV LD_LIBRARY_PATH="/venv/lib/python3.11/site-packages/nvidia/cudnn/lib${LD_LIBRARY_PATH:+:${LD_LIBRARY_PATH}}"
    ENV PYTHONPATH="/venv/lib/python3.11/site-packages"
    """.replace("cu128 \\\n", "cu128 \\ \n")         # a blank after the `\\`, as kohya_ss's Dockerfile has


def test_a_multi_stage_buildkit_dockerfile_is_read_as_docker_runs_it():
    got = lines("Dockerfile", MULTI_STAGE_DOCKERFILE)
    assert "NPU018" in got[4]                    # ADD of NVIDIA's CUDA apt repository key
    assert "NPU018" in got[10]                   # cuda-nvcc after a comment line inside the continuation
    assert "NPU018" in got[13]                   # ENV UV_INDEX: a CUDA wheel index for every later install
    assert "NPU018" in got[18]                   # torch+cu128, its `\\ ` with a blank after it
    assert "NPU360" in got[20]                   # triton, after the comment line
    assert "NPU440" in got[24]                   # onnxruntime-gpu, after two unquoted `>=` redirects
    assert got[27] == {"NPU457"}                 # TensorRT's library linked (one finding for the line)
    assert got[29] == {"NPU090"}                 # the cuDNN wheel's library folder
    # comment lines, tensorflow (CPU-capable), libjpeg and PYTHONPATH hold nothing
    for n in (1, 9, 17, 19, 21, 22, 23, 28, 30):
        assert n not in got, (n, got.get(n))


def test_words_after_an_unquoted_redirect_are_the_commands_arguments():
    script = """\
        #!/bin/bash
        pip install triton>=3.1.0 onnxruntime-gpu==1.19.2
        uv venv .venv && uv pip install numpy>=1.26 pynvml
        python train.py > logs/train.log 2>&1
        """
    got = lines("install.sh", script)
    assert "NPU440" in got[2] and "NPU440" in got[3]
    assert 4 not in got
    # `--megatron-path <xxx>` then a new line: bash stops there (a syntax error); tree-sitter glues the next command
    # onto the `>`; its words are not this command's
    placeholder = """\
        #!/bin/bash
        python convert.py \\
            --target-params-dtype fp32 \\
            --megatron-path <xxx>

        python convert.py \\
            --model-type llama \\
            --target-params-dtype bf16
        """
    assert lines("tools/checkpoint/run.sh", placeholder) == {}


def test_pip_and_uv_index_variables_name_the_index():
    script = """\
        #!/bin/bash
        export UV_INDEX=https://download.pytorch.org/whl/cu128
        PIP_EXTRA_INDEX_URL="https://download.pytorch.org/whl/cpu https://download.pytorch.org/whl/cu121"
        export PIP_INDEX_URL=https://download.pytorch.org/whl/cpu
        export UV_INDEX_URL=https://pypi.org/simple
        export DOCS_URL=https://download.pytorch.org/whl/cu121
        """
    got = found("env.sh", script)
    assert (2, "NPU018") in got and (3, "NPU018") in got
    assert not [f for f in got if f[0] in (4, 5, 6)]


def test_from_an_arg_of_a_cuda_image_is_found_at_both_lines():
    dockerfile = """\
        ARG BASE_IMAGE=pytorch/pytorch:2.3.1-cuda12.1-cudnn8-runtime
        ARG MODEL_SIZE=base_plus

        FROM ${BASE_IMAGE}

        ENV SAM2_BUILD_CUDA=0
        RUN pip install -e .
        """
    got = lines("backend.Dockerfile", dockerfile)
    assert got[1] == {"NPU016"} and got[4] == {"NPU016"}
    assert 6 not in got                          # the CUDA build switched off: as on Ascend


SAM2_SETUP = """\
    import os
    from setuptools import find_packages, setup

    REQUIRED_PACKAGES = [
        "torch>=2.3.1",
        "numpy>=1.24.4",
    ]
    EXTRA_PACKAGES = {"notebooks": ["matplotlib>=3.9.1"]}
    PACKAGES = find_packages(exclude="notebooks")

    BUILD_CUDA = os.getenv("SAM2_BUILD_CUDA", "1") == "1"


    def get_extensions():
        if not BUILD_CUDA:
            return []
        return []


    setup(
        name="SAM-2",
        packages=PACKAGES,
        install_requires=REQUIRED_PACKAGES,
        extras_require=EXTRA_PACKAGES,
        ext_modules=get_extensions(),
    )
    """


def test_setup_requirement_lists_passed_by_name_and_the_build_cuda_switch():
    got = lines("setup.py", SAM2_SETUP)
    assert "NPU011" in got[5]                    # torch>=2.3.1 in REQUIRED_PACKAGES (named like `packages`)
    assert 6 not in got and 9 not in got
    assert "NPU060" in got[11]                   # the CUDA extension build, on by default


def test_a_hydra_group_file_is_read_under_its_package():
    trainer = """\
        # @package _group_
        kwargs:
          gpus: -1
          accelerator: ddp
          max_epochs: 40
          replace_sampler_ddp: False
        """
    got = lines("configs/training/trainer/any_gpu_large_ssim_ddp.yaml", trainer)
    assert got[3] == {"NPU020"} and got[4] == {"NPU156"}
    assert 5 not in got and 6 not in got
    # the same keys outside a trainer group (no package header): `kwargs.gpus` is another tool's
    plain = trainer.replace("# @package _group_", "# evaluation settings")
    assert 3 not in lines("configs/eval/default.yaml", plain)
    cpu = trainer.replace("gpus: -1", "gpus: 0").replace("accelerator: ddp", "accelerator: ddp_cpu")
    assert lines("configs/training/trainer/cpu.yaml", cpu) == {}


def test_the_image_of_docker_run_with_gpus():
    script = """\
        #!/bin/bash
        docker run \\
            -v "$SRCDIR":/home/user/project \\
            -u $(id -u):$(id -g) \\
            --gpus all \\
            --name="lama-predict" \\
            --rm \\
            windj007/lama \\
            /home/user/project/bin/predict.py model.path=/data/checkpoint
        docker run --rm -it -v "$PWD":/data windj007/lama bash
        docker run --gpus all --rm "$IMAGE" nvidia-smi
        docker run --gpus=all -v /logs:/logs ${DOCKER_IMAGE} bash run_tests.sh
        """
    got = lines("docker/2_predict_with_gpu.sh", script)
    assert "NPU091" in got[8]
    assert 10 not in got                         # no GPUs asked
    assert "NPU091" not in got.get(11, set())    # the image held in a variable
    assert "NPU091" not in got.get(12, set())    # ... unquoted (`bash` is the command, not the image)


def test_xformers_chosen_under_its_own_name():
    config = """\
        {
          "mixed_precision": "fp16",
          "xformers": "xformers",
          "mem_eff_attn": false
        }
        """
    assert lines("config/finetune.json", config)[3] == {"NPU363"}
    assert lines("config/finetune.json", config.replace('"xformers": "xformers"', '"xformers": "sdpa"')) == {}
