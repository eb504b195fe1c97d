"""Project-file families behind the misses on splits test151 / test152 (issue 15, session 54, helper tp54a; tuned on
them from then on). Each test is a realistic file with the lines that must be found and the lines that must not."""
from __future__ import annotations

import textwrap

from auditor.rules import load_rules
from auditor.static import StaticEngine

ENGINE = StaticEngine(load_rules())


def _codes(name: str, text: str) -> list[tuple[int, str]]:
    result = ENGINE.analyze_bytes(textwrap.dedent(text).encode(), name)
    return [(f.line, f.code) for f in result.findings]


# a federated-learning sweep: the FedProx loop's `--mu=$mu` lost its `\`, so bash runs the lines after it as a
# command named `--comm_round=50` (the options glued to their `\` are still options: bash drops the `\`+newline and
# the next line's indent separates the words); the device they select is what a port changes all the same
_SWEEP = """\
    for partition in noniid-labeldir iid-diff-quantity
    do
    \tfor mu in 0.001 0.01 0.1 1
    \tdo
    \t\tpython experiments.py --model=mlp \\
    \t\t\t--dataset=$dataset \\
    \t\t\t--alg=fedprox \\
    \t\t\t--mu=$mu
    \t\t\t--comm_round=50 \\
    \t\t\t--partition=$partition \\
    \t\t\t--beta=0.5\\
    \t\t\t--device='{device}'\\
    \t\t\t--datadir='./data/' \\
    \t\t\t--init_seed=$init_seed
    \tdone
    done
    """


def test_options_after_a_lost_continuation_backslash_are_read():
    assert _codes("scripts/fedprox.sh", _SWEEP.format(device="cuda:0")) == [(12, "NPU019")]
    # the same with Windows line ends (the scripts were saved with CRLF)
    crlf = textwrap.dedent(_SWEEP.format(device="cuda:0")).replace("\n", "\r\n").encode()
    assert [(f.line, f.code) for f in ENGINE.analyze_bytes(crlf, "scripts/fedprox.sh").findings] == [(12, "NPU019")]


def test_options_after_a_lost_continuation_backslash_on_the_cpu_stay_quiet():
    assert _codes("scripts/fedprox.sh", _SWEEP.format(device="cpu")) == []
    # a variable assignment is no option: `DEVICE=cuda:0` alone sets a shell variable no command reads
    assert _codes("scripts/env.sh", "MODE=eval\npython eval.py --mode $MODE\n") == []


# 3D human-motion trees: `conda env export` of an environment where DROID-SLAM was built from its submodule; pip's
# freeze lists what DROID-SLAM's setup.py installed (`droid_backends`, no version: 0.0.0; `lietorch` 0.2), both CUDA
# extensions, and no PyPI release provides `droid-backends`
_FROZEN_ENV = """\
    name: motion
    channels:
      - defaults
    dependencies:
      - python=3.10.13
      - pip:
        - chumpy==0.70
        - droid-backends==0.0.0
        - einops==0.7.0
        - lietorch==0.2
        - smplx==0.1.28
    """


def test_frozen_droid_slam_extensions_in_an_environment_are_kernels():
    found = _codes("env_build.yaml", _FROZEN_ENV)
    assert found == [(8, "NPU360"), (10, "NPU360")]


def test_frozen_environment_without_cuda_extensions_stays_quiet():
    assert _codes("env_build.yaml", _FROZEN_ENV.replace("    - droid-backends==0.0.0\n", "")
                  .replace("    - lietorch==0.2\n", "")) == []


_DROID_INSTALL = """\
    #!/usr/bin/env bash
    set -e
    pip install -r requirements.txt
    pip install -e .

    # install DROID-SLAM
    cd {folder}
    python setup.py install
    cd ../..
    """


def test_setup_py_install_in_a_droid_slam_checkout_is_a_kernel_build():
    found = _codes("install.sh", _DROID_INSTALL.format(folder="third-party/DROID-SLAM"))
    assert (8, "NPU360") in found


def test_setup_py_install_of_another_folder_stays_quiet():
    assert _codes("install.sh", _DROID_INSTALL.format(folder="third-party/ViTPose")) == []


# a conda environment file without `channels:` (conda then takes the configured channels): still an environment
_NO_CHANNELS = """\
    name: hmr
    dependencies:
      - opencv
      - {tf}
      - vispy
      - pyqt
    """


def test_environment_file_without_channels_is_read_as_one():
    assert _codes("hmr.yml", _NO_CHANNELS.format(tf="tensorflow-gpu")) == [(4, "NPU440")]


def test_environment_file_without_channels_on_cpu_and_other_dependency_lists_stay_quiet():
    assert _codes("hmr.yml", _NO_CHANNELS.format(tf="tensorflow")) == []
    # a Helm chart's `dependencies:` are mappings, not package specs: not a conda environment
    chart = """\
        apiVersion: v2
        name: inference
        version: 0.1.0
        dependencies:
          - name: gpu-operator
            version: v23.9.1
            repository: https://helm.ngc.nvidia.com/nvidia
        """
    # (read as a config: NVIDIA's Helm repository is the one finding, as before)
    assert _codes("Chart.yaml", chart) == [(7, "NPU017")]


