"""t11r (issue 11, tuned on heldout12): general mechanisms for the false classes read in heldout12's trees, each
tested on code written like the multi-backend trees that show it (docs/precision.md, "t11r")."""
from __future__ import annotations

import pytest

from auditor.rules import load_rules
from auditor.static.engine import StaticEngine
from static_snippets import findings_by_line as _findings
from static_snippets import findings_in_tree, write_tree


@pytest.fixture(scope="module")
def engine():
    return StaticEngine(load_rules())


def _codes(by_line: dict, line: int) -> dict[str, str]:
    return {f.code: f.severity for f in by_line.get(line, ())}


def test_a_flag_for_cuda_or_another_backend_gates_like_cuda(engine):
    # a web UI's device module: one flag for "CUDA or Intel XPU", then `if not cuda_ok: return` and `if cuda_ok:`
    src = """\
        import contextlib
        import torch

        cuda_ok = torch.cuda.is_available() or (hasattr(torch, 'xpu') and torch.xpu.is_available())
        backend = 'cuda' if cuda_ok else 'cpu'

        def set_cuda_tunable(opts):
            if not cuda_ok:
                return
            torch.cuda.tunable.enable(True)
            if torch.cuda.tunable.is_enabled():
                print(torch.cuda.tunable.get_max_tuning_iterations())

        def autocast(disable=False):
            if disable:
                return contextlib.nullcontext()
            if cuda_ok:
                return torch.autocast("cuda")
            return torch.autocast("cpu")
        """
    by_line = _findings(engine, src)
    # the flag is the finding that gates (an error); what only runs behind it is a warning
    assert "error" in _codes(by_line, 4).values()
    for line in (10, 11, 12, 18):
        assert by_line.get(line) and all(f.severity != "error" for f in by_line[line]), (line, by_line.get(line))
    assert _codes(by_line, 10).get("NPU002") == "warning"


def test_a_flag_mixing_cuda_with_the_npu_is_no_cuda_gate(engine):
    # `cuda or npu` holds on Ascend: code behind it runs there, its CUDA calls stay errors
    src = """\
        import torch

        accel_ok = torch.cuda.is_available() or torch.npu.is_available()

        def warm():
            if not accel_ok:
                return
            torch.cuda.synchronize()
        """
    by_line = _findings(engine, src)
    assert _codes(by_line, 8).get("NPU002") == "error"


def test_config_tables_read_only_by_a_cuda_or_xpu_test_class_are_gated(engine):
    # a quantisation library's safetensors test: a module-level list of configs read only through @parametrize by
    # a TestCase skipped without CUDA or XPU
    src = """\
        import unittest
        import torch
        from torch.testing._internal.common_utils import TestCase, instantiate_parametrized_tests, parametrize
        from torchao.prototype.mx_formats.inference_workflow import MXDynamicActivationMXWeightConfig
        from torchao.quantization import Float8DynamicActivationFloat8WeightConfig, Int8WeightOnlyConfig, PerRow

        _ALL_TEST_CONFIGS = [
            (Float8DynamicActivationFloat8WeightConfig(granularity=PerRow()), False),
            (Int8WeightOnlyConfig(version=2), False),
        ]
        if not torch.xpu.is_available():
            _ALL_TEST_CONFIGS += [
                (MXDynamicActivationMXWeightConfig(), False),
            ]
        _TEST_CONFIGS = _ALL_TEST_CONFIGS


        @unittest.skipIf(
            not torch.cuda.is_available() and not torch.xpu.is_available(),
            "Need CUDA or XPU available",
        )
        class TestSafeTensors(TestCase):
            @parametrize("config, act_pre_scale", _TEST_CONFIGS)
            def test_safetensors(self, config, act_pre_scale=False):
                model = torch.nn.Sequential(torch.nn.Linear(128, 256, dtype=torch.bfloat16, device="cuda"))
                quantize_(model, config)


        instantiate_parametrized_tests(TestSafeTensors)
        """
    by_line = _findings(engine, src)
    entries = [f for n in (8, 13) for f in by_line.get(n, ())]
    assert entries and all(f.severity != "error" for f in entries), entries


def test_a_table_read_outside_the_gate_keeps_its_errors(engine):
    src = """\
        import unittest
        import torch
        from torchao.prototype.mx_formats.inference_workflow import MXDynamicActivationMXWeightConfig

        CONFIGS = [MXDynamicActivationMXWeightConfig()]

        def quantize_all(model):
            for config in CONFIGS:
                quantize_(model, config)

        @unittest.skipIf(not torch.cuda.is_available(), "Need CUDA")
        class TestQuant(unittest.TestCase):
            def test_it(self):
                for config in CONFIGS:
                    quantize_(torch.nn.Linear(8, 8).cuda(), config)
        """
    by_line = _findings(engine, src)
    assert "error" in _codes(by_line, 5).values(), by_line.get(5)


