"""Precision fixes of tq43 (session 43, tuned on heldout47 / heldout48's labels). Each family has a positive case (the
row the labellers called false, in code written afresh in the shape of its tree) and a control that keeps its
finding."""
from __future__ import annotations

from pathlib import Path

from tests.test_tq38 import _in, _tree

# -- strings that only name or store something are no CUDA definition (LLMBox's ModelArguments) ---------------------

ARGUMENTS = """\
from dataclasses import dataclass
from typing import ClassVar, Dict, Optional, Set


@dataclass
class ModelArguments:
    model_name_or_path: str = "gpt2"
    model_backend: Optional[str] = None
    vllm: Optional[bool] = None
    prefix_caching: Optional[bool] = None
    flash_attention: bool = True
    gptq: bool = False
    device_map: str = "auto"

    # simplify logging with model-specific arguments
    _model_specific_arguments: ClassVar[Dict[str, Set[str]]] = {
        "vllm": {"vllm", "prefix_caching", "flash_attention", "gptq"},
        "huggingface": {"device_map", "vllm", "prefix_caching", "flash_attention", "gptq"},
    }

    def __post_init__(self):
        if self.model_backend is None:
            if self.vllm is not None:
                self.model_backend = "vllm" if self.vllm else "huggingface"
            else:
                self.model_backend = "vllm"
"""

METRIC = """\
from .arguments import ModelArguments


def build_args(name):
    return ModelArguments(model_name_or_path=name)
"""

# control: a wrapper whose body calls the CUDA kernel is still the project's own flash-attn code
WRAPPER = """\
from flash_attn import flash_attn_func


class FlashAttention:
    def forward(self, q, k, v):
        return flash_attn_func(q, k, v, causal=True)
"""

USER = """\
from .wrapper import FlashAttention


def attend(q, k, v):
    return FlashAttention().forward(q, k, v)
"""


def test_option_names_and_stored_values_make_no_cuda_definition(tmp_path: Path) -> None:
    found = _tree(tmp_path, {"pkg/__init__.py": "", "pkg/arguments.py": ARGUMENTS, "pkg/metric.py": METRIC,
                             "pkg/wrapper.py": WRAPPER, "pkg/user.py": USER})
    arguments = _in(found, "pkg/arguments.py")
    # the flash_attention string names the class's own field, in a set of field names: no implementation chosen
    assert not any("NPU386" in codes for codes in arguments.values()), arguments
    # the options class is no CUDA code its importers use: no NPU321 / NPU417 at the import or the call
    metric = _in(found, "pkg/metric.py")
    assert not any(code in codes for codes in metric.values() for code in ("NPU321", "NPU417")), metric
    # control: the importer of a real flash-attn wrapper keeps its cross-file pointer
    user = _in(found, "pkg/user.py")
    assert any("NPU321" in codes for codes in user.values()), user


CHOICES = """\
import argparse

parser = argparse.ArgumentParser()
parser.add_argument("--attn", default="sdpa")
SUPPORTED = ["flash_attention_3", "sdpa"]


class Settings:
    sdpa: bool = True
"""


def test_attention_choices_list_keeps_its_finding(tmp_path: Path) -> None:
    # a list of implementations, most of them no field of the file: NPU386 stays where it was
    found = _tree(tmp_path, {"train.py": CHOICES})
    assert "NPU386" in _in(found, "train.py").get(5, {}), found


# -- a per-backend simulator handler chosen by an option (RoboVerse's `--sim`) -------------------------------------

