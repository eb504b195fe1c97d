"""GPU code as written, run where the tracer and execute mode run: "cuda" becomes the device in use.

Training code moves its model and inputs with `.cuda()`, `.to("cuda")` or `device="cuda"`, and turns on
mixed precision with `torch.autocast("cuda", dtype=torch.float16)` (or `torch.cuda.amp.autocast()`).
On a CPU-only build all of these fail or, for autocast, are silently disabled ("CUDA is not available"),
so an AMP model would be traced or executed in fp32. Both modes apply the same rewrite torch_npu's
`transfer_to_npu` applies at run time: every "cuda" device becomes the device in use (the CPU for the
fake-tensor trace and the CPU candidate, "npu" on an NPU), and an autocast asked for "cuda" runs on it
with the user's dtype. `autocast_override(enabled=False)` instead turns the user's autocast regions off,
which execute mode's full-precision golden run needs.
"""
from __future__ import annotations

from contextlib import contextmanager

import torch
from torch.amp.autocast_mode import autocast as _autocast
from torch.overrides import TorchFunctionMode


def is_cuda(value) -> bool:
    if isinstance(value, str):
        return value == "cuda" or value.startswith("cuda:")
    return isinstance(value, torch.device) and value.type == "cuda"


_ACTIVE: list = []   # the CudaRedirect modes entered, so run_on can point them elsewhere


class CudaRedirect(TorchFunctionMode):
    """`.cuda()` -> a copy on `device`; a "cuda" device argument -> `device`. Counts the rewrites."""

    def __init__(self, device: str = "cpu"):
        super().__init__()
        self.device = device
        self.redirected = 0

    def __enter__(self):
        _ACTIVE.append(self)
        return super().__enter__()

    def __exit__(self, *exc):
        if self in _ACTIVE:
            _ACTIVE.remove(self)
        return super().__exit__(*exc)

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if func is torch.Tensor.cuda:
            self.redirected += 1
            # a copy, as the host-to-device move is; nn.Module._apply swaps parameters and cannot
            # swap one with itself
            return args[0].to(self.device, copy=True)
        if any(is_cuda(a) for a in args) or any(is_cuda(v) for v in kwargs.values()):
            self.redirected += 1
            args = tuple(self.device if is_cuda(a) else a for a in args)
            kwargs = {k: (self.device if is_cuda(v) else v) for k, v in kwargs.items()}
            out = func(*args, **kwargs)
            return out.to(self.device, copy=True) if func is torch.Tensor.to and args and out is args[0] else out
        return func(*args, **kwargs)


_OVERRIDES: list[tuple] = []   # (device, enabled, seen) of the active overrides, innermost last
_ORIGINAL_INIT = _autocast.__init__


def _patched_init(self, device_type, dtype=None, enabled_arg=True, cache_enabled=None, **kwargs):
    on = kwargs.pop("enabled", enabled_arg)
    device, enabled, seen = _OVERRIDES[-1] if _OVERRIDES else ("cpu", None, None)
    asked = device_type
    if is_cuda(device_type):
        device_type = device
        if dtype is None:
            dtype = torch.float16  # torch's default for "cuda"; the CPU's default would be bf16
    if enabled is not None:
        on = on and enabled
    if seen is not None:
        seen.append((str(asked), str(dtype).replace("torch.", "") if dtype is not None else "", bool(on)))
    _ORIGINAL_INIT(self, device_type, dtype=dtype, enabled=on, cache_enabled=cache_enabled)


@contextmanager
def autocast_override(device: str = "cpu", enabled: bool | None = None, seen: list | None = None):
    """While active, `torch.autocast("cuda", ...)` (and torch.cuda.amp.autocast) runs on `device`;
    `enabled=False` turns every autocast region opened inside off. Each region opened is appended to
    `seen` as (device asked for, dtype, enabled) so the report can say what ran. Overrides nest: the
    innermost one decides (execute mode re-runs a candidate module, with autocast, inside its golden
    run, which has it off)."""
    _OVERRIDES.append((device, enabled, seen))
    _autocast.__init__ = _patched_init  # type: ignore[method-assign, assignment]  # undone in the finally below
    try:
        yield
    finally:
        _OVERRIDES.pop()
        if not _OVERRIDES:
            _autocast.__init__ = _ORIGINAL_INIT  # type: ignore[method-assign]


@contextmanager
def run_on(device: str, autocast_enabled: bool | None = None):
    """User code in this block sees "cuda" as `device`: the active redirects point there, and its
    autocast regions run there (or are off with autocast_enabled=False)."""
    saved = [(mode, mode.device) for mode in _ACTIVE]
    for mode, _ in saved:
        mode.device = device
    try:
        with autocast_override(device, autocast_enabled):
            yield
    finally:
        for mode, previous in saved:
            mode.device = previous
