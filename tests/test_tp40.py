"""tp40 (session 40, project test89): GPU families of CI build matrices, HPC job scripts and Jetson installers that
the project-file readers missed: a YAML build matrix held in a shell variable of a CI step (RAPIDS' compute-matrix
`export MATRIX="..."` with `CUDA_VER` entries), LUMI's `-g` GPU partitions, `srun --gpus-per-node $ngpu`, launches
held in a `cmd="python train.py ..."` variable or run through `singularity run $SIF bash -c '...'` / `shifter ...
bash -c "..."` under srun (NCCL launch, decision 33), Jetson installer configs (`ALLOWED_L4T_VERSIONS:`,
`PACKAGES: - nvidia-jetpack`, daemon.json's nvidia runtime in a `DAEMON: |` block), a CUDA image written to
`$GITHUB_OUTPUT`; and two quiet shapes: GitHub issue forms (prose) and an explicit Poetry source no dependency names.
Shaped on shared-workflows' compute-matrix.yaml, LUMI-AI-Guide's run_ddp_torchrun.sh, nersc-dl-wandb's run.sh,
jetson-examples' config.yaml, cml's images.yml, private-gpt's bug.yml and text-embeddings-inference's pyproject.toml,
each with controls (comments, messages, CPU partitions, single-process launches, ports already made)."""
from __future__ import annotations

from tests.static_snippets import write_tree
from tests.test_project_t24b import _found


def _codes(found, line):
    return {code for ln, code, _sev in found if ln == line}


def _severities(found, line):
    return {sev for ln, _code, sev in found if ln == line}


COMPUTE_MATRIX = """\
    name: compute-matrix
    on:
      workflow_call:
    jobs:
      compute-matrix:
        runs-on: ubuntu-latest
        steps:
          - name: Prepare Build Matrix
            run: |
              # [ARCH, PY_VER, CUDA_VER, LINUX_VER, GPU, DRIVER, DEPENDENCIES]
              export MATRIX="
              conda-cpp-build:
                pull-request: &conda_cpp_build
                  # - { ARCH: 'amd64', PY_VER: '3.10', CUDA_VER: '11.8.0', LINUX_VER: 'rockylinux8' }
                  - { ARCH: 'amd64', PY_VER: '3.11', CUDA_VER: '12.9.2', LINUX_VER: 'rockylinux8' }
                  - { ARCH: 'arm64', PY_VER: '3.11', CUDA_VER: '13.3.0', LINUX_VER: 'rockylinux8', GPU: 'l4' }
                nightly: *conda_cpp_build
              "
              echo "matrix=$(yq -n -o json 'env(MATRIX)' | jq -c '.[\\"${BUILD_TYPE}\\"]')" >> "${GITHUB_OUTPUT}"
              MESSAGE="
              Build the CUDA matrix
              for every CUDA_VER: see the docs
              "
              echo "$MESSAGE"
"""


def test_a_yaml_build_matrix_held_in_a_shell_variable(tmp_path):
    root = write_tree(tmp_path, {".github/workflows/compute-matrix.yaml": COMPUTE_MATRIX})
    found = _found(root, ".github/workflows/compute-matrix.yaml")
    assert _codes(found, 15) == {"NPU018"} and _codes(found, 16) == {"NPU018"}
    assert _severities(found, 15) == {"info"}          # a CI matrix entry: the version a build is made for
    assert not _codes(found, 14)                        # the commented-out entry
    assert not _codes(found, 10)                        # the comment naming CUDA_VER
    assert not any(17 <= ln <= 24 for ln, _c, _s in found)    # the alias, a message string, the echo


LUMI_JOB = """\
    #!/bin/bash
    #SBATCH --account=project_465000000
    #SBATCH --partition=standard-g
    #SBATCH --nodes=1
    #SBATCH --gpus-per-node=8
    # #SBATCH --partition=small-g
    SIF=/appl/local/containers/lumi-pytorch-rocm.sif
    srun singularity run $SIF bash -c 'python -m torch.distributed.run --standalone --nproc_per_node=8 ddp_vit.py'
    echo "run with --partition=dev-g for tests"
"""

