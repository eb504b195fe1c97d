"""tp37 (session 37, project test78 / test80): GPU families of cluster, serving and course repositories that the
project-file readers missed: NVIDIA JAX-Toolbox images (and NVIDIA's distroless runtimes, no CUDA), PBS / Cobalt GPU
queues (and Slurm's `-C NOGPU` CPU feature), TensorFlow's GPU device queries, notebook `get_ipython().system(...)`
commands, the NVIDIA driver's OpenCL vendor registration. Shaped on levanter's docker/nvidia/Dockerfile, the
k8s-device-plugin's container Dockerfile, ALCF's ai-science-training-series job scripts, C3SE's alvis-intro
AlphaFold job, MIT introtodeeplearning's lab notebooks, piper's training notebook and alltalk_tts's Dockerfile, each
with controls."""
from __future__ import annotations

import json

from tests.static_snippets import write_tree
from tests.test_project_t24b import _found


def _codes(found, line):
    return {code for ln, code, _sev in found if ln == line}


def test_jax_toolbox_image_and_distroless_runtime(tmp_path):
    root = write_tree(tmp_path, {
        "docker/nvidia/Dockerfile": """\
            FROM ghcr.io/nvidia/jax:nightly-2023-10-25-linux-amd64 as base
            RUN pip install levanter
            """,
        "deployments/container/Dockerfile": """\
            FROM golang:1.23 AS build
            RUN go build -o /artifacts/ ./cmd/...
            FROM nvcr.io/nvidia/distroless/go:v4.1.1 AS application
            COPY --from=build /artifacts /usr/bin/
            """,
        "other/Dockerfile": """\
            FROM ghcr.io/nvidia/k8s-device-plugin-tools:v0.17.0
            FROM ghcr.io/jax-ml/jax:latest
            """,
    })
    assert "NPU016" in _codes(_found(root, "docker/nvidia/Dockerfile"), 1)
    assert not _codes(_found(root, "deployments/container/Dockerfile"), 3)
    assert not _found(root, "other/Dockerfile")


def test_pbs_cobalt_gpu_queue_and_nogpu_constraint(tmp_path):
    root = write_tree(tmp_path, {
        "train_resnet34_thetagpu.sh": """\
            #!/bin/bash
            #COBALT -n 1
            #COBALT -q training-gpu
            #COBALT -A ALCFAITP
            #COBALT -t 30
            # #COBALT -q full-node-gpu is the big queue
            mpirun -np 8 python train.py
            """,
        "pbs_job.sh": """\
            #!/bin/bash
            #PBS -l select=1:system=polaris
            #PBS -q debug
            #PBS -q gpu_a100
            python train.py
            """,
        "jobscript-msa.sh": """\
            #!/usr/bin/env bash
            #SBATCH -A C3SE-STAFF  # <-- add your project here
            #SBATCH -C NOGPU -c 4
            #SBATCH -t 360
            apptainer exec alphafold.sif python run_msa.py
            """,
    })
    found = _found(root, "train_resnet34_thetagpu.sh")
    assert "NPU028" in _codes(found, 3)
    assert not _codes(found, 2) | _codes(found, 4) | _codes(found, 6)
    pbs = _found(root, "pbs_job.sh")
    assert "NPU028" in _codes(pbs, 4) and not _codes(pbs, 3)
    assert not _codes(_found(root, "jobscript-msa.sh"), 3)


def _notebook(*cells: str) -> str:
    return json.dumps({"cells": [{"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
                                  "source": c} for c in cells],
                       "metadata": {}, "nbformat": 4, "nbformat_minor": 5})


def test_tensorflow_gpu_device_query(tmp_path):
    (tmp_path / "lab.ipynb").write_text(_notebook(
        "import tensorflow as tf\nimport numpy as np",
        "# Check that we are using a GPU, if not switch runtimes\n"
        "assert len(tf.config.list_physical_devices('GPU')) > 0\n"
        "cpus = tf.config.list_physical_devices('CPU')\n"
        "print('use tf.config.list_physical_devices(\"GPU\") to check')"))
    found = _found(tmp_path, "lab.ipynb")
    assert "NPU099" in _codes(found, 4)
    assert not _codes(found, 3) | _codes(found, 5) | _codes(found, 6)