# a detectron2-style tree: `train_net.py` calls the package's own `launch()`, which spawns one process per GPU and
# creates an NCCL group after asserting CUDA (no CPU path); detectron2 upstream picks GLOO without a GPU instead
# (facebookresearch/detectron2 detectron2/engine/launch.py: `backend="NCCL" if has_gpu else "GLOO"`)
_LAUNCH = '''\
import torch
import torch.distributed as dist
import torch.multiprocessing as mp

__all__ = ["launch"]


def launch(main_func, num_gpus_per_machine, num_machines=1, machine_rank=0, dist_url=None, args=()):
    world_size = num_machines * num_gpus_per_machine
    if world_size > 1:
        mp.spawn(_distributed_worker, nprocs=num_gpus_per_machine,
                 args=(main_func, world_size, num_gpus_per_machine, machine_rank, dist_url, args), daemon=False)
    else:
        main_func(*args)


def _distributed_worker(local_rank, main_func, world_size, num_gpus_per_machine, machine_rank, dist_url, args):
    {check}
    global_rank = machine_rank * num_gpus_per_machine + local_rank
    dist.init_process_group(backend={backend}, init_method=dist_url, world_size=world_size, rank=global_rank)
    torch.cuda.set_device(local_rank)
    main_func(*args)
'''

_ENGINE_INIT = "from .launch import *\nfrom .defaults import default_argument_parser\n"

_DEFAULTS = '''\
import argparse


def default_argument_parser():
    parser = argparse.ArgumentParser()
    parser.add_argument("--config-file", default="", metavar="FILE")
    parser.add_argument("--num-gpus", type=int, default=1, help="number of gpus *per machine*")
    parser.add_argument("--num-machines", type=int, default=1)
    parser.add_argument("--dist-url", default="auto")
    return parser
'''

_TRAIN_NET = '''\
from vlkit.engine import default_argument_parser, launch


def main(args):
    return args


if __name__ == "__main__":
    args = default_argument_parser().parse_args()
    launch(main, args.num_gpus, num_machines=args.num_machines, dist_url=args.dist_url, args=(args,))
'''

_TRAIN_SH = """\
python3 train_net.py --num-gpus 4 --config-file ./configs/vqa/vqa.yaml
CUDA_VISIBLE_DEVICES=0 python3 train_net.py --config-file configs/caption/base.yaml --num-gpus 1 OUTPUT_DIR ./out
python3 train_net.py --config-file ./configs/vqa/vqa.yaml --num-gpus=1
python3 train_net.py --config-file ./configs/vqa/vqa.yaml
"""


_ASSERT = 'assert torch.cuda.is_available(), "cuda is not available. Please check your installation."'


def _launcher_tree(root, backend: str, check: str = _ASSERT) -> None:
    from static_snippets import write_tree

    write_tree(root, {"vlkit/__init__.py": "", "vlkit/engine/__init__.py": _ENGINE_INIT,
                      "vlkit/engine/launch.py": _LAUNCH.format(backend=backend, check=check),
                      "vlkit/engine/defaults.py": _DEFAULTS, "train_net.py": _TRAIN_NET,
                      "configs/vqa/train.sh": _TRAIN_SH})


def test_launch_through_the_trees_own_nccl_launcher_starts_nccl_ranks(tmp_path):
    from static_snippets import tree_codes_by_line

    _launcher_tree(tmp_path, '"NCCL"')
    found = tree_codes_by_line(tmp_path, "configs/vqa/train.sh")
    assert "NPU143" in found.get(1, set())
    # one rank (`--num-gpus 1`, `--num-gpus=1`: the launcher calls main in place) and no rank option: no group
    for line in (2, 3, 4):
        assert "NPU143" not in found.get(line, set()), line


def test_launch_through_a_launcher_that_falls_back_to_gloo_stays_quiet(tmp_path):
    from static_snippets import tree_codes_by_line

    _launcher_tree(tmp_path, '"NCCL" if has_gpu else "GLOO"', check="has_gpu = torch.cuda.is_available()")
    found = tree_codes_by_line(tmp_path, "configs/vqa/train.sh")
    assert all("NPU143" not in codes for codes in found.values())


# an AI2 Beaker experiment spec: each task's `envVars` list sets the container's variables, as Kubernetes' `env` does
_BEAKER = """\
    version: v2-alpha
    description: instruction tuning
    tasks:
      - name: instruct
        image:
          beaker: someone/ni-exp
        command: ["deepspeed", "src/run_s2s.py", "--do_train"]
        envVars:
          - name: {name}
            value: PCI_BUS_ID
          - name: TRANSFORMERS_CACHE
            value: ./cache/
        result:
          path: /output
    """


def test_beaker_task_env_vars_are_the_containers_environment():
    assert (9, "NPU004") in _codes("beaker_configs/default_experiment.yaml", _BEAKER.format(name="CUDA_DEVICE_ORDER"))


def test_beaker_task_env_vars_without_cuda_names_stay_quiet():
    found = _codes("beaker_configs/default_experiment.yaml", _BEAKER.format(name="WANDB_PROJECT"))
    assert all(line not in (9, 10, 11, 12) for line, _ in found)
