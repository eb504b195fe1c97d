"""t25d (session 25, project test38): trainer configs a library reads whole, Lightning's saved hyper-parameters, and
an NVIDIA monitoring pin. Shaped on pdearena (LightningCLI configs whose `trainer:` section Lightning reads; the
scripts' `cli.trainer.fit(...)` are the Trainer object's attributes), DiffCSP / cdvae (`prop_models/*/hparams.yaml`,
saved by Lightning beside a property model and composed back only for `cfg.model`) and hear21passt's conda export
(`gpuinfo==1.0.0a7`), each with a control."""
from __future__ import annotations

from pathlib import Path

from auditor.project.tree_calls import apply_tree_calls
from auditor.rules import load_rules
from auditor.static import StaticEngine
from tests.static_snippets import write_tree

RULES = load_rules()
ENGINE = StaticEngine(RULES)


def _found(root: Path, rel: str) -> list[tuple[int, str]]:
    """A file's findings as the project-file bench computes them: the file, then the tree passes."""
    result = ENGINE.analyze_bytes((root / rel).read_bytes(), rel)
    apply_tree_calls([result], root, RULES, lambda: ENGINE.analyze_bytes)
    return sorted((f.line, f.code) for f in result.findings)


PDEARENA_CONFIG = """\
    seed_everything: 42
    trainer:
      default_root_dir: ${oc.env:AMLT_OUTPUT_DIR,/tmp/outputs}
      fast_dev_run: false
      max_epochs: 50
      accelerator: gpu
      strategy: null
      precision: 32
    model:
      name: Unetmod-64
      max_num_steps: 5
    """

PDEARENA_TRAIN = """\
    import os

    from pdearena.utils import PDECLI


    def main():
        cli = PDECLI(run=False, parser_kwargs={"parser_mode": "omegaconf"})
        if cli.trainer.default_root_dir is None:
            cli.trainer.default_root_dir = os.environ.get("AMLT_OUTPUT_DIR", "./outputs")
        cli.trainer.fit(cli.model, datamodule=cli.datamodule)
        if not cli.trainer.fast_dev_run:
            cli.trainer.test(ckpt_path="best", datamodule=cli.datamodule)
    """

PDEARENA_UTILS = """\
    from pytorch_lightning.cli import LightningCLI


    class PDECLI(LightningCLI):
        def add_arguments_to_parser(self, parser):
            parser.link_arguments("data.time_history", "model.time_history")
    """


def test_a_lightningcli_trainer_section_keeps_its_accelerator(tmp_path):
    """LightningCLI builds the Trainer from `trainer:` itself; the scripts' `cli.trainer.*` reads are no config reads."""
    root = write_tree(tmp_path, {"configs/navierstokes2d.yaml": PDEARENA_CONFIG, "scripts/train.py": PDEARENA_TRAIN,
                                 "pdearena/utils.py": PDEARENA_UTILS})
    assert _found(root, "configs/navierstokes2d.yaml") == [(6, "NPU020")]


def test_a_trainer_section_the_code_reads_key_by_key_is_still_decided_by_the_code(tmp_path):
    """Control: without LightningCLI, a section read key by key and never handed over keeps t23c's reading (nothing
    reads `accelerator`)."""
    train = """\
        import pytorch_lightning as pl


        def main(cfg):
            trainer = pl.Trainer(default_root_dir=cfg.trainer.default_root_dir, max_epochs=cfg.trainer.max_epochs,
                                 fast_dev_run=cfg.trainer.fast_dev_run)
            trainer.fit(model)
        """
    root = write_tree(tmp_path, {"configs/navierstokes2d.yaml": PDEARENA_CONFIG, "scripts/train.py": train})
    assert _found(root, "configs/navierstokes2d.yaml") == []


HPARAMS = """\
    data:
      root_path: ${oc.env:PROJECT_ROOT}/data/carbon_24
      prop: energy_per_atom
    train:
      deterministic: false
      random_seed: 42
      pl_trainer:
        fast_dev_run: false
        gpus: 1
        precision: 32
        max_epochs: ${data.train_max_epochs}
    """

EVAL_UTILS = """\
    import hydra
    from hydra import compose, initialize_config_dir


    def load_model(model_path):
        with initialize_config_dir(str(model_path)):
            cfg = compose(config_name='hparams')
            model = hydra.utils.instantiate(cfg.model, optim=cfg.optim, data=cfg.data, logging=cfg.logging,
                                            _recursive_=False)
        return model, cfg
    """


def test_lightnings_saved_hparams_yaml_is_no_trainer_config(tmp_path):
    root = write_tree(tmp_path, {"diffcsp/prop_models/carbon/hparams.yaml": HPARAMS,
                                 "scripts/eval_utils.py": EVAL_UTILS})
    assert _found(root, "diffcsp/prop_models/carbon/hparams.yaml") == []


def test_the_same_trainer_section_in_the_training_config_keeps_its_count(tmp_path):
    """Control: DiffCSP's `conf/train/default.yaml` holds the same `pl_trainer: gpus: 1`, and a Trainer reads it."""
    train = """\
        import hydra
        import pytorch_lightning as pl


        def run(cfg):
            trainer = pl.Trainer(default_root_dir=hydra_dir, **cfg.train.pl_trainer)
        """
    root = write_tree(tmp_path, {"conf/train/default.yaml": HPARAMS, "diffcsp/run.py": train})
    assert (9, "NPU028") in _found(root, "conf/train/default.yaml")


def test_gpuinfo_pin_is_an_nvidia_monitoring_dependency(tmp_path):
    env = """\
        name: passt
        channels:
          - pytorch
        dependencies:
          - python=3.8
          - pip:
            - gpuinfo==1.0.0a7
            - py-cpuinfo==8.0.0
            - h5py==3.3.0
        """
    root = write_tree(tmp_path, {"src/hear21passt/environment.yml": env})
    found = _found(root, "src/hear21passt/environment.yml")
    assert (7, "NPU440") in found
    assert not [ln for ln, _ in found if ln in (8, 9)]            # py-cpuinfo (a CPU probe), h5py: nothing to change