def test_notebook_system_call_is_a_shell_command(tmp_path):
    (tmp_path / "train.ipynb").write_text(_notebook(
        "output_dir = '/content/piper'\nbatch_size = 16",
        "get_ipython().system(f'''\npython -m piper_train \\\\\n--dataset-dir \"{output_dir}\" \\\\\n"
        "--accelerator 'gpu' \\\\\n--devices 1 \\\\\n--batch-size {batch_size}\n''')",
        "note = '''\n--accelerator 'gpu'\n'''\nget_ipython().system('ls -la')"))
    found = _found(tmp_path, "train.ipynb")
    assert "NPU020" in _codes(found, 6)
    assert not [f for f in found if f[0] != 6]      # the string that no command runs carries nothing


def test_opencl_vendor_registration(tmp_path):
    root = write_tree(tmp_path, {"Dockerfile": """\
        FROM ubuntu:22.04
        RUN apt-get update && apt-get install -y \\
            ocl-icd-opencl-dev opencl-headers clinfo \\
            && mkdir -p /etc/OpenCL/vendors && echo "libnvidia-opencl.so.1" > /etc/OpenCL/vendors/nvidia.icd \\
            && ln -s /usr/bin/python3 /usr/bin/python
        RUN mkdir -p /etc/OpenCL/vendors && echo "libpocl.so.2" > /etc/OpenCL/vendors/pocl.icd
        # echo "libnvidia-opencl.so.1" > /etc/OpenCL/vendors/nvidia.icd
        """})
    found = _found(root, "Dockerfile")
    assert "NPU092" in _codes(found, 4)
    assert not _codes(found, 6) | _codes(found, 7)


def test_jax_mixed_precision_policy_string(tmp_path):
    root = write_tree(tmp_path, {"config/sft.yaml": """\
        trainer:
          mp: p=f32,c=bfloat16
          train_batch_size: 128
        # mp: p=f32,c=bfloat16 for the big runs
        """, "config/fp32.yaml": """\
        trainer:
          mp: f32
        """})
    found = _found(root, "config/sft.yaml")
    assert "NPU212" in _codes(found, 2)
    assert not _codes(found, 4)
    assert not _found(root, "config/fp32.yaml")


def test_gpu_nms_config_choice(tmp_path):
    root = write_tree(tmp_path, {"tools/cfgs/kitti_models/PartA2.yaml": """\
        MODEL:
            ROI_HEAD:
                NMS_CONFIG:
                    TRAIN:
                        NMS_TYPE: nms_gpu
                        MULTI_CLASSES_NMS: False
            POST_PROCESSING:
                NMS_CONFIG:
                    NMS_TYPE: class_specific_nms
                    NMS_THRESH: 0.1
        """})
    found = _found(root, "tools/cfgs/kitti_models/PartA2.yaml")
    assert "NPU815" in _codes(found, 5)
    assert not _codes(found, 9)


def test_bentoml_build_args_gpu_type(tmp_path):
    root = write_tree(tmp_path, {"pyproject.toml": """\
        [project]
        name = "llama4-17b-scout-instruct"
        dependencies = ["bentoml>=1.4.0"]

        [tool.bentoml.build.args]
        name = "llama4-17b-scout-instruct"
        gpu_type = "nvidia-h100-80gb"
        tp = 8

        [tool.other]
        gpu_type = "nvidia-h100-80gb"
        """})
    found = _found(root, "pyproject.toml")
    assert "NPU022" in _codes(found, 7)
    assert not _codes(found, 8) | _codes(found, 11)


HELM_DAEMONSET = """\
    {{- $options := (include "nvidia-device-plugin.options" . | fromJson) }}
    ---
    apiVersion: apps/v1
    kind: DaemonSet
    metadata:
      name: {{ include "nvidia-device-plugin.fullname" . }}
    spec:
      template:
        spec:
          {{- /*
          a comment over
          several lines
          */}}
          containers:
          - image: {{ include "nvidia-device-plugin.fullImage" . }}
            name: nvidia-device-plugin-ctr
            env:
            {{- if typeIs "string" .Values.deviceListStrategy }}
              - name: DEVICE_LIST_STRATEGY
                value: {{ .Values.deviceListStrategy }}
            {{- end }}
              - name: NVIDIA_VISIBLE_DEVICES
                value: all
              - name: NVIDIA_DRIVER_CAPABILITIES
                value: compute,utility
            # - name: NVIDIA_DISABLE_REQUIRE
    """


