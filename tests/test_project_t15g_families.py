"""Project-file families behind the misses and false hits of the first run on split test9 (issue 15, t15g; tuned on
test9 from then on): a quoted program path before `pip` / `conda` (`"$HOME/conda/bin/pip" install ...`), the CUDA
version as a build parameter of a shell build script (`CUDA_VERSION=12.6`, `--build-arg CUDA_VERSION=...`) and of a
Dockerfile's environment (`ENV CUDA_VERSION=${CUDA_VERSION}`). Each test is a realistic file with the
lines that must be found and the lines that must not (none of them is copied from the split's trees)."""
from __future__ import annotations

import json
import textwrap

from auditor.rules import load_rules
from auditor.static import StaticEngine
from static_snippets import line_codes

ENGINE = StaticEngine(load_rules())


def found(name: str, text: str) -> list[tuple[int, str]]:
    return line_codes(ENGINE, name, text)


def findings(name: str, text: str) -> dict[int, list]:
    result = ENGINE.analyze_bytes(textwrap.dedent(text).encode(), name)
    by_line: dict[int, list] = {}
    for f in result.findings:
        by_line.setdefault(f.line, []).append(f)
    return by_line


def test_quoted_program_path_before_pip_and_conda():
    script = """\
        #!/usr/bin/env bash
        set -euo pipefail
        CONDA_HOME="${CONDA_HOME:-$HOME/miniforge3}"
        "$CONDA_HOME/bin/conda" install -y python=3.11 ffmpeg
        "$CONDA_HOME/bin/conda" install -y -c nvidia cuda-toolkit=12.4
        "${CONDA_HOME}/bin/pip" install torch torchaudio --index-url https://download.pytorch.org/whl/cu124
        "$CONDA_HOME/bin/pip" install xformers --no-deps
        "$CONDA_HOME/bin/pip" install -r requirements.txt
        "$CONDA_HOME/bin/python" -c "print('ready')"
        """
    got = found("scripts/setup_env.sh", script)
    assert (5, "NPU018") in got and (6, "NPU018") in got and (6, "NPU011") in got
    assert {c for ln, c in got if ln == 7}, got
    assert not [c for ln, c in got if ln in (1, 2, 3, 4, 8, 9)]


def test_cuda_version_as_a_build_parameter_of_a_build_script():
    script = """\
        #!/bin/bash
        CUDA_VERSION=12.4
        PYTHON_VERSION=3.11
        TAG=latest
        while [[ $# -gt 0 ]]; do
            case "$1" in
            --cuda) CUDA_VERSION="$2"; shift 2 ;;
            --cu121) CUDA_VERSION=12.1; shift ;;
            *) echo "unknown option $1 (try --cuda 12.4)"; exit 1 ;;
            esac
        done
        NVCC_VERSION=$(nvcc --version | sed -n 's/.*release \\([0-9.]*\\).*/\\1/p')
        docker build \\
            --build-arg CUDA_VERSION=$CUDA_VERSION \\
            --build-arg PYTHON_VERSION=$PYTHON_VERSION \\
            -t myorg/trainer:$TAG .
        """
    got = findings("docker/build.sh", script)
    assert [f.code for f in got[2]] == ["NPU018"] and got[2][0].severity == "info"
    assert [f.code for f in got[8]] == ["NPU018"] and [f.code for f in got[14]] == ["NPU018"]
    assert [f.code for f in got[7]] == ["NPU018"]     # the version the caller chose, passed on
    assert all(f.severity == "info" for ln in (7, 8, 14) for f in got[ln])
    # (line 12 runs nvcc: the compiler's own finding, not a build parameter)
    assert "NPU018" not in [f.code for f in got.get(12, [])]
    assert not [ln for ln in got if ln in (1, 3, 4, 5, 6, 9, 13, 15, 16)], sorted(got)


def test_cuda_version_passed_to_the_image_environment():
    dockerfile = """\
        ARG CUDA_VERSION=12.4
        FROM myorg/torch-base:cu${CUDA_VERSION}-runtime
        ARG CUDA_VERSION=12.4
        ARG PYTHON_VERSION=3.11
        ENV CUDA_VERSION=${CUDA_VERSION}
        ENV PYTHON_VERSION=${PYTHON_VERSION}
        ENV APP_HOME=/workspace
        WORKDIR ${APP_HOME}
        """
    got = findings("Dockerfile", dockerfile)
    assert [f.code for f in got[5]] == ["NPU018"] and got[5][0].severity == "info"
    assert not [ln for ln in got if ln in (4, 6, 7, 8)], sorted(got)


ONE_CLICK_ENV = """\
    #!/bin/bash
    cd "$(dirname "${BASH_SOURCE[0]}")"
    INSTALL_DIR="$(pwd)/installer_files"
    INSTALL_ENV_DIR="$INSTALL_DIR/env"
    # environment isolation
    export PYTHONNOUSERSITE=1
    export CUDA_PATH="$INSTALL_ENV_DIR"
    export CUDA_HOME="$CUDA_PATH"
    "$INSTALL_ENV_DIR/bin/pip" install torch==2.4.1
    source "$INSTALL_DIR/conda/etc/profile.d/conda.sh"
    conda activate "$INSTALL_ENV_DIR"
    python server.py "$@"
    """


