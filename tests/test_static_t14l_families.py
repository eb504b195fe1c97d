"""Families left on every earlier recall split (t14l, issue 14, session 10; every split is tuned on): probes of
CUDA-only names through hasattr / getattr, CUDA / NVIDIA vendor literals in comparisons, the profiler's CUDA
columns (also inside a print), FlashMLA and ATen's int4 tinygemm ops. The code is written in the shape of real
projects (memory probes of serving engines, profiler step timers, GPU capability tables, int4 weight-only
layers), not copied from the splits; each family has near misses that must stay quiet."""
from __future__ import annotations

from auditor.rules import load_rules
from auditor.static import StaticEngine
from tests.static_snippets import findings_by_line

ENGINE = StaticEngine(load_rules())


def _by_line(src: str, rel: str = "pkg/mod.py") -> dict[int, list]:
    return findings_by_line(ENGINE, src, rel)


# --- probes: hasattr / getattr of a CUDA-only name ----------------------------------------------------------------

PROBES = '''\
import torch
import tensorrt as trt


def free_memory_bytes(device):
    if hasattr(torch.cuda, "mem_get_info"):
        free, _ = torch.cuda.mem_get_info(device)
        return free
    return None


_HAS_L2_CACHE_SIZE = hasattr(getattr(torch._C, "_CudaDeviceProperties", None), "L2_cache_size")


def serialize(engine, config):
    if hasattr(trt.SerializationFlag, "INCLUDE_REFIT"):
        config.set_flag(trt.SerializationFlag.INCLUDE_REFIT)
    return engine.serialize()


def has_cuda_module():
    return hasattr(torch, "cuda") and hasattr(torch.backends, "mps")


def fp8_dtype():
    return getattr(torch, "float8_e4m3fn", None)


class Worker:
    def setup(self):
        if hasattr(self, "model_runner"):
            return getattr(self.model_runner, "device", "cpu")


def npu_fusion_available():
    import transformer_engine as te
    return hasattr(torch.ops._C_ascend, "npu_add_rms_norm_bias") and hasattr(te, "__version__")
'''


def test_probe_of_a_cuda_only_torch_name_is_a_warning_never_rewritten():
    by_line = _by_line(PROBES)
    probe = [f for f in by_line[6] if f.category == "device"]
    assert probe and all(f.severity == "warning" and f.fix == "none" for f in probe)
    assert "probe" in probe[0].message


def test_probes_issue_11_keeps_quiet_stay_quiet():
    by_line = _by_line(PROBES)
    assert 12 not in by_line        # getattr(..., None): a probe with a fallback (docs/precision.md, issue 11)
    assert 16 not in by_line        # a third-party optional import probed: its import is the finding
    assert 22 not in by_line        # torch.cuda / torch.backends.mps exist on every torch build
    assert 26 not in by_line        # a dtype's existence is no choice (t14k)
    assert 31 not in by_line and 32 not in by_line      # the object's own attributes
    assert 37 not in by_line        # the NPU's own op namespace; Python's own attributes (`__version__`)


def test_probe_of_a_custom_op_namespace():
    src = '''\
    import torch


    def register_triton_passes(graph):
        if hasattr(torch.ops.fast_triton, "layer_norm"):
            graph.replace("aten::layer_norm", "fast_triton::layer_norm")
        if hasattr(torch.ops.aten, "layer_norm"):
            pass


    def test_registered():
        assert hasattr(torch.ops.fast_triton, "layer_norm")
    '''
    by_line = _by_line(src)
    assert {f.category for f in by_line[5]} == {"kernel"}
    assert all(f.severity == "warning" for f in by_line[5])
    assert 7 not in by_line         # ATen's own namespace
    assert 12 not in by_line        # a test asserting a registration


# --- NPU076: CUDA / NVIDIA vendor literal in a comparison ----------------------------------------------------------

VENDOR = '''\
import logging

import torch

_TOOLS = {"NVIDIA": "nvidia-smi", "AMD": "rocm-smi"}


def tensor_cores():
    name = torch.cuda.get_device_name(0)
    if "nvidia" in name.lower() and "a100" in name.lower():
        return True
    logging.info("device vendor: %s", "NVIDIA")
    return False


def device_time_us(prof):
    total = 0
    for evt in prof.events():
        if evt.device_type().name != "CUDA":
            continue
        total += evt.self_device_time_total
    return total


def pick_tool(vendor):
    return _TOOLS.get(vendor, "npu-smi")


def test_detail(detail):
    assert detail.manufacturer == "nvidia"
'''


def test_vendor_literal_in_a_comparison_is_reported_elsewhere_not():
    by_line = _by_line(VENDOR)
    assert any(f.code == "NPU076" for f in by_line[10])
    assert any(f.code == "NPU076" for f in by_line[19])
    assert all(f.code != "NPU076" for line in (5, 12, 26, 30) for f in by_line.get(line, ()))


# --- NPU077: the profiler's CUDA columns, also in a call made inside print ---------------------------------------

