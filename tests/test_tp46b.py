"""tp46b (session 46, project test126): families the project-file readers missed on session 45's blind project split
test126. Recall: Azure Resource Manager templates (NV VM sizes as a parameter's default and allowed values, the NVIDIA
GPU driver extension) and Packer JSON templates (g4dn instances, Compute Engine accelerator paths), conda-forge's CUDA
cross-compilation packages and `cccl`, `rapids`, Unreal Engine's `SDL_HINT_CUDA_DEVICE` (NPU973, also in a `docker
run` held in a variable), Ansible roles named for the NVIDIA driver and container toolkit, CI actions setting up NVIDIA
GPUs, Kueue GPU quotas in a manifest fed to `kubectl apply -f -`, `NV_CUDA_*` build arguments, UCX's CUDA release and
RPMs, a CUDA image written to `$GITHUB_ENV` from the workflow's `env:`, `sed` rewrites of a torch pin, `tritonserver`
paths held in variables, XGBoost's `tree_method="gpu_hist"` (NPU972), Ray Train's `ScalingConfig(use_gpu=True)`.
Quiet: workflow / job / step display names, a project's references to its own extras, `{"nvidia.com/gpu": 0}`.
Shaped on AirSim, determined-ai's environments, scdownstream, rapids_singlecell, codeflare-sdk, nebari-docker-images,
distributed-workloads, llm-perf-bench, vllm_backend, pytriton, RAPIDS deployment and docker-pytorch; each with
controls (comments, messages, CPU values, other sizes, switches off)."""
from __future__ import annotations

from tests.static_snippets import audit_file, codes_of_line


ARM_TEMPLATE = """\
{
    "$schema": "https://schema.management.azure.com/schemas/2019-04-01/deploymentTemplate.json#",
    "contentVersion": "1.0.0.0",
    "parameters": {
        "VmSize": {
            "type": "string",
            "metadata": {
                "description": "Size of the VM (NV-series installs NVIDIA GPU drivers by default)."
            },
            "defaultValue": "Standard_NV6",
            "allowedValues": [
                "Standard_NV6",
                "Standard_NV12",
                "Standard_D4s_v3"
            ]
        },
        "VmName": {"type": "string", "defaultValue": "simvm"}
    },
    "resources": [
        {
            "type": "Microsoft.Compute/virtualMachines",
            "name": "[parameters('VmName')]",
            "properties": {
                "hardwareProfile": {"vmSize": "Standard_NC6s_v3"}
            }
        },
        {
            "name": "[concat(parameters('VmName'),'/GPUDrivers')]",
            "type": "Microsoft.Compute/virtualMachines/extensions",
            "properties": {
                "publisher": "Microsoft.HpcCompute",
                "type": "NvidiaGpuDriverLinux",
                "typeHandlerVersion": "1.6"
            }
        },
        {
            "name": "[concat(parameters('VmName'),'/Monitor')]",
            "type": "Microsoft.Compute/virtualMachines/extensions",
            "properties": {"publisher": "Microsoft.Azure.Monitor", "type": "AzureMonitorLinuxAgent"}
        }
    ]
}
"""

# the same keys in a JSON that is no ARM template (no `$schema`): a project's own settings
NOT_ARM = """\
{
    "parameters": {"VmSize": {"defaultValue": "Standard_NV6"}}
}
"""


def test_arm_template_vm_sizes_and_driver_extension(tmp_path):
    found = audit_file(tmp_path, "azure/vm-arm-template.json", ARM_TEMPLATE)
    for line in (10, 12, 13):                     # the parameter's default and its NV allowed values
        assert codes_of_line(found, line) == {"NPU028"}, line
    assert codes_of_line(found, 24) == {"NPU028"}        # hardwareProfile.vmSize
    assert codes_of_line(found, 32) == {"NPU074"}        # the NVIDIA GPU driver extension
    # the description, a D-series size, the VM's name, another extension: quiet
    for line in (8, 14, 17, 20, 38, 40):
        assert not codes_of_line(found, line), line
    assert not audit_file(tmp_path / "other", "azuredeploy.json", NOT_ARM)


PACKER_TEMPLATE = """\
{
  "variables": {"image_suffix": ""},
  "builders": [
    {
      "type": "amazon-ebs",
      "region": "us-west-2",
      "instance_type": "g4dn.xlarge",
      "ssh_username": "ubuntu"
    },
    {
      "type": "amazon-ebs",
      "name": "cpu-agent",
      "instance_type": "t3.large"
    },
    {
      "type": "googlecompute",
      "zone": "us-west1-b",
      "machine_type": "n1-standard-1",
      "accelerator_type": "zones/us-west1-b/acceleratorTypes/nvidia-tesla-t4",
      "accelerator_count": 1
    }
  ],
  "provisioners": [{"type": "ansible", "playbook_file": "./agent-playbook.yml"}]
}
"""


