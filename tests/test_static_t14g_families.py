"""Families the fresh tuning sample bench/corpus_tuned_t14g missed on its first run (t14g, issue 14): each with the
real spelling it was found in (lmcache, stable-fast, fast-hadamard-transform, xlstm) and the near misses that
must stay quiet (the disabling call, module-level calls other rules own, names no rule should claim)."""
from __future__ import annotations

import textwrap

from auditor.rules import load_rules
from auditor.static import StaticEngine

ENGINE = StaticEngine(load_rules())


def _found(src: str, name: str = "example.py") -> set[tuple[int, str]]:
    result = ENGINE.analyze_bytes(textwrap.dedent(src).encode(), name)
    assert result.error is None
    return {(f.line, f.code) for f in result.findings}


def _codes(src: str) -> set[str]:
    return {code for _, code in _found(src)}


# --- diffusers' xformers switch (NPU334) -------------------------------------------------------------------------

STABLE_FAST_COMPILER = """\
    import torch


    def _enable_xformers(m):
        from xformers import ops
        ops.memory_efficient_attention = xformers_memory_efficient_attention

        if hasattr(m, 'enable_xformers_memory_efficient_attention'):
            m.enable_xformers_memory_efficient_attention()
        else:
            logger.warning(
                'enable_xformers_memory_efficient_attention() is not available.'
                ' If you have enabled xformers by other means, ignore this warning.')


    def compile_unet(m, config):
        if config.enable_xformers:
            _enable_xformers(m)
        return m
"""


def test_diffusers_xformers_switch_is_an_attention_error_and_its_message_is_not():
    found = _found(STABLE_FAST_COMPILER)
    assert (9, "NPU334") in found
    assert not {line for line, _ in found} & {8, 12, 13}      # the hasattr probe and the warning text


def test_training_script_spellings_of_the_switch():
    src = """\
        from diffusers import StableDiffusionPipeline, UNet2DConditionModel

        unet = UNet2DConditionModel.from_pretrained(args.pretrained_model_name_or_path, subfolder="unet")
        if args.enable_xformers_memory_efficient_attention:
            unet.enable_xformers_memory_efficient_attention()
        pipe = StableDiffusionPipeline.from_pretrained(args.model)
        pipe.enable_xformers_memory_efficient_attention(attention_op=None)
        pipe.disable_xformers_memory_efficient_attention()
    """
    found = _found(src)
    assert {(5, "NPU334"), (7, "NPU334")} <= found
    assert not any(line in (4, 8) and code == "NPU334" for line, code in found)


# --- a flash-attn function held in an attribute (NPU335) ---------------------------------------------------------

LMCACHE_FLASH_BACKEND = """\
    import torch
    from lmcache import torch_dev, torch_device_type
    from lmcache.v1.compute.attention.utils import infer_attn_func_from_vllm


    class LMCFlashAttnBackend:
        def __init__(self, vllm_attn):
            self.vllm_attn_impl = vllm_attn.impl
            self.flash_attn_varlen_func, self.get_scheduler_metadata = (
                infer_attn_func_from_vllm(torch_device_type)
            )

        def forward_contiguous(self, query, key, value, output, attn_metadata):
            self.flash_attn_varlen_func(
                q=query,
                k=key,
                v=value,
                out=output,
                cu_seqlens_q=attn_metadata.query_start_loc,
                max_seqlen_q=attn_metadata.max_query_len,
                causal=True,
            )
            return output
"""


def test_flash_attn_function_called_through_an_attribute_is_a_warning():
    found = _found(LMCACHE_FLASH_BACKEND)
    assert (14, "NPU335") in found
    assert not any(code == "NPU335" for line, code in found if line != 14)   # the binding is not a call
    finding = next(f for f in ENGINE.analyze_bytes(textwrap.dedent(LMCACHE_FLASH_BACKEND).encode(), "x.py").findings
                   if f.code == "NPU335")
    assert finding.severity == "warning" and finding.category == "attention"


def test_module_level_flash_attn_calls_stay_with_the_flash_attn_rule():
    src = """\
        import flash_attn
        from flash_attn import flash_attn_func
        out = flash_attn.flash_attn_varlen_func(q, k, v, cu_q, cu_k, max_q, max_k)
        out2 = flash_attn_func(q, k, v, causal=True)
    """
    codes = _codes(src)
    assert "NPU335" not in codes
    assert codes & {"NPU341"}


# --- Triton decorators written as strings for eval() (NPU336) ----------------------------------------------------

STABLE_FAST_COPY = """\
    import torch
    import triton
    import triton.language as tl


    # Stupid: https://github.com/openai/triton/issues/1589
    @eval('''triton.heuristics({
        'BLOCK_M': lambda kwargs: min(4096, triton.next_power_of_2(kwargs['size_inp_0'])),
        'BATCH_STRIDE_INP_IS_1': lambda kwargs: kwargs['batch_stride_inp'] == 1,
    })''')
    @eval('''triton.heuristics({
        'num_warps': lambda kwargs: max(1, min(16, kwargs['BLOCK_M'] // 32)),
    })''')
    @triton.jit
    def copy_2d_kernel(output_ptr, input_ptr, bs, size_inp_0, BLOCK_M: tl.constexpr):
        pid = tl.program_id(0)
"""


