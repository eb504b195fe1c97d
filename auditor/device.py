"""The one place that knows about NPUs (and CUDA): where execute mode runs, and the device-only calls it needs.

Every other module is device-agnostic: it asks this one for an autocast context, a synchronize, the peak
memory, or the CPU-fallback operators that torch_npu reported. On a machine without torch_npu all of it
degrades to the CPU equivalents; the NPU branches have not been run on Ascend hardware by our tests (they
are exercised on the CPU by monkeypatching the probe). The CUDA branches serve `--execute --dump` on the GPU
box a port starts from; no GPU exists where this project is tested, so they have not been run either.
"""
from __future__ import annotations

import importlib
import importlib.util
import re
import warnings
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator

DEVICE_CHOICES = ("auto", "cpu", "npu", "cuda")


class DeviceError(Exception):
    """--device asks for something this machine lacks; the CLI prints the message and exits 2."""

    user_facing = True  # auditor.sandbox keeps the message, without a traceback, if raised in the child


DeviceUnavailable = DeviceError  # the name auditor/cli.py imports


@dataclass(frozen=True)
class NpuProbe:
    importable: bool   # `import torch_npu` works
    available: bool    # torch.npu.is_available()
    detail: str        # why not, in words, when either is False


def probe_npu() -> NpuProbe:
    """Whether torch_npu imports and sees an NPU. Importing torch_npu is only tried when it is installed."""
    if importlib.util.find_spec("torch_npu") is None:
        return NpuProbe(False, False, "torch_npu is not installed (pip install torch-npu, which needs the CANN toolkit)")
    try:
        importlib.import_module("torch_npu")
    except Exception as exc:  # noqa: BLE001 - a broken CANN install raises anything; report it as is
        return NpuProbe(False, False, f"torch_npu is installed but `import torch_npu` failed: "
                                      f"{type(exc).__name__}: {exc} (is the CANN environment set up? "
                                      "source .../ascend-toolkit/set_env.sh)")
    import torch

    npu = getattr(torch, "npu", None)
    try:
        available = bool(npu is not None and npu.is_available())
    except Exception as exc:  # noqa: BLE001
        return NpuProbe(True, False, f"torch_npu imports but torch.npu.is_available() failed: {exc}")
    if not available:
        return NpuProbe(True, False, "torch_npu imports but no NPU is visible (torch.npu.is_available() is "
                                     "False; check the driver, npu-smi info, ASCEND_RT_VISIBLE_DEVICES)")
    return NpuProbe(True, True, "")


def select_device(requested: str | None) -> str:
    """'npu', 'cuda' or 'cpu'. None/'auto' picks the NPU when there is one (never CUDA: auto is for the
    port's target); 'npu' or 'cuda' without one raises DeviceError."""
    choice = (requested or "auto").strip().lower()
    if choice not in DEVICE_CHOICES:
        raise DeviceError(f"--device {requested!r}: choose one of {', '.join(DEVICE_CHOICES)}")
    if choice == "cpu":
        return "cpu"
    if choice == "cuda":
        import torch

        if not torch.cuda.is_available():
            raise DeviceError("--device cuda: torch.cuda.is_available() is False (no CUDA build of torch, or no "
                              "visible GPU). Run with --device cpu to check numerics on the CPU instead.")
        return "cuda"
    probe = probe_npu()
    if probe.available:
        return "npu"
    if choice == "npu":
        raise DeviceError(f"--device npu: {probe.detail}. Run without --device (or --device cpu) to check "
                          "bf16/fp16 numerics on the CPU instead.")
    return "cpu"


def autocast(device: str, dtype: Any):
    """Autocast on the device the candidate runs on (torch.autocast('npu') needs torch_npu imported)."""
    import torch

    return torch.autocast(device_type=device, dtype=dtype)


def prepare(device: str) -> None:
    """Import torch_npu in this process before tensors are moved to 'npu' (the child process needs it)."""
    if device == "npu":
        importlib.import_module("torch_npu")


def _accelerator(device: str):
    """torch.npu or torch.cuda (same API for the calls below); None on the CPU."""
    if device not in ("npu", "cuda"):
        return None
    import torch

    return getattr(torch, device)


