"""g4 (issue 15, session 35; TUNED on the public project splits): commands and settings nested in other files, read
by the same shell reader in their place: exec-form `command:` / `args:` vectors of Kubernetes / Kubeflow / compose
files (`[bash, -c, SCRIPT]` as the script), environment entries that hold a command or a launcher's arguments
(cibuildwheel's `CIBW_BEFORE_BUILD`, `CLI_ARGS`), Makefile recipe lines, shell variables run as a command
(`$cmd`, `${PROFILE_CMD} python ...`), here-documents written to a script or fed to one (`cat > job.slurm <<EOT`,
`sbatch <<EOF`), task runners' tables in pyproject.toml (poethepoet, taskipy, Rye) and a dev container's
`containerEnv` / `remoteEnv`; with the nearest negatives (comments, messages, descriptions, values that are no
command)."""
from __future__ import annotations

import textwrap

from auditor.rules import load_rules
from auditor.static import StaticEngine

_ENGINE = StaticEngine(load_rules())


def _audit(name: str, text: str) -> list[tuple[str, int]]:
    result = _ENGINE.analyze_bytes(textwrap.dedent(text).encode(), name)
    assert result.error is None, result.error
    return sorted({(f.code, f.line) for f in result.findings}, key=lambda k: (k[1], k[0]))


# a Kubeflow PyTorchJob as the training-operator examples write it: the command and args as block lists
PYTORCH_JOB = """\
    apiVersion: kubeflow.org/v1
    kind: PyTorchJob
    metadata:
      name: bert-pretrain
    spec:
      pytorchReplicaSpecs:
        Worker:
          replicas: 2
          template:
            spec:
              containers:
                - name: pytorch
                  image: registry.example.com/bert:2.3
                  command:
                    - torchrun
                    # one process per device
                    - --nproc_per_node=8
                    - pretrain.py
                  args:
                    - --device
                    - cuda
                    - --dist-backend=nccl
                - name: log-shipper
                  image: fluent/fluent-bit:2.2
                  command: ["echo", "CUDA_VISIBLE_DEVICES=0 --device cuda"]
                  args: ["--description", "ships logs of the nvidia gpu workers"]
    """


def test_exec_form_command_and_args_are_one_command():
    assert _audit("k8s/pytorchjob.yaml", PYTORCH_JOB) == [("NPU019", 20), ("NPU122", 22)]


def test_exec_form_flow_lists_and_shell_scripts_in_args():
    assert _audit("k8s/job.yaml", """\
        apiVersion: batch/v1
        kind: Job
        spec:
          template:
            spec:
              containers:
                - name: trainer
                  image: registry.example.com/train:latest
                  command: ["/bin/bash", "-c"]
                  args:
                    - |
                      export NCCL_DEBUG=INFO
                      # pick the first two devices
                      CUDA_VISIBLE_DEVICES=0,1 torchrun --nproc_per_node 2 train.py
                - name: server
                  image: registry.example.com/serve:latest
                  command: ["python", "serve.py", "--device", "cuda"]
        """) == [("NPU121", 12), ("NPU004", 14), ("NPU019", 17)]


def test_compose_exec_form_command():
    assert _audit("docker-compose.yml", """\
        services:
          train:
            image: registry.example.com/train:latest
            command: ["torchrun", "--nproc_per_node", "2", "train.py", "--backend", "nccl"]
          web:
            image: nginx:1.25
            command: ["nginx", "-g", "daemon off;"]
        """) == [("NPU122", 4)]


def test_environment_entries_holding_commands_and_launcher_arguments():
    assert _audit(".github/workflows/wheels.yml", """\
        name: wheels
        on: push
        jobs:
          build:
            runs-on: ubuntu-latest
            steps:
              - uses: pypa/cibuildwheel@v2.20.0
                env:
                  CIBW_BEFORE_ALL: "yum install -y cuda-toolkit-12-4 && nvidia-smi"
                  CIBW_BUILD: "cp311-manylinux_x86_64"
                  CIBW_TEST_COMMAND: >
                    pytest {project}/tests --device cuda
                  BUILD_DESCRIPTION: "wheels for --device cuda hosts"
        """) == [("NPU017", 9), ("NPU018", 9), ("NPU019", 12)]
    assert _audit("docker-compose.yml", """\
        services:
          auto:
            build: ./services/AUTOMATIC1111
            image: sd-auto:78
            environment:
              - CLI_ARGS=--allow-code --medvram --xformers --api
              - NOTE=start with --xformers on nvidia cards
          cpu:
            build: ./services/AUTOMATIC1111
            image: sd-auto:78
            environment:
              CLI_ARGS: "--no-half --precision full --xformers"
              COMMANDLINE_ARGS: --use-cpu all
        """) == [("NPU363", 6), ("NPU363", 12)]


