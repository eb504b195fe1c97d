"""Precision fixes of pd43 (session 29, issue 11; heldout32 TUNED). Code written afresh in the shapes heldout32's
false rows showed, each with a control that keeps its finding or severity:

- a parametrize table of device names beside another accelerator's, read only to build `torch.device(...)` values
  the test compares or stores (tabicl's `devices_match` test): data, info (unselected_devices._device_data_rows);
- a test that skips itself where CUDA is present (tirex's no-CUDA error test): the probe is info
  (unselected_devices._skips_on_cuda);
- a name bound to a CUDA probe that only an NPU-aware dispatch reads (ChatTTS' `select_device`: `provider =
  torch.cuda if has_cuda else torch.npu`): npu-path, info (backends._probes_read_on_npu_paths)."""
from __future__ import annotations

from tests.static_snippets import line_of, run_values_by_line


def _severities(tmp_path, files, rel):
    return run_values_by_line(tmp_path, files, rel, "severity")


# -- device names as parametrize data ---------------------------------------------------------------------------------
DEVICE_TABLE = """\
import pytest
import torch

from placement.devices import same_device


@pytest.mark.parametrize(
    "left, right, expected",
    [
        ("cpu", "cpu", True),
        ("cuda", "cuda:0", True),
        ("cuda:0", "cuda:1", False),
        ("mps", "mps:0", True),
        ("xpu:0", "xpu", True),
    ],
)
def test_same_device(left, right, expected):
    assert same_device(torch.device(left), torch.device(right)) is expected


@pytest.mark.parametrize("device_type, expected", [("cpu", False), ("mps", False), ("cuda", True)])
def test_flash_choice(device_type, expected):
    est = Estimator(use_flash="auto")
    est.device_ = torch.device(device_type)
    assert est.pick_flash() is expected


@pytest.mark.parametrize("device", ["cpu", "cuda", "mps"])
def test_forward_runs(device):
    x = torch.randn(4, 8, device=torch.device(device))
    assert model(x).shape == (4, 2)
"""


def test_device_names_compared_as_data_are_info(tmp_path):
    sev = _severities(tmp_path, {"tests/test_devices.py": DEVICE_TABLE}, "tests/test_devices.py")
    assert sev[line_of(DEVICE_TABLE, '("cuda", "cuda:0", True)')] == {"info"}
    assert sev[line_of(DEVICE_TABLE, '("cuda:0", "cuda:1", False)')] == {"info"}
    assert sev[line_of(DEVICE_TABLE, '("cuda", True)]')] == {"info"}


def test_control_a_table_whose_device_places_a_tensor_keeps_its_error(tmp_path):
    sev = _severities(tmp_path, {"tests/test_devices.py": DEVICE_TABLE}, "tests/test_devices.py")
    assert sev[line_of(DEVICE_TABLE, '["cpu", "cuda", "mps"]')] == {"error"}


SKIPPED_TABLE = DEVICE_TABLE.replace("    est = Estimator(", "    if not torch.cuda.is_available():\n"
                                     "        pytest.skip('no CUDA')\n    est = Estimator(")


def test_control_a_table_whose_test_skips_without_cuda_keeps_its_error(tmp_path):
    sev = _severities(tmp_path, {"tests/test_devices.py": SKIPPED_TABLE}, "tests/test_devices.py")
    assert sev[line_of(SKIPPED_TABLE, '("cuda", True)]')] == {"error"}


# -- a test that skips where CUDA is present --------------------------------------------------------------------------
NO_CUDA_TEST = """\
import pytest
import torch

from forecast import load_model


def test_cuda_device_without_cuda_raises():
    if torch.cuda.is_available():
        pytest.skip("CUDA is available, skipping the no-CUDA test")
    with pytest.raises(ValueError):
        load_model("org/model", device="cpu-only")


@pytest.mark.skipif(torch.cuda.device_count() > 0, reason="needs a machine without a GPU")
def test_cpu_fallback_warns():
    with pytest.warns(UserWarning):
        load_model("org/model", device="auto")


def test_kernels_match():
    if not torch.cuda.is_available():
        pytest.skip("needs CUDA")
    assert load_model("org/model", device="auto") is not None
"""


