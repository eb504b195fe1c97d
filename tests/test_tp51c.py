"""tp51c (session 51, project test145): families the project-file readers missed on session 50's blind project split
(speech, graph learning, remote sensing, LLM pretraining trees). Recall: PyG find-links pages named by a CUDA variable
(NPU018), CMake defines that pick the CUDA backend or cuDNN's location (NPU021), cuDNN archives and the CUDA installer
named by their files and a cuDNN repository cloned (NPU018), `apt-mark hold` of CUDA packages, torch's `+cu` label held
in a shell variable, DeepSpeed's `sparse_attention` block (NPU947). Quiet: a launch that passes the option whose
default is the launched script's NCCL backend (the option's line carries it, NPU122). Shaped on
Non-Homophily-Large-Scale, wav2letter / flashlight, bitsandbytes, kaldifeat, solaris and ru-gpts; each with controls
(comments, messages, CPU values, other packages and keys of the same form)."""
from __future__ import annotations

from tests.static_snippets import audit_file, codes_of_line, expect_line_codes, tree_codes_by_line


PYG_INSTALL = """\
#!/bin/bash
CUDA=$1
pip install torch==1.7.1+$CUDA -f https://download.pytorch.org/whl/torch_stable.html
pip install --no-index torch-scatter==2.0.5 -f https://pytorch-geometric.com/whl/torch-1.7.0+$CUDA.html
pip install torch-sparse -f https://data.pyg.org/whl/torch-${TORCH}+${CUDA_VERSION}.html
pip install torch-cluster -f https://data.pyg.org/whl/torch-2.1.0+cu${CU}.html
# pip install torch-scatter -f https://data.pyg.org/whl/torch-1.7.0+$CUDA.html
echo "pip install torch-scatter -f https://data.pyg.org/whl/torch-1.7.0+$CUDA.html"
pip install torch-scatter -f https://data.pyg.org/whl/torch-2.1.0+cpu.html
pip install torch-geometric==1.6.3
"""


def test_pyg_pages_named_by_a_cuda_variable(tmp_path):
    found = audit_file(tmp_path, "install.sh", PYG_INSTALL)
    for line in (3, 4, 5, 6):
        assert "NPU018" in codes_of_line(found, line), line
    expect_line_codes(found, {}, (2, 7, 8, 9, 10))


PYG_CPU_INSTALL = """\
#!/bin/bash
# CPU-only environment for the docs build
TORCH=1.13.0
CUDA=cpu
pip install torch==${TORCH} --index-url https://download.pytorch.org/whl/cpu
pip install torch-scatter torch-sparse -f https://data.pyg.org/whl/torch-${TORCH}+${CUDA}.html
"""

PYG_DEFAULT_INSTALL = """\
#!/bin/bash
# usage: bash install.sh cpu|cu117
CUDA=${1:-cpu}
pip install torch-scatter==2.1.0 -f https://data.pyg.org/whl/torch-1.13.0+${CUDA}.html
CUDA_TAG=cu117
pip install torch-cluster -f https://data.pyg.org/whl/torch-1.13.0+${CUDA_TAG}.html
"""


def test_pyg_page_whose_variable_the_script_sets_to_cpu(tmp_path):
    # review51 item 7: the page's variable read through the script's own assignment
    expect_line_codes(audit_file(tmp_path, "install_cpu.sh", PYG_CPU_INSTALL), {}, (4, 5, 6))
    found = audit_file(tmp_path / "d", "install.sh", PYG_DEFAULT_INSTALL)
    assert (4, "NPU018", "info") in found        # `${1:-cpu}`: CUDA only when a caller passes a CUDA build
    assert (6, "NPU018", "error") in found       # a CUDA value the script sets itself


