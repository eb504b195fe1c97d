"""pd6 (session 17, issue 15, test23 after the draw): a multi-process launch of a script that hard-codes NCCL
(NPU143) and srun lines whose options hold expansions (`srun -p $PARTITION ... ${SRUN_ARGS} python run.py`).

- VideoMAEv2's `srun ... python run_class_finetuning.py` (the script imports utils, whose init_distributed_mode sets
  `args.dist_backend = 'nccl'`) and MobileLLM's `torchrun --nproc_per_node=8 pretrain.py` (`backend="cpu:gloo,
  cuda:nccl"`) are reported on the line naming the script;
- a one-process `python run.py` of the same script is not (its distributed branch may never run), nor a launch of a
  script that chooses the backend from the device.
"""
from __future__ import annotations

from pathlib import Path

from tests.static_snippets import tree_codes_by_line, write_source



_write = write_source
_audit = tree_codes_by_line


def _video_tree(tmp_path: Path) -> Path:
    root = tmp_path / "VideoMAEv2"
    _write(root, "utils.py", """\
        import os

        import torch.distributed as dist


        def init_distributed_mode(args):
            if 'SLURM_PROCID' in os.environ:
                args.rank = int(os.environ['SLURM_PROCID'])
            args.dist_backend = 'nccl'
            dist.init_process_group(backend=args.dist_backend, init_method=args.dist_url,
                                    world_size=args.world_size, rank=args.rank)
        """)
    _write(root, "run_class_finetuning.py", """\
        import argparse

        import torch

        import utils


        def main(args):
            utils.init_distributed_mode(args)
        """)
    _write(root, "run_device_backend.py", """\
        import torch
        import torch.distributed as dist


        def main():
            dist.init_process_group(backend=dist.get_default_backend_for_device(torch.device("cuda")))
        """)
    return root


def test_an_srun_launch_whose_options_hold_expansions_reports_the_scripts_hard_coded_nccl(tmp_path):
    root = _video_tree(tmp_path)
    _write(root, "scripts/finetune/vit_b_k400_ft.sh", """\
        PARTITION=${PARTITION:-"video"}
        srun -p $PARTITION \\
                --job-name=${JOB_NAME} \\
                --gres=gpu:${GPUS_PER_NODE} \\
                --ntasks=${GPUS} \\
                --kill-on-bad-exit=1 \\
                --async \\
                ${SRUN_ARGS} \\
                python run_class_finetuning.py \\
                --model vit_base_patch16_224 \\
                ${PY_ARGS}
        """)
    got = _audit(root, "scripts/finetune/vit_b_k400_ft.sh")
    assert "NPU143" in got.get(9, set()), got
    assert not any("NPU143" in codes for line, codes in got.items() if line != 9), got


def test_torchrun_and_distributed_launch_are_multi_process_a_plain_python_line_is_not(tmp_path):
    root = _video_tree(tmp_path)
    _write(root, "run.sh", """\
        torchrun --nproc_per_node=8 run_class_finetuning.py --epochs 1
        python -m torch.distributed.launch --nproc_per_node=8 run_class_finetuning.py
        python run_class_finetuning.py --epochs 1
        # torchrun --nproc_per_node=8 run_class_finetuning.py
        torchrun --nproc_per_node=8 run_device_backend.py
        """)
    got = _audit(root, "run.sh")
    assert "NPU143" in got.get(1, set()) and "NPU143" in got.get(2, set()), got
    for line in (3, 4, 5):
        assert "NPU143" not in got.get(line, set()), got


def test_nccl_variables_written_to_deepspeed_env_are_reported_as_exports_are(tmp_path):
    # minRF's advanced/run_multi.sh: DeepSpeed exports each line of ~/.deepspeed_env on every node it starts
    root = tmp_path / "minRF"
    _write(root, "run_multi.sh", """\
        rm -f ~/.deepspeed_env
        echo "NCCL_P2P_DISABLE=1" > ~/.deepspeed_env
        echo "NCCL_P2P_LEVEL=NVL" >> ~/.deepspeed_env
        # echo "NCCL_SHM_DISABLE=1" >> ~/.deepspeed_env
        echo "NCCL_SHM_DISABLE=1" >> notes.txt
        echo "PYTHONPATH=/workspace" >> ~/.deepspeed_env
        """)
    got = _audit(root, "run_multi.sh")
    assert "NPU121" in got.get(2, set()) and "NPU121" in got.get(3, set()), got
    assert not any(line in got for line in (1, 4, 5, 6)), got


def test_a_quoted_sbatch_constraint_naming_gpu_features_is_a_gpu_request(tmp_path):
    root = tmp_path / "mdlm"
    _write(root, "train.sh", """\
        #!/bin/bash
        #SBATCH --constraint="[a5000|a6000|a100|3090]"
        #SBATCH --constraint="gpu-mid|gpu-high"
        #SBATCH --constraint="rh9"
        srun python -u -m main
        """)
    got = _audit(root, "train.sh")
    assert "NPU022" in got.get(2, set()) and "NPU022" in got.get(3, set()), got
    assert "NPU022" not in got.get(4, set()), got


def test_a_parameter_default_naming_nccl_is_not_a_hard_coded_backend(tmp_path):
    # LookaheadDecoding's lade/utils.py: `def config_lade(..., backend='nccl')` only starts a group when the script
    # asks for several workers (test21 labels its `deepspeed --num_gpus $GPUS eval_mtbench.py` line `none`)
    root = tmp_path / "LookaheadDecoding"
    _write(root, "lade/__init__.py", "from .utils import config_lade\n")
    _write(root, "lade/utils.py", """\
        import torch.distributed as dist


        def config_lade(DIST_WORKERS=None, backend='nccl'):
            if DIST_WORKERS is not None and DIST_WORKERS > 1:
                dist.init_process_group(backend)
        """)
    _write(root, "eval_mtbench.py", "import lade\n")
    _write(root, "run.sh", "deepspeed --num_gpus $GPUS eval_mtbench.py --level 0\n")
    assert "NPU143" not in _audit(root, "run.sh").get(1, set())


def test_a_file_that_picks_hccl_on_npu_does_not_hard_code_nccl(tmp_path):
    # ms-swift's swift/utils/torch_utils.py (vendored in VBench-2.0): hccl when torch_npu is there, nccl elif CUDA
    root = tmp_path / "swift"
    _write(root, "dist_utils.py", """\
        import torch
        import torch.distributed as dist
        from transformers.utils import is_torch_npu_available


        def init_process_group(backend=None):
            if backend is None:
                if is_torch_npu_available():
                    backend = 'hccl'
                elif torch.cuda.is_available():
                    backend = 'nccl'
                else:
                    backend = 'gloo'
            dist.init_process_group(backend=backend)
        """)
    _write(root, "sft.py", "from dist_utils import init_process_group\n\ninit_process_group()\n")
    _write(root, "train.sh", "NPROC_PER_NODE=4 torchrun --nproc_per_node=4 sft.py --model Qwen/Qwen2.5-7B\n")
    assert "NPU143" not in _audit(root, "train.sh").get(1, set())