def test_a_skip_where_cuda_is_present_is_info(tmp_path):
    sev = _severities(tmp_path, {"tests/test_load.py": NO_CUDA_TEST}, "tests/test_load.py")
    assert sev[line_of(NO_CUDA_TEST, "    if torch.cuda.is_available():")] == {"info"}
    assert sev[line_of(NO_CUDA_TEST, "device_count() > 0")] == {"info"}


def test_control_a_skip_without_cuda_keeps_its_warning(tmp_path):
    sev = _severities(tmp_path, {"tests/test_load.py": NO_CUDA_TEST}, "tests/test_load.py")
    assert sev[line_of(NO_CUDA_TEST, "if not torch.cuda.is_available():")] == {"warning"}     # a skip mark, as before


# -- a CUDA probe read only by an NPU-aware dispatch ------------------------------------------------------------------
SELECT_DEVICE = """\
import importlib.util

import torch


def _npu_available():
    return importlib.util.find_spec("torch_npu") is not None


def select_device(min_memory=2047):
    has_cuda = torch.cuda.is_available()
    if has_cuda or _npu_available():
        provider = torch.cuda if has_cuda else torch.npu
        free = provider.mem_get_info(0)[0]
        if free / 2**20 < min_memory:
            return torch.device("cpu")
        return provider._get_device(0)
    return torch.device("cpu")


def report():
    gpu = torch.cuda.is_available()
    print("gpu" if gpu else "cpu")
    if gpu or _npu_available():
        return torch.npu if not gpu else torch.cuda
"""


def test_a_probe_only_an_npu_dispatch_reads_is_info(tmp_path):
    sev = _severities(tmp_path, {"app/gpu.py": SELECT_DEVICE}, "app/gpu.py")
    assert sev[line_of(SELECT_DEVICE, "has_cuda = torch.cuda.is_available()")] == {"info"}


def test_control_a_probe_also_read_elsewhere_keeps_its_error(tmp_path):
    sev = _severities(tmp_path, {"app/gpu.py": SELECT_DEVICE}, "app/gpu.py")
    assert sev[line_of(SELECT_DEVICE, "gpu = torch.cuda.is_available()")] == {"error"}


# -- an application's engine behind a flag no caller turns on ---------------------------------------------------------
APP = """\
import os

from flask import Flask

import speech

app = Flask(__name__)
chat = speech.Chat()
chat.load(device=os.getenv("DEVICE", "cpu"), compile=False)


@app.route("/tts")
def tts():
    return chat.infer("hello")
"""

SPEECH_INIT = "from .core import Chat\n"

CORE = """\
from .model.gpt import GPT


class Chat:
    def load(self, device="cpu", compile=False, use_vllm=False, experimental=False):
        self.gpt = GPT(device=device, use_vllm=use_vllm)
        self.gpt.load_pretrained("weights", experimental=experimental)

    def infer(self, text):
        return self.gpt.generate(text)
"""

GPT_PY = """\
import torch


class GPT(torch.nn.Module):
    def __init__(self, device="cpu", use_vllm=False):
        super().__init__()
        self.device = device
        self.is_vllm = use_vllm

    def load_pretrained(self, folder, experimental=False):
        if self.is_vllm:
            from .engine import LLM

            self.llm = LLM(folder)
            return
        self.model = torch.nn.Linear(4, 4).to(self.device)
        if experimental and "cuda" in str(self.device):
            from .fused import FusedModel

            self.model = FusedModel.from_linear(self.model)

    def generate(self, text):
        return self.model(torch.zeros(4, device=self.device))
"""

ENGINE = """\
import torch


class LLM:
    def __init__(self, folder):
        self.folder = folder
        torch.cuda.synchronize()
        self.free, self.total = torch.cuda.mem_get_info()
"""

FUSED = """\
import torch


class FusedModel(torch.nn.Module):
    @classmethod
    def from_linear(cls, linear):
        model = cls()
        model.graph = torch.cuda.CUDAGraph()
        return model
"""

PYPROJECT = """\
[tool.poetry]
name = "speech-ui"
version = "0.1.0"
package-mode = false

[tool.poetry.dependencies]
python = "^3.10"
flask = "^3.0"
"""


def _app_files(app=APP, pyproject=PYPROJECT):
    return {"app.py": app, "speech/__init__.py": SPEECH_INIT, "speech/core.py": CORE,
            "speech/model/__init__.py": "", "speech/model/gpt.py": GPT_PY, "speech/model/engine.py": ENGINE,
            "speech/model/fused.py": FUSED, "pyproject.toml": pyproject}


