"""tp47a (session 47, project test128): families the project-file readers missed on session 46's blind project split
test128. Recall: GKE node auto-provisioning GPU limits, a toleration / node-affinity class named for GPU nodes,
TensorFlow's `TF_NEED_CUDA` and `gpu_options.allow_growth` (NPU912), `-DWITH_GPU=ON`, `CUPY_NVCC_GENERATE_CODE` and
NCCL's `NVCC_GENCODE`, `dpkg-query --show nvidia-l4t-core` (NPU913), TaskCluster task files of CUDA templates, `uv
sync --group=cu128-train`, HPC-X's CUDA packages (NPU914), libfabric's `FI_HMEM_CUDA_*` (NPU910), aws-ofi-nccl on a
library path (NPU911), Kaldi's `./configure` (CUDA by default), FastChat's vLLM workers, Savant's DeepStream images and
`nvinfer@` elements, DeepStream inference library builds (NPU915), TensorRT `.deb` installs from its image folder,
TensorFlow's `bazel build --config=cuda`, a `pytorch-triton` install that `sed` appends to a script. Quiet: `rm -f` of
NVIDIA's apt lists (lead decision 65), a Dockerfile's test of whether a build argument was given, an image a script
only shows in messages, NotIn node-affinity values, off switches. Shaped on pangeo-cloud-federation, CoreWeave's warp
benchmark, OpenSeq2Seq, TensorFlowASR, FastMOT, STT, reference-architecture, pawsey-containers, aws-do-eks, vosk-api,
meditron and Savant; each with controls (comments, messages, CPU values, switches off)."""
from __future__ import annotations

from tests.static_snippets import audit_file, codes_of_line


AUTOPROVISIONING = """\
{
    "resourceLimits": [
        { "resourceType": "cpu", "minimum": 1, "maximum": 400},
        { "resourceType": "memory", "minimum": 1, "maximum": 2400},
        { "resourceType": "nvidia-tesla-t4", "maximum": 4},
        { "resourceType": "nvidia-tesla-v100", "maximum": 1}
    ],
    "management": {"autoRepair": true, "autoUpgrade": true}
}
"""


def test_gke_autoprovisioning_gpu_limits(tmp_path):
    found = audit_file(tmp_path, "deployments/gcp/autoprovisioning.json", AUTOPROVISIONING)
    assert codes_of_line(found, 5) == {"NPU028"} and codes_of_line(found, 6) == {"NPU028"}
    for line in (3, 4, 8):
        assert not codes_of_line(found, line), line


WARP_VALUES = """\
nodeSelector: {}

tolerations:
  - operator: Exists
    key: is_gpu
  - operator: Exists
    key: node.coreweave.cloud/reserved

affinity:
  nodeAffinity:
    requiredDuringSchedulingIgnoredDuringExecution:
      nodeSelectorTerms:
        - matchExpressions:
            - key: node.coreweave.cloud/state
              operator: In
              values:
                - production
            - key: node.coreweave.cloud/class
              operator: In
              values:
                - gpu
"""

CPU_ONLY_VALUES = """\
tolerations:
  - key: non-gpu
    operator: Exists
affinity:
  nodeAffinity:
    requiredDuringSchedulingIgnoredDuringExecution:
      nodeSelectorTerms:
        - matchExpressions:
            - key: node.coreweave.cloud/class
              operator: NotIn
              values:
                - gpu
"""


def test_gpu_tolerations_and_node_classes(tmp_path):
    found = audit_file(tmp_path, "warp/values.yaml", WARP_VALUES)
    assert codes_of_line(found, 5) == {"NPU028"}        # toleration of the GPU nodes' taint
    assert codes_of_line(found, 21) == {"NPU028"}       # node class `gpu` under `operator: In`
    for line in (7, 14, 17):
        assert not codes_of_line(found, line), line
    # a pool named as having no GPU, and NotIn: asks for no GPU node
    assert not audit_file(tmp_path / "cpu", "warp/values.yaml", CPU_ONLY_VALUES)


