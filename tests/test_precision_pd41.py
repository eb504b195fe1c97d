"""Precision fixes of pd41 (session 28, issue 11; heldout30 TUNED). Code written afresh in the shapes heldout30's
false rows showed, each with a control that keeps its finding or severity:

- a uv project whose `[tool.uv.sources]` take torch from a CUDA index for one extra that `[tool.uv].conflicts`
  declares as an alternative to a CPU extra (WhisperLiveKit's `cu129` beside `cpu`): the CUDA member of a user-chosen
  set, info (requirements._lower_uv_cuda_members);
- a constructor that stores a parameter on `self` and overwrites the attribute before anything reads it
  (Genie-Envisioner's MVActor: `self.dtype = dtype` ... `self.dtype = torch.bfloat16`): the default is never used
  (host_scopes._overwritten_stores);
- a `hint=` keyword string naming nvidia-smi (a support-matrix script's result record): text for a person
  (visitor._HELP_KEYWORDS)."""
from __future__ import annotations

from tests.static_snippets import line_of, run_values_by_line


def _severities(tmp_path, files, rel):
    return run_values_by_line(tmp_path, files, rel, "severity")


# -- the CUDA member of uv's conflicting extras ---------------------------------------------------------------------
PYPROJECT = """\
[project]
name = "speech-kit"
version = "0.3.0"
dependencies = ["numpy", "soundfile"]

[project.optional-dependencies]
cpu = ["torch>=2.6", "torchaudio>=2.6"]
cu129 = ["torch>=2.6", "torchaudio>=2.6"]

[tool.uv]
conflicts = [
    [
        { extra = "cpu" },
        { extra = "cu129" },
    ],
]

[tool.uv.sources]
torch = [
    { index = "pytorch-cpu", extra = "cpu", marker = "platform_system != 'Darwin'" },
    { index = "pytorch-cu129", extra = "cu129", marker = "platform_system == 'Linux'" },
]
torchaudio = [
    { index = "pytorch-cpu", extra = "cpu" },
    { index = "pytorch-cu129", extra = "cu129" },
]

[[tool.uv.index]]
name = "pytorch-cpu"
url = "https://download.pytorch.org/whl/cpu"
explicit = true

[[tool.uv.index]]
name = "pytorch-cu129"
url = "https://download.pytorch.org/whl/cu129"
explicit = true
"""

# the same sources without the conflict declaration: nothing says the CUDA extra is one choice among others
NO_CONFLICTS = PYPROJECT.replace("""[tool.uv]
conflicts = [
    [
        { extra = "cpu" },
        { extra = "cu129" },
    ],
]
""", "")

# a CUDA index every install takes torch from (no extra): the CUDA build is the project's only one
ALWAYS_CUDA = """\
[project]
name = "speech-kit"
version = "0.3.0"
dependencies = ["torch>=2.6"]

[tool.uv.sources]
torch = [{ index = "pytorch-cu129" }]

[[tool.uv.index]]
name = "pytorch-cu129"
url = "https://download.pytorch.org/whl/cu129"
explicit = true
"""


def test_the_cuda_extra_of_conflicting_uv_extras_is_info(tmp_path):
    sev = _severities(tmp_path, {"pyproject.toml": PYPROJECT}, "pyproject.toml")
    assert sev.get(line_of(PYPROJECT, '{ index = "pytorch-cu129", extra = "cu129", marker')) == {"info"}
    assert sev.get(line_of(PYPROJECT, '{ index = "pytorch-cu129", extra = "cu129" }')) == {"info"}
    assert sev.get(line_of(PYPROJECT, 'url = "https://download.pytorch.org/whl/cu129"')) == {"info"}


def test_control_without_the_conflict_declaration_the_cuda_index_keeps_its_error(tmp_path):
    sev = _severities(tmp_path, {"pyproject.toml": NO_CONFLICTS}, "pyproject.toml")
    assert "error" in sev.get(line_of(NO_CONFLICTS, '{ index = "pytorch-cu129", extra = "cu129", marker'), set())


