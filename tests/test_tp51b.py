"""tp51b (session 51, project test144): families the project-file readers missed on session 50's blind project split
test144 (quantization and inference, tracking, protein, audio generation, medical LLMs, segmentation). Recall: a list
of command strings a `for` loop hands to `os.popen` / `os.system` (a Colab set-up cell's CUDA wheel installs), an
evaluation harness's vLLM model name on any launcher (`--model hf-causal-vllm`, NPU447), FlashInfer's headers on a
CUDA extension's include path (NPU986), config keys a script loads by path and hands to submitit through a local
name or an f-string (`gpus_per_node=num_gpus_per_node`, `slurm_gres=f"gpu:{n},VRAM:{args.vram}"`), pip commands
naming pip through `shutil.which` and a folder under the file's own. Quiet: a `gpus:` count the code passes as
Lightning's `devices=` (decision 26), comments, messages, lists no loop runs, zero counts, a config the code never
names. Shaped on DiffSBDD, Me-LLaMA, punica, trackformer and QQQ, with other real shapes beside each."""
from __future__ import annotations

import json

from tests.static_snippets import audit_file, codes_of_line, tree_findings, write_tree

SETUP_CELL = """\
#@title Install dependencies (this will take about 5-10 minutes)
import os

commands = [
    "pip install torch==2.0.1 --extra-index-url https://download.pytorch.org/whl/cu118",
    "pip install pytorch-lightning==1.8.4",
    "pip install pyg-lib torch-scatter -f https://data.pyg.org/whl/torch-2.0.1+cu118.html",
    "conda install openbabel -c conda-forge",
]
notes = ["pip install torch==2.0.1 --extra-index-url https://download.pytorch.org/whl/cu118"]

errors = {}
for cmd in commands:
    # os.system(cmd)
    with os.popen(cmd) as f:
        out = f.read()
for note in notes:
    print(note)
for step in ("pip install xformers --index-url https://download.pytorch.org/whl/cu121",):
    os.system(step)
"""


def test_commands_a_loop_runs(tmp_path):
    found = audit_file(tmp_path, "colab/setup.py", SETUP_CELL)
    assert "NPU018" in codes_of_line(found, 5)       # torch from the cu118 index
    assert "NPU018" in codes_of_line(found, 7)       # PyG's wheel page of a CUDA torch build
    for line in (6, 8, 10, 14, 18):                  # a plain pin, conda, a list no runner gets, a comment, a print
        assert not codes_of_line(found, line) & {"NPU018", "NPU011"}, line
    assert "NPU018" in codes_of_line(found, 19)      # a literal tuple in the loop's header


def test_commands_a_loop_runs_in_a_notebook(tmp_path):
    cell = {"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [],
            "source": SETUP_CELL.splitlines(keepends=True)}
    notebook = json.dumps({"nbformat": 4, "nbformat_minor": 0, "metadata": {}, "cells": [cell]}, indent=1)
    found = audit_file(tmp_path, "colab/DiffSBDD.ipynb", notebook)
    assert "NPU018" in codes_of_line(found, 5)
    assert "NPU018" in codes_of_line(found, 7)
    assert not codes_of_line(found, 10) & {"NPU018", "NPU011"}


EVALUATION = """\
#! /bin/bash
export CUDA_VISIBLE_DEVICES=
poetry run python src/eval.py \\
    --model hf-causal-vllm \\
    --model_args "use_accelerate=True,pretrained=meta-llama/Llama-2-7b-chat-hf,use_fast=False" \\
    --tasks "PUBMEDQA,MedQA"
python src/eval.py --model hf-causal --model_args "pretrained=meta-llama/Llama-2-7b-chat-hf"
# python src/eval.py --model hf-causal-vllm
echo "run with --model hf-causal-vllm for speed"
accelerate launch --num_processes=8 -m lmms_eval --model vllm --model_args model=$CKPT_PATH --tasks $TASK
python train.py --model llama --backend hf
"""


def test_evaluation_harness_vllm_model_names(tmp_path):
    found = audit_file(tmp_path, "scripts/run_evaluation.sh", EVALUATION)
    assert codes_of_line(found, 4) == {"NPU447"}
    assert codes_of_line(found, 10) == {"NPU447"}
    for line in (7, 8, 9, 11):                 # the HF backend, a comment, a message, another model name
        assert "NPU447" not in codes_of_line(found, line), line


SETUP_WITH_HEADERS = """\
import pathlib
import setuptools
import torch.utils.cpp_extension as torch_cpp_ext

root = pathlib.Path(__name__).parent
# third_party/flashinfer/include holds FlashInfer's headers
print("flashinfer/include")
setuptools.setup(
    ext_modules=[torch_cpp_ext.CUDAExtension(
        name="punica.ops._kernels",
        sources=["csrc/punica_ops.cc", "csrc/flashinfer_adapter/flashinfer_all.cu"],
        include_dirs=[
            str(root.resolve() / "third_party/cutlass/include"),
            str(root.resolve() / "third_party/flashinfer/include"),
            str(root.resolve() / "third_party/fmt/include"),
        ],
    )],
    cmdclass={"build_ext": torch_cpp_ext.BuildExtension},
)
"""

