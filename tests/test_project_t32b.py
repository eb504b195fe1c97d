"""t32b (issue 15, session 32; project test55 and the project dev splits): settings held in variables, parameter
defaults and dict entries (NPU903 / NPU051), and the project-file families of t31d's Left list."""
from __future__ import annotations

from auditor.rules import load_rules
from auditor.static import StaticEngine

_ENGINE = StaticEngine(load_rules())


def _lines(src: bytes, code: str) -> set[int]:
    return {f.line for f in _ENGINE.analyze_bytes(src, "submit.py").findings if f.code == code}


_AZUREML_IMAGE = b'''from azureml.core import Experiment, Workspace
from azureml.train.dnn import PyTorch

ws = Workspace.from_config()
image_name = 'mcr.microsoft.com/azureml/bert:pretrain-openmpi3.1.2-cuda10.0-cudnn7-ubuntu16.04'
estimator = PyTorch(source_directory='../../',
                    compute_target=gpu_compute_target,
                    entry_script='train.py',
                    custom_docker_image=image_name,
                    node_count=2,
                    distributed_backend='mpi')
cpu_image_name = 'mcr.microsoft.com/azureml/openmpi4.1.0-ubuntu22.04:latest'
plot_image = 'figures/cuda_speedup.png'
print("image_name=" + image_name)
'''


def test_cuda_image_held_in_a_variable():
    assert _lines(_AZUREML_IMAGE, "NPU903") == {5}


_SAGEMAKER_DEFAULTS = b'''import sagemaker
from sagemaker.huggingface import HuggingFace


def train(entry_point, instance_type="ml.p3.16xlarge", instance_count=1):
    estimator = HuggingFace(entry_point=entry_point, instance_type=instance_type, instance_count=instance_count,
                            role=sagemaker.get_execution_role(), transformers_version="4.26", pytorch_version="1.13")
    estimator.fit()


def preprocess(instance_type="ml.m5.xlarge"):
    return instance_type


DISTRIBUTED_CONFIG = {"instance_type": "ml.p4d.24xlarge", "instance_count": 2}
CPU_CONFIG = {"instance_type": "ml.c5.2xlarge", "instance_count": 1}
'''


def test_sagemaker_sizes_in_defaults_and_dict_entries():
    assert _lines(_SAGEMAKER_DEFAULTS, "NPU051") == {5, 15}


def test_submitit_slurm_partition_key_and_gpu_partition_interpolation():
    from static_snippets import codes_by_line
    config = """\
        scenarios:
          cld:
            checkpoint: "experiments/pyg-cld-v1/checkpoints/checkpoint-100000.pth"
            resources:
              eval_mem_mb: 4000
              runtime: "2h"
              slurm_partition: "${project.gpu_partition}"
          cld_cpu:
            resources:
              slurm_partition: "${project.cpu_partition}"
          clic:
            resources:
              slurm_partition: "main"
        launcher:
          slurm_partition: gpu-a100
        """
    found = codes_by_line(_ENGINE, config, "validation.yaml")
    assert {line for line, codes in found.items() if "NPU028" in codes} == {7, 15}


def test_setup_py_build_of_a_cloned_kernel_folder():
    from static_snippets import codes_by_line
    docker = """\
        FROM python:3.10-slim
        RUN apt-get install -y mpich
        RUN git clone -b determined https://github.com/determined-ai/gpt-neox.git
        RUN python gpt-neox/megatron/fused_kernels/setup.py install
        RUN pip install -r gpt-neox/requirements/requirements.txt
        RUN git clone https://github.com/psf/requests.git && python requests/setup.py install
        """
    found = codes_by_line(_ENGINE, docker, "dockerfile")
    assert "NPU360" in found.get(4, set())
    assert not found.get(6)


_NVIDIA_SMI_PRINTED = b'''import logging
import subprocess
from subprocess import check_output

logger = logging.getLogger(__name__)
print(subprocess.check_output("nvidia-smi", encoding="utf-8"))
logger.info("GPUs: %s", check_output(["nvidia-smi", "-L"], text=True))
print("run nvidia-smi to see the GPUs")
logger.warning(f"nvidia-smi not found: {subprocess.CalledProcessError}")
'''


