"""s15b (issue 11, session 15; TUNED on heldout18 after its blind run): fp16 round trips, saved cuDNN / TF32
switches, reads of a flag that holds a device-string test, and CUDA builds of torch's own cpp_extension under an
opt-in switch (auditor/static/value_reads.py, flags.py, backends.py). The code below is written afresh in the shapes
met there (a sparsifier's threshold rounded through fp16, a test fixture that restores determinism, an RWKV-style
`RWKV_CUDA_ON` kernel build with a fallback build, a strategy-string check); each fix has a control that keeps the
finding."""
from __future__ import annotations

from tests.test_rules_apex import audit


def _sev(by_line: dict, line: int, code: str) -> list[str]:
    return [f.severity for f in by_line.get(line, []) if f.code == code]


ROUND_TRIP = """\
import torch


def compress(sparsifiers, x, device):
    for sparsifier in sparsifiers:
        original_dtype = sparsifier.running_threshold.dtype
        sparsifier.running_threshold = sparsifier.running_threshold.half().to(original_dtype)
    simulated = x.half().float()
    rounded = x.to(torch.float16).to(dtype=x.dtype)
    moved = x.half().to(device)
    kept = x.half()
    return simulated, rounded, moved, kept
"""


def test_fp16_round_trips_are_not_fp16_compute_but_fp16_tensors_are():
    found = audit(ROUND_TRIP)
    for line in (7, 8, 9):
        assert not _sev(found, line, "NPU202"), line
    assert _sev(found, 10, "NPU202") == ["info"]       # an fp16 tensor moved to the device
    assert _sev(found, 11, "NPU202") == ["info"]


SAVED_SWITCH = """\
import pytest
import torch


@pytest.fixture
def _safe_deterministic_state():
    cudnn_deterministic = torch.backends.cudnn.deterministic
    old_tf32 = torch.backends.cuda.matmul.allow_tf32
    yield
    torch.backends.cudnn.deterministic = cudnn_deterministic
    torch.backends.cuda.matmul.allow_tf32 = old_tf32
"""


def test_a_saved_switch_is_not_configured_where_it_is_read_but_where_it_is_restored():
    found = audit(SAVED_SWITCH)
    assert not _sev(found, 7, "NPU006")
    assert not [f for f in found.get(8, []) if f.category == "precision"]
    assert _sev(found, 10, "NPU006") == ["warning"]
    assert [f for f in found.get(11, []) if f.category == "precision"]


CUDA_BUILD = """\
import os

current_path = os.path.dirname(os.path.abspath(__file__))

if os.environ.get("RWKV_CUDA_ON") == "1":
    from torch.utils.cpp_extension import load
    try:
        load(name="wkv_cuda", sources=[f"{current_path}/cuda/wrapper.cpp", f"{current_path}/cuda/operators.cu"],
             extra_cuda_cflags=["--use_fast_math", "-O3"], is_python_module=False)
    except Exception:
        load(name="wkv_cuda", sources=[f"{current_path}/cuda/operators.cu"],
             extra_cuda_cflags=["--use_fast_math"], is_python_module=False)

if os.environ.get("USE_FLASH") == "1":
    from flash_attn import flash_attn_func
    attention = flash_attn_func
"""


def test_a_cuda_build_under_an_opt_in_switch_fails_there_but_an_optional_package_stays_a_warning():
    found = audit(CUDA_BUILD)
    assert _sev(found, 8, "NPU370") == ["error"]
    assert _sev(found, 11, "NPU370") == ["error"]
    assert {f.severity for f in found.get(15, []) + found.get(16, []) if f.category == "attention"} == {"warning"}


STRATEGY = """\
import os


def forward(dev, x, kernel, fallback):
    cuda_applicable = os.environ["RWKV_CUDA_ON"] == "1" and "cuda" in str(dev)
    if cuda_applicable:
        return kernel(x)
    return fallback(x)


def run(backend):
    is_nccl = backend == "nccl"
    if is_nccl:
        return 1
    return 0
"""


def test_reads_of_a_device_string_flag_add_nothing_but_other_flags_are_copied():
    found = audit(STRATEGY)
    assert _sev(found, 5, "NPU003")
    assert not _sev(found, 6, "NPU003")
    line_12 = [f.code for f in found.get(12, [])]
    assert [f.code for f in found.get(13, [])] == line_12


PLATFORM_TAG = """\
def get_platform_name(torch_platform):
    if torch_platform == "cpu":
        return "cpu"
    if torch_platform.startswith("cu"):
        return "cuda"
    return "vulkan"


def pick(torch_platform):
    if torch_platform.startswith("fast"):
        return "cuda"
    return "cpu"
"""


def test_a_cuda_wheel_tag_test_gates_its_branch():
    found = audit(PLATFORM_TAG)
    assert _sev(found, 5, "NPU003") == ["warning"]
    assert _sev(found, 11, "NPU003") == ["error"]       # control: another prefix is no CUDA gate
