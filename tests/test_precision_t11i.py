"""Precision fixes tuned on heldout7's Python false classes (t11i; heldout7's trees and labels are TUNED ON from here,
by t11i and t15i).

The code below is shaped like the false classes hl7a / hl7b found, written afresh (not copied):
- a Triton compiler's own tree (`python/triton/language/core.py`, a vendor backend's libdevice and kernel tests that
  use `tl.load`, `core.tensor`): the project defines `triton` itself, so its uses are not "CUDA-specific code in
  another file" (NPU320); a package merely named for Triton (`triton_utils/`) keeps the note;
- a vendor device abstraction (`import vendorlib`) whose import rebinds `Tensor.cuda` and patches `torch.cuda`: its
  tests' `.cuda()`, `"cuda"` and `torch.cuda.*` are remapped (info) and its own `_C` is not a CUDA extension; a
  package that only fakes one probe, and a test that does not import the package, keep their errors;
- Intel's NPU (a `npu_models/` folder whose modules import intel_npu_acceleration_library, and a script loading a
  model through the package's `npu_model` module): dtype hints on its host weights are dropped, other findings
  are info; a folder named `npu` without such a runtime is untouched;
- torch.ops namespaces the tree registers itself with torch.library (`Library("custom", "FRAGMENT")` + `define`,
  `getattr(torch.ops, "air")` guards before `lib.define`): not reported; an op defined in Python whose only kernel
  is CUDA's, and an outside namespace, stay;
- host-only values: a CPU system test with no device placement, a CPU benchmark function (`*_cpu`,
  `torch.autocast("cpu")`), a dtype converter chain, `monkeypatch.setattr(torch.cuda, ...)`.
"""
from __future__ import annotations

import pytest

from auditor.rules import load_rules
from auditor.static.engine import StaticEngine
from tests.static_snippets import findings_by_line, findings_in_tree, write_tree


@pytest.fixture(scope="module")
def engine():
    return StaticEngine(load_rules())


# -- 1. the project defines the technology's package itself ----------------------------------------------------

TRITON_CORE = """\
    import builtins

    from triton._C.libtriton import ir
    from . import semantic


    class constexpr:
        def __init__(self, value):
            self.value = value


    class tensor:
        def __init__(self, handle, type):
            self.handle = handle
            self.type = type


    def load(pointer, mask=None, other=None, _builder=None):
        return semantic.load(pointer, mask, other, _builder)


    def arange(start, end, _builder=None):
        return semantic.arange(start, end, _builder)


    def static_assert(cond, msg=""):
        pass


    def _ptx_only(x, _builder=None):
        # an NVIDIA-only lowering: inline PTX
        return semantic.inline_asm_elementwise("cvt.rn.bf16x2.f32 $0, $2, $1;", "=r,r,r", [x], _builder)
    """

LIBDEVICE = """\
    from triton.language import core
    from triton.language.core import constexpr


    @core.extern
    def hypot(arg0, arg1, _builder=None):
        core.static_assert(False)
        return core.tensor(_builder.create_fabs(arg0.handle), arg0.type)
    """

NPU_TEST = """\
    import torch
    import torch_npu
    import triton
    import triton.language as tl


    @triton.jit
    def add_kernel(x_ptr, y_ptr, out_ptr, N: tl.constexpr):
        offs = tl.program_id(0) * N + tl.arange(0, N)
        tl.store(out_ptr + offs, tl.load(x_ptr + offs) + tl.load(y_ptr + offs))


    def test_add():
        x = torch.randn(128).npu()
        out = torch.empty_like(x)
        add_kernel[(1,)](x, x, out, N=128)
    """

KERNELS_UTIL = """\
    import torch
    import triton


    def quantize_weight(w, dtype):
        if torch.cuda.get_device_capability()[0] >= 9:
            return w.to(torch.float8_e4m3fn)
        return w
    """

KERNELS_BENCH = """\
    import torch
    from triton_utils.bench_utils import quantize_weight


    def bench(w):
        return quantize_weight(w, "fp8")
    """


