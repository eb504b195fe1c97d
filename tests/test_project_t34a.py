"""t34a (issue 15, session 33; project test61 / test62 / test65, TUNED): `conda list --export` files, saved as
requirements.txt or under a YAML name, with pip packages as `name=version=pypi_0`."""
from __future__ import annotations

import textwrap

from auditor.rules import load_rules
from auditor.static import StaticEngine

_ENGINE = StaticEngine(load_rules())


def _audit(name: str, text: str) -> list[tuple[str, int, str]]:
    result = _ENGINE.analyze_bytes(textwrap.dedent(text).encode(), name)
    assert result.error is None, result.error
    return [(f.code, f.line, f.symbol) for f in result.findings]


_EXPORT = """\
    # This file may be used to create an environment using:
    # $ conda create --name <env> --file <this file>
    # platform: linux-64
    _libgcc_mutex=0.1=main
    cudatoolkit=11.1.74=h6bb024c_0
    gpustat=1.1.1=pypi_0
    numpy=1.24.3=py310h5f9d8c6_1
    nvidia-ml-py=12.560.30=pypi_0
    pytorch=1.9.0=py3.8_cuda11.1_cudnn8.0.5_0
    torch=2.0.0+cu118=pypi_0
    torch-complex=0.4.4=pypi_0
    torchvision=0.15.1+cu118=pypi_0
    triton=2.0.0=pypi_0
    """


def test_conda_export_read_as_requirements_under_either_name():
    expected = [("NPU018", 5, "cudatoolkit"), ("NPU440", 6, "gpustat"), ("NPU440", 8, "nvidia-ml-py"),
                ("NPU018", 9, "pytorch+cuda11.1"), ("NPU018", 10, "torch+cu118"), ("NPU018", 12, "torchvision+cu118"),
                ("NPU360", 13, "triton")]
    assert _audit("requirements.txt", _EXPORT) == expected
    assert _audit("look2hear.yml", _EXPORT) == expected
    # without the header: every line a name=version=build spec
    assert _audit("env.yml", _EXPORT.split("# platform: linux-64\n", 1)[1]) == [
        (code, line - 3, symbol) for code, line, symbol in expected]


def test_cpu_builds_in_an_export_and_configs_that_only_look_alike_are_quiet():
    assert _audit("requirements.txt", """\
        # platform: linux-64
        pytorch=2.0.1=py3.10_cpu_0
        torch=2.0.0+cpu=pypi_0
        torchvision=0.15.1=pypi_0
        """) == [("NPU011", 2, "pytorch"), ("NPU011", 3, "torch")]     # the torch-npu pairing note, as for `torch==2.0.0`
    # a YAML config with `=` in its values is no export: read as a config
    assert _audit("config.yml", """\
        # launch settings
        args: lr=0.1=fixed
        """) == []
    # a pip requirement with `==` is not a conda spec
    assert _audit("requirements.txt", "torch==2.0.0+cu118\n") == [("NPU018", 1, "torch+cu118")]


# production-stack's utils/install-kind-cluster.sh (t34a, project test62): a kind cluster with NVIDIA GPUs
_KIND_WITH_GPUS = """\
    #!/bin/bash
    set -euo pipefail
    echo "Setting NVIDIA container toolkit (nvidia-ctk) to be docker's default runtime..."
    # This allows Docker containers to access GPU hardware
    sudo nvidia-ctk runtime configure --runtime=docker --set-as-default
    sudo systemctl restart docker
    sudo sed -i 's/^#accept-nvidia-visible-devices-as-volume-mounts/accept/' /etc/nvidia-container-runtime/config.toml
    kind create cluster --name single-node-cluster --config - <<EOF
    apiVersion: kind.x-k8s.io/v1alpha4
    kind: Cluster
    nodes:
    - role: control-plane
      extraMounts:
        - hostPath: /dev/null
          containerPath: /var/run/nvidia-container-devices/all
    EOF
    echo "Adding nvidia helm repo and installing its gpu-operator helm chart..."
    helm repo add nvidia https://helm.ngc.nvidia.com/nvidia || true
    helm repo update
    helm install --wait --generate-name \\
         -n gpu-operator --create-namespace \\
         nvidia/gpu-operator --set driver.enabled=false
    kubectl apply -f "${SCRIPT_DIR}/nvidia-device-plugin-ds.yaml"
    kubectl apply -f https://raw.githubusercontent.com/NVIDIA/k8s-device-plugin/v0.14.1/nvidia-device-plugin.yml
    """


