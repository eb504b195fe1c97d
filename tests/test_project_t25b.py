"""t25b (session 25, project test35): a lower-case top-level key of a Hydra / OmegaConf config that none of the
config's readers reads (open-pi-zero's `device: cuda`, while its agents build `torch.device(f"cuda:{cfg.gpu_id}")`),
with controls: the same key read as `cfg.device`, as `args.device` after an argparse merge, a config handed whole
to Hydra's `instantiate`, and an accelerate-style file (no Hydra marks) whose library reads keys the tree never names."""
from __future__ import annotations

from tests.test_project_t23c import _codes, _tree  # one tree writer and one bench-shaped reading of a config


# open-pi-zero's scripts/run.py and src/agent/eval.py, cut down
RUN = """\
    import hydra
    import torch
    from omegaconf import OmegaConf, open_dict


    def _main(cfg: OmegaConf):
        OmegaConf.resolve(cfg)
        multi_gpu = torch.cuda.device_count() > 1 or cfg.get("n_nodes", 1) > 1
        with open_dict(cfg):
            cfg.gpu_id = 0
            cfg.multi_gpu = multi_gpu
        seed = cfg.get("seed", 42)
        cls = hydra.utils.get_class(cfg._target_)
        agent = cls(cfg)
        agent.run()


    @hydra.main(version_base=None, config_path="../config")
    def main(cfg: OmegaConf):
        _main(cfg)
    """

AGENT = """\
    import hydra
    import torch


    class EvalAgent:
        def __init__(self, cfg):
            self.n_eval_episode = cfg.n_eval_episode
            self.device = torch.device(f"cuda:{cfg.gpu_id}")
            self.dtype = torch.bfloat16 if cfg.get("use_bf16", False) else torch.float32
            self.env_adapter = hydra.utils.instantiate(cfg.env.adapter)
            self.model.to(self.device)
            if self.data.device != self.device:
                pass
    """

CONFIG = """\
    defaults:
      - _self_
    hydra:
      run:
        dir: ${log_dir}
    _target_: src.agent.eval.EvalAgent

    log_dir: ${oc.env:VLA_LOG_DIR}/eval_fractal/${name}_${seed}
    name:
    device: cuda
    seed: 42
    n_eval_episode: 100
    use_bf16: False
    ema_device: cuda
    data:
      split: val
    env:
      adapter:
        _target_: src.agent.env_adapter.simpler.BridgeSimplerAdapter
    """


def test_a_top_level_key_no_reader_of_the_hydra_config_reads_is_dropped(tmp_path):
    root = _tree(tmp_path, {"scripts/run.py": RUN, "src/agent/eval.py": AGENT,
                            "config/eval/bridge.yaml": CONFIG})
    # `device: cuda` (line 10) goes: `cfg` reads its siblings (`cfg.gpu_id`, `cfg.get("seed")`), never `device`;
    # `self.device` is the agent's own field and `self.data.device` a tensor's under the `data` section.
    # `ema_device: cuda` (line 14), which no code reads either, goes too
    codes = _codes(root, "config/eval/bridge.yaml")
    assert (10, "NPU019") not in codes and (14, "NPU019") not in codes


def test_the_key_read_by_the_config_root_stays(tmp_path):
    agent = AGENT.replace('torch.device(f"cuda:{cfg.gpu_id}")', "torch.device(cfg.device)")
    root = _tree(tmp_path, {"scripts/run.py": RUN, "src/agent/eval.py": agent, "config/eval/bridge.yaml": CONFIG})
    assert (10, "NPU019") in _codes(root, "config/eval/bridge.yaml")
    # read with `.get` as well
    agent = AGENT.replace('torch.device(f"cuda:{cfg.gpu_id}")', 'torch.device(cfg.get("device", "cpu"))')
    root = _tree(tmp_path / "get", {"scripts/run.py": RUN, "src/agent/eval.py": agent,
                                    "config/eval/bridge.yaml": CONFIG})
    assert (10, "NPU019") in _codes(root, "config/eval/bridge.yaml")


MERGE = """\
    import argparse
    import torch
    from omegaconf import OmegaConf

    parser = argparse.ArgumentParser()
    parser.add_argument("--config", default="configs/train.yaml")
    args = parser.parse_args()
    args = OmegaConf.merge(OmegaConf.load(args.config), vars(args))
    torch.manual_seed(args.seed)
    model = build(args.name).to(args.device)
    """

MERGED_CONFIG = """\
    name: resnet
    device: cuda
    seed: ${oc.env:SEED,0}
    """


def test_a_key_read_after_an_argparse_merge_stays(tmp_path):
    root = _tree(tmp_path, {"train.py": MERGE, "configs/train.yaml": MERGED_CONFIG})
    assert (2, "NPU019") in _codes(root, "configs/train.yaml")


