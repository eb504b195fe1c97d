"""Precision fixes of t11j (session 10): false classes of every earlier precision draw (heldout .. heldout7, all
TUNED ON), fixed by structure. The code below is written afresh in the shape of the classes, not copied from the
bench trees; each fix has a control that keeps the finding.

- a dtype default of a parameter the function never reads (a backend builder's `out_dtype=torch.bfloat16` that it
  does not pass on): chooses nothing;
- a torch dtype in a test function that keeps its tensors on the host (no placement in it or in the file's helpers
  it calls, no device parameter, no worker processes), in a test module whose other tests run on the device.
"""
from __future__ import annotations

import pytest

from auditor.rules import load_rules
from auditor.static.engine import StaticEngine
from tests.static_snippets import line_of as _line, findings_by_line, findings_in_tree, write_tree


@pytest.fixture(scope="module")
def engine():
    return StaticEngine(load_rules())


def _precision(found: dict, line: int) -> list[str]:
    return [f.code for f in found.get(line, []) if f.category == "precision"]


# -- 1. a dtype default the function never reads ---------------------------------------------------------------

BUILDERS = """\
    import torch

    from .moe_impl import FusedMoEImpl


    class FusedMoEBuilder:

        @staticmethod
        def build(top_k: int,
                  num_experts: int,
                  renormalize: bool = False,
                  out_dtype: torch.dtype = torch.bfloat16,
                  max_tokens: int = 128):
            return FusedMoEImpl(top_k=top_k, num_experts=num_experts, renormalize=renormalize,
                                max_tokens=max_tokens)


    class LinearW8A8Builder:

        @staticmethod
        def build(in_features: int, out_features: int, out_dtype: torch.dtype = torch.float16):
            weight = torch.empty(out_features, in_features, dtype=torch.int8)
            return weight, out_dtype


    def make_cache(num_blocks, block_size, cache_dtype=torch.bfloat16, **kwargs):
        return torch.empty(num_blocks, block_size, dtype=cache_dtype, **kwargs)
"""


def test_unread_dtype_default_chooses_nothing(engine):
    found = findings_by_line(engine, BUILDERS, "pkg/backends/moe.py")
    assert _precision(found, 12) == []                  # out_dtype never read by build()


def test_read_dtype_default_keeps_its_hint(engine):
    found = findings_by_line(engine, BUILDERS, "pkg/backends/moe.py")
    assert _precision(found, 21) == ["NPU202"]          # out_dtype returned: the default reaches the caller
    assert _precision(found, 26) == ["NPU201"]          # cache_dtype makes the tensor


ABSTRACT = """\
    import abc

    import torch


    class AttentionBackend(abc.ABC):

        @abc.abstractmethod
        def forward(self, query, key, value, softmax_dtype=torch.bfloat16):
            raise NotImplementedError
"""


def test_interface_default_keeps_its_hint(engine):
    """An abstract signature's default is read by its implementations: kept."""
    found = findings_by_line(engine, ABSTRACT, "pkg/attention/base.py")
    assert _precision(found, 9) == ["NPU201"]


# -- 2. host-only test functions in a module whose other tests use the device ----------------------------------

MIXED_TESTS = """\
    import unittest

    import torch

    from mylib.ops import fused_router, npu_grouped_matmul


    def _golden(x, w):
        return x.float() @ w.float()


    def _run_on_npu(x, w):
        return npu_grouped_matmul(x.npu(), w.npu())


    class TestRouter(unittest.TestCase):

        def test_router_top2_weights(self):
            logits = torch.randn(8, 16, dtype=torch.bfloat16)
            compiled = torch.compile(fused_router, backend="aot_eager")
            weights, ids = compiled(logits, top_k=2)
            self.assertEqual(weights.dtype, torch.bfloat16)
            expected = _golden(logits, torch.eye(16, dtype=torch.bfloat16))
            self.assertEqual(expected.shape, (8, 16))

        def test_grouped_matmul_on_npu(self):
            x = torch.randn(16, 32, dtype=torch.bfloat16)
            w = torch.randn(32, 64, dtype=torch.bfloat16)
            out = _run_on_npu(x, w)
            self.assertEqual(out.shape, (16, 64))

        def test_cast_on_device(self, device="npu:0"):
            x = torch.randn(4, 4, dtype=torch.float16)
            self.assertEqual(x.to(device).dtype, torch.float16)

        def test_fp16_on_device(self):
            x = torch.ones(4, 4).to(torch.float16).npu()
            self.assertTrue(torch.equal(x.cpu(), torch.ones(4, 4, dtype=torch.float16)))
"""


def test_host_test_function_drops_dtype_hints(engine):
    found = findings_by_line(engine, MIXED_TESTS, "tests/ut/ops/test_router.py")
    assert _precision(found, 19) == []          # router test under aot_eager: logits stay on the host
    assert _precision(found, 23) == []


