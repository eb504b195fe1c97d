"""tk37 (session 37; TUNED on test76, test77, test79): a code base's own compiled extension imported by a bare name
and called like one (PointGroup's `PG_OP` inside its autograd ops, SeerAttention's CUTLASS binding), read from the
file alone (NPU837, a warning: the build is not in view) and dropped in a tree audit where the tree holds a Python
module of that name. Each family with its nearest negatives: a PyPI package called in an autograd op (einops), a
bare Python helper module called outside one, a comment naming CUTLASS."""
from __future__ import annotations

import textwrap
from pathlib import Path

from auditor.rules import load_rules
from auditor.runner import run_static
from auditor.static import StaticEngine
from static_snippets import write_tree

ENGINE = StaticEngine(load_rules())

# PointGroup lib/pointgroup_ops/functions/pointgroup_ops.py (trimmed): PG_OP is built by lib/pointgroup_ops/setup.py
POINTGROUP_OPS = '''
import torch
from torch.autograd import Function

import PG_OP

class Voxelization(Function):
    @staticmethod
    def forward(ctx, feats, map_rule, mode=4):
        """
        :param feats: cuda float N * C
        :return: output_feats: cuda float M * C
        """
        assert map_rule.is_contiguous()
        N, C = feats.size()
        M = map_rule.size(0)
        maxActive = map_rule.size(1) - 1
        output_feats = torch.cuda.FloatTensor(M, C).zero_()
        ctx.for_backwards = (map_rule, mode, maxActive, N)
        PG_OP.voxelize_fp(feats, output_feats, map_rule, mode, M, maxActive, C)
        return output_feats

    @staticmethod
    def backward(ctx, d_output_feats):
        map_rule, mode, maxActive, N = ctx.for_backwards
        M, C = d_output_feats.size()
        d_feats = torch.cuda.FloatTensor(N, C).zero_()
        PG_OP.voxelize_bp(d_output_feats.contiguous(), d_feats, map_rule, mode, M, maxActive, C)
        return d_feats, None, None

voxelization = Voxelization.apply
'''

# SeerAttention block_sparse_interface.py (trimmed): the CUDAExtension `block_sparse_seer_attn_cutclass` of build.py
SEER_INTERFACE = '''
import torch
from block_sparse_seer_attn_cutclass import flash_attention_v2_cutlass, varlen_flash_attention_v2_cutlass

def my_flash_attn(q, k, v, causal=True, softmax_scale=1.0):
    return flash_attention_v2_cutlass(q, k, v, causal, softmax_scale)

def my_varlen_flash_attn(q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k, causal=True, scale=1.0):
    return varlen_flash_attention_v2_cutlass(q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k,
                                             causal, scale)
'''


def _codes(source: str, name: str = "ops.py") -> list[tuple[int, str, str]]:
    result = ENGINE.analyze_bytes(textwrap.dedent(source).encode(), name)
    return [(f.line, f.code, f.severity) for f in result.findings]


def _line(text: str, needle: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), 1) if needle in line)


def _at(codes, line: int, code: str) -> bool:
    return any(c[0] == line and c[1] == code for c in codes)


def test_a_bare_module_called_in_an_autograd_op_is_a_compiled_extension_check():
    codes = _codes(POINTGROUP_OPS)
    for needle in ("import PG_OP", "PG_OP.voxelize_fp(", "PG_OP.voxelize_bp("):
        assert _at(codes, _line(POINTGROUP_OPS, needle), "NPU837"), needle
    assert {sev for _, code, sev in codes if code == "NPU837"} == {"warning"}
    # the docstring naming cuda tensors stays quiet
    assert not any(line == _line(POINTGROUP_OPS, ":param feats: cuda") for line, _, _ in codes)


def test_a_cutlass_binding_imported_by_a_bare_name_is_a_compiled_extension_check():
    codes = _codes(SEER_INTERFACE)
    for needle in ("from block_sparse_seer_attn_cutclass import", "return flash_attention_v2_cutlass(",
                   "return varlen_flash_attention_v2_cutlass("):
        assert _at(codes, _line(SEER_INTERFACE, needle), "NPU837"), needle


def test_a_pypi_package_in_an_autograd_op_is_not_an_extension():
    source = '''
    import torch
    import einops
    from torch.autograd import Function

    class Rearrange(Function):
        @staticmethod
        def forward(ctx, x):
            return einops.rearrange(x, "b c h w -> b (h w) c").cuda()
    '''
    assert not any(code == "NPU837" for _, code, _ in _codes(source))


def test_a_bare_helper_module_called_outside_an_autograd_op_is_quiet():
    source = '''
    import torch
    import misc_utils

    def forward(x):
        return misc_utils.scale(x.cuda())

    class Net(torch.nn.Module):
        def forward(self, x):
            return misc_utils.scale(x)
    '''
    assert not any(code == "NPU837" for _, code, _ in _codes(source))


def test_a_function_subclass_that_is_not_autograds_is_quiet():
    source = '''
    import torch
    import sympy_helpers
    from sympy import Function

    class f(Function):
        def forward(self, x):
            return sympy_helpers.expand(x).cuda()
    '''
    assert not any(code == "NPU837" for _, code, _ in _codes(source))


