"""Lead, session 40: a setting that only feeds a torch.backends switch the tree sets itself is not a finding of its
own (lead decision 7, docs/recall.md; auditor/static/switch_fed_settings.py). Shaped on an autoregressive image
model's argument class (a Tap `tf32: bool = True` field read by its own `set_tf32`), a reward-finetuning trainer's
config dataclass read by the trainer in another file, and an ml_collections config set field by field."""
from __future__ import annotations

import ast

from auditor.static.switch_fed_settings import binding_lines, fed_names
from tests.static_snippets import code_severity_in_tree

ARG_UTIL = """import torch
from tap import Tap


class Args(Tap):
    data_path: str = '/path/to/imagenet'
    tf32: bool = True       # whether to use TensorFloat32
    fp16: int = 0

    @staticmethod
    def set_tf32(tf32: bool):
        if torch.cuda.is_available():
            torch.backends.cudnn.allow_tf32 = bool(tf32)
            torch.backends.cuda.matmul.allow_tf32 = bool(tf32)


def init_dist_and_get_args():
    args = Args(explicit_bool=True).parse_args(known_only=True)
    args.set_tf32(args.tf32)
    return args
"""

CONFIG = """from dataclasses import dataclass


@dataclass
class AlignPropConfig:
    mixed_precision: str = "fp16"
    allow_tf32: bool = True
    cudnn_benchmark: bool = True
"""

TRAINER = """import torch


class AlignPropTrainer:
    def __init__(self, config):
        self.config = config
        # cf https://pytorch.org/docs/stable/notes/cuda.html#tensorfloat-32-tf32-on-ampere-devices
        if self.config.allow_tf32:
            torch.backends.cuda.matmul.allow_tf32 = True
"""

LIBRARY_USER = """from transformers import TrainingArguments


def build(output_dir: str):
    return TrainingArguments(output_dir=output_dir, tf32=True, bf16=True)
"""


def _codes(found, path, line):
    return found.get((path, line), {})


def test_a_field_read_by_the_files_own_switch_setter_is_not_a_finding(tmp_path):
    found = code_severity_in_tree(tmp_path / "var", {"utils/arg_util.py": ARG_UTIL})
    assert "NPU248" not in _codes(found, "utils/arg_util.py", 7)
    assert _codes(found, "utils/arg_util.py", 13) and _codes(found, "utils/arg_util.py", 14)   # the switches


def test_a_config_field_the_trainer_reads_into_the_switch_goes_only_in_a_tree_with_the_trainer(tmp_path):
    alone = code_severity_in_tree(tmp_path / "alone", {"config/alignprop_config.py": CONFIG})
    assert "NPU248" in _codes(alone, "config/alignprop_config.py", 7)      # the switch is set by nothing seen
    tree = code_severity_in_tree(tmp_path / "tree", {"config/alignprop_config.py": CONFIG,
                                                     "alignprop_trainer.py": TRAINER})
    assert "NPU248" not in _codes(tree, "config/alignprop_config.py", 7)
    assert _codes(tree, "alignprop_trainer.py", 9)                          # the switch line keeps its finding
    # cudnn_benchmark is set by no file of the tree: the value is the finding (decision 7's second sentence)
    assert _codes(tree, "config/alignprop_config.py", 8) == _codes(alone, "config/alignprop_config.py", 8)


def test_a_keyword_handed_to_a_library_keeps_its_finding(tmp_path):
    found = code_severity_in_tree(tmp_path / "lib", {"train.py": LIBRARY_USER, "alignprop_trainer.py": TRAINER})
    assert "NPU248" in _codes(found, "train.py", 5)


def test_fed_names_read_values_if_tests_and_the_precision_call():
    tree = ast.parse("import torch\nfrom torch.backends import cudnn\n"
                     "def setup(cfg, use_tf32):\n"
                     "    if cfg.trainer.allow_tf32:\n        torch.backends.cuda.matmul.allow_tf32 = True\n"
                     "    cudnn.benchmark = cfg.cudnn_benchmark\n"
                     "    torch.set_float32_matmul_precision('high' if use_tf32 else 'highest')\n"
                     "    model.enabled = flag_not_a_switch\n")
    names = fed_names(tree)
    assert {"allow_tf32", "cudnn_benchmark", "use_tf32"} <= names
    assert "flag_not_a_switch" not in names and "set_float32_matmul_precision" not in names


def test_binding_lines_are_fields_assignments_and_parameters_not_keywords():
    tree = ast.parse("config.allow_tf32 = True\nclass C:\n    tf32: bool = True\n"
                     "def f(tf32=True):\n    g(tf32=True)\n    d = {'tf32': True}\n")
    assert binding_lines(tree, {"tf32", "allow_tf32"}) == {("allow_tf32", 1), ("tf32", 3), ("tf32", 4)}
