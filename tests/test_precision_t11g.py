"""Precision fixes tuned on heldout6 (t11g; heldout6's trees and labels are TUNED ON from here).

The trees below are shaped like the false classes hl6a / hl6b found, written afresh (not copied):
- an inference engine's kernel package with one sub-package per backend (`kernels/cuda/` holding Triton kernels,
  `kernels/vendor/` wrapping a vendor library) and a dispatcher module beside them whose device table maps the Ascend
  device to the vendor package: `kernels/cuda/` is the CUDA member of a per-backend set, info; the same package
  without the device table (or with a table that maps no Ascend device) keeps its findings.
"""
from __future__ import annotations

from pathlib import Path

from tests.static_snippets import findings_in_tree, write_tree

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


def test_without_an_ascend_entry_in_the_device_table_the_kernels_keep_their_findings(tmp_path):
    found = _severities(_tree(tmp_path, NO_ASCEND))
    assert found - {"info"}