def test_macos_script_of_a_one_click_installer_has_no_cuda_findings():
    for name in ("start_macos.sh", "installer/cmd-osx.sh", "scripts/macos/env.sh", "run_mac.sh"):
        assert found(name, ONE_CLICK_ENV) == [], name
    linux = found("start_linux.sh", ONE_CLICK_ENV)      # the same lines for Linux keep their findings
    assert (7, "NPU004") in linux and (8, "NPU004") in linux and (9, "NPU011") in linux
    assert found("machine_setup.sh", ONE_CLICK_ENV) == linux   # `mac` only as a whole word of the name


def _notebook(*cells: str) -> bytes:
    return json.dumps({
        "cells": [{"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [],
                   "source": textwrap.dedent(c).splitlines(keepends=True)} for c in cells],
        "metadata": {}, "nbformat": 4, "nbformat_minor": 5}).encode()


def test_installer_cuda_build_choice_in_a_script():
    script = """\
        #!/usr/bin/env bash
        set -e
        CU_TAG="CU${CUDA_VERSION//./}"
        bash install.sh --device "CU${CUDA_VERSION//./}" --source ModelScope
        bash install.sh --device CU128 --source HF --download-uvr5
        bash install.sh --device CPU --source HF
        bash install.sh --device MPS
        python tools/download_models.py --source HF --all
        """
    got = found("docker/install_wrapper.sh", script)
    assert (4, "NPU018") in got and (5, "NPU018") in got
    assert not [c for ln, c in got if ln in (1, 2, 3, 6, 7, 8)], got


def test_colab_cell_that_writes_a_setup_script():
    data = _notebook(
        """\
        %%writefile /content/setup.sh
        set -e
        cd /content
        git clone https://github.com/example-org/voice-clone.git
        cd voice-clone
        conda create -n vc python=3.10 -y
        source activate vc
        pip install ipykernel
        bash install.sh --device CU126 --source HF
        echo "installed with --device CU126"
        """,
        """\
        %%writefile notes.txt
        bash install.sh --device CU126 is what the setup cell runs
        """,
        "!cd /content && bash setup.sh\n",
    )
    result = ENGINE.analyze_bytes(data, "colab/Colab-Setup.ipynb")
    got = {(f.line, f.code) for f in result.findings}
    assert (9, "NPU018") in got
    assert not [ln for ln, _ in got if ln in (1, 2, 3, 4, 5, 7, 8, 10, 11, 12, 13)], sorted(got)


def test_prebuilt_cuda_wheels_with_a_marker_right_after_the_url():
    requirements = """\
        gradio==4.44.1
        # CUDA wheels
        https://example.org/dl/v0.50.0/llama_cpp_binaries-0.50.0+cu124-py3-none-linux_x86_64.whl; platform_machine == "x86_64"
        https://example.org/dl/v0.50.0/llama_cpp_binaries-0.50.0+cu124-py3-none-win_amd64.whl; platform_system == "Windows"
        https://example.org/dl/v0.50.0/llama_cpp_binaries-0.50.0+cpuavx2-py3-none-linux_x86_64.whl; platform_system == "Linux"
        https://github.com/example-org/tools/releases/download/v1.0/fasttok-1.0-py3-none-any.whl; python_version >= "3.10"
        """
    got = found("requirements/portable/requirements_cuda124.txt", requirements)
    assert (3, "NPU440") in got and (4, "NPU440") in got
    assert not [c for ln, c in got if ln in (1, 2, 5, 6)], got


def test_kubernetes_pod_placed_on_gpu_nodes():
    manifest = """\
        apiVersion: apps/v1
        kind: DaemonSet
        metadata:
          name: selfplay-workers
        spec:
          template:
            spec:
              nodeSelector:
                cloud.google.com/gke-accelerator: nvidia-tesla-v100
                kubernetes.io/os: linux
              affinity:
                nodeAffinity:
                  requiredDuringSchedulingIgnoredDuringExecution:
                    nodeSelectorTerms:
                    - matchExpressions:
                      - key: cloud.google.com/gke-accelerator
                        operator: Exists
                      - key: cloud.google.com/gke-nodepool
                        operator: In
                        values: ["selfplay"]
              tolerations:
              - key: "nvidia.com/gpu"
                effect: "NoSchedule"
                operator: "Exists"
              - key: "dedicated"
                operator: "Equal"
                value: "selfplay"
              containers:
              - name: worker
                image: gcr.io/example/selfplay:latest
        """
    got = found("cluster/selfplay/workers-daemonset.yaml", manifest)
    assert (9, "NPU028") in got and (16, "NPU028") in got and (22, "NPU028") in got
    assert not [c for ln, c in got if ln in (10, 18, 19, 20, 25, 26, 27, 30)], got


def test_lines_echoed_into_a_shell_rc_file_in_a_chain():
    dockerfile = """\
        FROM ubuntu:22.04
        RUN echo "export CUDA_HOME=/usr/local/cuda" >> /etc/profile.d/cuda.sh \\
            && echo "export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$LD_LIBRARY_PATH" >> /etc/profile.d/cuda.sh \\
            && echo "installed into /usr/local/cuda"
        RUN echo "export PATH=/opt/tools/bin:$PATH" >> /etc/bash.bashrc && echo "done" >> /tmp/build.log
        """
    got = found("docker/Dockerfile", dockerfile)
    # pd46: line 2's echoed export is read as CUDA_HOME set (NPU004, info), which says the toolkit path already
    assert (2, "NPU004") in got and (3, "NPU027") in got
    assert not [c for ln, c in got if ln in (1, 4, 5)], got
