"""Precision fixes of tq54a (session 54, tuned on heldout70 trees 1, 2, 4, 5, 6): host reads on branches taken once
every N epochs (auditor/static/host_scopes.py), ... Each family has a positive case and a control that keeps its
finding. Code written afresh in the shape of those trees."""
from __future__ import annotations

from tests.static_snippets import line_of, run_values_by_line

WORKSPACE = '''\
import torch
import tqdm


class TrainDiffusionWorkspace:
    def run(self, cfg, policy, train_dataloader, optimizer):
        device = torch.device(cfg.training.device)
        train_sampling_batch = None
        step_log = dict()
        for local_epoch_idx in range(cfg.training.num_epochs):
            train_losses = list()
            with tqdm.tqdm(train_dataloader, desc=f"Training epoch {self.epoch}") as tepoch:
                for batch_idx, batch in enumerate(tepoch):
                    batch = {k: v.to(device, non_blocking=True) for k, v in batch.items()}
                    if train_sampling_batch is None:
                        train_sampling_batch = batch
                    loss = policy.compute_loss(batch)
                    loss.backward()
                    optimizer.step()
                    train_losses.append(loss.detach())

            # run diffusion sampling on a training batch
            if (self.epoch % cfg.training.sample_every) == 0:
                with torch.no_grad():
                    result = policy.predict_action(train_sampling_batch["obs"])
                    mse = torch.nn.functional.mse_loss(result["action_pred"], train_sampling_batch["action"])
                    step_log["train_action_mse_error"] = mse.item()
                    del result
            self.global_step += 1
            self.epoch += 1
'''


def _codes(tmp_path, src: str, needle: str) -> set[str]:
    codes = run_values_by_line(tmp_path, {"diffusion_policy/workspace/train_workspace.py": src},
                               "diffusion_policy/workspace/train_workspace.py", "code")
    return codes.get(line_of(src, needle), set())


def test_host_read_on_a_branch_taken_every_n_epochs_is_dropped(tmp_path):
    assert "NPU703" not in _codes(tmp_path, WORKSPACE, 'step_log["train_action_mse_error"] = mse.item()')


def test_host_read_on_an_every_n_epochs_test_inside_the_batch_loop_stays(tmp_path):
    """Control: inside the batch loop the test is true on every batch of such an epoch."""
    src = WORKSPACE.replace("                    train_losses.append(loss.detach())\n",
                            "                    train_losses.append(loss.detach())\n"
                            "                    if (self.epoch % cfg.training.sample_every) == 0:\n"
                            "                        step_log['batch_loss'] = loss.item()\n")
    assert "NPU703" in _codes(tmp_path, src, "step_log['batch_loss'] = loss.item()")


def test_host_read_on_a_branch_of_a_step_counter_stays(tmp_path):
    """Control: `self.global_step % N` in the epoch loop is no epoch counter (a plain assignment, not logging)."""
    src = WORKSPACE.replace("if (self.epoch % cfg.training.sample_every) == 0:",
                            "if (self.global_step % cfg.training.sample_every) == 0:")
    assert "NPU703" in _codes(tmp_path, src, 'step_log["train_action_mse_error"] = mse.item()')


# -- backend switches the tree turns one way only (policy (j); a Vega-style `zeus` library inside an RL framework) --

ZEUS_INIT = '''\
import os


def register_zeus(backend):
    """Import and register zeus modules automatically."""
    from zeus.trainer import register_trainer
    register_trainer(backend)


def set_backend(backend="pytorch", device_category="GPU"):
    if "BACKEND_TYPE" in os.environ:
        return
    if device_category is not None:
        os.environ["DEVICE_CATEGORY"] = device_category
    if backend == "pytorch":
        os.environ["BACKEND_TYPE"] = "PYTORCH"
    elif backend == "tensorflow":
        os.environ["BACKEND_TYPE"] = "TENSORFLOW"
    else:
        raise Exception("backend must be pytorch or tensorflow")


def is_torch_backend():
    """Return whether is pytorch backend or not."""
    return os.environ.get("BACKEND_TYPE", None) == "PYTORCH"


def is_tf_backend():
    return os.environ.get("BACKEND_TYPE", None) == "TENSORFLOW"
'''
TRAINER_INIT = '''\
def register_trainer(backend):
    """Import and register trainer automatically."""
    if backend == "pytorch":
        from zeus.trainer.trainer_torch import TrainerTorch
    elif backend == "tensorflow":
        from zeus.trainer.trainer_tf import TrainerTf
'''
TRAINER_TORCH = '''\
import torch


class TrainerTorch:
    def _init_cuda_setting(self):
        torch.cuda.manual_seed(self.config.seed)
'''
TRAINER_TF = '''\
import tensorflow as tf


class TrainerTf:
    def build(self):
        return tf.compat.v1.Session()
'''
MODEL_BUILDER = '''\
import zeus


class ModelBuilder:
    def before_train(self, model):
        if zeus.is_torch_backend():
            if self.trainer.use_cuda:
                model = model.cuda()
        return model
'''
WORKER = '''\
import os
import zeus


def run_remote_worker(worker_id, worker_path):
    zeus.register_zeus(os.environ["BACKEND_TYPE"].lower())
    return worker_id, worker_path
'''
DQN_ZEUS = '''\
from zeus import set_backend, register_zeus
from zeus.trainer.callbacks.model_builder import ModelBuilder

set_backend(backend="tensorflow", device_category="GPU")
register_zeus("tensorflow")


class DqnZeus:
    builder = ModelBuilder()
'''