def test_helm_template_read_with_its_actions_masked(tmp_path):
    root = write_tree(tmp_path, {"templates/daemonset.yml": HELM_DAEMONSET})
    found = _found(root, "templates/daemonset.yml")
    assert "NPU004" in _codes(found, 22) and "NPU004" in _codes(found, 24)
    assert not [f for f in found if f[0] not in (22, 24)]


GRAFANA_CONFIGMAP = r"""
    apiVersion: v1
    kind: ConfigMap
    metadata:
      name: {{ .Release.Name }}-grafana-dashboard
    data:
      volcano-global-overview-dashboard.json: |-
        {"panels":[{"title":"GPU","targets":[{"expr":"kube_node_status_capacity{resource=\"nvidia_com_gpu\",job=\"kube-state-metrics\"}"}]}]}
      volcano-queue-overview-dashboard.json: |-
        {"panels":[{"title":"nvidia.com/gpu","targets":[{"expr":"volcano_queue_allocated_scalar_resources{resource=\"gpu\"}","legendFormat":"{{`{{queue_name}}`}}"}]}]}
    """


def test_grafana_queries_on_nvidia_gpu_resource(tmp_path):
    root = write_tree(tmp_path, {"templates/grafana.yaml": GRAFANA_CONFIGMAP})
    found = _found(root, "templates/grafana.yaml")
    assert "NPU095" in _codes(found, 8)
    assert not _codes(found, 10)


def test_triton_kind_gpu_instance_group(tmp_path):
    root = write_tree(tmp_path, {"config.yaml": """\
        profile_models:
          add_sub:
            model_config_parameters:
              instance_group:
                -
                  kind: KIND_GPU
                  count: [1]
          sub_cpu:
            model_config_parameters:
              instance_group:
                - kind: KIND_CPU
        """})
    found = _found(root, "config.yaml")
    assert "NPU096" in _codes(found, 6)
    assert not _codes(found, 11)


def test_installer_cuda_option_from_a_variable_and_unread_stage_args(tmp_path):
    root = write_tree(tmp_path, {"docker/Dockerfile.dev": """\
        ARG BASE_IMAGE=ubuntu:rolling
        FROM ${BASE_IMAGE} AS compile-image
        ARG MACHINE_TYPE=cpu
        ARG CUDA_VERSION
        RUN apt-get update && apt-get install -y git

        FROM compile-image AS dev-image
        ARG CUDA_VERSION
        RUN if [ -z "$CUDA_VERSION" ]; then python ts_scripts/install_dependencies.py --environment=dev; \\
            else python ts_scripts/install_dependencies.py --environment=dev --cuda $CUDA_VERSION; fi
        RUN python ts_scripts/install_dependencies.py --environment=dev --config $CONFIG_FILE
        """})
    found = _found(root, "docker/Dockerfile.dev")
    assert not _codes(found, 4)                    # declared in a stage that never reads it
    assert "NPU018" in _codes(found, 8)
    assert "NPU018" in _codes(found, 10)
    assert not _codes(found, 11)


def test_container_options_joined_from_quoted_pieces(tmp_path):
    root = write_tree(tmp_path, {"docker/start.sh": """\
        #!/bin/bash
        for arg in "$@"; do
            case $arg in
                -d|--gpu_devices)
                  GPU_DEVICES='--gpus '"\\"device=$2\\""''
                  PORTS='-p '"8080:8080"''
                  shift
                  ;;
            esac
        done
        docker run $GPU_DEVICES $PORTS -d --rm -it pytorch/torchserve:latest
        """})
    found = _found(root, "docker/start.sh")
    assert "NPU017" in _codes(found, 5)
    assert not _codes(found, 6)


def test_conda_cuda_label_channel_feature_package_and_nvstrings(tmp_path):
    root = write_tree(tmp_path, {"files/conda-requirements.yml": """\
        name: rapids
        channels:
          - numba
          - conda-forge
          - rapidsai/label/cuda10.0
          - pytorch
        dependencies:
          - cuda100
          - cudf=0.5.1
          - nvstrings
          - numpy=1.15.4
          - cudatoolkit-dev-not-a-thing-here
          # - cuda92
        """})
    found = _found(root, "files/conda-requirements.yml")
    assert "NPU018" in _codes(found, 5) and "NPU018" in _codes(found, 8)
    assert "NPU440" in _codes(found, 10)
    assert not _codes(found, 3) | _codes(found, 6) | _codes(found, 11) | _codes(found, 13)


