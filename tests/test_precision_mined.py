"""Classes mined from the m11b tuning sample (bench/precision/tuned_m11b: ChatLearn, FastVideo,
intel-extension-for-pytorch, Pai-Megatron-Patch, MiniCPM-V), each on code shaped like the tree it came from."""
from __future__ import annotations

import ast
import textwrap

import pytest

from auditor.rules import load_rules
from auditor.static.context import MAX_FOLDED, build_context
from auditor.static.engine import StaticEngine
from static_snippets import findings_by_line as _by_line


@pytest.fixture(scope="module")
def engine():
    return StaticEngine(load_rules())


# MiniCPM-V eval_mm/vlmevalkit/vlmeval/vlm/minicpm_v.py: one prompt rebuilt by concatenation in every method.
# Folding every possible value multiplied the set at each assignment (19 GB before the audit was stopped).
_PROMPTS = '''
import torch

class MiniCPM_V:
    def build_prompt(self, line, dataset=None):
        system_prompt = self.options_system_prompt + "\\nPlease just indicate your choice."
        prompt = ""
        if listinstr(["MMMU"], dataset):
            system_prompt = self.wo_options_system_prompt
            prompt = system_prompt + "\\n" + prompt
        elif listinstr(["MME"], dataset):
            system_prompt = "Answer the question with Yes or No. " + self.wo_options_system_prompt
            prompt = system_prompt + "\\n" + prompt
        else:
            prompt = "Study the image carefully. " + prompt
        return prompt
'''


def test_folded_strings_stay_bounded_on_prompts_rebuilt_by_concatenation(engine):
    methods = _PROMPTS.split("    def ", 1)[1]
    src = _PROMPTS.split("    def ", 1)[0] + "".join(
        "    def " + methods.replace("build_prompt", f"build_prompt_{i}").replace('"Study', f'"Step {i}. Study')
        for i in range(12))
    ctx = build_context(ast.parse(src))
    assert 0 < len(ctx.constants["prompt"]) <= 12 * (MAX_FOLDED + 2)
    assert all(len(v) < 2000 for v in ctx.constants["prompt"])
    # the file is still audited: the CUDA line after the prompts is reported
    src += "\nmodel = torch.nn.Linear(2, 2).cuda()\n"
    by_line = _by_line(engine, src)
    assert [(f.code, f.severity) for f in by_line[len(src.splitlines())]] == [("NPU001", "error")]


# intel-extension-for-pytorch examples/.../torchrec/distributed/test_utils/multi_process.py: the test harness
# compares its own `backend` argument with "nccl"; the runtime's `dist.get_backend()` answers "hccl" on Ascend.
def test_a_user_backend_compared_with_nccl_is_a_warning_the_runtime_backend_an_error(engine):
    by_line = _by_line(engine, '''\
        import torch
        import torch.distributed as dist

        class MultiProcessContext:
            def __init__(self, rank, world_size, backend="gloo"):
                self.backend = backend
                if backend == "nccl":
                    device = torch.device(f"cpu:{rank}")

        def all_reduce_fast(t):
            if dist.get_backend() == "nccl":
                return t
            dist.init_process_group(backend="nccl")
        ''')
    assert [(f.code, f.severity) for f in by_line[7]] == [("NPU101", "warning")]
    assert [(f.code, f.severity) for f in by_line[11]] == [("NPU101", "error")]
    assert [(f.code, f.severity) for f in by_line[13]] == [("NPU101", "error")]


# intel-extension-for-pytorch: csrc/ registers the `torch_ipex` namespace (TORCH_LIBRARY_FRAGMENT), the Python
# package (intel_extension_for_pytorch) and its tests call torch.ops.torch_ipex.*: the project's own op library.
def test_an_op_namespace_the_tree_registers_in_cpp_is_its_own_library(tmp_path):
    from auditor.runner import run_static

    files = {
        "csrc/cpu/aten/Nms.cpp": """\
            #include <torch/library.h>
            namespace {
            TORCH_LIBRARY_FRAGMENT(torch_ipex, m) {
              m.def("nms(Tensor dets, Tensor scores, float threshold, bool sorted) -> Tensor");
            }
            }  // namespace
            """,
        "intel_extension_for_pytorch/__init__.py": "",
        "intel_extension_for_pytorch/optim/_functional.py": """\
            import torch

            def lars_step(params, grads, momentum_buffer_list, lr):
                for i, param in enumerate(params):
                    momentum_buffer_list[i] = torch.ops.torch_ipex.lars_fused_step(param, grads[i], lr)
            """,
        "tests/cpu/test_nms.py": """\
            import torch

            def nms(dets, scores, threshold, sorted=False):
                return torch.ops.torch_ipex.nms(dets, scores, threshold, sorted)

            def roi(x, boxes):
                return torch.ops.vllm_flash_attn_c.fwd(x, boxes)
            """,
    }
    for rel, src in files.items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(src))
    run = run_static([tmp_path], jobs=1)
    found = {(r.path.replace("\\", "/").split("/")[-1], f.line, f.symbol) for r in run.results for f in r.findings
             if f.name == "custom-torch-ops"}
    assert not [s for *_, s in found if s.startswith("torch.ops.torch_ipex")]
    # a namespace the tree does not register is still another library's
    assert ("test_nms.py", 7, "torch.ops.vllm_flash_attn_c.fwd") in found