def test_triton_own_tree_is_not_port_them_together(tmp_path):
    found = findings_in_tree(write_tree(tmp_path, {
        "python/triton/__init__.py": "from . import language\n",
        "python/triton/language/__init__.py": "from .core import load, arange, tensor, static_assert, constexpr\n",
        "python/triton/language/semantic.py": "def load(*a):\n    return a\n",
        "python/triton/language/core.py": TRITON_CORE,
        "third_party/ascend/language/cann/libdevice.py": LIBDEVICE,
        "third_party/ascend/unittest/test_add.py": NPU_TEST,
        "python/triton_utils/__init__.py": "",
        "python/triton_utils/bench_utils.py": KERNELS_UTIL,
        "python/triton_utils/bench_mlp.py": KERNELS_BENCH,
        # a folder named for CUDA that is a top-level package only because its parent is none is no library
        "nerfacc_like/cuda/__init__.py": "from ._backend import _C\n\n\ndef call(name, *a):\n    return getattr(_C, name)(*a)\n",
        "nerfacc_like/cuda/_backend.py": "from torch.utils.cpp_extension import load\n_C = load(name='nerfacc_cuda', sources=['csrc/nerfacc.cu'])\n",
    }))
    assert ("nerfacc_like/cuda/__init__.py", 1, "NPU320") in found
    own = [k for k in found if k[2] == "NPU320" and not k[0].startswith(("python/triton_utils", "nerfacc_like"))]
    assert own == []
    # a package only named for Triton (`triton_utils`) is still the project's CUDA-specific code
    assert ("python/triton_utils/bench_mlp.py", 6, "NPU320") in found


# -- 2. a vendor device abstraction that remaps CUDA APIs ---------------------------------------------------------

SHIM_INIT = """\
    import os

    import torch

    mockcuda = os.environ.get("ACME_MOCK_CUDA", "True").lower() != "false"

    from acme_dev import _C
    from acme_dev import runtime
    from .runtime.device import __devtype__
    from .runtime.tensor import apply_tensor_type_patch


    def apply_tensor_method_patch():
        torch.Tensor.acme = _C.to_acme
        torch.Tensor.is_acme = property(_C.is_acme)
        if mockcuda:
            torch.Tensor.cuda = torch.Tensor.acme
            torch.Tensor.is_cuda = torch.Tensor.is_acme


    def apply_torch_function_patch():
        if mockcuda:
            for attr in runtime.__all__:
                if hasattr(torch.cuda, attr):
                    setattr(torch.cuda, attr, getattr(runtime, attr))
                if attr in torch.cuda.memory.__all__ and hasattr(runtime.memory, attr):
                    setattr(torch.cuda.memory, attr, getattr(runtime.memory, attr))
            torch.cuda.device = runtime.devicectx


    apply_tensor_method_patch()
    apply_torch_function_patch()
    apply_tensor_type_patch()
    """

SHIM_DEVICE = """\
    from acme_dev import _C, mockcuda

    __acme_device_type__ = _C.device_type
    __devtype__ = "cuda" if mockcuda and _C.python_device_as_cuda() else __acme_device_type__


    def manual_seed(seed):
        for i in range(_C.device_count()):
            _C._manual_seed(i, seed)
    """

SHIM_TENSOR = """\
    import torch


    def apply_tensor_type_patch():
        torch.cuda.FloatTensor = torch.FloatTensor
    """

SHIM_STORAGES = """\
    from .device import *


    def storage_device():
        return __devtype__
    """

SHIM_TEST = """\
    import torch
    import acme_dev
    from acme_dev.testing import TestCase, run_tests


    class TestBaddbmm(TestCase):
        def setUp(self):
            self.batch1 = torch.randn(10, 3, 4).cuda()
            self.batch2 = torch.randn(10, 4, 5).cuda()

        def test_baddbmm(self):
            out = torch.zeros(10, 3, 5, device="cuda")
            res = torch.baddbmm(out, self.batch1, self.batch2)
            torch.cuda.synchronize()
            self.assertTrue(isinstance(res, torch.cuda.FloatTensor))


    if __name__ == "__main__":
        run_tests()
    """

PLAIN_TEST = """\
    import torch


    def test_baddbmm():
        batch1 = torch.randn(10, 3, 4).cuda()
        torch.cuda.synchronize()
    """


def _shim_tree(tmp_path, init: str = SHIM_INIT):
    return write_tree(tmp_path, {
        "acme/setup.py": "from setuptools import setup\nsetup(name='acme_dev')\n",
        "acme/acme_dev/__init__.py": init,
        "acme/acme_dev/runtime/__init__.py": "from .device import *\n__all__ = ['synchronize', 'manual_seed']\n",
        "acme/acme_dev/runtime/device.py": SHIM_DEVICE,
        "acme/acme_dev/runtime/tensor.py": SHIM_TENSOR,
        "acme/acme_dev/runtime/storages.py": SHIM_STORAGES,
        "acme/acme_dev/testing.py": "import unittest\nTestCase = unittest.TestCase\nrun_tests = unittest.main\n",
        "acme/tests/test_baddbmm.py": SHIM_TEST,
        "acme/tests/test_plain.py": PLAIN_TEST,
    })


