"""tp50a (session 50, project test139 and test140): families the project-file readers missed on session 49's blind
project splits (speech, recommendation, edge deployment, graph learning, compression, multi-agent RL). Recall:
cibuildwheel's `CIBW_BEFORE_*` commands exported by a script, a script sourced with the CUDA version, pip's versioned
scripts (`pip3.7`), Horovod's NCCL build switches (NPU984), NCCL packages installed from local `.deb` files (NPU990),
Kaldi's `cuda-compiled` probe (NPU982) and Grid Engine GPU requests (`-l gpu=1`, NPU028), NVIDIA's box.com Jetson
wheels held in an ARG (NPU018), `default-runtime: nvidia` written by `sed` (NPU017), the legacy Paddle launcher's
`--selected_gpus` (NPU985), Anaconda's TensorFlow GPU builds (NPU440) and `cupti` (NPU018). Quiet: comments,
messages, CPU values, zero counts, folder URLs completed on the RUN line, data files on box.com. Shaped on pyg-lib,
ALPRO, OpenEmbedding, zamia-speech, jetbot, ros2_trt_pose, PaddleSlim and on-policy; each with controls."""
from __future__ import annotations

from tests.static_snippets import audit_file, codes_of_line, expect_line_codes


WHEEL_BUILD = """\
#!/bin/bash
set -ex
CUDA_VERSION="${1:?Specify cuda version, e.g. cpu, cu130}"
echo "CUDA_VERSION: ${CUDA_VERSION}"
source ./.github/workflows/cuda/Windows-env.sh "${CUDA_VERSION}"
source ./.github/workflows/python/env.sh "${PYTHON_VERSION}"
if [[ "${TORCH_VERSION}" == "2.14.0" ]]; then
  export CIBW_BEFORE_BUILD="pip install ninja && pip install --pre torch --index-url https://download.pytorch.org/whl/nightly/${CUDA_VERSION}"
else
  export CIBW_BEFORE_TEST="pip install pytest && pip install torch==${TORCH_VERSION} --index-url https://download.pytorch.org/whl/${CUDA_VERSION}"
fi
export CIBW_BEFORE_ALL_LINUX="yum install -y zlib-devel"
export CIBW_TEST_COMMAND="pytest {project}/test"
export RELEASE_NOTE="pip install torch --index-url https://download.pytorch.org/whl/cu121"
python -m cibuildwheel --output-dir dist
"""


def test_cibuildwheel_commands_exported_and_sourced_cuda_env(tmp_path):
    found = audit_file(tmp_path, ".github/workflows/utils/build_windows.sh", WHEEL_BUILD)
    # the sourced CUDA environment (info) and both CUDA torch installs cibuildwheel runs
    assert "NPU018" in codes_of_line(found, 5)
    assert "NPU018" in codes_of_line(found, 8) and "NPU018" in codes_of_line(found, 10)
    # a script sourced with another version, CPU-only commands and a message held in a variable stay quiet
    expect_line_codes(found, {}, (4, 6, 12, 13, 14))


HOROVOD_INSTALL = """\
apt update
# horovod
HOROVOD_GPU_ALLREDUCE=NCCL HOROVOD_NCCL_LINK=SHARED HOROVOD_WITH_PYTORCH=1 \\
    pip install --no-cache-dir horovod==0.19.4 &&\\
    ldconfig
# HOROVOD_GPU_OPERATIONS=NCCL pip install horovod
HOROVOD_WITH_PYTORCH=1 HOROVOD_GPU_OPERATIONS=MPI python setup.py build
echo "set HOROVOD_GPU_ALLREDUCE=NCCL for GPU builds"
"""

HOROVOD_DOCKERFILE = """\
FROM ubuntu:20.04
RUN wget https://github.com/NVIDIA/nccl/archive/v2.8.3-1.tar.gz && tar -xzf v2.8.3-1.tar.gz && \\
    cd nccl-2.8.3-1 && make -j src.build && make pkg.debian.build
RUN apt-get -y install ./build/pkg/deb/libnccl2_*_amd64.deb ./build/pkg/deb/libnccl-dev_*_amd64.deb
RUN HOROVOD_GPU_OPERATIONS=NCCL pip3.7 install -i https://mirrors.aliyun.com/pypi/simple/ --no-cache-dir horovod
RUN pip3.7 install torch==1.7.1+cu101 torchvision==0.8.2+cu101 -f https://download.pytorch.org/whl/torch_stable.html
RUN pip3.10 install numpy pandas
RUN apt-get -y install ./debs/libzmq5_4.3.2-2_amd64.deb
ENV HOROVOD_GPU_OPERATIONS=NCCL
"""