def test_packer_json_instance_and_accelerator_types(tmp_path):
    found = audit_file(tmp_path, "cloud/agent-packer.json", PACKER_TEMPLATE)
    assert codes_of_line(found, 7) == {"NPU028"}
    assert codes_of_line(found, 19) == {"NPU028"}
    for line in (13, 18, 20):                     # a CPU instance, a CPU machine type, the count beside the type
        assert not codes_of_line(found, line), line


CONDA_EXPORT = """\
name: scvitools
channels:
  - conda-forge
  - nvidia
dependencies:
  - ca-certificates=2024.7.4=hbcca054_0
  - cccl=2.5.0=h7ab4013_0
  - cuda-cccl_linux-64=12.6.37=ha770c72_0
  - cuda-driver-dev_linux-64=12.6.37=h85509e4_0
  - libgcc-ng=14.1.0=h77fa898_0
  - rapids=26.04
  - rapids-singlecell=0.13.0
"""


def test_conda_cuda_cross_packages_cccl_and_rapids(tmp_path):
    found = audit_file(tmp_path, "environment.yml", CONDA_EXPORT)
    for line in (7, 8, 9):
        assert codes_of_line(found, line) == {"NPU018"}, line
    assert codes_of_line(found, 11) == {"NPU440"}
    for line in (6, 10, 12):
        assert not codes_of_line(found, line), line


WORKFLOW = """\
name: Publish anibali/pytorch:1.13.1-cuda11.7-ubuntu22.04
on: [push]
env:
  GPU_BASE_IMAGE: nvidia/cuda:12.8.1-base-ubuntu24.04
  BASE_IMAGE: ubuntu:24.04
  GPU_IMAGE_SUFFIX: gpu
jobs:
  build:
    name: Build nvidia/cuda:12.8.1 images
    runs-on: ubuntu-latest
    steps:
      - name: Build anibali/pytorch:1.13.1-cuda11.7 image
        uses: actions/checkout@v4
      - name: Setup NVidia GPU environment for KinD
        uses: ./common/github-actions/nvidia-gpu-setup
      - name: Install NVidia GPU operator for KinD
        uses: ./common/github-actions/nvidia-gpu-operator
      - name: "Set BASE_IMAGE"
        run: |
          echo "GPU Platform Matrix"
          echo "BASE_IMAGE=$GPU_BASE_IMAGE" >> $GITHUB_ENV
          echo "CPU_IMAGE=$BASE_IMAGE" >> $GITHUB_ENV
          echo "IMAGE_SUFFIX=-$GPU_IMAGE_SUFFIX" >> $GITHUB_ENV
      - name: Create Kueue resources
        run: |
          kubectl apply -f - <<EOF
          apiVersion: kueue.x-k8s.io/v1beta1
          kind: ResourceFlavor
          metadata:
            name: default-flavor
          ---
          apiVersion: kueue.x-k8s.io/v1beta1
          kind: ClusterQueue
          metadata:
            name: cluster-queue
          spec:
            resourceGroups:
            - coveredResources: ["cpu", "memory", "nvidia.com/gpu"]
              flavors:
              - name: default-flavor
                resources:
                - name: cpu
                  nominalQuota: 100
                - name: nvidia.com/gpu
                  nominalQuota: 10
          EOF
          kubectl apply -f cpu-queue.yaml
      - name: A CPU-only queue
        run: |
          kubectl apply -f - <<EOF
          apiVersion: kueue.x-k8s.io/v1beta1
          kind: ClusterQueue
          spec:
            resourceGroups:
            - coveredResources: ["cpu"]
              flavors:
              - name: default-flavor
                resources:
                - name: nvidia.com/gpu
                  nominalQuota: 0
          EOF
"""


def test_workflow_names_env_images_gpu_actions_and_kueue_quotas(tmp_path):
    found = audit_file(tmp_path, ".github/workflows/publish.yml", WORKFLOW)
    assert codes_of_line(found, 4) == {"NPU016"}        # the env's CUDA image
    assert codes_of_line(found, 21) == {"NPU016"}       # ... written to GITHUB_ENV
    assert codes_of_line(found, 15) == {"NPU017"} and codes_of_line(found, 17) == {"NPU017"}
    assert codes_of_line(found, 38) == {"NPU017"} and codes_of_line(found, 44) == {"NPU017"}
    # display names (workflow, job, steps), the echo, a CPU image, a suffix, the CPU quota, a manifest file: quiet
    for line in (1, 9, 12, 14, 16, 20, 22, 23, 42, 43, 45, 47, 55, 58, 59):
        assert not codes_of_line(found, line), line


