"""The ecosystem family (rules/ecosystem.yaml) on code shaped like the code it was found in: package feature
detection, CUDA questions asked through helpers, framework wrappers of Transformer Engine / apex / NCCL, PyTorch's
attention switches, Triton's CUDA-only modules and FP8 everywhere; one line that needs two changes gets one
finding per category."""
from __future__ import annotations

import re
from pathlib import Path

import torch

from test_rules_apex import audit


def cats(by_line, line):
    return sorted({f.category for f in by_line.get(line, [])})


def test_package_lookups_fire_only_for_cuda_only_packages():
    found = audit('''\
        import importlib.util
        from importlib.metadata import version
        from lightning_utilities.core.imports import RequirementCache
        from liger_kernel.ops.utils import compare_version

        FLASH_ATTN_AVAILABLE = importlib.util.find_spec("flash_attn") is not None
        _BITANDBYTES_AVAILABLE_NOT_EQUAL_0_42_0 = RequirementCache("bitsandbytes != 0.42.0")
        _TRITON_AVAILABLE = RequirementCache("triton")
        _TRITON_CLIENT = RequirementCache("tritonclient")
        HAS_NUMPY = importlib.util.find_spec("numpy") is not None
        if version("transformer_engine") >= "1.9":
            use_te = True
        HAVE_APEX = importlib.util.find_spec("apex") is not None
        ''')
    assert cats(found, 6) == ["attention"]
    assert cats(found, 7) == ["third_party"]          # a requirement string, not just a name
    assert cats(found, 8) == ["kernel"]
    assert 9 not in found and 10 not in found         # tritonclient, numpy: not CUDA packages
    assert cats(found, 11) == ["third_party"]
    assert cats(found, 13) == ["apex"]


def test_feature_check_helpers_wherever_they_come_from():
    found = audit('''\
        from transformers.utils import is_flash_attn_2_available, is_torch_bf16_gpu_available
        from peft.import_utils import is_bnb_4bit_available
        from .utils import has_cuda_capability


        def is_xformers_available():
            return False


        def pick(config):
            if is_flash_attn_2_available():
                config.attn_implementation = "flash_attention_2"
            if not is_bnb_4bit_available():
                raise ValueError("bitsandbytes 4bit quantization is not available.")
            if has_cuda_capability(9, 0):
                config.use_fa3 = True
            config.bf16 = is_torch_bf16_gpu_available()
            return is_xformers_available()
        ''')
    assert 6 not in found                              # the definition is not a use
    assert cats(found, 11) == ["attention"]
    assert cats(found, 13) == ["third_party"]
    assert cats(found, 14) == []                       # the message line stays clean
    assert cats(found, 15) == ["device"]
    assert cats(found, 17) == ["device", "precision"]  # one line, two questions: two findings
    assert cats(found, 18) == ["attention"]


def test_megatron_wrappers_and_vllm_nccl():
    found = audit('''\
        try:
            import apex  # pylint: disable=unused-import
            from megatron.core.fusions.fused_layer_norm import FusedLayerNorm
            LNImpl = FusedLayerNorm
        except ImportError:
            LNImpl = None
        from megatron.core.extensions.transformer_engine import TENorm
        from vllm.distributed.weight_transfer.nccl_common import trainer_init as open_trainer_endpoint
        from vllm.distributed.device_communicators.pynccl import PyNcclCommunicator


        class Spec:
            def layer_norm(self):
                return TENorm

            def connect(self, init_info, pg, device):
                self.group = open_trainer_endpoint(init_info)
                self.comm = PyNcclCommunicator(pg, device=device)
        ''')
    assert cats(found, 2) == ["apex"] and cats(found, 3) == ["apex"] and cats(found, 4) == ["apex"]
    assert cats(found, 7) == ["third_party"] and cats(found, 14) == ["third_party"]
    assert cats(found, 8) == ["distributed"] and cats(found, 9) == ["distributed"]
    assert cats(found, 17) == ["distributed"]          # through the import alias
    assert cats(found, 18) == ["distributed"]


def test_fp8_is_a_precision_finding_next_to_the_library_finding():
    found = audit('''\
        import torch
        from torchao.float8 import Float8LinearConfig, convert_to_float8_training
        from transformer_engine.common.recipe import DelayedScaling, Format


        def build(model, config):
            if config.fp8 and config.fp8_recipe != "delayed":
                recipe = DelayedScaling(fp8_format=Format.HYBRID, amax_history_len=16)
            convert_to_float8_training(model, config=Float8LinearConfig.from_recipe_name("rowwise"))
            out = torch._scaled_mm(a, b, scale_a=sa, scale_b=sb, out_dtype=torch.bfloat16)
            return torch.cuda.HalfTensor(4)
        ''')
    assert cats(found, 2) == ["precision", "third_party"]
    assert cats(found, 3) == ["precision", "third_party"]
    assert cats(found, 7) == ["precision"]
    assert cats(found, 8) == ["precision", "third_party"]
    assert cats(found, 9) == ["precision", "third_party"]
    assert "precision" in cats(found, 10)
    assert cats(found, 11) == ["device", "precision"]   # a legacy typed constructor: device AND dtype
    sev = {f.code: f.severity for f in found[7]}
    # the fp8 switches are read as a test there: info, still reported (t11f, docs/precision.md "t11f" item 9)
    assert set(sev.values()) == {"info"}