def test_code_behind_flags_no_caller_turns_on_is_unreached(tmp_path):
    sev = _severities(tmp_path, _app_files(), "speech/model/engine.py")
    assert sev[line_of(ENGINE, "torch.cuda.synchronize()")] == {"info"}
    sev = _severities(tmp_path / "b", _app_files(), "speech/model/fused.py")
    assert sev[line_of(FUSED, "torch.cuda.CUDAGraph()")] == {"info"}


def test_control_a_caller_passing_the_flag_keeps_the_engine(tmp_path):
    app = APP.replace("compile=False)", "compile=False, use_vllm=True)")
    sev = _severities(tmp_path, _app_files(app), "speech/model/engine.py")
    assert sev[line_of(ENGINE, "torch.cuda.synchronize()")] == {"error"}
    app = APP.replace('chat.load(device=os.getenv("DEVICE", "cpu"), compile=False)',
                      'chat.load(os.getenv("DEVICE", "cpu"), False, False, True)')
    sev = _severities(tmp_path / "b", _app_files(app), "speech/model/fused.py")
    assert sev[line_of(FUSED, "torch.cuda.CUDAGraph()")] == {"error"}    # positionally


def test_control_a_poetry_package_is_a_library(tmp_path):
    pyproject = PYPROJECT.replace("package-mode = false\n", "")
    sev = _severities(tmp_path, _app_files(pyproject=pyproject), "speech/model/engine.py")
    assert sev[line_of(ENGINE, "torch.cuda.synchronize()")] == {"error"}


# -- options a CUDA flag turns off, implementation fallbacks, host casts ----------------------------------------------
TRAINER = """\
from contextlib import nullcontext

import torch


class Trainer:
    def __init__(self, amp=True, use_flash="auto", backend="cuda"):
        self.amp = amp
        self.use_flash = use_flash
        self.backend = backend

    def amp_setup(self, device):
        use_amp = self.amp and device.type == "cuda" and torch.cuda.is_available()
        scaler = torch.GradScaler("cuda", enabled=use_amp)
        other = torch.GradScaler("cuda", enabled=self.amp)
        return use_amp, scaler, other

    def flash_choice(self, device_type, small):
        if device_type != "cuda":
            use_flash = False
        elif small:
            use_flash = False
        else:
            use_flash = True
        if device_type != "cuda":
            self.model = self.model.float()
        return use_flash

    def kernels(self):
        if self.backend == "cuda" and not has_fused_kernels():
            self.backend = "torch"
        backend = self.backend
        if backend == "cuda" and not has_fused_kernels():
            backend = "torch"
        if backend == "cuda" and not torch.cuda.is_available():
            backend = "cpu"
        return backend

    def encode(self, emb):
        arr = emb.to(dtype=torch.float16, device="cpu").numpy()
        dev = emb.to(dtype=torch.float16, device="cuda")
        return arr.tobytes(), dev
"""


def test_a_call_enabled_only_with_cuda_is_a_warning(tmp_path):
    sev = _severities(tmp_path, {"pkg/trainer.py": TRAINER}, "pkg/trainer.py")
    assert sev[line_of(TRAINER, "enabled=use_amp")] >= {"warning"} and "error" not in sev[
        line_of(TRAINER, "enabled=use_amp")]


def test_control_a_call_enabled_by_a_plain_switch_keeps_its_error(tmp_path):
    sev = _severities(tmp_path, {"pkg/trainer.py": TRAINER}, "pkg/trainer.py")
    assert "error" in sev[line_of(TRAINER, "enabled=self.amp")]


def test_a_compare_that_only_turns_an_option_off_is_a_warning(tmp_path):
    sev = _severities(tmp_path, {"pkg/trainer.py": TRAINER}, "pkg/trainer.py")
    first = TRAINER.splitlines().index('        if device_type != "cuda":') + 1
    assert sev[first] == {"warning"}


def test_control_a_compare_that_changes_the_model_keeps_its_error(tmp_path):
    sev = _severities(tmp_path, {"pkg/trainer.py": TRAINER}, "pkg/trainer.py")
    assert "error" in sev[line_of(TRAINER, "self.model = self.model.float()") - 1]


