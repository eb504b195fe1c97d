"""tp38 (session 38, project test83): GPU families of LLM-studio, cloud-image, HPC and speech-service repositories
that the project-file readers missed: Alpine / Chainguard `apk add` of CUDA packages named with version variables,
Packer JSON templates whose provisioners install the CUDA stack, NCCL / nccl-tests / aws-ofi-nccl built from source
and NCCL version build arguments, AWS nccl-tests base images, CDI `nvidia.com/gpu` device requests, published compose
images beside `build:`, Ray `num-gpus` placeholders, Poetry source entries and `--extras` installs, extras held in
shell variables, `sbatch -C gpu` on the command line, `python -s -m pip`, `%%writefile` config cells and
`torch_dtype_str` bf16 settings. Shaped on h2o-llmstudio's Dockerfile, dstack's Packer templates and base image,
awsome-distributed-training's FSDP Dockerfile and verl RayCluster, speaches' compose files, whisper-asr-webservice's
pyproject and GPU Dockerfile, oumi's Dockerfile / install.sh / Perlmutter launcher / notebooks and SwarmUI's ComfyUI
installer, each with controls (comments, messages, other vendors, CPU choices)."""
from __future__ import annotations

import json

from tests.static_snippets import write_tree
from tests.test_project_t24b import _found


def _codes(found, line):
    return {code for ln, code, _sev in found if ln == line}


def _severities(found, line):
    return {sev for ln, _code, sev in found if ln == line}


def test_apk_and_rpm_installs_of_versioned_cuda_packages(tmp_path):
    root = write_tree(tmp_path, {"Dockerfile": """\
        FROM cgr.dev/chainguard/python:latest-dev
        ARG CUDA_MAJOR_VERSION=12
        ARG CUDA_MINOR_VERSION=6
        RUN apk update \\
            && apk add --no-cache \\
            nvidia-cudnn-8-cuda-${CUDA_MAJOR_VERSION} \\
            nvidia-cuda-cudart-${CUDA_MAJOR_VERSION}.${CUDA_MINOR_VERSION} \\
            cuda-toolkit-${CUDA_MAJOR_VERSION}.${CUDA_MINOR_VERSION}-dev \\
            make \\
            git
        RUN apk add --no-cache curl bash
        # RUN apk add nvidia-cudnn-8
        RUN echo "apk add nvidia-cudnn-8 on the GPU image"
        """, "install_rhel.sh": """\
        #!/bin/bash
        sudo dnf -y install cuda-toolkit-${CUDA_MAJOR}-${CUDA_MINOR} libnccl-${NCCL}-1+cuda${CUDA}
        sudo zypper in -y cuda-drivers-${DRIVER_BRANCH}
        sudo dnf -y install gcc make
        """})
    found = _found(root, "Dockerfile")
    for line in (6, 7, 8):
        assert "NPU018" in _codes(found, line)
    assert not _codes(found, 9) | _codes(found, 10) | _codes(found, 11) | _codes(found, 12) | _codes(found, 13)
    rhel = _found(root, "install_rhel.sh")
    assert "NPU018" in _codes(rhel, 2) and "NPU018" in _codes(rhel, 3)
    assert not _codes(rhel, 4)


PACKER_CUDA = """\
    {
      "variables": {
        "build_prefix": "",
        "cuda_drivers_version": "",
        "image_version": ""
      },
      "builders": [
        {
          "type": "googlecompute",
          "image_name": "{{user `build_prefix`}}dstack-cuda-{{user `image_version` | clean_resource_name}}",
          "zone": "us-central1-a"
        }
      ],
      "provisioners": [
        {
          "type": "shell",
          "scripts": ["provisioners/kernel/apt-upgrade.sh", "provisioners/install-nvidia-driver.sh"]
        },
        {
          "type": "shell",
          "environment_vars": ["CUDA_DRIVERS_VERSION={{user `cuda_drivers_version`}}"],
          "script": "provisioners/cuda.sh"
        },
        {
          "type": "shell",
          "script": "provisioners/install-nvidia-container-toolkit.sh"
        },
        {
          "type": "shell",
          "script": "provisioners/install-amd-gpu-driver.sh"
        },
        {
          "type": "file",
          "source": "provisioners/run-docker",
          "destination": "/tmp/run-docker"
        }
      ]
    }
    """


