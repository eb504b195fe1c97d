"""t18h: a CUDA setting in a project's own config whose key no Python file of the tree names is not a finding
(policy: settings nothing reads); a key the tree reads, a config a library reads whole, and a config audited away from
any code keep their findings. Realistic trees written for these tests."""
from __future__ import annotations

import textwrap
from pathlib import Path

from auditor.project.tree_calls import apply_tree_calls
from auditor.rules import load_rules
from auditor.static import StaticEngine

RULES = load_rules()
ENGINE = StaticEngine(RULES)

CONFIG = """\
    pretrained_model_path: "./checkpoints/stable-diffusion-v1-5"
    output_dir: "./outputs/animate"
    enable_xformers_memory_efficient_attention: true
    dist_backend: nccl
    device: cuda
    num_frames: 16
    """

TRAIN = """\
    import argparse
    from omegaconf import OmegaConf

    def main(pretrained_model_path, output_dir, num_frames, device="cuda", **kwargs):
        pipe = load(pretrained_model_path).to(device)
        pipe.save(output_dir, num_frames)

    if __name__ == "__main__":
        parser = argparse.ArgumentParser()
        parser.add_argument("--config", default="configs/train.yaml")
        args = parser.parse_args()
        main(**OmegaConf.load(args.config))
    """


def _tree(tmp_path: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    return tmp_path


def _lines(root: Path, rel: str) -> dict[int, set[str]]:
    result = ENGINE.analyze_bytes((root / rel).read_bytes(), rel)
    apply_tree_calls([result], root, RULES, lambda: ENGINE.analyze_bytes)
    out: dict[int, set[str]] = {}
    for f in result.findings:
        out.setdefault(f.line, set()).add(f.name)
    return out


def test_keys_no_python_file_names_are_dropped_and_read_keys_stay(tmp_path):
    root = _tree(tmp_path, {"configs/train.yaml": CONFIG, "train.py": TRAIN})
    found = _lines(root, "configs/train.yaml")
    assert 3 not in found and 4 not in found, found     # xformers switch and NCCL backend: nothing names them
    assert 5 in found, found                              # `device` is main()'s parameter: the splat fills it


def test_without_the_filter_the_same_keys_are_findings(tmp_path):
    # the config audited on its own, no code beside it: nothing is known, every setting stays
    root = _tree(tmp_path, {"configs/train.yaml": CONFIG})
    found = _lines(root, "configs/train.yaml")
    assert {3, 4, 5} <= set(found), found


def test_a_key_the_tree_reads_by_subscript_stays(tmp_path):
    reader = """\
        import yaml
        import torch.distributed as dist

        cfg = yaml.safe_load(open("configs/train.yaml"))
        dist.init_process_group(backend=cfg["dist_backend"])
        """
    root = _tree(tmp_path, {"configs/train.yaml": CONFIG, "train.py": reader})
    found = _lines(root, "configs/train.yaml")
    assert 4 in found, found
    assert 3 not in found, found


def test_configs_a_library_or_tool_reads_whole_keep_their_findings(tmp_path):
    deepspeed = """\
        {
          "train_micro_batch_size_per_gpu": 4,
          "communication_data_type": "bf16",
          "bf16": {"enabled": true}
        }
        """
    trainer_group = """\
        # @package _group_
        kwargs:
          gpus: -1
          accelerator: ddp
          max_epochs: 40
        """
    cog = """\
        build:
          gpu: true
          python_version: "3.10"
        predict: "predict.py:Predictor"
        """
    root = _tree(tmp_path, {"ds_config.json": deepspeed, "configs/training/trainer/any_gpu.yaml": trainer_group,
                            "cog.yaml": cog, "train.py": TRAIN})
    assert _lines(root, "ds_config.json"), "a DeepSpeed config's settings are DeepSpeed's to read"
    assert 3 in _lines(root, "configs/training/trainer/any_gpu.yaml"), "Lightning's Trainer(**kwargs) reads `gpus`"
    assert 2 in _lines(root, "cog.yaml"), "Cog reads `build.gpu`"


def test_trees_that_parse_argument_files_into_library_dataclasses_keep_them(tmp_path):
    args_file = """\
        model_name_or_path: meta-llama/Llama-2-7b-hf
        ddp_backend: nccl
        """
    reader = """\
        from transformers import HfArgumentParser, TrainingArguments
        (training_args,) = HfArgumentParser(TrainingArguments).parse_yaml_file("args.yaml")
        """
    root = _tree(tmp_path, {"args.yaml": args_file, "train.py": reader})
    assert 2 in _lines(root, "args.yaml")