MAKEFILE = """\
    PYTHON ?= python
    CUDA_TARGETS := test_kernels

    .PHONY: train install tests
    # train on the first device (CUDA_VISIBLE_DEVICES=0)
    train:
    \t@echo "training on CUDA device 0 with --device cuda"
    \tCUDA_VISIBLE_DEVICES=0 $(PYTHON) train.py --device cuda
    install:
    \t-pip install torch --index-url https://download.pytorch.org/whl/cu121
    tests:
    \tfor exe in $(CUDA_TARGETS); do ./$$exe || exit 1; done
    \tfor f in $$(ls configs); do \\
    \t  NCCL_DEBUG=INFO torchrun --nproc_per_node 2 run.py $$f; \\
    \tdone
    """


def test_makefile_recipes_are_shell_commands():
    found = _audit("Makefile", MAKEFILE)
    assert ("NPU004", 8) in found and ("NPU019", 8) in found        # env prefix and option of a recipe line
    assert ("NPU018", 10) in found                                   # CUDA wheel index, behind make's `-` prefix
    assert ("NPU121", 14) in found                                   # a continued recipe line
    assert not [f for f in found if f[1] in (5, 7, 12)]              # a comment, an echo, a make variable


def test_shell_variables_run_as_commands():
    assert _audit("submit.sh", """\
        #!/bin/bash
        NSYS_ARGS="--trace=cuda,nvtx"
        export PROFILE_CMD="nsys profile $NSYS_ARGS -o profile"
        cmd="CUDA_VISIBLE_DEVICES=0 python train.py --enable_amp"
        msg="set CUDA_VISIBLE_DEVICES=0 to pick a device"
        echo "$msg"
        srun bash -c "source export_DDP_vars.sh && $cmd"
        ${PROFILE_CMD} python train_mp.py
        """) == [("NPU017", 3), ("NPU004", 4)]


def test_here_documents_written_to_scripts_or_fed_to_a_scheduler():
    assert _audit("launch.sh", """\
        #!/bin/bash
        for i in 0 1; do
        cat > run_${i}.sh <<EOF
        export NCCL_DEBUG=INFO
        CUDA_VISIBLE_DEVICES=$i python train.py
        EOF
        done
        sbatch <<EOT
        #!/bin/bash
        #SBATCH --gres=gpu:4
        srun torchrun --nproc_per_node 4 train.py --backend nccl
        EOT
        cat > README.txt <<EOF
        Set CUDA_VISIBLE_DEVICES=0 before you run python train.py
        EOF
        cat > notes.md <<EOF
        export NCCL_DEBUG=INFO is what we used
        EOF
        """) == [("NPU121", 4), ("NPU004", 5), ("NPU028", 10), ("NPU122", 11)]


def test_pyproject_task_runner_tables():
    assert _audit("pyproject.toml", """\
        [project]
        name = "trainer"
        version = "0.1.0"
        description = "runs CUDA_VISIBLE_DEVICES=0 python train.py --device cuda"

        [tool.poe.tasks]
        train = "CUDA_VISIBLE_DEVICES=0 python train.py --device cuda"
        lint = "ruff check ."
        [tool.poe.tasks.dist]
        cmd = "torchrun --nproc_per_node 8 train.py --backend nccl"
        help = "uses --backend nccl"

        [tool.taskipy.tasks]
        gpu = "nvidia-smi"
        """) == [("NPU004", 7), ("NPU019", 7), ("NPU122", 10), ("NPU017", 14)]


def test_devcontainer_environment_maps():
    assert _audit(".devcontainer/devcontainer.json", """\
        {
          // the CUDA_VISIBLE_DEVICES of the host are passed through
          "name": "trainer",
          "image": "mcr.microsoft.com/devcontainers/python:3.11",
          "containerEnv": {"CUDA_VISIBLE_DEVICES": "0"},
          "remoteEnv": {"NCCL_DEBUG": "INFO", "LOCAL_WORKSPACE_FOLDER": "${localWorkspaceFolder}"}
        }
        """) == [("NPU004", 5), ("NPU121", 6)]


def test_skypilot_setup_script():
    assert _audit("sky/train.yaml", """\
        resources:
          accelerators: A100:8
        setup: |
          nvidia-smi
          pip install -r requirements.txt
        run: |
          NCCL_DEBUG=INFO torchrun --nproc_per_node=8 train.py
        """) == [("NPU028", 2), ("NPU017", 4), ("NPU121", 7)]
    # a `setup:` key of another tool's config is no script
    assert _audit("configs/train.yaml", """\
        setup: nvidia-smi
        run: baseline
        """) == []


def test_makefile_assignments_inside_conditionals_are_no_commands():
    # koboldcpp's Makefile: tab-indented assignments under `ifdef` are make's, and `$(CUDA_DOCKER_ARCH)` is a make
    # variable the recipe's shell never reads
    found = _audit("Makefile", """\
        ifdef LLAMA_CUBLAS
        \tCUBLAS_FLAGS = -DGGML_USE_CUBLAS -I/usr/local/cuda/include
        \tNVCCFLAGS += -Wno-deprecated-gpu-targets -arch=$(CUDA_DOCKER_ARCH)
        endif
        ggml.o: ggml.c
        \t$(CC) $(CFLAGS) $(CUBLAS_FLAGS) -c $< -o $@
        """)
    assert not [f for f in found if f[0] == "NPU004" and f[1] in (3, 6)]
