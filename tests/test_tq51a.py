"""Precision fixes of tq51a (session 51, tuned on heldout63's labels).

- programs of a package that the tree's launches pass over (policy (j)): a research tree (not pip-installable) whose
  scripts run `python -m pkg.cli.train_ppo_ray` carries `pkg/cli/train_dpo.py` beside it, which no launch runs and no
  file names; that program and the trainer classes only it names (`DPOTrainer`, re-exported by `pkg/trainer/`) are
  info (auditor/static/unreached_defs.py `_lower_passed_programs`).

Code written afresh in the shape of an RLHF trainer package, not copied; each test has its control.
"""
from __future__ import annotations

from pathlib import Path

from tests.test_tq38 import _in, _tree

TRAINER_INIT = """\
from .dpo_trainer import DPOTrainer
from .ppo_trainer import PPOTrainer

__all__ = ["DPOTrainer", "PPOTrainer"]
"""

DPO_TRAINER = """\
import torch


class DPOTrainer:
    def __init__(self, model):
        self.model = model

    def fit(self, batches):
        for chosen_ids, reject_ids in batches:
            chosen_ids = chosen_ids.to(torch.cuda.current_device())
            reject_ids = reject_ids.to(torch.cuda.current_device())
            self.model(chosen_ids, reject_ids)
"""

PPO_TRAINER = """\
import torch


class PPOTrainer:
    def __init__(self, actor):
        self.actor = actor

    def fit(self, prompts):
        for ids in prompts:
            ids = ids.to(torch.cuda.current_device())
            self.actor(ids)
"""

TRAIN_DPO = """\
import argparse

import torch

from agentrl.trainer import DPOTrainer


def train(args):
    model = torch.nn.Linear(4, 4).cuda()
    DPOTrainer(model).fit([])


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--beta", type=float, default=0.1)
    train(parser.parse_args())
"""

TRAIN_PPO = """\
import argparse

from agentrl.trainer import PPOTrainer


def train(args):
    PPOTrainer(None).fit([])


if __name__ == "__main__":
    train(argparse.ArgumentParser().parse_args())
"""

LAUNCH = """\
#!/bin/bash
ray job submit --address="http://127.0.0.1:8265" \\
    -- python3 -m agentrl.cli.train_ppo \\
    --pretrain $MODEL
"""


def _files(readme: str = "", setup: bool = False, programs: int = 3, checkout: bool = True) -> dict[str, str]:
    files = {"agentrl/__init__.py": "", "agentrl/cli/__init__.py": "", "agentrl/trainer/__init__.py": TRAINER_INIT,
             "agentrl/trainer/dpo_trainer.py": DPO_TRAINER, "agentrl/trainer/ppo_trainer.py": PPO_TRAINER,
             "agentrl/cli/train_dpo.py": TRAIN_DPO, "agentrl/cli/train_ppo.py": TRAIN_PPO,
             "scripts/train.sh": LAUNCH, "README.md": "# GUI agents\n" + readme}
    if programs >= 3:
        files["agentrl/cli/interactive_chat.py"] = TRAIN_PPO.replace("PPOTrainer(None).fit([])", "print(args)")
    if setup:
        files["setup.py"] = "from setuptools import setup, find_packages\nsetup(name='agentrl', packages=find_packages())\n"
    if checkout:        # a checkout of the package's repository, installed with `cd agentrl && pip install -e .`
        files = {f"agentrl/{rel}" if rel.startswith("agentrl/") else rel: text for rel, text in files.items()}
        files["agentrl/setup.py"] = "from setuptools import setup, find_packages\nsetup(name='agentrl')\n"
    return files


CREDIT = "## Acknowledgements\nOur code is built on [AgentRL](https://github.com/agentrl-org/AgentRL).\n"


def test_a_program_the_launches_pass_over_and_its_trainer_are_info(tmp_path: Path) -> None:
    found = _tree(tmp_path, _files())
    assert _in(found, "trainer/dpo_trainer.py")[10]["NPU002"] == "info"
    assert _in(found, "cli/train_dpo.py")[9]["NPU001"] == "info"
    assert _in(found, "trainer/ppo_trainer.py")[10]["NPU002"] == "error"     # the launched program's trainer


def test_a_program_the_readme_names_keeps_its_findings(tmp_path: Path) -> None:
    found = _tree(tmp_path, _files(readme="Run `python -m agentrl.cli.train_dpo --beta 0.1` for DPO.\n"))
    assert _in(found, "trainer/dpo_trainer.py")[10]["NPU002"] == "error"
    assert _in(found, "cli/train_dpo.py")[9]["NPU001"] == "error"