TF_BUILD_DOCKERFILE = """\
FROM nvcr.io/nvidia/cuda:10.0-cudnn7-devel-ubuntu18.04
ENV TF_NEED_CUDA 1
ENV TF_NEED_TENSORRT=0
ENV TF_CUDA_COMPUTE_CAPABILITIES=6.0,7.0
# ENV TF_NEED_CUDA 1 on the GPU build
RUN echo "TF_NEED_CUDA decides the CUDA build"
"""

NVBUILD = """\
#!/bin/bash
export LD_LIBRARY_PATH=$LD_LIBRARY_PATH:/usr/local/cuda/lib64/stubs
bazel build -c opt --copt=-mavx --config=cuda tensorflow/tools/pip_package:build_pip_package
bazel build -c opt --config=mkl //tensorflow/tools/pip_package:build_pip_package
# bazel build --config=cuda //tensorflow/tools/pip_package:build_pip_package
"""


def test_tensorflow_cuda_builds(tmp_path):
    found = audit_file(tmp_path, "Dockerfile.build", TF_BUILD_DOCKERFILE)
    assert "NPU021" in codes_of_line(found, 2)
    for line in (3, 5, 6):                            # switched off, a comment, a message
        assert not codes_of_line(found, line), line
    found = audit_file(tmp_path / "nv", "docker/nvbuild.sh", NVBUILD)
    assert "NPU021" in codes_of_line(found, 3)
    assert not codes_of_line(found, 4) and not codes_of_line(found, 5)


NOTEBOOK_CELL = """\
import tensorflow as tf
sess_config = tf.ConfigProto(allow_soft_placement=True)
sess_config.gpu_options.allow_growth = True
opts = tf.GPUOptions(per_process_gpu_memory_fraction=0.5)
parser.allow_growth = True
# sess_config.gpu_options.allow_growth = True
print("set gpu_options.allow_growth for large models")
"""


def test_tensorflow_gpu_options(tmp_path):
    found = audit_file(tmp_path, "infer.py", NOTEBOOK_CELL)
    assert codes_of_line(found, 3) == {"NPU912"} and codes_of_line(found, 4) == {"NPU912"}
    for line in (5, 6, 7):                             # another object's field, a comment, a message
        assert not codes_of_line(found, line), line


WARP_CTC = """\
#!/bin/bash
cd $PROJECT_DIR/externals/warp-ctc/build || exit

if [ "$CUDA_HOME" ]; then
  cmake \\
      -DUSE_NAIVE_KERNEL=OFF \\
      -DWITH_GPU=ON \\
      -DCUDA_TOOLKIT_ROOT_DIR="$CUDA_HOME" ..
else
  cmake \\
      -DUSE_NAIVE_KERNEL=OFF \\
      -DWITH_GPU=OFF ..
fi
make -j $(nproc)
"""


def test_with_gpu_cmake_switch(tmp_path):
    found = audit_file(tmp_path, "scripts/install_ctc_loss.sh", WARP_CTC)
    assert "NPU021" in codes_of_line(found, 7)
    assert not codes_of_line(found, 12) and not codes_of_line(found, 11)


FASTMOT_DOCKERFILE = """\
ARG TRT_IMAGE_VERSION=21.05
FROM nvcr.io/nvidia/tensorrt:${TRT_IMAGE_VERSION}-py3
ARG SCRIPT_DIR=/opt/tensorrt/python

# Specify your GPU compute with --build-arg for CuPy (e.g. "arch=compute_75,code=sm_75")
ARG CUPY_NVCC_GENERATE_CODE

RUN if [[ -z ${CUPY_NVCC_GENERATE_CODE} ]]; then \\
        echo "CUPY_NVCC_GENERATE_CODE not set, building CuPy for all architectures (slower)"; \\
    fi && \\
    dpkg -i ${SCRIPT_DIR}/*-tf_*.deb && \\
    dpkg -i /tmp/debs/libfoo_1.0_amd64.deb && \\
    CUPY_NUM_BUILD_JOBS=$(nproc) pip install --no-cache-dir -r requirements.txt
"""


