"""The third_party family on realistic code: Transformer Engine behind an if/else import, bitsandbytes, NVML
monitoring, nvidia-smi commands, nvtx ranges, DeepSpeed ops (generated from its sdist) and the other CUDA-only
libraries, each with the Ascend answer where one exists."""
from __future__ import annotations

from test_rules_apex import audit, codes

TE_CONVERT = '''\
import torch.nn as nn


def convert_model(model, use_hpu):
    if use_hpu:
        import intel_transformer_engine as te
    else:
        import transformer_engine.pytorch as te
    for name, module in model.named_children():
        if isinstance(module, nn.Linear):
            setattr(model, name, te.Linear(module.in_features, module.out_features, bias=True))
        elif isinstance(module, te.LayerNorm):
            pass


def fp8_context(enabled):
    from transformer_engine.common.recipe import DelayedScaling, Format
    from transformer_engine.pytorch import fp8_autocast
    recipe = DelayedScaling(fp8_format=Format.HYBRID, amax_history_len=16)
    return fp8_autocast(enabled=enabled, fp8_recipe=recipe)
'''


def test_transformer_engine_through_either_branch():
    found = audit(TE_CONVERT)
    assert codes(found, "NPU4") == {8: ["NPU400"], 11: ["NPU400"], 12: ["NPU400"], 17: ["NPU400", "NPU400"],
                            18: ["NPU400"], 19: ["NPU400", "NPU400"], 20: ["NPU400"]}
    assert "torch.nn.Linear" in found[11][0].substitution
    assert "bf16" in found[20][0].substitution


def test_bitsandbytes_quantized_layers_and_optimizers():
    found = audit('''\
        import bitsandbytes as bnb
        from bitsandbytes.optim import AdamW8bit

        def replace(module, threshold):
            return bnb.nn.Linear8bitLt(module.in_features, module.out_features, threshold=threshold)

        optimizer = AdamW8bit(model.parameters(), lr=2e-5)
    ''')
    assert codes(found) == {1: ["NPU401"], 2: ["NPU401"], 5: ["NPU401"], 7: ["NPU401"]}
    assert "npu_weight_quant_batchmatmul" in found[5][0].substitution
    assert "torch_npu.optim.NpuFusedAdamW" in found[7][0].substitution


def test_gpu_monitoring_nvml_and_nvidia_smi():
    found = audit('''\
        import subprocess
        import pynvml

        def gpu_stats(local_rank):
            pynvml.nvmlInit()
            handle = pynvml.nvmlDeviceGetHandleByIndex(local_rank)
            util = pynvml.nvmlDeviceGetUtilizationRates(handle).gpu
            names = subprocess.check_output(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"])
            return util, names
    ''')
    assert codes(found) == {2: ["NPU406"], 5: ["NPU406"], 6: ["NPU406"], 7: ["NPU406"], 8: ["NPU407"]}
    assert "torch.npu.utilization()" in found[7][0].substitution
    assert "npu-smi info" in found[8][0].substitution


def test_nvtx_ranges_map_to_mstx():
    found = audit('''\
        import nvtx

        @nvtx.annotate("forward", color="green")
        def forward(x):
            rng = nvtx.start_range(message="matmul")
            y = x @ x
            nvtx.end_range(rng)
            return y
    ''')
    assert codes(found) == {1: ["NPU410"], 3: ["NPU410"], 5: ["NPU410"], 7: ["NPU410"]}
    assert found[3][0].severity == "info"
    assert "torch_npu.npu.mstx.mstx_range" in found[3][0].substitution
    assert "torch_npu.npu.mstx.range_end" in found[7][0].substitution


def test_deepspeed_ops_split_by_npu_builder():
    found = audit('''\
        from deepspeed.ops.adam import FusedAdam, DeepSpeedCPUAdam
        from deepspeed.ops.transformer import DeepSpeedTransformerLayer
        from deepspeed.ops.adam.zenflow_torch_adam import ZenFlowSelectiveAdamW
    ''')
    assert codes(found) == {1: ["NPU421", "NPU421"], 2: ["NPU420"]}
    assert found[1][0].severity == "info" and found[2][0].severity == "error"
    assert "TransformerBuilder" in found[2][0].substitution


def test_mamba_causal_conv_liger_and_others():
    found = audit('''\
        from mamba_ssm.ops.selective_scan_interface import selective_scan_fn
        from causal_conv1d import causal_conv1d_fn
        from liger_kernel.transformers import apply_liger_kernel_to_llama, LigerRMSNorm
        from nvidia.dali.plugin.pytorch import DALIGenericIterator
        import tensorrt as trt
        from cuda import cudart
        import flashinfer
    ''')
    assert codes(found) == {1: ["NPU402"], 2: ["NPU403"], 3: ["NPU404", "NPU404"], 4: ["NPU405"],
                            5: ["NPU409"], 6: ["NPU408"], 7: ["NPU831"]}
    assert "npu_fused_causal_conv1d" in found[2][0].substitution
    assert "torch_npu.npu_rms_norm" in [f for f in found[3] if f.symbol.endswith("LigerRMSNorm")][0].substitution


def test_library_names_in_messages_and_configs_are_quiet():
    assert audit('''\
        # bitsandbytes will initialize CUDA on import, so it needs to be imported lazily
        def check():
            """Needs transformer_engine>=1.0 and pynvml for GPU metrics."""
            raise ImportError("Using `convert_model` requires transformer_engine to be installed.")
        logger.info("run nvidia-smi to see the GPUs")
        use_liger = cfg.get("use_liger_kernel", False)
    ''') == {}


def test_deepspeed_generator_sees_triton_shims():
    from test_rules_kernel import _gen

    gen = _gen("deepspeed_ops")
    shim = "try:\n    import triton\n    import triton.language as tl\nexcept ImportError:\n    triton = None\n"
    assert gen.triton_aliases(shim) == ["triton", "tl"]
    assert gen.relative_imports("from .fused_adam import FusedAdam\nfrom .cpu_adam import DeepSpeedCPUAdam\n") == {
        "FusedAdam": "fused_adam", "DeepSpeedCPUAdam": "cpu_adam"}
    assert gen._dotted("deepspeed/ops/adam/__init__.py") == "deepspeed.ops.adam"