def test_a_gate_that_raises_into_a_fallback_is_a_warning(engine):
    # an RL trainer's fused logprob: the Triton path raises ImportError without CUDA, the handler warns and the
    # pure-PyTorch path runs
    src = """\
        import warnings
        import torch
        from trainer.kernels.fused_linear_logprob_triton import TRITON_AVAILABLE, FusedLinearLogprobTriton
        from trainer.kernels.fused_linear_logprob_triton import is_cuda_available


        def fused_lm_head_logprob(hidden, weight, target, backend="torch"):
            if backend == "triton":
                try:
                    if not (TRITON_AVAILABLE and is_cuda_available):
                        raise ImportError("triton is not installed or no CUDA device is available")
                    return FusedLinearLogprobTriton.apply(hidden, weight, target)
                except (ImportError, RuntimeError) as e:
                    warnings.warn(f"triton backend unavailable ({e}); falling back to torch", stacklevel=2)
            return torch.log_softmax(hidden @ weight.t(), dim=-1).gather(-1, target.unsqueeze(-1))
        """
    by_line = _findings(engine, src)
    assert _codes(by_line, 10).get("NPU030") == "warning", by_line.get(10)
    # a handler that re-raises leaves no fallback: the gate stays an error
    strict = src.replace('warnings.warn(f"triton backend unavailable ({e}); falling back to torch", stacklevel=2)',
                         "raise")
    assert _codes(_findings(engine, strict), 10).get("NPU030") == "error"


_EXPORT = """\
    import torch
    from torch.export import Dim, export
    {lowering}


    class M(torch.nn.Module):
        def forward(self, x):
            return torch.nn.functional.softmax(x, dim=-1)


    args = (torch.rand((2, 10)),)
    ep = export(M(), args=args, dynamic_shapes=({{0: Dim("batch")}},))
    """


def test_export_for_stablehlo_is_not_asked_against_the_npu_list():
    # an XLA exporter test: torch.export on CPU inputs, lowered to StableHLO; the same export with no other
    # toolchain's lowering in the file keeps the support-list hint (the program may run on the NPU)
    from auditor.coverage import unsupported_api_details
    from auditor.target import Target

    engine = StaticEngine(load_rules(), product="a2", coverage_apis=unsupported_api_details(Target("v2.15", "a2")))
    codes = {"NPU501", "NPU502"}
    plain = _findings(engine, _EXPORT.format(lowering="import numpy as np"), "test/export/test_softmax.py")
    assert [f for f in plain.get(12, ()) if f.code in codes], plain
    lowered = _findings(engine, _EXPORT.format(lowering="from torch_xla.stablehlo import exported_program_to_stablehlo"),
                        "test/stablehlo/test_softmax.py")
    assert not [f for fs in lowered.values() for f in fs if f.code in codes], lowered


def test_calls_of_the_trees_own_cuda_named_helpers(tmp_path):
    # a voice-conversion app: a CUDA-graph module whose helpers hold the torch.cuda calls, a model whose
    # set_cuda_attention_backend only stores a name, a dataclass of IPC handle strings, and their callers
    root = write_tree(tmp_path, {
        "tools/cuda_graph.py": """\
            import torch

            def _device_type(device):
                return str(device).split(":", 1)[0].lower()

            def _cuda_device(device):
                parsed = torch.device(device)
                if parsed.index is None:
                    parsed = torch.device("cuda", torch.cuda.current_device())
                return parsed

            def detect_cuda_graph_support(device):
                if _device_type(device) != "cuda" or not torch.cuda.is_available():
                    return False
                cuda_device = _cuda_device(device)
                graph = torch.cuda.CUDAGraph()
                return graph is not None and cuda_device is not None

            def cuda_graph_enabled(device):
                return detect_cuda_graph_support(device)

            def run_cuda_graph(owner, function, *inputs):
                if not inputs or not cuda_graph_enabled(inputs[0].device):
                    return function(*inputs)
                return function(*inputs)
            """,
        "models/transformer.py": """\
            import torch
            import torch.nn.functional as F

            def normalize_attention_backend(backend=None):
                return str(backend or "sdpa").lower()

            class Attention(torch.nn.Module):
                def set_cuda_attention_backend(self, backend=None):
                    self.attention_backend = normalize_attention_backend(backend)

                def forward(self, q, k, v):
                    return F.scaled_dot_product_attention(q, k, v)
            """,
        "weight_sync/requests.py": """\
            from dataclasses import dataclass
            from typing import Dict, List

            @dataclass
            class CudaIpcWeightUpdateRequest:
                names: List[str]
                sizes: List[int]
                ipc_handles: Dict[str, str]
            """,
        "infer/separator.py": """\
            import torch
            from models.transformer import Attention
            from tools.cuda_graph import run_cuda_graph
            from weight_sync.requests import CudaIpcWeightUpdateRequest

            def load(backend):
                module = Attention()
                module.set_cuda_attention_backend(backend)
                request = CudaIpcWeightUpdateRequest(names=["w"], sizes=[4], ipc_handles={"gpu-0": "h"})
                return module, request

            def infer(model, mel):
                return run_cuda_graph(model, lambda x: model(x), mel)
            """,
    })
    found = findings_in_tree(root)
    helper_calls = {(p, n) for (p, n, c) in found if c == "NPU039"}
    # nothing reported in the bodies: the calls add nothing
    assert ("infer/separator.py", 8) not in helper_calls and ("infer/separator.py", 9) not in helper_calls
    # `_cuda_device(device)` behind the helper's own CUDA gate: the gate is the finding
    assert ("tools/cuda_graph.py", 15) not in helper_calls
    # run_cuda_graph calls a helper whose body captures CUDA graphs: its callers keep the hint
    assert ("infer/separator.py", 13) in helper_calls