def test_control_a_cuda_index_every_install_uses_keeps_its_error(tmp_path):
    sev = _severities(tmp_path, {"pyproject.toml": ALWAYS_CUDA}, "pyproject.toml")
    assert "error" in sev.get(line_of(ALWAYS_CUDA, 'torch = [{ index = "pytorch-cu129" }]'), set())


# -- an attribute store overwritten before anything reads it --------------------------------------------------------
ACTOR = """\
import argparse

import torch
from yaml import Loader, load


class PolicyActor:
    def __init__(
        self,
        config_file,
        device=torch.device("cuda:0"),
        dtype=torch.bfloat16,
        horizon=16,
    ):
        self.device = device
        self.dtype = dtype
        self.horizon = horizon
        cfg = argparse.Namespace(**load(open(config_file), Loader=Loader))
        self.action_type = cfg.data["action_type"]
        if self.action_type == "delta":
            print("delta actions")
        self.args = cfg

        self.dtype = torch.float16
        self.device = "cuda:0"
        self.prepare_models()

    def prepare_models(self):
        self.model = torch.nn.Linear(8, 8).to(self.device, dtype=self.dtype)


class EagerActor:
    def __init__(self, device=torch.device("cuda:0"), dtype=torch.bfloat16):
        self.device = device
        self.dtype = dtype
        self.prepare_models()
        self.dtype = torch.float16
        self.device = "cuda"

    def prepare_models(self):
        self.model = torch.nn.Linear(8, 8).to(self.device, dtype=self.dtype)
"""


def test_a_parameter_stored_then_overwritten_is_never_read(tmp_path):
    found = run_values_by_line(tmp_path, {"actor.py": ACTOR}, "actor.py", "code")
    sev = run_values_by_line(tmp_path, {"actor.py": ACTOR}, "actor.py", "severity")
    first = line_of(ACTOR, '        device=torch.device("cuda:0"),')
    assert sev.get(first) == {"info"}                                   # the device default: never used here
    assert "NPU201" not in found.get(line_of(ACTOR, "dtype=torch.bfloat16,"), set())
    assert "error" in sev.get(line_of(ACTOR, 'self.device = "cuda:0"'), set())   # the value that is used


def test_control_a_method_call_before_the_overwrite_may_read_the_store(tmp_path):
    sev = run_values_by_line(tmp_path, {"actor.py": ACTOR}, "actor.py", "severity")
    line = line_of(ACTOR, 'def __init__(self, device=torch.device("cuda:0"), dtype=torch.bfloat16):')
    assert "error" in sev.get(line, set())


# -- a hint string -----------------------------------------------------------------------------------------------
MATRIX = """\
import subprocess
from dataclasses import dataclass


@dataclass
class CaseResult:
    row_id: str
    status: str
    hint: str = ""


def detect_gpu_available() -> bool:
    try:
        proc = subprocess.run(["nvidia-smi", "-L"], text=True, capture_output=True, check=False, timeout=10)
    except (FileNotFoundError, subprocess.TimeoutExpired):
        return False
    return proc.returncode == 0


def skip_case(row_id):
    return CaseResult(row_id=row_id, status="N/A", hint="nvidia-smi unavailable or failed")
"""


def test_a_hint_keyword_string_is_text(tmp_path):
    found = run_values_by_line(tmp_path, {"scripts/matrix.py": MATRIX}, "scripts/matrix.py", "code")
    assert "NPU407" not in found.get(line_of(MATRIX, 'hint="nvidia-smi unavailable or failed"'), set())
    assert "NPU407" in found.get(line_of(MATRIX, '["nvidia-smi", "-L"]'), set())     # control: the command runs


# -- a CUDA probe beside the file's own NPU probe ------------------------------------------------------------------
PROVIDERS = """\
from onnxruntime import get_available_providers, get_device


class ProviderConfig:
    def __init__(self, cfg):
        self.had = get_available_providers()
        self.use_cuda = cfg.get("use_cuda", False)
        self.use_cann = cfg.get("use_cann", False)

    def get_ep_list(self):
        results = [("CPUExecutionProvider", {})]
        if self.is_cuda_available():
            results.insert(0, ("CUDAExecutionProvider", {}))
        if self.is_cann_available():
            results.insert(0, ("CANNExecutionProvider", {}))
        return results

    def is_cuda_available(self):
        return self.use_cuda and get_device() == "GPU" and "CUDAExecutionProvider" in self.had

    def is_cann_available(self):
        return self.use_cann and "CANNExecutionProvider" in self.had
"""