def test_device_tests_keep_dtype_hints(engine):
    found = findings_by_line(engine, MIXED_TESTS, "tests/ut/ops/test_router.py")
    assert _precision(found, 27) == ["NPU201"]  # the helper it calls moves them to the NPU
    assert _precision(found, 33) == ["NPU202"]  # a device parameter
    assert _precision(found, 37) == ["NPU202"]  # placed on the NPU in the same test


SPAWNED = """\
    import torch
    import torch.multiprocessing as mp

    from mylib.collectives import all_gather_worker


    def test_all_gather_bf16():
        inputs = [torch.randn(128, dtype=torch.bfloat16) for _ in range(8)]
        mp.spawn(all_gather_worker, args=(inputs,), nprocs=8)


    def test_all_gather_single_device():
        x = torch.randn(128, dtype=torch.bfloat16, device="npu")
        assert all_gather_worker(0, [x]) is None
"""


def test_spawned_inputs_keep_dtype_hints(engine):
    """Inputs handed to worker processes (which place them on their own device) are not host values."""
    found = findings_by_line(engine, SPAWNED, "tests/dist/test_all_gather.py")
    assert _precision(found, 8) == ["NPU201"]


def test_same_code_outside_tests_is_kept(engine):
    """Only test functions are read as host scopes: a library function's device-less tensor may be moved by its
    caller."""
    src = MIXED_TESTS.replace("def test_router_top2_weights", "def check_router_top2_weights")
    found = findings_by_line(engine, src, "mylib/checks.py")
    assert _precision(found, 19) == ["NPU201"]


# -- 3. host syncs on tensors made on the host -------------------------------------------------------------------

EPISODES = """\
    import torch


    def get_episode_scores(batch):
        scores = [float(s) for s in batch["episode_scores"]]
        return torch.tensor(scores, dtype=torch.float32)


    def split_sizes(total, parts):
        sizes = [total // parts] * parts
        sizes[-1] += total - sum(sizes)
        return torch.tensor(sizes)


    def val_loop(batches, model, device):
        metrics = []
        for batch in batches:
            metrics.append(get_episode_scores(batch).mean().item())
            picks = torch.linspace(0, len(batch["ids"]) - 1, 4).long()
            first = picks.tolist()[0]
            for size in split_sizes(len(batch["ids"]), 4).tolist():
                metrics.append(size + first)
            logits = model(batch["input_ids"].to(device))
            metrics.append(logits.argmax(-1).float().mean().item())
            moved = torch.tensor(metrics).to(device)
            metrics.append(moved.sum().item())
            on_device = torch.zeros(4, device=device)
            metrics.append(on_device.sum().item())
        return metrics
"""


def test_host_sync_on_host_made_tensors_dropped(engine):
    found = findings_by_line(engine, EPISODES, "pkg/pipeline/validation.py")
    for line in (18, 20, 21):
        assert not [f for f in found.get(line, []) if f.code == "NPU703"], line


def test_host_sync_on_device_tensors_kept(engine):
    found = findings_by_line(engine, EPISODES, "pkg/pipeline/validation.py")
    for line in (24, 26, 28):
        assert [f for f in found.get(line, []) if f.code == "NPU703"], line


# -- 4. operator namespaces the tree registers itself ------------------------------------------------------------

CONVERTER_TESTS = """\
    import unittest

    import torch
    from torch.library import Library, impl

    from mycompiler.converters import convert_graph


    class ConverterErrorTest(unittest.TestCase):

        def test_scatter_converter_missing(self):
            m = Library("custom_scatter", "DEF")
            m.define("my_scatter(Tensor self, Tensor indices, Tensor updates) -> Tensor")

            @impl(m, "my_scatter", "Meta")
            def my_scatter_meta(self, indices, updates):
                return torch.empty_like(self)

            with self.assertRaises(RuntimeError):
                convert_graph(lambda x, i, u: torch.ops.custom_scatter.my_scatter(x, i, u))

        def test_inplace_converter_missing(self):
            m = Library("custom_inplace", "DEF")
            m.define("my_op_inplace(Tensor(a!) self, Tensor updates) -> Tensor")

            @impl(m, "my_op_inplace", "Meta")
            def my_op_inplace_meta(self, updates):
                return self

            with self.assertRaises(RuntimeError):
                convert_graph(lambda x, y: torch.ops.custom_inplace.my_op_inplace(x, y))

        def test_vendor_op(self):
            convert_graph(lambda x: torch.ops.vendor_ext.fused_gelu(x))
"""