SETUP_UTIL = """\
from metasim.types import SimType


def get_sim_handler_class(sim: SimType):
    if sim == SimType.ISAACGYM:
        try:
            from metasim.sim.isaacgym import IsaacgymHandler

            return IsaacgymHandler
        except ImportError as e:
            raise e
    elif sim == SimType.MUJOCO:
        from metasim.sim.mujoco import MujocoHandler

        return MujocoHandler
    elif sim == SimType.GENESIS:
        from metasim.sim.genesis import GenesisHandler

        return GenesisHandler
    else:
        raise ValueError(f"Invalid simulator type: {sim}")
"""
ISAACGYM = """\
import torch
from isaacgym import gymapi, gymtorch


class IsaacgymHandler:
    def step(self, actions):
        self.gym.set_dof_position_target_tensor(self.sim, gymtorch.unwrap_tensor(actions))
        self.gym.simulate(self.sim)
        self.gym.fetch_results(self.sim, True)
"""
MUJOCO = """\
import mujoco
import torch


class MujocoHandler:
    def step(self, actions):
        mujoco.mj_step(self.model, self.data)
        return torch.zeros(3).cuda()
"""
GENESIS = """\
import genesis as gs


class GenesisHandler:
    def step(self, actions):
        self.scene.step()
"""
LONE = """\
def make_env(sim):
    if sim == "isaacgym":
        from metasim.sim.isaacgym import IsaacgymHandler
        return IsaacgymHandler
    return None
"""


def _sim_tree(util: str) -> dict[str, str]:
    return {"metasim/__init__.py": "", "metasim/types.py": "import enum\nclass SimType(enum.Enum):\n    ISAACGYM = 1\n",
            "metasim/sim/__init__.py": "", "metasim/sim/isaacgym/__init__.py": ISAACGYM,
            "metasim/sim/mujoco/__init__.py": MUJOCO, "metasim/sim/genesis/__init__.py": GENESIS,
            "metasim/utils/__init__.py": "", "metasim/utils/setup_util.py": util}


def test_isaacgym_member_of_an_option_chosen_simulator_set_is_info(tmp_path: Path) -> None:
    found = _tree(tmp_path, _sim_tree(SETUP_UTIL))
    handler = _in(found, "metasim/sim/isaacgym/__init__.py")
    assert handler and all(sev == "info" for codes in handler.values() for sev in codes.values()), handler
    # control: the MuJoCo member runs on Ascend; its own `.cuda()` keeps its error
    assert _in(found, "metasim/sim/mujoco/__init__.py")[8].get("NPU001") == "error"


def test_lone_isaacgym_arm_keeps_its_severity(tmp_path: Path) -> None:
    # one arm and no sibling members: no per-backend set, the Isaac Gym import stays an error
    found = _tree(tmp_path, _sim_tree(LONE))
    handler = _in(found, "metasim/sim/isaacgym/__init__.py")
    assert "error" in handler[2].values(), handler


# -- the import of an availability helper (decision 14): PEFT's `is_bnb_available` ---------------------------------

IMPORT_UTILS = """\
import importlib


def is_bnb_available():
    return importlib.util.find_spec("bitsandbytes") is not None
"""
BOTTLENECK = """\
from ..utils.import_utils import (
    is_bnb_available,
)

if is_bnb_available():
    import bitsandbytes as bnb


def loaded(target):
    return is_bnb_available() and isinstance(target, bnb.nn.Linear8bitLt)
"""
# control: a helper that imports the package itself is CUDA code its importers use
KERNELS = """\
def quantize(x):
    import bitsandbytes.functional as F
    return F.quantize_4bit(x)
"""
CALLER = """\
from ..utils.kernels import quantize


def run(x):
    return quantize(x)
"""


def test_availability_helper_import_is_no_cross_file_finding(tmp_path: Path) -> None:
    found = _tree(tmp_path, {"peft/__init__.py": "", "peft/utils/__init__.py": "",
                             "peft/utils/import_utils.py": IMPORT_UTILS, "peft/utils/kernels.py": KERNELS,
                             "peft/tuners/__init__.py": "", "peft/tuners/bottleneck.py": BOTTLENECK,
                             "peft/tuners/caller.py": CALLER})
    bottleneck = _in(found, "peft/tuners/bottleneck.py")
    assert "NPU417" not in bottleneck.get(1, {}), bottleneck
    assert "NPU431" in bottleneck.get(5, {}), bottleneck       # the helper's call keeps its feature check
    assert "NPU417" in _in(found, "peft/tuners/caller.py").get(1, {})


# -- 'cuda' as a record's key or among option names / words (a copied HF Trainer, stanza, sandbox-fusion) ----------