# the same probe without an NPU sibling: on Ascend it answers False and the session silently runs on the CPU
CUDA_ONLY = PROVIDERS.replace('''        if self.is_cann_available():
            results.insert(0, ("CANNExecutionProvider", {}))
''', "").replace('''
    def is_cann_available(self):
        return self.use_cann and "CANNExecutionProvider" in self.had
''', "")


def test_a_cuda_probe_beside_an_npu_probe_of_the_same_shape_is_info(tmp_path):
    sev = _severities(tmp_path, {"providers.py": PROVIDERS}, "providers.py")
    assert sev.get(line_of(PROVIDERS, "if self.is_cuda_available():")) == {"info"}


def test_control_a_cuda_probe_without_an_npu_sibling_keeps_its_error(tmp_path):
    sev = _severities(tmp_path, {"providers.py": CUDA_ONLY}, "providers.py")
    assert "error" in sev.get(line_of(CUDA_ONLY, "if self.is_cuda_available():"), set())


# -- a CUDA variable read only for an error message -----------------------------------------------------------------
SELECT = """\
import os

import torch


def select_device(device=""):
    device = str(device).lower().replace("cuda:", "").strip()
    if device and device != "cpu":
        visible = os.environ.get("CUDA_VISIBLE_DEVICES", None)
        os.environ["CUDA_VISIBLE_DEVICES"] = device
        if not torch.cuda.is_available():
            raise ValueError(f"Invalid CUDA 'device={device}' requested; CUDA_VISIBLE_DEVICES was {visible}")
    return torch.device("cuda:0" if device and device != "cpu" else "cpu")


def restore_devices(saved=None):
    previous = os.environ.get("CUDA_VISIBLE_DEVICES", "")
    print(f"restoring {previous}")
    os.environ["CUDA_VISIBLE_DEVICES"] = saved or previous
"""


def test_a_cuda_variable_read_only_for_a_message_is_info(tmp_path):
    sev = _severities(tmp_path, {"utils/torch_utils.py": SELECT}, "utils/torch_utils.py")
    assert sev.get(line_of(SELECT, 'visible = os.environ.get("CUDA_VISIBLE_DEVICES", None)')) == {"info"}


def test_control_a_cuda_variable_read_and_set_again_keeps_its_warning(tmp_path):
    sev = _severities(tmp_path, {"utils/torch_utils.py": SELECT}, "utils/torch_utils.py")
    assert "warning" in sev.get(line_of(SELECT, 'previous = os.environ.get("CUDA_VISIBLE_DEVICES", "")'), set())


# -- a CUDA check whose only effect is a speed switch (lead decision 39) -------------------------------------------
TRAINER = """\
import torch


class Trainer:
    def prepare(self):
        if self.args.gradient_checkpointing:
            self.model.enable_gradient_checkpointing()
        if self.args.allow_tf32 and torch.cuda.is_available():
            torch.backends.cuda.matmul.allow_tf32 = True

    def place(self):
        if self.args.use_gpu and torch.cuda.is_available():
            torch.backends.cudnn.benchmark = True
            self.model = self.model.to("cuda")
"""


def test_a_cuda_check_that_only_turns_on_tf32_is_a_warning(tmp_path):
    sev = _severities(tmp_path, {"trainer.py": TRAINER}, "trainer.py")
    assert sev.get(line_of(TRAINER, "if self.args.allow_tf32 and torch.cuda.is_available():")) == {"warning"}


def test_control_a_cuda_check_that_also_places_the_model_keeps_its_error(tmp_path):
    sev = _severities(tmp_path, {"trainer.py": TRAINER}, "trainer.py")
    assert "error" in sev.get(line_of(TRAINER, "if self.args.use_gpu and torch.cuda.is_available():"), set())