JIT_BUILD = """\
from torch.utils.cpp_extension import load

ops = load(name="attn_ops", sources=["csrc/attn.cu"], extra_include_paths=["3rdparty/flashinfer/include/"])
"""


def test_flashinfer_headers_in_a_build(tmp_path):
    found = audit_file(tmp_path, "setup.py", SETUP_WITH_HEADERS)
    assert "NPU986" in codes_of_line(found, 14)
    assert "NPU451" in codes_of_line(found, 13) and "NPU986" not in codes_of_line(found, 13)   # CUTLASS's own rule
    for line in (6, 7, 15):                          # a comment, a message, another library's headers
        assert "NPU986" not in codes_of_line(found, line), line
    assert "NPU986" in codes_of_line(audit_file(tmp_path / "jit", "build.py", JIT_BUILD), 3)


BENCH_CMAKE = """\
set(BENCH_SRCS sgmv_flashinfer.cu)
foreach(bench_source ${BENCH_SRCS})
    add_executable(${bench_name} ${bench_source})
    # third_party/flashinfer/include is a submodule
    target_include_directories(${bench_name} PUBLIC ${PROJECT_SOURCE_DIR}/third_party/flashinfer/include)
    target_include_directories(${bench_name} PUBLIC ${PROJECT_SOURCE_DIR}/third_party/fmt/include)
endforeach()
"""


def test_flashinfer_headers_in_a_cmake_build(tmp_path):
    found = audit_file(tmp_path, "benchmarks/CMakeLists.txt", BENCH_CMAKE)
    assert "NPU986" in codes_of_line(found, 5)
    assert "NPU986" not in codes_of_line(found, 4) | codes_of_line(found, 6)


DIFFSBDD_CONFIG = """\
run_name: 'ca-cond'
n_epochs: 1000
batch_size: 16
lr: 1.0e-3
gpus: 4
"""

DIFFSBDD_TRAIN = """\
import argparse
import yaml
import pytorch_lightning as pl


def merge_args_and_yaml(args, config_dict):
    arg_dict = args.__dict__
    for key, value in config_dict.items():
        arg_dict[key] = value
    return args


if __name__ == "__main__":
    p = argparse.ArgumentParser()
    p.add_argument("--config", type=str)
    args = p.parse_args()
    with open(args.config) as f:
        config = yaml.safe_load(f)
    args = merge_args_and_yaml(args, config)
    model = build_model(lr=args.lr, batch_size=args.batch_size, run_name=args.run_name)
    trainer = pl.Trainer(max_epochs=args.n_epochs, accelerator="gpu", devices=args.gpus,
                         strategy=("ddp" if args.gpus > 1 else None))
"""

LAUNCHER = """\
# a job launcher's request, read by no Python of the tree
name: ca-cond
gpus: 4
"""


def test_counts_passed_as_devices_are_counts(tmp_path):
    root = write_tree(tmp_path, {"configs/crossdock_ca_cond.yml": DIFFSBDD_CONFIG, "train.py": DIFFSBDD_TRAIN,
                                 "jobs/launch.yml": LAUNCHER})
    # decision 26: the count is `none`; the pair is `accelerator="gpu"` on the Trainer line
    assert not codes_of_line(tree_findings(root, "configs/crossdock_ca_cond.yml"), 5)
    assert "NPU028" in codes_of_line(tree_findings(root, "jobs/launch.yml"), 3)     # no code hands it to `devices=`


SUBMIT = """\
# Number of gpus to request on each node
num_gpus: 1
vram: 12GB
# memory allocated per GPU in GB
mem_per_gpu: 20
nodes: 1
slurm_partition: ''
slurm_constraint: ''
"""

CPU_SUBMIT = """\
num_gpus: 0
vram: 12GB
"""

RUN_WITH_SUBMITIT = """\
import submitit
import sacred

ex = sacred.Experiment('submit', ingredients=[])
ex.add_config('cfgs/submit.yaml')


def main(args):
    executor = submitit.AutoExecutor(folder=args.job_dir, cluster=args.cluster)
    num_gpus_per_node = args.num_gpus
    if args.slurm_gres:
        slurm_gres = args.slurm_gres
    else:
        slurm_gres = f'gpu:{num_gpus_per_node},VRAM:{args.vram}'
    executor.update_parameters(
        mem_gb=args.mem_per_gpu * num_gpus_per_node,
        gpus_per_node=num_gpus_per_node,
        tasks_per_node=num_gpus_per_node,
        nodes=args.nodes,
        slurm_partition=args.slurm_partition,
        slurm_constraint=args.slurm_constraint,
        slurm_gres=slurm_gres,
    )
"""


