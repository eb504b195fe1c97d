"""pd37 (session 27, project split test44): the general idioms behind test44's misses and flagged `none` lines.

- a config key the tree passes under its own name to a Lightning trainer (`Trainer(accelerator=cfg.train.accelerator)`)
  is Lightning's setting, whatever its section is called (bros' `train.accelerator: gpu`); the same key handed to the
  project's own function, or a count / fp16 value passed to the trainer, adds nothing (controls);
- a conda spec whose version is a script variable (`"pytorch-cuda=$PYTORCH_CUDA"`) names its package, and the
  variable's quoted default (`PYTORCH_CUDA="${SEARCH_R1_PYTORCH_CUDA:-12.1}"`) is a CUDA build parameter (info);
- a JSON config read key by key whose section and key the tree never names (hifi-gan's `dist_config.dist_backend`
  where the code only builds the generator) has no finding; a tree that reads `h.dist_config['dist_backend']`, or that
  reads nothing of the file, keeps it (controls).
"""
from __future__ import annotations

import textwrap

from tests.test_project_t23c import ENGINE, _codes, _tree

# clovaai/bros train.py, cut down
BROS_TRAIN = """\
    import torch
    from pytorch_lightning import Trainer
    from utils import get_config


    def main():
        cfg = get_config()
        trainer = Trainer(
            accelerator=cfg.train.accelerator,
            gpus=torch.cuda.device_count(),
            max_epochs=cfg.train.max_epochs,
            precision=16 if cfg.train.use_fp16 else 32,
            benchmark=cfg.cudnn_benchmark,
        )
        trainer.fit(build_module(cfg))
    """

BROS_CONFIG = """\
    workspace: ./finetune
    seed: 1
    cudnn_benchmark: True

    train:
      batch_size: 4
      max_epochs: 100
      use_fp16: True
      accelerator: gpu
      strategy:
        type: ddp
    """


def test_a_key_passed_to_a_lightning_trainer_under_its_own_name_is_lightnings_accelerator(tmp_path):
    root = _tree(tmp_path, {"train.py": BROS_TRAIN, "configs/default.yaml": BROS_CONFIG})
    assert (9, "NPU020") in _codes(root, "configs/default.yaml")


def test_the_same_key_handed_to_the_projects_own_function_adds_nothing(tmp_path):
    own = BROS_TRAIN.replace("trainer = Trainer(", "trainer = build_runner(")
    root = _tree(tmp_path, {"train.py": own, "configs/default.yaml": BROS_CONFIG})
    assert not [c for ln, c in _codes(root, "configs/default.yaml") if ln == 9]


def test_only_choices_are_read_under_their_own_name(tmp_path):
    # decisions 26 and 30: a device count or an fp16 precision passed to the trainer is no finding of the config
    code = BROS_TRAIN.replace("precision=16 if cfg.train.use_fp16 else 32", "precision=cfg.train.precision") \
        .replace("gpus=torch.cuda.device_count()", "gpus=cfg.train.gpus")
    config = BROS_CONFIG.replace("  use_fp16: True\n", "  precision: 16\n").replace("  batch_size: 4\n",
                                                                                     "  gpus: 2\n")
    root = _tree(tmp_path, {"train.py": code, "configs/default.yaml": config})
    assert _codes(root, "configs/default.yaml") == [(3, "NPU704"), (9, "NPU020")]     # cudnn_benchmark, accelerator


# microsoft/agent-lightning examples/search_r1/data_process.sh, cut down
CONDA_SCRIPT = """\
    #!/usr/bin/env bash
    set -euo pipefail
    PYTORCH_CUDA="${SEARCH_R1_PYTORCH_CUDA:-12.1}"
    PACKAGE="${SEARCH_R1_PACKAGE:-numpy}"
    if [[ "${SEARCH_R1_SKIP_RETRIEVER_INSTALL:-0}" != "1" ]]; then
        conda install -y \\
            "pytorch==2.4.0" \\
            "pytorch-cuda=$PYTORCH_CUDA" \\
            "$PACKAGE" \\
            -c pytorch -c nvidia
    fi
    """


def _shell(text: str) -> dict[int, list[tuple[str, str]]]:
    result = ENGINE.analyze_bytes(textwrap.dedent(text).encode(), "examples/data_process.sh")
    out: dict[int, list[tuple[str, str]]] = {}
    for f in result.findings:
        out.setdefault(f.line, []).append((f.code, f.severity))
    return out