def test_device_package_that_remaps_cuda_makes_its_importers_run_as_written(tmp_path):
    found = findings_in_tree(_shim_tree(tmp_path))
    test = {k: v for k, v in found.items() if k[0] == "acme/tests/test_baddbmm.py"}
    assert {k[2] for k in test} >= {"NPU001", "NPU002", "NPU003"}      # still said, as info
    assert set(test.values()) == {"info"}
    # the package's own runtime is not a CUDA extension, its own modules are not "CUDA-specific project code"
    assert not [k for k in found if k[2] in ("NPU358", "NPU320")]
    assert found[("acme/acme_dev/__init__.py", 26, "NPU002")] == "info"
    # a test that does not import the package is plain CUDA code
    assert found[("acme/tests/test_plain.py", 5, "NPU001")] == "error"
    assert found[("acme/tests/test_plain.py", 6, "NPU002")] == "error"


def test_package_that_only_fakes_a_probe_is_no_device_shim(tmp_path):
    init = """\
        import torch

        from acme_dev import runtime


        def _fake_cuda():
            torch.cuda.is_available = lambda: True
        """
    found = findings_in_tree(_shim_tree(tmp_path, init))
    assert found[("acme/tests/test_baddbmm.py", 8, "NPU001")] == "error"
    assert found[("acme/tests/test_baddbmm.py", 15, "NPU002")] == "error"


# -- 3. another vendor's NPU is not Ascend -------------------------------------------------------------------------

INTEL_LINEAR = """\
    import torch
    from torch.nn import Parameter
    from intel_npu_acceleration_library.backend import run_matmul


    class Linear(torch.nn.Module):
        def __init__(self, weight, bias=None):
            super().__init__()
            self.weight = Parameter(weight, requires_grad=False)
            self.bias = bias

        @staticmethod
        def fromTensor(weight, bias=None, dtype: torch.dtype = torch.float16):
            return Linear(weight.to(dtype), bias)

        def forward(self, x):
            return run_matmul(x, self.weight)
    """

INTEL_MP = """\
    import torch
    from .mp_base import LLMBaseNNFactory


    class DecoderRunner(LLMBaseNNFactory):
        def build(self, layers):
            weights = []
            for layer in layers:
                weights.append(layer.input_layernorm.weight.to(torch.float16))
                weights.append(layer.self_attn.v_proj.bias.to(torch.float16))
            mask = self.convert_to_fp16(self.attention_mask)
            return weights, mask
    """

INTEL_MP_BASE = """\
    import torch


    class LLMBaseNNFactory:
        def compile(self):
            from intel_npu_acceleration_library.backend.factory import NNFactory
            return NNFactory
    """

INTEL_NPU_MODEL = """\
    import torch
    import transformers


    class AutoModelForCausalLM:
        @classmethod
        def from_pretrained(cls, path, **kwargs):
            from intel_npu_acceleration_library.compiler import compile as npu_compile
            model = transformers.AutoModelForCausalLM.from_pretrained(path, **kwargs)
            return npu_compile(model)
    """

INTEL_EXAMPLE = """\
    import argparse

    import torch
    from vendorllm.transformers.npu_model import AutoModelForCausalLM

    if __name__ == "__main__":
        parser = argparse.ArgumentParser()
        parser.add_argument("--repo-id-or-model-path", type=str, default="Qwen/Qwen2.5-7B-Instruct")
        args = parser.parse_args()
        model = AutoModelForCausalLM.from_pretrained(args.repo_id_or_model_path,
                                                     torch_dtype=torch.float16,
                                                     trust_remote_code=True)
        print(model.generate(torch.tensor([[1, 2, 3]]), max_new_tokens=32))
    """

ASCEND_NPU_MODEL = """\
    import torch


    def load(model):
        return model.to(torch.bfloat16).to("npu")
    """