def test_nvidia_smi_run_inside_a_print_not_its_mention():
    assert _lines(_NVIDIA_SMI_PRINTED, "NPU407") == {6, 7}


_KATIB_TRIAL = b'''from kubeflow.katib import KatibClient, V1beta1TrialTemplate

trial_spec = {
    "apiVersion": "batch/v1",
    "kind": "Job",
    "spec": {
        "template": {
            "spec": {
                "containers": [
                    {
                        "name": "training-container",
                        "image": "docker.io/kubeflowkatib/darts-cnn-cifar10:v0.13.0",
                        # Training container requires 1 GPU.
                        "resources": {
                            "limits": {
                                "nvidia.com/gpu": 1
                            }
                        }
                    }
                ],
                "restartPolicy": "Never"
            }
        }
    }
}
cpu_spec = {"resources": {"limits": {"cpu": "4", "memory": "8Gi"}}}
print("requests nvidia.com/gpu")
'''


def test_kubernetes_gpu_resource_in_a_python_pod_spec():
    assert _lines(_KATIB_TRIAL, "NPU051") == {16}


def test_explicit_kernel_instantiations_hold_the_cu_file_line():
    from auditor.project.cuda_source import inventory
    source = """\
#include <sys/time.h>
#include <cuda_runtime.h>
#include <curand.h>
#include "src/acc/acc_ml_optimiser.h"
#include "src/acc/acc_backprojector_impl.h"

// the explicit instantiations of the kernels the header templates define
template __global__ void CudaKernels::cuda_kernel_translate2D<XFLOAT>(XFLOAT *,
    XFLOAT *, int, int, int, int, int);
template __global__ void CudaKernels::cuda_kernel_multi<XFLOAT, 4>(XFLOAT *, XFLOAT, int);
"""
    found = inventory(source)
    assert found["first_kernel_line"] == 8
    assert found["kernels"] == ["cuda_kernel_translate2D", "cuda_kernel_multi"]
    host_only = """\
#include <cuda_runtime.h>
// template __global__ void k<float>(float *);  (commented out)
void run() { cudaEventCreate(&start); }
"""
    assert inventory(host_only)["kernels"] == []
    assert inventory(host_only)["first_kernel_line"] == 1


_TSNE = b'''import numpy as np
import matplotlib.pyplot as plt

from sklearn.manifold import TSNE as HostTSNE
from tsnecuda import TSNE


def plot_embedding(features, labels, out):
    embedding = TSNE(n_components=2, perplexity=30, learning_rate=10).fit_transform(features)
    plt.scatter(embedding[:, 0], embedding[:, 1], c=labels, s=1)
    plt.savefig(out)


def plot_small(features, out):
    return HostTSNE(n_components=2).fit_transform(features)
'''


def test_tsnecuda_import_not_sklearn():
    assert _lines(_TSNE, "NPU422") == {5, 9}


_CUDA_SETUP = """\
from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CUDAExtension

setup(
    name='chamfer3D',
    ext_modules=[CUDAExtension('chamfer3D', ['chamfer_cuda.cpp', 'chamfer3D.cu'])],
    cmdclass={'build_ext': BuildExtension})
"""


def test_setup_py_of_a_folder_under_a_cuda_folder_is_a_local_build(tmp_path):
    from pathlib import Path

    from auditor.runner import run_static

    for folder in ("assets/cuda/chamfer3D", "assets/cuda/plain"):
        (tmp_path / folder).mkdir(parents=True)
    (tmp_path / "assets/cuda/chamfer3D/setup.py").write_text(_CUDA_SETUP)
    (tmp_path / "assets/cuda/plain/setup.py").write_text("from setuptools import setup\nsetup(name='plain')\n")
    (tmp_path / "install.sh").write_text(
        "#!/bin/bash\n"
        "python assets/cuda/chamfer3D/setup.py install\n"
        "pip install assets/cuda/chamfer3D\n"
        "python assets/cuda/plain/setup.py install\n")
    run = run_static([tmp_path], jobs=1)
    got = {(f.line, f.code) for r in run.results if Path(r.path).name == "install.sh" for f in r.findings}
    assert got == {(2, "NPU370"), (3, "NPU370")}, got
