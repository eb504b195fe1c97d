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
