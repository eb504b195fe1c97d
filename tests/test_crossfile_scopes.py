"""Cross-file uses respect Python's scopes (t11o, issue 11; tuned on heldout10): a `from .triton_kernels import *`
brings the kernels module's top-level names only, and a name that a function, class or comprehension binds (a
parameter `k`, a local `y = ...`, a loop target) is that scope's own, not a use of the kernels module."""
from __future__ import annotations

import ast
from pathlib import Path

from auditor.runner import run_static
from auditor.static.crossfile import OWN_CODES, _bound_names, _shadowed_loads

# an inference engine's Triton kernels, star-imported by its ops module; the kernels' bodies bind `x`, `y`, `s`
KERNELS = '''\
__all__ = ["rotary_kernel", "act_quant_kernel"]

import triton
import triton.language as tl


@triton.jit
def rotary_kernel(q_ptr, k_ptr, cos_ptr, sin_ptr, stride_q, stride_k, HEAD_DIM: tl.constexpr):
    pid = tl.program_id(0)
    offs = tl.arange(0, HEAD_DIM)
    q = tl.load(q_ptr + pid * stride_q + offs)
    k = tl.load(k_ptr + pid * stride_k + offs)
    cos = tl.load(cos_ptr + offs)
    sin = tl.load(sin_ptr + offs)
    tl.store(q_ptr + pid * stride_q + offs, q * cos + q * sin)
    tl.store(k_ptr + pid * stride_k + offs, k * cos + k * sin)


@triton.jit
def act_quant_kernel(x_ptr, y_ptr, s_ptr, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    offs = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    x = tl.load(x_ptr + offs).to(tl.float32)
    s = tl.max(tl.abs(x)) / 448.0
    y = x / s
    y = y.to(y_ptr.dtype.element_ty)
    tl.store(y_ptr + offs, y)
    tl.store(s_ptr + pid, s)
'''

OPS = '''\
import torch
import triton

from .triton_kernels import *


def rotate_pairwise(x):
    y = x.reshape(x.shape[:-1] + (x.shape[-1] // 2, 2))
    y = torch.cat((-y[..., 1:], y[..., :1]), dim=-1)
    return y.reshape(x.shape)


def apply_rotary_pos_emb_triton(q, k, cos, sin):
    grid = (q.shape[0],)
    rotary_kernel[grid](q, k, cos, sin, q.stride(0), k.stride(0), HEAD_DIM=q.shape[-1])
    return q, k


def act_quant(x, block_size=128):
    y = torch.empty_like(x, dtype=torch.float8_e4m3fn)
    s = x.new_empty(*x.size()[:-1], x.size(-1) // block_size, dtype=torch.float32)
    grid = lambda meta: (triton.cdiv(x.numel(), meta["BLOCK_SIZE"]),)
    act_quant_kernel[grid](x, y, s, BLOCK_SIZE=block_size)
    return y, s


def scales(xs):
    return [s.amax() for s in xs]
'''


def _write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def test_star_import_of_kernels_reports_kernel_uses_not_locals(tmp_path):
    root = tmp_path / "engine"
    _write(root, {"engine/__init__.py": "", "engine/triton_kernels.py": KERNELS, "engine/ops.py": OPS})
    run = run_static([root], jobs=1)
    ops = next(r for r in run.results if r.path == "engine/ops.py")
    own = {(f.line, f.symbol) for f in ops.findings if f.code in OWN_CODES}
    lines = OPS.splitlines()
    kernel_lines = {i + 1 for i, text in enumerate(lines) if "_kernel[grid]" in text}
    # the kernel launches are uses of the kernels module, named by the kernel
    assert {line for line, sym in own if sym in ("rotary_kernel", "act_quant_kernel")} >= kernel_lines
    # no parameter or local (`y`, `k`, `s`, `x`, `cos`) is taken for a name of the kernels module
    assert not {sym for _, sym in own} & {"x", "y", "k", "q", "s", "cos", "sin", "offs", "pid"}


def test_bound_names_stop_at_a_def_body():
    tree = ast.parse(KERNELS)
    names = [n for stmt in tree.body for n in _bound_names(stmt)]
    assert "rotary_kernel" in names and "act_quant_kernel" in names and "__all__" in names
    assert not {"x", "y", "s", "q", "k", "pid", "offs"} & set(names)


