"""t21d (session 21): third_party misses of the static splits test10..test22: a GPU-only library named in a
comparison (NPU489) and a shell probe ending in nvcc (NPU407)."""
from __future__ import annotations

from auditor.rules import load_rules
from auditor.static import StaticEngine

ENGINE = StaticEngine(load_rules())


def _lines(src: bytes, code: str, path: str = "main.py") -> list[int]:
    return sorted({f.line for f in ENGINE.analyze_bytes(src, path).findings if f.code == code})


# nvidia-physicsnemo's HealDA model builder (test13): the attention backend chosen by name
HEALDA = b"""def build(in_channels, fusion_dim, qk_norm_type, qk_norm_affine, attention_backend="timm"):
    tokenizer_in_channels = in_channels + fusion_dim
    attn_kwargs = {"qk_norm_type": qk_norm_type} if qk_norm_type else {}
    if qk_norm_type:
        # TE backend doesn't support qk_norm_affine=False,
        attn_kwargs["qk_norm_affine"] = qk_norm_affine
    if attention_backend == "transformer_engine":
        attn_kwargs["qkv_format"] = "bshd"
    return tokenizer_in_channels, attn_kwargs
"""

# transformer-lens' Baichuan adapter (test16): the load error tested for bitsandbytes, then probed with find_spec
BAICHUAN = b"""import importlib.util


def load_remote(loaders, model_name):
    last_exc = None
    for loader in loaders:
        try:
            return loader(model_name)
        except Exception as exc:
            last_exc = exc
            continue
    if last_exc is not None and "bitsandbytes" in str(last_exc):
        if importlib.util.find_spec("bitsandbytes") is None:
            raise ImportError("Baichuan2 variants require `bitsandbytes`") from last_exc
    raise last_exc
"""

# infinity-emb's utils_optimum (test19): the project's own Device enum with a TensorRT member
INFINITY = b"""from enum import Enum


class Device(Enum):
    cpu = "cpu"
    cuda = "cuda"
    tensorrt = "tensorrt"
    auto = None


def device_to_onnx(device: Device) -> str:
    if device == Device.cpu:
        return "CPUExecutionProvider"
    elif device == Device.tensorrt:
        return "TensorrtExecutionProvider"
    return "CPUExecutionProvider"


PROVIDERS = {Device.tensorrt: "TensorrtExecutionProvider"}
"""


def test_backend_compared_with_transformer_engine():
    assert _lines(HEALDA, "NPU489") == [7]


def test_load_error_tested_for_bitsandbytes_not_the_find_spec_argument():
    assert _lines(BAICHUAN, "NPU489") == [12]
    assert _lines(BAICHUAN, "NPU430") == [13]       # the find_spec probe keeps its own rule, alone on its line


def test_device_enum_member_named_for_tensorrt_compared():
    assert _lines(INFINITY, "NPU489") == [14]       # not the member's definition, not a table key


def test_library_names_as_data_are_quiet():
    src = (b'REQUIRED = ["bitsandbytes", "transformer_engine", "tensorrt"]\n'
           b'BACKENDS = {"tensorrt": "engine", "onnx": "onnx"}\n'
           b'def check(backend):\n'
           b'    assert backend == "transformer_engine", "only Transformer Engine"\n')
    assert _lines(src, "NPU489") == []


def test_export_format_aliases_compared():
    # ultralytics' exporter (MobileSAMv2's vendored copy): TensorRT export chosen by name
    src = b"def export(self):\n    format = self.args.format.lower()\n    if format in ('tensorrt', 'trt'):\n        format = 'engine'\n"
    assert _lines(src, "NPU489") == [3]


def test_which_nvcc_probe():
    # MinkowskiEngine's diagnostics.py (test10)
    src = b'import os\n\ndef print_diagnostics():\n    os.system("which nvcc")\n    os.system("nvcc --version")\n'
    assert _lines(src, "NPU407") == [4, 5]