PLAYBOOK = """\
---
- name: Agent Base Environment
  hosts: all
  roles:
    - { role: prevent-kernel-upgrades, tags: "prevent-kernel-upgrades" }
    - { role: nvidia-drivers, tags: "nvidia-drivers" }
    - { role: docker, tags: "docker" }
    - { role: nvidia-container-toolkit, tags: "docker" }
    - nvidia.nvidia_driver
  tasks:
    - name: Install the NVIDIA docker runtime
      include_role:
        name: nvidia.nvidia_docker
    - name: Install the cloudwatch agent
      include_role:
        name: cloudwatch-agent
"""


def test_ansible_roles_named_for_the_nvidia_driver_and_toolkit(tmp_path):
    found = audit_file(tmp_path, "cloud/agent-playbook.yml", PLAYBOOK)
    assert codes_of_line(found, 6) == {"NPU074"} and codes_of_line(found, 9) == {"NPU074"}
    assert codes_of_line(found, 8) == {"NPU017"} and codes_of_line(found, 13) == {"NPU017"}
    for line in (2, 5, 7, 11, 14, 16):           # play and task names, other roles
        assert not codes_of_line(found, line), line


TRAINING_IMAGE = """\
FROM quay.io/opendatahub/odh-midstream-cuda-base-13-0:latest

ARG UCX_VERSION=1.19.1
ARG NV_CUDA_NVCC_VERSION=13.0.88-1
ARG NV_CUDA_CCCL_VERSION=13.0.85-1
ARG OPENMPI_VERSION=4.1.6
ENV SDL_HINT_CUDA_DEVICE=0
ENV SDL_VIDEODRIVER=offscreen

# ucx-cuda activates when CUDA libs are present
RUN curl -fsSLo /tmp/ucx.tar.bz2 \\
        https://github.com/openucx/ucx/releases/download/v${UCX_VERSION}/ucx-${UCX_VERSION}-rocky9-mofed24.10-cuda13-x86_64.tar.bz2 \\
    && curl -fsSLo /tmp/ompi.tar.gz \\
        https://github.com/open-mpi/ompi/releases/download/v4.1/openmpi-${OPENMPI_VERSION}.tar.gz \\
    && rpm -ivh --nodeps \\
        /tmp/ucx-${UCX_VERSION}-1.el9.x86_64.rpm \\
        /tmp/ucx-cuda-${UCX_VERSION}-1.el9.x86_64.rpm \\
        /tmp/ucx-ib-${UCX_VERSION}-1.el9.x86_64.rpm \\
    && rm -f /tmp/ucx-*.rpm
"""


def test_cuda_package_arguments_ucx_cuda_release_and_rpms(tmp_path):
    found = audit_file(tmp_path, "images/training/Dockerfile", TRAINING_IMAGE)
    assert codes_of_line(found, 4) == {"NPU072"} and codes_of_line(found, 5) == {"NPU072"}
    assert codes_of_line(found, 7) == {"NPU973"}
    assert codes_of_line(found, 12) == {"NPU018"}       # UCX's CUDA 13 release
    assert codes_of_line(found, 17) == {"NPU018"}       # its CUDA transports' RPM
    # UCX's version, Open MPI's, a comment, another SDL setting, the plain and InfiniBand RPMs, their removal
    for line in (3, 6, 8, 10, 14, 16, 18, 19):
        assert not codes_of_line(found, line), line


AIRSIM_RUN = """\
#!/bin/bash
if [[ "$1" == "--gpus" ]]; then
    DOCKER_CMD="docker run --gpus all"
else
    DOCKER_CMD="nvidia-docker run --runtime=nvidia"
fi
# -e SDL_HINT_CUDA_DEVICE='1'
$DOCKER_CMD -it \\
    -e SDL_VIDEODRIVER=offscreen \\
    -e SDL_HINT_CUDA_DEVICE='0' \\
    --rm \\
    airsim_binary:latest /bin/bash
"""

TRITON_QA = """\
#!/bin/bash
source ../common/util.sh

TRITON_DIR=${TRITON_DIR:="/opt/tritonserver"}
SERVER=${TRITON_DIR}/bin/tritonserver
CLIENT=${SERVER:=/opt/tritonserver/bin/tritonserver}
SERVER_LOG="./vllm_backend_server.log"
# SERVER=/opt/tritonserver/bin/tritonserver
echo "=== Running $SERVER"
"""

