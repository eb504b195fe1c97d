"""Families the test8 split missed (t14e; test8 is tuned on from then on, see docs/recall.md "t14e: tuned on
test8"): each with the real spellings that must be flagged and the near misses that must not."""
from __future__ import annotations

import textwrap

from auditor.rules import load_rules
from auditor.static import StaticEngine

ENGINE = StaticEngine(load_rules())


def _findings(src: str, name: str = "example.py") -> list:
    result = ENGINE.analyze_bytes(textwrap.dedent(src).encode(), name)
    assert result.error is None
    return result.findings


def _on(findings: list, line: int, code: str) -> list:
    return [f for f in findings if f.line == line and f.code == code]


# --- stores into transformers' attention registry (NPU326) ----------------------------------------------------

def test_unsloth_router_over_sdpa_is_flagged_the_read_is_not():
    # unsloth-zoo temporary_patches/gemma4_flash_sliding.py: read the current "sdpa" entry, install a router over it
    findings = _findings("""\
        def patch_gemma4_flash_sliding():
            try:
                from transformers.modeling_utils import ALL_ATTENTION_FUNCTIONS
            except Exception as e:
                return raise_error("transformers.modeling_utils.ALL_ATTENTION_FUNCTIONS", e)
            try:
                current = ALL_ATTENTION_FUNCTIONS["sdpa"]
            except Exception as e:
                return raise_error("ALL_ATTENTION_FUNCTIONS['sdpa']", e)
            _ORIG_SDPA[0] = current
            # Direct assignment: AttentionInterface.register() does not update the
            # global mapping that layers read via ALL_ATTENTION_FUNCTIONS["sdpa"].
            ALL_ATTENTION_FUNCTIONS["sdpa"] = _sdpa_maybe_flash_sliding
        """)
    hits = [f for f in findings if f.code == "NPU326"]
    assert [f.line for f in hits] == [13]
    assert hits[0].severity == "warning" and hits[0].category == "attention"


def test_axolotl_and_vllm_register_calls_are_flagged():
    # axolotl monkeypatch/attention/__init__.py, vLLM model_executor/models/transformers/__init__.py,
    # TRL async_grpo/packing.py
    findings = _findings("""\
        from transformers import AttentionInterface
        from transformers.modeling_utils import ALL_ATTENTION_FUNCTIONS


        def patch_xformers_attn_over_fa2():
            from .xformers import xformers_attention_forward

            ALL_ATTENTION_FUNCTIONS["flash_attention_2"] = xformers_attention_forward


        def register_sage_attn():
            ALL_ATTENTION_FUNCTIONS.register("sage", sage_attention_forward)


        ALL_ATTENTION_FUNCTIONS.register("vllm", vllm_attention_forward)
        AttentionInterface.register(TREE_ATTENTION, tree_attention)
        """)
    assert {f.line for f in findings if f.code == "NPU326"} == {8, 12, 15, 16}


def test_model_code_reading_the_registry_is_quiet():
    # every transformers model (and the copies in unsloth / verl) dispatches through the registry: not a patch
    findings = _findings("""\
        from transformers.modeling_utils import ALL_ATTENTION_FUNCTIONS, PreTrainedModel
        from transformers.models.qwen3_moe.modeling_qwen3_moe import eager_attention_forward


        class Attention(torch.nn.Module):
            def forward(self, hidden_states, attention_mask, **kwargs):
                attention_interface = eager_attention_forward
                if self.config._attn_implementation != "eager":
                    attention_interface = ALL_ATTENTION_FUNCTIONS[self.config._attn_implementation]
                impl = ALL_ATTENTION_FUNCTIONS.get("sdpa", None)
                attn_output, attn_weights = attention_interface(self, q, k, v, attention_mask, **kwargs)
                return attn_output


        backends = {}
        backends["sdpa"] = sdpa_forward
        """)
    assert not [f for f in findings if f.code == "NPU326"]