def test_a_config_handed_whole_to_a_builder_stays(tmp_path):
    run = RUN.replace("agent = cls(cfg)", "agent = hydra.utils.instantiate(cfg)")
    assert "instantiate(cfg)" in run
    root = _tree(tmp_path, {"scripts/run.py": run, "src/agent/eval.py": AGENT, "config/eval/bridge.yaml": CONFIG})
    assert (10, "NPU019") in _codes(root, "config/eval/bridge.yaml")


def test_a_library_config_without_hydra_marks_stays(tmp_path):
    # the tree reads two of its keys, the library reads the rest (`device` here): no defaults, `_target_` or `${}`
    code = """\
        import yaml
        cfg = yaml.safe_load(open("serve.yaml"))
        print(cfg["model"], cfg["port"])
        engine = Engine(config_path="serve.yaml")
        """
    config = """\
        model: llama
        port: 8000
        device: cuda
        """
    root = _tree(tmp_path, {"serve.py": code, "serve.yaml": config})
    assert (3, "NPU019") in _codes(root, "serve.yaml")


# sliders' trainscripts/textsliders: a pydantic-loaded YAML, both dtypes from `config.train.precision`
SLIDERS_TRAIN = """\
    from pathlib import Path
    import config_util


    def train(config):
        save_path = Path(config.save.path)
        weight_dtype = config_util.parse_precision(config.train.precision)
        save_weight_dtype = config_util.parse_precision(config.train.precision)
        for i in range(config.train.iterations):
            if i % config.save.per_steps == 0:
                network.save_weights(save_path / f"{config.save.name}_{i}steps.pt", dtype=save_weight_dtype)
    """

SLIDERS_UTIL = """\
    from pydantic import BaseModel


    class SaveConfig(BaseModel):
        name: str = "untitled"
        path: str = "./output"
        per_steps: int = 200
        precision: str = "float32"


    def parse_precision(precision: str):
        return {"fp32": "float32", "bf16": "bfloat16", "bfloat16": "bfloat16"}[precision]
    """

SLIDERS_CONFIG = """\
    train:
      precision: "bfloat16"
      iterations: 1000
    save:
      name: "temp"
      path: "./models"
      per_steps: 500
      precision: "bfloat16"
    """


def test_a_key_read_only_under_another_section_is_dropped(tmp_path):
    root = _tree(tmp_path, {"train_lora.py": SLIDERS_TRAIN, "config_util.py": SLIDERS_UTIL,
                            "data/config.yaml": SLIDERS_CONFIG})
    # `save.precision` (line 8) goes; `train.precision` (line 2), which the trainer reads, stays
    assert _codes(root, "data/config.yaml") == [(2, "NPU212")]


def test_a_section_alias_that_reads_the_key_keeps_it(tmp_path):
    train = SLIDERS_TRAIN + """\

    def export(config):
        save_cfg = config.save
        out = Path(save_cfg.path) / save_cfg.name
        dtype = config_util.parse_precision(save_cfg.precision)
    """
    root = _tree(tmp_path, {"train_lora.py": train, "config_util.py": SLIDERS_UTIL,
                            "data/config.yaml": SLIDERS_CONFIG})
    assert _codes(root, "data/config.yaml") == [(2, "NPU212"), (8, "NPU212")]


def test_a_group_file_built_into_a_library_class_stays(tmp_path):
    # mattergen's conf/trainer/default.yaml: Hydra builds it into Lightning's Trainer (through the tree's own
    # `maybe_instantiate` wrapper), which reads `accelerator` as its argument
    run = """\
        def maybe_instantiate(cfg, cls):
            return hydra.utils.instantiate(cfg) if "_target_" in cfg else cls(**cfg)


        def main(config):
            trainer = maybe_instantiate(config.trainer, pl.Trainer)
            print(config.lightning_module.devices, config.lightning_module.precision)
            print(config.data_module.devices, config.data_module.precision)
        """
    trainer = """\
        _target_: pytorch_lightning.Trainer
        accelerator: 'gpu'
        devices: 1
        precision: 32
        """
    root = _tree(tmp_path, {"pkg/run.py": run, "pkg/conf/trainer/default.yaml": trainer})
    assert (2, "NPU020") in _codes(root, "pkg/conf/trainer/default.yaml")


def test_a_lightning_cli_config_stays(tmp_path):
    # ModelGenerator's experiment configs: LightningCLI hands `trainer:` to Lightning; the tree's `self.trainer.*`
    # reads are the Trainer object's attributes, not reads of the config section
    task = """\
        class Task(LightningModule):
            def configure_optimizers(self):
                n = self.trainer.num_nodes * self.trainer.devices
                return self.trainer.strategy
        """
    config = """\
        seed_everything: 42
        trainer:
          accelerator: auto
          strategy:
            class_path: lightning.pytorch.strategies.DDPStrategy
          devices: auto
          num_nodes: 1
          precision: bf16
        """
    root = _tree(tmp_path, {"pkg/tasks.py": task, "configs/run.yaml": config})
    assert (8, "NPU212") in _codes(root, "configs/run.yaml")