REGISTRY = """\
    import torch
    from torch.library import Library, impl

    from .vendor import dispatch_key

    _libraries = {}


    def register_custom_op(qualname):
        def inner(func):
            lib_name, func_name = qualname.split("::")
            torch._custom_ops.custom_op(qualname)(func)
            if lib_name not in _libraries:
                _libraries[lib_name] = Library(lib_name, "IMPL")
            impl(_libraries[lib_name], func_name, dispatch_key)(func)
            namespace = getattr(torch.ops, lib_name)
            return getattr(namespace, func_name)
        return inner


    def lookup(ns_name, op_name):
        return getattr(getattr(torch.ops, ns_name), op_name)
"""


def test_own_ops_of_several_libraries_in_one_file(tmp_path):
    found = findings_in_tree(write_tree(tmp_path, {"tests/st/test_converter_errors.py": CONVERTER_TESTS}))
    codes = {(line, code) for (_, line, code) in found}
    assert (_line(CONVERTER_TESTS, "torch.ops.custom_scatter"), "NPU380") not in codes    # defined in the test
    assert (_line(CONVERTER_TESTS, "torch.ops.custom_inplace"), "NPU380") not in codes    # a second library
    assert (_line(CONVERTER_TESTS, "torch.ops.vendor_ext"), "NPU380") in codes            # an outside namespace


def test_getattr_of_a_namespace_the_file_registers(tmp_path):
    found = findings_in_tree(write_tree(tmp_path, {"mylib/graph/custom_op.py": REGISTRY}))
    codes = {(line, code) for (_, line, code) in found}
    assert (_line(REGISTRY, "getattr(torch.ops, lib_name)"), "NPU380") not in codes   # registered just above
    assert (_line(REGISTRY, "getattr(torch.ops, ns_name)"), "NPU380") in codes        # the caller's name: unknown


# -- 5. a Triton compiler tree with an Ascend backend folder -----------------------------------------------------

TRITON_TREE = {
    "python/triton/__init__.py": """\
        from .runtime import jit, autotune
        from . import language
        """,
    "python/triton/runtime/__init__.py": """\
        from .jit import jit
        from .autotuner import autotune
        """,
    "python/triton/language/__init__.py": """\
        from .core import load, store, program_id, arange
        """,
    "python/test/unit/language/test_add.py": """\
        import pytest
        import torch
        import triton
        import triton.language as tl


        @triton.jit
        def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
            pid = tl.program_id(0)
            offs = pid * BLOCK + tl.arange(0, BLOCK)
            mask = offs < n
            tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


        @pytest.mark.parametrize("n", [98432])
        def test_add(n, device):
            x = torch.rand(n, device=device)
            y = torch.rand(n, device=device)
            out = torch.empty_like(x)
            add_kernel[(triton.cdiv(n, 1024),)](x, y, out, n, BLOCK=1024)
            torch.testing.assert_close(out, x + y)
        """,
}

ASCEND_BACKEND = {
    "third_party/ascend/backend/compiler.py": """\
        from triton.backends.compiler import BaseBackend, GPUTarget
        from triton._C.libtriton import ir, passes


        class AscendBackend(BaseBackend):

            @staticmethod
            def supports_target(target: GPUTarget):
                return target.backend == "npu"
        """,
}


def _kernel_severities(found: dict) -> set[str]:
    return {sev for (path, _, code), sev in found.items() if code == "NPU373" and path.endswith("test_add.py")}


def test_triton_compiler_tree_with_ascend_backend_is_info(tmp_path):
    found = findings_in_tree(write_tree(tmp_path, {**TRITON_TREE, **ASCEND_BACKEND}))
    assert _kernel_severities(found) == {"info"}


def test_triton_compiler_tree_without_ascend_backend_keeps_warnings(tmp_path):
    found = findings_in_tree(write_tree(tmp_path, TRITON_TREE))
    assert "warning" in _kernel_severities(found)


# -- 6. device strings and CUDA variable names as data of a device-less test module ------------------------------

SCHEDULER_TESTS = """\
    import pytest

    from fleet.policies.selectors import ResourceFitSelector
    from fleet.schemas.workers import Worker, GPUDevice
    from fleet.utils.envs import sanitize_env


    def _worker(vendor, runtime):
        return Worker(name="w1", gpus=[GPUDevice(index=0, vendor=vendor, type=runtime, memory_total=80 << 30)])


    @pytest.mark.asyncio
    async def test_selects_nvidia_worker():
        selector = ResourceFitSelector(model_size=14 << 30)
        candidates = await selector.select([_worker("nvidia", "cuda"), _worker("ascend", "cann")])
        assert candidates[0].gpu_type == "cuda"


    @pytest.mark.parametrize("env, expected", [
        ({"CUDA_VISIBLE_DEVICES": "0", "FLEET_WORKER_ID": "1"}, {"CUDA_VISIBLE_DEVICES": "0"}),
    ])
    def test_sanitize_env_keeps_device_selection(env, expected):
        assert sanitize_env(env) == expected
"""