def test_cupy_architectures_and_tensorrt_debs(tmp_path):
    found = audit_file(tmp_path, "Dockerfile", FASTMOT_DOCKERFILE)
    assert "NPU021" in codes_of_line(found, 6)            # the ARG carries the architectures
    assert not codes_of_line(found, 8)                    # a test of whether the ARG was given
    assert not codes_of_line(found, 9) and not codes_of_line(found, 5)
    assert codes_of_line(found, 11) == {"NPU457"}         # TensorRT's TF converter packages
    assert not codes_of_line(found, 12)


JETSON_INSTALL = """\
#!/bin/bash
set -e
L4T_VERSION=$(dpkg-query --showformat='${Version}' --show nvidia-l4t-core | cut -f1 -d'-')
PY_VERSION=$(dpkg-query --showformat='${Version}' --show python3)
if dpkg -s nvidia-l4t-core > /dev/null 2>&1; then echo "Jetson"; fi
echo "needs dpkg-query --show nvidia-l4t-core >= 32.4"
"""


def test_jetson_l4t_package_queries(tmp_path):
    found = audit_file(tmp_path, "scripts/install_jetson.sh", JETSON_INSTALL)
    assert codes_of_line(found, 3) == {"NPU913"} and codes_of_line(found, 5) == {"NPU913"}
    assert not codes_of_line(found, 4) and not codes_of_line(found, 6)


TASKCLUSTER_GPU = """\
build:
  template_file: test-win-cuda-opt-base.tyml
  dependencies:
    - "node-package-gpu"
    - "test-training_16k-linux-amd64-py36m-opt"
  args:
    tests_cmdline: "${system.homedir.win}/DeepSpeech/ds/taskcluster/tc-electron-tests.sh 12.x 11.0.0 16k cuda"
  metadata:
    name: "DeepSpeech Windows AMD64 CUDA ElectronJS MultiArch Package v11.0 tests"
"""

TASKCLUSTER_CPU = """\
build:
  template_file: test-win-opt-base.tyml
  dependencies:
    - "node-package-cpu"
  args:
    tests_cmdline: "${system.homedir.win}/DeepSpeech/ds/taskcluster/tc-electron-tests.sh 12.x 11.0.0 16k"
"""


def test_taskcluster_cuda_task_files(tmp_path):
    found = audit_file(tmp_path, "taskcluster/test-electronjs-win-cuda-opt.yml", TASKCLUSTER_GPU)
    for line in (2, 4, 7):
        assert codes_of_line(found, line) == {"NPU028"}, line
    for line in (5, 9):
        assert not codes_of_line(found, line), line
    assert not audit_file(tmp_path / "cpu", "taskcluster/test-electronjs-win-opt.yml", TASKCLUSTER_CPU)


EFA_DOCKERFILE = """\
FROM nvcr.io/nvidia/cuda-dl-base:25.06-cuda12.9-devel-ubuntu24.04
ENV HPCX_VERSION=v2.20
ENV HPCX_PACKAGE=hpcx-v2.20-gcc-mlnx_ofed-ubuntu22.04-cuda12-aarch64
ENV HPCX_CPU_PACKAGE=hpcx-v2.20-gcc-mlnx_ofed-ubuntu22.04-aarch64
RUN git clone --depth 1 https://github.com/NVIDIA/nccl-tests.git /opt/nccl-tests \\
    && cd /opt/nccl-tests \\
    && make -j$(nproc) MPI=1 MPI_HOME=/opt/hpcx/ompi \\
                       NCCL_HOME=/usr NVCC_GENCODE="-gencode=arch=compute_90,code=sm_90 -gencode=arch=compute_100,code=sm_100"
ENV LD_LIBRARY_PATH=/opt/amazon/ofi-nccl/lib64:/opt/amazon/efa/lib:/usr/local/lib:${LD_LIBRARY_PATH}
ENV PATH=/opt/amazon/efa/bin:${PATH}
ENV FI_PROVIDER=efa
ENV FI_HMEM_CUDA_USE_DMABUF=1
RUN uv sync --no-install-project --all-extras --group=cu128-train --frozen
RUN uv sync --group=dev
"""


