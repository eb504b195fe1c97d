"""Kernel-build and extension families found missing on code the rules were not written from (issue 14):
compiled `*_cuda` extension modules, dispatch keys given as lists, nvcc flags, cuda-python's driver API, and a
None check that an assert turns into a requirement."""
from __future__ import annotations

from test_rules_apex import audit


def _cats(by_line: dict[int, list]) -> dict[int, set[str]]:
    return {line: {f.category for f in fs} for line, fs in by_line.items()}


MAMBA_LIKE = '''\
import torch
import selective_scan_cuda
import causal_conv1d_cuda as cc
from .ops_cuda import fused_rotary


def forward(u, delta, A, B, C):
    out, x, *rest = selective_scan_cuda.fwd(u, delta, A, B, C, None, None, None, False)
    y = cc.causal_conv1d_fwd(u, A, None, None, True)
    return fused_rotary(out)
'''


def test_compiled_extension_modules_are_kernel_beside_their_package_rule():
    cats = _cats(audit(MAMBA_LIKE))
    assert "kernel" in cats[2] and "kernel" in cats[3]
    assert "kernel" in cats[8] and "kernel" in cats[9]
    assert 4 not in cats and 10 not in cats          # a relative import of a Python module is not an extension


QUANTO_LIKE = '''\
import torch
from .extension import Extension, is_extension_available

extra_cuda_cflags = [
    "--expt-extended-lambda",
    "--use_fast_math",
]
ext = Extension("quanto_cuda", root_dir=".", sources=["unpack.cu"], extra_cuda_cflags=extra_cuda_cflags)


@torch.library.impl("quanto::unpack", ["CUDA"])
def unpack_cuda(t, bits):
    return ext.lib.unpack(t, bits)


@torch.library.impl("quanto::unpack", ["CPU"])
def unpack_cpu(t, bits):
    return t


def use_cuda(t):
    return t.device.type == "cuda" and is_extension_available("quanto_cuda")
'''


def test_list_dispatch_keys_nvcc_flags_and_extension_checks():
    by_line = audit(QUANTO_LIKE)
    codes = {line: {f.code for f in fs} for line, fs in by_line.items()}
    assert "NPU377" in codes[11] and 16 not in codes      # ["CUDA"] registers for CUDA only; ["CPU"] is fine
    assert codes[5] == {"NPU369"} and codes[6] == {"NPU369"}
    assert "NPU368" in codes[22]


def test_library_impl_method_with_cuda_dispatch_key():
    by_line = audit('''\
        import torch
        lib = torch.library.Library("mylib", "IMPL")
        lib.impl("rms_norm", rms_norm_cuda, "CUDA")
        lib.impl("rms_norm", rms_norm_ref, "CompositeImplicitAutograd")
        ''')
    codes = {line: {f.code for f in fs} for line, fs in by_line.items()}
    assert "NPU378" in codes[3] and 4 not in codes


def test_cuda_python_driver_is_kernel_and_third_party():
    cats = _cats(audit('''\
        import cuda.bindings.driver as cuda
        compiled(src, dst, cuda.CUstream(int(stream)))
        '''))
    assert cats[1] >= {"kernel", "third_party"} and cats[2] >= {"kernel", "third_party"}


def test_assert_of_an_optional_import_requires_it():
    by_line = audit('''\
        try:
            import flash_attn
        except ImportError:
            flash_attn = None


        def attention(q, k, v):
            assert flash_attn is not None, "FlashAttention is not available, please install flash_attn"
            return flash_attn.flash_attn_func(q, k, v)
        ''')
    assert any(f.category == "attention" for f in by_line[8])


def test_cuda_build_env_is_kernel_beside_device():
    cats = _cats(audit('''\
        import os
        if not os.environ.get("TORCH_CUDA_ARCH_LIST"):
            os.environ["TORCH_CUDA_ARCH_LIST"] = f"{major}.{minor}"
        os.environ["ASCEND_HOME_PATH"] = "/usr/local/Ascend/ascend-toolkit/latest"
        '''))
    assert cats[2] >= {"device", "kernel"} and cats[3] >= {"device", "kernel"}
    assert "kernel" not in cats.get(4, set())


def test_fp8_and_fp4_switches_as_keywords_each_on_its_line():
    by_line = audit('''\
        runner = DiffusionRunner(
            model_path,
            use_fp8_gemms=True,
            use_fp4_gemms=True,
            offload=False,
        )
        plain = DiffusionRunner(model_path, use_fp8_gemms=False)
        ''')
    codes = {line: {f.code for f in fs} for line, fs in by_line.items()}
    assert codes[3] == {"NPU231"} and codes[4] == {"NPU231"} and 7 not in codes
    assert all(f.category == "precision" for f in by_line[3])
