"""pd47 (session 30, heldout31 / heldout32): a config's accelerator the code picks itself by the hardware it finds.

foundry's every entry calls `set_accelerator_based_on_availability(cfg)`, which stores `cfg.trainer.accelerator`
("gpu" / "xpu" / "mps" / "cpu") in every arm of an `if torch.cuda.is_available():` chain before Fabric reads it: the
trainer group's `accelerator: gpu` decides nothing (no finding). Controls: a chain without an `else` (the config's value
stays where no probe holds) and a chain that stores another key keep the config's finding.
"""
from __future__ import annotations

from tests.test_project_t23c import _codes, _tree

# RosettaCommons/foundry src/foundry/utils/ddp.py and models/rf3/src/rf3/train.py, cut down
DDP = """\
    import torch


    def set_accelerator_based_on_availability(cfg):
        if torch.cuda.is_available():
            cfg.trainer.accelerator = "gpu"
        elif hasattr(torch, "xpu") and torch.xpu.is_available():
            cfg.trainer.accelerator = "xpu"
        elif torch.backends.mps.is_available():
            cfg.trainer.accelerator = "mps"
        else:
            cfg.trainer.accelerator = "cpu"
            cfg.trainer.devices_per_node = 1
        return cfg
    """

TRAIN = """\
    import hydra
    from lightning.fabric import Fabric

    from foundry.utils.ddp import set_accelerator_based_on_availability


    @hydra.main(config_path="../configs", config_name="train")
    def train(cfg):
        set_accelerator_based_on_availability(cfg)
        fabric = Fabric(accelerator=cfg.trainer.accelerator, devices=cfg.trainer.devices_per_node,
                        num_nodes=cfg.trainer.num_nodes, strategy=cfg.trainer.strategy)
        fabric.launch()
    """

TRAINER_YAML = """\
    strategy: ddp

    accelerator: gpu
    devices_per_node: 1
    num_nodes: 1
    """


def _findings(tmp_path, ddp: str) -> list[tuple[int, str]]:
    root = _tree(tmp_path, {"src/foundry/utils/ddp.py": ddp, "src/rf3/train.py": TRAIN,
                            "configs/trainer/ddp.yaml": TRAINER_YAML})
    return _codes(root, "configs/trainer/ddp.yaml")


def test_an_accelerator_the_code_picks_in_every_arm_of_a_probe_chain_is_no_finding(tmp_path):
    assert (3, "NPU020") not in _findings(tmp_path, DDP)


def test_a_chain_without_an_else_keeps_the_configs_accelerator(tmp_path):
    no_else = DDP.split("        else:")[0] + "        return cfg\n"
    assert (3, "NPU020") in _findings(tmp_path, no_else)


def test_a_chain_storing_another_key_keeps_the_configs_accelerator(tmp_path):
    other = DDP.replace("cfg.trainer.accelerator", "cfg.trainer.device_name")
    assert (3, "NPU020") in _findings(tmp_path, other)


def test_one_conditional_expression_on_the_probe_picks_it_too(tmp_path):
    one_line = """\
    import torch


    def set_accelerator_based_on_availability(cfg):
        cfg.trainer.accelerator = "gpu" if torch.cuda.is_available() else "cpu"
        return cfg
    """
    assert (3, "NPU020") not in _findings(tmp_path, one_line)
    assert (3, "NPU020") in _findings(tmp_path, one_line.replace('"gpu" if', 'cfg.trainer.accelerator if'))