def test_efa_nccl_image(tmp_path):
    found = audit_file(tmp_path, "nccl-tests/Dockerfile", EFA_DOCKERFILE)
    assert codes_of_line(found, 3) == {"NPU914"}          # HPC-X's CUDA build
    assert "NPU021" in codes_of_line(found, 8)            # NVCC_GENCODE of the nccl-tests build
    assert codes_of_line(found, 9) == {"NPU911"}          # aws-ofi-nccl on the library path
    assert codes_of_line(found, 12) == {"NPU910"}         # libfabric's CUDA dma-buf registration
    assert codes_of_line(found, 13) == {"NPU023"}         # a uv group of CUDA 12.8 packages
    for line in (2, 4, 10, 11, 14):
        assert not codes_of_line(found, line), line


KALDI_NOTEBOOK_CELLS = """\
#!/bin/bash
cd /content/kaldi/src/
./configure --shared --mathlib=OPENBLAS
./configure --shared --mathlib=OPENBLAS --use-cuda=no
./configure --prefix=/usr/local
"""


def test_kaldi_configure_builds_cuda_by_default(tmp_path):
    found = audit_file(tmp_path, "kaldi-build.sh", KALDI_NOTEBOOK_CELLS)
    assert codes_of_line(found, 3) == {"NPU021"}
    assert not codes_of_line(found, 4) and not codes_of_line(found, 5)


FASTCHAT = """\
#!/bin/bash
python -m fastchat.serve.controller --host 0.0.0.0 &
python -m fastchat.serve.vllm_worker \\
    --model-path epfl-llm/meditron-7b --num-gpus 1 &
python -m fastchat.serve.model_worker --model-path lmsys/vicuna-7b-v1.5 &
echo "python -m fastchat.serve.vllm_worker started"
"""


def test_fastchat_vllm_worker(tmp_path):
    found = audit_file(tmp_path, "deployment/fastchat.sh", FASTCHAT)
    assert codes_of_line(found, 3) == {"NPU447"}
    for line in (2, 6):
        assert not codes_of_line(found, line), line


SAVANT_MODULE = """\
name: demo
pipeline:
  elements:
    - element: pyfunc
      module: samples.conditional_video_processing.conditional_video_processing
      class_name: ConditionalSkipProcessing
    # primary detector element, inference is provided by the nvinfer Deepstream element
    - element: nvinfer@detector
      name: peoplenet
    - element: drawbin
"""

SAVANT_DOCKERFILE = """\
FROM nvcr.io/nvidia/deepstream:7.0-triton-multiarch AS builder
ARG DS_YOLO_PATH=/opt/yolo
ARG NVDSINFER_PATH=/opt/nvidia/deepstream/deepstream/sources/libs/nvdsinfer
RUN git clone https://github.com/marcoslucianops/DeepStream-Yolo.git $DS_YOLO_PATH \\
    && cd $DS_YOLO_PATH \\
    && make -C nvdsinfer_custom_impl_Yolo
COPY nvdsinfer_model_builder.patch $NVDSINFER_PATH/
RUN cd $NVDSINFER_PATH && \\
    patch nvdsinfer_model_builder.cpp < nvdsinfer_model_builder.patch && \\
    make

FROM ghcr.io/insight-platform/savant-deepstream:latest
RUN cd /opt/app && make
RUN python -m pip install statsd~=4.0
"""