def test_submitit_settings_of_a_config_loaded_by_path(tmp_path):
    root = write_tree(tmp_path, {"cfgs/submit.yaml": SUBMIT, "src/run_with_submitit.py": RUN_WITH_SUBMITIT,
                                 "cfgs/other.yaml": SUBMIT, "cpu/cfgs/submit.yaml": CPU_SUBMIT})
    found = tree_findings(root, "cfgs/submit.yaml")
    assert codes_of_line(found, 2) == {"NPU022"}        # handed to `gpus_per_node=` through a local name
    assert codes_of_line(found, 3) == {"NPU028"}        # formatted into the job's gres `gpu:N,VRAM:12GB`
    for line in (1, 4, 5, 6, 7, 8):                     # comments, a memory amount, counts, empty settings
        assert not codes_of_line(found, line), line
    assert not tree_findings(root, "cfgs/other.yaml")  # a config the code never names
    assert not codes_of_line(tree_findings(root, "cpu/cfgs/submit.yaml"), 1)     # no GPU asked for


QQQ_SETUP = """\
from setuptools import setup, find_packages
import subprocess, os, shutil
import pathlib

HERE = pathlib.Path(__file__).absolute().parent


def install_fast_hadamard():
    # install fast hadamard transform
    hadamard_dir = os.path.join(HERE, "third-party/fast-hadamard-transform")
    pip = shutil.which("pip")
    retcode = subprocess.call([pip, "install", "-v", "-e", hadamard_dir])
    print("pip install -e", hadamard_dir)


install_fast_hadamard()
setup(name="QQQ", packages=find_packages())
"""

GITMODULES = """\
[submodule "third-party/fast-hadamard-transform"]
\tpath = third-party/fast-hadamard-transform
\turl = https://github.com/Dao-AILab/fast-hadamard-transform.git
"""

OPS_SETUP = """\
from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CUDAExtension

setup(name="ops", ext_modules=[CUDAExtension("ops._C", ["src/k.cu"])], cmdclass={"build_ext": BuildExtension})
"""

INSTALL = """\
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ops_dir = os.path.join(HERE, "ops")
docs_dir = os.path.join(HERE, "docs")
subprocess.check_call([sys.executable, "-m", "pip", "install", "-e", ops_dir])
subprocess.check_call([sys.executable, "-m", "pip", "install", "-e", docs_dir])
"""


def test_pip_commands_through_which_and_the_files_folder(tmp_path):
    root = write_tree(tmp_path / "qqq", {"setup.py": QQQ_SETUP, ".gitmodules": GITMODULES})
    found = tree_findings(root, "setup.py")
    assert "NPU360" in codes_of_line(found, 12)     # the submodule's CUDA package, on the install's line
    for line in (9, 10, 11, 13):                     # a comment, the path, the lookup, a message
        assert not codes_of_line(found, line), line
    root = write_tree(tmp_path / "local", {"tools/install.py": INSTALL, "tools/ops/setup.py": OPS_SETUP,
                                           "tools/docs/setup.py": "from setuptools import setup\nsetup(name='d')\n"})
    found = tree_findings(root, "tools/install.py")
    assert codes_of_line(found, 8) == {"NPU370"}     # its folder's setup.py builds a CUDAExtension
    assert not codes_of_line(found, 9)               # a pure-Python folder


VOCODER_ARGS = """\
resblock: '1'
upsample_rates: [5, 4, 2, 2, 2]
num_gpus: 0
dist_config:
  dist_backend: nccl
  dist_url: tcp://localhost:54341
  world_size: 1
"""

VOCODER = """\
def build(h):
    return Generator(h.resblock, h.upsample_rates, h.upsample_kernel_sizes)
"""

MEL_SPEC = """\
from argparse import Namespace

from torch.distributed import init_process_group


def process(rank, args):
    if args.num_gpus > 1:
        init_process_group(backend=args.dist_config['dist_backend'], init_method=args.dist_config['dist_url'],
                           world_size=args.dist_config['world_size'] * args.num_gpus, rank=rank)


if __name__ == '__main__':
    args = Namespace(num_gpus=2)
    args.dist_config = {
        "dist_backend": "nccl",
        "dist_url": "tcp://localhost:54189",
        "world_size": 1
    }
    process(0, args)
"""

HIFIGAN_TRAIN = """\
import json

from torch.distributed import init_process_group


def train(rank, a, h):
    init_process_group(backend=h.dist_config['dist_backend'], init_method=h.dist_config['dist_url'],
                       world_size=h.dist_config['world_size'] * h.num_gpus, rank=rank)


def main(config):
    h = AttrDict(json.loads(open(config).read()))
    h.dist_config['world_size'] = 2
    train(0, None, h)
"""


def test_a_section_the_code_sets_from_its_own_literal(tmp_path):
    # decision 35: the code reads the dict it wrote itself; nothing reads the config's `dist_backend`
    files = {"configs/bigvgan_args.yaml": VOCODER_ARGS, "vocoder/bigvgan.py": VOCODER, "preprocess/mel_spec.py": MEL_SPEC}
    assert not codes_of_line(tree_findings(write_tree(tmp_path / "own", files), "configs/bigvgan_args.yaml"), 5)
    # a trainer that reads the loaded config's section (hifi-gan's train.py) keeps the finding
    files["train.py"] = HIFIGAN_TRAIN
    assert "NPU122" in codes_of_line(tree_findings(write_tree(tmp_path / "read", files), "configs/bigvgan_args.yaml"), 5)
