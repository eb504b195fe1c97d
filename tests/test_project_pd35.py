"""pd35 (session 26, project splits test20..test38 pooled): config findings whose value no run uses.

- a config key the code reads only after storing a constant into it in the same function (the DeiT / MAE / croco
  `init_distributed_mode(args)` copy: `args.dist_backend = "nccl"` then `backend=args.dist_backend`; CUT3R's Hydra
  configs carry `dist_backend: 'nccl'`), with controls: the store under an `if`, and a read before the store;
- a `**args` inside a map helper that calls a callable it was given (dust3r's `starstarcall`) hands no section over;
- a run's saved config beside its checkpoints (mattergen's `checkpoints/<model>/config.yaml`, Hydra's
  `.hydra/config.yaml`) loses its trainer accelerator finding; the same config elsewhere keeps it.
"""
from __future__ import annotations

from tests.test_project_t23c import _codes, _tree  # one tree writer and one bench-shaped reading of a config

# CUT3R's src/croco/utils/misc.py, cut down (the same function is in DeiT, MAE, DINO, croco, dust3r)
MISC = """\
    import os
    import torch


    def init_distributed_mode(args):
        if "RANK" in os.environ and "WORLD_SIZE" in os.environ:
            args.rank = int(os.environ["RANK"])
            args.world_size = int(os.environ["WORLD_SIZE"])
            args.gpu = int(os.environ["LOCAL_RANK"])
        else:
            print("Not using distributed mode")
            args.distributed = False
            return

        args.distributed = True

        torch.cuda.set_device(args.gpu)
        args.dist_backend = "nccl"
        print("| distributed init (rank {}): {}, gpu {}".format(args.rank, args.dist_url, args.gpu), flush=True)
        torch.distributed.init_process_group(
            backend=args.dist_backend,
            init_method=args.dist_url,
            world_size=args.world_size,
            rank=args.rank,
        )
    """

# dust3r's src/dust3r/utils/parallel.py helper
PARALLEL = """\
    def starcall(args):
        function, args = args
        return function(*args)


    def starstarcall(args):
        function, args = args
        return function(**args)
    """

CONFIG = """\
    model: ARCroco3DStereo(ARCroco3DStereoConfig(state_size=768))
    num_views: 4
    train_dataset: 1000 @ Co3d_Multi(split='train', num_views=${num_views})
    world_size: 1
    local-rank: -1
    dist_url: 'env://'
    rank: 0
    gpu: 0
    distributed: False
    dist_backend: 'nccl'
    """


def test_a_backend_the_code_overwrites_before_reading_is_dropped(tmp_path):
    root = _tree(tmp_path, {"src/croco/utils/misc.py": MISC, "src/dust3r/utils/parallel.py": PARALLEL,
                            "config/stage2.yaml": CONFIG})
    assert (10, "NPU122") not in _codes(root, "config/stage2.yaml")


def test_the_backend_stays_when_the_store_is_conditional(tmp_path):
    misc = MISC.replace('    args.dist_backend = "nccl"\n',
                        '    if not getattr(args, "dist_backend", None):\n        args.dist_backend = "nccl"\n')
    root = _tree(tmp_path, {"src/croco/utils/misc.py": misc, "config/stage2.yaml": CONFIG})
    assert (10, "NPU122") in _codes(root, "config/stage2.yaml")


def test_the_backend_stays_when_read_before_the_store(tmp_path):
    misc = MISC.replace("    torch.cuda.set_device(args.gpu)\n",
                        "    torch.cuda.set_device(args.gpu)\n    print(args.dist_backend)\n")
    root = _tree(tmp_path, {"src/croco/utils/misc.py": misc, "config/stage2.yaml": CONFIG})
    assert (10, "NPU122") in _codes(root, "config/stage2.yaml")


def test_a_config_handed_whole_keeps_the_backend(tmp_path):
    train = """\
        import hydra
        from src.croco.utils import misc


        def main(args):
            trainer = build(**args)
            misc.init_distributed_mode(args)
        """
    root = _tree(tmp_path, {"src/croco/utils/misc.py": MISC, "train.py": train, "config/stage2.yaml": CONFIG})
    assert (10, "NPU122") in _codes(root, "config/stage2.yaml")


# mattergen's checkpoints/chemical_system/config.yaml (a released model's saved run config), cut down
SAVED = """\
    lightning_module:
      _target_: mattergen.diffusion.lightning_module.DiffusionLightningModule
    trainer:
      _target_: pytorch_lightning.Trainer
      accelerator: gpu
      devices: 1
      precision: 32
    """


NAMES_CONFIG = "The model is built from `checkpoints/<model>/config.yaml`.\n"   # named: only the saved-run reading decides


def test_a_config_saved_beside_checkpoints_loses_its_accelerator(tmp_path):
    root = _tree(tmp_path, {"checkpoints/chemical_system/config.yaml": SAVED,
                            "checkpoints/chemical_system/checkpoints/last.ckpt.txt": "lfs pointer\n",
                            "README.md": NAMES_CONFIG})
    assert not [c for _, c in _codes(root, "checkpoints/chemical_system/config.yaml") if c == "NPU020"]


def test_a_hydra_saved_run_config_loses_its_accelerator(tmp_path):
    root = _tree(tmp_path, {"outputs/2024-01-01/.hydra/config.yaml": SAVED, "README.md": NAMES_CONFIG})
    assert not [c for _, c in _codes(root, "outputs/2024-01-01/.hydra/config.yaml") if c == "NPU020"]


def test_the_same_trainer_config_a_run_starts_from_keeps_it(tmp_path):
    root = _tree(tmp_path, {"mattergen/conf/trainer/default.yaml": SAVED,
                            "mattergen/conf/default.yaml": "defaults:\n  - trainer: default\n"})
    assert (5, "NPU020") in _codes(root, "mattergen/conf/trainer/default.yaml")