def test_savant_deepstream_module_and_image(tmp_path):
    found = audit_file(tmp_path, "module/module.yml", SAVANT_MODULE)
    assert codes_of_line(found, 8) == {"NPU470"}
    for line in (4, 7, 10):
        assert not codes_of_line(found, line), line
    found = audit_file(tmp_path / "d", "docker/Dockerfile.x86", SAVANT_DOCKERFILE)
    assert codes_of_line(found, 6) == {"NPU915"} and codes_of_line(found, 10) == {"NPU915"}
    assert codes_of_line(found, 12) == {"NPU016"}
    assert not codes_of_line(found, 13) and not codes_of_line(found, 14)


PYTORCH_ROCM = """\
FROM rocm/dev-ubuntu-24.04:6.4
RUN     cd /tmp/build/pytorch && sed -i -e '4a  python3 -m pip install pytorch-triton==3.3.1; exit 0' \\
        scripts/install_triton_wheel.sh && cat scripts/install_triton_wheel.sh \\
\t&& make triton
RUN sed -i -e '4a  pip install numpy' scripts/install_deps.sh
RUN sed -i -e '2a pip install pytorch-triton' NOTES.txt
"""


def test_command_appended_to_a_script_by_sed(tmp_path):
    found = audit_file(tmp_path, "pytorch.dockerfile", PYTORCH_ROCM)
    assert "NPU360" in codes_of_line(found, 2)
    assert not codes_of_line(found, 5) and not codes_of_line(found, 6)


APT_LISTS = """\
FROM nvidia/cuda:11.8.0-cudnn8-devel-ubuntu22.04
RUN rm /etc/apt/sources.list.d/cuda.list
RUN rm -f /etc/apt/sources.list.d/cuda.list /etc/apt/sources.list.d/nvidia-ml.list && apt-get update
RUN apt-key del 7fa2af80 && \\
    rm -rf \\
       /etc/apt/sources.list.d/cuda*.list \\
    && apt-get update
RUN rm -f /tmp/keys.gpg && sudo rm /etc/apt/sources.list.d/nvidia-ml.list
RUN rm --force /etc/apt/sources.list.d/cuda.list
RUN sed -i 's/^deb/# deb/' /etc/apt/sources.list.d/cuda.list
"""


def test_apt_list_removal_rm_and_rm_f(tmp_path):
    """Lead decision 65: plain `rm` of NVIDIA's apt lists stops a CANN build (device); `rm -f` succeeds there."""
    found = audit_file(tmp_path, "Dockerfile", APT_LISTS)
    for line in (2, 8, 10):
        assert codes_of_line(found, line) == {"NPU085"}, line
    for line in (3, 6, 9):
        assert not codes_of_line(found, line), line


BUILD_SCRIPT = """\
#!/bin/bash
# Based nvidia/cuda:12.5.0-devel-ubuntu22.04
BASE_NAME="nvidia/cuda:12.5.0-devel-ubuntu22.04"
echo "Building Docker image on ${BASE_NAME} with tag ${DATE_TAG}..."
RUN_IMAGE="nvidia/cuda:12.5.0-runtime-ubuntu22.04"
echo "running ${RUN_IMAGE}"
docker run --rm "${RUN_IMAGE}" ./app
"""


def test_image_only_shown_in_messages(tmp_path):
    found = audit_file(tmp_path, "build.sh", BUILD_SCRIPT)
    assert not codes_of_line(found, 3) and not codes_of_line(found, 2)
    assert codes_of_line(found, 5) == {"NPU016"}          # pulled by the `docker run`


