"""t23c (session 23, project test24 / test31): config settings the tree's own Python decides on (DiGress's `gpus: 1`
read as `cfg.general.gpus`, lead decision 17) or that nothing reads (V-Express's xformers switch in a section read key
by key, PSHuman's yacs `DEVICE: cuda`), with controls from safari / hyena-dna (a trainer section handed to Hydra's
instantiate), a MosaicML `compute: gpus:` request and HF-style top-level keys."""
from __future__ import annotations

import textwrap
from pathlib import Path

from auditor.project.tree_calls import apply_tree_calls
from auditor.rules import load_rules
from auditor.runner import run_static
from auditor.static import StaticEngine

RULES = load_rules()
ENGINE = StaticEngine(RULES)


def _tree(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    return root


def _codes(root: Path, rel: str) -> list[tuple[int, str]]:
    """A config's findings as the project-file bench computes them: the file, then the tree passes."""
    result = ENGINE.analyze_bytes((root / rel).read_bytes(), rel)
    apply_tree_calls([result], root, RULES, lambda: ENGINE.analyze_bytes)
    return sorted((f.line, f.code) for f in result.findings)


DIGRESS_MAIN = """\
    import hydra
    import torch
    from pytorch_lightning import Trainer


    @hydra.main(version_base='1.3', config_path='../configs', config_name='config')
    def main(cfg):
        use_gpu = cfg.general.gpus > 0 and torch.cuda.is_available()
        trainer = Trainer(gradient_clip_val=cfg.train.clip_grad,
                          accelerator='gpu' if use_gpu else 'cpu',
                          devices=cfg.general.gpus if use_gpu else 1,
                          max_epochs=cfg.train.n_epochs)
        OmegaConf.set_struct(cfg.general, True)
    """

DIGRESS_EXPERIMENT = """\
    # @package _global_
    general:
        name : 'sbm'
        gpus : 1
        wandb: 'online'
    train:
        n_epochs: 50000
    """

DIGRESS_GROUP = """\
    # General settings
    name: 'graph-tf-model'
    wandb: 'online'             # online | offline | disabled
    gpus: 1                     # Multi-gpu is not implemented on this branch
    resume: null
    """


def test_a_device_count_the_code_reads_by_name_is_not_a_request(tmp_path):
    root = _tree(tmp_path, {"src/main.py": DIGRESS_MAIN, "configs/experiment/sbm.yaml": DIGRESS_EXPERIMENT,
                            "configs/general/general_default.yaml": DIGRESS_GROUP})
    assert _codes(root, "configs/experiment/sbm.yaml") == []
    # a Hydra group file's top-level key sits under its group (`general`)
    assert _codes(root, "configs/general/general_default.yaml") == []
    # the runner reads the tree the same way; main.py's own CUDA check stays
    found = {(f.path, f.code) for r in run_static([root], jobs=1).results for f in r.findings}
    assert not {p for p, _ in found if p.endswith(".yaml")}
    assert ("src/main.py", "NPU002") in found


def test_a_count_in_a_section_handed_to_a_library_stays(tmp_path):
    # safari / hyena-dna: configs/trainer/lm.yaml goes whole to Lightning through Hydra's instantiate; the tree reads
    # the count only to zero it for debugging
    root = _tree(tmp_path, {
        "train.py": """\
            import hydra

            def create_trainer(config):
                if config.trainer.get("gpus"):
                    config.trainer.gpus = 0
                return hydra.utils.instantiate(config.trainer, callbacks=[])
            """,
        "configs/trainer/lm.yaml": """\
            accumulate_grad_batches: 1
            gpus: 8
            max_epochs: 50
            """})
    assert _codes(root, "configs/trainer/lm.yaml") == [(2, "NPU028")]


def test_a_platform_request_nothing_in_the_tree_reads_stays(tmp_path):
    root = _tree(tmp_path, {
        "train.py": "import argparse\nargs = argparse.ArgumentParser().parse_args()\nprint(args.gpus)\n",
        "mcli/run.yaml": """\
            name: sd2-base
            compute:
              gpus: 8  # Number of GPUs to use
            """})
    assert _codes(root, "mcli/run.yaml") == [(3, "NPU028")]


VEXPRESS_TRAIN = """\
    from omegaconf import OmegaConf
    from accelerate import Accelerator

    def main(cfg):
        accelerator = Accelerator(gradient_accumulation_steps=cfg.solver.gradient_accumulation_steps,
                                  mixed_precision=cfg.solver.mixed_precision)
        if cfg.solver.reference_net_gradient_checkpointing:
            pass
        return cfg.solver.max_train_steps
    """

VEXPRESS_CONFIG = """\
    solver:
      gradient_accumulation_steps: 1
      mixed_precision: 'fp16' # [fp16, bf16, fp32]
      enable_xformers_memory_efficient_attention: True
      reference_net_gradient_checkpointing: False
      max_train_steps: 40000
    """


def test_a_switch_nothing_reads_in_a_section_read_key_by_key(tmp_path):
    root = _tree(tmp_path, {"train.py": VEXPRESS_TRAIN, "training_configs/stage_1.yaml": VEXPRESS_CONFIG})
    assert _codes(root, "training_configs/stage_1.yaml") == []


def test_the_same_switch_stays_when_the_code_reads_it(tmp_path):
    train = VEXPRESS_TRAIN + """\

    def build(cfg, unet):
        if cfg.solver.enable_xformers_memory_efficient_attention:
            unet.enable_xformers_memory_efficient_attention()
    """
    root = _tree(tmp_path, {"train.py": train, "training_configs/stage_1.yaml": VEXPRESS_CONFIG})
    assert [code for _, code in _codes(root, "training_configs/stage_1.yaml")] == ["NPU363"]


def test_the_same_switch_stays_in_a_section_handed_whole(tmp_path):
    train = VEXPRESS_TRAIN + "\ndef run(cfg):\n    return Solver(**cfg.solver)\n"
    root = _tree(tmp_path, {"train.py": train, "training_configs/stage_1.yaml": VEXPRESS_CONFIG})
    assert [code for _, code in _codes(root, "training_configs/stage_1.yaml")] == ["NPU363"]


def test_a_yacs_device_only_the_defaults_assign(tmp_path):
    # PSHuman's pymaf: core/cfgs.py assigns the default, nothing reads cfg.DEVICE; other upper-case keys are read
    root = _tree(tmp_path, {
        "lib/pymaf/core/cfgs.py": """\
            from yacs.config import CfgNode as CN
            cfg = CN(new_allowed=True)
            cfg.DEVICE = 'cuda'
            cfg.NUM_WORKERS = 8
            """,
        "lib/pymaf/train.py": """\
            from .core.cfgs import cfg
            loader = make_loader(num_workers=cfg.NUM_WORKERS, seed=cfg.SEED_VALUE)
            """,
        "lib/pymaf/configs/pymaf_config.yaml": """\
            DEBUG: False
            DEVICE: cuda
            NUM_WORKERS: 8
            SEED_VALUE: -1
            """})
    assert _codes(root, "lib/pymaf/configs/pymaf_config.yaml") == []


def test_lower_case_top_level_choices_stay(tmp_path):
    # HF TrainingArguments, DeepSpeed and accelerate files are written this way: their library reads the keys
    root = _tree(tmp_path, {
        "train.py": "def main(args):\n    return args.learning_rate, args.num_train_epochs\n",
        "configs/train.yaml": """\
            learning_rate: 1.0e-5
            num_train_epochs: 3
            device: cuda
            """})
    assert [code for _, code in _codes(root, "configs/train.yaml")] == ["NPU019"]


def test_a_device_key_a_config_framework_reads_stays(tmp_path):
    # PDF-Extract-Kit's LayoutLMv3 config: detectron2's DefaultPredictor(cfg) reads MODEL.DEVICE; the tree names only
    # other MODEL keys
    root = _tree(tmp_path, {
        "layoutlmv3_util/model_init.py": """\
            from detectron2.config import get_cfg
            from detectron2.engine import DefaultPredictor

            def setup(args):
                cfg = get_cfg()
                cfg.merge_from_file(args.config_file)
                print(cfg.MODEL.WEIGHTS, cfg.MODEL.META_ARCHITECTURE)
                return DefaultPredictor(cfg)
            """,
        "layoutlmv3_util/layoutlmv3_base_inference.yaml": """\
            MODEL:
              META_ARCHITECTURE: "VisionLayoutLMv3"
              WEIGHTS: "model.pth"
              DEVICE: "cuda"
            """})
    assert [code for _, code in _codes(root, "layoutlmv3_util/layoutlmv3_base_inference.yaml")] == ["NPU019"]


def test_a_switch_in_params_unpacked_into_a_library_class_stays(tmp_path):
    # ComfyUI_StoryDiffusion's sd_xl_base.yaml: `instantiate_from_config` unpacks `params` into sgm's UNet, which reads
    # spatial_transformer_attn_type; the tree reads other `params` keys by name
    root = _tree(tmp_path, {
        "utils.py": """\
            import importlib

            def instantiate_from_config(config):
                return get_obj_from_str(config["target"])(**config.get("params", dict()))

            def sizes(config):
                return config.params.model_channels, config.params.context_dim
            """,
        "config/sd_xl_base.yaml": """\
            model:
              target: sgm.models.diffusion.DiffusionEngine
              params:
                model_channels: 320
                context_dim: 2048
                spatial_transformer_attn_type: softmax-xformers
            """})
    assert [code for _, code in _codes(root, "config/sd_xl_base.yaml")] == ["NPU363"]