CMAKE_BUILDS = """\
#!/bin/bash
git clone https://github.com/facebookresearch/flashlight.git
cd flashlight && mkdir -p build && cd build
cmake .. -DFL_BACKEND=CUDA -DFL_BUILD_TESTS=OFF -DFL_BUILD_EXAMPLES=OFF
cmake .. -DCMAKE_BUILD_TYPE=Release -DFLASHLIGHT_BACKEND=CUDA
cmake -DCOMPUTE_BACKEND=cuda -S .
cmake -DGPU_RUNTIME=CUDA ..
cmake .. -DFL_BACKEND=CPU
cmake -DCOMPUTE_BACKEND=cpu -S .
cmake -DGPU_RUNTIME=HIP ..
# cmake .. -DFL_BACKEND=CUDA
echo "configure with -DFL_BACKEND=CUDA for GPUs"
cmake -DCMAKE_BUILD_TYPE=$BUILD_TYPE -DCUDNN_INCLUDE_PATH=d:/a/cudnn/include -DCUDNN_LIBRARY_PATH=d:/a/cudnn/lib/cudnn.lib ..
export KALDIFEAT_CMAKE_ARGS="-DCMAKE_BUILD_TYPE=$BUILD_TYPE -DCUDNN_INCLUDE_PATH=d:/a/cudnn/include"
cmake -DCMAKE_BUILD_TYPE=Release -DPYTHON_EXECUTABLE=/usr/bin/python3 ..
"""

FLASHLIGHT_DOCKERFILE = """\
FROM flml/flashlight:cuda-latest
RUN cd /root/flashlight && mkdir -p build && \\
    cd build && cmake .. -DCMAKE_BUILD_TYPE=Release -DFLASHLIGHT_BACKEND=CUDA && \\
    make -j8
RUN cd /root/other && cmake .. -DCMAKE_BUILD_TYPE=Release -DFLASHLIGHT_BACKEND=CPU && make -j8
"""


def test_cmake_cuda_backends_and_cudnn_locations(tmp_path):
    found = audit_file(tmp_path, "build.sh", CMAKE_BUILDS)
    for line in (4, 5, 6, 7, 13, 14):
        assert "NPU021" in codes_of_line(found, line), line
    expect_line_codes(found, {}, (8, 9, 10, 11, 12, 15))
    docker = audit_file(tmp_path / "docker", "Dockerfile", FLASHLIGHT_DOCKERFILE)
    assert "NPU021" in codes_of_line(docker, 3)
    assert "NPU021" not in codes_of_line(docker, 5)


WINDOWS_CUDA_JOB = """\
name: windows cuda
on: [push]
jobs:
  build:
    runs-on: windows-latest
    steps:
      - name: Remove CUDA installation package
        shell: bash
        run: |
          rm "C:/hostedtoolcache/windows/cuda_installer-windows/${{ matrix.cuda }}/x64/cuda_installer_${{ matrix.cuda }}.exe"
      - name: Download cuDNN
        shell: bash
        run: |
          GIT_LFS_SKIP_SMUDGE=1 git clone https://huggingface.co/someone/cudnn-for-windows
          cd cudnn-for-windows
          git lfs pull --include="cudnn-windows-x86_64-8.4.1.50_cuda11.6-archive.zip"
          unzip cudnn-windows-x86_64-8.4.1.50_cuda11.6-archive.zip
          rm cudnn-windows-x86_64-8.4.1.50_cuda11.6-archive.zip
          ls -lh *
          echo "unpacked cudnn-windows-x86_64-8.4.1.50_cuda11.6-archive.zip"
      - name: Install PyTorch
        shell: bash
        run: |
          version=${{ matrix.cuda }}
          v=${version:0:2}${version:3:1}
          if [ ${v} -eq 102 ]; then v=""; else v="+cu${v}"; fi
          python3 -m pip install -qq torch==${{ matrix.torch }}${v} numpy
          echo "+cu${v}"
          w="+cpu"
"""

CUDNN_SCRIPT = """\
#!/bin/bash
wget https://developer.download.nvidia.com/compute/cudnn/redist/cudnn/linux-x86_64/cudnn-linux-x86_64-8.9.7.29_cuda12-archive.tar.xz
tar -xvf cudnn-linux-x86_64-8.9.7.29_cuda12-archive.tar.xz
tar -xzvf cudnn-11.2-linux-x64-v8.1.0.77.tgz
sudo cp cudnn-*-archive/include/cudnn*.h /usr/local/cuda/include
git clone https://github.com/NVIDIA/cudnn-frontend.git
# tar -xvf cudnn-linux-x86_64-8.9.7.29_cuda12-archive.tar.xz
tar -xvf openblas-0.3.21.tar.gz
git clone https://github.com/someone/cudnn_notes_and_docs_mirror.git
"""