# review47 item 3: a function's `echo` read by `$(...)`, a CI step output and a settings file keep their image
def test_image_returned_or_exported_keeps_finding(tmp_path):
    fn = audit_file(tmp_path, "build_image.sh", """\
#!/bin/bash
base_image() {
  BASE_NAME="nvidia/cuda:12.5.0-devel-ubuntu22.04"
  echo "${BASE_NAME}"
}
docker build --build-arg BASE_IMAGE="$(base_image)" -t trainer:latest .
""")
    assert "NPU016" in codes_of_line(fn, 3)
    ci = audit_file(tmp_path, "ci_base.sh", """\
#!/bin/bash
CUDA_IMAGE=nvidia/cuda:12.1.1-cudnn8-runtime-ubuntu22.04
echo "::set-output name=base_image::${CUDA_IMAGE}"
""")
    assert "NPU016" in codes_of_line(ci, 2)
    settings = audit_file(tmp_path, "config.sh", """\
#!/bin/bash
BASE_IMAGE="nvidia/cuda:12.4.1-cudnn-devel-ubuntu22.04"
echo "config: base image ${BASE_IMAGE}"
""")
    assert "NPU016" in codes_of_line(settings, 2)


# review47 item 5: a `cd` target ends at `popd`, `cd -` and the end of its subshell
def test_make_folder_after_popd_and_subshell(tmp_path):
    found = audit_file(tmp_path, "build.sh", """\
#!/bin/bash
pushd /opt/nvidia/deepstream/deepstream/sources/libs/nvdsinfer
cp nvdsinfer.h ../../includes/
popd
make -j"$(nproc)"
(cd /opt/nvidia/deepstream/deepstream/sources/libs/nvdsinfer && ls)
make -j4
cd /opt/nvidia/deepstream/deepstream/sources/libs/nvdsinfer
cd -
make -C src
cd /opt/nvidia/deepstream/deepstream/sources/libs/nvdsinfer
make
""")
    assert not any(codes_of_line(found, n) for n in (5, 7, 10))
    assert codes_of_line(found, 12) == {"NPU915"}


# review47 item 8: a pod selector, a pod anti-affinity's labelSelector and AMD's GPU taint are not NVIDIA node placement
def test_pod_selectors_and_other_vendor_taints_quiet(tmp_path):
    found = audit_file(tmp_path, "deploy.yaml", DEPLOY)
    assert not any(f.code == "NPU028" for f in found), found


DEPLOY = """\
apiVersion: apps/v1
kind: Deployment
spec:
  selector:
    matchExpressions:
      - key: tier
        operator: In
        values: [router-gpu]
  template:
    spec:
      affinity:
        podAntiAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
            - labelSelector:
                matchExpressions:
                  - key: app
                    operator: In
                    values: [gpu]
              topologyKey: kubernetes.io/hostname
      tolerations:
        - key: amd.com/gpu
          operator: Exists
          effect: NoSchedule
"""


# review47 item 12: only the read inside the `-z` test is quiet; the same line's build read keeps its finding
def test_argument_presence_test_quiets_only_the_test(tmp_path):
    found = audit_file(tmp_path, "Dockerfile", """\
FROM python:3.10-slim
ARG TORCH_CUDA_ARCH_LIST
RUN [ -z "$TORCH_CUDA_ARCH_LIST" ] || python setup.py build_ext --arch "$TORCH_CUDA_ARCH_LIST"
RUN if [ -n "$TORCH_CUDA_ARCH_LIST" ]; then pip install -e . ; fi
""")
    assert [code for line, code, _ in found if line == 3] == ["NPU021"]     # the `--arch` read, not the test
    assert not codes_of_line(found, 4)


# review47 item 11: NPU912 only in a file that imports TensorFlow; a torch file's `gpu_options` object is its own
def test_gpu_options_only_in_tensorflow_files(tmp_path):
    tf = audit_file(tmp_path, "tf1.py", """\
import tensorflow as tf


def session():
    config = tf.ConfigProto()
    config.gpu_options.allow_growth = True
    return tf.Session(config=config)
""")
    assert codes_of_line(tf, 6) == {"NPU912"}
    torch_file = audit_file(tmp_path, "train.py", """\
import torch


def build(opts):
    gpu_options = opts.gpu_options
    gpu_options.allow_growth = True
    return torch.nn.Linear(2, 2)
""")
    assert not any(code == "NPU912" for _, code, _ in torch_file)