def _codes(found: dict) -> set[str]:
    return {f.code for fs in found.values() for f in fs}


def test_device_strings_in_deviceless_test_module_dropped(engine):
    found = findings_by_line(engine, SCHEDULER_TESTS, "tests/policies/test_resource_fit.py")
    assert not _codes(found) & {"NPU003", "NPU004"}


def test_device_strings_kept_where_tensors_or_processes_are(engine):
    # a module that imports torch AND builds a tensor in the test (t11t: importing torch alone places nothing, and a
    # test function that allocates nothing keeps its device strings as values: tests/test_precision_t11t.py)
    with_torch = SCHEDULER_TESTS.replace("import pytest\n", "import pytest\n    import torch\n").replace(
        "        assert candidates[0].gpu_type == \"cuda\"\n",
        "        assert candidates[0].gpu_type == \"cuda\"\n        torch.ones(2).to(candidates[0].gpu_type)\n")
    assert "import torch" in with_torch and "torch.ones(2)" in with_torch
    found = findings_by_line(engine, with_torch, "tests/policies/test_resource_fit.py")
    assert {"NPU003", "NPU004"} <= _codes(found)
    launching = SCHEDULER_TESTS.replace("import pytest\n", "import subprocess\n    import pytest\n")
    found = findings_by_line(engine, launching, "tests/policies/test_resource_fit.py")
    assert "NPU004" in _codes(found)
    found = findings_by_line(engine, SCHEDULER_TESTS, "fleet/policies/defaults.py")     # not a test module
    assert {"NPU003", "NPU004"} <= _codes(found)


PREFIXED = """\
    import pytest

    from utils.quantization_utils import quantization


    @pytest.mark.parametrize("model", ["Qwen/Qwen3-0.6B"])
    def test_quantization_awq(config, model):
        result, msg = quantization(config, model + "-awq", model, "awq", cuda_prefix="CUDA_VISIBLE_DEVICES=6")
        assert result, msg
"""


def test_env_prefix_for_a_helper_launch_kept(engine):
    """A device-less test module that hands a CUDA variable to a helper which starts the job keeps NPU004."""
    found = findings_by_line(engine, PREFIXED, "autotest/tools/quantization/test_quantization_awq.py")
    assert "NPU004" in _codes(found)


# -- 7. reduce ops named in a converter ---------------------------------------------------------------------------

REDUCE_CONVERTER = """\
    import torch
    import torch.distributed as dist


    def reduce_op_name(op):
        if op is torch.distributed.ReduceOp.SUM:
            return "sum"
        elif op is torch.distributed.ReduceOp.MAX:
            return "max"
        elif op is torch.distributed.ReduceOp.BXOR:
            return "bxor"
        raise ValueError(op)


    def reduce_op_of(name):
        if name == "sum":
            return dist.ReduceOp.SUM
        elif name == "min":
            return dist.ReduceOp.MIN
        elif name == "max":
            return dist.ReduceOp.MAX
        elif name == "bor":
            return dist.ReduceOp.BOR
        raise ValueError(name)


    def xor_checksum(t):
        dist.all_reduce(t, op=dist.ReduceOp.BXOR)
        return t
"""


def test_reduce_op_in_converter_dropped_call_kept(engine):
    found = findings_by_line(engine, REDUCE_CONVERTER, "mycompiler/converters/hcom_allreduce.py")
    npu106 = {line for line, fs in found.items() for f in fs if f.code == "NPU106"}
    assert _line(REDUCE_CONVERTER, "ReduceOp.BXOR:") not in npu106         # compared
    assert _line(REDUCE_CONVERTER, "return dist.ReduceOp.BOR") not in npu106   # an arm of a name -> op table
    assert _line(REDUCE_CONVERTER, "op=dist.ReduceOp.BXOR") in npu106      # a collective called with it


REMAP = """\
    import torch.distributed as dist
    from torch.distributed._functional_collectives import traceable_collective_remaps

    from .collectives import npu_all_to_all_patch, npu_all_gather_patch


    def adjust_remaps():
        traceable_collective_remaps.update({
            dist.distributed_c10d.all_to_all: npu_all_to_all_patch,
            dist.distributed_c10d.all_gather_into_tensor: npu_all_gather_patch,
        })


    def exchange(outputs, inputs, group):
        dist.distributed_c10d.all_to_all(outputs, inputs, group=group)
"""


def test_collective_as_remap_key_dropped_call_kept(engine):
    found = findings_by_line(engine, REMAP, "mycompiler/utils/adjust_remaps.py")
    npu108 = {line for line, fs in found.items() for f in fs if f.code == "NPU108"}
    assert _line(REMAP, "all_to_all: npu_all_to_all_patch") not in npu108
    assert _line(REMAP, "all_to_all(outputs") in npu108
