"""Families the test4 split missed (tuned on test4; see /work/notes/k14z.md): each with real spellings that
must be flagged and near misses that must not."""
from __future__ import annotations

import textwrap

from auditor.rules import load_rules
from auditor.static import StaticEngine

ENGINE = StaticEngine(load_rules())


def _found(src: str, name: str = "example.py") -> list[tuple[int, str]]:
    result = ENGINE.analyze_bytes(textwrap.dedent(src).encode(), name)
    assert result.error is None
    return [(f.line, f.code) for f in result.findings]


# --- a conventional module alias that only a star import can have bound ---------------------------------

def test_torch_from_a_star_import_is_torch():
    found = _found("""\
        from fastai.basics import *
        def setup(gpu):
            torch.cuda.set_device(int(gpu))
            if torch.cuda.is_available() and not torch.cuda.is_bf16_supported():
                pass
    """)
    lines = {line for line, _ in found}
    assert {3, 4} <= lines
    assert (4, "NPU209") in found          # precision as well as device


def test_relative_star_import_binds_nn_and_F():
    found = _found("""\
        from .basics import *
        x = F.scaled_dot_product_attention(q, k, v)
        y = torch.cuda.current_device()
    """)
    assert any(line == 3 for line, _ in found)


def test_no_star_import_leaves_unbound_torch_alone():
    assert _found("""\
        def f():
            torch.cuda.set_device(0)
    """) == []


def test_a_name_the_file_binds_itself_is_not_taken_from_the_star_import():
    assert _found("""\
        from .basics import *
        def f(torch):
            torch.cuda.set_device(0)
    """) == []


# --- Triton kernels launched `k[grid](...)` when decorated by assignment or imported ----------------------

def test_kernel_jitted_by_assignment_is_launched():
    found = _found("""\
        import triton

        def _fwd_kernel(x_ptr, N):
            pass

        _fwd_kernel = triton.jit(_fwd_kernel)
        _fwd_kernel = triton.heuristics({"EVEN": lambda args: args["N"] % 2 == 0})(_fwd_kernel)

        def forward(x, grid):
            _fwd_kernel[grid](x, x.numel())
    """)
    assert (10, "NPU373") in found


def test_kernel_imported_from_a_kernel_module_is_launched():
    found = _found("""\
        def rope(x, grid):
            import triton
            from ._triton.rope_padded_kernels import _rope_padded_kernel
            _rope_padded_kernel[grid](x, BLOCK=triton.next_power_of_2(64))
    """)
    assert (4, "NPU373") in found


def test_imported_table_subscript_call_is_no_launch():
    found = _found("""\
        import triton
        from .ops import handlers, _fwd_kernel
        out = handlers["a"](x)
    """)
    assert (3, "NPU373") not in found


def test_imported_kernel_without_triton_is_no_triton_launch():
    found = _found("""\
        from .cuda_ops import _fwd_kernel
        _fwd_kernel[grid](x)
    """)
    # no Triton launch (nothing imports triton); value flow (t14j) notes the import from a module named for CUDA
    # ops and its use, as info (NPU320)
    assert found == [(1, "NPU320"), (2, "NPU320")]