def test_packer_template_cuda_provisioners_and_version_variable(tmp_path):
    root = write_tree(tmp_path, {
        "scripts/packer/gcp-image-cuda.json": PACKER_CUDA,
        "scripts/packer/versions.json": '{"cuda_version": "12.8", "docker": "27.1"}\n',
        "templates/plain.json": PACKER_CUDA,
    })
    found = _found(root, "scripts/packer/gcp-image-cuda.json")
    assert _codes(found, 4) == {"NPU018"} and _severities(found, 4) == {"info"}
    assert "NPU074" in _codes(found, 17)            # install-nvidia-driver.sh among the scripts
    assert "NPU074" in _codes(found, 22)            # provisioners/cuda.sh
    assert "NPU017" in _codes(found, 26)            # the container toolkit
    # the image name, the variable passed on, the AMD driver script and the file copy are quiet
    for line in (10, 21, 30, 34):
        assert not _codes(found, line)
    # a Packer folder's other JSON is read as a config, not as a template; JSON elsewhere is not read
    assert not [f for f in _found(root, "scripts/packer/versions.json") if f[1] in ("NPU074", "NPU017")]
    assert not _found(root, "templates/plain.json")


def test_nccl_built_from_source_and_nccl_tests_image(tmp_path):
    root = write_tree(tmp_path, {"docker/base/Dockerfile": """\
        FROM nvidia/cuda:13.0.3-base-ubuntu24.04 AS builder
        ENV NCCL_HOME=/opt/nccl
        ARG NCCL_VERSION=2.28.3-1
        ARG AWS_OFI_NCCL_VERSION=1.7.3-aws
        # builds NCCL and nccl-tests from source (https://github.com/NVIDIA/nccl)
        RUN cd /tmp \\
            && git clone https://github.com/NVIDIA/nccl.git -b v${NCCL_VERSION} \\
            && cd nccl \\
            && make -j$(nproc) src.build BUILDDIR=${NCCL_HOME}
        RUN cd /opt \\
            && git clone https://github.com/NVIDIA/nccl-tests \\
            && cd nccl-tests
        RUN curl -LO https://github.com/aws/aws-ofi-nccl/archive/refs/tags/v${AWS_OFI_NCCL_VERSION}.tar.gz
        RUN echo "see https://github.com/NVIDIA/nccl for the build"
        """, "FSDP/Dockerfile": """\
        FROM public.ecr.aws/hpc-cloud/nccl-tests:latest AS base
        RUN pip install -r requirements.txt
        """, "roce/Dockerfile": """\
        FROM ubuntu:22.04
        ENV NCCL_VERSION=2.8.4-1+cuda11.2
        ENV LIB_VERSION=2.8.4-1
        """})
    found = _found(root, "docker/base/Dockerfile")
    assert _codes(found, 3) == {"NPU138"} and _severities(found, 3) == {"info"}
    assert _codes(found, 4) == {"NPU138"}
    assert "NPU138" in _codes(found, 7) and "NPU138" in _codes(found, 11) and "NPU138" in _codes(found, 13)
    assert {sev for ln, code, sev in found if code == "NPU138" and ln in (7, 11, 13)} == {"error"}
    assert not _codes(found, 5) | _codes(found, 14)
    assert "NPU016" in _codes(_found(root, "FSDP/Dockerfile"), 1)
    buildspec = _found(write_tree(tmp_path / "cb", {"buildspec.yaml": """\
        version: 0.2
        env:
          variables:
            CUDA_VERSION: "12.8.1"
            AWS_OFI_NCCL_VERSION: "v1.16.3"
            NCCL_VERSION: "v2.27.7-1"
            GDRCOPY_VERSION: "v2.5.1"
        """}), "buildspec.yaml")
    # a CI env block's versions are markers (tests/test_project_files.py): the Dockerfile's arguments are the pairs
    assert "NPU018" in _codes(buildspec, 4)
    assert not _codes(buildspec, 5) | _codes(buildspec, 6) | _codes(buildspec, 7)
    roce = _found(root, "roce/Dockerfile")
    assert _codes(roce, 2) == {"NPU138"}            # the NCCL release, whatever CUDA its local tag names
    assert not _codes(roce, 3)