def test_a_package_of_two_programs_is_one_programs_and_keeps_its_findings(tmp_path: Path) -> None:
    found = _tree(tmp_path, _files(programs=2))       # the launched one beside a launcher the user runs by hand
    assert _in(found, "trainer/dpo_trainer.py")[10]["NPU002"] == "error"


def test_an_installable_librarys_programs_keep_their_findings(tmp_path: Path) -> None:
    found = _tree(tmp_path, _files(setup=True))       # its users run any of its programs
    assert _in(found, "trainer/dpo_trainer.py")[10]["NPU002"] == "error"


def test_a_credited_folder_the_trees_launches_run_is_its_own_package(tmp_path: Path) -> None:
    # review51 item 2 (fix51b): a folder the README credits but whose programs the tree's scripts launch is the
    # tree's own package (a fork's), so the programs its launches pass over keep their findings, as policy (s) says
    found = _tree(tmp_path, _files(readme=CREDIT, checkout=False))
    assert _in(found, "cli/train_dpo.py")[9]["NPU001"] == "error"


def test_the_trees_own_programs_the_launches_pass_over_keep_their_findings(tmp_path: Path) -> None:
    found = _tree(tmp_path, _files(checkout=False))       # no credit, no checkout: the tree's own package
    assert _in(found, "trainer/dpo_trainer.py")[10]["NPU002"] == "error"
    assert _in(found, "cli/train_dpo.py")[9]["NPU001"] == "error"


EVAL_MMBENCH = """\
import argparse

import torch

from vlmtrain.eval.mmbench_utils import score_options


def main(args):
    torch.cuda.set_device(args.gpu)
    logits = torch.zeros(1, 4).cuda()
    print(score_options(logits, [0, 1, 2, 3]))


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--gpu", type=int, default=0)
    main(parser.parse_args())
"""


def test_a_research_trees_own_evaluators_keep_their_findings(tmp_path: Path) -> None:
    evaluator = EVAL_MMBENCH.replace("from vlmtrain.eval.mmbench_utils import score_options\n", "").replace(
        "print(score_options(logits, [0, 1, 2, 3]))", "print(logits.argmax())")
    found = _tree(tmp_path, {
        "vlmtrain/__init__.py": "", "vlmtrain/eval/__init__.py": "",
        "vlmtrain/eval/eval_vqa.py": evaluator, "vlmtrain/eval/eval_mmbench.py": EVAL_MMBENCH,
        "vlmtrain/eval/eval_pope.py": evaluator, "vlmtrain/eval/eval_textvqa.py": evaluator,
        "vlmtrain/eval/mmbench_utils.py": "import torch\n\n\ndef score_options(logits, options):\n"
                                          "    return logits[:, options].argmax(dim=-1).cuda()\n",
        "scripts/eval_vqa.sh": "#!/bin/bash\npython -m vlmtrain.eval.eval_vqa --answers-file answers/vqa.jsonl\n",
        "README.md": "# VLMTrain\n\n```bash\nbash scripts/eval_vqa.sh checkpoints/vlm-7b\n```\n"})
    assert _in(found, "eval/eval_mmbench.py")[9]["NPU002"] == "error"
    assert _in(found, "eval/mmbench_utils.py")[5]["NPU001"] == "error"


# -- a CUDA check that only picks torch.load's map_location, with a log line in each arm -----------------------------

LOAD_CHECKPOINT = """\
import logging

import torch


def load_checkpoint(model: torch.nn.Module, path: str) -> dict:
    if torch.cuda.is_available():
        logging.info('Checkpoint: loading from checkpoint %s for GPU' % path)
        checkpoint = torch.load(path)
    else:
        logging.info('Checkpoint: loading from checkpoint %s for CPU' % path)
        checkpoint = torch.load(path, map_location='cpu')
    model.load_state_dict(checkpoint, strict=False)
    return {}
"""


def test_a_check_that_only_picks_map_location_beside_log_lines_is_a_warning(tmp_path: Path) -> None:
    found = _tree(tmp_path, {"wenet/utils/checkpoint.py": LOAD_CHECKPOINT})
    assert _in(found, "checkpoint.py")[7]["NPU002"] == "warning"


def test_a_check_whose_arm_does_more_than_log_keeps_its_error(tmp_path: Path) -> None:
    moved = LOAD_CHECKPOINT.replace("        logging.info('Checkpoint: loading from checkpoint %s for GPU' % path)\n",
                                    "        model = model.cuda()\n")
    found = _tree(tmp_path, {"wenet/utils/checkpoint.py": moved})
    assert _in(found, "checkpoint.py")[7]["NPU002"] == "error"


# -- a CUDA attempt whose handler binds the same name to a fallback --------------------------------------------------

