"""pd42 (session 29, project split test48): the general idioms behind test48's misses and flagged `none` lines.

- a bare boolean `cuda: true` (HARL's `device: {cuda: true}`), `no_cuda: false` (tape) or a valueless `--cuda` flag
  (NeuralPLexer) is a boolean device option (lead decision 25): no NPU019; a profiler's `cuda: True` (decision 20) and
  `device: cuda` still are;
- fbgemm-gpu's CPU build (`fbgemm-gpu-cpu`) is not an NVIDIA-only dependency; fbgemm-gpu is;
- TensorRT installed from NVIDIA's apt repository (`apt-get install tensorrt`) is NPU440, like its pip wheel;
- a machine or job spec's accelerator type naming an NVIDIA GPU (`accelerator_type: a100`, Vertex AI's
  `acceleratorType: NVIDIA_TESLA_T4`, SkyPilot's `accelerators: A100:8`) is a GPU node request (NPU028); TPU types
  are not;
- a pip spec held in a string variable and installed later (IgFold's `torch_string = "torch==...+cu113 ..."` then
  `os.system(f"pip3 install {torch_string}")`) is found on the variable's definition; a name bound twice is not read.
"""
from __future__ import annotations

from tests.test_project_t23c import ENGINE
from tests.static_snippets import line_codes


def found(name: str, text: str) -> list[tuple[int, str]]:
    return line_codes(ENGINE, name, text)


# HARL tuned_configs/smac/25m/hatrpo/config.json, cut down
HARL_CONFIG = """\
    {
        "algo_args": {
            "device": {
                "cuda": true,
                "cuda_deterministic": true,
                "torch_threads": 4
            },
            "train": {
                "n_rollout_threads": 20,
                "num_env_steps": 10000000
            }
        }
    }
    """

# HARL harl/configs/algos_cfgs/maddpg.yaml, cut down
HARL_YAML = """\
    seed:
      seed_specify: True
      seed: 1
    device:
      # whether to use CUDA
      cuda: True
      # whether to set CUDA deterministic
      cuda_deterministic: True
      torch_threads: 4
    """

# tape gridsearch_config.json, cut down
TAPE_CONFIG = """\
    {
        "model_type": "transformer",
        "no_cuda": false,
        "local_rank": -1,
        "seed": 42
    }
    """

# torchtune's recipe configs: the profiler's CUDA activity (decision 20)
TORCHTUNE_PROFILER = """\
    profiler:
      _component_: torchtune.training.setup_torch_profiler
      enabled: False
      cpu: True
      cuda: True
      profile_memory: False
    """

EVAL_DEVICE = """\
    eval:
      device: cuda
      batch_size: 8
    """


def test_boolean_cuda_options_in_configs_are_quiet():
    assert found("tuned_configs/smac/25m/hatrpo/config.json", HARL_CONFIG) == []
    assert found("harl/configs/algos_cfgs/maddpg.yaml", HARL_YAML) == []
    assert found("gridsearch_config.json", TAPE_CONFIG) == []


def test_profiler_cuda_activity_and_device_strings_still_flag():
    assert found("recipes/configs/llama3_2/3B_lora.yaml", TORCHTUNE_PROFILER) == [(5, "NPU019")]
    assert found("configs/eval.yaml", EVAL_DEVICE) == [(2, "NPU019")]


# NeuralPLexer benchmark_tiny.sh, cut down
NEURALPLEXER = """\
    #!/bin/bash
    mkdir results
    neuralplexer-inference --task pdbbind_benchmarking --input-receptor data/rigid_receptor_docking \\
        --model-checkpoint models/rigid_docking_base.ckpt --n-samples 1 --num-steps=20 --cuda \\
        --sampler=langevin_simulated_annealing --csv-path datasets/timesplit_no_lig_overlap.csv
    """

DEVICE_FLAG = """\
    #!/bin/bash
    python infer.py --device cuda --batch-size 4
    """


def test_valueless_cuda_flag_is_quiet_but_a_device_value_is_not():
    assert found("benchmark_tiny.sh", NEURALPLEXER) == []
    assert found("run.sh", DEVICE_FLAG) == [(2, "NPU019")]


# the-algorithm-ml images/requirements.txt, cut down
TWHIN_REQUIREMENTS = """\
    absl-py==1.4.0
    fbgemm-gpu-cpu==0.3.2
    torchrec==0.3.2
    """


def test_fbgemm_cpu_build_is_quiet():
    assert found("images/requirements.txt", TWHIN_REQUIREMENTS) == []
    assert found("requirements.txt", "fbgemm-gpu==0.3.2\ntorchrec==0.3.2\n") == [(1, "NPU440")]


