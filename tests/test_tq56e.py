"""Precision fixes of tq56e (session 56, tuned on heldout73).

- a package-named arm of a per-option set beside the option's torch arm (`if backend == "horovod": hvd.init()` next
  to `if backend == "torch": dist.init_process_group(...)`): policy (k), info (auditor/static/chosen_members.py
  `lower_label_members`);
- a member registered under the name of the package it is built on (`@registry.register("apex") class ApexTrainer`
  beside "ddp" / "hvd"): policy (k), info (`apply_registered_members`, `_member_packages`);
- the names a raising `if x not in [...]` accepts (auditor/static/visitor.py `_accepted_literals`).

Code written afresh in the shape of the trees' code, not copied; each test has its control.
"""
from __future__ import annotations

from pathlib import Path

from tests.static_snippets import findings_on_line, line_of, write_tree


def _codes(root: Path, rel: str, line: int) -> set[tuple[str, str]]:
    return {(code, severity) for code, severity, _ in findings_on_line(root, rel, line)}


# a speech toolkit's distributed helper: the user picks torch.distributed or Horovod by `--distributed`
DIST = """\
    import os

    import torch.distributed as dist

    try:
        import horovod.torch as hvd
        hvd_ok = True
    except ImportError:
        hvd_ok = False

    BACKEND = "none"


    def setup(backend):
        global BACKEND
        BACKEND = backend
        if backend == "horovod":
            hvd.init()
        if backend == "torch":
            dist.init_process_group(backend="nccl", rank=int(os.environ["RANK"]),
                                    world_size=int(os.environ["WORLD_SIZE"]))
"""

# the control: Horovod is the only backend the option names beside "none"
DIST_ALONE = DIST.replace('if backend == "torch":', 'if backend == "none":')


def test_package_arm_beside_torch_arm_is_info(tmp_path: Path) -> None:
    root = write_tree(tmp_path, {"kit/dist.py": DIST})
    assert ("NPU144", "info") in _codes(root, "kit/dist.py", line_of(DIST, "hvd.init()"))
    # the torch arm keeps its own finding
    assert ("NPU101", "error") in _codes(root, "kit/dist.py", line_of(DIST, 'backend="nccl"'))


def test_package_arm_without_torch_arm_keeps_error(tmp_path: Path) -> None:
    root = write_tree(tmp_path, {"kit/dist.py": DIST_ALONE})
    assert ("NPU144", "error") in _codes(root, "kit/dist.py", line_of(DIST_ALONE, "hvd.init()"))


REGISTRY = """\
    class Registry:
        def __init__(self):
            self.table = {}

        def register(self, name):
            def wrap(cls):
                self.table[name] = cls
                return cls
            return wrap


    class KitRegisters:
        trainer = Registry()
"""

APEX_TRAINER = """\
    import torch
    from kit.registry import KitRegisters

    try:
        import apex
        apex_ok = True
    except ImportError:
        apex_ok = False


    @KitRegisters.trainer.register("apex")
    class ApexTrainer:
        def __init__(self, model, optimizer, opt_level: str = "O1"):
            self.model, self.optimizer = apex.amp.initialize(model, optimizer, opt_level=opt_level)

        def step(self, loss):
            with apex.amp.scale_loss(loss, self.optimizer) as scaled:
                scaled.backward()
            self.optimizer.step()
"""

DDP_TRAINER = """\
    import torch
    from kit.registry import KitRegisters


    @KitRegisters.trainer.register("{name}")
    class {cls}:
        def __init__(self, model, optimizer):
            self.model, self.optimizer = model, optimizer
            self.scaler = torch.amp.GradScaler()

        def step(self, loss):
            self.scaler.scale(loss).backward()
            self.scaler.step(self.optimizer)
"""


