"""t22e (session 22): test26's misses: yunchang's USP attention, transformers' FlashAttention-2 classes, float8
members of dtype enums (MS-AMP / Transformer Engine) and open_clip's `--precision` option defaulting to "amp"."""
from __future__ import annotations

from auditor.rules import load_rules
from auditor.static import StaticEngine

ENGINE = StaticEngine(load_rules())


def _lines(src: bytes, code: str, path: str = "main.py") -> list[int]:
    return sorted({f.line for f in ENGINE.analyze_bytes(src, path).findings if f.code == code})


# EasyContext's easy_context/usp/monkey_patch.py: a guarded yunchang import, an assert that demands transformers'
# FlashAttention-2 classes, and a patch of one of their methods
USP_PATCH = b"""import transformers
import warnings
import torch
try:
    from yunchang import LongContextAttention, set_seq_parallel_pg
    usp_attn = LongContextAttention(ring_impl_type="zigzag")
except:
    print("If you want to use the LongContextAttention class, please install the yunchang package.")
    usp_attn = None


def new_decoder_forward(self, hidden_states, attention_mask=None, **kwargs):
    assert isinstance(
        self.self_attn, transformers.models.llama.modeling_llama.LlamaFlashAttention2
    ) or isinstance(
        self.self_attn,
        transformers.models.mistral.modeling_mistral.MistralFlashAttention2,
    ), "Please toggle on the Flash Attention 2 implementation when using zigzag ring attention monkey patch."
    residual = hidden_states
    hidden_states = self.input_layernorm(hidden_states)
    hidden_states, _, _ = self.self_attn(hidden_states=hidden_states, attention_mask=attention_mask, **kwargs)
    return (residual + hidden_states,)


def apply_usp_attn_monkey_patch_llama():
    transformers.models.llama.modeling_llama.LlamaFlashAttention2._flash_attention_forward = (
        new_flash_attn_forward
    )
    transformers.models.llama.modeling_llama.LlamaDecoderLayer.forward = (
        new_decoder_forward
    )
"""


def test_yunchang_usp_attention_import_and_construction():
    assert _lines(USP_PATCH, "NPU850") == [5, 6]


def test_set_seq_parallel_pg_alone_is_process_group_setup():
    src = b"from yunchang import set_seq_parallel_pg\n\nset_seq_parallel_pg(2, 2, rank, world_size)\n"
    assert _lines(src, "NPU850") == []


def test_transformers_flash_attention_classes_asserted_and_patched():
    assert _lines(USP_PATCH, "NPU851") == [14, 17, 26]


def test_sdpa_attention_class_is_not_the_flash_path():
    src = (b"from transformers.models.llama.modeling_llama import LlamaSdpaAttention\n\n"
           b"LlamaSdpaAttention.forward = sdpa_forward\n")
    assert _lines(src, "NPU851") == []


# MS-AMP's msamp/nn/linear.py and msamp/operators/dist_op/dist_op.py: float8 formats chosen through the code base's
# own `Dtypes` enum; the enum's own helpers and a comparison that only asks which format came in
FP8_LINEAR = b"""import torch
from msamp.common.dtype import Dtypes
from msamp.common.tensor import ScalingMeta


class FP8Linear(torch.nn.Module):
    DEFAULT_WINDOW_SIZE = 16

    def __init__(self, in_features, out_features, use_bias=True, weight_qtype=Dtypes.kfloat16):
        super().__init__()
        self.scaling_metas = dict(
            input=ScalingMeta(Dtypes.kfloat8_e4m3, window_size=FP8Linear.DEFAULT_WINDOW_SIZE),
            wgrad=ScalingMeta(Dtypes.kfloat8_e4m3, window_size=1),
            ograd=ScalingMeta(Dtypes.kfloat8_e5m2, window_size=FP8Linear.DEFAULT_WINDOW_SIZE)
        )


class DistOp:
    @classmethod
    def enable_fp8(cls, qtype):
        if qtype == Dtypes.kfloat8_e4m3:
            cls.lib.enable_fp8_e4m3()


class Dtypes2:
    kfloat8_e4m3 = QType(name='kFloat8E4M3', value=5)

    @classmethod
    def is_fp8_qtype(cls, qtype):
        return qtype in [cls.kfloat8_e4m3, cls.kfloat8_e5m2]
"""


def test_fp8_enum_members_choosing_a_format():
    assert _lines(FP8_LINEAR, "NPU262") == [12, 13, 14]


# MS-AMP's msamp/te/extension.py: Transformer Engine's dtype map to MS-AMP's; both sides name float8
TE_MAP = b"""import transformer_engine_extensions as tex
from msamp.common.dtype import Dtypes


class TeExtensionOverrider:
    dtype_map = {
        tex.DType.kFloat8E4M3: Dtypes.kfloat8_e4m3,
        tex.DType.kFloat8E5M2: Dtypes.kfloat8_e5m2,
        tex.DType.kBFloat16: Dtypes.kbfloat16,
    }
"""


def test_fp8_members_in_a_dtype_map_are_precision_beside_the_library():
    assert _lines(TE_MAP, "NPU262") == [7, 8]
    assert _lines(TE_MAP, "NPU400") == [1, 7, 8, 9]


# Chinese-CLIP's cn_clip/eval/zeroshot_evaluation.py (open_clip's option): AMP by default
PRECISION_OPTION = b"""import argparse

def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument(
        "--precision",
        choices=["amp", "fp16", "fp32"],
        default="amp",
        help="Floating point precition."
    )
    return parser.parse_args()

args = parse_args()
if args.precision == "amp":
    scaler = None
"""


def test_precision_option_defaulting_to_amp():
    assert _lines(PRECISION_OPTION, "NPU263") == [8]


def test_precision_option_defaulting_to_fp32_is_quiet():
    assert _lines(PRECISION_OPTION.replace(b'default="amp"', b'default="fp32"'), "NPU263") == []


def test_integer_precision_option_is_not_amp():
    # torchmd-net's scripts/train.py: Lightning's numeric precision, on by the option-default reading but not "amp"
    src = (b"import argparse\nparser = argparse.ArgumentParser()\n"
           b"parser.add_argument('--precision', type=int, default=32, choices=[16, 32, 64], help='Floating point precision')\n")
    assert _lines(src, "NPU263") == []