def test_cudnn_archives_cuda_installer_and_cuda_label(tmp_path):
    found = audit_file(tmp_path, ".github/workflows/run-tests-windows-cuda.yml", WINDOWS_CUDA_JOB)
    for line in (10, 14, 16, 17, 18, 26):
        assert "NPU018" in codes_of_line(found, line), line
    # listing files, a message naming the archive or the label, a CPU label stay quiet
    expect_line_codes(found, {}, (15, 19, 20, 24, 25, 28, 29))
    script = audit_file(tmp_path / "s", "install_cudnn_deps.sh", CUDNN_SCRIPT)
    for line in (2, 3, 4):
        assert "NPU018" in codes_of_line(script, line), line
    assert len([f for f in script if f[0] == 2]) == 1       # the download's URL finding says it once
    # NVIDIA's cudnn-frontend stays a library built for NVIDIA GPUs (NPU440, test8's third_party labels)
    assert codes_of_line(script, 6) == {"NPU440"}
    expect_line_codes(script, {}, (7, 8, 9))


CPU_GUARD = """\
#!/bin/bash
# fail early when the installed torch is a CUDA build: this image is for the CPU runners
VER=$(python -c "import torch; print(torch.__version__)")
if echo "$VER" | grep -q "+cu118"; then
    echo "expected a CPU build of torch, got $VER" >&2
    exit 1
fi
if [ "$SUFFIX" = "+cu118" ]; then exit 1; fi
if [[ "$SUFFIX" == "+cu${CU}" ]]; then exit 1; fi
case "$SUFFIX" in
    "+cu118") exit 1 ;;
esac
test "$SUFFIX" = "+cu118" && exit 1
v="+cu${CUDA_VERSION}"
pip install "torch==${TORCH}${v}" -f https://download.pytorch.org/whl/torch_stable.html
"""


def test_cuda_label_compared_with_is_no_install(tmp_path):
    # review51 item 8: a grep pattern, a test operand or a case pattern is compared with, never installed
    found = audit_file(tmp_path, "ci/check_env.sh", CPU_GUARD)
    expect_line_codes(found, {}, (4, 8, 9, 11, 13))
    assert "NPU018" in codes_of_line(found, 14)      # the label held for the install stays


SOLARIS_DOCKERFILE = """\
FROM nvidia/cuda:9.2-devel-ubuntu16.04
RUN apt-get update && apt-get install -y --no-install-recommends \\
    bc \\
    libcudnn7=7.3.0.29-1+cuda9.0 \\
    && apt-mark hold libcudnn7 && \\
    rm -rf /var/lib/apt/lists/*
RUN apt-mark hold python3-numpy
RUN apt-mark showhold
RUN apt-mark hold libopencv-dev nvidia-opencv-dev nvidia-opencv \\
    && apt-get install -y --no-install-recommends libopencv-core-dev
"""


def test_apt_mark_hold_of_cuda_packages(tmp_path):
    found = audit_file(tmp_path, "docker/gpu/Dockerfile", SOLARIS_DOCKERFILE)
    assert "NPU018" in codes_of_line(found, 4) and "NPU018" in codes_of_line(found, 5)
    # NVIDIA's CUDA-built OpenCV of a Jetson base image kept by name (zed-ros2-wrapper, test100's device label)
    assert "NPU018" in codes_of_line(found, 9)
    expect_line_codes(found, {}, (7, 8, 10))
    # a hold installs nothing: its message says why the step fails (review51 item 11)
    from auditor.runner import run_static

    messages = {f.line: f.message for r in run_static([tmp_path], jobs=1).results for f in r.findings
                if f.code == "NPU018"}
    assert messages[5].startswith("`apt-mark hold libcudnn7` marks an NVIDIA CUDA package")
    assert "installs CUDA" in messages[4]


DS_SPARSE = """\
{
  "train_micro_batch_size_per_gpu": 2,
  "gradient_accumulation_steps": 1,
  "fp16": {
    "enabled": true
  },
  "zero_optimization": {
    "stage": 2
  },
  "sparse_attention": {
    "mode": "fixed",
    "block": 16,
    "num_local_blocks": 8
  }
}
"""

DS_SPARSE_YAML = """\
train_micro_batch_size_per_gpu: 4
zero_optimization:
  stage: 1
sparse_attention:
  mode: bigbird
  block: 16
"""

NOT_DEEPSPEED = """\
model:
  sparse_attention:
    mode: fixed
"""