def test_registered_member_named_for_its_package_is_info(tmp_path: Path) -> None:
    root = write_tree(tmp_path, {"kit/__init__.py": "", "kit/registry.py": REGISTRY,
                                 "kit/trainer/apex.py": APEX_TRAINER,
                                 "kit/trainer/ddp.py": DDP_TRAINER.format(name="ddp", cls="DdpTrainer"),
                                 "kit/trainer/fsdp.py": DDP_TRAINER.format(name="fsdp", cls="FsdpTrainer")})
    codes = _codes(root, "kit/trainer/apex.py", line_of(APEX_TRAINER, "apex.amp.scale_loss"))
    assert codes and all(sev == "info" for _, sev in codes)


def test_registered_member_alone_keeps_warning(tmp_path: Path) -> None:
    # the control: no sibling trainers registered, the apex trainer is the tree's only one
    root = write_tree(tmp_path, {"kit/__init__.py": "", "kit/registry.py": REGISTRY,
                                 "kit/trainer/apex.py": APEX_TRAINER})
    codes = _codes(root, "kit/trainer/apex.py", line_of(APEX_TRAINER, "apex.amp.scale_loss"))
    assert any(sev == "warning" for _, sev in codes)


LIBS = """\
    def pick_trainer(trainer, distributed=False):
        if not distributed and trainer not in ["ddp", "apex"]:
            raise ValueError(f"single-process training does not support the {trainer} trainer")
        return trainer


    def pick_device(device):
        if device not in ("cuda", "cpu"):
            raise ValueError(f"unknown device {device}")
        return device


    def pick_only_apex(trainer):
        if trainer not in ["apex"]:
            raise ValueError("this recipe needs the apex trainer")
        return trainer
"""


def test_names_a_raising_if_accepts_report_nothing(tmp_path: Path) -> None:
    root = write_tree(tmp_path, {"libs.py": LIBS})
    assert not [c for c in _codes(root, "libs.py", line_of(LIBS, '["ddp", "apex"]')) if c[0] == "NPU318"]
    # the controls: a test that accepts apex alone requires it; a list of devices is where a port adds "npu"
    assert [c for c in _codes(root, "libs.py", line_of(LIBS, '["apex"]')) if c[0] == "NPU318"]
    assert [c for c in _codes(root, "libs.py", line_of(LIBS, '("cuda", "cpu")')) if c[0] == "NPU003"]


# a LAVIS-style task package: a sample helper with a CUDA switch, called by the task loops with the loop's own switch
DATA_UTILS = """\
    def move_to_cuda(sample):
        return {k: v.cuda() for k, v in sample.items()}


    def prepare_sample(samples, cuda_enabled=True):
        if cuda_enabled:
            samples = move_to_cuda(samples)
        return samples
"""

TASK = """\
    from pack.data_utils import prepare_sample


    class BaseTask:
        def train_epoch(self, model, loader, cuda_enabled=False):
            for samples in loader:
                samples = prepare_sample(samples, cuda_enabled=cuda_enabled)
                model(samples).backward()
"""

# the control: one call lets the default through
TASK_DEFAULT = TASK + """\

        def evaluate(self, model, loader):
            return [model(prepare_sample(samples)) for samples in loader]
"""


def test_cuda_switch_default_every_caller_passes_is_info(tmp_path: Path) -> None:
    root = write_tree(tmp_path, {"pack/__init__.py": "", "pack/data_utils.py": DATA_UTILS, "pack/task.py": TASK})
    assert ("NPU038", "info") in _codes(root, "pack/data_utils.py", line_of(DATA_UTILS, "cuda_enabled=True"))


def test_cuda_switch_default_a_caller_lets_through_keeps_warning(tmp_path: Path) -> None:
    root = write_tree(tmp_path, {"pack/__init__.py": "", "pack/data_utils.py": DATA_UTILS,
                                 "pack/task.py": TASK_DEFAULT})
    assert ("NPU038", "warning") in _codes(root, "pack/data_utils.py", line_of(DATA_UTILS, "cuda_enabled=True"))
