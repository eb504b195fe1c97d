"""t22b (session 22): misses of the fresh tuning sample tuned_t22b: StyleGAN's fp16 block counts, its own JIT builder
of CUDA plugins (`custom_ops.get_plugin`) and the `impl='cuda'` choice of its ops."""
from __future__ import annotations

from auditor.rules import load_rules
from auditor.static import StaticEngine

ENGINE = StaticEngine(load_rules())


def _lines(src: bytes, code: str, path: str = "main.py") -> list[int]:
    return sorted({f.line for f in ENGINE.analyze_bytes(src, path).findings if f.code == code})


# stylegan-xl / StyleGAN2-ADA torch_utils/ops/bias_act.py, abridged (the same file in PyTorch-StudioGAN's style_ops)
BIAS_ACT = b"""import os
import torch
from .. import custom_ops

_plugin = None
_null_tensor = torch.empty([0])

def _init():
    global _plugin
    if _plugin is None:
        _plugin = custom_ops.get_plugin(
            module_name='bias_act_plugin',
            sources=['bias_act.cpp', 'bias_act.cu'],
            headers=['bias_act.h'],
            source_dir=os.path.dirname(__file__),
            extra_cuda_cflags=['--use_fast_math'],
        )
    return True

def bias_act(x, b=None, dim=1, act='linear', alpha=None, gain=None, clamp=None, impl='cuda'):
    assert impl in ['ref', 'cuda']
    if impl == 'cuda' and x.device.type == 'cuda' and _init():
        return _bias_act_cuda(dim=dim, act=act, alpha=alpha, gain=gain, clamp=clamp).apply(x, b)
    return _bias_act_ref(x=x, b=b, dim=dim, act=act, alpha=alpha, gain=gain, clamp=clamp)

def _bias_act_cuda(dim=1, act='linear', alpha=None, gain=None, clamp=None):
    class BiasActCuda(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, b):
            y = _plugin.bias_act(x, b, _null_tensor, _null_tensor, _null_tensor, 0, dim, 1, alpha, gain, clamp)
            return y
    return BiasActCuda
"""


def test_own_builder_of_cuda_sources_binds_the_plugin():
    # the build call and the plugin's kernel calls; not the `global` statement or the `_plugin = None` placeholder
    assert _lines(BIAS_ACT, "NPU327") == [11, 30]
    assert _lines(BIAS_ACT, "NPU383") == [13]


def test_impl_cuda_default_is_the_kernel_choice():
    assert _lines(BIAS_ACT, "NPU830") == [20, 22]
    # lead decision 15 (pd25): `impl='cuda'` names an implementation, not a device (no NPU003 on its line); the
    # tensor's `x.device.type == 'cuda'` on line 22 is a device test and stays
    assert _lines(BIAS_ACT, "NPU003") == [22]


def test_builder_of_cpp_sources_only_binds_nothing():
    src = b"""from .. import custom_ops
_plugin = custom_ops.get_plugin(module_name='nms_cpu', sources=['nms.cpp'])
_plugin.nms(boxes, scores)
"""
    assert _lines(src, "NPU327") == []


def test_cpp_extension_load_keeps_its_own_rule():
    # the builder's own rule reports `load(`; the target is not reported a second time
    src = b"""from torch.utils.cpp_extension import load
upfirdn2d_op = load("upfirdn2d", sources=["upfirdn2d.cpp", "upfirdn2d_kernel.cu"])
out = upfirdn2d_op.upfirdn2d(x, k, 1, 1, 1, 1, 0, 0, 0, 0)
"""
    assert 2 in _lines(src, "NPU370")
    assert _lines(src, "NPU327") == [3]


# StyleGAN's fp16 blocks: legacy.py's --force-fp16 path, StyleGAN3's train.py, PyTorch-StudioGAN's model.py
FP16_BLOCKS = b"""def load_network_pkl(f, force_fp16=False):
    if force_fp16:
        fp16_kwargs = kwargs.get('synthesis_kwargs', kwargs)
        fp16_kwargs.num_fp16_res = 4
        fp16_kwargs.conv_clamp = 256

def launch(c, opts):
    if not opts.fp32:
        c.G_kwargs.num_fp16_res = c.D_kwargs.num_fp16_res = 4

def build(RUN, module, MODEL):
    if RUN.mixed_precision:
        num_fp16_res = 4
    else:
        num_fp16_res = 0
    Gen = module.Generator(z_dim=MODEL.z_dim, synthesis_kwargs={"num_fp16_res": num_fp16_res})
    Dis = module.Discriminator(num_fp16_res=num_fp16_res)
    G_kwargs = dict(num_fp16_res=kwarg('num_fp16_res', 0))
"""


def test_literal_fp16_block_counts_are_reported():
    assert _lines(FP16_BLOCKS, "NPU221") == [4, 9, 13]


def test_keyword_true_only_takes_a_non_zero_integer():
    # `use_triton=1` switches Triton on as `use_triton=True` does; 0 stays off
    assert _lines(b"model = AutoGPTQForCausalLM.from_quantized(path, use_triton=1)\n", "NPU803") == [1]
    assert _lines(b"model = AutoGPTQForCausalLM.from_quantized(path, use_triton=0)\n", "NPU803") == []


# `half` switches: boxmot's exporter signature (test20's label), Real-ESRGAN's upsampler, a decided-elsewhere value
HALF = b"""class TensorRTExporter(BaseExporter):
    def __init__(self, model, im, file, half: bool = True, dynamic: bool = False):
        super().__init__(model, im, file, dynamic=dynamic, half=half)

upsampler = RealESRGANer(scale=4, model_path=model_path, model=model, tile=0, pre_pad=0, half=True)
lama = RealESRGANer(scale=4, model_path=model_path, model=model, half=True if "cuda" in str(device) else False)
model = load(weights, half=half)
print("half=True only compatible with GPU export")
"""


def test_half_switch_on_only_for_a_literal():
    assert _lines(HALF, "NPU235") == [2, 5]