def test_eval_written_triton_decorators_are_kernel_findings_on_their_lines():
    found = _found(STABLE_FAST_COPY)
    assert {(7, "NPU336"), (11, "NPU336")} <= found
    assert not any(line == 6 for line, _ in found)          # the comment naming the Triton issue


def test_a_string_that_only_mentions_triton_is_quiet():
    src = """\
        backend = "triton"
        note = "triton.jit is not used here"
        logger.info("triton.heuristics(...) is applied through eval")
    """
    assert "NPU336" not in _codes(src)


# --- CUDA runtime functions read off a loaded library (NPU058) ---------------------------------------------------

LMCACHE_DEVICE_OPS = """\
    import ctypes
    import math
    import torch


    def _copy_from_device_pointer(ptr, shape, dtype, device):
        copy_lib = _get_copy_lib()
        if copy_lib is None:
            raise RuntimeError("Failed to load libcudart/libamdhip")

        cuda_memcpy = copy_lib.cudaMemcpy
        cuda_memcpy.restype = ctypes.c_int
        numel = math.prod(shape)
        tensor = torch.empty(numel, dtype=dtype, device=device)
        error = cuda_memcpy(ctypes.c_void_p(tensor.data_ptr()), ctypes.c_void_p(ptr),
                            ctypes.c_size_t(numel * dtype.itemsize), ctypes.c_int(3))
        if error != 0:
            raise RuntimeError(f"cudaMemcpy D2D failed with error code {error}.")
        return tensor.view(*shape)
"""


def test_a_runtime_function_taken_from_libcudart_is_a_device_error():
    found = _found(LMCACHE_DEVICE_OPS)
    assert (11, "NPU058") in found
    assert not any(line in (9, 18) for line, _ in found)     # messages


def test_calls_on_the_spot_stay_with_the_runtime_binding_rule():
    src = """\
        lib = CudaRTLibrary()
        lib.cudaSetDevice(device.index)
        acl_copy = acl_lib.aclrtMemcpy
    """
    codes = _codes(src)
    assert "NPU035" in codes and "NPU058" not in codes


# --- the CUDA array interface (NPU059) ---------------------------------------------------------------------------

def test_publishing_and_reading_the_cuda_array_interface():
    src = """\
        import torch


        class _CudaArrayWrapper:
            def __init__(self, ptr, numel, typestr):
                self.__cuda_array_interface__ = {
                    "data": (ptr, False),
                    "shape": (numel,),
                    "typestr": typestr,
                    "version": 3,
                }


        def describe(t):
            return t.__cuda_array_interface__["shape"]


        def host(t):
            self_desc = t.__array_interface__
            return self_desc
    """
    found = _found(src)
    assert {(6, "NPU059"), (15, "NPU059")} <= found
    assert not any(line == 19 for line, _ in found)


def test_other_attributes_set_on_self_stay_quiet():
    # `self.cuda_stream = ...` / `self.is_cuda = ...` bind the class's own names (unchanged behaviour)
    src = """\
        class Holder:
            def __init__(self, s):
                self.cuda_stream = s
                self.is_cuda = True
    """
    assert not _found(src)


# --- `<PROJECT>_SKIP_CUDA_BUILD` switches (NPU060) ---------------------------------------------------------------

FHT_SETUP = """\
    import os
    from setuptools import setup

    # SKIP_CUDA_BUILD: Intended to allow CI to use a simple `python setup.py sdist` run to copy over raw files
    FORCE_BUILD = os.getenv("FAST_HADAMARD_TRANSFORM_FORCE_BUILD", "FALSE") == "TRUE"
    SKIP_CUDA_BUILD = os.getenv("FAST_HADAMARD_TRANSFORM_SKIP_CUDA_BUILD", "FALSE") == "TRUE"

    ext_modules = []
    if not SKIP_CUDA_BUILD:
        ext_modules.append(make_extension())
"""


def test_an_unknown_projects_skip_cuda_build_switch_is_reported():
    found = _found(FHT_SETUP, "setup.py")
    assert (6, "NPU060") in found
    assert not any(line in (4, 5) for line, _ in found)      # the comment and a build switch that is not CUDA's


def test_known_switches_keep_their_own_rules():
    src = """\
        import os
        a = os.getenv("MAMBA_SKIP_CUDA_BUILD", "FALSE")
        b = os.getenv("NVTE_PYTORCH_SKIP_CUDA_BUILD", "0")
        c = os.getenv("FLASH_ATTENTION_SKIP_CUDA_BUILD", "FALSE")
        d = os.environ.get("SKIP_CUDA_BUILD_DOCS")
    """
    found = _found(src)
    assert not any(code == "NPU060" for _, code in found)
    assert {line for line, _ in found} >= {2, 3, 4}


# --- cpp_extension's CUDA include paths (NPU061) -----------------------------------------------------------------

def test_cpp_extension_cuda_paths_of_a_jit_build():
    src = """\
        import os
        import torch
        from torch.utils.cpp_extension import load as _load

        if torch.cuda.is_available():
            os.environ["CUDA_LIB"] = os.path.join(
                os.path.split(torch.utils.cpp_extension.include_paths(cuda=True)[-1])[0], "lib"
            )
        cpu_inc = torch.utils.cpp_extension.include_paths()
    """
    found = _found(src)
    assert (7, "NPU061") in found
    assert not any(line == 9 for line, _ in found)
