"""Families the fresh tuning sample bench/corpus_tuned_t14d missed on its first run (t14d, issue 14): each with
real spellings (basicsr, sparseml, sgl-kernel, GFPGAN / StyleGAN2 ports) that must be flagged and near misses that
must not."""
from __future__ import annotations

import textwrap

from auditor.rules import load_rules
from auditor.static import StaticEngine
from tests.static_snippets import snippet_findings

ENGINE = StaticEngine(load_rules())


def _findings(src: str, name: str = "example.py"):
    return snippet_findings(ENGINE, src, name)


def _found(src: str, name: str = "example.py") -> set[tuple[int, str]]:
    return {(f.line, f.code) for f in _findings(src, name)}


# --- a C++/CUDA extension the file builds with torch.utils.cpp_extension.load (NPU327) -------------------------

BASICSR_DEFORM_CONV = """\
    import math
    import torch
    from torch.autograd import Function

    try:
        from . import deform_conv_ext
    except ImportError:
        import os
        BASICSR_JIT = os.getenv('BASICSR_JIT')
        if BASICSR_JIT == 'True':
            from torch.utils.cpp_extension import load
            module_path = os.path.dirname(__file__)
            deform_conv_ext = load(
                'deform_conv',
                sources=[
                    os.path.join(module_path, 'src', 'deform_conv_ext.cpp'),
                    os.path.join(module_path, 'src', 'deform_conv_cuda_kernel.cu'),
                ],
            )


    class DeformConvFunction(Function):

        @staticmethod
        def forward(ctx, input, offset, weight, stride=1):
            output = input.new_empty(DeformConvFunction._output_size(input, weight, stride))
            if not input.is_cuda:
                raise NotImplementedError
            deform_conv_ext.deform_conv_forward(input, weight,
                                                offset, output, ctx.bufs_[0], ctx.bufs_[1])
            return output
"""


def test_jit_extension_import_and_calls_are_kernel_findings():
    found = _found(BASICSR_DEFORM_CONV)
    assert (6, "NPU327") in found            # `from . import deform_conv_ext`: the prebuilt copy
    assert (13, "NPU370") in found           # the load(...) call keeps its own rule
    assert (29, "NPU327") in found           # deform_conv_ext.deform_conv_forward(...)


def test_jit_extension_through_module_alias_stylegan2_style():
    found = _found("""\
        import os
        import torch
        from torch.utils import cpp_extension

        module_path = os.path.dirname(__file__)
        fused = cpp_extension.load(
            "fused",
            sources=[
                os.path.join(module_path, "fused_bias_act.cpp"),
                os.path.join(module_path, "fused_bias_act_kernel.cu"),
            ],
        )

        def fused_leaky_relu(input, bias, negative_slope=0.2, scale=2 ** 0.5):
            empty = input.new_empty(0)
            return fused.fused_bias_act(input, bias, empty, 3, 0, negative_slope, scale)
    """)
    assert (16, "NPU327") in found


def test_names_not_built_by_cpp_extension_are_quiet():
    found = _found("""\
        from . import deform_conv_utils
        from .ops import load

        ext = load("my_ops")                  # a project's own loader, not torch.utils.cpp_extension
        y = ext.run(x)
        z = deform_conv_utils.deform_conv_forward(x)
    """)
    assert not any(code == "NPU327" for _, code in found)


# --- CuTe DSL modules (NPU329) --------------------------------------------------------------------------------

def test_cute_dsl_module_imports():
    found = _found("""\
        import cutlass.cute as cute
        import torch

        from flash_attn_origin.cute.cute_dsl_utils import to_cute_tensor
    """)
    assert (4, "NPU329") in found


def test_cute_word_elsewhere_is_quiet():
    found = _found("""\
        from mylib.cute_utils import make_thumbnail
        from tests.cute.test_flash_attn import run_case
        cute = 1
    """)
    assert not any(code == "NPU329" for _, code in found)


# --- Triton float8 types (NPU252) ------------------------------------------------------------------------------

def test_triton_fp8_types_in_a_format_table():
    src = """\
        import torch

        import triton
        import triton.language as tl

        @triton.constexpr_function
        def get_scaled_dot_format_string(dtype: tl.dtype):
            mapping = {
                tl.float16: "fp16",
                tl.bfloat16: "bf16",
                tl.uint8: "e2m1",
                tl.float8e4nv: "e4m3",
                tl.float8e5: "e5m2",
            }
            return mapping[dtype]
    """
    found = _found(src)
    assert {(12, "NPU252"), (13, "NPU252")} <= found
    assert not any(code == "NPU252" and line in (9, 10, 11) for line, code in found)
    # severity follows the product like torch's float8 dtypes: 950 has float8
    fp8 = [f for f in _findings(src) if f.code == "NPU252"]
    assert {f.severity for f in fp8} == {"error"}
    on_950 = StaticEngine(load_rules(), product="950").analyze_bytes(textwrap.dedent(src).encode(), "example.py")
    assert {f.severity for f in on_950.findings if f.code == "NPU252"} == {"info"}


