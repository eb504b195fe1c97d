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