def test_intel_npu_code_is_another_backend(tmp_path):
    found = findings_in_tree(write_tree(tmp_path, {
        "src/vendorllm/__init__.py": "",
        "src/vendorllm/transformers/__init__.py": "",
        "src/vendorllm/transformers/npu_model.py": INTEL_NPU_MODEL,
        "src/vendorllm/transformers/npu_models/__init__.py": "",
        "src/vendorllm/transformers/npu_models/linear.py": INTEL_LINEAR,
        "src/vendorllm/transformers/npu_models/mp_base.py": INTEL_MP_BASE,
        "src/vendorllm/transformers/npu_models/qwen2_mp.py": INTEL_MP,
        "example/NPU/LLM/qwen.py": INTEL_EXAMPLE,
        "other/npu/load.py": ASCEND_NPU_MODEL,
    }))
    intel = [k for k in found if k[0].startswith(("src/", "example/"))]
    assert not [k for k in intel if k[2] in ("NPU202", "NPU247")], intel
    # a folder named `npu` whose code imports no other vendor's NPU runtime is Ascend code: its bf16 hint stays,
    # as it does in every file written for Ascend (bf16 depends on the product; npu_native.py drops fp16 hints there)
    assert ("other/npu/load.py", 5, "NPU201") in found


# -- 4. torch.ops namespaces the tree registers with torch.library --------------------------------------------------

OPS_LIB = """\
    import torch

    lib = torch.library.Library("air", "FRAGMENT")  # noqa: TOR901
    """

OPS_EVENT = """\
    import torch

    from torchair_like.ops._lib import lib

    if not hasattr(getattr(torch.ops, "air"), "tagged_event_record"):
        lib.define("tagged_event_record(Tensor input, str tag) -> ()")


    def record(x, tag):
        torch.ops.air.tagged_event_record(x, tag)
    """

ST_REINPLACE = """\
    import torch
    import unittest

    lib = torch.library.Library("custom", "FRAGMENT")
    lib.define("sin_cos_inplace(Tensor x, Tensor(a!) out_sin, Tensor(b!) out_cos) -> None")


    @torch.library.impl(lib, "sin_cos_inplace", "CompositeExplicitAutograd")
    def sin_cos_inplace(x, out_sin, out_cos):
        out_sin.copy_(torch.sin(x))
        out_cos.copy_(torch.cos(x))


    @torch.library.impl(lib, "sin_cos_inplace", "Meta")
    def sin_cos_inplace_meta(x, out_sin, out_cos):
        return None


    class ReinplaceTest(unittest.TestCase):
        def test_pass(self):
            gm = torch.fx.symbolic_trace(lambda x: x)
            for node in gm.graph.nodes:
                if node.target == torch.ops.custom.sin_cos_inplace.default:
                    node.replace_all_uses_with(node.args[0])
            out = torch.ops.fastkern.rms_norm(torch.ones(4), torch.ones(4), 1e-6)
            y = torch.ops.custom.fused_rope_cuda(torch.ones(4))
    """

CUDA_ONLY_OP = """\
    import torch
    import triton

    lib = torch.library.Library("mykern", "FRAGMENT")
    lib.define("fused_add(Tensor x, Tensor y) -> Tensor")


    def _fused_add_cuda(x, y):
        return x + y


    lib.impl("fused_add", _fused_add_cuda, "CUDA")


    def fused_add(x, y):
        return torch.ops.mykern.fused_add(x, y)
    """


CUDA_EXTENSION_OP = """\
    import os

    import torch
    from torch.utils.cpp_extension import load

    KERNEL_DIR = os.path.dirname(os.path.abspath(__file__))
    KERNEL = load(name="vq_cuda", sources=[os.path.join(KERNEL_DIR, "vq.cpp"), os.path.join(KERNEL_DIR, "vq.cu")])

    torch.library.define("vq::lookup_matmul", "(Tensor input, Tensor codes, Tensor codebooks) -> Tensor")
    torch.library.impl("vq::lookup_matmul", "default", KERNEL.lookup_matmul)


    def lookup_matmul(x, codes, codebooks):
        return torch.ops.vq.lookup_matmul(x, codes, codebooks)
    """


# a tree with its own torch.library namespace, a CUDA-only op and a CUDA-extension op (also tests/test_tree_facts.py)
OPS_TREE = {
    "torchair_like/__init__.py": "",
    "torchair_like/ops/__init__.py": "",
    "torchair_like/ops/_lib.py": OPS_LIB,
    "torchair_like/ops/_tagged_event.py": OPS_EVENT,
    "tests/st/reinplace_st.py": ST_REINPLACE,
    "kern/fused.py": CUDA_ONLY_OP,
    "vq/kernels.py": CUDA_EXTENSION_OP,
}