def test_registry_store_beside_an_npu_path_is_info():
    # ms-swift's sequence parallel keeps an NPU branch: the CUDA-side store beside it is worth knowing only
    findings = _findings("""\
        from transformers.modeling_utils import ALL_ATTENTION_FUNCTIONS
        from transformers.utils import is_torch_npu_available


        def prepare_model(self, local_flash_attn):
            if is_torch_npu_available():
                ALL_ATTENTION_FUNCTIONS["sdpa"] = npu_local_sdpa_attn
            else:
                ALL_ATTENTION_FUNCTIONS["flash_attention_2"] = local_flash_attn
        """)
    hits = [f for f in findings if f.code == "NPU326"]
    assert hits and all(f.severity == "info" for f in hits)


# --- NVIDIA's nvMatmulHeuristics (NPU411) ---------------------------------------------------------------------

def test_quack_nvmatmulheuristics_probe_is_a_guarded_finding():
    # quack-kernels nvmmh_heuristic.py: the GEMM-config predictor for CUTLASS, imported lazily under a guard
    findings = _findings("""\
        def _get_iface():
            global _nvmmh_available, _iface
            try:
                from nvMatmulHeuristics import (
                    NvMatmulHeuristicsInterface,
                    NvMatmulHeuristicsTarget,
                )

                _iface = NvMatmulHeuristicsInterface(
                    backend=NvMatmulHeuristicsTarget.CUTLASS3,
                    precision="BSB",  # overridden per-call
                )
                _nvmmh_available = True
            except Exception as e:
                logger.debug(f"nvMatmulHeuristics not available: {e}")
                _nvmmh_available = False
                _iface = None
            return _iface
        """)
    hits = [f for f in findings if f.code == "NPU411"]
    assert {f.line for f in hits} >= {4, 9}
    assert all(f.severity == "warning" for f in hits)     # a guarded optional import: the code has a path without it
    assert not _on(findings, 15, "NPU411")                 # the log message names the package: not a use


# --- checks for CUDA's out-of-memory text (NPU043) ------------------------------------------------------------

def test_oom_text_checks_are_flagged_messages_are_not():
    # mmdet utils/memory.py AvoidOOM, torchtnt utils/oom.py, composer's _is_cuda_oom
    findings = _findings("""\
        import torch


        def retry_if_cuda_oom(func, *args, **kwargs):
            try:
                return func(*args, **kwargs)
            except RuntimeError as e:
                if 'CUDA out of memory. ' in str(e):
                    torch.cuda.empty_cache()
                else:
                    raise
            logger.warning("CUDA out of memory, retrying on the CPU")
            return func(*args, **kwargs)


        def is_out_of_cuda_memory(exception):
            return (
                isinstance(exception, RuntimeError)
                and len(exception.args) == 1
                and "CUDA out of memory." in exception.args[0]
            )


        def _is_cuda_oom(e):
            return any(s in str(e) for s in ['CUDA out of memory', 'CUDA error: out of memory'])
        """)
    hits = {f.line: f for f in findings if f.code == "NPU043"}
    assert set(hits) == {8, 20, 25}
    assert hits[8].severity == "error" and hits[8].category == "device"


def test_oom_text_check_beside_the_npu_text_is_info():
    findings = _findings("""\
        def is_oom(e):
            if "CUDA out of memory" in str(e) or "NPU out of memory" in str(e):
                return True
            return False
        """)
    hits = [f for f in findings if f.code == "NPU043"]
    assert hits and all(f.severity == "info" for f in hits)


# --- dtypes given out by a parallel assignment (NPU203) -------------------------------------------------------

def test_parallel_assignment_of_fp8_dtypes_is_flagged_an_allowed_list_is_not():
    # quack-kernels bench/cublaslt_quant_out.py: the data and scale dtypes of each quantised format
    findings = _findings("""\
        import torch


        class CublasLtQuantOut:
            def __init__(self, fmt):
                if fmt == "mxfp8":
                    self.torch_dtype, self.sf_dtype = torch.float8_e4m3fn, torch.float8_e8m0fnu
                elif fmt == "bf16":
                    self.torch_dtype, self.sf_dtype = torch.bfloat16, None
                FP8_TYPES = (torch.float8_e4m3fn, torch.float8_e5m2)
        """)
    assert _on(findings, 7, "NPU203")
    assert not [f for f in findings if f.line == 10 and f.category == "precision"]