LUMI_CPU_JOB = """\
    #!/bin/bash
    #SBATCH --partition=standard
    #SBATCH --nodes=1
    srun singularity exec -B /scratch $SIF python preprocess.py
"""

DDP_SCRIPT = """\
    import torch.distributed as dist


    def main():
        dist.init_process_group(backend="nccl")


    if __name__ == "__main__":
        main()
"""

PREPROCESS = """\
    import torch.distributed as dist

    dist.init_process_group(backend="gloo")
"""


def test_lumi_gpu_partitions_and_a_launch_inside_a_container_under_srun(tmp_path):
    root = write_tree(tmp_path, {"jobs/run.sh": LUMI_JOB, "jobs/ddp_vit.py": DDP_SCRIPT,
                                 "jobs/cpu.sh": LUMI_CPU_JOB, "jobs/preprocess.py": PREPROCESS})
    found = _found(root, "jobs/run.sh")
    assert _codes(found, 3) == {"NPU028"}               # LUMI-G's `standard-g`
    assert _codes(found, 8) == {"NPU143"}               # torch.distributed.run of a script that hard-codes NCCL
    assert not _codes(found, 6) and not _codes(found, 9)      # a commented request, a message
    cpu = _found(root, "jobs/cpu.sh")
    assert not _codes(cpu, 2)                           # LUMI-C's `standard` partition
    assert not _codes(cpu, 4)                           # a gloo script in the container: nothing CUDA


NERSC_RUN = """\
    #!/bin/bash
    image=nersc/pytorch:ngc-22.09-v0
    ngpu=4
    # cmd="python old_train.py"
    cmd="python train.py --yaml_config=./config/default.yaml --config=base"
    echo "cmd=python train.py"
    srun -l -n $ngpu --cpus-per-task=32 --gpus-per-node $ngpu shifter --image=${image} bash -c "source export_DDP_vars.sh && $cmd"
"""

NERSC_SINGLE = """\
    #!/bin/bash
    cmd="python train.py --config=base"
    bash -c "$cmd"
"""

TRAIN = """\
    from utils.trainer import Trainer

    if __name__ == "__main__":
        Trainer().fit()
"""

TRAINER = """\
    import torch.distributed as dist


    class Trainer:
        def fit(self):
            dist.init_process_group(backend='nccl', init_method='env://')
"""


def test_a_launch_held_in_a_variable_that_srun_runs_and_an_expanded_gpu_count(tmp_path):
    root = write_tree(tmp_path, {"run.sh": NERSC_RUN, "single.sh": NERSC_SINGLE, "train.py": TRAIN,
                                 "utils/__init__.py": "", "utils/trainer.py": TRAINER})
    found = _found(root, "run.sh")
    assert _codes(found, 5) == {"NPU143"}               # the line that names the script (decision 33)
    assert "NPU022" in _codes(found, 7)                 # `--gpus-per-node $ngpu`
    assert not _codes(found, 4) and not _codes(found, 6)
    single = _found(root, "single.sh")
    assert "NPU143" not in _codes(single, 2)            # one process: the distributed branch may never run


JETSON_CONFIG = """\
    # The tested JetPack versions.
    ALLOWED_L4T_VERSIONS:
      - 35.3.1
      - 36.3.0
    REQUIRED_DISK_SPACE: 25  # in GB
    PACKAGES:
      - nvidia-jetpack
      - curl
    DOCKER:
      ENABLE: true
      DAEMON: |
        {
          "default-runtime": "nvidia",
          "runtimes": {
            "nvidia": {
              "path": "nvidia-container-runtime",
              "runtimeArgs": []
            }
          },
          "storage-driver": "overlay2"
        }
"""