TRAINER = """\
import torch


def save_rng_state(path):
    rng_states = {"cpu": torch.random.get_rng_state()}
    rng_states["cuda"] = torch.cuda.random.get_rng_state()
    torch.save(rng_states, path)


def load_rng_state(path):
    checkpoint_rng_state = torch.load(path)
    torch.cuda.random.set_rng_state(checkpoint_rng_state["cuda"])


def filter_out_option(config):
    options_to_filter = ['device', 'cpu', 'cuda', 'dev_conll_gold', 'epochs', 'lang', 'mode', 'save_name']
    return {k: v for k, v in config.items() if k not in options_to_filter}


BACKENDS = {"cuda": torch.ones}


def make():
    return BACKENDS["cuda"](3)


def choices(parser):
    parser.add_argument("--device", default="auto", choices=["auto", "cuda", "neuron", "cpu"])
"""


def test_cuda_as_a_key_or_an_option_name_is_no_device_string(tmp_path: Path) -> None:
    found = _in(_tree(tmp_path, {"trainer.py": TRAINER}), "trainer.py")
    assert "NPU003" not in found.get(6, {}) and "NPU002" in found[6], found     # the key; the CUDA call stays
    assert "NPU003" not in found.get(12, {}) and "NPU002" in found[12], found
    assert "NPU003" not in found.get(16, {}), found                             # a list of option names
    # controls: an entry picked and called by the CUDA key, a device choices list
    assert "NPU003" in found.get(24, {}), found
    assert "NPU003" in found.get(28, {}), found


# -- a copied library's own tests and examples (policy (j): AutoGPTQ's tests in Yuan2.0, PEFT's in Alpaca-CoT) -------

COPY_TEST = """\
import unittest

import torch
from dinov2.layers.block import Block


class TestBlock(unittest.TestCase):
    def test_forward(self):
        device = torch.device("cuda:0")
        Block().to(device)
"""
# control: the tree's own test of the same package keeps its severity
OWN_TEST = """\
import torch
from promptda.model import DepthModel


def test_depth():
    DepthModel("hub").to(torch.device("cuda:0"))
"""


def test_tests_of_a_copied_package_are_info(tmp_path: Path) -> None:
    from tests.test_tq42 import DINO, _hub_tree

    files = _hub_tree()
    files[DINO + "tests/test_block.py"] = COPY_TEST
    files["tests/test_model.py"] = OWN_TEST
    found = _tree(tmp_path, files)
    copy_test = _in(found, DINO + "tests/test_block.py")
    assert copy_test[9]["NPU003"] == "info", copy_test
    assert _in(found, "tests/test_model.py")[6]["NPU003"] != "info"


# -- a Qt desktop application built on qtpy (BallonsTranslator's launch.py) -----------------------------------------

LAUNCH = """\
import sys


def main():
    from qtpy.QtWidgets import QApplication
    from ui.mainwindow import MainWindow

    app = QApplication(sys.argv)
    window = MainWindow()
    window.show()
    sys.exit(app.exec_())


if __name__ == "__main__":
    main()
"""
MAINWINDOW = """\
from qtpy.QtWidgets import QMainWindow
from modules.detector import load_model


class MainWindow(QMainWindow):
    def __init__(self):
        super().__init__()
        self.model = load_model()
"""
DETECTOR = """\
import torch


def load_model():
    return torch.nn.Linear(2, 2).cuda()


def model2annotations(img_dir):
    cuda = torch.cuda.is_available()
    return cuda
"""


def test_helper_nothing_calls_in_a_qt_application_is_info(tmp_path: Path) -> None:
    found = _tree(tmp_path, {"launch.py": LAUNCH, "ui/mainwindow.py": MAINWINDOW, "ui/__init__.py": "",
                             "modules/__init__.py": "", "modules/detector.py": DETECTOR})
    detector = _in(found, "modules/detector.py")
    assert detector[9]["NPU002"] == "info", detector        # model2annotations: nothing in the app calls it
    assert detector[5]["NPU001"] == "error", detector       # control: what the main window loads
