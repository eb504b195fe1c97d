"""Project-file families behind the misses of the first run on split tuned_t16d (issue 15, t16d: a fresh tuning
sample of ten repositories; tuned on that split): each test is a realistic snippet, written after the repository's
own file, with the lines that must be found and the lines that must not."""
from __future__ import annotations

from auditor.rules import load_rules
from auditor.static import StaticEngine
from static_snippets import line_codes

ENGINE = StaticEngine(load_rules())


def found(name: str, text: str) -> list[tuple[int, str]]:
    return line_codes(ENGINE, name, text)


def test_ci_matrix_value_that_runs_on_reads_is_a_runner_label():
    # diffusers' nightly workflow (copied into BrushNet): the job runs on the runner its matrix entry names
    workflow = """\
        name: Nightly tests on main
        on:
          schedule:
            - cron: "0 0 * * *"
        jobs:
          run_nightly_tests:
            strategy:
              matrix:
                config:
                  - name: Nightly PyTorch CUDA tests on Ubuntu
                    runner: docker-gpu
                    report: torch_cuda
                  - name: Nightly Flax TPU tests on Ubuntu
                    runner: docker-tpu
                    report: flax_tpu
            runs-on: ${{ matrix.config.runner }}
            steps:
              - name: Checkout
                uses: actions/checkout@v3
          cpu_tests:
            strategy:
              matrix:
                include:
                  - runner: ubuntu-22.04
                  - runner: self-hosted-gpu
            runs-on: [self-hosted, "${{ matrix.runner }}"]
            steps:
              - run: python -m pytest tests/
        """
    got = found(".github/workflows/nightly_tests.yml", workflow)
    assert (11, "NPU028") in got and (25, "NPU028") in got
    # the TPU runner, the hosted runner, names and report files are not GPU requests
    assert not [f for f in got if f[0] in (10, 12, 13, 14, 15, 24)]


def test_a_runner_named_matrix_key_that_no_job_runs_on_is_not_a_request():
    workflow = """\
        jobs:
          build:
            strategy:
              matrix:
                runner: [docker-gpu]
            runs-on: ubuntu-latest
            steps:
              - run: echo "${{ matrix.runner }}"
        """
    assert not [f for f in found(".github/workflows/build.yml", workflow) if f[1] == "NPU028"]


def test_gaussian_splatting_rasterizer_derivatives_from_git():
    # EasyVolcap requirements-devel.txt: 3DGS rasterizer forks and derivatives, each a CUDAExtension build
    requirements = """\
        simple_knn @ git+https://gitlab.inria.fr/bkerbl/simple-knn
        diff_gauss @ git+https://github.com/dendenxu/diff-gaussian-rasterization
        diff_gaussian_rasterization @ git+https://github.com/graphdeco-inria/diff-gaussian-rasterization
        # diff_gauss @ git+https://github.com/slothfulxtx/diff-gaussian-rasterization
        diff_point_rasterization @ git+https://github.com/dendenxu/diff-point-rasterization # 4k4d's points
        diff_mip_rasterization @ git+https://github.com/dendenxu/diff-mip-rasterization
        diff-surfel-rasterization==0.0.1
        torchmcubes @ git+https://github.com/tatsy/torchmcubes
        pytorch_msssim
        """
    got = found("requirements-devel.txt", requirements)
    for line in (1, 2, 3, 5, 6, 7):
        assert (line, "NPU440") in got, line
    assert not [f for f in got if f[0] in (4, 8, 9)]


def test_cuda_image_apt_list_and_nccl_config_in_a_dockerfile():
    # Amphion's and Open-Reasoner-Zero's Dockerfiles
    dockerfile = """\
        FROM nvcr.io/nvidia/pytorch:24.02-py3
        RUN sed -i 's/archive.ubuntu.com/mirrors.cloud.tencent.com/g' /etc/apt/sources.list \\
            && rm /etc/apt/sources.list.d/cuda.list \\
            && apt-get update
        # set nccl.conf and nccl_env
        COPY nccl.conf /etc/nccl.conf
        COPY parameter_offload.py /usr/local/lib/python3.10/dist-packages/deepspeed/runtime/zero/parameter_offload.py
        RUN echo "see /etc/nccl.conf" && ls /etc/apt/sources.list.d/
        """
    got = found("docker/Dockerfile", dockerfile)
    assert (3, "NPU085") in got and (6, "NPU142") in got
    assert not [f for f in got if f[0] in (2, 4, 5, 7, 8)]


def test_written_nvidia_apt_list_is_information_and_a_shell_nccl_config_is_read():
    script = """\
        #!/bin/bash
        curl -s -L https://nvidia.github.io/libnvidia-container/$distribution/libnvidia-container.list | \\
            sudo tee /etc/apt/sources.list.d/nvidia-container-toolkit.list
        sudo rm -f /etc/apt/sources.list.d/cuda*.list
        echo "NCCL_SOCKET_IFNAME=eth0" >> ~/.nccl.conf
        # cp nccl.conf /etc/nccl.conf
        """
    result = ENGINE.analyze_bytes(__import__("textwrap").dedent(script).encode(), "setup_docker.sh")
    by_line = {(f.line, f.code): f.severity for f in result.findings}
    assert by_line.get((3, "NPU085")) == "info"
    assert (4, "NPU085") not in by_line      # `rm -f`: removes nothing where absent (lead decision 65, tp47a)
    assert (5, "NPU142") in by_line
    assert not [k for k in by_line if k[0] == 6]