def test_cdi_gpu_requests_published_images_and_ray_placeholders(tmp_path):
    root = write_tree(tmp_path, {"compose.cuda-cdi.yaml": """\
        services:
          speaches:
            image: ghcr.io/speaches-ai/speaches:latest-cuda-12.6.3
            build:
              args:
                BASE_IMAGE: ubuntu:24.04
            deploy:
              resources:
                reservations:
                  # https://docs.docker.com/reference/cli/dockerd/#enable-cdi-devices
                  devices:
                    - driver: cdi
                      device_ids:
                        - nvidia.com/gpu=all
        """, "compose.local.yaml": """\
        services:
          app:
            image: zoobot:cuda
            build: .
          web:
            image: ${REGISTRY}/web:cuda
            build: .
        """, "run.sh": """\
        #!/bin/bash
        podman run --rm --device nvidia.com/gpu=all ubuntu ls
        docker run --device=nvidia.com/gpu=0 -it trainer python train.py
        docker run --device /dev/fuse trainer ls
        # podman run --device nvidia.com/gpu=all ubuntu ls
        """, "raycluster.yaml": """\
        spec:
          headGroupSpec:
            rayStartParams:
              num-gpus: "0"
          workerGroupSpecs:
          - groupName: gpu-group
            rayStartParams:
              num-gpus: "PLACEHOLDER_NUM_GPU_PER_NODE"
              metrics-export-port: '8080'
          - groupName: cpu-group
            rayStartParams:
              num-gpus: "PLACEHOLDER_NUM_WORKERS"
        """})
    cdi = _found(root, "compose.cuda-cdi.yaml")
    assert "NPU016" in _codes(cdi, 3)               # published: Compose pulls it first
    assert "NPU017" in _codes(cdi, 14)
    assert not _codes(cdi, 10) | _codes(cdi, 12)
    assert not _found(root, "compose.local.yaml")   # names the build tags its image with
    run = _found(root, "run.sh")
    assert "NPU017" in _codes(run, 2) and "NPU017" in _codes(run, 3)
    assert "NPU017" not in _codes(run, 4) and not _codes(run, 5)
    ray = _found(root, "raycluster.yaml")
    assert _codes(ray, 8) and not _codes(ray, 4) and not _codes(ray, 12)


WHISPER_PYPROJECT = """\
    [project]
    name = "whisper-asr-webservice"
    dependencies = ["fastapi (>=0.115.14)"]

    [project.optional-dependencies]
    cpu = ["torch (==2.7.1)"]
    cuda = ["torch (==2.7.1+cu126)"]

    [[tool.poetry.source]]
    name = "pytorch-cpu"
    url = "https://download.pytorch.org/whl/cpu"
    priority = "explicit"

    [[tool.poetry.source]]
    name = "pytorch-cuda"
    url = "https://download.pytorch.org/whl/cu126"
    priority = "explicit"

    [tool.poetry.dependencies]
    torch = [
        { markers = "extra == 'cpu' and extra != 'cuda'", source = "pytorch-cpu"},
        { markers = "extra == 'cuda' and extra != 'cpu'", source = "pytorch-cuda"},
     ]
    torchvision = { version = "^0.22", source = "pytorch-cuda" }
    numpy = { version = "^2.2" }
    """


def test_poetry_sources_and_extras(tmp_path):
    root = write_tree(tmp_path, {"pyproject.toml": WHISPER_PYPROJECT, "Dockerfile.gpu": """\
        FROM python:3.11-slim
        RUN poetry config virtualenvs.in-project true
        RUN poetry install --extras cuda
        RUN poetry install -E cpu
        # RUN poetry install --extras cuda
        """})
    found = _found(root, "pyproject.toml")
    assert "NPU018" in _codes(found, 22) and _severities(found, 22) == {"warning"}   # for the cuda extra only
    assert "NPU018" in _codes(found, 24) and "error" in _severities(found, 24)
    assert not _codes(found, 21) | _codes(found, 25)
    docker = _found(root, "Dockerfile.gpu")
    assert "NPU023" in _codes(docker, 3)
    assert not _codes(docker, 4) | _codes(docker, 5)


