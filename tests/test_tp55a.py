"""tp55a (session 55, project test154 / test155): families the project-file readers missed on session 54's blind
splits test154 and test155, tuned on them from session 55. Each test is a realistic file with the lines that must be
found and the quiet lines beside them."""
from __future__ import annotations

from tests.static_snippets import audit_file, expect_line_codes, tree_codes_by_line

# a conda export of a code-model training env (conda-forge's CUDA compiler, split into the cuda-nvcc feedstock's
# outputs); the host compilers and a Jupyter plugin named for nvcc stay quiet
CONDA_EXPORT = """\
name: coder
channels:
  - conda-forge
  - defaults
dependencies:
  - binutils_linux-64=2.40=hbdbef99_2
  - cuda-nvcc=12.3.107=hcdd1206_1
  - cuda-nvcc-dev_linux-64=12.3.107=ha770c72_0
  - cuda-nvcc-impl=12.3.107=hd3aeb46_0
  - cuda-nvcc-tools=12.3.107=hd3aeb46_0
  - cuda-nvcc_linux-64=12.3.107=h8a487aa_1
  - gcc_linux-64=12.3.0=h76fc315_2
  - nvcc4jupyter=1.2.1
  - pip:
    - accelerate==0.25.0
"""


def test_conda_forge_cuda_nvcc_outputs(tmp_path):
    found = audit_file(tmp_path, "environment.yml", CONDA_EXPORT)
    expect_line_codes(found, {line: {"NPU018"} for line in (7, 8, 9, 10, 11)}, (6, 12, 13, 15))


# a `pip freeze` of a Theano-era conda env: libgpuarray's Python binding pygpu (CUDA / OpenCL arrays); Theano itself,
# GPyTorch and Pygments stay quiet
FROZEN = """\
mkl-service==2.3.0
networkx==2.4
numpy==1.18.1
Pygments==2.6.1
pygpu==0.7.6
gpytorch==1.1.1
Theano==1.0.4
torch==1.4.0
"""

THEANO_ENV = """\
name: theano
channels:
  - conda-forge
dependencies:
  - python=3.7
  - theano=1.0.4
  - libgpuarray=0.7.6
  - pygpu=0.7.6
  - mako
"""


def test_pygpu_and_libgpuarray(tmp_path):
    expect_line_codes(audit_file(tmp_path, "requirements.txt", FROZEN), {5: {"NPU440"}}, (1, 2, 3, 4, 6, 7))
    expect_line_codes(audit_file(tmp_path, "environment.yml", THEANO_ENV), {7: {"NPU440"}, 8: {"NPU440"}}, (5, 6, 9))


# an env setup script: the PyTorch spec (and a CUDA wheel pin) held in variables, installed by a quoted expansion;
# the assignments, echo text, a variable holding a path or several words, and one set from a command stay quiet
SETUP_ENV = """\
#!/bin/sh
pytorch_v="1.12"
PYTORCH_NIGHTLY=${PYTORCH_NIGHTLY:-0}
if [ "$PYTORCH_NIGHTLY" -eq 1 ]; then
  pytorch_v_arg="pytorch"
else
  pytorch_v_arg="pytorch=$pytorch_v"
fi
TORCH_WHEEL="torch==2.1.0+cu121"
EXTRAS="numpy scipy"
LOCAL_PKG=./third_party/pkg
BUILT=$(ls dist/*.whl)
echo "installing $pytorch_v_arg"
conda create -y -q -p "$env_path" \\
  python=3.9 \\
  "$pytorch_v_arg" \\
  torchaudio \\
  -c "pytorch$nightly" -c conda-forge
pip install "$TORCH_WHEEL"
pip install "$EXTRAS"
pip install "$LOCAL_PKG"
pip install "$BUILT"
"""


def test_install_word_from_a_variable_holding_a_spec(tmp_path):
    expect_line_codes(audit_file(tmp_path, "scripts/setup_env.sh", SETUP_ENV), {16: {"NPU011"}, 19: {"NPU018"}},
                      (5, 7, 9, 10, 11, 12, 13, 20, 21, 22))


# the PyTorch ImageNet example's launcher as depth-estimation trees copy it: `mp.spawn` one rank per GPU the process
# sees, each calling init_process_group(backend='nccl'); the shell script runs it from its own folder (`../tools/`)
SPAWN_PER_GPU = """\
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from parse_arg_train import TrainOptions


def main_worker(local_rank, ngpus_per_node, train_args):
    if train_args.distributed:
        torch.cuda.set_device(local_rank)
        dist.init_process_group(backend='nccl', init_method=train_args.dist_url,
                                world_size=train_args.world_size, rank=local_rank)


def main():
    train_args = TrainOptions().parse()
    ngpus_per_node = torch.cuda.device_count()
    train_args.world_size = ngpus_per_node * train_args.nnodes
    train_args.distributed = ngpus_per_node > 1
    if train_args.distributed:
        mp.spawn(main_worker, nprocs=ngpus_per_node, args=(ngpus_per_node, train_args))
    else:
        main_worker(0, ngpus_per_node, train_args)


if __name__ == '__main__':
    main()
"""

PARSE_ARGS = """\
import argparse


class TrainOptions:
    def parse(self):
        parser = argparse.ArgumentParser()
        parser.add_argument('--dataroot', default='datasets')
        parser.add_argument('--batchsize', type=int, default=2)
        parser.add_argument('--nnodes', type=int, default=1)
        parser.add_argument('--dist_url', default='tcp://127.0.0.1:22')
        return parser.parse_args()
"""

TRAIN_FOUR_GPUS = """\

export PYTHONPATH=../../Train:${PYTHONPATH}
export CUDA_VISIBLE_DEVICES=0,1,2,3

python ../tools/train.py \\
--dataroot datasets \\
--batchsize 16
"""

TRAIN_ONE_GPU = """\
export CUDA_VISIBLE_DEVICES=0
python ../tools/train.py --dataroot datasets --batchsize 4
CUDA_VISIBLE_DEVICES=0,1 python ../tools/train.py --dataroot datasets --batchsize 8
CUDA_VISIBLE_DEVICES=$GPUS python ../tools/train.py --dataroot datasets
"""


def test_launch_showing_several_gpus_to_a_script_spawning_one_rank_per_gpu(tmp_path):
    files = {"Train/tools/train.py": SPAWN_PER_GPU, "Train/tools/parse_arg_train.py": PARSE_ARGS,
             "Train/scripts/train.sh": TRAIN_FOUR_GPUS, "Train/scripts/train_one.sh": TRAIN_ONE_GPU}
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    codes = tree_codes_by_line(tmp_path, "Train/scripts/train.sh")
    assert "NPU143" in codes.get(5, set())
    codes = tree_codes_by_line(tmp_path, "Train/scripts/train_one.sh")
    assert "NPU143" in codes.get(3, set())         # the command's own prefix shows two GPUs
    for line in (2, 4):                             # one GPU exported; the script's own expansion
        assert "NPU143" not in codes.get(line, set()), line