def test_a_conda_spec_with_a_variable_version_names_its_cuda_package():
    found = _shell(CONDA_SCRIPT)
    assert ("NPU018", "error") in found[8]
    assert 9 not in found          # `"$PACKAGE"`: the name itself is the variable's


def test_a_quoted_default_cuda_version_is_a_build_parameter():
    found = _shell(CONDA_SCRIPT)
    assert found[3] == [("NPU018", "info")]
    assert 4 not in found           # a default that is no CUDA version


def test_a_cuda_named_variable_without_a_version_stays_quiet():
    found = _shell('#!/bin/bash\nPYTORCH_CUDA="${SEARCH_R1_PYTORCH_CUDA:-$DEFAULT}"\necho "$PYTORCH_CUDA"\n')
    assert 2 not in found


# jik876/hifi-gan's config as FreeVC / ppg-vc copy it, and the generator that reads it
HIFIGAN_CONFIG = """\
    {
        "resblock": "1",
        "num_gpus": 0,
        "batch_size": 16,
        "upsample_rates": [8,8,2,2],
        "upsample_kernel_sizes": [16,16,4,4],
        "upsample_initial_channel": 512,
        "resblock_kernel_sizes": [3,7,11],

        "dist_config": {
            "dist_backend": "nccl",
            "dist_url": "tcp://localhost:54321",
            "world_size": 1
        }
    }
    """

GENERATOR = """\
    import json
    import torch


    class AttrDict(dict):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            self.__dict__ = self


    class Generator(torch.nn.Module):
        def __init__(self, h):
            super().__init__()
            self.num_kernels = len(h.resblock_kernel_sizes)
            self.num_upsamples = len(h.upsample_rates)
            self.channels = h.upsample_initial_channel


    def load_generator(path):
        with open(path) as f:
            h = AttrDict(json.load(f))
        return Generator(h)
    """

TRAIN = """\
    import torch.distributed as dist


    def train(rank, a, h):
        if h.num_gpus > 1:
            dist.init_process_group(backend=h.dist_config['dist_backend'], init_method=h.dist_config['dist_url'],
                                    world_size=h.dist_config['world_size'] * h.num_gpus, rank=rank)
    """


def test_a_json_section_the_tree_never_names_is_no_finding(tmp_path):
    root = _tree(tmp_path, {"hifigan/models.py": GENERATOR, "hifigan/config.json": HIFIGAN_CONFIG})
    assert not _codes(root, "hifigan/config.json")


def test_the_section_the_training_script_reads_keeps_its_finding(tmp_path):
    root = _tree(tmp_path, {"hifigan/models.py": GENERATOR, "hifigan/train.py": TRAIN,
                            "hifigan/config.json": HIFIGAN_CONFIG})
    assert (11, "NPU122") in _codes(root, "hifigan/config.json")


def test_a_config_the_tree_reads_nothing_of_keeps_its_finding(tmp_path):
    root = _tree(tmp_path, {"hifigan/models.py": "import torch\n", "hifigan/config.json": HIFIGAN_CONFIG})
    assert (11, "NPU122") in _codes(root, "hifigan/config.json")


# hehao13/CameraCtrl (AnimateDiff's training scripts): NCCL as the default of the script's own init_dist
CAMERA_TRAIN = """\
    import argparse
    import os

    import torch
    import torch.distributed as dist


    def init_dist(launcher="slurm", backend='nccl', port=29500, **kwargs):
        if launcher == 'pytorch':
            torch.cuda.set_device(int(os.environ['RANK']) % torch.cuda.device_count())
            dist.init_process_group(backend=backend, **kwargs)


    def main(launcher, port):
        local_rank = init_dist(launcher=launcher, port=port)


    if __name__ == "__main__":
        parser = argparse.ArgumentParser()
        parser.add_argument("--config", type=str, required=True)
        parser.add_argument("--launcher", type=str, choices=["pytorch", "slurm"], default="pytorch")
        parser.add_argument("--port", type=int)
        args = parser.parse_args()
        main(launcher=args.launcher, port=args.port)
    """

DIST_RUN = """\
    #!/bin/bash
    CONFIG=$1
    GPUS=$2
    PT_SCRIPT=$3

    python -m torch.distributed.launch \\
        --nproc_per_node=$GPUS \\
        ${PT_SCRIPT} \\
            --config=${CONFIG} \\
            --launcher=pytorch
    """