def test_triton_fp8_cast_in_a_kernel():
    found = _found("""\
        import triton
        import triton.language as tl

        @triton.jit
        def _quant_fp8(x_ptr, y_ptr, BLOCK: tl.constexpr):
            offs = tl.arange(0, BLOCK)
            x = tl.load(x_ptr + offs)
            tl.store(y_ptr + offs, x.to(tl.float8e4nv))
    """)
    assert (8, "NPU252") in found


# --- custom CUDA attention operators (NPU328, beside the kernel rule) ------------------------------------------

def test_custom_attention_ops_get_an_attention_finding_beside_the_kernel_one():
    found = _found("""\
        from typing import Optional, Tuple

        import torch


        def merge_state(v_a, s_a, v_b, s_b, v_merged=None, s_merged=None):
            s_a = s_a.to(torch.float32)
            s_b = s_b.to(torch.float32)
            if v_merged is None:
                v_merged = torch.empty_like(v_a)
            torch.ops.sgl_kernel.merge_state.default(v_a, s_a, v_b, s_b, v_merged, s_merged)
            return v_merged, s_merged


        def cutlass_mla_get_workspace_size(max_seq_len: int, num_batches: int, sm_count: int = 0) -> int:
            return torch.ops.sgl_kernel.cutlass_mla_get_workspace_size.default(max_seq_len, num_batches, sm_count, 1)


        def rmsnorm(x, w, eps):
            return torch.ops.sgl_kernel.rmsnorm.default(x, w, eps)
    """)
    assert {(11, "NPU328"), (11, "NPU380"), (16, "NPU328"), (16, "NPU380")} <= found
    assert (20, "NPU380") in found and (20, "NPU328") not in found     # a custom op, not an attention one


def test_pytorch_and_torch_npu_attention_ops_are_not_custom_attention_ops():
    found = _found("""\
        import torch
        a = torch.ops.aten._scaled_dot_product_efficient_attention(q, k, v, None, False)
        b = torch.ops.npu.npu_fusion_attention(q, k, v, 8, "BSND")
    """)
    assert not any(code == "NPU328" for _, code in found)


# --- a local subclass of a class an error-level rule reports (sparseml's _DataParallel) ------------------------

SPARSEML_MODEL = """\
    from typing import List, Union

    import torch
    from torch.nn import DataParallel, Module


    class _DataParallel(DataParallel):
        def __getattr__(self, item):
            module = super().__getattr__("module")
            return getattr(module, item)


    def parallelize_model(model: Module, ids: Union[None, List[int]]) -> Module:
        \"\"\"Data parallelize a model across multiple devices.\"\"\"
        return _DataParallel(model, ids)
"""


def test_instantiating_a_local_data_parallel_subclass():
    found = _found(SPARSEML_MODEL)
    assert (7, "NPU112") in found      # the class line (its base)
    assert (15, "NPU112") in found     # the call that wraps the model


def test_subclasses_of_unreported_or_info_bases_stay_quiet():
    found = _found("""\
        import torch

        class Net(torch.nn.Module):
            pass

        class Scaler(torch.autocast):
            pass

        model = Net()
        ctx = Scaler("cuda")
    """)
    assert not any(line == 9 for line, _ in found)
    assert not any(line == 10 and code == "NPU204" for line, code in found)     # info about the base: said once


def test_triton_fp8_type_compared_is_read_not_chosen():
    found = _found("""\
        import triton
        import triton.language as tl

        @triton.jit
        def _upcast_from_mxfp(out_ptr, mx_tensor_ptr, BLOCK: tl.constexpr):
            mx_tensor_dtype: tl.constexpr = mx_tensor_ptr.dtype.element_ty
            is_fp8: tl.constexpr = mx_tensor_dtype == tl.float8e4nv or mx_tensor_dtype == tl.float8e5
            tensor = tl.load(mx_tensor_ptr + tl.arange(0, BLOCK))
            if tensor.dtype == tl.float8e5:
                tensor = tensor.to(tl.float32)
    """)
    assert not any(code == "NPU252" for _, code in found)