def test_sourced_function_called_in_a_command_substitution(tmp_path):
    root = write_tree(tmp_path, {
        "qa/common/util.sh": """\
            #!/bin/bash
            function get_all_gpus_uuids() {
                nvidia-smi --query-gpu=gpu_uuid,pci.bus_id --format=csv,noheader | awk '{print $1}'
            }
            function find_available_ports() {
                echo 8000 8001 8002
            }
            """,
        "qa/L0_custom_ops/test.sh": """\
            #!/bin/bash
            source ../common/util.sh
            PORTS=(`find_available_ports 3`)
            GPUS=(`get_all_gpus_uuids`)
            ALL=$(get_all_gpus_uuids)
            echo "get_all_gpus_uuids lists the GPUs"
            """,
    })
    found = _found(root, "qa/L0_custom_ops/test.sh")
    assert "NPU017" in _codes(found, 4) and "NPU017" in _codes(found, 5)
    assert not _codes(found, 3) | _codes(found, 6)


def test_source_never_climbs_above_the_tree(tmp_path):
    (tmp_path / "util.sh").write_text("gpus() {\n    nvidia-smi -L\n}\n")
    root = write_tree(tmp_path / "tree", {"run.sh": "#!/bin/bash\nsource ../util.sh\nG=$(gpus)\n"})
    assert not _found(root, "run.sh")


def test_mpi_launcher_environment_and_mpiexec_launch(tmp_path):
    root = write_tree(tmp_path, {
        "tensorflow-benchmarks.yaml": """\
            apiVersion: kubeflow.org/v2beta1
            kind: MPIJob
            spec:
              mpiReplicaSpecs:
                Launcher:
                  template:
                    spec:
                      containers:
                      - image: mpioperator/tensorflow-benchmarks:latest
                        name: tensorflow-benchmarks
                        command:
                        - mpirun
                        - -np
                        - "2"
                        - -x
                        - NCCL_DEBUG=INFO
                        - -x
                        - LD_LIBRARY_PATH
                        - python
                        - scripts/tf_cnn_benchmarks/tf_cnn_benchmarks.py
            """,
        "run_ddp.sh": """\
            #!/bin/bash
            N=1
            PPN=4
            #mpiexec -n ${N} -ppn ${PPN} -l python train_ddp.py
            mpiexec -n ${N} -ppn ${PPN} -l --line-buffer --cpu-bind ${CPU_AFFINITY} python train_ddp.py \\
                --epochs 3
            mpiexec -n ${N} -ppn ${PPN} python train_cpu.py
            """,
        "train_ddp.py": """\
            import torch.distributed as dist
            dist.init_process_group(backend="nccl")
            """,
        "train_cpu.py": """\
            import torch.distributed as dist
            dist.init_process_group(backend="gloo")
            """,
    })
    found = _found(root, "tensorflow-benchmarks.yaml")
    assert "NPU121" in _codes(found, 16)
    assert not _codes(found, 18)
    launched = _found(root, "run_ddp.sh")
    assert "NPU143" in _codes(launched, 5)
    assert not _codes(launched, 4) | _codes(launched, 7)


def test_cuda_include_flag_cmake_define_with_a_space_and_grep_picked_wheels(tmp_path):
    root = write_tree(tmp_path, {"docker/cu116.Dockerfile": """\
        FROM ubuntu:20.04
        ENV NVENCODE_CFLAGS "-I/usr/local/cuda/include"
        ENV OTHER_CFLAGS "-I/opt/include"
        RUN cd /opencv/build && cmake -D CMAKE_BUILD_TYPE=RELEASE \\
        -D WITH_GSTREAMER=ON \\
        -D WITH_CUDA=ON \\
        .. && make -j8
        RUN pip install --no-deps \\
                "$(grep '^nvidia-cublas' /tmp/packages-nvidia.txt)" \\
                "$(grep '^pillow' /tmp/packages.txt)"
        """})
    found = _found(root, "docker/cu116.Dockerfile")
    assert "NPU027" in _codes(found, 2)
    assert "NPU021" in _codes(found, 6)
    assert "NPU440" in _codes(found, 9)
    assert not _codes(found, 3) | _codes(found, 5) | _codes(found, 10)