def test_an_mlx_branch_and_module_hold_no_dtype_hints(engine):
    src = """\
        import torch

        def resolve_device(device, inference_params=None):
            inference_params = dict(inference_params or {})
            if device == "mlx":
                if not torch.backends.mps.is_available():
                    raise RuntimeError("device='mlx' requires Apple Silicon")
                inference_params.setdefault("mps_model_compute_dtype", "float16")
                return "mps", inference_params
            model_dtype = torch.float16
            return device, inference_params
        """
    by_line = _findings(engine, src, "tools/separator.py")
    assert not by_line.get(8), by_line.get(8)
    assert _codes(by_line, 10).get("NPU202") == "info"
    mlx_module = """\
        import torch

        def mlx_forward(module, raw_audio, dtype=torch.float16):
            import mlx.core as mx
            return mx.array(raw_audio.numpy())
        """
    assert not _findings(engine, mlx_module, "modules/scnet_mlx.py").get(3)


def test_olive_pass_use_gpu_is_no_scheduler_request(tmp_path):
    import json

    root = write_tree(tmp_path, {
        "configs/olive/vae_encoder.json": json.dumps({
            "input_model": {"type": "PyTorchModel", "config": {"model_path": "vae"}},
            "passes": {
                "convert": {"type": "OnnxConversion", "config": {"target_opset": 14}},
                "optimize_ROCMExecutionProvider": {
                    "type": "OrtTransformersOptimization",
                    "config": {"model_type": "vae", "float16": True, "use_gpu": True},
                },
            },
        }, indent=2),
        "ray/train.yaml": "scaling_config:\n  num_workers: 4\n  use_gpu: true\n",
    })
    found = findings_in_tree(root)
    assert not [k for k in found if k[0].startswith("configs/olive") and k[2] == "NPU028"], found
    assert [k for k in found if k[0] == "ray/train.yaml" and k[2] == "NPU028"], found


def test_name_to_name_dtype_aliases_choose_nothing(engine):
    src = """\
        def _normalize_model_dtype(value):
            normalized = str(value or "auto").strip().lower().replace("torch.", "")
            aliases = {
                "auto": "auto",
                "fp16": "float16",
                "half": "float16",
                "bf16": "bfloat16",
                "fp32": "float32",
            }
            return aliases.get(normalized, "auto")

        settings = {"fp16": True}
        """
    by_line = _findings(engine, src)
    assert not any(by_line.get(n) for n in range(4, 9)), by_line
    assert by_line.get(12)      # a switch set on in a config built in code stays reported


def test_flash_attn_version_quirk_in_a_flash_attention_class(engine):
    src = """\
        import torch
        from transformers.utils import is_flash_attn_2_available, is_flash_attn_greater_or_equal_2_10

        if is_flash_attn_2_available():
            from flash_attn import flash_attn_func


        class GemmaFlashAttention2(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self._flash_attn_uses_top_left_mask = not is_flash_attn_greater_or_equal_2_10()

            def _flash_attention_forward(self, q, k, v, causal):
                if not self._flash_attn_uses_top_left_mask:
                    causal = causal and q.shape[1] != 1
                return flash_attn_func(q, k, v, causal=causal)


        class Runner:
            def __init__(self):
                self.use_flash = is_flash_attn_2_available()

            def run(self, q, k, v):
                if self.use_flash:
                    return flash_attn_func(q, k, v)
                return torch.nn.functional.scaled_dot_product_attention(q, k, v)
        """
    by_line = _findings(engine, src)
    assert by_line.get(11)              # the version check itself
    assert not [f for f in by_line.get(14, ()) if f.code == "NPU391"], by_line.get(14)
    assert [f for f in by_line.get(24, ()) if f.code == "NPU391"], by_line.get(24)   # outside the class: kept


def test_a_rank_check_is_no_availability_guard(engine):
    src = """\
        import torch

        async def broadcast_weights(self, chunks):
            if torch.distributed.get_rank() == 0:
                from vllm.distributed.weight_transfer.nccl_engine import NCCLWeightTransferEngine

                NCCLWeightTransferEngine.trainer_send_weights(chunks)

        def maybe(self):
            if self.use_nccl_engine:
                from vllm.distributed.weight_transfer.nccl_engine import NCCLWeightTransferEngine
                return NCCLWeightTransferEngine
        """
    by_line = _findings(engine, src)
    assert _codes(by_line, 5).get("NPU130") == "error", by_line.get(5)
    assert _codes(by_line, 11).get("NPU130") == "warning", by_line.get(11)