def _zeus_tree(tmp_path, dqn: str = DQN_ZEUS):
    from tests.static_snippets import write_tree

    return write_tree(tmp_path, {"zeus/__init__.py": ZEUS_INIT, "zeus/trainer/__init__.py": TRAINER_INIT,
                                 "zeus/trainer/trainer_torch.py": TRAINER_TORCH, "zeus/trainer/trainer_tf.py": TRAINER_TF,
                                 "zeus/trainer/callbacks/__init__.py": "", "zeus/trainer/callbacks/model_builder.py":
                                 MODEL_BUILDER, "zeus/trainer/run_remote_worker.py": WORKER,
                                 "xt/__init__.py": "", "xt/model/__init__.py": "", "xt/model/dqn_zeus.py": dqn})


def test_modules_only_an_unselected_backend_arm_imports_are_unreached(tmp_path):
    from tests.static_snippets import severities_at

    root = _zeus_tree(tmp_path)
    assert severities_at(root, "zeus/trainer/trainer_torch.py", TRAINER_TORCH, "manual_seed") == {("info", "unreached")}
    assert severities_at(root, "zeus/trainer/callbacks/model_builder.py", MODEL_BUILDER, "model.cuda()") == \
        {("info", "unreached")}


def test_the_selected_backend_keeps_its_findings(tmp_path):
    """Control: a model of the tree selects the pytorch backend; its arms run."""
    from tests.static_snippets import severities_at

    dqn = DQN_ZEUS.replace('set_backend(backend="tensorflow"', 'set_backend(backend="pytorch"')
    root = _zeus_tree(tmp_path, dqn)
    assert "unreached" not in {c for _, c in severities_at(root, "zeus/trainer/trainer_torch.py", TRAINER_TORCH,
                                                           "manual_seed")}
    assert "unreached" not in {c for _, c in severities_at(root, "zeus/trainer/callbacks/model_builder.py",
                                                           MODEL_BUILDER, "model.cuda()")}


def test_a_switch_nothing_in_the_tree_calls_keeps_its_findings(tmp_path):
    """Control: a library's own switch that only its users call: no value is known, every arm may run."""
    from tests.static_snippets import severities_at

    dqn = DQN_ZEUS.replace('set_backend(backend="tensorflow", device_category="GPU")\nregister_zeus("tensorflow")\n', "")
    root = _zeus_tree(tmp_path, dqn)
    assert "unreached" not in {c for _, c in severities_at(root, "zeus/trainer/trainer_torch.py", TRAINER_TORCH,
                                                           "manual_seed")}


# -- a package copied with its own licence: its classes the tree never names are unreached (policy (j)) --

ROOT_LICENCE = "MIT License\n\nCopyright (c) 2023 Columbia Artificial Intelligence and Robotics Lab\n\nPermission is hereby granted\n"
MINGPT_LICENCE = "The MIT License (MIT) Copyright (c) 2020 Andrej Karpathy\n\nPermission is hereby granted\n"
MINGPT_TRAINER = '''\
import torch


class TrainerConfig:
    max_epochs = 10
    learning_rate = 3e-4

    def __init__(self, **kwargs):
        for k, v in kwargs.items():
            setattr(self, k, v)


class Trainer:
    def __init__(self, model, train_dataset, config):
        self.model = model
        self.device = "cpu"
        if torch.cuda.is_available():
            self.device = torch.cuda.current_device()
            self.model = torch.nn.DataParallel(self.model).to(self.device)
'''
LATENT = '''\
import policy.model.libraries.mingpt.trainer as mingpt_trainer


def get_optimizer(model, learning_rate):
    config = mingpt_trainer.TrainerConfig(learning_rate=learning_rate)
    return model.configure_optimizers(config)
'''


def _mingpt_tree(tmp_path, licence: str = MINGPT_LICENCE):
    from tests.static_snippets import write_tree

    root = write_tree(tmp_path, {"policy/__init__.py": "", "policy/model/__init__.py": "",
                                 "policy/model/libraries/__init__.py": "",
                                 "policy/model/libraries/mingpt/__init__.py": "",
                                 "policy/model/libraries/mingpt/trainer.py": MINGPT_TRAINER,
                                 "policy/model/latent.py": LATENT})
    (root / "LICENSE").write_text(ROOT_LICENCE)
    (root / "policy/model/libraries/mingpt/LICENSE").write_text(licence)
    return root


