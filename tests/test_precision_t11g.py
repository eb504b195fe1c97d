"""Precision fixes tuned on heldout6 (t11g; heldout6's trees and labels are TUNED ON from here).

The trees below are shaped like the false classes hl6a / hl6b found, written afresh (not copied):
- an inference engine's kernel package with one sub-package per backend (`kernels/cuda/` holding Triton kernels,
  `kernels/vendor/` wrapping a vendor library) and a dispatcher module beside them whose device table maps the Ascend
  device to the vendor package: `kernels/cuda/` is the CUDA member of a per-backend set, info; the same package
  without the device table (or with a table that maps no Ascend device) keeps its findings;
- an evaluation loop that turns its predictions into numpy arrays (`.detach().cpu().numpy()`, or `np.zeros_like`
  in the other branch of a conditional) and collects them with `.tolist()`: host values, no host-sync hint; the
  same `.tolist()` on the tensors themselves keeps it;
- "port them together" notes: a training framework's timeout module whose top-level `if` sets an NCCL variable and
  also defines a plain `timedelta` that a process-group module imports (no note on the timedelta; a name whose own
  binding is NCCL-specific still gets one), and a Triton kernel package of an Ascend project (`xllm_npu/ops/triton/`)
  whose kernels and helpers its NPU tests import (Triton-Ascend: no note; the same package in a plain project keeps
  it).
"""
from __future__ import annotations

import os

from pathlib import Path

import pytest

from auditor.rules import load_rules
from auditor.static.engine import StaticEngine
from tests.static_snippets import findings_by_line, findings_in_tree, write_tree

DISPATCH = """\
    import importlib

    from ..platform import current_device_type


    class OpDispatcher:
        def __init__(self, name):
            self.name = name
            self.table = {'cuda': 'cuda', 'ascend': 'vendor', 'npu': 'vendor', 'mlu': 'vendor'}

        def resolve(self):
            device = current_device_type()
            package = self.table.get(device, 'cuda')
            mod = importlib.import_module(f'engine.runtime.kernels.{package}')
            return getattr(mod, self.name)
    """

NO_ASCEND = DISPATCH.replace("'ascend': 'vendor', 'npu': 'vendor', ", "")

CUDA_KERNEL = """\
    import torch
    import triton
    import triton.language as tl


    @triton.jit
    def _scale_kernel(x_ptr, out_ptr, scale, n, BLOCK: tl.constexpr):
        pid = tl.program_id(0)
        offs = pid * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        x = tl.load(x_ptr + offs, mask=mask)
        tl.store(out_ptr + offs, x * scale, mask=mask)


    def scale(x: torch.Tensor, s: float) -> torch.Tensor:
        out = torch.empty_like(x)
        n = x.numel()
        _scale_kernel[(triton.cdiv(n, 1024),)](x, out, s, n, BLOCK=1024)
        torch.cuda.synchronize()
        return out
    """

VENDOR = """\
    import vendor_ops


    def scale(x, s):
        return vendor_ops.scale(x, s)
    """


def _tree(root: Path, dispatcher: str) -> dict:
    write_tree(root, {
        "engine/__init__.py": "",
        "engine/runtime/__init__.py": "",
        "engine/runtime/platform.py": "def current_device_type():\n    return 'cuda'\n",
        "engine/runtime/kernels/__init__.py": "",
        "engine/runtime/kernels/dispatcher.py": dispatcher,
        "engine/runtime/kernels/cuda/__init__.py": "from .scale import scale\n",
        "engine/runtime/kernels/cuda/scale.py": CUDA_KERNEL,
        "engine/runtime/kernels/vendor/__init__.py": VENDOR,
    })
    return findings_in_tree(root)


def _severities(found: dict) -> set[str]:
    return {s for (p, _n, _c), s in found.items() if p == "engine/runtime/kernels/cuda/scale.py"}


def test_a_cuda_kernel_package_whose_dispatcher_maps_ascend_to_a_sibling_is_info(tmp_path):
    found = _severities(_tree(tmp_path, DISPATCH))
    assert found == {"info"}


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")
def test_a_fifo_named_like_a_module_beside_the_dispatcher_is_not_opened(tmp_path):
    # read with the discovery's reader: opening a FIFO blocks until a writer comes, which never does
    os.makedirs(tmp_path / "engine/runtime/kernels")
    os.mkfifo(tmp_path / "engine/runtime/kernels/aaa_pipe.py")
    found = _severities(_tree(tmp_path, DISPATCH))
    assert found == {"info"}


def test_without_an_ascend_entry_in_the_device_table_the_kernels_keep_their_findings(tmp_path):
    found = _severities(_tree(tmp_path, NO_ASCEND))
    assert found - {"info"}


@pytest.fixture(scope="module")
def engine():
    return StaticEngine(load_rules())