# text-to-motion .devcontainer/dev.Dockerfile, cut down
DEV_DOCKERFILE = """\
    FROM ubuntu:20.04
    ARG DEBIAN_FRONTEND=noninteractive
    RUN apt-get update &&\\
        apt-get install -y \\
            ffmpeg \\
            tensorrt
    COPY requirements.txt /usr/local/share
    """

PLAIN_DOCKERFILE = """\
    FROM ubuntu:20.04
    RUN apt-get update && apt-get install -y ffmpeg libgl1 python3-pip
    RUN pip3 install tensorboard
    """


def test_tensorrt_from_apt_is_an_nvidia_only_dependency():
    assert found(".devcontainer/dev.Dockerfile", DEV_DOCKERFILE) == [(6, "NPU440")]
    assert found("Dockerfile", PLAIN_DOCKERFILE) == []


# the-algorithm-ml projects/twhin/machines.yaml
TWHIN_MACHINES = """\
    chief: &gpu
      mem: 1.4Ti
      cpu: 24
      num_accelerators: 16
      accelerator_type: a100
    dataset_worker:
      mem: 14Gi
      cpu: 2
    """

# a Vertex AI custom job config
VERTEX_JOB = """\
    workerPoolSpecs:
      machineSpec:
        machineType: n1-standard-8
        acceleratorType: NVIDIA_TESLA_T4
        acceleratorCount: 2
      replicaCount: 1
    """

# a SkyPilot task
SKYPILOT_TASK = """\
    resources:
      accelerators: A100:8
      disk_size: 512
    run: |
      torchrun --nproc_per_node=8 train.py
    """

TPU_SPECS = """\
    chief:
      accelerator_type: v3-8
    resources:
      accelerators: tpu-v4-8
    """


def test_nvidia_accelerator_types_are_gpu_requests():
    assert found("projects/twhin/machines.yaml", TWHIN_MACHINES) == [(5, "NPU028")]
    assert found("vertex/job.yaml", VERTEX_JOB) == [(4, "NPU028")]
    assert (2, "NPU028") in found("sky/train.yaml", SKYPILOT_TASK)


def test_tpu_accelerator_types_are_quiet():
    assert found("machines.yaml", TPU_SPECS) == []


# IgFold's Colab install cell, as a script
IGFOLD_INSTALL = """\
    import os

    if not os.path.isfile("CODE_READY"):
        print("installing igfold...")
        torch_string = "torch==1.11.0+cu113 torchvision==0.12.0+cu113 -f https://download.pytorch.org/whl/torch_stable.html"
        os.system(f"pip3 install {torch_string}")
        os.system(f"pip install 'igfold>=0.3.0' {torch_string}")
        os.system("touch CODE_READY")
    """

REBOUND_NAME = """\
    import os
    import sys

    spec = "torch==1.11.0+cu113"
    if sys.platform == "darwin":
        spec = "torch==1.11.0"
    os.system(f"pip install {spec}")
    print("pip install torch==1.11.0+cu113 for a GPU")
    """


def test_pip_spec_in_a_variable_is_found_on_its_definition():
    assert found("install.py", IGFOLD_INSTALL) == [(5, "NPU018")]


def test_a_name_bound_twice_is_not_read():
    assert found("install.py", REBOUND_NAME) == []


# openfl openfl-tutorials/interactive_api/MXNet_landmarks/envoy/envoy_config_one.yaml
OPENFL_ENVOY = """\
    params:
      cuda_devices: [0]

    optional_plugin_components:
     cuda_device_monitor:
       template: openfl.plugins.processing_units_monitor.pynvml_monitor.PynvmlCUDADeviceMonitor
       settings: []

    shard_descriptor:
      template: landmark_shard_descriptor.LandmarkShardDescriptor
      params:
        rank_worldsize: 1, 2
    """

# a Hydra callbacks group naming an NVML power monitor, and a plain one
HYDRA_CALLBACKS = """\
    power:
      _target_: energy.monitors.NVMLPowerMonitor
      interval_s: 5
    lr:
      _target_: pytorch_lightning.callbacks.LearningRateMonitor
      logging_interval: step
    """

# openfl's plan: classes chosen by `template`, none built on NVML
OPENFL_PLAN = """\
    aggregator:
      defaults: plan/defaults/aggregator.yaml
      template: openfl.component.Aggregator
      settings:
        rounds_to_train: 10
    network:
      template: openfl.federation.Network
    """


def test_config_class_built_on_nvml_is_third_party():
    assert found("envoy/envoy_config_one.yaml", OPENFL_ENVOY) == [(6, "NPU440")]
    assert found("configs/callbacks/default.yaml", HYDRA_CALLBACKS) == [(2, "NPU440")]


def test_config_classes_not_built_on_nvml_are_quiet():
    assert found("plan/plan.yaml", OPENFL_PLAN) == []