def synchronize(device: str) -> None:
    if (acc := _accelerator(device)) is not None:
        acc.synchronize()


def reset_peak_memory(device: str) -> None:
    if (acc := _accelerator(device)) is not None:
        acc.reset_peak_memory_stats()


def peak_memory_bytes(device: str) -> int | None:
    """Peak device memory since reset_peak_memory; None on the CPU, where there is no device counter."""
    if (acc := _accelerator(device)) is not None:
        return int(acc.max_memory_allocated())
    return None


def device_name(device: str) -> str:
    """What the step ran on, in the vendor's words (torch.npu/cuda.get_device_name); the CPU's model otherwise."""
    if (acc := _accelerator(device)) is not None:
        return str(acc.get_device_name())
    import platform

    return platform.processor() or platform.machine()


def cann_version() -> str | None:
    """The CANN toolkit version from ascend_toolkit_install.info under $ASCEND_TOOLKIT_HOME or
    $ASCEND_HOME_PATH (set by CANN's set_env.sh); None when neither points at a toolkit."""
    import os
    from pathlib import Path

    for var in ("ASCEND_TOOLKIT_HOME", "ASCEND_HOME_PATH"):
        home = os.environ.get(var)
        if not home or not Path(home).is_dir():
            continue
        for info in sorted(Path(home).glob("*/ascend_toolkit_install.info")) + [Path(home) / "ascend_toolkit_install.info"]:
            try:
                for line in info.read_text(encoding="utf-8", errors="replace").splitlines():
                    if line.strip().startswith("version="):
                        return line.split("=", 1)[1].strip()
            except OSError:
                continue
    return None


# torch_npu's fallback warnings, as the strings in libtorch_npu.so (torch_npu 2.6.0.post5) spell them:
#   "The operator '<op>' is not currently supported on the NPU backend and will fall back to run on the CPU.
#    This may have performance implications."
#   "CAUTION: The operator aten::logit, aten::logit_ and aten::logit.out is currently not supported on the NPU
#    backend. Now this operator will fallback to run on the CPU and may have performance implications."
_FALLBACK_TEXT = re.compile(r"fall ?back to run on the CPU|not (?:currently )?supported on the NPU backend", re.I)
_ATEN_OP = re.compile(r"aten::[A-Za-z0-9_]+(?:\.[A-Za-z0-9_]+)?")


def fallback_ops(message: str) -> list[str]:
    """The aten operators a torch_npu CPU-fallback warning names (empty for any other message)."""
    if not _FALLBACK_TEXT.search(message):
        return []
    ops = _ATEN_OP.findall(message)
    return list(dict.fromkeys(ops))


@dataclass
class FallbackLog:
    ops: dict[str, int] = field(default_factory=dict)   # aten op -> times reported
    messages: list[str] = field(default_factory=list)   # the distinct warning texts
    modules: dict[str, str | None] = field(default_factory=dict)  # aten op -> first module that hit it


@contextmanager
def capture_fallbacks(current_module: Callable[[], str | None] | None = None) -> Iterator[FallbackLog]:
    """Record the operators torch_npu reports as falling back to the CPU while the block runs.

    torch_npu raises these through TORCH_WARN, which reaches Python's warnings module; other warnings are
    shown as usual. `current_module()` names the module running when a warning fires (the execute recorder
    keeps a stack), so each operator is tied to the first module that hit it. On the CPU the log stays empty.
    """
    log = FallbackLog()
    with warnings.catch_warnings():
        warnings.simplefilter("always")
        passthrough = warnings.showwarning

        def record(message, category, filename, lineno, file=None, line=None):
            text = str(message)
            ops = fallback_ops(text)
            if not ops:
                passthrough(message, category, filename, lineno, file, line)
                return
            if text not in log.messages:
                log.messages.append(text)
            where = current_module() if current_module else None
            for op in ops:
                log.ops[op] = log.ops.get(op, 0) + 1
                log.modules.setdefault(op, where)

        warnings.showwarning = record
        yield log