def test_own_torch_library_namespaces_are_not_custom_op_libraries(tmp_path):
    found = findings_in_tree(write_tree(tmp_path, OPS_TREE))
    assert not [k for k in found if k[0] == "torchair_like/ops/_tagged_event.py" and k[2] == "NPU380"]
    assert ("tests/st/reinplace_st.py", 23, "NPU380") not in found
    # an outside op library, and an op whose only kernel is CUDA's, are still reported
    assert found[("tests/st/reinplace_st.py", 25, "NPU380")] == "error"
    assert found[("kern/fused.py", 16, "NPU380")] == "error"
    # an op whose implementation is a CUDA extension the file builds (registered for "default") is a CUDA op too
    assert ("vq/kernels.py", 14, "NPU380") in found
    # per operator: another op of the same namespace that nothing in the tree defines (a compiled one) stays
    assert found[("tests/st/reinplace_st.py", 26, "NPU380")] == "error"


def test_getattr_of_a_namespace_the_rule_does_not_report(tmp_path):
    found = findings_in_tree(write_tree(tmp_path, {
        "ops/guard.py": """\
            import torch

            if not hasattr(getattr(torch.ops, "npugraph_ex"), "record_tagged_stream"):
                pass
            if not hasattr(getattr(torch.ops, "fastkern"), "rms_norm"):
                pass
            """,
    }))
    assert ("ops/guard.py", 3, "NPU380") not in found
    assert ("ops/guard.py", 5, "NPU380") in found


# -- 5. host-only values ----------------------------------------------------------------------------------------

EXPORT_ST = """\
    import unittest

    import torch
    import torchair_like


    class ExportSt(unittest.TestCase):
        def test_export_fp16(self):
            x = torch.randn([2, 4], dtype=torch.float16)
            torchair_like.dynamo_export(x, model=torch.nn.Identity())

        def test_export_fp8(self):
            x = torch.randn([2, 4])
            x_e4m3fn = x.to(torch.float8_e4m3fn)
            torchair_like.dynamo_export(x_e4m3fn, model=torch.nn.Identity())
    """


def test_cpu_test_without_device_placement_holds_host_values(engine):
    assert not [f for fs in findings_by_line(engine, EXPORT_ST, "tests/st/export_st.py").values() for f in fs
                if f.category == "precision"]
    on_device = EXPORT_ST.replace("x = torch.randn([2, 4])\n", "x = torch.randn([2, 4]).npu()\n")
    got = findings_by_line(engine, on_device, "tests/st/export_st.py")
    assert any(f.code == "NPU203" for f in got.get(14, ()))
    # the same code outside a test is not known to stay on the host
    assert any(f.code == "NPU202" for f in findings_by_line(engine, EXPORT_ST, "pkg/export.py").get(9, ()))


BENCH = """\
    import torch
    from transformers import AutoModel


    def run_transformer_autocast_bf16(model_path, prompts):
        model = AutoModel.from_pretrained(model_path, torch_dtype=torch.bfloat16, trust_remote_code=True)
        with torch.inference_mode(), torch.autocast("cpu"):
            for p in prompts:
                model.generate(p)


    def run_speculative_cpu(model_path, prompts):
        model = AutoModel.from_pretrained(model_path, torch_dtype=torch.bfloat16)
        for p in prompts:
            model.generate(p)


    def run_transformer_gpu(model_path, prompts):
        model = AutoModel.from_pretrained(model_path, torch_dtype=torch.bfloat16).to("xpu")
        for p in prompts:
            model.generate(p.to("xpu"))
    """


def test_cpu_paths_hold_host_values(engine):
    got = findings_by_line(engine, BENCH, "bench/run.py")
    assert not [f for f in got.get(6, ()) + got.get(13, ()) if f.category == "precision"]
    assert any(f.code == "NPU201" for f in got.get(19, ()))