RELAX = """\
import logging

import openmm as mm
import openmm.app as app

logger = logging.getLogger(__name__)


def run_one_md(modeller, system, integrator):
    try:
        platform = mm.Platform.getPlatformByName("CUDA")
        logger.debug("simulation uses CUDA platform")
    except Exception:
        {handler}
    return app.Simulation(modeller.topology, system, integrator, platform=platform)
"""


def test_a_cuda_platform_whose_handler_falls_back_is_a_warning(tmp_path: Path) -> None:
    found = _tree(tmp_path, {"relax.py": RELAX.format(handler="platform = None")})
    assert _in(found, "relax.py")[11]["NPU097"] == "warning"


def test_a_cuda_platform_whose_handler_reraises_keeps_its_error(tmp_path: Path) -> None:
    found = _tree(tmp_path, {"relax.py": RELAX.format(handler="raise RuntimeError('no CUDA platform')")})
    assert _in(found, "relax.py")[11]["NPU097"] == "error"


LOAD_MODEL = """\
import torch

from mynet import build_model


def load(path):
    model = build_model()
    model.load_state_dict(torch.load(path, map_location="cpu"))
    try:
        model = model.cuda()
    except {caught}:
        model = model.cpu()
    return model.eval()
"""


def test_a_cuda_move_whose_handler_misses_what_a_cuda_less_torch_raises_keeps_its_error(tmp_path: Path) -> None:
    # torch built without CUDA raises AssertionError from `.cuda()`: `except RuntimeError` lets it through
    found = _tree(tmp_path, {"infer.py": LOAD_MODEL.format(caught="RuntimeError")})
    assert _in(found, "infer.py")[10]["NPU001"] == "error"


def test_a_cuda_move_whose_handler_catches_any_error_is_a_warning(tmp_path: Path) -> None:
    found = _tree(tmp_path, {"infer.py": LOAD_MODEL.format(caught="(AssertionError, RuntimeError)")})
    assert _in(found, "infer.py")[10]["NPU001"] == "warning"


# -- a JAX model's config module (ml_collections dicts, no framework import of its own) ------------------------------

AF_CONFIG = """\
import copy

import ml_collections


CONFIG = ml_collections.ConfigDict({
    'model': {
        'global_config': {
            'bfloat16': True,
            'deterministic': False,
        },
    },
})


def model_config(name: str) -> ml_collections.ConfigDict:
    return copy.deepcopy(CONFIG)
"""

AF_MODULES = """\
import haiku as hk
import jax
import jax.numpy as jnp


class AlphaFold(hk.Module):
    def __call__(self, batch):
        return jax.tree_util.tree_map(jnp.asarray, batch)
"""

TORCH_MODEL = """\
import torch


class Emulator(torch.nn.Module):
    def forward(self, x):
        return x
"""


def test_a_setting_in_a_jax_models_config_module_is_dropped(tmp_path: Path) -> None:
    found = _tree(tmp_path, {"_vendor/alphafold/model/config.py": AF_CONFIG,
                             "_vendor/alphafold/model/modules.py": AF_MODULES,
                             "_vendor/alphafold/model/features.py": "import tensorflow.compat.v1 as tf\n"})
    assert "NPU246" not in _in(found, "model/config.py").get(9, {})


def test_a_setting_in_a_config_module_beside_pytorch_code_is_kept(tmp_path: Path) -> None:
    found = _tree(tmp_path, {"emulator/config.py": AF_CONFIG, "emulator/model.py": TORCH_MODEL})
    assert _in(found, "emulator/config.py")[9]["NPU246"] == "info"


RUN_DEMO = """\
import argparse

from mynet import build_model


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--ckpt", default="weights.pt")
    args = parser.parse_args()
    model = build_model(args.ckpt).cuda().eval()
    print(model)


if __name__ == "__main__":
    main()
"""
CONVERT_TF = """\
import tensorflow as tf


def convert(path):
    reader = tf.train.load_checkpoint(path)
    return {name: reader.get_tensor(name) for name in reader.get_variable_to_shape_map()}
"""
MYNET = "import torch\n\n\ndef build_model(path):\n    return torch.load(path, map_location='cpu')\n"


def test_a_pytorch_script_beside_a_tensorflow_script_keeps_its_error(tmp_path: Path) -> None:
    # no torch import of its own: it gets torch through the tree's `mynet`, and its `.cuda()` is PyTorch's
    found = _tree(tmp_path, {"scripts/run_demo.py": RUN_DEMO, "scripts/convert_tf_checkpoint.py": CONVERT_TF,
                             "mynet/__init__.py": MYNET})
    assert _in(found, "scripts/run_demo.py")[10]["NPU001"] == "error"


def test_a_device_call_in_a_module_without_imports_beside_tensorflow_keeps_its_error(tmp_path: Path) -> None:
    found = _tree(tmp_path, {"scripts/run_demo.py": RUN_DEMO.replace("from mynet import build_model\n", ""),
                             "scripts/convert_tf_checkpoint.py": CONVERT_TF})
    assert _in(found, "scripts/run_demo.py")[9]["NPU001"] == "error"


