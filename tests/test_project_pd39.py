"""pd39 (session 28, project split test46): the general idioms behind test46's misses.

- a Hydra defaults list that picks the `gpu` option of the trainer group (`- trainer: gpu`, `- override /trainer:
  gpu_ddp`) is a GPU accelerator request (NPU020); other groups named gpu-something, and a `cpu` trainer, are not;
- a Kubernetes node selector that pins a GPU node pool / group or an AWS GPU instance type is a GPU node request
  (NPU028); a CPU pool is not;
- jaxlib's CUDA builds pinned by their local version (`jaxlib==0.3.25+cuda11.cudnn805`) and its CUDA find-links page
  select the CUDA variant (NPU023); a plain jaxlib pin is not;
- a git install of Image-Local-Attention (a CUDAExtension build) is a CUDA kernel dependency (NPU360), once per line;
  lucidrains' pure-PyTorch `local-attention` is not;
- cpm-kernels is a third-party NVIDIA library (NPU440, warning).
"""
from __future__ import annotations

from tests.test_project_t23c import ENGINE
from tests.static_snippets import line_codes


def found(name: str, text: str) -> list[tuple[int, str]]:
    return line_codes(ENGINE, name, text)


# openspeech/configs/train.yaml
OPENSPEECH_TRAIN = """\
    # @package _group_

    defaults:
      - audio: null
      - augment: default
      - dataset: null
      - criterion: null
      - lr_scheduler: null
      - model: null
      - trainer: gpu
      - tokenizer: null
    """

# a lightning-hydra-template experiment config
EXPERIMENT = """\
    # @package _global_

    defaults:
      - override /data: cifar10
      - override /model: resnet
      - override /trainer: gpu_ddp
      - override /callbacks: gpu_monitor
      - override /logger: wandb

    seed: 12345
    """

CPU_EXPERIMENT = """\
    # @package _global_

    defaults:
      - override /data: cifar10
      - override /trainer: cpu
      - override /callbacks: gpu_stats

    trainer:
      max_epochs: 10
    """


def test_hydra_defaults_that_pick_a_gpu_trainer():
    assert found("configs/train.yaml", OPENSPEECH_TRAIN) == [(10, "NPU020")]
    assert found("configs/experiment/resnet.yaml", EXPERIMENT) == [(6, "NPU020")]


def test_hydra_defaults_of_a_cpu_trainer_or_other_groups_are_quiet():
    assert found("configs/experiment/cpu.yaml", CPU_EXPERIMENT) == []


# deepspeech.pytorch/kubernetes/train.yaml, cut down
K8S_JOB = """\
    apiVersion: kubeflow.org/v1
    kind: PyTorchJob
    metadata:
      name: deepspeech
    spec:
      pytorchReplicaSpecs:
        Worker:
          template:
            spec:
              containers:
                - name: pytorch
                  image: deepspeech:latest
                  command: ["python", "train.py"]
              nodeSelector:
                cloud.google.com/gke-nodepool: gpu-pool
    """

EKS_POD = """\
    apiVersion: v1
    kind: Pod
    metadata:
      name: trainer
    spec:
      nodeSelector:
        node.kubernetes.io/instance-type: p4d.24xlarge
      containers:
        - name: main
          image: trainer:latest
    """

CPU_POOL = """\
    apiVersion: v1
    kind: Pod
    metadata:
      name: preprocess
    spec:
      nodeSelector:
        cloud.google.com/gke-nodepool: default-pool
        node.kubernetes.io/instance-type: m5.2xlarge
      containers:
        - name: main
          image: preprocess:latest
    """


def test_node_selectors_that_pin_gpu_nodes():
    assert found("kubernetes/train.yaml", K8S_JOB) == [(15, "NPU028")]
    assert found("k8s/pod.yaml", EKS_POD) == [(7, "NPU028")]


def test_node_selectors_of_cpu_nodes_are_quiet():
    assert found("k8s/preprocess.yaml", CPU_POOL) == []


# helm's install-heim-extras.sh, cut down
HEIM = """\
    #!/bin/bash
    set -e
    pip install jax==0.3.25 jaxlib==0.3.25+cuda11.cudnn805 -f https://storage.googleapis.com/jax-releases/jax_cuda_releases.html
    pip install jaxlib==0.1.69+cuda111
    pip install localAttention@git+https://github.com/Sleepychord/Image-Local-Attention.git@43fee310cb1c6f64fb0ed77404ba3b01fa586026
    pip install jax==0.4.13 jaxlib==0.4.13
    pip install local-attention==1.9.0
    """


def test_jaxlib_cuda_builds_and_image_local_attention():
    # the pin and its find-links page, as torch's `+cu110 -f .../whl/cu110/torch_stable.html` get two NPU018s
    assert found("install-heim-extras.sh", HEIM) == [(3, "NPU023"), (3, "NPU023"), (4, "NPU023"), (5, "NPU360")]


def test_jaxlib_cuda_build_in_requirements():
    got = found("requirements.txt", "jax==0.3.25\njaxlib==0.3.25+cuda11.cudnn805\njaxlib==0.3.25\n")
    assert got == [(2, "NPU023")]


def test_cpm_kernels_is_a_third_party_library():
    got = found("requirements.txt", "transformers==4.33.1\ncpm_kernels\nsentencepiece==0.1.99\n")
    assert got == [(2, "NPU440")]