def test_deepspeed_sparse_attention_block(tmp_path):
    found = audit_file(tmp_path, "src/deepspeed_config/gpt3_xl_sparse_2048.json", DS_SPARSE)
    expect_line_codes(found, {10: {"NPU947"}}, (11, 12, 13))
    assert "NPU947" in codes_of_line(audit_file(tmp_path / "y", "configs/ds_config.yaml", DS_SPARSE_YAML), 4)
    # a key of the same name in another tool's config (no DeepSpeed keys) stays quiet
    assert not any(f[1] == "NPU947" for f in audit_file(tmp_path / "n", "configs/model.yaml", NOT_DEEPSPEED))


HF_TRAINER = """\
from transformers import AutoModelForCausalLM, Trainer, TrainingArguments

model = AutoModelForCausalLM.from_pretrained("Qwen/Qwen2-0.5B")
args = TrainingArguments(output_dir="out", deepspeed="ds_config.json", bf16=True)
Trainer(model=model, args=args).train()
"""

SPARSE_LAYER = """\
import torch


class ParallelSelfAttention(torch.nn.Module):
    def __init__(self, hidden_size, num_heads, sparsity_config=None):
        super().__init__()
        self.sparse = sparsity_config is not None
        if self.sparse:
            from deepspeed.ops.sparse_attention import SparseSelfAttention
            self.sparse_self_attention = SparseSelfAttention(sparsity_config)
"""


def test_sparse_attention_block_no_model_builds_is_info(tmp_path):
    # review51 item 6: the block only configures sparsity; the model builds SparseSelfAttention from it (DeepSpeed's
    # sparse attention tutorial). An HF Trainer tree that never imports DeepSpeed's sparse ops: info
    from tests.static_snippets import dedented_tree

    found = dedented_tree(tmp_path / "hf", {"ds_config.json": DS_SPARSE, "train.py": HF_TRAINER})
    assert found[("ds_config.json", 10)]["NPU947"] == "info"
    # a tree whose model builds it (ru-gpts' mpu/transformer.py) keeps the error
    built = dedented_tree(tmp_path / "mpu", {"ds_config.json": DS_SPARSE, "train.py": HF_TRAINER,
                                             "src/mpu/transformer.py": SPARSE_LAYER})
    assert built[("ds_config.json", 10)]["NPU947"] == "error"
    # a config audited with no Python file beside it keeps the error: nothing says which model reads it
    alone = dedented_tree(tmp_path / "alone", {"ds_config.json": DS_SPARSE})
    assert alone[("ds_config.json", 10)]["NPU947"] == "error"


ARGUMENTS = """\
import argparse


def add_training_args(parser):
    group = parser.add_argument_group('train', 'training configurations')
    group.add_argument('--distributed-backend', default='nccl',
                       help='which backend to use for distributed training. One of [gloo, nccl]')
    group.add_argument('--local_rank', type=int, default=None)
    return parser
"""

PRETRAIN = """\
import torch
from src.arguments import add_training_args


def initialize_distributed(args):
    torch.distributed.init_process_group(backend=args.distributed_backend, init_method="env://")
"""

FINETUNE = """\
#!/bin/bash
NUM_GPUS_PER_WORKER=1
gpt_options=" \\
       --num-layers 24 \\
       --distributed-backend nccl \\
       --fp16 \\
"
run_cmd="python -m torch.distributed.launch --nproc_per_node=${NUM_GPUS_PER_WORKER} pretrain_gpt3.py $@ ${gpt_options}"
eval "${run_cmd}"
"""

DEFAULT_BACKEND = """\
#!/bin/bash
python -m torch.distributed.launch --nproc_per_node=8 pretrain_gpt3.py --num-layers 24 --fp16
"""


def test_launch_passing_the_backend_option_leaves_it_to_the_option(tmp_path):
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "__init__.py").write_text("")
    (tmp_path / "src" / "arguments.py").write_text(ARGUMENTS)
    (tmp_path / "pretrain_gpt3.py").write_text(PRETRAIN)
    (tmp_path / "scripts").mkdir()
    (tmp_path / "scripts" / "finetune.sh").write_text(FINETUNE)
    (tmp_path / "scripts" / "default.sh").write_text(DEFAULT_BACKEND)
    passed = tree_codes_by_line(tmp_path, "scripts/finetune.sh")
    assert "NPU122" in passed.get(5, set())
    assert "NPU143" not in passed.get(8, set())
    # the launch that leaves the default in place starts NCCL process groups (decision 33)
    assert "NPU143" in tree_codes_by_line(tmp_path, "scripts/default.sh").get(2, set())
