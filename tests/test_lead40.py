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
    # mmflow's tools/train.py reads its config's `cudnn_benchmark = True` by name
    assert "cudnn_benchmark" in fed_names(ast.parse("import torch\nif cfg.get('cudnn_benchmark', False):\n"
                                                    "    torch.backends.cudnn.benchmark = True\n"))
    assert "flag_not_a_switch" not in names and "set_float32_matmul_precision" not in names


def test_binding_lines_are_fields_assignments_parameters_and_own_calls_keywords():
    tree = ast.parse("from transformers import TrainingArguments\nconfig.allow_tf32 = True\n"
                     "class C:\n    tf32: bool = True\n"
                     "def f(tf32=True):\n    c.update(tf32=opts.tf32)\n    d = {'tf32': True}\n"
                     "    TrainingArguments(tf32=True)\n")
    assert binding_lines(tree, {"tf32", "allow_tf32"}) == {("allow_tf32", 2), ("tf32", 4), ("tf32", 5), ("tf32", 6)}


EDM_TRAIN = """import click
import dnnlib
from training import training_loop


@click.command()
@click.option('--bench', help='Enable cuDNN benchmarking', type=bool, default=True)
@click.option('--tf32', help='Enable TF32', type=bool, default=False)
def main(**kwargs):
    opts = dnnlib.EasyDict(kwargs)
    c = dnnlib.EasyDict()
    c.update(loss_scaling=opts.ls, cudnn_benchmark=opts.bench, enable_tf32=opts.tf32)
    training_loop.training_loop(**c)
"""

EDM_LOOP = """import torch


def training_loop(run_dir='.', cudnn_benchmark=True, enable_tf32=False, device=torch.device('cuda')):
    torch.backends.cudnn.benchmark = cudnn_benchmark
    torch.backends.cudnn.allow_tf32 = enable_tf32
    torch.backends.cuda.matmul.allow_tf32 = enable_tf32
"""


def test_options_handed_to_the_trees_own_training_loop_are_not_findings(tmp_path):
    found = code_severity_in_tree(tmp_path / "edm", {"train.py": EDM_TRAIN, "training/__init__.py": "",
                                                     "training/training_loop.py": EDM_LOOP})
    assert not {"NPU042", "NPU248"} & set(_codes(found, "train.py", 12))
    assert _codes(found, "training/training_loop.py", 5)                  # the switches keep theirs
    alone = code_severity_in_tree(tmp_path / "alone", {"train.py": EDM_TRAIN})
    assert {"NPU042", "NPU248"} <= set(_codes(alone, "train.py", 12))    # no loop in the tree: the values are the findings


def _notebook(*cells: str) -> str:
    import json

    return json.dumps({"nbformat": 4, "nbformat_minor": 5, "metadata": {},
                       "cells": [{"cell_type": "code", "id": f"c{i}", "metadata": {}, "execution_count": None,
                                  "outputs": [], "source": cell} for i, cell in enumerate(cells)]})


def test_a_notebook_cell_that_feeds_its_own_switches(tmp_path):
    """VAR's demo notebook: `tf32 = True` written into the switches in the same cell (the setting goes); a cell with
    a shell line does not parse alone and is skipped, the line count still runs through it."""
    cells = ("!pip install -q timm\nimport torch", "# run faster\ntf32 = True\n"
             "torch.backends.cudnn.allow_tf32 = bool(tf32)\ntorch.backends.cuda.matmul.allow_tf32 = bool(tf32)\n")
    found = code_severity_in_tree(tmp_path / "nb", {"demo_sample.ipynb": _notebook(*cells)})
    assert "NPU248" not in _codes(found, "demo_sample.ipynb", 4)
    assert _codes(found, "demo_sample.ipynb", 5)
    alone = code_severity_in_tree(tmp_path / "alone", {"demo.ipynb": _notebook("tf32 = True\ntrain(tf32)\n")})
    assert "NPU248" in _codes(alone, "demo.ipynb", 1)


def test_a_warm_run_reads_no_notebook_or_python_file_for_switch_fed_settings(tmp_path, monkeypatch):
    """switch_fed_settings keeps each file's fed names and its settings' bindings in the file's summary (lead, session
    42): a warm run gives the cold run's findings without reading a notebook or a Python file again."""
    import os
    from pathlib import Path

    from auditor.runner import run_static

    cells = ("!pip install -q timm\nimport torch", "# run faster\ntf32 = True\n"
             "torch.backends.cudnn.allow_tf32 = bool(tf32)\ntorch.backends.cuda.matmul.allow_tf32 = bool(tf32)\n")
    root = tmp_path / "tree"
    (root / "train").mkdir(parents=True)
    (root / "demo_sample.ipynb").write_text(_notebook(*cells))
    (root / "train" / "opts.py").write_text("from dataclasses import dataclass\n\n\n@dataclass\nclass Options:\n"
                                            "    fp16: bool = True\n    tf32: bool = True\n")
    (root / "train" / "loop.py").write_text("import torch\nfrom apex import amp\n\n\ndef setup(opts, model, optimizer):\n"
                                            "    if opts.fp16:\n        model, optimizer = amp.initialize(model, optimizer)\n"
                                            "    return model, optimizer\n")
    cache = tmp_path / "cache"
    cold = run_static([root], jobs=1, cache_dir=cache)
    real_open = os.open

    def refuse(path, *a, **k):
        if str(path).endswith((".py", ".ipynb")):
            raise AssertionError(f"{path} was read again")
        return real_open(path, *a, **k)

    monkeypatch.setattr(os, "open", refuse)
    monkeypatch.setattr(Path, "read_bytes", lambda self: (refuse(self), b"")[1])
    warm = run_static([root], jobs=1, cache_dir=cache)

    def codes(run):
        return sorted((r.path, f.line, f.code) for r in run.results for f in r.findings)

    assert warm.cached_files == len(cold.results) and codes(warm) == codes(cold)
    assert ("demo_sample.ipynb", 4, "NPU248") not in codes(cold)          # the notebook's tf32 feeds its switches
    assert not [c for c in codes(cold) if c[0] == "train/opts.py" and c[1] == 6 and c[2] == "NPU247"]   # fp16 -> apex


INFER = """import argparse

import torch


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--device", type=str, default="cuda")
    args = parser.parse_args()
    device = args.device
    if device.__contains__("cuda") and not torch.cuda.is_available():
        device = "cpu"
    if "cuda" in device and not torch.cuda.is_available():
        device = "cpu"
    return torch.nn.Linear(2, 2).to(device)
"""


def test_contains_called_by_name_is_the_in_test(tmp_path):
    """echomimic_v2's `device.__contains__("cuda")` tests the user's `--device` as `"cuda" in device` does: the
    literal and the availability check after its `and` are warnings, as on the `in` spelling (heldout44, 4 rows)."""
    found = code_severity_in_tree(tmp_path / "infer", {"infer.py": INFER})
    assert _codes(found, "infer.py", 11) == _codes(found, "infer.py", 13) == {"NPU003": "warning", "NPU002": "warning"}