def test_horovod_nccl_build_switches(tmp_path):
    found = audit_file(tmp_path, "env/install_pkg.sh", HOROVOD_INSTALL)
    expect_line_codes(found, {3: {"NPU984"}, 4: {"NPU144"}}, (2, 6, 7, 8))
    # review50 item 15: `HOROVOD_NCCL_LINK` alone only picks how NCCL is linked when the GPU operations use it
    found = audit_file(tmp_path / "link", "install.sh", "HOROVOD_NCCL_LINK=SHARED HOROVOD_WITH_PYTORCH=1 \\\n"
                                                          "    python setup.py build\n")
    assert "NPU984" not in {code for _, code, _ in found}


def test_versioned_pip_and_local_nccl_debs(tmp_path):
    found = audit_file(tmp_path, "docker/Dockerfile", HOROVOD_DOCKERFILE)
    assert codes_of_line(found, 4) == {"NPU990"}          # NCCL packages from local files (decision 63)
    assert {"NPU984", "NPU144"} <= codes_of_line(found, 5)
    assert "NPU018" in codes_of_line(found, 6)              # `pip3.7 install torch==...+cu101`
    assert "NPU984" in codes_of_line(found, 9)
    expect_line_codes(found, {}, (7, 8))


KALDI_CMD = """\
# "queue.pl" uses qsub.  The options to it are options to qsub.
#export cuda_cmd="queue.pl -l gpu=1"
export train_cmd="utils/run.pl"
export cuda_cmd="utils/run.pl -l gpu=1"
export big_cmd="queue.pl -l arch=*64*,gpu=2"
export decode_cmd="queue.pl -l gpu=0"
echo "submit with queue.pl -l gpu=1"
python tools/align.py -l gpu=1
qsub -cwd -l h_rt=1:00:00,gpu=1 job.sh
"""

KALDI_RECIPE = """\
#!/bin/bash
#$ -l gpu_1=1
#$ -l h_rt=12:00:00
. ./cmd.sh
# If you want to run without GPU you'd have to call train_tdnn.sh with --gpu false
if ! cuda-compiled; then
  cat <<EOF && exit 1
This script is intended to be used with GPUs but you have not compiled Kaldi with CUDA
EOF
fi
echo "cuda-compiled checks the build"
"""


def test_kaldi_grid_engine_gpu_requests(tmp_path):
    found = audit_file(tmp_path, "data/src/speech/kaldi-cmd.sh", KALDI_CMD)
    expect_line_codes(found, {4: {"NPU028"}, 5: {"NPU028"}, 9: {"NPU028"}}, (1, 2, 3, 6, 7, 8))


def test_kaldi_cuda_compiled_probe_and_directives(tmp_path):
    found = audit_file(tmp_path, "egs/run_tdnn.sh", KALDI_RECIPE)
    expect_line_codes(found, {2: {"NPU028"}, 6: {"NPU982"}}, (3, 5, 8, 11))


JETSON_DOCKERFILE = """\
FROM nvcr.io/nvidia/l4t-base:r32.4.4
#  PyTorch v1.5.0 https://nvidia.box.com/shared/static/3ibazbiwtkl181n95n9em3wtrca7tdzp.whl
ARG PYTORCH_URL=https://nvidia.box.com/shared/static/9eptse6jyly1ggt9axbja2yrmj6pbarc.whl
ARG PYTORCH_WHL=torch-1.6.0-cp36-cp36m-linux_aarch64.whl
RUN wget --quiet --no-check-certificate ${PYTORCH_URL} -O ${PYTORCH_WHL} && \\
    pip3 install ${PYTORCH_WHL} --verbose
ARG MODEL_URL=https://nvidia.box.com/shared/static/ho09o7ohgp7lsqe0tcxqu5gs2ddojbis.onnx
RUN wget ${MODEL_URL} -O /models/nanosam.onnx
ARG NSYS_URL=https://developer.nvidia.com/downloads/assets/tools/secure/nsight-systems/2025_1/
ARG NSYS_PKG=nsight-systems-2025.1.1_amd64.deb
RUN wget ${NSYS_URL}${NSYS_PKG}
"""


