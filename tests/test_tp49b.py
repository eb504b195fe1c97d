"""tp49b (session 49, project test138): families the project-file readers missed on session 48's blind project split
test138 (RL, pose, audio, serving). Recall: slurm.conf GPU generic resources a script writes (NPU980), a config's JAX
CUDA platform (NPU981), NeMo's Triton deployment (NPU979) and TensorRT-LLM exporter (NPU409), Paddle's
`CUDAExtension` (NPU370), the commands of a Hydra submitit launcher's `setup:` list, NVIDIA's driver image,
`triton-model-navigator` and a spark-rapids-ml clone (NPU440). Quiet: comments, messages, CPU values, a job's own
`--gres` (NPU028's), Paddle's launcher `--gpus` (an alias of `--devices`). Shaped on truss, dreamerv3, NeMo
notebooks, PaddleDetection, PaddleClas, 4D-Humans and GenerativeAIExamples; each with controls."""
from __future__ import annotations

from tests.static_snippets import audit_file, codes_of_line, expect_line_codes, tree_findings, write_tree


SLURM_SETUP = """\
#!/bin/bash
set -euo pipefail
# Writes slurm.conf: GresTypes=gpu and one NodeName line per worker
cat > /etc/slurm/slurm.conf <<SLURMCONF
ClusterName=workstation
SlurmctldHost=${HOSTNAME}
SelectType=select/cons_tres
GresTypes=gpu
SLURMCONF

for i in $(seq 0 $((GROUP_SIZE - 1))); do
    NODE_GPUS=$(cat "$SLURM_DIR/nodes/node_${i}_gpus")
    echo "NodeName=${NODE_HOST} NodeAddr=${NODE_IP} CPUs=${NODE_CPUS} Gres=gpu:${NODE_GPUS} State=UNKNOWN" >> /etc/slurm/slurm.conf
done
echo "PartitionName=batch Nodes=${ALL_NODES} Default=YES State=UP" >> /etc/slurm/slurm.conf
echo "  Gres=gpu:${NODE_GPUS} per node"
echo "NodeName=cpu01 Gres=gpu:0" >> /etc/slurm/slurm.conf
srun --gres=gpu:1 nvidia-smi -L
"""


def test_slurm_conf_gres_written_by_a_script(tmp_path):
    found = audit_file(tmp_path, "templates/workstation/setup_controller.sh", SLURM_SETUP)
    # a comment, a CPU partition, a message, a zero count stay quiet
    expect_line_codes(found, {8: {"NPU980"}, 13: {"NPU980"}}, (3, 15, 16, 17))
    assert "NPU980" not in codes_of_line(found, 18)     # a job's request stays NPU028's


SLURM_CHECKS = """\
#!/bin/bash
if scontrol show node "$(hostname -s)" | grep -q "Gres=gpu:"; then PART=gpu; fi
COUNT=$(scontrol show node | grep -E "Gres=gpu:[0-9]+" | wc -l)
GRES_LINE=$(grep "^GresTypes=gpu" /etc/slurm/slurm.conf)
sed -i 's/^GresTypes=gpu/#GresTypes=gpu/' /etc/slurm/slurm.conf
sed -i '/Gres=gpu:/d' /etc/slurm/slurm.conf
echo "# Gres=gpu:4 is for the GPU partition" >> /etc/slurm/slurm.conf
echo "GresTypes=gpu" >> /etc/slurm/slurm.conf
"""


def test_slurm_conf_gres_searched_or_removed_is_quiet(tmp_path):
    """review49 item 6: lines that only test for the GPU gres (`grep`, `scontrol`), take it out of slurm.conf (`sed`)
    or write it as a comment configure no GPU; a line echoed into the file still does."""
    found = audit_file(tmp_path, "scripts/check_node.sh", SLURM_CHECKS)
    for line in range(2, 8):
        assert "NPU980" not in codes_of_line(found, line), line
    assert "NPU980" in codes_of_line(found, 8)
    # review50 item 10: a sed substitution that writes the gres into slurm.conf configures it
    found = audit_file(tmp_path / "b", "scripts/setup_slurm.sh",
                       "#!/bin/bash\nsed -i 's/^#GresTypes=.*/GresTypes=gpu/' /etc/slurm/slurm.conf\n"
                       "sed -i 's/^\\(NodeName=node\\[01-04\\].*\\)$/\\1 Gres=gpu:8/' /etc/slurm/slurm.conf\n")
    assert "NPU980" in codes_of_line(found, 2) and "NPU980" in codes_of_line(found, 3)


JAX_CONFIG = """\
defaults:
  seed: 0
  jax:
    platform: cuda
    compute_dtype: bfloat16
    policy_devices: [0]
    train_devices: [0]
  # jax: {platform: cuda}
cpu_debug:
  jax:
    platform: cpu
"""


def test_jax_platform_setting(tmp_path):
    expect_line_codes(audit_file(tmp_path, "dreamerv3/configs.yaml", JAX_CONFIG), {4: {"NPU981"}}, (8, 11))


NEMO_EXPORT = """\
from nemo.export import TensorRTLLM
from nemo.deploy import DeployPyTriton
from nemo.collections.llm import api

trt_llm_exporter = TensorRTLLM(model_dir="trt_engines")
# from nemo.deploy import DeployPyTriton
print("served with DeployPyTriton")
"""