def test_a_class_of_a_package_copied_with_its_licence_that_nothing_builds_is_unreached(tmp_path):
    from tests.static_snippets import severities_at

    root = _mingpt_tree(tmp_path)
    assert {s for s, _ in severities_at(root, "policy/model/libraries/mingpt/trainer.py", MINGPT_TRAINER,
                                        "torch.nn.DataParallel")} == {"info"}


def test_a_sub_package_licensed_by_the_tree_itself_keeps_its_findings(tmp_path):
    """Control: the package's licence names the tree's own holder: a sub-project of the tree, not a copy."""
    from tests.static_snippets import severities_at

    root = _mingpt_tree(tmp_path, ROOT_LICENCE)
    assert "unreached" not in {c for _, c in severities_at(root, "policy/model/libraries/mingpt/trainer.py",
                                                           MINGPT_TRAINER, "torch.nn.DataParallel")}


# -- torch.nn classes of a tuple that only isinstance reads (diffusion_policy's `_init_weights`) --

INIT_WEIGHTS = '''\
import torch
import torch.nn as nn


class SinusoidalPosEmb(nn.Module):
    pass


class TransformerForDiffusion(nn.Module):
    def _init_weights(self, module):
        ignore_types = (nn.Dropout,
            SinusoidalPosEmb,
            nn.TransformerEncoderLayer,
            nn.TransformerEncoder,
            nn.ModuleList,
            nn.Sequential)
        if isinstance(module, (nn.Linear, nn.Embedding)):
            torch.nn.init.normal_(module.weight, mean=0.0, std=0.02)
        elif isinstance(module, ignore_types):
            pass
        else:
            raise RuntimeError("Unaccounted module {}".format(module))
'''


def _coverage_codes(engine, src: str, needle: str) -> set[str]:
    from tests.static_snippets import findings_by_line

    found = findings_by_line(engine, src, "diffusion_policy/model/transformer_for_diffusion.py")
    return {f.code for f in found.get(line_of(src, needle), [])} & {"NPU501", "NPU502"}


def test_a_module_class_in_a_tuple_only_isinstance_reads_is_no_use(coverage_engine):
    assert not _coverage_codes(coverage_engine, INIT_WEIGHTS, "nn.TransformerEncoder,")


def test_a_tuple_read_elsewhere_too_is_kept(coverage_engine):
    """Control: the tuple is also read to build its classes, so the layer may run."""
    src = INIT_WEIGHTS + "        self.layers = [cls() for cls in ignore_types]\n"
    assert _coverage_codes(coverage_engine, src, "nn.TransformerEncoder,")


# -- ONNX Runtime providers an `assert` checks a parameter against (CosyVoice2's frontend) --

FRONTEND = '''\
import onnxruntime


class CosyVoiceFrontEnd(object):
    def __init__(self, campplus_model: str, onnx_provider: str = "CUDAExecutionProvider"):
        assert onnx_provider in ["CUDAExecutionProvider", "CPUExecutionProvider"], "invalid onnx provider"
        option = onnxruntime.SessionOptions()
        self.campplus_session = onnxruntime.InferenceSession(campplus_model, sess_options=option,
                                                             providers=[onnx_provider])
'''


def test_providers_an_assert_accepts_select_none(tmp_path):
    codes = run_values_by_line(tmp_path, {"cosyvoice2/cli/frontend.py": FRONTEND}, "cosyvoice2/cli/frontend.py", "code")
    assert "NPU033" not in codes.get(line_of(FRONTEND, "assert onnx_provider in"), set())
    # control: the parameter's CUDA default selects the provider the session is given
    assert "NPU033" in codes.get(line_of(FRONTEND, 'onnx_provider: str = "CUDAExecutionProvider"'), set())


# -- a lookup of nvidia-smi whose answer nothing reads (xingtian's setup.py) --

SETUP = '''\
import os
from subprocess import Popen, PIPE
from setuptools import find_packages, setup

here = os.path.abspath(os.path.dirname(__file__))

com_smi = Popen(['command -v nvidia-smi'], stdout=PIPE, shell=True)
com_out = com_smi.communicate()[0].decode("UTF-8")
allow_gpu = com_out != ""

install_requires = list()
# if allow_gpu:
#     install_requires.append("tensorflow-gpu==1.15.0")

setup(name="xingtian", packages=find_packages(), install_requires=install_requires)
'''


def test_a_lookup_of_nvidia_smi_nothing_reads_is_dropped(tmp_path):
    codes = run_values_by_line(tmp_path, {"setup.py": SETUP}, "setup.py", "code")
    assert "NPU407" not in codes.get(line_of(SETUP, "command -v nvidia-smi"), set())


def test_a_lookup_of_nvidia_smi_that_chooses_a_package_stays(tmp_path):
    """Control: the answer chooses the TensorFlow build to install."""
    src = SETUP.replace("# if allow_gpu:\n#     install_requires", "if allow_gpu:\n    install_requires")
    codes = run_values_by_line(tmp_path, {"setup.py": src}, "setup.py", "code")
    assert "NPU407" in codes.get(line_of(src, "command -v nvidia-smi"), set())