def test_extras_variables_slurm_constraint_and_python_flags(tmp_path):
    root = write_tree(tmp_path, {"Dockerfile": """\
        FROM python:3.11
        RUN if [ "$TARGETARCH" = "arm64" ]; then \\
                OUMI_EXTRAS=""; \\
            else \\
                OUMI_EXTRAS="[gpu]"; \\
            fi && \\
            uv pip install --system "oumi${OUMI_EXTRAS}"
        """, "install.sh": """\
        #!/bin/bash
        EXTRAS_LIST=""
        [ "$GPU" = true ] && EXTRAS_LIST="gpu"
        [ "$DEV" = true ] && EXTRAS_LIST="dev"
        echo 'set EXTRAS_LIST="gpu" for the GPU build'
        pip install "oumi[$EXTRAS_LIST]"
        """, "launcher.sh": """\
        #!/bin/bash
        SBATCH_OUTPUT=$(sbatch \\
          -C gpu \\
          -N ${NODES} \\
          -q ${QOS} \\
          job.sh)
        sbatch -C cpu -N 1 cpu_job.sh
        # sbatch -C gpu job.sh
        """, "comfy-install-linux.sh": """\
        #!/usr/bin/env bash
        python=python3
        if [ "$GPU_TYPE" == "nv" ]; then
            echo "install nvidia torch..."
            $python -s -m pip install torch --index-url https://download.pytorch.org/whl/cu130 --no-cache-dir
        elif [ "$GPU_TYPE" == "amd" ]; then
            $python -s -m pip install --pre torch --index-url https://download.pytorch.org/whl/nightly/rocm7.1
        fi
        python3 -u -m pip install -r requirements.txt
        """})
    assert "NPU023" in _codes(_found(root, "Dockerfile"), 5)
    assert not _codes(_found(root, "Dockerfile"), 3)
    install = _found(root, "install.sh")
    assert "NPU023" in _codes(install, 3)
    assert not _codes(install, 2) | _codes(install, 4) | _codes(install, 5)
    launcher = _found(root, "launcher.sh")
    assert "NPU022" in _codes(launcher, 3)
    assert not _codes(launcher, 7) | _codes(launcher, 8)
    comfy = _found(root, "comfy-install-linux.sh")
    assert "NPU018" in _codes(comfy, 5)
    assert "NPU018" not in _codes(comfy, 7) and not _codes(comfy, 9) and not _codes(comfy, 4)


def _notebook(*cells: str) -> str:
    return json.dumps({"cells": [{"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
                                  "source": c} for c in cells],
                       "metadata": {}, "nbformat": 4, "nbformat_minor": 5})


def test_writefile_config_cells_and_dtype_str(tmp_path):
    (tmp_path / "nanogpt.ipynb").write_text(_notebook(
        "import os\nos.makedirs('/tmp/oumi', exist_ok=True)",
        "%%writefile /tmp/oumi/gpt_train.yaml\n\nmodel:\n  model_name: \"gpt2\"\n  torch_dtype_str: \"bfloat16\"\n"
        "  # torch_dtype_str: \"bfloat16\" on A100s\ntraining:\n  max_steps: 10",
        "%%writefile /tmp/oumi/eval.yaml\nmodel:\n  torch_dtype_str: \"float32\"",
        "!oumi train -c /tmp/oumi/gpt_train.yaml"))
    found = _found(tmp_path, "nanogpt.ipynb")
    assert "NPU212" in _codes(found, 7)
    assert not [f for f in found if f[0] in (8, 12, 13)]
    root = write_tree(tmp_path / "tree", {"configs/infer.yaml": """\
        model:
          model_name: "meta-llama/Llama-3.2-3B-Instruct"
          torch_dtype_str: "bfloat16"
        # torch_dtype_str: "bfloat16"
        """, "configs/cpu.yaml": """\
        model:
          torch_dtype_str: "float32"
        """})
    infer = _found(root, "configs/infer.yaml")
    assert "NPU212" in _codes(infer, 3) and not _codes(infer, 4)
    assert not _found(root, "configs/cpu.yaml")


def test_poetry_extra_markers_read_by_packaging(tmp_path):
    """The extra a Poetry source entry is limited to comes from packaging's marker evaluation, not the line's
    spelling: a marker naming an extra across lines or with double quotes is read, a platform marker that holds on
    Linux is no extra, and an extra the pyproject does not declare lowers nothing."""
    root = write_tree(tmp_path, {"pyproject.toml": """\
        [tool.poetry]
        name = "asr-service"

        [tool.poetry.extras]
        gpu = ["torch"]

        [[tool.poetry.source]]
        name = "torch-cu121"
        url = "https://download.pytorch.org/whl/cu121"
        priority = "explicit"

        [tool.poetry.dependencies]
        torch = [
            { markers = "platform_machine == 'x86_64' and extra == \\"gpu\\"", source = "torch-cu121" },
        ]
        torchaudio = { markers = "sys_platform == 'linux'", source = "torch-cu121" }
        torchvision = { markers = "extra == 'cuda'", source = "torch-cu121" }
        """})
    found = _found(root, "pyproject.toml")
    assert _severities(found, 14) == {"warning"}                # the `gpu` extra only, on x86_64 Linux
    from tests.test_project_t24b import ENGINE
    messages = [f.message for f in ENGINE.analyze_bytes((root / "pyproject.toml").read_bytes(),
                                                        "pyproject.toml").findings if f.line == 14]
    assert any("for the extra `gpu` only" in message for message in messages)
    assert "error" in _severities(found, 16)                    # a platform marker: every Linux install takes it
    assert "error" in _severities(found, 17)                    # `cuda` is no declared extra
