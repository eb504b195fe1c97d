"""t23a (session 23): precision misses pooled over test10..test26: bfloat16 / float16 chosen through a dtype
namespace other than torch's (JAX's `jnp.bfloat16`, a code base's own dtype enum), NPU264 / NPU265."""
from __future__ import annotations

from auditor.rules import load_rules
from auditor.static import StaticEngine

ENGINE = StaticEngine(load_rules())


def _lines(src: bytes, code: str, path: str = "main.py") -> list[int]:
    return sorted({f.line for f in ENGINE.analyze_bytes(src, path).findings if f.code == code})


# long_llama's fot_continued_pretraining/EasyLM/optimizers.py (test25): optax states in bf16 behind a switch
EASYLM = b"""import jax
import jax.numpy as jnp
import optax


class OptimizerFactory(object):
    @classmethod
    def get_optimizer(cls, config, weight_decay_mask=None):
        learning_rate_schedule = optax.warmup_cosine_decay_schedule(
            init_value=config.init_lr, peak_value=config.lr, warmup_steps=config.lr_warmup_steps,
            decay_steps=config.lr_decay_steps, end_value=config.end_lr,
        )
        optimizer = optax.chain(
            optax.clip_by_global_norm(config.clip_gradient),
            optax.adafactor(
                learning_rate=learning_rate_schedule,
                multiply_by_parameter_scale=True,
                momentum=config.b1,
                dtype_momentum=jnp.bfloat16 if config.bf16_momentum else jnp.float32,
            ),
        )
        adamw = optax.adamw(
            learning_rate=learning_rate_schedule,
            b1=config.b1,
            b2=config.b2,
            mu_dtype=jnp.bfloat16 if config.bf16_momentum else jnp.float32,
        )
        return optimizer, adamw


def get_float_dtype_by_name(dtype):
    return {
        'bf16': jnp.bfloat16,
        'fp16': jnp.float16,
        'fp32': jnp.float32,
        'fp64': jnp.float64,
    }[dtype]


def to_jax_dtype(name):
    if name == 'bf16':
        return jnp.bfloat16
    elif name == 'fp16':
        return jnp.float16
    return jnp.float32
"""


def test_jax_bf16_optimizer_states_are_reported():
    assert _lines(EASYLM, "NPU264") == [19, 26]


def test_jax_name_to_dtype_conversion_branches_choose_nothing():
    # `{'bf16': jnp.bfloat16, ...}[dtype]` and `if name == 'bf16': return jnp.bfloat16` convert a name (policy (a),
    # lead decision 11)
    assert _lines(EASYLM, "NPU265") == []
    assert _lines(EASYLM, "NPU264") == [19, 26]


def test_jax_file_findings_are_info():
    sev = {f.severity for f in ENGINE.analyze_bytes(EASYLM, "EasyLM/optimizers.py").findings if f.code == "NPU264"}
    assert sev <= {"info"}


# OLMo-core's internal/cookbook.py (test12) and config.py: an FSDP config in bf16 through the code base's own enum
OLMO_COOKBOOK = b"""import torch
from olmo_core.config import DType
from olmo_core.distributed.parallel import DataParallelType
from olmo_core.train.train_module import TransformerDataParallelConfig, TransformerTrainModuleConfig


def configure_train_module(max_sequence_length, rank_microbatch_size, dp_shard_degree):
    return TransformerTrainModuleConfig(
        rank_microbatch_size=rank_microbatch_size,
        max_sequence_length=max_sequence_length,
        max_grad_norm=1.0,
        compile_model=True,
        dp_config=TransformerDataParallelConfig(
            name=DataParallelType.hsdp,
            param_dtype=DType.bfloat16,
            reduce_dtype=DType.float32,
            shard_degree=dp_shard_degree,
        ),
    )
"""

OLMO_ENUM = b"""from enum import Enum

import torch


class StrEnum(str, Enum):
    pass


class DType(StrEnum):
    float32 = "float32"
    bfloat16 = "bfloat16"
    float16 = "float16"

    @classmethod
    def from_pt(cls, dtype: torch.dtype) -> "DType":
        if dtype == torch.float32:
            return DType.float32
        elif dtype == torch.bfloat16:
            return DType.bfloat16
        elif dtype == torch.float16:
            return DType.float16
        else:
            raise NotImplementedError(dtype)

    @property
    def as_pt(self) -> torch.dtype:
        return getattr(torch, self)


def tokens_per_second(dtype):
    return 2 if dtype == DType.bfloat16 else 1
"""