PLAIN_CONFIG = """\
    PYTHON_VERSIONS:
      - "3.10"
    PACKAGES:
      - curl
      - git
    DAEMON: |
      {
        "storage-driver": "overlay2",
        "runtimes": {
          "runc": {"path": "runc"}
        }
      }
"""


def test_jetson_installer_configs(tmp_path):
    root = write_tree(tmp_path, {"scripts/app/config.yaml": JETSON_CONFIG, "scripts/cpu/config.yaml": PLAIN_CONFIG})
    found = _found(root, "scripts/app/config.yaml")
    assert _codes(found, 2) == {"NPU940"} and _severities(found, 2) == {"info"}
    assert not _codes(found, 3) and not _codes(found, 4)      # the releases: one gate, on its key
    assert _codes(found, 7) == {"NPU018"}               # JetPack's apt meta-package
    assert not _codes(found, 8)
    assert _codes(found, 13) == {"NPU017"}              # "default-runtime": "nvidia"
    assert _codes(found, 15) == {"NPU017"}              # the runtimes' nvidia entry
    assert not _codes(found, 16) and not _codes(found, 1)
    assert _found(root, "scripts/cpu/config.yaml") == []


CML_IMAGES = """\
    name: images
    on: push
    jobs:
      build:
        runs-on: ubuntu-latest
        strategy:
          matrix:
            gpu: [false, true]
        steps:
          - id: meta
            run: |
              if [[ ${{ matrix.gpu }} == true ]]; then
                echo base=nvidia/cuda:${{ matrix.cuda }}-cudnn${{ matrix.cudnn }}-runtime-ubuntu${{ matrix.ubuntu }} >> $GITHUB_OUTPUT
              else
                echo base=ubuntu:${{ matrix.ubuntu }} >> $GITHUB_OUTPUT
              fi
              echo "Building on nvidia/cuda:12.1.0-runtime-ubuntu22.04"
"""


def test_a_cuda_image_written_to_a_step_output(tmp_path):
    root = write_tree(tmp_path, {".github/workflows/images.yml": CML_IMAGES})
    found = _found(root, ".github/workflows/images.yml")
    assert _codes(found, 13) == {"NPU016"}
    assert not _codes(found, 15) and not _codes(found, 17)   # the CPU base, a message


ISSUE_FORM = """\
    name: Bug
    description: Report a bug
    body:
      - type: checkboxes
        id: nvidia-setup-checklist
        attributes:
          label: NVIDIA GPU Setup Checklist
          options:
            - label: Docker users - run `sudo docker run --rm --gpus all nvidia/cuda:11.0.3-base-ubuntu20.04 nvidia-smi`
            - label: Check that `torch.cuda.is_available()` returns True
"""

POETRY = """\
    [tool.poetry]
    name = "text-embeddings-server"
    version = "0.1.0"

    [tool.poetry.dependencies]
    python = ">=3.9,<3.13"
    torch = { version = "^2.4.0", source = "pytorch-cpu" }

    [[tool.poetry.source]]
    name = "pytorch-gpu-src"
    url = "https://download.pytorch.org/whl/cu118"
    priority = "explicit"

    [[tool.poetry.source]]
    name = "pytorch-cpu"
    url = "https://download.pytorch.org/whl/cpu"
    priority = "explicit"
"""

POETRY_USED = POETRY.replace('source = "pytorch-cpu"', 'source = "pytorch-gpu-src"')


def test_issue_forms_and_an_explicit_source_no_dependency_names_are_quiet(tmp_path):
    root = write_tree(tmp_path, {".github/ISSUE_TEMPLATE/bug.yml": ISSUE_FORM, "a/pyproject.toml": POETRY,
                                 "b/pyproject.toml": POETRY_USED})
    assert _found(root, ".github/ISSUE_TEMPLATE/bug.yml") == []
    assert not _codes(_found(root, "a/pyproject.toml"), 11)
    assert "NPU018" in _codes(_found(root, "b/pyproject.toml"), 11)    # named by torch's source: the CUDA index