def test_fp8_severity_is_judged_per_product():
    from auditor.rules import load_rules
    from auditor.static import StaticEngine
    src = b"config = TransformerConfig(fp8=args.fp8_format)\n"     # a switch passed on, not read as a test
    for product, expected in (("a2", "error"), ("950", "info")):
        result = StaticEngine(load_rules(), product=product).analyze_bytes(src, "train.py")
        assert {f.severity for f in result.findings if f.code == "NPU231"} == {expected}


def test_attention_switches_and_triton_libdevice():
    found = audit('''\
        import operator
        import torch
        from torch.nn.attention import SDPBackend, sdpa_kernel
        from torch.nn.attention.flex_attention import create_block_mask

        if torch.cuda.is_available():
            from triton.language.extra.cuda.libdevice import rsqrt
        else:
            from triton.language.math import rsqrt

        with sdpa_kernel(SDPBackend.MATH):
            mask = create_block_mask(causal, B=None, H=None, Q_LEN=s, KV_LEN=s)
        ''')
    assert cats(found, 3) == ["attention"]              # importing the backend switch: the port decides there
    assert 4 not in found       # flex attention's import runs on any torch >= 2.5: line 12's call carries it (tq55b)
    assert cats(found, 7) == ["kernel"]
    assert 9 not in found                               # the portable module
    assert cats(found, 11) == ["attention"] and cats(found, 12) == ["attention"]


def test_code_inside_a_message_fstring_is_still_code():
    found = audit('''\
        import torch

        fabric.print(f"Memory used: {torch.cuda.max_memory_allocated() / 1e9:.02f} GB", file=sys.stderr)
        print(f"moving the model to cuda with nccl")
        raise RuntimeError(f"CUDA OOM on {torch.cuda.get_device_name()}: lower --gpu-memory-utilization")
        raise ImportError(f"Transformer Engine >= 1.9 required, but your version is {get_te_version()}.")
        ''')
    assert cats(found, 3) == ["device"]
    assert 6 not in found                               # a helper named in a message is not a feature check
    assert 4 not in found                               # the text of a message is for humans
    assert [f.symbol for f in found[5]] == ["torch.cuda.get_device_name"]


def test_cuda_source_in_strings_and_torch_c_bindings():
    found = audit('''\
        import torch
        from torch.utils.cpp_extension import load_inline

        cuda_src = """
        #include <cuda_runtime.h>
        __global__ void scale(float* x, float a, int n) { }
        """
        _HAS_L2 = hasattr(getattr(torch._C, "_CudaDeviceProperties", None), "L2_cache_size")
        cpp_src = "torch::Tensor scale(torch::Tensor x, double a);"
        ''')
    assert cats(found, 4) == ["kernel"]
    assert 8 not in found      # a probe with a default: issue 11's context makes feature checks no finding
    assert 9 not in found


def test_torch_c_binding_names_exist_in_torch_sources():
    """The torch._C names of NPU031 are real: each one appears in torch's own Python sources."""
    import yaml
    rules = yaml.safe_load((Path(__file__).resolve().parents[1] / "rules" / "ecosystem.yaml").read_text())["rules"]
    rule = next(r for r in rules if r["code"] == "NPU031")
    names = [n.split(".")[-1] for m in rule["match"] for n in m.get("qualname", [])]
    text = "".join(p.read_text(errors="replace") for p in (Path(torch.__file__).parent / "cuda").glob("*.py"))
    text += (Path(torch.__file__).parent / "_C" / "__init__.pyi").read_text(errors="replace")
    missing = [n for n in names if not re.search(r"\b" + re.escape(n) + r"\b", text)]
    assert missing == []


def test_the_condition_of_a_skip_helper_is_code_and_its_reason_is_text():
    found = audit('''\
        import unittest
        import torch

        torch_device = "cpu"
        skip = unittest.skipUnless(torch_device == "cuda", "test requires CUDA")
        skip2 = unittest.skipIf(not torch.cuda.is_available(), "cuda tests need a GPU")
        note = unittest.skip("requires cuda and nccl")
        ''')
    assert cats(found, 5) == ["device"]
    assert cats(found, 6) == ["device"]
    assert 7 not in found