VLLM_IMAGE = """\
FROM nvidia/cuda:11.8.0-devel-ubuntu22.04
RUN git clone https://github.com/vllm-project/vllm.git /vllm && \\
    sed -i 's/torch >= 2.0.0/torch == 2.0.1/' /vllm/requirements.txt && \\
    sed -i 's/numpy >= 1.0/numpy == 1.26.4/' /vllm/requirements.txt && \\
    sed -i 's/a>b/a<b/' /vllm/notes.txt
"""


def test_held_docker_run_env_triton_paths_and_sed_pins(tmp_path):
    found = audit_file(tmp_path, "docker/run_airsim_image_binary.sh", AIRSIM_RUN)
    assert codes_of_line(found, 10) == {"NPU973"}
    assert not codes_of_line(found, 7) and not codes_of_line(found, 9)
    found = audit_file(tmp_path / "qa", "ci/test.sh", TRITON_QA)
    assert codes_of_line(found, 5) == {"NPU480"} and codes_of_line(found, 6) == {"NPU480"}
    for line in (4, 7, 8, 9):
        assert not codes_of_line(found, line), line
    found = audit_file(tmp_path / "vllm", "docker/Dockerfile.cu118.vllm", VLLM_IMAGE)
    assert codes_of_line(found, 3) == {"NPU011"}
    assert not codes_of_line(found, 4) and not codes_of_line(found, 5)


PYPROJECT = """\
[project]
name = "nvidia-pytriton"
dependencies = ["numpy ~= 1.21", "nvidia-cuda-runtime-cu12"]

[project.optional-dependencies]
test = ["pytest ~= 7.2"]
doc = ["mkdocs-material >= 9.5"]
dev = ["nvidia-pytriton[test]",  # the tests' own requirements
       "nvidia-pytriton[doc]", "ruff >= 0.3.0"]
"""


def test_own_extras_are_no_dependency(tmp_path):
    found = audit_file(tmp_path, "pyproject.toml", PYPROJECT)
    assert codes_of_line(found, 3) == {"NPU440"}
    assert not codes_of_line(found, 8) and not codes_of_line(found, 9)


NOTEBOOK_CODE = """\
import xgboost as xgb
from ray.train import ScalingConfig
from codeflare_sdk import ClusterConfiguration

model_gpu = xgb.XGBClassifier(tree_method="gpu_hist")
model_cpu = xgb.XGBClassifier(tree_method="hist")
params = {"max_depth": 8, "tree_method": "gpu_hist"}
# model = xgb.XGBClassifier(tree_method="gpu_hist")
gpu_scaling = ScalingConfig(num_workers=3, use_gpu=True)
cpu_scaling = ScalingConfig(num_workers=3, use_gpu=False)
config = ClusterConfiguration(
    head_extended_resource_requests={"nvidia.com/gpu": 0},
    worker_extended_resource_requests={"nvidia.com/gpu": 1},
)
"""


def test_xgboost_gpu_tree_method_ray_scaling_and_zero_gpu_requests(tmp_path):
    found = audit_file(tmp_path, "demo.py", NOTEBOOK_CODE)
    assert codes_of_line(found, 5) == {"NPU972"} and codes_of_line(found, 7) == {"NPU972"}
    assert codes_of_line(found, 9) == {"NPU051"}
    assert codes_of_line(found, 13) == {"NPU051"}
    for line in (6, 8, 10, 12):
        assert not codes_of_line(found, line), line


CUDA_TOOL_VARIABLES = """\
#!/bin/bash
set -e
export CUDACXX=/usr/local/cuda/bin/nvcc
NVCC=/usr/local/cuda/bin/nvcc
SMI=/usr/bin/nvidia-smi
if hash nvidia-docker 2>/dev/null; then
  cmd=/usr/bin/nvidia-docker
else
  cmd=docker
fi
$cmd run --rm -v "$PWD":/ws myimage python train.py
"""