# -- a CUDA check that moves a computation to CUDA and its results back where the input was ----------------------------

LOOKUP = """\
import numpy as np
import torch


def generate_lookup(sigma_grid: torch.Tensor, num_omega: int):
    current_device = sigma_grid.device
    sigma_grid_tmp = sigma_grid.to(torch.float64)

    # If cuda is available, initialize everything on GPU.
    if torch.cuda.is_available():
        sigma_grid_tmp = sigma_grid_tmp.to(device="cuda")

    omega_grid = torch.linspace(0.0, 1, num_omega + 1).to(sigma_grid_tmp) * np.pi
    pdf = torch.exp(-omega_grid[None, :] ** 2 / sigma_grid_tmp[:, None] ** 2)
    cdf = torch.cumsum(pdf, dim=-1)
{back}
    return omega_grid, cdf
"""


def test_a_cuda_round_trip_back_to_the_inputs_device_is_a_warning(tmp_path: Path) -> None:
    back = "    cdf = cdf.to(device=current_device)\n    omega_grid = omega_grid.to(device=current_device)"
    found = _tree(tmp_path, {"so3.py": LOOKUP.format(back=back)})
    assert _in(found, "so3.py")[10]["NPU002"] == "warning"


def test_a_cuda_move_whose_results_stay_on_cuda_keeps_its_error(tmp_path: Path) -> None:
    found = _tree(tmp_path, {"so3.py": LOOKUP.format(back="")})
    assert _in(found, "so3.py")[10]["NPU002"] == "error"


# -- a name-to-dtype conversion tested against a module's table of names -------------------------------------------

DTYPES = """\
import torch

HALF_LIST = [16, "16", "fp16", "float16", torch.float16]
FLOAT_LIST = [32, "32", "fp32", "float32", torch.float32]
BFLOAT_LIST = ["bf16", "bfloat16", torch.bfloat16]
FLAGS = ["bf16", "fp16"]


def to_dtype(precision):
    if precision in HALF_LIST:
        return torch.float16
    elif precision in FLOAT_LIST:
        return torch.float32
    elif precision in BFLOAT_LIST:
        return torch.bfloat16
    raise RuntimeError(f"unexpected precision: {precision}")


def pick(precision):
    if precision in FLAGS:
        return torch.float16
    return torch.float32
"""


def test_a_conversion_tested_against_a_table_of_one_dtypes_names_is_dropped(tmp_path: Path) -> None:
    found = _tree(tmp_path, {"utils/torch_dtypes.py": DTYPES})
    lines = _in(found, "torch_dtypes.py")
    assert "NPU202" not in lines.get(11, {}) and "NPU201" not in lines.get(15, {})
    assert lines[21]["NPU202"] == "info"       # a table of two dtypes' names: the branch picks no one


# -- an opt-in extra that asks a plain dependency for its CUDA variant -------------------------------------------------

PYPROJECT = """\
[build-system]
requires = ["setuptools>=64"]
build-backend = "setuptools.build_meta"

[project]
name = "proteinemu"
version = "1.0.0"
dependencies = [
    "torch>=2.6",
    "jax>=0.4.35,<0.11",
    "numpy",
]

[project.optional-dependencies]
dev = ["pytest"]
cuda = [
    "jax[cuda12]>=0.4.35,<0.11",
]
"""


def test_a_cuda_variant_asked_only_in_an_opt_in_extra_is_a_warning(tmp_path: Path) -> None:
    found = _tree(tmp_path, {"pyproject.toml": PYPROJECT})
    assert _in(found, "pyproject.toml")[17]["NPU023"] == "warning"


def test_the_same_variant_in_the_plain_dependencies_keeps_its_error(tmp_path: Path) -> None:
    plain = PYPROJECT.replace('    "jax>=0.4.35,<0.11",\n', '    "jax[cuda12]>=0.4.35,<0.11",\n')
    found = _tree(tmp_path, {"pyproject.toml": plain})
    assert _in(found, "pyproject.toml")[10]["NPU023"] == "error"
    assert _in(found, "pyproject.toml")[17]["NPU023"] == "error"      # a plain install pulls it too


def test_a_device_choice_in_other_framework_code_stays_at_info(tmp_path: Path) -> None:
    demo = ("import argparse\n\nimport tensorflow as tf\n\nparser = argparse.ArgumentParser()\n"
            "parser.add_argument('--device', help='device to run the pipeline', default='gpu')\n")
    found = _tree(tmp_path, {"scripts/demo_tf.py": demo})
    assert _in(found, "demo_tf.py")[6]["NPU050"] == "info"
