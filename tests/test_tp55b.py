"""Project-file families behind the misses on splits test159 / test148 (issue 15, session 55, helper tp55b; tuned on
them from then on). Each test is a realistic tree or file with the lines that must be found and the lines that must
not."""
from __future__ import annotations

# a crowd-counting tree with a copy of mmengine's dist utils (OpenMMLab's `init_dist(launcher, backend='nccl',
# **kwargs)`, which names HCCL only in `get_comm_device`'s comparison) and a trainer that calls `init_dist(args.launcher)`
_DIST_UTILS = """\
# Copyright (c) OpenMMLab. All rights reserved.
import os

import torch
import torch.multiprocessing as mp
from torch import distributed as torch_dist


def init_dist(launcher, backend={backend}, **kwargs) -> None:
    if mp.get_start_method(allow_none=True) is None:
        mp.set_start_method('spawn')
    if launcher == 'pytorch':
        _init_dist_pytorch(backend, **kwargs)
    elif launcher == 'slurm':
        _init_dist_slurm(backend, **kwargs)
    else:
        raise ValueError(f'Invalid launcher type: {{launcher}}')


def _init_dist_pytorch(backend, **kwargs) -> None:
    rank = int(os.environ['RANK'])
    num_gpus = torch.cuda.device_count()
    torch.cuda.set_device(rank % num_gpus)
    torch_dist.init_process_group(backend=backend, **kwargs)


def _init_dist_slurm(backend, port=None) -> None:
    proc_id = int(os.environ['SLURM_PROCID'])
    torch.cuda.set_device(proc_id % torch.cuda.device_count())
    torch_dist.init_process_group(backend=backend)


def get_comm_device(group=None) -> torch.device:
    backend = torch_dist.get_backend(group)
    if backend == 'hccl':
        import torch_npu  # noqa: F401
        return torch.device('npu', torch.npu.current_device())
    elif backend == torch_dist.Backend.NCCL:
        return torch.device('cuda', torch.cuda.current_device())
    return torch.device('cpu')
"""

_TRAIN = """\
import argparse
import os

import torch
from lib.utils.dist_utils import init_dist


def parse_args():
    parser = argparse.ArgumentParser(description='Train crowd counting network')
    parser.add_argument('--cfg', required=True, type=str)
    parser.add_argument('--launcher', choices=['none', 'pytorch', 'slurm'], default='none')
    return parser.parse_args()


def main():
    args = parse_args()
    if torch.cuda.device_count() > 1:
        {call}
    device = torch.device('cuda:{{}}'.format(int(os.environ.get('LOCAL_RANK', 0))))


if __name__ == '__main__':
    main()
"""

_TRAIN_SH = """\
CONFIG=$1
GPUS_ID=${2:-0}
export CUDA_VISIBLE_DEVICES=${GPUS_ID:-"0"}

python -m torch.distributed.launch \\
    --nproc_per_node=2 \\
    --master_port=29000 \\
    tools/train_cc.py --cfg=$CONFIG --launcher="pytorch"
"""


def _tree(root, backend: str = "'nccl'", call: str = "init_dist(args.launcher)") -> None:
    from static_snippets import write_tree

    write_tree(root, {"lib/__init__.py": "", "lib/utils/__init__.py": "",
                      "lib/utils/dist_utils.py": _DIST_UTILS.format(backend=backend),
                      "tools/train_cc.py": _TRAIN.format(call=call), "train.sh": _TRAIN_SH})


def test_launch_of_a_script_leaving_an_imported_nccl_default_starts_nccl_ranks(tmp_path):
    from static_snippets import tree_codes_by_line

    _tree(tmp_path)
    found = tree_codes_by_line(tmp_path, "train.sh")
    assert "NPU143" in found.get(5, set())
    # the module path form (`from lib.utils import dist_utils` then `dist_utils.init_dist(...)`) reads the same
    _tree(tmp_path, call="dist_utils.init_dist(args.launcher)")
    (tmp_path / "tools/train_cc.py").write_text(
        _TRAIN.format(call="dist_utils.init_dist(args.launcher)").replace(
            "from lib.utils.dist_utils import init_dist", "from lib.utils import dist_utils"))
    assert "NPU143" in tree_codes_by_line(tmp_path, "train.sh").get(5, set())


def test_launch_of_a_script_passing_its_own_backend_or_gloo_default_stays_quiet(tmp_path):
    from static_snippets import tree_codes_by_line

    # the script passes the backend itself (`init_dist(args.launcher, backend='gloo')`), or the default is gloo
    for backend, call in (("'nccl'", "init_dist(args.launcher, backend='gloo')"),
                          ("'nccl'", "init_dist(args.launcher, 'gloo')"),
                          ("'gloo'", "init_dist(args.launcher)")):
        _tree(tmp_path, backend, call)
        found = tree_codes_by_line(tmp_path, "train.sh")
        assert all("NPU143" not in codes for codes in found.values()), (backend, call)
    # mmengine's own init_dist picks HCCL where torch_npu is there (`backend='hccl'` chosen, not compared): quiet
    _tree(tmp_path)
    held = (tmp_path / "lib/utils/dist_utils.py").read_text()
    (tmp_path / "lib/utils/dist_utils.py").write_text(held.replace(
        "    torch_dist.init_process_group(backend=backend, **kwargs)\n",
        "    if hasattr(torch, 'npu') and torch.npu.is_available():\n        backend = 'hccl'\n"
        "    torch_dist.init_process_group(backend=backend, **kwargs)\n", 1))
    assert all("NPU143" not in codes for codes in tree_codes_by_line(tmp_path, "train.sh").values())