def test_own_dtype_enum_bf16_member_is_reported():
    assert _lines(OLMO_COOKBOOK, "NPU264") == [15]


def test_own_dtype_enum_conversions_and_comparisons_stay_clean():
    # `elif dtype == torch.bfloat16: return DType.bfloat16` copies the dtype it tested; `dtype == DType.bfloat16`
    # reads a choice made elsewhere
    assert _lines(OLMO_ENUM, "NPU264") == []
    assert _lines(OLMO_ENUM, "NPU265") == []


# MS-AMP's msamp/nn/linear.py (test26): the weight's qtype defaults to the enum's fp16 member
MSAMP_LINEAR = b"""import torch

from msamp.common.dtype import Dtypes
from msamp.common.tensor import ScalingMeta


class FP8Linear(torch.nn.Module):
    DEFAULT_WINDOW_SIZE = 16

    def __init__(self, in_features, out_features, use_bias=True, weight_qtype=Dtypes.kfloat16, bias_type=torch.float32):
        super().__init__()
        self.weight_qtype = weight_qtype
        self.scaling_metas = dict(input=ScalingMeta(Dtypes.kfloat8_e4m3, window_size=16))

    def forward(self, input):
        if self.weight_qtype == Dtypes.kfloat16:
            return input
        return input


class LinearReplacer:
    @classmethod
    def replace(cls, model, weight_qtype=Dtypes.kfloat16, src_rank=0, group=None):
        return cls._replace(model, weight_qtype)
"""


def test_own_dtype_enum_fp16_defaults_are_info():
    found = [f for f in ENGINE.analyze_bytes(MSAMP_LINEAR, "msamp/nn/linear.py").findings if f.code == "NPU265"]
    assert sorted(f.line for f in found) == [10, 23]
    assert {f.severity for f in found} == {"info"}


# near misses: numpy / ml_dtypes host arrays, Triton's types, attributes of other objects named like a dtype
CONTROLS = b"""import ml_dtypes
import numpy as np
import torch
import triton.language as tl

host = np.zeros(4, dtype=np.float16)
bf = np.asarray(x, dtype=ml_dtypes.bfloat16)
acc_dtype = tl.float16 if IS_FP16 else tl.float32
y = self.bfloat16
z = cfg.precision.bfloat16
"""


def test_near_misses_stay_clean():
    assert _lines(CONTROLS, "NPU264") == []
    assert _lines(CONTROLS, "NPU265") == []


# warp-lang's warp/_src/jax/__init__.py, xla_ffi.py and tests/interop/test_jax.py: maps between two namespaces'
# dtypes, and a test of them, choose nothing (the read-check's wrong findings of the first version)
WARP_JAX = b"""import warp
from warp._src.jax import XLA_FFI_DataType


def dtype_to_jax(warp_dtype):
    if dtype_to_jax.type_map is None:
        import jax.numpy as jp

        dtype_to_jax.type_map = {
            warp.float16: jp.float16,
            warp.bfloat16: jp.bfloat16,
            warp.float32: jp.float32,
        }
    return dtype_to_jax.type_map[warp_dtype]


def ffi_types():
    import jax.numpy as jnp

    return {
        XLA_FFI_DataType.F16: jnp.float16,
        XLA_FFI_DataType.BF16: jnp.bfloat16,
    }


def test_dtype_to_jax(test, device):
    import jax.numpy as jp
    import warp as wp

    def test_conversions(warp_type, jax_type):
        test.assertEqual(wp.dtype_to_jax(warp_type), jax_type)

    test_conversions(wp.float16, jp.float16)
    test_conversions(wp.float32, jp.float32)
"""


def test_maps_between_dtype_namespaces_choose_nothing():
    assert _lines(WARP_JAX, "NPU264") == []
    assert _lines(WARP_JAX, "NPU265") == []