def test_shadowing_follows_python_scopes():
    source = '''\
from .kernels import *

k = 4


def f(q, k=k):
    return q * k


def g(x):
    return [k for k in range(x)] + [k]


class Block:
    k = k + 1

    def forward(self, x):
        return x * k


h = lambda k: k + 1
'''
    tree = ast.parse(source)
    shadowed = _shadowed_loads(tree, {"k"})
    local_lines = sorted({n.lineno for n in ast.walk(tree) if isinstance(n, ast.Name) and id(n) in shadowed})
    module_lines = sorted({n.lineno for n in ast.walk(tree) if isinstance(n, ast.Name) and n.id == "k"
                           and isinstance(n.ctx, ast.Load) and id(n) not in shadowed})
    # f's body reads its parameter; the comprehension reads its target; the lambda its parameter
    assert local_lines == [7, 11, 21]
    # the default `k=k`, the `[k]` after the comprehension, the class body's right-hand side and the method's
    # `k` (a class body's names are not seen by its methods) read the module's name
    assert module_lines == [6, 11, 15, 18]


# a sequence-parallel attention package: a ring implementation on flash_attn beside the project's NPU one, both
# named for flash-attn; the package re-exports both and a table keyed by attention type picks one
RING_FLASH = '''\
import torch
from flash_attn.flash_attn_interface import _flash_attn_forward


def ring_flash_attn_func(q, k, v, causal=False):
    out, lse = _flash_attn_forward(q, k, v, 0.0, q.shape[-1] ** -0.5, causal)[:2]
    return out
'''

ATTENTION_KERNELS = '''\
import torch

try:
    from flash_attn.flash_attn_interface import _flash_attn_forward
    HAS_FLASH_ATTN = True
except ImportError:
    HAS_FLASH_ATTN = False

try:
    import torch_npu
    HAS_NPU = True
except ImportError:
    HAS_NPU = False


def fa_forward(q, k, v, causal=False):
    assert HAS_FLASH_ATTN, "flash_attn is not available"
    return _flash_attn_forward(q, k, v, 0.0, q.shape[-1] ** -0.5, causal)[0]


def npu_fused_attn_forward(q, k, v, head_num, input_layout="BSND"):
    assert HAS_NPU, "torch_npu is not available"
    return torch_npu.npu_fusion_attention(q, k, v, head_num, input_layout)[0]
'''

RING_NPU = '''\
import torch
import torch.distributed as dist
from ..kernels.attention import npu_fused_attn_forward


def ring_npu_flash_attn_func(process_group, q, k, v, head_num=None, input_layout="BSND"):
    if dist.get_world_size(process_group) == 1:
        return npu_fused_attn_forward(q, k, v, head_num, input_layout)
    raise NotImplementedError("ring steps")
'''

RING_INIT = '''\
from .ring_flash_attn import (
    ring_flash_attn_func,
)
from .ring_npu_flash_attn import (
    ring_npu_flash_attn_func,
)
'''


def test_the_projects_npu_module_named_for_flash_attn_is_not_cuda_code(tmp_path):
    root = tmp_path / "seqpar"
    _write(root, {"seqpar/__init__.py": "", "seqpar/kernels/__init__.py": "",
                  "seqpar/kernels/attention.py": ATTENTION_KERNELS, "seqpar/ring/__init__.py": RING_INIT,
                  "seqpar/ring/ring_flash_attn.py": RING_FLASH, "seqpar/ring/ring_npu_flash_attn.py": RING_NPU})
    run = run_static([root], jobs=1)
    init = next(r for r in run.results if r.path == "seqpar/ring/__init__.py")
    by_line = {(f.line, f.code) for f in init.findings}
    assert any(line == 1 for line, _ in by_line)           # the flash_attn ring module: ported with its users
    assert not any(line in (4, 5) for line, _ in by_line)  # the NPU ring module: nothing to port


def test_an_import_inside_a_function_is_the_import_followed_not_a_local():
    source = '''\
def print_diagnostics():
    from .triton_kernels import rotary_kernel
    import engine.triton_kernels as tk
    return rotary_kernel, tk.act_quant_kernel
'''
    tree = ast.parse(source)
    assert _shadowed_loads(tree, {"rotary_kernel", "tk"}) == set()