def test_nemo_export_and_triton_deploy(tmp_path):
    expect_line_codes(audit_file(tmp_path, "finetuning/export.py", NEMO_EXPORT), {1: {"NPU409"}, 2: {"NPU979"}}, (3, 6, 7))


PADDLE_SETUP = """\
import os
import glob
import paddle
from paddle.utils.cpp_extension import CppExtension, CUDAExtension, setup


def get_extensions():
    sources = glob.glob("csrc/*.cc")
    if paddle.device.is_compiled_with_cuda():
        return CUDAExtension(sources + glob.glob("csrc/*.cu"))
    return CppExtension(sources)
"""


def test_paddle_cuda_extension(tmp_path):
    found = audit_file(tmp_path, "ppdet/ext_op/setup.py", PADDLE_SETUP)
    assert "NPU370" in codes_of_line(found, 4)
    assert "NPU370" in codes_of_line(found, 10)
    assert "NPU370" not in codes_of_line(found, 11)
    # a script that runs a Paddle setup file: the framework's module imports on every build (its nvcc step is what
    # fails, reported in the setup file), so the launch is no import that fails (NPU827)
    root = write_tree(tmp_path / "launch", {
        "build.sh": "cd custom_ops && python setup_cuda.py install\n",
        "custom_ops/setup_cuda.py": "from paddle.utils.cpp_extension import CUDAExtension, setup\n\n"
                                    "setup(name=\"custom_relu\", ext_modules=CUDAExtension(sources=[\"relu_op.cc\", "
                                    "\"relu_op.cu\"]))\n"})
    assert "NPU827" not in codes_of_line(tree_findings(root, "build.sh"), 1)


PADDLE_LAUNCH = """\
#!/usr/bin/env bash
export FLAGS_cudnn_exhaustive_search=1
python3.7 -m paddle.distributed.launch \\
    --gpus="0,1,2,3" \\
    ppcls/static/train.py \\
    -c ./ppcls/configs/ImageNet/ResNet/ResNet50_amp_O1.yaml
python -m paddle.distributed.launch --devices=0,1 tools/train.py
# python -m paddle.distributed.launch --gpus=0,1 tools/train.py
echo "launch with --gpus=0,1"
"""


def test_paddle_launch_gpu_list(tmp_path):
    # the launcher's `--gpus` is an alias of `--devices` (Paddle's launch/context/args_envs.py): the NPU plugin reads it
    expect_line_codes(audit_file(tmp_path, "ppcls/static/run_dali.sh", PADDLE_LAUNCH), {}, (3, 4, 7, 8, 9))


HYDRA_SLURM = """\
# @package _global_

defaults:
  - override /hydra/launcher: submitit_slurm

hydra:
  launcher:
    timeout_min: 600
    nodes: 1
    tasks_per_node: 8
    cpus_per_task: 12
    name: train
    setup:
      - module load cuda openmpi libfabric-aws
      - export CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7
      - export OMP_NUM_THREADS=4
      # - module load cudnn
"""


def test_hydra_submitit_setup_commands(tmp_path):
    found = audit_file(tmp_path, "configs_hydra/launcher/slurm.yaml", HYDRA_SLURM)
    assert codes_of_line(found, 14) == {"NPU029"}    # `module load cuda`
    expect_line_codes(found, {15: {"NPU004"}}, (12, 16, 17))



def test_launcher_setup_is_hydras_key_only(tmp_path):
    """review49 item 7: only Hydra's `hydra.launcher.setup` (with the file's package, or the group's default package
    for a file under `hydra/launcher/` without a header) is a list of job-script commands; a prose `setup:` under
    some other `launcher` mapping is a description."""
    prose = audit_file(tmp_path, "conf/config.yaml", "app:\n  launcher:\n    setup: \"Use the CUDA launcher on GPU "
                       "nodes (nvidia-smi shows them)\"\n")
    assert not codes_of_line(prose, 3)
    group = audit_file(tmp_path / "b", "configs/hydra/launcher/slurm_nohdr.yaml",
                       "_target_: hydra_plugins.hydra_submitit_launcher.submitit_launcher.SlurmLauncher\n"
                       "setup:\n  - module load cuda/11.8\n")
    assert codes_of_line(group, 3) == {"NPU029"}
    # Hydra 1.0's `# @package _group_` header: the group's path, `hydra.launcher` (review50 item 11)
    group = audit_file(tmp_path / "c", "conf/hydra/launcher/slurm_group.yaml",
                       "# @package _group_\n_target_: hydra_plugins.hydra_submitit_launcher.submitit_launcher."
                       "SlurmLauncher\ntimeout_min: 60\nsetup:\n  - module load cuda/11.8\n")
    assert codes_of_line(group, 5) == {"NPU029"}


GPU_DOCKERFILE = """\
# docker build -f Dockerfile -t img .
FROM ghcr.io/nvidia/driver:7c5f8932-550.144.03-ubuntu24.04
RUN pip install --no-cache-dir \\
    onnx \\
    triton-model-navigator==0.10.1 \\
    numpy
# --- install spark-rapids-ml from source
RUN git clone -b branch-25.02 https://github.com/NVIDIA/spark-rapids-ml.git
RUN git clone https://github.com/apache/spark.git
"""


def test_driver_image_and_nvidia_packages(tmp_path):
    expect_line_codes(audit_file(tmp_path, "docker/Dockerfile.interact", GPU_DOCKERFILE),
            {2: {"NPU016"}, 5: {"NPU440"}, 8: {"NPU440"}}, (1, 4, 6, 7, 9))