def _launch_codes(root, rel: str) -> list[tuple[int, str]]:
    from tests.test_project_t23c import RULES, apply_tree_calls

    result = ENGINE.analyze_bytes((root / rel).read_bytes(), rel)
    apply_tree_calls([result], root, RULES, lambda: ENGINE.analyze_bytes)
    return sorted((f.line, f.code) for f in result.findings if f.code == "NPU143")


def test_a_launch_of_the_script_relying_on_its_nccl_default_is_distributed(tmp_path):
    launch = "#!/bin/bash\npython -m torch.distributed.launch --nproc_per_node=8 train.py --config=a.yaml\n"
    root = _tree(tmp_path, {"train.py": CAMERA_TRAIN, "dist_run.sh": launch})
    assert _launch_codes(root, "dist_run.sh") == [(2, "NPU143")]


def test_a_default_every_call_overrides_is_no_hard_coded_backend(tmp_path):
    code = CAMERA_TRAIN.replace("init_dist(launcher=launcher, port=port)",
                                "init_dist(launcher=launcher, backend=os.environ['BACKEND'], port=port)")
    launch = "#!/bin/bash\npython -m torch.distributed.launch --nproc_per_node=8 train.py --config=a.yaml\n"
    root = _tree(tmp_path, {"train.py": code, "dist_run.sh": launch})
    assert _launch_codes(root, "dist_run.sh") == []


def test_a_script_held_in_a_variable_is_each_script_that_takes_the_options(tmp_path):
    root = _tree(tmp_path, {"train_camera_control.py": CAMERA_TRAIN, "train_image_lora.py": CAMERA_TRAIN,
                            "tools/plot.py": "import argparse\n", "dist_run.sh": DIST_RUN})
    assert _launch_codes(root, "dist_run.sh") == [(6, "NPU143")]


def test_a_variable_script_stays_quiet_when_one_candidate_picks_its_backend(tmp_path):
    other = CAMERA_TRAIN.replace("init_dist(launcher=launcher, port=port)",
                                 "init_dist(launcher=launcher, backend=os.environ['BACKEND'], port=port)")
    root = _tree(tmp_path, {"train_camera_control.py": CAMERA_TRAIN, "train_image_lora.py": other,
                            "dist_run.sh": DIST_RUN})
    assert _launch_codes(root, "dist_run.sh") == []


def test_a_variable_script_without_options_says_nothing_of_which_script(tmp_path):
    bare = "#!/bin/bash\nSCRIPT=$1\ntorchrun --nproc_per_node=8 $SCRIPT\n"
    root = _tree(tmp_path, {"train_camera_control.py": CAMERA_TRAIN, "run.sh": bare})
    assert _launch_codes(root, "run.sh") == []


# microsoft/agent-lightning's pyproject.toml, cut down: a type-check group that takes torch from the CPU index
PYPROJECT = """\
    [project]
    name = "agentlightning"
    dependencies = ["torch>=2.3", "openai"]

    [tool.uv.sources]
    torch = [
      { index = "pytorch-cpu", group = "verl-cpu" },
    ]

    [[tool.uv.index]]
    name = "pytorch-cpu"
    url = "https://download.pytorch.org/whl/cpu"

    [dependency-groups]
    verl-cpu = [
        "verl>=0.7.1,<0.9.0",
        "torch",
    ]
    dev = [
        "torch",
    ]
    """


def _pyproject(text: str) -> list[tuple[int, str]]:
    result = ENGINE.analyze_bytes(textwrap.dedent(text).encode(), "pyproject.toml")
    return sorted((f.line, f.code) for f in result.findings)


def test_torch_of_a_group_uv_takes_from_the_cpu_index_is_the_build_torch_npu_pairs_with():
    found = _pyproject(PYPROJECT)
    assert (17, "NPU011") not in found
    assert (3, "NPU011") in found and (20, "NPU011") in found     # the project's own pin, another group's


def test_a_group_sourced_from_another_index_keeps_its_torch():
    found = _pyproject(PYPROJECT.replace('url = "https://download.pytorch.org/whl/cpu"',
                                         'url = "https://pypi.org/simple"'))
    assert (17, "NPU011") in found


def test_a_runs_saved_config_stays_quiet_though_the_trainer_takes_the_key(tmp_path):
    # pd35: a config saved beside a run's checkpoints is read back for the model only
    root = _tree(tmp_path, {"train.py": BROS_TRAIN, "runs/r1/config.yaml": BROS_CONFIG, "runs/r1/last.ckpt": ""})
    assert (9, "NPU020") not in _codes(root, "runs/r1/config.yaml")
