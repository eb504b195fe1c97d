"""The device seam, on the CPU: torch_npu's presence and the NPU's availability are monkeypatched."""
import importlib.util
import sys
import types
import warnings

import pytest
import torch

from auditor import device as devices
from auditor.device import DeviceError, capture_fallbacks, fallback_ops, probe_npu, select_device

# Verbatim from torch_npu 2.6.0.post5's libtorch_npu.so (the general message is assembled from the two
# pieces "The operator '" ... "' is not currently supported on the NPU backend and will fall back to run on
# the CPU." and " This may have performance implications.").
GENERAL = ("The operator 'aten::_ctc_loss' is not currently supported on the NPU backend and will fall back "
           "to run on the CPU. This may have performance implications.")
SPECIFIC = ("CAUTION: The operator aten::logit, aten::logit_ and aten::logit.out is currently not supported on "
            "the NPU backend. Now this operator will fallback to run on the CPU and may have performance "
            "implications.")


@pytest.fixture
def no_torch_npu(monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "torch_npu" else real(name, *a))


@pytest.fixture
def fake_torch_npu(monkeypatch):
    """torch_npu importable; the test sets torch.npu.is_available()."""
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: object() if name == "torch_npu" else real(name, *a))
    monkeypatch.setitem(sys.modules, "torch_npu", types.ModuleType("torch_npu"))
    npu = types.SimpleNamespace(is_available=lambda: False)
    monkeypatch.setattr(torch, "npu", npu, raising=False)
    return npu


def test_cpu_is_always_available():
    assert select_device("cpu") == "cpu"
    assert select_device("CPU") == "cpu"


def test_without_torch_npu_auto_picks_cpu_and_npu_says_what_is_missing(no_torch_npu):
    assert select_device(None) == "cpu"
    assert select_device("auto") == "cpu"
    with pytest.raises(DeviceError, match="torch_npu is not installed"):
        select_device("npu")


def test_torch_npu_without_a_device(fake_torch_npu):
    assert probe_npu() == devices.NpuProbe(True, False, probe_npu().detail)
    with pytest.raises(DeviceError, match="no NPU is visible"):
        select_device("npu")
    assert select_device(None) == "cpu"


def test_torch_npu_with_a_device_is_chosen_by_default(fake_torch_npu):
    fake_torch_npu.is_available = lambda: True
    assert select_device(None) == "npu"
    assert select_device("npu") == "npu"
    assert select_device("cpu") == "cpu"  # --device overrides


def test_broken_torch_npu_import_is_reported(monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: object() if name == "torch_npu" else real(name, *a))
    monkeypatch.delitem(sys.modules, "torch_npu", raising=False)
    real_import = importlib.import_module

    def failing(name, *a):
        if name == "torch_npu":
            raise ImportError("libhccl.so: cannot open shared object file")
        return real_import(name, *a)

    monkeypatch.setattr(importlib, "import_module", failing)
    with pytest.raises(DeviceError, match="import torch_npu` failed.*libhccl"):
        select_device("npu")


def test_unknown_device_value():
    with pytest.raises(DeviceError, match="choose one of auto, cpu, npu, cuda"):
        select_device("tpu")


def test_cuda_without_a_gpu_is_a_clear_error(monkeypatch):
    import torch

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    with pytest.raises(DeviceError, match="--device cuda: torch.cuda.is_available"):
        select_device("cuda")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    assert select_device("cuda") == "cuda"


def test_accelerator_calls_go_to_torch_cuda_for_cuda(monkeypatch):
    """The CUDA branch of the seam calls torch.cuda's twins of torch.npu's calls (no GPU here: patched)."""
    import torch

    from auditor import device

    calls = []
    for name in ("synchronize", "reset_peak_memory_stats"):
        monkeypatch.setattr(torch.cuda, name, lambda name=name: calls.append(name))
    monkeypatch.setattr(torch.cuda, "max_memory_allocated", lambda: 123)
    device.synchronize("cuda")
    device.reset_peak_memory("cuda")
    assert device.peak_memory_bytes("cuda") == 123 and calls == ["synchronize", "reset_peak_memory_stats"]
    assert device.peak_memory_bytes("cpu") is None


def test_cann_version_from_the_toolkit_info_file(tmp_path, monkeypatch):
    from auditor.device import cann_version

    (tmp_path / "x86_64-linux").mkdir()
    (tmp_path / "x86_64-linux" / "ascend_toolkit_install.info").write_text("package_name=Ascend-cann-toolkit\nversion=8.0.0\n")
    monkeypatch.setenv("ASCEND_TOOLKIT_HOME", str(tmp_path))
    assert cann_version() == "8.0.0"
    monkeypatch.setenv("ASCEND_TOOLKIT_HOME", str(tmp_path / "missing"))
    monkeypatch.delenv("ASCEND_HOME_PATH", raising=False)
    assert cann_version() is None


def test_device_error_is_user_facing():
    assert DeviceError.user_facing is True


def test_fallback_ops_read_both_torch_npu_messages():
    assert fallback_ops(GENERAL) == ["aten::_ctc_loss"]
    assert fallback_ops(SPECIFIC) == ["aten::logit", "aten::logit_", "aten::logit.out"]
    assert fallback_ops("aten::add is deprecated") == []


def test_capture_fallbacks_ties_ops_to_the_running_module():
    current = ["encoder.ctc"]
    with pytest.warns(UserWarning, match="unrelated"):
        with capture_fallbacks(lambda: current[0]) as log:
            warnings.warn(GENERAL)
            warnings.warn(GENERAL)
            current[0] = "head"
            warnings.warn(SPECIFIC)
            warnings.warn("unrelated")
    assert log.ops == {"aten::_ctc_loss": 2, "aten::logit": 1, "aten::logit_": 1, "aten::logit.out": 1}
    assert log.modules["aten::_ctc_loss"] == "encoder.ctc"
    assert log.modules["aten::logit"] == "head"
    assert log.messages == [GENERAL, SPECIFIC]


def test_cpu_helpers_are_no_ops():
    devices.prepare("cpu")
    devices.synchronize("cpu")
    devices.reset_peak_memory("cpu")
    assert devices.peak_memory_bytes("cpu") is None
