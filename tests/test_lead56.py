"""Session 56's review mends (lead56): one reader per fact, each tested on code shaped like real trees'."""
from __future__ import annotations

import ast
import textwrap

from auditor.static import cpu_bindings


def _tree(src: str) -> ast.Module:
    return ast.parse(textwrap.dedent(src))


def test_cpu_fallback_builds_reads_factories_named_after_the_builders():
    # tensorlayerx-style factories bound in a CUDA / CPU choice are one builder, as torch's own names are
    tree = _tree("""
        from tlx_build import PyCUDAExtension, PyCppExtension
        if WITH_CUDA:
            build_extension = PyCUDAExtension
        else:
            build_extension = PyCppExtension
        ext = build_extension(name="tlx_ops._C", sources=["ops.cpp"])
    """)
    assert cpu_bindings.cpu_fallback_builds(tree) == {"tlx_ops._C": 7}


def test_cpu_fallback_builds_needs_both_arms():
    tree = _tree("""
        from torch.utils.cpp_extension import CUDAExtension
        build_extension = CUDAExtension
        ext = build_extension(name="warpctc_pytorch._warp_ctc", sources=["binding.cpp"])
    """)
    assert cpu_bindings.cpu_fallback_builds(tree) == {}


def test_cuda_arm_spans_read_the_same_builder_names():
    tree = _tree("""
        import os
        WITH_CUDA = os.system("nvcc --version") == 0
        cuda_macro = ("COMPILE_WITH_CUDA", True)
        if not WITH_CUDA:
            ext = PyCppExtension("ggl.ops", ["ops.cpp"])
        else:
            ext = PyCUDAExtension("ggl.ops", ["ops.cu"], define_macros=[cuda_macro])
    """)
    assert cpu_bindings.cuda_arm_spans(tree) == [[8, 8], [4, 4]]