CONVERTER = """\
    import torch

    from .types import DataType


    def _ge_dtype_to_torch_dtype(dtype):
        if dtype == DataType.DT_FLOAT:
            return torch.float32
        if dtype == DataType.DT_FLOAT16:
            return torch.float16
        if dtype == DataType.DT_BF16:
            return torch.bfloat16
        if dtype == DataType.DT_FLOAT8_E4M3FN:
            return torch.float8_e4m3fn
        if dtype == DataType.DT_FLOAT8_E8M0:
            if hasattr(torch, "float8_e8m0fnu"):
                return torch.float8_e8m0fnu
            return torch.uint8
        raise RuntimeError(f"Unsupported ge type {dtype}")


    def cast_for_kernel(x, fp8):
        if fp8:
            return x.to(torch.float8_e4m3fn)
        return x
    """


def test_dtype_converter_chain_chooses_nothing(engine):
    got = findings_by_line(engine, CONVERTER, "pkg/ge_graph.py")
    assert not [f for line in range(6, 20) for f in got.get(line, ()) if f.category == "precision"]
    assert any(f.code == "NPU203" for f in got.get(24, ()))


MOCK_TEST = """\
    import torch

    NUM_GPUS = 0


    def test_patch_syncs_before_copy(monkeypatch):
        events = []
        monkeypatch.setattr(torch.cuda, "synchronize", lambda: events.append("sync"))
        run_patched_copy()
        assert events == ["sync"]


    def run_patched_copy():
        torch.cuda.synchronize()
    """


def test_mock_of_torch_cuda_is_no_cuda_call(engine):
    got = findings_by_line(engine, MOCK_TEST, "tests/test_patch.py")
    assert not got.get(8)
    assert any(f.code == "NPU002" for f in got.get(14, ()))


PATTERN = """\
    import functools

    import torch
    from torch._subclasses.fake_tensor import FakeTensorMode


    def register_bmm_transpose(pattern_pass_manager, search_fn, replace_fn):
        fake_mode = FakeTensorMode()
        with fake_mode:
            example = functools.partial(torch.empty, (1, 1, 1), dtype=torch.float16)
            pattern_pass_manager.register_pattern(search_fn=search_fn, replace_fn=replace_fn,
                                                  example_inputs=(example(), example()))
        weight = torch.empty(4, 4, dtype=torch.float16)
        return weight
    """


def test_fake_tensor_mode_example_inputs_are_not_device_compute(engine):
    got = findings_by_line(engine, PATTERN, "pkg/patterns/bmm.py")
    assert not [f for f in got.get(10, ()) if f.category == "precision"]
    assert any(f.code == "NPU202" for f in got.get(13, ()))


REQUIRE = """\
    import pytest
    import torch


    def _require_cuda_kernels(monkeypatch):
        if not torch.cuda.is_available():
            pytest.skip("CUDA is required for the kernel diff tests")
        monkeypatch.setenv("KERNELS_PRECOMPILE", "0")


    def _seed_helper():
        if not torch.cuda.is_available():
            return
        torch.cuda.manual_seed(0)


    def test_backward_diff(monkeypatch):
        _require_cuda_kernels(monkeypatch)
        torch.cuda.set_device(0)
        x = torch.randn(8, 8, device="cuda", dtype=torch.bfloat16)


    def test_forward_diff():
        _seed_helper()
        torch.cuda.set_device(0)
    """


def test_helper_that_skips_without_cuda_gates_the_rest_of_the_test(engine):
    got = findings_by_line(engine, REQUIRE, "tests/test_kernels.py")
    assert {f.severity for f in got[19] if f.code == "NPU002"} == {"warning"}
    # a helper that only returns leaves the test running: still an error
    assert {f.severity for f in got[25] if f.code == "NPU002"} == {"error"}
    # like a test mark, the helper keeps the test's own dtype choice as a hint
    assert any(f.code == "NPU201" for f in got.get(20, ()))


GGML_CONVERT = """\
    from dataclasses import dataclass

    import numpy as np


    @dataclass(frozen=True)
    class UnquantizedDataType:
        name: str


    DT_F16 = UnquantizedDataType('F16')
    DT_BF16 = UnquantizedDataType('BF16')
    DATA_TYPE_TO_NUMPY = {DT_BF16: np.dtype(np.uint16), DT_F16: np.dtype(np.float16)}


    def choose(args):
        return "bf16" if args.bf16 else "f32"
    """


def test_a_data_type_constant_names_a_format(engine):
    got = findings_by_line(engine, GGML_CONVERT, "pkg/utils/convert_util.py")
    assert not [f for line in (11, 12) for f in got.get(line, ()) if f.category == "precision"]
    assert any(f.code == "NPU201" for f in got.get(17, ()))      # a choice between formats is still one