def test_nvidia_container_toolkit_and_gpu_operator_installs():
    found = _audit("install-kind-cluster.sh", _KIND_WITH_GPUS)
    assert {line for code, line, _ in found if code == "NPU017"} == {5, 7, 15, 18, 22, 23, 24}
    assert all(code == "NPU017" for code, line, _ in found if line in (5, 7, 15, 18, 22, 23, 24))


def test_other_charts_manifests_namespaces_and_messages_are_quiet():
    assert _audit("deploy.sh", """\
        #!/bin/bash
        echo "install the NVIDIA gpu-operator and nvidia-ctk first"
        # helm install nvidia/gpu-operator
        helm repo add vllm https://vllm-project.github.io/production-stack
        helm install -n gpu-operator vllm vllm/vllm-stack -f values/gpu-operator.yaml
        kubectl apply -f "${SCRIPT_DIR}/ascend-device-plugin.yaml"
        """) == []


def test_helm_gpu_counts_and_kubeai_profiles():
    values = """\
        servingEngineSpec:
          runtimeClassName: ""
          modelSpec:
          - name: "llama3"
            repository: "vllm/vllm-openai"
            requestCPU: 10
            requestGPU: 1
          - name: "router-only"
            requestGPU: 0
          - name: "amd"
            requestGPU: 1
            requestGPUType: "amd.com/gpu"
          - name: "mig"
            requestGPU: 1
            requestGPUType: "nvidia.com/mig-4g.71gb"
        """
    assert [(code, line) for code, line, symbol in _audit("values-03-match-pv.yaml", values)
            if "requestGPU" in symbol] == [("NPU017", 7), ("NPU017", 14)]
    model = """\
        apiVersion: kubeai.org/v1
        kind: Model
        metadata:
          name: gemma-3-27b-ollama-l4
        spec:
          features: [TextGeneration]
          url: ollama://gemma3:27b
          engine: OLlama
          resourceProfile: nvidia-gpu-l4:1
        ---
        apiVersion: kubeai.org/v1
        kind: Model
        metadata:
          name: qwen-cpu
        spec:
          engine: OLlama
          resourceProfile: cpu:2
        """
    assert [(code, line) for code, line, _ in _audit("gemma-3-27b-ollama-l4.yaml", model)] == [("NPU017", 9)]


# FourCastNet's submit_batch.sh / interactive_train.sh, sc23-dl-tutorial's submit_pm.sh (t34a, project test61 / test65)
def test_nersc_shifter_images_built_on_ngc():
    found = _audit("submit_batch.sh", """\
        #!/bin/bash -l
        #SBATCH --time=06:00:00
        #SBATCH -C gpu
        #SBATCH --image=nersc/pytorch:ngc-22.02-v0
        # old image: nersc/pytorch:ngc-21.08-v1
        image=nersc/pytorch:ngc-23.07-v0
        echo "using nersc/pytorch:ngc-23.07-v0"
        srun -u shifter --image=${image} python train.py
        srun -u shifter --image=nersc/pytorch:2.0.1 python prep.py
        """)
    assert [(code, line) for code, line, _ in found if code == "NPU016"] == [("NPU016", 4), ("NPU016", 6)]


# Conv-TasNet's egs/wsj0 cmd.sh and run.sh (t34a, project test61): Kaldi-style queue commands
def test_kaldi_queue_gpu_counts():
    assert [(code, line) for code, line, _ in _audit("cmd.sh", """\
        # queue.pl works with GridEngine (qsub); use run.pl --gpu 1 on a local machine
        export train_cmd="run.pl --mem 2G"
        export cuda_cmd="run.pl --mem 2G --gpu 1"
        export decode_cmd="queue.pl --mem 4G --gpu 0"
        #export cuda_cmd="queue.pl --mem 2G --gpu 1 --config conf/gpu.conf"
        echo "set cuda_cmd to slurm.pl --gpu 1 on Slurm"
        """)] == [("NPU028", 3)]
    assert [(code, line) for code, line, _ in _audit("run.sh", """\
        #!/bin/bash
        . ./cmd.sh
        ngpu=1
        ${cuda_cmd} --gpu ${ngpu} ${expdir}/train.log \\
          train.py --train_dir $train_dir
        ${decode_cmd} --gpu 0 ${expdir}/evaluate.log evaluate.py
        ${train_cmd} JOB=1:4 exp/log/prep.JOB.log prep.py
        python train.py --gpu 1
        """) if code == "NPU028"] == [("NPU028", 4)]