def test_an_implementation_name_compared_for_its_fallback_is_no_finding(tmp_path):
    sev = _severities(tmp_path, {"pkg/trainer.py": TRAINER}, "pkg/trainer.py")
    assert line_of(TRAINER, 'if backend == "cuda" and not has_fused_kernels():') not in sev


def test_control_a_device_fallback_keeps_its_finding(tmp_path):
    sev = _severities(tmp_path, {"pkg/trainer.py": TRAINER}, "pkg/trainer.py")
    assert line_of(TRAINER, 'if backend == "cuda" and not torch.cuda.is_available():') in sev


def test_a_cast_in_a_move_to_the_host_is_no_dtype_hint(tmp_path):
    sev = _severities(tmp_path, {"pkg/trainer.py": TRAINER}, "pkg/trainer.py")
    assert line_of(TRAINER, 'device="cpu").numpy()') not in sev


def test_control_a_cast_in_a_move_to_cuda_keeps_its_findings(tmp_path):
    sev = _severities(tmp_path, {"pkg/trainer.py": TRAINER}, "pkg/trainer.py")
    assert line_of(TRAINER, 'device="cuda")') in sev


# -- a docs CI job installing torch; a list of classes picked by name -------------------------------------------------
DOCS_WORKFLOW = """\
name: docs
on: [push]
jobs:
  build:
    runs-on: ubuntu-latest
    steps:
    - uses: actions/checkout@v4
    - name: Build Sphinx docs
      run: |
        pip install torch
        pip install -r requirements-doc.txt
        cd docs
        make html
  test:
    runs-on: ubuntu-latest
    steps:
    - uses: actions/checkout@v4
    - name: Test
      run: |
        pip install torch
        pytest tests
"""


def test_torch_installed_to_build_the_docs_gets_no_pairing_note(tmp_path):
    sev = _severities(tmp_path, {".github/workflows/docs.yml": DOCS_WORKFLOW}, ".github/workflows/docs.yml")
    assert DOCS_WORKFLOW.splitlines().index("        pip install torch") + 1 not in sev


def test_control_torch_installed_to_run_tests_keeps_its_note(tmp_path):
    sev = _severities(tmp_path, {".github/workflows/docs.yml": DOCS_WORKFLOW}, ".github/workflows/docs.yml")
    lines = [i for i, text in enumerate(DOCS_WORKFLOW.splitlines(), 1) if text == "        pip install torch"]
    assert lines[1] in sev


RNN_MODEL = """\
from torch import nn


class Encoder(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.rnn_list = [nn.LSTM, nn.RNN, nn.GRU]
        for rnn_class in self.rnn_list:
            if rnn_class.__name__ == config.rnn_type:
                self.rnn = rnn_class(input_size=8, hidden_size=16, batch_first=True)
        self.cells = [nn.RNN(8, 16), nn.LSTM(8, 16)]


def build_all():
    return [cls(8, 16) for cls in (nn.RNN, nn.GRU)]
"""


def _cli_severities(tmp_path, capsys, rel, src):
    """Severity per line of `rel` as `audit` reports it (the coverage tables' NPU501 / NPU502 included)."""
    import json

    from auditor.cli import main
    from tests.static_snippets import write_source

    write_source(tmp_path, rel, src)
    main([str(tmp_path / rel), "--format", "json", "--no-cache", "--fail-on", "never"])
    out: dict[int, set[str]] = {}
    for f in json.loads(capsys.readouterr().out)["findings"]:
        out.setdefault(f["line"], set()).add(f["severity"])
    return out


def test_a_class_in_a_list_picked_by_name_is_info(tmp_path, capsys):
    sev = _cli_severities(tmp_path, capsys, "pkg/encoder.py", RNN_MODEL)
    # info at most: since tq48b a list of three or more torch.nn classes reads as a registry, with no support-list
    # pointer at all
    assert sev.get(line_of(RNN_MODEL, "self.rnn_list = [nn.LSTM, nn.RNN, nn.GRU]"), set()) <= {"info"}


def test_control_classes_built_outright_keep_their_warning(tmp_path, capsys):
    sev = _cli_severities(tmp_path, capsys, "pkg/encoder.py", RNN_MODEL)
    assert "warning" in sev[line_of(RNN_MODEL, "self.cells = [nn.RNN(8, 16)")]
    assert "warning" in sev[line_of(RNN_MODEL, "for cls in (nn.RNN, nn.GRU)")]