PROFILE = '''\
import torch
from torch.profiler import ProfilerActivity, profile


def profile_step(model, batch):
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        model(batch)
    print(prof.key_averages().table(sort_by="self_cuda_time_total", row_limit=-1))
    print(prof.key_averages().table(sort_by="self_device_time_total", row_limit=-1))
    print("sorted by self_cuda_time_total")
    return sum(evt.cuda_time_total for evt in prof.key_averages())
'''


def test_profiler_cuda_columns_are_info_also_inside_print():
    by_line = _by_line(PROFILE)
    assert [f.severity for f in by_line[8] if f.code == "NPU077"] == ["info"]
    assert any(f.code == "NPU077" for f in by_line[11])
    assert all(f.code != "NPU077" for line in (9, 10) for f in by_line.get(line, ()))


def test_message_text_inside_a_nested_call_stays_text():
    src = '''\
    import logging
    logger = logging.getLogger(__name__)

    def report(device):
        logger.warning(colored(text="moving the model to cuda", color="red"))
        print(fmt_row(["cuda", device], sep=" | "))
    '''
    by_line = _by_line(src)
    assert 5 not in by_line
    assert 6 not in by_line


# --- NPU307 FlashMLA, NPU308 ATen int4 tinygemm ---------------------------------------------------------------------

def test_flash_mla_import_and_bare_name_calls():
    src = '''\
    import torch
    from flash_mla import flash_mla_with_kvcache, get_mla_metadata


    def bench(q, kv_cache, page_table, cache_seqlens, head_dim_v, h_q, h_kv):
        md, splits = get_mla_metadata(cache_seqlens, h_q // h_kv, h_kv)
        fn = lambda: flash_mla_with_kvcache(q, kv_cache, page_table, cache_seqlens, head_dim_v, md, splits)
        return fn()
    '''
    by_line = _by_line(src)
    for line in (2, 6, 7):
        assert any(f.code == "NPU307" and f.category == "attention" for f in by_line[line])


def test_int4_tinygemm_ops_are_a_kernel_warning_cpu_variant_quiet():
    src = '''\
    import torch


    class WeightOnlyInt4Linear(torch.nn.Module):
        def pack(self, w_int32, inner_k_tiles=8):
            self.weight_int4pack = torch.ops.aten._convert_weight_to_int4pack(w_int32, inner_k_tiles)

        def forward(self, x):
            if x.device.type == "cpu":
                return torch.ops.aten._weight_int4pack_mm_for_cpu(x, self.weight_int4pack, 128, self.sz)
            return torch.ops.aten._weight_int4pack_mm(x, self.weight_int4pack, 128, self.sz)
    '''
    by_line = _by_line(src)
    assert [f.severity for f in by_line[6] if f.code == "NPU308"] == ["warning"]
    assert any(f.code == "NPU308" for f in by_line[11])
    assert all(f.code != "NPU308" for f in by_line.get(10, ()))


# --- command-line options that default on (labelling policy item 7) ------------------------------------------------

def test_command_line_options_defaulting_on_are_the_setting_switched_on():
    src = '''\
    import argparse

    import click


    def get_args():
        parser = argparse.ArgumentParser(description="fine-tune with mixed precision")
        parser.add_argument("--fp16", action="store_true", help="train in fp16")
        parser.add_argument("--bf16", type=bool, default=True, help="train in bf16")
        parser.add_argument("--use-flash-attn", default=True, help="use flash attention")
        parser.add_argument("--use_flash_attn_v3", default=False)
        parser.add_argument("--no-tf32", dest="tf32", action="store_false", help="disable TF32 matmuls")
        parser.add_argument("--learning-rate", type=float, default=1e-4)
        parser.add_argument("--use_cuda", action="store_true", default=True)
        return parser.parse_args()


    @click.command()
    @click.option("--fp16/--no-fp16", default=True)
    def main(fp16):
        pass
    '''
    by_line = _by_line(src)
    assert {f.category for f in by_line[9]} == {"precision"}
    assert {f.category for f in by_line[10]} == {"attention"}
    assert {f.category for f in by_line[12]} == {"precision"}
    assert {f.category for f in by_line[19]} == {"precision"}
    assert all(line not in by_line for line in (8, 11, 13, 14))     # off, or a device switch (its calls report)


# --- NPU217: TensorRT FP8 / FP4 types, stacked on the TensorRT finding ------------------------------------------------

def test_tensorrt_fp8_fp4_types_are_a_second_change_fp16_is_not():
    src = '''\
    import tensorrt as trt


    def quantize_block(ctx, x, scale, output_type: trt.DataType = trt.DataType.FP4):
        q = ctx.net.add_dynamic_quantize(x, -1, 16, output_type, trt.DataType.FP8)
        return q


    def builder_config(builder, fp16=True):
        config = builder.create_builder_config()
        if fp16:
            config.set_flag(trt.BuilderFlag.FP16)
        return config
    '''
    by_line = _by_line(src)
    assert {f.category for f in by_line[4]} >= {"precision", "third_party"}
    assert [f.code for f in by_line[5] if f.category == "precision"] == ["NPU217"]
    assert all(f.category != "precision" for f in by_line[12])