# a spiking-network library's image: `ARG NVIDIA_30XX=false` picks a final stage by name, and `ENV` sets the
# container's own environment, which the NVIDIA container toolkit reads
_DOCKERFILE = """\
ARG DEPS=development
ARG NVIDIA_30XX=false

FROM python:3.8-slim AS base-default
ENV NVIDIA_VISIBLE_DEVICES=all

FROM base-default AS nvidia-30xx-false
FROM base-default AS nvidia-30xx-true
FROM nvidia-30xx-${NVIDIA_30XX} AS final
"""


def test_nvidia_variable_set_by_env_in_a_dockerfile_is_read_by_the_cuda_stack():
    from auditor.rules import load_rules
    from auditor.static import StaticEngine

    found = [(f.line, f.code) for f in StaticEngine(load_rules()).analyze_bytes(_DOCKERFILE.encode(),
                                                                                 "Dockerfile").findings]
    assert (5, "NPU004") in found


def test_nvidia_named_build_argument_in_a_dockerfile_stays_quiet():
    from auditor.rules import load_rules
    from auditor.static import StaticEngine

    found = [(f.line, f.code) for f in StaticEngine(load_rules()).analyze_bytes(_DOCKERFILE.encode(),
                                                                                 "Dockerfile").findings]
    assert not [code for line, code in found if line == 2]


# a SLAM tree's setup.py (DROID-SLAM's): the `'nvcc': [` slot holds one -gencode flag per line
_SETUP = """\
from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CUDAExtension

setup(
    name='droid_backends',
    ext_modules=[
        CUDAExtension('droid_backends',
            sources=['src/droid.cpp', 'src/droid_kernels.cu'],
            extra_compile_args={
                'cxx': ['-O3'],
                'nvcc': {first}
                    '-gencode=arch=compute_70,code=sm_70',
                    '-gencode=arch=compute_80,code=sm_80',
                ]
            }),
    ],
    cmdclass={'build_ext': BuildExtension}
)
"""


def _setup_codes(first: str) -> dict[int, set[str]]:
    from auditor.rules import load_rules
    from auditor.static import StaticEngine

    out: dict[int, set[str]] = {}
    for f in StaticEngine(load_rules()).analyze_bytes(_SETUP.replace("{first}", first).encode(), "setup.py").findings:
        out.setdefault(f.line, set()).add(f.code)
    return out


def test_nvcc_slot_is_reported_on_its_key_line():
    found = _setup_codes("['-O3',")
    assert "NPU353" in found.get(11, set())       # the `'nvcc':` key: the build's one decision (decision 18)
    # a flag on the key's own line is still its own finding (`'nvcc': ['-O3', '--use_fast_math']`)
    assert "NPU369" in _setup_codes("['--use_fast_math',").get(11, set())


def test_nvcc_slot_flags_on_later_lines_stay_quiet():
    for first in ("['-O3',", "["):
        found = _setup_codes(first)
        assert not (found.get(12, set()) | found.get(13, set())), first


# a zju3dv-style NeRF config: the encoder factory builds torch-ngp's CUDA hash grid for every `cuda_*` type
_NERF_CONFIG = """\
task: nerf
gpus: [0]
network_module: lib.networks.nerf.network

network:
    nerf:
        W: 64
        D: 1
    xyz_encoder:
        type: '{xyz}'
        input_dim: 3
    dir_encoder:
        type: 'frequency'
        input_dim: 3
        freq: 2
"""


def _config_codes(xyz: str) -> dict[int, set[str]]:
    from auditor.rules import load_rules
    from auditor.static import StaticEngine

    out: dict[int, set[str]] = {}
    for f in StaticEngine(load_rules()).analyze_bytes(_NERF_CONFIG.format(xyz=xyz).encode(),
                                                      "configs/nerf/nerf_ngp.yaml").findings:
        out.setdefault(f.line, set()).add(f.code)
    return out


def test_cuda_hash_grid_encoder_config_is_a_kernel_choice():
    assert "NPU900" in _config_codes("cuda_hashgrid").get(10, set())
    assert "NPU900" in _config_codes("cuda_hashgrid_4d").get(10, set())


def test_pytorch_encoder_configs_stay_quiet():
    for xyz in ("frequency", "hashgrid", "cuda"):
        assert all("NPU900" not in codes for codes in _config_codes(xyz).values()), xyz