def test_jetson_box_wheels_held_in_args(tmp_path):
    found = audit_file(tmp_path, "docker/base/Dockerfile", JETSON_DOCKERFILE)
    assert codes_of_line(found, 3) == {"NPU018"}            # the ARG that names the wheel (decision 62)
    expect_line_codes(found, {}, (2, 4, 7, 8, 9))
    assert codes_of_line(found, 11)                         # a folder URL: the RUN line completes the download


DOCKER_RUNTIME = """\
#!/bin/bash
DOCKER_JSON_FILE="/etc/docker/daemon.json"
if ! grep -Fq "default-runtime" $DOCKER_JSON_FILE; then
    sudo sed -i 's/^}/    ,\\n    \\"default-runtime\\": \\"nvidia\\"\\n}/' $DOCKER_JSON_FILE
    echo "Restarting docker daemon ..."
fi
sudo sed -i 's/"default-runtime": "nvidia"/"default-runtime": "nvidia"/' /etc/docker/daemon.json
sudo sed -i 's/"log-level": "debug"/"log-level": "info"/' /etc/docker/daemon.json
# sudo sed -i 's/^}/,"default-runtime": "nvidia"}/' /etc/docker/daemon.json
"""


def test_default_runtime_written_by_sed(tmp_path):
    found = audit_file(tmp_path, "docker/set_nvidia_runtime.sh", DOCKER_RUNTIME)
    expect_line_codes(found, {4: {"NPU017"}}, (3, 5, 7, 8, 9))


PADDLE_DIST = """\
python -m paddle.distributed.launch \\
          --selected_gpus="0,1,2,3" \\
          train.py \\
          --batch_size 64 \\
          --model MobileNet
fleetrun --selected_gpus 0,1 train.py
python -m paddle.distributed.launch --devices="0,1,2,3" train.py
python -m paddle.distributed.launch --gpus=0,1 tools/train.py
# --selected_gpus="0,1,2,3" was the old option
echo "use --selected_gpus=0,1 with older Paddle"
"""


def test_paddle_legacy_gpu_selection(tmp_path):
    found = audit_file(tmp_path, "demo/unstructured_prune/train_imagenet_dist_gmp.sh", PADDLE_DIST)
    expect_line_codes(found, {2: {"NPU985"}, 6: {"NPU985"}}, (7, 8, 9, 10))


CONDA_ENV = """\
name: marl
channels:
  - defaults
dependencies:
  - _libgcc_mutex=0.1=main
  - _tflow_select=2.1.0=gpu
  - absl-py=0.9.0=py36_0
  - cupti=10.0.130=0
  - tensorflow=2.0.0=gpu_py36h6b29c10_0
  - tensorflow-base=2.0.0=gpu_py36h0ec5d1f_0
  - tensorflow-estimator=2.0.0=pyh2649769_0
  - numpy=1.18.1=py36h4f9e942_0
  # - tensorflow=2.0.0=gpu_py36h6b29c10_0
"""

CONDA_CPU_ENV = """\
name: cpu
dependencies:
  - _tflow_select=2.1.0=mkl
  - tensorflow=2.0.0=mkl_py36hef7ec59_0
  - tensorflow-base=2.0.0=eigen_py36h4dcba5c_0
"""


def test_anaconda_tensorflow_gpu_builds_and_cupti(tmp_path):
    found = audit_file(tmp_path, "environment.yaml", CONDA_ENV)
    expect_line_codes(found, {6: {"NPU440"}, 8: {"NPU018"}, 9: {"NPU440"}, 10: {"NPU440"}}, (5, 7, 11, 12, 13))
    expect_line_codes(audit_file(tmp_path / "cpu", "environment.yaml", CONDA_CPU_ENV), {}, (3, 4, 5))
