"""t31d (issue 15, session 31; project test55): cloud ML SDKs asking for NVIDIA machines from Python (NPU051)."""
from __future__ import annotations

from auditor.rules import load_rules
from auditor.static import StaticEngine

_ENGINE = StaticEngine(load_rules())


def _lines(src: bytes, code: str = "NPU051") -> set[int]:
    return {f.line for f in _ENGINE.analyze_bytes(src, "submit.py").findings if f.code == code}


_AZUREML = b'''from azureml.core import Workspace, Experiment
from azureml.core.compute import AmlCompute, ComputeTarget
from azureml.core.compute_target import ComputeTargetException
from azureml.train.dnn import PyTorch

ws = Workspace.from_config()
try:
    gpu_cluster = ComputeTarget(workspace=ws, name="gpucluster")
except ComputeTargetException:
    compute_config = AmlCompute.provisioning_configuration(vm_size='Standard_NC24s_v3', max_nodes=8)
    gpu_cluster = ComputeTarget.create(ws, "gpucluster", compute_config)
estimator = PyTorch(source_directory="../../",
                    compute_target=gpu_cluster,
                    entry_script="train.py",
                    node_count=2,
                    distributed_backend='mpi',
                    use_gpu=True)
cpu_config = AmlCompute.provisioning_configuration(vm_size="STANDARD_D2_V2", max_nodes=4)
cpu_estimator = PyTorch(source_directory=".", entry_script="prep.py", use_gpu=False)
'''


def test_azureml_gpu_vm_and_estimator():
    assert _lines(_AZUREML) == {10, 17}


_SAGEMAKER = b'''import sagemaker
from sagemaker.huggingface import HuggingFace, HuggingFaceModel

role = sagemaker.get_execution_role()
huggingface_estimator = HuggingFace(entry_point="train.py",
                                    source_dir="./scripts",
                                    instance_type="ml.p3.16xlarge",
                                    instance_count=1,
                                    role=role,
                                    transformers_version="4.26",
                                    pytorch_version="1.13",
                                    py_version="py39")
predictor = HuggingFaceModel(model_data=s3_uri, role=role).deploy(initial_instance_count=1,
                                                                 instance_type="ml.g5.2xlarge")
processor = sagemaker.processing.ScriptProcessor(image_uri=uri, role=role, instance_count=1,
                                                instance_type="ml.m5.xlarge", command=["python3"])
neuron = HuggingFaceModel(model_data=s3_uri, role=role).deploy(initial_instance_count=1,
                                                               instance_type="ml.inf2.xlarge")
'''


def test_sagemaker_gpu_instances_not_cpu_or_inferentia():
    assert _lines(_SAGEMAKER) == {7, 14}


_VERTEX = b'''from google.cloud import aiplatform

job = aiplatform.CustomContainerTrainingJob(display_name="bert", container_uri=IMAGE)
model = job.run(replica_count=1,
                machine_type="a2-highgpu-1g",
                accelerator_type="NVIDIA_TESLA_A100",
                accelerator_count=1)
cpu_model = job.run(replica_count=1, machine_type="n1-standard-4")
tpu_model = job.run(replica_count=1, machine_type="cloud-tpu", accelerator_type="TPU_V3")
'''


def test_vertex_ai_gpu_machine_and_accelerator():
    assert _lines(_VERTEX) == {5, 6}


_IMAGES = b'''from azureml.core.runconfig import MpiConfiguration
from azureml.train.dnn import PyTorch
from azure.ai.ml.entities import Environment
from sagemaker.estimator import Estimator

estimator = PyTorch(source_directory=project_folder,
                    compute_target=gpu_cluster,
                    entry_script='run_classifier_azureml.py',
                    script_params=script_params,
                    custom_docker_base_image='azuremlsamples/bert:torch-1.0.0-apex-cuda9',
                    node_count=1,
                    use_gpu=True)
gpu_env = Environment(image="mcr.microsoft.com/azureml/openmpi4.1.0-cuda11.8-cudnn8-ubuntu22.04", conda_file="env.yml")
ngc = Estimator(image_uri="nvcr.io/nvidia/pytorch:24.01-py3", role=role, instance_count=1,
                instance_type="ml.m5.xlarge")
cpu_env = Environment(image="mcr.microsoft.com/azureml/openmpi4.1.0-ubuntu22.04:latest", conda_file="env.yml")
plt.imsave(fname="out/cuda_speedup.png", arr=grid)
viewer.show(image="figures/cuda_vs_cpu.png")
'''


def test_cuda_job_images_not_cpu_images_or_files():
    assert _lines(_IMAGES, "NPU903") == {10, 13, 14}
    assert _lines(_IMAGES) == {12}


def test_horovod_and_tsnecuda_installs():
    from static_snippets import codes_by_line
    docker = """\
        FROM mcr.microsoft.com/azureml/base:0.2.1
        RUN pip install --upgrade pip
        RUN pip install horovod
        RUN pip install horovod-tools-viewer tensorboard
        """
    found = codes_by_line(_ENGINE, docker, "dockerfile")
    assert "NPU144" in found.get(3, set())
    assert not any("NPU144" in c for line, c in found.items() if line != 3)
    env = """\
        name: relion-5.0
        channels:
          - conda-forge
        dependencies:
          - pip
          - pip:
            - torch==2.0.1
            - tsnecuda==3.0.1
            - scikit-learn
        """
    found = codes_by_line(_ENGINE, env, "environment.yml")
    assert "NPU440" in found.get(8, set())
    assert "NPU440" not in found.get(9, set())


def test_compose_image_beside_build_is_the_built_name():
    from static_snippets import codes_by_line
    compose = """\
        version: '3'
        services:
          zoobot:
            image: zoobot:cuda
            build:
              context: ./
              dockerfile: Dockerfile
          triton:
            image: nvcr.io/nvidia/tritonserver:24.01-py3
            ports:
              - "8000:8000"
        """
    found = codes_by_line(_ENGINE, compose, "docker-compose.yml")
    assert "NPU016" not in found.get(4, set())
    assert "NPU016" in found.get(9, set())