def test_held_tool_paths_only_where_run_or_the_rule_says_so(tmp_path):
    """review46 item 1: a `.../bin/<tool>` path held in a variable is that tool's run only where the script runs the
    variable (or the rule reads held paths, NPU480's `tritonserver`); a probed program stays a warning."""
    found = audit_file(tmp_path, "build.sh", CUDA_TOOL_VARIABLES)
    assert ("NPU017", "error") not in {(c, s) for _ln, c, s in found}
    assert codes_of_line(found, 3) == {"NPU367"}              # the CUDA compiler CMake uses: a warning, as before
    assert codes_of_line(found, 4) == set()                   # nvcc's path that nothing reads: no setting (tp56a)
    assert codes_of_line(found, 5) == set()
    assert (7, "NPU017", "warning") in found                  # chosen only where `hash nvidia-docker` finds it
    exported = audit_file(tmp_path, "build.sh", CUDA_TOOL_VARIABLES + "export NVCC SMI\n")
    assert codes_of_line(exported, 4) == {"NPU027"}           # nvcc's path, handed on but not run: info
    assert codes_of_line(exported, 5) == {"NPU075"}           # nvidia-smi's path, handed on but not run: info


JOB_ENV_WORKFLOW = """\
name: images
on: [push]
env:
  BASE: nvidia/cuda:12.4.1-runtime-ubuntu22.04
jobs:
  gpu:
    runs-on: ubuntu-latest
    env:
      BASE: nvidia/cuda:12.8.1-base-ubuntu24.04
      GPU_BASE: nvidia/cuda:12.8.1-devel-ubuntu24.04
    steps:
      - run: echo "BASE_IMAGE=$BASE" >> $GITHUB_ENV
  cpu:
    runs-on: ubuntu-latest
    env:
      CPU_BASE: ubuntu:24.04
    steps:
      - run: echo "BASE_IMAGE=$GPU_BASE" >> $GITHUB_ENV
  cpu2:
    runs-on: ubuntu-latest
    env:
      BASE: python:3.12-slim
    steps:
      - run: echo "BASE_IMAGE=$BASE" >> $GITHUB_ENV
"""


def test_workflow_env_is_scoped_to_the_job(tmp_path):
    """review46 item 2: a step sees the workflow's `env:` overridden by its own job's, never another job's."""
    found = audit_file(tmp_path, ".github/workflows/images.yml", JOB_ENV_WORKFLOW)
    assert codes_of_line(found, 12) == {"NPU016"}             # the gpu job's own CUDA image
    assert not codes_of_line(found, 18)                       # the gpu job's GPU_BASE is unset in the cpu job
    assert not codes_of_line(found, 24)                       # the job's python image beats the workflow's CUDA one


OPERATOR_WORKFLOW = """\
name: e2e
on: [pull_request]
jobs:
  kind-e2e:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - name: Install the AMD GPU operator
        uses: ROCm/gpu-operator/.github/actions/install@main
      - name: Install the NVIDIA GPU operator
        uses: ./common/github-actions/nvidia-gpu-operator
"""


def test_gpu_operator_actions_only_nvidia(tmp_path):
    """review46 item 3: AMD's GPU operator action is no NVIDIA setup; NVIDIA's stays NPU017."""
    found = audit_file(tmp_path, ".github/workflows/e2e.yml", OPERATOR_WORKFLOW)
    assert not codes_of_line(found, 9)
    assert codes_of_line(found, 11) == {"NPU017"}


CPU_DEFAULT_ARM_TEMPLATE = """\
{
    "$schema": "https://schema.management.azure.com/schemas/2019-04-01/deploymentTemplate.json#",
    "contentVersion": "1.0.0.0",
    "parameters": {
        "vmSize": {
            "type": "string",
            "defaultValue": "Standard_D4s_v3",
            "allowedValues": [
                "Standard_D4s_v3",
                "Standard_NC6s_v3",
                "Standard_NV12"
            ]
        }
    },
    "resources": []
}
"""


def test_arm_allowed_sizes_only_beside_a_gpu_default(tmp_path):
    """review46 item 6: a template deploying a CPU size by default lists its NC / NV sizes as options (quiet); with
    an NV default (ARM_TEMPLATE above) the allowed GPU sizes stay NPU028."""
    assert not audit_file(tmp_path / "cpu", "azuredeploy.json", CPU_DEFAULT_ARM_TEMPLATE)
    found = audit_file(tmp_path / "gpu", "azuredeploy.json", ARM_TEMPLATE)
    assert codes_of_line(found, 12) == {"NPU028"} and codes_of_line(found, 13) == {"NPU028"}


def test_packer_json_named_by_the_word():
    """review46 item 8: `packer` as a word of a JSON's name is a Packer template; `webpacker.json` (Rails' webpack
    config) is not read."""
    from auditor.project import project_kind

    for name in ("packer.json", "environments-packer.json", "gcp_packer_cuda.json"):
        assert project_kind(name, f"images/{name}") == "config", name
    for name in ("webpacker.json", "webpacker-dev-server.json"):
        assert project_kind(name, f"app/{name}") is None, name