EVAL_LOOP = """\
    import numpy as np
    import torch


    def evaluate(model, loader, device):
        model.eval()
        all_pred, all_gt, all_score = [], [], []
        with torch.no_grad():
            for feats, labels in loader:
                feats = feats.to(device)
                logits = model(feats)
                pred = torch.argmax(logits, dim=1).detach().cpu().numpy()
                gt = labels.argmax(dim=1).cpu().numpy() if labels.dim() > 1 else np.zeros_like(pred)
                all_pred.extend(pred.tolist())
                all_gt.extend(gt.tolist())
                all_score.extend(torch.softmax(logits, dim=1).max(dim=1).values.tolist())
        return all_pred, all_gt, all_score
    """


def _host_sync_lines(engine, src: str) -> set[int]:
    return {n for n, fs in findings_by_line(engine, src, "examples/traj/evaluate.py").items()
            for f in fs if f.code == "NPU703"}


def test_tolist_on_numpy_arrays_made_from_tensors_is_not_a_host_sync(engine):
    lines = _host_sync_lines(engine, EVAL_LOOP)
    assert 14 not in lines and 15 not in lines     # pred / gt are numpy arrays
    assert 16 in lines                              # the softmax scores are still a device tensor


def test_a_conditional_with_a_tensor_branch_keeps_the_hint(engine):
    src = EVAL_LOOP.replace("else np.zeros_like(pred)", "else labels.to(device)")
    assert 15 in _host_sync_lines(engine, src)


TIMEOUTS = """\
    import datetime
    import os

    ENABLE_TIMEOUT = os.getenv("TRAINER_ENABLE_TIMEOUT", None)

    if ENABLE_TIMEOUT is not None:
        os.environ["NCCL_ASYNC_ERROR_HANDLING"] = "1"
        PG_TIMEOUT = datetime.timedelta(seconds=int(os.getenv("TRAINER_PG_TIMEOUT", "60")))
        BARRIER_BACKEND = "nccl"
    else:
        PG_TIMEOUT = datetime.timedelta(seconds=1800)
        BARRIER_BACKEND = "nccl"
    """

GROUPS = """\
    import torch.distributed as dist

    from trainer.utils.timeouts import BARRIER_BACKEND, PG_TIMEOUT


    def new_cpu_group(ranks):
        return dist.new_group(ranks, backend="gloo", timeout=PG_TIMEOUT)


    def new_barrier_group(ranks):
        return dist.new_group(ranks, backend=BARRIER_BACKEND)
    """


def test_a_timeout_beside_an_nccl_variable_is_not_nccl_code_but_an_nccl_backend_name_is(tmp_path):
    found = findings_in_tree(write_tree(tmp_path, {
        "trainer/__init__.py": "", "trainer/utils/__init__.py": "",
        "trainer/utils/timeouts.py": TIMEOUTS, "trainer/core/__init__.py": "",
        "trainer/core/groups.py": GROUPS}))
    notes = {n for (p, n, c), _s in found.items() if p == "trainer/core/groups.py" and c == "NPU135"}
    assert 7 not in notes           # timeout=PG_TIMEOUT: a timedelta
    assert 11 in notes              # backend=BARRIER_BACKEND: "nccl" in every branch


TRITON_KERNEL = """\
    import torch
    from vllm.triton_utils import tl, triton


    @triton.jit
    def _row_mean_kernel(x_ptr, out_ptr, n_cols, BLOCK: tl.constexpr):
        row = tl.program_id(0)
        offs = tl.arange(0, BLOCK)
        x = tl.load(x_ptr + row * n_cols + offs, mask=offs < n_cols, other=0.0)
        tl.store(out_ptr + row, tl.sum(x, axis=0) / n_cols)


    def row_mean(x: torch.Tensor, dtype: torch.dtype = torch.float16) -> torch.Tensor:
        out = torch.empty(x.shape[0], device=x.device, dtype=dtype)
        _row_mean_kernel[(x.shape[0],)](x, out, x.shape[1], BLOCK=triton.next_power_of_2(x.shape[1]))
        return out
    """

KERNEL_TEST = """\
    import torch

    from {pkg}.ops.triton.row_mean import row_mean


    def test_row_mean():
        x = torch.randn(8, 64, device="npu")
        torch.testing.assert_close(row_mean(x), x.mean(dim=1))
    """


def _kernel_notes(root: Path, pkg: str) -> set[int]:
    found = findings_in_tree(write_tree(root, {
        f"{pkg}/__init__.py": "", f"{pkg}/ops/__init__.py": "", f"{pkg}/ops/triton/__init__.py": "",
        f"{pkg}/ops/triton/row_mean.py": TRITON_KERNEL,
        "tests/ops/test_row_mean.py": KERNEL_TEST.format(pkg=pkg)}))
    return {n for (p, n, c), _s in found.items() if p == "tests/ops/test_row_mean.py" and c == "NPU320"}


def test_triton_kernels_of_an_ascend_package_are_not_cuda_code_to_port_with_their_callers(tmp_path):
    assert not _kernel_notes(tmp_path, "xllm_npu")


def test_triton_kernels_of_a_plain_package_keep_the_note(tmp_path):
    assert _kernel_notes(tmp_path, "xllm")