# intel-extension-for-pytorch's torchrec copy: `@unittest.skipIf(torch.cuda.device_count() <= 1, ...)` skips the
# test on Ascend (it selects where the test runs: a warning); the test's body then runs only with two CUDA devices,
# so its queries do not fail on an Ascend machine either (a warning since heldout18's nncf rows, p15a).
def test_cuda_queries_in_test_skip_decorators_are_warnings(engine):
    by_line = _by_line(engine, '''\
        import unittest
        import pytest
        import torch

        class ShardedEmbeddingBagCollectionTest(unittest.TestCase):
            @unittest.skipIf(
                torch.cuda.device_count() <= 1,
                "Not enough GPUs, this test requires at least two GPUs",
            )
            def test_sharding(self):
                world_size = torch.cuda.device_count()

        @pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a GPU")
        def test_kernel():
            pass
        ''')
    assert [(f.code, f.severity) for f in by_line[7]] == [("NPU002", "warning")]
    assert [(f.code, f.severity) for f in by_line[11]] == [("NPU002", "warning")]
    assert [(f.code, f.severity) for f in by_line[13]] == [("NPU002", "warning")]


# intel-extension-for-pytorch tests/cpu/test_autocast.py: a dtype passed straight to an assertion is checked, not
# chosen; a dtype chosen inside the asserted expression is still a choice.
def test_a_dtype_passed_to_an_assertion_is_checked_not_chosen(engine):
    by_line = _by_line(engine, '''\
        import torch
        import unittest

        class TestAutocast(unittest.TestCase):
            def test_grad_dtypes(self):
                for i in range(0, 26):
                    self.assertEqual(ly1[i].grad.dtype, torch.float)
                    self.assertEqual(ly1_bf16[i].grad.dtype, torch.bfloat16)
                torch.testing.assert_close(out.dtype, torch.float16)
                self.assertEqual(model(x.to(torch.bfloat16)).shape, ref.shape)
        ''')
    assert not [f for f in by_line.get(8, []) + by_line.get(9, []) if f.category == "precision"]
    assert [f.code for f in by_line[10] if f.category == "precision"] == ["NPU201"]


# intel-extension-for-pytorch tests/cpu/test_weight_prepack.py: random sizes drawn on the CPU in a loop.
def test_item_on_a_tensor_made_on_the_host_in_a_loop_is_no_device_sync(engine):
    by_line = _by_line(engine, '''\
        import torch

        def _test_conv(options, groups, device):
            for (bias, dilation) in options:
                N = torch.randint(3, 10, (1,)).item()
                C = torch.randint(3, 10, (1,), device=device).item() * groups
                loss = model(x).sum().item()
        ''')
    assert not [f for f in by_line.get(5, []) if f.code == "NPU703"]
    assert [f.code for f in by_line[6] if f.code == "NPU703"] == ["NPU703"]
    assert [f.code for f in by_line[7] if f.code == "NPU703"] == ["NPU703"]


# Pai-Megatron-Patch toolkits/model_checkpoints_convertor/llama/hf2mcore.py: torch.cuda.OutOfMemoryError is
# torch.OutOfMemoryError, which torch_npu raises for an NPU out of memory: the handler works on Ascend (info);
# the .cuda() before it is still the error.
def test_torch_cuda_out_of_memory_error_is_torchs_own_class(engine):
    by_line = _by_line(engine, '''\
        import torch

        def check_hf_mg_forward(mgmodel, input_ids):
            try:
                mgmodel.cuda()
                mgmodel(input_ids=input_ids)
            except torch.cuda.OutOfMemoryError:
                print("oom for megatron model forward")
        ''')
    assert [(f.code, f.severity) for f in by_line[5]] == [("NPU001", "error")]
    assert [(f.code, f.severity) for f in by_line[7]] == [("NPU002", "info")]