def test_a_comment_naming_cutlass_is_quiet():
    source = '''
    import torch
    # the CUTLASS kernels live in csrc/ (flash_attention_v2_cutlass); this file is the reference path
    from attention_reference import attention_ref

    def attend(q, k, v):
        return attention_ref(q.cuda(), k, v)
    '''
    assert not any(code == "NPU837" for _, code, _ in _codes(source))


def _tree_findings(root: Path) -> dict[str, list[tuple[int, str, str]]]:
    out: dict[str, list[tuple[int, str, str]]] = {}
    for r in run_static([root], jobs=1, respect_gitignore=False, cache_dir=root / ".cache").results:
        out[r.path] = [(f.line, f.code, f.severity) for f in r.findings]
    return out


def test_in_a_tree_audit_a_python_module_of_that_name_is_the_projects_own_code(tmp_path):
    root = write_tree(tmp_path / "proj", {"ops/pointgroup_ops.py": POINTGROUP_OPS,
                                      "ops/PG_OP.py": "def voxelize_fp(*args):\n    return None\n"})
    found = _tree_findings(root)
    assert not any(code == "NPU837" for rows in found.values() for _, code, _ in rows)


def test_in_a_tree_audit_without_such_a_module_the_check_stays(tmp_path):
    root = write_tree(tmp_path / "proj", {"ops/pointgroup_ops.py": POINTGROUP_OPS})
    found = _tree_findings(root)
    rows = next(rows for path, rows in found.items() if path.endswith("pointgroup_ops.py"))
    assert _at(rows, _line(POINTGROUP_OPS, "import PG_OP"), "NPU837")


# Tutel tutel/impls/jit_compiler.py (trimmed): `tutel_custom_kernel` is the CUDAExtension tutel's setup.py builds
TUTEL_JIT = '''
import torch
import logging

try:
    from torch.utils.cpp_extension import IS_HIP_EXTENSION, CUDA_HOME, ROCM_HOME
except:
    IS_HIP_EXTENSION = False

try:
    import tutel_custom_kernel

    if hasattr(tutel_custom_kernel, 'update_sdk_home'):
        SDK_HOME = CUDA_HOME if not IS_HIP_EXTENSION else ROCM_HOME
        tutel_custom_kernel.update_sdk_home(torch.tensor([ord(x) for x in SDK_HOME] + [0], dtype=torch.int8, device='cpu'))
except:
    logging.warning("Cannot import JIT optimized kernels. CUDA extension will be disabled.")


class JitCompiler:
    @staticmethod
    def create_raw(source):
        __ctx__ = tutel_custom_kernel.inject_source(source)

        def func(*inputs, extra=[], blocks=[]):
            tutel_custom_kernel.invoke(inputs, extra, blocks, __ctx__)
        return func
'''


def test_a_module_named_like_an_extension_handed_a_torch_tensor_is_a_compiled_extension_check():
    codes = _codes(TUTEL_JIT)
    for needle in ("    import tutel_custom_kernel", "tutel_custom_kernel.update_sdk_home(",
                   "tutel_custom_kernel.inject_source(", "tutel_custom_kernel.invoke("):
        assert _at(codes, _line(TUTEL_JIT, needle), "NPU837"), needle
    assert not _at(codes, _line(TUTEL_JIT, "logging.warning("), "NPU837")   # the message naming CUDA


def test_a_helper_module_named_like_an_extension_without_a_tensor_is_quiet():
    # stylegan2-pytorch's `op` package and a CUTLASS example's code generator (`gen_kernel`) are Python: the calls
    # into them are handed no tensor built by torch
    source = '''
    import torch
    import gen_kernel
    from op import FusedLeakyReLU

    def emit(ir, name):
        return gen_kernel.gen_code(ir, name, torch.cuda.is_available())

    act = FusedLeakyReLU(512)
    '''
    assert not any(code == "NPU837" for _, code, _ in _codes(source))


def test_one_line_two_categories_the_fp16_arm_chosen_by_a_cuda_test():
    # tapnet tapnextpp/votsp2026/model.py (issue 14 item 3): float16 chosen when the device is CUDA is both the
    # device test (error) and the precision choice (info)
    source = '''
    import torch

    class Tracker:
        def __init__(self, device="cuda"):
            self.device = torch.device(device)

        def step(self, frame, autocast=True):
            dtype = torch.float16 if self.device.type == "cuda" else torch.float32
            with torch.amp.autocast("cuda", dtype=dtype):
                return frame * 2
    '''
    codes = ENGINE.analyze_bytes(textwrap.dedent(source).encode(), "model.py").findings
    line = _line(textwrap.dedent(source), "dtype = torch.float16 if")
    assert {"device", "precision"} <= {f.category for f in codes if f.line == line}


def test_the_extensions_cpu_entry_points_are_quiet():
    source = TUTEL_JIT + '''
    @staticmethod
    def generate_cpu_kernel(kernel_type):
        def func(*inputs, extra=[]):
            if inputs[0].dtype is torch.float32:
                tutel_custom_kernel.invoke_cpu_fp32(inputs, extra, kernel_type)
        return func
'''
    codes = _codes(source)
    assert _at(codes, _line(source, "tutel_custom_kernel.invoke("), "NPU837")
    assert not _at(codes, _line(source, "tutel_custom_kernel.invoke_cpu_fp32("), "NPU837")
